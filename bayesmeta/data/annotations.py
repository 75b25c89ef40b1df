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

__all__ = ["add_judges", "annotation_labels", "from_annotations", "humans_and_judges",
           "read_annotations"]


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


def humans_and_judges(data: xr.Dataset) -> tuple[list[str], list[str]]:
    """The rater labels of the human annotators and of the judges (``is_judge``), in the
    order of the ``rater`` dim."""
    raters = [str(r) for r in data["rater"].values]
    flags = np.asarray(data["is_judge"].values, dtype=bool)
    return ([r for r, j in zip(raters, flags, strict=True) if not j],
            [r for r, j in zip(raters, flags, strict=True) if j])


def _match_traits(names: Sequence[str], traits: Sequence[str]) -> dict[str, str]:
    """Annotation trait name -> dataset trait: exact, case-insensitive, or the one dataset
    trait that is a case-insensitive prefix of it (``"coherence"`` -> ``"COH"``) or that it
    is a prefix of."""
    out: dict[str, str] = {}
    for name in names:
        low = name.lower()
        hits = [t for t in traits if t == name] or [t for t in traits if t.lower() == low] or [
            t for t in traits if low.startswith(t.lower()) or t.lower().startswith(low)]
        if len(hits) != 1:
            what = "matches no" if not hits else f"matches several ({hits}) of the"
            raise ValueError(f"add_judges: the trait {name!r} of the annotations {what} "
                             f"traits of data {list(traits)}.")
        out[name] = hits[0]
    return out


def add_judges(data: xr.Dataset, annotations: xr.Dataset, *,
               judges: Sequence[str] | None = None, id_split: str = "__") -> xr.Dataset:
    """Add LLM judges' labels to the ratings of a dataset, as raters beside the humans.

    The annotations' instances name an output and a trait as ``<item><id_split><system>
    <id_split><trait>`` (the alt-test authors' SummEval layout, e.g.
    ``"dm-test-8764...__M11__coherence"``); each judge's label becomes its rating of that
    output and trait. Annotation traits are matched to the data's traits by name, case
    aside, or by a unique prefix (``"coherence"`` -> ``"COH"``). The result is ``data``
    with the judges appended on ``rater`` and a boolean coordinate ``is_judge`` (and, when the
    raters have a ``panel`` coordinate, the judges in a panel ``"LLM judges"``); outputs a
    judge did not label stay missing (a judge that rated 16 of 17 systems has NaN on the
    17th, counted in the returned dataset's ``attrs["judges_missing"]``). Then
    :func:`bayesmeta.agreement`, :func:`bayesmeta.compare_agreement` and
    :func:`bayesmeta.rater_bias` see the judges as raters: each judge's severity and
    thresholds on the human scale.

    Parameters
    ----------
    data : xarray.Dataset
        A bayesmeta dataset with ordinal ``rating`` (``bm.datasets.summeval()``).
    annotations : xarray.Dataset
        Annotations with judges (:func:`read_annotations` of the authors' JSON files).
    judges : list of str, optional
        The judges added (default every rater of ``annotations`` with ``is_judge``).
    id_split : str
        The separator of the instance ids' three parts.

    Returns
    -------
    xarray.Dataset

    Raises
    ------
    ValueError
        For data without ``rating``, an unknown judge, a judge already among the raters,
        instance ids that do not split into three parts, traits that match no trait of the
        data, instances naming systems or items the data lacks (non-overlap, with
        examples), labels that are not integers on the data's scale, or another variable
        on the ``rater`` dim.

    Examples
    --------
    >>> import bayesmeta as bm
    >>> data = bm.datasets.simulated(n_systems=2, n_items=3, random_seed=0).drop_vars(
    ...     ["true_loading", "true_threshold"])  # simulation truths on 'rater'
    >>> sys0, item0 = str(data.system.values[0]), str(data.item.values[0])
    >>> trait0 = str(data.trait.values[0])
    >>> ann = bm.read_annotations({"h": {f"{item0}__{sys0}__{trait0}": 3}},
    ...                           {"gpt": {f"{item0}__{sys0}__{trait0}": 4}})
    >>> out = bm.add_judges(data, ann)
    >>> out["rating"].sel(rater="gpt", system=sys0, item=item0, trait=trait0).item()
    4.0
    >>> out["is_judge"].values.tolist()[-1]
    True

    R equivalent: none (a join by hand: ``tidyr::separate`` then ``dplyr::left_join``).
    """
    label = annotation_labels(annotations, "add_judges")
    if not isinstance(data, xr.Dataset) or "rating" not in data:
        raise ValueError("add_judges needs data with ordinal ratings (a 'rating' variable on "
                         "(system, item, rater, trait)).")
    others = [str(v) for v, da in data.data_vars.items() if "rater" in da.dims and v != "rating"]
    if others:
        raise ValueError(f"add_judges: variable(s) {others} also lie on 'rater' and have no "
                         f"value for a judge; drop them first (data.drop_vars({others})).")
    is_judge = np.asarray(annotations["is_judge"].values, dtype=bool)
    all_judges = [str(r) for r, j in zip(label["rater"].values, is_judge, strict=True) if j]
    if judges is None:
        judges = all_judges
    else:
        judges = [judges] if isinstance(judges, str) else [str(j) for j in judges]
        unknown = [j for j in judges if j not in all_judges]
        if unknown:
            raise ValueError(f"add_judges: unknown judge(s) {unknown}; the annotations' "
                             f"judges are {all_judges}.")
    if not judges:
        raise ValueError("add_judges: the annotations hold no judge (is_judge).")
    raters = [str(r) for r in data["rater"].values]
    clash = sorted(set(judges) & set(raters))
    if clash:
        raise ValueError(f"add_judges: judge(s) {clash} are already raters of data.")
    if "categories" in label.attrs:
        raise ValueError(f"add_judges: the judges' labels are text "
                         f"{label.attrs['categories'][:5]}; ratings need numbers on the "
                         f"data's scale.")
    ids = [str(i) for i in label["item"].values]
    parts = [i.rsplit(id_split, 2) for i in ids]
    bad = [i for i, p in zip(ids, parts, strict=True) if len(p) != 3]
    if bad:
        raise ValueError(f"add_judges: instance id(s) {bad[:3]} do not split into "
                         f"<item>{id_split}<system>{id_split}<trait> ({len(bad)} in all).")
    items, systems, tnames = (list(x) for x in zip(*parts, strict=True))
    tmap = _match_traits(list(dict.fromkeys(tnames)), [str(t) for t in data["trait"].values])
    known_s = {str(s) for s in data["system"].values}
    known_i = {str(i) for i in data["item"].values}
    off = [i for i, s, it in zip(ids, systems, items, strict=True)
           if s not in known_s or it not in known_i]
    if off:
        miss_s = sorted({s for s in systems if s not in known_s})
        miss_i = sorted({it for it in items if it not in known_i})
        raise ValueError(f"add_judges: {len(off)} of {len(ids)} instances name outputs the data "
                         f"lacks (non-overlapping: systems {miss_s[:5]}, items {miss_i[:3]}"
                         f"{' ...' if len(miss_i) > 3 else ''}); e.g. {off[:2]}.")
    rating = data["rating"]
    lo, hi = float(rating.attrs["scale_min"]), float(rating.attrs["scale_max"])
    sys_pos = {str(s): k for k, s in enumerate(data["system"].values)}
    item_pos = {str(s): k for k, s in enumerate(data["item"].values)}
    trait_pos = {str(s): k for k, s in enumerate(data["trait"].values)}
    si = np.array([sys_pos[s] for s in systems])
    ii = np.array([item_pos[s] for s in items])
    ti = np.array([trait_pos[tmap[t]] for t in tnames])
    shape = (rating.sizes["system"], rating.sizes["item"], len(judges), rating.sizes["trait"])
    new = np.full(shape, np.nan)
    for k, judge in enumerate(judges):
        vals = label.sel(rater=judge).values.astype(float)
        have = ~np.isnan(vals)
        v = vals[have]
        wrong = v[(v != np.round(v)) | (v < lo) | (v > hi)]
        if wrong.size:
            raise ValueError(f"add_judges: judge {judge!r} has label(s) {sorted(set(wrong))[:5]} "
                             f"that are not integers on the data's scale {lo:g}..{hi:g}.")
        new[si[have], ii[have], k, ti[have]] = v
    base = rating.transpose("system", "item", "rater", "trait")
    base = base.drop_vars([c for c in base.coords if c != "rater" and base[c].dims == ("rater",)])
    added = xr.DataArray(new, dims=base.dims, coords={
        "system": base["system"], "item": base["item"], "trait": base["trait"],
        "rater": np.array(judges, dtype=object)})
    combined = xr.concat([base, added], dim="rater")
    combined.attrs = dict(rating.attrs)
    out = data.drop_vars("rating").drop_dims("rater", errors="ignore")
    out["rating"] = combined
    out = out.assign_coords(is_judge=("rater", np.array([False] * len(raters)
                                                        + [True] * len(judges))))
    if "panel" in data.coords and data["panel"].dims == ("rater",):
        # the raters' panels are kept; the judges form a panel of their own
        out = out.assign_coords(panel=("rater", np.array(
            [str(p) for p in data["panel"].values] + ["LLM judges"] * len(judges),
            dtype=object)))
    n_out = shape[0] * shape[1] * shape[3]
    out.attrs = {**data.attrs, "judges_missing": json.dumps(
        {j: int(n_out - np.isfinite(new[:, :, k, :]).sum()) for k, j in enumerate(judges)})}
    return out
