r"""Coefficient omega of ordinal indicators from a WLSMV ordinal CFA (Green & Yang 2009), as
semTools' ``compRelSEM`` computes it for categorical indicators (issue 24).

The reliability of the *summed ratings* of a factor's indicators, not of the latent
responses: rating :math:`X_j = \sum_c [y^*_j > \tau_{jc}]` (up to a constant) of the latent
response :math:`y^*_j = \lambda_j \eta + \varepsilon_j` (delta parameterization, variance 1)
has covariances

.. math:: \mathrm{Cov}(X_j, X_{j'}) = \sum_{c, c'} \Phi_2(\tau_{jc}, \tau_{j'c'};
          \rho_{jj'}) - \Phi(\tau_{jc})\,\Phi(\tau_{j'c'}),

so with :math:`S_{jj'}(\rho) = \sum_{c,c'}\Phi_2(\tau_{jc}, \tau_{j'c'}; \rho) -
\sum_c\Phi(\tau_{jc})\sum_{c'}\Phi(\tau_{j'c'})`,

.. math:: \omega_{\mathrm{ordinal}} = \frac{\sum_{j, j'} S_{jj'}(\lambda_j\lambda_{j'}
          \phi)}{\sum_{j, j'} S_{jj'}(r_{jj'})},

the numerator taking the correlation the factor alone implies (:math:`\phi` its variance,
1 under ``std.lv``), the denominator the sample polychoric correlations :math:`r_{jj'}`
(:math:`r_{jj} = 1`; semTools' default ``obs.var = TRUE``). ``omega_latent`` is the
coefficient of the latent responses, :math:`(\sum_j \lambda_j)^2 \phi / \sum_{j,j'}
r_{jj'}` (semTools' ``ord.scale = FALSE``).

References
----------
Green, S. B. & Yang, Y. (2009). Reliability of summed item scores using structural equation
modeling: an alternative to coefficient alpha. *Psychometrika* 74(1), 155-167.
Yang, Y. & Green, S. B. (2015). Evaluation of structural equation modeling estimates of
reliability for scales with ordered categorical items. *Methodology* 11(1), 23-34.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from scipy import special, stats

from bayesmeta.reliability.classical import _ByEstimand
from bayesmeta.validity.factor_analysis import CFAResult
from bayesmeta.validity.polychoric import bvn_cdf


class OmegaOrdinalResult(_ByEstimand):
    """Coefficient omega of ordinal indicators per factor (see :func:`omega_ordinal`)."""

    default_estimand = "omega_ordinal"


def _sum_covariance(tau: list[np.ndarray], r: np.ndarray) -> float:
    r""":math:`\sum_{j,j'} S_{jj'}(r_{jj'})`: the variance of the summed ratings whose
    latent responses have correlations ``r`` and thresholds ``tau``."""
    total = 0.0
    s = [float(special.ndtr(t).sum()) for t in tau]
    for j, tj in enumerate(tau):
        for k, tk in enumerate(tau):
            h, g = np.meshgrid(tj, tk, indexing="ij")
            if r[j, k] >= 1.0:                     # a rating with itself: Phi(min)
                joint = special.ndtr(np.minimum(h, g)).sum()
            else:
                joint = bvn_cdf(h, g, r[j, k]).sum()
            total += joint - s[j] * s[k]
    return float(total)


def omega_ordinal(fit: CFAResult) -> OmegaOrdinalResult:
    r"""Coefficient omega of each factor's summed ordinal ratings (Green & Yang 2009).

    :math:`\omega = \sum_{j,j'} S_{jj'}(\lambda_j\lambda_{j'}\phi) / \sum_{j,j'}
    S_{jj'}(r_{jj'})` over the factor's indicators, with
    :math:`S_{jj'}(\rho) = \sum_{c,c'}\Phi_2(\tau_{jc}, \tau_{j'c'}; \rho) -
    \sum_c\Phi(\tau_{jc})\sum_{c'}\Phi(\tau_{j'c'})` the covariance of two ratings
    whose latent responses correlate :math:`\rho` (see :mod:`bayesmeta.agreement.omega`):
    the share of the variance of the summed ratings that the factor explains, on the
    ratings' own scale. Loadings :math:`\lambda`, thresholds :math:`\tau` and factor variance
    :math:`\phi` are the WLSMV estimates; :math:`r` the sample polychoric correlations.
    Factors with one indicator are left out (semTools' ``dropSingle``); residual covariances
    enter only through the estimates (the denominator is observed, not implied).

    Parameters
    ----------
    fit : CFAResult
        A WLSMV ordinal CFA, :func:`bayesmeta.cfa` with ``estimator="wlsmv"``.

    Returns
    -------
    OmegaOrdinalResult
        ``summary()`` indexed by ``(estimand, trait)`` (``trait`` = the factor) with
        ``classical`` = :math:`\omega_{\mathrm{ordinal}}`; ``details()``: ``omega_latent``
        (the latent-response omega, :math:`(\sum\lambda)^2\phi/\sum r`), ``n_indicators``,
        ``indicators`` and ``se``, the delta-method standard error behind
        ``classical_low``/``classical_high`` (Wald, ``fit.ci_prob``, upper end capped at 1):
        the gradient of omega in the sample thresholds and polychoric correlations
        (through the DWLS loadings as in the robust standard errors) with their asymptotic
        covariance
        :math:`\Gamma/(N-1)` (coverage on simulated panels: ``benchmarks/omega_coverage.py``).

    References
    ----------
    Green & Yang (2009), *Psychometrika* 74(1), 155-167; Yang & Green (2015),
    *Methodology* 11(1), 23-34.

    Examples
    --------
    >>> import bayesmeta as bm
    >>> ds = bm.datasets.simulated(random_seed=0)
    >>> fit = bm.cfa("coh =~ Rater.1.COH + Rater.2.COH + Rater.3.COH", ds)
    >>> res = bm.omega_ordinal(fit)
    >>> bool(0 < res.summary().loc[("omega_ordinal", "coh"), "classical"] < 1)
    True

    R equivalent: ``semTools::compRelSEM(lavaan::cfa(model, data, ordered = TRUE,
    std.lv = TRUE))``; ``omega_latent``: ``compRelSEM(fit, ord.scale = FALSE)``.
    """
    if not isinstance(fit, CFAResult):
        raise TypeError(f"fit must be a WLSMV CFA result (bm.cfa(model, data)), got "
                        f"{type(fit).__name__}; a Bayesian CFA has no omega_ordinal yet.")
    rows = _omega_rows(fit)
    if not rows:
        raise ValueError("omega_ordinal needs a factor with at least two indicators.")
    frame = pd.DataFrame(rows).set_index(["estimand", "trait"])
    se = _delta_se(fit, frame["classical"].to_numpy())
    z = stats.norm.ppf(0.5 + fit.ci_prob / 2)
    frame["se"] = se
    frame["classical_low"] = frame["classical"] - z * se
    frame["classical_high"] = np.minimum(1.0, frame["classical"] + z * se)
    columns = ["classical", "classical_low", "classical_high"]
    return OmegaOrdinalResult(
        frame[columns], title="Coefficient omega of ordinal indicators",
        info={"cfa": fit.info.get("method", "WLSMV"),
              "observations": fit.info.get("observations")},
        notes=["omega_ordinal: Green & Yang (2009) on the ratings' scale, from the WLSMV "
               "loadings and thresholds with the sample polychoric correlations in the "
               "denominator (semTools::compRelSEM's default); omega_latent in details(): "
               "the latent responses' omega (compRelSEM(ord.scale = FALSE)).",
               "classical_low/high: Wald interval with the delta-method se (gradient in the "
               "sample thresholds and polychorics, their asymptotic covariance "
               "Gamma / (N - 1))."],
        details=frame.drop(columns=columns), ci_prob=fit.ci_prob,
        classical_ci_kind="Wald, delta-method se", data_hash=fit.provenance.get("data_hash"))


def _omega_rows(fit: CFAResult) -> list[dict[str, Any]]:
    """One row per factor with two or more indicators: omega_ordinal and omega_latent."""
    params = fit.parameters()
    est = params["est"]
    loadings = est.xs("loading", level="estimand").droplevel("op")
    thresholds = est.xs("threshold", level="estimand").droplevel("op")
    poly = fit.extra["polychoric"].to_pandas()
    variances: dict[str, float] = {}
    if "variance" in params.index.get_level_values("estimand"):
        for (lhs, _op, rhs), v in est.xs("variance", level="estimand").items():
            if lhs == rhs:
                variances[str(lhs)] = float(v)
    rows: list[dict[str, Any]] = []
    for factor in dict.fromkeys(loadings.index.get_level_values(0)):
        lam = loadings.loc[factor]
        lam = lam[lam != 0]
        if len(lam) < 2:
            continue
        names = [str(v) for v in lam.index]
        phi = variances.get(str(factor), 1.0)
        lam_v = lam.to_numpy(dtype=float)
        tau = [thresholds.loc[v].to_numpy(dtype=float) for v in names]
        r_obs = poly.loc[names, names].to_numpy(dtype=float, copy=True)
        np.fill_diagonal(r_obs, 1.0)
        common = np.outer(lam_v, lam_v) * phi
        rows.append({
            "estimand": "omega_ordinal", "trait": str(factor),
            "classical": _sum_covariance(tau, common) / _sum_covariance(tau, r_obs),
            "omega_latent": float(common.sum() / r_obs.sum()),
            "n_indicators": len(names), "indicators": ", ".join(names),
        })
    return rows


def _delta_se(fit: CFAResult, point: np.ndarray, step: float = 1e-5) -> np.ndarray:
    r"""Delta-method standard error of each factor's omega.

    Omega is a smooth function :math:`\omega(\hat\theta(s), s)` of the sample statistics
    :math:`s = (\hat\tau, \hat\rho)`, directly (thresholds, the denominator's
    polychorics) and through the DWLS estimates :math:`\hat\theta`, whose derivative in the
    polychorics is :math:`(\Delta^\top W\Delta)^{-1}\Delta^\top W` (Gauss-Newton, as the
    robust covariance of :mod:`bayesmeta.validity.wlsmv`). With the gradient :math:`g`
    (central differences of the closed form), :math:`\widehat{se}^2 = g^\top\Gamma g/(N-1)`.
    NaN when the fit kept no ratings (a loaded result) or the pieces disagree."""
    from bayesmeta.validity.polychoric import polychoric
    from bayesmeta.validity.wlsmv import _structure

    ratings = fit.extra.get("ratings")
    if ratings is None or fit.spec is None:
        return np.full(point.shape, np.nan)
    spec = fit.spec
    sample = polychoric(np.asarray(ratings.values, dtype=float), names=list(spec.observed))
    variables, factors = list(sample.variables), list(spec.factors)
    st = _structure(spec, variables)
    est = fit.parameters()["est"]

    def lookup(kind: str, a: str, op: str, b: str) -> float:
        key = (kind, a, op, b)
        return float(est[key] if key in est.index else est[(kind, b, op, a)])

    x = np.array([lookup("loading", factors[f], "=~", variables[i]) for i, f in st.lam_free]
                 + [lookup("factor_correlation", factors[a], "~~", factors[b])
                    for a, b in st.psi_free]
                 + [lookup("covariance", variables[i], "~~", variables[j])
                    for i, j in st.theta_free])
    stat, pairs, n_th = sample.statistics, sample.pairs, sample.n_thresholds
    th_of = np.repeat(np.arange(len(variables)), [len(t) for t in sample.thresholds])
    jac = st.jacobian(x, pairs)                                     # (pairs, params)
    w = 1 / np.diag(sample.gamma)[n_th:]
    dx_dr = np.linalg.solve(jac.T @ (w[:, None] * jac), jac.T * w)  # (params, pairs)
    lam_hat, psi_hat, _ = st.matrices(x)
    out = []
    for f in range(len(factors)):
        idx = np.flatnonzero(lam_hat[:, f] != 0)
        if idx.size < 2:
            continue
        # omega_f depends on its indicators' thresholds and polychorics and its loadings
        s_idx = np.concatenate([np.flatnonzero(np.isin(th_of, idx)), n_th + np.flatnonzero(
            [i in idx and j in idx for i, j in pairs])])
        k_idx = np.array([k for k, (i, g) in enumerate(st.lam_free) if g == f], dtype=int)

        def omega(lam_f: np.ndarray, s_: np.ndarray, idx=idx, f=f) -> float:
            r = np.eye(len(variables))
            for (i, j), v in zip(pairs, s_[n_th:], strict=True):
                r[i, j] = r[j, i] = v
            tau = [s_[:n_th][th_of == i] for i in idx]
            common = np.outer(lam_f[idx], lam_f[idx]) * psi_hat[f, f]
            return _sum_covariance(tau, common) / _sum_covariance(tau, r[np.ix_(idx, idx)])

        lam_f = lam_hat[:, f]
        if len(out) >= point.size or abs(omega(lam_f, stat) - point[len(out)]) > 1e-6:
            return np.full(point.shape, np.nan)           # the pieces disagree: no se
        grad = np.zeros(stat.size)
        for j in s_idx:
            e = np.zeros(stat.size)
            e[j] = step
            grad[j] = (omega(lam_f, stat + e) - omega(lam_f, stat - e)) / (2 * step)
        d_x = np.zeros(x.size)
        for k in k_idx:
            e = np.zeros(lam_f.size)
            e[st.lam_free[k][0]] = step
            d_x[k] = (omega(lam_f + e, stat) - omega(lam_f - e, stat)) / (2 * step)
        grad[n_th:] += d_x @ dx_dr
        out.append(grad @ sample.gamma @ grad / (sample.n_obs - 1))
    if len(out) != point.size:
        return np.full(point.shape, np.nan)
    return np.sqrt(np.array(out))


__all__ = ["OmegaOrdinalResult", "omega_ordinal"]
