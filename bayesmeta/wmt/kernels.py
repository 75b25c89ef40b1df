r"""Array kernels of the WMT metrics-task statistics, vectorised over leading dims.

Every kernel takes metric scores ``x`` of shape ``(..., S, I)`` (any leading dims: metrics,
resamples, permutations; then systems, items) and the human score ``z`` of shape
``(S, I)``, and optional *weights*: system weights ``a`` of shape ``(R, S)`` and item
weights ``b`` of shape ``(R, I)``, as drawn by
:func:`bayesmeta.correlation.resampling.resampling_weights` (bootstrap counts or
Bayesian-bootstrap Dirichlet weights). With weights, an output ``(s, i)`` counts
:math:`a_s b_i` times and a pair of outputs the product of their counts, so each kernel
evaluated on the weights is the statistic of the (Bayesian-)resampled data. Without weights
every count is 1 and the kernel is the classical statistic, computed as in Google's
mt-metrics-eval (MTME).

Leading dims make the kernels chunkable (a dask ``map_blocks`` over metrics needs no change).
"""

from __future__ import annotations

import numpy as np
import scipy.stats

#: Groupings of pairs: within each item (MTME ``average_by="item"``), within each system
#: (``"sys"``), or across all outputs (``"none"``).
GROUPINGS = ("item", "system", "global")


# --------------------------------------------------------------------------- layout
def grouped(x: np.ndarray, grouping: str) -> np.ndarray:
    """``(..., S, I)`` -> ``(..., G, K)``: groups first, the members compared within them."""
    if grouping == "item":
        return np.swapaxes(x, -1, -2)
    if grouping == "system":
        return x
    if grouping == "global":
        return x.reshape(*x.shape[:-2], 1, x.shape[-2] * x.shape[-1])
    raise ValueError(f"grouping must be one of {', '.join(GROUPINGS)}, got {grouping!r}.")


def group_weights(a: np.ndarray | None, b: np.ndarray | None, shape: tuple[int, int],
                  grouping: str) -> tuple[np.ndarray, np.ndarray]:
    """Group weights ``(R, G)`` and member weights ``(R, K)`` from system weights ``a``
    ``(R, S)`` and item weights ``b`` ``(R, I)`` (None: ones, R = 1)."""
    S, I = shape
    R = next((w.shape[0] for w in (a, b) if w is not None), 1)
    a = np.ones((R, S)) if a is None else np.asarray(a, float)
    b = np.ones((R, I)) if b is None else np.asarray(b, float)
    if grouping == "item":
        return b, a
    if grouping == "system":
        return a, b
    return np.ones((R, 1)), (a[:, :, None] * b[:, None, :]).reshape(R, S * I)


# --------------------------------------------------------------------------- PDP
def pairwise_difference_pearson(x: np.ndarray, z: np.ndarray, *, grouping: str = "item",
                                a: np.ndarray | None = None, b: np.ndarray | None = None
                                ) -> np.ndarray:
    r"""Pairwise Difference Pearson of ``x`` ``(..., S, I)`` with ``z`` ``(S, I)``.

    Pearson's r over the differences :math:`(z_s - z_t, x_s - x_t)` of every ordered pair
    of members within each group (MTME's ``Pearson(average_by=..., pdp=True)``). The
    differences are antisymmetric, so their mean is 0 and with member weights :math:`w`

    .. math:: \mathrm{PDP} = \frac{\sum_g c_g(z, x)}{\sqrt{\sum_g c_g(z, z)\,
              \sum_g c_g(x, x)}},\quad c_g(u, v) = \textstyle\sum_k w_k \sum_k w_k u_k v_k
              - \sum_k w_k u_k \sum_k w_k v_k,

    times the group weight; members with a missing human score are left out (as MTME
    drops pairs with a missing gold score). Returns ``(R, ...)`` with weights, else
    ``(...)``.
    """
    gw, mw = group_weights(a, b, z.shape, grouping)
    zg, xg = grouped(z, grouping), grouped(x, grouping)          # (G, K), (..., G, K)
    valid = np.isfinite(zg)
    z0 = np.where(valid, zg, 0.0)
    lead = xg.shape[:-2]
    out = np.empty((gw.shape[0], *lead))
    for r in range(gw.shape[0]):
        w = mw[r][None, :] * valid                                  # (G, K)
        W = w.sum(-1)
        swz = (w * z0).sum(-1)
        czz = W * (w * z0 * z0).sum(-1) - swz ** 2
        swx = (w * xg).sum(-1)                                      # (..., G)
        cxx = W * (w * xg * xg).sum(-1) - swx ** 2
        czx = W * (w * z0 * xg).sum(-1) - swz * swx
        g = gw[r]
        with np.errstate(invalid="ignore", divide="ignore"):
            out[r] = (czx * g).sum(-1) / np.sqrt((czz * g).sum() * (cxx * g).sum(-1))
    return out if a is not None or b is not None else out[0]


# --------------------------------------------------------------------------- KendallLike
def kendall_like_signs(x: np.ndarray, z: np.ndarray, *, grouping: str = "item",
                       threshold: float = 25.0) -> tuple[np.ndarray, np.ndarray]:
    """Per pair of members ``(..., G, K, K)`` (upper triangle): +1 concordant, -1
    discordant, 0 not counted; and the eligibility mask ``(G, K, K)``.

    A pair counts when both human scores exist and differ by at least ``threshold``; it is
    concordant when the metric orders it as the humans do, discordant otherwise (a metric
    tie is discordant; with ``threshold=0`` a human tie counts and is discordant, as in
    WMT20's definition and MTME).
    """
    zg, xg = grouped(z, grouping), grouped(x, grouping)
    dz = zg[:, :, None] - zg[:, None, :]                            # (G, K, K)
    K = zg.shape[-1]
    upper = np.triu(np.ones((K, K), bool), 1)
    with np.errstate(invalid="ignore"):
        elig = (np.abs(dz) >= threshold) & np.isfinite(dz) & upper
    dx = xg[..., :, None] - xg[..., None, :]
    conc = ((dz > 0) & (dx > 0)) | ((dz < 0) & (dx < 0))
    return np.where(elig, np.where(conc, 1.0, -1.0), 0.0), elig


def kendall_like(x: np.ndarray, z: np.ndarray, *, grouping: str = "item",
                 threshold: float = 25.0, a: np.ndarray | None = None,
                 b: np.ndarray | None = None) -> np.ndarray:
    r"""WMT's KendallLike :math:`\tau = (C - D) / (C + D)`, pooled over groups (MTME's
    ``KendallLike`` averaged with weights = pairs per group, i.e. micro-averaged); with
    weights a pair of members counts the product of the group's and both members'
    weights."""
    gw, mw = group_weights(a, b, z.shape, grouping)
    lead = x.shape[:-2]
    flat = x.reshape(-1, *x.shape[-2:])
    num = np.empty((gw.shape[0], flat.shape[0]))
    pw = None
    for m in range(flat.shape[0]):       # one metric at a time: (G, K, K) pairs in memory
        sign, elig = kendall_like_signs(flat[m], z, grouping=grouping, threshold=threshold)
        if pw is None:
            pw = gw[:, :, None, None] * mw[:, None, :, None] * mw[:, None, None, :] * elig
        num[:, m] = np.einsum("rgkl,gkl->r", pw, sign)
    den = pw.sum((1, 2, 3))[:, None]
    with np.errstate(invalid="ignore", divide="ignore"):
        out = (num / den).reshape(gw.shape[0], *lead)
    return out if a is not None or b is not None else out[0]


# --------------------------------------------------------------------------- SPA
def permutation_signs(n_permutations: int, n_items: int, random_seed: int) -> np.ndarray:
    """``(P, I)`` float32 signs :math:`2m - 1` of the paired permutation test of SPA, drawn
    as Thompson et al.'s reference implementation (shipped in MTME) draws them: uniform
    float32 numbers from ``numpy.random.default_rng(random_seed)``, rounded to 0/1. The same
    seed (MTME's default is 4) gives the same permutations, so SPA matches exactly."""
    u = np.random.default_rng(random_seed).random((n_permutations, n_items), dtype=np.float32)
    np.rint(u, out=u)
    return u * np.float32(2.0) - np.float32(1.0)


def pairwise_pvalues(x: np.ndarray, signs: np.ndarray, *, b: np.ndarray | None = None
                     ) -> np.ndarray:
    r"""One-sided paired-permutation p-values that system s beats system t.

    ``x`` ``(..., S, I)``; ``p[..., s, t]`` is the share of permutations (``signs``
    ``(P, I)``) with :math:`\sum_i m_i b_i (x_{si} - x_{ti}) \ge \sum_i b_i (x_{si} -
    x_{ti})`; NaN on and below the diagonal. Without item weights ``b`` the sums are
    float32, as in the reference implementation (so ties between the observed and a
    permuted difference resolve as there); with weights ``(R, I)`` float64, result
    ``(R, ..., S, S)``.
    """
    S = x.shape[-2]
    iu = np.triu_indices(S, 1)
    if b is None:
        lead = x.shape[:-2]
        flat = x.reshape(-1, *x.shape[-2:]).astype(np.float32)
        out = np.full((flat.shape[0], S, S), np.nan)
        for m in range(flat.shape[0]):
            seg = flat[m]
            sys_ = seg.sum(axis=1)
            part = np.matmul(signs, seg.T)                            # (P, S)
            null = part[:, iu[0]] - part[:, iu[1]]
            out[m][iu] = (null >= (sys_[iu[0]] - sys_[iu[1]])).sum(0) / signs.shape[0]
        return out.reshape(*lead, S, S)
    sg = signs.astype(float)
    bw = np.asarray(b, float)
    lead = x.shape[:-2]
    flat = x.reshape(-1, *x.shape[-2:])
    P = signs.shape[0]
    out = np.full((bw.shape[0], flat.shape[0], S, S), np.nan)
    for r in range(bw.shape[0]):
        xb = flat * bw[r]                                             # (M, S, I)
        sys_ = xb.sum(-1)                                             # (M, S)
        part = (xb.reshape(-1, xb.shape[-1]) @ sg.T).reshape(*xb.shape[:2], -1)  # (M, S, P)
        for m in range(flat.shape[0]):   # one metric at a time: (pairs, P) stays in cache
            pm = part[m]
            obs = (sys_[m, iu[0]] - sys_[m, iu[1]])[:, None]
            out[r, m, iu[0], iu[1]] = np.count_nonzero(pm[iu[0]] - pm[iu[1]] >= obs, -1) / P
    return out.reshape(bw.shape[0], *lead, S, S)


def soft_pairwise_accuracy(p_metric: np.ndarray, p_human: np.ndarray,
                           a: np.ndarray | None = None) -> np.ndarray:
    r"""SPA :math:`= 1 - \sum_{s<t} w_{st} |p^h_{st} - p^m_{st}| / \sum_{s<t} w_{st}` from
    pairwise p-values ``(..., S, S)`` (upper triangle used); pair weights
    :math:`w_{st} = a_s a_t` (``a`` ``(R, S)``, broadcast against the leading dim R of both
    p arrays), else 1."""
    S = p_metric.shape[-1]
    iu = np.triu_indices(S, 1)
    err = np.abs(p_human[..., iu[0], iu[1]] - p_metric[..., iu[0], iu[1]])
    if a is None:
        return 1.0 - err.mean(-1)
    a = np.asarray(a, float)
    w = a[:, iu[0]] * a[:, iu[1]]                                     # (R, npairs)
    w = w.reshape(w.shape[0], *([1] * (err.ndim - 2)), w.shape[1])
    with np.errstate(invalid="ignore", divide="ignore"):  # one distinct system: undefined
        return 1.0 - (err * w).sum(-1) / w.sum(-1)


# --------------------------------------------------------------------------- Williams
def williams_pvalue(r12: np.ndarray, r13: np.ndarray, r23: np.ndarray, n: int | np.ndarray,
                    *, one_sided: bool = True) -> np.ndarray:
    r"""Williams' (1959) test of :math:`\rho_{12} = \rho_{13}` for dependent correlations
    sharing variable 1 (the human score; 2 and 3 the metrics, :math:`r_{23}` their
    correlation), as recommended by Graham & Baldwin (2014):

    .. math:: t = \frac{(r_{12} - r_{13})\sqrt{(n - 1)(1 + r_{23})}}
              {\sqrt{2\frac{n-1}{n-3}|R| + \bar r^2 (1 - r_{23})^3}},\quad
              |R| = 1 - r_{12}^2 - r_{13}^2 - r_{23}^2 + 2 r_{12} r_{13} r_{23},

    :math:`\bar r = (r_{12} + r_{13})/2`, on :math:`n - 3` degrees of freedom; the p-value
    is :math:`P(T > |t|)` (one-sided, for the direction observed) or twice that.
    """
    r12, r13, r23 = (np.asarray(v, float) for v in (r12, r13, r23))
    det = 1 - r12 ** 2 - r13 ** 2 - r23 ** 2 + 2 * r12 * r13 * r23
    rbar = (r12 + r13) / 2
    num = (r12 - r13) * np.sqrt((n - 1) * (1 + r23))
    den = np.sqrt(2 * (n - 1) / (n - 3) * det + rbar ** 2 * (1 - r23) ** 3)
    p = scipy.stats.t.sf(np.abs(num / den), np.asarray(n) - 3)
    return p if one_sided else 2 * p


# --------------------------------------------------------------------------- clusters
def assign_ranks(sig: np.ndarray, alpha: float = 0.05) -> np.ndarray:
    """Significance clusters from an upper-triangular p-value matrix whose rows and
    columns are sorted by decreasing statistic (``sig[i, j]``: p-value of the hypothesis
    that metric j is at least as good as metric i, i < j).

    Walking down the sorted list, metric i opens a new cluster (rank + 1) when some metric
    of the current cluster, ranked above it, beats it significantly (p <= alpha); the
    cluster then starts at i. This is the rank assignment of the WMT metrics task
    (Freitag et al. 2021-2024; MTME's ``AssignRanks``).
    """
    n = sig.shape[0]
    ranks = np.zeros(n, dtype=int)
    rank, start = 1, 0
    for i in range(n):
        if np.any(sig[start:i, i] <= alpha):
            rank += 1
            start = i
        ranks[i] = rank
    return ranks


def sort_order(values: np.ndarray, labels: list[str]) -> np.ndarray:
    """Indices sorting metrics by decreasing value, ties by label (as MTME does)."""
    return np.array(sorted(range(len(labels)), key=lambda k: (-values[k], labels[k])))
