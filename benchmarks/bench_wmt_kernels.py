"""Old against new WMT kernels on one full-size language pair, back to back (issue 25).

One language pair of the WMT-sized campaign
(``simulate_language_pairs(1, 20, 1500, 40)``: 20 systems x 1,500 segments x 40 metrics)
through :func:`bayesmeta.wmt.scale.language_pair_draws` with the default WMT measures and
SPA (1,000 permutations), ``--n-resamples`` bootstrap resamples and as many
Bayesian-bootstrap draws (default 50), once with the code of ``--baseline`` (a git ref,
default the merge that brought ``wmt_statistics``, before the kernels of the branch
``wmt-kernels``; extracted with ``git archive`` to a temporary folder) and once with this
checkout, each in a fresh single-threaded subprocess (``n_jobs=1``, BLAS on one thread),
one right after the other. Prints wall and CPU seconds of each, their ratio, the load
average, and the largest difference between the two runs' numbers (expected below 1e-12),
and appends a JSON line to ``benchmarks/results/bench_wmt_kernels.jsonl``.

The machine is shared: only the ratio of two runs made back to back means anything, and
CPU seconds (``time.process_time``) are steadier than wall seconds under load.

Usage::

    python benchmarks/bench_wmt_kernels.py                 # 50 resamples, both codes
    python benchmarks/bench_wmt_kernels.py --n-resamples 5  # a quick check
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
BASELINE = "426bc62"
OUT = ROOT / "benchmarks" / "results" / "bench_wmt_kernels.jsonl"
_ENV = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def child(n_resamples: int, n_permutations: int, draws: str) -> None:
    """Time one language pair in this process with the bayesmeta on sys.path."""
    import bayesmeta
    from bayesmeta.wmt.scale import WMT_MEASURES, language_pair_draws
    from bayesmeta.wmt.simulate import simulate_language_pairs

    ds = simulate_language_pairs(1, 20, 1500, 40, random_seed=0).isel(lp=0)
    metrics = [str(m) for m in ds["metric"].values]
    load0 = os.getloadavg()
    w0, c0 = time.perf_counter(), time.process_time()
    out, _, _ = language_pair_draws(ds, "quality", metrics, None, "first", list(WMT_MEASURES),
                                    n_resamples, "both", n_permutations, 1, 12345)
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    np.save(draws, out)
    print(json.dumps({"wall_s": wall, "cpu_s": cpu, "load_before": load0,
                      "load_after": os.getloadavg(), "package": bayesmeta.__file__}))


def run(src: Path, n_resamples: int, n_permutations: int, draws: str) -> dict:
    env = {**os.environ, **_ENV, "PYTHONPATH": str(src)}
    cmd = [sys.executable, __file__, "--child", "--n-resamples", str(n_resamples),
           "--n-permutations", str(n_permutations), "--draws", draws]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True,
                          cwd=tempfile.gettempdir())
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n-resamples", type=int, default=50)
    p.add_argument("--n-permutations", type=int, default=1000)
    p.add_argument("--baseline", default=BASELINE)
    p.add_argument("--child", action="store_true")
    p.add_argument("--draws", default="")
    args = p.parse_args()
    if args.child:
        child(args.n_resamples, args.n_permutations, args.draws)
        return
    with tempfile.TemporaryDirectory() as tmp:
        old_src = Path(tmp) / "baseline"
        old_src.mkdir()
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.baseline,
                                  "bayesmeta"], capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(old_src)], input=archive, check=True)
        res = {}
        for name, src in (("old", old_src), ("new", ROOT)):
            res[name] = run(src, args.n_resamples, args.n_permutations,
                            str(Path(tmp) / f"{name}.npy"))
            print(f"{name}: {res[name]['wall_s']:.1f} s wall, {res[name]['cpu_s']:.1f} s CPU "
                  f"(load {res[name]['load_before'][0]:.1f})", flush=True)
        a, b = np.load(Path(tmp) / "old.npy"), np.load(Path(tmp) / "new.npy")
    same_nan = bool(np.array_equal(np.isnan(a), np.isnan(b)))
    diff = float(np.nanmax(np.abs(a - b)))
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    line = {
        "benchmark": "bench_wmt_kernels", "time_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                                     time.gmtime()),
        "commit": commit, "baseline": args.baseline, "size": "1 lp x 20 x 1500 x 40",
        "n_resamples": args.n_resamples, "n_permutations": args.n_permutations,
        "old": res["old"], "new": res["new"],
        "ratio_wall": res["old"]["wall_s"] / res["new"]["wall_s"],
        "ratio_cpu": res["old"]["cpu_s"] / res["new"]["cpu_s"],
        "max_abs_diff": diff, "same_nan": same_nan,
        "cpu_s_per_resample_new": res["new"]["cpu_s"] / (2 * max(1, args.n_resamples)),
        "note": "shared machine: only the ratio of these two back-to-back runs is meaningful",
    }
    print(f"ratio old/new: {line['ratio_wall']:.2f} (wall), {line['ratio_cpu']:.2f} (CPU); "
          f"max |old - new| = {diff:.2e}, NaNs equal: {same_nan}")
    OUT.parent.mkdir(exist_ok=True)
    with OUT.open("a") as f:
        f.write(json.dumps(line) + "\n")


if __name__ == "__main__":
    main()
