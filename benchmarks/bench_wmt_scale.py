"""Time and peak memory of a whole WMT campaign (:func:`bayesmeta.wmt_statistics`: system
and global Pearson r, system and within-item tie-calibrated accuracy, SPA; classical, 1,000
bootstrap resamples and 1,000 Bayesian-bootstrap draws per language pair) against the
number of metric-score cells, up to a WMT campaign's size (16 language pairs x 20 systems x
1,500 segments x 40 metrics = 19.2 million cells), on dask; and the same run on a
``dask.distributed.LocalCluster`` of two workers, whose numbers must equal the local run's.

Each size runs in a fresh subprocess (``--child``): the campaign is simulated lazily
(:func:`bayesmeta.wmt.simulate.simulate_language_pairs` with ``lazy=True``, one dask chunk
per language pair), so memory holds the language pairs being computed only. Peak memory is
the subprocess's ``ru_maxrss`` and, sampled every 0.1 s with psutil, the largest total
resident memory of the subprocess and its descendants (the cluster's worker processes);
tracemalloc would miss NumPy buffers allocated in dask's threads and workers.

Usage (the full, quiet-machine run: nothing else running, 2 cores)::

    python benchmarks/bench_wmt_scale.py --sizes all --draws-dir /tmp/wmt_scale
    python benchmarks/bench_wmt_scale.py --sizes full --cluster --draws-dir /tmp/wmt_scale

The first line gives the curve (five sizes, local ``threads`` scheduler) and keeps each
size's draws; the second runs the full campaign on a LocalCluster of two single-threaded
worker processes and compares it with the kept local draws (``max_abs_diff``, expected 0)
without rerunning the local one. ``--cluster`` without ``--draws-dir`` runs the local and
the cluster run of every size in turn.

**Measured on the project's 2-core machine with nothing else running** (2026-11-26, commit
b760af8, load average 1.0-1.8 from this run itself; ``benchmarks/results/
bench_wmt_scale.jsonl``): the full campaign (19.2 million cells, five statistics, 1,000
bootstrap resamples and 1,000 Bayesian-bootstrap draws each) in **347 s, peak resident
memory 1.0 GiB**; the curve: 0.12 M cells 9 s, 0.24 M 11 s, 1.2 M 32 s, 4.8 M 113 s, 19.2 M
347 s (linear in the cells beyond the fixed cost of starting a process). A second seed
(``--sizes full --seed 7``, commit 96bdde2, load 0.6 at start): 340 s, 0.95 GiB. Before that commit,
SPA recomputed its permutation p-values in every resample of systems although a resample of
systems only reweights the system pairs: the same sizes took 37, 45, 128 and 384 s (3.4 to
4 times longer) on the same quiet machine the same hour, and the full size was stopped.
The full campaign on a LocalCluster of two single-threaded worker processes: 577 s, 1.27
GiB resident over the workers, and the same numbers as the local run (``max_abs_diff``
0.0, the same NaN pattern).

``--sizes tiny,xs`` runs the two smallest sizes only (a check that the script works);
``--n-resamples``/``--n-permutations`` change the resamples (default 1,000 each);
``--scheduler`` the local dask scheduler (``threads``, default; ``synchronous``;
``processes``; ``none`` for the plain loop).

Appends one JSON line per run to ``benchmarks/results/bench_wmt_scale.jsonl``: size,
cells, seconds, peak memory, load average at start and end, scheduler, versions. Timings
taken while other jobs run are not claims: compare ``loadavg_start``/``loadavg_end`` with
the number of cores.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

OUT = Path(__file__).parent / "results" / "bench_wmt_scale.jsonl"
#: name -> (language pairs, systems, items, metrics); cells grow 120k -> 19.2M.
SIZES = {
    "tiny": (2, 20, 75, 40),
    "xs": (2, 20, 150, 40),
    "s": (4, 20, 375, 40),
    "m": (8, 20, 750, 40),
    "full": (16, 20, 1500, 40),
    "lp1": (1, 20, 1500, 40),     # one full-size language pair (not in "all"): the probe
}
#: The sizes of ``--sizes all`` (the curve).
CURVE = ("tiny", "xs", "s", "m", "full")


class PeakMemory:
    """Largest resident memory (MiB) of this process plus its descendants, sampled."""

    def __init__(self, every: float = 0.1) -> None:
        import psutil

        self.proc, self.every, self.peak = psutil.Process(), every, 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        import psutil

        while not self._stop.is_set():
            total = 0
            try:
                procs = [self.proc, *self.proc.children(recursive=True)]
                for p in procs:
                    try:
                        total += p.memory_info().rss
                    except psutil.Error:
                        pass
            except psutil.Error:
                pass
            self.peak = max(self.peak, total / 2**20)
            self._stop.wait(self.every)

    def __enter__(self) -> PeakMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def child(args: argparse.Namespace) -> None:
    """One size, one scheduler, in this fresh process: print one JSON record."""
    import numpy as np

    import bayesmeta as bm
    from bayesmeta.wmt.simulate import simulate_language_pairs

    L, S, I, M = SIZES[args.child]
    load0 = os.getloadavg()
    opts = {"n_resamples": args.n_resamples, "n_permutations": args.n_permutations,
            "n_jobs": 1}
    data = simulate_language_pairs(L, S, I, M, random_seed=args.seed, lazy=True)
    client = cluster = None
    if args.mode == "cluster":
        from dask.distributed import Client, LocalCluster

        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                               dashboard_address=":0")
        client = Client(cluster)
        scheduler, label = client, "LocalCluster(n_workers=2, threads_per_worker=1)"
    else:
        scheduler = None if args.scheduler == "none" else args.scheduler
        label = args.scheduler
    with PeakMemory() as peak:
        t0 = time.perf_counter()
        res = bm.wmt_statistics(data, "quality", random_seed=args.seed, resampling=opts,
                                scheduler=scheduler)
        sec = time.perf_counter() - t0
    if client is not None:
        client.close()
        cluster.close()
    np.savez(args.save, summary=res.summary().to_numpy(float),
             bootstrap=res.extra["bootstrap"].values if "bootstrap" in res.extra else [],
             posterior=res.extra["posterior"].values if "posterior" in res.extra else [])
    import dask

    rec = {"benchmark": "bench_wmt_scale", "size": args.child, "language_pairs": L,
           "systems": S, "items": I, "metrics": M, "cells": L * S * I * M,
           "statistics": sorted(set(res.summary().index.get_level_values("estimand"))),
           "n_resamples": args.n_resamples, "n_permutations": args.n_permutations,
           "scheduler": label, "seconds": round(sec, 2),
           "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
           "peak_rss_tree_mib": round(peak.peak, 1),
           "loadavg_start": [round(v, 2) for v in load0],
           "loadavg_end": [round(v, 2) for v in os.getloadavg()],
           "cpu_count": os.cpu_count(), "bayesmeta": bm.__version__,
           "dask": dask.__version__, "python": sys.version.split()[0],
           "commit": _commit()}
    print(json.dumps(rec), flush=True)


def _commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, cwd=Path(__file__).parent, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def _spawn(size: str, mode: str, args: argparse.Namespace, save: Path) -> dict:
    cmd = [sys.executable, __file__, "--child", size, "--mode", mode, "--save", str(save),
           "--n-resamples", str(args.n_resamples), "--n-permutations",
           str(args.n_permutations), "--scheduler", args.scheduler, "--seed", str(args.seed)]
    env = dict(os.environ)
    if mode == "cluster" or args.scheduler in ("threads", "processes"):
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            env[var] = "1"   # the cores go to dask's workers, not to BLAS threads in each
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="all",
                    help=f"comma-separated of {', '.join(SIZES)}, or 'all' ({', '.join(CURVE)})")
    ap.add_argument("--cluster", action="store_true",
                    help="also run each size on a LocalCluster of two workers and compare")
    ap.add_argument("--scheduler", default="threads",
                    choices=["threads", "synchronous", "processes", "none"])
    ap.add_argument("--n-resamples", type=int, default=1000)
    ap.add_argument("--n-permutations", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=2025)
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--draws-dir", help="keep each run's summary and draws here (.npz); with "
                    "--cluster, a size whose local draws are already there is not rerun "
                    "locally")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--mode", default="local", help=argparse.SUPPRESS)
    ap.add_argument("--save", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args)
        return
    import numpy as np

    sizes = list(CURVE) if args.sizes == "all" else args.sizes.split(",")
    unknown = [s for s in sizes if s not in SIZES]
    if unknown:
        raise SystemExit(f"unknown size(s) {unknown}; choose from {', '.join(SIZES)}")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        keep = Path(args.draws_dir) if args.draws_dir else Path(tmp)
        keep.mkdir(parents=True, exist_ok=True)
        for size in sizes:
            tag = f"{size}-R{args.n_resamples}-P{args.n_permutations}-seed{args.seed}"
            local, clus = keep / f"{tag}-local.npz", keep / f"{tag}-cluster.npz"
            recs = []
            if not (args.cluster and args.draws_dir and local.exists()):
                recs.append(_spawn(size, "local", args, local))
            if args.cluster:
                rec = _spawn(size, "cluster", args, clus)
                a, b = np.load(local), np.load(clus)
                rec["max_abs_diff"] = max(
                    float(np.nanmax(np.abs(a[k] - b[k]))) if np.size(a[k]) else 0.0
                    for k in ("summary", "bootstrap", "posterior"))
                rec["nan_pattern_equal"] = all(
                    bool(np.array_equal(np.isnan(a[k]), np.isnan(b[k])))
                    for k in ("summary", "bootstrap", "posterior"))
                recs.append(rec)
            for rec in recs:
                print(json.dumps(rec), flush=True)
                with out.open("a") as f:
                    f.write(json.dumps(rec) + "\n")

if __name__ == "__main__":
    main()
