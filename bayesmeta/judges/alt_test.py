r"""The alternative annotator test (alt-test; Calderon, Reichart & Dror, ACL 2025).

Can an LLM judge replace the human annotators? Leave one annotator :math:`j` out at a time;
on each instance :math:`i` that :math:`j`, the judge :math:`f` and at least one other
annotator labelled, score how well the judge and annotator :math:`j` represent the others
:math:`K_i = \{k \ne j\}`:

* accuracy: :math:`S(x, i) = \frac{1}{|K_i|}\sum_{k\in K_i} 1[x = y_{ki}]`;
* neg_rmse: :math:`S(x, i) = -\sqrt{\frac{1}{|K_i|}\sum_{k\in K_i}(x - y_{ki})^2}`
  (per instance, as the authors' code defines it);

then :math:`W^f_i = 1[S(f, i) \ge S(h_j, i)]`, :math:`W^h_i = 1[S(h_j, i) \ge S(f, i)]`,
:math:`\rho^f_j = \overline{W^f}`, :math:`\rho^h_j = \overline{W^h}` and a one-sided test
of :math:`H_0: \rho^f_j \le \rho^h_j - \varepsilon` on :math:`d_i = W^h_i - W^f_i`
(:math:`H_0: E[d] \ge \varepsilon`; a one-sample t test, or the Wilcoxon signed-rank test of
:math:`d_i - \varepsilon`). The p-values of all annotators go through the
Benjamini-Yekutieli procedure at level :math:`q`; the winning rate :math:`\omega` is the
share of annotators whose :math:`H_0` is rejected, the judge passes when
:math:`\omega \ge 0.5`, and the advantage probability is :math:`\rho = \frac{1}{m}\sum_j
\rho^f_j`.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr
from scipy import special, stats

from bayesmeta.data.annotations import annotation_labels, humans_and_judges
from bayesmeta.judges.alt_test_model import (
    bayes_fdr,
    difference_rows,
    epsilon_curve,
    group_units,
    outcome_codes,
    theta_draws,
)
from bayesmeta.options import ResamplingOptions, resolve_seed
from bayesmeta.results import Result, data_hash
from bayesmeta.summaries import CI_PROB, check_ci_prob, equal_tailed, hdi
from bayesmeta.vocabulary import resampling_options

__all__ = ["AltTestResult", "alt_test", "benjamini_yekutieli"]

#: Fewer instances per annotator than this: the t test's normality is doubtful (the paper's
#: advice); ``test="auto"`` switches to the Wilcoxon signed-rank test.
MIN_INSTANCES = 30
TESTS = ("t", "wilcoxon", "auto")
SCORINGS = ("accuracy", "neg_rmse")
ESTIMATORS = ("bootstrap", "bayes")
ESTIMANDS = ("winning_rate", "advantage_probability", "rho_judge", "rho_annotator",
             "advantage_difference")
#: The margins of the sensitivity curve (estimator="bayes"), with the chosen epsilon added.
EPSILON_GRID = np.round(np.arange(0.0, 0.401, 0.01), 10)


class AltTestWarning(UserWarning):
    """An alt-test caveat: few instances per annotator."""


class AltTestResult(Result):
    """The alt-test per judge (see :func:`alt_test`)."""

    def epsilon_curve(self) -> pd.DataFrame:
        """The decision as a function of epsilon (``estimator="bayes"``): per judge and
        margin, ``prob_pass`` (:math:`P(\\omega \\ge 0.5)`), the Bayesian and classical
        winning rates and pass decisions. The posterior does not depend on epsilon, so
        every margin reads the same draws."""
        if "epsilon_curve" not in self.extra:
            raise ValueError("the epsilon curve is computed by alt_test(..., "
                             "estimator='bayes') with resampling; this result has none.")
        return self.extra["epsilon_curve"].to_dataframe()

    def plot_epsilon(self, ax: Any = None) -> Any:
        """Plot :meth:`epsilon_curve`: P(winning rate >= 0.5) and the classical winning
        rate against epsilon, one colour per judge. Returns the matplotlib Axes."""
        from bayesmeta.judges.plots import plot_epsilon_curve

        return plot_epsilon_curve(self.epsilon_curve(), epsilon=self.info.get("epsilon"),
                                  ax=ax)


def benjamini_yekutieli(p_values: np.ndarray, q: float) -> np.ndarray:
    r"""Benjamini-Yekutieli step-up rejections, along the last axis.

    Reject the :math:`k` smallest p-values, :math:`k` the largest rank with
    :math:`p_{(k)} \le \frac{k}{m}\frac{q}{H_m}`, :math:`H_m = \sum_{i=1}^m 1/i`
    (Benjamini & Yekutieli 2001, Theorem 1.3). NaN p-values are never rejected.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmeta.judges.alt_test import benjamini_yekutieli
    >>> benjamini_yekutieli(np.array([0.001, 0.5, 0.01]), 0.05).tolist()
    [True, False, True]

    R equivalent: ``p.adjust(p, "BY") <= q``.
    """
    p = np.asarray(p_values, dtype=float)
    m = p.shape[-1]
    h_m = np.sum(1.0 / np.arange(1, m + 1))
    order = np.argsort(np.where(np.isnan(p), np.inf, p), axis=-1, kind="stable")
    srt = np.take_along_axis(p, order, axis=-1)
    ok = srt <= np.arange(1, m + 1) / m * (q / h_m)
    ranks = np.where(ok, np.arange(1, m + 1), 0).max(axis=-1, keepdims=True)
    rejected_sorted = np.arange(1, m + 1) <= ranks
    out = np.zeros(p.shape, dtype=bool)
    np.put_along_axis(out, order, rejected_sorted, axis=-1)
    return out


def _scores(y: np.ndarray, x: np.ndarray, scoring: str | Callable, cats: list | None
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Indicators for every (instance, annotator): W^f, W^h and which pairs count.

    y: (n, m) human labels (NaN missing); x: (n,) the judge's labels.
    """
    n, m = y.shape
    have = ~np.isnan(y)
    wf = np.zeros((n, m))
    wh = np.zeros((n, m))
    valid = np.zeros((n, m), dtype=bool)
    for j in range(m):
        others = have.copy()
        others[:, j] = False
        n_oth = others.sum(axis=1)
        use = have[:, j] & (n_oth >= 1) & ~np.isnan(x)
        valid[:, j] = use
        if callable(scoring):
            decode = (lambda v: cats[int(v)]) if cats is not None else (lambda v: v)
            s_f = np.full(n, np.nan)
            s_h = np.full(n, np.nan)
            for i in np.flatnonzero(use):
                rest = [decode(v) for v in y[i, others[i]]]
                s_f[i] = float(scoring(decode(x[i]), rest))
                s_h[i] = float(scoring(decode(y[i, j]), rest))
        else:
            yz = np.where(others, y, 0.0)
            cnt = np.maximum(n_oth, 1)
            if scoring == "accuracy":
                s_f = (others & (yz == x[:, None])).sum(axis=1) / cnt
                s_h = (others & (yz == y[:, [j]])).sum(axis=1) / cnt
            else:
                with np.errstate(invalid="ignore"):
                    s_f = -np.sqrt((others * (x[:, None] - yz) ** 2).sum(axis=1) / cnt)
                    s_h = -np.sqrt((others * (y[:, [j]] - yz) ** 2).sum(axis=1) / cnt)
        with np.errstate(invalid="ignore"):
            wf[:, j] = np.where(use, s_f >= s_h, 0.0)
            wh[:, j] = np.where(use, s_h >= s_f, 0.0)
    return wf, wh, valid


def _p_value(d: np.ndarray, epsilon: float, test: str) -> float:
    if test == "t":
        return float(stats.ttest_1samp(d, epsilon, alternative="less").pvalue)
    return float(stats.wilcoxon(d - epsilon, alternative="less").pvalue)


def _weighted(w: np.ndarray, wf: np.ndarray, wh: np.ndarray, valid: np.ndarray,
              epsilon: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """rho^f, rho^h and t-test p-values under instance weights w (B, n) (frequency weights:
    bootstrap counts, or Bayesian-bootstrap weights scaled to sum to n)."""
    v = valid.astype(float)
    n_j = w @ v
    d = (wh - wf) * v
    with np.errstate(invalid="ignore", divide="ignore"):
        rho_f = (w @ (wf * v)) / n_j
        rho_h = (w @ (wh * v)) / n_j
        mean = (w @ d) / n_j
        var = np.maximum((w @ d**2) - n_j * mean**2, 0.0) / (n_j - 1)
        t = (mean - epsilon) / np.sqrt(var / n_j)
        # a constant d: t = -inf (reject) or +inf, as scipy; d exactly epsilon: NaN
        t = np.where(var <= 1e-14 * np.maximum(1.0, mean**2),
                     np.where(mean < epsilon - 1e-12, -np.inf,
                              np.where(mean > epsilon + 1e-12, np.inf, np.nan)), t)
        p = special.stdtr(n_j - 1, t)
    return rho_f, rho_h, p


def _resampled_p(counts: np.ndarray, wf: np.ndarray, wh: np.ndarray, valid: np.ndarray,
                 epsilon: float, tests: list[str], p_t: np.ndarray) -> np.ndarray:
    """Bootstrap p-values: the vectorised t test, the Wilcoxon test where chosen."""
    p = p_t.copy()
    for j, kind in enumerate(tests):
        if kind != "wilcoxon":
            continue
        idx = np.flatnonzero(valid[:, j])
        d = (wh[idx, j] - wf[idx, j]) - epsilon
        for b in range(counts.shape[0]):
            rep = np.repeat(d, counts[b, idx].astype(int))
            p[b, j] = (float(stats.wilcoxon(rep, alternative="less").pvalue)
                       if rep.size > 0 and np.any(rep != 0) else np.nan)
    return p


def _curve_p_values(k: dict[str, Any], eps: float) -> np.ndarray:
    """The classical p-values of one judge's annotators at margin ``eps``."""
    ones = np.ones((1, k["valid"].shape[0]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        p = _weighted(ones, k["wf"], k["wh"], k["valid"], eps)[2][0]
        for j, kind in enumerate(k["tests"]):
            if kind == "wilcoxon":
                v = k["valid"][:, j]
                p[j] = _p_value(k["wh"][v, j] - k["wf"][v, j], eps, kind)
    return p


def alt_test(
    data: xr.Dataset,
    *,
    judges: Sequence[str] | None = None,
    epsilon: float,
    scoring: str | Callable[[Any, list], float] = "accuracy",
    q: float = 0.05,
    test: str = "auto",
    ci_prob: float = CI_PROB,
    estimator: str = "bootstrap",
    group: Mapping[str, Any] | Callable[[str], Any] | str | None = None,
    resampling: ResamplingOptions | Mapping[str, Any] | None = None,
    random_seed: int | None = None,
) -> AltTestResult:
    r"""The alternative annotator test: can each LLM judge replace the human annotators?

    For each judge :math:`f` and each human annotator :math:`j` left out, on the instances
    that :math:`j`, :math:`f` and at least one other annotator labelled,

    .. math:: W^f_i = 1[S(f, i) \ge S(h_j, i)],\quad W^h_i = 1[S(h_j, i) \ge S(f, i)],
              \quad \rho^f_j = \overline{W^f},\quad \rho^h_j = \overline{W^h},

    with :math:`S(x, i)` the alignment of label :math:`x` with the other annotators' labels
    of instance :math:`i` (``scoring``: mean of :math:`1[x = y_{ki}]`, or
    :math:`-\sqrt{\mathrm{mean}_k (x - y_{ki})^2}`). Each annotator's
    :math:`H_0: \rho^f_j \le \rho^h_j - \varepsilon` is tested one-sided on
    :math:`d_i = W^h_i - W^f_i` (:math:`H_0: E[d] \ge \varepsilon`); Benjamini-Yekutieli
    at ``q`` over the annotators; the **winning rate** :math:`\omega` is the share of
    annotators whose :math:`H_0` is rejected; the judge **passes** when
    :math:`\omega \ge 0.5`; the **advantage probability** is
    :math:`\rho = \frac{1}{m}\sum_j \rho^f_j` (for comparing judges).

    Parameters
    ----------
    data : xarray.Dataset
        Annotations from :func:`bayesmeta.read_annotations` or
        :func:`bayesmeta.from_annotations` (``label`` on ``(item, rater)``, ``is_judge``).
    judges : list of str, optional
        The judges tested (default every rater with ``is_judge``).
    epsilon : float
        The cost-benefit margin :math:`\varepsilon` granted to the judge (the paper: 0.2 for
        experts, 0.15 for skilled annotators, 0.1 for crowd-workers).
    scoring : {"accuracy", "neg_rmse"} or callable
        The alignment score :math:`S`; a callable takes ``(label, other_labels)`` (labels
        decoded to their categories) and returns a float, as in the authors' code.
    q : float
        The false-discovery rate of the Benjamini-Yekutieli procedure.
    test : {"auto", "t", "wilcoxon"}
        The per-annotator test: one-sample t test, Wilcoxon signed-rank test of
        :math:`d_i - \varepsilon`, or ``"auto"``: the t test from 30 instances, Wilcoxon
        below (the paper's advice). Fewer than 30 instances always warn.
    ci_prob : float
        Probability of the intervals.
    estimator : {"bootstrap", "bayes"}
        Where the posterior columns come from. ``"bootstrap"``: the Bayesian bootstrap over
        the instances. ``"bayes"``: the Bayesian alt-test
        (:mod:`bayesmeta.judges.alt_test_model`): a hierarchical Bayesian bootstrap of each
        annotator's win/tie/loss outcomes, pooled towards the panel, with the posterior
        winning rate (the share of annotators with :math:`\delta_j < \varepsilon`),
        ``prob_beats`` :math:`= P(\delta_j < \varepsilon)`, ``prob_pass`` :math:`=
        P(\omega \ge 0.5)`, the Bayesian false-discovery decision, judge-vs-judge rows
        ``advantage_difference`` with ``prob_greater`` :math:`= P(\rho_A > \rho_B)`, and
        the decision against epsilon (:meth:`AltTestResult.epsilon_curve`,
        :meth:`AltTestResult.plot_epsilon`). The classical columns are the same for both.
    group : str, mapping or callable, optional
        The text each instance belongs to, when several instances share one text (a
        separator: the text is the id before its last occurrence, e.g. ``"__"`` for
        ``"article7__economic"``; a mapping instance -> text; or a callable on the id).
        The texts become the units of the bootstrap and of the posterior, so that the
        instances of one text count as dependent. Default: every instance its own unit.
    resampling : ResamplingOptions or dict, optional
        ``n_resamples`` (default 1000; 0 for point estimates only): percentile-bootstrap
        resamples of the instances (``classical_low``/``classical_high``) and as many
        posterior draws (``mean``, ``sd``, ``hdi_low``, ``hdi_high``; independent draws,
        no Markov chain). The other fields do not apply.
    random_seed : int, optional
        Seed of the resampling (drawn and recorded when None).

    Returns
    -------
    AltTestResult
        ``summary()`` indexed by ``(estimand, rater, rater2)``: ``winning_rate`` and
        ``advantage_probability`` per judge (``rater``; ``rater2`` empty), ``rho_judge``
        (:math:`\rho^f_j`) and ``rho_annotator`` (:math:`\rho^h_j`) per judge and annotator
        (``rater2``). ``details()``: ``n_instances``, ``test``, ``p_value``, ``rejected``
        per annotator; ``passes``, ``n_annotators``, ``epsilon``, ``q`` per judge. The
        Bayesian-bootstrap winning rate re-runs the t test with the instance weights as
        frequency weights; it is left out (NaN) when an annotator uses the Wilcoxon test.
        With ``estimator="bayes"`` also ``prob_beats`` and ``beats_bayes`` per annotator,
        ``prob_pass``, ``winning_rate_bayes`` and ``passes_bayes`` per judge, and the rows
        ``advantage_difference`` (``rater`` minus ``rater2``) with ``prob_greater``.

    Raises
    ------
    ValueError
        For an unknown judge, fewer than two human annotators, an annotator who shares no
        instance with the judge and another annotator, an unknown scoring or test, or
        ``neg_rmse`` on text labels.

    References
    ----------
    Calderon, Reichart & Dror (2025), The Alternative Annotator Test for LLM-as-a-Judge: How
    to Statistically Justify Replacing Human Annotators with LLMs. *ACL 2025*,
    pp. 16051-16081 (code: github.com/nitaytech/AltTest); Benjamini & Yekutieli (2001),
    The control of the false discovery rate in multiple testing under dependency. *Annals of
    Statistics* 29(4).

    Notes
    -----
    The authors' code (``alt_test_example.ipynb``) skips annotators with fewer than 30
    instances; the paper advises the Wilcoxon test for them instead, which is what
    ``test="auto"`` does here (the two agree whenever every annotator has 30 or more).

    Examples
    --------
    >>> import bayesmeta as bm
    >>> human = {"a": {str(i): i % 3 for i in range(40)},
    ...          "b": {str(i): i % 3 for i in range(40)},
    ...          "c": {str(i): (i + 1) % 3 for i in range(40)}}
    >>> llm = {"gpt": {str(i): i % 3 for i in range(40)}}
    >>> res = bm.alt_test(bm.read_annotations(human, llm), epsilon=0.2,
    ...                   resampling={"n_resamples": 0})
    >>> round(float(res.summary().loc[("advantage_probability", "gpt", ""), "classical"]), 3)
    1.0

    The Bayesian version (``estimator="bayes"``) on the same data:

    >>> res = bm.alt_test(bm.read_annotations(human, llm), epsilon=0.2, estimator="bayes",
    ...                   resampling={"n_resamples": 200}, random_seed=1)
    >>> bool(res.details().loc[("winning_rate", "gpt", ""), "passes_bayes"])
    True

    R equivalent: none (no R package implements the alt-test).
    """
    label = annotation_labels(data, "alt_test")
    ci_prob = check_ci_prob(ci_prob)
    if test not in TESTS:
        raise ValueError(f"test must be one of {', '.join(map(repr, TESTS))}, got {test!r}.")
    if not callable(scoring) and scoring not in SCORINGS:
        raise ValueError(f"scoring must be 'accuracy', 'neg_rmse' or a callable, got "
                         f"{scoring!r}.")
    if not isinstance(epsilon, int | float) or isinstance(epsilon, bool) or not (
            -1 <= epsilon <= 1):
        raise ValueError(f"epsilon must be a number in [-1, 1], got {epsilon!r}.")
    if not 0 < q < 1:
        raise ValueError(f"q must lie strictly between 0 and 1, got {q!r}.")
    if estimator not in ESTIMATORS:
        raise ValueError(f"estimator must be 'bootstrap' or 'bayes', got {estimator!r}.")
    cats = label.attrs.get("categories")
    if scoring == "neg_rmse" and cats is not None:
        raise ValueError("scoring='neg_rmse' needs numeric labels; these are categories "
                         f"{list(cats)[:5]}.")
    humans, all_judges = humans_and_judges(data)
    if judges is None:
        judges = all_judges
    else:
        judges = [judges] if isinstance(judges, str) else [str(j) for j in judges]
        unknown = [j for j in judges if j not in all_judges]
        if unknown:
            raise ValueError(f"unknown judge(s) {unknown}; the judges are {all_judges}.")
    if not judges:
        raise ValueError("alt_test needs at least one judge (a rater with is_judge); none "
                         "in the data.")
    if len(humans) < 2:
        raise ValueError(f"alt_test needs at least two human annotators (leave one out, "
                         f"compare with the others); the data has {len(humans)}: {humans}.")
    opts = resampling_options(resampling, n_resamples=1000)
    n_res = opts.n_resamples
    if estimator == "bayes" and n_res < 2:
        raise ValueError(f"estimator='bayes' draws its posterior with resampling's "
                         f"n_resamples (at least 2), got {n_res}.")
    seed = resolve_seed(random_seed)
    rng = np.random.default_rng(seed)
    y = label.sel(rater=humans).values.astype(float)
    n = y.shape[0]
    units, unit_labels = group_units([str(i) for i in label["item"].values], group)
    n_units = len(unit_labels)
    counts = rng.multinomial(n_units, np.full(n_units, 1.0 / n_units), size=n_res
                             ).astype(float)[:, units] if n_res else None
    bb = unit_w = prior_u = None
    if n_res and estimator == "bootstrap":
        bb = (rng.dirichlet(np.ones(n_units), size=n_res) * n_units)[:, units]
    elif n_res:
        unit_w = rng.dirichlet(np.ones(n_units), size=n_res)
        prior_u = rng.random(n_res)
    kept: dict[str, dict[str, Any]] = {}

    rows: list[dict[str, Any]] = []
    low_warned: list[str] = []
    for f in judges:
        x = label.sel(rater=f).values.astype(float)
        wf, wh, valid = _scores(y, x, scoring, cats)
        n_inst = valid.sum(axis=0)
        empty = [h for h, k in zip(humans, n_inst, strict=True) if k == 0]
        if empty:
            raise ValueError(f"annotator(s) {empty} share no instance with judge {f!r} and "
                             f"another annotator (non-overlapping instances).")
        tests = [("wilcoxon" if k < MIN_INSTANCES else "t") if test == "auto" else test
                 for k in n_inst]
        low_warned += [f"{h} ({k})" for h, k in zip(humans, n_inst, strict=True)
                       if k < MIN_INSTANCES and f"{h} ({k})" not in low_warned]
        rho_f = np.array([wf[valid[:, j], j].mean() for j in range(len(humans))])
        rho_h = np.array([wh[valid[:, j], j].mean() for j in range(len(humans))])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            p = np.array([_p_value(wh[valid[:, j], j] - wf[valid[:, j], j], epsilon, tests[j])
                          for j in range(len(humans))])
        rej = benjamini_yekutieli(p, q)
        omega = float(rej.mean())
        rho = float(rho_f.mean())
        draws: dict[str, dict[str, np.ndarray]] = {}
        if n_res:
            r_f, r_h, p_t = _weighted(counts, wf, wh, valid, epsilon)
            p_b = _resampled_p(counts, wf, wh, valid, epsilon, tests, p_t)
            draws["boot"] = {"winning_rate": benjamini_yekutieli(p_b, q).mean(axis=1),
                             "advantage_probability": r_f.mean(axis=1), "rho_judge": r_f,
                             "rho_annotator": r_h}
            if estimator == "bootstrap":
                r_f, r_h, p_t = _weighted(bb, wf, wh, valid, epsilon)
                wr = (benjamini_yekutieli(p_t, q).mean(axis=1)
                      if all(t == "t" for t in tests) else np.full(n_res, np.nan))
            else:
                theta = theta_draws(outcome_codes(wf, wh, valid), units, unit_w, rng,
                                    prior_u=prior_u)
                r_f = theta[:, :, 0] + theta[:, :, 1]
                r_h = theta[:, :, 2] + theta[:, :, 1]
                delta = theta[:, :, 2] - theta[:, :, 0]
                wr = (delta < epsilon).mean(axis=1)
                kept[f] = {"delta": delta, "rho": r_f.mean(axis=1), "boot_rho":
                           draws["boot"]["advantage_probability"], "point": rho,
                           "wf": wf, "wh": wh, "valid": valid, "tests": tests}
            draws["bayes"] = {"winning_rate": wr, "advantage_probability": r_f.mean(axis=1),
                              "rho_judge": r_f, "rho_annotator": r_h}
        point = {"winning_rate": np.array([omega]), "advantage_probability": np.array([rho]),
                 "rho_judge": rho_f, "rho_annotator": rho_h}
        for est, val in point.items():
            labels2 = humans if est.startswith("rho_") else [""]
            for j, h in enumerate(labels2):
                row: dict[str, Any] = {"estimand": est, "rater": f, "rater2": h,
                                       "classical": float(val[j])}
                if n_res:
                    bd = draws["boot"][est]
                    bd = bd[:, j] if bd.ndim == 2 else bd
                    row["classical_low"], row["classical_high"] = equal_tailed(bd, ci_prob)
                    pd_ = draws["bayes"][est]
                    pd_ = pd_[:, j] if pd_.ndim == 2 else pd_
                    if np.isnan(pd_).all():
                        row.update(mean=np.nan, sd=np.nan, hdi_low=np.nan, hdi_high=np.nan)
                    else:
                        row["mean"], row["sd"] = float(pd_.mean()), float(pd_.std(ddof=1))
                        row["hdi_low"], row["hdi_high"] = hdi(pd_, ci_prob, axis=(0,))
                if est.startswith("rho_"):
                    row.update(n_instances=int(n_inst[j]), test=tests[j],
                               p_value=float(p[j]), rejected=bool(rej[j]))
                else:
                    row.update(n_instances=int(valid.any(axis=1).sum()),
                               passes=omega >= 0.5, n_annotators=len(humans),
                               epsilon=float(epsilon), q=float(q))
                if f in kept and est == "rho_judge":
                    prob = (kept[f]["delta"] < epsilon).mean(axis=0)
                    row.update(prob_beats=float(prob[j]),
                               beats_bayes=bool(bayes_fdr(prob, q)[j]))
                elif f in kept and est == "winning_rate":
                    prob = (kept[f]["delta"] < epsilon).mean(axis=0)
                    wr_b = float(bayes_fdr(prob, q).mean())
                    row.update(prob_pass=float((draws["bayes"]["winning_rate"] >= 0.5).mean()),
                               winning_rate_bayes=wr_b, passes_bayes=wr_b >= 0.5)
                rows.append(row)
    extra: dict[str, xr.DataArray | xr.Dataset] = {}
    if kept:
        rows += difference_rows(kept, ci_prob)
        extra["epsilon_curve"] = epsilon_curve(
            kept, epsilon, q, EPSILON_GRID, p_values=_curve_p_values, adjust=benjamini_yekutieli)
    frame = pd.DataFrame(rows)
    order = {e: k for k, e in enumerate(ESTIMANDS)}
    frame = frame.iloc[np.argsort([order[e] for e in frame["estimand"]], kind="stable")]
    frame = frame.set_index(["estimand", "rater", "rater2"])
    stat_cols = [c for c in ("classical", "classical_low", "classical_high", "mean", "sd",
                             "hdi_low", "hdi_high") if c in frame.columns]
    details = frame.drop(columns=stat_cols)
    for col in ("rejected", "passes", "beats_bayes", "passes_bayes"):
        if col in details:
            details[col] = details[col].astype("boolean")
    notes = [f"epsilon = {epsilon:g}, q = {q:g} (Benjamini-Yekutieli), scoring = "
             f"{getattr(scoring, '__name__', scoring)}; a judge passes when the winning rate "
             f"is at least 0.5."]
    if low_warned:
        msg = (f"annotator(s) with fewer than {MIN_INSTANCES} instances: "
               f"{', '.join(low_warned)}; the paper advises at least {MIN_INSTANCES} "
               f"(test='auto' uses the Wilcoxon signed-rank test for them).")
        warnings.warn(msg, AltTestWarning, stacklevel=2)
        notes.append(msg)
    unit_word = "instances" if group is None else f"texts ({n_units} groups of instances)"
    posterior = (f"Bayesian bootstrap over {unit_word}" if estimator == "bootstrap" else
                 f"hierarchical Dirichlet-process model, {unit_word} as units")
    if n_res:
        notes.append(f"Intervals: percentile bootstrap over {unit_word} ({n_res} resamples); "
                     f"posterior: {posterior} ({n_res} independent draws).")
    if kept:
        notes.append("Posterior winning_rate: the share of annotators with delta_j < "
                     "epsilon (delta_j = rho_annotator - rho_judge); prob_beats = P(delta_j "
                     "< epsilon); beats_bayes/winning_rate_bayes: the Bayesian "
                     "false-discovery rule at q; prob_pass = P(winning rate >= 0.5); "
                     "advantage_difference: rho of rater minus rho of rater2, prob_greater "
                     "= P(rho_rater > rho_rater2). result.epsilon_curve() and "
                     "result.plot_epsilon() show the decision against epsilon.")
    return AltTestResult(
        frame[stat_cols], title="Alternative annotator test (alt-test)",
        info={"judges": len(judges), "annotators": len(humans), "instances": n,
              "epsilon": epsilon, "q": q},
        details=details, extra=extra, notes=notes, ci_prob=ci_prob,
        ci_kind="hdi" if n_res else None,
        classical_ci_kind=(f"percentile bootstrap ({'instances' if group is None else 'texts'})"
                           if n_res else None),
        posterior=posterior, random_seed=seed,
        data_hash=data_hash(data))
