"""The wide-table reader behind :func:`bayesmeta.from_wide` and :func:`bayesmeta.read_csv`.

Internal. :func:`build_wide` returns the dataset (validated by the caller) and the notes of
everything it decided on its own (the public functions turn them into one ``ReadWarning``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import numpy as np
import pandas as pd
import xarray as xr

from bayesmeta.data import _columns as col
from bayesmeta.data import _keys
from bayesmeta.data.schema import RATING_DIMS, SCORE_DIMS, SCORE_REF_DIMS, _fmt


def _rating_map(df: pd.DataFrame, ratings, taken: set[str]) -> dict[str, tuple[str, str]]:
    if ratings is None:
        return {}
    if isinstance(ratings, (str, re.Pattern)):
        pattern = ratings if isinstance(ratings, re.Pattern) else re.compile(ratings)
        if not {"rater", "trait"} <= set(pattern.groupindex):
            raise ValueError(f"the ratings pattern {pattern.pattern!r} needs named groups "
                             f"'rater' and 'trait', e.g. r'^(?P<rater>r\\d)_(?P<trait>\\w+)$'.")
        out = {}
        for c in df.columns:
            m = pattern.match(c)
            if m and c not in taken:
                out[c] = (m.group("rater").strip(), m.group("trait").strip())
        if not out:
            raise ValueError(f"no column matches the ratings pattern {pattern.pattern!r}.")
        return out
    if not isinstance(ratings, Mapping):
        raise TypeError("ratings must be a mapping {column: (rater, trait)} or a regular "
                        f"expression with groups 'rater' and 'trait', got "
                        f"{type(ratings).__name__}.")
    out = {}
    for k, v in ratings.items():
        if isinstance(v, str) or len(v) != 2:
            raise ValueError(f"ratings[{k!r}] must be a (rater, trait) pair, got {v!r}.")
        out[str(k)] = (str(v[0]).strip(), str(v[1]).strip())
    col.require_columns(df.columns, list(out), "rating column")
    return out


def _human_map(df: pd.DataFrame, human, taken: set[str]) -> dict[str, str]:
    if human is None:
        return {}
    if isinstance(human, Mapping):
        out = {str(k): str(v).strip() for k, v in human.items()}
        col.require_columns(df.columns, list(out), "human column")
        return out
    is_regex = isinstance(human, re.Pattern) or (isinstance(human, str)
                                                 and human not in df.columns)
    names = col.match_columns(df.columns, human, "human column")
    if is_regex:
        pattern = human if isinstance(human, re.Pattern) else re.compile(human)
        names = [c for c in names if c not in taken]
        if "trait" in pattern.groupindex:
            return {c: pattern.search(c).group("trait").strip() for c in names}
    return {c: c.strip() for c in names}


def _text_kind(series: pd.Series, decimal: str) -> str:
    if decimal != ".":
        series = series.astype(object).where(series.isna(),
                                             series.astype(str).str.replace(decimal, "."))
    elif col.decimal_comma_example(series) is not None:
        return "decimal_comma"
    share = col.numeric_share(series)
    return "numbers" if share == 1 else "mixed" if share >= 0.5 else "text"


def _choose_metrics(df, metrics, taken, decimal, log, human_bounds=None):
    """Metric columns and their kind ("numbers"/"lists"), the unnamed columns left out
    (column -> reason), and the columns read as metrics that look like human scores
    (``human_bounds``: the range of the declared human scores, whose scale a column of
    averaged ratings shares)."""
    left, flagged, chosen = {}, {}, []
    if metrics is not None:
        empty_list = isinstance(metrics, (list, tuple)) and not metrics
        names = [] if empty_list else col.match_columns(df.columns, metrics, "metric column")
        if isinstance(metrics, (str, re.Pattern)) and not (isinstance(metrics, str)
                                                           and metrics in df.columns):
            names = [c for c in names if c not in taken]
        for c in names:
            if c in taken:
                raise ValueError(f"column {c!r} is named as a metric and as a key, rating, "
                                 f"human score or excluded column; give it one role.")
            if col.is_empty(df[c]):
                raise ValueError(f"metric column {c!r} is entirely empty (no value in any "
                                 f"row); leave it out of metrics=.")
            chosen.append((c, "lists" if col.is_list_column(df[c]) else "numbers"))
    named = {c for c, _ in chosen} | taken
    for c in df.columns:
        if c in named:
            continue
        s = df[c]
        if col.is_empty(s):
            left[c] = "entirely empty"
            continue
        if metrics is not None:
            if col.is_numeric_dtype(s) or col.is_list_column(s):
                log.append((c, "left out", "not in metrics="))
            else:
                left[c] = "text" if not pd.api.types.is_bool_dtype(s) else "true/false values"
            continue
        if col.is_list_column(s):
            chosen.append((c, "lists"))
            continue
        if pd.api.types.is_bool_dtype(s):
            left[c] = "true/false values"
            continue
        kind = "numbers" if col.is_numeric_dtype(s) else _text_kind(s, decimal)
        if kind == "decimal_comma":
            raise TypeError(f"column {c!r} looks like numbers with decimal commas "
                            f"({col.decimal_comma_example(s)!r}); pass decimal=',' to read "
                            f"them, or leave the column out with exclude=.")
        if kind == "mixed":
            col.to_float(s, c, decimal=decimal)  # raises, naming the first bad cell
        if kind == "text":
            left[c] = "text"
            continue
        values = col.to_float(s, c, decimal=decimal)
        finite = values[np.isfinite(values)]
        if col.looks_like_identifier(c) and np.all(finite == np.round(finite)):
            left[c] = "identifier"
            continue
        chosen.append((c, "numbers"))
        why = []
        if col.looks_like_human_name(c):
            why.append("name")
        if col.rating_like_values(values):
            why.append("small integers")
        elif human_bounds is not None and col.averaged_rating_like(values, human_bounds):
            why.append("values on the declared human scores' scale")
        if why:
            flagged[c] = " and ".join(why)
    return chosen, left, flagged


def _human_bounds(df, human_map, rating_map, decimal) -> tuple[float, float] | None:
    """The range of the declared human scores (ratings and judgments), or None."""
    lo, hi = np.inf, -np.inf
    for c in [*human_map, *rating_map]:
        try:
            v = col.to_float(df[c], c, decimal=decimal)
        except (TypeError, ValueError):
            continue  # the column's own check names the bad cell later
        v = v[np.isfinite(v)]
        if v.size:
            lo, hi = min(lo, float(v.min())), max(hi, float(v.max()))
    return (lo, hi) if lo <= hi else None


def _refuse_undeclared(flagged: dict[str, str], human_map: dict, rating_map: dict) -> None:
    """Raise: columns that look like human scores would become metrics by default while
    other human columns were declared (paper 002's USR file read with two of its six human
    columns made 'Overall' the best metric)."""
    shown = ", ".join(f"{c!r} ({why})" for c, why in flagged.items())
    declared = [*human_map, *rating_map]
    every = ",".join([*human_map, *flagged]) if human_map else ",".join(flagged)
    raise ValueError(
        f"column(s) {shown} look like human scores but are not declared: {len(declared)} "
        f"human column(s) ({_fmt(declared, 8)}) were named, and by default every other column "
        f"of numbers would become a metric, so these would be analysed as metrics. Declare "
        f"each: as human scores (human=[{', '.join(repr(c) for c in [*human_map, *flagged])}]"
        f"; CLI --human \"{every}\"; or ratings= for ordinal ratings by rater), as metrics "
        f"(list them in metrics=; CLI --metrics), or leave them out (exclude=; CLI "
        f"--exclude).")


def _per_output(values: np.ndarray, keys: _keys.Keys, column: str) -> np.ndarray:
    """Row values as (system, item); rows repeated per run must agree where given."""
    s, i = keys.codes["system"], keys.codes["item"]
    out = np.full((len(keys.labels["system"]), len(keys.labels["item"])), np.nan)
    given = ~np.isnan(values)
    out[s[given], i[given]] = values[given]
    if "run" in keys.codes:
        back = out[s, i]
        differ = given & (back != values)
        if differ.any():
            k = int(np.argmax(differ))
            raise ValueError(
                f"column {column!r} differs between runs for system "
                f"{str(keys.labels['system'][s[k]])!r}, item "
                f"{str(keys.labels['item'][i[k]])!r} ({values[k]:g} vs {back[k]:g}); human "
                f"scores must be the same in every run.")
    return out


def _metric_coords(labels, kinds, reference_based, inputs):
    """The metric coordinates ``reference_based`` and ``inputs`` (or None when unknown)."""
    suffix = {m: col.inputs_from_name(m) for m in labels}
    inp = {m: suffix[m] or "" for m in labels}
    rb: dict[str, bool | None] = {
        m: ("ref" in suffix[m]) if suffix[m] else (True if kinds[m] == "lists" else None)
        for m in labels}
    if inputs is not None:
        unknown = [k for k in inputs if k not in inp]
        if unknown:
            raise ValueError(f"inputs names unknown metric(s) {_fmt(unknown)}.")
        bad = {k: v for k, v in inputs.items() if v not in col.INPUTS}
        if bad:
            raise ValueError(f"inputs must be one of {col.INPUTS}; got {bad!r}.")
        inp.update(inputs)
    if reference_based is not None:
        given = (dict(reference_based) if isinstance(reference_based, Mapping)
                 else {m: m in set(reference_based) for m in labels})
        unknown = [k for k in (reference_based if not isinstance(reference_based, Mapping)
                               else given) if k not in rb]
        if unknown:
            raise ValueError(f"reference_based names unknown metric(s) {_fmt(unknown)}.")
        rb.update({k: bool(v) for k, v in given.items()})
    coords = {}
    if any(v is not None for v in rb.values()):  # unknown ones: False (no suffix, no list)
        coords["reference_based"] = ("metric", np.array([bool(rb[m]) for m in labels]))
    if any(inp.values()):
        coords["inputs"] = ("metric", np.array([inp[m] for m in labels]))
    return coords


def _scores(df, chosen, flagged, left, keys, log, *, metrics, decimal, reference_based,
            inputs, metric_trait):
    """Parse the metric columns into ``score`` (with a ``reference`` dim when any column
    holds list cells). A metric without any number is an error when named, else left out."""
    labels = [c.strip() for c, _ in chosen]
    if len(set(labels)) != len(labels):
        dup = pd.Index(labels)[pd.Index(labels).duplicated()].unique()
        raise ValueError(f"metric columns {_fmt(dup)} have the same name after stripping "
                         f"surrounding whitespace; rename one.")
    parsed, kinds, kept = [], {}, []
    for (c, kind), m in zip(chosen, labels, strict=True):
        if kind == "lists":
            vals, lengths = col.parse_lists(df[c], c)
            detail = f"list cells, {int(lengths.min())} to {int(lengths.max())} references"
        else:
            vals = col.to_float(df[c], c, decimal=decimal, role="metric")[:, None]
            detail = "numbers" + (f"; looks like a human score ({flagged[c]})"
                                  if c in flagged else "")
        if np.isnan(vals).all():
            if metrics is not None:
                raise ValueError(f"metric column {c!r} has no number in any row (all "
                                 f"missing); leave it out of metrics=.")
            left[c] = "entirely empty"
            flagged.pop(c, None)
            continue
        log.append((c, "metric", detail))
        parsed.append(vals)
        kinds[m] = kind
        kept.append((c, kind, m))
    if not kept:
        if reference_based is not None or inputs is not None:
            raise ValueError("reference_based= and inputs= describe metrics, but no metric "
                             "was read.")
        return [], {}, {}
    labels = [m for _, _, m in kept]
    R = max(v.shape[1] for v in parsed) if "lists" in kinds.values() else 0
    run_labels = keys.labels.get("run", np.array(["1"]))
    ri = keys.codes.get("run", np.zeros(len(df), dtype=int))
    s, i = keys.codes["system"], keys.codes["item"]
    S, I = len(keys.labels["system"]), len(keys.labels["item"])
    arr = np.full((S, I, len(labels), len(run_labels), max(R, 1)), np.nan)
    for m, vals in enumerate(parsed):
        arr[s, i, m, ri, : vals.shape[1]] = vals
    coords: dict = {"metric": np.array(labels), "run": run_labels}
    if R:
        data = {"score": (SCORE_REF_DIMS, arr)}
        coords["reference"] = np.array([str(k + 1) for k in range(R)])
    else:
        data = {"score": (SCORE_DIMS, arr[..., 0])}
    coords.update(_metric_coords(labels, kinds, reference_based, inputs))
    if metric_trait is not None:
        coords["metric_trait"] = ("metric", np.array([str(metric_trait.get(m, ""))
                                                      for m in labels]))
    return [(c, k) for c, k, _ in kept], data, coords


def build_wide(df, *, source, system, item, id, id_split, run, metrics, ratings, human, scale,
               human_scale, exclude, reference_based, inputs, metric_trait,
               decimal) -> tuple[xr.Dataset, list[str]]:
    """The dataset (not yet validated) and the notes for the ReadWarning."""
    df = col.check_frame(df)
    keys = _keys.resolve(df, system=system, item=item, id=id, id_split=id_split, run=run)
    _keys.check_runs_cover(keys)
    log, notes = list(keys.log), list(keys.notes)
    taken = set(keys.columns.values())
    rating_map = _rating_map(df, ratings, taken)
    human_map = _human_map(df, human, taken | set(rating_map))
    excluded = ([] if exclude is None
                else col.match_columns(df.columns, exclude, "excluded column"))
    roles = [(c, "key") for c in taken] + [(c, "rating") for c in rating_map] + \
        [(c, "human score") for c in human_map] + [(c, "excluded") for c in excluded]
    seen: dict[str, str] = {}
    for c, role in roles:
        if c in seen and seen[c] != role:
            raise ValueError(f"column {c!r} is named as a {seen[c]} and as a {role}; give it "
                             f"one role.")
        seen[c] = role
    log += [(c, "left out", "exclude=") for c in excluded]
    taken |= set(rating_map) | set(human_map) | set(excluded)
    chosen, left, flagged = _choose_metrics(df, metrics, taken, decimal, log,
                                            _human_bounds(df, human_map, rating_map, decimal))
    if flagged and metrics is None and (human_map or rating_map):
        _refuse_undeclared(flagged, human_map, rating_map)

    S, I = len(keys.labels["system"]), len(keys.labels["item"])
    data_vars, coords = {}, {"system": keys.labels["system"], "item": keys.labels["item"]}
    rows = df.index.to_numpy()
    traits = list(dict.fromkeys([t for _, t in rating_map.values()] + list(human_map.values())))
    if rating_map:
        raters = list(dict.fromkeys(r for r, _ in rating_map.values()))
        arr = np.full((S, I, len(raters), len(traits)), np.nan)
        where: dict[tuple[str, str], str] = {}
        for c, (r, t) in rating_map.items():
            if (r, t) in where:
                raise ValueError(f"rating columns {where[(r, t)]!r} and {c!r} both map to "
                                 f"rater {r!r}, trait {t!r}.")
            where[(r, t)] = c
            vals = col.to_float(df[c], c, decimal=decimal, role="rating")
            col.check_scale(vals, scale, c, rows)
            arr[:, :, raters.index(r), traits.index(t)] = _per_output(vals, keys, c)
            log.append((c, "rating", f"rater {r!r}, trait {t!r}"))
        data_vars["rating"] = (RATING_DIMS, arr, {"scale_min": float(scale[0]),
                                                  "scale_max": float(scale[1])})
        coords["rater"] = np.array(raters)
    if human_map:
        arr = np.full((S, I, len(traits)), np.nan)
        owner: dict[str, str] = {}
        for c, t in human_map.items():
            if t in owner:
                raise ValueError(f"human columns {owner[t]!r} and {c!r} both map to trait {t!r}.")
            owner[t] = c
            if col.is_list_column(df[c]):
                raise ValueError(f"human column {c!r} holds list cells; a human score is one "
                                 f"number per output (average the list first).")
            if col.is_empty(df[c]):
                raise ValueError(f"human column {c!r} is entirely empty (no value in any row).")
            vals = col.to_float(df[c], c, decimal=decimal, role="human")
            arr[:, :, traits.index(t)] = _per_output(vals, keys, c)
            log.append((c, "judgment", f"trait {t!r}"))
        attrs = ({} if human_scale is None else {"scale_min": float(human_scale[0]),
                                                 "scale_max": float(human_scale[1])})
        data_vars["judgment"] = (("system", "item", "trait"), arr, attrs)
    if traits:
        coords["trait"] = np.array(traits)
    chosen, score_vars, score_coords = _scores(df, chosen, flagged, left, keys, log,
                                               metrics=metrics, decimal=decimal,
                                               reference_based=reference_based, inputs=inputs,
                                               metric_trait=metric_trait)
    data_vars.update(score_vars)
    coords.update(score_coords)
    if not data_vars:
        raise ValueError("no rating, human or metric columns were given or found.")
    log += [(c, "left out", why) for c, why in left.items()]
    order = {c: k for k, c in enumerate(df.columns)}
    log.sort(key=lambda e: order.get(e[0], -1))
    if left:
        notes.insert(0, f"left out {len(left)} column(s) not named anywhere: "
                        + ", ".join(f"{c!r} ({why})" for c, why in left.items()))
    if metrics is None and chosen:
        notes.append(f"{len(chosen)} metric(s) chosen by default (every other column of "
                     f"numbers or list cells; choose them with metrics=): "
                     + ", ".join(repr(c) for c, _ in chosen))
    if flagged:
        notes.append(f"column(s) {', '.join(f'{c!r} ({why})' for c, why in flagged.items())} "
                     f"look like ratings or human scores but were read as metrics; pass "
                     f"ratings= (ordinal, by rater) or human= (continuous) to read them as "
                     f"human scores")
    ds = xr.Dataset(data_vars, coords=coords)
    col.attach_log(ds, source, "wide", log)
    ds.attrs["metrics_chosen"] = "default" if metrics is None else "given"
    return ds, notes
