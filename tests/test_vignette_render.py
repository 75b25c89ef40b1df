"""Rendering a vignette (a jupytext percent script) to HTML: `render_vignette` and
`bayesmeta vignette`. Tiny synthetic scripts only; the real vignettes are rendered by
tests/test_vignettes.py."""

from __future__ import annotations

import base64
import os
import re
import sys
import textwrap

import pytest

from bayesmeta.cli import main
from bayesmeta.report.vignette import VignetteError, parse_cells, render_vignette
from bayesmeta.report.vignette import main as vignette_main

GOOD = textwrap.dedent('''\
    # %% [markdown]
    # # A tiny vignette
    # Text with <script>alert(1)</script> and **bold**.

    # %%
    import os
    import warnings

    import matplotlib.pyplot as plt

    print("OUT-1", __name__, os.getcwd())
    warnings.warn("careful-warning")

    # %% [markdown]
    # ## A plot

    # %%
    fig, ax = plt.subplots()
    ax.plot([1, 2, 3], [1, 4, 9])
    print("OUT-2 <b>bold?</b>")

    # %%
    print("OUT-3", fig is not None)
    ''')

BAD = textwrap.dedent('''\
    # %% [markdown]
    # Two cells; the second fails.

    # %%
    print("BEFORE")

    # %%
    x = 1
    raise ValueError("boom <x>")

    # %%
    print("NEVER-RUN")
    ''')


def _self_contained(html: str) -> None:
    """No external resource, no script: nothing is fetched or run when the page opens."""
    assert "http://" not in html and "https://" not in html
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*//""", html, re.I)
    assert "<link" not in html.lower() and "@import" not in html
    assert "<script" not in html.lower() and "<iframe" not in html.lower()


@pytest.fixture
def good(tmp_path):
    path = tmp_path / "good.py"
    path.write_text(GOOD)
    return path


@pytest.fixture
def bad(tmp_path):
    path = tmp_path / "bad.py"
    path.write_text(BAD)
    return path


def test_parse_cells_kinds_lines_and_markdown():
    cells = parse_cells(GOOD)
    assert [c.kind for c in cells] == ["markdown", "code", "markdown", "code", "code"]
    assert cells[0].source.splitlines()[0] == "# A tiny vignette"  # comment marks removed
    assert cells[0].line == 2
    assert cells[1].line == 6 and cells[1].source.startswith("import os")
    assert GOOD.splitlines()[cells[3].line - 1] == cells[3].source.splitlines()[0]
    # a jupytext YAML header is not a cell; code before the first marker is
    header = "# ---\n# jupyter:\n#   kernelspec: {}\n# ---\n\nx = 1\n# %%\ny = 2\n"
    cells = parse_cells(header)
    assert [(c.kind, c.source, c.line) for c in cells] == [("code", "x = 1", 6),
                                                           ("code", "y = 2", 8)]


def test_render_outputs_in_order_figure_escaped_self_contained(good, tmp_path):
    import matplotlib.pyplot as plt

    out = tmp_path / "page" / "good.html"
    main_module = sys.modules["__main__"]
    open_before = plt.get_fignums()  # figures other tests left open are not ours
    assert render_vignette(good, out) == out
    html = out.read_text()
    _self_contained(html)
    assert sys.modules["__main__"] is main_module and plt.get_fignums() == open_before
    # the vignette's own heading is the page title; markup in its text is shown as text
    assert "<title>A tiny vignette:" in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "<strong>bold</strong>" in html
    assert "OUT-2 &lt;b&gt;bold?&lt;/b&gt;" in html and "<b>bold?" not in html
    # run as a script, in the current directory; each cell's outputs in order, the figure
    # after its cell's printed text
    found = re.findall(r'<pre class="out (\w+)">(.*?)</pre>|<img class="plot"[^>]*'
                       r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', html, re.S)
    assert [(k, t.split()[0] if t else "png") for k, t, _ in found] == [
        ("stdout", "OUT-1"), ("stderr", f"{good}:12:"), ("stdout", "OUT-2"), ("", "png"),
        ("stdout", "OUT-3")]
    assert found[0][1] == f"OUT-1 __main__ {os.getcwd()}"
    assert "UserWarning: careful-warning" in found[1][1]
    png = base64.b64decode(found[3][2])
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 1000
    assert html.index("<h2>A plot</h2>") < html.index("fig, ax = plt.subplots()")
    assert 'id="vignette-ok"' in html and 'data-status="failed"' not in html


def test_failing_cell_shows_traceback_and_raises(bad, tmp_path):
    out = tmp_path / "bad.html"
    with pytest.raises(VignetteError, match=r"line 9\) failed: ValueError: boom") as info:
        render_vignette(bad, out)
    assert info.value.page == out and info.value.line == 9
    assert isinstance(info.value.__cause__, ValueError)
    html = out.read_text()
    _self_contained(html)
    assert "BEFORE" in html and "NEVER-RUN" not in html
    assert 'id="vignette-failed"' in html and 'data-status="failed"' in html
    tb = re.search(r'<pre class="error traceback">(.*?)</pre>', html, re.S).group(1)
    assert tb.startswith("Traceback (most recent call last):")
    assert f"{bad}&#34;, line 9, in &lt;module&gt;" in tb  # the file's own line number
    assert "vignette.py" not in tb  # no frame of the renderer
    assert tb.rstrip().endswith("ValueError: boom &lt;x&gt;")
    assert "1 later cell(s) were not run" in " ".join(html.split())


def test_cli_vignette(good, bad, tmp_path, capsys):
    assert main(["vignette", str(good)]) == 0  # default: beside the script
    assert good.with_suffix(".html").exists()
    assert str(good.with_suffix(".html").resolve()) in capsys.readouterr().out
    out = tmp_path / "x.html"
    assert main(["vignette", str(bad), "--out", str(out)]) == 1
    assert out.exists() and "ValueError: boom" in capsys.readouterr().err
    assert main(["vignette", str(tmp_path / "missing.py")]) == 2
    # python -m bayesmeta.report.vignette PATH [--out FILE]
    assert vignette_main([str(good), "--out", str(tmp_path / "m.html")]) == 0
    assert (tmp_path / "m.html").exists()


def test_syntax_error_cell_is_a_failed_cell(tmp_path):
    path = tmp_path / "syntax.py"
    path.write_text("# %%\nprint('OK-1')\n\n# %%\nx = 1\ndef broken(:\n    pass\n")
    with pytest.raises(VignetteError, match=r"cell 2 \(line 6\) failed: SyntaxError") as info:
        render_vignette(path, tmp_path / "syntax.html")
    html = info.value.page.read_text()
    assert "OK-1" in html and "SyntaxError" in html and 'data-status="failed"' in html
