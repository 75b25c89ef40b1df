r"""How well do metrics agree with humans, and which metric is better? The public API.

:func:`correlations` tabulates the correlation measures of every metric (paper 001's 12 by
default) with a classical bootstrap interval and a Bayesian-bootstrap posterior side by side.
:func:`compare_metrics` gives, for every pair of metrics and every measure, the difference
of the measure with its bootstrap interval and Bayesian-bootstrap posterior, the
permutation p-value of the difference (Deutsch et al. 2021) and the posterior probability
that one metric beats the other, and each metric's posterior rank distribution.

Both return the table shape of :mod:`bayesmeta.summaries`: the measure (or the
difference) is the ``estimand``; p-values, probabilities and counts are in ``details()``.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayesmeta.correlation.measures import measure_draws, parse_measures
from bayesmeta.correlation.resampling import (
    bayesian_bootstrap,
    bootstrap,
    calibration_note,
    percentile_interval,
    permutation_test,
)
from bayesmeta.data import select
from bayesmeta.data.schema import validate
from bayesmeta.options import ResamplingOptions, resolve_seed
from bayesmeta.results import Result, data_hash
from bayesmeta.summaries import CI_PROB, check_ci_prob, summarize


def _inputs(data, trait, raters, human, metrics, run, reference
            ) -> tuple[xr.DataArray, np.ndarray, select.HumanScore]:
    """Metric scores (metric, system, item), the human score as an (S, I) array, and its
    description, from the one selection layer (:mod:`bayesmeta.data.select`)."""
    validate(data, warn_missing=False)
    scores = select.metric_scores(data, metrics, run=run, reference=reference)
    hs = select.human_score(data, trait, raters=raters, human=human)
    z = np.asarray(hs.values.transpose("system", "item").values, dtype=float)
    return scores, z, hs


def _why_undefined(xm: np.ndarray, z: np.ndarray, name: str) -> str:
    """Why measure ``name`` of one metric's scores ``xm`` (S, I) against the human score
    ``z`` (S, I) has no value: the first failing condition, over the groups the measure
    correlates within (the system means, all outputs, each item, each system)."""
    ok = np.isfinite(xm) & np.isfinite(z)
    xx, zz = np.where(ok, xm, np.nan), np.where(ok, z, np.nan)
    if name.startswith("system_"):
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            groups = [(np.nanmean(xx, axis=1), np.nanmean(zz, axis=1))]
        where = "across system means"
    elif name.startswith("global_"):
        groups, where = [(xx.ravel(), zz.ravel())], "across all outputs"
    elif name.startswith("within_item_"):
        groups, where = list(zip(xx.T, zz.T, strict=True)), "within every item"
    else:
        groups, where = list(zip(xx, zz, strict=True)), "within every system"
    causes = []
    for a, b in groups:
        keep = np.isfinite(a) & np.isfinite(b)
        if keep.sum() < 2:
            causes.append("fewer than 2 outputs with both scores")
        elif np.ptp(a[keep]) == 0:
            causes.append("the metric is constant")
        elif np.ptp(b[keep]) == 0:
            causes.append("the human score is constant")
        else:
            causes.append("")
    named = [c for c in causes if c]
    if not named:
        return f"undefined {where} (ties or missing values)"
    common = max(set(named), key=named.count)
    return f"{common} {where}" if len(groups) == 1 else \
        f"{common} {where} where it is undefined ({len(named)} of {len(groups)} groups)"


def undefined_notes(x: np.ndarray, z: np.ndarray, names: Sequence[str], point: np.ndarray,
                    labels: Sequence[str], *, limit: int = 12) -> list[str]:
    """One note per (measure, metric) whose classical value is NaN, saying why (issue 21:
    no silent NaN); beyond ``limit`` rows the rest are counted."""
    rows = np.argwhere(np.isnan(point))  # (metric, measure) index pairs, metric-major
    notes = [f"{names[k]} of {labels[m]} cannot be computed: "
             f"{_why_undefined(x[m], z, names[k])}."
             for m, k in rows[:limit]]
    if len(rows) > limit:
        notes.append(f"... and {len(rows) - limit} more (measure, metric) rows without a "
                     f"value (NaN in summary()).")
    return notes


class CorrelationsResult(Result):
    """Correlation measures of metrics with a human score (see :func:`correlations`)."""

    def table(self, column: str = "classical") -> pd.DataFrame:
        """Wide table: one row per metric, one column per measure, values of ``column``."""
        col = self._table[column]
        order = list(dict.fromkeys(col.index.get_level_values("estimand")))
        metrics = list(dict.fromkeys(col.index.get_level_values("metric")))
        t = col.droplevel("trait").unstack("estimand")
        t.columns.name = "measure"
        return t.loc[metrics, order]


def correlations(
    data: xr.Dataset,
    trait: str | None = None,
    *,
    measures: str | Sequence[str] = "all",
    raters: str | Sequence[str] | None = None,
    human: xr.DataArray | None = None,
    metrics: Sequence[str] | None = None,
    run: Any = None,
    reference: Any = "first",
    kendall_variant: str = "b",
    resampling: ResamplingOptions | dict[str, Any] | None = None,
    ci_prob: float = CI_PROB,
    random_seed: int | None = None,
    progress: bool | None = None,
) -> CorrelationsResult:
    r"""Correlation measures of every metric with a human score, classical and Bayesian.

    Parameters
    ----------
    data : xarray.Dataset
        With ``score(system, item, metric, run)`` and ``rating`` or ``judgment`` (or give
        ``human=``).
    trait : str
        The human score is this trait's mean over raters (or the raters named), or its
        continuous judgment.
    measures : str or list of str
        ``"all"``: the 12 measures of paper 001 (grouping x coefficient); see
        :func:`~bayesmeta.correlation.measures.parse_measures` (e.g. ``"global_acc_eq"``,
        ``"within_system"``).
    raters : str or list of str, optional
        Raters whose mean is the human score (default all).
    human : DataArray (system, item), optional
        Any other human score, aligned to the data by labels.
    metrics : list of str, optional
        Default: all metrics.
    run, reference :
        Which metric run (a label; default the first) and how several references reduce to
        one score (:func:`bayesmeta.data.select.metric_scores`).
    kendall_variant : {"b", "c", "a"}
    resampling : ResamplingOptions or dict, optional
        ``n_resamples`` (bootstrap resamples and Bayesian-bootstrap draws; 0 for point
        estimates only) and ``unit`` (what the classical bootstrap resamples: ``"both"``,
        ``"systems"``, ``"items"``), ``n_jobs``.
    ci_prob : float
        Probability of the percentile interval and of the HDI.
    random_seed : int, optional
        Seed of the bootstrap (the Bayesian bootstrap uses ``random_seed + 1``); drawn and
        recorded in ``provenance`` when None.

    Returns
    -------
    CorrelationsResult
        ``summary()``: index ``(estimand, trait, metric)`` with ``estimand`` the measure
        name; ``classical`` (the sample measure), ``classical_low`` / ``classical_high``
        (percentile bootstrap interval), ``mean``, ``sd``, ``hdi_low``, ``hdi_high``
        (Bayesian bootstrap over systems and items, summarised by
        :func:`bayesmeta.summaries.summarize`). ``table()`` gives the wide metric x measure
        table; ``extra["bootstrap"]`` and ``extra["posterior"]`` hold the draws (dims
        ``resample, metric, measure``).

    Notes
    -----
    Measures: :mod:`bayesmeta.correlation.measures`; bootstrap and Bayesian bootstrap:
    :mod:`bayesmeta.correlation.resampling`.

    R equivalent: per measure, ``cor(x, z, method = "kendall")`` on the grouped data and
    ``boot::boot.ci(..., type = "perc")``; the Bayesian bootstrap is
    ``bayesboot::bayesboot``.

    References
    ----------
    Gao et al. (paper 001), Sec. 2; Deutsch, Dror & Roth (2021); Rubin (1981).

    Examples
    --------
    >>> import bayesmeta as bm
    >>> res = bm.correlations(bm.datasets.simulated(n_metrics=3), "COH",
    ...                       resampling={"n_resamples": 100}, random_seed=1)
    >>> res.table().shape
    (3, 12)
    >>> res.summary().index.names
    FrozenList(['estimand', 'trait', 'metric'])
    """
    opts = ResamplingOptions.coerce(resampling)
    ci_prob = check_ci_prob(ci_prob)
    names = parse_measures(measures)
    scores, z, hs = _inputs(data, trait, raters, human, metrics, run, reference)
    n_resamples = opts.n_resamples
    x = np.asarray(scores.values, dtype=float) if n_resamples == 0 else scores
    point = measure_draws(np.asarray(scores.values, dtype=float), z, measures=names,
                          kendall_variant=kendall_variant, n_jobs=opts.n_jobs)[0]  # (M, K)
    labels = [str(m) for m in scores["metric"].values]
    idx = pd.MultiIndex.from_product([names, [hs.trait], labels],
                                     names=["estimand", "trait", "metric"])
    table = pd.DataFrame({"classical": point.T.ravel()}, index=idx)
    extra: dict[str, Any] = {}
    info = {"data": select.describe(data), "human": hs.label, "measures": f"{len(names)}",
            "kendall": f"tau-{kendall_variant}"}
    seed = None
    kinds: dict[str, Any] = {}
    if n_resamples:
        seed = resolve_seed(random_seed)
        boot = bootstrap(x, z, measures=names, unit=opts.unit, n_resamples=n_resamples,
                         kendall_variant=kendall_variant, random_seed=seed,
                         progress=progress)
        post = bayesian_bootstrap(x, z, measures=names, n_resamples=n_resamples,
                                  kendall_variant=kendall_variant, random_seed=seed + 1,
                                  progress=progress)
        iv = percentile_interval(boot, ci_prob).transpose("ci_bound", "measure", "metric")
        table["classical_low"] = iv.sel(ci_bound="lower").values.ravel()
        table["classical_high"] = iv.sel(ci_bound="upper").values.ravel()
        s = summarize(post, ci_prob=ci_prob, sample_dims=("resample",))
        table["mean"] = s["mean"].transpose("measure", "metric").values.ravel()
        table["sd"] = s["sd"].transpose("measure", "metric").values.ravel()
        siv = s["interval"].transpose("ci_bound", "measure", "metric")
        table["hdi_low"] = siv.sel(ci_bound="lower").values.ravel()
        table["hdi_high"] = siv.sel(ci_bound="upper").values.ravel()
        extra = {"bootstrap": boot.assign_coords(metric=labels),
                 "posterior": post.assign_coords(metric=labels)}
        info["classical interval"] = (f"{ci_prob:.0%} percentile bootstrap ({opts.unit}), "
                                      f"{n_resamples} resamples")
        info["posterior"] = (f"Bayesian bootstrap (Dirichlet over systems and items), "
                             f"{n_resamples} draws")
        note = calibration_note(len(scores["system"]), names)
        if note:
            info["calibration"] = note
        kinds = {"classical_ci_kind": f"percentile bootstrap ({opts.unit})",
                 "posterior": "Bayesian bootstrap"}
    notes = undefined_notes(np.asarray(scores.values, dtype=float), z, names, point, labels)
    return CorrelationsResult(table, title="Correlation measures of metrics with humans",
                              info=info, extra=extra, ci_prob=ci_prob, random_seed=seed,
                              data_hash=data_hash(data), notes=notes, **kinds)


class MetricComparisonResult(Result):
    """Pairwise comparison of metrics (see :func:`compare_metrics`)."""

    def p_beats(self, measure: str) -> pd.DataFrame:
        """Square table: P(row metric beats column metric) under ``measure``."""
        return self.extra["p_beats"].sel(measure=measure).to_pandas()

    def rank_probability(self, measure: str) -> pd.DataFrame:
        """Posterior probability of each rank (1 = best) for each metric under ``measure``."""
        return self.extra["rank_probability"].sel(measure=measure).to_pandas()


def _rank_probabilities(draws: np.ndarray) -> np.ndarray:
    """draws (R, M, K) -> P(rank = r) (K, M, M): rank 1 = highest; a draw's NaN metric is
    ranked last-equal and does not count."""
    M, K = draws.shape[1:]
    v = np.where(np.isnan(draws), -np.inf, draws)
    ranks = 1 + (v[:, None, :, :] > v[:, :, None, :]).sum(2)  # (R, M, K)
    prob = np.zeros((K, M, M))
    ok = ~np.isnan(draws)
    for r in range(1, M + 1):
        prob[:, :, r - 1] = ((ranks == r) & ok).sum(0).T / np.maximum(ok.sum(0).T, 1)
    return prob


def compare_metrics(
    data: xr.Dataset,
    trait: str | None = None,
    *,
    measures: str | Sequence[str] = "all",
    raters: str | Sequence[str] | None = None,
    human: xr.DataArray | None = None,
    metrics: Sequence[str] | None = None,
    run: Any = None,
    reference: Any = "first",
    kendall_variant: str = "b",
    resampling: ResamplingOptions | dict[str, Any] | None = None,
    ci_prob: float = CI_PROB,
    random_seed: int | None = None,
    progress: bool | None = None,
) -> MetricComparisonResult:
    r"""Which metric agrees better with humans? The difference of every measure for every
    pair of metrics, P(A beats B), rank distributions and permutation p-values.

    Parameters
    ----------
    data, trait, measures, raters, human, metrics, run, reference, kendall_variant :
        As in :func:`correlations`.
    resampling : ResamplingOptions or dict, optional
        ``n_resamples`` (bootstrap resamples and Bayesian-bootstrap draws, at least 10),
        ``unit`` (what the classical bootstrap resamples), ``n_permutations`` (per pair; 0:
        no tests), ``scheme`` (``"both"``, ``"systems"``, ``"items"``, ``"both-rowcol"``,
        see :mod:`bayesmeta.correlation.resampling`), ``pvalue`` (``"plus-one"`` or
        ``"raw"``), ``n_jobs``.
    ci_prob : float
    random_seed : int, optional
        Seed of the Bayesian bootstrap and of the permutations (the classical bootstrap uses
        ``random_seed + 1``); drawn and recorded in ``provenance`` when None.

    Returns
    -------
    MetricComparisonResult
        ``summary()``: index ``(estimand, measure, trait, metric, metric2)`` with estimand
        ``"difference"``, one row per measure and pair (``metric`` before ``metric2`` in
        data order): ``classical`` (the observed difference of the measure, ``metric``
        minus ``metric2``), ``classical_low`` / ``classical_high`` (percentile bootstrap
        interval of the difference), ``mean``, ``sd``, ``hdi_low``, ``hdi_high`` (its
        Bayesian-bootstrap posterior). ``details()``: ``pvalue`` (two-sided permutation
        test) and ``p_beats`` (posterior probability that ``metric`` has the higher
        measure). ``extra``: ``p_beats`` (measure, metric, metric2), ``rank_probability``
        (measure, metric, rank), ``pvalue`` (measure, metric, metric2).

    Notes
    -----
    :math:`P(A \succ B) = \Pr(r_A > r_B \mid \text{data}) + \tfrac12 \Pr(r_A = r_B)` over the
    Bayesian-bootstrap draws; ranks are taken within each draw (1 = highest measure).
    ``p_beats`` is a posterior probability of an event about the difference, not an
    estimate with its own uncertainty, so it sits in ``details()`` beside the p-value (its
    frequentist counterpart) rather than among the estimates.

    R equivalent: ``boot::boot`` of the difference of two ``cor`` values and a
    permutation test by hand; there is no packaged equivalent of the joint rank
    distribution.

    References
    ----------
    Deutsch, Dror & Roth (2021); Gao et al. (paper 001), Alg. 1; Rubin (1981).

    Examples
    --------
    >>> import bayesmeta as bm
    >>> res = bm.compare_metrics(bm.datasets.simulated(n_metrics=3), "COH",
    ...                          measures="system_kendall",
    ...                          resampling={"n_resamples": 200, "n_permutations": 99},
    ...                          random_seed=0)
    >>> res.p_beats("system_kendall").shape
    (3, 3)
    >>> list(res.details().columns)
    ['pvalue', 'p_beats']
    """
    opts = ResamplingOptions.coerce(resampling)
    ci_prob = check_ci_prob(ci_prob)
    names = parse_measures(measures)
    scores, z, hs = _inputs(data, trait, raters, human, metrics, run, reference)
    labels = [str(m) for m in scores["metric"].values]
    M = len(labels)
    if M < 2:
        raise ValueError("metrics: at least two metrics are needed to compare.")
    n_resamples, n_permutations = opts.n_resamples, opts.n_permutations
    if n_resamples < 10:
        raise ValueError(f"resampling: n_resamples must be at least 10 (posterior draws), "
                         f"got {n_resamples}.")
    seed = resolve_seed(random_seed)
    x = np.asarray(scores.values, dtype=float)
    point = measure_draws(x, z, measures=names, kendall_variant=kendall_variant,
                          n_jobs=opts.n_jobs)[0]
    post = bayesian_bootstrap(scores, z, measures=names, n_resamples=n_resamples,
                              kendall_variant=kendall_variant, random_seed=seed,
                              progress=progress).values  # (R, M, K)
    with np.errstate(invalid="ignore"):
        gt = (post[:, :, None, :] > post[:, None, :, :]).mean(0)
        eq = (post[:, :, None, :] == post[:, None, :, :]).mean(0)
    beats = (gt + 0.5 * eq).transpose(2, 0, 1)  # (K, M, M)
    ranks = _rank_probabilities(post)
    pairs = [(a, b) for a in range(M) for b in range(a + 1, M)]
    pv = np.full((len(names), M, M), np.nan)
    if n_permutations:
        tests = permutation_test(scores, z, pairs, measures=names, scheme=opts.scheme,
                                 n_permutations=n_permutations, pvalue=opts.pvalue,
                                 kendall_variant=kendall_variant, random_seed=seed,
                                 progress=progress, n_jobs=opts.n_jobs)
        for j, (a, b) in enumerate(pairs):
            pv[:, a, b] = pv[:, b, a] = tests["pvalue"].values[j]
    boot = bootstrap(scores, z, measures=names, unit=opts.unit, n_resamples=n_resamples,
                     kendall_variant=kendall_variant, random_seed=seed + 1,
                     progress=progress).values  # (R, M, K)
    ia, ib = np.array([a for a, _ in pairs]), np.array([b for _, b in pairs])
    dims = ("resample", "pair", "measure")
    diff = xr.DataArray(post[:, ia, :] - post[:, ib, :], dims=dims,
                        coords={"measure": names})
    bdiff = xr.DataArray(boot[:, ia, :] - boot[:, ib, :], dims=dims,
                         coords={"measure": names})
    s = summarize(diff, ci_prob=ci_prob, sample_dims=("resample",))
    iv = percentile_interval(bdiff, ci_prob).transpose("ci_bound", "measure", "pair")
    siv = s["interval"].transpose("ci_bound", "measure", "pair")
    idx = pd.MultiIndex.from_tuples(
        [("difference", n, hs.trait, labels[a], labels[b]) for n in names for a, b in pairs],
        names=["estimand", "measure", "trait", "metric", "metric2"])
    k_idx = np.repeat(np.arange(len(names)), len(pairs))
    ta, tb = np.tile(ia, len(names)), np.tile(ib, len(names))
    table = pd.DataFrame({
        "classical": (point[ia, :] - point[ib, :]).T.ravel(),
        "classical_low": iv.sel(ci_bound="lower").values.ravel(),
        "classical_high": iv.sel(ci_bound="upper").values.ravel(),
        "mean": s["mean"].transpose("measure", "pair").values.ravel(),
        "sd": s["sd"].transpose("measure", "pair").values.ravel(),
        "hdi_low": siv.sel(ci_bound="lower").values.ravel(),
        "hdi_high": siv.sel(ci_bound="upper").values.ravel(),
    }, index=idx)
    details = pd.DataFrame({"pvalue": pv[k_idx, ta, tb], "p_beats": beats[k_idx, ta, tb]},
                           index=idx)
    coords = {"measure": names, "metric": labels, "metric2": labels}
    extra = {
        "p_beats": xr.DataArray(beats, dims=("measure", "metric", "metric2"), coords=coords),
        "rank_probability": xr.DataArray(
            ranks, dims=("measure", "metric", "rank"),
            coords={"measure": names, "metric": labels, "rank": np.arange(1, M + 1)}),
        "pvalue": xr.DataArray(pv, dims=("measure", "metric", "metric2"), coords=coords),
    }
    info = {"data": select.describe(data), "human": hs.label, "measures": f"{len(names)}",
            "classical interval": (f"{ci_prob:.0%} percentile bootstrap ({opts.unit}), "
                                   f"{n_resamples} resamples"),
            "posterior": f"Bayesian bootstrap, {n_resamples} draws",
            "test": (f"permutation ({opts.scheme}), {n_permutations} permutations, p = "
                     + ("(b+1)/(n+1)" if opts.pvalue == "plus-one" else "b/n"))
            if n_permutations else "none"}
    note = calibration_note(len(scores["system"]), names)
    if note:
        info["calibration"] = note
    # issue 21, no silent NaN: a metric whose measure is undefined makes every difference
    # with it NaN; say which and why
    nan_notes = undefined_notes(x, z, names, point, labels)
    if nan_notes:
        nan_notes.append("Every difference with such a metric is NaN in summary(), and its "
                         "P(beats) compares undefined draws.")
    return MetricComparisonResult(
        table, title="Pairwise comparison of metrics", info=info, details=details,
        extra=extra, ci_prob=ci_prob, classical_ci_kind=f"percentile bootstrap ({opts.unit})",
        posterior="Bayesian bootstrap", random_seed=seed, data_hash=data_hash(data),
        notes=[*nan_notes, "details(): pvalue (permutation test of the difference) and "
                           "p_beats (posterior probability that metric beats metric2)."])
