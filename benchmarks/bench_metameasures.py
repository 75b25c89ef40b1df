"""Speed and memory of discriminative power and ranking consistency on SummEval coherence,
against paper 001's own code path measured in the same run.

Peer: nlpstats' ``permutation_test`` loop (Deutsch et al.; paper 001 calls it for every
pair, level and coefficient with ``"both"`` and 999 permutations). PyPI nlpstats 0.0.1 has
no item level; item level is its input level on the transposed matrices (per system across
inputs), the same computation at the same cost. Needs ``pip install nlpstats`` (benchmark
only; skipped with a message when absent).

bayesmeta: the same pair with the same 12 measures and 999 permutations of the same scheme
(``"both-rowcol"``), then discriminative power over all 903 pairs with 1,000 Perm-Both
permutations (cell-wise, Deutsch et al. 2021) for the 12 measures, and ranking consistency
with 1,000 splits for 12 measures x 43 metrics. Prints wall and CPU times, the ratios and the
peak resident memory.

    python benchmarks/bench_metameasures.py [--peer-permutations 999] [--skip-peer]
"""

from __future__ import annotations

import argparse
import os
import resource
import time

import numpy as np

import bayesmeta as bm
from bayesmeta.correlation.resampling import permutation_test

LEVELS = ("system", "input", "global", "item")  # nlpstats' names (paper 001's levels)
COEFS = ("pearson", "spearman", "kendall")


def _clock():
    return time.perf_counter(), time.process_time()


def _since(t):
    w, c = _clock()
    return w - t[0], c - t[1]


def peer(x, y, z, n):
    """Paper 001's code path: nlpstats' loop for one pair, 12 measures."""
    from nlpstats.correlations.permutation import permutation_test as nlp_test

    out = {}
    for level in LEVELS:
        for coef in COEFS:
            if level == "item":  # per system across inputs = input level transposed
                res = nlp_test(x.T, y.T, z.T, "input", coef, "both", n_resamples=n)
            else:
                res = nlp_test(x, y, z, level, coef, "both", n_resamples=n)
            ours = {"input": "within_item", "item": "within_system"}.get(level, level)
            out[f"{ours}_{coef}"] = res.pvalue
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--peer-permutations", type=int, default=999)
    ap.add_argument("--skip-peer", action="store_true")
    ap.add_argument("--skip-dp", action="store_true")
    ap.add_argument("--pair", nargs=2, default=["ROUGE.1", "BertScore_f1"])
    args = ap.parse_args()
    print(f"cores visible: {len(os.sched_getaffinity(0))}; load average "
          f"{os.getloadavg()[0]:.2f} (other jobs on the machine slow both sides)")
    ds = bm.datasets.summeval()
    scores = ds["score"].isel(run=0).transpose("metric", "system", "item")
    z = ds["rating"].sel(trait="COH").mean("rater").values
    names = [str(m) for m in scores["metric"].values]
    a, b = (names.index(p) for p in args.pair)
    x, y = scores.values[a], scores.values[b]

    t = _clock()
    ours = permutation_test(np.stack([x, y]), z, scheme="both-rowcol",
                            n_permutations=args.peer_permutations, pvalue="raw",
                            random_seed=0)
    w_pair, c_pair = _since(t)
    print(f"bayesmeta, one pair ({args.pair[0]} vs {args.pair[1]}), 12 measures, "
          f"{args.peer_permutations} permutations: {w_pair:.2f} s wall, {c_pair:.2f} s CPU")
    w_peer = c_peer = None
    if not args.skip_peer:
        try:
            import nlpstats  # noqa: F401
        except ImportError:
            print("nlpstats is not installed: peer skipped (pip install nlpstats)")
        else:
            np.random.seed(0)  # noqa: NPY002 - nlpstats draws from the global generator
            t = _clock()
            ref = peer(x, y, z, args.peer_permutations)
            w_peer, c_peer = _since(t)
            print(f"paper 001 code path (nlpstats loop), same pair, 12 measures, "
                  f"{args.peer_permutations} permutations: {w_peer:.1f} s wall, "
                  f"{c_peer:.1f} s CPU")
            print(f"  same pair: bayesmeta {w_peer / w_pair:.0f}x faster (wall), "
                  f"{c_peer / c_pair:.0f}x (CPU)")
            diff = max(abs(ours["pvalue"].sel(measure=k).item() - v) for k, v in ref.items())
            print(f"  largest |p difference| over the 12 measures (Monte-Carlo + nlpstats' "
                  f"exact float ties): {diff:.3f}")
    if args.skip_dp:
        return
    t = _clock()
    dp = bm.discriminative_power(ds, "COH", resampling={"scheme": "both",
                                                        "n_permutations": 1000},
                                 random_seed=0, progress=True)
    w_dp, c_dp = _since(t)
    n_pairs = int(dp.details()["n_pairs"].max())
    print(f"discriminative power, {n_pairs} pairs x 12 measures x 1000 Perm-Both permutations: "
          f"{w_dp:.1f} s wall, {c_dp:.1f} s CPU ({w_dp / n_pairs * 1000:.0f} ms per pair)")
    if w_peer is not None:
        scale = 1000 / args.peer_permutations
        per_pair_peer = w_peer * scale
        print(f"  per metric pair: paper code path {per_pair_peer:.1f} s (scaled to 1000 "
              f"permutations) vs bayesmeta {w_dp / n_pairs:.3f} s: "
              f"{per_pair_peer / (w_dp / n_pairs):.0f}x faster (wall); CPU "
              f"{c_peer * scale / (c_dp / n_pairs):.0f}x")
    t = _clock()
    rc = bm.ranking_consistency(ds, "COH", resampling={"n_resamples": 1000}, random_seed=0)
    w_rc, c_rc = _since(t)
    print(f"ranking consistency, 1000 splits x 12 measures x 43 metrics: {w_rc:.1f} s wall, "
          f"{c_rc:.1f} s CPU")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    print(f"peak resident memory of this process: {peak:.2f} GiB")
    print(dp.summary().join(rc.summary().add_suffix("_rc")).round(3).to_string())


if __name__ == "__main__":
    main()
