"""Raters: severity and thresholds of each rater (many-facet ordinal model, PyMC imported
when it is built) and their classical counterparts."""

from bayesmeta.raters.model import rater_bias

__all__ = ["rater_bias"]
