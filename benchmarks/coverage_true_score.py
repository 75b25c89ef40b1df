"""Calibration of the true_score model: 94% HDI coverage of every derived reliability.

Draws ``--n`` datasets from the generalizability model with known variance components
(:func:`bayesmeta.simulate.simulate_true_score`, one "metric" per dataset, each with its own
true SDs drawn from the ranges below), fits them all in one call (the quantities of a fit
are independent, so this is ``--n`` separate analyses), and prints, per derived quantity,
the share of datasets whose 94% HDI holds the true value, with the binomial 95% range of
that share under exact calibration. Designs: SummEval-shaped (17 systems x 100 items x 2
runs) and small (8 x 20 x 2); ``--missing`` also runs the random-effects likelihood on the
small design with 10% of the scores deleted at random.

    python benchmarks/coverage_true_score.py            # 256 datasets per design
    python benchmarks/coverage_true_score.py --n 64 --fast

Truth: sd_system ~ U(0.2, 0.8), sd_item ~ U(0.2, 1.0), sd_system_item ~ U(0.4, 1.2),
sd_run ~ U(0.05, 0.8).
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd
from scipy import stats

import bayesmeta as bm
from bayesmeta.reliability.generalizability import g_coefficient, stability_coefficient
from bayesmeta.sampling import ConvergenceWarning
from bayesmeta.simulate import simulate_true_score

CI = 0.94
CHECKED = ("consistency", "stability", "sem", "items_needed", "sd_system", "sd_system_item",
           "sd_run")
DSTUDY = ((20, 1), (50, 1), (200, 2))


def truth(ds, J: int, target: float) -> pd.DataFrame:
    s2 = {k: ds[f"true_sd_{k}"].values ** 2 for k in ("system", "item", "system_item", "run")}
    err = s2["system_item"] + s2["run"]
    out = pd.DataFrame({
        "consistency": g_coefficient(s2["system"], s2["system_item"], s2["run"], J),
        "stability": stability_coefficient(s2["system"], s2["system_item"], s2["run"], J),
        "sem": np.sqrt(err / J),
        "items_needed": np.ceil(target / (1 - target) * err / s2["system"] - 1e-9),
        "sd_system": np.sqrt(s2["system"]),
        "sd_system_item": np.sqrt(s2["system_item"]),
        "sd_run": np.sqrt(s2["run"]),
    }, index=[str(m) for m in ds["metric"].values])
    for items, runs in DSTUDY:
        out[f"rho({items},{runs})"] = g_coefficient(s2["system"], s2["system_item"], s2["run"],
                                                    items, runs)
    return out


def simulate(n: int, S: int, I: int, seed: int):
    rng = np.random.default_rng(seed)
    return simulate_true_score(
        seed, n_systems=S, n_items=I, n_runs=2,
        sd_system=rng.uniform(0.2, 0.8, n), sd_item=rng.uniform(0.2, 1.0, n),
        sd_system_item=rng.uniform(0.4, 1.2, n), sd_run=rng.uniform(0.05, 0.8, n),
        mu=rng.normal(0, 1, n))


def coverage(ds, *, fast: bool, seed: int, label: str) -> pd.DataFrame:
    J = ds.sizes["item"]
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        fit = bm.reliability(ds, sampling={"fast": fast}, random_seed=seed)
    elapsed = time.perf_counter() - t0
    dstudy = bm.decision_study(fit, n_items=sorted({i for i, _ in DSTUDY}),
                               n_runs=sorted({r for _, r in DSTUDY})).summary()
    true = truth(ds, J, fit.target)
    tab = fit.summary()
    rows = []
    for est in CHECKED:
        sub = tab.xs(est, level="estimand").loc[true.index]
        rows.append((est, sub, true[est]))
    for items, runs in DSTUDY:
        sub = dstudy.xs(("reliability", str(runs), str(items)),
                        level=("estimand", "n_runs", "n_items")).loc[true.index]
        rows.append((f"rho({items},{runs})", sub, true[f"rho({items},{runs})"]))
    n = len(true)
    lo, hi = stats.binom.ppf([0.025, 0.975], n, CI) / n
    out = []
    for name, sub, t in rows:
        inside = (sub["hdi_low"] <= t) & (t <= sub["hdi_high"])
        out.append({"design": label, "quantity": name, "n": n, "coverage": inside.mean(),
                    "below": (t < sub["hdi_low"]).mean(), "above": (t > sub["hdi_high"]).mean(),
                    "binom_95_low": lo, "binom_95_high": hi,
                    "max_r_hat": sub["r_hat"].max(), "min_ess_bulk": sub["ess_bulk"].min()})
    print(f"{label}: {n} datasets fitted in {elapsed:.1f} s ({fit.info['sampler']}); "
          f"{len(caught)} convergence warning(s)")
    for w in caught:
        print(f"   warning: {w.message}")
    return pd.DataFrame(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=256, help="datasets per design (>= 200 for the "
                                                         "calibration claim)")
    ap.add_argument("--fast", action="store_true", help="fast sampling mode (a preview)")
    ap.add_argument("--missing", action="store_true",
                    help="also check the random-effects likelihood with missing cells")
    ap.add_argument("--seed", type=int, default=20240601)
    args = ap.parse_args()
    designs = [("summeval-shaped 17x100x2", 17, 100, None), ("small 8x20x2", 8, 20, None)]
    if args.missing:
        designs.append(("small 8x20x2, 10% missing", 8, 20, 0.10))
    frames = []
    for k, (label, S, I, miss) in enumerate(designs):
        ds = simulate(args.n, S, I, args.seed + k)
        if miss:
            rng = np.random.default_rng(args.seed + 100 + k)
            score = ds["score"].values.copy()
            score[rng.random(score.shape) < miss] = np.nan
            ds["score"].values[:] = score
        frames.append(coverage(ds, fast=args.fast, seed=args.seed + k, label=label))
    table = pd.concat(frames, ignore_index=True)
    with pd.option_context("display.width", 200, "display.max_rows", 200):
        print()
        print(f"94% HDI coverage ({'fast mode' if args.fast else '4 chains x 1000 draws'}); "
              f"calibrated coverage falls in [binom_95_low, binom_95_high] 95% of the time")
        print(table.round(3).to_string(index=False))
    bad = table[(table["coverage"] < 0.88) | (table["coverage"] > 0.99)]
    print()
    print("all coverages within [0.88, 0.99]" if bad.empty else
          f"OUTSIDE [0.88, 0.99]:\n{bad.round(3).to_string(index=False)}")


if __name__ == "__main__":
    main()
