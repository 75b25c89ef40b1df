r"""Corroboration with heterogeneous metrics (paper 003, Amigó et al.): the public functions.

* :func:`corroboration`: reliability :math:`R(X)`, sensitivity :math:`S(X)`,
  heterogeneity :math:`H(X)` and reliability gain of metric sets (given, or random sets of
  several sizes), the additive-reliability check, the share of sets with a positive gain and
  the correlation of heterogeneity and reliability across sets; classical estimates with a
  cluster-bootstrap interval next to Bayesian-bootstrap posteriors.
* :func:`recommend_metric_set`: the small set of metrics whose agreement is most reliable
  at a required sensitivity (beyond the paper).

The definitions and the computing layer are in :mod:`bayesmeta.classical.heterogeneity`.

**Intervals.** The pairs share outputs, systems and items, so they are far from
independent. The Bayesian bootstrap draws system weights :math:`a \sim S\,\mathrm{Dir}(1)`
and item weights :math:`b \sim I\,\mathrm{Dir}(1)` jointly; pair :math:`(s, s', i)` weighs
:math:`a_s a_{s'} b_i` and every statistic is recomputed on the weighted pairs (Rubin 1981),
giving posterior draws summarised by :func:`bayesmeta.summaries.summarize`. The classical
interval is the percentile interval of the cluster bootstrap (systems and items drawn with
replacement, ``resampling.unit``; a pair weighs the product of the counts, so a system is
never paired with its own copy).
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayesmeta.classical import heterogeneity as het
from bayesmeta.data import select
from bayesmeta.data.schema import MissingDataWarning
from bayesmeta.options import ResamplingOptions, resolve_seed
from bayesmeta.results import Result, data_hash
from bayesmeta.summaries import CI_PROB, check_ci_prob, summarize

SIZES = (2, 3, 5, 10, 20, 40)
SET_ESTIMANDS = ("reliability", "sensitivity", "heterogeneity", "gain")
INDEX = ["estimand", "set", "size"]


class CorroborationResult(Result):
    """Result of :func:`corroboration` and :func:`recommend_metric_set`."""

    kind = "corroboration"

    def sets(self, column: str = "mean") -> pd.DataFrame:
        """One row per metric set, one column per statistic (``column`` of the summary:
        ``"classical"``, ``"mean"``, ...), with the set's size."""
        tab = self._table[column]
        tab = tab[tab.index.get_level_values("set") != ""]
        wide = tab.unstack("estimand")
        cols = [c for c in (*SET_ESTIMANDS, "best_single_reliability", "gain_vs_best_single")
                if c in wide.columns]
        return wide[cols]

    def plot(self, ax: Any = None, kind: str = "reliability") -> Any:
        """``kind="reliability"`` (paper 003, Figs. 2-3), ``"gain"`` (Figs. 5-6) or
        ``"curves"`` (the :math:`R_{th}/S_{th}` curves). Returns the Figure."""
        if kind == "curves":
            return plot_threshold_curves(self, ax=ax).figure
        return plot_heterogeneity(self, y=kind, ax=ax).figure


# ----------------------------------------------------------------------------- inputs
def _pairs(data: xr.Dataset, trait: str | None, *, metrics: Sequence[str] | None,
           human: xr.DataArray | None, raters: Any, run: Any, reference: Any, ties: str
           ) -> tuple[het.PairTable, str, list[str]]:
    labels = select.check_metrics(data, metrics)
    if len(labels) < 1:
        raise ValueError("metrics: no metric selected.")
    x = select.metric_scores(data, labels, run=run, reference=reference)
    hs = select.human_score(data, trait, raters=raters, human=human)
    xv = np.asarray(x.values, dtype=float)
    qv = np.asarray(hs.values.transpose("system", "item").values, dtype=float)
    notes = []
    missing = np.isnan(qv) | np.isnan(xv).any(0)
    if missing.any():
        msg = (f"{int(missing.sum())} of {missing.size} outputs lack the human score or a "
               "metric's score; the pairs they belong to are left out.")
        warnings.warn(msg, MissingDataWarning, stacklevel=3)
        notes.append(msg)
    pt = het.build_pairs(xv, qv, metrics=labels, ties=ties)
    return pt, hs.label, notes


def _parse_sets(sets: Sequence[Any], labels: list[str]) -> list[list[int]]:
    out = []
    for k, s in enumerate(sets):
        names = s.split("+") if isinstance(s, str) else list(s)
        if not names:
            raise ValueError(f"sets[{k}] is empty.")
        picked = select.check_labels(np.array(labels, dtype=object), names, "metric")
        pos = [labels.index(str(p)) for p in picked]
        if len(set(pos)) != len(pos):
            raise ValueError(f"sets[{k}] names a metric twice: {names}.")
        out.append(pos)
    return out


def _random_sets(rng: np.random.Generator, M: int, sizes: Sequence[int], n_sets: int
                 ) -> list[list[int]]:
    out: list[list[int]] = []
    for k in sizes:
        if math.comb(M, k) <= n_sets:
            out += [list(c) for c in itertools.combinations(range(M), k)]
            continue
        seen: set[tuple[int, ...]] = set()
        while len(seen) < n_sets:
            c = tuple(sorted(rng.choice(M, size=k, replace=False).tolist()))
            if c not in seen:
                seen.add(c)
                out.append(list(c))
    return out


def _weights(rng: np.random.Generator, B: int, S: int, I: int, kind: str, unit: str = "both"
             ) -> tuple[np.ndarray | None, np.ndarray | None]:
    if kind == "bayesian":
        return S * rng.dirichlet(np.ones(S), size=B), I * rng.dirichlet(np.ones(I), size=B)
    a = rng.multinomial(S, np.full(S, 1 / S), size=B).astype(float) if unit in (
        "systems", "both") else None
    b = rng.multinomial(I, np.full(I, 1 / I), size=B).astype(float) if unit in (
        "items", "both") else None
    return a, b


def _set_draws(pt: het.PairTable, idx: np.ndarray, a: np.ndarray | None,
               b: np.ndarray | None, B: int, *, match: str, against_all: bool = False
               ) -> dict[str, np.ndarray]:
    """Statistics of every set for B weight draws: arrays (draw, set)."""
    names = [*SET_ESTIMANDS, *(("best_single_reliability", "gain_vs_best_single")
                                if against_all else ())]
    out = {n: np.empty((B, idx.shape[0])) for n in names}
    step = max(1, het._CHUNK_BYTES // (8 * pt.n_pairs * 2))
    for c in range(0, B, step):
        sl = slice(c, min(B, c + step))
        W = het.pair_weights(pt, None if a is None else a[sl], None if b is None else b[sl])
        if W.shape[1] != sl.stop - sl.start:
            W = np.repeat(W, sl.stop - sl.start, axis=1)
        st = het.set_statistics(pt, idx, W)
        g, _ = het.gain(pt, idx, st, W, match=match)
        for n in ("reliability", "sensitivity", "heterogeneity"):
            out[n][sl] = st[n].T
        out["gain"][sl] = g.T
        if against_all:
            g2, best = het.gain(pt, idx, st, W, match=match, against=range(pt.n_metrics))
            out["best_single_reliability"][sl] = best.T
            out["gain_vs_best_single"][sl] = g2.T
    return out


def _point(pt: het.PairTable, idx: np.ndarray, *, match: str, against_all: bool = False
           ) -> dict[str, np.ndarray]:
    st = het.set_statistics(pt, idx)
    g, _ = het.gain(pt, idx, st, match=match)
    out = {n: st[n] for n in ("reliability", "sensitivity", "heterogeneity")}
    out["gain"] = g
    out["n_agree"] = st["n_agree"]
    if against_all:
        g2, best = het.gain(pt, idx, st, match=match, against=range(pt.n_metrics))
        out["best_single_reliability"], out["gain_vs_best_single"] = best, g2
    return out


# ----------------------------------------------------------------------------- aggregates
def _prob_positive(draws: np.ndarray) -> np.ndarray:
    """P(value > 0) over the draws (axis 0) where defined; NaN where no draw is."""
    ok = ~np.isnan(draws)
    n = ok.sum(0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, (np.where(ok, draws, 0) > 0).sum(0) / n, np.nan)


def _share_positive(g: np.ndarray) -> np.ndarray:
    """Share of sets (last axis) with gain > 0 among those with a defined gain."""
    ok = ~np.isnan(g)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(ok, g > 0, False).sum(-1) / ok.sum(-1)


def _corr(h: np.ndarray, r: np.ndarray) -> np.ndarray:
    """Pearson correlation across sets (last axis), sets with undefined R left out."""
    ok = ~np.isnan(h) & ~np.isnan(r)
    n = ok.sum(-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        hm = np.where(ok, h, 0).sum(-1) / n
        rm = np.where(ok, r, 0).sum(-1) / n
        dh = np.where(ok, h - hm[..., None], 0)
        dr = np.where(ok, r - rm[..., None], 0)
        c = (dh * dr).sum(-1) / np.sqrt((dh**2).sum(-1) * (dr**2).sum(-1))
    return np.where(n >= 3, c, np.nan)


# ----------------------------------------------------------------------------- table
def _rows(estimand: str, labels: list[str], sizes: list[int], classical: np.ndarray,
          boot: np.ndarray | None, post: np.ndarray | None, ci_prob: float) -> pd.DataFrame:
    idx = pd.MultiIndex.from_arrays([[estimand] * len(labels), labels, sizes], names=INDEX)
    cols: dict[str, np.ndarray] = {"classical": np.asarray(classical, dtype=float)}
    if boot is not None:
        s = summarize(xr.DataArray(boot, dims=("resample", "set")), ci_prob=ci_prob,
                      interval="equal_tailed")
        cols["classical_low"] = s["interval"].values[:, 0]
        cols["classical_high"] = s["interval"].values[:, 1]
    if post is not None:
        s = summarize(xr.DataArray(post, dims=("resample", "set")), ci_prob=ci_prob)
        cols.update(mean=s["mean"].values, sd=s["sd"].values,
                    hdi_low=s["interval"].values[:, 0], hdi_high=s["interval"].values[:, 1])
    return pd.DataFrame(cols, index=idx)


def _options(resampling: Any, default_resamples: int | None = None) -> ResamplingOptions:
    if resampling is None and default_resamples is not None:
        return ResamplingOptions(n_resamples=default_resamples)
    return ResamplingOptions.coerce(resampling)


def corroboration(
    data: xr.Dataset,
    trait: str | None = None,
    *,
    metrics: Sequence[str] | None = None,
    sets: Sequence[Sequence[str] | str] | None = None,
    sizes: Sequence[int] = SIZES,
    n_sets: int = 100,
    human: xr.DataArray | None = None,
    raters: Any = None,
    run: Any = None,
    reference: Any = "first",
    ties: str = "paper",
    match: str = "interpolate",
    resampling: ResamplingOptions | dict[str, Any] | None = None,
    random_seed: int | None = None,
    ci_prob: float = CI_PROB,
) -> CorroborationResult:
    r"""Reliability, sensitivity, heterogeneity and reliability gain of metric sets
    (paper 003), with cluster-bootstrap intervals and Bayesian-bootstrap posteriors.

    Over all ordered pairs :math:`(s, s')` of outputs of different systems for the same
    item (:math:`I \cdot S (S - 1)` pairs):

    .. math::

        R(X) = P(Q(s) \ge Q(s') \mid x(s) \ge x(s')\ \forall x \in X), \quad
        S(X) = P(x(s) \ge x(s')\ \forall x \in X \mid Q(s) \ge Q(s')),

        H(X) = P(\exists x, x' \in X: x(s) > x(s') \wedge x'(s) < x'(s')), \quad
        \mathrm{gain}(X) = R(X) - \max_{x \in X} R_{th}(x)\big|_{S_{th}(x) = S(X)}.

    Parameters
    ----------
    data : xarray.Dataset
        A bayesmeta dataset with ``score`` and human scores.
    trait : str, optional
        The trait whose human score is the quality :math:`Q` (mean over raters, or the
        continuous judgment); or give ``human=``.
    metrics : list of str, optional
        Metrics to draw sets from (default all).
    sets : list of lists of metric names (or ``"a+b"`` strings), optional
        Evaluate these sets (``sizes`` and ``n_sets`` are then ignored).
    sizes : list of int
        Sizes of the random sets (paper: 2, 3, 5, 10, 20, 40); sizes above the number of
        metrics are dropped.
    n_sets : int
        Random sets per size (all sets of a size when there are at most ``n_sets``).
    human, raters, run, reference :
        As in :func:`bayesmeta.data.select.human_score` / ``metric_scores``.
    ties : {"paper", "strict"}
        ``"paper"``: :math:`\ge` as written; ``"strict"``: :math:`>` everywhere.
    match : {"interpolate", "nearest"}
        How :math:`R_{th}` is read at :math:`S(X)` (:mod:`~bayesmeta.classical.heterogeneity`).
    resampling : ResamplingOptions or dict
        ``n_resamples`` (default 1000; 0: plain estimates only) for both bootstraps and
        ``unit`` for the cluster bootstrap.
    random_seed : int, optional
        Seed of the random sets and of the resampling (drawn and recorded when None).
    ci_prob : float
        Probability of both intervals.

    Returns
    -------
    CorroborationResult
        ``summary()``: index ``(estimand, set, size)``; per set the estimands
        ``reliability``, ``sensitivity``, ``heterogeneity``, ``gain``; per size
        ``share_positive_gain``, ``corr_heterogeneity_reliability`` (Pearson across sets)
        and ``additive_share`` (share of (set, metric) cases with
        :math:`R(X \cup \{x\}) \ge R(X)`, classical only; size 1 is paper 003's Fig. 1).
        ``details()``: ``n_agree`` (pairs where all metrics agree), ``p_positive``
        (posterior probability that the gain is positive), ``n_sets``, ``n_cases``.
        ``extra``: ``draws`` (Bayesian-bootstrap draws per set), ``curves`` (the
        :math:`R_{th}, S_{th}` curves), ``membership`` (set x metric).

    Notes
    -----
    A set whose metrics never agree on a pair has an undefined :math:`R` and gain (NaN;
    ``n_agree`` = 0). The heterogeneity property (:math:`H = 1 \Rightarrow R = 1`) relies on
    the human reference being among the outputs, which it is not in these data.

    References
    ----------
    Amigó, Gonzalo, Giménez & Verdejo (2011), *Corroborating Text Evaluation Results with
    Heterogeneous Measures*, EMNLP (paper 003), Secs. 5-7 and Figs. 1-6. Rubin (1981),
    *The Bayesian Bootstrap*, Ann. Statist. 9(1).

    Examples
    --------
    >>> import bayesmeta as bm
    >>> ds = bm.datasets.simulated(n_systems=6, n_items=10, n_metrics=4)
    >>> res = bm.corroboration(ds, "COH", sizes=[2, 3], n_sets=3,
    ...                        resampling={"n_resamples": 50}, random_seed=1)
    >>> res.sets().shape
    (6, 4)

    R equivalent: none (paper 003 published figures only).
    """
    ci_prob = check_ci_prob(ci_prob)
    if not isinstance(n_sets, int | np.integer) or n_sets < 1:
        raise ValueError(f"n_sets must be a positive integer, got {n_sets!r}.")
    opts = _options(resampling)
    seed = resolve_seed(random_seed)
    rng = np.random.default_rng(seed)
    pt, label, notes = _pairs(data, trait, metrics=metrics, human=human, raters=raters,
                              run=run, reference=reference, ties=ties)
    M = pt.n_metrics
    names = list(pt.metrics)
    if sets is not None:
        chosen = _parse_sets(sets, names)
    else:
        bad = [int(k) for k in sizes if int(k) < 1]
        if bad:
            raise ValueError(f"sizes must be positive integers, got {bad}.")
        kept = sorted({int(k) for k in sizes if int(k) <= M})
        dropped = sorted({int(k) for k in sizes if int(k) > M})
        if not kept:
            raise ValueError(f"sizes {list(sizes)}: every size exceeds the {M} metrics.")
        if dropped:
            notes.append(f"sizes {dropped} exceed the {M} metrics and are left out.")
        chosen = _random_sets(rng, M, kept, int(n_sets))
    idx = het.as_index_sets(chosen, M)
    labels = ["+".join(names[m] for m in c) for c in chosen]
    if len(set(labels)) != len(labels):
        raise ValueError("sets lists the same metric set twice.")
    size = [len(c) for c in chosen]
    point = _point(pt, idx, match=match)
    B = opts.n_resamples
    boot = post = None
    if B > 0:
        boot = _set_draws(pt, idx, *_weights(rng, B, pt.n_systems, pt.n_items, "cluster",
                                             opts.unit), B, match=match)
        post = _set_draws(pt, idx, *_weights(rng, B, pt.n_systems, pt.n_items, "bayesian"),
                          B, match=match)
    frames = []
    det = []
    for est in SET_ESTIMANDS:
        frames.append(_rows(est, labels, size, point[est], None if boot is None else
                            boot[est], None if post is None else post[est], ci_prob))
        d = pd.DataFrame({"n_agree": point["n_agree"]}, index=frames[-1].index)
        if est == "gain" and post is not None:
            d["p_positive"] = _prob_positive(post[est])
        det.append(d)
    never = int((point["n_agree"] == 0).sum())
    if never:
        notes.append(f"{never} set(s) have no pair on which all their metrics agree: their "
                     "R and gain are undefined (NaN; details() n_agree = 0).")
    # aggregates over the sets of each size
    size_arr = np.array(size)
    agg: dict[str, list[Any]] = {"share_positive_gain": [], "corr_heterogeneity_reliability": []}
    for k in sorted(set(size)):
        cols = np.flatnonzero(size_arr == k)
        if cols.size < 2:
            continue
        for est, fn in (("share_positive_gain", lambda d, c=cols: _share_positive(d["gain"][
                ..., c])), ("corr_heterogeneity_reliability", lambda d, c=cols: _corr(
                d["heterogeneity"][..., c], d["reliability"][..., c]))):
            f = _rows(est, [""], [k], np.atleast_1d(fn(point)),
                      None if boot is None else fn(boot)[:, None],
                      None if post is None else fn(post)[:, None], ci_prob)
            frames.append(f)
            det.append(pd.DataFrame({"n_sets": [int(cols.size)]}, index=f.index))
            agg[est].append(k)
    add_sizes = sorted({1, *size}) if M > 1 else []
    for k in add_sizes:
        if k >= M:
            continue
        X = [[m] for m in range(M)] if k == 1 else [c for c in chosen if len(c) == k]
        holds, _ = het.additive_cases(pt, het.as_index_sets(X, M))
        n = int((~np.isnan(holds)).sum())
        idx_a = pd.MultiIndex.from_arrays([["additive_share"], [""], [k]], names=INDEX)
        frames.append(pd.DataFrame({"classical": [np.nanmean(holds) if n else np.nan]},
                                   index=idx_a))
        det.append(pd.DataFrame({"n_sets": [len(X)], "n_cases": [n]}, index=idx_a))
    table = pd.concat(frames)
    details = pd.concat(det).reindex(table.index)
    curves = _curves(pt)
    membership = np.zeros((len(chosen), M), np.int8)
    for r, c in enumerate(chosen):
        membership[r, c] = 1
    extra: dict[str, Any] = {
        "curves": curves,
        "membership": xr.DataArray(membership, dims=("set", "metric"),
                                   coords={"set": labels, "metric": names}),
    }
    if post is not None:
        extra["draws"] = xr.Dataset(
            {est: (("resample", "set"), post[est]) for est in SET_ESTIMANDS},
            coords={"set": labels, "size": ("set", size)})
    notes += _notes(pt, match, B)
    info = {"human": label, "pairs": f"{pt.n_pairs} ordered pairs ({pt.n_systems} systems, "
                                      f"{pt.n_items} items)",
            "metrics": M, "sets": f"{len(chosen)} ("
            + ", ".join(f"size {k}: {size.count(k)}" for k in sorted(set(size))) + ")",
            "ties": "paper (>=)" if ties == "paper" else "strict (>)",
            "gain matching": match,
            "resamples": f"{B} cluster bootstrap ({opts.unit}) + {B} Bayesian bootstrap"}
    return CorroborationResult(
        table, title="Corroboration with heterogeneous metrics (paper 003): R, S, H, gain",
        info=info, details=details, extra=extra, notes=notes, ci_prob=ci_prob,
        classical_ci_kind=_cl_kind(opts.unit) if B > 0 else None,
        posterior="Bayesian bootstrap (Dirichlet weights on systems and items)",
        random_seed=seed, data_hash=data_hash(np.r_[pt.dq, pt.dx.ravel()]))


def _cl_kind(unit: str) -> str:
    return {"both": "cluster bootstrap (items, systems)", "systems":
            "cluster bootstrap (systems)", "items": "cluster bootstrap (items)"}[unit]


def _notes(pt: het.PairTable, match: str, B: int) -> list[str]:
    out = ["each unordered pair of outputs enters in both orientations (the definitions use "
           ">=); a tie on a metric agrees in both.",
           f"gain: the single metric's R_th at S(X), {match}d over its threshold curve "
           "(highest R_th among equal S_th; the curve's end point below its smallest S_th)."]
    if B > 0:
        out.append("additive_share has no interval (classical count over the sets drawn).")
    return out


def _curves(pt: het.PairTable) -> xr.Dataset:
    cs = [het.threshold_curve(pt, m) for m in range(pt.n_metrics)]
    L = max(c["threshold"].size for c in cs)
    arr = {k: np.full((pt.n_metrics, L), np.nan) for k in ("threshold", "reliability",
                                                            "sensitivity")}
    for m, c in enumerate(cs):
        for k in arr:
            arr[k][m, : c[k].size] = c[k]
    return xr.Dataset({k: (("metric", "level"), v) for k, v in arr.items()},
                      coords={"metric": list(pt.metrics)})


# ----------------------------------------------------------------------------- recommender
def recommend_metric_set(
    data: xr.Dataset,
    trait: str | None = None,
    *,
    k: int = 3,
    target_sensitivity: float = 0.3,
    metrics: Sequence[str] | None = None,
    exhaustive: bool | None = None,
    human: xr.DataArray | None = None,
    raters: Any = None,
    run: Any = None,
    reference: Any = "first",
    ties: str = "paper",
    match: str = "interpolate",
    resampling: ResamplingOptions | dict[str, Any] | None = None,
    random_seed: int | None = None,
    ci_prob: float = CI_PROB,
) -> CorroborationResult:
    r"""The metric set of at most ``k`` metrics whose agreement is most reliable at a
    required sensitivity: maximise the posterior expected reliability subject to the
    posterior expected sensitivity reaching the target,

    .. math:: X^* = \arg\max_{|X| \le k} E[R(X) \mid \text{data}] \quad \text{s.t.} \quad
              E[S(X) \mid \text{data}] \ge S_{target},

    the expectations over Bayesian-bootstrap draws (systems and items).

    Greedy forward selection adds, one at a time, the metric that gives the most reliable
    feasible set, and stops when no addition is feasible or raises the reliability; with
    ``exhaustive`` every set of size 1..k is scored as well, to show how far greedy is.

    Parameters
    ----------
    k : int
        Largest set size.
    target_sensitivity : float
        Required :math:`E[S(X)]` (share of truly better outputs on which all metrics of
        the set agree). Single metrics of SummEval reach about 0.5-0.7 under ``ties="paper"``.
    exhaustive : bool, optional
        Also search all sets of size <= k (default: when there are at most 20,000).
    resampling : ResamplingOptions or dict
        Default ``{"n_resamples": 200}`` here (the search scores many sets); ``unit`` sets
        the cluster bootstrap of the classical intervals of the chosen sets.
    data, trait, metrics, human, raters, run, reference, ties, match, random_seed, ci_prob :
        As in :func:`corroboration`.

    Returns
    -------
    CorroborationResult
        The chosen set(s) (``details()["search"]``: greedy, exhaustive or both) with
        ``reliability``, ``sensitivity``, ``heterogeneity``, ``gain`` and, next to them,
        ``best_single_reliability`` (the most reliable single metric of all, at the set's
        sensitivity) and ``gain_vs_best_single``; the greedy path is in ``notes``.

    Examples
    --------
    >>> import bayesmeta as bm
    >>> ds = bm.datasets.simulated(n_systems=6, n_items=10, n_metrics=4)
    >>> rec = bm.recommend_metric_set(ds, "COH", k=2, target_sensitivity=0.3,
    ...                               resampling={"n_resamples": 40}, random_seed=0)
    >>> rec.summary().index.get_level_values("estimand")[0]
    'reliability'
    """
    ci_prob = check_ci_prob(ci_prob)
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}.")
    if not 0 <= float(target_sensitivity) <= 1:
        raise ValueError(f"target_sensitivity must lie in [0, 1], got {target_sensitivity!r}.")
    opts = _options(resampling, 200)
    if opts.n_resamples < 2:
        raise ValueError("recommend_metric_set needs resampling n_resamples >= 2 (the "
                         "posterior expectations).")
    seed = resolve_seed(random_seed)
    rng = np.random.default_rng(seed)
    pt, label, notes = _pairs(data, trait, metrics=metrics, human=human, raters=raters,
                              run=run, reference=reference, ties=ties)
    M, names, B = pt.n_metrics, list(pt.metrics), opts.n_resamples
    k = min(int(k), M)
    a, b = _weights(rng, B, pt.n_systems, pt.n_items, "bayesian")
    W = het.pair_weights(pt, a, b)

    def score(cands: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
        st = het.set_statistics(pt, het.as_index_sets(cands, M), W, heterogeneity=False)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return np.nanmean(st["reliability"], 1), np.nanmean(st["sensitivity"], 1)

    target = float(target_sensitivity)
    current: list[int] = []
    best_r = -np.inf
    path = []
    for _ in range(k):
        cands = [[*current, m] for m in range(M) if m not in current]
        r, s = score(cands)
        ok = (s >= target) & ~np.isnan(r)
        if not ok.any():
            if not current:
                j = int(np.nanargmax(s))
                raise ValueError(f"target_sensitivity={target:g}: no single metric reaches it "
                                 f"(largest posterior mean sensitivity {s[j]:.3f}, metric "
                                 f"{names[cands[j][-1]]!r}).")
            break
        j = int(np.argmax(np.where(ok, r, -np.inf)))
        if r[j] <= best_r:
            break
        current, best_r = cands[j], float(r[j])
        path.append(f"{'+'.join(names[m] for m in current)}: E[R] {r[j]:.4f}, E[S] {s[j]:.4f}")
    greedy = current
    n_all = sum(math.comb(M, j) for j in range(1, k + 1))
    if exhaustive is None:
        exhaustive = n_all <= 20000
    found: dict[str, list[int]] = {"greedy": greedy}
    ex_r = np.nan
    if exhaustive:
        allsets = [list(c) for j in range(1, k + 1) for c in itertools.combinations(range(M), j)]
        r, s = score(allsets)
        ok = (s >= target) & ~np.isnan(r)
        j = int(np.argmax(np.where(ok, r, -np.inf)))
        found["exhaustive"] = allsets[j]
        ex_r = float(r[j])
        notes.append(f"exhaustive search over {len(allsets)} sets: best E[R] {ex_r:.4f} "
                     f"({'+'.join(names[m] for m in allsets[j])}); greedy {best_r:.4f}.")
    chosen = [greedy]
    search = ["greedy"]
    if exhaustive:
        if sorted(found["exhaustive"]) == sorted(greedy):
            search = ["both"]
        else:
            chosen.append(found["exhaustive"])
            search.append("exhaustive")
    idx = het.as_index_sets(chosen, M)
    labels = ["+".join(names[m] for m in c) for c in chosen]
    size = [len(c) for c in chosen]
    point = _point(pt, idx, match=match, against_all=True)
    boot = _set_draws(pt, idx, *_weights(rng, B, pt.n_systems, pt.n_items, "cluster",
                                         opts.unit), B, match=match, against_all=True)
    post = _set_draws(pt, idx, a, b, B, match=match, against_all=True)
    frames, det = [], []
    best_single = []
    for r_ in range(len(chosen)):
        vals = [het.match_reliability(np.array([point["sensitivity"][r_]]),
                                      het.threshold_curve(pt, m), match=match)[0]
                for m in range(M)]
        best_single.append(names[int(np.nanargmax(vals))])
    for est in (*SET_ESTIMANDS, "best_single_reliability", "gain_vs_best_single"):
        f = _rows(est, labels, size, point[est], boot[est], post[est], ci_prob)
        frames.append(f)
        det.append(pd.DataFrame({"search": search, "best_single": best_single,
                                 "n_agree": point["n_agree"],
                                 "p_positive": _prob_positive(post[est]) if "gain" in est
                                 else np.nan}, index=f.index))
    notes = [*notes, "greedy path: " + "; ".join(path), *_notes(pt, match, 0)]
    return CorroborationResult(
        pd.concat(frames), title=f"Recommended metric set (k <= {k}, E[S] >= {target:g})",
        info={"human": label, "pairs": f"{pt.n_pairs} ordered pairs ({pt.n_systems} systems, "
                                       f"{pt.n_items} items)", "metrics": M,
              "objective": "max E[R(X)] s.t. E[S(X)] >= target (Bayesian bootstrap)",
              "resamples": B, "greedy E[R]": best_r,
              "exhaustive E[R]": ex_r if exhaustive else "not searched"},
        details=pd.concat(det), extra={"curves": _curves(pt)}, notes=notes, ci_prob=ci_prob,
        classical_ci_kind=_cl_kind(opts.unit),
        posterior="Bayesian bootstrap (Dirichlet weights on systems and items)",
        random_seed=seed, data_hash=data_hash(np.r_[pt.dq, pt.dx.ravel()]))


# ----------------------------------------------------------------------------- plots
def plot_heterogeneity(result: CorroborationResult, *, y: str = "reliability",
                       ax: Any = None) -> Any:
    """Heterogeneity against reliability (paper 003, Figs. 2-3) or against the reliability
    gain (``y="gain"``, Figs. 5-6): one point per set at its posterior means (classical
    estimates without resampling) with its interval, coloured by size. Returns the Axes."""
    import matplotlib.pyplot as plt

    if y not in ("reliability", "gain"):
        raise ValueError(f"y must be 'reliability' or 'gain', got {y!r}.")
    tab = result.summary()
    col = "mean" if "mean" in tab.columns else "classical"
    lo, hi = ("hdi_low", "hdi_high") if col == "mean" else ("classical_low", "classical_high")
    h = tab.xs("heterogeneity", level="estimand")
    v = tab.xs(y, level="estimand")
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 4.5))
    sizes = v.index.get_level_values("size")
    cmap = plt.get_cmap("viridis")
    uniq = sorted(set(sizes))
    for j, k in enumerate(uniq):
        sel = np.asarray(sizes == k)
        yv = v[col].to_numpy()[sel]
        err = None
        if lo in v.columns:
            err = np.abs(np.vstack([yv - v[lo].to_numpy()[sel], v[hi].to_numpy()[sel] - yv]))
        ax.errorbar(h[col].to_numpy()[sel], yv, yerr=err, fmt="o", ms=3, lw=0.6,
                    color=cmap(j / max(1, len(uniq) - 1)), label=f"size {k}", alpha=0.8)
    if y == "gain":
        ax.axhline(0, color="grey", lw=0.8)
    ax.set_xlabel("heterogeneity H(X)")
    ax.set_ylabel("reliability R(X)" if y == "reliability" else "reliability gain")
    ax.legend(fontsize=7)
    return ax


def plot_threshold_curves(result: CorroborationResult, *, metrics: Sequence[str] | None = None,
                          ax: Any = None) -> Any:
    """The single metrics' :math:`R_{th}` against :math:`S_{th}` (one line per metric, the
    threshold falling from left to right), with the sets' (S, R) as points. Returns the
    Axes."""
    import matplotlib.pyplot as plt

    curves = result.extra["curves"]
    names = [str(m) for m in curves["metric"].values]
    pick = names if metrics is None else [str(m) for m in select.check_labels(
        np.array(names, dtype=object), list(metrics), "metric")]
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 4.5))
    for m in pick:
        c = curves.sel(metric=m)
        ax.plot(c["sensitivity"].values, c["reliability"].values, lw=0.8, label=m)
    tab = result.summary()
    col = "mean" if "mean" in tab.columns else "classical"
    r = tab.xs("reliability", level="estimand")[col]
    s = tab.xs("sensitivity", level="estimand")[col]
    ax.scatter(s.to_numpy(), r.to_numpy(), s=8, color="k", zorder=3, label="sets")
    ax.set_xlabel("sensitivity S")
    ax.set_ylabel("reliability R")
    if len(pick) <= 12:
        ax.legend(fontsize=7)
    return ax


__all__ = ["CorroborationResult", "corroboration", "plot_heterogeneity",
           "plot_threshold_curves", "recommend_metric_set"]
