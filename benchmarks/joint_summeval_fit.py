"""One joint metric-validity fit on SummEval (all 43 metrics, the four-factor model of
``summeval_joint_validity.py``) through ``joint_metric_variance``, for the card's
convergence diagnosis (``models/metric_validity.md``, issue 22): where the chains agree and
where they part.

One JSON line per fit in ``benchmarks/results/joint_summeval_fits.jsonl``: seed, sampling
options and keyword arguments, seconds and load average, max R-hat and min bulk ESS overall
and per estimand, divergences, leapfrog steps per draw, each chain's mean log density and
factor correlations, and the trait-drift line.

    nice python benchmarks/joint_summeval_fit.py --seed 1 \\
        --sampling '{"adaptive": false, "draws": 400}' [--kwargs '{"method_factors": 0}']
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import time
import warnings
from pathlib import Path

import numpy as np

import bayesmeta as bm
from bayesmeta.validity.joint_model import joint_metric_variance

OUT = Path(__file__).parent / "results" / "joint_summeval_fits.jsonl"
ESTIMANDS = ("validity_coefficient", "error_share", "error_variance", "r_squared",
             "method_share")


def one(seed: int, sampling: dict, kwargs: dict) -> dict:
    from summeval_joint_validity import M4

    ds = bm.datasets.summeval(bm.datasets.find_summeval(download=False))
    load = [round(x, 2) for x in os.getloadavg()]
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = joint_metric_variance(ds, M4, random_seed=seed, sampling=sampling, **kwargs)
    secs = time.perf_counter() - t0
    post, stats = res.idata.posterior, res.idata.sample_stats
    tab = res.summary()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, cwd=Path(__file__).parent).stdout.strip()
    out = {"seed": seed, "sampling": sampling, "kwargs": kwargs, "commit": commit,
           "seconds": round(secs, 1), "loadavg_start": load,
           "loadavg_end": [round(x, 2) for x in os.getloadavg()],
           "sampler": res.info["sampler"], "metrics": res.info["metrics"],
           "max_r_hat": float(np.nanmax(tab["r_hat"])),
           "min_ess_bulk": float(np.nanmin(tab["ess_bulk"])),
           "divergences": int(stats["diverging"].sum()),
           "steps_per_draw": (float(stats["n_steps"].mean()) if "n_steps" in stats
                              else None),
           "logp_by_chain": (stats["logp"].mean("draw").round(1).values.tolist()
                             if "logp" in stats else None),
           "factor_corr_by_chain": post["factor_corr"].mean("draw").round(3).values.tolist(),
           "traits_vs_ratings_alone": res.info["traits vs ratings alone"]}
    for est in ESTIMANDS:
        if est in tab.index.get_level_values(0):
            sub = tab.xs(est, level=0)
            out[est] = {"max_r_hat": float(sub["r_hat"].max()),
                        "min_ess_bulk": float(sub["ess_bulk"].min())}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--sampling", type=json.loads, default={})
    parser.add_argument("--kwargs", type=json.loads, default={},
                        help="further keyword arguments of joint_metric_variance (JSON)")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    line = one(args.seed, args.sampling, args.kwargs)
    with args.out.open("a") as fh:
        fh.write(json.dumps(line) + "\n")
    print(json.dumps(line, indent=1))


if __name__ == "__main__":
    main()
