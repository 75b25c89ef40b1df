"""The report section "Metric validity: claimed trait, other traits, error" (issue 22, item 4).

What share of each metric's variance is the trait it claims to measure, the other traits,
and its own error (``1 - R^2``), from :func:`bayesmeta.metric_variance` on the report's
factor model of the ratings (the WLSMV CFA of the CFA section, fitted once per report:
:func:`bayesmeta.report._panel_sections.wlsmv_cfa`). The metrics are the data's (the
report's metric selection: ``--metrics`` when reading a file).

* ``bayes="off"`` (and ``"fast"``): the classical two-stage route, each metric regressed on
  the CFA's EBM factor scores (regression calibration), with its percentile bootstrap over
  systems and items.
* ``bayes="full"``: also the modular Bayesian route (``estimator="modular"`` on the CFA
  section's Bayesian ordinal CFA: the experts' traits, each metric's coefficients and error
  variance given them, with the scores' posterior uncertainty and the CFA's posterior of
  the factor correlations propagated), its posterior means and HDIs
  beside the classical columns, and its convergence line. The joint model is not run: where
  metrics outnumber raters it redefines the traits (``models/metric_validity.md``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayesmeta.report._blocks import _n, block, extremes, forest
from bayesmeta.report._core import ESS_MIN, RHAT_MAX, Context, Section, SectionOutput, Skipped
from bayesmeta.report._panel_sections import bayes_cfa, cfa_panel, wlsmv_cfa

__all__ = ["SHARES", "VALIDITY_SECTION", "combined", "posterior_convergence",
           "validity_section"]

#: The estimands of the section's first table (per metric).
SHARES = ("trait_share", "other_traits_share", "error_share")
#: Where each table comes from, said on the page (one sentence each).
CLASSICAL_ROUTE = ("Classical two-stage route: the WLSMV CFA of the ratings gives EBM factor "
                   "scores, and each metric is regressed on them (regression calibration: "
                   "standardized with the CFA's factor correlations); the interval is a "
                   "percentile bootstrap over systems and items with the factor scores held "
                   "fixed.")
MODULAR_ROUTE = ("Modular Bayesian route: the Bayesian ordinal CFA of the ratings (the CFA "
                 "section's fit) gives the traits; every metric is regressed on their "
                 "posterior means, with the scores' posterior uncertainty in the residual "
                 "(so its error variance is estimated) and the CFA's posterior of the factor "
                 "correlations in the standardization (models/metric_validity.md); the "
                 "metrics do not redefine the traits.")
JOINT_OFFER = ("The joint model (ratings and metrics as indicators of the same traits in one "
               "PyMC model) is not run here: where metrics outnumber raters it lets the "
               "metrics redefine the traits, moving the factor correlations away from the "
               "ratings' own, and its chains may not converge (models/metric_validity.md); "
               "fit it with bm.metric_variance(data, fit, estimator='joint').")
TITLE = "Metric validity: claimed trait, other traits, error"


def posterior_convergence(post: Any, sampled: Any = None) -> tuple[str, bool]:
    """The Bayesian route's convergence line (worst R-hat and bulk ESS over the table's
    rows of ``post`` and, for the modular route, its check of the factor-score draws;
    divergent transitions of the MCMC run ``sampled``, default ``post`` itself) and whether
    it meets the targets (R-hat <= 1.01, bulk ESS >= 400, no divergences)."""
    tab = post.summary()
    r_hat = float(np.nanmax(tab["r_hat"].to_numpy(dtype=float)))
    ess = float(np.nanmin(tab["ess_bulk"].to_numpy(dtype=float)))
    attrs = post.idata.posterior.attrs  # the modular route's check of the score draws
    r_hat = max(r_hat, float(attrs.get("score_check_r_hat", r_hat)))
    ess = min(ess, float(attrs.get("score_check_ess_bulk", ess)))
    stats = getattr((post if sampled is None else sampled).idata, "sample_stats", None)
    n_div = int(np.asarray(stats["diverging"]).sum()) if stats is not None and \
        "diverging" in stats else 0
    ok = r_hat <= RHAT_MAX and ess >= ESS_MIN and n_div == 0
    line = (f"Convergence: max R-hat {r_hat:.3f}, min bulk ESS {ess:.0f}, "
            f"{n_div} divergent transition(s) (targets: R-hat <= {RHAT_MAX}, bulk ESS >= "
            f"{ESS_MIN}, none divergent).")
    return line, ok


def combined(classical: Any, bayes: Any) -> Any:
    """One table, the Bayesian route's rows: the classical route's estimate and interval
    beside the posterior (``error_variance`` has no classical value)."""
    from bayesmeta.results import Result

    post = bayes.summary()
    cl = classical.summary()
    table = pd.concat([cl[["classical", "classical_low", "classical_high"]].reindex(post.index),
                       post], axis=1)
    return Result(table, title=f"{TITLE}: classical two-stage beside the Bayesian route",
                  ci_prob=bayes.ci_prob,
                  classical_ci_kind=cl.attrs.get("classical_ci_kind", ""),
                  posterior=bayes.posterior_kind,
                  random_seed=bayes.provenance.get("random_seed"),
                  data_hash=bayes.provenance.get("data_hash", ""),
                  notes=[*classical.notes, *bayes.notes])


def _reading(frame: pd.DataFrame, column: str) -> str:
    """Which metrics carry most error, and which are specific to their claimed trait."""
    lines = [extremes(frame, "error_share", what="Error share 1 - R^2 (the part no trait "
                      "explains)", higher="most error", lower="least error", column=column)]
    est = frame.index.get_level_values(0)
    spec = frame[est == "specificity"]
    if len(spec) and spec[column].notna().any():
        n_spec = int((spec[column].astype(float) > 0.5).sum())
        line = extremes(frame, "specificity", what="Specificity (the claimed trait's part of "
                        "the explained variance)", higher="most specific",
                        lower="least specific", column=column)
        lines.append(f"{line[:-1]}; {n_spec} of {len(spec)} metric(s) owe more than half "
                     f"their explained variance to the trait they claim.")
    else:
        lines.append("No metric names a trait of the factor model (a metric_trait coord or "
                     "a name ending in the trait, e.g. 'G-EVAL-4.COH'), so the claimed-trait "
                     "shares and specificity are not computed.")
    return "\n".join(ln for ln in lines if ln)


def validity_section(ds: xr.Dataset, ctx: Context) -> SectionOutput | Skipped:
    """Per metric: the claimed trait's share, the other traits' share and the error share
    ``1 - R^2`` (:func:`bayesmeta.metric_variance` on the report's WLSMV CFA), and with
    ``bayes="full"`` the modular Bayesian route beside it."""
    from bayesmeta.validity import cfa, metric_variance

    if "score" not in ds or _n(ds, "metric") < 1:
        return Skipped("the data has no metric scores (variable 'score')")
    panel = cfa_panel(ds, ctx)
    if isinstance(panel, Skipped):
        return panel
    ds, _, syntax = panel
    fit = classical = None
    why = ""
    try:
        fit = wlsmv_cfa(ds, ctx, syntax)
        classical = metric_variance(ds, fit, ci_prob=ctx.ci_prob, resampling=ctx.resampling,
                                    random_seed=ctx.random_seed)
    except ValueError as err:  # e.g. a Heywood case: the CFA has no EBM factor scores
        why = f"the classical route cannot be computed: {err}"
        if ctx.bayes != "full":
            return Skipped(why + " (--bayes full adds the modular Bayesian route, which "
                                 "needs no WLSMV factor scores)")
    results: list[Any] = []
    tables: list[Any] = []
    notes = [CLASSICAL_ROUTE if classical is not None else f"{why[0].upper()}{why[1:]}."]
    if classical is not None:
        results.append(classical)
        frame = classical.summary()
        shares = np.isin(frame.index.get_level_values(0), SHARES)
        tables += [block(classical, ctx, f"{TITLE} (classical two-stage route): shares per "
                         f"metric", rows=shares if shares.any() else None),
                   block(classical, ctx, f"{TITLE} (classical two-stage route): every "
                         f"estimate")]
        for t in tables:
            t.notes.insert(0, CLASSICAL_ROUTE)
        shown, column = classical, "classical"
    read, read_column = None, ""
    if ctx.bayes == "full":
        post = metric_variance(ds, bayes_cfa(ds, ctx, syntax), estimator="modular",
                               ci_prob=ctx.ci_prob, random_seed=ctx.random_seed)
        results.append(post)
        line, ok = posterior_convergence(post, bayes_cfa(ds, ctx, syntax))
        warning = ("WARNING: the modular route's draws (the Bayesian CFA's chains) did not "
                   "meet the convergence targets; do not report its numbers before refitting "
                   "the CFA with more draws (bm.cfa(model, data, estimator='bayes', "
                   "sampling={'draws': ...}), then bm.metric_variance(data, fit, "
                   "estimator='modular')).")
        shown, column = (combined(classical, post) if classical is not None else post), "mean"
        frame = shown.summary()
        shares = np.isin(frame.index.get_level_values(0), SHARES)
        both = "classical two-stage beside the modular Bayesian route" \
            if classical is not None else "modular Bayesian route"
        post_tables = [block(shown, ctx, f"{TITLE}: {both}, shares per metric",
                             rows=shares if shares.any() else None),
                       block(shown, ctx, f"{TITLE}: {both}, every estimate")]
        for t in post_tables:
            t.notes[:0] = ([CLASSICAL_ROUTE.replace("route:", "route (classical columns):")]
                           if classical is not None else []) + [
                MODULAR_ROUTE.replace("route:", "route (mean, sd and HDI columns):"),
                line] + ([] if ok else [warning])
        # the posterior leads where it can be read; else the classical route does
        trusted = classical is None or ok
        tables = post_tables + tables if trusted else tables + post_tables
        notes += [MODULAR_ROUTE, line, JOINT_OFFER]
        notes[:0] = [] if ok else [warning]
        if not trusted:
            read, read_column = classical, "classical"
            notes.append("The reading and the first tables come from the classical route: "
                         "the modular route's draws did not converge (warning above).")
        title = "Error share 1 - R^2 per metric: " + (
            "classical (cross) and modular posterior (dot, HDI)" if classical is not None
            else "modular posterior (dot, HDI)")
    else:
        notes.append("The Bayesian route (the Bayesian CFA's traits, each metric's "
                     "coefficients and error variance given them) runs with --bayes full "
                     "only" + (": it needs the full Bayesian CFA, whose preview is too rough "
                               "to set beside the classical route." if ctx.bayes == "fast"
                               else "."))
        title = "Error share 1 - R^2 per metric (classical two-stage route)"
    notes.append(f"Factor model (lavaan syntax, the CFA section's fit): {syntax}")
    return SectionOutput(TITLE, tables, [forest(shown, "error_share", title=title)],
                         _reading((shown if read is None else read).summary(),
                                  column if read is None else read_column),
                         [metric_variance, cfa, "models/metric_validity.md"], results, notes,
                         partial=[] if classical is not None else [why])


#: The section's registration (listed in :data:`bayesmeta.report.sections.SECTIONS`).
VALIDITY_SECTION = Section("metric_validity", TITLE, validity_section,
                           options=("ci_prob", "resampling", "random_seed", "bayes"))
