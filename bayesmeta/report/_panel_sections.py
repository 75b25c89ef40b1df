"""The report's sections on the human panel's measurement model: the Bayesian many-facet
rater diagnosis (``bm.rater_bias``) and the ordinal confirmatory factor analysis of the
ratings (``bm.cfa``, WLSMV, and its Bayesian twin with ``--bayes``). Listed in
:data:`bayesmeta.report.sections.SECTIONS`."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayesmeta.report._blocks import (
    _estimands,
    _has_ratings,
    _label,
    _n,
    _no_ratings_reason,
    _rating_traits,
    block,
    extremes,
    forest,
    plain,
)
from bayesmeta.report._core import Context, Finding, SectionOutput, Skipped, TableBlock

__all__ = ["cfa_bayes", "cfa_panel", "cfa_section", "cfa_warm", "rater_section",
           "wlsmv_cfa"]


def rater_section(ds: xr.Dataset, ctx: Context) -> SectionOutput | Skipped:
    """The Bayesian many-facet rater model: severity and thresholds by rater."""
    from bayesmeta.raters import rater_bias
    from bayesmeta.raters.plots import plot_rater_thresholds

    if not _has_ratings(ds):
        return Skipped(_no_ratings_reason(ds))
    if _n(ds, "rater") < 2:
        return Skipped(f"rater diagnosis compares raters: it needs at least 2; the data has "
                       f"{_n(ds, 'rater')}")
    if ctx.bayes == "off":
        return Skipped("rater diagnosis is Bayesian (rater_bias); run with --bayes fast "
                       "(preview) or --bayes full")
    res = rater_bias(ds, traits=_rating_traits(ds, ctx) or None, ci_prob=ctx.ci_prob,
                     sampling=ctx.sampling, random_seed=ctx.random_seed, progress=ctx.progress)
    frame = res.summary()
    ests = _estimands(res)
    key = "severity" if "severity" in ests else ests[0]
    rows = frame.index.get_level_values(0) == key
    figures = [forest(res, key)]
    if "threshold" in ests:
        figures.append(plot_rater_thresholds(res).figure)
    reading = extremes(frame, key, what=f"Rater {key}", higher="highest", lower="lowest")
    reading += ("\nA rater whose interval excludes the panel's typical value is harsher or "
                "more lenient than the others; thresholds show where.")
    findings = [_deviating(frame[rows], key)]
    return SectionOutput("Rater diagnosis", [block(res, ctx, f"{res.title}: {key}", rows=rows),
                                             block(res, ctx, f"{res.title}: all estimates")],
                         figures, reading, [rater_bias, "models/rater.md"], [res],
                         findings=[f for f in findings if f is not None])


def _deviating(frame: pd.DataFrame, key: str) -> Finding | None:
    """Raters whose posterior interval of ``key`` excludes the panel's median (a rater
    harsher or more lenient than the others)."""
    if not {"mean", "hdi_low", "hdi_high"} <= set(frame.columns) or frame.empty:
        return None
    typical = float(frame["mean"].median())
    out = frame[(frame["hdi_low"] > typical) | (frame["hdi_high"] < typical)]
    if out.empty:
        return Finding("raters", f"No rater's {key} interval excludes the panel's median "
                                 f"({typical:.2f}): no rater is shown to deviate.")
    return Finding("raters", f"Raters whose {key} differs from the panel's median "
                             f"({typical:.2f}): " + "; ".join(
                                 f"{_label(i)} {r['mean']:.2f} [{r['hdi_low']:.2f}, "
                                 f"{r['hdi_high']:.2f}]" for i, r in out.iterrows()) + ".")


def _cfa_syntax(ds: xr.Dataset, traits: list[str]) -> str:
    from bayesmeta.data.select import rating_label

    lines = []
    used: set[str] = set()
    for k, t in enumerate(traits):
        name = re.sub(r"\W", "_", str(t)).strip("_").lower() or f"f{k}"
        if not name[0].isalpha():
            name = f"f_{name}"
        while name in used:
            name += "_"
        used.add(name)
        indicators = [rating_label(r, t) for r in ds["rater"].values]
        lines.append(f"{name} =~ " + " + ".join(indicators))
    return "\n".join(lines)


def cfa_panel(ds: xr.Dataset, ctx: Context) -> tuple[xr.Dataset, list[str], str] | Skipped:
    """The report's factor model of the ratings: the human panel's data (LLM judges, which
    have their own section, left out), its rated traits and the lavaan syntax (one factor
    per trait, each rater's ratings as indicators); or why it cannot be fitted."""
    if not _has_ratings(ds):
        return Skipped(_no_ratings_reason(ds))
    traits = _rating_traits(ds, ctx)
    if "is_judge" in ds.coords and bool(ds["is_judge"].any()):
        from bayesmeta.data.annotations import humans_and_judges

        ds = ds.sel(rater=humans_and_judges(ds)[0])
    if _n(ds, "rater") < 2 or not traits:
        return Skipped("a factor model of ratings needs at least 2 raters per trait")
    if len(traits) == 1 and _n(ds, "rater") < 3:
        return Skipped("one trait with 2 raters leaves a one-factor model unidentified; "
                       "it needs 3 raters or a second trait")
    return ds, traits, _cfa_syntax(ds, traits)


def wlsmv_cfa(ds: xr.Dataset, ctx: Context, syntax: str) -> Any:
    """The WLSMV CFA ``bm.cfa(syntax, ds)`` of this report: fitted once and kept in
    :attr:`Context.fits` (keyed by the syntax, the data's hash and the interval
    probability), so the CFA section and the metric-validity section share one fit."""
    from bayesmeta.results import data_hash
    from bayesmeta.validity import cfa

    key = f"cfa|wlsmv|{syntax}|{data_hash(ds)}|{ctx.ci_prob!r}"
    if key not in ctx.fits:
        ctx.fits[key] = cfa(syntax, ds, ci_prob=ctx.ci_prob, random_seed=ctx.random_seed)
    return ctx.fits[key]


def bayes_cfa(ds: xr.Dataset, ctx: Context, syntax: str) -> Any:
    """The Bayesian ordinal CFA ``bm.cfa(syntax, ds, estimator="bayes")`` of this report:
    fitted once and kept in :attr:`Context.fits` (as :func:`wlsmv_cfa`), so the CFA section
    and the metric-validity section's modular route share one MCMC fit."""
    from bayesmeta.results import data_hash
    from bayesmeta.validity import cfa

    key = f"cfa|bayes|{syntax}|{data_hash(ds)}|{ctx.ci_prob!r}|{ctx.random_seed!r}"
    if key not in ctx.fits:
        ctx.fits[key] = cfa(syntax, ds, estimator="bayes", ci_prob=ctx.ci_prob,
                            sampling=ctx.sampling, random_seed=ctx.random_seed,
                            progress=ctx.progress)
    return ctx.fits[key]


def cfa_bayes(ds: xr.Dataset, ctx: Context, syntax: str, traits: list[str]
              ) -> tuple[list[TableBlock], list[Any], str]:
    """The Bayesian ordinal CFA of the trait model and, with two or more traits and
    ``ctx.loo``, its LOO comparison with one general factor (``compare``): tables, results,
    a reading line."""
    from bayesmeta.compare import compare
    from bayesmeta.data.select import rating_label
    from bayesmeta.validity import cfa

    fit = bayes_cfa(ds, ctx, syntax)
    tables = [block(fit, ctx, f"{fit.title} (Bayesian ordinal CFA)")]
    results: list[Any] = [fit]
    if len(traits) < 2:
        return tables, results, ""
    if not ctx.loo:
        return tables, results, ""
    one = "general =~ " + " + ".join(rating_label(r, t) for t in traits
                                     for r in ds["rater"].values)
    fit1 = cfa(one, ds, estimator="bayes", ci_prob=ctx.ci_prob, sampling=ctx.sampling,
               random_seed=ctx.random_seed, progress=ctx.progress)
    results.append(fit1)
    comparison = compare({f"{len(traits)} trait factors": fit, "one general factor": fit1},
                         ci_prob=ctx.ci_prob)
    results.append(comparison)
    tables.append(block(comparison, ctx, "LOO comparison of factor structures"))
    det = comparison.details()
    line = ""
    if {"rank", "elpd_diff", "dse"} <= set(det.columns):
        best = det["rank"].astype(float).idxmin()
        other = det.drop(index=best)
        if len(other):
            d, se = float(other["elpd_diff"].iloc[0]), float(other["dse"].iloc[0])
            line = (f"LOO prefers '{best}' by {d:.1f} elpd (se {se:.1f}); a difference is "
                    f"worth reporting when it is several times its se.")
    return tables, results, line


def cfa_warm(ds: xr.Dataset, ctx: Context) -> None:
    """The section's compile-cache warm-up (``Section.warm``; :mod:`bayesmeta.report._warm`):
    its Bayesian ordinal CFA, with ``bayes="full"`` only (the WLSMV fit is not needed)."""
    if ctx.bayes != "full":
        return
    panel = cfa_panel(ds, ctx)
    if not isinstance(panel, Skipped):
        bayes_cfa(panel[0], ctx, panel[2])


def cfa_section(ds: xr.Dataset, ctx: Context) -> SectionOutput | Skipped:
    """Ordinal CFA: one factor per trait, each rater's ratings as indicators (WLSMV; with
    ``bayes="full"`` also the Bayesian ordinal CFA and its LOO comparison with one general
    factor)."""
    from bayesmeta.compare import compare
    from bayesmeta.validity import cfa

    panel = cfa_panel(ds, ctx)
    if isinstance(panel, Skipped):
        return panel
    ds, traits, syntax = panel
    fit = wlsmv_cfa(ds, ctx, syntax)
    results = [fit]
    frame = fit.summary()
    est = frame.index.get_level_values(0)
    keep = np.isin(est, ["loading", "factor_correlation"])
    tables = [block(fit, ctx, f"{fit.title}: loadings and factor correlations",
                    rows=keep if keep.any() else None)]
    fm = getattr(fit, "fit_measures", None)
    reading_fit = ""
    if callable(fm):
        measures = fm()
        show = [k for k in ("chisq.scaled", "df", "pvalue.scaled", "cfi.scaled", "tli.scaled",
                            "rmsea.scaled", "srmr") if k in measures.index] or list(
            measures.index[:10])
        tables.append(plain(measures[show].to_frame("value"), "Fit indices (lavaan names)"))
        if "cfi.scaled" in measures.index and "rmsea.scaled" in measures.index:
            reading_fit = (f"Fit: CFI {measures['cfi.scaled']:.3f}, RMSEA "
                           f"{measures['rmsea.scaled']:.3f} (good fit: CFI >= 0.95, RMSEA "
                           f"<= 0.06).")
    figures = [forest(fit, "loading" if "loading" in set(est) else None)]
    methods: list[Any] = [cfa]
    notes = [f"Model (lavaan syntax): {syntax}"]
    if ctx.bayes == "full":
        b_tables, b_results, b_line = cfa_bayes(ds, ctx, syntax, traits)
        tables += b_tables
        results += b_results
        methods += [compare, "models/ordinal_cfa.md"]
        reading_fit = b_line or reading_fit
        if not ctx.loo and len(traits) >= 2:
            notes.append("The LOO comparison with one general factor (a second Bayesian "
                         "CFA, as long as the first) runs on request: report(..., "
                         "loo=True), bayesmeta report --loo.")
    elif ctx.bayes == "fast":
        notes.append("The Bayesian ordinal CFA runs with --bayes full only (its preview is "
                     "too rough to compare with WLSMV).")
    reading = extremes(frame, "loading" if "loading" in set(est) else None,
                       what="Standardized loadings", higher="highest", lower="lowest")
    reading += "\n" + (reading_fit or "A loading near 1 means the rater measures the trait "
                       "the other raters measure.")
    return SectionOutput("Ordinal confirmatory factor analysis", tables, figures, reading,
                         methods, results, notes)
