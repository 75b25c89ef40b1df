"""The report's time budget (issue 21: a cost estimate before long work).

Before any section runs, :func:`plan` estimates the seconds each resampling section will
take from the data's sizes and the resamples, and fits the run into the budget:

1. with the resamples asked for, when they fit;
2. else (resamples left at their default) with fewer resamples and permutations, down to
   :data:`MIN_RESAMPLES`, saying what it reduced;
3. else with discriminative power on its system, within-system and within-item measures
   only (the global ones build an outputs x outputs matrix per metric pair), saying so;
4. else without the permutation tests (the discriminative-power section, which is one, is
   then skipped), saying so;
5. else it refuses, with the reason, before computing anything.

The cost model counts the work of the resampling engines: a *bootstrap unit* is one metric
on one resample (its measures over the ``N = systems x items`` outputs), a permutation-test
pair costs ``(permutations x N + N^2)`` (its Kendall matrix, then the permutations), and the
P(beats) and rank matrices of ``compare_metrics`` grow as ``resamples x metrics^2``. The
seconds per unit were measured on SummEval-sized data on the project's 2-core machine under
load 10 to 21 (see the constants); an idle machine of that size is faster, so the estimate
is an upper bound there and a rough one elsewhere (``benchmarks/bench_report.py`` prints the
estimate beside the time). The metric-validity section counts its bootstrap (resamples x
outputs x (traits + metrics)^2) and, with ``bayes="full"``, the modular Bayesian route
(CFA draws x outputs x (metrics + traits) x traits); no Bayesian model's MCMC is in the
estimate.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import xarray as xr

__all__ = ["BAYES_BUDGET", "DEFAULT_BUDGET", "MIN_RESAMPLES", "Plan", "default_budget",
           "estimate", "plan"]

#: Default budget (seconds) of a report with ``bayes="off"``.
DEFAULT_BUDGET = 120.0
#: Default budget (seconds) of the estimated (resampling) work of a report with
#: ``bayes="fast"`` or ``"full"``; the MCMC comes on top. Without it a full SummEval report
#: ran 1,000 permutations for each of its 903 metric pairs: 1,827 s of discriminative power
#: beside 2,067 s of MCMC (issue 19, ``benchmarks/results/report_full.jsonl``, load 6.5).
BAYES_BUDGET = 300.0
#: The fewest resamples (and permutations) the budget may reduce to.
MIN_RESAMPLES = 100
#: Steps the budget tries, largest first (each at most the resamples asked for).
LADDER = (1000, 500, 300, 200, MIN_RESAMPLES)
#: Seconds per bootstrap unit (one metric, one resample, one resampling engine, the four
#: groupings of a coefficient) at N = 1,700 outputs: ``correlations`` of 43 metrics with
#: 100 resamples took 11.7 s (load 16), and the correlation section of the SummEval report
#: with 100 resamples 46.9 s for 4 traits (load 20, niced).
SEC_BOOT = 9.5e-4
#: Seconds per (permutation x output x measure) of a permutation-test pair, and per element
#: of the pair's set-up: N^2 with the global (all-outputs) measures, N (systems + items)
#: without. Fitted to ``discriminative_power`` on SummEval-sized data (28 pairs, 100
#: permutations: 4.9 s with the 12 measures, 1.45 s without the 3 global ones, load 21)
#: and checked on the SummEval report (903 pairs, 100 permutations: 144 s with ranking
#: consistency, load 20, niced).
SEC_PERM = 2.86e-8
SEC_PAIR = 4.03e-8
#: The measures of discriminative power when the budget leaves out the global ones.
LOCAL_GROUPINGS = ("system", "within_system", "within_item")
#: Seconds per element of the resamples x metrics^2 x measures P(beats) matrices (three
#: passes: P(beats), ties, ranks).
SEC_MATRIX = 1e-8
#: Peak bytes per element of those matrices (a boolean array and its reductions).
BYTES_MATRIX = 3
#: The most memory those matrices may take (bytes).
MAX_MATRIX_BYTES = 2e9
#: Seconds per table row (metric x trait) drawn, rendered and checked: plots with a label
#: per metric, the page's tables, the data-quality check.
SEC_ROW = 5e-3
#: Seconds of a section without resampling (reading, plotting): 0.7 to 1.4 s each on the
#: SummEval report (load 20).
SEC_FIXED = 1.0
#: Seconds per (resample x output x rater x trait) of the agreement section: SummEval's 3
#: experts x 4 traits x 1,700 outputs with 1,000 resamples took 4.2 s, with its 6 LLM judges
#: as a second panel and the panel comparison 12.0 s (load 8-9;
#: ``benchmarks/bench_report_agreement.py``).
SEC_AGREE = 2.1e-7
#: Seconds per unit of the WMT ranking section's leading term, ``pairs x systems^2 x items x
#: (permutations + resamples) x (metrics + 6)`` (SPA's system-pair permutation tests,
#: computed once and reweighted by every resample, and the paired bootstrap test's
#: resamples): fitted by ``benchmarks/fit_wmt_budget.py`` to the section on simulated
#: campaigns of 2 to 4 pairs, 8 to 16 systems, 60 to 240 items, 6 to 24 metrics, 100 to
#: 400 permutations and 100 to 200 resamples (0.5 to 12 s, load 9; observed / fitted
#: 0.54-1.27).
SEC_WMT = 2.2e-8
#: Seconds per (resample x output x (traits + metrics)^2) of the metric-validity section's
#: classical route (``metric_variance``'s bootstrap: one weighted covariance matrix of the
#: factor scores and metrics per resample): 5.7 to 13 s for 200 resamples of 48 metrics x
#: 4 traits x 1,700 outputs (load 6 to 11), 8.8 s for 1,000 resamples (load 6; 91 s once
#: at load 11, BLAS threads competing), 0.3 to 0.4 s for 12 metrics
#: (``benchmarks/bench_report_validity.py``, ``benchmarks/results/report_validity.jsonl``).
SEC_VALIDITY = 6e-9
#: The modular Bayesian metric-validity route (``bayes="full"`` only): a fixed part (the
#: summary of the posterior) and seconds per unit of ``CFA draws x outputs x (metrics +
#: traits) x traits`` (the factor-score moments and their check), with
#: :data:`MODULAR_DRAWS` CFA draws assumed (the Bayesian CFA itself, shared with the CFA
#: section, is not in the estimate, as no other MCMC is). Measured: 2.2 to 4.6 s on SummEval
#: (2,000 and 2,400 draws x 1,700 outputs x (43 + 4) x 4, load 7;
#: ``benchmarks/summeval_modular.py``, ``benchmarks/results/summeval_modular.jsonl``) and
#: 1.3 s on 2,400 draws x 240 outputs x (6 + 4) x 4 (load 6).
SEC_MODULAR = 5.7e-9
SEC_MODULAR_FIXED = 1.0
#: The CFA draws assumed by the estimate (4 chains x 600, the adaptive default's typical
#: length on SummEval).
MODULAR_DRAWS = 2400
#: The sections that read a campaign of several language pairs (dim ``lp``); the others
#: are skipped on such data and cost nothing.
LP_SECTIONS = ("wmt",)
#: Measures per trait of the report's coefficient (system, global, within system and item).
N_MEASURES = 4
#: Measures of discriminative power and ranking consistency (``measures="all"``).
N_MEASURES_ALL = 12


@dataclass
class Plan:
    """The budget's decision: resamples, permutations, whether the permutation tests run,
    the estimate (seconds, per section) and what was reduced (lines for the page)."""

    n_resamples: int
    n_permutations: int
    permutations: bool
    seconds: float
    per_section: dict[str, float]
    budget: float | None
    reduced: list[str] = field(default_factory=list)
    #: The measures of discriminative power (``"all"``, or without the global ones).
    dp_measures: str | tuple[str, ...] = "all"
    #: The run fits Bayesian models, whose sampling is not in the estimate.
    mcmc: bool = False

    def line(self) -> str:
        """The estimate as one line (printed before the work and on the page)."""
        top = sorted(self.per_section.items(), key=lambda kv: -kv[1])[:3]
        parts = ", ".join(f"{k} {v:.0f} s" for k, v in top if v >= 1)
        budget = "no budget" if not self.budget else f"budget {self.budget:.0f} s"
        return (f"estimated {self.seconds:.0f} s ({budget}; {self.n_resamples} resamples"
                + (f", {self.n_permutations} permutations" if self.permutations else
                   ", no permutation tests") + (f"; longest: {parts}" if parts else "") + ")"
                + (", plus the Bayesian models' sampling (not in the estimate)"
                   if self.mcmc else ""))


def default_budget(bayes: str) -> float:
    """The budget when none is given: :data:`DEFAULT_BUDGET` with ``bayes="off"``, else
    :data:`BAYES_BUDGET` for the resampling (the MCMC is not estimated)."""
    return DEFAULT_BUDGET if bayes == "off" else BAYES_BUDGET


def _sizes(data: xr.Dataset) -> tuple[int, int, int]:
    n = int(data.sizes.get("system", 1)) * int(data.sizes.get("item", 1))
    return n, int(data.sizes.get("metric", 0)), int(data.sizes.get("system", 0))


def estimate(data: xr.Dataset, traits: Sequence[str], keys: Sequence[str], *,
             n_resamples: int, n_permutations: int, permutations: bool = True,
             global_measures: bool = True, bayes: str = "off"
             ) -> tuple[dict[str, float], float]:
    """Estimated seconds per section (keys of the run) and the peak bytes of the P(beats)
    matrices, for these resamples and permutations (``bayes="full"``: with the modular
    metric-validity step; no MCMC is in the estimate)."""
    n, m, n_sys = _sizes(data)
    n_items = int(data.sizes.get("item", 1))
    pairs = m * (m - 1) / 2
    t, r, p = len(traits), n_resamples, n_permutations if permutations else 0
    boot = SEC_BOOT * n / 1700.0
    matrix = r * m * m
    has_scores = "score" in data and m > 0
    campaign = "lp" in data.dims
    out: dict[str, float] = {}
    for key in keys:
        if campaign and key not in LP_SECTIONS:
            out[key] = 0.0
            continue
        sec = SEC_FIXED
        if key == "wmt" and not (campaign or data.attrs.get("lp")):
            out[key] = SEC_FIXED  # not a WMT campaign: the section skips
            continue
        if has_scores and t and key == "wmt" and m >= 2 and p:
            sec += (SEC_WMT * int(data.sizes.get("lp", 1)) * n_sys ** 2 * n_items * (p + r)
                    * (m + 6) + m * SEC_ROW)
        elif has_scores and t:
            if key == "correlations":  # correlations (4 groupings), compare_metrics (one)
                sec += t * (2 * r * m * boot * 1.25 + 3 * matrix * SEC_MATRIX
                            + 3 * m * SEC_ROW)
            elif key == "metameasures" and m >= 2:  # 12 measures: permutations, splits
                if p and global_measures:
                    sec += pairs * (p * n * N_MEASURES_ALL * SEC_PERM + n * n * SEC_PAIR)
                elif p:
                    sec += pairs * (p * n * 9 * SEC_PERM + n * (n_sys + n_items) * SEC_PAIR)
                sec += r * m * boot * N_MEASURES_ALL / N_MEASURES
            elif key == "reference_free" and "reference_based" in data.coords:
                sec += t * (2 * r * m * boot / N_MEASURES + m * SEC_ROW)
            elif key == "concurrent_validity":  # one measure, on system means: 2.9 s on
                sec += t * (2 * r * m * boot / 16 + m * SEC_ROW)  # SummEval (100 resamples)
            elif key == "data":
                sec += m * SEC_ROW
        if key == "metric_validity" and has_scores and "rating" in data:
            n_traits = max(t, 1)
            sec += SEC_VALIDITY * r * n * (n_traits + m) ** 2 + 3 * m * SEC_ROW
            if bayes == "full":
                sec += (SEC_MODULAR_FIXED
                        + SEC_MODULAR * MODULAR_DRAWS * n * (m + n_traits) * n_traits)
        if key == "agreement" and ("rating" in data or "label" in data):
            n_traits = int(data.sizes.get("trait", 1))
            sec += SEC_AGREE * r * n * int(data.sizes.get("rater", 0)) * n_traits
        out[key] = sec
    return out, float(matrix * BYTES_MATRIX) if has_scores and m >= 2 and not campaign \
        else 0.0


def plan(data: xr.Dataset, traits: Sequence[str], keys: Sequence[str], *,
         n_resamples: int, n_permutations: int, budget: float | None,
         resamples_given: bool, bayes: str = "off") -> Plan:
    """Fit the run into ``budget`` seconds (None or 0: no budget), or raise ``ValueError``
    with the reason before anything is computed.

    ``resamples_given``: the user chose the resamples, which the budget then never lowers
    (it refuses instead, naming the choice). With ``bayes`` other than ``"off"`` the plan
    says that the models' sampling is not in the estimate."""
    out = _plan(data, traits, keys, n_resamples=n_resamples, n_permutations=n_permutations,
                budget=budget, resamples_given=resamples_given, bayes=bayes)
    out.mcmc = bayes != "off"
    return out


def _plan(data: xr.Dataset, traits: Sequence[str], keys: Sequence[str], *,
          n_resamples: int, n_permutations: int, budget: float | None,
          resamples_given: bool, bayes: str) -> Plan:
    budget = float(budget) if budget else None
    per, mem = estimate(data, traits, keys, n_resamples=n_resamples,
                        n_permutations=n_permutations, bayes=bayes)
    first = Plan(n_resamples, n_permutations, True, sum(per.values()), per, budget)
    if budget is None or (first.seconds <= budget and mem <= MAX_MATRIX_BYTES):
        return first
    _, m, _ = _sizes(data)
    if not resamples_given:
        for r in [v for v in LADDER if v < n_resamples] or [MIN_RESAMPLES]:
            if r > n_resamples:
                continue
            p = min(n_permutations, r)
            per, mem = estimate(data, traits, keys, n_resamples=r, n_permutations=p,
                                bayes=bayes)
            if sum(per.values()) <= budget and mem <= MAX_MATRIX_BYTES:
                return Plan(r, p, True, sum(per.values()), per, budget, [
                    f"resamples reduced from {n_resamples} to {r} and permutations from "
                    f"{n_permutations} to {p} (estimated {first.seconds:.0f} s with "
                    f"{n_resamples}; budget {budget:.0f} s)"])
        r = min(MIN_RESAMPLES, n_resamples)
        p = min(n_permutations, r)
        per, mem = estimate(data, traits, keys, n_resamples=r, n_permutations=p,
                            global_measures=False, bayes=bayes)
        if "metameasures" in keys and sum(per.values()) <= budget and mem <= MAX_MATRIX_BYTES:
            return Plan(r, p, True, sum(per.values()), per, budget, [
                f"resamples reduced from {n_resamples} to {r} and permutations from "
                f"{n_permutations} to {p}, and discriminative power without its 3 global "
                f"(all-outputs) measures, whose permutation tests build an outputs x "
                f"outputs matrix per metric pair (estimated {first.seconds:.0f} s in full; "
                f"budget {budget:.0f} s)"], dp_measures=LOCAL_GROUPINGS)
        per, mem = estimate(data, traits, keys, n_resamples=r, n_permutations=0,
                            permutations=False, bayes=bayes)
        if sum(per.values()) <= budget and mem <= MAX_MATRIX_BYTES:
            return Plan(r, 0, False, sum(per.values()), per, budget, [
                f"resamples reduced from {n_resamples} to {r}, and no permutation tests "
                f"(discriminative power"
                + (" and the WMT ranking" if "wmt" in keys else "") + f" skipped): {m} "
                f"metrics make "
                f"{m * (m - 1) // 2:,} pairs (estimated {first.seconds:.0f} s in full; "
                f"budget {budget:.0f} s)"])
    n, _, _ = _sizes(data)
    reasons = []
    secs = first.seconds if resamples_given else sum(per.values())
    if budget is not None and secs > budget:
        reasons.append(f"the estimated time is about {secs:,.0f} s "
                       + (f"with {n_resamples} resamples" if resamples_given else
                          f"even with {MIN_RESAMPLES} resamples and no permutation tests")
                       + f", over the budget of {budget:.0f} s")
    if mem > MAX_MATRIX_BYTES:
        reasons.append(f"the P(beats) and rank matrices of compare_metrics need about "
                       f"{mem / 1e9:.1f} GB (resamples x metrics^2 x {N_MEASURES} measures; "
                       f"limit {MAX_MATRIX_BYTES / 1e9:.0f} GB)")
    raise ValueError(
        f"report: {'; and '.join(reasons)}: {m:,} metrics on {n:,} outputs and "
        f"{len(traits)} trait(s) make {m * (m - 1) // 2:,} metric pairs. Nothing was "
        f"computed. Choose fewer metrics (--metrics, metrics=), fewer traits (--trait) or "
        f"sections (sections=), fewer resamples, or raise the budget (--budget SECONDS, "
        f"budget=; 0: no limit).")


def settings_line(p: Plan | None) -> str:
    """The budget's row of the page's settings."""
    return "none" if p is None else p.line()

