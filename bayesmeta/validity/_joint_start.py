r"""Starting values of the joint metric-validity model from the data's moments (no fit).

From the prior's neighbourhood the chains of the joint model can settle in poor local modes
on data where the metrics share a large factor of their own (SummEval's 43 metrics): the
traits follow the metrics and the experts' loadings fall to nearly 0, a mode with a log
density hundreds of units below the one where the traits stay on the experts
(``models/metric_validity.md``). The chains therefore start at a cheap moment-based
solution with the traits on the experts, each with its own small jitter
(:data:`bayesmeta.sampling.START_JITTER`):

* trait proxies :math:`\hat f_{nt}`: the standardized mean of the trait's standardized
  ratings;
* the thresholds: the marginal proportions' normal quantiles (the model's own initial
  values, here with the small jitter instead of nutpie's U(-1, 1));
* ``loading_std``: each rating's correlation with the mean of the trait's other ratings,
  divided by the square root of that mean's reliability from the same correlations
  (clipped to [0.3, 0.95]; 0.7 with fewer than three ratings per trait);
* the factor correlations: the proxies' correlations divided by the square root of their
  reliabilities (coefficient alpha of the trait's ratings), shrunk to stay positive
  definite, as canonical partial correlations (the LKJ parameterisation's free vector);
* ``metric_loading``: regression calibration, :math:`\hat B = \hat\Psi^{-1}
  \widehat{\mathrm{cov}}(f, x)` with :math:`\widehat{\mathrm{cov}}(f, x)` the proxies'
  covariances with the scores divided by the square roots of their reliabilities;
  ``metric_intercept`` the scores' means;
* ``method_loading`` (K method factors): the first K principal components of the residual
  covariance :math:`S_{xx} - \hat B\hat\Psi\hat B^\top`, with K leading metrics picked
  by a column-pivoted QR and the loadings rotated to the model's lower-triangular form on
  them; ``error_sd`` the residual sd left over (at least 0.1).

Only a starting point: the posterior is unchanged, and R-hat still compares the chains.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bayesmeta.validity._cfa_build import Design, anchor_cuts, start_thresholds

#: ``method_factors="auto"``: a residual eigenvalue above this counts as a method factor
#: (a factor carrying the variance of two metrics' residuals; under independent residuals
#: the largest eigenvalue stays near the Marchenko-Pastur edge (1 + sqrt(M/N))^2, 1.1-1.4
#: at the sizes of the recovery study and of SummEval).
AUTO_EIGENVALUE = 2.0
#: Floor of the residual variances (standardized scores: an error share of 0.1) in the
#: residual correlations of ``"auto"``: a moment solution that overshoots a metric's
#: explained variance otherwise makes its residual correlations explode.
RESID_FLOOR = 0.1
#: ``method_factors="auto"``: at most this many method factors.
AUTO_MAX = 4


def _wide_ratings(design: Design) -> np.ndarray:
    """(N, J) ratings (category codes), NaN where missing."""
    y = np.full((design.n_rows, design.n_indicators), np.nan)
    y[design.row, design.ind] = design.cat
    return y


def _standardize(y: np.ndarray) -> np.ndarray:
    sd = np.nanstd(y, axis=0)
    return (y - np.nanmean(y, axis=0)) / np.where(sd > 0, sd, 1.0)


def _partial_correlations(corr: np.ndarray) -> np.ndarray:
    """The free vector of ``lkj_cholesky`` (arctanh of the canonical partial correlations,
    row-major over the strict lower triangle) whose Cholesky factor gives ``corr`` (each
    partial correlation clipped to +-0.95, so stronger ones are approximated)."""
    L = np.linalg.cholesky(corr)
    n = corr.shape[0]
    out = []
    for i, j in zip(*np.tril_indices(n, -1), strict=True):
        rest = 1.0 - np.sum(L[i, :j] ** 2)
        out.append(np.arctanh(np.clip(L[i, j] / np.sqrt(rest), -0.95, 0.95)))
    return np.array(out)


def _method_loadings(resid_cov: np.ndarray, K: int) -> tuple[np.ndarray, tuple[int, ...]]:
    """(M, K) loadings of the first K principal components and their K leading metrics:
    the pivots of a column-pivoted QR (each the metric with the largest loadings left once
    the previous leaders' directions are removed), the loadings rotated so that the
    leaders' rows form a lower-triangular block with a positive diagonal (the model's
    identification, :func:`~bayesmeta.validity._joint_build.method_structure`)."""
    from scipy import linalg

    vals, vecs = np.linalg.eigh(resid_cov)
    top = np.argsort(vals)[::-1][:K]
    c0 = vecs[:, top] * np.sqrt(np.maximum(vals[top], 1e-6))
    _, _, piv = linalg.qr(c0.T, pivoting=True, mode="economic")
    leaders = tuple(int(j) for j in piv[:K])
    q, r = np.linalg.qr(c0[list(leaders)].T)  # P' = q r, so (c0 q)[leaders] = r'
    c = c0 @ q * np.sign(np.diag(r))[None, :]
    return c, leaders


def moment_solution(design: Design, x: np.ndarray) -> dict[str, np.ndarray]:
    """The moment solution of the module docstring: standardized loadings (J,), factor
    correlations (F, F; 0 between blocks), coefficients ``b`` (M, F), intercepts (M,) and
    the residual covariance of the metrics after the traits (M, M)."""
    F, J = design.n_factors, design.n_indicators
    x = np.nan_to_num(np.asarray(x, dtype=float))
    z = _standardize(_wide_ratings(design))
    proxies = np.zeros((design.n_rows, F))
    loading = np.full(J, 0.7)
    reliab = np.full(F, 0.8)
    for t in range(F):
        idx = np.flatnonzero(design.factor_of == t)
        proxies[:, t] = np.nanmean(z[:, idx], axis=1)
        if idx.size >= 3:
            r = np.ma.corrcoef(np.ma.masked_invalid(z[:, idx]), rowvar=False).filled(0.0)
            k = idx.size
            mean_r = (r.sum() - k) / (k * (k - 1))
            reliab[t] = np.clip(k * mean_r / (1 + (k - 1) * mean_r), 0.3, 0.99)
            for a in range(k):
                others = [b for b in range(k) if b != a]
                rr = r[np.ix_(others, others)]
                m = len(others)
                mr = (rr.sum() - m) / max(m * (m - 1), 1)
                rel_rest = m * mr / (1 + (m - 1) * mr) if mr > 0 else 0.5
                item_rest = r[a, others].mean() * m / np.sqrt(m + m * (m - 1) * mr)
                loading[idx[a]] = item_rest / np.sqrt(max(rel_rest, 0.1))
    proxies = np.nan_to_num(_standardize(proxies))
    loading = np.clip(np.nan_to_num(loading, nan=0.7), 0.3, 0.95)
    same = np.zeros((F, F), dtype=bool)
    for block in design.blocks:
        same[np.ix_(block, block)] = True
    corr = np.corrcoef(proxies, rowvar=False).reshape(F, F)
    corr = np.clip(corr / np.sqrt(np.outer(reliab, reliab)), -0.95, 0.95) * same
    np.fill_diagonal(corr, 1.0)
    while np.linalg.eigvalsh(corr).min() < 0.05:  # shrink towards I until positive definite
        corr = 0.9 * corr + 0.1 * np.eye(F)
    # regression calibration: cov(f, x) = cov(f_hat, x) / sqrt(reliability)
    n = design.n_rows
    xc = x - x.mean(axis=0)
    s_fx = proxies.T @ xc / n / np.sqrt(reliab)[:, None]  # (F, M)
    b = np.linalg.solve(corr, s_fx).T  # (M, F)
    return {"loading": loading, "corr": corr, "b": b, "intercept": x.mean(axis=0),
            "resid_cov": xc.T @ xc / n - b @ corr @ b.T}


def residual_eigenvalues(design: Design, x: np.ndarray,
                         moments: dict[str, np.ndarray] | None = None) -> np.ndarray:
    """Eigenvalues (descending) of the metrics' residual correlation matrix after the
    traits, from the moment solution (the residual variances floored at
    :data:`RESID_FLOOR`); ``moments``: :func:`moment_solution`'s result where the caller
    has it already."""
    cov = (moment_solution(design, x) if moments is None else moments)["resid_cov"]
    d = np.sqrt(np.maximum(np.diag(cov), RESID_FLOOR))
    return np.sort(np.linalg.eigvalsh(cov / np.outer(d, d)))[::-1]


def auto_method_factors(design: Design, x: np.ndarray,
                        moments: dict[str, np.ndarray] | None = None) -> int:
    """``method_factors="auto"``: the number of eigenvalues of the residual correlation
    matrix (:func:`residual_eigenvalues`) above :data:`AUTO_EIGENVALUE`, at most
    :data:`AUTO_MAX` and at most a third of the metrics."""
    vals = residual_eigenvalues(design, x, moments)
    return int(min(np.sum(vals > AUTO_EIGENVALUE), AUTO_MAX, x.shape[1] // 3))


def moment_start(design: Design, x: np.ndarray, method_factors: int = 0,
                 anchor: np.ndarray | None = None,
                 moments: dict[str, np.ndarray] | None = None,
                 orthonormal: bool = False,
                 ) -> tuple[dict[str, Any], tuple[int, ...]]:
    """Starting values (constrained scale, keyed by the model's free variables) of the
    joint model, and the method factors' leading metrics (``()`` without method factors),
    for ratings ``design`` and standardized metric scores ``x`` (N, M; missing scores
    count as the metric's mean here); ``anchor``: the thresholds' anchor cut per rating
    as fixed in the compiled model (default: this design's,
    :func:`~bayesmeta.validity._cfa_build.anchor_cuts`); ``moments``:
    :func:`moment_solution`'s result where the caller has it already; ``orthonormal``:
    the validity coefficients as the marginal model samples them, on orthonormal trait
    coordinates (``metric_loading_orth``,
    :func:`~bayesmeta.validity._joint_build._orthonormal_loadings`). See the module
    docstring."""
    K = int(method_factors)
    mom = moment_solution(design, x) if moments is None else moments
    th0 = start_thresholds(design)
    k0 = anchor_cuts(design) if anchor is None else np.asarray(anchor, dtype=int)
    start: dict[str, Any] = {
        "loading_std": mom["loading"],
        "threshold_anchor": th0[np.arange(design.n_indicators), k0],
        "threshold_log_gaps": np.log(np.maximum(np.diff(th0, axis=1), 1e-2)),
    }
    for g, block in enumerate(design.blocks):
        if len(block) > 1:
            name = f"corr{g}" if len(design.blocks) > 1 else "corr"
            start[f"{name}_free"] = _partial_correlations(mom["corr"][np.ix_(block, block)])
    start["metric_intercept"] = mom["intercept"]
    if orthonormal:  # the marginal model samples beta = B L (``_orthonormal_loadings``)
        start["metric_loading_orth"] = mom["b"] @ np.linalg.cholesky(mom["corr"])
    else:
        start["metric_loading"] = mom["b"]
    resid_cov = mom["resid_cov"]
    err_var = np.diag(resid_cov).copy()
    leaders: tuple[int, ...] = ()
    if K:
        c, leaders = _method_loadings(resid_cov, K)
        start["method_loading_free"] = c
        start["method_loading_diag"] = np.maximum(c[list(leaders), np.arange(K)], 0.05)
        err_var = err_var - np.sum(c**2, axis=1)
    start["error_sd"] = np.sqrt(np.maximum(err_var, 0.01))
    return start, leaders
