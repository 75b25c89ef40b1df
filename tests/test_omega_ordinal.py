"""Coefficient omega of ordinal indicators (issue 24) against semTools' ``compRelSEM``
(frozen in ``tests/results/omega_reference.csv`` by ``tests/results/make_omega_reference.R``,
R 4.2.2, lavaan 0.6-14, semTools 0.5-6) and against an independent computation of the
reliability of summed ratings by Gauss-Hermite quadrature over the factor."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import integrate, special, stats
from test_cfa_classical import MODELS_R, _collapsed, _with_missing

import bayesmeta as bm
from bayesmeta.agreement.omega import _sum_covariance

RESULTS = Path(__file__).parent / "results"
REF = pd.read_csv(RESULTS / "omega_reference.csv")


def test_reference_provenance():
    assert set(REF["versions"]) == {"R 4.2.2; lavaan 0.6.14; semTools 0.5.6"}
    assert set(REF["call"]) == {"compRelSEM(fit); compRelSEM(fit, ord.scale = FALSE)"}


@pytest.fixture(scope="module")
def fits(summeval):
    data = {"missing": _with_missing(summeval), "collapsed": _collapsed(summeval)}
    out = {name: bm.cfa(model, data.get(name, summeval)) for name, model in MODELS_R.items()}
    frame = pd.read_csv(RESULTS / "agreement_missing30.csv")
    out["missing30"] = bm.cfa("f =~ R1 + R2 + R3 + R4", frame)
    return out


@pytest.fixture(scope="module")
def omegas(fits):
    return {name: bm.omega_ordinal(fit) for name, fit in fits.items()}


@pytest.mark.parametrize(("model", "factor", "omega_ordinal", "omega_latent"),
                         list(REF[["model", "factor", "omega_ordinal", "omega_latent"]]
                              .itertuples(index=False, name=None)))
def test_omega_ordinal_equals_semtools(omegas, model, factor, omega_ordinal, omega_latent):
    res = omegas[model]
    # the WLSMV estimates equal lavaan's to ~1e-6 (its optimizers' stopping rule, see
    # test_cfa_classical); omega is a smooth function of them: 1e-5
    assert res.summary().loc[("omega_ordinal", factor), "classical"] == pytest.approx(
        omega_ordinal, abs=1e-5)
    assert res.details().loc[("omega_ordinal", factor), "omega_latent"] == pytest.approx(
        omega_latent, abs=1e-5)


def test_every_factor_and_no_single_indicator(omegas):
    res = omegas["merged"]
    assert res.summary().index.get_level_values("trait").tolist() == ["cohrel", "con", "flu"]
    assert res.details()["n_indicators"].tolist() == [6, 3, 3]


def _by_quadrature(lam: np.ndarray, tau: list[np.ndarray]) -> float:
    """Reliability of the summed ratings of a one-factor model with loadings ``lam`` and
    thresholds ``tau`` (delta parameterization), by its definition: Var(E[X | eta]) /
    Var(X), X = sum_j sum_c [y*_j > tau_jc], with 200-node Gauss-Hermite quadrature over
    eta ~ N(0, 1) and the ratings independent given eta."""
    x, w = special.roots_hermitenorm(200)
    w = w / w.sum()
    cond_mean = np.zeros_like(x)
    cond_var = np.zeros_like(x)
    for lj, tj in zip(lam, tau, strict=True):
        sd = np.sqrt(1 - lj**2)
        above = special.ndtr((lj * x[:, None] - tj[None, :]) / sd)   # P(y* > tau_c | eta)
        probs = -np.diff(np.column_stack([np.ones_like(x), above, np.zeros_like(x)]), axis=1)
        score = np.arange(probs.shape[1])
        m = probs @ score
        cond_mean += m
        cond_var += probs @ score**2 - m**2
    true_var = w @ cond_mean**2 - (w @ cond_mean) ** 2
    return float(true_var / (true_var + w @ cond_var))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_formula_equals_the_definition_by_quadrature(seed):
    """With the model-implied correlations in the denominator, Green & Yang's formula is
    the share of the summed ratings' variance that the factor explains: computed here by
    quadrature over the factor, independently of the bivariate normal CDF (1e-9)."""
    rng = np.random.default_rng(seed)
    k = 4
    lam = rng.uniform(0.4, 0.9, size=k)
    tau = [np.sort(rng.normal(scale=1.0, size=rng.integers(1, 5))) for _ in range(k)]
    common = np.outer(lam, lam)
    implied = common.copy()
    np.fill_diagonal(implied, 1.0)
    omega = _sum_covariance(tau, common) / _sum_covariance(tau, implied)
    assert omega == pytest.approx(_by_quadrature(lam, tau), abs=1e-9)


def test_pair_covariance_by_direct_integration():
    """One covariance S_jj'(rho) against one-dimensional integration of
    P(y1 > a, y2 > b) = int_a^inf phi(x) Phi((rho x - b) / sqrt(1 - rho^2)) dx."""
    tau = [np.array([-1.0, 0.2, 1.1]), np.array([-0.4, 0.7])]
    rho = 0.63
    r = np.array([[1.0, rho], [rho, 1.0]])

    def upper(a, b):
        return integrate.quad(lambda x: stats.norm.pdf(x) * stats.norm.cdf(
            (rho * x - b) / np.sqrt(1 - rho**2)), a, np.inf, epsabs=1e-13)[0]

    cross = sum(upper(a, b) - stats.norm.sf(a) * stats.norm.sf(b)
                for a in tau[0] for b in tau[1])
    var = [sum(stats.norm.sf(max(a, b)) - stats.norm.sf(a) * stats.norm.sf(b)
               for a in t for b in t) for t in tau]
    assert _sum_covariance(tau, r) == pytest.approx(var[0] + var[1] + 2 * cross, abs=1e-10)


def test_bad_fit_is_refused(simulated):
    with pytest.raises(TypeError, match="WLSMV CFA result"):
        bm.omega_ordinal(simulated)
    fit = bm.cfa("f =~ Rater.1.COH + Rater.2.COH + Rater.3.COH\ng =~ 0.7*Rater.1.FLU",
                 simulated)  # a one-indicator factor is left out, as semTools (dropSingle)
    res = bm.omega_ordinal(fit)
    assert res.summary().index.get_level_values("trait").tolist() == ["f"]


def _refit_se(fit) -> np.ndarray:
    """The delta-method se by brute force: omega recomputed from a full WLSMV refit at every
    sample statistic moved by +-h (central differences), then g' Gamma g / (N - 1)."""
    from dataclasses import replace

    from bayesmeta.validity.factor_analysis import _result
    from bayesmeta.validity.polychoric import polychoric
    from bayesmeta.validity.wlsmv import fit_wlsmv

    ratings, spec = fit.extra["ratings"], fit.spec
    values = np.asarray(ratings.values, dtype=float)
    sample = polychoric(values, names=list(spec.observed))
    s0, n_th = sample.statistics, sample.n_thresholds
    cuts = np.cumsum([len(t) for t in sample.thresholds])[:-1]

    def g(s):
        r = np.eye(len(sample.variables))
        for (i, j), v in zip(sample.pairs, s[n_th:], strict=True):
            r[i, j] = r[j, i] = v
        moved = replace(sample, thresholds=tuple(np.split(s[:n_th], cuts)), correlation=r)
        refit = _result(spec, fit_wlsmv(spec, moved), values, 0, 0.94, "", ratings)
        return bm.omega_ordinal(refit).summary()["classical"].to_numpy()

    h = 1e-4
    grad = np.stack([(g(s0 + h * e) - g(s0 - h * e)) / (2 * h) for e in np.eye(s0.size)],
                    axis=1)
    return np.sqrt(np.einsum("fi,ij,fj->f", grad, sample.gamma, grad) / (sample.n_obs - 1))


@pytest.mark.slow
def test_delta_method_se_equals_brute_force_refits(fits):
    """The implicit (Gauss-Newton) derivative of the DWLS loadings in the polychorics gives
    the se that refitting the CFA at moved sample statistics gives: a just-identified
    (the next test) and an over-identified (4 indicators, 30% missing) factor (rel 2e-3);
    slow tier: 2 x 22 refits."""
    for name in ("missing30",):
        res = bm.omega_ordinal(fits[name])
        want = _refit_se(fits[name])
        got = res.details()["se"].to_numpy()
        assert got == pytest.approx(want, rel=2e-3), name
        tab = res.summary()
        z = stats.norm.ppf(0.97)
        assert tab["classical_low"].to_numpy() == pytest.approx(
            (tab["classical"] - z * res.details()["se"]).to_numpy(), abs=1e-12)


@pytest.mark.slow
def test_delta_method_se_just_identified(simulated):
    fit = bm.cfa("f =~ Rater.1.COH + Rater.2.COH + Rater.3.COH", simulated)
    got = bm.omega_ordinal(fit).details()["se"].to_numpy()
    assert got == pytest.approx(_refit_se(fit), rel=2e-3)


def test_interval_is_wald_with_the_delta_se(omegas):
    """classical_low/high = omega -+ z se (upper end capped at 1) with a finite, positive se
    for every factor; the brute-force check of se itself is in the slow tier."""
    for res in omegas.values():
        tab, se = res.summary(), res.details()["se"]
        assert (np.isfinite(se) & (se > 0)).all()
        z = stats.norm.ppf(0.5 + res.ci_prob / 2)
        assert tab["classical_low"].to_numpy() == pytest.approx(
            (tab["classical"] - z * se).to_numpy(), abs=1e-12)
        assert tab["classical_high"].to_numpy() == pytest.approx(
            np.minimum(1, tab["classical"] + z * se).to_numpy(), abs=1e-12)
