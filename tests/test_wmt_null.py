"""The paired bootstrap test of :func:`bayesmeta.significance_clusters` (issue 25): its
p-value against a closed form and an independent resampler (scipy), and its level in a small
null simulation with known truth (two metrics of equal validity, so the expected difference
of every statistic is 0)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import bayesmeta as bm
from bayesmeta.wmt.clusters import bootstrap_pvalues
from bayesmeta.wmt.simulate import simulate_campaign


def test_bootstrap_pvalue_closed_form():
    # differences (metric 0 - metric 1): 0.1, 0, -0.4, 0.6, undefined -> b = 2 of n = 4
    boot = np.array([[0.5, 0.4], [0.3, 0.3], [0.2, 0.6], [0.7, 0.1], [np.nan, 0.2]])
    assert bootstrap_pvalues(boot, np.array([0, 1]))[0, 1] == pytest.approx(2 / 4, abs=1e-12)
    assert bootstrap_pvalues(boot, np.array([0, 1]), "plus-one")[0, 1] == pytest.approx(
        3 / 5, abs=1e-12)
    # in the other order: b counts differences 1 - 0 <= 0: 0.1, 0, 0.6 -> 3 of 4
    assert bootstrap_pvalues(boot, np.array([1, 0]))[0, 1] == pytest.approx(3 / 4, abs=1e-12)


def test_paired_bootstrap_equals_an_independent_resampler():
    """System Pearson, systems resampled: the p-value of bm.significance_clusters against a
    resampler written here (index draws, scipy's pearsonr on the system means), 2,000
    resamples each; independent streams, so within 4.5 sd of the difference of two
    Monte Carlo estimates, sqrt(2 p (1 - p) / 2000), plus 0.003."""
    ds = simulate_campaign(10, 30, 2, random_seed=5, loadings=(0.5, 0.7), bias_sd=0.15)
    n = 2000
    res = bm.significance_clusters(ds, "quality", statistic="system_pearson", random_seed=3,
                                   resampling={"n_resamples": n, "n_permutations": 1})
    order = [str(m) for m in res.matrix().index]
    got = res.matrix().to_numpy()[0, 1]
    # the p-value is the share of the test's paired resamples, kept in extra
    boot = res.extra["pair_bootstrap"].sel(metric=order).values
    assert got == pytest.approx(np.mean(boot[:, 1] >= boot[:, 0]), abs=1e-12)
    h = ds["judgment"].sel(trait="quality").mean("item").values
    x = ds["score"].isel(run=0).mean("item").sel(metric=order).values       # (S, 2)
    rng = np.random.default_rng(2024)
    hits = 0
    for _ in range(n):
        k = rng.integers(0, len(h), len(h))
        r = [stats.pearsonr(x[k, m], h[k])[0] for m in range(2)]
        hits += r[1] >= r[0]
    want = hits / n
    p = (got + want) / 2
    assert abs(got - want) <= 4.5 * np.sqrt(2 * p * (1 - p) / n) + 0.003, (got, want)


def test_paired_bootstrap_keeps_its_level_under_the_null():
    """100 null campaigns (8 systems x 20 items, per-system metric errors): two-sided 5%
    rejections of the default test. A level-0.05 test exceeds 11 of 100 with probability
    0.012 and gives 0 with probability 0.006 (binomial), so 1..11 is asserted."""
    rejections = 0
    for r in range(100):
        ds = simulate_campaign(8, 20, 2, random_seed=7000 + r, loadings=(0.6, 0.6),
                               bias_sd=0.15)
        res = bm.significance_clusters(ds, "quality", statistic="system_pearson",
                                       random_seed=r,
                                       resampling={"n_resamples": 200, "n_permutations": 1})
        assert res.info["test"].startswith("paired bootstrap")
        rejections += res.matrix().to_numpy()[0, 1] <= 0.025
    assert 1 <= rejections <= 11, rejections


def test_pair_test_choice_and_errors():
    ds = simulate_campaign(6, 10, 3, random_seed=1)
    opts = {"n_resamples": 20, "n_permutations": 50}
    perm = bm.significance_clusters(ds, "quality", pair_test="permutation", random_seed=2,
                                    resampling=opts)
    old = bm.significance_clusters(ds, "quality", random_seed=2,
                                   resampling={**opts, "n_resamples": 0})
    np.testing.assert_allclose(perm.matrix().to_numpy(), old.matrix().to_numpy(), atol=1e-12)
    assert "exchangeability" in perm.info["test"]
    with pytest.raises(ValueError, match="pair_test"):
        bm.significance_clusters(ds, "quality", pair_test="wilcoxon", resampling=opts)
    with pytest.raises(ValueError, match="n_resamples"):
        bm.significance_clusters(ds, "quality", pair_test="bootstrap",
                                 resampling={"n_resamples": 0})


def test_wmt_ranking_paired_bootstrap():
    """Overall WMT score tested by the paired bootstrap: a metric identical to another
    differs by exactly 0 in every resample, so p = 1 (closed form: b = n); a metric of pure
    noise against a valid one is significantly worse (p below 0.05)."""
    data = {}
    for k, lp in enumerate(("en-de", "ja-zh")):
        ds = simulate_campaign(8, 15, 2, random_seed=30 + k, loadings=(0.9, 0.9),
                               bias_sd=0.0)
        x = ds["score"].values.copy()
        noise = np.random.default_rng(k).normal(size=x[:, :, :1].shape)
        ds = ds.reindex(metric=["metric00", "metric01", "noise"])
        ds["score"].values[:, :, :2] = x
        ds["score"].values[:, :, 2:] = noise
        ds["score"].values[:, :, 1:2] = x[:, :, :1]                 # metric01 = metric00
        data[lp] = ds
    res = bm.wmt_ranking(data, "quality", pair_test="bootstrap", random_seed=1,
                         resampling={"n_resamples": 100, "n_permutations": 50})
    assert res.info["test"].startswith("paired bootstrap")
    sig = res.matrix()
    twins = [m for m in sig.index if m != "noise"]
    assert sig.loc[twins[0], twins[1]] == pytest.approx(1.0, abs=1e-12)
    assert list(sig.index)[-1] == "noise"
    assert sig.loc[twins[0], "noise"] <= 0.05
    with pytest.raises(ValueError, match="pair_test"):
        bm.wmt_ranking(data, "quality", pair_test="t")
