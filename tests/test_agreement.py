"""Inter-rater agreement against the krippendorff package and pingouin's ICC."""

from __future__ import annotations

import krippendorff
import numpy as np
import pandas as pd
import pingouin as pg
import pytest

import bayesmeta as bm
from bayesmeta.agreement.classical import icc2k, krippendorff_alpha
from bayesmeta.summaries import check_table


def _ratings(seed: int, n: int = 200, k: int = 3, missing: float = 0.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    latent = rng.normal(size=(n, 1)) + rng.normal(scale=0.8, size=(n, k)) + [0, 0.3, -0.2][:k]
    y = np.clip(np.round(3 + latent), 1, 5)
    y[rng.random(y.shape) < missing] = np.nan
    return y


@pytest.mark.parametrize("level", ["ordinal", "interval", "nominal"])
@pytest.mark.parametrize("missing", [0.0, 0.15])
def test_krippendorff_matches_package(level, missing):
    y = _ratings(1, missing=missing)
    ref = krippendorff.alpha(reliability_data=y.T, level_of_measurement=level)
    assert krippendorff_alpha(y, level) == pytest.approx(ref, abs=1e-6)


def test_icc2k_matches_pingouin():
    y = _ratings(2, n=80)
    long = pd.DataFrame(y).reset_index().melt(id_vars="index", var_name="rater",
                                              value_name="rating")
    icc = pg.intraclass_corr(long, targets="index", raters="rater", ratings="rating")
    types = icc.set_index("Type")["ICC"]
    # pingouin >= 0.7 uses McGraw & Wong's names: ICC(A,k) is Shrout & Fleiss' ICC2k
    ref = types["ICC(A,k)"] if "ICC(A,k)" in types else types["ICC2k"]
    assert icc2k(y) == pytest.approx(ref, abs=1e-10)


def test_agreement_table(simulated):
    res = bm.agreement(simulated)
    tab = res.summary()
    check_table(tab)
    assert tab.index.names == ["estimand", "trait"]
    assert list(tab.columns) == ["classical"]
    assert set(tab.index.get_level_values("estimand")) == {
        "krippendorff_ordinal", "krippendorff_interval", "icc2k"}
    y = simulated["rating"].sel(trait="FLU").stack(u=("system", "item")).transpose(
        "u", "rater").values
    assert tab.loc[("krippendorff_ordinal", "FLU"), "classical"] == pytest.approx(
        krippendorff.alpha(reliability_data=y.T, level_of_measurement="ordinal"), abs=1e-6)
    assert tab.loc[("krippendorff_interval", "FLU"), "classical"] == pytest.approx(
        krippendorff.alpha(reliability_data=y.T, level_of_measurement="interval"), abs=1e-6)
    assert tab.loc[("icc2k", "FLU"), "classical"] == pytest.approx(icc2k(y), abs=1e-12)
    assert (res.details()["n_units"] == 1700).all()
    assert (res.details()["n_incomplete"] == 0).all()


def test_agreement_counts_incomplete_units(simulated):
    ds = simulated.copy(deep=True)
    ds["rating"][0, :5, 1, 0] = np.nan
    res = bm.agreement(ds, traits=["COH"])
    assert res.summary().index.get_level_values("trait").unique().tolist() == ["COH"]
    assert res.details().loc[("icc2k", "COH"), "n_incomplete"] == 5
    assert res.details().loc[("krippendorff_ordinal", "COH"), "n_incomplete"] == 0
    assert any("n_incomplete" in n for n in res.notes)


def test_agreement_needs_two_raters(simulated):
    with pytest.raises(ValueError, match="agreement needs at least 2 raters"):
        bm.agreement(simulated, raters=["Rater.1"])
    with pytest.raises(ValueError, match=r"'Rater\.9' is not a label of dim 'rater'"):
        bm.agreement(simulated, raters=["Rater.1", "Rater.9"])


def test_agreement_refuses_continuous_judgments(simulated):
    ds = simulated.drop_vars("rating")
    ds["judgment"] = simulated["rating"].mean("rater")
    with pytest.raises(ValueError, match="agreement needs ordinal ratings by rater"):
        bm.agreement(ds)
