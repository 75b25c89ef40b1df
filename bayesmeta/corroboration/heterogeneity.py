r"""Corroboration with heterogeneous metrics (paper 003, Amigó et al.): the computing layer.

Paper 003 judges a *set* of metrics :math:`X` on ordered pairs :math:`(s, s')` of outputs of
two different systems for the same item, with human quality :math:`Q`:

.. math::

    R(X) &= P\big(Q(s) \ge Q(s') \mid x(s) \ge x(s')\ \forall x \in X\big)
        &&\text{(reliability)}\\
    S(X) &= P\big(x(s) \ge x(s')\ \forall x \in X \mid Q(s) \ge Q(s')\big)
        &&\text{(sensitivity)}\\
    H(X) &= P\big(\exists x, x' \in X: x(s) > x(s') \wedge x'(s) < x'(s')\big)
        &&\text{(heterogeneity)}\\
    R_{th}(x) &= P\big(Q(s) \ge Q(s') \mid x(s) - x(s') \ge th\big), \quad
    S_{th}(x) = P\big(x(s) - x(s') \ge th \mid Q(s) \ge Q(s')\big)\\
    \mathrm{gain}(X) &= R(X) - \max\{R_{th}(x) : x \in X,\ S_{th}(x) = S(X)\}.

**Direction.** Every metric is read as higher-is-better. A lower-is-better metric (TER,
perplexity, an error rate) is declared with ``directions={metric: "lower"}``; its score
differences change sign once, when the pair table is built, so that every definition above
(and :math:`R_{th}`, :math:`S_{th}` with their thresholds) reads it as :math:`-x`. Negation is
exact in floating point: a metric :math:`-x` declared ``"lower"`` gives bit-for-bit the
statistics of :math:`x`.

Every unordered pair enters in both orientations (the definitions use :math:`\ge`, so a
pair tied on a metric agrees in both). ``ties="strict"`` replaces every :math:`\ge` by
:math:`>` (in :math:`Q` and in the metrics); :math:`H` is strict in the paper and always here.

Pairs are stored once as signed differences; the sign indicators are bit-packed along the
pairs (``np.packbits``), so the "all metrics agree" indicator of a set is a bitwise AND of
its metrics' rows and "some two disagree" an OR/AND, counted with ``np.bitwise_count``
(unweighted) or unpacked and multiplied by a (pair, draw) weight matrix (resampling). No
Python loop runs over pairs.

**Matching sensitivity levels (the gain).** A single metric's curve has one point per
distinct score difference :math:`th` (the full range, from the largest difference down to
the smallest, where :math:`S_{th} = 1`). Where several thresholds give the same
sensitivity, the highest reliability is kept (paper 003, Sec. 7). ``match="interpolate"``
(default) interpolates :math:`R_{th}` linearly in :math:`S_{th}` between the two levels
around :math:`S(X)`; ``match="nearest"`` takes the level with the nearest sensitivity (the
more reliable one on a tie). Below the curve's smallest sensitivity (the largest
threshold) the curve's end point is used.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

TIES = ("paper", "strict")
DIRECTIONS = ("higher", "lower")
MATCHES = ("interpolate", "nearest")
#: Bytes of float64 working memory per chunk.
_CHUNK_BYTES = 64 * 2**20


@dataclass(frozen=True)
class PairTable:
    """All ordered pairs of outputs of different systems for the same item.

    Attributes
    ----------
    dq : ndarray (pair,)
        :math:`Q(s) - Q(s')`.
    dx : ndarray (metric, pair)
        :math:`x(s) - x(s')` for every metric, sign flipped for a lower-is-better metric
        (so that a positive difference always means "s is better").
    item, system, system2 : ndarray of int (pair,)
        Positions of the item and of the systems :math:`s`, :math:`s'`.
    good : ndarray of bool (pair,)
        :math:`Q(s) \\ge Q(s')` (``>`` under ``ties="strict"``).
    up_bits, gt_bits, lt_bits : ndarray of uint8 (metric + 1, bytes)
        Bit-packed :math:`x(s) \\ge x(s')` (or ``>``), :math:`x(s) > x(s')`,
        :math:`x(s) < x(s')`; the last row pads sets (all ones for ``up``, zeros else).
    good_bits : ndarray of uint8 (bytes,)
    forward, backward : ndarray of int (pair / 2,)
        Each unordered pair once: the positions of :math:`(s, s', i)` with :math:`s < s'`
        and of its reverse :math:`(s', s, i)`.
    """

    dq: np.ndarray
    dx: np.ndarray
    item: np.ndarray
    system: np.ndarray
    system2: np.ndarray
    good: np.ndarray
    up_bits: np.ndarray
    gt_bits: np.ndarray
    lt_bits: np.ndarray
    good_bits: np.ndarray
    metrics: tuple[str, ...]
    ties: str
    n_systems: int
    n_items: int
    forward: np.ndarray
    backward: np.ndarray
    directions: tuple[str, ...] = ()

    @property
    def n_pairs(self) -> int:
        return int(self.dq.size)

    @property
    def n_metrics(self) -> int:
        return len(self.metrics)


def check_directions(directions: Mapping[str, str] | None, metrics: Sequence[str]
                     ) -> dict[str, str]:
    """``{metric: "higher" | "lower"}`` for every metric of ``metrics`` (default "higher").

    Names that are not among ``metrics`` and values other than "higher"/"lower" raise a
    ValueError naming them (the spelling of :func:`bayesmeta.metric_unit_tests`'s
    ``directions=``).

    Examples
    --------
    >>> from bayesmeta.corroboration.heterogeneity import check_directions
    >>> check_directions({"TER": "lower"}, ["BLEU", "TER"])
    {'BLEU': 'higher', 'TER': 'lower'}
    """
    labels = [str(m) for m in metrics]
    if directions is None:
        return dict.fromkeys(labels, "higher")
    if not isinstance(directions, Mapping):
        raise ValueError("directions must be a dict {metric: 'higher' | 'lower'}, got "
                         f"{type(directions).__name__}.")
    given = {str(k): v for k, v in directions.items()}
    unknown = sorted(set(given) - set(labels))
    if unknown:
        raise ValueError(f"directions names metric(s) {unknown} that are not among the "
                         f"metrics ({', '.join(labels)}).")
    bad = {m: d for m, d in given.items() if d not in DIRECTIONS}
    if bad:
        raise ValueError(f"direction must be 'higher' or 'lower', got {bad}.")
    return {m: given.get(m, "higher") for m in labels}


def describe_directions(directions: Sequence[str], metrics: Sequence[str]) -> str:
    """Header line: which metrics were read as lower-is-better."""
    lower = [m for m, d in zip(metrics, directions, strict=True) if d == "lower"]
    if not lower:
        return "all higher is better"
    return "lower is better (sign flipped): " + ", ".join(lower)


def _pack(flags: np.ndarray) -> np.ndarray:
    return np.packbits(flags, axis=-1)


def build_pairs(x: np.ndarray, q: np.ndarray, *, metrics: Sequence[str] | None = None,
                ties: str = "paper", directions: Mapping[str, str] | None = None
                ) -> PairTable:
    r"""The ordered pairs of outputs of different systems for the same item.

    Parameters
    ----------
    x : array (metric, system, item)
        Metric scores (higher is better unless ``directions`` says otherwise).
    q : array (system, item)
        Human quality.
    metrics : list of str, optional
        Metric labels (default ``"m0", "m1", ...``).
    ties : {"paper", "strict"}
        ``"paper"``: :math:`\ge` as paper 003 writes; ``"strict"``: :math:`>`.
    directions : dict, optional
        ``{metric: "higher" | "lower"}`` (default all "higher"); the differences of a
        "lower" metric change sign here, once, so every statistic reads it as
        higher-is-better. Unknown metric names or other values raise, naming them.

    Returns
    -------
    PairTable
        :math:`I \cdot S (S - 1)` pairs (item-major), outputs with a missing human or metric
        score left out (pairs that involve them are not formed).

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmeta.corroboration.heterogeneity import build_pairs
    >>> pt = build_pairs(np.array([[[1.0], [2.0], [3.0]]]), np.array([[1.0], [3.0], [2.0]]))
    >>> pt.n_pairs, pt.dq.tolist()
    (6, [-2.0, -1.0, 2.0, 1.0, 1.0, -1.0])
    """
    if ties not in TIES:
        raise ValueError(f"ties must be one of {', '.join(map(repr, TIES))}, got {ties!r}.")
    x = np.asarray(x, dtype=float)
    q = np.asarray(q, dtype=float)
    if x.ndim != 3 or q.shape != x.shape[1:]:
        raise ValueError(f"x must be (metric, system, item) and q (system, item) of the same "
                         f"systems and items; got shapes {x.shape} and {q.shape}.")
    M, S, I = x.shape
    labels = tuple(str(m) for m in metrics) if metrics is not None else tuple(
        f"m{k}" for k in range(M))
    if len(labels) != M:
        raise ValueError(f"metrics has {len(labels)} labels for {M} metrics.")
    dirs = check_directions(directions, labels)
    if S < 2:
        raise ValueError(f"pairs need at least 2 systems (dim 'system'), got {S}.")
    if np.isinf(x).any() or np.isinf(q).any():
        raise ValueError("scores must be finite (an infinite metric or human score).")
    ok = ~np.isnan(q) & ~np.isnan(x).any(0)
    s, t = np.nonzero(~np.eye(S, dtype=bool))
    item = np.repeat(np.arange(I), s.size)
    s, t = np.tile(s, I), np.tile(t, I)
    keep = ok[s, item] & ok[t, item]
    s, t, item = s[keep], t[keep], item[keep]
    if s.size == 0:
        raise ValueError("no pair of outputs of different systems for the same item has a "
                         "human score and every metric's score.")
    dq = q[s, item] - q[t, item]
    dx = x[:, s, item] - x[:, t, item]
    lower = np.array([dirs[m] == "lower" for m in labels])
    dx[lower] = -dx[lower]  # exact: -(a - b) == b - a in IEEE arithmetic
    strict = ties == "strict"
    good = dq > 0 if strict else dq >= 0
    up = dx > 0 if strict else dx >= 0
    pad1 = np.ones((1, dx.shape[1]), bool)
    pad0 = np.zeros((1, dx.shape[1]), bool)
    key = (item * S + s) * S + t  # increasing in the enumeration order
    forward = np.flatnonzero(s < t)
    backward = np.searchsorted(key, (item[forward] * S + t[forward]) * S + s[forward])
    return PairTable(
        forward=forward, backward=backward,
        dq=dq, dx=dx, item=item, system=s, system2=t, good=good,
        up_bits=_pack(np.vstack([up, pad1])), gt_bits=_pack(np.vstack([dx > 0, pad0])),
        lt_bits=_pack(np.vstack([dx < 0, pad0])), good_bits=_pack(good),
        metrics=labels, ties=ties, n_systems=S, n_items=I,
        directions=tuple(dirs[m] for m in labels))


def as_index_sets(sets: Sequence[Sequence[int]], n_metrics: int) -> np.ndarray:
    """Sets of metric positions as an int array (set, max size), padded with ``n_metrics``
    (the padding row of the bit tables)."""
    sets = [list(map(int, x)) for x in sets]
    if not sets:
        raise ValueError("no metric set given.")
    width = max(len(x) for x in sets)
    out = np.full((len(sets), width), n_metrics, dtype=np.intp)
    for k, x in enumerate(sets):
        if not x or len(set(x)) != len(x):
            raise ValueError(f"metric set {k} is empty or repeats a metric: {x}.")
        if min(x) < 0 or max(x) >= n_metrics:
            raise ValueError(f"metric set {k} has a position outside 0..{n_metrics - 1}.")
        out[k, : len(x)] = x
    return out


def set_bits(pt: PairTable, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Bit-packed indicators (set, bytes) of "all metrics of the set agree that s >= s'"
    and of "two metrics of the set disagree strictly"."""
    agree = np.bitwise_and.reduce(pt.up_bits[idx], axis=1)
    split = np.bitwise_or.reduce(pt.gt_bits[idx], axis=1) & np.bitwise_or.reduce(
        pt.lt_bits[idx], axis=1)
    return agree, split


def _unpack(bits: np.ndarray, n: int) -> np.ndarray:
    return np.unpackbits(bits, axis=-1, count=n).astype(float)


def _dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b``; small products skip BLAS, whose thread start-up costs more than the
    product on a busy machine."""
    if a.shape[0] * a.shape[1] * b.shape[1] < 2e7:
        return np.einsum("sp,pb->sb", a, b)
    return a @ b


def pair_weights(pt: PairTable, system_weights: np.ndarray | None,
                 item_weights: np.ndarray | None) -> np.ndarray:
    r"""Pair weights (pair, draw) :math:`w_{(s, s', i)} = a_s a_{s'} b_i` from system weights
    ``a`` (draw, system) and item weights ``b`` (draw, item) (None: ones)."""
    B = next((w.shape[0] for w in (system_weights, item_weights) if w is not None), 1)
    out = np.ones((pt.n_pairs, B))
    if system_weights is not None:
        a = np.asarray(system_weights, dtype=float).T
        out *= a[pt.system] * a[pt.system2]
    if item_weights is not None:
        out *= np.asarray(item_weights, dtype=float).T[pt.item]
    return out


def set_statistics(pt: PairTable, idx: np.ndarray, weights: np.ndarray | None = None, *,
                   heterogeneity: bool = True) -> dict[str, np.ndarray]:
    """R, S, H of every set (rows of ``idx`` from :func:`as_index_sets`).

    Unweighted (``weights=None``): arrays (set,) from exact integer counts. Weighted
    (``weights`` (pair, draw)): arrays (set, draw) of the weighted shares. Also returns the
    counts ``n_agree``, ``n_agree_good``, ``n_split``, ``n_good``, ``n_total``.
    ``heterogeneity=False`` skips H (NaN), a third less work with weights.
    """
    n_sets = idx.shape[0]
    P = pt.n_pairs
    if weights is None:
        n_a = np.empty(n_sets)
        n_ag = np.empty(n_sets)
        n_h = np.empty(n_sets)
        n_g, n_tot = float(pt.good.sum()), float(P)
    else:
        W = np.asarray(weights, dtype=float)
        B = W.shape[1]
        n_a, n_ag, n_h = (np.empty((n_sets, B)) for _ in range(3))
        n_g, n_tot = (W * pt.good[:, None]).sum(0), W.sum(0)
        fw, bw = pt.forward, pt.backward
        # weights equal on a pair and its reverse (a_s a_s' b_i always are): sum the two
        # orientations' indicators and multiply once per unordered pair, half the work
        symmetric = 2 * fw.size == P and np.array_equal(W[fw], W[bw])
        Wu = W[fw] if symmetric else W
        good = pt.good.astype(float)
    step = max(1, _CHUNK_BYTES // (8 * P * 2))
    for c in range(0, n_sets, step):
        sl = slice(c, min(n_sets, c + step))
        agree, split = set_bits(pt, idx[sl])
        if weights is None:
            n_a[sl] = np.bitwise_count(agree).sum(-1)
            n_ag[sl] = np.bitwise_count(agree & pt.good_bits).sum(-1)
            n_h[sl] = np.bitwise_count(split).sum(-1)
        else:
            A = _unpack(agree, P)
            AG = A * good
            H = _unpack(split, P) if heterogeneity else None
            if symmetric:
                A, AG = A[:, fw] + A[:, bw], AG[:, fw] + AG[:, bw]
                H = None if H is None else 2.0 * H[:, fw]  # split is symmetric
            n_a[sl], n_ag[sl] = _dot(A, Wu), _dot(AG, Wu)
            n_h[sl] = np.nan if H is None else _dot(H, Wu)
    with np.errstate(invalid="ignore", divide="ignore"):
        return {"reliability": n_ag / n_a, "sensitivity": n_ag / n_g,
                "heterogeneity": n_h / n_tot, "n_agree": n_a, "n_agree_good": n_ag,
                "n_split": n_h, "n_good": n_g, "n_total": n_tot}


def threshold_curve(pt: PairTable, m: int, weights: np.ndarray | None = None
                    ) -> dict[str, np.ndarray]:
    r"""The :math:`R_{th}`, :math:`S_{th}` curve of metric ``m``: one level per distinct
    score difference, from the largest threshold to the smallest.

    Returns ``threshold`` (level,), ``reliability`` and ``sensitivity`` (level,) or
    (level, draw), and ``n`` (weight of the pairs at or above the threshold). Under
    ``ties="strict"`` level :math:`k` holds the pairs with :math:`x(s) - x(s') > th_k`,
    :math:`th_k` the next smaller distinct difference (:math:`-\infty` for the last).
    """
    d = pt.dx[m]
    order = np.argsort(-d, kind="stable")
    ds = d[order]
    ends = np.flatnonzero(np.r_[ds[1:] != ds[:-1], True])
    thr = ds[ends]
    if pt.ties == "strict":
        thr = np.r_[thr[1:], -np.inf]
    g = pt.good[order]
    if weights is None:
        cum_n = (ends + 1).astype(float)
        cum_g = np.cumsum(g)[ends].astype(float)
    else:
        W = np.asarray(weights, dtype=float)[order]
        cum_n = np.cumsum(W, 0)[ends]
        cum_g = np.cumsum(W * g[:, None], 0)[ends]
    with np.errstate(invalid="ignore", divide="ignore"):
        rel = cum_g / cum_n
        sens = cum_g / cum_g[-1]
    return {"threshold": thr, "reliability": rel, "sensitivity": sens, "n": cum_n}


def _first_of_run(flat: np.ndarray, pos: np.ndarray) -> np.ndarray:
    return np.searchsorted(flat, flat[pos], side="left")


def match_reliability(s_query: np.ndarray, curve: dict[str, np.ndarray], *,
                      match: str = "interpolate") -> np.ndarray:
    r"""The single metric's reliability at the sensitivity levels ``s_query``.

    ``s_query`` is (n,) for an unweighted curve or (n, draw) for a curve of (level, draw);
    the matching follows the module docstring (highest reliability among equal
    sensitivities; interpolation or nearest level; the end point below the curve). NaN
    queries give NaN.
    """
    if match not in MATCHES:
        raise ValueError(f"match must be one of {', '.join(map(repr, MATCHES))}, got "
                         f"{match!r}.")
    rel = np.asarray(curve["reliability"], dtype=float)
    sens = np.asarray(curve["sensitivity"], dtype=float)
    n = np.asarray(curve["n"], dtype=float)
    one = rel.ndim == 1
    q = np.asarray(s_query, dtype=float)
    if one:
        rel, sens, n, q = rel[:, None], sens[:, None], n[:, None], q[:, None]
    L, B = rel.shape
    # levels holding no weight (zero bootstrap weights): below every query, with the
    # reliability of the first level that holds weight (the curve's end point)
    empty = n <= 0
    first = np.argmax(~empty, axis=0)
    rel = np.where(empty, rel[first, np.arange(B)], rel)
    sens = np.where(empty, -1.0, sens)
    off = 4.0 * np.arange(B)
    flat = (sens + off).T.ravel()
    frel = rel.T.ravel()
    nan = np.isnan(q)
    qq = np.where(nan, 0.0, q) + off
    hi = np.searchsorted(flat, qq.ravel(), side="left").reshape(q.shape)
    base = (np.arange(B) * L)[None, :]
    hi = np.clip(hi, base, base + L - 1)
    lo = _first_of_run(flat, np.maximum(hi - 1, base))
    hi = _first_of_run(flat, hi)
    x0, x1 = flat[lo] - off, flat[hi] - off
    f0, f1 = frel[lo], frel[hi]
    qv = np.where(nan, 0.0, q)
    below = qv <= x0  # at or below the first level: its reliability
    if match == "interpolate":
        with np.errstate(invalid="ignore", divide="ignore"):
            t = np.where(x1 > x0, (qv - x0) / (x1 - x0), 1.0)
        t = np.clip(t, 0.0, 1.0)
        out = f0 + t * (f1 - f0)
    else:
        d0, d1 = np.abs(qv - x0), np.abs(x1 - qv)
        out = np.where(d0 < d1, f0, np.where(d1 < d0, f1, np.maximum(f0, f1)))
    out = np.where(below, f0, out)
    out = np.where(nan, np.nan, out)
    return out[:, 0] if one else out


def gain(pt: PairTable, idx: np.ndarray, stats: dict[str, np.ndarray],
         weights: np.ndarray | None = None, *, match: str = "interpolate",
         against: Sequence[int] | None = None) -> tuple[np.ndarray, np.ndarray]:
    r"""Reliability gain of every set and the matched single-metric reliability.

    ``against=None`` compares each set with its own metrics (paper 003); a list of metric
    positions compares every set with the best of those metrics at its sensitivity.
    Returns ``(gain, best)`` shaped like ``stats["reliability"]``.
    """
    s_set = stats["sensitivity"]
    best = np.full(s_set.shape, -np.inf)
    M = pt.n_metrics
    members = np.zeros((idx.shape[0], M + 1), bool)
    np.put_along_axis(members, idx, True, axis=1)
    members = members[:, :M]
    pool = range(M) if against is None else against
    for m in pool:
        rows = slice(None) if against is not None else np.flatnonzero(members[:, m])
        if against is None and rows.size == 0:
            continue
        curve = threshold_curve(pt, m, weights)
        best[rows] = np.fmax(best[rows], match_reliability(s_set[rows], curve, match=match))
    best = np.where(np.isinf(best), np.nan, best)
    return stats["reliability"] - best, best


def additive_cases(pt: PairTable, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""The additive-reliability check :math:`R(X \cup \{x\}) \ge R(X)` for every set and
    every metric not in it (unweighted).

    Returns ``holds`` (set, metric) (NaN where :math:`x \in X` or a reliability is
    undefined) and ``difference`` :math:`R(X \cup \{x\}) - R(X)` (same shape).
    """
    M = pt.n_metrics
    n_sets = idx.shape[0]
    diff = np.full((n_sets, M), np.nan)
    step = max(1, _CHUNK_BYTES // (M * pt.up_bits.shape[1] * 2))
    up = pt.up_bits[:M]
    for c in range(0, n_sets, step):
        sl = slice(c, min(n_sets, c + step))
        agree, _ = set_bits(pt, idx[sl])
        base_a = np.bitwise_count(agree).sum(-1)
        base_g = np.bitwise_count(agree & pt.good_bits).sum(-1)
        both = agree[:, None, :] & up[None]
        n_a = np.bitwise_count(both).sum(-1)
        n_g = np.bitwise_count(both & pt.good_bits).sum(-1)
        with np.errstate(invalid="ignore", divide="ignore"):
            diff[sl] = n_g / n_a - (base_g / base_a)[:, None]
    members = np.zeros((n_sets, M + 1), bool)
    np.put_along_axis(members, idx, True, axis=1)
    diff[members[:, :M]] = np.nan
    holds = np.where(np.isnan(diff), np.nan, (diff >= 0).astype(float))
    return holds, diff


def additive_weighted(pt: PairTable, idx: np.ndarray, weights: np.ndarray, *,
                      tol: float = 1e-12) -> tuple[np.ndarray, np.ndarray]:
    r"""The additive-reliability check under pair weights: for every weight draw, how many
    (set, metric) cases hold :math:`R_w(X \cup \{x\}) \ge R_w(X)` and how many are defined.

    ``weights`` (pair, draw) as for :func:`set_statistics` (the same resampling weights);
    the weighted reliabilities are those of :func:`set_statistics`. Cases with
    :math:`x \in X` or an undefined (zero-weight) reliability do not count. A case holds
    when the difference is :math:`\ge -tol` (``tol`` absorbs round-off in weighted sums
    where adding :math:`x` leaves the agreeing pairs unchanged; integer weights, as in the
    cluster bootstrap, are exact). Returns ``(n_holds, n_cases)``, arrays (draw,); the
    share is their ratio. With unit weights it equals :func:`additive_cases`.
    """
    W = np.asarray(weights, dtype=float)
    P, B = W.shape
    M = pt.n_metrics
    n_sets = idx.shape[0]
    fw, bw = pt.forward, pt.backward
    symmetric = 2 * fw.size == P and np.array_equal(W[fw], W[bw])
    Wu = W[fw] if symmetric else W
    good = pt.good.astype(float)
    up = pt.up_bits[:M]
    members = np.zeros((n_sets, M + 1), bool)
    np.put_along_axis(members, idx, True, axis=1)
    members = members[:, :M]
    n_holds = np.zeros(B)
    n_cases = np.zeros(B)

    def counts(bits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        A = _unpack(bits, P)
        AG = A * good
        if symmetric:
            A, AG = A[:, fw] + A[:, bw], AG[:, fw] + AG[:, bw]
        return _dot(A, Wu), _dot(AG, Wu)

    # only the cases x not in X are computed: (set, metric) pairs, chunked
    case_set, case_m = np.nonzero(~members)
    step = max(1, _CHUNK_BYTES // (8 * P * 2))
    for c in range(0, n_sets, step):
        sl = slice(c, min(n_sets, c + step))
        agree, _ = set_bits(pt, idx[sl])
        base_a, base_g = counts(agree)
        with np.errstate(invalid="ignore", divide="ignore"):
            base_r = base_g / base_a
        rows = np.flatnonzero((case_set >= sl.start) & (case_set < sl.stop))
        for r0 in range(0, rows.size, step):
            rr = rows[r0: r0 + step]
            k = case_set[rr] - sl.start
            both_a, both_g = counts(agree[k] & up[case_m[rr]])
            with np.errstate(invalid="ignore", divide="ignore"):
                diff = both_g / both_a - base_r[k]
            ok = ~np.isnan(diff)
            n_cases += ok.sum(0)
            n_holds += (ok & (diff >= -tol)).sum(0)
    return n_holds, n_cases


__all__ = ["DIRECTIONS", "MATCHES", "TIES", "PairTable", "additive_cases", "additive_weighted",
           "as_index_sets",
           "build_pairs", "check_directions", "describe_directions", "gain",
           "match_reliability", "pair_weights", "set_bits", "set_statistics",
           "threshold_curve"]
