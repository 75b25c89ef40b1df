"""Reference-free metrics (paper 002): metric kinds and the KS score (:mod:`.kinds`),
comparison of kinds, meta-correlation, perturbation detection, the pre-assessment planner,
the choice of references, and their plots."""

from bayesmeta.reference_free.kind_comparison import kind_comparison
from bayesmeta.reference_free.kinds import ks_score, metric_kinds
from bayesmeta.reference_free.meta_correlation import meta_correlation
from bayesmeta.reference_free.perturbation import perturbation_detection
from bayesmeta.reference_free.pre_assessment import pre_assessment
from bayesmeta.reference_free.reference_choice import reference_choice

__all__ = ["kind_comparison", "ks_score", "meta_correlation", "metric_kinds",
           "perturbation_detection", "pre_assessment", "reference_choice"]
