"""Generative simulators with known truth: demo data, recovery tests and calibration.

:func:`simulate_summeval` draws a SummEval-shaped dataset from this model (all parameters
are returned as ``true_*`` variables of the dataset):

Latent quality of output (s, i) on trait t, standardised::

    q[s, i, :] = sqrt(rho_sys) * u[s, :] + sqrt(1 - rho_sys) * v[s, i, :]
    u[s, :] ~ N(0, R),  v[s, i, :] ~ N(0, R)

``R`` is the trait correlation matrix and ``rho_sys`` the share of quality variance that
lies between systems. Ratings follow the ordinal factor model (probit, thresholds per rater
and trait)::

    y*[s, i, r, t] = lambda[r, t] * q[s, i, t] + sqrt(1 - lambda[r, t]^2) * e,  e ~ N(0, 1)
    rating = 1 + #{k : y* > tau[r, t, k]}

Metric m, meant for trait t_m, with run-to-run noise sigma_run[m] (0 for deterministic
metrics)::

    score[s, i, m, run] = b[m] * q[s, i, t_m] + sqrt(1 - b[m]^2) * w[s, i, m]
                          + sigma_run[m] * z[s, i, m, run]

:func:`simulate_true_score` draws scores from the generalizability model of the
``true_score`` model card with known variance components.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from bayesmeta.data.schema import RATING_DIMS, SCORE_DIMS

TRAITS = ("COH", "CON", "FLU", "REL")
DEFAULT_TRAIT_CORR = np.array(
    [
        [1.00, 0.50, 0.55, 0.85],
        [0.50, 1.00, 0.65, 0.60],
        [0.55, 0.65, 1.00, 0.55],
        [0.85, 0.60, 0.55, 1.00],
    ]
)


def _cut_labels(n_categories: int) -> list[str]:
    return [f"{k}->{k + 1}" for k in range(1, n_categories)]


def simulate_summeval(
    random_seed: int = 0,
    *,
    n_systems: int = 17,
    n_items: int = 100,
    n_raters: int = 3,
    n_categories: int = 5,
    trait_corr: np.ndarray | None = None,
    system_share: float = 0.35,
    n_metrics: int = 12,
    stochastic_share: float = 0.25,
) -> xr.Dataset:
    """Draw a SummEval-shaped dataset with known truth (see the module docstring).

    Parameters
    ----------
    random_seed : int
        Seed of :func:`numpy.random.default_rng`; the same seed gives the same data.
    n_systems, n_items, n_raters, n_categories : int
        Shape; ratings are on ``1..n_categories``.
    trait_corr : array (4, 4), optional
        Trait correlation matrix (default: close to SummEval's factor correlations).
    system_share : float
        Share of latent-quality variance between systems (0 < share < 1).
    n_metrics : int
        Number of metrics (two runs each).
    stochastic_share : float
        Share of metrics with run-to-run noise (LLM-judge-like).

    Returns
    -------
    xarray.Dataset
        ``rating``, ``score`` and the true parameters: ``true_quality(system, item,
        trait)``, ``true_trait_corr(trait, trait2)``, ``true_loading(rater, trait)``,
        ``true_threshold(rater, trait, cut)``, ``true_metric_loading(metric)``,
        ``true_run_sd(metric)``.
    """
    if not 0 < system_share < 1:
        raise ValueError(f"system_share must be in (0, 1), got {system_share}.")
    rng = np.random.default_rng(random_seed)
    R = DEFAULT_TRAIT_CORR if trait_corr is None else np.asarray(trait_corr, dtype=float)
    n_traits = R.shape[0]
    traits = list(TRAITS[:n_traits]) if n_traits <= 4 else [f"T{k}" for k in range(n_traits)]
    L = np.linalg.cholesky(R)
    u = rng.standard_normal((n_systems, n_traits)) @ L.T
    v = rng.standard_normal((n_systems, n_items, n_traits)) @ L.T
    q = np.sqrt(system_share) * u[:, None, :] + np.sqrt(1 - system_share) * v

    loading = rng.uniform(0.65, 0.95, size=(n_raters, n_traits))
    # thresholds: a common skewed set per trait, shifted and stretched per rater (leniency)
    base = np.sort(rng.normal(-0.6, 0.9, size=(n_traits, n_categories - 1)), axis=1)
    base = base + np.arange(n_categories - 1) * 0.15
    shift = rng.normal(0, 0.3, size=(n_raters, n_traits, 1))
    stretch = np.exp(rng.normal(0, 0.15, size=(n_raters, n_traits, 1)))
    thresholds = base[None] * stretch + shift
    e = rng.standard_normal((n_systems, n_items, n_raters, n_traits))
    ystar = loading[None, None] * q[:, :, None, :] + np.sqrt(1 - loading**2)[None, None] * e
    rating = 1 + (ystar[..., None] > thresholds[None, None]).sum(-1)

    metric_trait = [traits[m % n_traits] for m in range(n_metrics)]
    metric_loading = rng.uniform(0.2, 0.8, size=n_metrics)
    n_stoch = round(stochastic_share * n_metrics)
    run_sd = np.zeros(n_metrics)
    run_sd[n_metrics - n_stoch:] = rng.uniform(0.2, 0.6, size=n_stoch)
    tidx = np.array([traits.index(t) for t in metric_trait])
    w = rng.standard_normal((n_systems, n_items, n_metrics))
    z = rng.standard_normal((n_systems, n_items, n_metrics, 2))
    score = (
        metric_loading * q[:, :, tidx] + np.sqrt(1 - metric_loading**2) * w
    )[..., None] + run_sd[:, None] * z
    metrics = [f"metric{m + 1:02d}.{metric_trait[m]}" for m in range(n_metrics)]

    systems = [f"S{s + 1:02d}" for s in range(n_systems)]
    items = [f"doc{i + 1:03d}" for i in range(n_items)]
    raters = [f"Rater.{r + 1}" for r in range(n_raters)]
    cuts = _cut_labels(n_categories)
    ds = xr.Dataset(
        {
            "rating": (RATING_DIMS, rating.astype(float),
                       {"scale_min": 1.0, "scale_max": float(n_categories)}),
            "score": (SCORE_DIMS, score),
            "true_quality": (("system", "item", "trait"), q),
            "true_trait_corr": (("trait", "trait2"), R),
            "true_loading": (("rater", "trait"), loading),
            "true_threshold": (("rater", "trait", "cut"), thresholds),
            "true_metric_loading": (("metric",), metric_loading),
            "true_run_sd": (("metric",), run_sd),
        },
        coords={
            "system": systems, "item": items, "rater": raters, "trait": traits,
            "trait2": traits, "cut": cuts, "metric": metrics, "run": ["1", "2"],
            "metric_trait": ("metric", metric_trait),
        },
        attrs={"source": "bayesmeta.simulate.simulate_summeval", "random_seed": random_seed,
               "system_share": system_share},
    )
    return ds


def simulate_true_score(
    random_seed: int = 0,
    *,
    n_systems: int = 17,
    n_items: int = 100,
    n_runs: int = 2,
    sd_system: float | np.ndarray = 0.5,
    sd_item: float | np.ndarray = 0.7,
    sd_system_item: float | np.ndarray = 0.8,
    sd_run: float | np.ndarray = 0.2,
    mu: float | np.ndarray = 0.0,
    n_metrics: int | None = None,
) -> xr.Dataset:
    """Draw metric scores from the generalizability (true-score) model.

    ``score[s, i, m, r] = mu_m + a[s, m] + b[i, m] + c[s, i, m] + e[s, i, m, r]`` with
    independent normal effects of standard deviations ``sd_system``, ``sd_item``,
    ``sd_system_item`` and ``sd_run`` (each a scalar or one value per metric).

    Returns
    -------
    xarray.Dataset
        ``score(system, item, metric, run)`` and the true standard deviations as
        ``true_sd_system(metric)`` etc.
    """
    rng = np.random.default_rng(random_seed)
    sds = [np.atleast_1d(np.asarray(x, dtype=float)) for x in
           (sd_system, sd_item, sd_system_item, sd_run, mu)]
    M = n_metrics or max(len(x) for x in sds)
    sds = [np.broadcast_to(x, (M,)).copy() for x in sds]
    s_sys, s_item, s_si, s_run, mu_ = sds
    a = rng.standard_normal((n_systems, 1, M, 1)) * s_sys[:, None]
    b = rng.standard_normal((1, n_items, M, 1)) * s_item[:, None]
    c = rng.standard_normal((n_systems, n_items, M, 1)) * s_si[:, None]
    e = rng.standard_normal((n_systems, n_items, M, n_runs)) * s_run[:, None]
    score = mu_[:, None] + a + b + c + e
    return xr.Dataset(
        {
            "score": (SCORE_DIMS, score),
            "true_sd_system": ("metric", s_sys),
            "true_sd_item": ("metric", s_item),
            "true_sd_system_item": ("metric", s_si),
            "true_sd_run": ("metric", s_run),
        },
        coords={
            "system": [f"S{s + 1:02d}" for s in range(n_systems)],
            "item": [f"doc{i + 1:03d}" for i in range(n_items)],
            "metric": [f"m{m + 1}" for m in range(M)],
            "run": [str(r + 1) for r in range(n_runs)],
        },
        attrs={"source": "bayesmeta.simulate.simulate_true_score", "random_seed": random_seed},
    )


def _discretise(rng: np.random.Generator, values: np.ndarray, levels: int) -> np.ndarray:
    """Categories 1..levels by ``levels - 1`` thresholds drawn uniformly over the range of the
    values (Onoshima et al. 2019, as paper 001 App. C)."""
    lo, hi = float(np.min(values)), float(np.max(values))
    cuts = np.sort(rng.uniform(lo, hi, size=levels - 1))
    return 1.0 + np.searchsorted(cuts, values, side="left")


def simulate_correlation_study(
    random_seed: int = 0,
    *,
    n_systems: int = 16,
    n_items: int = 100,
    rho_system: float = 0.92,
    rho_item_mean: float = 0.35,
    rho_item_sd: float = 0.14,
    system_sd: float = 0.67,
    within_sd: float = 1.0,
    human_levels: int | None = None,
    metric_levels: tuple[int, ...] = (),
) -> xr.Dataset:
    r"""Metric and human scores from the hierarchical bivariate model of paper 001, App. C.

    For system :math:`j`, the outputs' (metric, human) scores are bivariate normal around the
    system's true levels, with a system-specific correlation:

    .. math::

        (\mu^x_j, \mu^y_j) &\sim N_2\big(0, \tau^2 \begin{pmatrix} 1 & \rho_s \\ \rho_s & 1
                              \end{pmatrix}\big), \qquad
        \rho_j \sim N(\mu_\rho, \sigma_\rho^2) \text{ truncated to } (-1, 1),\\
        (x_{ji}, y_{ji}) &\sim N_2\big((\mu^x_j, \mu^y_j), \sigma^2 \begin{pmatrix}
                              1 & \rho_j \\ \rho_j & 1 \end{pmatrix}\big).

    Item-level correlation estimates :math:`E\rho_j`, system-level correlation
    :math:`\rho_s`. Discrete scores follow Onoshima et al. (2019): ``levels - 1`` thresholds
    drawn uniformly over the range of the continuous scores. The extraction of the paper's
    Algorithm 3 is garbled; this is our reading of App. C.1, with defaults from its App. C.2
    (GPT-4-turbo rows of Table 5: :math:`\rho_s = 0.92`, :math:`\mu_\rho = 0.35`,
    :math:`\sigma_\rho = 0.14`; 16 systems x 100 inputs as SummEval) and the SummEval
    coherence ratio of between-system to within-system sd (about 0.67).

    Parameters
    ----------
    random_seed : int
    n_systems, n_items : int
    rho_system, rho_item_mean, rho_item_sd : float
        :math:`\rho_s`, :math:`\mu_\rho`, :math:`\sigma_\rho`.
    system_sd, within_sd : float
        :math:`\tau` and :math:`\sigma`.
    human_levels : int, optional
        Discretise the human score to this many levels (also returned as ``rating`` on
        1..levels, rater ``"sim"``, trait ``"T"``); None keeps it continuous.
    metric_levels : tuple of int
        Extra metrics: the continuous metric discretised to each number of levels.

    Returns
    -------
    xarray.Dataset
        ``score(system, item, metric, run)`` (metric ``"continuous"`` and ``"levels_<k>"``),
        ``human(system, item)``, ``true_rho_item(system)``, ``true_mean(system, side)``, and
        attrs ``true_global_pearson`` (:math:`(\tau^2\rho_s + \sigma^2 E\rho_j) / (\tau^2 +
        \sigma^2)`, also the input-level value for many systems), ``true_item_pearson``
        (:math:`E\rho_j`), ``true_system_pearson`` (:math:`\rho_s`, infinitely many inputs)
        and ``true_system_pearson_finite`` (the correlation of system means over
        ``n_items`` inputs).

    Examples
    --------
    >>> from bayesmeta.simulate import simulate_correlation_study
    >>> ds = simulate_correlation_study(1, human_levels=13, metric_levels=(5,))
    >>> [str(m) for m in ds["metric"].values]
    ['continuous', 'levels_5']
    """
    from scipy import stats

    rng = np.random.default_rng(random_seed)
    cov_sys = system_sd**2 * np.array([[1.0, rho_system], [rho_system, 1.0]])
    mu = rng.multivariate_normal(np.zeros(2), cov_sys, size=n_systems)  # (S, 2)
    a, b = (-1 - rho_item_mean) / rho_item_sd, (1 - rho_item_mean) / rho_item_sd
    rho = stats.truncnorm.rvs(a, b, loc=rho_item_mean, scale=rho_item_sd, size=n_systems,
                              random_state=rng)
    e1 = rng.standard_normal((n_systems, n_items))
    e2 = rng.standard_normal((n_systems, n_items))
    x = mu[:, :1] + within_sd * e1
    y = mu[:, 1:] + within_sd * (rho[:, None] * e1 + np.sqrt(1 - rho[:, None] ** 2) * e2)
    metrics = [x] + [_discretise(rng, x, k) for k in metric_levels]
    names = ["continuous"] + [f"levels_{k}" for k in metric_levels]
    human = y if human_levels is None else _discretise(rng, y, human_levels)
    e_rho = float(stats.truncnorm.mean(a, b, loc=rho_item_mean, scale=rho_item_sd))
    t2, s2 = system_sd**2, within_sd**2
    coords = {"system": [f"S{s + 1:02d}" for s in range(n_systems)],
              "item": [f"doc{i + 1:03d}" for i in range(n_items)], "metric": names,
              "run": ["1"], "side": ["metric", "human"]}
    ds = xr.Dataset(
        {"score": (SCORE_DIMS, np.stack(metrics, -1)[..., None]),
         "human": (("system", "item"), human),
         "true_rho_item": (("system",), rho),
         "true_mean": (("system", "side"), mu)},
        coords=coords,
        attrs={"source": "bayesmeta.simulate.simulate_correlation_study",
               "random_seed": random_seed,
               "true_global_pearson": (t2 * rho_system + s2 * e_rho) / (t2 + s2),
               "true_item_pearson": e_rho, "true_system_pearson": rho_system,
               "true_system_pearson_finite": (t2 * rho_system + s2 * e_rho / n_items)
               / (t2 + s2 / n_items)},
    )
    if human_levels is not None:
        ds["rating"] = (RATING_DIMS, human[:, :, None, None],
                        {"scale_min": 1.0, "scale_max": float(human_levels)})
        ds = ds.assign_coords(rater=["sim"], trait=["T"])
    return ds


def simulate_rater(
    random_seed: int = 0,
    *,
    n_systems: int = 17,
    n_items: int = 100,
    n_raters: int = 3,
    traits: tuple[str, ...] = ("COH", "CON"),
    n_categories: int = 5,
    mu: float = 0.8,
    sd_system: float = 1.0,
    sd_item: float = 0.5,
    sd_output: float = 1.2,
    sd_severity: float = 0.4,
    panel_gap: float = 0.8,
    sd_log_gap: float = 0.3,
    sd_log_discrimination: float = 0.3,
    missing: float = 0.0,
) -> xr.Dataset:
    r"""Ratings from the many-facet rater model of :mod:`bayesmeta.models.rater`.

    Per trait: quality ``theta[s, i] = mu + u[s] + v[i] + d[s, i]`` with zero-sum system
    and item effects (SDs ``sd_system``, ``sd_item``) and output deviations ``d`` (SD
    ``sd_output``); rater thresholds ``tau[r, :] = delta[r] + centred cumulative gaps`` with
    zero-sum severities ``delta`` (SD ``sd_severity``) and gaps
    ``exp(log(panel_gap) + N(0, sd_log_gap))``; discriminations ``a[r]`` with zero-sum
    logs (SD ``sd_log_discrimination``); ``P(y <= k) = Phi(a[r] (tau[r, k] - theta))``.
    A share ``missing`` of ratings is set to NaN at random.

    Returns
    -------
    xarray.Dataset
        ``rating(system, item, rater, trait)`` and the truth of the reported quantities:
        ``true_threshold(rater, trait, cut)`` (on the scale of true output quality,
        ``(tau - mu) / sd_quality``), ``true_severity(rater, trait)``,
        ``true_marginal_threshold(rater, trait, cut)``, ``true_loading(rater, trait)``,
        ``true_reliability_system(trait)``, ``true_icc_output(trait)``,
        ``true_discrimination(rater, trait)``.
    """
    rng = np.random.default_rng(random_seed)
    T, S, I, R, K = len(traits), n_systems, n_items, n_raters, n_categories

    def zerosum(sd: float, *shape: int) -> np.ndarray:
        x = rng.normal(0, sd, size=shape)
        return x - x.mean(axis=-1, keepdims=True)

    u = zerosum(sd_system, T, S)
    v = zerosum(sd_item, T, I)
    theta = mu + u[:, :, None] + v[:, None, :] + rng.normal(0, sd_output, size=(T, S, I))
    delta = zerosum(sd_severity, T, R)
    gaps = np.exp(np.log(panel_gap) + rng.normal(0, sd_log_gap, size=(T, R, K - 2)))
    steps = np.concatenate([np.zeros((T, R, 1)), np.cumsum(gaps, axis=-1)], axis=-1)
    tau = delta[..., None] + steps - steps.mean(axis=-1, keepdims=True)  # (T, R, K-1)
    a = np.exp(zerosum(sd_log_discrimination, T, R))
    e = rng.standard_normal((T, S, I, R))
    latent = theta[..., None] + e / a[:, None, None, :]
    y = 1 + (latent[..., None] > tau[:, None, None, :, :]).sum(-1).astype(float)
    if missing > 0:
        y[rng.random(y.shape) < missing] = np.nan

    var_q = sd_system**2 + sd_item**2 + sd_output**2
    sig = np.sqrt(var_q)
    threshold = (tau - mu) / sig
    severity = threshold.mean(-1) - threshold.mean((-1, -2))[:, None]
    marginal = a[..., None] * (tau - mu) / np.sqrt(1 + a[..., None] ** 2 * var_q)
    loading = a * sig / np.sqrt(1 + a**2 * var_q)
    abar2 = a.mean(-1) ** 2
    rel = sd_system**2 / (sd_system**2 + sd_output**2 / I + 1 / (abar2 * I * R))
    icc = abar2 * var_q / (abar2 * var_q + 1 / R)
    cuts = _cut_labels(K)
    return xr.Dataset(
        {
            "rating": (RATING_DIMS, np.transpose(y, (1, 2, 3, 0)),
                       {"scale_min": 1.0, "scale_max": float(K)}),
            "true_threshold": (("rater", "trait", "cut"), np.transpose(threshold, (1, 0, 2))),
            "true_severity": (("rater", "trait"), severity.T),
            "true_marginal_threshold": (("rater", "trait", "cut"),
                                        np.transpose(marginal, (1, 0, 2))),
            "true_loading": (("rater", "trait"), loading.T),
            "true_discrimination": (("rater", "trait"), a.T),
            "true_reliability_system": (("trait",), rel),
            "true_icc_output": (("trait",), icc),
            "true_quality": (("system", "item", "trait"), np.transpose(theta, (1, 2, 0))),
        },
        coords={
            "system": [f"S{s + 1:02d}" for s in range(S)],
            "item": [f"doc{i + 1:03d}" for i in range(I)],
            "rater": [f"Rater.{r + 1}" for r in range(R)],
            "trait": list(traits),
            "cut": cuts,
        },
        attrs={"source": "bayesmeta.simulate.simulate_rater", "random_seed": random_seed},
    )
