"""Keys for the readers: which system, item (and run) each row of a table belongs to.

Internal to :mod:`bayesmeta.data.io`. Labels are normalised on the way in with
:func:`bayesmeta.data.select.normalize_labels` (strings, surrounding whitespace stripped,
``3.0`` -> ``"3"``), so that the labels of a file meet the labels of a human score built by
hand; raw labels that normalisation merges are reported. A table with no system column is
one system, labelled :data:`~bayesmeta.data._columns.SINGLE_SYSTEM`; a composite id such
as ``"2140_fragments"`` is split into item and system.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from bayesmeta.data._columns import SINGLE_SYSTEM, require_columns
from bayesmeta.data.schema import _fmt
from bayesmeta.data.select import normalize_labels


@dataclass
class Keys:
    """Row codes and labels of the key dims (``codes[dim][row]`` indexes ``labels[dim]``)."""

    codes: dict[str, np.ndarray] = field(default_factory=dict)
    labels: dict[str, np.ndarray] = field(default_factory=dict)
    columns: dict[str, str] = field(default_factory=dict)  # dim -> column it came from
    log: list[tuple[str, str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, dim: str, labels_per_row: np.ndarray) -> None:
        codes, uniques = pd.factorize(pd.Series(labels_per_row, dtype=object), sort=False)
        self.codes[dim] = codes.astype(int)
        self.labels[dim] = np.asarray(uniques, dtype=object).astype(str)


def _missing(series: pd.Series) -> pd.Series:
    blank = series.astype(object).map(lambda v: isinstance(v, str) and not v.strip())
    return series.isna() | blank.astype(bool)


def labels(series: pd.Series, column: str, notes: list[str]) -> np.ndarray:
    """Normalised labels of a key column, one per row. Missing keys raise, naming the
    column and first row; raw labels merged by normalisation are noted."""
    miss = _missing(series)
    if miss.any():
        raise ValueError(
            f"key column {column!r} has {int(miss.sum())} missing value(s), first in row "
            f"{miss.idxmax()}; every row needs a key."
        )
    norm = normalize_labels(series.to_numpy(dtype=object))
    raw = np.array([str(v) for v in series.to_numpy(dtype=object)], dtype=object)
    pairs = pd.DataFrame({"raw": raw, "norm": norm}).drop_duplicates()
    merged = pairs[pairs["norm"].duplicated(keep=False)]
    for norm_label, group in merged.groupby("norm", sort=False):
        notes.append(f"column {column!r}: labels {_fmt(group['raw'].tolist())} are read as one "
                     f"label {norm_label!r} (surrounding whitespace and number format are "
                     f"ignored)")
    return norm


def split_id(series: pd.Series, column: str, id_split: str | re.Pattern,
             notes: list[str]) -> tuple[np.ndarray, np.ndarray | None]:
    """Item and system labels from a composite id.

    ``id_split`` is a separator (``"_"``: ``<item><sep><system>`` split at the first
    separator) or a regular expression with named groups ``item`` and, optionally,
    ``system`` (searched in each id; anchor it with ``^...$``).
    """
    ids = labels(series, column, notes)
    text = pd.Series(ids, index=series.index, dtype=object)
    is_regex = isinstance(id_split, re.Pattern) or "(?P<" in str(id_split)
    if is_regex:
        pattern = id_split if isinstance(id_split, re.Pattern) else re.compile(id_split)
        if "item" not in pattern.groupindex:
            raise ValueError(f"id_split {pattern.pattern!r} needs a named group 'item' (and "
                             f"'system'), e.g. r'^(?P<item>\\d+)_(?P<system>.+)$'.")
        parts = text.str.extract(pattern)
        bad = parts["item"].isna()
        if "system" in pattern.groupindex:
            bad |= parts["system"].isna()
        how = f"does not match id_split {pattern.pattern!r}"
    else:
        if not id_split:
            raise ValueError("id_split is empty: give the separator between item and system "
                             "(e.g. '_') or a regular expression with named groups.")
        parts = text.str.split(str(id_split), n=1, expand=True, regex=False)
        if parts.shape[1] < 2:
            parts[1] = np.nan
        parts.columns = ["item", "system"]
        bad = parts["system"].isna()
        how = f"has no separator {id_split!r}"
    if bad.any():
        row = bad.idxmax()
        raise ValueError(
            f"id column {column!r}: value {series.loc[row]!r} in row {row} {how}; "
            f"{int(bad.sum())} such value(s) in all. Ids must read <item>{id_split}<system>."
            if not is_regex else
            f"id column {column!r}: value {series.loc[row]!r} in row {row} {how}; "
            f"{int(bad.sum())} such value(s) in all."
        )
    items = labels(parts["item"], f"{column} (item part)", notes)
    systems = (labels(parts["system"], f"{column} (system part)", notes)
               if "system" in parts else None)
    for name, got in (("item", items), ("system", systems)):
        if got is not None and (got == "").any():
            row = series.index[int(np.argmax(got == ""))]
            raise ValueError(f"id column {column!r}: value {series.loc[row]!r} in row {row} "
                             f"has an empty {name} part.")
    return items, systems


def resolve(
    df: pd.DataFrame,
    *,
    system: str | None,
    item: str | None,
    id: str | None,
    id_split: str | re.Pattern | None,
    run: str | None,
    unique: bool = True,
) -> Keys:
    """The keys of every row; errors name the missing column or value."""
    keys = Keys()
    columns = [str(c) for c in df.columns]
    if id_split is not None and id is None:
        if "id" not in columns:
            raise ValueError("id_split= needs the composite id column: name it with id= "
                             "(there is no column 'id').")
        id = "id"
    if id is not None:
        if id_split is None:
            raise ValueError(f"id={id!r} needs id_split= (a separator such as '_', or a "
                             f"regular expression with named groups 'item' and 'system'); "
                             f"for an id that is just the item, use item={id!r}.")
        if item is not None:
            raise ValueError(f"give item= or id= (a composite id holding the item), not both; "
                             f"got item={item!r}, id={id!r}.")
        require_columns(columns, [id], "id column")
        items, systems = split_id(df[id], id, id_split, keys.notes)
        keys.add("item", items)
        keys.columns["item"] = id
        keys.log.append((id, "id", f"split by {id_split!r} into item"
                                   + (" and system" if systems is not None else "")))
        if systems is not None:
            if system is not None:
                raise ValueError(f"id_split gives the system, so system={system!r} cannot be "
                                 f"given too.")
            keys.add("system", systems)
            keys.columns["system"] = id
    else:
        if item is None:
            if "item" not in columns:
                hint = [c for c in columns if c.lower() in ("id", "doc", "doc_id", "test_id",
                                                            "item_id", "input", "src_id")]
                near = f" Is it {_fmt(hint)}?" if hint else ""
                raise ValueError(f"no item column: name the column that identifies each input "
                                 f"with item= (or a composite id with id= and id_split=).{near}")
            item = "item"
        require_columns(columns, [item], "key column")
        keys.add("item", labels(df[item], item, keys.notes))
        keys.columns["item"] = item
        keys.log.append((item, "item", "key"))
    if "system" not in keys.codes:
        if system is None and "system" in columns:
            system = "system"
        if system is None:
            keys.add("system", np.full(len(df), SINGLE_SYSTEM, dtype=object))
            keys.notes.append(f"the table has no system column: it is read as one system "
                              f"labelled {SINGLE_SYSTEM!r} (name the column with system=, or "
                              f"split a composite id with id= and id_split=)")
        else:
            require_columns(columns, [system], "key column",
                            " Pass system=None for a table of one system's outputs.")
            keys.add("system", labels(df[system], system, keys.notes))
            keys.columns["system"] = system
            keys.log.append((system, "system", "key"))
    if run is not None:
        require_columns(columns, [run], "key column")
        keys.add("run", labels(df[run], run, keys.notes))
        keys.columns["run"] = run
        keys.log.append((run, "run", "key (labels: " + _fmt(keys.labels["run"]) + ")"))
    dims = [d for d in ("system", "item", "run")
            if d in keys.codes and (d != "system" or "system" in keys.columns)]
    if unique:
        check_unique(keys, dims, df.index)
    return keys


def check_unique(keys: Keys, dims: list[str], index: pd.Index,
                 extra: dict[str, np.ndarray] | None = None) -> None:
    """Raise a ``ValueError`` naming the first duplicated key (labels after normalisation)."""
    codes = {d: keys.codes[d] for d in dims}
    labs = {d: keys.labels[d] for d in dims}
    if extra:
        for d, values in extra.items():
            c, u = pd.factorize(pd.Series(values, dtype=object))
            codes[d], labs[d] = c, np.asarray(u, dtype=object)
    frame = pd.DataFrame(codes)
    dup = frame.duplicated(keep=False)
    if not dup.any():
        return
    first = frame[dup].iloc[0]
    same = (frame == first).all(axis=1)
    used = list(keys.columns.values())
    names = [keys.columns[d] if d in keys.columns and used.count(keys.columns[d]) == 1 else d
             for d in codes]
    shown = ", ".join(f"{n}={str(labs[d][first[d]])!r}"
                      for n, d in zip(names, codes, strict=True))
    rows = index[same.to_numpy()][:5].tolist()
    hint = ""
    if "system" not in keys.columns:
        hint = (" The table has no system column, so every row must be a different item; if "
                "it holds several systems, name their column with system= (or split a "
                "composite id with id= and id_split=).")
    raise ValueError(
        f"duplicate ({', '.join(names)}) key: {shown} appears {int(same.sum())} times (rows "
        f"{_fmt(rows)}); {int(dup.sum())} rows are involved in duplicates.{hint}"
    )


def check_runs_cover(keys: Keys) -> None:
    """Raise a ``ValueError`` when the runs of a table hold different items or systems,
    naming the dim, the runs and the labels: a stability over runs compares the same
    outputs, so runs on disjoint (or partly different) items are an error, not missing
    data."""
    if "run" not in keys.codes or len(keys.labels["run"]) < 2:
        return
    runs = [str(r) for r in keys.labels["run"]]
    for dim in ("item", "system"):
        if dim not in keys.codes:
            continue
        sets = [{str(v) for v in keys.labels[dim][np.unique(keys.codes[dim][
            keys.codes["run"] == r])]} for r in range(len(runs))]
        for r in range(1, len(runs)):
            if sets[r] == sets[0]:
                continue
            lacks, extra = sorted(sets[0] - sets[r]), sorted(sets[r] - sets[0])
            parts = ([f"lacks {len(lacks)} of run {runs[0]!r}'s {dim}(s) {_fmt(lacks, 8)}"]
                     if lacks else []) + ([f"has {len(extra)} {dim}(s) run {runs[0]!r} lacks "
                                           f"{_fmt(extra, 8)}"] if extra else [])
            shared = "share no label" if not sets[0] & sets[r] else "differ"
            column = keys.columns.get(dim, dim)
            raise ValueError(f"the runs {shared} on dim {dim!r} (column {column!r}): run "
                             f"{runs[r]!r} {' and '.join(parts)}. Every run must score the "
                             f"same {dim}s; a stability over runs needs the same outputs in "
                             f"each.")

