"""Parameter recovery of the Bayesian ordinal CFA: coverage of 94% HDIs over many datasets
simulated from the model (issue 4: between 88% and 99% for loadings, thresholds and factor
correlations over at least 100 datasets).

Data: :func:`bayesmeta.simulate.simulate_summeval` with a negligible system share (so the
outputs are independent, as the CFA assumes), 3 raters x 4 traits on 1..5, a smaller shape
than SummEval (default 10 systems x 30 items = 300 outputs). One model per worker is
compiled once (data in ``pm.Data`` containers) and refitted to each dataset.

Run (many cores: ``--workers`` processes x 2 chains each)::

    python benchmarks/recovery_ordinal_cfa.py --datasets 100 --workers 8 --out /tmp/rec

Through the public function instead (``bm.cfa`` with its defaults: the augmented model, 4
chains, sampling until the targets are met; ``--defaults '{"tune": 200}'`` changes one
setting)::

    python benchmarks/recovery_ordinal_cfa.py --datasets 10 --defaults '{}' --out /tmp/rec

Rows are appended per dataset to ``partial_<worker>.csv`` under ``--out``; ``--summarize``
prints the summary of a stopped run's rows.

Prints coverage per parameter class with a binomial 95% interval, the convergence of the
fits (datasets with R-hat > 1.01 are counted and reported, not dropped), and writes one CSV
row per parameter and dataset.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd

TRAITS = ("COH", "CON", "FLU", "REL")
SYNTAX = "\n".join(f"{t.lower()} =~ " + " + ".join(f"Rater.{r}.{t}" for r in (1, 2, 3))
                   for t in TRAITS)


#: The standardized parameters whose recovery is measured.
PARAMS = ("loading_std", "threshold_std", "factor_corr")


def refit_intervals(model, design, *, seed: int, tune: int, draws: int) -> tuple:
    """Refit the ``pm.Data`` model (``build_model(..., data_containers=True)``) to
    ``design`` with 2 chains; returns ``(idata, {name: (mean, hdi_low, hdi_high)})`` for
    :data:`PARAMS`, 94% HDIs from :func:`bayesmeta.summaries.summarize` (also used by
    ``skew_recovery_ordinal_cfa.py``)."""
    from bayesmeta.sampling import sample
    from bayesmeta.validity._cfa_build import anchor_cuts

    idata = sample(model, {"chains": 2, "cores": 2, "tune": tune, "draws": draws},
                   data={"obs_row": design.row, "obs_ind": design.ind, "obs_cat": design.cat,
                         "threshold_anchor_cut": anchor_cuts(design)},
                   random_seed=seed)
    return idata, _intervals(idata.posterior)


def public_intervals(ds, *, seed: int, sampling: dict) -> tuple:
    """Fit ``bm.cfa(SYNTAX, ds, estimator="bayes")`` with its defaults (``sampling``: the
    settings changed, e.g. ``{"tune": 200}``); returns what :func:`refit_intervals` does."""
    import bayesmeta as bm

    res = bm.cfa(SYNTAX, ds, estimator="bayes", random_seed=seed, sampling=sampling or None,
                 progress=False)
    return res.idata, _intervals(res.idata.posterior)


def _intervals(post) -> dict:
    """``{name: (mean, hdi_low, hdi_high)}`` of :data:`PARAMS` in a posterior, 94% HDIs from
    :func:`bayesmeta.summaries.summarize`."""
    from bayesmeta.summaries import summarize

    out = {}
    for n in PARAMS:
        s = summarize(post[n], ci_prob=0.94)
        out[n] = (s["mean"].values, s["interval"].sel(ci_bound="lower").values,
                  s["interval"].sel(ci_bound="upper").values)
    return out


def _simulate(seed: int, n_systems: int, n_items: int):
    from bayesmeta.simulate import simulate_summeval

    return simulate_summeval(seed, n_systems=n_systems, n_items=n_items, system_share=1e-6,
                             n_metrics=1)


def _worker(job: dict) -> list[dict]:
    from bayesmeta.summaries import diagnose
    from bayesmeta.validity._cfa_build import build_model
    from bayesmeta.validity._cfa_setup import setup

    warnings.simplefilter("ignore")
    rows: list[dict] = []
    model = None
    for seed in job["seeds"]:
        ds = _simulate(seed, job["n_systems"], job["n_items"])
        t0 = time.perf_counter()
        if job.get("defaults") is not None:  # the public function, its defaults
            idata, intervals = public_intervals(ds, seed=seed, sampling=job["defaults"])
        else:
            _, _, design = setup(SYNTAX, ds)
            if model is None:
                model = build_model(design, data_containers=True, store_scores=False)
            idata, intervals = refit_intervals(model, design, seed=seed, tune=job["tune"],
                                               draws=job["draws"])
        elapsed = time.perf_counter() - t0
        attrs = idata.posterior.attrs
        diag = diagnose(idata.posterior[list(PARAMS)])
        div = int(idata.sample_stats["diverging"].sum())
        truth = {
            "loading_std": ds["true_loading"].transpose("trait", "rater").values.ravel(),
            "threshold_std": ds["true_threshold"].transpose("trait", "rater", "cut")
            .values.reshape(12, -1),
            "factor_corr": ds["true_trait_corr"].values,
        }
        for name in PARAMS:
            mean, lo, hi = intervals[name]
            tr = truth[name]
            rh = diag[f"{name}__r_hat"].values
            eb = diag[f"{name}__ess_bulk"].values
            for idx in np.ndindex(tr.shape):
                if name == "factor_corr" and idx[0] >= idx[1]:
                    continue
                rows.append({"seed": seed, "parameter": name, "index": str(idx),
                             "truth": float(tr[idx]), "mean": float(mean[idx]),
                             "hdi_low": float(lo[idx]), "hdi_high": float(hi[idx]),
                             "covered": bool(lo[idx] <= tr[idx] <= hi[idx]),
                             "r_hat": float(rh[idx]), "ess_bulk": float(eb[idx]),
                             "divergences": div, "seconds": elapsed,
                             "draws": int(attrs.get("draws", idata.posterior.sizes["draw"])),
                             "tune": int(attrs.get("tune", job["tune"])),
                             "chains": int(idata.posterior.sizes["chain"])})
        if job.get("partial"):  # one file per worker, appended per dataset: a stopped run
            path = Path(job["partial"])  # keeps what it finished (see --summarize)
            part = pd.DataFrame([r for r in rows if r["seed"] == seed])
            part.to_csv(path, mode="a", header=not path.exists(), index=False)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", type=int, default=100)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--n-systems", type=int, default=10)
    ap.add_argument("--n-items", type=int, default=30)
    ap.add_argument("--tune", type=int, default=500)
    ap.add_argument("--draws", type=int, default=500)
    ap.add_argument("--first-seed", type=int, default=1000)
    ap.add_argument("--defaults", type=json.loads, default=None, metavar="JSON",
                    help="fit through bm.cfa with its defaults and these sampling= settings "
                         "('{}': the defaults as they are); --tune/--draws then unused")
    ap.add_argument("--out", default="")
    ap.add_argument("--summarize", action="store_true",
                    help="only summarise the partial rows already written under --out")
    args = ap.parse_args()
    out = Path(args.out) if args.out else None
    if args.summarize:
        files = sorted(out.glob("partial_*.csv")) if out else []
        if not files:
            ap.error("--summarize needs --out DIR holding partial_*.csv from a run")
        df = pd.concat(pd.read_csv(f) for f in files)
        print(json.dumps(summarize(df), indent=1))
        return
    if out:
        out.mkdir(parents=True, exist_ok=True)
        for f in out.glob("partial_*.csv"):
            f.unlink()
    seeds = list(range(args.first_seed, args.first_seed + args.datasets))
    chunks = [seeds[k::args.workers] for k in range(args.workers)]
    jobs = [{"seeds": c, "n_systems": args.n_systems, "n_items": args.n_items,
             "tune": args.tune, "draws": args.draws, "defaults": args.defaults,
             "partial": str(out / f"partial_{k}.csv") if out else None}
            for k, c in enumerate(chunks) if c]
    t0 = time.perf_counter()
    if args.workers == 1:
        rows = _worker(jobs[0])
    else:
        with ProcessPoolExecutor(args.workers) as pool:
            rows = [r for part in pool.map(_worker, jobs) for r in part]
    df = pd.DataFrame(rows)
    summary = summarize(df)
    summary["wall_s"] = time.perf_counter() - t0
    print(json.dumps(summary, indent=1))
    if out:
        df.to_csv(out / "recovery_ordinal_cfa.csv", index=False)
        (out / "recovery_summary.json").write_text(json.dumps(summary, indent=1))


def summarize(df: pd.DataFrame) -> dict:
    """Coverage per parameter class with a binomial 95% interval, and the convergence."""
    summary = {}
    for name, g in df.groupby("parameter"):
        k, n = int(g["covered"].sum()), len(g)
        p = k / n
        half = 1.96 * np.sqrt(p * (1 - p) / n)
        summary[name] = {"coverage": p, "ci95": [p - half, p + half], "n": n,
                         "datasets": int(g["seed"].nunique())}
    bad = df.groupby("seed")["r_hat"].max()
    summary["datasets_rhat_gt_1.01"] = int((bad > 1.01).sum())
    summary["median_min_ess_bulk"] = float(df.groupby("seed")["ess_bulk"].min().median())
    summary["divergent_datasets"] = int((df.groupby("seed")["divergences"].max() > 0).sum())
    summary["median_seconds_per_fit"] = float(df.groupby("seed")["seconds"].first().median())
    if "draws" in df:
        summary["draws_per_chain"] = sorted(int(x) for x in df.groupby("seed")["draws"].first())
    return summary


if __name__ == "__main__":
    main()
