"""The modular (cut) metric-validity route, ``bm.metric_variance(data, bayes_cfa,
estimator="modular")`` (``bayesmeta.validity.modular``).

Fast tier: a Bayesian CFA result is stood in for by a posterior whose parameters are
fixed at known values and whose score draws come from the CFA's own
``draw_factor_scores``; the route's draws are then checked against closed forms of the
conditional posterior (least squares from NumPy, the scaled-inverse-chi-square mean).
The coverage study on data simulated from the joint model is
``benchmarks/recovery_joint_validity.py --modular``.
"""

from __future__ import annotations

import types

import arviz as az
import numpy as np
import pytest
import xarray as xr

import bayesmeta as bm
from bayesmeta.validity._cfa_derived import draw_factor_scores, score_noise
from bayesmeta.validity._cfa_setup import setup
from bayesmeta.validity.joint_simulate import simulate_joint_validity
from bayesmeta.validity.modular import conditional_means, draw_metric_parameters

TRAITS = ("COH", "CON")
MODEL = "\n".join(f"{t.lower()} =~ " + " + ".join(f"Rater.{r}.{t}" for r in (1, 2, 3))
                  for t in TRAITS)
CHAINS, DRAWS, SEED = 2, 300, 11


def _fake_fit(ds: xr.Dataset, mean: np.ndarray, *, corr: float = 0.5,
              loading: float = 0.8, seed: int = SEED):
    """A stand-in for ``bm.cfa(MODEL, ds, estimator="bayes")``: loadings and factor
    correlation fixed in every draw, conditional trait means ``mean`` (N, T), score draws
    from the CFA's own ``draw_factor_scores`` with seed ``seed``."""
    spec, data_, design = setup(MODEL, ds)
    T, J = design.n_factors, design.n_indicators
    psi = np.array([[1.0, corr], [corr, 1.0]])
    post = xr.Dataset({
        "loading_std": (("chain", "draw", "indicator"), np.full((CHAINS, DRAWS, J), loading)),
        "factor_corr": (("chain", "draw", "trait", "trait2"),
                        np.broadcast_to(psi, (CHAINS, DRAWS, T, T)).copy()),
        "factor_score_mean": (("chain", "draw", "output", "trait"),
                              np.broadcast_to(mean, (CHAINS, DRAWS, *mean.shape)).copy())},
        coords={"chain": np.arange(CHAINS), "draw": np.arange(DRAWS),
                "indicator": list(design.indicators), "trait": list(design.factors),
                "trait2": list(design.factors),
                "system": ("output", np.asarray(data_.system)),
                "item": ("output", np.asarray(data_.item))},
        attrs={"parameterization": "augmented"})
    idata = az.InferenceData(posterior=post)
    draw_factor_scores(idata, design, seed)
    fit = types.SimpleNamespace(idata=idata, spec=spec, provenance={"random_seed": seed},
                                loo=lambda: None)
    return fit, design, psi


def _data_with_scores(seed: int = 3, error_corr: float = 0.0):
    """Simulated ratings (two traits), conditional trait means drawn as the CFA would imply,
    and three metrics generated from traits = means + N(0, V): b, sigma known."""
    ds = simulate_joint_validity(seed, n_traits=2, n_metrics=3)
    rng = np.random.default_rng(seed)
    _, _, design = setup(MODEL, ds)
    N = design.n_rows
    fit0, _, psi = _fake_fit(ds, np.zeros((N, 2)))
    _, cond = score_noise(fit0.idata.posterior, design, SEED)
    V = cond[0]
    mean = rng.multivariate_normal(np.zeros(2), psi - V, size=N)
    traits = mean + rng.multivariate_normal(np.zeros(2), V, size=N)
    B = np.array([[0.8, 0.1], [0.0, 0.6], [0.4, 0.4]])
    sigma = np.array([0.5, 0.8, 0.3])
    R = np.eye(3)
    R[0, 2] = R[2, 0] = error_corr
    e = rng.multivariate_normal(np.zeros(3), R, size=N) * sigma
    x = 2.0 + traits @ B.T + e
    return ds, design, mean, V, x, e


def test_score_noise_gives_back_the_conditional_means_the_draws_came_from():
    ds, design, mean, V, _, _ = _data_with_scores()
    fit, _, _ = _fake_fit(ds, mean)
    from bayesmeta.validity._joint_build import prepare

    jd = prepare(ds, MODEL, None, None, "first")
    got, cond = conditional_means(fit, jd)
    np.testing.assert_allclose(got, np.broadcast_to(mean, got.shape), atol=1e-10)
    np.testing.assert_allclose(cond[0], V, atol=1e-12)
    # V = Psi - Psi Lam' Sigma^-1 Lam Psi, by hand for one trait block
    lam = np.zeros((design.n_indicators, 2))
    lam[np.arange(design.n_indicators), design.factor_of] = 0.8
    psi = np.array([[1.0, 0.5], [0.5, 1.0]])
    sig = lam @ psi @ lam.T + np.diag(1 - 0.8**2 * np.ones(design.n_indicators))
    np.testing.assert_allclose(V, psi - psi @ lam.T @ np.linalg.solve(sig, lam @ psi),
                               atol=1e-10)


def test_conditional_draws_match_the_closed_form_posterior():
    """Reference prior p(a, b, s^2) ~ 1/s^2: the draws of (a, b) centre on least squares of
    x on [1, m] (NumPy lstsq) and s^2 = b'Vb + sigma^2 has mean RSS / (n - p - 2)."""
    _, _, mean, V, x, _ = _data_with_scores()
    N, T = mean.shape
    S = 4000
    rng = np.random.default_rng(5)
    z = (x - x.mean(0)) / x.std(0, ddof=1)
    out = draw_metric_parameters(np.broadcast_to(mean, (S, N, T)),
                                 np.broadcast_to(V, (S, T, T)), z, rng, ["m1", "m2", "m3"])
    X = np.column_stack([np.ones(N), mean])
    for j in range(3):
        gamma, rss, *_ = np.linalg.lstsq(X, z[:, j], rcond=None)
        se = np.sqrt(rss[0] / (N - T - 1) * np.diag(np.linalg.inv(X.T @ X)))
        draws = np.column_stack([out["intercept"][:, j], out["loading"][:, j]])
        # posterior means within 4 Monte Carlo SEs of least squares; sds within 5%
        assert np.all(np.abs(draws.mean(0) - gamma) < 4 * se / np.sqrt(S))
        np.testing.assert_allclose(draws.std(0), se, rtol=0.05)
        b = out["loading"][:, j]
        s2 = out["error_sd"][:, j] ** 2 + np.einsum("st,tu,su->s", b, V, b)
        expect = rss[0] / (N - T - 1 - 2)
        assert abs(s2.mean() - expect) < 4 * s2.std() / np.sqrt(S)


def test_missing_scores_regress_each_metric_on_its_own_outputs():
    _, _, mean, V, x, _ = _data_with_scores()
    N, T = mean.shape
    z = (x - x.mean(0)) / x.std(0, ddof=1)
    z[::7, 1] = np.nan
    S = 3000
    out = draw_metric_parameters(np.broadcast_to(mean, (S, N, T)),
                                 np.broadcast_to(V, (S, T, T)), z,
                                 np.random.default_rng(2), ["m1", "m2", "m3"])
    keep = np.isfinite(z[:, 1])
    X = np.column_stack([np.ones(keep.sum()), mean[keep]])
    gamma, rss, *_ = np.linalg.lstsq(X, z[keep, 1], rcond=None)
    se = np.sqrt(rss[0] / (keep.sum() - T - 1) * np.diag(np.linalg.inv(X.T @ X)))
    draws = np.column_stack([out["intercept"][:, 1], out["loading"][:, 1]])
    assert np.all(np.abs(draws.mean(0) - gamma) < 4 * se / np.sqrt(S))


def fake_bayes_cfa_data(error_corr: float = 0.0, with_errors: bool = False):
    """Simulated ratings with metric scores generated from known b and sigma, and a stand-in
    Bayesian CFA of them (also used by the report's fast test)."""
    ds, design, mean, _, x, e = _data_with_scores(error_corr=error_corr)
    fit, _, psi = _fake_fit(ds, mean)
    # the metric scores on the dataset's (system, item) rows
    _, data_, _ = setup(MODEL, ds)
    score = np.full((ds.sizes["system"], ds.sizes["item"], 3, 1), np.nan)
    sys_ix = {s: i for i, s in enumerate(ds["system"].values)}
    item_ix = {s: i for i, s in enumerate(ds["item"].values)}
    for n in range(design.n_rows):
        score[sys_ix[data_.system[n]], item_ix[data_.item[n]], :, 0] = x[n]
    out = ds.assign(score=(("system", "item", "metric", "run"), score)), fit, psi
    return (*out, e) if with_errors else out


def test_public_route_recovers_the_truth_and_reports_the_joint_routes_rows():
    ds, fit, psi = fake_bayes_cfa_data()
    res = bm.metric_variance(ds, fit, estimator="modular", random_seed=4)
    tab = res.summary()
    assert {"validity_coefficient", "error_share", "error_variance", "r_squared",
            "trait_share", "specificity"} <= set(tab.index.get_level_values("estimand"))
    assert tab["r_hat"].max() < 1.01
    B = np.array([[0.8, 0.1], [0.0, 0.6], [0.4, 0.4]])
    sigma = np.array([0.5, 0.8, 0.3])
    post = res.idata.posterior
    raw = post["validity_raw"].mean(("chain", "draw")).values
    sd_raw = post["validity_raw"].std(("chain", "draw")).values
    assert np.all(np.abs(raw - B) < 4 * sd_raw)  # N = 240: within 4 posterior sds
    ev = post["error_variance"].mean(("chain", "draw")).values
    ev_sd = post["error_variance"].std(("chain", "draw")).values
    assert np.all(np.abs(ev - sigma**2) < 4 * ev_sd)
    # standardized coefficients use the model-implied variance b' Psi b + sigma^2
    b = post["metric_loading"].values
    s = post["error_sd"].values
    var = np.einsum("cdmt,tu,cdmu->cdm", b, psi, b) + s**2
    np.testing.assert_allclose(post["validity_coefficient"].values,
                               b / np.sqrt(var)[..., None], rtol=1e-10)
    # same seed, same numbers
    again = bm.metric_variance(ds, fit, estimator="modular", random_seed=4).summary()
    np.testing.assert_allclose(again["mean"].values, tab["mean"].values, rtol=1e-12)
    # P(b on coh >= b on con) is the share of draws where it holds
    beta = post["validity_coefficient"].sel(metric="metric01.COH")
    want = float((beta.sel(trait="coh") >= beta.sel(trait="con")).mean())
    assert abs(res.probability("metric01.COH", "coh", "con") - want) < 1e-12
    assert res.probability("metric01.COH", "coh", "con") > 0.99  # b = (0.8, 0.1)
    with pytest.raises(ValueError, match="metric 'nope'"):
        res.probability("nope", "coh", "con")


def test_residual_correlations_remove_the_traits_uncertainty():
    """Errors of metrics 1 and 3 correlated 0.5: the posterior of their residual correlation
    centres on the realised errors' sample correlation (NumPy) within 0.1, where the plain
    residuals on the conditional means (B V B' left in) are biased by more than 0.1."""
    ds, fit, _, e = fake_bayes_cfa_data(error_corr=0.5, with_errors=True)
    res = bm.metric_variance(ds, fit, estimator="modular", random_seed=2)
    corr, names, n = res.residual_correlation_draws()
    assert names == [str(m) for m in ds["metric"].values] and n == e.shape[0]
    target = np.corrcoef(e.T)
    got = corr.mean((0, 1))
    assert abs(got[0, 2] - target[0, 2]) < 0.1 and abs(got[0, 1] - target[0, 1]) < 0.1
    np.testing.assert_allclose(np.diagonal(got), 1.0, atol=1e-9)
    # without the correction the shared trait uncertainty inflates the correlation
    post = res.idata.posterior
    jd, cfa = res._jd, res._cfa
    from bayesmeta.validity.modular import conditional_means

    mean, _ = conditional_means(cfa, jd)
    a = post["metric_intercept"].mean(("chain", "draw")).values
    b = post["metric_loading"].mean(("chain", "draw")).values
    r = jd.x - a - mean[0, 0] @ b.T
    naive = np.corrcoef(r.T)
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


def test_a_metric_that_is_a_function_of_the_traits_means_is_refused_by_name():
    _, _, mean, V, _, _ = _data_with_scores()
    N, T = mean.shape
    z = np.column_stack([mean[:, 0], mean[:, 1] + 0.3 * np.random.default_rng(0)
                         .standard_normal(N)])
    z = (z - z.mean(0)) / z.std(0, ddof=1)
    with pytest.raises(ValueError, match=r"exact\.m"):
        draw_metric_parameters(np.broadcast_to(mean, (50, N, T)),
                               np.broadcast_to(V, (50, T, T)), z,
                               np.random.default_rng(0), ["exact.m", "noisy.m"])


def test_modular_needs_a_bayesian_cfa_of_the_same_outputs():
    ds = simulate_joint_validity(3, n_traits=2, n_metrics=3)
    with pytest.raises(ValueError, match="Bayesian CFA"):
        bm.metric_variance(ds, bm.cfa(MODEL, ds), estimator="modular")
    with pytest.raises(ValueError, match="method_factors and errors"):
        bm.metric_variance(ds, MODEL, estimator="modular", errors="student_t")
    _, _, design = setup(MODEL, ds)
    fit, _, _ = _fake_fit(ds, np.zeros((design.n_rows, 2)))
    other = simulate_joint_validity(3, n_systems=6, n_traits=2, n_metrics=3)
    with pytest.raises(ValueError, match="other outputs"):
        bm.metric_variance(other, fit, estimator="modular")
    fit.idata.posterior.attrs["parameterization"] = "polar"
    with pytest.raises(ValueError, match="augmented"):
        bm.metric_variance(ds, fit, estimator="modular")
    with pytest.raises(ValueError, match="estimator must be one of"):
        bm.metric_variance(ds, fit, estimator="cut")


def test_each_draw_gets_its_own_means_and_covariance_in_the_fits_layout():
    """Loadings, correlations and conditional means that change from draw to draw, a
    posterior stored draw-major, and a model whose factor is split over two lines (the
    fit's indicator order differs from the order rebuilt from its syntax): every draw's
    means and covariance come back, in the data's trait order."""
    ds = simulate_joint_validity(3, n_traits=2, n_metrics=3)
    split = ("coh =~ Rater.1.COH + Rater.2.COH\ncon =~ Rater.1.CON + Rater.2.CON + "
             "Rater.3.CON\ncoh =~ Rater.3.COH")
    _, data_, design = setup(split, ds)
    C, D, T, J, N = 3, 7, 2, design.n_indicators, design.n_rows
    rng = np.random.default_rng(0)
    lstd = rng.uniform(0.5, 0.9, size=(C, D, J))
    rho = rng.uniform(0.1, 0.7, size=(C, D))
    psi = np.stack([np.stack([np.ones((C, D)), rho], -1), np.stack([rho, np.ones((C, D))],
                                                                   -1)], -2)
    mean = rng.standard_normal((C, D, N, T))
    post = xr.Dataset({
        "loading_std": (("chain", "draw", "indicator"), lstd),
        "factor_corr": (("chain", "draw", "trait", "trait2"), psi),
        "factor_score_mean": (("chain", "draw", "output", "trait"), mean)},
        coords={"chain": np.arange(C), "draw": np.arange(D),
                "indicator": list(design.indicators), "trait": list(design.factors),
                "trait2": list(design.factors),
                "system": ("output", np.asarray(data_.system)),
                "item": ("output", np.asarray(data_.item))},
        attrs={"parameterization": "augmented"})
    idata = az.InferenceData(posterior=post)
    draw_factor_scores(idata, design, SEED)
    idata.posterior = idata.posterior.transpose("draw", "chain", "trait", "output", ...)
    grouped = ("coh =~ Rater.1.COH + Rater.2.COH + Rater.3.COH ; con =~ Rater.1.CON + "
               "Rater.2.CON + Rater.3.CON")
    fit = types.SimpleNamespace(idata=idata, info={"model": grouped},
                                provenance={"random_seed": SEED}, loo=lambda: None)
    from bayesmeta.validity._joint_build import prepare

    jd = prepare(ds, fit, None, None, "first")
    assert list(jd.design.indicators) != list(design.indicators)  # the premise
    got, cond = conditional_means(fit, jd)
    np.testing.assert_allclose(got, mean, atol=1e-10)
    for c, d in ((0, 0), (1, 4), (2, 6)):
        lam = np.zeros((J, T))
        lam[np.arange(J), design.factor_of] = lstd[c, d]
        p = psi[c, d]
        sig = lam @ p @ lam.T
        sig[np.diag_indices(J)] = 1.0
        want = p - p @ lam.T @ np.linalg.solve(sig, lam @ p)
        np.testing.assert_allclose(cond[c * D + d], want, atol=1e-10)
    # draws thinned after the fit: their means cannot be traced back, and it says so
    thin = types.SimpleNamespace(idata=az.InferenceData(
        posterior=idata.posterior.isel(draw=slice(0, None, 2))), info=fit.info,
        provenance=fit.provenance, loo=fit.loo)
    with pytest.raises(ValueError, match="thinned"):
        conditional_means(thin, jd)


def test_error_variance_draws_use_n_minus_p_degrees_of_freedom():
    """With V = 0 (no truncation) and 12 outputs, s^2 = sigma^2 is RSS / chi^2_{n-p}: its
    mean is RSS / (n - p - 2) (an off-by-one in the degrees of freedom moves it by 17%)."""
    rng = np.random.default_rng(3)
    N, T, S = 12, 2, 40000
    mean = rng.standard_normal((N, T))
    x = (mean @ np.array([0.5, -0.3]) + rng.standard_normal(N))[:, None]
    out = draw_metric_parameters(np.broadcast_to(mean, (S, N, T)), np.zeros((S, T, T)), x,
                                 np.random.default_rng(4), ["m"])
    X = np.column_stack([np.ones(N), mean])
    _, rss, *_ = np.linalg.lstsq(X, x[:, 0], rcond=None)
    s2 = out["error_sd"][:, 0] ** 2
    assert abs(s2.mean() / (rss[0] / (N - T - 1 - 2)) - 1) < 4 * s2.std() / s2.mean() / np.sqrt(S)
    assert out["redrawn"][0] == 0
