"""What the WMT functions resample by default (issue 25, "the 94% intervals cover 88-99%").

Statistics that compare systems on the same items resample the systems only (percentile
bootstrap over systems; Bayesian bootstrap with a flat Dirichlet over systems, every item
weighing one); correlations over all outputs or within systems keep systems and items; an
explicit ``resampling={"unit": ...}`` is honoured by both. The coverage evidence is the null
study ``benchmarks/wmt_null_calibration.py defaults`` (label ``defaults-systems``).

References (closed forms written here with NumPy, 1e-12): the system-level Pearson r of a
resample is the weighted Pearson r of the system means with the multinomial counts
(bootstrap) or Dirichlet weights (posterior) of NumPy's generator seeded as documented
(bootstrap ``random_seed + 1``, posterior ``+ 2``; Williams' test: posterior ``random_seed``,
bootstrap ``+ 1``); with items resampled, system means weighted by the item weights."""

from __future__ import annotations

import numpy as np
import pytest

import bayesmeta as bm
from bayesmeta.correlation.resampling import bayesian_bootstrap, bootstrap
from bayesmeta.wmt._common import SYSTEMS_POSTERIOR_NOTE, default_unit

TOL = 1e-12
R = 40


@pytest.fixture(scope="module")
def ds():
    return bm.wmt.simulate_campaign(8, 30, 3, random_seed=2)


def _arrays(ds):
    x = ds["score"].isel(run=0).transpose("metric", "system", "item").values
    return x, ds["judgment"].isel(trait=0).transpose("system", "item").values


def _wpearson(u, v, w):
    w = w / w.sum()
    du, dv = u - (w * u).sum(), v - (w * v).sum()
    return (w * du * dv).sum() / np.sqrt((w * du ** 2).sum() * (w * dv ** 2).sum())


def _system_r(x, z, a=None, b=None):
    """System-level Pearson r of every metric under system weights a, item weights b."""
    S, I = z.shape
    a = np.ones(S) if a is None else a
    b = np.ones(I) if b is None else b
    zm = z @ b / b.sum()
    return np.array([_wpearson(x[m] @ b / b.sum(), zm, a) for m in range(x.shape[0])])


def test_default_units():
    assert [default_unit(s) for s in ("spa", "system_pearson", "system_acc_eq",
                                      "within_item_acc_eq", "within_item_kendall")] == \
        ["systems"] * 5
    assert [default_unit(s) for s in ("global_pearson", "within_system_pearson",
                                      "global_acc_eq")] == ["both"] * 3
    assert default_unit("pdp", "item") == default_unit("kendall_like", "item") == "systems"
    assert default_unit("pdp", "global") == default_unit("kendall_like", "system") == "both"


def test_clusters_default_resamples_systems_only(ds):
    """Bootstrap draws: Pearson r of the system means under multinomial system counts;
    posterior draws: under S x Dirichlet(1_S) system weights, items all weighing one."""
    x, z = _arrays(ds)
    S = z.shape[0]
    res = bm.significance_clusters(ds, "quality", statistic="system_pearson", random_seed=5,
                                   resampling={"n_resamples": R, "n_permutations": 1})
    counts = np.random.default_rng(6).multinomial(S, np.full(S, 1 / S), size=R)
    weights = S * np.random.default_rng(7).dirichlet(np.full(S, (S - 2) / S), size=R)
    boot = np.array([_system_r(x, z, a=c.astype(float)) for c in counts])
    post = np.array([_system_r(x, z, a=w) for w in weights])
    np.testing.assert_allclose(res.extra["bootstrap"].values, boot, rtol=0, atol=TOL)
    np.testing.assert_allclose(res.extra["posterior"].values, post, rtol=0, atol=TOL)
    # P(A beats B) from these draws
    pb = (post[:, 0] > post[:, 1]).mean()
    np.testing.assert_allclose(res.extra["p_beats"].values[0, 1], pb, rtol=0, atol=TOL)
    # every place says what is resampled
    assert res.summary().attrs["classical_ci_kind"] == "percentile bootstrap over systems"
    assert res.posterior_kind == ("Bayesian bootstrap (Dirichlet((k - 2) / k; flat below 3) "
                                  "over k systems)")
    assert "over k systems; items weigh one" in res.info["posterior"]
    assert "over systems," in res.info["classical interval"]
    assert SYSTEMS_POSTERIOR_NOTE in res.notes        # the null study's calibration line


def test_explicit_unit_is_honoured_by_the_posterior(ds):
    """unit='items': the Bayesian bootstrap weighs the items with I x Dirichlet(1_I) (the
    systems weigh one) and the bootstrap resamples items; unit='both' equals the
    correlation engine's bootstrap and bayesian_bootstrap."""
    x, z = _arrays(ds)
    I = z.shape[1]
    res = bm.significance_clusters(ds, "quality", statistic="system_pearson", random_seed=5,
                                   resampling={"n_resamples": R, "n_permutations": 1,
                                               "unit": "items"})
    counts = np.random.default_rng(6).multinomial(I, np.full(I, 1 / I), size=R)
    weights = I * np.random.default_rng(7).dirichlet(np.full(I, (I - 2) / I), size=R)
    np.testing.assert_allclose(res.extra["bootstrap"].values,
                               [_system_r(x, z, b=c.astype(float)) for c in counts],
                               rtol=0, atol=TOL)
    np.testing.assert_allclose(res.extra["posterior"].values,
                               [_system_r(x, z, b=w) for w in weights], rtol=0, atol=TOL)
    assert res.posterior_kind == ("Bayesian bootstrap (Dirichlet((k - 2) / k; flat below 3) "
                                  "over k items)")
    both = bm.significance_clusters(ds, "quality", statistic="system_pearson", random_seed=5,
                                    resampling={"n_resamples": R, "n_permutations": 1,
                                                "unit": "both"})
    xs = ds["score"].isel(run=0).transpose("metric", "system", "item")
    ref_b = bootstrap(xs, z, measures="system_pearson", n_resamples=R, random_seed=6)
    ref_p = bayesian_bootstrap(xs, z, measures="system_pearson", n_resamples=R,
                               random_seed=7)
    np.testing.assert_allclose(both.extra["bootstrap"].values, ref_b.values[..., 0],
                               rtol=0, atol=TOL)
    np.testing.assert_allclose(both.extra["posterior"].values, ref_p.values[..., 0],
                               rtol=0, atol=TOL)
    assert both.posterior_kind == "Bayesian bootstrap (flat Dirichlet over systems and items)"


def test_global_correlation_keeps_systems_and_items(ds):
    """A correlation over all outputs measures the items' levels too: its default stays
    'both', the correlation engine's draws."""
    _, z = _arrays(ds)
    res = bm.significance_clusters(ds, "quality", statistic="global_pearson", random_seed=5,
                                   resampling={"n_resamples": R, "n_permutations": 1})
    xs = ds["score"].isel(run=0).transpose("metric", "system", "item")
    ref = bayesian_bootstrap(xs, z, measures="global_pearson", n_resamples=R, random_seed=7)
    np.testing.assert_allclose(res.extra["posterior"].values, ref.values[..., 0], rtol=0,
                               atol=TOL)
    assert res.summary().attrs["classical_ci_kind"] == (
        "percentile bootstrap over systems and items")
    assert SYSTEMS_POSTERIOR_NOTE not in res.notes


def test_williams_default_by_level(ds):
    """System level: the difference draws under system weights only (posterior seed
    random_seed, bootstrap + 1); global level: the engine's draws over both."""
    x, z = _arrays(ds)
    S = z.shape[0]
    res = bm.williams_test(ds, "quality", random_seed=3, resampling={"n_resamples": R})
    weights = S * np.random.default_rng(3).dirichlet(np.full(S, (S - 2) / S), size=R)
    counts = np.random.default_rng(4).multinomial(S, np.full(S, 1 / S), size=R)
    post = np.array([_system_r(x, z, a=w) for w in weights])
    boot = np.array([_system_r(x, z, a=c.astype(float)) for c in counts])
    np.testing.assert_allclose(res.extra["posterior"].values, post, rtol=0, atol=TOL)
    d = boot[:, 0] - boot[:, 1]
    lo, hi = np.quantile(d, [0.03, 0.97])
    row = res.summary().iloc[0]
    np.testing.assert_allclose([row["classical_low"], row["classical_high"]], [lo, hi],
                               rtol=0, atol=TOL)
    assert res.summary().attrs["classical_ci_kind"] == "percentile bootstrap over systems"
    glob = bm.williams_test(ds, "quality", level="global", random_seed=3,
                            resampling={"n_resamples": R})
    xs = ds["score"].isel(run=0).transpose("metric", "system", "item")
    ref = bayesian_bootstrap(xs, z, measures="global_pearson", n_resamples=R, random_seed=3)
    np.testing.assert_allclose(glob.extra["posterior"].values, ref.values[..., 0], rtol=0,
                               atol=TOL)


@pytest.mark.parametrize("fn", ["soft_pairwise_accuracy", "pairwise_difference_pearson",
                                "kendall_like"])
def test_wmt_statistics_default_to_systems(ds, fn):
    """SPA, PDP and KendallLike (within items) by default equal their explicit
    unit='systems' call, and differ from unit='both'."""
    f = getattr(bm, fn)
    opts = {"n_resamples": 20, "n_permutations": 50}
    kw = {"threshold": 5.0} if fn == "kendall_like" else {}
    res = f(ds, "quality", resampling=opts, random_seed=1, **kw)
    sysr = f(ds, "quality", resampling={**opts, "unit": "systems"}, random_seed=1, **kw)
    both = f(ds, "quality", resampling={**opts, "unit": "both"}, random_seed=1, **kw)
    for k in ("bootstrap", "posterior"):
        np.testing.assert_allclose(res.extra[k].values, sysr.extra[k].values, rtol=0,
                                   atol=TOL)
        assert not np.allclose(res.extra[k].values, both.extra[k].values)
    assert res.summary().attrs["classical_ci_kind"] == "percentile bootstrap over systems"


def test_spa_over_systems_reweights_the_classical_pair_pvalues(ds):
    """With the items unweighted, a resample of systems changes which system pairs count
    (weight a_s a_t), not their permutation p-values: SPA draws equal
    1 - sum_{s<t} a_s a_t |p^h_st - p^m_st| / sum_{s<t} a_s a_t with the p-values of the
    classical value, written here from MTME's definition (share of sign flips of the
    per-item differences whose sum reaches the observed one, float32 sums as MTME)."""
    x, z = _arrays(ds)
    S, I = z.shape
    P, seed = 300, 5
    res = bm.soft_pairwise_accuracy(ds, "quality", random_seed=seed,
                                    resampling={"n_resamples": R, "n_permutations": P})
    u = np.random.default_rng(seed).random((P, I), dtype=np.float32)
    signs = (2 * np.rint(u) - 1).astype(np.float32)          # MTME: round to 0/1

    def pvals(y):
        y = y.astype(np.float32)
        p = np.full((S, S), np.nan)
        for s in range(S):
            for t in range(s + 1, S):
                d = y[s] - y[t]
                p[s, t] = np.mean(signs @ d >= d.sum())
        return p

    iu = np.triu_indices(S, 1)
    ph = pvals(z)[iu]
    err = np.array([np.abs(ph - pvals(x[m])[iu]) for m in range(x.shape[0])])
    np.testing.assert_allclose(res.summary()["classical"].values, 1 - err.mean(1), atol=TOL)
    for draws, weights in (
            (res.extra["bootstrap"].values, np.random.default_rng(seed + 1).multinomial(
                S, np.full(S, 1 / S), size=R).astype(float)),
            (res.extra["posterior"].values,
             S * np.random.default_rng(seed + 2).dirichlet(np.full(S, (S - 2) / S), size=R))):
        w = weights[:, iu[0]] * weights[:, iu[1]]
        expect = 1 - (w[:, None, :] * err[None]).sum(-1) / w.sum(-1)[:, None]
        np.testing.assert_allclose(draws, expect, rtol=0, atol=TOL)


@pytest.mark.parametrize("S", [3, 8, 20])
def test_unbiased_dirichlet_gives_a_weighted_mean_the_unbiased_variance(S):
    """Closed form: with w ~ S Dirichlet(alpha 1_S), Var(sum w_i x_i / S) =
    sum (x_i - xbar)^2 / (S (S alpha + 1)); alpha = (S - 2) / S makes it s^2 / S, the
    flat Dirichlet s^2 (S - 1) / (S (S + 1)). Checked by simulation (400,000 draws, 2%)."""
    from bayesmeta.correlation.resampling import dirichlet_concentration, resampling_weights

    x = np.random.default_rng(S).normal(size=S)
    s2 = x.var(ddof=1)
    n = 400_000
    for dirichlet, want in (("unbiased", s2 / S), ("flat", s2 * (S - 1) / (S * (S + 1)))):
        a, b = resampling_weights(np.random.default_rng(1), "bayesian", n, (S, 4),
                                  bayesian_unit="systems", dirichlet=dirichlet)
        assert b is None
        np.testing.assert_allclose((a @ x / S).var(), want, rtol=0.02)
    assert dirichlet_concentration(S, "unbiased") == pytest.approx((S - 2) / S)
    # fewer than 3 units, and systems with items together, stay flat
    assert dirichlet_concentration(2, "unbiased") == 1.0
    a2, _ = resampling_weights(np.random.default_rng(1), "bayesian", 5, (S, 4),
                               bayesian_unit="both", dirichlet="unbiased")
    a1, _ = resampling_weights(np.random.default_rng(1), "bayesian", 5, (S, 4),
                               bayesian_unit="both")
    np.testing.assert_allclose(a2, a1, rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="dirichlet"):
        bm.ResamplingOptions(dirichlet="haldane")
