r"""Significance clusters of metrics, as the WMT metrics task ranks them.

Metrics are sorted by decreasing statistic; for every pair (i above j) a one-sided test
gives the p-value of "j is at least as good as i" (the significance matrix): by default
the paired bootstrap over systems (:func:`bootstrap_pvalues`, which tests equal expected
statistic), or MTME's permutation test (which tests exchangeability). Walking down the
list, a metric opens a new cluster when a metric of the current cluster beats it
significantly (:func:`bayesmeta.wmt.kernels.assign_ranks`). Beside the clusters: each
metric's bootstrap interval, Bayesian-bootstrap posterior, P(A beats B) and rank
distribution.

The permutation test is the one of MTME's ``PermutationSigDiff`` (Perm-Both of Deutsch,
Dror & Roth 2021): both metrics are z-scored over all outputs, every output's pair of
scores swapped with probability 1/2, the statistic recomputed; p is the share of swaps
whose difference reaches the observed one. Correlation measures run through the resampling
engine's :func:`~bayesmeta.correlation.resampling.permutation_test` (system-level measures
on the system means, as MTME tests system-level scores); tie-calibrated accuracy swaps
pairwise comparisons instead (:mod:`bayesmeta.wmt.ties`); the WMT statistics (SPA, PDP,
KendallLike) use the engine's swap masks
(:func:`~bayesmeta.correlation.resampling.swap_masks`) and their kernels.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayesmeta.correlation.measures import parse_measures, split_measure
from bayesmeta.correlation.resampling import permutation_test, swap_masks
from bayesmeta.options import ResamplingOptions, resolve_seed
from bayesmeta.summaries import CI_PROB, check_ci_prob
from bayesmeta.wmt import kernels, ties
from bayesmeta.wmt._common import (
    WMTResult,
    default_unit,
    draws,
    evaluate,
    inputs,
    interval_kinds,
    measure_statistic,
    spa_statistic,
    wmt_resampling,
)
from bayesmeta.wmt.statistics import SPA_SEED

WMT_STATISTICS = ("spa", "pdp", "kendall_like")
#: How two metrics are tested (``pair_test``).
PAIR_TESTS = ("bootstrap", "permutation")
#: The comparison-swapping schemes of tie-calibrated accuracy and what each swaps as one:
#: a single comparison (MTME's) or all comparisons of a group (an item within items, a
#: system within systems).
PAIR_SCHEMES = {"pairs": "pairs", "pairs-items": "items"}
_ACC_GROUPING = {"within_item": "item", "within_system": "system", "global": "global"}


class ClustersResult(WMTResult):
    """Significance clusters (see :func:`significance_clusters`)."""

    def matrix(self) -> pd.DataFrame:
        """The significance matrix: rows and columns sorted by decreasing statistic;
        entry (i, j), j below i, the p-value that metric j is at least as good as i."""
        return self.extra["significance"].to_pandas()


def _statistic(statistic: str, threshold: float, n_permutations: int, seed: int,
               n_items: int):
    """The statistic as a kernel ``(x, z, a, b)`` and a fast unweighted version over
    leading dims ``(..., S, I) -> (...)``."""
    if statistic == "spa":
        return spa_statistic(kernels.permutation_signs(n_permutations, n_items, seed))
    if statistic == "pdp":
        return lambda x, z, a, b: kernels.pairwise_difference_pearson(x, z, a=a, b=b)
    if statistic == "kendall_like":
        return lambda x, z, a, b: kernels.kendall_like(x, z, threshold=threshold, a=a, b=b)
    name = parse_measures(statistic)
    if len(name) != 1:
        raise ValueError(f"statistic must name one statistic, got {statistic!r}.")
    return measure_statistic(name[0])


def swap_pvalues(stat, x, z, order, n_permutations, seed, chunk=100
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Significance matrix (in ``order``) by swapping z-scored outputs between the metrics
    of each pair, with the engine's swap masks (one spawned stream per pair); and the null
    draws ``(M, M, n_permutations)`` of each pair's difference (i < j)."""
    M = len(order)
    xs = (x - x.mean((1, 2), keepdims=True)) / x.std((1, 2), keepdims=True)
    pairs = [(i, j) for i in range(M) for j in range(i + 1, M)]
    streams = np.random.SeedSequence(seed).spawn(len(pairs))
    sig = np.zeros((M, M))
    null = np.zeros((M, M, n_permutations), dtype=np.float32)
    for (i, j), ss in zip(pairs, streams, strict=True):
        hi, lo = xs[order[i]], xs[order[j]]
        delta = stat(np.stack([hi, lo]), z, None, None)
        delta = delta[0] - delta[1]
        rng = np.random.default_rng(ss)
        hits = 0
        for s in range(0, n_permutations, chunk):
            k = min(chunk, n_permutations - s)
            m = swap_masks(rng, "both", k, z.shape)
            d = stat(np.where(m, lo, hi), z, None, None) - stat(np.where(m, hi, lo), z,
                                                               None, None)
            hits += int((d >= delta - 100 * np.finfo(float).eps * abs(delta)).sum())
            null[i, j, s:s + k] = d
        sig[i, j] = hits / n_permutations
    return sig, null


def _swap_significance(statistic, stat, acc, eps, x, z, order, opts, seed) -> np.ndarray:
    """The permutation tests' significance matrix (raw p = b/n), in ``order``."""
    M = len(order)
    if acc:
        level = split_measure(parse_measures(statistic)[0])[0]
        xx, zz, grouping = (x.mean(-1, keepdims=True), z.mean(-1, keepdims=True), "global"
                            ) if level == "system" else (x, z, _ACC_GROUPING[level])
        if opts.scheme == "pairs-items" and grouping == "global":
            raise ValueError(f"resampling: scheme 'pairs-items' swaps each group's "
                             f"comparisons together; {statistic} has one group. Use "
                             f"'pairs' or 'both'.")
        if opts.scheme in PAIR_SCHEMES:
            agree, coef = ties.agreement(xx, zz, eps, grouping=grouping)
            return ties.pair_swap_pvalues(agree, coef, order, opts.n_permutations, seed,
                                          block=PAIR_SCHEMES[opts.scheme])[0]

        def recalibrated(h, zh, a, b):
            return ties.calibrated_accuracy(h, zh, grouping=grouping)
        return swap_pvalues(recalibrated, xx, zz, order, opts.n_permutations, seed)[0]
    if statistic in WMT_STATISTICS:
        return swap_pvalues(stat, x, z, order, opts.n_permutations, seed)[0]
    xx, zz = (x.mean(-1, keepdims=True), z.mean(-1, keepdims=True)) if statistic.startswith(
        "system_") else (x, z)
    pairs = [(int(order[i]), int(order[j])) for i in range(M) for j in range(i + 1, M)]
    t = permutation_test(xx, zz, pairs, measures=statistic, scheme=opts.scheme,
                         n_permutations=opts.n_permutations, pvalue="raw",
                         alternative="greater", random_seed=seed, progress=False,
                         n_jobs=opts.n_jobs)
    sig = np.zeros((M, M))
    sig[np.triu_indices(M, 1)] = t["exceed"].values[:, 0] / opts.n_permutations
    return sig


def bootstrap_pvalues(point: np.ndarray, boot: np.ndarray, order: np.ndarray,
                      n_systems: int) -> np.ndarray:
    r"""Significance matrix (rows/columns in ``order``) of the paired bootstrap test:
    ``sig[i, j]`` (i < j) is the one-sided p-value of "metric ``order[j]`` is at least as
    good as ``order[i]``",

    .. math:: p_{ij} = P\big(T_{S-1} \ge (\hat\theta_i - \hat\theta_j) / s^*_{ij}\big),

    :math:`s^*_{ij}` the sd of the paired differences
    :math:`\hat\theta^{*r}_i - \hat\theta^{*r}_j` over the resamples ``boot`` ``(n, M)``
    (both statistics on the same resample r; resamples where either is undefined are left
    out) and :math:`T_{S-1}` Student's t with one degree of freedom fewer than the
    ``n_systems`` resampled: the bootstrap-t test of equal expected statistic (Efron &
    Tibshirani 1993, *An Introduction to the Bootstrap*, ch. 16, with the bootstrap
    standard error; the t reference as a paired t-test over systems). A difference with
    :math:`s^* = 0` has p = 1 when it is 0 or negative and 0 otherwise.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmeta.wmt.clusters import bootstrap_pvalues
    >>> boot = np.array([[0.5, 0.4], [0.7, 0.4], [0.6, 0.5]])
    >>> round(float(bootstrap_pvalues(np.array([0.6, 0.4]), boot, np.array([0, 1]), 5)[0, 1]),
    ...       4)
    0.0792
    """
    from scipy import stats

    if n_systems < 2:
        raise ValueError(f"n_systems must be at least 2, got {n_systems!r}.")
    b = np.asarray(boot, float)[:, order]
    pt = np.asarray(point, float)[order]
    M = b.shape[1]
    out = np.zeros((M, M))
    for i in range(M):
        for j in range(i + 1, M):
            d = b[:, i] - b[:, j]
            d = d[np.isfinite(d)]
            delta = pt[i] - pt[j]
            if d.size < 2 or not np.isfinite(delta):
                out[i, j] = np.nan
                continue
            sd = d.std(ddof=1)
            out[i, j] = (float(stats.t.sf(delta / sd, n_systems - 1)) if sd > 0
                         else float(delta <= 0))
    return out

def significance_clusters(
    data: xr.Dataset,
    trait: str | None = None,
    *,
    statistic: str = "system_pearson",
    alpha: float = 0.05,
    threshold: float = 25.0,
    raters: str | Sequence[str] | None = None,
    human: xr.DataArray | None = None,
    metrics: Sequence[str] | None = None,
    run: Any = None,
    reference: Any = "first",
    pair_test: str | None = None,
    resampling: ResamplingOptions | dict[str, Any] | None = None,
    ci_prob: float = CI_PROB,
    random_seed: int | None = None,
) -> ClustersResult:
    r"""Rank metrics into significance clusters, as the WMT metrics task does.

    Parameters
    ----------
    data, trait, raters, human, metrics, run, reference :
        As in :func:`bayesmeta.correlations`; every output must be scored.
    statistic : str
        ``"spa"``, ``"pdp"`` (pairs within items), ``"kendall_like"`` (within items,
        ``threshold``), or one correlation measure (``"system_pearson"``,
        ``"global_kendall"``, ``"within_item_pearson"``, ...), or tie-calibrated
        accuracy (``"within_item_acc_eq"``, ...; ``details()["epsilon"]`` holds each
        metric's threshold): its test swaps scores and re-calibrates the thresholds in
        every permutation (exact for exchangeable metrics), or, with ``scheme="pairs"``,
        swaps pairwise comparisons as MTME's ``perm_test="pairs"`` (WMT24/25), which is
        anti-conservative (see :mod:`bayesmeta.wmt.ties`), or, with
        ``scheme="pairs-items"``, swaps all comparisons of an item together (a sign-flip
        test over the independent items that keeps each metric's threshold).
    alpha : float
        p-values at or below it are significant (WMT: 0.05).
    threshold : float
        KendallLike's human-score threshold.
    pair_test : {"bootstrap", "permutation"}, optional
        How each pair of metrics is tested. ``"bootstrap"`` (the default when
        ``n_resamples`` > 0): the paired bootstrap over systems, which tests *equal expected
        statistic* (see Notes). ``"permutation"`` (the default with ``n_resamples=0``):
        MTME's swap test (``scheme``), which tests that the two metrics' scores are
        *exchangeable* (same distribution, output by output or comparison by comparison),
        a stronger null that it rejects also when the metrics are equally good.
    resampling : ResamplingOptions or dict, optional
        ``n_permutations`` (per pair, default 1000), ``scheme`` (``"both"``: swap every
        output's scores; correlation measures also ``"systems"``, ``"items"``,
        ``"both-rowcol"``; acc_eq also ``"pairs"`` and ``"pairs-items"``) and ``pvalue``
        (default ``"raw"``: :math:`b/n` as MTME) of the permutation test,
        ``n_resamples`` (bootstrap, posterior and paired-test draws, default 1000: an HDI
        of fewer draws is too narrow), ``unit`` (what the intervals' bootstrap resamples
        and the Bayesian bootstrap weighs; default ``"systems"`` for SPA, PDP, KendallLike
        and the system-level and within-item measures, which compare systems on the same
        items, ``"both"`` for ``global_*`` and ``within_system_*``; see Notes),
        ``dirichlet`` (the Bayesian bootstrap's: default ``"unbiased"``, Dirichlet((k - 2)
        / k) over k systems or items; flat over both; see :mod:`bayesmeta.wmt._common`).
        The paired bootstrap test always resamples systems. ``scheme`` and ``pvalue`` are
        used only by the permutation test
        (``pair_test="permutation"``).
    random_seed : int, optional
        Seed of the permutation tests (for SPA also of its inner permutations, default
        MTME's 4 when None); the bootstrap uses ``+ 1``, the Bayesian bootstrap ``+ 2``,
        the paired bootstrap test ``+ 3``.

    Returns
    -------
    ClustersResult
        ``summary()`` as the statistic's own function; ``details()``: ``rank`` (by the
        statistic), ``cluster`` (1 = top cluster), ``p_best``; ``matrix()``: the
        significance matrix; ``extra["p_beats"]``, ``extra["rank_probability"]``.

    Notes
    -----
    MTME: ``data.CompareMetrics(corrs, corr_fcn, average_by, k)`` (and
    ``CompareMetricsWithPairwiseConfidenceError`` for SPA), whose permutations come from
    NumPy's global stream: p-values agree with MTME's to Monte Carlo error, clusters
    where no p-value is near ``alpha``. R equivalent: none packaged.

    **The paired bootstrap test** (``pair_test="bootstrap"``): the statistic of every
    metric on the same ``n_resamples`` resamples of the systems (seed ``random_seed + 3``;
    ``extra["pair_bootstrap"]``); entry (i, j) of the matrix is the one-sided p-value
    :math:`P(T_{S-1} \ge (\hat\theta_i - \hat\theta_j) / s^*_{ij})`, :math:`s^*_{ij}` the
    sd of the paired bootstrap differences (:func:`bootstrap_pvalues`; the bootstrap-t test
    of Efron & Tibshirani 1993, ch. 16): the test of "metric j's expected statistic is at
    least metric i's" over the population of systems. Only the systems are resampled: in a
    *difference* of two metrics the system and item effects largely cancel and the
    output-level noise dominates, which resampling systems and items together counts
    twice. Null study (``benchmarks/wmt_null_calibration.py paired``; two metrics of equal
    validity; 8 and 20 systems x 50 items, with and without a per-system error of each
    metric, and 30 systems with it; 200 campaigns per cell, Monte Carlo sd <= 1.7% at 5%):
    at two-sided 5% this test rejected 0-6.5% of true nulls (above 5.5% only at 30 systems:
    SPA 6.0%, PDP 6.5%; conservative for system Pearson and KendallLike, 0-3%), its 94% t
    intervals of the difference covered 92.5-100%. The percentile test of the same paired
    draws rejected 1-9.5% (7-9.5% for system Pearson and PDP at 20-30 systems).
    Resampling systems and items together (the intervals' ``unit="both"``, their default
    before) rejected 0-0.5% and its 94% intervals of the difference covered 99.5-100%, as
    did the 94% HDIs of a Dirichlet over systems and items: the two-way ("pigeonhole")
    bootstrap counts the output-level variance more than once (Owen 2007), while an
    additive per-item effect, also one specific to a metric, cancels out of every statistic
    that compares systems on the same items, so the systems carry its sampling variance.

    **The intervals, the posterior and P(A beats B)** therefore resample the systems by
    default (``unit="systems"``: percentile bootstrap over systems, Dirichlet((S - 2) / S)
    weights over systems with every item weighing one; ``global_*`` and ``within_system_*``
    keep ``"both"``, see :mod:`bayesmeta.wmt._common`). Null study of this function with its
    defaults (``benchmarks/wmt_null_calibration.py defaults``, label ``defaults-unbiased``;
    the cells and campaigns above, 200 per cell at 8 and 20 systems and 100 at 30, 1,000
    resamples, SPA's inner tests with 100 permutations; Monte Carlo sd <= 2.3%, 3.2% at 30):
    the 94% percentile intervals of the difference (``extra["bootstrap"]``) covered
    0.900-1.000; the 94% HDIs of the posterior difference (``extra["posterior"]``) covered
    0.895-0.980 at 8 systems, 0.915-0.975 at 20 and 0.900-1.000 at 30 (KendallLike 100 of
    100 campaigns without a per-system error, at the band's top; 0.96-0.98 in every other
    cell). Two changes made the HDIs calibrated. (1) The Dirichlet: the flat one gives a
    weighted mean the posterior variance :math:`s^2 (S-1)/(S(S+1))` instead of
    :math:`s^2/S`; with it (label ``defaults-systems``, 200 resamples) the HDIs covered
    0.815-0.945 at 8 systems. (2) 1,000 draws instead of 200: the empirical 94% HDI of 200
    draws is too narrow; on the same 200 campaigns system Pearson's HDI covered 0.875 with
    200 draws and 0.905 (8 systems) and 0.92 (20) with 1,000. P(A beats B)
    (``extra["p_beats"]``) fell outside [0.025, 0.975] in 0-18% of null campaigns, most for
    system Pearson: it is the posterior probability of the order, not a 5% test; for
    significance read the paired bootstrap test (0-7% here).

    **The swap tests** (``pair_test="permutation"``) test exchangeability. Swapping single
    outputs is exact when each metric's errors are independent across outputs, but a
    per-system error of a metric is split by it; MTME's comparison swap (``scheme="pairs"``)
    also ignores that the comparisons sharing an output are dependent, so its null
    distribution is too narrow (:mod:`bayesmeta.wmt.ties`). In the null study above (60
    campaigns per cell, two-sided 5%) it rejected 17-48% of true nulls (200 campaigns: 14-36%)
    and SPA's score swap 13-25% with a per-system error (200 campaigns: 19-19.5%).
    ``scheme="pairs-items"`` swaps all comparisons of an item together (one coin per item,
    each metric keeping its threshold): with errors independent across outputs (the null
    of exchangeability; label ``swap-tests-plus-one``, 200 campaigns per cell, 200
    permutations, p = (b + 1)/(n + 1), two-sided 5%) it rejected 5.5%, 4.5% and 4.0% of
    true nulls at 8, 20 and 30 systems, against 12%, 34% and 38.5% for MTME's comparison
    swap; the score swaps rejected 0.5-7.5% (SPA 7.5% at 8 systems, 4-5% at 20-30) and the
    system swap of system Pearson 4.5-6.5%.

    The one-sided p-value is taken in the direction observed (MTME's convention), so
    ``alpha = 0.05`` is a two-sided 10% test.

    References
    ----------
    Freitag et al. (2021-2024), *Results of the WMT Metrics Shared Task*; Deutsch, Dror &
    Roth (2021), TACL 9; Owen (2007), *The pigeonhole bootstrap*, Ann. Appl. Stat. 1(2).

    Examples
    --------
    >>> import bayesmeta as bm
    >>> from bayesmeta.wmt.simulate import simulate_campaign
    >>> ds = simulate_campaign(n_systems=8, n_items=20, n_metrics=3, random_seed=0)
    >>> res = bm.significance_clusters(ds, "quality", random_seed=1,
    ...                                resampling={"n_permutations": 200, "n_resamples": 50})
    >>> res.matrix().shape
    (3, 3)
    """
    opts = wmt_resampling(resampling, default_unit(statistic), n_resamples=1000,
                          pvalue="raw")
    ci_prob = check_ci_prob(ci_prob)
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}.")
    test = pair_test if pair_test is not None else (
        "bootstrap" if opts.n_resamples else "permutation")
    if test not in PAIR_TESTS:
        raise ValueError(f"pair_test must be one of {', '.join(PAIR_TESTS)}, got "
                         f"{pair_test!r}.")
    if test == "bootstrap" and opts.n_resamples < 1:
        raise ValueError("pair_test='bootstrap' needs resampling n_resamples >= 1 (the "
                         "paired bootstrap draws); use pair_test='permutation' without them.")
    if opts.n_permutations < 1 and (test == "permutation" or statistic == "spa"):
        raise ValueError("resampling: n_permutations must be at least 1"
                         + (" (SPA's own system-pair tests)." if test == "bootstrap" else "."))
    x, z, labels, hs = inputs(data, trait, raters, human, metrics, run, reference)
    acc = statistic not in WMT_STATISTICS and split_measure(
        parse_measures(statistic)[0])[1] == "acc_eq"
    if test == "permutation" and opts.scheme in PAIR_SCHEMES and not acc:
        raise ValueError(f"resampling: scheme {opts.scheme!r} (swapping pairwise "
                         f"comparisons) is for tie-calibrated accuracy (acc_eq) only.")
    if test == "permutation" and (acc or statistic in WMT_STATISTICS
                                  ) and opts.scheme not in ("both", *PAIR_SCHEMES):
        raise ValueError(f"resampling: scheme {opts.scheme!r} is not available for "
                         f"{statistic}; use 'both'"
                         + (", 'pairs' or 'pairs-items'." if acc else "."))
    seed = resolve_seed(SPA_SEED if random_seed is None and statistic == "spa"
                        else random_seed)
    stat = _statistic(statistic, threshold, opts.n_permutations, seed, z.shape[1])
    res = evaluate(stat, data, x, z, labels, hs, estimand=statistic,
                   title=f"Significance clusters of metrics by {statistic}",
                   n_resamples=opts.n_resamples, unit=opts.unit, ci_prob=ci_prob,
                   seed=seed, info={}, dirichlet=opts.dirichlet)
    point = res.summary()["classical"].to_numpy()
    order = kernels.sort_order(point, labels)
    M = len(labels)
    eps, level = None, None
    if acc:
        level = split_measure(parse_measures(statistic)[0])[0]
        xx, zz, grouping = (x.mean(-1, keepdims=True), z.mean(-1, keepdims=True), "global"
                            ) if level == "system" else (x, z, _ACC_GROUPING[level])
        _, eps = ties.calibrate_ties(xx, zz, grouping=grouping)
    pair_draws = None
    if test == "bootstrap":
        pair_draws = draws(stat, x, z, "bootstrap", opts.n_resamples, seed + 3, "systems")
        sig = bootstrap_pvalues(point, pair_draws, order, z.shape[0])
    else:
        sig = _swap_significance(statistic, stat, acc, eps, x, z, order, opts, seed)
        if opts.pvalue == "plus-one":
            iu = np.triu_indices(M, 1)
            sig[iu] = (sig[iu] * opts.n_permutations + 1) / (opts.n_permutations + 1)
    clusters = np.empty(M, int)
    clusters[order] = kernels.assign_ranks(sig, alpha)
    details = res.details()
    details["cluster"] = clusters
    if eps is not None:
        details["epsilon"] = eps
    sorted_labels = [labels[k] for k in order]
    extra = dict(res.extra)
    extra["significance"] = xr.DataArray(sig, dims=("metric", "metric2"),
                                         coords={"metric": sorted_labels,
                                                 "metric2": sorted_labels})
    if pair_draws is not None:
        extra["pair_bootstrap"] = xr.DataArray(pair_draws, dims=("resample", "metric"),
                                               coords={"metric": list(labels)})
    info = dict(res.info)
    swapped = ("each pair's comparisons, ties calibrated per metric"
               if opts.scheme == "pairs" else
               f"each {'item' if level == 'within_item' else 'system'}'s comparisons "
               f"together, ties calibrated per metric"
               if opts.scheme == "pairs-items" else f"scores ({opts.scheme}), z-scored"
               + (", ties re-calibrated per permutation" if acc else ""))
    p_rule = "b/n" if opts.pvalue == "raw" else "(b+1)/(n+1)"
    info["test"] = (f"paired bootstrap-t (systems resampled, seed + 3, "
                    f"{opts.n_resamples} resamples; difference / its bootstrap sd against "
                    f"Student's t with {z.shape[0] - 1} df)" if test == "bootstrap" else
                    f"permutation (swap {swapped}; tests exchangeability), "
                    f"{opts.n_permutations} per pair, p = {p_rule}"
                    ) + f", significant at p <= {alpha:g}"
    return ClustersResult(res.summary(), title=res.title, info=info, details=details,
                          extra=extra, ci_prob=ci_prob, random_seed=seed,
                          data_hash=res.provenance.get("data_hash"),
                          notes=[*res.notes, "details(): cluster (1 = top significance "
                                             "cluster); matrix(): the p-values."],
                          **(interval_kinds(opts.unit, opts.dirichlet) if opts.n_resamples
                             else {}))
