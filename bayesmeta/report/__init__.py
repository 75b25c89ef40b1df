"""The uncertainty-aware metric report: ``bm.report(data)`` -> a :class:`Report`.

One section per analysis behind one interface (:class:`Section`: a function ``(data,
context) -> SectionOutput | Skipped``), rendered to one self-contained HTML page
(:meth:`Report.save`), shown inline in Jupyter, and summarised as text
(:meth:`Report.text`). Nothing here runs at import; matplotlib and Jinja2 are imported when
a report is made.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

import xarray as xr

from bayesmeta.options import ResamplingOptions
from bayesmeta.report._budget import default_budget, plan
from bayesmeta.report._core import (
    BAYES_MODES,
    Context,
    Section,
    SectionOutput,
    SectionRun,
    Skipped,
    TableBlock,
    interactive,
    run_sections,
)
from bayesmeta.report._report import Report
from bayesmeta.report.sections import SECTIONS, default_sections
from bayesmeta.summaries import CI_PROB, check_ci_prob
from bayesmeta.vocabulary import resampling_options

#: The correlation coefficients of ``coefficient=``.
COEFFICIENTS = ("kendall", "spearman", "pearson")

__all__ = ["BAYES_MODES", "SECTIONS", "Context", "Report", "Section", "SectionOutput",
           "SectionRun", "Skipped", "TableBlock", "default_sections", "report"]


def report(
    data: xr.Dataset,
    *,
    traits: Sequence[str] | str | None = None,
    bayes: str | None = None,
    coefficient: str | None = None,
    ci_prob: float | None = None,
    resampling: ResamplingOptions | Mapping[str, Any] | None = None,
    random_seed: int | None = None,
    sections: Sequence[Section | str] | None = None,
    source: str | None = None,
    progress: bool | None = None,
    budget: float | None = None,
    loo: bool | None = None,
) -> Report:
    """The uncertainty-aware metric report of a dataset.

    Runs every section (data and design, reliability, agreement with the coefficients of the
    data's level of measurement and the differences between rater panels (a ``panel``
    coordinate on ``rater``, or humans and LLM judges), MTMM, concurrent validity,
    correlation measures with P(A beats B), discriminative power and ranking consistency,
    rater diagnosis, ordinal CFA, metric validity: claimed trait, other traits and error per
    metric, with ``bayes="full"`` also from the joint and modular Bayesian routes) and
    collects their tables (classical and Bayesian side by side, intervals drawn as
    intervals), plots, two-line readings and timings. The page opens with the answer: per
    trait the best metrics with their intervals and P(best), the raters that disagree or
    deviate, what the data could not support, every data-quality finding (and MCMC tables
    with ``r_hat > 1.01``, ``ess_bulk < 400`` or divergences, when there are any); settings
    and provenance close it. A section whose inputs the data lacks is *skipped* with the
    reason (no ordinal ratings: the rater sections); a section with an estimate that cannot
    be computed is *partial*, with the reason; a section that raises is shown as *failed*
    with the error, and the report goes on. Before computing, the time of each section is
    estimated and fitted into ``budget``.

    Parameters
    ----------
    data : xarray.Dataset
        A bayesmeta dataset (:func:`bayesmeta.read_csv`, :mod:`bayesmeta.datasets`).
    traits : str or list of str, optional
        Human traits to analyse (default: every trait with ratings or judgments).
    bayes : {"off", "fast", "full"}
        ``"off"``: classical analyses and resampling posteriors only (fast); ``"fast"``:
        also the Bayesian models with capped draws, a preview stated on every affected
        table; ``"full"``: the Bayesian models with full sampler settings.
    coefficient : {"kendall", "spearman", "pearson"}
        Correlation coefficient of MTMM, concurrent validity and the correlation measures
        shown (default ``"kendall"``).
    ci_prob : float
        Probability of every interval (default 0.94).
    resampling : ResamplingOptions or dict, optional
        The ``resampling=`` of every resampling analysis: ``n_resamples`` (Bayesian-bootstrap
        resamples and random splits, at least 10; default 1000), ``n_permutations``
        (default: ``n_resamples``), ``n_jobs`` (default 1: sections run one after another,
        and on a small machine one worker is fastest).
    random_seed : int, optional
        Seed of every resampling and sampler call; drawn and recorded when not given.
    sections : list of Section or str, optional
        The sections to run (keys of :data:`SECTIONS` or :class:`Section` objects, e.g. a
        section of a later analysis); default all.
    source : str, optional
        How to name the data in the header (default ``data.attrs["path"]`` or ``"source"``).
    progress : bool, optional
        Progress bars (tqdm.auto: a terminal bar, or a widget in Jupyter) per section and
        inside long sections, and the cost estimate before the work (default: when someone
        is watching: stderr is a terminal or the code runs in a notebook). False: silent.
    budget : float, optional
        Seconds the report's estimated work may take (default 120 with ``bayes="off"``,
        300 with ``"fast"`` or ``"full"``; 0: no limit). Before computing, the report
        estimates each section's time from the data's sizes; over budget, it lowers the
        resamples and permutations it chose by default (down to 100; then without the
        pairwise permutation tests), saying on the page what it reduced, and refuses with
        the reason (``ValueError``) when even that does not fit or when the resamples were
        given (it never lowers a choice made). The Bayesian models' MCMC is not in the
        estimate and comes on top of the budget (the metric-validity section's modular
        step is in it, with ``bayes="full"``).
    loo : bool, optional
        With ``bayes="full"``: also fit one general factor and compare it with the trait
        factors by LOO in the CFA section (a second Bayesian CFA, as long as the first;
        default False).

    Each section receives exactly the options its analyses take (:attr:`Section.options`);
    an option given here that no section of the run takes (``coefficient``, ``ci_prob``,
    ``resampling``, ``bayes``) is a ``ValueError`` naming it, never silently dropped.

    Returns
    -------
    Report
        ``.save("report.html")``, ``.text()``, ``.section(key)``, ``.convergence``,
        ``.provenance``; displays inline in Jupyter.

    Examples
    --------
    >>> import bayesmeta as bm
    >>> ds = bm.datasets.simulated(n_systems=5, n_items=12)
    >>> rep = bm.report(ds, sections=["data"], random_seed=1)
    >>> rep.section("data").status
    'ok'
    >>> "<script" in rep.html()
    False
    """
    from bayesmeta.data.select import human_traits
    from bayesmeta.options import resolve_seed
    from bayesmeta.results import data_hash

    if not isinstance(data, xr.Dataset):
        raise TypeError(f"data must be a bayesmeta xarray.Dataset, got {type(data).__name__}.")
    given = {name for name, value in (("bayes", bayes), ("coefficient", coefficient),
                                      ("ci_prob", ci_prob), ("resampling", resampling),
                                      ("loo", loo))
             if value is not None}
    bayes = "off" if bayes is None else bayes
    if bayes not in BAYES_MODES:
        raise ValueError(f"bayes must be one of {', '.join(map(repr, BAYES_MODES))}, got "
                         f"{bayes!r}.")
    if loo is not None and not isinstance(loo, bool):
        raise ValueError(f"loo must be True or False, got {loo!r}.")
    if loo and bayes != "full":
        raise ValueError(f"loo=True compares Bayesian CFAs, which run with bayes='full'; "
                         f"got bayes={bayes!r}.")
    coefficient = "kendall" if coefficient is None else coefficient
    if coefficient not in COEFFICIENTS:
        raise ValueError(f"coefficient must be one of {', '.join(map(repr, COEFFICIENTS))}, "
                         f"got {coefficient!r}.")
    opts = resampling_options(resampling, n_jobs=1)
    if resampling is None or (isinstance(resampling, Mapping)
                              and "n_permutations" not in resampling):
        opts = opts.replace(n_permutations=opts.n_resamples)
    if opts.n_resamples < 10:
        raise ValueError(f"resampling: n_resamples must be >= 10, got {opts.n_resamples!r}.")
    ci_prob = check_ci_prob(CI_PROB if ci_prob is None else ci_prob)
    kinds = human_traits(data)
    if traits is None:
        chosen = list(kinds)
    else:
        chosen = [traits] if isinstance(traits, str) else [str(t) for t in traits]
        unknown = [t for t in chosen if t not in kinds]
        if unknown:
            raise ValueError(f"traits: {', '.join(map(repr, unknown))} not among the human "
                             f"traits of the data ({', '.join(map(repr, kinds)) or 'none'}).")
    by_key = {s.key: s for s in SECTIONS}
    if sections is None:
        chosen_sections = default_sections()
    else:
        chosen_sections = []
        for s in sections:
            if isinstance(s, Section):
                chosen_sections.append(s)
            elif s in by_key:
                chosen_sections.append(by_key[s])
            else:
                raise ValueError(f"sections: unknown section {s!r}; sections are "
                                 f"{', '.join(map(repr, by_key))}.")
    _check_options_used(given, chosen_sections)
    if budget is not None and (not isinstance(budget, int | float) or budget < 0):
        raise ValueError(f"budget must be a number of seconds >= 0 (0: no limit), got "
                         f"{budget!r}.")
    if budget is None:
        budget = default_budget(bayes)
    resamples_given = isinstance(resampling, ResamplingOptions) or (
        isinstance(resampling, Mapping) and "n_resamples" in resampling)
    the_plan = plan(data, chosen, [s.key for s in chosen_sections],
                    n_resamples=opts.n_resamples, n_permutations=opts.n_permutations,
                    budget=budget, resamples_given=resamples_given, bayes=bayes)
    opts = opts.replace(n_resamples=the_plan.n_resamples,
                        n_permutations=the_plan.n_permutations)
    if progress is None:
        progress = interactive()
    if progress:
        print(f"bayesmeta report: {the_plan.line()}", file=sys.stderr, flush=True)
    seed = resolve_seed(random_seed)
    src = source or str(data.attrs.get("path") or data.attrs.get("source") or "dataset")
    ctx = Context(traits=chosen, bayes=bayes, random_seed=seed, resampling=opts,
                  coefficient=coefficient, ci_prob=ci_prob, source=src,
                  reduced=list(the_plan.reduced), dp_measures=the_plan.dp_measures,
                  loo=bool(loo))
    runs = run_sections(data, ctx, chosen_sections, progress=progress)
    sizes = {str(k): int(v) for k, v in data.sizes.items()
             if k in ("system", "item", "rater", "trait", "metric", "run", "reference",
                      "lp")}
    rep = Report(runs, context=ctx, data_hash=data_hash(data), sizes=sizes, source=src)
    rep.budget_line = the_plan.line()
    return rep


def _check_options_used(given: set[str], sections: Sequence[Section]) -> None:
    """An option given to :func:`report` reaches at least one section of the run, or the
    call fails naming it (a section written elsewhere, ``options=None``, takes them all)."""
    if any(sec.options is None for sec in sections):
        return
    for name in sorted(given):
        if not any(name in sec.options for sec in sections):
            takers = [s.key for s in SECTIONS if s.options and name in s.options]
            raise ValueError(f"report(): option {name}= is taken by no section of this run "
                             f"({', '.join(repr(s.key) for s in sections) or 'none'}); "
                             f"sections that take it: {', '.join(map(repr, takers))}.")
