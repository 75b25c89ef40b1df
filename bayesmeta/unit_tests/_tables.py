"""Rows of the metric unit-test table: per-cell pass rates (classical and Beta-Binomial),
partially pooled pass rates, paired metric comparisons and number-of-references
contrasts. Used by :func:`bayesmeta.unit_tests.classical.metric_unit_tests`."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayesmeta.summaries import summarize
from bayesmeta.unit_tests import pass_rates as pr

INDEX = ["corruption", "category", "metric", "metric2", "n_refs"]


def _summ(draws: np.ndarray, ci_prob: float) -> pd.DataFrame:
    """mean, sd, hdi_low, hdi_high of draws ``(n_draws, cells)`` through the one
    summariser."""
    s = summarize(xr.DataArray(draws, dims=("draw", "cell")), ci_prob=ci_prob,
                  sample_dims=("draw",))
    iv = s["interval"].values
    return pd.DataFrame({"mean": s["mean"].values, "sd": s["sd"].values,
                         "hdi_low": iv[:, 0], "hdi_high": iv[:, 1]})


def _index(rows: list[tuple[Any, ...]], estimand: str) -> pd.MultiIndex:
    return pd.MultiIndex.from_tuples([(estimand, *map(str, r)) for r in rows],
                                     names=["estimand", *INDEX])


def cell_rows(cells: pd.DataFrame, *, ci_prob: float, rng: np.random.Generator, n_draws: int,
              prior: tuple[float, float]) -> pd.DataFrame:
    """``pass_rate`` rows: classical accuracy with its Clopper-Pearson interval beside the
    Beta-Binomial posterior."""
    k, n = cells["n_pass"].to_numpy(float), cells["n_pairs"].to_numpy(float)
    lo, hi = pr.clopper_pearson(k, n, ci_prob)
    post = _summ(pr.beta_binomial_draws(k, n, rng, n_draws, prior), ci_prob)
    keys = [(c, g, m, "", r) for c, g, m, r in zip(cells["corruption"], cells["category"],
                                                    cells["metric"], cells["n_refs"],
                                                    strict=True)]
    out = pd.DataFrame({"classical": k / n, "classical_low": lo, "classical_high": hi},
                       index=_index(keys, "pass_rate"))
    for col in post.columns:
        out[col] = post[col].to_numpy()
    for col in ("n_pairs", "n_pass", "n_tie", "n_fail", "rule", "direction", "tolerance"):
        out[col] = cells[col].to_numpy()
    return out


def pooled_rows(cells: pd.DataFrame, *, ci_prob: float, rng: np.random.Generator,
                n_draws: int) -> tuple[pd.DataFrame, list[str]]:
    """``pass_rate_pooled`` rows: the hierarchical model across the corruptions of one
    category, per metric and number of references."""
    frames, notes = [], []
    for (cat, met, nref), grp in cells.groupby(["category", "metric", "n_refs"], sort=False):
        if len(grp) < 2:
            notes.append(f"no pooled pass rate for category {cat!r} ({met}, n_refs={nref}): "
                         "it has one corruption only.")
            continue
        d = pr.hierarchical_draws(grp["n_pass"].to_numpy(float),
                                  grp["n_pairs"].to_numpy(float), rng, n_draws)
        post = _summ(d["p"], ci_prob)
        keys = [(c, cat, met, "", nref) for c in grp["corruption"]]
        f = pd.DataFrame(post.to_numpy(), columns=post.columns,
                         index=_index(keys, "pass_rate_pooled"))
        f["n_pairs"] = grp["n_pairs"].to_numpy()
        f["n_pass"] = grp["n_pass"].to_numpy()
        f["pooling_mu"] = float(np.median(d["mu"]))
        f["pooling_kappa"] = float(np.median(d["kappa"]))
        frames.append(f)
    return (pd.concat(frames) if frames else pd.DataFrame()), notes


def _paired_row(key: tuple[Any, ...], estimand: str, a: np.ndarray, b: np.ndarray, *,
                ci_prob: float, rng: np.random.Generator, n_draws: int) -> pd.DataFrame:
    counts = pr.paired_counts(a, b)
    d, lo, hi = pr.paired_wald(counts, ci_prob)
    post = _summ(pr.paired_draws(counts, rng, n_draws)[:, None], ci_prob)
    f = pd.DataFrame({"classical": [d], "classical_low": [lo], "classical_high": [hi]},
                     index=_index([key], estimand))
    for col in post.columns:
        f[col] = post[col].to_numpy()
    f["n_pairs"] = int(counts.sum())
    f["n_discordant"] = int(counts[1] + counts[2])
    f["p_beats"] = pr.p_beats(counts)
    f["pvalue"] = pr.mcnemar_exact(counts)
    return f


def comparison_rows(outcomes: pd.DataFrame, metrics: list[str], *, ci_prob: float,
                    rng: np.random.Generator, n_draws: int) -> pd.DataFrame:
    """``pass_rate_difference`` rows: metric minus metric2 on the same pairs (paired)."""
    frames = []
    wide = outcomes.pivot_table(index=["corruption", "category", "n_refs", "pair_id"],
                                columns="metric", values="passed", aggfunc="first")
    for (corr, cat, nref), grp in wide.groupby(level=["corruption", "category", "n_refs"],
                                               sort=False):
        for m1, m2 in itertools.combinations(metrics, 2):
            if m1 not in grp.columns or m2 not in grp.columns:
                continue
            both = grp[[m1, m2]].dropna()
            if not len(both):
                continue
            frames.append(_paired_row((corr, cat, m1, m2, nref), "pass_rate_difference",
                                      both[m1].to_numpy(bool), both[m2].to_numpy(bool),
                                      ci_prob=ci_prob, rng=rng, n_draws=n_draws))
    return pd.concat(frames) if frames else pd.DataFrame()


def refs_rows(outcomes: pd.DataFrame, *, ci_prob: float, rng: np.random.Generator,
              n_draws: int) -> pd.DataFrame:
    """``refs_effect`` rows: one metric's pass rate with more references minus with fewer,
    on the same pairs; labels ``"5->10"``, ``"10->20"`` and first-to-last."""
    frames = []
    wide = outcomes.pivot_table(index=["corruption", "category", "metric", "pair_id"],
                                columns="n_refs", values="passed", aggfunc="first")
    levels = list(wide.columns)
    try:
        levels = sorted(levels, key=float)
    except (TypeError, ValueError):
        return pd.DataFrame()
    steps = list(itertools.pairwise(levels))
    if len(levels) > 2:
        steps.append((levels[0], levels[-1]))
    for (corr, cat, met), grp in wide.groupby(level=["corruption", "category", "metric"],
                                              sort=False):
        for low, high in steps:
            both = grp[[low, high]].dropna()
            if not len(both):
                continue
            frames.append(_paired_row((corr, cat, met, "", f"{low}->{high}"), "refs_effect",
                                      both[high].to_numpy(bool), both[low].to_numpy(bool),
                                      ci_prob=ci_prob, rng=rng, n_draws=n_draws))
    return pd.concat(frames) if frames else pd.DataFrame()
