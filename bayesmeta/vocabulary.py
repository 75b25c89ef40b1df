"""The one vocabulary of keyword names of the public API, written down once.

Every keyword of every public function (``bayesmeta.__all__``) is a name in
:data:`KEYWORDS`, with one meaning; ``tests/test_vocabulary.py`` checks every public
signature against it and fails on a name outside it, on ``*args`` and on ``**kwargs``.
A new keyword is added here first, with its meaning, or it is spelled as an existing one.

The decisions (issue 20):

* ``coefficient``: the correlation coefficient (``"kendall"``, ``"spearman"``,
  ``"pearson"``) wherever one coefficient is chosen (MTMM, concurrent validity, factor
  validity, paper 002, the report). ``measures``: paper 001's correlation *measures*
  (grouping x coefficient, e.g. ``"system_kendall"``), a different thing.
* ``estimator``: how a model is estimated (``cfa``: ``"wlsmv"`` or ``"bayes"``;
  ``reliability``: ``"auto"`` or ``"full"``).
* ``resampling``: one :class:`~bayesmeta.options.ResamplingOptions` for every count of
  random repetitions of a classical or closed-form analysis (bootstrap resamples,
  Bayesian-bootstrap and Monte Carlo posterior draws, permutations, random splits) and their
  worker threads; each function documents its own default ``n_resamples``.
  ``n_subsets`` stays a name of its own: random *subsets of a smaller size* (a what-if about
  a smaller test set, not a resample of the data).
* ``sampling``: one :class:`~bayesmeta.options.SamplerOptions` for MCMC.
* ``human``: the human scores used as the criterion (a ``(system, item)`` DataArray in the
  analyses; in the readers, the columns that hold them). ``raters``: which raters' ratings
  are used.
* ``data``: the data, always the first argument (a Dataset, or a DataFrame for readers).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bayesmeta.options import ResamplingOptions

#: Every keyword name of the public API and its one meaning.
KEYWORDS: dict[str, str] = {
    # the data and what of it is analysed
    "data": "the data: a bayesmeta Dataset (a DataFrame for readers and text analyses)",
    "trait": "the human trait (quality aspect) whose scores are the criterion",
    "traits": "the traits analysed (default all)",
    "metrics": "the metrics analysed (default all)",
    "raters": "which raters' ratings are used (default all)",
    "judgments": "which continuous human judgments are used (default all)",
    "human": "the human scores used as the criterion (a (system, item) DataArray; in the "
             "readers, the columns holding them; in debiased_mean, the annotators averaged "
             "or the column of human scores)",
    "run": "the metric run used (label, 'mean' or None for the first)",
    "reference": "one score per output for metrics scored against several references",
    "level": "the level of a correlation: 'system', 'global' or 'output'",
    "fit": "a fitted result that the analysis reads (a CFA, a true-score fit, a rater model)",
    "fits": "fitted models compared by name",
    "model": "a model: lavaan syntax (cfa) or the simulation parameters",
    "texts": "texts to corrupt",
    "path": "a file path",
    # options of every analysis
    "coefficient": "the correlation coefficient: 'kendall', 'spearman' or 'pearson'",
    "coefficients": "agreement_coefficients: the agreement coefficients and ICC forms "
                    "computed (default all that apply)",
    "weights": "agreement_coefficients: Gwet's agreement weights of the rating categories "
               "('identity', 'linear', 'quadratic', 'ordinal', 'radical', 'ratio', "
               "'circular', 'bipolar')",
    "panels": "compare_agreement: named rater panels (name -> raters) compared",
    "population": "agreement_coefficients: the population size of units for the "
                  "finite-population correction of a variance (default infinite)",
    "measures": "paper 001's correlation measures (grouping x coefficient) or 'all'",
    "kendall_variant": "Kendall's tau variant of the measures: 'b' or 'c'",
    "estimator": "how a model is estimated ('wlsmv'/'bayes' for cfa, 'auto'/'full' for "
                 "reliability, 'auto'/'joint' for metric_variance, 'bootstrap'/'bayes' for "
                 "alt_test's posterior)",
    "ci_prob": "probability of every interval (classical and posterior)",
    "resampling": "ResamplingOptions (or a dict of its fields): resamples, permutations, "
                  "what they resample, p-value convention, worker threads",
    "sampling": "SamplerOptions (or a dict of its fields, 'fast', 'full'): how MCMC runs",
    "random_seed": "the seed (drawn, used and recorded when None)",
    "progress": "whether to show progress (None: when interactive)",
    "scheduler": "where independent chunks of work run: None (a plain loop, no dask), "
                 "'synchronous', 'threads' or 'processes' (dask's local schedulers) or a "
                 "dask.distributed Client (its cluster); the numbers do not depend on it",
    "n_subsets": "number of random subsets of a smaller size (a what-if test set)",
    # design and model choices of single analyses
    "additive_intervals": "corroboration: intervals for the additive-reliability share",
    "batch_size": "fit_correlation_model: metrics fitted per batch",
    "bayes": "report: Bayesian sections 'off', 'fast' or 'full'",
    "by_trait": "rater_bias: thresholds per trait",
    "loading_prior": "cfa(estimator='bayes'): Beta prior of the standardized loadings",
    "lkj_eta": "cfa(estimator='bayes'): LKJ shape of the factor correlations",
    "loo": "cfa(estimator='bayes'): keep LOO's pointwise likelihood in the result",
    "n_ppc": "cfa(estimator='bayes'): posterior predictive draws for the fit measures",
    "parameterization": "how a Bayesian model is written for the sampler (cfa: 'augmented' "
                        "or 'marginal'; rater_bias: a name in "
                        "raters._model_build.PARAMETERIZATIONS); the estimands are the same",
    "centered": "fit_correlation_model: centred parameterisation",
    "claims": "metric_variance: the trait each metric claims to measure",
    "errors": "metric_variance(estimator='joint'): the distribution of the metrics' errors "
              "('normal' or 'student_t')",
    "method_factors": "metric_variance(estimator='joint'): metric method factors, the "
                      "metrics' common variance beyond the traits ('auto' or a number)",
    "residuals": "metric_variance(estimator='joint'): the metric errors' covariance given "
                 "the traits ('auto', 'independent' or 'correlated')",
    "compare": "also compare metrics pairwise",
    "corruptions": "metric_unit_tests: the corruptions applied",
    "cuts": "ks_score: where the human scores are split",
    "decompose": "reference_choice: split the variance into its sources",
    "design": "mtmm: the methods-by-traits design of the table of ratings",
    "directions": "which direction of each metric means better",
    "lower_is_better": "readers: metrics whose lower scores are better (a list; the "
                       "shorthand of directions={m: 'lower'}); negated in data/select.py",
    "max_missing": "data_quality: the share of missing scores above which a metric is "
                   "near-empty",
    "min_distinct": "data_quality: fewer distinct values than this is a tied metric",
    "max_tied_share": "data_quality: a larger share of one value is a tied metric",
    "tiny": "data_quality: magnitudes below this underflow",
    "huge": "data_quality: magnitudes above this overflow",
    "disattenuate": "correct correlations for the unreliability of the factor scores",
    "discrimination": "rater_bias: rater discrimination parameters",
    "exhaustive": "recommend_metric_set: search all sets",
    "expert": "mtmm(fit=...): the label of the experts' method",
    "factor": "spearman_brown: the lengthening factor",
    "group": "what groups rows into units: human_inconsistency, the column grouping the "
             "scores; alt_test, the text each instance belongs to",
    "human_levels": "granularity_simulation: levels of the human scale",
    "item_effect": "rater_bias: an item effect",
    "k": "recommend_metric_set: size of the set",
    "levels": "granularity: numbers of levels the scores are coarsened to",
    "match": "corroboration: how reliabilities are matched on the threshold curve",
    "methods": "mtmm(fit=...): the measurement methods (MTMM's sense) and their metrics",
    "metric": "one metric",
    "metric_levels": "granularity_simulation: levels of the metric scale",
    "n": "pre_assessment: the numbers of outputs assessed",
    "n_components": "metric_residuals: principal components of the residuals",
    "n_items": "numbers of items (test-set sizes)",
    "n_replicates": "simulated datasets per setting (granularity_simulation, "
                    "plan_alt_test)",
    "n_runs": "decision_study: numbers of runs",
    "n_sets": "corroboration: random metric sets per size",
    "normalize": "rank-normalise each variable first",
    "ordered": "cfa: the indicators are ordinal",
    "original": "perturbation_detection: the label of the unperturbed outputs",
    "pooled": "metric_unit_tests: pool the corruptions",
    "prior": "the Beta prior of a proportion",
    "prob": "the required probability (pre_assessment; plan_alt_test: of passing)",
    "quality": "meta_correlation: the system-quality variable",
    "quantiles": "ks_score: quantiles of the human scores where they are split",
    "references": "metric_unit_tests: the reference texts",
    "reliability": "a reliability coefficient (Spearman-Brown, items needed)",
    "rules": "metric_unit_tests: the pass rule of each corruption",
    "scale": "a scale: (min, max) of ratings, or 'log' for compare",
    "score": "human_inconsistency: the column of scores",
    "score_method": "the factor-score method ('EBM', 'ML')",
    "search": "pre_assessment: search the n needed",
    "sections": "report: the sections run",
    "sets": "corroboration: the metric sets evaluated",
    "sizes": "corroboration: the sizes of the random metric sets",
    "source": "report: the label of the data's source",
    "budget": "report: the seconds a report may take (0: no limit)",
    "squeeze": "rank_normalize: the squeeze towards 0.5",
    "standardize": "rank_normalize: standard normal scores",
    "target": "a target reliability (or which variable granularity coarsens)",
    "target_sensitivity": "recommend_metric_set: the required sensitivity",
    "threshold": "a threshold on the scores",
    "tie_tol": "metric_unit_tests: scores closer than this are ties",
    "ties": "corroboration: how ties count",
    "tolerance": "a tolerance on the scores",
    "variables": "decision_study: the variables shown",
    "x": "rank_normalize: the values",
    "grouping": "WMT statistics: the groups within which pairs of outputs are formed "
                "('item', 'system' or 'global'; MTME's average_by 'item', 'sys', 'none')",
    "statistic": "significance_clusters: the statistic metrics are ranked by ('spa', "
                 "'pdp', 'kendall_like' or one correlation measure)",
    "alpha": "significance_clusters, wmt_ranking: p-values at or below it are significant",
    "pair_test": "significance_clusters, wmt_ranking: how two metrics are compared "
                 "('bootstrap': paired bootstrap of the difference over systems, tests equal "
                 "expected statistic; 'permutation': MTME's swap test, tests "
                 "exchangeability)",
    "protocol": "wmt_ranking: the WMT metrics-task protocol ('wmt24' or 'wmt25')",
    "kind": "corrupt: the corruption kinds",
    # readers (column roles and parsing)
    "format": "read_csv: 'wide', 'long' or 'metriceval'",
    "system": "the system labels: a reader's column; in debiased_mean a column, an item "
              "coordinate or a mapping instance -> system",
    "item": "reader: the column of item labels",
    "id": "reader: one column holding system and item",
    "id_split": "reader: how that column splits (add_judges: the separator of the "
                "instance ids' parts)",
    "rater": "reader: the column of rater labels",
    "value": "reader: the column of values",
    "ratings": "reader: the columns holding ordinal ratings",
    "lp": "the language pair (SRC-TGT) read or simulated; a list of them gives one dataset "
          "with the language-pair dim 'lp'",
    "human_scale": "reader: the scale of continuous human scores",
    "exclude": "reader: columns left out",
    "reference_based": "which metrics use references",
    "inputs": "which input each reference-free metric reads",
    "metric_trait": "reader: the trait each metric is meant to measure",
    "decimal": "reader: the decimal mark",
    "sep": "reader: the field separator",
    "encoding": "reader: the file encoding",
    "na_values": "reader: strings read as missing",
    "min_systems": "validate: systems required",
    "min_items": "validate: items required",
    "warn_missing": "validate: warn about missing values",
    # judges (the alt-test) and their annotation readers
    "judges": "the LLM judges used (raters with is_judge; default all): tested by alt_test, "
              "added as raters by add_judges",
    "annotations": "add_judges: the annotations holding the judges' labels",
    "epsilon": "alt_test, plan_alt_test: the cost-benefit margin granted to the judge "
               "(0.2 experts, 0.15 skilled annotators, 0.1 crowd-workers)",
    "scoring": "alt_test: how a label's alignment with the other annotators is scored "
               "('accuracy', 'neg_rmse' or a callable)",
    "q": "alt_test, plan_alt_test: the false-discovery rate of the Benjamini-Yekutieli "
         "procedure",
    "test": "alt_test: the per-annotator test ('auto', 't' or 'wilcoxon')",
    "human_annotations": "read_annotations: the human annotations (a JSON file or dict of "
                         "annotator -> {instance -> label})",
    "llm_annotations": "read_annotations: the judges' annotations (a JSON file or dict of "
                       "judge -> {instance -> label})",
    "instance": "from_annotations: the column of instance labels",
    "annotator": "from_annotations: the column of rater (annotator or judge) labels",
    "label": "from_annotations: the column of annotation labels",
    "judge": "from_annotations: the boolean column flagging judges' rows, or the rater "
             "labels that are judges; debiased_mean: the judge debiased (a rater with "
             "is_judge, or the column of its scores)",
    "lam": "debiased_mean: the weight lambda of the judge's scores in PPI++ (None: tuned "
           "to the smallest variance; 1: PPI; 0: the human mean)",
}


def resampling_options(resampling: ResamplingOptions | Mapping[str, Any] | None,
                       **defaults: Any) -> ResamplingOptions:
    """``resampling=`` as a :class:`ResamplingOptions`, with a function's own defaults
    (e.g. ``n_resamples=8000``) for the fields a dict or None leaves out; an options object
    is taken as given.

    Examples
    --------
    >>> from bayesmeta.vocabulary import resampling_options
    >>> resampling_options(None, n_resamples=200).n_resamples
    200
    >>> resampling_options({"n_jobs": 2}, n_resamples=200).n_resamples
    200
    """
    if resampling is None:
        return ResamplingOptions.coerce(dict(defaults))
    if isinstance(resampling, Mapping):
        return ResamplingOptions.coerce({**defaults, **dict(resampling)})
    return ResamplingOptions.coerce(resampling)


__all__ = ["KEYWORDS", "resampling_options"]
