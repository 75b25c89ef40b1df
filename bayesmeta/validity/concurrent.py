"""Concurrent validity: the correlation of each metric with a human criterion.

MetricEval (Xiao et al. 2023) Sec. 4.1.2, at any grouping of paper 001 (system means,
global, within system, within item). Inputs come from :mod:`bayesmeta.data.select`; the
table has the one shape of :mod:`bayesmeta.summaries`.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayesmeta.correlation.measures import measure_draws
from bayesmeta.data import select
from bayesmeta.data.schema import validate
from bayesmeta.results import Result
from bayesmeta.summaries import CI_PROB, check_ci_prob
from bayesmeta.validity.mtmm import _check_level, _check_method, fisher_interval


class ConcurrentValidityResult(Result):
    """Concurrent validity of metrics against a criterion (see :func:`concurrent_validity`)."""


def grouped_correlation(x: np.ndarray, y: np.ndarray, method: str, level: str) -> float:
    """Correlation of two (system x item) matrices under one grouping of paper 001:
    ``system`` (system means), ``global`` (all cells), ``within_system`` (per system across
    items, averaged), ``within_item`` (per item across systems, averaged). A thin wrapper of
    :func:`bayesmeta.correlation.measures.measure_draws`."""
    level = _check_level(level)
    _check_method(method)
    x = np.asarray(x, dtype=float)
    return float(measure_draws(x[None], np.asarray(y, dtype=float),
                               measures=[f"{level}_{method}"])[0, 0, 0])


def _legacy_cv(args: tuple, kwargs: dict[str, Any]) -> dict[str, Any]:
    """Map ``concurrent_validity(data, criterion, method, level)`` of the previous release."""
    out: dict[str, Any] = {}
    if len(args) > 2:
        raise TypeError(f"concurrent_validity() takes at most 4 positional arguments "
                        f"({len(args) + 2} given).")
    for name, value in zip(("method", "level"), args, strict=False):
        warnings.warn(f"concurrent_validity(data, trait, {name}) with {name} given by "
                      f"position is deprecated and will be removed in the next release; "
                      f"write concurrent_validity(data, trait, {name}=...).",
                      FutureWarning, stacklevel=3)
        out[name] = value
    if "criterion" in kwargs:
        warnings.warn("concurrent_validity(criterion=...) is deprecated and will be removed "
                      "in the next release; write concurrent_validity(data, trait) (or "
                      "human= for a (system, item) DataArray).", FutureWarning, stacklevel=3)
        out["criterion"] = kwargs.pop("criterion")
    if kwargs:
        raise TypeError(f"concurrent_validity() got unexpected keyword argument(s) "
                        f"{', '.join(map(repr, kwargs))}.")
    return out


def _criteria(ds: xr.Dataset, trait: Any, raters: Any, human: Any, run: Any, reference: Any
              ) -> list[tuple[str, xr.DataArray, str, str]]:
    """Each criterion as (label, (system, item) values, description, source)."""
    if human is not None:
        if trait is not None:
            raise ValueError("give trait= or human=, not both.")
        hs = select.human_score(ds, human=human)
        return [(hs.trait, hs.values, hs.label, hs.source)]
    if isinstance(trait, xr.DataArray):
        warnings.warn("concurrent_validity(data, <DataArray>) is deprecated and will be "
                      "removed in the next release; write concurrent_validity(data, "
                      "human=<DataArray>).", FutureWarning, stacklevel=3)
        hs = select.human_score(ds, human=trait)
        return [(hs.trait, hs.values, hs.label, hs.source)]
    if trait is None:
        select.human_score(ds)  # raises, naming the traits
    many = [trait] if isinstance(trait, str) else list(trait)
    kinds = select.human_traits(ds)
    norm_traits = {select._norm(t) for t in kinds}
    out = []
    for t in many:
        key = select._norm(t)
        if key in norm_traits:
            hs = select.human_score(ds, trait=t, raters=raters)
            out.append((key, hs.values, hs.label, hs.source))
            continue
        head, _, tail = key.rpartition(".")
        if "rating" in ds and head and tail in norm_traits and head in set(
                select.normalize_labels(ds["rater"].values)):
            warnings.warn(f"concurrent_validity(data, {key!r}) with a '<rater>.<trait>' "
                          f"label is deprecated and will be removed in the next release; "
                          f"write concurrent_validity(data, {tail!r}, raters={head!r}).",
                          FutureWarning, stacklevel=3)
            hs = select.human_score(ds, trait=tail, raters=[head])
            out.append((key, hs.values, hs.label, hs.source))
            continue
        if "score" in ds and key in set(select.normalize_labels(ds["metric"].values)):
            x = select.metric_scores(ds, [key], run=run, reference=reference)
            out.append((key, x.isel(metric=0, drop=True), f"{key} (metric)", "metric"))
            continue
        raise ValueError(f"unknown criterion {t!r}: give a trait with human scores "
                         f"({', '.join(kinds) or 'none'}), a metric name, or human= (a "
                         f"(system, item) DataArray).")
    return out


def concurrent_validity(
    data: xr.Dataset,
    trait: str | Sequence[str] | None = None,
    *args: Any,
    method: str = "kendall",
    level: str = "system",
    metrics: Sequence[str] | None = None,
    raters: str | Sequence[str] | None = None,
    human: xr.DataArray | None = None,
    run: Any = None,
    reference: Any = "first",
    ci_prob: float = CI_PROB,
    **legacy: Any,
) -> ConcurrentValidityResult:
    r"""Concurrent validity: correlation of each metric with a human criterion
    (MetricEval Sec. 3.2.1, Fig. 4).

    For metric scores :math:`x_{si}` and the human score :math:`z_{si}` (the mean over
    raters of a trait's ratings, a continuous judgment, or ``human``), the coefficient
    under one grouping of paper 001: ``system``, :math:`r(\bar x_{s\cdot}, \bar z_{s\cdot})`
    (MetricEval Fig. 4); ``within_system``, per system across items, averaged;
    ``within_item``, per item across systems, averaged; ``global``, all outputs pooled.

    With ``criterion=`` a fitted CFA (``bm.cfa(...)``, WLSMV or Bayesian), the criterion
    is each trait's *factor scores* instead of the raters' mean (MetricEval Sec. 3.2,
    Fig. 4): the call is :func:`bayesmeta.factor_validity` (bootstrap interval on the
    point scores; for a Bayesian CFA the posterior carries the factor-score uncertainty
    and a Bayesian bootstrap over items), which takes ``resampling=`` and
    ``random_seed=`` as well.

    Parameters
    ----------
    data : xarray.Dataset
        A bayesmeta dataset with metric scores.
    trait : str or list of str
        Trait(s) with human scores (the mean of the raters, or the judgment); a metric
        name is also accepted (metric-metric validity).
    method : {"kendall", "spearman", "pearson"}
    level : {"system", "within_system", "within_item", "global"}
    metrics : list of str, optional
        Metrics to evaluate (default all).
    raters : str or list of str, optional
        The raters whose mean forms the human score (default all).
    human : xarray.DataArray, optional
        A ``(system, item)`` human score instead of ``trait`` (e.g. factor scores), aligned
        to the data by label (:func:`bayesmeta.data.select.align`: integer and string labels
        meet; labels the data lacks warn; no shared label raises).
    run, reference
        Metric run and reference reduction (see :func:`bayesmeta.data.select.pick_run`).
    ci_prob : float
        Probability of the classical interval (default :data:`bayesmeta.summaries.CI_PROB`).

    Returns
    -------
    ConcurrentValidityResult
        ``summary()`` indexed by ``(estimand, trait, metric)`` with estimand
        ``"<level>_<method>"`` (e.g. ``"system_kendall"``), column ``classical`` and, for
        ``level="system", method="pearson"``, ``classical_low`` / ``classical_high`` (Fisher
        z with :math:`n` = systems observed on both sides). Other coefficients and levels
        get no classical interval: Fisher z is not valid for Kendall/Spearman without an
        approximate variance, nor for correlations of clustered outputs or averages of
        per-group correlations (use :func:`bayesmeta.correlations` for resampling
        intervals). ``details()``: ``human`` (how the criterion was formed),
        ``n_systems`` (with both system means), ``n_outputs`` (outputs with both scores).

    Notes
    -----
    The previous release's ``concurrent_validity(data, criterion, method, level)``,
    ``criterion=``, a DataArray criterion and ``"<rater>.<trait>"`` labels keep working
    with a ``FutureWarning``.

    Examples
    --------
    >>> import bayesmeta as bm
    >>> from bayesmeta.summaries import check_table
    >>> res = bm.concurrent_validity(bm.datasets.simulated(), "COH")
    >>> tab = res.summary()
    >>> check_table(tab)
    >>> tab.index.names
    FrozenList(['estimand', 'trait', 'metric'])
    >>> bool(tab.loc[("system_kendall", "COH"), "classical"].between(-1, 1).all())
    True
    >>> bm.concurrent_validity(bm.datasets.simulated(), "COH", method="pearson").summary(
    ...     ).attrs["classical_ci_kind"]
    'Fisher z'

    R equivalent (system level): ``cor(rowMeans(metric), rowMeans(human), method =
    "kendall")``; the Fisher-z interval ``cor.test(..., conf.level = 0.94)$conf.int``.
    """
    crit = legacy.get("criterion", trait)
    if hasattr(crit, "factor_scores") and callable(crit.factor_scores):
        from bayesmeta.validity import factor_validity

        legacy.pop("criterion", None)
        extra = {k: legacy.pop(k) for k in ("resampling", "random_seed", "traits",
                                             "score_method") if k in legacy}
        if legacy or args:
            raise TypeError(f"concurrent_validity() with a CFA criterion got unexpected "
                            f"argument(s) {sorted(legacy) or list(args)}.")
        return factor_validity(data, crit, metrics=metrics, method=method, level=level,
                               run=run, reference=reference, ci_prob=ci_prob, **extra)
    old = _legacy_cv(args, dict(legacy))
    method = old.get("method", method)
    level = old.get("level", level)
    if "criterion" in old:
        if trait is not None:
            raise TypeError("concurrent_validity() got both trait and criterion=; use trait.")
        trait = old["criterion"]
    validate(data, warn_missing=False)
    _check_method(method)
    level = _check_level(level)
    ci_prob = check_ci_prob(ci_prob)
    if "score" not in data:
        raise ValueError("concurrent validity needs metric scores: data has no 'score'.")
    crits = _criteria(data, trait, raters, human, run, reference)
    x = select.metric_scores(data, metrics, run=run, reference=reference)
    xv = np.asarray(x.values, dtype=float)
    names = [str(m) for m in x["metric"].values]
    estimand = f"{level}_{method}"
    interval = level == "system" and method == "pearson"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        xm = np.nanmean(xv, axis=2)
    frames = []
    for label, values, desc, _source in crits:
        y = np.asarray(values.transpose("system", "item").values, dtype=float)
        vals = measure_draws(xv, y, measures=[estimand])[0, :, 0]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            ym = np.nanmean(y, axis=1)
        n_sys = (~np.isnan(xm) & ~np.isnan(ym)[None]).sum(axis=1)
        n_out = (~np.isnan(xv) & ~np.isnan(y)[None]).sum(axis=(1, 2))
        idx = pd.MultiIndex.from_arrays([[estimand] * len(names), [label] * len(names), names],
                                        names=["estimand", "trait", "metric"])
        frame = pd.DataFrame({"classical": vals}, index=idx)
        if interval:
            lo, hi = fisher_interval(vals, n_sys, ci_prob)
            frame["classical_low"], frame["classical_high"] = lo, hi
        frame["human"] = desc
        frame["n_systems"] = n_sys.astype(int)
        frame["n_outputs"] = n_out.astype(int)
        frames.append(frame)
    table = pd.concat(frames)
    notes = []
    if not interval:
        notes.append("No classical interval: Fisher z holds for a Pearson correlation of "
                     "system means only; bm.correlations resamples for intervals.")
    return ConcurrentValidityResult(
        table, title="Concurrent validity",
        info={"data": select.describe(data), "correlation": method, "level": level,
              "criterion": "; ".join(c[2] for c in crits)},
        notes=notes, ci_prob=ci_prob,
        classical_ci_kind="Fisher z" if interval else None,
    )



__all__ = ["ConcurrentValidityResult", "concurrent_validity", "grouped_correlation"]
