"""Correlation measures of metric and human scores (paper 001): the 12 measures
(:mod:`.measures`), the resampling engine (:mod:`.resampling`), metric comparison
(:mod:`.comparison`), discriminative power, ranking consistency and granularity
(:mod:`.metameasures`), and the hierarchical bivariate model (:mod:`.model`, PyMC imported
when it is built)."""

from bayesmeta.correlation.comparison import compare_metrics, correlations
from bayesmeta.correlation.metameasures import (
    discriminative_power,
    granularity,
    granularity_simulation,
    ranking_consistency,
)
from bayesmeta.correlation.model import fit_correlation_model

__all__ = ["compare_metrics", "correlations", "discriminative_power", "fit_correlation_model",
           "granularity", "granularity_simulation", "ranking_consistency"]
