"""Turn a dataset into labelled (system x item) score matrices, one per measured quantity.

A *quantity* is one automatic metric (from ``score``) or one rater x trait combination
(from ``rating``, labelled ``"<rater>.<trait>"``, e.g. ``"Expert.1.COH"``).
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Sequence

import numpy as np
import xarray as xr

from bayesmeta.data.schema import validate


def rating_label(rater: object, trait: object) -> str:
    return f"{rater}.{trait}"


def pick_run(ds: xr.Dataset, run: str | int | None) -> xr.DataArray:
    """The score array for one run (label, or position when an int), or the run mean
    (``run="mean"``). ``None`` means the first run."""
    score = ds["score"]
    if run is None:
        return score.isel(run=0)
    if isinstance(run, str) and run == "mean":
        return score.mean("run", skipna=True)
    labels = [str(r) for r in score["run"].values]
    if str(run) in labels:
        return score.sel(run=score["run"].values[labels.index(str(run))])
    if isinstance(run, int) and 0 <= run < len(labels):
        return score.isel(run=run)
    raise ValueError(f"run {run!r} is not a label of dim 'run' ({', '.join(labels)}).")


def quantities(
    ds: xr.Dataset,
    *,
    metrics: Sequence[str] | None = None,
    ratings: bool | Sequence[str] = True,
    run: str | int | None = None,
    normalize: bool = False,
) -> xr.DataArray:
    """Stack metrics and rater x trait ratings into one array with dims
    ``(quantity, system, item)`` and a coordinate ``kind`` ("metric" or "rating").

    Parameters
    ----------
    metrics : list of str, optional
        Metrics to include (default all; ``[]`` for none).
    ratings : bool or list of str
        Include every rater x trait (True), none (False) or the listed labels.
    run : label, int, "mean" or None
        Which metric run (default the first).
    normalize : bool
        Rank-normalise each quantity over all its (system, item) cells first
        (:func:`bayesmeta.classical.reliability.rank_normalize`, MetricEval App. A.2).
    """
    validate(ds, warn_missing=False)
    parts = []
    if "score" in ds and (metrics is None or len(metrics)):
        score = pick_run(ds, run)
        if metrics is not None:
            unknown = [m for m in metrics if m not in score["metric"].values]
            if unknown:
                raise ValueError(f"unknown metric(s) {', '.join(map(repr, unknown))}; not in "
                                 f"dim 'metric'.")
            score = score.sel(metric=list(metrics))
        arr = score.transpose("metric", "system", "item")
        labels = [str(m) for m in arr["metric"].values]
        parts.append((arr.values, labels, ["metric"] * len(labels)))
    elif metrics:
        raise ValueError("data has no 'score' variable, so metrics cannot be selected.")
    if "rating" in ds and ratings is not False:
        rating = ds["rating"].transpose("rater", "trait", "system", "item")
        vals = rating.values.reshape(-1, ds.sizes["system"], ds.sizes["item"])
        labels = [rating_label(r, t) for r in rating["rater"].values
                  for t in rating["trait"].values]
        if ratings is not True:
            wanted = list(ratings)
            unknown = [w for w in wanted if w not in labels]
            if unknown:
                raise ValueError(f"unknown rating label(s) {', '.join(map(repr, unknown))}; "
                                 f"labels are '<rater>.<trait>', e.g. {labels[0]!r}.")
            idx = [labels.index(w) for w in wanted]
            vals, labels = vals[idx], wanted
        parts.append((vals, labels, ["rating"] * len(labels)))
    if not parts:
        raise ValueError("nothing to analyse: no metrics and no ratings were selected.")
    values = np.concatenate([p[0] for p in parts], axis=0)
    if normalize:
        from bayesmeta.classical.reliability import rank_normalize

        values = np.stack([rank_normalize(v.ravel()).reshape(v.shape) for v in values])
    labels = functools.reduce(operator.iadd, (p[1] for p in parts), [])
    kinds = functools.reduce(operator.iadd, (p[2] for p in parts), [])
    return xr.DataArray(
        values,
        dims=("quantity", "system", "item"),
        coords={"quantity": labels, "kind": ("quantity", kinds),
                "system": ds["system"].values, "item": ds["item"].values},
    )


def metric_scores(
    ds: xr.Dataset,
    *,
    metrics: Sequence[str] | None = None,
    run: str | int | None = None,
) -> xr.DataArray:
    """Metric scores as a (metric, system, item) DataArray for one run (see :func:`pick_run`),
    left lazy when the dataset is dask-backed."""
    if "score" not in ds:
        raise ValueError("data has no 'score' variable, so there are no metrics to evaluate.")
    score = pick_run(ds, run)
    if metrics is not None:
        unknown = [m for m in metrics if m not in set(map(str, score["metric"].values))]
        if unknown:
            raise ValueError(f"unknown metric(s) {', '.join(map(repr, unknown))}; not in dim "
                             f"'metric'.")
        score = score.sel(metric=list(metrics))
    return score.transpose("metric", "system", "item")


def human_score(
    ds: xr.Dataset,
    trait: str | None = None,
    *,
    rater: str | None = None,
    human: xr.DataArray | None = None,
) -> tuple[np.ndarray, str]:
    """The human score as a (system, item) array and its label: a trait's mean over raters
    (NaN-aware), one rater's ratings of the trait, or a given (system, item) DataArray."""
    if human is not None:
        if not isinstance(human, xr.DataArray) or set(human.dims) != {"system", "item"}:
            raise ValueError("human must be a DataArray with dims (system, item).")
        arr = human.transpose("system", "item").reindex(system=ds["system"], item=ds["item"])
        return np.asarray(arr.values, dtype=float), str(human.name or "human")
    if trait is None:
        raise ValueError("give trait= (a trait of 'rating') or human= (a (system, item) "
                         "DataArray).")
    if "rating" not in ds:
        raise ValueError("data has no 'rating' variable; give human= instead of trait=.")
    traits = [str(t) for t in ds["trait"].values]
    if str(trait) not in traits:
        raise ValueError(f"unknown trait {trait!r}; traits are {', '.join(traits)}.")
    rating = ds["rating"].sel(trait=ds["trait"].values[traits.index(str(trait))])
    if rater is None:
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            arr = rating.mean("rater", skipna=True)
        return np.asarray(arr.transpose("system", "item").values, float), \
            f"{trait} (mean of {ds.sizes['rater']} raters)"
    raters = [str(r) for r in ds["rater"].values]
    if str(rater) not in raters:
        raise ValueError(f"unknown rater {rater!r}; raters are {', '.join(raters)}.")
    arr = rating.sel(rater=ds["rater"].values[raters.index(str(rater))])
    return np.asarray(arr.transpose("system", "item").values, float), rating_label(rater, trait)
