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
