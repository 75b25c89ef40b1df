r"""Factor scores of an ordinal CFA: lavaan's ``lavPredict()`` for ordered indicators, and
the posterior draws of the Bayesian CFA, per output and aggregated to system means.

Classical (:meth:`bayesmeta.validity.factor_analysis.CFAResult.factor_scores`). For output
:math:`n` with ratings :math:`y_{nj}` (category :math:`k_{nj}` of indicator :math:`j`; missing
ratings left out) the **empirical Bayes modal** (EBM) score is the mode of the posterior of the
factors given the ratings, the WLSMV estimates plugged in (delta parameterization):

.. math::
    \hat\eta_n = \arg\min_\eta \; \tfrac12 \eta^\top \Psi^{-1} \eta
    - \sum_{j \text{ observed}} \log\Big[\Phi\Big(\frac{\tau_{j,k_{nj}} - \lambda_j^\top\eta}
    {\sqrt{\theta_{jj}}}\Big) - \Phi\Big(\frac{\tau_{j,k_{nj}-1} - \lambda_j^\top\eta}
    {\sqrt{\theta_{jj}}}\Big)\Big],

with :math:`\Lambda` the loadings, :math:`\Psi` the factor correlations,
:math:`\theta_{jj} = 1 - \lambda_j^\top\Psi\lambda_j` the residual variances (residual
covariances are ignored, as in lavaan) and :math:`\tau_{j,0} = -\infty`,
:math:`\tau_{j,K_j} = \infty`. This is lavaan's ``lav_predict_eta_ebm_ml()`` (Rosseel
2012), the default of ``lavPredict()`` for ordered indicators. The objective is strictly
convex (the probit interval likelihood is log-concave), so its unique minimum is found here
by Newton's method with step halving to machine precision, where lavaan stops BFGS at a
relative objective change of 1e-8 (scores agree to about 1e-5). ``method="regression"``:
lavaan 0.6-14's ``lav_predict_eta()`` maps ``"regression"`` to ``"EBM"`` when any indicator
is ordered, so ``lavPredict(fit, method = "regression")`` returns the EBM scores; bayesmeta
does the same, so the two names give lavaan's two answers.

Bayesian (:meth:`bayesmeta.validity.ordinal_cfa.OrdinalCFAResult.factor_scores`): the
posterior draws of :math:`\eta_n` (drawn from their conditional normal given the latent
responses of each MCMC draw), carrying the uncertainty of the scores *and* of the model's
parameters.

System level: the mean over items of the output scores of each system,
:math:`\bar\eta_{s} = \frac{1}{|I_s|} \sum_{i \in I_s} \eta_{si}` (outputs without any
rating left out), per draw for the Bayesian scores.

References
----------
Rosseel, Y. (2012). lavaan: An R package for structural equation modeling. *Journal of
Statistical Software*, 48(2). (``lavPredict``; source ``lav_predict.R``.)
Skrondal, A., & Rabe-Hesketh, S. (2004). *Generalized latent variable modeling*, Sec. 7.3
(empirical Bayes modal prediction). Chapman & Hall/CRC.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import xarray as xr
from scipy import special

__all__ = ["LEVELS", "METHODS", "ebm_scores", "system_means"]

#: Levels of :meth:`factor_scores`: per output or per system (mean over items).
LEVELS = ("output", "system")
#: Classical score methods (lavaan's names; "regression" is EBM for ordered indicators).
METHODS = ("EBM", "regression")

_LOG_SQRT_2PI = 0.5 * np.log(2 * np.pi)


def check_level(level: str) -> str:
    """Return ``level`` or raise naming the argument."""
    if level not in LEVELS:
        raise ValueError(f"level must be one of {', '.join(map(repr, LEVELS))}, got "
                         f"{level!r}.")
    return level


def check_method(method: str) -> str:
    """Return the canonical score method (case-insensitive) or raise naming the argument."""
    key = {m.lower(): m for m in METHODS}.get(str(method).lower())
    if key is None:
        raise ValueError(f"method must be one of {', '.join(map(repr, METHODS))}, got "
                         f"{method!r}.")
    return key


def _log_interval(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    r""":math:`\log(\Phi(hi) - \Phi(lo))` for ``lo < hi``, accurate in both tails."""
    upper = lo > 0  # both in the upper tail: use the survival functions
    a = np.where(upper, -hi, lo)
    b = np.where(upper, -lo, hi)
    lb, la = special.log_ndtr(b), special.log_ndtr(a)
    with np.errstate(divide="ignore", invalid="ignore"):
        return lb + np.log1p(-np.exp(la - lb))


def _log_phi(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):
        return np.where(np.isfinite(x), -0.5 * x * x - _LOG_SQRT_2PI, -np.inf)


def ebm_scores(
    codes: np.ndarray,
    loadings: np.ndarray,
    factor_corr: np.ndarray,
    residual_var: np.ndarray,
    thresholds: list[np.ndarray],
    *,
    tol: float = 1e-12,
    max_iter: int = 200,
) -> np.ndarray:
    r"""Empirical Bayes modal factor scores of ordinal ratings (lavaan's ``lavPredict()``).

    Parameters
    ----------
    codes : (N, J) array
        Category of each rating as 0, 1, ..., K_j - 1 (the position among the indicator's
        observed values); NaN for missing.
    loadings : (J, F) array
        :math:`\Lambda` (delta parameterization).
    factor_corr : (F, F) array
        :math:`\Psi`.
    residual_var : (J,) array
        :math:`\theta_{jj}`, all positive (lavaan refuses negative ones).
    thresholds : list of J arrays
        :math:`\tau_{j,1} < \dots < \tau_{j,K_j-1}`.
    tol : float
        Newton stops when the largest step is below ``tol``.
    max_iter : int

    Returns
    -------
    (N, F) array
        The scores; NaN for an output with no rating.

    Notes
    -----
    Objective, gradient and Hessian per output (module docstring): with
    :math:`a, b` the standardized lower and upper thresholds of the observed category and
    :math:`r_a = \phi(a)/P`, :math:`r_b = \phi(b)/P`,
    :math:`\partial \log P / \partial \mu = (r_a - r_b)/s` and
    :math:`\partial^2 \log P / \partial \mu^2 = (a r_a - b r_b)/s^2 - (\partial \log P /
    \partial \mu)^2 \le 0`, :math:`\mu = \lambda_j^\top \eta`, :math:`s = \sqrt{\theta_{jj}}`.
    All outputs are solved at once.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmeta.validity.factor_scores import ebm_scores
    >>> codes = np.array([[0.0, 0.0], [1.0, 1.0], [1.0, np.nan]])
    >>> s = ebm_scores(codes, np.array([[0.8], [0.8]]), np.eye(1), np.array([0.36, 0.36]),
    ...                [np.array([0.0]), np.array([0.0])])
    >>> bool(s[0, 0] < 0 < s[2, 0] < s[1, 0])
    True
    """
    codes = np.asarray(codes, dtype=float)
    lam = np.asarray(loadings, dtype=float)
    psi = np.asarray(factor_corr, dtype=float)
    theta = np.asarray(residual_var, dtype=float)
    N, J = codes.shape
    F = lam.shape[1]
    if lam.shape[0] != J or psi.shape != (F, F) or theta.shape != (J,) or len(thresholds) != J:
        raise ValueError(f"shapes do not match: codes {codes.shape}, loadings {lam.shape}, "
                         f"factor_corr {psi.shape}, residual_var {theta.shape}, "
                         f"{len(thresholds)} threshold vectors.")
    if (theta <= 0).any():
        raise ValueError("factor scores need positive residual variances; the fit has a "
                         "Heywood case (lavaan: 'factor scores could not be computed due to "
                         "at least one negative (residual) variance').")
    if np.linalg.eigvalsh(psi).min() <= 0:
        raise ValueError("EBM factor scores need a positive-definite factor correlation "
                         "matrix; this fit's is not, so the objective has no unique mode "
                         "(lavaan warns and reports a local mode).")
    observed = ~np.isnan(codes)
    k = np.where(observed, codes, 0).astype(int)
    lo_t = np.empty((N, J))
    hi_t = np.empty((N, J))
    for j, t in enumerate(thresholds):
        full = np.concatenate([[-np.inf], np.asarray(t, dtype=float), [np.inf]])
        if (k[:, j] > len(t)).any():
            raise ValueError(f"indicator {j} has a category above its {len(t)} thresholds.")
        lo_t[:, j], hi_t[:, j] = full[k[:, j]], full[k[:, j] + 1]
    s = np.sqrt(theta)
    pinv = np.linalg.inv(psi)
    w = observed.astype(float)

    def parts(eta: np.ndarray, second: bool):
        mu = eta @ lam.T
        a, b = (lo_t - mu) / s, (hi_t - mu) / s
        logp = _log_interval(a, b)
        obj = 0.5 * np.einsum("nf,fg,ng->n", eta, pinv, eta) - (w * np.where(
            observed, logp, 0.0)).sum(1)
        if not second:
            return obj, None, None
        with np.errstate(invalid="ignore", over="ignore"):
            ra, rb = np.exp(_log_phi(a) - logp), np.exp(_log_phi(b) - logp)
            g1 = np.where(observed, (ra - rb) / s, 0.0)
            ara = np.where(np.isfinite(a), a * ra, 0.0)  # x phi(x) -> 0 at +-inf
            brb = np.where(np.isfinite(b), b * rb, 0.0)
            g2 = np.where(observed, (ara - brb) / s**2 - g1**2, 0.0)
        grad = eta @ pinv - g1 @ lam
        hess = pinv[None] - np.einsum("nj,jf,jg->nfg", g2, lam, lam)
        return obj, grad, hess

    eta = np.zeros((N, F))
    active = observed.any(1)
    for _ in range(max_iter):
        obj, grad, hess = parts(eta, True)
        step = np.linalg.solve(hess, grad[..., None])[..., 0]
        step[~active] = 0.0
        t = np.ones(N)
        for _half in range(40):  # step halving: the objective must not increase
            new = eta - t[:, None] * step
            worse = parts(new, False)[0] > obj + 1e-14 * np.abs(obj)
            if not worse.any():
                break
            t = np.where(worse, t / 2, t)
        eta = eta - t[:, None] * step
        if np.abs(t[:, None] * step).max() < tol:
            break
    else:
        raise RuntimeError(f"EBM factor scores did not converge in {max_iter} Newton "
                           f"iterations.")
    eta[~active] = np.nan
    return eta


def system_means(scores: xr.DataArray) -> xr.DataArray:
    r"""Mean over ``item`` of output scores (outputs without a score left out):
    :math:`\bar\eta_s = |I_s|^{-1} \sum_{i \in I_s} \eta_{si}`. Raises when a system has no
    scored output."""
    if "item" not in scores.dims:
        raise ValueError(f"system means need an 'item' dim; the scores have dims "
                         f"{tuple(scores.dims)} (outputs without system and item labels).")
    out = scores.mean("item", skipna=True)
    empty = scores.notnull().sum("item") == 0
    if bool(empty.any()):
        bad = scores["system"].values[np.asarray(empty.any([d for d in empty.dims
                                                            if d != "system"]))]
        raise ValueError(f"system(s) {list(map(str, bad))} have no output with a rating, so "
                         f"no factor score.")
    out.attrs = dict(scores.attrs, level="system")
    return out


def from_cases(values: np.ndarray, cases: xr.DataArray, factors: list[str]) -> xr.DataArray:
    """Scores (N, F) of the cases of ``cases`` (dim ``output``, with ``system``/``item``
    coords when the data had them) as a DataArray with dims (system, item, trait) or
    (output, trait)."""
    da = xr.DataArray(values, dims=("output", "trait"),
                      coords={"output": cases["output"].values, "trait": list(factors)})
    if "system" in cases.coords and "item" in cases.coords:
        idx = pd.MultiIndex.from_arrays([cases["system"].values, cases["item"].values],
                                        names=["system", "item"])
        da = da.assign_coords(xr.Coordinates.from_pandas_multiindex(idx, "output"))
        da = da.unstack("output").transpose("system", "item", "trait")
        # the data's order (of first appearance), not unstack's sorted one
        da = da.reindex(system=pd.unique(cases["system"].values),
                        item=pd.unique(cases["item"].values))
    return da
