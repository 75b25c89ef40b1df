"""Plots of the rater model's results (thresholds by rater). They never compute statistics:
each takes a result and returns the Axes."""

from __future__ import annotations

from typing import Any

import numpy as np

from bayesmeta.plots import _axes


def plot_rater_thresholds(result: Any, ax: Any = None) -> Any:
    """Forest plot of a :class:`~bayesmeta.raters.model.RaterBiasResult`'s thresholds by
    rater; returns the Axes.

    One row per trait and cut, one colour per rater: the posterior mean as a dot, the HDI
    as a line; the panel threshold (mean over raters) as a grey vertical tick. Nothing is
    computed here: the values come from ``result.summary()``.
    """
    table = result.summary()
    est = table.index.get_level_values("estimand")
    thr = table[est == "threshold"].droplevel("estimand")
    panel = table[est == "panel_threshold"].droplevel(["estimand", "rater"])
    raters = list(dict.fromkeys(thr.index.get_level_values("rater")))
    rows = list(dict.fromkeys((t, c) for _, t, c in thr.index))
    ax = _axes(ax, height=max(3.0, 0.35 * len(rows) + 1))
    n = len(raters)
    offsets = ((n - 1) / 2 - np.arange(n)) * (0.6 / max(n, 1))  # first rater on top
    ypos = {row: len(rows) - 1 - k for k, row in enumerate(rows)}
    for j, rater in enumerate(raters):
        sub = thr.xs(rater, level="rater")
        y = np.array([ypos[(t, c)] for t, c in sub.index]) + offsets[j]
        ax.hlines(y, sub["hdi_low"], sub["hdi_high"], color=f"C{j}", lw=1.6)
        ax.plot(sub["mean"], y, "o", color=f"C{j}", ms=4, label=rater)
    for (t, c), row in panel.iterrows():
        ax.vlines(row["mean"], ypos[(t, c)] - 0.4, ypos[(t, c)] + 0.4, color="0.5", lw=1)
    ax.set_yticks([ypos[r] for r in rows])
    ax.set_yticklabels([f"{t} {c}" for t, c in rows], fontsize=8)
    ax.set_xlabel("threshold (SD of output quality; grey: panel)")
    ax.set_title(f"{result.title}: thresholds by rater ({result.ci_prob:.0%} HDI)", fontsize=10)
    ax.legend(fontsize=8, loc="best")
    ax.figure.tight_layout()
    return ax
