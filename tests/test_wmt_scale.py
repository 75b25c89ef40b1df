"""A WMT campaign per language pair, in a loop or on dask (issue 25, item 3).

References: each language pair's rows are checked against the single-language-pair
functions that were tested on their own (:func:`bayesmeta.soft_pairwise_accuracy`, the
correlation engine's ``bootstrap`` / ``bayesian_bootstrap``) with the recorded seed, to
1e-12; every dask scheduler (and a ``LocalCluster`` of two workers) against the plain loop,
to 1e-12."""

from __future__ import annotations

import sys

import numpy as np
import pytest
import scipy.stats
import xarray as xr

import bayesmeta as bm
from bayesmeta.correlation.resampling import bayesian_bootstrap, bootstrap
from bayesmeta.wmt.scale import WMT_MEASURES
from bayesmeta.wmt.simulate import (
    language_pair_seed,
    simulate_campaign,
    simulate_language_pairs,
)

OPTS = {"n_resamples": 30, "n_permutations": 60}
TOL = 1e-12


@pytest.fixture(scope="module")
def campaign():
    return simulate_language_pairs(3, 6, 25, 4, random_seed=3)


@pytest.fixture(scope="module")
def loop(campaign):
    return bm.wmt_statistics(campaign, "quality", random_seed=11, resampling=OPTS)


def _close(res, ref):
    a, b = res.summary(), ref.summary()
    assert a.index.equals(b.index)
    np.testing.assert_allclose(a.to_numpy(float), b.to_numpy(float), rtol=0, atol=TOL)
    for k in ("bootstrap", "posterior"):
        np.testing.assert_allclose(res.extra[k].values, ref.extra[k].values, rtol=0, atol=TOL)


def test_simulator_pairs_are_simulate_campaign_with_their_seed(campaign):
    """Language pair k is simulate_campaign with the derived seed; lazy equals eager."""
    seed = language_pair_seed(3, "lp01")
    one = simulate_campaign(6, 25, 4, scale="mqm", random_seed=seed)
    np.testing.assert_array_equal(campaign["score"].sel(lp="lp01").values, one["score"].values)
    np.testing.assert_array_equal(campaign["judgment"].sel(lp="lp01").values,
                                  one["judgment"].values)
    pytest.importorskip("dask")
    lazy = simulate_language_pairs(3, 6, 25, 4, random_seed=3, lazy=True)
    assert lazy["score"].chunks[0] == (1, 1, 1)
    np.testing.assert_array_equal(lazy["score"].values, campaign["score"].values)


def test_rows_equal_the_single_language_pair_functions(campaign, loop):
    """One language pair's classical values, bootstrap and Bayesian-bootstrap draws are
    those of soft_pairwise_accuracy and the correlation engine with its recorded seed
    (systems and items resampled, named explicitly: the engine's unit)."""
    lp = "lp02"
    s = int(loop.details().xs(lp, level="lp")["seed"].iloc[0])
    assert s == language_pair_seed(11, lp)
    both = {**OPTS, "unit": "both"}
    loop_both = bm.wmt_statistics(campaign, "quality", random_seed=11, resampling=both)
    ds = campaign.sel(lp=lp, drop=True)
    spa = bm.soft_pairwise_accuracy(ds, "quality", random_seed=s, resampling=both)
    got = loop_both.summary().xs(("spa", lp), level=("estimand", "lp"))
    np.testing.assert_allclose(got["classical"].values, spa.summary()["classical"].values,
                               rtol=0, atol=TOL)
    for k in ("bootstrap", "posterior"):
        np.testing.assert_allclose(loop_both.extra[k].sel(lp=lp, estimand="spa").values,
                                   spa.extra[k].values, rtol=0, atol=TOL)
    xs = ds["score"].isel(run=0).transpose("metric", "system", "item")
    z = ds["judgment"].isel(trait=0).values
    boot = bootstrap(xs, z, measures=list(WMT_MEASURES), n_resamples=30, random_seed=s + 1)
    post = bayesian_bootstrap(xs, z, measures=list(WMT_MEASURES), n_resamples=30,
                              random_seed=s + 2)
    for k, ref in (("bootstrap", boot), ("posterior", post)):
        mine = loop_both.extra[k].sel(lp=lp, estimand=list(WMT_MEASURES))
        np.testing.assert_allclose(mine.values, ref.values, rtol=0, atol=TOL)
    # the default: systems resampled for the system-level and within-item estimands and
    # SPA (equal to soft_pairwise_accuracy's default and the engine's bootstrap over
    # systems), systems and items for global_pearson
    spa = bm.soft_pairwise_accuracy(ds, "quality", random_seed=s, resampling=OPTS)
    for k in ("bootstrap", "posterior"):
        np.testing.assert_allclose(loop.extra[k].sel(lp=lp, estimand="spa").values,
                                   spa.extra[k].values, rtol=0, atol=TOL)
    systems = ["system_pearson", "system_acc_eq", "within_item_acc_eq"]
    boot_sys = bootstrap(xs, z, measures=systems, unit="systems", n_resamples=30,
                         random_seed=s + 1)
    np.testing.assert_allclose(loop.extra["bootstrap"].sel(lp=lp, estimand=systems).values,
                               boot_sys.values, rtol=0, atol=TOL)
    for k, ref in (("bootstrap", boot), ("posterior", post)):
        np.testing.assert_allclose(loop.extra[k].sel(lp=lp, estimand="global_pearson").values,
                                   ref.sel(measure="global_pearson").values, rtol=0, atol=TOL)
    # the posterior of the system level: Dirichlet weights on the systems only
    S = z.shape[0]
    w = S * np.random.default_rng(s + 2).dirichlet(np.full(S, (S - 2) / S), size=30)
    u, v = xs.values.mean(-1), z.mean(-1)
    ref = np.array([[np.cov(u[m], v, aweights=wr)[0, 1]
                     / np.sqrt(np.cov(u[m], aweights=wr) * np.cov(v, aweights=wr))
                     for m in range(u.shape[0])] for wr in w])
    np.testing.assert_allclose(
        loop.extra["posterior"].sel(lp=lp, estimand="system_pearson").values, ref, rtol=0,
        atol=TOL)
    kind = loop.summary().attrs["classical_ci_kind"]
    assert kind == ("percentile bootstrap over systems (system_pearson, system_acc_eq, "
                    "within_item_acc_eq, spa); systems and items (global_pearson)")
    # classical Pearson r by scipy (system means; all outputs)
    x = xs.values
    sys_r = [scipy.stats.pearsonr(x[m].mean(-1), z.mean(-1))[0] for m in range(4)]
    glob_r = [scipy.stats.pearsonr(x[m].ravel(), z.ravel())[0] for m in range(4)]
    for m, ref in (("system_pearson", sys_r), ("global_pearson", glob_r)):
        np.testing.assert_allclose(
            loop.summary().xs((m, lp), level=("estimand", "lp"))["classical"].values,
            ref, rtol=0, atol=TOL)


@pytest.mark.parametrize("scheduler", ["synchronous", "threads"])
def test_dask_schedulers_equal_the_loop(loop, scheduler):
    pytest.importorskip("dask")
    lazy = simulate_language_pairs(3, 6, 25, 4, random_seed=3, lazy=True)
    res = bm.wmt_statistics(lazy, "quality", random_seed=11, resampling=OPTS,
                            scheduler=scheduler)
    _close(res, loop)
    assert scheduler in res.info["run on"]


@pytest.mark.parametrize("processes", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_local_cluster_of_two_workers_equals_the_loop(loop, processes):
    distributed = pytest.importorskip("distributed")
    lazy = simulate_language_pairs(3, 6, 25, 4, random_seed=3, lazy=True)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=processes,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as client:
        res = bm.wmt_statistics(lazy, "quality", random_seed=11, resampling=OPTS,
                                scheduler=client)
    _close(res, loop)
    assert "distributed" in res.info["run on"]


def test_seeds_follow_the_label_not_the_order(campaign, loop):
    """A language pair's numbers do not depend on which others are run, or their order."""
    pairs = {lp: campaign.sel(lp=lp, drop=True) for lp in ("lp02", "lp00")}
    res = bm.wmt_statistics(pairs, "quality", random_seed=11, resampling=OPTS)
    for lp in pairs:
        np.testing.assert_allclose(res.extra["posterior"].sel(lp=lp).values,
                                   loop.extra["posterior"].sel(lp=lp).values, rtol=0,
                                   atol=TOL)
    other = bm.wmt_statistics(campaign, "quality", random_seed=12, resampling=OPTS)
    assert not np.allclose(other.extra["posterior"].values, loop.extra["posterior"].values)
    assert loop.provenance["random_seed"] == 11


def test_result_shape_ranks_and_known_truth(loop, campaign):
    tab = loop.summary()
    assert tab.shape[0] == 5 * 3 * 4
    assert set(tab.index.get_level_values("estimand")) == {*WMT_MEASURES, "spa"}
    # ranks are 1..M within each (estimand, lp)
    ranks = loop.details()["rank"].groupby(level=["estimand", "lp"]).apply(sorted)
    assert all(r == [1, 2, 3, 4] for r in ranks)
    # known truth: the metric with the highest loading has the best global Pearson r on
    # average over the language pairs' posterior means (segment-level validity)
    glob = tab.xs("global_pearson", level="estimand")["mean"]
    true = campaign["true_loading"].to_series()
    r = np.corrcoef(glob.values, true.reindex(
        [(lp, m) for lp, _, m in glob.index]).values)[0, 1]
    assert r > 0.9
    low, high = tab["hdi_low"], tab["hdi_high"]
    assert ((low <= tab["mean"]) & (tab["mean"] <= high)).all()


def test_save_and_load(loop, tmp_path):
    path = tmp_path / "campaign.nc"
    loop.save(path)
    back = bm.load(path)
    np.testing.assert_allclose(back.summary().to_numpy(float), loop.summary().to_numpy(float),
                               rtol=0, atol=TOL)


def test_without_permutations_spa_is_left_out(campaign):
    res = bm.wmt_statistics(campaign, "quality", random_seed=1,
                            resampling={"n_resamples": 0, "n_permutations": 0})
    assert "spa" not in set(res.summary().index.get_level_values("estimand"))
    assert res.summary().shape == (4 * 3 * 4, 1)


def test_missing_dask_is_a_clear_error(campaign, monkeypatch):
    monkeypatch.setitem(sys.modules, "dask", None)
    with pytest.raises(ImportError, match=r"bayesmeta\[scale\]"):
        bm.wmt_statistics(campaign, "quality", scheduler="threads", resampling=OPTS)
    # without a scheduler no dask is needed
    res = bm.wmt_statistics(campaign, "quality", random_seed=1,
                            resampling={"n_resamples": 0, "n_permutations": 0})
    assert res.summary().shape[0] == 48


def test_bad_input_is_named(campaign):
    with pytest.raises(ValueError, match="scheduler"):
        bm.wmt_statistics(campaign, "quality", scheduler="cluster")
    with pytest.raises(TypeError, match="scheduler"):
        bm.wmt_statistics(campaign, "quality", scheduler=4)
    bad = campaign.copy(deep=True)
    bad["score"][1, 0, 0, 2, 0] = np.nan
    with pytest.raises(ValueError, match=r"language pair 'lp01'.*metric02"):
        bm.wmt_statistics(bad, "quality", resampling={"n_resamples": 0, "n_permutations": 0})
    with pytest.raises(ValueError, match="no language pair"):
        bm.wmt_statistics({}, "quality")
    with pytest.raises(TypeError, match="Dataset"):
        bm.wmt_statistics(xr.DataArray([1.0]), "quality")


@pytest.mark.parametrize("scheduler", [None, "synchronous"])
def test_each_lazy_language_pair_is_simulated_once(monkeypatch, loop, scheduler):
    """A dask-backed language pair is simulated only when its task runs, and once (its score
    and judgment share one simulation) when the metrics are named; without, the scan for
    the metrics present in every pair reads each pair once more."""
    pytest.importorskip("dask")
    import bayesmeta.wmt.simulate as sim

    calls = []
    real = sim._one_pair

    def counted(*args):
        calls.append(args[-1])
        return real(*args)

    monkeypatch.setattr(sim, "_one_pair", counted)
    lazy = simulate_language_pairs(3, 6, 25, 4, random_seed=3, lazy=True)
    assert calls == []                                   # nothing simulated yet
    metrics = [f"metric{m:02d}" for m in range(4)]
    res = bm.wmt_statistics(lazy, "quality", random_seed=11, resampling=OPTS,
                            scheduler=scheduler, metrics=metrics)
    seeds = sorted(language_pair_seed(3, f"lp{k:02d}") for k in range(3))
    assert sorted(calls) == seeds
    _close(res, loop)
    calls.clear()
    bm.wmt_statistics(lazy, "quality", random_seed=11, scheduler=scheduler,
                      resampling={"n_resamples": 0, "n_permutations": 0})
    assert sorted(calls) == sorted(seeds * 2)


def test_a_padded_multi_pair_dataset_is_split_per_pair(campaign, loop):
    """A campaign on the dim lp whose pairs have different systems and metrics (NaN
    padding, as read_mtme writes several pairs) gives each pair's own numbers; a metric
    missing from one pair is left out by default."""
    a = campaign.sel(lp="lp00", drop=True).isel(system=slice(0, 5))
    b = campaign.sel(lp="lp01", drop=True)
    gone = b.assign(score=b["score"].where(b["metric"] != "metric03"))
    padded = xr.concat([a[["score", "judgment"]], gone[["score", "judgment"]]], "lp",
                       join="outer").assign_coords(lp=["lp00", "lp01"])
    assert np.isnan(padded["score"].sel(lp="lp00", system="sys05")).all()
    res = bm.wmt_statistics(padded, "quality", random_seed=11, resampling=OPTS)
    assert sorted(set(res.summary().index.get_level_values("metric"))) == [
        "metric00", "metric01", "metric02"]
    three = ["metric00", "metric01", "metric02"]
    ref = bm.wmt_statistics({"lp00": a, "lp01": b.sel(metric=three)}, "quality",
                            random_seed=11, resampling=OPTS, metrics=three)
    _close(res, ref)
    # lp01 is complete in its systems: its rows are those of the unpadded campaign
    np.testing.assert_allclose(
        res.extra["posterior"].sel(lp="lp01").values,
        loop.extra["posterior"].sel(lp="lp01", metric=three).values, rtol=0, atol=TOL)
