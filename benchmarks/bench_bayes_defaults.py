"""Convergence and time of the Bayesian fits through the public functions, with defaults.

Issue 19's must-show: ``bm.cfa(four_factor_model, data, estimator="bayes")`` and
``bm.rater_bias(data)`` on SummEval, called exactly as a user calls them (defaults, only
``random_seed=`` given), for several seeds. Each fit appends one JSON line to
``benchmarks/results/bayes_defaults.jsonl`` (or ``--out``):

* ``function``, ``seed``, ``label`` (what was run: ``--label``, default the git commit),
  ``commit``;
* ``max_r_hat``, ``min_ess_bulk``, ``min_ess_tail`` over every reported parameter (the rows
  of ``summary()`` that carry diagnostics), the parameter that attains each, and
  ``meets_targets`` (R-hat <= 1.01, both ESS >= 400, no divergence);
* ``divergences``, ``chains``, ``draws`` (per chain, as recorded by the sampler), and the
  seconds of each phase where the fit records them (``phases``), plus ``seconds`` (wall);
* ``load_start`` / ``load_end`` (1, 5, 15-minute load averages): R-hat and ESS do not
  depend on the load, seconds do; ``cpu_seconds`` (the process's CPU time, all sampler
  threads) much less so, and ``gradient_evaluations`` (after warm-up) not at all.

The posterior summary of every fit is written beside the JSON file
(``<out stem>/<label>_<function>_<seed>.csv``), so that the posterior means of two sets of
defaults can be compared later (``--compare LABEL_A LABEL_B``) within Monte Carlo error;
``--compare`` also prints the min-bulk-ESS-per-second ratio of the two labels' fits of the
same function and seed (issue 19's speed peer: run them one after the other, quietly).

Run::

    nohup python benchmarks/bench_bayes_defaults.py --part cfa rater --seeds 1 2 3 4 5 &
    python benchmarks/bench_bayes_defaults.py --compare old new
    python benchmarks/bench_bayes_defaults.py --part cfa --sampling '{"mass_matrix": "low_rank"}'

"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import subprocess
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import bayesmeta as bm

TRAITS = ("COH", "CON", "FLU", "REL")
FOUR = "\n".join(f"{t.lower()} =~ " + " + ".join(f"Expert.{r}.{t}" for r in (1, 2, 3))
                 for t in TRAITS)
RESULTS = Path(__file__).resolve().parent / "results" / "bayes_defaults.jsonl"
TARGETS = {"r_hat": 1.01, "ess": 400}


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


_COMMIT: list[str] = []


def _commit() -> str:
    """The commit checked out when this process started (the code it runs, even if the
    worktree moves on while it runs)."""
    if _COMMIT:
        return _COMMIT[0]
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, cwd=Path(__file__).parent, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, cwd=Path(__file__).parent,
                               check=True).stdout.strip()
        out += "+dirty" if dirty else ""
    except (OSError, subprocess.CalledProcessError):
        out = "unknown"
    _COMMIT.append(out)
    return out


def _fit(function: str, data, seed: int, sampling: dict | None = None,
         rater_parameterization: str | None = None):
    extra = {} if sampling is None else {"sampling": sampling}
    if rater_parameterization and function == "rater":
        extra["parameterization"] = rater_parameterization
    if function == "cfa":
        # release 0.10 (the previous defaults, the peer of the timing) spelled it method=
        key = "estimator" if "estimator" in inspect.signature(bm.cfa).parameters else "method"
        return bm.cfa(FOUR, data, **{key: "bayes"}, random_seed=seed, **extra)
    if function == "rater":
        return bm.rater_bias(data, random_seed=seed, **extra)
    raise ValueError(f"unknown part {function!r}")


def _label(row: tuple) -> str:
    return "/".join(str(x) for x in (row if isinstance(row, tuple) else (row,)) if x != "")


def record(function: str, res, seed: int, seconds: float, load_start: list[float],
           label: str) -> dict:
    """The JSON line of one fit."""
    tab = res.summary()
    diag = tab.dropna(subset=["r_hat"]) if "r_hat" in tab else tab.iloc[:0]
    stats = res.idata.sample_stats if res.idata is not None else None
    div = int(stats["diverging"].sum()) if stats is not None and "diverging" in stats else -1
    attrs = dict(res.idata.posterior.attrs) if res.idata is not None else {}
    out = {
        "function": function, "seed": seed, "label": label, "commit": _commit(),
        "max_r_hat": float(diag["r_hat"].max()),
        "argmax_r_hat": _label(diag["r_hat"].idxmax()),
        "min_ess_bulk": float(diag["ess_bulk"].min()),
        "argmin_ess_bulk": _label(diag["ess_bulk"].idxmin()),
        "min_ess_tail": float(diag["ess_tail"].min()),
        "argmin_ess_tail": _label(diag["ess_tail"].idxmin()),
        "n_parameters": len(diag), "divergences": div,
        "chains": attrs.get("chains"), "draws": attrs.get("draws"),
        "tune": attrs.get("tune"), "stop_reason": attrs.get("stop_reason"),
        "mass_matrix": attrs.get("mass_matrix"),
        # the rater model's traits: where each met its targets, and the draws sampled
        # before the longer ones were thinned to the common length (since stop 38)
        "draws_met_by_trait": attrs.get("draws_met_by_trait"),
        "draws_sampled_by_trait": attrs.get("draws_sampled_by_trait"),
        "phases": {k[len("seconds_"):]: attrs[k] for k in attrs if k.startswith("seconds_")},
        "seconds": round(seconds, 1), "load_start": load_start, "load_end": _load(),
        "when": time.strftime("%Y-%m-%dT%H:%M:%S"),
    }
    # the sampler's work, independent of how busy the machine was: gradient evaluations
    # after warm-up (nutpie's n_steps), and bulk ESS per 1,000 of them
    if stats is not None and "n_steps" in stats:
        grads = float(stats["n_steps"].sum())
        out["gradient_evaluations"] = grads
        out["mean_tree_depth"] = float(stats["depth"].mean()) if "depth" in stats else None
        out["min_ess_bulk_per_1000_gradients"] = 1000 * out["min_ess_bulk"] / grads
    out["meets_targets"] = bool(out["max_r_hat"] <= TARGETS["r_hat"]
                                and out["min_ess_bulk"] >= TARGETS["ess"]
                                and out["min_ess_tail"] >= TARGETS["ess"] and div == 0)
    return out


def compare(out: Path, label_a: str, label_b: str) -> pd.DataFrame:
    """Posterior means of two labels on the same function and seed: difference in units of
    the Monte Carlo standard error of the difference (sd / sqrt(ess_bulk) per side)."""
    folder = out.with_suffix("")
    rows = []
    for fa in sorted(folder.glob(f"{label_a}_*.csv")):
        fb = folder / fa.name.replace(f"{label_a}_", f"{label_b}_", 1)
        if not fb.exists():
            continue
        a = pd.read_csv(fa, index_col=0)
        b = pd.read_csv(fb, index_col=0)
        j = a[["mean", "sd", "ess_bulk"]].add_suffix("_a").join(
            b[["mean", "sd", "ess_bulk"]].add_suffix("_b"), how="inner")
        mcse = np.sqrt(j.sd_a**2 / j.ess_bulk_a + j.sd_b**2 / j.ess_bulk_b)
        z = (j.mean_a - j.mean_b) / mcse
        rows.append({"file": fa.name[len(label_a) + 1:-4], "parameters": len(j),
                     "max_abs_diff": float((j.mean_a - j.mean_b).abs().max()),
                     "max_abs_z": float(z.abs().max()),
                     "share_abs_z_gt_3": float((z.abs() > 3).mean())})
    return pd.DataFrame(rows)


def speed(out: Path, label_a: str, label_b: str) -> pd.DataFrame:
    """Min bulk ESS per wall second (and per CPU second) of two labels on the same function
    and seed, and their ratio ``a / b``: issue 19's speed peer, meaningful only when both
    ran one after the other on one quiet machine (``load_start`` is printed beside). Where a
    label ran the same function and seed more than once, its last line counts."""
    lines = [json.loads(x) for x in out.read_text().splitlines() if x.strip()]
    by = {(d["label"], d["function"], d["seed"]): d for d in lines}
    rows = []
    for (label, function, seed), a in sorted(by.items()):
        b = by.get((label_b, function, seed))
        if label != label_a or b is None:
            continue
        row = {"function": function, "seed": seed}
        for tag, d in (("a", a), ("b", b)):
            row[f"seconds_{tag}"] = d["seconds"]
            row[f"min_ess_bulk_{tag}"] = round(d["min_ess_bulk"])
            row[f"meets_{tag}"] = d["meets_targets"]
            row[f"load_start_{tag}"] = d["load_start"][0]
        row["ess_per_s_a"] = a["min_ess_bulk"] / a["seconds"]
        row["ess_per_s_b"] = b["min_ess_bulk"] / b["seconds"]
        row["ratio_per_s"] = row["ess_per_s_a"] / row["ess_per_s_b"]
        if a.get("cpu_seconds") and b.get("cpu_seconds"):
            row["ratio_per_cpu_s"] = ((a["min_ess_bulk"] / a["cpu_seconds"])
                                      / (b["min_ess_bulk"] / b["cpu_seconds"]))
        rows.append(row)
    return pd.DataFrame(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--part", nargs="+", default=["cfa", "rater"], choices=["cfa", "rater"])
    ap.add_argument("--seeds", nargs="+", type=int, default=[1, 2, 3, 4, 5])
    ap.add_argument("--label", default=None, help="what is run (default: the git commit)")
    ap.add_argument("--out", type=Path, default=RESULTS)
    ap.add_argument("--compare", nargs=2, metavar=("LABEL_A", "LABEL_B"))
    ap.add_argument("--sampling", type=json.loads, default=None,
                    help="sampling= of the fits as JSON (default: the function's defaults)")
    ap.add_argument("--rater-parameterization", default=None,
                    help="parameterization= of bm.rater_bias (default: its default)")
    args = ap.parse_args()
    if args.compare:
        with pd.option_context("display.width", 150):
            print("Posterior means, a against b (difference in Monte Carlo SEs):")
            print(compare(args.out, *args.compare).to_string(index=False))
            print("\nMin bulk ESS per second, a against b (ratio a / b):")
            print(speed(args.out, *args.compare).to_string(
                index=False, float_format=lambda v: f"{v:.3g}"))
        return
    label = args.label or _commit()
    _commit()  # fixed now: the code this process runs
    data = bm.datasets.summeval()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    folder = args.out.with_suffix("")
    folder.mkdir(exist_ok=True)
    for function in args.part:
        for seed in args.seeds:
            load_start = _load()
            t0, c0 = time.perf_counter(), time.process_time()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = _fit(function, data, seed, args.sampling,
                           args.rater_parameterization)
            line = record(function, res, seed, time.perf_counter() - t0, load_start, label)
            # CPU seconds of this process (every sampler thread): much less sensitive to
            # other jobs than the wall time; about twice the quiet wall time on 2 cores
            line["cpu_seconds"] = round(time.process_time() - c0, 1)
            line["sampling"] = args.sampling or "defaults"
            if function == "rater" and args.rater_parameterization:
                line["parameterization"] = args.rater_parameterization
            with args.out.open("a") as fh:
                fh.write(json.dumps(line) + "\n")
            tab = res.summary()
            tab.index = [_label(r) for r in tab.index]
            tab.to_csv(folder / f"{label}_{function}_{seed}.csv")
            print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
