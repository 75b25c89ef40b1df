r"""Derived quantities and the summary table of the true-score model.

From the posterior draws of the four variance components (one set per variable) this module
computes, draw by draw, the reliabilities of system means over the :math:`J` items of the
data (``consistency``, ``stability``), the standard error of measurement, the items needed
for a target reliability and the component SDs on the variable's scale; then it builds the
table of :func:`bayesmeta.reliability`: index ``(estimand, variable)``, the ANOVA plug-in as
``classical``, the posterior columns from :func:`bayesmeta.summaries.posterior_table`, and
the details ``kind``, ``metriceval`` (MetricEval's own estimators) and ``median``.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayesmeta.data.schema import MissingDataWarning
from bayesmeta.reliability._true_score_build import Design
from bayesmeta.reliability.generalizability import (
    g_coefficient,
    g_study,
    items_for,
    stability_coefficient,
)
from bayesmeta.summaries import posterior_table

#: Rows of the summary, in this order.
ESTIMANDS = ("consistency", "stability", "sem", "items_needed",
             "sd_system", "sd_item", "sd_system_item", "sd_run")
#: Estimands defined only for variables with several runs.
MULTI_RUN = ("stability", "sd_run")


def derived(s2: dict[str, xr.DataArray], *, J: int, target: float,
            multi: xr.DataArray) -> xr.Dataset:
    """Draws of every reported quantity from draws of the variance components ``s2``
    (keys ``system``, ``item``, ``system_item``, ``run``; score units squared)."""
    err = s2["system_item"] + s2["run"]
    out = xr.Dataset({
        "sd_system": np.sqrt(s2["system"]),
        "sd_item": np.sqrt(s2["item"]),
        "sd_system_item": np.sqrt(s2["system_item"]),
        "sd_run": np.sqrt(s2["run"]).where(multi),
        "consistency": g_coefficient(s2["system"], s2["system_item"], s2["run"], J),
        "stability": stability_coefficient(s2["system"], s2["system_item"], s2["run"],
                                           J).where(multi),
        "sem": np.sqrt(err / J),
        "items_needed": np.ceil(items_for(target, s2["system"], err) - 1e-9),
    })
    out["items_needed"].attrs["target"] = target
    return out.transpose("chain", "draw", "variable")


def original_scale(raw: xr.Dataset, design: Design, positions: np.ndarray, *,
                   target: float) -> xr.Dataset:
    """The posterior on each variable's own scale, relabelled, padding dropped, with the
    derived quantities (see :func:`derived`)."""
    coords = {"variable": design.labels, "kind": ("variable", design.kind)}
    scale = xr.DataArray(design.scale, dims="variable", coords=coords)
    free = xr.DataArray(design.free_run, dims="variable", coords=coords)
    multi = xr.DataArray(design.n_runs > 1, dims="variable", coords=coords)

    def pick(name: str) -> xr.DataArray:
        return raw[name].isel(variable=positions).assign_coords(coords)

    s2 = {c: (pick(f"sd_{c}") * scale) ** 2 for c in ("system", "item", "system_item", "run")}
    s2["run"] = s2["run"].where(free, 0.0)
    post = derived(s2, J=design.y.shape[2], target=target, multi=multi)
    post.attrs = dict(raw.attrs)
    return post


def _by_row(values: dict[str, Any], labels: list[str]) -> pd.Series:
    """A Series indexed by ``(estimand, variable)`` from arrays per estimand."""
    return pd.concat({est: pd.Series(np.asarray(v, dtype=float), index=labels)
                      for est, v in values.items()}, names=["estimand", "variable"])


def metriceval(data: xr.Dataset, design: Design, *, reference: Any = "first") -> pd.Series:
    """MetricEval's estimators through the public classical functions: alpha and SEM of the
    first run (:func:`bayesmeta.consistency`, pairwise-complete) and the Pearson test-retest
    of run means (:func:`bayesmeta.stability`), for the variables of ``design``, indexed by
    ``(estimand, variable)`` with the estimands of :data:`ESTIMANDS`."""
    from bayesmeta.reliability.classical import consistency, stability

    def labels(kind: str) -> list[str]:
        return [lab for lab, k in zip(design.labels, design.kind, strict=True) if k == kind]

    metrics, ratings, judged = labels("metric"), labels("rating"), labels("judgment")
    rows: dict[tuple[str, str], float] = {}
    with warnings.catch_warnings():
        # missing cells are announced by the fit itself
        warnings.simplefilter("ignore", MissingDataWarning)
        cons = consistency(data, metrics=metrics, raters=ratings or False,
                           judgments=judged or False, reference=reference).summary()
        retest = (stability(data, metrics=metrics, reference=reference).summary()
                  if metrics and data.sizes.get("run", 1) > 1 else None)
    for est, value in (("consistency", _read(cons, "alpha")), ("sem", _read(cons, "sem"))):
        rows.update({(est, str(v)): float(x) for v, x in value.items()})
    if retest is not None:
        rows.update({("stability", str(m)): float(x)
                     for m, x in _read(retest, "stability").items()})
    out = pd.Series(rows, dtype=float)
    out.index = out.index.set_names(["estimand", "variable"])
    return out


def _read(table: pd.DataFrame, estimand: str) -> pd.Series:
    """One estimand of a classical reliability table (index ``(estimand, variable)`` or
    ``(estimand, metric)``), indexed by the variable label."""
    sub = table.xs(estimand, level="estimand")["classical"]
    if sub.index.nlevels > 1:
        sub.index = sub.index.get_level_values(0)
    return sub


def reliability_table(post: xr.Dataset, design: Design, anova: dict[str, np.ndarray], *,
                      data: xr.Dataset, target: float, ci_prob: float,
                      diagnostics: xr.Dataset, reference: Any = "first") -> pd.DataFrame:
    """The rows of :func:`bayesmeta.reliability`: posterior columns, the ANOVA plug-in
    ``classical`` (MetricEval's estimators for variables with missing cells), and the detail
    columns ``kind``, ``metriceval`` and ``median``."""
    from bayesmeta.reliability.classical import items_needed

    names = [n for n in ESTIMANDS if n in post]
    table = posterior_table(post, names, index=["variable"], ci_prob=ci_prob,
                            diagnostics=diagnostics)
    labels = design.labels
    S, J = design.y.shape[1], design.y.shape[2]
    classical = _by_row(g_study(anova["ss"], anova["df"], n_systems=S, n_items=J,
                                n_runs=design.n_runs, target=target), labels)
    me = metriceval(data, design, reference=reference)
    incomplete = pd.Series(~design.complete, index=labels)
    rows = table.index
    est = rows.get_level_values("estimand")
    var = rows.get_level_values("variable")
    cl = classical.reindex(rows).to_numpy(copy=True)
    me_rows = me.reindex(rows).to_numpy()
    inc = incomplete.reindex(var).to_numpy()
    fill = inc & np.isin(est, ["consistency", "stability", "sem"])
    cl[fill] = me_rows[fill]
    need = inc & (est == "items_needed")
    if need.any():
        alpha = me.xs("consistency", level="estimand") if "consistency" in set(
            me.index.get_level_values("estimand")) else pd.Series(dtype=float)
        cl[need] = items_needed(alpha.reindex(var[need]).to_numpy(dtype=float), J,
                                target=target)
    table.insert(0, "classical", cl)
    multi = pd.Series(design.n_runs > 1, index=labels).reindex(var).to_numpy()
    keep = ~(np.isin(est, MULTI_RUN) & ~multi)
    median = post[names].median(("chain", "draw"))
    table["kind"] = pd.Series(design.kind, index=labels).reindex(var).to_numpy()
    table["metriceval"] = me_rows
    table["median"] = np.concatenate([median[n].values.ravel() for n in names])
    return table[keep]


def reliability_notes(design: Design, *, method: str, n_full: int,
                      messages: list[str]) -> list[str]:
    """Footer notes of a reliability fit (convergence messages first)."""
    out = list(messages)
    n_ident = int(design.identical.sum())
    if n_ident:
        out.append(f"{n_ident} metric(s) gave identical scores in every run (deterministic): "
                   f"their run SD is fixed at 0 and stability is exactly 1.")
    n_single = int((design.n_runs == 1).sum())
    if n_single:
        out.append(f"{n_single} variable{' has' if n_single == 1 else 's have'} one run "
                   f"(ratings and judgments count as one run): interaction and run noise are "
                   f"not separable, so sd_system_item is their sum and stability is not "
                   f"estimated.")
    if n_full and method == "auto":
        out.append(f"{n_full} variable{' has' if n_full == 1 else 's have'} missing cells "
                   f"and used the random-effects likelihood; their classical column holds "
                   f"MetricEval's pairwise-complete estimators.")
    if design.dropped:
        out.append(f"left out (constant, reliability undefined): {', '.join(design.dropped)}.")
    return out


__all__ = [
    "ESTIMANDS",
    "derived",
    "metriceval",
    "original_scale",
    "reliability_notes",
    "reliability_table",
]
