"""The bayesmeta data schema: one :class:`xarray.Dataset` with named dims.

Dims
----
``system``  the NLG model evaluated (the examinee of measurement theory)
``item``    the input / test example (the test item)
``rater``   a human or LLM judge
``trait``   a quality aspect (coherence, ...)
``metric``  an automatic metric
``run``     a repeated computation of the metrics (for stability)

``reference`` (optional) one score per reference, for metrics computed against several
            references (NaN-padded: outputs have different numbers of references)
``lp``      (optional) the language pair of a WMT campaign (:func:`bayesmeta.read_mtme` with
            several pairs): the leading dim of
            ``judgment`` and ``score``; systems, items and metrics are the union over the
            pairs, NaN where a pair lacks them (each pair has its own systems and segments);
            :func:`split_language_pairs` gives one dataset per pair without that padding

Variables
---------
``rating(system, item, rater, trait)``  ordinal ratings by rater, float with NaN for
    missing; attrs ``scale_min`` and ``scale_max``; values integers on that scale.
``judgment(system, item, trait)``  continuous human scores: averages over annotators,
    pyramid recall, 0..1 judgments. Used wherever a human score is used; ordinal-only
    analyses (CFA, rater model, agreement) refuse it. Optional attrs ``scale_min`` /
    ``scale_max`` bound the values. A trait's human scores are either ratings or judgments:
    a trait observed in both is an error.
``score(system, item, metric, run[, reference])``  automatic metric scores; ``run`` has
    length 1 when there is no repetition. With a ``reference`` dim, a reference-free metric
    holds its score at the first reference and NaN elsewhere; analyses that need one score
    per output reduce the dim (``reference="first" | "mean" | "max" | label``, see
    :mod:`bayesmeta.data.select`).

Coordinates on ``metric`` (optional): ``metric_trait`` (the trait a metric is meant to
measure), ``reference_based`` (bool), ``inputs`` (``"src"``, ``"ref"``, ``"src+ref"`` or
``""``).

Coordinates on ``rater`` (optional): ``is_judge`` (bool, an LLM judge; see
:func:`bayesmeta.add_judges`) and ``panel`` (str, the rater's panel: experts and crowd
workers, or the round of a repeated rating with each round's raters under their own labels;
the report's agreement section compares panels with :func:`bayesmeta.compare_agreement`).
Optional attr ``level_of_measurement`` of ``rating`` (``"nominal"``, ``"ordinal"`` or
``"interval"``): the level the report's agreement section uses instead of the one it reads
from the scale (2 points nominal, 3 to 10 ordinal, more interval).

A dataset may hold a single system (a file of outputs with no system label, as many
meta-evaluation files are) or a single item: analyses that need variation across systems or
items say so when they get too few.

:func:`validate` checks a dataset against this schema and raises a ``ValueError`` or
``TypeError`` whose message names the variable, dim, coordinate or value at fault. It never
drops anything; missing values are counted by :func:`missing_report` and announced with a
:class:`MissingDataWarning`.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable

import numpy as np
import pandas as pd
import xarray as xr

RATING_DIMS = ("system", "item", "rater", "trait")
JUDGMENT_DIMS = ("system", "item", "trait")
SCORE_DIMS = ("system", "item", "metric", "run")
SCORE_REF_DIMS = (*SCORE_DIMS, "reference")
KNOWN_DIMS = ("system", "item", "rater", "trait", "metric", "run", "reference", "lp")
#: The language-pair dim of a WMT campaign (leading dim of ``judgment`` and ``score``).
LP_DIM = "lp"
HUMAN_VARIABLES = ("rating", "judgment")


class MissingDataWarning(UserWarning):
    """Issued when a dataset has missing ratings or scores (they are kept as NaN)."""


def _fmt(values: Iterable, limit: int = 5) -> str:
    values = list(values)
    shown = ", ".join(repr(v.item() if hasattr(v, "item") else v) for v in values[:limit])
    more = f" and {len(values) - limit} more" if len(values) > limit else ""
    return shown + more


def validate(
    data: xr.Dataset,
    *,
    min_systems: int = 1,
    min_items: int = 1,
    warn_missing: bool = True,
) -> xr.Dataset:
    """Check a dataset against the bayesmeta schema and return it unchanged.

    Parameters
    ----------
    data : xarray.Dataset
        Must hold at least one of ``rating`` (dims ``(system, item, rater, trait)``),
        ``judgment`` (``(system, item, trait)``) and ``score`` (``(system, item, metric,
        run)``, optionally with a trailing ``reference`` dim).
    min_systems, min_items : int
        The least number of systems and items accepted (analyses that need variation
        across systems or items check their own minimum).
    warn_missing : bool
        Issue a :class:`MissingDataWarning` that counts missing values.

    Raises
    ------
    TypeError
        If ``ds`` is not a Dataset or a variable is not numeric.
    ValueError
        For a missing variable, wrong dims, duplicate coordinate labels, too few systems or
        items, ratings that are not integers on the declared scale, judgments off their
        declared scale, a variable or metric with no values at all, infinite values, or a
        trait observed both as ratings and as judgments. The message names the culprit.
    """
    ds = data
    if not isinstance(ds, xr.Dataset):
        raise TypeError(f"data must be an xarray.Dataset, got {type(ds).__name__}.")
    if not any(v in ds for v in ("rating", "judgment", "score")):
        raise ValueError("data has no 'rating', 'judgment' or 'score' variable.")
    if LP_DIM in ds.dims:
        for sub_lp, sub in split_language_pairs(ds).items():
            try:
                validate(sub, min_systems=min_systems, min_items=min_items,
                         warn_missing=warn_missing)
            except ValueError as err:
                raise ValueError(f"language pair {sub_lp!r}: {err}") from None
        return ds
    for name, allowed in (("rating", (RATING_DIMS,)), ("judgment", (JUDGMENT_DIMS,)),
                          ("score", (SCORE_DIMS, SCORE_REF_DIMS))):
        if name not in ds:
            continue
        var = ds[name]
        if tuple(var.dims) not in allowed:
            raise ValueError(
                f"variable {name!r} must have dims {' or '.join(map(str, allowed))}, got "
                f"{tuple(var.dims)}."
            )
        if not np.issubdtype(var.dtype, np.number) or np.issubdtype(var.dtype, np.complexfloating):
            raise TypeError(f"variable {name!r} must be real-valued, got dtype {var.dtype}.")
        if var.size and bool(var.isnull().all()):
            raise ValueError(f"variable {name!r} is entirely missing (all NaN).")
    for dim in ds.dims:
        if dim not in ds.coords:
            raise ValueError(f"dim {dim!r} has no coordinate labels.")
        index = pd.Index(ds[dim].values)
        if index.has_duplicates:
            dup = index[index.duplicated()].unique()
            raise ValueError(f"dim {dim!r} has duplicate labels: {_fmt(dup)}.")
    for dim, least in (("system", min_systems), ("item", min_items)):
        if dim in ds.dims and ds.sizes[dim] < least:
            raise ValueError(
                f"dim {dim!r} has {ds.sizes[dim]} label(s) ({_fmt(ds[dim].values)}); "
                f"at least {least} are needed to estimate anything across {dim}s."
            )
    if "rating" in ds:
        _check_ratings(ds["rating"])
    if "judgment" in ds:
        _check_judgments(ds["judgment"])
    if "rating" in ds and "judgment" in ds:
        both = (ds["rating"].notnull().any(("system", "item", "rater"))
                & ds["judgment"].notnull().any(("system", "item")))
        if bool(both.any()):
            raise ValueError(
                f"trait(s) {_fmt(ds['trait'].values[both.values])} have both ordinal ratings "
                f"('rating') and continuous judgments ('judgment'); keep one per trait (the "
                f"mean over raters is derived from the ratings when needed)."
            )
    if "score" in ds:
        _check_scores(ds["score"])
    if warn_missing:
        report = missing_report(ds)
        report = report[report["missing"] > 0]
        if len(report):
            lines = "; ".join(
                f"{row.variable} {row.label}: {row.missing} of {row.total}"
                for row in report.itertuples()
            )
            warnings.warn(
                f"missing values are kept as NaN and handled by each estimator (never "
                f"zero-filled): {lines}.",
                MissingDataWarning,
                stacklevel=2,
            )
    return ds


def split_language_pairs(data: xr.Dataset) -> dict[str, xr.Dataset]:
    """One dataset per language pair of a campaign with the dim ``lp`` (see the module
    docstring), each without the padding of the others: the systems, items and metrics that
    have no value in that pair are left out; ``attrs["lp"]`` names the pair.

    Raises
    ------
    ValueError
        When the data has no ``lp`` dim, ``lp`` has no or duplicate labels, ``rating``
        carries ``lp``, a variable carries ``lp`` other than as its first dim, or a pair
        has no value at all.

    Examples
    --------
    >>> import bayesmeta as bm
    >>> import xarray as xr
    >>> pairs = [bm.wmt.simulate_campaign(4, 5, 2, lp=lp, random_seed=k)
    ...          for k, lp in enumerate(["en-de", "ja-zh"])]
    >>> ds = xr.concat(pairs, "lp", combine_attrs="drop_conflicts")
    >>> ds = ds.assign_coords(lp=["en-de", "ja-zh"])
    >>> {lp: dict(part["score"].sizes) for lp, part in bm.split_language_pairs(ds).items()}
    ... # doctest: +NORMALIZE_WHITESPACE
    {'en-de': {'system': 4, 'item': 5, 'metric': 2, 'run': 1},
     'ja-zh': {'system': 4, 'item': 5, 'metric': 2, 'run': 1}}

    The R equivalent: ``split()`` of a long data frame by its language-pair column.
    """
    if not isinstance(data, xr.Dataset):
        raise TypeError(f"data must be an xarray.Dataset, got {type(data).__name__}.")
    if LP_DIM not in data.dims:
        raise ValueError("data has no language-pair dim 'lp' (one language pair).")
    if LP_DIM not in data.coords:
        raise ValueError("dim 'lp' has no coordinate labels.")
    labels = [str(v) for v in data[LP_DIM].values]
    index = pd.Index(labels)
    if index.has_duplicates:
        raise ValueError(f"dim 'lp' has duplicate labels: "
                         f"{_fmt(index[index.duplicated()].unique())}.")
    if "rating" in data and LP_DIM in data["rating"].dims:
        raise ValueError("variable 'rating' cannot have the dim 'lp': a campaign's human "
                         "scores are the continuous 'judgment'.")
    for name in ("judgment", "score"):
        if name in data and LP_DIM in data[name].dims and data[name].dims[0] != LP_DIM:
            raise ValueError(f"variable {name!r}: 'lp' must be its first dim, got "
                             f"{tuple(data[name].dims)}.")
    out = {}
    for k, label in enumerate(labels):
        sub = data.isel({LP_DIM: k}, drop=True)
        keep = {}
        for dim in ("system", "item", "metric"):
            seen = None
            for name in ("judgment", "score"):
                if name in sub and dim in sub[name].dims:
                    var = sub[name]
                    got = var.notnull().any([d for d in var.dims if d != dim])
                    seen = got if seen is None else seen | got
            if seen is not None:
                keep[dim] = np.asarray(seen.values, bool)
        if not any(v.any() for v in keep.values()):
            raise ValueError(f"language pair {label!r} has no value at all.")
        sub = sub.isel({d: np.flatnonzero(v) for d, v in keep.items()})
        sub.attrs = {**data.attrs, "lp": label}
        out[label] = sub
    return out


def _check_scores(score: xr.DataArray) -> None:
    values = np.asarray(score.values)
    if np.isinf(values).any():
        bad = np.argwhere(np.isinf(values))[0]
        where = {d: str(score[d].values[i]) for d, i in zip(score.dims, bad, strict=True)}
        metrics = np.unique(score["metric"].values[np.isinf(values).any(
            axis=tuple(i for i, d in enumerate(score.dims) if d != "metric"))])
        raise ValueError(
            f"score has infinite values for metric(s) {_fmt(metrics)}, first at metric "
            f"{where['metric']!r}, system {where['system']!r}, item {where['item']!r} "
            f"({values[tuple(bad)]}); replace them with NaN (missing) or a finite bound."
        )
    empty = score.isnull().all([d for d in score.dims if d != "metric"])
    if bool(empty.any()):
        raise ValueError(f"metric(s) {_fmt(score['metric'].values[empty.values])} have no "
                         f"score at all (all NaN); leave them out.")


def _check_judgments(judgment: xr.DataArray) -> None:
    values = np.asarray(judgment.values, dtype=float)
    if np.isinf(values).any():
        first = np.argwhere(np.isinf(values))[0]
        raise ValueError(f"judgment has an infinite value for trait "
                         f"{str(judgment['trait'].values[first[2]])!r} (system "
                         f"{str(judgment['system'].values[first[0]])!r}, item "
                         f"{str(judgment['item'].values[first[1]])!r}).")
    lo, hi = judgment.attrs.get("scale_min"), judgment.attrs.get("scale_max")
    if lo is None and hi is None:
        return
    lo = -np.inf if lo is None else float(lo)
    hi = np.inf if hi is None else float(hi)
    off = ~np.isnan(values) & ((values < lo) | (values > hi))
    if off.any():
        first = np.argwhere(off)[0]
        raise ValueError(
            f"judgment {values[tuple(first)]:g} of trait "
            f"{str(judgment['trait'].values[first[2]])!r} (system "
            f"{str(judgment['system'].values[first[0]])!r}, item "
            f"{str(judgment['item'].values[first[1]])!r}) is off the declared scale "
            f"{lo:g}..{hi:g}; {int(off.sum())} such value(s) in all."
        )


def _check_ratings(rating: xr.DataArray) -> None:
    lo, hi = rating.attrs.get("scale_min"), rating.attrs.get("scale_max")
    if lo is None or hi is None:
        raise ValueError("variable 'rating' needs attrs 'scale_min' and 'scale_max'.")
    values = rating.values
    finite = values[~np.isnan(values)]
    off = finite[(finite < lo) | (finite > hi) | (finite != np.round(finite))]
    if off.size:
        bad = (rating < lo) | (rating > hi) | (rating != np.round(rating))
        where = rating.where(bad, drop=True)
        stacked = where.stack(obs=RATING_DIMS).dropna("obs")
        first = stacked.isel(obs=0)
        raise ValueError(
            f"rating {float(first):g} of rater {first['rater'].item()!r}, trait "
            f"{first['trait'].item()!r} (system {first['system'].item()!r}, item "
            f"{first['item'].item()!r}) is not an integer on the declared scale "
            f"{lo:g}..{hi:g}; {off.size} such value(s) in all: {_fmt(np.unique(off))}."
        )


def owned_traits(ds: xr.Dataset, variable: str) -> list[str]:
    """The traits that ``variable`` (``"rating"`` or ``"judgment"``) holds data for."""
    if variable not in ds:
        return []
    var = ds[variable]
    seen = var.notnull().any([d for d in var.dims if d != "trait"])
    return [str(t) for t, ok in zip(ds["trait"].values, seen.values, strict=True) if ok]


def missing_report(data: xr.Dataset) -> pd.DataFrame:
    """Count missing values per rater x trait (ratings), per trait (judgments) and per
    metric (scores: an output-run counts as missing when it has no score for any reference).

    Returns
    -------
    pandas.DataFrame
        Columns ``variable``, ``label``, ``missing``, ``total``, ``fraction``.
    """
    ds = data
    rows = []
    total = ds.sizes.get("system", 0) * ds.sizes.get("item", 0)
    if "rating" in ds:
        miss = ds["rating"].isnull().sum(("system", "item"))
        for t in owned_traits(ds, "rating"):
            for r in ds["rater"].values:
                m = int(miss.sel(rater=r, trait=t))
                rows.append(("rating", f"{r}.{t}", m, total))
    if "judgment" in ds:
        miss = ds["judgment"].isnull().sum(("system", "item"))
        for t in owned_traits(ds, "judgment"):
            rows.append(("judgment", str(t), int(miss.sel(trait=t)), total))
    if "score" in ds:
        score = ds["score"]
        absent = score.isnull()
        if "reference" in score.dims:
            absent = absent.all("reference")
        miss = absent.sum(("system", "item", "run"))
        n = total * ds.sizes["run"]
        for m_ in ds["metric"].values:
            rows.append(("score", str(m_), int(miss.sel(metric=m_)), n))
    out = pd.DataFrame(rows, columns=["variable", "label", "missing", "total"])
    out["fraction"] = out["missing"] / out["total"]
    return out
