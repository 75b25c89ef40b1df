"""Variants of the modular metric-validity route, compared offline on the score moments that
``recovery_joint_validity.py --modular --save-moments DIR`` saves per simulated dataset
(issue 22: the route's error-variance intervals cover less than nominal).

* ``A``: the route as built (the scores' average posterior covariance as the Berkson
  error, the normal-theory regression posterior);
* ``B``: the Berkson covariance from the law of total variance, ``Psi - Cov(fbar)``;
* ``C``: a Bayesian bootstrap over outputs (Dirichlet weights) with A's covariance;
* ``D``: a Bayesian bootstrap over outputs with B's covariance, per draw of ``Psi``.

Prints per variant the 94% coverage of raw ``b`` and ``sigma^2``, the mean relative error and
the mean relative width of ``sigma^2``, against the simulated truth.

    python benchmarks/modular_variants.py DIR [--draws 1000]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from bayesmeta.validity.joint_simulate import simulate_joint_validity
from bayesmeta.validity.modular import draw_metric_parameters


def _cover(draws: np.ndarray, truth: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    lo, hi = np.quantile(draws, [0.03, 0.97], axis=0)
    return (lo <= truth) & (truth <= hi), hi - lo


def _total_variance(psi: np.ndarray, mean: np.ndarray) -> np.ndarray:
    star = psi - np.cov(mean.T)
    w, v = np.linalg.eigh(star)
    return (v * np.clip(w, 0, None)) @ v.T


def variant(name: str, d, psi: np.ndarray, draws: int, rng) -> dict[str, np.ndarray]:
    mean, cov, x = d["mean"], d["cov"], d["x"]
    N, T = mean.shape
    M = x.shape[1]
    names = [f"m{j}" for j in range(M)]
    if name == "A":
        return draw_metric_parameters(mean, cov, x, draws, 1, names)
    if name == "B":
        star = _total_variance(psi.mean(0), mean)
        return draw_metric_parameters(mean, np.broadcast_to(star, (N, T, T)), x, draws, 1,
                                      names)
    X = np.column_stack([np.ones(N), mean])
    out = {"loading": np.empty((draws, M, T)), "error_sd": np.empty((draws, M))}
    for s in range(draws):
        w = rng.dirichlet(np.ones(N))
        xw = X * w[:, None]
        g = np.linalg.solve(X.T @ xw, xw.T @ x)
        s2 = (w[:, None] * (x - X @ g) ** 2).sum(0) * N / (N - T - 1)
        if name == "C":
            v = np.einsum("n,ntu->tu", w, cov)
        else:
            mw = w @ mean
            v = psi[s % len(psi)] - ((mean - mw) * w[:, None]).T @ (mean - mw)
        b = g[1:].T
        out["loading"][s] = b
        out["error_sd"][s] = np.sqrt(np.clip(s2 - np.einsum("mt,tu,mu->m", b, v, b),
                                             1e-12, None))
    return out


def _truth(f: Path, d, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The simulated raw validity coefficients and error variances of dataset ``seed``:
    saved with the moments since stop 39; older files hold none, and their truth is
    simulated again, which is right only at the simulator's default shape (checked)."""
    if "true_b" in d:
        return d["true_b"], d["true_s2"]
    ds = simulate_joint_validity(seed)
    shape = (ds.sizes["system"] * ds.sizes["item"], ds.sizes["metric"])
    if tuple(d["x"].shape) != shape:
        raise SystemExit(f"{f.name} holds no simulated truth and its scores have shape "
                         f"{tuple(d['x'].shape)}, not the default shape {shape}: save it "
                         f"again with recovery_joint_validity.py --save-moments")
    return ds["true_validity_raw"].values, ds["true_error_variance"].values


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--draws", type=int, default=1000)
    args = parser.parse_args()
    files = sorted(args.folder.glob("moments_*.npz"))
    rng = np.random.default_rng(0)
    keys = ("b", "s2", "err", "width")
    res = {k: {q: [] for q in keys} for k in "ABCD"}
    for f in files:
        seed = int(f.stem.split("_")[-1])
        d = np.load(f)
        tb, ts2 = _truth(f, d, seed)
        tb, ts2 = tb / d["scale"][:, None], ts2 / d["scale"] ** 2
        psi = d["psi"].reshape(-1, *d["psi"].shape[2:])
        for k in res:
            out = variant(k, d, psi, args.draws, rng)
            cb, _ = _cover(out["loading"], tb)
            cs, ws = _cover(out["error_sd"] ** 2, ts2)
            res[k]["b"] += list(cb.ravel())
            res[k]["s2"] += list(cs)
            res[k]["err"] += list(out["error_sd"].__pow__(2).mean(0) / ts2 - 1)
            res[k]["width"] += list(ws / ts2)
    print(f"{len(files)} datasets ({args.folder})")
    for k, r in res.items():
        print(f"{k}: b coverage {np.mean(r['b']):.3f}  sigma^2 coverage {np.mean(r['s2']):.3f}"
              f"  sigma^2 relative error {np.mean(r['err']):+.3f}  relative width "
              f"{np.mean(r['width']):.3f}")


if __name__ == "__main__":
    main()
