"""CPU milliseconds per log-density-and-gradient evaluation of SummEval's rater model: the
ordinal likelihood as one kernel Op (``bayesmeta._interval``, the default) against the
PyTensor graph it replaced (``log_interval_prob(lower, upper).sum()``), both compiled by
PyTensor's numba backend as nutpie compiles them, at the same point.

CPU time of this process (``time.process_time``), not wall time, so that other jobs on the
machine distort the ratio little; the load average is printed beside it.

    python benchmarks/bench_interval_kernel.py [--reps 200]
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np

import bayesmeta as bm


def _function(model):
    f = model.logp_dlogp_function(ravel_inputs=True, mode="NUMBA")
    f.set_extra_values({})
    ip = model.initial_point()
    return f, np.concatenate([np.asarray(ip[v.name]).ravel() for v in f._grad_vars])


def main() -> None:
    import bayesmeta._ordinal as O
    from bayesmeta.raters import model as rm

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=200)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    d = rm.rater_design(bm.datasets.summeval())
    new = rm.build_rater_model(d)
    kernel_sum = O.log_interval_prob_sum
    O.log_interval_prob_sum = lambda lo, hi: O.log_interval_prob(lo, hi).sum()
    try:
        old = rm.build_rater_model(d)
    finally:
        O.log_interval_prob_sum = kernel_sum
    (f_old, x), (f_new, _) = _function(old), _function(new)
    rng = np.random.default_rng(0)
    x = x + rng.normal(scale=0.1, size=x.size)
    (lp_o, g_o), (lp_n, g_n) = f_old(x), f_new(x)
    print(f"{d.n_obs} ratings; log density {lp_o:.6f} (graph) {lp_n:.6f} (kernel); "
          f"max |gradient difference| {np.abs(g_o - g_n).max():.1e}")
    for _ in range(3):
        ms = {}
        for label, f in (("graph", f_old), ("kernel", f_new)):
            t0 = time.process_time()
            for _ in range(args.reps):
                f(x)
            ms[label] = (time.process_time() - t0) / args.reps * 1e3
        print(f"CPU ms per evaluation: graph {ms['graph']:.2f}, kernel {ms['kernel']:.2f}, "
              f"ratio {ms['graph'] / ms['kernel']:.2f}; load {os.getloadavg()}", flush=True)


if __name__ == "__main__":
    main()
