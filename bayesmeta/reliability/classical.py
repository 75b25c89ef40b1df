"""Classical reliability of metrics and raters (MetricEval, Xiao et al. 2023, Sec. 3.1).

* :func:`rank_normalize`: the inverse-normal rank transform of MetricEval App. A.2
  (defined in :mod:`bayesmeta.data.transform`, re-exported here).
* :func:`cronbach_alpha`: coefficient alpha with systems as examinees and items as test
  items, pairwise-complete for missing data.
* :func:`consistency`: alpha and the standard error of measurement of every metric,
  rater x trait and judgment, optionally averaged over random subsets of ``n_items`` items.
* :func:`stability`: test-retest Pearson correlation of system means across metric runs.
* :func:`spearman_brown`, :func:`items_needed`: the Spearman-Brown projection.

Inputs come through :mod:`bayesmeta.data.select`; results use the one table shape of
:mod:`bayesmeta.summaries` (index ``estimand`` then design labels).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from itertools import combinations
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import xarray as xr
from scipy import stats

from bayesmeta.data.schema import validate
from bayesmeta.data.select import (
    check_metrics,
    describe,
    pick_reference,
    quantities,
    require,
)
from bayesmeta.data.transform import rank_normalize
from bayesmeta.options import resolve_seed
from bayesmeta.results import Result, data_hash
from bayesmeta.summaries import CI_PROB, check_ci_prob


def pairwise_covariance(y: np.ndarray) -> np.ndarray:
    """Covariance matrix of the columns of ``y`` (..., n, J) by pairwise deletion of NaNs
    (each entry uses the rows where both columns are observed; ``ddof=1``)."""
    y = np.asarray(y, dtype=float)
    m = ~np.isnan(y)
    yz = np.where(m, y, 0.0)
    mf = m.astype(float)
    n = np.einsum("...sj,...sk->...jk", mf, mf)
    sx = np.einsum("...sj,...sk->...jk", yz, mf)  # sum of y_j over rows where k observed
    sxy = np.einsum("...sj,...sk->...jk", yz, yz)
    sy = np.swapaxes(sx, -1, -2)
    with np.errstate(invalid="ignore", divide="ignore"):
        cov = (sxy - sx * sy / n) / (n - 1)
    return cov


def cronbach_alpha(y: np.ndarray) -> np.ndarray:
    r"""Coefficient alpha of a (..., examinees, items) array, pairwise-complete.

    .. math:: \alpha = \frac{J}{J-1}\Big(1 - \frac{\operatorname{tr} C}{\mathbf 1^\top C
              \mathbf 1}\Big)

    where :math:`C` is the J x J covariance matrix of the items across examinees, computed
    by pairwise deletion when values are missing (as MetricEval's ``coeff_alpha_miss`` and
    R's ``psych::alpha(use = "pairwise")``). For complete data this is Cronbach's (1951)
    alpha, Eq. 2 of MetricEval.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmeta.reliability.classical import cronbach_alpha
    >>> y = np.array([[1., 2, 2], [2, 3, 3], [4, 4, 5], [5, 5, 4]])
    >>> round(float(cronbach_alpha(y)), 4)
    0.9444

    R equivalent: ``psych::alpha(y)$total$raw_alpha`` (pingouin: ``cronbach_alpha``).
    """
    y = np.asarray(y, dtype=float)
    J = y.shape[-1]
    if J < 2:
        raise ValueError(f"alpha needs at least 2 items, got {J}.")
    cov = pairwise_covariance(y)
    trace = np.trace(cov, axis1=-2, axis2=-1)
    total = cov.sum(axis=(-2, -1))
    # a total-score variance that is zero up to rounding (items cancelling exactly, or
    # constant items) leaves alpha undefined: NaN, not 1e16 from dividing by round-off
    undefined = ~(np.abs(total) > 1e-10 * np.abs(trace))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(undefined, np.nan, J / (J - 1) * (1 - trace / total))


def feldt_interval(alpha: float | np.ndarray, n: float | np.ndarray, k: float | np.ndarray,
                   ci_prob: float = CI_PROB) -> tuple[np.ndarray, np.ndarray]:
    r"""Feldt's (1965) F-based interval of coefficient alpha from ``n`` examinees (for
    :func:`consistency`: systems) and ``k`` test items (parts).

    .. math:: \big[\,1 - (1-\hat\alpha)\,F_{1-a/2}(n-1, (n-1)(k-1)),\;
              1 - (1-\hat\alpha)\,F_{a/2}(n-1, (n-1)(k-1))\,\big], \qquad a = 1 - p

    with :math:`F_q` the q-quantile of the F distribution, from
    :math:`(1-\alpha)/(1-\hat\alpha) \sim F(n-1, (n-1)(k-1))` under the
    essentially-parallel model with normal scores. NaN where ``alpha`` is NaN, ``n < 2`` or
    ``k < 2``.

    Examples
    --------
    >>> from bayesmeta.reliability.classical import feldt_interval
    >>> lo, hi = feldt_interval(0.8, 30, 10, 0.95)
    >>> round(float(lo), 4), round(float(hi), 4)
    (0.6734, 0.8916)

    R equivalent: ``psych::alpha.ci(alpha, n.obs = n, n.var = k, p.val = 1 - ci_prob)``.

    References
    ----------
    Feldt (1965), The approximate sampling distribution of Kuder-Richardson reliability
    coefficient twenty, Psychometrika 30(3).
    """
    ci_prob = check_ci_prob(ci_prob)
    a = np.asarray(alpha, dtype=float)
    n = np.asarray(n, dtype=float)
    k = np.asarray(k, dtype=float)
    ok = (n >= 2) & (k >= 2) & ~np.isnan(a)
    df1 = np.where(ok, n - 1, 1.0)
    df2 = np.where(ok, (n - 1) * (k - 1), 1.0)
    tail = (1 - ci_prob) / 2
    low = 1 - (1 - a) * stats.f.ppf(1 - tail, df1, df2)
    high = 1 - (1 - a) * stats.f.ppf(tail, df1, df2)
    return np.where(ok, low, np.nan), np.where(ok, high, np.nan)


def sem_interval(sem: float | np.ndarray, n: float | np.ndarray, k: float | np.ndarray,
                 ci_prob: float = CI_PROB) -> tuple[np.ndarray, np.ndarray]:
    r"""Chi-square confidence interval of the SEM of a system mean from ``n`` systems and
    ``k`` items (the model of :func:`feldt_interval`).

    With complete data, :math:`s_X^2(1-\hat\alpha) = \mathrm{MS}_e / k`, the residual mean
    square of the two-way (system x item) ANOVA over the number of items, so
    :math:`\nu\,\widehat{\mathrm{SEM}}^2 / \mathrm{SEM}^2 \sim \chi^2_\nu` with
    :math:`\nu = (n-1)(k-1)` under the additive model with normal errors that gives Feldt's
    interval of alpha:

    .. math:: \Big[\,\widehat{\mathrm{SEM}}\sqrt{\nu / \chi^2_{\nu,\,1-a/2}},\;
              \widehat{\mathrm{SEM}}\sqrt{\nu / \chi^2_{\nu,\,a/2}}\,\Big],
              \qquad a = 1 - p.

    NaN where ``sem`` is NaN, ``n < 2`` or ``k < 2``. With pairwise-complete missing
    cells, ``n`` counts the systems with a score and the interval is approximate.

    Examples
    --------
    >>> from bayesmeta.reliability.classical import sem_interval
    >>> lo, hi = sem_interval(0.1, 17, 100, 0.95)
    >>> round(float(lo), 4), round(float(hi), 4)
    (0.0966, 0.1036)

    R equivalent: ``sem * sqrt(nu / qchisq(c(1 - a / 2, a / 2), nu))`` with
    ``nu = (n - 1) * (k - 1)``.

    References
    ----------
    Burdick and Graybill (1992), *Confidence Intervals on Variance Components*, Sec. 2
    (the interval of an error variance from its mean square).
    """
    ci_prob = check_ci_prob(ci_prob)
    sem = np.asarray(sem, dtype=float)
    n = np.asarray(n, dtype=float)
    k = np.asarray(k, dtype=float)
    ok = (n >= 2) & (k >= 2) & ~np.isnan(sem)
    nu = np.where(ok, (n - 1) * (k - 1), 1.0)
    tail = (1 - ci_prob) / 2
    low = sem * np.sqrt(nu / stats.chi2.ppf(1 - tail, nu))
    high = sem * np.sqrt(nu / stats.chi2.ppf(tail, nu))
    return np.where(ok, low, np.nan), np.where(ok, high, np.nan)


def spearman_brown(reliability: float | np.ndarray, factor: float | np.ndarray) -> np.ndarray:
    r"""Reliability of a test lengthened by ``factor`` (Spearman-Brown prophecy).

    .. math:: \rho_k = \frac{k\rho}{1 + (k-1)\rho}

    Examples
    --------
    >>> import bayesmeta as bm
    >>> round(float(bm.spearman_brown(0.8, 2)), 4)
    0.8889
    """
    r = np.asarray(reliability, dtype=float)
    k = np.asarray(factor, dtype=float)
    return k * r / (1 + (k - 1) * r)


def items_needed(
    reliability: float | np.ndarray, n_items: int | np.ndarray, target: float = 0.9
) -> np.ndarray:
    r"""Number of items needed for ``target`` reliability, by Spearman-Brown.

    .. math:: J^* = \Big\lceil J\,\frac{\rho^*(1-\rho)}{\rho(1-\rho^*)} \Big\rceil

    Returns NaN where ``reliability <= 0``.

    Examples
    --------
    >>> import bayesmeta as bm
    >>> int(bm.items_needed(0.8, 50, target=0.9))
    113
    """
    if not 0 < target < 1:
        raise ValueError(f"target must be in (0, 1), got {target}.")
    r = np.asarray(reliability, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        need = np.asarray(n_items, dtype=float) * target * (1 - r) / (r * (1 - target))
        need = np.where(r > 0, np.ceil(need - 1e-9), np.nan)
    return need


def standard_error_of_measurement(system_means: np.ndarray, reliability: np.ndarray) -> np.ndarray:
    r"""SEM of a system's mean score: :math:`\sigma_X\sqrt{1-\rho}` (MetricEval Sec. 4.1.1),
    with :math:`\sigma_X` the sample SD (``ddof=1``) of system means along the last axis."""
    sd = np.nanstd(system_means, axis=-1, ddof=1)
    with np.errstate(invalid="ignore"):
        return sd * np.sqrt(1 - reliability)


class _ByEstimand(Result):
    """A classical result whose ``plot`` draws one estimand at a time."""

    default_estimand: ClassVar[str] = ""

    def plot(self, ax: Any = None, column: str | None = None, *,
             estimand: str | None = None) -> Any:
        """Forest plot of one estimand (default: the first) over its rows: the classical
        estimate as a cross with its interval. Returns the Figure."""
        first = self._table.index.get_level_values("estimand")[0]
        return self.plot_estimand(estimand or self.default_estimand or first, ax=ax,
                                  column=column)


class ConsistencyResult(_ByEstimand):
    """Coefficient alpha and SEM per metric, rater x trait and judgment (see
    :func:`consistency`)."""

    default_estimand = "alpha"


class StabilityResult(_ByEstimand):
    """Test-retest reliability per metric (see :func:`stability`)."""

    default_estimand = "stability"


def consistency(
    data: xr.Dataset,
    *,
    n_items: int | None = None,
    n_subsets: int = 200,
    random_seed: int | None = None,
    metrics: Sequence[str] | None = None,
    raters: bool | Sequence[str] | None = None,
    judgments: bool | Sequence[str] = True,
    run: Any = None,
    reference: Any = "first",
    normalize: bool = False,
    ci_prob: float = CI_PROB,
) -> ConsistencyResult:
    r"""Metric consistency: coefficient alpha of system means over items, with SEM.

    Systems are the examinees and items the test items (MetricEval Sec. 3.1.2, Eq. 2). For
    each variable (metric, rater x trait rating, continuous judgment) the (system x item)
    matrix gives coefficient alpha (pairwise-complete when values are missing) and the
    standard error of measurement of a system's mean score,

    .. math:: \alpha = \frac{J}{J-1}\Big(1 - \frac{\operatorname{tr} C}{\mathbf 1^\top C
              \mathbf 1}\Big), \qquad \mathrm{SEM} = s_X\sqrt{1-\alpha}

    with :math:`C` the J x J covariance of the items across systems and :math:`s_X` the
    sample SD (``ddof=1``) of the system means (MetricEval Sec. 4.1.1).

    With ``n_items`` smaller than the number of items, alpha and SEM are averaged over
    ``n_subsets`` random subsets of ``n_items`` items (MetricEval's ``metric_consistency``
    with ``N``; duplicate subsets removed) and ``classical_low`` / ``classical_high`` give
    the central ``ci_prob`` range of each estimand across subsets: how much the consistency
    of a test set of that size depends on which items it holds. Not a confidence interval.
    With all items, ``classical_low`` / ``classical_high`` of alpha are Feldt's (1965)
    F-based confidence interval (:func:`feldt_interval`, ``n`` = systems with a score,
    ``k`` = items) and those of SEM the chi-square interval of the same model
    (:func:`sem_interval`: :math:`\mathrm{SEM}^2` is the ANOVA's residual mean square over
    the number of items).

    Parameters
    ----------
    data : xarray.Dataset
        A bayesmeta dataset.
    n_items : int, optional
        Test-set size for the random-subset version (default: all items, no subsets).
    n_subsets : int
        Number of random subsets.
    random_seed : int, optional
        Seed for the subsets (drawn with :func:`bayesmeta.options.resolve_seed` and recorded
        in ``result.provenance`` when omitted).
    metrics : list of str, optional
        Metrics to include (default all; ``[]`` for none).
    raters : None, bool or list of str
        Ratings to include, labelled ``"<rater>.<trait>"``: None/True all, False none, or
        raters (all their traits) and ``"<rater>.<trait>"`` labels.
    judgments : bool or list of str
        Continuous judgments to include (labelled by their trait).
    run : label, "mean" or None
        Metric run by label (default the first; ``"mean"`` averages runs).
    reference : {"first", "mean", "max", "min"} or label
        One score per output for metrics with a ``reference`` dim.
    normalize : bool
        Rank-normalise each variable over all outputs first (MetricEval App. A.2).
    ci_prob : float
        Probability of Feldt's interval (all items) or of the range across subsets.

    Returns
    -------
    ConsistencyResult
        ``summary()`` indexed by ``(estimand, variable)`` with estimands ``"alpha"`` and
        ``"sem"``; columns ``classical``, ``classical_low`` and ``classical_high``: with
        subsets the range over them (``classical_ci_kind = "range over random item
        subsets"``), else Feldt's interval of alpha and the chi-square interval of SEM
        (``classical_ci_kind = "Feldt F (alpha), chi-square (SEM)"``).
        ``details()``: ``kind`` (metric, rating, judgment), ``n_systems``, ``n_items``,
        ``sd_system_mean``.

    References
    ----------
    Cronbach (1951); Xiao et al. (2023), *Evaluating Evaluation Metrics*, Sec. 3.1.2, 4.1.1.

    Examples
    --------
    >>> import bayesmeta as bm
    >>> res = bm.consistency(bm.datasets.simulated())
    >>> alpha = res.summary().xs("alpha", level="estimand")["classical"]
    >>> bool((alpha <= 1).all()), len(alpha)
    (True, 24)
    >>> res.details().loc[("alpha", "Rater.1.COH"), "kind"]
    'rating'

    R equivalent: ``psych::alpha(t(scores), use = "pairwise")$total$raw_alpha``.
    """
    ci_prob = check_ci_prob(ci_prob)
    q = quantities(data, metrics=metrics, raters=raters, judgments=judgments, run=run,
                   reference=reference, normalize=normalize)
    y = np.asarray(q.values, dtype=float)  # (V, S, J)
    S, J = y.shape[1], y.shape[2]
    require(S, 2, "system", "consistency")
    require(J, 2, "item", "consistency")
    seed = None
    if n_items is None or n_items == J:
        subsets = np.arange(J)[None, :]
    else:
        if isinstance(n_items, bool) or not isinstance(n_items, int | np.integer) \
                or not 2 <= n_items <= J:
            raise ValueError(f"n_items must be between 2 and the number of items ({J}), "
                             f"got {n_items!r}.")
        if isinstance(n_subsets, bool) or not isinstance(n_subsets, int | np.integer) \
                or n_subsets < 1:
            raise ValueError(f"n_subsets must be an integer >= 1, got {n_subsets!r}.")
        seed = resolve_seed(random_seed)
        rng = np.random.default_rng(seed)
        draws = np.sort(np.stack([rng.choice(J, n_items, replace=False)
                                  for _ in range(n_subsets)]), axis=1)
        subsets = np.unique(draws, axis=0)
    V, K = y.shape[0], len(subsets)
    alphas, sems, sds = (np.empty((V, K)) for _ in range(3))
    for k, cols in enumerate(subsets):
        sub = y[:, :, cols]
        alphas[:, k] = cronbach_alpha(sub)
        with np.errstate(invalid="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # all-missing systems: NaN mean
            means = np.nanmean(sub, axis=2)
        sds[:, k] = np.nanstd(means, axis=1, ddof=1)
        sems[:, k] = standard_error_of_measurement(means, alphas[:, k])
    labels = [str(v) for v in q["variable"].values]
    index = pd.MultiIndex.from_product([["alpha", "sem"], labels],
                                       names=["estimand", "variable"])
    table = pd.DataFrame({"classical": np.concatenate([alphas.mean(1), sems.mean(1)])},
                         index=index)
    details = pd.DataFrame(
        {
            "kind": np.tile(np.asarray(q["kind"].values).astype(str), 2),
            "n_systems": S,
            "n_items": subsets.shape[1],
            "sd_system_mean": np.tile(sds.mean(axis=1), 2),
        },
        index=index,
    )
    info = {"data": describe(data), "estimator": "coefficient alpha (pairwise-complete)",
            "SEM": "SD of system means x sqrt(1 - alpha)"}
    if normalize:
        info["scores"] = "rank-normalised (inverse-normal ECDF, MetricEval App. A.2)"
    kind = None
    if K > 1:
        lo, hi = (1 - ci_prob) / 2, 1 - (1 - ci_prob) / 2
        table["classical_low"] = np.concatenate([np.quantile(alphas, lo, axis=1),
                                                 np.quantile(sems, lo, axis=1)])
        table["classical_high"] = np.concatenate([np.quantile(alphas, hi, axis=1),
                                                  np.quantile(sems, hi, axis=1)])
        kind = "range over random item subsets"
        info["subsets"] = (f"{K} distinct random subsets of {subsets.shape[1]} items (seed "
                           f"{seed}); classical = mean over subsets")
    else:
        # Feldt's F interval of alpha: systems are the examinees (n), items the parts (k);
        # n counts the systems with at least one observed score of the variable
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            n_sys = (~np.isnan(np.nanmean(y, axis=2))).sum(axis=1)
        lo, hi = feldt_interval(alphas[:, 0], n_sys, J, ci_prob)
        s_lo, s_hi = sem_interval(sems[:, 0], n_sys, J, ci_prob)
        table["classical_low"] = np.concatenate([lo, s_lo])
        table["classical_high"] = np.concatenate([hi, s_hi])
        kind = "Feldt F (alpha), chi-square (SEM)"
        info["interval"] = ("Feldt (1965) F interval of alpha and the chi-square interval of "
                            "SEM^2 = MS_residual / k, df (n - 1)(k - 1), with n = systems, "
                            "k = items")
    notes = []
    n_missing = int(np.isnan(y).sum())
    if n_missing:
        notes.append(f"{n_missing} missing (variable, system, item) cells were left out "
                     f"pairwise, not filled.")
    undefined = [str(v) for v, a in zip(q["variable"].values, alphas.mean(axis=1),
                                        strict=True) if np.isnan(a)]
    if undefined:
        notes.append(f"alpha is undefined (NaN) for {', '.join(undefined[:8])}"
                     f"{' ...' if len(undefined) > 8 else ''}: the variance of the total "
                     f"score over systems is zero (constant or exactly cancelling items), "
                     f"or too few observed cells.")
    return ConsistencyResult(table, title="Metric consistency (coefficient alpha)",
                             info=info, notes=notes, details=details, ci_prob=ci_prob,
                             classical_ci_kind=kind, random_seed=seed,
                             data_hash=data_hash(data))


def stability(
    data: xr.Dataset,
    *,
    metrics: Sequence[str] | None = None,
    reference: Any = "first",
    ci_prob: float = CI_PROB,
) -> StabilityResult:
    r"""Metric stability: test-retest reliability of system mean scores across runs.

    For each metric, the Pearson correlation across systems between the mean scores (over
    items) of two runs (MetricEval Sec. 3.1.1 and its ``metric_stability``). With more
    than two runs, the average of the pairwise correlations is reported. With two runs
    and more than 3 systems, ``classical_low`` / ``classical_high`` are the Fisher-z
    interval :math:`\tanh\big(\operatorname{artanh} r \pm z_{(1+p)/2}/\sqrt{S-3}\big)`.

    Parameters
    ----------
    data : xarray.Dataset
        A bayesmeta dataset with at least two metric runs (dim ``run``).
    metrics : list of str, optional
        Metrics to include (default all).
    reference : {"first", "mean", "max", "min"} or label
        One score per output for metrics with a ``reference`` dim.
    ci_prob : float
        Probability of the Fisher-z interval.

    Returns
    -------
    StabilityResult
        ``summary()`` indexed by ``(estimand, metric)`` with estimand ``"stability"``;
        columns ``classical`` and (two runs) ``classical_low`` / ``classical_high``
        (``classical_ci_kind = "Fisher z"``). ``details()``: ``n_systems``, ``n_runs``.

    Examples
    --------
    >>> import bayesmeta as bm
    >>> st = bm.stability(bm.datasets.simulated()).summary()
    >>> bool(st.loc[("stability", "metric01.COH"), "classical"] > 0.999)
    True

    R equivalent: ``cor(rowMeans(run1), rowMeans(run2))``; the interval of
    ``cor.test(...)$conf.int`` (with ``conf.level = 0.94``).
    """
    ci_prob = check_ci_prob(ci_prob)
    validate(data, warn_missing=False)
    labels = check_metrics(data, metrics)
    score = pick_reference(data["score"], reference)
    if metrics is not None:
        score = score.sel(metric=labels)
    R = score.sizes["run"]
    require(R, 2, "run", "stability")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-missing system: NaN mean
        means = score.mean("item", skipna=True).transpose("metric", "run", "system").values
    S = means.shape[-1]
    r = np.array([np.mean([_pearson(means[m, a], means[m, b])
                           for a, b in combinations(range(R), 2)])
                  for m in range(means.shape[0])])
    index = pd.MultiIndex.from_arrays(
        [np.full(len(r), "stability", dtype=object),
         np.asarray(score["metric"].values).astype(str).astype(object)],
        names=["estimand", "metric"])
    table = pd.DataFrame({"classical": r}, index=index)
    details = pd.DataFrame({"n_systems": S, "n_runs": R}, index=index)
    kind = None
    if R == 2 and S > 3:
        zc = stats.norm.ppf(1 - (1 - ci_prob) / 2) / np.sqrt(S - 3)
        with np.errstate(divide="ignore"):
            z = np.arctanh(np.clip(r, -1, 1))
        table["classical_low"] = np.tanh(z - zc)
        table["classical_high"] = np.tanh(z + zc)
        kind = "Fisher z"
    notes = []
    if R > 2:
        notes.append(f"{R} runs: classical is the mean of the {R * (R - 1) // 2} pairwise "
                     f"correlations; no interval.")
    elif S <= 3:
        notes.append(f"{S} systems: too few for a Fisher-z interval (needs more than 3).")
    return StabilityResult(
        table, title="Metric stability (test-retest correlation of system means)",
        info={"data": describe(data), "estimator": "Pearson r between run means"},
        notes=notes, details=details, ci_prob=ci_prob, classical_ci_kind=kind,
        data_hash=data_hash(data),
    )


def _pearson(x: np.ndarray, y: np.ndarray) -> float:
    ok = ~(np.isnan(x) | np.isnan(y))
    x, y = x[ok], y[ok]
    if x.size < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    return float(np.corrcoef(x, y)[0, 1])



__all__ = [
    "consistency",
    "cronbach_alpha",
    "feldt_interval",
    "items_needed",
    "rank_normalize",
    "spearman_brown",
    "stability",
    "standard_error_of_measurement",
]
