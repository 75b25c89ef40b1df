"""Plots. They never compute statistics: each takes a result and returns the Axes."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd


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


def estimate_column(frame: pd.DataFrame) -> str | None:
    for c in ("mean", "classical"):
        if c in frame.columns and frame[c].notna().any():
            return c
    return None


def plot_table_heatmap(frame: pd.DataFrame, rows: str, cols: str, title: str, *,
            vmin: float = -1.0, vmax: float = 1.0) -> Any:
    """Heatmap of one estimate column of a table, ``rows`` x ``cols`` index levels (the
    first estimand only). Returns the Figure (None when the table lacks the levels)."""
    import matplotlib.pyplot as plt

    est = frame.index.get_level_values(0)
    sub = frame[est == est[0]]
    col = estimate_column(sub)
    if col is None or rows not in sub.index.names or cols not in sub.index.names:
        return None
    mat = sub[col].groupby(level=[rows, cols], sort=False).first().unstack(cols)
    h = max(3.0, 0.25 * mat.shape[0] + 1.5)
    w = max(4.0, 0.5 * mat.shape[1] + 3.5)
    fig, ax = plt.subplots(figsize=(w, h))
    im = ax.imshow(mat.to_numpy(dtype=float), cmap="RdBu_r", vmin=vmin, vmax=vmax,
                   aspect="auto")
    ax.set_yticks(np.arange(mat.shape[0]))
    ax.set_yticklabels([str(v) for v in mat.index], fontsize=7)
    ax.set_xticks(np.arange(mat.shape[1]))
    ax.set_xticklabels([str(v) for v in mat.columns], rotation=45, ha="right", fontsize=7)
    if mat.size <= 400:
        for (i, j), v in np.ndenumerate(mat.to_numpy(dtype=float)):
            if np.isfinite(v):
                ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=6,
                        color="white" if abs(v) > 0.6 * max(abs(vmin), abs(vmax)) else "black")
    ax.set_title(title, fontsize=10)
    fig.colorbar(im, ax=ax, label=col)
    fig.tight_layout()
    return fig
