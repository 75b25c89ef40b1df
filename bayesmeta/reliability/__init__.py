"""Reliability: how consistent and stable are a metric's (or a panel's) system scores?

Classical: :mod:`.classical` (split-half consistency, test-retest stability, SEM,
Spearman-Brown) and :mod:`.generalizability` (G and D studies). Bayesian: the true-score
model (:mod:`.true_score`, PyMC imported when it is built) and its decision study.
"""

from bayesmeta.reliability.classical import (
    consistency,
    items_needed,
    rank_normalize,
    spearman_brown,
    stability,
)
from bayesmeta.reliability.d_study import decision_study
from bayesmeta.reliability.true_score import reliability

__all__ = ["consistency", "decision_study", "items_needed", "rank_normalize", "reliability",
           "spearman_brown", "stability"]
