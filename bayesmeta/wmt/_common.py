r"""Shared steps of the WMT statistics: inputs from the one selection layer, the classical
value, bootstrap and Bayesian-bootstrap draws through the correlation package's resampling
engine (:func:`~bayesmeta.correlation.resampling.resampling_weights`), and the side-by-side
table with P(A beats B) and rank distributions.

**What is resampled** (:func:`default_unit`). A WMT campaign is a crossed systems x items
design. Every statistic that compares systems on the same items (system-level correlations
and accuracy, SPA, Pairwise Difference Pearson and KendallLike within items, correlations
and tie-calibrated accuracy within items) is unchanged by an additive per-item effect, also
one specific to a metric: it cancels out of every comparison of two systems on an item. The
systems are then the unit that carries the statistic's sampling variance, and the output
level (system x item) noise reaches the statistic through the systems' rows. Resampling
items as well (the two-way "pigeonhole" bootstrap) counts that output-level variance more
than once (Owen 2007): in null campaigns of two equally valid metrics (8-30 systems x 50
items) the 94% intervals of their *difference* covered 99.5-100% when systems and items
were resampled together, by the percentile bootstrap and by a Dirichlet over both
(``benchmarks/wmt_null_calibration.py paired``). So for these statistics the default
``unit`` is ``"systems"``: the percentile bootstrap resamples systems, and the Bayesian
bootstrap puts a Dirichlet on the systems, every item weighing one.

**Which Dirichlet** (``dirichlet``, default :data:`WMT_DIRICHLET` ``"unbiased"``). Rubin's
flat Dirichlet over S systems gives a weighted mean the posterior variance
:math:`s^2 (S - 1) / (S (S + 1))`, 22% below its unbiased sampling variance :math:`s^2/S`
at S = 8; through :func:`bayesmeta.significance_clusters` (label ``defaults-systems``) its
94% HDIs of the difference covered 0.875-0.955 at 20-30 systems but 0.815-0.945 at 8
(the bootstrap intervals 0.895-0.98). The WMT functions therefore draw
Dirichlet((S - 2) / S) weights, whose variance of a weighted mean is exactly
:math:`s^2/S` (:func:`~bayesmeta.correlation.resampling.dirichlet_concentration`; the same
:math:`S - 1` as the sample variance's); the calibration of the default
(label ``defaults-unbiased``) is :data:`SYSTEMS_POSTERIOR_NOTE`, printed under such
results, with the numbers in the Notes of :func:`bayesmeta.significance_clusters`. Over
systems and items together the weights stay flat (the two-way weights over-state the
variance already). ``resampling={"dirichlet": "flat"}`` restores Rubin's weights.

Statistics in which
the items' levels matter (a correlation over all outputs, ``global_*``; a correlation
across items within each system, ``within_system_*``; PDP and KendallLike with
``grouping="system"`` or ``"global"``) keep ``"both"``: there an item effect shared by the
metric and the human score is part of what is measured, and resampling systems alone
would leave the items' variance out. An explicit ``resampling={"unit": ...}`` is honoured
by both the bootstrap and the Bayesian bootstrap (a Dirichlet over the unit(s) named); a
:class:`~bayesmeta.options.ResamplingOptions` object is taken as given, its ``unit``
(default ``"both"``) and ``dirichlet`` (default ``"flat"``) included.

References
----------
Owen (2007), *The pigeonhole bootstrap*, Ann. Appl. Stat. 1(2), 386-411; Rubin (1981),
*The Bayesian Bootstrap*, Ann. Statist. 9(1).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayesmeta.correlation.comparison import _rank_probabilities
from bayesmeta.correlation.measures import measure_draws, parse_measures, split_measure
from bayesmeta.correlation.resampling import (
    effective_dirichlet,
    percentile_interval,
    resampling_weights,
)
from bayesmeta.data import select
from bayesmeta.data.schema import validate
from bayesmeta.options import ResamplingOptions
from bayesmeta.results import Result, data_hash
from bayesmeta.summaries import summarize
from bayesmeta.vocabulary import resampling_options

#: A statistic of metric scores (..., S, I) against the human score (S, I) under system
#: weights a (R, S) and item weights b (R, I) (None: ones); returns (R, ...) with weights,
#: (...) without.
Statistic = Callable[[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None],
                     np.ndarray]


#: Groupings of a correlation measure that compare systems on the same items (system
#: level, within items): their default resampling unit is the systems (module docstring).
SYSTEM_GROUPINGS = ("system", "within_item")
#: What a unit resamples, in words.
UNIT_WORDS = {"systems": "systems", "items": "items", "both": "systems and items"}


def default_unit(statistic: str, grouping: str | None = None) -> str:
    """The default resampling unit of a WMT statistic: ``"systems"`` when it compares
    systems on the same items (``"spa"``; ``"pdp"`` / ``"kendall_like"`` with ``grouping``
    ``"item"``; a ``system_*`` or ``within_item_*`` measure), else ``"both"``.

    Examples
    --------
    >>> from bayesmeta.wmt._common import default_unit
    >>> default_unit("system_pearson"), default_unit("global_pearson")
    ('systems', 'both')
    >>> default_unit("pdp", "item"), default_unit("kendall_like", "global")
    ('systems', 'both')
    """
    if statistic == "spa":
        return "systems"
    if statistic in ("pdp", "kendall_like"):
        return "systems" if (grouping or "item") == "item" else "both"
    names = parse_measures(statistic)
    if len(names) != 1:
        return "both"          # the caller refuses several measures
    return "systems" if split_measure(names[0])[0] in SYSTEM_GROUPINGS else "both"


def explicit_unit(resampling: ResamplingOptions | Mapping[str, Any] | None) -> str | None:
    """The ``unit`` the user named (a dict with ``"unit"`` or an options object), else
    None."""
    if resampling is None:
        return None
    if isinstance(resampling, Mapping):
        return resampling_options(resampling).unit if "unit" in resampling else None
    return resampling_options(resampling).unit


def wmt_resampling(resampling: ResamplingOptions | Mapping[str, Any] | None, unit: str,
                   **defaults: Any) -> ResamplingOptions:
    """``resampling=`` as options with the statistic's default ``unit`` (see
    :func:`default_unit`) and :data:`WMT_DIRICHLET` where the user names none; an options
    object is taken as given (its ``unit`` defaults to ``"both"``, its ``dirichlet`` to
    ``"flat"``)."""
    return resampling_options(resampling, unit=unit, **{"dirichlet": WMT_DIRICHLET,
                                                         **defaults})


def dirichlet_words(dirichlet: str, unit: str = "systems") -> str:
    """The Bayesian bootstrap's Dirichlet over ``unit`` in words, up to the unit's name (see
    :func:`~bayesmeta.correlation.resampling.dirichlet_concentration` and
    :func:`~bayesmeta.correlation.resampling.effective_dirichlet`)."""
    return {"flat": "flat Dirichlet over",
            "unbiased": "Dirichlet((k - 2) / k; flat below 3) over k"}[
                effective_dirichlet(unit, dirichlet)]


def interval_kinds(unit: str, dirichlet: str = "flat") -> dict[str, str]:
    """The result's ``classical_ci_kind`` and ``posterior`` keywords, saying what is
    resampled."""
    words = UNIT_WORDS[unit]
    return {"classical_ci_kind": f"percentile bootstrap over {words}",
            "posterior": f"Bayesian bootstrap ({dirichlet_words(dirichlet, unit)} {words})"}


def posterior_text(unit: str, n: int, dirichlet: str = "flat") -> str:
    """``info["posterior"]``: the Dirichlet's unit(s) and the number of draws."""
    rest = {"systems": "; items weigh one", "items": "; systems weigh one", "both": ""}[unit]
    return (f"Bayesian bootstrap ({dirichlet_words(dirichlet, unit)} {UNIT_WORDS[unit]}{rest}), "
            f"{n} draws")


#: The WMT functions' default Bayesian-bootstrap Dirichlet (module docstring).
WMT_DIRICHLET = "unbiased"

#: The calibration line under results whose posterior is a flat Dirichlet over the systems
#: (``benchmarks/wmt_null_calibration.py defaults``, label ``defaults-systems``).
FLAT_SYSTEMS_POSTERIOR_NOTE = (
    "Bayesian bootstrap over systems (flat Dirichlet): in null campaigns of two equally "
    "valid metrics (50 items) the 94% HDIs of their difference covered 0.875-0.955 at "
    "20-30 systems but 0.815-0.945 at 8, and P(A beats B) fell outside [0.025, 0.975] in "
    "1.5-12.5% (20-30 systems) and 4-22.5% (8) of them, most for system Pearson: with few "
    "systems the flat posterior is narrow; the default dirichlet='unbiased' is calibrated.")

#: The calibration line under results whose posterior is the default Dirichlet((S-2)/S)
#: over the systems (``benchmarks/wmt_null_calibration.py defaults``, label
#: ``defaults-unbiased``).
SYSTEMS_POSTERIOR_NOTE = (
    "Bayesian bootstrap over systems, Dirichlet((S - 2) / S), 1,000 draws: in null "
    "campaigns of two equally valid metrics (8-30 systems x 50 items) the 94% HDIs of their "
    "difference covered 0.895-1.0, and P(A beats B) fell outside [0.025, 0.975] in 0-18% "
    "of them (most for system Pearson at 8 systems): read P(A beats B) as the probability "
    "of the order, not as a 5% test; significance_clusters' paired bootstrap test keeps "
    "its level (0-7%).")


def systems_posterior_note(unit: str, n_resamples: int, dirichlet: str = "flat"
                           ) -> list[str]:
    """The calibration line (:data:`SYSTEMS_POSTERIOR_NOTE`, or
    :data:`FLAT_SYSTEMS_POSTERIOR_NOTE` for the flat Dirichlet) when a posterior over the
    systems is reported."""
    if unit != "systems" or not n_resamples:
        return []
    return [SYSTEMS_POSTERIOR_NOTE if dirichlet == "unbiased" else FLAT_SYSTEMS_POSTERIOR_NOTE]


def measure_statistic(name: str) -> Statistic:
    """One correlation measure as a statistic ``(x, z, a, b)``."""
    names = [name]

    def measure(x, z, a, b):
        lead = x.shape[:-2]
        flat = x.reshape(-1, *x.shape[-2:])
        out = measure_draws(flat, z, system_weights=a, item_weights=b, measures=names)[..., 0]
        return out[0].reshape(lead) if a is None and b is None else out.reshape(-1, *lead)
    return measure


def spa_statistic(signs: np.ndarray) -> Statistic:
    """Soft pairwise accuracy as a statistic ``(x, z, a, b)`` with the permutation
    ``signs`` of its system-pair tests (:func:`bayesmeta.wmt.kernels.permutation_signs`).
    With the items unweighted (``b`` None) each system pair's p-values are the classical
    ones in every resample, which only reweights the pairs (:math:`a_s a_t`), so they are
    computed once; item weights change the p-values of every resample."""
    from bayesmeta.wmt import kernels

    def spa(x, z, a, b):
        if b is None:
            pm = kernels.pairwise_pvalues(x, signs)
            ph = kernels.pairwise_pvalues(z, signs)
            if a is None:
                return kernels.soft_pairwise_accuracy(pm, ph)
            return kernels.soft_pairwise_accuracy(pm[None], ph[None, None], a)  # (R, M)
        ph = kernels.pairwise_pvalues(z, signs, b=b)                  # (R, S, S)
        pm = kernels.pairwise_pvalues(x, signs, b=b)                  # (R, M, S, S)
        return kernels.soft_pairwise_accuracy(pm, ph[:, None], a)
    return spa


class WMTResult(Result):
    """A WMT statistic of every metric, classical and Bayesian (see
    :func:`bayesmeta.wmt.soft_pairwise_accuracy`)."""

    def p_beats(self) -> pd.DataFrame:
        """Square table: posterior P(row metric beats column metric)."""
        return self.extra["p_beats"].to_pandas()

    def rank_probability(self) -> pd.DataFrame:
        """Posterior probability of each rank (1 = best) of each metric."""
        return self.extra["rank_probability"].to_pandas()


def inputs(data: xr.Dataset, trait: str | None, raters: Any, human: Any, metrics: Any,
           run: Any, reference: Any, *, complete: bool = True
           ) -> tuple[np.ndarray, np.ndarray, list[str], select.HumanScore]:
    """Metric scores ``(M, S, I)``, the human score ``(S, I)``, metric labels and the human
    score's description; refuses missing metric scores (and, with ``complete``, missing
    human scores), naming the metric."""
    validate(data, warn_missing=False)
    scores = select.metric_scores(data, metrics, run=run, reference=reference)
    hs = select.human_score(data, trait, raters=raters, human=human)
    z = np.asarray(hs.values.transpose("system", "item").values, dtype=float)
    x = np.asarray(scores.values, dtype=float)
    labels = [str(m) for m in scores["metric"].values]
    select.require(x.shape[1], 2, "system", "WMT statistics")
    bad = np.isnan(x).any((1, 2))
    if bad.any():
        m = int(np.argmax(bad))
        raise ValueError(f"metric {labels[m]!r} has {int(np.isnan(x[m]).sum())} missing "
                         f"scores; the WMT statistics need every output scored (select the "
                         f"outputs first).")
    if complete and np.isnan(z).any():
        raise ValueError(f"human score {hs.label!r} has {int(np.isnan(z).sum())} missing "
                         f"values; this statistic needs every output rated.")
    return x, z, labels, hs


def draws(stat: Statistic, x: np.ndarray, z: np.ndarray, kind: str, n: int, seed: int,
          unit: str = "both", chunk: int = 50, *, dirichlet: str = "flat") -> np.ndarray:
    """``(n, M)`` draws of ``stat`` under bootstrap (``kind="bootstrap"``: multinomial
    counts of ``unit``) or Bayesian-bootstrap (``"bayesian"``: a Dirichlet over ``unit``,
    ``dirichlet`` as :func:`~bayesmeta.correlation.resampling.resampling_weights` takes it,
    the other unit weighing one) weights from the resampling engine."""
    rng = np.random.default_rng(seed)
    a, b = resampling_weights(rng, kind, n, z.shape, unit, bayesian_unit=unit,
                              dirichlet=dirichlet)
    out = np.empty((n, x.shape[0]))
    for s in range(0, n, chunk):
        sl = slice(s, min(n, s + chunk))
        aa = None if a is None else a[sl]
        bb = None if b is None else b[sl]
        if aa is None and bb is None:  # pragma: no cover - unit always resamples something
            raise ValueError("resampling weights are missing.")
        out[sl] = stat(x, z, aa, bb)
    return out


def side_by_side(table: pd.DataFrame, boot: np.ndarray, post: np.ndarray,
                 ci_prob: float) -> None:
    """Fill ``table``'s ``classical_low``/``classical_high`` (percentile interval of the
    bootstrap draws ``boot``, ``(resamples, rows)``) and its posterior columns (``mean``,
    ``sd``, ``hdi_low``, ``hdi_high`` of the Bayesian-bootstrap draws ``post``), in place."""
    iv = percentile_interval(xr.DataArray(boot, dims=("resample", "row")), ci_prob)
    s = summarize(xr.DataArray(post, dims=("resample", "row")), ci_prob=ci_prob,
                  sample_dims=("resample",))
    table["classical_low"] = iv.sel(ci_bound="lower").values
    table["classical_high"] = iv.sel(ci_bound="upper").values
    table["mean"] = s["mean"].values
    table["sd"] = s["sd"].values
    table["hdi_low"] = s["interval"].sel(ci_bound="lower").values
    table["hdi_high"] = s["interval"].sel(ci_bound="upper").values


def beats_matrix(post: np.ndarray) -> np.ndarray:
    """P(row metric beats column metric) from draws ``(resamples, metrics)``, ties counted
    half; NaN on the diagonal."""
    with np.errstate(invalid="ignore"):
        beats = ((post[:, :, None] > post[:, None, :]).mean(0)
                 + 0.5 * (post[:, :, None] == post[:, None, :]).mean(0))
    np.fill_diagonal(beats, np.nan)
    return beats


def evaluate(stat: Statistic, data: xr.Dataset, x: np.ndarray, z: np.ndarray,
             labels: Sequence[str], hs: select.HumanScore, *, estimand: str,
             title: str, n_resamples: int, unit: str, ci_prob: float, seed: int,
             info: dict[str, Any], notes: Sequence[str] = (), dirichlet: str = "flat"
             ) -> WMTResult:
    """Classical value, percentile bootstrap interval (seed + 1) and Bayesian-bootstrap
    posterior (seed + 2), both over ``unit``, of ``stat`` for every metric, as a
    :class:`WMTResult`."""
    point = np.asarray(stat(x, z, None, None), float)
    M = len(labels)
    idx = pd.MultiIndex.from_product([[estimand], [hs.trait], list(labels)],
                                     names=["estimand", "trait", "metric"])
    table = pd.DataFrame({"classical": point}, index=idx)
    order = np.argsort(-point, kind="stable")
    rank = np.empty(M, int)
    rank[order] = np.arange(1, M + 1)
    details = pd.DataFrame({"rank": rank}, index=idx)
    extra: dict[str, Any] = {}
    kinds: dict[str, Any] = {}
    info = {"data": select.describe(data), "human": hs.label, **info}
    if n_resamples:
        boot = draws(stat, x, z, "bootstrap", n_resamples, seed + 1, unit)
        post = draws(stat, x, z, "bayesian", n_resamples, seed + 2, unit,
                     dirichlet=dirichlet)
        bda = xr.DataArray(boot, dims=("resample", "metric"), coords={"metric": list(labels)})
        pda = xr.DataArray(post, dims=("resample", "metric"), coords={"metric": list(labels)})
        side_by_side(table, boot, post, ci_prob)
        beats = beats_matrix(post)
        ranks = _rank_probabilities(post[:, :, None])[0]
        details["p_best"] = ranks[:, 0]
        extra = {
            "bootstrap": bda, "posterior": pda,
            "p_beats": xr.DataArray(beats, dims=("metric", "metric2"),
                                    coords={"metric": list(labels), "metric2": list(labels)}),
            "rank_probability": xr.DataArray(
                ranks, dims=("metric", "rank"),
                coords={"metric": list(labels), "rank": np.arange(1, M + 1)}),
        }
        info["classical interval"] = (f"{ci_prob:.0%} percentile bootstrap over "
                                      f"{UNIT_WORDS[unit]}, {n_resamples} resamples")
        info["posterior"] = posterior_text(unit, n_resamples, dirichlet)
        kinds = interval_kinds(unit, dirichlet)
    undefined = [m for m, v in zip(labels, point, strict=True) if not np.isfinite(v)]
    notes = list(notes) + systems_posterior_note(unit, n_resamples, dirichlet)
    if undefined:
        notes.append(f"{estimand} is undefined (constant scores or no eligible pairs) for: "
                     f"{', '.join(undefined[:12])}" + (" ..." if len(undefined) > 12 else ""))
    notes.append("details(): rank (by the classical value, 1 = best) and p_best (posterior "
                 "probability of rank 1); extra['p_beats']: P(metric beats metric2).")
    return WMTResult(table, title=title, info=info, details=details, extra=extra,
                     ci_prob=ci_prob, random_seed=seed, data_hash=data_hash(data),
                     notes=notes, **kinds)
