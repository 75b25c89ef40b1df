"""The modular metric-validity route, ``bm.metric_variance(data, bayes_cfa,
estimator="modular")`` (``bayesmeta.validity.modular``).

Fast tier: a Bayesian CFA result is stood in for by a posterior whose factor-score draws
are known (each output's draws centred on a known posterior mean with a known posterior
covariance), and the metrics are generated from traits = posterior mean + a Berkson error
with that covariance. The route's draws are checked against closed forms (least squares
from NumPy, the scaled-inverse-chi-square mean) and against the known truth. The coverage
study on data simulated from the joint model is ``benchmarks/recovery_joint_validity.py
--modular``.
"""

from __future__ import annotations

import types
import warnings

import arviz as az
import numpy as np
import pytest
import xarray as xr

import bayesmeta as bm
from bayesmeta.validity._cfa_setup import setup
from bayesmeta.validity._joint_build import prepare
from bayesmeta.validity.joint_simulate import simulate_joint_validity
from bayesmeta.validity.modular import draw_metric_parameters, score_moments

TRAITS = ("COH", "CON")
MODEL = "\n".join(f"{t.lower()} =~ " + " + ".join(f"Rater.{r}.{t}" for r in (1, 2, 3))
                  for t in TRAITS)
CHAINS, DRAWS = 2, 400
PSI = np.array([[1.0, 0.5], [0.5, 1.0]])
V = np.array([[0.30, 0.05], [0.05, 0.20]])  # the scores' posterior covariance
B = np.array([[0.8, 0.1], [0.0, 0.6], [0.4, 0.4]])
SIGMA = np.array([0.5, 0.8, 0.3])


def _fake_fit(ds: xr.Dataset, mean: np.ndarray, *, seed: int = 11, trait_order=(0, 1)):
    """A stand-in for ``bm.cfa(MODEL, ds, estimator="bayes")``: factor correlations PSI in
    every draw, factor-score draws ``mean + N(0, V)`` per output (traits stored in
    ``trait_order``)."""
    spec, data_, design = setup(MODEL, ds)
    N, T = mean.shape
    rng = np.random.default_rng(seed)
    draws = mean + rng.multivariate_normal(np.zeros(T), V, size=(CHAINS, DRAWS, N))
    order = list(trait_order)
    names = [design.factors[k] for k in order]
    post = xr.Dataset({
        "factor_corr": (("chain", "draw", "trait", "trait2"),
                        np.broadcast_to(PSI[np.ix_(order, order)],
                                        (CHAINS, DRAWS, T, T)).copy()),
        "factor_score": (("chain", "draw", "output", "trait"), draws[..., order])},
        coords={"chain": np.arange(CHAINS), "draw": np.arange(DRAWS), "trait": names,
                "trait2": names, "system": ("output", np.asarray(data_.system)),
                "item": ("output", np.asarray(data_.item))})
    return types.SimpleNamespace(idata=az.InferenceData(posterior=post), spec=spec,
                                 provenance={"random_seed": seed}, loo=lambda: None)


def _data(seed: int = 3, error_corr: float = 0.0):
    """Simulated ratings (two traits), posterior-mean scores, and three metrics generated
    from traits = mean + N(0, V) with known b and sigma (errors of metrics 1 and 3
    correlated ``error_corr``)."""
    ds = simulate_joint_validity(seed, n_traits=2, n_metrics=3)
    rng = np.random.default_rng(seed)
    _, data_, design = setup(MODEL, ds)
    N = design.n_rows
    mean = rng.multivariate_normal(np.zeros(2), PSI - V, size=N)
    traits = mean + rng.multivariate_normal(np.zeros(2), V, size=N)
    R = np.eye(3)
    R[0, 2] = R[2, 0] = error_corr
    e = rng.multivariate_normal(np.zeros(3), R, size=N) * SIGMA
    x = 2.0 + traits @ B.T + e
    score = np.full((ds.sizes["system"], ds.sizes["item"], 3, 1), np.nan)
    sys_ix = {s: i for i, s in enumerate(ds["system"].values)}
    item_ix = {s: i for i, s in enumerate(ds["item"].values)}
    for n in range(N):
        score[sys_ix[data_.system[n]], item_ix[data_.item[n]], :, 0] = x[n]
    ds = ds.assign(score=(("system", "item", "metric", "run"), score))
    return ds, mean, x, e


def test_score_moments_are_the_draws_mean_and_covariance_in_the_datas_trait_order():
    ds, mean, _, _ = _data()
    fit = _fake_fit(ds, mean, trait_order=(1, 0))  # stored CON first
    jd = prepare(ds, MODEL, None, None, "first")
    got_mean, got_cov = score_moments(fit, jd)
    draws = fit.idata.posterior["factor_score"].values.reshape(-1, mean.shape[0], 2)
    np.testing.assert_allclose(got_mean, draws.mean(0)[:, ::-1], atol=1e-12)
    np.testing.assert_allclose(got_cov[7], np.cov(draws[:, 7, ::-1].T), atol=1e-12)
    np.testing.assert_allclose(got_mean, mean, atol=0.1)  # 800 draws of N(mean, V)


def test_conditional_draws_match_the_closed_form_posterior():
    """Reference prior p(a, b, s^2) ~ 1/s^2: the draws of (a, b) centre on least squares of
    x on [1, mean] (NumPy lstsq) and s^2 = b' V b + sigma^2 has mean RSS / (n - p - 2)."""
    _ds, mean, x, _ = _data()
    N, T = mean.shape
    S = 4000
    z = (x - x.mean(0)) / x.std(0, ddof=1)
    out = draw_metric_parameters(mean, np.broadcast_to(V, (N, T, T)), z, S, 5,
                                 ["m1", "m2", "m3"])
    X = np.column_stack([np.ones(N), mean])
    for j in range(3):
        gamma, rss, *_ = np.linalg.lstsq(X, z[:, j], rcond=None)
        se = np.sqrt(rss[0] / (N - T - 1) * np.diag(np.linalg.inv(X.T @ X)))
        draws = np.column_stack([out["intercept"][:, j], out["loading"][:, j]])
        assert np.all(np.abs(draws.mean(0) - gamma) < 4 * se / np.sqrt(S))
        np.testing.assert_allclose(draws.std(0), se, rtol=0.05)
        b = out["loading"][:, j]
        s2 = out["error_sd"][:, j] ** 2 + np.einsum("st,tu,su->s", b, V, b)
        assert abs(s2.mean() - rss[0] / (N - T - 1 - 2)) < 4 * s2.std() / np.sqrt(S)


def test_error_variance_draws_use_n_minus_p_degrees_of_freedom():
    """With no score uncertainty (no truncation) and 12 outputs, s^2 = sigma^2 is
    RSS / chi^2_{n-p}: its mean is RSS / (n - p - 2) (an off-by-one moves it by 17%)."""
    rng = np.random.default_rng(3)
    N, T, S = 12, 2, 40000
    mean = rng.standard_normal((N, T))
    x = (mean @ np.array([0.5, -0.3]) + rng.standard_normal(N))[:, None]
    out = draw_metric_parameters(mean, np.zeros((N, T, T)), x, S, 4, ["m"])
    X = np.column_stack([np.ones(N), mean])
    _, rss, *_ = np.linalg.lstsq(X, x[:, 0], rcond=None)
    s2 = out["error_sd"][:, 0] ** 2
    want = rss[0] / (N - T - 1 - 2)
    assert abs(s2.mean() / want - 1) < 4 * s2.std() / s2.mean() / np.sqrt(S)
    assert out["redrawn"][0] == 0


def test_missing_scores_regress_each_metric_on_its_own_outputs():
    _ds, mean, x, _ = _data()
    N, T = mean.shape
    z = (x - x.mean(0)) / x.std(0, ddof=1)
    z[::7, 1] = np.nan
    S = 3000
    out = draw_metric_parameters(mean, np.broadcast_to(V, (N, T, T)), z, S, 2,
                                 ["m1", "m2", "m3"])
    keep = np.isfinite(z[:, 1])
    X = np.column_stack([np.ones(keep.sum()), mean[keep]])
    gamma, rss, *_ = np.linalg.lstsq(X, z[keep, 1], rcond=None)
    se = np.sqrt(rss[0] / (keep.sum() - T - 1) * np.diag(np.linalg.inv(X.T @ X)))
    draws = np.column_stack([out["intercept"][:, 1], out["loading"][:, 1]])
    assert np.all(np.abs(draws.mean(0) - gamma) < 4 * se / np.sqrt(S))
    b = out["loading"][:, 1]
    s2 = out["error_sd"][:, 1] ** 2 + np.einsum("st,tu,su->s", b, V, b)
    want = rss[0] / (keep.sum() - T - 1 - 2)
    assert abs(s2.mean() - want) < 4 * s2.std() / np.sqrt(S)


def test_public_route_recovers_the_truth_without_attenuation():
    """b and sigma^2 are recovered from the posterior-mean scores (regression
    calibration); regressing on single draws of the scores instead attenuates b by about
    Var(mean) / (Var(mean) + V) (here 0.7 to 0.8), which the route must not do."""
    ds, mean, x, _ = _data()
    fit = _fake_fit(ds, mean)
    res = bm.metric_variance(ds, fit, estimator="modular", random_seed=4)
    tab = res.summary()
    assert {"validity_coefficient", "error_share", "error_variance", "r_squared",
            "trait_share", "specificity"} <= set(tab.index.get_level_values("estimand"))
    post = res.idata.posterior
    raw, sd_raw = (post["validity_raw"].mean(("chain", "draw")).values,
                   post["validity_raw"].std(("chain", "draw")).values)
    assert np.all(np.abs(raw - B) < 4 * sd_raw)  # N = 240: within 4 posterior sds
    ev, ev_sd = (post["error_variance"].mean(("chain", "draw")).values,
                 post["error_variance"].std(("chain", "draw")).values)
    assert np.all(np.abs(ev - SIGMA**2) < 4 * ev_sd)
    one_draw = fit.idata.posterior["factor_score"].values[0, 0]
    X = np.column_stack([np.ones(len(x)), one_draw])
    naive = np.linalg.lstsq(X, x, rcond=None)[0][1:].T
    assert np.abs(naive).sum() < 0.9 * np.abs(raw).sum()  # the attenuation avoided
    # standardized coefficients use the model-implied variance b' Psi b + sigma^2
    b, s = post["metric_loading"].values, post["error_sd"].values
    var = np.einsum("cdmt,tu,cdmu->cdm", b, PSI, b) + s**2
    np.testing.assert_allclose(post["validity_coefficient"].values,
                               b / np.sqrt(var)[..., None], rtol=1e-10)
    # same seed, same numbers; the probability is the share of draws
    again = bm.metric_variance(ds, fit, estimator="modular", random_seed=4).summary()
    np.testing.assert_allclose(again["mean"].values, tab["mean"].values, rtol=1e-12)
    beta = post["validity_coefficient"].sel(metric="metric01.COH")
    want = float((beta.sel(trait="coh") >= beta.sel(trait="con")).mean())
    assert abs(res.probability("metric01.COH", "coh", "con") - want) < 1e-12
    assert want > 0.99  # b = (0.8, 0.1)
    with pytest.raises(ValueError, match="metric 'nope'"):
        res.probability("nope", "coh", "con")


def fake_bayes_cfa_data():
    """Simulated data with metric scores and a stand-in Bayesian CFA of them (the report's
    fast test uses it)."""
    ds, mean, _, _ = _data()
    return ds, _fake_fit(ds, mean), PSI


def test_residual_correlations_have_a_unit_diagonal_even_where_a_variance_is_near_zero():
    """The diagonal is 1 by construction: the covariances are scaled by the drawn error sds,
    not by a moment variance that can fall below 0."""
    ds, mean, _, _ = _data()
    fit = _fake_fit(ds, mean)
    res = bm.metric_variance(ds, fit, estimator="modular", random_seed=2)
    corr, _, _ = res.residual_correlation_draws()
    np.testing.assert_allclose(np.diagonal(corr, axis1=2, axis2=3), 1.0, atol=0)
    assert np.all(np.abs(corr) <= 1.0)


def test_residual_correlations_remove_the_scores_uncertainty():
    """Errors of metrics 1 and 3 correlated 0.5: the posterior of their residual correlation
    centres on the realised errors' sample correlation (NumPy) within 0.1, closer than the
    plain residuals on the posterior-mean scores (B V B' left in)."""
    ds, mean, _x, e = _data(error_corr=0.5)
    fit = _fake_fit(ds, mean)
    res = bm.metric_variance(ds, fit, estimator="modular", random_seed=2)
    corr, names, n = res.residual_correlation_draws()
    assert names == [str(m) for m in ds["metric"].values] and n == e.shape[0]
    target = np.corrcoef(e.T)
    got = corr.mean((0, 1))
    assert abs(got[0, 2] - target[0, 2]) < 0.1 and abs(got[0, 1] - target[0, 1]) < 0.1
    np.testing.assert_allclose(np.diagonal(got), 1.0, atol=1e-9)
    post = res.idata.posterior
    a = post["metric_intercept"].mean(("chain", "draw")).values
    b = post["metric_loading"].mean(("chain", "draw")).values
    jd = prepare(ds, MODEL, None, None, "first")
    naive = np.corrcoef((jd.x - a - score_moments(fit, jd)[0] @ b.T).T)
    assert abs(naive[0, 2] - target[0, 2]) > abs(got[0, 2] - target[0, 2])
    table = bm.metric_residuals(ds, res, n_components=1).summary()
    row = table.loc[("residual_correlation", "", "metric01.COH", "metric03.COH")]
    assert abs(row["mean"] - got[0, 2]) < 1e-12


def test_modular_result_saves_and_loads_without_loss(tmp_path):
    ds, fit, _ = fake_bayes_cfa_data()
    res = bm.metric_variance(ds, fit, estimator="modular", random_seed=4)
    back = bm.load(res.save(tmp_path / "modular.nc"))
    assert type(back).__name__ == "ModularValidityResult"
    np.testing.assert_allclose(back.summary().to_numpy(dtype=float),
                               res.summary().to_numpy(dtype=float), rtol=1e-12)
    assert back.provenance["random_seed"] == 4
    assert abs(back.probability("metric03.COH", "coh", "con")
               - res.probability("metric03.COH", "coh", "con")) < 1e-12
    with pytest.raises(ValueError, match="saved and loaded"):
        back.residual_correlation_draws()


def test_a_metric_that_is_a_function_of_the_scores_is_refused_by_name():
    _, mean, _, _ = _data()
    N, T = mean.shape
    z = np.column_stack([mean[:, 0], mean[:, 1] + 0.3 * np.random.default_rng(0)
                         .standard_normal(N)])
    z = (z - z.mean(0)) / z.std(0, ddof=1)
    with pytest.raises(ValueError, match=r"metric 'exact\.m'"):
        draw_metric_parameters(mean, np.broadcast_to(V, (N, T, T)), z, 50, 0,
                               ["exact.m", "noisy.m"])


def test_modular_needs_a_bayesian_cfa_of_the_same_outputs():
    ds, fit, _ = fake_bayes_cfa_data()
    with pytest.raises(ValueError, match="Bayesian CFA"):
        bm.metric_variance(ds, bm.cfa(MODEL, ds), estimator="modular")
    with pytest.raises(ValueError, match="method_factors, errors and residuals"):
        bm.metric_variance(ds, fit, estimator="modular", errors="student_t")
    with pytest.raises(ValueError, match="method_factors, errors and residuals"):
        bm.metric_variance(ds, fit, estimator="modular", residuals="correlated")
    with pytest.raises(ValueError, match="sampling do"):
        bm.metric_variance(ds, fit, estimator="modular", sampling={"draws": 100})
    other = simulate_joint_validity(3, n_systems=6, n_traits=2, n_metrics=3)
    with pytest.raises(ValueError, match="other outputs"):
        bm.metric_variance(other, fit, estimator="modular")
    shuffled = fit.idata.posterior.assign_coords(
        system=("output", fit.idata.posterior["system"].values[::-1]))
    moved = types.SimpleNamespace(idata=az.InferenceData(posterior=shuffled), spec=fit.spec,
                                  provenance=fit.provenance, loo=fit.loo)
    with pytest.raises(ValueError, match=r"outputs \(system, item\) differ"):
        bm.metric_variance(ds, moved, estimator="modular")
    with pytest.raises(ValueError, match="estimator must be one of"):
        bm.metric_variance(ds, fit, estimator="cut")


def test_each_metric_regresses_on_its_own_outputs_average_score_covariance():
    """Sigma_n that changes from output to output, and missing scores where it is largest:
    sigma^2 = s^2 - b' Sigmabar b with Sigmabar averaged over the outputs the metric scored
    (the closed-form mean of s^2), and a metric's draws do not depend on the other metrics
    (its own random stream)."""
    _, mean, x, _ = _data()
    N, T = mean.shape
    rng = np.random.default_rng(8)
    scale = rng.uniform(0.3, 1.7, size=N)
    cov = scale[:, None, None] * V
    z = (x - x.mean(0)) / x.std(0, ddof=1)
    z[scale > 1.3, 0] = np.nan  # metric 1 misses the outputs with the widest scores
    S = 6000
    out = draw_metric_parameters(mean, cov, z, S, 9, ["m1", "m2", "m3"])
    keep = np.isfinite(z[:, 0])
    b, sd = out["loading"][:, 0], out["error_sd"][:, 0]
    s2 = sd**2 + np.einsum("st,tu,su->s", b, cov[keep].mean(0), b)
    X = np.column_stack([np.ones(keep.sum()), mean[keep]])
    _, rss, *_ = np.linalg.lstsq(X, z[keep, 0], rcond=None)
    want = rss[0] / (keep.sum() - T - 1 - 2)
    assert abs(s2.mean() - want) < 4 * s2.std() / np.sqrt(S)
    # the all-output average would be another number, beyond the Monte Carlo error
    wrong = sd**2 + np.einsum("st,tu,su->s", b, cov.mean(0), b)
    assert abs(wrong.mean() - want) > 8 * s2.std() / np.sqrt(S)
    alone = draw_metric_parameters(mean, cov, z[:, [0]], S, 9, ["m1"])
    np.testing.assert_allclose(alone["error_sd"][:, 0], sd, rtol=1e-12)


def test_truncated_draws_match_brute_force_rejection():
    """A metric whose error variance is small against b' V b: about half the first draws
    have sigma^2 <= 0. The kept draws of sigma^2 match brute-force rejection from the
    closed-form (untruncated) posterior (quantiles within Monte Carlo error), and the
    redraw count matches the rejection rate."""
    rng = np.random.default_rng(12)
    N, T, S = 60, 1, 8000
    mean = rng.standard_normal((N, T))
    Vbig = np.full((N, T, T), 0.5)
    traits = mean[:, 0] + np.sqrt(0.5) * rng.standard_normal(N)  # Berkson error, V = 0.5
    x = (0.9 * traits + 0.2 * rng.standard_normal(N))[:, None]
    out = draw_metric_parameters(mean, Vbig, x, S, 13, ["m"])
    X = np.column_stack([np.ones(N), mean])
    inv = np.linalg.inv(X.T @ X)
    g_hat = inv @ X.T @ x[:, 0]
    rss = float(np.sum((x[:, 0] - X @ g_hat) ** 2))
    ref = np.random.default_rng(99)
    s2 = rss / ref.chisquare(N - 2, size=200000)
    g = g_hat + np.sqrt(s2)[:, None] * (ref.standard_normal((200000, 2))
                                        @ np.linalg.cholesky(inv).T)
    e2 = s2 - 0.5 * g[:, 1] ** 2
    rate = float(np.mean(e2 <= 0))
    assert 0.1 < rate < 0.8  # the premise: truncation bites
    from scipy import stats

    got = out["error_sd"][:, 0] ** 2
    assert stats.ks_2samp(got, e2[e2 > 0]).pvalue > 1e-3
    assert stats.ks_2samp(out["loading"][:, 0, 0], g[e2 > 0, 1]).pvalue > 1e-3
    assert abs(out["redrawn"][0] / S - rate) < 4 * np.sqrt(rate * (1 - rate) / S)


def test_factor_correlations_are_read_in_the_datas_trait_order():
    """Three traits with unequal correlations, stored by the CFA in another order: the
    standardized coefficients use the data-order Psi (a 2 x 2 Psi cannot show this)."""
    ds = simulate_joint_validity(4, n_traits=3, n_metrics=3)
    model3 = "\n".join(f"{t.lower()} =~ " + " + ".join(f"Rater.{r}.{t}" for r in (1, 2, 3))
                        for t in ("COH", "CON", "FLU"))
    spec, data_, design = setup(model3, ds)
    N = design.n_rows
    psi = np.array([[1.0, 0.7, 0.1], [0.7, 1.0, 0.4], [0.1, 0.4, 1.0]])
    rng = np.random.default_rng(1)
    mean = rng.multivariate_normal(np.zeros(3), 0.7 * psi, size=N)
    order = [2, 0, 1]
    draws = mean + rng.multivariate_normal(np.zeros(3), 0.3 * psi, size=(CHAINS, DRAWS, N))
    names = [design.factors[k] for k in order]
    post = xr.Dataset({
        "factor_corr": (("chain", "draw", "trait", "trait2"),
                        np.broadcast_to(psi[np.ix_(order, order)],
                                        (CHAINS, DRAWS, 3, 3)).copy()),
        "factor_score": (("chain", "draw", "output", "trait"), draws[..., order])},
        coords={"chain": np.arange(CHAINS), "draw": np.arange(DRAWS), "trait": names,
                "trait2": names, "system": ("output", np.asarray(data_.system)),
                "item": ("output", np.asarray(data_.item))})
    fit = types.SimpleNamespace(idata=az.InferenceData(posterior=post), spec=spec,
                                provenance={"random_seed": 1}, loo=lambda: None)
    res = bm.metric_variance(ds, fit, estimator="modular", random_seed=3)
    p = res.idata.posterior
    assert [str(t) for t in p["trait"].values] == list(design.factors)
    b, s = p["metric_loading"].values, p["error_sd"].values
    var = np.einsum("cdmt,tu,cdmu->cdm", b, psi, b) + s**2
    np.testing.assert_allclose(p["validity_coefficient"].values,
                               b / np.sqrt(var)[..., None], rtol=1e-10)
    np.testing.assert_allclose(p["factor_corr"].values[0, 0], psi, atol=1e-12)


def test_score_draws_whose_chains_disagree_are_flagged():
    """One chain's score draws shifted: the check of the score draws (their projections on
    the metrics) fails, with a ConvergenceWarning and a note; the report's convergence line
    counts it."""
    from bayesmeta.convergence import ConvergenceWarning
    from bayesmeta.report._validity_section import posterior_convergence

    ds, mean, _, _ = _data()
    fit = _fake_fit(ds, mean)
    good = bm.metric_variance(ds, fit, estimator="modular", random_seed=1)
    assert good.idata.posterior.attrs["score_check_r_hat"] < 1.01
    shifted = fit.idata.posterior.copy(deep=True)
    jd = prepare(ds, MODEL, None, None, "first")
    # chain 0 moves each output's first trait along a direction the metrics see (a constant
    # shift would move intercepts only, which the check rightly ignores)
    vals = shifted["factor_score"].values
    vals[0, :, :, 0] += 0.3 * jd.x[:, 0]
    shifted["factor_score"] = (shifted["factor_score"].dims, vals)
    bad_fit = types.SimpleNamespace(idata=az.InferenceData(posterior=shifted), spec=fit.spec,
                                    provenance=fit.provenance, loo=fit.loo)
    with pytest.warns(ConvergenceWarning, match="factor-score draws"):
        bad = bm.metric_variance(ds, bad_fit, estimator="modular", random_seed=1)
    assert any("do not agree across chains" in n for n in bad.notes)
    _, ok = posterior_convergence(bad)
    assert not ok


def test_table_rows_whose_chains_disagree_are_flagged():
    """The table's own rows are checked too: factor-correlation draws whose chains
    disagree (the score draws fine) leave the trait shares and R^2 at R-hat far over 1.01,
    which a ConvergenceWarning and a note name; the fit with agreeing chains has neither."""
    from bayesmeta.convergence import ConvergenceWarning

    ds, mean, _, _ = _data()
    fit = _fake_fit(ds, mean)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        good = bm.metric_variance(ds, fit, estimator="modular", random_seed=1)
    assert not any("row(s) of the table" in n for n in good.notes)
    post = fit.idata.posterior.copy(deep=True)
    corr = post["factor_corr"].values
    rng = np.random.default_rng(4)
    for c, rho in enumerate((0.3, 0.7)):  # chain 0 near 0.3, chain 1 near 0.7
        r = rho + rng.normal(0, 0.02, corr.shape[1])
        corr[c, :, 0, 1] = corr[c, :, 1, 0] = r
    post["factor_corr"] = (post["factor_corr"].dims, corr)
    bad_fit = types.SimpleNamespace(idata=az.InferenceData(posterior=post), spec=fit.spec,
                                    provenance=fit.provenance, loo=fit.loo)
    with pytest.warns(ConvergenceWarning, match=r"row\(s\) of the table miss"):
        bad = bm.metric_variance(ds, bad_fit, estimator="modular", random_seed=1)
    note = next(n for n in bad.notes if "row(s) of the table" in n)
    assert bad.summary()["r_hat"].max() > 1.1
    assert f"{bad.summary()['r_hat'].max():.3f}" in note
