"""Normal or Student-t metric errors? PSIS-LOO on SummEval's 43 metrics (issue 22: "a
Student-t where metrics are heavy-tailed: measure which fits better with LOO").

The comparison is made on the metric likelihood of the modular route
(``bm.metric_variance(data, bayes_cfa, estimator="modular")``): each metric's standardized
scores regressed on the outputs' posterior-mean traits from a saved Bayesian CFA,

    x_n = a + b' fbar_n + r_n,   r_n ~ Normal(0, s)  or  StudentT(nu, 0, s),

with the same weak priors in both (a, b ~ N(0, 5), s ~ HalfNormal(5); nu ~ Gamma(2, 0.1),
the prior of Juarez & Steel 2010 that brms also uses), each fitted with nutpie (4 chains,
500 + 500 draws). ``r_n`` holds the metric's own error and the traits' Berkson error
``b' u_n`` (normal under the model), so heavy tails here are the metric's. Per metric the
script prints and appends to ``benchmarks/results/summeval_metric_tails.jsonl``: the
elpd_loo of each model, their difference (t minus normal) with its standard error, the
worst Pareto k, the posterior median of nu, and the fits' worst R-hat and lowest bulk ESS.

    python benchmarks/summeval_metric_tails.py --cfa FIT.nc [--seed 1]
    python benchmarks/summeval_metric_tails.py --summary   # the verdict from the results

A metric is left out of the verdict, with the reason printed, where either fit misses
R-hat <= 1.01 or bulk ESS >= 400, diverges, has a Pareto k above 0.7, or where over 5% of
its scores share one value (rank-normalized ties: a point mass, which a Student-t "fits"
by letting nu go to 0, an artefact of a continuous density on discrete data).

``FIT.nc``: a saved ``bm.cfa(four_factor, summeval, estimator="bayes")`` result (for example
from ``summeval_modular.py --save-fits DIR``). The SummEval data come through
``BAYESMETA_DATA``.
"""

from __future__ import annotations

import argparse
import json
import os
import time
import warnings
from pathlib import Path

import numpy as np

import bayesmeta as bm

OUT = Path(__file__).resolve().parent / "results" / "summeval_metric_tails.jsonl"


def _model(X: np.ndarray, y: np.ndarray, student: bool):
    import pymc as pm

    with pm.Model() as m:
        yd = pm.Data("y", y)
        a = pm.Normal("a", 0.0, 5.0)
        b = pm.Normal("b", 0.0, 5.0, shape=X.shape[1])
        s = pm.HalfNormal("s", 5.0)
        mu = a + X @ b
        if student:
            nu = pm.Gamma("nu", 2.0, 0.1)
            pm.StudentT("obs", nu=nu, mu=mu, sigma=s, observed=yd)
        else:
            pm.Normal("obs", mu=mu, sigma=s, observed=yd)
    return m


def _loo(X: np.ndarray, y: np.ndarray, post, student: bool):
    import arviz as az
    import xarray as xr
    from scipy import stats

    a = post["a"].values[..., None]
    b = post["b"].values  # (chain, draw, T)
    s = post["s"].values[..., None]
    mu = a + np.einsum("cdt,nt->cdn", b, X)
    if student:
        ll = stats.t.logpdf(y, post["nu"].values[..., None], mu, s)
    else:
        ll = stats.norm.logpdf(y, mu, s)
    idata = az.InferenceData(
        posterior=post, log_likelihood=xr.Dataset({"obs": (("chain", "draw", "n"), ll)}))
    return az.loo(idata, pointwise=True)


def _fails(r: dict) -> list[str]:
    """Why a metric's comparison is not to be read (empty: both fits are fine)."""
    why = []
    for name in ("normal", "student_t"):
        if r[f"{name}_max_r_hat"] > 1.01 or r[f"{name}_min_ess_bulk"] < 400:
            why.append(f"{name} fit R-hat {r[f'{name}_max_r_hat']:.2f}, ESS "
                       f"{r[f'{name}_min_ess_bulk']:.0f}")
        if r[f"{name}_divergences"]:
            why.append(f"{name} fit {r[f'{name}_divergences']} divergences")
        if r[f"{name}_pareto_k_max"] > 0.7:
            why.append(f"{name} Pareto k {r[f'{name}_pareto_k_max']:.2f}")
    if r.get("largest_tie_share", 0.0) > 0.05:
        why.append(f"{r['largest_tie_share']:.0%} of its scores share one value (a point "
                   f"mass no continuous density fits)")
    return why


def summarize(rows: list[dict]) -> None:
    """The verdict over metrics whose two fits are both trustworthy."""
    ok = [r for r in rows if not _fails(r)]
    for r in rows:
        if _fails(r):
            print(f"not compared: {r['metric']}: {'; '.join(_fails(r))}")
    better = [r["metric"] for r in ok if r["elpd_diff_t_minus_normal"] > 2 * r["se_diff"]]
    worse = [r["metric"] for r in ok if r["elpd_diff_t_minus_normal"] < -2 * r["se_diff"]]
    print(f"{len(ok)} of {len(rows)} metrics compared. Student-t better by more than 2 se: "
          f"{len(better)} {better}")
    print(f"normal better by more than 2 se: {len(worse)} {worse}; the rest within 2 se")
    if ok:
        diffs = [r["elpd_diff_t_minus_normal"] for r in ok]
        print(f"median nu {np.median([r['nu_median'] for r in ok]):.0f}; median elpd "
              f"difference (t - normal) {np.median(diffs):+.1f}")


def main() -> None:
    import arviz as az
    import nutpie

    from bayesmeta.validity._joint_build import prepare
    from bayesmeta.validity.modular import score_moments

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cfa", type=Path, help="a saved Bayesian CFA (.nc)")
    ap.add_argument("--summary", action="store_true", help="only summarize --out")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    if args.summary:
        summarize([json.loads(line) for line in args.out.open()])
        return
    if args.cfa is None:
        ap.error("--cfa is required (a saved Bayesian CFA of SummEval)")
    ds = bm.datasets.summeval(bm.datasets.find_summeval(download=False))
    fit = bm.load(args.cfa)
    jd = prepare(ds, fit, None, None, "first")
    fbar, _ = score_moments(fit, jd)
    print(f"{len(jd.metrics)} metrics, {fbar.shape[0]} outputs; load {os.getloadavg()}",
          flush=True)
    compiled = {}
    rows = []
    for j, metric in enumerate(jd.metrics):
        y = jd.x[:, j]
        if not np.isfinite(y).all():
            print(f"{metric}: {int((~np.isfinite(y)).sum())} missing scores; left out of "
                  f"this comparison (the script needs complete metrics)", flush=True)
            continue
        _, counts = np.unique(y, return_counts=True)
        rec = {"metric": metric, "cfa": str(args.cfa), "seed": args.seed,
               "largest_tie_share": float(counts.max() / y.size)}
        t0 = time.perf_counter()
        for name, student in (("normal", False), ("student_t", True)):
            if name not in compiled:
                compiled[name] = nutpie.compile_pymc_model(_model(fbar, y, student))
            cm = compiled[name].with_data(y=y)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                idata = nutpie.sample(cm, draws=500, tune=500, chains=4,
                                      seed=args.seed + 7919 * j, progress_bar=False)
            post = idata.posterior
            loo = _loo(fbar, y, post, student)
            summ = az.summary(idata, var_names=["a", "b", "s"] + (["nu"] if student else []))
            rec[f"{name}_elpd_loo"] = float(loo.elpd_loo)
            rec[f"{name}_se"] = float(loo.se)
            rec[f"{name}_pareto_k_max"] = float(np.max(loo.pareto_k.values))
            rec[f"{name}_max_r_hat"] = float(summ["r_hat"].max())
            rec[f"{name}_min_ess_bulk"] = float(summ["ess_bulk"].min())
            rec[f"{name}_divergences"] = int(idata.sample_stats["diverging"].sum())
            rec[f"_{name}_pointwise"] = loo.loo_i.values
            if student:
                rec["nu_median"] = float(np.median(post["nu"].values))
        diff = rec.pop("_student_t_pointwise") - rec.pop("_normal_pointwise")
        rec["elpd_diff_t_minus_normal"] = float(diff.sum())
        rec["se_diff"] = float(np.sqrt(diff.size * diff.var()))
        rec["seconds"] = round(time.perf_counter() - t0, 1)
        rows.append(rec)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        with args.out.open("a") as fh:
            fh.write(json.dumps(rec) + "\n")
        print(f"{metric:28s} t - normal elpd {rec['elpd_diff_t_minus_normal']:+8.1f} "
              f"(se {rec['se_diff']:5.1f})  nu {rec['nu_median']:6.1f}  "
              f"k max {rec['student_t_pareto_k_max']:.2f}/{rec['normal_pareto_k_max']:.2f}",
              flush=True)
    summarize(rows)

if __name__ == "__main__":
    main()
