"""Parameter recovery and HDI coverage of the many-facet rater model (models/rater.md).

Draws ``--datasets`` datasets from :func:`bayesmeta.simulate.simulate_rater` (known truth),
fits :func:`bayesmeta.raters.model.rater_bias` to each, and prints per quantity the share
of true values inside the posterior's HDI (nominal ``--ci-prob``), the mean error (bias),
the RMSE, the worst R-hat, and the time per fit. The classical peer is the marginal
threshold (probit of cumulative proportions), whose error against the true marginal
threshold is printed beside the posterior's. All fits share one shape, so the model is
compiled once.

    python benchmarks/rater_recovery.py [--datasets 20] [--systems 10] [--items 40]
                                        [--seed 100] [--mass-matrix low_rank]
                                        [--defaults [--sampling JSON]]
                                        [--parameterisation NAME]
                                        [--out rows.csv] [--jsonl results.jsonl]
    python benchmarks/rater_recovery.py --summarize results.jsonl [more.jsonl ...]

``--defaults`` fits with the model's default sampler settings (what a user gets) instead of
``--chains`` x ``--draws`` (``--sampling '{"tune": 500}'`` changes one of them);
``--jsonl`` appends one JSON line per dataset (diagnostics,
divergences, seconds with the load average, coverage per quantity) as the fits come.
"""

from __future__ import annotations

import argparse
import json
import os
import time
import warnings

import numpy as np
import pandas as pd

from bayesmeta.convergence import ConvergenceWarning
from bayesmeta.options import SAMPLER_DEFAULTS
from bayesmeta.raters.model import DEFAULT_PARAMETERIZATION, rater_bias
from bayesmeta.simulate import simulate_rater

QUANTITIES = ("threshold", "severity", "marginal_threshold", "loading", "reliability_system",
              "icc_output")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", type=int, default=20)
    ap.add_argument("--systems", type=int, default=10)
    ap.add_argument("--items", type=int, default=40)
    ap.add_argument("--draws", type=int, default=500)
    ap.add_argument("--tune", type=int, default=500)
    ap.add_argument("--chains", type=int, default=2)
    ap.add_argument("--ci-prob", type=float, default=0.94)
    ap.add_argument("--seed", type=int, default=100)
    ap.add_argument("--mass-matrix", choices=["diag", "low_rank"], default="diag")
    ap.add_argument("--defaults", action="store_true",
                    help="the model's default sampler settings (ignores --chains etc.)")
    ap.add_argument("--sampling", type=json.loads, default=None, metavar="JSON",
                    help="with --defaults: sampling= settings changed from the defaults, "
                         "e.g. '{\"tune\": 500}'")
    ap.add_argument("--parameterisation", default=DEFAULT_PARAMETERIZATION)
    ap.add_argument("--out", help="also write one row per true value to this CSV")
    ap.add_argument("--jsonl", help="append one JSON line per fitted dataset to this file")
    ap.add_argument("--summarize", nargs="+", metavar="JSONL",
                    help="only summarise the lines of earlier runs (--jsonl files) together")
    args = ap.parse_args()
    if args.summarize:
        print(json.dumps(summarize(args.summarize), indent=1))
        return
    if args.sampling is not None and not args.defaults:
        ap.error("--sampling changes the model's defaults: it needs --defaults (without it "
                 "--chains, --draws, --tune and --mass-matrix set the sampler)")

    rows, times, rhat = [], [], []
    for k in range(args.datasets):
        seed = args.seed + k
        ds = simulate_rater(seed, n_systems=args.systems, n_items=args.items,
                            traits=("COH", "CON"))
        sampling = (args.sampling or None) if args.defaults else {
            "chains": args.chains, "draws": args.draws, "tune": args.tune,
            "mass_matrix": args.mass_matrix}
        load_start = [round(x, 2) for x in os.getloadavg()]
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            res = rater_bias(ds, sampling=sampling, ci_prob=args.ci_prob, random_seed=seed,
                             parameterization=args.parameterisation)
        times.append(time.perf_counter() - t0)
        tab = res.summary()
        rhat.append(float(tab["r_hat"].max()))
        n_rows = len(rows)
        for name in QUANTITIES:
            sub = tab.xs(name, level="estimand")
            for key, true in ds[f"true_{name}"].to_series().items():
                key = key if isinstance(key, tuple) else (key,)
                key = {1: ("", key[0], ""), 2: (*key, ""), 3: key}[len(key)]
                row = sub.loc[key]
                rows.append({"quantity": name, "dataset": k, "true": true,
                             "mean": row["mean"], "classical": row["classical"],
                             "covered": row["hdi_low"] <= true <= row["hdi_high"]})
        print(f"dataset {k + 1}/{args.datasets}: {times[-1]:.0f} s, max R-hat {rhat[-1]:.3f}",
              flush=True)
        if args.jsonl:
            new = pd.DataFrame(rows[n_rows:])
            post = res.idata.posterior
            line = {
                "dataset": k, "seed": seed, "systems": args.systems, "items": args.items,
                "parameterisation": args.parameterisation,
                "chains": post.attrs.get("chains"), "draws": post.attrs.get("draws"),
                "tune": post.attrs.get("tune"), "ci_prob": args.ci_prob,
                "stop_reason": post.attrs.get("stop_reason"),
                "max_r_hat": round(rhat[-1], 4),
                "min_ess_bulk": round(float(tab["ess_bulk"].min()), 0),
                "min_ess_tail": round(float(tab["ess_tail"].min()), 0),
                "divergences": int(res.idata.sample_stats["diverging"].sum()),
                "seconds": round(times[-1], 1), "load_start": load_start,
                "load_end": [round(x, 2) for x in os.getloadavg()],
                "covered": {q: [int(g["covered"].sum()), len(g)]
                            for q, g in new.groupby("quantity", sort=False)},
                "sq_error": {q: float(((g["mean"] - g["true"]) ** 2).sum())
                             for q, g in new.groupby("quantity", sort=False)},
                "error": {q: float((g["mean"] - g["true"]).sum())
                          for q, g in new.groupby("quantity", sort=False)},
            }
            with open(args.jsonl, "a") as fh:
                fh.write(json.dumps(line) + "\n")
    df = pd.DataFrame(rows)
    df["error"] = df["mean"] - df["true"]
    df["classical_error"] = df["classical"] - df["true"]
    if args.out:
        df.assign(seed=args.seed + df["dataset"]).to_csv(args.out, index=False)
    out = df.groupby("quantity", sort=False).agg(
        n=("covered", "size"), coverage=("covered", "mean"), bias=("error", "mean"),
        rmse=("error", lambda e: float(np.sqrt(np.mean(e**2)))),
        classical_rmse=("classical_error",
                        lambda e: float(np.sqrt(np.mean(e.dropna()**2))) if e.notna().any()
                        else np.nan),
    )
    print(f"\n{args.datasets} datasets of {args.systems} systems x {args.items} items x 3 "
          f"raters x 2 traits; " + ("model defaults" if args.defaults else
                                  f"{args.chains} chains x {args.draws} draws "
                                  f"({args.tune} tune)") + "; "
          f"nominal {args.ci_prob:.0%} HDI")
    print(out.to_string(float_format=lambda v: f"{v:.3f}"))
    print(f"\nmedian time per fit {np.median(times):.0f} s (first fit includes compilation: "
          f"{times[0]:.0f} s); worst R-hat over all fits {max(rhat):.3f}")


def summarize(files: list[str]) -> dict:
    """Coverage per quantity over the datasets of one or more ``--jsonl`` files, with a
    binomial 95% interval (normal approximation), bias and RMSE of the posterior mean, and
    the convergence of the fits (none dropped; the targets are the sampler's own,
    ``SAMPLER_DEFAULTS``). A seed met twice is an error: two runs of
    one dataset would count it twice."""
    lines = [json.loads(x) for f in files for x in open(f) if x.strip()]
    seeds = [d["seed"] for d in lines]
    if len(set(seeds)) != len(seeds):
        raise SystemExit(f"seed(s) {sorted({s for s in seeds if seeds.count(s) > 1})} occur "
                         f"more than once in {files}")
    out: dict = {}
    for q in QUANTITIES:
        k = sum(d["covered"][q][0] for d in lines if q in d["covered"])
        n = sum(d["covered"][q][1] for d in lines if q in d["covered"])
        if not n:
            continue
        p = k / n
        half = 1.96 * np.sqrt(p * (1 - p) / n)
        out[q] = {"covered": k, "n": n, "coverage": round(p, 4),
                  "ci95": [round(p - half, 4), round(p + half, 4)],
                  "bias": sum(d["error"][q] for d in lines) / n,
                  "rmse": float(np.sqrt(sum(d["sq_error"][q] for d in lines) / n))}
    out["datasets"] = len(lines)
    out["seeds"] = [min(seeds), max(seeds)]
    out["max_r_hat"] = max(d["max_r_hat"] for d in lines)
    out["min_ess_bulk"] = min(d["min_ess_bulk"] for d in lines)
    out["min_ess_tail"] = min(d["min_ess_tail"] for d in lines)
    rhat, ess = SAMPLER_DEFAULTS["target_rhat"], SAMPLER_DEFAULTS["target_ess"]
    out["datasets_missing_targets"] = sum(
        d["max_r_hat"] > rhat or min(d["min_ess_bulk"], d["min_ess_tail"]) < ess
        or d["divergences"] > 0 for d in lines)
    out["divergent_datasets"] = sum(d["divergences"] > 0 for d in lines)
    out["draws_per_chain"] = sorted(d["draws"] for d in lines)
    out["median_seconds"] = float(np.median([d["seconds"] for d in lines]))
    return out


if __name__ == "__main__":
    main()
