r"""Quantities computed from the posterior of the Bayesian ordinal CFA: factor scores of
the augmented model, theta-parameterization loadings and thresholds, post-sampling
identification checks, the fit indices and ppp of Garnier-Villarreal & Jorgensen (2020),
and the marginal log likelihood that LOO uses.

Part of :mod:`bayesmeta.validity.ordinal_cfa` (formulas in its docstring and in
``models/ordinal_cfa.md``). NumPy, SciPy and numba; PyMC is not needed here.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import xarray as xr
from scipy import special, stats

from bayesmeta.summaries import summarize
from bayesmeta.validity._cfa_build import Design
from bayesmeta.validity._cfa_setup import _Data
from bayesmeta.validity.syntax import ModelSpec

__all__ = ["draw_factor_scores", "fit_measures", "identification_warnings",
           "marginal_log_likelihood", "theta_quantities"]


# ============================================================================ derived
def draw_factor_scores(idata: Any, design: Design, seed: int) -> None:
    r"""Factor scores of the augmented model: given the latent responses, :math:`\eta_n`
    is normal with the stored mean and covariance :math:`\Psi - A A^\top`,
    :math:`A = \Psi \Lambda^{*\top} L^{-\top}` (the same for every output); one draw per
    posterior draw, seeded by the fit's seed."""
    post = idata.posterior
    mean = post["factor_score_mean"]
    C, S = post.sizes["chain"], post.sizes["draw"]
    F, J = design.n_factors, design.n_indicators
    lstd = post["loading_std"].values.reshape(-1, J)
    psi = post["factor_corr"].values.reshape(-1, F, F)
    lam = lstd[:, :, None] * np.eye(F)[design.factor_of][None]  # (S, J, F)
    sigma = lam @ psi @ np.swapaxes(lam, 1, 2)
    idx = np.arange(J)
    sigma[:, idx, idx] = 1.0
    L = np.linalg.cholesky(sigma)
    A = np.swapaxes(np.linalg.solve(L, lam @ psi), 1, 2)  # (S, F, J)
    cond = psi - A @ np.swapaxes(A, 1, 2)
    cond = 0.5 * (cond + np.swapaxes(cond, 1, 2)) + 1e-12 * np.eye(F)
    chol = np.linalg.cholesky(cond)  # (S, F, F)
    rng = np.random.default_rng([seed, 20261122])
    z = rng.standard_normal((C * S, design.n_rows, F))
    noise = np.einsum("sfg,sng->snf", chol, z).reshape(C, S, design.n_rows, F)
    post["factor_score"] = mean + xr.DataArray(noise, dims=mean.dims)
    idata.posterior = post.drop_vars("factor_score_mean")


def theta_quantities(idata: Any) -> None:
    """Add the theta-parameterization loadings and thresholds and the residual variances
    to the posterior."""
    post = idata.posterior
    lstd = post["loading_std"]
    s = np.sqrt((1 - lstd) * (1 + lstd))
    post["loading"] = lstd / s
    post["threshold"] = post["threshold_std"] / s
    post["residual_var_std"] = 1 - lstd**2
    idata.posterior = post


def identification_warnings(idata: Any, design: Design, spec: ModelSpec) -> list[str]:
    """Warnings after sampling: loadings at the boundary, indicators with few ratings."""
    notes = []
    lstd = idata.posterior["loading_std"]
    upper = lstd.quantile(0.97, dim=("chain", "draw"))
    for j in range(design.n_indicators):
        if float(upper.isel(indicator=j)) > 0.995:
            notes.append(
                f"the standardized loading of {spec.observed[j]!r} reaches the boundary 1 "
                f"(97% quantile {float(upper.isel(indicator=j)):.4f}; a Heywood case in "
                f"WLSMV): the data cannot bound it from above, so its upper tail and the "
                f"residual variance 1 - loading^2 near 0 reflect the prior.")
    n_per = np.bincount(design.ind, minlength=design.n_indicators)
    for j, n in enumerate(n_per):
        if n < 50:
            notes.append(f"indicator {spec.observed[j]!r} has only {n} observed ratings.")
    return notes


# ============================================================================ fit measures
def _sample_stats_map(sample: Any, design: Design, scale: tuple[int, int]) -> list[tuple]:
    """For each sample threshold, the model's (indicator, cut) index."""
    out = []
    for j, levels in enumerate(sample.levels):
        for c in range(len(levels) - 1):
            out.append((j, int(levels[c]) - scale[0]))
    return out


def _implied(lstd: np.ndarray, tau: np.ndarray, corr: np.ndarray, design: Design,
             th_map: list[tuple], pairs: list[tuple[int, int]]) -> np.ndarray:
    """Model-implied (thresholds, polychorics) per draw: arrays (S, J), (S, J, K-1),
    (S, F, F) -> (S, p*)."""
    jj = np.array([j for j, _ in th_map])
    cc = np.array([c for _, c in th_map])
    th = tau[:, jj, cc]
    fo = design.factor_of
    ii = np.array([i for i, _ in pairs])
    kk = np.array([k for _, k in pairs])
    rho = lstd[:, ii] * lstd[:, kk] * corr[:, fo[ii], fo[kk]]
    return np.concatenate([th, rho], axis=1)


def _rep_statistics(y: np.ndarray, th_map: list[tuple], scale: tuple[int, int]) -> np.ndarray:
    """Sample thresholds (at the observed data's cuts) and polychorics of a replicate."""
    from bayesmeta.validity.polychoric import polychoric

    n = np.isfinite(y).sum(axis=0)
    th = []
    for j, c in th_map:
        col = y[:, j]
        p = np.sum(col[np.isfinite(col)] <= c + scale[0]) / n[j]
        th.append(stats.norm.ppf(np.clip(p, 0.5 / n[j], 1 - 0.5 / n[j])))
    fit = polychoric(y, acov=False)
    return np.concatenate([th, [fit.correlation[i, k] for i, k in fit.pairs]])


def fit_measures(idata: Any, design: Design, data: _Data, *, n_ppc: int,
                 random_seed: int | None, ci_prob: float) -> tuple[pd.DataFrame, dict]:
    """Posterior of BRMSEA, BCFI, BTLI and the discrepancy (mean, sd, HDI, R-hat, ESS from
    :func:`bayesmeta.summaries.summarize`), the ppp, pD and df (module docstring of
    :mod:`bayesmeta.validity.ordinal_cfa`)."""
    from bayesmeta.validity.polychoric import polychoric

    sample = polychoric(data.values, acov=True)
    th_map = _sample_stats_map(sample, design, data.scale)
    pairs = sample.pairs
    s = sample.statistics
    N = sample.n_obs
    gamma = sample.gamma
    W = np.linalg.pinv(gamma)
    p_star = s.size
    n_th = sample.n_thresholds
    post = idata.posterior
    lstd = post["loading_std"].values.reshape(-1, design.n_indicators)
    tau = post["threshold_std"].values.reshape(-1, design.n_indicators,
                                               design.n_categories - 1)
    corr = post["factor_corr"].values.reshape(-1, design.n_factors, design.n_factors)
    sig = _implied(lstd, tau, corr, design, th_map, pairs)
    res = s[None, :] - sig
    D = N * np.einsum("si,ij,sj->s", res, W, res)
    sig_bar = _implied(lstd.mean(0)[None], tau.mean(0)[None], corr.mean(0)[None], design,
                       th_map, pairs)
    rb = s - sig_bar[0]
    pD_dic = float(D.mean() - N * rb @ W @ rb)
    # free parameters of the limited-information model (as lavaan's df): loadings, the
    # thresholds in s and the free factor correlations. The DIC-style pD of D is reported
    # but not used: the full-information posterior is not centred on the WLS minimum, so
    # mean(D) - D(mean) does not estimate the number of parameters (it gave 119 > p* = 114
    # on SummEval, i.e. negative df).
    n_corr = sum(len(b) * (len(b) - 1) // 2 for b in design.blocks)
    pD = float(design.n_indicators + n_th + n_corr)
    df = p_star - pD
    s_rho = s[n_th:]
    D0 = float(N * s_rho @ np.linalg.pinv(gamma[n_th:, n_th:]) @ s_rho)
    d0 = p_star - n_th
    nonc = np.maximum(D - p_star, 0.0)
    brmsea = np.sqrt(nonc / (df * N))
    bcfi = 1 - nonc / (D0 - d0)
    btli = (D0 / d0 - (D - pD) / df) / (D0 / d0 - 1)
    rows = {"brmsea": brmsea, "bcfi": bcfi, "btli": btli, "chisq_discrepancy": D}
    info = {"p_star": p_star, "pD": pD, "pD_dic": pD_dic, "df": df, "baseline_chisq": D0,
            "baseline_df": d0}
    ppp = np.nan
    if n_ppc > 0:
        rng = np.random.default_rng(random_seed)
        idx = rng.choice(D.size, size=min(n_ppc, D.size), replace=False)
        miss = ~np.isfinite(data.values)
        exceed = []
        for k in idx:
            L = np.linalg.cholesky(corr[k] + 1e-12 * np.eye(design.n_factors))
            eta = rng.standard_normal((N, design.n_factors)) @ L.T
            ystar = (lstd[k][None] * eta[:, design.factor_of]
                     + np.sqrt(1 - lstd[k] ** 2)[None] * rng.standard_normal(
                         (N, design.n_indicators)))
            y = data.scale[0] + (ystar[:, :, None] > tau[k][None]).sum(-1).astype(float)
            y[miss] = np.nan
            try:
                s_rep = _rep_statistics(y, th_map, data.scale)
            except (ValueError, np.linalg.LinAlgError):
                continue
            r_rep = s_rep - sig[k]
            exceed.append(N * r_rep @ W @ r_rep >= D[k])
        ppp = float(np.mean(exceed)) if exceed else np.nan
        info["n_ppc"] = len(exceed)
    C, S = post.sizes["chain"], post.sizes["draw"]
    draws = xr.DataArray(np.stack(list(rows.values()), axis=-1).reshape(C, S, len(rows)),
                         dims=("chain", "draw", "measure"), coords={"measure": list(rows)})
    summ = summarize(draws, ci_prob=ci_prob)
    table = pd.DataFrame({"mean": summ["mean"].values, "sd": summ["sd"].values,
                          "hdi_low": summ["interval"].sel(ci_bound="lower").values,
                          "hdi_high": summ["interval"].sel(ci_bound="upper").values,
                          "r_hat": summ["r_hat"].values, "ess_bulk": summ["ess_bulk"].values,
                          "ess_tail": summ["ess_tail"].values},
                         index=pd.Index(list(rows), name="measure"))
    single = {"ppp": ppp, **{key: info[key] for key in ("pD", "pD_dic", "df", "baseline_chisq",
                                                      "baseline_df")}}
    extra = pd.DataFrame({"mean": list(single.values())},
                         index=pd.Index(list(single), name="measure"))
    return pd.concat([table, extra]), info


# ============================================================================ LOO
def marginal_log_likelihood(idata: Any, design: Design, *, n_draws: int = 200,
                            n_is: int = 64, random_seed: int = 0) -> xr.DataArray:
    r"""Log marginal likelihood of every output at a thinned set of posterior draws,
    :math:`\log p(y_n \mid \theta) = \log \int \prod_j P(y_{nj} \mid \eta)
    N(\eta; 0, \Psi) \, d\eta`, by importance sampling.

    The proposal of output :math:`n` is the defensive mixture
    :math:`0.8\,N(\bar\eta_n, 1.5\,S_n) + 0.2\,N(0, \bar\Psi)` (posterior mean and covariance
    of its factor scores; posterior mean correlation matrix), with ``n_is`` draws shared by
    all posterior draws.

    Returns
    -------
    xarray.DataArray
        dims ``(chain, draw, output)``; ``draw`` holds the retained draw indices.
    """
    post = idata.posterior
    C, S = post.sizes["chain"], post.sizes["draw"]
    per_chain = max(1, min(S, n_draws // C))
    keep = np.unique(np.linspace(0, S - 1, per_chain).round().astype(int))
    F, J, N = design.n_factors, design.n_indicators, design.n_rows
    scores = post["factor_score"].values  # (C, S, N, F)
    flat = scores.reshape(-1, N, F)
    mu = flat.mean(0)
    dev = flat - mu[None]
    cov = np.einsum("snf,sng->nfg", dev, dev) / max(1, flat.shape[0] - 1)
    psi_bar = post["factor_corr"].values.reshape(-1, F, F).mean(0)
    rng = np.random.default_rng(random_seed)
    n_loc = round(0.8 * n_is)
    Lc = np.linalg.cholesky(1.5 * cov + 1e-9 * np.eye(F)[None])
    e1 = rng.standard_normal((N, n_loc, F))
    x_loc = mu[:, None, :] + np.einsum("nfg,nmg->nmf", Lc, e1)
    Lp = np.linalg.cholesky(psi_bar + 1e-9 * np.eye(F))
    x_pri = rng.standard_normal((N, n_is - n_loc, F)) @ Lp.T
    x = np.concatenate([x_loc, x_pri], axis=1)  # (N, M, F)

    def mvn_logpdf(x: np.ndarray, mean: np.ndarray, chol: np.ndarray) -> np.ndarray:
        # chol (..., F, F) broadcast against x (..., M, F)
        d = x - mean
        z = np.linalg.solve(chol[..., None, :, :], d[..., None])[..., 0]
        logdet = np.log(np.diagonal(chol, axis1=-2, axis2=-1)).sum(-1)
        return -0.5 * (z**2).sum(-1) - logdet[..., None] - 0.5 * F * np.log(2 * np.pi)

    log_q = np.logaddexp(np.log(0.8) + mvn_logpdf(x, mu[:, None, :], Lc),
                         np.log(0.2) + mvn_logpdf(x, np.zeros(F), Lp))
    cat = np.full((N, J), -1, dtype=np.int64)
    cat[design.row, design.ind] = design.cat
    lstd_all = post["loading_std"].values
    tau_all = post["threshold_std"].values
    corr_all = post["factor_corr"].values
    kernel = _is_kernel()
    fo = np.ascontiguousarray(design.factor_of, dtype=np.int64)
    x = np.ascontiguousarray(x)
    big = 1e3
    out = np.empty((C, keep.size, N))
    for c in range(C):
        for d_i, s in enumerate(keep):
            lstd = lstd_all[c, s]
            cuts = np.concatenate([np.full((J, 1), -big), tau_all[c, s], np.full((J, 1), big)],
                                  axis=1)
            ll = kernel(x, fo, lstd, np.sqrt(1 - lstd**2), cuts, cat)  # (N, M)
            psi = corr_all[c, s] + 1e-12 * np.eye(F)
            _, logdet = np.linalg.slogdet(psi)
            quad = np.einsum("nmf,fg,nmg->nm", x, np.linalg.inv(psi), x)
            lp = -0.5 * quad - 0.5 * logdet - 0.5 * F * np.log(2 * np.pi)
            out[c, d_i] = special.logsumexp(ll + lp - log_q, axis=1) - np.log(n_is)
    return xr.DataArray(out, dims=("chain", "draw", "output"),
                        coords={"chain": post["chain"].values,
                                "draw": post["draw"].values[keep],
                                "output": np.arange(N)})


_KERNEL: list = []


def _is_kernel() -> Any:
    """numba kernel: sum_j log P(y_nj | eta_nm) for every output n and importance draw m."""
    if _KERNEL:
        return _KERNEL[0]
    import math

    import numba

    from bayesmeta._interval import numba_log_ndtr

    log_ndtr = numba_log_ndtr()

    @numba.njit(cache=True)
    def kernel(x, fo, lstd, sd, cuts, cat):  # pragma: no cover - compiled
        N, M, _ = x.shape
        J = fo.shape[0]
        out = np.zeros((N, M))
        for n in range(N):
            for m in range(M):
                acc = 0.0
                for j in range(J):
                    k = cat[n, j]
                    if k < 0:
                        continue
                    loc = lstd[j] * x[n, m, fo[j]]
                    lo = (cuts[j, k] - loc) / sd[j]
                    hi = (cuts[j, k + 1] - loc) / sd[j]
                    if lo + hi > 0.0:
                        lo, hi = -hi, -lo
                    lh = log_ndtr(hi)
                    if lo < -37.0:
                        acc += lh
                        continue
                    d = log_ndtr(lo) - lh
                    if d > -0.6931471805599453:
                        acc += lh + math.log(-math.expm1(d))
                    else:
                        acc += lh + math.log1p(-math.exp(d))
                out[n, m] = acc
        return out

    _KERNEL.append(kernel)
    return kernel
