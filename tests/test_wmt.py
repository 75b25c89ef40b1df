"""WMT metrics-task statistics against Google's mt-metrics-eval (MTME).

Reference values: ``tests/results/mtme_reference.json``, made by
``tests/results/make_mtme_reference.py`` with MTME's own functions (commit recorded in the
file; the call of every value is recorded beside it) on two synthetic campaigns of
:func:`bayesmeta.wmt.simulate.simulate_campaign` and on SummEval (COH, mean of the three
experts, run 1). Deterministic statistics are asserted to 1e-9; permutation p-values to
Monte Carlo error (MTME draws from NumPy's global stream, which is not matched)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import bayesmeta as bm
from bayesmeta.wmt import kernels, ties
from bayesmeta.wmt.simulate import simulate_campaign

REF = json.loads((Path(__file__).parent / "results" / "mtme_reference.json").read_text())
SIMS = {"sim_da": dict(n_systems=8, n_items=60, n_metrics=6, scale="da", random_seed=11),
        "sim_mqm": dict(n_systems=12, n_items=40, n_metrics=5, scale="mqm", random_seed=12)}
NONE = {"n_resamples": 0}


@pytest.fixture(scope="module")
def campaigns(request):
    out = {}
    for name, args in SIMS.items():
        ds = simulate_campaign(**args)
        ref = REF["datasets"][name]
        z = ds["judgment"].values.sum()
        x = ds["score"].values.sum()
        # the simulator still draws what the reference was computed on
        assert z == pytest.approx(ref["fingerprint"][0], rel=1e-12)
        assert x == pytest.approx(ref["fingerprint"][1], rel=1e-12)
        out[name] = (ds, "quality", ref)
    return out


def _datasets(campaigns, summeval):
    return {**campaigns, "summeval": (summeval, "COH", REF["datasets"]["summeval"])}


@pytest.fixture(scope="module")
def all_data(campaigns, request):
    se = request.getfixturevalue("summeval")
    return _datasets(campaigns, se)


def _check(res, expected: dict, tol=1e-9):
    got = res.summary()["classical"].droplevel(["estimand", "trait"])
    for metric, value in expected.items():
        assert got[metric] == pytest.approx(value, abs=tol), metric


@pytest.mark.parametrize("name", ["sim_da", "sim_mqm", "summeval"])
def test_spa_equals_mtme_exactly(all_data, name):
    # MTME: Correlation(...).PairwiseConfidenceError('none'), its default seed 4. Its
    # permutation sums are float32, so an exact tie between the observed and a permuted
    # difference resolves by the CPU's BLAS rounding: on another machine a few of the
    # 1,000 x 136 comparisons flip (seen: 8.8e-5 on SummEval's S3.pyr, about 12 flips of
    # 1 / 136,000 each); the simulated campaigns have no such ties and stay at 1e-9
    ds, trait, ref = all_data[name]
    _check(bm.soft_pairwise_accuracy(ds, trait, resampling=NONE), ref["spa"],
           tol=2e-4 if name == "summeval" else 1e-9)


@pytest.mark.parametrize("name", ["sim_da", "sim_mqm", "summeval"])
@pytest.mark.parametrize("grouping", ["item", "system", "global"])
def test_pdp_equals_mtme(all_data, name, grouping):
    # MTME: Correlation(...).Pearson(average_by=item|sys|none, pdp=True)
    ds, trait, ref = all_data[name]
    want = ref[f"pdp_{grouping}"]
    _check(bm.pairwise_difference_pearson(ds, trait, grouping=grouping, metrics=list(want),
                                          resampling=NONE), want)


@pytest.mark.parametrize("name", ["sim_da", "sim_mqm", "summeval"])
@pytest.mark.parametrize("grouping", ["item", "global"])
def test_kendall_like_equals_mtme(all_data, name, grouping):
    # MTME: Correlation(...).KendallLike(average_by=item|none, thresh=threshold)
    ds, trait, ref = all_data[name]
    want = ref[f"kendall_like_{grouping}"]
    _check(bm.kendall_like(ds, trait, threshold=ref["threshold"], grouping=grouping,
                           metrics=list(want), resampling=NONE), want)


@pytest.mark.parametrize("name", ["sim_da", "sim_mqm", "summeval"])
@pytest.mark.parametrize("level", ["system", "global"])
def test_williams_equals_mtme(all_data, name, level):
    # MTME: stats.WilliamsSigDiff(corr1, corr2, scipy.stats.pearsonr) -> (p, r1, r2)
    ds, trait, ref = all_data[name]
    res = bm.williams_test(ds, trait, level=level, resampling=NONE)
    d = res.details().droplevel(["estimand", "measure", "trait"])
    for (m1, m2), row in d.iterrows():
        p, r1, r2 = ref[f"williams_{level}"][f"{m1}|{m2}"]
        assert row["pvalue"] == pytest.approx(p, abs=1e-9)
        assert row["r_metric"] == pytest.approx(r1, abs=1e-9)
        assert row["r_metric2"] == pytest.approx(r2, abs=1e-9)
        p21 = ref[f"williams_{level}"][f"{m2}|{m1}"][0]
        assert row["pvalue"] == pytest.approx(p21, abs=1e-9)  # the test is symmetric


@pytest.mark.parametrize("name,grouping", [
    (name, g) for name in REF["datasets"] for g in ("item", "system", "global")
    if f"acc23_{g}" in REF["datasets"][name]])
def test_acc_eq_and_epsilon_equal_mtme_acc23(all_data, name, grouping):
    # MTME: stats.KendallWithTiesOpt(gold, metric, 'acc23', S, avg, sample_rate=1.0)
    ds, trait, ref = all_data[name]
    want = ref[f"acc23_{grouping}"]
    metrics = list(want)
    measure = {"item": "within_item", "system": "within_system", "global": "global"}[grouping]
    got = bm.correlations(ds, trait, measures=f"{measure}_acc_eq", metrics=metrics,
                          resampling={"n_resamples": 0}).table()
    hs = bm.data.select.human_score(ds, trait).values.transpose("system", "item").values
    x = bm.data.select.metric_scores(ds, metrics)
    acc, eps = ties.calibrate_ties(x.values, hs, grouping=grouping)
    n_tied = 0
    for k, m in enumerate(metrics):
        assert got.loc[m].iloc[0] == pytest.approx(want[m][0], abs=1e-9), m
        assert acc[k] == pytest.approx(want[m][0], abs=1e-9), m
        # the threshold may differ only among thresholds of equal accuracy (MTME sums
        # incrementally, so rounding breaks exact ties arbitrarily): MTME's threshold must
        # reach the same accuracy here
        agree, coef = ties.agreement(x.values[k:k + 1], hs, np.array([want[m][1]]),
                                     grouping=grouping)
        assert (agree[0] * coef).sum() == pytest.approx(want[m][0], abs=1e-9), m
        if abs(eps[k] - want[m][1]) > 1e-9:
            n_tied += 1
    assert n_tied <= max(1, len(metrics) // 4), n_tied  # ties of the optimum are rare


def _sig_cases():
    for name in REF["datasets"]:
        for stat in REF["datasets"][name]["significance"]:
            yield name, stat


def test_assign_ranks_equals_mtme_on_its_own_matrices():
    # MTME: data.AssignRanks(sig_matrix, 0.05 | 0.2) on the frozen matrices
    n = 0
    for name, stat in _sig_cases():
        sig = REF["datasets"][name]["significance"][stat]
        mat = np.asarray(sig["matrix"])
        for alpha in ("0.05", "0.2"):
            assert kernels.assign_ranks(mat, float(alpha)).tolist() == \
                sig[f"assign_ranks_{alpha}"], (name, stat, alpha)
            n += 1
    assert n >= 10


@pytest.fixture(scope="module")
def clusters(all_data):
    out = {}
    for name, stat in _sig_cases():
        ds, trait, ref = all_data[name]
        metrics = ref.get("sig_metrics")
        # MTME's acc23 clusters swap pairwise comparisons (perm_test="pairs")
        scheme = "pairs" if stat.endswith("acc_eq") else "both"
        # SPA's seed also draws its inner permutations: MTME's are seed 4
        out[name, stat] = bm.significance_clusters(
            ds, trait, statistic=stat, metrics=metrics, random_seed=4 if stat == "spa" else 5,
            resampling={"n_resamples": 0, "n_permutations": 1000, "scheme": scheme})
    return out


@pytest.mark.parametrize("case", list(_sig_cases()))
def test_significance_matrix_within_monte_carlo_error(clusters, case):
    name, stat = case
    ref = REF["datasets"][name]["significance"][stat]
    res = clusters[case]
    order = ref["order"]
    assert list(res.extra["significance"]["metric"].values) == order
    got = res.matrix().to_numpy()
    want = np.asarray(ref["matrix"])
    iu = np.triu_indices(len(order), 1)
    p = (got[iu] + want[iu]) / 2
    # two independent estimates from 1000 permutations each: sd of the difference is
    # sqrt(2 p (1 - p) / 1000); 4.5 sd (all pairs of all cases together stay far below a
    # 1e-4 family-wise false alarm), plus 0.003 for p near 0 or 1
    tol = 4.5 * np.sqrt(2 * p * (1 - p) / 1000) + 0.003
    assert np.all(np.abs(got[iu] - want[iu]) <= tol), (got[iu], want[iu])
    classical = res.summary()["classical"].droplevel(["estimand", "trait"])
    np.testing.assert_allclose(classical[order].to_numpy(), ref["value"], atol=1e-9)


def test_clusters_agree_with_mtme_for_95_percent_of_metrics(clusters):
    agree = total = 0
    for (name, stat), res in clusters.items():
        ref = REF["datasets"][name]["significance"][stat]
        got = res.details()["cluster"].droplevel(["estimand", "trait"])[ref["order"]]
        agree += int((got.to_numpy() == np.asarray(ref["cluster"])).sum())
        total += len(ref["order"])
    assert total >= 30
    assert agree / total >= 0.95, (agree, total)


# --------------------------------------------------------------------------- posteriors
def _naive_pdp(x, z):
    """Brute force: every ordered pair of systems within each item, stacked."""
    dz = (z[:, None, :] - z[None, :, :]).ravel()
    dx = (x[:, None, :] - x[None, :, :]).ravel()
    return np.corrcoef(dz, dx)[0, 1]


def _naive_kendall_like(x, z, thr):
    c = d = 0
    for i in range(z.shape[1]):
        for s in range(z.shape[0]):
            for t in range(s + 1, z.shape[0]):
                dz = z[s, i] - z[t, i]
                if abs(dz) >= thr:
                    ok = (dz > 0 and x[s, i] > x[t, i]) or (dz < 0 and x[s, i] < x[t, i])
                    c, d = c + ok, d + (not ok)
    return (c - d) / (c + d)


def test_weighted_kernels_equal_the_statistic_of_the_resampled_data():
    """Bootstrap counts as weights == the classical statistic on the data with systems
    and items repeated (brute-force references written here)."""
    ds = simulate_campaign(n_systems=6, n_items=15, n_metrics=2, random_seed=3)
    z = ds["judgment"].isel(trait=0).values
    x = ds["score"].isel(run=0).transpose("metric", "system", "item").values
    rng = np.random.default_rng(0)
    for _ in range(3):
        a = rng.multinomial(6, np.full(6, 1 / 6))
        b = rng.multinomial(15, np.full(15, 1 / 15))
        zr = np.repeat(np.repeat(z, a, 0), b, 1)
        got_p = kernels.pairwise_difference_pearson(x, z, a=a[None], b=b[None])[0]
        got_k = kernels.kendall_like(x, z, threshold=25, a=a[None], b=b[None])[0]
        for m in range(2):
            xr_ = np.repeat(np.repeat(x[m], a, 0), b, 1)
            assert got_p[m] == pytest.approx(_naive_pdp(xr_, zr), abs=1e-12)
            assert got_k[m] == pytest.approx(_naive_kendall_like(xr_, zr, 25), abs=1e-12)


def test_weighted_spa_equals_brute_force():
    ds = simulate_campaign(n_systems=5, n_items=12, n_metrics=1, random_seed=4)
    z = ds["judgment"].isel(trait=0).values
    x = ds["score"].isel(run=0).values[:, :, 0]
    signs = kernels.permutation_signs(200, 12, 4)
    rng = np.random.default_rng(1)
    a, b = 5 * rng.dirichlet(np.ones(5)), 12 * rng.dirichlet(np.ones(12))
    sg = signs.astype(float)

    def pv(u):
        out = {}
        for s in range(5):
            for t in range(s + 1, 5):
                d = b * (u[s] - u[t])
                out[s, t] = np.mean(sg @ d >= d.sum())
        return out

    ph, pm = pv(z), pv(x)
    w = {k: a[k[0]] * a[k[1]] for k in ph}
    want = 1 - sum(w[k] * abs(ph[k] - pm[k]) for k in ph) / sum(w.values())
    got = kernels.soft_pairwise_accuracy(
        kernels.pairwise_pvalues(x[None], signs, b=b[None]),
        kernels.pairwise_pvalues(z, signs, b=b[None])[:, None], a[None])
    assert got[0, 0] == pytest.approx(want, abs=1e-12)


def test_posterior_side_by_side_and_reproducible(campaigns):
    ds = campaigns["sim_da"][0]
    opts = {"n_resamples": 60, "n_permutations": 200}
    r1 = bm.soft_pairwise_accuracy(ds, "quality", resampling=opts, random_seed=9)
    r2 = bm.soft_pairwise_accuracy(ds, "quality", resampling=opts, random_seed=9)
    s = r1.summary()
    assert list(s.columns) == ["classical", "classical_low", "classical_high", "mean", "sd",
                               "hdi_low", "hdi_high"]
    np.testing.assert_array_equal(s.to_numpy(), r2.summary().to_numpy())
    pb = r1.p_beats().to_numpy()
    off = ~np.eye(len(pb), dtype=bool)
    np.testing.assert_allclose((pb + pb.T)[off], 1.0, atol=1e-12)
    rp = r1.rank_probability().to_numpy()
    np.testing.assert_allclose(rp.sum(1), 1.0, atol=1e-12)
    assert ((s["hdi_low"] <= s["mean"]) & (s["mean"] <= s["hdi_high"])).all()


def test_save_load_round_trip(tmp_path, campaigns):
    ds = campaigns["sim_mqm"][0]
    res = bm.kendall_like(ds, "quality", threshold=5, resampling={"n_resamples": 30},
                          random_seed=2)
    back = bm.load(res.save(tmp_path / "kl.nc"))
    np.testing.assert_allclose(back.summary().to_numpy(), res.summary().to_numpy())
    np.testing.assert_allclose(back.p_beats().to_numpy(), res.p_beats().to_numpy())


def test_bad_input_named(campaigns):
    ds = campaigns["sim_da"][0].copy(deep=True)
    with pytest.raises(ValueError, match="grouping"):
        bm.pairwise_difference_pearson(ds, "quality", grouping="segment")
    with pytest.raises(ValueError, match="measure"):
        bm.significance_clusters(ds, "quality", statistic="kendall_tau")
    with pytest.raises(ValueError, match="alpha"):
        bm.significance_clusters(ds, "quality", alpha=1.5)
    with pytest.raises(ValueError, match="threshold"):
        bm.kendall_like(ds, "quality", threshold=-1)
    ds["score"][0, 0, 1, 0] = np.nan
    with pytest.raises(ValueError, match="metric01"):
        bm.soft_pairwise_accuracy(ds, "quality", resampling=NONE)


# --------------------------------------------------------------------------- ranking
def test_wmt_ranking_combines_the_tasks():
    data = {"en-de": simulate_campaign(8, 30, 3, random_seed=21),
            "ja-zh": simulate_campaign(7, 25, 3, random_seed=22)}
    res = bm.wmt_ranking(data, "quality", random_seed=3,
                         resampling={"n_permutations": 200, "n_resamples": 40})
    tasks = res.tasks()
    for k, lp in enumerate(sorted(data)):
        spa = bm.soft_pairwise_accuracy(data[lp], "quality", random_seed=3 + 10 * k,
                                        resampling={"n_permutations": 200,
                                                    "n_resamples": 0})
        np.testing.assert_allclose(tasks[f"{lp}:sys:spa"].to_numpy(),
                                   spa.summary()["classical"].to_numpy(), atol=1e-12)
        acc = bm.correlations(data[lp], "quality", measures="within_item_acc_eq",
                              resampling={"n_resamples": 0}).table()
        np.testing.assert_allclose(tasks[f"{lp}:seg:acc_eq"].to_numpy(),
                                   acc.iloc[:, 0].to_numpy(), atol=1e-12)
    overall = res.summary()["classical"].to_numpy()
    np.testing.assert_allclose(overall, tasks.to_numpy().mean(1), atol=1e-12)
    d = res.details()
    assert sorted(d["cluster"].unique())[0] == 1
    assert (d["rank"].sort_values().to_numpy() == np.arange(1, 4)).all()
    rp = res.rank_probability().to_numpy()
    np.testing.assert_allclose(rp.sum(1), 1.0, atol=1e-12)
    with pytest.raises(ValueError, match="protocol"):
        bm.wmt_ranking(data, "quality", protocol="wmt19")


def test_acc_eq_score_swap_test_is_exact_where_the_pairs_test_is_not():
    """Two exchangeable metrics: the score-swapping test with re-calibrated thresholds keeps
    its level; MTME's comparison swap rejects far too often (60 null campaigns each; a
    binomial 0.05 rate exceeds 9/60 with probability < 0.002)."""
    rej = {"both": 0, "pairs": 0, "pairs-items": 0}
    for r in range(60):
        ds = simulate_campaign(10, 20, 2, random_seed=900 + r, loadings=(0.6, 0.6),
                               bias_sd=0.0)
        for scheme in rej:
            res = bm.significance_clusters(
                ds, "quality", statistic="within_item_acc_eq", random_seed=r,
                resampling={"n_resamples": 0, "n_permutations": 100, "scheme": scheme})
            rej[scheme] += res.matrix().to_numpy()[0, 1] <= 0.025  # two-sided 5%
    assert rej["both"] <= 9, rej
    assert rej["pairs-items"] <= 9, rej        # each item's comparisons swapped together
    assert rej["pairs"] > rej["both"], rej


def test_item_blocked_comparison_swap_equals_the_exact_sign_flip_test():
    """scheme='pairs-items': one coin per item flips all of its comparison differences
    d_gp = c_gp (a^A_gp - a^B_gp). With 8 items the exact test enumerates the 2^8 sign
    patterns of the item sums D_g; 20,000 random swaps give its p-value within 0.01."""
    import itertools

    from bayesmeta.wmt import ties

    ds = simulate_campaign(6, 8, 2, random_seed=4, loadings=(0.55, 0.6), bias_sd=0.0)
    res = bm.significance_clusters(
        ds, "quality", statistic="within_item_acc_eq", random_seed=3,
        resampling={"n_resamples": 0, "n_permutations": 20_000, "scheme": "pairs-items"})
    from bayesmeta.wmt._common import inputs

    x, z, _, _ = inputs(ds, "quality", None, None, None, None, "first")
    acc, eps = ties.calibrate_ties(x, z, grouping="item")
    agree, coef = ties.agreement(x, z, eps, grouping="item")
    a, b = np.argsort(-acc, kind="stable")[:2]          # the significance matrix's order
    D = ((agree[a] - agree[b]) * coef).sum(1)           # per item
    flips = np.array(list(itertools.product([1, -1], repeat=len(D))))
    exact = np.mean(flips @ D >= D.sum() - 1e-12)
    np.testing.assert_allclose(res.matrix().to_numpy()[0, 1], exact, atol=0.01)
    with pytest.raises(ValueError, match="one group"):
        bm.significance_clusters(ds, "quality", statistic="system_acc_eq",
                                 pair_test="permutation",
                                 resampling={"n_resamples": 0, "scheme": "pairs-items"})
