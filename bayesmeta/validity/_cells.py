"""The one cell vocabulary of the multitrait-multimethod table (``bm.mtmm``, of ratings and
metrics or of factor scores): Campbell & Fiske's (1959) block names in ``cell``, keyed by
MetricEval's labels (``evidence``)."""

from __future__ import annotations

#: Campbell & Fiske's names of the MTMM blocks, keyed by MetricEval's names.
CELLS = {
    "reliability": "reliability diagonal",
    "convergent": "validity diagonal",
    "divergent": "heterotrait-monomethod",
    "heterotrait-heteromethod": "heterotrait-heteromethod",
}

__all__ = ["CELLS"]
