r"""Pre-assessment planner (paper 002, Sec. 4 and App. C): how many human-scored outputs does
one need to judge a metric on a new task?

Draw ``n`` outputs at random (without replacement) many times, compute the metric-human
Spearman correlation on each draw, and read off the distribution of :math:`r_n`, the
probability that it lies within ``tolerance`` of the full-data value :math:`r_{full}`,
and the probability that the decision ":math:`r > 0.3`" (the paper's rule) is the same as
on the full data. The inverse question is answered on a fine grid of ``n``: the smallest
``n`` at which each probability reaches ``prob``. Everything is vectorised over draws and
metrics (one sort per draw and metric; ties get average ranks, as ``scipy.stats.spearmanr``).

With the metric coordinate ``reference_based`` and both kinds selected, the mean correlation
of the reference-free and of the reference-based metrics and their difference are reported
too: on the full data with a percentile-bootstrap interval and a Bayesian-bootstrap
posterior over the outputs (the same weights for every metric, so the contrast is paired),
and at each ``n`` as its distribution over the same random subsets, which says how often a
pre-assessment of ``n`` outputs would rank the two kinds as the full data do.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayesmeta.data import select
from bayesmeta.options import ResamplingOptions, resolve_seed
from bayesmeta.reference_free.kind_comparison import sample_corr
from bayesmeta.reference_free.kinds import kind_contrast, kind_note, kind_of
from bayesmeta.results import Result, data_hash
from bayesmeta.summaries import CI_PROB, check_ci_prob, summarize, summary_rows

COEFFICIENTS = ("spearman", "pearson")
INDEX = ["metric", "n", "set"]


def average_ranks(x: np.ndarray) -> np.ndarray:
    """Ranks along the last axis, ties given their average rank (``scipy.stats.rankdata``
    with ``method="average"``, vectorised with one sort).

    Examples
    --------
    >>> average_ranks(np.array([[3.0, 1.0, 3.0, 2.0]])).tolist()
    [[3.5, 1.0, 3.5, 2.0]]
    """
    x = np.asarray(x)
    n = x.shape[-1]
    order = np.argsort(x, axis=-1, kind="stable")  # radix sort for 16-bit codes
    xs = np.take_along_axis(x, order, -1)
    pos = np.arange(n, dtype=np.int32)
    new = np.ones(x.shape, bool)
    new[..., 1:] = xs[..., 1:] != xs[..., :-1]
    first = np.maximum.accumulate(np.where(new, pos, 0), axis=-1)
    end = np.ones(x.shape, bool)
    end[..., :-1] = new[..., 1:]
    last = np.flip(np.minimum.accumulate(np.flip(np.where(end, pos, n), -1), axis=-1), -1)
    inv = np.argsort(order.astype(np.uint16 if n < 65536 else np.int64), axis=-1,
                     kind="stable")
    return np.take_along_axis((first + last) * 0.5 + 1.0, inv, -1)


def dense_codes(x: np.ndarray) -> np.ndarray:
    """Each row's values as dense integer codes (same order and ties), 16-bit when they
    fit, so that the many sorts of :func:`average_ranks` are radix sorts."""
    x = np.atleast_2d(np.asarray(x, float))
    codes = np.stack([np.unique(r, return_inverse=True)[1] for r in x])
    return codes.astype(np.uint16 if x.shape[-1] < 65536 else np.int64)


def rowwise_corr(x: np.ndarray, y: np.ndarray, coefficient: str = "spearman") -> np.ndarray:
    """Pearson or Spearman correlation along the last axis, vectorised over the others
    (NaN where one side is constant)."""
    if coefficient not in COEFFICIENTS:
        raise ValueError(f"coefficient must be one of {COEFFICIENTS}, got {coefficient!r}.")
    x, y = np.asarray(x, float), np.asarray(y, float)
    if coefficient == "spearman":
        x, y = average_ranks(x), average_ranks(y)
    x = x - x.mean(-1, keepdims=True)
    y = y - y.mean(-1, keepdims=True)
    for z in (x, y):  # scale-free; BLEU scores of 1e-155 would underflow when squared
        big = np.abs(z).max(-1, keepdims=True)
        z /= np.where(big > 0, big, 1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (x * y).sum(-1) / np.sqrt((x * x).sum(-1) * (y * y).sum(-1))


def subset_corr(x: np.ndarray, h: np.ndarray, n: int, n_draws: int, rng: np.random.Generator,
                coefficient: str) -> np.ndarray:
    """Correlations ``(metric, draw)`` on ``n_draws`` random subsets of ``n`` outputs
    (without replacement), the same subsets for every metric."""
    idx = rng.random((n_draws, h.size)).argpartition(n - 1, axis=1)[:, :n]
    return rowwise_corr(x[:, idx], h[idx][None], coefficient)


def pre_assessment(
    data: xr.Dataset,
    trait: str | None = None,
    *,
    n: Sequence[int] = (20, 50, 100, 200),
    n_subsets: int = 2000,
    tolerance: float = 0.1,
    prob: float = 0.9,
    threshold: float = 0.3,
    coefficient: str = "spearman",
    search: bool = True,
    metrics: Sequence[str] | None = None,
    human: xr.DataArray | None = None,
    run: Any = None,
    reference: Any = "first",
    ci_prob: float = CI_PROB,
    resampling: ResamplingOptions | Mapping[str, Any] | None = None,
    random_seed: int | None = None,
) -> Result:
    r"""Distribution of the metric-human correlation from ``n`` random outputs, and the ``n``
    a pre-assessment needs (paper 002, Sec. 4 and App. C, Tables 4-6).

    .. math:: P_n = \Pr\big(|r_n - r_{full}| \le \text{tolerance}\big), \qquad
              D_n = \Pr\big(1[r_n > c] = 1[r_{full} > c]\big)

    over random subsets of ``n`` of the outputs; ``n_needed`` is the smallest ``n`` with
    :math:`P_n \ge` ``prob``, ``n_needed_decision`` the smallest with :math:`D_n \ge`
    ``prob`` (``c`` = ``threshold``, the paper's 0.3).

    Parameters
    ----------
    data : xarray.Dataset
        Metric scores and a human score.
    trait : str
        The human criterion; or ``human=``.
    n : sequence of int
        Subset sizes reported (each smaller than the number of outputs).
    n_subsets : int
        Random subsets per size (the same subsets for every metric).
    tolerance, prob, threshold : float
        See the formula.
    coefficient : {"spearman", "pearson"}
    search : bool
        Also search ``n_needed`` on a geometric grid from 10 to all outputs (steps of at
        most 10%); its value is the smallest grid size that reaches ``prob`` (an upper
        bound within one step; at all outputs the probability is 1).
    metrics, human, run, reference
        Selection (:mod:`bayesmeta.data.select`); outputs lacking any selected metric's
        score are left out, so that every metric sees the same subsets.
    ci_prob : float
        Probability of the equal-tailed intervals (:math:`r_n`, the kind contrast).
    resampling : ResamplingOptions or dict, optional
        ``n_resamples``: bootstrap and Bayesian-bootstrap draws of the full-data kind
        contrast (default 1000; 0: its classical value only). Unused without the contrast.
    random_seed : int, optional
        Drawn and recorded when omitted.

    Returns
    -------
    Result
        ``correlation`` (index ``metric, n, set``): at ``n="all"`` the full-data value
        (classical); at each ``n`` the mean, sd and equal-tailed interval of :math:`r_n`
        over the random subsets (a sampling distribution, not a posterior).
        ``p_within_tolerance`` and ``p_correct_decision`` (classical, Monte Carlo standard
        error at most ``0.5 / sqrt(n_subsets)``), ``n_needed`` and ``n_needed_decision``.
        With the ``reference_based`` coordinate and both kinds selected:
        ``correlation_group_mean`` (``set`` = reference-free / reference-based) and
        ``correlation_free_minus_based``; at ``n="all"`` the classical group means with a
        percentile-bootstrap interval and a Bayesian-bootstrap posterior over outputs
        (``resampling.n_resamples`` draws each), at each ``n`` the distribution over the random
        subsets, with ``p_same_sign`` in ``details()`` (share of subsets whose difference
        has the sign of the full-data one). Otherwise a note says why they are absent.

    Notes
    -----
    The subsets are drawn from the outputs at hand, so :math:`r_{full}` is the target and
    the answer is conditional on this pool; as ``n`` approaches the pool size the spread
    shrinks to zero (finite-population sampling). For a new task, read ``n_needed`` from a
    similar dataset. Paper 002 reports the mean and sd of :math:`r_n` for n = 20, 50, 100
    and finds 50 enough; ``n_needed`` answers the question directly.

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> import bayesmeta as bm
    >>> rng = np.random.default_rng(0)
    >>> h = rng.normal(size=(1, 400))
    >>> s = 0.6 * h + 0.8 * rng.normal(size=(1, 400))
    >>> ds = xr.Dataset({"judgment": (("system", "item", "trait"), h[..., None]),
    ...                  "score": (("metric", "system", "item"), s[None])},
    ...                 coords={"metric": ["m"], "trait": ["q"]})
    >>> res = bm.pre_assessment(ds, "q", n=(20, 50), n_subsets=500, random_seed=1)
    >>> tab = res.summary()
    >>> sd = tab.xs("correlation", level="estimand")["sd"]
    >>> bool(sd[("m", "20", "")] > sd[("m", "50", "")])
    True

    R equivalent: ``replicate(2000, cor(x[s <- sample(N, n)], h[s], method = "spearman"))``.
    """
    ci_prob = check_ci_prob(ci_prob)
    R = ResamplingOptions.coerce(resampling).n_resamples
    seed = resolve_seed(random_seed)
    rng = np.random.default_rng(seed)
    x, h, labels, hlabel = select.output_scores(data, trait, metrics=metrics, run=run,
                                                reference=reference, human=human)
    keep = np.isfinite(x).all(0)
    x, h = x[:, keep], h[keep]
    dhash = data_hash(np.c_[x.T, h])
    N = h.size
    sizes = sorted({int(k) for k in np.atleast_1d(n)})
    bad = [k for k in sizes if not 3 <= k < N]
    if bad:
        raise ValueError(f"n={bad}: each subset size must lie in [3, {N - 1}] (the data "
                         f"have {N} outputs with every metric and {hlabel}).")
    full = rowwise_corr(x, h[None], coefficient)
    kinds = kind_of(data, labels)
    why_not = kind_note(kinds, "pre_assessment")
    kind_rows, kind_det = [], []
    if coefficient == "spearman":  # ranks depend only on order and ties
        x, h = dense_codes(x), dense_codes(h)[0]
    frames, det = [], []
    full_rows = pd.DataFrame({"classical": full}, index=pd.MultiIndex.from_arrays(
        [["correlation"] * len(labels), labels, ["all"] * len(labels), [""] * len(labels)],
        names=["estimand", *INDEX]))
    frames.append(full_rows)
    draws = np.stack([subset_corr(x, h, k, n_subsets, rng, coefficient) for k in sizes], 1)
    da = xr.DataArray(np.moveaxis(draws, -1, 0), dims=("resample", "metric", "n"),
                      coords={"metric": labels, "n": [str(k) for k in sizes]})
    frames.append(summary_rows(summarize(da, ci_prob=ci_prob, interval="equal_tailed"),
                               estimand="correlation", index=INDEX))
    within = (np.abs(draws - full[:, None, None]) <= tolerance).mean(-1)
    same = ((draws > threshold) == (full[:, None, None] > threshold)).mean(-1)
    for est, val in (("p_within_tolerance", within), ("p_correct_decision", same)):
        frames.append(pd.DataFrame({"classical": val.ravel()}, index=pd.MultiIndex.from_product(
            [[est], labels, [str(k) for k in sizes], [""]], names=["estimand", *INDEX])))
    if why_not is None:  # at each n: the same random subsets for every metric
        d_full = np.nanmean(full[~kinds]) - np.nanmean(full[kinds])
        for j, k in enumerate(sizes):
            rows = kind_contrast(draws[:, j, :].T, kinds, prefix="correlation", index=INDEX,
                                 ci_prob=ci_prob, interval="equal_tailed",
                                 labels={"n": str(k)})
            kind_rows.append(rows)
            with np.errstate(invalid="ignore"):
                diff = (np.nanmean(draws[:, j, :][~kinds], 0)
                        - np.nanmean(draws[:, j, :][kinds], 0))
            same = float(np.mean(np.sign(diff) == np.sign(d_full)))
            kind_det.append(pd.DataFrame(
                {"p_same_sign": np.where(rows.index.get_level_values(0)
                                         == "correlation_free_minus_based", same, np.nan)},
                index=rows.index))
    notes = [f"{N} outputs; {n_subsets} random subsets per size, the same for every metric; "
             f"tolerance {tolerance:g}, decision threshold {threshold:g}, target "
             f"probability {prob:g}."]
    if search:
        grid = _search_grid(N)
        need = np.full((2, len(labels)), float(N))
        step = np.zeros((2, len(labels)))
        prev = 0
        for k in grid:  # ascending; only the metrics still short of the target
            todo = np.flatnonzero((need == N).any(0))
            if not todo.size:
                break
            r = subset_corr(x[todo], h, int(k), n_subsets, rng, coefficient)
            f = full[todo, None]
            p = np.stack([(np.abs(r - f) <= tolerance).mean(-1),
                          ((r > threshold) == (f > threshold)).mean(-1)])
            hit = (p >= prob) & (need[:, todo] == N)
            need[:, todo] = np.where(hit, k, need[:, todo])
            step[:, todo] = np.where(hit, k - prev, step[:, todo])
            prev = k
        for q, est in enumerate(("n_needed", "n_needed_decision")):
            frames.append(pd.DataFrame({"classical": need[q]}, index=pd.MultiIndex.from_arrays(
                [[est] * len(labels), labels, [""] * len(labels), [""] * len(labels)],
                names=["estimand", *INDEX])))
            det.append(pd.DataFrame({"grid_step": step[q]}, index=frames[-1].index))
        notes.append("n_needed: smallest size on a geometric grid from 10 to all outputs "
                     "(steps <= 10%) whose probability reaches the target; all outputs "
                     "(where the probability is 1) when no smaller size does.")
    # drawn last, so the rows above do not depend on whether the kinds are set
    if why_not is None:  # full data: bootstrap and Bayesian bootstrap over the outputs
        size = max(1, int(4e6 // x.size))
        boot, bb = [], []
        for b in [min(size, R - i) for i in range(0, R, size)]:
            boot.append(sample_corr(x, h, rng.multinomial(N, np.full(N, 1 / N), size=b),
                                    coefficient))
            bb.append(sample_corr(x, h, rng.exponential(size=(b, N)), coefficient))
        kind_rows.insert(0, kind_contrast(np.concatenate(bb) if R else None, kinds,
                                          prefix="correlation", index=INDEX,
                                          ci_prob=ci_prob, classical=full,
                                          boot=np.concatenate(boot) if R else None,
                                          interval="equal_tailed", labels={"n": "all"}))
    table = pd.concat(frames + kind_rows)
    details = pd.concat(det + kind_det).reindex(table.index) if det or kind_det else None
    if why_not is not None:
        notes.append(why_not)
    return Result(
        table, title=f"Pre-assessment planner: {coefficient} with {hlabel} from n outputs "
                     f"(paper 002, App. C)",
        info={"outputs": N, "metrics": len(labels), "draws": n_subsets},
        details=details, notes=notes, ci_prob=ci_prob,
        ci_kind="equal_tailed", random_seed=seed,
        classical_ci_kind="percentile bootstrap (outputs)" if why_not is None and R else None,
        posterior="distribution over random subsets of n outputs (not a posterior)" + (
            "; Bayesian bootstrap over outputs for the n='all' kind contrast"
            if why_not is None and R else ""),
        extra={"draws": da.rename("correlation")},
        data_hash=dhash,
    )


def _search_grid(N: int) -> np.ndarray:
    """Sizes from 10 (or 3) to N with steps of at most 10% (at least 1)."""
    start = min(10, N)
    grid = np.unique(np.round(np.geomspace(start, N, max(2, int(np.log(N / start) /
                                                             np.log(1.1)) + 2))).astype(int))
    return grid[(grid >= 3) & (grid <= N)]


__all__ = ["average_ranks", "dense_codes", "pre_assessment", "rowwise_corr", "subset_corr"]
