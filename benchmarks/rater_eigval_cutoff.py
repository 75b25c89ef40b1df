"""The rater model's low-rank mass matrix: ESS per gradient evaluation by eigenvalue cutoff.

nutpie's low-rank mass-matrix adaptation corrects only the directions whose estimated
posterior variance differs from the diagonal's by more than ``mass_matrix_eigval_cutoff``
(default 100). This script samples one trait of SummEval with the rater model's default
build, 300 tuning iterations and a fixed number of draws (4 chains), once per cutoff and
seed, and prints one JSON line per fit: worst R-hat and lowest bulk and tail ESS over the
reported quantities (``derived_quantities``, the rows of ``bm.rater_bias(...).summary()``),
where they fall, divergences, gradient evaluations (nutpie's ``n_steps``) and bulk ESS per
1,000 of them. The cutoff changes the sampler only, not the posterior. The model is
compiled once per process; a fit equals ``bm.rater_bias(data, traits=[trait],
random_seed=seed, sampling={"adaptive": False, "draws": draws, "eigval_cutoff": cutoff})``
(checked on coherence, seed 1, cutoffs 100 and 10: the same ESS to every digit).

Run (stop 46; ``benchmarks/results/rater_eigval_cutoff.jsonl``)::

    python benchmarks/rater_eigval_cutoff.py COH 100,10,3 1,2 >> results.jsonl
    python benchmarks/rater_eigval_cutoff.py COH 5,2,10,3,100 3,4 >> results.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import time
import warnings

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("trait")
    ap.add_argument("cutoffs", help="comma-separated eigenvalue cutoffs (> 1)")
    ap.add_argument("seeds", help="comma-separated seeds")
    ap.add_argument("--tune", type=int, default=300)
    ap.add_argument("--draws", type=int, default=1000)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    import nutpie

    import bayesmeta as bm
    from bayesmeta.raters._model_build import build_rater_model, rater_design
    from bayesmeta.raters._model_derived import derived_quantities
    from bayesmeta.raters.model import LATENT_QUALITY, _reported
    from bayesmeta.summaries import diagnose

    design = rater_design(bm.datasets.summeval()).subset(args.trait)
    model = build_rater_model(design)
    trace = [v.name for v in (*model.free_RVs, *model.deterministics)
             if v.name not in LATENT_QUALITY]
    compiled = nutpie.compile_pymc_model(model, var_names=trace)
    for seed in (int(s) for s in args.seeds.split(",")):
        for cutoff in (float(c) for c in args.cutoffs.split(",")):
            t0, c0 = time.perf_counter(), time.process_time()
            idata = nutpie.sample(compiled, draws=args.draws, tune=args.tune, chains=4,
                                  cores=4, seed=seed, progress_bar=False,
                                  low_rank_modified_mass_matrix=True,
                                  mass_matrix_eigval_cutoff=cutoff)
            seconds = time.perf_counter() - t0
            diag = diagnose(derived_quantities(idata.posterior, design)[_reported(True)])

            def worst(suffix: str, largest: bool, diag=diag) -> tuple[float, str]:
                vals = {k[:-len(suffix)]: float((np.nanmax if largest else np.nanmin)(diag[k]))
                        for k in diag.data_vars if k.endswith(suffix)}
                key = (max if largest else min)(vals, key=vals.get)
                return vals[key], key

            (rh, rk), (eb, ek), (et, tk) = (worst("__r_hat", True),
                                            worst("__ess_bulk", False),
                                            worst("__ess_tail", False))
            st = idata.sample_stats
            grads = float(st["n_steps"].sum())
            print(json.dumps({
                "trait": args.trait, "cutoff": cutoff, "seed": seed, "tune": args.tune,
                "draws": args.draws, "max_r_hat": rh, "where_r_hat": rk, "min_ess_bulk": eb,
                "where_bulk": ek, "min_ess_tail": et, "where_tail": tk,
                "divergences": int(st["diverging"].sum()), "gradients": grads,
                "bulk_per_1000_grads": 1000 * eb / grads,
                "mean_depth": float(st["depth"].mean()), "sample_s": seconds,
                "cpu_s": time.process_time() - c0, "load": os.getloadavg()[0]}), flush=True)


if __name__ == "__main__":
    main()
