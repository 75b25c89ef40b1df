r"""The 12 correlation measures of NLG meta-evaluation, and pairwise accuracy with ties.

A *measure* is a grouping and a coefficient (Gao et al., paper 001, Sec. 2). With metric
scores :math:`x_{si}` and human scores :math:`z_{si}` for system :math:`s = 1..S` on item
(input) :math:`i = 1..I`, and :math:`r` Pearson's r, Spearman's rho or Kendall's tau:

.. math::

    r^{\text{system}} &= r\big(\bar x_{s\cdot}, \bar z_{s\cdot}\big)
        \quad\text{(system means)}\\
    r^{\text{global}} &= r\big(\operatorname{vec} x, \operatorname{vec} z\big)
        \quad\text{(all } S I \text{ outputs)}\\
    r^{\text{within\_item}} &= \tfrac{1}{I} \textstyle\sum_i r(x_{\cdot i}, z_{\cdot i})
        \quad\text{(per item across systems, averaged)}\\
    r^{\text{within\_system}} &= \tfrac{1}{S} \textstyle\sum_s r(x_{s \cdot}, z_{s \cdot})
        \quad\text{(per system across items, averaged)}

Measure names are ``<grouping>_<coefficient>``: ``system_pearson``, ``global_kendall``,
``within_item_spearman``, ``within_system_acc_eq``, ... Paper 001 calls the within-item
grouping the *input* level and the within-system grouping the *item* level (WMT22's "item
grouping").

Missing values are NaN: a group uses the outputs where both scores are observed, a
correlation from fewer than ``min_count`` (3) outputs or from a constant vector is NaN and is
left out of the average; system means average each score over its own observed items.
Kendall's tau is tau-b by default (paper 001, App. A), tau-c or tau-a on request.

*Pairwise accuracy with tie calibration* (``acc_eq``; Deutsch, Foster & Freitag, 2023) is the
share of output pairs on which metric and human agree -- both prefer the same output, or both
tie -- where the metric ties when its scores differ by at most :math:`\varepsilon`, chosen to
maximise the (group-averaged) accuracy.

All measures of all metrics are computed at once by :func:`measure_draws`, which also takes
resampling weights (see :mod:`bayesmeta.correlation.resampling`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import xarray as xr

from bayesmeta.correlation._accuracy import _pair_terms, _run_ends
from bayesmeta.correlation._accuracy import accuracy_groups as _accuracy_groups
from bayesmeta.correlation._kernels import (
    COEFFICIENTS,
    KENDALL_VARIANTS,
    direct_small,
    weighted_group,
)
from bayesmeta.correlation._parallel import parallel_map

#: The four groupings of paper 001, in its order (system, input, global, item levels).
GROUPINGS = ("system", "within_item", "global", "within_system")
MEASURES = tuple(f"{g}_{c}" for g in GROUPINGS for c in COEFFICIENTS)
ACCURACY = tuple(f"{g}_acc_eq" for g in GROUPINGS)
_MAX_BYTES = 256 * 2**20


def parse_measures(measures: str | Sequence[str] = "all") -> list[str]:
    """Measure names from ``"all"`` (the 12 of paper 001), a coefficient (``"kendall"``: its
    four groupings), a grouping (``"system"``, ``"within_item"``: its three coefficients), a
    measure name (``"global_pearson"``, ``"within_system_acc_eq"``) or a list of these.

    Examples
    --------
    >>> from bayesmeta.correlation.measures import parse_measures
    >>> parse_measures("kendall")
    ['system_kendall', 'within_item_kendall', 'global_kendall', 'within_system_kendall']
    >>> parse_measures(["within_system", "global_pearson"])
    ['within_system_pearson', 'within_system_spearman', 'within_system_kendall', 'global_pearson']
    """
    items = [measures] if isinstance(measures, str) else list(measures)
    out: list[str] = []
    for m in items:
        if m == "all":
            new = list(MEASURES)
        elif m in COEFFICIENTS or m == "acc_eq":
            new = [f"{g}_{m}" for g in GROUPINGS]
        elif m in GROUPINGS:
            new = [f"{m}_{c}" for c in COEFFICIENTS]
        elif m in MEASURES or m in ACCURACY:
            new = [m]
        else:
            raise ValueError(f"unknown measure {m!r}; use 'all', a coefficient "
                             f"({', '.join(COEFFICIENTS)}, acc_eq), a grouping "
                             f"({', '.join(GROUPINGS)}) or a name like 'global_pearson'.")
        out += [n for n in new if n not in out]
    if not out:
        raise ValueError("measures is empty.")
    return out


def split_measure(name: str) -> tuple[str, str]:
    """``"global_pearson"`` -> ``("global", "pearson")``; ``"within_item_kendall"`` ->
    ``("within_item", "kendall")``."""
    for g in sorted(GROUPINGS, key=len, reverse=True):
        if name.startswith(g + "_"):
            return g, name[len(g) + 1:]
    raise ValueError(f"unknown measure {name!r}; names are '<grouping>_<coefficient>' with "
                     f"grouping one of {', '.join(GROUPINGS)}.")


def _check_variant(kendall_variant: str) -> None:
    if kendall_variant not in KENDALL_VARIANTS:
        raise ValueError(f"kendall_variant must be one of {', '.join(KENDALL_VARIANTS)}, got "
                         f"{kendall_variant!r}.")


def measure_draws(
    x: np.ndarray,
    z: np.ndarray,
    *,
    system_weights: np.ndarray | None = None,
    item_weights: np.ndarray | None = None,
    measures: Sequence[str] = MEASURES,
    kendall_variant: str = "b",
    min_count: int = 3,
    n_jobs: int | None = None,
) -> np.ndarray:
    """The measures of every metric under R pairs of system and item weights.

    Parameters
    ----------
    x : (M, S, I) array
        Metric scores, NaN for missing.
    z : (S, I) array
        Human scores, NaN for missing.
    system_weights : (R, S) array, optional
        Non-negative weights of systems (bootstrap counts, Dirichlet draws, 0/1 subsets);
        default all ones.
    item_weights : (R, I) array, optional
        Weights of items; default all ones.
    measures : list of measure names (see :func:`parse_measures`)
    kendall_variant : {"b", "c", "a"}
    min_count : int
        Correlations from fewer outputs are NaN.
    n_jobs : int, optional
        Worker threads (default: the CPU count).

    Returns
    -------
    (R, M, len(measures)) array
        Output ``(s, i)`` counts with weight ``a_s b_i`` at the global level; inputs are
        averaged with weights ``b`` at the within-item level, systems with ``a`` at the
        within-system level;
        system means are ``b``-weighted means, correlated with system weights ``a``. Integer
        weights give exactly the measures of the resample with each system and input repeated
        that many times; unit weights give the sample measures.
    """
    _check_variant(kendall_variant)
    x = _power_of_two_scaled(np.asarray(x, dtype=float), axes=(1, 2))
    z = _power_of_two_scaled(np.asarray(z, dtype=float), axes=None)
    M, S, I = x.shape
    a = None if system_weights is None else np.asarray(system_weights, dtype=float)
    b = None if item_weights is None else np.asarray(item_weights, dtype=float)
    R = max(1 if a is None else a.shape[0], 1 if b is None else b.shape[0])
    a_full = np.ones((R, S)) if a is None else np.broadcast_to(a, (R, S))
    b_full = np.ones((R, I)) if b is None else np.broadcast_to(b, (R, I))
    names = list(measures)
    out = np.full((R, M, len(names)), np.nan)
    by_group: dict[str, list[tuple[int, str]]] = {}
    for j, name in enumerate(names):
        g, c = split_measure(name)
        by_group.setdefault(g, []).append((j, c))
    valid = ~(np.isnan(x) | np.isnan(z)[None])
    for g, cols in by_group.items():
        coefs = [c for _, c in cols if c != "acc_eq"]
        acc = any(c == "acc_eq" for _, c in cols)
        if g == "system":
            res = _system_level(x, z, a_full, b_full, coefs, kendall_variant, min_count)
            if acc:
                res["acc_eq"] = _system_accuracy(x, z, a_full, b_full, min_count)
        else:
            res = _group_level(g, x, z, valid, a, b, a_full, b_full, coefs, kendall_variant,
                               min_count, acc, n_jobs)
        for j, c in cols:
            out[:, :, j] = res[c]
    return out


def _power_of_two_scaled(values: np.ndarray, axes: tuple[int, ...] | None) -> np.ndarray:
    """Each variable (max over ``axes``) scaled by a power of two to a largest magnitude in
    [0.5, 1): exact in floating point, so a metric on an ordinary scale gives bit-for-bit
    the same measures, while one of magnitude 1e307 (whose squares overflow) or 1e-78
    (whose products underflow) gives those of the same metric at magnitude 1."""
    if values.size == 0:
        return values
    top = np.max(np.where(np.isfinite(values), np.abs(values), 0.0), axis=axes, keepdims=True)
    top = np.where(top > 0, top, 1.0)
    _, exponent = np.frexp(top)
    if not np.any(exponent):
        return values
    return np.ldexp(values, -exponent)


def _chunks(n: int, size: int) -> list[slice]:
    size = max(1, int(size))
    return [slice(i, min(n, i + size)) for i in range(0, n, size)]


def _group_level(g, x, z, valid, a, b, a_full, b_full, coefs, variant, min_count, acc,
                 n_jobs=None):
    """Within-item, within-system and global levels: within-group correlations, then a
    weighted average."""
    M, S, I = x.shape
    if g == "global":
        xg, zg, vg = x.reshape(M, 1, S * I), z.reshape(1, S * I), valid.reshape(M, 1, S * I)
        member = None if (a is None and b is None) else (
            a_full[:, :, None] * b_full[:, None, :]).reshape(a_full.shape[0], S * I)
        group_w = None
    elif g == "within_item":  # groups: items; members: systems
        xg, zg, vg = x.transpose(0, 2, 1), z.T, valid.transpose(0, 2, 1)
        member, group_w = a, b
    else:  # within_system: groups: systems; members: items
        xg, zg, vg = x, z, valid
        member, group_w = b, a
    G, K = xg.shape[1], xg.shape[2]
    W = np.ones((1, K)) if member is None else member
    Rm = W.shape[0]
    per_metric = G * K * (10 * 8 * Rm + 6 * K) + 1
    res: dict[str, np.ndarray] = {c: np.empty((Rm, M, G)) for c in coefs}
    tasks = [(rs, ms) for rs in _chunks(Rm, max(1, _MAX_BYTES // (G * K * 80 + 1)))
             for ms in _chunks(M, _MAX_BYTES // per_metric)]

    def run(task):
        rs, ms = task
        return task, weighted_group(xg[ms], zg, vg[ms], W[rs], coefs, variant, min_count)

    if coefs:
        for (rs, ms), part in parallel_map(run, tasks, n_jobs):
            for c in coefs:
                res[c][rs, ms] = part[c]
    R = a_full.shape[0]
    out = {}
    if acc:
        gw = None if group_w is None else np.broadcast_to(group_w, (R, G))
        out["acc_eq"] = _accuracy_groups(xg, zg, vg, np.broadcast_to(W, (R, K)), gw, min_count)
    for c, r in res.items():
        r = np.broadcast_to(r, (R, M, G))
        if g == "global":
            out[c] = r[:, :, 0]
            continue
        gw = np.ones((R, G)) if group_w is None else np.broadcast_to(group_w, (R, G))
        gw = np.where(np.isnan(r), 0.0, gw[:, None, :])
        with np.errstate(invalid="ignore", divide="ignore"):
            out[c] = np.where(gw.sum(-1) > 0, (gw * np.nan_to_num(r)).sum(-1) / gw.sum(-1),
                              np.nan)
    return out


def _system_means(x, z, b_full):
    """Item-weighted system means (R, M, S) and (R, S); plain ``nanmean`` for unit weights, so
    that exactly tied means stay tied as in a direct computation."""
    vx, vz = ~np.isnan(x), ~np.isnan(z)
    if b_full.shape[0] >= 1 and bool((b_full == 1).all()):
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            xm, zm = np.nanmean(x, -1), np.nanmean(z, -1)
        R = b_full.shape[0]
        return np.broadcast_to(xm, (R, *xm.shape)), np.broadcast_to(zm, (R, *zm.shape))
    with np.errstate(invalid="ignore", divide="ignore"):
        xm = np.einsum("ri,msi->rms", b_full, np.where(vx, x, 0.0)) / np.einsum(
            "ri,msi->rms", b_full, vx.astype(float))
        zm = np.einsum("ri,si->rs", b_full, np.where(vz, z, 0.0)) / np.einsum(
            "ri,si->rs", b_full, vz.astype(float))
    return xm, zm


def _system_level(x, z, a_full, b_full, coefs, variant, min_count):
    xm, zm = _system_means(x, z, b_full)
    if not coefs:
        return {}
    return direct_small(xm, zm[:, None, :], a_full[:, None, :], coefs, variant, min_count)


# --------------------------------------------------------------------------- acc_eq
def _system_accuracy(x, z, a_full, b_full, min_count):
    xm, zm = _system_means(x, z, b_full)  # (R, M, S), (R, S)
    R, M = xm.shape[:2]
    out = np.full((R, M), np.nan)
    for m in range(M):
        xv, zv = xm[:, m], zm
        valid = ~(np.isnan(xv) | np.isnan(zv))
        absd, agree, delta, k, l_ = _pair_terms(np.nan_to_num(xv), np.nan_to_num(zv))
        w = a_full[:, k] * a_full[:, l_] * (valid[:, k] & valid[:, l_])
        with np.errstate(invalid="ignore", divide="ignore"):
            coef = w / w.sum(-1, keepdims=True)
        base = (coef * agree).sum(-1)
        order = np.argsort(absd, axis=-1, kind="stable")
        gain = np.cumsum(np.take_along_axis(coef * delta, order, -1), -1)
        last = _run_ends(np.take_along_axis(absd, order, -1))
        floor = np.where(((absd == 0) & (w > 0)).any(-1), -np.inf, 0.0)  # epsilon = 0
        acc = base + np.maximum(np.where(last, gain, -np.inf).max(-1), floor)
        few = ((a_full > 0) & valid).sum(-1) < min_count
        out[:, m] = np.where(few, np.nan, acc)
    return out


# --------------------------------------------------------------------------- public
def correlation_measures(
    scores: xr.DataArray | np.ndarray,
    human: xr.DataArray | np.ndarray,
    *,
    measures: str | Sequence[str] = "all",
    kendall_variant: str = "b",
    min_count: int = 3,
) -> xr.DataArray:
    """The correlation measures of every metric with a human score (paper 001, Sec. 2).

    Parameters
    ----------
    scores : DataArray with dims (metric, system, item), or (M, S, I) array
        Metric scores; NaN for missing.
    human : DataArray with dims (system, item), or (S, I) array
        The human score (e.g. a trait's mean over raters).
    measures : str or list of str
        ``"all"`` (the 12 measures), or names as in :func:`parse_measures`, e.g.
        ``["global_pearson", "within_system_acc_eq"]``.
    kendall_variant : {"b", "c", "a"}
        Kendall's tau-b (default; ties corrected), tau-c (Stuart) or tau-a.
    min_count : int
        Correlations from fewer than this many outputs are NaN.

    Returns
    -------
    xarray.DataArray
        dims ``(metric, measure)``.

    Notes
    -----
    See the module docstring for the four groupings. Coefficients are those of
    :func:`scipy.stats.pearsonr`, :func:`scipy.stats.spearmanr` (average ranks) and
    :func:`scipy.stats.kendalltau` (``variant="b"`` or ``"c"``); tau-a is
    :math:`(n_c - n_d) / \\binom{n}{2}`.

    References
    ----------
    Gao, Hu, Lin & Wan (2024), *Analyzing and Evaluating Correlation Measures in NLG
    Meta-Evaluation* (paper 001). Deutsch, Foster & Freitag (2023), *Ties Matter:
    Meta-Evaluating Modern Metrics with Pairwise Accuracy and Tie Calibration*.

    Examples
    --------
    >>> import bayesmeta as bm
    >>> from bayesmeta.correlation.measures import correlation_measures
    >>> ds = bm.datasets.simulated()
    >>> human = ds["rating"].sel(trait="COH").mean("rater")
    >>> scores = ds["score"].isel(run=0).transpose("metric", "system", "item")
    >>> r = correlation_measures(scores, human)
    >>> r.sizes["measure"]
    12
    """
    names = parse_measures(measures)
    x, metrics = _as_metric_array(scores)
    z = _as_human_array(human, x.shape[1:])
    vals = measure_draws(x, z, measures=names, kendall_variant=kendall_variant,
                         min_count=min_count)[0]
    return xr.DataArray(vals, dims=("metric", "measure"),
                        coords={"metric": metrics, "measure": names},
                        attrs={"kendall_variant": kendall_variant})


def _as_metric_array(scores) -> tuple[np.ndarray, list[str]]:
    if isinstance(scores, xr.DataArray):
        if set(scores.dims) != {"metric", "system", "item"}:
            raise ValueError(f"scores must have dims (metric, system, item), got "
                             f"{scores.dims}.")
        scores = scores.transpose("metric", "system", "item")
        return np.asarray(scores.values, dtype=float), [str(m) for m in scores["metric"].values]
    arr = np.asarray(scores, dtype=float)
    if arr.ndim != 3:
        raise ValueError(f"scores must be 3-dimensional (metric, system, item), got shape "
                         f"{arr.shape}.")
    return arr, [f"m{j}" for j in range(arr.shape[0])]


def _as_human_array(human, shape) -> np.ndarray:
    if isinstance(human, xr.DataArray):
        human = human.transpose("system", "item").values
    z = np.asarray(human, dtype=float)
    if z.shape != tuple(shape):
        raise ValueError(f"human must have shape (system, item) = {tuple(shape)}, got "
                         f"{z.shape}.")
    return z
