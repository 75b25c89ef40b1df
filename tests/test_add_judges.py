"""Judges as raters (issue 23 item 4): bm.add_judges joins LLM judges' labels to a dataset's
ratings, so agreement and the rater model see them beside the humans.

References: the shared SummEval alt-test files (/alttest/summeval) against the expert ratings
of bm.datasets.summeval(): the annotators e0, e1, e2 there are Expert.1-3 here, so after the
join on the instance ids every human label must equal the expert rating at the joined
(system, item, trait) exactly; agreement of the experts alone is unchanged by the join."""

from __future__ import annotations

import json
import os
import warnings

import numpy as np
import pytest

import bayesmeta as bm
from bayesmeta.data.datasets import data_home

TRAITS = {"coherence": "COH", "consistency": "CON", "fluency": "FLU", "relevance": "REL"}


def _alttest_summeval():
    home = data_home()
    folder = None if home is None else home / "alttest" / "summeval"
    if folder is None or not (folder / "llm_annotations.json").is_file():
        if os.environ.get("BAYESMETA_REQUIRE_DATA", "") not in ("", "0", "false", "False"):
            pytest.fail("BAYESMETA_REQUIRE_DATA is set but alttest/summeval is missing.")
        pytest.skip("alttest/summeval not found (set BAYESMETA_DATA).")
    return folder


@pytest.fixture(scope="module")
def joined():
    folder = _alttest_summeval()
    try:
        data = bm.datasets.summeval()
    except Exception as err:  # the SummEval ratings are shared data too
        pytest.skip(f"SummEval not available: {err}")
    ann = bm.read_annotations(folder / "human_annotations.json",
                              folder / "llm_annotations.json")
    with open(folder / "human_annotations.json") as fh:
        human = json.load(fh)
    with open(folder / "llm_annotations.json") as fh:
        llm = json.load(fh)
    return data, ann, human, llm, bm.add_judges(data, ann)


def test_summeval_join_places_every_label(joined):
    data, _, human, llm, out = joined
    assert [str(r) for r in out["rater"].values] == [
        "Expert.1", "Expert.2", "Expert.3", *llm]
    assert out["is_judge"].values.tolist() == [False] * 3 + [True] * len(llm)
    r = out["rating"].transpose("system", "item", "rater", "trait")
    pos = {d: {str(v): k for k, v in enumerate(r[d].values)} for d in r.dims}

    def at(rater, labels):
        keys = [k.rsplit("__", 2) for k in labels]
        idx = (np.array([pos["system"][s] for _, s, _ in keys]),
               np.array([pos["item"][i] for i, _, _ in keys]), pos["rater"][rater],
               np.array([pos["trait"][TRAITS[t]] for _, _, t in keys]))
        return r.values[idx], np.array(list(labels.values()), dtype=float)

    for judge, labels in llm.items():
        got, want = at(judge, labels)
        np.testing.assert_array_equal(got, want)
    # the alt-test's annotators are the experts: the join key is right
    for annot, expert in zip(human, ("Expert.1", "Expert.2", "Expert.3"), strict=True):
        got, want = at(expert, human[annot])
        np.testing.assert_array_equal(got, want)
    # the experts' ratings are untouched
    np.testing.assert_array_equal(
        r.sel(rater=["Expert.1", "Expert.2", "Expert.3"]).transpose(*data["rating"].dims),
        data["rating"])
    # 16 of the 17 systems were judged: the 17th is missing for every judge, and counted
    judged = {k.rsplit("__", 2)[1] for k in next(iter(llm.values()))}
    unjudged = [s for s in map(str, data["system"].values) if s not in judged]
    assert len(unjudged) == 1
    assert np.isnan(r.sel(system=unjudged[0], rater=list(llm))).all()
    missing = json.loads(out.attrs["judges_missing"])
    assert missing == {j: data.sizes["item"] * data.sizes["trait"] for j in llm}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bm.validate(out)


def test_agreement_and_rater_model_see_the_judges(joined):
    data, _, _, llm, out = joined
    experts = ["Expert.1", "Expert.2", "Expert.3"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        before = bm.agreement(data, traits=["COH"]).summary()["classical"]
        only = bm.agreement(out, traits=["COH"], raters=experts).summary()["classical"]
        everyone = bm.agreement(out, traits=["COH"]).summary()["classical"]
    np.testing.assert_allclose(only, before, rtol=1e-12)
    assert not np.allclose(everyone, before)
    from bayesmeta.raters import model as rm

    design = rm.rater_design(out, traits=["COH"])
    assert design.raters == [*experts, *llm]
    m = rm.build_rater_model(design)
    assert list(m.coords["rater"]) == [*experts, *llm]
    assert m.named_vars_to_dims["tau"] == ("trait", "rater", "cut")
    logp = m.point_logps(m.initial_point())
    assert all(np.isfinite(v) for v in logp.values())


def test_non_overlap_and_bad_input_are_named(joined):
    data, ann, _, _, _ = joined
    sub = data.sel(system=[s for s in data["system"].values if str(s) != "M11"])
    with pytest.raises(ValueError, match=r"non-overlapping: systems \['M11'\]"):
        bm.add_judges(sub, ann)
    with pytest.raises(ValueError, match=r"'claude'.*judges are"):
        bm.add_judges(data, ann, judges=["claude"])
    with pytest.raises(ValueError, match=r"already raters"):
        bm.add_judges(bm.add_judges(data, ann, judges=["gpt-4o"]), ann, judges=["gpt-4o"])
    with pytest.raises(ValueError, match=r"'coherence'.*matches no"):
        bm.add_judges(data.sel(trait=["CON", "FLU", "REL"]), ann)


def _small():
    full = bm.datasets.simulated(n_systems=2, n_items=3, random_seed=0)
    key0 = f"{full.item.values[0]}__{full.system.values[0]}__{full.trait.values[0]}"
    with pytest.raises(ValueError, match=r"'true_loading'.*drop them first"):
        bm.add_judges(full, bm.read_annotations({"h": {key0: 1}}, {"j": {key0: 2}}))
    data = full.drop_vars(["true_loading", "true_threshold"])
    s, i, t = (str(data[d].values[0]) for d in ("system", "item", "trait"))
    return data, f"{i}__{s}__{t}"


def test_small_errors():
    data, key = _small()
    with pytest.raises(ValueError, match="not integers on the data's scale"):
        bm.add_judges(data, bm.read_annotations({"h": {key: 1}}, {"j": {key: 9}}))
    with pytest.raises(ValueError, match="do not split"):
        bm.add_judges(data, bm.read_annotations({"h": {"x": 1}}, {"j": {"x": 2}}))
    with pytest.raises(ValueError, match="labels are text"):
        bm.add_judges(data, bm.read_annotations({"h": {key: "a"}}, {"j": {key: "b"}}))
    with pytest.raises(ValueError, match="no judge"):
        bm.add_judges(data, bm.read_annotations({"h": {key: 1}}))
    with pytest.raises(ValueError, match="'rating'"):
        bm.add_judges(data.drop_vars("rating"), bm.read_annotations({"h": {key: 1}},
                                                                    {"j": {key: 2}}))
    out = bm.add_judges(data, bm.read_annotations({"h": {key: 1}}, {"j": {key: 2}}),
                        id_split="__")
    assert int(np.isfinite(out["rating"].sel(rater="j")).sum()) == 1


@pytest.mark.slow
def test_rater_bias_reports_each_judge(joined):
    """A small seeded fit (4 systems x 6 items, coherence): one severity row per judge with
    an HDI and the is_judge flag; mistral-v03, whose mean coherence rating on the full data is
    above every expert's by more than 0.5 points (the classical reference), is more lenient
    (lower severity) than every expert."""
    _, _, _, llm, out = joined
    r = out["rating"].sel(trait="COH").mean(("system", "item"))
    assert all(float(r.sel(rater="mistral-v03")) > float(r.sel(rater=e)) + 0.5
               for e in ("Expert.1", "Expert.2", "Expert.3"))
    small = out.isel(system=slice(0, 4), item=slice(0, 6)).sel(trait=["COH"])
    res = bm.rater_bias(small, random_seed=1, sampling="fast")
    sev = res.summary().xs("severity", level="estimand")
    det = res.details().xs("severity", level="estimand")
    for judge in llm:
        row = sev.loc[(judge, "COH", "")]
        assert row["hdi_low"] < row["mean"] < row["hdi_high"]
        assert bool(det.loc[(judge, "COH", ""), "is_judge"])
    assert not bool(det.loc[("Expert.1", "COH", ""), "is_judge"])
    for e in ("Expert.1", "Expert.2", "Expert.3"):
        assert sev.loc[("mistral-v03", "COH", ""), "mean"] < sev.loc[(e, "COH", ""), "mean"]


def test_a_panel_coordinate_is_kept_and_the_judges_form_their_own_panel():
    """Raters' panels survive the join (the report compares panels), judges in one panel."""
    data = bm.datasets.simulated(n_systems=2, n_items=3, random_seed=0).drop_vars(
        ["true_loading", "true_threshold"])
    raters = [str(r) for r in data["rater"].values]
    data = data.assign_coords(panel=("rater", ["a"] + ["b"] * (len(raters) - 1)))
    s0, i0, t0 = (str(data[d].values[0]) for d in ("system", "item", "trait"))
    ann = bm.read_annotations({"h": {f"{i0}__{s0}__{t0}": 3}},
                              {"gpt": {f"{i0}__{s0}__{t0}": 4}, "llama": {f"{i0}__{s0}__{t0}": 2}})
    out = bm.add_judges(data, ann)
    assert out["panel"].values.tolist() == ["a"] + ["b"] * (len(raters) - 1) + ["LLM judges"] * 2
    assert "panel" not in bm.add_judges(data.drop_vars("panel"), ann).coords
