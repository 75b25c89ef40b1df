r"""Corroboration with heterogeneous metrics (paper 003, Amigó et al.): the public functions.

* :func:`corroboration`: reliability :math:`R(X)`, sensitivity :math:`S(X)`,
  heterogeneity :math:`H(X)` and reliability gain of metric sets (given, or random sets of
  several sizes), the additive-reliability check, the share of sets with a positive gain and
  the correlation of heterogeneity and reliability across sets; classical estimates with a
  cluster-bootstrap interval next to Bayesian-bootstrap posteriors.
* :func:`~bayesmeta.corroboration.recommend.recommend_metric_set`: the small set of metrics
  whose agreement is most reliable at a required sensitivity (beyond the paper).

The definitions and the computing layer are in :mod:`bayesmeta.corroboration.heterogeneity`.

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
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayesmeta.corroboration import heterogeneity as het
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

    def curves(self) -> pd.DataFrame:
        """The single metrics' threshold curves as a long table: index ``(metric, level)``
        (level 0 = the largest threshold), columns ``threshold``, ``reliability``
        (:math:`R_{th}`) and ``sensitivity`` (:math:`S_{th}`), classical estimates."""
        frame = self.extra["curves"].to_dataframe()[["threshold", "reliability",
                                                      "sensitivity"]]
        return frame.dropna(subset=["threshold"])

    def plot(self, ax: Any = None, kind: str = "reliability") -> Any:
        """``kind="reliability"`` (paper 003, Figs. 2-3), ``"gain"`` (Figs. 5-6) or
        ``"curves"`` (the :math:`R_{th}/S_{th}` curves). Returns the Figure."""
        from bayesmeta.corroboration.plots import plot_heterogeneity, plot_threshold_curves

        if kind == "curves":
            return plot_threshold_curves(self, ax=ax).figure
        return plot_heterogeneity(self, y=kind, ax=ax).figure


# ----------------------------------------------------------------------------- inputs
def _pairs(data: xr.Dataset, trait: str | None, *, metrics: Sequence[str] | None,
           human: xr.DataArray | None, raters: Any, run: Any, reference: Any, ties: str,
           directions: Mapping[str, str] | None = None
           ) -> tuple[het.PairTable, str, list[str]]:
    labels = select.check_metrics(data, metrics)
    if len(labels) < 1:
        raise ValueError("metrics: no metric selected.")
    # names are checked against all the data's metrics, so one dict can serve any subset
    dirs = het.check_directions(directions, select.check_metrics(data, None))
    if "higher_is_better" in data.coords:  # metric_scores negates these already: one flip
        twice = [m for m in labels if dirs[m] == "lower"
                 and not bool(data["higher_is_better"].sel(metric=m))]
        if twice:
            raise ValueError(f"metric(s) {twice} are declared lower-is-better in the data "
                             f"(coordinate 'higher_is_better', so their scores arrive "
                             f"negated) and again in directions=; declare them once.")
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
    pt = het.build_pairs(xv, qv, metrics=labels, ties=ties,
                         directions={m: dirs[m] for m in labels})
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


def _weight_chunks(pt: het.PairTable, a: np.ndarray | None, b: np.ndarray | None, B: int
                   ) -> Iterator[tuple[slice, np.ndarray]]:
    """The B draws' pair weights in chunks that bound memory: (draws slice, weights
    (pair, draw))."""
    step = max(1, het._CHUNK_BYTES // (8 * pt.n_pairs * 2))
    for c in range(0, B, step):
        sl = slice(c, min(B, c + step))
        W = het.pair_weights(pt, None if a is None else a[sl], None if b is None else b[sl])
        if W.shape[1] != sl.stop - sl.start:
            W = np.repeat(W, sl.stop - sl.start, axis=1)
        yield sl, W


def _set_draws(pt: het.PairTable, idx: np.ndarray, a: np.ndarray | None,
               b: np.ndarray | None, B: int, *, match: str, against_all: bool = False
               ) -> dict[str, np.ndarray]:
    """Statistics of every set for B weight draws: arrays (draw, set)."""
    names = [*SET_ESTIMANDS, *(("best_single_reliability", "gain_vs_best_single")
                                if against_all else ())]
    out = {n: np.empty((B, idx.shape[0])) for n in names}
    for sl, W in _weight_chunks(pt, a, b, B):
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


def _additive_draws(pt: het.PairTable, idx: np.ndarray, a: np.ndarray | None,
                    b: np.ndarray | None, B: int) -> np.ndarray:
    """The additive-reliability share of the sets ``idx`` for B weight draws: (draw,)."""
    n_h, n_c = np.zeros(B), np.zeros(B)
    for sl, W in _weight_chunks(pt, a, b, B):
        n_h[sl], n_c[sl] = het.additive_weighted(pt, idx, W)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n_c > 0, n_h / n_c, np.nan)


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
    directions: Mapping[str, str] | None = None,
    additive_intervals: bool = True,
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
        How :math:`R_{th}` is read at :math:`S(X)` (:mod:`~bayesmeta.corroboration.heterogeneity`).
    directions : dict, optional
        ``{metric: "higher" | "lower"}``, as in :func:`bayesmeta.metric_unit_tests`
        (default: every metric higher-is-better). A "lower" metric (TER, perplexity, an
        error rate) has its pair differences negated once, when the pairs are built, so
        :math:`x(s) \ge x(s')` reads "s is at least as good" for it too; its threshold curve
        (``curves()``) is over the negated differences. Names may be any of the data's
        metrics (not only those selected); unknown names or other values raise, naming
        them. Recorded in ``info["directions"]``.
    additive_intervals : bool
        Give ``additive_share`` a cluster-bootstrap interval and a Bayesian-bootstrap
        posterior, recomputing it on the same resampling weights as the set statistics
        (default). It costs about as much again as the set statistics' resampling (every
        set is paired with every metric outside it); ``False`` leaves it a plain estimate.
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
        :math:`R(X \cup \{x\}) \ge R(X)`, recomputed per resample with the sets held
        fixed; size 1 is paper 003's Fig. 1).
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
                              run=run, reference=reference, ties=ties, directions=directions)
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
    w_boot = w_post = None
    if B > 0:
        w_boot = _weights(rng, B, pt.n_systems, pt.n_items, "cluster", opts.unit)
        boot = _set_draws(pt, idx, *w_boot, B, match=match)
        w_post = _weights(rng, B, pt.n_systems, pt.n_items, "bayesian")
        post = _set_draws(pt, idx, *w_post, B, match=match)
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
        idx_x = het.as_index_sets(X, M)
        holds, _ = het.additive_cases(pt, idx_x)
        n = int((~np.isnan(holds)).sum())
        share = np.array([np.nanmean(holds) if n else np.nan])
        draws = {}
        if B > 0 and additive_intervals:
            # the same resampling weights as the set statistics
            for key, w in (("boot", w_boot), ("post", w_post)):
                draws[key] = _additive_draws(pt, idx_x, *w, B)[:, None]
        f = _rows("additive_share", [""], [k], share, draws.get("boot"), draws.get("post"),
                  ci_prob)
        frames.append(f)
        det.append(pd.DataFrame({"n_sets": [len(X)], "n_cases": [n]}, index=f.index))
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
    notes += _notes(pt, match, B if additive_intervals else 0)
    info = {"human": label, "pairs": f"{pt.n_pairs} ordered pairs ({pt.n_systems} systems, "
                                      f"{pt.n_items} items)",
            "metrics": M, "sets": f"{len(chosen)} ("
            + ", ".join(f"size {k}: {size.count(k)}" for k in sorted(set(size))) + ")",
            "ties": "paper (>=)" if ties == "paper" else "strict (>)",
            "directions": het.describe_directions(pt.directions, pt.metrics),
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
        out.append("additive_share: the share of (set, metric) cases with R(X u {x}) >= R(X) "
                   "recomputed on each resample's weighted pairs (the sets fixed; weighted "
                   "differences within 1e-12 of 0 count as holding).")
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


__all__ = ["CorroborationResult", "corroboration"]
