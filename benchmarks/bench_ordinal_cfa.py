"""Benchmark and SummEval check of the Bayesian ordinal CFA (issue 4, item 3).

Parts (``--part``, several allowed):

``fit4``     the four-factor model on all 1,700 SummEval outputs: compile time, sampling
             time, min bulk/tail ESS and max R-hat over loadings, thresholds and factor
             correlations, divergences, min-ESS per second of sampling; the classical
             WLSMV time; the largest deviations from lavaan's estimates
             (shared/reference/lavaan_summeval_four_factor.txt). Saves the fit.
``compare``  PSIS-LOO of three factor structures (four factors; coherence and relevance
             merged; one factor) with ``bayesmeta.compare``, and the coherence-relevance
             correlation's HDI.
``stan``     the same four-factor model in Stan (rstan; Debian's r-cran-rstan), for the
             min-ESS-per-second ratio. Needs ``Rscript`` with rstan; skipped otherwise.

Run::

    python benchmarks/bench_ordinal_cfa.py --part fit4 stan --out /tmp/cfa_bench \
        --r-libs /root/Rlib   # a user library whose BH/include links to /usr/include

With ``fit4`` and ``stan`` in one run it prints the ratio of their min-ESS per second.

Everything printed is measured in this run; the machine's load is printed with it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import time
import warnings
from pathlib import Path

import numpy as np

import bayesmeta as bm
from bayesmeta.validity import ordinal_cfa as oc
from bayesmeta.validity._cfa_setup import model_for, setup

TRAITS = ("COH", "CON", "FLU", "REL")
FOUR = "\n".join(f"{t.lower()} =~ " + " + ".join(f"Expert.{r}.{t}" for r in (1, 2, 3))
                 for t in TRAITS)
MERGED = ("cohrel =~ " + " + ".join(f"Expert.{r}.{t}" for t in ("COH", "REL")
                                     for r in (1, 2, 3)) + "\n"
          + "\n".join(f"{t.lower()} =~ " + " + ".join(f"Expert.{r}.{t}" for r in (1, 2, 3))
                      for t in ("CON", "FLU")))
ONE = "quality =~ " + " + ".join(f"Expert.{r}.{t}" for t in TRAITS for r in (1, 2, 3))
REFERENCE = (Path(__file__).resolve().parents[2] / "shared" / "reference"
             / "lavaan_summeval_four_factor.txt")


def lavaan_reference(path: Path = REFERENCE) -> dict[tuple[str, str, str], float]:
    """(lhs, op, rhs) -> lavaan's est.std, with indicator names as in the data."""
    out = {}
    for line in path.read_text().splitlines():
        parts = line.split()
        if len(parts) == 8 and parts[0].isdigit() and parts[2] in ("=~", "~~", "|"):
            lhs, op, rhs = parts[1:4]
            out[(lhs.replace("_", "."), op, rhs.replace("_", "."))] = float(parts[4])
    return out


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def run_fit(syntax: str, ds, *, chains: int, tune: int, draws: int, seed: int,
            n_ppc: int, mass_matrix: str = "diag") -> tuple[oc.OrdinalCFAResult, dict]:
    """Compile first (timed), then fit (sampling timed by the result)."""
    from bayesmeta.sampling import _compiled_nutpie

    _, _, design = setup(syntax, ds)
    model = model_for(design)  # the default (augmented) parameterization
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _compiled_nutpie(model, oc.AUGMENTED_TRACE)
    t_compile = time.perf_counter() - t0
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit = oc.ordinal_cfa(syntax, ds, sampling={"chains": chains, "tune": tune,
                                                   "draws": draws, "cores": min(chains, 2),
                                                   "mass_matrix": mass_matrix},
                             random_seed=seed, n_ppc=n_ppc)
    t_total = time.perf_counter() - t0
    timing = {"compile_s": t_compile, "fit_total_s": t_total,
              "warnings": [str(w.message)[:200] for w in caught]}
    return fit, timing


def part_fit4(ds, args) -> dict:
    t0 = time.perf_counter()
    from bayesmeta.validity.polychoric import polychoric
    from bayesmeta.validity.wlsmv import fit_wlsmv

    spec, data_, _ = setup(FOUR, ds)
    fit_wlsmv(spec, polychoric(data_.frame, acov=True))
    t_classical = time.perf_counter() - t0
    fit, timing = run_fit(FOUR, ds, chains=args.chains, tune=args.tune, draws=args.draws,
                          seed=args.seed, n_ppc=args.n_ppc, mass_matrix=args.mass_matrix)
    post = fit.idata.posterior
    sampling_s = float(post.attrs.get("sampling_time_s", np.nan))
    stats = fit.idata.sample_stats
    tab = fit.summary()
    main = tab[~((tab.index.get_level_values("op") == "~~")
                 & (tab.index.get_level_values("lhs") == tab.index.get_level_values("rhs")))]
    ref = lavaan_reference()
    dev = {}
    for op, label in (("=~", "loadings"), ("|", "thresholds"), ("~~", "correlations")):
        rows = main[main.index.get_level_values("op") == op]
        d = [(abs(r["mean"] - ref[k[1:]]), k[1:]) for k, r in rows.iterrows()
             if k[1:] in ref]
        worst = max(d)
        dev[label] = {"max_abs_dev": worst[0], "where": " ".join(worst[1])}
    min_ess = float(main["ess_bulk"].min())
    out = {
        "load_average": _load(),
        "classical_wlsmv_s": t_classical,
        **timing,
        "sampling_s_nutpie": sampling_s,
        "chains": args.chains, "tune": args.tune, "draws": args.draws,
        "mass_matrix": args.mass_matrix,
        "max_rhat": float(main["r_hat"].max()),
        "min_ess_bulk": min_ess, "min_ess_tail": float(main["ess_tail"].min()),
        "worst_ess": " ".join(main["ess_bulk"].idxmin()[1:]),
        "divergences": int(stats["diverging"].sum()),
        "mean_leapfrog_steps": float(stats["n_steps"].mean()) if "n_steps" in stats else None,
        "mean_step_size": float(stats["step_size"].mean()) if "step_size" in stats else None,
        "n_draws": int(post.sizes["chain"] * post.sizes["draw"]),
        "deviation_from_lavaan": dev,
        "info_time": fit.info.get("time"),
    }
    if np.isfinite(sampling_s) and sampling_s > 0:
        out["min_ess_per_s"] = min_ess / sampling_s
    out["fit_measures"] = fit.fit_measures().reset_index().to_dict("records")
    args.four_factor_fit = fit  # reused by --part compare in the same run
    if args.out:
        fit.save(Path(args.out) / "summeval_four_factor.nc")
        tab.to_csv(Path(args.out) / "summeval_four_factor_table.csv")
    print(fit)
    return out


def part_compare(ds, args) -> dict:
    fits = {}
    times = {}
    for name, syntax in (("four factors", FOUR), ("coherence+relevance merged", MERGED),
                         ("one factor", ONE)):
        if name == "four factors" and getattr(args, "four_factor_fit", None) is not None:
            fits[name], times[name] = args.four_factor_fit, {"reused": "fit4"}
            continue
        fits[name], times[name] = run_fit(syntax, ds, chains=args.chains, tune=args.tune,
                                          draws=args.draws, seed=args.seed, n_ppc=0,
                                          mass_matrix=args.mass_matrix)
        print(name, fits[name].info["convergence"], flush=True)
        if args.out:  # keep each fit, so a later failure loses nothing
            fits[name].save(Path(args.out) / f"summeval_{name.split()[0]}.nc")
    cmp = bm.compare(fits)
    print(cmp)
    four = fits["four factors"].summary()
    cr = four.loc[("factor_correlation", "coh", "~~", "rel")]
    if args.out:
        cmp.summary().to_csv(Path(args.out) / "summeval_loo_compare.csv")
    return {"loo": cmp.summary().reset_index().to_dict("records"),
            "coh_rel": {k: float(cr[k]) for k in ("classical", "mean", "hdi_low", "hdi_high")},
            "convergence": {k: f.info["convergence"] for k, f in fits.items()},
            "times": times}


def part_stan(ds, args) -> dict:
    if shutil.which("Rscript") is None:
        return {"skipped": "Rscript not found (apt-get install -y r-cran-rstan)"}
    script = Path(__file__).with_name("ordinal_cfa_stan.R")
    if not script.exists():
        return {"skipped": f"{script.name} missing"}
    r = ds["rating"].transpose("system", "item", "trait", "rater").values.reshape(-1, 12)
    tmp = Path(args.out or ".") / "ratings_wide.csv"
    np.savetxt(tmp, r, delimiter=",", fmt="%.0f")
    env = dict(os.environ)
    if args.r_libs:  # e.g. a user library whose BH/include links to /usr/include (Debian)
        env["R_LIBS_USER"] = args.r_libs
    proc = subprocess.run(["Rscript", str(script), str(tmp), str(args.stan_tune),
                           str(args.stan_draws)], capture_output=True, text=True,
                          check=False, env=env)
    print(proc.stdout[-3000:], proc.stderr[-2000:])
    for line in proc.stdout.splitlines():
        if line.startswith("{"):
            return json.loads(line)
    return {"failed": proc.stderr[-500:]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--part", nargs="+", default=["fit4"], choices=["fit4", "compare", "stan"])
    ap.add_argument("--chains", type=int, default=2)
    ap.add_argument("--tune", type=int, default=400)
    ap.add_argument("--draws", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=2024)
    ap.add_argument("--n-ppc", type=int, default=100)
    ap.add_argument("--out", default="")
    ap.add_argument("--mass-matrix", choices=["diag", "low_rank"], default="diag")
    ap.add_argument("--stan-tune", type=int, default=200)
    ap.add_argument("--stan-draws", type=int, default=200)
    ap.add_argument("--r-libs", default="", help="R_LIBS_USER for Rscript (a BH with include)")
    args = ap.parse_args()
    if args.out:
        Path(args.out).mkdir(parents=True, exist_ok=True)
    ds = bm.datasets.summeval()
    results = {}
    for part in args.part:
        results[part] = {"fit4": part_fit4, "compare": part_compare, "stan": part_stan}[part](
            ds, args)
        print(json.dumps({part: results[part]}, default=str, indent=1), flush=True)
    fit4, stan = results.get("fit4", {}), results.get("stan", {})
    if "min_ess_per_s" in fit4 and stan.get("stan_min_ess_per_s"):
        results["ratio"] = {"bayesmeta_over_stan_min_ess_per_s":
                            fit4["min_ess_per_s"] / stan["stan_min_ess_per_s"],
                            "target": 10.0}
        print(json.dumps({"ratio": results["ratio"]}, indent=1), flush=True)
    if args.out:
        (Path(args.out) / "bench_ordinal_cfa.json").write_text(
            json.dumps(results, default=str, indent=1))


if __name__ == "__main__":
    main()
