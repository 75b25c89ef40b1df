"""Column handling for the readers: what each column of a table is, and parsing its cells.

Internal to :mod:`bayesmeta.data.io`. A column of a wide table is a key (system, item, a
composite id, run), ordinal ratings, continuous human judgments, a metric (numbers, or
list-valued cells with one score per reference), or it is left out. Columns named by the
caller get the role they were given; the rest are classified here from their values and
names (:func:`classify_unnamed`), and every decision is reported back so that the reader can
announce it in one :class:`ReadWarning` and record it in ``ds.attrs["read_log"]``.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence

import numpy as np
import pandas as pd
import xarray as xr

from bayesmeta.data.schema import _fmt

#: the label of the only system of a table that has no system column
SINGLE_SYSTEM = "all"


class ReadWarning(UserWarning):
    """Issued once per read when the reader decided something the caller did not spell out:
    columns left out (text, empty, identifiers), metrics chosen by default, columns that look
    like human scores but were read as metrics, labels merged by normalisation, a table
    read as a single system. The same decisions are in ``ds.attrs["read_log"]`` (per
    column) and ``ds.attrs["read_notes"]`` (the warning's lines), so that a report shows
    them too (:func:`bayesmeta.data.io.read_report`)."""


# ----------------------------------------------------------------------------- names
_ID_TOKENS = {"id", "ids", "idx", "index", "uid", "uuid"}
_HUMAN_TOKENS = {
    "rating", "ratings", "human", "humans", "expert", "experts", "annotator", "annotators",
    "annotation", "annotations", "rater", "raters", "judgment", "judgement", "judgments",
    "judgements", "likert", "worker", "workers", "turker", "mturk", "crowd", "mos",
    "litepyramid",
}
_TRAIT_WORDS = {
    "coherence", "coherent", "consistency", "consistent", "fluency", "fluent", "relevance",
    "relevant", "informativeness", "informative", "naturalness", "natural", "quality",
    "overall", "grammar", "grammaticality", "grammatical", "semantics", "adequacy",
    "faithfulness", "factuality", "factual", "fact", "engaging", "engagement", "empathy",
    "surprise", "complexity", "understandable", "understandability", "interesting",
    "interestingness", "specificity", "correctness", "readability", "clarity", "helpfulness",
    "harmlessness", "accuracy", "maintains", "context", "uses", "knowledge", "coh", "con",
    "flu", "rel", "inf", "nat",
}
_AGGREGATE_TOKENS = {"mean", "avg", "average", "median", "agg", "aggregated"}
_TOKEN = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


def _tokens(name: str) -> list[str]:
    return [t.lower() for t in _TOKEN.findall(str(name))]


def looks_like_identifier(name: str) -> bool:
    """``id``, ``story_id``, ``StoryID``, ``Story ID``, ``index``, pandas' ``Unnamed: 0``."""
    if re.fullmatch(r"\s*unnamed:\s*\d+\s*", str(name), flags=re.IGNORECASE):
        return True
    tokens = _tokens(name)
    return bool(tokens) and tokens[-1] in _ID_TOKENS


def looks_like_human_name(name: str) -> bool:
    """Names such as ``Expert.1.COH``, ``human_score``, ``coherence``, ``Relevance_2``,
    ``fluency_mean`` (but not ``unieval_coherence``: a metric named after a trait)."""
    tokens = _tokens(name)
    if any(t in _HUMAN_TOKENS for t in tokens):
        return True
    words = [t for t in tokens if not t.isdigit() and t not in _AGGREGATE_TOKENS]
    return bool(words) and all(t in _TRAIT_WORDS for t in words)


def rating_like_values(values: np.ndarray) -> bool:
    """Only small integers on a rating-like range (0..10, 2 to 11 distinct values)."""
    finite = values[np.isfinite(values)]
    if finite.size == 0 or not np.all(finite == np.round(finite)):
        return False
    distinct = np.unique(finite)
    return finite.min() >= 0 and finite.max() <= 10 and 2 <= distinct.size <= 11


def averaged_rating_like(values: np.ndarray, bounds: tuple[float, float]) -> bool:
    """Values on the scale of declared human scores: within ``bounds``, 2 to 60 distinct
    values, all multiples of ``1/k`` for some ``k`` in 1..10 (a mean of up to 10 ratings),
    e.g. ``2.333``, ``3.0``, ``0.667`` for means of 3 raters."""
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return False
    lo, hi = bounds
    distinct = np.unique(finite)
    if not (2 <= distinct.size <= 60) or finite.min() < lo - 1e-9 or finite.max() > hi + 1e-9:
        return False
    return any(np.all(np.abs(distinct * k - np.round(distinct * k)) < 1e-6 * k)
               and np.unique(np.round(distinct * k)).size >= 2  # not all ~0 (1e-78 BLEU)
               for k in range(1, 11))


# ----------------------------------------------------------------------------- metrics
_INPUTS_SUFFIX = re.compile(r"_(?P<inputs>src_ref|ref_src|src|ref)_hypo(?:_[A-Za-z0-9]+)?$")
INPUTS = ("src", "ref", "src+ref", "")


def inputs_from_name(name: str) -> str | None:
    """The inputs a metric used, from paper 002's column suffixes: ``_src_hypo`` -> "src",
    ``_ref_hypo`` -> "ref", ``_src_ref_hypo`` -> "src+ref" (an optional ``_P``/``_R``/``_F``
    may follow); None when the name does not say."""
    m = _INPUTS_SUFFIX.search(str(name))
    if m is None:
        return None
    found = m.group("inputs")
    return "src+ref" if found in ("src_ref", "ref_src") else found


# ----------------------------------------------------------------------------- cells
_NUMBER = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$|^[-+]?(nan|inf|infinity)$",
                     re.IGNORECASE)
_DECIMAL_COMMA = re.compile(r"^[-+]?\d+,\d+([eE][-+]?\d+)?$")
_MISSING_TOKENS = ("none", "null", "na", "nan", "")


def _text(series: pd.Series) -> pd.Series:
    """Non-missing cells as stripped strings (index kept)."""
    s = series[series.notna()]
    return s.astype(str).str.strip()


def is_numeric_dtype(series: pd.Series) -> bool:
    return (pd.api.types.is_numeric_dtype(series)
            and not pd.api.types.is_bool_dtype(series))


def is_empty(series: pd.Series) -> bool:
    """Every cell missing or blank."""
    if is_numeric_dtype(series):
        return bool(series.isna().all())
    return bool((_text(series) == "").all())


def is_list_column(series: pd.Series) -> bool:
    """A text column whose cells are ``[...]`` lists (bare numbers and blanks allowed)."""
    if is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series):
        return False
    txt = _text(series)
    txt = txt[txt != ""]
    if txt.empty:
        return False
    listed = txt.str.startswith("[") & txt.str.endswith("]")
    return bool(listed.any()) and bool((listed | txt.str.match(_NUMBER)).all())


def decimal_comma_example(series: pd.Series) -> str | None:
    """A cell like ``"0,51"`` when every non-blank cell is a number, some with a decimal
    comma; else None."""
    if is_numeric_dtype(series):
        return None
    txt = _text(series)
    txt = txt[txt != ""]
    comma = txt.str.match(_DECIMAL_COMMA)
    if txt.empty or not comma.any() or not (comma | txt.str.match(_NUMBER)).all():
        return None
    return str(txt[comma].iloc[0])


def numeric_share(series: pd.Series) -> float:
    """The share of non-blank cells that parse as numbers."""
    txt = _text(series)
    txt = txt[txt != ""]
    return float(txt.str.match(_NUMBER).mean()) if len(txt) else 0.0


def to_float(series: pd.Series, column: str, *, decimal: str = ".", role: str = "") -> np.ndarray:
    """A column as floats; blank cells are NaN. A cell that is not a number raises a
    ``TypeError`` naming the column, row and value (and suggesting ``decimal=","`` when
    the column holds decimal commas)."""
    if is_numeric_dtype(series):
        return series.to_numpy(dtype=float)
    if pd.api.types.is_bool_dtype(series):
        return series.to_numpy(dtype=float)
    txt = series.astype(object).where(series.notna(), None)
    txt = pd.Series([None if v is None else str(v).strip() for v in txt], index=series.index,
                    dtype=object)
    if decimal != ".":
        txt = txt.str.replace(decimal, ".", regex=False)
    blank = txt.isna() | (txt == "")
    converted = pd.to_numeric(txt.where(~blank, None), errors="coerce")
    bad = converted.isna() & ~blank & ~txt.fillna("").str.lower().isin(["nan"])
    if bad.any():
        row = bad.idxmax()
        value = series.loc[row]
        what = f"{role} column" if role else "column"
        if decimal == "." and decimal_comma_example(series) is not None:
            raise TypeError(
                f"{what} {column!r} looks like numbers with decimal commas ({value!r} in row "
                f"{row}); pass decimal=',' to read them."
            )
        raise TypeError(
            f"{what} {column!r} has non-numeric value {value!r} in row {row}; "
            f"{int(bad.sum())} such value(s) in all."
        )
    return converted.to_numpy(dtype=float)


def parse_lists(series: pd.Series, column: str) -> tuple[np.ndarray, np.ndarray]:
    """List cells (``"[0.51, 0.66]"``) as a NaN-padded ``(rows, longest)`` array, and the
    number of elements of each cell. A bare number is a one-element list; a blank cell or
    ``[]`` has none. Elements ``nan``/``None``/``null`` are missing.

    All cells are split and converted at once (no per-cell ``eval``); a malformed cell
    raises a ``ValueError`` naming the column, row and value.
    """
    n = len(series)
    raw = series.astype(object).where(series.notna(), None).to_numpy()
    text = np.array(["" if v is None else str(v).strip() for v in raw], dtype=object)
    bracketed = np.array([t.startswith("[") and t.endswith("]") for t in text])
    inner = np.array([t[1:-1] if b else t for t, b in zip(text, bracketed, strict=True)],
                     dtype=object)
    blank = np.array([not t.strip() for t in inner])
    lengths = np.where(blank, 0, np.array([t.count(",") + 1 for t in inner]))
    tokens = ",".join(inner[~blank]).split(",") if (~blank).any() else []
    tokens = [t.strip() for t in tokens]
    tokens = ["nan" if t.lower() in _MISSING_TOKENS else t for t in tokens]
    try:
        flat = np.array(tokens, dtype=float)
    except ValueError:
        _raise_bad_list(series, column, inner, blank)
        raise  # pragma: no cover  (_raise_bad_list always raises)
    out = np.full((n, int(lengths.max()) if n else 0), np.nan)
    rows = np.repeat(np.arange(n), lengths)
    cols = np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    out[rows, cols] = flat
    return out, lengths


def _raise_bad_list(series: pd.Series, column: str, inner: np.ndarray, blank: np.ndarray) -> None:
    for k in np.flatnonzero(~blank):
        for tok in str(inner[k]).split(","):
            t = tok.strip()
            if t.lower() in _MISSING_TOKENS:
                continue
            try:
                float(t)
            except ValueError:
                raise ValueError(
                    f"column {column!r} has a malformed list cell in row {series.index[k]}: "
                    f"{series.iloc[k]!r} (element {t!r} is not a number); list cells must "
                    f"look like '[0.51, 0.66]'."
                ) from None
    raise ValueError(f"column {column!r} has a malformed list cell.")  # pragma: no cover


# ----------------------------------------------------------------------------- naming
def require_columns(columns: Sequence[str], wanted: Sequence[str], what: str = "column",
                    hint: str = "") -> None:
    """Raise a ``ValueError`` naming the first column of ``wanted`` that is not in
    ``columns``, with close matches."""
    have = [str(c) for c in columns]
    for col in wanted:
        if col not in have:
            close = difflib.get_close_matches(str(col), have, n=3)
            near = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
            raise ValueError(f"unknown {what} {col!r}: it is not in the data.{near}{hint}")


def match_columns(columns: Sequence[str], spec, what: str) -> list[str]:
    """Columns named by ``spec``: a list of names, one name, or a regular expression (a
    string that is not a column name, or a compiled pattern) searched in every name."""
    have = [str(c) for c in columns]
    if isinstance(spec, re.Pattern) or (isinstance(spec, str) and spec not in have):
        pattern = spec if isinstance(spec, re.Pattern) else _compile(spec, what)
        found = [c for c in have if pattern.search(c)]
        if not found:
            close = difflib.get_close_matches(str(pattern.pattern), have, n=3)
            near = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
            raise ValueError(f"unknown {what} {pattern.pattern!r}: no column has that name "
                             f"or matches it as a regular expression.{near}")
        return found
    names = [spec] if isinstance(spec, str) else [str(c) for c in spec]
    require_columns(have, names, what)
    if len(set(names)) != len(names):
        dup = pd.Index(names)[pd.Index(names).duplicated()].unique()
        raise ValueError(f"{what}s list a column twice: {_fmt(dup)}.")
    return names


def _compile(pattern: str, what: str) -> re.Pattern:
    try:
        return re.compile(pattern)
    except re.error as err:
        raise ValueError(f"{what} {pattern!r} is neither a column name nor a valid regular "
                         f"expression ({err}).") from None


# ----------------------------------------------------------------------------- checks
def check_scale(values: np.ndarray, scale: tuple[float, float], column: str, rows) -> None:
    lo, hi = scale
    finite = ~np.isnan(values)
    off = finite & ((values < lo) | (values > hi) | (values != np.round(values)))
    if off.any():
        i = int(np.argmax(off))
        fractional = bool((finite & np.isfinite(values) & (values != np.round(values))).any())
        hint = (" If these are averaged scores (means over annotators), read them as "
                "continuous human scores with human= (wide) or trait= alone (long)."
                if fractional else " If the scale is wider, pass scale=(min, max).")
        raise ValueError(
            f"column {column!r} has rating {values[i]:g} in row {rows[i]}, which is not an "
            f"integer on the scale {lo:g}..{hi:g}; {int(off.sum())} such value(s) in all."
            f"{hint}"
        )


def check_frame(df) -> pd.DataFrame:
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"df must be a pandas DataFrame, got {type(df).__name__}.")
    names = pd.Index([str(c) for c in df.columns])
    if names.has_duplicates:
        dup = names[names.duplicated()].unique()
        raise ValueError(f"duplicate column name(s) {_fmt(dup)}: every column needs its own "
                         f"name; rename or drop the copies.")
    out = df.copy(deep=False)
    out.columns = list(names)
    return out


def attach_log(ds: xr.Dataset, source: str, fmt: str, log: list[tuple[str, str, str]]) -> None:
    ds.attrs.update(
        source=source,
        format=fmt,
        read_log="\n".join(f"{c}\t{role}\t{detail}" for c, role, detail in log),
    )
