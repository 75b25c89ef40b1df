"""Speed of the true_score model on SummEval: all 43 metrics (two runs) in one fit.

Target (issue 3): 4 chains x 1000 draws (1000 tuning), R-hat <= 1.01 and bulk ESS >= 400 on
every reported quantity, in under 10 s wall on 2 cores after compilation. The timed call is
the whole ``bm.reliability`` (ANOVA tables, sampling, derived quantities, diagnostics and the
summary), repeated ``--repeat`` times; compilation happens in a warm-up call that is timed
separately. The peer is the classical computation on the same data (``bm.consistency`` and
``bm.stability``: alpha, SEM and test-retest of all 43 metrics); the script prints both times
and their ratio.

    python benchmarks/bench_true_score.py [--repeat 3] [--cores 2] [--fast]

``--fast`` (2 chains x 300 draws) is a smoke run of the script, not a benchmark.

Run it on an otherwise idle machine: other CPU-heavy jobs on the two cores inflate the time.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np

import bayesmeta as bm
from bayesmeta.sampling import ConvergenceWarning


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--fast", action="store_true", help="smoke run (2 x 300 draws)")
    args = ap.parse_args()
    data = bm.datasets.summeval()
    kw = dict(raters=False, sampling=bm.SamplerOptions(draws=1000, tune=1000, chains=4,
                                                       cores=args.cores, fast=args.fast))

    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        bm.reliability(data, random_seed=0, **kw)
    warm = time.perf_counter() - t0

    times, fits = [], []
    for k in range(args.repeat):
        t0 = time.perf_counter()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ConvergenceWarning)
            fit = bm.reliability(data, random_seed=args.seed + k, **kw)
        times.append(time.perf_counter() - t0)
        fits.append((fit, [str(w.message) for w in caught]))

    classical = []
    for _ in range(max(args.repeat, 5)):
        t0 = time.perf_counter()
        bm.consistency(data[["score"]])  # the 43 metrics, no ratings
        bm.stability(data)
        classical.append(time.perf_counter() - t0)

    print(f"SummEval: {data.sizes['system']} systems x {data.sizes['item']} items, "
          f"43 metrics x {data.sizes['run']} runs; cores={args.cores} "
          f"(os.cpu_count()={os.cpu_count()}), load average {os.getloadavg()[0]:.2f}")
    print(f"first call (compiles the model, or loads it from the numba cache): {warm:.1f} s")
    for k, ((fit, msgs), t) in enumerate(zip(fits, times, strict=True)):
        tab = fit.summary()
        varying = tab[tab["sd"] > 0]
        print(f"run {k + 1}: {t:.2f} s wall; {fit.info['sampler']}")
        print(f"   {fit.info['convergence']}")
        print(f"   over {len(varying)} reported (non-constant) quantities: max R-hat "
              f"{varying['r_hat'].max():.4f}, min bulk ESS {varying['ess_bulk'].min():.0f}, "
              f"min tail ESS {varying['ess_tail'].min():.0f}; "
              f"all R-hat <= 1.01: {bool((varying['r_hat'] <= 1.01).all())}, "
              f"all bulk ESS >= 400: {bool((varying['ess_bulk'] >= 400).all())}")
        for m in msgs:
            print(f"   warning: {m}")
    t_bayes, t_classic = float(np.median(times)), float(np.median(classical))
    what = "fast smoke run, not a benchmark" if args.fast else "4 x 1000 draws"
    print(f"median bm.reliability (Bayesian, {what}): {t_bayes:.2f} s "
          f"({'under' if t_bayes < 10 else 'OVER'} the 10 s target)")
    print(f"median classical (bm.consistency + bm.stability): {t_classic:.3f} s")
    print(f"ratio Bayesian / classical: {t_bayes / t_classic:.0f}x")


if __name__ == "__main__":
    main()
