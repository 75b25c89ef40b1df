"""Time of the report's metric-validity section (issue 22 item 4), to set the constants of
its cost estimate (``bayesmeta/report/_budget.py``: ``SEC_VALIDITY``; the joint fits'
constants it also set then, ``SEC_JOINT`` and ``SEC_JOINT_FIXED``, went when the report
moved to the modular route, so the ``joint`` part is now a record only; ``--skip-classical``
runs that part alone):

* ``classical``: ``bm.metric_variance`` on a WLSMV CFA (regression calibration, percentile
  bootstrap) on simulated SummEval-shaped data (17 systems x 100 items x 3 raters x 4
  traits) with 12 and 48 metrics and 200 and 1,000 resamples;
* ``joint``: one small joint fit (``estimator="joint"``, the default full sampler
  settings, in this fresh process, so the numba compilation is included) on
  ``simulate_joint_validity(0, n_systems=4, n_items=15, n_traits=2, n_metrics=3)``, then
  a second fit of the same shape (compiled), with the seconds of each phase.

Run: ``nice python benchmarks/bench_report_validity.py [--skip-joint]``; appends JSON lines
to ``benchmarks/results/report_validity.jsonl`` with the load average beside each time (the
machine is shared: the times are upper bounds, not claims).
"""

from __future__ import annotations

import argparse
import json
import os
import time
import warnings
from pathlib import Path

import bayesmeta as bm
from bayesmeta.validity.joint_simulate import simulate_joint_validity

OUT = Path(__file__).parent / "results" / "report_validity.jsonl"


def _write(row: dict) -> None:
    row["loadavg"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(row), flush=True)
    with open(OUT, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(row) + "\n")


def _syntax(traits: list[str], n_raters: int) -> str:
    return "\n".join(f"{t.lower()} =~ " + " + ".join(f"Rater.{r}.{t}"
                                                     for r in range(1, n_raters + 1))
                     for t in traits)


def classical() -> None:
    for n_metrics in (12, 48):
        ds = bm.datasets.simulated(random_seed=0, n_metrics=n_metrics)
        traits = [str(t) for t in ds["trait"].values]
        fit = bm.cfa(_syntax(traits, ds.sizes["rater"]), ds)
        for n_res in (200, 1000):
            t0 = time.perf_counter()
            bm.metric_variance(ds, fit, resampling={"n_resamples": n_res}, random_seed=0)
            _write({"route": "classical", "outputs": ds.sizes["system"] * ds.sizes["item"],
                    "metrics": n_metrics, "traits": len(traits), "n_resamples": n_res,
                    "seconds": round(time.perf_counter() - t0, 2)})


def joint() -> None:
    shape = {"n_systems": 4, "n_items": 15, "n_traits": 2, "n_metrics": 3}
    for seed in (0, 1):
        ds = simulate_joint_validity(seed, **shape)
        t0 = time.perf_counter()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            res = bm.metric_variance(ds, _syntax(["COH", "CON"], 3), estimator="joint",
                                     random_seed=seed)
        post = res.idata.posterior
        tab = res.summary()
        _write({"route": "joint", "seed": seed, **shape, "n_raters": 3,
                "outputs": shape["n_systems"] * shape["n_items"],
                "seconds": round(time.perf_counter() - t0, 1),
                "compiled_before": int(post.attrs.get("compiled_before", 0)),
                **{k: round(float(post.attrs.get(k, 0)), 1)
                   for k in ("seconds_compile", "seconds_warmup", "seconds_sampling")},
                "chains": int(post.sizes["chain"]), "draws": int(post.sizes["draw"]),
                "max_r_hat": float(tab["r_hat"].max()),
                "min_ess_bulk": float(tab["ess_bulk"].min()),
                "divergences": int(res.idata.sample_stats["diverging"].sum()),
                "warnings": len(caught)})


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--skip-joint", action="store_true")
    p.add_argument("--skip-classical", action="store_true")
    a = p.parse_args()
    if not a.skip_classical:
        classical()
    if not a.skip_joint:
        joint()
