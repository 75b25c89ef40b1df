"""The report section "WMT metric ranking" (issue 25: the WMT ranking of a campaign).

Shown when the data is a WMT-style campaign: several language pairs on the leading dim
``lp`` of ``judgment`` and ``score`` (:func:`bayesmeta.read_mtme` with ``lp=[...]``) or one
language pair named in ``attrs["lp"]`` (:func:`bayesmeta.read_mtme` with one pair,
:func:`bayesmeta.wmt.simulate_campaign`). It ranks the metrics overall with
:func:`bayesmeta.wmt_ranking` (protocol :data:`PROTOCOL`: SPA at the system level and
tie-calibrated accuracy within items, every language pair's two tasks weighted equally,
with :func:`bayesmeta.wmt_ranking`'s defaults): the overall score with its bootstrap
interval beside the Bayesian-bootstrap posterior mean, HDI and P(rank 1), the posterior
rank distribution of every metric (a heatmap), the significance clusters of the overall
score and, per language pair, the clusters of each task
(:func:`bayesmeta.significance_clusters`, classical only).

The clusters come from the calibrated paired bootstrap test over systems (the default of
both functions when the run resamples): the WMT24/25 protocol's permutation test swaps
pairwise comparisons independently and rejected 14-36% of true nulls at a nominal 5%
(``benchmarks/wmt_null_calibration.py``, label ``swap-tests``), so the report does not
use it. Without resamples (``n_resamples=0``) the permutation test is the only one left;
the table then says so. The posterior is the WMT default Bayesian bootstrap,
Dirichlet((S - 2) / S) over the systems (:mod:`bayesmeta.wmt._common`).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayesmeta.report._answer import best_metrics
from bayesmeta.report._core import Context, Section, SectionOutput, Skipped, TableBlock

__all__ = ["ALPHA", "PROTOCOL", "TASKS", "WMT_SECTION", "is_campaign", "wmt_section"]

#: The protocol of the overall ranking (WMT24 and WMT25 weigh the same tasks).
PROTOCOL = "wmt24"
#: Significance level of the clusters (MTME's default).
ALPHA = 0.05
#: Each language pair's tasks: the statistic of :func:`bayesmeta.significance_clusters`,
#: its permutation scheme and its column label (as in the ranking's ``tasks()``).
TASKS = (("spa", "both", "sys:spa"), ("within_item_acc_eq", "pairs", "seg:acc_eq"))
#: Probabilities are printed in the heatmap's cells up to this many metrics.
ANNOTATE_METRICS = 15


def is_campaign(ds: xr.Dataset) -> bool:
    """Whether the data is a WMT-style campaign (the dim ``lp`` or ``attrs["lp"]``)."""
    return "lp" in ds.dims or bool(ds.attrs.get("lp"))


def _language_pairs(ds: xr.Dataset) -> dict[str, xr.Dataset]:
    from bayesmeta.data import split_language_pairs

    if "lp" in ds.dims:
        return split_language_pairs(ds)
    return {str(ds.attrs["lp"]): ds}


def _trait(ds: xr.Dataset, ctx: Context) -> str | Skipped:
    """The human score ranked against: the first trait of the run that the data has."""
    if not ctx.traits:
        return Skipped("the campaign has no human score (variable 'judgment' or 'rating')")
    return ctx.traits[0]


def ranking_frame(result: Any) -> pd.DataFrame:
    """One row per metric, best first: overall rank and cluster, the classical overall score
    with its interval, the posterior mean with its HDI, and P(rank 1)."""
    table = result.summary().droplevel([0, 1])
    det = result.details().droplevel([0, 1])
    cols = [c for c in ("classical", "classical_low", "classical_high", "mean", "hdi_low",
                        "hdi_high") if c in table.columns]
    out = pd.concat([det[["rank", "cluster"]], table[cols]], axis=1)
    if "p_best" in det.columns:
        out["p_rank1"] = det["p_best"]
    out.index = out.index.astype(str)
    out.index.name = "metric"
    return out.sort_values("rank", kind="mergesort")


def _rank_figure(frame: pd.DataFrame, prob: pd.DataFrame, title: str) -> Any:
    """Heatmap of P(rank = k), metrics in the overall order (best on top), a line between
    significance clusters, each label with its cluster."""
    import matplotlib.pyplot as plt

    prob = prob.copy()
    prob.index = prob.index.astype(str)
    mat = prob.loc[frame.index].to_numpy(dtype=float)
    m = mat.shape[0]
    fig, ax = plt.subplots(figsize=(min(9.4, 3.5 + 0.22 * m), max(3.0, 0.16 * m + 1.8)))
    # the colour scale ends at the largest probability: with many metrics they are small
    vmax = float(max(0.05, np.ceil(np.nanmax(mat) * 20) / 20))
    im = ax.imshow(mat, aspect="auto", cmap="Blues", vmin=0, vmax=vmax)
    ax.set_yticks(np.arange(m))
    ax.set_yticklabels([f"{name} [{int(c)}]" for name, c in frame["cluster"].items()])
    ax.set_xticks(np.arange(m))
    ax.set_xticklabels([str(k) for k in range(1, m + 1)])
    ax.set_xlabel("posterior rank (1 = best)")
    ax.set_ylabel("metric [cluster], best first")
    clusters = frame["cluster"].to_numpy()
    for k in np.flatnonzero(np.diff(clusters)):
        ax.axhline(k + 0.5, color="#c0392b", lw=1.0)
    if m <= ANNOTATE_METRICS:
        for (i, j), v in np.ndenumerate(mat):
            if v >= 0.005:
                ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=6,
                        color="white" if v > 0.6 * vmax else "black")
    ax.set_title(title)
    fig.colorbar(im, ax=ax, label="posterior probability")
    return fig


def _options(ctx: Context, scheme: str) -> Any:
    """The run's resampling options with the WMT defaults: systems resampled, the WMT
    Dirichlet, and p = b/n (MTME's) for the permutation test when no resamples are left."""
    from bayesmeta.wmt._common import WMT_DIRICHLET

    return ctx.resampling.replace(scheme=scheme, unit="systems", dirichlet=WMT_DIRICHLET,
                                  **({} if ctx.resampling.n_resamples else {"pvalue": "raw"}))


def _clusters_by_pair(sets: dict[str, xr.Dataset], trait: str, labels: list[str],
                      ctx: Context) -> tuple[pd.DataFrame, list[Any]]:
    """Per language pair and task, each metric's significance cluster (classical), as
    :func:`bayesmeta.significance_clusters` with its default test and seed
    ``random_seed + 10 k`` for pair k."""
    from bayesmeta.wmt import significance_clusters

    columns, results = {}, []
    for k, (lp, sub) in enumerate(sets.items()):
        for statistic, scheme, short in TASKS:
            res = significance_clusters(
                sub, trait, statistic=statistic, alpha=ALPHA, metrics=labels,
                resampling=_options(ctx, scheme),
                ci_prob=ctx.ci_prob, random_seed=ctx.random_seed + 10 * k)
            det = res.details().droplevel([0, 1])
            columns[f"{lp}:{short}"] = det["cluster"].reindex(labels).to_numpy()
            results.append(res)
    frame = pd.DataFrame(columns, index=pd.Index(labels, name="metric"))
    return frame, results


def wmt_section(ds: xr.Dataset, ctx: Context) -> SectionOutput | Skipped:
    """The overall WMT ranking of a campaign's metrics with posterior rank distributions
    and significance clusters (see the module docstring)."""
    from bayesmeta.wmt import significance_clusters, wmt_ranking

    if not is_campaign(ds):
        return Skipped("the data is not a WMT-style campaign (no language-pair dim 'lp' and "
                       "no attrs['lp']; read MTME folders with bm.read_mtme(path, lp=[...]) "
                       "or simulate a language pair with bm.wmt.simulate_campaign)")
    trait = _trait(ds, ctx)
    if isinstance(trait, Skipped):
        return trait
    if "score" not in ds or int(ds.sizes.get("metric", 0)) < 2:
        return Skipped("the WMT ranking compares metrics: it needs at least 2 metrics "
                       "(variable 'score')")
    if ctx.resampling.n_permutations < 1:
        return Skipped("no permutation tests in this run (the budget left them out, or "
                       "n_permutations=0): SPA and the significance clusters need them")
    sets = _language_pairs(ds)
    # both tasks compare systems on the same items: resample systems (bayesmeta.wmt._common),
    # wmt_ranking's own default, whatever the report's unit for the metric sections
    opts = _options(ctx, "pairs")
    test = ("the paired bootstrap-t over systems" if opts.n_resamples else
            "the tasks' permutation draws summed (no resamples in this run; this test "
            "rejects more than 5% of true nulls)")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = wmt_ranking(ds, trait, protocol=PROTOCOL, alpha=ALPHA, resampling=opts,
                          ci_prob=ctx.ci_prob, random_seed=ctx.random_seed)
        frame = ranking_frame(res)
        labels = [str(m) for m in res.summary().index.get_level_values("metric")]
        by_pair, cluster_results = _clusters_by_pair(sets, trait, labels, ctx)
    notes = [f"Protocol {PROTOCOL.upper()} (MTME tasks.WMT24): per language pair, soft "
             f"pairwise accuracy of the systems and tie-calibrated pairwise accuracy within "
             f"items, {2 * len(sets)} tasks weighted equally; rank and cluster by the "
             f"classical overall score; clusters at p <= {ALPHA:g} by {test}; posterior: "
             f"the weighted sum of the tasks' Bayesian-bootstrap draws ({opts.n_resamples}; "
             f"bootstrap and Dirichlet((S - 2) / S) over the systems), p_rank1 = "
             f"P(rank 1). bm.wmt_ranking(data, {trait!r}, protocol={PROTOCOL!r}) with the "
             f"run's resampling gives the same numbers."]
    notes += sorted({str(w.message) for w in caught})
    n_clusters = int(frame["cluster"].max())
    top = frame[frame["cluster"] == 1]
    tables = [
        TableBlock(f"Overall metric ranking ({PROTOCOL.upper()}): {trait}, "
                   f"{len(sets)} language pair(s)", frame, notes=notes,
                   signature=res.signature(), total_rows=len(frame)),
        TableBlock("Significance clusters: overall (cluster column above) and per language "
                   "pair and task (1 = top cluster; bm.significance_clusters with its "
                   "default test and seed random_seed + 10 k for pair k)",
                   by_pair, notes=[
                       f"Test: {test}; {opts.n_resamples} resamples, "
                       f"{opts.n_permutations} permutations (SPA's own system-pair tests)."]),
        TableBlock("Each task's classical score (rows: metrics)", res.tasks(), collapsed=True),
    ]
    figures = []
    prob = res.rank_probability() if "rank_probability" in res.extra else None
    if prob is not None:
        figures.append(_rank_figure(frame, prob, f"Posterior rank distribution, overall "
                                                 f"{PROTOCOL.upper()} score [{trait}]"))
    best = frame.iloc[0]
    line1 = (f"{len(top)} of {len(frame)} metrics share the top significance cluster "
             f"({', '.join(top.index[:8])}{' ...' if len(top) > 8 else ''}); "
             f"{n_clusters} cluster(s) in all. Best: {frame.index[0]}, overall score "
             f"{best['classical']:.3f}"
             + (f" [{best['classical_low']:.3f}, {best['classical_high']:.3f}]"
                if "classical_low" in frame else "") + " (classical estimate).")
    line2 = ""
    if "p_rank1" in frame:
        line2 = (f"Posterior: mean {best['mean']:.3f} [{best['hdi_low']:.3f}, "
                 f"{best['hdi_high']:.3f}], P(rank 1) = {best['p_rank1']:.2f}"
                 + (f"; the runner-up {frame.index[1]} has P(rank 1) = "
                    f"{frame['p_rank1'].iloc[1]:.2f}." if len(frame) > 1 else "."))
    findings = [best_metrics(res.summary(), f"{PROTOCOL}_score", trait,
                             prob, res.p_beats() if "p_beats" in res.extra else None)]
    return SectionOutput("WMT metric ranking", tables, figures, f"{line1}\n{line2}".strip(),
                         [wmt_ranking, significance_clusters],
                         [res, *cluster_results], findings=findings)


#: The section's registration (listed in :data:`bayesmeta.report.sections.SECTIONS`).
WMT_SECTION = Section("wmt", "WMT metric ranking", wmt_section,
                      options=("ci_prob", "resampling", "random_seed"),
                      language_pairs=True)
