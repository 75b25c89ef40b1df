r"""Meta-correlation (paper 002, Sec. 2.3.3 and 3.6, Eq. 5-7; Shen et al. 2023): is a metric's
agreement with humans stable across systems of different quality?

.. math:: Q_i = \frac{1}{N_i} \sum_j h_{ij}, \qquad
          P_i = \rho(s_{i\cdot}, h_{i\cdot}), \qquad M = \rho(Q, P)

over the ``k`` systems. With few systems (16 in SummEval, 4-5 in USR) and each :math:`P_i`
estimated from about 100 outputs, :math:`M` is uncertain on two levels. The interval here
resamples both: systems, and items within each system.

* classical: the estimates above (``scipy.stats`` definitions; Kendall is tau-b) and a
  two-stage percentile bootstrap (systems with replacement, then items with replacement
  within each system);
* posterior: the Bayesian bootstrap at both levels (Dirichlet weights on systems and on the
  items of each system; Rubin 1981), the weighted statistics defined so that integer
  weights equal the statistic of the data with members repeated: weighted Pearson;
  Spearman as the weighted Pearson of the centred weighted mid-ranks
  :math:`\sigma_k = \sum_l w_l\,\mathrm{sign}(x_k - x_l)`; Kendall tau-b from
  :math:`\sum_{k,l} w_k w_l\,\mathrm{sign}(x_k - x_l)\,\mathrm{sign}(z_k - z_l)`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayesmeta.data import select
from bayesmeta.options import ResamplingOptions, resolve_seed
from bayesmeta.reference_free.kinds import kind_contrast, kind_note, kind_of
from bayesmeta.results import Result, data_hash
from bayesmeta.summaries import CI_PROB, check_ci_prob, equal_tailed, summarize, summary_rows

COEFFICIENTS = ("spearman", "pearson", "kendall")


def weighted_corr(x: np.ndarray, z: np.ndarray, w: np.ndarray, coefficient: str
                  ) -> np.ndarray:
    """Weighted correlation over the last axis, broadcasting ``x``, ``z`` and ``w``; NaN
    members (in ``x`` or ``z``) get weight 0. Unit weights give ``scipy.stats``' values.

    Examples
    --------
    >>> import numpy as np
    >>> from scipy import stats
    >>> x, z = np.array([1.0, 3, 2, 5, 4]), np.array([2.0, 1, 4, 3, 5])
    >>> r = weighted_corr(x, z, np.ones(5), "kendall")
    >>> bool(np.isclose(r, stats.kendalltau(x, z).statistic))
    True
    """
    x, z = np.asarray(x, float), np.asarray(z, float)
    ok = np.isfinite(x) & np.isfinite(z)
    w = np.where(ok, w, 0.0)
    x, z = np.where(ok, x, 0.0), np.where(ok, z, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        if coefficient in ("pearson", "spearman"):
            if coefficient == "spearman":  # centred weighted mid-ranks
                x, z = _sigma(x, w), _sigma(z, w)
            t = w.sum(-1, keepdims=True)
            dx = x - (w * x).sum(-1, keepdims=True) / t
            dz = z - (w * z).sum(-1, keepdims=True) / t
            dx = dx / np.maximum(np.abs(dx).max(-1, keepdims=True), 1e-300)
            dz = dz / np.maximum(np.abs(dz).max(-1, keepdims=True), 1e-300)
            vx, vz = (w * dx * dx).sum(-1), (w * dz * dz).sum(-1)
            r = (w * dx * dz).sum(-1) / np.sqrt(vx * vz)
            return np.where((vx > 1e-24) & (vz > 1e-24), r, np.nan)
        if coefficient == "kendall":
            sx, sz = _signs(x, ok), _signs(z, ok)
            T2 = w.sum(-1) ** 2
            num = (w * _mv(sx * sz, w)).sum(-1)
            tx = (w * _mv((sx == 0).astype(float), w)).sum(-1)  # diagonal included
            tz = (w * _mv((sz == 0).astype(float), w)).sum(-1)
            den = np.sqrt((T2 - tx) * (T2 - tz))
            return np.where(den > 0, num / den, np.nan)
    raise ValueError(f"coefficient must be one of {COEFFICIENTS}, got {coefficient!r}.")


def _sigma(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Centred weighted mid-ranks ``sum_l w_l sign(x_k - x_l)`` in O(K log K): sort ``x``
    once, cumulate the weights in that order and read them at the ends of each block of
    ties (weight below minus weight above)."""
    full = np.broadcast_shapes(x.shape, w.shape)
    order = np.argsort(x, axis=-1, kind="stable")
    xs = np.take_along_axis(x, order, -1)
    n = x.shape[-1]
    pos = np.arange(n)
    new = np.ones(x.shape, bool)
    new[..., 1:] = xs[..., 1:] != xs[..., :-1]
    end = np.ones(x.shape, bool)
    end[..., :-1] = new[..., 1:]
    first = np.maximum.accumulate(np.where(new, pos, 0), axis=-1)
    last = np.flip(np.minimum.accumulate(np.flip(np.where(end, pos, n), -1), axis=-1), -1)
    lt, le = np.empty(x.shape, np.int64), np.empty(x.shape, np.int64)
    np.put_along_axis(lt, order, first, -1)
    np.put_along_axis(le, order, last + 1, -1)
    ws = np.take_along_axis(np.broadcast_to(w, full), np.broadcast_to(order, full), -1)
    cum = np.concatenate([np.zeros((*full[:-1], 1)), np.cumsum(ws, -1)], -1)
    below = np.take_along_axis(cum, np.broadcast_to(lt, full), -1)
    upto = np.take_along_axis(cum, np.broadcast_to(le, full), -1)
    return below + upto - cum[..., -1:]


def _mv(a: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``a @ w`` over the last axes, broadcasting the leading ones (BLAS matrix-vector)."""
    return np.matmul(a, w[..., None])[..., 0]


def _signs(x: np.ndarray, ok: np.ndarray) -> np.ndarray:
    s = np.sign(x[..., :, None] - x[..., None, :])
    return s * (ok[..., :, None] & ok[..., None, :])


def meta_correlation(
    data: xr.Dataset,
    trait: str | None = None,
    *,
    quality: str | None = None,
    coefficient: str = "spearman",
    metrics: Sequence[str] | None = None,
    human: xr.DataArray | None = None,
    run: Any = None,
    reference: Any = "first",
    ci_prob: float = CI_PROB,
    resampling: ResamplingOptions | Mapping[str, Any] | None = None,
    random_seed: int | None = None,
) -> Result:
    r"""Correlation between system quality and the metric's within-system correlation with
    humans (paper 002, Eq. 5-7, Fig. 4, Table 11; Shen et al. 2023).

    Parameters
    ----------
    data : xarray.Dataset
        Metric scores and human scores with a ``system`` dim of at least 3 systems.
    trait : str
        The criterion of :math:`P_i` (metric vs this human score); or ``human=``.
    quality : str, optional
        The criterion whose system mean is :math:`Q_i` (default ``trait``).
    coefficient : {"spearman", "pearson", "kendall"}
        Used for :math:`P_i` and for :math:`M` (as the repository does).
    metrics, human, run, reference
        Selection (:mod:`bayesmeta.data.select`); list cells: first reference by default.
    ci_prob : float
        Probability of both intervals.
    resampling : ResamplingOptions or dict, optional
        ``n_resamples`` for the bootstrap and the Bayesian bootstrap (0: estimates only).
    random_seed : int, optional
        Drawn and recorded when omitted.

    Returns
    -------
    Result
        ``meta_correlation`` (index ``metric``), ``system_correlation`` :math:`P_i` (index
        ``metric, system``; resampling items within the system) and ``system_quality``
        :math:`Q_i` (index ``system``). With the ``reference_based`` coordinate:
        ``meta_group_mean`` (``set``) and ``meta_free_minus_based`` (posterior only, from
        the same Bayesian-bootstrap weights for every metric). ``details()``: items per
        system.

    Notes
    -----
    The Bayesian bootstrap's intervals are known to be short with few units (the
    ``calibration`` note of :func:`bayesmeta.correlations`: 0.86-0.89 coverage with 16
    systems); with 4-5 systems (USR) read them as optimistic. A system whose
    :math:`P_i` is undefined (constant scores) is left out of :math:`M`.

    Examples
    --------
    >>> import bayesmeta as bm
    >>> ds = bm.datasets.simulated(random_seed=0)
    >>> res = bm.meta_correlation(ds, "COH", metrics=["metric01.COH"], random_seed=1,
    ...                           resampling={"n_resamples": 200})
    >>> sorted(set(res.summary().index.get_level_values("estimand")))
    ['meta_correlation', 'system_correlation', 'system_quality']

    R equivalent: ``cor(tapply(h, sys, mean), sapply(split(d, sys), function(g)
    cor(g$s, g$h, method = "spearman")), method = "spearman")``.
    """
    ci_prob = check_ci_prob(ci_prob)
    if coefficient not in COEFFICIENTS:
        raise ValueError(f"coefficient must be one of {COEFFICIENTS}, got {coefficient!r}.")
    opts = ResamplingOptions.coerce(resampling)
    seed = resolve_seed(random_seed)
    rng = np.random.default_rng(seed)
    if not isinstance(data, xr.Dataset):
        raise TypeError(f"data must be an xarray.Dataset, got {type(data).__name__}.")
    labels = select.check_metrics(data, metrics)
    if "run" not in data["score"].dims:
        data = data.assign(score=data["score"].expand_dims(run=["1"], axis=-1))
    hs = select.human_score(data, trait, human=human)
    hq = hs if quality is None else select.human_score(data, quality)
    h = np.asarray(hs.values.transpose("system", "item").values, float)
    q = np.asarray(hq.values.transpose("system", "item").values, float)
    x = np.asarray(select.metric_scores(data, labels, run=run, reference=reference).values,
                   float)                                               # (M, S, I)
    systems = [str(s) for s in data["system"].values]
    valid = np.isfinite(h) & np.isfinite(q)
    n_items = valid.sum(1)
    if (n_items >= 3).sum() < 3:
        raise ValueError(f"meta-correlation needs at least 3 systems with 3 or more outputs "
                         f"scored on {hs.label!r}; the data have {int((n_items >= 3).sum())}.")
    R = opts.n_resamples

    def stats_for(ws: np.ndarray, wi: np.ndarray) -> tuple[np.ndarray, ...]:
        """(Q (..., S), P (..., M, S), meta (..., M)) under system and item weights."""
        wi = wi * valid
        with np.errstate(invalid="ignore", divide="ignore"):
            Q = (wi * np.nan_to_num(q)).sum(-1) / wi.sum(-1)
        P = weighted_corr(x, h, wi[..., None, :, :], coefficient)
        meta = weighted_corr(P, Q[..., None, :], ws[..., None, :], coefficient)
        return Q, P, meta

    Q0, P0, M0 = stats_for(np.ones(len(systems)), np.ones(h.shape))
    frames = {"meta_correlation": pd.DataFrame({"classical": M0}, index=pd.Index(labels)),
              "system_correlation": pd.DataFrame(
                  {"classical": P0.ravel()}, index=pd.MultiIndex.from_product([labels, systems])),
              "system_quality": pd.DataFrame({"classical": Q0}, index=pd.Index(systems))}
    if R:
        S, I = h.shape
        size = max(1, int(4e6 // x.size))  # memory of one batch of resamples
        boot = [stats_for(rng.multinomial(S, np.full(S, 1 / S), size=b),
                          _item_counts(rng, valid, b)) for b in _batches(R, size)]
        bb = [stats_for(rng.exponential(size=(b, S)), rng.exponential(size=(b, S, I)))
              for b in _batches(R, size)]
        for k, name in enumerate(("system_quality", "system_correlation",
                                  "meta_correlation")):
            bt = np.concatenate([d[k] for d in boot]).reshape(R, -1)
            iv = equal_tailed(bt, ci_prob, axis=(0,))
            frames[name]["classical_low"], frames[name]["classical_high"] = iv[:, 0], iv[:, 1]
            dims = {"system_quality": ("system",), "system_correlation": ("metric", "system"),
                    "meta_correlation": ("metric",)}[name]
            draws = xr.DataArray(np.concatenate([d[k] for d in bb]),
                                 dims=("resample", *dims),
                                 coords={"metric": labels, "system": systems}
                                 if len(dims) == 2 else {dims[0]: labels if dims[0] ==
                                                         "metric" else systems})
            post = summary_rows(summarize(draws, ci_prob=ci_prob), estimand=name,
                                index=list(dims))
            for c in post.columns:
                frames[name][c] = post[c].to_numpy()
    table = pd.concat([_index(f, name) for name, f in frames.items()])
    details = pd.DataFrame({"n_items": np.r_[np.full(len(labels), np.nan),
                                             np.tile(n_items, len(labels)), n_items]},
                           index=table.index)
    kinds = kind_of(data, labels)
    notes = ["Few systems: Bayesian-bootstrap intervals are optimistic (0.86-0.89 "
             "coverage at 16 systems for system-level correlations)."]
    why_not = kind_note(kinds, "meta_correlation")
    if why_not is None and not R:
        why_not = ("No reference-free vs reference-based contrast for meta_correlation: it "
                   "needs the Bayesian-bootstrap draws (n_resamples > 0).")
    if why_not is not None:
        notes.append(why_not)
    else:
        meta_bb = np.concatenate([d[2] for d in bb])          # same weights for all metrics
        table = pd.concat([table, _kind_rows(meta_bb, kinds, ci_prob)])
    return Result(
        table, title=f"Meta-correlation: {coefficient} of system quality ({hq.label}) with "
                     f"the within-system {coefficient} with {hs.label} (paper 002, Eq. 5-7)",
        info={"systems": len(systems), "metrics": len(labels), "resamples": R},
        details=details, ci_prob=ci_prob, random_seed=seed,
        classical_ci_kind="percentile bootstrap (systems, then items within systems)"
        if R else None,
        posterior="Bayesian bootstrap (systems and items within systems)",
        notes=notes,
        data_hash=data_hash(np.r_[x.ravel(), h.ravel(), q.ravel()]),
    )


def _kind_rows(meta: np.ndarray, kinds: np.ndarray, ci_prob: float) -> pd.DataFrame:
    """Posterior mean meta-correlation of reference-free and reference-based metrics and
    their difference (draws share the Bayesian-bootstrap weights, so this is paired)."""
    return kind_contrast(meta, kinds, prefix="meta", index=["metric", "system", "set"],
                         ci_prob=ci_prob)


def _batches(R: int, size: int) -> list[int]:
    return [min(size, R - k) for k in range(0, R, size)]


def _item_counts(rng: np.random.Generator, valid: np.ndarray, b: int) -> np.ndarray:
    """Bootstrap counts of the valid items of each system, ``(b, S, I)``."""
    out = np.zeros((b, *valid.shape))
    for s, row in enumerate(valid):
        idx = np.flatnonzero(row)
        out[:, s, idx] = rng.multinomial(idx.size, np.full(idx.size, 1 / idx.size), size=b)
    return out


def _index(frame: pd.DataFrame, estimand: str) -> pd.DataFrame:
    """Rows with index ``(estimand, metric, system)``."""
    idx = frame.index
    if isinstance(idx, pd.MultiIndex):
        m, s = idx.get_level_values(0), idx.get_level_values(1)
    elif estimand == "system_quality":
        m, s = [""] * len(idx), idx
    else:
        m, s = idx, [""] * len(idx)
    out = frame.copy()
    out.index = pd.MultiIndex.from_arrays([[estimand] * len(idx), list(m), list(s),
                                           [""] * len(idx)],
                                          names=["estimand", "metric", "system", "set"])
    return out


__all__ = ["meta_correlation", "weighted_corr"]
