"""The fast WMT kernels give the numbers of the direct ones (issue 25, scale).

References: within-group tie-calibrated accuracy (``acc_eq``) against
:func:`bayesmeta.correlation._accuracy.accuracy_groups_direct`, the engine's previous code
kept unchanged (every resample's pair weights, sorted tie gains and cumulative sums formed
in full); SPA's weighted paired-permutation p-values against a brute-force loop written
here from the definition. Tolerance 1e-12 (the kernels sum in another order; nothing else
differs). Campaigns: several seeds, MQM-like human scores (many human ties), metric scores
rounded so that metrics tie too (exact zero differences included), missing metric and human
scores and whole unrated segments, bootstrap counts (weights 0) and Dirichlet weights, and
the bound-and-refine path forced on small data by small blocks.
"""

from __future__ import annotations

import numpy as np
import pytest

import bayesmeta as bm
import bayesmeta.correlation._accuracy as acc
import bayesmeta.correlation.measures as measures
from bayesmeta.correlation.resampling import bayesian_bootstrap, bootstrap, resampling_weights
from bayesmeta.wmt import kernels
from bayesmeta.wmt.simulate import simulate_campaign, simulate_language_pairs

TOL = 1e-12
CASES = [  # systems, items, metrics, seed, share missing, decimals of metric scores
    (6, 25, 3, 0, 0.0, None),
    (8, 40, 3, 1, 0.1, 1),
    (12, 60, 2, 2, 0.05, 0),
    (20, 120, 2, 3, 0.0, 2),
]


def _campaign(S, I, M, seed, missing, decimals):
    ds = simulate_campaign(S, I, M, scale="mqm", random_seed=seed)
    x = ds["score"].isel(run=0).transpose("metric", "system", "item").values.copy()
    z = ds["judgment"].isel(trait=0).values.copy()
    if decimals is not None:
        x = np.round(x, decimals)
    rng = np.random.default_rng(seed)
    if missing:
        x[rng.random(x.shape) < missing] = np.nan
        z[rng.random(z.shape) < missing] = np.nan
        z[:, rng.random(I) < missing] = np.nan
    return x, z


def _layout(x, z, grouping):
    """(M, G, K) metric, (G, K) human, validity: the engine's grouped layout."""
    valid = ~(np.isnan(x) | np.isnan(z)[None])
    if grouping == "within_item":
        return x.transpose(0, 2, 1), z.T, valid.transpose(0, 2, 1)
    if grouping == "within_system":
        return x, z, valid
    M, S, I = x.shape
    return x.reshape(M, 1, S * I), z.reshape(1, S * I), valid.reshape(M, 1, S * I)


def _weights(S, I, grouping, kind, seed, n=20):
    a, b = resampling_weights(np.random.default_rng(seed), kind, n, (S, I), "both")
    if grouping == "within_item":
        return a, b
    if grouping == "within_system":
        return b, a
    return (a[:, :, None] * b[:, None, :]).reshape(n, S * I), None


# the global grouping only on the smallest campaign: the direct reference forms all
# (S I)^2 / 2 pairs of outputs per resample
LAYOUTS = [(c, g) for c in CASES for g in ("within_item", "within_system", "global")
           if g != "global" or c[0] * c[1] <= 200]


@pytest.mark.parametrize(("case", "grouping"), LAYOUTS)
@pytest.mark.parametrize("kind", ["bootstrap", "bayesian"])
@pytest.mark.parametrize("block", [None, 32])
def test_accuracy_groups_equal_the_direct_kernel(case, grouping, kind, block, monkeypatch):
    S, I, M, seed, missing, decimals = case
    if block:   # force the bounds: small blocks, and never the all-pairs shortcut
        monkeypatch.setattr(acc, "_BLOCK", block)
        monkeypatch.setattr(acc, "_MAX_ELEMENTS", 64)
    x, z = _campaign(S, I, M, seed, missing, decimals)
    xg, zg, vg = _layout(x, z, grouping)
    W, gw = _weights(S, I, grouping, kind, seed)
    new = acc.accuracy_groups(xg, zg, vg, W, gw, 3)
    ref = acc.accuracy_groups_direct(xg, zg, vg, W, gw, 3)
    assert np.array_equal(np.isnan(new), np.isnan(ref))
    assert np.isfinite(ref).mean() > 0.9
    np.testing.assert_allclose(new, ref, rtol=0, atol=TOL)
    one = np.ones((1, W.shape[1]))            # the classical value (unit weights)
    np.testing.assert_allclose(acc.accuracy_groups(xg, zg, vg, one, None, 3),
                               acc.accuracy_groups_direct(xg, zg, vg, one, None, 3),
                               rtol=0, atol=TOL)


def test_the_bound_path_refines_blocks_and_ties_are_candidates(monkeypatch):
    """With small blocks the data are cut into many blocks and some are opened; a metric
    with exact ties (epsilon 0 not a candidate of its own) and one without both match."""
    monkeypatch.setattr(acc, "_BLOCK", 8)
    monkeypatch.setattr(acc, "_MAX_ELEMENTS", 64)
    opened = []
    direct = acc._Plan._direct

    def spy(self, u, v, lo, hi, at, s0):
        opened.append(hi - lo)
        return direct(self, u, v, lo, hi, at, s0)

    monkeypatch.setattr(acc._Plan, "_direct", spy)
    x, z = _campaign(10, 40, 2, 7, 0.0, None)
    x[1] = np.round(x[1], 1)                  # metric 1 ties exactly, metric 0 does not
    xg, zg, vg = _layout(x, z, "within_item")
    plan = acc._Plan(xg[1], zg, vg[1])
    assert plan.J > 5 and plan.cand[0] > 0    # exact ties: prefix 0 is no candidate
    assert acc._Plan(xg[0], zg, vg[0]).cand[0] == 0
    W, gw = _weights(10, 40, "within_item", "bayesian", 7, n=200)
    new = acc.accuracy_groups(xg, zg, vg, W, gw, 3)
    assert opened and max(opened) < plan.n    # blocks were opened, never all pairs at once
    np.testing.assert_allclose(new, acc.accuracy_groups_direct(xg, zg, vg, W, gw, 3),
                               rtol=0, atol=TOL)


@pytest.mark.parametrize("seed", [0, 1])
def test_correlation_engine_resamples_equal_the_direct_kernel(seed, monkeypatch):
    """bootstrap / bayesian_bootstrap of every acc_eq grouping with missing scores."""
    x, z = _campaign(8, 30, 2, seed, 0.1, None)
    names = ["within_item_acc_eq", "within_system_acc_eq", "global_acc_eq"]
    runs = {}
    for label, kernel in (("new", acc.accuracy_groups), ("ref", acc.accuracy_groups_direct)):
        monkeypatch.setattr(measures, "_accuracy_groups", kernel)
        runs[label] = [f(x, z, measures=names, n_resamples=30, random_seed=seed).values
                       for f in (bootstrap, bayesian_bootstrap)]
    for new, ref in zip(runs["new"], runs["ref"], strict=True):
        assert np.array_equal(np.isnan(new), np.isnan(ref))
        np.testing.assert_allclose(new, ref, rtol=0, atol=TOL)


def _pvalues_brute_force(x, signs, b):
    """p[r, m, s, t] = share of permutations with sum_i sign_i b_i (x_si - x_ti) >= the
    observed sum_i b_i (x_si - x_ti), s < t, one comparison at a time."""
    R, (M, S, _) = b.shape[0], x.shape
    out = np.full((R, M, S, S), np.nan)
    for r in range(R):
        for m in range(M):
            for s in range(S):
                for t in range(s + 1, S):
                    d = b[r] * (x[m, s] - x[m, t])
                    out[r, m, s, t] = np.mean(signs.astype(float) @ d >= d.sum())
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_weighted_spa_pvalues_equal_brute_force(seed):
    """Integer scores and bootstrap counts (every sum exact, so ties between a permuted and
    the observed difference are decided as the definition says), and continuous scores
    with Dirichlet weights."""
    rng = np.random.default_rng(seed)
    M, S, I, P = 3, 5, 30, 64
    signs = kernels.permutation_signs(P, I, seed)
    x = np.round(rng.normal(0, 3, size=(M, S, I)))
    x[0, 1] = x[0, 2]                             # two identical systems: null == observed
    b = rng.multinomial(I, np.full(I, 1 / I), size=4).astype(float)
    assert (b == 0).any()
    new = kernels.pairwise_pvalues(x, signs, b=b)
    np.testing.assert_array_equal(new, _pvalues_brute_force(x, signs, b))
    assert np.all(new[:, 0, 1, 2] == 1.0)
    xc = rng.normal(size=(M, S, I))
    bd = I * rng.dirichlet(np.ones(I), size=4)
    np.testing.assert_allclose(kernels.pairwise_pvalues(xc, signs, b=bd),
                               _pvalues_brute_force(xc, signs, bd), rtol=0, atol=TOL)
    x[1, 0, 3] = np.nan                           # a NaN, even at an item of weight 0,
    b[:, 3] = 0.0                                 # makes its comparisons not reached
    got = kernels.pairwise_pvalues(x, signs, b=b)
    assert np.all(got[:, 1, 0, 1:] == 0.0)
    np.testing.assert_array_equal(got, _pvalues_brute_force(x, signs, b))


def test_wmt_statistics_equal_the_direct_kernel(monkeypatch):
    """The whole language pair (acc_eq of all rows in one call, the rest in chunks) against
    the direct acc_eq kernel, both bootstrap units that change the weights' shape."""
    ds = simulate_language_pairs(2, 6, 30, 3, random_seed=5)
    for unit in ("both", "items"):
        opts = {"n_resamples": 60, "n_permutations": 40, "unit": unit}
        new = bm.wmt_statistics(ds, "quality", random_seed=2, resampling=opts)
        monkeypatch.setattr(measures, "_accuracy_groups", acc.accuracy_groups_direct)
        ref = bm.wmt_statistics(ds, "quality", random_seed=2, resampling=opts)
        monkeypatch.undo()
        for k in ("bootstrap", "posterior"):
            a, b = new.extra[k].values, ref.extra[k].values
            assert np.array_equal(np.isnan(a), np.isnan(b))
            np.testing.assert_allclose(a, b, rtol=0, atol=TOL)
        np.testing.assert_allclose(new.summary().to_numpy(float),
                                   ref.summary().to_numpy(float), rtol=0, atol=TOL)
