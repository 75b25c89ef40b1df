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
from bayesmeta.validity.classical import _check_level, _check_method, fisher_interval


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


def _criteria(ds: xr.Dataset, trait: Any, raters: Any, human: Any, run: Any, reference: Any
              ) -> list[tuple[str, xr.DataArray, str, str]]:
    """Each criterion as (label, (system, item) values, description, source)."""
    if human is not None:
        if trait is not None:
            raise ValueError("give trait= or human=, not both.")
        hs = select.human_score(ds, human=human)
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
    *,
    coefficient: str = "kendall",
    level: str = "system",
    metrics: Sequence[str] | None = None,
    raters: str | Sequence[str] | None = None,
    human: xr.DataArray | None = None,
    run: Any = None,
    reference: Any = "first",
    ci_prob: float = CI_PROB,
) -> ConcurrentValidityResult:
    r"""Concurrent validity: correlation of each metric with a human criterion
    (MetricEval Sec. 3.2.1, Fig. 4).

    For metric scores :math:`x_{si}` and the human score :math:`z_{si}` (the mean over
    raters of a trait's ratings, a continuous judgment, or ``human``), the coefficient
    under one grouping of paper 001: ``system``, :math:`r(\bar x_{s\cdot}, \bar z_{s\cdot})`
    (MetricEval Fig. 4); ``within_system``, per system across items, averaged;
    ``within_item``, per item across systems, averaged; ``global``, all outputs pooled.

    With the factor scores of a fitted CFA (``bm.cfa(...)``, WLSMV or Bayesian) as the
    criterion instead of the raters' mean (MetricEval Sec. 3.2, Fig. 4), the call is
    :func:`bayesmeta.factor_validity` (bootstrap interval on the point scores; for a
    Bayesian CFA the posterior carries the factor-score uncertainty and a Bayesian
    bootstrap over items).

    Parameters
    ----------
    data : xarray.Dataset
        A bayesmeta dataset with metric scores.
    trait : str or list of str
        Trait(s) with human scores (the mean of the raters, or the judgment); a metric
        name is also accepted (metric-metric validity).
    coefficient : {"kendall", "spearman", "pearson"}
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
        ``"<level>_<coefficient>"`` (e.g. ``"system_kendall"``), column ``classical`` and, for
        ``level="system", coefficient="pearson"``, ``classical_low`` / ``classical_high`` (Fisher z
        with :math:`n` = systems observed on both sides). Other coefficients and levels get no
        classical interval: Fisher z is not valid for Kendall/Spearman without an approximate
        variance, nor for correlations of clustered outputs or averages of per-group correlations
        (use :func:`bayesmeta.correlations` for resampling intervals). ``details()``: ``human`` (how
        the criterion was formed), ``n_systems`` (with both system means), ``n_outputs`` (outputs
        with both scores).

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
    >>> bm.concurrent_validity(bm.datasets.simulated(), "COH", coefficient="pearson").summary(
    ...     ).attrs["classical_ci_kind"]
    'Fisher z'

    R equivalent (system level): ``cor(rowMeans(metric), rowMeans(human), method =
    "kendall")``; the Fisher-z interval ``cor.test(..., conf.level = 0.94)$conf.int``.
    """
    validate(data, warn_missing=False)
    _check_method(coefficient)
    level = _check_level(level)
    ci_prob = check_ci_prob(ci_prob)
    if "score" not in data:
        raise ValueError("concurrent validity needs metric scores: data has no 'score'.")
    crits = _criteria(data, trait, raters, human, run, reference)
    x = select.metric_scores(data, metrics, run=run, reference=reference)
    xv = np.asarray(x.values, dtype=float)
    names = [str(m) for m in x["metric"].values]
    estimand = f"{level}_{coefficient}"
    interval = level == "system" and coefficient == "pearson"
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
        info={"data": select.describe(data), "correlation": coefficient, "level": level,
              "criterion": "; ".join(c[2] for c in crits)},
        notes=notes, ci_prob=ci_prob,
        classical_ci_kind="Fisher z" if interval else None,
    )



__all__ = ["ConcurrentValidityResult", "concurrent_validity", "grouped_correlation"]
