"""Classical reliability of metrics and raters (MetricEval, Xiao et al. 2023, Sec. 3.1).

* :func:`rank_normalize`: the inverse-normal rank transform of MetricEval App. A.2.
* :func:`cronbach_alpha`: coefficient alpha with systems as examinees and items as test
  items, pairwise-complete for missing data.
* :func:`consistency`: alpha and the standard error of measurement of every metric and
  rater x trait, optionally averaged over random subsets of ``n_items`` items.
* :func:`stability`: test-retest Pearson correlation of system means across metric runs.
* :func:`spearman_brown`, :func:`items_needed`: the Spearman-Brown projection.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

import numpy as np
import pandas as pd
import xarray as xr
from scipy import stats

from bayesmeta.classical._select import pick_run, quantities
from bayesmeta.data.schema import validate
from bayesmeta.results import Result


def rank_normalize(
    x: np.ndarray | pd.Series, *, squeeze: float = 0.001, standardize: bool = True
) -> np.ndarray:
    r"""Inverse-normal transform of the empirical CDF (MetricEval App. A.2).

    .. math:: x^*_j = \Phi^{-1}\big(c + (1 - 2c)\,\hat F(x_j)\big),
              \quad \hat F(x_j) = \tfrac{1}{N}\sum_i I(x_i \le x_j)

    The paper's formula is :math:`\Phi^{-1}(\hat F)`, which is infinite at the maximum;
    MetricEval's code squeezes the ECDF into ``[c, 1 - c]`` with ``c = 0.001`` and then
    standardises (mean 0, population SD 1). Both are reproduced here. NaNs stay NaN and do
    not enter the ECDF.

    Examples
    --------
    >>> import numpy as np, bayesmeta as bm
    >>> z = bm.rank_normalize(np.array([3.0, 1.0, 2.0, 10.0]))
    >>> bool(np.all(np.argsort(z) == [1, 2, 0, 3]))
    True
    """
    x = np.asarray(x, dtype=float)
    out = np.full_like(x, np.nan)
    ok = ~np.isnan(x)
    v = x[ok]
    if v.size == 0:
        return out
    ecdf = np.searchsorted(np.sort(v), v, side="right") / v.size
    z = stats.norm.ppf(squeeze + (1 - 2 * squeeze) * ecdf)
    if standardize:
        sd = z.std()
        z = (z - z.mean()) / sd if sd > 0 else z - z.mean()
    out[ok] = z
    return out


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
    >>> from bayesmeta.classical.reliability import cronbach_alpha
    >>> y = np.array([[1., 2, 2], [2, 3, 3], [4, 4, 5], [5, 5, 4]])
    >>> round(float(cronbach_alpha(y)), 4)
    0.9412
    """
    y = np.asarray(y, dtype=float)
    J = y.shape[-1]
    if J < 2:
        raise ValueError(f"alpha needs at least 2 items, got {J}.")
    cov = pairwise_covariance(y)
    trace = np.trace(cov, axis1=-2, axis2=-1)
    total = cov.sum(axis=(-2, -1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return J / (J - 1) * (1 - trace / total)


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


class ConsistencyResult(Result):
    """Coefficient alpha and SEM per metric and rater x trait (see :func:`consistency`)."""


class StabilityResult(Result):
    """Test-retest reliability per metric (see :func:`stability`)."""


def consistency(
    data: xr.Dataset,
    n_items: int | None = None,
    n_subsets: int = 200,
    random_seed: int | None = None,
    *,
    metrics: Sequence[str] | None = None,
    ratings: bool | Sequence[str] = True,
    run: str | int | None = None,
    normalize: bool = False,
    ci_prob: float = 0.95,
) -> ConsistencyResult:
    r"""Metric consistency: coefficient alpha of system means over items, with SEM.

    Systems are the examinees and items the test items (MetricEval Sec. 3.1.2, Eq. 2). For
    each metric (and each rater x trait of the ratings) the (system x item) matrix gives
    alpha (pairwise-complete when values are missing) and the standard error of
    measurement of a system's mean score, :math:`\mathrm{SEM} = s_X\sqrt{1-\alpha}` with
    :math:`s_X` the sample SD of system means.

    With ``n_items`` smaller than the number of items, alpha and SEM are averaged over
    ``n_subsets`` random subsets of ``n_items`` items (MetricEval's ``metric_consistency``
    with ``N``; duplicates removed) and ``classical_low`` / ``classical_high`` give the
    central ``ci_prob`` range of alpha across subsets: how much the consistency of a test
    set of that size depends on which items it holds.

    Parameters
    ----------
    data : xarray.Dataset
        A bayesmeta dataset.
    n_items : int, optional
        Test-set size for the random-subset version (default: all items, no subsets).
    n_subsets : int
        Number of random subsets.
    random_seed : int, optional
        Seed for the subsets.
    metrics : list of str, optional
        Metrics to include (default all).
    ratings : bool or list of str
        Include rater x trait ratings (labels ``"<rater>.<trait>"``).
    run : label, int, "mean" or None
        Metric run to use (default the first; ``"mean"`` averages runs).
    normalize : bool
        Rank-normalise each quantity over all outputs first (MetricEval App. A.2).

    Returns
    -------
    ConsistencyResult
        ``summary()`` indexed by quantity, columns ``kind``, ``n_systems``, ``n_items``,
        ``classical`` (alpha), ``sem``, ``sd_system_mean`` and, with subsets,
        ``classical_low`` / ``classical_high``.

    References
    ----------
    Cronbach (1951); Xiao et al. (2023), *Evaluating Evaluation Metrics*, Sec. 3.1.2, 4.1.1.

    Examples
    --------
    >>> import bayesmeta as bm
    >>> res = bm.consistency(bm.datasets.simulated())
    >>> bool((res.summary()["classical"] <= 1).all())
    True

    R equivalent: ``psych::alpha(t(scores), use = "pairwise")$total$raw_alpha``.
    """
    validate(data, warn_missing=False)
    q = quantities(data, metrics=metrics, ratings=ratings, run=run, normalize=normalize)
    y = q.values  # (Q, S, J)
    S, J = y.shape[1], y.shape[2]
    if n_items is None or n_items == J:
        subsets = np.arange(J)[None, :]
    else:
        if not 2 <= n_items <= J:
            raise ValueError(f"n_items must be between 2 and the number of items ({J}), "
                             f"got {n_items}.")
        if n_subsets < 1:
            raise ValueError(f"n_subsets must be >= 1, got {n_subsets}.")
        rng = np.random.default_rng(random_seed)
        draws = np.sort(np.stack([rng.choice(J, n_items, replace=False)
                                  for _ in range(n_subsets)]), axis=1)
        subsets = np.unique(draws, axis=0)
    alphas = np.empty((y.shape[0], len(subsets)))
    sems = np.empty_like(alphas)
    sds = np.empty_like(alphas)
    for k, cols in enumerate(subsets):
        sub = y[:, :, cols]
        alphas[:, k] = cronbach_alpha(sub)
        with np.errstate(invalid="ignore"):
            means = np.nanmean(sub, axis=2)
        sds[:, k] = np.nanstd(means, axis=1, ddof=1)
        sems[:, k] = standard_error_of_measurement(means, alphas[:, k])
    table = pd.DataFrame(
        {
            "kind": q["kind"].values,
            "n_systems": S,
            "n_items": subsets.shape[1],
            "classical": alphas.mean(axis=1),
            "sem": sems.mean(axis=1),
            "sd_system_mean": sds.mean(axis=1),
        },
        index=pd.Index(q["quantity"].values.astype(str), name="quantity"),
    )
    info = {"data": _describe(data), "estimator": "coefficient alpha (pairwise-complete)",
            "SEM": "SD of system means x sqrt(1 - alpha)"}
    if normalize:
        info["scores"] = "rank-normalised (inverse-normal ECDF, MetricEval App. A.2)"
    if len(subsets) > 1:
        lo, hi = (1 - ci_prob) / 2, 1 - (1 - ci_prob) / 2
        table["classical_low"] = np.quantile(alphas, lo, axis=1)
        table["classical_high"] = np.quantile(alphas, hi, axis=1)
        info["subsets"] = (f"{len(subsets)} random subsets of {subsets.shape[1]} items "
                           f"(seed {random_seed}); interval = central {ci_prob:.0%} across subsets")
    notes = []
    n_missing = int(np.isnan(y).sum())
    if n_missing:
        notes.append(f"{n_missing} missing (system, item) cells were left out pairwise, "
                     f"not filled.")
    return ConsistencyResult(table, title="Metric consistency (coefficient alpha)",
                             info=info, notes=notes, ci_prob=ci_prob)


def stability(
    data: xr.Dataset,
    *,
    metrics: Sequence[str] | None = None,
    ci_prob: float = 0.95,
) -> StabilityResult:
    r"""Metric stability: test-retest reliability of system mean scores across runs.

    For each metric, the Pearson correlation across systems between the mean scores of two
    runs (MetricEval Sec. 3.1.1 and its ``metric_stability``). With more than two runs, the
    average of the pairwise correlations is reported. ``classical_low`` /
    ``classical_high`` are the Fisher-z interval of a single correlation (two runs only).

    Returns
    -------
    StabilityResult
        ``summary()`` indexed by metric with ``classical``, ``classical_low``,
        ``classical_high``, ``n_systems``, ``n_runs``.

    Examples
    --------
    >>> import bayesmeta as bm
    >>> st = bm.stability(bm.datasets.simulated()).summary()
    >>> bool(st.loc["metric01.COH", "classical"] > 0.999)
    True

    R equivalent: ``cor(rowMeans(run1), rowMeans(run2))``.
    """
    validate(data, warn_missing=False)
    if "score" not in data:
        raise ValueError("stability needs metric scores: data has no 'score' variable.")
    R = data.sizes["run"]
    if R < 2:
        raise ValueError(f"stability needs at least 2 runs in dim 'run', got {R}.")
    score = data["score"]
    if metrics is not None:
        unknown = [m for m in metrics if m not in score["metric"].values]
        if unknown:
            raise ValueError(f"unknown metric(s) {', '.join(map(repr, unknown))}.")
        score = score.sel(metric=list(metrics))
    means = score.mean("item", skipna=True).transpose("metric", "run", "system").values
    S = means.shape[-1]
    rows = []
    for m in range(means.shape[0]):
        rs = [_pearson(means[m, a], means[m, b]) for a, b in combinations(range(R), 2)]
        rows.append(np.mean(rs))
    r = np.array(rows)
    table = pd.DataFrame({"classical": r, "n_systems": S, "n_runs": R},
                         index=pd.Index(score["metric"].values.astype(str), name="metric"))
    if R == 2 and S > 3:
        zc = stats.norm.ppf(1 - (1 - ci_prob) / 2) / np.sqrt(S - 3)
        with np.errstate(divide="ignore"):
            z = np.arctanh(np.clip(r, -1, 1))
        table["classical_low"] = np.tanh(z - zc)
        table["classical_high"] = np.tanh(z + zc)
    return StabilityResult(
        table, title="Metric stability (test-retest correlation of system means)",
        info={"data": _describe(data), "estimator": "Pearson r between run means",
              "interval": f"Fisher z, {ci_prob:.0%}" if R == 2 else "none (> 2 runs)"},
        ci_prob=ci_prob,
    )


def _pearson(x: np.ndarray, y: np.ndarray) -> float:
    ok = ~(np.isnan(x) | np.isnan(y))
    x, y = x[ok], y[ok]
    if x.size < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    return float(np.corrcoef(x, y)[0, 1])


def _describe(ds: xr.Dataset) -> str:
    return ", ".join(f"{k} {v}" for k, v in ds.sizes.items()
                     if k in ("system", "item", "rater", "trait", "metric", "run"))


__all__ = [
    "consistency",
    "cronbach_alpha",
    "items_needed",
    "pick_run",
    "rank_normalize",
    "spearman_brown",
    "stability",
    "standard_error_of_measurement",
]
