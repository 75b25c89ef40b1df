r"""Validity of automatic metrics against the factor scores of an ordinal CFA of the
experts' ratings (MetricEval, Xiao et al. 2023, Sec. 3.2, 4.2; Fig. 4/8).

:func:`factor_validity`: correlation between each metric's system means and each factor's
factor-score system means, with its uncertainty.

* **Classical** (a :class:`bayesmeta.cfa.CFAResult`, WLSMV): the correlation of the system
  means of the metric and of lavaan's EBM factor scores; the interval is a percentile
  bootstrap over systems and items (``resampling.unit``, default ``"both"``: Deutsch et
  al. 2021's Boot-Both; ``"items"``: Boot-Inputs, every system keeping its outputs on the
  resampled items), the factor scores held at their point values.
* **Bayesian** (a :class:`bayesmeta.models.ordinal_cfa.OrdinalCFAResult`): the same
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

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayesmeta.classical._corrkernels import direct_small
from bayesmeta.data import select
from bayesmeta.options import ResamplingOptions, resolve_seed
from bayesmeta.results import Result, data_hash
from bayesmeta.summaries import CI_PROB, check_ci_prob, equal_tailed, summarize

__all__ = ["factor_mtmm", "factor_validity", "metric_residuals", "metric_variance"]

COEFFICIENTS = ("kendall", "pearson", "spearman")
#: Groupings of the correlation (the contract's names; paper 001's "input" and "item").
LEVELS = ("system", "global", "within_item", "within_system")
_OLD_GROUPINGS = {"global": "global", "within_item": "input", "within_system": "item"}
#: Correlations per chunk of resamples or draws (bounds the memory of Kendall's sign
#: matrices: chunk x metrics x traits x systems^2 floats).
_CHUNK = 50


# ----------------------------------------------------------------------------- helpers
def _is_bayesian(fit: Any) -> bool:
    return getattr(fit, "idata", None) is not None and hasattr(fit, "loo")


def _coefficients(method: str | Sequence[str]) -> list[str]:
    names = [method] if isinstance(method, str) else list(method)
    bad = [m for m in names if m not in COEFFICIENTS]
    if bad or not names:
        raise ValueError(f"method must be one or more of {', '.join(map(repr, COEFFICIENTS))}"
                         f", got {method!r}.")
    return names


def _metric_array(data: xr.Dataset, metrics: Sequence[str] | None, run: Any, reference: Any,
                  systems: Sequence[str], items: Sequence[str]) -> xr.DataArray:
    """Metric scores (metric, system, item) on the factor scores' system and item labels."""
    if not isinstance(data, xr.Dataset) or "score" not in data:
        raise ValueError("data must be a bayesmeta Dataset with metric scores ('score').")
    x = select.metric_scores(data, metrics, run=run, reference=reference)
    x = x.assign_coords(system=x["system"].values.astype(str), item=x["item"].values.astype(str),
                        metric=x["metric"].values.astype(str))
    missing = sorted(set(systems) - set(x["system"].values))
    if missing:
        raise ValueError(f"the CFA's systems {missing[:5]} are not in data's 'system' labels; "
                         f"pass the data the CFA was fitted to.")
    missing = sorted(set(items) - set(x["item"].values))
    if missing:
        raise ValueError(f"the CFA's items {missing[:5]} are not in data's 'item' labels; "
                         f"pass the data the CFA was fitted to.")
    return x.sel(system=list(systems), item=list(items)).load()


def _weighted_means(v: np.ndarray, w: np.ndarray | None) -> np.ndarray:
    """Item-weighted means over the last axis of ``v`` (..., S, I), missing values left out;
    ``w`` (R, I) gives (R, ..., S); None: plain means with a leading axis of 1."""
    ok = ~np.isnan(v)
    vz = np.where(ok, v, 0.0)
    if w is None:
        with np.errstate(invalid="ignore", divide="ignore"):
            return (vz.sum(-1) / ok.sum(-1))[None]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.einsum("ri,...i->r...", w, vz) / np.einsum("ri,...i->r...", w,
                                                            ok.astype(float))


def _bootstrap_weights(rng: np.random.Generator, n: int, S: int, I: int, unit: str
                       ) -> tuple[np.ndarray, np.ndarray]:
    """System and item weights of the point estimate (first row, all ones) and ``n``
    bootstrap resamples: multinomial counts of the resampled ``unit`` ("both", "systems",
    "items"; Deutsch et al. 2021's Boot-Both, Boot-Systems, Boot-Inputs), ones for the
    other."""
    a, b = np.ones((n + 1, S)), np.ones((n + 1, I))
    if unit in ("both", "systems"):
        a[1:] = rng.multinomial(S, np.full(S, 1.0 / S), size=n)
    if unit in ("both", "items"):
        b[1:] = rng.multinomial(I, np.full(I, 1.0 / I), size=n)
    return a, b


_UNIT_LABEL = {"both": "systems and items", "systems": "systems", "items": "items"}


def _correlate(xm: np.ndarray, fm: np.ndarray, coefs: list[str],
               system_weights: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Correlations over systems of metric means xm (R, M, S) and factor means fm (R, T, S),
    systems weighted by ``system_weights`` (R, S) (bootstrap counts): dict of (R, M, T)."""
    out: dict[str, list[np.ndarray]] = {c: [] for c in coefs}
    R = max(xm.shape[0], fm.shape[0])
    xm = np.broadcast_to(xm, (R, *xm.shape[1:]))
    fm = np.broadcast_to(fm, (R, *fm.shape[1:]))
    for start in range(0, R, _CHUNK):
        sl = slice(start, min(R, start + _CHUNK))
        wts = None if system_weights is None else system_weights[sl, None, None, :]
        res = direct_small(xm[sl, :, None, :], fm[sl, None, :, :], wts, coefs, "b", 3)
        for c in coefs:
            out[c].append(res[c])
    return {c: np.concatenate(v, axis=0) for c, v in out.items()}


def _table_index(estimands: list[str], traits: list[str], metrics: list[str]) -> pd.MultiIndex:
    return pd.MultiIndex.from_product([estimands, traits, metrics],
                                      names=["estimand", "trait", "metric"])


# ----------------------------------------------------------------------------- validity
def factor_validity(
    data: xr.Dataset,
    fit: Any,
    *,
    metrics: Sequence[str] | None = None,
    traits: Sequence[str] | None = None,
    method: str | Sequence[str] = "kendall",
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
        ``bm.cfa(model, data, method="bayes")`` (posterior draws of the scores jointly with
        a Bayesian bootstrap over items).
    metrics : list of str, optional
        Metrics to correlate (default all).
    traits : list of str, optional
        Factors of the CFA (default all), e.g. ``["coh", "rel"]``.
    method : {"kendall", "pearson", "spearman"} or a list of them
        The correlation(s); estimand ``"system_<method>"``.
    level : {"system", "global", "within_item", "within_system"}
        ``"system"``: correlation of system means (MetricEval Fig. 4/8). The other
        groupings (all outputs pooled; per item across systems, averaged; per system across
        items, averaged) correlate metric scores with output factor scores, classical fits
        only; estimand ``"<level>_<method>"``.
    score_method : {"EBM", "regression"}
        Classical scores (:meth:`bayesmeta.cfa.CFAResult.factor_scores`).
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
    from bayesmeta import factor_scores as fsc

    ci_prob = check_ci_prob(ci_prob)
    coefs = _coefficients(method)
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
                             "the CFA with method='bayes' for that)."])
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
    of :func:`bayesmeta.classical.correlation.measure_draws` with each trait's output
    factor scores as the human score; bootstrap over items through item weights."""
    from bayesmeta.classical.correlation import GROUPINGS, measure_draws

    group = level if level in GROUPINGS else _OLD_GROUPINGS[level]
    names = [f"{group}_{c}" for c in coefs]
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


# ----------------------------------------------------------------------------- variance
def _claims(data: xr.Dataset, metrics: list[str], factors: list[str],
            claims: Mapping[str, str] | None) -> dict[str, str]:
    """The factor each metric claims to measure: the data's ``metric_trait`` coord, else the
    metric name's last ``.``/``-``/``_`` part, matched to the factor names without regard to
    case (``G.EVAL.4.COH`` -> ``coh``); ``claims`` adds to and overrides these."""
    lower = {f.lower(): f for f in factors}
    out = {}
    coord = data["metric_trait"] if "metric_trait" in data.coords else None
    for m in metrics:
        label = None
        if coord is not None:
            label = str(coord.sel(metric=m).values)
        else:
            for sep in (".", "-", "_"):
                if sep in m:
                    label = m.rsplit(sep, 1)[1]
                    break
        if label is not None and label.lower() in lower:
            out[m] = lower[label.lower()]
    if claims is not None:
        given = {str(m): str(t) for m, t in claims.items()}
        bad = {m: t for m, t in given.items() if t not in factors}
        if bad:
            raise ValueError(f"claims name traits that are not factors of the CFA "
                             f"({factors}): {bad}.")
        out.update({m: t for m, t in given.items() if m in metrics})
    return out


def _regression_shares(cov: np.ndarray, T: int, psi: np.ndarray | None = None
                       ) -> dict[str, np.ndarray]:
    """From covariance matrices (..., T + M, T + M) of [factor scores, metrics]: the
    standardized coefficients beta (..., M, T), R^2 (..., M) and the correlations r
    (..., M, T) of each metric with the traits. ``psi`` None: OLS on the standardized
    scores; else regression calibration, the raw coefficients standardized with the factors'
    model variance 1 and correlations ``psi`` (see :func:`metric_variance`)."""
    cff = cov[..., :T, :T]
    cfm = cov[..., :T, T:]
    sd_x = np.sqrt(np.diagonal(cov, axis1=-2, axis2=-1)[..., T:])  # (..., M)
    if psi is None:
        sd_f = np.sqrt(np.diagonal(cff, axis1=-2, axis2=-1))
        rff = cff / (sd_f[..., :, None] * sd_f[..., None, :])
        rfm = cfm / (sd_f[..., :, None] * sd_x[..., None, :])
        beta = np.linalg.solve(rff, rfm)  # (..., T, M)
    else:
        raw = np.linalg.solve(cff, cfm)  # (..., T, M), on the latent scale (variance 1)
        beta = raw / sd_x[..., None, :]
        rfm = np.einsum("...st,...tm->...sm", psi, beta)  # model cor(metric, trait)
    r2 = np.einsum("...tm,...tm->...m", beta, rfm)
    return {"beta": np.swapaxes(beta, -1, -2), "r2": r2, "r": np.swapaxes(rfm, -1, -2)}


def _weighted_cov(z: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Weighted covariance matrices: z (..., N, K) rows, w (..., N) row weights."""
    wsum = w.sum(-1)[..., None]
    mean = np.einsum("...n,...nk->...k", w, z) / wsum
    d = z - mean[..., None, :]
    return (np.swapaxes(d * w[..., None], -1, -2) @ d) / wsum[..., None]


def metric_variance(
    data: xr.Dataset,
    fit: Any,
    *,
    metrics: Sequence[str] | None = None,
    claims: Mapping[str, str] | None = None,
    level: str = "output",
    disattenuate: bool | None = None,
    score_method: str = "EBM",
    run: Any = None,
    reference: Any = "first",
    ci_prob: float = CI_PROB,
    resampling: ResamplingOptions | Mapping[str, Any] | None = None,
    random_seed: int | None = None,
) -> Result:
    r"""How much of each metric's variance is its trait, the other traits, its own error.

    Each metric is regressed on the CFA's factor scores, all standardized (MetricEval's
    validity model, ``score[n, m] = a_m + sum_t b_{m,t} f_{n,t} + e_{n,m}``):

    .. math::
        z(x_{nm}) = \sum_t \beta_{mt}\, z(\hat\eta_{nt}) + e_{nm}, \qquad
        \beta_m = R_{ff}^{-1} r_{fm}, \qquad R^2_m = r_{fm}^\top \beta_m,

    with :math:`R_{ff}` the correlations of the factor scores and :math:`r_{fm}` their
    correlations with the metric. Reported per metric:

    * ``validity_coefficient`` (per trait): the standardized loading :math:`\beta_{mt}`;
    * ``r_squared``: :math:`R^2_m`; ``error_share``: :math:`1 - R^2_m`, the share of the
      metric's variance that no trait explains (metric error variance over total variance);
    * ``trait_share`` (row labelled with the claimed trait :math:`c`): Pratt's (1987) share
      :math:`\beta_{mc}\, r_{mc}`; ``other_traits_share``: :math:`R^2_m - \beta_{mc} r_{mc}`
      (Pratt's shares of the other traits, which sum with it to :math:`R^2_m`);
    * ``specificity``: :math:`\beta_{mc} r_{mc} / R^2_m`, the fraction of the explained
      variance that is the claimed trait (1: the metric measures its trait only).

    Parameters
    ----------
    data : xarray.Dataset
        The dataset the CFA was fitted to, with metric ``score`` s.
    fit : CFAResult or OrdinalCFAResult
        ``bm.cfa(model, data)`` (WLSMV; its EBM scores are the regressors, bootstrap
        interval) or ``bm.cfa(model, data, method="bayes")`` (two-stage: the posterior-mean
        scores are the regressors; every posterior draw of the factor correlations is paired
        with a Bayesian-bootstrap draw of item weights, giving posterior draws of every
        estimand).
    metrics : list of str, optional
    claims : dict, optional
        ``{metric: factor}``: the trait each metric claims to measure, added to (and
        overriding) the default: the data's ``metric_trait`` coord, else the metric name's
        last part matched to the factor names without regard to case (``"G.EVAL.4.COH"`` ->
        ``"coh"``). Metrics without a claim get no ``trait_share``,
        ``other_traits_share``, ``specificity`` rows.
    level : {"output", "system"}
        Regress the scores of outputs (default) or the system means.
    disattenuate : bool, optional
        Regression calibration (default for ``level="output"``; see Notes): standardize the
        coefficients with the factors' model variance instead of the scores' sample
        variance. ``False``: plain OLS on standardized scores (``level="system"``).
    score_method : {"EBM", "regression"}
    run, reference : which metric run and reference.
    ci_prob : float
    resampling : ResamplingOptions or dict, optional
        ``n_resamples`` (default 1000; 0: point estimates only) and ``unit`` (default
        ``"both"``, else ``"systems"`` or ``"items"``) of the percentile bootstrap: output
        (s, i) enters with the multiplicity of its system times that of its item. Bayesian
        fits: one Bayesian-bootstrap draw of item weights per posterior draw.
    random_seed : int, optional

    Returns
    -------
    Result
        ``summary()`` indexed ``(estimand, trait, metric)`` with ``classical``,
        ``classical_low``, ``classical_high`` (classical fit) or ``mean, sd, hdi_low,
        hdi_high, r_hat, ess_bulk, ess_tail`` (Bayesian fit; ``extra["draws"]``).

    Notes
    -----
    Factor scores are shrunken, noisy versions of the traits. Because the metric depends on
    the ratings only through the traits, regressing it on the scores' posterior means
    :math:`E[\eta \mid y]` (which the EBM scores approximate) gives the raw
    coefficients :math:`b_m` of the latent regression without bias (regression calibration;
    Carroll et al. 2006, ch. 4), but the scores' variance is below the traits' (1) so the
    usual standardization and :math:`R^2` are attenuated. With ``disattenuate=True`` the raw
    :math:`b_m = C_{ff}^{-1} c_{fm}` (score covariances) are standardized with the traits'
    model variance: :math:`\beta_m = b_m / s_m`, :math:`r_{m} = \Psi \beta_m` (the model
    correlation of metric and traits), :math:`R^2_m = \beta_m^\top \Psi \beta_m`, with
    :math:`\Psi` the CFA's factor correlations and :math:`s_m` the metric's sd. In small
    samples :math:`R^2_m` can then exceed 1 (a negative ``error_share``). The bootstrap holds
    the scores and :math:`\Psi` fixed. Pratt shares can be negative when traits are highly
    correlated (suppression).

    Examples
    --------
    >>> import bayesmeta as bm
    >>> ds = bm.datasets.simulated(random_seed=0, n_systems=8, n_items=30, n_metrics=4)
    >>> m = ("coh =~ Rater.1.COH + Rater.2.COH + Rater.3.COH\n"
    ...      "con =~ Rater.1.CON + Rater.2.CON + Rater.3.CON")
    >>> res = bm.metric_variance(ds, bm.cfa(m, ds), metrics=["metric01.COH"],
    ...                          resampling={"n_resamples": 100}, random_seed=0)
    >>> sorted(set(res.summary().index.get_level_values("estimand")))[:3]
    ['error_share', 'other_traits_share', 'r_squared']

    R equivalent (point values): ``fs <- lavPredict(fit)``;
    ``summary(lm(scale(metric) ~ scale(fs)))`` for the coefficients and R^2.
    """
    ci_prob = check_ci_prob(ci_prob)
    if level not in ("output", "system"):
        raise ValueError(f"level must be 'output' or 'system', got {level!r}.")
    if disattenuate is None:
        disattenuate = level == "output"
    if disattenuate and level != "output":
        raise ValueError("disattenuate=True applies to level='output' only: the CFA gives "
                         "the variance of output factor scores, not of system means.")
    bayes = _is_bayesian(fit)
    opts = ResamplingOptions.coerce(resampling)
    seed = resolve_seed(random_seed)
    rng = np.random.default_rng(seed)
    if bayes:  # two-stage: posterior-mean scores, per-draw Psi and item weights
        draws = fit.factor_scores()
        scores = draws.mean(("chain", "draw"))
        C, D = draws.sizes["chain"], draws.sizes["draw"]
    else:
        scores = fit.factor_scores(method=score_method)
    if "item" not in scores.dims:
        raise ValueError("metric_variance needs a CFA fitted to a bayesmeta Dataset.")
    traits = [str(t) for t in scores["trait"].values]
    T = len(traits)
    systems = [str(s) for s in scores["system"].values]
    items = [str(i) for i in scores["item"].values]
    x = _metric_array(data, metrics, run, reference, systems, items)
    mnames = [str(m) for m in x["metric"].values]
    claimed = _claims(data, mnames, traits, claims)
    # values (S, I, T + M)
    z = np.concatenate([scores.transpose("system", "item", "trait").values,
                        x.transpose("system", "item", "metric").values], axis=-1)
    incomplete = np.isnan(z).any(-1)
    notes = []
    if incomplete.any():
        notes.append(f"{int(incomplete.sum())} output(s) with a missing metric score or no "
                     f"factor score were left out (listwise).")
    S, I = incomplete.shape
    R = C * D if bayes else opts.n_resamples
    if bayes:
        w_sys, w_items = np.ones((R, S)), I * rng.dirichlet(np.ones(I), size=R)
    else:
        w_sys, w_items = _bootstrap_weights(rng, R, S, I, opts.unit)
    keep = (~incomplete).astype(float)
    zf = np.where(incomplete[..., None], 0.0, z)
    if level == "output":
        rows = zf.reshape(S * I, -1)
        w = (w_sys[:, :, None] * w_items[:, None, :] * keep[None]).reshape(len(w_items),
                                                                           S * I)
        cov = np.concatenate([_weighted_cov(rows[None], w[sl]) for sl in
                              _slices(len(w_items))])
    else:
        ww = w_items[:, None, :] * keep[None]  # (R+1, S, I)
        with np.errstate(invalid="ignore", divide="ignore"):
            means = np.einsum("rsi,sik->rsk", ww, zf) / ww.sum(-1)[..., None]
        cov = _weighted_cov(means, w_sys)
    psi = None
    if disattenuate:
        psi = (fit.idata.posterior["factor_corr"].sel(trait=traits, trait2=traits)
               .transpose("chain", "draw", "trait", "trait2").values.reshape(R, T, T)
               if bayes else _factor_correlations(fit, traits))
    parts = _regression_shares(cov, T, psi)
    beta, r2, r = parts["beta"], parts["r2"], parts["r"]  # (R(+1), M, T), (R(+1), M)
    rows_out: list[tuple[str, str, str]] = []
    values: list[np.ndarray] = []
    for j, m in enumerate(mnames):
        for k, t in enumerate(traits):
            rows_out.append(("validity_coefficient", t, m))
            values.append(beta[:, j, k])
    for j, m in enumerate(mnames):
        rows_out.append(("r_squared", "", m))
        values.append(r2[:, j])
        rows_out.append(("error_share", "", m))
        values.append(1 - r2[:, j])
        if m in claimed:
            c = traits.index(claimed[m])
            share = beta[:, j, c] * r[:, j, c]
            rows_out += [("trait_share", claimed[m], m), ("other_traits_share", "", m),
                         ("specificity", claimed[m], m)]
            with np.errstate(invalid="ignore", divide="ignore"):
                values += [share, r2[:, j] - share, share / r2[:, j]]
    vals = np.stack(values)  # (rows, R + 1)
    index = pd.MultiIndex.from_tuples(rows_out, names=["estimand", "trait", "metric"])
    unclaimed = [m for m in mnames if m not in claimed]
    if unclaimed:
        notes.append(f"no claimed trait for {len(unclaimed)} metric(s) "
                     f"({', '.join(unclaimed[:5])}{', ...' if len(unclaimed) > 5 else ''}); "
                     f"pass claims= for their trait_share and specificity.")
    info = {"data": select.describe(data), "level": level,
            "shares": "Pratt (1987): beta_t * r_t, summing to R^2"}
    if bayes:
        da = xr.DataArray(vals.reshape(len(rows_out), C, D), dims=("row", "chain", "draw"),
                          coords={"row": np.arange(len(rows_out))})
        summ = summarize(da, ci_prob=ci_prob)
        iv = summ["interval"].transpose("row", "ci_bound").values
        table = pd.DataFrame({"mean": summ["mean"].values, "sd": summ["sd"].values,
                              "hdi_low": iv[:, 0], "hdi_high": iv[:, 1],
                              **{k: summ[k].values for k in ("r_hat", "ess_bulk",
                                                             "ess_tail")}}, index=index)
        info["regressors"] = (f"posterior-mean factor scores ({', '.join(traits)}) of the "
                              f"Bayesian CFA")
        info["posterior"] = (f"{C} x {D} draws: the CFA's factor correlations x a Bayesian "
                             f"bootstrap over items (two-stage)")
        notes.append("Two-stage: regression calibration on the posterior-mean factor "
                     "scores; each draw pairs the CFA's posterior factor correlations with "
                     "Bayesian-bootstrap item weights. The posterior spread of the scores "
                     "around their means is not propagated (no joint model).")
        return Result(table, title="Metric variance: claimed trait, other traits, error "
                      "(Bayesian, two-stage)", info=info, notes=notes, ci_prob=ci_prob,
                      posterior="CFA posterior x Bayesian bootstrap over items",
                      extra={"draws": da.assign_coords(
                          estimand=("row", [r_[0] for r_ in rows_out]),
                          trait=("row", [r_[1] for r_ in rows_out]),
                          metric=("row", [r_[2] for r_ in rows_out]))},
                      random_seed=seed, data_hash=data_hash(data))
    table = pd.DataFrame({"classical": vals[:, 0]}, index=index)
    kind = None
    if R:
        iv = equal_tailed(vals[:, 1:], ci_prob, axis=(-1,))
        table["classical_low"], table["classical_high"] = iv[:, 0], iv[:, 1]
        kind = f"percentile bootstrap over {_UNIT_LABEL[opts.unit]}"
    notes.append("Regression calibration: coefficients standardized with the CFA's factor "
                 "variances and correlations, so R^2 is not attenuated by the scores' error."
                 if disattenuate else
                 "OLS on standardized point (EBM) factor scores: at the output level R^2 is "
                 "attenuated by the scores' error (error_share too high); use "
                 "disattenuate=True there.")
    notes.append("The bootstrap holds the factor scores (and the CFA) fixed.")
    info["regressors"] = f"factor scores ({', '.join(traits)}; {score_method})"
    info["standardization"] = ("regression calibration (CFA factor variances)"
                               if disattenuate else
                               "sample sd of the scores (OLS on standardized scores)")
    if R:
        info["resampling"] = f"{R} bootstrap resamples of {_UNIT_LABEL[opts.unit]}"
    return Result(table, title="Metric variance: claimed trait, other traits, error",
                  info=info, notes=notes, ci_prob=ci_prob, classical_ci_kind=kind,
                  random_seed=seed, data_hash=data_hash(data))


def _factor_correlations(fit: Any, traits: list[str]) -> np.ndarray:
    """The CFA's factor correlation matrix (WLSMV estimates) in the order of ``traits``."""
    if not hasattr(fit, "details"):
        raise ValueError("disattenuate=True needs the CFA's factor correlations; pass a "
                         "bm.cfa result or disattenuate=False.")
    est = fit.details()["est"]
    psi = np.eye(len(traits))
    for (kind, lhs, _op, rhs), value in est.items():
        if kind == "factor_correlation" and lhs in traits and rhs in traits:
            a, b = traits.index(lhs), traits.index(rhs)
            psi[a, b] = psi[b, a] = value
    return psi


def _slices(n: int, size: int = 100) -> list[slice]:
    return [slice(s, min(n, s + size)) for s in range(0, n, size)]


# ----------------------------------------------------------------------------- residuals
def _residual_corr(cov: np.ndarray, T: int, psi: np.ndarray | None) -> np.ndarray:
    """Correlations of the metrics' residuals after the traits (..., M, M): the partial
    covariance ``C_mm - C_mf C_ff^-1 C_fm`` (``psi`` None) or, with regression calibration,
    ``C_mm - B' Psi B`` with ``B = C_ff^-1 C_fm``."""
    cff, cfm, cmm = cov[..., :T, :T], cov[..., :T, T:], cov[..., T:, T:]
    b = np.linalg.solve(cff, cfm)
    if psi is None:
        res = cmm - np.swapaxes(cfm, -1, -2) @ b
    else:
        res = cmm - np.swapaxes(b, -1, -2) @ psi @ b
    sd = np.sqrt(np.diagonal(res, axis1=-2, axis2=-1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return res / (sd[..., :, None] * sd[..., None, :])


def _principal_components(corr: np.ndarray, k: int, ref: np.ndarray | None = None
                          ) -> tuple[np.ndarray, np.ndarray]:
    """Top-``k`` eigenvectors scaled to loadings (..., M, k) and the share of the total
    variance of each (..., k); signs aligned to ``ref`` loadings (M, k), else the largest
    absolute loading made positive."""
    vals, vecs = np.linalg.eigh(corr)
    vals, vecs = vals[..., ::-1][..., :k], vecs[..., :, ::-1][..., :, :k]
    if ref is None:
        big = np.take_along_axis(vecs, np.abs(vecs).argmax(-2)[..., None, :], axis=-2)
        sign = np.sign(big)
    else:
        sign = np.sign(np.einsum("...mk,mk->...k", vecs, ref))[..., None, :]
    sign = np.where(sign == 0, 1.0, sign)
    loadings = vecs * sign * np.sqrt(np.clip(vals, 0, None))[..., None, :]
    share = vals / corr.shape[-1]
    return loadings, share


def metric_residuals(
    data: xr.Dataset,
    fit: Any,
    *,
    metrics: Sequence[str] | None = None,
    n_components: int = 2,
    disattenuate: bool = True,
    score_method: str = "EBM",
    run: Any = None,
    reference: Any = "first",
    ci_prob: float = CI_PROB,
    resampling: ResamplingOptions | Mapping[str, Any] | None = None,
    random_seed: int | None = None,
) -> Result:
    r"""Residual correlations of metrics after the traits, and their principal components
    (MetricEval App. A.6, Fig. 7).

    Each metric is regressed on the CFA's factor scores over outputs (as
    :func:`metric_variance`); the residuals' correlation matrix shows which metrics share
    variance that no expert-rated trait explains, its principal components the clusters.

    .. math::
        \Sigma_e = C_{xx} - B^\top \Psi B, \qquad B = C_{ff}^{-1} C_{fx}, \qquad
        \rho^{e}_{mm'} = \Sigma_{e,mm'} / \sqrt{\Sigma_{e,mm}\Sigma_{e,m'm'}}

    (regression calibration, ``disattenuate=True``: the traits' model covariance
    :math:`\Psi` removes all of their variance, which the scores' own covariance would
    not); with ``disattenuate=False`` the plain partial correlation given the scores,
    :math:`C_{xx} - C_{xf} C_{ff}^{-1} C_{fx}`. Principal components: eigenvectors of
    :math:`\rho^e` scaled by the square roots of their eigenvalues (loadings), sign fixed so
    the largest loading is positive; in every bootstrap resample the signs are aligned to
    the point estimate's.

    Parameters
    ----------
    data : xarray.Dataset
    fit : CFAResult
        ``bm.cfa(model, data)``.
    metrics : list of str, optional
        At least ``n_components`` metrics (default all).
    n_components : int
        Principal components reported (default 2, as Fig. 7).
    disattenuate : bool
        Regression calibration (default) or the partial correlation given the scores.
    score_method, run, reference, ci_prob, resampling, random_seed :
        As :func:`metric_variance` (percentile bootstrap over ``resampling.unit``).

    Returns
    -------
    Result
        ``summary()`` indexed ``(estimand, component, metric, metric2)``: estimands
        ``residual_correlation`` (each pair once, ``metric < metric2`` in the data's order),
        ``pc_loading`` (per component and metric) and ``pc_variance_share`` (per component);
        columns ``classical``, ``classical_low``, ``classical_high``.

    Notes
    -----
    Bootstrap intervals of loadings are only meaningful for components whose eigenvalue is
    well separated from the next (otherwise the components rotate between resamples). The
    bootstrap holds the factor scores and :math:`\Psi` fixed.

    Examples
    --------
    >>> import bayesmeta as bm
    >>> ds = bm.datasets.simulated(random_seed=0, n_systems=8, n_items=30, n_metrics=4)
    >>> m = ("coh =~ Rater.1.COH + Rater.2.COH + Rater.3.COH\n"
    ...      "con =~ Rater.1.CON + Rater.2.CON + Rater.3.CON")
    >>> res = bm.metric_residuals(ds, bm.cfa(m, ds), resampling={"n_resamples": 50},
    ...                           random_seed=0)
    >>> sorted(set(res.summary().index.get_level_values("estimand")))
    ['pc_loading', 'pc_variance_share', 'residual_correlation']

    R equivalent (plain partial correlations): ``fs <- lavPredict(fit)``;
    ``e <- resid(lm(as.matrix(metrics) ~ fs))``; ``cor(e)``; ``prcomp(e, scale. = TRUE)``.
    """
    ci_prob = check_ci_prob(ci_prob)
    if _is_bayesian(fit):
        raise NotImplementedError("metric_residuals takes a classical CFA (bm.cfa(model, "
                                  "data)); the posterior version is not implemented.")
    if isinstance(n_components, bool) or not isinstance(n_components, int | np.integer) \
            or n_components < 1:
        raise ValueError(f"n_components must be a positive integer, got {n_components!r}.")
    opts = ResamplingOptions.coerce(resampling)
    seed = resolve_seed(random_seed)
    rng = np.random.default_rng(seed)
    scores = fit.factor_scores(method=score_method)
    if "item" not in scores.dims:
        raise ValueError("metric_residuals needs a CFA fitted to a bayesmeta Dataset.")
    traits = [str(t) for t in scores["trait"].values]
    T = len(traits)
    systems = [str(s) for s in scores["system"].values]
    items = [str(i) for i in scores["item"].values]
    x = _metric_array(data, metrics, run, reference, systems, items)
    mnames = [str(m) for m in x["metric"].values]
    M = len(mnames)
    if M < max(2, n_components):
        raise ValueError(f"metric_residuals needs at least {max(2, n_components)} metrics "
                         f"(n_components={n_components}); got {M}.")
    z = np.concatenate([scores.transpose("system", "item", "trait").values,
                        x.transpose("system", "item", "metric").values], axis=-1)
    incomplete = np.isnan(z).any(-1)
    notes = []
    if incomplete.any():
        notes.append(f"{int(incomplete.sum())} output(s) with a missing metric score or no "
                     f"factor score were left out (listwise).")
    S, I = incomplete.shape
    R = opts.n_resamples
    w_sys, w_items = _bootstrap_weights(rng, R, S, I, opts.unit)
    keep = (~incomplete).astype(float)
    rows = np.where(incomplete[..., None], 0.0, z).reshape(S * I, -1)
    w = (w_sys[:, :, None] * w_items[:, None, :] * keep[None]).reshape(len(w_items), S * I)
    cov = np.concatenate([_weighted_cov(rows[None], w[sl]) for sl in _slices(len(w_items))])
    psi = _factor_correlations(fit, traits) if disattenuate else None
    corr = _residual_corr(cov, T, psi)  # (R + 1, M, M)
    k = int(n_components)
    load0, _ = _principal_components(corr[0], k)
    loads, shares = _principal_components(corr, k, ref=load0)
    iu = np.triu_indices(M, 1)
    comps = [f"PC{c + 1}" for c in range(k)]
    index = ([("residual_correlation", "", mnames[a], mnames[b]) for a, b in zip(*iu,
                                                                                  strict=True)]
             + [("pc_loading", c, m, "") for c in comps for m in mnames]
             + [("pc_variance_share", c, "", "") for c in comps])
    vals = np.concatenate([corr[:, iu[0], iu[1]].T,
                           np.transpose(loads, (2, 1, 0)).reshape(k * M, -1),
                           shares.T], axis=0)  # (rows, R + 1)
    table = pd.DataFrame({"classical": vals[:, 0]}, index=pd.MultiIndex.from_tuples(
        index, names=["estimand", "component", "metric", "metric2"]))
    kind = None
    if R:
        iv = equal_tailed(vals[:, 1:], ci_prob, axis=(-1,))
        table["classical_low"], table["classical_high"] = iv[:, 0], iv[:, 1]
        kind = f"percentile bootstrap over {_UNIT_LABEL[opts.unit]}"
    notes.append("Residual correlations after regression calibration on the factor scores "
                 "(the traits' model covariance removed)." if disattenuate else
                 "Partial correlations given the point factor scores (part of the traits' "
                 "variance stays in the residuals: the scores are noisy).")
    notes.append("PC loadings: eigenvectors of the residual correlation matrix times the "
                 "square root of their eigenvalue, signs aligned to the point estimate in "
                 "every resample; read intervals only for well-separated eigenvalues.")
    info = {"data": select.describe(data), "regressors": f"factor scores "
            f"({', '.join(traits)}; {score_method})", "metrics": M,
            "components": k}
    if R:
        info["resampling"] = f"{R} bootstrap resamples of {_UNIT_LABEL[opts.unit]}"
    extra = {"residual_correlation": xr.DataArray(
        corr[0], dims=("metric", "metric2"), coords={"metric": mnames, "metric2": mnames})}
    return Result(table, title="Residual correlations of metrics after the traits",
                  info=info, notes=notes, extra=extra, ci_prob=ci_prob,
                  classical_ci_kind=kind, random_seed=seed, data_hash=data_hash(data))


# ----------------------------------------------------------------------------- MTMM
def _method_groups(metrics: list[str], factors: list[str]) -> dict[str, dict[str, str]]:
    """Metric families that rate at least two of the factors, from names ending in a
    factor (``G.EVAL.4.COH`` -> method ``G.EVAL.4``, trait ``coh``)."""
    lower = {f.lower(): f for f in factors}
    groups: dict[str, dict[str, str]] = {}
    for m in metrics:
        for sep in (".", "-", "_"):
            if sep in m:
                head, tail = m.rsplit(sep, 1)
                if tail.lower() in lower:
                    groups.setdefault(head, {})[lower[tail.lower()]] = m
                break
    return {k: v for k, v in groups.items() if len(v) >= 2}


def factor_mtmm(
    data: xr.Dataset,
    fit: Any,
    *,
    methods: Mapping[str, Mapping[str, str]] | None = None,
    method: str = "kendall",
    expert: str = "Expert",
    score_method: str = "EBM",
    run: Any = None,
    reference: Any = "first",
    ci_prob: float = CI_PROB,
    resampling: ResamplingOptions | Mapping[str, Any] | None = None,
    random_seed: int | None = None,
) -> Result:
    r"""Multitrait-multimethod table of the experts' factor scores and metric families,
    with intervals and the Campbell-Fiske criteria as probabilities (MetricEval App. A.5,
    Table 2).

    Variables: the CFA's factor scores (method ``expert``, one per trait) and, per method,
    one metric per trait. Each cell is the correlation over systems of two variables'
    system means.

    Parameters
    ----------
    data : xarray.Dataset
    fit : CFAResult or OrdinalCFAResult
        Classical: EBM scores, percentile bootstrap (``resampling.unit``). Bayesian: the
        posterior draws of the scores, each with a Bayesian-bootstrap draw of item weights.
    methods : dict, optional
        ``{method: {factor: metric}}``, e.g. ``{"G-EVAL-4": {"coh": "G.EVAL.4.COH",
        ...}}``. Default: metric families whose names end in a factor name, with at least
        two factors (on SummEval: ``G.EVAL.3.5`` and ``G.EVAL.4``).
    method : {"kendall", "pearson", "spearman"}
    expert : str
        The method label of the factor scores.
    score_method, run, reference, ci_prob, resampling, random_seed :
        As :func:`factor_validity`.

    Returns
    -------
    Result
        ``summary()`` indexed ``(estimand, trait, method, trait2, method2)``, estimand
        ``system_<method>``, one row per pair of variables; ``details()``: ``cell``
        (``convergent``: same trait, different methods; ``heterotrait-monomethod``;
        ``heterotrait-heteromethod``) and, for convergent cells, ``p_gt_heteromethod`` (the
        share of draws in which the cell exceeds every heterotrait-heteromethod cell in its
        row and column: Campbell & Fiske's second criterion) and ``p_gt_monomethod`` (it
        exceeds every heterotrait-monomethod cell of its two variables: their third
        criterion). Bootstrap proportions for a classical fit, posterior probabilities
        for a Bayesian one. ``extra["draws"]``: the resampled or posterior cells (dims
        ``resample`` or the flattened draws, and ``pair``).

    Notes
    -----
    The diagonal (each variable's reliability) is not part of this table; see
    ``bm.consistency`` / ``bm.reliability``.

    References
    ----------
    Campbell, D. T., & Fiske, D. W. (1959). Convergent and discriminant validation by the
    multitrait-multimethod matrix. *Psychological Bulletin*, 56(2), 81-105.

    Examples
    --------
    >>> import bayesmeta as bm
    >>> ds = bm.datasets.simulated(random_seed=0, n_systems=8, n_items=30, n_metrics=8)
    >>> m = ("coh =~ Rater.1.COH + Rater.2.COH + Rater.3.COH\n"
    ...      "con =~ Rater.1.CON + Rater.2.CON + Rater.3.CON")
    >>> meth = {"A": {"coh": "metric01.COH", "con": "metric02.CON"},
    ...         "B": {"coh": "metric05.COH", "con": "metric06.CON"}}
    >>> res = bm.factor_mtmm(ds, bm.cfa(m, ds), methods=meth,
    ...                      resampling={"n_resamples": 100}, random_seed=0)
    >>> len(res.summary())  # 6 variables: 15 pairs
    15
    """
    ci_prob = check_ci_prob(ci_prob)
    coef = _coefficients(method)
    if len(coef) != 1:
        raise ValueError("factor_mtmm takes one correlation method.")
    coef_name = coef[0]
    opts = ResamplingOptions.coerce(resampling)
    seed = resolve_seed(random_seed)
    rng = np.random.default_rng(seed)
    bayes = _is_bayesian(fit)
    scores = fit.factor_scores() if bayes else fit.factor_scores(method=score_method)
    if "item" not in scores.dims:
        raise ValueError("factor_mtmm needs a CFA fitted to a bayesmeta Dataset.")
    traits = [str(t) for t in scores["trait"].values]
    systems = [str(s) for s in scores["system"].values]
    items = [str(i) for i in scores["item"].values]
    if methods is None:
        all_metrics = [str(m) for m in data["metric"].values] if "metric" in data.dims else []
        methods = _method_groups(all_metrics, traits)
        if not methods:
            raise ValueError("no metric family rates two or more of the CFA's factors by "
                             "name; pass methods={method: {factor: metric}}.")
    spec: list[tuple[str, str, str | None]] = [(expert, t, None) for t in traits]
    for name, cols in methods.items():
        for t, m in cols.items():
            if t not in traits:
                raise ValueError(f"methods[{name!r}] names trait {t!r}, not a factor of the "
                                 f"CFA ({traits}).")
            spec.append((str(name), t, str(m)))
    if str(expert) in {str(k) for k in methods}:
        raise ValueError(f"method name {expert!r} is taken by the factor scores; pass "
                         f"expert= another label.")
    metric_names = [m for _, _, m in spec if m is not None]
    x = _metric_array(data, metric_names, run, reference, systems, items)
    xv = x.transpose("metric", "system", "item").values.astype(float)
    I = len(items)
    V = len(spec)
    if bayes:
        post = scores.transpose("chain", "draw", "trait", "system", "item")
        C, D = post.sizes["chain"], post.sizes["draw"]
        n = C * D
        fv_all = post.values.reshape(n, len(traits), len(systems), I)
        w = I * rng.dirichlet(np.ones(I), size=n)
    else:
        fv0 = scores.transpose("trait", "system", "item").values
        n = opts.n_resamples
        a_sys, w = _bootstrap_weights(rng, n, len(systems), I, opts.unit)
        a_sys, w = a_sys[1:], w[1:]
    iu = np.triu_indices(V, 1)

    def cells(fv: np.ndarray, weights: np.ndarray | None,
              system_weights: np.ndarray | None = None) -> np.ndarray:
        """(R, pairs) correlations for factor scores fv (R or 1, T, S, I)."""
        if weights is None:
            fm = _weighted_means(fv[0], None)
        else:
            ok = ~np.isnan(fv)
            with np.errstate(invalid="ignore", divide="ignore"):
                fm = np.einsum("ri,rtsi->rts", weights, np.where(ok, fv, 0.0)) / np.einsum(
                    "ri,rtsi->rts", weights, ok.astype(float))
        xm = _weighted_means(xv, weights)
        allm = np.concatenate([np.broadcast_to(fm, (max(fm.shape[0], xm.shape[0]),
                                                    *fm.shape[1:])),
                               np.broadcast_to(xm, (max(fm.shape[0], xm.shape[0]),
                                                    *xm.shape[1:]))], axis=1)
        r = _correlate(allm, allm, [coef_name], system_weights)[coef_name]  # (R, V, V)
        return r[:, iu[0], iu[1]]

    if bayes:
        draws = np.concatenate([cells(fv_all[sl], w[sl]) for sl in _slices(n, _CHUNK)])
    else:
        point = cells(fv0[None], None)[0]
        draws = (np.concatenate([cells(np.broadcast_to(fv0, (sl.stop - sl.start,
                                                             *fv0.shape)), w[sl], a_sys[sl])
                                 for sl in _slices(n, _CHUNK)]) if n else None)
    est = f"system_{coef_name}"
    labels = [(est, spec[a][1], spec[a][0], spec[b][1], spec[b][0]) for a, b in
              zip(*iu, strict=True)]
    index = pd.MultiIndex.from_tuples(labels, names=["estimand", "trait", "method", "trait2",
                                                     "method2"])
    kinds = []
    for a, b in zip(*iu, strict=True):
        same_t, same_m = spec[a][1] == spec[b][1], spec[a][0] == spec[b][0]
        kinds.append("convergent" if same_t and not same_m else
                     "heterotrait-monomethod" if same_m else "heterotrait-heteromethod")
    details = pd.DataFrame({"cell": kinds}, index=index)
    if draws is not None:
        pos = {(a, b): k for k, (a, b) in enumerate(zip(*iu, strict=True))}

        def cell(a: int, b: int) -> int:
            return pos[(min(a, b), max(a, b))]

        p_hetero = np.full(len(labels), np.nan)
        p_mono = np.full(len(labels), np.nan)
        for k, (a, b) in enumerate(zip(*iu, strict=True)):
            if kinds[k] != "convergent":
                continue
            row_a = [c for c in range(V) if spec[c][0] == spec[b][0] and c != b]
            row_b = [c for c in range(V) if spec[c][0] == spec[a][0] and c != a]
            hetero = [cell(a, c) for c in row_a] + [cell(b, c) for c in row_b]
            mono = [cell(a, c) for c in row_b] + [cell(b, c) for c in row_a]
            conv = draws[:, k][:, None]
            p_hetero[k] = float((conv > draws[:, hetero]).all(1).mean()) if hetero else np.nan
            p_mono[k] = float((conv > draws[:, mono]).all(1).mean()) if mono else np.nan
        details["p_gt_heteromethod"] = p_hetero
        details["p_gt_monomethod"] = p_mono
    info = {"data": select.describe(data), "variables": ", ".join(
        f"{mt}:{t}" for mt, t, _ in spec), "correlation": coef_name,
        "level": "system (means over items)"}
    extra = {}
    if draws is not None:
        extra["draws"] = xr.DataArray(
            draws, dims=("resample", "pair"),
            coords={"pair": np.arange(len(labels)),
                    **{name: ("pair", [lab[k] for lab in labels]) for k, name in
                       enumerate(("estimand", "trait", "method", "trait2", "method2"))}})
    notes = ["details(): cell kind and, for convergent cells, the share of "
             + ("posterior draws" if bayes else "bootstrap resamples")
             + " in which the cell exceeds every heterotrait-heteromethod cell in its row "
               "and column (p_gt_heteromethod) and every heterotrait-monomethod cell of its "
               "two variables (p_gt_monomethod) (Campbell & Fiske 1959)."]
    if bayes:
        da = xr.DataArray(draws.reshape(C, D, -1), dims=("chain", "draw", "pair"),
                          coords={"pair": np.arange(len(labels))})
        summ = summarize(da, ci_prob=ci_prob)
        iv = summ["interval"].transpose("pair", "ci_bound").values
        table = pd.DataFrame({"mean": summ["mean"].values, "sd": summ["sd"].values,
                              "hdi_low": iv[:, 0], "hdi_high": iv[:, 1],
                              **{s: summ[s].values for s in ("r_hat", "ess_bulk",
                                                             "ess_tail")}}, index=index)
        return Result(table, title="Multitrait-multimethod table on factor scores "
                      "(Bayesian)", info=info, details=details, notes=notes, extra=extra,
                      ci_prob=ci_prob, posterior="factor-score posterior x Bayesian "
                      "bootstrap over items", random_seed=seed, data_hash=data_hash(data))
    table = pd.DataFrame({"classical": point}, index=index)
    kind = None
    if draws is not None:
        iv = equal_tailed(draws.T, ci_prob, axis=(-1,))
        table["classical_low"], table["classical_high"] = iv[:, 0], iv[:, 1]
        kind = f"percentile bootstrap over {_UNIT_LABEL[opts.unit]}"
    return Result(table, title="Multitrait-multimethod table on factor scores", info=info,
                  details=details, notes=notes, extra=extra, ci_prob=ci_prob,
                  classical_ci_kind=kind,
                  random_seed=seed, data_hash=data_hash(data))
