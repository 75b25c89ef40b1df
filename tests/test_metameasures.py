"""Discriminative power, ranking consistency, granularity and the App. C simulator, against
direct computations and simulation truth."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import bayesmeta as bm
from bayesmeta.correlation.measures import MEASURES, correlation_measures
from bayesmeta.correlation.metameasures import coarsen
from bayesmeta.correlation.resampling import permutation_test
from bayesmeta.simulate import simulate_correlation_study
from bayesmeta.summaries import check_table


@pytest.fixture(scope="module")
def five(simulated):
    return simulated.isel(metric=slice(0, 5))


def test_discriminative_power_is_mean_pvalue(five):
    dp = bm.discriminative_power(five, "COH", resampling={"n_permutations": 99},
                                 random_seed=3)
    x = five["score"].isel(run=0).transpose("metric", "system", "item")
    z = five["rating"].sel(trait="COH").mean("rater")
    tests = permutation_test(x, z, n_permutations=99, random_seed=3)
    tab, det = dp.summary(), dp.details()
    check_table(tab)
    assert tab.index.names == ["estimand", "measure"]
    assert set(tab.index.get_level_values("estimand")) == {"discriminative_power"}
    assert list(tab.index.get_level_values("measure")) == list(MEASURES)
    assert dp.provenance["random_seed"] == 3
    np.testing.assert_allclose(tab["classical"].values, tests["pvalue"].mean("pair").values,
                               rtol=0, atol=1e-15)
    assert (det["n_pairs"] == 10).all()
    assert det["rank"].min() == 1
    with pytest.raises(TypeError, match="n_permutations"):
        bm.discriminative_power(five, "COH", n_permutations=99, random_seed=3)
    curve = dp.extra["curve"].values
    assert (np.diff(curve, axis=1) <= 0).all()  # sorted descending
    np.testing.assert_allclose(curve.mean(1), tab["classical"].values, atol=1e-15)


def test_ranking_consistency_equals_direct_splits(five):
    n_trials = 6
    rc = bm.ranking_consistency(five, "COH", resampling={"n_resamples": n_trials}, random_seed=9)
    x = five["score"].isel(run=0).transpose("metric", "system", "item").values
    z = five["rating"].sel(trait="COH").mean("rater").values
    rng = np.random.default_rng(9)
    I = x.shape[2]
    taus = []
    for _ in range(n_trials):
        perm = rng.permutation(I)
        h1, h2 = perm[: I // 2], perm[I // 2:]
        r1 = correlation_measures(x[:, :, h1], z[:, h1]).values
        r2 = correlation_measures(x[:, :, h2], z[:, h2]).values
        taus.append([stats.kendalltau(r1[:, k], r2[:, k])[0] for k in range(len(MEASURES))])
    np.testing.assert_allclose(rc.extra["taus"].values, np.array(taus), rtol=0, atol=1e-12)
    tab = rc.summary()
    check_table(tab)
    assert tab.index.names == ["estimand", "measure"]
    assert set(tab.index.get_level_values("estimand")) == {"ranking_consistency"}
    np.testing.assert_allclose(tab["classical"].values, np.mean(taus, 0), atol=1e-12)
    assert list(rc.details().columns) == ["rank", "trial_sd", "mc_se"]
    assert rc.provenance["random_seed"] == 9


def test_coarsen():
    v = np.array([0.1, 0.5, 0.5, 0.9, np.nan, 2.0, 3.0, 4.0])
    c = coarsen(v, 3)
    assert np.isnan(c[4])
    assert set(c[~np.isnan(c)]) <= {1, 2, 3}
    assert c[1] == c[2]  # ties stay together
    assert (np.diff(c[[0, 1, 3, 5, 6, 7]]) >= 0).all()  # order kept


def test_granularity_real_data(simulated):
    g = bm.granularity(simulated, "COH", metric="metric01.COH", levels=[2, 5])
    check_table(g.summary())
    assert g.summary().index.names == ["estimand", "level"]
    tab = g.table()
    assert tab.shape == (3, 12)
    assert list(tab.columns) == list(MEASURES)
    full = bm.correlations(simulated, "COH", metrics=["metric01.COH"],
                           resampling={"n_resamples": 0}).table()
    np.testing.assert_allclose(tab.iloc[-1].values, full.values[0], atol=0)
    h = bm.granularity(simulated, "COH", metric="metric01.COH", target="human").table()
    assert list(h.index) == [5, 9, 13]  # 1, 2, 3 raters on 1..5
    with pytest.raises(ValueError, match="target must be"):
        bm.granularity(simulated, "COH", metric="metric01.COH", target="both")


def test_simulator_truth_and_granularity():
    """App. C model: the sample item- and global-level Pearson correlations centre on the
    model's values over replicates (tolerance: 4 standard errors of the replicate mean)."""
    vals = []
    for seed in range(40):
        sim = simulate_correlation_study(seed, n_systems=16, n_items=100)
        x = sim["score"].isel(run=0).transpose("metric", "system", "item")
        vals.append(correlation_measures(x, sim["human"], measures=[
            "within_system_pearson", "global_pearson"]).values[0])
    vals = np.array(vals)
    se = vals.std(0, ddof=1) / np.sqrt(len(vals))
    truth = [sim.attrs["true_item_pearson"], sim.attrs["true_global_pearson"]]
    assert np.all(np.abs(vals.mean(0) - truth) < 4 * se + 0.005), (vals.mean(0), truth)
    g = bm.granularity_simulation(metric_levels=[2, 13], n_replicates=8, random_seed=0,
                                  measures=["global_pearson", "system_kendall"])
    check_table(g.summary())
    assert g.provenance["random_seed"] == 0
    assert list(g.details().columns) == ["replicate_sd"]
    t = g.table()
    assert list(t.index) == [0, 2, 13]
    # a two-level metric agrees less with humans than the continuous one (Pearson, global)
    assert t.loc[2, "global_pearson"] < t.loc[0, "global_pearson"]
    ds = simulate_correlation_study(0, human_levels=13, metric_levels=(5,))
    bm.validate(ds)
    assert set(np.unique(ds["rating"].values)) <= set(range(1, 14))


def test_plots_return_axes(five):
    import matplotlib

    matplotlib.use("Agg")
    from bayesmeta.correlation.plots import (
        plot_beats_heatmap,
        plot_pvalue_curves,
        plot_rank_distribution,
    )

    dp = bm.discriminative_power(five, "COH", measures="global",
                                 resampling={"n_permutations": 19}, random_seed=0)
    assert plot_pvalue_curves(dp).get_xlabel().startswith("metric pairs")
    cmp_ = bm.compare_metrics(five, "COH", measures="global_pearson",
                              resampling={"n_resamples": 50, "n_permutations": 0},
                              random_seed=0)
    assert plot_rank_distribution(cmp_, measure="global_pearson").get_title()
    assert plot_beats_heatmap(cmp_, measure="global_pearson").get_title()


def test_summeval_ranking_consistency_runs(summeval):
    """Real data, a few splits: every measure's consistency is a valid tau."""
    rc = bm.ranking_consistency(summeval, "COH", measures="global", resampling={"n_resamples": 10},
                                random_seed=0).summary()
    check_table(rc)
    assert rc["classical"].between(-1, 1).all()
    assert rc["classical"].min() > 0.3  # rankings of 43 metrics on halves agree clearly
