r"""Reference-free vs reference-based at the sample level (paper 002, Eq. 3, Tables 2, 7, 8):
the metric-human correlation over all outputs of every metric, with intervals, and the
posterior probability that the best reference-free metric beats the best reference-based
one.

.. math:: r_M = \rho([s_1, \dots, s_N], [h_1, \dots, h_N])

(``bm.correlations`` calls this the ``global`` grouping). The Bayesian bootstrap puts
Dirichlet(1) weights on the outputs, the same weights for every metric, so the draws of
all metrics are joint: the best metric of each kind is chosen anew in every draw (the
selection is part of the uncertainty) and ``P(best free > best based)`` is the share of
draws in which it wins.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayesmeta.correlation.measures import measure_draws
from bayesmeta.data import select
from bayesmeta.options import ResamplingOptions, resolve_seed
from bayesmeta.reference_free.kinds import KIND_LABELS, kind_of
from bayesmeta.reference_free.meta_correlation import weighted_corr
from bayesmeta.results import Result, data_hash
from bayesmeta.summaries import CI_PROB, check_ci_prob, equal_tailed, summarize, summary_rows

INDEX = ["metric", "set"]
COEFFICIENTS = ("spearman", "pearson", "kendall")


def sample_corr(x: np.ndarray, h: np.ndarray, w: np.ndarray, coefficient: str) -> np.ndarray:
    """Correlations ``(R, M)`` of the metric scores ``x`` ``(M, N)`` with the human score
    ``h`` ``(N,)`` under ``R`` output-weight vectors ``w`` ``(R, N)`` (unit weights: the
    ``scipy.stats`` value; integer weights: the value of the data with outputs repeated;
    NaN members get weight 0).

    Pearson and Spearman use :func:`bayesmeta.reference_free.meta_correlation.weighted_corr`;
    Kendall tau-b uses the global-level kernel of :func:`bayesmeta.correlations`
    (:func:`bayesmeta.correlation.measures.measure_draws`, one ``N x N`` pair-sign matrix
    per metric, chunked to bounded memory), so ``global_kendall`` there and here agree.

    Examples
    --------
    >>> import numpy as np
    >>> from scipy import stats
    >>> x, h = np.array([[1.0, 3, 2, 5, 4, 4]]), np.array([2.0, 1, 4, 3, 5, 5])
    >>> r = sample_corr(x, h, np.ones((1, 6)), "kendall")
    >>> bool(abs(r[0, 0] - stats.kendalltau(x[0], h).statistic) < 1e-12)
    True
    """
    w = np.atleast_2d(np.asarray(w, float))
    if coefficient == "kendall":
        return measure_draws(x[:, None, :], h[None, :], item_weights=w,
                             measures=["global_kendall"])[:, :, 0]
    return weighted_corr(x[None], h[None, None], w[:, None, :], coefficient)


def kind_comparison(
    data: xr.Dataset,
    trait: str | None = None,
    *,
    coefficient: str = "spearman",
    metrics: Sequence[str] | None = None,
    human: xr.DataArray | None = None,
    run: Any = None,
    reference: Any = "first",
    ci_prob: float = CI_PROB,
    resampling: ResamplingOptions | Mapping[str, Any] | None = None,
    random_seed: int | None = None,
) -> Result:
    r"""Sample-level correlation of every metric with a human criterion, and the contrast of
    reference-free and reference-based metrics (paper 002, Eq. 3, Table 2).

    Parameters
    ----------
    data : xarray.Dataset
        Metric scores with the metric coordinate ``reference_based`` (set by the readers or
        :func:`bayesmeta.metric_kinds`) and a human score.
    trait : str
        The human criterion; or ``human=``.
    coefficient : {"spearman", "pearson", "kendall"}
        ``scipy.stats`` definitions (Kendall is tau-b, as the repository's ``kendalltau``
        column). Kendall's resamples cost ``O(N^2)`` each (a pair-sign matrix product);
        Pearson and Spearman ``O(N log N)``.
    metrics, human, run, reference
        Selection (:mod:`bayesmeta.data.select`); list cells: the first reference, as the
        repository.
    ci_prob : float
        Probability of both intervals.
    resampling : ResamplingOptions or dict, optional
        ``n_resamples`` for the percentile bootstrap and the Bayesian bootstrap over outputs.
    random_seed : int, optional
        Drawn and recorded when omitted.

    Returns
    -------
    Result
        ``correlation`` (index ``metric``): classical, percentile bootstrap, Bayesian
        bootstrap. ``best_correlation`` and ``mean_correlation`` (index ``set``: reference-free
        / reference-based) and ``best_free_minus_best_based``, ``mean_free_minus_based``.
        ``details()``: ``p_best_in_set`` (posterior probability that the metric is the best
        of its kind), ``p_free_wins`` on the contrast rows, ``best_metric`` on the best
        rows.

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> import bayesmeta as bm
    >>> rng = np.random.default_rng(0)
    >>> h = rng.normal(size=(1, 300))
    >>> s = np.stack([0.6 * h, 0.3 * h, 0.2 * h]) + rng.normal(size=(3, 1, 300))
    >>> ds = bm.metric_kinds(xr.Dataset(
    ...     {"judgment": (("system", "item", "trait"), h[..., None]),
    ...      "score": (("metric", "system", "item"), s)},
    ...     coords={"metric": ["a_src_hypo", "b_ref_hypo", "c_ref_hypo"], "trait": ["q"]}))
    >>> res = bm.kind_comparison(ds, "q", random_seed=0, resampling={"n_resamples": 300})
    >>> float(res.details().loc[("best_free_minus_best_based", "", ""), "p_free_wins"]) > 0.9
    True

    R equivalent: ``cor(s, h, method = "spearman")`` per metric.
    """
    ci_prob = check_ci_prob(ci_prob)
    if coefficient not in COEFFICIENTS:
        raise ValueError(f"coefficient must be one of {COEFFICIENTS}, got {coefficient!r}.")
    opts = ResamplingOptions.coerce(resampling)
    seed = resolve_seed(random_seed)
    rng = np.random.default_rng(seed)
    x, h, labels, hlabel = select.output_scores(data, trait, metrics=metrics, run=run,
                                                reference=reference, human=human)
    kinds = kind_of(data, labels)
    if kinds is None:
        raise ValueError("data has no metric coordinate 'reference_based': read the data "
                         "with bm.read_csv / bm.datasets.nlgeval or set it with "
                         "bm.metric_kinds(data, reference_based=...).")
    if kinds.all() or not kinds.any():
        raise ValueError(f"the metrics selected are all {KIND_LABELS[bool(kinds[0])]}; the "
                         "comparison needs both kinds.")
    N, R = h.size, opts.n_resamples
    r0 = sample_corr(x, h, np.ones((1, N)), coefficient)[0]
    rows = pd.DataFrame({"classical": r0}, index=pd.MultiIndex.from_arrays(
        [["correlation"] * len(labels), labels, [""] * len(labels)],
        names=["estimand", *INDEX]))
    sets = [KIND_LABELS[False], KIND_LABELS[True]]
    best0 = np.array([np.nanmax(r0[~kinds]), np.nanmax(r0[kinds])])
    mean0 = np.array([np.nanmean(r0[~kinds]), np.nanmean(r0[kinds])])
    frames = [rows]
    group = pd.DataFrame({"classical": np.r_[best0, mean0, best0[0] - best0[1],
                                            mean0[0] - mean0[1]]},
                         index=pd.MultiIndex.from_arrays(
                             [["best_correlation"] * 2 + ["mean_correlation"] * 2
                              + ["best_free_minus_best_based", "mean_free_minus_based"],
                              [""] * 6, sets + sets + ["", ""]], names=["estimand", *INDEX]))
    frames.append(group)
    table = pd.concat(frames)
    best_metric = [""] * len(table)
    for k in (0, 1):
        pool = np.flatnonzero(kinds == bool(k))
        best_metric[len(labels) + k] = labels[pool[np.nanargmax(r0[pool])]]
    details = pd.DataFrame({"best_metric": best_metric}, index=table.index)
    if R:
        # Kendall's kernel chunks by memory itself: one batch (the sign matrices once)
        size = R if coefficient == "kendall" else max(1, int(4e6 // x.size))
        boot, bb = [], []
        for b in [min(size, R - i) for i in range(0, R, size)]:
            cnt = rng.multinomial(N, np.full(N, 1 / N), size=b)
            boot.append(sample_corr(x, h, cnt, coefficient))
            w = rng.exponential(size=(b, N))
            bb.append(sample_corr(x, h, w, coefficient))
        boot, bb = np.concatenate(boot), np.concatenate(bb)          # (R, M)
        derived_b, derived_p = _derived(boot, kinds), _derived(bb, kinds)
        allb = np.c_[boot, derived_b]
        iv = equal_tailed(allb, ci_prob, axis=(0,))
        post = summary_rows(summarize(xr.DataArray(np.c_[bb, derived_p],
                                                   dims=("resample", "n")), ci_prob=ci_prob),
                            estimand="x", index=["n"])
        table["classical_low"], table["classical_high"] = iv[:, 0], iv[:, 1]
        for c in post.columns:
            table[c] = post[c].to_numpy()
        winners = np.zeros(len(labels))
        for k in (False, True):
            pool = np.flatnonzero(kinds == k)
            best = pool[np.nanargmax(np.where(np.isnan(bb[:, pool]), -np.inf, bb[:, pool]),
                                     1)]
            winners += np.bincount(best, minlength=len(labels))
        details["p_best_in_set"] = np.r_[winners / R, np.full(6, np.nan)]
        details["p_free_wins"] = np.r_[np.full(len(labels) + 4, np.nan),
                                       (derived_p[:, 4:] > 0).mean(0)]
    return Result(
        table, title=f"Sample-level {coefficient} with {hlabel}: reference-free vs "
                     f"reference-based (paper 002, Eq. 3)",
        info={"outputs": N, "metrics": len(labels), "reference-free": int((~kinds).sum()),
              "reference-based": int(kinds.sum()), "resamples": R},
        details=details, ci_prob=ci_prob, random_seed=seed,
        classical_ci_kind="percentile bootstrap (outputs)" if R else None,
        posterior="Bayesian bootstrap (outputs; the same weights for every metric)",
        notes=["best_*: the best metric of each kind is chosen in every draw, so the "
               "selection is part of the uncertainty."],
        data_hash=data_hash(np.c_[x.T, h]),
    )


def _derived(draws: np.ndarray, kinds: np.ndarray) -> np.ndarray:
    """Per draw: best free, best based, mean free, mean based, best diff, mean diff."""
    with warnings.catch_warnings():  # all-NaN draws of a group stay NaN
        warnings.simplefilter("ignore", RuntimeWarning)
        bf, bb = np.nanmax(draws[:, ~kinds], 1), np.nanmax(draws[:, kinds], 1)
        mf, mb = np.nanmean(draws[:, ~kinds], 1), np.nanmean(draws[:, kinds], 1)
    return np.c_[bf, bb, mf, mb, bf - bb, mf - mb]


__all__ = ["kind_comparison", "sample_corr"]
