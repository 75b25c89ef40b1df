"""Reader for the directory layout of Google's mt-metrics-eval (MTME), the data of the WMT
metrics shared task.

One test set is a folder (e.g. ``wmt23``) holding, per language pair ``SRC-TGT``:
``sources/SRC-TGT.txt`` (one segment a line), ``documents/SRC-TGT.docs`` (``DOMAIN DOCNAME``
a line), ``system-outputs/SRC-TGT/NAME.txt``, ``human-scores/SRC-TGT.NAME.seg.score`` and
``metric-scores/SRC-TGT/METRIC-REF.seg.score`` (``SYSNAME SCORE`` lines, one block of
segments per system, ``None`` for a missing human score; ``REF`` is the reference used, or
``src`` for none). MTME's README describes the format; this module only reads files.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import xarray as xr

from bayesmeta.data._columns import ReadWarning
from bayesmeta.data.schema import LP_DIM


def _read_scores(path: Path) -> dict[str, list[float]]:
    """``SYSNAME SCORE`` lines -> system -> scores in order (None -> NaN)."""
    out: dict[str, list[float]] = {}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 2:
            raise ValueError(f"{path}: line {n} is not 'SYSNAME SCORE': {line!r}.")
        try:
            value = np.nan if parts[1] == "None" else float(parts[1])
        except ValueError:
            raise ValueError(f"{path}: line {n} has a non-numeric score {parts[1]!r}."
                             ) from None
        out.setdefault(parts[0], []).append(value)
    return out


def read_mtme(path: str | Path, *, lp: str | Sequence[str], human: str | None = None,
              reference: str | None = None) -> xr.Dataset:
    """Read one or several language pairs of an MTME test-set folder into a bayesmeta
    Dataset.

    Parameters
    ----------
    path : path
        The test set's folder (the one holding ``sources/``, ``human-scores/``, ...).
    lp : str or list of str
        The language pair, ``SRC-TGT`` (e.g. ``"en-de"``), or several (``["en-de",
        "ja-zh"]``): then one dataset with the leading dim ``lp`` on ``judgment`` and
        ``score`` (see below).
    human : str, optional
        The human score (``mqm``, ``wmt-z``, ...; the ``NAME`` of
        ``human-scores/SRC-TGT.NAME.seg.score``); default ``mqm`` when present, else the
        only one.
    reference : str, optional
        Keep the metrics that used this reference (``METRIC-REF`` with ``REF`` equal to it)
        and the reference-free ones (``src``); default all metric files.

    Returns
    -------
    xarray.Dataset
        ``judgment(system, item, trait)`` (trait = the human score's name),
        ``score(system, item, metric, run)`` (one run), coords ``document``/``domain`` on
        ``item`` (segments labelled by their 0-based line number), ``reference_based`` and
        ``reference`` on ``metric``, attrs ``lp`` and ``source``. Systems without any human
        score or not scored by every metric kept are left out, with a :class:`ReadWarning`
        naming them.

        With several language pairs: ``judgment(lp, system, item, trait)`` and
        ``score(lp, system, item, metric, run)``; systems, segments (``"0"``, ``"1"``, ...)
        and metrics are the union over the pairs, NaN where a pair has no such system,
        segment or metric (a metric missing from some pairs is named in a
        :class:`ReadWarning`); ``document`` and ``domain`` are on ``(lp, item)``; every pair
        must have the same human score (``human``). :func:`bayesmeta.split_language_pairs`
        gives the pairs back without that padding; :func:`bayesmeta.wmt_ranking` reads the
        campaign whole. An error in one pair's files names the pair.

    Examples
    --------
    >>> import bayesmeta as bm
    >>> ds = bm.read_mtme("mt-metrics-eval-v2/wmt23", lp="en-de")  # doctest: +SKIP
    >>> campaign = bm.read_mtme("mt-metrics-eval-v2/wmt24", lp=["en-de", "en-es", "ja-zh"],
    ...                         human="mqm")  # doctest: +SKIP

    The R equivalent: none (MTME is Python; R users read its text files with ``read.table``).
    """
    root = Path(path)
    if not root.is_dir():
        raise ValueError(f"path: {root} is not a folder (an MTME test set, e.g. .../wmt23).")
    if isinstance(lp, str):
        return _read_one(root, lp, human, reference)
    lps = [str(x) for x in lp]
    if not lps:
        raise ValueError("lp: give a language pair (SRC-TGT) or a non-empty list of them.")
    if len(set(lps)) != len(lps):
        raise ValueError(f"lp lists a language pair twice: {lps}.")
    sets = {}
    for one in lps:
        try:
            sets[one] = _read_one(root, one, human, reference)
        except ValueError as err:
            raise ValueError(f"read_mtme: language pair {one!r}: {err}") from None
    return _combine(root, sets)


def _combine(root: Path, sets: dict[str, xr.Dataset]) -> xr.Dataset:
    """Language pairs read one by one -> one dataset with the leading dim ``lp``."""
    lps = list(sets)
    traits = {k: str(ds["trait"].values[0]) for k, ds in sets.items()}
    if len(set(traits.values())) > 1:
        raise ValueError(
            "human: the language pairs have different human scores ("
            + ", ".join(f"{k}: {v}" for k, v in traits.items())
            + "); give human= a score every pair has, or read the pairs separately.")
    systems = sorted(set().union(*(ds["system"].values.tolist() for ds in sets.values())))
    n_item = max(ds.sizes["item"] for ds in sets.values())
    items = [str(i) for i in range(n_item)]
    metrics = sorted(set().union(*(ds["metric"].values.tolist() for ds in sets.values())))
    partial = {m: [k for k, ds in sets.items() if m not in ds["metric"].values]
               for m in metrics}
    partial = {m: v for m, v in partial.items() if v}
    if partial:
        shown = "; ".join(f"{m} (not in {', '.join(v)})" for m, v in list(partial.items())[:8])
        warnings.warn(f"read_mtme: {len(partial)} metric(s) are not scored in every language "
                      f"pair; their scores there are missing (NaN): {shown}"
                      + (" ..." if len(partial) > 8 else ""), ReadWarning, stacklevel=3)
    refs = {}
    for ds in sets.values():
        refs.update(zip(ds["metric"].values.tolist(), ds["reference"].values.tolist(),
                        strict=True))
    h = np.full((len(lps), len(systems), n_item), np.nan)
    x = np.full((len(lps), len(systems), n_item, len(metrics)), np.nan)
    document = np.full((len(lps), n_item), "", dtype=object)
    domain = np.full((len(lps), n_item), "", dtype=object)
    for k, ds in enumerate(sets.values()):
        si = [systems.index(s) for s in ds["system"].values.tolist()]
        mi = [metrics.index(m) for m in ds["metric"].values.tolist()]
        n = ds.sizes["item"]
        h[k, si, :n] = ds["judgment"].values[:, :, 0]
        x[np.ix_([k], si, range(n), mi)] = ds["score"].values[None, :, :, :, 0]
        document[k, :n] = ds["document"].values
        domain[k, :n] = ds["domain"].values
    human = traits[lps[0]]
    out = xr.Dataset(
        {"judgment": ((LP_DIM, "system", "item", "trait"), h[..., None]),
         "score": ((LP_DIM, "system", "item", "metric", "run"), x[..., None])},
        coords={LP_DIM: lps, "system": systems, "item": items, "trait": [human],
                "metric": metrics, "run": ["1"],
                "document": ((LP_DIM, "item"), document.astype(str)),
                "domain": ((LP_DIM, "item"), domain.astype(str)),
                "reference": ("metric", [refs[m] for m in metrics]),
                "reference_based": ("metric", [refs[m] != "src" for m in metrics])},
        attrs={"source": f"MTME {root.name} {', '.join(lps)}", "format": "mtme"},
    )
    out["judgment"].attrs.update(
        scale_min=min(float(ds["judgment"].attrs["scale_min"]) for ds in sets.values()),
        scale_max=max(float(ds["judgment"].attrs["scale_max"]) for ds in sets.values()))
    return out


def _read_one(root: Path, lp: str, human: str | None, reference: str | None) -> xr.Dataset:
    """One language pair (see :func:`read_mtme`)."""
    src = root / "sources" / f"{lp}.txt"
    if not src.is_file():
        raise ValueError(f"lp: no source file {src} (language pairs here: "
                         f"{sorted(p.stem for p in (root / 'sources').glob('*.txt'))}).")
    n_seg = len(src.read_text(encoding="utf-8").splitlines())
    docs = root / "documents" / f"{lp}.docs"
    if docs.is_file():
        rows = [ln.split() for ln in docs.read_text(encoding="utf-8").splitlines()]
        domain, document = [r[0] for r in rows], [r[1] for r in rows]
        if len(rows) != n_seg:
            raise ValueError(f"{docs}: {len(rows)} lines, the source has {n_seg}.")
    else:
        domain, document = [""] * n_seg, [""] * n_seg
    found = {p.name[len(lp) + 1:-len(".seg.score")]: p
             for p in (root / "human-scores").glob(f"{lp}.*.seg.score")}
    if not found:
        raise ValueError(f"no segment-level human scores human-scores/{lp}.*.seg.score.")
    if human is None:
        if "mqm" not in found and len(found) > 1:
            raise ValueError(f"human: give one of {sorted(found)}.")
        human = "mqm" if "mqm" in found else next(iter(found))
    if human not in found:
        raise ValueError(f"human: {human!r} not found; available: {sorted(found)}.")
    gold = _read_scores(found[human])
    metrics: dict[str, dict[str, list[float]]] = {}
    refs: dict[str, str] = {}
    for p in sorted((root / "metric-scores" / lp).glob("*.seg.score")):
        name = p.name[:-len(".seg.score")]
        if "-" not in name:
            raise ValueError(f"{p}: metric file names are METRIC-REF.seg.score.")
        ref = name.rsplit("-", 1)[1]
        if reference is not None and ref not in (reference, "src"):
            continue
        metrics[name], refs[name] = _read_scores(p), ref
    if not metrics:
        raise ValueError(f"no segment-level metric scores in metric-scores/{lp}/"
                         + (f" for reference {reference!r}" if reference else "") + ".")
    for name, table in [(f"human-scores {human}", gold), *metrics.items()]:
        for sys_, v in table.items():
            if len(v) != n_seg:
                raise ValueError(f"{name}: system {sys_!r} has {len(v)} segment scores, the "
                                 f"source has {n_seg}.")
    for name, table in metrics.items():
        for sys_, v in table.items():
            if np.isnan(v).any():
                raise ValueError(f"metric {name!r}: system {sys_!r} has 'None' scores "
                                 f"(MTME forbids them in metric files).")
    rated = [s for s, v in gold.items() if not np.isnan(v).all()]
    systems = sorted(s for s in rated if all(s in t for t in metrics.values()))
    dropped = sorted(set(gold) - set(systems))
    if dropped:
        warnings.warn(f"read_mtme({lp}): left out {len(dropped)} systems without human "
                      f"scores or without every metric's scores: {', '.join(dropped[:10])}"
                      + (" ..." if len(dropped) > 10 else ""), ReadWarning, stacklevel=3)
    if len(systems) < 2:
        raise ValueError(f"read_mtme({lp}): fewer than 2 systems have human and metric "
                         f"scores.")
    names = list(metrics)
    h = np.array([gold[s] for s in systems], float)
    x = np.array([[metrics[m][s] for m in names] for s in systems], float)  # (S, M, I)
    ds = xr.Dataset(
        {"judgment": (("system", "item", "trait"), h[:, :, None]),
         "score": (("system", "item", "metric", "run"), x.transpose(0, 2, 1)[..., None])},
        coords={"system": systems, "item": [str(i) for i in range(n_seg)],
                "trait": [human], "metric": names, "run": ["1"],
                "document": ("item", document), "domain": ("item", domain),
                "reference": ("metric", [refs[m] for m in names]),
                "reference_based": ("metric", [refs[m] != "src" for m in names])},
        attrs={"lp": lp, "source": f"MTME {root.name} {lp}", "format": "mtme"},
    )
    finite = h[np.isfinite(h)]
    ds["judgment"].attrs.update(scale_min=float(finite.min()), scale_max=float(finite.max()))
    return ds
