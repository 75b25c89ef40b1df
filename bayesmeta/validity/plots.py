"""Plots of validity results: factor-validity heatmap, residual components, MTMM cells and
matrix. They never compute statistics: each takes a result and returns the Axes."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from bayesmeta.plots import _axes, estimate_column


def _point_and_interval(table: Any) -> tuple[Any, Any, Any]:
    """The estimate column (posterior mean, else classical) and its interval columns."""
    if "mean" in table.columns:
        return table["mean"], table.get("hdi_low"), table.get("hdi_high")
    return table["classical"], table.get("classical_low"), table.get("classical_high")


def plot_validity_heatmap(result: Any, ax: Any = None, estimand: str | None = None) -> Any:
    """Heatmap of ``bm.factor_validity``: metrics x traits coloured by the correlation,
    each cell annotated with the estimate and its interval (MetricEval Fig. 4/8).
    Returns the Axes."""
    table = result.summary()
    est = estimand or str(table.index.get_level_values("estimand")[0])
    sub = table.xs(est, level="estimand")
    point, low, high = _point_and_interval(sub)
    mat = point.unstack("trait")
    metrics, traits = list(mat.index), list(mat.columns)
    ax = _axes(ax, height=max(3.0, 0.45 * len(metrics) + 1))
    im = ax.imshow(mat.to_numpy(dtype=float), cmap="RdBu_r", vmin=-1, vmax=1,
                   aspect="auto")
    for i, m in enumerate(metrics):
        for j, t in enumerate(traits):
            v = mat.loc[m, t]
            text = "" if np.isnan(v) else f"{v:.2f}"
            if low is not None and high is not None and not np.isnan(v):
                text += f"\n[{low.loc[(t, m)]:.2f}, {high.loc[(t, m)]:.2f}]"
            ax.text(j, i, text, ha="center", va="center", fontsize=7,
                    color="white" if abs(v) > 0.6 else "black")
    ax.set_xticks(range(len(traits)), traits)
    ax.set_yticks(range(len(metrics)), metrics)
    ax.set_title(est)
    ax.figure.colorbar(im, ax=ax, fraction=0.046)
    return ax


def plot_residual_pcs(result: Any, ax: Any = None, components: tuple[str, str] = ("PC1",
                                                                                 "PC2")
                      ) -> Any:
    """Scatter of ``bm.metric_residuals``' principal-component loadings (MetricEval
    Fig. 7): one labelled point per metric with its intervals on both axes as a cross.
    Returns the Axes."""
    table = result.summary()
    load = table.xs("pc_loading", level="estimand")
    a, b = components
    pa, la, ha = _point_and_interval(load.xs(a, level="component").droplevel("metric2"))
    pb, lb, hb = _point_and_interval(load.xs(b, level="component").droplevel("metric2"))
    ax = _axes(ax, height=5.0)
    ax.axhline(0, color="0.8", lw=0.8)
    ax.axvline(0, color="0.8", lw=0.8)
    if la is not None and lb is not None:  # intervals as lines (a percentile interval
        # need not contain the point estimate)
        ax.hlines(pb, la, ha, color="C0", alpha=0.4, lw=0.8)
        ax.vlines(pa, lb, hb, color="C0", alpha=0.4, lw=0.8)
    ax.plot(pa, pb, "o", color="C0", ms=4)
    for m in pa.index:
        ax.annotate(str(m), (pa[m], pb[m]), fontsize=6, xytext=(2, 2),
                    textcoords="offset points")
    share = table.xs("pc_variance_share", level="estimand")
    sa = share.xs(a, level="component").iloc[0]
    sb = share.xs(b, level="component").iloc[0]
    col = "mean" if "mean" in share.columns else "classical"
    ax.set_xlabel(f"{a} loading ({sa[col]:.0%} of residual variance)")
    ax.set_ylabel(f"{b} loading ({sb[col]:.0%})")
    return ax


def plot_mtmm_cells(result: Any, ax: Any = None) -> Any:
    """The MTMM table of ``bm.mtmm(data, fit=...)`` as a matrix of variables (method: trait),
    each cell coloured by its kind (convergent, divergent = heterotrait-monomethod,
    heterotrait-heteromethod) and annotated with the estimate. Returns the Axes."""
    from matplotlib.colors import ListedColormap

    table = result.summary()
    kinds = result.details()["evidence"]
    point, _, _ = _point_and_interval(table)
    variables: list[tuple[str, str]] = []
    for _, t, m, t2, m2 in table.index:
        for v in ((m, t), (m2, t2)):
            if v not in variables:
                variables.append(v)
    n = len(variables)
    code = {"convergent": 0, "divergent": 1, "heterotrait-heteromethod": 2}
    grid = np.full((n, n), np.nan)
    ax = _axes(ax, height=max(4.0, 0.35 * n + 1))
    for key, v in point.items():
        _, t, m, t2, m2 = key
        i, j = variables.index((m, t)), variables.index((m2, t2))
        i, j = max(i, j), min(i, j)
        grid[i, j] = code[kinds.loc[key]]
        ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=6)
    ax.imshow(grid, cmap=ListedColormap(["#f4a582", "#92c5de", "#f7f7f7"]), vmin=-0.5,
              vmax=2.5)
    labels = [f"{m}: {t}" for m, t in variables]
    ax.set_xticks(range(n), labels, rotation=90, fontsize=7)
    ax.set_yticks(range(n), labels, fontsize=7)
    ax.set_title("MTMM: convergent (orange), monomethod (blue), heteromethod (grey)",
                 fontsize=8)
    return ax


def plot_mtmm_matrix(frame: pd.DataFrame, title: str) -> Any:
    """Heatmap of the MTMM correlations (reliabilities on the diagonal) from its table.
    Returns the Figure (None without correlation rows)."""
    import matplotlib.pyplot as plt

    est = frame.index.get_level_values(0)
    corr = frame[est == "correlation"]
    if corr.empty or corr.index.nlevels < 3:
        return None
    col = estimate_column(corr) or "classical"
    a = corr.index.get_level_values(1).astype(str)
    b = corr.index.get_level_values(2).astype(str)
    labels = list(dict.fromkeys([*a, *b]))
    pos = {v: k for k, v in enumerate(labels)}
    mat = np.full((len(labels), len(labels)), np.nan)
    for x, y, v in zip(a, b, corr[col].to_numpy(dtype=float), strict=True):
        mat[pos[x], pos[y]] = mat[pos[y], pos[x]] = v
    diag = frame[est != "correlation"]
    for idx, v in zip(diag.index, diag[col].to_numpy(dtype=float), strict=True):
        if str(idx[1]) in pos:
            mat[pos[str(idx[1])], pos[str(idx[1])]] = v
    size = max(3.5, 0.28 * len(labels) + 1.5)
    fig, ax = plt.subplots(figsize=(size + 1, size))
    im = ax.imshow(mat, cmap="RdBu_r", vmin=-1, vmax=1)
    ax.set_xticks(np.arange(len(labels)))
    ax.set_xticklabels(labels, rotation=90, fontsize=6)
    ax.set_yticks(np.arange(len(labels)))
    ax.set_yticklabels(labels, fontsize=6)
    ax.set_title(title, fontsize=10)
    fig.colorbar(im, ax=ax, label=col)
    fig.tight_layout()
    return fig
