"""Speed of the paper 002 sampling analyses on SFHOT, against a plain per-draw SciPy loop
measured in the same run.

* ``bm.reference_choice``: 5,000 random-reference draws for every reference-based metric of
  SFHOT (15 metrics, 875 outputs, 1 to 154 references), Spearman, without and with the
  output bootstrap; peer: one ``scipy.stats.spearmanr`` per draw (the paper's loop) on
  ``--peer-draws`` draws of one metric, scaled to the full job.
* ``bm.pre_assessment``: n in {20, 50, 100, 200} with 2,000 random subsets for all 22 metrics
  of SFHOT (no n search, then with it); peer: ``spearmanr`` per subset on ``--peer-draws``
  subsets of one metric and size, scaled.

Target (issue 12): each bayesmeta job under 10 s on 2 cores. Needs BAYESMETA_DATA with
nlgeval/. Run on an otherwise idle machine.

    python benchmarks/bench_reference_free.py [--peer-draws 300]

One run (2 cores shared with other jobs, load average 5.7, so about 3x slower than idle):
reference_choice 6.3 s (12.4 s with the output bootstrap), 2.6x the scaled SciPy loop;
pre_assessment 1.9 s (12.3 s with the n search), 14x the scaled SciPy loop.

The reference-free vs reference-based contrast of pre_assessment (issue 12) adds, with its
default 1,000 bootstrap and Bayesian-bootstrap resamples, about 5 s on SFHOT's 22 metrics
(measured 7.8 s vs 3.0 s with search=False, 2 shared cores); it is switched off here
(``resampling={"n_resamples": 0}``) so that the timing is the curve the issue asks for.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy import stats

import bayesmeta as bm


def _timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--peer-draws", type=int, default=300)
    args = ap.parse_args()
    ds = bm.datasets.nlgeval("SFHOT")
    trait = "informativeness"
    h = ds["judgment"].sel(trait=trait).values.ravel()
    based = [m for m in ds["metric"].values if bool(ds["reference_based"].sel(metric=m))]

    # --- reference choice
    _, t_rc = _timed(lambda: bm.reference_choice(ds, trait, resampling={"n_resamples": 5000},
                                                 random_seed=0,
                                                 decompose=False))
    _, t_rc2 = _timed(lambda: bm.reference_choice(ds, trait, resampling={"n_resamples": 5000},
                                                  random_seed=0))
    s = ds["score"].sel(metric=based[0]).isel(run=0).values.reshape(len(h), -1)
    nref = np.isfinite(s).sum(1)
    rng = np.random.default_rng(0)

    def peer_rc():
        for _ in range(args.peer_draws):
            j = (rng.random(len(h)) * nref).astype(int)
            stats.spearmanr(s[np.arange(len(h)), j], h)

    _, t_peer = _timed(peer_rc)
    peer_full = t_peer / args.peer_draws * 5000 * len(based)
    print(f"reference_choice, {len(based)} metrics x 5,000 draws: {t_rc:.2f} s "
          f"(with output bootstrap {t_rc2:.2f} s); SciPy loop {t_peer:.2f} s for "
          f"{args.peer_draws} draws of 1 metric -> {peer_full:.1f} s scaled; ratio "
          f"{peer_full / t_rc:.1f}x")

    # --- pre-assessment
    no_contrast = {"n_resamples": 0}  # the curve only (see the module docstring)
    _, t_pa = _timed(lambda: bm.pre_assessment(ds, trait, n=(20, 50, 100, 200),
                                               n_subsets=2000, search=False, random_seed=0,
                                               resampling=no_contrast))
    _, t_pa2 = _timed(lambda: bm.pre_assessment(ds, trait, n=(20, 50, 100, 200),
                                                n_subsets=2000, random_seed=0,
                                                resampling=no_contrast))
    x = ds["score"].sel(metric=ds["metric"].values[0]).isel(run=0, reference=0).values.ravel()

    def peer_pa():
        for n in (20, 50, 100, 200):
            for _ in range(args.peer_draws):
                idx = rng.choice(len(h), n, replace=False)
                stats.spearmanr(x[idx], h[idx])

    _, t_peer = _timed(peer_pa)
    peer_full = t_peer / args.peer_draws * 2000 * ds.sizes["metric"]
    print(f"pre_assessment, {ds.sizes['metric']} metrics x 4 sizes x 2,000 subsets: "
          f"{t_pa:.2f} s (with the n search {t_pa2:.2f} s); SciPy loop {t_peer:.2f} s for "
          f"4 x {args.peer_draws} subsets of 1 metric -> {peer_full:.1f} s scaled; ratio "
          f"{peer_full / t_pa:.1f}x")


if __name__ == "__main__":
    main()
