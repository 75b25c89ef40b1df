"""Where the SummEval four-factor CFA's compile time goes in a fresh process (issue 19):
PyTensor's graph functions (``_make_functions``), nutpie's two numba C callbacks (the
log density with its gradient, and the expansion to the stored quantities), and, for
scale, the GHK likelihood kernels alone. CPU and wall seconds, the load average beside
them; PyTensor's numba disk cache is left as it is (run twice to see a warm cache).

    python benchmarks/bench_cfa_compile.py

Each numba C callback is compiled with LLVM over the whole linked module (every PyTensor
function it calls included), in every process: the callbacks close over the model's data
("dynamic globals"), which numba does not cache on disk, so a warm PyTensor cache saves
the typing of the pieces but not this code generation.
"""

from __future__ import annotations

import os
import time
import warnings

import numpy as np
from bench_bayes_defaults import FOUR


def _clock() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def _since(t: tuple[float, float]) -> str:
    w, c = _clock()
    return f"wall {w - t[0]:6.1f} s  cpu {c - t[1]:6.1f} s  (load {os.getloadavg()[0]:.2f})"


def main() -> None:
    warnings.simplefilter("ignore")
    import numba
    import nutpie.compile_pymc as cp

    import bayesmeta as bm
    from bayesmeta.sampling import _compiled_nutpie
    from bayesmeta.validity import _cfa_setup as setup
    from bayesmeta.validity import _ghk

    rows: list[str] = []

    make_functions, cfunc = cp._make_functions, numba.cfunc

    def timed_make(*args, **kwargs):
        t = _clock()
        out = make_functions(*args, **kwargs)
        rows.append(f"PyTensor functions (_make_functions)   {_since(t)}")
        return out

    def timed_cfunc(sig, **kwargs):
        decorate = cfunc(sig, **kwargs)

        def wrap(fn):
            t = _clock()
            out = decorate(fn)
            rows.append(f"numba C callback {fn.__name__:<22}{_since(t)}")
            return out
        return wrap

    cp._make_functions, numba.cfunc = timed_make, timed_cfunc
    try:
        _, _, design = setup.setup(FOUR, bm.datasets.summeval())
        model = setup.model_for(design)
        t = _clock()
        _compiled_nutpie(model, None, "numba")
        rows.append(f"whole compile (as bm.cfa)              {_since(t)}")
    finally:
        cp._make_functions, numba.cfunc = make_functions, cfunc
    # the GHK kernels again, as new numba functions (the model's are compiled by now)
    t = _clock()
    _, value_grad = _ghk._kernels.__wrapped__()
    L, u = np.eye(3), np.full((4, 3), 0.5)
    cuts = np.array([[-50.0, -1.0, 0.0, 1.0, 50.0]] * 3)
    lo = np.zeros((4, 3), dtype=np.int64)
    value_grad(L, cuts, lo, lo + 1, u, np.zeros((4, 3)), False)
    rows.append(f"GHK kernels alone, for scale           {_since(t)}")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
