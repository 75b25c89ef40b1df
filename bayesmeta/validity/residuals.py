"""Residual analysis of metrics after the traits (:func:`metric_residuals`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayesmeta.data import select
from bayesmeta.options import ResamplingOptions, resolve_seed
from bayesmeta.results import Result, data_hash
from bayesmeta.summaries import (
    CI_PROB,
    MCMC_COLUMNS,
    check_ci_prob,
    equal_tailed,
    summarize,
)
from bayesmeta.validity._factor_common import (
    _UNIT_LABEL,
    _bootstrap_weights,
    _factor_correlations,
    _is_bayesian,
    _output_covariances,
    _stack_outputs,
)


def _residual_corr(cov: np.ndarray, T: int, psi: np.ndarray | None) -> np.ndarray:
    """Correlations of the metrics' residuals after the traits (..., M, M): the partial
    covariance ``C_mm - C_mf C_ff^-1 C_fm`` (``psi`` None) or, with regression calibration,
    ``C_mm - B' Psi B`` with ``B = C_ff^-1 C_fm``."""
    cff, cfm, cmm = cov[..., :T, :T], cov[..., :T, T:], cov[..., T:, T:]
    b = np.linalg.solve(cff, cfm)
    if psi is None:
        res = cmm - np.swapaxes(cfm, -1, -2) @ b
    else:
        res = cmm - np.swapaxes(b, -1, -2) @ psi @ b
    sd = np.sqrt(np.diagonal(res, axis1=-2, axis2=-1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return res / (sd[..., :, None] * sd[..., None, :])


def _principal_components(corr: np.ndarray, k: int, ref: np.ndarray | None = None
                          ) -> tuple[np.ndarray, np.ndarray]:
    """Top-``k`` eigenvectors scaled to loadings (..., M, k) and the share of the total
    variance of each (..., k); signs aligned to ``ref`` loadings (M, k), else the largest
    absolute loading made positive."""
    vals, vecs = np.linalg.eigh(corr)
    vals, vecs = vals[..., ::-1][..., :k], vecs[..., :, ::-1][..., :, :k]
    if ref is None:
        big = np.take_along_axis(vecs, np.abs(vecs).argmax(-2)[..., None, :], axis=-2)
        sign = np.sign(big)
    else:
        sign = np.sign(np.einsum("...mk,mk->...k", vecs, ref))[..., None, :]
    sign = np.where(sign == 0, 1.0, sign)
    loadings = vecs * sign * np.sqrt(np.clip(vals, 0, None))[..., None, :]
    share = vals / corr.shape[-1]
    return loadings, share


def _posterior_frame(summ: xr.Dataset, index: pd.MultiIndex) -> pd.DataFrame:
    iv = summ["interval"].transpose(..., "ci_bound").values.reshape(-1, 2)
    return pd.DataFrame({"mean": summ["mean"].values.ravel(), "sd": summ["sd"].values.ravel(),
                         "hdi_low": iv[:, 0], "hdi_high": iv[:, 1],
                         **{k: summ[k].values.ravel() for k in MCMC_COLUMNS}}, index=index)


#: Bayesian metric-validity results whose residual correlations have a posterior.
POSTERIOR_KINDS = {"joint_metric_validity": "joint model",
                   "modular_metric_validity": "modular route"}


def _joint_residuals(fit: Any, *, metrics: Sequence[str] | None = None,
                           n_components: int = 2, ci_prob: float = CI_PROB) -> Result:
    """:func:`~bayesmeta.validity.residuals.metric_residuals` of a joint fit: the posterior
    of the residual correlations (:meth:`JointValidityResult.residual_correlations`) and of
    their principal components, each draw's signs aligned to the components of the
    posterior-mean correlation matrix; the same index as the classical table."""
    corr, keep, n_rows = fit.residual_correlation_draws(metrics)
    M, k = len(keep), int(n_components)
    if M < max(2, k):
        raise ValueError(f"metric_residuals needs at least {max(2, k)} metrics "
                         f"(n_components={k}); got {M}.")
    C, D = corr.shape[:2]
    flat = corr.reshape(C * D, M, M)
    ref, _ = _principal_components(flat.mean(0), k)
    loads, shares = _principal_components(flat, k, ref=ref)
    iu = np.triu_indices(M, 1)
    comps = [f"PC{c + 1}" for c in range(k)]
    index = ([("residual_correlation", "", keep[a], keep[b]) for a, b in zip(*iu,
                                                                             strict=True)]
             + [("pc_loading", c, m, "") for c in comps for m in keep]
             + [("pc_variance_share", c, "", "") for c in comps])
    vals = np.concatenate([flat[:, iu[0], iu[1]], np.transpose(loads, (0, 2, 1)).reshape(
        C * D, k * M), shares], axis=1).reshape(C, D, -1)
    summ = summarize(xr.DataArray(vals, dims=("chain", "draw", "row")), ci_prob=ci_prob)
    table = _posterior_frame(summ, pd.MultiIndex.from_tuples(
        index, names=["estimand", "component", "metric", "metric2"]))
    route = POSTERIOR_KINDS[fit.kind]
    notes = [("Residuals e = x - a - b'f of the standardized metric scores in every "
              "posterior draw of the joint model (its own traits f)"
              if fit.kind == "joint_metric_validity" else
              "Metric errors e in every draw of the modular route: the residuals on the "
              "traits' conditional means, their covariance less B V B' (the traits' own "
              "uncertainty)") + f", correlated over the {n_rows} outputs with every metric "
             "scored (MetricEval App. A.6).",
             "PC loadings: eigenvectors of each draw's residual correlation matrix times "
             "the square root of their eigenvalue, signs aligned to the components of the "
             "posterior-mean matrix; read intervals only for well-separated eigenvalues."]
    info = {"fit": f"metric validity, {route}", "metrics": M, "components": k}
    extra = {"residual_correlation": xr.DataArray(
        flat.mean(0), dims=("metric", "metric2"), coords={"metric": keep, "metric2": keep})}
    return Result(table, title="Residual correlations of metrics after the traits "
                  f"(Bayesian, {route})", info=info, notes=notes, extra=extra,
                  ci_prob=ci_prob, posterior=fit.posterior_kind,
                  random_seed=fit.provenance.get("random_seed"),
                  data_hash=fit.provenance.get("data_hash"))


def metric_residuals(
    data: xr.Dataset,
    fit: Any,
    *,
    metrics: Sequence[str] | None = None,
    n_components: int = 2,
    disattenuate: bool = True,
    score_method: str = "EBM",
    run: Any = None,
    reference: Any = "first",
    ci_prob: float = CI_PROB,
    resampling: ResamplingOptions | Mapping[str, Any] | None = None,
    random_seed: int | None = None,
) -> Result:
    r"""Residual correlations of metrics after the traits, and their principal components
    (MetricEval App. A.6, Fig. 7).

    Each metric is regressed on the CFA's factor scores over outputs (as
    :func:`metric_variance`); the residuals' correlation matrix shows which metrics share
    variance that no expert-rated trait explains, its principal components the clusters.

    .. math::
        \Sigma_e = C_{xx} - B^\top \Psi B, \qquad B = C_{ff}^{-1} C_{fx}, \qquad
        \rho^{e}_{mm'} = \Sigma_{e,mm'} / \sqrt{\Sigma_{e,mm}\Sigma_{e,m'm'}}

    (regression calibration, ``disattenuate=True``: the traits' model covariance
    :math:`\Psi` removes all of their variance, which the scores' own covariance would
    not); with ``disattenuate=False`` the plain partial correlation given the scores,
    :math:`C_{xx} - C_{xf} C_{ff}^{-1} C_{fx}`. Principal components: eigenvectors of
    :math:`\rho^e` scaled by the square roots of their eigenvalues (loadings), sign fixed so
    the largest loading is positive; in every bootstrap resample the signs are aligned to
    the point estimate's.

    Parameters
    ----------
    data : xarray.Dataset
    fit : CFAResult, JointValidityResult or ModularValidityResult
        ``bm.cfa(model, data)``, or a joint or modular fit (``bm.metric_variance(data,
        fit, estimator="joint")`` or ``"modular"``): then the posterior of the residual
        correlations and their components, from the residuals of every draw
        (``disattenuate``, ``score_method``, ``resampling`` and ``random_seed`` do not
        apply).
    metrics : list of str, optional
        At least ``n_components`` metrics (default all).
    n_components : int
        Principal components reported (default 2, as Fig. 7).
    disattenuate : bool
        Regression calibration (default) or the partial correlation given the scores.
    score_method, run, reference, ci_prob, resampling, random_seed :
        As :func:`metric_variance` (percentile bootstrap over ``resampling.unit``).

    Returns
    -------
    Result
        ``summary()`` indexed ``(estimand, component, metric, metric2)``: estimands
        ``residual_correlation`` (each pair once, ``metric < metric2`` in the data's order),
        ``pc_loading`` (per component and metric) and ``pc_variance_share`` (per component);
        columns ``classical``, ``classical_low``, ``classical_high``.

    Notes
    -----
    Bootstrap intervals of loadings are only meaningful for components whose eigenvalue is
    well separated from the next (otherwise the components rotate between resamples). The
    bootstrap holds the factor scores and :math:`\Psi` fixed.

    Examples
    --------
    >>> import bayesmeta as bm
    >>> ds = bm.datasets.simulated(random_seed=0, n_systems=8, n_items=30, n_metrics=4)
    >>> m = ("coh =~ Rater.1.COH + Rater.2.COH + Rater.3.COH\n"
    ...      "con =~ Rater.1.CON + Rater.2.CON + Rater.3.CON")
    >>> res = bm.metric_residuals(ds, bm.cfa(m, ds), resampling={"n_resamples": 50},
    ...                           random_seed=0)
    >>> sorted(set(res.summary().index.get_level_values("estimand")))
    ['pc_loading', 'pc_variance_share', 'residual_correlation']

    R equivalent (plain partial correlations): ``fs <- lavPredict(fit)``;
    ``e <- resid(lm(as.matrix(metrics) ~ fs))``; ``cor(e)``; ``prcomp(e, scale. = TRUE)``.
    """
    ci_prob = check_ci_prob(ci_prob)
    if getattr(fit, "kind", None) in POSTERIOR_KINDS:
        return _joint_residuals(fit, metrics=metrics, n_components=n_components,
                                      ci_prob=ci_prob)
    if _is_bayesian(fit):
        raise NotImplementedError("metric_residuals takes a classical CFA (bm.cfa(model, "
                                  "data)); the posterior version is not implemented.")
    if isinstance(n_components, bool) or not isinstance(n_components, int | np.integer) \
            or n_components < 1:
        raise ValueError(f"n_components must be a positive integer, got {n_components!r}.")
    opts = ResamplingOptions.coerce(resampling)
    seed = resolve_seed(random_seed)
    rng = np.random.default_rng(seed)
    scores = fit.factor_scores(method=score_method)
    if "item" not in scores.dims:
        raise ValueError("metric_residuals needs a CFA fitted to a bayesmeta Dataset.")
    traits, mnames, z, incomplete, notes = _stack_outputs(data, scores, metrics, run,
                                                          reference)
    T, M = len(traits), len(mnames)
    if M < max(2, n_components):
        raise ValueError(f"metric_residuals needs at least {max(2, n_components)} metrics "
                         f"(n_components={n_components}); got {M}.")
    S, I = incomplete.shape
    R = opts.n_resamples
    w_sys, w_items = _bootstrap_weights(rng, R, S, I, opts.unit)
    cov = _output_covariances(z, incomplete, w_sys, w_items)
    psi = _factor_correlations(fit, traits) if disattenuate else None
    corr = _residual_corr(cov, T, psi)  # (R + 1, M, M)
    k = int(n_components)
    load0, _ = _principal_components(corr[0], k)
    loads, shares = _principal_components(corr, k, ref=load0)
    iu = np.triu_indices(M, 1)
    comps = [f"PC{c + 1}" for c in range(k)]
    index = ([("residual_correlation", "", mnames[a], mnames[b]) for a, b in zip(*iu,
                                                                                  strict=True)]
             + [("pc_loading", c, m, "") for c in comps for m in mnames]
             + [("pc_variance_share", c, "", "") for c in comps])
    vals = np.concatenate([corr[:, iu[0], iu[1]].T,
                           np.transpose(loads, (2, 1, 0)).reshape(k * M, -1),
                           shares.T], axis=0)  # (rows, R + 1)
    table = pd.DataFrame({"classical": vals[:, 0]}, index=pd.MultiIndex.from_tuples(
        index, names=["estimand", "component", "metric", "metric2"]))
    kind = None
    if R:
        iv = equal_tailed(vals[:, 1:], ci_prob, axis=(-1,))
        table["classical_low"], table["classical_high"] = iv[:, 0], iv[:, 1]
        kind = f"percentile bootstrap over {_UNIT_LABEL[opts.unit]}"
    notes.append("Residual correlations after regression calibration on the factor scores "
                 "(the traits' model covariance removed)." if disattenuate else
                 "Partial correlations given the point factor scores (part of the traits' "
                 "variance stays in the residuals: the scores are noisy).")
    notes.append("PC loadings: eigenvectors of the residual correlation matrix times the "
                 "square root of their eigenvalue, signs aligned to the point estimate in "
                 "every resample; read intervals only for well-separated eigenvalues.")
    info = {"data": select.describe(data), "regressors": f"factor scores "
            f"({', '.join(traits)}; {score_method})", "metrics": M,
            "components": k}
    if R:
        info["resampling"] = f"{R} bootstrap resamples of {_UNIT_LABEL[opts.unit]}"
    extra = {"residual_correlation": xr.DataArray(
        corr[0], dims=("metric", "metric2"), coords={"metric": mnames, "metric2": mnames})}
    return Result(table, title="Residual correlations of metrics after the traits",
                  info=info, notes=notes, extra=extra, ci_prob=ci_prob,
                  classical_ci_kind=kind, random_seed=seed, data_hash=data_hash(data))
