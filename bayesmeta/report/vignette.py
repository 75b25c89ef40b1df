"""Render a vignette (a jupytext percent script) to one self-contained HTML page.

A vignette is a Python script whose cells start with ``# %%``; a ``# %% [markdown]`` cell
holds Markdown as comment lines (``# text``). :func:`render_vignette` runs the code cells in
order in one namespace, as ``python vignette.py`` would (``__name__ == "__main__"``, the
working directory unchanged), and writes a page with each cell's Markdown, its code, what it
printed (stdout, stderr and warnings, in the order they came) and the matplotlib figures it
made (Agg backend, inline PNG). The page is made with the report's page skeleton and
stylesheet (:mod:`bayesmeta.report._template`): Jinja2 with autoescaping, no script, no
external resource, print-friendly. Markdown is rendered by markdown-it-py with raw HTML
off, so markup written in a vignette's text is shown, not executed.

A cell that raises stops the run: the page shows that cell's traceback and says how many
cells were not run, and :func:`render_vignette` raises :class:`VignetteError` after writing
it, so a CI job that renders the vignettes fails.

Command line: ``bayesmeta vignette vignettes/paper000_measurement_theory.py [--out FILE]``
or ``python -m bayesmeta.report.vignette PATH [--out FILE]``.
"""

from __future__ import annotations

import argparse
import base64
import builtins
import io
import platform
import re
import sys
import time
import traceback
import types
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["Cell", "VignetteError", "parse_cells", "render_vignette"]

_MARKER = re.compile(r"^#\s?%%(?P<rest>.*)$")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
#: Characters kept of one output block (stdout or stderr of one cell); the rest is cut.
MAX_OUTPUT = 200_000
#: Resolution of the embedded figures.
FIGURE_DPI = 100


class VignetteError(RuntimeError):
    """A vignette cell raised; the page with its traceback was written to :attr:`page`."""

    def __init__(self, message: str, page: Path, cell: int, line: int) -> None:
        super().__init__(message)
        self.page = page
        self.cell = cell
        self.line = line


@dataclass
class Cell:
    """One cell of a percent script: ``kind`` is ``"code"``, ``"markdown"`` or ``"raw"``;
    ``source`` its text (Markdown without the comment marks); ``line`` the 1-based line of
    the file where ``source`` starts."""

    kind: str
    source: str
    line: int
    outputs: list[dict[str, Any]] = field(default_factory=list)
    status: str = "pending"
    error: str = ""
    seconds: float = 0.0
    exception: BaseException | None = field(default=None, repr=False)


def _uncomment(line: str) -> str:
    if line.startswith("# "):
        return line[2:]
    if line.startswith("#"):
        return line[1:]
    return line


def parse_cells(text: str) -> list[Cell]:
    """The cells of a jupytext percent script, in order; empty cells are dropped.

    Lines before the first ``# %%`` form a code cell (a jupytext YAML header, ``# ---`` ...
    ``# ---``, is skipped). A marker containing ``[markdown]`` or ``[md]`` starts a Markdown
    cell, ``[raw]`` a raw cell (shown, not run); any other marker a code cell.
    """
    lines = text.splitlines()
    blocks: list[tuple[str, int, list[str]]] = []
    kind, start, body = "code", 1, []
    for i, line in enumerate(lines, start=1):
        m = _MARKER.match(line)
        if m:
            blocks.append((kind, start, body))
            rest = m.group("rest")
            kind = ("markdown" if re.search(r"\[(markdown|md)\]", rest)
                    else "raw" if "[raw]" in rest else "code")
            start, body = i + 1, []
        else:
            body.append(line)
    blocks.append((kind, start, body))
    if blocks and blocks[0][2] and blocks[0][2][0].strip() == "# ---":  # jupytext header
        head = blocks[0][2]
        end = next((k for k in range(1, len(head)) if head[k].strip() == "# ---"), None)
        if end is not None:
            blocks[0] = ("code", blocks[0][1] + end + 1, head[end + 1:])
    cells = []
    for kind, start, body in blocks:
        if kind == "markdown":
            body = [_uncomment(ln) for ln in body]
        while body and not body[0].strip():
            body, start = body[1:], start + 1
        while body and not body[-1].strip():
            body = body[:-1]
        if body:
            cells.append(Cell(kind, "\n".join(body), start))
    return cells


def _markdown(text: str) -> str:
    from markdown_it import MarkdownIt

    # raw HTML off: a vignette's text is shown as text; no images, so no external resource
    md = MarkdownIt("commonmark", {"html": False}).enable("table").disable("image")
    return md.render(text)


class _Stream(io.TextIOBase):
    """A stand-in for sys.stdout / sys.stderr that appends to the cell's ordered outputs."""

    def __init__(self, kind: str, chunks: list[list[str]]) -> None:
        self.kind = kind
        self.chunks = chunks

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def write(self, s: str) -> int:
        if s:
            if self.chunks and self.chunks[-1][0] == self.kind:
                self.chunks[-1][1] += s
            else:
                self.chunks.append([self.kind, s])
        return len(s)


def _clean(text: str) -> str:
    """Output as a terminal would leave it: colour codes dropped, and of a line rewritten
    with carriage returns (a progress bar) only its last state kept."""
    text = _ANSI.sub("", text)
    lines = []
    for ln in text.split("\n"):
        ln = ln.rstrip("\r")
        lines.append(ln.rsplit("\r", 1)[-1])
    text = "\n".join(lines).rstrip("\n")
    if len(text) > MAX_OUTPUT:
        text = text[:MAX_OUTPUT] + f"\n... ({len(text) - MAX_OUTPUT} more characters cut)"
    return text


def _figures(before: set[int]) -> list[str]:
    """PNG data URIs of the pyplot figures opened since ``before``; they are closed."""
    if "matplotlib.pyplot" not in sys.modules:
        return []
    import matplotlib.pyplot as plt

    uris = []
    for num in plt.get_fignums():
        if num in before:
            continue
        fig = plt.figure(num)
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=FIGURE_DPI, bbox_inches="tight")
        plt.close(fig)
        uris.append("data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii"))
    return uris


def _traceback(err: BaseException, skip: str) -> str:
    """The traceback of ``err`` without the frames of this module (the exec call)."""
    tb = err.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename == skip:
        tb = tb.tb_next
    return "".join(traceback.format_exception(type(err), err, tb)).rstrip("\n")


def _error_line(err: BaseException, path: Path, default: int) -> int:
    """The line of the vignette where ``err`` was raised (its innermost frame in the file)."""
    if isinstance(err, SyntaxError) and err.filename == str(path) and err.lineno:
        return err.lineno
    line, tb = default, err.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == str(path):
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def _run(cells: list[Cell], path: Path, progress: bool) -> Cell | None:
    """Run the code cells in order in one ``__main__`` namespace; the failing cell or None."""
    import matplotlib

    matplotlib.use("Agg")
    before = set()
    if "matplotlib.pyplot" in sys.modules:
        before = set(sys.modules["matplotlib.pyplot"].get_fignums())
    module = types.ModuleType("__main__")
    module.__file__ = str(path)
    module.__dict__["__builtins__"] = builtins
    saved_main = sys.modules.get("__main__")
    code_cells = [c for c in cells if c.kind == "code"]
    sys.modules["__main__"] = module  # as runpy: functions defined in a cell can be pickled
    try:
        for k, cell in enumerate(code_cells, start=1):
            if progress:
                print(f"[{k}/{len(code_cells)}] line {cell.line} ...", file=sys.stderr,
                      flush=True)
            chunks: list[list[str]] = []
            out, err = _Stream("stdout", chunks), _Stream("stderr", chunks)
            start = time.perf_counter()
            failure, stop = None, False
            saved = sys.stdout, sys.stderr

            def show(message, category, filename, lineno, file=None, line=None, _err=err):
                _err.write(warnings.formatwarning(message, category, filename, lineno, line))

            with warnings.catch_warnings():  # the caller's filters, shown on the page
                warnings.filterwarnings("ignore", message=".*non-interactive.*cannot be shown")
                warnings.showwarning = show
                sys.stdout, sys.stderr = out, err
                try:
                    # padded so that line numbers in a traceback are the file's
                    code = compile("\n" * (cell.line - 1) + cell.source, str(path), "exec",
                                   dont_inherit=True)
                    exec(code, module.__dict__)
                except (Exception, SystemExit) as exc:  # shown on the page
                    if isinstance(exc, SystemExit) and exc.code in (None, 0):
                        stop = True  # sys.exit(0): the script ends there, successfully
                    else:
                        failure = exc
                finally:
                    sys.stdout, sys.stderr = saved
            cell.seconds = time.perf_counter() - start
            cell.outputs = [{"kind": kind, "text": _clean(text)} for kind, text in chunks
                            if _clean(text)]
            cell.outputs += [{"kind": "figure", "data": uri, "index": i}
                             for i, uri in enumerate(_figures(before), start=1)]
            if failure is not None:
                cell.status, cell.error = "failed", _traceback(failure, __file__)
                cell.exception = failure
                return cell
            cell.status = "ok"
            if stop:
                break
    finally:
        if saved_main is not None:
            sys.modules["__main__"] = saved_main
    return None


def render_vignette(path: str | Path, out: str | Path | None = None, *,
                    progress: bool = False) -> Path:
    """Run a vignette and write it as one self-contained HTML page.

    Parameters
    ----------
    path : str or Path
        A jupytext percent script (cells start with ``# %%``; ``# %% [markdown]`` cells hold
        Markdown as ``# text`` lines).
    out : str or Path, optional
        The HTML file to write (default: beside the script, with the suffix ``.html``).
    progress : bool
        One line per code cell on stderr as it starts.

    Returns
    -------
    Path
        The page written.

    Raises
    ------
    VignetteError
        A cell raised: the page (written) shows its traceback; nothing after it was run.

    Notes
    -----
    The cells run in this process, in one namespace with ``__name__ == "__main__"``, in
    the current working directory, with matplotlib switched to the Agg backend. Figures
    open at the end of a cell are embedded as PNG and closed (as Jupyter's inline backend
    does), so a later cell that draws on the same figure does not show it again.
    """
    from markupsafe import Markup

    from bayesmeta._version import __version__
    from bayesmeta.report._render import page_environment
    from bayesmeta.report._template import CSS, VIGNETTE_CSS, VIGNETTE_TEMPLATE

    path = Path(path)
    text = path.read_text(encoding="utf-8")
    out = path.with_suffix(".html") if out is None else Path(out)
    cells = parse_cells(text)
    started = time.perf_counter()
    failed = _run(cells, path, progress)
    seconds = time.perf_counter() - started
    pending = next((i for i, c in enumerate(cells) if c.kind == "code" and c.status ==
                    "pending"), None)
    if failed is not None:  # nothing after the failing cell is shown
        cells = cells[:cells.index(failed) + 1]
    elif pending is not None:  # sys.exit(0) ended the script
        cells = cells[:pending]
    numbers = {id(c): i for i, c in enumerate(cells, start=1)}
    title, show_title = path.stem, True
    if cells and cells[0].kind == "markdown":
        h1 = re.match(r"#\s+(.+)$", cells[0].source, re.M)
        if h1:  # the page's title is the vignette's own first heading, not repeated
            title, show_title = h1.group(1).strip(), False
    views = []
    for c in cells:
        view: dict[str, Any] = {"kind": c.kind, "number": numbers[id(c)], "line": c.line,
                                "source": c.source, "status": c.status, "error": c.error,
                                "outputs": c.outputs, "seconds": f"{c.seconds:.1f}"}
        if c.kind == "markdown":
            view["html"] = Markup(_markdown(c.source))
        views.append(view)
    n_code = sum(c.kind == "code" for c in parse_cells(text))
    failed_view = None
    if failed is not None:
        exc = failed.exception
        assert exc is not None
        ran = sum(c.kind == "code" for c in cells)
        failed_view = {"number": numbers[id(failed)],
                       "line": _error_line(exc, path, failed.line),
                       "summary": "".join(traceback.format_exception_only(type(exc), exc))
                       .strip().splitlines()[-1],
                       "not_run": n_code - ran}
    html = page_environment().from_string(VIGNETTE_TEMPLATE).render(
        standalone=True, css=CSS + VIGNETTE_CSS, title=title, show_title=show_title,
        source=str(path), cells=views, failed=failed_view, n_code=n_code,
        seconds=f"{seconds:.1f}", version=__version__,
        python=platform.python_version(),
        created=time.strftime("%Y-%m-%d %H:%M:%S %Z"))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(html, encoding="utf-8")
    if failed_view is not None:
        raise VignetteError(
            f"{path}: cell {failed_view['number']} (line {failed_view['line']}) failed: "
            f"{failed_view['summary']}; the page with the traceback is {out}",
            out, failed_view["number"], failed_view["line"]) from exc
    return out


def add_vignette_parser(sub: Any) -> None:
    """The ``vignette`` subcommand (render a vignette to HTML)."""
    vig = sub.add_parser("vignette", help="run a vignette (jupytext percent script) and write "
                                          "it as a self-contained HTML page")
    vig.add_argument("path", metavar="PATH", help="the vignette, e.g. "
                                                  "vignettes/paper000_measurement_theory.py")
    vig.add_argument("--out", default=None, metavar="FILE",
                     help="HTML file to write (default: beside PATH, suffix .html)")


def vignette_main(args: argparse.Namespace) -> int:
    """Run ``bayesmeta vignette``: one progress line per cell on stderr, then where the page
    is; exit status 1 when a cell failed (the page, with the traceback, is still written)."""
    try:
        page = render_vignette(args.path, args.out, progress=True)
    except VignetteError as err:
        print(f"bayesmeta: error: {err}", file=sys.stderr)
        return 1
    except FileNotFoundError as err:
        print(f"bayesmeta: error: {err}", file=sys.stderr)
        return 2
    print(f"vignette rendered to {page.resolve()}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m bayesmeta.report.vignette PATH [--out FILE]``."""
    parser = argparse.ArgumentParser(prog="python -m bayesmeta.report.vignette",
                                     description=__doc__.split("\n\n")[0])
    add_vignette_parser(types.SimpleNamespace(add_parser=lambda name, **kw: parser))
    return vignette_main(parser.parse_args(argv))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
