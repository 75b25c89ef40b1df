"""The one data-selection layer: a validated dataset in, the arrays an estimator needs out.

Every analysis gets its inputs here, so that every one of them selects, reduces and aligns
data the same way and fails the same way:

* :func:`metric_scores`: ``score`` as ``(metric, system, item)`` for one run
  (:func:`pick_run`, labels only) and one score per output (:func:`pick_reference`).
* :func:`human_score`: the human score of a trait as ``(system, item)``: the mean over raters
  of ordinal ``rating`` s (or over the raters named), or the continuous ``judgment``, or a
  user-given DataArray aligned to the data by :func:`align`.
* :func:`quantities`: metrics, rater x trait ratings and judgments stacked as
  ``(variable, system, item)``, for the reliability and MTMM tables.
* :func:`ordinal_ratings` / :func:`ratings_wide`: the ordinal ratings for the analyses that
  need raters and categories (CFA, the rater model, agreement), which refuse continuous
  judgments with the reason.

Labels are compared after :func:`normalize_labels` (strings, surrounding whitespace
stripped, ``3.0`` -> ``"3"``), so an integer item label and its string meet; inputs that do
not overlap on a dim raise a ``ValueError`` naming the dim and showing labels from each side.
"""

from __future__ import annotations

import difflib
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayesmeta.data.schema import MissingDataWarning, _fmt, owned_traits, validate
from bayesmeta.data.transform import rank_normalize

REFERENCE_REDUCTIONS = ("first", "mean", "max", "min")


# ----------------------------------------------------------------------------- labels
def _norm(v: Any) -> str:
    if isinstance(v, bytes):
        v = v.decode()
    if isinstance(v, float | np.floating) and np.isfinite(v) and float(v).is_integer():
        v = int(v)
    return str(v).strip()


def normalize_labels(values: Any) -> np.ndarray:
    """Labels as stripped strings, integral floats written as integers.

    Examples
    --------
    >>> from bayesmeta.data.select import normalize_labels
    >>> normalize_labels([1, 2.0, " M3 "]).tolist()
    ['1', '2', 'M3']
    """
    return np.array([_norm(v) for v in np.asarray(values, dtype=object).ravel()], dtype=object)


def _pick_label(labels: Any, wanted: Any, dim: str) -> Any:
    """The label of ``labels`` equal to ``wanted`` after normalisation (error names dim)."""
    norm = list(normalize_labels(labels))
    key = _norm(wanted)
    if key not in norm:
        close = difflib.get_close_matches(key, norm, n=3)
        hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
        raise ValueError(f"{wanted!r} is not a label of dim {dim!r} ({_fmt(norm, 8)}).{hint}")
    return np.asarray(labels)[norm.index(key)]


def check_labels(labels: Any, wanted: Sequence[Any], dim: str) -> list[Any]:
    """The labels of ``labels`` matching each of ``wanted`` (normalised); an unknown one
    raises a ``ValueError`` that names the dim and suggests close labels."""
    if isinstance(wanted, str):
        wanted = [wanted]
    return [_pick_label(labels, w, dim) for w in wanted]


def align(
    da: xr.DataArray,
    ds: xr.Dataset,
    dims: Sequence[str] = ("system", "item"),
    *,
    what: str = "human score",
) -> xr.DataArray:
    """Reindex ``da`` onto the labels of ``ds`` along ``dims``, after normalising labels.

    Raises ``ValueError`` when ``da`` and ``ds`` share no label on a dim (naming the dim and
    showing labels of each side). When they overlap partly, the labels of ``ds`` that ``da``
    lacks become NaN and a :class:`MissingDataWarning` counts them; labels of ``da`` that
    ``ds`` lacks are left out and counted in the same warning.
    """
    if not isinstance(da, xr.DataArray):
        raise TypeError(f"{what} must be an xarray.DataArray with dims {tuple(dims)}, got "
                        f"{type(da).__name__}.")
    if set(da.dims) != set(dims):
        raise ValueError(f"{what} must have dims {tuple(dims)}, got {tuple(da.dims)}.")
    out = da.transpose(*dims)
    notes = []
    for dim in dims:
        theirs = normalize_labels(out[dim].values) if dim in out.coords else None
        ours = normalize_labels(ds[dim].values)
        if theirs is None:
            if out.sizes[dim] != len(ours):
                raise ValueError(f"{what} has {out.sizes[dim]} unlabelled {dim}s, the data "
                                 f"{len(ours)}; label dim {dim!r}.")
            theirs = ours
        if pd.Index(theirs).has_duplicates:
            dup = pd.Index(theirs)[pd.Index(theirs).duplicated()].unique()
            raise ValueError(f"{what} has duplicate {dim!r} labels after normalisation: "
                             f"{_fmt(dup)}.")
        shared = np.intersect1d(theirs, ours)
        if shared.size == 0:
            raise ValueError(
                f"{what} and data share no label on dim {dim!r}: {what} has "
                f"{_fmt(theirs)}; data has {_fmt(ours)}."
            )
        lacking = [x for x in ours if x not in set(theirs)]
        unused = [x for x in theirs if x not in set(ours)]
        if lacking:
            notes.append(f"{len(lacking)} of {len(ours)} {dim}s of the data are missing "
                         f"from the {what} ({_fmt(lacking)})")
        if unused:
            notes.append(f"{len(unused)} {dim}s of the {what} are not in the data and are "
                         f"left out ({_fmt(unused)})")
        out = out.assign_coords({dim: theirs})
    out = out.reindex({d: normalize_labels(ds[d].values) for d in dims})
    out = out.assign_coords({d: ds[d].values for d in dims})
    if notes:
        warnings.warn(f"{what}: " + "; ".join(notes) + ".", MissingDataWarning, stacklevel=3)
    return out


# ----------------------------------------------------------------------------- scores
def pick_run(score: xr.DataArray, run: Any = None) -> xr.DataArray:
    """One run of ``score`` by its label, the first run (``run=None``), or the mean over
    runs (``run="mean"``). Runs are chosen by label only: ``run=1`` is the run labelled
    ``"1"``, never a position."""
    if run is None:
        return score.isel(run=0)
    if isinstance(run, str) and run == "mean":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return score.mean("run", skipna=True)
    return score.sel(run=_pick_label(score["run"].values, run, "run"))


def pick_reference(score: xr.DataArray, reference: Any = "first") -> xr.DataArray:
    """One score per output from a score with a ``reference`` dim.

    ``"first"``: the score against the first reference (what most published code does);
    ``"mean"`` / ``"max"`` / ``"min"``: over the references the output has (NaN padding
    ignored); a label of dim ``reference``: that reference. Without a ``reference`` dim the
    score is returned unchanged.
    """
    if "reference" not in score.dims:
        return score
    if isinstance(reference, str) and reference in REFERENCE_REDUCTIONS:
        if reference == "first":
            return score.isel(reference=0, drop=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return getattr(score, reference)("reference", skipna=True)
    if reference is None:
        raise ValueError("reference=None: choose 'first', 'mean', 'max', 'min' or a label of "
                         "dim 'reference' to get one score per output.")
    label = _pick_label(score["reference"].values, reference, "reference")
    return score.sel(reference=label, drop=True)


def check_metrics(ds: xr.Dataset, metrics: Sequence[str] | None) -> list[str]:
    """The metric labels selected (all by default); unknown names raise, naming them."""
    if "score" not in ds:
        raise ValueError("data has no 'score' variable, so there are no metrics to select.")
    labels = [str(m) for m in ds["metric"].values]
    if metrics is None:
        return labels
    if isinstance(metrics, str):
        metrics = [metrics]
    picked = [str(x) for x in check_labels(ds["metric"].values, list(metrics), "metric")]
    if len(set(picked)) != len(picked):
        raise ValueError(f"metrics lists a metric twice: {_fmt(metrics)}.")
    return picked


def metric_scores(
    ds: xr.Dataset,
    metrics: Sequence[str] | None = None,
    *,
    run: Any = None,
    reference: Any = "first",
) -> xr.DataArray:
    """Metric scores as ``(metric, system, item)`` for one run and one score per output
    (lazy when the dataset is dask-backed), oriented higher-is-better.

    A metric whose coordinate ``higher_is_better`` is False (declared at reading with
    ``lower_is_better=`` / ``directions=``, CLI ``--lower-is-better``; see
    :func:`bayesmeta.data.io.orient`) is negated here, the one place that hands metric
    scores to analyses; the returned array's ``attrs["orientation"]`` names the metrics
    negated, and its ``higher_is_better`` coordinate is then True for all.
    """
    labels = check_metrics(ds, metrics)
    one_language_pair(ds)
    score = pick_reference(pick_run(ds["score"], run), reference)
    if metrics is not None:
        score = score.sel(metric=labels)
    return orient_scores(score.transpose("metric", "system", "item"))


def orient_scores(score: xr.DataArray) -> xr.DataArray:
    """Metric scores (any dims with ``metric``) oriented higher-is-better: the metrics whose
    coordinate ``higher_is_better`` is False are negated (``attrs["orientation"]`` names
    them; the coordinate is then True for all). Unchanged without such a metric. The one
    orientation step, used by :func:`metric_scores` and by the analyses that read
    ``score`` with extra dims (reference choice, perturbations)."""
    if "higher_is_better" not in score.coords or bool(score["higher_is_better"].all()):
        return score
    hib = score["higher_is_better"].astype(bool)
    lower = [str(m) for m, h in zip(score["metric"].values, hib.values, strict=True) if not h]
    out = xr.where(hib, score, -score, keep_attrs=True).transpose(*score.dims)
    out = out.assign_coords(higher_is_better=("metric", np.ones(len(hib), bool)))
    out.attrs["orientation"] = ("lower is better, negated so that higher is better: "
                                + ", ".join(lower))
    return out


def one_language_pair(ds: xr.Dataset) -> None:
    """Refuse a campaign of several language pairs (dim ``lp``) where an analysis reads
    one, saying how to take one."""
    if "lp" in ds.dims:
        raise ValueError(
            f"data spans {ds.sizes['lp']} language pairs (dim 'lp': "
            f"{_fmt(ds['lp'].values) if 'lp' in ds.coords else '?'}); this analysis reads "
            f"one: take it from bm.split_language_pairs(data) (bm.wmt_ranking reads them "
            f"all).")


# ----------------------------------------------------------------------------- humans
def human_traits(ds: xr.Dataset) -> dict[str, str]:
    """Each trait with human scores and their kind: ``"rating"`` (ordinal, by rater) or
    ``"judgment"`` (continuous)."""
    out = {t: "rating" for t in owned_traits(ds, "rating")}
    out.update({t: "judgment" for t in owned_traits(ds, "judgment")})
    return out


@dataclass(frozen=True)
class HumanScore:
    """A human score per output.

    Attributes
    ----------
    values : xarray.DataArray
        dims ``(system, item)``, NaN for missing.
    trait : str
        The trait (or the given DataArray's name).
    label : str
        How it was formed, for headers: ``"COH (mean of 3 raters)"``, ``"fact (judgment)"``.
    source : str
        ``"rating mean"``, ``"rating"`` (one rater), ``"judgment"`` or ``"given"``.
    """

    values: xr.DataArray
    trait: str
    label: str
    source: str


def _rater_labels(ds: xr.Dataset, raters: Any) -> list[Any]:
    if raters is None:
        return list(ds["rater"].values)
    return check_labels(ds["rater"].values, [raters] if isinstance(raters, str) else raters,
                        "rater")


def human_score(
    ds: xr.Dataset,
    trait: str | None = None,
    *,
    raters: str | Sequence[str] | None = None,
    human: xr.DataArray | None = None,
) -> HumanScore:
    """The human score of a trait: the mean over raters (or the raters named) of the
    ordinal ratings, or the continuous judgment, or ``human`` aligned to the data."""
    one_language_pair(ds)
    if human is not None:
        if trait is not None:
            raise ValueError("give trait= or human=, not both.")
        values = align(human, ds, ("system", "item"), what="human score")
        name = str(human.name or "human")
        return HumanScore(values.astype(float), name, name, "given")
    if trait is None:
        kinds = human_traits(ds)
        if not kinds:
            raise ValueError("data has no human scores ('rating' or 'judgment'); give "
                             "human= (a (system, item) DataArray).")
        raise ValueError(f"give trait=, one of {_fmt(list(kinds), 12)}, or human=.")
    kinds = human_traits(ds)
    if not kinds:
        raise ValueError("data has no human scores ('rating' or 'judgment'); give human= "
                         "(a (system, item) DataArray).")
    label = _pick_label(list(kinds), trait, "trait")
    kind = kinds[str(label)]
    tlabel = _pick_label(ds["trait"].values, label, "trait")
    if kind == "judgment":
        if raters is not None:
            raise ValueError(f"trait {label!r} is a continuous judgment (variable 'judgment', "
                             f"e.g. an average over annotators): it has no raters to select.")
        values = ds["judgment"].sel(trait=tlabel, drop=True)
        return HumanScore(values.transpose("system", "item"), str(label),
                          f"{label} (judgment)", "judgment")
    picked = _rater_labels(ds, raters)
    rating = ds["rating"].sel(trait=tlabel, rater=picked, drop=True)
    if len(picked) == 1 and raters is not None:
        return HumanScore(rating.isel(rater=0, drop=True).transpose("system", "item"),
                          str(label), f"{picked[0]}.{label}", "rating")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        values = rating.mean("rater", skipna=True)
    return HumanScore(values.transpose("system", "item"), str(label),
                      f"{label} (mean of {len(picked)} raters)", "rating mean")


# ----------------------------------------------------------------------------- stacks
def rating_label(rater: object, trait: object) -> str:
    """The variable label of one rater's ratings of one trait: ``"<rater>.<trait>"``."""
    return f"{rater}.{trait}"


def _rating_variables(ds: xr.Dataset, raters: Any) -> list[tuple[Any, Any]]:
    """(rater, trait) pairs selected by ``raters``: None/True all, False/[] none, a list of
    raters (all their traits) and/or ``"<rater>.<trait>"`` labels."""
    if "rating" not in ds or raters is False:
        return []
    traits = owned_traits(ds, "rating")
    tl = {t: _pick_label(ds["trait"].values, t, "trait") for t in traits}
    pairs = [(r, tl[t]) for r in ds["rater"].values for t in traits]
    if raters is None or raters is True:
        return pairs
    wanted = [raters] if isinstance(raters, str) else list(raters)
    by_label = {rating_label(r, t): (r, t) for r, t in pairs}
    rater_names = {_norm(r): r for r in ds["rater"].values}
    out: list[tuple[Any, Any]] = []
    for w in wanted:
        key = _norm(w)
        if key in by_label:
            new = [by_label[key]]
        elif key in rater_names:
            new = [(rater_names[key], tl[t]) for t in traits]
        else:
            close = difflib.get_close_matches(key, [*by_label, *rater_names], n=3)
            hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
            raise ValueError(f"raters: {w!r} is neither a rater nor a '<rater>.<trait>' label "
                             f"(raters: {_fmt(list(rater_names))}).{hint}")
        out += [p for p in new if p not in out]
    return out


def quantities(
    ds: xr.Dataset,
    *,
    metrics: Sequence[str] | None = None,
    raters: Any = None,
    judgments: bool | Sequence[str] = True,
    run: Any = None,
    reference: Any = "first",
    normalize: bool = False,
) -> xr.DataArray:
    """Metrics, rater x trait ratings and judgments stacked as ``(variable, system, item)``
    with a coordinate ``kind`` (``"metric"``, ``"rating"``, ``"judgment"``).

    Parameters
    ----------
    metrics : list of str, optional
        Metrics to include (default all; ``[]`` for none).
    raters : None, bool or list of str
        Ratings to include, labelled ``"<rater>.<trait>"``: None/True all, False/``[]``
        none, or raters (all their traits) and ``"<rater>.<trait>"`` labels.
    judgments : bool or list of str
        Continuous judgments to include (labelled by their trait).
    run, reference
        See :func:`pick_run` and :func:`pick_reference`.
    normalize : bool
        Rank-normalise each variable over all its (system, item) cells first
        (:func:`~bayesmeta.data.transform.rank_normalize`, MetricEval App. A.2).
    """
    validate(ds, warn_missing=False)
    parts: list[tuple[np.ndarray, list[str], list[str]]] = []
    if "score" in ds and (metrics is None or len(metrics)):
        score = metric_scores(ds, metrics, run=run, reference=reference)
        parts.append((np.asarray(score.values, dtype=float),
                      [str(m) for m in score["metric"].values], ["metric"] * score.sizes["metric"]))
    elif metrics:
        raise ValueError("data has no 'score' variable, so metrics cannot be selected.")
    pairs = _rating_variables(ds, raters if raters != [] else False)
    if pairs:
        vals = np.stack([ds["rating"].sel(rater=r, trait=t).transpose("system", "item").values
                         for r, t in pairs])
        parts.append((vals, [rating_label(r, t) for r, t in pairs], ["rating"] * len(pairs)))
    if "judgment" in ds and judgments is not False and judgments != []:
        owned = owned_traits(ds, "judgment")
        chosen = owned if judgments is True else [
            str(x) for x in check_labels(owned, list(judgments), "trait")]
        if chosen:
            vals = np.stack([ds["judgment"].sel(trait=_pick_label(ds["trait"].values, t, "trait"))
                             .transpose("system", "item").values for t in chosen])
            parts.append((vals, chosen, ["judgment"] * len(chosen)))
    if not parts:
        raise ValueError("nothing to analyse: no metrics, ratings or judgments were selected.")
    values = np.concatenate([p[0] for p in parts], axis=0)
    if normalize:
        values = np.stack([rank_normalize(v.ravel()).reshape(v.shape) for v in values])
    labels = [lab for p in parts for lab in p[1]]
    kinds = [k for p in parts for k in p[2]]
    if len(set(labels)) != len(labels):
        dup = pd.Index(labels)[pd.Index(labels).duplicated()].unique()
        raise ValueError(f"variable label(s) {_fmt(dup)} name both a metric and a rating or "
                         f"judgment; rename the metric.")
    return xr.DataArray(
        values,
        dims=("variable", "system", "item"),
        coords={"variable": labels, "kind": ("variable", kinds),
                "system": ds["system"].values, "item": ds["item"].values},
    )


def ordinal_ratings(
    ds: xr.Dataset,
    *,
    traits: Sequence[str] | None = None,
    raters: Sequence[str] | None = None,
    analysis: str = "this analysis",
) -> xr.DataArray:
    """The ordinal ratings ``(system, item, rater, trait)`` of the traits that have them.

    Raises a ``ValueError`` that says why when the data (or a requested trait) holds only
    continuous judgments: ordinal-only analyses model raters and category thresholds, which
    averaged scores do not have.
    """
    validate(ds, warn_missing=False)
    rated = owned_traits(ds, "rating")
    judged = owned_traits(ds, "judgment")
    if not rated:
        what = (f"continuous human judgments ({_fmt(judged)}; e.g. averages over annotators)"
                if judged else "no human scores")
        raise ValueError(f"{analysis} needs ordinal ratings by rater (variable 'rating'), but "
                         f"the data has {what}: there are no raters or rating categories to "
                         f"model. Correlation, reliability and validity analyses accept "
                         f"continuous judgments.")
    if traits is None:
        chosen = rated
    else:
        chosen = []
        for t in [traits] if isinstance(traits, str) else traits:
            if _norm(t) in judged:
                raise ValueError(f"{analysis} needs ordinal ratings, but trait {t!r} is a "
                                 f"continuous judgment (variable 'judgment'), which has no "
                                 f"raters or categories.")
            chosen.append(str(_pick_label(rated, t, "trait")))
    tl = [_pick_label(ds["trait"].values, t, "trait") for t in chosen]
    out = ds["rating"].sel(trait=tl, rater=_rater_labels(ds, raters))
    return out.transpose("system", "item", "rater", "trait")


def ratings_wide(
    ds: xr.Dataset,
    *,
    traits: Sequence[str] | None = None,
    raters: Sequence[str] | None = None,
    analysis: str = "this analysis",
) -> pd.DataFrame:
    """Ordinal ratings as a cases x variables table: one row per (system, item) (index
    levels ``system``, ``item``), one column per rater x trait labelled
    ``"<rater>.<trait>"``; the frame's ``attrs`` carry the declared ``scale_min`` and
    ``scale_max`` of the ratings (where the dataset declares them)."""
    rating = ordinal_ratings(ds, traits=traits, raters=raters, analysis=analysis)
    S, I, R, T = rating.shape
    values = rating.values.reshape(S * I, R * T)
    labels = [rating_label(r, t) for r in rating["rater"].values for t in rating["trait"].values]
    index = pd.MultiIndex.from_product([rating["system"].values, rating["item"].values],
                                       names=["system", "item"])
    out = pd.DataFrame(values, index=index, columns=labels)
    out.attrs = {k: rating.attrs[k] for k in ("scale_min", "scale_max") if k in rating.attrs}
    return out


def output_scores(data: xr.Dataset, trait: str | None, *, metrics: Sequence[str] | None, run: Any,
            reference: Any, human: xr.DataArray | None
            ) -> tuple[np.ndarray, np.ndarray, list[str], str]:
    """Scores ``(metric, output)`` and the human score ``(output,)`` over every
    (system, item) cell with a human score; metric labels; the human score's label (the
    output-level analyses of paper 002). Data built by hand without a ``run`` dim count as
    one run."""
    if not isinstance(data, xr.Dataset):
        raise TypeError(f"data must be an xarray.Dataset, got {type(data).__name__}.")
    labels = check_metrics(data, metrics)
    if "run" not in data["score"].dims:  # data built by hand: one run
        data = data.assign(score=data["score"].expand_dims(run=["1"], axis=-1))
    hs = human_score(data, trait, human=human)
    sc = metric_scores(data, labels, run=run, reference=reference)
    h = np.asarray(hs.values.transpose("system", "item").values, float).ravel()
    x = np.asarray(sc.values, float).reshape(len(labels), -1)
    keep = np.isfinite(h)
    if keep.sum() < 4:
        raise ValueError(f"human score {hs.label!r} has {int(keep.sum())} outputs with a "
                         "value; at least 4 are needed.")
    return x[:, keep], h[keep], labels, hs.label


def describe(ds: xr.Dataset) -> str:
    """The dataset's size for result headers: ``"system 17, item 100, rater 3, ..."``."""
    return ", ".join(f"{k} {v}" for k, v in ds.sizes.items()
                     if k in ("system", "item", "rater", "trait", "metric", "run", "reference"))


def require(n: int, least: int, dim: str, analysis: str) -> None:
    """Raise a ``ValueError`` when an analysis gets fewer than ``least`` labels on ``dim``."""
    if n < least:
        raise ValueError(f"{analysis} needs at least {least} {dim}s (dim {dim!r}); the data "
                         f"has {n}.")


__all__ = [
    "REFERENCE_REDUCTIONS",
    "HumanScore",
    "align",
    "check_labels",
    "check_metrics",
    "describe",
    "human_score",
    "human_traits",
    "metric_scores",
    "normalize_labels",
    "ordinal_ratings",
    "orient_scores",
    "output_scores",
    "pick_reference",
    "pick_run",
    "quantities",
    "rating_label",
    "ratings_wide",
    "require",
]
