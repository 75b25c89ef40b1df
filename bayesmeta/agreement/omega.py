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
from scipy import special

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
        ``indicators``. No interval: the estimate's sampling variance is not computed.

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
    if not rows:
        raise ValueError("omega_ordinal needs a factor with at least two indicators.")
    frame = pd.DataFrame(rows).set_index(["estimand", "trait"])
    return OmegaOrdinalResult(
        frame[["classical"]], title="Coefficient omega of ordinal indicators",
        info={"cfa": fit.info.get("method", "WLSMV"),
              "observations": fit.info.get("observations")},
        notes=["omega_ordinal: Green & Yang (2009) on the ratings' scale, from the WLSMV "
               "loadings and thresholds with the sample polychoric correlations in the "
               "denominator (semTools::compRelSEM's default); omega_latent in details(): "
               "the latent responses' omega (compRelSEM(ord.scale = FALSE))."],
        details=frame.drop(columns=["classical"]), ci_prob=fit.ci_prob,
        data_hash=fit.provenance.get("data_hash"))


__all__ = ["OmegaOrdinalResult", "omega_ordinal"]
