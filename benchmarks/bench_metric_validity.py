"""Speed of the metric-validity analyses on SummEval (issue 11): all 43 metrics x 4 traits.

Classical (WLSMV CFA, EBM scores, 1,000 bootstrap resamples of items) and, with
``--bayes PATH`` (a saved ``bm.cfa(..., estimator="bayes")`` fit, e.g. from
``fit.save(PATH)``), the two-stage Bayesian route over its posterior draws, timed after the
CFA fit; prints both times, and the largest R-hat and smallest bulk ESS of the Bayesian
validity coefficients and error shares (targets: <= 1.01, >= 400).

    python benchmarks/bench_metric_validity.py [--bayes fit.nc]
"""

from __future__ import annotations

import argparse
import time

import bayesmeta as bm
import bayesmeta.validity.ordinal_cfa  # registers OrdinalCFAResult, so bm.load restores it

M4 = """
coh =~ Expert.1.COH + Expert.2.COH + Expert.3.COH
con =~ Expert.1.CON + Expert.2.CON + Expert.3.CON
flu =~ Expert.1.FLU + Expert.2.FLU + Expert.3.FLU
rel =~ Expert.1.REL + Expert.2.REL + Expert.3.REL
"""


def _time(label: str, fn, *args, **kwargs):
    t0 = time.perf_counter()
    out = fn(*args, **kwargs)
    print(f"{label:<58}{time.perf_counter() - t0:8.2f} s")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bayes", help="a saved Bayesian CFA fit of the four-factor model")
    args = parser.parse_args()
    ds = bm.datasets.summeval(bm.datasets.find_summeval(download=False))
    fit = _time("WLSMV CFA (four factors)", bm.cfa, M4, ds)
    _time("EBM factor scores (1,700 outputs)", fit.factor_scores)
    _time("factor_validity, classical (43 x 4, 1,000 resamples)", bm.factor_validity, ds,
          fit, random_seed=0)
    _time("metric_variance, classical (43 x 4, 1,000 resamples)", bm.metric_variance, ds,
          fit, random_seed=0)
    _time("metric_residuals, classical (43, 1,000 resamples)", bm.metric_residuals, ds,
          fit, random_seed=0)
    _time("mtmm(fit=...), classical (12 variables, 1,000 resamples)", bm.mtmm, ds, fit=fit,
          random_seed=0)
    if args.bayes:
        bfit = bm.load(args.bayes)
        mv = _time("metric_variance, Bayesian two-stage (43 x 4)", bm.metric_variance, ds,
                   bfit, random_seed=0)
        _time("factor_validity, Bayesian (43 x 4)", bm.factor_validity, ds, bfit,
              random_seed=0)
        tab = mv.summary()
        keep = tab.index.get_level_values("estimand").isin(["validity_coefficient",
                                                             "error_share"])
        print(f"max R-hat {tab.loc[keep, 'r_hat'].max():.4f}, "
              f"min bulk ESS {tab.loc[keep, 'ess_bulk'].min():.0f}")


if __name__ == "__main__":
    main()
