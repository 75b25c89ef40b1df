"""HTML rendering of a :class:`~bayesmeta.report.Report`: one self-contained page.

Everything that comes from data (system, metric, rater names, error messages) reaches the
page through Jinja2's autoescaping; the only markup built here is the inline SVG of the
interval bars, made from numbers alone. Plots are inline PNG data URIs; the page has no
script and no external resource, and prints cleanly (print CSS).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from bayesmeta.report._core import (
    ESS_MIN,
    RHAT_MAX,
    TableBlock,
    _doc_summary,
    convergence_by_table,
)
from bayesmeta.report._template import CSS, TEMPLATE

if TYPE_CHECKING:  # _report imports this module to render a Report
    from bayesmeta.report._report import Report

#: Rows shown at the top of a table; a longer table also has its full version in a
#: collapsible ``<details>`` below and as a CSV download.
TOP_ROWS = 20
#: Rows of the full (collapsible) version; beyond this the full table is the CSV download.
FULL_ROWS = 3000
#: Kept for older callers: the rows shown at the top of a table.
MAX_ROWS = TOP_ROWS

#: Column labels on the page where a table has both a classical and a posterior column.
LABELS = {"classical": "classical estimate", "mean": "posterior mean",
          "sd": "posterior sd"}

_BAR_W, _BAR_H = 150, 16


def _jinja() -> Any:
    try:
        import jinja2
    except ImportError as err:  # pragma: no cover - jinja2 is a dependency
        raise ImportError("the HTML report needs jinja2: pip install jinja2 (a dependency of "
                          "bayesmeta).") from err
    return jinja2


def page_environment() -> Any:
    """The Jinja2 environment of every bayesmeta page: autoescaping on (data never reaches a
    page unescaped), undefined names an error."""
    jinja2 = _jinja()
    return jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined,
                              trim_blocks=True, lstrip_blocks=True)


def _fmt(col: str, v: Any) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    if isinstance(v, bool | np.bool_):
        return str(bool(v))
    if isinstance(v, int | np.integer):
        return str(int(v))
    if isinstance(v, float | np.floating):
        if col in ("ess_bulk", "ess_tail"):
            return f"{v:.0f}"
        if not math.isfinite(v):
            return str(v)
        return f"{v:.3f}" if abs(v) < 1e4 else f"{v:.4g}"
    return str(v)


def _x(v: float, lo: float, hi: float) -> float:
    """Position on the bar; values off the common scale are clipped to its ends."""
    return 4 + (min(max(v, lo), hi) - lo) / (hi - lo) * (_BAR_W - 8)


def interval_bar(row: pd.Series, lo: float, hi: float) -> str:
    """Inline SVG of one row's intervals on a common scale: the classical interval in
    orange (estimate: cross), the posterior interval in blue (mean: dot); zero dotted.
    Built from numbers only."""
    parts = [f'<svg class="bar" width="{_BAR_W}" height="{_BAR_H}" viewBox="0 0 {_BAR_W} '
             f'{_BAR_H}" role="img">']
    if lo < 0 < hi:
        z = _x(0.0, lo, hi)
        parts.append(f'<line x1="{z:.1f}" y1="0" x2="{z:.1f}" y2="{_BAR_H}" stroke="#999" '
                     f'stroke-dasharray="2,2"/>')

    def seg(a_key: str, b_key: str, mid_key: str, y: float, color: str, dot: bool) -> None:
        a, b, m = (row.get(k, np.nan) for k in (a_key, b_key, mid_key))
        if all(isinstance(v, float | int | np.floating) and math.isfinite(v) for v in (a, b)):
            parts.append(f'<line x1="{_x(a, lo, hi):.1f}" y1="{y}" x2="{_x(b, lo, hi):.1f}" '
                         f'y2="{y}" stroke="{color}" stroke-width="2.5"/>')
        if isinstance(m, float | int | np.floating) and math.isfinite(m):
            x = _x(m, lo, hi)
            if dot:
                parts.append(f'<circle cx="{x:.1f}" cy="{y}" r="3" fill="{color}"/>')
            else:
                parts.append(f'<path d="M{x - 3:.1f} {y - 3} l6 6 M{x - 3:.1f} {y + 3} l6 -6" '
                             f'stroke="{color}" stroke-width="1.5"/>')

    seg("classical_low", "classical_high", "classical", 5, "#d9730d", False)
    seg("hdi_low", "hdi_high", "mean", 11, "#1f5fa8", True)
    seg("elpd_low", "elpd_high", "elpd", 11, "#1f5fa8", True)
    parts.append("</svg>")
    return "".join(parts)


def _scales(frame: pd.DataFrame) -> dict[Any, tuple[float, float]]:
    """A common axis per estimand (first index level), from every interval and estimate."""
    cols = [c for c in ("classical", "classical_low", "classical_high", "mean", "hdi_low",
                        "hdi_high", "elpd", "elpd_low", "elpd_high") if c in frame.columns]
    if not cols or not any(c.endswith(("_low", "_high")) for c in cols):
        return {}
    key = frame.index.get_level_values(0)
    out = {}
    for est in pd.unique(key):
        vals = frame.loc[key == est, cols].to_numpy(dtype=float)
        vals = vals[np.isfinite(vals)]
        if vals.size == 0:
            continue
        lo, hi = float(vals.min()), float(vals.max())
        if vals.size >= 20:  # one wild interval must not squash every other bar
            q_lo, q_hi = np.quantile(vals, [0.02, 0.98])
            spread = q_hi - q_lo
            lo, hi = max(lo, q_lo - 0.5 * spread), min(hi, q_hi + 0.5 * spread)
        if hi - lo < 1e-12:
            lo, hi = lo - 0.5, hi + 0.5
        pad = 0.04 * (hi - lo)
        out[est] = (lo - pad, hi + pad)
    return out


def csv_uri(frame: pd.DataFrame) -> str:
    """A table as a ``data:`` URI of its CSV (raw values, every row): a download link that
    keeps the page self-contained."""
    import base64

    text = frame.to_csv()
    return "data:text/csv;charset=utf-8;base64," + base64.b64encode(
        text.encode("utf-8")).decode("ascii")


def _rows(frame: pd.DataFrame, index_names: list[str], scales: dict[Any, Any]) -> list[dict]:
    from markupsafe import Markup

    flagged_r = frame["r_hat"] > RHAT_MAX if "r_hat" in frame.columns else None
    flagged_e = frame["ess_bulk"] < ESS_MIN if "ess_bulk" in frame.columns else None
    rows = []
    for k, (idx, r) in enumerate(frame.iterrows()):
        labels = list(idx) if isinstance(idx, tuple) else ([idx] if index_names else [])
        cells = []
        for c in frame.columns:
            bad = (c == "r_hat" and flagged_r is not None and bool(flagged_r.iloc[k])) or (
                c == "ess_bulk" and flagged_e is not None and bool(flagged_e.iloc[k]))
            cells.append({"text": _fmt(str(c), r[c]), "bad": bad,
                          "num": pd.api.types.is_number(r[c])})
        est = labels[0] if labels else None
        bar = Markup(interval_bar(r, *scales[est])) if est in scales else ""
        rows.append({"labels": [str(v) for v in labels], "cells": cells, "bar": bar})
    return rows


def _top(frame: pd.DataFrame, rank: bool) -> pd.DataFrame:
    """The rows shown at the top: the first :data:`TOP_ROWS`, or (``rank``) the
    :data:`TOP_ROWS` with the highest estimate."""
    if not rank:
        return frame.iloc[:TOP_ROWS]
    col = next((c for c in ("classical", "mean") if c in frame.columns
                and frame[c].notna().any()), None)
    if col is None:
        return frame.iloc[:TOP_ROWS]
    return frame.sort_values(col, ascending=False, na_position="last",
                             kind="mergesort").iloc[:TOP_ROWS]


def table_view(block: TableBlock) -> dict[str, Any]:
    """A table as the template wants it: header, the rows at the top, the full table when
    they are not all of it, a CSV link, notes."""
    _jinja()
    frame = block.frame
    index_names = [str(n) if n is not None else "" for n in frame.index.names]
    if len(frame.index.names) == 1 and frame.index.names[0] is None and isinstance(
            frame.index, pd.RangeIndex):
        index_names = []
    both = "classical" in frame.columns and "mean" in frame.columns
    columns = [LABELS.get(str(c), str(c)) if both else str(c) for c in frame.columns]
    scales = _scales(frame)
    shown = frame.iloc[:0] if block.collapsed else _top(frame, block.rank)
    cut = block.collapsed or len(shown) < len(frame)
    full = frame.iloc[:FULL_ROWS] if cut else frame.iloc[:0]
    notes = list(block.notes)
    if cut and not block.collapsed:
        order = "with the highest estimate" if block.rank else "first"
        notes.append(f"showing the {len(shown)} rows {order} of {len(frame)}; every row is in "
                     f"the full table below and in the CSV.")
    if len(frame) > FULL_ROWS:
        notes.append(f"the full table below stops at {FULL_ROWS} of {len(frame)} rows; the CSV "
                     f"has every row.")
    a = frame.attrs
    if "classical_low" in frame.columns and a.get("classical_ci_kind"):
        notes.append(f"classical_low/high: {float(a.get('classical_ci_prob', np.nan)):.0%} "
                     f"{a['classical_ci_kind']} interval (orange bar; cross = estimate).")
    if "hdi_low" in frame.columns:
        kind = a.get("ci_kind") or "hdi"
        kind = "highest-density interval" if kind == "hdi" else f"{kind} interval"
        notes.append(f"mean, sd, hdi_low/high: posterior; {float(a.get('ci_prob', np.nan)):.0%} "
                     f"{kind} (blue bar; dot = mean).")
    if "classical" in frame.columns and not {"classical_low", "hdi_low"} & set(frame.columns):
        notes.append("no interval: this analysis gives point estimates only (no bootstrap "
                     "or posterior for it in this report); read them as descriptive.")
    if both:
        notes.append("classical estimate: the estimator computed on the data as observed; "
                     "posterior mean: the mean over the posterior draws. They differ in "
                     "general; quote them with their own intervals.")
    if "elpd_low" in frame.columns:
        notes.append(f"elpd, elpd_low/high: PSIS-LOO expected log predictive density; "
                     f"{float(a.get('elpd_ci_prob', np.nan)):.0%} {a.get('elpd_ci_kind', '')} "
                     f"interval (blue bar; dot = estimate).")
    if "r_hat" in frame.columns:
        notes.append(f"r_hat <= {RHAT_MAX} and ess_bulk >= {ESS_MIN} mean the chains agree "
                     f"and the summary is precise enough to report (red: not met).")
    slug = "".join(ch if ch.isalnum() else "-" for ch in block.caption.lower()).strip("-")
    return {"caption": block.caption, "index_names": index_names, "columns": columns,
            "rows": _rows(shown, index_names, scales), "notes": notes,
            "full_rows": _rows(full, index_names, scales), "n_rows": len(frame),
            "collapsed": block.collapsed, "csv": csv_uri(frame),
            "csv_name": (slug[:60] or "table") + ".csv", "signature": block.signature,
            "preview": block.preview, "has_bar": bool(scales)}


def _answer_table(frame: pd.DataFrame, *, first: bool) -> dict[str, Any]:
    """A best-metrics table of the answer (its column notes only under the first)."""
    view = table_view(TableBlock("", frame.rename(columns={"p_best": "P(best)"})))
    if not first:
        view["notes"] = []
    return view


def render_html(report: Report, *, standalone: bool = True) -> str:
    """The report as one HTML page (or a fragment for Jupyter)."""
    template = page_environment().from_string(TEMPLATE)
    sections = []
    for run in report.runs:
        item: dict[str, Any] = {"key": run.key, "title": run.title, "status": run.status,
                                "seconds": f"{run.seconds:.1f}", "reason": run.reason,
                                "error": run.error, "warnings": run.warnings,
                                "images": [dict(info, src=uri) for uri, info in zip(
                                    run.images, run.image_info or [{}] * len(run.images),
                                    strict=True)],
                                "partial": run.partial, "tables": [], "reading": [],
                                "methods": [], "notes": []}
        if run.output is not None:
            item["tables"] = [table_view(b) for b in run.output.tables]
            item["reading"] = [ln for ln in run.output.reading.split("\n") if ln.strip()]
            item["methods"] = [_doc_summary(m) for m in run.output.methods]
            item["notes"] = run.output.notes
        sections.append(item)
    from bayesmeta.report._answer import build_answer

    conv = report.convergence
    p = report.provenance
    answer = build_answer(report)
    answer["best"] = [{"text": f.text, "trait": f.trait,
                       "table": _answer_table(f.frame, first=k == 0)
                       if f.frame is not None else None}
                      for k, f in enumerate(answer["best"])]
    answer["raters"] = [f.text for f in answer["raters"]]
    answer["quality"] = [f.text for f in answer["quality"]]
    settings = [("bayesmeta version", p["bayesmeta"]), ("data", report.source),
                ("data hash", p["data_hash"]), ("random seed", str(p["random_seed"])),
                ("Bayesian analyses", {"off": "off (classical only; run with --bayes fast "
                                              "or full for posteriors)",
                                       "fast": "fast: PREVIEW with capped draws; do not "
                                               "report these numbers",
                                       "full": "full sampler settings"}[p["bayes"]]),
                ("resamples / permutations", str(p["n_resamples"])),
                ("budget", report.budget_line),
                ("interval probability", f"{p['ci_prob']:.0%}"),
                ("traits", ", ".join(report.context.traits) or "none"),
                ("created", report.created)]
    if "sampler" in p:
        s = p["sampler"]
        settings.append(("sampler", ", ".join(f"{k}={v}" for k, v in s.items())))
    return template.render(
        standalone=standalone, css=CSS, title=report.title, source=report.source,
        sizes=" x ".join(f"{v} {k}{'s' if v != 1 else ''}" for k, v in report.sizes.items()),
        settings=settings, signature=report.signature(), sections=sections,
        convergence=conv.to_dict("records"), conv_groups=convergence_by_table(conv),
        fast=p["bayes"] == "fast", answer=answer,
        counts={s: sum(r.status == s for r in report.runs) for s in ("ok", "partial",
                                                                      "skipped", "failed")},
    )
