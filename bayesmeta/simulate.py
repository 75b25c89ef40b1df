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

from collections.abc import Mapping
from typing import Any

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


#: The App. C parameters of one metric, as :func:`simulate_correlation_study` takes them
#: (and :mod:`bayesmeta.correlation.model` estimates them).
APP_C_PARAMETERS = ("mu_metric", "mu_human", "tau_metric", "tau_human", "rho",
                    "sigma_metric", "sigma_human", "r_mu", "r_sigma")
#: App. C.2 defaults (GPT-4-turbo rows of paper 001's Table 5; SummEval's shape).
APP_C2 = {"rho_system": 0.92, "rho_item_mean": 0.35, "rho_item_sd": 0.14, "system_sd": 0.67,
          "within_sd": 1.0}


def _discretise(rng: np.random.Generator, values: np.ndarray, levels: int) -> np.ndarray:
    """Categories 1..levels by ``levels - 1`` thresholds drawn uniformly over the range of the
    values (Onoshima et al. 2019, as paper 001 App. C)."""
    lo, hi = float(np.min(values)), float(np.max(values))
    cuts = np.sort(rng.uniform(lo, hi, size=levels - 1))
    return 1.0 + np.searchsorted(cuts, values, side="left")


def _truncnorm_draws(rng: np.random.Generator, mu: np.ndarray, sigma: np.ndarray,
                     size: tuple[int, ...]) -> np.ndarray:
    """TruncatedNormal(mu, sigma; -1, 1) draws by inverse CDF of uniforms."""
    from scipy.stats import truncnorm

    mu, sigma = np.broadcast_arrays(mu, sigma)
    u = rng.uniform(size=size)
    out = truncnorm.ppf(u, (-1.0 - mu) / sigma, (1.0 - mu) / sigma, loc=mu, scale=sigma)
    return np.clip(out, -1 + 1e-12, 1 - 1e-12)


def _within(rng: np.random.Generator, a: np.ndarray, b: np.ndarray, r: np.ndarray,
            sx: np.ndarray, sy: np.ndarray, n_items: int) -> tuple[np.ndarray, np.ndarray]:
    """(metric, human) scores of every output around its system's means ``a``, ``b``
    (shape ``(..., S)``), with within-system correlation ``r`` and SDs ``sx``, ``sy``."""
    e1, e2 = rng.standard_normal((2, *a.shape, n_items))
    rs = r[..., None]
    x = a[..., None] + sx * e1
    y = b[..., None] + sy * (rs * e1 + np.sqrt(1 - rs**2) * e2)
    return x, y


def _app_c_truth(P: dict[str, np.ndarray], n_items: int) -> dict[str, np.ndarray]:
    """Population values of the correlation measures under the App. C model."""
    from scipy import stats

    lo, hi = (-1 - P["r_mu"]) / P["r_sigma"], (1 - P["r_mu"]) / P["r_sigma"]
    e_r = stats.truncnorm.mean(lo, hi, loc=P["r_mu"], scale=P["r_sigma"])
    tx, ty, sx, sy = P["tau_metric"], P["tau_human"], P["sigma_metric"], P["sigma_human"]
    between = P["rho"] * tx * ty
    return {
        "global_pearson": (between + sx * sy * e_r) / np.sqrt((tx**2 + sx**2) * (ty**2 + sy**2)),
        "within_system_pearson": np.asarray(e_r, dtype=float),
        "system_pearson": np.asarray(P["rho"], dtype=float),
        "system_pearson_finite": (between + sx * sy * e_r / n_items) / np.sqrt(
            (tx**2 + sx**2 / n_items) * (ty**2 + sy**2 / n_items)),
    }


def _as_params(params: xr.Dataset | Mapping[str, Any]) -> xr.Dataset:
    if isinstance(params, xr.Dataset):
        ds = params
    else:
        ds = xr.Dataset({k: (("metric",) if np.ndim(v) == 1 else
                             (*tuple(f"dim_{j}" for j in range(np.ndim(v) - 1)), "metric"),
                             np.asarray(v, float)) for k, v in params.items()})
    missing = [p for p in APP_C_PARAMETERS if p not in ds]
    if missing:
        raise ValueError(f"params: missing {', '.join(missing)}.")
    return ds[list(APP_C_PARAMETERS)].transpose(..., "metric")


def simulate_correlation_study(
    random_seed: int | None = 0,
    *,
    params: xr.Dataset | Mapping[str, Any] | None = None,
    n_systems: int = 16,
    n_items: int = 100,
    rho_system: float | None = None,
    rho_item_mean: float | None = None,
    rho_item_sd: float | None = None,
    system_sd: float | None = None,
    within_sd: float | None = None,
    human_levels: int | None = None,
    metric_levels: tuple[int, ...] = (),
    r: Any = None,
) -> xr.Dataset:
    r"""Metric and human scores from the hierarchical bivariate model of paper 001, App. C.

    For system :math:`s` the outputs' (metric, human) scores are bivariate normal around the
    system's true levels :math:`(a_s, b_s)`, with a system-specific correlation
    :math:`r_s`; the system levels are bivariate normal with correlation :math:`\rho`:

    .. math::

        (a_s, b_s) &\sim N_2\Big((\mu_x, \mu_y), \begin{pmatrix} \tau_x^2 &
            \rho\tau_x\tau_y \\ \rho\tau_x\tau_y & \tau_y^2 \end{pmatrix}\Big), \qquad
        r_s \sim N(\mu_r, \sigma_r^2) \text{ truncated to } (-1, 1),\\
        (x_{si}, y_{si}) &\sim N_2\Big((a_s, b_s), \begin{pmatrix} \sigma_x^2 &
            r_s\sigma_x\sigma_y \\ r_s\sigma_x\sigma_y & \sigma_y^2 \end{pmatrix}\Big).

    Two ways to give the parameters:

    * **scalars** (default): one parameter set with :math:`\mu = 0`, :math:`\tau_x = \tau_y`
      = ``system_sd``, :math:`\sigma_x = \sigma_y` = ``within_sd``, :math:`\rho` =
      ``rho_system``, :math:`(\mu_r, \sigma_r)` = ``(rho_item_mean, rho_item_sd)``; one
      human score shared by the metrics ``"continuous"`` and its discretised versions
      ``"levels_<k>"``. Defaults from App. C.2 (GPT-4-turbo rows of Table 5: 0.92, 0.35,
      0.14; 16 systems x 100 items; SummEval's between/within SD ratio 0.67). The extraction
      of the paper's Algorithm 3 is garbled; this is our reading of App. C.1.
    * **params**: a Dataset (or dict) with the variables of :data:`APP_C_PARAMETERS`, each
      with dim ``metric`` and optional leading dims (e.g. ``sample`` from
      ``CorrelationResult.parameter_draws``: posterior predictive datasets); each metric
      gets its own human score.

    Discrete scores follow Onoshima et al. (2019): ``levels - 1`` thresholds drawn uniformly
    over the range of the continuous scores.

    Parameters
    ----------
    random_seed : int, optional
        Seed (drawn and recorded in the attrs when None).
    params : xarray.Dataset or dict, optional
        Parameter sets (see above); excludes the scalar parameters.
    n_systems, n_items : int
    rho_system, rho_item_mean, rho_item_sd, system_sd, within_sd : float, optional
        :math:`\rho`, :math:`\mu_r`, :math:`\sigma_r`, :math:`\tau`, :math:`\sigma` of the
        scalar form (defaults :data:`APP_C2`).
    human_levels : int, optional
        Discretise the human score to this many levels (scalar form: also returned as
        ``rating`` on 1..levels, rater ``"sim"``, trait ``"T"``); None keeps it continuous.
    metric_levels : tuple of int
        Extra metrics: each continuous metric discretised to each number of levels
        (``"levels_<k>"`` in the scalar form, ``"<metric>.levels_<k>"`` with params).
    r : array-like, optional
        With ``params``: fixed within-system correlations, dims ``(..., metric, system)``
        (the same-systems posterior predictive); drawn from the truncated normal otherwise.

    Returns
    -------
    xarray.Dataset
        Scalar form: ``score(system, item, metric, run)``, ``human(system, item)``,
        ``true_rho_item(system)``, ``true_mean(system, side)`` and attrs
        ``true_global_pearson`` (:math:`(\tau^2\rho + \sigma^2 E r_s) / (\tau^2 +
        \sigma^2)`), ``true_within_system_pearson`` (:math:`E r_s`; also under its previous
        name ``true_item_pearson``), ``true_system_pearson`` (:math:`\rho`, infinitely many
        items) and ``true_system_pearson_finite`` (system means over ``n_items`` items).
        With params: ``score(..., system, item, metric, run)``, ``human(..., metric,
        system, item)``, the true ``r``, ``a``, ``b`` ``(..., metric, system)`` and the same
        four truths as variables ``true_*(..., metric)`` (general :math:`\tau_x \ne \tau_y`
        forms); coordinates ``source`` (parameter set) and ``levels`` (0: continuous) on
        ``metric``.

    References
    ----------
    Gao, Hu, Lin & Wan (2024), *Analyzing and Evaluating Correlation Measures in NLG
    Meta-Evaluation*, App. C (paper 001). Onoshima et al. (2019).

    Examples
    --------
    >>> from bayesmeta.simulate import simulate_correlation_study
    >>> ds = simulate_correlation_study(1, human_levels=13, metric_levels=(5,))
    >>> [str(m) for m in ds["metric"].values]
    ['continuous', 'levels_5']
    >>> params = {"mu_metric": [0.0], "mu_human": [0.0], "tau_metric": [0.5],
    ...           "tau_human": [0.5], "rho": [0.8], "sigma_metric": [1.0],
    ...           "sigma_human": [1.0], "r_mu": [0.3], "r_sigma": [0.1]}
    >>> sim = simulate_correlation_study(2, params=params, n_systems=5, n_items=20)
    >>> dict(sim["human"].sizes)
    {'metric': 1, 'system': 5, 'item': 20}
    """
    from bayesmeta.options import resolve_seed

    scalars = {"rho_system": rho_system, "rho_item_mean": rho_item_mean,
               "rho_item_sd": rho_item_sd, "system_sd": system_sd, "within_sd": within_sd}
    seed = resolve_seed(random_seed)
    rng = np.random.default_rng(seed)
    if params is None:
        if r is not None:
            raise ValueError("r= (fixed within-system correlations) needs params=.")
        given = {k: APP_C2[k] if v is None else float(v) for k, v in scalars.items()}
        return _study_scalar(rng, seed, n_systems, n_items, human_levels, metric_levels,
                             **given)
    named = [k for k, v in scalars.items() if v is not None]
    if named:
        raise ValueError(f"give params= or the scalar parameters, not both (got "
                         f"{', '.join(named)}).")
    return _study_params(rng, seed, _as_params(params), n_systems, n_items, human_levels,
                         metric_levels, r)


def _study_scalar(rng: np.random.Generator, seed: int, S: int, I: int,
                  human_levels: int | None, metric_levels: tuple[int, ...], *,
                  rho_system: float, rho_item_mean: float, rho_item_sd: float,
                  system_sd: float, within_sd: float) -> xr.Dataset:
    """One parameter set; system levels before correlations (NumPy's multivariate normal,
    SciPy's truncnorm), the draw order of the first release, so seeds repeat."""
    from scipy import stats

    mu = rng.multivariate_normal(np.zeros(2), system_sd**2 * np.array(
        [[1.0, rho_system], [rho_system, 1.0]]), size=S)  # (S, 2)
    a, b = (-1 - rho_item_mean) / rho_item_sd, (1 - rho_item_mean) / rho_item_sd
    rho = stats.truncnorm.rvs(a, b, loc=rho_item_mean, scale=rho_item_sd, size=S,
                              random_state=rng)
    x, y = _within(rng, mu[:, 0], mu[:, 1], rho, within_sd, within_sd, I)
    metrics = [x] + [_discretise(rng, x, k) for k in metric_levels]
    human = y if human_levels is None else _discretise(rng, y, human_levels)
    P = {"tau_metric": system_sd, "tau_human": system_sd, "sigma_metric": within_sd,
         "sigma_human": within_sd, "rho": rho_system, "r_mu": rho_item_mean,
         "r_sigma": rho_item_sd}
    truth = {f"true_{k}": float(v) for k, v in _app_c_truth(P, I).items()}
    truth["true_item_pearson"] = truth["true_within_system_pearson"]  # previous name
    ds = xr.Dataset(
        {"score": (SCORE_DIMS, np.stack(metrics, -1)[..., None]),
         "human": (("system", "item"), human),
         "true_rho_item": (("system",), rho),
         "true_mean": (("system", "side"), mu)},
        coords={"system": [f"S{s + 1:02d}" for s in range(S)],
                "item": [f"doc{i + 1:03d}" for i in range(I)],
                "metric": ["continuous"] + [f"levels_{k}" for k in metric_levels],
                "run": ["1"], "side": ["metric", "human"]},
        attrs={"source": "bayesmeta.simulate.simulate_correlation_study",
               "random_seed": seed, **truth},
    )
    if human_levels is not None:
        ds["rating"] = (RATING_DIMS, human[:, :, None, None],
                        {"scale_min": 1.0, "scale_max": float(human_levels)})
        ds = ds.assign_coords(rater=["sim"], trait=["T"])
    return ds


def _study_params(rng: np.random.Generator, seed: int, ds: xr.Dataset, S: int, I: int,
                  human_levels: int | None, metric_levels: tuple[int, ...],
                  r: Any) -> xr.Dataset:
    """Parameter sets with dim ``metric`` (and leading dims); correlations before system
    levels (inverse-CDF truncated normal, then a Cholesky factor), the draw order of the
    first release's posterior-predictive simulator, so seeds repeat."""
    lead = [d for d in ds["rho"].dims if d != "metric"]
    P = {k: np.asarray(ds[k].values, float) for k in APP_C_PARAMETERS}
    shape = P["rho"].shape  # (..., M)
    if r is None:
        rr = _truncnorm_draws(rng, P["r_mu"][..., None], P["r_sigma"][..., None], (*shape, S))
    else:
        rr = np.broadcast_to(np.asarray(r.values if isinstance(r, xr.DataArray) else r,
                                        float), (*shape, S))
    z1, z2 = rng.normal(size=(2, *shape, S))
    tx, ty, rho = P["tau_metric"][..., None], P["tau_human"][..., None], P["rho"][..., None]
    a = P["mu_metric"][..., None] + tx * z1
    b = P["mu_human"][..., None] + ty * (rho * z1 + np.sqrt(1 - rho**2) * z2)
    x, y = _within(rng, a, b, rr, P["sigma_metric"][..., None, None],
                   P["sigma_human"][..., None, None], I)  # (..., M, S, I)
    names = [str(m) for m in (ds["metric"].values if "metric" in ds.coords
                              else [f"m{j}" for j in range(shape[-1])])]
    src, levels, xs = [], [], []
    for j in range(shape[-1]):
        for k in (0, *metric_levels):
            src.append(j)
            levels.append(int(k))
            xs.append(x[..., j, :, :] if k == 0 else np.stack(
                [_discretise(rng, x[(*idx, j)], k) for idx in np.ndindex(*shape[:-1])]
            ).reshape(x[..., j, :, :].shape))
    if human_levels is not None:
        for j in range(shape[-1]):
            for idx in np.ndindex(*shape[:-1]):
                y[(*idx, j)] = _discretise(rng, y[(*idx, j)], human_levels)
    labels = [names[j] if k == 0 else f"{names[j]}.levels_{k}"
              for j, k in zip(src, levels, strict=True)]
    nl = len(lead)
    score = np.moveaxis(np.stack(xs, axis=nl), nl, -1)[..., None]  # (..., S, I, M', run)
    m = ("metric",)
    out = {"score": ((*lead, "system", "item", "metric", "run"), score),
           "human": ((*lead, *m, "system", "item"), y[..., src, :, :]),
           "r": ((*lead, *m, "system"), rr[..., src, :]),
           "a": ((*lead, *m, "system"), a[..., src, :]),
           "b": ((*lead, *m, "system"), b[..., src, :])}
    for key, value in _app_c_truth(P, I).items():
        out[f"true_{key}"] = ((*lead, *m), np.asarray(value)[..., src])
    coords: dict[str, Any] = {"metric": labels, "source": ("metric", [names[j] for j in src]),
                              "levels": ("metric", levels),
                              "system": [f"s{j}" for j in range(S)],
                              "item": [f"i{j}" for j in range(I)], "run": ["1"]}
    coords.update({d: ds[d].values for d in lead if d in ds.coords})
    return xr.Dataset(out, coords=coords,
                      attrs={"source": "bayesmeta.simulate.simulate_correlation_study "
                                       "(paper 001, App. C)", "random_seed": seed})


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
    r"""Ratings from the many-facet rater model of :mod:`bayesmeta.raters.model`.

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


def _orthant2(r: float) -> float:
    """P(Z1 >= 0, Z2 >= 0) for a standard bivariate normal with correlation r."""
    return 0.25 + np.arcsin(r) / (2 * np.pi)


def _orthant3(r12: float, r13: float, r23: float) -> float:
    """P(Z1, Z2, Z3 >= 0) for a standard trivariate normal (Sheppard's formula)."""
    return 0.125 + (np.arcsin(r12) + np.arcsin(r13) + np.arcsin(r23)) / (4 * np.pi)


def simulate_corroboration(
    random_seed: int | None = 0,
    *,
    n_systems: int = 15,
    n_items: int = 30,
    loadings: tuple[float, ...] = (0.8, 0.6, 0.5, 0.3),
    noise_corr: float = 0.3,
    system_share: float = 0.4,
    human_noise: float = 0.5,
) -> xr.Dataset:
    r"""Correlated metrics and a human score with known pair-level reliability (paper 003).

    Output (s, i) has quality :math:`q` with a system part (share ``system_share`` =
    :math:`\rho`); the human judgment adds noise; metric :math:`m` loads
    :math:`\lambda_m` on quality and carries noise correlated across metrics
    (``noise_corr`` = :math:`c`) with the same system share::

        q[s, i]    = sqrt(rho) u[s] + sqrt(1 - rho) v[s, i]
        human      = q + human_noise * e[s, i]
        x[m, s, i] = lambda[m] q + sqrt(1 - lambda[m]^2) n[m, s, i]
        n[:, s, i] = sqrt(rho) g[:, s] + sqrt(1 - rho) h[:, s, i],
        g, h ~ N(0, (1 - c) I + c 11')

    Every term belongs to one system, so for two systems of the same item the differences
    :math:`(\Delta h, \Delta x_1, \dots)` are jointly normal with the correlations of one
    output, and the population statistics of paper 003 (over a random item and two random
    systems) are Gaussian orthant probabilities, exact for sets of one and two metrics
    (Sheppard's formula):

    .. math::

        R(\{m, n\}) = \frac{P_3(r_{hm}, r_{hn}, r_{mn})}{P_2(r_{mn})}, \quad
        S(\{m, n\}) = 2 P_3, \quad H(\{m, n\}) = 1 - 2 P_2(r_{mn}),

    with :math:`P_2(r) = 1/4 + \arcsin(r) / 2\pi` and :math:`P_3 = 1/8 + \sum \arcsin(r)
    / 4\pi`; for one metric :math:`R = S = 2 P_2(r_{hm})`. Pairs share systems and outputs,
    so they are dependent: a calibration target for intervals.

    Returns
    -------
    xarray.Dataset
        ``score`` (system, item, metric, run) with metrics ``m1, m2, ...`` and one run,
        ``judgment`` (system, item, trait) with trait ``"Q"``, and the truth over dim
        ``set`` (every single metric and every pair, labels ``"m1"``, ``"m1+m2"``):
        ``true_reliability``, ``true_sensitivity``, ``true_heterogeneity``.

    Examples
    --------
    >>> from bayesmeta.simulate import simulate_corroboration
    >>> ds = simulate_corroboration(0, n_systems=5, n_items=4)
    >>> round(float(ds["true_reliability"].sel(set="m1")), 4)
    0.7538
    """
    from bayesmeta.options import resolve_seed

    lam = np.asarray(loadings, dtype=float)
    if lam.ndim != 1 or lam.size < 1 or np.any(np.abs(lam) >= 1):
        raise ValueError(f"loadings must be values in (-1, 1), got {loadings!r}.")
    for name, v in (("noise_corr", noise_corr), ("system_share", system_share)):
        if not 0 <= v < 1:
            raise ValueError(f"{name} must lie in [0, 1), got {v!r}.")
    if human_noise < 0:
        raise ValueError(f"human_noise must be >= 0, got {human_noise!r}.")
    seed = resolve_seed(random_seed)
    rng = np.random.default_rng(seed)
    M, S, I = lam.size, int(n_systems), int(n_items)
    rho = float(system_share)
    C = (1 - noise_corr) * np.eye(M) + noise_corr * np.ones((M, M))
    L = np.linalg.cholesky(C)
    q = np.sqrt(rho) * rng.normal(size=(S, 1)) + np.sqrt(1 - rho) * rng.normal(size=(S, I))
    human = q + human_noise * rng.normal(size=(S, I))
    g = rng.normal(size=(S, 1, M)) @ L.T
    h = rng.normal(size=(S, I, M)) @ L.T
    noise = np.sqrt(rho) * g + np.sqrt(1 - rho) * h
    x = lam * q[..., None] + np.sqrt(1 - lam**2) * noise  # (S, I, M)
    # correlations of one output's (human, x_1..x_M)
    sd_h = np.sqrt(1 + human_noise**2)
    r_h = lam / sd_h
    ce = np.sqrt(1 - lam**2)
    r_x = np.outer(lam, lam) + np.outer(ce, ce) * noise_corr
    np.fill_diagonal(r_x, 1.0)
    labels, rel, sens, het = [], [], [], []
    for m in range(M):
        p = _orthant2(r_h[m])
        labels.append(f"m{m + 1}")
        rel.append(2 * p)
        sens.append(2 * p)
        het.append(0.0)
    for m in range(M):
        for n in range(m + 1, M):
            p3 = _orthant3(r_h[m], r_h[n], r_x[m, n])
            p2 = _orthant2(r_x[m, n])
            labels.append(f"m{m + 1}+m{n + 1}")
            rel.append(p3 / p2)
            sens.append(2 * p3)
            het.append(1 - 2 * p2)
    return xr.Dataset(
        {
            "score": (SCORE_DIMS, x[..., None]),
            "judgment": (("system", "item", "trait"), human[..., None]),
            "true_reliability": (("set",), np.array(rel)),
            "true_sensitivity": (("set",), np.array(sens)),
            "true_heterogeneity": (("set",), np.array(het)),
        },
        coords={"system": [f"S{s + 1:02d}" for s in range(S)],
                "item": [f"doc{i + 1:03d}" for i in range(I)],
                "metric": [f"m{m + 1}" for m in range(M)], "run": ["1"], "trait": ["Q"],
                "set": labels},
        attrs={"source": "bayesmeta.simulate.simulate_corroboration", "random_seed": seed,
               "system_share": rho, "noise_corr": float(noise_corr),
               "human_noise": float(human_noise)},
    )
