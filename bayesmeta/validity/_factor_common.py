"""Shared pieces of the metric-validity analyses: metric arrays, bootstrap weights,
correlations of metric and factor-score system means."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayesmeta.correlation._kernels import direct_small
from bayesmeta.data import select

COEFFICIENTS = ("kendall", "pearson", "spearman")
#: Groupings of the correlation (the contract's names; paper 001's "input" and "item").
LEVELS = ("system", "global", "within_item", "within_system")
#: Correlations per chunk of resamples or draws (bounds the memory of Kendall's sign
#: matrices: chunk x metrics x traits x systems^2 floats).
_CHUNK = 50


# ----------------------------------------------------------------------------- helpers
_UNIT_LABEL = {"both": "systems and items", "systems": "systems", "items": "items"}


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


def _is_bayesian(fit: Any) -> bool:
    return getattr(fit, "idata", None) is not None and hasattr(fit, "loo")


def _coefficients(method: str | Sequence[str]) -> list[str]:
    names = [method] if isinstance(method, str) else list(method)
    bad = [m for m in names if m not in COEFFICIENTS]
    if bad or not names:
        raise ValueError(f"coefficient must be one or more of {', '.join(map(repr, COEFFICIENTS))}"
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


def _weighted_cov(z: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Weighted covariance matrices: z (..., N, K) rows, w (..., N) row weights."""
    wsum = w.sum(-1)[..., None]
    mean = np.einsum("...n,...nk->...k", w, z) / wsum
    d = z - mean[..., None, :]
    return (np.swapaxes(d * w[..., None], -1, -2) @ d) / wsum[..., None]


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


def _stack_outputs(data: xr.Dataset, scores: xr.DataArray, metrics: Sequence[str] | None,
                   run: Any, reference: Any
                   ) -> tuple[list[str], list[str], np.ndarray, np.ndarray, list[str]]:
    """Factor scores and metric scores side by side per output: the trait and metric labels,
    the values ``z`` (system, item, trait + metric), the outputs lacking any of them
    (left out listwise) and the note that says how many were."""
    traits = [str(t) for t in scores["trait"].values]
    systems = [str(s) for s in scores["system"].values]
    items = [str(i) for i in scores["item"].values]
    x = _metric_array(data, metrics, run, reference, systems, items)
    mnames = [str(m) for m in x["metric"].values]
    z = np.concatenate([scores.transpose("system", "item", "trait").values,
                        x.transpose("system", "item", "metric").values], axis=-1)
    incomplete = np.isnan(z).any(-1)
    notes = []
    if incomplete.any():
        notes.append(f"{int(incomplete.sum())} output(s) with a missing metric score or no "
                     f"factor score were left out (listwise).")
    return traits, mnames, z, incomplete, notes


def _output_covariances(z: np.ndarray, incomplete: np.ndarray, w_sys: np.ndarray,
                        w_items: np.ndarray) -> np.ndarray:
    """Covariance of the complete output rows of ``z`` under each resample's weights
    (system weight x item weight), in chunks of resamples: (resample, K, K)."""
    S, I = incomplete.shape
    keep = (~incomplete).astype(float)
    rows = np.where(incomplete[..., None], 0.0, z).reshape(S * I, -1)
    w = (w_sys[:, :, None] * w_items[:, None, :] * keep[None]).reshape(len(w_items), S * I)
    return np.concatenate([_weighted_cov(rows[None], w[sl]) for sl in _slices(len(w_items))])
