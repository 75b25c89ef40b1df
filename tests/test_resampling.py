"""Permutation tests, bootstrap and Bayesian bootstrap against direct loops, nlpstats, and
simulation truth (calibration and coverage in the slow tier)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from test_correlation import _loop

import bayesmeta as bm
from bayesmeta.correlation.measures import MEASURES, correlation_measures
from bayesmeta.correlation.resampling import (
    bayesian_bootstrap,
    bootstrap,
    percentile_interval,
    permutation_test,
    resampling_weights,
    swap_masks,
)
from bayesmeta.summaries import check_table, summarize


@pytest.fixture(scope="module")
def small():
    rng = np.random.default_rng(5)
    S, I = 6, 9
    z = rng.integers(1, 6, (S, I)).astype(float)
    x = np.stack([z + rng.normal(0, s, (S, I)) for s in (1.0, 1.5, 3.0)]).round(1)
    x[0, 1, 2] = np.nan
    return x, z


def _standardised(v, valid):
    return np.where(valid, (v - v[valid].mean()) / v[valid].std(), np.nan)


@pytest.mark.parametrize("scheme", ["both", "both-rowcol", "systems", "items"])
def test_permutation_equals_direct_loop(small, scheme):
    """Same masks, scipy per permutation: identical statistics and exceedance counts."""
    x, z = small
    P = 15
    res = permutation_test(x, z, scheme=scheme, n_permutations=P, random_seed=11,
                           pvalue="raw")
    seeds = np.random.SeedSequence(11).spawn(3)
    for j, (a, b) in enumerate([(0, 1), (0, 2), (1, 2)]):
        masks = swap_masks(np.random.default_rng(seeds[j]), scheme, P, z.shape)
        valid = ~(np.isnan(x[a]) | np.isnan(x[b]) | np.isnan(z))
        X, Y, Z = (_standardised(v, valid) for v in (x[a], x[b], z))
        for k, name in enumerate(MEASURES):
            obs = _loop(X, Z, name) - _loop(Y, Z, name)
            d = np.array([_loop(np.where(m, Y, X), Z, name) - _loop(np.where(m, X, Y), Z, name)
                          for m in masks])
            assert res["statistic"].values[j, k] == pytest.approx(obs, abs=1e-12)
            assert res["exceed"].values[j, k] == (np.abs(d) >= np.abs(obs) - 1e-12).sum()
            assert res["pvalue"].values[j, k] == res["exceed"].values[j, k] / P


def test_mask_schemes_and_reproducibility():
    rng = np.random.default_rng(0)
    m = swap_masks(rng, "both-rowcol", 50, (4, 5))
    # rows then columns swapped: cell swapped iff row coin XOR column coin
    assert all(((mm[:, :1] ^ mm[:, 1:]) == (mm[:, :1] ^ mm[:, 1:])[:1]).all() for mm in m)
    again = swap_masks(np.random.default_rng(0), "both-rowcol", 50, (4, 5))
    np.testing.assert_array_equal(m, again)
    first = swap_masks(np.random.default_rng(1), "both", 30, (4, 5))
    rng = np.random.default_rng(1)
    split = np.concatenate([swap_masks(rng, "both", 10, (4, 5)),
                            swap_masks(rng, "both", 20, (4, 5))])
    np.testing.assert_array_equal(first, split)  # chunking does not change the masks
    s = swap_masks(np.random.default_rng(2), "systems", 10, (4, 5))
    assert (s == s[:, :, :1]).all()
    with pytest.raises(ValueError, match="scheme must be one of"):
        swap_masks(rng, "cells", 2, (4, 5))


def test_permutation_options(small):
    x, z = small
    a = permutation_test(x, z, measures="global_kendall", n_permutations=99, random_seed=3,
                         n_jobs=1)
    b = permutation_test(x, z, measures="global_kendall", n_permutations=99, random_seed=3,
                         n_jobs=2)
    np.testing.assert_array_equal(a["pvalue"].values, b["pvalue"].values)
    raw = permutation_test(x, z, measures="global_kendall", n_permutations=99, random_seed=3,
                           pvalue="raw")
    np.testing.assert_allclose(a["pvalue"], (raw["exceed"] + 1) / 100)
    g = permutation_test(x, z, [(0, 2)], measures="global_pearson", n_permutations=99,
                         random_seed=3, alternative="greater")
    assert 0 < g["pvalue"].item() <= 1
    with pytest.raises(ValueError, match="acc_eq has no permutation test"):
        permutation_test(x, z, measures="global_acc_eq")
    with pytest.raises(ValueError, match="pairs: "):
        permutation_test(x, z, [(0, 0)])


def test_agrees_with_nlpstats():
    """nlpstats 0.0.1 (Deutsch et al.'s code, used by paper 001): the same test with its own
    random permutations; p-values agree within Monte-Carlo error (5 binomial sds).

    nlpstats compares ``abs(sample) >= abs(observed)`` exactly in floating point, so for a
    discrete statistic (Kendall over 8 system means) permutations whose difference equals
    the observed one are counted or not by rounding noise. Its reference p-value here is
    recomputed from its own permutation samples with the 100-eps tolerance used here and by
    scipy.stats.permutation_test; its raw p-value is also checked for the continuous
    statistics, where ties do not occur."""
    nlp = pytest.importorskip("nlpstats.correlations.permutation",
                              reason="nlpstats not installed (pip install nlpstats)")
    from nlpstats.correlations.correlations import correlate

    rng = np.random.default_rng(0)
    S, I = 8, 12
    z = rng.integers(1, 6, (S, I)).astype(float)
    x = z + rng.normal(0, 1.5, (S, I))
    y = z + rng.normal(0, 2.5, (S, I))
    n = 600

    def std(v):
        return (v - v.mean()) / v.std()

    np.random.seed(1)  # noqa: NPY002 - nlpstats draws from the global generator
    # nlpstats' "input" level is bayesmeta's within_item grouping
    for level, ours_level, coef in [("global", "global", "pearson"),
                                    ("system", "system", "kendall"),
                                    ("input", "within_item", "spearman")]:
        res = nlp.permutation_test(x, y, z, level, coef, "both", n_resamples=n)
        obs = (correlate(std(x), std(z), level, coef) - correlate(std(y), std(z), level, coef))
        ref = float(np.mean(np.abs(res.samples) >= abs(obs) * (1 - 1e-13)))
        ours = permutation_test(np.stack([x, y]), z, measures=f"{ours_level}_{coef}",
                                scheme="both-rowcol", n_permutations=n, pvalue="raw",
                                random_seed=2)["pvalue"].item()
        sd = np.sqrt(max(ref * (1 - ref), 1 / n) * 2 / n)
        assert abs(ours - ref) <= 5 * sd + 1 / n, (level, coef, ours, ref)
        if coef == "pearson":
            assert abs(ours - res.pvalue) <= 5 * sd + 1 / n


def test_bootstrap_weights_equal_resampled_matrices(small):
    x, z = small
    boot = bootstrap(x, z, n_resamples=5, random_seed=4)
    a, b = resampling_weights(np.random.default_rng(4), "bootstrap", 5, z.shape)
    for r in range(5):
        rows = np.repeat(np.arange(z.shape[0]), a[r].astype(int))
        cols = np.repeat(np.arange(z.shape[1]), b[r].astype(int))
        for m in range(3):
            for k, name in enumerate(MEASURES):
                ref = _loop(x[m][rows][:, cols], z[rows][:, cols], name)
                val = boot.values[r, m, k]
                assert (np.isnan(ref) and np.isnan(val)) or val == pytest.approx(ref, abs=1e-12)
    iv = percentile_interval(boot, 0.9)
    assert iv.dims[0] == "ci_bound" and iv.attrs["ci_kind"] == "percentile"
    sys_only = bootstrap(x, z, unit="systems", n_resamples=4, random_seed=1,
                         measures="within_item_pearson")
    assert sys_only.attrs["unit"] == "systems"
    items = bootstrap(x, z, unit="items", n_resamples=4, random_seed=1)
    assert items.attrs["unit"] == "items"
    with pytest.raises(ValueError, match="unit must be one of"):
        bootstrap(x, z, unit="inputs", n_resamples=4, random_seed=1)
    with pytest.raises(ValueError, match="scheme must be one of"):
        permutation_test(x, z, measures="system_pearson", scheme="inputs", n_permutations=9)


def test_bayesian_bootstrap_draws(small):
    x, z = small
    d = bayesian_bootstrap(x, z, n_resamples=200, random_seed=0)
    assert d.dims == ("resample", "metric", "measure") and d.shape == (200, 3, 12)
    assert np.nanmax(np.abs(d.values)) <= 1 + 1e-12
    again = bayesian_bootstrap(x, z, n_resamples=200, random_seed=0)
    np.testing.assert_array_equal(d.values, again.values)
    # posterior centred near the sample measure for the strongest metric
    point = correlation_measures(x, z)
    assert abs(float(d.sel(metric="m2").mean("resample").sel(measure="global_pearson"))
               - float(point.sel(metric="m2", measure="global_pearson"))) < 0.1


def test_dask_input_equals_numpy(small):
    pytest.importorskip("dask", reason="dask not installed")
    import xarray as xr

    x, z = small
    da = xr.DataArray(x, dims=("metric", "system", "item"),
                      coords={"metric": ["a", "b", "c"]}).chunk({"metric": 1})
    lazy = bootstrap(da, z, n_resamples=20, random_seed=0, metrics_per_block=1)
    eager = bootstrap(da.compute(), z, n_resamples=20, random_seed=0)
    # Pearson sums are a matrix product blocked by the chunk: 1-ulp differences
    np.testing.assert_allclose(lazy.values, eager.values, rtol=0, atol=1e-14)
    p1 = permutation_test(da, z, n_permutations=49, random_seed=0)
    p2 = permutation_test(x, z, n_permutations=49, random_seed=0)
    np.testing.assert_array_equal(p1["pvalue"].values, p2["pvalue"].values)


def test_compare_metrics_probabilities(simulated):
    metrics = ["metric01.COH", "metric02.CON", "metric05.COH"]
    measures = ["global_pearson", "system_kendall"]
    res = bm.compare_metrics(simulated, "COH", metrics=metrics, measures=measures,
                             resampling={"n_resamples": 300, "n_permutations": 99},
                             random_seed=0)
    beats = res.p_beats("global_pearson").values
    np.testing.assert_allclose(beats + beats.T, 1.0, atol=1e-12)
    ranks = res.rank_probability("system_kendall").values
    np.testing.assert_allclose(ranks.sum(1), 1.0, atol=1e-12)
    tab, det = res.summary(), res.details()
    check_table(tab)
    assert tab.index.names == ["estimand", "measure", "trait", "metric", "metric2"]
    assert set(tab.index.get_level_values("estimand")) == {"difference"}
    assert list(tab.columns) == ["classical", "classical_low", "classical_high", "mean", "sd",
                                 "hdi_low", "hdi_high"]
    assert list(det.columns) == ["pvalue", "p_beats"]
    assert det["pvalue"].between(0.01, 1).all()
    assert res.provenance["random_seed"] == 0
    # classical = difference of the sample measures of correlations()
    corr = bm.correlations(simulated, "COH", metrics=metrics, measures=measures,
                           resampling={"n_resamples": 0}).table()
    row = tab.loc[("difference", "system_kendall", "COH", "metric01.COH", "metric05.COH")]
    assert row["classical"] == pytest.approx(
        corr.loc["metric01.COH", "system_kendall"] - corr.loc["metric05.COH", "system_kendall"],
        abs=1e-15)
    # the posterior of the difference: summarize() of the differences of the draws
    post = bayesian_bootstrap(
        simulated["score"].isel(run=0).sel(metric=metrics).transpose("metric", "system",
                                                                      "item"),
        simulated["rating"].sel(trait="COH").mean("rater"), measures=measures,
        n_resamples=300, random_seed=0)
    d = post.sel(metric="metric01.COH") - post.sel(metric="metric05.COH")
    s = summarize(d.sel(measure="system_kendall"))
    assert row["mean"] == pytest.approx(float(s["mean"]), abs=1e-15)
    assert row["hdi_low"] == float(s["interval"].sel(ci_bound="lower"))
    # p_beats in details() equals the extra matrix
    assert det.loc[("difference", "system_kendall", "COH", "metric01.COH", "metric05.COH"),
                   "p_beats"] == res.p_beats("system_kendall").loc["metric01.COH",
                                                                   "metric05.COH"]
    with pytest.raises(TypeError, match="n_resamples"):
        bm.compare_metrics(simulated, "COH", metrics=metrics, measures=measures,
                           n_resamples=300, n_permutations=99, random_seed=0)


def test_few_systems_calibration_note(simulated):
    """Results with global- or input-level measures from fewer than FEW_SYSTEMS systems say
    their HDIs run short (the measured shortfall of test_bayesian_bootstrap_hdi_coverage);
    system- and item-level results, and results from enough systems, do not."""
    from bayesmeta.correlation.resampling import FEW_SYSTEMS, calibration_note

    assert calibration_note(FEW_SYSTEMS, ["global_pearson"]) is None
    assert calibration_note(FEW_SYSTEMS - 1, ["within_item_kendall"]) is not None
    assert calibration_note(17, ["system_pearson", "within_system_pearson"]) is None
    assert calibration_note(17, ["global_pearson"]).startswith("17 systems")
    res = bm.correlations(simulated, "COH", measures="global_pearson",
                          resampling={"n_resamples": 20}, random_seed=0)
    assert res.info["calibration"] == calibration_note(17, ["global_pearson"])
    assert "global/within-item HDIs run short" in str(res)
    system = bm.correlations(simulated, "COH", measures="system",
                             resampling={"n_resamples": 20}, random_seed=0)
    assert "calibration" not in system.info
    point = bm.correlations(simulated, "COH", measures="global_pearson",
                            resampling={"n_resamples": 0})
    assert "calibration" not in point.info


# --------------------------------------------------------------------------- slow tier
@pytest.mark.slow
def test_pvalues_uniform_under_null():
    """X and Y exchangeable given the human score (17 systems x 12 inputs, Perm-Both, 199
    permutations, 2,000 null replicates): for every measure the randomised p-value
    ``(b - ties + U (ties + 1)) / (n + 1)`` is uniform -- Kolmogorov-Smirnov p > 0.01 / 12,
    Bonferroni over the 12 measures tested at once, so the family-wise false-alarm rate is
    at most 0.01 -- and the reported plus-one p-value is valid: P(p <= alpha) <= alpha within 3
    binomial sds at alpha = 0.05, 0.1, 0.25. (The plus-one p-value itself is not uniform for
    discrete statistics -- e.g. Spearman over system means, where permutations tie with the
    observed difference -- it is conservative.)

    Measured with this seed (about 40 s): the smallest of the 12 KS p-values is 0.061
    (item Kendall), so each also clears the unadjusted 0.01 of the issue. An earlier run with
    500 replicates and another seed had one KS p of 0.006 (global Spearman); with 2,000
    replicates that measure's p is 0.58: chance among 12 tests, not miscalibration."""
    rng = np.random.default_rng(7)
    S, I, R, n = 17, 12, 2000, 199
    rand, plus = [], []
    for _ in range(R):
        z = rng.integers(1, 6, (S, I)).astype(float) + rng.normal(0, 1, (S, 1))
        x = np.stack([z + rng.normal(0, 1.5, (S, I)) for _ in range(2)])
        res = permutation_test(x, z, n_permutations=n, random_seed=int(rng.integers(2**31)),
                               n_jobs=1)
        b, t = res["exceed"].values[0], res["ties"].values[0]
        rand.append((b - t + rng.random(b.shape) * (t + 1)) / (n + 1))
        plus.append(res["pvalue"].values[0])
    rand, plus = np.array(rand), np.array(plus)  # (R, 12)
    for k, name in enumerate(MEASURES):
        ks = stats.kstest(rand[:, k], "uniform")
        assert ks.pvalue > 0.01 / len(MEASURES), (name, ks)
        for alpha in (0.05, 0.1, 0.25):
            assert (plus[:, k] <= alpha).mean() <= alpha + 3 * np.sqrt(alpha * (1 - alpha) / R)


def _bb_coverage_study():
    """``benchmarks/bayesian_bootstrap_coverage.py``, loaded by path (one implementation)."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "bayesian_bootstrap_coverage.py"
    spec = importlib.util.spec_from_file_location("bayesian_bootstrap_coverage", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.coverage


@pytest.mark.slow
def test_bayesian_bootstrap_hdi_coverage():
    """94% HDIs of the Bayesian-bootstrap posterior (2,000 draws) against the truth of paper
    001's App. C model, 400 datasets per size (about 2 minutes).

    64 systems x 100 inputs: every level -- system, global, within-item, within-system
    Pearson -- covers at
    the nominal rate, within 3 binomial sds of 0.94 (measured 0.953, 0.933, 0.918, 0.958).

    16 systems x 100 inputs (about SummEval's 17): the system level is still nominal (0.928);
    the pooled levels under-cover (global 0.893, input 0.865: with 16 clusters the
    posterior is 5-14% too narrow and the sample r biased low) and the item level
    over-covers (0.978: product weights count within-system noise twice, Owen & Eckles
    2012). These are asserted as the measured shortfall, so that a change in either
    direction is noticed, and documented in ``models/correlation.md`` and the docstring
    of :func:`bayesian_bootstrap`."""
    coverage = _bb_coverage_study()
    R = 400
    band = 3 * np.sqrt(0.94 * 0.06 / R)
    large = coverage(64, R, 2000).set_index("measure")["hdi"]
    assert (abs(large - 0.94) <= band).all(), large
    small = coverage(16, R, 2000).set_index("measure")["hdi"]
    assert abs(small["system_pearson"] - 0.94) <= band, small
    assert 0.84 <= small["global_pearson"] <= 0.92, small
    assert 0.84 <= small["within_item_pearson"] <= 0.92, small
    assert 0.95 <= small["within_system_pearson"] <= 0.99, small
