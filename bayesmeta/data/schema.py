"""The bayesmeta data schema: one :class:`xarray.Dataset` with named dims.

Dims
----
``system``  the NLG model evaluated (the examinee of measurement theory)
``item``    the input / test example (the test item)
``rater``   a human or LLM judge
``trait``   a quality aspect (coherence, ...)
``metric``  an automatic metric
``run``     a repeated computation of the metrics (for stability)

Variables
---------
``rating(system, item, rater, trait)``  ordinal ratings, float with NaN for missing;
    attrs ``scale_min`` and ``scale_max``.
``score(system, item, metric, run)``    automatic metric scores; ``run`` has length 1
    when there is no repetition.

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
SCORE_DIMS = ("system", "item", "metric", "run")
KNOWN_DIMS = ("system", "item", "rater", "trait", "metric", "run")


class MissingDataWarning(UserWarning):
    """Issued when a dataset has missing ratings or scores (they are kept as NaN)."""


def _fmt(values: Iterable, limit: int = 5) -> str:
    values = list(values)
    shown = ", ".join(repr(v.item() if hasattr(v, "item") else v) for v in values[:limit])
    more = f" and {len(values) - limit} more" if len(values) > limit else ""
    return shown + more


def validate(
    ds: xr.Dataset,
    *,
    min_systems: int = 2,
    min_items: int = 2,
    warn_missing: bool = True,
) -> xr.Dataset:
    """Check a dataset against the bayesmeta schema and return it unchanged.

    Parameters
    ----------
    ds : xarray.Dataset
        Must hold ``rating`` with dims ``(system, item, rater, trait)`` and/or ``score``
        with dims ``(system, item, metric, run)``.
    min_systems, min_items : int
        The least number of systems and items accepted; every estimator in bayesmeta
        needs variation across both.
    warn_missing : bool
        Issue a :class:`MissingDataWarning` that counts missing ratings/scores.

    Raises
    ------
    TypeError
        If ``ds`` is not a Dataset or a variable is not numeric.
    ValueError
        For a missing variable, wrong dims, duplicate coordinate labels, too few systems or
        items, ratings that are not integers on the declared scale, all-NaN variables, or
        infinite scores. The message names the culprit.
    """
    if not isinstance(ds, xr.Dataset):
        raise TypeError(f"data must be an xarray.Dataset, got {type(ds).__name__}.")
    if "rating" not in ds and "score" not in ds:
        raise ValueError("data has neither a 'rating' nor a 'score' variable.")
    for name, dims in (("rating", RATING_DIMS), ("score", SCORE_DIMS)):
        if name not in ds:
            continue
        var = ds[name]
        if tuple(var.dims) != dims:
            raise ValueError(
                f"variable {name!r} must have dims {dims}, got {tuple(var.dims)}."
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
    if "score" in ds:
        values = ds["score"].values
        if np.isinf(values).any():
            bad = ds["score"].where(np.isinf(ds["score"]), drop=True)
            raise ValueError(
                f"score has infinite values for metric(s) {_fmt(np.unique(bad['metric'].values))}."
            )
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


def missing_report(ds: xr.Dataset) -> pd.DataFrame:
    """Count missing values per rater x trait (ratings) and per metric (scores).

    Returns
    -------
    pandas.DataFrame
        Columns ``variable``, ``label``, ``missing``, ``total``, ``fraction``.
    """
    rows = []
    if "rating" in ds:
        miss = ds["rating"].isnull().sum(("system", "item"))
        total = ds.sizes["system"] * ds.sizes["item"]
        for r in ds["rater"].values:
            for t in ds["trait"].values:
                m = int(miss.sel(rater=r, trait=t))
                rows.append(("rating", f"{r}.{t}", m, total))
    if "score" in ds:
        miss = ds["score"].isnull().sum(("system", "item", "run"))
        total = ds.sizes["system"] * ds.sizes["item"] * ds.sizes["run"]
        for m_ in ds["metric"].values:
            rows.append(("score", str(m_), int(miss.sel(metric=m_)), total))
    out = pd.DataFrame(rows, columns=["variable", "label", "missing", "total"])
    out["fraction"] = out["missing"] / out["total"]
    return out
