"""Coverage of ``bm.omega_ordinal``'s delta-method Wald interval on simulated ordinal
ratings whose population omega is known in closed form (issue 24).

Model: one factor :math:`\\eta \\sim N(0, 1)`, indicator j's latent response
:math:`y^*_j = \\lambda_j\\eta + \\sqrt{1 - \\lambda_j^2}\\,\\varepsilon_j`, rating
:math:`1 + \\sum_c [y^*_j > \\tau_c]` (5 categories). The population polychoric correlation is
:math:`\\lambda_j\\lambda_{j'}`, so the population omega (Green & Yang 2009) is
:math:`\\sum S(\\lambda\\lambda^\\top)/\\sum S(R)` with :math:`R = \\lambda\\lambda^\\top` off
the diagonal and 1 on it, :math:`S` as in :mod:`bayesmeta.agreement.omega`.

    nice python benchmarks/omega_coverage.py --replicates 300 \\
        --out benchmarks/results/omega_coverage.jsonl

One ``"kind": "replicate"`` line per fit (appended as it finishes), then with
``--summarise`` one ``"kind": "coverage"`` line per scenario with its binomial standard
error.

Measured (300 replicates per scenario, median 1.1 s per CFA + omega under load averages
13-24 on 2 cores), 94% Wald intervals with the delta-method se::

    scenario             coverage (se)   mean se / sd of the estimates   bias
    n100_lambda_mixed    0.917 (0.016)   0.0413 / 0.0431                 +0.004
    n300_lambda_mixed    0.917 (0.016)   0.0249 / 0.0264                 +0.001
    n300_lambda_high3    0.930 (0.015)   0.0183 / 0.0182                 -0.001

The delta-method se is 0-6% below the sampling sd (the Gauss-Newton derivative of the DWLS
loadings ignores the residuals' curvature in the over-identified models); coverage is
within 88-99% but about 2 points under nominal for 4 indicators.
"""

from __future__ import annotations

import argparse
import json
import os
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import bayesmeta as bm
from bayesmeta.agreement.omega import _sum_covariance

TAU = np.array([-1.3, -0.4, 0.4, 1.3])
SCENARIOS = {
    "n100_lambda_mixed": dict(n=100, lam=[0.5, 0.6, 0.7, 0.8]),
    "n300_lambda_mixed": dict(n=300, lam=[0.5, 0.6, 0.7, 0.8]),
    "n300_lambda_high3": dict(n=300, lam=[0.8, 0.8, 0.8]),
}


def truth(lam: list[float]) -> float:
    lam_v = np.asarray(lam)
    common = np.outer(lam_v, lam_v)
    r = common.copy()
    np.fill_diagonal(r, 1.0)
    tau = [TAU] * len(lam_v)
    return _sum_covariance(tau, common) / _sum_covariance(tau, r)


def replicate(name: str, spec: dict, rep: int, seed: int) -> dict:
    rng = np.random.default_rng([seed, rep, sum(map(ord, name))])
    lam = np.asarray(spec["lam"])
    eta = rng.normal(size=(spec["n"], 1))
    ystar = lam * eta + np.sqrt(1 - lam**2) * rng.normal(size=(spec["n"], lam.size))
    y = 1 + (ystar[..., None] > TAU).sum(-1)
    cols = [f"x{j + 1}" for j in range(lam.size)]
    frame = pd.DataFrame(y.astype(float), columns=cols)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = bm.omega_ordinal(bm.cfa("f =~ " + " + ".join(cols), frame))
    row = res.summary().loc[("omega_ordinal", "f")]
    tr = truth(spec["lam"])
    return {"kind": "replicate", "scenario": name, **spec, "replicate": rep,
            "truth": tr, "estimate": float(row["classical"]),
            "se": float(res.details().loc[("omega_ordinal", "f"), "se"]),
            "low": float(row["classical_low"]), "high": float(row["classical_high"]),
            "covered": bool(row["classical_low"] <= tr <= row["classical_high"]),
            "ci_prob": res.ci_prob, "seconds": round(time.perf_counter() - t0, 3),
            "load": [round(x, 2) for x in os.getloadavg()]}


def summarise(path: Path) -> list[dict]:
    reps = [json.loads(line) for line in path.read_text().splitlines()
            if line.startswith('{"kind": "replicate"')]
    out = []
    for name in SCENARIOS:
        rs = [r for r in reps if r["scenario"] == name]
        if not rs:
            continue
        n = len(rs)
        hit = np.array([r["covered"] for r in rs], dtype=float)
        est = np.array([r["estimate"] for r in rs])
        se = np.array([r["se"] for r in rs])
        p = float(hit.mean())
        out.append({"kind": "coverage", "scenario": name, "ci_prob": rs[0]["ci_prob"],
                    "replicates": n, "coverage": round(p, 4),
                    "binomial_se": round(float(np.sqrt(p * (1 - p) / n)), 4),
                    "within_88_99": bool(0.88 <= p <= 0.99), "truth": rs[0]["truth"],
                    "bias": float(est.mean() - rs[0]["truth"]),
                    "sd_estimate": float(est.std(ddof=1)), "mean_se": float(np.nanmean(se))})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=300)
    parser.add_argument("--seed", type=int, default=2025)
    parser.add_argument("--out", type=Path,
                        default=Path("benchmarks/results/omega_coverage.jsonl"))
    parser.add_argument("--summarise", action="store_true")
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
        for rep in range(args.replicates):
            for name, spec in SCENARIOS.items():
                if (name, rep) not in done:
                    out.write(json.dumps(replicate(name, spec, rep, args.seed)) + "\n")
                    out.flush()


if __name__ == "__main__":
    main()
