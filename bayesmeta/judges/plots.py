"""Plots of the alt-test (plots never compute statistics)."""

from __future__ import annotations

from typing import Any

import pandas as pd


def plot_epsilon_curve(curve: pd.DataFrame, *, epsilon: float | None = None,
                       ax: Any = None) -> Any:
    """P(winning rate >= 0.5) (solid) and the classical winning rate (dashed) against
    epsilon, one colour per judge; the chosen epsilon as a vertical line and 0.5 as a
    horizontal one. ``curve`` is :meth:`AltTestResult.epsilon_curve`. Returns the Axes."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(6, 4))
    frame = curve.reset_index()
    for k, (judge, part) in enumerate(frame.groupby("rater", sort=False)):
        colour = f"C{k % 10}"
        ax.plot(part["epsilon"], part["prob_pass"], color=colour, label=f"{judge}")
        ax.plot(part["epsilon"], part["winning_rate_classical"], color=colour,
                linestyle="--", linewidth=1)
    ax.axhline(0.5, color="grey", linewidth=0.8)
    if epsilon is not None:
        ax.axvline(float(epsilon), color="grey", linestyle=":", linewidth=0.8)
    ax.set_xlabel("epsilon (cost-benefit margin)")
    ax.set_ylabel("P(winning rate >= 0.5); dashed: classical winning rate")
    ax.set_ylim(-0.02, 1.02)
    ax.legend(fontsize=8, frameon=False)
    return ax
