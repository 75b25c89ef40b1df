"""The statistics of the WMT metrics shared task (Google's mt-metrics-eval): soft pairwise
accuracy, Pairwise Difference Pearson, the Kendall-like tau of relative-ranking DA, Williams'
test (:mod:`.statistics`), significance clusters (:mod:`.clusters`, :mod:`.ties`) and the
WMT24/25 overall ranking (:mod:`.ranking`), each classical (as MTME computes it) beside a
Bayesian-bootstrap posterior and P(A beats B); array kernels vectorised over leading dims
(:mod:`.kernels`); a campaign simulator (:mod:`.simulate`); a whole campaign per
language pair, optionally on dask (:mod:`.scale`)."""

from bayesmeta.wmt.clusters import significance_clusters
from bayesmeta.wmt.ranking import wmt_ranking
from bayesmeta.wmt.scale import wmt_statistics
from bayesmeta.wmt.simulate import simulate_campaign, simulate_language_pairs
from bayesmeta.wmt.statistics import (
    kendall_like,
    pairwise_difference_pearson,
    soft_pairwise_accuracy,
    williams_test,
)

__all__ = ["kendall_like", "pairwise_difference_pearson", "significance_clusters",
           "simulate_campaign", "simulate_language_pairs", "soft_pairwise_accuracy",
           "williams_test", "wmt_ranking", "wmt_statistics"]
