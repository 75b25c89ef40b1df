"""Tests of the hierarchical bivariate correlation model (paper 001, App. C).

Tiers (style.md, rule 9): structure (the model builds, dims and coords are right, the
log-density is finite and equals a brute-force reference; no sampling), one small seeded
fast-mode fit, and slow parameter-recovery / SummEval runs marked ``slow``.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from scipy import stats

import bayesmeta as bm
from bayesmeta.correlation import bivariate as B
from bayesmeta.correlation import model as C
from bayesmeta.simulate import simulate_correlation_study
from bayesmeta.summaries import check_table


def _sim(n_metrics: int = 3, n_systems: int = 6, n_items: int = 25, seed: int = 0,
         **truth: float) -> tuple[xr.Dataset, xr.Dataset]:
    params = C.sample_prior(n_metrics, random_seed=seed)
    for k, v in truth.items():
        params[k] = ("metric", np.full(n_metrics, v))
    return params, simulate_correlation_study(seed + 1, params=params, n_systems=n_systems,
                                              n_items=n_items)


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
    many = simulate_correlation_study(1, params=draws, n_systems=5, n_items=30)
    assert many["score"].dims == ("sample", "system", "item", "metric", "run")


def test_simulator_reproduces_correlations_in_large_samples():
    # one metric, many items: within-system and system-level correlations are recovered
    params = C.sample_prior(1, random_seed=3)
    params["r_mu"] = ("metric", [0.5])
    params["r_sigma"] = ("metric", [0.1])
    params["rho"] = ("metric", [0.8])
    sim = simulate_correlation_study(4, params=params, n_systems=400, n_items=2000)
    x = sim["score"].isel(run=0).transpose("metric", "system", "item").values
    cl = B.classical_correlations(x, sim["human"].values)
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
    cl = B.classical_correlations(x, y)
    for m in range(2):
        rs = []
        for s in range(6):
            ok = ~np.isnan(x[m, s])
            rs.append(stats.pearsonr(x[m, s, ok], y[s, ok])[0])
        assert cl["within_system_pearson"][m] == pytest.approx(np.mean(rs), rel=1e-12)
        assert cl["within_system_sd"][m] == pytest.approx(np.std(rs, ddof=1), rel=1e-12)
        sys_r = stats.pearsonr(np.nanmean(x[m], axis=1), y.mean(axis=1))[0]
        assert cl["system_pearson"][m] == pytest.approx(sys_r, rel=1e-12)
    # Fisher-z interval, n = 6 systems
    z = np.arctanh(cl["system_pearson"][0])
    half = stats.norm.ppf(0.97) / np.sqrt(3)
    assert cl["system_low"][0] == pytest.approx(np.tanh(z - half), rel=1e-12)


def test_sufficient_stats_rejects_too_few_items():
    x = np.random.default_rng(0).normal(size=(1, 3, 5))
    y = np.random.default_rng(1).normal(size=(3, 5))
    x[0, 1, :3] = np.nan
    with pytest.raises(ValueError, match="system #1 has 2 item"):
        B.sufficient_stats(x, y)


def test_human_must_be_scores_not_a_label(simulated):
    """``human="mean"`` / ``human="<rater>"`` of the previous release are refused: the
    mean over raters is the default and ``raters=`` picks raters."""
    for label in ("mean", "Rater.1"):
        with pytest.raises(TypeError, match="raters= picks raters"):
            C.fit_correlation_model(simulated, "COH", human=label)


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
    st = B.sufficient_stats(sim["score"].isel(run=0).transpose("metric", "system",
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
    st = B.sufficient_stats(x, y)
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
    with pytest.raises(ValueError, match="no human scores"):
        C.fit_correlation_model(sim)
    with pytest.raises(ValueError, match="'nope' is not a label of dim 'metric'"):
        C.fit_correlation_model(sim, human=sim["human"], metrics=["nope"])
    with pytest.raises(ValueError, match="ci_prob"):
        C.fit_correlation_model(sim, human=sim["human"], ci_prob=1.5)
    few = sim.copy(deep=True)
    few["score"][{"system": 1, "item": slice(0, 23)}] = np.nan
    with pytest.raises(ValueError, match="metric 'm0', system 's1' has 2 item"):
        C.fit_correlation_model(few, human=sim["human"])
    flat = sim.copy(deep=True)
    flat["score"][{"metric": 2}] = 1.5
    with pytest.raises(ValueError, match=r"metric is constant for metric.*'m2'"):
        C.fit_correlation_model(flat, human=sim["human"])
    with pytest.raises(ValueError, match="at least 3 systems"):
        C.fit_correlation_model(sim.isel(system=[0, 1]), human=sim["human"])


def test_human_selection(simulated):
    metrics = [str(m) for m in simulated["metric"].values]
    z, trait, _, _ = C._human_values(simulated, "COH", None, None, metrics)
    np.testing.assert_allclose(z, simulated["rating"].sel(trait="COH").mean("rater").values)
    assert trait == "COH"
    rater = str(simulated["rater"].values[1])
    z, _, label, _ = C._human_values(simulated, "COH", rater, None, metrics)
    np.testing.assert_allclose(z, simulated["rating"].sel(trait="COH", rater=rater).values)
    assert rater in label
    with pytest.raises(ValueError, match="give trait=, one of 'COH'"):
        C._human_values(simulated, None, None, None, metrics)
    with pytest.raises(ValueError, match="'Nobody' is not a label of dim 'rater'"):
        C._human_values(simulated, "COH", "Nobody", None, metrics)


# ============================================================================ simulator
def _fsum(da: xr.DataArray) -> float:
    return math.fsum(np.asarray(da.values, dtype=float).ravel())


def test_merged_simulator_reproduces_the_scalar_app_c_simulator():
    """Frozen values of the previous release's ``simulate.simulate_correlation_study``
    (commit 3f87cfa, same seeds): the merged simulator repeats them to 1e-12 (relative;
    BLAS and libm builds differ in the last bits, so no float is compared exactly)."""
    d = simulate_correlation_study(1, human_levels=13, metric_levels=(5,))
    np.testing.assert_allclose(d["score"].values[0, :4, :, 0], [
        [0.2567879183168386, 2.0], [0.5542068008133443, 2.0],
        [-0.016111848902420456, 1.0], [-1.1551903808592912, 1.0]], rtol=1e-12)
    np.testing.assert_array_equal(d["human"].values[2, :6], [10, 9, 6, 9, 7, 10])
    np.testing.assert_allclose(d["true_rho_item"].values[:4], [
        0.4565448348791905, 0.39020135923509847, 0.5441956207406905, 0.10423966316322106],
        rtol=1e-12)
    np.testing.assert_allclose(d["true_mean"].values[:2], [
        [-0.33696015346898417, -0.11676649101067368],
        [-0.04229672826906956, -0.39154286633903845]], rtol=1e-12)
    # correctly rounded sums, independent of the memory layout
    assert _fsum(d["score"]) == pytest.approx(2636.5143472412783, rel=1e-12)
    assert _fsum(d["human"]) == 14119.0
    # closed-form truths (the general formulas reduce to the old equal-SD ones)
    for key, old in (("true_global_pearson", 0.5265973051103596),
                     ("true_item_pearson", 0.3499988353743999),
                     ("true_within_system_pearson", 0.3499988353743999),
                     ("true_system_pearson", 0.92),
                     ("true_system_pearson_finite", 0.9075789678660797)):
        assert d.attrs[key] == pytest.approx(old, rel=1e-14), key
    assert d.attrs["random_seed"] == 1 and d["rating"].dims[2:] == ("rater", "trait")
    d2 = simulate_correlation_study(7, n_systems=5, n_items=12, rho_system=0.5, system_sd=0.4)
    np.testing.assert_allclose(d2["score"].values[1, :3, 0, 0], [
        -0.2656103893421159, 0.22458156110344873, 0.3863914925078283], rtol=1e-12)
    assert _fsum(d2["human"]) == pytest.approx(-8.6989745683096, rel=1e-12)


def test_merged_simulator_reproduces_the_parameter_draw_simulator():
    """Frozen values of the previous release's ``models.correlation.simulate_correlation_data``
    (commit 3f87cfa, same seeds), for prior draws and for draws with a leading ``sample`` dim
    and fixed within-system correlations."""
    p = C.sample_prior(3, random_seed=1)
    np.testing.assert_array_equal(p["rho"].values, [
        -0.11642155226835393, 0.33953360507851627, -0.40470626601009707])
    s = simulate_correlation_study(2, params=p, n_systems=5, n_items=20)
    np.testing.assert_array_equal(s["score"].values[0, :3, :, 0], [
        [2.9201739008842402, 2.56114483050031, 0.4680914182914695],
        [-0.3448186353817987, -0.38852163734112555, 0.4000175685766635],
        [3.882839424939357, 4.564289283893092, 0.30550415401849673]])
    np.testing.assert_array_equal(s["human"].values[:, 1, 2], [
        -1.6676189318972738, 1.0422837887088585, 0.6686181809778204])
    np.testing.assert_array_equal(s["r"].values[:, :2], [
        [0.6570874650277025, 0.6590621479570662], [0.558118882617285, 0.207638887898375],
        [0.5654512097974358, 0.5361450813463546]])
    assert _fsum(s["score"]) == 132.86634730713317
    assert _fsum(s["human"]) == 22.456439690529802
    assert _fsum(s["a"]) == 6.691128099915071
    assert _fsum(s["b"]) == 1.4062873269729113
    m = simulate_correlation_study(3, params=p.expand_dims(sample=2), n_systems=4, n_items=6,
                                   r=np.full((2, 3, 4), 0.3))
    assert m["score"].dims == ("sample", "system", "item", "metric", "run")
    assert _fsum(m["score"]) == 57.18956032583097
    assert _fsum(m["human"]) == 8.866252000088755


def test_simulator_truth_and_discretisation_with_parameter_sets():
    """Parameter sets get the scalar form's capabilities: closed-form truths per metric
    (the scalar form's values when the parameters coincide) and discretised metrics and
    human scores (levels 1..k, continuous draws unchanged)."""
    base = simulate_correlation_study(5, params=C.sample_prior(2, random_seed=4),
                                      n_systems=6, n_items=30)
    p = C.sample_prior(2, random_seed=4)
    d = simulate_correlation_study(5, params=p, n_systems=6, n_items=30, human_levels=7,
                                   metric_levels=(3, 9))
    assert [str(v) for v in d["metric"].values] == [
        "m0", "m0.levels_3", "m0.levels_9", "m1", "m1.levels_3", "m1.levels_9"]
    assert d["levels"].values.tolist() == [0, 3, 9, 0, 3, 9]
    np.testing.assert_array_equal(d["score"].sel(metric="m1").values,
                                  base["score"].sel(metric="m1").values)
    for k in (3, 9):
        vals = np.unique(d["score"].sel(metric=f"m0.levels_{k}").values)
        assert set(vals) <= set(range(1, k + 1)) and len(vals) > 1
    assert set(np.unique(d["human"].values)) <= set(range(1, 8))
    # the human of a discretised metric is its source metric's human
    np.testing.assert_array_equal(d["human"].sel(metric="m0.levels_3").values,
                                  d["human"].sel(metric="m0").values)
    same = {"mu_metric": [0.0], "mu_human": [0.0], "tau_metric": [0.67], "tau_human": [0.67],
            "rho": [0.92], "sigma_metric": [1.0], "sigma_human": [1.0], "r_mu": [0.35],
            "r_sigma": [0.14]}
    one = simulate_correlation_study(0, params=same, n_items=100)
    ref = simulate_correlation_study(0)
    for key in ("global_pearson", "within_system_pearson", "system_pearson",
                "system_pearson_finite"):
        assert float(one[f"true_{key}"].values[0]) == pytest.approx(ref.attrs[f"true_{key}"],
                                                                    rel=1e-14)
    with pytest.raises(ValueError, match="not both"):
        simulate_correlation_study(0, params=same, rho_system=0.5)
    with pytest.raises(ValueError, match="params: missing r_sigma"):
        simulate_correlation_study(0, params={k: v for k, v in same.items() if k != "r_sigma"})


# ============================================================================ small fit
@pytest.mark.slow  # two MCMC fits: the slow tier (the default tier's 15-minute budget)
def test_fast_fit_small(pymc, tmp_path):
    _params, sim = _sim(n_metrics=2, n_systems=6, n_items=30, seed=2, r_mu=0.4, r_sigma=0.1,
                       rho=0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = C.fit_correlation_model(sim, human=sim["human"], sampling="fast", random_seed=7)
        again = C.fit_correlation_model(sim, human=sim["human"], sampling="fast", random_seed=7)
    tab = fit.summary()
    check_table(tab)
    assert list(tab.index.names) == ["estimand", "trait", "metric"]
    assert set(tab.index.get_level_values("estimand")) == set(C.ESTIMANDS)
    assert set(tab.index.get_level_values("trait")) == {"human"}
    assert list(tab.columns) == ["classical", "classical_low", "classical_high", "mean", "sd",
                                 "hdi_low", "hdi_high", "r_hat", "ess_bulk", "ess_tail"]
    assert tab.attrs["ci_prob"] == 0.94 and tab.attrs["classical_ci_kind"] == "Fisher z"
    assert fit.details().loc[("system_pearson", "human", "m0"), "parameter"] == "rho"
    assert fit.provenance["random_seed"] == 7
    # same seed, same draws
    np.testing.assert_array_equal(fit.idata.posterior["rho"].values,
                                  again.idata.posterior["rho"].values)
    # the classical column is the numpy within-system / system-level Pearson
    x = sim["score"].isel(run=0).transpose("metric", "system", "item").values
    cl = B.classical_correlations(x, sim["human"].values)
    np.testing.assert_allclose(tab.xs("within_system_pearson", level="estimand")["classical"],
                               cl["within_system_pearson"], rtol=1e-12)
    sys_rows = tab.xs("system_pearson", level="estimand")
    np.testing.assert_allclose(sys_rows["classical_low"], cl["system_low"], rtol=1e-12)
    assert tab.xs("within_system_sd", level="estimand")["classical_low"].isna().all()
    post = fit.idata.posterior
    assert post["r"].dims == ("chain", "draw", "metric", "system")
    assert list(post["system"].values) == list(sim["system"].values)
    item = tab.xs("within_system_pearson", level="estimand")
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
    coarse = fit.simulate(2, metric_levels=(5,), random_seed=1)
    assert coarse.sizes["metric"] == 4
    assert "Within-system correlation" in str(fit)
    hook = fit.by_measure()
    assert list(hook.index.names) == ["estimand", "trait", "metric"]
    assert set(hook.index.get_level_values("estimand")) == {"within_system_pearson",
                                                             "system_pearson"}
    # the hook joins row by row to the classical measures of bm.correlations (one call
    # per metric: each simulated metric has its own human score)
    corr = pd.concat([bm.correlations(sim, human=sim["human"].sel(metric=m, drop=True),
                                      metrics=[m],
                                      measures=["within_system_pearson", "system_pearson"],
                                      resampling={"n_resamples": 0}).summary()
                      for m in sim["metric"].values]).sort_index()
    joined = corr.join(hook)  # no shared columns: classical only beside the posterior
    assert len(joined) == len(corr) == len(hook) and joined["mean"].notna().all()
    np.testing.assert_allclose(joined["classical"],
                               tab.loc[joined.index, "classical"], rtol=1e-12)
    params = fit.parameters()
    check_table(params)
    assert len(params) == 2 * len(C.PARAMETERS)
    within = fit.within_system()
    check_table(within)
    assert within.shape[0] == 2 * 6
    np.testing.assert_allclose(within.loc[("r", "human", "m1", "s3"), "classical"],
                               cl["within"][1, 3], rtol=1e-12)
    # netCDF round trip
    path = fit.save(tmp_path / "corr.nc")
    back = bm.load(path)
    assert type(back) is C.CorrelationResult
    check_table(back.summary())
    pd.testing.assert_frame_equal(back.summary(), fit.summary())
    pd.testing.assert_frame_equal(back.details(), fit.details())
    assert back.n_systems == 6 and back.n_items == 30 and back.trait == "human"
    xr.testing.assert_allclose(back.parameter_draws()["rho"], fit.parameter_draws()["rho"])


def _judgment_data():
    """A continuous judgment (trait ``fact``) and the same values as a human score."""
    _params, sim = _sim(n_metrics=2, n_systems=6, n_items=30, seed=2, r_mu=0.4, r_sigma=0.1,
                       rho=0.5)
    hum = sim["human"].sel(metric="m0", drop=True)
    return sim[["score"]].assign(judgment=hum.expand_dims(trait=["fact"], axis=-1)), hum


def test_old_sampler_keywords_refused(pymc):
    """The previous release's sampler keywords are refused, naming the keyword."""
    data, _ = _judgment_data()
    with pytest.raises(TypeError, match="fast"):
        C.fit_correlation_model(data, "fact", fast=True, random_seed=3)


@pytest.mark.slow
def test_judgment_is_fitted_as_a_human_score(pymc):
    """A continuous judgment is a human score like the mean of ratings: fitting the
    judgment equals fitting the same values given as ``human=`` (two MCMC fits, so in the
    slow tier)."""
    from bayesmeta.sampling import ConvergenceWarning

    data, hum = _judgment_data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        # the same seed gives the same draws: a short run shows the equality
        short = {"draws": 40, "tune": 40, "chains": 2, "adaptive": False}
        judged = C.fit_correlation_model(data, "fact", sampling=short, random_seed=3)
        given = C.fit_correlation_model(data, human=hum.rename("fact"), sampling=short,
                                        random_seed=3)
    pd.testing.assert_frame_equal(judged.summary(), given.summary())
    assert set(judged.summary().index.get_level_values("trait")) == {"fact"}
    assert "fact (judgment)" in judged.info["data"]


# ============================================================================ slow tier
@pytest.mark.slow
def test_recovery_coverage_prior_draws(pymc):
    """Simulation-based calibration: 60 datasets (parameters from the prior, 17 systems x
    100 items), all fitted in one model (the datasets are the `metric` dim). Each 94% HDI
    covers its truth in Binomial(60, 0.94) fashion; the limit 0.80 is the 0.1% quantile."""
    params = C.sample_prior(60, random_seed=2024)
    sim = simulate_correlation_study(2025, params=params, n_systems=17, n_items=100)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = C.fit_correlation_model(sim, human=sim["human"],
                                      sampling={"draws": 500, "tune": 500, "chains": 2},
                                      random_seed=1)
    tab = fit.summary()
    truth = {"within_system_pearson": sim["r"].mean("system").values,
             "system_pearson": params["rho"].values,
             "within_system_sd": params["r_sigma"].values}
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
        fit = C.fit_correlation_model(summeval, "REL", sampling={"draws": 2000},
                                      random_seed=3)
    assert int(fit.idata.sample_stats["diverging"].sum()) == 0
    tab = fit.summary()
    main = tab[tab.index.get_level_values("estimand").isin(["within_system_pearson",
                                                            "system_pearson"])]
    assert (main["r_hat"] <= 1.01).all() and (main["ess_bulk"] >= 400).all()
    assert (main["ess_tail"] >= 400).all()
    spread = tab.xs("within_system_sd", level="estimand")
    assert (spread["r_hat"] <= 1.02).all() and (spread["ess_tail"] >= 200).all()
    # posterior within-system mean close to the classical within-system (paper 001's
    # item-level) Pearson (17 x 100 pairs; the posterior SD is about 0.02)
    item = tab.xs("within_system_pearson", level="estimand")
    assert (abs(item["mean"] - item["classical"]) < 0.03).all()
