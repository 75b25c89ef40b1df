r"""Meta-measures of correlation measures (paper 001, Sec. 4): how well does a measure tell
metrics apart, how stable is the ranking it gives, how does it react to score granularity?

* **Discriminative power** (Alg. 1): for every pair of metrics a two-sided permutation test
  of the difference of their correlations with the human score; DP is the mean p-value over
  the pairs (smaller: more discriminative), and the p-values sorted in descending order give
  the p-value curve (its area over the number of pairs is DP).
* **Ranking consistency** (Alg. 2): inputs split at random into two halves; the metrics are
  ranked by the measure on each half, and RC is the mean Kendall tau-b between the two
  rankings over random splits (``resampling.n_resamples``).
* **Granularity**: the measures as a metric's (or the human score's) number of possible
  values changes -- on real data by coarsening (quantile bins of the metric; averaging
  fewer raters), and by simulation from the model of paper 001, App. C
  (:func:`bayesmeta.simulate.simulate_correlation_study`).

Every result has the table shape of :mod:`bayesmeta.summaries`: discriminative power and
ranking consistency are indexed ``(estimand, measure)`` (estimand
``"discriminative_power"`` / ``"ranking_consistency"``, ``measure`` the correlation
measure); granularity tables are indexed ``(estimand, level)`` with the measure as the
estimand and ``level`` the granularity (the number of distinct score values; 0 = a
continuous metric in the simulation). Ranks, counts and spreads are in ``details()``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayesmeta.correlation._kernels import direct_small
from bayesmeta.correlation.comparison import _inputs
from bayesmeta.correlation.measures import measure_draws, parse_measures
from bayesmeta.correlation.resampling import permutation_test
from bayesmeta.data import select
from bayesmeta.data.schema import validate
from bayesmeta.options import ResamplingOptions, resolve_seed
from bayesmeta.results import Result, data_hash
from bayesmeta.vocabulary import resampling_options


class _ClassicalResult(Result):
    """Results without posterior intervals: no MCMC footer."""


def _ranked(table: pd.DataFrame, column: str, ascending: bool) -> pd.DataFrame:
    table["rank"] = table[column].rank(ascending=ascending, method="min").astype("Int64")
    return table


def _index(estimand: str, names: Sequence[str]) -> pd.MultiIndex:
    return pd.MultiIndex.from_arrays([[estimand] * len(names), list(names)],
                                     names=["estimand", "measure"])


class DiscriminativePowerResult(_ClassicalResult):
    """Discriminative power of correlation measures (see :func:`discriminative_power`)."""


def discriminative_power(
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
    random_seed: int | None = None,
    progress: bool | None = None,
) -> DiscriminativePowerResult:
    r"""Discriminative power (DP) of correlation measures: the mean permutation p-value over
    all pairs of metrics (paper 001, Alg. 1).

    .. math:: \mathrm{DP} = \binom{M}{2}^{-1} \sum_{a < b} p_{ab}

    Parameters
    ----------
    data, trait, measures, raters, human, metrics, run, reference, kendall_variant :
        As in :func:`bayesmeta.correlations`.
    resampling : ResamplingOptions or dict, optional
        ``scheme`` (``"both"``, ``"systems"``, ``"items"``, ``"both-rowcol"``; paper 001
        used nlpstats' ``"both"``, which is ``"both-rowcol"`` here, see
        :mod:`bayesmeta.correlation.resampling`), ``n_permutations`` (paper 001: 1,000; its
        code: 999), ``pvalue`` (``"raw"``, b / n, reproduces paper 001), ``n_jobs``.
    random_seed : int, optional
        Drawn and recorded in ``provenance`` when None.

    Returns
    -------
    DiscriminativePowerResult
        ``summary()``: index ``(estimand, measure)``, estimand ``"discriminative_power"``,
        ``classical`` (DP; smaller = more discriminative). ``details()``: ``rank`` (1 = most
        discriminative), ``n_pairs``, ``share_below_05`` (share of pairs with p < 0.05).
        ``extra["pvalues"]`` (measure, pair) and ``extra["curve"]`` (measure, position): the
        p-values sorted in descending order.

    References
    ----------
    Gao et al. (paper 001), Sec. 4.1 and Alg. 1; Deutsch, Dror & Roth (2021); Sakai (2013).

    Examples
    --------
    >>> import bayesmeta as bm
    >>> dp = bm.discriminative_power(bm.datasets.simulated(n_metrics=4), "COH",
    ...                              measures="system", resampling={"n_permutations": 99},
    ...                              random_seed=0)
    >>> list(dp.summary().columns), list(dp.details().columns)
    (['classical'], ['rank', 'n_pairs', 'share_below_05'])
    """
    opts = ResamplingOptions.coerce(resampling)
    names = parse_measures(measures)
    scores, z, hs = _inputs(data, trait, raters, human, metrics, run, reference)
    seed = resolve_seed(random_seed)
    scheme, n_permutations, pvalue = opts.scheme, opts.n_permutations, opts.pvalue
    if n_permutations < 1:
        raise ValueError("resampling: n_permutations must be >= 1 for discriminative power.")
    tests = permutation_test(scores, z, measures=names, scheme=scheme,
                             n_permutations=n_permutations, pvalue=pvalue,
                             kendall_variant=kendall_variant, random_seed=seed,
                             progress=progress, n_jobs=opts.n_jobs)
    p = tests["pvalue"].transpose("measure", "pair")
    with np.errstate(invalid="ignore"):
        table = pd.DataFrame({
            "classical": p.mean("pair", skipna=True).values,
            "n_pairs": p.notnull().sum("pair").values,
            "share_below_05": (p < 0.05).sum("pair").values / p.notnull().sum("pair").values,
        }, index=_index("discriminative_power", names))
    table = _ranked(table, "classical", ascending=True)[
        ["classical", "rank", "n_pairs", "share_below_05"]]
    curve = xr.DataArray(-np.sort(-p.values, axis=1), dims=("measure", "position"),
                         coords={"measure": names,
                                 "position": np.arange(1, p.sizes["pair"] + 1)})
    return DiscriminativePowerResult(
        table, title="Discriminative power of correlation measures (mean p-value)",
        info={"data": select.describe(data), "human": hs.label,
              "metrics": scores.sizes["metric"],
              "test": f"permutation ({scheme}), {n_permutations} permutations, p = "
                      + ("(b+1)/(n+1)" if pvalue == "plus-one" else "b/n")},
        extra={"pvalues": tests["pvalue"].transpose("measure", "pair"), "curve": curve},
        random_seed=seed, data_hash=data_hash(data))


class RankingConsistencyResult(_ClassicalResult):
    """Ranking consistency of correlation measures (see :func:`ranking_consistency`)."""


def ranking_consistency(
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
    random_seed: int | None = None,
) -> RankingConsistencyResult:
    r"""Ranking consistency (RC) of correlation measures: the mean Kendall tau-b between the
    metric rankings on two random halves of the inputs (paper 001, Alg. 2).

    .. math:: \mathrm{RC} = \frac{1}{T} \sum_{t=1}^{T}
              \tau_b\big(r(D^{(t)}_1), r(D^{(t)}_2)\big)

    where :math:`r(D)` is the vector of the measure for every metric on the inputs in
    :math:`D`, and :math:`D^{(t)}_1, D^{(t)}_2` split the inputs in half (the first
    :math:`\lfloor I/2 \rfloor` of a random permutation, and the rest).

    Parameters
    ----------
    data, trait, measures, raters, human, metrics, run, reference, kendall_variant :
        As in :func:`bayesmeta.correlations`.
    resampling : ResamplingOptions or dict, optional
        ``n_resamples``: the random splits (default here 1,000, as paper 001); ``n_jobs``:
        worker threads.
    random_seed : int, optional
        Drawn and recorded in ``provenance`` when None.

    Returns
    -------
    RankingConsistencyResult
        ``summary()``: index ``(estimand, measure)``, estimand ``"ranking_consistency"``,
        ``classical`` (RC; larger = more consistent). ``details()``: ``rank`` (1 = most
        consistent), ``trial_sd`` (sd over splits) and ``mc_se`` (its Monte-Carlo standard
        error). ``extra["taus"]`` (trial, measure).

    References
    ----------
    Gao et al. (paper 001), Sec. 4.2 and Alg. 2; Sakai (2021).

    Examples
    --------
    >>> import bayesmeta as bm
    >>> rc = bm.ranking_consistency(bm.datasets.simulated(n_metrics=5), "COH",
    ...                             resampling={"n_resamples": 20}, random_seed=0)
    >>> rc.summary().shape[0]
    12
    """
    opts = resampling_options(resampling, n_resamples=1000)
    n_trials, n_jobs = opts.n_resamples, opts.n_jobs
    if n_trials < 1:
        raise ValueError("resampling: n_resamples (random splits) must be >= 1 for ranking "
                         "consistency.")
    names = parse_measures(measures)
    scores, z, hs = _inputs(data, trait, raters, human, metrics, run, reference)
    x = np.asarray(scores.values, dtype=float)
    I = x.shape[2]
    seed = resolve_seed(random_seed)
    rng = np.random.default_rng(seed)
    w = np.zeros((2 * n_trials, I))
    for t in range(n_trials):
        perm = rng.permutation(I)
        w[t, perm[: I // 2]] = 1.0
        w[n_trials + t, perm[I // 2:]] = 1.0
    draws = measure_draws(x, z, item_weights=w, measures=names,
                          kendall_variant=kendall_variant, n_jobs=n_jobs)  # (2T, M, K)
    a, b = draws[:n_trials].transpose(0, 2, 1), draws[n_trials:].transpose(0, 2, 1)
    taus = direct_small(a, b, None, ["kendall"], "b", min_count=2)["kendall"]  # (T, K)
    with np.errstate(invalid="ignore"):
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            mean, sd = np.nanmean(taus, 0), np.nanstd(taus, 0, ddof=1)
        n_ok = np.isfinite(taus).sum(0)
    table = pd.DataFrame({"classical": mean, "trial_sd": sd, "mc_se": sd / np.sqrt(n_ok)},
                         index=_index("ranking_consistency", names))
    table = _ranked(table, "classical", ascending=False)[
        ["classical", "rank", "trial_sd", "mc_se"]]
    return RankingConsistencyResult(
        table, title="Ranking consistency of correlation measures (split-half Kendall tau)",
        info={"data": select.describe(data), "human": hs.label, "metrics": x.shape[0],
              "trials": n_trials},
        extra={"taus": xr.DataArray(taus, dims=("trial", "measure"),
                                    coords={"measure": names})},
        random_seed=seed, data_hash=data_hash(data))


class GranularityResult(_ClassicalResult):
    """Measures against score granularity (see :func:`granularity`)."""

    def table(self, column: str = "classical") -> pd.DataFrame:
        """Wide table: one row per granularity, one column per measure."""
        col = self._table[column]
        order = list(dict.fromkeys(col.index.get_level_values("estimand")))
        levels = list(dict.fromkeys(col.index.get_level_values("level")))
        t = col.unstack("estimand").loc[levels, order]
        t.index.name, t.columns.name = "granularity", "measure"
        return t


def coarsen(values: np.ndarray, levels: int) -> np.ndarray:
    """Equal-frequency bins: each value replaced by its bin ``1..levels`` by its mid-rank
    among the observed values (NaN stays NaN). Ties stay together."""
    v = np.asarray(values, dtype=float)
    ok = ~np.isnan(v)
    from scipy.stats import rankdata

    out = np.full(v.shape, np.nan)
    r = rankdata(v[ok], method="average")
    out[ok] = np.minimum(levels, np.floor((r - 0.5) / ok.sum() * levels) + 1)
    return out


def granularity(
    data: xr.Dataset,
    trait: str | None = None,
    *,
    metric: str,
    target: str = "metric",
    levels: Sequence[int] | None = None,
    raters: str | Sequence[str] | None = None,
    measures: str | Sequence[str] = "all",
    run: Any = None,
    reference: Any = "first",
    kendall_variant: str = "b",
) -> GranularityResult:
    r"""How a metric's correlation measures change with the granularity of its scores or of
    the human scores (paper 001, Sec. 4.3.1).

    Parameters
    ----------
    metric : str
        The metric studied.
    target : {"metric", "human"}
        ``"metric"``: the metric is coarsened to ``levels`` equal-frequency bins (plus its
        original scores, granularity = its number of distinct values). ``"human"``: the human
        score is the mean of the first ``r`` raters, ``r = 1..R`` (granularity
        :math:`r (\max - \min) + 1`, e.g. 5, 9, 13 for three raters on 1..5), or, with
        ``levels``, the rater mean coarsened to bins.
    levels : list of int, optional
        Default for the metric: 2, 3, 5, 9, 13, 25, 50, 100.
    raters, measures, run, reference, kendall_variant :
        As in :func:`bayesmeta.correlations`.

    Returns
    -------
    GranularityResult
        ``summary()``: index ``(estimand, level)`` with the measure as ``estimand`` and the
        granularity (number of distinct score values) as ``level``; ``classical``.
        ``table()`` the wide granularity x measure table.

    Notes
    -----
    Paper 001 expects the agreement with humans to grow with the metric's granularity up to
    the human granularity, and finds system-level and Kendall measures nearly insensitive.

    Examples
    --------
    >>> import bayesmeta as bm
    >>> g = bm.granularity(bm.datasets.simulated(), "COH", metric="metric01.COH",
    ...                    levels=[2, 5])
    >>> g.table().shape
    (3, 12)
    """
    names = parse_measures(measures)
    if target not in ("metric", "human"):
        raise ValueError(f"target must be 'metric' or 'human', got {target!r}.")
    validate(data, warn_missing=False)
    x = np.asarray(select.metric_scores(data, [metric], run=run, reference=reference
                                        ).values[0], dtype=float)
    hs = select.human_score(data, trait, raters=raters)
    z, label = np.asarray(hs.values.transpose("system", "item").values, dtype=float), hs.label
    xs, zs, labels = [], [], []
    if target == "metric":
        for k in (levels or (2, 3, 5, 9, 13, 25, 50, 100)):
            xs.append(coarsen(x, int(k)))
            labels.append(len(np.unique(xs[-1][~np.isnan(xs[-1])])))
        xs.append(x)
        labels.append(len(np.unique(x[~np.isnan(x)])))
        zs = [z] * len(xs)
    else:
        if levels is not None:
            zs = [coarsen(z, int(k)) for k in levels]
            labels = [int(k) for k in levels]
        else:
            rating = data["rating"].sel(trait=trait)
            lo, hi = rating.attrs["scale_min"], rating.attrs["scale_max"]
            for r in range(1, data.sizes["rater"] + 1):
                import warnings

                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    zr = rating.isel(rater=slice(0, r)).mean("rater", skipna=True)
                zs.append(zr.transpose("system", "item").values)
                labels.append(int(r * (hi - lo) + 1))
        xs = [x] * len(zs)
    vals = np.stack([measure_draws(xv[None], zv, measures=names,
                                   kendall_variant=kendall_variant)[0, 0]
                     for xv, zv in zip(xs, zs, strict=True)])  # (L, K)
    idx = pd.MultiIndex.from_product([names, labels], names=["estimand", "level"])
    table = pd.DataFrame({"classical": vals.T.ravel()}, index=idx)
    return GranularityResult(
        table, title=f"Measures against the granularity of the {target} score",
        info={"data": select.describe(data), "human": label, "metric": metric, "target": target,
              "level": "granularity: number of distinct score values"},
        data_hash=data_hash(data),
        extra={"values": xr.DataArray(vals, dims=("granularity", "measure"),
                                      coords={"granularity": labels, "measure": names})})


def granularity_simulation(
    *,
    metric_levels: Sequence[int] = (2, 3, 5, 9, 13, 25, 50, 100),
    human_levels: int | None = 13,
    n_replicates: int = 200,
    measures: str | Sequence[str] = "all",
    kendall_variant: str = "b",
    random_seed: int | None = None,
    model: Mapping[str, float] | None = None,
) -> GranularityResult:
    r"""The measures against the metric's granularity in data simulated from paper 001's
    App. C model (:func:`bayesmeta.simulate.simulate_correlation_study`).

    Each replicate draws continuous metric and human scores, discretises the human score to
    ``human_levels`` and the metric to each of ``metric_levels`` (and keeps it continuous,
    granularity 0 in the table), and computes every measure; the table averages over
    replicates.

    Parameters
    ----------
    metric_levels : list of int
    human_levels : int or None
        None keeps the human score continuous.
    n_replicates : int
    model : dict, optional
        Parameters of :func:`~bayesmeta.simulate.simulate_correlation_study` (default its
        own).

    Returns
    -------
    GranularityResult
        ``summary()``: index ``(estimand, level)`` (measure, metric granularity; 0 =
        continuous metric), ``classical`` (mean over replicates); ``details()``:
        ``replicate_sd``.

    Examples
    --------
    >>> from bayesmeta.correlation.metameasures import granularity_simulation
    >>> g = granularity_simulation(metric_levels=[2, 5], n_replicates=3, random_seed=0,
    ...                            measures="system")
    >>> g.table().shape
    (3, 3)
    """
    from bayesmeta.simulate import simulate_correlation_study

    model = dict(model or {})
    names = parse_measures(measures)
    seed = resolve_seed(random_seed)
    seeds = np.random.SeedSequence(seed).spawn(n_replicates)
    out = []
    for s in seeds:
        sim = simulate_correlation_study(
            int(s.generate_state(1)[0]), human_levels=human_levels,
            metric_levels=tuple(metric_levels), **model)
        x = sim["score"].isel(run=0).transpose("metric", "system", "item").values
        out.append(measure_draws(x, sim["human"].values, measures=names,
                                 kendall_variant=kendall_variant)[0])
    vals = np.stack(out)  # (n_rep, L, K)
    labels = [0, *(int(k) for k in metric_levels)]
    idx = pd.MultiIndex.from_product([names, labels], names=["estimand", "level"])
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        table = pd.DataFrame({"classical": np.nanmean(vals, 0).T.ravel(),
                              "replicate_sd": np.nanstd(vals, 0, ddof=1).T.ravel()},
                             index=idx)
    return GranularityResult(
        table, title="Measures against metric granularity (simulation, paper 001 App. C)",
        info={"replicates": n_replicates, "human granularity": human_levels or "continuous",
              "model": ", ".join(f"{k}={v}" for k, v in model.items()) or "defaults",
              "level": "granularity of the metric: number of levels (0: continuous)"},
        random_seed=seed,
        extra={"values": xr.DataArray(vals, dims=("replicate", "granularity", "measure"),
                                      coords={"granularity": labels, "measure": names})})
