"""CPU milliseconds per log-density-and-gradient evaluation of the SummEval four-factor
ordinal CFA (the default augmented model, compiled by PyTensor's numba backend as nutpie
compiles it), this checkout against another git revision measured in the same run.

Each side runs in its own process (the numba kernels compile once per process), the two
alternating ``--rounds`` times; each process times ``--blocks`` blocks of 60 evaluations at
one fixed point and prints the fastest and the median block. CPU time of the process
(``time.process_time``), so that other jobs distort the ratio little; the load average is
printed beside every number.

    python benchmarks/bench_cfa_gradient.py --against d334fc9 [--rounds 2]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _time_here(blocks: int) -> None:
    import time
    import warnings

    import numpy as np

    # the benchmarks' shared pieces: the four-factor model and the compiled function at
    # the initial point (this folder is sys.path[0]: the script runs from here)
    from bench_bayes_defaults import FOUR
    from bench_interval_kernel import _function

    import bayesmeta as bm
    from bayesmeta.validity import _cfa_setup as setup

    warnings.simplefilter("ignore")
    here = Path(os.environ["PYTHONPATH"]).resolve()
    if not Path(bm.__file__).resolve().is_relative_to(here):
        raise RuntimeError(f"imported {bm.__file__}, not the checkout at {here}")
    _, _, design = setup.setup(FOUR, bm.datasets.summeval())
    f, x = _function(setup.model_for(design))
    x = x + np.random.default_rng(0).normal(scale=0.3, size=x.size)
    f(x)
    ms = []
    for _ in range(blocks):
        c0 = time.process_time()
        for _ in range(60):
            f(x)
        ms.append(1000 * (time.process_time() - c0) / 60)
    print(f"{min(ms):.3f} {float(np.median(ms)):.3f} {os.getloadavg()[0]:.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--against", help="git revision to compare with (its own worktree)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--blocks", type=int, default=5)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        _time_here(args.blocks)
        return
    if not args.against:
        ap.error("--against REV is required")
    from bayesmeta.data.datasets import data_home

    home = data_home()
    if home is None:
        raise SystemExit("SummEval not found: set BAYESMETA_DATA (see ../shared/data).")
    with tempfile.TemporaryDirectory() as tmp:
        wt = Path(tmp) / "peer"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(wt),
                        args.against], check=True, capture_output=True)
        try:
            sides = {"this checkout": ROOT, args.against: wt}
            rows: dict[str, list[list[float]]] = {k: [] for k in sides}
            for _ in range(args.rounds):
                for name, path in sides.items():
                    env = {**os.environ, "PYTHONPATH": str(path),
                           "BAYESMETA_DATA": str(home.resolve())}
                    out = subprocess.run([sys.executable, str(Path(__file__).resolve()),
                                          "--child", "--blocks", str(args.blocks)],
                                         env=env, cwd=tmp, check=True, capture_output=True,
                                         text=True).stdout.split()
                    rows[name].append([float(v) for v in out])
                    print(f"{name:>14}: fastest {out[0]} ms, median {out[1]} ms "
                          f"(load {out[2]})", flush=True)
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force",
                            str(wt)], check=False, capture_output=True)
    new = min(r[0] for r in rows["this checkout"])
    old = min(r[0] for r in rows[args.against])
    print(f"fastest block: {args.against} {old:.2f} ms, this checkout {new:.2f} ms, "
          f"ratio {old / new:.2f}")


if __name__ == "__main__":
    main()
