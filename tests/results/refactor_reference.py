"""Reference summaries for the package reorganisation (issue 20).

Run once on the code BEFORE the reorganisation (main at bff7d31) with::

    PYTHONPATH=. python tests/results/refactor_reference.py

It writes ``tests/results/refactor_reference.csv``: one row per (analysis, table row,
column) with the value printed with 17 significant digits. ``tests/test_refactor_reference.py``
recomputes every analysis through the public API as it is after the reorganisation (the
keyword names it uses are the new ones; ``CALLS_BEFORE`` below records the calls made here)
and asserts each value to 1e-12.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import pandas as pd

import bayesmeta as bm

HERE = Path(__file__).parent
OUT = HERE / "refactor_reference.csv"

#: Resampling options shared by every resampling analysis below (small, for speed).
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


def simulated_with_kinds() -> object:
    """The simulated data with the first six metrics marked reference-based."""
    sim = bm.datasets.simulated(random_seed=0)
    metrics = [str(m) for m in sim.metric.values]
    return bm.metric_kinds(sim, reference_based=metrics[:6])


def calls_before(sim, kinds, summeval):
    """The analyses, spelled as the code before the reorganisation takes them."""
    fit = bm.cfa(SIM4, sim)
    calls = {
        "sim/consistency": lambda: bm.consistency(sim, n_subsets=50, random_seed=0),
        "sim/stability": lambda: bm.stability(sim),
        "sim/agreement": lambda: bm.agreement(sim),
        "sim/mtmm": lambda: bm.mtmm(sim),
        "sim/concurrent_validity": lambda: bm.concurrent_validity(sim, "COH"),
        "sim/correlations": lambda: bm.correlations(sim, "COH", resampling=R, random_seed=0),
        "sim/compare_metrics": lambda: bm.compare_metrics(
            sim, "COH", measures=["system_kendall", "global_pearson"], resampling=R,
            random_seed=0),
        "sim/discriminative_power": lambda: bm.discriminative_power(
            sim, "COH", measures=["system_kendall"], resampling=R, random_seed=0),
        "sim/ranking_consistency": lambda: bm.ranking_consistency(
            sim, "COH", measures=["system_kendall"], n_trials=50, random_seed=0),
        "sim/kind_comparison": lambda: bm.kind_comparison(kinds, "COH", resampling=R,
                                                          random_seed=0),
        "sim/meta_correlation": lambda: bm.meta_correlation(kinds, "COH", resampling=R,
                                                            random_seed=0),
        "sim/ks_score": lambda: bm.ks_score(kinds, "COH", resampling=R, random_seed=0),
        "sim/pre_assessment": lambda: bm.pre_assessment(kinds, "COH", n=(20, 50), n_draws=100,
                                                        resampling=R, random_seed=0),
        "sim/corroboration": lambda: bm.corroboration(sim, "COH", sizes=(2, 3), n_sets=10,
                                                      resampling=R, random_seed=0),
        "sim/cfa": lambda: fit,
        "sim/factor_validity": lambda: bm.factor_validity(sim, fit, resampling=R,
                                                          random_seed=0),
        "sim/metric_variance": lambda: bm.metric_variance(sim, fit, resampling=R,
                                                          random_seed=0),
        "sim/metric_residuals": lambda: bm.metric_residuals(sim, fit, resampling=R,
                                                            random_seed=0),
        "sim/factor_mtmm": lambda: bm.factor_mtmm(sim, fit, methods=MTMM_METHODS,
                                                  resampling=R, random_seed=0),
    }
    if summeval is not None:
        calls.update({
            "summeval/consistency": lambda: bm.consistency(summeval, n_subsets=50,
                                                           random_seed=0),
            "summeval/mtmm": lambda: bm.mtmm(summeval),
            "summeval/agreement": lambda: bm.agreement(summeval),
            "summeval/correlations": lambda: bm.correlations(
                summeval, "COH", measures=["system_kendall", "global_kendall"],
                resampling=R, random_seed=0),
            "summeval/cfa": lambda: bm.cfa(M4, summeval),
        })
    return calls


def long_table(name: str, tab: pd.DataFrame) -> pd.DataFrame:
    """One row per (row label, column) with the value."""
    tab = tab.copy()
    tab.index = ["|".join(map(str, k)) if isinstance(k, tuple) else str(k) for k in tab.index]
    num = tab.select_dtypes("number")
    out = num.stack(future_stack=True).rename("value").reset_index()
    out.columns = ["row", "column", "value"]
    out.insert(0, "analysis", name)
    return out


def main() -> None:
    warnings.simplefilter("ignore")
    sim = bm.datasets.simulated(random_seed=0)
    kinds = simulated_with_kinds()
    try:
        summeval = bm.datasets.summeval(bm.datasets.find_summeval(download=False))
    except FileNotFoundError:
        sys.exit("SummEval data not found: set BAYESMETA_DATA.")
    frames = [long_table(name, call().summary())
              for name, call in calls_before(sim, kinds, summeval).items()]
    pd.concat(frames).to_csv(OUT, index=False, float_format="%.17g")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
