"""The page's opening answer (issue 21: the answer first).

What a user came for, per human trait, before any section: which metrics can be trusted and
how much (the best metrics with their intervals and P(best)), which raters or judges
deviate, what the data could not support (skipped, partial and failed sections, with the
reasons) and every data-quality finding. Sections offer the lines
(:class:`~bayesmeta.report._core.Finding`); this module only collects them and adds what the
report as a whole knows (section statuses, convergence, what the budget reduced).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from bayesmeta.report._core import Finding

if TYPE_CHECKING:
    from bayesmeta.report._report import Report

__all__ = ["best_metrics", "build_answer"]

#: Metrics listed per trait in the answer.
TOP_METRICS = 5


def best_metrics(frame: pd.DataFrame, measure: str, trait: str,
                 rank_probability: pd.DataFrame | None = None,
                 p_beats: pd.DataFrame | None = None, *, k: int = TOP_METRICS) -> Finding:
    """The answer's line for one trait: the metrics ranked by their classical estimate of
    ``measure`` (ties broken by P(best), then the posterior mean), the first ``k`` with
    their intervals and P(best), and one sentence naming the best.

    ``frame`` is a correlations summary (index ``estimand, trait, metric``);
    ``rank_probability`` the ``(metric, rank)`` table of :func:`compare_metrics`;
    ``p_beats`` its square P(row beats column) table.
    """
    est = frame.index.get_level_values(0).astype(str)
    sub = frame[est == measure].copy()
    sub.index = [str(i[-1]) if isinstance(i, tuple) else str(i) for i in sub.index]
    cols = [c for c in ("classical", "classical_low", "classical_high", "mean", "hdi_low",
                        "hdi_high") if c in sub.columns]
    top = sub[cols].astype(float)
    if rank_probability is not None:
        rp = rank_probability.copy()
        rp.index = rp.index.astype(str)
        top["p_best"] = rp.iloc[:, 0].reindex(top.index).astype(float)
    keys = [c for c in ("classical", "p_best", "mean") if c in top.columns]
    top = top.sort_values(keys, ascending=False, na_position="last", kind="mergesort")
    defined = top["classical"].notna()
    if not defined.any():
        return Finding("best", f"{trait}: no metric has a {measure} value (see the "
                               f"correlation section for why).", trait=trait)
    best = str(top.index[0])
    r = top.iloc[0]
    text = (f"{trait}: the best metric is {best}, {measure} {r['classical']:.2f} "
            f"(classical estimate")
    if pd.notna(r.get("classical_low", np.nan)):
        text += f", interval {r['classical_low']:.2f} to {r['classical_high']:.2f}"
    text += ")"
    if pd.notna(r.get("mean", np.nan)):
        text += (f"; posterior mean {r['mean']:.2f} [{r['hdi_low']:.2f}, "
                 f"{r['hdi_high']:.2f}]")
    if pd.notna(r.get("p_best", np.nan)):
        text += f"; P(best) = {r['p_best']:.2f}"
    text += "."
    tied = int((np.abs(top["classical"] - r["classical"]) < 1e-12).sum()) - 1
    if tied:
        text += f" {tied} other metric(s) have the same classical estimate."
    if len(top) > 1 and p_beats is not None and best in p_beats.index:
        second = str(top.index[1])
        if second in p_beats.columns:
            p2 = float(p_beats.loc[best, second])
            text += (f" P({best} beats {second}, the runner-up) = {p2:.2f}"
                     + (": the data cannot tell them apart." if p2 < 0.9 else "."))
    if pd.notna(r.get("classical_low", np.nan)) and r["classical_low"] <= 0:
        text += " Its interval includes 0: no metric is shown to agree with humans."
    shown = top.head(k).copy()
    shown.index.name = "metric"
    return Finding("best", text, trait=trait, frame=shown)


def build_answer(report: Report) -> dict[str, Any]:
    """The opening answer as the template wants it: per-trait lines with their tables,
    raters, limits of the data, data-quality findings, convergence, budget reductions."""
    best, raters, quality, limits = [], [], [], []
    for run in report.runs:
        if run.status == "skipped":
            limits.append(f"{run.title}: skipped, {run.reason}.")
        elif run.status == "failed":
            limits.append(f"{run.title}: failed ({run.error}).")
        elif run.status == "partial":
            limits += [f"{run.title}: {why}" for why in run.partial]
        if run.output is None:
            continue
        for f in run.output.findings:
            {"best": best, "raters": raters, "quality": quality,
             "limit": limits}.get(f.kind, limits).append(f)
    if report.context.bayes == "off":
        limits.append("Posteriors of the Bayesian models (true-score reliability, rater "
                      "diagnosis, Bayesian CFA) were not computed: --bayes off. The "
                      "posterior columns shown come from the Bayesian bootstrap.")
    return {"best": best, "raters": raters, "quality": quality,
            "limits": [x.text if isinstance(x, Finding) else x for x in limits],
            "reduced": list(report.context.reduced)}
