r"""Bayesian confirmatory factor analysis of ordinal ratings (probit; card:
``models/ordinal_cfa.md``).

Model
-----
Output :math:`n` (a system-item pair), indicator :math:`j` (a rater-trait column, e.g.
``Expert.1.COH``) measuring factor :math:`f(j)`; the rating :math:`y_{nj} \in 1..K` is the
coarsened version of a latent response (Muthén 1984)

.. math::
    y^*_{nj} = \lambda_j \eta_{n f(j)} + \varepsilon_{nj}, \qquad
    \varepsilon_{nj} \sim N(0, 1), \qquad \eta_n \sim N_F(0, \Psi), \ \operatorname{diag}\Psi = 1,

    y_{nj} = k \iff \tau_{j,k-1} < y^*_{nj} \le \tau_{j,k}
    \quad (\tau_{j,0} = -\infty, \tau_{j,K} = \infty).

This is the *theta* parameterization (unit residual variances). The *delta*
parameterization, lavaan's default and its ``std.all``, rescales :math:`y^*` to unit
variance: standardized loadings and thresholds

.. math:: \lambda^*_j = \lambda_j / \sqrt{1 + \lambda_j^2}, \qquad
          \tau^*_{jk} = \tau_{jk} / \sqrt{1 + \lambda_j^2},
          \qquad \theta^*_{jj} = 1 - \lambda_j^{*2}.

The model is sampled through its standardized quantities, so that

.. math:: P(y_{nj} = k \mid \eta) = \Phi\Big(\frac{\tau^*_{jk} - \lambda^*_j \eta_{nf(j)}}
          {\sqrt{1 - \lambda^{*2}_j}}\Big) - \Phi\Big(\frac{\tau^*_{j,k-1} - \lambda^*_j
          \eta_{nf(j)}}{\sqrt{1 - \lambda^{*2}_j}}\Big).

Priors: :math:`\lambda^*_j \sim \mathrm{Beta}(1, 1)` (positive loadings, uniform on the
standardized scale); the ordered :math:`\tau^*_j` get the prior that makes the
model-implied marginal category probabilities :math:`p_{jk} = \Phi(\tau^*_{jk}) -
\Phi(\tau^*_{j,k-1})` uniform on the simplex (an induced Dirichlet(1) prior, density
:math:`\prod_k \phi(\tau^*_{jk})`), which stays proper when a category is never used;
:math:`\Psi \sim \mathrm{LKJ}(1)` (Lewandowski, Kurowicka & Joe 2009), built from canonical
partial correlations through its Cholesky factor; factor scores :math:`\eta` are latent
variables. Ratings are used in long form: a missing rating drops out of the likelihood, not
its row.

Sampling (default ``parameterization="augmented"``): the factor scores are integrated out,
:math:`y^*_n \sim N_J(0, \Lambda^* \Psi \Lambda^{*\top} + \operatorname{diag}(1 -
\lambda^{*2}))`, and the latent responses are augmented inside the box of the observed
categories through the GHK construction (Chib & Greenberg 1998, as blavaan does); the
factor scores are drawn afterwards from their conditional normal given :math:`y^*`. The
posterior is the same as when the scores are sampled; it mixes several times better when
loadings are near 1 (model card).

Fit (Garnier-Villarreal & Jorgensen 2020, adapted to ordinal data): the discrepancy of
each posterior draw is the weighted least-squares distance between the sample statistics
:math:`s` (thresholds and polychoric correlations) and the model-implied ones,
:math:`D(\theta) = N (s - \sigma(\theta))^\top \Gamma^{-1} (s - \sigma(\theta))` with
:math:`\Gamma/N` the asymptotic covariance of :math:`s`; with :math:`p^*` statistics,
:math:`p_D` the number of free parameters of the limited-information model (loadings,
thresholds in :math:`s`, free correlations; the DIC-style :math:`\overline{D} -
D(\bar\theta)` is reported as ``pD_dic`` but not used, because the full-information
posterior is not centred on the WLS minimum) and the independence model's
:math:`D_0 = N s_\rho^\top \Gamma_{\rho\rho}^{-1} s_\rho` on :math:`d_0` = number of
correlations:

.. math::
    \mathrm{BRMSEA} = \sqrt{\frac{\max(D - p^*, 0)}{(p^* - p_D) N}}, \quad
    \mathrm{BCFI} = 1 - \frac{\max(D - p^*, 0)}{D_0 - d_0}, \quad
    \mathrm{BTLI} = \frac{D_0/d_0 - (D - p_D)/(p^* - p_D)}{D_0/d_0 - 1}.

The posterior predictive p-value is :math:`P(D(y^{rep}, \theta) \ge D(y, \theta))` with
:math:`y^{rep}` drawn from the model (fresh factor scores) and the same missing pattern.
LOO (Vehtari, Gelman & Gabry 2017) uses the *marginal* likelihood of each output,
:math:`p(y_n \mid \theta) = \int \prod_j P(y_{nj} \mid \eta) N(\eta; 0, \Psi) d\eta`,
computed by importance sampling, so that ``compare`` ranks factor structures.

References
----------
Muthén, B. (1984). A general structural equation model with dichotomous, ordered
categorical, and continuous latent variable indicators. *Psychometrika*, 49, 115-132.
Lewandowski, D., Kurowicka, D., & Joe, H. (2009). Generating random correlation matrices
based on vines and extended onion method. *Journal of Multivariate Analysis*, 100,
1989-2001.
Garnier-Villarreal, M., & Jorgensen, T. D. (2020). Adapting fit indices for Bayesian
structural equation modeling: Comparison to maximum likelihood. *Psychological Methods*,
25(1), 46-70.
Vehtari, A., Gelman, A., & Gabry, J. (2017). Practical Bayesian model evaluation using
leave-one-out cross-validation and WAIC. *Statistics and Computing*, 27, 1413-1432.
Merkle, E. C., & Rosseel, Y. (2018). blavaan: Bayesian structural equation models via
parameter expansion. *Journal of Statistical Software*, 85(4).
Chib, S., & Greenberg, E. (1998). Analysis of multivariate probit models. *Biometrika*,
85(2), 347-361.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr
from scipy import special, stats

from bayesmeta.models._cfa_build import (
    FACTOR_PARAMS,
    Design,
    build_augmented_model,
    build_model,
    cut_labels,
    design_from_wide,
)
from bayesmeta.results import BAYES_COLUMNS, Result, data_hash
from bayesmeta.syntax import ModelSpec, parse_model, resolve_column

__all__ = ["IdentificationWarning", "OrdinalCFAResult", "ordinal_cfa"]

#: Default sampler settings of a full fit (4 chains x 500 draws; on SummEval 2 chains x
#: 1,250 draws after 400 tuning iterations reach the convergence bars, model card).
DEFAULTS = {"chains": 4, "tune": 400, "draws": 500}


#: Posterior variables kept in the result (the sampler's own coordinates are dropped).
KEEP_VARS = ("loading_std", "threshold_std", "factor_corr", "factor_score")


class IdentificationWarning(UserWarning):
    """The data cannot identify a parameter (empty category, loading at the boundary); its
    posterior there reflects the prior."""


# ============================================================================ data
@dataclass(frozen=True)
class _Data:
    values: np.ndarray  # (N, J) ratings, NaN missing, model indicator order
    indicators: tuple[str, ...]  # data column names, model order
    system: np.ndarray | None
    item: np.ndarray | None
    rows: np.ndarray  # row labels
    scale: tuple[int, int]
    frame: pd.DataFrame  # wide ratings with the syntax's indicator names as columns


def _wide(data: Any) -> tuple[pd.DataFrame, tuple[int, int] | None, Any, Any]:
    """Wide ratings (rows = outputs, columns = indicators) from a bayesmeta Dataset or a
    DataFrame."""
    if isinstance(data, xr.Dataset):
        if "rating" not in data:
            raise ValueError("data has no 'rating' variable; ordinal CFA needs "
                             "rating(system, item, rater, trait).")
        r = data["rating"].transpose("system", "item", "rater", "trait")
        st = r.stack(output=("system", "item"))
        cols = {f"{ra}.{t}": st.sel(rater=ra, trait=t).values
                for t in r["trait"].values for ra in r["rater"].values}
        frame = pd.DataFrame(cols)
        sys_ = np.asarray(st["system"].values)
        item = np.asarray(st["item"].values)
        lo, hi = r.attrs.get("scale_min"), r.attrs.get("scale_max")
        scale = None if lo is None or hi is None else (int(lo), int(hi))
        return frame, scale, sys_, item
    if isinstance(data, pd.DataFrame):
        frame = data.copy()
        sys_ = item = None
        if isinstance(frame.index, pd.MultiIndex) and {"system", "item"} <= set(
                frame.index.names):
            sys_ = np.asarray(frame.index.get_level_values("system"))
            item = np.asarray(frame.index.get_level_values("item"))
        return frame.reset_index(drop=True), None, sys_, item
    raise TypeError(f"data must be a bayesmeta xarray.Dataset or a pandas DataFrame, got "
                    f"{type(data).__name__}.")


def _prepare(spec: ModelSpec, data: Any) -> _Data:
    frame, scale, sys_, item = _wide(data)
    columns = [str(c) for c in frame.columns]
    chosen = []
    for name in spec.observed:
        col = resolve_column(name, columns)
        if col is None:
            raise ValueError(f"unknown variable {name!r} in the model: it is not a column of "
                             f"the data (columns: {', '.join(columns[:12])}).")
        chosen.append(col)
    vals = frame[chosen].to_numpy(dtype=float)
    obs = vals[np.isfinite(vals)]
    if obs.size == 0:
        raise ValueError("data has no observed ratings for the model's indicators.")
    if not np.all(obs == np.round(obs)):
        raise ValueError("ratings must be integers (ordinal categories); found non-integer "
                         "values.")
    if scale is None:
        scale = (int(obs.min()), int(obs.max()))
    lo, hi = scale
    if obs.min() < lo or obs.max() > hi:
        raise ValueError(f"ratings outside the declared scale {lo}..{hi}.")
    if hi - lo < 2:
        raise ValueError(f"the rating scale {lo}..{hi} has fewer than 3 categories; the "
                         f"ordinal CFA needs at least 3.")
    allnan = [c for c, v in zip(chosen, vals.T, strict=True) if not np.isfinite(v).any()]
    if allnan:
        raise ValueError(f"indicator(s) {allnan} have no observed ratings.")
    keep = np.isfinite(vals).any(axis=1)
    n_drop = int((~keep).sum())
    if n_drop:
        warnings.warn(f"{n_drop} output(s) have no rating on any indicator and carry no "
                      f"information; they are left out.", UserWarning, stacklevel=3)
    vals = vals[keep]
    rows = np.arange(keep.size)[keep]
    sys_ = None if sys_ is None else sys_[keep]
    item = None if item is None else item[keep]
    named = pd.DataFrame(vals, columns=list(spec.observed))
    return _Data(vals, tuple(chosen), sys_, item, rows, (lo, hi), named)


def _blocks(spec: ModelSpec) -> tuple[tuple[int, ...], ...]:
    """Groups of factors with free correlations; between groups the correlations must be
    fixed at 0 (the only fixed correlations this model supports)."""
    fs = list(spec.factors)
    parent = list(range(len(fs)))

    def find(a: int) -> int:
        while parent[a] != a:
            a = parent[a]
        return a

    cors = spec.factor_correlations()
    for (a, b), fixed in cors.items():
        if fixed is None:
            parent[find(fs.index(a))] = find(fs.index(b))
    groups: dict[int, list[int]] = {}
    for k in range(len(fs)):
        groups.setdefault(find(k), []).append(k)
    blocks = tuple(tuple(g) for g in groups.values())
    for (a, b), fixed in cors.items():
        if fixed is None:
            continue
        same = find(fs.index(a)) == find(fs.index(b))
        if fixed != 0.0 or same:
            raise NotImplementedError(
                f"the Bayesian ordinal CFA supports fixing factor correlations only at 0 "
                f"between groups of factors whose other correlations are free; "
                f"'{a} ~~ {fixed:g}*{b}' is not of that kind. Use method='wlsmv'.")
    return blocks


def _check_spec(spec: ModelSpec) -> None:
    fixed = [ld for ld in spec.loadings if ld.fixed is not None]
    if fixed:
        ld = fixed[0]
        raise NotImplementedError(
            f"fixed loadings ('{ld.factor} =~ {ld.fixed:g}*{ld.indicator}', line {ld.line}) "
            f"are not supported by the Bayesian ordinal CFA (factor variances are fixed at "
            f"1 and loadings are positive); remove the modifier or use method='wlsmv'.")
    if spec.residual_covariances:
        c = spec.residual_covariances[0]
        raise NotImplementedError(
            f"residual covariances ('{c.lhs} ~~ {c.rhs}', line {c.line}) are not supported "
            f"by the Bayesian ordinal CFA yet; use method='wlsmv'.")
    counts = pd.Series([ld.indicator for ld in spec.loadings]).value_counts()
    if (counts > 1).any():
        raise NotImplementedError(
            f"indicator {counts.index[0]!r} loads on more than one factor; cross-loadings "
            f"are not supported by the Bayesian ordinal CFA.")


# ============================================================================ setup
def setup(model: str | ModelSpec, data: Any) -> tuple[ModelSpec, _Data, Design]:
    """Parse and check the model, reshape the data to long form: ``(spec, data, design)``
    (used by :func:`ordinal_cfa` and by the benchmark to compile ahead of sampling)."""
    if isinstance(model, str):
        spec = parse_model(model)
    elif isinstance(model, ModelSpec):
        spec = model
    else:
        raise TypeError(f"model must be lavaan syntax (str) or a ModelSpec, got "
                        f"{type(model).__name__}.")
    _check_spec(spec)
    blocks = _blocks(spec)
    data_ = _prepare(spec, data)
    fs = list(spec.factors)
    factor_of = np.array([fs.index(next(ld.factor for ld in spec.loadings
                                        if ld.indicator == ind)) for ind in spec.observed])
    design = design_from_wide(data_.values, factors=tuple(fs), indicators=spec.observed,
                              factor_of=factor_of, scale=data_.scale, blocks=blocks)
    return spec, data_, design


# ============================================================================ sampling
def model_for(design: Design, *, parameterization: str = "augmented",
              loading_prior: tuple[float, float] = (1.0, 1.0), lkj_eta: float = 1.0) -> Any:
    """The PyMC model of ``design``, cached (with its nutpie compilation) by the data and
    settings, so that a refit of the same data costs sampling time only."""
    from bayesmeta.sampling import cached_model

    key = ("ordinal_cfa", design.factors, design.indicators,
           tuple(design.factor_of.tolist()), design.n_categories, design.n_rows,
           design.blocks, _design_hash(design), parameterization, tuple(loading_prior),
           float(lkj_eta))
    if parameterization == "augmented":
        return cached_model(key, lambda: build_augmented_model(
            design, loading_prior=loading_prior, lkj_eta=lkj_eta))
    return cached_model(key, lambda: build_model(
        design, factor_param=parameterization, loading_prior=loading_prior, lkj_eta=lkj_eta))


def _design_hash(design: Design) -> str:
    import hashlib

    h = hashlib.sha256()
    for arr in (design.row, design.ind, design.cat):
        h.update(np.ascontiguousarray(arr, dtype=np.int64).tobytes())
    return h.hexdigest()[:16]


def _sample(model: Any, *, fast: bool, random_seed: int | None, **kwargs: Any) -> Any:
    from bayesmeta.sampling import sample

    return sample(model, fast=fast, random_seed=random_seed, **kwargs)


# ============================================================================ derived
#: Ways to sample the model (see the model card): the default integrates the factor
#: scores out and augments the latent responses; the others sample the factor scores.
PARAMETERIZATIONS = ("augmented", *FACTOR_PARAMS)
#: Variables the augmented model keeps in its trace (not its 20,000 latent responses).
AUGMENTED_TRACE = ("loading_std", "threshold_std", "factor_corr", "factor_score_mean")


def _draw_factor_scores(idata: Any, design: Design, seed: int) -> None:
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


def _derived(idata: Any, design: Design) -> None:
    """Add the theta-parameterization loadings and thresholds and the residual variances
    to the posterior."""
    post = idata.posterior
    lstd = post["loading_std"]
    s = np.sqrt((1 - lstd) * (1 + lstd))
    post["loading"] = lstd / s
    post["threshold"] = post["threshold_std"] / s
    post["residual_var_std"] = 1 - lstd**2
    idata.posterior = post


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
    from bayesmeta.classical.polychoric import polychoric

    n = np.isfinite(y).sum(axis=0)
    th = []
    for j, c in th_map:
        col = y[:, j]
        p = np.sum(col[np.isfinite(col)] <= c + scale[0]) / n[j]
        th.append(stats.norm.ppf(np.clip(p, 0.5 / n[j], 1 - 0.5 / n[j])))
    fit = polychoric(y, acov=False)
    return np.concatenate([th, [fit.correlation[i, k] for i, k in fit.pairs]])


def _fit_measures(idata: Any, design: Design, data: _Data, *, n_ppc: int,
                  random_seed: int | None, ci_prob: float) -> tuple[pd.DataFrame, dict]:
    """Posterior of BRMSEA, BCFI, BTLI and the ppp (see the module docstring)."""
    import arviz as az

    from bayesmeta.classical.polychoric import polychoric

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
    table = []
    for name, draws in rows.items():
        hdi = az.hdi(draws, hdi_prob=ci_prob)
        table.append({"measure": name, "mean": float(draws.mean()), "sd": float(draws.std()),
                      "hdi_low": float(hdi[0]), "hdi_high": float(hdi[1])})
    table.append({"measure": "ppp", "mean": ppp, "sd": np.nan, "hdi_low": np.nan,
                  "hdi_high": np.nan})
    for key in ("pD", "pD_dic", "df", "baseline_chisq", "baseline_df"):
        table.append({"measure": key, "mean": info[key], "sd": np.nan, "hdi_low": np.nan,
                      "hdi_high": np.nan})
    return pd.DataFrame(table).set_index("measure"), info


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

    sqrt2 = math.sqrt(2.0)
    half_log_2pi = 0.5 * math.log(2 * math.pi)

    @numba.njit(cache=True)
    def log_ndtr(x: float) -> float:
        if x > -20.0:
            return math.log(0.5 * math.erfc(-x / sqrt2))
        x2 = x * x  # asymptotic series of the lower tail (relative error < 1e-12)
        return (-0.5 * x2 - math.log(-x) - half_log_2pi
                + math.log1p(-1.0 / x2 + 3.0 / (x2 * x2) - 15.0 / (x2 * x2 * x2)))

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


# ============================================================================ result
class OrdinalCFAResult(Result):
    """Result of :func:`ordinal_cfa`: lavaan-format table with the classical WLSMV estimate
    beside the posterior; ``factor_scores()``, ``fit_measures()``, ``loo()``,
    ``parameters(parameterization=...)``."""

    kind = "ordinal_cfa"

    def _state(self) -> dict[str, Any]:
        return {}

    def factor_scores(self) -> xr.DataArray:
        """Posterior draws of the factor scores, dims ``(system, item, trait, chain,
        draw)`` (``trait`` holds the factor names); ``(output, trait, chain, draw)`` when the
        data had no system and item labels."""
        da = self.idata.posterior["factor_score"]
        if "system" in da.coords and "item" in da.coords:
            da = da.set_index(output=["system", "item"]).unstack("output")
            return da.transpose("system", "item", "trait", "chain", "draw")
        return da.transpose("output", "trait", "chain", "draw")

    def fit_measures(self) -> pd.DataFrame:
        """BRMSEA, BCFI, BTLI (posterior mean, sd, HDI), ppp, pD and df, with lavaan's
        scaled WLSMV indices in ``classical``."""
        ds = self.extra.get("fit_measures")
        if ds is None:
            return pd.DataFrame()
        return ds.to_dataframe()

    def loo(self) -> Any:
        """PSIS-LOO of the marginal (factor scores integrated out) likelihood of each
        output (ArviZ ``ELPDData``)."""
        import arviz as az

        if self.idata is None or "log_likelihood" not in self.idata.groups():
            raise ValueError("this fit has no log likelihood; refit with loo=True.")
        ll = self.idata.log_likelihood
        post = self.idata.posterior[["loading_std"]].sel(draw=ll["draw"].values)
        sub = az.InferenceData(posterior=post, log_likelihood=ll)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return az.loo(sub, var_name="rating", pointwise=True)

    def parameters(self, parameterization: str = "delta") -> pd.DataFrame:
        """Posterior summary in the ``delta`` (standardized; lavaan ``std.all``) or
        ``theta`` (unit residual variance) parameterization."""
        if parameterization == "delta":
            return self.summary()
        if parameterization != "theta":
            raise ValueError(f"parameterization must be 'delta' or 'theta', got "
                             f"{parameterization!r}.")
        ds = self.extra.get("theta_table")
        if ds is None:
            return pd.DataFrame()
        return ds.to_dataframe().set_index(["lhs", "op", "rhs"])

    def _body(self) -> str:
        table = self._table
        parts = []
        sections = (("Latent variables (standardized loadings):", "=~", False),
                    ("Factor correlations:", "~~", "cov"),
                    ("Thresholds (standardized):", "|", False),
                    ("Residual variances (delta scale):", "~~", "var"))
        ops = table.index.get_level_values("op")
        lhs = table.index.get_level_values("lhs")
        rhs = table.index.get_level_values("rhs")
        for title, op, sub in sections:
            mask = ops == op
            if sub == "cov":
                mask &= lhs != rhs
            elif sub == "var":
                mask &= lhs == rhs
            if mask.any():
                parts += [title, self._format_table(table[mask]), ""]
        fm = self.fit_measures()
        if len(fm):
            parts += ["Fit (Garnier-Villarreal & Jorgensen 2020; ppp from replicated data):",
                      self._format_table(fm), ""]
        return "\n".join(parts).rstrip()


def _summarise(idata: Any, design: Design, spec: ModelSpec, classical: pd.DataFrame | None,
               ci_prob: float, theta: bool = False) -> pd.DataFrame:
    """lavaan-ordered table: loadings, factor correlations, thresholds, residual variances."""
    import arviz as az

    from bayesmeta.sampling import diagnose

    post = idata.posterior
    names = (["loading", "threshold"] if theta else ["loading_std", "threshold_std"])
    names += ["factor_corr", "residual_var_std"]
    diag = diagnose(post[names])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        hdi = az.hdi(post[names], hdi_prob=ci_prob)
    mean = post[names].mean(("chain", "draw"))
    sd = post[names].std(("chain", "draw"))

    def stat(var: str, sel: dict) -> dict:
        return {
            "mean": float(mean[var].sel(sel)), "sd": float(sd[var].sel(sel)),
            "hdi_low": float(hdi[var].sel(sel).sel(hdi="lower")),
            "hdi_high": float(hdi[var].sel(sel).sel(hdi="higher")),
            "r_hat": float(diag[f"{var}__r_hat"].sel(sel)),
            "ess_bulk": float(diag[f"{var}__ess_bulk"].sel(sel)),
            "ess_tail": float(diag[f"{var}__ess_tail"].sel(sel)),
        }

    rows: list[dict] = []
    load_v, th_v = names[0], names[1]
    for ld in spec.loadings:
        rows.append({"lhs": ld.factor, "op": "=~", "rhs": ld.indicator,
                     **stat(load_v, {"indicator": ld.indicator})})
    fs = list(spec.factors)
    for a in range(len(fs)):
        for b in range(a + 1, len(fs)):
            rows.append({"lhs": fs[a], "op": "~~", "rhs": fs[b],
                         **stat("factor_corr", {"trait": fs[a], "trait2": fs[b]})})
    cuts = cut_labels(design.n_categories)
    for ind in spec.observed:
        for k, cut in enumerate(cuts):
            rows.append({"lhs": ind, "op": "|", "rhs": f"t{k + 1}",
                         **stat(th_v, {"indicator": ind, "cut": cut})})
    for ind in spec.observed:
        rows.append({"lhs": ind, "op": "~~", "rhs": ind,
                     **stat("residual_var_std", {"indicator": ind})})
    table = pd.DataFrame(rows).set_index(["lhs", "op", "rhs"])
    table = table[list(BAYES_COLUMNS)]
    if classical is not None and not theta:
        table.insert(0, "classical_high", classical["high"].reindex(table.index))
        table.insert(0, "classical_low", classical["low"].reindex(table.index))
        table.insert(0, "classical", classical["std"].reindex(table.index))
    return table


def _classical(spec: ModelSpec, data: _Data, design: Design) -> tuple[pd.DataFrame | None,
                                                                       pd.Series | None, str]:
    """lavaan's WLSMV standardized solution (classical column; 95% Wald intervals), with
    threshold labels mapped to the full scale's cuts."""
    try:
        from bayesmeta.classical.ordinal import fit_wlsmv
        from bayesmeta.classical.polychoric import polychoric

        sample = polychoric(data.frame, acov=True)
        fit = fit_wlsmv(spec, sample)
    except Exception as err:  # the classical twin must not stop the Bayesian fit
        return None, None, f"classical WLSMV fit failed: {err}"
    tab = fit.table.copy()
    # map lavaan's t1.. (observed levels) to the model's cuts of the full scale
    lv = dict(zip(sample.variables, sample.levels, strict=True))
    rhs = []
    for lhs, op, r in zip(tab["lhs"], tab["op"], tab["rhs"], strict=True):
        if op == "|":
            c = int(r[1:]) - 1
            rhs.append(f"t{int(lv[lhs][c]) - data.scale[0] + 1}")
        else:
            rhs.append(r)
    tab["rhs"] = rhs
    tab = tab.set_index(["lhs", "op", "rhs"])
    z = stats.norm.ppf(0.975)
    out = pd.DataFrame({"std": tab["std"], "low": tab["std"] - z * tab["se"],
                        "high": tab["std"] + z * tab["se"]})
    return out, fit.fit_measures, ""


def _identification_warnings(idata: Any, design: Design, spec: ModelSpec) -> list[str]:
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


# ============================================================================ main
def ordinal_cfa(
    model: str | ModelSpec,
    data: Any,
    *,
    ci_prob: float = 0.94,
    chains: int = DEFAULTS["chains"],
    tune: int = DEFAULTS["tune"],
    draws: int = DEFAULTS["draws"],
    fast: bool = False,
    random_seed: int | None = None,
    loading_prior: tuple[float, float] = (1.0, 1.0),
    lkj_eta: float = 1.0,
    parameterization: str = "augmented",
    classical: bool = True,
    fit_measures: bool = True,
    loo: bool = True,
    n_ppc: int = 100,
    target_accept: float = 0.8,
    cores: int | None = None,
    mass_matrix: str = "diag",
) -> OrdinalCFAResult:
    r"""Bayesian ordinal CFA (probit, theta parameterization; see the module docstring).

    Parameters
    ----------
    model : str or ModelSpec
        lavaan syntax (``"coh =~ Expert.1.COH + Expert.2.COH + Expert.3.COH; ..."``) or a
        parsed :class:`bayesmeta.syntax.ModelSpec`.
    data : xarray.Dataset or pandas.DataFrame
        A bayesmeta dataset (``rating(system, item, rater, trait)``; indicators are the
        columns ``"{rater}.{trait}"``) or a wide DataFrame of ratings. NaN = missing.
    ci_prob : float
        Probability of the highest-density intervals.
    chains, tune, draws : int
        Sampler settings (nutpie through :func:`bayesmeta.sampling.sample`).
    fast : bool
        Fast mode (a preview; not for reporting).
    random_seed : int, optional
        Seed (recorded in the result).
    loading_prior : (a, b)
        Beta prior of the standardized loadings (default uniform).
    lkj_eta : float
        LKJ shape of the factor correlations (default 1, uniform over correlation matrices).
    parameterization : {"augmented", "polar", "zerosum", "noncentred"}
        How the model is sampled (the same posterior; see the model card for speed).
        ``augmented`` (default) integrates the factor scores out and samples the latent
        responses inside the box of the observed categories (the construction of blavaan's
        ordinal models), then draws the factor scores from their conditional normal; the
        others sample the factor scores directly.
    classical : bool
        Also fit lavaan's WLSMV (the ``classical`` columns).
    fit_measures : bool
        Compute BRMSEA, BCFI, BTLI and the ppp.
    loo : bool
        Compute the marginal log likelihood for :meth:`OrdinalCFAResult.loo` and
        :func:`bayesmeta.compare`.
    n_ppc : int
        Replicated datasets for the ppp (0: skip it).
    target_accept : float
        NUTS target acceptance rate.
    cores : int, optional
        Chains run in parallel.
    mass_matrix : {"diag", "low_rank"}
        nutpie's mass-matrix adaptation (see :func:`bayesmeta.sampling.sample`).

    Returns
    -------
    OrdinalCFAResult

    Examples
    --------
    >>> import bayesmeta as bm  # doctest: +SKIP
    >>> from bayesmeta.models.ordinal_cfa import ordinal_cfa  # doctest: +SKIP
    >>> fit = ordinal_cfa("coh =~ Expert.1.COH + Expert.2.COH + Expert.3.COH\n"
    ...                   "rel =~ Expert.1.REL + Expert.2.REL + Expert.3.REL",
    ...                   bm.datasets.summeval(), random_seed=1)  # doctest: +SKIP
    >>> print(fit)  # doctest: +SKIP

    R equivalent: ``blavaan::bcfa(model, data, ordered = TRUE, std.lv = TRUE)``.
    """
    from bayesmeta.sampling import check_convergence, describe_run, is_compiled

    if not 0 < ci_prob < 1:
        raise ValueError(f"ci_prob must be in (0, 1), got {ci_prob}.")
    if parameterization not in PARAMETERIZATIONS:
        raise ValueError(f"parameterization must be one of {PARAMETERIZATIONS}, got "
                         f"{parameterization!r}.")
    spec, data_, design = setup(model, data)
    fs = list(spec.factors)
    notes: list[str] = []
    pre = _identification_warnings_pre(design, spec)
    for msg in pre:
        warnings.warn(msg, IdentificationWarning, stacklevel=2)
    t0 = time.perf_counter()
    pm_model = model_for(design, parameterization=parameterization,
                         loading_prior=loading_prior, lkj_eta=lkj_eta)
    t_build = time.perf_counter() - t0
    trace = AUGMENTED_TRACE if parameterization == "augmented" else None
    was_compiled = is_compiled(pm_model, trace)
    t0 = time.perf_counter()
    idata = _sample(pm_model, fast=fast, random_seed=random_seed, chains=chains, tune=tune,
                    draws=draws, target_accept=target_accept, cores=cores,
                    mass_matrix=mass_matrix, var_names=trace,
                    attrs={"data_hash": _hash(data_), "parameterization": parameterization})
    t_sample = time.perf_counter() - t0
    from bayesmeta.sampling import set_attrs

    set_attrs(idata, {"sampling_time_s": t_sample, "compiled_before": int(was_compiled)})
    if parameterization == "augmented":
        _draw_factor_scores(idata, design, int(idata.posterior.attrs["random_seed"]))
    post = idata.posterior
    raw = [v for v in post.data_vars if v not in KEEP_VARS]
    post = post.drop_vars(raw)  # sampler coordinates (z, gaps, ...): large and not reported
    idata.posterior = post
    if data_.system is not None:
        post = post.assign_coords(system=("output", data_.system), item=("output",
                                                                            data_.item))
        idata.posterior = post
    _derived(idata, design)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        conv = check_convergence(idata, ["loading_std", "threshold_std", "factor_corr"])
    notes += [str(w.message) for w in caught]
    for w in caught:
        warnings.warn(w.message, w.category, stacklevel=2)
    post_notes = _identification_warnings(idata, design, spec)
    for msg in post_notes:
        warnings.warn(msg, IdentificationWarning, stacklevel=2)
    notes = pre + post_notes + notes
    cl_table, cl_fit, cl_note = (None, None, "")
    if classical:
        cl_table, cl_fit, cl_note = _classical(spec, data_, design)
        if cl_note:
            notes.append(cl_note)
    table = _summarise(idata, design, spec, cl_table, ci_prob)
    theta_table = _summarise(idata, design, spec, None, ci_prob, theta=True)
    extra: dict[str, Any] = {"theta_table": _frame_to_ds(theta_table)}
    seed_used = int(idata.posterior.attrs.get("random_seed", 0))
    if fit_measures:
        try:
            fm, _ = _fit_measures(idata, design, data_, n_ppc=0 if fast else n_ppc,
                                  random_seed=seed_used, ci_prob=ci_prob)
            if cl_fit is not None:
                ref = {"brmsea": "rmsea.scaled", "bcfi": "cfi.scaled", "btli": "tli.scaled",
                       "chisq_discrepancy": "chisq.scaled"}
                fm.insert(0, "classical", [float(cl_fit[ref[k]]) if k in ref and ref[k] in
                                           cl_fit.index else np.nan for k in fm.index])
            extra["fit_measures"] = xr.Dataset.from_dataframe(fm)
        except (np.linalg.LinAlgError, ValueError) as err:
            notes.append(f"fit measures could not be computed: {err}")
    if loo:
        ll = marginal_log_likelihood(idata, design, random_seed=seed_used)
        idata.add_groups(log_likelihood=xr.Dataset({"rating": ll}))
    n_obs = int(design.row.size)
    n_cells = design.n_rows * design.n_indicators
    info = {
        "model": " ; ".join(f"{f} =~ {' + '.join(spec.indicators(f))}" for f in fs),
        "data": f"{design.n_rows} outputs x {design.n_indicators} indicators, {n_obs} "
                f"ratings ({n_cells - n_obs} missing, left out of the likelihood)",
        "method": f"Bayesian ordinal CFA (probit, theta parameterization, LKJ({lkj_eta:g})); "
                  f"table: delta / std.all scale",
        "classical": "WLSMV (DWLS + robust SE, lavaan); 95% Wald intervals" if cl_table
                     is not None else "not computed",
        "sampler": describe_run(idata),
        "convergence": str(conv),
        "time": f"build {t_build:.1f} s, "
                + (f"sampling {t_sample:.1f} s (compiled before)" if was_compiled
                   else f"compile + sampling {t_sample:.1f} s"),
        "random_seed": seed_used,
        "data_hash": _hash(data_),
    }
    return OrdinalCFAResult(table, title="Bayesian ordinal confirmatory factor analysis",
                            info=info, idata=idata, extra=extra, notes=notes,
                            ci_prob=ci_prob)


def _identification_warnings_pre(design: Design, spec: ModelSpec) -> list[str]:
    counts = design.counts()
    cuts = cut_labels(design.n_categories)
    out = []
    for j in range(design.n_indicators):
        empty = [k + 1 for k in range(design.n_categories) if counts[j, k] == 0]
        if empty:
            affected = sorted({c for k in empty for c in (k - 2, k - 1)
                               if 0 <= c < design.n_categories - 1})
            out.append(
                f"indicator {spec.observed[j]!r} never uses categor"
                f"{'y' if len(empty) == 1 else 'ies'} {', '.join(map(str, empty))}: the data "
                f"cannot identify threshold(s) {', '.join(cuts[c] for c in affected)} beyond "
                f"the ordering; their posterior reflects the prior there (uniform on the "
                f"category probabilities).")
    return out


def _frame_to_ds(table: pd.DataFrame) -> xr.Dataset:
    flat = table.reset_index()
    flat.index = pd.RangeIndex(len(flat), name="row")
    return xr.Dataset.from_dataframe(flat)


def _hash(data: _Data) -> str:
    ds = xr.Dataset({"rating": (("row", "indicator"), data.values)},
                    coords={"indicator": list(data.indicators)})
    return data_hash(ds)
