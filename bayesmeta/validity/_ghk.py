r"""The augmented-response likelihood of the ordinal CFA as one PyTensor Op with a numba
kernel and a hand-written gradient (used by ``build_augmented_model`` in ``_cfa_build``).

For each output :math:`n` the standardized latent responses :math:`y^*_n = \mu_n + L e_n`
(:math:`\Sigma = L L^\top`; :math:`\mu_n = 0` unless a mean is given) are filled into
the box of the observed categories one indicator at a time (Goodrich's parameterisation
of the GHK construction):

.. math::
    m_{nj} = \mu_{nj} + \sum_{k<j} L_{jk} e_{nk}, \quad
    a_{nj} = \frac{c^{lo}_{nj} - m_{nj}}{L_{jj}}, \quad
    b_{nj} = \frac{c^{hi}_{nj} - m_{nj}}{L_{jj}},

    e_{nj} = \Phi^{-1}\big(\Phi(a_{nj}) + u_{nj}(\Phi(b_{nj}) - \Phi(a_{nj}))\big),
    \qquad \ell = \sum_{nj} \log\big(\Phi(b_{nj}) - \Phi(a_{nj})\big).

Every step is evaluated in the lower tail (the interval is reflected when
:math:`a + b > 0`), with ``log_ndtr`` and ``ndtri_exp`` from SciPy's Cephes, so no
probability is formed by cancellation. ``GHKValueGrad`` returns :math:`\ell` and its
gradient with respect to :math:`L`, the cut points, :math:`u` and (given) :math:`\mu` in
one pass (the forward sweep keeps each entry's partial derivatives for the reverse sweep);
``GHKScores`` returns :math:`e` for derived quantities. ``Cholesky`` is a small dense
factor with its reverse mode (Murray 2016).

Written as kernels because the same recursion as a PyTensor graph (a ``scan`` over
indicators) cost 47 ms per gradient on SummEval against 3.6 ms here (model card).

Reference: Murray, I. (2016). Differentiation of the Cholesky decomposition.
arXiv:1602.07527.
"""

from __future__ import annotations

from functools import cache

import numpy as np


@cache
def _kernels():
    """The numba kernels ``forward`` (log-likelihood, innovations and the per-entry
    partials) and ``value_grad`` (the log-likelihood and its gradient, the reverse sweep
    reusing the forward's partials), from :mod:`bayesmeta.validity._ghk_kernels` (numba
    loaded on first use; compiled once, then cached on disk)."""
    from bayesmeta.validity import _ghk_kernels as k

    return k.forward, k.value_grad


@cache
def _chol_kernels():
    """A small dense Cholesky factor and its reverse mode (Murray 2016)."""
    from bayesmeta.validity import _ghk_kernels as k

    return k.chol, k.chol_grad


def kernel_version() -> int:
    """A number that changes with the kernels' source, for PyTensor's on-disk cache of the
    graphs that call them (its default key is the Op's type and props only, which would
    let a graph compiled with old kernels be loaded after they changed)."""
    from pathlib import Path

    from bayesmeta._interval import source_version

    return source_version(str(Path(__file__).parent / "_ghk_kernels.py"))


def ghk_numpy(L: np.ndarray, lo: np.ndarray, hi: np.ndarray, u: np.ndarray):
    """Forward pass in plain NumPy/SciPy (reference for the tests): ``(loglik, e)``."""
    from scipy import special

    N, J = lo.shape
    e = np.zeros((N, J))
    total = 0.0
    for j in range(J):
        m = e[:, :j] @ L[j, :j]
        a = (lo[:, j] - m) / L[j, j]
        b = (hi[:, j] - m) / L[j, j]
        pa, pb = special.ndtr(a), special.ndtr(b)
        e[:, j] = special.ndtri(pa + u[:, j] * (pb - pa))
        total += np.sum(np.log(pb - pa))
    return total, e


def _make_ops():
    import pytensor.tensor as pt
    from pytensor.gradient import DisconnectedType
    from pytensor.graph.basic import Apply
    from pytensor.graph.op import Op
    from pytensor.link.numba.dispatch.basic import register_funcify_default_op_cache_key

    names = ("L", "cuts", "lo_slot", "hi_slot", "u", "mu")
    kinds = ("float64", "float64", "int64", "int64", "float64", "float64")

    def check_inputs(shifted, *args):
        ins = [pt.as_tensor_variable(x) for x in args]
        n = 6 if shifted else 5
        if len(ins) != n:
            raise TypeError(f"GHK: expected {n} inputs ({', '.join(names[:n])}), got "
                            f"{len(ins)}.")
        for x, name, kind in zip(ins, names, kinds, strict=False):
            if x.dtype != kind:
                raise TypeError(f"GHK: input {name!r} must be {kind}, got {x.dtype}.")
            if name != "cuts" and x.ndim != 2:
                raise TypeError(f"GHK: input {name!r} must be a matrix, got {x.ndim} dims.")
        return ins

    dummy = np.zeros((1, 1))

    class GHKValueGrad(Op):
        """(L, cuts, lo_slot, hi_slot, u[, mu]) -> (loglik, dL, dcuts, du[, dmu]): the
        value and its gradient in one pass (the reverse sweep reuses the forward's
        partials, so the forward pass runs once per gradient evaluation). ``shifted``: the
        latent responses of output n have mean ``mu[n]`` instead of 0."""

        __props__ = ("shifted",)

        def __init__(self, shifted: bool = False):
            self.shifted = bool(shifted)

        def make_node(self, *args):
            ins = check_inputs(self.shifted, *args)
            outs = [pt.dscalar()] + [pt.dmatrix() for _ in range(4 if self.shifted else 3)]
            return Apply(self, ins, outs)

        def perform(self, node, inputs, output_storage):
            mu = inputs[5] if self.shifted else dummy
            total, *grads = _kernels()[1](*inputs[:5], mu, self.shifted)
            vals = [np.asarray(total), *grads[: len(output_storage) - 1]]
            for store, val in zip(output_storage, vals, strict=True):
                store[0] = val

        def infer_shape(self, fgraph, node, shapes):
            out = [(), shapes[0], shapes[1], shapes[4]]
            return [*out, shapes[5]] if self.shifted else out

        def L_op(self, inputs, outputs, output_grads):
            for other in output_grads[1:]:
                if not isinstance(other.type, DisconnectedType):
                    raise NotImplementedError("GHKValueGrad has no second derivatives.")
            g = output_grads[0]
            grads = [g * outputs[1], g * outputs[2], DisconnectedType()(),
                     DisconnectedType()(), g * outputs[3]]
            return [*grads, g * outputs[4]] if self.shifted else grads

        def connection_pattern(self, node):
            n_out = 5 if self.shifted else 4
            on, off = [True] * n_out, [False] * n_out
            return [on, on, off, off, on] + ([on] if self.shifted else [])

    class GHKScores(Op):
        """(L, cuts, lo_slot, hi_slot, u[, mu]) -> e, the standardized innovations (no
        gradient: for derived quantities only)."""

        __props__ = ("shifted",)

        def __init__(self, shifted: bool = False):
            self.shifted = bool(shifted)

        def make_node(self, *args):
            ins = check_inputs(self.shifted, *args)
            return Apply(self, ins, [pt.dmatrix()])

        def perform(self, node, inputs, output_storage):
            mu = inputs[5] if self.shifted else dummy
            output_storage[0][0] = _kernels()[0](*inputs[:5], mu, self.shifted)[1]

        def infer_shape(self, fgraph, node, shapes):
            return [shapes[4]]

    class Cholesky(Op):
        """Lower Cholesky factor of a small dense matrix (reads the lower triangle; NaN
        when not positive definite). Used instead of ``pt.linalg.cholesky`` because it is
        cheaper on the 12 x 12 factor: logp + gradient of the SummEval model 3.7-3.8 ms
        against 4.3-4.8 ms (one thread, numba)."""

        __props__ = ()

        def make_node(self, A):
            A = pt.as_tensor_variable(A)
            return Apply(self, [A], [pt.dmatrix()])

        def perform(self, node, inputs, output_storage):
            output_storage[0][0] = _chol_kernels()[0](np.asarray(inputs[0], dtype=float))

        def infer_shape(self, fgraph, node, shapes):
            return shapes

        def L_op(self, inputs, outputs, output_grads):
            return [CholeskyGrad()(outputs[0], output_grads[0])]

    class CholeskyGrad(Op):
        __props__ = ()

        def make_node(self, L, gL):
            ins = [pt.as_tensor_variable(L), pt.as_tensor_variable(gL)]
            return Apply(self, ins, [pt.dmatrix()])

        def perform(self, node, inputs, output_storage):
            L, gL = (np.asarray(x, dtype=float) for x in inputs)
            output_storage[0][0] = _chol_kernels()[1](L, gL)

        def infer_shape(self, fgraph, node, shapes):
            return [shapes[0]]

    # each returns (kernel, kernel_version()): the version salts PyTensor's cache key
    @register_funcify_default_op_cache_key(Cholesky)
    def _funcify_chol(op, node, **kwargs):  # pragma: no cover - numba backend only
        return _chol_kernels()[0], kernel_version()

    @register_funcify_default_op_cache_key(CholeskyGrad)
    def _funcify_chol_grad(op, node, **kwargs):  # pragma: no cover - numba backend only
        return _chol_kernels()[1], kernel_version()

    @register_funcify_default_op_cache_key(GHKValueGrad)
    def _funcify_value_grad(op, node, **kwargs):  # pragma: no cover - numba backend only
        from bayesmeta.validity import _ghk_kernels as k

        fn = k.ghk_value_grad_shifted if op.shifted else k.ghk_value_grad
        return fn, kernel_version()

    @register_funcify_default_op_cache_key(GHKScores)
    def _funcify_scores(op, node, **kwargs):  # pragma: no cover - numba backend only
        from bayesmeta.validity import _ghk_kernels as k

        return (k.ghk_scores_shifted if op.shifted else k.ghk_scores), kernel_version()

    return {False: (GHKValueGrad(False), GHKScores(False)),
            True: (GHKValueGrad(True), GHKScores(True)), "chol": Cholesky()}


@cache
def ops() -> dict:
    """``{False: (value_grad, scores), True: (shifted value_grad, shifted scores),
    "chol": cholesky}`` Op instances (PyTensor imported on first use)."""
    return _make_ops()


def ghk_loglik(L, cuts, lo_slot, hi_slot, u, mu=None):
    """Symbolic log-likelihood of the augmented responses (see the module docstring):
    ``cuts`` (J, K + 1) padded cut points, ``lo_slot``/``hi_slot`` (N, J) integer columns
    of ``cuts`` bounding each entry, ``u`` (N, J) in (0, 1); ``mu`` (N, J), optional: the
    mean of each output's latent responses (the box of entry (n, j) is then
    ``cuts - mu[n, j]``; its gradient is returned too)."""
    if mu is None:
        return ops()[False][0](L, cuts, lo_slot, hi_slot, u)[0]
    return ops()[True][0](L, cuts, lo_slot, hi_slot, u, mu)[0]


def cholesky(A):
    """Symbolic lower Cholesky factor of a small matrix (see ``Cholesky``)."""
    return ops()["chol"](A)


def ghk_innovations(L, cuts, lo_slot, hi_slot, u, mu=None):
    """Symbolic standardized innovations ``e`` (N, J), ``y* = mu + e L^T`` (no
    gradient)."""
    if mu is None:
        return ops()[False][1](L, cuts, lo_slot, hi_slot, u)
    return ops()[True][1](L, cuts, lo_slot, hi_slot, u, mu)
