"""bayesmeta: how far can you trust an evaluation metric or a panel of raters?

Classical measurement theory (reliability, validity, correlation measures) side by side
with Bayesian posteriors, for NLG evaluation. The public API is R-style::

    import bayesmeta as bm
    data = bm.datasets.summeval()
    bm.consistency(data)
    bm.mtmm(data)

Importing bayesmeta never imports PyMC; Bayesian models import it when they are built.
"""

from bayesmeta._version import __version__
from bayesmeta.cfa import cfa
from bayesmeta.classical.agreement import agreement
from bayesmeta.classical.concurrent import concurrent_validity
from bayesmeta.classical.corroboration import corroboration
from bayesmeta.classical.human_consistency import human_inconsistency
from bayesmeta.classical.kind_comparison import kind_comparison
from bayesmeta.classical.meta_correlation import meta_correlation
from bayesmeta.classical.metameasures import (
    discriminative_power,
    granularity,
    granularity_simulation,
    ranking_consistency,
)
from bayesmeta.classical.metric_comparison import compare_metrics, correlations
from bayesmeta.classical.perturbation import perturbation_detection
from bayesmeta.classical.pre_assessment import pre_assessment
from bayesmeta.classical.recommend import recommend_metric_set
from bayesmeta.classical.reference_choice import reference_choice
from bayesmeta.classical.reference_free import ks_score, metric_kinds
from bayesmeta.classical.reliability import (
    consistency,
    items_needed,
    rank_normalize,
    spearman_brown,
    stability,
)
from bayesmeta.classical.unit_tests import metric_unit_tests
from bayesmeta.classical.validity import mtmm
from bayesmeta.compare import compare
from bayesmeta.data import (
    MissingDataWarning,
    ReadWarning,
    data_quality,
    datasets,
    from_long,
    from_wide,
    missing_report,
    read_csv,
    read_report,
    validate,
)
from bayesmeta.metric_validity import (
    factor_mtmm,
    factor_validity,
    metric_residuals,
    metric_variance,
)
from bayesmeta.models.correlation import fit_correlation_model
from bayesmeta.models.decision_study import decision_study
from bayesmeta.models.rater import rater_bias
from bayesmeta.models.true_score import reliability
from bayesmeta.options import ResamplingOptions, SamplerOptions
from bayesmeta.report import report
from bayesmeta.results import Result, load
from bayesmeta.text.corruptions import corrupt

__all__ = [
    "MissingDataWarning",
    "ReadWarning",
    "ResamplingOptions",
    "Result",
    "SamplerOptions",
    "__version__",
    "agreement",
    "cfa",
    "compare",
    "compare_metrics",
    "concurrent_validity",
    "consistency",
    "correlations",
    "corroboration",
    "corrupt",
    "data_quality",
    "datasets",
    "decision_study",
    "discriminative_power",
    "factor_mtmm",
    "factor_validity",
    "fit_correlation_model",
    "from_long",
    "from_wide",
    "granularity",
    "granularity_simulation",
    "human_inconsistency",
    "items_needed",
    "kind_comparison",
    "ks_score",
    "load",
    "meta_correlation",
    "metric_kinds",
    "metric_residuals",
    "metric_unit_tests",
    "metric_variance",
    "missing_report",
    "mtmm",
    "perturbation_detection",
    "pre_assessment",
    "rank_normalize",
    "ranking_consistency",
    "rater_bias",
    "read_csv",
    "read_report",
    "recommend_metric_set",
    "reference_choice",
    "reliability",
    "report",
    "spearman_brown",
    "stability",
    "validate",
]
