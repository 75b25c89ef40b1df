"""Plots of paper 003's corroboration results (:func:`bayesmeta.corroboration`): they
draw what the result holds and compute nothing."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from bayesmeta.data import select


def plot_heterogeneity(result: Any, *, y: str = "reliability",
                       ax: Any = None) -> Any:
    """Heterogeneity against reliability (paper 003, Figs. 2-3) or against the reliability
    gain (``y="gain"``, Figs. 5-6): one point per set at its posterior means (classical
    estimates without resampling) with its interval, coloured by size. Returns the Axes."""
    import matplotlib.pyplot as plt

    if y not in ("reliability", "gain"):
        raise ValueError(f"y must be 'reliability' or 'gain', got {y!r}.")
    tab = result.summary()
    col = "mean" if "mean" in tab.columns else "classical"
    lo, hi = ("hdi_low", "hdi_high") if col == "mean" else ("classical_low", "classical_high")
    h = tab.xs("heterogeneity", level="estimand")
    v = tab.xs(y, level="estimand")
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 4.5))
    sizes = v.index.get_level_values("size")
    cmap = plt.get_cmap("viridis")
    uniq = sorted(set(sizes))
    for j, k in enumerate(uniq):
        sel = np.asarray(sizes == k)
        yv = v[col].to_numpy()[sel]
        err = None
        if lo in v.columns:
            err = np.abs(np.vstack([yv - v[lo].to_numpy()[sel], v[hi].to_numpy()[sel] - yv]))
        ax.errorbar(h[col].to_numpy()[sel], yv, yerr=err, fmt="o", ms=3, lw=0.6,
                    color=cmap(j / max(1, len(uniq) - 1)), label=f"size {k}", alpha=0.8)
    if y == "gain":
        ax.axhline(0, color="grey", lw=0.8)
    ax.set_xlabel("heterogeneity H(X)")
    ax.set_ylabel("reliability R(X)" if y == "reliability" else "reliability gain")
    ax.legend(fontsize=7)
    return ax


def plot_threshold_curves(result: Any, *, metrics: Sequence[str] | None = None,
                          ax: Any = None) -> Any:
    """The single metrics' :math:`R_{th}` against :math:`S_{th}` (one line per metric, the
    threshold falling from left to right), with the sets' (S, R) as points. Returns the
    Axes."""
    import matplotlib.pyplot as plt

    curves = result.extra["curves"]
    names = [str(m) for m in curves["metric"].values]
    pick = names if metrics is None else [str(m) for m in select.check_labels(
        np.array(names, dtype=object), list(metrics), "metric")]
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 4.5))
    for m in pick:
        c = curves.sel(metric=m)
        ax.plot(c["sensitivity"].values, c["reliability"].values, lw=0.8, label=m)
    tab = result.summary()
    col = "mean" if "mean" in tab.columns else "classical"
    r = tab.xs("reliability", level="estimand")[col]
    s = tab.xs("sensitivity", level="estimand")[col]
    ax.scatter(s.to_numpy(), r.to_numpy(), s=8, color="k", zorder=3, label="sets")
    ax.set_xlabel("sensitivity S")
    ax.set_ylabel("reliability R")
    if len(pick) <= 12:
        ax.legend(fontsize=7)
    return ax


__all__ = ["plot_heterogeneity", "plot_threshold_curves"]
