"""The joint metric-validity model (issue 22): simulator against its own large-sample
moments, the model's metric log density against scipy, its estimands against the two-stage
route's formulas on a known covariance, bad input; slow tier: fits and recovery."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import bayesmeta as bm
from bayesmeta.summaries import check_table
from bayesmeta.validity.joint_simulate import simulate_joint_validity

TWO = ("coh =~ Rater.1.COH + Rater.2.COH + Rater.3.COH\n"
       "con =~ Rater.1.CON + Rater.2.CON + Rater.3.CON")


@pytest.fixture(scope="module")
def small():
    return simulate_joint_validity(3, n_systems=4, n_items=15, n_traits=2, n_metrics=3)


# ---------------------------------------------------------------------------- simulator
def test_simulator_moments_match_its_truth():
    """With 40,000 outputs, OLS of each metric on the true traits recovers the raw
    coefficients and error variance, and the sample correlations of ratings' latent
    structure are not needed: only the metric part is checked here (independent of the
    simulator's own formulas). Tolerance 0.03 relative: sampling sd of OLS at n = 40,000
    is below 0.01 for these scales."""
    ds = simulate_joint_validity(5, n_systems=40, n_items=1000, n_traits=2, n_metrics=3)
    f = ds["true_trait"].values.reshape(-1, 2)
    for m in ds["metric"].values:
        x = ds["score"].sel(metric=m, run="1").values.ravel()
        X = np.column_stack([np.ones_like(x), f])
        coef, res, *_ = np.linalg.lstsq(X, x, rcond=None)
        truth = ds["true_validity_raw"].sel(metric=m).values
        scale = np.sqrt(float(ds["true_error_variance"].sel(metric=m)))
        np.testing.assert_allclose(coef[1:], truth, atol=0.03 * scale)
        resid_var = res[0] / (x.size - 3)
        assert resid_var == pytest.approx(float(ds["true_error_variance"].sel(metric=m)),
                                          rel=0.03)
        # the standardized truth is the population correlation structure: R^2 of the OLS
        r2 = 1 - res[0] / ((x - x.mean()) ** 2).sum()
        share = float(ds["true_error_share"].sel(metric=m))
        assert 1 - r2 == pytest.approx(share, abs=0.02)


def test_simulator_error_correlation_matches_its_truth():
    """With ``error_corr=0.4`` and 20,000 outputs, the correlations of the OLS residuals
    of the metrics on the true traits are 0.4 (0.03; sampling sd about 0.006); the error
    variances stay the truth's (3% relative); ``error_corr=0`` gives the old data."""
    ds = simulate_joint_validity(5, n_systems=200, n_items=100, n_traits=2, n_metrics=3,
                                 error_corr=0.4)
    f = ds["true_trait"].values.reshape(-1, 2)
    x = ds["score"].values.reshape(-1, 3)
    X = np.column_stack([np.ones(len(f)), f])
    resid = x - X @ np.linalg.lstsq(X, x, rcond=None)[0]
    corr = np.corrcoef(resid.T)
    np.testing.assert_allclose(corr[np.triu_indices(3, 1)], 0.4, atol=0.03)
    np.testing.assert_allclose(ds["true_error_corr"].values[0, 1], 0.4)
    np.testing.assert_allclose(resid.var(0), ds["true_error_variance"].values, rtol=0.03)
    plain = simulate_joint_validity(5, n_systems=4, n_items=10, n_traits=2, n_metrics=3)
    zero = simulate_joint_validity(5, n_systems=4, n_items=10, n_traits=2, n_metrics=3,
                                   error_corr=0.0)
    np.testing.assert_array_equal(plain["score"].values, zero["score"].values)
    with pytest.raises(ValueError, match="error_corr must be in"):
        simulate_joint_validity(5, error_corr=0.3, errors="student_t")


def test_simulator_is_seeded(small):
    again = simulate_joint_validity(3, n_systems=4, n_items=15, n_traits=2, n_metrics=3)
    np.testing.assert_array_equal(small["score"].values, again["score"].values)
    np.testing.assert_array_equal(small["rating"].values, again["rating"].values)


# ---------------------------------------------------------------------------- estimands
def test_estimands_equal_the_two_stage_formulas_on_a_known_covariance():
    """On the population covariance of (f, x) implied by b, Psi, sigma, the two-stage
    route's regression calibration (`_regression_shares` with psi) gives the joint
    model's per-draw estimands: the two routes share their estimand definitions."""
    import xarray as xr

    from bayesmeta.validity._joint_build import estimand_draws
    from bayesmeta.validity.variance import _regression_shares

    rng = np.random.default_rng(0)
    T, M = 3, 4
    A = rng.normal(size=(T, T))
    cov = A @ A.T + T * np.eye(T)
    psi = cov / np.sqrt(np.outer(np.diag(cov), np.diag(cov)))
    b = rng.normal(0, 0.5, size=(M, T))
    sd = rng.uniform(0.3, 1.0, size=M)
    big = np.zeros((T + M, T + M))
    big[:T, :T] = psi
    big[:T, T:] = psi @ b.T
    big[T:, :T] = b @ psi
    big[T:, T:] = b @ psi @ b.T + np.diag(sd**2)
    ref = _regression_shares(big, T, psi)
    post = xr.Dataset({
        "metric_loading": (("chain", "draw", "metric", "trait"), b[None, None]),
        "error_sd": (("chain", "draw", "metric"), sd[None, None]),
        "factor_corr": (("chain", "draw", "trait", "trait2"), psi[None, None]),
    })
    got = estimand_draws(post)
    np.testing.assert_allclose(got["beta"][0, 0], ref["beta"], atol=1e-12)
    np.testing.assert_allclose(got["r2"][0, 0], ref["r2"], atol=1e-12)
    np.testing.assert_allclose(got["r"][0, 0], ref["r"], atol=1e-12)
    np.testing.assert_allclose(got["error_share"][0, 0], 1 - ref["r2"], atol=1e-12)


# ---------------------------------------------------------------------------- model
@pytest.mark.parametrize("errors", ["normal", "student_t"])
def test_metric_log_density_equals_scipy(small, errors):
    """The model's metric Potential at a point equals scipy's log density of the
    standardized scores given that point's factor scores (1e-8)."""
    from bayesmeta.validity._joint_build import build_joint_model, prepare

    jd = prepare(small, TWO, None, None, "first")
    np.testing.assert_allclose(np.nanmean(jd.x, 0), 0, atol=1e-12)
    np.testing.assert_allclose(np.nanstd(jd.x, 0, ddof=1), 1, atol=1e-12)
    model = build_joint_model(jd, errors=errors)
    assert list(model.coords["metric"]) == list(small["metric"].values)
    assert model.named_vars_to_dims["metric_loading"] == ("metric", "trait")
    point = model.initial_point()
    rng = np.random.default_rng(1)
    for name in ("metric_intercept", "metric_loading", "z"):
        point[name] = rng.normal(0, 0.5, size=point[name].shape)
    point["error_sd_log__"] = rng.normal(-0.5, 0.2, size=3)
    if errors == "student_t":
        point["error_nu_excess_log__"] = np.log(rng.uniform(1, 20, size=3))
    names = ["metric_loglik", "factor_score", "metric_intercept", "metric_loading",
             "error_sd"] + (["error_nu"] if errors == "student_t" else [])
    outs = model.replace_rvs_by_values([model[n] for n in names])
    # FAST_COMPILE: Python implementations, no C compilation (keeps this test fast)
    fn = model.compile_fn(outs, inputs=model.value_vars, on_unused_input="ignore",
                          point_fn=True, mode="FAST_COMPILE")
    vals = dict(zip(names, fn(point), strict=True))
    e = jd.x - vals["metric_intercept"] - vals["factor_score"] @ vals["metric_loading"].T
    if errors == "normal":
        ref = stats.norm.logpdf(e, scale=vals["error_sd"]).sum()
    else:
        nu = vals["error_nu"]
        ref = stats.t.logpdf(e, df=nu, scale=vals["error_sd"] * np.sqrt((nu - 2) / nu)).sum()
    assert float(vals["metric_loglik"]) == pytest.approx(ref, rel=1e-8)
    logp = model.compile_fn(model.logp(), point_fn=True, mode="FAST_COMPILE")
    assert np.isfinite(logp(point))


@pytest.mark.parametrize(("method_factors", "leaders"), [(0, None), (1, None), (1, (2,))])
def test_marginal_model_equals_the_joint_gaussian_conditionals(small, method_factors,
                                                               leaders):
    """The traits-integrated-out model at a random point, against the joint normal
    distribution of (f, y*, x) written out directly (no Woodbury identity, no shifted
    box): its metric Potential equals scipy's multivariate normal log density of the
    scores, its rating Potential the GHK log-likelihood (``ghk_numpy``) of y* given x with
    the conditional mean and covariance of the joint normal, and ``factor_score_mean`` the
    conditional mean of f given y* and x (1e-8 relative; 1e-7 absolute). With a method
    factor the metrics' covariance gains C C' and nothing else changes."""
    from bayesmeta.validity._cfa_build import category_slots
    from bayesmeta.validity._ghk import ghk_numpy
    from bayesmeta.validity._joint_build import build_marginal_joint_model, prepare

    jd = prepare(small, TWO, None, None, "first")
    model = build_marginal_joint_model(jd, method_factors=method_factors, leaders=leaders)
    point = model.initial_point()
    rng = np.random.default_rng(4)
    fixed = {"metric_intercept", "metric_loading_orth", "error_sd_log__", "latent_u_interval__",
             "loading_std_logodds__", "threshold_anchor", "threshold_log_gaps"}
    if method_factors:
        point["method_loading_free"] = rng.normal(0, 0.6, size=(3, 1))
        point["method_loading_diag_log__"] = np.array([np.log(0.7)])
        fixed |= {"method_loading_free", "method_loading_diag_log__"}
    for name in ("metric_intercept", "metric_loading_orth"):
        point[name] = rng.normal(0, 0.5, size=point[name].shape)
    point["error_sd_log__"] = rng.normal(-0.5, 0.2, size=3)
    point["latent_u_interval__"] = rng.normal(0, 1.0, size=point["latent_u_interval__"].shape)
    point["loading_std_logodds__"] = rng.normal(0.8, 0.4, size=6)
    corr_name = next(n for n in point if n not in fixed)
    point[corr_name] = rng.normal(0.3, 0.2, size=point[corr_name].shape)
    names = ["metric_loglik", "rating_loglik", "factor_score_mean", "loading_std",
             "threshold_std", "factor_corr", "metric_intercept", "metric_loading",
             "error_sd", "latent_u"] + (["method_loading"] if method_factors else [])
    outs = model.replace_rvs_by_values([model[n] for n in names])
    fn = model.compile_fn(outs, inputs=model.value_vars, on_unused_input="ignore",
                          point_fn=True, mode="FAST_COMPILE")
    v = dict(zip(names, fn(point), strict=True))
    lam = v["loading_std"][:, None] * np.eye(2)[jd.design.factor_of]
    psi, b, sd, x = v["factor_corr"], v["metric_loading"], v["error_sd"], jd.x
    assert abs(psi[0, 1]) > 0.05  # the point has correlated traits
    # joint covariance of (y*, x); y* has unit variances
    syy = lam @ psi @ lam.T
    syy[np.diag_indices(6)] = 1.0
    syx = lam @ psi @ b.T
    sxx = b @ psi @ b.T + np.diag(sd**2)
    if method_factors:
        c = v["method_loading"]
        lead = 0 if leaders is None else leaders[0]  # the leader's loading is positive
        assert c[lead, 0] > 0 and np.abs(np.delete(c, lead, axis=0)).max() > 0.05
        sxx = sxx + c @ c.T
    r = x - v["metric_intercept"]
    ref_x = stats.multivariate_normal(np.zeros(3), sxx).logpdf(r).sum()
    assert float(v["metric_loglik"]) == pytest.approx(ref_x, rel=1e-8)
    mean = r @ np.linalg.solve(sxx, syx.T)  # (N, J)
    cov = syy - syx @ np.linalg.solve(sxx, syx.T)
    lo_s, hi_s = category_slots(jd.design)
    big = np.column_stack([np.full(6, -1e10), v["threshold_std"], np.full(6, 1e10)])
    rows = np.arange(6)[None, :]
    L = np.linalg.cholesky(cov)
    ref_y, e = ghk_numpy(L, big[rows, lo_s] - mean, big[rows, hi_s] - mean, v["latent_u"])
    assert float(v["rating_loglik"]) == pytest.approx(ref_y, rel=1e-8)
    ystar = mean + e @ L.T
    sfz = np.hstack([psi @ lam.T, psi @ b.T])  # Cov(f, (y*, x))
    szz = np.block([[syy, syx], [syx.T, sxx]])
    ref_f = np.hstack([ystar, r]) @ np.linalg.solve(szz, sfz.T)
    np.testing.assert_allclose(v["factor_score_mean"], ref_f, rtol=1e-8, atol=1e-7)


def test_orthonormal_loadings_keep_the_prior_of_the_validity_coefficients(small):
    """The marginal model samples beta_m = L' b_m (``metric_loading_orth``): its prior term
    equals the density of beta_m ~ N(0, L'L) (scipy), which is b_m ~ N(0, I) with the
    Jacobian; B = beta L^-1 recovers b, and B Psi B' = beta beta' (1e-10)."""
    from bayesmeta.validity._joint_build import build_marginal_joint_model, prepare

    jd = prepare(small, TWO, None, None, "first")
    model = build_marginal_joint_model(jd)
    point = model.initial_point()
    rng = np.random.default_rng(8)
    point["metric_loading_orth"] = rng.normal(0, 0.7, size=(3, 2))
    corr_name = next(n for n in point if n.startswith("corr"))
    point[corr_name] = np.array([0.9])  # a strong factor correlation
    names = ["metric_loading_prior", "metric_loading", "factor_corr"]
    outs = model.replace_rvs_by_values([model[n] for n in names])
    fn = model.compile_fn(outs, inputs=model.value_vars, on_unused_input="ignore",
                          point_fn=True, mode="FAST_COMPILE")
    prior, b, psi = fn(point)
    beta = point["metric_loading_orth"]
    L = np.linalg.cholesky(psi)
    ref = stats.multivariate_normal(np.zeros(2), L.T @ L).logpdf(beta).sum()
    assert float(prior) == pytest.approx(ref, rel=1e-10)
    jac = -3 * np.log(np.diag(L)).sum()  # |d b / d beta| = det(L)^-M
    assert float(prior) == pytest.approx(stats.norm.logpdf(b).sum() + jac, rel=1e-10)
    np.testing.assert_allclose(b @ L, beta, atol=1e-10)
    np.testing.assert_allclose(b @ psi @ b.T, beta @ beta.T, atol=1e-10)


@pytest.mark.parametrize("method_factors", [0, 1])
def test_traits_drawn_after_sampling_have_the_joint_normal_conditional_covariance(
        small, method_factors):
    """draw_marginal_traits at one fixed parameter set (4,000 draws of 60 outputs, the
    stored mean 0): the sample covariance of the drawn traits equals the covariance of f
    given (y*, x) from the joint normal's blocks, Psi - S_fz S_zz^-1 S_zf (0.006 absolute;
    the Monte Carlo sd of each entry is below 0.001)."""
    import xarray as xr

    from bayesmeta.validity._joint_build import draw_marginal_traits, prepare

    jd = prepare(small, TWO, None, None, "first")
    lstd = np.array([0.6, 0.5, 0.55, 0.4, 0.6, 0.5])
    psi = np.array([[1.0, 0.4], [0.4, 1.0]])
    b = np.array([[0.8, 0.1], [0.2, 0.5], [-0.3, 0.6]])
    sd = np.array([0.3, 0.4, 0.5])
    D, N = 4000, jd.design.n_rows

    def rep(x, dims):
        return (("chain", "draw", *dims), np.broadcast_to(x, (1, D, *x.shape)).copy())

    post = xr.Dataset({
        "loading_std": rep(lstd, ("indicator",)),
        "factor_corr": rep(psi, ("trait", "trait2")),
        "metric_loading": rep(b, ("metric", "trait")),
        "error_sd": rep(sd, ("metric",)),
        "factor_score_mean": (("chain", "draw", "output", "trait"), np.zeros((1, D, N, 2))),
    })
    c = np.array([[0.7], [0.5], [-0.6]])
    if method_factors:
        post["method_loading"] = rep(c, ("metric", "method"))
    f = draw_marginal_traits(post, jd, seed=5)["factor_score"].values.reshape(-1, 2)
    lam = lstd[:, None] * np.eye(2)[jd.design.factor_of]
    syy = lam @ psi @ lam.T
    syy[np.diag_indices(6)] = 1.0
    syx = lam @ psi @ b.T
    sxx = b @ psi @ b.T + np.diag(sd**2) + (c @ c.T if method_factors else 0.0)
    szz = np.block([[syy, syx], [syx.T, sxx]])
    sfz = np.hstack([psi @ lam.T, psi @ b.T])
    ref = psi - sfz @ np.linalg.solve(szz, sfz.T)
    np.testing.assert_allclose(np.cov(f.T), ref, atol=0.006)
    # the check can fail: leaving the metrics out of the conditioning moves it by more
    theta = 1.0 / (1.0 - lstd**2)
    no_metrics = np.linalg.inv(np.linalg.inv(psi) + lam.T @ (theta[:, None] * lam))
    assert np.abs(no_metrics - ref).max() > 0.05
    if method_factors:  # and so does ignoring the method factor
        no_method = psi - sfz @ np.linalg.solve(szz - np.block(
            [[np.zeros((6, 6)), np.zeros((6, 3))], [np.zeros((3, 6)), c @ c.T]]), sfz.T)
        assert np.abs(no_method - ref).max() > 0.02
        from bayesmeta.validity._joint_build import estimand_draws

        parts = estimand_draws(post.isel(draw=[0]))
        total = parts["r2"] + parts["error_share"] + parts["method_share"]
        np.testing.assert_allclose(total, 1.0, atol=1e-12)
        cc = float(c[1] @ c[1])
        v1 = float(b[1] @ psi @ b[1]) + cc + sd[1] ** 2
        assert parts["method_share"][0, 0, 1] == pytest.approx(cc / v1, rel=1e-12)


def test_marginal_route_is_chosen_only_where_it_applies(small):
    from bayesmeta.validity._joint_build import prepare, resolve_parameterization

    jd = prepare(small, TWO, None, None, "first")
    assert resolve_parameterization(jd, "normal", "auto") == "marginal"
    assert resolve_parameterization(jd, "student_t", "auto") == "noncentred"
    with pytest.raises(ValueError, match="errors='student_t'"):
        resolve_parameterization(jd, "student_t", "marginal")
    ds = small.copy(deep=True)
    ds["score"].loc[{"metric": "metric02.CON"}] = ds["score"].sel(metric="metric02.CON")\
        .where(ds["system"] != ds["system"][0], np.nan)
    gap = prepare(ds, TWO, None, None, "first")
    assert resolve_parameterization(gap, "normal", "auto") == "noncentred"
    with pytest.raises(ValueError, match=r"missing scores: metric02\.CON \(15\)"):
        resolve_parameterization(gap, "normal", "marginal")
    with pytest.raises(ValueError, match="parameterization must be"):
        resolve_parameterization(jd, "normal", "polar")
    from bayesmeta.validity._joint_build import build_marginal_joint_model
    from bayesmeta.validity.joint_model import joint_metric_variance

    with pytest.raises(ValueError, match=r"method_factors must be an integer in \[0, 2\]"):
        build_marginal_joint_model(jd, method_factors=3)
    with pytest.raises(ValueError, match="method_factors=1 needs parameterization='marginal'"):
        joint_metric_variance(small, TWO, errors="student_t", method_factors=1)


def test_missing_scores_drop_out_of_the_likelihood(small):
    from bayesmeta.validity._joint_build import model_data, prepare

    ds = small.copy(deep=True)
    ds["score"][0, 0, 1, 0] = np.nan
    jd = prepare(ds, TWO, None, None, "first")
    vals = model_data(jd)
    assert vals["metric_observed"].sum() == jd.x.size - 1
    assert np.isfinite(vals["metric_score"]).all()


# ---------------------------------------------------------------------------- bad input
def test_bad_input_is_refused_with_a_named_reason(small):
    with pytest.raises(ValueError, match="estimator"):
        bm.metric_variance(small, TWO, estimator="two-step")
    with pytest.raises(ValueError, match="errors"):
        bm.metric_variance(small, TWO, estimator="joint", errors="cauchy")
    with pytest.raises(ValueError, match="level"):
        bm.metric_variance(small, TWO, estimator="joint", level="system")
    with pytest.raises(TypeError, match="fit must be"):
        bm.metric_variance(small, 3.0, estimator="joint")
    flat = small.copy(deep=True)
    flat["score"].loc[{"metric": "metric02.CON"}] = 1.0
    with pytest.raises(ValueError, match=r"metric02\.CON.*constant"):
        bm.metric_variance(flat, TWO, estimator="joint")
    with pytest.raises(ValueError, match="nope"):
        bm.metric_variance(small, TWO, estimator="joint", metrics=["nope"])


def test_adaptive_length_and_convergence_check_read_every_row_of_the_table(small):
    """The quantities behind the stopping rule and the convergence check hold every row of
    summary(), with the table's own R-hat and ESS (stop 44: a trait share at R-hat 1.014
    had stopped the sampler, because only the coefficients and error shares were read).
    Made-up draws, one chain shifted, so that the R-hats differ from row to row."""
    import arviz as az
    import xarray as xr

    from bayesmeta.summaries import diagnose
    from bayesmeta.validity._factor_common import _claims
    from bayesmeta.validity.joint_model import (
        add_estimands,
        estimand_table,
        prepare,
        reported_quantities,
        row_diagnostics,
    )

    jd = prepare(small, TWO, None, None, "first")
    traits, metrics = list(jd.design.factors), list(jd.metrics)
    claimed = _claims(small, metrics, traits, None)
    assert claimed  # the trait shares and specificities are in the table
    rng = np.random.default_rng(5)
    C, D, M, T = 4, 200, len(metrics), len(traits)
    loading = rng.normal(0.5, 0.1, (C, D, M, T))
    loading[0] += 0.05
    rho = np.clip(rng.normal(0.4, 0.05, (C, D)), -0.9, 0.9)
    corr = np.ones((C, D, T, T))
    corr[..., 0, 1] = corr[..., 1, 0] = rho
    post = xr.Dataset({
        "metric_loading": (("chain", "draw", "metric", "trait"), loading),
        "error_sd": (("chain", "draw", "metric"), np.abs(rng.normal(0.7, 0.05, (C, D, M)))),
        "factor_corr": (("chain", "draw", "trait", "trait2"), corr),
        "loading_std": (("chain", "draw", "indicator"),
                        rng.uniform(0.6, 0.9, (C, D, jd.design.n_indicators))),
    }, coords={"metric": metrics, "trait": traits, "trait2": traits})
    rep = reported_quantities(jd, traits, claimed)(az.InferenceData(posterior=post))
    full = post.copy()
    table = estimand_table(add_estimands(full, jd), full, traits, metrics, claimed, 0.94)
    assert rep["metric_variance"].sizes["row"] == len(table)
    diag = diagnose(rep)
    for stat in ("r_hat", "ess_bulk", "ess_tail"):
        np.testing.assert_allclose(diag[f"metric_variance__{stat}"].values,
                                   table[stat].values, rtol=1e-10)
    assert np.ptp(table["r_hat"].values) > 0.01
    # the fit passes those diagnostics to the table instead of computing them again:
    # the same table, row by row
    again = estimand_table(add_estimands(post.copy(), jd), full, traits, metrics, claimed,
                           0.94, diagnostics=row_diagnostics(diag))
    pd.testing.assert_frame_equal(again, table, rtol=1e-12)


# ---------------------------------------------------------------------------- fits (slow)
@pytest.mark.slow
def test_joint_fit_shapes_names_and_routes(small, tmp_path):
    """A fast-mode fit: the table has metric_variance's index and estimands (plus
    error_variance), the Bayesian columns, residual correlations and metric_residuals of
    the fit, LOO and the same numbers for the same seed."""
    res = bm.metric_variance(small, TWO, estimator="joint", sampling="fast", random_seed=2)
    tab = res.summary()
    check_table(tab)
    assert tab.index.names == ["estimand", "trait", "metric"]
    classical = bm.metric_variance(small, bm.cfa(TWO, small), random_seed=0,
                                   resampling={"n_resamples": 20}).summary()
    assert set(classical.index) <= set(tab.index)
    assert set(tab.index) - set(classical.index) == {
        ("error_variance", "", m) for m in small["metric"].values}
    assert {"mean", "sd", "hdi_low", "hdi_high", "r_hat", "ess_bulk"} <= set(tab.columns)
    shares = tab.xs("error_share", level="estimand")["mean"]
    assert ((shares > 0) & (shares < 1)).all()
    again = bm.metric_variance(small, TWO, estimator="joint", sampling="fast", random_seed=2)
    np.testing.assert_allclose(again.summary()["mean"], tab["mean"], rtol=1e-12)
    rc = res.residual_correlations()
    assert len(rc) == 3 and (rc["hdi_low"] >= -1).all() and (rc["hdi_high"] <= 1).all()
    mr = bm.metric_residuals(small, res, n_components=2).summary()
    assert set(mr.index.get_level_values("estimand")) == {
        "residual_correlation", "pc_loading", "pc_variance_share"}
    np.testing.assert_allclose(
        mr.xs("residual_correlation", level="estimand")["mean"].values, rc["mean"].values,
        atol=1e-12)
    assert res.loo().elpd_loo < 0
    p = res.probability("metric01.COH", "coh", "con")
    assert 0 <= p <= 1
    path = tmp_path / "joint.nc"
    res.save(path)
    back = bm.load(path)
    np.testing.assert_allclose(back.summary()["mean"], tab["mean"], rtol=1e-12)


@pytest.mark.slow
def test_joint_fit_recovers_the_truth():
    """Default sampling on 8 x 30 outputs, 2 traits, 4 metrics: R-hat <= 1.01, and the 94%
    HDIs of the raw validity coefficients and error variances cover the truth for at least
    10 of the 12 (expected 11.3; the coverage study over 100 datasets is the benchmark)."""
    ds = simulate_joint_validity(11, n_systems=8, n_items=30, n_traits=2, n_metrics=4)
    res = bm.metric_variance(ds, TWO, estimator="joint", random_seed=3)
    assert res.summary()["r_hat"].max() <= 1.01
    from bayesmeta.summaries import summarize

    post = res.idata.posterior
    hits = 0
    for name, truth in (("validity_raw", "true_validity_raw"),
                        ("error_variance", "true_error_variance")):
        dims = [d for d in ("metric", "trait") if d in post[name].dims]
        iv = summarize(post[name]).transpose(*dims, "ci_bound")["interval"].values
        t = ds[truth].transpose(*dims).values  # model traits coh, con = data's COH, CON
        hits += int(((iv[..., 0] <= t) & (t <= iv[..., 1])).sum())
    assert hits >= 10


@pytest.mark.slow
def test_sampled_and_integrated_traits_give_the_same_posterior(small):
    """The two parameterisations sample one posterior: on the small dataset the posterior
    means of the validity coefficients and error shares agree within 4 Monte Carlo SEs of
    their difference (default sampling, different seeds). A Student-t fit and a fit with
    a missing score take the sampled-traits route and say so."""
    from bayesmeta.validity.joint_model import joint_metric_variance

    a = joint_metric_variance(small, TWO, random_seed=1)
    b = joint_metric_variance(small, TWO, random_seed=2, parameterization="noncentred")
    assert a.idata.posterior.attrs["parameterization"] == "marginal"
    assert b.idata.posterior.attrs["parameterization"] == "noncentred"
    ta, tb = a.summary(), b.summary()
    rows = ta.index.get_level_values("estimand").isin(["validity_coefficient",
                                                       "error_share"])
    se = np.hypot(ta["sd"] / np.sqrt(ta["ess_bulk"]), tb["sd"] / np.sqrt(tb["ess_bulk"]))
    z = ((ta["mean"] - tb["mean"]) / se)[rows]
    assert np.abs(z).max() < 4, z.sort_values().tail()
    t = joint_metric_variance(small, TWO, errors="student_t", sampling="fast", random_seed=3)
    assert "traits sampled" in t.info["method"] and "error_nu" in t.idata.posterior
    gap = small.copy(deep=True)
    gap["score"].loc[{"metric": "metric02.CON"}] = gap["score"].sel(metric="metric02.CON")\
        .where(gap["system"] != gap["system"][0], np.nan)
    g = joint_metric_variance(gap, TWO, sampling="fast", random_seed=3)
    assert g.idata.posterior.attrs["parameterization"] == "noncentred"
    assert any("missing metric score" in n for n in g.notes)


@pytest.mark.slow
def test_method_factors_fit_end_to_end(small, tmp_path):
    """A fast-mode fit with one method factor: the table gains a method_share row per
    metric, r_squared + error_share + method_share = 1 in every draw, residual
    correlations work, LOO refuses with a reason, and the result saves and loads."""
    from bayesmeta.validity.joint_model import joint_metric_variance

    res = joint_metric_variance(small, TWO, method_factors=1, sampling="fast",
                                random_seed=4)
    tab = res.summary()
    assert len(tab.xs("method_share", level="estimand")) == 3
    post = res.idata.posterior
    total = (post["error_share"] + post["method_share"]).values
    r2 = tab.xs("r_squared", level="estimand")["mean"].values
    np.testing.assert_allclose(total.mean(axis=(0, 1)) + r2, 1.0, atol=1e-10)
    assert len(res.residual_correlations()) == 3
    with pytest.raises(ValueError, match="method factors"):
        res.loo()
    path = tmp_path / "joint_method.nc"
    res.save(path)
    np.testing.assert_allclose(bm.load(path).summary()["mean"], tab["mean"], rtol=1e-12)


@pytest.mark.parametrize("route", ["marginal", "correlated", "noncentred"])
def test_a_cached_joint_model_refitted_to_new_data_is_the_model_of_that_data(route):
    """The joint model is compiled once per shape and refitted through its data containers.
    Its threshold anchors are data too: the model built from dataset A with B's data set
    has B's own model's log density at every point. Before stop 45 the anchors stayed A's,
    so B's draws depended on which dataset the process had fitted first."""
    import pymc as pm

    from bayesmeta.validity._cfa_build import anchor_cuts
    from bayesmeta.validity._joint_build import (
        build_joint_model,
        build_marginal_joint_model,
        model_data,
        prepare,
    )
    from bayesmeta.validity._joint_correlated import (
        build_correlated_joint_model,
        correlated_data,
    )

    jds = [prepare(simulate_joint_validity(s, n_systems=4, n_items=15, n_traits=2,
                                           n_metrics=3), TWO, None, None, "first")
           for s in (4, 7)]
    assert not np.array_equal(anchor_cuts(jds[0].design), anchor_cuts(jds[1].design))
    build = {"marginal": lambda jd: build_marginal_joint_model(jd, method_factors=0),
             "correlated": build_correlated_joint_model,
             "noncentred": lambda jd: build_joint_model(jd, parameterization="noncentred")}
    values = {"marginal": lambda jd: model_data(jd, "marginal"),
              "correlated": correlated_data, "noncentred": model_data}
    model_a, model_b = (build[route](jd) for jd in jds)
    with model_a:
        pm.set_data(values[route](jds[1]))
    rng = np.random.default_rng(0)
    point = {k: v + rng.uniform(-0.3, 0.3, np.shape(v))
             for k, v in model_b.initial_point().items()}
    np.testing.assert_allclose(model_a.compile_logp()(point),
                               model_b.compile_logp()(point), rtol=1e-9)
