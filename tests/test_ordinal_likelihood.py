"""The stable log(Phi(u) - Phi(l)) shared by the ordinal models, against scipy."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import special

pytensor = pytest.importorskip("pytensor")


def _reference(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    # independent route: scipy's log_ndtr on the reflected interval, then log1mexp
    flip = lo + hi > 0
    a, b = np.where(flip, -hi, lo), np.where(flip, -lo, hi)
    lb, la = special.log_ndtr(b), special.log_ndtr(a)
    return lb + np.log(-np.expm1(la - lb))


def test_log_interval_prob_matches_scipy_everywhere():
    import pytensor.tensor as pt

    from bayesmeta._ordinal import BIG, log_interval_prob

    rng = np.random.default_rng(0)
    lo = rng.normal(scale=8, size=5000)
    hi = lo + np.abs(rng.normal(scale=2, size=5000)) + 1e-7
    lo[:50], hi[50:100] = -BIG, BIG
    a, b = pt.dvector("a"), pt.dvector("b")
    out = log_interval_prob(a, b)
    f = pytensor.function([a, b], [out, *pytensor.grad(out.sum(), [a, b])])
    val, ga, gb = f(lo, hi)
    # 1e-10 absolute on log-probabilities down to about -1e4
    np.testing.assert_allclose(val, _reference(lo, hi), atol=1e-10, rtol=1e-12)
    assert np.isfinite(ga).all() and np.isfinite(gb).all()
    eps = 1e-6
    num = (f(lo + eps, hi)[0] - f(lo - eps, hi)[0]) / (2 * eps)
    sel = (np.abs(lo) < 10) & (hi - lo > 1e-3)  # the step must stay inside the interval
    # central differences: truncation error ~1e-8 on these smooth functions
    np.testing.assert_allclose(ga[sel], num[sel], atol=1e-6)
