"""Does a model compile once per shape *across processes*? (issue 19, item 2)

nutpie compiles a PyMC model through PyTensor's numba backend, which caches the kernels of
every operation on disk (``pytensor.config.numba__cache``, under PyTensor's
``compiledir``). This script builds and compiles the SummEval rater model (one trait) and
the four-factor Bayesian ordinal CFA in two fresh processes that share an empty cache
directory, and prints the compile seconds of each (the first process fills the cache, the
second reads it) with the ratio, and the load average beside every time::

    python benchmarks/bench_compile_cache.py

Only compiling is timed (no sampling). Each process runs alone (one after the other).
One JSON line per run is appended to ``--out`` (default
``benchmarks/results/compile_cache.jsonl``): ``when``, ``commit``, and the ``cold`` and
``warm`` processes' build and compile seconds with the load average.

Run it from a fresh copy of the package for a first process on a new machine: the GHK
kernels of the ordinal models keep their numba cache in the package's ``__pycache__``.
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

from bench_bayes_defaults import _commit  # this folder is sys.path[0]: the script runs here

OUT = Path(__file__).resolve().parent / "results" / "compile_cache.jsonl"

CHILD = r"""
import json, os, time, warnings
warnings.simplefilter("ignore")
import bayesmeta as bm
from bayesmeta.sampling import _compiled_nutpie
from bayesmeta.raters._model_build import build_rater_model, rater_design
from bayesmeta.validity._cfa_setup import model_for, setup
data = bm.datasets.summeval()
out = {}
design = rater_design(data, traits=["COH"])
t = time.perf_counter(); m = build_rater_model(design); build = time.perf_counter() - t
_, sec = _compiled_nutpie(m)
out["rater"] = {"build": build, "compile": sec}
syntax = "\n".join(f"{t.lower()} =~ " + " + ".join(f"Expert.{r}.{t}" for r in (1, 2, 3))
                   for t in ("COH", "CON", "FLU", "REL"))
_, _, cfa_design = setup(syntax, data)
t = time.perf_counter(); m = model_for(cfa_design, parameterization="%s")
build = time.perf_counter() - t
_, sec = _compiled_nutpie(m)
out["cfa"] = {"build": build, "compile": sec}
out["load"] = [round(x, 2) for x in os.getloadavg()]
print(json.dumps(out))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    commit = _commit()
    with tempfile.TemporaryDirectory() as cache:
        # base_compiledir, not compiledir: PyTensor keeps its numba cache beside the
        # compiledir, under base_compiledir/numba (until stop 43 this script moved only the
        # compiledir, so its "cold" processes read a warm numba cache)
        env = {**os.environ, "PYTENSOR_FLAGS": f"base_compiledir={cache}"}
        runs = []
        for label in ("cold cache", "warm cache"):
            res = subprocess.run([sys.executable, "-c", CHILD % "augmented"],
                                 env=env, capture_output=True, text=True, check=True)
            runs.append(json.loads(res.stdout.strip().splitlines()[-1]))
            print(label, runs[-1])
    for model in ("rater", "cfa"):
        cold, warm = runs[0][model]["compile"], runs[1][model]["compile"]
        print(f"{model}: compile {cold:.1f} s in a fresh process with an empty cache, "
              f"{warm:.1f} s in the next process (ratio {cold / warm:.1f}x); "
              f"load {runs[0]['load']} / {runs[1]['load']}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("a") as fh:
        fh.write(json.dumps({"when": time.strftime("%Y-%m-%dT%H:%M"), "commit": commit,
                             "cold": runs[0], "warm": runs[1]}) + "\n")


if __name__ == "__main__":
    main()
