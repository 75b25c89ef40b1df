"""Shared fixtures. Real-data tests read the SummEval files through BAYESMETA_DATA
(default ../shared/data beside the repo). With BAYESMETA_REQUIRE_DATA=1 (as in CI) a
missing file fails the run; otherwise such tests are skipped with the reason."""

from __future__ import annotations

import os
import tempfile

import pytest

# tests never write outside temporary folders: the download/scoring cache (normally
# ~/.cache/bayesmeta) and numba's on-disk cache go to a per-run temporary folder
_TMP_CACHE = tempfile.mkdtemp(prefix="bayesmeta-test-cache-")
os.environ.setdefault("BAYESMETA_CACHE", _TMP_CACHE)

import bayesmeta as bm  # noqa: E402  (after the cache folder is set)


def _require_data() -> bool:
    return os.environ.get("BAYESMETA_REQUIRE_DATA", "") not in ("", "0", "false", "False")


@pytest.fixture(scope="session")
def summeval():
    """The SummEval dataset (17 systems x 100 items, 3 experts x 4 traits, 43 metrics, 2 runs)."""
    try:
        folder = bm.datasets.find_summeval(download=False)
    except FileNotFoundError as err:
        if _require_data():
            pytest.fail(f"BAYESMETA_REQUIRE_DATA is set but the SummEval data is missing: {err}")
        pytest.skip(f"SummEval data not found (set BAYESMETA_DATA): {err}")
    return bm.datasets.summeval(folder)


@pytest.fixture(scope="session")
def simulated():
    """The built-in simulated SummEval-shaped dataset (seed 0)."""
    return bm.datasets.simulated(random_seed=0)
