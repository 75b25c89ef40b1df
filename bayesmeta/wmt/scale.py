r"""The statistics of a whole WMT campaign, one language pair at a time, on dask.

A WMT metrics campaign (16 language pairs x 20 systems x 1,500 segments x 40 metrics, about
19 million metric scores) is too large to resample at once but falls apart into independent
pieces: every language pair's statistics and resamples depend on that language pair's
scores only. :func:`wmt_statistics` therefore maps one task over the language pairs (a
:func:`dask.delayed` task per language pair of a dask-backed, ``lp``-chunked Dataset, or a
plain loop without dask). Each task reads its language pair, computes the classical
statistics, and draws its bootstrap and Bayesian-bootstrap resamples in chunks of
:data:`CHUNK` (so memory holds one language pair and one chunk of resampling weights per
worker, never the resamples of the campaign). Within-group ``acc_eq`` is the exception: it
sorts each metric's pairs once per language pair and takes the classical row (unit weights)
and all resamples in one call, chunked inside (:mod:`bayesmeta.correlation._accuracy`).

Seeds are per language pair: :func:`~bayesmeta.wmt.simulate.language_pair_seed` derives an
integer :math:`s_{lp}` from ``random_seed`` and the language pair's *label*, and the task
uses :math:`s_{lp}` for SPA's permutations, :math:`s_{lp} + 1` for the bootstrap and
:math:`s_{lp} + 2` for the Bayesian bootstrap, the convention of
:func:`bayesmeta.soft_pairwise_accuracy`. The numbers therefore do not depend on the
scheduler, the chunking, the number of workers or the order of the language pairs, and one
language pair's rows equal those of the single-language-pair functions called with seed
:math:`s_{lp}` (recorded in ``details()["seed"]``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayesmeta.correlation.measures import measure_draws, parse_measures
from bayesmeta.correlation.resampling import percentile_interval, resampling_weights
from bayesmeta.data.schema import LP_DIM, split_language_pairs
from bayesmeta.options import ResamplingOptions, resolve_seed
from bayesmeta.results import Result, data_hash
from bayesmeta.summaries import CI_PROB, check_ci_prob, summarize
from bayesmeta.vocabulary import resampling_options
from bayesmeta.wmt._common import (
    UNIT_WORDS,
    WMT_DIRICHLET,
    default_unit,
    dirichlet_words,
    explicit_unit,
    inputs,
    systems_posterior_note,
)
from bayesmeta.wmt.clusters import _statistic
from bayesmeta.wmt.simulate import language_pair_seed

#: The correlation measures of a WMT campaign by default (WMT23-25): Pearson's r and
#: pairwise accuracy at the system level, Pearson's r over all segments ("no grouping")
#: and tie-calibrated accuracy within items at the segment level; SPA is added whenever
#: ``n_permutations`` > 0.
WMT_MEASURES = ("system_pearson", "system_acc_eq", "global_pearson", "within_item_acc_eq")
#: dask's local schedulers accepted by name; a ``dask.distributed.Client`` is the other way.
SCHEDULERS = ("synchronous", "threads", "processes")
#: Resamples evaluated at once within a language pair.
CHUNK = 50


def check_scheduler(scheduler: Any) -> Any:
    """``scheduler`` checked: None (no dask), a name of :data:`SCHEDULERS`, or a
    ``dask.distributed.Client``; asking for one without dask installed raises an
    ``ImportError`` that says how to install it."""
    if scheduler is None:
        return None
    if isinstance(scheduler, str):
        if scheduler not in SCHEDULERS:
            raise ValueError(f"scheduler must be None, one of {', '.join(SCHEDULERS)} or a "
                             f"dask.distributed Client, got {scheduler!r}.")
    elif not (hasattr(scheduler, "submit") and hasattr(scheduler, "gather")):
        raise TypeError(f"scheduler must be None, one of {', '.join(SCHEDULERS)} or a "
                        f"dask.distributed Client, got a {type(scheduler).__name__}.")
    try:
        import dask  # noqa: F401
    except ImportError as err:
        raise ImportError(f"scheduler={scheduler!r} runs the language pairs on dask, which is "
                          f"not installed: pip install 'bayesmeta[scale]' (dask[array] and "
                          f"distributed), or leave scheduler=None.") from err
    return scheduler


def _language_pairs(data: xr.Dataset | Mapping[str, xr.Dataset]
                    ) -> list[tuple[str, xr.Dataset]]:
    """(label, Dataset) per language pair; a campaign with an ``lp`` dim is sliced lazily to
    a length-1 ``lp`` dim, whose padding :func:`~bayesmeta.data.schema.split_language_pairs`
    strips inside the task (where the language pair is in memory)."""
    if isinstance(data, Mapping) and not isinstance(data, xr.Dataset):
        if not data:
            raise ValueError("data: no language pair given.")
        return [(str(k), data[k]) for k in sorted(data, key=str)]
    if not isinstance(data, xr.Dataset):
        raise TypeError(f"data must be an xarray.Dataset (with an 'lp' dim) or a dict of "
                        f"Datasets by language pair, got {type(data).__name__}.")
    if LP_DIM not in data.dims:
        return [(str(data.attrs.get("lp", "lp")), data)]
    if LP_DIM not in data.coords:
        raise ValueError("dim 'lp' has no coordinate labels.")
    labels = [str(v) for v in data[LP_DIM].values]
    if len(set(labels)) != len(labels):
        raise ValueError("dim 'lp' has duplicate labels.")
    return [(lp, data.isel({LP_DIM: [k]})) for k, lp in enumerate(labels)]


def _common_metrics(data: xr.Dataset | Mapping[str, xr.Dataset],
                    pairs: list[tuple[str, xr.Dataset]]) -> list[str]:
    """The metrics scored in every language pair (for an ``lp`` dim: with a value in every
    pair, a reduction computed block by block when the data are dask-backed)."""
    if isinstance(data, xr.Dataset) and LP_DIM in data.dims:
        score = data["score"]
        seen = score.notnull().any([d for d in score.dims if d not in (LP_DIM, "metric")])
        every = np.asarray(seen.all(LP_DIM).values, bool)
        labels = [str(m) for m, ok in zip(score["metric"].values, every, strict=True) if ok]
    else:
        common = set.intersection(*({str(m) for m in ds["metric"].values}
                                    for _, ds in pairs))
        labels = [str(m) for m in pairs[0][1]["metric"].values if str(m) in common]
    if not labels:
        raise ValueError("metrics: no metric is present in every language pair.")
    return labels


def estimand_units(measures: Sequence[str], spa: bool, unit: str | None) -> list[str]:
    """The resampling unit of every estimand (the measures, then SPA): ``unit`` when the
    user named one, else each estimand's default (:func:`~bayesmeta.wmt._common.default_unit`:
    systems for system-level and within-item statistics and SPA, systems and items for
    ``global_*`` and ``within_system_*``)."""
    names = list(measures) + (["spa"] if spa else [])
    return [unit if unit is not None else default_unit(q) for q in names]


def language_pair_draws(ds: xr.Dataset, trait: str | None, metrics: Sequence[str], run: Any,
                        reference: Any, measures: Sequence[str], n_resamples: int,
                        unit: str | Sequence[str] | None, n_permutations: int,
                        n_jobs: int | None, seed: int, lp: str = "lp",
                        dirichlet: str = "flat") -> tuple[np.ndarray, str, str]:
    """One language pair: ``(1 + 2R, M, Q)`` values (row 0 classical, rows 1..R bootstrap
    with seed + 1, rows R+1..2R Bayesian bootstrap with seed + 2; Q = the measures, then SPA
    with permutation seed ``seed`` when ``n_permutations`` > 0), the data's hash and the
    human score's label. ``unit``: what the bootstrap resamples and the Bayesian bootstrap
    weighs, one for all estimands, one per estimand, or None for each estimand's default
    (:func:`estimand_units`); estimands of the same unit share their weights, and the
    system weights of ``"systems"`` are those of ``"both"``. Runs in a worker: everything
    it needs is in its arguments."""
    try:
        if LP_DIM in ds.dims:
            ds = split_language_pairs(ds)[lp]
        x, z, _, hs = inputs(ds, trait, None, None, list(metrics), run, reference)
    except ValueError as err:
        raise ValueError(f"language pair {lp!r}: {err}") from None
    spa = _statistic("spa", 0.0, n_permutations, seed, z.shape[1]) if n_permutations else None
    M, Q = x.shape[0], len(measures) + (spa is not None)
    units = (estimand_units(measures, spa is not None, unit) if unit is None
             or isinstance(unit, str) else list(unit))
    if len(units) != Q:
        raise ValueError(f"unit: {len(units)} units for {Q} estimands.")
    # within-group acc_eq sorts each metric's pairs once and then takes any number of
    # resamples cheaply: it gets all rows at once, the rest go in chunks
    whole = [j for j, q in enumerate(measures)
             if q.endswith("_acc_eq") and not q.startswith("system_")]
    chunked = [j for j in range(len(measures)) if j not in whole]

    def stats(a, b, cols, with_spa=False):
        parts = []
        if cols:
            parts.append(measure_draws(x, z, system_weights=a, item_weights=b,
                                       measures=[measures[j] for j in cols], n_jobs=n_jobs))
        if with_spa:
            v = spa(x, z, a, b)
            parts.append((v if a is not None or b is not None else v[None])[..., None])
        return np.concatenate(parts, -1) if parts else np.empty((1, M, 0))

    spa_col = [len(measures)] if spa is not None else []
    out = np.empty((1 + 2 * n_resamples, M, Q))
    out[0][:, chunked + spa_col] = stats(None, None, chunked, bool(spa_col))[0]
    S, I = z.shape
    for u in dict.fromkeys(units):                      # each unit once, in order
        mine = [j for j in range(Q) if units[j] == u]
        cols = [j for j in chunked if j in mine]
        with_spa = bool(spa_col) and spa_col[0] in mine
        weights = [(np.ones((1, S)), np.ones((1, I)))]  # the classical row: unit weights
        for k, kind in enumerate(("bootstrap", "bayesian")):
            if not n_resamples:
                break
            a, b = resampling_weights(np.random.default_rng(seed + 1 + k), kind,
                                      n_resamples, z.shape, u, bayesian_unit=u,
                                      dirichlet=dirichlet)
            weights.append((np.ones((n_resamples, S)) if a is None else a,
                            np.ones((n_resamples, I)) if b is None else b))
            if cols or with_spa:
                for s in range(0, n_resamples, CHUNK):
                    sl = slice(s, min(n_resamples, s + CHUNK))
                    out[1 + k * n_resamples + s: 1 + k * n_resamples + sl.stop, :,
                        cols + (spa_col if with_spa else [])] = stats(
                            None if a is None else a[sl], None if b is None else b[sl],
                            cols, with_spa)
        held = [j for j in whole if j in mine]
        if held:  # all rows in one call: each metric's pairs are sorted once per lp
            out[:, :, held] = stats(np.concatenate([w[0] for w in weights]),
                                    np.concatenate([w[1] for w in weights]), held)
    return out, data_hash(ds[["score"] + [v for v in ("judgment", "rating") if v in ds]]), \
        hs.label


def run_language_pairs(tasks: list[tuple[str, xr.Dataset, int]], scheduler: Any,
                       **fixed: Any) -> list[tuple[np.ndarray, str, str]]:
    """:func:`language_pair_draws` of every ``(label, Dataset, seed)``: in a loop (``scheduler``
    None; a dask-backed language pair is loaded only for its own task), or as one dask task
    per language pair computed on ``scheduler``."""
    if scheduler is None:
        return [language_pair_draws(ds.compute() if _is_lazy(ds) else ds, seed=seed, lp=lp,
                                    **fixed) for lp, ds, seed in tasks]
    import dask

    delayed = [dask.delayed(language_pair_draws, pure=True)(ds, seed=seed, lp=lp, **fixed)
               for lp, ds, seed in tasks]
    return list(dask.compute(*delayed, scheduler=scheduler))


def _is_lazy(ds: xr.Dataset) -> bool:
    return any(v.chunks is not None for v in ds.variables.values())


def wmt_statistics(
    data: xr.Dataset | Mapping[str, xr.Dataset],
    trait: str | None = None,
    *,
    measures: str | Sequence[str] = WMT_MEASURES,
    metrics: Sequence[str] | None = None,
    run: Any = None,
    reference: Any = "first",
    resampling: ResamplingOptions | dict[str, Any] | None = None,
    ci_prob: float = CI_PROB,
    random_seed: int | None = None,
    scheduler: Any = None,
) -> Result:
    r"""Correlations, tie-calibrated accuracy and SPA of every metric in every language pair
    of a WMT campaign, each classical beside its bootstrap interval and Bayesian-bootstrap
    posterior, computed one language pair at a time (optionally on dask).

    For language pair :math:`\ell`, measure :math:`q` and metric :math:`m`: the classical
    value :math:`q_\ell(x_m, z)` (:func:`bayesmeta.correlation.measures.measure_draws`;
    SPA as :func:`bayesmeta.soft_pairwise_accuracy`), its percentile bootstrap interval and
    the Bayesian bootstrap :math:`q_\ell(x_m, z; a, b)` (Rubin 1981). By default each
    estimand resamples its own unit (:func:`~bayesmeta.wmt._common.default_unit`): the
    system-level and within-item estimands and SPA compare systems on the same items and
    resample the systems (system weights :math:`a \sim S\,\mathrm{Dir}(1_S)`, item
    weights one; the bootstrap resamples systems), ``global_*`` and ``within_system_*``
    resample systems and items (also :math:`b \sim I\,\mathrm{Dir}(1_I)`); see
    :mod:`bayesmeta.wmt._common` for why. The estimands of a language pair with the same
    unit share their resampling weights, and the system weights are the same for both
    units.

    Parameters
    ----------
    data : Dataset or dict of str to Dataset
        A campaign with an ``lp`` dim on ``score`` and the human score (e.g.
        ``bm.read_mtme(path, lp=[...])``, whose pairs are padded to the union of systems,
        items and metrics and split back per pair by
        :func:`~bayesmeta.data.schema.split_language_pairs` inside each task, or
        :func:`bayesmeta.wmt.simulate.simulate_language_pairs`), in memory or dask-backed
        (one chunk per language pair keeps memory to one language pair per worker); or one
        Dataset per language pair.
    trait : str
        The human score, the same name in every language pair.
    measures : list of str
        Correlation measures (grouping x coefficient, see
        :func:`bayesmeta.correlation_measures`), default :data:`WMT_MEASURES`.
    metrics : list of str, optional
        Default: the metrics with a score in every language pair (on dask-backed data this
        scan reads each language pair once more; name the metrics to skip it).
    run, reference :
        Which metric run and reference score each output (as in
        :func:`bayesmeta.correlations`).
    resampling : ResamplingOptions or dict, optional
        ``n_resamples`` (default 1000 bootstrap resamples and as many posterior draws per
        language pair), ``unit`` (what the bootstrap resamples and the Bayesian bootstrap
        weighs, for every estimand; by default each estimand's own, as above),
        ``dirichlet`` (the Bayesian bootstrap's: default ``"unbiased"``, Dirichlet((k - 2)
        / k) over k systems or items; flat over both; see :mod:`bayesmeta.wmt._common`),
        ``n_permutations`` (SPA's paired
        permutations per system pair, default 1000; 0 leaves SPA out), ``n_jobs`` (threads
        within one language pair's task; default the usable cores without a scheduler, 1
        with one, whose workers are the parallelism).
    ci_prob : float
    random_seed : int, optional
        The campaign's seed; each language pair's seed is derived from it and its label
        (module docstring) and recorded in ``details()["seed"]``.
    scheduler : None, str or dask.distributed.Client
        None: a plain loop over the language pairs (no dask needed). ``"synchronous"``,
        ``"threads"``, ``"processes"``: dask's local schedulers, one task per language pair.
        A ``dask.distributed.Client``: the tasks run on its cluster (a ``LocalCluster`` or
        a remote one). The numbers are the same on every scheduler.

    Returns
    -------
    Result
        ``summary()`` index ``(estimand, lp, trait, metric)`` (estimand: the measure or
        ``"spa"``); ``details()``: ``rank`` (by the classical value within language pair
        and estimand, 1 = best) and ``seed``; ``extra["bootstrap"]``,
        ``extra["posterior"]``: the draws ``(lp, resample, metric, estimand)``.

    Notes
    -----
    Memory: one language pair's scores, one chunk of weights and the statistics' draws per
    worker. Time grows with language pairs x items x resamples (SPA: x permutations x
    metrics x systems). R equivalent: none packaged; per language pair ``boot::boot`` of
    ``cor``.

    References
    ----------
    Freitag et al. (2023, 2024), *Results of the WMT23/WMT24 Metrics Shared Task*; Deutsch,
    Foster & Freitag (2023), *Ties Matter*; Thompson et al. (2024), SPA; Rubin (1981), *The
    Bayesian Bootstrap*.

    Examples
    --------
    >>> import bayesmeta as bm
    >>> from bayesmeta.wmt.simulate import simulate_language_pairs
    >>> ds = simulate_language_pairs(2, 5, 12, 3, random_seed=0)
    >>> res = bm.wmt_statistics(ds, "quality", random_seed=1,
    ...                         resampling={"n_resamples": 20, "n_permutations": 50})
    >>> res.summary().shape[0]      # 5 estimands x 2 language pairs x 3 metrics
    30
    """
    opts = resampling_options(resampling, n_resamples=1000, dirichlet=WMT_DIRICHLET)
    ci_prob = check_ci_prob(ci_prob)
    names = parse_measures(measures)
    scheduler = check_scheduler(scheduler)
    seed = resolve_seed(random_seed)
    pairs = _language_pairs(data)
    labels = list(metrics) if metrics is not None else _common_metrics(data, pairs)
    seeds = [language_pair_seed(seed, lp) for lp, _ in pairs]
    units = estimand_units(names, bool(opts.n_permutations), explicit_unit(resampling))
    got = run_language_pairs(
        [(lp, ds, s) for (lp, ds), s in zip(pairs, seeds, strict=True)], scheduler, trait=trait,
        metrics=labels, run=run, reference=reference, measures=names,
        n_resamples=opts.n_resamples, unit=units, n_permutations=opts.n_permutations,
        n_jobs=opts.n_jobs if opts.n_jobs is not None or scheduler is None else 1,
        dirichlet=opts.dirichlet)
    return _result(got, pairs, labels, names + (["spa"] if opts.n_permutations else []),
                   units, seeds, opts, ci_prob, seed, scheduler)


def units_text(estimands: Sequence[str], units: Sequence[str]) -> str:
    """What is resampled, in words: one unit for all estimands, or each unit with its
    estimands (``"systems (system_pearson, spa); systems and items (global_pearson)"``)."""
    groups: dict[str, list[str]] = {}
    for q, u in zip(estimands, units, strict=True):
        groups.setdefault(u, []).append(q)
    if len(groups) == 1:
        return UNIT_WORDS[next(iter(groups))]
    return "; ".join(f"{UNIT_WORDS[u]} ({', '.join(qs)})" for u, qs in groups.items())


def _result(got, pairs, labels, estimands, units, seeds, opts, ci_prob, seed, scheduler
            ) -> Result:
    lps = [lp for lp, _ in pairs]
    R = opts.n_resamples
    values = np.stack([g[0] for g in got])                      # (L, 1 + 2R, M, Q)
    coords = {"lp": lps, "metric": labels, "estimand": estimands}
    point = xr.DataArray(values[:, 0], dims=("lp", "metric", "estimand"), coords=coords)
    human = got[0][2].split(" (")[0]
    order = ("estimand", "lp", "metric")
    idx = pd.MultiIndex.from_product([estimands, lps, [human], labels],
                                     names=["estimand", "lp", "trait", "metric"])
    flat = point.transpose(*order)
    table = pd.DataFrame({"classical": flat.values.ravel()}, index=idx)
    M = len(labels)
    by_value = np.argsort(-flat.values, axis=-1, kind="stable")
    rank = np.empty_like(by_value)
    np.put_along_axis(rank, by_value, np.broadcast_to(np.arange(1, M + 1), rank.shape), -1)
    details = pd.DataFrame({"rank": rank.ravel(),
                            "seed": np.repeat(np.tile(seeds, len(estimands)), M)}, index=idx)
    extra: dict[str, Any] = {}
    kinds: dict[str, Any] = {}
    sched = "loop (no dask)" if scheduler is None else (
        f"dask {scheduler!r} scheduler" if isinstance(scheduler, str)
        else f"dask.distributed {type(scheduler).__name__}")
    info = {"language pairs": f"{len(lps)}: " + ", ".join(lps[:12])
            + (" ..." if len(lps) > 12 else ""),
            "data": f"{len(lps)} language pairs x {M} metrics",
            "human": got[0][2], "run on": sched,
            "seeds": f"language pair seeds derived from {seed} and the label "
                     f"(details()['seed']); + 1 bootstrap, + 2 Bayesian bootstrap"}
    if "spa" in estimands:
        info["SPA permutations"] = f"{opts.n_permutations} per system pair (seed s_lp)"
    if R:
        dims = ("lp", "resample", "metric", "estimand")
        boot = xr.DataArray(values[:, 1:1 + R], dims=dims, coords=coords)
        post = xr.DataArray(values[:, 1 + R:], dims=dims, coords=coords)
        iv = percentile_interval(boot, ci_prob).transpose("ci_bound", *order)
        s = summarize(post, ci_prob=ci_prob, sample_dims=("resample",))
        table["classical_low"] = iv.sel(ci_bound="lower").values.ravel()
        table["classical_high"] = iv.sel(ci_bound="upper").values.ravel()
        table["mean"] = s["mean"].transpose(*order).values.ravel()
        table["sd"] = s["sd"].transpose(*order).values.ravel()
        table["hdi_low"] = s["interval"].sel(ci_bound="lower").transpose(*order).values.ravel()
        table["hdi_high"] = s["interval"].sel(ci_bound="upper").transpose(
            *order).values.ravel()
        extra = {"bootstrap": boot, "posterior": post}
        words = units_text(estimands, units)
        info["classical interval"] = (f"{ci_prob:.0%} percentile bootstrap over {words}, "
                                      f"{R} resamples per language pair")
        kinds_of = {dirichlet_words(opts.dirichlet, u) for u in units}
        dw = (kinds_of.pop() if len(kinds_of) == 1 else
              "Dirichlet((k - 2) / k) over k systems or items alone, flat over both; over")
        info["posterior"] = f"Bayesian bootstrap ({dw} {words}), {R} draws per language pair"
        kinds = {"classical_ci_kind": f"percentile bootstrap over {words}",
                 "posterior": f"Bayesian bootstrap ({dw} {words})"}
    digest = hashlib.sha256("".join(g[1] for g in got).encode()).hexdigest()[:16]
    return Result(table, title="WMT campaign statistics per language pair", info=info,
                  details=details, extra=extra, ci_prob=ci_prob, random_seed=seed,
                  data_hash=digest,
                  notes=["details(): rank (classical, within language pair and estimand, "
                         "1 = best) and seed (the language pair's); extra['bootstrap'], "
                         "extra['posterior']: draws (lp, resample, metric, estimand).",
                         *systems_posterior_note("systems" if "systems" in units else "both",
                                                 R, opts.dirichlet)],
                  **kinds)
