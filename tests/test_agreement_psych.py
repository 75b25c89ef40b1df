"""The six ICC forms against R's psych::ICC, frozen in tests/results/icc_psych_reference.csv
(made by tests/results/make_icc_reference.py: R 4.2.2, psych 2.2.9,
``psych::ICC(y, alpha = 0.05, lmer = FALSE)``) on SummEval's expert ratings per trait and
on the complete outputs of the 30%-missing panel. psych names the forms after Shrout &
Fleiss (ICC1 ... ICC3k); bayesmeta after McGraw & Wong (see ``ICC_FORMS``)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from bayesmeta.agreement.icc import ICC_FORMS, icc

HERE = Path(__file__).resolve().parent / "results"
REF = pd.read_csv(HERE / "icc_psych_reference.csv")
TOL = 1e-9


def _panel(name: str, summeval) -> np.ndarray:
    if name == "missing30_complete":
        rows = json.loads((HERE / "irrcac_reference.json").read_text())["panels"]["missing30"]
        y = np.array([[np.nan if v is None else v for v in r] for r in rows], dtype=float)
        return y[~np.isnan(y).any(axis=1)]
    trait = name.split("_", 1)[1]
    return summeval["rating"].sel(trait=trait).stack(u=("system", "item")).transpose(
        "u", "rater").values


@pytest.mark.parametrize("panel", sorted(REF["panel"].unique()))
def test_icc_forms_equal_psych(panel, request):
    summeval = request.getfixturevalue("summeval") if panel.startswith("summeval") \
        else None
    y = _panel(panel, summeval)
    ours = icc(y, ci_prob=0.95)
    ref = REF[REF["panel"] == panel].set_index("type")
    for form, (_mw, sf) in ICC_FORMS.items():
        r = ref.loc[sf]
        assert ours[form]["value"] == pytest.approx(r["ICC"], abs=TOL), (panel, form)
        assert ours[form]["F"] == pytest.approx(r["F"], rel=TOL), (panel, form)
        assert ours[form]["df1"] == pytest.approx(r["df1"]) and \
            ours[form]["df2"] == pytest.approx(r["df2"]), (panel, form)
        assert ours[form]["low"] == pytest.approx(r["lower"], abs=TOL), (panel, form)
        assert ours[form]["high"] == pytest.approx(r["upper"], abs=TOL), (panel, form)
