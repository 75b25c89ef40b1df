"""Tests of the hierarchical bivariate correlation model (paper 001, App. C).

Tiers (style.md, rule 9): structure (the model builds, dims and coords are right, the
log-density is finite and equals a brute-force reference; no sampling), one small seeded
fast-mode fit, and slow parameter-recovery / SummEval runs marked ``slow``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import xarray as xr
from scipy import stats

from bayesmeta.models import correlation as C


def _sim(n_metrics: int = 3, n_systems: int = 6, n_items: int = 25, seed: int = 0,
         **truth: float) -> tuple[xr.Dataset, xr.Dataset]:
    params = C.sample_prior(n_metrics, random_seed=seed)
    for k, v in truth.items():
        params[k] = ("metric", np.full(n_metrics, v))
    return params, C.simulate_correlation_data(params, n_systems=n_systems, n_items=n_items,
                                               random_seed=seed + 1)


def _evaluate(model, var, values: dict[str, np.ndarray]) -> np.ndarray:
    """Value of a model expression at constrained parameter values (no C compilation)."""
    (out,) = model.replace_rvs_by_values([var])
    fn = model.compile_fn(out, inputs=model.value_vars, on_unused_input="ignore",
                          mode="FAST_COMPILE")
    return np.asarray(fn(_point(model, values)))


def _point(model, values: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Unconstrained point (value-variable names) from constrained values."""
    point = {}
    for vv in model.value_vars:
        rv = model.values_to_rvs[vv]
        tr = model.rvs_to_transforms.get(rv)
        val = np.asarray(values[rv.name], dtype=float)
        point[vv.name] = (tr.forward(val, *rv.owner.inputs).eval() if tr is not None else val)
    return point


# ============================================================================ no PyMC
def test_simulator_shapes_and_truth():
    params, sim = _sim(n_metrics=4, n_systems=5, n_items=30)
    assert sim["score"].dims == ("system", "item", "metric", "run")
    assert dict(sim["human"].sizes) == {"metric": 4, "system": 5, "item": 30}
    assert sim["r"].dims == ("metric", "system")
    assert ((sim["r"] > -1) & (sim["r"] < 1)).all()
    # leading sample dim from parameter draws broadcasts through
    draws = params.expand_dims(sample=3)
    many = C.simulate_correlation_data(draws, n_systems=5, n_items=30, random_seed=1)
    assert many["score"].dims == ("sample", "system", "item", "metric", "run")


def test_simulator_reproduces_correlations_in_large_samples():
    # one metric, many items: within-system and system-level correlations are recovered
    params = C.sample_prior(1, random_seed=3)
    params["r_mu"] = ("metric", [0.5])
    params["r_sigma"] = ("metric", [0.1])
    params["rho"] = ("metric", [0.8])
    sim = C.simulate_correlation_data(params, n_systems=400, n_items=2000, random_seed=4)
    x = sim["score"].isel(run=0).transpose("metric", "system", "item").values
    cl = C.classical_correlations(x, sim["human"].values)
    true_r = sim["r"].values[0]
    # sampling SD of one r with n = 2000 is about (1 - r^2) / sqrt(2000) < 0.023
    assert np.abs(cl["within"][0] - true_r).max() < 0.1
    # the population mean of r is E[TN(0.5, 0.1)] = 0.5 (truncation negligible)
    assert abs(true_r.mean() - 0.5) < 0.02  # SD of the mean of 400 draws: 0.005
    # correlation of true system means: 400 systems, SD about 0.018
    a, b = sim["a"].values[0], sim["b"].values[0]
    assert abs(np.corrcoef(a, b)[0, 1] - 0.8) < 0.08


def test_classical_correlations_match_scipy():
    rng = np.random.default_rng(5)
    x = rng.normal(size=(2, 6, 15))
    y = x[0] * 0.5 + rng.normal(size=(6, 15))
    x[1, 2, 3] = np.nan
    cl = C.classical_correlations(x, y)
    for m in range(2):
        rs = []
        for s in range(6):
            ok = ~np.isnan(x[m, s])
            rs.append(stats.pearsonr(x[m, s, ok], y[s, ok])[0])
        assert cl["item_level"][m] == pytest.approx(np.mean(rs), rel=1e-12)
        assert cl["item_level_sd"][m] == pytest.approx(np.std(rs, ddof=1), rel=1e-12)
        sys_r = stats.pearsonr(np.nanmean(x[m], axis=1), y.mean(axis=1))[0]
        assert cl["system_level"][m] == pytest.approx(sys_r, rel=1e-12)
    # Fisher-z interval, n = 6 systems
    z = np.arctanh(cl["system_level"][0])
    half = stats.norm.ppf(0.97) / np.sqrt(3)
    assert cl["system_low"][0] == pytest.approx(np.tanh(z - half), rel=1e-12)


def test_sufficient_stats_rejects_too_few_items():
    x = np.random.default_rng(0).normal(size=(1, 3, 5))
    y = np.random.default_rng(1).normal(size=(3, 5))
    x[0, 1, :3] = np.nan
    with pytest.raises(ValueError, match="system #1 has 2 item"):
        C.sufficient_stats(x, y)


# ============================================================================ structure
@pytest.fixture(scope="module")
def pymc():
    return pytest.importorskip("pymc")


@pytest.mark.parametrize("centered", [True, False])
def test_model_dims_and_finite_logp(pymc, centered):
    model = C.build_model(3, 4, centered=centered)
    assert model.coords["metric"] == (0, 1, 2)
    assert model.coords["system"] == (0, 1, 2, 3)
    dims = model.named_vars_to_dims
    for name in C.PARAMETERS:
        assert dims[name] == ("metric",), name
    assert dims["r"] == ("metric", "system")
    assert dims["loglik"] == ("metric", "system")
    _, sim = _sim(n_metrics=3, n_systems=4, n_items=10)
    st = C.sufficient_stats(sim["score"].isel(run=0).transpose("metric", "system",
                                                                  "item").values,
                            sim["human"].values)
    with model:
        pymc.set_data(st.model_data())
    vals = {"mu_metric": [0.1] * 3, "mu_human": [-0.2] * 3, "tau_metric": [0.5] * 3,
            "tau_human": [0.6] * 3, "sigma_metric": [0.9] * 3, "sigma_human": [0.8] * 3,
            "rho": [0.3] * 3, "r_mu": [0.2] * 3, "r_sigma": [0.1] * 3,
            ("r" if centered else "r_unit"): np.full((3, 4), 0.4)}
    ip = _point(model, vals)
    logp = model.compile_logp(mode="FAST_COMPILE")(ip)
    grad = model.compile_dlogp(mode="FAST_COMPILE")(ip)
    assert np.isfinite(logp) and np.isfinite(grad).all()
    assert grad.size == 7 * 3 + 2 * 3 + 3 * 4  # 9 per metric + one r per (metric, system)


def test_loglik_equals_bruteforce_marginal_density(pymc):
    """The closed-form likelihood (system means integrated out) equals the density of the
    2n-vector of one system's scores, N(1 (x) mu, I_n (x) Sigma + J_n (x) T)."""
    rng = np.random.default_rng(11)
    n_items, S = 5, 3
    x = rng.normal(size=(1, S, n_items))
    y = 0.3 * x[0] + rng.normal(size=(S, n_items))
    st = C.sufficient_stats(x, y)
    model = C.build_model(1, S, centered=True)
    with model:
        pymc.set_data(st.model_data())
    vals = {"mu_metric": [0.2], "mu_human": [-0.1], "tau_metric": [0.7], "tau_human": [0.4],
            "sigma_metric": [0.9], "sigma_human": [1.1], "rho": [0.6], "r_mu": [0.3],
            "r_sigma": [0.2], "r": [[0.1, 0.5, -0.2]]}
    got = _evaluate(model, model["loglik"], vals)[0]
    zx = (x[0] - st.center[0, 0]) / st.scale[0, 0]
    zy = (y - st.center[0, 1]) / st.scale[0, 1]
    T = np.array([[0.49, 0.6 * 0.7 * 0.4], [0.6 * 0.7 * 0.4, 0.16]])
    for s, r in enumerate(vals["r"][0]):
        sig = np.array([[0.81, r * 0.9 * 1.1], [r * 0.9 * 1.1, 1.21]])
        cov = np.kron(np.eye(n_items), sig) + np.kron(np.ones((n_items, n_items)), T)
        v = np.column_stack([zx[s], zy[s]]).ravel()
        ref = stats.multivariate_normal(np.tile([0.2, -0.1], n_items), cov).logpdf(v)
        assert got[s] == pytest.approx(ref, rel=1e-10)


def test_centered_prior_of_r_is_truncated_normal(pymc):
    model = C.build_model(1, 3, centered=True)
    vals = {"mu_metric": [0.0], "mu_human": [0.0], "tau_metric": [1.0], "tau_human": [1.0],
            "sigma_metric": [1.0], "sigma_human": [1.0], "rho": [0.0], "r_mu": [0.7],
            "r_sigma": [0.3], "r": [[0.1, 0.9, -0.5]]}
    got = _evaluate(model, model["r_prior"], vals)[0]
    ref = stats.truncnorm.logpdf(vals["r"][0], (-1 - 0.7) / 0.3, (1 - 0.7) / 0.3, 0.7, 0.3)
    # the potential is the TN density relative to the Uniform(-1, 1) base
    np.testing.assert_allclose(got + np.log(0.5), ref, rtol=1e-10)


def test_noncentered_r_is_truncated_normal_quantile(pymc):
    model = C.build_model(1, 4, centered=False)
    u = np.array([[0.001, 0.3, 0.8, 0.999]])
    vals = {"mu_metric": [0.0], "mu_human": [0.0], "tau_metric": [1.0], "tau_human": [1.0],
            "sigma_metric": [1.0], "sigma_human": [1.0], "rho": [0.0], "r_mu": [0.85],
            "r_sigma": [0.1], "r_unit": u}
    got = _evaluate(model, model["r"], vals)
    ref = stats.truncnorm.ppf(u, (-1 - 0.85) / 0.1, (1 - 0.85) / 0.1, 0.85, 0.1)
    # pytensor's erfcinv near 2 (u -> 0) is accurate to about 1e-9 relative
    np.testing.assert_allclose(got, ref, rtol=1e-8)


def test_input_errors():
    _, sim = _sim()
    with pytest.raises(ValueError, match="human must have dims"):
        C.fit_correlation_model(sim, human=sim["human"].rename(item="x"))
    with pytest.raises(ValueError, match="no 'rating'"):
        C.fit_correlation_model(sim)
    with pytest.raises(ValueError, match="unknown metric"):
        C.fit_correlation_model(sim, human=sim["human"], metrics=["nope"])
    with pytest.raises(ValueError, match="ci_prob"):
        C.fit_correlation_model(sim, human=sim["human"], ci_prob=1.5)


def test_human_selection(simulated):
    hum, label = C._human_scores(simulated, "COH", "mean")
    np.testing.assert_allclose(hum.values,
                               simulated["rating"].sel(trait="COH").mean("rater").values)
    rater = str(simulated["rater"].values[1])
    hum, label = C._human_scores(simulated, "COH", rater)
    assert rater in label
    with pytest.raises(ValueError, match="trait is required"):
        C._human_scores(simulated, None, "mean")
    with pytest.raises(ValueError, match="human must be 'mean'"):
        C._human_scores(simulated, "COH", "Nobody")


# ============================================================================ small fit
def test_fast_fit_small(pymc, tmp_path):
    import bayesmeta as bm

    _params, sim = _sim(n_metrics=2, n_systems=6, n_items=30, seed=2, r_mu=0.4, r_sigma=0.1,
                       rho=0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = C.fit_correlation_model(sim, human=sim["human"], fast=True, random_seed=7)
        again = C.fit_correlation_model(sim, human=sim["human"], fast=True, random_seed=7)
    tab = fit.summary()
    assert list(tab.index.names) == ["metric", "estimand"]
    assert set(tab.index.get_level_values("estimand")) == set(C.ESTIMANDS)
    for col in ("classical", "classical_low", "classical_high", "mean", "sd", "hdi_low",
                "hdi_high", "r_hat", "ess_bulk", "ess_tail", "measure"):
        assert col in tab.columns
    assert tab.attrs["ci_prob"] == 0.94
    # same seed, same draws
    np.testing.assert_array_equal(fit.idata.posterior["rho"].values,
                                  again.idata.posterior["rho"].values)
    # the classical column is the numpy item-/system-level Pearson
    x = sim["score"].isel(run=0).transpose("metric", "system", "item").values
    cl = C.classical_correlations(x, sim["human"].values)
    np.testing.assert_allclose(tab.xs("item_level", level="estimand")["classical"],
                               cl["item_level"], rtol=1e-12)
    post = fit.idata.posterior
    assert post["r"].dims == ("chain", "draw", "metric", "system")
    assert list(post["system"].values) == list(sim["system"].values)
    item = tab.xs("item_level", level="estimand")
    assert ((item["hdi_low"] <= item["mean"]) & (item["mean"] <= item["hdi_high"])).all()
    # posterior draws for the simulator: original scale, dims (sample, metric)
    draws = fit.parameter_draws(50, random_seed=0)
    assert draws["rho"].dims == ("sample", "metric") and draws.sizes["sample"] == 50
    assert draws["r"].dims == ("sample", "metric", "system")
    ppc = fit.simulate(3, random_seed=1)
    assert ppc["score"].dims == ("sample", "system", "item", "metric", "run")
    same = fit.simulate(2, same_systems=True, random_seed=1)
    all_r = fit.parameter_draws()["r"].values  # (sample, metric, system)
    for k in range(2):  # each dataset reuses the r of one posterior draw
        assert (all_r == same["r"].values[k]).all(axis=(1, 2)).any()
    assert "Item-level correlation" in str(fit)
    hook = fit.by_measure()
    assert list(hook.index.names) == ["metric", "measure"]
    assert set(hook.index.get_level_values("measure")) == {"item_pearson", "system_pearson"}
    assert len(fit.parameters()) == 2 * len(C.PARAMETERS)
    assert fit.within_system().shape[0] == 2 * 6
    # netCDF round trip
    path = fit.save(tmp_path / "corr.nc")
    back = bm.load(path)
    assert type(back) is C.CorrelationResult
    assert back.summary().equals(fit.summary())
    assert back.n_systems == 6 and back.n_items == 30
    xr.testing.assert_allclose(back.parameter_draws()["rho"], fit.parameter_draws()["rho"])


# ============================================================================ slow tier
@pytest.mark.slow
def test_recovery_coverage_prior_draws(pymc):
    """Simulation-based calibration: 60 datasets (parameters from the prior, 17 systems x
    100 items), all fitted in one model (the datasets are the `metric` dim). Each 94% HDI
    covers its truth in Binomial(60, 0.94) fashion; the limit 0.80 is the 0.1% quantile."""
    params = C.sample_prior(60, random_seed=2024)
    sim = C.simulate_correlation_data(params, n_systems=17, n_items=100, random_seed=2025)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = C.fit_correlation_model(sim, human=sim["human"], draws=500, tune=500, chains=2,
                                      random_seed=1)
    tab = fit.summary()
    truth = {"item_level": sim["r"].mean("system").values, "system_level": params["rho"].values,
             "item_level_sd": params["r_sigma"].values}
    for est, true in truth.items():
        sub = tab.xs(est, level="estimand")
        cover = ((sub["hdi_low"].values <= true) & (true <= sub["hdi_high"].values)).mean()
        assert cover >= 0.80, (est, cover)


@pytest.mark.slow
def test_summeval_fit_converges(summeval, pymc):
    """All 43 metrics against the experts' mean relevance, 4 chains x 2000 draws.

    With 4 x 1000 draws (seed 3) the worst R-hat was 1.010 and the worst tail ESS 308, both
    on ``r_sigma`` of metrics whose spread is near 0; the reported correlations converged."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = C.fit_correlation_model(summeval, trait="REL", draws=2000, random_seed=3)
    assert int(fit.idata.sample_stats["diverging"].sum()) == 0
    tab = fit.summary()
    main = tab[tab.index.get_level_values("estimand").isin(["item_level", "system_level"])]
    assert (main["r_hat"] <= 1.01).all() and (main["ess_bulk"] >= 400).all()
    assert (main["ess_tail"] >= 400).all()
    spread = tab.xs("item_level_sd", level="estimand")
    assert (spread["r_hat"] <= 1.02).all() and (spread["ess_tail"] >= 200).all()
    # posterior item-level mean close to the classical item-level Pearson (17 x 100 pairs;
    # the posterior SD is about 0.02)
    item = tab.xs("item_level", level="estimand")
    assert (abs(item["mean"] - item["classical"]) < 0.03).all()
