"""The agreement toolkit (issue 24) against frozen irrCAC values, the krippendorff package,
pingouin's ICC and scikit-learn's Cohen's kappa.

irrCAC is never imported: ``tests/results/irrcac_reference.json`` holds its values, the
version and the exact call (``tests/results/make_irrcac_reference.py``, run in a throwaway
venv)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import krippendorff
import numpy as np
import pandas as pd
import pingouin as pg
import pytest
from scipy import stats
from sklearn.metrics import cohen_kappa_score

import bayesmeta as bm
from bayesmeta.agreement.chance import Panel, chance_corrected, coefficient_draws
from bayesmeta.agreement.classical import krippendorff_alpha
from bayesmeta.agreement.coefficients import agreement_weights
from bayesmeta.agreement.icc import ICC_FORMS, icc, icc_values, jackknife_se, mean_squares
from bayesmeta.summaries import check_table

REF = json.loads((Path(__file__).parent / "results" / "irrcac_reference.json").read_text())
PANELS = {name: np.array([[np.nan if v is None else v for v in row] for row in rows])
          for name, rows in REF["panels"].items()}
LEVELS = {"identity": "nominal", "quadratic": "interval", "ratio": "ratio"}
TOL = 1e-9


def _ours(row: dict, y: np.ndarray) -> dict | None:
    coefficient = row["coefficient"]
    if coefficient == "krippendorff_weighted":
        if row["weights"] not in LEVELS:
            return None
        coefficient = f"krippendorff_{LEVELS[row['weights']]}"
    return chance_corrected(y, coefficient, row["weights"], ci_prob=0.95,
                            population=row["population"] or np.inf)


def _check_rows(panel: str, y: np.ndarray) -> int:
    rows = [r for r in REF["rows"] if r["panel"] == panel]
    assert rows, panel
    checked = 0
    for r in rows:
        out = _ours(r, y)
        if out is None:
            continue
        for key in ("value", "se", "low", "high"):
            assert out[key] == pytest.approx(r[key], abs=TOL), (panel, r["call"], key)
        checked += 1
    return checked


@pytest.mark.parametrize("panel", sorted(PANELS))
def test_chance_corrected_match_irrcac(panel):
    """Gwet's AC1/AC2, Fleiss, Conger, Brennan-Prediger and Krippendorff's alpha, every
    weight scheme, with and without the finite-population correction: values, standard
    errors and 95% intervals equal irrCAC's to 1e-9 (missing ratings included)."""
    assert _check_rows(panel, PANELS[panel]) >= 40


def test_summeval_matches_irrcac(summeval):
    for t in summeval["trait"].values:
        y = summeval["rating"].sel(trait=t).stack(u=("system", "item")).transpose(
            "u", "rater").values
        assert _check_rows(f"summeval_{t}", y) >= 70


def test_percent_agreement_is_irrcacs_pa():
    y = PANELS["missing30"]
    for r in REF["rows"]:
        if r["panel"] == "missing30" and r["coefficient"] == "gwet_ac":
            pa = chance_corrected(y, "percent_agreement", r["weights"])["value"]
            assert pa == pytest.approx(r["pa"], abs=TOL)


def test_reference_provenance():
    assert REF["meta"]["irrcac_version"] == "0.4.4"
    assert all("CAC(data, weights=" in r["call"] for r in REF["rows"])


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
@pytest.mark.parametrize("panel", ["missing30", "cac_raw4raters", "cac_raw5observers"])
def test_krippendorff_levels_match_package(level, panel):
    y = PANELS[panel]
    if level == "ratio" and np.nanmin(y) <= 0:
        y = y + 1
    ref = krippendorff.alpha(reliability_data=y.T, level_of_measurement=level)
    assert chance_corrected(y, f"krippendorff_{level}")["value"] == pytest.approx(ref, abs=TOL)
    assert krippendorff_alpha(y, level) == pytest.approx(ref, abs=TOL)


def test_krippendorff_levels_on_summeval(summeval):
    y = summeval["rating"].sel(trait="COH").stack(u=("system", "item")).transpose(
        "u", "rater").values
    for level in ("nominal", "ordinal", "interval", "ratio"):
        ref = krippendorff.alpha(reliability_data=y.T, level_of_measurement=level)
        assert chance_corrected(y, f"krippendorff_{level}")["value"] == pytest.approx(
            ref, abs=TOL)


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_cohen_kappa_matches_sklearn(weights):
    y = PANELS["missing30"][:, :2]
    y = y[~np.isnan(y).any(axis=1)]
    ref = cohen_kappa_score(y[:, 0], y[:, 1], weights=weights)
    out = chance_corrected(y, "cohen_kappa", weights or "identity")
    assert out["value"] == pytest.approx(ref, abs=TOL)


def test_two_rater_coefficients():
    y = PANELS["missing30"][:, :2]
    assert chance_corrected(y, "cohen_kappa")["value"] == chance_corrected(
        y, "conger_kappa")["value"]
    assert chance_corrected(y, "scott_pi")["value"] == chance_corrected(
        y, "fleiss_kappa")["value"]
    with pytest.raises(ValueError, match="cohen_kappa is for 2 raters"):
        chance_corrected(PANELS["missing30"], "cohen_kappa")


def _pingouin(y: np.ndarray, monkeypatch) -> pd.DataFrame:
    monkeypatch.setitem(pg.options, "round.column.CI95", None)
    long = pd.DataFrame(y).reset_index().melt(id_vars="index", var_name="rater",
                                              value_name="rating")
    return pg.intraclass_corr(long, targets="index", raters="rater",
                              ratings="rating").set_index("Type")


def _check_icc(y: np.ndarray, monkeypatch) -> None:
    ref = _pingouin(y, monkeypatch)
    ours = icc(y, ci_prob=0.95)
    alias = {"ICC(1)": "ICC(1,1)", "ICC(k)": "ICC(1,k)"}
    for form, (mw, _sf) in ICC_FORMS.items():
        r = ref.loc[alias.get(mw, mw)]
        assert ours[form]["value"] == pytest.approx(r["ICC"], abs=TOL), form
        assert ours[form]["low"] == pytest.approx(r["CI95"][0], abs=TOL), form
        assert ours[form]["high"] == pytest.approx(r["CI95"][1], abs=TOL), form
        assert ours[form]["F"] == pytest.approx(r["F"], rel=TOL), form


def test_icc_forms_match_pingouin(monkeypatch):
    y = PANELS["missing30"]
    _check_icc(y[~np.isnan(y).any(axis=1)], monkeypatch)


def test_icc_forms_match_pingouin_on_summeval(summeval, monkeypatch):
    for t in summeval["trait"].values:
        y = summeval["rating"].sel(trait=t).stack(u=("system", "item")).transpose(
            "u", "rater").values
        _check_icc(y, monkeypatch)


def test_weighted_draws_equal_resampled_data():
    """A bootstrap resample as multinomial unit weights gives exactly the coefficient of
    the resampled rows (the vectorised path of the resampling)."""
    y = PANELS["missing30"]
    panel = Panel(y)
    rng = np.random.default_rng(0)
    counts = rng.multinomial(panel.n, np.full(panel.n, 1 / panel.n), size=3).astype(float)
    kept = y[panel.kept]
    for c in ("percent_agreement", "fleiss_kappa", "conger_kappa", "gwet_ac",
              "brennan_prediger", "krippendorff_nominal", "krippendorff_ordinal",
              "krippendorff_interval", "krippendorff_ratio"):
        draws = coefficient_draws(panel, c, "quadratic", counts)
        for b in range(3):
            ref = chance_corrected(np.repeat(kept, counts[b].astype(int), axis=0), c,
                                   "quadratic", categories=panel.categories)["value"]
            assert draws[b] == pytest.approx(ref, abs=1e-12), c
    full = kept[~np.isnan(kept).any(axis=1)]
    w = rng.multinomial(len(full), np.full(len(full), 1 / len(full)), size=2).astype(float)
    vals = icc_values(mean_squares(full, w))
    for b in range(2):
        ref = icc(np.repeat(full, w[b].astype(int), axis=0))
        for form in ICC_FORMS:
            assert vals[form][b] == pytest.approx(ref[form]["value"], abs=1e-12)


def test_agreement_coefficients_table(simulated):
    res = bm.agreement_coefficients(simulated, traits=["COH", "FLU"], weights="linear")
    tab = res.summary()
    check_table(tab)
    assert tab.index.names == ["estimand", "trait"]
    assert list(tab.columns) == ["classical", "classical_low", "classical_high"]
    assert "cohen_kappa" not in tab.index.get_level_values("estimand")
    y = simulated["rating"].sel(trait="FLU").transpose("system", "item", "rater").values
    y = y.reshape(-1, y.shape[-1])
    assert tab.loc[("gwet_ac", "FLU"), "classical"] == pytest.approx(
        chance_corrected(y, "gwet_ac", "linear")["value"], abs=1e-12)
    det = res.details()
    assert det.loc[("icc_twoway_agreement_average", "COH"), "shrout_fleiss"] == "ICC2k"
    assert det.loc[("icc_twoway_agreement_average", "COH"), "mcgraw_wong"] == "ICC(A,k)"
    assert (tab["classical_low"] <= tab["classical"]).all()


def test_agreement_coefficients_warns_on_missing(simulated):
    ds = simulated.copy(deep=True)
    rng = np.random.default_rng(1)
    vals = ds["rating"].values
    vals[rng.random(vals.shape) < 0.3] = np.nan
    ds["rating"].values = vals
    n_missing = int(np.isnan(ds["rating"].sel(trait="COH").values).sum())
    with pytest.warns(UserWarning, match=f"trait COH: {n_missing} of 5100 ratings missing"):
        res = bm.agreement_coefficients(ds, traits=["COH"], coefficients=["fleiss_kappa",
                                                                          "icc_oneway_single"])
    assert res.details().loc[("fleiss_kappa", "COH"), "n_missing"] == n_missing
    assert res.details().loc[("icc_oneway_single", "COH"), "n_incomplete"] > 0


def test_agreement_coefficients_resampling(simulated):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = bm.agreement_coefficients(
            simulated, traits=["COH"], coefficients=["gwet_ac", "icc_twoway_agreement_average"],
            resampling={"n_resamples": 200}, random_seed=3)
    tab = res.summary()
    check_table(tab)
    assert list(tab.columns) == ["classical", "classical_low", "classical_high", "mean", "sd",
                                 "hdi_low", "hdi_high"]
    assert (tab["hdi_low"] < tab["classical"]).all() and (tab["classical"] < tab["hdi_high"]).all()
    det = res.details()
    assert (det["bootstrap_low"] < det["bootstrap_high"]).all()
    again = bm.agreement_coefficients(
        simulated, traits=["COH"], coefficients=["gwet_ac", "icc_twoway_agreement_average"],
        resampling={"n_resamples": 200}, random_seed=3)
    pd.testing.assert_frame_equal(tab, again.summary())


def test_agreement_coefficients_refuses_unknown(simulated):
    with pytest.raises(ValueError, match="unknown coefficient"):
        bm.agreement_coefficients(simulated, coefficients=["kappa"])
    with pytest.raises(ValueError, match="weights must be one of"):
        bm.agreement_coefficients(simulated, weights="cubic")
    with pytest.raises(ValueError, match="cohen_kappa and scott_pi are for 2 raters"):
        bm.agreement_coefficients(simulated, coefficients=["cohen_kappa"])
    two = bm.agreement_coefficients(simulated, raters=["Rater.1", "Rater.2"], traits=["COH"],
                                    coefficients=["cohen_kappa", "scott_pi"])
    assert two.summary()["classical"].notna().all()


def test_compare_agreement_traits_is_paired(simulated):
    """Differences are of draws under the same weights: the posterior mean of A - B is the
    difference of agreement_coefficients' posterior means with the same seed."""
    kw = {"coefficients": ["gwet_ac", "icc_twoway_agreement_average"],
          "resampling": {"n_resamples": 150}, "random_seed": 7}
    comp = bm.compare_agreement(simulated, traits=["COH", "FLU"], **kw)
    tab = comp.summary()
    check_table(tab)
    assert tab.index.names == ["estimand", "trait", "trait2"]
    single = bm.agreement_coefficients(simulated, traits=["COH", "FLU"], **kw).summary()
    for c in kw["coefficients"]:
        for col in ("classical", "mean"):
            assert tab.loc[(c, "COH", "FLU"), col] == pytest.approx(
                single.loc[(c, "COH"), col] - single.loc[(c, "FLU"), col], abs=1e-12)
    # paired: the difference varies less than the two coefficients taken independently
    assert (tab["sd"].values < np.hypot(single["sd"].values[::2], single["sd"].values[1::2])
            ).all()
    p = comp.details()["p_greater"]
    assert ((p >= 0) & (p <= 1)).all()


def test_compare_agreement_panels(simulated):
    panels = {"a": ["Rater.1", "Rater.2"], "b": ["Rater.2", "Rater.3"]}
    res = bm.compare_agreement(simulated, panels=panels, traits=["COH"],
                               coefficients="cohen_kappa", resampling={"n_resamples": 50},
                               random_seed=0)
    tab = res.summary()
    assert tab.index.tolist() == [("cohen_kappa", "COH", "a", "b")]
    y = simulated["rating"].sel(trait="COH").transpose("system", "item", "rater").values
    y = y.reshape(-1, y.shape[-1])
    want = (chance_corrected(y[:, :2], "cohen_kappa")["value"]
            - chance_corrected(y[:, 1:], "cohen_kappa")["value"])
    assert tab["classical"].iloc[0] == pytest.approx(want, abs=1e-12)
    with pytest.raises(ValueError, match="not in the data"):
        bm.compare_agreement(simulated, panels={"a": ["Rater.1", "Rater.9"],
                                                "b": ["Rater.2", "Rater.3"]})


def test_population_correction_narrows_the_interval(simulated):
    kw = {"traits": ["COH"], "coefficients": ["fleiss_kappa"]}
    wide = bm.agreement_coefficients(simulated, **kw)
    narrow = bm.agreement_coefficients(simulated, population=3400, **kw)
    se_w = wide.details()["se"].iloc[0]
    assert narrow.details()["se"].iloc[0] == pytest.approx(se_w * np.sqrt(0.5), rel=1e-12)
    assert any("finite-population" in n for n in narrow.notes)


def test_resample_chunks_change_no_number(simulated, monkeypatch):
    """Product weights are formed a chunk of resamples at a time (bounded memory for large
    panels); one resample per chunk gives the numbers of one chunk for all."""
    from bayesmeta.agreement import coefficients

    kw = {"traits": ["COH"], "coefficients": ["gwet_ac", "krippendorff_ordinal",
                                              "icc_twoway_agreement_single"],
          "resampling": {"n_resamples": 40}, "random_seed": 5}
    whole = bm.agreement_coefficients(simulated, **kw)
    monkeypatch.setattr(coefficients, "_CHUNK", 1)
    chunked = bm.agreement_coefficients(simulated, **kw)
    pd.testing.assert_frame_equal(whole.summary(), chunked.summary(), rtol=1e-12)
    pd.testing.assert_frame_equal(whole.details(), chunked.details(), rtol=1e-12)


def _pingouin_icc(y: np.ndarray) -> pd.Series:
    long = pd.DataFrame(y).reset_index().melt(id_vars="index", var_name="rater",
                                              value_name="rating")
    ref = pg.intraclass_corr(long, targets="index", raters="rater", ratings="rating")
    alias = {"ICC(1,1)": "ICC(1)", "ICC(1,k)": "ICC(k)"}
    mw = {v[0]: k for k, v in ICC_FORMS.items()}
    return pd.Series({mw[alias.get(t, t)]: v for t, v in ref.set_index("Type")["ICC"].items()})


def test_icc_jackknife_equals_delete_one_pingouin():
    """jackknife_se is the delete-one jackknife of pingouin's ICC forms (n refits)."""
    rng = np.random.default_rng(5)
    y = rng.integers(1, 6, (15, 3)).astype(float) + rng.integers(0, 3, (15, 1))
    loo = pd.DataFrame([_pingouin_icc(np.delete(y, i, axis=0)) for i in range(len(y))])
    want = np.sqrt((len(y) - 1) / len(y) * ((loo - loo.mean()) ** 2).sum())
    got = jackknife_se(y)
    for form in ICC_FORMS:
        assert got[form] == pytest.approx(want[form], abs=1e-10), form


def test_icc_default_interval_is_jackknife_t_and_f_interval_in_details(simulated):
    res = bm.agreement_coefficients(simulated, traits=["COH"], coefficients=list(ICC_FORMS),
                                    ci_prob=0.9)
    tab, det = res.summary(), res.details()
    y = simulated["rating"].sel(trait="COH").transpose("system", "item", "rater").values
    y = y.reshape(-1, y.shape[-1])
    y = y[~np.isnan(y).any(axis=1)]
    ref, se = icc(y, ci_prob=0.9), jackknife_se(y)
    t = stats.t.ppf(0.95, len(y) - 1)
    for form in ICC_FORMS:
        row = tab.loc[(form, "COH")]
        assert det.loc[(form, "COH"), "se"] == pytest.approx(se[form], rel=1e-12)
        assert row["classical_low"] == pytest.approx(ref[form]["value"] - t * se[form],
                                                     abs=1e-12)
        assert row["classical_high"] == pytest.approx(
            min(1.0, ref[form]["value"] + t * se[form]), abs=1e-12)
        assert det.loc[(form, "COH"), "f_low"] == pytest.approx(ref[form]["low"], abs=1e-12)
        assert det.loc[(form, "COH"), "f_high"] == pytest.approx(ref[form]["high"], abs=1e-12)


@pytest.mark.parametrize("unit", ["items", "systems", "both"])
def test_agreement_weights_resample_the_same_unit(unit):
    """The Bayesian bootstrap weighs what the bootstrap resamples; the other dim weighs 1."""
    (da, db), (a, b) = agreement_weights(np.random.default_rng(0), 50, (4, 30), unit)
    for w, size, on in ((da, 4, unit != "items"), (db, 30, unit != "systems"),
                        (a, 4, unit != "items"), (b, 30, unit != "systems")):
        assert w.sum(1) == pytest.approx(np.full(50, size))
        assert (w != 1).any() == on


def test_compare_agreement_default_unit_is_items(simulated):
    kw = {"traits": ["COH", "FLU"], "coefficients": "gwet_ac", "random_seed": 2}
    items = bm.compare_agreement(simulated, resampling={"n_resamples": 100}, **kw)
    both = bm.compare_agreement(simulated, resampling={"n_resamples": 100, "unit": "both"},
                                **kw)
    explicit = bm.compare_agreement(simulated, resampling={"n_resamples": 100,
                                                           "unit": "items"}, **kw)
    pd.testing.assert_frame_equal(items.summary(), explicit.summary())
    assert not np.allclose(items.summary()["sd"], both.summary()["sd"])


def test_compare_agreement_test_is_jackknife_t(simulated):
    """classical_low/high and p_value are one t test with the paired delete-one jackknife se
    (20 items, so each group is one item): the reference drops each item from the data and
    recomputes both traits' coefficients through the public API; the interval excludes 0
    exactly when p_value < 1 - ci_prob."""
    small = simulated.isel(item=slice(0, 20))
    kw = {"coefficients": ["gwet_ac", "fleiss_kappa"], "ci_prob": 0.9}
    comp = bm.compare_agreement(small, traits=["COH", "FLU"], resampling={"n_resamples": 50},
                                random_seed=11, **kw)
    tab, det = comp.summary(), comp.details()
    check_table(tab)
    n = small.sizes["item"]
    loo = []
    for i in range(n):
        part = small.isel(item=[j for j in range(n) if j != i])
        t = bm.agreement_coefficients(part, traits=["COH", "FLU"], **kw).summary()
        loo.append([t.loc[(c, "COH"), "classical"] - t.loc[(c, "FLU"), "classical"]
                    for c in kw["coefficients"]])
    loo = np.array(loo)
    se = np.sqrt((n - 1) / n * ((loo - loo.mean(0)) ** 2).sum(0))
    for c_i, c in enumerate(kw["coefficients"]):
        key = (c, "COH", "FLU")
        assert det.loc[key, "se"] == pytest.approx(se[c_i], rel=1e-9), c
        q = stats.t.ppf(0.95, n - 1)
        assert tab.loc[key, "classical_low"] == pytest.approx(
            tab.loc[key, "classical"] - q * se[c_i], rel=1e-9)
        assert det.loc[key, "p_value"] == pytest.approx(
            2 * stats.t.sf(abs(tab.loc[key, "classical"]) / se[c_i], n - 1), rel=1e-9)
    excludes = (tab["classical_low"] > 0) | (tab["classical_high"] < 0)
    assert (excludes == (det["p_value"] < 0.1)).all()


def test_compare_agreement_refuses_one_system_unit(simulated):
    one = simulated.isel(system=[0])
    with pytest.raises(ValueError, match="needs at least 2 systems"):
        bm.compare_agreement(one, traits=["COH", "FLU"], coefficients="gwet_ac",
                             resampling={"n_resamples": 20, "unit": "systems"})
    both = bm.compare_agreement(one, traits=["COH", "FLU"], coefficients="gwet_ac",
                                resampling={"n_resamples": 20, "unit": "both"}, random_seed=0)
    items = bm.compare_agreement(one, traits=["COH", "FLU"], coefficients="gwet_ac",
                                 resampling={"n_resamples": 20}, random_seed=0)
    # one system: weighing "both" is weighing items, the jackknife likewise
    assert both.details()["se"].iloc[0] == pytest.approx(items.details()["se"].iloc[0],
                                                         rel=1e-12)
