"""The report section "LLM judges against the human panel" (issue 23 item 7).

Reference: bm.alt_test called directly (epsilon 0.2, the paper's value for experts; the same
scoring, grouping, seed and resamples), on the same annotations, or, for ratings with judges
added by bm.add_judges, on annotations built independently here from the same labels as the
authors' JSON layout (``<item>__<system>__<trait>`` ids) and read with bm.read_annotations.
Every number of the section's verdict table must equal it to 1e-12. Without judges the
section is skipped with the reason."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import bayesmeta as bm

TOL = 1e-12
SEED = 7
N_RES = 50


def _annotations(text: bool = False) -> tuple[dict, dict]:
    """Three annotators and two judges on 45 instances: numeric labels 0-2, or the same as
    the categories "x", "y", "z" (``text``)."""
    rng = np.random.default_rng(3)
    truth = rng.integers(0, 3, 45)
    noisy = lambda p: np.where(rng.random(45) < p, rng.integers(0, 3, 45), truth)  # noqa: E731
    code = (lambda v: "xyz"[int(v)]) if text else int
    human = {h: {f"i{k}": code(v) for k, v in enumerate(noisy(p))}
             for h, p in (("a", 0.2), ("b", 0.3), ("c", 0.4))}
    llm = {"good": {f"i{k}": code(v) for k, v in enumerate(noisy(0.15))},
           "poor": {f"i{k}": code(v) for k, v in enumerate(noisy(0.8))}}
    return human, llm


def _check(section, ref, bayes_ref=None):
    tab = section.output.tables[0].frame
    s, d = ref.summary(), ref.details()
    for judge in ("good", "poor"):
        w, r = ("winning_rate", judge, ""), ("advantage_probability", judge, "")
        assert abs(tab.loc[judge, "winning_rate"] - s.loc[w, "classical"]) < TOL
        assert bool(tab.loc[judge, "passes"]) == bool(d.loc[w, "passes"])
        for col, ref_col in (("rho", "classical"), ("rho_low", "classical_low"),
                             ("rho_high", "classical_high")):
            assert abs(tab.loc[judge, col] - s.loc[r, ref_col]) < TOL
        if bayes_ref is not None:
            bs, bd = bayes_ref.summary(), bayes_ref.details()
            assert abs(tab.loc[judge, "prob_pass"] - bd.loc[w, "prob_pass"]) < TOL
            for col, ref_col in (("rho_mean", "mean"), ("rho_hdi_low", "hdi_low"),
                                 ("rho_hdi_high", "hdi_high")):
                assert abs(tab.loc[judge, col] - bs.loc[r, ref_col]) < TOL


def test_section_on_annotations_equals_alt_test():
    """Categorical labels: scoring accuracy."""
    human, llm = _annotations(text=True)
    ds = bm.read_annotations(human, llm)
    rep = bm.report(ds, sections=["data", "judges"], random_seed=SEED, bayes="fast",
                    resampling={"n_resamples": N_RES}, progress=False)
    sec = rep.section("judges")
    assert sec.status == "ok", sec.error
    opts = dict(epsilon=0.2, scoring="accuracy", resampling={"n_resamples": N_RES},
                random_seed=SEED)
    ref = bm.alt_test(bm.read_annotations(human, llm), **opts)
    bref = bm.alt_test(bm.read_annotations(human, llm), estimator="bayes", **opts)
    _check(sec, ref, bref)
    # P(rho_A > rho_B) of the best two judges, quoted in the reading
    p = float(bref.details().loc[("advantage_difference", "good", "poor"), "prob_greater"])
    assert f"P(rho of good > rho of poor) = {p:.2f}" in sec.output.reading
    assert "epsilon = 0.2" in sec.output.tables[0].notes[0]
    assert any("LLM judges against the human panel" in f.text
               for f in sec.output.findings if f.kind == "raters")
    assert "LLM judges against the human panel" in rep.html()


def test_section_bayes_off_has_classical_only():
    """Numeric labels: scoring neg_rmse (said on the page)."""
    human, llm = _annotations()
    rep = bm.report(bm.read_annotations(human, llm), sections=["judges"], random_seed=SEED,
                    resampling={"n_resamples": N_RES}, progress=False)
    sec = rep.section("judges")
    assert sec.status == "ok", sec.error
    assert "prob_pass" not in sec.output.tables[0].frame.columns
    assert "Scoring: neg_rmse" in sec.output.tables[0].notes[0]
    ref = bm.alt_test(bm.read_annotations(human, llm), epsilon=0.2, scoring="neg_rmse",
                      resampling={"n_resamples": N_RES}, random_seed=SEED)
    _check(sec, ref)


def test_section_on_ratings_with_judges_equals_alt_test_on_json_layout():
    ds = bm.datasets.simulated(n_systems=3, n_items=12).drop_vars(
        ["true_loading", "true_threshold"])  # simulation truths on rater
    r = ds["rating"].transpose("item", "system", "trait", "rater")
    rng = np.random.default_rng(5)
    human: dict = {str(h): {} for h in r["rater"].values}
    llm: dict = {"good": {}, "poor": {}}
    for i in r["item"].values:
        for s in r["system"].values:
            for t in r["trait"].values:
                key = f"{i}__{s}__{t}"
                vals = r.sel(item=i, system=s, trait=t).values
                for h, v in zip(human, vals, strict=True):
                    human[h][key] = float(v)
                llm["good"][key] = float(np.clip(round(np.mean(vals)), 1, 5))
                llm["poor"][key] = float(rng.integers(1, 6))
    ann = bm.read_annotations(human, llm)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        joined = bm.add_judges(ds, ann)
    rep = bm.report(joined, sections=["judges"], random_seed=SEED, bayes="fast",
                    resampling={"n_resamples": N_RES}, progress=False)
    sec = rep.section("judges")
    assert sec.status == "ok", sec.error
    opts = dict(epsilon=0.2, scoring="neg_rmse", group="__",
                resampling={"n_resamples": N_RES}, random_seed=SEED)
    _check(sec, bm.alt_test(ann, **opts), bm.alt_test(ann, estimator="bayes", **opts))
    # the ordinal CFA is of the human panel: the judges (here "good", "poor") are left out
    # of its factor model instead of failing on their names
    cfa_sec = bm.report(joined, sections=["cfa"], random_seed=SEED,
                        progress=False).section("cfa")
    assert cfa_sec.status == "ok", cfa_sec.error
    text = cfa_sec.output.tables[0].frame.to_string()
    assert "Rater.1" in text and "good" not in text and "poor" not in text


@pytest.mark.parametrize("kind", ["ratings", "no_judge", "one_human"])
def test_section_skipped_without_judges(kind):
    if kind == "ratings":
        ds, why = bm.datasets.simulated(n_systems=3, n_items=10), "no LLM judges"
    else:
        human, llm = _annotations()
        if kind == "no_judge":
            ds = bm.read_annotations(human, llm)
            ds = ds.assign_coords(is_judge=("rater", np.zeros(ds.sizes["rater"], bool)))
            why = "no rater has is_judge"
        else:
            ds = bm.read_annotations({"a": human["a"]}, llm)
            why = "at least 2 human raters"
    rep = bm.report(ds, sections=["judges"], random_seed=SEED,
                    resampling={"n_resamples": N_RES}, progress=False)
    sec = rep.section("judges")
    assert sec.status == "skipped"
    assert why in sec.reason


def test_summeval_with_judges_equals_alt_test_on_authors_files():
    """SummEval + bm.add_judges (the shared data): the section's winning rates and rho equal
    bm.alt_test on the authors' JSON files (neg_rmse, epsilon 0.2, texts as units)."""
    from bayesmeta.data.datasets import data_home

    home = data_home()
    folder = None if home is None else home / "alttest" / "summeval"
    if folder is None or not (folder / "llm_annotations.json").is_file():
        pytest.skip("alttest/summeval not found (set BAYESMETA_DATA).")
    ann = bm.read_annotations(folder / "human_annotations.json",
                              folder / "llm_annotations.json")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        joined = bm.add_judges(bm.datasets.summeval(), ann)
    rep = bm.report(joined, sections=["judges"], random_seed=SEED,
                    resampling={"n_resamples": 20}, progress=False)
    sec = rep.section("judges")
    assert sec.status == "ok", sec.error
    tab = sec.output.tables[0].frame
    ref = bm.alt_test(ann, epsilon=0.2, scoring="neg_rmse", group="__",
                      resampling={"n_resamples": 0})
    s = ref.summary()
    judges = [str(r) for r, j in zip(ann["rater"].values, ann["is_judge"].values,
                                     strict=True) if j]
    assert list(tab.index) == judges
    for judge in judges:
        assert abs(tab.loc[judge, "winning_rate"]
                   - s.loc[("winning_rate", judge, ""), "classical"]) < TOL
        assert abs(tab.loc[judge, "rho"]
                   - s.loc[("advantage_probability", judge, ""), "classical"]) < TOL


def test_section_passes_the_report_options_to_alt_test(monkeypatch):
    """ci_prob, resampling (all its fields), random_seed reach every alt_test call; bayes
    adds the estimator="bayes" call."""
    import bayesmeta.judges as judges_pkg

    seen = []
    real = judges_pkg.alt_test

    def spy(data, **kwargs):
        seen.append(kwargs)
        return real(data, **kwargs)

    monkeypatch.setattr(judges_pkg, "alt_test", spy)
    human, llm = _annotations(text=True)
    given = {"n_resamples": 20, "n_permutations": 19}
    rep = bm.report(bm.read_annotations(human, llm), sections=["judges"], ci_prob=0.8,
                    random_seed=5, resampling=given, bayes="fast", progress=False)
    assert rep.section("judges").status == "ok"
    assert [k.get("estimator", "bootstrap") for k in seen] == ["bootstrap", "bayes"]
    for k in seen:
        assert k["ci_prob"] == 0.8 and k["random_seed"] == 5 and k["epsilon"] == 0.2
        opts = k["resampling"]
        assert (opts.n_resamples, opts.n_permutations) == (20, 19)
