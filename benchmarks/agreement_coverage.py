"""Coverage of the agreement toolkit's intervals and type-I error of its paired difference
test, on simulated rater panels whose population coefficients are known in closed form
(issue 24).

Generative model (one trait). Output u = (system s, item i) has a latent quality
:math:`z_u = a_s + b_i + e_u`, :math:`a_s \\sim N(0, \\sigma_a^2)`,
:math:`b_i \\sim N(0, \\sigma_b^2)`, :math:`e_u \\sim N(0, 1 - \\sigma_a^2 - \\sigma_b^2)`,
so :math:`z_u \\sim N(0, 1)`; its true category is :math:`c_u = k` when
:math:`\\tau_{k-1} < z_u \\le \\tau_k` (q = 5 categories 1..5, so
:math:`\\pi_c = \\Phi(\\tau_c) - \\Phi(\\tau_{c-1})`). Each of R exchangeable raters
independently gives the true category with probability :math:`\\rho` and otherwise a draw
from :math:`m(k \\mid c) \\propto 2^{-|k - c|}`, so
:math:`p(k \\mid c) = \\rho[k = c] + (1 - \\rho)\\,m(k \\mid c)`. Ratings are then deleted
completely at random with probability ``missing``.

Population coefficients (the limits of the estimators as the number of outputs grows):
with the rating margins :math:`\\pi_k = \\sum_c \\pi_c p(k \\mid c)` and weights W,

* :math:`p_a = \\sum_c \\pi_c\\, p(\\cdot\\mid c)^\\top W p(\\cdot \\mid c)`
  (``percent_agreement`` with identity W);
* Fleiss' kappa :math:`p_e = \\pi^\\top W \\pi` (also Conger's kappa, the raters being
  exchangeable, and Krippendorff's alpha with the level's W: nominal identity, interval
  quadratic, ordinal Krippendorff's metric of the margins :math:`\\pi`);
* Gwet's AC: :math:`p_e = T_W/(q(q-1)) \\sum_k \\pi_k(1 - \\pi_k)`; Brennan-Prediger
  :math:`T_W/q^2`; each coefficient :math:`(p_a - p_e)/(1 - p_e)`;
* ICC: with :math:`\\mu_c = E[Y \\mid c]`, single-rating forms
  :math:`\\mathrm{Var}_c(\\mu_c)/\\mathrm{Var}(Y)` (one-way, two-way agreement and
  consistency coincide: the raters have no biases), average forms by Spearman-Brown.

The script checks these closed forms against one panel of 400,000 outputs first
(``"kind": "truth_check"`` lines).

Coverage: for each scenario and replicate, ``bm.agreement_coefficients`` with
``resampling={"n_resamples": B}`` (default unit: items) gives the default analytic interval
(Gwet's variance; for the ICC the jackknife t interval, with McGraw & Wong's F interval as
``f_interval``), the percentile bootstrap of items (``bootstrap_low/high``) and the
Bayesian-bootstrap HDI (``hdi_low/high``), all at ``ci_prob=0.94``. Type-I error: two
traits with the same parameters on the same outputs (latent correlation 0.6, so the test's
pairing matters) are compared with ``bm.compare_agreement`` at ``ci_prob=0.95`` for every
coefficient; ``normal`` is the function's test (``p_value < 0.05``, the same as its
classical interval excluding 0), ``bayesian_bootstrap`` declares :math:`P(A > B) < 0.025`
or :math:`> 0.975`, ``percentile`` the 95% percentile bootstrap interval excluding 0.

Scenarios: ``iid_*`` have one system (outputs independent); ``crossed`` has 10 systems x 40
items with system and item effects, as in SummEval.

    nice python benchmarks/agreement_coverage.py --replicates 400 --n-resamples 1000 \
        --out benchmarks/results/agreement_calibration.jsonl
    nice python benchmarks/agreement_coverage.py --type1-only --replicates 400 \
        --out benchmarks/results/agreement_type1.jsonl

History. A first run (``results/agreement_coverage.jsonl``; resampling systems and items,
F intervals as the ICC default, percentile tests) found: Gwet's variance and both
resamplings calibrated for independent outputs (91-96%); the F intervals under-covering
(81-90%) on 5-category ratings; weighing systems and items over-covering the crossed panel
(98.5-99.8%, the residual variance counted two or three times, Owen & Eckles 2012); the
percentile tests over-rejecting (6-8.5%) for the ICC and Krippendorff's ordinal alpha.

Measured with the current defaults (``results/agreement_calibration.jsonl``, 400
replicates per scenario, 1,000 resamples, 1,600 replicates in about 28 min under load
averages 17-21 on 2 cores), share of 94% intervals covering the truth, min-max over the
12 coefficients (ICC forms apart), binomial se 0.009-0.016::

    scenario            Gwet         ICC jackknife  ICC F        bootstrap    Bayes. boot.
    iid_n200            0.918-0.943  0.928-0.933    0.845-0.850  0.912-0.948  0.910-0.938
    iid_n50             0.938-0.953  0.940-0.945    0.895-0.898  0.928-0.955  0.920-0.938
    iid_n200_missing30  0.948-0.963  0.903-0.905    0.848-0.855  0.933-0.958  0.883-0.955
    crossed_10x40       0.925-0.965  0.928-0.933    0.810-0.813  0.895-0.953  0.888-0.940

("Gwet", "ICC jackknife": the default analytic ``classical_low/high``.)
Every default interval (analytic, Bayesian bootstrap) is within 0.88-0.99; the lowest are
the ICC's Bayesian-bootstrap intervals on ~48 complete outputs (missing30, 0.883-0.890) and
on the crossed panel (0.888-0.895). The same file's ``type1`` lines are of a superseded
test (normal with the bootstrap sd, commit abf4868): 2.1-7.4%, over 5% where the bootstrap
sd was 6-8% too small (n = 50, or the ICC single forms on 48 complete outputs).

Type-I error of ``bm.compare_agreement``'s test (t with the paired jackknife se; the
current default) at 5%, **1,300 replicates per scenario** (400 in stop 27, resumed to 1,300
in stop 28 with ``--replicates 1600``, stopped at 1,300 for time), every coefficient
(``results/agreement_type1.jsonl``, fits at load 8-14), min-max over the 12 coefficients
(Monte Carlo se 0.006)::

    scenario            jackknife t (the test)  Bayesian P(A>B)  percentile bootstrap
    iid_n50             0.018-0.055             0.061-0.081      0.057-0.069
    iid_n200            0.035-0.048             0.043-0.055      0.049-0.051
    iid_n200_missing30  0.024-0.061             0.058-0.077      0.060-0.069
    crossed_10x40       0.042-0.056             0.059-0.066      0.059-0.067

No cell of the test is significantly above 0.05: the highest, 0.061 (percent agreement,
Brennan-Prediger and Krippendorff's nominal alpha on the missing30 panel), has a one-sided
binomial p of 0.046 before correcting for the 48 cells (Holm's threshold 0.001), and the
highest of 48 independent cells of a test exactly at 5% with 1,300 replicates reaches
0.061 with probability about 0.9. Pooled over the four scenarios (5,200 replicates, se 0.003) the
coefficients reject 0.030-0.054, the nominal family at 0.052-0.054 (z <= 1.3), the ICC
average forms at 0.030-0.031 (conservative). The 400-replicate cells above 0.05 in stop 27
(0.065 Krippendorff ordinal at n = 200, 0.070 single ICCs on missing30) came down to 0.048
and 0.059: consistent with 5% within Monte Carlo error. ``P(A > B)`` is a posterior probability, not
a test: read as one it rejects up to 8.1%.

Each replicate is one JSON line (``"kind": "replicate"``) appended as it finishes, so a
stopped run keeps what it did; ``--summarise`` appends one ``"kind": "coverage"`` line per
(scenario, coefficient, interval) and one ``"kind": "type1"`` line per (scenario,
coefficient, test), with binomial standard errors.
"""

from __future__ import annotations

import argparse
import json
import os
import time
import warnings
from pathlib import Path

import numpy as np
import xarray as xr
from scipy import stats

import bayesmeta as bm
from bayesmeta.agreement.chance import _ordinal_krippendorff_weights, weight_matrix

Q = 5
CATS = np.arange(1, Q + 1, dtype=float)
TAU = np.array([-1.4, -0.5, 0.4, 1.2])        # category shares 0.08, 0.23, 0.35, 0.23, 0.12
COEFS = ["percent_agreement", "fleiss_kappa", "conger_kappa", "gwet_ac", "brennan_prediger",
         "krippendorff_nominal", "krippendorff_ordinal", "krippendorff_interval",
         "icc_oneway_single", "icc_twoway_agreement_single", "icc_twoway_agreement_average",
         "icc_twoway_consistency_average"]
COMPARED = COEFS                            # every coefficient's difference is tested
ICC = [c for c in COEFS if c.startswith("icc_")]
SCENARIOS = {
    "iid_n200": dict(S=1, I=200, R=3, rho=0.6, var_a=0.0, var_b=0.0, missing=0.0),
    "iid_n50": dict(S=1, I=50, R=3, rho=0.6, var_a=0.0, var_b=0.0, missing=0.0),
    "iid_n200_missing30": dict(S=1, I=200, R=4, rho=0.6, var_a=0.0, var_b=0.0, missing=0.3),
    "crossed_10x40": dict(S=10, I=40, R=3, rho=0.6, var_a=0.2, var_b=0.2, missing=0.0),
}


def response_probs(rho: float) -> np.ndarray:
    """p(k | c), rows c."""
    m = 0.5 ** np.abs(np.subtract.outer(np.arange(Q), np.arange(Q)))
    m /= m.sum(1, keepdims=True)
    return rho * np.eye(Q) + (1 - rho) * m


def class_probs() -> np.ndarray:
    return np.diff(stats.norm.cdf(np.concatenate([[-np.inf], TAU, [np.inf]])))


def population(rho: float, R: int) -> dict[str, float]:
    """Closed-form population value of every coefficient in :data:`COEFS`."""
    pc, P = class_probs(), response_probs(rho)
    pi = pc @ P

    def pa(W):
        return float(np.einsum("c,ck,kl,cl->", pc, P, W, P))

    def fleiss(W):
        pe = pi @ W @ pi
        return (pa(W) - pe) / (1 - pe)

    eye = weight_matrix(CATS, "identity")
    pe_ac = eye.sum() / (Q * (Q - 1)) * (pi * (1 - pi)).sum()
    mu = P @ CATS
    var_y = pi @ CATS**2 - (pi @ CATS) ** 2
    icc1 = (pc @ mu**2 - (pc @ mu) ** 2) / var_y
    icck = R * icc1 / (1 + (R - 1) * icc1)
    return {
        "percent_agreement": pa(eye), "fleiss_kappa": fleiss(eye), "conger_kappa": fleiss(eye),
        "gwet_ac": (pa(eye) - pe_ac) / (1 - pe_ac),
        "brennan_prediger": (pa(eye) - 1 / Q) / (1 - 1 / Q),
        "krippendorff_nominal": fleiss(eye),
        "krippendorff_ordinal": fleiss(_ordinal_krippendorff_weights(pi[None])[0]),
        "krippendorff_interval": fleiss(weight_matrix(CATS, "quadratic")),
        "icc_oneway_single": icc1, "icc_twoway_agreement_single": icc1,
        "icc_twoway_agreement_average": icck, "icc_twoway_consistency_average": icck,
    }


def simulate(rng: np.random.Generator, S: int, I: int, R: int, rho: float, var_a: float,
             var_b: float, missing: float, n_traits: int = 1, trait_corr: float = 0.6
             ) -> xr.Dataset:
    """A bayesmeta dataset of ratings (system, item, rater, trait) from the model above;
    traits share the system and item effects and have latent residuals correlated
    ``trait_corr``."""
    var_e = 1 - var_a - var_b
    a = rng.normal(scale=np.sqrt(var_a), size=(S, 1, 1))
    b = rng.normal(scale=np.sqrt(var_b), size=(1, I, 1))
    shared = rng.normal(size=(S, I, 1))
    own = rng.normal(size=(S, I, n_traits))
    e = np.sqrt(trait_corr) * shared + np.sqrt(1 - trait_corr) * own
    z = a + b + np.sqrt(var_e) * e                                          # (S, I, T)
    c = np.searchsorted(TAU, z)                                             # 0..Q-1
    cum = np.cumsum(response_probs(rho), axis=1)                            # (Q, Q)
    u = rng.random((S, I, R, n_traits))
    k = (u[..., None] > cum[c][:, :, None, :, :]).sum(-1)                   # (S, I, R, T)
    y = (k + 1).astype(float)
    y[rng.random(y.shape) < missing] = np.nan
    rating = xr.DataArray(
        y, dims=("system", "item", "rater", "trait"),
        coords={"system": [f"s{j}" for j in range(S)], "item": [f"i{j}" for j in range(I)],
                "rater": [f"r{j}" for j in range(R)],
                "trait": [f"T{j}" for j in range(n_traits)]},
        attrs={"scale_min": 1, "scale_max": Q})
    return xr.Dataset({"rating": rating})


def truth_check(out, seed: int) -> None:
    rng = np.random.default_rng(seed)
    for rho, R in ((0.6, 3), (0.6, 4)):
        ds = simulate(rng, 1, 400_000, R, rho, 0.0, 0.0, 0.0)
        truth = population(rho, R)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = bm.agreement_coefficients(ds, coefficients=COEFS).summary()
        for c in COEFS:
            row = est.loc[(c, "T0")]
            out.write(json.dumps({"kind": "truth_check", "rho": rho, "raters": R,
                                  "n_outputs": 400_000, "estimand": c, "truth": truth[c],
                                  "estimate": float(row["classical"]),
                                  "analytic_halfwidth": float(row["classical_high"]
                                                              - row["classical"])}) + "\n")
        out.flush()


def replicate(name: str, spec: dict, rep: int, n_resamples: int, seed: int,
              unit: str | None = None, type1_only: bool = False) -> dict:
    """One panel: coverage of every default and alternative interval, and the paired tests
    of two traits with equal parameters. ``unit=None`` uses the functions' default
    resampling unit (items)."""
    rng = np.random.default_rng([seed, rep, sum(map(ord, name))])
    truth = population(spec["rho"], spec["R"])
    ds = simulate(rng, **spec, n_traits=2)
    one = ds.isel(trait=[0])
    opts = {"n_resamples": n_resamples, **({} if unit is None else {"unit": unit})}
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = None if type1_only else bm.agreement_coefficients(
            one, coefficients=COEFS, resampling=opts, random_seed=rep, ci_prob=0.94)
        comp = bm.compare_agreement(ds, coefficients=COMPARED, resampling=opts,
                                    random_seed=rep, ci_prob=0.95)
    elapsed = time.perf_counter() - t0
    cover = {}
    for c in [] if res is None else COEFS:
        tab, det = res.summary(), res.details()
        r, d, tr = tab.loc[(c, "T0")], det.loc[(c, "T0")], truth[c]
        cover[c] = {
            "estimate": float(r["classical"]), "truth": tr,
            "analytic": bool(r["classical_low"] <= tr <= r["classical_high"]),
            "bootstrap": bool(d["bootstrap_low"] <= tr <= d["bootstrap_high"]),
            "bayesian_bootstrap": bool(r["hdi_low"] <= tr <= r["hdi_high"]),
            "analytic_width": float(r["classical_high"] - r["classical_low"]),
            "bayes_sd": float(r["sd"]),
        }
        if c in ICC:
            cover[c]["f_interval"] = bool(d["f_low"] <= tr <= d["f_high"])
    ctab, cdet = comp.summary(), comp.details()
    reject = {}
    for c in COMPARED:
        key = (c, "T0", "T1")
        p = float(cdet.loc[key, "p_greater"])
        lo, hi = (float(cdet.loc[key, k]) for k in ("bootstrap_low", "bootstrap_high"))
        reject[c] = {"difference": float(ctab.loc[key, "classical"]),
                     "se": float(cdet.loc[key, "se"]), "bayes_sd": float(ctab.loc[key, "sd"]),
                     "p_value": float(cdet.loc[key, "p_value"]),
                     "normal": bool(ctab.loc[key, "classical_low"] > 0
                                    or ctab.loc[key, "classical_high"] < 0),
                     "bayesian_bootstrap": bool(min(p, 1 - p) < 0.025),
                     "percentile": bool(lo > 0 or hi < 0)}
    return {"kind": "replicate", "scenario": name, **spec, "replicate": rep,
            "n_resamples": n_resamples, "unit": unit or "items (default)",
            "seconds": round(elapsed, 3),
            "load": [round(x, 2) for x in os.getloadavg()], "coverage": cover,
            "reject": reject}


def summarise(path: Path) -> list[dict]:
    reps = [json.loads(line) for line in path.read_text().splitlines()
            if line.startswith('{"kind": "replicate"')]
    out = []
    for name in SCENARIOS:
        rs = [r for r in reps if r["scenario"] == name]
        if not rs:
            continue
        n = len(rs)
        for c in COEFS if rs[0]["coverage"] else []:
            est = np.array([r["coverage"][c]["estimate"] for r in rs])
            kinds = ("analytic", "bootstrap", "bayesian_bootstrap") + (
                ("f_interval",) if c in ICC else ())
            for kind in kinds:
                hit = np.array([r["coverage"][c][kind] for r in rs], dtype=float)
                p = hit.mean()
                out.append({"kind": "coverage", "scenario": name, "estimand": c,
                            "interval": kind, "default": kind in ("analytic",
                                                                  "bayesian_bootstrap"),
                            "ci_prob": 0.94, "replicates": n, "coverage": round(p, 4),
                            "binomial_se": round(float(np.sqrt(p * (1 - p) / n)), 4),
                            "within_88_99": bool(0.88 <= p <= 0.99),
                            "truth": rs[0]["coverage"][c]["truth"],
                            "bias": float(est.mean() - rs[0]["coverage"][c]["truth"]),
                            "sd_estimate": float(est.std(ddof=1))})
        for c in COMPARED:
            d = np.array([r["reject"][c]["difference"] for r in rs])
            se = np.array([r["reject"][c]["se"] for r in rs])
            for kind in ("normal", "bayesian_bootstrap", "percentile"):
                rej = np.array([r["reject"][c][kind] for r in rs], dtype=float)
                p = rej.mean()
                out.append({"kind": "type1", "scenario": name, "estimand": c, "test": kind,
                            "default": kind == "normal", "level": 0.05, "replicates": n,
                            "rejection_rate": round(p, 4),
                            "binomial_se": round(float(np.sqrt(max(p, 1 / n) * (1 - p) / n)),
                                                 4),
                            "at_most_005": bool(p <= 0.05),
                            "sd_difference": float(d.std(ddof=1)),
                            "mean_se": float(np.nanmean(se))})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=400)
    parser.add_argument("--n-resamples", type=int, default=1000)
    parser.add_argument("--scenarios", nargs="*", default=list(SCENARIOS))
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--unit", default=None, help="resampling unit (default: the "
                        "functions' default, items)")
    parser.add_argument("--out", type=Path,
                        default=Path("benchmarks/results/agreement_calibration.jsonl"))
    parser.add_argument("--summarise", action="store_true",
                        help="only append the summary lines of the replicates in --out")
    parser.add_argument("--no-truth-check", action="store_true")
    parser.add_argument("--type1-only", action="store_true",
                        help="only the paired tests (bm.compare_agreement)")
    args = parser.parse_args()
    if args.summarise:
        lines = summarise(args.out)
        with args.out.open("a") as out:
            for line in lines:
                out.write(json.dumps(line) + "\n")
        for line in lines:
            print(json.dumps(line))
        return
    args.out.parent.mkdir(parents=True, exist_ok=True)
    done = set()
    if args.out.exists():
        for line in args.out.read_text().splitlines():
            r = json.loads(line)
            if r["kind"] == "replicate":
                done.add((r["scenario"], r["replicate"]))
    with args.out.open("a") as out:
        if not args.no_truth_check and not args.type1_only and not done:
            truth_check(out, args.seed)
        for rep in range(args.replicates):       # scenarios interleaved: a stop keeps all
            for name in args.scenarios:
                if (name, rep) in done:
                    continue
                row = replicate(name, SCENARIOS[name], rep, args.n_resamples, args.seed,
                                args.unit, args.type1_only)
                out.write(json.dumps(row) + "\n")
                out.flush()


if __name__ == "__main__":
    main()
