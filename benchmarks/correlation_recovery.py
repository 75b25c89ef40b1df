"""Parameter recovery and HDI coverage of the App. C correlation model (models/correlation.md).

Simulates N datasets of 17 systems x 100 items (SummEval's shape) from the model's own
generative process and fits them all at once: the datasets are the ``metric`` dim of one
model, which is valid because the metrics of the model are independent copies. Two
scenarios:

``prior``      parameters drawn from the prior (simulation-based calibration: the 94% HDIs
               must cover the truth in 94% of datasets, up to binomial noise);
``summeval``   parameters in SummEval's range (classical estimates on the 43 metrics x 4
               traits): r_mu in (-0.2, 0.4), r_sigma in (0.02, 0.15), rho in (-0.5, 0.9),
               between-system SDs 0.35 (metric) and 0.5 (human) against within-system
               SDs 0.9.

Prints, per estimand, the coverage of the 94% HDI with its binomial SE, the mean HDI width,
and the RMSE of the posterior mean next to the RMSE of the classical estimate (mean
within-system Pearson r; Pearson r of system means; SD of the within-system r), plus the
sampling time and the convergence summary.

    python benchmarks/correlation_recovery.py --scenario prior --n-datasets 100
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd
import xarray as xr

from bayesmeta.correlation import model as C
from bayesmeta.simulate import simulate_correlation_study


def summeval_like(n: int, seed: int) -> xr.Dataset:
    rng = np.random.default_rng(seed)
    vals = {
        "mu_metric": np.zeros(n), "mu_human": np.zeros(n),
        "tau_metric": np.full(n, 0.35), "tau_human": np.full(n, 0.5),
        "sigma_metric": np.full(n, 0.9), "sigma_human": np.full(n, 0.9),
        "rho": rng.uniform(-0.5, 0.9, n),
        "r_mu": rng.uniform(-0.2, 0.4, n),
        "r_sigma": rng.uniform(0.02, 0.15, n),
    }
    return xr.Dataset({k: ("metric", v) for k, v in vals.items()},
                      coords={"metric": [f"d{j}" for j in range(n)]})


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scenario", choices=["prior", "summeval"], default="prior")
    ap.add_argument("--n-datasets", type=int, default=100)
    ap.add_argument("--n-systems", type=int, default=17)
    ap.add_argument("--n-items", type=int, default=100)
    ap.add_argument("--draws", type=int, default=1000)
    ap.add_argument("--tune", type=int, default=1000)
    ap.add_argument("--chains", type=int, default=4)
    ap.add_argument("--seed", type=int, default=2024)
    ap.add_argument("--centered", action="store_true")
    args = ap.parse_args()

    n = args.n_datasets
    params = (C.sample_prior(n, random_seed=args.seed) if args.scenario == "prior"
              else summeval_like(n, args.seed))
    params = params.assign_coords(metric=[f"d{j}" for j in range(n)])
    sim = simulate_correlation_study(args.seed + 1, params=params, n_systems=args.n_systems,
                                     n_items=args.n_items)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = C.fit_correlation_model(
            sim, human=sim["human"], centered=args.centered, random_seed=args.seed + 2,
            sampling={"draws": args.draws, "tune": args.tune, "chains": args.chains})
    wall = time.perf_counter() - t0
    tab = fit.summary().droplevel("trait")
    truth = {"within_system_pearson": sim["r"].mean("system").values,
             "system_pearson": params["rho"].values,
             "within_system_sd": params["r_sigma"].values}
    rows = []
    for est, true in truth.items():
        sub = tab.xs(est, level="estimand").loc[params["metric"].values]
        cover = (sub["hdi_low"].values <= true) & (true <= sub["hdi_high"].values)
        rows.append({
            "estimand": est,
            "coverage": cover.mean(),
            "coverage_se": np.sqrt(0.94 * 0.06 / n),
            "hdi_width": (sub["hdi_high"] - sub["hdi_low"]).mean(),
            "rmse_posterior_mean": np.sqrt(np.mean((sub["mean"].values - true) ** 2)),
            "rmse_classical": np.sqrt(np.nanmean((sub["classical"].values - true) ** 2)),
            "max_r_hat": sub["r_hat"].max(),
            "min_ess_bulk": sub["ess_bulk"].min(),
        })
    # r_mu (population location) from the parameter table
    item_classical = tab.xs("within_system_pearson", level="estimand").loc[
        params["metric"].values, "classical"].values  # the classical estimate of r_mu too
    par = fit.parameters().droplevel("trait").xs("r_mu", level="estimand").loc[
        params["metric"].values]
    true = params["r_mu"].values
    cover = (par["hdi_low"].values <= true) & (true <= par["hdi_high"].values)
    rows.append({"estimand": "r_mu", "coverage": cover.mean(),
                 "coverage_se": np.sqrt(0.94 * 0.06 / n),
                 "hdi_width": (par["hdi_high"] - par["hdi_low"]).mean(),
                 "rmse_posterior_mean": np.sqrt(np.mean((par["mean"].values - true) ** 2)),
                 "rmse_classical": np.sqrt(np.mean((item_classical - true) ** 2)),
                 "max_r_hat": par["r_hat"].max(), "min_ess_bulk": par["ess_bulk"].min()})
    out = pd.DataFrame(rows).set_index("estimand")
    print(f"scenario {args.scenario}: {n} datasets of {args.n_systems} systems x "
          f"{args.n_items} items; {args.chains} chains x {args.draws} draws "
          f"({args.tune} tuning); {'centred' if args.centered else 'non-centred'} r")
    print(f"fit wall time {wall:.1f} s (sampling {fit.idata.posterior.attrs['sampling_seconds']}"
          f" s, the rest compilation and summaries)")
    print(f"convergence: {fit.info['convergence']}")
    with pd.option_context("display.width", 200, "display.max_columns", 20,
                           "display.float_format", "{:.3f}".format):
        print(out)


if __name__ == "__main__":
    main()
