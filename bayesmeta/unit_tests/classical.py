r"""Metric unit tests (paper 004, MUTT): pass rules, accuracies with intervals, posteriors.

A *trial* is one (original, corrupted) pair scored against the same references. The
pass rule depends on the corruption's category (Boag et al. 2016, Sec. 6):

* meaning-altering, fluency-disrupting (and coherence) corruptions: the metric passes
  when it prefers the original, :math:`s_{orig} > s_{corr}` (:math:`s_{orig} <
  s_{corr}` for a lower-is-better metric such as TER);
* meaning-preserving corruptions: the *Difference formula*, the metric passes when the two
  scores are within a tolerance (15%):

  .. math:: \frac{|s_{orig} - s_{corr}|}{|s_{orig}| + \varepsilon} \le 0.15,
            \qquad \varepsilon = 10^{-9}.

  (The paper writes :math:`s_{orig} + \varepsilon`; for non-negative scores, all of the
  paper's, the two agree.)

Ties (scores equal up to ``tie_tol`` relative) are counted and reported separately; under
the strict inequality a tie fails, as in the paper. The accuracy of a cell (corruption x
metric x number of references) is the share of passing pairs, with an exact
Clopper-Pearson interval; the posteriors of :mod:`bayesmeta.unit_tests.pass_rates` go
beside it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayesmeta.options import ResamplingOptions, resolve_seed
from bayesmeta.results import Result
from bayesmeta.summaries import CI_PROB, check_ci_prob
from bayesmeta.unit_tests import _tables as tables
from bayesmeta.vocabulary import resampling_options

#: Pass rule of each category ("difference": within tolerance; "greater": original wins).
RULES = {"meaning_altering": "greater", "meaning_preserving": "difference",
         "fluency": "greater", "coherence": "greater"}
EPS = 1e-9


def _plain(value: Any) -> Any:
    """A NumPy scalar as the Python value (for error messages)."""
    return value.item() if isinstance(value, np.generic) else value


def _first(frame: pd.DataFrame) -> dict[str, Any]:
    """The first row of a frame with plain Python values (for error messages)."""
    return {k: _plain(v) for k, v in frame.iloc[0].items()}


def pass_outcomes(score_original: np.ndarray, score_corrupted: np.ndarray, *, rule: str,
                  direction: str = "higher", tolerance: float = 0.15, tie_tol: float = 1e-12
                  ) -> tuple[np.ndarray, np.ndarray]:
    r"""Pass and tie flags of unit-test trials.

    Parameters
    ----------
    score_original, score_corrupted : array
        The metric's scores of the original and of the corrupted text.
    rule : {"greater", "difference"}
        ``greater``: the original must score better (strictly); ``difference``: the two
        scores must lie within ``tolerance`` of the original's (Difference formula).
    direction : {"higher", "lower"}
        Whether higher scores are better (``greater`` only).
    tolerance : float
        The Difference formula's bound (paper: 0.15).
    tie_tol : float
        Scores whose difference is at most ``tie_tol * max(|s_orig|, |s_corr|)`` are a tie
        (floating-point noise, e.g. CIDEr summed in a different order, must not decide a
        trial).

    Returns
    -------
    passed, tie : boolean arrays

    Examples
    --------
    >>> import numpy as np
    >>> pass_outcomes(np.array([0.5, 0.5, 0.4]), np.array([0.3, 0.5, 0.6]), rule="greater")
    (array([ True, False, False]), array([False,  True, False]))
    >>> pass_outcomes(np.array([1.0, 1.0]), np.array([0.9, 0.8]), rule="difference")[0]
    array([ True, False])
    """
    so = np.asarray(score_original, float)
    sc = np.asarray(score_corrupted, float)
    tie = np.abs(so - sc) <= tie_tol * np.maximum(np.abs(so), np.abs(sc))
    if rule == "greater":
        if direction not in ("higher", "lower"):
            raise ValueError(f"direction must be 'higher' or 'lower', got {direction!r}.")
        better = so > sc if direction == "higher" else so < sc
        return better & ~tie, tie
    if rule == "difference":
        if not tolerance >= 0:
            raise ValueError(f"tolerance must be >= 0, got {tolerance!r}.")
        return (np.abs(so - sc) / (np.abs(so) + EPS) <= tolerance) | tie, tie
    raise ValueError(f"rule must be 'greater' or 'difference', got {rule!r}.")


class UnitTestResult(Result):
    """Result of :func:`metric_unit_tests`: :meth:`accuracy` gives the paper's layout."""

    def accuracy(self, estimand: str = "pass_rate", column: str = "classical",
                 percent: bool = True) -> pd.DataFrame:
        """Pass rates as the paper prints them: rows (corruption, metric), columns n_refs.

        Examples
        --------
        >>> # res.accuracy().loc["det_sub"]  -> Table 5's "6. DT Substitution" block
        """
        tab = self.summary().xs(estimand, level="estimand")[column]
        wide = tab.droplevel(["category", "metric2"]).unstack("n_refs")
        try:
            wide = wide[sorted(wide.columns, key=float)]
        except (TypeError, ValueError):
            pass
        return wide * (100.0 if percent else 1.0)


def _n_refs_label(value: Any) -> Any:
    """An ``n_refs`` cell as one label: whole numbers (``5``, ``5.0``, ``"5"``) as int,
    anything else (``"all"``) as stripped text; a missing cell raises."""
    if value is None or (isinstance(value, float) and np.isnan(value)):
        raise ValueError("column 'n_refs' has a missing value; every row needs its number of "
                         "references (or 'all').")
    text = str(value).strip()
    try:
        number = float(text)
    except ValueError:
        return text
    if number.is_integer():
        return int(number)
    raise ValueError(f"column 'n_refs' holds {value!r}, which is not a whole number of "
                     f"references.")


def _score_table(data: pd.DataFrame, directions: Mapping[str, str] | None) -> pd.DataFrame:
    need = ["corruption", "metric", "pair_id", "score_original", "score_corrupted"]
    missing = [c for c in need if c not in data.columns]
    if missing:
        raise ValueError(f"the score table lacks column(s) {missing} (needs corruption, "
                         "category, metric, n_refs, pair_id, score_original, "
                         "score_corrupted).")
    out = data.copy()
    if "category" not in out.columns:
        from bayesmeta.text.corruptions import CATEGORIES

        unknown = sorted(set(out["corruption"]) - set(CATEGORIES))
        if unknown:
            raise ValueError(f"corruption(s) {unknown} are not built in: give a 'category' "
                             "column.")
        out["category"] = out["corruption"].map(CATEGORIES)
    if "n_refs" not in out.columns:
        out["n_refs"] = "all"
    else:  # 5, 5.0 and "5" are one level (mixed types would split a group, issue 21)
        out["n_refs"] = out["n_refs"].map(_n_refs_label)
    for col in ("score_original", "score_corrupted"):
        if not pd.api.types.is_numeric_dtype(out[col]):
            raise ValueError(f"column {col!r} must be numeric, got dtype {out[col].dtype}.")
        inf = np.isinf(out[col].to_numpy(float))
        if inf.any():
            r = _first(out[inf])
            raise ValueError(f"column {col!r} holds an infinite value (metric "
                             f"{r['metric']!r}, corruption {r['corruption']!r}, pair_id "
                             f"{r['pair_id']!r}).")
    given = dict(directions or {})
    if "direction" not in out.columns:
        out["direction"] = out["metric"].map(lambda m: given.get(m, "higher"))
    else:
        for m, d in given.items():
            out.loc[out["metric"] == m, "direction"] = d
    bad = sorted(set(out["direction"]) - {"higher", "lower"})
    if bad:
        raise ValueError(f"direction must be 'higher' or 'lower', got {bad}.")
    dup = out.duplicated(["corruption", "metric", "n_refs", "pair_id"])
    if dup.any():
        r = _first(out[dup])
        raise ValueError(f"duplicate row for corruption {r['corruption']!r}, metric "
                         f"{r['metric']!r}, n_refs {r['n_refs']!r}, pair_id {r['pair_id']!r}.")
    return out


def _to_scores(data: Any, *, metrics: Any, references: Any, corruptions: Any,
               directions: Mapping[str, str] | None, seed: int, progress: bool | None
               ) -> tuple[pd.DataFrame, list[str], pd.DataFrame | None]:
    if isinstance(data, pd.DataFrame) and "score_original" in data.columns:
        return _score_table(data, directions), [], None
    if metrics is None or references is None:
        raise ValueError("texts or pairs need metrics= (names or callables) and references=; "
                         "a precomputed score table needs neither.")
    from bayesmeta.text.corruptions import corrupt, coverage
    from bayesmeta.text.metrics import get_metric
    from bayesmeta.text.scoring import score_pairs

    cov = None
    if isinstance(data, pd.DataFrame):
        pairs = data
        if corruptions is not None:
            from bayesmeta.text.corruptions import resolve_kinds

            pairs = pairs[pairs["corruption"].isin(resolve_kinds(corruptions))]
    else:
        table = corrupt(data, kind=corruptions or "all", random_seed=seed, progress=bool(
            progress))
        cov = coverage(table)
        pairs = table[table["applied"]].rename(columns={"text_id": "pair_id"})
        positions = {tid: k for k, tid in enumerate(dict.fromkeys(table["text_id"]))}
        pairs = pairs.assign(_row=pairs["pair_id"].map(positions))
    mets = [get_metric(m, direction=(directions or {}).get(getattr(m, "name", m)))
            if isinstance(m, str) else get_metric(m) for m in metrics]
    scores = score_pairs(pairs, references, mets, progress=progress)
    return _score_table(scores, directions), list(scores.attrs.get("notes", [])), cov


def metric_unit_tests(
    data: pd.DataFrame | Sequence[str] | pd.Series,
    *,
    metrics: Sequence[Any] | None = None,
    references: Any = None,
    corruptions: str | Sequence[str] | None = None,
    directions: Mapping[str, str] | None = None,
    rules: Mapping[str, str] | None = None,
    tolerance: float = 0.15,
    tie_tol: float = 1e-12,
    pooled: bool = True,
    compare: bool = True,
    prior: tuple[float, float] = (1.0, 1.0),
    resampling: ResamplingOptions | Mapping[str, Any] | None = None,
    ci_prob: float = CI_PROB,
    random_seed: int | None = None,
    progress: bool | None = None,
) -> UnitTestResult:
    r"""Metric unit tests (MUTT): how often a metric notices a known corruption.

    Parameters
    ----------
    data : DataFrame or texts
        One of: a **score table** (``corruption``, ``category``, ``metric``, ``n_refs``,
        ``pair_id``, ``score_original``, ``score_corrupted``, optional ``direction``), so
        scores computed elsewhere can be tested; a **pairs table** (``corruption``,
        ``pair_id``, ``original``, ``corrupted``) to score with ``metrics``; or **texts**
        (str list or Series) to corrupt with :func:`bayesmeta.corrupt` and score.
    metrics : list, optional
        Built-in metric names (``bleu``, ``chrf``, ``ter``, ``rouge1``, ``rougeL``,
        ``BLEU``/``coco_bleu4``, ``CIDEr``, ``METEOR``), Metric objects or callables
        ``f(candidates, references) -> scores``. Needed unless ``data`` holds scores.
    references : DataFrame, list of reference lists or dict {n_refs: ...}
        The references of each pair (see :func:`bayesmeta.text.scoring.reference_sets`).
    corruptions : str or list, optional
        Which corruptions to generate or keep (names, categories, "all").
    directions : dict, optional
        ``{metric: "higher" | "lower"}`` for metrics of a score table or callables.
    rules : dict, optional
        ``{corruption: "greater" | "difference"}`` overriding the category's rule.
    tolerance : float
        Bound of the Difference formula (paper: 0.15).
    tie_tol : float
        Relative tolerance under which two scores are a tie (see :func:`pass_outcomes`).
    pooled : bool
        Add the hierarchical pass rates (``pass_rate_pooled``) across the corruptions of
        each category.
    compare : bool
        Add paired comparisons of every two metrics (``pass_rate_difference``) and of the
        numbers of references (``refs_effect``).
    prior : (a, b)
        Beta prior of the per-cell pass rate (default uniform).
    resampling : ResamplingOptions or dict, optional
        ``n_resamples``: posterior draws per quantity (exact draws: no MCMC; default here
        8,000).
    ci_prob : float
        Probability of every interval (classical and posterior).
    random_seed : int, optional
        Seeds the corruptions and the posterior draws; drawn and recorded when omitted.
    progress : bool, optional
        Progress bar while scoring (default: on for long runs).

    Returns
    -------
    UnitTestResult
        Index ``(estimand, corruption, category, metric, metric2, n_refs)``. Estimands:
        ``pass_rate`` (classical accuracy, Clopper-Pearson interval, Beta-Binomial
        posterior), ``pass_rate_pooled`` (hierarchical posterior), ``pass_rate_difference``
        (metric - metric2 on the same pairs: paired Wald interval, Dirichlet posterior),
        ``refs_effect`` (pass rate with more minus fewer references, ``n_refs`` like
        ``"5->20"``). ``details()``: ``n_pairs``, ``n_pass``, ``n_tie``, ``n_fail``,
        ``rule``, ``direction``, ``tolerance``, ``n_discordant``, ``p_beats`` (posterior
        probability that the first passes more often), ``pvalue`` (exact McNemar).
        ``extra["pairs"]``: every trial with its scores and outcome.

    Notes
    -----
    Pass rules, Difference formula and ties: see :mod:`bayesmeta.unit_tests.classical`.
    Models: :mod:`bayesmeta.unit_tests.pass_rates`. There is no R package for MUTT; the
    per-cell classical interval equals R's ``binom.test(k, n)$conf.int``.

    References
    ----------
    Boag, Campos, Saenko, Rumshisky (2016). MUTT: Metric Unit TesTing for Language
    Generation Tasks. ACL. Sec. 6, Tables 4-6.

    Examples
    --------
    >>> import pandas as pd, bayesmeta as bm
    >>> scores = pd.DataFrame({"corruption": "neg_verb", "metric": "m", "n_refs": 5,
    ...                        "pair_id": range(4), "score_original": [.5, .6, .7, .2],
    ...                        "score_corrupted": [.4, .6, .1, .3]})
    >>> res = bm.metric_unit_tests(scores, random_seed=0)
    >>> float(res.summary().loc[("pass_rate", "neg_verb", "meaning_altering", "m", "",
    ...                          "5"), "classical"])
    0.5
    """
    n_draws = resampling_options(resampling, n_resamples=8000).n_resamples
    ci_prob = check_ci_prob(ci_prob)
    seed = resolve_seed(random_seed)
    scores, notes, cov = _to_scores(data, metrics=metrics, references=references,
                                    corruptions=corruptions, directions=directions,
                                    seed=seed, progress=progress)
    rule_of = scores["category"].map(RULES).astype(object)
    for corr, r in (rules or {}).items():
        rule_of[scores["corruption"] == corr] = r
    if rule_of.isna().any():
        r = scores[rule_of.isna()].iloc[0]
        raise ValueError(f"corruption {r['corruption']!r} has category {r['category']!r}, "
                         f"which has no pass rule (categories: {', '.join(RULES)}); give "
                         f"rules={{{r['corruption']!r}: 'greater' or 'difference'}}.")
    bad = sorted(set(rule_of) - {"greater", "difference"})
    if bad:
        raise ValueError(f"rules must be 'greater' or 'difference', got {bad}.")
    scores["rule"] = rule_of
    missing = scores[["score_original", "score_corrupted"]].isna().any(axis=1)
    if missing.any():
        lost = scores[missing].groupby(["metric", "corruption"]).size()
        notes.append("pairs left out for a missing score: " + ", ".join(
            f"{m}/{c}: {k}" for (m, c), k in lost.items()) + ".")
        scores = scores[~missing]
    if scores.empty:
        raise ValueError("no scored pair to test.")
    passed = np.zeros(len(scores), bool)
    tie = np.zeros(len(scores), bool)
    for (r, d), idx in scores.groupby(["rule", "direction"]).indices.items():
        passed[idx], tie[idx] = pass_outcomes(
            scores["score_original"].to_numpy()[idx], scores["score_corrupted"].to_numpy()[idx],
            rule=r, direction=d, tolerance=tolerance, tie_tol=tie_tol)
    scores = scores.assign(passed=passed.astype(float), tie=tie)
    keys = ["corruption", "category", "metric", "n_refs"]
    cells = scores.groupby(keys, sort=False).agg(
        n_pairs=("passed", "size"), n_pass=("passed", "sum"), n_tie=("tie", "sum"),
        rule=("rule", "first"), direction=("direction", "first")).reset_index()
    cells["n_pass"] = cells["n_pass"].astype(int)
    cells["n_fail"] = cells["n_pairs"] - cells["n_pass"]
    cells["tolerance"] = np.where(cells["rule"] == "difference", tolerance, np.nan)
    rng = np.random.default_rng(seed)
    frames = [tables.cell_rows(cells, ci_prob=ci_prob, rng=rng, n_draws=n_draws, prior=prior)]
    if pooled:
        f, more = tables.pooled_rows(cells, ci_prob=ci_prob, rng=rng, n_draws=n_draws)
        frames.append(f)
        notes += more
    if compare:
        mets = list(dict.fromkeys(scores["metric"]))
        frames.append(tables.comparison_rows(scores, mets, ci_prob=ci_prob, rng=rng,
                                             n_draws=n_draws))
        frames.append(tables.refs_rows(scores, ci_prob=ci_prob, rng=rng, n_draws=n_draws))
    full = pd.concat([f for f in frames if len(f)])
    for col in ("rule", "direction"):
        full[col] = full[col].fillna("")  # text details: "" where a row has none
    n_ties = int(cells["n_tie"].sum())
    if n_ties:
        notes.append(f"{n_ties} trials are ties (scores equal up to {tie_tol:g} relative): "
                     "they fail the strict rule s_orig > s_corr and pass the Difference "
                     "formula; details() counts them per cell (n_tie).")
    pairs = scores[["corruption", "metric", "n_refs", "pair_id", "score_original",
                    "score_corrupted", "passed", "tie"]].astype(
        {"corruption": str, "metric": str, "n_refs": str, "pair_id": str})
    extra: dict[str, xr.DataArray | xr.Dataset] = {
        "pairs": xr.Dataset.from_dataframe(pairs.reset_index(drop=True).rename_axis("trial"))}
    if cov is not None:
        extra["coverage"] = xr.Dataset.from_dataframe(cov.drop(columns="top_reason"))
        notes.append("generator coverage: " + ", ".join(
            f"{k} {v:.0%}" for k, v in cov["coverage"].items()) + ".")
    from bayesmeta.results import data_hash

    hashed = scores[["score_original", "score_corrupted"]].to_numpy(float)
    return UnitTestResult(
        full, title="Metric unit tests (MUTT): pass rates by corruption, metric and "
                    "number of references",
        info={"trials": len(scores), "metrics": ", ".join(dict.fromkeys(scores["metric"])),
              "corruptions": ", ".join(dict.fromkeys(scores["corruption"])),
              "pass rules": f"s_orig > s_corr (meaning altering, fluency); |s_orig - s_corr| "
                            f"/ s_orig <= {tolerance:g} (meaning preserving)"},
        extra=extra, notes=notes, ci_prob=ci_prob, ci_kind="hdi",
        classical_ci_kind="Clopper-Pearson exact (pass rates); Wald paired (differences)",
        posterior="exact Beta-Binomial / grid hierarchical / Dirichlet posterior draws",
        random_seed=seed, data_hash=data_hash(hashed))


__all__ = ["RULES", "UnitTestResult", "metric_unit_tests", "pass_outcomes"]
