"""The report's agreement section (issue 24, item 4): the coefficients of the data's level of
measurement, and the paired panel differences when the raters form two or more panels.

Reference: ``bm.agreement_coefficients`` and ``bm.compare_agreement`` called directly on the
same data with the same coefficients, weights, resamples and seed (for annotations: on a
ratings dataset built here by hand from the same labels). Every number of the section's
tables must equal them to 1e-12 (the same computation; only summation order could differ).
The level of measurement is checked against the rule stated on the page (text labels and
two-point scales nominal, 3 to 10 points ordinal, longer scales interval, a declared
``level_of_measurement`` first)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import xarray as xr

import bayesmeta as bm
from bayesmeta.agreement.comparison import AgreementComparisonResult
from bayesmeta.report._agreement_section import (
    ALPHA_TENTATIVE,
    level_coefficients,
    measurement_level,
    rater_panels,
)
from bayesmeta.report._answer import build_answer

TOL = 1e-12
SEED = 11
RES = {"n_resamples": 40, "unit": "items"}
#: The report is asked to resample both systems and items; its agreement section still
#: resamples items (the unit its intervals are calibrated for), so it must equal RES.
RES_REPORT = {"n_resamples": 40, "unit": "both"}
ORDINAL = ["krippendorff_ordinal", "gwet_ac", "fleiss_kappa", "icc_twoway_agreement_single",
           "icc_twoway_agreement_average"]
SUMMARY = ["classical", "classical_low", "classical_high", "mean", "sd", "hdi_low", "hdi_high"]


def _ratings(n_raters: int = 4, seed: int = 1) -> xr.Dataset:
    ds = bm.simulate.simulate_summeval(seed, n_systems=5, n_items=16, n_raters=n_raters,
                                       n_metrics=2)
    return ds.drop_vars(["true_loading", "true_threshold"])


def _section(ds: xr.Dataset):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep = bm.report(ds, sections=["agreement"], random_seed=SEED, resampling=RES_REPORT,
                        progress=False)
    run = rep.section("agreement")
    return rep, run


def _same(frame, ref) -> None:
    """Every summary column of the section's table equals the direct call's."""
    assert list(frame.index) == list(ref.index)
    for col in SUMMARY:
        np.testing.assert_allclose(frame[col].to_numpy(float), ref[col].to_numpy(float),
                                   rtol=0, atol=TOL, err_msg=col)


def _coefficients(ds, names, weights, raters=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return bm.agreement_coefficients(ds, coefficients=names, weights=weights,
                                         raters=raters, resampling=RES, random_seed=SEED)


# ----------------------------------------------------------------- level of measurement
def test_ordinal_section_equals_agreement_coefficients():
    ds = _ratings(3)
    _, run = _section(ds)
    assert run.status == "ok", run.error
    out = run.output
    ref = _coefficients(ds, ORDINAL, "quadratic")
    _same(out.tables[0].frame, ref.summary())
    assert (ref.details()["weights"] == "quadratic").all()
    assert out.reading.startswith("Agreement (ordinal level, krippendorff_ordinal)")
    notes = " ".join(out.notes)
    assert "Level of measurement: ordinal" in notes and "declared scale 1..5" in notes
    assert "ICC(A,1)" in notes and "ICC(2,1)" in notes and "ICC(A,k)" in notes
    assert "Traits are not compared" in notes
    # the disagreement finding quotes the first coefficient against the 0.667 threshold
    first = ref.summary().xs("krippendorff_ordinal")["classical"]
    raters = [f.text for f in out.findings if f.kind == "raters"]
    if (first < ALPHA_TENTATIVE).any():
        assert any("disagree (krippendorff_ordinal below 0.67)" in t for t in raters)
    else:
        assert any("agree (krippendorff_ordinal at least" in t for t in raters)


def test_two_raters_get_cohens_weighted_kappa():
    ds = _ratings(2)
    _, run = _section(ds)
    names = ["krippendorff_ordinal", "gwet_ac", "cohen_kappa", *ORDINAL[3:]]
    _same(run.output.tables[0].frame, _coefficients(ds, names, "quadratic").summary())


def test_long_scale_is_interval():
    ds = _ratings(3)
    rating = ds["rating"] * 20
    rating.attrs = {"scale_min": 0.0, "scale_max": 100.0}
    ds = ds.assign(rating=rating)
    assert measurement_level(ds)[0] == "interval"
    _, run = _section(ds)
    names = ["krippendorff_interval", *ORDINAL[3:]]
    _same(run.output.tables[0].frame, _coefficients(ds, names, "identity").summary())
    assert "101-point scale" in run.output.notes[0]


def test_binary_scale_and_declared_level():
    ds = _ratings(3)
    binary = (ds["rating"] >= 3).astype(float).where(ds["rating"].notnull())
    binary.attrs = {"scale_min": 0.0, "scale_max": 1.0}
    assert measurement_level(ds.assign(rating=binary))[0] == "nominal"
    declared = ds["rating"].copy()
    declared.attrs = {**ds["rating"].attrs, "level_of_measurement": "interval"}
    level, why = measurement_level(ds.assign(rating=declared))
    assert level == "interval" and "level_of_measurement" in why
    declared.attrs["level_of_measurement"] = "ratio-ish"
    with pytest.raises(ValueError, match=r"level_of_measurement.*'ratio-ish'"):
        measurement_level(ds.assign(rating=declared))
    _, run = _section(ds.assign(rating=binary))
    names = ["krippendorff_nominal", "gwet_ac", "fleiss_kappa", "percent_agreement"]
    _same(run.output.tables[0].frame,
          _coefficients(ds.assign(rating=binary), names, "identity").summary())


def _labels(text: bool) -> tuple[dict, dict, np.ndarray]:
    """Three annotators and two judges on 50 instances, labels 0-2 (or "x", "y", "z")."""
    rng = np.random.default_rng(5)
    truth = rng.integers(0, 3, 50)
    codes = {}
    for r, p in (("a", 0.2), ("b", 0.3), ("c", 0.3), ("g1", 0.2), ("g2", 0.9)):
        codes[r] = np.where(rng.random(50) < p, rng.integers(0, 3, 50), truth)
    code = (lambda v: "xyz"[int(v)]) if text else int
    lab = {r: {f"i{k}": code(v) for k, v in enumerate(c)} for r, c in codes.items()}
    human = {r: lab[r] for r in "abc"}
    llm = {r: lab[r] for r in ("g1", "g2")}
    return human, llm, np.stack([codes[r] for r in ("a", "b", "c", "g1", "g2")], axis=1)


def _by_hand(codes: np.ndarray, raters: list[str]) -> xr.Dataset:
    """The labels as ratings (one system, one trait), built without the report's code."""
    rating = xr.DataArray(codes.astype(float)[None, :, :, None],
                          dims=("system", "item", "rater", "trait"),
                          coords={"system": ["s"], "item": [f"i{k}" for k in range(len(codes))],
                                  "rater": raters, "trait": ["t"]},
                          attrs={"scale_min": 0.0, "scale_max": 2.0})
    return xr.Dataset({"rating": rating})


def test_text_annotations_are_nominal_and_compare_humans_with_judges():
    human, llm, codes = _labels(text=True)
    ds = bm.read_annotations(human, llm)
    assert measurement_level(ds)[0] == "nominal"
    panels, found = rater_panels(ds)
    assert panels == {"humans": ["a", "b", "c"], "LLM judges": ["g1", "g2"]}
    assert "is_judge" in found
    rep, run = _section(ds)
    assert run.status == "ok", run.error
    hand = _by_hand(codes, ["a", "b", "c", "g1", "g2"])
    nominal = ["krippendorff_nominal", "gwet_ac", "fleiss_kappa", "percent_agreement"]
    _same(run.output.tables[0].frame.droplevel("trait"),
          _coefficients(hand, nominal, "identity", ["a", "b", "c"]).summary()
          .droplevel("trait"))
    two = ["krippendorff_nominal", "gwet_ac", "cohen_kappa", "percent_agreement"]
    _same(run.output.tables[1].frame.droplevel("trait"),
          _coefficients(hand, two, "identity", ["g1", "g2"]).summary().droplevel("trait"))
    comp = run.output.tables[2].frame.droplevel("trait")
    ref = bm.compare_agreement(hand, panels={"humans": ["a", "b", "c"],
                                             "LLM judges": ["g1", "g2"]},
                               coefficients=["krippendorff_nominal", "gwet_ac"],
                               weights="identity", resampling=RES, random_seed=SEED)
    _same(comp, ref.summary().droplevel("trait"))
    np.testing.assert_allclose(comp["P(A > B)"].to_numpy(float),
                               ref.details()["p_greater"].to_numpy(float), rtol=0, atol=TOL)
    np.testing.assert_allclose(comp["p_value"].to_numpy(float),
                               ref.details()["p_value"].to_numpy(float), rtol=0, atol=TOL)
    # g2 labels at random: the humans agree clearly more, and the answer says so
    s = ref.summary()
    assert (s["classical_low"] > 0).all() and (s["hdi_low"] > 0).all()
    line = [f.text for f in build_answer(rep)["raters"] if "agrees more than" in f.text]
    assert len(line) == 1 and line[0].startswith("Panel humans agrees more than panel LLM "
                                                 "judges on label")
    p = float(ref.details()["p_greater"].iloc[0])
    assert f"P(humans > LLM judges) = {p:.2f}" in line[0]
    assert "agrees more than" in run.output.reading


def test_numeric_annotations_are_ordinal_and_fractional_ones_skipped():
    human, llm, _ = _labels(text=False)
    ds = bm.read_annotations(human, llm)
    level, why = measurement_level(ds)
    assert level == "ordinal" and "observed range 0..2" in why
    frac = bm.read_annotations({"a": {"1": 0.25, "2": 0.5}, "b": {"1": 0.5, "2": 0.75}})
    assert measurement_level(frac)[0] == "interval"
    _, run = _section(frac)
    assert run.status == "skipped" and "not all integers" in run.reason


# ----------------------------------------------------------------------------- panels
def test_panel_comparison_exactly_with_two_panels():
    ds = _ratings(4)
    _, run = _section(ds)
    assert run.status == "ok", run.error
    assert len(run.output.tables) == 1
    assert not any(isinstance(r, AgreementComparisonResult) for r in run.output.results)
    assert "No comparison applies: the raters form one panel and the ratings one round" \
        in run.output.reading
    raters = [str(r) for r in ds["rater"].values]
    two = ds.assign_coords(panel=("rater", ["A", "A", "B", "B"]))
    _, run2 = _section(two)
    assert run2.status == "ok", run2.error
    assert "No comparison applies" not in run2.output.reading
    comps = [r for r in run2.output.results if isinstance(r, AgreementComparisonResult)]
    assert len(comps) == 1 and len(run2.output.tables) == 3
    names = ["krippendorff_ordinal", "gwet_ac", "cohen_kappa", *ORDINAL[3:]]
    for k, members in enumerate((raters[:2], raters[2:])):
        _same(run2.output.tables[k].frame,
              _coefficients(ds, names, "quadratic", members).summary())
    ref = bm.compare_agreement(ds, panels={"A": raters[:2], "B": raters[2:]},
                               coefficients=["krippendorff_ordinal", "gwet_ac",
                                             "icc_twoway_agreement_average"],
                               weights="quadratic", resampling=RES, random_seed=SEED)
    comp = run2.output.tables[2].frame
    _same(comp, ref.summary())
    np.testing.assert_allclose(comp["P(A > B)"].to_numpy(float),
                               ref.details()["p_greater"].to_numpy(float), rtol=0, atol=TOL)
    # a difference is reported in the answer exactly when both its intervals exclude 0
    s = ref.summary()
    clear = ((s["classical_low"] > 0) | (s["classical_high"] < 0)) & (
        (s["hdi_low"] > 0) | (s["hdi_high"] < 0))
    said = [f for f in run2.output.findings if "agrees more" in f.text or "differ on" in f.text]
    assert {f.trait for f in said} == {t for (_, t, _, _), c in clear.items() if c}


def test_one_judge_is_no_panel():
    human, llm, _ = _labels(text=True)
    ds = bm.read_annotations(human, {"g1": llm["g1"]})
    panels, found = rater_panels(ds)
    assert panels == {"all": ["a", "b", "c"]} and "g1" in found
    _, run = _section(ds)
    assert run.status == "ok", run.error
    assert len(run.output.tables) == 1 and "No comparison applies" in run.output.reading
    assert "[panel" not in run.output.tables[0].caption  # one panel: not named
    assert any("g1" in n and "left out" in n for n in run.output.notes)


def test_panel_coordinate_errors_name_the_rater():
    ds = _ratings(3).assign_coords(panel=("rater", ["A", "", "B"]))
    with pytest.raises(ValueError, match=r"coordinate 'panel': rater 'Rater\.2' has no panel"):
        rater_panels(ds)
    _, run = _section(ds)
    assert run.status == "failed" and "Rater.2" in run.error


def test_level_coefficients_lists():
    assert level_coefficients("ordinal", 3)[:2] == (ORDINAL, "quadratic")
    assert level_coefficients("nominal", 2)[0] == ["krippendorff_nominal", "gwet_ac",
                                                   "cohen_kappa", "percent_agreement"]
    assert level_coefficients("interval", 5)[2] == ["krippendorff_interval",
                                                    "icc_twoway_agreement_average"]
    with pytest.raises(ValueError, match="level must be one of"):
        level_coefficients("ratio", 3)
