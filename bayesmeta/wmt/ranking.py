r"""The overall metric ranking of the WMT24/WMT25 metrics task.

Protocol (MTME ``tasks.WMT24`` / ``tasks.WMT25``): for every language pair two *tasks*,
soft pairwise accuracy of the systems (system level) and tie-calibrated pairwise accuracy
within items (segment level, ``acc23`` averaged over segments, significance by swapping
pairwise comparisons); every task weighs the same. A metric's overall score is the weighted
mean of its task scores rescaled to [0, 1] (both are accuracies already):

.. math:: \bar s_m = \sum_k w_k\,s_{km},\qquad \sum_k w_k = 1.

Significance of :math:`\bar s_A - \bar s_B`: the tasks' permutation draws of the difference
(under the null of each task) are weighted and summed draw by draw, and the p-value is the
share of summed draws reaching the observed difference (MTME ``AverageCorrMatrix``);
clusters by :func:`~bayesmeta.wmt.kernels.assign_ranks`. Beside it, the posterior: the
weighted sum of the tasks' Bayesian-bootstrap draws (language pairs independent; the two
tasks of a language pair share their Dirichlet weights, Dirichlet((S - 2) / S) over the
systems by default: both tasks compare systems on the same items, see
:mod:`bayesmeta.wmt._common`), with P(A beats B) and each metric's rank distribution.

The default test of the overall score is not the protocol's: the permutation test above
(``pair_test="permutation"``) swaps the segment-level task's comparisons one by one and
rejects far more than 5% of true nulls; the default is the paired bootstrap over systems
(``pair_test="bootstrap"``, :func:`bayesmeta.wmt.clusters.bootstrap_pvalues`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayesmeta.correlation.comparison import _rank_probabilities
from bayesmeta.data import select
from bayesmeta.data.schema import LP_DIM, split_language_pairs
from bayesmeta.options import ResamplingOptions, resolve_seed
from bayesmeta.results import data_hash
from bayesmeta.summaries import CI_PROB, check_ci_prob
from bayesmeta.wmt import kernels, ties
from bayesmeta.wmt._common import (
    UNIT_WORDS,
    WMTResult,
    beats_matrix,
    default_unit,
    dirichlet_words,
    draws,
    inputs,
    interval_kinds,
    side_by_side,
    systems_posterior_note,
    wmt_resampling,
)
from bayesmeta.wmt.clusters import (
    PAIR_SCHEMES,
    PAIR_TESTS,
    _statistic,
    bootstrap_pvalues,
    swap_pvalues,
)

PROTOCOLS = ("wmt24", "wmt25")
TASKS = ("spa", "within_item_acc_eq")


class RankingResult(WMTResult):
    """The overall WMT ranking (see :func:`wmt_ranking`)."""

    def matrix(self) -> pd.DataFrame:
        """Significance matrix of the overall score (sorted by decreasing score)."""
        return self.extra["significance"].to_pandas()

    def tasks(self) -> pd.DataFrame:
        """Each task's classical score (rows: metrics, columns: tasks)."""
        return self.extra["task_scores"].to_pandas()


def _task(stat_name, x, z, n_perm, n_res, unit, seed, scheme, test="permutation",
          dirichlet="flat"):
    """Classical (M,), bootstrap and posterior draws (R, M), and the test's draws in data
    order: the permutation null draws (M, M, P) (i < j: difference i minus j), or with
    ``test="bootstrap"`` the paired bootstrap draws over systems (R, M), seed + 4 (shared
    by the tasks of a language pair)."""
    M = x.shape[0]
    order = np.arange(M)
    stat = _statistic(stat_name, 0.0, n_perm, seed, z.shape[1])
    if stat_name == "spa":
        point = stat(x, z, None, None)
    else:
        point, eps = ties.calibrate_ties(x, z, grouping="item")
    if test == "bootstrap":
        null = draws(stat, x, z, "bootstrap", n_res, seed + 4, "systems")
    elif stat_name == "spa":
        null = swap_pvalues(stat, x, z, order, n_perm, seed + 3)[1]
    elif scheme in PAIR_SCHEMES:
        agree, coef = ties.agreement(x, z, eps, grouping="item")
        null = ties.pair_swap_pvalues(agree, coef, order, n_perm, seed + 3,
                                      block=PAIR_SCHEMES[scheme])[1]
    else:
        null = swap_pvalues(lambda h, zh, a, b: ties.calibrated_accuracy(h, zh), x, z,
                            order, n_perm, seed + 3)[1]
    boot = draws(stat, x, z, "bootstrap", n_res, seed + 1, unit) if n_res else None
    post = (draws(stat, x, z, "bayesian", n_res, seed + 2, unit, dirichlet=dirichlet)
            if n_res else None)
    return np.asarray(point, float), boot, post, null


def wmt_ranking(
    data: xr.Dataset | Mapping[str, xr.Dataset],
    trait: str | None = None,
    *,
    protocol: str = "wmt24",
    metrics: Sequence[str] | None = None,
    alpha: float = 0.05,
    pair_test: str | None = None,
    resampling: ResamplingOptions | dict[str, Any] | None = None,
    ci_prob: float = CI_PROB,
    random_seed: int | None = None,
) -> RankingResult:
    r"""Rank metrics overall as the WMT24/WMT25 metrics task does, with posteriors.

    Parameters
    ----------
    data : Dataset or dict of str to Dataset
        One language pair, a campaign of several with the dim ``lp`` (from
        :func:`bayesmeta.read_mtme` with ``lp=[...]`` or
        :func:`bayesmeta.wmt.simulate_campaign`; split by
        :func:`bayesmeta.split_language_pairs`), or several datasets keyed by language
        pair; every output of a pair scored by every metric.
    trait : str
        The human score (e.g. ``"mqm"``), the same name in every language pair.
    protocol : {"wmt24", "wmt25"}
        Both weigh SPA (system level) and tie-calibrated accuracy within items (segment
        level) of every language pair equally; they differ only in MTME's default language
        pairs, which the data decide here.
    metrics : list of str, optional
        Default: the metrics present in every language pair.
    alpha : float
        Significance level of the clusters.
    pair_test : {"bootstrap", "permutation"}, optional
        The overall score's test; default ``"bootstrap"`` when ``n_resamples`` >= 1, else
        ``"permutation"``. ``"permutation"`` (the WMT24/25 protocol, MTME's): the
        tasks' swap-test null draws summed; it tests exchangeability, and MTME's comparison
        swap of the segment-level task rejects far more than ``alpha`` of true nulls
        (:func:`bayesmeta.significance_clusters`, Notes). ``"bootstrap"``: the paired
        bootstrap over systems, the tasks' draws weighted and summed draw by draw (the two
        tasks of a language pair on the same system resample), p as in
        :func:`bayesmeta.wmt.clusters.bootstrap_pvalues` (t with the smallest language
        pair's number of systems less one as df): tests equal expected overall score; it
        needs ``n_resamples`` >= 1.
    resampling : ResamplingOptions or dict, optional
        ``n_permutations`` (per task and pair, default 1000; also SPA's inner tests),
        ``n_resamples`` (bootstrap and posterior draws per task, default 1000), ``unit``
        (what the intervals and the posterior resample, default ``"systems"``: both tasks
        compare systems on the same items, see :mod:`bayesmeta.wmt._common`), ``scheme``
        of the segment-level test: ``"pairs"`` (default, WMT24/25's swapping of
        comparisons, anti-conservative: see :mod:`bayesmeta.wmt.ties`),
        ``"pairs-items"`` (each item's comparisons swapped together) or ``"both"`` (swap
        scores, re-calibrate the thresholds), ``dirichlet`` (the Bayesian
        bootstrap's, default ``"unbiased"``: see :mod:`bayesmeta.wmt._common`).
    random_seed : int, optional
        Language pair k uses ``random_seed + 10 k`` (SPA's inner permutations; + 1
        bootstrap, + 2 Bayesian bootstrap, + 3 permutation tests, + 4 the paired bootstrap
        test).

    Returns
    -------
    RankingResult
        ``summary()`` index ``(estimand="<protocol>_score", trait, metric)``;
        ``details()``: ``rank``, ``cluster``, ``p_best``; ``matrix()``: the overall
        significance matrix; ``tasks()``: every task's score; ``extra``: ``p_beats``,
        ``rank_probability`` (the posterior rank distribution).

    Notes
    -----
    MTME stops a task's permutations early (blocks of 100, when p < 0.02 or > 0.5); here
    every permutation runs, which changes only p-values far from ``alpha``.

    References
    ----------
    Freitag et al. (2024), *Are LLMs Breaking MT Metrics? Results of the WMT24 Metrics
    Shared Task*; MTME ``tasks.WMT24``, ``TaskSetResults.AverageCorrMatrix``.

    Examples
    --------
    >>> import bayesmeta as bm
    >>> from bayesmeta.wmt.simulate import simulate_campaign
    >>> data = {"en-de": simulate_campaign(6, 20, 3, random_seed=1),
    ...         "ja-zh": simulate_campaign(6, 20, 3, random_seed=2)}
    >>> res = bm.wmt_ranking(data, "quality", random_seed=0,
    ...                      resampling={"n_permutations": 100, "n_resamples": 20})
    >>> res.tasks().shape
    (3, 4)
    """
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol must be one of {', '.join(PROTOCOLS)}, got {protocol!r}.")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}.")
    # both tasks (SPA, acc_eq within items) compare systems on the same items
    opts = wmt_resampling(resampling, default_unit("spa"), n_resamples=1000, scheme="pairs")
    if opts.scheme not in ("both", *PAIR_SCHEMES):
        raise ValueError(f"resampling: scheme must be 'pairs' (WMT24/25), 'pairs-items' or "
                         f"'both', got {opts.scheme!r}.")
    ci_prob = check_ci_prob(ci_prob)
    if pair_test is None:
        pair_test = "bootstrap" if opts.n_resamples else "permutation"
    if pair_test not in PAIR_TESTS:
        raise ValueError(f"pair_test must be one of {', '.join(PAIR_TESTS)}, got "
                         f"{pair_test!r}.")
    if pair_test == "bootstrap" and opts.n_resamples < 1:
        raise ValueError("pair_test='bootstrap' needs resampling n_resamples >= 1.")
    if isinstance(data, xr.Dataset) and LP_DIM in data.dims:
        sets = split_language_pairs(data)
    elif isinstance(data, xr.Dataset):
        sets = {str(data.attrs.get("lp", "lp")): data}
    else:
        sets = dict(data)
    if not sets:
        raise ValueError("data: no language pair given.")
    lps = sorted(sets)
    if metrics is None:
        common = set.intersection(*({str(m) for m in sets[lp]["metric"].values}
                                    for lp in lps))
        metrics = [str(m) for m in sets[lps[0]]["metric"].values if str(m) in common]
        if len(metrics) < 2:
            raise ValueError("metrics: fewer than 2 metrics are present in every language "
                             "pair.")
    labels = list(metrics)
    seed = resolve_seed(random_seed)
    n_tasks = len(lps) * len(TASKS)
    w = 1.0 / n_tasks
    score = np.zeros(len(labels))
    null = 0.0
    boot = post = 0.0
    task_scores, task_names = [], []
    for k, lp in enumerate(lps):
        x, z, _, _ = inputs(sets[lp], trait, None, None, labels, None, "first")
        for name in TASKS:
            pt, bt, ps, nl = _task(name, x, z, opts.n_permutations, opts.n_resamples,
                                   opts.unit, seed + 10 * k, opts.scheme, pair_test,
                                   opts.dirichlet)
            score = score + w * pt
            null = null + w * nl.astype(float)
            if opts.n_resamples:
                boot, post = boot + w * bt, post + w * ps
            task_scores.append(pt)
            task_names.append(f"{lp}:{'sys:spa' if name == 'spa' else 'seg:acc_eq'}")
    M = len(labels)
    order = kernels.sort_order(score, labels)
    if pair_test == "bootstrap":
        # the systems resampled: the smallest language pair's count sets the t's df
        n_sys = min(int(sets[lp].sizes["system"]) for lp in lps)
        sig = bootstrap_pvalues(score, null, order, n_sys)
    else:
        sig = np.zeros((M, M))
        for a in range(M):
            for b in range(a + 1, M):
                i, j = order[a], order[b]
                d = null[i, j] if i < j else -null[j, i]  # null draws of score_i - score_j
                sig[a, b] = np.mean(d >= score[i] - score[j] - 1e-12)
    clusters = np.empty(M, int)
    clusters[order] = kernels.assign_ranks(sig, alpha)
    rank = np.empty(M, int)
    rank[order] = np.arange(1, M + 1)
    human = select.human_score(sets[lps[0]], trait).trait
    idx = pd.MultiIndex.from_product([[f"{protocol}_score"], [human], labels],
                                     names=["estimand", "trait", "metric"])
    table = pd.DataFrame({"classical": score}, index=idx)
    details = pd.DataFrame({"rank": rank, "cluster": clusters}, index=idx)
    sorted_labels = [labels[i] for i in order]
    extra: dict[str, Any] = {
        "significance": xr.DataArray(sig, dims=("metric", "metric2"),
                                     coords={"metric": sorted_labels,
                                             "metric2": sorted_labels}),
        "task_scores": xr.DataArray(np.array(task_scores).T, dims=("metric", "task"),
                                    coords={"metric": labels, "task": task_names}),
    }
    kinds: dict[str, Any] = {}
    info = {"protocol": f"{protocol}: SPA (system) and acc_eq within items (segment) per "
                        f"language pair, {n_tasks} tasks weighted equally",
            "language pairs": ", ".join(lps),
            "test": (f"paired bootstrap-t over systems, the tasks' draws summed, "
                     f"{opts.n_resamples} resamples" if pair_test == "bootstrap" else
                     f"tasks' permutation draws summed, {opts.n_permutations} per pair "
                     f"(segment level: scheme {opts.scheme!r}; tests exchangeability)")
            + f", significant at p <= {alpha:g}"}
    if opts.n_resamples:
        bda = xr.DataArray(boot, dims=("resample", "metric"), coords={"metric": labels})
        pda = xr.DataArray(post, dims=("resample", "metric"), coords={"metric": labels})
        side_by_side(table, boot, post, ci_prob)
        beats = beats_matrix(post)
        ranks = _rank_probabilities(post[:, :, None])[0]
        details["p_best"] = ranks[:, 0]
        extra.update(
            bootstrap=bda, posterior=pda,
            p_beats=xr.DataArray(beats, dims=("metric", "metric2"),
                                 coords={"metric": labels, "metric2": labels}),
            rank_probability=xr.DataArray(ranks, dims=("metric", "rank"),
                                          coords={"metric": labels,
                                                  "rank": np.arange(1, M + 1)}))
        words = UNIT_WORDS[opts.unit]
        info["classical interval"] = (f"{ci_prob:.0%} percentile bootstrap over {words} "
                                      f"(the tasks' draws summed), {opts.n_resamples} "
                                      f"resamples")
        info["posterior"] = (f"weighted sum of the tasks' Bayesian-bootstrap draws "
                             f"({dirichlet_words(opts.dirichlet, opts.unit)} {words}), "
                             f"{opts.n_resamples} draws")
        kinds = interval_kinds(opts.unit, opts.dirichlet)
    return RankingResult(
        table, title=f"Overall metric ranking ({protocol.upper()} protocol)", info=info,
        details=details, extra=extra, ci_prob=ci_prob, random_seed=seed,
        data_hash=data_hash(xr.concat([sets[lp]["score"].isel(run=0).sum(("system", "item"))
                                       for lp in lps], "lp", join="outer")),
        notes=["details(): rank (overall score), cluster (1 = top), p_best; matrix(): "
               "p-values; tasks(): each task's score; extra['rank_probability']: posterior "
               "rank distribution.",
               *systems_posterior_note(opts.unit, opts.n_resamples, opts.dirichlet)],
        **kinds)
