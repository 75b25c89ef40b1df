"""Build validated bayesmeta datasets from tables: long, wide, CSV.

Every reader checks its input and raises an error that names the column, value or row at
fault; nothing is dropped silently. Missing cells become NaN and are counted in a
:class:`~bayesmeta.data.schema.MissingDataWarning`.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr

from bayesmeta.data.schema import RATING_DIMS, SCORE_DIMS, _fmt, validate

METRICEVAL_RATING = re.compile(r"^(?P<rater>Expert\.\d+)\.(?P<trait>[A-Za-z]+)$")


def _require_columns(df: pd.DataFrame, columns: Sequence[str], what: str = "column") -> None:
    for col in columns:
        if col not in df.columns:
            close = difflib.get_close_matches(str(col), [str(c) for c in df.columns], n=3)
            hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
            raise ValueError(f"unknown {what} {col!r}: it is not in the data.{hint}")


def _numeric(df: pd.DataFrame, col: str) -> np.ndarray:
    """Convert a column to float, naming the column, row and value that are not numbers."""
    values = df[col]
    if pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values):
        return values.to_numpy(dtype=float)
    converted = pd.to_numeric(values, errors="coerce")
    bad = converted.isna() & values.notna() & (values.astype(str).str.strip() != "")
    if bad.any():
        row = bad.idxmax()
        raise TypeError(
            f"column {col!r} has non-numeric value {values.loc[row]!r} in row {row}; "
            f"{int(bad.sum())} such value(s) in all."
        )
    return converted.to_numpy(dtype=float)


def _check_duplicates(df: pd.DataFrame, keys: Sequence[str]) -> None:
    dup = df.duplicated(subset=list(keys), keep=False)
    if dup.any():
        first = df.loc[dup, list(keys)].iloc[0]
        pair = ", ".join(f"{k}={first[k]!r}" for k in keys)
        raise ValueError(
            f"duplicate ({', '.join(keys)}) key: {pair} appears "
            f"{int((df[list(keys)] == first.values).all(axis=1).sum())} times; "
            f"{int(dup.sum())} rows are involved in duplicates."
        )


def _labels(values: pd.Series) -> np.ndarray:
    return np.asarray(pd.unique(values.astype(str)), dtype=object).astype(str)


def _check_scale(values: np.ndarray, scale: tuple[float, float], column: str, rows) -> None:
    lo, hi = scale
    finite = ~np.isnan(values)
    off = finite & ((values < lo) | (values > hi) | (values != np.round(values)))
    if off.any():
        i = int(np.argmax(off))
        raise ValueError(
            f"column {column!r} has rating {values[i]:g} in row {rows[i]}, which is not an "
            f"integer on the scale {lo:g}..{hi:g}; {int(off.sum())} such value(s) in all."
        )


def from_wide(
    df: pd.DataFrame,
    *,
    system: str = "system",
    item: str = "item",
    ratings: Mapping[str, tuple[str, str]] | str | None = None,
    metrics: Sequence[str] | None = None,
    run: str | None = None,
    scale: tuple[float, float] = (1, 5),
    metric_trait: Mapping[str, str] | None = None,
) -> xr.Dataset:
    """Build a dataset from a wide table: one row per (system, item[, run]).

    Parameters
    ----------
    df : pandas.DataFrame
        The table.
    system, item : str
        Names of the columns that identify the system and the item.
    ratings : dict or str, optional
        Rating columns: a mapping ``{column: (rater, trait)}``, or a regular expression with
        named groups ``rater`` and ``trait`` matched against every column name
        (e.g. ``r"^(?P<rater>Expert\\.\\d+)\\.(?P<trait>\\w+)$"``).
    metrics : list of str, optional
        Metric columns. By default every numeric column that is neither a key nor a rating.
    run : str, optional
        Column that numbers repeated metric runs; rows then repeat per run.
    scale : (min, max)
        The rating scale; ratings must be integers on it.
    metric_trait : dict, optional
        The trait each metric is meant to measure (stored as coordinate ``metric_trait``).

    Returns
    -------
    xarray.Dataset
        Validated; see :mod:`bayesmeta.data.schema`.

    Examples
    --------
    >>> import pandas as pd, bayesmeta as bm
    >>> df = pd.DataFrame({"sys": ["A", "A", "B", "B"], "doc": [1, 2, 1, 2],
    ...                    "r1_coh": [3, 4, 2, 5], "bleu": [.1, .3, .2, .4]})
    >>> ds = bm.from_wide(df, system="sys", item="doc",
    ...                   ratings={"r1_coh": ("r1", "coh")}, metrics=["bleu"])
    >>> dict(ds.sizes)
    {'system': 2, 'item': 2, 'rater': 1, 'trait': 1, 'metric': 1, 'run': 1}
    """
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"df must be a pandas DataFrame, got {type(df).__name__}.")
    keys = [system, item] + ([run] if run else [])
    _require_columns(df, keys, "key column")
    for k in keys:
        if df[k].isna().any():
            raise ValueError(f"key column {k!r} has {int(df[k].isna().sum())} missing value(s).")
    rating_map: dict[str, tuple[str, str]] = {}
    if isinstance(ratings, str):
        pattern = re.compile(ratings)
        if not {"rater", "trait"} <= set(pattern.groupindex):
            raise ValueError(f"the ratings pattern {ratings!r} needs named groups 'rater' and "
                             f"'trait', e.g. r'^(?P<rater>r\\d)_(?P<trait>\\w+)$'.")
        for col in df.columns:
            m = pattern.match(str(col))
            if m:
                rating_map[str(col)] = (m.group("rater"), m.group("trait"))
        if not rating_map:
            raise ValueError(f"no column matches the ratings pattern {ratings!r}.")
    elif ratings is not None:
        rating_map = {str(k): (str(v[0]), str(v[1])) for k, v in ratings.items()}
        _require_columns(df, list(rating_map), "rating column")
    if metrics is None:
        metrics = [
            str(c) for c in df.columns
            if c not in keys and c not in rating_map
        ]
    else:
        metrics = [str(m) for m in metrics]
        _require_columns(df, metrics, "metric column")
    if not rating_map and not metrics:
        raise ValueError("no rating or metric columns were given or found.")
    _check_duplicates(df, keys)

    sys_labels, item_labels = _labels(df[system]), _labels(df[item])
    si = df[system].astype(str).map({s: i for i, s in enumerate(sys_labels)}).to_numpy()
    ii = df[item].astype(str).map({s: i for i, s in enumerate(item_labels)}).to_numpy()
    data_vars = {}
    coords: dict[str, object] = {"system": sys_labels, "item": item_labels}
    if rating_map:
        if run:
            # ratings do not change between runs: take each (system, item) once
            first = ~df.duplicated(subset=[system, item])
            sub = df.loc[first]
        else:
            sub = df
        rsi = sub[system].astype(str).map({s: i for i, s in enumerate(sys_labels)}).to_numpy()
        rii = sub[item].astype(str).map({s: i for i, s in enumerate(item_labels)}).to_numpy()
        raters = list(dict.fromkeys(v[0] for v in rating_map.values()))
        traits = list(dict.fromkeys(v[1] for v in rating_map.values()))
        arr = np.full((len(sys_labels), len(item_labels), len(raters), len(traits)), np.nan)
        seen: dict[tuple[str, str], str] = {}
        for col, (r, t) in rating_map.items():
            if (r, t) in seen:
                raise ValueError(
                    f"rating columns {seen[(r, t)]!r} and {col!r} both map to rater {r!r}, "
                    f"trait {t!r}."
                )
            seen[(r, t)] = col
            vals = _numeric(sub, col)
            _check_scale(vals, scale, col, sub.index.to_numpy())
            arr[rsi, rii, raters.index(r), traits.index(t)] = vals
        data_vars["rating"] = (
            RATING_DIMS, arr, {"scale_min": float(scale[0]), "scale_max": float(scale[1])}
        )
        coords.update(rater=np.array(raters), trait=np.array(traits))
    if metrics:
        if run:
            run_labels = _labels(df[run])
            ri = df[run].astype(str).map({s: i for i, s in enumerate(run_labels)}).to_numpy()
        else:
            run_labels, ri = np.array(["1"]), np.zeros(len(df), dtype=int)
        arr = np.full((len(sys_labels), len(item_labels), len(metrics), len(run_labels)), np.nan)
        for m, col in enumerate(metrics):
            arr[si, ii, m, ri] = _numeric(df, col)
        data_vars["score"] = (SCORE_DIMS, arr)
        coords.update(metric=np.array(metrics), run=run_labels)
    ds = xr.Dataset(data_vars, coords=coords)
    if metric_trait is not None and metrics:
        ds = ds.assign_coords(
            metric_trait=("metric", [str(metric_trait.get(m, "")) for m in metrics])
        )
    return validate(ds)


def from_long(
    df: pd.DataFrame,
    *,
    value: str = "value",
    system: str = "system",
    item: str = "item",
    rater: str | None = None,
    trait: str | None = None,
    metric: str | None = None,
    run: str | None = None,
    scale: tuple[float, float] = (1, 5),
) -> xr.Dataset:
    """Build a dataset from a long table: one row per observation.

    Give ``rater`` and ``trait`` for ratings (variable ``rating``), or ``metric`` (and
    optionally ``run``) for metric scores (variable ``score``). Combine the two with
    :func:`xarray.merge`.

    Examples
    --------
    >>> import pandas as pd, bayesmeta as bm
    >>> df = pd.DataFrame({"system": list("AABB"), "item": [1, 2, 1, 2],
    ...                    "rater": "r1", "trait": "coh", "value": [3, 4, 2, 5]})
    >>> bm.from_long(df, rater="rater", trait="trait")["rating"].shape
    (2, 2, 1, 1)
    """
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"df must be a pandas DataFrame, got {type(df).__name__}.")
    if metric is None and (rater is None or trait is None):
        raise ValueError("give either metric= (scores) or both rater= and trait= (ratings).")
    if metric is not None and (rater is not None or trait is not None):
        raise ValueError("give metric= for scores or rater=/trait= for ratings, not both.")
    if metric is not None:
        dims = dict(zip(SCORE_DIMS, (system, item, metric, run), strict=True))
    else:
        dims = dict(zip(RATING_DIMS, (system, item, rater, trait), strict=True))
    cols = [c for c in dims.values() if c is not None]
    _require_columns(df, [*cols, value])
    for c in cols:
        if df[c].isna().any():
            raise ValueError(f"key column {c!r} has {int(df[c].isna().sum())} missing value(s).")
    _check_duplicates(df, cols)
    vals = _numeric(df, value)
    if metric is None:
        _check_scale(vals, scale, value, df.index.to_numpy())
    labels = {}
    index = []
    for dim, col in dims.items():
        if col is None:
            labels[dim] = np.array(["1"])
            index.append(np.zeros(len(df), dtype=int))
        else:
            labs = _labels(df[col])
            labels[dim] = labs
            index.append(df[col].astype(str).map({s: i for i, s in enumerate(labs)}).to_numpy())
    arr = np.full(tuple(len(v) for v in labels.values()), np.nan)
    arr[tuple(index)] = vals
    name = "score" if metric is not None else "rating"
    attrs = {} if metric is not None else {"scale_min": float(scale[0]),
                                            "scale_max": float(scale[1])}
    ds = xr.Dataset({name: (tuple(dims), arr, attrs)}, coords=labels)
    return validate(ds)


def read_csv(
    path: str | Path | Sequence[str | Path],
    *,
    format: str = "wide",
    scale: tuple[float, float] = (1, 5),
    **columns,
) -> xr.Dataset:
    """Read one CSV (or several, one per metric run) into a validated dataset.

    Parameters
    ----------
    path : path or list of paths
        With ``format="metriceval"`` a list is read as repeated runs of the metrics (the
        ``run`` dim, labelled ``"1"``, ``"2"``, ...); ratings are taken from the first file
        and must be identical in the others.
    format : {"wide", "long", "metriceval"}
        ``"metriceval"``: the MetricEval layout (``test_id``, ``model_id``,
        ``Expert.k.TRAIT`` rating columns, every other column a metric).
        ``"wide"`` / ``"long"``: passed to :func:`from_wide` / :func:`from_long` with the
        column names given as keyword arguments (``system=``, ``item=``, ...).

    Examples
    --------
    >>> import bayesmeta as bm  # doctest: +SKIP
    >>> ds = bm.read_csv(["run1.csv", "run2.csv"], format="metriceval")  # doctest: +SKIP
    """
    paths = [path] if isinstance(path, (str, Path)) else list(path)
    if not paths:
        raise ValueError("path is empty: give at least one CSV file.")
    for p in paths:
        if not Path(p).is_file():
            raise FileNotFoundError(f"CSV file not found: {str(p)!r}.")
    if format == "metriceval":
        if columns:
            raise TypeError(
                f"format='metriceval' fixes the columns; unexpected argument(s) "
                f"{', '.join(columns)}."
            )
        return _read_metriceval(paths, scale=scale)
    if len(paths) != 1:
        raise ValueError(f"format={format!r} reads one file; got {len(paths)}.")
    df = pd.read_csv(paths[0])
    if format == "wide":
        return from_wide(df, scale=scale, **columns)
    if format == "long":
        return from_long(df, scale=scale, **columns)
    raise ValueError(f"format must be 'wide', 'long' or 'metriceval', got {format!r}.")


def _read_metriceval(paths: Sequence[str | Path], *, scale: tuple[float, float]) -> xr.Dataset:
    frames = []
    for k, p in enumerate(paths):
        df = pd.read_csv(p)
        _require_columns(df, ["test_id", "model_id"], "MetricEval key column")
        frames.append(df.assign(__run__=str(k + 1)))
    rating_cols = [c for c in frames[0].columns if METRICEVAL_RATING.match(str(c))]
    metric_cols = [
        c for c in frames[0].columns
        if c not in ("test_id", "model_id", "__run__", *rating_cols)
    ]
    for k, df in enumerate(frames[1:], start=2):
        missing = [c for c in metric_cols if c not in df.columns]
        if missing:
            raise ValueError(f"run {k} ({str(paths[k - 1])!r}) lacks metric column(s) "
                             f"{_fmt(missing)}.")
    if len(frames) > 1 and rating_cols:
        base = frames[0].set_index(["model_id", "test_id"])[rating_cols]
        for k, df in enumerate(frames[1:], start=2):
            other = df.set_index(["model_id", "test_id"])[rating_cols].reindex(base.index)
            differ = ~((base == other) | (base.isna() & other.isna())).all(axis=1)
            if differ.any():
                key = differ.idxmax()
                raise ValueError(
                    f"expert ratings differ between run 1 and run {k} for model_id={key[0]!r}, "
                    f"test_id={key[1]!r}; ratings must be the same in every run file."
                )
    frames = [frames[0]] + [f[["test_id", "model_id", "__run__", *metric_cols]] for f in frames[1:]]
    df = pd.concat(frames, ignore_index=True)
    ratings = {c: tuple(METRICEVAL_RATING.match(c).group("rater", "trait")) for c in rating_cols}
    metric_trait = {m: _metriceval_trait(m) for m in metric_cols}
    return from_wide(
        df,
        system="model_id",
        item="test_id",
        ratings=ratings or None,
        metrics=metric_cols,
        run="__run__",
        scale=scale,
        metric_trait=metric_trait,
    )


def _metriceval_trait(metric: str) -> str:
    m = re.search(r"\.(COH|CON|FLU|REL)$", metric)
    return m.group(1) if m else ""
