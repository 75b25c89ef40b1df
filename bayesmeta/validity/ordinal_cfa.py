r"""Bayesian confirmatory factor analysis of ordinal ratings (probit; card:
``models/ordinal_cfa.md``). Public entry: ``bm.cfa(model, data, estimator="bayes")``.

Model
-----
Output :math:`n` (a system-item pair), indicator :math:`j` (a rater-trait column, e.g.
``Expert.1.COH``) measuring factor :math:`f(j)`; the rating :math:`y_{nj} \in 1..K` is the
coarsened version of a latent response (Muthén 1984)

.. math::
    y^*_{nj} = \lambda_j \eta_{n f(j)} + \varepsilon_{nj}, \qquad
    \varepsilon_{nj} \sim N(0, 1), \qquad \eta_n \sim N_F(0, \Psi), \ \operatorname{diag}\Psi = 1,

    y_{nj} = k \iff \tau_{j,k-1} < y^*_{nj} \le \tau_{j,k}
    \quad (\tau_{j,0} = -\infty, \tau_{j,K} = \infty).

This is the *theta* parameterization (unit residual variances). The *delta*
parameterization, lavaan's default and its ``std.all``, rescales :math:`y^*` to unit
variance: standardized loadings and thresholds

.. math:: \lambda^*_j = \lambda_j / \sqrt{1 + \lambda_j^2}, \qquad
          \tau^*_{jk} = \tau_{jk} / \sqrt{1 + \lambda_j^2},
          \qquad \theta^*_{jj} = 1 - \lambda_j^{*2}.

The model is sampled through its standardized quantities, so that

.. math:: P(y_{nj} = k \mid \eta) = \Phi\Big(\frac{\tau^*_{jk} - \lambda^*_j \eta_{nf(j)}}
          {\sqrt{1 - \lambda^{*2}_j}}\Big) - \Phi\Big(\frac{\tau^*_{j,k-1} - \lambda^*_j
          \eta_{nf(j)}}{\sqrt{1 - \lambda^{*2}_j}}\Big).

Priors: :math:`\lambda^*_j \sim \mathrm{Beta}(1, 1)` (positive loadings, uniform on the
standardized scale); the ordered :math:`\tau^*_j` get the prior that makes the
model-implied marginal category probabilities :math:`p_{jk} = \Phi(\tau^*_{jk}) -
\Phi(\tau^*_{j,k-1})` uniform on the simplex (an induced Dirichlet(1) prior, density
:math:`\prod_k \phi(\tau^*_{jk})`), which stays proper when a category is never used;
:math:`\Psi \sim \mathrm{LKJ}(1)` (Lewandowski, Kurowicka & Joe 2009), built from canonical
partial correlations through its Cholesky factor; factor scores :math:`\eta` are latent
variables. Ratings are used in long form: a missing rating drops out of the likelihood, not
its row.

Sampling (default ``parameterization="augmented"``): the factor scores are integrated out,
:math:`y^*_n \sim N_J(0, \Lambda^* \Psi \Lambda^{*\top} + \operatorname{diag}(1 -
\lambda^{*2}))`, and the latent responses are augmented inside the box of the observed
categories through the GHK construction (Chib & Greenberg 1998, as blavaan does); the
factor scores are drawn afterwards from their conditional normal given :math:`y^*`. The
posterior is the same as when the scores are sampled; it mixes several times better when
loadings are near 1 (model card).

Fit (Garnier-Villarreal & Jorgensen 2020, adapted to ordinal data): the discrepancy of
each posterior draw is the weighted least-squares distance between the sample statistics
:math:`s` (thresholds and polychoric correlations) and the model-implied ones,
:math:`D(\theta) = N (s - \sigma(\theta))^\top \Gamma^{-1} (s - \sigma(\theta))` with
:math:`\Gamma/N` the asymptotic covariance of :math:`s`; with :math:`p^*` statistics,
:math:`p_D` the number of free parameters of the limited-information model (loadings,
thresholds in :math:`s`, free correlations; the DIC-style :math:`\overline{D} -
D(\bar\theta)` is reported as ``pD_dic`` but not used, because the full-information
posterior is not centred on the WLS minimum) and the independence model's
:math:`D_0 = N s_\rho^\top \Gamma_{\rho\rho}^{-1} s_\rho` on :math:`d_0` = number of
correlations:

.. math::
    \mathrm{BRMSEA} = \sqrt{\frac{\max(D - p^*, 0)}{(p^* - p_D) N}}, \quad
    \mathrm{BCFI} = 1 - \frac{\max(D - p^*, 0)}{D_0 - d_0}, \quad
    \mathrm{BTLI} = \frac{D_0/d_0 - (D - p_D)/(p^* - p_D)}{D_0/d_0 - 1}.

The posterior predictive p-value is :math:`P(D(y^{rep}, \theta) \ge D(y, \theta))` with
:math:`y^{rep}` drawn from the model (fresh factor scores) and the same missing pattern.
LOO (Vehtari, Gelman & Gabry 2017) uses the *marginal* likelihood of each output,
:math:`p(y_n \mid \theta) = \int \prod_j P(y_{nj} \mid \eta) N(\eta; 0, \Psi) d\eta`,
computed by importance sampling, so that ``compare`` ranks factor structures.

Code: this module fits and reports; :mod:`bayesmeta.validity._cfa_setup` checks the syntax
and puts the ratings in long form, :mod:`bayesmeta.validity._cfa_build` (with
:mod:`bayesmeta.validity._ghk`) builds the PyMC model, :mod:`bayesmeta.validity._cfa_derived`
computes factor scores, fit indices and the marginal likelihood from the posterior.

References
----------
Muthén, B. (1984). A general structural equation model with dichotomous, ordered
categorical, and continuous latent variable indicators. *Psychometrika*, 49, 115-132.
Lewandowski, D., Kurowicka, D., & Joe, H. (2009). Generating random correlation matrices
based on vines and extended onion method. *Journal of Multivariate Analysis*, 100,
1989-2001.
Garnier-Villarreal, M., & Jorgensen, T. D. (2020). Adapting fit indices for Bayesian
structural equation modeling: Comparison to maximum likelihood. *Psychological Methods*,
25(1), 46-70.
Vehtari, A., Gelman, A., & Gabry, J. (2017). Practical Bayesian model evaluation using
leave-one-out cross-validation and WAIC. *Statistics and Computing*, 27, 1413-1432.
Merkle, E. C., & Rosseel, Y. (2018). blavaan: Bayesian structural equation models via
parameter expansion. *Journal of Statistical Software*, 85(4).
Chib, S., & Greenberg, E. (1998). Analysis of multivariate probit models. *Biometrika*,
85(2), 347-361.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayesmeta.options import SamplerOptions, resolve_seed
from bayesmeta.results import Result
from bayesmeta.summaries import CI_PROB, MCMC_COLUMNS, check_ci_prob, diagnose, summarize
from bayesmeta.validity._cfa_build import FACTOR_PARAMS, Design, cut_labels
from bayesmeta.validity._cfa_derived import (
    draw_factor_scores,
    identification_warnings,
    marginal_log_likelihood,
    theta_quantities,
)
from bayesmeta.validity._cfa_derived import fit_measures as posterior_fit_measures
from bayesmeta.validity._cfa_setup import (
    IdentificationWarning,
    _Data,
    identification_warnings_pre,
    input_hash,
    model_for,
    setup,
)
from bayesmeta.validity.syntax import ModelSpec
from bayesmeta.validity.wlsmv import estimand, parameter_table

__all__ = ["IdentificationWarning", "OrdinalCFAResult", "ordinal_cfa"]

#: Default sampler settings of a full fit: 4 chains, 200 tuning iterations, then draws until
#: every reported quantity (:data:`REPORTED`) has R-hat <= 1.01 and bulk and tail ESS >= 400,
#: checked from 500 draws per chain on (the adaptive length of bayesmeta.sampling; cap
#: 5,000 draws per chain). With 200 tuning iterations (400 until stop 37) SummEval met the
#: targets at 500-700 draws per chain on five of five seeds, as many draws as with 400, for
#: about a quarter less CPU (model card, "Shorter warm-up").
DEFAULTS = {"chains": 4, "tune": 200, "draws": 500}
#: The sampled quantities behind every row of ``summary()`` (residual variances are a
#: monotone function of the loadings, so they share the loadings' R-hat and ESS): what the
#: adaptive sampler checks, and what the convergence check reports.
REPORTED = ("loading_std", "threshold_std", "factor_corr")
#: Posterior variables kept in the result (the sampler's own coordinates are dropped).
KEEP_VARS = ("loading_std", "threshold_std", "factor_corr", "factor_score")
#: Ways to sample the model (see the model card): the default integrates the factor
#: scores out and augments the latent responses; the others sample the factor scores.
PARAMETERIZATIONS = ("augmented", *FACTOR_PARAMS)
#: Variables the augmented model keeps in its trace (not its 20,000 latent responses).
AUGMENTED_TRACE = ("loading_std", "threshold_std", "factor_corr", "factor_score_mean")
#: The index of every table: lavaan's parameter label after the estimand.
INDEX = ["estimand", "lhs", "op", "rhs"]
#: WLSMV's columns that go to details() beside the posterior.
CLASSICAL_DETAILS = ("se", "z", "pvalue", "est", "est_se", "free")


def _sample(model: Any, **kwargs: Any) -> Any:
    """The one place this module samples (bayesmeta.sampling: nutpie by default)."""
    from bayesmeta.sampling import sample

    return sample(model, **kwargs)


# ============================================================================ tables
def _posterior_table(idata: Any, design: Design, spec: ModelSpec, ci_prob: float,
                     theta: bool = False) -> pd.DataFrame:
    """lavaan-ordered rows (loadings, factor correlations, thresholds, residual variances)
    indexed ``(estimand, lhs, op, rhs)``, summarised by :func:`bayesmeta.summaries.summarize`
    on the delta (``std.all``) or, with ``theta=True``, the theta scale."""
    post = idata.posterior
    names = (["loading", "threshold"] if theta else ["loading_std", "threshold_std"])
    names += ["factor_corr", "residual_var_std"]
    diag = diagnose(post[names])
    summ = {n: summarize(post[n], ci_prob=ci_prob, diagnostics=xr.Dataset(
        {s: diag[f"{n}__{s}"] for s in MCMC_COLUMNS})) for n in names}
    keys: list[tuple[str, str, str]] = []
    picks: list[tuple[str, dict[str, str]]] = []
    load_v, th_v = names[0], names[1]
    for ld in spec.loadings:
        keys.append((ld.factor, "=~", ld.indicator))
        picks.append((load_v, {"indicator": ld.indicator}))
    fs = list(spec.factors)
    for a in range(len(fs)):
        for b in range(a + 1, len(fs)):
            keys.append((fs[a], "~~", fs[b]))
            picks.append(("factor_corr", {"trait": fs[a], "trait2": fs[b]}))
    for ind in spec.observed:
        for k, cut in enumerate(cut_labels(design.n_categories)):
            keys.append((ind, "|", f"t{k + 1}"))
            picks.append((th_v, {"indicator": ind, "cut": cut}))
    for ind in spec.observed:
        keys.append((ind, "~~", ind))
        picks.append(("residual_var_std", {"indicator": ind}))
    cols: dict[str, list[float]] = {c: [] for c in ("mean", "sd", "hdi_low", "hdi_high",
                                                    *MCMC_COLUMNS)}
    for var, sel in picks:
        s = summ[var].sel(sel)
        cols["mean"].append(float(s["mean"]))
        cols["sd"].append(float(s["sd"]))
        cols["hdi_low"].append(float(s["interval"].sel(ci_bound="lower")))
        cols["hdi_high"].append(float(s["interval"].sel(ci_bound="upper")))
        for stat in MCMC_COLUMNS:
            cols[stat].append(float(s[stat]))
    index = pd.MultiIndex.from_tuples([(estimand(*k, spec.factors), *k) for k in keys],
                                      names=INDEX)
    return pd.DataFrame(cols, index=index)


def _classical(spec: ModelSpec, data: _Data, ci_prob: float
               ) -> tuple[pd.DataFrame | None, pd.Series | None, str]:
    """lavaan's WLSMV standardized solution in the table shape (Wald intervals at
    ``ci_prob``), with threshold labels mapped to the full scale's cuts."""
    try:
        from bayesmeta.validity.polychoric import polychoric
        from bayesmeta.validity.wlsmv import fit_wlsmv

        sample = polychoric(data.frame, acov=True)
        fit = fit_wlsmv(spec, sample)
    except Exception as err:  # the classical twin must not stop the Bayesian fit
        return None, None, f"classical WLSMV fit failed: {err}"
    tab = parameter_table(fit, spec.factors, ci_prob=ci_prob)
    # map lavaan's t1.. (observed levels) to the model's cuts of the full scale
    lv = dict(zip(sample.variables, sample.levels, strict=True))
    rows = []
    for est, lhs, op, r in tab.index:
        if op == "|":
            r = f"t{int(lv[lhs][int(r[1:]) - 1]) - data.scale[0] + 1}"
        rows.append((est, lhs, op, r))
    tab.index = pd.MultiIndex.from_tuples(rows, names=INDEX)
    return tab, fit.fit_measures, ""


def _add_log_likelihood(idata: Any, design: Design, seed: int) -> None:
    """The marginal log likelihood of every output as the ``log_likelihood`` group."""
    ll = marginal_log_likelihood(idata, design, random_seed=seed)
    idata.add_groups(log_likelihood=xr.Dataset({"rating": ll}))


def _frame_to_ds(table: pd.DataFrame) -> xr.Dataset:
    flat = table.reset_index()
    flat.index = pd.RangeIndex(len(flat), name="row")
    return xr.Dataset.from_dataframe(flat)


# ============================================================================ result
class OrdinalCFAResult(Result):
    """Result of :func:`ordinal_cfa` (``bm.cfa(..., estimator="bayes")``): the table indexed
    ``(estimand, lhs, op, rhs)`` with lavaan's WLSMV estimate and Wald interval in the
    classical columns beside the posterior (WLSMV's se, z, pvalue, est, est_se, free in
    ``details()``); ``factor_scores()``, ``fit_measures()``, ``loo()``,
    ``parameters(parameterization=...)``."""

    kind = "ordinal_cfa"

    def factor_scores(self, *, level: str = "output") -> xr.DataArray:
        r"""Posterior draws of the factor scores, per output or as system means.

        Parameters
        ----------
        level : {"output", "system"}
            ``"output"``: the draws of :math:`\eta_n` of every output (system x item);
            ``"system"``: in every draw, the mean over items of each system's output scores,
            :math:`\bar\eta_s = |I_s|^{-1}\sum_i \eta_{si}`.

        Returns
        -------
        xarray.DataArray
            dims ``(chain, draw, system, item, trait)`` (``level="output"``; ``trait`` holds
            the factor names), ``(chain, draw, system, trait)`` (``level="system"``), or
            ``(chain, draw, output, trait)`` when the data had no system and item labels.
            Summarise with :func:`bayesmeta.summaries.summarize` (mean, sd, HDI, R-hat,
            ESS).

        Notes
        -----
        With the default ``parameterization="augmented"`` each draw of :math:`\eta_n` comes
        from its conditional normal given the draw's latent responses and parameters
        (:func:`bayesmeta.validity._cfa_derived.draw_factor_scores`), so the draws carry the
        uncertainty of the scores and of the loadings, thresholds and correlations. The
        classical twin is
        :meth:`bayesmeta.validity.factor_analysis.CFAResult.factor_scores` (lavaan's EBM, the
        mode of the same conditional posterior at the WLSMV estimates).

        Examples
        --------
        >>> fs = fit.factor_scores(level="system")  # doctest: +SKIP
        >>> bayesmeta.summaries.summarize(fs)["interval"].dims  # doctest: +SKIP
        ('system', 'trait', 'ci_bound')

        R equivalent: ``blavaan::blavPredict(fit, type = "lv")`` (draws per output).
        """
        from bayesmeta.validity.factor_scores import check_level, system_means

        check_level(level)
        da = self.idata.posterior["factor_score"]
        if "system" in da.coords and "item" in da.coords:
            system, item = da["system"].values, da["item"].values
            idx = pd.MultiIndex.from_arrays([system, item], names=["system", "item"])
            da = da.drop_vars(["system", "item"]).assign_coords(
                xr.Coordinates.from_pandas_multiindex(idx, "output")).unstack("output")
            da = da.reindex(system=pd.unique(system), item=pd.unique(item))
            da = da.transpose("chain", "draw", "system", "item", "trait")
        else:
            da = da.transpose("chain", "draw", "output", "trait")
        da.name = "factor_score"
        da.attrs = {"level": "output", "estimator": "posterior draws (Bayesian ordinal CFA)"}
        return system_means(da) if level == "system" else da

    def fit_measures(self) -> pd.DataFrame:
        """BRMSEA, BCFI, BTLI and the discrepancy (posterior mean, sd, HDI, R-hat, ESS),
        ppp, pD and df, with lavaan's scaled WLSMV indices in ``classical``."""
        ds = self.extra.get("fit_measures")
        if ds is None:
            return pd.DataFrame()
        return ds.to_dataframe()

    def loo(self) -> Any:
        """PSIS-LOO of the marginal (factor scores integrated out) likelihood of each
        output (ArviZ ``ELPDData``). The marginal log likelihood is computed on the first
        call (seeded by the fit's seed, so the same numbers as ``loo=True``) unless the fit
        computed it already (``loo=True``; kept when the result is saved)."""
        import arviz as az

        if self.idata is not None and "log_likelihood" not in self.idata.groups():
            design = getattr(self, "_design", None)
            if design is not None:
                _add_log_likelihood(self.idata, design, self._loo_seed)
        if self.idata is None or "log_likelihood" not in self.idata.groups():
            raise ValueError("this fit has no log likelihood (fitted with loo=False, then "
                             "saved or loaded); refit with loo=True to keep it.")
        ll = self.idata.log_likelihood
        post = self.idata.posterior[["loading_std"]].sel(draw=ll["draw"].values)
        sub = az.InferenceData(posterior=post, log_likelihood=ll)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return az.loo(sub, var_name="rating", pointwise=True)

    def parameters(self, parameterization: str = "delta") -> pd.DataFrame:
        """The posterior in the ``delta`` (standardized; lavaan ``std.all``; the summary with
        its details beside it) or ``theta`` (unit residual variance) parameterization, both
        indexed ``(estimand, lhs, op, rhs)``."""
        if parameterization == "delta":
            out = self._table.join(self._details)
            out.attrs = dict(self._table.attrs)
            return out
        if parameterization != "theta":
            raise ValueError(f"parameterization must be 'delta' or 'theta', got "
                             f"{parameterization!r}.")
        ds = self.extra.get("theta_table")
        if ds is None:
            return pd.DataFrame()
        return ds.to_dataframe().set_index(INDEX)

    def _body(self) -> str:
        table = self._table
        parts = []
        est = table.index.get_level_values("estimand")
        for title, name in (("Latent variables (standardized loadings):", "loading"),
                            ("Factor correlations:", "factor_correlation"),
                            ("Thresholds (standardized):", "threshold"),
                            ("Residual variances (delta scale):", "residual_variance")):
            mask = est == name
            if mask.any():
                parts += [title, self._format_table(table[mask].droplevel("estimand")), ""]
        fm = self.fit_measures()
        if len(fm):
            parts += ["Fit (Garnier-Villarreal & Jorgensen 2020; ppp from replicated data):",
                      self._format_table(fm), ""]
        return "\n".join(parts).rstrip()


# ============================================================================ main
def ordinal_cfa(
    model: str | ModelSpec,
    data: Any,
    *,
    ci_prob: float = CI_PROB,
    sampling: SamplerOptions | Mapping[str, Any] | str | None = None,
    random_seed: int | None = None,
    progress: bool | None = None,
    loading_prior: tuple[float, float] = (1.0, 1.0),
    lkj_eta: float = 1.0,
    parameterization: str = "augmented",
    classical: bool = True,
    fit_measures: bool = True,
    loo: bool = False,
    n_ppc: int = 100,
) -> OrdinalCFAResult:
    r"""Bayesian ordinal CFA (probit, theta parameterization; see the module docstring).

    Parameters
    ----------
    model : str or ModelSpec
        lavaan syntax (``"coh =~ Expert.1.COH + Expert.2.COH + Expert.3.COH; ..."``) or a
        parsed :class:`bayesmeta.validity.syntax.ModelSpec`.
    data : xarray.Dataset or pandas.DataFrame
        A bayesmeta dataset with ordinal ``rating(system, item, rater, trait)`` (indicators
        are the columns ``"{rater}.{trait}"``; continuous judgments are refused) or a wide
        DataFrame of ratings. NaN = missing.
    ci_prob : float
        Probability of the HDIs and of the classical Wald intervals (default 0.94).
    sampling : SamplerOptions, dict, "fast" or "full", optional
        Sampler settings (:class:`bayesmeta.SamplerOptions`; this model's defaults: 4
        chains, 200 tuning iterations, then draws until the loadings, thresholds and factor
        correlations reach R-hat <= 1.01 and bulk and tail ESS >= 400, checked from 500
        draws per chain on, at most 5,000). ``"fast"`` is a preview, not for reporting.
    random_seed : int, optional
        Seed, drawn and recorded when not given.
    progress : bool, optional
        Show the sampler's progress bar (default: in interactive full runs).
    loading_prior : (a, b)
        Beta prior of the standardized loadings (default uniform).
    lkj_eta : float
        LKJ shape of the factor correlations (default 1, uniform over correlation matrices).
    parameterization : {"augmented", "polar", "zerosum", "noncentred"}
        How the model is sampled (the same posterior; see the model card for speed).
        ``augmented`` (default) integrates the factor scores out and samples the latent
        responses inside the box of the observed categories (the construction of blavaan's
        ordinal models), then draws the factor scores from their conditional normal; the
        others sample the factor scores directly. ``augmented`` runs in numba kernels only:
        with ``sampling={"backend": "jax"}`` use one of the others.
    classical : bool
        Also fit lavaan's WLSMV (the ``classical`` columns).
    fit_measures : bool
        Compute BRMSEA, BCFI, BTLI and the ppp.
    loo : bool
        Compute the marginal log likelihood of :meth:`OrdinalCFAResult.loo` and
        :func:`bayesmeta.compare` now, so that a saved result keeps it. By default it is
        computed when first asked for (``fit.loo()``, ``bm.compare``; the same numbers),
        so a fit that is never compared does not pay for it.
    n_ppc : int
        Replicated datasets for the ppp (0: skip it; skipped in fast mode).

    Returns
    -------
    OrdinalCFAResult

    Examples
    --------
    >>> import bayesmeta as bm  # doctest: +SKIP
    >>> fit = bm.cfa("coh =~ Expert.1.COH + Expert.2.COH + Expert.3.COH\n"
    ...              "rel =~ Expert.1.REL + Expert.2.REL + Expert.3.REL",
    ...              bm.datasets.summeval(), estimator="bayes", random_seed=1)  # doctest: +SKIP
    >>> print(fit)  # doctest: +SKIP

    R equivalent: ``blavaan::bcfa(model, data, ordered = TRUE, std.lv = TRUE)``.
    """
    from bayesmeta.sampling import (
        add_seconds,
        check_convergence,
        describe_run,
        is_compiled,
        set_attrs,
    )

    ci_prob = check_ci_prob(ci_prob)
    options = SamplerOptions.coerce(sampling).resolve(**DEFAULTS)
    if parameterization not in PARAMETERIZATIONS:
        raise ValueError(f"parameterization must be one of {PARAMETERIZATIONS}, got "
                         f"{parameterization!r}.")
    if options.backend == "jax" and parameterization == "augmented":
        raise ValueError("parameterization='augmented' (the default) computes its "
                         "likelihood in numba kernels, which JAX cannot run; with "
                         "sampling={'backend': 'jax'} pass parameterization='polar' (the "
                         "same model with the factor scores sampled instead of integrated "
                         "out; its structural estimates agree within Monte Carlo error).")
    spec, data_, design = setup(model, data)
    seed = resolve_seed(random_seed)
    dhash = input_hash(data, data_)
    fs = list(spec.factors)
    pre = identification_warnings_pre(design, spec)
    for msg in pre:
        warnings.warn(msg, IdentificationWarning, stacklevel=2)
    t0 = time.perf_counter()
    pm_model = model_for(design, parameterization=parameterization,
                         loading_prior=loading_prior, lkj_eta=lkj_eta)
    t_build = time.perf_counter() - t0
    trace = AUGMENTED_TRACE if parameterization == "augmented" else None
    was_compiled = is_compiled(pm_model, trace)
    t0 = time.perf_counter()
    idata = _sample(pm_model, options=options, random_seed=seed, progress=progress,
                    var_names=trace, reported=REPORTED,
                    attrs={"data_hash": dhash, "parameterization": parameterization})
    t_sample = time.perf_counter() - t0
    set_attrs(idata, {"sampling_time_s": t_sample, "compiled_before": int(was_compiled)})
    t0 = time.perf_counter()
    if parameterization == "augmented":
        draw_factor_scores(idata, design, seed)
    post = idata.posterior
    raw = [v for v in post.data_vars if v not in KEEP_VARS]
    post = post.drop_vars(raw)  # sampler coordinates (z, gaps, ...): large and not reported
    if data_.system is not None:
        post = post.assign_coords(system=("output", data_.system),
                                  item=("output", data_.item))
    idata.posterior = post
    theta_quantities(idata)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        conv = check_convergence(idata, list(REPORTED))
    for w in caught:
        warnings.warn(w.message, w.category, stacklevel=2)
    post_notes = identification_warnings(idata, design, spec)
    for msg in post_notes:
        warnings.warn(msg, IdentificationWarning, stacklevel=2)
    notes = pre + post_notes + [str(w.message) for w in caught]
    table = _posterior_table(idata, design, spec, ci_prob)
    cl_table, cl_fit = None, None
    if classical:
        cl_table, cl_fit, cl_note = _classical(spec, data_, ci_prob)
        if cl_note:
            notes.append(cl_note)
    if cl_table is not None:  # rows WLSMV cannot estimate (an unused category) stay NaN
        cl_table = cl_table.reindex(table.index).astype({"free": "boolean"})
        table = cl_table.join(table)
    theta_table = _posterior_table(idata, design, spec, ci_prob, theta=True)
    extra: dict[str, Any] = {"theta_table": _frame_to_ds(theta_table)}
    if fit_measures:
        try:
            fm, _ = posterior_fit_measures(idata, design, data_,
                                           n_ppc=0 if options.fast else n_ppc,
                                           random_seed=seed, ci_prob=ci_prob)
        except (np.linalg.LinAlgError, ValueError) as err:
            notes.append(f"fit measures could not be computed: {err}")
        else:
            if cl_fit is not None:
                ref = {"brmsea": "rmsea.scaled", "bcfi": "cfi.scaled", "btli": "tli.scaled",
                       "chisq_discrepancy": "chisq.scaled"}
                fm.insert(0, "classical", [float(cl_fit[ref[k]]) if k in ref and ref[k] in
                                           cl_fit.index else np.nan for k in fm.index])
            extra["fit_measures"] = xr.Dataset.from_dataframe(fm)
    if loo:
        _add_log_likelihood(idata, design, seed)
    add_seconds(idata, "postprocess", time.perf_counter() - t0)
    n_obs = int(design.row.size)
    n_cells = design.n_rows * design.n_indicators
    info = {
        "model": " ; ".join(f"{f} =~ {' + '.join(spec.indicators(f))}" for f in fs),
        "data": f"{design.n_rows} outputs x {design.n_indicators} indicators, {n_obs} "
                f"ratings ({n_cells - n_obs} missing, left out of the likelihood)",
        "method": f"Bayesian ordinal CFA (probit, theta parameterization, LKJ({lkj_eta:g})); "
                  f"table: delta / std.all scale",
        "classical": (f"WLSMV (DWLS + robust SE, lavaan); {ci_prob:.0%} Wald intervals; se, "
                      f"z, pvalue, est in details()") if cl_table is not None
        else "not computed",
        "sampler": describe_run(idata),
        "convergence": str(conv),
        "time": f"build {t_build:.1f} s, "
                + (f"sampling {t_sample:.1f} s (compiled before)" if was_compiled
                   else f"compile + sampling {t_sample:.1f} s"),
    }
    result = OrdinalCFAResult(table, title="Bayesian ordinal confirmatory factor analysis",
                              info=info, idata=idata, extra=extra, notes=notes,
                              ci_prob=ci_prob,
                              classical_ci_kind="Wald (robust SE)" if cl_table is not None
                              else None, posterior="MCMC posterior", random_seed=seed,
                              data_hash=dhash)
    result._design, result._loo_seed = design, seed  # for loo() on request (not saved)
    return result
