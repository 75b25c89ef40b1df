"""Inputs of :func:`bayesmeta.debiased_mean`: an annotations Dataset, a table or arrays, turned
into one judge score per output, a human score (NaN: unlabelled) and an optional system label.

Validation lives here, so that the estimator only sees clean arrays; every error names the
column, rater or items at fault.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import xarray as xr

from bayesmeta.data.annotations import annotation_labels, humans_and_judges


@dataclass
class Outputs:
    """One row per output: the judge's score, the human score (NaN where unlabelled), the
    system (``"all"`` without systems)."""

    judge: np.ndarray
    human: np.ndarray
    system: np.ndarray
    judge_name: str
    human_name: str
    notes: list[str] = field(default_factory=list)


def _show(labels: Sequence, k: int = 5) -> str:
    labels = [str(v) for v in labels]
    more = f" and {len(labels) - k} more" if len(labels) > k else ""
    return ", ".join(repr(v) for v in labels[:k]) + more


def _numeric(values: pd.Series | np.ndarray, what: str) -> np.ndarray:
    """Float array of a numeric or boolean column; a TypeError naming the first bad value."""
    s = pd.Series(values)
    if pd.api.types.is_bool_dtype(s) or pd.api.types.is_numeric_dtype(s):
        return s.to_numpy(dtype=float)
    conv = pd.to_numeric(s, errors="coerce")
    bad = s[conv.isna() & s.notna()]
    if not bad.empty:
        raise TypeError(f"{what} must hold numbers (or booleans); row {bad.index[0]!r} holds "
                        f"{bad.iloc[0]!r} ({len(bad)} non-numeric value(s) in all). Code "
                        f"categories as numbers first (e.g. yes = 1, no = 0).")
    return conv.to_numpy(dtype=float)


def _from_annotations(data: xr.Dataset, judge: str | None, human: str | Sequence[str] | None,
                      system: str | Mapping | None) -> Outputs:
    label = annotation_labels(data, "debiased_mean")
    cats = label.attrs.get("categories")
    if cats is not None:
        raise TypeError(f"debiased_mean needs numeric labels; these are categories "
                        f"{list(cats)[:5]}. Code them as numbers (e.g. yes = 1, no = 0) and "
                        f"read them with bm.from_annotations.")
    humans, judges = humans_and_judges(data)
    if judge is None:
        if len(judges) != 1:
            raise ValueError(f"judge= must name the judge whose scores are debiased; the "
                             f"data has {len(judges)} judges: {judges}.")
        judge = judges[0]
    if not isinstance(judge, str) or judge not in judges:
        raise ValueError(f"judge={judge!r} is not a judge of the data; the judges are "
                         f"{judges}.")
    if human is None:
        chosen = humans
    else:
        chosen = [human] if isinstance(human, str) else [str(h) for h in human]
        wrong = [h for h in chosen if h not in humans]
        if wrong:
            raise ValueError(f"human={wrong} are not human annotators of the data; the "
                             f"annotators are {humans}.")
    if not chosen:
        raise ValueError("debiased_mean needs human labels; the data has no human annotator.")
    yhat = label.sel(rater=judge).values.astype(float)
    hum = label.sel(rater=chosen).values.astype(float)
    have = ~np.isnan(hum)
    with np.errstate(invalid="ignore"):
        y = np.where(have.any(1), np.nansum(hum, 1) / np.maximum(have.sum(1), 1), np.nan)
    items = np.asarray(label["item"].values)
    orphan = ~np.isnan(y) & np.isnan(yhat)
    if orphan.any():
        raise ValueError(f"judge {judge!r} did not score {int(orphan.sum())} instance(s) that "
                         f"humans labelled ({_show(items[orphan])}); the debiasing needs the "
                         f"judge's score on every labelled instance. Select the instances "
                         f"first (data.sel(item=...)).")
    keep = ~np.isnan(yhat)
    notes = []
    if (~keep).any():
        notes.append(f"{int((~keep).sum())} instance(s) without a score of {judge!r} and "
                     f"without a human label (scored by other judges only) are not its "
                     f"outputs and are left out.")
    if system is None:
        groups = np.full(items.size, "all", dtype=object)
    elif isinstance(system, str):
        if system not in data.coords or data.coords[system].dims != ("item",):
            raise ValueError(f"system={system!r} must be a coordinate on 'item' of the data "
                             f"(or a mapping instance -> system); coordinates: "
                             f"{sorted(map(str, data.coords))}.")
        groups = np.asarray(data.coords[system].values).astype(str).astype(object)
    elif isinstance(system, Mapping):
        lookup = {str(k): v for k, v in system.items()}
        absent = [i for i, k in zip(items, keep, strict=True) if k and str(i) not in lookup]
        if absent:
            raise ValueError(f"system: no system for {len(absent)} instance(s) "
                             f"({_show(absent)}).")
        groups = np.array([str(lookup.get(str(i), "")) for i in items], dtype=object)
    else:
        raise TypeError(f"system must be a coordinate name or a mapping instance -> system, "
                        f"got {type(system).__name__}.")
    human_name = (chosen[0] if len(chosen) == 1 else "mean of " + ", ".join(chosen)
                  if len(chosen) <= 4 else f"mean of {len(chosen)} annotators")
    return Outputs(yhat[keep], y[keep], groups[keep], judge, human_name, notes)


def _from_table(data: pd.DataFrame | Mapping, judge: str | None, human: str | None,
                system: str | None) -> Outputs:
    if isinstance(data, Mapping):
        lengths = {str(k): np.size(v) for k, v in data.items()}
        if len(set(lengths.values())) > 1:
            raise ValueError(f"the arrays of data must have one length each; got {lengths}.")
        data = pd.DataFrame({k: np.asarray(v).ravel() for k, v in data.items()})
    judge = "judge" if judge is None else judge
    human = "human" if human is None else human
    for role, col in (("judge", judge), ("human", human), ("system", system)):
        if col is not None and not isinstance(col, str):
            raise TypeError(f"{role}= must name a column of data, got {type(col).__name__}.")
    missing = [c for c in (judge, human, system) if c is not None and c not in data.columns]
    if missing:
        raise KeyError(f"column(s) {missing} not in data (columns: {list(data.columns)}).")
    yhat = _numeric(data[judge], f"the judge's column {judge!r}")
    y = _numeric(data[human], f"the human column {human!r}")
    if np.isnan(yhat).any():
        rows = data.index[np.isnan(yhat)]
        raise ValueError(f"the judge's column {judge!r} has no score in {len(rows)} row(s) "
                         f"({_show(rows)}); the judge must score every output (drop rows "
                         f"that are nobody's outputs first).")
    labelled = ~np.isnan(y)
    if not data.index.is_unique:
        ids = pd.Series(labelled, index=data.index)
        dup = ids[data.index.duplicated(keep=False)]
        both = dup.groupby(level=0).nunique()
        both = both[both > 1].index
        if len(both):
            raise ValueError(f"output(s) {_show(both)} are both in the labelled set (with a "
                             f"human score) and in the unlabelled set: the labelled and "
                             f"unlabelled outputs must not overlap (index of data).")
        raise ValueError(f"the index of data repeats output(s) "
                         f"{_show(dup.index.unique())}; one row per output.")
    if system is None:
        groups = np.full(len(data), "all", dtype=object)
    else:
        sys_col = data[system]
        if sys_col.isna().any():
            raise ValueError(f"the system column {system!r} is missing in "
                             f"{int(sys_col.isna().sum())} row(s).")
        groups = sys_col.astype(str).to_numpy(dtype=object)
    return Outputs(yhat, y, groups, judge, human)


def read_outputs(data: xr.Dataset | pd.DataFrame | Mapping, judge: str | None,
                 human: str | Sequence[str] | None, system: str | Mapping | None) -> Outputs:
    """The judge's and the humans' score of every output, validated."""
    if isinstance(data, xr.Dataset):
        out = _from_annotations(data, judge, human, system)
    elif isinstance(data, pd.DataFrame | Mapping):
        if human is not None and not isinstance(human, str):
            raise TypeError("human= must name one column of data.")
        if system is not None and not isinstance(system, str):
            raise TypeError("system= must name a column of data.")
        out = _from_table(data, judge, human, system)
    else:
        raise TypeError(f"data must be an annotations Dataset (bm.read_annotations), a "
                        f"DataFrame or a dict of arrays, got {type(data).__name__}.")
    for s in pd.unique(out.system):
        lab = ~np.isnan(out.human[out.system == s])
        where = "" if s == "all" else f" of system {s!r}"
        if lab.sum() < 2 or (~lab).sum() < 2:
            raise ValueError(f"the outputs{where} need at least 2 labelled (human score) and "
                             f"2 unlabelled (judge score only) outputs; they have "
                             f"{int(lab.sum())} labelled and {int((~lab).sum())} unlabelled.")
    return out
