r"""Reference-free vs reference-based metrics (paper 002, Sheng et al.): metric kinds and the
KS score between quality groups.

* :func:`metric_kinds`: the metric coordinates ``reference_based`` (bool) and ``inputs``
  (``"src"``, ``"ref"``, ``"src+ref"``, ``""``) inferred from paper 002's column suffixes
  (``_src_hypo``, ``_ref_hypo``, ``_src_ref_hypo``, optionally followed by ``_P``/``_R``/``_F``)
  and settable by the user. :func:`bayesmeta.datasets.nlgeval` and the readers already set
  them; this helper applies the same rule to any dataset.
* :func:`ks_score`: Eq. 4, the two-sample Kolmogorov-Smirnov statistic between a metric's
  scores in the low-, moderate- and high-quality groups of a human criterion (cut points of
  paper 002 Table 3 in :data:`KS_CUTS`), with a percentile-bootstrap interval, a
  Bayesian-bootstrap posterior, a permutation p-value and the posterior contrast of the
  reference-free and reference-based group means.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayesmeta.data import _columns as col
from bayesmeta.data import select
from bayesmeta.options import ResamplingOptions, resolve_seed
from bayesmeta.results import Result, data_hash
from bayesmeta.summaries import CI_PROB, check_ci_prob, equal_tailed, summarize, summary_rows

#: Paper 002 Table 3: (low <, high >=) cut points of the human score per dataset.
KS_CUTS: dict[str, tuple[float, ...]] = {
    "BAGEL": (3, 5), "Newsroom": (3, 4), "QAGS_CNN": (1,), "QAGS_XSUM": (1,), "SFHOT": (3, 5),
    "SFRES": (3, 5), "SummEval": (3, 4), "usr_persona_mean": (2,), "usr_topic_mean": (2,),
    "webnlg": (2, 3),
}
KIND_LABELS = {False: "reference-free", True: "reference-based"}


# ----------------------------------------------------------------------------- kinds
def metric_kinds(
    data: xr.Dataset,
    *,
    reference_based: Mapping[str, bool] | Sequence[str] | None = None,
    inputs: Mapping[str, str] | None = None,
) -> xr.Dataset:
    """Set the metric coordinates ``reference_based`` and ``inputs``.

    Inferred from the metric names with paper 002's suffixes (``_src_hypo`` -> ``"src"``,
    reference-free; ``_ref_hypo`` -> ``"ref"`` and ``_src_ref_hypo`` -> ``"src+ref"``,
    reference-based); a metric whose name says nothing keeps the coordinate it has (else
    ``inputs=""``; ``reference_based`` True when its scores vary along a ``reference`` dim
    of size > 1, else False). The user's values override both.

    Parameters
    ----------
    data : xarray.Dataset
        With a ``metric`` dim.
    reference_based : dict or list of str, optional
        ``{metric: bool}``, or the list of the reference-based metrics (all others become
        reference-free).
    inputs : dict, optional
        ``{metric: "src" | "ref" | "src+ref" | ""}``.

    Returns
    -------
    xarray.Dataset
        A copy with the two coordinates along ``metric``.

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> import bayesmeta as bm
    >>> ds = xr.Dataset({"score": (("metric", "item"), np.zeros((3, 2)))},
    ...                 coords={"metric": ["bleu_ref_hypo", "bartscore_src_hypo", "mine"]})
    >>> out = bm.metric_kinds(ds, reference_based={"mine": True})
    >>> out["reference_based"].values.tolist(), out["inputs"].values.tolist()
    ([True, False, True], ['ref', 'src', ''])
    >>> bm.metric_kinds(ds, reference_based=["mine"])["reference_based"].values.tolist()
    [False, False, True]
    """
    if not isinstance(data, xr.Dataset) or "metric" not in data.dims:
        raise ValueError("metric_kinds needs an xarray.Dataset with a 'metric' dim.")
    labels = [str(m) for m in data["metric"].values]
    old_rb = data["reference_based"].values if "reference_based" in data.coords else None
    old_in = data["inputs"].values if "inputs" in data.coords else None
    varies = {m: False for m in labels}
    if "score" in data and "reference" in data["score"].dims and data.sizes["reference"] > 1:
        n_ref = data["score"].notnull().any([d for d in data["score"].dims
                                              if d not in ("metric", "reference")])
        varies = dict(zip(labels, (n_ref.sum("reference") > 1).values.tolist(), strict=True))
    rb, inp = {}, {}
    for k, m in enumerate(labels):
        found = col.inputs_from_name(m)
        if found is not None:
            inp[m], rb[m] = found, "ref" in found
        else:
            inp[m] = str(old_in[k]) if old_in is not None else ""
            rb[m] = bool(old_rb[k]) if old_rb is not None else varies[m]
    if inputs is not None:
        unknown = [k for k in inputs if k not in inp]
        bad = {k: v for k, v in inputs.items() if v not in col.INPUTS}
        if unknown:
            raise ValueError(f"inputs names unknown metric(s) {unknown}.")
        if bad:
            raise ValueError(f"inputs must be one of {col.INPUTS}; got {bad!r}.")
        inp.update(inputs)
    if reference_based is not None:
        given = (dict(reference_based) if isinstance(reference_based, Mapping)
                 else {m: m in set(map(str, reference_based)) for m in labels})
        named = given if isinstance(reference_based, Mapping) else list(reference_based)
        unknown = [k for k in named if k not in rb]
        if unknown:
            raise ValueError(f"reference_based names unknown metric(s) {unknown}.")
        rb.update({k: bool(v) for k, v in given.items()})
    return data.assign_coords(
        reference_based=("metric", np.array([rb[m] for m in labels], dtype=bool)),
        inputs=("metric", np.array([inp[m] for m in labels], dtype=str)))


def kind_of(data: xr.Dataset, metrics: Sequence[str]) -> np.ndarray | None:
    """``reference_based`` of the metrics named (None when the data does not say)."""
    if "reference_based" not in data.coords:
        return None
    return np.asarray(data["reference_based"].sel(metric=list(metrics)).values, dtype=bool)


def kind_note(kinds: np.ndarray | None, analysis: str) -> str | None:
    """Why an analysis has no reference-free vs reference-based contrast (None when it
    has one: the ``reference_based`` coordinate is set and both kinds are selected)."""
    if kinds is None:
        return (f"No reference-free vs reference-based contrast for {analysis}: the data have "
                "no metric coordinate 'reference_based' (set it with bm.metric_kinds).")
    if kinds.all() or not kinds.any():
        return (f"No reference-free vs reference-based contrast for {analysis}: the metrics "
                f"selected are all {KIND_LABELS[bool(kinds.all())]}.")
    return None


def kind_contrast(
    post: np.ndarray | None,
    kinds: np.ndarray,
    *,
    prefix: str,
    index: Sequence[str],
    ci_prob: float,
    classical: np.ndarray | None = None,
    boot: np.ndarray | None = None,
    interval: str = "hdi",
    labels: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    r"""Rows ``<prefix>_group_mean`` (``set`` = reference-free / reference-based) and
    ``<prefix>_free_minus_based``: the mean of a per-metric quantity over the metrics of
    each kind, and the difference of the two means.

    .. math:: \bar\theta_{free} - \bar\theta_{based}, \qquad
              \bar\theta_{k} = \frac{1}{|k|} \sum_{m \in k} \theta_m

    Parameters
    ----------
    post : (R, M) array or None
        Draws of the quantity for every metric; the contrast is paired only when the draws
        of all metrics share their resampling weights (each analysis draws them so). None:
        no posterior columns (give ``classical``).
    kinds : (M,) bool array
        ``reference_based`` of each metric (both kinds present).
    prefix : str
        Estimand prefix (``"ks"``, ``"detection"``, ``"meta"``, ``"correlation"``, ...).
    index : list of str
        The table's index levels after ``estimand`` (must include ``set``).
    ci_prob : float
        Probability of the intervals.
    classical : (M,) array, optional
        Per-metric estimates: their group means fill ``classical``.
    boot : (R, M) array, optional
        Per-metric bootstrap draws (shared resamples): percentile ``classical_low/high``.
    interval : {"hdi", "equal_tailed"}
        Interval of the draws' summary (:func:`bayesmeta.summaries.summarize`).
    labels : dict, optional
        Fixed labels of other index levels (e.g. ``{"n": "all"}``).

    Returns
    -------
    pandas.DataFrame
        Three rows in the table shape (group means NaN-aware over metrics).
    """
    def means(d: np.ndarray) -> np.ndarray:
        with warnings.catch_warnings():  # a draw where a whole group is NaN stays NaN
            warnings.simplefilter("ignore", RuntimeWarning)
            free, based = np.nanmean(d[:, ~kinds], 1), np.nanmean(d[:, kinds], 1)
        return np.c_[free, based, free - based]

    sets = [KIND_LABELS[False], KIND_LABELS[True]]
    if post is None:
        if classical is None:
            raise ValueError("kind_contrast needs post= draws or classical= estimates.")
        rows = pd.DataFrame(index=pd.MultiIndex.from_arrays(
            [[f"{prefix}_group_mean"] * 2 + [f"{prefix}_free_minus_based"],
             *[[*sets, ""] if k == "set" else [""] * 3 for k in index]],
            names=["estimand", *index]))
    else:
        g = means(np.asarray(post, float))
        mean = xr.DataArray(g[:, :2], dims=("resample", "set"), coords={"set": sets})
        diff = xr.DataArray(g[:, 2], dims=("resample",))
        rows = pd.concat([
            summary_rows(summarize(mean, ci_prob=ci_prob, interval=interval),
                         estimand=f"{prefix}_group_mean", index=list(index)),
            summary_rows(summarize(diff, ci_prob=ci_prob, interval=interval),
                         estimand=f"{prefix}_free_minus_based", index=list(index))])
    if labels:
        rows.index = pd.MultiIndex.from_arrays(
            [np.full(len(rows), labels[k], dtype=object) if k in labels
             else rows.index.get_level_values(k) for k in rows.index.names],
            names=rows.index.names)
    front = {}
    if classical is not None:
        front["classical"] = means(np.asarray(classical, float)[None])[0]
    if boot is not None:
        iv = equal_tailed(means(np.asarray(boot, float)), ci_prob, axis=(0,))
        front["classical_low"], front["classical_high"] = iv[:, 0], iv[:, 1]
    for k, (c, v) in enumerate(front.items()):
        rows.insert(k, c, v)
    return rows


# ----------------------------------------------------------------------------- KS kernel
def ks_statistic(values: np.ndarray, in_a: np.ndarray, weights: np.ndarray | None = None
                 ) -> np.ndarray:
    r"""Two-sample KS statistic :math:`\sup_x |F_A(x) - F_B(x)|`, vectorised over rows.

    ``values`` ``(..., n)`` pools both groups; ``in_a`` (broadcast to it) marks group A;
    ``weights`` (optional, positive) weigh the outputs within their group (Bayesian
    bootstrap). Ties are handled exactly: the ECDFs are compared only at the end of each
    block of equal values, as ``scipy.stats.ks_2samp`` does.

    Examples
    --------
    >>> import numpy as np
    >>> from scipy import stats
    >>> x = np.array([0.1, 0.4, 0.4, 0.9, 0.3, 0.4, 0.8])
    >>> a = np.array([1, 1, 1, 1, 0, 0, 0], bool)
    >>> bool(float(ks_statistic(x, a)) == stats.ks_2samp(x[a], x[~a]).statistic)
    True
    """
    v, a = np.asarray(values, float), np.asarray(in_a, bool)
    w = np.ones(1) if weights is None else np.asarray(weights, float)
    shape = np.broadcast_shapes(v.shape, a.shape, w.shape)
    v, a, w = (np.broadcast_to(z, shape) for z in (v, a, w))
    order = np.argsort(v, axis=-1, kind="stable")
    vs = np.take_along_axis(v, order, -1)
    a_s = np.take_along_axis(a, order, -1)
    w_s = np.take_along_axis(w, order, -1)
    wa = np.where(a_s, w_s, 0.0)
    wb = np.where(a_s, 0.0, w_s)
    d = np.cumsum(wa / wa.sum(-1, keepdims=True) - wb / wb.sum(-1, keepdims=True), axis=-1)
    end = np.ones(shape, bool)
    end[..., :-1] = vs[..., :-1] != vs[..., 1:]
    return np.max(np.where(end, np.abs(d), 0.0), axis=-1)


def _groups(h: np.ndarray, cuts: Sequence[float]) -> tuple[np.ndarray, list[tuple[str, str]]]:
    lab = np.full(h.shape, "moderate", dtype=object)
    lab[h < cuts[0]] = "low"
    lab[h >= cuts[-1]] = "high"
    pairs = [("low", "high")] if len(cuts) == 1 else [
        ("low", "high"), ("low", "moderate"), ("high", "moderate")]
    return lab, pairs


def _resolve_cuts(cuts: Any, quantiles: Any, h: np.ndarray) -> tuple[tuple[float, ...], str]:
    if cuts is not None and quantiles is not None:
        raise ValueError("give cuts= or quantiles=, not both.")
    if isinstance(cuts, str):
        if cuts not in KS_CUTS:
            raise ValueError(f"cuts={cuts!r} is not a dataset of paper 002 Table 3; choose "
                             f"one of {sorted(KS_CUTS)} or give the cut points.")
        return tuple(float(c) for c in KS_CUTS[cuts]), f"paper 002 Table 3 ({cuts})"
    if cuts is None:
        q = (1 / 3, 2 / 3) if quantiles is None else tuple(np.atleast_1d(quantiles))
        if not all(0 < p < 1 for p in q):
            raise ValueError(f"quantiles must lie in (0, 1), got {q}.")
        cuts = tuple(float(c) for c in np.quantile(h, q))
        return cuts, f"human-score quantiles {tuple(round(float(p), 3) for p in q)}"
    c = tuple(float(v) for v in np.atleast_1d(cuts))
    if not 1 <= len(c) <= 2 or (len(c) == 2 and c[0] > c[1]):
        raise ValueError(f"cuts must be one cut point or two increasing ones (low < c1, high "
                         f">= c2), got {cuts!r}.")
    return c, "given"


def ks_score(
    data: xr.Dataset,
    trait: str | None = None,
    *,
    cuts: Sequence[float] | float | str | None = None,
    quantiles: Sequence[float] | None = None,
    metrics: Sequence[str] | None = None,
    human: xr.DataArray | None = None,
    run: Any = None,
    reference: Any = "first",
    ci_prob: float = CI_PROB,
    resampling: ResamplingOptions | Mapping[str, Any] | None = None,
    random_seed: int | None = None,
) -> Result:
    r"""KS score between a metric's scores in quality groups of a human criterion (paper 002,
    Eq. 4, Table 3, Fig. 2, Table 10).

    .. math:: KS_M = \sup_x |F_A(x) - F_B(x)|

    with :math:`F_A, F_B` the empirical CDFs of the metric's scores on the outputs whose
    human score is low (``h < c_1``) and high (``h >= c_2``); with two cut points also
    low vs moderate (``c_1 <= h < c_2``) and high vs moderate, as the repository does.

    Parameters
    ----------
    data : xarray.Dataset
        Metric scores and a human score (see :func:`bayesmeta.data.select.human_score`).
    trait : str
        The human criterion (e.g. ``"naturalness"``); or give ``human=``.
    cuts : float, pair of floats or str, optional
        Cut points ``(c_1, c_2)`` (or one cut ``c``: low ``< c``, high ``>= c``), or a
        dataset name of paper 002 Table 3 (:data:`KS_CUTS`, e.g. ``"SFHOT"``: ``(3, 5)``).
        Default: the terciles of the human score (``quantiles=(1/3, 2/3)``).
    quantiles : sequence of float, optional
        Cut points as quantiles of the human score.
    metrics, human, run, reference
        Selection (:mod:`bayesmeta.data.select`); list-valued scores are reduced to one
        number per output by ``reference`` (default the first reference, as the
        repository's correlations).
    ci_prob : float
        Probability of both intervals.
    resampling : ResamplingOptions or dict, optional
        ``n_resamples`` (bootstrap and Bayesian-bootstrap draws; 0: point estimates only),
        ``n_permutations`` (0: no p-value), ``pvalue`` (``"plus-one"`` or ``"raw"``).
    random_seed : int, optional
        Drawn and recorded when omitted.

    Returns
    -------
    Result
        Estimand ``ks`` (index ``metric, group, group2``): classical KS with a percentile
        bootstrap interval (outputs resampled within each quality group), Bayesian
        bootstrap posterior (Dirichlet weights within each group). With the
        ``reference_based`` coordinate: ``ks_group_mean`` (``set`` = reference-free /
        reference-based) and ``ks_free_minus_based``, from the same Bayesian-bootstrap
        weights for every metric. ``details()``: group sizes and the permutation p-value.

    Notes
    -----
    Scores are always numbers. Paper 002's repository (``aspect_level_analysis.py``) passed
    the reference-based columns to ``scipy.stats.ks_2samp`` as the *strings* in which they
    are stored (``"[0.51, 0.66]"``), so its Table 10 entries for those metrics are the KS of
    the alphabetical order of the strings, not of the scores; this function's numbers differ
    there for about half of the entries (e.g. 23 of 45 on SFHOT informativeness; where
    they agree, the alphabetical order of the strings happens to follow the first
    reference's score). ``tests/test_reference_free.py`` shows both. For reference-free
    metrics it reproduces the repository to 1e-14. The bootstrap distribution of a KS statistic is
    biased upward (it is at least the distance between the two resampled ECDFs), so read
    small KS values with their interval. Bayesian bootstrap: Rubin (1981).

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> import bayesmeta as bm
    >>> rng = np.random.default_rng(0)
    >>> h = rng.uniform(1, 6, size=(1, 200))
    >>> s = h[None] + rng.normal(size=(2, 1, 200)) * [[[1.0]], [[5.0]]]
    >>> ds = xr.Dataset({"judgment": (("system", "item", "trait"), h[..., None]),
    ...                  "score": (("metric", "system", "item"), s)},
    ...                 coords={"metric": ["good_src_hypo", "noisy_ref_hypo"],
    ...                         "trait": ["quality"]})
    >>> res = bm.ks_score(ds, "quality", cuts="SFHOT", random_seed=1,
    ...                   resampling={"n_resamples": 200, "n_permutations": 200})
    >>> tab = res.summary().xs("ks", level="estimand")
    >>> bool(tab.loc[("good_src_hypo", "low", "high", ""), "classical"] > 0.5)
    True

    R equivalent: ``ks.test(x[h < 3], x[h >= 5])$statistic``.
    """
    ci_prob = check_ci_prob(ci_prob)
    opts = ResamplingOptions.coerce(resampling)
    seed = resolve_seed(random_seed)
    rng = np.random.default_rng(seed)
    x, h, labels, hlabel = select.output_scores(data, trait, metrics=metrics, run=run,
                                                reference=reference, human=human)
    cut, cut_source = _resolve_cuts(cuts, quantiles, h)
    grp, pairs = _groups(h, cut)
    R, P = opts.n_resamples, opts.n_permutations
    bb_w = rng.exponential(size=(R, h.size)) if R else None  # shared by all metrics
    rows, post, det = [], {}, []
    for ga, gb in pairs:
        in_pair = (grp == ga) | (grp == gb)
        for g in (ga, gb):
            if (grp == g).sum() < 2:
                raise ValueError(f"quality group {g!r} of {hlabel!r} has "
                                 f"{int((grp == g).sum())} output(s) with cuts {cut}; "
                                 "give other cuts= or quantiles=.")
        for m, xm in zip(labels, x, strict=True):
            ok = in_pair & np.isfinite(xm)
            v, a = xm[ok], grp[ok] == ga
            na, nb = int(a.sum()), int((~a).sum())
            if min(na, nb) < 1:
                raise ValueError(f"metric {m!r} has no score in quality group "
                                 f"{ga if na == 0 else gb!r}.")
            ks = float(ks_statistic(v, a))
            lo = hi = np.nan
            if R:
                ia = np.flatnonzero(a)[rng.integers(0, na, (R, na))]
                ib = np.flatnonzero(~a)[rng.integers(0, nb, (R, nb))]
                boot = ks_statistic(v[np.concatenate([ia, ib], 1)],
                                    np.r_[np.ones(na, bool), np.zeros(nb, bool)])
                lo, hi = equal_tailed(boot[:, None], ci_prob, axis=(0,))[0]
                post[(m, ga, gb)] = ks_statistic(v, a, bb_w[:, ok])
            p = np.nan
            if P:
                perm = rng.permuted(np.tile(np.arange(v.size), (P, 1)), axis=1)
                null = ks_statistic(v[perm], a)
                b = int((null >= ks - 1e-12).sum())
                p = (b + 1) / (P + 1) if opts.pvalue == "plus-one" else b / P
            rows.append(("ks", m, ga, gb, "", ks, lo, hi))
            det.append({"n_group": na, "n_group2": nb, "p_value": p, "cut": str(cut)})
    idx = ["metric", "group", "group2", "set"]
    table = pd.DataFrame(rows, columns=["estimand", *idx, "classical", "classical_low",
                                        "classical_high"]).set_index(["estimand", *idx])
    details = pd.DataFrame(det, index=table.index)
    if not R:
        table = table[["classical"]]
    notes = [f"Groups of {hlabel}: low < {cut[0]:g}" + (
        f", moderate [{cut[0]:g}, {cut[1]:g}), high >= {cut[1]:g}" if len(cut) == 2
        else f", high >= {cut[0]:g}") + f" ({cut_source}).",
        "Scores are numbers (list cells reduced by reference=); paper 002's repository took "
        "the KS of the list strings for reference-based metrics."]
    if R:
        draws = xr.DataArray(np.stack([post[k] for k in post], 1), dims=("resample", "row"))
        s = summarize(draws, ci_prob=ci_prob)
        table[["mean", "sd"]] = np.c_[s["mean"].values, s["sd"].values]
        table[["hdi_low", "hdi_high"]] = s["interval"].values
    kinds = kind_of(data, labels)
    why_not = kind_note(kinds, "ks_score")
    if R and why_not is None:
        table = pd.concat([table, _kind_contrast(post, labels, kinds, pairs, ci_prob)])
    if why_not is not None:
        notes.append(why_not)
    elif not R:
        notes.append("No reference-free vs reference-based contrast for ks_score: it needs "
                     "the Bayesian-bootstrap draws (n_resamples > 0).")
    return Result(
        table, title=f"KS score between quality groups of {hlabel} (paper 002, Eq. 4)",
        info={"outputs": int(h.size), "metrics": len(labels), "cuts": str(cut),
              "resamples": R, "permutations": P},
        details=details, notes=notes, ci_prob=ci_prob, random_seed=seed,
        classical_ci_kind="percentile bootstrap (within quality groups)" if R else None,
        posterior="Bayesian bootstrap", data_hash=data_hash(np.c_[x.T, h]),
    )


def _kind_contrast(post: dict, labels: list[str], kinds: np.ndarray,
                   pairs: list[tuple[str, str]], ci_prob: float) -> pd.DataFrame:
    """Group means of the KS draws by metric kind and their difference (free - based)."""
    return pd.concat([kind_contrast(np.stack([post[(m, ga, gb)] for m in labels], 1), kinds,
                                    prefix="ks", index=["metric", "group", "group2", "set"],
                                    ci_prob=ci_prob, labels={"group": ga, "group2": gb})
                      for ga, gb in pairs])


__all__ = ["KS_CUTS", "kind_contrast", "kind_note", "ks_score", "ks_statistic", "metric_kinds"]
