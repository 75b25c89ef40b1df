"""The true_score model on SummEval: the numbers quoted in models/true_score.md.

1. METEOR consistency: posterior mean and 94% HDI next to the classical .966 (MetricEval
   Sec. 4.1.1).
2. Stability of the G-Eval-3.5 metrics against BLEU's and against G-Eval-4's, as posterior
   probabilities.
3. MetricEval Fig. 3: reliability of G-Eval system means against the number of test items
   (10..100): the decision-study curve with its 94% band next to MetricEval's own estimate
   (alpha averaged over 200 random item subsets of each size).

    python benchmarks/summeval_true_score.py [--out fig3.png] [--fast]

``--fast`` (2 chains x 300 draws, 20 item subsets) is a smoke run, not the card's numbers.
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

import bayesmeta as bm


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=2023)
    ap.add_argument("--out", default=None, help="save the Fig. 3 analogue to this PNG")
    ap.add_argument("--fast", action="store_true", help="smoke run (2 x 300 draws)")
    args = ap.parse_args()
    data = bm.datasets.summeval()
    fit = bm.reliability(data, sampling={"fast": args.fast}, random_seed=args.seed)
    tab = fit.summary().join(fit.details()[["metriceval"]])
    n_subsets = 20 if args.fast else 200
    print(fit.info["sampler"])
    print(fit.info["convergence"])
    cols = ["classical", "metriceval", "mean", "sd", "hdi_low", "hdi_high", "r_hat", "ess_bulk"]

    print("\n1. METEOR (MetricEval: alpha .966, SEM .07)")
    meteor = tab.xs("METEOR", level="variable")
    print(meteor.loc[["consistency", "sem", "stability"], cols].round(4).to_string())

    print("\n2. Stability: G-Eval-3.5 against BLEU and against G-Eval-4")
    post = fit.posterior["stability"]
    rows = []
    for trait in ("COH", "CON", "FLU", "REL"):
        g35 = post.sel(variable=f"G.EVAL.3.5.{trait}")
        g4 = post.sel(variable=f"G.EVAL.4.{trait}")
        rows.append({
            "metric": f"G.EVAL.3.5.{trait}",
            "stability mean": float(g35.mean()),
            "94% HDI": f"[{tab.loc[('stability', f'G.EVAL.3.5.{trait}'), 'hdi_low']:.3f}, "
                       f"{tab.loc[('stability', f'G.EVAL.3.5.{trait}'), 'hdi_high']:.3f}]",
            "P(< BLEU)": float((g35 < post.sel(variable="BLEU")).mean()),
            "P(< 0.99)": float((g35 < 0.99).mean()),
            "P(< G-Eval-4 same trait)": float((g35 < g4).mean()),
        })
    print(pd.DataFrame(rows).round(4).to_string(index=False))
    print(f"BLEU stability: mean {float(post.sel(variable='BLEU').mean()):.6f} (its two runs "
          f"are identical up to storage round-off)")

    print("\n3. MetricEval Fig. 3: reliability of system means against test-set size")
    items = list(range(10, 101, 10))
    geval = [q for q in tab.index.get_level_values("variable").unique()
             if q.startswith("G.EVAL")]
    d = bm.decision_study(fit, n_items=items, n_runs=[1], variables=geval)
    dt = d.summary()
    metrics_only = data[["score"]]
    for q in ("G.EVAL.4.COH", "G.EVAL.3.5.COH"):
        sub = dt.xs(("reliability", q, "1"), level=("estimand", "variable", "n_runs"))
        subset = [float(bm.consistency(metrics_only, n_items=j, n_subsets=n_subsets,
                                       random_seed=j, metrics=[q]).summary()
                        .loc[("alpha", q), "classical"]) for j in items]
        out = pd.DataFrame({"posterior mean": sub["mean"].to_numpy(),
                            "hdi_low": sub["hdi_low"].to_numpy(),
                            "hdi_high": sub["hdi_high"].to_numpy(),
                            "classical plug-in": sub["classical"].to_numpy(),
                            "MetricEval subset alpha": subset}, index=items)
        out.index.name = "items"
        inside = ((out["hdi_low"] < out["MetricEval subset alpha"])
                  & (out["MetricEval subset alpha"] < out["hdi_high"]))
        print(f"\n{q}: subset alpha inside the 94% band at {int(inside.sum())}/{len(items)} "
              f"sizes; curve increasing: {bool(np.all(np.diff(out['posterior mean']) > 0))}")
        print(out.round(4).to_string())
    need = d.items_needed()
    print("\nitems needed for reliability 0.9 (one run):")
    print(need.xs("1", level="n_runs")[["classical", "median", "hdi_low", "hdi_high"]]
          .to_string())
    if args.out:
        import matplotlib

        matplotlib.use("Agg")
        fig = d.plot(variables=["G.EVAL.4.COH", "G.EVAL.3.5.COH", "G.EVAL.4.CON",
                                 "G.EVAL.3.5.CON"])
        fig.savefig(args.out, dpi=120)
        print(f"\nsaved {args.out}")


if __name__ == "__main__":
    main()
