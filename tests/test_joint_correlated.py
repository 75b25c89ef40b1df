"""The joint metric-validity model with correlated metric errors (issue 22,
``residuals="correlated"``): the whitened model against the joint normal written out
directly, its covariance prior against scipy's inverse-Wishart with a numerical Jacobian,
the coordinate maps, bad input; slow tier: a fit recovers a known truth."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from bayesmeta.validity.joint_simulate import realized_error_corr, simulate_joint_validity

TWO = ("coh =~ Rater.1.COH + Rater.2.COH + Rater.3.COH\n"
       "con =~ Rater.1.CON + Rater.2.CON + Rater.3.CON")


@pytest.fixture(scope="module")
def small():
    return simulate_joint_validity(3, n_systems=4, n_items=15, n_traits=2, n_metrics=3)


@pytest.fixture(scope="module")
def built(small):
    from bayesmeta.validity._joint_build import prepare
    from bayesmeta.validity._joint_correlated import build_correlated_joint_model

    jd = prepare(small, TWO, None, None, "first")
    model = build_correlated_joint_model(jd)
    names = ["metric_loglik", "metric_cov_prior", "rating_loglik", "factor_score_mean",
             "loading_std", "threshold_std", "factor_corr", "metric_intercept",
             "metric_loading", "error_sd", "latent_u", "trait_given_metrics"]
    outs = model.replace_rvs_by_values([model[n] for n in names])
    # FAST_COMPILE: Python implementations, no C compilation (keeps this test fast)
    fn = model.compile_fn(outs, inputs=model.value_vars, on_unused_input="ignore",
                          point_fn=True, mode="FAST_COMPILE")
    return jd, model, names, fn


def _omega(jd, point):
    """The metrics' covariance of a point, from its free values (numpy)."""
    from bayesmeta.validity._joint_correlated import whitened

    N, M = jd.x.shape
    w = whitened(jd.x, jd.metrics)
    lt = np.diag(np.exp(point["metric_chol_logdiag"] / np.sqrt(N)))
    lt[np.tril_indices(M, -1)] = point["metric_chol_offdiag"] / np.sqrt(N)
    L = w["metric_chol"] @ lt
    return L @ L.T, w


def _random_point(model, rng):
    point = model.initial_point()
    for name in ("metric_mean_white", "metric_chol_logdiag", "metric_chol_offdiag"):
        point[name] = rng.normal(0, 1.5, size=point[name].shape)
    point["trait_metric_dir"] = rng.normal(0, 1.5, size=point["trait_metric_dir"].shape)
    point["trait_metric_r2_logodds__"] = rng.normal(0, 1.0, size=2)
    point["latent_u_interval__"] = rng.normal(0, 1.0, size=point["latent_u_interval__"].shape)
    point["loading_std_logodds__"] = rng.normal(0.8, 0.4, size=6)
    corr = next(n for n in point if n.startswith("corr"))
    point[corr] = rng.normal(0.3, 0.2, size=point[corr].shape)
    return point


def test_correlated_model_equals_the_joint_gaussian_conditionals(built):
    """At a random point: the metrics' Potential equals scipy's multivariate normal log
    density of the scores with mean a and covariance Omega (rebuilt here from the free
    values), up to the constant the model drops; the coefficients and error sds satisfy
    Omega = B Psi B' + Sigma_e with Sigma_e positive definite and diag = error_sd^2; the
    ratings' Potential equals the GHK log-likelihood (``ghk_numpy``) of y* given x under
    the joint normal of (f, y*, x) built from B, Psi and Omega without the whitened
    coordinates, and ``factor_score_mean`` the conditional mean of f given (y*, x)
    (1e-8 relative)."""
    from bayesmeta.validity._cfa_build import category_slots
    from bayesmeta.validity._ghk import ghk_numpy

    jd, model, names, fn = built
    rng = np.random.default_rng(4)
    for _ in range(2):
        point = _random_point(model, rng)
        v = dict(zip(names, fn(point), strict=True))
        omega, w = _omega(jd, point)
        N, M = jd.x.shape
        a, b, psi = v["metric_intercept"], v["metric_loading"], v["factor_corr"]
        assert abs(psi[0, 1]) > 0.05 and np.abs(b).max() > 0.1
        const = -N * np.log(np.diag(w["metric_chol"])).sum()
        ref_x = stats.multivariate_normal(a, omega).logpdf(jd.x).sum()
        assert float(v["metric_loglik"]) + const - 0.5 * N * M * np.log(2 * np.pi) == \
            pytest.approx(ref_x, rel=1e-8)
        sigma_e = omega - b @ psi @ b.T
        assert np.linalg.eigvalsh(sigma_e).min() > 0
        np.testing.assert_allclose(v["error_sd"] ** 2, np.diag(sigma_e), rtol=1e-8)
        assert np.abs(sigma_e - np.diag(np.diag(sigma_e))).max() > 0.05  # correlated
        lam = v["loading_std"][:, None] * np.eye(2)[jd.design.factor_of]
        syy = lam @ psi @ lam.T
        syy[np.diag_indices(6)] = 1.0
        syx = lam @ psi @ b.T
        r = jd.x - a
        mean = r @ np.linalg.solve(omega, syx.T)
        cov = syy - syx @ np.linalg.solve(omega, syx.T)
        lo_s, hi_s = category_slots(jd.design)
        big = np.column_stack([np.full(6, -1e10), v["threshold_std"], np.full(6, 1e10)])
        rows = np.arange(6)[None, :]
        L = np.linalg.cholesky(cov)
        ref_y, e = ghk_numpy(L, big[rows, lo_s] - mean, big[rows, hi_s] - mean,
                             v["latent_u"])
        assert float(v["rating_loglik"]) == pytest.approx(ref_y, rel=1e-8)
        ystar = mean + e @ L.T
        sfz = np.hstack([psi @ lam.T, psi @ b.T])
        szz = np.block([[syy, syx], [syx.T, omega]])
        ref_f = np.hstack([ystar, r]) @ np.linalg.solve(szz, sfz.T)
        np.testing.assert_allclose(v["factor_score_mean"], ref_f, rtol=1e-8, atol=1e-7)
        ref_v = psi - psi @ b.T @ np.linalg.solve(omega, b @ psi)
        np.testing.assert_allclose(v["trait_given_metrics"], ref_v, rtol=1e-8, atol=1e-10)


def test_covariance_prior_is_the_inverse_wishart_with_its_jacobian(built):
    """Between two random points, the change of the model's covariance-prior Potential
    equals the change of scipy's inverse-Wishart(M + 2, I) log density of Omega plus the
    log Jacobian of the free values -> vech(Omega), taken by central differences
    (1e-6 absolute): the model's closed-form Jacobian and dropped constants are right."""
    jd, model, names, fn = built
    M = jd.x.shape[1]
    rng = np.random.default_rng(11)
    iw = stats.invwishart(df=M + 2, scale=np.eye(M))
    tri = np.tril_indices(M)

    def vech(theta):
        p = {"metric_chol_logdiag": theta[:M], "metric_chol_offdiag": theta[M:]}
        return _omega(jd, p)[0][tri]

    def target(point):
        theta = np.concatenate([point["metric_chol_logdiag"], point["metric_chol_offdiag"]])
        h = 1e-5
        jac = np.empty((theta.size, theta.size))
        for k in range(theta.size):
            step = np.zeros(theta.size)
            step[k] = h
            jac[:, k] = (vech(theta + step) - vech(theta - step)) / (2 * h)
        return iw.logpdf(_omega(jd, point)[0]) + np.linalg.slogdet(jac)[1]

    values, refs = [], []
    for _ in range(3):
        point = _random_point(model, rng)
        values.append(float(dict(zip(names, fn(point), strict=True))["metric_cov_prior"]))
        refs.append(target(point))
    np.testing.assert_allclose(np.diff(values), np.diff(refs), atol=1e-6)
    assert np.abs(np.diff(refs)).max() > 0.01  # the points differ in prior density


def test_whitened_cross_correlation_maps_invert():
    """``w_from_h`` inverts the model's ``H = L_A^-1 W`` (``L_A L_A' = I + W W'``) for a
    random H with singular values below 1, and ``white_cross`` gives Cov(f, x) back."""
    from bayesmeta.validity._joint_correlated import w_from_h, white_cross

    rng = np.random.default_rng(2)
    h = rng.normal(size=(3, 7))
    h *= 0.9 / np.linalg.svd(h, compute_uv=False).max()
    W = w_from_h(h)
    la = np.linalg.cholesky(np.eye(3) + W @ W.T)
    np.testing.assert_allclose(np.linalg.solve(la, W), h, atol=1e-12)
    A = rng.normal(size=(3, 3))
    psi = A @ A.T + 3 * np.eye(3)
    psi = psi / np.sqrt(np.outer(np.diag(psi), np.diag(psi)))
    b = rng.normal(size=(7, 3))
    S = rng.normal(size=(7, 7))
    ls = np.linalg.cholesky(S @ S.T + np.eye(7))
    hh = white_cross(b, psi, ls)  # H = L_Psi^-1 Cov(f, x) L_S^-T
    np.testing.assert_allclose(np.linalg.cholesky(psi) @ hh @ ls.T, psi @ b.T, atol=1e-10)


def test_cross_correlation_prior_puts_a_uniform_level_on_each_traits_r2(built):
    """The model's ``W`` is its level and direction, ``W_t = sqrt(rho_t / (1 - rho_t)) z_t /
    sqrt(M)``, and ``level_direction`` inverts it (1e-12). The row's share ``s_t = ||W_t||^2
    / (1 + ||W_t||^2)`` (about trait t's R^2 on the metrics) is then ``rho_t ~ U(0, 1)``
    scaled by ``chi^2_M / M``: the model's own prior draws (PyMC's forward sampler, 3
    metrics, 4,000 draws x 2 traits) match a NumPy simulation of that formula (200,000
    draws) to 0.03 in their quartiles; for 43 metrics the formula's quartiles lie within
    0.03 of the uniform's 0.25, 0.5, 0.75, where the first prior, ``W_tm ~ N(0, 1/M)``,
    put 98% of the share's mass in 0.36-0.61 (its 1% and 99% quantiles)."""
    import pymc as pm

    from bayesmeta.validity._joint_correlated import level_direction

    model = built[1]
    point = model.initial_point()
    rng = np.random.default_rng(5)
    point["trait_metric_dir"] = rng.normal(0, 1.0, size=point["trait_metric_dir"].shape)
    point["trait_metric_r2_logodds__"] = rng.normal(0, 1.0, size=2)
    out = model.replace_rvs_by_values([model["trait_metric_white"]])
    w = model.compile_fn(out, inputs=model.value_vars, on_unused_input="ignore",
                         point_fn=True, mode="FAST_COMPILE")(point)[0]
    back = level_direction(w)
    again = np.sqrt(back["trait_metric_r2"] / (1 - back["trait_metric_r2"]))[:, None] * \
        back["trait_metric_dir"] / np.sqrt(3)
    np.testing.assert_allclose(again, w, atol=1e-12)

    def share(m, n, gen):
        rho = gen.uniform(size=n)
        sq = rho / (1 - rho) * gen.chisquare(m, size=n) / m
        return sq / (1 + sq)

    q = [0.25, 0.5, 0.75]
    own = pm.sample_prior_predictive(4000, model=model, var_names=["trait_metric_white"],
                                     random_seed=1).prior["trait_metric_white"].values[0]
    sq = (own**2).sum(-1).ravel()
    gen = np.random.default_rng(7)
    np.testing.assert_allclose(np.quantile(sq / (1 + sq), q),
                               np.quantile(share(3, 200_000, gen), q), atol=0.03)
    np.testing.assert_allclose(np.quantile(share(43, 200_000, gen), q), q, atol=0.03)
    first = gen.chisquare(43, size=200_000) / 43  # W_tm ~ N(0, 1/M): ||W_t||^2
    assert np.quantile(first / (1 + first), [0.01, 0.99]) == pytest.approx([0.36, 0.61],
                                                                          abs=0.01)


def test_collinear_metrics_are_refused_by_name(small):
    from bayesmeta.validity._joint_correlated import whitened

    rng = np.random.default_rng(0)
    x = rng.normal(size=(50, 3))
    x[:, 2] = x[:, 0] - 2 * x[:, 1]
    with pytest.raises(ValueError, match="metric 'm3' is a linear function of"):
        whitened(x, ("m1", "m2", "m3"))
    with pytest.raises(ValueError, match="fewer metrics"):
        whitened(x[:3], ("m1", "m2", "m3"))


def test_correlated_residuals_refuse_what_they_cannot_fit(small):
    import bayesmeta as bm

    with pytest.raises(ValueError, match="residuals must be one of"):
        bm.metric_variance(small, TWO, estimator="joint", residuals="full")
    with pytest.raises(ValueError, match="needs normal errors"):
        bm.metric_variance(small, TWO, estimator="joint", residuals="correlated",
                           errors="student_t")
    with pytest.raises(ValueError, match="already holds what the metrics share"):
        bm.metric_variance(small, TWO, estimator="joint", residuals="correlated",
                           method_factors=1)


@pytest.mark.slow
def test_correlated_fit_recovers_the_truth_and_its_residual_correlations():
    """Default sampling on 8 x 30 outputs, 2 traits, 4 metrics, data simulated with
    independent errors (a special case of the model): R-hat <= 1.01; the 94% HDIs of the
    raw validity coefficients and error variances cover the truth for at least 10 of the
    12 (expected 11.3; the coverage study over 100 datasets is the benchmark); the
    residual correlations' HDIs cover the realized correlations of the true residuals
    (score minus true traits times true raw coefficients) for at least 4 of the 6 pairs
    (at the nominal 0.94 and independent pairs, P(3 or fewer) = 0.003; the estimand is
    this sample's correlation, not the population's 0, which sampling moves by about
    0.065 at 240 outputs; the coverage study records the rate); same seed, same numbers;
    LOO is refused with the reason."""
    import bayesmeta as bm
    from bayesmeta.summaries import summarize

    ds = simulate_joint_validity(11, n_systems=8, n_items=30, n_traits=2, n_metrics=4)
    res = bm.metric_variance(ds, TWO, estimator="joint", residuals="correlated",
                             random_seed=3)
    tab = res.summary()
    assert tab["r_hat"].max() <= 1.01
    assert res.idata.posterior.attrs["residuals"] == "correlated"
    post = res.idata.posterior
    hits = 0
    for name, truth in (("validity_raw", "true_validity_raw"),
                        ("error_variance", "true_error_variance")):
        dims = [d for d in ("metric", "trait") if d in post[name].dims]
        iv = summarize(post[name]).transpose(*dims, "ci_bound")["interval"].values
        t = ds[truth].transpose(*dims).values
        hits += int(((iv[..., 0] <= t) & (t <= iv[..., 1])).sum())
    assert hits >= 10
    rc = res.residual_correlations()
    realized = realized_error_corr(ds).values[np.triu_indices(4, 1)]
    assert list(rc.index.get_level_values("metric")) == [str(m) for m in
                                                         ds["metric"].values[[0, 0, 0, 1, 1, 2]]]
    assert int(((rc["hdi_low"] <= realized) & (realized <= rc["hdi_high"])).sum()) >= 4
    with pytest.raises(ValueError, match="residuals='correlated'"):
        res.loo()
    again = bm.metric_variance(ds, TWO, estimator="joint", residuals="correlated",
                               random_seed=3)
    np.testing.assert_allclose(again.summary()["mean"], tab["mean"], rtol=1e-12)


def test_auto_residuals_are_correlated_only_where_metrics_outnumber_the_ratings():
    from bayesmeta.validity._joint_correlated import resolve_residuals

    assert resolve_residuals("auto", "marginal", 43, 12) == "correlated"
    assert resolve_residuals("auto", "marginal", 6, 12) == "independent"
    assert resolve_residuals("auto", "noncentred", 43, 12) == "independent"
    assert resolve_residuals("correlated", "marginal", 6, 12) == "correlated"
    with pytest.raises(ValueError, match="residuals must be one of"):
        resolve_residuals("full", "marginal", 6, 12)
