r"""The summed ordinal-probit log-likelihood :math:`\sum_i \log(\Phi(u_i) - \Phi(l_i))` as
one PyTensor Op with its gradient, computed in one pass by a numba kernel (used by the
rater model; :func:`bayesmeta._ordinal.log_interval_prob_sum`).

The same quantity as ``log_interval_prob(lower, upper).sum()`` (:mod:`bayesmeta._ordinal`),
evaluated the same way: each interval is reflected so that :math:`l + u \le 0`, then
:math:`\log\Phi(u') + \operatorname{log1mexp}(\log\Phi(l') - \log\Phi(u'))`, so no
probability is formed by cancellation; :math:`\log\Phi` as Cephes computes it (through
``erfc``, and its asymptotic series below -20). The partial derivatives
need no reflection, :math:`\partial/\partial u = \phi(u) / P` and
:math:`\partial/\partial l = -\phi(l) / P`, formed in log space. As a PyTensor graph the
two ``switch`` branches of every step are each computed for every rating, and again in the
gradient graph: on SummEval's rater model (20,400 ratings) the likelihood was over 90% of a
gradient evaluation. The kernel computes each rating once: 2.5-3.3 CPU ms per evaluation
against 4.2-5.4 for the graph, ratio 1.66-1.69 (``benchmarks/bench_interval_kernel.py``,
load 8-9).

The Op runs in NumPy/SciPy on PyTensor's C and Python backends (``perform``), in numba on
the numba backend (nutpie's default), and in JAX on the JAX backend (registered by
:func:`register_jax`, which ``SamplerOptions(backend="jax")`` calls).
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np

_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)
_LN2 = math.log(2.0)
#: where Phi(lower) < 1e-300: the interval's lower end contributes nothing
_OPEN = -40.0


def interval_logp_numpy(lower: np.ndarray, upper: np.ndarray
                        ) -> tuple[float, np.ndarray, np.ndarray]:
    """Reference implementation (NumPy/SciPy): the sum of ``log(Phi(upper) -
    Phi(lower))`` and its partials with respect to ``lower`` and ``upper``."""
    from scipy import special

    lo, hi = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
    flip = lo + hi > 0
    a, b = np.where(flip, -hi, lo), np.where(flip, -lo, hi)
    lb = special.log_ndtr(b)
    with np.errstate(divide="ignore"):
        x = np.where(a < _OPEN, -np.inf, special.log_ndtr(a) - lb)
    x = np.minimum(x, -1e-300)
    with np.errstate(divide="ignore", invalid="ignore"):
        v = lb + np.where(x > -_LN2, np.log(-np.expm1(x)), np.log1p(-np.exp(x)))
        dl = -np.exp(-0.5 * lo * lo - _HALF_LOG_2PI - v)
        du = np.exp(-0.5 * hi * hi - _HALF_LOG_2PI - v)
    return float(v.sum()), dl, du


@cache
def source_version(path: str) -> int:
    """A number that changes with the source file at ``path`` (a kernel's module), to salt
    PyTensor's on-disk cache key of the Ops that call the kernel."""
    import hashlib
    from pathlib import Path

    return int(hashlib.sha256(Path(path).read_bytes()).hexdigest()[:12], 16)


@cache
def numba_log_ndtr():
    """``log Phi(x)`` as a numba function, accurate in both tails (relative error below
    1e-13 against SciPy's ``log_ndtr``): ``log1p(-erfc(x / sqrt 2) / 2)`` above -1,
    ``log(erfc(-x / sqrt 2) / 2)`` down to -20, then the asymptotic series (Abramowitz &
    Stegun 26.2.12, 11 terms, below 1e-17 there). Written with ``math.erfc`` rather than a
    call into SciPy through a pointer, so numba and PyTensor can cache what uses it."""
    import numba

    half_log_2pi = _HALF_LOG_2PI
    sqrt_half = math.sqrt(0.5)

    @numba.njit(cache=True)
    def log_ndtr(x):  # pragma: no cover - compiled
        if x > -1.0:
            return math.log1p(-0.5 * math.erfc(x * sqrt_half))
        if x > -20.0:
            return math.log(0.5 * math.erfc(-x * sqrt_half))
        z2 = 1.0 / (x * x)
        term, s = 1.0, 1.0
        for k in range(1, 12):
            term *= -(2 * k - 1) * z2
            s += term
        return -0.5 * x * x - math.log(-x) - half_log_2pi + math.log(s)

    return log_ndtr


@cache
def _kernel():
    """Compile (once) the numba kernel: 1-d ``lower``, ``upper`` -> (sum, d/dlower,
    d/dupper)."""
    import numba

    half_log_2pi, ln2, open_ = _HALF_LOG_2PI, _LN2, _OPEN
    log_ndtr = numba_log_ndtr()

    @numba.njit(cache=True, fastmath=False)
    def interval_logp(lower, upper):  # pragma: no cover - compiled
        n = lower.shape[0]
        dl = np.empty(n)
        du = np.empty(n)
        total = 0.0
        for i in range(n):
            lo = lower[i]
            hi = upper[i]
            if lo + hi > 0.0:
                a, b = -hi, -lo
            else:
                a, b = lo, hi
            lb = log_ndtr(b)
            x = -np.inf if a < open_ else log_ndtr(a) - lb
            if x > -1e-300:
                x = -1e-300
            if x > -ln2:
                v = lb + math.log(-math.expm1(x))
            else:
                v = lb + math.log1p(-math.exp(x))
            total += v
            dl[i] = -math.exp(-0.5 * lo * lo - half_log_2pi - v)
            du[i] = math.exp(-0.5 * hi * hi - half_log_2pi - v)
        return total, dl, du

    return interval_logp


def _jax_interval_logp(lower, upper):
    """The JAX implementation (same formulas; JAX imported by the caller)."""
    import jax.numpy as jnp
    from jax.scipy.special import log_ndtr

    flip = lower + upper > 0
    a = jnp.where(flip, -upper, lower)
    b = jnp.where(flip, -lower, upper)
    lb = log_ndtr(b)
    x = jnp.where(a < _OPEN, -jnp.inf, log_ndtr(jnp.maximum(a, _OPEN)) - lb)
    x = jnp.minimum(x, -1e-300)
    near = x > -_LN2
    v = lb + jnp.where(near, jnp.log(-jnp.expm1(jnp.where(near, x, -1.0))),
                       jnp.log1p(-jnp.exp(x)))
    dl = -jnp.exp(-0.5 * lower * lower - _HALF_LOG_2PI - v)
    du = jnp.exp(-0.5 * upper * upper - _HALF_LOG_2PI - v)
    return jnp.sum(v), dl, du


@cache
def interval_op():
    """The Op instance ``(lower, upper) -> (sum, d/dlower, d/dupper)`` on float64 vectors
    (PyTensor imported and the numba dispatch registered on first use)."""
    import pytensor.tensor as pt
    from pytensor.gradient import DisconnectedType
    from pytensor.graph.basic import Apply
    from pytensor.graph.op import Op
    from pytensor.link.numba.dispatch.basic import register_funcify_default_op_cache_key

    class IntervalLogProbSum(Op):
        """``(lower, upper) -> (sum_i log(Phi(upper_i) - Phi(lower_i)), d/dlower,
        d/dupper)`` on float64 vectors of one length; the value and its gradient in one
        pass."""

        __props__ = ()

        def make_node(self, lower, upper):
            ins = [pt.as_tensor_variable(x) for x in (lower, upper)]
            for x, name in zip(ins, ("lower", "upper"), strict=True):
                if x.ndim != 1 or x.dtype != "float64":
                    raise TypeError(f"IntervalLogProbSum: {name} must be a float64 vector, "
                                    f"got {x.ndim} dims of {x.dtype}.")
            return Apply(self, ins, [pt.dscalar(), pt.dvector(), pt.dvector()])

        def perform(self, node, inputs, output_storage):
            lo, hi = inputs
            if lo.shape != hi.shape:
                raise ValueError(f"IntervalLogProbSum: lower and upper differ in length "
                                 f"({lo.shape[0]} and {hi.shape[0]}).")
            total, dl, du = interval_logp_numpy(lo, hi)
            for store, val in zip(output_storage, (np.asarray(total), dl, du), strict=True):
                store[0] = val

        def infer_shape(self, fgraph, node, shapes):
            return [(), shapes[0], shapes[1]]

        def L_op(self, inputs, outputs, output_grads):
            for other in output_grads[1:]:
                if not isinstance(other.type, DisconnectedType):
                    raise NotImplementedError("IntervalLogProbSum has no second "
                                              "derivatives.")
            g = output_grads[0]
            return [g * outputs[1], g * outputs[2]]

    @register_funcify_default_op_cache_key(IntervalLogProbSum)
    def _funcify(op, node, **kwargs):  # pragma: no cover - numba backend only
        import numba

        kernel = _kernel()

        @numba.njit
        def interval_logp_sum(lower, upper):
            if lower.shape[0] != upper.shape[0]:
                raise ValueError("IntervalLogProbSum: lower and upper differ in length.")
            total, dl, du = kernel(lower, upper)
            out = np.empty(())  # PyTensor's scalar outputs are 0-d arrays
            out[()] = total
            return out, dl, du

        # salted with this file's hash: PyTensor's default key (the Op's type and props)
        # would load a graph compiled with an older kernel from its on-disk cache
        return interval_logp_sum, source_version(__file__)

    return IntervalLogProbSum()


@cache
def register_jax() -> None:
    """Register the Op's JAX implementation (call after JAX is configured for float64)."""
    from pytensor.link.jax.dispatch import jax_funcify

    op = interval_op()

    @jax_funcify.register(type(op))
    def _jax_funcify(op, **kwargs):
        return _jax_interval_logp
