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


def plot_decision_curve(table: Any, ax: Any = None, *, variables: Any = None,
                        n_runs: Any = None, target: float | None = None,
                        title: str | None = None) -> Any:
    """Decision-study curves from the summary of a
    :class:`~bayesmeta.reliability.decision_study.DecisionStudyResult` (index ``(estimand,
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
    """The MTMM table of ``bm.factor_mtmm`` as a matrix of variables (method: trait),
    each cell coloured by its kind (convergent, heterotrait-monomethod,
    heterotrait-heteromethod) and annotated with the estimate. Returns the Axes."""
    from matplotlib.colors import ListedColormap

    table = result.summary()
    kinds = result.details()["cell"]
    point, _, _ = _point_and_interval(table)
    variables: list[tuple[str, str]] = []
    for _, t, m, t2, m2 in table.index:
        for v in ((m, t), (m2, t2)):
            if v not in variables:
                variables.append(v)
    n = len(variables)
    code = {"convergent": 0, "heterotrait-monomethod": 1, "heterotrait-heteromethod": 2}
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
