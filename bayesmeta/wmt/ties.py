r"""Tie calibration (Deutsch, Foster & Freitag 2023) and the permutation test that swaps
*pairwise comparisons* (MTME's ``PairwisePermutationSigDiff``).

A metric's comparison of outputs k and l in a group is :math:`\mathrm{sign}(x_k - x_l)`,
a tie when :math:`|x_k - x_l| \le \varepsilon`; the human comparison is
:math:`\mathrm{sign}(z_k - z_l)`. ``acc23`` is the share of pairs on which the two agree
(ties included), averaged over the groups; tie calibration picks the smallest
:math:`\varepsilon \in \{0\} \cup \{|x_k - x_l|\}` maximising it.

Two metrics with different :math:`\varepsilon` cannot be compared by swapping scores with
their thresholds held fixed, so MTME's test (WMT24/25) swaps their *comparisons*: for every
pair of outputs, independently with probability 1/2, metric A's comparison and metric B's
change places; the statistic is the difference of the hybrids' accuracies. The swap masks
are the resampling engine's (:func:`~bayesmeta.correlation.resampling.swap_masks`, scheme
``"both"`` over (group, pair)).

**Warning, measured**: the comparison-swapping test is far from valid. Flipping the sign
of each comparison's difference :math:`d_p = c_p(a^A_p - a^B_p)` independently gives a null
variance :math:`\sum_p d_p^2`, the diagonal of the covariance only; but comparisons that
share an output are positively correlated (each output is in :math:`K - 1` comparisons of
its group), so the null distribution is too narrow, the more so the more systems. In null
campaigns (two metrics of equal validity, per-output errors only, 50 items; label
``pairs-variance`` of ``benchmarks/wmt_null_calibration.py``) the sd of the difference
across campaigns was 1.41 times the comparison-swap null's sd at 8 systems and 1.98 times
at 20, which implies a two-sided 5% test rejecting 17% and 32% of true nulls; measured:
13 of 60 campaigns of 10 systems x 20 items (``tests/test_wmt.py``), 18%, 37% and 40% of
60 campaigns of 8, 16 and 30 systems x 50 items (200 permutations). The score-swapping
test with the threshold re-calibrated in every permutation (:func:`calibrated_accuracy`,
``scheme="both"``) is exact for metrics whose errors are exchangeable output by output: 3
of 60 in the first campaigns, 8%, 8% and 2% in the others. Both test exchangeability; the
test of equal expected accuracy is the paired bootstrap of
:func:`bayesmeta.significance_clusters` (``pair_test="bootstrap"``, its default).

**The item-blocked comparison swap** (``scheme="pairs-items"``, ``block="items"`` here)
keeps what MTME's test is for, comparing metrics with different thresholds by their
comparisons, and treats the independent items as the unit: one coin per item flips all of
that item's comparison differences, so their positive correlation stays inside the null.
It is the sign-flip test of the item sums :math:`D_g = \sum_p d_{gp}`
(``tests/test_wmt.py`` checks it against the exact enumeration of the :math:`2^G` sign
patterns). In the null campaigns above with 200 permutations and p = (b + 1)/(n + 1) it
rejected 5.5%, 4.5% and 4.0% of true nulls at 8, 20 and 30 systems (MTME's swap: 12%, 34%
and 38.5%; ``benchmarks/wmt_null_calibration.py swap``, label ``swap-tests-plus-one``).
"""

from __future__ import annotations

import numpy as np

from bayesmeta.correlation.resampling import swap_masks
from bayesmeta.wmt.kernels import grouped


def _pairs(x: np.ndarray, z: np.ndarray, grouping: str):
    """|metric differences| (..., G, P), metric signs (..., G, P), human signs (G, P),
    valid-pair mask (G, P), for all pairs k < l of members in each group."""
    zg, xg = grouped(z, grouping), grouped(x, grouping)
    K = zg.shape[-1]
    k, l_ = np.triu_indices(K, 1)
    dz = zg[:, k] - zg[:, l_]
    dx = xg[..., k] - xg[..., l_]
    valid = np.isfinite(dz)
    return np.abs(dx), np.sign(dx), np.sign(np.nan_to_num(dz)), valid


def calibrate_ties(x: np.ndarray, z: np.ndarray, *, grouping: str = "item"
                   ) -> tuple[np.ndarray, np.ndarray]:
    r"""Tie-calibrated pairwise accuracy ``acc23`` and its :math:`\varepsilon` for metric
    scores ``x`` ``(M, S, I)`` against ``z`` ``(S, I)``: returns ``(acc (M,), eps (M,))``.

    Groups without a pair with a human score are left out of the average (MTME's
    ``KendallWithTiesOpt(variant="acc23", sample_rate=1)``).
    """
    acc = np.empty(x.shape[0])
    eps = np.empty(x.shape[0])
    for m in range(x.shape[0]):          # one metric at a time: (G, P) pairs in memory
        absd, sx, sz, valid = _pairs(x[m], z, grouping)
        n_g = valid.sum(-1)
        keep = n_g > 0
        coef = np.where(valid, 1.0 / np.maximum(n_g, 1)[:, None], 0.0) * keep[:, None]
        coef = coef / keep.sum()
        tie_ok = (sz == 0).astype(float)
        nontie = ((sx == sz) & (sz != 0) & (sx != 0)).astype(float)
        base = (coef * nontie).sum()
        d = absd.ravel()
        order = np.argsort(d, kind="stable")
        ds = d[order]
        gain = np.cumsum((coef * (tie_ok - nontie)).ravel()[order])
        ends = np.concatenate([ds[1:] != ds[:-1], [True]])
        cand_t = np.concatenate([[0.0], ds[ends]])
        cand_a = np.concatenate([[base], base + gain[ends]])
        if ds.size and ds[0] == 0:      # exact metric ties are ties at threshold 0 already
            cand_t, cand_a = cand_t[1:], cand_a[1:]
        best = int(np.argmax(cand_a))
        acc[m], eps[m] = cand_a[best], cand_t[best]
    return acc, eps


def calibrated_accuracy(x: np.ndarray, z: np.ndarray, *, grouping: str = "item"
                        ) -> np.ndarray:
    """Tie-calibrated ``acc23`` over leading dims ``(..., S, I) -> (...)``, the threshold
    re-calibrated for every slice (the statistic of the score-swapping test)."""
    flat = x.reshape(-1, *x.shape[-2:])
    return calibrate_ties(flat, z, grouping=grouping)[0].reshape(x.shape[:-2])


def agreement(x: np.ndarray, z: np.ndarray, eps: np.ndarray, *, grouping: str = "item"
              ) -> tuple[np.ndarray, np.ndarray]:
    """Per pair ``(M, G, P)``: does the metric (ties at ``eps`` (M,)) agree with the human
    comparison; and the pair weights ``(G, P)`` of the group-averaged accuracy."""
    absd, sx, sz, valid = _pairs(x, z, grouping)
    tie = absd <= np.asarray(eps, float)[:, None, None]
    s = np.where(tie, 0.0, sx)
    agree = (s == sz[None]) & valid[None]
    n_g = valid.sum(-1)
    keep = n_g > 0
    coef = np.where(valid, 1.0 / np.maximum(n_g, 1)[:, None], 0.0) * keep[:, None]
    return agree.astype(float), coef / keep.sum()


def pair_swap_pvalues(agree: np.ndarray, coef: np.ndarray, order: np.ndarray,
                      n_permutations: int, random_seed: int, chunk: int = 200,
                      block: str = "pairs") -> tuple[np.ndarray, np.ndarray]:
    r"""Significance matrix (rows/columns in ``order``) of the comparison-swapping test:
    ``sig[i, j]`` (i < j) is the share of swaps whose accuracy difference
    :math:`acc(A^*) - acc(B^*)` reaches the observed :math:`acc(A) - acc(B)` (A =
    ``order[i]``). ``block="pairs"``: every comparison swapped independently (MTME's);
    ``"items"``: all comparisons of a group (an item) swapped together, one coin per item
    (scheme ``"pairs-items"``). One stream per pair, spawned from ``random_seed``. Also
    returns the null draws ``(M, M, n_permutations)`` of each pair's difference (i < j)."""
    if block not in ("pairs", "items"):
        raise ValueError(f"block must be 'pairs' or 'items', got {block!r}.")
    M = len(order)
    pairs = [(i, j) for i in range(M) for j in range(i + 1, M)]
    streams = np.random.SeedSequence(random_seed).spawn(len(pairs))
    sig = np.zeros((M, M))
    null = np.zeros((M, M, n_permutations), dtype=np.float32)
    shape = coef.shape
    for (i, j), ss in zip(pairs, streams, strict=True):
        diff = (agree[order[i]] - agree[order[j]]) * coef      # (G, P)
        delta = diff.sum()
        rng = np.random.default_rng(ss)
        hits = 0
        for s in range(0, n_permutations, chunk):
            k = min(chunk, n_permutations - s)
            # rows of the (group, pair) masks are the groups: "systems" flips a whole row
            m = swap_masks(rng, "both" if block == "pairs" else "systems", k, shape)
            d = np.where(m, -diff, diff).sum((1, 2))
            hits += int((d >= delta - 1e-12).sum())
            null[i, j, s:s + k] = d
        sig[i, j] = hits / n_permutations
    return sig, null
