"""Factor-score parameterisation of the joint metric-validity model (issue 22, time
must-show): ``noncentred`` (the default, scores = z L^T with z ~ N(0, 1)) against
``centred`` (the scores sampled as N(0, Psi) themselves), fitted through
``joint_metric_variance`` with the package's sampler defaults.

Per fit one JSON line in ``benchmarks/results/joint_parameterisation.jsonl``: the shape,
seed and parameterisation, max R-hat and min bulk/tail ESS over the reported table,
divergences, draws, the total number of leapfrog steps (gradient evaluations: the cost
that does not depend on the machine's load), seconds per phase and the load average.

    nice python benchmarks/joint_parameterisation.py recovery --seeds 1 2 \
        --params noncentred centred
    nice python benchmarks/joint_parameterisation.py summeval --seeds 1 --params centred \
        [--metrics 43] [--method-factors 2] [--sampling '{"adaptive": false, "draws": 200}']
        [--init random]
"""

from __future__ import annotations

import argparse
import json
import os
import time
import warnings
from pathlib import Path

import numpy as np

import bayesmeta as bm
from bayesmeta.validity.joint_model import joint_metric_variance

OUT = Path(__file__).parent / "results" / "joint_parameterisation.jsonl"


def _data(what: str, seed: int, n_metrics: int | None):
    if what == "summeval":
        from summeval_joint_validity import M4

        ds = bm.datasets.summeval(bm.datasets.find_summeval(download=False))
        metrics = [str(m) for m in ds["metric"].values]
        return ds, M4, metrics[:n_metrics] if n_metrics else metrics
    from recovery_joint_validity import syntax

    from bayesmeta.validity.joint_simulate import simulate_joint_validity

    ds = simulate_joint_validity(seed, n_systems=8, n_items=30, n_traits=4, n_metrics=6)
    return ds, syntax(4), None


def one(what: str, seed: int, param: str, n_metrics: int | None, method_factors: int = 0,
        sampling: dict | None = None, init: str = "moments") -> dict:
    ds, model, metrics = _data(what, seed, n_metrics)
    load = [round(x, 2) for x in os.getloadavg()]
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = joint_metric_variance(ds, model, metrics=metrics, random_seed=seed,
                                    parameterization=param, method_factors=method_factors,
                                    sampling=sampling, init=init,
                                    claims={"SummaQA": "con"} if what == "summeval" else None)
    secs = time.perf_counter() - t0
    post, stats = res.idata.posterior, res.idata.sample_stats
    tab = res.summary()
    steps = next((k for k in ("n_steps", "tree_size") if k in stats), None)
    return {"what": what, "seed": seed, "parameterization": param,
            "method_factors": method_factors, "sampling": sampling or "defaults",
            "init": init,
            "n_metrics": len(res._jd.metrics), "seconds": round(secs, 1),
            "loadavg_start": load, "loadavg_end": [round(x, 2) for x in os.getloadavg()],
            "max_r_hat": float(np.nanmax(tab["r_hat"])),
            "argmax_r_hat": "/".join(map(str, tab["r_hat"].idxmax())),
            "loading_std_by_chain": post["loading_std"].mean("draw").round(3).values.tolist(),
            "mean_logp_by_chain": (stats["logp"].mean("draw").round(1).values.tolist()
                                   if "logp" in stats else None),
            "min_ess_bulk": float(np.nanmin(tab["ess_bulk"])),
            "min_ess_tail": float(np.nanmin(tab["ess_tail"])),
            "divergences": int(stats["diverging"].sum()),
            "draws": int(post.sizes["draw"]), "chains": int(post.sizes["chain"]),
            "stop_reason": post.attrs.get("stop_reason"),
            "leapfrog_steps": int(stats[steps].sum()) if steps else None,
            "mean_steps_per_draw": float(stats[steps].mean()) if steps else None,
            **{f"seconds_{k}": round(float(post.attrs.get(f"seconds_{k}", 0)), 1)
               for k in ("compile", "warmup", "sampling", "postprocess")},
            "warnings": sorted({str(w.message)[:160] for w in caught}),
            **({"findings": _findings(res)} if what == "summeval" else {}),
            "bayesmeta": bm.__version__}


def _findings(res) -> dict:
    """MetricEval's validity findings as posterior probabilities (the SummEval benchmark's
    definitions)."""
    from summeval_joint_validity import findings

    return findings(res)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=("recovery", "summeval"))
    ap.add_argument("--seeds", type=int, nargs="+", default=[1])
    ap.add_argument("--params", nargs="+", default=["noncentred", "centred"])
    ap.add_argument("--metrics", type=int, default=None)
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--method-factors", type=int, default=0)
    ap.add_argument("--sampling", type=json.loads, default=None,
                    help='sampler options as JSON, e.g. \'{"adaptive": false, "draws": 200}\'')
    ap.add_argument("--init", choices=("moments", "random"), default="moments")
    a = ap.parse_args()
    for seed in a.seeds:
        for param in a.params:
            rec = one(a.what, seed, param, a.metrics, a.method_factors, a.sampling,
                      a.init)
            print(json.dumps(rec), flush=True)
            with open(a.out, "a") as fh:
                fh.write(json.dumps(rec) + "\n")


if __name__ == "__main__":
    import sys

    sys.path.insert(0, str(Path(__file__).parent))
    main()
