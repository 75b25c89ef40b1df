"""Numerically stable pieces shared by the ordinal (probit) models.

``log(Phi(u) - Phi(l))`` for l < u is computed without cancellation: the interval is
reflected so that ``l + u <= 0`` (both ends mostly in the lower tail, where ``Phi`` is
computed through the scaled complementary error function ``erfcx``), then
``log Phi(u) + log1mexp(log Phi(l) - log Phi(u))``. Per gradient evaluation this is an
order of magnitude cheaper than ``pm.OrderedProbit`` on the SummEval CFA (see the model
card of ordinal_cfa).

The module imports pytensor lazily: call these functions only while building a model.
"""

from __future__ import annotations

import numpy as np

SQRT2 = float(np.sqrt(2.0))
BIG = 1e3  # stands in for +-infinity at the outer cut points


def log_ndtr(x):
    """log Phi(x), stable in both tails (pytensor)."""
    import pytensor.tensor as pt

    lower = pt.log(0.5 * pt.erfcx(-x / SQRT2)) - 0.5 * x**2
    upper = pt.log1p(-0.5 * pt.erfc(x / SQRT2))
    return pt.switch(x < -1.0, lower, upper)


def log_interval_prob(lower, upper):
    """log(Phi(upper) - Phi(lower)) for lower < upper (pytensor), stable everywhere.

    Use ``-BIG`` / ``BIG`` for the outer cut points instead of infinities.
    """
    import pytensor.tensor as pt

    flip = (lower + upper) > 0
    lo = pt.switch(flip, -upper, lower)
    hi = pt.switch(flip, -lower, upper)
    log_hi = log_ndtr(hi)
    log_lo = log_ndtr(lo)
    return log_hi + log1mexp(log_lo - log_hi)


def log_interval_prob_sum(lower, upper):
    """``log_interval_prob(lower, upper).sum()`` as one Op whose value and gradient a
    kernel computes in one pass (:mod:`bayesmeta._interval`): the same numbers, several
    times cheaper per gradient evaluation. ``lower`` and ``upper`` broadcast together."""
    import pytensor.tensor as pt

    from bayesmeta._interval import interval_op

    lo, hi = pt.broadcast_arrays(pt.as_tensor_variable(lower).astype("float64"),
                                 pt.as_tensor_variable(upper).astype("float64"))
    return interval_op()(lo.ravel(), hi.ravel())[0]


def log1mexp(x):
    """log(1 - exp(x)) for x <= 0 (pytensor), the Maechler (2012) split."""
    import pytensor.tensor as pt

    x = pt.minimum(x, -1e-300)
    return pt.switch(x > -0.6931471805599453, pt.log(-pt.expm1(x)), pt.log1p(-pt.exp(x)))


def padded_cutpoints(cut):
    """Add -BIG and +BIG to the last axis of a (..., K-1) cut-point tensor."""
    import pytensor.tensor as pt

    shape = tuple(cut.shape[:-1])
    lo = pt.full((*shape, 1), -BIG)
    hi = pt.full((*shape, 1), BIG)
    return pt.concatenate([lo, cut, hi], axis=-1)


def ordered_from_free(first, log_gaps):
    """Ordered cut points: ``first`` then cumulative positive gaps ``exp(log_gaps)``.

    ``first`` has shape (...,) and ``log_gaps`` (..., K-2); returns (..., K-1).
    """
    import pytensor.tensor as pt

    gaps = pt.exp(log_gaps)
    rest = first[..., None] + pt.cumsum(gaps, axis=-1)
    return pt.concatenate([first[..., None], rest], axis=-1)
