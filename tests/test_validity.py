"""MTMM table and concurrent validity against scipy's correlations and direct loops."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import bayesmeta as bm
from bayesmeta.data.schema import MissingDataWarning
from bayesmeta.summaries import check_table

SCIPY = {
    "pearson": lambda x, y: stats.pearsonr(x, y)[0],
    "spearman": lambda x, y: stats.spearmanr(x, y)[0],
    "kendall": lambda x, y: stats.kendalltau(x, y, variant="b")[0],
}


def _corr(tab, a, b):
    """The correlation cell of two variables, in whichever order the table holds them."""
    key = ("correlation", a, b) if ("correlation", a, b) in tab.index else ("correlation", b, a)
    return tab.loc[key, "classical"]


@pytest.mark.parametrize("method", ["kendall", "spearman", "pearson"])
def test_mtmm_cells_equal_scipy(simulated, method):
    res = bm.mtmm(simulated, coefficient=method)
    tab = res.summary()
    check_table(tab)
    means = simulated["rating"].mean("item")
    for a, b in [("Rater.1.COH", "Rater.2.COH"), ("Rater.1.COH", "Rater.1.REL"),
                 ("Rater.3.FLU", "Rater.2.CON")]:
        ra, ta = a.rsplit(".", 1)
        rb, tb = b.rsplit(".", 1)
        x = means.sel(rater=ra, trait=ta).values
        y = means.sel(rater=rb, trait=tb).values
        assert _corr(tab, a, b) == pytest.approx(SCIPY[method](x, y), abs=1e-12)


def test_mtmm_labels_and_diagonal(simulated):
    res = bm.mtmm(simulated)
    tab, det = res.summary(), res.details()
    check_table(tab)
    assert tab.index.names == ["estimand", "variable", "variable2"]
    assert list(tab.columns) == ["classical", "classical_low", "classical_high"]
    diag = tab.xs("alpha", level="estimand")
    assert len(diag) == 12
    assert (diag.index.get_level_values("variable2") == "").all()
    for (var, _), row in diag.iterrows():
        rater, trait = var.rsplit(".", 1)
        y = simulated["rating"].sel(rater=rater, trait=trait).transpose("system", "item").values
        # Cronbach's alpha with systems as examinees, items as test items (complete data);
        # R: psych::alpha(y)$total$raw_alpha
        cov = np.cov(y, rowvar=False)
        J = y.shape[1]
        expected = J / (J - 1) * (1 - np.trace(cov) / cov.sum())
        assert row["classical"] == pytest.approx(expected, abs=1e-12)
    cell = det["cell"]
    assert cell.loc[("correlation", "Rater.1.COH", "Rater.2.COH")] == "validity diagonal"
    assert cell.loc[("correlation", "Rater.1.COH", "Rater.1.REL")] == "heterotrait-monomethod"
    assert cell.loc[("correlation", "Rater.1.COH", "Rater.2.REL")] == "heterotrait-heteromethod"
    assert cell.loc[("alpha", "Rater.1.COH", "")] == "reliability diagonal"
    assert det.loc[("correlation", "Rater.1.COH", "Rater.2.COH"), "evidence"] == "convergent"
    assert det.loc[("correlation", "Rater.1.COH", "Rater.2.REL"),
                   ["trait", "method", "trait2", "method2"]].tolist() == [
        "COH", "Rater.1", "REL", "Rater.2"]
    assert (det["n"] == 17).all()
    assert len(tab) == 12 * 13 // 2
    mat = res.matrix()
    assert mat.shape == (12, 12)
    assert mat.loc[("COH", "Rater.1"), ("COH", "Rater.2")] == _corr(tab, "Rater.1.COH",
                                                                    "Rater.2.COH")
    text = str(res)
    assert "*" in text and "(" in text and "[" in text


def test_mtmm_with_metric_design(simulated):
    design = {"metric01.COH": ("autoA", "COH"), "metric02.CON": ("autoA", "CON"),
              "Rater.1.COH": ("Rater.1", "COH"), "Rater.1.CON": ("Rater.1", "CON")}
    res = bm.mtmm(simulated, design=design, coefficient="pearson")
    tab = res.summary()
    check_table(tab)
    assert res.details().loc[("correlation", "metric01.COH", "Rater.1.COH"), "cell"] == \
        "validity diagonal"
    x = simulated["score"].sel(metric="metric01.COH", run="1").mean("item").values
    y = simulated["rating"].sel(rater="Rater.1", trait="COH").mean("item").values
    assert _corr(tab, "metric01.COH", "Rater.1.COH") == pytest.approx(
        stats.pearsonr(x, y)[0], abs=1e-12)


def test_mtmm_metrics_take_their_trait_and_method(simulated):
    res = bm.mtmm(simulated, metrics=["metric01.COH", "metric02.CON"], raters=["Rater.1"],
                  coefficient="spearman")
    det = res.details()
    row = det.loc[("correlation", "metric01.COH", "Rater.1.COH")]
    assert (row["method"], row["trait"], row["cell"]) == ("metric01", "COH",
                                                          "validity diagonal")
    x = simulated["score"].sel(metric="metric01.COH", run="1").mean("item").values
    y = simulated["rating"].sel(rater="Rater.1", trait="COH").mean("item").values
    assert _corr(res.summary(), "metric01.COH", "Rater.1.COH") == pytest.approx(
        stats.spearmanr(x, y)[0], abs=1e-12)
    assert len(res.summary()) == 6 * 7 // 2  # 2 metrics + 4 traits of Rater.1


def test_mtmm_global_level_equals_pooled_scipy(simulated):
    tab = bm.mtmm(simulated, raters=["Rater.1.COH", "Rater.2.CON"], coefficient="pearson",
                  level="global").summary()
    x = simulated["rating"].sel(rater="Rater.1", trait="COH").values.ravel()
    y = simulated["rating"].sel(rater="Rater.2", trait="CON").values.ravel()
    assert _corr(tab, "Rater.1.COH", "Rater.2.CON") == pytest.approx(stats.pearsonr(x, y)[0],
                                                                      abs=1e-12)


def test_mtmm_options_are_keywords(simulated):
    """``mtmm(data, design, method)`` of the previous release is an error: options are
    keywords, the coefficient is ``coefficient=``."""
    design = {"Rater.1.COH": ("Rater.1", "COH"), "Rater.2.COH": ("Rater.2", "COH")}
    with pytest.raises(TypeError, match="positional"):
        bm.mtmm(simulated, design, "pearson")
    with pytest.raises(TypeError, match="'method'"):
        bm.mtmm(simulated, design=design, method="pearson")
    with pytest.raises(ValueError, match="coefficient must be one of"):
        bm.mtmm(simulated, coefficient="tau")


def test_concurrent_validity_criteria(simulated):
    many = bm.concurrent_validity(simulated, ["COH", "FLU"]).summary()
    check_table(many)
    one = bm.concurrent_validity(simulated, "FLU").summary()
    np.testing.assert_array_equal(many.xs("FLU", level="trait")["classical"],
                                  one.xs("FLU", level="trait")["classical"])
    sub = bm.concurrent_validity(simulated, "FLU", raters="Rater.2")
    with pytest.raises(ValueError, match=r"unknown criterion 'Rater\.2\.FLU'"):
        bm.concurrent_validity(simulated, "Rater.2.FLU")
    assert (sub.details()["human"] == "Rater.2.FLU").all()
    with pytest.raises(ValueError, match="unknown criterion 'XYZ'"):
        bm.concurrent_validity(simulated, "XYZ")
    with pytest.raises(ValueError, match="level must be"):
        bm.concurrent_validity(simulated, "COH", level="document")


def test_concurrent_validity_old_spellings_are_refused(simulated):
    """Positional options, ``criterion=`` and a DataArray trait of the previous release are
    errors: ``trait``, ``human=`` and keyword options are the one spelling."""
    with pytest.raises(TypeError, match="positional"):
        bm.concurrent_validity(simulated, "COH", "pearson", "global")
    with pytest.raises(TypeError, match="'criterion'"):
        bm.concurrent_validity(simulated, criterion="COH")
    with pytest.raises(TypeError, match="'method'"):
        bm.concurrent_validity(simulated, "COH", method="pearson")


def test_concurrent_validity_human_aligned_by_label(simulated):
    """A human score is aligned to the data by label through select.align: integer item
    labels meet the dataset's string labels "0".."99"; labels that do not meet raise."""
    ds = simulated.assign_coords(item=[str(i) for i in range(simulated.sizes["item"])])
    mean = ds["rating"].sel(trait="COH").mean("rater")
    human = mean.assign_coords(item=np.arange(ds.sizes["item"])).rename("COH mean")
    human = human.isel(item=slice(None, None, -1), system=slice(None, None, -1))  # reordered
    res = bm.concurrent_validity(ds, human=human, level="within_system", coefficient="pearson")
    check_table(res.summary())
    ref = bm.concurrent_validity(ds, "COH", level="within_system", coefficient="pearson").summary()
    np.testing.assert_allclose(res.summary()["classical"].to_numpy(),
                               ref["classical"].to_numpy(), rtol=0, atol=1e-15)
    assert set(res.summary().index.get_level_values("trait")) == {"COH mean"}
    # integer item labels against the simulated data's "doc001".. labels: nothing shared
    ints = simulated["rating"].sel(trait="COH").mean("rater").assign_coords(
        item=np.arange(simulated.sizes["item"]))
    with pytest.raises(ValueError, match="share no label on dim 'item'"):
        bm.concurrent_validity(simulated, human=ints)
    # partial overlap: the data's items the human score lacks are counted in a warning
    part = human.isel(item=slice(0, 60))
    with pytest.warns(MissingDataWarning, match="items of the data are missing"):
        res = bm.concurrent_validity(ds, human=part)
    assert (res.details()["n_outputs"] == 17 * 60).all()
    with pytest.raises(ValueError, match="trait= or human="):
        bm.concurrent_validity(ds, "COH", human=human)


def test_summeval_mtmm_reproduces_paper_structure(summeval):
    """MetricEval Table 1: coherence and relevance by the same expert correlate nearly as
    highly as coherence across experts; diagonal = consistency (0.96 for Expert 1 COH)."""
    res = bm.mtmm(summeval)
    tab = res.summary().join(res.details())
    check_table(res.summary())
    assert tab.loc[("alpha", "Expert.1.COH", ""), "classical"] == pytest.approx(0.96, abs=5e-3)
    conv = tab[(tab["cell"] == "validity diagonal") & (tab["trait"] != "FLU")]["classical"]
    div = tab[tab["cell"] == "heterotrait-monomethod"]["classical"]
    assert conv.mean() > div.mean()
    coh_rel = [_corr(tab, f"Expert.{k}.COH", f"Expert.{k}.REL") for k in (1, 2, 3)]
    assert all(v > 0.55 for v in coh_rel)


# MetricEval (Xiao et al. 2023) Table 1, upper triangle row by row, order
# COH E1 E2 E3, CON E1 E2 E3, FLU E1 E2 E3, REL E1 E2 E3 (diagonal = consistency).
TABLE1 = """
0.96 0.79 0.69 0.35 0.57 0.28 0.59 0.26 0.54 0.71 0.56 0.72
0.98 0.81 0.17 0.41 0.19 0.56 0.21 0.51 0.74 0.65 0.66
0.95 0.18 0.42 0.09 0.6 0.34 0.38 0.6 0.6 0.65
0.98 0.74 0.79 0.44 0.48 0.46 0.36 0.41 0.33
0.98 0.68 0.64 0.44 0.6 0.57 0.67 0.55
0.98 0.36 0.34 0.52 0.39 0.43 0.3
0.97 0.53 0.63 0.65 0.74 0.72
0.96 0.4 0.38 0.41 0.37
0.95 0.63 0.57 0.59
0.92 0.79 0.78
0.98 0.72
0.91
"""


def test_summeval_mtmm_reproduces_metriceval_table1(summeval):
    """Table 1 was computed on rank-normalised ratings (App. A.2); every one of its 78
    cells is reproduced to the two decimals printed (tolerance 0.005 + float slack)."""
    res = bm.mtmm(summeval, coefficient="kendall", normalize=True)
    check_table(res.summary())
    mat = res.matrix()
    rows = [list(map(float, line.split())) for line in TABLE1.strip().splitlines()]
    for i, row in enumerate(rows):
        for k, expected in enumerate(row):
            got = mat.iloc[i, i + k]
            assert got == pytest.approx(expected, abs=0.0051), (mat.index[i], mat.columns[i + k])


def test_validity_with_a_continuous_judgment(simulated):
    """A trait held as a continuous judgment (no raters) enters the MTMM table with method
    'judgment' and serves as a concurrent-validity criterion."""
    judged = simulated["rating"].mean("rater").where(simulated["trait"] == "REL")
    ds = simulated.assign(rating=simulated["rating"].where(simulated["trait"] != "REL"),
                          judgment=judged)
    res = bm.mtmm(ds, coefficient="pearson")
    check_table(res.summary())
    det = res.details()
    assert det.loc[("alpha", "REL", ""), "method"] == "judgment"
    assert det.loc[("correlation", "Rater.1.COH", "REL"), "cell"] == "heterotrait-heteromethod"
    x = ds["rating"].sel(rater="Rater.1", trait="COH").mean("item").values
    y = judged.sel(trait="REL").mean("item").values
    assert res.summary().loc[("correlation", "Rater.1.COH", "REL"), "classical"] == \
        pytest.approx(stats.pearsonr(x, y)[0], abs=1e-12)
    cv = bm.concurrent_validity(ds, "REL")
    assert (cv.details()["human"] == "REL (judgment)").all()


def test_validity_results_round_trip(tmp_path, simulated):
    for k, res in enumerate((bm.mtmm(simulated), bm.concurrent_validity(
            simulated, ["COH", "FLU"], coefficient="pearson"))):
        back = bm.load(res.save(tmp_path / f"r{k}.nc"))
        assert type(back) is type(res)
        pd.testing.assert_frame_equal(back.summary(), res.summary())
        assert str(back) == str(res)


def test_factor_validity_on_cfa_factor_scores(simulated):
    """Validity against factor scores (MetricEval Fig. 4) is bm.factor_validity (no longer a
    CFA criterion of concurrent_validity): its classical column equals SciPy's Kendall tau of
    metric and factor-score system means."""
    from scipy.stats import kendalltau

    model = "\n".join(f"{t.lower()} =~ " + " + ".join(f"Rater.{r}.{t}" for r in (1, 2, 3))
                      for t in ("COH", "FLU"))
    fit = bm.cfa(model, simulated)
    tab = bm.factor_validity(simulated, fit, random_seed=3,
                             resampling={"n_resamples": 40}).summary()
    check_table(tab)
    eta = fit.factor_scores(level="system").sel(trait="flu")
    x = simulated["score"].sel(metric="metric03.FLU", run="1").mean("item")
    ref = kendalltau(x.sel(system=eta["system"].values).values, eta.values).statistic
    assert tab.loc[("system_kendall", "flu", "metric03.FLU"), "classical"] == pytest.approx(
        ref, abs=1e-12)


def test_one_mtmm_refuses_options_of_the_other_table(simulated):
    """bm.mtmm is the one MTMM: with fit= it tabulates factor scores (the options of the
    table of ratings are refused, naming them), without fit= the factor-score options are
    refused (never silently dropped)."""
    model = "coh =~ Rater.1.COH + Rater.2.COH + Rater.3.COH"
    fit = bm.cfa(model, simulated)
    with pytest.raises(ValueError, match="raters, normalize apply to the table of ratings"):
        bm.mtmm(simulated, fit=fit, raters=["Rater.1"], normalize=True)
    with pytest.raises(ValueError, match="resampling, random_seed apply to mtmm"):
        bm.mtmm(simulated, resampling={"n_resamples": 10}, random_seed=1)
    assert not hasattr(bm, "factor_mtmm")


def test_mtmm_pearson_intervals_equal_scipy(simulated):
    """Each system-level Pearson cell carries the Fisher-z interval of scipy's pearsonr at
    ci_prob (n = systems with both means); the alpha diagonal carries Feldt's interval."""
    res = bm.mtmm(simulated, coefficient="pearson", ci_prob=0.9)
    tab = res.summary()
    means = simulated["rating"].mean("item")
    for a, b in [("Rater.1.COH", "Rater.2.COH"), ("Rater.1.COH", "Rater.1.REL"),
                 ("Rater.3.FLU", "Rater.2.CON")]:
        ra, ta = a.rsplit(".", 1)
        rb, tb = b.rsplit(".", 1)
        x = means.sel(rater=ra, trait=ta).values
        y = means.sel(rater=rb, trait=tb).values
        ref = stats.pearsonr(x, y).confidence_interval(confidence_level=0.9)
        key = ("correlation", a, b) if ("correlation", a, b) in tab.index else (
            "correlation", b, a)
        assert tab.loc[key, "classical_low"] == pytest.approx(ref.low, abs=1e-9)
        assert tab.loc[key, "classical_high"] == pytest.approx(ref.high, abs=1e-9)
    assert tab.attrs["classical_ci_prob"] == pytest.approx(0.9)
    assert "Fisher z" in tab.attrs["classical_ci_kind"]
    diag = tab.xs("alpha", level="estimand")
    n, k = simulated.sizes["system"], simulated.sizes["item"]
    a = diag["classical"].to_numpy()
    # Feldt (1965), closed form with scipy's F quantiles
    low = 1 - (1 - a) * stats.f.ppf(0.95, n - 1, (n - 1) * (k - 1))
    high = 1 - (1 - a) * stats.f.ppf(0.05, n - 1, (n - 1) * (k - 1))
    np.testing.assert_allclose(diag["classical_low"], low, rtol=0, atol=1e-12)
    np.testing.assert_allclose(diag["classical_high"], high, rtol=0, atol=1e-12)


@pytest.mark.parametrize("method", ["kendall", "spearman"])
def test_mtmm_rank_intervals_follow_their_fisher_z_variances(simulated, method):
    """Kendall: var(atanh tau) = 0.437/(n-4) (Fieller, Hartley & Pearson 1957); Spearman:
    (1 + r^2/2)/(n-3) (Bonett & Wright 2000); closed forms computed here with scipy."""
    tab = bm.mtmm(simulated, coefficient=method).summary()
    corr = tab.xs("correlation", level="estimand")
    r = corr["classical"].to_numpy()
    n = simulated.sizes["system"]
    var = 0.437 / (n - 4) if method == "kendall" else (1 + r ** 2 / 2) / (n - 3)
    q = stats.norm.ppf(0.97)
    np.testing.assert_allclose(corr["classical_low"], np.tanh(np.arctanh(r) - q * np.sqrt(var)),
                               rtol=0, atol=1e-12)
    np.testing.assert_allclose(corr["classical_high"],
                               np.tanh(np.arctanh(r) + q * np.sqrt(var)), rtol=0, atol=1e-12)
    assert (corr["classical_low"] < corr["classical"]).all()
    assert (corr["classical"] < corr["classical_high"]).all()


def test_mtmm_other_levels_give_no_correlation_interval(simulated):
    res = bm.mtmm(simulated, level="within_system")
    corr = res.summary().xs("correlation", level="estimand")
    assert corr["classical_low"].isna().all()
    assert any("no Fisher-z interval" in n for n in res.notes)
