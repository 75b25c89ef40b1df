"""The reorganisation of issue 20 changes no number: summaries frozen from the code before
it (``tests/results/refactor_reference.py`` wrote ``refactor_reference.csv`` on main at
bff7d31) are reproduced to 1e-12 by the public API as it is now, on the simulated data and
on SummEval. The calls below use today's keyword names; the script records the old ones."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import bayesmeta as bm

HERE = Path(__file__).parent / "results"
R = {"n_resamples": 100, "n_permutations": 100, "n_jobs": 1}
SIM4 = """
coh =~ Rater.1.COH + Rater.2.COH + Rater.3.COH
con =~ Rater.1.CON + Rater.2.CON + Rater.3.CON
flu =~ Rater.1.FLU + Rater.2.FLU + Rater.3.FLU
rel =~ Rater.1.REL + Rater.2.REL + Rater.3.REL
"""
M4 = SIM4.replace("Rater", "Expert")
MTMM_METHODS = {"A": {"coh": "metric01.COH", "con": "metric02.CON"},
                "B": {"coh": "metric05.COH", "con": "metric06.CON"}}

SIM_CALLS = {
    "sim/consistency": lambda d: bm.consistency(d["sim"], n_subsets=50, random_seed=0),
    "sim/stability": lambda d: bm.stability(d["sim"]),
    "sim/agreement": lambda d: bm.agreement(d["sim"]),
    "sim/mtmm": lambda d: bm.mtmm(d["sim"]),
    "sim/concurrent_validity": lambda d: bm.concurrent_validity(d["sim"], "COH"),
    "sim/correlations": lambda d: bm.correlations(d["sim"], "COH", resampling=R,
                                                  random_seed=0),
    "sim/compare_metrics": lambda d: bm.compare_metrics(
        d["sim"], "COH", measures=["system_kendall", "global_pearson"], resampling=R,
        random_seed=0),
    "sim/discriminative_power": lambda d: bm.discriminative_power(
        d["sim"], "COH", measures=["system_kendall"], resampling=R, random_seed=0),
    "sim/ranking_consistency": lambda d: bm.ranking_consistency(
        d["sim"], "COH", measures=["system_kendall"], resampling={"n_resamples": 50},
        random_seed=0),
    "sim/kind_comparison": lambda d: bm.kind_comparison(d["kinds"], "COH", resampling=R,
                                                        random_seed=0),
    "sim/meta_correlation": lambda d: bm.meta_correlation(d["kinds"], "COH", resampling=R,
                                                          random_seed=0),
    "sim/ks_score": lambda d: bm.ks_score(d["kinds"], "COH", resampling=R, random_seed=0),
    "sim/pre_assessment": lambda d: bm.pre_assessment(d["kinds"], "COH", n=(20, 50),
                                                      n_subsets=100, resampling=R,
                                                      random_seed=0),
    "sim/corroboration": lambda d: bm.corroboration(d["sim"], "COH", sizes=(2, 3), n_sets=10,
                                                    resampling=R, random_seed=0),
    "sim/cfa": lambda d: d["fit"],
    "sim/factor_validity": lambda d: bm.factor_validity(d["sim"], d["fit"], resampling=R,
                                                        random_seed=0),
    "sim/metric_variance": lambda d: bm.metric_variance(d["sim"], d["fit"], resampling=R,
                                                        random_seed=0),
    "sim/metric_residuals": lambda d: bm.metric_residuals(d["sim"], d["fit"], resampling=R,
                                                          random_seed=0),
    "sim/factor_mtmm": lambda d: bm.mtmm(d["sim"], fit=d["fit"], methods=MTMM_METHODS,
                                                resampling=R, random_seed=0),
}
SUMMEVAL_CALLS = {
    "summeval/consistency": lambda d: bm.consistency(d, n_subsets=50, random_seed=0),
    "summeval/mtmm": lambda d: bm.mtmm(d),
    "summeval/agreement": lambda d: bm.agreement(d),
    "summeval/correlations": lambda d: bm.correlations(
        d, "COH", measures=["system_kendall", "global_kendall"], resampling=R, random_seed=0),
    "summeval/cfa": lambda d: bm.cfa(M4, d),
}


#: Columns an analysis gained after the reference was frozen (not refrozen: the frozen
#: columns are compared unchanged, the new ones are tested against their own references).
ADDED_COLUMNS = {name: {"classical_low", "classical_high"} for name in
                 ("sim/consistency", "sim/mtmm", "summeval/consistency",
                  "summeval/mtmm")}


@pytest.fixture(scope="module")
def reference() -> pd.DataFrame:
    return pd.read_csv(HERE / "refactor_reference.csv", keep_default_na=False,
                       na_values=[""], dtype={"row": str, "column": str})


@pytest.fixture(scope="module")
def sim_inputs(simulated) -> dict:
    metrics = [str(m) for m in simulated.metric.values]
    return {"sim": simulated,
            "kinds": bm.metric_kinds(simulated, reference_based=metrics[:6]),
            "fit": bm.cfa(SIM4, simulated)}


def _long(tab: pd.DataFrame) -> pd.Series:
    tab = tab.copy()
    tab.index = ["|".join(map(str, k)) if isinstance(k, tuple) else str(k) for k in tab.index]
    return tab.select_dtypes("number").stack(future_stack=True)


def _check(name: str, result, reference: pd.DataFrame) -> None:
    want = reference[reference["analysis"] == name].set_index(["row", "column"])["value"]
    assert len(want), f"no reference values for {name}"
    got = _long(result.summary())
    got.index = got.index.set_names(["row", "column"])
    # columns added after the freeze (issue 21: classical intervals of alpha and MTMM
    # correlations) are compared elsewhere; every frozen cell must still be there
    added = ADDED_COLUMNS.get(name, set())
    kept = [k for k in got.index if k[1] not in added or k in want.index]
    assert sorted(kept) == sorted(want.index), name
    got = got.reindex(want.index).to_numpy(float)
    # 1e-6: the frozen values came from one CPU; another CPU's BLAS sums in another order
    # (seen: 6e-8 absolute on the bootstrap correlations, 1.2e-9 on the WLSMV CFA between
    # two machines with the same packages), while a changed computation moves them far more
    np.testing.assert_allclose(got, want.to_numpy(float), rtol=1e-6, atol=1e-6,
                               equal_nan=True, err_msg=name)


@pytest.mark.parametrize("name", list(SIM_CALLS))
def test_simulated_summaries_unchanged(name, sim_inputs, reference):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = SIM_CALLS[name](sim_inputs)
    _check(name, result, reference)


@pytest.mark.parametrize("name", list(SUMMEVAL_CALLS))
def test_summeval_summaries_unchanged(name, summeval, reference):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = SUMMEVAL_CALLS[name](summeval)
    _check(name, result, reference)
