"""Classical reliability: alpha, SEM, stability, Spearman-Brown, rank normalisation.

References: pingouin (alpha), scipy (Pearson, normal quantiles), closed forms, and the
numbers MetricEval reports for SummEval (Xiao et al. 2023, Sec. 4.1.1 and Table 1)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pingouin as pg
import pytest
import xarray as xr
from scipy import stats

import bayesmeta as bm
from bayesmeta.reliability.classical import cronbach_alpha, pairwise_covariance
from bayesmeta.summaries import check_table


def _matrix(seed: int = 0, s: int = 17, j: int = 30) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.normal(size=(s, 1)) + rng.normal(size=(s, j)) * 1.5 + rng.normal(size=(1, j))


def test_alpha_equals_pingouin_complete():
    y = _matrix()
    ref = pg.cronbach_alpha(pd.DataFrame(y))[0]
    assert cronbach_alpha(y) == pytest.approx(ref, abs=1e-10)


def test_alpha_equals_pingouin_pairwise_with_missing():
    y = _matrix(1)
    rng = np.random.default_rng(2)
    y[rng.random(y.shape) < 0.1] = np.nan
    ref = pg.cronbach_alpha(pd.DataFrame(y), nan_policy="pairwise")[0]
    assert cronbach_alpha(y) == pytest.approx(ref, abs=1e-10)


def test_pairwise_covariance_matches_pandas():
    y = _matrix(4, j=6)
    y[[0, 3, 5], [1, 2, 2]] = np.nan
    np.testing.assert_allclose(pairwise_covariance(y), pd.DataFrame(y).cov().values, atol=1e-12)


def test_alpha_is_vectorised_over_leading_dims():
    ys = np.stack([_matrix(k) for k in range(3)])
    np.testing.assert_allclose(cronbach_alpha(ys), [cronbach_alpha(y) for y in ys], atol=1e-14)


def test_consistency_table_matches_direct_computation(simulated):
    res = bm.consistency(simulated)
    tab = res.summary()
    check_table(tab)
    assert tab.index.names == ["estimand", "variable"]
    assert list(tab.columns) == ["classical", "classical_low", "classical_high"]
    y = simulated["score"].sel(metric="metric03.FLU", run="1").values
    alpha = pg.cronbach_alpha(pd.DataFrame(y))[0]
    sd = np.std(y.mean(axis=1), ddof=1)
    assert tab.loc[("alpha", "metric03.FLU"), "classical"] == pytest.approx(alpha, abs=1e-10)
    assert tab.loc[("sem", "metric03.FLU"), "classical"] == pytest.approx(
        sd * np.sqrt(1 - alpha), abs=1e-12)
    r = simulated["rating"].sel(rater="Rater.2", trait="REL").values
    assert tab.loc[("alpha", "Rater.2.REL"), "classical"] == pytest.approx(
        pg.cronbach_alpha(pd.DataFrame(r))[0], abs=1e-10)
    details = res.details()
    assert details.loc[("alpha", "metric03.FLU"), "sd_system_mean"] == pytest.approx(sd,
                                                                                abs=1e-12)
    assert set(details["kind"]) == {"metric", "rating"}
    assert (details["n_systems"] == 17).all() and (details["n_items"] == 100).all()
    assert len(tab) == 2 * (12 + 12)
    assert "random_seed" not in res.provenance  # nothing random without subsets


def test_consistency_random_subsets_reproducible_and_correct(simulated):
    a = bm.consistency(simulated, n_items=20, n_subsets=30, random_seed=7, raters=False)
    b = bm.consistency(simulated, n_items=20, n_subsets=30, random_seed=7, raters=False)
    pd.testing.assert_frame_equal(a.summary(), b.summary())
    tab = a.summary()
    check_table(tab)
    assert tab.attrs["classical_ci_kind"] == "range over random item subsets"
    assert tab.attrs["classical_ci_prob"] == 0.94
    assert a.provenance["random_seed"] == 7
    # direct loop with the same subsets
    rng = np.random.default_rng(7)
    subsets = np.unique(np.sort(np.stack([rng.choice(100, 20, replace=False)
                                          for _ in range(30)]), axis=1), axis=0)
    y = simulated["score"].sel(metric="metric05.COH", run="1").values
    alphas = [pg.cronbach_alpha(pd.DataFrame(y[:, c]))[0] for c in subsets]
    sems = [np.std(y[:, c].mean(axis=1), ddof=1) * np.sqrt(1 - al)
            for c, al in zip(subsets, alphas, strict=True)]
    row = tab.loc[("alpha", "metric05.COH")]
    assert row["classical"] == pytest.approx(np.mean(alphas), abs=1e-10)
    # default ci_prob 0.94: the central 94% range across subsets
    assert row["classical_low"] == pytest.approx(np.quantile(alphas, 0.03), abs=1e-10)
    assert row["classical_high"] == pytest.approx(np.quantile(alphas, 0.97), abs=1e-10)
    row = tab.loc[("sem", "metric05.COH")]
    assert row["classical"] == pytest.approx(np.mean(sems), abs=1e-10)
    assert row["classical_low"] == pytest.approx(np.quantile(sems, 0.03), abs=1e-10)
    assert (a.details()["n_items"] == 20).all()
    c95 = bm.consistency(simulated, n_items=20, n_subsets=30, random_seed=7, raters=False,
                         ci_prob=0.95).summary()
    assert c95.loc[("alpha", "metric05.COH"), "classical_low"] == pytest.approx(
        np.quantile(alphas, 0.025), abs=1e-10)


def test_consistency_draws_and_records_a_seed(simulated):
    res = bm.consistency(simulated, n_items=10, n_subsets=5, raters=False)
    seed = res.provenance["random_seed"]
    again = bm.consistency(simulated, n_items=10, n_subsets=5, raters=False, random_seed=seed)
    pd.testing.assert_frame_equal(res.summary(), again.summary())
    assert f"seed:{seed}" in res.signature()


def test_consistency_all_items_equals_no_subsets(simulated):
    a = bm.consistency(simulated, raters=False).summary()
    b = bm.consistency(simulated, n_items=100, raters=False).summary()
    pd.testing.assert_frame_equal(a, b)


def test_consistency_refuses_the_old_spellings(simulated):
    """Positional options and ``ratings=`` of the previous release are errors (no shim)."""
    with pytest.raises(TypeError, match="positional"):
        bm.consistency(simulated, 20, 10, 3, raters=False)
    with pytest.raises(TypeError, match="'ratings'"):
        bm.consistency(simulated, ratings=False)
    with pytest.raises(TypeError, match="unexpected keyword argument"):
        bm.consistency(simulated, n_item=20)


def test_consistency_of_judgments_and_references(simulated):
    ds = simulated.copy()
    judged = simulated["rating"].mean("rater").sel(trait="FLU")
    ds["judgment"] = judged.expand_dims(trait=ds["trait"].values).where(
        ds["trait"] == "FLU").transpose("system", "item", "trait")
    ds["rating"] = ds["rating"].where(ds["trait"] != "FLU")
    res = bm.consistency(ds, metrics=["metric03.FLU"])
    tab = res.summary()
    check_table(tab)
    ref = pg.cronbach_alpha(pd.DataFrame(judged.transpose("system", "item").values))[0]
    assert tab.loc[("alpha", "FLU"), "classical"] == pytest.approx(ref, abs=1e-10)
    assert res.details().loc[("alpha", "FLU"), "kind"] == "judgment"
    assert "Rater.1.FLU" not in tab.index.get_level_values("variable")
    no_judgment = bm.consistency(ds, metrics=["metric03.FLU"], judgments=False).summary()
    assert "FLU" not in no_judgment.index.get_level_values("variable")


def test_consistency_bad_arguments(simulated):
    with pytest.raises(ValueError, match="n_items must be between 2 and the number of items"):
        bm.consistency(simulated, n_items=1)
    with pytest.raises(ValueError, match="'nope' is not a label of dim 'metric'"):
        bm.consistency(simulated, metrics=["nope"])
    with pytest.raises(ValueError, match="'x' is not a label of dim 'run'"):
        bm.consistency(simulated, run="x")
    with pytest.raises(ValueError, match="ci_prob must lie strictly between 0 and 1"):
        bm.consistency(simulated, ci_prob=95)
    with pytest.raises(ValueError, match="consistency needs at least 2 items"):
        bm.consistency(simulated.isel(item=[0]))


def test_stability_equals_scipy_pearson(simulated):
    res = bm.stability(simulated)
    tab = res.summary()
    check_table(tab)
    assert tab.index.names == ["estimand", "metric"]
    assert tab.attrs["classical_ci_kind"] == "Fisher z"
    assert tab.attrs["classical_ci_prob"] == 0.94
    means = simulated["score"].mean("item")
    for m in ("metric11.FLU", "metric12.REL", "metric01.COH"):
        x = means.sel(metric=m, run="1").values
        y = means.sel(metric=m, run="2").values
        assert tab.loc[("stability", m), "classical"] == pytest.approx(stats.pearsonr(x, y)[0],
                                                                       abs=1e-12)
    r, n = tab.loc[("stability", "metric11.FLU"), "classical"], 17
    z = np.arctanh(r)
    half = stats.norm.ppf(0.97) / np.sqrt(n - 3)  # default ci_prob 0.94
    assert tab.loc[("stability", "metric11.FLU"), "classical_low"] == pytest.approx(
        np.tanh(z - half), abs=1e-12)
    assert tab.loc[("stability", "metric11.FLU"), "classical_high"] == pytest.approx(
        np.tanh(z + half), abs=1e-12)
    # R: cor.test(x, y, conf.level = 0.95)$conf.int is the Fisher z interval
    low95 = bm.stability(simulated, ci_prob=0.95).summary().loc[
        ("stability", "metric11.FLU"), "classical_low"]
    assert low95 == pytest.approx(np.tanh(z - stats.norm.ppf(0.975) / np.sqrt(n - 3)),
                                  abs=1e-12)
    assert (res.details()["n_systems"] == 17).all() and (res.details()["n_runs"] == 2).all()


def test_stability_selects_metrics_and_needs_two_runs(simulated):
    tab = bm.stability(simulated, metrics=["metric02.CON"]).summary()
    assert tab.index.tolist() == [("stability", "metric02.CON")]
    with pytest.raises(ValueError, match="stability needs at least 2 runs"):
        bm.stability(simulated.isel(run=[0]))
    with pytest.raises(ValueError, match="'nope' is not a label of dim 'metric'"):
        bm.stability(simulated, metrics=["nope"])


def test_stability_of_several_runs_is_the_mean_pairwise_correlation(simulated):
    third = simulated["score"].isel(run=[1]).assign_coords(run=["3"]) * 1.1
    ds = simulated.drop_vars(["score", "run"]).assign(
        score=xr.concat([simulated["score"], third], dim="run"))
    res = bm.stability(ds, metrics=["metric11.FLU"])
    means = ds["score"].sel(metric="metric11.FLU").mean("item")
    rs = [stats.pearsonr(means.sel(run=a), means.sel(run=b))[0]
          for a, b in (("1", "2"), ("1", "3"), ("2", "3"))]
    assert res.summary().loc[("stability", "metric11.FLU"), "classical"] == pytest.approx(
        np.mean(rs), abs=1e-12)
    assert "classical_low" not in res.summary().columns
    check_table(res.summary())


def test_spearman_brown_and_items_needed_closed_form():
    assert bm.spearman_brown(0.5, 3) == pytest.approx(0.75, abs=1e-15)
    assert bm.spearman_brown(0.8, 1) == pytest.approx(0.8, abs=1e-15)
    need = bm.items_needed(0.7, 40, target=0.9)
    # the smallest J with SB(0.7, J / 40) >= 0.9
    assert bm.spearman_brown(0.7, need / 40) >= 0.9 - 1e-12
    assert bm.spearman_brown(0.7, (need - 1) / 40) < 0.9
    assert np.isnan(bm.items_needed(-0.1, 40))
    with pytest.raises(ValueError, match="target must be in"):
        bm.items_needed(0.5, 10, target=1.2)


def test_rank_normalize_matches_metriceval_formula():
    x = np.array([3.0, 1.0, 2.0, 2.0, 10.0, np.nan, -4.0])
    z = bm.rank_normalize(x)
    ok = ~np.isnan(x)
    ecdf = stats.rankdata(x[ok], method="max") / ok.sum()
    q = stats.norm.ppf(0.001 + 0.998 * ecdf)
    np.testing.assert_allclose(z[ok], (q - q.mean()) / q.std(), atol=1e-12)
    assert np.isnan(z[5])


# ---------------------------------------------------------------- SummEval (MetricEval)
def test_summeval_meteor_consistency_and_sem(summeval):
    res = bm.consistency(summeval)
    tab = res.summary()
    check_table(tab)
    alpha = tab.xs("alpha", level="estimand")["classical"]
    sem = tab.xs("sem", level="estimand")["classical"]
    # MetricEval Sec. 4.1.1: "metric consistency estimate was .966 ... .38 x sqrt(1 - .966)
    # ~= .07"; the paper rounds to 3 and 2 decimals, hence the tolerances.
    assert alpha["METEOR"] == pytest.approx(0.966, abs=5e-4)
    assert sem["METEOR"] == pytest.approx(0.07, abs=5e-3)
    assert res.details().loc[("alpha", "METEOR"), "sd_system_mean"] == pytest.approx(
        0.38, abs=5e-3)
    # ROUGE-4 less consistent than ROUGE-1 (0.896 vs 0.959)
    assert alpha["ROUGE.4"] == pytest.approx(0.896, abs=5e-4)
    assert alpha["ROUGE.1"] == pytest.approx(0.959, abs=5e-4)
    # MetricEval Table 1 diagonal (2 decimals)
    assert alpha["Expert.1.COH"] == pytest.approx(0.96, abs=5e-3)
    assert alpha["Expert.3.REL"] == pytest.approx(0.90, abs=5e-3)


def test_summeval_stability(summeval):
    tab = bm.stability(summeval).summary()
    check_table(tab)
    r = tab.xs("stability", level="estimand")["classical"]
    for m in ("BLEU", "METEOR", "ROUGE.1", "BertScore_f1"):
        assert round(r[m], 3) == 1.0
    # LLM metrics are less stable (MetricEval Fig. 2: G-Eval-3.5-COH about .97)
    assert r["G.EVAL.3.5.COH"] == pytest.approx(0.97, abs=0.01)
    assert r["G.EVAL.3.5.COH"] < r["G.EVAL.4.COH"]


def test_alpha_is_nan_not_huge_when_the_total_score_has_no_variance():
    """Two items that cancel exactly (x and c - x) give a constant total score: alpha is
    undefined. Round-off used to turn 0/0 into values like 1.4e16 (found by the
    relabelling property test)."""
    from bayesmeta.reliability.classical import cronbach_alpha

    x = np.array([0.1, 0.7, 0.3, 0.9, 0.2]) * 3.7
    y = np.column_stack([x, 1.3 - x, np.full(5, 0.4)])
    assert np.isnan(cronbach_alpha(y))
    assert np.isnan(cronbach_alpha(np.ones((5, 3))))
    ok = np.array([[1., 2, 2], [2, 3, 3], [4, 4, 5], [5, 5, 4]])
    assert cronbach_alpha(ok) == pytest.approx(0.9444444444, abs=1e-9)  # pingouin/psych


def _psych_alpha_ci() -> pd.DataFrame:
    from pathlib import Path

    path = Path(__file__).parent / "results" / "alpha_ci_psych.csv"
    return pd.read_csv(path, comment="#", skipinitialspace=True)


def test_feldt_interval_equals_psych_alpha_ci():
    """Frozen psych::alpha.ci values (tests/results/make_alpha_ci_reference.R)."""
    from bayesmeta.reliability.classical import feldt_interval

    ref = _psych_alpha_ci()
    assert len(ref) == 8
    for _, row in ref.iterrows():
        lo, hi = feldt_interval(row["alpha"], row["n"], row["k"], row["ci_prob"])
        assert float(lo) == pytest.approx(row["lower"], abs=1e-9)
        assert float(hi) == pytest.approx(row["upper"], abs=1e-9)


def test_consistency_alpha_carries_feldt_interval():
    """n = systems (examinees), k = items (parts): the interval equals psych::alpha.ci's
    formula with those counts; SEM gets the chi-square interval of MS_e / k."""
    ds = bm.datasets.simulated()
    res = bm.consistency(ds, metrics=["metric01.COH", "metric02.CON"], raters=False,
                         judgments=False, ci_prob=0.9)
    tab = res.summary()
    check_table(tab)
    alpha = tab.xs("alpha", level="estimand")
    n, k = ds.sizes["system"], ds.sizes["item"]
    a = alpha["classical"].to_numpy()
    np.testing.assert_allclose(alpha["classical_low"],
                               1 - (1 - a) * stats.f.ppf(0.95, n - 1, (n - 1) * (k - 1)),
                               rtol=0, atol=1e-12)
    np.testing.assert_allclose(alpha["classical_high"],
                               1 - (1 - a) * stats.f.ppf(0.05, n - 1, (n - 1) * (k - 1)),
                               rtol=0, atol=1e-12)
    sem = tab.xs("sem", level="estimand")
    nu = (n - 1) * (k - 1)
    s = sem["classical"].to_numpy()
    np.testing.assert_allclose(sem["classical_low"], s * np.sqrt(nu / stats.chi2.ppf(0.95, nu)),
                               rtol=1e-12)
    np.testing.assert_allclose(sem["classical_high"],
                               s * np.sqrt(nu / stats.chi2.ppf(0.05, nu)), rtol=1e-12)
    assert tab.attrs["classical_ci_kind"] == "Feldt F (alpha), chi-square (SEM)"
    assert tab.attrs["classical_ci_prob"] == pytest.approx(0.9)


def test_feldt_interval_covers_the_true_alpha():
    """Simulation with known truth: parallel items, true alpha = k*rho/(1+(k-1)*rho); the
    94% interval covers it in 94% of 2,000 data sets (binomial SE 0.5%, tolerance 2%)."""
    from bayesmeta.reliability.classical import feldt_interval

    rng = np.random.default_rng(7)
    n, k, rho = 25, 6, 0.3
    truth = k * rho / (1 + (k - 1) * rho)
    t = rng.normal(size=(2000, n, 1)) * np.sqrt(rho)
    y = t + rng.normal(size=(2000, n, k)) * np.sqrt(1 - rho)
    lo, hi = feldt_interval(cronbach_alpha(y), n, k, 0.94)
    assert np.mean((lo <= truth) & (truth <= hi)) == pytest.approx(0.94, abs=0.02)


def test_sem_is_the_anova_residual_mean_square_over_items():
    """The identity behind the SEM interval: s_X^2 (1 - alpha) = MS_residual / k of the
    two-way system x item ANOVA (computed here from its sums of squares)."""
    rng = np.random.default_rng(3)
    y = rng.normal(size=(12, 1)) + rng.normal(size=(1, 7)) + rng.normal(size=(12, 7))
    n, k = y.shape
    resid = y - y.mean(1, keepdims=True) - y.mean(0, keepdims=True) + y.mean()
    ms_e = (resid ** 2).sum() / ((n - 1) * (k - 1))
    sem = np.std(y.mean(1), ddof=1) * np.sqrt(1 - cronbach_alpha(y))
    assert float(sem) ** 2 == pytest.approx(ms_e / k, rel=1e-12)


def test_sem_interval_covers_the_true_sem():
    """Simulation with known truth (parallel items plus item effects): the true SEM of a
    system mean is sqrt((1 - rho) / k); the 94% interval covers it in 94% of 2,000 data
    sets (binomial SE 0.5%, tolerance 2%)."""
    from bayesmeta.reliability.classical import sem_interval, standard_error_of_measurement

    rng = np.random.default_rng(11)
    n, k, rho = 17, 8, 0.4
    truth = np.sqrt((1 - rho) / k)
    t = rng.normal(size=(2000, n, 1)) * np.sqrt(rho)
    y = t + rng.normal(size=(2000, 1, k)) + rng.normal(size=(2000, n, k)) * np.sqrt(1 - rho)
    sem = standard_error_of_measurement(y.mean(axis=2), cronbach_alpha(y))
    lo, hi = sem_interval(sem, n, k, 0.94)
    assert np.mean((lo <= truth) & (truth <= hi)) == pytest.approx(0.94, abs=0.02)
