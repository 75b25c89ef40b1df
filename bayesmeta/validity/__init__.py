r"""Validity: MTMM (:mod:`.mtmm`), concurrent validity (:mod:`.concurrent`), the ordinal CFA
(:mod:`.cfa`: WLSMV in :mod:`.wlsmv` on :mod:`.polychoric`, Bayesian in :mod:`.ordinal_cfa`),
factor scores, and the validity of automatic metrics against the factor scores of an
ordinal CFA of the experts' ratings (MetricEval, Xiao et al. 2023, Sec. 3.2, 4.2; Fig. 4/8).

:func:`factor_validity`: correlation between each metric's system means and each factor's
factor-score system means, with its uncertainty.

* **Classical** (a :class:`bayesmeta.validity.factor_analysis.CFAResult`, WLSMV): the
  correlation of the system means of the metric and of lavaan's EBM factor scores; the interval is a
  percentile bootstrap over systems and items (``resampling.unit``, default ``"both"``: Deutsch et
  al. 2021's Boot-Both; ``"items"``: Boot-Inputs, every system keeping its outputs on the resampled
  items), the factor scores held at their point values.
* **Bayesian** (a :class:`bayesmeta.validity.ordinal_cfa.OrdinalCFAResult`): the same
  statistic in every posterior draw of the factor scores, each draw paired with its own
  Bayesian-bootstrap draw of item weights :math:`b \sim I\,\mathrm{Dir}(1_I)` (Rubin 1981):
  system means :math:`\bar x_s = \sum_i b_i x_{si} / \sum_i b_i`, the same weights for the
  metric and for the scores. The posterior therefore carries both the uncertainty of the
  factor scores (and of the CFA's parameters) and the sampling of items. ``details()`` gives
  the sd of each part alone (``sd_factor_scores``: score draws, unit item weights;
  ``sd_items``: posterior-mean scores, Bayesian bootstrap), to tell which dominates.

:func:`metric_variance`: how much of each metric's variance is the trait it claims to
measure, how much the other traits, how much its own error (classical, on the EBM scores).

References
----------
Xiao, Z., Zhang, S., Lai, V., & Liao, Q. V. (2023). Evaluating evaluation metrics: A
framework for analyzing NLG evaluation metrics using measurement theory. *EMNLP*.
Deutsch, D., Dror, R., & Roth, D. (2021). A statistical analysis of summarization evaluation
metrics using resampling methods. *TACL*, 9, 1132-1146.
Rubin, D. B. (1981). The Bayesian bootstrap. *Annals of Statistics*, 9(1), 130-134.
Carroll, R. J., Ruppert, D., Stefanski, L. A., & Crainiceanu, C. M. (2006). *Measurement
error in nonlinear models* (2nd ed.), ch. 4 (regression calibration). Chapman & Hall/CRC.
Pratt, J. W. (1987). Dividing the indivisible: using simple symmetry to partition variance
explained. In *Proc. 2nd International Tampere Conference in Statistics*, 245-260.
"""

from bayesmeta.validity.classical import mtmm
from bayesmeta.validity.concurrent import concurrent_validity
from bayesmeta.validity.factor_analysis import cfa
from bayesmeta.validity.metric_validity import factor_validity
from bayesmeta.validity.residuals import metric_residuals
from bayesmeta.validity.variance import metric_variance

__all__ = ["cfa", "concurrent_validity", "factor_validity", "metric_residuals",
           "metric_variance", "mtmm"]
