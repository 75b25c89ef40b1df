r"""Resampling for correlation measures: permutation tests, bootstrap, Bayesian bootstrap.

**Permutation test** of :math:`H_0: r(X, Z) = r(Y, Z)` for two metrics X, Y and the human
score Z (Deutsch, Dror & Roth, 2021, Sec. 5): both metrics are standardised over the outputs
used, then scores are swapped between X and Y under one of the schemes

* ``"systems"`` (Perm-Systems): whole rows (systems) swapped, each with probability 1/2;
* ``"items"`` (Perm-Inputs): whole columns (items; Deutsch et al.'s inputs) swapped;
* ``"both"`` (Perm-Both as defined by Deutsch et al. 2021): every output (system, input)
  swapped independently;
* ``"both-rowcol"``: rows swapped, then columns swapped, as nlpstats' ``permute(..., "both")``
  does and hence paper 001's code: an output is swapped iff its row coin XOR its column coin
  came up, so swaps are not independent across outputs (only S + I coins per permutation).

The statistic is :math:`d = r(X, Z) - r(Y, Z)`; two-sided :math:`b = \#\{|d^*| \ge |d|\}`
(``"greater"``: :math:`d^* \ge d`; ``"less"``: :math:`d^* \le d`), with a relative tolerance
of :math:`100\,\epsilon_{\text{mach}}` as :func:`scipy.stats.permutation_test`. The p-value is
:math:`(b + 1) / (n + 1)` (``pvalue="plus-one"``, Phipson & Smyth, 2010, never 0) or
:math:`b / n` (``pvalue="raw"``, nlpstats and paper 001). Every measure of one pair is
computed on the same permutations; permutations are drawn from ``numpy.random.Generator``
streams spawned from ``random_seed``, one per pair, so results do not depend on chunking.
A permutation whose statistic is undefined (NaN) counts as not exceeding, as in nlpstats.

**Bootstrap** (Deutsch et al. 2021, Sec. 4): systems, items, or both resampled with
replacement; an output then counts :math:`a_s b_i` times (``a``, ``b`` the multinomial
counts), which :func:`~bayesmeta.correlation.measures.measure_draws` evaluates exactly,
without building the resampled matrices. Percentile intervals.

**Bayesian bootstrap** (Rubin, 1981) over systems and items jointly: weights
:math:`a \sim S \cdot \text{Dirichlet}(1_S)`, :math:`b \sim I \cdot \text{Dirichlet}(1_I)`,
output weight :math:`a_s b_i`; each measure evaluated as a functional of the weighted
distribution gives a posterior draw, and differences of draws the posterior of every pairwise
difference. Its calibration depends on the number of systems (App. C simulation,
``benchmarks/bayesian_bootstrap_coverage.py``): with 64 systems every level's 94% HDI
covers the truth at the nominal rate; with 16 the system level still does (0.93) but the
pooled global and within-item levels under-cover (0.89, 0.87) and the within-system level
over-covers (0.98), see :data:`FEW_SYSTEMS`.

Unit and scheme names follow :class:`bayesmeta.options.ResamplingOptions` (``"items"``).

Inputs may be dask-backed: metric scores are read block by block (``metrics_per_block``), so
the whole score array never has to be in memory at once.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import xarray as xr

from bayesmeta.correlation._kernels import SwapPlan, direct_small
from bayesmeta.correlation._parallel import Progress, parallel_map, show_progress
from bayesmeta.correlation.measures import (
    _as_human_array,
    _check_variant,
    measure_draws,
    parse_measures,
    split_measure,
)
from bayesmeta.options import DIRICHLETS
from bayesmeta.summaries import CI_PROB

SCHEMES = ("systems", "items", "both", "both-rowcol")
UNITS = ("systems", "items", "both")
#: Names of the previous release (Deutsch et al. say "inputs" for items).
PVALUES = ("plus-one", "raw")
ALTERNATIVES = ("two-sided", "greater", "less")
_BUDGET = 384 * 2**20
#: Below this many systems the Bayesian bootstrap's within-item (and, less so, global-level)
#: 94% HDIs are too short: coverage 0.87 / 0.89 at 16 systems, 0.90 / 0.92 at 32, nominal
#: at 64 (``benchmarks/bayesian_bootstrap_coverage.py``).
FEW_SYSTEMS = 64
_POOLED = ("global", "within_item")


def calibration_note(n_systems: int, measures: Sequence[str]) -> str | None:
    """The calibration line printed under Bayesian-bootstrap results, if one is due.

    Parameters
    ----------
    n_systems : int
        Systems in the data.
    measures : list of str
        Measure names of the result (see
        :func:`~bayesmeta.correlation.measures.parse_measures`).

    Returns
    -------
    str or None
        A warning line when there are fewer than :data:`FEW_SYSTEMS` systems and a
        global- or within-item measure is reported (their HDIs were measured too short in
        App. C simulations: Pearson, single metrics); None otherwise.
    """
    if n_systems >= FEW_SYSTEMS or not any(split_measure(m)[0] in _POOLED for m in measures):
        return None
    return (f"{n_systems} systems: global/within-item HDIs run short (App. C simulations, "
            f"Pearson: 94% HDIs covered 0.86-0.89 at 16 systems; nominal at 64)")


# --------------------------------------------------------------------------- inputs
def _metric_source(scores: Any) -> tuple[Any, list[str], tuple[int, int]]:
    """A (metric, system, item) source (numpy or lazily read DataArray), its labels, (S, I)."""
    if isinstance(scores, xr.DataArray):
        if set(scores.dims) != {"metric", "system", "item"}:
            raise ValueError(f"scores must have dims (metric, system, item), got "
                             f"{scores.dims}.")
        scores = scores.transpose("metric", "system", "item")
        return scores, [str(m) for m in scores["metric"].values], scores.shape[1:]
    arr = np.asarray(scores, dtype=float)
    if arr.ndim != 3:
        raise ValueError(f"scores must be 3-dimensional (metric, system, item), got shape "
                         f"{arr.shape}.")
    return arr, [f"m{j}" for j in range(arr.shape[0])], arr.shape[1:]


def _read(source: Any, idx: Sequence[int]) -> np.ndarray:
    """Metric rows ``idx`` as a float array (computes a dask-backed block)."""
    if isinstance(source, xr.DataArray):
        return np.asarray(source.isel(metric=list(idx)).values, dtype=float)
    return np.asarray(source[list(idx)], dtype=float)


def _chunks(n: int, size: int) -> list[slice]:
    size = max(1, int(size))
    return [slice(i, min(n, i + size)) for i in range(0, n, size)]


# --------------------------------------------------------------------------- permutation
def swap_masks(rng: np.random.Generator, scheme: str, n: int, shape: tuple[int, int]
               ) -> np.ndarray:
    """``n`` boolean swap masks of shape (S, I) under ``scheme`` (see the module docstring).
    Draws are sequential, so drawing in chunks gives the same masks."""
    S, I = shape
    if scheme == "systems":
        return np.broadcast_to((rng.random((n, S)) < 0.5)[:, :, None], (n, S, I))
    if scheme == "items":
        return np.broadcast_to((rng.random((n, I)) < 0.5)[:, None, :], (n, S, I))
    if scheme == "both":
        return rng.random((n, S, I)) < 0.5
    if scheme == "both-rowcol":
        coins = rng.random((n, S + I)) < 0.5
        return coins[:, :S, None] ^ coins[:, None, S:]
    raise ValueError(f"scheme must be one of {', '.join(SCHEMES)}, got {scheme!r}.")


def _standardise_pair(xa, xb, z, valid):
    """nlpstats' standardisation, over the outputs used: (X - mean) / sd (ddof 0)."""
    out = []
    for v in (xa, xb, z):
        vals = v[valid]
        sd = vals.std()
        out.append(np.where(valid, (v - vals.mean()) / (sd if sd > 0 else 1.0), np.nan))
    return out


class _PairBatch:
    """Plans for a batch of B metric pairs on the same outputs layout."""

    def __init__(self, xa, xb, z, levels, variant, min_count):
        B, S, I = xa.shape
        self.S, self.I = S, I
        valid = ~(np.isnan(xa) | np.isnan(xb) | np.isnan(z)[None])
        std = [_standardise_pair(xa[b], xb[b], z, valid[b]) for b in range(B)]
        X = np.stack([s[0] for s in std])
        Y = np.stack([s[1] for s in std])
        Z = np.stack([s[2] for s in std])
        self.levels = levels
        self.plans: dict[str, SwapPlan] = {}
        for g, coefs in levels.items():
            if g == "global":
                self.plans[g] = SwapPlan(X.reshape(B, 1, -1), Y.reshape(B, 1, -1),
                                         Z.reshape(B, 1, -1), valid.reshape(B, 1, -1), coefs,
                                         variant, min_count)
            elif g == "within_item":
                self.plans[g] = SwapPlan(X.transpose(0, 2, 1), Y.transpose(0, 2, 1),
                                         Z.transpose(0, 2, 1), valid.transpose(0, 2, 1), coefs,
                                         variant, min_count)
            elif g == "within_system":
                self.plans[g] = SwapPlan(X, Y, Z, valid, coefs, variant, min_count)
        if "system" in levels:
            vf = valid.astype(float)
            ns = vf.sum(-1)
            with np.errstate(invalid="ignore", divide="ignore"):
                self.sys_base = (np.nan_to_num(X) * vf).sum(-1) / ns, (np.nan_to_num(Y) * vf
                                                                       ).sum(-1) / ns
                self.sys_d = np.nan_to_num(Y - X) * vf / ns[..., None]
                self.sys_z = (np.nan_to_num(Z) * vf).sum(-1) / ns  # (B, S)
        self.variant, self.min_count = variant, min_count

    def statistics(self, masks: np.ndarray) -> dict[str, np.ndarray]:
        """measure -> (B, P) differences r(x_p, z) - r(y_p, z) for masks (B, P, S, I)."""
        B, P = masks.shape[:2]
        mf = masks.astype(np.float32)
        out: dict[str, np.ndarray] = {}
        for g, coefs in self.levels.items():
            if g == "system":
                lin = np.einsum("bpsi,bsi->bps", mf, self.sys_d)
                xp, yp = self.sys_base[0][:, None] + lin, self.sys_base[1][:, None] - lin
                zz = self.sys_z[:, None]
                rx = direct_small(xp, zz, None, coefs, self.variant, self.min_count)
                ry = direct_small(yp, zz, None, coefs, self.variant, self.min_count)
                for c in coefs:
                    out[f"system_{c}"] = rx[c] - ry[c]
                continue
            if g == "global":
                m = mf.reshape(B, P, -1).transpose(0, 2, 1)[:, None]
            elif g == "within_item":
                m = mf.transpose(0, 3, 2, 1)
            else:
                m = mf.transpose(0, 2, 3, 1)
            res = self.plans[g].evaluate(np.ascontiguousarray(m))
            for c in coefs:
                rx, ry = res[c]
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    d = np.nanmean(rx, -1) - np.nanmean(ry, -1)
                out[f"{g}_{c}"] = d
        return out


def permutation_test(
    scores: xr.DataArray | np.ndarray,
    human: xr.DataArray | np.ndarray,
    pairs: Sequence[tuple[int, int]] | None = None,
    *,
    measures: str | Sequence[str] = "all",
    scheme: str = "both",
    n_permutations: int = 1000,
    alternative: str = "two-sided",
    pvalue: str = "plus-one",
    kendall_variant: str = "b",
    random_seed: int | None = None,
    min_count: int = 3,
    progress: bool | None = None,
    n_jobs: int | None = None,
) -> xr.Dataset:
    r"""Permutation tests of the difference between two metrics' correlations with a human
    score, for many metric pairs and measures at once.

    Parameters
    ----------
    scores : DataArray (metric, system, item) or (M, S, I) array
        Metric scores, NaN for missing; may be dask-backed.
    human : DataArray (system, item) or (S, I) array
    pairs : list of (int, int), optional
        Metric index pairs (default: all M (M - 1) / 2 pairs ``a < b``).
    measures : str or list of str
        See :func:`~bayesmeta.correlation.measures.parse_measures` (not ``acc_eq``).
    scheme : {"both", "systems", "items", "both-rowcol"}
        What is swapped between the two metrics (module docstring; ``"inputs"`` is the
        previous name of ``"items"``).
    n_permutations : int
    alternative : {"two-sided", "greater", "less"}
        ``"greater"``: the first metric of the pair correlates more.
    pvalue : {"plus-one", "raw"}
        :math:`(b + 1) / (n + 1)` or :math:`b / n`.
    kendall_variant : {"b", "c", "a"}
    random_seed : int, optional
    progress : bool, optional
        Show a progress bar (default: for long runs on a terminal).
    n_jobs : int, optional
        Worker threads over batches of pairs (default: the CPU count).

    Returns
    -------
    xarray.Dataset
        ``pvalue(pair, measure)``, ``statistic(pair, measure)`` (observed difference
        :math:`r(X, Z) - r(Y, Z)`), ``exceed(pair, measure)`` (b) and ``ties(pair,
        measure)`` (permutations whose statistic equals the observed one, within the
        tolerance; included in b); coords ``metric`` and ``metric2`` along ``pair``.

        For a discrete statistic (rank coefficients over a few systems) the p-value is
        conservative; ``(b - ties + U (ties + 1)) / (n + 1)`` with ``U ~ Uniform(0, 1)`` is
        the randomised p-value, exactly uniform under the null.

    Notes
    -----
    Cost: per pair and chunk of permutations, one matrix product with the pair's
    :math:`K \times K` Kendall matrix per grouping, plus O(K) work per permutation for the
    other statistics (sorted cumulative counts); no Python loop over permutations.

    References
    ----------
    Deutsch, Dror & Roth (2021), *A Statistical Analysis of Summarization Evaluation Metrics
    using Resampling Methods*, TACL 9. Gao et al. (paper 001), Alg. 1. Phipson & Smyth
    (2010), *Permutation P-values Should Never Be Zero*.

    Examples
    --------
    >>> import bayesmeta as bm
    >>> from bayesmeta.correlation.resampling import permutation_test
    >>> ds = bm.datasets.simulated(n_metrics=3)
    >>> x = ds["score"].isel(run=0).transpose("metric", "system", "item")
    >>> z = ds["rating"].sel(trait="COH").mean("rater")
    >>> res = permutation_test(x, z, measures="system_kendall", n_permutations=99,
    ...                        random_seed=1)
    >>> res["pvalue"].dims
    ('pair', 'measure')
    """
    names = parse_measures(measures)
    if any(split_measure(n)[1] == "acc_eq" for n in names):
        raise ValueError("measures: acc_eq has no permutation test here; use the bootstrap.")
    _check_variant(kendall_variant)
    for arg, val, allowed in (("scheme", scheme, SCHEMES), ("pvalue", pvalue, PVALUES),
                              ("alternative", alternative, ALTERNATIVES)):
        if val not in allowed:
            raise ValueError(f"{arg} must be one of {', '.join(allowed)}, got {val!r}.")
    if n_permutations < 1:
        raise ValueError(f"n_permutations must be >= 1, got {n_permutations}.")
    source, labels, (S, I) = _metric_source(scores)
    z = _as_human_array(human, (S, I))
    M = len(labels)
    if pairs is None:
        pairs = [(a, b) for a in range(M) for b in range(a + 1, M)]
    pairs = [(int(a), int(b)) for a, b in pairs]
    for a, b in pairs:
        if not (0 <= a < M and 0 <= b < M) or a == b:
            raise ValueError(f"pairs: ({a}, {b}) is not a pair of distinct metric indices "
                             f"0..{M - 1}.")
    levels: dict[str, list[str]] = {}
    for n_ in names:
        g, c = split_measure(n_)
        levels.setdefault(g, []).append(c)
    n = S * I
    # memory: int8 K x K matrices per pair for each level, float chunks of permutations
    per_pair = n * n * 12 if "global" in levels else 0
    per_pair += (S * I * (S + I)) * 12
    batch = max(1, min(-(-len(pairs) // 2), _BUDGET // 4 // max(per_pair, 1)))
    p_chunk = int(max(8, min(n_permutations, 256, _BUDGET // 4 // (batch * n * 4 * 40))))
    seeds = np.random.SeedSequence(random_seed).spawn(len(pairs))
    bar = Progress(len(pairs), "permutation tests",
                   show_progress(progress, len(pairs) * n_permutations * n * 40))

    def run(ps: slice) -> tuple[slice, np.ndarray, np.ndarray]:
        chunk_pairs = pairs[ps]
        need = sorted({i for p in chunk_pairs for i in p})
        block = _read(source, need)
        where = {m: j for j, m in enumerate(need)}
        xa = block[[where[a] for a, _ in chunk_pairs]]
        xb = block[[where[b] for _, b in chunk_pairs]]
        pb = _PairBatch(xa, xb, z, levels, kendall_variant, min_count)
        B = len(chunk_pairs)
        obs = pb.statistics(np.zeros((B, 1, S, I), bool))
        observed = np.stack([obs[nm][:, 0] for nm in names], -1)  # (B, K)
        rngs = [np.random.default_rng(s) for s in seeds[ps]]
        gamma = 100 * np.finfo(float).eps * np.abs(observed)
        cnt = np.zeros((B, len(names)))
        tie = np.zeros((B, len(names)))
        for cs in _chunks(n_permutations, p_chunk):
            k = cs.stop - cs.start
            masks = np.stack([swap_masks(r, scheme, k, (S, I)) for r in rngs])
            res = pb.statistics(masks)
            d = np.stack([res[nm] for nm in names], -1)  # (B, P, K)
            with np.errstate(invalid="ignore"):
                if alternative == "two-sided":
                    hit = np.abs(d) >= (np.abs(observed) - gamma)[:, None]
                elif alternative == "greater":
                    hit = d >= (observed - gamma)[:, None]
                else:
                    hit = d <= (observed + gamma)[:, None]
                same = np.abs(np.abs(d) - np.abs(observed)[:, None]) <= gamma[:, None]
                if alternative != "two-sided":
                    same = np.abs(d - observed[:, None]) <= gamma[:, None]
            cnt += hit.sum(1)
            tie += same.sum(1)
        bar.update(B)
        return ps, observed, cnt, tie

    stat = np.full((len(pairs), len(names)), np.nan)
    exceed = np.zeros((len(pairs), len(names)))
    ties = np.zeros((len(pairs), len(names)))
    for ps, observed, cnt, tie in parallel_map(run, _chunks(len(pairs), batch), n_jobs):
        stat[ps], exceed[ps], ties[ps] = observed, cnt, tie
    with np.errstate(invalid="ignore"):
        p = (exceed + 1) / (n_permutations + 1) if pvalue == "plus-one" else (
            exceed / n_permutations)
    p = np.where(np.isnan(stat), np.nan, p)
    ia = [labels[a] for a, _ in pairs]
    ib = [labels[b] for _, b in pairs]
    coords = {"measure": names, "metric": ("pair", ia), "metric2": ("pair", ib)}
    return xr.Dataset(
        {"pvalue": (("pair", "measure"), p), "statistic": (("pair", "measure"), stat),
         "exceed": (("pair", "measure"), exceed), "ties": (("pair", "measure"), ties)},
        coords=coords,
        attrs={"scheme": scheme, "n_permutations": n_permutations, "pvalue_kind": pvalue,
               "alternative": alternative, "kendall_variant": kendall_variant,
               "random_seed": -1 if random_seed is None else random_seed},
    )


# --------------------------------------------------------------------------- bootstrap
def dirichlet_concentration(k: int, dirichlet: str = "flat") -> float:
    r"""The Bayesian bootstrap's Dirichlet concentration over ``k`` units.

    ``"flat"``: 1 (Rubin 1981). ``"unbiased"``: :math:`\alpha = (k - 2) / k` for
    :math:`k \ge 3` (1 below). With weights :math:`w \sim k\,\mathrm{Dirichlet}(\alpha
    \mathbf{1}_k)` the weighted mean :math:`\bar x_w = \sum_i w_i x_i / k` has posterior
    variance :math:`\sum_i (x_i - \bar x)^2 / (k (k\alpha + 1))`: the flat Dirichlet gives
    :math:`s^2 (k - 1) / (k (k + 1))`, 22% below the unbiased sampling variance
    :math:`s^2 / k` at :math:`k = 8`, and :math:`\alpha = (k - 2)/k` gives :math:`s^2/k`
    exactly (the same :math:`k - 1` as the sample variance's). It is a calibration, not a
    prior: with few systems the flat Dirichlet's intervals under-cover
    (``benchmarks/wmt_null_calibration.py``). :func:`resampling_weights` uses it when one
    unit is weighed; weights over systems and items jointly stay flat (the two-way weights
    already over-state the variance, Owen 2007).

    Examples
    --------
    >>> from bayesmeta.correlation.resampling import dirichlet_concentration
    >>> dirichlet_concentration(8, "unbiased"), dirichlet_concentration(8)
    (0.75, 1.0)
    """
    if dirichlet not in DIRICHLETS:
        raise ValueError(f"dirichlet must be one of {', '.join(map(repr, DIRICHLETS))}, got "
                         f"{dirichlet!r}.")
    return (k - 2) / k if dirichlet == "unbiased" and k >= 3 else 1.0


def effective_dirichlet(unit: str, dirichlet: str) -> str:
    """The Dirichlet :func:`resampling_weights` draws for ``unit``: ``dirichlet`` when one
    unit is weighed, ``"flat"`` when systems and items are weighed jointly (the two-way
    weights already over-state the variance, Owen 2007)."""
    return "flat" if unit == "both" else dirichlet


def resampling_weights(rng: np.random.Generator, kind: str, n: int, shape: tuple[int, int],
                       unit: str = "both", *, bayesian_unit: str = "both",
                       dirichlet: str = "flat"
                       ) -> tuple[np.ndarray | None, np.ndarray | None]:
    """System and item weights for ``n`` resamples: ``kind="bootstrap"`` (multinomial counts
    of the resampled ``unit``) or ``"bayesian"`` (size times a Dirichlet over
    ``bayesian_unit``, its concentration from :func:`dirichlet_concentration` when one unit
    is weighed and flat when both are: systems and items jointly by default, the other unit
    weighing one). ``None`` means all ones. The
    system weights are drawn first, so the system weights of ``"systems"`` equal those of
    ``"both"`` under the same generator state."""
    u = bayesian_unit if kind == "bayesian" else unit
    if u not in UNITS:
        raise ValueError(f"unit must be one of {', '.join(UNITS)}, got {u!r}.")

    dirichlet = effective_dirichlet(u, dirichlet)

    def weights(k: int) -> np.ndarray:
        if kind == "bayesian":
            return k * rng.dirichlet(np.full(k, dirichlet_concentration(k, dirichlet)), size=n)
        return rng.multinomial(k, np.full(k, 1.0 / k), size=n).astype(float)

    S, I = shape
    a = weights(S) if u in ("systems", "both") else None
    b = weights(I) if u in ("items", "both") else None
    return a, b


def _weighted_draws(scores, human, kind, *, measures, unit, n_resamples, kendall_variant,
                    random_seed, min_count, progress, metrics_per_block):
    names = parse_measures(measures)
    _check_variant(kendall_variant)
    source, labels, (S, I) = _metric_source(scores)
    z = _as_human_array(human, (S, I))
    rng = np.random.default_rng(random_seed)
    a, b = resampling_weights(rng, kind, n_resamples, (S, I), unit)
    M = len(labels)
    out = np.empty((n_resamples, M, len(names)))
    r_chunk = max(1, min(n_resamples, 250))
    blocks = _chunks(M, metrics_per_block or M)
    bar = Progress(len(blocks) * len(_chunks(n_resamples, r_chunk)), f"{kind} resamples",
                   show_progress(progress, n_resamples * M * (S * I) ** 2 / 50))
    for ms in blocks:
        x = _read(source, range(ms.start, ms.stop))
        for rs in _chunks(n_resamples, r_chunk):
            out[rs, ms] = measure_draws(
                x, z, system_weights=None if a is None else a[rs],
                item_weights=None if b is None else b[rs], measures=names,
                kendall_variant=kendall_variant, min_count=min_count)
            bar.update()
    return xr.DataArray(
        out, dims=("resample", "metric", "measure"),
        coords={"resample": np.arange(n_resamples), "metric": labels, "measure": names},
        attrs={"kind": kind, "unit": unit if kind == "bootstrap" else "both (Dirichlet)",
               "kendall_variant": kendall_variant,
               "random_seed": -1 if random_seed is None else random_seed},
    )


def bootstrap(
    scores: xr.DataArray | np.ndarray,
    human: xr.DataArray | np.ndarray,
    *,
    measures: str | Sequence[str] = "all",
    unit: str = "both",
    n_resamples: int = 1000,
    kendall_variant: str = "b",
    random_seed: int | None = None,
    min_count: int = 3,
    progress: bool | None = None,
    metrics_per_block: int | None = None,
) -> xr.DataArray:
    """Bootstrap draws of the correlation measures, resampling systems, items or both.

    Parameters
    ----------
    scores, human : as in :func:`permutation_test`
    unit : {"both", "systems", "items"}
        What is resampled with replacement (Deutsch et al. 2021, Boot-Systems, Boot-Inputs,
        Boot-Both; ``"inputs"`` is the previous name of ``"items"``).
    n_resamples : int
    metrics_per_block : int, optional
        Metrics read and processed at once (dask-backed input is read block-wise).

    Returns
    -------
    xarray.DataArray
        dims ``(resample, metric, measure)``; percentile intervals are its quantiles.

    Notes
    -----
    Resample r counts output (s, i) ``a[r, s] * b[r, i]`` times, with ``a``, ``b`` the
    multinomial counts; the measures are evaluated on these weights exactly as on the
    resampled matrices (ties between copies included).

    References
    ----------
    Deutsch, Dror & Roth (2021), TACL 9, Sec. 4 (Boot-Both); Efron & Tibshirani (1993).

    Examples
    --------
    >>> import bayesmeta as bm
    >>> from bayesmeta.correlation.resampling import bootstrap
    >>> ds = bm.datasets.simulated(n_metrics=2)
    >>> x = ds["score"].isel(run=0).transpose("metric", "system", "item")
    >>> z = ds["rating"].sel(trait="COH").mean("rater")
    >>> bootstrap(x, z, measures="global_pearson", n_resamples=50, random_seed=0).shape
    (50, 2, 1)
    """
    return _weighted_draws(scores, human, "bootstrap", measures=measures, unit=unit,
                           n_resamples=n_resamples, kendall_variant=kendall_variant,
                           random_seed=random_seed, min_count=min_count, progress=progress,
                           metrics_per_block=metrics_per_block)


def bayesian_bootstrap(
    scores: xr.DataArray | np.ndarray,
    human: xr.DataArray | np.ndarray,
    *,
    measures: str | Sequence[str] = "all",
    n_resamples: int = 1000,
    kendall_variant: str = "b",
    random_seed: int | None = None,
    min_count: int = 3,
    progress: bool | None = None,
    metrics_per_block: int | None = None,
) -> xr.DataArray:
    r"""Bayesian-bootstrap posterior draws of the correlation measures.

    System weights :math:`a \sim S\,\mathrm{Dir}(1, \dots, 1)` and item weights
    :math:`b \sim I\,\mathrm{Dir}(1, \dots, 1)`, independent; output (s, i) weighs
    :math:`a_s b_i`. Each draw is the measure of the weighted empirical distribution (see
    :func:`~bayesmeta.correlation.measures.measure_draws`): the posterior of the measure
    under a flat Dirichlet process prior on systems and on items (Rubin, 1981). Differences
    of draws between metrics are draws of the posterior of the difference.

    Calibration (94% HDIs against the truth of paper 001's App. C model, 400 datasets of
    100 inputs, ``benchmarks/bayesian_bootstrap_coverage.py``): with 64 systems every level
    covers at the nominal rate (system 0.95, global 0.93, within-item 0.92, within-system
    0.96); with 16 systems (SummEval has 17) the system level still does (0.93) but global
    and within-item under-cover (0.89, 0.87: with few clusters the posterior is too narrow
    and the sample r biased low) and the within-system level over-covers (0.98: product
    weights count within-system noise twice, Owen & Eckles 2012). With fewer than
    :data:`FEW_SYSTEMS` systems, read global and within-item intervals as too short. For
    the system-level and within-system correlations the model-based posterior of
    :func:`bayesmeta.fit_correlation_model` is calibrated at 17 systems (coverage
    0.92-0.96); it has no global or within-item level.

    Returns
    -------
    xarray.DataArray
        dims ``(resample, metric, measure)``.

    References
    ----------
    Rubin (1981), *The Bayesian Bootstrap*, Ann. Statist. 9(1).

    Examples
    --------
    >>> import bayesmeta as bm
    >>> from bayesmeta.correlation.resampling import bayesian_bootstrap
    >>> ds = bm.datasets.simulated(n_metrics=2)
    >>> x = ds["score"].isel(run=0).transpose("metric", "system", "item")
    >>> z = ds["rating"].sel(trait="COH").mean("rater")
    >>> d = bayesian_bootstrap(x, z, measures="within_system_kendall", n_resamples=40,
    ...                        random_seed=0)
    >>> bool(((d > -1) & (d < 1)).all())
    True
    """
    return _weighted_draws(scores, human, "bayesian", measures=measures, unit="both",
                           n_resamples=n_resamples, kendall_variant=kendall_variant,
                           random_seed=random_seed, min_count=min_count, progress=progress,
                           metrics_per_block=metrics_per_block)


def percentile_interval(draws: xr.DataArray, ci_prob: float = CI_PROB) -> xr.DataArray:
    """Equal-tailed percentile interval over ``resample``: a ``ci_bound`` dim
    (``lower``, ``upper``) with attrs ``ci_kind``, ``ci_prob``."""
    lo, hi = (1 - ci_prob) / 2, (1 + ci_prob) / 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        q = draws.quantile([lo, hi], dim="resample", skipna=True)
    q = q.rename(quantile="ci_bound").assign_coords(ci_bound=["lower", "upper"])
    q.attrs.update(ci_kind="percentile", ci_prob=ci_prob)
    return q
