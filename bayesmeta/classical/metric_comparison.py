r"""How well do metrics agree with humans, and which metric is better? The public API.

:func:`correlations` tabulates the correlation measures of every metric (paper 001's 12 by
default) with a classical bootstrap interval and a Bayesian-bootstrap posterior side by side.
:func:`compare_metrics` gives, for every pair of metrics and every measure, the permutation
p-value of the difference (Deutsch et al. 2021) beside the posterior probability that one
metric beats the other, and each metric's posterior rank distribution.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayesmeta.classical._select import human_score, metric_scores
from bayesmeta.classical.correlation import measure_draws, parse_measures
from bayesmeta.classical.resampling import (
    bayesian_bootstrap,
    bootstrap,
    calibration_note,
    percentile_interval,
    permutation_test,
)
from bayesmeta.data.schema import validate
from bayesmeta.results import Result, data_hash, hdi


def _describe(ds: xr.Dataset) -> str:
    return ", ".join(f"{k} {v}" for k, v in ds.sizes.items()
                     if k in ("system", "item", "rater", "trait", "metric", "run"))


def _inputs(data, trait, rater, human, metrics, run):
    validate(data, warn_missing=False)
    scores = metric_scores(data, metrics=metrics, run=run)
    z, label = human_score(data, trait, rater=rater, human=human)
    return scores, z, label


def _posterior_columns(draws: np.ndarray, ci_prob: float) -> dict[str, np.ndarray]:
    """mean, sd, HDI over axis 0 (NaN draws dropped)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        mean, sd = np.nanmean(draws, 0), np.nanstd(draws, 0)
    flat = draws.reshape(draws.shape[0], -1)
    lo, hi = np.full(flat.shape[1], np.nan), np.full(flat.shape[1], np.nan)
    clean = ~np.isnan(flat).any(0)
    if clean.any():
        iv = hdi(flat[:, clean], ci_prob, axis=(0,))
        lo[clean], hi[clean] = iv[:, 0], iv[:, 1]
    for j in np.flatnonzero(~clean):  # columns with undefined draws: drop those draws
        ok = flat[~np.isnan(flat[:, j]), j]
        if ok.size >= 10:
            lo[j], hi[j] = hdi(ok, ci_prob, axis=(0,))
    shape = draws.shape[1:]
    return {"mean": mean, "sd": sd, "hdi_low": lo.reshape(shape), "hdi_high": hi.reshape(shape)}


class _ResamplingResult(Result):
    """Posterior columns from the Bayesian bootstrap, not MCMC: a footer that says so."""

    def __str__(self) -> str:
        lines = super().__str__().split("\n")
        out, skip = [], False
        for line in lines:
            if line.startswith("  Intervals are"):
                out.append(f"  mean, sd, hdi_low, hdi_high: Bayesian-bootstrap posterior "
                           f"({self.ci_prob:.0%} HDI); classical_low/high: bootstrap "
                           f"percentile interval.")
                skip = True
                continue
            if skip and line.startswith("  >= 400"):
                skip = False
                continue
            out.append(line)
        return "\n".join(out)


class CorrelationsResult(_ResamplingResult):
    """Correlation measures of metrics with a human score (see :func:`correlations`)."""

    def table(self, column: str = "classical") -> pd.DataFrame:
        """Wide table: one row per metric, one column per measure, values of ``column``."""
        t = self._table[column].unstack("measure")
        order = list(dict.fromkeys(self._table.index.get_level_values("measure")))
        metrics = list(dict.fromkeys(self._table.index.get_level_values("metric")))
        return t.loc[metrics, order]

    def summary(self) -> pd.DataFrame:
        out = super().summary()
        out.attrs.update(classical_ci_kind=self.info.get("classical interval", ""))
        return out


def correlations(
    data: xr.Dataset,
    trait: str | None = None,
    *,
    rater: str | None = None,
    human: xr.DataArray | None = None,
    measures: str | Sequence[str] = "all",
    metrics: Sequence[str] | None = None,
    run: str | int | None = None,
    kendall_variant: str = "b",
    n_resamples: int = 1000,
    unit: str = "both",
    ci_prob: float = 0.94,
    random_seed: int | None = None,
    progress: bool | None = None,
    n_jobs: int | None = None,
) -> CorrelationsResult:
    r"""Correlation measures of every metric with a human score, classical and Bayesian.

    Parameters
    ----------
    data : xarray.Dataset
        With ``score(system, item, metric, run)`` and ``rating`` (or give ``human=``).
    trait : str
        The human score is this trait's mean over raters (or one rater's, with ``rater=``).
    rater : str, optional
    human : DataArray (system, item), optional
        Any other human score.
    measures : str or list of str
        ``"all"``: the 12 measures of paper 001 (grouping x coefficient); see
        :func:`~bayesmeta.classical.correlation.parse_measures` (e.g. ``"global_acc_eq"``).
    metrics : list of str, optional
        Default: all metrics.
    run : metric run (default the first).
    kendall_variant : {"b", "c", "a"}
    n_resamples : int
        Bootstrap resamples and Bayesian-bootstrap draws (0 for point estimates only).
    unit : {"both", "systems", "inputs"}
        What the classical bootstrap resamples.
    ci_prob : float
        Probability of the percentile interval and of the HDI.
    random_seed : int, optional

    Returns
    -------
    CorrelationsResult
        ``summary()``: index ``(metric, measure)``; ``classical`` (the sample measure),
        ``classical_low`` / ``classical_high`` (percentile bootstrap interval), ``mean``,
        ``sd``, ``hdi_low``, ``hdi_high`` (Bayesian bootstrap over systems and inputs).
        ``table()`` gives the wide metric x measure table; ``extra["bootstrap"]`` and
        ``extra["posterior"]`` hold the draws (dims ``resample, metric, measure``).

    Notes
    -----
    Measures: :mod:`bayesmeta.classical.correlation`; bootstrap and Bayesian bootstrap:
    :mod:`bayesmeta.classical.resampling`.

    References
    ----------
    Gao et al. (paper 001), Sec. 2; Deutsch, Dror & Roth (2021); Rubin (1981).

    Examples
    --------
    >>> import bayesmeta as bm
    >>> res = bm.correlations(bm.datasets.simulated(n_metrics=3), "COH", n_resamples=100,
    ...                       random_seed=1)
    >>> res.table().shape
    (3, 12)
    """
    names = parse_measures(measures)
    scores, z, label = _inputs(data, trait, rater, human, metrics, run)
    x = np.asarray(scores.values, dtype=float) if n_resamples == 0 else scores
    point = measure_draws(np.asarray(scores.values, dtype=float), z, measures=names,
                          kendall_variant=kendall_variant, n_jobs=n_jobs)[0]
    labels = [str(m) for m in scores["metric"].values]
    idx = pd.MultiIndex.from_product([labels, names], names=["metric", "measure"])
    table = pd.DataFrame({"classical": point.ravel()}, index=idx)
    extra: dict[str, Any] = {}
    info = {"data": _describe(data), "data_hash": data_hash(data), "human": label,
            "measures": f"{len(names)}", "kendall": f"tau-{kendall_variant}"}
    if n_resamples:
        boot = bootstrap(x, z, measures=names, unit=unit, n_resamples=n_resamples,
                         kendall_variant=kendall_variant, random_seed=random_seed,
                         progress=progress)
        seed2 = None if random_seed is None else random_seed + 1
        post = bayesian_bootstrap(x, z, measures=names, n_resamples=n_resamples,
                                  kendall_variant=kendall_variant, random_seed=seed2,
                                  progress=progress)
        iv = percentile_interval(boot, ci_prob)
        table["classical_low"] = iv.sel(ci_bound="lower").values.ravel()
        table["classical_high"] = iv.sel(ci_bound="upper").values.ravel()
        for col, v in _posterior_columns(post.values, ci_prob).items():
            table[col] = v.ravel()
        extra = {"bootstrap": boot.assign_coords(metric=labels),
                 "posterior": post.assign_coords(metric=labels)}
        info["classical interval"] = f"{ci_prob:.0%} percentile bootstrap ({unit}), " \
                                     f"{n_resamples} resamples"
        info["posterior"] = f"Bayesian bootstrap (Dirichlet over systems and inputs), " \
                            f"{n_resamples} draws"
        info["random_seed"] = random_seed
        note = calibration_note(len(scores["system"]), names)
        if note:
            info["calibration"] = note
    return CorrelationsResult(table, title="Correlation measures of metrics with humans",
                              info=info, extra=extra, ci_prob=ci_prob)


class MetricComparisonResult(_ResamplingResult):
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
    rater: str | None = None,
    human: xr.DataArray | None = None,
    measures: str | Sequence[str] = "all",
    metrics: Sequence[str] | None = None,
    run: str | int | None = None,
    kendall_variant: str = "b",
    n_resamples: int = 1000,
    n_permutations: int = 1000,
    scheme: str = "both",
    pvalue: str = "plus-one",
    ci_prob: float = 0.94,
    random_seed: int | None = None,
    progress: bool | None = None,
    n_jobs: int | None = None,
) -> MetricComparisonResult:
    r"""Which metric agrees better with humans? P(A beats B), rank distributions and
    permutation p-values, per measure.

    Parameters
    ----------
    data, trait, rater, human, measures, metrics, run, kendall_variant :
        As in :func:`correlations`.
    n_resamples : int
        Bayesian-bootstrap draws.
    n_permutations : int
        Permutations per pair (0: no tests).
    scheme : {"both", "systems", "inputs", "both-rowcol"}
        Permutation scheme (:mod:`bayesmeta.classical.resampling`).
    pvalue : {"plus-one", "raw"}

    Returns
    -------
    MetricComparisonResult
        ``summary()``: index ``(measure, metric, metric2)`` for each pair (metric before
        metric2 in data order) with ``classical`` (observed difference of the measure),
        ``pvalue`` (two-sided permutation test), ``p_beats`` (posterior probability that
        ``metric`` has the higher measure), ``mean``, ``sd``, ``hdi_low``, ``hdi_high`` (the
        posterior of the difference). ``extra``: ``p_beats`` (measure, metric, metric2),
        ``rank_probability`` (measure, metric, rank), ``pvalue`` (measure, metric, metric2).

    Notes
    -----
    :math:`P(A \succ B) = \Pr(r_A > r_B \mid \text{data}) + \tfrac12 \Pr(r_A = r_B)` over the
    Bayesian-bootstrap draws; ranks are taken within each draw (1 = highest measure).

    References
    ----------
    Deutsch, Dror & Roth (2021); Gao et al. (paper 001), Alg. 1; Rubin (1981).

    Examples
    --------
    >>> import bayesmeta as bm
    >>> res = bm.compare_metrics(bm.datasets.simulated(n_metrics=3), "COH",
    ...                          measures="system_kendall", n_resamples=200,
    ...                          n_permutations=99, random_seed=0)
    >>> res.p_beats("system_kendall").shape
    (3, 3)
    """
    names = parse_measures(measures)
    scores, z, label = _inputs(data, trait, rater, human, metrics, run)
    labels = [str(m) for m in scores["metric"].values]
    M = len(labels)
    if M < 2:
        raise ValueError("metrics: at least two metrics are needed to compare.")
    if n_resamples < 10:
        raise ValueError(f"n_resamples must be at least 10 (posterior draws), got "
                         f"{n_resamples}.")
    x = np.asarray(scores.values, dtype=float)
    point = measure_draws(x, z, measures=names, kendall_variant=kendall_variant,
                          n_jobs=n_jobs)[0]
    post = bayesian_bootstrap(scores, z, measures=names, n_resamples=n_resamples,
                              kendall_variant=kendall_variant, random_seed=random_seed,
                              progress=progress).values  # (R, M, K)
    with np.errstate(invalid="ignore"):
        gt = (post[:, :, None, :] > post[:, None, :, :]).mean(0)
        eq = (post[:, :, None, :] == post[:, None, :, :]).mean(0)
    beats = (gt + 0.5 * eq).transpose(2, 0, 1)  # (K, M, M)
    ranks = _rank_probabilities(post)
    pairs = [(a, b) for a in range(M) for b in range(a + 1, M)]
    pv = np.full((len(names), M, M), np.nan)
    if n_permutations:
        tests = permutation_test(scores, z, pairs, measures=names, scheme=scheme,
                                 n_permutations=n_permutations, pvalue=pvalue,
                                 kendall_variant=kendall_variant, random_seed=random_seed,
                                 progress=progress, n_jobs=n_jobs)
        for j, (a, b) in enumerate(pairs):
            pv[:, a, b] = pv[:, b, a] = tests["pvalue"].values[j]
    ia, ib = np.array([a for a, _ in pairs]), np.array([b for _, b in pairs])
    diff = post[:, ia, :] - post[:, ib, :]  # (R, P, K)
    cols = _posterior_columns(diff.transpose(0, 2, 1), ci_prob)  # (K, P)
    idx = pd.MultiIndex.from_tuples(
        [(n, labels[a], labels[b]) for n in names for a, b in pairs],
        names=["measure", "metric", "metric2"])
    k_idx = np.repeat(np.arange(len(names)), len(pairs))
    table = pd.DataFrame({
        "classical": (point[ia, :] - point[ib, :]).T.ravel(),
        "pvalue": pv[k_idx, np.tile(ia, len(names)), np.tile(ib, len(names))],
        "p_beats": beats[k_idx, np.tile(ia, len(names)), np.tile(ib, len(names))],
        **{c: v.ravel() for c, v in cols.items()},
    }, index=idx)
    coords = {"measure": names, "metric": labels, "metric2": labels}
    extra = {
        "p_beats": xr.DataArray(beats, dims=("measure", "metric", "metric2"), coords=coords),
        "rank_probability": xr.DataArray(
            ranks, dims=("measure", "metric", "rank"),
            coords={"measure": names, "metric": labels, "rank": np.arange(1, M + 1)}),
        "pvalue": xr.DataArray(pv, dims=("measure", "metric", "metric2"), coords=coords),
    }
    info = {"data": _describe(data), "data_hash": data_hash(data), "human": label,
            "measures": f"{len(names)}",
            "posterior": f"Bayesian bootstrap, {n_resamples} draws",
            "test": (f"permutation ({scheme}), {n_permutations} permutations, p = "
                     + ("(b+1)/(n+1)" if pvalue == "plus-one" else "b/n"))
            if n_permutations else "none",
            "random_seed": random_seed}
    note = calibration_note(len(scores["system"]), names)
    if note:
        info["calibration"] = note
    return MetricComparisonResult(table, title="Pairwise comparison of metrics", info=info,
                                  extra=extra, ci_prob=ci_prob)
