"""Plots of metric unit tests (paper 004): pass rates and the effect of the number of
references. They never compute statistics: each takes a result and returns the Axes."""

from __future__ import annotations

from typing import Any

import numpy as np

from bayesmeta.plots import _axes


def plot_unit_tests(result: Any, ax: Any = None, n_refs: Any = None,
                    estimand: str = "pass_rate") -> Any:
    """Pass rates of a :class:`~bayesmeta.unit_tests.classical.UnitTestResult` by corruption
    and metric (paper 004, Tables 4-6): the posterior mean with its HDI (line) and the
    classical accuracy (cross) for one number of references (default: the first). Returns
    the Axes."""
    table = result.summary().xs(estimand, level="estimand")
    levels = list(dict.fromkeys(table.index.get_level_values("n_refs")))
    pick = str(n_refs) if n_refs is not None else levels[0]
    if pick not in levels:
        raise ValueError(f"n_refs {pick!r} is not in the result (has {levels}).")
    table = table[table.index.get_level_values("n_refs") == pick]
    corrs = list(dict.fromkeys(table.index.get_level_values("corruption")))
    mets = list(dict.fromkeys(table.index.get_level_values("metric")))
    ax = _axes(ax, height=max(3.0, 0.35 * len(corrs) * max(1, len(mets)) / 2 + 1))
    width = 0.8 / max(len(mets), 1)
    for k, met in enumerate(mets):
        sub = table[table.index.get_level_values("metric") == met]
        pos = {c: i for i, c in enumerate(corrs)}
        y = np.array([len(corrs) - 1 - pos[c] for c in sub.index.get_level_values("corruption")]
                     ) + 0.4 - width * (k + 0.5)
        color = f"C{k % 10}"
        if {"hdi_low", "hdi_high"} <= set(sub.columns):
            ax.hlines(y, sub["hdi_low"], sub["hdi_high"], color=color, lw=2)
            ax.plot(sub["mean"], y, "o", color=color, ms=4, label=met)
        if "classical" in sub.columns and sub["classical"].notna().any():
            ax.plot(sub["classical"], y, "x", color="0.2", ms=4)
    ax.set_yticks(np.arange(len(corrs))[::-1])
    ax.set_yticklabels(corrs, fontsize=8)
    ax.set_xlim(-0.02, 1.02)
    ax.set_xlabel("pass rate")
    ax.set_title(f"{estimand}, {pick} references (dots: posterior mean, lines: "
                 f"{result.ci_prob:.0%} HDI; x: classical)", fontsize=9)
    ax.legend(fontsize=7, loc="lower left")
    ax.figure.tight_layout()
    return ax


def plot_refs_effect(result: Any, corruption: str, ax: Any = None,
                     estimand: str = "pass_rate") -> Any:
    """Pass rate against the number of references for one corruption (paper 004, Fig.
    4-5): one line per metric (posterior mean), its HDI as a band, classical accuracy as
    crosses. Returns the Axes."""
    table = result.summary().xs(estimand, level="estimand")
    corrs = set(table.index.get_level_values("corruption"))
    if corruption not in corrs:
        raise ValueError(f"corruption {corruption!r} is not in the result (has "
                         f"{sorted(corrs)}).")
    table = table.xs(corruption, level="corruption")
    ax = _axes(ax, height=3.5)
    for k, met in enumerate(dict.fromkeys(table.index.get_level_values("metric"))):
        sub = table[table.index.get_level_values("metric") == met]
        labels = list(sub.index.get_level_values("n_refs"))
        x = np.asarray(labels, dtype=float)
        order = np.argsort(x)
        sub, x = sub.iloc[order], x[order]
        color = f"C{k % 10}"
        ax.fill_between(x, sub["hdi_low"], sub["hdi_high"], color=color, alpha=0.2, lw=0)
        ax.plot(x, sub["mean"], "-o", color=color, ms=3, label=met)
        if "classical" in sub.columns and sub["classical"].notna().any():
            ax.plot(x, sub["classical"], "x", color=color, ms=5)
    ax.set_xlabel("number of references")
    ax.set_ylabel("pass rate")
    ax.set_title(f"{corruption}: pass rate by number of references ({result.ci_prob:.0%} "
                 "HDI bands)", fontsize=9)
    ax.legend(fontsize=7)
    ax.figure.tight_layout()
    return ax
