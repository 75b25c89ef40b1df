"""Missing ratings through the public API (issue 24): a 200-output x 4-rater panel with 30%
of its ratings missing completely at random (``tests/results/agreement_missing30.csv``,
written by ``tests/results/make_irrcac_reference.py``) gives, through
``bm.agreement_coefficients``, the values, standard errors and 95% intervals that irrCAC
0.4.4 gives with missing data (frozen in ``tests/results/irrcac_reference.json``), the
alphas of the ``krippendorff`` package, and pingouin's ICC forms on the complete outputs
(``nan_policy="omit"``; their F-based intervals as ``f_low``/``f_high``, the default ICC
interval being the jackknife one, checked in ``tests/test_agreement_coefficients.py``), with
a warning that counts what was missing."""

from __future__ import annotations

import json
import re
from pathlib import Path

import krippendorff
import numpy as np
import pandas as pd
import pingouin as pg
import pytest
import xarray as xr

import bayesmeta as bm
from bayesmeta.agreement.icc import ICC_FORMS

RESULTS = Path(__file__).parent / "results"
REF = json.loads((RESULTS / "irrcac_reference.json").read_text())
Y = pd.read_csv(RESULTS / "agreement_missing30.csv").to_numpy(dtype=float)
GWET = {"gwet_ac": "gwet_ac", "fleiss_kappa": "fleiss_kappa", "conger_kappa": "conger_kappa",
        "brennan_prediger": "brennan_prediger"}
ALPHA = {"identity": "krippendorff_nominal", "quadratic": "krippendorff_interval",
         "ratio": "krippendorff_ratio"}
TOL = 1e-9


def _dataset(y: np.ndarray) -> xr.Dataset:
    rating = xr.DataArray(
        y[None, :, :, None], dims=("system", "item", "rater", "trait"),
        coords={"system": ["s"], "item": [f"i{j}" for j in range(len(y))],
                "rater": [f"R{g + 1}" for g in range(y.shape[1])], "trait": ["T"]},
        attrs={"scale_min": 1, "scale_max": 5})
    return xr.Dataset({"rating": rating})


def test_panel_is_the_frozen_one():
    frozen = np.array([[np.nan if v is None else v for v in row]
                       for row in REF["panels"]["missing30"]])
    np.testing.assert_array_equal(np.isnan(frozen), np.isnan(Y))
    np.testing.assert_array_equal(frozen[~np.isnan(frozen)], Y[~np.isnan(Y)])
    assert 0.25 < np.isnan(Y).mean() < 0.35


@pytest.mark.parametrize("population", [None, 400])
@pytest.mark.parametrize("weights", ["identity", "linear", "quadratic", "ordinal", "radical",
                                     "ratio", "circular", "bipolar"])
def test_public_api_equals_irrcac_with_missing(weights, population):
    names = list(GWET) + ([ALPHA[weights]] if weights in ALPHA else [])
    n_missing = int(np.isnan(Y).sum())
    n_complete = int((~np.isnan(Y).any(axis=1)).sum())
    with pytest.warns(UserWarning) as record:
        res = bm.agreement_coefficients(_dataset(Y), coefficients=names, weights=weights,
                                        population=population, ci_prob=0.95)
    text = " ".join(str(w.message) for w in record)
    assert re.search(rf"trait T: {n_missing} of {Y.size} ratings missing", text)
    assert f"the {n_complete} complete units" in text
    tab, det = res.summary(), res.details()
    checked = 0
    for row in REF["rows"]:
        if (row["panel"] != "missing30" or row["weights"] != weights
                or row["population"] != population):
            continue
        name = ALPHA.get(weights) if row["coefficient"] == "krippendorff_weighted" else \
            GWET[row["coefficient"]]
        if name is None:
            continue
        got = tab.loc[(name, "T")]
        assert got["classical"] == pytest.approx(row["value"], abs=TOL), (name, row["call"])
        assert got["classical_low"] == pytest.approx(row["low"], abs=TOL), (name, row["call"])
        assert got["classical_high"] == pytest.approx(row["high"], abs=TOL), (name, row["call"])
        assert det.loc[(name, "T"), "se"] == pytest.approx(row["se"], abs=TOL), name
        assert det.loc[(name, "T"), "n_missing"] == n_missing
        checked += 1
    assert checked == len(names)


def test_public_api_alphas_equal_krippendorff_package_with_missing():
    with pytest.warns(UserWarning, match="ratings missing"):
        tab = bm.agreement_coefficients(
            _dataset(Y), coefficients=[f"krippendorff_{lv}" for lv in
                                       ("nominal", "ordinal", "interval", "ratio")]).summary()
    for level in ("nominal", "ordinal", "interval", "ratio"):
        ref = krippendorff.alpha(reliability_data=Y.T, level_of_measurement=level)
        assert tab.loc[(f"krippendorff_{level}", "T"), "classical"] == pytest.approx(
            ref, abs=TOL), level


def test_public_api_icc_equals_pingouin_on_complete_outputs(monkeypatch):
    monkeypatch.setitem(pg.options, "round.column.CI95", None)
    long = pd.DataFrame(Y).reset_index().melt(id_vars="index", var_name="rater",
                                              value_name="rating")
    ref = pg.intraclass_corr(long, targets="index", raters="rater", ratings="rating",
                             nan_policy="omit").set_index("Type")
    with pytest.warns(UserWarning, match="ratings missing"):
        res = bm.agreement_coefficients(_dataset(Y), coefficients=list(ICC_FORMS),
                                        ci_prob=0.95)
    tab, det = res.summary(), res.details()
    alias = {"ICC(1)": "ICC(1,1)", "ICC(k)": "ICC(1,k)"}
    n_incomplete = int(np.isnan(Y).any(axis=1).sum())
    for form, (mw, _sf) in ICC_FORMS.items():
        r = ref.loc[alias.get(mw, mw)]
        assert tab.loc[(form, "T"), "classical"] == pytest.approx(r["ICC"], abs=TOL), form
        assert det.loc[(form, "T"), "f_low"] == pytest.approx(r["CI95"][0], abs=TOL)
        assert det.loc[(form, "T"), "f_high"] == pytest.approx(r["CI95"][1], abs=TOL)
        assert det.loc[(form, "T"), "n_incomplete"] == n_incomplete
        assert det.loc[(form, "T"), "n_units"] == len(Y) - n_incomplete
