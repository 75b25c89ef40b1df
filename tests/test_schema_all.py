"""Every public classical analysis, on small data: the one table shape, a lossless netCDF
round trip, and (for the resampling ones) the same seed giving the same numbers, with the
seed drawn and recorded when none is given (issue 10, "Must show")."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

import bayesmeta as bm
from bayesmeta.summaries import check_table

SMALL = {"n_resamples": 60, "n_permutations": 60}


@pytest.fixture(scope="module")
def small():
    return bm.datasets.simulated(random_seed=5, n_systems=6, n_items=12, n_metrics=4)


def _cfa(ds):
    model = "coh =~ " + " + ".join(f"Rater.{r}.COH" for r in (1, 2, 3))
    return bm.cfa(model, ds)


#: name -> (call, draws random numbers?)
ANALYSES = {
    "consistency": (lambda ds, **kw: bm.consistency(ds), False),
    "consistency_subsets": (lambda ds, **kw: bm.consistency(ds, n_items=6, n_subsets=20, **kw),
                            True),
    "stability": (lambda ds, **kw: bm.stability(ds), False),
    "agreement": (lambda ds, **kw: bm.agreement(ds), False),
    "agreement_coefficients": (lambda ds, **kw: bm.agreement_coefficients(
        ds, traits=["COH"], weights="quadratic", resampling=SMALL, **kw), True),
    "compare_agreement": (lambda ds, **kw: bm.compare_agreement(
        ds, traits=["COH", "FLU"], resampling=SMALL, **kw), True),
    "mtmm": (lambda ds, **kw: bm.mtmm(ds), False),
    "concurrent_validity": (lambda ds, **kw: bm.concurrent_validity(ds, "COH"), False),
    "correlations": (lambda ds, **kw: bm.correlations(
        ds, "COH", measures=["system_kendall", "within_system_pearson"], resampling=SMALL,
        **kw), True),
    "compare_metrics": (lambda ds, **kw: bm.compare_metrics(
        ds, "COH", measures="system_pearson", resampling=SMALL, **kw), True),
    "discriminative_power": (lambda ds, **kw: bm.discriminative_power(
        ds, "COH", measures="system_pearson", resampling=SMALL, **kw), True),
    "ranking_consistency": (lambda ds, **kw: bm.ranking_consistency(
        ds, "COH", measures="system_pearson", resampling={"n_resamples": 30}, **kw), True),
    "granularity": (lambda ds, **kw: bm.granularity(
        ds, "COH", metric="metric01.COH", levels=[2, 5], measures="system_pearson"), False),
    "granularity_simulation": (lambda ds, **kw: bm.granularity_simulation(
        metric_levels=(2, 5), n_replicates=5, measures="system_pearson", **kw), True),
    "cfa": (lambda ds, **kw: _cfa(ds), False),
    "omega_ordinal": (lambda ds, **kw: bm.omega_ordinal(_cfa(ds)), False),
}


def _run(name, ds, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # NumPy's never reach the user
        return ANALYSES[name][0](ds, **kw)


@pytest.mark.parametrize("name", list(ANALYSES))
def test_table_shape_and_round_trip(small, name, tmp_path):
    res = _run(name, small)
    tab = res.summary()
    check_table(tab)
    assert tab.index.names[0] == "estimand"
    assert len(tab) > 0
    assert tab.notna().any().any(), f"{name}: every estimate is NaN"
    back = bm.load(res.save(tmp_path / f"{name}.nc"))
    assert type(back) is type(res)
    pd.testing.assert_frame_equal(back.summary(), tab)
    assert json.dumps(back.summary().attrs, sort_keys=True) == json.dumps(tab.attrs,
                                                                         sort_keys=True)
    pd.testing.assert_frame_equal(back.details(), res.details())
    assert back.provenance == res.provenance
    assert str(back) == str(res)


@pytest.mark.parametrize("name", [n for n, (_, rand) in ANALYSES.items() if rand])
def test_same_seed_same_numbers_and_seed_recorded(small, name):
    a = _run(name, small, random_seed=123).summary()
    b = _run(name, small, random_seed=123).summary()
    pd.testing.assert_frame_equal(a, b)
    drawn = _run(name, small)
    seed = drawn.provenance["random_seed"]
    assert isinstance(seed, int)
    again = _run(name, small, random_seed=seed).summary()
    pd.testing.assert_frame_equal(again, drawn.summary())


def test_interval_probability_is_one_default_across_analyses(small):
    probs = set()
    for name in ANALYSES:
        tab = _run(name, small, **({"random_seed": 1} if ANALYSES[name][1] else {})).summary()
        for kind in ("ci_prob", "classical_ci_prob"):
            if np.isfinite(tab.attrs[kind]):
                probs.add(round(tab.attrs[kind], 12))
    assert probs == {bm.summaries.CI_PROB}
