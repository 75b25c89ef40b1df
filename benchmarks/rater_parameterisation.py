"""Convergence of the rater model's parameterisations (models/rater.md, "Convergence with
the defaults: what was tried").

Fits ``bm.rater_bias`` with one parameterisation (``--parameterisation``, a name in
``bayesmeta.raters._model_build.PARAMETERIZATIONS``) and sampler settings (``--sampling``,
a JSON dict of ``SamplerOptions`` fields; default: the model's defaults) to SummEval
(``--data summeval``) or to a simulated dataset of the recovery study's shape
(``--data sim``: 10 systems x 40 items x 3 raters x 2 traits, ``simulate_rater(seed)``),
for each ``--seeds``, and appends one JSON line per fit to ``--out``:

* over the rows of ``summary()`` (the reported parameters): ``max_r_hat``,
  ``min_ess_bulk``, ``min_ess_tail`` and the rows that attain them, ``meets_targets``
  (R-hat <= 1.01, both ESS >= 400, no divergence);
* ``divergences_by_trait`` and ``max_treedepth_hits`` (all traits);
* ``raw``: per trait, the worst bulk ESS and R-hat of each model parameter (which block
  mixes slowly), the diagnosis;
* ``draws_met_by_trait`` / ``draws_sampled_by_trait`` (where each trait met its targets),
  ``cpu_seconds`` (this process, all threads: comparable under load, unlike wall time),
* ``seconds`` (wall, including compilation), ``seconds_by_trait``, ``load_start`` /
  ``load_end`` (1, 5, 15-minute load averages: the machine is shared, seconds depend on
  the load, R-hat and ESS do not).

The summary of every fit is written to ``<out stem>/<label>.csv`` for old-vs-new
comparisons of posterior means.

    python benchmarks/rater_parameterisation.py --parameterisation quality_units \
        --data summeval --seeds 3 4
"""

from __future__ import annotations

import argparse
import json
import os
import time
import warnings
from pathlib import Path

import arviz as az
import numpy as np

import bayesmeta as bm
from bayesmeta.raters.model import DEFAULT_PARAMETERIZATION, REPORTED, rater_bias
from bayesmeta.simulate import simulate_rater

OUT = Path(__file__).resolve().parent / "results" / "rater_parameterisation.jsonl"
RAW_SKIP = set(REPORTED) | {"system_quality", "tau"}


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def _label(row: tuple) -> str:
    return "/".join(str(x) for x in row if x != "")


def _raw(idata) -> dict:
    """Per trait: worst bulk ESS and R-hat of each model parameter."""
    post = idata.posterior
    out: dict[str, dict] = {}
    names = [v for v in post.data_vars if v not in RAW_SKIP]
    for t in post["trait"].values:
        sub = post[names].sel(trait=t)
        ess = az.ess(sub, method="bulk")
        rh = az.rhat(sub)
        out[str(t)] = {v: [round(float(ess[v].min()), 0), round(float(rh[v].max()), 4)]
                       for v in names}
    return out


def run(parameterisation: str, data: str, seed: int, sampling: dict | None, label: str,
        out: Path, traits: list[str] | None = None) -> dict:
    ds = bm.datasets.summeval() if data == "summeval" else simulate_rater(
        seed, n_systems=10, n_items=40, traits=("COH", "CON"))
    load_start = _load()
    t0, c0 = time.perf_counter(), time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = rater_bias(ds, random_seed=seed, sampling=sampling, traits=traits,
                         parameterization=parameterisation)
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    tab = res.summary()
    diag = tab.dropna(subset=["r_hat"])
    st = res.idata.sample_stats
    post = res.idata.posterior
    line = {
        "parameterisation": parameterisation, "data": data, "seed": seed,
        "sampling": sampling or "defaults", "label": label,
        "traits": [str(t) for t in res.idata.posterior["trait"].values],
        "chains": post.attrs.get("chains"), "draws": post.attrs.get("draws"),
        "tune": post.attrs.get("tune"), "target_accept": post.attrs.get("target_accept"),
        "mass_matrix": post.attrs.get("mass_matrix"),
        "max_r_hat": round(float(diag["r_hat"].max()), 4),
        "argmax_r_hat": _label(diag["r_hat"].idxmax()),
        "min_ess_bulk": round(float(diag["ess_bulk"].min()), 0),
        "argmin_ess_bulk": _label(diag["ess_bulk"].idxmin()),
        "min_ess_tail": round(float(diag["ess_tail"].min()), 0),
        "argmin_ess_tail": _label(diag["ess_tail"].idxmin()),
        "n_parameters": len(diag),
        "divergences": int(st["diverging"].sum()),
        "divergences_by_trait": {str(t): int(st["diverging"].sel(trait=t).sum())
                                 for t in st["trait"].values},
        "max_treedepth_hits": int(st["reached_max_treedepth"].sum())
        if "reached_max_treedepth" in st else None,
        "draws_met_by_trait": post.attrs.get("draws_met_by_trait"),
        "draws_sampled_by_trait": post.attrs.get("draws_sampled_by_trait"),
        "seconds": round(seconds, 1), "cpu_seconds": round(cpu, 1),
        "seconds_by_trait": post.attrs.get("seconds"),
        "load_start": load_start, "load_end": _load(),
        "raw": _raw(res.idata),
        "when": time.strftime("%Y-%m-%dT%H:%M:%S"),
    }
    line["meets_targets"] = bool(line["max_r_hat"] <= 1.01 and line["min_ess_bulk"] >= 400
                                 and line["min_ess_tail"] >= 400
                                 and line["divergences"] == 0)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("a") as fh:
        fh.write(json.dumps(line) + "\n")
    folder = out.with_suffix("")
    folder.mkdir(exist_ok=True)
    tab.index = [_label(r) for r in tab.index]
    tab.to_csv(folder / f"{label}.csv")
    return line


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--parameterisation", default=DEFAULT_PARAMETERIZATION)
    ap.add_argument("--data", choices=["summeval", "sim"], default="summeval")
    ap.add_argument("--seeds", nargs="+", type=int, default=[3])
    ap.add_argument("--sampling", type=json.loads, default=None,
                    help='JSON dict of SamplerOptions fields, e.g. \'{"draws": 500}\'')
    ap.add_argument("--traits", nargs="+", default=None, help="a subset of traits")
    ap.add_argument("--tag", default="", help="added to the label of the summary file")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    for seed in args.seeds:
        label = f"{args.parameterisation}_{args.data}_{seed}{args.tag}"
        line = run(args.parameterisation, args.data, seed, args.sampling, label, args.out,
                   args.traits)
        short = {k: v for k, v in line.items() if k != "raw"}
        print(json.dumps(short), flush=True)
        worst = {t: sorted(v.items(), key=lambda kv: kv[1][0])[:4]
                 for t, v in line["raw"].items()}
        print("  slowest raw parameters (bulk ESS, R-hat):", json.dumps(worst), flush=True)
    np.seterr()


if __name__ == "__main__":
    main()
