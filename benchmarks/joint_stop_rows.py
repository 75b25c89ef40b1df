"""Which rows of the joint metric-validity table hold a fit's stop: one simulated dataset
of the correlated-error coverage study's shape (8 systems x 30 items x 3 raters x 4 traits
x 6 metrics, error correlation 0.3), fitted through ``bm.metric_variance(...,
estimator="joint")`` with ``--sampling``; prints the draws it stopped at, the stop reason,
the convergence line and the table rows with the largest R-hat.

    python benchmarks/joint_stop_rows.py --seed 1058 --sampling '{"draws": 250}'
        [--compile-first 1040]

``--compile-first SEED`` first compiles the model on another dataset of the shape (as a
study's process has, fitting seeds in order). Up to stop 44 this changed the draws (the
cached model kept the first dataset's threshold anchors); stop 45 made the anchors data,
so the output no longer depends on it. Stop 44's seed 1058 with ``--compile-first 1040``
and ``{"draws": 250}`` stopped at 250 draws with ``other_traits_share[metric06.CON]`` at
R-hat 1.0140 (the stopping rule then read the coefficients and error shares only).
"""

from __future__ import annotations

import argparse
import json
import os
import warnings

import pandas as pd

import bayesmeta as bm
from bayesmeta.validity.joint_simulate import simulate_joint_validity

TRAITS = ("COH", "CON", "FLU", "REL")
MODEL = "\n".join(f"{t.lower()} =~ " + " + ".join(f"Rater.{r}.{t}" for r in (1, 2, 3))
                  for t in TRAITS)


def dataset(seed: int):
    return simulate_joint_validity(seed, n_systems=8, n_items=30, n_traits=4, n_metrics=6,
                                   error_corr=0.3)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=1058)
    ap.add_argument("--sampling", type=json.loads, default=None, metavar="JSON")
    ap.add_argument("--compile-first", type=int, default=None, metavar="SEED")
    ap.add_argument("--rows", type=int, default=8)
    args = ap.parse_args()
    if args.compile_first is not None:
        from bayesmeta.sampling import CompileOnly, compile_only

        try:
            with compile_only():
                bm.metric_variance(dataset(args.compile_first), MODEL, estimator="joint",
                                   residuals="correlated", random_seed=1)
        except CompileOnly:
            pass
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = bm.metric_variance(dataset(args.seed), MODEL, estimator="joint",
                                 residuals="correlated", random_seed=args.seed,
                                 sampling=args.sampling)
    post = res.idata.posterior
    print(f"seed {args.seed}, sampling {args.sampling or 'defaults'}, compiled first on "
          f"{args.compile_first}; load {os.getloadavg()[0]:.2f}")
    print(f"stopped at {post.sizes['draw']} draws per chain ({post.attrs.get('stop_reason')})")
    print(f"convergence: {res.info['convergence']}")
    print(f"warnings: {[str(w.message)[:120] for w in caught]}")
    with pd.option_context("display.width", 160):
        print(res.summary().sort_values("r_hat", ascending=False)
              .head(args.rows)[["mean", "r_hat", "ess_bulk", "ess_tail"]].to_string())


if __name__ == "__main__":
    main()
