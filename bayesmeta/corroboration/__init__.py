"""Corroboration with heterogeneous metrics (paper 003): reliability, sensitivity and gain of
metric sets (:mod:`.classical`, on :mod:`.heterogeneity`), the recommender, and plots."""

from bayesmeta.corroboration.classical import corroboration
from bayesmeta.corroboration.recommend import recommend_metric_set

__all__ = ["corroboration", "recommend_metric_set"]
