"""Discriminative power and ranking consistency of the 12 correlation measures on SummEval,
beside paper 001's Table 2 (averaged over its 30 datasets) and its SummEval columns D1-D4
(Tables 6 and 7).

Human score: the mean of the three experts, per trait; all 43 metrics (903 pairs).
DP: paper 001's test, i.e. nlpstats' Perm-Both (scheme "both-rowcol"), p = b / n, with
1,000 permutations (``--scheme both`` for Deutsch et al.'s cell-wise Perm-Both). RC: 1,000
random halves of the inputs. Writes a CSV with ``--out``.

    python benchmarks/summeval_dp_rc.py [--traits COH CON FLU REL] [--out table.csv]
"""

from __future__ import annotations

import argparse
import time

import pandas as pd

import bayesmeta as bm

# paper 001: Table 2 (mean over 30 datasets) and SummEval columns D1..D4 of Tables 6 / 7
PAPER_TABLE2 = pd.DataFrame(
    {"DP": [0.136, 0.339, 0.381, 0.128, 0.150, 0.149, 0.107, 0.118, 0.125, 0.168, 0.180, 0.192],
     "RC": [0.698, 0.485, 0.486, 0.768, 0.738, 0.739, 0.774, 0.770, 0.753, 0.653, 0.643, 0.618]},
    index=[f"{g}_{c}" for g in ("system", "within_item", "global", "within_system")
           for c in ("pearson", "spearman", "kendall")])
PAPER_DP_SUMMEVAL = {  # Table 6, D1 COH, D2 CON, D3 FLU, D4 REL
    "COH": [0.074, 0.137, 0.178, 0.053, 0.074, 0.074, 0.064, 0.071, 0.085, 0.135, 0.147, 0.151],
    "CON": [0.054, 0.141, 0.138, 0.064, 0.086, 0.070, 0.054, 0.114, 0.084, 0.102, 0.134, 0.147],
    "FLU": [0.148, 0.135, 0.172, 0.059, 0.096, 0.099, 0.058, 0.090, 0.096, 0.146, 0.149, 0.145],
    "REL": [0.150, 0.174, 0.228, 0.082, 0.103, 0.107, 0.079, 0.100, 0.097, 0.094, 0.106, 0.108],
}
PAPER_RC_SUMMEVAL = {  # Table 7
    "COH": [0.844, 0.695, 0.666, 0.901, 0.867, 0.862, 0.843, 0.836, 0.803, 0.679, 0.673, 0.655],
    "CON": [0.878, 0.756, 0.766, 0.876, 0.842, 0.873, 0.889, 0.765, 0.825, 0.775, 0.704, 0.673],
    "FLU": [0.673, 0.724, 0.724, 0.887, 0.824, 0.815, 0.876, 0.804, 0.789, 0.679, 0.677, 0.680],
    "REL": [0.637, 0.622, 0.603, 0.843, 0.809, 0.799, 0.791, 0.752, 0.751, 0.746, 0.730, 0.722],
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--traits", nargs="+", default=["COH", "CON", "FLU", "REL"])
    ap.add_argument("--permutations", type=int, default=1000)
    ap.add_argument("--trials", type=int, default=1000)
    ap.add_argument("--scheme", default="both-rowcol")
    ap.add_argument("--seed", type=int, default=2024)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    ds = bm.datasets.summeval()
    rows = []
    for trait in args.traits:
        t0 = time.perf_counter()
        dpr = bm.discriminative_power(
            ds, trait, resampling={"scheme": args.scheme, "n_permutations": args.permutations,
                                   "pvalue": "raw"},
            random_seed=args.seed, progress=True)
        dp = dpr.summary().join(dpr.details()).xs("discriminative_power", level="estimand")
        t1 = time.perf_counter()
        rcr = bm.ranking_consistency(ds, trait, resampling={"n_resamples": args.trials},
                                     random_seed=args.seed)
        rc = rcr.summary().join(rcr.details()).xs("ranking_consistency", level="estimand")
        t2 = time.perf_counter()
        print(f"{trait}: DP {t1 - t0:.1f} s, RC {t2 - t1:.1f} s", flush=True)
        for j, m in enumerate(PAPER_TABLE2.index):
            rows.append({"trait": trait, "measure": m, "DP": dp.loc[m, "classical"],
                         "DP_rank": dp.loc[m, "rank"], "RC": rc.loc[m, "classical"],
                         "RC_rank": rc.loc[m, "rank"], "RC_mc_se": rc.loc[m, "mc_se"],
                         "paper_DP": PAPER_DP_SUMMEVAL[trait][j],
                         "paper_RC": PAPER_RC_SUMMEVAL[trait][j]})
    out = pd.DataFrame(rows)
    with pd.option_context("display.width", 200, "display.max_rows", 200):
        print(out.round(3).to_string(index=False))
        mean = out.groupby("measure", sort=False)[["DP", "RC"]].mean()
        mean["DP_rank"] = mean["DP"].rank(method="min").astype(int)
        mean["RC_rank"] = mean["RC"].rank(ascending=False, method="min").astype(int)
        both = mean.join(PAPER_TABLE2.add_prefix("paper_table2_"))
        print("\nMean over traits, beside paper 001 Table 2 (30 datasets):")
        print(both.round(3).to_string())
        out["grouping"] = out["measure"].str.rsplit("_", n=1).str[0]
        print("\nBy grouping (mean over coefficients and traits):")
        print(out.groupby("grouping")[["DP", "RC", "paper_DP", "paper_RC"]].mean()
              .sort_values("DP").round(3).to_string())
    if args.out:
        out.to_csv(args.out, index=False)


if __name__ == "__main__":
    main()
