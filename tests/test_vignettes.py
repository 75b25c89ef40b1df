"""The vignettes are executable documents: each runs to the end on the shared data."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

VIGNETTES = sorted((Path(__file__).resolve().parents[1] / "vignettes").glob("*.py"))


@pytest.mark.parametrize("path", VIGNETTES, ids=[p.stem for p in VIGNETTES])
def test_vignette_runs(path, summeval, capsys):
    runpy.run_path(str(path), run_name="__main__")
    assert capsys.readouterr().out
