"""Built-in datasets: the SummEval case study of MetricEval and simulated SummEval-shaped data."""

from __future__ import annotations

import os
import urllib.error
import urllib.request
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
