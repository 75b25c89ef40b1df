"""Which metrics should be required to agree? A recommender built on paper 003's
statistics (beyond the paper): the set of at most k metrics with the highest posterior
expected reliability at a required sensitivity, by greedy forward selection and, for small
k, exhaustive search. See :mod:`bayesmeta.corroboration.classical`."""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayesmeta.corroboration import heterogeneity as het
from bayesmeta.corroboration.classical import (
    SET_ESTIMANDS,
    CorroborationResult,
    _cl_kind,
    _curves,
    _notes,
    _options,
    _pairs,
    _point,
    _prob_positive,
    _rows,
    _set_draws,
    _weights,
)
from bayesmeta.options import ResamplingOptions, resolve_seed
from bayesmeta.results import data_hash
from bayesmeta.summaries import CI_PROB, check_ci_prob


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
    directions: Mapping[str, str] | None = None,
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
    directions : dict, optional
        ``{metric: "higher" | "lower"}`` (default all "higher"): lower-is-better metrics
        are read with their sign flipped, as in :func:`corroboration`; recorded in
        ``info["directions"]``.
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
                              run=run, reference=reference, ties=ties, directions=directions)
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
              "directions": het.describe_directions(pt.directions, pt.metrics),
              "objective": "max E[R(X)] s.t. E[S(X)] >= target (Bayesian bootstrap)",
              "resamples": B, "greedy E[R]": best_r,
              "exhaustive E[R]": ex_r if exhaustive else "not searched"},
        details=pd.concat(det), extra={"curves": _curves(pt)}, notes=notes, ci_prob=ci_prob,
        classical_ci_kind=_cl_kind(opts.unit),
        posterior="Bayesian bootstrap (Dirichlet weights on systems and items)",
        random_seed=seed, data_hash=data_hash(np.r_[pt.dq, pt.dx.ravel()]))


__all__ = ["recommend_metric_set"]
