"""Classical validity: the multitrait-multimethod table (concurrent validity is in
:mod:`bayesmeta.validity.concurrent`).

MetricEval (Xiao et al. 2023) Sec. 3.2 and 4.1.2: correlations of system mean scores
across methods (raters, metric families) and traits, with consistency on the diagonal, and
the correlation of each metric with a criterion (e.g. expert ratings).

Both analyses take their inputs from the one selection layer,
:mod:`bayesmeta.data.select`, and report in the one table shape of
:mod:`bayesmeta.summaries` (index ``estimand`` then design labels; counts and cell labels in
``details()``).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr
from scipy import stats

from bayesmeta.correlation.measures import GROUPINGS, measure_draws
from bayesmeta.data import select
from bayesmeta.data.schema import owned_traits, validate
from bayesmeta.options import ResamplingOptions
from bayesmeta.reliability.classical import cronbach_alpha, feldt_interval
from bayesmeta.results import Result
from bayesmeta.summaries import CI_PROB, check_ci_prob
from bayesmeta.validity._cells import CELLS
from bayesmeta.validity.mtmm_factors import factor_mtmm

METHODS = ("pearson", "spearman", "kendall")



def correlation(x: np.ndarray, y: np.ndarray, method: str = "kendall") -> float:
    """Pearson, Spearman or Kendall tau-b of two vectors, on the pairs where both are
    observed; NaN when fewer than 3 pairs or a constant vector."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, got {method!r}.")
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    ok = ~(np.isnan(x) | np.isnan(y))
    x, y = x[ok], y[ok]
    if x.size < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    if method == "pearson":
        return float(stats.pearsonr(x, y)[0])
    if method == "spearman":
        return float(stats.spearmanr(x, y)[0])
    return float(stats.kendalltau(x, y, variant="b")[0])


def fisher_interval(r: np.ndarray, n: np.ndarray, ci_prob: float = CI_PROB, *,
                    coefficient: str = "pearson") -> tuple[np.ndarray, np.ndarray]:
    r"""Fisher-z interval of correlations from ``n`` independent pairs:
    :math:`\tanh(\operatorname{atanh} r \pm z_{(1+p)/2}\,\sigma_z)` with

    * Pearson: :math:`\sigma_z^2 = 1/(n-3)` (Fisher 1921), NaN where ``n <= 3``;
    * Spearman: :math:`\sigma_z^2 = (1 + r^2/2)/(n-3)` (Bonett & Wright 2000), NaN where
      ``n <= 3``;
    * Kendall tau-b: :math:`\sigma_z^2 = 0.437/(n-4)` (Fieller, Hartley & Pearson 1957),
      NaN where ``n <= 4``;

    and NaN where ``r`` is NaN.

    Examples
    --------
    >>> from bayesmeta.validity.classical import fisher_interval
    >>> lo, hi = fisher_interval(0.5, 28, 0.95)
    >>> round(float(lo), 4), round(float(hi), 4)
    (0.156, 0.7358)

    R equivalent: ``cor.test(x, y, conf.level = 0.95)$conf.int`` (Fisher z, Pearson);
    ``DescTools::SpearmanRho(x, y, conf.level = 0.95)`` uses 1/(n-3) instead of
    Bonett & Wright's variance.
    """
    _check_method(coefficient)
    r = np.asarray(r, dtype=float)
    n = np.asarray(n, dtype=float)
    q = stats.norm.ppf((1 + ci_prob) / 2)
    lost, scale = {"pearson": (3, 1.0), "spearman": (3, 1.0), "kendall": (4, 0.437)}[
        coefficient]
    with np.errstate(invalid="ignore", divide="ignore"):
        var = scale / np.where(n > lost, n - lost, 1.0)
        if coefficient == "spearman":
            var = var * (1 + r ** 2 / 2)
        se = np.where(n > lost, np.sqrt(var), np.nan)
        z = np.arctanh(np.clip(r, -1 + 1e-15, 1 - 1e-15))
        return np.tanh(z - q * se), np.tanh(z + q * se)


_KINDS = {"pearson": "Feldt F (alpha), Fisher z (correlations)",
          "spearman": "Feldt F (alpha), Fisher z with Bonett-Wright SE (correlations)",
          "kendall": "Feldt F (alpha), Fisher z with Fieller SE (correlations)"}


def _check_method(method: str) -> None:
    if method not in METHODS:
        raise ValueError(f"coefficient must be one of {', '.join(METHODS)}, got {method!r}.")


def _check_level(level: str) -> str:
    """The grouping, or a ValueError naming the groupings."""
    if level not in GROUPINGS:
        raise ValueError(f"level must be one of {', '.join(map(repr, GROUPINGS))}, got "
                         f"{level!r}.")
    return level


# ----------------------------------------------------------------------------- MTMM
class MTMMResult(Result):
    """A multitrait-multimethod table (see :func:`mtmm`)."""

    def _state(self) -> dict:
        return {"order": self._order}

    def _restore(self, state: dict) -> None:
        self._order = [tuple(x) for x in state.get("order", [])]

    def _cells(self) -> pd.DataFrame:
        """One row per cell: variable, variable2 (the same variable on the diagonal), their
        (trait, method), value, MetricEval label."""
        det = self._details.reset_index()
        det["classical"] = self._table["classical"].to_numpy()
        diag = det["estimand"] == "alpha"
        det.loc[diag, "variable2"] = det.loc[diag, "variable"]
        return det

    def matrix(self) -> pd.DataFrame:
        """The square table: rows and columns (trait, method); upper triangle correlations,
        diagonal consistency."""
        idx = pd.MultiIndex.from_tuples(self._order, names=["trait", "method"])
        out = pd.DataFrame(np.nan, index=idx, columns=idx)
        for row in self._cells().itertuples():
            out.loc[(row.trait, row.method), (row.trait2, row.method2)] = row.classical
        return out

    def _body(self) -> str:
        mat = self.matrix()
        cells = self._cells().set_index(["trait", "method", "trait2", "method2"])["evidence"]
        mark = {"reliability": "[{}]", "convergent": "*{}*", "divergent": "({})",
                "heterotrait-heteromethod": " {} "}
        shown = pd.DataFrame("", index=mat.index, columns=mat.columns)
        for i, a in enumerate(mat.index):
            for j, b in enumerate(mat.columns):
                if j < i:
                    shown.iloc[i, j] = "-"
                    continue
                v = mat.iloc[i, j]
                if pd.isna(v):
                    shown.iloc[i, j] = " . "
                    continue
                shown.iloc[i, j] = mark[cells.loc[(*a, *b)]].format(f"{v:.2f}")
        with pd.option_context("display.width", 250, "display.max_columns", 100):
            text = shown.to_string()
        return (text + "\n\n  [.] consistency (alpha): reliability diagonal   *.* convergent: "
                "same trait, different method (validity diagonal)\n  (.) divergent: different "
                "traits, same method (heterotrait-monomethod)   plain: "
                "heterotrait-heteromethod")


def _metric_method_trait(ds: xr.Dataset, metric: str) -> tuple[str, str]:
    """(method, trait) of a metric listed in ``metrics=``: the trait from the coordinate
    ``metric_trait`` or a ``"<name>.<trait>"`` label; the method is the name."""
    traits = [str(t) for t in ds["trait"].values] if "trait" in ds.coords else []
    trait = ""
    if "metric_trait" in ds.coords:
        trait = str(ds["metric_trait"].sel(metric=metric).values)
    head, _, tail = metric.rpartition(".")
    if not trait and head and tail in traits:
        trait = tail
    if not trait:
        raise ValueError(f"metrics: the trait of metric {metric!r} is unknown (no coordinate "
                         f"'metric_trait' and no '<name>.<trait>' label); give design= "
                         f"{{{metric!r}: (method, trait)}}.")
    method = head if head and tail == trait else metric
    return method, trait


def _mtmm_spec(ds: xr.Dataset, design: Any, metrics: Any, raters: Any, judgments: Any
               ) -> tuple[list[tuple[str, str, str]], dict[str, Any]]:
    """The variables (label, method, trait) and the selection for :func:`select.quantities`."""
    metric_names = [str(m) for m in ds["metric"].values] if "score" in ds else []
    judged = owned_traits(ds, "judgment") if "judgment" in ds else []
    if design is not None:
        if metrics is not None or raters is not None or judgments is not True:
            raise ValueError("give design= or metrics=/raters=/judgments=, not both: design "
                             "names every variable of the table.")
        if isinstance(design, pd.DataFrame):
            for col in ("variable", "method", "trait"):
                if col not in design.columns:
                    raise ValueError(f"design is missing column {col!r}.")
            spec = [(str(v), str(m), str(t)) for v, m, t in
                    design[["variable", "method", "trait"]].itertuples(index=False)]
        elif isinstance(design, Mapping):
            spec = [(str(v), str(mt[0]), str(mt[1])) for v, mt in design.items()]
        else:
            raise TypeError(f"design must be a dict {{variable: (method, trait)}} or a "
                            f"DataFrame, got {type(design).__name__}.")
        labels = [v for v, _, _ in spec]
        sel = {"metrics": [v for v in labels if v in metric_names],
               "judgments": [v for v in labels if v in judged and v not in metric_names]}
        sel["raters"] = [v for v in labels if v not in sel["metrics"] + sel["judgments"]]
        return spec, sel
    spec = []
    chosen = [] if metrics is None else select.check_metrics(ds, metrics)
    for m in chosen:
        method, trait = _metric_method_trait(ds, m)
        spec.append((m, method, trait))
    for r, t in select._rating_variables(ds, raters):
        spec.append((select.rating_label(r, t), str(r), str(t)))
    if judged and judgments is not False and judgments != []:
        picked = judged if judgments is True else [
            str(x) for x in select.check_labels(judged, list(judgments), "trait")]
        spec += [(t, "judgment", t) for t in picked]
    if not spec:
        raise ValueError("mtmm: nothing to tabulate: the data has no ratings or judgments "
                         "selected; give metrics= (with their traits) or design=.")
    sel = {"metrics": chosen,
           "raters": [v for v, m, t in spec if v not in chosen and m != "judgment"],
           "judgments": [v for v, m, _ in spec if m == "judgment" and v not in chosen]}
    return spec, sel


def mtmm(
    data: xr.Dataset,
    *,
    coefficient: str = "kendall",
    metrics: Sequence[str] | None = None,
    raters: bool | Sequence[str] | None = None,
    judgments: bool | Sequence[str] = True,
    run: Any = None,
    reference: Any = "first",
    normalize: bool = False,
    level: str = "system",
    ci_prob: float = CI_PROB,
    design: Mapping[str, tuple[str, str]] | pd.DataFrame | None = None,
    fit: Any = None,
    methods: Mapping[str, Mapping[str, str]] | None = None,
    expert: str = "Expert",
    score_method: str = "EBM",
    resampling: ResamplingOptions | Mapping[str, Any] | None = None,
    random_seed: int | None = None,
) -> MTMMResult | Result:
    r"""Multitrait-multimethod table of correlations (Campbell & Fiske, 1959).

    Each variable (a rater x trait rating, a continuous judgment or a metric) is averaged
    over items per system; off-diagonal cells are correlations of these system means
    (Kendall tau-b by default, as MetricEval Table 1), diagonal cells are each variable's
    consistency (coefficient alpha, :func:`~bayesmeta.reliability.classical.cronbach_alpha`,
    systems as examinees and items as test items). Every cell is labelled with Campbell &
    Fiske's block: ``reliability diagonal``, ``validity diagonal`` (same trait, different
    method; MetricEval's *convergent*), ``heterotrait-monomethod`` (MetricEval's
    *divergent*) or ``heterotrait-heteromethod``.

    Parameters
    ----------
    data : xarray.Dataset
        A bayesmeta dataset.
    coefficient : {"kendall", "spearman", "pearson"}
        Correlation coefficient of the off-diagonal cells.
    metrics : list of str, optional
        Metrics to add as variables (default none: a metric's method and trait must be
        known). The trait comes from the coordinate ``metric_trait`` or a
        ``"<name>.<trait>"`` label, the method is the name; use ``design=`` otherwise.
    raters : None, bool or list of str
        Ratings to include, labelled ``"<rater>.<trait>"`` with the rater as method:
        None/True all, False none, or raters and ``"<rater>.<trait>"`` labels.
    judgments : bool or list of str
        Continuous judgments to include (method ``"judgment"``, labelled by their trait).
    run, reference
        Metric run and reference reduction (:func:`bayesmeta.data.select.pick_run`,
        :func:`~bayesmeta.data.select.pick_reference`).
    normalize : bool
        Rank-normalise every variable over all outputs before averaging per system
        (MetricEval App. A.2). MetricEval's Table 1 was computed this way: with
        ``normalize=True`` its cells are reproduced to two decimals.
    level : {"system", "within_system", "within_item", "global"}
        Grouping of the off-diagonal correlations (paper 001); MTMM tables are system
        level (default).
    ci_prob : float
        Probability of the classical intervals: Feldt's F interval of each alpha
        (:func:`~bayesmeta.reliability.classical.feldt_interval`, n = systems, k = items)
        and, at system level, the Fisher-z interval of each correlation
        (:func:`fisher_interval`, n = systems with both means).
    design : dict or DataFrame, optional
        The variables and their (method, trait): ``{variable: (method, trait)}`` or a frame
        with columns ``variable``, ``method``, ``trait``; variables are metric names,
        rating labels ``"<rater>.<trait>"`` or judgment traits. Replaces
        ``metrics``/``raters``/``judgments``.
    fit : CFA result, optional
        The MTMM of the experts' *factor scores* (a ``bm.cfa`` fit, WLSMV or Bayesian) and
        metric families instead of the ratings (MetricEval App. A.5, Table 2), with
        intervals and Campbell & Fiske's criteria as probabilities
        (:func:`bayesmeta.validity.mtmm_factors.factor_mtmm` documents it). Takes
        ``methods``, ``expert``, ``score_method``, ``resampling`` and ``random_seed``; the
        options of the table of ratings (``metrics``, ``raters``, ``judgments``,
        ``normalize``, ``level``, ``design``) do not apply.
    methods : dict, optional
        With ``fit``: ``{method: {factor: metric}}`` (default: metric families whose names
        end in a factor, e.g. ``G.EVAL.4.COH``).
    expert : str
        With ``fit``: the method label of the factor scores.
    score_method : {"EBM", "regression"}
        With ``fit`` (WLSMV): how the factor scores are computed.
    resampling : ResamplingOptions or dict, optional
        With ``fit``: the bootstrap (classical fit) or Bayesian bootstrap of items.
    random_seed : int, optional
        With ``fit``: the seed (drawn and recorded when None).

    Returns
    -------
    MTMMResult
        ``summary()`` indexed by ``(estimand, variable, variable2)``: ``("correlation", a,
        b)`` for each pair of variables (upper triangle, in table order) and ``("alpha", a,
        "")`` for the diagonal, columns ``classical``, ``classical_low``,
        ``classical_high``. ``details()``: ``cell`` (Campbell &
        Fiske's block), ``evidence`` (MetricEval's label: reliability, convergent,
        divergent, heterotrait-heteromethod), ``trait``, ``method``, ``trait2``,
        ``method2``, ``n`` (systems with both system means for a system-level correlation,
        outputs with both scores at other levels; systems for alpha). ``matrix()``: the
        square table; ``print()``: the formatted table.

    References
    ----------
    Campbell & Fiske (1959), Psychological Bulletin 56(2); Xiao et al. (2023), *Evaluating
    Evaluation Metrics*, Sec. 3.2, Table 1.

    Examples
    --------
    >>> import bayesmeta as bm
    >>> from bayesmeta.summaries import check_table
    >>> res = bm.mtmm(bm.datasets.simulated())
    >>> check_table(res.summary())
    >>> res.summary().index.names
    FrozenList(['estimand', 'variable', 'variable2'])
    >>> sorted(res.details()["cell"].unique())  # doctest: +NORMALIZE_WHITESPACE
    ['heterotrait-heteromethod', 'heterotrait-monomethod', 'reliability diagonal',
     'validity diagonal']
    >>> res.matrix().shape
    (12, 12)

    R equivalent (one cell): ``cor(rowMeans(x), rowMeans(y), method = "kendall")`` for two
    (system x item) score matrices; the diagonal ``psych::alpha(t(x))$total$raw_alpha``.
    """
    if fit is not None:
        ratings_only = {"metrics": metrics is not None, "raters": raters is not None,
                        "judgments": judgments is not True, "normalize": normalize is not False,
                        "level": level != "system", "design": design is not None}
        given = [name for name, is_set in ratings_only.items() if is_set]
        if given:
            raise ValueError(f"mtmm(fit=...) tabulates factor scores and metric families; "
                             f"{', '.join(given)} apply to the table of ratings only.")
        return factor_mtmm(data, fit, methods=methods, coefficient=coefficient, expert=expert,
                           score_method=score_method, run=run, reference=reference,
                           ci_prob=ci_prob, resampling=resampling, random_seed=random_seed)
    fit_only = {"methods": methods is not None, "expert": expert != "Expert",
                "score_method": score_method != "EBM", "resampling": resampling is not None,
                "random_seed": random_seed is not None}
    given = [name for name, is_set in fit_only.items() if is_set]
    if given:
        raise ValueError(f"{', '.join(given)} apply to mtmm(fit=...) only (the MTMM of "
                         f"factor scores); the table of ratings draws nothing.")
    validate(data, warn_missing=False)
    _check_method(coefficient)
    method = coefficient
    level = _check_level(level)
    ci_prob = check_ci_prob(ci_prob)
    spec, sel = _mtmm_spec(data, design, metrics, raters, judgments)
    # group by trait, then method, each in order of first appearance (MetricEval's layout)
    trait_order = list(dict.fromkeys(t for _, _, t in spec))
    method_order = list(dict.fromkeys(m for _, m, _ in spec))
    spec.sort(key=lambda x: (trait_order.index(x[2]), method_order.index(x[1])))
    q = select.quantities(data, metrics=sel["metrics"], raters=sel["raters"] or False,
                          judgments=sel["judgments"], run=run, reference=reference,
                          normalize=normalize)
    q = q.sel(variable=[v for v, _, _ in spec])
    y = np.asarray(q.values, dtype=float)  # (V, S, I)
    alpha = cronbach_alpha(y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        means = np.nanmean(y, axis=2)
    observed = ~np.isnan(means)
    rows = []
    for i, (vi, mi, ti) in enumerate(spec):
        for j in range(i, len(spec)):
            vj, mj, tj = spec[j]
            if i == j:
                rows.append(("alpha", vi, "", float(alpha[i]), "reliability", ti, mi, ti, mi,
                             int(observed[i].sum())))
                continue
            if level == "system":
                val = correlation(means[i], means[j], method)
            else:
                val = float(measure_draws(y[i][None], y[j],
                                          measures=[f"{level}_{method}"])[0, 0, 0])
            if ti == tj:
                cell = "convergent"
            elif mi == mj:
                cell = "divergent"
            else:
                cell = "heterotrait-heteromethod"
            both = (observed[i] & observed[j]) if level == "system" else (
                ~np.isnan(y[i]) & ~np.isnan(y[j]))
            rows.append(("correlation", vi, vj, val, cell, ti, mi, tj, mj, int(both.sum())))
    frame = pd.DataFrame(rows, columns=["estimand", "variable", "variable2", "classical",
                                        "evidence", "trait", "method", "trait2", "method2",
                                        "n"])
    frame.insert(4, "cell", frame["evidence"].map(CELLS))
    # classical intervals: Feldt's F for the alpha diagonal (systems x items), Fisher z for
    # a system-level correlation; none for the other levels (outputs are not independent)
    is_alpha = (frame["estimand"] == "alpha").to_numpy()
    n = frame["n"].to_numpy(dtype=float)
    est = frame["classical"].to_numpy(dtype=float)
    a_lo, a_hi = feldt_interval(est, n, y.shape[2], ci_prob)
    if level == "system":
        r_lo, r_hi = fisher_interval(est, n, ci_prob, coefficient=method)
    else:
        r_lo = r_hi = np.full(len(frame), np.nan)
    frame.insert(4, "classical_low", np.where(is_alpha, a_lo, r_lo))
    frame.insert(5, "classical_high", np.where(is_alpha, a_hi, r_hi))
    frame = frame.set_index(["estimand", "variable", "variable2"])
    scope = "system" if level == "system" else level
    notes = [] if level == "system" else [
        f"Only the alpha diagonal has a classical interval: a {level} correlation pools "
        f"outputs that are not independent, so no Fisher-z interval is given for it."]
    res = MTMMResult(frame, title=f"Multitrait-multimethod table ({scope} level)",
                     info={"data": select.describe(data), "correlation": method,
                           "level": level, "diagonal": "consistency (coefficient alpha)",
                           "scores": "rank-normalised" if normalize else "raw"},
                     ci_prob=ci_prob, classical_ci_kind=_KINDS[method] if level == "system"
                     else "Feldt F (alpha only)", notes=notes)
    res._order = [(t, m) for _, m, t in spec]
    return res


__all__ = ["CELLS", "METHODS", "correlation", "fisher_interval", "mtmm"]
