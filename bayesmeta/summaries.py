r"""The one posterior summariser and the one table shape of bayesmeta.

Every analysis reports its estimates in one table shape (design.md, style.md rule 4):

* the **index** is the estimand first (level ``estimand``: ``"alpha"``, ``"severity"``,
  ``"global_pearson"``, ...), then the design labels, named from the dim vocabulary
  (:data:`VOCABULARY`: ``metric``, ``rater``, ``trait``, ``measure``, ``metric2``, ``cut``,
  ...); a label that does not apply to a row is the empty string;
* the **columns** are exactly those of :data:`COLUMNS` that apply, in that order:
  ``classical, classical_low, classical_high`` (the classical estimator and its interval),
  ``mean, sd, hdi_low, hdi_high`` (the posterior: MCMC or Bayesian bootstrap),
  ``elpd, elpd_low, elpd_high`` (model comparison: PSIS-LOO expected log predictive density,
  a kind of its own) and, for MCMC, ``r_hat, ess_bulk, ess_tail``;
* the **attributes** say what the intervals are: ``ci_kind`` / ``ci_prob`` for
  ``hdi_low``/``hdi_high`` and ``classical_ci_kind`` / ``classical_ci_prob`` for
  ``classical_low``/``classical_high`` (and ``elpd_ci_kind`` / ``elpd_ci_prob`` for
  ``elpd_low``/``elpd_high``). One ``ci_prob`` governs all, default
  :data:`CI_PROB` (0.94, ArviZ's) across the package.

Counts, ranks, p-values and flags never sit among the estimates; they go to
``result.details()``.

:func:`summarize` is the one summariser of draws, used by every Bayesian model and by the
Bayesian bootstrap: draws with sample dims (``chain``, ``draw`` for MCMC; ``resample`` for
resampling) become ``mean``, ``sd`` (``ddof=1``, as ArviZ), an ``interval`` with a
``ci_bound`` dim (``lower``, ``upper``) and, for MCMC, rank-normalised split ``r_hat``, bulk
and tail ESS (Vehtari et al. 2021, through ArviZ). :func:`posterior_table` turns summaries of
several variables into rows of the table shape. Nothing here imports PyMC; ArviZ is imported
only when MCMC diagnostics are computed.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

#: The columns of every summary table, in this order (each only where it applies).
COLUMNS = ("classical", "classical_low", "classical_high", "mean", "sd", "hdi_low",
           "hdi_high", "elpd", "elpd_low", "elpd_high", "r_hat", "ess_bulk", "ess_tail")
#: The predictive kind: PSIS-LOO expected log predictive density and its interval (neither
#: a classical estimate nor a posterior summary).
LOO_COLUMNS = ("elpd", "elpd_low", "elpd_high")
POSTERIOR_COLUMNS = ("mean", "sd", "hdi_low", "hdi_high")
MCMC_COLUMNS = ("r_hat", "ess_bulk", "ess_tail")

#: The default probability of every interval, classical and Bayesian.
CI_PROB = 0.94

#: Names allowed for the index levels after ``estimand`` (the dim vocabulary).
VOCABULARY = frozenset({
    "system", "system2", "item", "rater", "rater2", "trait", "trait2", "metric", "metric2",
    "method", "method2", "variable", "variable2", "measure", "cut", "run", "reference",
    "lhs", "op", "rhs", "model", "n_items", "n_runs", "level", "group", "group2",
    "corruption", "category", "n_refs", "perturbation", "dataset", "set", "size", "n",
    "statistic", "component", "threshold", "epsilon", "lp",
})

#: Table attributes every summary carries.
ATTRS = ("ci_kind", "ci_prob", "classical_ci_kind", "classical_ci_prob")

#: Sample dims of MCMC draws and of resampling draws.
MCMC_DIMS = ("chain", "draw")
RESAMPLE_DIMS = ("resample",)


def check_ci_prob(ci_prob: float, name: str = "ci_prob") -> float:
    """Return ``ci_prob`` as a float, or raise naming the argument when it is not in (0, 1)."""
    if isinstance(ci_prob, bool) or not isinstance(ci_prob, int | float | np.floating):
        raise TypeError(f"{name} must be a number in (0, 1), got {type(ci_prob).__name__}.")
    if not 0 < float(ci_prob) < 1:
        raise ValueError(f"{name} must lie strictly between 0 and 1, got {ci_prob!r}.")
    return float(ci_prob)


# ----------------------------------------------------------------------------- intervals
def hdi(draws: np.ndarray, ci_prob: float = CI_PROB, axis: tuple[int, ...] = (0, 1)
        ) -> np.ndarray:
    """Highest-density interval over the sample axes, vectorised over the other axes.

    The narrowest window holding ``floor(ci_prob * n)`` sorted draws (the algorithm of
    ``arviz.hdi`` for unimodal posteriors). Returns an array with a last axis of length 2
    (lower, upper); NaN where all draws are NaN.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmeta.summaries import hdi
    >>> hdi(np.arange(101.0), 0.9, axis=(0,)).tolist()
    [0.0, 90.0]
    """
    x = np.asarray(draws, dtype=float)
    axis = tuple(a % x.ndim for a in axis)
    rest = [a for a in range(x.ndim) if a not in axis]
    x = np.transpose(x, rest + list(axis)).reshape([x.shape[a] for a in rest] + [-1])
    n = x.shape[-1]
    inc = int(np.floor(ci_prob * n))
    if inc < 1 or inc >= n:
        raise ValueError(f"too few draws ({n}) for a {ci_prob:.0%} interval.")
    srt = np.sort(x, axis=-1)
    with np.errstate(invalid="ignore"):  # infinite draws: their window is undefined
        width = srt[..., inc:] - srt[..., : n - inc]
    nan = np.isnan(width).all(axis=-1)
    lo_idx = np.argmin(np.where(np.isnan(width), np.inf, width), axis=-1)[..., None]
    lo = np.take_along_axis(srt, lo_idx, axis=-1)[..., 0]
    hi = np.take_along_axis(srt, lo_idx + inc, axis=-1)[..., 0]
    out = np.stack([lo, hi], axis=-1)
    out[nan] = np.nan
    return out


def equal_tailed(draws: np.ndarray, ci_prob: float = CI_PROB, axis: tuple[int, ...] = (0,)
                 ) -> np.ndarray:
    """Equal-tailed (percentile) interval over the sample axes, NaN draws left out; last axis
    (lower, upper)."""
    x = np.asarray(draws, dtype=float)
    axis = tuple(a % x.ndim for a in axis)
    rest = [a for a in range(x.ndim) if a not in axis]
    x = np.transpose(x, rest + list(axis)).reshape([x.shape[a] for a in rest] + [-1])
    lo, hi = (1 - ci_prob) / 2, (1 + ci_prob) / 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        q = np.nanquantile(x, [lo, hi], axis=-1)
    return np.moveaxis(q, 0, -1)


# ----------------------------------------------------------------------------- summariser
def _sample_dims(da: xr.DataArray, sample_dims: Sequence[str] | None) -> tuple[str, ...]:
    if sample_dims is not None:
        dims = tuple(sample_dims)
    elif all(d in da.dims for d in MCMC_DIMS):
        dims = MCMC_DIMS
    elif "resample" in da.dims:
        dims = RESAMPLE_DIMS
    else:
        raise ValueError(f"draws need sample dims ('chain', 'draw') or ('resample',); got dims "
                         f"{tuple(da.dims)}.")
    missing = [d for d in dims if d not in da.dims]
    if missing:
        raise ValueError(f"sample dim(s) {missing} not in the draws' dims {tuple(da.dims)}.")
    return dims


def summarize(
    draws: xr.DataArray,
    *,
    ci_prob: float = CI_PROB,
    sample_dims: Sequence[str] | None = None,
    interval: str = "hdi",
    min_draws: int = 10,
    diagnostics: xr.Dataset | None = None,
) -> xr.Dataset:
    r"""Summarise posterior (or resampling) draws: mean, sd, interval, R-hat and ESS.

    Parameters
    ----------
    draws : xarray.DataArray
        Draws with sample dims and any named dims.
    ci_prob : float
        Probability of the interval.
    sample_dims : sequence of str, optional
        Default ``("chain", "draw")`` when present (MCMC), else ``("resample",)``.
    interval : {"hdi", "equal_tailed"}
        Highest-density interval (default) or equal-tailed percentile interval.
    min_draws : int
        An element whose draws are partly undefined (NaN, e.g. a correlation of a resample
        in which a group is constant) is summarised over its defined draws when at least
        this many remain, else it is NaN.
    diagnostics : xarray.Dataset, optional
        Precomputed variables ``r_hat``, ``ess_bulk``, ``ess_tail`` for MCMC draws (computed
        with :func:`diagnose` when omitted).

    Returns
    -------
    xarray.Dataset
        ``mean``, ``sd`` (``ddof=1``), ``interval`` (extra dim ``ci_bound`` =
        ``["lower", "upper"]``) and, for ``("chain", "draw")`` draws, ``r_hat``,
        ``ess_bulk``, ``ess_tail``; attrs ``ci_kind``, ``ci_prob``, ``n_draws``.

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> from bayesmeta.summaries import summarize
    >>> x = xr.DataArray(np.random.default_rng(0).normal(size=(2, 500, 3)),
    ...                  dims=("chain", "draw", "metric"), coords={"metric": list("abc")})
    >>> s = summarize(x)
    >>> sorted(s.data_vars)
    ['ess_bulk', 'ess_tail', 'interval', 'mean', 'r_hat', 'sd']
    >>> s["interval"].dims
    ('metric', 'ci_bound')
    """
    ci_prob = check_ci_prob(ci_prob)
    if interval not in ("hdi", "equal_tailed"):
        raise ValueError(f"interval must be 'hdi' or 'equal_tailed', got {interval!r}.")
    if not isinstance(draws, xr.DataArray):
        raise TypeError(f"draws must be an xarray.DataArray, got {type(draws).__name__}.")
    dims = _sample_dims(draws, sample_dims)
    da = draws.transpose(*dims, ...)
    rest = da.dims[len(dims):]
    vals = np.asarray(da.values, dtype=float)
    n = int(np.prod([da.sizes[d] for d in dims]))
    flat = vals.reshape(n, -1)
    mean = np.full(flat.shape[1], np.nan)
    sd = np.full(flat.shape[1], np.nan)
    iv = np.full((flat.shape[1], 2), np.nan)
    defined = ~np.isnan(flat)
    complete = defined.all(0)
    find = hdi if interval == "hdi" else equal_tailed
    if complete.any():
        sub = flat[:, complete]
        mean[complete] = sub.mean(0)
        sd[complete] = sub.std(0, ddof=1) if n > 1 else np.nan
        iv[complete] = find(sub, ci_prob, axis=(0,))
    for j in np.flatnonzero(~complete & (defined.sum(0) >= max(min_draws, 2))):
        ok = flat[defined[:, j], j]
        mean[j], sd[j] = ok.mean(), ok.std(ddof=1)
        iv[j] = find(ok, ci_prob, axis=(0,))
    shape = vals.shape[len(dims):]
    coords = {d: da[d] for d in rest if d in da.coords}
    out = xr.Dataset(
        {
            "mean": (rest, mean.reshape(shape)),
            "sd": (rest, sd.reshape(shape)),
            "interval": ((*rest, "ci_bound"), iv.reshape((*shape, 2))),
        },
        coords={**coords, "ci_bound": ["lower", "upper"]},
        attrs={"ci_kind": interval, "ci_prob": ci_prob, "n_draws": n},
    )
    for name, coord in da.coords.items():  # non-index coords along the kept dims
        if name not in out.coords and set(coord.dims) <= set(rest):
            out = out.assign_coords({name: coord})
    if dims == MCMC_DIMS:
        if diagnostics is None:
            raw = diagnose(da.to_dataset(name="x"))
            diagnostics = xr.Dataset({s: raw[f"x__{s}"] for s in MCMC_COLUMNS})
        for stat in MCMC_COLUMNS:
            out[stat] = diagnostics[stat].transpose(*rest)
    return out


def diagnose(posterior: xr.Dataset) -> xr.Dataset:
    """Rank-normalised split R-hat, bulk and tail ESS of every variable (ArviZ), as one
    Dataset with variables ``<var>__r_hat``, ``<var>__ess_bulk``, ``<var>__ess_tail``.
    Constant quantities (no variation across draws) and quantities with missing draws get
    NaN."""
    import arviz as az

    missing = posterior.isnull().any(MCMC_DIMS)
    filled = posterior.fillna(0.0)
    with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        rhat = az.rhat(filled, method="rank")
        bulk = az.ess(filled, method="bulk")
        tail = az.ess(filled, method="tail")
    out = {}
    for name, da in posterior.data_vars.items():
        const = (da.max(MCMC_DIMS) - da.min(MCMC_DIMS)) <= 0
        keep = ~const & ~missing[name]
        for suffix, ds in (("r_hat", rhat), ("ess_bulk", bulk), ("ess_tail", tail)):
            out[f"{name}__{suffix}"] = ds[name].where(keep)
    return xr.Dataset(out)


# ----------------------------------------------------------------------------- tables
def _grid(summary: xr.Dataset, index: Sequence[str]) -> tuple[pd.MultiIndex, list[str]]:
    dims = [d for d in summary["mean"].dims]
    unknown = [d for d in dims if d not in index]
    if unknown:
        raise ValueError(f"dims {unknown} of the summary are not among the index levels "
                         f"{list(index)}.")
    labels = [np.asarray(summary[d].values).astype(str) if d in summary.coords
              else np.arange(summary.sizes[d]).astype(str) for d in dims]
    mesh = np.meshgrid(*labels, indexing="ij") if dims else []
    n = int(np.prod([summary.sizes[d] for d in dims])) if dims else 1
    arrays = []
    for level in index:
        if level in dims:
            arrays.append(mesh[dims.index(level)].ravel())
        else:
            arrays.append(np.full(n, "", dtype=object))
    return arrays, dims


def summary_rows(summary: xr.Dataset, *, estimand: str, index: Sequence[str]) -> pd.DataFrame:
    """Rows of the table shape from one :func:`summarize` result: index ``(estimand,
    *index)`` (levels the summary lacks are ``""``), columns ``mean, sd, hdi_low, hdi_high``
    and, for MCMC, ``r_hat, ess_bulk, ess_tail``."""
    arrays, dims = _grid(summary, index)
    n = len(arrays[0]) if arrays else 1
    idx = pd.MultiIndex.from_arrays(
        [np.full(n, estimand, dtype=object), *[np.asarray(a, dtype=object) for a in arrays]],
        names=["estimand", *index])
    iv = summary["interval"].transpose(*dims, "ci_bound").values.reshape(-1, 2)
    cols: dict[str, np.ndarray] = {
        "mean": summary["mean"].transpose(*dims).values.ravel(),
        "sd": summary["sd"].transpose(*dims).values.ravel(),
        "hdi_low": iv[:, 0],
        "hdi_high": iv[:, 1],
    }
    for stat in MCMC_COLUMNS:
        if stat in summary:
            cols[stat] = summary[stat].transpose(*dims).values.ravel()
    return pd.DataFrame(cols, index=idx)


def posterior_table(
    posterior: xr.Dataset | Any,
    names: Iterable[str] | None = None,
    *,
    index: Sequence[str],
    ci_prob: float = CI_PROB,
    sample_dims: Sequence[str] | None = None,
    diagnostics: xr.Dataset | None = None,
    estimands: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """Summarise several variables of a posterior into rows of the table shape.

    Parameters
    ----------
    posterior : xarray.Dataset or arviz.InferenceData
    names : list of str, optional
        Variables to summarise (default all); each variable's name is its estimand unless
        ``estimands`` renames it.
    index : sequence of str
        The design levels after ``estimand`` (union of the variables' dims).
    diagnostics : xarray.Dataset, optional
        From :func:`diagnose` (computed when omitted, for MCMC draws).

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> from bayesmeta.summaries import posterior_table
    >>> rng = np.random.default_rng(1)
    >>> post = xr.Dataset({"severity": (("chain", "draw", "rater"), rng.normal(size=(2, 200, 2))),
    ...                    "sigma": (("chain", "draw"), rng.gamma(2, size=(2, 200)))},
    ...                   coords={"rater": ["r1", "r2"]})
    >>> tab = posterior_table(post, index=["rater"])
    >>> tab.index.tolist()
    [('severity', 'r1'), ('severity', 'r2'), ('sigma', '')]
    """
    post = posterior.posterior if hasattr(posterior, "posterior") else posterior
    names = list(names) if names is not None else list(post.data_vars)
    dims0 = tuple(sample_dims) if sample_dims is not None else (
        MCMC_DIMS if all(d in post.dims for d in MCMC_DIMS) else RESAMPLE_DIMS)
    if diagnostics is None and dims0 == MCMC_DIMS:
        diagnostics = diagnose(post[names])
    frames = []
    for name in names:
        diag = None
        if diagnostics is not None:
            diag = xr.Dataset({s: diagnostics[f"{name}__{s}"] for s in MCMC_COLUMNS})
        s = summarize(post[name], ci_prob=ci_prob, sample_dims=dims0, diagnostics=diag)
        frames.append(summary_rows(s, estimand=(estimands or {}).get(name, name),
                                   index=index))
    return pd.concat(frames)


def _check_shape(index_names: Sequence[Any], columns: Sequence[Any]) -> None:
    names = list(index_names)
    if not names or names[0] != "estimand":
        raise ValueError(f"the first index level of a summary must be 'estimand', got "
                         f"{names}.")
    odd = [n for n in names[1:] if n not in VOCABULARY]
    if odd:
        raise ValueError(f"index level(s) {odd} are not in bayesmeta's dim vocabulary.")
    extra = [c for c in columns if c not in COLUMNS]
    if extra:
        raise ValueError(f"column(s) {extra} do not belong in a summary table (columns: "
                         f"{', '.join(COLUMNS)}); put them in details().")


def _string_levels(index: pd.Index) -> pd.Index:
    """Text index levels in pandas' default string dtype (numeric levels kept), so that a
    table compares equal to itself after a save/load round trip."""
    if isinstance(index, pd.MultiIndex):
        levels = [lv.astype(str) if not pd.api.types.is_numeric_dtype(lv) else lv
                  for lv in index.levels]
        return index.set_levels(levels)
    return index.astype(str) if not pd.api.types.is_numeric_dtype(index) else index


def make_table(
    frame: pd.DataFrame,
    *,
    ci_prob: float = CI_PROB,
    ci_kind: str | None = None,
    classical_ci_kind: str | None = None,
    classical_ci_prob: float | None = None,
    elpd_ci_kind: str | None = None,
) -> pd.DataFrame:
    """Check a frame against the table shape, order its columns and set its attributes.

    Raises
    ------
    ValueError
        For an index whose first level is not ``estimand`` or whose other levels are not in
        :data:`VOCABULARY`, for a column not in :data:`COLUMNS` (counts, p-values and flags
        belong in ``details()``), or for a classical interval without its kind.
    """
    _check_shape(frame.index.names, frame.columns)
    out = frame[[c for c in COLUMNS if c in frame.columns]].copy()
    out.index = _string_levels(out.index)
    has_cl = "classical_low" in out.columns
    has_post = "hdi_low" in out.columns
    if has_cl and not classical_ci_kind:
        raise ValueError("a table with classical_low/classical_high needs classical_ci_kind.")
    has_elpd = "elpd_low" in out.columns
    if has_elpd and not elpd_ci_kind:
        raise ValueError("a table with elpd_low/elpd_high needs elpd_ci_kind.")
    out.attrs = {
        "ci_kind": (ci_kind or "hdi") if has_post else "",
        "ci_prob": check_ci_prob(ci_prob) if has_post else float("nan"),
        "classical_ci_kind": str(classical_ci_kind) if has_cl else "",
        "classical_ci_prob": check_ci_prob(
            ci_prob if classical_ci_prob is None else classical_ci_prob, "classical_ci_prob"
        ) if has_cl else float("nan"),
    }
    if has_elpd:
        out.attrs["elpd_ci_kind"] = str(elpd_ci_kind)
        out.attrs["elpd_ci_prob"] = check_ci_prob(ci_prob)
    return out


def check_table(table: pd.DataFrame) -> None:
    """Raise ``AssertionError`` unless ``table`` has bayesmeta's table shape: index levels,
    column order and interval attributes (used by the test suite)."""
    try:
        _check_shape(table.index.names, table.columns)
    except ValueError as err:
        raise AssertionError(str(err)) from None
    order = [c for c in COLUMNS if c in table.columns]
    assert list(table.columns) == order, f"columns {list(table.columns)} not in order {order}"
    missing = [k for k in ATTRS if k not in table.attrs]
    assert not missing, f"summary table lacks the attribute(s) {missing}"
    if "classical_low" in table.columns:
        assert table.attrs["classical_ci_kind"], "classical interval without its kind"
        assert 0 < table.attrs["classical_ci_prob"] < 1, "classical_ci_prob not in (0, 1)"
    if "hdi_low" in table.columns:
        assert table.attrs["ci_kind"], "posterior interval without its kind"
        assert 0 < table.attrs["ci_prob"] < 1, "ci_prob not in (0, 1)"
    if "elpd_low" in table.columns:
        assert table.attrs.get("elpd_ci_kind"), "elpd interval without its kind"
        assert 0 < table.attrs["elpd_ci_prob"] < 1, "elpd_ci_prob not in (0, 1)"


__all__ = [
    "CI_PROB",
    "COLUMNS",
    "VOCABULARY",
    "check_ci_prob",
    "check_table",
    "diagnose",
    "equal_tailed",
    "hdi",
    "make_table",
    "posterior_table",
    "summarize",
    "summary_rows",
]
