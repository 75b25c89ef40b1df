"""Speed of paper 003's corroboration statistics (issue 13) on SummEval, all 43 metrics.

Targets (2 cores): 1,000 random sets for each size 2, 3, 5, 10, 20 with R, H, S, the
threshold curves of every metric and the reliability gain in under 30 s; 1,000
Bayesian-bootstrap draws of all of it in under 5 min.

Peer, timed in the same run: the direct per-pair loop of the paper's definitions (the loop
of ``tests/test_corroboration.py``) for R, S and H on a subset of the sets, extrapolated
per set; the ratio compares like with like (R, S, H only; the loop's threshold curves
would cost a pass over the pairs per threshold and are not timed).

Part 4 (``--k4``) checks the recommender: greedy forward selection against the exhaustive
search over every set of up to 4 metrics (137,643 sets), one trait.

Run: ``BAYESMETA_DATA=/path/to/shared/data python benchmarks/bench_corroboration.py
[--draws 1000] [--k4]``. Wall and CPU seconds are printed: on a shared machine the wall time
says little; CPU seconds / 2 is the wall time on two idle cores (the work is BLAS-bound and
uses both).
"""

from __future__ import annotations

import sys
import time

import numpy as np

import bayesmeta as bm
from bayesmeta.corroboration import classical as cor
from bayesmeta.corroboration import heterogeneity as het
from bayesmeta.data import select


def loop_stats(x: np.ndarray, q: np.ndarray, X: list[int]) -> tuple[float, float, float]:
    """R, S, H of set X by a plain loop over the ordered pairs (paper 003's definitions)."""
    _, S, I = x.shape
    agree = agree_good = good = split = total = 0
    for i in range(I):
        for s in range(S):
            for t in range(S):
                if s == t:
                    continue
                total += 1
                g = q[s, i] >= q[t, i]
                a = all(x[m, s, i] >= x[m, t, i] for m in X)
                h = any(x[m, s, i] > x[m, t, i] for m in X) and any(
                    x[m, s, i] < x[m, t, i] for m in X)
                good += g
                agree += a
                agree_good += a and g
                split += h
    return agree_good / max(agree, 1), agree_good / good, split / total


def main() -> None:
    ds = bm.datasets.summeval()
    x = select.metric_scores(ds)
    names = [str(m) for m in x["metric"].values]
    xv = np.asarray(x.values)
    qv = np.asarray(select.human_score(ds, "COH").values.values)
    rng = np.random.default_rng(0)
    sizes = [2, 3, 5, 10, 20]

    t0 = time.perf_counter()
    pt = het.build_pairs(xv, qv, metrics=names)
    sets = cor._random_sets(rng, len(names), sizes, 1000)
    idx = het.as_index_sets(sets, len(names))
    t1 = time.perf_counter()
    st = het.set_statistics(pt, idx)
    t2 = time.perf_counter()
    curves = [het.threshold_curve(pt, m) for m in range(len(names))]
    t3 = time.perf_counter()
    g, _ = het.gain(pt, idx, st)
    t4 = time.perf_counter()
    holds, _ = het.additive_cases(pt, idx)
    t5 = time.perf_counter()
    n_levels = sum(c["threshold"].size for c in curves)
    print(f"pairs: {pt.n_pairs}; sets: {len(sets)} (1,000 per size {sizes}); metrics "
          f"{len(names)}; threshold levels {n_levels}")
    print(f"  build pairs + draw sets   {t1 - t0:7.2f} s")
    print(f"  R, S, H of all sets       {t2 - t1:7.2f} s")
    print(f"  threshold curves (43)     {t3 - t2:7.2f} s")
    print(f"  gain (curves + matching)  {t4 - t3:7.2f} s")
    total = t4 - t0
    print(f"  total point estimates     {total:7.2f} s   (target < 30 s)")
    print(f"  additive check (5000 x 43 cases) {t5 - t4:.2f} s; holds in "
          f"{np.nanmean(holds):.3f}; gain > 0 in {np.mean(g[~np.isnan(g)] > 0):.3f} of sets")

    # peer: the per-pair loop on 2 sets per size
    sub = [k * 1000 + j for k in range(len(sizes)) for j in range(2)]
    t6 = time.perf_counter()
    ref = [loop_stats(xv, qv, sets[k]) for k in sub]
    t7 = time.perf_counter()
    err = max(abs(r[j] - st[key][k]) for r, k in zip(ref, sub, strict=True)
              for j, key in enumerate(("reliability", "sensitivity", "heterogeneity"))
              if not np.isnan(st[key][k]))
    per_set_loop = (t7 - t6) / len(sub)
    per_set_vec = (t2 - t1) / len(sets)
    print(f"peer loop: {per_set_loop:.2f} s per set ({len(sub)} sets; all {len(sets)}: "
          f"~{per_set_loop * len(sets) / 60:.0f} min); vectorised {per_set_vec * 1e3:.3f} ms "
          f"per set; ratio {per_set_loop / per_set_vec:,.0f}x; max |difference| {err:.1e}")

    # Bayesian bootstrap: 1,000 draws of R, S, H and gain for all sets
    B = int(sys.argv[sys.argv.index("--draws") + 1]) if "--draws" in sys.argv else 1000
    t8, c8 = time.perf_counter(), time.process_time()
    a, b = cor._weights(rng, B, pt.n_systems, pt.n_items, "bayesian")
    draws = cor._set_draws(pt, idx, a, b, B, match="interpolate")
    t9, c9 = time.perf_counter(), time.process_time()
    print(f"Bayesian bootstrap: {B} draws x {len(sets)} sets (R, S, H, curves, gain): "
          f"{t9 - t8:.1f} s wall, {c9 - c8:.1f} s CPU   (target for 1000 draws < 300 s); "
          f"mean P(gain > 0) {np.nanmean(cor._prob_positive(draws['gain'])):.3f}")

    if "--k4" in sys.argv:
        for trait in ("COH", "CON", "FLU", "REL"):
            t10 = time.perf_counter()
            rec = bm.recommend_metric_set(ds, trait, k=4, target_sensitivity=0.3,
                                          exhaustive=True, resampling={"n_resamples": 30},
                                          random_seed=1)
            gap = rec.info["exhaustive E[R]"] - rec.info["greedy E[R]"]
            print(f"k=4 {trait}: greedy E[R] {rec.info['greedy E[R]']:.4f}, exhaustive "
                  f"{rec.info['exhaustive E[R]']:.4f}, gap {gap:.4f} "
                  f"({time.perf_counter() - t10:.0f} s)")


if __name__ == "__main__":
    main()
