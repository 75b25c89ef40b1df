"""Plots of the correlation-measure results (paper 001): p-value curves, rank distributions,
P(A beats B). They never compute statistics: each takes a result and returns the Axes."""

from __future__ import annotations

from typing import Any

import numpy as np

from bayesmeta.plots import _axes


def plot_pvalue_curves(result: Any, ax: Any = None, measures: Any = None) -> Any:
    """P-value curves of a :class:`~bayesmeta.correlation.metameasures.DiscriminativePowerResult`
    (paper 001, Sec. 4.1): each measure's pair p-values sorted in descending order; the
    closer to the axes, the more discriminative. Returns the Axes."""
    from bayesmeta.correlation.measures import split_measure

    curve = result.extra["curve"]
    names = list(curve["measure"].values) if measures is None else list(measures)
    ax = _axes(ax, height=4.5)
    styles = {"pearson": "-", "spearman": "--", "kendall": ":"}
    colors = {"system": "C0", "within_item": "C1", "global": "C2", "within_system": "C3"}
    for name in names:
        g, c = split_measure(str(name))
        ax.plot(curve["position"].values, curve.sel(measure=name).values,
                styles.get(c, "-"), color=colors.get(g, None), lw=1.3, label=str(name))
    ax.set_xlabel("metric pairs (sorted by p-value)")
    ax.set_ylabel("p-value")
    ax.set_title(result.title, fontsize=10)
    ax.legend(fontsize=7, ncol=2)
    ax.figure.tight_layout()
    return ax


def plot_rank_distribution(result: Any, ax: Any = None, measure: str = "global_pearson"
                           ) -> Any:
    """Posterior rank distribution of each metric under one measure, from a
    :class:`~bayesmeta.correlation.comparison.MetricComparisonResult`: a metric x rank
    heatmap of probabilities (rank 1 = best), metrics ordered by expected rank. Returns the
    Axes."""
    prob = result.extra["rank_probability"].sel(measure=measure)
    ranks = prob["rank"].values
    order = np.argsort((prob.values * ranks).sum(1))
    mat = prob.values[order]
    labels = [str(m) for m in prob["metric"].values[order]]
    ax = _axes(ax, height=max(3.0, 0.2 * len(labels) + 1))
    im = ax.imshow(mat, aspect="auto", cmap="Blues", vmin=0, vmax=1)
    ax.set_yticks(np.arange(len(labels)))
    ax.set_yticklabels(labels, fontsize=7)
    ax.set_xticks(np.arange(len(ranks)))
    ax.set_xticklabels([str(r) for r in ranks], fontsize=6)
    ax.set_xlabel("rank (1 = highest)")
    ax.set_title(f"Posterior rank distribution: {measure}", fontsize=10)
    ax.figure.colorbar(im, ax=ax, label="probability")
    ax.figure.tight_layout()
    return ax


def plot_beats_heatmap(result: Any, ax: Any = None, measure: str = "global_pearson") -> Any:
    """Heatmap of P(row metric beats column metric) under one measure, from a
    :class:`~bayesmeta.correlation.comparison.MetricComparisonResult`; metrics ordered by
    their mean probability of beating the others. Returns the Axes."""
    beats = result.extra["p_beats"].sel(measure=measure)
    mat = beats.values.copy()
    np.fill_diagonal(mat, np.nan)
    order = np.argsort(-np.nanmean(mat, 1))
    mat = mat[np.ix_(order, order)]
    labels = [str(m) for m in beats["metric"].values[order]]
    ax = _axes(ax, height=max(3.5, 0.2 * len(labels) + 1.5))
    im = ax.imshow(mat, cmap="RdBu_r", vmin=0, vmax=1)
    ax.set_xticks(np.arange(len(labels)))
    ax.set_xticklabels(labels, rotation=90, fontsize=6)
    ax.set_yticks(np.arange(len(labels)))
    ax.set_yticklabels(labels, fontsize=6)
    ax.set_title(f"P(row beats column): {measure}", fontsize=10)
    ax.figure.colorbar(im, ax=ax, label="posterior probability")
    ax.figure.tight_layout()
    return ax
