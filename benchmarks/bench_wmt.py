"""Time of the WMT statistics on SummEval (17 systems x 100 items x 43 metrics) and on
synthetic campaigns of growing size (one language pair), with the load average beside each
time (timings under load are not claims).

Usage::

    nice python benchmarks/bench_wmt.py [n_resamples] [n_permutations]

Appends JSON lines to ``benchmarks/results/bench_wmt.jsonl``.
"""

from __future__ import annotations

import json
import os
import sys
import time
import tracemalloc
from pathlib import Path

import bayesmeta as bm
from bayesmeta.wmt.simulate import simulate_campaign

OUT = Path(__file__).parent / "results" / "bench_wmt.jsonl"


def _run(label: str, fn, cells: int) -> dict:
    tracemalloc.start()
    t0 = time.perf_counter()
    fn()
    sec = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    rec = {"benchmark": "bench_wmt", "case": label, "cells": cells, "seconds": round(sec, 2),
           "peak_mib": round(peak / 2**20, 1), "loadavg": os.getloadavg(),
           "bayesmeta": bm.__version__}
    print(json.dumps(rec), flush=True)
    OUT.parent.mkdir(exist_ok=True)
    with OUT.open("a") as f:
        f.write(json.dumps(rec) + "\n")
    return rec


def main(n_res: int = 200, n_perm: int = 1000) -> None:
    opts = {"n_resamples": n_res, "n_permutations": n_perm}
    se = bm.datasets.summeval(download=False)
    cells = 17 * 100 * 43
    _run(f"summeval spa R={n_res} P={n_perm}",
         lambda: bm.soft_pairwise_accuracy(se, "COH", resampling=opts), cells)
    _run(f"summeval pdp R={n_res}",
         lambda: bm.pairwise_difference_pearson(se, "COH", resampling=opts), cells)
    _run(f"summeval kendall_like R={n_res}",
         lambda: bm.kendall_like(se, "COH", threshold=1, resampling=opts), cells)
    _run(f"summeval williams R={n_res}",
         lambda: bm.williams_test(se, "COH", resampling=opts), cells)
    _run(f"summeval clusters system_pearson P={n_perm}",
         lambda: bm.significance_clusters(se, "COH", resampling=opts), cells)
    for n_sys, n_items, n_metrics in ((10, 100, 10), (20, 250, 10), (20, 500, 20),
                                      (20, 1000, 20)):
        ds = simulate_campaign(n_sys, n_items, n_metrics, random_seed=0)
        _run(f"campaign {n_sys}x{n_items}x{n_metrics} spa+pdp+kendall_like R={n_res}",
             lambda ds=ds: [bm.soft_pairwise_accuracy(ds, "quality", resampling=opts),
                            bm.pairwise_difference_pearson(ds, "quality", resampling=opts),
                            bm.kendall_like(ds, "quality", resampling=opts)],
             n_sys * n_items * n_metrics)


if __name__ == "__main__":
    main(*[int(a) for a in sys.argv[1:]])
