"""Plots of reliability results (the decision study's curves). They never compute statistics:
each takes a result and returns the Axes."""

from __future__ import annotations

from typing import Any

import numpy as np

from bayesmeta.plots import _axes


def plot_decision_curve(table: Any, ax: Any = None, *, variables: Any = None,
                        n_runs: Any = None, target: float | None = None,
                        title: str | None = None) -> Any:
    """Decision-study curves from the summary of a
    :class:`~bayesmeta.reliability.d_study.DecisionStudyResult` (index ``(estimand,
    variable, n_items, n_runs)``; a result is accepted too): posterior mean reliability
    against the number of items (line), its HDI (band), the classical plug-in (dashed) and
    the ``target`` (dotted). Returns the Axes."""
    if hasattr(table, "summary"):
        target = getattr(table, "target", None) if target is None else target
        title = table.title if title is None else title
        table = table.summary()
    ci_prob = table.attrs.get("ci_prob", float("nan"))
    rel = table.xs("reliability", level="estimand")
    var = rel.index.get_level_values("variable")
    runs = rel.index.get_level_values("n_runs").astype(int)
    vs = list(dict.fromkeys(var))
    if variables is not None:
        vs = [v for v in vs if v in {str(x) for x in variables}]
    rs = sorted(set(runs))
    if n_runs is not None:
        rs = [r for r in rs if r in {int(x) for x in n_runs}]
    ax = _axes(ax, height=4.0)
    k = 0
    for v in vs:
        for r in rs:
            rows = (var == v) & (runs == r)
            if not rows.any():
                continue
            sub = rel[rows]
            x = np.asarray(sub.index.get_level_values("n_items"), dtype=float)
            order = np.argsort(x)
            x, sub = x[order], sub.iloc[order]
            color = f"C{k % 10}"
            label = v if len(rs) == 1 else f"{v}, {r} run{'s' if r > 1 else ''}"
            ax.fill_between(x, sub["hdi_low"], sub["hdi_high"], color=color, alpha=0.2, lw=0)
            ax.plot(x, sub["mean"], "-", color=color, lw=1.5, label=label)
            if sub["classical"].notna().any():
                ax.plot(x, sub["classical"], "--", color=color, lw=1)
            k += 1
    if target is not None:
        ax.axhline(target, color="0.4", ls=":", lw=1)
    ax.set_xlabel("number of items")
    ax.set_ylabel("reliability of system means")
    ax.set_title(f"{title or 'Decision study'} (bands: {ci_prob:.0%} HDI; dashed: classical)",
                 fontsize=9)
    ax.legend(fontsize=7, loc="lower right")
    ax.figure.tight_layout()
    return ax
