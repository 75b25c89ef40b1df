"""Plots. They never compute statistics: each takes a result and returns the Axes."""

from __future__ import annotations

from typing import Any

import numpy as np


def _axes(ax: Any, height: float = 4.0) -> Any:
    if ax is not None:
        return ax
    import matplotlib

    if matplotlib.get_backend().lower() not in ("agg", "module://matplotlib_inline.backend_inline"):
        try:
            import matplotlib.pyplot as plt
        except Exception:  # pragma: no cover - headless fallbacks
            matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    _, ax = plt.subplots(figsize=(6.5, height))
    return ax


def plot_forest(result: Any, ax: Any = None, column: str | None = None) -> Any:
    """Forest plot of a result's summary: the classical estimate as a cross and, where a
    posterior exists, its mean as a dot with the HDI as a line. Returns the Axes."""
    table = result.summary()
    column = column or "classical"
    labels = [str(i) for i in table.index]
    y = np.arange(len(labels))[::-1]
    ax = _axes(ax, height=max(2.5, 0.22 * len(labels) + 1))
    if {"hdi_low", "hdi_high", "mean"} <= set(table.columns):
        ax.hlines(y, table["hdi_low"], table["hdi_high"], color="C0", lw=2,
                  label=f"{result.ci_prob:.0%} HDI")
        ax.plot(table["mean"], y, "o", color="C0", label="posterior mean")
    if {"classical_low", "classical_high"} <= set(table.columns):
        ax.hlines(y - 0.2, table["classical_low"], table["classical_high"], color="C1", lw=1)
    if column in table.columns:
        ax.plot(table[column], y - (0.2 if "classical_low" in table else 0), "x", color="C1",
                label=column)
    ax.set_yticks(y)
    ax.set_yticklabels(labels, fontsize=8)
    ax.set_title(result.title, fontsize=10)
    ax.legend(fontsize=8, loc="best")
    ax.figure.tight_layout()
    return ax
