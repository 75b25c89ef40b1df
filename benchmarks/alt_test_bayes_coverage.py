"""Coverage of the Bayesian alt-test's posterior of rho in the alt-test paper's simulation.

The simulation of Calderon, Reichart & Dror (ACL 2025, App. C; ``alt_test_example.ipynb``,
section "Simulation", github.com/nitaytech/AltTest commit 18428b1): K = 4 categories with
priors ~ Dirichlet(1, ..., 1) drawn per dataset; each instance has a gold label ~ priors; an
annotator (noise eta_h) and the LLM (noise eta_f) label it from
``eta * priors + (1 - eta) * onehot(gold)``; 3 annotators; scoring accuracy. We draw eta_h
and eta_f from the paper's grid {0.1, 0.2, 0.3, 0.4} and the number of instances from
{30, 50, 100, 200} (the notebook's sizes run from 30 to 200).

The truth: the advantage probability rho = P(S(f, i) >= S(h_j, i)) of the data-generating
process, the same for every annotator (they are exchangeable), computed exactly by
enumerating gold x annotator j x the two others x the LLM (4^5 cells); likewise
delta = rho_h - rho_f for the decision.

For each dataset, ``bm.alt_test(estimator="bayes")`` (1,000 draws) and
``estimator="bootstrap"`` (the plain Bayesian bootstrap) report the 94% HDI of rho; the
classical percentile bootstrap interval is recorded too. One JSON line per dataset goes to
``benchmarks/results/alt_test_bayes_coverage.jsonl`` and a final line with the coverage.

    nice python benchmarks/alt_test_bayes_coverage.py --replicates 400
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import time
import warnings
from pathlib import Path

import numpy as np

import bayesmeta as bm

K = 4
N_HUMANS = 3
NOISES = (0.1, 0.2, 0.3, 0.4)
SIZES = (30, 50, 100, 200)
OUT = Path(__file__).parent / "results" / "alt_test_bayes_coverage.jsonl"


def label_probs(priors: np.ndarray, noise: float) -> np.ndarray:
    """(gold, label) probabilities: noise * priors + (1 - noise) * onehot(gold)."""
    return noise * priors[None, :] + (1.0 - noise) * np.eye(priors.size)


def true_rho(priors: np.ndarray, eta_h: float, eta_f: float) -> tuple[float, float]:
    """Exact rho_f and delta = rho_h - rho_f of one annotator against two others."""
    a, b = label_probs(priors, eta_h), label_probs(priors, eta_f)
    rho_f = rho_h = 0.0
    for g, yj, y1, y2, x in itertools.product(range(K), repeat=5):
        p = priors[g] * a[g, yj] * a[g, y1] * a[g, y2] * b[g, x]
        sf = ((x == y1) + (x == y2)) / 2
        sh = ((yj == y1) + (yj == y2)) / 2
        rho_f += p * (sf >= sh)
        rho_h += p * (sh >= sf)
    return float(rho_f), float(rho_h - rho_f)


def simulate(rng: np.random.Generator, n: int, priors: np.ndarray, eta_h: float,
             eta_f: float) -> tuple[dict, dict]:
    gold = rng.choice(K, size=n, p=priors)
    a, b = label_probs(priors, eta_h), label_probs(priors, eta_f)
    human = {f"h{k}": {str(i): int(rng.choice(K, p=a[gold[i]])) for i in range(n)}
             for k in range(N_HUMANS)}
    llm = {"llm": {str(i): int(rng.choice(K, p=b[gold[i]])) for i in range(n)}}
    return human, llm


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--replicates", type=int, default=400)
    ap.add_argument("--draws", type=int, default=1000)
    ap.add_argument("--epsilon", type=float, default=0.1)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(20260601)
    hits = {"bayes": [], "bootstrap": [], "classical": []}
    widths = {"bayes": [], "bootstrap": []}
    t0 = time.time()
    with open(args.out, "w") as fh:
        for r in range(args.replicates):
            n = SIZES[r % len(SIZES)]
            eta_h, eta_f = rng.choice(NOISES), rng.choice(NOISES)
            priors = rng.dirichlet(np.ones(K))
            rho, delta = true_rho(priors, eta_h, eta_f)
            data = bm.read_annotations(*simulate(rng, n, priors, eta_h, eta_f))
            row = {"replicate": r, "n": n, "eta_h": float(eta_h), "eta_f": float(eta_f),
                   "true_rho": rho, "true_delta": delta}
            for est in ("bayes", "bootstrap"):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    res = bm.alt_test(data, epsilon=args.epsilon, estimator=est,
                                      resampling={"n_resamples": args.draws}, random_seed=r)
                s = res.summary().loc[("advantage_probability", "llm", "")]
                lo, hi = float(s["hdi_low"]), float(s["hdi_high"])
                hits[est].append(lo <= rho <= hi)
                widths[est].append(hi - lo)
                row[f"{est}_hdi"] = [lo, hi]
                if est == "bayes":
                    c_lo, c_hi = float(s["classical_low"]), float(s["classical_high"])
                    hits["classical"].append(c_lo <= rho <= c_hi)
                    row["classical"] = float(s["classical"])
                    row["classical_ci"] = [c_lo, c_hi]
                    det = res.details().loc[("winning_rate", "llm", "")]
                    row["prob_pass"] = float(det["prob_pass"])
                    row["passes_bayes"] = bool(det["passes_bayes"])
                    row["passes_classical"] = bool(det["passes"])
            fh.write(json.dumps(row) + "\n")
        cover = {k: float(np.mean(v)) for k, v in hits.items()}
        by_n = {str(n): float(np.mean([h for h, r in zip(hits["bayes"], range(len(
            hits["bayes"])), strict=True) if SIZES[r % len(SIZES)] == n])) for n in SIZES}
        band = 3 * np.sqrt(0.94 * 0.06 / args.replicates)
        summary = {"summary": True, "replicates": args.replicates, "draws": args.draws,
                   "ci_prob": 0.94, "coverage": cover, "coverage_bayes_by_n": by_n,
                   "mean_width": {k: float(np.mean(v)) for k, v in widths.items()},
                   "band_3sd": [0.94 - band, 0.94 + band], "target": [0.88, 0.99],
                   "seconds": round(time.time() - t0, 1),
                   "loadavg": os.getloadavg(), "bayesmeta": bm.__version__}
        fh.write(json.dumps(summary) + "\n")
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
