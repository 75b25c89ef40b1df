"""The correlated-error joint model's residual correlations on the slow test's shape
(8 x 30 outputs, 2 traits, 4 metrics, independent errors; ``random_seed=3``), per
dataset: how many of the 6 HDIs cover 0 (the population value) and how many cover the
realized correlations of the true residuals (what ``residual_correlations()``
estimates), with the oracle's sample correlations. One JSON line per fit in
``benchmarks/results/correlated_residual_check.jsonl``; ``--label`` names the model
version (run it from a checkout of that version).

    nice python benchmarks/correlated_residual_check.py --seeds 11 12 13 14 --label new
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

import bayesmeta as bm
from bayesmeta.validity.joint_simulate import realized_error_corr, simulate_joint_validity

OUT = Path(__file__).parent / "results" / "correlated_residual_check.jsonl"
TWO = ("coh =~ Rater.1.COH + Rater.2.COH + Rater.3.COH\n"
       "con =~ Rater.1.CON + Rater.2.CON + Rater.3.CON")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[11, 12, 13, 14])
    parser.add_argument("--label", default="shipped")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    for seed in args.seeds:
        ds = simulate_joint_validity(seed, n_systems=8, n_items=30, n_traits=2, n_metrics=4)
        t0 = time.perf_counter()
        res = bm.metric_variance(ds, TWO, estimator="joint", residuals="correlated",
                                 random_seed=3)
        rc = res.residual_correlations()
        lo, hi = rc["hdi_low"].to_numpy(), rc["hdi_high"].to_numpy()
        corr = realized_error_corr(ds).values
        truth = corr[np.triu_indices(corr.shape[0], 1)]  # rc's order: metric < metric2
        rec = {"label": args.label, "data_seed": seed,
               "seconds": round(time.perf_counter() - t0, 1),
               "max_r_hat": float(res.summary()["r_hat"].max()),
               "cover_0": int(((lo <= 0) & (hi >= 0)).sum()),
               "cover_realized": int(((lo <= truth) & (truth <= hi)).sum()),
               "mean": [round(float(v), 3) for v in rc["mean"]],
               "hdi_low": [round(float(v), 3) for v in lo],
               "hdi_high": [round(float(v), 3) for v in hi],
               "realized": [round(float(v), 3) for v in truth]}
        print(json.dumps(rec), flush=True)
        with args.out.open("a") as fh:
            fh.write(json.dumps(rec) + "\n")


if __name__ == "__main__":
    main()
