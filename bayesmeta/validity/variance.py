"""What a metric measures: trait, other traits and error (:func:`metric_variance`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayesmeta.data import select
from bayesmeta.options import ResamplingOptions, SamplerOptions, resolve_seed
from bayesmeta.results import Result, data_hash
from bayesmeta.summaries import CI_PROB, check_ci_prob, equal_tailed, summarize
from bayesmeta.validity._factor_common import (
    _UNIT_LABEL,
    _bootstrap_weights,
    _claims,
    _factor_correlations,
    _is_bayesian,
    _output_covariances,
    _stack_outputs,
    _weighted_cov,
)

#: The routes of :func:`metric_variance` (``estimator``).
ESTIMATORS = ("auto", "joint", "modular")


def _regression_shares(cov: np.ndarray, T: int, psi: np.ndarray | None = None
                       ) -> dict[str, np.ndarray]:
    """From covariance matrices (..., T + M, T + M) of [factor scores, metrics]: the
    standardized coefficients beta (..., M, T), R^2 (..., M) and the correlations r
    (..., M, T) of each metric with the traits. ``psi`` None: OLS on the standardized
    scores; else regression calibration, the raw coefficients standardized with the factors'
    model variance 1 and correlations ``psi`` (see :func:`metric_variance`)."""
    cff = cov[..., :T, :T]
    cfm = cov[..., :T, T:]
    sd_x = np.sqrt(np.diagonal(cov, axis1=-2, axis2=-1)[..., T:])  # (..., M)
    if psi is None:
        sd_f = np.sqrt(np.diagonal(cff, axis1=-2, axis2=-1))
        rff = cff / (sd_f[..., :, None] * sd_f[..., None, :])
        rfm = cfm / (sd_f[..., :, None] * sd_x[..., None, :])
        beta = np.linalg.solve(rff, rfm)  # (..., T, M)
    else:
        raw = np.linalg.solve(cff, cfm)  # (..., T, M), on the latent scale (variance 1)
        beta = raw / sd_x[..., None, :]
        rfm = np.einsum("...st,...tm->...sm", psi, beta)  # model cor(metric, trait)
    r2 = np.einsum("...tm,...tm->...m", beta, rfm)
    return {"beta": np.swapaxes(beta, -1, -2), "r2": r2, "r": np.swapaxes(rfm, -1, -2)}


def metric_variance(
    data: xr.Dataset,
    fit: Any,
    *,
    metrics: Sequence[str] | None = None,
    claims: Mapping[str, str] | None = None,
    level: str = "output",
    disattenuate: bool | None = None,
    score_method: str = "EBM",
    run: Any = None,
    reference: Any = "first",
    estimator: str = "auto",
    errors: str = "normal",
    method_factors: int | str = "auto",
    residuals: str = "auto",
    ci_prob: float = CI_PROB,
    resampling: ResamplingOptions | Mapping[str, Any] | None = None,
    sampling: SamplerOptions | Mapping[str, Any] | str | None = None,
    random_seed: int | None = None,
    progress: bool | None = None,
) -> Result:
    r"""How much of each metric's variance is its trait, the other traits, its own error.

    Each metric is regressed on the CFA's factor scores, all standardized (MetricEval's
    validity model, ``score[n, m] = a_m + sum_t b_{m,t} f_{n,t} + e_{n,m}``):

    .. math::
        z(x_{nm}) = \sum_t \beta_{mt}\, z(\hat\eta_{nt}) + e_{nm}, \qquad
        \beta_m = R_{ff}^{-1} r_{fm}, \qquad R^2_m = r_{fm}^\top \beta_m,

    with :math:`R_{ff}` the correlations of the factor scores and :math:`r_{fm}` their
    correlations with the metric. Reported per metric:

    * ``validity_coefficient`` (per trait): the standardized loading :math:`\beta_{mt}`;
    * ``r_squared``: :math:`R^2_m`; ``error_share``: :math:`1 - R^2_m`, the share of the
      metric's variance that no trait explains (metric error variance over total variance);
    * ``trait_share`` (row labelled with the claimed trait :math:`c`): Pratt's (1987) share
      :math:`\beta_{mc}\, r_{mc}`; ``other_traits_share``: :math:`R^2_m - \beta_{mc} r_{mc}`
      (Pratt's shares of the other traits, which sum with it to :math:`R^2_m`);
    * ``specificity``: :math:`\beta_{mc} r_{mc} / R^2_m`, the fraction of the explained
      variance that is the claimed trait (1: the metric measures its trait only).

    Parameters
    ----------
    data : xarray.Dataset
        The dataset the CFA was fitted to, with metric ``score`` s.
    fit : CFAResult or OrdinalCFAResult
        ``bm.cfa(model, data)`` (WLSMV; its EBM scores are the regressors, bootstrap
        interval) or ``bm.cfa(model, data, estimator="bayes")`` (two-stage: the posterior-mean
        scores are the regressors; every posterior draw of the factor correlations is paired
        with a Bayesian-bootstrap draw of item weights, giving posterior draws of every
        estimand).
    metrics : list of str, optional
    claims : dict, optional
        ``{metric: factor}``: the trait each metric claims to measure, added to (and
        overriding) the default: the data's ``metric_trait`` coord, else the metric name's
        last part matched to the factor names without regard to case (``"G.EVAL.4.COH"`` ->
        ``"coh"``). Metrics without a claim get no ``trait_share``,
        ``other_traits_share``, ``specificity`` rows.
    level : {"output", "system"}
        Regress the scores of outputs (default) or the system means.
    disattenuate : bool, optional
        Regression calibration (default for ``level="output"``; see Notes): standardize the
        coefficients with the factors' model variance instead of the scores' sample
        variance. ``False``: plain OLS on standardized scores (``level="system"``).
    score_method : {"EBM", "regression"}
    run, reference : which metric run and reference.
    estimator : {"auto", "joint", "modular"}
        ``"auto"`` (default): the route of ``fit`` (regression calibration on the WLSMV EBM
        scores, or two-stage on a Bayesian CFA's scores). ``"modular"``: ``fit`` is a
        Bayesian CFA (``bm.cfa(model, data, estimator="bayes")``) of ``data``; every
        metric is regressed on the posterior-mean factor scores (regression calibration)
        with the scores' posterior covariance as Berkson error in the residual, so its
        error variance is estimated, and paired with the CFA's draws of the factor
        correlations (:mod:`bayesmeta.validity.modular`): the metrics do not redefine the
        experts' traits, and it takes seconds; the result
        (:class:`~bayesmeta.validity.modular.ModularValidityResult`) has the joint route's
        rows. ``"joint"``: the joint Bayesian
        model (:mod:`bayesmeta.validity.joint_model`): ratings and standardized metric
        scores as indicators of the same traits in one PyMC model, so the traits'
        uncertainty propagates into every estimand; ``fit`` then only supplies the CFA
        model (a ``bm.cfa`` result or lavaan syntax) and the result
        (:class:`~bayesmeta.validity.joint_model.JointValidityResult`) adds an
        ``error_variance`` row per metric (:math:`\sigma_m^2` on the metric's own scale).
        ``level``, ``disattenuate``, ``score_method`` and ``resampling`` do not apply.
    errors : {"normal", "student_t"}
        ``estimator="joint"``: the metric errors' distribution (Student-t with a
        per-metric degrees of freedom > 2, scaled so ``sigma_m`` stays the error sd;
        compare with ``result.loo()``).
    method_factors : "auto" or int
        ``estimator="joint"``: metric method factors, the metrics' common variance beyond
        the traits (reported as ``method_share``). ``"auto"`` counts the eigenvalues above
        2 of the metrics' residual correlations after the traits (at most 4 and a third
        of the metrics); without
        them a strong common metric factor bends the traits towards the metrics
        (``models/metric_validity.md``).
    residuals : {"auto", "independent", "correlated"}
        ``estimator="joint"``: the metric errors given the traits, independent (with
        ``method_factors``) or with an unrestricted covariance (normal errors, every
        metric scored), so that what the metrics share beyond the traits is error
        covariance and cannot redefine the traits; the coefficients are then identified by
        the metrics' covariance with the ratings. ``"auto"`` (default): correlated where
        it applies and the metrics outnumber the rating columns, else independent.
    ci_prob : float
    resampling : ResamplingOptions or dict, optional
        ``n_resamples`` (default 1000; 0: point estimates only) and ``unit`` (default
        ``"both"``, else ``"systems"`` or ``"items"``) of the percentile bootstrap: output
        (s, i) enters with the multiplicity of its system times that of its item. Bayesian
        fits: one Bayesian-bootstrap draw of item weights per posterior draw.
    sampling : SamplerOptions, dict, "fast" or "full", optional
        ``estimator="joint"``: sampler settings (defaults: 4 chains, 500 tuning
        iterations, then draws until every row of the table and the CFA's loadings and
        factor correlations reach R-hat <= 1.01 and bulk and tail ESS >= 400, checked from
        500 draws per chain on; with ``residuals="correlated"`` 350 tuning iterations and
        checks from 250 draws on).
    random_seed : int, optional
    progress : bool, optional
        ``estimator="joint"``: show the sampler's progress bar.

    Returns
    -------
    Result
        ``summary()`` indexed ``(estimand, trait, metric)`` with ``classical``,
        ``classical_low``, ``classical_high`` (classical fit) or ``mean, sd, hdi_low,
        hdi_high, r_hat, ess_bulk, ess_tail`` (Bayesian fit; ``extra["draws"]``).

    Notes
    -----
    Factor scores are shrunken, noisy versions of the traits. Because the metric depends on
    the ratings only through the traits, regressing it on the scores' posterior means
    :math:`E[\eta \mid y]` (which the EBM scores approximate) gives the raw
    coefficients :math:`b_m` of the latent regression without bias (regression calibration;
    Carroll et al. 2006, ch. 4), but the scores' variance is below the traits' (1) so the
    usual standardization and :math:`R^2` are attenuated. With ``disattenuate=True`` the raw
    :math:`b_m = C_{ff}^{-1} c_{fm}` (score covariances) are standardized with the traits'
    model variance: :math:`\beta_m = b_m / s_m`, :math:`r_{m} = \Psi \beta_m` (the model
    correlation of metric and traits), :math:`R^2_m = \beta_m^\top \Psi \beta_m`, with
    :math:`\Psi` the CFA's factor correlations and :math:`s_m` the metric's sd. In small
    samples :math:`R^2_m` can then exceed 1 (a negative ``error_share``). The bootstrap holds
    the scores and :math:`\Psi` fixed. Pratt shares can be negative when traits are highly
    correlated (suppression).

    Examples
    --------
    >>> import bayesmeta as bm
    >>> ds = bm.datasets.simulated(random_seed=0, n_systems=8, n_items=30, n_metrics=4)
    >>> m = ("coh =~ Rater.1.COH + Rater.2.COH + Rater.3.COH\n"
    ...      "con =~ Rater.1.CON + Rater.2.CON + Rater.3.CON")
    >>> res = bm.metric_variance(ds, bm.cfa(m, ds), metrics=["metric01.COH"],
    ...                          resampling={"n_resamples": 100}, random_seed=0)
    >>> sorted(set(res.summary().index.get_level_values("estimand")))[:3]
    ['error_share', 'other_traits_share', 'r_squared']

    The joint route (same table shape, Bayesian columns; slow: it runs MCMC):

    >>> joint = bm.metric_variance(ds, m, estimator="joint", metrics=["metric01.COH"],
    ...                            random_seed=0)  # doctest: +SKIP

    R equivalent (point values): ``fs <- lavPredict(fit)``;
    ``summary(lm(scale(metric) ~ scale(fs)))`` for the coefficients and R^2.
    """
    ci_prob = check_ci_prob(ci_prob)
    if estimator not in ESTIMATORS:
        raise ValueError(f"estimator must be one of {ESTIMATORS} ('auto': the fit's route), "
                         f"got {estimator!r}.")
    if estimator == "modular":
        if level != "output":
            raise ValueError("estimator='modular' models the scores of outputs; level must "
                             "be 'output'.")
        if method_factors != "auto" or errors != "normal" or residuals != "auto":
            raise ValueError("method_factors, errors and residuals apply to "
                             "estimator='joint' only "
                             "(the modular route regresses each metric on the traits "
                             "separately, with normal errors).")
        unused = [name for name, value, default in (
            ("sampling", sampling, None), ("progress", progress, None),
            ("resampling", resampling, None), ("disattenuate", disattenuate, None),
            ("score_method", score_method, "EBM")) if value != default]
        if unused:
            raise ValueError(f"{', '.join(unused)} do(es) not apply to estimator='modular': "
                             f"its draws are the Bayesian CFA's (set the sampler there, "
                             f"bm.cfa(..., estimator='bayes', sampling=...)).")
        if not _is_bayesian(fit):
            raise ValueError("estimator='modular' needs a Bayesian CFA of the ratings: "
                             "bm.cfa(model, data, estimator='bayes').")
        from bayesmeta.validity.modular import modular_metric_variance

        return modular_metric_variance(data, fit, metrics=metrics, claims=claims, run=run,
                                       reference=reference, ci_prob=ci_prob,
                                       random_seed=random_seed)
    if estimator == "joint":
        if level != "output":
            raise ValueError("estimator='joint' models the scores of outputs; level must "
                             "be 'output'.")
        from bayesmeta.validity.joint_model import joint_metric_variance

        return joint_metric_variance(data, fit, metrics=metrics, claims=claims,
                                     errors=errors, run=run, reference=reference,
                                     ci_prob=ci_prob, sampling=sampling,
                                     method_factors=method_factors,
                                     residuals=residuals,
                                     random_seed=random_seed, progress=progress)
    if residuals != "auto":
        raise ValueError("residuals applies to estimator='joint' only (the two-stage route "
                         "regresses each metric on the factor scores separately).")
    if method_factors != "auto":
        raise ValueError("method_factors applies to estimator='joint' only (the two-stage "
                         "route regresses each metric on the factor scores separately).")
    if level not in ("output", "system"):
        raise ValueError(f"level must be 'output' or 'system', got {level!r}.")
    if disattenuate is None:
        disattenuate = level == "output"
    if disattenuate and level != "output":
        raise ValueError("disattenuate=True applies to level='output' only: the CFA gives "
                         "the variance of output factor scores, not of system means.")
    bayes = _is_bayesian(fit)
    opts = ResamplingOptions.coerce(resampling)
    seed = resolve_seed(random_seed)
    rng = np.random.default_rng(seed)
    if bayes:  # two-stage: posterior-mean scores, per-draw Psi and item weights
        draws = fit.factor_scores()
        scores = draws.mean(("chain", "draw"))
        C, D = draws.sizes["chain"], draws.sizes["draw"]
    else:
        scores = fit.factor_scores(method=score_method)
    if "item" not in scores.dims:
        raise ValueError("metric_variance needs a CFA fitted to a bayesmeta Dataset.")
    traits, mnames, z, incomplete, notes = _stack_outputs(data, scores, metrics, run,
                                                          reference)
    T = len(traits)
    claimed = _claims(data, mnames, traits, claims)
    S, I = incomplete.shape
    R = C * D if bayes else opts.n_resamples
    if bayes:
        w_sys, w_items = np.ones((R, S)), I * rng.dirichlet(np.ones(I), size=R)
    else:
        w_sys, w_items = _bootstrap_weights(rng, R, S, I, opts.unit)
    if level == "output":
        cov = _output_covariances(z, incomplete, w_sys, w_items)
    else:
        keep = (~incomplete).astype(float)
        zf = np.where(incomplete[..., None], 0.0, z)
        ww = w_items[:, None, :] * keep[None]  # (R+1, S, I)
        with np.errstate(invalid="ignore", divide="ignore"):
            means = np.einsum("rsi,sik->rsk", ww, zf) / ww.sum(-1)[..., None]
        cov = _weighted_cov(means, w_sys)
    psi = None
    if disattenuate:
        psi = (fit.idata.posterior["factor_corr"].sel(trait=traits, trait2=traits)
               .transpose("chain", "draw", "trait", "trait2").values.reshape(R, T, T)
               if bayes else _factor_correlations(fit, traits))
    parts = _regression_shares(cov, T, psi)
    beta, r2, r = parts["beta"], parts["r2"], parts["r"]  # (R(+1), M, T), (R(+1), M)
    rows_out: list[tuple[str, str, str]] = []
    values: list[np.ndarray] = []
    for j, m in enumerate(mnames):
        for k, t in enumerate(traits):
            rows_out.append(("validity_coefficient", t, m))
            values.append(beta[:, j, k])
    for j, m in enumerate(mnames):
        rows_out.append(("r_squared", "", m))
        values.append(r2[:, j])
        rows_out.append(("error_share", "", m))
        values.append(1 - r2[:, j])
        if m in claimed:
            c = traits.index(claimed[m])
            share = beta[:, j, c] * r[:, j, c]
            rows_out += [("trait_share", claimed[m], m), ("other_traits_share", "", m),
                         ("specificity", claimed[m], m)]
            with np.errstate(invalid="ignore", divide="ignore"):
                values += [share, r2[:, j] - share, share / r2[:, j]]
    vals = np.stack(values)  # (rows, R + 1)
    index = pd.MultiIndex.from_tuples(rows_out, names=["estimand", "trait", "metric"])
    unclaimed = [m for m in mnames if m not in claimed]
    if unclaimed:
        notes.append(f"no claimed trait for {len(unclaimed)} metric(s) "
                     f"({', '.join(unclaimed[:5])}{', ...' if len(unclaimed) > 5 else ''}); "
                     f"pass claims= for their trait_share and specificity.")
    info = {"data": select.describe(data), "level": level,
            "shares": "Pratt (1987): beta_t * r_t, summing to R^2"}
    if bayes:
        da = xr.DataArray(vals.reshape(len(rows_out), C, D), dims=("row", "chain", "draw"),
                          coords={"row": np.arange(len(rows_out))})
        summ = summarize(da, ci_prob=ci_prob)
        iv = summ["interval"].transpose("row", "ci_bound").values
        table = pd.DataFrame({"mean": summ["mean"].values, "sd": summ["sd"].values,
                              "hdi_low": iv[:, 0], "hdi_high": iv[:, 1],
                              **{k: summ[k].values for k in ("r_hat", "ess_bulk",
                                                             "ess_tail")}}, index=index)
        info["regressors"] = (f"posterior-mean factor scores ({', '.join(traits)}) of the "
                              f"Bayesian CFA")
        info["posterior"] = (f"{C} x {D} draws: the CFA's factor correlations x a Bayesian "
                             f"bootstrap over items (two-stage)")
        notes.append("Two-stage: regression calibration on the posterior-mean factor "
                     "scores; each draw pairs the CFA's posterior factor correlations with "
                     "Bayesian-bootstrap item weights. The posterior spread of the scores "
                     "around their means is not propagated (no joint model).")
        return Result(table, title="Metric variance: claimed trait, other traits, error "
                      "(Bayesian, two-stage)", info=info, notes=notes, ci_prob=ci_prob,
                      posterior="CFA posterior x Bayesian bootstrap over items",
                      extra={"draws": da.assign_coords(
                          estimand=("row", [r_[0] for r_ in rows_out]),
                          trait=("row", [r_[1] for r_ in rows_out]),
                          metric=("row", [r_[2] for r_ in rows_out]))},
                      random_seed=seed, data_hash=data_hash(data))
    table = pd.DataFrame({"classical": vals[:, 0]}, index=index)
    kind = None
    if R:
        iv = equal_tailed(vals[:, 1:], ci_prob, axis=(-1,))
        table["classical_low"], table["classical_high"] = iv[:, 0], iv[:, 1]
        kind = f"percentile bootstrap over {_UNIT_LABEL[opts.unit]}"
    notes.append("Regression calibration: coefficients standardized with the CFA's factor "
                 "variances and correlations, so R^2 is not attenuated by the scores' error."
                 if disattenuate else
                 "OLS on standardized point (EBM) factor scores: at the output level R^2 is "
                 "attenuated by the scores' error (error_share too high); use "
                 "disattenuate=True there.")
    notes.append("The bootstrap holds the factor scores (and the CFA) fixed.")
    info["regressors"] = f"factor scores ({', '.join(traits)}; {score_method})"
    info["standardization"] = ("regression calibration (CFA factor variances)"
                               if disattenuate else
                               "sample sd of the scores (OLS on standardized scores)")
    if R:
        info["resampling"] = f"{R} bootstrap resamples of {_UNIT_LABEL[opts.unit]}"
    return Result(table, title="Metric variance: claimed trait, other traits, error",
                  info=info, notes=notes, ci_prob=ci_prob, classical_ci_kind=kind,
                  random_seed=seed, data_hash=data_hash(data))
