"""The report section "LLM judges against the human panel" (issue 23, item 7).

Shown when the data has LLM judges: raters with the boolean coordinate ``is_judge``, either
annotations (``label`` on ``(item, rater)``, from :func:`bayesmeta.read_annotations` or
:func:`bayesmeta.from_annotations`) or ratings with judges added beside the humans
(:func:`bayesmeta.add_judges`). Each judge goes through the alternative annotator test
(:func:`bayesmeta.alt_test`): winning rate, pass flag, advantage probability rho with its
interval; with ``bayes`` other than ``"off"`` the Bayesian alt-test beside it
(P(winning rate >= 0.5), and P(rho_A > rho_B) for the best two judges).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayesmeta.report._core import (
    Context,
    Finding,
    Section,
    SectionOutput,
    Skipped,
    TableBlock,
)

__all__ = ["EPSILON", "JUDGES_SECTION", "judge_annotations", "judges_section"]

#: The cost-benefit margin of the alt-test: the paper's value for expert annotators
#: (Calderon, Reichart & Dror 2025: 0.2 experts, 0.15 skilled, 0.1 crowd-workers). The
#: report has no option for it; the page says which value it used.
EPSILON = 0.2
#: Separator of the instance ids built from ratings (``<item>__<system>__<trait>``, the
#: alt-test authors' SummEval layout); the output ``<item>__<system>`` is the resampling unit.
ID_SPLIT = "__"


def _judges(ds: xr.Dataset) -> tuple[list[str], list[str]]:
    raters = [str(r) for r in ds["rater"].values]
    flags = np.asarray(ds["is_judge"].values, dtype=bool)
    return ([r for r, j in zip(raters, flags, strict=True) if j],
            [r for r, j in zip(raters, flags, strict=True) if not j])


def judge_annotations(ds: xr.Dataset, traits: list[str]) -> xr.Dataset:
    """Ratings on ``(system, item, rater, trait)`` with an ``is_judge`` coordinate as an
    annotations Dataset: one instance ``<item>__<system>__<trait>`` per output and trait
    (of ``traits``), the ratings as numeric labels, raters and ``is_judge`` unchanged.
    Missing ratings stay missing."""
    rating = ds["rating"].sel(trait=list(traits)).transpose("item", "system", "trait", "rater")
    ids = [f"{i}{ID_SPLIT}{s}{ID_SPLIT}{t}" for i in rating["item"].values
           for s in rating["system"].values for t in rating["trait"].values]
    values = rating.values.reshape(len(ids), rating.sizes["rater"]).astype(float)
    label = xr.DataArray(values, dims=("item", "rater"),
                         coords={"item": np.array(ids, dtype=object),
                                 "rater": rating["rater"].values})
    out = xr.Dataset({"label": label})
    out = out.assign_coords(is_judge=("rater", np.asarray(ds["is_judge"].values, dtype=bool)))
    out.attrs["schema"] = "annotations"
    return out


def _inputs(ds: xr.Dataset, ctx: Context) -> tuple[xr.Dataset, str, str | None, str] | Skipped:
    """The annotations the alt-test reads, its scoring and grouping, and what they are."""
    if "is_judge" not in ds.coords or "rater" not in ds.dims:
        return Skipped("the data has no LLM judges (raters with the coordinate is_judge: "
                       "read them with bm.read_annotations or bm.from_annotations, or add "
                       "them to ratings with bm.add_judges)")
    judges, humans = _judges(ds)
    if not judges:
        return Skipped("the data has no LLM judges (no rater has is_judge set)")
    if len(humans) < 2:
        return Skipped(f"the alt-test leaves one human out and compares with the others: it "
                       f"needs at least 2 human raters; the data has {len(humans)}")
    if "label" in ds:
        scoring = "accuracy" if ds["label"].attrs.get("categories") is not None \
            else "neg_rmse"
        return ds, scoring, None, "the annotations (instances as given)"
    if "rating" in ds and {"system", "item", "trait"} <= set(ds["rating"].dims):
        from bayesmeta.data.select import human_traits

        kinds = human_traits(ds)
        traits = [t for t in ctx.traits if kinds.get(t) == "rating"] or [
            str(t) for t in ds["trait"].values]
        what = (f"the ratings of every output and trait ({', '.join(traits)}) as instances "
                f"<item>__<system>__<trait>, outputs as resampling units")
        return judge_annotations(ds, traits), "neg_rmse", ID_SPLIT, what
    return Skipped("the data has judges but neither annotations (variable 'label') nor "
                   "ratings on (system, item, rater, trait) (variable 'rating')")


def _table(result: Any, caption: str) -> TableBlock:
    """A result's summary as a table block (the alt-test draws are exact, never a preview)."""
    frame = result.summary()
    return TableBlock(caption, frame, signature=result.signature(), total_rows=len(frame))


def _verdicts(classical: Any, bayes: Any | None) -> pd.DataFrame:
    """One row per judge: the classical verdict and, when given, the Bayesian one."""
    tab, det = classical.summary(), classical.details()
    rows = []
    for judge in tab.xs("winning_rate", level="estimand").index.get_level_values(0):
        key_w, key_r = ("winning_rate", judge, ""), ("advantage_probability", judge, "")
        r = tab.loc[key_r]
        row: dict[str, Any] = {
            "judge": str(judge), "winning_rate": float(tab.loc[key_w, "classical"]),
            "passes": bool(det.loc[key_w, "passes"]), "rho": float(r["classical"]),
            "rho_low": float(r.get("classical_low", np.nan)),
            "rho_high": float(r.get("classical_high", np.nan))}
        if bayes is not None:
            bt, bd = bayes.summary(), bayes.details()
            b = bt.loc[key_r]
            row.update(prob_pass=float(bd.loc[key_w, "prob_pass"]),
                       winning_rate_bayes=float(bd.loc[key_w, "winning_rate_bayes"]),
                       passes_bayes=bool(bd.loc[key_w, "passes_bayes"]),
                       rho_mean=float(b["mean"]), rho_hdi_low=float(b["hdi_low"]),
                       rho_hdi_high=float(b["hdi_high"]))
        rows.append(row)
    return pd.DataFrame(rows).set_index("judge")


def _best_two(verdicts: pd.DataFrame, bayes: Any) -> tuple[str, str, float] | None:
    """The two judges with the highest rho and P(rho_first > rho_second)."""
    if len(verdicts) < 2:
        return None
    col = "rho_mean" if "rho_mean" in verdicts else "rho"
    a, b = [str(x) for x in verdicts[col].sort_values(ascending=False, kind="mergesort")
            .index[:2]]
    det = bayes.details()
    if ("advantage_difference", a, b) in det.index:
        return a, b, float(det.loc[("advantage_difference", a, b), "prob_greater"])
    if ("advantage_difference", b, a) in det.index:
        return a, b, 1.0 - float(det.loc[("advantage_difference", b, a), "prob_greater"])
    return None


def judges_section(ds: xr.Dataset, ctx: Context) -> SectionOutput | Skipped:
    """The alt-test of every judge against the human panel, classical and (with ``bayes``
    other than off) Bayesian, with epsilon = :data:`EPSILON`."""
    from bayesmeta.judges import alt_test

    got = _inputs(ds, ctx)
    if isinstance(got, Skipped):
        return got
    data, scoring, group, what = got
    opts = {"epsilon": EPSILON, "scoring": scoring, "group": group, "ci_prob": ctx.ci_prob,
            "resampling": ctx.resampling, "random_seed": ctx.random_seed}
    notes = [f"epsilon = {EPSILON:g}: the paper's margin for expert annotators (Calderon, "
             f"Reichart & Dror 2025; 0.15 for skilled annotators, 0.1 for crowd-workers); "
             f"call bm.alt_test(..., epsilon=) for another. Scoring: {scoring}; instances: "
             f"{what}."]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = alt_test(data, **opts)
        bayes = alt_test(data, estimator="bayes", **opts) if ctx.bayes != "off" else None
    notes += sorted({str(w.message) for w in caught})
    verdicts = _verdicts(res, bayes)
    tables = [TableBlock(f"Each judge's verdict (alt-test, epsilon = {EPSILON:g})", verdicts,
                         notes=notes),
              _table(res, f"{res.title} (classical; posterior: Bayesian bootstrap)")]
    results = [res]
    if bayes is not None:
        tables.append(_table(bayes, f"{bayes.title} (Bayesian alt-test)"))
        results.append(bayes)
    passing = [j for j, p in verdicts["passes"].items() if p]
    top = verdicts["rho"].idxmax()
    line1 = (f"{len(passing)} of {len(verdicts)} judge(s) pass the alt-test at epsilon "
             f"{EPSILON:g} (winning rate >= 0.5)" + (f": {', '.join(passing)}" if passing
                                                      else "") +
             f"; the highest advantage probability is {top}'s, rho = "
             f"{verdicts.loc[top, 'rho']:.2f} [{verdicts.loc[top, 'rho_low']:.2f}, "
             f"{verdicts.loc[top, 'rho_high']:.2f}] (classical estimate).")
    if bayes is not None:
        best = _best_two(verdicts, bayes)
        line2 = ("Bayesian: P(winning rate >= 0.5) " + ", ".join(
            f"{j} {p:.2f}" for j, p in verdicts["prob_pass"].items()) + ".")
        if best is not None:
            line2 += f" P(rho of {best[0]} > rho of {best[1]}) = {best[2]:.2f}."
    else:
        line2 = ("A judge that passes can replace a human annotator of this panel; rho is "
                 "the share of instances where it is at least as good as one (--bayes fast "
                 "or full adds the Bayesian alt-test).")
    verdict = "; ".join(
        f"{j} {'passes' if r['passes'] else 'fails'} (winning rate {r['winning_rate']:.2f}, "
        f"rho {r['rho']:.2f}" + (f", P(pass) {r['prob_pass']:.2f}" if "prob_pass" in r
                                 else "") + ")" for j, r in verdicts.iterrows())
    findings = [Finding("raters", f"LLM judges against the human panel (alt-test, epsilon "
                                  f"{EPSILON:g}): {verdict}.")]
    return SectionOutput("LLM judges against the human panel", tables, [],
                         f"{line1}\n{line2}", [alt_test], results, findings=findings)


#: The section's registration (listed in :data:`bayesmeta.report.sections.SECTIONS`).
JUDGES_SECTION = Section("judges", "LLM judges against the human panel", judges_section,
                         options=("ci_prob", "resampling", "random_seed", "bayes"))
