"""Pass-rate posteriors and the human-inconsistency analysis against independent references:
SciPy's Beta quantiles, an importance-sampling integral of the hierarchical model, the
closed form of P(A beats B), frequentist coverage over simulations with known truth, and
SciPy's one-way ANOVA / t / chi-square intervals."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.stats as st

import bayesmeta as bm
from bayesmeta.summaries import hdi
from bayesmeta.unit_tests import pass_rates as pr

CI = 0.94


def test_beta_binomial_draws_match_scipy_beta():
    rng = np.random.default_rng(0)
    d = pr.beta_binomial_draws(np.array([13, 60]), np.array([65, 65]), rng, 200_000)
    for j, k in enumerate((13, 60)):
        ref = st.beta(1 + k, 1 + 65 - k)
        assert d[:, j].mean() == pytest.approx(ref.mean(), abs=5e-4)  # MC se ~1e-4
        assert d[:, j].std() == pytest.approx(ref.std(), abs=5e-4)
        np.testing.assert_allclose(np.quantile(d[:, j], [0.03, 0.97]), ref.ppf([0.03, 0.97]),
                                   atol=2e-3)


def test_hierarchical_grid_matches_importance_sampling():
    """E[p_j | data] from the grid against an independent Monte Carlo integral: draws of
    (mu, kappa) from the prior weighted by the beta-binomial likelihood, and
    E[p_j | mu, kappa, data] = (mu kappa + k_j) / (kappa + n_j) in closed form."""
    k, n = np.array([12.0, 88.0, 26.0]), np.array([214.0, 240.0, 65.0])
    rng = np.random.default_rng(1)
    d = pr.hierarchical_draws(k, n, rng, 200_000)
    m = rng.uniform(size=2_000_000)
    u = rng.uniform(size=m.size)
    kap = u / (1 - u)  # inverse CDF of the (1 + kappa)^-2 prior
    from scipy.special import betaln

    a, b = m * kap, (1 - m) * kap
    logw = (betaln(a[:, None] + k, b[:, None] + n - k) - betaln(a, b)[:, None]).sum(1)
    w = np.exp(logw - logw.max())
    w /= w.sum()
    for j in range(3):
        ref = float(np.sum(w * (a + k[j]) / (kap + n[j])))
        assert d["p"][:, j].mean() == pytest.approx(ref, abs=2e-3)  # grid + MC error
    assert np.median(d["mu"]) == pytest.approx(float(np.sum(w * m)), abs=0.05)


def test_p_beats_closed_form_against_monte_carlo():
    counts = np.array([150, 9, 3, 38])
    draws = np.random.default_rng(2).dirichlet(counts + 1.0, size=400_000)
    mc = float(np.mean(draws[:, 1] > draws[:, 2]))
    assert pr.p_beats(counts) == pytest.approx(mc, abs=2e-3)
    assert pr.mcnemar_exact(counts) == pytest.approx(st.binomtest(9, 12, 0.5).pvalue)
    d, lo, hi = pr.paired_wald(counts, 0.95)
    assert d == pytest.approx(6 / 200)
    se = np.sqrt(12 - 36 / 200) / 200
    assert (lo, hi) == pytest.approx((d - 1.959964 * se, d + 1.959964 * se), abs=1e-6)


def test_clopper_pearson_matches_scipy_at_the_edges():
    lo, hi = pr.clopper_pearson(np.array([0, 3, 65]), np.array([65, 65, 65]), 0.94)
    for j, k in enumerate((0, 3, 65)):
        ci = st.binomtest(k, 65).proportion_ci(0.94, method="exact")
        assert (lo[j], hi[j]) == pytest.approx((ci.low, ci.high), abs=1e-10)


# ----------------------------------------------------------------------------- coverage
def _coverage_beta_binomial(n_sims=300, seed=11):
    rng = np.random.default_rng(seed)
    hits, total = 0, 0
    for _ in range(n_sims):
        truth = np.array([0.05, 0.4, 0.9, 0.985])
        n = np.array([65, 214, 240, 500])
        k = rng.binomial(n, truth)
        d = pr.beta_binomial_draws(k, n, rng, 4000)
        iv = hdi(d, CI, axis=(0,))
        hits += int(((iv[:, 0] <= truth) & (truth <= iv[:, 1])).sum())
        total += truth.size
    return hits / total


def _coverage_hierarchical(n_sims=200, seed=12):
    rng = np.random.default_rng(seed)
    hits, total = 0, 0
    n = np.array([214, 240, 65])
    for _ in range(n_sims):
        truth = rng.beta(0.35 * 8, 0.65 * 8, size=3)  # a category with mu .35, kappa 8
        k = rng.binomial(n, truth)
        d = pr.hierarchical_draws(k, n, rng, 4000, n_mu=120, n_kappa=120)["p"]
        iv = hdi(d, CI, axis=(0,))
        hits += int(((iv[:, 0] <= truth) & (truth <= iv[:, 1])).sum())
        total += 3
    return hits / total


def test_beta_binomial_hdi_covers_known_pass_rates():
    cov = _coverage_beta_binomial()
    # 1,200 intervals: binomial sd of the coverage at .94 is .007
    assert 0.88 <= cov <= 0.99, cov
    assert abs(cov - CI) < 0.03


def test_hierarchical_hdi_covers_known_pass_rates():
    cov = _coverage_hierarchical()
    assert 0.88 <= cov <= 0.99, cov


def test_hierarchical_shrinks_the_smallest_cell_most():
    """Two cells with the same raw pass rate (.6), one of 240 pairs and one of 65 (the size
    of det_sub), beside a cell at .2: the small cell moves further toward the category
    mean. (Its interval need not narrow: with cells this different the pooling is weak and
    the uncertainty about the category's spread adds width.)"""
    k, n = np.array([48.0, 144.0, 39.0]), np.array([240.0, 240.0, 65.0])
    d = pr.hierarchical_draws(k, n, np.random.default_rng(3), 20000)
    raw = (k + 1) / (n + 2)
    pooled = d["p"].mean(0)
    grand = np.median(d["mu"])
    assert raw[1] == pytest.approx(raw[2], abs=0.005)
    assert raw[2] - pooled[2] > 2 * (raw[1] - pooled[1]) > 0
    assert np.abs(pooled[2] - grand) < np.abs(raw[2] - grand)


# ----------------------------------------------------------------------------- humans
def _groups(seed=0, sizes=(40, 60, 25, 80), means=(3.6, 4.6, 3.7, 4.9), sd=0.4):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"corruption": np.repeat([f"t{j}" for j in range(len(sizes))], sizes),
                         "sick_relatedness": np.concatenate([rng.normal(m, sd, s) for m, s in
                                                             zip(means, sizes, strict=True)])})


def test_human_inconsistency_classical_matches_scipy():
    df = _groups()
    res = bm.human_inconsistency(df, random_seed=0, ci_prob=0.95)
    tab = res.summary()
    y = df.loc[df.corruption == "t0", "sick_relatedness"].to_numpy()
    lo, hi = st.t.interval(0.95, y.size - 1, loc=y.mean(), scale=st.sem(y))
    assert tab.loc[("mean", "t0"), ["classical", "classical_low", "classical_high"]].tolist() \
        == pytest.approx([y.mean(), lo, hi], rel=1e-10)
    s = y.std(ddof=1)
    chi = st.chi2.ppf([0.975, 0.025], y.size - 1)
    assert tab.loc[("sd", "t0"), ["classical", "classical_low", "classical_high"]].tolist() \
        == pytest.approx([s, *(s * np.sqrt((y.size - 1) / chi))], rel=1e-10)
    f = st.f_oneway(*[g["sick_relatedness"].to_numpy() for _, g in df.groupby("corruption")])
    assert res.details().loc[("share_between", ""), "f_statistic"] == pytest.approx(
        f.statistic, rel=1e-10)
    # the posterior of the per-group mean is Student t: its mean and 95% HDI match
    assert tab.loc[("mean", "t0"), "mean"] == pytest.approx(y.mean(), abs=0.005)
    assert tab.loc[("mean", "t0"), "hdi_low"] == pytest.approx(lo, abs=0.01)


def test_human_inconsistency_recovers_known_variance_share():
    """Known truth: tau = .5 between 12 transformations, sigma = .4 within; share .61."""
    rng = np.random.default_rng(5)
    hits, total, est = 0, 0, []
    for _ in range(60):
        b = rng.normal(0, 0.5, 12)
        sizes = rng.integers(20, 120, 12)
        df = pd.DataFrame({"corruption": np.repeat(np.arange(12).astype(str), sizes),
                           "sick_relatedness": np.concatenate(
                               [rng.normal(4 + bj, 0.4, s) for bj, s in zip(b, sizes,
                                                                              strict=True)])})
        tab = bm.human_inconsistency(df, random_seed=1, resampling={"n_resamples": 2000}).summary()
        row = tab.loc[("share_between", "")]
        truth = 0.25 / (0.25 + 0.16)
        hits += int(row["hdi_low"] <= truth <= row["hdi_high"])
        total += 1
        est.append(row["mean"])
    assert hits / total >= 0.85  # 60 simulations: nominal .94, binomial sd .03
    assert np.mean(est) == pytest.approx(0.25 / 0.41, abs=0.06)


def test_human_inconsistency_errors_name_the_column():
    df = _groups()
    with pytest.raises(ValueError, match="column 'score' is not in the data"):
        bm.human_inconsistency(df, score="score")
    with pytest.raises(ValueError, match=r"\['t9'\] .* fewer than 2"):
        bm.human_inconsistency(pd.concat([df, pd.DataFrame(
            {"corruption": ["t9"], "sick_relatedness": [3.0]})]))
    with pytest.raises(ValueError, match="one transformation"):
        bm.human_inconsistency(df[df.corruption == "t0"])
