"""Score (original, corrupted) pairs against their references with one or more metrics.

The output is the score table that :func:`bayesmeta.metric_unit_tests` tests: one row per
pair, metric and number of references, with columns ``corruption``, ``category``,
``metric``, ``n_refs``, ``pair_id``, ``score_original``, ``score_corrupted`` and
``direction``. Scores produced elsewhere (a Java metric, a paid API) can be handed to
:func:`bayesmeta.metric_unit_tests` in the same shape.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from bayesmeta.text.corruptions import CATEGORIES
from bayesmeta.text.metrics import Metric, get_metric

SCORE_COLUMNS = ("corruption", "category", "metric", "n_refs", "pair_id", "score_original",
                 "score_corrupted")
PAIR_COLUMNS = ("corruption", "pair_id", "original", "corrupted")


def _plain(value: Any) -> Any:
    """A NumPy scalar as the Python value (for error messages)."""
    return value.item() if isinstance(value, np.generic) else value


def _first(frame: pd.DataFrame) -> dict[str, Any]:
    """The first row of a frame with plain Python values (for error messages)."""
    return {k: _plain(v) for k, v in frame.iloc[0].items()}


def check_pairs(pairs: pd.DataFrame) -> pd.DataFrame:
    """Validate a pairs table (``corruption``, ``pair_id``, ``original``, ``corrupted``,
    optional ``category``) and fill the category of known corruptions."""
    missing = [c for c in PAIR_COLUMNS if c not in pairs.columns]
    if missing:
        raise ValueError(f"the pairs table lacks column(s) {missing} (needs "
                         f"{', '.join(PAIR_COLUMNS)}).")
    out = pairs.copy()
    for col in ("original", "corrupted"):
        bad = out[col].map(lambda v: not isinstance(v, str))
        if bad.any():
            i = bad.idxmax()
            raise ValueError(f"column {col!r} holds a non-text value {_plain(out.loc[i, col])!r} "
                             f"(row {i!r}, corruption {_plain(out.loc[i, 'corruption'])!r}).")
    if "category" not in out.columns:
        unknown = sorted(set(out["corruption"]) - set(CATEGORIES))
        if unknown:
            raise ValueError(f"corruption(s) {unknown} are not built in: give a 'category' "
                             "column (meaning_altering, meaning_preserving, fluency, ...).")
        out["category"] = out["corruption"].map(CATEGORIES)
    dup = out.duplicated(["corruption", "pair_id"])
    if dup.any():
        i = dup.idxmax()
        raise ValueError(f"duplicate pair_id {_plain(out.loc[i, 'pair_id'])!r} in corruption "
                         f"{_plain(out.loc[i, 'corruption'])!r}.")
    return out


def reference_sets(references: Any, pairs: pd.DataFrame) -> pd.DataFrame:
    """The references of every pair as a frame ``corruption, pair_id, n_refs, refs`` (a
    tuple of strings), from the accepted forms:

    * a DataFrame with ``pair_id`` and ``reference`` (optional ``n_refs``; optional
      ``corruption``, else a pair's references are shared by its corruptions);
    * a list of reference lists aligned with the rows of ``pairs`` (with texts: aligned
      with the texts);
    * a dict ``{n_refs: either of the above}``.
    """
    if isinstance(references, Mapping):
        frames = []
        for n, refs in references.items():
            sub = reference_sets(refs, pairs)
            frames.append(sub.assign(n_refs=n))
        return pd.concat(frames, ignore_index=True)
    if isinstance(references, pd.DataFrame):
        need = [c for c in ("pair_id", "reference") if c not in references.columns]
        if need:
            raise ValueError(f"the references table lacks column(s) {need}.")
        refs = references.copy()
        by_corr = "corruption" in refs.columns
        keys = ["corruption", "pair_id"] if by_corr else ["pair_id"]
        if "n_refs" not in refs.columns:
            counts = refs.groupby(keys)["reference"].transform("size")
            refs["n_refs"] = "all" if counts.nunique() > 1 else int(counts.iloc[0])
        bad = refs["reference"].map(lambda v: not isinstance(v, str))
        if bad.any():
            i = bad.idxmax()
            raise ValueError(f"column 'reference' holds a non-text value "
                             f"{_plain(refs.loc[i, 'reference'])!r} (pair_id "
                             f"{_plain(refs.loc[i, 'pair_id'])!r}).")
        grouped = refs.groupby([*keys, "n_refs"], sort=False)["reference"].agg(tuple)
        grouped = grouped.rename("refs").reset_index()
        return pairs[["corruption", "pair_id"]].merge(grouped, on=keys, how="inner")
    if isinstance(references, Sequence) and not isinstance(references, str):
        refs = [(r,) if isinstance(r, str) else tuple(r) for r in references]
        lengths = {len(r) for r in refs}
        n = lengths.pop() if len(lengths) == 1 else "all"
        positions = np.asarray(pairs["_row"] if "_row" in pairs.columns
                               else np.arange(len(pairs)))
        if len(refs) <= int(np.max(positions, initial=-1)):
            raise ValueError(f"{len(refs)} reference lists for {int(np.max(positions)) + 1} "
                             "texts: give one list of references per text.")
        return pd.DataFrame({"corruption": pairs["corruption"].values,
                             "pair_id": pairs["pair_id"].values, "n_refs": n,
                             "refs": [refs[int(k)] for k in positions]})
    raise TypeError(f"references must be a DataFrame, a list of reference lists or a dict "
                    f"{{n_refs: ...}}, got {type(references).__name__}.")


def _fast_index(pairs: pd.DataFrame, refsets: pd.DataFrame) -> pd.DataFrame:
    merged = refsets.merge(pairs, on=["corruption", "pair_id"], how="inner")
    have = refsets[["corruption", "pair_id"]].drop_duplicates()
    missing = pairs.merge(have, on=["corruption", "pair_id"], how="left", indicator=True)
    lost = missing[missing["_merge"] == "left_only"]
    if len(lost):
        r = _first(lost)
        raise ValueError(f"{len(lost)} pair(s) have no references, e.g. pair_id "
                         f"{r['pair_id']!r} of corruption {r['corruption']!r}.")
    empty = merged["refs"].map(len) == 0
    if empty.any():
        r = _first(merged[empty])
        raise ValueError(f"pair_id {r['pair_id']!r} of corruption {r['corruption']!r} has an "
                         "empty reference list.")
    return merged


def score_pairs(
    pairs: pd.DataFrame,
    references: Any,
    metrics: Sequence[str | Metric | Any],
    *,
    progress: bool | None = None,
) -> pd.DataFrame:
    """Score every pair's original and corrupted text against its references.

    Parameters
    ----------
    pairs : pandas.DataFrame
        ``corruption``, ``pair_id``, ``original``, ``corrupted`` (``category`` optional
        for built-in corruptions).
    references : DataFrame, list of reference lists or dict
        See :func:`reference_sets`.
    metrics : list
        Built-in names, :class:`~bayesmeta.text.metrics.Metric` objects or callables.
    progress : bool, optional
        Progress bar (tqdm); default: shown when more than 20,000 texts are scored.

    Returns
    -------
    pandas.DataFrame
        The score table (:data:`SCORE_COLUMNS` and ``direction``); ``attrs["notes"]``
        says which implementation (and tokenizer) each metric used.
    """
    pairs = check_pairs(pairs)
    mets = [get_metric(m) for m in metrics]
    names = [m.name for m in mets]
    if len(set(names)) != len(names):
        raise ValueError(f"metric names must differ, got {names}.")
    work = _fast_index(pairs, reference_sets(references, pairs))
    total = 2 * len(work) * len(mets)
    show = total > 20000 if progress is None else bool(progress)
    bar = None
    if show:
        from tqdm.auto import tqdm

        bar = tqdm(total=total, desc="scoring", unit="text")
    frames = []
    notes = []
    for m in mets:
        orig = np.full(len(work), np.nan)
        corr = np.full(len(work), np.nan)
        if m.corpus:
            for _, idx in work.groupby(["corruption", "n_refs"], sort=False).indices.items():
                refs = [list(work["refs"].iloc[i]) for i in idx]
                orig[idx] = m([work["original"].iloc[i] for i in idx], refs)
                corr[idx] = m([work["corrupted"].iloc[i] for i in idx], refs)
                if bar is not None:
                    bar.update(2 * len(idx))
        else:
            keys = list(zip(work["original"], work["refs"], strict=True)) + list(
                zip(work["corrupted"], work["refs"], strict=True))
            uniq = list(dict.fromkeys(keys))
            scores: dict[tuple[str, tuple[str, ...]], float] = {}
            step = 2000
            for k in range(0, len(uniq), step):
                chunk = uniq[k: k + step]
                vals = m([c for c, _ in chunk], [list(r) for _, r in chunk])
                scores.update(zip(chunk, vals, strict=True))
                if bar is not None:
                    bar.update(len(chunk) * len(keys) / max(len(uniq), 1))
            orig = np.array([scores[k] for k in keys[: len(work)]])
            corr = np.array([scores[k] for k in keys[len(work):]])
        frames.append(pd.DataFrame({
            "corruption": work["corruption"].values, "category": work["category"].values,
            "metric": m.name, "n_refs": work["n_refs"].values, "pair_id": work["pair_id"].values,
            "score_original": orig, "score_corrupted": corr, "direction": m.direction}))
        if m.note:
            notes.append(f"{m.name}: {m.note}.")
    if bar is not None:
        bar.close()
    out = pd.concat(frames, ignore_index=True)
    out.attrs["notes"] = notes
    return out





def cached_scores(
    pairs: pd.DataFrame,
    references: pd.DataFrame,
    metrics: Sequence[str],
    *,
    cache_dir: str | None = None,
    progress: bool | None = None,
) -> pd.DataFrame:
    """:func:`score_pairs` for built-in metrics, kept in a cache file keyed by the data, the
    metrics, the tokenizer used and the package versions (``$BAYESMETA_CACHE``, else
    ``~/.cache/bayesmeta``), so a long scoring run (e.g. pycocoevalcap on all of MUTT's
    pairs) is done once per machine. Returns the same table as :func:`score_pairs`."""
    import hashlib
    import json
    from importlib import metadata
    from pathlib import Path

    from bayesmeta._version import __version__
    from bayesmeta.data.datasets import _cache_dir

    mets = [get_metric(m) for m in metrics]
    h = hashlib.sha256()
    for frame in (pairs, references):
        h.update(pd.util.hash_pandas_object(frame, index=False).to_numpy().tobytes())
    versions = []
    for dist in ("pycocoevalcap", "sacrebleu", "rouge-score"):
        try:
            versions.append(f"{dist}={metadata.version(dist)}")
        except metadata.PackageNotFoundError:
            versions.append(f"{dist}=none")
    h.update(json.dumps([[m.name, m.direction, m.note] for m in mets] + versions
                        + [__version__]).encode())
    folder = Path(cache_dir) if cache_dir else _cache_dir()
    path = folder / f"unit-test-scores-{h.hexdigest()[:20]}.csv.gz"
    if path.is_file():
        out = pd.read_csv(path, keep_default_na=False, na_values=[""])
        out.attrs["notes"] = json.loads(path.with_suffix(".json").read_text())
        return out
    out = score_pairs(pairs, references, mets, progress=progress)
    folder.mkdir(parents=True, exist_ok=True)
    out.to_csv(path, index=False)
    path.with_suffix(".json").write_text(json.dumps(out.attrs.get("notes", [])))
    return out


__all__ = ["PAIR_COLUMNS", "SCORE_COLUMNS", "cached_scores", "check_pairs", "reference_sets",
           "score_pairs"]
