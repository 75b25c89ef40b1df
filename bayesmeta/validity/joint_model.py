r"""The joint Bayesian metric-validity model (``bm.metric_variance(data, fit,
estimator="joint")``; card: ``models/metric_validity.md``).

Output :math:`n` (a system-item pair), traits :math:`f_n \sim N_T(0, \Psi)`
(:math:`\operatorname{diag}\Psi = 1`). The experts' ratings are ordinal indicators of the
traits through the ordinal CFA's probit measurement model (``models/ordinal_cfa.md``), the
automatic metrics continuous indicators of the same traits:

.. math::
    y_{n,rt} = k \iff \tau^*_{rt,k-1} < \lambda^*_{rt} f_{nt} + \sqrt{1 - \lambda^{*2}_{rt}}
    \,\varepsilon_{n,rt} \le \tau^*_{rt,k}, \qquad
    x_{nm} = a_m + \sum_t b_{mt} f_{nt} + e_{nm}, \quad e_{nm} \sim N(0, \sigma_m^2),

with :math:`x` each metric's scores standardized by their sample mean and sd (or a
Student-t error of sd :math:`\sigma_m`). One PyMC model estimates the validity coefficients
:math:`b`, the metric error variances :math:`\sigma_m^2`, the CFA's parameters and every
output's traits jointly, so the traits' uncertainty propagates into :math:`b` and
:math:`\sigma_m` (the two-stage route of :func:`~bayesmeta.validity.variance.metric_variance`
does not propagate it). Estimands (the names of ``metric_variance``), per draw, from the
model-implied variance :math:`V_m = b_m^\top \Psi b_m + \sigma_m^2`:
``validity_coefficient`` :math:`\beta_{mt} = b_{mt}/\sqrt{V_m}`, ``r_squared``
:math:`b_m^\top\Psi b_m / V_m`, ``error_share`` :math:`\sigma_m^2 / V_m`, Pratt's
``trait_share`` :math:`\beta_{mc} (\Psi\beta_m)_c` of the claimed trait :math:`c`,
``other_traits_share``, ``specificity``; plus ``error_variance`` :math:`s_m^2\sigma_m^2` on
the metric's own scale (:math:`s_m` its sample sd).

References
----------
Xiao, Z., Zhang, S., Lai, V., & Liao, Q. V. (2023). Evaluating evaluation metrics: A
framework for analyzing NLG evaluation metrics using measurement theory. *EMNLP*
(Sec. 4.2, App. A.6).
Muthén, B. (1984). A general structural equation model with dichotomous, ordered
categorical, and continuous latent variable indicators. *Psychometrika*, 49, 115-132.
Pratt, J. W. (1987). Dividing the indivisible. *Proc. 2nd Tampere Conference*, 245-260.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayesmeta.data import select
from bayesmeta.options import SamplerOptions, resolve_seed
from bayesmeta.results import Result, data_hash
from bayesmeta.summaries import CI_PROB, MCMC_COLUMNS, diagnose, summarize
from bayesmeta.validity._factor_common import _claims
from bayesmeta.validity._joint_build import (
    ERRORS,
    MARGINAL_TRACE,
    TRACE,
    JointData,
    build_joint_model,
    build_marginal_joint_model,
    draw_marginal_traits,
    estimand_draws,
    metric_log_likelihood,
    model_data,
    model_key,
    prepare,
    reported_dataset,
    residual_correlation_draws,
    resolve_parameterization,
)
from bayesmeta.validity._joint_checks import (
    TraitDriftWarning,
    drift_message,
    free_pairs,
    ratings_only_correlations,
    trait_drift,
)
from bayesmeta.validity._joint_correlated import (
    CORRELATED_TRACE,
    build_correlated_joint_model,
    correlated_data,
    correlated_start,
    resolve_residuals,
)
from bayesmeta.validity._joint_start import auto_method_factors, moment_solution, moment_start

#: Sampler defaults: 4 chains, 500 tuning iterations, then draws until every row of the
#: table and the CFA's loadings and factor correlations reach R-hat <= 1.01 and bulk and
#: tail ESS >= 400, checked from 500 draws per chain on.
DEFAULTS = {"chains": 4, "tune": 500, "draws": 500}
#: With ``residuals="correlated"`` (the route of data with more metrics than rating
#: columns, as SummEval): 350 tuning iterations and the first check at 250 draws per chain
#: (stop 45, models/metric_validity.md: SummEval seeds 1-3 and the correlated-error
#: coverage study). The other routes keep :data:`DEFAULTS`, where these are unmeasured.
CORRELATED_DEFAULTS = {"chains": 4, "tune": 350, "draws": 250}
#: Where the chains start (``init``): a moment-based solution, or PyMC's initial values.
INITS = ("moments", "random")
#: The index of the summary (the same as metric_variance's).
INDEX = ["estimand", "trait", "metric"]


class JointValidityResult(Result):
    """Result of the joint model (``bm.metric_variance(..., estimator="joint")``): the
    summary indexed ``(estimand, trait, metric)`` as ``metric_variance``'s, the posterior in
    ``idata`` (``metric_loading`` :math:`b`, ``error_sd`` :math:`\\sigma`,
    ``metric_intercept`` on the standardized metric scale, ``validity_raw`` and
    ``error_variance`` on the metric's own scale, ``factor_score``, and the CFA's
    parameters); ``residual_correlations()``, ``loo()``, ``probability()``."""

    kind = "joint_metric_validity"

    def _joint(self) -> Any:
        jd = getattr(self, "_jd", None)
        if jd is None:
            raise ValueError("this result was saved and loaded: the standardized metric "
                             "scores are not kept; refit to compute residuals or LOO.")
        return jd

    def residual_correlations(self, *, ci_prob: float | None = None) -> pd.DataFrame:
        r"""Posterior of the correlations between metrics' residuals after the traits.

        In every draw the residuals :math:`e_{nm} = x_{nm} - a_m - b_m^\top f_n` of the
        outputs with every metric scored are correlated over outputs (MetricEval App. A.6
        on the model's own draws of the traits); each pair once, ``metric < metric2`` in
        the data's order.

        Returns
        -------
        pandas.DataFrame
            Indexed ``(estimand, component, metric, metric2)`` as
            :func:`~bayesmeta.validity.residuals.metric_residuals`, estimand
            ``residual_correlation``, columns mean, sd, hdi_low, hdi_high, r_hat, ess_bulk,
            ess_tail.
        """
        ci = self.ci_prob if ci_prob is None else ci_prob
        corr, names, n_rows = self.residual_correlation_draws()
        M = corr.shape[-1]
        iu = np.triu_indices(M, 1)
        da = xr.DataArray(corr[..., iu[0], iu[1]], dims=("chain", "draw", "pair"))
        summ = summarize(da, ci_prob=ci)
        index = pd.MultiIndex.from_tuples(
            [("residual_correlation", "", names[a], names[b]) for a, b in zip(*iu,
                                                                             strict=True)],
            names=["estimand", "component", "metric", "metric2"])
        out = frame(summ, index)
        out.attrs = {"ci_kind": "hdi", "ci_prob": ci, "n_outputs": n_rows}
        return out

    def residual_correlation_draws(self, metrics: Sequence[str] | None = None
                                   ) -> tuple[np.ndarray, list[str], int]:
        """Per-draw residual correlations (chain, draw, metric, metric2) of ``metrics``
        (default all) over the outputs with all of them scored, their names, and the number
        of those outputs (used by ``bm.metric_residuals`` on this fit)."""
        jd = self._joint()
        keep, idx, rows = metric_rows(jd, metrics)
        corr = residual_correlation_draws(self.idata.posterior, jd, rows)
        return corr[..., idx, :][..., idx], keep, int(rows.size)

    def loo(self) -> Any:
        """PSIS-LOO (ArviZ ``ELPDData``) of each output's metric scores given its traits
        and the parameters (conditional on the output's own trait draws, so Pareto k is
        often high; compare ``errors="normal"`` and ``"student_t"`` fits on the same data
        and read the k diagnostics)."""
        import arviz as az

        if "method_loading" in self.idata.posterior:
            raise ValueError("loo() is not available with method factors: given its traits "
                             "an output's metric scores are then correlated (through the "
                             "method factors), which the pointwise density here does not "
                             "model. Compare fits without method_factors.")
        if self.idata.posterior.attrs.get("residuals") == "correlated":
            raise ValueError("loo() is not available with residuals='correlated': given its "
                             "traits an output's metric scores are correlated, which the "
                             "pointwise density here does not model. Compare fits with "
                             "residuals='independent'.")
        ll = metric_log_likelihood(self.idata.posterior, self._joint())
        sub = az.InferenceData(posterior=self.idata.posterior[["error_sd"]],
                               log_likelihood=xr.Dataset({"metric_score": ll}))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return az.loo(sub, var_name="metric_score", pointwise=True)

    def probability(self, metric: str, trait: str, trait2: str) -> float:
        """Posterior probability that ``metric``'s validity coefficient on ``trait`` is at
        least its coefficient on ``trait2``."""
        return coefficient_probability(self.idata.posterior, metric, trait, trait2)


def metric_rows(jd: JointData, metrics: Sequence[str] | None
                ) -> tuple[list[str], list[int], np.ndarray]:
    """``metrics`` (default all of the fit's), their positions and the rows (outputs) with
    all of them scored; unknown names raise, naming them."""
    names = list(jd.metrics)
    keep = names if metrics is None else [str(m) for m in metrics]
    bad = [m for m in keep if m not in names]
    if bad:
        raise ValueError(f"metrics {bad} are not in the fit (its metrics: "
                         f"{', '.join(names[:8])}{', ...' if len(names) > 8 else ''}).")
    idx = [names.index(m) for m in keep]
    return keep, idx, np.flatnonzero(jd.observed[:, idx].all(1))


def coefficient_probability(posterior: xr.Dataset, metric: str, trait: str,
                            trait2: str) -> float:
    """P(validity coefficient of ``metric`` on ``trait`` >= on ``trait2``) over the draws of
    ``posterior`` (``validity_coefficient``); unknown names raise, naming them."""
    beta = posterior["validity_coefficient"]
    names = [str(m) for m in beta["metric"].values]
    traits = [str(t) for t in beta["trait"].values]
    if metric not in names:
        raise ValueError(f"metric {metric!r} is not in the fit (its metrics: "
                         f"{', '.join(names[:8])}{', ...' if len(names) > 8 else ''}).")
    bad = [t for t in (trait, trait2) if t not in traits]
    if bad:
        raise ValueError(f"trait(s) {bad} are not in the fit (its traits: {traits}).")
    d = beta.sel(metric=metric, trait=trait) - beta.sel(metric=metric, trait=trait2)
    return float((d >= 0).mean())


def frame(summ: xr.Dataset, index: pd.MultiIndex) -> pd.DataFrame:
    iv = summ["interval"].transpose(..., "ci_bound").values.reshape(-1, 2)
    return pd.DataFrame({"mean": summ["mean"].values.ravel(), "sd": summ["sd"].values.ravel(),
                         "hdi_low": iv[:, 0], "hdi_high": iv[:, 1],
                         **{k: summ[k].values.ravel() for k in MCMC_COLUMNS}}, index=index)


def _rows(beta: np.ndarray, r: np.ndarray, r2: np.ndarray, err: np.ndarray,
          errvar: np.ndarray, traits: list[str], metrics: Sequence[str],
          claimed: Mapping[str, str], method: np.ndarray | None = None
          ) -> tuple[list[tuple[str, str, str]], np.ndarray]:
    """The rows of metric_variance's table (same order) from (C, D, M[, T]) draws, and the
    extra ``error_variance`` row per metric."""
    keys: list[tuple[str, str, str]] = []
    vals: list[np.ndarray] = []
    for j, m in enumerate(metrics):
        for k, t in enumerate(traits):
            keys.append(("validity_coefficient", t, m))
            vals.append(beta[..., j, k])
    for j, m in enumerate(metrics):
        keys += [("r_squared", "", m), ("error_share", "", m), ("error_variance", "", m)]
        vals += [r2[..., j], err[..., j], errvar[..., j]]
        if method is not None:
            keys.append(("method_share", "", m))
            vals.append(method[..., j])
        if m in claimed:
            c = traits.index(claimed[m])
            share = beta[..., j, c] * r[..., j, c]
            keys += [("trait_share", claimed[m], m), ("other_traits_share", "", m),
                     ("specificity", claimed[m], m)]
            vals += [share, r2[..., j] - share, share / r2[..., j]]
    return keys, np.stack(vals)


def add_estimands(post: xr.Dataset, jd: JointData) -> dict[str, np.ndarray]:
    """Add the reported estimands to a posterior of ``metric_loading``, ``error_sd``,
    ``factor_corr`` (and ``method_loading``): ``validity_raw`` and ``error_variance`` on the
    metrics' own scale, ``validity_coefficient``, ``error_share`` (and ``method_share``).
    Returns :func:`estimand_draws`'s parts (shared by the joint and modular routes)."""
    parts = estimand_draws(post)
    scale = xr.DataArray(jd.scale, dims="metric", coords={"metric": list(jd.metrics)})
    post["validity_raw"] = post["metric_loading"] * scale
    post["error_variance"] = (post["error_sd"] * scale) ** 2
    post["validity_coefficient"] = (("chain", "draw", "metric", "trait"), parts["beta"])
    post["error_share"] = (("chain", "draw", "metric"), parts["error_share"])
    if "method_share" in parts:
        post["method_share"] = (("chain", "draw", "metric"), parts["method_share"])
    return parts


def table_draws(parts: Mapping[str, np.ndarray], error_variance: np.ndarray,
                traits: list[str], metrics: Sequence[str], claimed: Mapping[str, str]
                ) -> tuple[list[tuple[str, str, str]], xr.DataArray]:
    """The draws of every row of metric_variance's table, (chain, draw, row), and the rows'
    keys (estimand, trait, metric), from :func:`estimand_draws`'s parts and the error
    variances on the metrics' scale (C, D, M)."""
    keys, vals = _rows(parts["beta"], parts["r"], parts["r2"], parts["error_share"],
                       error_variance, traits, metrics, claimed, parts.get("method_share"))
    labels = [f"{e}[{t}, {m}]" if t else f"{e}[{m}]" for e, t, m in keys]
    return keys, xr.DataArray(np.moveaxis(vals, 0, -1), dims=("chain", "draw", "row"),
                              coords={"row": labels})


def estimand_table(parts: Mapping[str, np.ndarray], post: xr.Dataset, traits: list[str],
                   metrics: Sequence[str], claimed: Mapping[str, str],
                   ci_prob: float, *, diagnostics: xr.Dataset | None = None
                   ) -> pd.DataFrame:
    """metric_variance's table (posterior columns) of the estimands added by
    :func:`add_estimands`. ``diagnostics``: the rows' R-hat and ESS when already computed
    (:func:`row_diagnostics`), so that they are not computed twice."""
    keys, da = table_draws(parts, post["error_variance"].transpose(
        "chain", "draw", "metric").values, traits, metrics, claimed)
    if diagnostics is not None:
        diagnostics = diagnostics.drop_vars("row", errors="ignore")
    return frame(summarize(da.drop_vars("row"), ci_prob=ci_prob, diagnostics=diagnostics),
                 pd.MultiIndex.from_tuples(keys, names=INDEX))


def row_diagnostics(diagnostics: xr.Dataset, name: str = "metric_variance") -> xr.Dataset:
    """The table rows' ``r_hat``, ``ess_bulk`` and ``ess_tail`` out of :func:`diagnose`'s
    output for a :func:`reported_quantities` dataset (its variable ``name``)."""
    return xr.Dataset({s: diagnostics[f"{name}__{s}"] for s in MCMC_COLUMNS})


def reported_quantities(jd: JointData, traits: list[str], claimed: Mapping[str, str]
                        ) -> Any:
    """What decides the adaptive length and what the convergence check reads: a function
    of a trace returning the sampled parameters of :func:`reported_dataset` and **every
    row of the table** (``metric_variance``), so that no printed row (a trait share, a
    specificity, an R^2) can stop the sampler or pass the check with R-hat or ESS off
    target."""
    def reported(idata: Any) -> xr.Dataset:
        post = idata.posterior
        parts = estimand_draws(post)
        var = np.square(post["error_sd"].transpose("chain", "draw", "metric").values
                        * np.asarray(jd.scale))
        _, da = table_draws(parts, var, traits, list(jd.metrics), claimed)
        return reported_dataset(idata).assign(metric_variance=da)

    return reported


def joint_metric_variance(
    data: xr.Dataset,
    fit: Any,
    *,
    metrics: Sequence[str] | None = None,
    claims: Mapping[str, str] | None = None,
    errors: str = "normal",
    run: Any = None,
    reference: Any = "first",
    ci_prob: float = CI_PROB,
    sampling: SamplerOptions | Mapping[str, Any] | str | None = None,
    random_seed: int | None = None,
    progress: bool | None = None,
    parameterization: str = "auto",
    method_factors: int | str = "auto",
    init: str = "moments",
    residuals: str = "auto",
) -> JointValidityResult:
    r"""Fit the joint model (module docstring) and summarise it in metric_variance's table.

    Called through :func:`bayesmeta.metric_variance` with ``estimator="joint"``, whose
    docstring documents the arguments. ``fit`` gives the CFA model (a ``bm.cfa`` result of
    either estimator, or lavaan syntax); the joint model refits the CFA's parameters with
    the metrics. ``parameterization``: how the traits enter the sampler. ``"auto"``
    (default) is ``"marginal"`` where it applies (normal errors, every metric scored on
    every rated output): the traits integrated out
    (:func:`~bayesmeta.validity._joint_build.build_marginal_joint_model`) and drawn after
    sampling, else ``"noncentred"`` (the traits sampled; ``"centred"``: sampled as
    N(0, Psi) themselves; see :func:`bayesmeta.validity._cfa_build.build_model`). The
    three give the same posterior; the one used is recorded in ``info["method"]`` and the
    posterior's attributes. ``method_factors``: K metric method factors independent of the
    traits (``parameterization="marginal"`` only; see
    :func:`~bayesmeta.validity._joint_build.build_marginal_joint_model`): the metrics'
    common variance beyond the traits, reported as ``method_share``; without them a large
    common metric factor can bend the traits towards the metrics (``models/
    metric_validity.md``). ``"auto"`` (default): the number of eigenvalues above 2 of the
    metrics' residual correlations after the traits in a moment solution, at most 4 and a
    third of the metrics (:func:`~bayesmeta.validity._joint_start.auto_method_factors`;
    0 where the traits are sampled, with a note when the residuals call for more).
    ``residuals``: ``"independent"`` metric errors given the traits, with
    ``method_factors`` for what the metrics share beyond them; ``"correlated"``: an
    unrestricted error covariance :math:`\Sigma_e` (normal errors, every metric scored;
    :mod:`~bayesmeta.validity._joint_correlated`), so that what the metrics share cannot
    redefine the traits: the coefficients are then identified by the metrics' covariance
    with the ratings, as in a seemingly unrelated regression. ``"auto"`` (default):
    ``"correlated"`` where it applies and the metrics outnumber the rating columns (where
    independent errors let the metrics redefine the traits), else ``"independent"``.
    ``init``: where the chains start; ``"moments"`` (default) at a moment-based solution
    with the traits on the experts' ratings (its parameters; where the traits themselves
    are sampled, they start at the model's initial values)
    (:func:`~bayesmeta.validity._joint_start.moment_start`), each chain jittered, because
    from the prior's neighbourhood chains can settle in local modes where the traits follow
    a common metric factor instead; ``"random"``: PyMC's initial values with nutpie's
    U(-1, 1) jitter. The posterior is the same; R-hat still compares the chains.

    After sampling, the joint posterior's factor correlations are compared with the
    ratings' own (the CFA passed as ``fit``, else a WLSMV fit of the ratings;
    :mod:`bayesmeta.validity._joint_checks`): a :class:`TraitDriftWarning` and a note say
    where one moved by more than 0.15 and 3 standard errors, because the traits are then
    partly the metrics' dimensions rather than the experts' (interpretational confounding,
    Burt 1976); ``info["traits vs ratings alone"]`` gives the largest difference.

    Examples
    --------
    >>> import bayesmeta as bm  # doctest: +SKIP
    >>> from bayesmeta.validity.joint_simulate import simulate_joint_validity
    >>> ds = simulate_joint_validity(0, n_traits=2, n_metrics=3)  # doctest: +SKIP
    >>> m = ("coh =~ Rater.1.COH + Rater.2.COH + Rater.3.COH\n"
    ...      "con =~ Rater.1.CON + Rater.2.CON + Rater.3.CON")
    >>> res = bm.metric_variance(ds, m, estimator="joint", random_seed=1)  # doctest: +SKIP
    >>> res.residual_correlations()  # doctest: +SKIP

    R equivalent: ``blavaan::bsem("coh =~ r1 + r2 + r3 + m1; ...", data, ordered =
    c("r1", "r2", "r3"), std.lv = TRUE)`` with each metric also loading on every trait
    (``m1 ~ coh + con`` written as cross-loadings).
    """
    from bayesmeta.sampling import (
        add_seconds,
        cached_model,
        check_convergence,
        describe_run,
        is_compiled,
        sample,
        set_attrs,
    )

    if errors not in ERRORS:
        raise ValueError(f"errors must be one of {ERRORS}, got {errors!r}.")
    if init not in INITS:
        raise ValueError(f"init must be one of {INITS}, got {init!r}.")
    sampling_opts = SamplerOptions.coerce(sampling)
    seed = resolve_seed(random_seed)
    jd = prepare(data, fit, metrics, run, reference)
    traits = list(jd.design.factors)
    claimed = _claims(data, list(jd.metrics), traits, claims)
    param = resolve_parameterization(jd, errors, parameterization)
    M, J = len(jd.metrics), jd.design.n_indicators
    residuals = resolve_residuals(residuals, param, M, J)
    correlated = residuals == "correlated"
    options = sampling_opts.resolve(**(CORRELATED_DEFAULTS if correlated else DEFAULTS))
    if correlated and param != "marginal":
        raise ValueError(f"residuals='correlated' needs normal errors and every metric scored "
                         f"on every rated output (the traits integrated out); this fit "
                         f"resolves to parameterization={param!r}.")
    moments = moment_solution(jd.design, jd.x)  # once: it serves K, the leaders and the start
    suggested = auto_method_factors(jd.design, jd.x, moments)
    if correlated and method_factors not in ("auto", 0):
        raise ValueError(f"method_factors={method_factors!r} with residuals='correlated': the "
                         f"unrestricted error covariance already holds what the metrics "
                         f"share; leave method_factors at 'auto' (0 here).")
    if method_factors == "auto":
        K = suggested if param == "marginal" and not correlated else 0
    elif isinstance(method_factors, int | np.integer) and not isinstance(method_factors,
                                                                         bool):
        K = int(method_factors)
    else:
        raise ValueError(f"method_factors must be 'auto' or an integer, got "
                         f"{method_factors!r}.")
    if K and param != "marginal":
        raise ValueError(f"method_factors={K} needs parameterization='marginal' (normal "
                         f"errors, every metric scored); this fit resolves to {param!r}.")
    if M > J and not correlated:
        warnings.warn(f"{M} metrics against {J} rating columns: in the joint model the "
                      f"metrics can redefine the traits (the fit compares them with the "
                      f"ratings' own afterwards) and its chains may not converge "
                      f"(models/metric_validity.md). estimator='modular' on a Bayesian CFA "
                      f"keeps the experts' traits and takes seconds after the CFA.",
                      TraitDriftWarning, stacklevel=3)
    t0 = time.perf_counter()
    if not 0 <= K < len(jd.metrics):
        raise ValueError(f"method_factors must be in [0, {len(jd.metrics) - 1}] (fewer than "
                         f"the {len(jd.metrics)} metrics), got {K}.")
    _, leaders = moment_start(jd.design, jd.x, K, moments=moments)

    def build() -> Any:
        if correlated:
            return build_correlated_joint_model(jd)
        if param == "marginal":
            return build_marginal_joint_model(jd, method_factors=K, leaders=leaders)
        return build_joint_model(jd, errors=errors, parameterization=param)

    if correlated:
        model = cached_model(model_key(jd, errors, "correlated"), build)
        trace = list(CORRELATED_TRACE)
    elif param == "marginal":
        model = cached_model(model_key(jd, errors, param, K), build)
        trace = [v for v in MARGINAL_TRACE if v != "method_loading" or K]
    else:
        model = cached_model(model_key(jd, errors, param), build)
        trace = [v for v in TRACE if v != "error_nu" or errors == "student_t"]
    start, _ = moment_start(jd.design, jd.x, K,
                            moments=moments, orthonormal=param == "marginal")
    values = correlated_data(jd) if correlated else model_data(jd, param, leaders)
    if correlated:
        start = correlated_start(start, moments, values["metric_chol"])
    compiled_before = is_compiled(model, trace)
    reported = reported_quantities(jd, traits, claimed)
    dhash = data_hash(data)
    idata = sample(model, options, data=values, random_seed=seed,
                   progress=progress, var_names=trace, reported=reported,
                   initial_values=start if init == "moments" else None,
                   attrs={"data_hash": dhash, "errors": errors, "parameterization": param,
                          "residuals": residuals,
                          "init": init, "method_factors": K,
                          "method_factors_chosen": str(method_factors),
                          "method_leaders": ", ".join(jd.metrics[j] for j in leaders)})
    t_sample = time.perf_counter() - t0
    set_attrs(idata, {"sampling_time_s": t_sample, "compiled_before": int(compiled_before)})
    t1 = time.perf_counter()
    post = idata.posterior
    if param == "marginal":
        post = draw_marginal_traits(post, jd, seed)
    post = post.assign_coords(system=("output", jd.data.system), item=("output", jd.data.item))
    parts = add_estimands(post, jd)
    idata.posterior = post
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        checked = reported(idata)
        diagnostics = diagnose(checked)  # once: the check and the table's columns
        conv = check_convergence(idata, list(checked.data_vars), diagnostics=diagnostics)
        drift_line, drift_note, moved = _drift(fit, jd, post)
        if moved:
            warnings.warn(drift_note, TraitDriftWarning, stacklevel=2)
    for w in caught:
        warnings.warn(w.message, w.category, stacklevel=2)
    table = estimand_table(parts, post, traits, jd.metrics, claimed, ci_prob,
                           diagnostics=row_diagnostics(diagnostics))
    add_seconds(idata, "postprocess", time.perf_counter() - t1)
    notes = [str(w.message) for w in caught]
    if drift_note and not moved:  # why the traits could not be compared
        notes.append(drift_note)
    unclaimed = [m for m in jd.metrics if m not in claimed]
    if unclaimed:
        notes.append(f"no claimed trait for {len(unclaimed)} metric(s) "
                     f"({', '.join(unclaimed[:5])}{', ...' if len(unclaimed) > 5 else ''}); "
                     f"pass claims= for their trait_share and specificity.")
    if suggested > K and not correlated:
        notes.append(f"the metrics' residuals after the traits share {suggested} factor(s) "
                     f"(moment solution) but the fit has {K} method factor(s)"
                     + ("" if param == "marginal" else " (they need normal errors and every "
                        "metric scored)")
                     + ": the traits may be bent towards the metrics (models/"
                     "metric_validity.md).")
    n_miss = int((~jd.observed).sum())
    if n_miss:
        notes.append(f"{n_miss} missing metric score(s) left out of the likelihood (their "
                     f"outputs stay in through the ratings and the other metrics).")
    notes.append("Joint model: ratings (ordinal CFA) and standardized metric scores are "
                 "indicators of the same traits; estimands use the model-implied metric "
                 "variance b' Psi b + sigma^2, so R^2 and the shares lie in [0, 1].")
    info = {"data": select.describe(data),
            "model": " ; ".join(f"{t} =~ {' + '.join(jd.spec.indicators(t))}"
                                for t in traits),
            "metrics": f"{len(jd.metrics)} (standardized; {errors} errors"
                       + ("; error covariance unrestricted" if correlated else "")
                       + (f"; {K} method factor(s)" if K else "") + ")",
            "method": ("traits integrated out of the sampler (marginal), drawn after "
                       "sampling" if param == "marginal" else
                       f"traits sampled ({param})"),
            "outputs": f"{jd.design.n_rows} rated outputs",
            "shares": "Pratt (1987): beta_t * r_t, summing to R^2",
            "sampler": describe_run(idata), "convergence": str(conv),
            "traits vs ratings alone": drift_line,
            "time": f"{'sampling' if compiled_before else 'compile + sampling'} "
                    f"{t_sample:.1f} s"}
    result = JointValidityResult(
        table, title="Metric variance: claimed trait, other traits, error (Bayesian, "
        "joint model)", info=info, idata=idata, notes=notes, ci_prob=ci_prob,
        posterior="MCMC posterior (joint model)", random_seed=seed, data_hash=dhash)
    result._jd = jd
    return result


def _drift(fit: Any, jd: JointData, post: xr.Dataset) -> tuple[str, str, bool]:
    """The joint posterior's factor correlations against the ratings' own
    (:mod:`bayesmeta.validity._joint_checks`): the header line, the note to print and
    whether a correlation moved. The note is the warning's text where one moved, why no
    comparison was made where none could be, else ``""``. A failure of the ratings-only
    fit or of the comparison never costs the finished fit: it becomes the note."""
    if not free_pairs(jd.design):
        return "no free factor correlation to compare", "", False
    why = "traits not compared with the ratings alone: "
    try:
        ref, source = ratings_only_correlations(fit, jd.spec, jd.data, jd.design)
        if ref is None:
            return "not compared (see notes)", why + source, False
        drift = trait_drift(post["factor_corr"], ref)
    except Exception as err:  # the check must not discard the posterior
        return "not compared (see notes)", f"{why}{type(err).__name__}: {err}", False
    if not drift["difference"].notna().any():
        return "not compared (see notes)", why + "no finite difference", False
    worst = drift["difference"].abs().idxmax()
    line = (f"largest factor-correlation difference {drift.loc[worst, 'difference']:+.2f} "
            f"({'-'.join(worst)}); {int(drift['moved'].sum())} of {len(drift)} pairs moved")
    message = drift_message(drift, source)
    return line, message or "", message is not None
