"""The numba kernels of :mod:`bayesmeta.validity._ghk` (imported by it on first use, so
``import bayesmeta`` does not load numba): the GHK forward and reverse sweeps, the small
dense Cholesky factor with its reverse mode, and the entry points PyTensor's numba
backend calls.

Every kernel is cached on disk (``cache=True``), so a second process loads the machine
code instead of compiling it, and so can PyTensor's cache of the model graphs that call
them. That needs no pointer in the compiled code: SciPy's Cephes ``log_ndtr`` and
``ndtri_exp`` are called by symbol name (registered with LLVM at import), not through a
ctypes function pointer (which numba refuses to cache, "dynamic globals").
"""

from __future__ import annotations

import llvmlite.binding as llvm
import numba
import numpy as np
from numba.core import types
from numba.extending import get_cython_function_address

_CS = "scipy.special.cython_special"
llvm.add_symbol("bayesmeta_cephes_log_ndtr",
                get_cython_function_address(_CS, "__pyx_fuse_1log_ndtr"))
llvm.add_symbol("bayesmeta_cephes_ndtri_exp", get_cython_function_address(_CS, "ndtri_exp"))
_SIG = types.float64(types.float64, types.intc)
_log_ndtr = types.ExternalFunction("bayesmeta_cephes_log_ndtr", _SIG)
_ndtri_exp = types.ExternalFunction("bayesmeta_cephes_ndtri_exp", _SIG)
_HALF_LOG_2PI = 0.5 * float(np.log(2 * np.pi))


@numba.njit(cache=True, fastmath=False)
def forward(L, cuts, lo_slot, hi_slot, u, mu, shifted):  # pragma: no cover - compiled
    # shifted: y*_n has mean mu[n] (the box moves by -mu[n]); else mu is not read
    N, J = u.shape
    if shifted and (mu.shape[0] != N or mu.shape[1] != J):
        raise ValueError("GHK: mu must have the shape of u (N, J).")
    e = np.empty((N, J))
    aux = np.empty((7, N, J))  # a, b, de/da, de/db, de/du, dl/da, dl/db
    total = 0.0
    for n in range(N):
        for j in range(J):
            m = mu[n, j] if shifted else 0.0
            for k in range(j):
                m += L[j, k] * e[n, k]
            d = L[j, j]
            a = (cuts[j, lo_slot[n, j]] - m) / d
            b = (cuts[j, hi_slot[n, j]] - m) / d
            uu = u[n, j]
            flip = a + b > 0.0
            if flip:
                a_r, b_r, u_r = -b, -a, 1.0 - uu
            else:
                a_r, b_r, u_r = a, b, uu
            lb = _log_ndtr(b_r, 0)
            open_below = a_r < -40.0  # Phi(a_r) < 1e-300: an outer category
            if open_below:
                ldel, inner = lb, u_r
            else:
                x = _log_ndtr(a_r, 0) - lb  # <= 0
                r = np.exp(x)
                if x > -0.6931471805599453:
                    ldel = lb + np.log(-np.expm1(x))
                else:
                    ldel = lb + np.log1p(-r)
                inner = r + u_r * (1.0 - r)
            if inner < 1e-300:
                inner = 1e-300
            e_r = _ndtri_exp(lb + np.log(inner), 0)
            lphi_e = -0.5 * e_r * e_r - _HALF_LOG_2PI
            lphi_b = -0.5 * b_r * b_r - _HALF_LOG_2PI
            # three exponentials instead of five: de/du = delta / phi(e), dl/db =
            # phi(b) / delta, dl/da = -phi(a) / delta, and de/db, de/da their products
            de_du = np.exp(ldel - lphi_e)
            dl_db = np.exp(lphi_b - ldel)
            de_db = u_r * dl_db * de_du
            if open_below:
                dl_da, de_da = 0.0, 0.0
            else:
                pa = np.exp(-0.5 * a_r * a_r - _HALF_LOG_2PI - ldel)
                dl_da = -pa
                de_da = (1.0 - u_r) * pa * de_du
            total += ldel
            aux[0, n, j] = a
            aux[1, n, j] = b
            aux[4, n, j] = de_du
            if flip:
                e[n, j] = -e_r
                aux[2, n, j] = de_db
                aux[3, n, j] = de_da
                aux[5, n, j] = -dl_db
                aux[6, n, j] = -dl_da
            else:
                e[n, j] = e_r
                aux[2, n, j] = de_da
                aux[3, n, j] = de_db
                aux[5, n, j] = dl_da
                aux[6, n, j] = dl_db
    return total, e, aux


@numba.njit(cache=True, fastmath=False)
def reverse(L, cuts, lo_slot, hi_slot, e, aux, shifted):  # pragma: no cover - compiled
    # gradient of the total log-likelihood (e enters only through later steps)
    N, J = e.shape
    gL = np.zeros((J, J))
    gcuts = np.zeros(cuts.shape)
    gu = np.empty((N, J))
    gmu = np.empty((N, J) if shifted else (1, 1))
    eb = np.empty(J)
    for n in range(N):
        eb[:] = 0.0
        for j in range(J - 1, -1, -1):
            ab = aux[5, n, j] + eb[j] * aux[2, n, j]
            bb = aux[6, n, j] + eb[j] * aux[3, n, j]
            gu[n, j] = eb[j] * aux[4, n, j]
            d = L[j, j]
            gcuts[j, lo_slot[n, j]] += ab / d
            gcuts[j, hi_slot[n, j]] += bb / d
            # a, b are +-huge only where their partials are exactly 0
            ta = ab * aux[0, n, j] if ab != 0.0 else 0.0
            tb = bb * aux[1, n, j] if bb != 0.0 else 0.0
            gL[j, j] -= (ta + tb) / d
            mb = -(ab + bb) / d
            if shifted:
                gmu[n, j] = mb
            for k in range(j):
                gL[j, k] += mb * e[n, k]
                eb[k] += mb * L[j, k]
    return gL, gcuts, gu, gmu


@numba.njit(cache=True)
def value_grad(L, cuts, lo_slot, hi_slot, u, mu, shifted):  # pragma: no cover
    total, e, aux = forward(L, cuts, lo_slot, hi_slot, u, mu, shifted)
    gL, gcuts, gu, gmu = reverse(L, cuts, lo_slot, hi_slot, e, aux, shifted)
    return total, gL, gcuts, gu, gmu


@numba.njit(cache=True)
def chol(A):  # pragma: no cover - compiled
    n = A.shape[0]
    L = np.zeros((n, n))
    for j in range(n):
        s = A[j, j]
        for k in range(j):
            s -= L[j, k] * L[j, k]
        if not s > 0.0:
            return np.full((n, n), np.nan)
        L[j, j] = np.sqrt(s)
        for i in range(j + 1, n):
            t = A[i, j]
            for k in range(j):
                t -= L[i, k] * L[j, k]
            L[i, j] = t / L[j, j]
    return L


@numba.njit(cache=True)
def solve_upper_t(L, B):  # pragma: no cover - compiled; X with L^T X = B
    n = L.shape[0]
    X = np.empty_like(B)
    for c in range(B.shape[1]):
        for i in range(n - 1, -1, -1):
            t = B[i, c]
            for k in range(i + 1, n):
                t -= L[k, i] * X[k, c]
            X[i, c] = t / L[i, i]
    return X


@numba.njit(cache=True)
def chol_grad(L, gL):  # pragma: no cover - compiled
    n = L.shape[0]
    P = L.T @ gL
    for i in range(n):
        P[i, i] *= 0.5
        for j in range(i + 1, n):
            P[i, j] = 0.0
    Y = solve_upper_t(L, P)
    S = solve_upper_t(L, Y.T.copy()).T.copy()
    G = np.zeros((n, n))
    for i in range(n):
        G[i, i] = S[i, i]
        for j in range(i):
            G[i, j] = S[i, j] + S[j, i]
    return G


# ---- entry points of the PyTensor Ops (GHKValueGrad, GHKScores; shifted or not) --------


@numba.njit(cache=True)
def ghk_value_grad_shifted(L, cuts, lo_slot, hi_slot, u, mu):  # pragma: no cover
    total, gL, gcuts, gu, gmu = value_grad(L, cuts, lo_slot, hi_slot, u, mu, True)
    out = np.empty(())  # PyTensor's scalar outputs are 0-d arrays
    out[()] = total
    return out, gL, gcuts, gu, gmu


@numba.njit(cache=True)
def ghk_value_grad(L, cuts, lo_slot, hi_slot, u):  # pragma: no cover
    total, gL, gcuts, gu, _ = value_grad(L, cuts, lo_slot, hi_slot, u, np.zeros((1, 1)),
                                         False)
    out = np.empty(())
    out[()] = total
    return out, gL, gcuts, gu


@numba.njit(cache=True)
def ghk_scores_shifted(L, cuts, lo_slot, hi_slot, u, mu):  # pragma: no cover
    return forward(L, cuts, lo_slot, hi_slot, u, mu, True)[1]


@numba.njit(cache=True)
def ghk_scores(L, cuts, lo_slot, hi_slot, u):  # pragma: no cover
    return forward(L, cuts, lo_slot, hi_slot, u, np.zeros((1, 1)), False)[1]
