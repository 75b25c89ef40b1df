r"""Does the joint model keep the experts' traits? Its factor correlations against the
ratings' own.

In the joint metric-validity model the metrics are indicators of the traits too. Where
they outnumber the ratings and share variance the model does not describe (a common
metric factor beyond the method factors, skewed scores), the traits can follow the
metrics instead of the experts: the factor correlations move away from what the ratings
alone say, and the validity coefficients then describe the metrics' own dimensions
("interpretational confounding", Burt 1976; on SummEval the joint posterior puts
consistency and fluency at 0.96 where the ratings alone put them at 0.68,
``models/metric_validity.md``). :func:`trait_drift` compares the two and says so.

The ratings-only reference is the CFA the user passed (a Bayesian CFA's posterior means,
a WLSMV fit's estimates) or, given lavaan syntax, a WLSMV fit of the ratings
(:func:`bayesmeta.validity.wlsmv.fit_wlsmv`, seconds). Only the free correlations (traits
in one correlated block) are compared. The two estimates use the same ratings, so they are
positively correlated and the standard error of their difference, taken as if they were
independent, is too large: the check is conservative.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

#: A factor correlation counts as moved when the joint posterior mean differs from the
#: ratings-only estimate by more than this and by more than :data:`DRIFT_Z` standard
#: errors of the difference (the reference's and the posterior's sd combined).
DRIFT_ABS = 0.15
DRIFT_Z = 3.0
#: How the warning's text begins (the report finds it among a fit's notes by it).
DRIFT_PREFIX = "the metrics bend the traits"

__all__ = ["DRIFT_ABS", "DRIFT_PREFIX", "DRIFT_Z", "TraitDriftWarning", "drift_message",
           "free_pairs", "ratings_only_correlations", "trait_drift"]


class TraitDriftWarning(UserWarning):
    """The joint model's traits differ from the ratings' own: the metrics, not the
    experts, define them, and the validity coefficients describe the metrics' dimensions."""


def free_pairs(design: Any) -> list[tuple[str, str]]:
    """The trait pairs whose correlation the model estimates (both in one block of
    ``design.blocks``; the others are fixed at 0), each in the model's trait order."""
    names = list(design.factors)
    return [(names[a], names[b]) for block in design.blocks
            for i, a in enumerate(block) for b in block[i + 1:]]


def ratings_only_correlations(fit: Any, spec: Any, data: Any, design: Any
                              ) -> tuple[pd.DataFrame | None, str]:
    """Factor correlations from the ratings alone: a DataFrame indexed ``(lhs, rhs)`` (the
    free pairs, :func:`free_pairs`) with columns ``estimate`` and ``se``, and where they
    come from (or ``None`` and why not). ``fit``: what the user passed to the joint model
    (a ``bm.cfa`` result or syntax); ``spec``, ``data``, ``design``: the parsed model, the
    ratings and their design (``JointData.spec``, ``.data``, ``.design``)."""
    pairs = free_pairs(design)
    if not pairs:
        return None, "the model has no free factor correlation"
    summary = getattr(fit, "summary", None)
    if callable(summary):
        tab = summary()
        prob = float(tab.attrs.get("classical_ci_prob") or tab.attrs.get("ci_prob") or 0.95)
        source = "the CFA passed as fit"
    else:
        from bayesmeta.validity.polychoric import polychoric
        from bayesmeta.validity.wlsmv import fit_wlsmv, parameter_table

        prob = 0.95
        tab = parameter_table(fit_wlsmv(spec, polychoric(data.frame, acov=True)),
                              spec.factors, ci_prob=prob)
        source = "a WLSMV fit of the ratings"
    if "factor_correlation" not in tab.index.get_level_values(0):
        return None, f"{source} reports no factor correlation"
    rows = tab.xs("factor_correlation", level=0).droplevel("op")
    rows.index = [tuple(ix) for ix in rows.index]
    if "mean" in rows and rows["mean"].notna().all():  # a Bayesian CFA: the posterior
        est, se = rows["mean"], rows["sd"]
    else:  # WLSMV: the estimate and its Wald interval
        est = rows["classical"]
        se = (rows["classical_high"] - rows["classical_low"]) / 2 / _wald_z(prob)
    out = []
    for a, b in pairs:
        key = (a, b) if (a, b) in rows.index else (b, a)
        if key not in rows.index:
            return None, f"{source} has no correlation of {a} and {b}"
        out.append((float(est[key]), float(se[key])))
    idx = pd.MultiIndex.from_tuples(pairs, names=["lhs", "rhs"])
    return pd.DataFrame(out, index=idx, columns=["estimate", "se"]), source


def _wald_z(prob: float) -> float:
    from scipy.stats import norm

    return float(norm.ppf(0.5 + prob / 2))


def trait_drift(posterior_corr: xr.DataArray, reference: pd.DataFrame) -> pd.DataFrame:
    """Per trait pair: the joint posterior's mean and sd of the factor correlation
    (``posterior_corr``: draws with dims ``(chain, draw, trait, trait2)``), the
    ratings-only ``estimate`` and ``se``, their difference and ``moved`` (beyond
    :data:`DRIFT_ABS` and :data:`DRIFT_Z` standard errors of the difference; where the
    reference has no finite se, the posterior sd alone)."""
    mean = posterior_corr.mean(("chain", "draw"))
    sd = posterior_corr.std(("chain", "draw"))
    out = []
    for (a, b), row in reference.iterrows():
        m = float(mean.sel(trait=a, trait2=b))
        s = float(sd.sel(trait=a, trait2=b))
        diff = m - float(row["estimate"])
        se = float(np.hypot(s, row["se"])) if np.isfinite(row["se"]) else s
        out.append({"lhs": a, "rhs": b, "joint": m, "joint_sd": s,
                    "ratings_only": float(row["estimate"]), "ratings_only_se": float(row["se"]),
                    "difference": diff,
                    "moved": bool(abs(diff) > DRIFT_ABS and abs(diff) > DRIFT_Z * se)})
    return pd.DataFrame(out).set_index(["lhs", "rhs"])


def drift_message(drift: pd.DataFrame, source: str) -> str | None:
    """The warning text where a correlation moved (``None`` where none did)."""
    moved = drift[drift["moved"]]
    if moved.empty:
        return None
    worst = moved["difference"].abs().sort_values(ascending=False)
    parts = [f"{a}-{b} {moved.loc[(a, b), 'joint']:.2f} vs "
             f"{moved.loc[(a, b), 'ratings_only']:.2f}" for a, b in worst.index[:3]]
    return (f"{DRIFT_PREFIX}: factor correlations of the joint model differ "
            f"from the ratings' own ({source}) in {len(moved)} of {len(drift)} pairs ("
            + "; ".join(parts) + "). The traits here are partly the metrics' dimensions, "
            "not the experts'; read the validity coefficients with care, and compare the "
            "two-stage or classical route, whose traits are the ratings' by construction "
            "(models/metric_validity.md).")
