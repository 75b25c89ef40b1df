"""The report section "Metric validity: claimed trait, other traits, error" (issue 22, item 4).

What share of each metric's variance is the trait it claims to measure, the other traits,
and its own error (``1 - R^2``), from :func:`bayesmeta.metric_variance` on the report's
factor model of the ratings (the WLSMV CFA of the CFA section, fitted once per report:
:func:`bayesmeta.report._panel_sections.wlsmv_cfa`). The metrics are the data's (the
report's metric selection: ``--metrics`` when reading a file).

* ``bayes="off"`` (and ``"fast"``): the classical two-stage route, each metric regressed on
  the CFA's EBM factor scores (regression calibration), with its percentile bootstrap over
  systems and items.
* ``bayes="full"``: also the joint Bayesian model (``estimator="joint"``: ratings and metric
  scores as indicators of the same traits in one PyMC model), its posterior means and HDIs
  beside the classical columns, and its convergence line.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayesmeta.report._blocks import _n, block, extremes, forest
from bayesmeta.report._core import ESS_MIN, RHAT_MAX, Context, Section, SectionOutput, Skipped
from bayesmeta.report._panel_sections import cfa_panel, wlsmv_cfa

__all__ = ["SHARES", "VALIDITY_SECTION", "combined", "joint_convergence", "validity_section"]

#: The estimands of the section's first table (per metric).
SHARES = ("trait_share", "other_traits_share", "error_share")
#: Where each table comes from, said on the page (one sentence each).
CLASSICAL_ROUTE = ("Classical two-stage route: the WLSMV CFA of the ratings gives EBM factor "
                   "scores, and each metric is regressed on them (regression calibration: "
                   "standardized with the CFA's factor correlations); the interval is a "
                   "percentile bootstrap over systems and items with the factor scores held "
                   "fixed.")
JOINT_ROUTE = ("Joint Bayesian model: the ratings (ordinal CFA) and the standardized metric "
               "scores are indicators of the same traits in one PyMC model "
               "(models/metric_validity.md), so the traits' uncertainty enters every "
               "posterior mean and HDI.")
TITLE = "Metric validity: claimed trait, other traits, error"


def joint_convergence(joint: Any) -> tuple[str, bool]:
    """The joint fit's convergence line (worst R-hat and bulk ESS over the table's rows,
    divergent transitions) and whether it meets the targets (R-hat <= 1.01, bulk ESS >=
    400, no divergences)."""
    tab = joint.summary()
    r_hat = float(np.nanmax(tab["r_hat"].to_numpy(dtype=float)))
    ess = float(np.nanmin(tab["ess_bulk"].to_numpy(dtype=float)))
    stats = getattr(joint.idata, "sample_stats", None)
    n_div = int(np.asarray(stats["diverging"]).sum()) if stats is not None and \
        "diverging" in stats else 0
    ok = r_hat <= RHAT_MAX and ess >= ESS_MIN and n_div == 0
    line = (f"Joint model convergence: max R-hat {r_hat:.3f}, min bulk ESS {ess:.0f}, "
            f"{n_div} divergent transition(s) (targets: R-hat <= {RHAT_MAX}, bulk ESS >= "
            f"{ESS_MIN}, none divergent).")
    return line, ok


def combined(classical: Any, joint: Any) -> Any:
    """One table, the joint model's rows: the classical route's estimate and interval beside
    the joint posterior (``error_variance`` has no classical value)."""
    from bayesmeta.results import Result

    post = joint.summary()
    cl = classical.summary()
    table = pd.concat([cl[["classical", "classical_low", "classical_high"]].reindex(post.index),
                       post], axis=1)
    return Result(table, title=f"{TITLE}: classical two-stage beside the joint Bayesian model",
                  ci_prob=joint.ci_prob,
                  classical_ci_kind=cl.attrs.get("classical_ci_kind", ""),
                  posterior="MCMC posterior (joint model)",
                  random_seed=joint.provenance.get("random_seed"),
                  data_hash=joint.provenance.get("data_hash", ""),
                  notes=[*classical.notes, *joint.notes])


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
    ``bayes="full"`` the joint Bayesian model beside it."""
    from bayesmeta.validity import cfa, metric_variance
    from bayesmeta.validity._joint_checks import DRIFT_PREFIX

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
            return Skipped(why + " (--bayes full runs the joint model, which needs no "
                                 "factor scores)")
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
        joint = metric_variance(ds, fit if fit is not None else syntax, estimator="joint",
                                ci_prob=ctx.ci_prob, sampling=ctx.sampling,
                                random_seed=ctx.random_seed, progress=ctx.progress)
        results.append(joint)
        line, ok = joint_convergence(joint)
        warning = ("WARNING: the joint model did not meet its convergence targets; do not "
                   "report its numbers before refitting with more draws "
                   "(bm.metric_variance(data, fit, estimator='joint', sampling={'draws': "
                   "...})).")
        shown, column = (combined(classical, joint) if classical is not None else joint), "mean"
        frame = shown.summary()
        shares = np.isin(frame.index.get_level_values(0), SHARES)
        both = "classical two-stage beside the joint Bayesian model" \
            if classical is not None else "joint Bayesian model"
        joint_tables = [block(shown, ctx, f"{TITLE}: {both}, shares per metric",
                              rows=shares if shares.any() else None),
                        block(shown, ctx, f"{TITLE}: {both}, every estimate")]
        drift = [f"WARNING: {n[0].upper()}{n[1:]}" for n in joint.notes
                 if n.startswith(DRIFT_PREFIX)]  # the metrics bend the traits
        for t in joint_tables:
            t.notes[:0] = ([CLASSICAL_ROUTE.replace("route:", "route (classical columns):")]
                           if classical is not None else []) + [
                JOINT_ROUTE.replace("model:", "model (mean, sd and HDI columns):"), line] + (
                [] if ok else [warning]) + drift
        # the joint model leads where it can be read; else the classical route does
        trusted = classical is None or (ok and not drift)
        tables = joint_tables + tables if trusted else tables + joint_tables
        notes += [JOINT_ROUTE, line]
        notes[:0] = ([] if ok else [warning]) + drift
        if not trusted:
            read, read_column = classical, "classical"
            why_not = [w for w, bad in (("did not converge", not ok),
                                        ("bends the traits", bool(drift))) if bad]
            notes.append("The reading and the first tables come from the classical route: "
                         f"the joint model {' and '.join(why_not)} (warning above).")
        title = "Error share 1 - R^2 per metric: " + (
            "classical (cross) and joint posterior (dot, HDI)" if classical is not None
            else "joint posterior (dot, HDI)")
    else:
        notes.append("The joint Bayesian model (ratings and metrics in one PyMC model) runs "
                     "with --bayes full only" + (": an MCMC fit over every output's traits, "
                                                 "whose preview is too rough to set beside "
                                                 "the classical route."
                                                 if ctx.bayes == "fast" else "."))
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
