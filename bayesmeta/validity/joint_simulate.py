r"""Data drawn from the joint metric-validity model, with the truth attached
(:func:`simulate_joint_validity`; the recovery benchmark
``benchmarks/recovery_joint_validity.py`` and the slow-tier tests use it).

Traits :math:`f_n \sim N_T(0, \Psi)` per output (a system-item pair), ratings of rater
:math:`r` on trait :math:`t` from the probit measurement model of the ordinal CFA
(:math:`y^* = \lambda^*_{rt} f_{nt} + \sqrt{1 - \lambda^{*2}_{rt}}\,\varepsilon`, cut at
the thresholds :math:`\tau^*_{rt}`), metric scores :math:`x_{nm} = c_m + s_m (\sum_t
b_{mt} f_{nt} + \sigma_m \epsilon_{nm})` on an arbitrary location :math:`c_m` and scale
:math:`s_m`, so that the truth on the metric's own scale is :math:`s_m b_{mt}` and
:math:`s_m \sigma_m`.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from bayesmeta.data.schema import RATING_DIMS, SCORE_DIMS

TRAITS = ("COH", "CON", "FLU", "REL")


def simulate_joint_validity(
    random_seed: int = 0,
    *,
    n_systems: int = 8,
    n_items: int = 30,
    n_raters: int = 3,
    n_traits: int = 4,
    n_metrics: int = 6,
    n_categories: int = 5,
    trait_corr: float = 0.5,
    errors: str = "normal",
    error_corr: float = 0.0,
) -> xr.Dataset:
    r"""Draw one dataset from the joint model (see the module docstring).

    Parameters
    ----------
    random_seed : int
        Seed of :func:`numpy.random.default_rng`; the same seed gives the same data.
    n_systems, n_items, n_raters, n_traits, n_metrics, n_categories : int
        Shape (at most 4 traits; ratings on ``1..n_categories``).
    trait_corr : float
        Correlation of every pair of traits.
    errors : {"normal", "student_t"}
        Metric errors normal, or Student-t with 4 degrees of freedom scaled to sd
        :math:`\sigma_m`.
    error_corr : float
        Correlation in [0, 1) of every pair of metric errors (an output-level factor
        common to all metrics; ``errors="normal"`` only). 0 (default) gives the same
        data as before this option, seed for seed.

    Returns
    -------
    xarray.Dataset
        ``rating``, ``score`` (one run) and the truth: ``true_trait(system, item, trait)``,
        ``true_trait_corr(trait, trait2)``, ``true_loading_std(rater, trait)``,
        ``true_threshold_std(rater, trait, cut)``, ``true_validity_raw(metric, trait)``
        (:math:`s_m b_{mt}`), ``true_error_variance(metric)`` (:math:`s_m^2\sigma_m^2`),
        ``true_validity_coefficient(metric, trait)`` (:math:`b_{mt}/\sqrt{V_m}`) and
        ``true_error_share(metric)`` (:math:`\sigma^2_m / V_m`), :math:`V_m = b_m^\top \Psi
        b_m + \sigma_m^2`, and ``true_error_corr(metric, metric2)``. Metric ``m`` claims
        trait ``m mod T`` (coord ``metric_trait``).

    Examples
    --------
    >>> from bayesmeta.validity.joint_simulate import simulate_joint_validity
    >>> ds = simulate_joint_validity(0, n_systems=4, n_items=10, n_metrics=2)
    >>> ds["rating"].shape, ds["score"].shape
    ((4, 10, 3, 4), (4, 10, 2, 1))
    """
    if not 1 <= n_traits <= len(TRAITS):
        raise ValueError(f"n_traits must be in 1..{len(TRAITS)}, got {n_traits}.")
    if errors not in ("normal", "student_t"):
        raise ValueError(f"errors must be 'normal' or 'student_t', got {errors!r}.")
    if not 0.0 <= error_corr < 1.0 or (error_corr and errors != "normal"):
        raise ValueError(f"error_corr must be in [0, 1) with errors='normal', got "
                         f"{error_corr!r} with errors={errors!r}.")
    rng = np.random.default_rng(random_seed)
    S, I, R, T, M, K = n_systems, n_items, n_raters, n_traits, n_metrics, n_categories
    traits = list(TRAITS[:T])
    psi = np.full((T, T), trait_corr) + (1 - trait_corr) * np.eye(T)
    f = rng.standard_normal((S, I, T)) @ np.linalg.cholesky(psi).T
    lam = rng.uniform(0.6, 0.9, size=(R, T))
    probs = rng.dirichlet(np.full(K, 4.0), size=(R, T))
    from scipy import stats

    tau = stats.norm.ppf(np.cumsum(probs, axis=-1)[..., :-1])
    ystar = lam * f[:, :, None, :] + np.sqrt(1 - lam**2) * rng.standard_normal((S, I, R, T))
    rating = 1 + (ystar[..., None] > tau).sum(-1)

    claim = np.arange(M) % T
    b = rng.normal(0.0, 0.1, size=(M, T))
    b[np.arange(M), claim] = rng.uniform(0.3, 0.8, size=M)
    sigma = rng.uniform(0.4, 0.9, size=M)
    if errors == "normal":
        eps = rng.standard_normal((S, I, M))
    else:
        eps = rng.standard_t(4, size=(S, I, M)) / np.sqrt(2.0)
    loc, scl = rng.normal(0, 5, size=M), np.exp(rng.normal(0, 1, size=M))
    if error_corr:  # drawn last, so that error_corr=0 leaves the stream as it was
        common = rng.standard_normal((S, I, 1))
        eps = np.sqrt(1 - error_corr) * eps + np.sqrt(error_corr) * common
    score = loc + scl * (f @ b.T + sigma * eps)
    var = np.einsum("mt,ts,ms->m", b, psi, b) + sigma**2
    metrics = [f"metric{m + 1:02d}.{traits[claim[m]]}" for m in range(M)]
    cuts = [f"{k}->{k + 1}" for k in range(1, K)]
    return xr.Dataset(
        {
            "rating": (RATING_DIMS, rating.astype(float),
                       {"scale_min": 1.0, "scale_max": float(K)}),
            "score": (SCORE_DIMS, score[..., None]),
            "true_trait": (("system", "item", "trait"), f),
            "true_trait_corr": (("trait", "trait2"), psi),
            "true_loading_std": (("rater", "trait"), lam),
            "true_threshold_std": (("rater", "trait", "cut"), tau),
            "true_validity_raw": (("metric", "trait"), scl[:, None] * b),
            "true_error_variance": (("metric",), (scl * sigma) ** 2),
            "true_validity_coefficient": (("metric", "trait"), b / np.sqrt(var)[:, None]),
            "true_error_share": (("metric",), sigma**2 / var),
            "true_error_corr": (("metric", "metric2"),
                                np.full((M, M), error_corr) + (1 - error_corr) * np.eye(M)),
        },
        coords={"system": [f"S{s + 1:02d}" for s in range(S)],
                "item": [f"doc{i + 1:03d}" for i in range(I)],
                "rater": [f"Rater.{r + 1}" for r in range(R)], "trait": traits,
                "trait2": traits, "cut": cuts, "metric": metrics, "metric2": metrics,
                "run": ["1"],
                "metric_trait": ("metric", [traits[c] for c in claim])},
        attrs={"source": "bayesmeta.validity.joint_simulate.simulate_joint_validity",
               "random_seed": random_seed, "errors": errors, "error_corr": error_corr},
    )


def realized_error_corr(ds: xr.Dataset) -> xr.DataArray:
    """The correlations over outputs of the metrics' true errors in a dataset of
    :func:`simulate_joint_validity` (its first run): score minus the true traits times the
    true raw coefficients, the intercepts dropping out of a correlation. This sample's
    value, which ``residual_correlations()`` of a joint fit estimates (the population's is
    ``true_error_corr``).

    Returns
    -------
    xarray.DataArray
        ``(metric, metric2)``.
    """
    x = ds["score"].isel(run=0).transpose("system", "item", "metric").values
    f = ds["true_trait"].transpose("system", "item", "trait").values
    b = ds["true_validity_raw"].transpose("metric", "trait").values
    errors = (x - f @ b.T).reshape(-1, x.shape[-1])
    return xr.DataArray(np.corrcoef(errors.T), dims=("metric", "metric2"),
                        coords={"metric": ds["metric"].values,
                                "metric2": ds["metric"].values})
