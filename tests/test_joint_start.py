"""Where the joint metric-validity model's chains start (``init="moments"``): the start
values against closed forms and a large simulated sample, the method factors' leaders and
rotation, and ``sample(initial_values=...)`` putting each chain there."""

from __future__ import annotations

import numpy as np
import pytest

from bayesmeta.validity.joint_simulate import simulate_joint_validity

TWO = ("coh =~ Rater.1.COH + Rater.2.COH + Rater.3.COH\n"
       "con =~ Rater.1.CON + Rater.2.CON + Rater.3.CON")


def _lkj_corr(free: np.ndarray, n: int) -> np.ndarray:
    """The correlation matrix of ``lkj_cholesky``'s free vector, written from its formula
    (Stan's canonical partial correlations: L_ij = z_ij sqrt(1 - sum_{k<j} L_ik^2))."""
    z = np.tanh(free)
    L = np.zeros((n, n))
    for (i, j), zij in zip(zip(*np.tril_indices(n, -1), strict=True), z, strict=True):
        L[i, j] = zij * np.sqrt(1.0 - np.sum(L[i, :j] ** 2))
    for i in range(n):
        L[i, i] = np.sqrt(1.0 - np.sum(L[i, :i] ** 2))
    return L @ L.T


def test_partial_correlations_round_trip():
    """Free vector -> correlation reproduces the matrix it came from (1e-10)."""
    from bayesmeta.validity._joint_start import _partial_correlations

    rng = np.random.default_rng(0)
    a = rng.normal(size=(4, 6))
    cov = a @ a.T + np.eye(4)
    d = np.sqrt(np.diag(cov))
    corr = cov / np.outer(d, d)
    np.testing.assert_allclose(_lkj_corr(_partial_correlations(corr), 4), corr, atol=1e-10)


def test_method_loadings_keep_the_components_and_fix_the_rotation():
    """C C' equals the first K principal components' outer product (1e-10); the leaders'
    rows form a lower-triangular block with a positive diagonal; the first leader is the
    metric with the largest loadings, and no leader's diagonal is small."""
    from bayesmeta.validity._joint_start import _method_loadings

    rng = np.random.default_rng(1)
    M, K = 8, 2
    true = np.zeros((M, K))
    true[3:, 0] = rng.uniform(0.6, 0.9, 5)
    true[[1, 2, 5], 1] = [0.8, -0.7, 0.5]
    cov = true @ true.T + np.diag(rng.uniform(0.1, 0.3, M))
    c, leaders = _method_loadings(cov, K)
    vals, vecs = np.linalg.eigh(cov)
    top = np.argsort(vals)[::-1][:K]
    pcs = vecs[:, top] * np.sqrt(vals[top])
    np.testing.assert_allclose(c @ c.T, pcs @ pcs.T, atol=1e-10)
    block = c[list(leaders)]
    assert np.allclose(np.triu(block, 1), 0.0, atol=1e-12)
    assert np.all(np.diag(block) > 0.3)
    assert leaders[0] == int(np.argmax(np.sum(pcs**2, axis=1)))


def test_method_structure_is_the_lower_triangle_on_the_leaders():
    from bayesmeta.validity._joint_build import method_structure

    mask, pivot = method_structure(5, (0, 1))
    np.testing.assert_array_equal(mask, np.tril(np.ones((5, 2)), -1))
    np.testing.assert_array_equal(pivot, np.eye(5, 2))
    mask, pivot = method_structure(4, (3, 1))
    np.testing.assert_array_equal(mask, [[1, 1], [1, 0], [1, 1], [0, 0]])
    np.testing.assert_array_equal(pivot, [[0, 0], [0, 1], [0, 0], [1, 0]])


def test_moment_start_is_near_the_truth_on_a_large_sample():
    """On 4,000 simulated outputs the start is a consistent-ish moment estimate: the
    factor correlation within 0.08 of the truth, the standardized loadings within 0.12
    (Pearson correlations of 5-point ratings understate the latent ones), the validity
    coefficients (raw, standardized metric scale) within 0.1 and the error sds within 0.1;
    all of them far closer than the prior's start (b = 0, sd = 0.8)."""
    from bayesmeta.validity._joint_build import prepare
    from bayesmeta.validity._joint_start import moment_start

    ds = simulate_joint_validity(2, n_systems=40, n_items=100, n_traits=2, n_metrics=3)
    jd = prepare(ds, TWO, None, None, "first")
    start, leaders = moment_start(jd.design, jd.x)
    assert leaders == ()
    psi = float(ds["true_trait_corr"].values[0, 1])
    assert _lkj_corr(start["corr_free"], 2)[0, 1] == pytest.approx(psi, abs=0.08)
    lam = ds["true_loading_std"].values.T.ravel()  # (rater, trait) -> model order
    np.testing.assert_allclose(start["loading_std"], lam, atol=0.12)
    b = ds["true_validity_raw"].values / jd.scale[:, None]
    np.testing.assert_allclose(start["metric_loading"], b, atol=0.1)
    orth, _ = moment_start(jd.design, jd.x, orthonormal=True)  # the marginal model's
    L = np.linalg.cholesky(_lkj_corr(start["corr_free"], 2))   # coordinates: B L
    np.testing.assert_allclose(orth["metric_loading_orth"], start["metric_loading"] @ L,
                               atol=1e-6)
    sd = np.sqrt(ds["true_error_variance"].values) / jd.scale
    np.testing.assert_allclose(start["error_sd"], sd, atol=0.1)


def test_initial_values_start_every_chain_there():
    """nutpie's start vector: the given variables at their unconstrained values (log for a
    HalfNormal) within the jitter, different per chain; the others untouched; a name that
    is not a free variable or a wrong shape is refused."""
    pm = pytest.importorskip("pymc")
    from bayesmeta.sampling import START_JITTER, _compiled_nutpie, _start_at

    with pm.Model() as m:
        mu = pm.Normal("mu", 0, 10, shape=2)
        sd = pm.HalfNormal("sd", 5)
        pm.Normal("y", mu[0], sd, observed=np.array([0.1, -0.3, 0.5]))
    compiled, _ = _compiled_nutpie(m)
    moved = _start_at(compiled, m, {"mu": np.array([30.0, -20.0]), "sd": 7.0})
    starts = np.array([moved.initial_point_func(s) for s in (11, 12, 13)])
    target = np.array([30.0, -20.0, np.log(7.0)])
    assert np.all(np.abs(starts - target) <= START_JITTER + 1e-12)
    assert np.ptp(starts[:, 0]) > 0
    np.testing.assert_array_equal(moved.initial_point_func(11), starts[0])
    with pytest.raises(ValueError, match="'sigma' is not a free variable"):
        _start_at(compiled, m, {"sigma": 1.0})
    with pytest.raises(ValueError, match=r"initial_values\['mu'\] has shape"):
        _start_at(compiled, m, {"mu": np.zeros(3)})


def _with_method_factor(ds, metrics, loading: float, seed: int = 0):
    """``ds`` with one common factor h ~ N(0, 1) per output added to ``metrics``' scores
    (loading times the metric's error sd), independent of the traits."""
    out = ds.copy(deep=True)
    rng = np.random.default_rng(seed)
    h = rng.standard_normal(out["score"].shape[:2])  # (system, item)
    for m in metrics:
        sd = float(np.sqrt(ds["true_error_variance"].sel(metric=m)))
        out["score"].loc[{"metric": m}] = (out["score"].sel(metric=m)
                                           + loading * sd * h[:, :, None])
    return out


def test_auto_method_factors_finds_a_common_metric_factor_and_no_other():
    """Nine metrics, 1,200 outputs: with independent errors ``"auto"`` gives 0 method
    factors (largest residual eigenvalue near 1); with one factor shared by six metrics
    (residual correlation 0.5 between any two of them: eigenvalue 3.5) it gives 1, and
    the start's method loadings put the six metrics on it and the others near 0."""
    from bayesmeta.validity._joint_build import prepare
    from bayesmeta.validity._joint_start import (
        auto_method_factors,
        moment_start,
        residual_eigenvalues,
    )

    ds = simulate_joint_validity(4, n_systems=30, n_items=40, n_traits=2, n_metrics=9)
    jd = prepare(ds, TWO, None, None, "first")
    assert residual_eigenvalues(jd.design, jd.x)[0] < 1.5
    assert auto_method_factors(jd.design, jd.x) == 0
    six = [str(m) for m in ds["metric"].values[:6]]
    jd = prepare(_with_method_factor(ds, six, 1.0), TWO, None, None, "first")
    assert auto_method_factors(jd.design, jd.x) == 1
    start, leaders = moment_start(jd.design, jd.x, 1)
    c = start["method_loading_free"][:, 0]
    assert leaders[0] < 6
    assert np.all(np.abs(c[:6]) > 0.3) and np.all(np.abs(c[6:]) < 0.2)


def test_method_factors_argument_is_checked():
    import bayesmeta as bm
    from bayesmeta.validity.joint_model import joint_metric_variance

    ds = simulate_joint_validity(3, n_systems=4, n_items=15, n_traits=2, n_metrics=3)
    with pytest.raises(ValueError, match="method_factors must be 'auto' or an integer"):
        joint_metric_variance(ds, TWO, method_factors="two")
    with pytest.raises(ValueError, match="method_factors applies to estimator='joint'"):
        bm.metric_variance(ds, bm.cfa(TWO, ds), method_factors=1)
    with pytest.raises(ValueError, match="residuals applies to estimator='joint'"):
        bm.metric_variance(ds, bm.cfa(TWO, ds), residuals="correlated")
    with pytest.raises(ValueError, match="init must be one of"):
        joint_metric_variance(ds, TWO, init="zeros")
    with pytest.raises(ValueError, match=r"method_factors must be in \[0, 2\]"):
        joint_metric_variance(ds, TWO, method_factors=5)


def test_threshold_start_follows_the_compiled_models_anchor_cut():
    """A cached model fixes each rating's anchor cut at build time (from the first dataset
    of its shape); the start of a refit puts ``threshold_anchor`` at that cut's marginal
    quantile, whatever this dataset's own anchor would be."""
    from bayesmeta.validity._cfa_build import anchor_cuts, start_thresholds
    from bayesmeta.validity._joint_build import prepare
    from bayesmeta.validity._joint_start import moment_start

    ds = simulate_joint_validity(3, n_systems=4, n_items=15, n_traits=2, n_metrics=3)
    jd = prepare(ds, TWO, None, None, "first")
    th0 = start_thresholds(jd.design)
    own = anchor_cuts(jd.design)
    other = (own + 1) % th0.shape[1]
    rows = np.arange(th0.shape[0])
    start, _ = moment_start(jd.design, jd.x)
    np.testing.assert_allclose(start["threshold_anchor"], th0[rows, own])
    start, _ = moment_start(jd.design, jd.x, anchor=other)
    np.testing.assert_allclose(start["threshold_anchor"], th0[rows, other])
    np.testing.assert_allclose(np.exp(start["threshold_log_gaps"]),
                               np.maximum(np.diff(th0, axis=1), 1e-2))


def test_moment_start_with_missing_scores_is_finite_and_near_the_complete_one():
    """A metric scored on only part of the outputs (the sampled-traits route): the moment
    start counts a missing score as the metric's mean, so every start value stays finite,
    and with a tenth of one metric's scores missing its coefficients move by less than
    0.15 (the mean imputation shrinks them by about that tenth) and the other metrics'
    not at all."""
    from bayesmeta.validity._joint_build import prepare
    from bayesmeta.validity._joint_start import moment_start

    ds = simulate_joint_validity(3, n_systems=20, n_items=50, n_traits=2, n_metrics=3)
    full, _ = moment_start(*_design_x(prepare(ds, TWO, None, None, "first")))
    gap = ds.copy(deep=True)
    first = gap["system"] == gap["system"][0]
    name = str(gap["metric"].values[1])
    gap["score"].loc[{"metric": name}] = gap["score"].sel(metric=name).where(~first)
    jd = prepare(gap, TWO, None, None, "first")
    assert np.isnan(jd.x).any()
    part, _ = moment_start(*_design_x(jd))
    for key, value in part.items():
        assert np.all(np.isfinite(value)), key
    m = list(jd.metrics).index(name)
    delta = np.abs(part["metric_loading"] - full["metric_loading"])
    assert delta[m].max() < 0.15
    np.testing.assert_allclose(np.delete(delta, m, axis=0), 0, atol=1e-12)


def _design_x(jd):
    return jd.design, jd.x
