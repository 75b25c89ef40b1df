r"""The PyMC model of the hierarchical bivariate correlation model (paper 001, App. C).

For one metric, the (metric, human) scores of the outputs of system :math:`s` on items
:math:`i = 1..n_s` are bivariate normal with a system-specific correlation :math:`r_s`;
the system means are bivariate normal with the *system-level* correlation :math:`\rho`,
and the :math:`r_s` scatter around the location :math:`\mu_r`::

    (x[s, i], y[s, i]) ~ N2((a[s], b[s]), [[sx^2, r[s] sx sy], [r[s] sx sy, sy^2]])
    r[s]               ~ TruncatedNormal(mu_r, sigma_r, lower=-1, upper=1)
    (a[s], b[s])       ~ N2((mu_x, mu_y), [[tx^2, rho tx ty], [rho tx ty, ty^2]])

with ``x`` the metric and ``y`` the human score (Gao et al. 2024, App. C.1). Every metric
gets its own independent copy of these parameters; the model is vectorised over the
``metric`` dim. The system means are integrated out analytically, so the likelihood of
each (metric, system) cell needs only its sufficient statistics
(:func:`bayesmeta.correlation.bivariate.sufficient_stats`) and the model has ``9 + S``
parameters per metric. See the model card ``models/correlation.md``.

PyMC is imported only inside :func:`build_model`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr

from bayesmeta.simulate import APP_C_PARAMETERS

#: App. C parameters per metric, in the order of ``CorrelationResult.parameter_draws``.
PARAMETERS = APP_C_PARAMETERS
#: Prior scales on the standardised scale (each variable has pooled mean 0 and SD 1).
PRIORS = {
    "mu_metric": "Normal(0, 1)",
    "mu_human": "Normal(0, 1)",
    "tau_metric": "HalfNormal(1)",
    "tau_human": "HalfNormal(1)",
    "sigma_metric": "HalfNormal(1)",
    "sigma_human": "HalfNormal(1)",
    "rho": "(rho + 1) / 2 ~ Beta(2, 2)  (LKJ(2) for a 2 x 2 correlation)",
    "r_mu": "(r_mu + 1) / 2 ~ Beta(2, 2)",
    "r_sigma": "HalfNormal(0.25)",
}
R_SIGMA_PRIOR = 0.25
_LOG2PI = float(np.log(2.0 * np.pi))


def build_model(n_metrics: int, n_systems: int, *, centered: bool = True) -> Any:
    r"""Build the (data-free) PyMC model for ``n_metrics`` metrics and ``n_systems`` systems.

    The data enter through ``pm.Data`` containers ``n``, ``xbar``, ``ybar``, ``wxx``,
    ``wyy``, ``wxy`` (all ``(metric, system)``, standardised scale; see
    :func:`bayesmeta.correlation.bivariate.sufficient_stats`), so one compiled model serves
    every dataset of that shape.

    Variables (dims in brackets): ``mu_metric``, ``mu_human``, ``tau_metric``,
    ``tau_human``, ``sigma_metric``, ``sigma_human``, ``rho``, ``r_mu``, ``r_sigma``
    [metric]; ``r`` [metric, system]. The log-likelihood is the potential
    ``loglik`` [metric, system]: the exact marginal log-density of the standardised
    scores of one system with its means :math:`(a_s, b_s)` integrated out,

    .. math::
        \ell_{ms} = -(n-1)\log 2\pi - \log n - \tfrac{n-1}{2}\log|\Sigma_{ms}|
          - \tfrac12\operatorname{tr}(\Sigma_{ms}^{-1} W_{ms})
          + \log N_2\big((\bar x, \bar y);\ (\mu_x, \mu_y),\ T_m + \Sigma_{ms}/n\big),

    :math:`\Sigma_{ms}` the within-system covariance with correlation :math:`r_{ms}`,
    :math:`T_m` the covariance of system means with correlation :math:`\rho_m`.

    Parameters
    ----------
    n_metrics, n_systems : int
    centered : bool
        ``True``: ``r ~ TruncatedNormal(r_mu, r_sigma, -1, 1)`` directly. ``False``: the
        non-centred form ``r = F^{-1}(u)``, ``u ~ Uniform(0, 1)``, with ``F`` the
        truncated-normal CDF (for weakly informative data, where ``r_sigma`` is small).
    """
    import pymc as pm
    import pytensor.tensor as pt

    M, S = int(n_metrics), int(n_systems)
    coords = {"metric": np.arange(M), "system": np.arange(S)}
    fill = {"n": np.full((M, S), 10.0), "xbar": np.zeros((M, S)), "ybar": np.zeros((M, S)),
            "wxx": np.full((M, S), 9.0), "wyy": np.full((M, S), 9.0),
            "wxy": np.zeros((M, S))}
    with pm.Model(coords=coords) as model:
        d = {k: pm.Data(k, v, dims=("metric", "system")) for k, v in fill.items()}
        mu_x = pm.Normal("mu_metric", 0.0, 1.0, dims="metric")
        mu_y = pm.Normal("mu_human", 0.0, 1.0, dims="metric")
        tx = pm.HalfNormal("tau_metric", 1.0, dims="metric")
        ty = pm.HalfNormal("tau_human", 1.0, dims="metric")
        sx = pm.HalfNormal("sigma_metric", 1.0, dims="metric")
        sy = pm.HalfNormal("sigma_human", 1.0, dims="metric")
        # (rho + 1) / 2 ~ Beta(2, 2), i.e. p(rho) = 3/4 (1 - rho^2) on (-1, 1): a Uniform
        # base plus a potential (the same density; a smaller graph than a scaled Beta)
        rho = pm.Uniform("rho", -1.0, 1.0, dims="metric")
        r_mu = pm.Uniform("r_mu", -1.0, 1.0, dims="metric")
        pm.Potential("rho_prior", np.log(1.5) + pt.log1p(-(rho**2)), dims="metric")
        pm.Potential("r_mu_prior", np.log(1.5) + pt.log1p(-(r_mu**2)), dims="metric")
        r_sigma = pm.HalfNormal("r_sigma", R_SIGMA_PRIOR, dims="metric")
        if centered:
            # r ~ TruncatedNormal(r_mu, r_sigma, -1, 1), written out: a Uniform(-1, 1) base
            # (its interval transform) plus the truncated-normal log-density as a potential
            # (simpler graph than pm.TruncatedNormal, so nutpie compiles it faster)
            r = pm.Uniform("r", -1.0, 1.0, dims=("metric", "system"))
            mu_c, sd_c = r_mu[:, None], r_sigma[:, None]
            mass = 0.5 * (pt.erfc((mu_c - 1.0) / (sd_c * np.sqrt(2.0)))
                          - pt.erfc((mu_c + 1.0) / (sd_c * np.sqrt(2.0))))
            pm.Potential("r_prior", -0.5 * ((r - mu_c) / sd_c) ** 2 - pt.log(sd_c)
                         - 0.5 * _LOG2PI + np.log(2.0) - pt.log(mass),
                         dims=("metric", "system"))
        else:
            u = pm.Uniform("r_unit", 0.0, 1.0, dims=("metric", "system"))
            lo = (-1.0 - r_mu[:, None]) / r_sigma[:, None]
            hi = (1.0 - r_mu[:, None]) / r_sigma[:, None]
            # F^{-1}(u) via the complementary error function, stable in both tails
            plo = 0.5 * pt.erfc(-lo / np.sqrt(2.0))
            phi = 0.5 * pt.erfc(-hi / np.sqrt(2.0))
            p = plo + u * (phi - plo)
            z = -np.sqrt(2.0) * pt.erfcinv(2.0 * p)
            r = pm.Deterministic("r", pt.clip(r_mu[:, None] + r_sigma[:, None] * z,
                                              -1 + 1e-9, 1 - 1e-9), dims=("metric", "system"))
        n = d["n"]
        sxm, sym, txm, tym = sx[:, None], sy[:, None], tx[:, None], ty[:, None]
        one_r2 = 1.0 - r**2
        within = (-(n - 1.0) * _LOG2PI - pt.log(n)
                  - 0.5 * (n - 1.0) * (2 * pt.log(sxm) + 2 * pt.log(sym) + pt.log(one_r2))
                  - 0.5 / one_r2 * (d["wxx"] / sxm**2 - 2 * r * d["wxy"] / (sxm * sym)
                                    + d["wyy"] / sym**2))
        c11 = txm**2 + sxm**2 / n
        c22 = tym**2 + sym**2 / n
        c12 = rho[:, None] * txm * tym + r * sxm * sym / n
        det = c11 * c22 - c12**2
        ex = d["xbar"] - mu_x[:, None]
        ey = d["ybar"] - mu_y[:, None]
        quad = (c22 * ex**2 - 2 * c12 * ex * ey + c11 * ey**2) / det
        means = -_LOG2PI - 0.5 * pt.log(det) - 0.5 * quad
        pm.Potential("loglik", within + means, dims=("metric", "system"))
    return model


# ============================================================================ simulation
def sample_prior(n_metrics: int, *, random_seed: int | None = None) -> xr.Dataset:
    """Draw App. C parameters from the model's prior (standardised scale), one set per
    metric: the truth of simulation-based calibration. Returns a Dataset with the
    variables of :data:`PARAMETERS` (dim ``metric``)."""
    rng = np.random.default_rng(random_seed)
    M = int(n_metrics)
    vals = {
        "mu_metric": rng.normal(0, 1, M), "mu_human": rng.normal(0, 1, M),
        "tau_metric": np.abs(rng.normal(0, 1, M)), "tau_human": np.abs(rng.normal(0, 1, M)),
        "rho": 2 * rng.beta(2, 2, M) - 1,
        "sigma_metric": np.abs(rng.normal(0, 1, M)),
        "sigma_human": np.abs(rng.normal(0, 1, M)),
        "r_mu": 2 * rng.beta(2, 2, M) - 1,
        "r_sigma": np.abs(rng.normal(0, R_SIGMA_PRIOR, M)),
    }
    return xr.Dataset({k: ("metric", v) for k, v in vals.items()},
                      coords={"metric": [f"m{j}" for j in range(M)]})


__all__ = ["PARAMETERS", "PRIORS", "R_SIGMA_PRIOR", "build_model", "sample_prior"]
