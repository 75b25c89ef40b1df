"""Annotations: instances labelled by human annotators and by LLM judges.

A minimal schema of its own (not the system x item x trait schema of ratings and metrics;
no placeholder system or trait is invented): one variable ``label`` on dims
``(item, rater)``, where ``item`` is the annotated instance and ``rater`` holds the human
annotators and the judges together, told apart by the boolean coordinate ``is_judge``.
Missing annotations are NaN. Numeric labels are kept as floats; text labels are coded
``0 .. K-1`` in the sorted order of their values, which are listed in the attribute
``label.attrs["categories"]`` (so ``categories[int(code)]`` gives the label back).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

__all__ = ["annotation_labels", "from_annotations", "read_annotations"]


def _load(obj: str | Path | Mapping[str, Any], what: str) -> dict[str, dict[str, Any]]:
    if isinstance(obj, str | Path):
        with open(obj, encoding="utf-8") as fh:
            obj = json.load(fh)
    if not isinstance(obj, Mapping):
        raise TypeError(f"{what} must be a JSON file or a dict of rater -> {{instance -> "
                        f"label}}, got {type(obj).__name__}.")
    if what == "llm_annotations" and obj and not any(isinstance(v, Mapping)
                                                     for v in obj.values()):
        obj = {"llm": obj}  # one judge, as the authors' alt_test takes it: instance -> label
    out: dict[str, dict[str, Any]] = {}
    for rater, labels in obj.items():
        if not isinstance(labels, Mapping):
            raise TypeError(f"{what}: rater {rater!r} must map instance -> label, got "
                            f"{type(labels).__name__}.")
        out[str(rater)] = {str(i): v for i, v in labels.items()}
    return out


def _build(rows: pd.DataFrame, judges: Sequence[str]) -> xr.Dataset:
    """rows: columns item, rater, label (one row per annotation)."""
    rows = rows[rows["label"].notna()]
    dup = rows.duplicated(["item", "rater"], keep=False)
    if dup.any():
        first = rows.loc[dup, ["item", "rater"]].iloc[0]
        raise ValueError(f"rater {first['rater']!r} labelled instance {first['item']!r} more "
                         f"than once ({int(dup.sum())} duplicated annotations in all).")
    labels = rows["label"]
    numeric = labels.map(lambda v: isinstance(v, int | float | np.integer | np.floating)
                         and not isinstance(v, bool)).all()
    attrs: dict[str, Any] = {}
    if numeric:
        values = labels.astype(float)
    else:
        cats = sorted({str(v) for v in labels})
        code = {c: k for k, c in enumerate(cats)}
        values = labels.map(lambda v: float(code[str(v)]))
        attrs["categories"] = cats
    items = list(dict.fromkeys(rows["item"]))
    raters = list(dict.fromkeys(rows["rater"]))
    judge_set = set(judges)
    order = [r for r in raters if r not in judge_set] + [r for r in raters if r in judge_set]
    table = pd.Series(values.to_numpy(), index=pd.MultiIndex.from_arrays(
        [rows["item"], rows["rater"]], names=["item", "rater"])).unstack("rater")
    table = table.reindex(index=items, columns=order)
    label = xr.DataArray(table.to_numpy(dtype=float), dims=("item", "rater"),
                         coords={"item": np.array(items, dtype=object),
                                 "rater": np.array(order, dtype=object),
                                 "is_judge": ("rater", np.array([r in judge_set for r in order]))},
                         attrs=attrs, name="label")
    return xr.Dataset({"label": label}, attrs={"schema": "annotations"})


def read_annotations(human_annotations: str | Path | Mapping[str, Any],
                     llm_annotations: str | Path | Mapping[str, Any] | None = None,
                     ) -> xr.Dataset:
    """Read annotations in the alt-test authors' JSON layout into a Dataset.

    Both files map rater -> {instance -> label} (Calderon, Reichart & Dror 2025, the
    ``human_annotations.json`` and ``llm_annotations.json`` of their repository). The
    result has ``label`` on dims ``(item, rater)``, instances as ``item``, annotators and
    judges on ``rater`` (annotators first) with the boolean coordinate ``is_judge``; missing
    annotations are NaN; text labels are coded with ``label.attrs["categories"]`` (see
    :mod:`bayesmeta.data.annotations`).

    Parameters
    ----------
    human_annotations : path or dict
        Annotator -> {instance -> label}.
    llm_annotations : path or dict, optional
        Judge -> {instance -> label}; a plain {instance -> label} (the authors' ``alt_test``
        takes one judge so) is one judge named ``"llm"``.

    Returns
    -------
    xarray.Dataset

    Examples
    --------
    >>> from bayesmeta.data.annotations import read_annotations
    >>> ds = read_annotations({"a": {"1": "yes", "2": "no"}, "b": {"1": "yes"}},
    ...                       {"gpt": {"1": "no", "2": "no"}})
    >>> ds["label"].dims, ds["is_judge"].values.tolist(), ds["label"].attrs["categories"]
    (('item', 'rater'), [False, False, True], ['no', 'yes'])

    R equivalent: none (``jsonlite::fromJSON`` and a reshape by hand).
    """
    human = _load(human_annotations, "human_annotations")
    llm = _load(llm_annotations, "llm_annotations") if llm_annotations is not None else {}
    clash = sorted(set(human) & set(llm))
    if clash:
        raise ValueError(f"rater(s) {clash} appear both as human annotators and as judges.")
    rows = [(i, r, v) for src in (human, llm) for r, labs in src.items()
            for i, v in labs.items()]
    frame = pd.DataFrame(rows, columns=["item", "rater", "label"], dtype=object)
    if frame.empty:
        raise ValueError("human_annotations holds no annotation.")
    return _build(frame, list(llm))


def from_annotations(data: pd.DataFrame, *, instance: str = "instance",
                     annotator: str = "annotator", label: str = "label",
                     judge: str | Sequence[str] | None = None) -> xr.Dataset:
    """Read a long table of annotations (one row per rater and instance) into a Dataset.

    Parameters
    ----------
    data : pandas.DataFrame
        The annotations.
    instance, annotator, label : str
        The columns holding the instance, the rater (annotator or judge) and the label.
    judge : str or list of str, optional
        Either the name of a boolean column flagging the judges' rows, or the rater labels
        that are judges (LLMs). Default: no judges.

    Returns
    -------
    xarray.Dataset
        As :func:`read_annotations`.

    Examples
    --------
    >>> import pandas as pd
    >>> from bayesmeta.data.annotations import from_annotations
    >>> df = pd.DataFrame({"instance": [1, 1, 2], "annotator": ["a", "gpt", "a"],
    ...                    "label": [3, 4, 5]})
    >>> ds = from_annotations(df, judge=["gpt"])
    >>> ds["label"].sel(rater="gpt").values.tolist()
    [4.0, nan]

    R equivalent: none (``tidyr::pivot_wider`` by hand).
    """
    if not isinstance(data, pd.DataFrame):
        raise TypeError(f"data must be a pandas DataFrame, got {type(data).__name__}.")
    missing = [c for c in (instance, annotator, label) if c not in data.columns]
    if missing:
        raise KeyError(f"column(s) {missing} not in data (columns: {list(data.columns)}).")
    frame = pd.DataFrame({"item": data[instance].astype(str).to_numpy(),
                          "rater": data[annotator].astype(str).to_numpy(),
                          "label": data[label].astype(object).to_numpy()})
    if judge is None:
        judges: list[str] = []
    elif isinstance(judge, str) and judge in data.columns:
        flag = data[judge].astype(bool).to_numpy()
        judges = list(dict.fromkeys(frame.loc[flag, "rater"]))
        both = sorted(set(judges) & set(frame.loc[~flag, "rater"]))
        if both:
            raise ValueError(f"rater(s) {both} are flagged as judge in some rows of "
                             f"{judge!r} and not in others.")
    else:
        judges = [judge] if isinstance(judge, str) else [str(j) for j in judge]
        unknown = sorted(set(judges) - set(frame["rater"]))
        if unknown:
            raise ValueError(f"judge(s) {unknown} are neither a column nor raters in "
                             f"{annotator!r}.")
    return _build(frame, judges)


def annotation_labels(data: xr.Dataset, analysis: str) -> xr.DataArray:
    """The ``label`` variable of an annotations Dataset, or an error naming what is wrong."""
    if not isinstance(data, xr.Dataset):
        raise TypeError(f"{analysis} needs an annotations Dataset (bm.read_annotations or "
                        f"bm.from_annotations), got {type(data).__name__}.")
    if "label" not in data or "is_judge" not in data.coords:
        raise ValueError(f"{analysis} needs annotations: a 'label' variable on (item, rater) "
                         f"with an 'is_judge' coordinate (read them with bm.read_annotations "
                         f"or bm.from_annotations); this Dataset has variables "
                         f"{sorted(map(str, data.data_vars))}.")
    return data["label"].transpose("item", "rater")
