"""The augmented-response likelihood of the ordinal CFA (``bayesmeta.validity._ghk``): the
numba kernel against SciPy, its hand-written gradient against finite differences, the GHK
identity against SciPy's multivariate normal box probability, and the conditional factor
scores against a simulation."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import special, stats

pytensor = pytest.importorskip("pytensor")
pytest.importorskip("numba")


def _corr(J: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((J, J))
    S = A @ A.T + J * np.eye(J)
    d = np.sqrt(np.diag(S))
    return S / np.outer(d, d)


def _problem(N: int = 40, J: int = 5, seed: int = 0):
    """A random correlation factor, cut points (padded with -BIG/BIG), categories with one
    missing entry (slots 0 and K: the whole line)."""
    from bayesmeta._ordinal import BIG

    rng = np.random.default_rng(seed)
    L = np.linalg.cholesky(_corr(J, seed))
    inner = np.sort(rng.normal(0, 1, (J, 4)), axis=1)
    cuts = np.concatenate([np.full((J, 1), -BIG), inner, np.full((J, 1), BIG)], axis=1)
    cat = rng.integers(0, 5, (N, J))
    lo_slot, hi_slot = cat.astype(np.int64), (cat + 1).astype(np.int64)
    lo_slot[3, 2], hi_slot[3, 2] = 0, 5
    u = rng.uniform(size=(N, J))
    return L, cuts, lo_slot, hi_slot, u


def _bounds(cuts, lo_slot, hi_slot):
    rows = np.arange(cuts.shape[0])[None, :]
    return cuts[rows, lo_slot], cuts[rows, hi_slot]


def _forward(L, cuts, lo_s, hi_s, u, mu=None):
    """The forward kernel, unshifted unless ``mu`` is given."""
    from bayesmeta.validity._ghk import _kernels

    if mu is None:
        return _kernels()[0](L, cuts, lo_s, hi_s, u, np.zeros((1, 1)), False)
    return _kernels()[0](L, cuts, lo_s, hi_s, u, mu, True)


def test_kernel_matches_scipy_reference():
    from bayesmeta.validity._ghk import ghk_numpy

    L, cuts, lo_s, hi_s, u = _problem()
    total, e, _ = _forward(L, cuts, lo_s, hi_s, u)
    ref_total, ref_e = ghk_numpy(L, *_bounds(cuts, lo_s, hi_s), u)
    assert total == pytest.approx(ref_total, rel=1e-12)
    np.testing.assert_allclose(e, ref_e, atol=1e-10)


def test_far_tail_is_finite_and_exact():
    """A box 9 sd out: Phi(-9) is 1e-19, where forming Phi(b) - Phi(a) from the upper
    side cancels to 0. One indicator: the log-probability is log Phi(-9) exactly."""
    cuts = np.array([[-1e3, 9.0, 1e3]])
    total, e, _ = _forward(np.eye(1), cuts, np.array([[1]]), np.array([[2]]),
                           np.array([[0.3]]))
    assert total == pytest.approx(special.log_ndtr(-9.0), rel=1e-12)
    # e is the 0.3 quantile of N(0, 1) truncated to (9, inf)
    p = special.ndtr(-9.0) * 0.7  # upper-tail mass beyond e
    assert e[0, 0] == pytest.approx(-special.ndtri(p), rel=1e-10)


def test_ghk_identity_against_multivariate_normal_box_probability():
    """Averaged over uniform u, prod_j (Phi(b_j) - Phi(a_j)) is P(y* in box) for
    y* ~ N(0, Sigma) (Genz 1992): checked against SciPy's multivariate normal CDF."""
    J = 3
    S = _corr(J, 3)
    L = np.linalg.cholesky(S)
    cuts = np.array([[-1e3, -0.5, 0.7, 1e3], [-1e3, -1.0, 0.2, 1e3], [-1e3, 0.1, 1.5, 1e3]])
    lo_s = np.array([[1, 0, 1]], dtype=np.int64)
    hi_s = lo_s + 1
    rng = np.random.default_rng(11)
    M = 4000
    u = rng.uniform(size=(M, J))
    fw = _forward
    probs = np.exp([fw(L, cuts, lo_s, hi_s, u[i:i + 1])[0] for i in range(M)])
    lower = np.array([-0.5, -np.inf, 0.1])
    upper = np.array([0.7, -1.0, 1.5])
    ref = stats.multivariate_normal(mean=np.zeros(J), cov=S).cdf(upper, lower_limit=lower)
    se = probs.std() / np.sqrt(M)
    assert abs(probs.mean() - ref) < 4 * se + 1e-4


def _central_difference(f, args0, i, idx, eps=1e-6):
    """Central difference of ``f(*args)[0]`` in entry ``idx`` of argument ``i``."""
    up = [a.copy() for a in args0]
    dn = [a.copy() for a in args0]
    up[i][idx] += eps
    dn[i][idx] -= eps
    return (f(*up)[0] - f(*dn)[0]) / (2 * eps)


@pytest.mark.parametrize("mode", ["FAST_RUN", "NUMBA"])
def test_gradient_matches_finite_differences(mode):
    import pytensor.tensor as pt

    from bayesmeta.validity._ghk import ghk_loglik

    L0, cuts0, lo_s, hi_s, u0 = _problem(N=30, J=5, seed=2)
    L, c, u = pt.dmatrix("L"), pt.dmatrix("c"), pt.dmatrix("u")
    total = ghk_loglik(L, c, pt.constant(lo_s), pt.constant(hi_s), u)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f = pytensor.function([L, c, u], [total, *pytensor.grad(total, [L, c, u])],
                              mode=mode)
    out = f(L0, cuts0, u0)
    args0 = [L0, cuts0, u0]

    checks = [(0, (3, 1)), (0, (4, 4)), (0, (2, 0)), (1, (0, 1)), (1, (3, 3)),
              (1, (4, 2)), (2, (0, 0)), (2, (10, 3)), (2, (3, 2))]
    for i, idx in checks:
        ref = _central_difference(f, args0, i, idx)
        assert out[1 + i][idx] == pytest.approx(ref, rel=1e-5, abs=1e-6), (i, idx)


def test_shifted_box_equals_moved_cut_points():
    """A mean mu[n, j] moves entry (n, j)'s box by -mu[n, j]: with one mean per
    indicator the shifted kernel equals the unshifted one on cut points minus that mean,
    value and innovations (to rounding)."""
    L, cuts, lo_s, hi_s, u = _problem(N=40, J=4, seed=5)
    shift = np.array([0.3, -0.7, 1.1, 0.0])
    mu = np.tile(shift, (40, 1))
    moved = cuts - shift[:, None]
    t1, e1, _ = _forward(L, cuts, lo_s, hi_s, u, mu)
    t0, e0, _ = _forward(L, moved, lo_s, hi_s, u)
    assert t1 == pytest.approx(t0, rel=1e-12)
    np.testing.assert_allclose(e1, e0, atol=1e-10)


@pytest.mark.parametrize("mode", ["FAST_RUN", "NUMBA"])
def test_shifted_gradient_matches_finite_differences(mode):
    import pytensor.tensor as pt

    from bayesmeta.validity._ghk import ghk_loglik

    L0, cuts0, lo_s, hi_s, u0 = _problem(N=30, J=5, seed=2)
    mu0 = np.random.default_rng(8).normal(scale=0.5, size=u0.shape)
    L, c, u, mu = pt.dmatrix("L"), pt.dmatrix("c"), pt.dmatrix("u"), pt.dmatrix("mu")
    total = ghk_loglik(L, c, pt.constant(lo_s), pt.constant(hi_s), u, mu)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f = pytensor.function([L, c, u, mu],
                              [total, *pytensor.grad(total, [L, c, u, mu])], mode=mode)
    args0 = [L0, cuts0, u0, mu0]
    out = f(*args0)

    checks = [(0, (3, 1)), (0, (4, 4)), (1, (0, 1)), (1, (3, 3)), (2, (10, 3))]
    for i, idx in checks:
        ref = _central_difference(f, args0, i, idx)
        assert out[1 + i][idx] == pytest.approx(ref, rel=1e-5, abs=1e-6), (i, idx)
    # every entry of the mean, boxes reflected (a + b > 0) or not
    num = np.array([[_central_difference(f, args0, 3, (n, j)) for j in range(5)]
                    for n in range(30)])
    np.testing.assert_allclose(out[4], num, rtol=1e-5, atol=1e-6)


def test_cholesky_op_matches_numpy_and_pytensor_gradient():
    import pytensor.tensor as pt

    from bayesmeta.validity._ghk import cholesky

    S = _corr(6, 5)
    W = np.random.default_rng(0).standard_normal((6, 6))
    X = pt.dmatrix("X")
    sym = (X + X.T) / 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = pytensor.function([X], [cholesky(X), pytensor.grad(pt.sum(cholesky(sym) * W), X)],
                                 mode="NUMBA")
        ref = pytensor.function([X], pytensor.grad(pt.sum(pt.linalg.cholesky(sym) * W), X))
    Lc, g = ours(S)
    np.testing.assert_allclose(Lc, np.linalg.cholesky(S), atol=1e-14)
    np.testing.assert_allclose(g, ref(S), atol=1e-10)
    assert np.isnan(ours(-np.eye(6))[0]).all()  # not positive definite: NaN, not a crash


def test_conditional_factor_scores_match_simulation():
    """The factor scores drawn after an augmented fit use E[eta | y*] = A e and
    Cov[eta | y*] = Psi - A A^T; a simulation of (eta, y*) from the model recovers both
    (regression of eta on y*, 200,000 draws)."""
    import arviz as az

    from bayesmeta.validity._cfa_build import design_from_wide
    from bayesmeta.validity._cfa_derived import draw_factor_scores

    F, fo = 2, np.array([0, 0, 0, 1, 1, 1])
    lstd = np.array([0.9, 0.8, 0.7, 0.95, 0.6, 0.85])
    psi = np.array([[1.0, 0.5], [0.5, 1.0]])
    lam = lstd[:, None] * np.eye(F)[fo]
    sigma = lam @ psi @ lam.T + np.diag(1 - lstd**2)
    rng = np.random.default_rng(4)
    M = 200_000
    eta = rng.multivariate_normal(np.zeros(F), psi, size=M)
    ystar = eta @ lam.T + rng.standard_normal((M, 6)) * np.sqrt(1 - lstd**2)
    B, *_ = np.linalg.lstsq(ystar, eta, rcond=None)
    resid_cov = np.cov((eta - ystar @ B).T)
    # the result's conditional covariance, read off the drawn scores (zero mean stored)
    values = np.ones((5, 6))
    design = design_from_wide(values, factors=("a", "b"), indicators=tuple("pqrstu"),
                              factor_of=fo, scale=(1, 5))
    S = 4000
    post = {"loading_std": np.broadcast_to(lstd, (1, S, 6)).copy(),
            "factor_corr": np.broadcast_to(psi, (1, S, F, F)).copy(),
            "factor_score_mean": np.zeros((1, S, 5, F))}
    idata = az.from_dict(posterior=post, dims={"factor_score_mean": ["output", "trait"]})
    draw_factor_scores(idata, design, seed=1)
    draws = idata.posterior["factor_score"].values.reshape(-1, F)
    np.testing.assert_allclose(np.cov(draws.T), resid_cov, atol=0.01)
    L = np.linalg.cholesky(sigma)
    A = np.linalg.solve(L, lam @ psi).T
    np.testing.assert_allclose(A @ np.linalg.inv(L), B.T, atol=0.01)  # E[eta|y*] = A L^-1 y*


def test_wrong_dtype_names_the_input():
    import pytensor.tensor as pt

    from bayesmeta.validity._ghk import ghk_loglik

    L0, cuts0, lo_s, hi_s, u0 = _problem(N=5, J=3)
    with pytest.raises(TypeError, match="'lo_slot' must be int64, got float64"):
        ghk_loglik(pt.as_tensor(L0), pt.as_tensor(cuts0), pt.as_tensor(lo_s.astype(float)),
                   pt.as_tensor(hi_s), pt.as_tensor(u0))
