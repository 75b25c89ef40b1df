"""Fit of the report budget's WMT constant (``bayesmeta.report._budget.SEC_WMT``).

Times the report's WMT section (``bm.report(ds, sections=["wmt"])``) on simulated campaigns
of several shapes and fits ``seconds = SEC_WMT * pairs * systems^2 * items * (permutations
+ resamples) * (metrics + 6)`` by least squares through the origin; prints each shape's
seconds, the estimate's ratio and the load average (a time estimate for a budget, fitted
under the load the report usually meets; the first shape also pays numba's compilation and
is left out of the fit).

    python benchmarks/fit_wmt_budget.py
"""

from __future__ import annotations

import os
import time

import numpy as np
import xarray as xr

import bayesmeta as bm
from bayesmeta.wmt.simulate import simulate_campaign

#: (language pairs, systems, items, metrics, permutations, resamples)
SHAPES = [(2, 8, 60, 6, 100, 100), (2, 12, 120, 12, 200, 100), (4, 8, 120, 6, 100, 200),
          (2, 16, 240, 12, 100, 100), (3, 10, 100, 24, 200, 200), (2, 8, 60, 6, 400, 100)]


def main() -> None:
    rows = []
    for L, S, I, M, P, R in SHAPES:
        lps = [f"l{k}" for k in range(L)]
        parts = [simulate_campaign(S, I, M, random_seed=k, lp=lp) for k, lp in enumerate(lps)]
        ds = xr.concat(parts, "lp", combine_attrs="drop_conflicts").assign_coords(lp=lps)
        t0 = time.perf_counter()
        rep = bm.report(ds, sections=["wmt"], random_seed=1, progress=False, budget=0,
                        resampling={"n_resamples": R, "n_permutations": P})
        secs = time.perf_counter() - t0
        assert rep.section("wmt").status == "ok"
        rows.append((L * S * S * I * (P + R) * (M + 6), secs))
        print(f"L={L} S={S} I={I} M={M} P={P} R={R}: {secs:.2f} s, load {os.getloadavg()}")
    x, y = np.array(rows[1:]).T
    c = (x @ y) / (x @ x)
    print(f"SEC_WMT = {c:.3g}; observed / fitted: {np.round(y / (c * x), 2)}")


if __name__ == "__main__":
    main()
