"""The report's sections. Each is ``section(data, context) -> SectionOutput | Skipped``.

A section calls bayesmeta's public analyses, puts their summaries (the one table shape:
classical and Bayesian side by side) in tables, draws its plots with each package's
``plots`` module, and writes a two-line reading in plain language. A section returns
:class:`Skipped` with the reason when the data lacks its inputs (no ordinal ratings, one
system, ...). New analyses plug in by adding a :class:`~bayesmeta.report.Section` to
:data:`SECTIONS` (or passing ``sections=`` to :func:`bayesmeta.report`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayesmeta.plots import estimate_column, plot_table_heatmap
from bayesmeta.report._agreement_section import AGREEMENT_SECTION
from bayesmeta.report._answer import best_metrics
from bayesmeta.report._blocks import (
    _has_ratings,
    _n,
    _no_ratings_reason,
    block,
    extremes,
    forest,
    plain,
)
from bayesmeta.report._core import (
    Context,
    Finding,
    Section,
    SectionOutput,
    Skipped,
    TableBlock,
    steps,
)
from bayesmeta.report._judges_section import JUDGES_SECTION
from bayesmeta.report._panel_sections import (  # noqa: F401 (tests import _cfa_syntax here)
    _cfa_syntax,
    cfa_bayes,
    cfa_section,
    cfa_warm,
    rater_section,
)
from bayesmeta.report._validity_section import VALIDITY_SECTION
from bayesmeta.report._wmt_section import WMT_SECTION
from bayesmeta.validity.plots import plot_mtmm_matrix

__all__ = ["SECTIONS", "default_sections"]

#: Metrics of the P(beats) heatmap (the best by expected rank; the full matrix is a table).
HEATMAP_METRICS = 30


# ----------------------------------------------------------------------------- helpers
# ----------------------------------------------------------------------------- sections
def data_section(ds: xr.Dataset, ctx: Context) -> SectionOutput:
    """Sizes, human scores and their kind, metrics, missing counts, what the reader left
    out."""
    import matplotlib.pyplot as plt

    from bayesmeta.data import missing_report, read_report
    from bayesmeta.data.select import human_score, human_traits

    sizes = pd.DataFrame({"size": {str(k): int(v) for k, v in ds.sizes.items()
                                   if k in ("system", "item", "rater", "trait", "metric", "run",
                                            "reference")}})
    sizes.index.name = "dim"
    kinds = human_traits(ds)
    human = pd.DataFrame({"kind": {t: ("ordinal ratings (mean over raters)" if k == "rating"
                                       else "continuous judgment") for t, k in kinds.items()}})
    human.index.name = "trait"
    tables = [plain(sizes, "Sizes"), plain(human, "Human scores")]
    per_system = {}
    for var in ("rating", "judgment", "score"):
        if var in ds:
            other = [d for d in ds[var].dims if d not in ("system", "item")]
            seen = ds[var].notnull().any(other) if other else ds[var].notnull()
            per_system[f"items with {var}s"] = seen.sum("item").to_series().astype(int)
    if per_system:
        systems = pd.DataFrame(per_system)
        systems.index = systems.index.astype(str)
        systems.index.name = "system"
        tables.append(plain(systems, "Systems"))
    miss = missing_report(ds)
    n_missing = int(miss["missing"].sum()) if len(miss) else 0
    n_total = int(miss["total"].sum()) if len(miss) else 0
    shown = miss[miss["missing"] > 0].set_index(["variable", "label"])
    if len(shown):
        tables.append(plain(shown, "Missing values (variables with any)"))
    notes = []
    rr = read_report(ds)
    left = rr[rr["role"] == "left out"] if len(rr) else rr
    # issue 21: every read decision on the page, not only on stderr
    notes += [f"Reader: {n}." for n in rr.attrs.get("notes", [])]
    if len(rr):
        tables.append(plain(rr.set_index("column"), "How the reader read each column "
                                                    "(role and why)"))
    if len(left):
        tables.append(plain(left.set_index("column"), "Columns the reader left out, and why"))
    elif len(rr):
        notes.append("The reader used every column of the file.")
    else:
        notes.append("The data did not come from a file (no reader log).")
    quality = None
    if "score" in ds:
        from bayesmeta.data.quality import data_quality

        try:
            quality = data_quality(ds, traits=[t for t in ctx.traits if t in kinds] or None)
        except ValueError as err:
            notes.append(f"Data quality: the check could not run ({err}).")
        if isinstance(quality, pd.DataFrame) and len(quality):
            tables.append(plain(quality.set_index(["metric", "finding"])[["reason"]],
                                "Data-quality findings per metric (bayesmeta.data_quality)"))
            notes.append(f"Data quality: {len(quality)} finding(s) on "
                         f"{quality['metric'].nunique()} metric(s) (constant, tied, "
                         f"underflow/overflow, near-empty or suspicious direction); see the "
                         f"table before reading the metric rankings.")
    fig = None
    traits = [t for t in ctx.traits if t in kinds][:8]
    if traits:
        fig, ax = plt.subplots(figsize=(6.5, 2.8))
        values = []
        for t in traits:
            v = np.asarray(human_score(ds, t).values, dtype=float).ravel()
            values.append(v[np.isfinite(v)])
        ax.boxplot(values, vert=False, showmeans=True)
        ax.set_yticks(np.arange(1, len(traits) + 1))
        ax.set_yticklabels(traits, fontsize=8)
        ax.set_xlabel("human score per output")
        ax.set_title("Human scores by trait (triangle: mean)", fontsize=10)
        fig.tight_layout()
    frac = n_missing / n_total if n_total else 0.0
    reading = (f"{_n(ds, 'system')} systems x {_n(ds, 'item')} items; {len(kinds)} human "
               f"trait(s) ({', '.join(sorted(set(kinds.values()))) or 'none'}), "
               f"{_n(ds, 'metric')} metric(s), {_n(ds, 'run')} run(s).\n"
               f"{frac:.1%} of the human and metric values are missing; the reader left out "
               f"{len(left)} column(s)"
               + (f" and chose the {_n(ds, 'metric')} metric(s) by default"
                  if ds.attrs.get("metrics_chosen") == "default" else "")
               + (f"; {len(quality)} data-quality finding(s)"
                  if isinstance(quality, pd.DataFrame) and len(quality) else "") + ".")
    methods = [missing_report, read_report]
    findings = [Finding("quality", f"Reader: {n}.") for n in rr.attrs.get("notes", [])]
    if len(left):
        findings.append(Finding("quality", f"The reader left out {len(left)} column(s): "
                                + "; ".join(f"{c} ({w})" for c, w in zip(
                                    left["column"], left["detail"],
                                    strict=True)) + "."))
    if quality is not None:
        from bayesmeta.data.quality import data_quality

        methods.append(data_quality)
        findings += [Finding("quality", f"{m}: {f}: {r}.")
                     for m, f, r in zip(quality["metric"], quality["finding"],
                                        quality["reason"], strict=True)]
    return SectionOutput("Data and design", tables, [fig] if fig is not None else [], reading,
                         methods, notes=notes, findings=findings)


def reliability_section(ds: xr.Dataset, ctx: Context) -> SectionOutput | Skipped:
    """Consistency (internal consistency of system means over items), stability over runs,
    and under ``bayes`` the true-score model with its decision study."""
    from bayesmeta.reliability import consistency, decision_study, reliability, stability

    if _n(ds, "system") < 2:
        return Skipped(f"reliability of system means needs at least 2 systems; the data has "
                       f"{_n(ds, 'system')}")
    if "score" not in ds and not _has_ratings(ds):
        return Skipped("the data has no metric scores and no ordinal ratings")
    tables, figures, results, methods = [], [], [], [consistency]
    cons = consistency(ds, ci_prob=ctx.ci_prob, random_seed=ctx.random_seed)
    results.append(cons)
    tables.append(block(cons, ctx))
    figures.append(forest(cons))
    reading = [extremes(cons.summary(), what="Consistency (system means over items)",
                        higher="most consistent", lower="least consistent")]
    if "score" in ds and _n(ds, "run") >= 2:
        stab = stability(ds, ci_prob=ctx.ci_prob)
        results.append(stab)
        methods.append(stability)
        tables.append(block(stab, ctx))
        reading.append(extremes(stab.summary(), what="Stability over runs",
                                higher="most stable", lower="least stable"))
    else:
        reading.append("Stability over repeated runs is not computed: the metrics have one run.")
    notes = []
    if ctx.bayes != "off" and "score" in ds:
        rel = reliability(ds, ci_prob=ctx.ci_prob, sampling=ctx.sampling,
                          random_seed=ctx.random_seed, progress=ctx.progress)
        results.append(rel)
        methods += [reliability, "models/true_score.md"]
        frame = rel.summary()
        est = frame.index.get_level_values(0)
        key = np.isin(est, ["consistency", "stability", "sem"])
        tables.append(block(rel, ctx, f"{rel.title}: consistency, stability, SEM",
                            rows=key if key.any() and not key.all() else None))
        posterior = extremes(frame, "consistency" if "consistency" in set(est) else None,
                             what="Posterior consistency", higher="most consistent",
                             lower="least consistent")
        reading[0] = posterior or reading[0]  # two lines: the posterior says more
        try:
            dstudy = decision_study(rel)
        except Exception as err:  # the curve is optional; the posterior table stands
            notes.append(f"Decision study not drawn: {type(err).__name__}: {err}")
        else:
            from bayesmeta.reliability.plots import plot_decision_curve

            results.append(dstudy)
            shown = [str(m) for m in ds["metric"].values][:6]
            figures.append(plot_decision_curve(dstudy, variables=shown, n_runs=[1]).figure)
            notes.append(f"The decision-study curve shows the first {len(shown)} metrics with "
                         f"one run; bm.decision_study(fit).summary() has every variable.")
    elif ctx.bayes == "off":
        notes.append("The Bayesian true-score model (reliability: posterior consistency, "
                     "stability, decision-study curve) runs with --bayes fast or full.")
    return SectionOutput("Reliability", tables, figures,
                         "\n".join(r for r in reading if r), methods, results, notes)


def _split_label(label: str) -> tuple[str, str]:
    rater, _, trait = str(label).rpartition(".")
    return rater, trait


def mtmm_section(ds: xr.Dataset, ctx: Context) -> SectionOutput | Skipped:
    """Multitrait-multimethod matrix of the ratings (raters as methods)."""
    from bayesmeta.validity import mtmm

    if not _has_ratings(ds):
        return Skipped(_no_ratings_reason(ds))
    if _n(ds, "rater") < 2 or _n(ds, "trait") < 2:
        return Skipped("an MTMM matrix needs at least 2 raters (methods) and 2 traits")
    res = mtmm(ds, coefficient=ctx.coefficient, ci_prob=ctx.ci_prob)
    frame = res.summary()
    est = frame.index.get_level_values(0)
    lines = []
    corr = frame[est == "correlation"]
    col = estimate_column(corr)
    if col is not None and corr.index.nlevels >= 3:
        kinds = {"convergent (same trait, other rater)": [], "same rater, other trait": [],
                 "other rater, other trait": []}
        for idx, v in corr[col].items():
            (r1, t1), (r2, t2) = _split_label(idx[1]), _split_label(idx[2])
            key = ("convergent (same trait, other rater)" if t1 == t2 and r1 != r2 else
                   "same rater, other trait" if r1 == r2 else "other rater, other trait")
            kinds[key].append(float(v))
        parts = [f"{k} {np.nanmean(v):.2f}" for k, v in kinds.items() if v]
        lines.append(f"Mean {ctx.coefficient} correlation: " + "; ".join(parts) + ".")
    lines.append("Convergent validity holds when the same trait rated by different raters "
                 "correlates more than different traits rated by the same rater.")
    fig = plot_mtmm_matrix(frame, f"{res.title} ({ctx.coefficient}; diagonal: reliability)")
    return SectionOutput("Multitrait-multimethod (MTMM)", [block(res, ctx)],
                         [fig if fig is not None else forest(res)], "\n".join(lines),
                         [mtmm], [res])


def concurrent_validity_section(ds: xr.Dataset, ctx: Context) -> SectionOutput | Skipped:
    """Correlation of each metric with each human trait (system level when possible),
    with the correlation engine's bootstrap interval and Bayesian-bootstrap posterior."""
    from bayesmeta.correlation import correlations
    from bayesmeta.results import Result
    from bayesmeta.validity import concurrent_validity

    if "score" not in ds:
        return Skipped("the data has no metric scores (variable 'score')")
    if not ctx.traits:
        return Skipped("the data has no human scores (ratings or judgments)")
    level = "system" if _n(ds, "system") >= 3 else "global"
    res = concurrent_validity(ds, list(ctx.traits), coefficient=ctx.coefficient, level=level,
                              ci_prob=ctx.ci_prob)
    measure = f"{level}_{ctx.coefficient}"
    # issue 21, every interval: concurrent validity has no interval formula; the same
    # number is the correlation engine's classical estimate, whose bootstrap gives one
    boots = [correlations(ds, t, measures=measure, resampling=ctx.resampling,
                          ci_prob=ctx.ci_prob, random_seed=ctx.random_seed, progress=False)
             for t in steps(ctx, list(ctx.traits), "concurrent validity by trait")]
    table = pd.concat([b.summary() for b in boots])
    first = boots[0].summary().attrs
    with_iv = Result(table, title=f"Concurrent validity ({level} level, {ctx.coefficient}) "
                                  f"with intervals", ci_prob=ctx.ci_prob,
                     classical_ci_kind=first.get("classical_ci_kind", ""),
                     posterior="Bayesian bootstrap", random_seed=ctx.random_seed,
                     data_hash=boots[0].provenance.get("data_hash", ""),
                     notes=[n for b in boots for n in b.notes])
    classical = res.summary()["classical"].astype(float)
    same = classical.reindex(table.index).to_numpy(dtype=float)
    agree = np.allclose(same, table["classical"].to_numpy(dtype=float), atol=1e-10,
                        equal_nan=True)
    reading = extremes(table, what=f"Concurrent validity ({level} level, "
                       f"{ctx.coefficient})", higher="highest", lower="lowest",
                       column="classical")
    reading += ("\nA metric is valid for a trait when it orders the outputs as the humans do; "
                "wide intervals mean too few systems to tell metrics apart.")
    notes = [] if level == "system" else [
        f"{_n(ds, 'system')} system(s): correlations are over all outputs (level 'global'), "
        f"not system means."]
    notes.append("Intervals: the classical estimate is concurrent_validity's; its percentile "
                 "bootstrap interval and the Bayesian-bootstrap posterior come from "
                 "correlations(..., measures='" + measure + "'), the same estimator"
                 + (" (the two classical columns agree)." if agree else
                    "; WARNING: the two classical columns differ."))
    title = f"Concurrent validity ({level} level, {ctx.coefficient})"
    fig = plot_table_heatmap(table[["classical"]], "metric", "trait",
                             f"{title}: classical estimate")
    return SectionOutput("Concurrent validity", [block(with_iv, ctx)],
                         [fig if fig is not None else forest(with_iv, title=title)],
                         reading, [concurrent_validity, correlations], [res, *boots], notes)


def _measures(frame: pd.DataFrame) -> list[str]:
    """The correlation measures of a table: its ``measure`` level, or its estimands when
    they are measure names (``system_kendall``, ...)."""
    if "measure" in frame.index.names:
        return [str(m) for m in pd.unique(frame.index.get_level_values("measure"))]
    return [str(m) for m in pd.unique(frame.index.get_level_values(0))]


def _headline(names: list[str], ds: xr.Dataset, coefficient: str) -> str | None:
    prefs = ([f"system_{coefficient}"] if _n(ds, "system") >= 3 else []) + [
        f"global_{coefficient}"]
    return next((m for m in prefs if m in names), names[0] if names else None)


def _rows_of_measure(frame: pd.DataFrame, measure: str) -> Any:
    level = "measure" if "measure" in frame.index.names else frame.index.names[0]
    mask = frame.index.get_level_values(level).astype(str) == measure
    return mask if mask.any() else None


def correlation_section(ds: xr.Dataset, ctx: Context) -> SectionOutput | Skipped:
    """The correlation measures with Bayesian-bootstrap intervals and P(A beats B)."""
    from bayesmeta.correlation import compare_metrics, correlations
    from bayesmeta.correlation.plots import plot_rank_distribution

    if "score" not in ds:
        return Skipped("the data has no metric scores (variable 'score')")
    if not ctx.traits:
        return Skipped("the data has no human scores (ratings or judgments)")
    tables, figures, results, lines, findings = [], [], [], [], []
    for trait in steps(ctx, list(ctx.traits), "correlations by trait"):
        cor = correlations(ds, trait, measures=ctx.coefficient, resampling=ctx.resampling,
                           ci_prob=ctx.ci_prob, random_seed=ctx.random_seed, progress=False)
        results.append(cor)
        frame = cor.summary()
        measure = _headline(_measures(frame), ds, ctx.coefficient)
        rows = _rows_of_measure(frame, measure) if measure else None
        if rows is not None and not rows.all():
            tables.append(block(cor, ctx, f"{cor.title} [{trait}]: {measure}, best first",
                                rows=rows, rank=True))
        tables.append(block(cor, ctx, f"{cor.title} [{trait}]: every measure"))
        sub = frame if rows is None else frame[rows]
        lines.append(extremes(sub, str(sub.index.get_level_values(0)[0]),
                              what=f"{trait}, {measure}", higher="best", lower="worst",
                              column="classical"))
        rank_p = beats = None
        if _n(ds, "metric") >= 2 and measure is not None:
            cmp_ = compare_metrics(ds, trait, measures=measure,
                                   resampling=ctx.resampling.replace(n_permutations=0),
                                   ci_prob=ctx.ci_prob, random_seed=ctx.random_seed,
                                   progress=False)
            results.append(cmp_)
            extra = getattr(cmp_, "extra", {}) or {}
            if "p_beats" in extra:
                m = str(extra["p_beats"]["measure"].values[0])
                beats = cmp_.p_beats(m)
            if "rank_probability" in extra:
                m = str(extra["rank_probability"]["measure"].values[0])
                rank_p = cmp_.rank_probability(m)
            if beats is not None:
                figures.append(_beats_figure(cmp_, m, trait, rank_p))
                if len(beats) > HEATMAP_METRICS:
                    full = beats.copy()
                    full.index.name = "metric (row beats column)"
                    tables.append(TableBlock(f"P(row beats column), all {len(full)} metrics: "
                                             f"{m} [{trait}]", full, collapsed=True))
            if rank_p is not None:
                ax = plot_rank_distribution(cmp_, measure=m)
                ax.set_title(f"Posterior rank distribution: {m} [{trait}]", fontsize=10)
                figures.append(ax.figure)
        if measure is not None:
            findings.append(best_metrics(frame, measure, trait, rank_p, beats))
    reading = "\n".join(ln for ln in lines[:2] if ln)
    if len(lines) > 2:
        reading += f" (and {len(lines) - 2} more trait(s) in the tables)"
    notes = ["The heatmap reads: the probability, over Bayesian-bootstrap resamples of "
             "systems and items, that the row metric correlates more with the human score "
             "than the column metric; the rank plot gives each metric's posterior rank. "
             "Pairwise differences with intervals: compare_metrics(...).summary(). "
             "compare_metrics runs here without its permutation tests (n_permutations=0): "
             "their p-values are not on this page, and each pair would first build an "
             "outputs x outputs matrix; the permutation test of every pair is the "
             "discriminative-power section."]
    return SectionOutput("Correlation measures", tables, figures, reading,
                         [correlations, compare_metrics], results, notes, findings=findings)


def _beats_figure(cmp_: Any, measure: str, trait: str, rank_p: pd.DataFrame | None) -> Any:
    """The P(row beats column) heatmap of at most :data:`HEATMAP_METRICS` metrics (the best
    by expected rank), so its labels stay legible; the full matrix is a table beside it."""
    from types import SimpleNamespace

    from bayesmeta.correlation.plots import plot_beats_heatmap

    beats = cmp_.extra["p_beats"].sel(measure=[measure])
    labels = [str(v) for v in beats["metric"].values]
    shown = labels
    if len(labels) > HEATMAP_METRICS and rank_p is not None:
        expected = (rank_p.to_numpy(dtype=float) * np.arange(1, rank_p.shape[1] + 1)).sum(1)
        order = np.argsort(expected, kind="stable")[:HEATMAP_METRICS]
        shown = [str(rank_p.index[i]) for i in order]
        beats = beats.sel(metric=shown, metric2=shown)
    ax = plot_beats_heatmap(SimpleNamespace(extra={"p_beats": beats}), measure=measure)
    title = f"P(row beats column): {measure} [{trait}]"
    if len(shown) < len(labels):
        title += f"\nthe {len(shown)} best of {len(labels)} metrics by expected rank"
    ax.set_title(title, fontsize=10)
    return ax.figure


def metameasures_section(ds: xr.Dataset, ctx: Context) -> SectionOutput | Skipped:
    """Discriminative power (paper 001, permutation tests) and ranking consistency."""
    from bayesmeta.correlation import discriminative_power, ranking_consistency
    from bayesmeta.correlation.plots import plot_pvalue_curves

    if "score" not in ds or _n(ds, "metric") < 2:
        return Skipped("discriminative power compares metrics: it needs at least 2 metrics")
    if not ctx.traits:
        return Skipped("the data has no human scores (ratings or judgments)")
    if ctx.resampling.n_permutations < 1:
        return Skipped("discriminative power is a permutation test, and the time budget "
                       "left the permutation tests out (see the top of the page; "
                       "--budget 0 runs them)")
    trait = ctx.traits[0]
    tables, figures, results = [], [], []
    measures = ctx.dp_measures if isinstance(ctx.dp_measures, str) else list(ctx.dp_measures)
    dp = discriminative_power(ds, trait, measures=measures, resampling=ctx.resampling,
                              random_seed=ctx.random_seed, progress=ctx.progress)
    results.append(dp)
    tables.append(block(dp, ctx, f"{dp.title} [{trait}]"))
    if "curve" in (getattr(dp, "extra", {}) or {}):
        figures.append(plot_pvalue_curves(dp).figure)
    rc = ranking_consistency(ds, trait, resampling=ctx.resampling,
                             random_seed=ctx.random_seed)
    results.append(rc)
    tables.append(block(rc, ctx, f"{rc.title} [{trait}]"))
    lines = [extremes(dp.summary(), what=f"Discriminative power [{trait}], mean p-value",
                      higher="least discriminative", lower="most discriminative"),
             extremes(rc.summary(), what=f"Ranking consistency [{trait}]",
                      higher="most consistent", lower="least")]
    notes = [] if len(ctx.traits) == 1 else [
        f"Computed for the first trait ({trait}); pass traits=[...] (--trait) for others."]
    if measures != "all":
        notes.append("Discriminative power without the global (all-outputs) measures: the "
                     "time budget left them out (see the top of the page; --budget 0 runs "
                     "them).")
    return SectionOutput("Discriminative power and ranking consistency", tables, figures,
                         "\n".join(ln for ln in lines if ln),
                         [discriminative_power, ranking_consistency], results, notes)


def reference_free_section(ds: xr.Dataset, ctx: Context) -> SectionOutput | Skipped:
    """Reference-free vs reference-based metrics (paper 002): each metric's sample-level
    correlation with the human score, the best and mean of each kind, and P(the best
    reference-free metric beats the best reference-based one)."""
    from bayesmeta.reference_free import kind_comparison

    if "score" not in ds:
        return Skipped("the data has no metric scores (variable 'score')")
    if "reference_based" not in ds.coords:
        return Skipped("the metrics are not labelled reference-free or reference-based "
                       "(metric coordinate 'reference_based'; see metric_kinds)")
    kinds = set(np.asarray(ds["reference_based"].values, dtype=bool).tolist())
    if kinds != {True, False}:
        return Skipped("the comparison needs both reference-free and reference-based "
                       "metrics; the data has only one kind")
    if not ctx.traits:
        return Skipped("the data has no human scores (ratings or judgments)")
    tables, figures, results, lines = [], [], [], []
    for k, trait in enumerate(ctx.traits):
        res = kind_comparison(ds, trait, ci_prob=ctx.ci_prob, resampling=ctx.resampling,
                              random_seed=ctx.random_seed)
        results.append(res)
        frame = res.summary()
        est = frame.index.get_level_values(0)
        contrast = est != "correlation"
        tables.append(block(res, ctx, f"{res.title} [{trait}]: best and mean of each kind",
                            rows=contrast if contrast.any() and not contrast.all() else None))
        det = res.details()
        p_win = None
        if "p_free_wins" in det.columns:
            rows = det.index.get_level_values(0) == "best_free_minus_best_based"
            vals = det.loc[rows, "p_free_wins"].dropna()
            p_win = float(vals.iloc[0]) if len(vals) else None
        if p_win is not None and len(lines) < 2:
            lines.append(f"{trait}: P(best reference-free metric beats best reference-based) "
                         f"= {p_win:.2f}.")
        if k == 0 and "correlation" in set(est):
            figures.append(forest(res, "correlation",
                                  title=f"Sample-level correlation with {trait}"))
    if len(ctx.traits) > 2:
        lines[-1] += f" (and {len(ctx.traits) - 2} more trait(s) in the tables)"
    return SectionOutput("Reference-free vs reference-based metrics", tables, figures,
                         "\n".join(lines), [kind_comparison, "models/reference_free.md"],
                         results)




#: The report's sections, in order.
SECTIONS: list[Section] = [
    Section("data", "Data and design", data_section, options=()),
    Section("reliability", "Reliability", reliability_section,
            options=("ci_prob", "random_seed", "bayes")),
    AGREEMENT_SECTION,
    Section("mtmm", "Multitrait-multimethod (MTMM)", mtmm_section,
            options=("coefficient", "ci_prob")),
    Section("concurrent_validity", "Concurrent validity", concurrent_validity_section,
            options=("coefficient", "ci_prob", "resampling", "random_seed")),
    Section("correlations", "Correlation measures", correlation_section,
            options=("coefficient", "ci_prob", "resampling", "random_seed")),
    Section("metameasures", "Discriminative power and ranking consistency",
            metameasures_section, options=("resampling", "random_seed")),
    Section("reference_free", "Reference-free vs reference-based metrics",
            reference_free_section, options=("ci_prob", "resampling", "random_seed")),
    Section("rater", "Rater diagnosis", rater_section, bayesian=True,
            options=("ci_prob", "random_seed", "bayes"), warm=rater_section),
    JUDGES_SECTION,
    WMT_SECTION,
    Section("cfa", "Ordinal confirmatory factor analysis", cfa_section,
            options=("ci_prob", "random_seed", "bayes", "loo"), warm=cfa_warm),
    VALIDITY_SECTION,
]


def default_sections() -> list[Section]:
    """A copy of :data:`SECTIONS` (to add or drop sections without touching the default)."""
    return list(SECTIONS)
