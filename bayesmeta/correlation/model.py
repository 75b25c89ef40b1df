r"""The hierarchical bivariate model of metric-human correlation (paper 001, App. C):
:func:`fit_correlation_model`.

For one metric, the (metric, human) scores of the outputs of system :math:`s` on items
:math:`i = 1..n_s` are bivariate normal with a system-specific correlation :math:`r_s`;
the system means are bivariate normal with the system-level correlation :math:`\rho`, and
the :math:`r_s` scatter around the location :math:`\mu_r`. Reported per metric, next to the
classical measures computed in NumPy (:mod:`bayesmeta.correlation.bivariate`):

* ``within_system_pearson``: the mean over the data's systems of :math:`r_s` (classical
  twin: the mean over systems of the within-system Pearson correlation, paper 001's
  item-level Pearson);
* ``system_pearson``: :math:`\rho` (classical twin: Pearson's r of the system means);
* ``within_system_sd``: :math:`\sigma_r` (classical: the SD over systems of the
  within-system Pearson correlations, inflated by their sampling error).

The model is built in :mod:`bayesmeta.correlation._model_build`, its result lives in
:mod:`bayesmeta.correlation._model_result`, and its generative process is
:func:`bayesmeta.simulate.simulate_correlation_study`. See the model card
``models/correlation.md``.

PyMC is imported only inside the functions that build and sample the model.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import xarray as xr

from bayesmeta.correlation._model_build import PARAMETERS, PRIORS, build_model, sample_prior
from bayesmeta.correlation._model_result import (
    ESTIMANDS,
    VARIABLE_OF,
    CorrelationResult,
    label_trait,
)
from bayesmeta.correlation.bivariate import (
    MIN_ITEMS,
    CorrelationStats,
    classical_correlations,
    sufficient_stats,
)
from bayesmeta.data import select
from bayesmeta.data.schema import _fmt, validate
from bayesmeta.options import SamplerOptions, resolve_seed
from bayesmeta.results import data_hash
from bayesmeta.summaries import CI_PROB, check_ci_prob, posterior_table


def _human_values(data: xr.Dataset, trait: str | None, raters: Any, human: Any,
                  metrics: list[str]) -> tuple[np.ndarray, str, str, xr.DataArray]:
    """The human score as ``(system, item)`` or ``(metric, system, item)`` values aligned to
    the data (through :func:`bayesmeta.data.select.human_score`), its trait label, a
    description, and the DataArray."""
    if isinstance(human, xr.DataArray) and "metric" in human.dims:
        if set(human.dims) != {"metric", "system", "item"}:
            raise ValueError(f"human must have dims (system, item) or (metric, system, item), "
                             f"got {tuple(human.dims)}.")
        labels = select.check_labels(human["metric"].values, metrics, "metric")
        parts = [select.human_score(data, human=human.sel(metric=m, drop=True)).values
                 for m in labels]
        hum = xr.concat(parts, dim="metric").assign_coords(metric=metrics)
        name = str(human.name or "human")
        return (hum.transpose("metric", "system", "item").values.astype(float), name,
                f"{name} (given, one per metric)", hum)
    if trait is None and human is None:
        kinds = select.human_traits(data)
        if len(kinds) == 1:
            trait = next(iter(kinds))
    hs = select.human_score(data, trait, raters=raters, human=human)
    return hs.values.values.astype(float), hs.trait, hs.label, hs.values


def _check_pairs(x: np.ndarray, z: np.ndarray, metrics: list[str], systems: list[str]) -> None:
    """Name the metric and system of a cell with too few pairs, and a constant score."""
    z = np.broadcast_to(z, x.shape)
    n = (~np.isnan(x) & ~np.isnan(z)).sum(-1)
    if (n < MIN_ITEMS).any():
        m, s = np.argwhere(n < MIN_ITEMS)[0]
        raise ValueError(f"metric {metrics[m]!r}, system {systems[s]!r} has {n[m, s]} item(s) "
                         f"with both a metric and a human score; at least {MIN_ITEMS} are "
                         f"needed for a within-system correlation.")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        sdx = np.nanstd(x.reshape(x.shape[0], -1), axis=1)
        sdz = np.nanstd(z.reshape(z.shape[0], -1), axis=1)
    for what, sd in (("metric", sdx), ("human score", sdz)):
        bad = [metrics[m] for m in np.flatnonzero(~(sd > 0))]
        if bad:
            raise ValueError(f"the {what} is constant for metric(s) {_fmt(bad)}: its "
                             f"correlation is undefined.")


def fit_correlation_model(
    data: xr.Dataset,
    trait: str | None = None,
    *,
    raters: str | Sequence[str] | None = None,
    human: xr.DataArray | None = None,
    metrics: Sequence[str] | None = None,
    run: Any = None,
    reference: Any = "first",
    ci_prob: float = CI_PROB,
    centered: bool = False,
    batch_size: int | None = None,
    sampling: SamplerOptions | Mapping[str, Any] | str | None = None,
    random_seed: int | None = None,
    progress: bool | None = None,
) -> CorrelationResult:
    r"""Posterior within-system and system-level metric-human correlations (paper 001,
    App. C model).

    Fits, for every metric at once, the hierarchical bivariate model

    .. math::
        (x_{si}, y_{si}) &\sim N_2\big((a_s, b_s),\ \Sigma_s\big),\quad
            \Sigma_s = \begin{pmatrix}\sigma_x^2 & r_s\sigma_x\sigma_y\\
                       r_s\sigma_x\sigma_y & \sigma_y^2\end{pmatrix},\\
        r_s &\sim \mathcal{TN}_{(-1,1)}(\mu_r, \sigma_r),\qquad
        (a_s, b_s) \sim N_2\Big((\mu_x, \mu_y),
            \begin{pmatrix}\tau_x^2 & \rho\tau_x\tau_y\\ \rho\tau_x\tau_y & \tau_y^2
            \end{pmatrix}\Big)

    (x the metric, y the human score, s the system, i the item) and reports the
    within-system correlation :math:`\bar r = \frac1S\sum_s r_s` (paper 001's item level),
    the system-level correlation :math:`\rho` and the spread :math:`\sigma_r`, next to their
    classical estimates (:func:`bayesmeta.correlation.bivariate.classical_correlations`).
    Priors (standardised scores): :math:`\mu \sim N(0,1)`, :math:`\tau, \sigma \sim
    N^+(0,1)`, :math:`(\rho+1)/2, (\mu_r+1)/2 \sim \mathrm{Beta}(2,2)`,
    :math:`\sigma_r \sim N^+(0, 0.25)`.

    Parameters
    ----------
    data : xarray.Dataset
        A bayesmeta dataset with ``score`` and a human score (``rating`` or ``judgment``)
        unless ``human`` is given.
    trait : str, optional
        The trait of the human score: the mean over raters of its ordinal ratings, or its
        continuous judgment (required when the data have several traits).
    raters : str or list of str, optional
        Average these raters' ratings only (one rater: that rater's ratings).
    human : xarray.DataArray, optional
        Given human scores with dims ``(system, item)`` or ``(metric, system, item)`` (one
        per metric, as App. C simulates), aligned to the data by label.
    metrics : list of str, optional
        Metrics to fit (default all).
    run : label, "mean" or None
        Which metric run (default the first; labels only).
    reference : "first", "mean", "max", "min" or label
        One score per output for metrics with a ``reference`` dim.
    ci_prob : float
        Probability of the highest-density intervals and of the Fisher-z interval.
    centered : bool
        Centred or non-centred (default) truncated normal for :math:`r_s` (see
        :func:`bayesmeta.correlation._model_build.build_model`).
    batch_size : int, optional
        Fit the metrics in batches of this size (one compiled model, data swapped);
        default: all metrics in one model.
    sampling : SamplerOptions, dict, "fast" or "full", optional
        Sampler settings (``target_accept`` defaults to 0.9; ``"fast"``: 2 chains x 300
        draws, a preview; never report fast-mode numbers).
    random_seed : int, optional
        Seed (drawn and recorded when omitted); batch ``k`` uses ``random_seed + k``.
    progress : bool, optional
        Progress bar.

    Returns
    -------
    CorrelationResult
        ``summary()`` indexed by ``(estimand, trait, metric)`` (estimands
        ``within_system_pearson``, ``system_pearson``, ``within_system_sd``) with columns
        ``classical``, ``classical_low``, ``classical_high`` (Fisher z, system level only),
        ``mean``, ``sd``, ``hdi_low``, ``hdi_high``, ``r_hat``, ``ess_bulk``,
        ``ess_tail``; ``details()["parameter"]`` names the posterior variable of each row.

    Notes
    -----
    Each metric is an independent copy of the model (the human score enters each copy).
    The system means are integrated out in closed form, so the sampled parameters are
    the nine App. C parameters and the S correlations :math:`r_s` per metric. The
    likelihood is invariant to the scale of each score; scores are standardised (pooled
    over systems and items) so that the priors are on a unit scale, and
    :meth:`CorrelationResult.parameter_draws` returns the parameters on the original
    scales. ``within_system_pearson`` is the finite-population mean over the data's
    systems (the estimand of the classical measure); ``r_mu`` (in
    :meth:`CorrelationResult.parameters`) is the location of the population of systems.
    See ``models/correlation.md``.

    References
    ----------
    Gao, Hu, Lin & Wan (2024), *Analyzing and Evaluating Correlation Measures in NLG
    Meta-Evaluation*, App. C (paper 001). Lewandowski, Kurowicka & Joe (2009), LKJ prior.

    Examples
    --------
    >>> import bayesmeta as bm  # doctest: +SKIP
    >>> fit = bm.fit_correlation_model(bm.datasets.summeval(), "COH",
    ...                                metrics=["BLEU", "BertScore_f1"], sampling="fast",
    ...                                random_seed=1)  # doctest: +SKIP
    >>> fit.summary().loc[("system_pearson", "COH", "BLEU"),
    ...                   ["classical", "mean"]]  # doctest: +SKIP

    R equivalent: none packaged; ``brms`` with a custom family, or Stan.
    """
    from bayesmeta.sampling import (
        cached_model,
        check_convergence,
        describe_run,
        diagnose,
        sample_together,
        set_attrs,
    )

    if isinstance(human, str):
        raise TypeError(f"human must be a DataArray of human scores, got {human!r}; the mean "
                        f"over raters is the default, and raters= picks raters.")
    opts = SamplerOptions.coerce(sampling)
    ci_prob = check_ci_prob(ci_prob)
    if not isinstance(data, xr.Dataset):
        raise TypeError(f"data must be an xarray.Dataset, got {type(data).__name__}.")
    if "score" not in data:
        raise ValueError("data has no 'score' variable (the metric scores).")
    validate(data[[v for v in ("score", "rating", "judgment") if v in data]],
             warn_missing=False)
    seed = resolve_seed(random_seed)
    score = select.metric_scores(data, metrics, run=run, reference=reference)
    labels = [str(m) for m in score["metric"].values]
    systems = [str(s) for s in data["system"].values]
    select.require(len(systems), 3, "system", "fit_correlation_model")
    z, trait_label, human_label, hum = _human_values(data, trait, raters, human, labels)
    x = np.asarray(score.values, dtype=float)
    M, S, I = x.shape
    _check_pairs(x, z, labels, systems)
    stats = sufficient_stats(x, z)
    classical = classical_correlations(x, z, ci_prob=ci_prob)
    batch_size = int(min(max(M if batch_size is None else batch_size, 1), M))
    dhash = data_hash(data) if human is None else data_hash(
        xr.Dataset({"score": score, "human": hum}))

    opts = opts.resolve(target_accept=0.9)
    model = cached_model(("correlation", batch_size, S, bool(centered)),
                         lambda: build_model(batch_size, S, centered=centered))
    t0 = time.perf_counter()
    starts = list(range(0, M, batch_size))
    sizes, data_list = [], []
    for start in starts:
        idx = np.arange(start, min(start + batch_size, M))
        pad = np.r_[idx, np.full(batch_size - len(idx), idx[-1])]
        sizes.append(len(idx))
        data_list.append(stats.subset(pad).model_data())

    def reported(trace: Any) -> xr.Dataset:
        # what the table reports, derived r_mean included (padding rows repeat a metric)
        post = trace.posterior
        return xr.Dataset({"r_mean": post["r"].mean("system"),
                           **{p: post[p] for p in ("rho", "r_sigma", "r_mu", "r")}})

    # batches are one model refitted to new data; they share the draw dim, so a batch that
    # needed more draws is thinned to the shortest batch's length and re-checked there
    fits = sample_together([model] * len(starts), opts, data=data_list,
                           random_seed=[int((seed + k) % (2**31 - 1))
                                        for k in range(len(starts))],
                           progress=progress, reported=[reported] * len(starts),
                           attrs={"model": "correlation", "data_hash": dhash})
    parts = list(zip(fits, sizes, strict=True))
    elapsed = time.perf_counter() - t0
    idata = _merge(parts, labels, systems)
    post = idata.posterior
    post["r_mean"] = post["r"].mean("system")
    keep = ["r_mean", "rho", "r_sigma", "r_mu",
            *[p for p in PARAMETERS if p not in ("rho", "r_sigma", "r_mu")], "r"]
    diag = diagnose(post[keep])
    report = check_convergence(idata, keep, diagnostics=diag)
    set_attrs(idata, {"human": human_label, "sampling_seconds": round(elapsed, 2)})

    table = posterior_table(post, [VARIABLE_OF[e] for e in ESTIMANDS],
                            index=["trait", "metric"], ci_prob=ci_prob, diagnostics=diag,
                            estimands={v: e for e, v in VARIABLE_OF.items()})
    table = label_trait(table, trait_label)
    est = table.index.get_level_values("estimand")
    is_sys = np.asarray(est == "system_pearson")
    table.insert(0, "classical", np.concatenate([classical[e] for e in ESTIMANDS]))
    table.insert(1, "classical_low", np.where(is_sys, np.tile(classical["system_low"], 3),
                                              np.nan))
    table.insert(2, "classical_high", np.where(is_sys, np.tile(classical["system_high"], 3),
                                               np.nan))
    table["parameter"] = [VARIABLE_OF[e] for e in est]

    sides = {"metric": labels, "side": ["metric", "human"]}
    n_batches = -(-M // batch_size)
    info = {
        "data": f"{S} systems x {I} items; {M} metric(s); human score: {human_label}",
        "model": "App. C of paper 001: per-system bivariate normal, r_s ~ TN(r_mu, r_sigma; "
                 "-1, 1), system means bivariate normal with correlation rho",
        "priors": "mu ~ N(0,1); tau, sigma ~ HalfN(1) (standardised scores); "
                  "(rho+1)/2, (r_mu+1)/2 ~ Beta(2,2); r_sigma ~ HalfN(0.25)",
        "sampler": describe_run(idata) + (f"; {n_batches} batches of {batch_size} metrics"
                                          if n_batches > 1 else ""),
        "convergence": str(report),
        "classical": "mean within-system Pearson r; Pearson r of system means "
                     f"(Fisher-z {ci_prob:.0%} interval)",
    }
    res = CorrelationResult(
        table, title="Metric-human correlation (hierarchical bivariate model, paper 001 "
                     "App. C)",
        info=info, idata=idata,
        extra={"center": xr.DataArray(stats.center, dims=("metric", "side"), coords=sides),
               "scale": xr.DataArray(stats.scale, dims=("metric", "side"), coords=sides),
               "within_classical": xr.DataArray(classical["within"], dims=("metric", "system"),
                                                coords={"metric": labels, "system": systems})},
        notes=list(report.messages), ci_prob=ci_prob, classical_ci_kind="Fisher z",
        posterior="MCMC posterior", random_seed=seed, data_hash=dhash)
    res.n_systems, res.n_items, res.trait = int(S), int(I), str(trait_label)
    return res


def _merge(parts: list[tuple[Any, int]], metrics: list[str], systems: list[str]) -> Any:
    """Concatenate batch fits along ``metric`` (padding dropped) and label the coords."""
    import arviz as az

    posts, stats = [], []
    for idata, k in parts:
        p = idata.posterior.isel(metric=slice(0, k))
        posts.append(p.drop_vars(["metric", "system"], errors="ignore"))
        stats.append(idata.sample_stats)
    post = xr.concat(posts, dim="metric") if len(posts) > 1 else posts[0]
    post = post.assign_coords(metric=metrics, system=systems)
    post = post.drop_vars([v for v in ("r_unit",) if v in post])
    post.attrs = dict(parts[0][0].posterior.attrs)
    if len(stats) == 1:
        sstats = stats[0]
    else:
        sstats = stats[0][["diverging"]].copy()
        sstats["diverging"] = sum(s["diverging"] for s in stats)
        for name in ("reached_max_treedepth",):
            if all(name in s for s in stats):
                sstats[name] = sum(s[name].astype(int) for s in stats)
        sstats.attrs = dict(stats[0].attrs)
    return az.InferenceData(posterior=post, sample_stats=sstats)


__all__ = [
    "ESTIMANDS",
    "PARAMETERS",
    "PRIORS",
    "CorrelationResult",
    "CorrelationStats",
    "build_model",
    "classical_correlations",
    "fit_correlation_model",
    "sample_prior",
    "sufficient_stats",
]
