"""Plots of the paper 002 analyses (Fig. 2-5 with intervals). They never compute statistics:
each takes results and returns the Axes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from bayesmeta.plots import _axes


def _short(name: str, width: int = 38) -> str:
    return name if len(name) <= width else name[: width - 3] + "..."


def plot_ks_heatmap(results: Any, ax: Any = None, *, group: str = "low",
                    group2: str = "high", column: str = "classical") -> Any:
    """KS scores as a metric x dataset heatmap (paper 002, Fig. 2).

    Parameters
    ----------
    results : Result or dict of Result
        :func:`bayesmeta.ks_score` results, keyed by dataset (or one result).
    group, group2 : str
        The quality groups compared (default low vs high).
    column : str
        Summary column shown (``"classical"``, ``"mean"``, ...).
    """
    res = results if isinstance(results, Mapping) else {"": results}
    cols, values = list(res), {}
    for name, r in res.items():
        tab = r.summary().xs(("ks", group, group2), level=("estimand", "group", "group2"))
        for (metric, _), v in tab[column].items():
            values[(metric, name)] = v
    metrics = list(dict.fromkeys(m for m, _ in values))
    mat = np.array([[values.get((m, c), np.nan) for c in cols] for m in metrics])
    ax = _axes(ax, height=max(3.0, 0.3 * len(metrics) + 1))
    im = ax.imshow(mat, vmin=0, vmax=1, cmap="viridis", aspect="auto")
    for i in range(mat.shape[0]):
        for j in range(mat.shape[1]):
            if np.isfinite(mat[i, j]):
                ax.text(j, i, f"{mat[i, j]:.2f}", ha="center", va="center", fontsize=7,
                        color="w" if mat[i, j] < 0.5 else "k")
    ax.set_yticks(range(len(metrics)))
    ax.set_yticklabels([_short(m) for m in metrics], fontsize=7)
    ax.set_xticks(range(len(cols)))
    ax.set_xticklabels(cols, fontsize=8, rotation=30)
    ax.set_title(f"KS score, {group} vs {group2} ({column})", fontsize=9)
    ax.figure.colorbar(im, ax=ax, fraction=0.04)
    ax.figure.tight_layout()
    return ax


def plot_detection(result: Any, ax: Any = None, *, perturbation: str | None = None) -> Any:
    """Detection rates with their HDIs and the tie rates (paper 002, Fig. 3): one bar per
    metric (classical share), the Beta posterior's HDI as an error bar, ties hatched on top
    of the bar."""
    tab = result.summary()
    rate = tab.xs("detection_rate", level="estimand")
    perts = list(dict.fromkeys(rate.index.get_level_values("perturbation")))
    pick = perturbation if perturbation is not None else perts[0]
    if pick not in perts:
        raise ValueError(f"perturbation {pick!r} is not in the result (has {perts}).")
    rate = rate.xs(pick, level="perturbation")
    ties = tab.xs("tie_rate", level="estimand").xs(pick, level="perturbation")
    metrics = list(rate.index.get_level_values("metric"))
    x = np.arange(len(metrics))
    ax = _axes(ax, height=3.5)
    ax.bar(x, rate["classical"], color="C0", label="s > s_hat")
    ax.bar(x, ties["classical"], bottom=rate["classical"], color="none", edgecolor="0.4",
           hatch="///", label="ties")
    ax.errorbar(x, rate["mean"], yerr=[rate["mean"] - rate["hdi_low"],
                                       rate["hdi_high"] - rate["mean"]],
                fmt="o", color="k", ms=3, label=f"{result.ci_prob:.0%} HDI")
    ax.axhline(0.5, color="0.6", lw=0.8, ls="--")
    ax.set_xticks(x)
    ax.set_xticklabels([_short(m, 24) for m in metrics], rotation=60, ha="right", fontsize=7)
    ax.set_ylim(0, 1.02)
    ax.set_ylabel("share of pairs")
    ax.set_title(f"Perturbation detection: {pick}", fontsize=9)
    ax.legend(fontsize=7)
    ax.figure.tight_layout()
    return ax


def plot_meta_correlation(result: Any, ax: Any = None) -> Any:
    """Meta-correlation per metric (paper 002, Fig. 4): classical value (cross) with its
    bootstrap interval, Bayesian-bootstrap mean (dot) with its HDI."""
    tab = result.summary().xs("meta_correlation", level="estimand")
    metrics = list(tab.index.get_level_values("metric"))
    y = np.arange(len(metrics))[::-1]
    ax = _axes(ax, height=max(3.0, 0.25 * len(metrics) + 1))
    if "hdi_low" in tab:
        ax.hlines(y, tab["hdi_low"], tab["hdi_high"], color="C0", lw=2)
        ax.plot(tab["mean"], y, "o", color="C0", ms=4, label="Bayesian bootstrap")
    if "classical_low" in tab:
        ax.hlines(y - 0.25, tab["classical_low"], tab["classical_high"], color="C1", lw=1)
    ax.plot(tab["classical"], y - (0.25 if "classical_low" in tab else 0), "x", color="C1",
            label="classical")
    ax.axvline(0, color="0.6", lw=0.8)
    ax.set_yticks(y)
    ax.set_yticklabels([_short(m) for m in metrics], fontsize=7)
    ax.set_xlim(-1.05, 1.05)
    ax.set_xlabel("rho(system quality, within-system correlation)")
    ax.set_title(result.title, fontsize=8)
    ax.legend(fontsize=7)
    ax.figure.tight_layout()
    return ax


def plot_reference_choice(result: Any, ax: Any = None, *, metrics: Any = None) -> Any:
    """Distribution of the correlation over random reference draws (paper 002, Fig. 5): one
    violin per metric, the first-reference value as a cross."""
    draws = result.extra["draws"]
    labels = [str(m) for m in draws["metric"].values]
    chosen = labels if metrics is None else [str(m) for m in metrics]
    unknown = [m for m in chosen if m not in labels]
    if unknown:
        raise ValueError(f"metric(s) {unknown} are not in the result.")
    first = result.summary().xs(("correlation", "first", ""),
                                level=("estimand", "reference", "set"))
    ax = _axes(ax, height=max(3.0, 0.3 * len(chosen) + 1))
    data = [draws.sel(metric=m).values for m in chosen]
    y = np.arange(len(chosen))[::-1] + 1
    try:  # matplotlib >= 3.10
        ax.violinplot(data, positions=y, orientation="horizontal", showextrema=True)
    except TypeError:  # pragma: no cover - older matplotlib
        ax.violinplot(data, positions=y, vert=False, showextrema=True)
    ax.plot([first.loc[m, "classical"] for m in chosen], y, "x", color="C3",
            label="first reference")
    ax.set_yticks(y)
    ax.set_yticklabels([_short(m) for m in chosen], fontsize=7)
    ax.set_xlabel("correlation with the human score")
    ax.set_title(f"Random reference per output ({draws.sizes['resample']} draws)",
                 fontsize=9)
    ax.legend(fontsize=7)
    ax.figure.tight_layout()
    return ax


__all__ = ["plot_detection", "plot_ks_heatmap", "plot_meta_correlation",
           "plot_reference_choice"]
