"""Classical validity: the multitrait-multimethod table and concurrent validity.

MetricEval (Xiao et al. 2023) Sec. 3.2 and 4.1.2: correlations of system mean scores
across methods (raters, metric families) and traits, with consistency on the diagonal, and
the correlation of each metric with a criterion (e.g. expert ratings).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import xarray as xr
from scipy import stats

from bayesmeta.classical._select import quantities, rating_label
from bayesmeta.classical.correlation import GROUPINGS, measure_draws
from bayesmeta.classical.reliability import _describe, consistency
from bayesmeta.data.schema import validate
from bayesmeta.results import Result

METHODS = ("pearson", "spearman", "kendall")


def correlation(x: np.ndarray, y: np.ndarray, method: str = "kendall") -> float:
    """Pearson, Spearman or Kendall tau-b of two vectors, on the pairs where both are
    observed; NaN when fewer than 3 pairs or a constant vector."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, got {method!r}.")
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    ok = ~(np.isnan(x) | np.isnan(y))
    x, y = x[ok], y[ok]
    if x.size < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    if method == "pearson":
        return float(stats.pearsonr(x, y)[0])
    if method == "spearman":
        return float(stats.spearmanr(x, y)[0])
    return float(stats.kendalltau(x, y, variant="b")[0])


class MTMMResult(Result):
    """A multitrait-multimethod table (see :func:`mtmm`)."""

    def _state(self) -> dict:
        return {"order": self._order}

    def _restore(self, state: dict) -> None:
        self._order = [tuple(x) for x in state.get("order", [])]

    def matrix(self) -> pd.DataFrame:
        """The square table: rows and columns (trait, method); upper triangle correlations,
        diagonal consistency."""
        t = self._table
        idx = pd.MultiIndex.from_tuples(self._order, names=["trait", "method"])
        out = pd.DataFrame(np.nan, index=idx, columns=idx)
        for row in t.itertuples():
            out.loc[(row.trait1, row.method1), (row.trait2, row.method2)] = row.classical
        return out

    def _body(self) -> str:
        mat = self.matrix()
        cells = self._table.set_index(["trait1", "method1", "trait2", "method2"])["cell"]
        mark = {"reliability": "[{}]", "convergent": "*{}*", "divergent": "({})",
                "heterotrait-heteromethod": " {} "}
        shown = pd.DataFrame("", index=mat.index, columns=mat.columns)
        for i, a in enumerate(mat.index):
            for j, b in enumerate(mat.columns):
                if j < i:
                    shown.iloc[i, j] = "-"
                    continue
                v = mat.iloc[i, j]
                if pd.isna(v):
                    shown.iloc[i, j] = " . "
                    continue
                shown.iloc[i, j] = mark[cells.loc[(*a, *b)]].format(f"{v:.2f}")
        with pd.option_context("display.width", 250, "display.max_columns", 100):
            text = shown.to_string()
        return (text + "\n\n  [.] consistency (alpha)   *.* convergent: same trait, different "
                "method\n  (.) divergent: different traits, same method   plain: "
                "heterotrait-heteromethod")


def mtmm(
    data: xr.Dataset,
    design: Mapping[str, tuple[str, str]] | pd.DataFrame | None = None,
    method: str = "kendall",
    *,
    run: str | int | None = None,
    normalize: bool = False,
) -> MTMMResult:
    """Multitrait-multimethod table of system-level correlations (Campbell & Fiske, 1959).

    Each variable (a rater x trait rating or a metric) is averaged over items per system;
    off-diagonal cells are correlations of these system means (Kendall tau-b by default,
    as MetricEval Table 1), diagonal cells are each variable's consistency (coefficient
    alpha). Every cell is labelled ``reliability`` (diagonal), ``convergent`` (same trait,
    different method), ``divergent`` (different traits, same method; called
    heterotrait-monomethod by Campbell & Fiske) or ``heterotrait-heteromethod``.

    Parameters
    ----------
    data : xarray.Dataset
    design : dict or DataFrame, optional
        The variables and their (method, trait): ``{variable: (method, trait)}`` or a frame
        with columns ``variable``, ``method``, ``trait``. Variables are metric names or
        rating labels ``"<rater>.<trait>"``. Default: every rater x trait, with the rater as
        the method.
    method : {"kendall", "spearman", "pearson"}
    run : metric run to use (default the first).
    normalize : bool
        Rank-normalise every variable over all outputs before averaging per system
        (MetricEval App. A.2). MetricEval's Table 1 was computed this way: with
        ``normalize=True`` its off-diagonal cells are reproduced to two decimals.

    Returns
    -------
    MTMMResult
        ``summary()``: one row per pair of variables (index ``"a ~ b"``) with
        ``classical``, ``cell``, ``trait1``, ``method1``, ``trait2``, ``method2``;
        ``matrix()`` gives the square table; ``print()`` the formatted table.

    Examples
    --------
    >>> import bayesmeta as bm
    >>> tab = bm.mtmm(bm.datasets.simulated()).summary()
    >>> sorted(tab["cell"].unique())
    ['convergent', 'divergent', 'heterotrait-heteromethod', 'reliability']
    """
    validate(data, warn_missing=False)
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, got {method!r}.")
    if design is None:
        if "rating" not in data:
            raise ValueError("data has no ratings; give design= to build an MTMM table of "
                             "metrics.")
        spec = [(rating_label(r, t), str(r), str(t)) for r in data["rater"].values
                for t in data["trait"].values]
    elif isinstance(design, pd.DataFrame):
        for col in ("variable", "method", "trait"):
            if col not in design.columns:
                raise ValueError(f"design is missing column {col!r}.")
        spec = [(str(v), str(m), str(t)) for v, m, t in
                design[["variable", "method", "trait"]].itertuples(index=False)]
    else:
        spec = [(str(v), str(mt[0]), str(mt[1])) for v, mt in design.items()]
    # group by trait, then method, each in order of first appearance (MetricEval's layout)
    trait_order = list(dict.fromkeys(t for _, _, t in spec))
    method_order = list(dict.fromkeys(m for _, m, _ in spec))
    spec.sort(key=lambda x: (trait_order.index(x[2]), method_order.index(x[1])))
    metric_names = set(map(str, data["metric"].values)) if "score" in data else set()
    metrics = [v for v, _, _ in spec if v in metric_names]
    ratings = [v for v, _, _ in spec if v not in metric_names]
    q = quantities(data, metrics=metrics, ratings=ratings if ratings else False, run=run,
                   normalize=normalize)
    q = q.sel(quantity=[v for v, _, _ in spec])
    alpha = consistency(data, metrics=metrics, ratings=ratings if ratings else False,
                        run=run, normalize=normalize).summary()["classical"]
    with np.errstate(invalid="ignore"):
        means = np.nanmean(q.values, axis=2)
    rows = []
    for i, (vi, mi, ti) in enumerate(spec):
        for j in range(i, len(spec)):
            vj, mj, tj = spec[j]
            if i == j:
                val, cell = float(alpha.loc[vi]), "reliability"
            else:
                val = correlation(means[i], means[j], method)
                if ti == tj:
                    cell = "convergent"
                elif mi == mj:
                    cell = "divergent"
                else:
                    cell = "heterotrait-heteromethod"
            rows.append((f"{vi} ~ {vj}", val, cell, ti, mi, tj, mj, vi, vj))
    table = pd.DataFrame(rows, columns=["pair", "classical", "cell", "trait1", "method1",
                                        "trait2", "method2", "variable1", "variable2"])
    table = table.set_index("pair")
    res = MTMMResult(table, title="Multitrait-multimethod table (system level)",
                     info={"data": _describe(data), "correlation": method,
                           "diagonal": "consistency (coefficient alpha)",
                           "scores": "rank-normalised" if normalize else "raw"})
    res._order = [(t, m) for _, m, t in spec]
    return res


class ConcurrentValidityResult(Result):
    """Concurrent validity of metrics against a criterion (see :func:`concurrent_validity`)."""


def _criterion(data: xr.Dataset, criterion, run) -> tuple[np.ndarray, str]:
    if isinstance(criterion, xr.DataArray):
        if set(criterion.dims) != {"system", "item"}:
            raise ValueError(f"criterion DataArray must have dims (system, item), got "
                             f"{criterion.dims}.")
        arr = criterion.transpose("system", "item").reindex(
            system=data["system"], item=data["item"]).values
        return arr.astype(float), criterion.name or "criterion"
    name = str(criterion)
    if "rating" in data and name in map(str, data["trait"].values):
        arr = data["rating"].sel(trait=name).mean("rater", skipna=True)
        return arr.transpose("system", "item").values, f"{name} (mean of raters)"
    labels = [rating_label(r, t) for r in data["rater"].values for t in data["trait"].values] \
        if "rating" in data else []
    if name in labels:
        return quantities(data, metrics=[], ratings=[name]).values[0], name
    if "score" in data and name in map(str, data["metric"].values):
        return quantities(data, metrics=[name], ratings=False, run=run).values[0], name
    raise ValueError(f"unknown criterion {name!r}: give a trait (rater mean), a rating label "
                     f"'<rater>.<trait>', a metric name, or a (system, item) DataArray.")


def grouped_correlation(x: np.ndarray, y: np.ndarray, method: str, level: str) -> float:
    """Correlation of two (system x item) matrices under one grouping of paper 001:
    ``system`` (system means), ``global`` (all cells), ``item`` (per system across items,
    averaged), ``input`` (per item across systems, averaged). A thin wrapper of
    :func:`bayesmeta.classical.correlation.correlation_measures`."""
    if level not in GROUPINGS:
        raise ValueError(f"level must be 'system', 'item', 'input' or 'global', got {level!r}.")
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, got {method!r}.")
    x = np.asarray(x, dtype=float)
    return float(measure_draws(x[None], np.asarray(y, dtype=float),
                               measures=[f"{level}_{method}"])[0, 0, 0])


def concurrent_validity(
    data: xr.Dataset,
    criterion: str | xr.DataArray | Sequence[str],
    method: str = "kendall",
    level: str = "system",
    *,
    metrics: Sequence[str] | None = None,
    run: str | int | None = None,
) -> ConcurrentValidityResult:
    """Concurrent validity: correlation of each metric with a criterion (MetricEval 3.2.1).

    Parameters
    ----------
    criterion : str, DataArray or list of str
        A trait (the mean of its raters per output), a rating label ``"<rater>.<trait>"``,
        a metric, a ``(system, item)`` DataArray (e.g. factor scores), or a list of these.
    method : {"kendall", "spearman", "pearson"}
    level : {"system", "item", "input", "global"}
        ``system``: correlation of system means (MetricEval Fig. 4); ``item``: per system
        across items, averaged; ``input``: per item across systems, averaged; ``global``:
        all outputs pooled (paper 001's groupings).

    Returns
    -------
    ConcurrentValidityResult
        ``summary()`` indexed by metric (or by (criterion, metric) for a list) with
        ``classical``.

    Examples
    --------
    >>> import bayesmeta as bm
    >>> cv = bm.concurrent_validity(bm.datasets.simulated(), "COH").summary()
    >>> bool(cv["classical"].between(-1, 1).all())
    True
    """
    validate(data, warn_missing=False)
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, got {method!r}.")
    if "score" not in data:
        raise ValueError("concurrent validity needs metric scores: data has no 'score'.")
    if level not in GROUPINGS:
        raise ValueError(f"level must be 'system', 'item', 'input' or 'global', got {level!r}.")
    many = isinstance(criterion, (list, tuple))
    crits = list(criterion) if many else [criterion]
    q = quantities(data, metrics=metrics, ratings=False, run=run)
    frames = []
    for c in crits:
        y, cname = _criterion(data, c, run)
        vals = measure_draws(q.values, y, measures=[f"{level}_{method}"])[0, :, 0]
        frame = pd.DataFrame({"criterion": cname, "classical": vals},
                             index=pd.Index(q["quantity"].values.astype(str), name="metric"))
        frames.append(frame)
    table = pd.concat(frames)
    if many:
        table = table.set_index("criterion", append=True).reorder_levels(["criterion", "metric"])
    return ConcurrentValidityResult(
        table, title="Concurrent validity",
        info={"data": _describe(data), "correlation": method, "level": level},
    )
