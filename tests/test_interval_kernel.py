"""The ordinal-probit likelihood Op (``bayesmeta._interval``): the same value and gradient
as the PyTensor graph it replaces, on every backend, into both tails."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import special, stats

from bayesmeta._interval import _jax_interval_logp, _kernel, interval_logp_numpy
from bayesmeta._ordinal import BIG


def _intervals(n: int = 4000, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    lo = rng.normal(size=n) * 4
    hi = lo + rng.exponential(1.0, size=n)
    lo[:40] = -BIG  # the lowest category
    hi[40:80] = BIG  # the highest
    lo[80:90], hi[80:90] = -45.0, -40.0  # far in the lower tail
    lo[90:100], hi[90:100] = 30.0, 31.0  # far in the upper tail
    lo[100:110], hi[100:110] = -0.3, 0.3  # straddling 0 (reflection boundary)
    return lo, hi


def test_numpy_reference_equals_scipy_where_direct_is_exact():
    lo, hi = _intervals()
    m = (lo > -5) & (hi < 5)
    direct = np.log(stats.norm.cdf(hi[m]) - stats.norm.cdf(lo[m]))
    total, dl, du = interval_logp_numpy(lo[m], hi[m])
    np.testing.assert_allclose(total, direct.sum(), rtol=1e-12)
    p = np.exp(direct)
    np.testing.assert_allclose(dl, -stats.norm.pdf(lo[m]) / p, rtol=1e-9)
    np.testing.assert_allclose(du, stats.norm.pdf(hi[m]) / p, rtol=1e-9)
    # far in the lower tail, where the direct formula underflows: the asymptotic
    # log Phi(-40) - log Phi(-45) cancels in favour of log Phi(-40) (within 1e-12)
    t, _, _ = interval_logp_numpy(np.array([-45.0]), np.array([-40.0]))
    np.testing.assert_allclose(t, special.log_ndtr(-40.0), rtol=1e-12)


def test_numba_kernel_equals_numpy_reference():
    lo, hi = _intervals()
    a = interval_logp_numpy(lo, hi)
    b = _kernel()(lo, hi)
    np.testing.assert_allclose(b[0], a[0], rtol=1e-13)
    np.testing.assert_allclose(b[1], a[1], rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(b[2], a[2], rtol=1e-12, atol=1e-300)


@pytest.mark.parametrize("mode", ["FAST_RUN", "NUMBA"])
def test_op_equals_the_graph_it_replaces_with_its_gradient(mode):
    import pytensor
    import pytensor.tensor as pt

    from bayesmeta._ordinal import log_interval_prob, log_interval_prob_sum

    lo, hi = _intervals()
    L, U = pt.dvector("l"), pt.dvector("u")
    ref, new = log_interval_prob(L, U).sum(), log_interval_prob_sum(L, U)
    f = pytensor.function([L, U], [ref, new, *pytensor.grad(ref, [L, U]),
                                   *pytensor.grad(new, [L, U])], mode=mode)
    r, n, gl_r, gu_r, gl_n, gu_n = f(lo, hi)
    np.testing.assert_allclose(n, r, rtol=1e-13)
    np.testing.assert_allclose(gl_n, gl_r, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(gu_n, gu_r, rtol=1e-9, atol=1e-12)


def test_op_broadcasts_matrices_and_matches_finite_differences():
    import pytensor
    import pytensor.tensor as pt

    from bayesmeta._ordinal import log_interval_prob_sum

    rng = np.random.default_rng(3)
    lo = rng.normal(size=(5, 4))
    width = rng.exponential(1.0, size=(5, 4))
    L, W = pt.dmatrix("l"), pt.dmatrix("w")
    out = log_interval_prob_sum(L, L + W)
    f = pytensor.function([L, W], out)
    g = pytensor.function([L, W], pytensor.grad(out, L))
    eps = 1e-6
    num = np.zeros_like(lo)
    for idx in np.ndindex(lo.shape):
        e = np.zeros_like(lo)
        e[idx] = eps
        num[idx] = (f(lo + e, width) - f(lo - e, width)) / (2 * eps)
    np.testing.assert_allclose(g(lo, width), num, rtol=1e-6, atol=1e-8)
    # a scalar upper bound broadcasts against a vector of lower bounds
    v = pt.dvector("v")
    h = pytensor.function([v], log_interval_prob_sum(v, 2.0))
    x = np.array([-1.0, 0.0, 1.0])
    np.testing.assert_allclose(h(x), np.log(stats.norm.cdf(2.0) - stats.norm.cdf(x)).sum(),
                               rtol=1e-12)


def test_jax_implementation_equals_numpy_reference():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    lo, hi = _intervals()
    a = interval_logp_numpy(lo, hi)
    b = [np.asarray(x) for x in _jax_interval_logp(lo, hi)]
    np.testing.assert_allclose(b[0], a[0], rtol=1e-11)
    np.testing.assert_allclose(b[1], a[1], rtol=1e-9, atol=1e-300)
    np.testing.assert_allclose(b[2], a[2], rtol=1e-9, atol=1e-300)


def test_bad_inputs_are_refused_and_there_is_no_second_derivative():
    import pytensor
    import pytensor.tensor as pt

    from bayesmeta._interval import interval_op

    with pytest.raises(TypeError, match="lower must be a float64 vector"):
        interval_op()(pt.dmatrix(), pt.dvector())
    L, U = pt.dvector("l"), pt.dvector("u")
    f = pytensor.function([L, U], interval_op()(L, U)[0], mode="FAST_RUN")
    with pytest.raises(ValueError, match="lower and upper differ in length"):
        f(np.zeros(3), np.ones(4))
    g = pytensor.grad(interval_op()(L, U)[0], L)
    with pytest.raises(NotImplementedError, match="no second derivatives"):
        pytensor.grad(g.sum(), L)


@pytest.fixture(scope="module")
def small_rater_design():
    from bayesmeta.raters import model as rm
    from bayesmeta.simulate import simulate_rater

    data = simulate_rater(3, n_systems=4, n_items=6, traits=("COH", "CON"), missing=0.05)
    return rm.rater_design(data)


def test_rater_model_log_density_is_unchanged(small_rater_design):
    """The rater model's log density and gradient at a random point equal those of the
    PyTensor graph the Op replaced (same model, cheaper gradient)."""
    import bayesmeta._ordinal as O
    from bayesmeta.raters import model as rm

    new = rm.build_rater_model(small_rater_design)
    orig = O.log_interval_prob_sum
    try:
        O.log_interval_prob_sum = lambda lo, hi: O.log_interval_prob(lo, hi).sum()
        old = rm.build_rater_model(small_rater_design)
    finally:
        O.log_interval_prob_sum = orig
    rng = np.random.default_rng(5)
    vals = []
    for m in (old, new):
        f = m.logp_dlogp_function(ravel_inputs=True, mode="FAST_COMPILE")
        f.set_extra_values({})
        ip = m.initial_point()
        x0 = np.concatenate([np.asarray(ip[v.name]).ravel() for v in f._grad_vars])
        vals.append((f, x0))
    x = vals[0][1] + rng.normal(scale=0.3, size=vals[0][1].size)
    (lp_o, g_o), (lp_n, g_n) = vals[0][0](x), vals[1][0](x)
    assert np.isfinite(lp_o)
    np.testing.assert_allclose(lp_n, lp_o, rtol=1e-12)
    np.testing.assert_allclose(g_n, g_o, rtol=1e-9, atol=1e-9)
