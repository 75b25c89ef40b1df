"""README's commands are the ones CI runs (the product card requires it)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```bash\n(.*?)```", text, flags=re.S)
    return [line.strip() for line in "\n".join(blocks[:2]).splitlines() if line.strip()]


def test_ci_runs_readme_install_and_test_commands():
    install, main_job, test = _readme_commands()[:3]
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    assert install.startswith("python -m pip install")
    assert test.startswith("python -m pytest")
    assert install in ci and main_job in ci and test in ci
    assert ci.index(install) < ci.index(test)
    assert "export BAYESMETA_REQUIRE_DATA=1" in ci
