"""The report's WMT ranking section (issue 25, must show: the WMT ranking of the synthetic
campaign as an HTML report section, with the posterior rank distributions and the clusters).

References: the section's numbers against :func:`bayesmeta.wmt_ranking` and
:func:`bayesmeta.significance_clusters` called directly with the same options (1e-12); the
posterior P(rank 1) against the share of posterior draws in which the metric is the best;
the overall clusters against the WMT rank-assignment rule re-implemented here from the
significance matrix."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

import bayesmeta as bm

LPS = ["en-de", "ja-zh"]
SEED = 3
#: The report's options (n_resamples >= 10 in reports); the section adds scheme "pairs".
RESAMPLING = {"n_resamples": 30, "n_permutations": 30}
TOL = 1e-12


def stack(lps, seed, *shape):
    """Simulated language pairs (seed + k for pair k) stacked on the dim lp, the layout of
    bm.read_mtme with several pairs."""
    parts = [bm.wmt.simulate_campaign(*shape, random_seed=seed + k, lp=lp)
             for k, lp in enumerate(lps)]
    return xr.concat(parts, "lp", combine_attrs="drop_conflicts").assign_coords(lp=lps)


@pytest.fixture(scope="module")
def campaign():
    return stack(LPS, 5, 6, 20, 5)


@pytest.fixture(scope="module")
def rep(campaign):
    return bm.report(campaign, resampling=RESAMPLING, random_seed=SEED, progress=False)


@pytest.fixture(scope="module")
def direct(campaign):
    return bm.wmt_ranking(campaign, "quality", protocol="wmt24",
                          resampling={**RESAMPLING, "scheme": "pairs"}, random_seed=SEED)


def _tables(rep):
    run = rep.section("wmt")
    assert run.status == "ok", (run.status, run.reason, run.error)
    return run, {b.caption.split(":")[0].split(" (")[0]: b.frame for b in run.output.tables}


def test_section_numbers_equal_wmt_ranking(rep, direct, campaign):
    _, tables = _tables(rep)
    frame = tables["Overall metric ranking"]
    summary = direct.summary().droplevel([0, 1])
    details = direct.details().droplevel([0, 1])
    assert sorted(frame.index) == sorted(summary.index)
    for col in ("classical", "classical_low", "classical_high", "mean", "hdi_low", "hdi_high"):
        np.testing.assert_allclose(frame[col].to_numpy(float),
                                   summary.loc[frame.index, col].to_numpy(float),
                                   rtol=0, atol=TOL, err_msg=col)
    np.testing.assert_allclose(frame["p_rank1"].to_numpy(float),
                               details.loc[frame.index, "p_best"].to_numpy(float),
                               rtol=0, atol=TOL)
    np.testing.assert_array_equal(frame["rank"].to_numpy(),
                                  details.loc[frame.index, "rank"].to_numpy())
    np.testing.assert_array_equal(frame["cluster"].to_numpy(),
                                  details.loc[frame.index, "cluster"].to_numpy())
    # the campaign stacked on lp is ranked as the same pairs given one by one
    apart = bm.wmt_ranking(bm.split_language_pairs(campaign), "quality",
                           resampling={**RESAMPLING, "scheme": "pairs"}, random_seed=SEED)
    np.testing.assert_allclose(apart.summary().to_numpy(), direct.summary().to_numpy(),
                               rtol=0, atol=TOL)
    # best first, by the classical overall score
    assert list(frame["rank"]) == list(range(1, len(frame) + 1))
    assert (np.diff(frame["classical"].to_numpy(float)) <= TOL).all()


def test_rank_probabilities_sum_to_one_and_match_the_draws(rep, direct):
    run, _ = _tables(rep)
    res = run.output.results[0]
    prob = res.rank_probability()
    np.testing.assert_allclose(prob.sum(axis=1).to_numpy(float), 1.0, rtol=0, atol=TOL)
    np.testing.assert_allclose(prob.sum(axis=0).to_numpy(float), 1.0, rtol=0, atol=TOL)
    np.testing.assert_allclose(prob.to_numpy(float), direct.rank_probability().to_numpy(float),
                               rtol=0, atol=TOL)
    # P(rank 1): the share of posterior draws in which the metric has the highest score
    post = res.extra["posterior"].transpose("resample", "metric").values
    best = np.bincount(post.argmax(axis=1), minlength=post.shape[1]) / post.shape[0]
    np.testing.assert_allclose(prob.iloc[:, 0].to_numpy(float), best, rtol=0, atol=TOL)
    # the figure: one row per metric, labels at the page's font size
    assert len(run.images) == 1
    info = run.image_info[0]
    assert info["n_labels"] == prob.shape[0]
    assert info["font_px"] >= 10 and info["label_px"] >= info["font_px"]


def _assign(sig, alpha):
    """The WMT rank assignment, written out: walking down the sorted list, a metric opens a
    new cluster when a metric of the current cluster beats it at p <= alpha."""
    clusters, start, c = [], 0, 1
    for i in range(sig.shape[0]):
        if any(sig[k, i] <= alpha for k in range(start, i)):
            c, start = c + 1, i
        clusters.append(c)
    return clusters


def test_clusters_equal_significance_clusters(rep, campaign, direct):
    _, tables = _tables(rep)
    frame = tables["Overall metric ranking"]
    # overall: the rule applied to the overall significance matrix (sorted best first)
    sig = direct.matrix()
    assert list(sig.index) == list(frame.index)
    assert list(frame["cluster"]) == _assign(sig.to_numpy(float), 0.05)
    # per language pair and task: bm.significance_clusters, seed random_seed + 10 k
    by_pair = tables["Significance clusters"]
    parts = bm.split_language_pairs(campaign)
    metrics = list(direct.summary().index.get_level_values("metric"))
    assert list(by_pair.columns) == [f"{lp}:{t}" for lp in LPS
                                     for t in ("sys:spa", "seg:acc_eq")]
    for k, lp in enumerate(LPS):
        for statistic, scheme, short in (("spa", "both", "sys:spa"),
                                         ("within_item_acc_eq", "pairs", "seg:acc_eq")):
            ref = bm.significance_clusters(
                parts[lp], "quality", statistic=statistic, metrics=metrics,
                resampling={**RESAMPLING, "scheme": scheme}, random_seed=SEED + 10 * k)
            assert "bootstrap" in ref.info["test"]       # the calibrated default test
            want = ref.details().droplevel([0, 1])["cluster"]
            got = by_pair[f"{lp}:{short}"]
            assert list(got.loc[metrics]) == list(want.loc[metrics]), (lp, statistic)


def test_page_and_answer(rep, tmp_path):
    html = rep.save(tmp_path / "wmt.html").read_text(encoding="utf-8")
    assert "WMT metric ranking" in html and "Significance clusters" in html
    assert "data:image/png;base64," in html
    assert "wmt24_score" in rep.text()
    # every other section reads one language pair: skipped with the reason, none failed
    for run in rep.runs:
        assert run.status != "failed", (run.key, run.error)
        if run.key != "wmt":
            assert run.status == "skipped" and "2 language pairs" in run.reason


def test_one_simulated_pair_and_non_wmt_data():
    one = bm.wmt.simulate_campaign(5, 15, 3, random_seed=2)
    rep = bm.report(one, resampling={"n_resamples": 20, "n_permutations": 20},
                    random_seed=1, progress=False)
    assert rep.section("wmt").status == "ok"
    assert all(r.status != "failed" for r in rep.runs), [(r.key, r.error) for r in rep.runs]
    other = bm.datasets.simulated(n_systems=4, n_items=8, random_seed=1)
    run = bm.report(other, sections=["wmt"], random_seed=1, progress=False).section("wmt")
    assert run.status == "skipped"
    assert "not a WMT-style campaign" in run.reason and "lp" in run.reason


def test_section_passes_the_report_options(monkeypatch, campaign):
    """ci_prob, resampling (resamples and permutations) and random_seed reach wmt_ranking and
    every significance_clusters call (pair k: random_seed + 10 k)."""
    import bayesmeta.wmt as wmt_pkg

    seen = []
    for name in ("wmt_ranking", "significance_clusters"):
        real = getattr(wmt_pkg, name)

        def spy(data, trait=None, *, _real=real, _name=name, **kwargs):
            seen.append((_name, kwargs))
            return _real(data, trait, **kwargs)

        monkeypatch.setattr(wmt_pkg, name, spy)
    rep = bm.report(campaign, sections=["wmt"], ci_prob=0.8, random_seed=5,
                    resampling={"n_resamples": 20, "n_permutations": 19}, progress=False)
    assert rep.section("wmt").status == "ok"
    names = [n for n, _ in seen]
    assert names == ["wmt_ranking"] + ["significance_clusters"] * 4
    seeds = [k["random_seed"] for _, k in seen]
    assert seeds == [5, 5, 5, 15, 15]
    for _, k in seen:
        assert k["ci_prob"] == 0.8
        assert k["resampling"].n_permutations == 19
        assert k["resampling"].n_resamples == 20
        assert (k["resampling"].unit, k["resampling"].dirichlet) == ("systems", "unbiased")


def test_budget_estimates_the_section_and_skips_it_without_permutations(campaign):
    from bayesmeta.report._budget import estimate

    per, mem = estimate(campaign, ["quality"], ["data", "correlations", "wmt"],
                        n_resamples=100, n_permutations=100)
    # one-pair sections skip a campaign: nothing to estimate; the ranking's leading term
    # grows with permutations + resamples (SPA's pair tests once, then reweighted)
    assert per["data"] == 0 and per["correlations"] == 0 and mem == 0
    per4, _ = estimate(campaign, ["quality"], ["wmt"], n_resamples=100, n_permutations=400)
    from bayesmeta.report._budget import SEC_WMT
    L, S, I, M = (campaign.sizes[d] for d in ("lp", "system", "item", "metric"))
    np.testing.assert_allclose(per4["wmt"] - per["wmt"],
                               SEC_WMT * L * S * S * I * 300 * (M + 6), rtol=1e-9)
    rep = bm.report(campaign, sections=["wmt"], random_seed=1, progress=False,
                    resampling={"n_resamples": 20, "n_permutations": 0})
    run = rep.section("wmt")
    assert run.status == "skipped" and "permutation" in run.reason
