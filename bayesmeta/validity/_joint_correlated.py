r"""The joint metric-validity model with correlated metric errors (``residuals=
"correlated"`` of :func:`bayesmeta.validity.joint_model.joint_metric_variance`; card:
``models/metric_validity.md``).

The model of :mod:`bayesmeta.validity.joint_model` with an unrestricted error covariance,

.. math::
    x_n = a + B f_n + e_n, \quad e_n \sim N_M(0, \Sigma_e), \quad f_n \sim N_T(0, \Psi),

so whatever the metrics share beyond the traits (a family of ROUGE variants, one
LLM-judge prompt) is error covariance and cannot redefine the traits: :math:`B` is
identified by the covariance of the metrics with the ratings, as in a seemingly unrelated
regression. With :math:`\Omega = B\Psi B^\top + \Sigma_e` (the metrics' covariance) the
likelihood factors as :math:`p(x_n \mid a, \Omega)\,P(y_n \mid x_n)` where the traits
given the metrics are :math:`N(\Gamma (x_n - a), V)`, :math:`\Gamma = \Psi B^\top
\Omega^{-1}`, :math:`V = \Psi - \Gamma\Omega\Gamma^\top`. The sampler works in whitened
coordinates, :math:`\Omega = L L^\top`, :math:`\Psi = L_\Psi L_\Psi^\top`:

* :math:`H = L_\Psi^{-1}\,\mathrm{Cov}(f, x)\,L^{-\top}` (T x M, singular values < 1: the
  canonical correlations of traits and metrics) is sampled as :math:`W`,
  :math:`H = L_A^{-1} W`, :math:`L_A L_A^\top = I + WW^\top` (a bijection onto
  :math:`\{H : HH^\top < I\}`), so :math:`V = L_\Psi L_A^{-1} L_A^{-\top} L_\Psi^\top`,
  :math:`E[f_n \mid x_n] = L_\Psi H L^{-1}(x_n - a)`, :math:`B = L H^\top L_\Psi^{-1}`
  and :math:`\Sigma_e = L (I - H^\top H) L^\top`;
* :math:`L = L_S \tilde L` with :math:`L_S` the Cholesky factor of the metrics' sample
  covariance (data), :math:`\tilde L_{ii} = \exp(g_i / \sqrt N)`, :math:`\tilde L_{ij} =
  o_{ij} / \sqrt N`, and :math:`a = \bar x + L_S c / \sqrt N`: the posterior of
  :math:`(c, g, o)` is near N(0, 1) whatever the metrics' collinearity, which a diagonal
  mass matrix fits. :math:`p(x \mid a, \Omega)` needs only :math:`\tilde L^{-1}` and
  :math:`c` (the whitened sample has mean 0 and covariance I): :math:`O(M^3)` per
  gradient, the traits' conditional means :math:`O(NMT)`;
* the ratings given the metrics: the ordinal CFA's augmented GHK likelihood with each
  output's box moved by :math:`\Lambda E[f_n \mid x_n]` and covariance
  :math:`\Lambda V\Lambda^\top + \operatorname{diag}(1 - \lambda^{*2})`, as in
  :func:`~bayesmeta.validity._joint_build.build_marginal_joint_model`.

Priors (metric scores standardized): :math:`a_m \sim N(0, 1)`, :math:`\Omega \sim
\text{inverse-Wishart}(M + 2, I)` (prior mean I), and each row of :math:`W` as a level
and a direction, :math:`W_t = \sqrt{\rho_t / (1 - \rho_t)}\, z_t / \sqrt M`,
:math:`\rho_t \sim \text{Beta}(1, 1)`, :math:`z_{tm} \sim N(0, 1)`: :math:`\rho_t` is
about the :math:`R^2` of the t-th (Cholesky-whitened) trait on the metrics, uniform a
priori whatever the number of metrics (:math:`W_{tm} \sim N(0, 1/M)`, the first prior,
fixed it near 0.5 ever more tightly as M grew, and pulled the error shares up); the CFA's
priors for the rest. PyMC and PyTensor are imported inside the functions.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bayesmeta.validity._cfa_build import (
    _structural_parameters,
    anchor_cuts,
    category_slots,
    model_coords,
)

#: The metric errors' covariance (``residuals=``): ``"auto"``, independent given the
#: traits (``_joint_build``, with method factors for what they share), or unrestricted.
RESIDUALS = ("auto", "independent", "correlated")
#: Posterior variables kept in the trace.
CORRELATED_TRACE = ("loading_std", "threshold_std", "factor_corr", "factor_score_mean",
                    "metric_intercept", "metric_loading", "error_sd", "trait_given_metrics")


def resolve_residuals(residuals: str, parameterization: str, n_metrics: int,
                      n_columns: int) -> str:
    """``residuals`` checked; ``"auto"`` is ``"correlated"`` where it applies (the traits
    integrated out: normal errors, every metric scored) and the metrics outnumber the
    rating columns (where independent errors let the metrics redefine the traits), else
    ``"independent"``."""
    if residuals not in RESIDUALS:
        raise ValueError(f"residuals must be one of {RESIDUALS}, got {residuals!r}.")
    if residuals == "auto":
        fits = parameterization == "marginal" and n_metrics > n_columns
        return "correlated" if fits else "independent"
    return residuals


def whitened(x: np.ndarray, metrics: tuple[str, ...]) -> dict[str, np.ndarray]:
    """The metrics' sample mean, the Cholesky factor ``L_S`` of their sample covariance
    (divisor N), its inverse, and the whitened scores ``(x - mean) L_S^-T`` (mean 0,
    covariance I). Raises, naming the metrics, where the covariance is singular."""
    n, m = x.shape
    if m >= n:
        raise ValueError(f"residuals='correlated' needs fewer metrics ({m}) than rated "
                         f"outputs ({n}).")
    mean = x.mean(axis=0)
    xc = x - mean
    cov = xc.T @ xc / n
    try:
        chol = np.linalg.cholesky(cov)
        ok = np.all(np.diag(chol) > 1e-6 * np.sqrt(np.diag(cov)))
    except np.linalg.LinAlgError:
        ok = False
    if not ok:
        # the first metric that is (nearly) a linear function of the ones before it
        for j in range(1, m):
            sub = cov[: j + 1, : j + 1]
            if np.linalg.eigvalsh(sub).min() <= 1e-10 * np.trace(sub):
                raise ValueError(f"residuals='correlated': metric {metrics[j]!r} is a linear "
                                 f"function of {list(metrics[:j])} on the rated outputs (its "
                                 f"error covariance is not identified); leave it out "
                                 f"(metrics=) or use residuals='independent'.")
        raise ValueError("residuals='correlated': the metrics' covariance is singular.")
    inv = np.linalg.inv(chol)
    return {"metric_mean": mean, "metric_chol": chol, "metric_chol_inv": inv,
            "metric_white": xc @ inv.T}


def correlated_data(jd: Any) -> dict[str, np.ndarray]:
    """Values of the model's data containers."""
    lo, hi = category_slots(jd.design)
    return {"lo_slot": lo, "hi_slot": hi, **whitened(jd.x, jd.metrics),
            "threshold_anchor_cut": anchor_cuts(jd.design).astype(np.int64)}


def build_correlated_joint_model(jd: Any) -> Any:
    """The PyMC model of the module docstring (normal errors, every metric scored on every
    rated output; the traits integrated out and drawn after sampling by
    :func:`~bayesmeta.validity._joint_build.draw_marginal_traits`)."""
    import pymc as pm
    import pytensor.tensor as pt
    from pytensor.tensor.slinalg import solve_triangular

    from bayesmeta.validity._ghk import cholesky
    from bayesmeta.validity._joint_build import category_data, ratings_given_metrics

    d = jd.design
    N, F = d.n_rows, d.n_factors
    M = len(jd.metrics)
    if not jd.observed.all():
        raise ValueError("residuals='correlated' needs every metric score observed.")
    vals = correlated_data(jd)
    root_n = float(np.sqrt(N))
    rows, cols = np.tril_indices(M, -1)
    eye_f, eye_m = np.eye(F), np.eye(M)
    coords = {**model_coords(d), "metric": list(jd.metrics)}
    with pm.Model(coords=coords) as model:
        lo, hi = category_data(vals)
        xw = pm.Data("metric_white", vals["metric_white"], dims=("output", "metric"))
        ls = pm.Data("metric_chol", vals["metric_chol"])
        ls_inv = pm.Data("metric_chol_inv", vals["metric_chol_inv"])
        xbar = pm.Data("metric_mean", vals["metric_mean"], dims="metric")
        lstd, tau, chol, _ = _structural_parameters(d, (1.0, 1.0), 1.0, anchor_data=True)
        # ---- the metrics' mean and covariance, around their sample values ---------------
        c = pm.Flat("metric_mean_white", shape=M, initval=np.zeros(M))
        g = pm.Flat("metric_chol_logdiag", shape=M, initval=np.zeros(M))
        o = pm.Flat("metric_chol_offdiag", shape=len(rows), initval=np.zeros(len(rows)))
        lt = pt.set_subtensor(pt.diag(pt.exp(g / root_n))[rows, cols], o / root_n)
        lt_inv = solve_triangular(lt, eye_m, lower=True)
        c_n = c / root_n
        a = pm.Deterministic("metric_intercept", xbar + ls @ c_n, dims="metric")
        logdet_lt = pt.sum(g) / root_n  # log|L~|; log|Omega| = 2 (log|L_S| + this)
        pm.Potential("metric_loglik",
                     -N * logdet_lt
                     - 0.5 * N * (pt.sum(lt_inv**2) + pt.sum((lt_inv @ c_n) ** 2)))
        nu0 = M + 2.0
        jac = np.arange(M + 1, 1, -1, dtype=float)  # (M - i + 2) for i = 1..M
        pm.Potential("metric_cov_prior",
                     -(nu0 + M + 1) * logdet_lt - 0.5 * pt.sum((lt_inv @ ls_inv) ** 2)
                     + pt.sum(jac * g) / root_n)
        pm.Potential("metric_intercept_prior", -0.5 * pt.sum(a**2))
        # ---- traits and metrics: whitened cross-correlations -----------------------------
        level = pm.Beta("trait_metric_r2", 1.0, 1.0, dims="trait")
        z = pm.Normal("trait_metric_dir", 0.0, 1.0, shape=(F, M))
        w = pm.Deterministic("trait_metric_white",
                             pt.sqrt(level / (1.0 - level))[:, None] * z / np.sqrt(M))
        la = cholesky(eye_f + w @ w.T)
        h = solve_triangular(la, w, lower=True)  # (F, M), H H' < I
        vc = chol @ solve_triangular(la, eye_f, lower=True)  # V = vc vc'
        gain = chol @ h @ lt_inv  # (F, M): E[f | x] = gain (x~ - c_n)
        m = (xw - c_n[None, :]) @ gain.T  # (N, F)
        p = ls @ lt @ h.T  # (M, F): Cov(x, f) L_Psi^-T
        chol_inv = solve_triangular(chol, eye_f, lower=True)
        pm.Deterministic("metric_loading", p @ chol_inv, dims=("metric", "trait"))
        omega_diag = pt.sum((ls @ lt) ** 2, axis=1)
        pm.Deterministic("error_sd", pt.sqrt(omega_diag - pt.sum(p**2, axis=1)),
                         dims="metric")
        pm.Deterministic("trait_given_metrics", vc @ vc.T, dims=("trait", "trait2"))
        ratings_given_metrics(d, lstd, tau, lo, hi, m, vc)
    return model


def white_cross(b: np.ndarray, corr: np.ndarray, metric_chol: np.ndarray) -> np.ndarray:
    """``H = L_Psi' B' L_S^-T`` (T x M) for coefficients ``b`` (M x T), factor correlations
    ``corr`` and the metrics' Cholesky factor: the model's ``H`` at ``L~ = I``."""
    lpsi = np.linalg.cholesky(corr)
    return np.linalg.solve(metric_chol, b @ lpsi).T


def w_from_h(h: np.ndarray) -> np.ndarray:
    """The inverse of ``H = L_A^-1 W``, ``L_A L_A' = I + W W'``: ``W = L_A H`` with
    ``L_A' L_A = (I - H H')^-1`` (a Cholesky factor of the reversed matrix, reversed)."""
    F = h.shape[0]
    r = np.linalg.inv(np.eye(F) - h @ h.T)
    flip = np.eye(F)[::-1]
    low = np.linalg.cholesky(flip @ r @ flip)
    la = flip @ low.T @ flip
    return la @ h


def level_direction(w: np.ndarray) -> dict[str, np.ndarray]:
    """``W`` in the model's coordinates: each row's level ``rho_t = ||W_t||^2 /
    (1 + ||W_t||^2)`` and direction ``z_t = sqrt(M) W_t / ||W_t||`` (the inverse of
    ``W_t = sqrt(rho_t / (1 - rho_t)) z_t / sqrt(M)`` where ``||z_t|| = sqrt(M)``)."""
    M = w.shape[1]
    norm = np.maximum(np.linalg.norm(w, axis=1), 1e-3)
    return {"trait_metric_r2": norm**2 / (1.0 + norm**2),
            "trait_metric_dir": w * (np.sqrt(M) / norm)[:, None]}


def correlated_start(base: dict[str, Any], moments: dict[str, np.ndarray],
                     metric_chol: np.ndarray) -> dict[str, Any]:
    """Starting values: the ratings' part of ``base`` (``moment_start``), the metrics'
    sample mean and covariance (``c = g = o = 0``) and ``W`` from the moment solution's
    coefficients, its canonical correlations shrunk below 0.95 where needed."""
    keep = {k: v for k, v in base.items()
            if k.startswith(("loading_std", "threshold_", "corr"))}
    h = white_cross(moments["b"], moments["corr"], metric_chol)
    top = np.linalg.svd(h, compute_uv=False).max()
    if top > 0.95:
        h = h * (0.95 / top)
    M = h.shape[1]
    keep.update({"metric_mean_white": np.zeros(M), "metric_chol_logdiag": np.zeros(M),
                 "metric_chol_offdiag": np.zeros(M * (M - 1) // 2),
                 **level_direction(w_from_h(h))})
    return keep


__all__ = ["CORRELATED_TRACE", "RESIDUALS", "build_correlated_joint_model",
           "correlated_data", "correlated_start", "level_direction", "resolve_residuals",
           "w_from_h", "white_cross", "whitened"]
