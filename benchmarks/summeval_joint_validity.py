"""The joint metric-validity model on SummEval (issue 22): all 43 metrics x 4 traits via the
public call with its defaults, per seed; one JSON line per fit in
``benchmarks/results/joint_validity_summeval.jsonl`` (seconds, load average, draws, max
R-hat and min bulk/tail ESS over the validity coefficients and error variances,
divergences, and MetricEval's validity findings as posterior probabilities), then the table
of differences from the classical route (WLSMV CFA, EBM scores, regression calibration).

Posterior probabilities (MetricEval Sec. 4.2): that G-EVAL-4-COH's validity coefficient on
fluency and on relevance is at least its coefficient on coherence; that SummaQA is specific
to consistency (``claims={"SummaQA": "con"}``): P(its coefficient on consistency is the
largest of the four) and P(specificity > 1/2).

    nice python benchmarks/summeval_joint_validity.py [--seeds 1 2] [--metrics NAME ...]
        [--two-stage] [--sampling '{"tune": 250}']

``--two-stage`` also times the two-stage Bayesian route on the same seed, in the same run
(``bm.cfa(M4, data, estimator="bayes")`` with its defaults, then ``bm.metric_variance`` on
that fit), and records its seconds beside the joint fit's (``two_stage_seconds``). Timings
are claims only when the load average recorded beside them shows a quiet machine.
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

OUT = Path(__file__).parent / "results" / "joint_validity_summeval.jsonl"
M4 = """
coh =~ Expert.1.COH + Expert.2.COH + Expert.3.COH
con =~ Expert.1.CON + Expert.2.CON + Expert.3.CON
flu =~ Expert.1.FLU + Expert.2.FLU + Expert.3.FLU
rel =~ Expert.1.REL + Expert.2.REL + Expert.3.REL
"""
GEVAL = "G-EVAL-4-COH"


def findings(res) -> dict:
    """MetricEval's validity findings as posterior probabilities of the joint fit."""
    post = res.idata.posterior
    beta = post["validity_coefficient"]
    metrics = [str(m) for m in beta["metric"].values]
    out = {}
    geval = next((m for m in metrics if m.replace(".", "-") == GEVAL), None)
    if geval is not None:
        for t in ("flu", "rel"):
            out[f"P(beta[{GEVAL},{t}] >= beta[{GEVAL},coh])"] = res.probability(geval, t,
                                                                                  "coh")
    if "SummaQA" in metrics:
        b = beta.sel(metric="SummaQA")
        others = [t for t in b["trait"].values if t != "con"]
        top = (b.sel(trait="con") >= b.sel(trait=others).max("trait")).mean()
        out["P(SummaQA's beta on con is the largest)"] = float(top)
        spec = res.summary().loc[("specificity", "con", "SummaQA")]
        out["SummaQA specificity (con) mean"] = float(spec["mean"])
        out["SummaQA specificity (con) hdi"] = [float(spec["hdi_low"]),
                                                float(spec["hdi_high"])]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--metrics", nargs="+", default=None,
                        help="metrics to enter (default all 43)")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--two-stage", action="store_true",
                        help="also time the two-stage Bayesian route (CFA, then regression)")
    parser.add_argument("--sampling", type=json.loads, default=None,
                        help="sampling= of the joint fit as JSON (default: its defaults)")
    args = parser.parse_args()
    ds = bm.datasets.summeval(bm.datasets.find_summeval(download=False))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = bm.cfa(M4, ds)
    t0 = time.perf_counter()
    classical = bm.metric_variance(ds, fit, metrics=args.metrics,
                                   claims={"SummaQA": "con"}, random_seed=0).summary()
    t_classical = time.perf_counter() - t0
    print(f"classical route (1,000 resamples): {t_classical:.1f} s, load "
          f"{os.getloadavg()}")
    for seed in args.seeds:
        load_start = [round(x, 2) for x in os.getloadavg()]
        t0 = time.perf_counter()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            res = bm.metric_variance(ds, M4, estimator="joint", metrics=args.metrics,
                                     claims={"SummaQA": "con"}, random_seed=seed,
                                     sampling=args.sampling)
        secs = time.perf_counter() - t0
        load_joint = [round(x, 2) for x in os.getloadavg()]
        two_stage = {}
        if args.two_stage:
            t1 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                bfit = bm.cfa(M4, ds, estimator="bayes", random_seed=seed)
                bm.metric_variance(ds, bfit, metrics=args.metrics,
                                   claims={"SummaQA": "con"}, random_seed=seed)
            two_stage = {"two_stage_seconds": round(time.perf_counter() - t1, 1),
                         "two_stage_loadavg": [round(x, 2) for x in os.getloadavg()],
                         "two_stage_cfa_draws": int(bfit.idata.posterior.sizes["draw"])}
        tab = res.summary()
        post = res.idata.posterior
        est = tab.index.get_level_values("estimand")
        key = est.isin(["validity_coefficient", "error_variance", "error_share"])
        rec = {"seed": seed, "sampling": args.sampling or "defaults",
               "metrics": len(post["metric"]), "seconds": round(secs, 1),
               "loadavg": load_joint, "load_at_start": load_start,
               "parameterization": post.attrs.get("parameterization"),
               "residuals": post.attrs.get("residuals"),
               "traits_vs_ratings_alone": res.info["traits vs ratings alone"],
               "seconds_compile": round(float(post.attrs.get("seconds_compile", 0)), 1),
               "seconds_sampling": round(float(post.attrs.get("seconds_sampling", 0)), 1),
               "chains": int(post.sizes["chain"]), "draws": int(post.sizes["draw"]),
               "stop_reason": post.attrs.get("stop_reason"),
               "divergences": int(res.idata.sample_stats["diverging"].sum()),
               "max_r_hat": float(tab.loc[key, "r_hat"].max()),
               "min_ess_bulk": float(tab.loc[key, "ess_bulk"].min()),
               "min_ess_tail": float(tab.loc[key, "ess_tail"].min()),
               # every row of the table (what the stopping rule reads since stop 45)
               "table_max_r_hat": float(tab["r_hat"].max()),
               "table_min_ess_bulk": float(tab["ess_bulk"].min()),
               "table_min_ess_tail": float(tab["ess_tail"].min()),
               "classical_seconds": round(t_classical, 1), **two_stage,
               "seconds_warmup": round(float(post.attrs.get("seconds_warmup", 0)), 1),
               "leapfrog_steps": int(res.idata.sample_stats["n_steps"].sum()),
               "warnings": [str(w.message)[:200] for w in caught],
               **findings(res)}
        args.out.parent.mkdir(parents=True, exist_ok=True)
        with args.out.open("a") as fh:
            fh.write(json.dumps(rec) + "\n")
        print(json.dumps(rec, indent=1))
        both = tab[["mean", "hdi_low", "hdi_high"]].join(classical[["classical"]],
                                                         how="inner")
        both["difference"] = both["mean"] - both["classical"]
        for e in ("validity_coefficient", "error_share", "specificity"):
            part = both.xs(e, level="estimand")
            print(f"\n{e}: joint mean - classical, median |diff| "
                  f"{np.median(np.abs(part['difference'])):.3f}, max "
                  f"{np.abs(part['difference']).max():.3f}")
            print(part.sort_values("difference").round(3).to_string())


if __name__ == "__main__":
    main()
