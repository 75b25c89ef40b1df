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
    """Paired differences 0.1, 0.3, 0.1 (sd 1/sqrt(75)) and an observed difference 0.2:
    t = sqrt(3); with 3 systems Student's t has 2 df, whose tail is
    1/2 - t / (2 sqrt(2 + t^2)) in closed form."""
    boot = np.array([[0.5, 0.4], [0.7, 0.4], [0.6, 0.5], [np.nan, 0.2]])
    point = np.array([0.6, 0.4])
    t = np.sqrt(3.0)
    want = 0.5 - t / (2 * np.sqrt(2 + t ** 2))
    got = bootstrap_pvalues(point, boot, np.array([0, 1]), 3)[0, 1]
    assert got == pytest.approx(want, abs=1e-12)
    # the other direction: P(T >= -t) = 1 - want
    got = bootstrap_pvalues(point, boot, np.array([1, 0]), 3)[0, 1]
    assert got == pytest.approx(1 - want, abs=1e-12)
    # no variation: p = 1 for a zero difference
    same = bootstrap_pvalues(np.array([0.5, 0.5]), np.full((4, 2), 0.5), np.array([0, 1]), 3)
    assert same[0, 1] == 1.0
    with pytest.raises(ValueError, match="n_systems"):
        bootstrap_pvalues(point, boot, np.array([0, 1]), 1)


def test_paired_bootstrap_equals_an_independent_resampler():
    """System Pearson: the test's paired bootstrap sd against a resampler written here
    (index draws of systems, scipy's pearsonr on the system means), 2,000 resamples each
    on independent streams: the sds agree within 10% (about 3 Monte Carlo se of the ratio
    for a kurtosis up to 10); the observed difference equals scipy's to 1e-9 and the p-value
    is Student's t tail of their ratio (S - 1 df) to 1e-12."""
    ds = simulate_campaign(10, 30, 2, random_seed=5, loadings=(0.5, 0.7), bias_sd=0.15)
    n = 2000
    res = bm.significance_clusters(ds, "quality", statistic="system_pearson", random_seed=3,
                                   resampling={"n_resamples": n, "n_permutations": 1})
    order = [str(m) for m in res.matrix().index]
    got = res.matrix().to_numpy()[0, 1]
    boot = res.extra["pair_bootstrap"].sel(metric=order).values
    h = ds["judgment"].sel(trait="quality").mean("item").values
    x = ds["score"].isel(run=0).mean("item").sel(metric=order).values       # (S, 2)
    delta = stats.pearsonr(x[:, 0], h)[0] - stats.pearsonr(x[:, 1], h)[0]
    point = res.summary()["classical"].droplevel([0, 1]).loc[order].to_numpy()
    assert point[0] - point[1] == pytest.approx(delta, abs=1e-9)
    sd = np.std(boot[:, 0] - boot[:, 1], ddof=1)
    assert got == pytest.approx(stats.t.sf(delta / sd, len(h) - 1), abs=1e-12)
    rng = np.random.default_rng(2024)
    ref = np.empty(n)
    for r in range(n):
        k = rng.integers(0, len(h), len(h))
        ref[r] = stats.pearsonr(x[k, 0], h[k])[0] - stats.pearsonr(x[k, 1], h[k])[0]
    assert sd == pytest.approx(np.std(ref, ddof=1), rel=0.1)


def test_paired_bootstrap_keeps_its_level_under_the_null():
    """100 null campaigns (8 systems x 20 items, per-system metric errors): two-sided 5%
    rejections of the default test (one-sided p <= 0.025 in the observed direction). A
    level-0.05 test exceeds 11 of 100 with probability 0.012 (binomial), so at most 11 is
    asserted; the test is conservative for system Pearson (0-1% in the null study)."""
    rejections = 0
    for r in range(100):
        ds = simulate_campaign(8, 20, 2, random_seed=7000 + r, loadings=(0.6, 0.6),
                               bias_sd=0.15)
        res = bm.significance_clusters(ds, "quality", statistic="system_pearson",
                                       random_seed=r,
                                       resampling={"n_resamples": 200, "n_permutations": 1})
        assert res.info["test"].startswith("paired bootstrap")
        rejections += res.matrix().to_numpy()[0, 1] <= 0.025
    assert rejections <= 11, rejections


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
    differs by exactly 0 in every resample, so p = 1; a metric of pure noise against a
    valid one is significantly worse (p below 0.05)."""
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
