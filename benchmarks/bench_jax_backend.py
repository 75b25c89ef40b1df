"""The accelerator path (issue 19, build item 4): the same public fits with
``sampling={"backend": "jax"}`` against the default numba backend.

Per model and backend one JSON line: seconds per phase (compile, warm-up, sampling), draws,
max R-hat, min bulk/tail ESS, divergences, gradient evaluations, bulk ESS per second of
sampling, the JAX devices the run saw and the load average. Then, per model, the posterior
means of each backend against numba's: the difference in units of its Monte Carlo
standard error (``sd / sqrt(ess_bulk)`` per side), its largest absolute value and the
share above 3 (equal within Monte Carlo error: no row far above 3).

Models, on simulated data so that the run needs nothing from ``../shared``:

* ``rater``: ``bm.rater_bias`` on ``simulate_rater(1, 10 systems x 40 items x 3 raters x
  2 traits)`` (the recovery study's shape);
* ``cfa``: ``bm.cfa(four_factor_model, data, estimator="bayes")`` on
  ``simulate_summeval(7, 8 systems x 30 items)`` (four traits x three raters); its default
  ``parameterization="augmented"`` runs in numba kernels, so the JAX run samples the same
  model as ``"polar"`` (factor scores sampled), and the rows both report are compared.

JAX picks its platform when imported, so one process measures one platform: run it once
as is (a GPU when JAX sees one) and once with ``JAX_PLATFORMS=cpu``, each appending to the
same file; ``--compare`` prints the equality table of everything in the file::

    python benchmarks/bench_jax_backend.py --backends numba jax --out results.jsonl
    JAX_PLATFORMS=cpu python benchmarks/bench_jax_backend.py --backends jax --out results.jsonl
    python benchmarks/bench_jax_backend.py --compare --out results.jsonl

Results: ``benchmarks/results/jax_backend.jsonl`` (the machine is named in each line).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import bayesmeta as bm

OUT = Path(__file__).resolve().parent / "results" / "jax_backend.jsonl"
TRAITS = ("COH", "CON", "FLU", "REL")
FOUR = "\n".join(f"{t.lower()} =~ " + " + ".join(f"Rater.{r}.{t}" for r in (1, 2, 3))
                 for t in TRAITS)


def _devices(backend: str) -> str:
    if backend != "jax":
        return "cpu (numba)"
    import jax

    return ", ".join(f"{d.platform}:{d.device_kind}" for d in jax.devices())


def _data(model: str, size: tuple[int, int] = (10, 40)):
    from bayesmeta.simulate import simulate_rater, simulate_summeval

    if model == "rater":
        traits = ("COH", "CON") if size == (10, 40) else TRAITS
        return simulate_rater(1, n_systems=size[0], n_items=size[1], n_raters=3,
                              traits=traits)
    return simulate_summeval(7, n_systems=8, n_items=30, system_share=1e-6, n_metrics=1)


def _fit(model: str, data, backend: str, seed: int, fixed: tuple[int, int] | None):
    sampling: dict = {"backend": backend}
    if fixed is not None:  # the same fixed length for both backends (bounded device time)
        sampling.update(adaptive=False, tune=fixed[0], draws=fixed[1])
    if model == "rater":
        return bm.rater_bias(data, random_seed=seed, sampling=sampling, progress=False)
    # the default augmented likelihood runs in numba kernels: JAX samples the same model
    # with the factor scores sampled (parameterization="polar"); their structural
    # estimates (loadings, thresholds, factor correlations) are compared
    param = "polar" if backend == "jax" else "augmented"
    return bm.cfa(FOUR, data, estimator="bayes", random_seed=seed, sampling=sampling,
                  progress=False, parameterization=param)


def run(model: str, backend: str, seed: int, out: Path,
        fixed: tuple[int, int] | None = None, size: tuple[int, int] = (10, 40)) -> dict:
    data = _data(model, size)
    load = [round(x, 2) for x in os.getloadavg()]
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = _fit(model, data, backend, seed, fixed)
    seconds = time.perf_counter() - t0
    tab = res.summary().dropna(subset=["r_hat"])
    attrs = dict(res.idata.posterior.attrs)
    stats = res.idata.sample_stats
    sampling_s = float(attrs.get("seconds_sampling", np.nan))
    line = {
        "model": model, "backend": backend, "seed": seed, "devices": _devices(backend),
        "size": dict(data.sizes),
        "sampling": "defaults" if fixed is None else f"fixed: tune {fixed[0]}, draws "
                                                     f"{fixed[1]}",
        "machine": f"{platform.node()} ({os.cpu_count()} cpus)",
        "seconds": round(seconds, 1),
        "phases": {k[len("seconds_"):]: round(float(attrs[k]), 1) for k in attrs
                   if k.startswith("seconds_")},
        "draws": attrs.get("draws"), "stop_reason": attrs.get("stop_reason"),
        "max_r_hat": float(tab["r_hat"].max()), "min_ess_bulk": float(tab["ess_bulk"].min()),
        "min_ess_tail": float(tab["ess_tail"].min()),
        "divergences": int(stats["diverging"].sum()),
        "gradient_evaluations": float(stats["n_steps"].sum()) if "n_steps" in stats else None,
        "min_ess_bulk_per_sampling_second": float(tab["ess_bulk"].min()) / sampling_s
        if sampling_s > 0 else None,
        "warnings": sorted({type(w.message).__name__ for w in caught}),
        "load_start": load, "load_end": [round(x, 2) for x in os.getloadavg()],
        "when": time.strftime("%Y-%m-%dT%H:%M:%S"), "bayesmeta": bm.__version__,
        "rows": {"|".join(map(str, k)): [float(r["mean"]), float(r["sd"]),
                                         float(r["ess_bulk"])]
                 for k, r in tab.iterrows()},
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("a") as fh:
        fh.write(json.dumps(line) + "\n")
    print(json.dumps({k: v for k, v in line.items() if k != "rows"}), flush=True)
    return line


def compare(out: Path) -> pd.DataFrame:
    """Every (model, backend, devices) line against the numba line of the same model and
    seed: posterior means' difference over its Monte Carlo standard error."""
    lines = [json.loads(x) for x in out.read_text().splitlines() if x.strip()]
    rows = []
    for ln in lines:
        if ln["backend"] == "numba":
            continue
        ref = [r for r in lines if r["backend"] == "numba" and r["model"] == ln["model"]
               and r["seed"] == ln["seed"]]
        if not ref:
            continue
        a, b = ref[-1]["rows"], ln["rows"]
        keys = sorted(set(a) & set(b))
        z = np.array([(a[k][0] - b[k][0]) / np.sqrt(a[k][1] ** 2 / a[k][2]
                                                     + b[k][1] ** 2 / b[k][2]) for k in keys])
        rows.append({"model": ln["model"], "backend": ln["backend"],
                     "devices": ln["devices"], "parameters": len(keys),
                     "max_abs_z": float(np.abs(z).max()),
                     "share_abs_z_gt_3": float((np.abs(z) > 3).mean()),
                     "seconds": ln["seconds"], "numba_seconds": ref[-1]["seconds"],
                     "ess_per_s": ln["min_ess_bulk_per_sampling_second"],
                     "numba_ess_per_s": ref[-1]["min_ess_bulk_per_sampling_second"]})
    return pd.DataFrame(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", nargs="+", default=["rater", "cfa"], choices=["rater", "cfa"])
    ap.add_argument("--backends", nargs="+", default=["numba", "jax"],
                    choices=["numba", "jax"])
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--fixed", nargs=2, type=int, metavar=("TUNE", "DRAWS"), default=None,
                    help="a fixed length instead of the adaptive default (bounded time)")
    ap.add_argument("--rater-size", nargs=2, type=int, metavar=("SYSTEMS", "ITEMS"),
                    default=(10, 40), help="rater model: systems x items (other than 10 x "
                    "40: four traits, SummEval's shape at 17 x 100)")
    ap.add_argument("--compare", action="store_true")
    args = ap.parse_args()
    if not args.compare:
        for model in args.models:
            for backend in args.backends:
                run(model, backend, args.seed, args.out,
                    None if args.fixed is None else tuple(args.fixed),
                    tuple(args.rater_size))
    if args.out.exists():
        with pd.option_context("display.width", 200, "display.max_columns", 20):
            print(compare(args.out).to_string(index=False))


if __name__ == "__main__":
    main()
