"""Metric unit tests (paper 004): pass rules and pass rates of metrics on corrupted texts
(:mod:`.classical`, :mod:`.pass_rates`) and the consistency of human judgments of them."""

from bayesmeta.unit_tests.classical import metric_unit_tests
from bayesmeta.unit_tests.human_consistency import human_inconsistency

__all__ = ["human_inconsistency", "metric_unit_tests"]
