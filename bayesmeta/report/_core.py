"""The report's document object and its section interface.

A section is a function ``section(data, context) -> SectionOutput | Skipped``. The report
runs each one, times it, and turns an exception into a *failed* section that shows the error
message instead of stopping the report. Rendering (HTML, text) is separate
(:mod:`bayesmeta.report._render`): computing and printing stay apart.
"""

from __future__ import annotations

import inspect
import sys
import time
import traceback
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayesmeta.options import ResamplingOptions
from bayesmeta.summaries import CI_PROB

__all__ = ["BAYES_MODES", "Context", "Finding", "Section", "SectionOutput", "SectionRun",
           "Skipped", "TableBlock", "run_sections"]

#: The ``bayes=`` settings of :func:`bayesmeta.report`.
BAYES_MODES = ("off", "fast", "full")

#: Convergence thresholds (Vehtari et al. 2021), the same as every printed footer.
RHAT_MAX = 1.01
ESS_MIN = 400


#: The report's options that a section may take (``Section.options``); an option given to
#: :func:`bayesmeta.report` that no section of the run takes is an error naming it.
OPTIONS = ("coefficient", "ci_prob", "resampling", "random_seed", "bayes", "loo")


@dataclass
class Context:
    """What every section gets besides the data: the report's settings.

    Attributes
    ----------
    traits : list of str
        The human traits analysed (default: every trait with ordinal ratings or continuous
        judgments).
    bayes : {"off", "fast", "full"}
        Whether Bayesian sections run, and with which sampler settings (``"fast"``: a
        preview with capped draws, stated on every table it produces).
    random_seed : int
        The seed of every resampling and sampler call (recorded in the provenance).
    resampling : ResamplingOptions
        The ``resampling=`` of every resampling analysis (correlation measures,
        discriminative power, ranking consistency, reference-free comparison).
    coefficient : str
        Correlation coefficient of MTMM, concurrent validity and the measures shown.
    ci_prob : float
        Probability of every interval.
    source : str
        How the data is named in the header.
    """

    traits: list[str]
    bayes: str = "off"
    random_seed: int = 0
    resampling: ResamplingOptions = field(default_factory=lambda: ResamplingOptions(n_jobs=1))
    coefficient: str = "kendall"
    ci_prob: float = CI_PROB
    source: str = ""
    #: Show progress bars (tqdm) inside long sections as well as per section.
    progress: bool = False
    #: What the budget reduced (shown on the page), e.g. the resamples.
    reduced: list[str] = field(default_factory=list)
    #: With ``bayes="full"``: also compare the CFA's trait factors with one general factor
    #: by LOO (a second Bayesian CFA).
    loo: bool = False
    #: The measures of discriminative power (the budget may leave out the global ones).
    dp_measures: str | tuple[str, ...] = "all"
    #: Fits shared by the sections of one report, keyed by what determines them (e.g. the
    #: WLSMV CFA of the ratings: the CFA section fits it, the metric-validity section reuses
    #: it; :func:`bayesmeta.report._panel_sections.wlsmv_cfa`), so no model is fitted twice.
    fits: dict[str, Any] = field(default_factory=dict)

    @property
    def n_resamples(self) -> int:
        """Resamples of the resampling analyses (for the provenance line)."""
        return int(self.resampling.n_resamples)

    @property
    def sampling(self) -> str | None:
        """The ``sampling=`` argument of Bayesian analyses (None when ``bayes="off"``)."""
        return None if self.bayes == "off" else self.bayes


@dataclass
class TableBlock:
    """One table of a section: a summary in the one table shape (or a plain frame) and what
    the reader needs to interpret it."""

    caption: str
    frame: pd.DataFrame
    notes: list[str] = field(default_factory=list)
    signature: str = ""
    preview: bool = False
    total_rows: int | None = None
    #: Shown only collapsed (``<details>``) and as CSV: a large companion table, e.g. the
    #: full P(beats) matrix beside its heatmap.
    collapsed: bool = False
    #: Sort the rows shown at the top by the estimate, best first (the full table keeps the
    #: result's order).
    rank: bool = False


@dataclass
class Finding:
    """One line of the page's opening answer, offered by a section: ``kind`` is one of
    ``"best"`` (the best metrics of a trait), ``"raters"`` (raters or judges that deviate,
    or a panel that disagrees), ``"quality"`` (a data-quality finding) or ``"limit"`` (what
    the data could not support); ``frame`` an optional small table shown with it."""

    kind: str
    text: str
    trait: str | None = None
    frame: pd.DataFrame | None = None


@dataclass
class SectionOutput:
    """What a section returns: tables, figures, a two-line reading, the method's doc."""

    title: str
    tables: list[TableBlock] = field(default_factory=list)
    figures: list[Any] = field(default_factory=list)
    reading: str = ""
    methods: list[Callable[..., Any] | str] = field(default_factory=list)
    results: list[Any] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: Lines for the opening answer (:class:`Finding`).
    findings: list[Finding] = field(default_factory=list)
    #: Why part of the section has no value (an estimate that cannot be computed); any
    #: reason makes the section "partial" instead of "ok".
    partial: list[str] = field(default_factory=list)


@dataclass
class Skipped:
    """A section whose inputs the data lacks, with the reason (shown in the report)."""

    reason: str


@dataclass
class Section:
    """A registered section: a key, a title and the function that computes it."""

    key: str
    title: str
    run: Callable[[xr.Dataset, Context], SectionOutput | Skipped]
    bayesian: bool = False
    #: The report options (:data:`OPTIONS`) the section passes to its analyses; None (a
    #: section written elsewhere) means any of them.
    options: tuple[str, ...] | None = None
    #: Whether the section reads a campaign of several language pairs (dim ``lp``); the
    #: others are skipped on such data, with the reason.
    language_pairs: bool = False
    #: A Bayesian section's compile-cache warm-up: a function ``(data, context)`` (an
    #: importable, picklable one) that reaches the section's first sampler call, which a
    #: second process runs inside :func:`bayesmeta.sampling.compile_only` while the report's
    #: earlier sections run (:mod:`bayesmeta.report._warm`): ``run`` itself where the first
    #: sampler call is the one to warm (the rater section), else a function that goes
    #: straight to it (the CFA's and metric validity's).
    warm: Callable[[xr.Dataset, Context], Any] | None = None


@dataclass
class SectionRun:
    """A section after it ran: status ``"ok"``, ``"partial"`` (some estimate could not be
    computed: ``partial`` says why), ``"skipped"`` or ``"failed"``."""

    key: str
    title: str
    status: str
    seconds: float
    output: SectionOutput | None = None
    reason: str = ""
    error: str = ""
    warnings: list[str] = field(default_factory=list)
    images: list[str] = field(default_factory=list)
    #: Per image: what its labels measure (``n_labels``, ``font_px``, ``label_px``: the
    #: smallest distance between neighbouring tick labels, in the PNG's pixels).
    image_info: list[dict[str, Any]] = field(default_factory=list)
    partial: list[str] = field(default_factory=list)


def interactive() -> bool:
    """Whether a person is watching: stderr is a terminal, or the code runs in a Jupyter
    kernel (where tqdm.auto draws a notebook widget)."""
    if getattr(sys.stderr, "isatty", lambda: False)():
        return True
    ipython = sys.modules.get("IPython")
    shell = getattr(ipython, "get_ipython", lambda: None)() if ipython else None
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


def _tqdm() -> Any:
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover - tqdm is a dependency
        return None
    return tqdm


class _Progress:
    """The report's progress: a tqdm bar (tqdm.auto: a widget in notebooks) with one step
    per section and the section's name when someone is watching; else, when enabled, one
    plain line per section on stderr (a log)."""

    def __init__(self, total: int, enabled: bool) -> None:
        self.enabled, self.bar = enabled, None
        tqdm = _tqdm() if enabled and interactive() else None
        if tqdm is not None:
            self.bar = tqdm(total=total, desc="bayesmeta report", unit="section",
                            file=sys.stderr, leave=True)

    def start(self, title: str) -> None:
        if self.bar is not None:
            self.bar.set_postfix_str(title)
        elif self.enabled:
            print(f"{title} ...", file=sys.stderr, flush=True)

    def done(self, line: str) -> None:
        if self.bar is not None:
            self.bar.write(line, file=sys.stderr)
            self.bar.update(1)
        elif self.enabled:
            print(line, file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def steps(context: Context, items: Sequence[Any], desc: str) -> Any:
    """The items of a section's loop (traits, ...), with a nested tqdm bar when the report
    shows bars (:attr:`Context.progress`) and the loop has more than one step."""
    tqdm = _tqdm() if context.progress and len(items) > 1 else None
    if tqdm is None:
        return items
    return tqdm(items, desc=desc, leave=False, position=1, file=sys.stderr)


def partial_reasons(out: SectionOutput) -> list[str]:
    """Why part of a section has no value (issue 21: no silent NaN): the section's own
    reasons, its results' notes of estimates that cannot be computed, and each table with
    rows whose every estimate column is NaN."""
    reasons = list(out.partial)
    seen: set[int] = set()
    for res in out.results:
        if id(res) in seen:
            continue
        seen.add(id(res))
        for note in getattr(res, "notes", None) or []:
            if ("cannot be computed" in note or "without a value" in note) and \
                    note not in reasons:
                reasons.append(str(note))
    for b in out.tables:
        cols = [c for c in ("classical", "mean") if c in b.frame.columns]
        if not cols or b.frame.empty:
            continue
        empty = b.frame[cols].isna().all(axis=1).to_numpy()
        if empty.any():
            rows = [" / ".join(map(str, i)) if isinstance(i, tuple) else str(i)
                    for i in b.frame.index[empty][:4]]
            more = f", ... ({int(empty.sum()) - 4} more)" if empty.sum() > 4 else ""
            reasons.append(f"{int(empty.sum())} of {len(b.frame)} rows of '{b.caption}' have "
                           f"no estimate (NaN): {', '.join(rows)}{more}.")
    return reasons


def lp_reason(data: xr.Dataset) -> str:
    """Why a section of one language pair skips a campaign of several (dim ``lp``)."""
    return (f"the data spans {data.sizes['lp']} language pairs (dim 'lp') and this section "
            f"reads one: report one pair with bm.report(bm.split_language_pairs(data)[lp])")


def run_sections(data: xr.Dataset, context: Context, sections: Sequence[Section], *,
                 progress: bool = False) -> list[SectionRun]:
    """Run each section, timing it; an exception becomes a failed section, a section with
    estimates that cannot be computed is "partial" (with the reasons)."""
    import matplotlib

    from bayesmeta.report._warm import Warmer

    if matplotlib.get_backend().lower() not in ("agg", "module://matplotlib_inline.backend_inline"):
        matplotlib.use("Agg")

    runs = []
    n = len(sections)
    bar = _Progress(n, progress)
    context.progress = bar.bar is not None
    warmer = None
    try:
        warmer = Warmer.start(data, context, sections) if "lp" not in data.dims else None
        for k, sec in enumerate(sections, 1):
            bar.start(f"[{k}/{n}] {sec.title}")
            start = time.perf_counter()
            if warmer is not None:
                warmer.wait(sec.key)
            run = _run_one(data, context, sec, start)  # its seconds count the wait
            runs.append(run)
            tail = {"ok": "done",
                    "partial": f"partial ({len(run.partial)} reason(s) on the page)",
                    "skipped": f"skipped ({run.reason})",
                    "failed": f"FAILED ({run.error})"}[run.status]
            bar.done(f"[{k}/{n}] {sec.title}: {tail} in {run.seconds:.1f} s")
    finally:
        if warmer is not None:
            warmer.stop()
    bar.close()
    return runs


def _run_one(data: xr.Dataset, context: Context, sec: Section, start: float) -> SectionRun:
    """One section, timed from ``start`` (``time.perf_counter()``), its warnings collected;
    an exception becomes a failed run."""
    from bayesmeta.report._layout import figure_png

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = (Skipped(lp_reason(data)) if "lp" in data.dims
                   and not sec.language_pairs else sec.run(data, context))
            pngs = [figure_png(f) for f in (out.figures if isinstance(
                out, SectionOutput) else [])]
        except Exception as err:  # a failing section must not stop the report
            tb = traceback.extract_tb(err.__traceback__)
            where = f" (at {Path(tb[-1].filename).name}:{tb[-1].lineno})" if tb else ""
            run = SectionRun(sec.key, sec.title, "failed", time.perf_counter() - start,
                             error=f"{type(err).__name__}: {err}{where}")
            import matplotlib.pyplot as plt

            plt.close("all")
        else:
            secs = time.perf_counter() - start
            if isinstance(out, Skipped):
                run = SectionRun(sec.key, sec.title, "skipped", secs, reason=out.reason)
            else:
                why = partial_reasons(out)
                run = SectionRun(sec.key, sec.title, "partial" if why else "ok", secs,
                                 output=out, images=[u for u, _ in pngs],
                                 image_info=[i for _, i in pngs], partial=why)
    seen: list[str] = []
    for w in caught:
        text = f"{w.category.__name__}: {w.message}"
        if text not in seen:
            seen.append(text)
    run.warnings = seen
    return run


def convergence_problems(runs: Sequence[SectionRun]) -> pd.DataFrame:
    """Rows of MCMC summaries with ``r_hat > 1.01`` or ``ess_bulk < 400``, and fits with
    divergent transitions, once per result: columns ``section``, ``table``, ``row``,
    ``problem``, ``r_hat``, ``ess_bulk``, ``divergences``."""
    rows = []
    for run in runs:
        if run.output is None:
            continue
        seen: set[int] = set()
        for res in run.output.results:
            if id(res) in seen or not hasattr(res, "summary"):
                continue
            seen.add(id(res))
            title = str(getattr(res, "title", ""))
            t = res.summary()
            if "r_hat" in t.columns:
                ess = t["ess_bulk"] if "ess_bulk" in t.columns else pd.Series(np.nan, t.index)
                bad = ((t["r_hat"] > RHAT_MAX) | (ess < ESS_MIN)).to_numpy()
                for idx, r_hat, e in zip(t.index[bad], t["r_hat"][bad], ess[bad], strict=True):
                    what = []
                    if r_hat > RHAT_MAX:
                        what.append(f"r_hat {r_hat:.3f} > {RHAT_MAX}")
                    if e < ESS_MIN:
                        what.append(f"ess_bulk {e:.0f} < {ESS_MIN}")
                    parts = idx if isinstance(idx, tuple) else (idx,)
                    label = " / ".join(str(v) for v in parts if str(v) != "")
                    rows.append((run.title, title, label, "; ".join(what), float(r_hat),
                                 float(e), 0))
            idata = getattr(res, "idata", None)
            stats = getattr(idata, "sample_stats", None) if idata is not None else None
            if stats is not None and "diverging" in stats:
                n_div = int(np.asarray(stats["diverging"]).sum())
                if n_div:
                    rows.append((run.title, title, "", f"{n_div} divergent transitions",
                                 np.nan, np.nan, n_div))
    return pd.DataFrame(rows, columns=["section", "table", "row", "problem", "r_hat",
                                       "ess_bulk", "divergences"])


def convergence_by_table(problems: pd.DataFrame) -> list[dict[str, Any]]:
    """The convergence problems grouped by result: rows flagged, worst R-hat, lowest bulk
    ESS, divergences and a few row labels."""
    out = []
    for (section, table), g in problems.groupby(["section", "table"], sort=False):
        rows = [r for r in g["row"] if r]
        out.append({
            "section": section, "table": table, "n_rows": len(rows),
            "worst_r_hat": "" if g["r_hat"].isna().all() else f"{g['r_hat'].max():.3f}",
            "min_ess": "" if g["ess_bulk"].isna().all() else f"{g['ess_bulk'].min():.0f}",
            "divergences": int(g["divergences"].sum()),
            "examples": ", ".join(rows[:4]) + (f", ... ({len(rows) - 4} more)"
                                               if len(rows) > 4 else ""),
        })
    return out


def _doc_summary(obj: Callable[..., Any] | str) -> tuple[str, str]:
    """(name, first paragraph of the docstring) of a method, or (card path, "")."""
    if isinstance(obj, str):
        return obj, ""
    name = f"{obj.__module__}.{obj.__qualname__}"
    if name.startswith("bayesmeta.") and obj.__name__ in _public_names():
        name = f"bayesmeta.{obj.__name__}"
    doc = inspect.getdoc(obj) or ""
    return name, doc.split("\n\n")[0].replace("\n", " ")


def _public_names() -> set[str]:
    """The names of the public API (read from the loaded package: the report never imports
    the package above it)."""
    return set(getattr(sys.modules.get("bayesmeta"), "__all__", ()))
