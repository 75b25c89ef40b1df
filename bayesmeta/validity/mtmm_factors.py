"""The MTMM table on factor scores (:func:`factor_mtmm`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayesmeta.data import select
from bayesmeta.options import ResamplingOptions, resolve_seed
from bayesmeta.results import Result, data_hash
from bayesmeta.summaries import CI_PROB, check_ci_prob, equal_tailed, summarize
from bayesmeta.validity._cells import CELLS
from bayesmeta.validity._factor_common import (
    _CHUNK,
    _UNIT_LABEL,
    _bootstrap_weights,
    _coefficients,
    _correlate,
    _is_bayesian,
    _metric_array,
    _slices,
    _weighted_means,
)


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
    coefficient: str = "kendall",
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
    coefficient : {"kendall", "pearson", "spearman"}
    expert : str
        The method label of the factor scores.
    score_method, run, reference, ci_prob, resampling, random_seed :
        As :func:`factor_validity`.

    Returns
    -------
    Result
        ``summary()`` indexed ``(estimand, trait, method, trait2, method2)``, estimand
        ``system_<coefficient>``, one row per pair of variables; ``details()``: ``cell``
        (Campbell & Fiske's block, as in :func:`bayesmeta.mtmm`: ``validity diagonal``, same
        trait, different methods; ``heterotrait-monomethod``; ``heterotrait-heteromethod``),
        ``evidence`` (MetricEval's label: convergent, divergent, heterotrait-heteromethod)
        and, for convergent cells, ``p_gt_heteromethod`` (the
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
    >>> res = bm.mtmm(ds, fit=bm.cfa(m, ds), methods=meth,
    ...               resampling={"n_resamples": 100}, random_seed=0)
    >>> len(res.summary())  # 6 variables: 15 pairs
    15
    """
    ci_prob = check_ci_prob(ci_prob)
    coef = _coefficients(coefficient)
    if len(coef) != 1:
        raise ValueError("factor_mtmm takes one correlation coefficient.")
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
    # one cell vocabulary with bm.mtmm: Campbell & Fiske's block in ``cell``, MetricEval's
    # label in ``evidence``
    evidence = {"convergent": "convergent", "heterotrait-monomethod": "divergent",
                "heterotrait-heteromethod": "heterotrait-heteromethod"}
    details = pd.DataFrame({"cell": [CELLS[evidence[k]] for k in kinds],
                            "evidence": [evidence[k] for k in kinds]}, index=index)
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
