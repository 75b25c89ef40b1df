"""Validity of metrics against CFA factor scores (:func:`factor_validity`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayesmeta.data import select
from bayesmeta.options import ResamplingOptions, resolve_seed
from bayesmeta.results import Result, data_hash
from bayesmeta.summaries import CI_PROB, check_ci_prob, equal_tailed, summarize
from bayesmeta.validity._factor_common import (
    _CHUNK,
    _UNIT_LABEL,
    LEVELS,
    _bootstrap_weights,
    _coefficients,
    _correlate,
    _is_bayesian,
    _metric_array,
    _table_index,
    _weighted_means,
)


def factor_validity(
    data: xr.Dataset,
    fit: Any,
    *,
    metrics: Sequence[str] | None = None,
    traits: Sequence[str] | None = None,
    coefficient: str | Sequence[str] = "kendall",
    level: str = "system",
    score_method: str = "EBM",
    run: Any = None,
    reference: Any = "first",
    ci_prob: float = CI_PROB,
    resampling: ResamplingOptions | Mapping[str, Any] | None = None,
    random_seed: int | None = None,
) -> Result:
    r"""Concurrent validity of metrics against CFA factor scores (MetricEval Fig. 4/8).

    For metric :math:`m` and factor :math:`t`, the correlation over systems of the metric's
    system means :math:`\bar x_{ms}` and the factor scores' system means
    :math:`\bar\eta_{ts}` (Kendall's :math:`\tau_b`, Pearson or Spearman).

    Parameters
    ----------
    data : xarray.Dataset
        The dataset the CFA was fitted to, with metric ``score`` s.
    fit : CFAResult or OrdinalCFAResult
        ``bm.cfa(model, data)`` (classical: EBM scores, bootstrap interval) or
        ``bm.cfa(model, data, estimator="bayes")`` (posterior draws of the scores jointly with
        a Bayesian bootstrap over items).
    metrics : list of str, optional
        Metrics to correlate (default all).
    traits : list of str, optional
        Factors of the CFA (default all), e.g. ``["coh", "rel"]``.
    coefficient : {"kendall", "pearson", "spearman"} or a list of them
        The correlation(s); estimand ``"system_<coefficient>"``.
    level : {"system", "global", "within_item", "within_system"}
        ``"system"``: correlation of system means (MetricEval Fig. 4/8). The other
        groupings (all outputs pooled; per item across systems, averaged; per system across
        items, averaged) correlate metric scores with output factor scores, classical fits
        only; estimand ``"<level>_<coefficient>"``.
    score_method : {"EBM", "regression"}
        Classical scores (:meth:`bayesmeta.validity.factor_analysis.CFAResult.factor_scores`).
    run, reference :
        Which metric run and reference (:func:`bayesmeta.data.select.metric_scores`).
    ci_prob : float
        Probability of the intervals (default 0.94).
    resampling : ResamplingOptions or dict, optional
        ``n_resamples`` (default 1000): bootstrap resamples of the classical interval
        (``0``: point estimates only); ``unit`` (default ``"both"``): what is resampled,
        ``"systems"``, ``"items"`` or both. Bayesian fits use one Bayesian-bootstrap draw of
        item weights per posterior draw (systems held fixed).
    random_seed : int, optional
        Seed of the resampling (drawn and recorded when not given).

    Returns
    -------
    Result
        ``summary()`` indexed ``(estimand, trait, metric)``, estimand ``"system_kendall"``
        etc. Classical: ``classical`` and ``classical_low``/``classical_high`` (percentile
        bootstrap over ``resampling.unit``). Bayesian: ``mean, sd, hdi_low, hdi_high,
        r_hat, ess_bulk, ess_tail``, with ``sd_factor_scores`` and ``sd_items`` in ``details()``.
        ``extra["draws"]``: the resampling or posterior draws.

    Notes
    -----
    The classical bootstrap holds the factor scores fixed (refitting the CFA per resample
    is not done), so its interval reflects the sampling of systems and items only; the
    Bayesian interval adds the uncertainty of the scores but holds the systems fixed
    (a Bayesian bootstrap over items, as issue 11 specifies). Bayesian draws: for
    posterior draw :math:`d` with scores :math:`\eta^{(d)}` and weights
    :math:`b^{(d)} \sim I\,\mathrm{Dir}(1_I)`,
    :math:`r^{(d)} = \mathrm{cor}_s(\sum_i b^{(d)}_i x_{msi} / \sum_i b^{(d)}_i,\;
    \sum_i b^{(d)}_i \eta^{(d)}_{tsi} / \sum_i b^{(d)}_i)`.

    Examples
    --------
    >>> import bayesmeta as bm
    >>> ds = bm.datasets.simulated(random_seed=0, n_systems=8, n_items=30, n_metrics=4)
    >>> fit = bm.cfa("coh =~ Rater.1.COH + Rater.2.COH + Rater.3.COH", ds)
    >>> res = bm.factor_validity(ds, fit, resampling={"n_resamples": 200}, random_seed=1)
    >>> res.summary().index.names
    FrozenList(['estimand', 'trait', 'metric'])

    R equivalent (classical point values): ``fs <- lavPredict(fit)``;
    ``cor(aggregate(metric, list(d$model_id), mean)$x, aggregate(fs[, "coh"],
    list(d$model_id), mean)$x, method = "kendall")``.
    """
    from bayesmeta.validity import factor_scores as fsc

    ci_prob = check_ci_prob(ci_prob)
    coefs = _coefficients(coefficient)
    if level not in LEVELS:
        raise ValueError(f"level must be one of {', '.join(map(repr, LEVELS))}, got "
                         f"{level!r}.")
    opts = ResamplingOptions.coerce(resampling)
    seed = resolve_seed(random_seed)
    rng = np.random.default_rng(seed)
    bayes = _is_bayesian(fit)
    if bayes and level != "system":
        raise NotImplementedError(f"level={level!r} is implemented for classical fits only; "
                                  f"the Bayesian path correlates system means "
                                  f"(level='system').")
    scores = fit.factor_scores() if bayes else fit.factor_scores(method=score_method)
    if "item" not in scores.dims:
        raise ValueError("factor_validity needs a CFA fitted to a bayesmeta Dataset (factor "
                         "scores with system and item labels).")
    all_traits = [str(t) for t in scores["trait"].values]
    traits = all_traits if traits is None else [str(t) for t in traits]
    unknown = [t for t in traits if t not in all_traits]
    if unknown:
        raise ValueError(f"traits {unknown} are not factors of the CFA ({all_traits}).")
    scores = scores.sel(trait=traits)
    systems = [str(s) for s in scores["system"].values]
    items = [str(i) for i in scores["item"].values]
    x = _metric_array(data, metrics, run, reference, systems, items)
    mnames = [str(m) for m in x["metric"].values]
    xv = x.transpose("metric", "system", "item").values.astype(float)
    I = len(items)
    estimands = [f"{level}_{c}" for c in coefs]
    index = _table_index(estimands, traits, mnames)
    info = {"data": select.describe(data), "criterion": "factor scores of "
            + ("the Bayesian ordinal CFA (posterior draws)" if bayes else
               f"the WLSMV ordinal CFA ({fsc.check_method(score_method)})"),
            "correlation": ", ".join(coefs), "level": "system (means over items)"
            if level == "system" else level}
    if level != "system":
        return _validity_outputs(scores, xv, coefs, level, traits, mnames, estimands, index,
                                 info, opts, rng, seed, data, ci_prob)
    if not bayes:
        fv = scores.transpose("trait", "system", "item").values
        point = _correlate(_weighted_means(xv, None), _weighted_means(fv, None), coefs)
        table = pd.DataFrame({"classical": np.concatenate([point[c][0].T.ravel()
                                                           for c in coefs])}, index=index)
        extra: dict[str, Any] = {}
        kind = None
        if opts.n_resamples:
            a, w = _bootstrap_weights(rng, opts.n_resamples, len(systems), I, opts.unit)
            a, w = a[1:], w[1:]
            draws = _correlate(_weighted_means(xv, w), _weighted_means(fv, w), coefs, a)
            da = xr.DataArray(np.stack([draws[c] for c in coefs], axis=1),
                              dims=("resample", "estimand", "metric", "trait"),
                              coords={"estimand": estimands, "metric": mnames,
                                      "trait": traits})
            iv = equal_tailed(da.transpose("estimand", "trait", "metric", "resample").values,
                              ci_prob, axis=(-1,)).reshape(-1, 2)
            table["classical_low"], table["classical_high"] = iv[:, 0], iv[:, 1]
            extra["draws"] = da
            kind = f"percentile bootstrap over {_UNIT_LABEL[opts.unit]}"
            info["resampling"] = (f"{opts.n_resamples} bootstrap resamples of "
                                  f"{_UNIT_LABEL[opts.unit]}")
        return Result(table, title="Validity of metrics against CFA factor scores",
                      info=info, extra=extra, ci_prob=ci_prob, classical_ci_kind=kind,
                      random_seed=seed, data_hash=data_hash(data),
                      notes=["The bootstrap holds the factor scores at their point values: "
                             "the interval reflects the sampling of systems and items "
                             "(resampling.unit), not the uncertainty of the scores (fit "
                             "the CFA with estimator='bayes' for that)."])
    # ---------------------------------------------------------------- Bayesian
    post = scores.transpose("chain", "draw", "trait", "system", "item")
    C, D = post.sizes["chain"], post.sizes["draw"]
    fv = post.values.reshape(C * D, len(traits), len(systems), I)
    w = I * rng.dirichlet(np.ones(I), size=C * D)
    joint = np.empty((len(coefs), C * D, len(mnames), len(traits)))
    only_scores = np.empty_like(joint)
    for start in range(0, C * D, _CHUNK):
        sl = slice(start, min(C * D, start + _CHUNK))
        ok = ~np.isnan(fv[sl])
        with np.errstate(invalid="ignore", divide="ignore"):
            fm = np.einsum("ri,rtsi->rts", w[sl], np.where(ok, fv[sl], 0.0)) / np.einsum(
                "ri,rtsi->rts", w[sl], ok.astype(float))
        xm = _weighted_means(xv, w[sl])
        res = _correlate(xm, fm, coefs)
        fm1 = np.nanmean(fv[sl], axis=-1)
        res1 = _correlate(_weighted_means(xv, None), fm1, coefs)
        for k, c in enumerate(coefs):
            joint[k, sl], only_scores[k, sl] = res[c], res1[c]
    mean_scores = np.nanmean(fv, axis=0)
    only_items = _correlate(_weighted_means(xv, w), _weighted_means(mean_scores, w), coefs)
    coords = {"estimand": estimands, "metric": mnames, "trait": traits}
    da = xr.DataArray(joint.reshape(len(coefs), C, D, len(mnames), len(traits)),
                      dims=("estimand", "chain", "draw", "metric", "trait"), coords=coords)
    summ = summarize(da, ci_prob=ci_prob)
    order = ("estimand", "trait", "metric")
    iv = summ["interval"].transpose(*order, "ci_bound").values.reshape(-1, 2)
    table = pd.DataFrame({
        "mean": summ["mean"].transpose(*order).values.ravel(),
        "sd": summ["sd"].transpose(*order).values.ravel(),
        "hdi_low": iv[:, 0], "hdi_high": iv[:, 1],
        **{s: summ[s].transpose(*order).values.ravel() for s in ("r_hat", "ess_bulk",
                                                                   "ess_tail")},
    }, index=index)
    sd_scores = np.nanstd(only_scores, axis=1, ddof=1)  # (E, M, T)
    sd_items = np.stack([np.nanstd(only_items[c], axis=0, ddof=1) for c in coefs])
    details = pd.DataFrame({"sd_factor_scores": np.transpose(sd_scores, (0, 2, 1)).ravel(),
                            "sd_items": np.transpose(sd_items, (0, 2, 1)).ravel()},
                           index=table.index)
    info["posterior"] = (f"{C} x {D} posterior draws of the factor scores, each with a "
                         f"Bayesian-bootstrap draw of item weights")
    return Result(table, title="Validity of metrics against CFA factor scores (Bayesian)",
                  info=info, details=details, extra={"draws": da}, ci_prob=ci_prob,
                  posterior="factor-score posterior x Bayesian bootstrap over items",
                  random_seed=seed, data_hash=data_hash(data),
                  notes=["details(): sd_factor_scores is the posterior sd from the factor "
                         "scores alone (unit item weights), sd_items from the item "
                         "sampling alone (posterior-mean scores, Bayesian bootstrap); the "
                         "larger one dominates the interval."])


def _validity_outputs(scores, xv, coefs, level, traits, mnames, estimands, index, info,
                      opts, rng, seed, data, ci_prob) -> Result:
    """Classical factor validity at the output-level groupings (paper 001): the measures
    of :func:`bayesmeta.correlation.measures.measure_draws` with each trait's output
    factor scores as the human score; bootstrap over items through item weights."""
    from bayesmeta.correlation.measures import measure_draws

    names = [f"{level}_{c}" for c in coefs]
    S, I = xv.shape[1:]
    R = opts.n_resamples
    a, w = _bootstrap_weights(rng, R, S, I, opts.unit)
    out = np.stack([measure_draws(xv, scores.sel(trait=t).transpose("system", "item").values,
                                  system_weights=a, item_weights=w, measures=names)
                    for t in traits], axis=-1)  # (R + 1, M, C, T)
    vals = np.transpose(out, (2, 3, 1, 0)).reshape(len(index), -1)  # (C*T*M, R + 1)
    table = pd.DataFrame({"classical": vals[:, 0]}, index=index)
    kind = None
    extra: dict[str, Any] = {}
    if R:
        iv = equal_tailed(vals[:, 1:], ci_prob, axis=(-1,))
        table["classical_low"], table["classical_high"] = iv[:, 0], iv[:, 1]
        kind = f"percentile bootstrap over {_UNIT_LABEL[opts.unit]}"
        extra["draws"] = xr.DataArray(
            np.transpose(out[1:], (0, 2, 1, 3)), dims=("resample", "estimand", "metric",
                                                       "trait"),
            coords={"estimand": estimands, "metric": mnames, "trait": traits})
        info["resampling"] = f"{R} bootstrap resamples of {_UNIT_LABEL[opts.unit]}"
    return Result(table, title="Validity of metrics against CFA factor scores", info=info,
                  extra=extra, ci_prob=ci_prob, classical_ci_kind=kind, random_seed=seed,
                  data_hash=data_hash(data),
                  notes=["Output-level correlations with the point factor scores (EBM), "
                         "which are shrunken and noisy: the correlations are attenuated "
                         "relative to the traits."])
