"""The 12 correlation measures and acc_eq against scipy and direct loops (exact references)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats

import bayesmeta as bm
from bayesmeta.correlation.measures import (
    ACCURACY,
    MEASURES,
    correlation_measures,
    measure_draws,
    parse_measures,
)
from bayesmeta.correlation.resampling import percentile_interval
from bayesmeta.summaries import CI_PROB, check_table, summarize

# Reference coefficients: scipy for Pearson, Spearman, Kendall tau-b and tau-c; tau-a by its
# definition (n_c - n_d) / C(n, 2) (scipy has no tau-a).


def _tau_a(a, b):
    n = len(a)
    s = sum(np.sign(a[i] - a[j]) * np.sign(b[i] - b[j]) for i in range(n) for j in range(i + 1, n))
    return s / (n * (n - 1) / 2)


REF = {
    "pearson": lambda a, b, v: stats.pearsonr(a, b)[0],
    "spearman": lambda a, b, v: stats.spearmanr(a, b)[0],
    "kendall": lambda a, b, v: _tau_a(a, b) if v == "a" else stats.kendalltau(a, b,
                                                                             variant=v)[0],
}


def _corr(a, b, coef, variant="b"):
    ok = ~(np.isnan(a) | np.isnan(b))
    a, b = a[ok], b[ok]
    if a.size < 3 or np.ptp(a) == 0 or np.ptp(b) == 0:
        return np.nan
    return REF[coef](a, b, variant)


def _loop(x, z, name, variant="b"):
    """Direct implementation of one measure (paper 001, Sec. 2) for one metric."""
    g, c = name.rsplit("_", 1) if not name.endswith("acc_eq") else (name[:-7], "acc_eq")
    if g == "global":
        return _corr(x.ravel(), z.ravel(), c, variant)
    if g == "system":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return _corr(np.nanmean(x, 1), np.nanmean(z, 1), c, variant)
    vals = ([_corr(x[s], z[s], c, variant) for s in range(x.shape[0])]
            if g == "within_system" else
            [_corr(x[:, i], z[:, i], c, variant) for i in range(x.shape[1])])
    vals = np.array(vals)
    return np.nanmean(vals) if np.isfinite(vals).any() else np.nan


@pytest.fixture(scope="module")
def messy():
    """Small data with ties (rounded metric, 1..5 human mean of 2 raters) and missing cells."""
    rng = np.random.default_rng(7)
    S, I = 7, 11
    z = rng.integers(1, 6, (S, I, 2)).mean(-1)
    x = np.stack([z + rng.normal(0, s, (S, I)) for s in (0.5, 1.0, 2.0)])
    x[1] = np.round(x[1])  # many ties
    x[0, 2, 3] = x[2, :, 4] = np.nan
    z[5, 6] = np.nan
    return x, z


@pytest.mark.parametrize("variant", ["b", "c", "a"])
def test_every_measure_equals_direct_loop(messy, variant):
    x, z = messy
    got = correlation_measures(x, z, kendall_variant=variant)
    for m in range(x.shape[0]):
        for name in MEASURES:
            if variant != "b" and not name.endswith("kendall"):
                continue
            ref = _loop(x[m], z, name, variant)
            val = float(got.sel(metric=f"m{m}", measure=name))
            if np.isnan(ref):
                assert np.isnan(val), (m, name)
            else:
                assert val == pytest.approx(ref, abs=1e-12), (m, name, variant)


def test_weights_equal_repeated_data(messy):
    """Integer system/input weights = the matrix with rows/columns repeated (bootstrap)."""
    x, z = messy
    rng = np.random.default_rng(3)
    a = rng.integers(0, 3, (4, x.shape[1])).astype(float)
    b = rng.integers(0, 3, (4, x.shape[2])).astype(float)
    a[:, :3] = 1  # at least three distinct systems
    draws = measure_draws(x, z, system_weights=a, item_weights=b, measures=MEASURES)
    for r in range(4):
        rows = np.repeat(np.arange(x.shape[1]), a[r].astype(int))
        cols = np.repeat(np.arange(x.shape[2]), b[r].astype(int))
        xr_, zr = x[:, rows][:, :, cols], z[rows][:, cols]
        for m in range(x.shape[0]):
            for j, name in enumerate(MEASURES):
                ref = _loop(xr_[m], zr, name)
                if np.isnan(ref):
                    assert np.isnan(draws[r, m, j])
                else:
                    assert draws[r, m, j] == pytest.approx(ref, abs=1e-12), (r, m, name)


def _acc_eq(dm_groups, dh_groups):
    """Brute-force acc_eq (Deutsch, Foster & Freitag 2023): every candidate epsilon (0 and
    each |metric difference|), the accuracy averaged over groups, maximised."""
    cands = np.unique(np.concatenate([[0.0], *[np.abs(d) for d in dm_groups]]))
    best = -1.0
    for eps in cands:
        accs = []
        for dm, dh in zip(dm_groups, dh_groups, strict=True):
            mt, ht = np.abs(dm) <= eps, dh == 0
            accs.append(((mt & ht) | (~mt & ~ht & (np.sign(dm) == np.sign(dh)))).mean())
        best = max(best, float(np.mean(accs)))
    return best


def _pairs(a, b):
    ok = ~(np.isnan(a) | np.isnan(b))
    a, b = a[ok], b[ok]
    k, l_ = np.triu_indices(a.size, 1)
    return a[k] - a[l_], b[k] - b[l_]


def test_acc_eq_equals_brute_force(messy):
    x, z = messy
    got = correlation_measures(x, z, measures="acc_eq")
    for m in range(x.shape[0]):
        g = [_pairs(x[m].ravel(), z.ravel())]
        assert float(got[m].sel(measure="global_acc_eq")) == pytest.approx(
            _acc_eq(*zip(*g, strict=True)), abs=1e-12)
        g = [_pairs(x[m][s], z[s]) for s in range(x.shape[1])]
        assert float(got[m].sel(measure="within_system_acc_eq")) == pytest.approx(
            _acc_eq(*zip(*g, strict=True)), abs=1e-12)
        g = [_pairs(x[m][:, i], z[:, i]) for i in range(x.shape[2])
             if (~np.isnan(x[m][:, i]) & ~np.isnan(z[:, i])).sum() >= 3]
        assert float(got[m].sel(measure="within_item_acc_eq")) == pytest.approx(
            _acc_eq(*zip(*g, strict=True)), abs=1e-12)
        with np.errstate(invalid="ignore"):
            g = [_pairs(np.nanmean(x[m], 1), np.nanmean(z, 1))]
        assert float(got[m].sel(measure="system_acc_eq")) == pytest.approx(
            _acc_eq(*zip(*g, strict=True)), abs=1e-12)


def test_slice_equals_whole(messy):
    x, z = messy
    whole = correlation_measures(x, z)
    for m in range(x.shape[0]):
        one = correlation_measures(x[m:m + 1], z).values[0]
        # the Pearson sums are a matrix product whose blocking depends on the batch: 1 ulp
        np.testing.assert_allclose(one, whole.values[m], rtol=0, atol=1e-15)


def test_parse_measures_and_errors():
    assert parse_measures("all") == list(MEASURES)
    assert parse_measures("kendall") == [f"{g}_kendall" for g in
                                         ("system", "within_item", "global", "within_system")]
    assert parse_measures(["system", "global_pearson"])[-1] == "global_pearson"
    assert parse_measures("acc_eq") == list(ACCURACY)
    with pytest.raises(ValueError, match="unknown measure 'bogus'"):
        parse_measures("bogus")
    with pytest.raises(ValueError, match="kendall_variant must be"):
        correlation_measures(np.zeros((1, 3, 3)), np.zeros((3, 3)), kendall_variant="d")
    with pytest.raises(ValueError, match="human must have shape"):
        correlation_measures(np.zeros((1, 3, 3)), np.zeros((3, 4)))


def test_old_measure_names_are_refused():
    """The names of the previous release (paper 001's "input" and "item" levels) are errors
    naming the groupings (no shim)."""
    for old in ("input_kendall", ["item_acc_eq"], "item", "input"):
        with pytest.raises(ValueError, match="unknown measure"):
            parse_measures(old)


def test_correlations_table_and_save(tmp_path, simulated):
    res = bm.correlations(simulated, "COH", metrics=["metric01.COH", "metric02.CON"],
                          resampling={"n_resamples": 60}, random_seed=0)
    tab = res.summary()
    check_table(tab)
    assert list(tab.columns) == ["classical", "classical_low", "classical_high", "mean", "sd",
                                 "hdi_low", "hdi_high"]
    assert tab.index.names == ["estimand", "trait", "metric"]
    assert tab.attrs["classical_ci_kind"] == "percentile bootstrap (both)"
    assert tab.attrs["ci_prob"] == tab.attrs["classical_ci_prob"] == CI_PROB
    assert res.provenance["random_seed"] == 0
    assert res.table().shape == (2, 12)
    assert list(res.table().columns) == list(MEASURES)
    # the posterior columns are summaries.summarize of the Bayesian-bootstrap draws
    s = summarize(res.extra["posterior"])
    np.testing.assert_array_equal(
        tab.xs("metric02.CON", level="metric")["sd"].values,
        s["sd"].sel(metric="metric02.CON").values)
    # the classical interval is the percentile interval of the bootstrap draws
    iv = percentile_interval(res.extra["bootstrap"], CI_PROB)
    np.testing.assert_array_equal(
        tab.xs("metric01.COH", level="metric")["classical_low"].values,
        iv.sel(ci_bound="lower", metric="metric01.COH").values)
    point = correlation_measures(
        simulated["score"].isel(run=0).sel(metric=["metric01.COH", "metric02.CON"]).transpose(
            "metric", "system", "item"),
        simulated["rating"].sel(trait="COH").mean("rater"))
    np.testing.assert_allclose(res.table().values, point.values, atol=0)
    assert (tab["classical_low"] <= tab["classical_high"]).all()
    assert (tab["hdi_low"] <= tab["hdi_high"]).all()
    assert res.extra["posterior"].dims == ("resample", "metric", "measure")
    path = res.save(tmp_path / "corr.nc")
    back = bm.load(path)
    assert type(back).__name__ == "CorrelationsResult"
    assert back.summary().equals(tab)
    with pytest.raises(ValueError, match="XYZ"):
        bm.correlations(simulated, "XYZ", resampling={"n_resamples": 0})
    one = bm.correlations(simulated, "COH", raters="Rater.2", measures="global_pearson",
                          resampling={"n_resamples": 0}).summary()
    check_table(one)
    ref = stats.pearsonr(simulated["score"].isel(run=0, metric=0).values.ravel(),
                         simulated["rating"].sel(trait="COH", rater="Rater.2").values.ravel())[0]
    assert one["classical"].iloc[0] == pytest.approx(ref, abs=1e-12)


def test_summeval_measures_equal_scipy(summeval):
    """Real data (ties in ROUGE and G-Eval scores): a few metrics against the loop."""
    names = ["ROUGE.1", "G.EVAL.4.FLU", "BertScore_f1"]
    x = summeval["score"].isel(run=0).sel(metric=names).transpose("metric", "system", "item")
    z = summeval["rating"].sel(trait="COH").mean("rater")
    got = correlation_measures(x, z)
    for m, name in enumerate(names):
        for meas in MEASURES:
            ref = _loop(x.values[m], z.values, meas)
            assert float(got.sel(metric=name, measure=meas)) == pytest.approx(ref, abs=1e-12)


def test_correlations_refuse_the_old_keywords(simulated):
    """``rater=`` and ``n_resamples=`` of the previous release are errors naming them (no
    shim: ``raters=`` and ``resampling=`` are the one spelling)."""
    for old in ({"rater": "Rater.2"}, {"n_resamples": 30}):
        with pytest.raises(TypeError, match=repr(next(iter(old)))):
            bm.correlations(simulated, "COH", measures="system", **old)
    with pytest.raises(TypeError, match="'bogus'"):
        bm.correlations(simulated, "COH", bogus=1)


def test_correlations_human_labels_aligned(simulated):
    """A user-given human score is aligned by labels: reordered systems give the same
    measures; one with no shared labels raises naming the dim."""
    z = simulated["rating"].sel(trait="COH").mean("rater")
    a = bm.correlations(simulated, human=z.rename("h"), measures="system_pearson",
                        resampling={"n_resamples": 0})
    b = bm.correlations(simulated, human=z.isel(system=slice(None, None, -1)).rename("h"),
                        measures="system_pearson", resampling={"n_resamples": 0})
    np.testing.assert_allclose(a.summary()["classical"].values,
                               b.summary()["classical"].values, atol=1e-15)
    assert set(a.summary().index.get_level_values("trait")) == {"h"}
    bad = z.assign_coords(system=[f"x{i}" for i in range(z.sizes["system"])])
    with pytest.raises(ValueError, match="'system'"):
        bm.correlations(simulated, human=bad, resampling={"n_resamples": 0})


def test_undefined_measures_say_why_in_the_notes():
    """Issue 21, no silent NaN: a constant metric's correlations are NaN and a note per row
    says it is constant; a human score constant within every system explains the NaN of
    the within-system measures."""
    ds = bm.datasets.simulated(n_systems=5, n_items=8, n_metrics=3, random_seed=3)
    const = str(ds["metric"].values[0])
    ds["score"].loc[{"metric": const}] = 0.25
    res = bm.correlations(ds, "COH", measures=["global_pearson", "system_kendall"],
                          resampling={"n_resamples": 0})
    tab = res.summary()
    assert np.isnan(tab.loc[("global_pearson", "COH", const), "classical"])
    text = " ".join(res.notes)
    assert f"global_pearson of {const} cannot be computed: the metric is constant" in text
    assert f"system_kendall of {const} cannot be computed: the metric is constant" in text
    others = [str(m) for m in ds["metric"].values[1:]]
    assert not any(m in text for m in others)  # defined rows get no note
    # compare_metrics says the same of its NaN difference rows (issue 21)
    cmp_ = bm.compare_metrics(ds, "COH", measures="global_pearson", random_seed=0,
                              resampling={"n_resamples": 20, "n_permutations": 0})
    diff = cmp_.summary()["classical"]
    rows = diff.index.get_level_values("metric") == const
    assert rows.any() and diff[rows].isna().all() and diff[~rows].notna().all()
    cmp_text = " ".join(cmp_.notes)
    assert f"global_pearson of {const} cannot be computed: the metric is constant" in cmp_text
    assert "Every difference with such a metric is NaN" in cmp_text
    assert not any(m in cmp_text for m in others)
    # a human score constant within each system: within-system measures are undefined
    from bayesmeta.correlation.comparison import _why_undefined

    rng = np.random.default_rng(0)
    z = np.repeat(rng.normal(size=(4, 1)), 6, axis=1)
    x = rng.normal(size=(4, 6))
    assert _why_undefined(x, z, "within_system_pearson").startswith(
        "the human score is constant within every system")
    assert _why_undefined(x, np.full_like(z, 2.0), "system_kendall").startswith(
        "the human score is constant across system means")
