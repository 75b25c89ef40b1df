"""Metric unit tests (paper 004): pass rules against hand computations, accuracies and their
Clopper-Pearson intervals against SciPy, the three input forms, errors, save/load, plots."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.stats as st

import bayesmeta as bm
from bayesmeta.summaries import check_table
from bayesmeta.unit_tests.classical import pass_outcomes


def test_pass_rules_by_hand():
    so = np.array([0.5, 0.5, 0.4, 0.0, 1.0])
    sc = np.array([0.3, 0.5, 0.6, 0.0, 1.0 + 1e-15])
    passed, tie = pass_outcomes(so, sc, rule="greater")
    assert passed.tolist() == [True, False, False, False, False]
    assert tie.tolist() == [False, True, False, True, True]
    passed, _ = pass_outcomes(so, sc, rule="greater", direction="lower")  # TER-like
    assert passed.tolist() == [False, False, True, False, False]
    # Difference formula |so - sc| / (so + 1e-9) <= 0.15: 0.4 vs 0.6 -> 0.5 fails; 0 vs 0 ties
    passed, _ = pass_outcomes(so, sc, rule="difference")
    assert passed.tolist() == [False, True, False, True, True]
    passed, _ = pass_outcomes(np.array([1.0, 1.0, 1.0]), np.array([0.85, 1.1501, 0.8499]),
                              rule="difference")
    assert passed.tolist() == [True, False, False]
    passed, _ = pass_outcomes(np.array([1.0]), np.array([0.7]), rule="difference",
                              tolerance=0.3)
    assert passed.tolist() == [True]
    with pytest.raises(ValueError, match="rule must be"):
        pass_outcomes(so, sc, rule="less")
    with pytest.raises(ValueError, match="direction"):
        pass_outcomes(so, sc, rule="greater", direction="up")


def _scores(seed=0, n=60):
    rng = np.random.default_rng(seed)
    rows = []
    for corr, cat, p in (("neg_verb", "meaning_altering", 0.9), ("sem_opps",
                         "meaning_altering", 0.7), ("det_sub", "meaning_preserving", 0.4)):
        for met in ("m1", "m2"):
            for nref in (5, 20):
                so = rng.uniform(0.2, 1.0, n)
                good = rng.random(n) < p
                if cat == "meaning_preserving":
                    sc = np.where(good, so * 0.95, so * 0.5)
                else:
                    sc = np.where(good, so - 0.1, so + 0.1)
                rows.append(pd.DataFrame({"corruption": corr, "category": cat, "metric": met,
                                          "n_refs": nref, "pair_id": np.arange(n),
                                          "score_original": so, "score_corrupted": sc}))
    return pd.concat(rows, ignore_index=True)


def test_accuracy_and_clopper_pearson_match_scipy():
    scores = _scores()
    res = bm.metric_unit_tests(scores, random_seed=1, ci_prob=0.95)
    tab = res.summary()
    check_table(tab)
    det = res.details()
    for (corr, met, nref), grp in scores.groupby(["corruption", "metric", "n_refs"]):
        cat = grp["category"].iloc[0]
        if cat == "meaning_preserving":
            k = int((np.abs(grp.score_original - grp.score_corrupted)
                     / (grp.score_original + 1e-9) <= 0.15).sum())
        else:
            k = int((grp.score_original > grp.score_corrupted).sum())
        key = ("pass_rate", corr, cat, met, "", str(nref))
        assert tab.loc[key, "classical"] == pytest.approx(k / len(grp), abs=1e-12)
        ci = st.binomtest(k, len(grp)).proportion_ci(0.95, method="exact")
        assert tab.loc[key, "classical_low"] == pytest.approx(ci.low, abs=1e-10)
        assert tab.loc[key, "classical_high"] == pytest.approx(ci.high, abs=1e-10)
        assert det.loc[key, "n_pass"] == k and det.loc[key, "n_pairs"] == len(grp)
        # Beta(1 + k, 1 + n - k) posterior mean, Monte Carlo error of 8000 draws < 0.002
        assert tab.loc[key, "mean"] == pytest.approx((1 + k) / (2 + len(grp)), abs=0.003)
    assert tab.attrs["classical_ci_prob"] == 0.95
    wide = res.accuracy()
    assert list(wide.columns) == ["5", "20"]
    assert wide.loc[("neg_verb", "m1"), "5"] == pytest.approx(
        100 * tab.loc[("pass_rate", "neg_verb", "meaning_altering", "m1", "", "5"),
                      "classical"])


def test_paired_difference_and_refs_effect_rows():
    scores = _scores()
    res = bm.metric_unit_tests(scores, random_seed=2)
    tab, det = res.summary(), res.details()
    key = ("pass_rate_difference", "sem_opps", "meaning_altering", "m1", "m2", "5")
    a = scores.query("corruption == 'sem_opps' and n_refs == 5 and metric == 'm1'")
    b = scores.query("corruption == 'sem_opps' and n_refs == 5 and metric == 'm2'")
    pa = (a.score_original > a.score_corrupted).to_numpy()
    pb = (b.score_original > b.score_corrupted).to_numpy()
    assert tab.loc[key, "classical"] == pytest.approx(pa.mean() - pb.mean(), abs=1e-12)
    only_a, only_b = int((pa & ~pb).sum()), int((~pa & pb).sum())
    assert det.loc[key, "n_discordant"] == only_a + only_b
    assert det.loc[key, "pvalue"] == pytest.approx(
        st.binomtest(only_a, only_a + only_b, 0.5).pvalue, rel=1e-12)
    assert det.loc[key, "p_beats"] == pytest.approx(
        st.beta.sf(0.5, only_a + 1, only_b + 1), rel=1e-12)
    key = ("refs_effect", "neg_verb", "meaning_altering", "m2", "", "5->20")
    lo = scores.query("corruption == 'neg_verb' and metric == 'm2' and n_refs == 5")
    hi = scores.query("corruption == 'neg_verb' and metric == 'm2' and n_refs == 20")
    assert tab.loc[key, "classical"] == pytest.approx(
        (hi.score_original > hi.score_corrupted).mean()
        - (lo.score_original > lo.score_corrupted).mean(), abs=1e-12)
    pooled = tab.xs("pass_rate_pooled", level="estimand")
    assert pooled["classical"].isna().all() and pooled["mean"].notna().all()


def test_directions_ties_missing_scores_and_rules():
    s = pd.DataFrame({"corruption": "swap_chunks", "metric": "ter", "pair_id": range(5),
                      "score_original": [10.0, 20.0, 30.0, 5.0, np.nan],
                      "score_corrupted": [20.0, 10.0, 30.0, 50.0, 1.0]})
    res = bm.metric_unit_tests(s, directions={"ter": "lower"}, random_seed=0,
                               compare=False, pooled=False)
    row = res.details().iloc[0]
    assert (row["n_pairs"], row["n_pass"], row["n_tie"], row["n_fail"]) == (4, 2, 1, 2)
    assert row["direction"] == "lower" and row["rule"] == "greater"
    assert any("missing score" in n for n in res.notes)
    assert any("ties" in n for n in res.notes)
    s2 = s.assign(corruption="mine", category="custom")
    with pytest.raises(ValueError, match="category 'custom', which has no pass rule"):
        bm.metric_unit_tests(s2, random_seed=0)
    out = bm.metric_unit_tests(s2, rules={"mine": "difference"}, random_seed=0,
                               compare=False, pooled=False)
    assert out.details().iloc[0]["rule"] == "difference"


def test_bad_input_is_named():
    s = _scores().head(10)
    with pytest.raises(ValueError, match=r"lacks column\(s\) \['score_corrupted'\]"):
        bm.metric_unit_tests(s.drop(columns="score_corrupted"))
    with pytest.raises(ValueError, match="'score_original' must be numeric"):
        bm.metric_unit_tests(s.assign(score_original="x"))
    with pytest.raises(ValueError, match=r"infinite value .*pair_id 3"):
        bm.metric_unit_tests(s.assign(score_corrupted=np.where(s.pair_id == 3, np.inf, 0.1)))
    with pytest.raises(ValueError, match="duplicate row"):
        bm.metric_unit_tests(pd.concat([s, s.head(1)]))
    with pytest.raises(ValueError, match=r"direction must be 'higher' or 'lower', got \['up'\]"):
        bm.metric_unit_tests(s, directions={"m1": "up"})
    with pytest.raises(ValueError, match="need metrics="):
        bm.metric_unit_tests(["A man is running"])
    with pytest.raises(ValueError, match="ci_prob"):
        bm.metric_unit_tests(s, ci_prob=1.5)


def _overlap(cands, refs):
    """A toy metric: the share of the candidate's words found in any reference."""
    out = []
    for c, rs in zip(cands, refs, strict=True):
        words = c.lower().rstrip(".").split()
        vocab = {w for r in rs for w in r.lower().rstrip(".").split()}
        out.append(sum(w in vocab for w in words) / len(words))
    return out


def test_from_texts_end_to_end_with_a_callable_metric():
    pytest.importorskip("lemminflect", reason="the generators need the 'text' extra")
    texts = ["A man is playing a guitar.", "A dog is running on the beach.",
             "A woman is cutting an onion with a knife."]
    refs = [["A man plays a guitar.", "A man is playing guitar."],
            ["A dog runs on the beach.", "A dog is running along the sand."],
            ["A woman cuts an onion.", "A woman is slicing an onion with a knife."]]
    res = bm.metric_unit_tests(texts, metrics=[_overlap], references=refs,
                               corruptions=["neg_subj", "double_PP"], random_seed=4)
    tab = res.summary()
    assert set(tab.index.get_level_values("corruption")) == {"neg_subj", "double_PP"}
    # neg_subj adds "there", "no" (not in the references): overlap falls for every text
    assert tab.loc[("pass_rate", "neg_subj", "meaning_altering", "_overlap", "", "2"),
                   "classical"] == 1.0
    assert "extra" and "coverage" in res.extra
    assert any("generator coverage" in n for n in res.notes)
    same = bm.metric_unit_tests(texts, metrics=[_overlap], references=refs,
                                corruptions=["neg_subj", "double_PP"], random_seed=4)
    pd.testing.assert_frame_equal(same.summary(), tab)
    assert res.provenance["random_seed"] == 4


def test_from_pairs_with_reference_table_and_dict():
    pairs = pd.DataFrame({"corruption": ["neg_verb", "neg_verb"], "pair_id": [0, 1],
                          "original": ["A dog runs", "A cat sleeps"],
                          "corrupted": ["A dog does not run", "A cat does not sleep"]})
    refs = pd.DataFrame({"pair_id": [0, 0, 1], "reference": ["A dog runs", "Dogs run",
                                                             "A cat sleeps"]})
    res = bm.metric_unit_tests(pairs, metrics=[_overlap], references=refs, random_seed=0)
    det = res.details()
    assert det.loc[("pass_rate", "neg_verb", "meaning_altering", "_overlap", "", "all"),
                   "n_pairs"] == 2
    res = bm.metric_unit_tests(pairs, metrics=[_overlap], random_seed=0,
                               references={5: [["A dog runs"], ["A cat sleeps"]],
                                           10: [["x"], ["y"]]})
    assert set(res.summary().index.get_level_values("n_refs")) >= {"5", "10", "5->10"}
    with pytest.raises(ValueError, match=r"have no references, e\.g\. pair_id 1"):
        bm.metric_unit_tests(pairs, metrics=[_overlap], references=refs.head(2))
    with pytest.raises(ValueError, match="lacks column"):
        bm.metric_unit_tests(pairs.drop(columns="corrupted"), metrics=[_overlap],
                             references=refs)


def test_save_load_round_trip_and_plots(tmp_path):
    res = bm.metric_unit_tests(_scores(n=20), random_seed=5)
    back = bm.load(res.save(tmp_path / "mutt.nc"))
    pd.testing.assert_frame_equal(back.summary(), res.summary())
    pd.testing.assert_frame_equal(back.details(), res.details())
    assert back.provenance == res.provenance
    assert float(back.extra["pairs"]["score_original"].sum()) == pytest.approx(
        float(res.extra["pairs"]["score_original"].sum()))
    from bayesmeta.unit_tests.plots import plot_refs_effect, plot_unit_tests

    ax = plot_unit_tests(res, n_refs=20)
    assert len(ax.get_yticklabels()) == 3
    ax = plot_refs_effect(res, "det_sub")
    assert ax.get_xlabel() == "number of references"
    with pytest.raises(ValueError, match="n_refs '7' is not in the result"):
        plot_unit_tests(res, n_refs=7)
