r"""The statistics of the WMT metrics shared task, classical and Bayesian.

Each function takes the data first and returns a :class:`~bayesmeta.wmt._common.WMTResult`:
``summary()`` with the classical value (computed as Google's mt-metrics-eval computes it),
its percentile bootstrap interval and the Bayesian-bootstrap posterior (mean, sd, HDI) per
metric; ``details()`` with the rank and the posterior probability of being best;
``extra["p_beats"]`` with P(metric beats metric2). Resampling weights come from the one
resampling engine (:mod:`bayesmeta.correlation.resampling`); every statistic is evaluated
exactly on the weights (a resampled output counts its weight, a pair the product). The
statistics that compare systems on the same items resample the systems by default, both
in the bootstrap and in the Bayesian bootstrap (:mod:`bayesmeta.wmt._common` says why).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayesmeta.data import select
from bayesmeta.options import ResamplingOptions, resolve_seed
from bayesmeta.results import Result, data_hash
from bayesmeta.summaries import CI_PROB, check_ci_prob
from bayesmeta.wmt import kernels
from bayesmeta.wmt._common import (
    UNIT_WORDS,
    WMTResult,
    beats_matrix,
    default_unit,
    draws,
    evaluate,
    inputs,
    interval_kinds,
    measure_statistic,
    posterior_text,
    side_by_side,
    spa_statistic,
    systems_posterior_note,
    wmt_resampling,
)

#: MTME's default seed of SPA's permutations (``pce.compute_pairwise_p_values(seed=4)``).
SPA_SEED = 4


def soft_pairwise_accuracy(
    data: xr.Dataset,
    trait: str | None = None,
    *,
    raters: str | Sequence[str] | None = None,
    human: xr.DataArray | None = None,
    metrics: Sequence[str] | None = None,
    run: Any = None,
    reference: Any = "first",
    resampling: ResamplingOptions | dict[str, Any] | None = None,
    ci_prob: float = CI_PROB,
    random_seed: int | None = SPA_SEED,
) -> WMTResult:
    r"""Soft pairwise accuracy (SPA) of every metric against the human score.

    For every pair of systems (s, t), a one-sided paired permutation test over items gives
    the p-value :math:`p_{st}` that s is better than t, once from the human scores and once
    from the metric's; SPA is one minus the mean absolute difference of the two p-values,

    .. math:: \mathrm{SPA} = 1 - \binom{S}{2}^{-1}\sum_{s<t} |p^h_{st} - p^m_{st}|,

    so a metric earns credit for agreeing with the humans' *confidence*, not only the
    direction (1 - pairwise confidence error, Thompson et al. 2024).

    Parameters
    ----------
    data : xarray.Dataset
    trait, raters, human, metrics, run, reference :
        The human score and metric scores (as in :func:`bayesmeta.correlations`); every
        output must be scored.
    resampling : ResamplingOptions or dict, optional
        ``n_permutations`` (permutations of each system pair's test, default 1000),
        ``n_resamples`` (bootstrap resamples and Bayesian-bootstrap draws, default 1000;
        0 for the classical value only), ``unit`` (what the bootstrap resamples and the
        Bayesian bootstrap weighs; default ``"systems"``: SPA compares systems on the same
        items, so items resampled as well would count the output-level noise more than
        once, see :mod:`bayesmeta.wmt._common`), ``dirichlet`` (the Bayesian bootstrap's,
        default ``"unbiased"``: Dirichlet((S - 2) / S) over the systems).
    ci_prob : float
    random_seed : int, optional
        Seed of the permutations; the default 4 is MTME's, so the classical SPA equals
        MTME's exactly. The bootstrap uses ``random_seed + 1``, the Bayesian bootstrap
        ``random_seed + 2``.

    Returns
    -------
    WMTResult
        ``summary()`` index ``(estimand="spa", trait, metric)``.

    Notes
    -----
    The permutation signs are drawn as the reference implementation draws them (float32
    uniforms from ``numpy.random.default_rng(seed)`` rounded to 0/1) and the classical sums
    are float32 as there, so ties between permuted and observed differences (frequent with
    discrete human scores) resolve identically. Under resampling weights (float64) a
    system's score is :math:`\sum_i b_i x_{si}`, the permuted one :math:`\sum_i m_i b_i
    x_{si}` with the same signs, and a system pair weighs :math:`a_s a_t`.

    R equivalent: none packaged; the p-values are those of a paired sign-flip test.

    References
    ----------
    Thompson, Mathur, Freitag et al. (2024), *Improving Statistical Significance in Human
    Evaluation of Automatic Metrics via Soft Pairwise Accuracy*, WMT 2024.

    Examples
    --------
    >>> import bayesmeta as bm
    >>> from bayesmeta.wmt.simulate import simulate_campaign
    >>> ds = simulate_campaign(n_systems=5, n_items=20, n_metrics=2, random_seed=0)
    >>> res = bm.soft_pairwise_accuracy(ds, "quality",
    ...                                 resampling={"n_resamples": 20, "n_permutations": 100})
    >>> bool(((res.summary()["classical"] > 0) & (res.summary()["classical"] <= 1)).all())
    True
    """
    opts = wmt_resampling(resampling, default_unit("spa"), n_resamples=1000)
    ci_prob = check_ci_prob(ci_prob)
    if opts.n_permutations < 1:
        raise ValueError("resampling: n_permutations must be at least 1 for SPA's tests.")
    x, z, labels, hs = inputs(data, trait, raters, human, metrics, run, reference)
    seed = resolve_seed(random_seed)
    stat = spa_statistic(kernels.permutation_signs(opts.n_permutations, z.shape[1], seed))
    return evaluate(stat, data, x, z, labels, hs, estimand="spa",
                    title="Soft pairwise accuracy (1 - pairwise confidence error)",
                    n_resamples=opts.n_resamples, unit=opts.unit, dirichlet=opts.dirichlet,
                    ci_prob=ci_prob,
                    seed=seed, info={"permutations": f"{opts.n_permutations} per system "
                                                     f"pair (seed {seed})"})


def pairwise_difference_pearson(
    data: xr.Dataset,
    trait: str | None = None,
    *,
    grouping: str = "item",
    raters: str | Sequence[str] | None = None,
    human: xr.DataArray | None = None,
    metrics: Sequence[str] | None = None,
    run: Any = None,
    reference: Any = "first",
    resampling: ResamplingOptions | dict[str, Any] | None = None,
    ci_prob: float = CI_PROB,
    random_seed: int | None = None,
) -> WMTResult:
    r"""Pairwise Difference Pearson (PDP) of every metric with the human score.

    Pearson's r between the human and the metric *differences* of every ordered pair of
    outputs in the same group: :math:`r\big((z_s - z_t)_{s,t,g}, (x_s - x_t)_{s,t,g}\big)`.
    The differences have mean 0, so

    .. math:: \mathrm{PDP} = \frac{\sum_g c_g(z, x)}{\sqrt{\sum_g c_g(z, z)
              \sum_g c_g(x, x)}}, \quad c_g(u, v) = n_g \sum_k u_k v_k
              - \sum_k u_k \sum_k v_k

    over the members k of group g; it ignores each group's level (like a within-group
    correlation) but pools the groups' spreads (unlike an average of them).

    Parameters
    ----------
    grouping : {"item", "system", "global"}
        Pairs within each item (the default, MTME's ``average_by="item"``: systems compared
        on the same segment), within each system, or across all outputs.
    resampling : ResamplingOptions or dict, optional
        ``n_resamples`` (default 1000), ``unit`` (what the bootstrap resamples and the
        Bayesian bootstrap weighs): default ``"systems"`` with ``grouping="item"`` (pairs
        of systems on the same segment: an item's level cancels), ``"both"`` with
        ``"system"`` or ``"global"`` (the items' levels are part of the pairs compared);
        see :mod:`bayesmeta.wmt._common`; ``dirichlet`` (the Bayesian bootstrap's: default
        ``"unbiased"``, Dirichlet((k - 2) / k) over k systems or items; flat over both).
    random_seed : int, optional
        Seed of the bootstrap (``+ 1``) and Bayesian bootstrap (``+ 2``).

    Other parameters as in :func:`soft_pairwise_accuracy`; outputs without a human score
    are left out of every pair.

    Returns
    -------
    WMTResult
        ``summary()`` index ``(estimand="pdp", trait, metric)``.

    Notes
    -----
    MTME: ``stats.Correlation(...).Pearson(average_by="item", pdp=True)``.
    R equivalent: ``cor(outer(z, z, "-"), outer(x, x, "-"))`` stacked over groups.

    References
    ----------
    Lo et al. / WMT24 metrics task (Freitag et al. 2024), Sec. on meta-evaluation; MTME
    ``stats.AverageCorrelation._enumerate_pairwise_diffs``.

    Examples
    --------
    >>> import bayesmeta as bm
    >>> from bayesmeta.wmt.simulate import simulate_campaign
    >>> ds = simulate_campaign(n_systems=5, n_items=20, n_metrics=2, random_seed=0)
    >>> res = bm.pairwise_difference_pearson(ds, "quality", resampling={"n_resamples": 50})
    >>> res.summary().shape[0]
    2
    """
    kernels.grouped(np.zeros((1, 1)), grouping)
    opts = wmt_resampling(resampling, default_unit("pdp", grouping), n_resamples=1000)
    ci_prob = check_ci_prob(ci_prob)
    x, z, labels, hs = inputs(data, trait, raters, human, metrics, run, reference,
                              complete=False)
    seed = resolve_seed(random_seed)

    def stat(xx, zz, a, b):
        return kernels.pairwise_difference_pearson(xx, zz, grouping=grouping, a=a, b=b)

    return evaluate(stat, data, x, z, labels, hs, estimand="pdp",
                    title=f"Pairwise Difference Pearson (pairs within each {grouping})"
                    if grouping != "global" else "Pairwise Difference Pearson (all pairs)",
                    n_resamples=opts.n_resamples, unit=opts.unit, dirichlet=opts.dirichlet,
                    ci_prob=ci_prob,
                    seed=seed, info={"grouping": grouping})


def kendall_like(
    data: xr.Dataset,
    trait: str | None = None,
    *,
    threshold: float = 25.0,
    grouping: str = "item",
    raters: str | Sequence[str] | None = None,
    human: xr.DataArray | None = None,
    metrics: Sequence[str] | None = None,
    run: Any = None,
    reference: Any = "first",
    resampling: ResamplingOptions | dict[str, Any] | None = None,
    ci_prob: float = CI_PROB,
    random_seed: int | None = None,
) -> WMTResult:
    r"""WMT's Kendall-like tau of relative-ranking DA (WMT17-WMT20 segment level).

    Pairs of outputs in the same group whose human scores differ by at least ``threshold``
    (25 points of DA in WMT) are *concordant* when the metric orders them as the humans,
    *discordant* otherwise (a metric tie is discordant):

    .. math:: \tau = \frac{|\mathrm{Concordant}| - |\mathrm{Discordant}|}
              {|\mathrm{Concordant}| + |\mathrm{Discordant}|},

    pooled over the groups (each group weighted by its number of pairs, as MTME's
    ``KendallLike`` averaged with ``macro=False``).

    Parameters
    ----------
    threshold : float
        Minimum human-score difference of a counted pair (in the human score's units).
    grouping : {"item", "system", "global"}
        Pairs within each item (default; WMT's "relative ranking" of translations of the
        same segment), within each system, or across all outputs.

    Other parameters as in :func:`pairwise_difference_pearson`.

    Returns
    -------
    WMTResult
        ``summary()`` index ``(estimand="kendall_like", trait, metric)``; NaN where no pair
        is counted (MTME reports 0).

    Notes
    -----
    With ``threshold=0`` pairs tied in the human score count and are discordant, as in WMT20
    and MTME (a deliberate inconsistency there). R equivalent: none packaged.

    References
    ----------
    Ma, Wei, Bojar & Graham (2019), *Results of the WMT19 Metrics Shared Task*, Sec. 2.3;
    Mathur et al. (2020), WMT20 metrics task.

    Examples
    --------
    >>> import bayesmeta as bm
    >>> from bayesmeta.wmt.simulate import simulate_campaign
    >>> ds = simulate_campaign(n_systems=5, n_items=20, n_metrics=2, random_seed=0)
    >>> res = bm.kendall_like(ds, "quality", resampling={"n_resamples": 0})
    >>> bool((res.summary()["classical"].abs() <= 1).all())
    True
    """
    kernels.grouped(np.zeros((1, 1)), grouping)
    opts = wmt_resampling(resampling, default_unit("kendall_like", grouping),
                          n_resamples=1000)
    ci_prob = check_ci_prob(ci_prob)
    if not np.isfinite(threshold) or threshold < 0:
        raise ValueError(f"threshold must be a non-negative number, got {threshold!r}.")
    x, z, labels, hs = inputs(data, trait, raters, human, metrics, run, reference,
                              complete=False)
    seed = resolve_seed(random_seed)

    def stat(xx, zz, a, b):
        return kernels.kendall_like(xx, zz, grouping=grouping, threshold=threshold, a=a, b=b)

    return evaluate(stat, data, x, z, labels, hs, estimand="kendall_like",
                    title="WMT Kendall-like tau (relative-ranking DA)",
                    n_resamples=opts.n_resamples, unit=opts.unit, dirichlet=opts.dirichlet,
                    ci_prob=ci_prob,
                    seed=seed, info={"grouping": grouping, "threshold": f"{threshold:g}"})


class WilliamsResult(Result):
    """Williams' tests of every pair of metrics (see :func:`williams_test`)."""

    def p_beats(self) -> pd.DataFrame:
        """Square table: posterior P(row metric's Pearson r beats the column metric's)."""
        return self.extra["p_beats"].to_pandas()


def williams_test(
    data: xr.Dataset,
    trait: str | None = None,
    *,
    level: str = "system",
    raters: str | Sequence[str] | None = None,
    human: xr.DataArray | None = None,
    metrics: Sequence[str] | None = None,
    run: Any = None,
    reference: Any = "first",
    resampling: ResamplingOptions | dict[str, Any] | None = None,
    ci_prob: float = CI_PROB,
    random_seed: int | None = None,
) -> WilliamsResult:
    r"""Williams' test of the difference between two metrics' Pearson correlations with
    the human score, for every pair of metrics, beside its bootstrap interval and
    Bayesian-bootstrap posterior.

    The correlations share the human score, so they are dependent; Williams' t (see
    :func:`bayesmeta.wmt.kernels.williams_pvalue`) uses :math:`r_{23}`, the metrics'
    correlation with each other, on :math:`n - 3` degrees of freedom (n systems at the
    system level, n outputs globally). The p-value is one-sided for the direction observed
    (WMT's convention, MTME's ``WilliamsSigDiff``).

    Parameters
    ----------
    level : {"system", "global"}
        Pearson's r of the system means (WMT's system level) or of all outputs.
    resampling : ResamplingOptions or dict, optional
        ``n_resamples`` (default 1000), ``unit`` (what the bootstrap resamples and the
        Bayesian bootstrap weighs): default ``"systems"`` at the system level (the system
        means' correlation: an item effect shifts every system alike), ``"both"`` at the
        global level (a correlation over all outputs, to which the items' levels
        contribute); see :mod:`bayesmeta.wmt._common`; ``dirichlet`` (the Bayesian
        bootstrap's: default ``"unbiased"``, Dirichlet((k - 2) / k) over k systems or items;
        flat over both).
    random_seed : int, optional
        Seed of the Bayesian bootstrap; the bootstrap uses ``random_seed + 1``.

    Returns
    -------
    WilliamsResult
        ``summary()`` index ``(estimand="difference", measure, trait, metric, metric2)``:
        the difference of Pearson's r (``metric`` minus ``metric2``), classical and
        posterior; ``details()``: ``r_metric``, ``r_metric2``, ``r_metrics`` (their
        correlation), ``n``, ``pvalue`` (Williams, one-sided) and ``p_beats``.

    Notes
    -----
    R equivalent: ``psych::r.test(n, r12, r13, r23)`` (its t for dependent correlations is
    Williams' / Steiger's); ``cocor::cocor.dep.groups.overlap(..., test = "williams1959")``.

    References
    ----------
    Williams (1959), *Regression Analysis*; Steiger (1980), Psychol. Bull. 87(2); Graham &
    Baldwin (2014), *Testing for Significance of Increased Correlation with Human
    Judgment*, EMNLP.

    Examples
    --------
    >>> import bayesmeta as bm
    >>> from bayesmeta.wmt.simulate import simulate_campaign
    >>> ds = simulate_campaign(n_systems=8, n_items=20, n_metrics=3, random_seed=0)
    >>> res = bm.williams_test(ds, "quality", resampling={"n_resamples": 50}, random_seed=1)
    >>> len(res.details())
    3
    """
    if level not in ("system", "global"):
        raise ValueError(f"level must be 'system' or 'global', got {level!r}.")
    opts = wmt_resampling(resampling, default_unit(f"{level}_pearson"), n_resamples=1000)
    ci_prob = check_ci_prob(ci_prob)
    x, z, labels, hs = inputs(data, trait, raters, human, metrics, run, reference)
    M = len(labels)
    if M < 2:
        raise ValueError("metrics: at least two metrics are needed for Williams' test.")
    if opts.n_resamples and opts.n_resamples < 10:
        raise ValueError(f"resampling: n_resamples must be 0 or at least 10, got "
                         f"{opts.n_resamples}.")
    seed = resolve_seed(random_seed)
    u, v = (x.mean(-1), z.mean(-1)) if level == "system" else (
        x.reshape(M, -1), z.ravel())
    n = v.shape[0]
    r = np.corrcoef(np.vstack([v, u]))                     # 0: human, 1..M: metrics
    pairs = [(i, j) for i in range(M) for j in range(i + 1, M)]
    ia, ib = np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])
    r1, r2, r12 = r[0, 1 + ia], r[0, 1 + ib], r[1 + ia, 1 + ib]
    pval = kernels.williams_pvalue(r1, r2, r12, n)
    measure = f"{level}_pearson"
    idx = pd.MultiIndex.from_tuples(
        [("difference", measure, hs.trait, labels[i], labels[j]) for i, j in pairs],
        names=["estimand", "measure", "trait", "metric", "metric2"])
    table = pd.DataFrame({"classical": r1 - r2}, index=idx)
    details = pd.DataFrame({"r_metric": r1, "r_metric2": r2, "r_metrics": r12,
                            "n": np.full(len(pairs), n), "pvalue": pval}, index=idx)
    extra: dict[str, Any] = {}
    kinds: dict[str, Any] = {}
    info = {"data": select.describe(data), "human": hs.label, "level": level,
            "test": "Williams (1959), one-sided for the direction observed"}
    if opts.n_resamples:
        stat = measure_statistic(measure)
        post = draws(stat, x, z, "bayesian", opts.n_resamples, seed, opts.unit,
                     dirichlet=opts.dirichlet)
        boot = draws(stat, x, z, "bootstrap", opts.n_resamples, seed + 1, opts.unit)
        side_by_side(table, boot[:, ia] - boot[:, ib], post[:, ia] - post[:, ib], ci_prob)
        beats = beats_matrix(post)
        details["p_beats"] = beats[ia, ib]
        extra = {"p_beats": xr.DataArray(beats, dims=("metric", "metric2"),
                                         coords={"metric": labels, "metric2": labels}),
                 "posterior": xr.DataArray(post, dims=("resample", "metric"),
                                           coords={"metric": labels})}
        info["classical interval"] = (f"{ci_prob:.0%} percentile bootstrap over "
                                      f"{UNIT_WORDS[opts.unit]}, {opts.n_resamples} "
                                      f"resamples")
        info["posterior"] = posterior_text(opts.unit, opts.n_resamples, opts.dirichlet)
        kinds = interval_kinds(opts.unit, opts.dirichlet)
    return WilliamsResult(table, title="Williams' test of dependent correlations",
                          info=info, details=details, extra=extra, ci_prob=ci_prob,
                          random_seed=seed, data_hash=data_hash(data),
                          notes=["details(): pvalue (Williams, one-sided) and p_beats "
                                 "(posterior P(metric beats metric2)).",
                                 *systems_posterior_note(opts.unit, opts.n_resamples,
                                                         opts.dirichlet)],
                          **kinds)
