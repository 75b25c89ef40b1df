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
from bayesmeta.agreement import (
    agreement,
    agreement_coefficients,
    compare_agreement,
    omega_ordinal,
)
from bayesmeta.compare import compare
from bayesmeta.correlation import (
    compare_metrics,
    correlations,
    discriminative_power,
    fit_correlation_model,
    granularity,
    granularity_simulation,
    ranking_consistency,
)
from bayesmeta.corroboration import corroboration, recommend_metric_set
from bayesmeta.data import (
    MissingDataWarning,
    ReadWarning,
    add_judges,
    data_quality,
    datasets,
    from_annotations,
    from_long,
    from_wide,
    missing_report,
    read_annotations,
    read_csv,
    read_mtme,
    read_report,
    split_language_pairs,
    validate,
)
from bayesmeta.judges import alt_test, debiased_mean, plan_alt_test
from bayesmeta.options import ResamplingOptions, SamplerOptions
from bayesmeta.raters import rater_bias
from bayesmeta.reference_free import (
    kind_comparison,
    ks_score,
    meta_correlation,
    metric_kinds,
    perturbation_detection,
    pre_assessment,
    reference_choice,
)
from bayesmeta.reliability import (
    consistency,
    decision_study,
    items_needed,
    rank_normalize,
    reliability,
    spearman_brown,
    stability,
)
from bayesmeta.report import report
from bayesmeta.results import Result, load
from bayesmeta.text.corruptions import corrupt
from bayesmeta.unit_tests import human_inconsistency, metric_unit_tests
from bayesmeta.validity import (
    cfa,
    concurrent_validity,
    factor_validity,
    metric_residuals,
    metric_variance,
    mtmm,
)
from bayesmeta.wmt import (
    kendall_like,
    pairwise_difference_pearson,
    significance_clusters,
    soft_pairwise_accuracy,
    williams_test,
    wmt_ranking,
    wmt_statistics,
)

__all__ = [
    "MissingDataWarning",
    "ReadWarning",
    "ResamplingOptions",
    "Result",
    "SamplerOptions",
    "__version__",
    "add_judges",
    "agreement",
    "agreement_coefficients",
    "alt_test",
    "cfa",
    "compare",
    "compare_agreement",
    "compare_metrics",
    "concurrent_validity",
    "consistency",
    "correlations",
    "corroboration",
    "corrupt",
    "data_quality",
    "datasets",
    "debiased_mean",
    "decision_study",
    "discriminative_power",
    "factor_validity",
    "fit_correlation_model",
    "from_annotations",
    "from_long",
    "from_wide",
    "granularity",
    "granularity_simulation",
    "human_inconsistency",
    "items_needed",
    "kendall_like",
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
    "omega_ordinal",
    "pairwise_difference_pearson",
    "perturbation_detection",
    "plan_alt_test",
    "pre_assessment",
    "rank_normalize",
    "ranking_consistency",
    "rater_bias",
    "read_annotations",
    "read_csv",
    "read_mtme",
    "read_report",
    "recommend_metric_set",
    "reference_choice",
    "reliability",
    "report",
    "significance_clusters",
    "soft_pairwise_accuracy",
    "spearman_brown",
    "split_language_pairs",
    "stability",
    "validate",
    "williams_test",
    "wmt_ranking",
    "wmt_statistics",
]
