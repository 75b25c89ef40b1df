"""Recovery and 94% HDI coverage of the joint metric-validity model (issue 22) on data
simulated from the joint model itself (``bayesmeta.validity.joint_simulate``; default
8 systems x 30 items x 3 raters x 4 traits x 6 metrics), beside the classical route
(WLSMV CFA, EBM scores, regression calibration, percentile bootstrap over systems and
items) on the same data.

Per dataset one JSON line in ``benchmarks/results/joint_validity_recovery_marginal.jsonl``
(the public function's defaults, which integrate the traits out; the first 58 datasets,
fitted with the traits sampled, are in ``joint_validity_recovery.jsonl``: pass it to
``--summary --out``). Each line says whether each 94% HDI covers the truth (raw validity
coefficients ``b`` (M x T), error variances ``sigma_m^2`` (M), standardized validity
coefficients and error shares), the posterior means' errors, interval widths, max R-hat,
min bulk/tail ESS over the reported quantities, divergences, draws, seconds and the load
average (timings on a shared machine are not claims). Seeds already in the file are
skipped, so the study resumes. ``--summary`` prints the coverage over all lines.

    nice python benchmarks/recovery_joint_validity.py [--datasets 100] [--first-seed 1000]
    python benchmarks/recovery_joint_validity.py --summary

``--two-stage`` runs the other Bayesian route on the same simulated datasets instead (issue
22 item 2): ``bm.cfa(model, data, estimator="bayes")`` with its defaults, then
``bm.metric_variance(data, that_fit)``, which regresses the metrics on the posterior-mean
factor scores (their own uncertainty is not propagated), with the same records under the
prefix ``two_stage_`` in ``benchmarks/results/joint_validity_two_stage.jsonl``; the
summary of that file compares its coverage and widths with the joint route's on the same
seeds:

    nice python benchmarks/recovery_joint_validity.py --two-stage [--datasets 30]
    python benchmarks/recovery_joint_validity.py --two-stage --summary

``--residuals correlated`` fits the joint model with an unrestricted metric error
covariance (``residuals="correlated"``) on the same datasets (simulated with independent
errors, a special case), appending to ``benchmarks/results/joint_validity_correlated.jsonl``;
``--error-corr R`` simulates errors correlated R in every pair instead (with ``--out``).
These lines also carry the coverage of the residual correlations' HDIs
(``residual_correlations()``) against the realized correlations of the true residuals.

``--modular`` fits one Bayesian CFA per dataset and runs both the modular route
(``estimator="modular"``) and the two-stage route on it, appending to
``benchmarks/results/joint_validity_modular.jsonl`` (``--modular --summary`` prints its
coverage); ``--save-moments DIR`` also saves each CFA's factor-score moments and Psi draws
for ``modular_variants.py``:

    nice python benchmarks/recovery_joint_validity.py --modular --datasets 100 \
        --save-moments DIR
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
from bayesmeta.summaries import summarize
from bayesmeta.validity.joint_simulate import realized_error_corr, simulate_joint_validity

OUT = Path(__file__).parent / "results" / "joint_validity_recovery_marginal.jsonl"
#: The first 58 datasets, fitted with the traits sampled (noncentred: the default until
#: the marginal parameterisation); kept as the record of that parameterisation.
OUT_NONCENTRED = Path(__file__).parent / "results" / "joint_validity_recovery.jsonl"
OUT_TWO_STAGE = Path(__file__).parent / "results" / "joint_validity_two_stage.jsonl"
OUT_MODULAR = Path(__file__).parent / "results" / "joint_validity_modular.jsonl"
OUT_CORRELATED = Path(__file__).parent / "results" / "joint_validity_correlated.jsonl"
TRAITS = ("COH", "CON", "FLU", "REL")


def syntax(n_traits: int) -> str:
    return "\n".join(f"{t.lower()} =~ " + " + ".join(f"Rater.{r}.{t}" for r in (1, 2, 3))
                     for t in TRAITS[:n_traits])


def _cover(lo: np.ndarray, hi: np.ndarray, truth: np.ndarray) -> list[bool]:
    return [bool(a <= t <= b) for a, b, t in zip(lo.ravel(), hi.ravel(), truth.ravel(),
                                                  strict=True)]


def _simulate(seed: int, args: argparse.Namespace):
    return simulate_joint_validity(seed, n_systems=args.systems, n_items=args.items,
                                   n_traits=args.traits, n_metrics=args.metrics,
                                   error_corr=args.error_corr)


def one(seed: int, args: argparse.Namespace) -> dict:
    ds = _simulate(seed, args)
    model = syntax(args.traits)
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = bm.metric_variance(ds, model, estimator="joint", random_seed=seed,
                                 residuals=args.residuals, sampling=args.sampling)
    secs = time.perf_counter() - t0
    post = res.idata.posterior
    rec: dict = {"seed": seed, "shape": [args.systems, args.items, 3, args.traits,
                                          args.metrics], "seconds": round(secs, 1),
                 "loadavg": [round(x, 2) for x in os.getloadavg()],
                 "draws": int(post.sizes["draw"]), "chains": int(post.sizes["chain"]),
                 "stop_reason": post.attrs.get("stop_reason"),
                 "parameterization": post.attrs.get("parameterization", "noncentred"),
                 "residuals": args.residuals, "error_corr": args.error_corr,
                 "sampling": args.sampling or "defaults",
                 "compiled_before": int(post.attrs.get("compiled_before", 0)),
                 "seconds_compile": round(float(post.attrs.get("seconds_compile", 0)), 1),
                 "seconds_warmup": round(float(post.attrs.get("seconds_warmup", 0)), 1),
                 "seconds_sampling": round(float(post.attrs.get("seconds_sampling", 0)), 1),
                 "divergences": int(res.idata.sample_stats["diverging"].sum()),
                 "warnings": len(caught)}
    tab = res.summary()
    rec["max_r_hat"] = float(np.nanmax(tab["r_hat"]))
    rec["min_ess_bulk"] = float(np.nanmin(tab["ess_bulk"]))
    rec["min_ess_tail"] = float(np.nanmin(tab["ess_tail"]))
    _posterior_records(rec, "", post, ds)
    if args.residuals == "correlated":
        _residual_records(rec, res, ds)
    if args.classical:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fit = bm.cfa(model, ds)
                cl = bm.metric_variance(ds, fit, random_seed=seed,
                                        resampling={"n_resamples": args.resamples}).summary()
        except ValueError as err:  # e.g. a Heywood case of the WLSMV fit: no EBM scores
            rec["classical_failed"] = str(err)[:200]
            return rec
        _route_records(rec, "classical", cl, ds)
    return rec


def _residual_records(rec: dict, res, ds) -> None:
    """Coverage, error and width of the residual correlations' HDIs against the realized
    ones (not the population's: App. A.6's correlations are of this sample's residuals)."""
    rc = res.residual_correlations()
    corr = realized_error_corr(ds).values
    truth = corr[np.triu_indices(corr.shape[0], 1)]  # rc's order: metric < metric2
    lo, hi = rc["hdi_low"].to_numpy(), rc["hdi_high"].to_numpy()
    rec["residual_corr_cover"] = _cover(lo, hi, truth)
    rec["residual_corr_error"] = [round(float(v), 5) for v in rc["mean"].to_numpy() - truth]
    rec["residual_corr_width"] = [round(float(v), 5) for v in hi - lo]


def _route_records(rec: dict, prefix: str, table, ds) -> None:
    """Coverage, error and width of a metric_variance table's interval columns against the
    simulated truth (standardized validity coefficients and error shares)."""
    lo_col, hi_col, est_col = (("hdi_low", "hdi_high", "mean") if prefix == "two_stage"
                               else ("classical_low", "classical_high", "classical"))
    for est, truth_name in (("validity_coefficient", "true_validity_coefficient"),
                            ("error_share", "true_error_share")):
        part = table.xs(est, level="estimand")
        cov, err, wid = [], [], []
        for m in ds["metric"].values:
            for t in (ds["trait"].values if est == "validity_coefficient" else [""]):
                row = part.loc[(t.lower(), m)] if t else part.loc[("", m)]
                truth = float(ds[truth_name].sel(metric=m, trait=t)) if t else \
                    float(ds[truth_name].sel(metric=m))
                cov.append(bool(row[lo_col] <= truth <= row[hi_col]))
                err.append(round(float(row[est_col]) - truth, 4))
                wid.append(round(float(row[hi_col] - row[lo_col]), 4))
        rec[f"{prefix}_{est}_cover"] = cov
        rec[f"{prefix}_{est}_error"] = err
        rec[f"{prefix}_{est}_width"] = wid


def one_two_stage(seed: int, args: argparse.Namespace) -> dict:
    """The two-stage Bayesian route on dataset ``seed``: Bayesian CFA with its defaults, then
    metric_variance on its posterior-mean scores."""
    ds = _simulate(seed, args)
    model = syntax(args.traits)
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit = bm.cfa(model, ds, estimator="bayes", random_seed=seed)
        res = bm.metric_variance(ds, fit, random_seed=seed)
    tab = res.summary()
    rec = {"seconds": round(time.perf_counter() - t0, 1),
           **_cfa_record(seed, args, fit, tab, caught)}
    _route_records(rec, "two_stage", tab, ds)
    return rec


def _cfa_record(seed: int, args: argparse.Namespace, fit, tab, caught) -> dict:
    """What every route on a Bayesian CFA records: the dataset, the load, the CFA's run and
    the worst R-hat and ESS of the route's table ``tab``."""
    post = fit.idata.posterior
    return {"seed": seed, "shape": [args.systems, args.items, 3, args.traits, args.metrics],
            "loadavg": [round(x, 2) for x in os.getloadavg()],
            "cfa_draws": int(post.sizes["draw"]),
            "cfa_stop_reason": post.attrs.get("stop_reason"),
            "cfa_divergences": int(fit.idata.sample_stats["diverging"].sum()),
            "warnings": len(caught),
            "max_r_hat": float(np.nanmax(tab["r_hat"])),
            "min_ess_bulk": float(np.nanmin(tab["ess_bulk"])),
            "min_ess_tail": float(np.nanmin(tab["ess_tail"]))}


def _posterior_records(rec: dict, prefix: str, post, ds) -> None:
    """Coverage, error and width of the 94% HDIs of a posterior's validity coefficients
    and error variances (raw and standardized) against the simulated truth."""
    for name, truth_name in (("validity_raw", "true_validity_raw"),
                             ("error_variance", "true_error_variance"),
                             ("validity_coefficient", "true_validity_coefficient"),
                             ("error_share", "true_error_share")):
        da = post[name]
        dims = [d for d in ("metric", "trait") if d in da.dims]
        s = summarize(da.transpose("chain", "draw", *dims), ci_prob=0.94)
        truth = ds[truth_name].transpose(*dims).values
        iv = s["interval"].transpose(*dims, "ci_bound").values
        rec[f"{prefix}{name}_cover"] = _cover(iv[..., 0], iv[..., 1], truth)
        rec[f"{prefix}{name}_error"] = np.round((s["mean"].values - truth).ravel(),
                                                4).tolist()
        rec[f"{prefix}{name}_width"] = np.round((iv[..., 1] - iv[..., 0]).ravel(),
                                                4).tolist()
        rec[f"{prefix}{name}_r_hat_max"] = float(s["r_hat"].max())
        rec[f"{prefix}{name}_ess_bulk_min"] = float(s["ess_bulk"].min())


def one_modular(seed: int, args: argparse.Namespace) -> dict:
    """The modular and the two-stage routes on dataset ``seed``, from one Bayesian CFA with
    its defaults (``estimator="modular"`` and the default route of a Bayesian fit)."""
    ds = _simulate(seed, args)
    model = syntax(args.traits)
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit = bm.cfa(model, ds, estimator="bayes", random_seed=seed)
        t_cfa = time.perf_counter() - t0
        t1 = time.perf_counter()
        mod = bm.metric_variance(ds, fit, estimator="modular", random_seed=seed)
        t_mod = time.perf_counter() - t1
        two = bm.metric_variance(ds, fit, random_seed=seed)
    rec = {"seconds_cfa": round(t_cfa, 1), "seconds_modular": round(t_mod, 2),
           **_cfa_record(seed, args, fit, mod.summary(), caught)}
    _posterior_records(rec, "modular_", mod.idata.posterior, ds)
    _route_records(rec, "two_stage", two.summary(), ds)
    _cfa_records(rec, fit.idata.posterior, ds)
    if args.save_moments is not None:  # for offline comparisons of modular variants
        from bayesmeta.validity._joint_build import prepare
        from bayesmeta.validity.modular import score_moments

        jd = prepare(ds, fit, None, None, "first")
        mean, cov = score_moments(fit, jd)
        psi = fit.idata.posterior["factor_corr"].transpose("chain", "draw", "trait",
                                                           "trait2").values
        args.save_moments.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(args.save_moments / f"moments_{seed}.npz", mean=mean, cov=cov,
                            psi=psi, x=jd.x, scale=jd.scale,
                            true_b=ds["true_validity_raw"].values,
                            true_s2=ds["true_error_variance"].values)
    return rec


def _cfa_records(rec: dict, post, ds) -> None:
    """Coverage and error of the Bayesian CFA's own 94% HDIs (the public function's
    defaults) against the simulated truth: standardized loadings, thresholds and factor
    correlations (issue 19: recovery of the CFA under its defaults)."""
    inds = [str(i) for i in post["loading_std"]["indicator"].values]
    rater = [i.rsplit(".", 1)[0] for i in inds]
    trait = [i.rsplit(".", 1)[1] for i in inds]
    truths = {
        "loading_std": np.array([float(ds["true_loading_std"].sel(rater=r, trait=t))
                                 for r, t in zip(rater, trait, strict=True)]),
        "threshold_std": np.stack([ds["true_threshold_std"].sel(rater=r, trait=t)
                                   .sel(cut=list(post["cut"].values)).values
                                   for r, t in zip(rater, trait, strict=True)])}
    traits = [str(t).upper() for t in post["factor_corr"]["trait"].values]
    iu = np.triu_indices(len(traits), 1)
    corr_truth = ds["true_trait_corr"].sel(trait=traits, trait2=traits).values
    for name, truth in truths.items():
        s = summarize(post[name], ci_prob=0.94)
        dims = [d for d in post[name].dims if d not in ("chain", "draw")]
        iv = s["interval"].transpose(*dims, "ci_bound").values
        rec[f"cfa_{name}_cover"] = _cover(iv[..., 0], iv[..., 1], truth)
        rec[f"cfa_{name}_error"] = np.round((s["mean"].transpose(*dims).values - truth)
                                            .ravel(), 4).tolist()
        rec[f"cfa_{name}_r_hat_max"] = float(s["r_hat"].max())
    s = summarize(post["factor_corr"], ci_prob=0.94)
    iv = s["interval"].transpose("trait", "trait2", "ci_bound").values
    rec["cfa_factor_corr_cover"] = _cover(iv[iu][:, 0], iv[iu][:, 1], corr_truth[iu])
    rec["cfa_factor_corr_error"] = np.round(
        s["mean"].transpose("trait", "trait2").values[iu] - corr_truth[iu], 4).tolist()


def summary_modular(path: Path) -> None:
    """Coverage, mean error and width of the modular and two-stage routes (same CFA fits)
    and of the joint route on the seeds it shares."""
    rows = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    joint = {}
    for p in (OUT_NONCENTRED, OUT):
        if p.exists():
            joint.update({(r["seed"], tuple(r["shape"])): r
                          for r in map(json.loads, p.read_text().splitlines()) if r})
    same = [joint[k] for k in ((r["seed"], tuple(r["shape"])) for r in rows) if k in joint]
    print(f"{len(rows)} datasets ({path}); {len(same)} also fitted by the joint route")
    for est in ("validity_raw", "error_variance", "validity_coefficient", "error_share"):
        for label, rs, key in (("modular", rows, f"modular_{est}"),
                               ("two-stage", rows, f"two_stage_{est}"),
                               ("joint, same seeds", same, est),
                               ("classical, same seeds", same, f"classical_{est}")):
            cov = [c for r in rs for c in r.get(f"{key}_cover", [])]
            if not cov:
                continue
            wid = [c for r in rs for c in r.get(f"{key}_width", [])]
            err = [c for r in rs for c in r.get(f"{key}_error", [])]
            print(f"{est:22s} {label:22s} coverage {np.mean(cov):.3f} (n={len(cov)})  "
                  f"mean error {np.mean(err):+.4f}  mean |error| {np.mean(np.abs(err)):.4f}"
                  f"  mean width {np.mean(wid):.3f}")
    for name in ("loading_std", "threshold_std", "factor_corr"):
        cov = [c for r in rows for c in r.get(f"cfa_{name}_cover", [])]
        if cov:
            err = [c for r in rows for c in r.get(f"cfa_{name}_error", [])]
            print(f"CFA {name:18s} (defaults) coverage {np.mean(cov):.3f} (n={len(cov)})  "
                  f"mean error {np.mean(err):+.4f}")
    rh = np.array([r["max_r_hat"] for r in rows])
    eb = np.array([r["min_ess_bulk"] for r in rows])
    print(f"modular: max R-hat <= 1.01 in {np.mean(rh <= 1.01):.2f} of fits (worst "
          f"{rh.max():.3f}); min bulk ESS >= 400 in {np.mean(eb >= 400):.2f} (worst "
          f"{eb.min():.0f}); median seconds: CFA "
          f"{np.median([r['seconds_cfa'] for r in rows]):.0f}, modular step "
          f"{np.median([r['seconds_modular'] for r in rows]):.2f}")


def summary_two_stage(path: Path, joint_path: Path) -> None:
    """Coverage and mean width of the two-stage and the joint route on the same seeds."""
    def key(r: dict) -> tuple:  # the same simulated dataset: seed and shape
        return r["seed"], tuple(r["shape"])

    two = {key(r): r for r in map(json.loads, path.read_text().splitlines()) if r}
    joint = {key(r): r for r in map(json.loads, joint_path.read_text().splitlines())
             if r} if joint_path.exists() else {}
    seeds = sorted(set(two) & set(joint))
    print(f"{len(two)} two-stage datasets ({path}); {len(seeds)} also fitted by the joint "
          f"route")
    for est in ("validity_coefficient", "error_share"):
        for label, rows, key in (("two-stage", [two[s] for s in two], f"two_stage_{est}"),
                                 ("joint, same seeds", [joint[s] for s in seeds], est),
                                 ("classical, same seeds", [joint[s] for s in seeds],
                                  f"classical_{est}")):
            cov = [c for r in rows for c in r.get(f"{key}_cover", [])]
            if not cov:
                continue
            wid = [c for r in rows for c in r.get(f"{key}_width", [])]
            err = [c for r in rows for c in r.get(f"{key}_error", [])]
            print(f"{est:22s} {label:22s} coverage {np.mean(cov):.3f} (n={len(cov)})  "
                  f"mean error {np.mean(err):+.4f}  mean width {np.mean(wid):.3f}")
    rh = np.array([r["max_r_hat"] for r in two.values()])
    print(f"two-stage: max R-hat <= 1.01 in {np.mean(rh <= 1.01):.2f} of fits; CFA "
          f"divergences in {np.mean([r['cfa_divergences'] > 0 for r in two.values()]):.2f}; "
          f"median seconds {np.median([r['seconds'] for r in two.values()]):.0f}")


def summary(path: Path) -> None:
    lines = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    print(f"{len(lines)} datasets ({path})")
    if not lines:
        return
    for key in ("validity_raw", "error_variance", "validity_coefficient", "error_share",
                "classical_validity_coefficient", "classical_error_share",
                "residual_corr"):
        cov = [c for r in lines for c in r.get(f"{key}_cover", [])]
        err = [c for r in lines for c in r.get(f"{key}_error", [])]
        wid = [c for r in lines for c in r.get(f"{key}_width", [])]
        if not cov:
            continue
        if key in ("validity_raw", "error_variance"):  # each metric has its own scale:
            # errors and widths relative to the truth's size (the simulator is seeded)
            truth = []
            for r in lines:
                ds = simulate_joint_validity(r["seed"], n_systems=r["shape"][0],
                                             n_items=r["shape"][1], n_traits=r["shape"][3],
                                             n_metrics=r["shape"][4])
                ev = ds["true_error_variance"].values
                truth.append(ev if key == "error_variance"
                             else np.repeat(np.sqrt(ev), r["shape"][3]))
            size = np.concatenate(truth)
            err, wid = np.asarray(err) / size, np.asarray(wid) / size
            label = "relative error" if key == "error_variance" else "error / error sd"
        else:
            label = "mean error"
        print(f"{key:32s} coverage {np.mean(cov):.3f} (n={len(cov)})  {label} "
              f"{np.mean(err):+.4f}  mean width {np.mean(wid):.3f}")
    failed = sum("classical_failed" in r for r in lines)
    if failed:
        print(f"classical route failed (WLSMV Heywood case or similar) on {failed} datasets")
    rh = np.array([r["max_r_hat"] for r in lines])
    eb = np.array([r["min_ess_bulk"] for r in lines])
    print(f"max R-hat <= 1.01 in {np.mean(rh <= 1.01):.2f} of fits (worst {rh.max():.3f}); "
          f"min bulk ESS >= 400 in {np.mean(eb >= 400):.2f} (worst {eb.min():.0f}); "
          f"divergences in {np.mean([r['divergences'] > 0 for r in lines]):.2f} of fits; "
          f"median seconds {np.median([r['seconds'] for r in lines]):.0f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=100)
    parser.add_argument("--first-seed", type=int, default=1000)
    parser.add_argument("--systems", type=int, default=8)
    parser.add_argument("--items", type=int, default=30)
    parser.add_argument("--traits", type=int, default=4)
    parser.add_argument("--metrics", type=int, default=6)
    parser.add_argument("--resamples", type=int, default=200)
    parser.add_argument("--no-classical", dest="classical", action="store_false")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--two-stage", action="store_true",
                        help="run the two-stage Bayesian route instead of the joint one")
    parser.add_argument("--save-moments", type=Path, default=None,
                        help="with --modular: save each CFA's score moments and Psi draws "
                             "(npz) in this folder")
    parser.add_argument("--modular", action="store_true",
                        help="run the modular and two-stage routes (one CFA fit each)")
    parser.add_argument("--residuals", choices=("independent", "correlated"),
                        default="independent",
                        help="the joint model's metric errors (residuals= of "
                             "bm.metric_variance); 'correlated' writes to "
                             f"{OUT_CORRELATED.name}")
    parser.add_argument("--error-corr", type=float, default=0.0,
                        help="simulate metric errors with this correlation in every pair "
                             "(simulate_joint_validity's error_corr; pass --out)")
    parser.add_argument("--sampling", type=json.loads, default=None, metavar="JSON",
                        help="sampling= of the joint fit (default: its defaults), e.g. "
                             "'{\"tune\": 350}'; recorded in each line")
    parser.add_argument("--summary", action="store_true")
    args = parser.parse_args()
    if args.out is None:
        args.out = (OUT_MODULAR if args.modular else
                    OUT_TWO_STAGE if args.two_stage else
                    OUT_CORRELATED if args.residuals == "correlated" else OUT)
    if args.summary:
        if args.modular:
            summary_modular(args.out)
        elif args.two_stage:
            summary_two_stage(args.out, OUT_NONCENTRED)  # the seeds it shares
        else:
            summary(args.out)
        return
    done = set()
    if args.out.exists():
        done = {json.loads(x)["seed"] for x in args.out.read_text().splitlines() if x.strip()}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    for seed in range(args.first_seed, args.first_seed + args.datasets):
        if seed in done:
            continue
        rec = (one_modular if args.modular else
               one_two_stage if args.two_stage else one)(seed, args)
        with args.out.open("a") as fh:
            fh.write(json.dumps(rec) + "\n")
        if args.modular:
            print(f"seed {seed}: CFA {rec['seconds_cfa']} s, R-hat {rec['max_r_hat']:.3f}, "
                  f"b cover {np.mean(rec['modular_validity_raw_cover']):.2f}", flush=True)
            continue
        if args.two_stage:
            print(f"seed {seed}: {rec['seconds']} s, R-hat {rec['max_r_hat']:.3f}, beta "
                  f"cover {np.mean(rec['two_stage_validity_coefficient_cover']):.2f}",
                  flush=True)
            continue
        print(f"seed {seed}: {rec['seconds']} s, R-hat {rec['max_r_hat']:.3f}, ESS "
              f"{rec['min_ess_bulk']:.0f}, b cover {np.mean(rec['validity_raw_cover']):.2f}",
              flush=True)


if __name__ == "__main__":
    main()
