"""The vignettes are executable documents: each runs to the end on the shared data and
renders to HTML (one run does both: `render_vignette` executes the cells and writes the
page; a failing cell or assertion fails the test with the vignette's traceback)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bayesmeta.report.vignette import render_vignette

VIGNETTES = sorted((Path(__file__).resolve().parents[1] / "vignettes").glob("*.py"))


@pytest.mark.parametrize("path", VIGNETTES, ids=[p.stem for p in VIGNETTES])
def test_vignette_runs_and_renders(path, summeval, tmp_path):
    page = render_vignette(path, tmp_path / f"{path.stem}.html")
    html = page.read_text()
    assert 'id="vignette-ok"' in html and 'data-status="failed"' not in html
    assert '<pre class="out stdout">' in html  # it printed its reproduction
