"""Vectorised kernels behind the correlation measures (private; NumPy only).

A *group* is a set of K members correlated at once: the 17 systems of one item (input level),
the 100 items of one system (item level) or all 1,700 outputs (global level). Arrays are laid
out member-major, ``(..., K, R)``, with the R resamples last.

Two engines compute the statistics of many resamples of a group at once:

* :func:`weighted_group` -- values fixed, member *weights* vary (unit weights: the sample
  statistic; bootstrap counts; Bayesian-bootstrap Dirichlet weights; split halves).
* :func:`swapped_group` -- weights fixed, the *values* of two metrics swapped member by member
  by 0/1 masks (permutation tests).

Both get the rank quantities from counts: with the members sorted once, the (weighted) number
of members below and equal to each value is a cumulative sum read at fixed positions, so the
mid-ranks (Spearman) and the tie counts (Kendall tau-b, tau-c) of every resample cost O(K).
Only the Kendall numerator ``sum_{k,l} w_k w_l sign(x_k - x_l) sign(z_k - z_l)`` needs the
K x K pair-sign matrix, and it is one matrix product per chunk of resamples (float32, exact for
integer weights and 0/1 masks). :func:`direct_small` handles short vectors whose values change
with every resample (system means) with explicit pair signs.

Definitions with weights ``w`` (unit weights give the sample statistics exactly; integer
weights give the statistic of the data with member k repeated ``w_k`` times):

* Pearson: weighted covariance over the weighted standard deviations.
* Spearman: weighted Pearson of ``sigma_k = sum_l w_l sign(x_k - x_l)``, the centred weighted
  mid-rank (twice the mid-rank minus the total weight).
* Kendall: ``num = sum_{k,l} w_k w_l s^x_kl s^z_kl``; tau-b divides by
  ``sqrt((T^2 - t_x)(T^2 - t_z))`` with ``T = sum_k w_k`` and ``t_x = sum_{k,l} w_k w_l
  [x_k = x_l]`` (diagonal included); tau-a by ``T^2 - T``; tau-c by ``T^2 (m - 1) / m`` with
  ``m`` the smaller number of distinct values among members of positive weight.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

COEFFICIENTS = ("pearson", "spearman", "kendall")
KENDALL_VARIANTS = ("b", "c", "a")
_VAR_TOL = 1e-12


def _dense_ranks(x: np.ndarray) -> np.ndarray:
    """Dense ranks (0, 1, ...) along the last axis as the smallest sufficient integer type;
    equal values share a rank, so rank comparisons equal value comparisons (NaN last)."""
    order = np.argsort(x, axis=-1, kind="stable")
    srt = np.take_along_axis(x, order, -1)
    new = np.concatenate([np.zeros_like(srt[..., :1], bool), srt[..., 1:] != srt[..., :-1]],
                         -1)
    dense = np.cumsum(new, -1)
    dt = np.int16 if x.shape[-1] < 2**15 else np.int32
    out = np.empty(x.shape, dt)
    np.put_along_axis(out, order, dense.astype(dt), -1)
    return out


def _pair_difference(x: np.ndarray, valid: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    r = _dense_ranks(np.where(valid, x, np.inf))
    d = r[..., :, None] - r[..., None, :]
    vv = None if valid.all() else valid[..., :, None] & valid[..., None, :]
    return d, vv


def sign_matrix(x: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """int8 ``sign(x_k - x_l)`` over the last axis, zero where either member is invalid."""
    d, vv = _pair_difference(x, valid)
    np.sign(d, out=d)
    s = d.astype(np.int8)
    return s if vv is None else s * vv


def tie_matrix(x: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """int8 ``[x_k == x_l]`` (diagonal included), zero where either member is invalid."""
    d, vv = _pair_difference(x, valid)
    e = d == 0
    return (e if vv is None else e & vv).astype(np.int8)


def _standardise(x: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Centre and scale along the last axis over valid members (unweighted); 0 where invalid
    or constant. Keeps the one-pass weighted sums below free of cancellation."""
    n = valid.sum(-1, keepdims=True)
    xv = np.where(valid, x, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = xv.sum(-1, keepdims=True) / n
        dev = np.where(valid, x - mean, 0.0)
        # rescale first (correlations are scale-free): the squares of tiny scores such as
        # smoothed BLEU (1e-231) underflow to 0 and would read as a constant
        big = np.abs(dev).max(-1, keepdims=True)
        dev = np.where(big > 0, dev / np.where(big > 0, big, 1.0), 0.0)
        sd = np.sqrt((dev * dev).sum(-1, keepdims=True) / n)
        out = np.where(sd > 0, dev / sd, 0.0)
    return np.nan_to_num(out)


def _scale(x: np.ndarray) -> np.ndarray:
    """The largest absolute value along the last axis (1 where all are 0)."""
    big = np.abs(x).max(-1, keepdims=True)
    return np.where(big > 0, big, 1.0)


def _kendall_finish(num, tx, tz, total, variant, dx=None, dz=None):
    t2 = total * total
    with np.errstate(invalid="ignore", divide="ignore"):
        if variant == "c":
            m = np.minimum(dx, dz)
            tau = num / (t2 * (m - 1) / m)
            bad = m < 1.5
        else:
            den = np.sqrt((t2 - tx) * (t2 - tz)) if variant == "b" else t2 - total
            tau = num / den
            bad = (t2 - tx <= 1e-9 * t2) | (t2 - tz <= 1e-9 * t2)
    return np.where(bad, np.nan, tau)


class _Sorted:
    """Members of each group sorted once, and where given query values fall among them."""

    def __init__(self, x: np.ndarray, valid: np.ndarray) -> None:
        self.x0 = np.where(valid, x, np.inf)  # invalid members sort last and never count
        self.order = np.argsort(self.x0, axis=-1, kind="stable")
        self.sorted = np.take_along_axis(self.x0, self.order, -1)

    def positions(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Numbers of sorted members ``< q`` and ``<= q`` (positions into a cumulative sum)."""
        lead, K, Q = self.sorted.shape[:-1], self.sorted.shape[-1], q.shape[-1]
        s2 = self.sorted.reshape(-1, K)
        q2 = np.broadcast_to(q, (*lead, Q)).reshape(-1, Q)
        lt, le = np.empty(q2.shape, np.intp), np.empty(q2.shape, np.intp)
        for i in range(s2.shape[0]):
            lt[i] = np.searchsorted(s2[i], q2[i], "left")
            le[i] = np.searchsorted(s2[i], q2[i], "right")
        return lt.reshape(*lead, Q), le.reshape(*lead, Q)


def _cumulative(values: np.ndarray, order: np.ndarray) -> np.ndarray:
    """``values`` (..., K, R) reordered by ``order`` (..., K) along K, cumulated, with a leading
    zero row: (..., K + 1, R)."""
    lead = values.shape[:-2]
    K, R = values.shape[-2:]
    v2 = values.reshape(-1, K, R)
    o2 = np.broadcast_to(order, (*lead, K)).reshape(-1, K)
    out = np.zeros((v2.shape[0], K + 1, R), dtype=values.dtype)
    if v2.shape[0] == 1:
        out[0, 1:] = v2[0, o2[0]]
    else:
        out[:, 1:] = v2[np.arange(v2.shape[0])[:, None], o2]
    # accumulate row by row: contiguous rows of R, far faster than np.cumsum along axis 1
    for k in range(1, K + 1):
        out[:, k] += out[:, k - 1]
    return out.reshape(*lead, K + 1, R)


def _gather(cum: np.ndarray, pos: np.ndarray) -> np.ndarray:
    """``cum[..., pos[..., k], :]`` for each group: (..., K + 1, R) at (..., K) -> (..., K, R)."""
    lead = cum.shape[:-2]
    c2 = cum.reshape(-1, *cum.shape[-2:])
    p2 = np.broadcast_to(pos, (*lead, pos.shape[-1])).reshape(c2.shape[0], -1)
    return c2[np.arange(c2.shape[0])[:, None], p2].reshape(*lead, pos.shape[-1], cum.shape[-1])


# --------------------------------------------------------------------------- weighted engine
def weighted_group(
    x: np.ndarray,
    z: np.ndarray,
    valid: np.ndarray,
    weights: np.ndarray,
    coefficients: Sequence[str],
    variant: str = "b",
    min_count: int = 3,
) -> dict[str, np.ndarray]:
    """Within-group correlations of ``x`` with ``z`` under many member-weight vectors.

    Parameters
    ----------
    x : (M, G, K) array
        M variables (metrics), G groups, K members; NaN where missing.
    z : (G, K) or (M, G, K) array
        The human score.
    valid : (M, G, K) bool
        Members observed in both.
    weights : (R, K) array
        Non-negative member weights, the same for every group.
    coefficients : subset of ``COEFFICIENTS``
    variant : Kendall variant, ``"b"``, ``"c"`` or ``"a"``.
    min_count : int
        Fewer valid members with positive weight than this give NaN.

    Returns
    -------
    dict
        coefficient -> (R, M, G) array.
    """
    M, G, K = x.shape
    R = weights.shape[0]
    z = np.broadcast_to(z, x.shape)
    W = np.asarray(weights, dtype=float)
    vf = valid.astype(float)
    few = (np.einsum("rk,mgk->rmg", (W > 0).astype(float), vf) < min_count)
    out: dict[str, np.ndarray] = {}
    if "pearson" in coefficients:
        xs, zs = _standardise(x, valid), _standardise(z, valid)
        F = np.stack([vf, xs, zs, xs * xs, zs * zs, xs * zs], axis=-1)
        S = (W @ F.transpose(2, 0, 1, 3).reshape(K, -1)).reshape(R, M, G, 6)
        with np.errstate(invalid="ignore", divide="ignore"):
            t = S[..., 0]
            mx, mz = S[..., 1] / t, S[..., 2] / t
            vx, vz = S[..., 3] / t - mx * mx, S[..., 4] / t - mz * mz
            r = (S[..., 5] / t - mx * mz) / np.sqrt(vx * vz)
        out["pearson"] = np.where(few | (vx <= _VAR_TOL) | (vz <= _VAR_TOL), np.nan, r)
    if "spearman" not in coefficients and "kendall" not in coefficients:
        return out
    # z-side quantities are shared when every variable has the same validity pattern
    shared = bool((valid == valid[:1]).all())
    vz_, z_ = (valid[:1], z[:1]) if shared else (valid, z)
    Wt = W.T  # (K, R)
    sx, sz = _weighted_counts(x, valid, Wt, variant), _weighted_counts(z_, vz_, Wt, variant)
    if "spearman" in coefficients:
        wsx = sx["wv"] * sx["sigma"]
        num = np.einsum("...kr,...kr->...r", wsx, np.broadcast_to(sz["sigma"], wsx.shape))
        a = np.einsum("...kr,...kr->...r", wsx, sx["sigma"])
        b = np.broadcast_to(np.einsum("...kr,...kr->...r", sz["wv"] * sz["sigma"],
                                      sz["sigma"]), a.shape)
        with np.errstate(invalid="ignore", divide="ignore"):
            rho = num / np.sqrt(a * b)
        out["spearman"] = np.where(few | ((a <= 0) | (b <= 0)).transpose(2, 0, 1), np.nan,
                                   rho.transpose(2, 0, 1))
    if "kendall" in coefficients:
        kxz = (sign_matrix(x, valid) * sign_matrix(z_, vz_)).astype(np.float32)
        num = np.einsum("kr,...kr->...r", Wt, np.matmul(kxz, Wt.astype(np.float32)),
                        dtype=float)
        tz = np.broadcast_to(sz["ties"], sx["ties"].shape)
        dz = None if sz["distinct"] is None else np.broadcast_to(sz["distinct"], num.shape)
        tau = _kendall_finish(num, sx["ties"], tz, sx["total"], variant, sx["distinct"], dz)
        out["kendall"] = np.where(few, np.nan, tau.transpose(2, 0, 1))
    return out


def _weighted_counts(x, valid, Wt, variant):
    """Member weights ``wv`` and centred weighted mid-ranks ``sigma`` (M, G, K, R), weighted
    tie sum ``ties`` (M, G, R), total weight (M, G, R) and, for tau-c, the number of distinct
    values among members of positive weight."""
    srt = _Sorted(x, valid)
    lt, le = srt.positions(srt.x0)
    wv = Wt * valid[..., None]
    cum = _cumulative(wv, srt.order)
    lo, hi = _gather(cum, lt), _gather(cum, le)
    total = cum[..., -1, :]
    hi -= lo  # weight of the equal values, self included
    lo *= 2
    lo += hi
    lo -= total[..., None, :]  # sigma = #below - #above = 2 lo + eq - total
    out = {"wv": wv, "sigma": lo, "ties": np.einsum("...kr,...kr->...r", wv, hi),
           "total": total, "distinct": None}
    if variant == "c":
        pos = (wv > 0).astype(float)
        cpos = _cumulative(pos, srt.order)
        eq = _gather(cpos, le) - _gather(cpos, lt)
        with np.errstate(invalid="ignore", divide="ignore"):
            out["distinct"] = np.where(pos > 0, 1.0 / eq, 0.0).sum(-2)
    return out


# --------------------------------------------------------------------------- small, varying
def direct_small(
    x: np.ndarray,
    z: np.ndarray,
    weights: np.ndarray | None,
    coefficients: Sequence[str],
    variant: str = "b",
    min_count: int = 3,
) -> dict[str, np.ndarray]:
    """Correlations over the last axis of ``x`` and ``z`` (broadcast together; NaN = missing),
    with optional member weights, by explicit pair signs. For short vectors (system means)."""
    x, z = np.broadcast_arrays(np.asarray(x, float), np.asarray(z, float))
    valid = ~(np.isnan(x) | np.isnan(z))
    w = np.ones(x.shape) if weights is None else np.broadcast_to(weights, x.shape).astype(float)
    w = np.where(valid, w, 0.0)
    few = ((w > 0) & valid).sum(-1) < min_count
    total = w.sum(-1)
    out: dict[str, np.ndarray] = {}
    with np.errstate(invalid="ignore", divide="ignore"):
        if "pearson" in coefficients:
            xv, zv = np.where(valid, x, 0.0), np.where(valid, z, 0.0)
            xv, zv = xv / _scale(xv), zv / _scale(zv)  # no underflow of tiny scores
            mx = (w * xv).sum(-1, keepdims=True) / total[..., None]
            mz = (w * zv).sum(-1, keepdims=True) / total[..., None]
            dx, dz = np.where(valid, xv - mx, 0.0), np.where(valid, zv - mz, 0.0)
            vx, vz = (w * dx * dx).sum(-1), (w * dz * dz).sum(-1)
            r = (w * dx * dz).sum(-1) / np.sqrt(vx * vz)
            flat_x = vx <= _VAR_TOL * (w * xv * xv).sum(-1)
            flat_z = vz <= _VAR_TOL * (w * zv * zv).sum(-1)
            out["pearson"] = np.where(few | flat_x | flat_z | (vx <= 0) | (vz <= 0), np.nan, r)
        if "spearman" in coefficients or "kendall" in coefficients:
            sx, sz = sign_matrix(x, valid), sign_matrix(z, valid)
            if "spearman" in coefficients:
                gx = np.einsum("...kl,...l->...k", sx, w)
                gz = np.einsum("...kl,...l->...k", sz, w)
                a, b = (w * gx * gx).sum(-1), (w * gz * gz).sum(-1)
                rho = (w * gx * gz).sum(-1) / np.sqrt(a * b)
                out["spearman"] = np.where(few | (a <= 0) | (b <= 0), np.nan, rho)
            if "kendall" in coefficients:
                num = np.einsum("...k,...kl,...l->...", w, sx * sz, w)
                ex, ez = tie_matrix(x, valid), tie_matrix(z, valid)
                tx = np.einsum("...k,...kl,...l->...", w, ex, w)
                tz = np.einsum("...k,...kl,...l->...", w, ez, w)
                dxc = dzc = None
                if variant == "c":
                    pos = (w > 0).astype(float)
                    cx = np.einsum("...kl,...l->...k", ex, pos)
                    cz = np.einsum("...kl,...l->...k", ez, pos)
                    dxc = np.where(pos > 0, 1.0 / np.where(cx > 0, cx, 1), 0).sum(-1)
                    dzc = np.where(pos > 0, 1.0 / np.where(cz > 0, cz, 1), 0).sum(-1)
                tau = _kendall_finish(num, tx, tz, total, variant, dxc, dzc)
                out["kendall"] = np.where(few, np.nan, tau)
    return out


# --------------------------------------------------------------------------- swapped engine
class SwapPlan:
    """Everything about a batch of metric pairs that does not depend on the swap masks.

    ``x``, ``y`` (B, G, K): the two metrics of B pairs; ``z`` (G, K) or (B, G, K): the human
    score; ``valid`` (B, G, K): cells used (both metrics and the human score observed).
    :meth:`evaluate` gives the within-group correlations with ``z`` of
    ``x_p = x + m (y - x)`` and ``y_p = y - m (y - x)`` for masks ``m`` (B, G, K, P).
    """

    def __init__(self, x, y, z, valid, coefficients: Sequence[str], variant: str = "b",
                 min_count: int = 3) -> None:
        self.coefficients, self.variant = tuple(coefficients), variant
        z = np.broadcast_to(z, x.shape)
        self.all_valid = bool(valid.all())
        self.vf = valid.astype(np.float32)[..., None]  # (B, G, K, 1)
        x0, y0, z0 = (np.where(valid, a, 0.0) for a in (x, y, z))
        self.n = valid.sum(-1).astype(float)[..., None]  # (B, G, 1)
        self.few = self.n < min_count
        if "pearson" in coefficients:
            d = y0 - x0
            self.pearson_lin = np.stack([d, y0 * y0 - x0 * x0, d * z0], axis=-2)  # (B,G,3,K)
            self.base_x = np.stack([x0.sum(-1), (x0 * x0).sum(-1), (x0 * z0).sum(-1)], -1)
            self.base_y = np.stack([y0.sum(-1), (y0 * y0).sum(-1), (y0 * z0).sum(-1)], -1)
            sz_, szz = z0.sum(-1, keepdims=True), (z0 * z0).sum(-1, keepdims=True)
            self.sum_z, self.var_z = sz_, szz - sz_ * sz_ / self.n
        if "spearman" not in coefficients and "kendall" not in coefficients:
            return
        # x and y values sorted together: x_p and y_p are complementary subsets of them
        K = x.shape[-1]
        joint = _Sorted(np.concatenate([x, y], -1), np.concatenate([valid, valid], -1))
        self.order = joint.order
        self.pos = {(q, j): p for q, qv in (("x", joint.x0[..., :K]), ("y", joint.x0[..., K:]))
                    for j, p in enumerate(joint.positions(qv))}
        vcum = np.cumsum(np.take_along_axis(np.concatenate([valid, valid], -1), joint.order,
                                            -1), -1, dtype=np.float32)
        vcum = np.concatenate([np.zeros_like(vcum[..., :1]), vcum], -1)
        # valid values below each member's own x / y value, from both metrics: (B, G, K, 1)
        tot = {key: np.take_along_axis(vcum, p, -1)[..., None] for key, p in self.pos.items()}
        self.tot_s = {q: tot[q, 0] + tot[q, 1] for q in "xy"}
        self.tot_e = {q: tot[q, 1] - tot[q, 0] for q in "xy"}
        sz_ = _Sorted(z, valid)
        lt_z, le_z = sz_.positions(sz_.x0)
        self.sigma_z = np.where(valid, lt_z + le_z - self.n, 0.0)  # (B, G, K)
        self.ss_z = (self.sigma_z ** 2).sum(-1)[..., None]
        self.ties_z = np.where(valid, le_z - lt_z, 0).sum(-1).astype(float)[..., None]
        self.distinct_z = np.where(valid, 1.0 / np.maximum(le_z - lt_z, 1), 0.0).sum(-1)[
            ..., None]
        if "kendall" in coefficients:
            vv = valid[..., :, None] & valid[..., None, :]
            sz = sign_matrix(z0, valid)
            r = _dense_ranks(np.concatenate([np.where(valid, x, np.inf),
                                             np.where(valid, y, np.inf)], -1))
            rx, ry = r[..., :K], r[..., K:]
            s00, s11, s01 = (np.sign(a[..., :, None] - b[..., None, :]).astype(np.int8) * vv
                             for a, b in ((rx, rx), (ry, ry), (rx, ry)))
            s10 = -s01.swapaxes(-1, -2)
            # f(m) = sum_{k,l} sz_kl s_{m_k m_l}[k, l] = const + lin . m + m' Q m
            self.k_const = (sz * s00).sum((-1, -2), dtype=float)[..., None]
            self.k_lin = ((sz * (s10 - s00)).sum(-1, dtype=np.float32)
                          + (sz * (s01 - s00)).sum(-2, dtype=np.float32))
            Q = sz * (s11 - s10 - s01 + s00)  # symmetric, entries in [-4, 4]
            K = Q.shape[-1]
            self.k_dtype = np.float32 if 4 * K * K < 2**24 else np.float64
            self.k_Q = Q.astype(np.float32)
            self.k_Q1 = Q.sum(-1, dtype=np.float32)
            self.k_tot = self.k_lin.sum(-1, dtype=float)[..., None] + self.k_Q1.sum(
                -1, dtype=float)[..., None]

    def evaluate(self, masks: np.ndarray) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """coefficient -> (r of x_p, r of y_p), each (B, P, G), for masks (B, G, K, P)."""
        out: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        m = masks.astype(np.float32, copy=False)
        if not self.all_valid:
            m = m * self.vf
        n, few = self.n, self.few
        if "pearson" in self.coefficients:
            lin = np.matmul(self.pearson_lin, m.astype(float))  # (B, G, 3, P)
            res = []
            for sums in (self.base_x[..., None] + lin, self.base_y[..., None] - lin):
                with np.errstate(invalid="ignore", divide="ignore"):
                    varx = sums[..., 1, :] - sums[..., 0, :] ** 2 / n
                    r = (sums[..., 2, :] - sums[..., 0, :] * self.sum_z / n) / np.sqrt(
                        varx * self.var_z)
                bad = few | (varx <= _VAR_TOL * n) | (self.var_z <= _VAR_TOL * n)
                res.append(np.where(bad, np.nan, r).swapaxes(-1, -2))
            out["pearson"] = (res[0], res[1])
        if "spearman" not in self.coefficients and "kendall" not in self.coefficients:
            return out
        # how many values of x_p lie below (lt) / up to (le) each x and y value: cumulative
        # counts of x_p's members (x where m = 0, y where m = 1) in the joint order
        present = _cumulative(np.concatenate([self.vf - m, m], axis=-2), self.order)
        g = {key: _gather(present, p) for key, p in self.pos.items()}
        s_ = {q: g[q, 0] + g[q, 1] for q in "xy"}  # lt + le
        e_ = {q: g[q, 1] - g[q, 0] for q in "xy"}  # le - lt: equal values, self included
        # x_p takes the x value where m = 0 and the y value where m = 1; y_p the other one,
        # and y_p's counts are the totals of both metrics minus x_p's
        def pick(at_one, at_zero):  # exact for these small integers
            return at_zero + m * (at_one - at_zero)

        bounds = {
            "xp": (pick(s_["y"], s_["x"]), pick(e_["y"], e_["x"])),
            "yp": (pick(self.tot_s["x"] - s_["x"], self.tot_s["y"] - s_["y"]),
                   pick(self.tot_e["x"] - e_["x"], self.tot_e["y"] - e_["y"])),
        }
        res_s, res_k = [], []
        for which in ("xp", "yp"):
            ssum, eq = bounds[which]
            if not self.all_valid:
                ssum, eq = ssum * self.vf, eq * self.vf
            if "spearman" in self.coefficients:
                sig = np.subtract(ssum, n[..., None], dtype=float)
                if not self.all_valid:
                    sig *= self.vf
                a = np.einsum("...kp,...kp->...p", sig, sig)
                num = np.einsum("...k,...kp->...p", self.sigma_z, sig)
                with np.errstate(invalid="ignore", divide="ignore"):
                    rho = num / np.sqrt(a * self.ss_z)
                bad = few | (a <= 0) | (self.ss_z <= 0)
                res_s.append(np.where(bad, np.nan, rho).swapaxes(-1, -2))
            if "kendall" in self.coefficients:
                ties = eq.sum(-2, dtype=float)
                distinct = None
                if self.variant == "c":
                    with np.errstate(invalid="ignore", divide="ignore"):
                        distinct = np.where(eq > 0, 1.0 / eq, 0.0).sum(-2)
                res_k.append((ties, distinct))
        if res_s:
            out["spearman"] = (res_s[0], res_s[1])
        if res_k:
            nums = self._kendall_numerators(m)
            res = []
            for num, (ties, distinct) in zip(nums, res_k, strict=True):
                dz = None if distinct is None else self.distinct_z
                tau = _kendall_finish(num, ties, self.ties_z, n, self.variant, distinct, dz)
                res.append(np.where(few, np.nan, tau).swapaxes(-1, -2))
            out["kendall"] = (res[0], res[1])
        return out

    def _kendall_numerators(self, m):
        """``sum_{k,l} sign(z_k - z_l) sign(v_k - v_l)`` for v = x_p and v = y_p (mask 1 - m)."""
        dt = self.k_dtype
        Qm = np.matmul(self.k_Q, m)  # (B, G, K, P), exact small integers
        mQm = np.einsum("...kp,...kp->...p", m, Qm, dtype=dt).astype(float)
        lm = np.einsum("...k,...kp->...p", self.k_lin, m, dtype=dt).astype(float)
        q1m = np.einsum("...k,...kp->...p", self.k_Q1, m, dtype=dt).astype(float)
        # Q symmetric: (1-m)'Q(1-m) = 1'Q1 - 2 (Q1).m + m'Qm
        num_x = self.k_const + lm + mQm
        return num_x, self.k_const + self.k_tot - lm - 2 * q1m + mQm
