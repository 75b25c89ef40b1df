"""Per-metric data-quality checks: what is wrong with a metric's scores before any analysis.

:func:`data_quality` looks at every metric of a dataset and returns ONE table of findings,
one row per (metric, finding), each with the reason in words:

``near-empty``
    most of the metric's values are missing (more than ``max_missing``).
``constant``
    every value is the same: no correlation, reliability or ranking is defined.
``tied``
    few distinct values (at most ``min_distinct``), or one value holds most outputs
    (``max_tied_share``): rank correlations and pairwise accuracies are mostly ties.
``underflow``
    every magnitude is below ``tiny`` (1e-30): products and squares lose precision or
    underflow to zero (paper 002's Newsroom BLEU, every value <= 4e-78, is such a metric:
    sentence BLEU without a 4-gram match).
``overflow``
    a magnitude above ``huge`` (1e150): squares and sums overflow double precision.
    (:func:`bayesmeta.correlation.measures.measure_draws` rescales each metric by a power
    of two first, so correlations are right; other computations may not be.)
``suspicious direction``
    the metric correlates negatively with the human score at system level (Spearman over
    system means; over outputs when the data has fewer than 3 systems) while most metrics
    correlate positively, or its name says lower is better (distance, error, TER, WER,
    perplexity, divergence, BaryScore, DepthScore, InfoLM). Declare such metrics with
    ``lower_is_better=`` when reading (CLI ``--lower-is-better``); a metric so declared
    is checked on its negated scores and not flagged by name.

The checks read the scores through :func:`bayesmeta.data.select.metric_scores` (the one
data-selection layer), except the value checks, which read every run and reference.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd
import xarray as xr

from bayesmeta.data import select
from bayesmeta.data._columns import _tokens

COLUMNS = ("metric", "finding", "reason", "value")
FINDINGS = ("near-empty", "constant", "tied", "underflow", "overflow", "suspicious direction")

#: name tokens of lower-is-better metrics
_LOWER_TOKENS = {
    "distance", "dist", "error", "errors", "err", "ter", "wer", "cer", "hter", "perplexity",
    "ppl", "loss", "divergence", "kl", "baryscore", "depthscore", "infolm", "edit",
    "levenshtein",
}
_LOWER_NAMES = re.compile(r"bary_?score|depth_?score|info_?lm", re.IGNORECASE)


def lower_is_better_name(name: str) -> bool:
    """A metric name that says lower is better: ``TER``, ``wer``, ``edit_distance``,
    ``perplexity``, ``BaryScore``, ``DepthScore``, ``InfoLM`` (tokens of the name).

    Examples
    --------
    >>> from bayesmeta.data.quality import lower_is_better_name
    >>> [lower_is_better_name(n) for n in ("TER", "baryscore_w", "bleu", "BERTScore")]
    [True, True, False, False]
    """
    return bool(_LOWER_NAMES.search(str(name))) or any(
        t in _LOWER_TOKENS for t in _tokens(name))


def _spearman(x: np.ndarray, y: np.ndarray) -> float:
    ok = np.isfinite(x) & np.isfinite(y)
    if ok.sum() < 3:
        return np.nan
    xr_ = pd.Series(x[ok]).rank().to_numpy()
    yr = pd.Series(y[ok]).rank().to_numpy()
    if np.ptp(xr_) == 0 or np.ptp(yr) == 0:
        return np.nan
    return float(np.corrcoef(xr_, yr)[0, 1])


def _direction_correlations(ds: xr.Dataset, traits: Sequence[str], run, reference
                            ) -> tuple[dict[str, float], str]:
    """Each metric's mean (over traits) Spearman correlation with the human score, at
    system level (>= 3 systems) or over outputs, on the oriented scores."""
    x = select.metric_scores(ds, run=run, reference=reference)
    xv = np.asarray(x.values, dtype=float)
    system_level = x.sizes["system"] >= 3
    out: dict[str, list[float]] = {str(m): [] for m in x["metric"].values}
    for t in traits:
        h = np.asarray(select.human_score(ds, t).values.transpose("system", "item").values,
                       dtype=float)
        for k, m in enumerate(out):
            v = xv[k]
            if system_level:
                both = np.isfinite(v) & np.isfinite(h)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    a = np.nanmean(np.where(both, v, np.nan), axis=1)
                    b = np.nanmean(np.where(both, h, np.nan), axis=1)
                r = _spearman(a, b)
            else:
                r = _spearman(v.ravel(), h.ravel())
            if np.isfinite(r):
                out[m].append(r)
    level = "system level (Spearman of system means)" if system_level else \
        "output level (Spearman over outputs; fewer than 3 systems)"
    return {m: float(np.mean(r)) for m, r in out.items() if r}, level


def data_quality(
    data: xr.Dataset,
    *,
    traits: Sequence[str] | str | None = None,
    run=None,
    reference="first",
    max_missing: float = 0.5,
    min_distinct: int = 5,
    max_tied_share: float = 0.5,
    tiny: float = 1e-30,
    huge: float = 1e150,
) -> pd.DataFrame:
    """Per-metric data-quality findings, one row per (metric, finding), with the reason.

    Parameters
    ----------
    data : xarray.Dataset
        A validated dataset with a ``score`` variable.
    traits : str or list of str, optional
        The human traits that define the direction check (default every trait with human
        scores; none: the check is skipped).
    run, reference
        The run and reference of the direction check
        (:func:`bayesmeta.data.select.metric_scores`).
    max_missing : float
        Share of missing values above which a metric is ``near-empty``.
    min_distinct : int
        At most this many distinct values: ``tied``.
    max_tied_share : float
        One value held by more than this share of the values: ``tied``.
    tiny, huge : float
        Magnitude bounds of ``underflow`` (every |x| below ``tiny``) and ``overflow`` (some
        |x| above ``huge``).

    Returns
    -------
    pandas.DataFrame
        Columns ``metric``, ``finding`` (one of ``near-empty``, ``constant``, ``tied``,
        ``underflow``, ``overflow``, ``suspicious direction``), ``reason`` (words) and
        ``value`` (the number behind the finding: the share missing, the number of distinct
        values, the largest magnitude, the correlation). Empty (same columns) when no
        metric has a finding; ``attrs["checked"]`` counts the metrics checked.

    Examples
    --------
    >>> import numpy as np, pandas as pd, bayesmeta as bm
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame({"system": np.repeat(list("ABCD"), 5), "item": np.tile(range(5), 4),
    ...                    "human": rng.normal(size=20), "good": rng.normal(size=20),
    ...                    "const": 0.5, "bleu": rng.random(20) * 1e-78})
    >>> q = bm.data_quality(bm.from_wide(df, human=["human"], metrics=["good", "const", "bleu"]))
    >>> q[["metric", "finding"]].values.tolist()
    [['const', 'constant'], ['bleu', 'underflow']]
    """
    if "score" not in data:
        raise ValueError("data has no 'score' variable, so there are no metrics to check.")
    score = data["score"]
    other = [d for d in score.dims if d != "metric"]
    rows: list[tuple[str, str, str, float]] = []
    hib = (data["higher_is_better"].values.astype(bool) if "higher_is_better" in data.coords
           else np.ones(data.sizes["metric"], bool))
    for k, m in enumerate(data["metric"].values):
        name = str(m)
        v = np.asarray(score.sel(metric=m).transpose(*other).values, dtype=float).ravel()
        if "reference" in other:  # padding of outputs with fewer references is not missing
            per_output = np.asarray(score.sel(metric=m).notnull().any("reference").values)
            n_total, n_missing = per_output.size, int((~per_output).sum())
        else:
            n_total, n_missing = v.size, int(np.isnan(v).sum())
        finite = v[np.isfinite(v)]
        share = n_missing / n_total if n_total else 1.0
        if share > max_missing:
            rows.append((name, "near-empty", f"{share:.0%} of its values are missing "
                         f"({n_missing} of {n_total}); estimates rest on "
                         f"{n_total - n_missing} outputs", share))
        if finite.size == 0:
            continue
        distinct, counts = np.unique(finite, return_counts=True)
        big = float(np.abs(finite).max())
        if distinct.size == 1:
            rows.append((name, "constant", f"every value is {distinct[0]:g}: no correlation, "
                         f"reliability or ranking is defined", 1.0))
        elif distinct.size <= min_distinct or counts.max() / finite.size > max_tied_share:
            top = distinct[np.argmax(counts)]
            rows.append((name, "tied", f"{distinct.size} distinct value(s) among "
                         f"{finite.size}; {counts.max() / finite.size:.0%} equal {top:g}: "
                         f"rank correlations and pairwise accuracies are mostly ties",
                         float(distinct.size)))
        if big < tiny:
            rows.append((name, "underflow", f"every |value| <= {big:.2g} (below {tiny:g}): "
                         f"products and squares of such values lose precision or underflow "
                         f"to 0; the metric is likely degenerate (e.g. sentence BLEU "
                         f"without n-gram matches)", big))
        if big > huge:
            rows.append((name, "overflow", f"|values| up to {big:.2g} (above {huge:g}): "
                         f"squares and sums overflow double precision; rescale the metric",
                         big))
        if hib[k] and lower_is_better_name(name):
            rows.append((name, "suspicious direction", "its name says lower is better "
                         "(distance, error rate, perplexity); if so, declare it with "
                         "lower_is_better= (CLI --lower-is-better) so that analyses read "
                         "its negation", np.nan))
    kinds = select.human_traits(data)
    if traits is None:
        chosen = list(kinds)
    else:
        chosen = [str(t) for t in select.check_labels(list(kinds), [traits] if isinstance(
            traits, str) else list(traits), "trait")]
    if chosen:
        corr, level = _direction_correlations(data, chosen, run, reference)
        positive = sum(r > 0 for r in corr.values())
        if corr and positive > len(corr) / 2:
            for name, r in corr.items():
                if r < 0:
                    declared = "" if hib[list(map(str, data["metric"].values)).index(name)] \
                        else " (after negation: it is declared lower-is-better)"
                    rows.append((name, "suspicious direction",
                                 f"correlates negatively with the human score{declared} at "
                                 f"{level}: {r:+.2f} (mean over {len(chosen)} trait(s)), "
                                 f"while {positive} of {len(corr)} metrics correlate "
                                 f"positively; it may be lower-is-better "
                                 f"(--lower-is-better) or broken", r))
    order = {str(m): k for k, m in enumerate(data["metric"].values)}
    rows.sort(key=lambda r: (order[r[0]], FINDINGS.index(r[1])))
    out = pd.DataFrame(rows, columns=list(COLUMNS))
    out.attrs["checked"] = int(data.sizes["metric"])
    return out


__all__ = ["COLUMNS", "FINDINGS", "data_quality", "lower_is_better_name"]
