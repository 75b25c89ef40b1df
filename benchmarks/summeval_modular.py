"""The modular Bayesian metric-validity route on SummEval (issue 22): the four-factor
Bayesian ordinal CFA with its defaults, then ``bm.metric_variance(data, fit,
estimator="modular")`` on all 43 metrics, per seed. One JSON line per seed in
``benchmarks/results/summeval_modular.jsonl``: the CFA's and the modular step's seconds
and the load average, the CFA's draws, stop reason and divergences, max R-hat and min
bulk/tail ESS over the validity coefficients, error variances and error shares,
MetricEval's validity findings as posterior probabilities, and the two-stage route's
seconds on the same CFA; then the table of differences from the classical route (WLSMV
CFA, EBM scores, regression calibration, 1,000 resamples).

Posterior probabilities (MetricEval Sec. 4.2): that G-EVAL-4-COH's validity coefficient on
fluency and on relevance is at least its coefficient on coherence; that SummaQA is specific
to consistency (``claims={"SummaQA": "con"}``): P(its coefficient on consistency is the
largest of the four) and its specificity.

    nice python benchmarks/summeval_modular.py [--seeds 1 2] [--save-fits DIR]

Timings are claims only when the load average beside them shows a quiet machine.
"""

from __future__ import annotations

import argparse
import json
import os
import time
import warnings
from pathlib import Path

import numpy as np
from summeval_joint_validity import M4, findings  # the same model and findings

import bayesmeta as bm

OUT = Path(__file__).parent / "results" / "summeval_modular.jsonl"
KEY = ("validity_coefficient", "error_variance", "error_share")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--save-fits", type=Path, default=None,
                        help="folder to save each seed's Bayesian CFA (netCDF) in")
    parser.add_argument("--load-fits", type=Path, default=None,
                        help="folder of saved Bayesian CFAs (summeval_cfa_SEED.nc) to use "
                             "instead of fitting (their seconds are not recorded)")
    args = parser.parse_args()
    ds = bm.datasets.summeval(bm.datasets.find_summeval(download=False))
    claims = {"SummaQA": "con"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        wlsmv = bm.cfa(M4, ds)
    t0 = time.perf_counter()
    classical = bm.metric_variance(ds, wlsmv, claims=claims, random_seed=0).summary()
    print(f"classical route (1,000 resamples): {time.perf_counter() - t0:.1f} s, load "
          f"{os.getloadavg()}", flush=True)
    for seed in args.seeds:
        load_start = [round(x, 2) for x in os.getloadavg()]
        t0 = time.perf_counter()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            if args.load_fits is not None:
                fit = bm.load(args.load_fits / f"summeval_cfa_{seed}.nc")
            else:
                fit = bm.cfa(M4, ds, estimator="bayes", random_seed=seed)
        t_cfa = None if args.load_fits is not None else time.perf_counter() - t0
        load_cfa = [round(x, 2) for x in os.getloadavg()]
        if args.save_fits is not None:
            args.save_fits.mkdir(parents=True, exist_ok=True)
            fit.save(args.save_fits / f"summeval_cfa_{seed}.nc")
        t0 = time.perf_counter()
        res = bm.metric_variance(ds, fit, estimator="modular", claims=claims,
                                 random_seed=seed)
        t_mod = time.perf_counter() - t0
        load_mod = [round(x, 2) for x in os.getloadavg()]
        t0 = time.perf_counter()
        bm.metric_variance(ds, fit, claims=claims, random_seed=seed)
        t_two = time.perf_counter() - t0
        tab = res.summary()
        post = fit.idata.posterior
        key = tab.index.get_level_values("estimand").isin(KEY)
        rec = {"seed": seed, "metrics": int(res.idata.posterior.sizes["metric"]),
               "outputs": int(post.sizes["output"]),
               "cfa_seconds": None if t_cfa is None else round(t_cfa, 1),
               "cfa_loaded_from": None if args.load_fits is None else str(args.load_fits),
               "cfa_load": load_cfa,
               "load_at_start": load_start,
               "cfa_chains": int(post.sizes["chain"]), "cfa_draws": int(post.sizes["draw"]),
               "cfa_stop_reason": post.attrs.get("stop_reason"),
               "cfa_divergences": int(fit.idata.sample_stats["diverging"].sum()),
               "modular_seconds": round(t_mod, 2), "modular_load": load_mod,
               "two_stage_seconds": round(t_two, 2),
               "max_r_hat": float(tab.loc[key, "r_hat"].max()),
               "min_ess_bulk": float(tab.loc[key, "ess_bulk"].min()),
               "min_ess_tail": float(tab.loc[key, "ess_tail"].min()),
               "score_check_r_hat": float(res.idata.posterior.attrs["score_check_r_hat"]),
               "score_check_ess_bulk": float(
                   res.idata.posterior.attrs["score_check_ess_bulk"]),
               "max_r_hat_all_rows": float(tab["r_hat"].max()),
               "min_ess_bulk_all_rows": float(tab["ess_bulk"].min()),
               "warnings": [str(w.message)[:200] for w in caught],
               **findings(res)}
        args.out.parent.mkdir(parents=True, exist_ok=True)
        with args.out.open("a") as fh:
            fh.write(json.dumps(rec) + "\n")
        print(json.dumps(rec, indent=1), flush=True)
        both = tab[["mean", "hdi_low", "hdi_high"]].join(classical[["classical"]],
                                                         how="inner")
        both["difference"] = both["mean"] - both["classical"]
        for e in ("validity_coefficient", "error_share", "specificity"):
            part = both.xs(e, level="estimand")
            print(f"\n{e}: modular mean - classical, median |diff| "
                  f"{np.median(np.abs(part['difference'])):.3f}, max "
                  f"{np.abs(part['difference']).max():.3f}")
            print(part.sort_values("difference").round(3).to_string(), flush=True)


if __name__ == "__main__":
    main()
