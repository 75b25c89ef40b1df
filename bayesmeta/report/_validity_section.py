"""The report section "Metric validity: claimed trait, other traits, error" (issue 22, item 4).

What share of each metric's variance is the trait it claims to measure, the other traits,
and its own error (``1 - R^2``), from :func:`bayesmeta.metric_variance` on the report's
factor model of the ratings (the WLSMV CFA of the CFA section, fitted once per report:
:func:`bayesmeta.report._panel_sections.wlsmv_cfa`). The metrics are the data's (the
report's metric selection: ``--metrics`` when reading a file).

* ``bayes="off"`` (and ``"fast"``): the classical two-stage route, each metric regressed on
  the CFA's EBM factor scores (regression calibration), with its percentile bootstrap over
  systems and items.
* ``bayes="full"``: also the two Bayesian routes on the CFA section's Bayesian ordinal CFA.
  The **joint** route (``estimator="joint"``: ratings and metric scores as indicators of
  the same traits in one PyMC model; where the metrics outnumber the rating columns their
  errors are correlated, so the metrics cannot redefine the traits) leads when its chains
  meet the targets and its traits keep the ratings' factor correlations; else the
  **modular** route (``estimator="modular"``: each metric's coefficients and error
  variance given the CFA's traits, the scores' posterior uncertainty propagated) leads,
  and the page says why. The other route's estimates follow in one table, and the
  classical route's after them. Every table says which route its columns come from.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayesmeta.report._blocks import _n, block, extremes, forest
from bayesmeta.report._core import ESS_MIN, RHAT_MAX, Context, Section, SectionOutput, Skipped
from bayesmeta.report._panel_sections import bayes_cfa, cfa_panel, wlsmv_cfa

__all__ = ["SHARES", "VALIDITY_SECTION", "Route", "bayes_routes", "combined",
           "joint_fit", "posterior_convergence", "validity_section", "validity_warm"]

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
JOINT_ROUTE = ("Joint Bayesian route: ratings (ordinal CFA) and standardized metric scores "
               "are indicators of the same traits in one PyMC model, so every metric's "
               "coefficients and error variance are estimated with the traits and their "
               "uncertainty; where the metrics outnumber the rating columns the metrics' "
               "errors are correlated (an unrestricted error covariance), so what the "
               "metrics share cannot redefine the traits (models/metric_validity.md).")
MODULAR_WARNING = ("WARNING: the modular route's draws (the Bayesian CFA's chains) did not "
                   "meet the convergence targets; do not report its numbers before refitting "
                   "the CFA with more draws (bm.cfa(model, data, estimator='bayes', "
                   "sampling={'draws': ...}), then bm.metric_variance(data, fit, "
                   "estimator='modular')).")
JOINT_WARNING = ("WARNING: the joint route's chains did not meet the convergence targets; do "
                 "not report its numbers before refitting with more draws "
                 "(bm.metric_variance(data, fit, estimator='joint', sampling={'draws': "
                 "...})).")
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


@dataclass
class Route:
    """One Bayesian metric-validity route of the section: its result, what it is (one
    sentence), its convergence line and whether it met the targets, and the warning the
    page shows when it did not."""

    name: str
    sentence: str
    result: Any
    line: str
    ok: bool
    warning: str
    caveat: str = ""

    def beside(self, classical: Any) -> str:
        """The table title's description of its columns."""
        return (f"classical two-stage beside the {self.name} Bayesian route"
                if classical is not None else f"{self.name} Bayesian route")

    def shown(self, classical: Any) -> Any:
        """The result its tables show: beside the classical route's columns, when there
        are any (:func:`combined`)."""
        return combined(classical, self.result) if classical is not None else self.result

    def table_notes(self) -> list[str]:
        """The notes that open this route's tables."""
        return [self.sentence.replace("route:", "route (mean, sd and HDI columns):"),
                self.line] + ([self.caveat] if self.caveat else []) + (
                    [] if self.ok else [self.warning])


def joint_fit(ds: xr.Dataset, fit: Any, ctx: Context) -> Any:
    """The joint route: ``bm.metric_variance(ds, fit, estimator="joint")`` on the report's
    Bayesian CFA (or its syntax) with the report's seed, sampler setting and interval."""
    from bayesmeta.validity import metric_variance

    return metric_variance(ds, fit, estimator="joint", ci_prob=ctx.ci_prob,
                           sampling=ctx.sampling, random_seed=ctx.random_seed,
                           progress=ctx.progress)


def bayes_routes(ds: xr.Dataset, ctx: Context, syntax: str) -> tuple[list[Route], list[str]]:
    """The modular and joint routes on the report's Bayesian CFA, the leading one first,
    and why the joint route does not lead where it does not: it could not be computed
    (then it is left out), its traits moved away from the ratings' own (a
    ``TraitDriftWarning``), or its chains missed the targets where the modular route's
    met them."""
    from bayesmeta.validity import metric_variance
    from bayesmeta.validity._joint_checks import TraitDriftWarning

    fit = bayes_cfa(ds, ctx, syntax)
    modular = metric_variance(ds, fit, estimator="modular", ci_prob=ctx.ci_prob,
                              random_seed=ctx.random_seed)
    line, ok = posterior_convergence(modular, fit)
    mod = Route("modular", MODULAR_ROUTE, modular, line, ok, MODULAR_WARNING)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            joint = joint_fit(ds, fit, ctx)
    except ValueError as err:
        return [mod], [f"The joint route cannot be computed on this data: {err}"]
    drift = [str(w.message) for w in caught if issubclass(w.category, TraitDriftWarning)]
    for w in caught:
        if not issubclass(w.category, TraitDriftWarning):
            warnings.warn(w.message, w.category, stacklevel=2)
    line, ok = posterior_convergence(joint)
    jr = Route("joint", JOINT_ROUTE, joint, line, ok, JOINT_WARNING,
               caveat=f"Its traits are not the ratings' own: {drift[0]}" if drift else "")
    if drift:
        return [mod, jr], ["The modular route leads: in the joint model the metrics moved "
                           "the traits away from the ratings' own factor correlations "
                           "(the joint table's note says which)."]
    if not ok and mod.ok:
        return [mod, jr], ["The modular route leads: the joint route's chains did not meet "
                           "the convergence targets."]
    return [jr, mod], []


def validity_warm(ds: xr.Dataset, ctx: Context) -> None:
    """The section's compile-cache warm-up (``Section.warm``; :mod:`bayesmeta.report._warm`):
    the joint route's call on the CFA section's model. The modular route samples nothing,
    and the Bayesian CFA is the CFA section's."""
    if ctx.bayes != "full" or "score" not in ds or _n(ds, "metric") < 1:
        return
    panel = cfa_panel(ds, ctx)
    if not isinstance(panel, Skipped):
        ds, _, syntax = panel
        joint_fit(ds, syntax, ctx)  # the joint model depends on the CFA's syntax only


def validity_section(ds: xr.Dataset, ctx: Context) -> SectionOutput | Skipped:
    """Per metric: the claimed trait's share, the other traits' share and the error share
    ``1 - R^2`` (:func:`bayesmeta.metric_variance` on the report's WLSMV CFA), and with
    ``bayes="full"`` the joint and modular Bayesian routes beside it
    (:func:`bayes_routes`)."""
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
        routes, why_lead = bayes_routes(ds, ctx, syntax)
        lead = routes[0]
        results += [r.result for r in routes]
        shown, column = lead.shown(classical), "mean"
        frame = shown.summary()
        shares = np.isin(frame.index.get_level_values(0), SHARES)
        post_tables = [block(shown, ctx, f"{TITLE}: {lead.beside(classical)}, shares per "
                             f"metric", rows=shares if shares.any() else None),
                       block(shown, ctx, f"{TITLE}: {lead.beside(classical)}, every "
                             f"estimate")]
        for other in routes[1:]:
            post_tables.append(block(other.shown(classical), ctx, f"{TITLE}: "
                                     f"{other.beside(classical)}, every estimate"))
        for t, route in zip(post_tables, [lead, *routes], strict=True):
            t.notes[:0] = ([CLASSICAL_ROUTE.replace("route:", "route (classical columns):")]
                           if classical is not None else []) + route.table_notes()
        # a Bayesian route leads where it can be read; else the classical route does
        trusted = classical is None or lead.ok
        tables = post_tables + tables if trusted else tables + post_tables
        for route in routes:
            notes += [route.sentence, route.line]
        notes += why_lead
        notes[:0] = [] if lead.ok else [lead.warning]
        if not trusted:
            read, read_column = classical, "classical"
            notes.append(f"The reading and the first tables come from the classical route: "
                         f"the {lead.name} route's draws did not converge (warning above).")
        title = "Error share 1 - R^2 per metric: " + (
            f"classical (cross) and {lead.name} posterior (dot, HDI)" if classical is not None
            else f"{lead.name} posterior (dot, HDI)")
    else:
        notes.append("The Bayesian routes (the joint model of ratings and metrics, and the "
                     "modular route on the Bayesian CFA's traits) run with --bayes full "
                     "only" + (": they need the full Bayesian CFA, whose preview is too rough "
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
                           options=("ci_prob", "resampling", "random_seed", "bayes"),
                           warm=validity_warm)
