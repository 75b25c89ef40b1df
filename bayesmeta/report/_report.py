"""The :class:`Report` object: the runs of the sections, their convergence problems and
provenance; rendered by :mod:`bayesmeta.report._render`."""

from __future__ import annotations

import dataclasses
import datetime as _dt
from pathlib import Path

from bayesmeta._version import __version__
from bayesmeta.report._core import Context, SectionRun, convergence_problems
from bayesmeta.report._render import render_html


class Report:
    """The uncertainty-aware metric report: sections, their tables and plots, the
    convergence problems and the provenance. Made by :func:`bayesmeta.report`.

    ``save(path)`` writes one self-contained HTML file; in Jupyter the report displays
    inline; ``text()`` is a short plain-text summary; ``str(report)`` is the same.
    """

    def __init__(self, runs: list[SectionRun], *, context: Context, data_hash: str,
                 sizes: dict[str, int], source: str, title: str = "bayesmeta report") -> None:
        self.runs = runs
        self.context = context
        self.title = title
        self.source = source
        self.sizes = dict(sizes)
        self.created = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
        self.provenance = {
            "bayesmeta": __version__,
            "data_hash": data_hash,
            "random_seed": int(context.random_seed),
            "bayes": context.bayes,
            "n_resamples": int(context.n_resamples),
            "ci_prob": float(context.ci_prob),
        }
        if context.bayes != "off":
            from bayesmeta.options import SamplerOptions

            opts = SamplerOptions.coerce(context.bayes).resolve()
            self.provenance["sampler"] = {k: v for k, v in dataclasses.asdict(opts).items()
                                          if v is not None}
        self.convergence = convergence_problems(runs)
        #: The budget's estimate, as one line (set by :func:`bayesmeta.report`).
        self.budget_line = "none"

    # ------------------------------------------------------------------ access
    def section(self, key: str) -> SectionRun:
        """The section run with this key (``"data"``, ``"reliability"``, ...)."""
        for run in self.runs:
            if run.key == key:
                return run
        raise KeyError(f"no section {key!r}; sections are "
                       f"{', '.join(repr(r.key) for r in self.runs)}.")

    def signature(self) -> str:
        """The provenance as one line (as sacrebleu and :meth:`Result.signature` do)."""
        p = self.provenance
        parts = [f"bayesmeta:{p['bayesmeta']}", f"data:{p['data_hash']}",
                 f"seed:{p['random_seed']}", f"bayes:{p['bayes']}",
                 f"resamples:{p['n_resamples']}", f"ci:{p['ci_prob']:g}"]
        if "sampler" in p:
            s = p["sampler"]
            parts.append(f"sampler:{s.get('sampler')}-{s.get('chains')}x{s.get('draws')}"
                         f"+{s.get('tune')}" + ("-fast" if s.get("fast") else ""))
        return "|".join(parts)

    # ------------------------------------------------------------------ output
    def html(self, *, standalone: bool = True) -> str:
        """The report as HTML: a whole self-contained page, or (``standalone=False``) a
        fragment for Jupyter."""
        return render_html(self, standalone=standalone)

    def save(self, path: str | Path) -> Path:
        """Write the self-contained HTML file; returns its path."""
        path = Path(path)
        path.write_text(self.html(), encoding="utf-8")
        return path

    def _repr_html_(self) -> str:
        return self.html(standalone=False)

    def text(self) -> str:
        """A short plain-text summary: data, settings, each section's status and reading,
        convergence problems."""
        sizes = " x ".join(f"{v} {k}{'s' if v != 1 else ''}" for k, v in self.sizes.items())
        lines = [f"{self.title}: {self.source}", f"  data: {sizes}",
                 f"  signature: {self.signature()}"]
        if self.context.bayes == "fast":
            lines.append("  --bayes fast: a preview with few draws; do not report its numbers.")
        n_bad = len(self.convergence)
        lines.append("  convergence: " + ("no problems" if n_bad == 0 else
                                          f"{n_bad} problem(s) flagged at the top of the report"))
        from bayesmeta.report._answer import build_answer

        answer = build_answer(self)
        if answer["best"] or answer["reduced"]:
            lines.append("")
            lines += [f"  {f.text}" for f in answer["best"]]
            lines += [f"  budget: {r}" for r in answer["reduced"]]
        lines.append("")
        width = max(len(r.title) for r in self.runs) if self.runs else 0
        for run in self.runs:
            head = f"  {run.title:<{width}}  {run.status:<7} {run.seconds:6.1f} s"
            if run.status in ("ok", "partial") and run.output is not None and \
                    run.output.reading:
                first = run.output.reading.split("\n")[0]
                lines.append(f"{head}  {first}")
            elif run.status == "skipped":
                lines.append(f"{head}  {run.reason}")
            elif run.status == "failed":
                lines.append(f"{head}  {run.error}")
            else:
                lines.append(head)
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.text()

    def __repr__(self) -> str:
        counts = {s: sum(r.status == s for r in self.runs)
                  for s in ("ok", "partial", "skipped", "failed")}
        return (f"<Report: {self.source} ({counts['ok']} sections, {counts['partial']} "
                f"partial, {counts['skipped']} skipped, {counts['failed']} failed)>")
