"""Coverage of bm.metric_variance's classical 94% intervals on data simulated from the
metric-validity model (issue 11): SummEval-shaped datasets (17 systems x 100 items, 12
metrics, each score = b q_claimed + sqrt(1 - b^2) w + run noise), WLSMV CFA, EBM scores,
regression calibration, percentile bootstrap over ``--unit`` (default both). Prints the
coverage of the claimed-trait validity coefficient b / sqrt(1 + s^2) and of the error share
1 - b^2 / (1 + s^2), and the mean errors.

    python benchmarks/coverage_metric_variance.py [--datasets 100] [--unit both]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

import bayesmeta as bm

SIM4 = "\n".join(f"{t.lower()} =~ " + " + ".join(f"Rater.{r}.{t}" for r in (1, 2, 3))
                 for t in ("COH", "CON", "FLU", "REL"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=100)
    parser.add_argument("--resamples", type=int, default=200)
    parser.add_argument("--unit", default="both", choices=("both", "systems", "items"))
    args = parser.parse_args()
    t0 = time.perf_counter()
    hit_b, hit_e, err_b, err_e = [], [], [], []
    for k in range(args.datasets):
        ds = bm.datasets.simulated(random_seed=100 + k, n_systems=17, n_items=100)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = bm.cfa(SIM4, ds)
        tab = bm.metric_variance(ds, fit, random_seed=k, resampling={
            "n_resamples": args.resamples, "unit": args.unit}).summary()
        for m in ds["metric"].values:
            c = str(ds["metric_trait"].sel(metric=m).values).lower()
            b = float(ds["true_metric_loading"].sel(metric=m)) / np.sqrt(
                1 + float(ds["true_run_sd"].sel(metric=m)) ** 2)
            row = tab.loc[("validity_coefficient", c, m)]
            hit_b.append(row["classical_low"] <= b <= row["classical_high"])
            err_b.append(row["classical"] - b)
            row = tab.loc[("error_share", "", m)]
            hit_e.append(row["classical_low"] <= 1 - b * b <= row["classical_high"])
            err_e.append(row["classical"] - (1 - b * b))
    n = len(hit_b)
    print(f"{args.datasets} datasets x 12 metrics, bootstrap over {args.unit}, "
          f"{time.perf_counter() - t0:.0f} s")
    print(f"  validity coefficient: coverage {np.mean(hit_b):.3f} (n = {n}), "
          f"mean error {np.mean(err_b):+.3f}")
    print(f"  error share:          coverage {np.mean(hit_e):.3f}, "
          f"mean error {np.mean(err_e):+.3f}")


if __name__ == "__main__":
    main()
