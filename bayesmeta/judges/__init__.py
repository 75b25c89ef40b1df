"""LLM judges: can a judge replace the human annotators (the alt-test, and how many instances
it needs), and what do its scores say once debiased with a few human labels (PPI)."""

from bayesmeta.judges.alt_test import alt_test
from bayesmeta.judges.plan import plan_alt_test
from bayesmeta.judges.ppi import debiased_mean

__all__ = ["alt_test", "debiased_mean", "plan_alt_test"]
