"""Build validated bayesmeta datasets from tables: wide, long, CSV, MetricEval.

A wide table has one row per output (system, item[, run]) and one column per metric, rating
or human score; a long table one row per observation. Every reader

* names each column's role: keys (``system=``, ``item=``, a composite ``id=`` split by
  ``id_split=``, ``run=``), ordinal ``ratings=`` (integers on ``scale``, by rater), continuous
  human scores ``human=`` (averages over annotators, pyramid recall, 0..1 judgments: the
  ``judgment`` variable) and ``metrics=``;
* classifies the columns not named: numbers and list-valued cells become metrics (when
  ``metrics=None``), text, empty and identifier columns are left out;
* reads list-valued cells (``"[0.51, 0.66]"``: one score per reference) into the ``reference``
  dim of ``score``;
* announces every decision the caller did not spell out in ONE :class:`ReadWarning`, and
  records all of them in ``ds.attrs["read_log"]`` (see :func:`read_report`);
* raises an error that names the column, row or value at fault; nothing is dropped silently.
  Missing cells become NaN and are counted in a :class:`~bayesmeta.data.schema.MissingDataWarning`.
"""

from __future__ import annotations

import difflib
import re
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr

from bayesmeta.data import _columns as col
from bayesmeta.data import _keys
from bayesmeta.data._columns import ReadWarning
from bayesmeta.data._wide import build_wide
from bayesmeta.data.schema import JUDGMENT_DIMS, RATING_DIMS, SCORE_DIMS, _fmt, validate

METRICEVAL_RATING = re.compile(r"^(?P<rater>Expert\.\d+)\.(?P<trait>[A-Za-z]+)$")
ColumnSpec = Sequence[str] | str | re.Pattern | None


DIRECTIONS = ("higher", "lower")


def orient(ds: xr.Dataset, directions: Mapping[str, str] | None = None,
           lower_is_better: Sequence[str] | str | None = None) -> xr.Dataset:
    """Declare which metrics are lower-is-better: the metric coordinate
    ``higher_is_better`` (bool).

    :func:`bayesmeta.data.select.metric_scores`, which hands metric scores to every
    analysis, negates the scores of a metric whose ``higher_is_better`` is False, so that
    distances, error rates and perplexities (BaryScore, DepthScore, InfoLM, TER) are ranked
    and correlated the right way round.

    Parameters
    ----------
    ds : xarray.Dataset
        With a ``score`` variable.
    directions : dict, optional
        ``{metric: "higher" | "lower"}`` (the spelling of
        :func:`bayesmeta.metric_corroboration`'s ``directions=``).
    lower_is_better : list of str or str, optional
        The lower-is-better metrics (a comma-separated string is split).

    Returns
    -------
    xarray.Dataset
        A copy with the coordinate (all True when neither argument names a lower metric and
        the dataset had no such coordinate: then unchanged).

    Raises
    ------
    ValueError
        Naming an unknown metric, a value other than "higher"/"lower", or a metric given
        both directions.

    Examples
    --------
    >>> import bayesmeta as bm
    >>> from bayesmeta.data.io import orient
    >>> ds = bm.datasets.simulated(n_systems=3, n_items=4)
    >>> ds = orient(ds, lower_is_better=["metric01.COH"])
    >>> bool(ds["higher_is_better"].sel(metric="metric01.COH"))
    False
    """
    if directions is None and lower_is_better is None:
        return ds
    if "score" not in ds:
        raise ValueError("directions= / lower_is_better= describe metrics, but no metric was "
                         "read.")
    labels = [str(m) for m in ds["metric"].values]
    given: dict[str, str] = {}
    if directions is not None:
        if not isinstance(directions, Mapping):
            raise TypeError(f"directions must be a dict {{metric: 'higher' | 'lower'}}, got "
                            f"{type(directions).__name__}.")
        bad = {str(k): v for k, v in directions.items() if v not in DIRECTIONS}
        if bad:
            raise ValueError(f"directions: a direction must be 'higher' or 'lower', got "
                             f"{bad!r}.")
        given.update({str(k).strip(): str(v) for k, v in directions.items()})
    if lower_is_better is not None:
        names = ([n.strip() for n in lower_is_better.split(",") if n.strip()]
                 if isinstance(lower_is_better, str) else [str(n).strip()
                                                           for n in lower_is_better])
        clash = [n for n in names if given.get(n) == "higher"]
        if clash:
            raise ValueError(f"metric(s) {_fmt(clash)} are given as 'higher' in directions= "
                             f"and in lower_is_better=; give one direction.")
        given.update(dict.fromkeys(names, "lower"))
    unknown = [n for n in given if n not in labels]
    if unknown:
        close = {n: difflib.get_close_matches(n, labels, n=2) for n in unknown}
        hint = "; ".join(f"{n!r}: did you mean {', '.join(map(repr, c))}?"
                         for n, c in close.items() if c)
        raise ValueError(f"directions / lower_is_better name unknown metric(s) "
                         f"{_fmt(unknown)} (metrics: {_fmt(labels, 8)})."
                         + (f" {hint}" if hint else ""))
    old = (ds["higher_is_better"].values.astype(bool) if "higher_is_better" in ds.coords
           else np.ones(len(labels), bool))
    hib = np.array([given.get(m, "higher" if old[k] else "lower") == "higher"
                    for k, m in enumerate(labels)])
    out = ds.assign_coords(higher_is_better=("metric", hib))
    lower = [m for m, h in zip(labels, hib, strict=True) if not h]
    log = str(out.attrs.get("read_log", ""))
    extra = "\n".join(f"{m}\tdirection\tlower is better (declared): analyses read its "
                      f"negation" for m in lower)
    if extra:
        out.attrs["read_log"] = (log + "\n" + extra) if log else extra
    return out


def _announce(ds: xr.Dataset, notes: list[str], source: str,
              directions: Mapping[str, str] | None = None,
              lower_is_better: Sequence[str] | str | None = None) -> xr.Dataset:
    """Issue the one ReadWarning of a read, record its notes in ``ds.attrs["read_notes"]``
    (so a report shows them, not only stderr), declare the metric directions, then
    validate (which counts missing values)."""
    ds = orient(ds, directions, lower_is_better)
    ds.attrs["read_notes"] = "\n".join(notes)
    if notes:
        warnings.warn(f"reading {source}:\n  - " + "\n  - ".join(notes), ReadWarning,
                      stacklevel=3)
    return validate(ds)


def from_wide(
    data: pd.DataFrame,
    *,
    system: str | None = None,
    item: str | None = None,
    id: str | None = None,
    id_split: str | re.Pattern | None = None,
    run: str | None = None,
    metrics: ColumnSpec = None,
    ratings: Mapping[str, tuple[str, str]] | str | re.Pattern | None = None,
    human: Mapping[str, str] | ColumnSpec = None,
    scale: tuple[float, float] = (1, 5),
    human_scale: tuple[float, float] | None = None,
    exclude: ColumnSpec = None,
    reference_based: Mapping[str, bool] | Sequence[str] | None = None,
    inputs: Mapping[str, str] | None = None,
    metric_trait: Mapping[str, str] | None = None,
    decimal: str = ".",
    directions: Mapping[str, str] | None = None,
    lower_is_better: Sequence[str] | str | None = None,
) -> xr.Dataset:
    r"""Build a dataset from a wide table: one row per output (system, item[, run]).

    Parameters
    ----------
    data : pandas.DataFrame
        The table.
    system : str, optional
        The column naming the system. Default: the column ``"system"`` if there is one,
        else the table is read as ONE system labelled ``"all"`` (a file of outputs with no
        system label, as paper 002's SFHOT, BAGEL, QAGS and WebNLG files are).
    item : str, optional
        The column naming the item (the input). Default: the column ``"item"``.
    id, id_split : str, optional
        A composite id holding item and system (``"2140_fragments"``,
        ``"0_Argmax Decoding"``): ``id`` names the column (default ``"id"`` when
        ``id_split`` is given); ``id_split`` is a separator, read as ``<item><sep><system>``
        split at the first separator, or a regular expression with named groups ``item``
        and ``system`` (e.g. ``r"^(?P<system>[^|]+)\|(?P<item>.+)$"``).
    run : str, optional
        The column labelling repeated metric runs (rows then repeat per run; the labels are
        kept as strings: ``run=0`` later means the run labelled ``"0"``). Human scores must
        be the same in every run.
    metrics : list of str, str or compiled regex, optional
        The metric columns: a list of names, one name, or a regular expression (a string
        that is not a column name) searched in every column name. ``[]`` reads no metric.
        Default: every column holding numbers or list cells that is not a key, rating,
        human score, excluded, empty or an identifier (``id``, ``story_id``,
        ``Unnamed: 0``); the chosen metrics are listed in the :class:`ReadWarning`.
    ratings : dict or str, optional
        Ordinal ratings by rater (variable ``rating``): a mapping
        ``{column: (rater, trait)}``, or a regular expression with named groups ``rater``
        and ``trait`` matched against every column name (e.g.
        ``r"^(?P<rater>Expert\.\d+)\.(?P<trait>\w+)$"``). Values must be integers on
        ``scale``; averaged scores belong in ``human=``.
    human : list of str, dict, str or compiled regex, optional
        Continuous human scores (variable ``judgment(system, item, trait)``): a list of
        columns (the trait is the column name), a mapping ``{column: trait}``, one name, or
        a regular expression (the trait is its named group ``trait`` if it has one, else the
        column name).
    scale : (min, max)
        The rating scale; ratings must be integers on it.
    human_scale : (min, max), optional
        Bounds of the human scores (checked, and stored as attrs of ``judgment``).
    exclude : list of str, str or compiled regex, optional
        Columns to leave out on purpose (recorded in the read log, not warned about).
    reference_based : dict or list of str, optional
        Metric coordinate ``reference_based``: ``{metric: bool}`` overrides what is inferred,
        a list names the reference-based metrics (all others are then reference-free).
        Inferred from paper 002's suffixes (``_ref_hypo``, ``_src_ref_hypo``: True;
        ``_src_hypo``: False) and from list cells (True); when some metric's status is
        known this way, the others (no suffix, one number per cell) are taken as
        reference-free. The coordinate is absent when nothing says.
    inputs : dict, optional
        Metric coordinate ``inputs`` (``"src"``, ``"ref"``, ``"src+ref"`` or ``""``),
        ``{metric: inputs}``; inferred from the same suffixes.
    metric_trait : dict, optional
        The trait each metric is meant to measure (metric coordinate ``metric_trait``).
    decimal : str
        The decimal mark of numbers held as text (``","`` for ``"0,51"``).
    directions, lower_is_better : optional
        Which metrics are lower-is-better (distances, error rates, perplexity):
        ``directions={metric: "higher" | "lower"}`` or ``lower_is_better=[metric, ...]``;
        recorded as the metric coordinate ``higher_is_better`` (see :func:`orient`), so
        that analyses read the negated score.

    Returns
    -------
    xarray.Dataset
        Validated (see :mod:`bayesmeta.data.schema`); ``attrs["read_log"]`` records what
        each column became and why (:func:`read_report`).

    Raises
    ------
    ValueError, TypeError
        Naming the column, row or value: an unknown or missing key column, missing key
        values, duplicate keys, duplicate column names, a non-numeric or malformed cell
        (with ``decimal=","`` suggested for decimal commas), a non-integer rating (with
        ``human=`` suggested), a named column that is entirely empty, infinite scores.
        When some human columns are named (``human=`` or ``ratings=``) and metrics are
        chosen by default, unnamed columns that look like human scores (by name, small
        integers, or averaged ratings on the declared human scores' scale) are an error
        that names them: declare them with ``human=``, ``metrics=`` or ``exclude=``, so
        that a forgotten human column never becomes a "metric". With no human column
        named, such columns are read as metrics and flagged in the warning and in
        ``ds.attrs["read_notes"]``.

    Warns
    -----
    ReadWarning
        Once, listing the columns left out, the metrics chosen by default, columns read as
        metrics that look like human scores, labels merged by normalisation, and a table
        read as one system.

    Examples
    --------
    >>> import pandas as pd, bayesmeta as bm
    >>> df = pd.DataFrame({"sys": ["A", "A", "B", "B"], "doc": [1, 2, 1, 2],
    ...                    "coherence": [2.67, 4.0, 3.33, 5.0],
    ...                    "bleu": ["[.1, .2]", "[.3]", "[.2, .25]", "[.4]"]})
    >>> ds = bm.from_wide(df, system="sys", item="doc", human=["coherence"], metrics=["bleu"])
    >>> dict(ds.sizes)
    {'system': 2, 'item': 2, 'trait': 1, 'metric': 1, 'run': 1, 'reference': 2}

    R equivalent: ``tidyr::pivot_longer()`` of the metric and rating columns.
    """
    df = data
    ds, notes = build_wide(
        df, source="a DataFrame", system=system, item=item, id=id, id_split=id_split, run=run,
        metrics=metrics, ratings=ratings, human=human, scale=scale, human_scale=human_scale,
        exclude=exclude, reference_based=reference_based, inputs=inputs,
        metric_trait=metric_trait, decimal=decimal,
    )
    return _announce(ds, notes, "a DataFrame", directions, lower_is_better)


def from_long(
    data: pd.DataFrame,
    *,
    value: str = "value",
    system: str | None = None,
    item: str | None = None,
    id: str | None = None,
    id_split: str | re.Pattern | None = None,
    rater: str | None = None,
    trait: str | None = None,
    metric: str | None = None,
    run: str | None = None,
    reference: str | None = None,
    scale: tuple[float, float] = (1, 5),
    human_scale: tuple[float, float] | None = None,
    decimal: str = ".",
    directions: Mapping[str, str] | None = None,
    lower_is_better: Sequence[str] | str | None = None,
) -> xr.Dataset:
    """Build a dataset from a long table: one row per observation.

    Give ``metric`` (and optionally ``run`` and ``reference``) for metric scores (variable
    ``score``), ``rater`` and ``trait`` for ordinal ratings (``rating``, integers on
    ``scale``), or ``trait`` alone for continuous human scores (``judgment``). Keys
    (``system``, ``item``, ``id``/``id_split``) work as in :func:`from_wide`. A ``value``
    column of list cells (``"[0.51, 0.66]"``) fills the ``reference`` dim. Combine several
    long tables with :func:`xarray.merge`; columns not named are left out (one
    :class:`ReadWarning` lists them). ``directions`` / ``lower_is_better`` declare
    lower-is-better metrics as in :func:`from_wide`.

    Examples
    --------
    >>> import pandas as pd, bayesmeta as bm
    >>> df = pd.DataFrame({"system": list("AABB"), "item": [1, 2, 1, 2],
    ...                    "rater": "r1", "trait": "coh", "value": [3, 4, 2, 5]})
    >>> bm.from_long(df, rater="rater", trait="trait")["rating"].shape
    (2, 2, 1, 1)

    R equivalent: ``tidyr::pivot_wider()``.
    """
    df = data
    ds, notes = _build_long(df, source="a DataFrame", value=value, system=system, item=item,
                            id=id, id_split=id_split, rater=rater, trait=trait, metric=metric,
                            run=run, reference=reference, scale=scale,
                            human_scale=human_scale, decimal=decimal)
    return _announce(ds, notes, "a DataFrame", directions, lower_is_better)


def _build_long(df, *, source, value, system, item, id, id_split, rater, trait, metric, run,
                reference, scale, human_scale, decimal) -> tuple[xr.Dataset, list[str]]:
    df = col.check_frame(df)
    if metric is None and trait is None:
        raise ValueError("give metric= (scores), rater= and trait= (ordinal ratings), or "
                         "trait= alone (continuous human scores).")
    if metric is not None and (rater is not None or trait is not None):
        raise ValueError("give metric= for scores or rater=/trait= for human scores, not both.")
    if metric is None and (run is not None or reference is not None):
        raise ValueError("run= and reference= label metric scores: give metric= too.")
    keys = _keys.resolve(df, system=system, item=item, id=id, id_split=id_split, run=None,
                         unique=False)
    if metric is not None:
        extra = {"metric": metric, "run": run, "reference": reference}
    else:
        extra = {"rater": rater, "trait": trait}
    named = {d: c for d, c in extra.items() if c is not None}
    col.require_columns(df.columns, [*named.values(), value], "column")
    for dim, c in named.items():
        keys.add(dim, _keys.labels(df[c], c, keys.notes))
        keys.columns[dim] = c
        keys.log.append((c, dim, "key"))
    _keys.check_runs_cover(keys)
    dims = [d for d in ("system", "item", *extra) if d in keys.codes]
    _keys.check_unique(keys, [d for d in dims if d != "system" or "system" in keys.columns],
                       df.index)
    series = df[value]
    if metric is not None and reference is None and col.is_list_column(series):
        vals, lengths = col.parse_lists(series, value)
        keys.labels["reference"] = np.array([str(k + 1) for k in range(vals.shape[1])])
        keys.log.append((value, "value", f"list cells, 0 to {int(lengths.max())} references"))
    else:
        vals = col.to_float(series, value, decimal=decimal)
        keys.log.append((value, "value", "numbers"))
    if metric is not None:
        var, out_dims = "score", [*SCORE_DIMS, *(["reference"] if "reference" in keys.labels
                                                 else [])]
    elif rater is not None:
        col.check_scale(vals, scale, value, df.index.to_numpy())
        var, out_dims = "rating", list(RATING_DIMS)
    else:
        var, out_dims = "judgment", list(JUDGMENT_DIMS)
    labels = {d: keys.labels.get(d, np.array(["1"])) for d in out_dims}
    arr = np.full(tuple(len(v) for v in labels.values()), np.nan)
    index = tuple(keys.codes[d] if d in keys.codes else np.zeros(len(df), dtype=int)
                  for d in out_dims if d != "reference" or reference is not None)
    arr[index] = vals  # list cells: (rows, references) fill the trailing dim
    attrs = {}
    if var == "rating":
        attrs = {"scale_min": float(scale[0]), "scale_max": float(scale[1])}
    elif var == "judgment" and human_scale is not None:
        attrs = {"scale_min": float(human_scale[0]), "scale_max": float(human_scale[1])}
    ds = xr.Dataset({var: (tuple(out_dims), arr, attrs)}, coords=labels)
    used = set(keys.columns.values()) | {value}
    left = [c for c in df.columns if c not in used]
    log = list(keys.log) + [(c, "left out", "not named") for c in left]
    notes = list(keys.notes)
    if left:
        notes.insert(0, f"left out {len(left)} column(s) not named: {_fmt(left, 20)}")
    col.attach_log(ds, source, "long", log)
    return ds, notes


def read_report(data: xr.Dataset) -> pd.DataFrame:
    """What each column of the file became and why, from ``ds.attrs["read_log"]``.

    Returns
    -------
    pandas.DataFrame
        Columns ``column``, ``role`` (``system``, ``item``, ``id``, ``run``, ``rating``,
        ``judgment``, ``metric``, ``left out``, ...) and ``detail``; ``.attrs["notes"]``
        lists the decisions the reader announced in its :class:`ReadWarning` (metrics
        chosen by default, columns that look like human scores, labels merged, a table
        read as one system), from ``ds.attrs["read_notes"]``.

    Examples
    --------
    >>> import pandas as pd, bayesmeta as bm
    >>> from bayesmeta.data import read_report
    >>> df = pd.DataFrame({"system": list("AB"), "item": [1, 1], "bleu": [.1, .2]})
    >>> read_report(bm.from_wide(df, metrics=["bleu"]))["role"].tolist()
    ['system', 'item', 'metric']
    """
    ds = data
    text = str(ds.attrs.get("read_log", ""))
    rows = [line.split("\t", 2) for line in text.splitlines() if line]
    out = pd.DataFrame(rows, columns=["column", "role", "detail"])
    out.attrs["notes"] = [n for n in str(ds.attrs.get("read_notes", "")).split("\n") if n]
    return out


#: magic numbers of files that are not text tables, and what they are
_BINARY_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
    (b"%PDF", "a PDF document"),
    (b"PK\x03\x04", "a ZIP archive (an .xlsx workbook is one)"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "an old Excel/Office file (.xls)"),
    (b"\x1f\x8b", "a gzip archive"),
    (b"\x89HDF", "an HDF5/netCDF4 file"),
    (b"CDF\x01", "a netCDF file"),
    (b"PAR1", "a Parquet file"),
)
_BOMS = (
    (b"\xef\xbb\xbf", "utf-8-sig"),
    (b"\xff\xfe\x00\x00", "utf-32"),
    (b"\x00\x00\xfe\xff", "utf-32"),
    (b"\xff\xfe", "utf-16"),
    (b"\xfe\xff", "utf-16"),
)


def detect_encoding(path: str | Path, encoding: str | None = None) -> str:
    """The text encoding of a CSV file, or an error saying why it cannot be read as text.

    With ``encoding`` given, the file must decode with it. Otherwise a byte-order mark
    decides (UTF-8 with BOM, UTF-16, UTF-32: Excel's "Unicode text" export is UTF-16), and a
    file without one must be UTF-8. Nothing is guessed beyond that: a file in another
    encoding (latin-1, cp1252) is an error that names the first undecodable byte, its line,
    and ``encoding=`` (CLI ``--encoding``).

    Raises
    ------
    ValueError
        Naming the file: a binary file (image, PDF, workbook, archive, HDF5: "not a text
        table"), bytes that do not decode.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from bayesmeta.data.io import detect_encoding
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = p.write_text("system,item,bleu\\nA,1,0.5\\n", encoding="utf-16")
    >>> detect_encoding(p)
    'utf-16'
    """
    path = Path(path)
    raw = path.read_bytes()
    name = repr(str(path))
    if not raw.strip():
        raise ValueError(f"{name} is empty: there is no header and no row to read.")
    for magic, what in _BINARY_MAGIC:
        if raw.startswith(magic):
            raise ValueError(f"{name} is not a text table: it looks like {what}. Save the "
                             f"data as CSV (comma- or tab-separated text) and read that.")
    bom = next((enc for mark, enc in _BOMS if raw.startswith(mark)), None)
    if encoding is None and bom is None and b"\x00" in raw[:4096]:
        raise ValueError(f"{name} is not a text table: it holds NUL bytes (a binary file, or "
                         f"UTF-16 text without a byte-order mark: then pass "
                         f"encoding='utf-16-le' (CLI --encoding utf-16-le)).")
    chosen = encoding or bom or "utf-8"
    try:
        raw.decode(chosen)
    except LookupError:
        raise ValueError(f"unknown encoding {chosen!r} (e.g. 'utf-8', 'utf-16', 'latin-1', "
                         f"'cp1252').") from None
    except UnicodeDecodeError as err:
        line = raw[: err.start].count(b"\n") + 1
        byte = raw[err.start: err.start + 1].hex()
        hint = ("pass encoding= (CLI --encoding) with the file's encoding, e.g. 'latin-1' or "
                "'cp1252' (Excel on Windows)" if encoding is None else
                "pass the file's actual encoding= (CLI --encoding)")
        raise ValueError(f"{name} is not {chosen} text: byte 0x{byte} at position "
                         f"{err.start} (line {line}) cannot be decoded; {hint}.") from None
    return chosen


def _header(path: Path, sep: str, encoding: str | None) -> list[str]:
    encoding = detect_encoding(path, encoding)
    head = pd.read_csv(path, sep=sep, encoding=encoding, header=None, nrows=1, dtype=str,
                       keep_default_na=False)
    names = [str(v) for v in head.iloc[0].tolist()] if len(head) else []
    index = pd.Index(names)
    if index.has_duplicates:
        dup = index[index.duplicated()].unique()
        where = {d: [k + 1 for k, n in enumerate(names) if n == d] for d in dup}
        shown = "; ".join(f"{d!r} (columns {', '.join(map(str, w))})" for d, w in where.items())
        raise ValueError(f"{str(path)!r} has duplicate column name(s) in its header: {shown}. "
                         f"Every column needs its own name; rename the copies.")
    return names


def read_csv(
    path: str | Path | Sequence[str | Path],
    *,
    format: str = "wide",
    system: str | None = None,
    item: str | None = None,
    id: str | None = None,
    id_split: str | re.Pattern | None = None,
    run: str | None = None,
    metrics: ColumnSpec = None,
    ratings: Mapping[str, tuple[str, str]] | str | re.Pattern | None = None,
    human: Mapping[str, str] | ColumnSpec = None,
    scale: tuple[float, float] = (1, 5),
    human_scale: tuple[float, float] | None = None,
    exclude: ColumnSpec = None,
    reference_based: Mapping[str, bool] | Sequence[str] | None = None,
    inputs: Mapping[str, str] | None = None,
    metric_trait: Mapping[str, str] | None = None,
    value: str | None = None,
    rater: str | None = None,
    trait: str | None = None,
    metric: str | None = None,
    reference: str | None = None,
    decimal: str = ".",
    sep: str = ",",
    encoding: str | None = None,
    na_values: Sequence[str] | None = None,
    directions: Mapping[str, str] | None = None,
    lower_is_better: Sequence[str] | str | None = None,
) -> xr.Dataset:
    """Read one CSV (or, for MetricEval, several: one per metric run) into a dataset.

    Parameters
    ----------
    path : path or list of paths
        With ``format="metriceval"`` a list is read as repeated runs of the metrics (the
        ``run`` dim, labelled ``"1"``, ``"2"``, ...); ratings are taken from the first file
        and must be identical in the others.
    format : {"wide", "long", "metriceval"}
        ``"wide"`` (one row per output; options as in :func:`from_wide`), ``"long"`` (one
        row per observation; ``value``, ``rater``, ``trait``, ``metric``, ``run``,
        ``reference`` as in :func:`from_long`) or ``"metriceval"`` (MetricEval's layout:
        ``test_id``, ``model_id``, ``Expert.k.TRAIT`` ratings, every other column a metric).
    system, item, id, id_split, run, metrics, ratings, human, scale, human_scale, exclude,
    reference_based, inputs, metric_trait
        See :func:`from_wide`.
    value, rater, trait, metric, reference
        Long format only; see :func:`from_long`.
    decimal, sep, na_values
        Passed to :func:`pandas.read_csv` (``decimal=","`` and ``sep=";"`` for files
        written with decimal commas); cells in ``na_values`` are missing.
    encoding : str, optional
        The file's text encoding. Default: from a byte-order mark (UTF-8 with BOM,
        UTF-16, UTF-32), else UTF-8; a file that is not valid UTF-8 (latin-1, cp1252) is
        an error naming the byte and line and asking for ``encoding=`` (see
        :func:`detect_encoding`). Binary files (images, PDF, workbooks) are an error
        saying they are not text tables.
    directions, lower_is_better
        Lower-is-better metrics, see :func:`from_wide` and :func:`orient`.

    Notes
    -----
    Key and label columns (``system``, ``item``, ``id``, ``run``, and in long tables
    ``rater``, ``trait``, ``metric``, ``reference``; MetricEval's ``test_id`` and
    ``model_id``) are read as text, so ids keep their leading zeros (``"007"``).
    MetricEval run files must hold the same systems and items (an error names the dim and
    the labels that differ) and the same expert rating columns.

    Examples
    --------
    >>> import bayesmeta as bm  # doctest: +SKIP
    >>> ds = bm.read_csv("SFHOT.csv", item="id",  # doctest: +SKIP
    ...                  human=["informativeness", "naturalness", "quality"])
    >>> ds = bm.read_csv("usr_topic_mean.csv", id="id", id_split="_",  # doctest: +SKIP
    ...                  human=["Understandable", "Natural", "Overall"])
    >>> ds = bm.read_csv(["run1.csv", "run2.csv"], format="metriceval")  # doctest: +SKIP

    R equivalent: ``readr::read_csv()`` followed by the pivots of :func:`from_wide`.
    """
    paths = [path] if isinstance(path, (str, Path)) else list(path)
    if not paths:
        raise ValueError("path is empty: give at least one CSV file.")
    for p in paths:
        if not Path(p).is_file():
            raise FileNotFoundError(f"CSV file not found: {str(p)!r}.")
    wide_opts = dict(system=system, item=item, id=id, id_split=id_split, run=run,
                     metrics=metrics, ratings=ratings, human=human, human_scale=human_scale,
                     exclude=exclude, reference_based=reference_based, inputs=inputs,
                     metric_trait=metric_trait)
    long_opts = dict(value=value, rater=rater, trait=trait, metric=metric,
                     reference=reference)
    if format == "metriceval":
        given = [k for k, v in {**wide_opts, **long_opts}.items() if v is not None]
        if given:
            raise TypeError(f"format='metriceval' fixes the columns; unexpected argument(s) "
                            f"{', '.join(given)}.")
        return orient(_read_metriceval(paths, scale=scale, encoding=encoding), directions,
                      lower_is_better)
    if format not in ("wide", "long"):
        raise ValueError(f"format must be 'wide', 'long' or 'metriceval', got {format!r}.")
    if format == "wide" and any(v is not None for v in long_opts.values()):
        wrong = [k for k, v in long_opts.items() if v is not None]
        raise TypeError(f"{', '.join(wrong)} belong to format='long'; a wide table names "
                        f"its metric and human columns with metrics=, human=, ratings=.")
    if format == "long":
        wrong = [k for k in ("metrics", "ratings", "human", "exclude", "reference_based",
                             "inputs", "metric_trait") if wide_opts[k] is not None]
        if wrong:
            raise TypeError(f"{', '.join(wrong)} belong to format='wide'; a long table names "
                            f"its columns with value=, metric=, rater=, trait=.")
    if len(paths) != 1:
        raise ValueError(f"format={format!r} reads one file; got {len(paths)}.")
    p = Path(paths[0])
    encoding = detect_encoding(p, encoding)
    names = _header(p, sep, encoding)
    if len(names) == 1 and sep == "," and (";" in names[0] or "\t" in names[0]):
        guess = ";" if ";" in names[0] else "\\t"
        raise ValueError(f"{str(p)!r} has a single column {names[0][:60]!r}: it seems to be "
                         f"separated by {guess!r}; pass sep={guess!r}"
                         + (" (and decimal=',' for decimal commas)." if guess == ";" else "."))
    if format == "wide":
        label_columns = [system or "system", item or "item", id or "id", run]
    else:
        label_columns = [system or "system", item or "item", id or "id", rater, trait, metric,
                         run, reference]
    # labels are read as written: ids "007" stay "007" (not the number 7)
    dtype = {c: str for c in label_columns if c is not None and c in names}
    df = pd.read_csv(p, sep=sep, decimal=decimal, encoding=encoding, na_values=na_values,
                     dtype=dtype)
    source = repr(str(p))
    if format == "wide":
        ds, notes = build_wide(df, source=source, scale=scale, decimal=decimal, **wide_opts)
    else:
        ds, notes = _build_long(
            df, source=source, value=value or "value", system=system, item=item, id=id,
            id_split=id_split, rater=rater, trait=trait, metric=metric, run=run,
            reference=reference, scale=scale, human_scale=human_scale, decimal=decimal)
    return _announce(ds, notes, source, directions, lower_is_better)


def _read_metriceval(paths: Sequence[str | Path], *, scale: tuple[float, float],
                     encoding: str | None = None) -> xr.Dataset:
    frames = []
    for k, p in enumerate(paths):
        enc = detect_encoding(Path(p), encoding)
        _header(Path(p), ",", enc)
        # keys as written: test_id "007" stays "007"
        df = pd.read_csv(p, encoding=enc, dtype={"test_id": str, "model_id": str})
        col.require_columns(df.columns, ["test_id", "model_id"],
                            f"MetricEval key column (in {str(p)!r})")
        frames.append(df.assign(__run__=str(k + 1)))
    rating_cols = [c for c in frames[0].columns if METRICEVAL_RATING.match(str(c))]
    metric_cols = [
        c for c in frames[0].columns
        if c not in ("test_id", "model_id", "__run__", *rating_cols)
    ]
    for k, df in enumerate(frames[1:], start=2):
        where = f"run {k} ({str(paths[k - 1])!r})"
        missing = [c for c in metric_cols if c not in df.columns]
        if missing:
            raise ValueError(f"{where} lacks metric column(s) {_fmt(missing)}.")
        missing = [c for c in rating_cols if c not in df.columns]
        if missing:
            raise ValueError(f"{where} lacks the expert rating column(s) {_fmt(missing)} of "
                             f"run 1 ({str(paths[0])!r}); every run file must hold the same "
                             f"ratings.")
        for key, dim in (("test_id", "item"), ("model_id", "system")):
            first = set(_keys.labels(frames[0][key], key, []))
            this = set(_keys.labels(df[key], key, []))
            if first != this:
                lacks, extra = sorted(first - this), sorted(this - first)
                parts = ([f"lacks {len(lacks)} of run 1's {key}(s) {_fmt(lacks, 8)}"]
                         if lacks else []) + ([f"has {len(extra)} {key}(s) run 1 lacks "
                                               f"{_fmt(extra, 8)}"] if extra else [])
                shared = "share no label" if not first & this else "differ"
                raise ValueError(
                    f"the runs {shared} on dim {dim!r} (column {key!r}): {where} "
                    f"{' and '.join(parts)}. Every run must score the same {dim}s; a "
                    f"stability over runs needs the same outputs in each.")
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
    source = ", ".join(repr(str(p)) for p in paths)
    ds, notes = build_wide(
        df, source=source, system="model_id", item="test_id", id=None, id_split=None,
        run="__run__", metrics=metric_cols, ratings=ratings or None, human=None, scale=scale,
        human_scale=None, exclude=None, reference_based=None, inputs=None,
        metric_trait=metric_trait, decimal=".",
    )
    ds.attrs["format"] = "metriceval"
    return _announce(ds, notes, source)


def _metriceval_trait(metric: str) -> str:
    m = re.search(r"\.(COH|CON|FLU|REL)$", metric)
    return m.group(1) if m else ""
