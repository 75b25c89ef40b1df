"""Null calibration of the WMT significance tests and posteriors (issue 25, "Must show").

Two metrics of equal validity (same loading, independent noise) in a campaign of
:func:`bayesmeta.wmt.simulate.simulate_campaign`: by exchangeability the true difference of
every statistic is 0. Per replicate and statistic, :func:`bayesmeta.significance_clusters`
gives the one-sided permutation p-value of "the metric ranked second is at least as good";
the direction is chosen after seeing the data (MTME's convention), so twice it is the
two-sided p-value, a false alarm when <= 0.05. ``bias_sd`` is the sd of each metric's
per-system error (0: errors independent per output, the assumption of swapping single
outputs). Also the 94% interval of the difference from the bootstrap and
from the Bayesian-bootstrap posterior (covers 0 or not).

Usage::

    nice python benchmarks/wmt_null_calibration.py [n_reps] [n_permutations] [n_resamples] [bias_sd]

Writes JSON lines to ``benchmarks/results/wmt_null_calibration.jsonl`` (one per setting).
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import xarray as xr

import bayesmeta as bm
from bayesmeta.summaries import summarize
from bayesmeta.wmt.simulate import simulate_campaign

OUT = Path(__file__).parent / "results" / "wmt_null_calibration.jsonl"
#: label -> (statistic, extra keywords, permutation scheme)
STATISTICS = {"system_pearson": ("system_pearson", {}, "both"), "spa": ("spa", {}, "both"),
              "pdp": ("pdp", {}, "both"),
              "kendall_like": ("kendall_like", {"threshold": 25.0}, "both"),
              "within_item_acc_eq": ("within_item_acc_eq", {}, "both"),
              "within_item_acc_eq_pairs": ("within_item_acc_eq", {}, "pairs")}


def _equal_metrics(n_systems: int, n_items: int, seed: int, bias_sd: float) -> xr.Dataset:
    return simulate_campaign(n_systems, n_items, 2, random_seed=seed, loadings=(0.6, 0.6),
                             bias_sd=bias_sd)


def one(n_systems: int, n_items: int, seed: int, n_perm: int, n_res: int,
        bias_sd: float = 0.15) -> dict:
    ds = _equal_metrics(n_systems, n_items, seed, bias_sd)
    out = {}
    for label, (stat, kw, scheme) in STATISTICS.items():
        res = bm.significance_clusters(ds, "quality", statistic=stat, random_seed=seed,
                                       resampling={"n_permutations": n_perm,
                                                   "n_resamples": n_res, "scheme": scheme},
                                       **kw)
        # one-sided in the direction observed (MTME's convention): twice it is two-sided
        p = min(1.0, 2 * float(res.matrix().to_numpy()[0, 1]))
        post = res.extra["posterior"].values
        boot = res.extra["bootstrap"].values
        d = xr.DataArray(post[:, 0] - post[:, 1], dims=("resample",))
        hdi = summarize(d, ci_prob=0.94)["interval"].values
        b = boot[:, 0] - boot[:, 1]
        lo, hi = np.nanquantile(b, [0.03, 0.97])
        out[label] = {"p": p, "hdi_covers": bool(hdi[0] <= 0 <= hdi[1]),
                     "boot_covers": bool(lo <= 0 <= hi)}
    return out


def main(n_reps: int = 100, n_perm: int = 200, n_res: int = 200, bias_sd: float = 0.15
         ) -> None:
    for n_systems in (8, 16, 30):
        t0 = time.time()
        rows = [one(n_systems, 50, 1000 * n_systems + r, n_perm, n_res, bias_sd)
                for r in range(n_reps)]
        summary = {}
        for stat in STATISTICS:
            ps = np.array([r[stat]["p"] for r in rows])
            summary[stat] = {
                "type1_0.05": float((ps <= 0.05).mean()),
                "hdi94_coverage": float(np.mean([r[stat]["hdi_covers"] for r in rows])),
                "boot94_coverage": float(np.mean([r[stat]["boot_covers"] for r in rows]))}
        rec = {"benchmark": "wmt_null_calibration", "n_systems": n_systems, "n_items": 50,
               "bias_sd": bias_sd, "pvalue": "two-sided (2 x one-sided)",
               "n_reps": n_reps, "n_permutations": n_perm, "n_resamples": n_res,
               "results": summary, "seconds": round(time.time() - t0, 1),
               "loadavg": os.getloadavg(), "bayesmeta": bm.__version__}
        OUT.parent.mkdir(exist_ok=True)
        with OUT.open("a") as f:
            f.write(json.dumps(rec) + "\n")
        print(json.dumps(rec), flush=True)


if __name__ == "__main__":
    main(*[int(a) for a in sys.argv[1:4]], *[float(a) for a in sys.argv[4:5]])
