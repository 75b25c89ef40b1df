"""LLM judges: can a judge replace the human annotators? (the alt-test)."""

from bayesmeta.judges.alt_test import alt_test

__all__ = ["alt_test"]
