"""Coverage of the debiased (prediction-powered) judge mean against the naive judge mean
(issue 23, item 5).

Known truth: human scores are 1-5 Likert ratings of a latent quality
``q ~ N(mu, 1.1)``, ``Y = clip(round(q), 1, 5)``; the judge is lenient and compresses the
scale, with its own noise: ``f = clip(round(0.6 q + 1.6 + N(0, 0.7)), 1, 5)``, so its bias
depends on the output. The population mean of ``Y`` is computed exactly from the normal
distribution. Each simulation draws ``n`` labelled and ``N`` unlabelled outputs and calls
``bm.debiased_mean`` (PPI++ and its Bayesian bootstrap, 1,000 draws); 94% intervals.

Scenarios: three (n, N) sizes of one system, and two systems (latent means 3.2 and 3.0) whose
judge favours the first (+0.3 on its latent quality), for the difference of the systems.

Run: ``nice python benchmarks/ppi_coverage.py [--sims 1000]``; writes JSON lines to
``benchmarks/results/ppi_coverage.jsonl`` and prints the coverages side by side. The fast
version (300 simulations of the first scenario) is ``tests/test_ppi.py::test_coverage``.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np
from scipy import stats

import bayesmeta as bm

CI = 0.94
SD = 1.1
OUT = Path(__file__).parent / "results" / "ppi_coverage.jsonl"


def true_mean(mu: float) -> float:
    """E[clip(round(q), 1, 5)] for q ~ N(mu, SD), exactly."""
    cuts = np.array([-np.inf, 1.5, 2.5, 3.5, 4.5, np.inf])
    p = np.diff(stats.norm.cdf((cuts - mu) / SD))
    return float(p @ np.arange(1, 6))


def draw(rng: np.random.Generator, size: int, mu: float, lift: float = 0.0
         ) -> tuple[np.ndarray, np.ndarray]:
    q = rng.normal(mu, SD, size)
    y = np.clip(np.round(q), 1, 5)
    f = np.clip(np.round(0.6 * (q + lift) + 1.6 + rng.normal(0, 0.7, size)), 1, 5)
    return y, f


def one_system(n: int, big_n: int, sims: int, seed: int, mu: float = 3.2,
               n_draws: int = 1000) -> dict:
    rng = np.random.default_rng(seed)
    truth = true_mean(mu)
    hits = {k: 0 for k in ("debiased", "debiased_hdi", "human", "judge")}
    width = {k: 0.0 for k in hits}
    for s in range(sims):
        y, f = draw(rng, n + big_n, mu)
        human = np.where(np.arange(n + big_n) < n, y, np.nan)
        tab = bm.debiased_mean({"judge": f, "human": human}, random_seed=seed * 100_000 + s,
                               resampling={"n_resamples": n_draws}).summary()
        for key, est, lo, hi in (("debiased", "debiased_mean", "classical_low",
                                  "classical_high"),
                                 ("debiased_hdi", "debiased_mean", "hdi_low", "hdi_high"),
                                 ("human", "human_mean", "classical_low", "classical_high"),
                                 ("judge", "judge_mean", "classical_low", "classical_high")):
            row = tab.loc[(est, "all", "")]
            hits[key] += int(row[lo] <= truth <= row[hi])
            width[key] += float(row[hi] - row[lo])
    return {"scenario": f"one system, n={n}, N={big_n}", "n": n, "N": big_n, "truth": truth,
            "sims": sims, **{f"coverage_{k}": hits[k] / sims for k in hits},
            **{f"width_{k}": width[k] / sims for k in width}}


def two_systems(n: int, big_n: int, sims: int, seed: int, n_draws: int = 1000) -> dict:
    rng = np.random.default_rng(seed)
    truth = true_mean(3.2) - true_mean(3.0)
    hits = {k: 0 for k in ("debiased", "debiased_hdi", "human", "judge")}
    width = {k: 0.0 for k in hits}
    lab = np.arange(n + big_n) < n
    for s in range(sims):
        ya, fa = draw(rng, n + big_n, 3.2, lift=0.3)
        yb, fb = draw(rng, n + big_n, 3.0)
        data = {"judge": np.r_[fa, fb],
                "human": np.r_[np.where(lab, ya, np.nan), np.where(lab, yb, np.nan)],
                "system": np.r_[np.full(n + big_n, "A"), np.full(n + big_n, "B")]}
        tab = bm.debiased_mean(data, system="system", random_seed=seed * 100_000 + s,
                               resampling={"n_resamples": n_draws}).summary()
        for key, est, lo, hi in (("debiased", "debiased_difference", "classical_low",
                                  "classical_high"),
                                 ("debiased_hdi", "debiased_difference", "hdi_low",
                                  "hdi_high"),
                                 ("human", "human_difference", "classical_low",
                                  "classical_high"),
                                 ("judge", "judge_difference", "classical_low",
                                  "classical_high")):
            row = tab.loc[(est, "A", "B")]
            hits[key] += int(row[lo] <= truth <= row[hi])
            width[key] += float(row[hi] - row[lo])
    return {"scenario": f"difference A - B, n={n}, N={big_n} per system", "n": n,
            "N": big_n, "truth": truth, "sims": sims,
            **{f"coverage_{k}": hits[k] / sims for k in hits},
            **{f"width_{k}": width[k] / sims for k in width}}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sims", type=int, default=1000)
    args = ap.parse_args()
    OUT.parent.mkdir(parents=True, exist_ok=True)
    runs = [lambda: one_system(50, 1000, args.sims, 1),
            lambda: one_system(200, 2000, args.sims, 2),
            lambda: one_system(500, 10000, args.sims, 3),
            lambda: two_systems(100, 1000, args.sims, 4)]
    print(f"{'scenario':44s} {'PPI++':>7s} {'PPI HDI':>8s} {'human':>7s} {'judge':>7s}   "
          f"widths (PPI++, human, judge)")
    for run in runs:
        t0 = time.perf_counter()
        row = run()
        row.update(seconds=round(time.perf_counter() - t0, 1),
                   loadavg=[round(v, 2) for v in os.getloadavg()],
                   bayesmeta=bm.__version__, ci_prob=CI)
        with OUT.open("a") as fh:
            fh.write(json.dumps(row) + "\n")
        print(f"{row['scenario']:44s} {row['coverage_debiased']:7.3f} "
              f"{row['coverage_debiased_hdi']:8.3f} {row['coverage_human']:7.3f} "
              f"{row['coverage_judge']:7.3f}   {row['width_debiased']:.3f}, "
              f"{row['width_human']:.3f}, {row['width_judge']:.3f}  "
              f"({row['seconds']} s, load {row['loadavg']})", flush=True)


if __name__ == "__main__":
    main()
