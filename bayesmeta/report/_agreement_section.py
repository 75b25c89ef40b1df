"""The report section "Agreement between raters" (issue 24, item 4).

The coefficients shown are the ones a reader of the field expects for the data's level of
measurement (:func:`measurement_level`, :func:`level_coefficients`), computed by
:func:`bayesmeta.agreement_coefficients`; when the raters form two or more panels
(:func:`rater_panels`), their paired differences come from
:func:`bayesmeta.compare_agreement` with P(A > B).

How the data says what it is:

* **Level of measurement.** The attribute ``level_of_measurement`` (``"nominal"``,
  ``"ordinal"`` or ``"interval"``) of ``rating`` (or of an annotations ``label``) when
  given; otherwise text labels (annotations with ``label.attrs["categories"]``) are
  nominal, a two-point scale is nominal (with two categories every weighting gives the
  same coefficients), a bounded integer scale of 3 to :data:`MAX_ORDINAL_POINTS` points
  (``scale_min..scale_max`` of ``rating``; the observed range of numeric labels) is
  ordinal, and a longer scale (sliders, 0-100 direct assessment) is interval.
* **Panels.** A coordinate ``panel`` on the ``rater`` dim (one name per rater, e.g.
  ``ds.assign_coords(panel=("rater", ["expert", "expert", "crowd", "crowd"]))``); without
  it, the humans and the LLM judges (coordinate ``is_judge``) when each has at least two
  raters. The data layer has no round dim on ratings: rounds (before and after a guideline
  change) are compared as panels, each round's raters under their own labels with the
  round as their ``panel``; the outputs are the same, so the comparison is paired.

Annotations (``label`` on ``(item, rater)`` from :func:`bayesmeta.read_annotations`) are
read as ratings of one trait ``"label"`` by one system ``"all"`` (:func:`annotation_ratings`;
text categories coded ``0..K-1``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayesmeta.report._blocks import _interval, _label, _n, block, extremes, forest
from bayesmeta.report._core import (
    Context,
    Finding,
    Section,
    SectionOutput,
    Skipped,
    TableBlock,
)

__all__ = ["AGREEMENT_SECTION", "ALPHA_TENTATIVE", "LEVELS", "MAX_ORDINAL_POINTS",
           "agreement_section", "annotation_ratings", "level_coefficients",
           "measurement_level", "rater_panels"]

#: The levels of measurement the section tells apart.
LEVELS = ("nominal", "ordinal", "interval")
#: The attribute of ``rating`` (or ``label``) that declares the level.
LEVEL_ATTR = "level_of_measurement"
#: The coordinate on ``rater`` naming each rater's panel.
PANEL_COORD = "panel"
#: The most points of a scale read as ordinal (rating scales of 3 to 10 points; longer
#: scales, such as 0-100 direct assessment or sliders, are read as interval).
MAX_ORDINAL_POINTS = 10
#: Krippendorff's threshold below which conclusions from single raters are tentative.
ALPHA_TENTATIVE = 0.667
#: The ICC forms shown (two-way random effects, absolute agreement; see ICC_NOTE).
ICC_SHOWN = ("icc_twoway_agreement_single", "icc_twoway_agreement_average")
#: Trait and system of annotations read as ratings.
ANNOTATION_TRAIT, ANNOTATION_SYSTEM = "label", "all"

ICC_NOTE = (
    "ICC forms: icc_twoway_agreement_single is ICC(A,1) in McGraw & Wong's notation, "
    "ICC(2,1) in Shrout & Fleiss' (psych::ICC 'ICC2'); icc_twoway_agreement_average is "
    "ICC(A,k) = ICC(2,k) ('ICC2k'). Two-way random effects because every output is rated by "
    "the same raters, a sample of those who could have rated; absolute agreement (not "
    "consistency) because a rater who rates higher than the others disagrees with them on "
    "the scale the human score is read on. _single: the reliability of one rater's rating; "
    "_average: of the mean over the raters, the human score the other sections use. "
    "Complete outputs only (n_incomplete in the result's details).")

_WHY_WEIGHTS = {
    "ordinal": ("quadratic weights for Gwet's AC2 and the weighted kappa: the weighted kappa "
                "readers know (Fleiss & Cohen 1973 showed it equals the ICC in large "
                "samples), a near miss on the scale counting as partial agreement; gwet_ac is "
                "then Gwet's AC2"),
    "nominal": ("no weights (a near miss between categories is a miss); gwet_ac is then "
                "Gwet's AC1"),
    "interval": "distances on the scale itself (Krippendorff's interval metric, the ICC)",
}


def _variable(ds: xr.Dataset) -> xr.DataArray:
    return ds["rating"] if "rating" in ds else ds["label"]


def measurement_level(ds: xr.Dataset) -> tuple[str, str]:
    """The level of measurement of the ratings (or annotation labels) and why, in words.

    Raises ``ValueError`` for a declared level that is not one of :data:`LEVELS`."""
    var = _variable(ds)
    name = str(var.name)
    declared = var.attrs.get(LEVEL_ATTR)
    if declared is not None:
        if declared not in LEVELS:
            raise ValueError(f"attribute {LEVEL_ATTR!r} of {name!r} must be one of "
                             f"{', '.join(map(repr, LEVELS))}, got {declared!r}.")
        return str(declared), f"declared by the data ({name}.attrs[{LEVEL_ATTR!r}])"
    cats = var.attrs.get("categories")
    if cats is not None:
        return "nominal", (f"the labels are {len(cats)} text categories "
                           f"({', '.join(map(repr, list(cats)[:4]))}"
                           f"{', ...' if len(cats) > 4 else ''}), which have no order")
    if name == "rating":
        lo, hi = float(var.attrs["scale_min"]), float(var.attrs["scale_max"])
        where = f"the declared scale {lo:g}..{hi:g}"
    else:
        values = np.asarray(var.values, dtype=float)
        values = values[np.isfinite(values)]
        if values.size and np.any(values != np.round(values)):
            return "interval", "the labels are numbers that are not all integers"
        lo, hi = (float(values.min()), float(values.max())) if values.size else (0.0, 0.0)
        where = f"the observed range {lo:g}..{hi:g} of the numeric labels"
    points = round(hi - lo) + 1
    if points <= 2:
        return "nominal", (f"a {points}-point scale ({where}): with two categories every "
                           f"weighting gives the same coefficients, so the nominal ones are "
                           f"shown")
    if points > MAX_ORDINAL_POINTS:
        return "interval", (f"a {points}-point scale ({where}): scales of more than "
                            f"{MAX_ORDINAL_POINTS} points (sliders, 0-100 direct "
                            f"assessment) are read as interval")
    return "ordinal", (f"ratings on a bounded {points}-point integer scale ({where}): "
                       f"ordered categories whose distances are not known to be equal")


def level_coefficients(level: str, n_raters: int) -> tuple[list[str], str, list[str]]:
    """The coefficients shown for a level and a panel of ``n_raters`` (the first is the one
    the reading and the answer quote), Gwet's weights, and the coefficients compared
    between panels.

    Ordinal: Krippendorff's ordinal alpha, Gwet's AC2 and the weighted kappa (Cohen's for 2
    raters, Fleiss' for more) with quadratic weights, ICC(A,1) and ICC(A,k). Nominal:
    Krippendorff's nominal alpha, Gwet's AC1, Cohen's or Fleiss' kappa, percent agreement.
    Interval: Krippendorff's interval alpha, ICC(A,1) and ICC(A,k)."""
    if level not in LEVELS:
        raise ValueError(f"level must be one of {', '.join(map(repr, LEVELS))}, got "
                         f"{level!r}.")
    kappa = "cohen_kappa" if n_raters == 2 else "fleiss_kappa"
    if level == "ordinal":
        return ([f"krippendorff_{level}", "gwet_ac", kappa, *ICC_SHOWN], "quadratic",
                [f"krippendorff_{level}", "gwet_ac", ICC_SHOWN[1]])
    if level == "nominal":
        return ([f"krippendorff_{level}", "gwet_ac", kappa, "percent_agreement"], "identity",
                [f"krippendorff_{level}", "gwet_ac"])
    return [f"krippendorff_{level}", *ICC_SHOWN], "identity", [f"krippendorff_{level}",
                                                               ICC_SHOWN[1]]


def rater_panels(ds: xr.Dataset) -> tuple[dict[str, list[str]], str]:
    """The rater panels (name -> raters, in the order of the ``rater`` dim) and how they
    were found: the coordinate ``panel`` on ``rater``; else humans and LLM judges
    (``is_judge``) when each has two or more raters; else one panel ``"all"`` (the humans,
    when judges are left out). Raises ``ValueError`` for a ``panel`` coordinate off the
    ``rater`` dim or with an empty name."""
    raters = [str(r) for r in ds["rater"].values]
    if PANEL_COORD in ds.coords:
        coord = ds[PANEL_COORD]
        if coord.dims != ("rater",):
            raise ValueError(f"coordinate {PANEL_COORD!r} must lie on the 'rater' dim (one "
                             f"panel name per rater), got dims {coord.dims}.")
        groups: dict[str, list[str]] = {}
        for rater, name in zip(raters, coord.values.tolist(), strict=True):
            if name is None or (isinstance(name, float) and np.isnan(name)) \
                    or str(name).strip() == "":
                raise ValueError(f"coordinate {PANEL_COORD!r}: rater {rater!r} has no panel "
                                 f"name ({name!r}).")
            groups.setdefault(str(name), []).append(rater)
        return groups, f"the data's coordinate {PANEL_COORD!r} on rater"
    if "is_judge" in ds.coords:
        from bayesmeta.data.annotations import humans_and_judges

        humans, judges = humans_and_judges(ds)
        if len(judges) >= 2 and len(humans) >= 2:
            return ({"humans": humans, "LLM judges": judges},
                    "the humans and the LLM judges (coordinate 'is_judge')")
        if judges:
            return ({"all": humans},
                    f"the human raters; the LLM judge(s) {', '.join(judges)} are left out "
                    f"(one judge forms no panel; the LLM-judge section tests each judge "
                    f"against the humans)")
    return {"all": raters}, "every rater"


def annotation_ratings(ds: xr.Dataset) -> xr.Dataset:
    """Annotations (``label`` on ``(item, rater)``) as ratings of one trait ``"label"`` by
    one system ``"all"``, on the scale ``0..K-1`` of text categories or the observed range
    of integer labels; rater coordinates (``is_judge``, ``panel``) and the label's
    ``level_of_measurement`` are kept. Missing labels stay missing."""
    from bayesmeta.data.annotations import annotation_labels

    label = annotation_labels(ds, "the agreement section")
    values = np.asarray(label.values, dtype=float)
    cats = label.attrs.get("categories")
    finite = values[np.isfinite(values)]
    if not finite.size:
        raise ValueError("the annotations hold no label.")
    lo, hi = (0.0, float(len(cats) - 1)) if cats is not None else (
        float(finite.min()), float(finite.max()))
    attrs: dict[str, Any] = {"scale_min": lo, "scale_max": hi}
    if LEVEL_ATTR in label.attrs:
        attrs[LEVEL_ATTR] = label.attrs[LEVEL_ATTR]
    rating = xr.DataArray(values[None, :, :, None], dims=("system", "item", "rater", "trait"),
                          coords={"system": [ANNOTATION_SYSTEM], "item": label["item"].values,
                                  "rater": label["rater"].values,
                                  "trait": [ANNOTATION_TRAIT]}, attrs=attrs)
    out = xr.Dataset({"rating": rating})
    return out.assign_coords({k: ("rater", ds[k].values) for k in ("is_judge", PANEL_COORD)
                              if k in ds.coords})


def _inputs(ds: xr.Dataset, ctx: Context) -> tuple[xr.Dataset, list[str] | None] | Skipped:
    """The ratings the coefficients read and their traits (None: all)."""
    from bayesmeta.data.select import human_traits

    if "rating" in ds and _n(ds, "rater") >= 1:
        kinds = human_traits(ds)
        return ds, [t for t in ctx.traits if kinds.get(t) == "rating"] or None
    if "label" in ds and "rater" in ds["label"].dims:
        level, why = measurement_level(ds)
        if level == "interval" and why.startswith("the labels are numbers"):
            return Skipped("the annotation labels are numbers that are not all integers; "
                           "bm.agreement_coefficients reads ratings on an integer scale, so "
                           "continuous labels have no agreement coefficients here")
        return annotation_ratings(ds), None
    if "judgment" in ds:
        return Skipped("the data has continuous human scores (variable 'judgment', e.g. "
                       "averages over annotators) and no ordinal ratings by rater")
    return Skipped("the data has no ordinal ratings by rater (variable 'rating')")


def _items(ctx: Context) -> Any:
    """The report's resampling with items as the unit: the agreement intervals are
    calibrated for it (``benchmarks/agreement_coverage.py``: resampling systems and items
    together over-covered a crossed panel, 98.5-99.8% for 94%)."""
    import dataclasses

    return dataclasses.replace(ctx.resampling, unit="items")


def _clear(row: pd.Series) -> bool:
    """A difference is clear when its classical and its posterior interval both exclude 0."""
    return bool((row["classical_low"] > 0 or row["classical_high"] < 0)
                and (row["hdi_low"] > 0 or row["hdi_high"] < 0))


def _comparison(data: xr.Dataset, ctx: Context, panels: dict[str, list[str]],
                compared: list[str], weights: str, traits: list[str] | None
                ) -> tuple[Any, TableBlock, list[Finding], str]:
    """compare_agreement of the panels: the result, its table (with P(A > B)), the
    answer's lines for the clear differences and the reading's line."""
    from bayesmeta.agreement import compare_agreement

    res = compare_agreement(data, panels=panels, coefficients=compared, weights=weights,
                            traits=traits, ci_prob=ctx.ci_prob, resampling=_items(ctx),
                            random_seed=ctx.random_seed)
    frame = res.summary().copy()
    det = res.details()
    frame["P(A > B)"] = det["p_greater"]
    frame["p_value"] = det["p_value"]
    frame.attrs = dict(res.summary().attrs)
    table = TableBlock(
        f"{res.title} between panels (A = group, B = group2)", frame,
        notes=["Each row: coefficient of panel A minus that of panel B, on the same outputs "
               "(paired). Classical: the difference with a t interval from the paired "
               "jackknife; posterior: paired Bayesian bootstrap; P(A > B) under it. Panels: "
               + "; ".join(f"{g} ({', '.join(m)})" for g, m in panels.items()) + "."],
        signature=res.signature(), total_rows=len(frame))
    findings = []
    rows = frame[[_clear(r) for _, r in frame.iterrows()]]
    n_clear = len(rows)
    for (trait, a, b), sub in rows.groupby(level=["trait", "group", "group2"], sort=False):
        parts = "; ".join(f"{est} {r['classical']:+.2f} [{r['classical_low']:.2f}, "
                          f"{r['classical_high']:.2f}], P({a} > {b}) = {r['P(A > B)']:.2f}"
                          for (est, *_), r in sub.iterrows())
        signs = set(np.sign(sub["classical"]).tolist())
        if signs == {1.0}:
            head = f"Panel {a} agrees more than panel {b} on {trait}"
        elif signs == {-1.0}:
            head = f"Panel {b} agrees more than panel {a} on {trait}"
        else:
            head = f"Panels {a} and {b} differ on {trait} in opposite directions by coefficient"
        findings.append(Finding("raters", f"{head} (difference {a} - {b}: {parts}).",
                                trait=str(trait)))
    if findings:
        line = (f"{n_clear} of {len(frame)} panel differences are clear (classical and "
                f"posterior intervals exclude 0). {findings[0].text}")
    else:
        line = (f"No panel difference is clear: every difference's classical or posterior "
                f"interval includes 0 ({len(frame)} compared).")
    return res, table, findings, line


def agreement_section(ds: xr.Dataset, ctx: Context) -> SectionOutput | Skipped:
    """Inter-rater agreement per trait with the coefficients of the data's level of
    measurement (``agreement_coefficients``) and, with two or more panels, their paired
    differences (``compare_agreement``)."""
    from bayesmeta.agreement import agreement_coefficients, compare_agreement

    level, why = measurement_level(ds) if "rating" in ds or "label" in ds else ("", "")
    got = _inputs(ds, ctx)
    if isinstance(got, Skipped):
        return got
    data, traits = got
    if _n(data, "rater") < 2:
        return Skipped(f"agreement needs at least 2 raters; the data has {_n(data, 'rater')}")
    panels, found = rater_panels(data)
    small = {g: m for g, m in panels.items() if len(m) < 2}
    usable = {g: m for g, m in panels.items() if len(m) >= 2}
    if not usable:
        return Skipped(f"agreement needs at least 2 raters in a panel; raters: {found}, "
                       f"in panels of " + ", ".join(f"{g} {len(m)}" for g, m in panels.items()))
    tables, results, findings, figures = [], [], [], []
    first, first_frame = "", None
    for g, members in usable.items():
        names, weights, _ = level_coefficients(level, len(members))
        res = agreement_coefficients(data, coefficients=names, weights=weights, traits=traits,
                                     raters=members, ci_prob=ctx.ci_prob,
                                     resampling=_items(ctx), random_seed=ctx.random_seed)
        results.append(res)
        where = "" if len(usable) == 1 else f" [panel {g}: {', '.join(members)}]"
        tables.append(block(res, ctx, f"{res.title}{where}"))
        first = names[0]
        frame = res.summary()
        if first_frame is None:
            first_frame = frame
            figures.append(forest(res, title=f"{res.title}: {first}{where}"))
        sub = frame[frame.index.get_level_values(0) == first]
        low = sub[sub["classical"] < ALPHA_TENTATIVE]
        who = "The raters" if len(usable) == 1 else f"The raters of panel {g}"
        if len(low):
            findings.append(Finding("raters", f"{who} disagree ({first} below "
                                    f"{ALPHA_TENTATIVE:.2f}) on: " + "; ".join(
                                        f"{_label(i)} {v:.2f}{_interval(low.loc[i], 'classical')}"
                                        for i, v in low["classical"].items())
                                    + ". Conclusions from a single rater are tentative there."))
        else:
            findings.append(Finding("raters", f"{who} agree ({first} at least "
                                    f"{ALPHA_TENTATIVE:.2f} on every trait)."))
    _, weights, compared = level_coefficients(level, min(len(m) for m in usable.values()))
    shown = level_coefficients(level, 3)[0]
    notes = [f"Level of measurement: {level}, because {why}. Coefficients: "
             f"{', '.join(shown)}" + (" (Cohen's kappa in place of Fleiss' for 2 raters)"
                                      if "fleiss_kappa" in shown else "")
             + f"; weights: {_WHY_WEIGHTS[level]}.",
             f"Raters: {found}.",
             f"Values near 1 mean the raters are interchangeable; below about "
             f"{ALPHA_TENTATIVE:.3g} (Krippendorff's alpha) conclusions from single raters are "
             f"tentative."]
    if level != "nominal":
        notes.append(ICC_NOTE)
    notes.append("Traits are not compared with each other: the report chooses no trait by "
                 "its agreement and the per-trait intervals are above; "
                 "bm.compare_agreement(data) gives the paired test of every trait pair.")
    methods: list[Any] = [agreement_coefficients]
    notes.append("Intervals resample items (the unit the agreement intervals are calibrated "
                 "for), whatever the report's resampling unit for the metric sections.")
    if small:
        notes.append("Left out of the panel comparison (a panel needs at least 2 raters): "
                     + "; ".join(f"{g} ({', '.join(m)})" for g, m in small.items()) + ".")
    if len(usable) >= 2:
        res, table, clear, line2 = _comparison(data, ctx, usable, compared, weights, traits)
        results.append(res)
        tables.append(table)
        findings += clear
        methods.append(compare_agreement)
    else:
        line2 = ("No comparison applies: the raters form one panel and the ratings one round "
                 "(give the raters a 'panel' coordinate to compare panels or rounds).")
    reading = extremes(first_frame, first, what=f"Agreement ({level} level, {first})",
                       higher="highest", lower="lowest", column="classical")
    if len(usable) >= 2:
        reading = reading.replace("Agreement", f"Agreement of panel {next(iter(usable))}", 1)
    return SectionOutput("Agreement between raters", tables, figures,
                         f"{reading}\n{line2}", methods, results, notes=notes,
                         findings=findings)


#: The section's registration (listed in :data:`bayesmeta.report.sections.SECTIONS`).
AGREEMENT_SECTION = Section("agreement", "Agreement between raters", agreement_section,
                            options=("ci_prob", "resampling", "random_seed"))
