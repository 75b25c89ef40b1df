"""The latent-scale ICC of the rater model beside the classical ICC forms (issue 24):
structure and closed forms on a hand-made posterior (fast), and recovery of the true latent
ICCs of data simulated from the rater model (slow: MCMC)."""

from __future__ import annotations

import types

import numpy as np
import pytest
import xarray as xr

import bayesmeta as bm
from bayesmeta.agreement.latent import LATENT_FORMS, latent_icc_draws
from bayesmeta.simulate import simulate_rater
from bayesmeta.summaries import check_table


def _posterior(icc_output: np.ndarray, severity: np.ndarray) -> xr.Dataset:
    """A rater-model-shaped posterior: icc_output (chain, draw, trait), severity (chain,
    draw, rater, trait)."""
    return xr.Dataset({
        "icc_output": (("chain", "draw", "trait"), icc_output),
        "severity": (("chain", "draw", "rater", "trait"), severity),
    }, coords={"trait": ["COH"], "rater": ["Rater.1", "Rater.2", "Rater.3"]})


def test_latent_forms_closed_form():
    """Consistency forms are the Spearman-Brown pair of the model's icc_output; agreement
    forms add the severities' variance (ddof 1) to the error, in quality-SD units."""
    x = 1.7                                  # one rater's signal-to-noise abar^2 sigma^2
    s = np.array([-0.3, 0.1, 0.2])
    v = s.var(ddof=1)
    avg = 3 * x / (1 + 3 * x)
    post = _posterior(np.full((1, 1, 1), avg), s.reshape(1, 1, 3, 1))
    got = latent_icc_draws(post).isel(chain=0, draw=0, trait=0)
    want = {"icc_latent_consistency_single": x / (1 + x),
            "icc_latent_consistency_average": avg,
            "icc_latent_agreement_single": 1 / (1 + v + 1 / x),
            "icc_latent_agreement_average": 1 / (1 + (v + 1 / x) / 3)}
    for form, value in want.items():
        assert float(got.sel(estimand=form)) == pytest.approx(value, abs=1e-12), form
    # with equal severities agreement equals consistency
    same = latent_icc_draws(_posterior(np.full((1, 1, 1), avg), np.zeros((1, 1, 3, 1))))
    np.testing.assert_allclose(same.sel(estimand="icc_latent_agreement_single"),
                               same.sel(estimand="icc_latent_consistency_single"), atol=1e-12)


def test_latent_rows_beside_classical(simulated):
    rng = np.random.default_rng(0)
    post = _posterior(rng.uniform(0.7, 0.8, size=(2, 200, 1)),
                      rng.normal(0, 0.3, size=(2, 200, 3, 1)))
    fit = types.SimpleNamespace(posterior=post)
    res = bm.agreement_coefficients(simulated, traits=["COH", "FLU"], fit=fit,
                                    coefficients=["icc_twoway_agreement_single"])
    tab = res.summary()
    check_table(tab)
    assert list(tab.columns) == ["classical", "classical_low", "classical_high", "mean", "sd",
                                 "hdi_low", "hdi_high", "r_hat", "ess_bulk", "ess_tail"]
    latent = tab.xs("COH", level="trait").loc[list(LATENT_FORMS)]
    assert latent["classical"].isna().all() and latent["mean"].notna().all()
    assert (latent["hdi_low"] < latent["mean"]).all() and (latent["r_hat"] < 1.05).all()
    assert ("icc_latent_consistency_single", "FLU") not in tab.index   # not in the fit
    det = res.details()
    assert det.loc[("icc_latent_agreement_single", "COH"), "mcgraw_wong"] == "ICC(A,1) latent"
    assert any("icc_latent_" in n for n in res.notes)
    both = bm.agreement_coefficients(simulated, traits=["COH"], fit=fit,
                                     coefficients=["icc_twoway_agreement_single"],
                                     resampling={"n_resamples": 50}, random_seed=0).summary()
    check_table(both)
    classical_row = both.loc[("icc_twoway_agreement_single", "COH")]
    assert np.isfinite(classical_row["mean"]) and np.isnan(classical_row["r_hat"])
    assert np.isfinite(both.loc[("icc_latent_agreement_single", "COH"), "r_hat"])
    with pytest.raises(TypeError, match="rater model result"):
        bm.agreement_coefficients(simulated, traits=["COH"], fit=simulated)


@pytest.mark.slow
def test_latent_icc_recovers_the_simulated_truth():
    """Data from the rater model (8 systems x 30 items x 3 raters): the 94% HDIs of the four
    latent ICCs cover the simulator's true values (from its discriminations, quality SDs and
    severities), and the classical ICCs of the integer ratings lie below the latent ones
    (categorisation attenuates)."""
    sd = {"sd_system": 1.0, "sd_item": 0.5, "sd_output": 1.2}
    ds = simulate_rater(31, n_systems=8, n_items=30, traits=("COH",), sd_severity=0.5, **sd)
    fit = bm.rater_bias(ds, sampling={"chains": 2, "draws": 500, "tune": 500}, random_seed=5)
    res = bm.agreement_coefficients(ds, fit=fit)
    tab = res.summary().xs("COH", level="trait")
    R = ds.sizes["rater"]
    x = float(ds["true_discrimination"].sel(trait="COH").mean()) ** 2 * sum(
        v**2 for v in sd.values())
    v = float(ds["true_severity"].sel(trait="COH").var(ddof=1))
    truth = {"icc_latent_consistency_single": x / (1 + x),
             "icc_latent_consistency_average": R * x / (1 + R * x),
             "icc_latent_agreement_single": 1 / (1 + v + 1 / x),
             "icc_latent_agreement_average": 1 / (1 + (v + 1 / x) / R)}
    assert truth["icc_latent_consistency_average"] == pytest.approx(
        float(ds["true_icc_output"].sel(trait="COH")), abs=1e-12)
    for form, value in truth.items():
        row = tab.loc[form]
        assert row["hdi_low"] <= value <= row["hdi_high"], (form, value, row.to_dict())
        assert row["r_hat"] < 1.05, form
    assert tab.loc["icc_twoway_agreement_single", "classical"] < tab.loc[
        "icc_latent_agreement_single", "mean"]
