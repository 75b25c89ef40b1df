"""Setup of the Bayesian ordinal CFA: the model syntax checked, the ratings in long form,
the cached PyMC model, and the checks that can be made before sampling.

Part of :mod:`bayesmeta.validity.ordinal_cfa` (the public entry point). The ratings of a
bayesmeta Dataset come through :func:`bayesmeta.data.select.ratings_wide` (which refuses
continuous judgments with the reason); a wide DataFrame is used as it is.
"""

from __future__ import annotations

import hashlib
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayesmeta.data import select
from bayesmeta.results import data_hash
from bayesmeta.validity._cfa_build import (
    Design,
    build_augmented_model,
    build_model,
    cut_labels,
    design_from_wide,
)
from bayesmeta.validity.syntax import ModelSpec, parse_model, resolve_column

__all__ = ["IdentificationWarning", "identification_warnings_pre", "model_for", "setup"]


class IdentificationWarning(UserWarning):
    """The data cannot identify a parameter (empty category, loading at the boundary); its
    posterior there reflects the prior."""


# ============================================================================ data
@dataclass(frozen=True)
class _Data:
    values: np.ndarray  # (N, J) ratings, NaN missing, model indicator order
    indicators: tuple[str, ...]  # data column names, model order
    system: np.ndarray | None
    item: np.ndarray | None
    rows: np.ndarray  # row labels
    scale: tuple[int, int]
    frame: pd.DataFrame  # wide ratings with the syntax's indicator names as columns


def _wide(data: Any) -> tuple[pd.DataFrame, tuple[int, int] | None, Any, Any]:
    """Wide ratings (rows = outputs, columns = indicators), the declared scale (or None),
    and the system and item labels of the rows (or None) from a bayesmeta Dataset or a
    DataFrame."""
    if isinstance(data, xr.Dataset):
        data = select.ratings_wide(data, analysis="cfa")
    elif not isinstance(data, pd.DataFrame):
        raise TypeError(f"data must be a bayesmeta xarray.Dataset or a pandas DataFrame, got "
                        f"{type(data).__name__}.")
    frame = data.copy()
    lo, hi = data.attrs.get("scale_min"), data.attrs.get("scale_max")
    scale = None if lo is None or hi is None else (int(lo), int(hi))
    sys_ = item = None
    if isinstance(frame.index, pd.MultiIndex) and {"system", "item"} <= set(frame.index.names):
        sys_ = np.asarray(frame.index.get_level_values("system"))
        item = np.asarray(frame.index.get_level_values("item"))
    return frame.reset_index(drop=True), scale, sys_, item


def _prepare(spec: ModelSpec, data: Any) -> _Data:
    frame, scale, sys_, item = _wide(data)
    columns = [str(c) for c in frame.columns]
    chosen = []
    for name in spec.observed:
        col = resolve_column(name, columns)
        if col is None:
            raise ValueError(f"unknown variable {name!r} in the model: it is not a column of "
                             f"the data (columns: {', '.join(columns[:12])}).")
        chosen.append(col)
    vals = frame[chosen].to_numpy(dtype=float)
    obs = vals[np.isfinite(vals)]
    if obs.size == 0:
        raise ValueError("data has no observed ratings for the model's indicators.")
    if not np.all(obs == np.round(obs)):
        raise ValueError("ratings must be integers (ordinal categories); found non-integer "
                         "values.")
    if scale is None:
        scale = (int(obs.min()), int(obs.max()))
    lo, hi = scale
    if obs.min() < lo or obs.max() > hi:
        raise ValueError(f"ratings outside the declared scale {lo}..{hi}.")
    if hi - lo < 2:
        raise ValueError(f"the rating scale {lo}..{hi} has fewer than 3 categories; the "
                         f"ordinal CFA needs at least 3.")
    allnan = [c for c, v in zip(chosen, vals.T, strict=True) if not np.isfinite(v).any()]
    if allnan:
        raise ValueError(f"indicator(s) {allnan} have no observed ratings.")
    keep = np.isfinite(vals).any(axis=1)
    n_drop = int((~keep).sum())
    if n_drop:
        warnings.warn(f"{n_drop} output(s) have no rating on any indicator and carry no "
                      f"information; they are left out.", UserWarning, stacklevel=3)
    vals = vals[keep]
    rows = np.arange(keep.size)[keep]
    sys_ = None if sys_ is None else sys_[keep]
    item = None if item is None else item[keep]
    named = pd.DataFrame(vals, columns=list(spec.observed))
    return _Data(vals, tuple(chosen), sys_, item, rows, (lo, hi), named)


def _blocks(spec: ModelSpec) -> tuple[tuple[int, ...], ...]:
    """Groups of factors with free correlations; between groups the correlations must be
    fixed at 0 (the only fixed correlations this model supports)."""
    fs = list(spec.factors)
    parent = list(range(len(fs)))

    def find(a: int) -> int:
        while parent[a] != a:
            a = parent[a]
        return a

    cors = spec.factor_correlations()
    for (a, b), fixed in cors.items():
        if fixed is None:
            parent[find(fs.index(a))] = find(fs.index(b))
    groups: dict[int, list[int]] = {}
    for k in range(len(fs)):
        groups.setdefault(find(k), []).append(k)
    blocks = tuple(tuple(g) for g in groups.values())
    for (a, b), fixed in cors.items():
        if fixed is None:
            continue
        same = find(fs.index(a)) == find(fs.index(b))
        if fixed != 0.0 or same:
            raise NotImplementedError(
                f"the Bayesian ordinal CFA supports fixing factor correlations only at 0 "
                f"between groups of factors whose other correlations are free; "
                f"'{a} ~~ {fixed:g}*{b}' is not of that kind. Use method='wlsmv'.")
    return blocks


def _check_spec(spec: ModelSpec) -> None:
    fixed = [ld for ld in spec.loadings if ld.fixed is not None]
    if fixed:
        ld = fixed[0]
        raise NotImplementedError(
            f"fixed loadings ('{ld.factor} =~ {ld.fixed:g}*{ld.indicator}', line {ld.line}) "
            f"are not supported by the Bayesian ordinal CFA (factor variances are fixed at "
            f"1 and loadings are positive); remove the modifier or use method='wlsmv'.")
    if spec.residual_covariances:
        c = spec.residual_covariances[0]
        raise NotImplementedError(
            f"residual covariances ('{c.lhs} ~~ {c.rhs}', line {c.line}) are not supported "
            f"by the Bayesian ordinal CFA yet; use method='wlsmv'.")
    counts = pd.Series([ld.indicator for ld in spec.loadings]).value_counts()
    if (counts > 1).any():
        raise NotImplementedError(
            f"indicator {counts.index[0]!r} loads on more than one factor; cross-loadings "
            f"are not supported by the Bayesian ordinal CFA.")


# ============================================================================ setup
def setup(model: str | ModelSpec, data: Any) -> tuple[ModelSpec, _Data, Design]:
    """Parse and check the model, reshape the data to long form: ``(spec, data, design)``
    (used by :func:`~bayesmeta.validity.ordinal_cfa.ordinal_cfa` and by the benchmarks to
    compile ahead of sampling)."""
    if isinstance(model, str):
        spec = parse_model(model)
    elif isinstance(model, ModelSpec):
        spec = model
    else:
        raise TypeError(f"model must be lavaan syntax (str) or a ModelSpec, got "
                        f"{type(model).__name__}.")
    _check_spec(spec)
    blocks = _blocks(spec)
    data_ = _prepare(spec, data)
    fs = list(spec.factors)
    factor_of = np.array([fs.index(next(ld.factor for ld in spec.loadings
                                        if ld.indicator == ind)) for ind in spec.observed])
    design = design_from_wide(data_.values, factors=tuple(fs), indicators=spec.observed,
                              factor_of=factor_of, scale=data_.scale, blocks=blocks)
    return spec, data_, design


def model_for(design: Design, *, parameterization: str = "augmented",
              loading_prior: tuple[float, float] = (1.0, 1.0), lkj_eta: float = 1.0) -> Any:
    """The PyMC model of ``design``, cached (with its nutpie compilation) by the data and
    settings, so that a refit of the same data costs sampling time only."""
    from bayesmeta.sampling import cached_model

    key = ("ordinal_cfa", design.factors, design.indicators,
           tuple(design.factor_of.tolist()), design.n_categories, design.n_rows,
           design.blocks, _design_hash(design), parameterization, tuple(loading_prior),
           float(lkj_eta))
    if parameterization == "augmented":
        return cached_model(key, lambda: build_augmented_model(
            design, loading_prior=loading_prior, lkj_eta=lkj_eta))
    return cached_model(key, lambda: build_model(
        design, factor_param=parameterization, loading_prior=loading_prior, lkj_eta=lkj_eta))


def _design_hash(design: Design) -> str:
    h = hashlib.sha256()
    for arr in (design.row, design.ind, design.cat):
        h.update(np.ascontiguousarray(arr, dtype=np.int64).tobytes())
    return h.hexdigest()[:16]


def identification_warnings_pre(design: Design, spec: ModelSpec) -> list[str]:
    """Warnings before sampling: an indicator that never uses a category leaves the
    adjacent thresholds bounded only by the ordering (its posterior there is the prior's)."""
    counts = design.counts()
    cuts = cut_labels(design.n_categories)
    out = []
    for j in range(design.n_indicators):
        empty = [k + 1 for k in range(design.n_categories) if counts[j, k] == 0]
        if empty:
            affected = sorted({c for k in empty for c in (k - 2, k - 1)
                               if 0 <= c < design.n_categories - 1})
            out.append(
                f"indicator {spec.observed[j]!r} never uses categor"
                f"{'y' if len(empty) == 1 else 'ies'} {', '.join(map(str, empty))}: the data "
                f"cannot identify threshold(s) {', '.join(cuts[c] for c in affected)} beyond "
                f"the ordering; their posterior reflects the prior there (uniform on the "
                f"category probabilities).")
    return out


def input_hash(data: Any, data_: _Data) -> str:
    """The data hash of the provenance: :func:`bayesmeta.results.data_hash` of a Dataset,
    or of the model's rating matrix and indicator names for a DataFrame."""
    if isinstance(data, xr.Dataset):
        return data_hash(data)
    ds = xr.Dataset({"rating": (("case", "indicator"), data_.values)},
                    coords={"indicator": [str(c) for c in data_.frame.columns]})
    return data_hash(ds)
