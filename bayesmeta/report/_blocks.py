"""Table, reading and plot helpers shared by the report's sections: a result's summary as a
table block, a plain table, a forest plot, and the reading line naming the highest and
lowest estimate with its interval. (Their own module so that a section in a module of its
own, such as :mod:`bayesmeta.report._agreement_section`, uses them without importing
:mod:`bayesmeta.report.sections`, which lists it.)"""

from __future__ import annotations

from typing import Any

import pandas as pd
import xarray as xr

from bayesmeta.plots import estimate_column
from bayesmeta.report._core import Context, TableBlock

__all__ = ["FOREST_ROWS", "KIND", "block", "extremes", "forest", "plain"]

#: Rows of a forest plot (the first estimand only beyond that).
FOREST_ROWS = 40


def _label(idx: Any) -> str:
    """A row's design labels (after the estimand) joined with " / "."""
    parts = idx if isinstance(idx, tuple) else (idx,)
    return " / ".join(str(p) for p in parts[1:] if str(p) != "") or str(parts[0])


def _interval(row: pd.Series, column: str | None = None) -> str:
    """The interval that goes with ``column`` (``"mean"``: the posterior interval;
    ``"classical"``: the classical one; None: whichever exists, posterior first)."""
    pairs = {"mean": [("hdi_low", "hdi_high")],
             "classical": [("classical_low", "classical_high")]}.get(
        str(column), [("hdi_low", "hdi_high"), ("classical_low", "classical_high")])
    for lo, hi in pairs:
        if lo in row and pd.notna(row[lo]) and pd.notna(row[hi]):
            return f" [{row[lo]:.2f}, {row[hi]:.2f}]"
    return ""


#: How a reading names the number it quotes (issue 21: the same Kendall was 0.86 in one
#: section and 0.77 in another, a classical estimate and a posterior mean, unlabelled).
KIND = {"mean": "posterior mean", "classical": "classical estimate"}


def extremes(frame: pd.DataFrame, estimand: str | None = None, *, what: str = "",
             higher: str = "highest", lower: str = "lowest", column: str | None = None) -> str:
    """One plain-language line naming the rows with the highest and lowest estimate of an
    estimand, with their intervals."""
    if frame.empty:
        return ""
    est = frame.index.get_level_values(0)
    if estimand is None:
        estimand = str(est[0])
    sub = frame[est == estimand]
    col = column if column in sub.columns else estimate_column(sub)
    if col is None or sub[col].notna().sum() == 0:
        return ""
    s = sub[col].astype(float)
    top, bottom = s.idxmax(), s.idxmin()
    name = what or estimand
    line = (f"{name} ({KIND[col]}): {higher} {_label(top)} {s[top]:.2f}"
            f"{_interval(sub.loc[top], col)}")
    if bottom != top:
        line += (f"; {lower} {_label(bottom)} {s[bottom]:.2f}"
                 f"{_interval(sub.loc[bottom], col)}")
    return line + "."


def block(result: Any, ctx: Context, caption: str | None = None, *,
          rows: Any = None, rank: bool = False) -> TableBlock:
    """A result's summary as a table block (optionally a subset of its rows), marked as a
    preview when it comes from a ``bayes="fast"`` fit."""
    frame = result.summary()
    attrs = dict(frame.attrs)
    total = len(frame)
    if rows is not None:
        frame = frame[rows]
        frame.attrs = attrs
    prov = getattr(result, "provenance", {}) or {}
    mcmc = "r_hat" in frame.columns or "sampler" in prov
    preview = bool(int(prov.get("fast", 0) or 0)) or (ctx.bayes == "fast" and mcmc)
    notes = []
    if rows is not None and len(frame) < total:
        notes.append(f"{len(frame)} of the result's {total} rows shown here.")
    if preview:
        notes.append("--bayes fast: a preview with capped draws; rerun with --bayes full "
                     "before reporting these numbers.")
    return TableBlock(caption or getattr(result, "title", ""), frame, notes=notes,
                      signature=result.signature() if hasattr(result, "signature") else "",
                      preview=preview, total_rows=len(frame), rank=rank)


def plain(frame: pd.DataFrame, caption: str, notes: list[str] | None = None) -> TableBlock:
    """A plain table (no estimates), e.g. sizes or missing counts."""
    return TableBlock(caption, frame, notes=list(notes or []))


def forest(result: Any, estimand: str | None = None, title: str | None = None) -> Any:
    """Forest plot (classical and posterior intervals) of one estimand of a result."""
    from bayesmeta.plots import plot_forest
    from bayesmeta.results import TableView

    table = result.summary()
    est = table.index.get_level_values(0)
    estimand = str(est[0]) if estimand is None else estimand
    sub = table[est == estimand].iloc[:FOREST_ROWS].copy()
    sub.index = pd.Index([_label(i) for i in sub.index])
    view = TableView(sub, title or f"{result.title}: {estimand}", result.ci_prob)
    return plot_forest(view).figure


def _estimands(result: Any) -> list[str]:
    return [str(e) for e in pd.unique(result.summary().index.get_level_values(0))]


# ----------------------------------------------------------------------------- ratings
def _n(ds: xr.Dataset, dim: str) -> int:
    return int(ds.sizes.get(dim, 0))


def _has_ratings(ds: xr.Dataset) -> bool:
    return "rating" in ds and _n(ds, "rater") >= 1


def _rating_traits(ds: xr.Dataset, ctx: Context) -> list[str]:
    from bayesmeta.data.select import human_traits

    kinds = human_traits(ds)
    return [t for t in ctx.traits if kinds.get(t) == "rating"]


def _no_ratings_reason(ds: xr.Dataset) -> str:
    if "judgment" in ds:
        return ("the data has continuous human scores (variable 'judgment', e.g. averages "
                "over annotators) and no ordinal ratings by rater")
    return "the data has no ordinal ratings by rater (variable 'rating')"
