"""Built-in datasets: the SummEval case study of MetricEval, paper 002's meta-evaluation files
(``nlgeval``), and simulated SummEval-shaped data."""

from __future__ import annotations

import os
import urllib.error
import urllib.request
import warnings
from pathlib import Path

import xarray as xr

SUMMEVAL_FILES = ("metric_scores_long.csv", "metric_scores_long_2nd_run.csv")
SUMMEVAL_URL = "https://raw.githubusercontent.com/isle-dev/MetricEval/main/metric_eval/data/{name}"


def _cache_dir() -> Path:
    if os.environ.get("BAYESMETA_CACHE"):
        return Path(os.environ["BAYESMETA_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "bayesmeta"


def data_home() -> Path | None:
    """The shared data folder: ``$BAYESMETA_DATA``, else ``../shared/data`` beside the repo.

    Returns None when neither exists.
    """
    env = os.environ.get("BAYESMETA_DATA")
    if env:
        return Path(env)
    beside = Path(__file__).resolve().parents[3] / "shared" / "data"
    return beside if beside.is_dir() else None


def _summeval_dir(candidate: Path) -> Path | None:
    for folder in (candidate, candidate / "summeval"):
        if all((folder / f).is_file() for f in SUMMEVAL_FILES):
            return folder
    return None


def find_summeval(path: str | Path | None = None, *, download: bool = True) -> Path:
    """Locate the MetricEval SummEval files and return their folder.

    Search order: ``path``; ``$BAYESMETA_DATA`` (or ``../shared/data`` beside the repo);
    the local cache (``$BAYESMETA_CACHE`` or ``~/.cache/bayesmeta``); then, if ``download``,
    the public MetricEval repository, cached for next time.
    """
    if path is not None:
        found = _summeval_dir(Path(path))
        if found is None:
            raise FileNotFoundError(
                f"no SummEval files ({', '.join(SUMMEVAL_FILES)}) in {str(path)!r} or its "
                f"'summeval' subfolder."
            )
        return found
    home = data_home()
    if home is not None:
        found = _summeval_dir(home)
        if found is not None:
            return found
        if os.environ.get("BAYESMETA_DATA"):
            raise FileNotFoundError(
                f"BAYESMETA_DATA={str(home)!r} has no summeval/ folder with "
                f"{', '.join(SUMMEVAL_FILES)}."
            )
    cache = _cache_dir() / "summeval"
    found = _summeval_dir(cache)
    if found is not None:
        return found
    if not download:
        raise FileNotFoundError(
            "SummEval files not found: set BAYESMETA_DATA to the folder holding summeval/, "
            "or pass path=."
        )
    cache.mkdir(parents=True, exist_ok=True)
    for name in SUMMEVAL_FILES:
        url = SUMMEVAL_URL.format(name=name)
        tmp = cache / (name + ".part")
        try:
            with urllib.request.urlopen(url, timeout=30) as response, open(tmp, "wb") as fh:
                fh.write(response.read())
        except (urllib.error.URLError, OSError, TimeoutError) as err:
            tmp.unlink(missing_ok=True)
            raise FileNotFoundError(
                f"SummEval files are not on this machine and could not be downloaded from "
                f"{url} ({err}). Set BAYESMETA_DATA to a folder holding summeval/"
                f"{SUMMEVAL_FILES[0]}, or pass path=."
            ) from err
        tmp.replace(cache / name)
    return cache


def summeval(path: str | Path | None = None, *, download: bool = True) -> xr.Dataset:
    """SummEval as prepared for MetricEval (Xiao et al., 2023): 17 systems x 100 documents.

    ``rating(system, item, rater, trait)``: 3 experts (``Expert.1..3``) x 4 traits
    (``COH``, ``CON``, ``FLU``, ``REL``) on 1..5. ``score(system, item, metric, run)``:
    43 automatic metrics (already rank-normalised by MetricEval, App. A.2), two runs.
    Metric names keep the source's spelling (``METEOR``, ``G.EVAL.3.5.COH``).

    Parameters
    ----------
    path : path, optional
        Folder holding ``metric_scores_long.csv`` and ``metric_scores_long_2nd_run.csv``
        (or a ``summeval/`` subfolder with them). See :func:`find_summeval` for the search
        order when omitted.
    download : bool
        Allow downloading the public files when they are not found locally.

    Examples
    --------
    >>> import bayesmeta as bm  # doctest: +SKIP
    >>> ds = bm.datasets.summeval()  # doctest: +SKIP
    >>> dict(ds.sizes)  # doctest: +SKIP
    {'system': 17, 'item': 100, 'rater': 3, 'trait': 4, 'metric': 43, 'run': 2}
    """
    from bayesmeta.data.io import read_csv

    folder = find_summeval(path, download=download)
    ds = read_csv([folder / f for f in SUMMEVAL_FILES], format="metriceval")
    ds.attrs.update(
        source="SummEval (Fabbri et al., 2021) as prepared for MetricEval (Xiao et al., 2023)",
        path=str(folder),
    )
    return ds


#: paper 002's human judgment columns per dataset (its Table 1); averaged over annotators
NLGEVAL_HUMAN: dict[str, tuple[str, ...]] = {
    "BAGEL": ("informativeness", "naturalness", "quality"),
    "QAGS_CNN": ("fact",),
    "QAGS_XSUM": ("fact",),
    "SFHOT": ("informativeness", "naturalness", "quality"),
    "SFRES": ("informativeness", "naturalness", "quality"),
    "usr_persona_mean": ("Understandable", "Natural", "Maintains Context", "Engaging",
                         "Uses Knowledge", "Overall"),
    "usr_topic_mean": ("Understandable", "Natural", "Maintains Context", "Engaging",
                       "Uses Knowledge", "Overall"),
    "webnlg": ("fluency", "grammar", "semantics"),
}


def find_nlgeval(path: str | Path | None = None) -> Path:
    """The folder holding paper 002's per-output files (``<dataset>.csv``).

    Search order: ``path`` (the folder itself, or one with an ``origin/`` or
    ``nlgeval/origin/`` subfolder); then ``$BAYESMETA_DATA/nlgeval/origin`` (or
    ``../shared/data`` beside the repo). The files are not downloaded.
    """
    bases = [Path(path)] if path is not None else []
    if path is None and data_home() is not None:
        bases.append(data_home())
    for base in bases:
        for folder in (base, base / "origin", base / "nlgeval" / "origin"):
            if folder.is_dir() and any(folder.glob("*.csv")):
                return folder
    where = repr(str(path)) if path is not None else "BAYESMETA_DATA (or ../shared/data)"
    raise FileNotFoundError(f"no nlgeval files (<dataset>.csv, e.g. SFHOT.csv) found in {where} "
                            f"or its origin/ or nlgeval/origin/ subfolder.")


def nlgeval_names(path: str | Path | None = None) -> list[str]:
    """The datasets of paper 002 whose files are found (see :func:`find_nlgeval`).

    Examples
    --------
    >>> import bayesmeta as bm  # doctest: +SKIP
    >>> bm.datasets.nlgeval_names()  # doctest: +SKIP
    ['BAGEL', 'QAGS_CNN', 'QAGS_XSUM', 'SFHOT', 'SFRES', 'usr_persona_mean', 'usr_topic_mean',
     'webnlg']
    """
    return sorted((p.stem for p in find_nlgeval(path).glob("*.csv")), key=str.lower)


def nlgeval_options(name: str, columns: list[str]) -> dict:
    """The :func:`~bayesmeta.read_csv` options that read one of paper 002's files: the id is
    the item (USR: ``<context>_<system>``, split at the first ``_``), the human columns of
    :data:`NLGEVAL_HUMAN` are continuous judgments, every other column is a metric. For a
    file not in :data:`NLGEVAL_HUMAN`, the human columns are those without ``_`` in their
    name (the repository's own rule)."""
    human = list(NLGEVAL_HUMAN.get(name, [c for c in columns if "_" not in c and c != "id"]))
    keys = {"id": "id", "id_split": "_"} if name.startswith("usr") else {"item": "id"}
    metrics = [c for c in columns if c != "id" and c not in human]
    return {**keys, "human": human, "metrics": metrics}


def nlgeval(name: str, path: str | Path | None = None) -> xr.Dataset:
    """One of paper 002's meta-evaluation datasets (Sheng et al., *Is Reference Necessary in
    the Evaluation of NLG Systems?*), as its public code scored them.

    One row per generated text: ``judgment(system, item, trait)`` holds the human scores
    (averaged over annotators, so continuous: SFHOT informativeness 4.5, QAGS fact 0..1);
    ``score(system, item, metric, run, reference)`` every metric, with one score per
    reference for the reference-based ones (list cells; SFHOT has 1 to 154 references per
    output) and reference-free scores at the first reference. Metric coordinates
    ``inputs`` (``"src"`` / ``"ref"``) and ``reference_based`` come from the column suffixes
    ``_src_hypo`` / ``_ref_hypo``. USR's ids ``<context>_<system>`` give 4 (persona) or 5
    (topic) systems (decoding strategies); the other files have no system label and are one
    system labelled ``"all"``.

    Parameters
    ----------
    name : str
        One of :func:`nlgeval_names` (e.g. ``"SFHOT"``, ``"usr_topic_mean"``).
    path : path, optional
        See :func:`find_nlgeval`.

    Notes
    -----
    The repository's correlations take the FIRST reference of each list
    (``select.metric_scores(ds, reference="first")``).

    Examples
    --------
    >>> import bayesmeta as bm  # doctest: +SKIP
    >>> ds = bm.datasets.nlgeval("usr_topic_mean")  # doctest: +SKIP
    >>> dict(ds.sizes)  # doctest: +SKIP
    {'system': 5, 'item': 60, 'trait': 6, 'metric': 22, 'run': 1, 'reference': 1}
    """
    from bayesmeta.data._columns import ReadWarning
    from bayesmeta.data.io import _header, read_csv

    folder = find_nlgeval(path)
    file = folder / f"{name}.csv"
    if not file.is_file():
        names = nlgeval_names(path)
        raise ValueError(f"no nlgeval dataset {name!r} in {str(folder)!r}; choose one of "
                         f"{', '.join(map(repr, names))}.")
    options = nlgeval_options(name, _header(file, ",", None))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ds = read_csv(file, **options)
    for w in caught:
        text = str(w.message)
        if issubclass(w.category, ReadWarning):
            lines = [ln for ln in text.split("\n  - ")[1:] if "read as one system" not in ln]
            if not lines:
                continue
            text = text.split("\n  - ")[0] + "\n  - " + "\n  - ".join(lines)
        warnings.warn(text, w.category, stacklevel=2)
    ds.attrs.update(
        source=f"paper 002 (Sheng et al.) {name}, scored by github.com/susisheng/"
               f"NLGEvaluation (commit 0aa1d45)",
        path=str(file),
    )
    return ds


def simulated(random_seed: int = 0, **kwargs) -> xr.Dataset:
    """SummEval-shaped data drawn from the generative model of :mod:`bayesmeta.simulate`.

    17 systems x 100 items, 3 raters x 4 correlated traits on 1..5 with rater-specific
    thresholds, and 12 metrics with two runs (some stochastic). The true parameters are
    attached as ``true_*`` variables. Keyword arguments go to
    :func:`bayesmeta.simulate.simulate_summeval`.

    Examples
    --------
    >>> import bayesmeta as bm
    >>> ds = bm.datasets.simulated(random_seed=1)
    >>> ds["rating"].shape, ds["score"].shape
    ((17, 100, 3, 4), (17, 100, 12, 2))
    """
    from bayesmeta.simulate import simulate_summeval

    return simulate_summeval(random_seed=random_seed, **kwargs)
