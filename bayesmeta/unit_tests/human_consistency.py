r"""Inconsistency of human scores within one transformation (paper 004, Sec. 5, Fig. 1-2).

Boag et al. show that SICK's human relatedness scores of pairs made by *the same*
transformation (e.g. negated subject) spread widely: "approximately a normal distribution
centred at 3.6 with a standard deviation of about .45". This module puts intervals on that
statement and splits the variance of the human scores into a part between transformations
and a part within them:

* per transformation ``j``: mean and standard deviation of the scores, classical with the
  normal-theory intervals (Student t for the mean, chi-square for the sd), Bayesian with
  the reference prior ``p(mu, sigma) ∝ 1/sigma`` whose posterior is exact
  (``sigma^2 | y ~ (n - 1) s^2 / chi^2_{n-1}``, ``mu | sigma, y ~ N(ybar, sigma^2 / n)``);
* between vs within: the one-way random-effects model ``y_ij = mu + b_j + e_ij``, ``b_j ~
  N(0, tau^2)``, ``e_ij ~ N(0, sigma^2)``; the share of variance between transformations is
  ``tau^2 / (tau^2 + sigma^2)``. Classical: the ANOVA (method of moments) estimator with
  ``n0 = (N - sum n_j^2 / N) / (J - 1)`` and the F-based interval of Searle (1971)
  for ICC(1); Bayesian: ``mu`` integrated out under a flat prior, ``p(tau) ∝ 1`` (BDA3,
  Sec. 5.4) and ``p(sigma) ∝ 1/sigma``, the posterior of ``(log tau, log sigma)`` on a
  grid.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from bayesmeta.options import ResamplingOptions, resolve_seed
from bayesmeta.results import Result, data_hash
from bayesmeta.summaries import CI_PROB, check_ci_prob
from bayesmeta.vocabulary import resampling_options


def _normal_draws(y: np.ndarray, rng: np.random.Generator, n_draws: int
                  ) -> tuple[np.ndarray, np.ndarray]:
    n = y.size
    s2 = y.var(ddof=1)
    sigma2 = (n - 1) * s2 / rng.chisquare(n - 1, n_draws)
    mu = rng.normal(y.mean(), np.sqrt(sigma2 / n))
    return mu, np.sqrt(sigma2)


def _grid_share(groups: list[np.ndarray], rng: np.random.Generator, n_draws: int,
                n_grid: int = 240) -> dict[str, np.ndarray]:
    """Posterior draws of tau, sigma and the share between, from the grid."""
    n = np.array([g.size for g in groups], float)
    ybar = np.array([g.mean() for g in groups])
    ssw = float(sum(((g - g.mean()) ** 2).sum() for g in groups))
    pooled_sd = np.sqrt(ssw / max(n.sum() - len(groups), 1))
    spread = max(float(np.std(ybar, ddof=1)) if len(groups) > 1 else pooled_sd, 1e-6)
    lt = np.linspace(np.log(spread) - 7, np.log(spread) + 3, n_grid)
    se = pooled_sd * np.sqrt(2 / max(n.sum() - len(groups), 1))
    ls = np.linspace(np.log(max(pooled_sd - 12 * se, pooled_sd / 4)),
                     np.log(pooled_sd + 12 * se), n_grid)
    tau2 = np.exp(2 * lt)[:, None, None]
    sig2 = np.exp(2 * ls)[None, :, None]
    v = tau2 + sig2 / n[None, None, :]
    w = 1 / v
    mhat = (w * ybar).sum(-1, keepdims=True) / w.sum(-1, keepdims=True)
    ll = (-0.5 * np.log(w.sum(-1)) - 0.5 * np.log(v).sum(-1)
          - 0.5 * (w * (ybar - mhat) ** 2).sum(-1))
    ll += (-(n.sum() - len(groups)) / 2 * np.log(sig2[..., 0]) - ssw / (2 * sig2[..., 0]))
    lp = ll + lt[:, None]  # p(tau) ∝ 1 on the log-tau grid; p(sigma) ∝ 1/sigma is flat here
    lp -= lp.max()
    p = np.exp(lp).ravel()
    p /= p.sum()
    idx = rng.choice(p.size, size=n_draws, p=p)
    i, j = np.unravel_index(idx, (n_grid, n_grid))
    tau = np.exp(lt[i] + rng.uniform(-0.5, 0.5, n_draws) * (lt[1] - lt[0]))
    sigma = np.exp(ls[j] + rng.uniform(-0.5, 0.5, n_draws) * (ls[1] - ls[0]))
    return {"tau": tau, "sigma": sigma, "share": tau**2 / (tau**2 + sigma**2)}


def _anova(groups: list[np.ndarray], ci_prob: float) -> dict[str, tuple[float, float, float]]:
    n = np.array([g.size for g in groups], float)
    big_n, k = n.sum(), len(groups)
    grand = np.concatenate(groups).mean()
    ssb = float((n * (np.array([g.mean() for g in groups]) - grand) ** 2).sum())
    ssw = float(sum(((g - g.mean()) ** 2).sum() for g in groups))
    msb, msw = ssb / (k - 1), ssw / (big_n - k)
    n0 = (big_n - (n**2).sum() / big_n) / (k - 1)
    tau2 = max((msb - msw) / n0, 0.0)
    f = msb / msw
    lo_q, hi_q = (1 + ci_prob) / 2, (1 - ci_prob) / 2
    fl = f / stats.f.ppf(lo_q, k - 1, big_n - k)
    fu = f / stats.f.ppf(hi_q, k - 1, big_n - k)
    share = (tau2 / (tau2 + msw), max((fl - 1) / (fl - 1 + n0), 0.0),
             min((fu - 1) / (fu - 1 + n0), 1.0))
    chi = stats.chi2.ppf([lo_q, hi_q], big_n - k)
    sd_w = (np.sqrt(msw), np.sqrt(ssw / chi[0]), np.sqrt(ssw / chi[1]))
    return {"share_between": share, "sd_within": sd_w,
            "sd_between": (np.sqrt(tau2), np.nan, np.nan), "f": (f, msb, msw)}


def human_inconsistency(
    data: pd.DataFrame,
    *,
    score: str = "sick_relatedness",
    group: str = "corruption",
    ci_prob: float = CI_PROB,
    resampling: ResamplingOptions | Mapping[str, Any] | None = None,
    random_seed: int | None = None,
) -> Result:
    r"""How consistently humans score pairs made by the same transformation (paper 004).

    Parameters
    ----------
    data : pandas.DataFrame
        One row per sentence pair with a human score and its transformation (SICK's
        ``sick_corruptions.csv``: ``corruption``, ``sick_relatedness``).
    score, group : str
        Column names of the human score and of the transformation.
    ci_prob : float
        Probability of every interval.
    resampling : ResamplingOptions or dict, optional
        ``n_resamples``: posterior draws (exact for the per-transformation normal; from the
        grid for the variance components; default here 8,000).
    random_seed : int, optional
        Seeds the draws; drawn and recorded when omitted.

    Returns
    -------
    Result
        Index ``(estimand, corruption)``: ``mean`` and ``sd`` per transformation;
        ``sd_between``, ``sd_within`` and ``share_between`` (``corruption`` = ""). Details:
        ``n``, and for ``share_between`` the F statistic of the one-way ANOVA.

    Notes
    -----
    Formulas in :mod:`bayesmeta.unit_tests.human_consistency`. R equivalents: ``t.test``
    for the mean; ``ICC::ICCest(group, score)`` for the share (ICC(1)) and its interval.

    References
    ----------
    Boag et al. (2016), Sec. 5, Fig. 1-2. Searle (1971), *Linear Models*, Sec. 9.
    Gelman et al. (2013), *Bayesian Data Analysis*, 3rd ed., Sec. 3.2 and 5.4.

    Examples
    --------
    >>> import pandas as pd, bayesmeta as bm
    >>> df = pd.DataFrame({"corruption": ["a"] * 4 + ["b"] * 4,
    ...                    "sick_relatedness": [3.1, 3.5, 3.9, 3.3, 4.6, 4.9, 4.4, 4.8]})
    >>> tab = bm.human_inconsistency(df, random_seed=0).summary()
    >>> round(float(tab.loc[("mean", "a"), "classical"]), 2)
    3.45
    """
    n_draws = resampling_options(resampling, n_resamples=8000).n_resamples
    ci_prob = check_ci_prob(ci_prob)
    for col in (score, group):
        if col not in data.columns:
            raise ValueError(f"column {col!r} is not in the data (columns: "
                             f"{', '.join(map(str, data.columns))}).")
    if not pd.api.types.is_numeric_dtype(data[score]):
        raise ValueError(f"column {score!r} must be numeric, got dtype {data[score].dtype}.")
    frame = data[[group, score]].dropna()
    notes = []
    if len(frame) < len(data):
        notes.append(f"{len(data) - len(frame)} rows without {score!r} or {group!r} left out.")
    names = list(dict.fromkeys(frame[group]))
    groups = [frame.loc[frame[group] == g, score].to_numpy(float) for g in names]
    small = [str(g) for g, y in zip(names, groups, strict=True) if y.size < 2]
    if small:
        raise ValueError(f"transformation(s) {small} in column {group!r} have fewer than 2 "
                         "scores: no spread to estimate.")
    if len(groups) < 2:
        raise ValueError(f"column {group!r} has one transformation: between-vs-within needs "
                         "at least 2.")
    seed = resolve_seed(random_seed)
    rng = np.random.default_rng(seed)
    import xarray as xr

    from bayesmeta.summaries import summarize

    rows = []
    q = (1 + ci_prob) / 2
    for g, y in zip(names, groups, strict=True):
        n, m, s = y.size, y.mean(), y.std(ddof=1)
        t = stats.t.ppf(q, n - 1) * s / np.sqrt(n)
        chi = stats.chi2.ppf([q, 1 - q], n - 1)
        mu_d, sd_d = _normal_draws(y, rng, n_draws)
        for est, cl, lo, hi, d in (("mean", m, m - t, m + t, mu_d),
                                   ("sd", s, s * np.sqrt((n - 1) / chi[0]),
                                    s * np.sqrt((n - 1) / chi[1]), sd_d)):
            rows.append(((est, str(g)), cl, lo, hi, d, n, np.nan))
    an = _anova(groups, ci_prob)
    grid = _grid_share(groups, rng, n_draws)
    total = int(sum(y.size for y in groups))
    for est, key in (("sd_between", "tau"), ("sd_within", "sigma"), ("share_between", "share")):
        cl, lo, hi = an[est]
        rows.append(((est, ""), cl, lo, hi, grid[key], total,
                     an["f"][0] if est == "share_between" else np.nan))
    draws = np.stack([r[4] for r in rows], axis=1)
    s = summarize(xr.DataArray(draws, dims=("draw", "row")), ci_prob=ci_prob,
                  sample_dims=("draw",))
    index = pd.MultiIndex.from_tuples([r[0] for r in rows], names=["estimand", "corruption"])
    table = pd.DataFrame({"classical": [r[1] for r in rows],
                          "classical_low": [r[2] for r in rows],
                          "classical_high": [r[3] for r in rows],
                          "mean": s["mean"].values, "sd": s["sd"].values,
                          "hdi_low": s["interval"].values[:, 0],
                          "hdi_high": s["interval"].values[:, 1],
                          "n": [r[5] for r in rows], "f_statistic": [r[6] for r in rows]},
                         index=index)
    notes.append("sd_between has no classical interval (the ANOVA estimator's is not "
                 "closed-form); share_between's is Searle's F interval.")
    return Result(table, title=f"Human-score inconsistency within transformations ({score})",
                  info={"pairs": total, "transformations": len(groups)}, notes=notes,
                  ci_prob=ci_prob,
                  classical_ci_kind="normal theory (t for means, chi-square for sds, F for "
                                    "the share)",
                  posterior="exact normal posterior / grid posterior of variance components",
                  random_seed=seed, data_hash=data_hash(frame[score].to_numpy(float)))


__all__ = ["human_inconsistency"]
