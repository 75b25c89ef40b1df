r"""Perturbation detection (paper 002, Sec. 2.3.2 and 3.4): does a metric score the original
output above its perturbed copy?

For each metric and perturbation, over the pairs ``(s, s_hat)`` of original and perturbed
scores, the detection rate is the share of pairs with :math:`s > \hat s`; ties
(:math:`s = \hat s`, what n-gram metrics give a reordered text) are counted as not detected,
as in the paper, and reported separately as ``tie_rate``. Posteriors:

* per metric, Beta-Binomial: ``p | k ~ Beta(a + k, b + n - k)`` (prior ``Beta(1, 1)``);
* per pair of metrics on the same pairs, the Dirichlet posterior of the four joint outcomes
  (both detect, only A, only B, neither) of :mod:`bayesmeta.unit_tests.pass_rates`, giving
  the difference of detection rates and ``P(A detects more often than B)`` in closed form;
* by metric kind (``reference_based`` coordinate), the mean detection rate of the
  reference-free and reference-based metrics and their difference, from a Bayesian
  bootstrap over the pairs every metric scored (which keeps the pairing across metrics).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayesmeta.data import select
from bayesmeta.options import ResamplingOptions, resolve_seed
from bayesmeta.reference_free.kinds import kind_contrast, kind_note
from bayesmeta.results import Result, data_hash
from bayesmeta.summaries import CI_PROB, check_ci_prob, summarize, summary_rows
from bayesmeta.unit_tests import pass_rates
from bayesmeta.vocabulary import resampling_options

INDEX = ["metric", "metric2", "perturbation", "set"]


def _from_frame(df: pd.DataFrame, metrics: Any, human_column: str | None) -> dict:
    need = ["metric", "pair_id", "score_original", "score_corrupted"]
    missing = [c for c in need if c not in df.columns]
    if missing:
        raise ValueError(f"the score table lacks column(s) {missing} (needs metric, pair_id, "
                         "score_original, score_corrupted; optional perturbation or "
                         "corruption, and a human score column).")
    if human_column is not None and human_column not in df.columns:
        raise ValueError(f"human score column {human_column!r} is not in the score table.")
    if "n_refs" in df.columns and df["n_refs"].nunique() > 1:
        several = sorted(map(str, df["n_refs"].unique()))
        raise ValueError(f"the score table has several n_refs ({several}): pass the rows of "
                         "one number of references.")
    lab = next((c for c in ("perturbation", "corruption") if c in df.columns), None)
    frame = df.assign(_p=df[lab].astype(str) if lab else "perturbed")
    if metrics is not None:
        unknown = sorted(set(metrics) - set(frame["metric"]))
        if unknown:
            raise ValueError(f"metric(s) {unknown} are not in the score table's 'metric' "
                             "column.")
        frame = frame[frame["metric"].isin(metrics)]
    dup = frame.duplicated(["_p", "metric", "pair_id"])
    if dup.any():
        r = frame[dup].iloc[0]
        raise ValueError(f"duplicate row for metric {r['metric']!r}, pair_id "
                         f"{r['pair_id']!r}.")
    labels = list(dict.fromkeys(frame["metric"].astype(str))) if metrics is None else list(
        metrics)
    out = {}
    for p, sub in frame.groupby("_p", sort=False):
        wide = sub.pivot(index="pair_id", columns="metric",
                         values=["score_original", "score_corrupted"])
        s = wide["score_original"].reindex(columns=labels).to_numpy(float).T
        sh = wide["score_corrupted"].reindex(columns=labels).to_numpy(float).T
        h = None
        if human_column is not None:
            h = sub.groupby("pair_id")[human_column].first().reindex(wide.index).to_numpy(
                float)
        out[str(p)] = (s, sh, h)
    return {"pairs": out, "metrics": labels, "kinds": None}


def _from_dataset(ds: xr.Dataset, *, original: Any, metrics: Any, trait: Any, human: Any,
                  run: Any, reference: Any) -> dict:
    if "score" not in ds or "perturbation" not in ds["score"].dims:
        raise ValueError("data needs a 'score' variable with a 'perturbation' dim (the "
                         "original and the perturbed outputs), or give a score table.")
    labels = select.check_metrics(ds, metrics)
    score = select.orient_scores(ds["score"].sel(metric=labels))  # lower-is-better negated
    if "run" in score.dims:
        score = select.pick_run(score, run)
    score = select.pick_reference(score, reference)
    plabels = [str(v) for v in ds["perturbation"].values]
    if str(original) not in plabels:
        raise ValueError(f"original={original!r} is not a label of dim 'perturbation' "
                         f"({plabels}).")
    rest = [d for d in score.dims if d not in ("metric", "perturbation")]
    h = None
    if trait is not None or human is not None:
        hs = select.human_score(ds, trait, human=human).values
        h = np.asarray(hs.broadcast_like(score.isel(metric=0, perturbation=0))
                       .transpose(*rest).values, float).ravel()
    flat = score.transpose("metric", "perturbation", *rest).values.reshape(
        len(labels), len(plabels), -1)
    k0 = plabels.index(str(original))
    pairs = {p: (flat[:, k0], flat[:, k], h) for k, p in enumerate(plabels) if k != k0}
    kinds = (np.asarray(ds["reference_based"].sel(metric=labels).values, bool)
             if "reference_based" in ds.coords else None)
    return {"pairs": pairs, "metrics": labels, "kinds": kinds}


def perturbation_detection(
    data: xr.Dataset | pd.DataFrame,
    *,
    original: Any = "original",
    metrics: Sequence[str] | None = None,
    trait: str | None = None,
    human: xr.DataArray | str | None = None,
    threshold: float | None = None,
    run: Any = None,
    reference: Any = "first",
    prior: tuple[float, float] = pass_rates.BETA_PRIOR,
    resampling: ResamplingOptions | Mapping[str, Any] | None = None,
    compare: bool = True,
    ci_prob: float = CI_PROB,
    random_seed: int | None = None,
) -> Result:
    r"""Share of (original, perturbed) pairs in which a metric prefers the original (paper
    002, Sec. 2.3.2, Fig. 3), with ties apart, intervals and posteriors.

    .. math:: \mathrm{rate}_M = \frac{1}{n} \sum_{j=1}^{n} 1[s_j > \hat s_j], \qquad
              \mathrm{ties}_M = \frac{1}{n} \sum_{j=1}^{n} 1[s_j = \hat s_j]

    Parameters
    ----------
    data : xarray.Dataset or pandas.DataFrame
        A dataset whose ``score`` has a ``perturbation`` dim (label ``original`` for the
        unperturbed output, every other label a perturbation), or a long score table with
        columns ``metric``, ``pair_id``, ``score_original``, ``score_corrupted`` and
        optionally ``perturbation`` (or ``corruption``): the layout of
        :func:`bayesmeta.metric_unit_tests`, so the corruption generators plug in.
    original : label
        The ``perturbation`` label of the original outputs (dataset input).
    metrics : list of str, optional
        Default all.
    trait, human
        The human score of the ORIGINAL outputs used by ``threshold``: a trait of the
        dataset (or ``human=`` a ``(system, item)`` DataArray); for a score table,
        ``human=`` names its column.
    threshold : float, optional
        Exclude pairs whose original's human score is below it (paper 002 Sec. 3.4 excludes
        scores below 3 "to ensure the quality of the original").
    run, reference
        Selection (:mod:`bayesmeta.data.select`), dataset input only.
    prior : (float, float)
        Beta prior of each rate (and ``prior[0]`` the Dirichlet prior of the paired model).
    resampling : ResamplingOptions or dict, optional
        ``n_resamples``: posterior draws per quantity (default here 4,000).
    compare : bool
        Add the paired differences of every pair of metrics (``M (M - 1) / 2`` rows).
    ci_prob : float
        Probability of every interval.
    random_seed : int, optional
        Drawn and recorded when omitted.

    Returns
    -------
    Result
        Estimands (index ``metric, metric2, perturbation, set``): ``detection_rate`` and
        ``tie_rate`` (classical share with the exact Clopper-Pearson interval; Beta
        posterior); ``detection_difference`` (A - B on the pairs both scored: classical
        paired difference with Wald interval, Agresti 2013 Sec. 10.1; Dirichlet
        posterior); with the ``reference_based`` coordinate ``detection_group_mean``
        (``set``) and ``detection_free_minus_based`` (Bayesian bootstrap over pairs).
        ``details()``: ``n_pairs``, ``n_detected``, ``n_ties``, ``n_excluded``, and for
        differences ``p_beats`` (closed-form ``P(A detects more often than B)``) and the
        exact McNemar p-value.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> import bayesmeta as bm
    >>> rng = np.random.default_rng(0)
    >>> s = rng.normal(size=100)
    >>> df = pd.DataFrame({"metric": np.repeat(["lm", "ngram"], 100),
    ...                    "pair_id": np.tile(np.arange(100), 2),
    ...                    "score_original": np.r_[s, s],
    ...                    "score_corrupted": np.r_[s - 1 + rng.normal(size=100), s]})
    >>> res = bm.perturbation_detection(df, random_seed=1)
    >>> tab = res.summary()
    >>> float(tab.loc[("tie_rate", "ngram", "", "perturbed", ""), "classical"])
    1.0

    R equivalent: ``binom.test(sum(s > s_hat), length(s))``.
    """
    n_draws = resampling_options(resampling, n_resamples=4000).n_resamples
    ci_prob = check_ci_prob(ci_prob)
    seed = resolve_seed(random_seed)
    rng = np.random.default_rng(seed)
    if isinstance(data, pd.DataFrame):
        if trait is not None:
            raise ValueError("a score table has no traits: name its human score column with "
                             "human=.")
        got = _from_frame(data, metrics, human)
    elif isinstance(data, xr.Dataset):
        got = _from_dataset(data, original=original, metrics=metrics, trait=trait,
                            human=human, run=run, reference=reference)
    else:
        raise TypeError(f"data must be an xarray.Dataset or a pandas.DataFrame, got "
                        f"{type(data).__name__}.")
    if threshold is not None and all(h is None for *_, h in got["pairs"].values()):
        raise ValueError("threshold= needs the originals' human score: give trait= or "
                         "human=.")
    labels, kinds = got["metrics"], got["kinds"]
    frames, dets = [], []
    a, b = prior
    for p, (s, sh, h) in got["pairs"].items():
        valid = np.isfinite(s) & np.isfinite(sh)
        n_excl = 0
        if threshold is not None:
            keep = np.isfinite(h) & (h >= threshold)
            n_excl = int((valid & ~keep).any(0).sum())
            valid &= keep
        det = valid & (s > sh)
        tie = valid & (s == sh)
        n, k, t = valid.sum(1), det.sum(1), tie.sum(1)
        if (n == 0).any():
            raise ValueError(f"metric {labels[int(np.argmin(n))]!r} has no scored pair for "
                             f"perturbation {p!r}" + (" after the threshold" if threshold
                                                      is not None else "") + ".")
        for est, c in (("detection_rate", k), ("tie_rate", t)):
            lo, hi = pass_rates.clopper_pearson(c, n, ci_prob)
            draws = xr.DataArray(rng.beta(a + c, b + n - c, size=(n_draws, len(labels))),
                                 dims=("resample", "metric"), coords={"metric": labels})
            rows = _rows(draws, est, ci_prob, perturbation=p)
            rows[["classical", "classical_low", "classical_high"]] = np.c_[c / n, lo, hi]
            frames.append(rows)
            dets.append(pd.DataFrame({"n_pairs": n, "n_detected": k, "n_ties": t,
                                      "n_excluded": n_excl}, index=rows.index))
        if compare and len(labels) > 1:
            frames_d, det_d = _differences(det, valid, labels, p, prior[0], n_draws, rng,
                                           ci_prob)
            frames.append(frames_d)
            dets.append(det_d)
        if kind_note(kinds, "perturbation_detection") is None:
            frames.extend(_kind_contrast(det, valid, kinds, p, n_draws, rng, ci_prob))
    table = pd.concat(frames)
    details = pd.concat(dets).reindex(table.index)
    notes = ["A tie (s = s_hat) counts as not detected, as in paper 002; tie_rate reports "
             "ties apart (n-gram metrics tie on reordered sentences)."]
    if threshold is not None:
        notes.append(f"Pairs whose original has a human score below {threshold:g} excluded.")
    why_not = kind_note(kinds, "perturbation_detection")
    if why_not is not None:
        notes.append(why_not + (" A score table carries no kinds: give a dataset."
                                if kinds is None and isinstance(data, pd.DataFrame) else ""))
    return Result(
        table, title="Perturbation detection: share of pairs with s > s_hat (paper 002)",
        info={"metrics": len(labels), "perturbations": ", ".join(got["pairs"]),
              "prior": f"Beta{tuple(prior)}", "draws": n_draws},
        details=details, notes=notes, ci_prob=ci_prob, random_seed=seed,
        classical_ci_kind="Clopper-Pearson (rates); Wald, paired (differences)",
        posterior="Beta-Binomial (rates), Dirichlet (paired differences), Bayesian "
                  "bootstrap over pairs (kind means)",
        data_hash=data_hash(np.concatenate([np.r_[s.ravel(), sh.ravel()] for s, sh, _ in
                                            got["pairs"].values()])),
    )


def _rows(draws: xr.DataArray, estimand: str, ci_prob: float, **labels: str) -> pd.DataFrame:
    rows = summary_rows(summarize(draws, ci_prob=ci_prob), estimand=estimand, index=INDEX)
    arrays = [np.full(len(rows), labels[k], dtype=object) if k in labels
              else rows.index.get_level_values(k) for k in rows.index.names]
    rows.index = pd.MultiIndex.from_arrays(arrays, names=rows.index.names)
    return rows


def _differences(det, valid, labels, p, prior, n_draws, rng, ci_prob):
    """Paired differences of detection rates for every pair of metrics (A before B)."""
    dv, nv = (det & valid).astype(float), (~det & valid).astype(float)
    cells = np.stack([dv @ dv.T, dv @ nv.T, nv @ dv.T, nv @ nv.T], -1)  # (A, B, 4)
    ia, ib = np.triu_indices(len(labels), 1)
    counts = cells[ia, ib]                                              # (pairs, 4)
    g = rng.gamma(counts + prior, size=(n_draws, *counts.shape))
    theta = g / g.sum(-1, keepdims=True)
    names = [f"{labels[i]} | {labels[j]}" for i, j in zip(ia, ib, strict=True)]
    draws = xr.DataArray(theta[..., 1] - theta[..., 2], dims=("resample", "metric"),
                         coords={"metric": names})
    rows = _rows(draws, "detection_difference", ci_prob, perturbation=p)
    rows.index = pd.MultiIndex.from_arrays(
        [rows.index.get_level_values(0), np.asarray(labels, object)[ia],
         np.asarray(labels, object)[ib], rows.index.get_level_values(3),
         rows.index.get_level_values(4)], names=rows.index.names)
    wald = np.array([pass_rates.paired_wald(c, ci_prob) if c.sum() else (np.nan,) * 3
                     for c in counts])
    rows[["classical", "classical_low", "classical_high"]] = wald
    det_rows = pd.DataFrame({
        "n_pairs": counts.sum(1).astype(int), "n_only_metric": counts[:, 1].astype(int),
        "n_only_metric2": counts[:, 2].astype(int),
        "p_beats": [pass_rates.p_beats(c, prior) for c in counts],
        "p_mcnemar": [pass_rates.mcnemar_exact(c) for c in counts]}, index=rows.index)
    return rows, det_rows


def _kind_contrast(det, valid, kinds, p, n_draws, rng, ci_prob) -> list[pd.DataFrame]:
    """Mean detection rate per metric kind and free - based, Bayesian bootstrap over the
    pairs that every metric scored."""
    common = valid.all(0)
    if common.sum() < 2:
        return []
    w = rng.exponential(size=(n_draws, int(common.sum())))
    rates = (w / w.sum(1, keepdims=True)) @ det[:, common].T.astype(float)  # (draws, M)
    return [kind_contrast(rates, kinds, prefix="detection", index=INDEX, ci_prob=ci_prob,
                          labels={"perturbation": p})]


__all__ = ["perturbation_detection"]
