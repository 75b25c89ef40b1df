"""Result objects: compute once, then print, plot, summarise or save.

Every analysis in bayesmeta returns a :class:`Result`. Its :meth:`Result.summary` is a
pandas DataFrame with one row per quantity (the estimand) and the columns of design.md:
``classical`` (plus ``classical_low`` / ``classical_high`` and other classical columns where
they exist), and for Bayesian fits ``mean``, ``sd``, ``hdi_low``, ``hdi_high``, ``r_hat``,
``ess_bulk``, ``ess_tail``. Values are never rounded in the table; only printing rounds.

Results round-trip through netCDF with :meth:`Result.save` and :func:`load`.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import xarray as xr

from bayesmeta._version import __version__

_REGISTRY: dict[str, type[Result]] = {}

BAYES_COLUMNS = ("mean", "sd", "hdi_low", "hdi_high", "r_hat", "ess_bulk", "ess_tail")


def hdi(draws: np.ndarray, ci_prob: float = 0.94, axis: tuple[int, ...] = (0, 1)) -> np.ndarray:
    """Highest-density interval over the sample axes, vectorised over the other axes.

    The narrowest window holding ``floor(ci_prob * n)`` sorted draws (the algorithm of
    ``arviz.hdi`` for unimodal posteriors). Returns an array with a last axis of length 2
    (lower, upper); NaN where all draws are NaN.
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
    width = srt[..., inc:] - srt[..., : n - inc]
    nan = np.isnan(width).all(axis=-1)
    lo_idx = np.argmin(np.where(np.isnan(width), np.inf, width), axis=-1)[..., None]
    lo = np.take_along_axis(srt, lo_idx, axis=-1)[..., 0]
    hi = np.take_along_axis(srt, lo_idx + inc, axis=-1)[..., 0]
    out = np.stack([lo, hi], axis=-1)
    out[nan] = np.nan
    return out


def bayes_summary(
    posterior: Any,
    var_names: list[str] | None = None,
    *,
    ci_prob: float = 0.94,
    diagnostics: xr.Dataset | None = None,
) -> pd.DataFrame:
    """Posterior summary columns ``mean, sd, hdi_low, hdi_high, r_hat, ess_bulk, ess_tail``.

    Parameters
    ----------
    posterior : xarray.Dataset or arviz.InferenceData
        Draws with dims ``chain`` and ``draw`` (and any named dims).
    var_names : list of str, optional
        Variables to summarise (default all).
    ci_prob : float
        Probability of the highest-density interval.
    diagnostics : xarray.Dataset, optional
        Precomputed ``<var>__r_hat``, ``<var>__ess_bulk``, ``<var>__ess_tail`` (from
        :func:`bayesmeta.sampling.diagnose`); computed with ArviZ when omitted.

    Returns
    -------
    pandas.DataFrame
        One row per element of each variable: a column ``variable``, one column per
        named dim (the coordinate label; missing where a variable lacks the dim), then
        the summary columns. ``sd`` uses ``ddof=0``; constant quantities get NaN
        ``r_hat`` / ESS.

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> from bayesmeta.results import bayes_summary
    >>> x = np.random.default_rng(0).normal(size=(2, 500, 3))
    >>> post = xr.Dataset({"b": (("chain", "draw", "k"), x)}, coords={"k": ["a", "b", "c"]})
    >>> list(bayes_summary(post).columns)
    ['variable', 'k', 'mean', 'sd', 'hdi_low', 'hdi_high', 'r_hat', 'ess_bulk', 'ess_tail']
    """
    post = posterior.posterior if hasattr(posterior, "posterior") else posterior
    names = list(var_names) if var_names is not None else list(post.data_vars)
    if diagnostics is None:
        from bayesmeta.sampling import diagnose

        diagnostics = diagnose(post[names])
    frames = []
    for name in names:
        da = post[name].transpose("chain", "draw", ...)
        dims = list(da.dims[2:])
        vals = np.asarray(da.values, dtype=float)
        with np.errstate(invalid="ignore"):
            stats = {
                "mean": vals.mean(axis=(0, 1)),
                "sd": vals.std(axis=(0, 1)),
            }
        interval = hdi(vals, ci_prob) if vals.size else np.full((*vals.shape[2:], 2), np.nan)
        stats["hdi_low"] = interval[..., 0]
        stats["hdi_high"] = interval[..., 1]
        for col in ("r_hat", "ess_bulk", "ess_tail"):
            stats[col] = np.asarray(diagnostics[f"{name}__{col}"].transpose(*dims).values,
                                    dtype=float)
        grid = (np.meshgrid(*[np.asarray(da[d].values) for d in dims], indexing="ij")
                if dims else [])
        frame = {"variable": np.full(int(np.prod(vals.shape[2:], dtype=int)), name)}
        for d, g in zip(dims, grid, strict=True):
            frame[d] = g.ravel()
        for col, v in stats.items():
            frame[col] = np.asarray(v).ravel()
        frames.append(pd.DataFrame(frame))
    out = pd.concat(frames, ignore_index=True)
    lead = ["variable"] + [c for c in out.columns if c not in ("variable", *BAYES_COLUMNS)]
    return out[lead + list(BAYES_COLUMNS)]


class TableView:
    """A table posing as a result for the plot helpers: one slice of a result's summary
    (e.g. one estimand) with its own title and interval probability."""

    def __init__(self, table: pd.DataFrame, title: str, ci_prob: float) -> None:
        self.table, self.title, self.ci_prob = table, title, ci_prob

    def summary(self) -> pd.DataFrame:
        return self.table.copy()


def data_hash(ds: xr.Dataset) -> str:
    """A short, stable hash of a dataset's values and labels (provenance)."""
    h = hashlib.sha256()
    for name in sorted(ds.data_vars):
        h.update(name.encode())
        h.update(np.ascontiguousarray(ds[name].values, dtype=float).tobytes())
    for name in sorted(ds.coords):
        h.update(name.encode())
        h.update("|".join(map(str, np.asarray(ds[name].values).ravel())).encode())
    return h.hexdigest()[:16]


class Result:
    """Base class of every bayesmeta result.

    Parameters
    ----------
    table : pandas.DataFrame
        One row per quantity; see the module docstring for the columns.
    title : str
        The first line of the printed summary.
    info : dict
        Header facts (data size, method, sampler, seed, ...), printed as ``key: value``.
    idata : arviz.InferenceData, optional
        Posterior and sampler statistics for Bayesian fits.
    extra : dict of xarray.DataArray or xarray.Dataset, optional
        Further labelled outputs (curves, matrices) that are saved with the result.
    notes : list of str
        Footer lines (explanations, warnings).
    """

    kind: ClassVar[str] = "result"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _REGISTRY[cls.__name__] = cls

    def __init__(
        self,
        table: pd.DataFrame,
        *,
        title: str,
        info: dict[str, Any] | None = None,
        idata: Any = None,
        extra: dict[str, xr.DataArray | xr.Dataset] | None = None,
        notes: list[str] | None = None,
        ci_prob: float = 0.94,
    ) -> None:
        self._table = table
        self.title = title
        self.info = dict(info or {})
        self.info.setdefault("bayesmeta", __version__)
        self.idata = idata
        self.extra = dict(extra or {})
        self.notes = list(notes or [])
        self.ci_prob = ci_prob

    # ------------------------------------------------------------------ access
    def summary(self) -> pd.DataFrame:
        """The table of estimates: one row per quantity, raw (unrounded) values."""
        out = self._table.copy()
        out.attrs = {"ci_prob": self.ci_prob, "ci_kind": "hdi", "title": self.title}
        return out

    @property
    def posterior(self) -> xr.Dataset | None:
        """The posterior draws (dims ``chain``, ``draw`` and named model dims)."""
        return None if self.idata is None else self.idata.posterior

    def to_csv(self, path: str | Path) -> None:
        """Write the raw summary table to CSV."""
        self.summary().to_csv(path)

    # ------------------------------------------------------------------ printing
    def _format_table(self, table: pd.DataFrame) -> str:
        shown = table.copy()
        for col in shown.columns:
            if col in ("ess_bulk", "ess_tail") and pd.api.types.is_numeric_dtype(shown[col]):
                shown[col] = shown[col].map(lambda v: "" if pd.isna(v) else f"{v:.0f}")
            elif pd.api.types.is_float_dtype(shown[col]):
                shown[col] = shown[col].map(lambda v: "" if pd.isna(v) else f"{v:.3f}")
        with pd.option_context("display.max_rows", 500, "display.width", 200):
            return shown.to_string()

    def _body(self) -> str:
        return self._format_table(self._table)

    def __str__(self) -> str:
        lines = [self.title, ""]
        width = max((len(k) for k in self.info), default=0)
        for key, value in self.info.items():
            lines.append(f"  {key:<{width}}  {value}")
        lines += ["", self._body()]
        if any(c in self._table.columns for c in ("hdi_low", "hdi_high")):
            lines += [
                "",
                f"  Intervals are {self.ci_prob:.0%} highest-density intervals of the posterior. "
                "r_hat near 1 (<= 1.01) and ess_bulk/ess_tail",
                "  >= 400 mean the chains agree and the summary is precise enough to report.",
            ]
        if self.notes:
            lines += [""] + [f"  Note: {n}" for n in self.notes]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {self.title} ({len(self._table)} rows)>"

    # ------------------------------------------------------------------ plotting
    def plot(self, ax: Any = None, column: str | None = None) -> Any:
        """Forest plot of the quantities: classical estimate as a cross, posterior mean
        with its HDI as a dot and a line where present. Returns the matplotlib Figure."""
        from bayesmeta.plots import plot_forest

        return plot_forest(self, ax=ax, column=column).figure

    # ------------------------------------------------------------------ saving
    def save(self, path: str | Path) -> Path:
        """Save the result to a netCDF file (groups: summary, idata groups, extras)."""
        path = Path(path)
        tree: dict[str, xr.Dataset] = {}
        table = self._table.copy()
        names = [n if n is not None else f"level_{k}" for k, n in enumerate(table.index.names)]
        table.index = table.index.set_names(names)
        flat = table.reset_index()
        flat.index = pd.RangeIndex(len(flat), name="__row__")
        summary = xr.Dataset.from_dataframe(flat)
        summary.attrs["index_names"] = json.dumps(names)
        summary.attrs["columns"] = json.dumps([str(c) for c in table.columns])
        tree["/summary"] = summary
        if self.idata is not None:
            for group in self.idata.groups():
                tree[f"/idata/{group}"] = self.idata[group]
        for name, value in self.extra.items():
            tree[f"/extra/{name}"] = value.to_dataset(name="__value__") if isinstance(
                value, xr.DataArray
            ) else value
        root = xr.Dataset(
            attrs={
                "bayesmeta_class": type(self).__name__,
                "title": self.title,
                "info": json.dumps(self.info, default=str),
                "notes": json.dumps(self.notes),
                "ci_prob": self.ci_prob,
                "state": json.dumps(self._state(), default=str),
                "extra_kinds": json.dumps(
                    {k: ("dataarray" if isinstance(v, xr.DataArray) else "dataset")
                     for k, v in self.extra.items()}
                ),
            }
        )
        tree["/"] = root
        dt = xr.DataTree.from_dict(tree)
        dt.to_netcdf(path, engine="h5netcdf")
        return path

    def _state(self) -> dict[str, Any]:
        """Extra JSON-serialisable state of a subclass, restored by :meth:`_restore`."""
        return {}

    def _restore(self, state: dict[str, Any]) -> None:
        return None


def load(path: str | Path) -> Result:
    """Load a result saved with :meth:`Result.save`.

    Examples
    --------
    >>> import bayesmeta as bm, tempfile, os
    >>> res = bm.consistency(bm.datasets.simulated(n_systems=5, n_items=10))
    >>> p = os.path.join(tempfile.mkdtemp(), "fit.nc")
    >>> _ = res.save(p)
    >>> bm.load(p).summary().equals(res.summary())
    True
    """
    dt = xr.open_datatree(path, engine="h5netcdf").load()
    attrs = dt.attrs
    cls = _REGISTRY.get(attrs["bayesmeta_class"], Result)
    summary = dt["summary"].to_dataset()
    names = json.loads(summary.attrs["index_names"])
    flat = summary.to_dataframe()
    for col in flat.columns:
        if flat[col].dtype == object or pd.api.types.is_string_dtype(flat[col]):
            flat[col] = flat[col].astype(str)
    table = flat.set_index(names)[json.loads(summary.attrs["columns"])]
    idata = None
    if "idata" in dt.children:
        import arviz as az

        groups = {name: node.to_dataset() for name, node in dt["idata"].children.items()}
        idata = az.InferenceData(**groups)
    extra: dict[str, xr.DataArray | xr.Dataset] = {}
    kinds = json.loads(attrs.get("extra_kinds", "{}"))
    if "extra" in dt.children:
        for name, node in dt["extra"].children.items():
            ds = node.to_dataset()
            extra[name] = ds["__value__"] if kinds.get(name) == "dataarray" else ds
    obj = cls.__new__(cls)
    Result.__init__(
        obj,
        table,
        title=attrs["title"],
        info=json.loads(attrs["info"]),
        idata=idata,
        extra=extra,
        notes=json.loads(attrs["notes"]),
        ci_prob=float(attrs["ci_prob"]),
    )
    obj._restore(json.loads(attrs.get("state", "{}")))
    return obj
