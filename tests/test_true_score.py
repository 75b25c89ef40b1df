"""The true_score model: structure (no sampling), small seeded fits, slow calibration.

References are independent of the code under test: brute-force sums of squares, coefficient
alpha (bayesmeta.classical, itself checked against R's psych::alpha), SciPy chi-square and
multivariate normal densities, the paper's METEOR value (MetricEval Sec. 4.1.1: alpha .966),
and the true variance components of simulated data.
"""

from __future__ import annotations

import warnings

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from scipy import stats

import bayesmeta as bm
from bayesmeta.reliability import _true_score_build as tb
from bayesmeta.reliability import d_study as dsm
from bayesmeta.reliability import generalizability as gt
from bayesmeta.reliability import true_score as ts
from bayesmeta.reliability.classical import cronbach_alpha, items_needed, spearman_brown
from bayesmeta.results import data_hash
from bayesmeta.sampling import ConvergenceWarning
from bayesmeta.simulate import simulate_true_score
from bayesmeta.summaries import check_table

pytestmark = pytest.mark.filterwarnings("ignore::bayesmeta.sampling.ConvergenceWarning")


# ----------------------------------------------------------------------------- helpers
def _sim(seed=0, S=8, I=20, R=2, **sds):
    defaults = dict(sd_system=[0.6, 0.4, 0.7], sd_item=[0.5, 0.3, 0.8],
                    sd_system_item=[0.8, 0.6, 0.5], sd_run=[0.3, 0.0, 0.5])
    defaults.update(sds)
    return simulate_true_score(seed, n_systems=S, n_items=I, n_runs=R, **defaults)


def _brute_ss(y):
    S, I, R = y.shape
    g = y.mean()
    ss_s = sum(I * R * (y[s].mean() - g) ** 2 for s in range(S))
    ss_i = sum(S * R * (y[:, i].mean() - g) ** 2 for i in range(I))
    ss_si = sum(R * (y[s, i].mean() - y[s].mean() - y[:, i].mean() + g) ** 2
                for s in range(S) for i in range(I))
    ss_e = sum((y[s, i, r] - y[s, i].mean()) ** 2
               for s in range(S) for i in range(I) for r in range(R))
    return np.array([ss_s, ss_i, ss_si, ss_e])


def _value_fn(model, expr):
    """A function of a point dict (value variables) computing expr (in RVs)."""
    import pytensor

    [out] = model.replace_rvs_by_values([expr])
    inputs = model.value_vars
    fn = pytensor.function(inputs, out, mode="FAST_COMPILE", on_unused_input="ignore")
    return lambda point: float(fn(*[point[v.name] for v in inputs]))


# ----------------------------------------------------------------------------- structure
def test_anova_ss_matches_brute_force():
    y = np.random.default_rng(1).normal(size=(4, 5, 3))
    ss, df = gt.anova_ss(y)
    np.testing.assert_allclose(ss, _brute_ss(y), rtol=1e-12)
    assert df.tolist() == [3, 4, 12, 40]
    np.testing.assert_allclose(ss.sum(), ((y - y.mean()) ** 2).sum(), rtol=1e-12)


def test_classical_consistency_equals_coefficient_alpha_single_run():
    """Hoyt (1941): the ANOVA estimate of rho(J, 1) is coefficient alpha; the SEM plug-in is
    MetricEval's SD(system means) * sqrt(1 - alpha); items needed is Spearman-Brown."""
    rng = np.random.default_rng(2)
    y = rng.normal(size=(9, 13)) + rng.normal(size=(9, 1)) + rng.normal(size=(1, 13))
    ss, df = gt.anova_ss(y[..., None])
    s2_s, _, s2_si, s2_e = gt.variance_components(ss, df, 9, 13, 1)
    rho = gt.g_coefficient(s2_s, s2_si, s2_e, 13)
    alpha = float(cronbach_alpha(y))
    assert abs(rho - alpha) < 1e-10
    sem_metriceval = y.mean(axis=1).std(ddof=1) * np.sqrt(1 - alpha)
    assert abs(np.sqrt((s2_si + s2_e) / 13) - sem_metriceval) < 1e-10
    need = np.ceil(0.9 / 0.1 * (s2_si + s2_e) / s2_s - 1e-9)
    assert need == items_needed(alpha, 13, target=0.9)
    # decision study with one run is the Spearman-Brown projection of alpha
    for k in (0.5, 2.0, 7.0):
        assert abs(gt.g_coefficient(s2_s, s2_si, s2_e, 13 * k) - spearman_brown(alpha, k)) < 1e-10


def test_classical_rho_with_runs_equals_alpha_of_run_means():
    """With R runs the ANOVA estimate of rho(J, R) is alpha of the run-averaged matrix."""
    y = _sim(3)["score"].isel(metric=0).values  # (S, I, R)
    ss, df = gt.anova_ss(y)
    s2_s, _, s2_si, s2_e = gt.variance_components(ss, df, *y.shape)
    rho = gt.g_coefficient(s2_s, s2_si, s2_e, y.shape[1], y.shape[2])
    assert abs(rho - float(cronbach_alpha(y.mean(axis=2)))) < 1e-10


def test_classical_column_equals_alpha_on_summeval(summeval):
    """Deterministic metrics and ratings: the ANOVA column equals bm.consistency's alpha."""
    design = tb.collect(summeval)
    anova = tb.anova_table(design)
    tab = gt.g_study(anova["ss"], anova["df"], n_systems=design.y.shape[1], n_items=100,
                     n_runs=design.n_runs, target=0.9)
    cons = pd.Series(tab["consistency"], index=design.labels)
    ref = bm.consistency(summeval).summary().xs("alpha", level="estimand")["classical"]
    same = [q for q, ident, n in zip(design.labels, design.identical, design.n_runs,
                                     strict=True) if ident or n == 1]
    assert len(same) == 26 + 12
    for q in same:
        assert abs(cons[q] - ref[q]) < 1e-10, q
    # Sec. 4.1.1: METEOR alpha .966, SEM .38 x sqrt(1 - .966) ~ .07
    assert round(cons["METEOR"], 3) == 0.966
    sem = pd.Series(tab["sem"], index=design.labels)
    assert round(sem["METEOR"], 2) == 0.07


def test_exact_likelihood_matches_chi_square_densities():
    """The potential equals sum_k [chi2.logpdf(SS_k / lam_k; df_k) - log lam_k] up to a
    constant: compare two parameter points."""
    ds = _sim(4)
    design = tb.collect(ds, raters=False)
    anova = tb.anova_table(design)
    idx = np.arange(3)
    model = tb.build_model(tb.BUCKET)
    data = tb.model_data(design, anova, idx, np.array([], int), tb.BUCKET, (0, 0, 0))
    import pymc as pm

    pm.set_data(data, model=model)
    pot = _value_fn(model, model["anova_likelihood"])
    S, I, R = 8, 20, 2
    rng = np.random.default_rng(5)

    def ref(sds):
        s_s, s_i, s_si, s_e = sds
        total = 0.0
        for q in range(3):
            free = design.free_run[q]
            le = s_e[q] ** 2 if free else 0.0
            lsi = le + R * s_si[q] ** 2
            lams = [lsi + I * R * s_s[q] ** 2, lsi + S * R * s_i[q] ** 2, lsi, le]
            ss = anova["ss"][q] / design.scale[q] ** 2
            for k in range(4 if free else 3):
                total += stats.chi2.logpdf(ss[k] / lams[k], anova["df"][q][k]) - np.log(lams[k])
        return total

    # the padding rows add the same constant at both points: vary only the first three
    sds1 = rng.uniform(0.2, 1.0, size=(4, tb.BUCKET))
    sds2 = sds1.copy()
    sds2[:, :3] = rng.uniform(0.2, 1.0, size=(4, 3))
    p1 = {f"sd_{c}_log__": np.log(sds1[k])
          for k, c in enumerate(("system", "item", "system_item", "run"))}
    p2 = {f"sd_{c}_log__": np.log(sds2[k])
          for k, c in enumerate(("system", "item", "system_item", "run"))}
    np.testing.assert_allclose(pot(p1) - pot(p2), ref(sds1) - ref(sds2), rtol=1e-9)


def test_full_likelihood_matches_multivariate_normal():
    """Random-effects block: given the system means, the observed scores are multivariate
    normal with item, cell and run covariance; compare with SciPy at two points."""
    S, I, R = 4, 5, 2
    ds = _sim(6, S=S, I=I, R=R, sd_system=[0.6], sd_item=[0.5], sd_system_item=[0.7],
              sd_run=[0.4])
    y = ds["score"].values.copy()
    y[0, 1, 0, 1] = np.nan  # one run missing
    y[2, 3, 0, :] = np.nan  # a whole cell missing
    ds["score"].values[:] = y
    design = tb.collect(ds, raters=False)
    assert not design.complete[0]
    shape = tb.full_shape(1, S, I)
    model = tb.build_model(0, *shape)
    data = tb.model_data(design, tb.anova_table(design), np.array([], int), np.array([0]),
                         0, shape)
    import pymc as pm

    pm.set_data(data, model=model)
    lik = _value_fn(model, model["cell_likelihood"] + model["within_cell"])
    z = (y[..., 0, :] - design.center[0]) / design.scale[0]  # (S, I, R) standardised
    obs = np.argwhere(~np.isnan(z))
    H = tb._helmert(S)
    rng = np.random.default_rng(7)

    def point_and_ref():
        sds = rng.uniform(0.3, 1.0, size=4)
        level = rng.normal()
        raw = rng.normal(size=S - 1)
        w = data["pncp_weight"][0]
        theta = level + sds[0] ** w * H @ raw
        _, s2i, s2si, s2e = sds**2
        cov = np.zeros((len(obs), len(obs)))
        for a, (s1, i1, r1) in enumerate(obs):
            for b, (s2, i2, r2) in enumerate(obs):
                cov[a, b] = (s2i * (i1 == i2) + s2si * (i1 == i2 and s1 == s2)
                             + s2e * (i1 == i2 and s1 == s2 and r1 == r2))
        mean = theta[obs[:, 0]]
        ref = stats.multivariate_normal(mean, cov).logpdf(z[tuple(obs.T)])
        pad = np.ones(shape[0])
        point = {"sd_system_log__": np.log(np.r_[sds[0], pad[1:]]),
                 "sd_item_log__": np.log(np.r_[sds[1], pad[1:]]),
                 "sd_system_item_log__": np.log(np.r_[sds[2], pad[1:]]),
                 "sd_run_log__": np.log(np.r_[sds[3], pad[1:]]),
                 "level": np.r_[level, np.zeros(shape[0] - 1)],
                 "system_raw": np.vstack([raw, np.zeros((shape[0] - 1, S - 1))])}
        return lik(point), ref

    (a1, r1), (a2, r2) = point_and_ref(), point_and_ref()
    np.testing.assert_allclose(a1 - a2, r1 - r2, rtol=1e-9)


def test_model_dims_and_coords():
    model = tb.build_model(tb.BUCKET, 8, 5, 8)
    dims = {v.name: model.named_vars_to_dims.get(v.name) for v in model.free_RVs}
    assert dims == {"sd_system": ("variable",), "sd_item": ("variable",),
                    "sd_system_item": ("variable",), "sd_run": ("variable",),
                    "level": ("variable_full",),
                    "system_raw": ("variable_full", "system_contrast")}
    assert len(model.coords["variable"]) == tb.BUCKET + 8
    assert len(model.coords["system_contrast"]) == 4


def test_helmert_basis_is_orthonormal_and_sums_to_zero():
    H = tb._helmert(6)
    np.testing.assert_allclose(H.T @ H, np.eye(5), atol=1e-12)
    np.testing.assert_allclose(H.sum(axis=0), 0, atol=1e-12)


def test_selection_of_metrics_and_raters(simulated):
    d = tb.collect(simulated, metrics=["metric01.COH"], raters="Rater.2")
    assert d.labels == ["metric01.COH", "Rater.2.COH", "Rater.2.CON", "Rater.2.FLU",
                        "Rater.2.REL"]
    assert d.kind == ["metric"] + ["rating"] * 4
    assert d.n_runs.tolist() == [2, 1, 1, 1, 1]
    d = tb.collect(simulated, metrics=[], raters=["Rater.1.FLU"])
    assert d.labels == ["Rater.1.FLU"]
    with pytest.raises(ValueError, match="'BLEU' is not a label of dim 'metric'"):
        tb.collect(simulated, metrics=["BLEU"], raters=False)
    with pytest.raises(ValueError, match="neither a rater"):
        tb.collect(simulated, metrics=[], raters=["Expert.9"])
    with pytest.raises(ValueError, match="nothing to analyse"):
        tb.collect(simulated, metrics=[], raters=False)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"target": 1.0}, "target must be in"),
    ({"estimator": "exact"}, "estimator must be one of"),
    ({"ci_prob": 0}, "ci_prob must lie strictly between 0 and 1"),
])
def test_reliability_validates_arguments(simulated, kwargs, match):
    with pytest.raises(ValueError, match=match):
        bm.reliability(simulated, **kwargs)


def test_identical_runs_are_detected():
    ds = _sim(8)
    d = tb.collect(ds, raters=False)
    assert d.identical.tolist() == [False, True, False]
    assert d.free_run.tolist() == [True, False, True]


# ----------------------------------------------------------------------------- small fits
@pytest.fixture(scope="module")
def summeval_fit(summeval):
    return bm.reliability(summeval, sampling="fast", random_seed=20231)


@pytest.mark.data
def test_summeval_meteor_consistency_matches_paper(summeval_fit):
    """MetricEval Sec. 4.1.1: METEOR consistency .966. Posterior mean within 0.01, and the
    94% HDI contains it (fast mode: the posterior SD is ~0.012, MC error ~0.001)."""
    row = summeval_fit.summary().loc[("consistency", "METEOR")]
    assert abs(row["classical"] - 0.966) < 5e-4
    assert abs(row["mean"] - 0.966) < 0.01
    assert row["hdi_low"] < 0.966 < row["hdi_high"]


@pytest.mark.data
def test_summeval_geval35_less_stable_than_bleu(summeval_fit):
    post = summeval_fit.posterior["stability"]
    bleu = post.sel(variable="BLEU")
    # BLEU's two runs are identical up to storage round-off: stability is exactly 1
    assert float(bleu.min()) == 1.0
    for trait in ("COH", "CON", "FLU", "REL"):
        g35 = post.sel(variable=f"G.EVAL.3.5.{trait}")
        assert float((g35 < bleu).mean()) > 0.99
    tab = summeval_fit.summary()
    assert tab.loc[("stability", "G.EVAL.3.5.CON"), "hdi_high"] < 0.99


@pytest.mark.data
def test_summeval_fit_structure(summeval_fit, summeval):
    tab = summeval_fit.summary()
    check_table(tab)
    assert tab.index.names == ["estimand", "variable"]
    assert list(tab.columns) == ["classical", "mean", "sd", "hdi_low", "hdi_high", "r_hat",
                                 "ess_bulk", "ess_tail"]
    assert tab.attrs["ci_kind"] == "hdi" and tab.attrs["ci_prob"] == 0.94
    details = summeval_fit.details()
    assert list(details.columns) == ["kind", "metriceval", "median"]
    assert details.loc[("consistency", "Expert.1.COH"), "kind"] == "rating"
    variables = list(dict.fromkeys(tab.index.get_level_values("variable")))
    assert len(variables) == 43 + 12 and "Expert.1.COH" in variables
    # ratings are single-run: no stability, no run SD
    assert ("stability", "Expert.1.COH") not in tab.index
    assert ("sd_run", "Expert.1.COH") not in tab.index
    # deterministic metrics: run SD exactly 0
    assert tab.loc[("sd_run", "BLEU"), "mean"] == 0.0
    post = summeval_fit.posterior
    assert post["consistency"].dims == ("chain", "draw", "variable")
    assert summeval_fit.provenance["random_seed"] == 20231
    assert summeval_fit.provenance["data_hash"] == data_hash(summeval)
    assert post.attrs["data_hash"] == data_hash(summeval)
    assert post.attrs["sampler"] == "nutpie" and post.attrs["fast"] == 1
    text = str(summeval_fit)
    assert "FAST MODE" in text and "Consistency of system means over 100 items" in text
    assert "Items needed for reliability 0.9" in text


@pytest.mark.data
def test_decision_study_matches_fit_and_spearman_brown(summeval_fit):
    d = bm.decision_study(summeval_fit, n_items=[10, 50, 100, 400], n_runs=[1, 2])
    rho = d.posterior["reliability"]
    # rho(J, 1) is the consistency, draw by draw
    np.testing.assert_allclose(rho.sel(n_items=100, n_runs=1).values,
                               summeval_fit.posterior["consistency"].values, rtol=1e-12)
    tab = d.summary()
    check_table(tab)
    assert tab.index.names == ["estimand", "variable", "n_items", "n_runs"]
    # one run: classical curve = Spearman-Brown of alpha
    alpha = summeval_fit.summary().loc[("consistency", "Expert.2.REL"), "classical"]
    for j in (10, 50, 400):
        assert abs(tab.loc[("reliability", "Expert.2.REL", str(j), "1"), "classical"]
                   - spearman_brown(alpha, j / 100)) < 1e-10
    # single-run variables have no rows for two runs; metrics do
    assert ("reliability", "Expert.2.REL", "10", "2") not in tab.index
    assert ("reliability", "G.EVAL.4.COH", "10", "2") in tab.index
    # reliability increases with items; more runs help stochastic metrics only
    g = tab.xs(("reliability", "G.EVAL.3.5.CON", "1"),
               level=("estimand", "variable", "n_runs"))["mean"]
    assert g.is_monotonic_increasing
    assert (tab.loc[("reliability", "G.EVAL.3.5.CON", "10", "2"), "mean"]
            > tab.loc[("reliability", "G.EVAL.3.5.CON", "10", "1"), "mean"])
    assert (tab.loc[("reliability", "BLEU", "10", "2"), "mean"]
            == tab.loc[("reliability", "BLEU", "10", "1"), "mean"])
    need = d.items_needed()
    assert need.loc[("G.EVAL.4.COH", "1"), "classical"] == summeval_fit.summary().loc[
        ("items_needed", "G.EVAL.4.COH"), "classical"]
    assert need.loc[("G.EVAL.3.5.CON", "2"), "median"] < need.loc[("G.EVAL.3.5.CON", "1"),
                                                                   "median"]


@pytest.mark.data
def test_fig3_shape_subset_alpha_within_bands(summeval_fit, summeval):
    """MetricEval Fig. 3 computes alpha of random item subsets of growing size; for
    G-Eval-4-COH the subset averages lie inside the decision-study bands."""
    items = [10, 20, 40, 70, 100]
    d = bm.decision_study(summeval_fit, n_items=items, n_runs=[1], variables=["G.EVAL.4.COH"])
    tab = d.summary().xs(("reliability", "G.EVAL.4.COH", "1"),
                         level=("estimand", "variable", "n_runs"))
    for j in items:
        sub = bm.consistency(summeval, n_items=j, n_subsets=100, random_seed=j,
                             metrics=["G.EVAL.4.COH"]).summary()
        a = float(sub.loc[("alpha", "G.EVAL.4.COH"), "classical"])
        assert tab.loc[str(j), "hdi_low"] < a < tab.loc[str(j), "hdi_high"], (j, a)


@pytest.mark.data
def test_save_load_round_trip_is_lossless(summeval_fit, tmp_path):
    path = summeval_fit.save(tmp_path / "fit.nc")
    back = bm.load(path)
    assert type(back) is ts.TrueScoreResult
    check_table(back.summary())
    pd.testing.assert_frame_equal(back.summary(), summeval_fit.summary())
    pd.testing.assert_frame_equal(back.details(), summeval_fit.details())
    assert back.provenance == summeval_fit.provenance
    xr.testing.assert_identical(back.posterior, summeval_fit.posterior)
    xr.testing.assert_identical(back.idata.sample_stats, summeval_fit.idata.sample_stats)
    assert back.info == summeval_fit.info and back.notes == summeval_fit.notes
    assert str(back) == str(summeval_fit)
    assert (back.target, back.n_items) == (0.9, 100)
    # a decision study of the loaded fit equals that of the original
    d1 = bm.decision_study(summeval_fit, n_items=[20], n_runs=[1])
    d2 = bm.decision_study(back, n_items=[20], n_runs=[1])
    pd.testing.assert_frame_equal(d1.summary(), d2.summary())
    dpath = d1.save(tmp_path / "dstudy.nc")
    dback = bm.load(dpath)
    assert type(dback) is dsm.DecisionStudyResult
    check_table(dback.summary())
    pd.testing.assert_frame_equal(dback.summary(), d1.summary())
    pd.testing.assert_frame_equal(dback.details(), d1.details())
    pd.testing.assert_frame_equal(dback.items_needed(), d1.items_needed())
    assert str(dback) == str(d1)


@pytest.mark.data
def test_plots_return_figures(summeval_fit):
    fig = summeval_fit.plot(estimand="stability")
    assert isinstance(fig, matplotlib.figure.Figure)
    assert len(fig.axes[0].get_yticklabels()) == 43
    d = bm.decision_study(summeval_fit, n_items=[10, 50, 100], n_runs=[1])
    fig = d.plot(variables=["G.EVAL.4.COH", "METEOR"])
    assert len(fig.axes[0].lines) >= 2
    with pytest.raises(ValueError, match="estimand must be one of"):
        summeval_fit.plot(estimand="alpha")


def test_same_seed_same_draws_and_deterministic_metric():
    from bayesmeta import sampling

    ds = _sim(9)
    a = bm.reliability(ds, sampling="fast", random_seed=3)
    n_compiled = len(sampling._COMPILED)
    b = bm.reliability(ds, sampling="fast", random_seed=3)
    other = bm.reliability(_sim(10, S=12, I=30), sampling="fast", random_seed=3)
    assert len(sampling._COMPILED) == n_compiled  # same shape bucket: no recompilation
    assert other.posterior.sizes["variable"] == 3
    c = bm.reliability(ds, sampling="fast", random_seed=4)
    xr.testing.assert_equal(a.posterior, b.posterior)  # attrs differ in created_at only
    assert not np.array_equal(a.posterior["sd_system"].values, c.posterior["sd_system"].values)
    # m2 has identical runs (sd_run = 0): stability exactly 1, run SD exactly 0
    assert float(a.posterior["stability"].sel(variable="m2").min()) == 1.0
    assert float(a.posterior["sd_run"].sel(variable="m2").max()) == 0.0
    assert any("identical scores" in n for n in a.notes)


def test_coverage_small_version():
    """64 simulated datasets (one per quantity), fast mode: the 94% HDIs of consistency,
    stability and SEM cover the truth in most datasets. With exact calibration coverage is
    Binomial(64, .94) / 64; 0.80 is 4.6 SDs below .94 (the slow test uses 256 datasets and
    full draws, the benchmark prints the table)."""
    rng = np.random.default_rng(10)
    n = 64
    ds = simulate_true_score(10, n_systems=17, n_items=100, n_runs=2,
                             sd_system=rng.uniform(0.2, 0.8, n), sd_item=rng.uniform(0.2, 1, n),
                             sd_system_item=rng.uniform(0.4, 1.2, n),
                             sd_run=rng.uniform(0.05, 0.8, n))
    fit = bm.reliability(ds, sampling="fast", random_seed=10)
    cov = _coverage(fit, ds)
    for est in ("consistency", "stability", "sem"):
        assert cov[est] >= 0.80, cov


def _coverage(fit, ds):
    J = ds.sizes["item"]
    s2 = {k: ds[f"true_sd_{k}"].values ** 2 for k in ("system", "system_item", "run")}
    truth = {
        "consistency": gt.g_coefficient(s2["system"], s2["system_item"], s2["run"], J),
        "stability": gt.stability_coefficient(s2["system"], s2["system_item"], s2["run"], J),
        "sem": np.sqrt((s2["system_item"] + s2["run"]) / J),
        "sd_system": np.sqrt(s2["system"]),
    }
    tab = fit.summary()
    out = {}
    for est, t in truth.items():
        sub = tab.xs(est, level="estimand").loc[[str(m) for m in ds["metric"].values]]
        out[est] = float(((sub["hdi_low"] <= t) & (t <= sub["hdi_high"])).mean())
    return out


def _compare(a, b, names=("consistency", "stability", "sem", "sd_system", "sd_system_item",
                          "sd_run")):
    """Posterior means and SDs agree within 4 combined Monte Carlo standard errors (ArviZ
    mcse of the mean and of the SD): the two fits differ by sampling error only."""
    import arviz as az

    def mcse(x, method):
        v = np.asarray(x.values, dtype=float)  # (chain, draw)
        if method == "mean":
            return float(np.ravel(az.mcse(v, method="mean"))[0])
        # delta method on the variance (arviz's mcse(method="sd") breaks on numpy 2.4)
        dev2 = (v - v.mean()) ** 2
        mcse_var = dev2.std() / np.sqrt(float(np.ravel(az.ess(dev2))[0]))
        return mcse_var / (2 * v.std())

    for name in names:
        pa, pb = a.posterior[name], b.posterior[name]
        for q in pa["variable"].values:
            xa, xb = pa.sel(variable=q), pb.sel(variable=q)
            if float(xa.std()) == 0:
                assert float(xb.std()) == 0 and float(xa.mean()) == float(xb.mean())
                continue
            for stat, method in ((np.mean, "mean"), (np.std, "sd")):
                tol = 4 * np.hypot(mcse(xa, method), mcse(xb, method))
                assert abs(stat(xa.values) - stat(xb.values)) < tol, (name, q, method)


@pytest.mark.slow
def test_exact_and_full_likelihood_give_the_same_posterior():
    """Balanced data: the ANOVA (Box-Tiao) marginal and the random-effects likelihood are
    the same model, so their posteriors agree up to Monte Carlo error. (Slow tier: the
    random-effects model is a second compilation; its likelihood is checked against SciPy
    without sampling in test_full_likelihood_matches_multivariate_normal.)"""
    ds = _sim(11)
    kw = dict(sampling={"draws": 1000, "tune": 500, "chains": 2}, random_seed=12)
    exact = bm.reliability(ds, **kw)
    full = bm.reliability(ds, estimator="full", **kw)
    assert "exact ANOVA" in exact.info["likelihood"]
    assert "random effects" in full.info["likelihood"]
    _compare(exact, full)
    pd.testing.assert_series_equal(exact.summary()["classical"], full.summary()["classical"])


@pytest.mark.slow
def test_missing_cells_use_the_random_effects_likelihood():
    ds = _sim(13)
    rng = np.random.default_rng(14)
    y = ds["score"].values.copy()
    y[rng.random(y.shape) < 0.1] = np.nan
    y[:, :, 0, :] = ds["score"].values[:, :, 0, :]  # m1 stays complete
    holes = ds.copy(deep=True)
    holes["score"].values[:] = y
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bm.MissingDataWarning)
        fit = bm.reliability(holes, sampling="fast", random_seed=15)
    assert "exact ANOVA marginal (Box & Tiao) for 1 complete" in fit.info["likelihood"]
    assert "random effects for 2 incomplete" in fit.info["likelihood"]
    assert any("missing cells" in n for n in fit.notes)
    tab = fit.summary()
    # classical column of incomplete quantities = MetricEval's pairwise-complete alpha
    alpha = bm.consistency(holes).summary().xs("alpha", level="estimand")["classical"]
    assert abs(tab.loc[("consistency", "m3"), "classical"] - alpha["m3"]) < 1e-12
    # the truth of the simulation lies inside the 94% HDI
    s2 = {k: holes[f"true_sd_{k}"].values ** 2 for k in ("system", "system_item", "run")}
    true = gt.g_coefficient(s2["system"], s2["system_item"], s2["run"], 20)
    for k, q in enumerate(("m1", "m2", "m3")):
        assert tab.loc[("consistency", q), "hdi_low"] < true[k] < tab.loc[("consistency", q),
                                                                           "hdi_high"]
    assert tab.loc[("stability", "m2"), "mean"] == 1.0  # identical observed runs


def test_single_run_metrics_and_ratings(simulated):
    one = simulated.isel(run=[0])
    fit = bm.reliability(one, metrics=["metric01.COH"], raters=["Rater.1.COH"],
                         sampling="fast", random_seed=16)
    tab = fit.summary()
    assert set(tab.index.get_level_values("estimand")) == {
        "consistency", "sem", "items_needed", "sd_system", "sd_item", "sd_system_item"}
    ref = bm.consistency(one, metrics=["metric01.COH"]).summary()
    for q in ("metric01.COH", "Rater.1.COH"):
        assert abs(tab.loc[("consistency", q), "classical"]
                   - ref.loc[("alpha", q), "classical"]) < 1e-10
    with pytest.raises(ValueError, match="n_runs must be"):
        bm.decision_study(fit, n_runs=[0])


def test_constant_quantity_is_left_out_with_a_note():
    ds = _sim(17)
    ds["score"].values[:, :, 1, :] = 2.5
    with pytest.warns(UserWarning, match="left out constant"):
        fit = bm.reliability(ds, sampling="fast", random_seed=1)
    assert "m2" not in fit.summary().index.get_level_values("variable")
    assert any("m2" in n for n in fit.notes)


def _with_judgment(seed=23):
    """Three simulated metrics plus a continuous judgment ('fact', e.g. an average over
    annotators) drawn from the same generalizability model with one run."""
    ds = _sim(seed)
    one = simulate_true_score(seed + 1, n_systems=8, n_items=20, n_runs=1, sd_system=0.5,
                              sd_item=0.4, sd_system_item=0.7, sd_run=0.0)
    judged = one["score"].isel(metric=0, run=0, drop=True).values
    return ds.assign(judgment=(("system", "item", "trait"), judged[..., None])
                     ).assign_coords(trait=["fact"])


def test_judgment_is_fitted_as_a_single_run_variable(tmp_path):
    """A continuous judgment is a single-run variable: its classical consistency is
    coefficient alpha of its (system x item) matrix (Hoyt 1941), it has no stability row,
    and the fit saves and loads without loss."""
    ds = _with_judgment()
    fit = bm.reliability(ds, sampling="fast", random_seed=24)
    tab, det = fit.summary(), fit.details()
    check_table(tab)
    assert det.loc[("consistency", "fact"), "kind"] == "judgment"
    alpha = float(cronbach_alpha(ds["judgment"].sel(trait="fact").values))
    assert abs(tab.loc[("consistency", "fact"), "classical"] - alpha) < 1e-10
    assert ("stability", "fact") not in tab.index and ("sd_run", "fact") not in tab.index
    assert "1 judgment(s)" in fit.info["data"]
    back = bm.load(fit.save(tmp_path / "judged.nc"))
    pd.testing.assert_frame_equal(back.summary(), tab)
    pd.testing.assert_frame_equal(back.details(), det)
    without = tb.collect(ds, judgments=False)
    assert without.labels == ["m1", "m2", "m3"]
    d = bm.decision_study(fit, n_items=[10, 40], n_runs=[1, 2])
    check_table(d.summary())
    assert ("reliability", "fact", "10", "2") not in d.summary().index  # single-run
    dback = bm.load(d.save(tmp_path / "dstudy.nc"))
    pd.testing.assert_frame_equal(dback.summary(), d.summary())
    pd.testing.assert_frame_equal(dback.details(), d.details())
    pd.testing.assert_frame_equal(dback.items_needed(), d.items_needed())


def test_old_sampler_keywords_are_refused():
    """``fast=``, ``progressbar=`` (reliability) and ``items=``/``runs=`` (decision study)
    of the previous release are errors naming them: ``sampling=`` and ``n_items=``/
    ``n_runs=`` are the one spelling."""
    ds = _sim(25)
    new = bm.reliability(ds, sampling={"fast": True}, random_seed=5)
    for old in ({"fast": True}, {"progressbar": False}, {"draw": 10}):
        with pytest.raises(TypeError, match=next(iter(old))):
            bm.reliability(ds, random_seed=5, **old)
    with pytest.raises(TypeError, match="items"):
        bm.decision_study(new, items=[10], runs=[1])
    with pytest.raises(ValueError, match="'m9' is not a label of dim 'variable'"):
        bm.decision_study(new, variables=["m9"])


def test_decision_study_classical_curve_matches_closed_form():
    """The classical curve of a decision study is rho(J', R') of the ANOVA components
    (brute-force sums of squares, Brennan 2001 ch. 4), and the items needed solve
    rho(J*, R') = target."""
    ds = _sim(26)
    y = ds["score"].sel(metric="m3").values  # (S, I, R), free run noise
    S, I, R = y.shape
    ms = _brute_ss(y) / np.array([S - 1, I - 1, (S - 1) * (I - 1), S * I * (R - 1)])
    s2_e = ms[3]
    s2_si = (ms[2] - s2_e) / R
    s2_s = (ms[0] - ms[2]) / (I * R)
    fit = bm.reliability(ds, sampling="fast", random_seed=27)
    tab = bm.decision_study(fit, n_items=[7, 40], n_runs=[1, 3]).summary()
    for j in (7, 40):
        for r in (1, 3):
            ref = s2_s / (s2_s + s2_si / j + s2_e / (j * r))
            got = tab.loc[("reliability", "m3", str(j), str(r)), "classical"]
            assert abs(got - ref) < 1e-10, (j, r)
    for r in (1, 3):
        need = np.ceil(0.9 / 0.1 * (s2_si + s2_e / r) / s2_s - 1e-9)
        assert tab.loc[("items_needed", "m3", "", str(r)), "classical"] == need


# ----------------------------------------------------------------------------- slow tier
@pytest.mark.slow
def test_coverage_256_datasets_full_draws():
    """Calibration: 256 SummEval-shaped datasets with known components, 4 chains x 1000
    draws; every coverage within [0.88, 0.99] (benchmarks/coverage_true_score.py prints the
    full table)."""
    rng = np.random.default_rng(20)
    n = 256
    ds = simulate_true_score(20, n_systems=17, n_items=100, n_runs=2,
                             sd_system=rng.uniform(0.2, 0.8, n), sd_item=rng.uniform(0.2, 1, n),
                             sd_system_item=rng.uniform(0.4, 1.2, n),
                             sd_run=rng.uniform(0.05, 0.8, n))
    fit = bm.reliability(ds, random_seed=20)
    cov = _coverage(fit, ds)
    for c in cov.values():
        assert 0.88 <= c <= 0.99, cov


@pytest.mark.slow
def test_pymc_fallback_agrees_with_nutpie():
    ds = _sim(21)
    opts = bm.SamplerOptions(draws=1000, tune=500, chains=2, cores=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        a = bm.reliability(ds, sampling=opts, random_seed=22)
        b = bm.reliability(ds, sampling=opts.replace(sampler="pymc"), random_seed=22)
    assert b.posterior.attrs["sampler"] == "pymc"
    _compare(a, b, names=("consistency", "stability", "sem"))
