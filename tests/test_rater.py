"""The many-facet rater model (bayesmeta.raters.model, card models/rater.md).

Tiers (style.md rule 9): structure tests build the model and run the whole result pipeline
on a mocked posterior (no sampling); the slow tier fits small simulated data, checks
parameter recovery, copes with an empty category, and reproduces the rater findings of
MetricEval App. A.4 on SummEval as posterior statements.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import warnings

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from scipy import special

import bayesmeta as bm
from bayesmeta.raters import model as rm
from bayesmeta.raters.classical import classical_counterparts
from bayesmeta.sampling import ConvergenceWarning
from bayesmeta.simulate import simulate_rater
from bayesmeta.summaries import check_table


@pytest.fixture(scope="module")
def small():
    return simulate_rater(3, n_systems=4, n_items=6, traits=("COH", "CON"), missing=0.05)


# ----------------------------------------------------------------------------- structure
def test_design_is_long_form_without_missing(small):
    d = rm.rater_design(small)
    y = small["rating"].transpose("trait", "system", "item", "rater").values
    assert d.n_obs == int((~np.isnan(y)).sum())
    assert d.cuts == ["1->2", "2->3", "3->4", "4->5"]
    back = y[d.trait_index, d.system_index, d.item_index, d.rater_index]
    np.testing.assert_array_equal(back, d.category + 1)
    one = d.subset("CON")
    assert one.traits == ["CON"] and one.n_obs == int((~np.isnan(y[1])).sum())


def test_design_errors_name_the_culprit(small):
    with pytest.raises(ValueError, match=r"'XYZ' is not a label of dim 'trait'"):
        rm.rater_design(small, traits=["XYZ"])
    with pytest.raises(ValueError, match="at least 2 raters"):
        rm.rater_design(small, raters=["Rater.1"])
    two = small.copy()
    two["rating"] = small["rating"].clip(1, 2).assign_attrs(scale_min=1.0, scale_max=2.0)
    with pytest.raises(ValueError, match="at least 3 categories"):
        rm.rater_design(two)
    with pytest.raises(ValueError, match="ci_prob"):
        rm.rater_bias(small, ci_prob=1.5)


def test_model_builds_with_named_dims_and_finite_logp(small):
    d = rm.rater_design(small)
    # rater 1 never uses category 1 on COH: the proper log-gap prior keeps the model proper
    rating = d.rating.copy()
    rating[0, ..., 0] = np.where(rating[0, ..., 0] == 1, 2, rating[0, ..., 0])
    d = rm.make_design_from_array(rating, d.systems, d.items, d.raters, d.traits, 5, 1)
    m = rm.build_rater_model(d)
    assert m.named_vars_to_dims["tau"] == ("trait", "rater", "cut")
    assert m.named_vars_to_dims["quality"] == ("trait", "system", "item")
    assert m.named_vars_to_dims["discrimination"] == ("trait", "rater")
    assert list(m.coords["cut"]) == ["1->2", "2->3", "3->4", "4->5"]
    ip = m.initial_point()
    logp = m.point_logps(ip)
    assert all(np.isfinite(v) for v in logp.values())
    assert "log_discrimination" not in rm.build_rater_model(d, discrimination=False).named_vars


@pytest.mark.parametrize("where, moved", [("middle", [False, False, False, True]),
                                          ("mean", [True, True, True, True])])
def test_middle_thresholds_keep_an_end_gap_to_its_own_threshold(small, where, moved):
    """thresholds='middle' (the default): tau = shift + steps - mean(middle steps), so the
    last log-gap (to the top category) moves only the top threshold; centred on the mean
    threshold, it moves all four (the coupling that made the judges fit diverge where a
    judge never gives 5). Closed form of the model's tau at two points."""
    d = rm.rater_design(small, traits=["COH"])
    spec = {"units": "rater", "scales": "fixed", "quality": "centred", "thresholds": where}
    m = rm.build_rater_model(d, parameterization=spec)
    tau_of = m.compile_fn(m.replace_rvs_by_values([m["tau"]])[0], inputs=m.value_vars,
                          on_unused_input="ignore")
    p0 = m.initial_point()
    p1 = dict(p0)
    p1["log_gap"] = p0["log_gap"].copy()
    p1["log_gap"][..., -1] += 0.7
    t0, t1 = tau_of(p0)[0, 0], tau_of(p1)[0, 0]
    assert list(~np.isclose(t0, t1, rtol=0, atol=1e-12)) == moved
    g = np.exp(p1["log_gap"][0, 0]) - np.exp(p0["log_gap"][0, 0])
    expect = g[-1] if where == "middle" else g[-1] * 0.75
    np.testing.assert_allclose(t1[-1] - t0[-1], expect, rtol=1e-9)


def test_partial_centring_weights_and_quality_map():
    """quality="partial": an output whose ratings are all in the lowest or all in the
    highest category (or that has none) is non-centred (weight 0), any other centred
    (weight 1); the model's quality is the free value where centred and loc + sd_output *
    value where not (closed form at a point)."""
    # one trait, one system, five items, three raters, scale 1..5 (NaN = missing)
    r = np.array([[5, 5, 5], [1, 1, np.nan], [5, 4, 5], [3, 3, 3],
                  [np.nan] * 3], dtype=float)[None, None]
    d = rm.make_design_from_array(r, ["s"], [f"i{k}" for k in range(5)],
                                  ["a", "b", "c"], ["CON"], 5, 1)
    np.testing.assert_array_equal(d.centring_weight, [[[0, 0, 1, 1, 0]]])
    m = rm.build_rater_model(d, parameterization="rater_units_fixed_middle_partial")
    q_of = m.compile_fn(m.replace_rvs_by_values([m["quality"]])[0], inputs=m.value_vars,
                        on_unused_input="ignore")
    p = m.initial_point()
    p["mu"] = np.array([0.4])
    p["sd_output_log__"] = np.array([np.log(2.0)])
    p["quality_tilde"] = np.array([[[0.3, -0.2, 1.1, -0.5, 0.9]]])
    loc = 0.4  # one system (zero-sum effect 0), item effects 0 at the initial point
    np.testing.assert_allclose(np.asarray(p["item_effect_z_zerosum__"]), 0.0, atol=1e-12)
    expect = [loc + 2.0 * 0.3, loc + 2.0 * -0.2, 1.1, -0.5, loc + 2.0 * 0.9]
    np.testing.assert_allclose(q_of(p)[0, 0], expect, rtol=1e-12)
    # and the free value's density: Normal(w loc, sd_output^w), SciPy's closed form
    from scipy import stats

    logp_of = m.compile_fn(m.logp(vars=[m["quality_tilde"]], sum=False)[0],
                           inputs=m.value_vars, on_unused_input="ignore")
    w = d.centring_weight[0, 0]
    want = stats.norm.logpdf(p["quality_tilde"][0, 0], w * loc, 2.0 ** w)
    np.testing.assert_allclose(logp_of(p)[0, 0], want, rtol=1e-12)


def test_default_parameterisation_has_fixed_rater_scales(small):
    """The default build (issue 19): partially centred quality (non-centred where the
    ratings only bound it) and fixed prior SDs over the raters (no hierarchical SD over
    three raters, whose funnels diverged); release 0.10's build and
    every measured alternative build, have a finite log-probability and the variables
    the derived quantities read, so the reported estimands mean the same."""
    d = rm.rater_design(small, traits=["COH"])
    assert rm.DEFAULT_PARAMETERIZATION == "rater_units_fixed_middle_partial"
    free = {v.name for v in rm.build_rater_model(d).free_RVs}
    assert {"quality_tilde", "sd_output", "log_discrimination", "rater_shift",
            "log_gap"} <= free
    assert not free & {"sd_severity", "sd_log_gap", "sd_log_discrimination", "quality_z",
                       "quality"}
    old = {v.name for v in rm.build_rater_model(d, parameterization="rater_units").free_RVs}
    assert {"sd_severity", "sd_log_gap", "sd_log_discrimination", "quality"} <= old
    for name in rm.PARAMETERIZATIONS:
        mm = rm.build_rater_model(d, parameterization=name)
        assert {"mu", "sd_system", "sd_item", "sd_output", "system_effect", "rater_shift",
                "tau", "discrimination", "quality"} <= set(mm.named_vars), name
        if name in (rm.DEFAULT_PARAMETERIZATION, "rater_units"):  # each one compiles
            assert all(np.isfinite(v) for v in mm.point_logps(mm.initial_point()).values())
    m = rm.build_rater_model(d, parameterization="rater_units_fixed_noncentred")
    free = {v.name for v in m.free_RVs}
    assert {"quality_z", "sd_output", "log_discrimination", "rater_shift", "log_gap"} <= free
    assert not free & {"sd_severity", "sd_log_gap", "sd_log_discrimination", "quality"}
    # quality units, equal slopes: one slope per trait, shared by the raters
    eq = rm.build_rater_model(d, discrimination=False, parameterization="quality_units")
    assert eq.named_vars_to_dims["log_slope"] == ("trait",)
    with pytest.raises(ValueError, match="parameterization must be one of"):
        rm.build_rater_model(d, parameterization="nope")


@pytest.mark.slow
def test_every_parameterisation_has_a_finite_log_probability(small):
    """The alternative builds of the parameterisation study (benchmarks only) evaluate at
    their initial point (one compile each, so in the slow tier)."""
    d = rm.rater_design(small, traits=["COH"])
    for name in rm.PARAMETERIZATIONS:
        mm = rm.build_rater_model(d, parameterization=name)
        assert all(np.isfinite(v) for v in mm.point_logps(mm.initial_point()).values()), name


def test_classical_counterparts_by_hand(small):
    d = rm.rater_design(small)
    cl = classical_counterparts(d.labelled(), scale_min=1, n_categories=5)
    y = small["rating"].sel(rater="Rater.2", trait="CON").values.ravel()
    y = y[~np.isnan(y)]
    expected = special.ndtri(np.array([(y <= k).mean() for k in range(1, 5)]))
    expected = np.where(np.isfinite(expected), expected, np.nan)
    np.testing.assert_allclose(cl["marginal_threshold"].sel(rater="Rater.2", trait="CON"),
                               expected, rtol=1e-12)
    # ICC(3,k) from the two-way ANOVA mean squares (Shrout & Fleiss 1979), complete outputs
    full = simulate_rater(4, n_systems=5, n_items=8, traits=("COH",))
    x = full["rating"].sel(trait="COH").stack(o=("system", "item")).transpose("o", "rater")
    x = x.values
    n, k = x.shape
    g = x.mean()
    ms_r = k * ((x.mean(1) - g) ** 2).sum() / (n - 1)
    ss_c = n * ((x.mean(0) - g) ** 2).sum()
    ms_e = (((x - g) ** 2).sum() - ms_r * (n - 1) - ss_c) / ((n - 1) * (k - 1))
    icc3k = (ms_r - ms_e) / ms_r
    got = classical_counterparts(rm.rater_design(full).labelled(), scale_min=1,
                                 n_categories=5)["icc_output"].sel(trait="COH")
    np.testing.assert_allclose(float(got), icc3k, rtol=1e-10)


def _fake_idata(design: rm.RaterDesign, n_draws: int = 50, seed: int = 0):
    """A posterior-shaped InferenceData (no sampling) for pipeline tests."""
    import arviz as az

    rng = np.random.default_rng(seed)
    T, S, I, R, K = (len(design.traits), len(design.systems), len(design.items),
                     len(design.raters), design.n_categories)
    C, D = 2, n_draws

    def da(x, *dims):
        coords = {"trait": design.traits, "system": design.systems, "item": design.items,
                  "rater": design.raters, "cut": design.cuts}
        return xr.DataArray(x, dims=("chain", "draw", *dims),
                            coords={d: coords[d] for d in dims})

    tau = np.sort(rng.normal(0, 1, size=(C, D, T, R, K - 1)), axis=-1)
    post = xr.Dataset({
        "mu": da(rng.normal(0.5, 0.1, (C, D, T)), "trait"),
        "sd_system": da(np.abs(rng.normal(1, 0.1, (C, D, T))), "trait"),
        "sd_item": da(np.abs(rng.normal(0.5, 0.1, (C, D, T))), "trait"),
        "sd_output": da(np.abs(rng.normal(1, 0.1, (C, D, T))), "trait"),
        "system_effect": da(rng.normal(0, 1, (C, D, T, S)), "trait", "system"),
        "rater_shift": da(rng.normal(0, 0.3, (C, D, T, R)), "trait", "rater"),
        "tau": da(tau, "trait", "rater", "cut"),
        "discrimination": da(np.exp(rng.normal(0, 0.2, (C, D, T, R))), "trait", "rater"),
        "quality": da(rng.normal(0, 1, (C, D, T, S, I)), "trait", "system", "item"),
    }, attrs={"sampler": "mock", "chains": C, "draws": D, "tune": 0, "random_seed": seed,
              "fast": 0})
    stats = xr.Dataset({"diverging": (("chain", "draw"), np.zeros((C, D), bool))})
    return az.InferenceData(posterior=post, sample_stats=stats)


def test_derived_quantities_by_hand(small):
    d = rm.rater_design(small)
    post = _fake_idata(d).posterior
    der = rm.derived_quantities(post, d)
    p = post.isel(chain=0, draw=3).sel(trait="CON")
    var_q = float(p.sd_system**2 + p.sd_item**2 + p.sd_output**2)
    a = p.discrimination.sel(rater="Rater.3").values
    tau = p.tau.sel(rater="Rater.3").values
    got = der.isel(chain=0, draw=3).sel(trait="CON")
    np.testing.assert_allclose(got.threshold.sel(rater="Rater.3"),
                               (tau - float(p.mu)) / np.sqrt(var_q), rtol=1e-12)
    np.testing.assert_allclose(got.marginal_threshold.sel(rater="Rater.3"),
                               a * (tau - float(p.mu)) / np.sqrt(1 + a**2 * var_q), rtol=1e-12)
    thr = got.threshold.values  # (rater, cut)
    np.testing.assert_allclose(got.severity.values, thr.mean(1) - thr.mean(), atol=1e-12)
    abar2 = p.discrimination.values.mean() ** 2
    I, R = len(d.items), len(d.raters)
    rel = p.sd_system**2 / (p.sd_system**2 + p.sd_output**2 / I + 1 / (abar2 * I * R))
    np.testing.assert_allclose(float(got.reliability_system), float(rel), rtol=1e-12)
    shares = got.share_system + got.share_item + got.share_output
    np.testing.assert_allclose(float(shares), 1.0, rtol=1e-12)


def test_derived_quantities_match_the_simulator_truth():
    """Fed the simulator's own parameters, the derived quantities equal its true_* values."""
    ds = simulate_rater(7, n_systems=6, n_items=9, traits=("COH",))
    d = rm.rater_design(ds)
    rng = np.random.default_rng(7)  # replay simulate_rater's draws to get its raw parameters
    T, S, I, R, K = 1, 6, 9, 3, 5

    def zerosum(sd, *shape):
        x = rng.normal(0, sd, size=shape)
        return x - x.mean(axis=-1, keepdims=True)

    zerosum(1.0, T, S)
    zerosum(0.5, T, I)
    rng.normal(0, 1.2, size=(T, S, I))
    delta = zerosum(0.4, T, R)
    gaps = np.exp(np.log(0.8) + rng.normal(0, 0.3, size=(T, R, K - 2)))
    steps = np.concatenate([np.zeros((T, R, 1)), np.cumsum(gaps, axis=-1)], axis=-1)
    tau = delta[..., None] + steps - steps.mean(axis=-1, keepdims=True)
    a = np.exp(zerosum(0.3, T, R))
    post = _fake_idata(d, n_draws=2).posterior
    post["tau"][:] = tau
    post["discrimination"][:] = a
    for name, value in (("mu", 0.8), ("sd_system", 1.0), ("sd_item", 0.5), ("sd_output", 1.2)):
        post[name][:] = value
    der = rm.derived_quantities(post, d).isel(chain=0, draw=0)
    for name in ("threshold", "severity", "marginal_threshold", "loading",
                 "reliability_system", "icc_output"):
        np.testing.assert_allclose(der[name].transpose(*ds[f"true_{name}"].dims),
                                   ds[f"true_{name}"], rtol=1e-12, err_msg=name)


@pytest.fixture(scope="module")
def mocked(small):
    """rater_bias on a mocked sampler: the full pipeline without MCMC."""
    original = rm._sample_together
    design = rm.rater_design(small, traits=["COH"])
    calls = []

    def fake(models, **kwargs):
        out = []
        for seed in kwargs["random_seed"]:
            calls.append({**kwargs, "random_seed": seed})
            out.append(_fake_idata(design, seed=len(calls)))
        return out

    rm._sample_together = fake
    try:
        with pytest.warns(ConvergenceWarning):  # random fake draws do not "converge"
            res = rm.rater_bias(small, random_seed=5, by_trait=True, traits=["COH", "CON"])
    finally:
        rm._sample_together = original
    return res, calls


def test_pipeline_table_shape(mocked):
    res, calls = mocked
    assert [c["random_seed"] for c in calls] == [5, 6]  # one fit per trait, seeds in order
    tab, det = res.summary(), res.details()
    check_table(tab)
    assert tab.index.names == ["estimand", "rater", "trait", "cut"]
    assert list(tab.columns) == ["classical", "mean", "sd", "hdi_low", "hdi_high", "r_hat",
                                 "ess_bulk", "ess_tail"]
    assert list(det.columns) == ["p_harsher"] and det.index.equals(tab.index)
    q = tab.index.get_level_values("estimand")
    assert (q == "threshold").sum() == 3 * 2 * 4
    assert (q == "severity").sum() == 3 * 2
    assert det.loc[("threshold", "Rater.1", "CON", "4->5"), "p_harsher"] <= 1
    assert tab.loc[q == "marginal_threshold", "classical"].notna().any()
    assert tab.loc[q == "reliability_system", "classical"].notna().all()
    assert det.loc[q == "panel_threshold", "p_harsher"].isna().all()
    assert tab.attrs["ci_prob"] == 0.94 and tab.attrs["ci_kind"] == "hdi"
    assert res.provenance["random_seed"] == 5
    post = res.posterior
    assert post["threshold"].dims == ("chain", "draw", "rater", "trait", "cut")
    assert "quality" not in post
    assert res.extra["p_harsher_pairwise"].dims == ("rater", "rater2", "trait", "cut")


def test_p_harsher_and_p_lenient(mocked):
    res, _ = mocked
    tab = res.details()
    p = res.p_harsher("Rater.2", trait="COH", cut="2->3")
    assert p == pytest.approx(tab.loc[("threshold", "Rater.2", "COH", "2->3"), "p_harsher"])
    assert res.p_harsher("Rater.2", trait="COH") == pytest.approx(
        tab.loc[("severity", "Rater.2", "COH", ""), "p_harsher"])
    pair = res.p_harsher("Rater.1", "Rater.3", trait="CON", cut="4->5")
    assert pair == pytest.approx(float(res.extra["p_harsher_pairwise"].sel(
        rater="Rater.1", rater2="Rater.3", trait="CON", cut="4->5")))
    # continuous draws: harsher + more lenient = 1; joint <= each pairwise
    assert pair + res.p_lenient("Rater.1", "Rater.3", trait="CON", cut="4->5") == 1
    joint = res.p_lenient("Rater.3", ["Rater.1", "Rater.2"], trait="COH", cut="4->5")
    assert joint <= res.p_lenient("Rater.3", "Rater.1", trait="COH", cut="4->5")
    with pytest.raises(ValueError, match="must not contain"):
        res.p_harsher("Rater.1", ["Rater.1"], trait="COH")


def test_print_save_load_plot(mocked, tmp_path):
    res, _ = mocked
    text = str(res)
    assert text.startswith("Rater bias")
    assert "Thresholds on the quality scale" in text and "p_harsher" in text
    back = bm.load(res.save(tmp_path / "rater.nc"))
    assert type(back) is rm.RaterBiasResult
    pd.testing.assert_frame_equal(back.summary(), res.summary())
    pd.testing.assert_frame_equal(back.details(), res.details())
    check_table(back.summary())
    assert back.provenance == res.provenance
    assert str(back) == text
    xr.testing.assert_allclose(back.posterior["threshold"], res.posterior["threshold"])
    assert back.p_lenient("Rater.3", ["Rater.1", "Rater.2"], trait="COH", cut="4->5") == \
        res.p_lenient("Rater.3", ["Rater.1", "Rater.2"], trait="COH", cut="4->5")
    fig = res.plot()
    assert isinstance(fig, matplotlib.figure.Figure)
    assert len(fig.axes[0].get_yticklabels()) == 2 * 4
    assert len(fig.axes[0].get_legend().get_texts()) == 3


def test_one_model_for_all_traits_gives_the_same_table_shape(small, mocked):
    original = rm._sample_together
    design = rm.rater_design(small)
    rm._sample_together = lambda models, **kw: [_fake_idata(design, seed=9)]
    try:
        with pytest.warns(ConvergenceWarning):
            res = rm.rater_bias(small, random_seed=5, by_trait=False)
    finally:
        rm._sample_together = original
    assert res.summary().index.equals(mocked[0].summary().index)
    assert "one fit per trait" not in res.info["sampler"]


def _run_mocked(data, **kwargs):
    """rater_bias on a mocked sampler; returns the result and the sampler calls."""
    design = rm.rater_design(data, traits=kwargs.get("traits"))
    calls = []

    def fake(models, **kw):
        out = []
        for seed in kw["random_seed"]:
            calls.append({**kw, "random_seed": seed})
            out.append(_fake_idata(design if not kwargs.get("by_trait", True) else
                                   design.subset(design.traits[len(calls) - 1]),
                                   seed=len(calls)))
        return out

    original = rm._sample_together
    rm._sample_together = fake
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            res = rm.rater_bias(data, **kwargs)
    finally:
        rm._sample_together = original
    return res, calls


def test_sampler_options_and_drawn_seed(small):
    res, calls = _run_mocked(small, traits=["COH"], sampling={"draws": 123, "chains": 3})
    opts = calls[0]["options"]
    assert (opts.draws, opts.chains, opts.tune, opts.sampler) == (123, 3, 300, "nutpie")
    # no seed given: one is drawn, used and recorded, so the fit can be repeated
    seed = res.provenance["random_seed"]
    assert isinstance(seed, int) and calls[0]["random_seed"] == seed
    assert res.provenance["data_hash"] == bm.results.data_hash(small)
    # this model's own default: the low-rank mass matrix with eigenvalue cutoff 10 (stop
    # 46); the user's choice overrides it
    assert (opts.mass_matrix, opts.eigval_cutoff) == ("low_rank", 10.0)
    _, calls = _run_mocked(small, traits=["COH"], sampling={"eigval_cutoff": 100},
                           random_seed=2)
    assert calls[0]["options"].eigval_cutoff == 100
    _, calls = _run_mocked(small, traits=["COH"], sampling={"mass_matrix": "diag"},
                           random_seed=2)
    assert calls[0]["options"].mass_matrix == "diag"
    _, calls = _run_mocked(small, traits=["COH"], sampling="fast", random_seed=2)
    assert calls[0]["options"].fast and calls[0]["options"].draws == 300
    _, calls = _run_mocked(small, traits=["COH"], sampling={"draws": 40, "tune": 30},
                           random_seed=2)
    assert (calls[0]["options"].draws, calls[0]["options"].tune) == (40, 30)
    with pytest.raises(TypeError, match="rater_bias"):
        rm.rater_bias(small, drawz=10)


def test_continuous_judgments_are_refused_with_the_reason(small):
    judged = xr.Dataset({"judgment": small["rating"].mean("rater")})
    with pytest.raises(ValueError, match=r"rater_bias needs ordinal ratings.*continuous "
                                         r"human judgments.*no raters or rating categories"):
        bm.rater_bias(judged)
    mixed = small.assign(rating=small["rating"].where(small["trait"] == "COH"),
                         judgment=small["rating"].mean("rater").where(small["trait"] == "CON"))
    with pytest.raises(ValueError, match=r"trait 'CON' is a continuous judgment"):
        bm.rater_bias(mixed, traits=["CON"])


# ----------------------------------------------------------------------------- slow tier
@pytest.mark.slow
def test_small_seeded_fit_recovers_severity():
    ds = simulate_rater(11, n_systems=8, n_items=30, traits=("COH",), sd_severity=0.6)
    opts = {"chains": 2, "draws": 400, "tune": 400}
    res = rm.rater_bias(ds, sampling=opts, random_seed=3)
    again = rm.rater_bias(ds, sampling=opts, random_seed=3)
    pd.testing.assert_frame_equal(res.summary(), again.summary())  # seeded: identical
    tab = res.summary()
    truth = ds["true_severity"].sel(trait="COH")
    for r in ds["rater"].values:
        row = tab.loc[("severity", str(r), "COH", "")]
        assert row["hdi_low"] <= float(truth.sel(rater=r)) <= row["hdi_high"], r


@pytest.mark.slow
def test_empty_category_gets_a_finite_threshold():
    ds = simulate_rater(12, n_systems=8, n_items=30, traits=("COH",))
    y = ds["rating"].values.copy()
    y[:, :, 0, :] = np.where(y[:, :, 0, :] == 1, 2, y[:, :, 0, :])  # rater 1 never says 1
    ds["rating"] = ds["rating"].copy(data=y)
    res = rm.rater_bias(ds, sampling={"chains": 2, "draws": 400, "tune": 400}, random_seed=4)
    row = res.summary().loc[("threshold", "Rater.1", "COH", "1->2")]
    assert np.isfinite(row["mean"]) and row["hdi_high"] < row["mean"] + 5
    assert np.isnan(res.summary().loc[("marginal_threshold", "Rater.1", "COH", "1->2"),
                                      "classical"])  # classical: -inf, shown as missing
    assert row["r_hat"] < 1.05


@pytest.mark.slow
def test_parameter_recovery_coverage():
    """Two datasets from the model: 94% HDIs cover most true thresholds and severities.

    A calibration check, not an exact one: with 2 datasets x 24 thresholds the coverage
    is noisy, so the bound is loose (>= 80%); benchmarks/rater_recovery.py runs more.
    """
    hits, total = 0, 0
    for seed in (21, 22):
        ds = simulate_rater(seed, n_systems=10, n_items=40, traits=("COH", "CON"))
        tab = rm.rater_bias(ds, sampling={"chains": 2, "draws": 500, "tune": 500},
                            random_seed=seed).summary()
        for name in ("threshold", "severity"):
            truth = ds[f"true_{name}"].to_series()
            sub = tab.xs(name, level="estimand")
            for key, value in truth.items():
                key = key if isinstance(key, tuple) else (key,)
                key = key + ("",) * (3 - len(key))
                row = sub.loc[key]
                hits += int(row["hdi_low"] <= value <= row["hdi_high"])
                total += 1
    assert hits / total >= 0.80, (hits, total)


@pytest.mark.slow
@pytest.mark.data
def test_summeval_rater_findings_of_metriceval_a4(summeval):
    """MetricEval App. A.4 (Xiao et al. 2023): "expert 3 was more likely than experts 1 and
    2 to provide a rating of 5 (with lower threshold estimates for score 5) on output
    Consistency, but less likely to do so (with higher threshold estimates) on Coherence
    and Relevance". lavaan thresholds t4 (reference/lavaan_summeval_four_factor.txt):
    CON -1.067 / -1.099 / -1.233, COH 0.309 / 0.417 / 1.367, REL 0.448 / 0.215 / 1.265.
    """
    res = rm.rater_bias(summeval, sampling={"chains": 2, "draws": 600, "tune": 600},
                        random_seed=20231)
    others = ["Expert.1", "Expert.2"]
    assert res.p_lenient("Expert.3", others, trait="CON", cut="4->5") > 0.95
    assert res.p_harsher("Expert.3", others, trait="COH", cut="4->5") > 0.99
    assert res.p_harsher("Expert.3", others, trait="REL", cut="4->5") > 0.99
    tab = res.summary()
    # the model-implied marginal thresholds sit near the classical (lavaan) ones
    marg = tab.xs("marginal_threshold", level="estimand")
    for key in [("Expert.3", "COH", "4->5"), ("Expert.3", "REL", "4->5")]:
        assert abs(marg.loc[key, "mean"] - marg.loc[key, "classical"]) < 0.15



@pytest.mark.slow
def test_jax_backend_gives_the_numba_posterior():
    """The accelerator path on this model (issue 19 item 4): the same data, seed and fixed
    length through nutpie's JAX backend give every reported quantity's posterior mean within
    4 Monte Carlo standard errors of the numba backend's (each side's MCSE sd / sqrt(bulk
    ESS)); sd within 20%. Before bayesmeta registered its own erfcx for JAX this model did
    not compile with backend="jax"."""
    pytest.importorskip("jax", reason="the jax extra is not installed")
    ds = simulate_rater(1, n_systems=6, n_items=15, traits=("COH",))
    fixed = {"adaptive": False, "tune": 600, "draws": 600}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = bm.rater_bias(ds, random_seed=4, sampling=fixed, progress=False).summary()
        b = bm.rater_bias(ds, random_seed=4, sampling={**fixed, "backend": "jax"},
                          progress=False).summary()
    ok = a["r_hat"].notna()
    a, b = a[ok], b.loc[a.index]
    se = np.sqrt(a["sd"] ** 2 / a["ess_bulk"] + b["sd"] ** 2 / b["ess_bulk"])
    assert ((a["mean"] - b["mean"]).abs() <= 4 * se).mean() >= 0.99
    np.testing.assert_allclose(b["sd"], a["sd"], rtol=0.2)
