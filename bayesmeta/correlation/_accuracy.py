r"""Tie-calibrated pairwise accuracy within groups under many resampling weights, fast.

For one metric, the pairs of members :math:`(k, l)` of each group :math:`g` are fixed
by the data; a resample only reweights them. With member weights :math:`W_r` and group
weights :math:`\beta_r`, the weight of pair :math:`(g, p{=}(k,l))` in resample :math:`r`
factorises as

.. math:: c_{rgp} = u_{rg}\, v_{rp}, \qquad v_{rp} = W_{rk} W_{rl},\quad
          u_{rg} = \frac{\beta_{rg}}{w_{rg} \sum_h \beta_{rh}},\quad
          w_{rg} = \textstyle\sum_p v_{rp}\, \mathrm{ok}_{gp},

so the accuracy without ties, :math:`\sum_{g,p} c_{rgp}\,\mathrm{agree}_{gp}`, and every
per-group weight are matrix products of ``(R, pairs)`` or ``(R, members)`` weights with
``(pairs, groups)`` per-item tables computed once. The threshold :math:`\varepsilon` is
re-calibrated in every resample (as MTME's ``PermutationSigDiff`` re-runs
``KendallWithTiesOpt`` on every permuted sample): the tie gain of :math:`\varepsilon` is a
prefix sum :math:`S_r(n) = \sum_{j < n} c_{r g_j p_j} \delta_j` over the pairs sorted by
:math:`|x_k - x_l|` (:math:`\delta = 1` human tie, :math:`-1` agreement, pairs with
:math:`\delta = 0` dropped), and the statistic takes its maximum over the ends of runs of
equal differences. The sort is done once per metric. The maximum is found exactly by bounds:
the sorted pairs are cut into blocks at candidate ends; one sparse product gives every
block's positive and negative mass for all resamples, whose prefix sums are exact values
:math:`S_r` at the block ends; a block is opened (prefix sums inside it for the resamples
concerned) only where its start value plus its positive mass exceeds the best block end.

:func:`accuracy_groups_direct` is the reference: the resamples one at a time as the
definition reads (the engine's code before this module); the tests check that the two
agree to 1e-12.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse

_MAX_ELEMENTS = 2**23          # doubles per temporary (64 MiB)
_BLOCK = 2048                  # target pairs per block of the bound
_MAX_BLOCKS = 1024             # and at most this many blocks (a Python loop runs over them)


def _pair_terms(xv, zv):
    """For all pairs k < l of the last axis: |metric difference|, agreement when the metric
    does not tie, and the change of agreement when it does tie (delta)."""
    K = xv.shape[-1]
    k, l_ = np.triu_indices(K, 1)
    with np.errstate(invalid="ignore"):
        dm, dh = xv[..., k] - xv[..., l_], zv[..., k] - zv[..., l_]
        h_tie = dh == 0
        agree = (~h_tie) & (np.sign(dm) == np.sign(dh)) & (dm != 0)
    return np.abs(dm), agree.astype(float), h_tie.astype(float) - agree, k, l_


def _run_ends(sorted_values: np.ndarray) -> np.ndarray:
    """True at the last element of each run of equal values (the candidate epsilons)."""
    d = sorted_values
    return np.concatenate([d[..., 1:] != d[..., :-1], np.ones_like(d[..., :1], bool)], -1)


def _chunks(n: int, size: int) -> list[slice]:
    size = max(1, int(size))
    return [slice(i, min(n, i + size)) for i in range(0, n, size)]


class _Plan:
    """What one metric's accuracy needs, whatever the weights: the per-group tables, the
    sorted nonzero tie terms with their candidate ends, and the blocks of the bound."""

    def __init__(self, x: np.ndarray, z: np.ndarray, valid: np.ndarray):
        G = x.shape[0]
        absd, agree, delta, k, l_ = _pair_terms(x, z)                 # (G, P)
        ok = valid[:, k] & valid[:, l_]
        self.k, self.l_ = k, l_
        P = k.size
        self.valid = valid.astype(float)                               # (G, K)
        self.ok = ok.astype(float)                                     # (G, P)
        self.agree = self.ok * agree
        c = (ok * delta).ravel()
        # the order within a run of equal differences changes no candidate's value
        order = np.argsort(absd.ravel())
        last = _run_ends(absd.ravel()[order])
        cs = c[order]
        keep = cs != 0
        npref = np.cumsum(keep)
        cand = npref[last]                              # non-decreasing
        # epsilon = 0 (no tie but exact ones) is a candidate too (prefix 0)
        if not np.any((absd == 0) & ok):
            cand = np.concatenate([[0], cand])
        self.cand = cand[np.concatenate([[True], cand[1:] != cand[:-1]])]
        pos = order[keep]
        self.g, self.p, self.c = pos // P, pos % P, cs[keep]
        n = self.c.size
        self.n = n
        # blocks: ends at candidates roughly every _BLOCK pairs (0 and n always ends)
        nb = max(1, min(n // _BLOCK, _MAX_BLOCKS))
        want = np.arange(1, nb) * (n / nb)
        ends = self.cand[np.minimum(np.searchsorted(self.cand, want), self.cand.size - 1)]
        self.bounds = np.unique(np.concatenate([[0, n], ends]).astype(np.int64))
        at = np.minimum(np.searchsorted(self.cand, self.bounds), self.cand.size - 1)
        self.bound_is_cand = self.cand[at] == self.bounds
        J = self.bounds.size - 1
        blk = np.searchsorted(self.bounds, np.arange(n), side="right") - 1
        self.inner = []                        # per block: its interior candidate ends
        for j in range(J):
            a = np.searchsorted(self.cand, self.bounds[j], side="right")
            b = np.searchsorted(self.cand, self.bounds[j + 1], side="left")
            self.inner.append(self.cand[a:b])
        # sparse block masses: rows (sign, block, kept index), columns the contracted one
        self.keep_pairs = P <= G
        ik, ic = (self.p, self.g) if self.keep_pairs else (self.g, self.p)
        nk, nc = (P, G) if self.keep_pairs else (G, P)
        sign = (self.c < 0).astype(np.int64)
        rows = (sign * J + blk) * nk + ik
        self.nk, self.J = nk, J
        self.mass = scipy.sparse.csr_matrix((self.c, (rows, ic)), shape=(2 * J * nk, nc))
        self.width = max(P, G, 2 * J * nk)

    def max_gain(self, u: np.ndarray, v: np.ndarray) -> np.ndarray:
        """max over candidate ends of the prefix sums S_r, for u (R, G), v (R, P)."""
        R = u.shape[0]
        if self.n == 0:
            return np.zeros(R)
        if R * self.n <= 4 * _MAX_ELEMENTS // 8 or self.J <= 1:
            return self._direct(u, v, 0, self.n, self.cand, np.zeros(R))
        keep, con = (v, u) if self.keep_pairs else (u, v)
        t = self.mass @ np.ascontiguousarray(con.T)                   # (2 J nk, R)
        t = t.reshape(2, self.J, self.nk, R)
        m = (t * keep.T).sum(2)                                       # (2, J, R)
        pos_mass, total = m[0].T, (m[0] + m[1]).T
        start = np.concatenate([np.zeros((R, 1)), np.cumsum(total, -1)], -1)  # (R, J + 1)
        best = np.where(self.bound_is_cand[None], start, -np.inf).max(-1)
        for j in range(self.J):
            if not self.inner[j].size:
                continue
            rows = np.flatnonzero(start[:, j] + pos_mass[:, j] > best)
            if not rows.size:
                continue
            lo, hi = self.bounds[j], self.bounds[j + 1]
            best[rows] = np.maximum(best[rows], self._direct(
                u[rows], v[rows], lo, hi, self.inner[j], start[rows, j]))
        return best

    def _direct(self, u, v, lo, hi, at, s0):
        """max over the candidate ends ``at`` (prefix counts in lo..hi) of s0 + the sums of
        the sorted pairs lo..at-1."""
        g, p, c = self.g[lo:hi], self.p[lo:hi], self.c[lo:hi]
        idx = np.asarray(at) - lo
        best = np.full(u.shape[0], -np.inf)
        for rs in _chunks(u.shape[0], _MAX_ELEMENTS // max(1, hi - lo)):
            e = u[rs][:, g] * v[rs][:, p] * c
            cs = np.concatenate([np.zeros((e.shape[0], 1)), np.cumsum(e, -1)], -1)
            best[rs] = (cs[:, idx] + s0[rs, None]).max(-1)
        return best


def accuracy_groups(x, z, valid, W, group_w, min_count):
    """acc_eq of each metric (R, M): within-group pairs under member weights W (R, K), one
    epsilon per metric and resample, groups averaged with weights ``group_w`` (R, G) (None:
    ones). x, valid (M, G, K); z (G, K)."""
    M, G, K = x.shape
    R = W.shape[0]
    z = np.broadcast_to(z, (G, K))
    W = np.asarray(W, float)
    out = np.full((R, M), np.nan)
    for m in range(M):
        plan = _Plan(x[m], z, valid[m])
        for rs in _chunks(R, _MAX_ELEMENTS // plan.width):
            Wr = W[rs]
            v = Wr[:, plan.k] * Wr[:, plan.l_]                          # (r, P)
            wg = v @ plan.ok.T                                          # (r, G)
            few = (Wr > 0).astype(float) @ plan.valid.T < min_count
            beta = np.ones(wg.shape) if group_w is None else np.array(group_w[rs], float)
            beta = np.where((wg > 0) & ~few, beta, 0.0)
            total = beta.sum(-1)
            with np.errstate(invalid="ignore", divide="ignore"):
                u = beta / np.where(wg > 0, wg, 1) / total[:, None]
                base = ((v @ plan.agree.T) * u).sum(-1)
            u = np.nan_to_num(u)
            acc = base + plan.max_gain(u, v)
            out[rs, m] = np.where(total > 0, acc, np.nan)
    return out


def accuracy_groups_direct(x, z, valid, W, group_w, min_count):
    """The reference of :func:`accuracy_groups`: every resample's pair weights, sorted
    tie gains and their cumulative sums formed in full."""
    M, G, K = x.shape
    R = W.shape[0]
    z = np.broadcast_to(z, (G, K))
    out = np.full((R, M), np.nan)
    for m in range(M):
        absd, agree, delta, k, l_ = _pair_terms(x[m], z)  # (G, P)
        ok = valid[m][:, k] & valid[m][:, l_]
        order = np.argsort(absd.ravel(), kind="stable")
        last = _run_ends(absd.ravel()[order])
        floor = -np.inf if np.any((absd == 0) & ok) else 0.0
        for rs in _chunks(R, 2**28 // (absd.size * 48 + 1)):
            Wr = W[rs]
            w = Wr[:, None, k] * Wr[:, None, l_] * ok  # (r, G, P)
            wg = w.sum(-1)
            few = ((Wr > 0)[:, None, :] & valid[m][None]).sum(-1) < min_count
            beta = np.ones(wg.shape) if group_w is None else np.array(group_w[rs], float)
            beta = np.where((wg > 0) & ~few, beta, 0.0)
            with np.errstate(invalid="ignore", divide="ignore"):
                coef = (beta / np.where(wg > 0, wg, 1) / beta.sum(-1, keepdims=True))[
                    ..., None] * w
                base = (coef * agree).sum((-1, -2))
                gain = np.cumsum((coef * delta).reshape(coef.shape[0], -1)[:, order], -1)
            acc = base + np.maximum(gain[:, last].max(-1), floor)
            out[rs, m] = np.where(beta.sum(-1) > 0, acc, np.nan)
    return out
