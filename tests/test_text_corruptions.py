"""Corruption generators of paper 004 (MUTT): hand-written sentences they must transform
(exact expected output) or refuse (with a reason), determinism, coverage, and agreement
with SICK's own transformed sentences."""

from __future__ import annotations

import os
import re

import pandas as pd
import pytest

import bayesmeta as bm
from bayesmeta.data.datasets import data_home
from bayesmeta.text import CATEGORIES, corrupt, coverage

pytest.importorskip("lemminflect", reason="the generators need the 'text' extra (lemminflect)")


def one(text: str, kind: str, seed: int = 0) -> str | None:
    out = corrupt([text], kind, random_seed=seed)
    return out["corrupted"].iloc[0]


def reason(text: str, kind: str) -> str:
    out = corrupt([text], kind, random_seed=0)
    assert not out["applied"].iloc[0]
    assert out["corrupted"].iloc[0] is None
    return out["reason"].iloc[0]


# ----------------------------------------------------------------------------- applies
# Expected outputs written by hand from the paper's Tables 1-2 patterns.
APPLIES = [
    ("neg_subj", "A man is playing a harp", "There is no man playing a harp"),
    ("neg_subj", "Two dogs are running through the grass.",
     "There are no dogs running through the grass."),
    ("neg_subj", "A dog runs on the beach.", "No dog runs on the beach."),
    ("neg_verb", "A jet is flying", "A jet is not flying"),
    ("neg_verb", "A dog runs on the beach.", "A dog does not run on the beach."),
    ("neg_verb", "Dogs run in the park", "Dogs do not run in the park"),
    ("neg_verb", "The panda bear is lying on the logs", "The panda bear is not lying on the logs"),
    ("passive", "A man is cutting a potato", "A potato is being cut by a man"),
    ("passive", "The man cuts the rope.", "The rope is cut by the man."),
    ("passive", "He is kicking a ball.", "A ball is being kicked by him."),
    ("passive", "Two men are carrying boxes", "Boxes are being carried by two men"),
    ("passive", "A woman is peeling a piece of fruit",
     "A piece of fruit is being peeled by a woman"),
    ("det_sub", "A cat is eating food", "The cat is eating food"),
    ("det_sub", "The man is riding an elephant", "A man is riding an elephant"),
    ("det_sub", "The elephant is walking", "An elephant is walking"),
    ("det_sub", "Someone is falling off a horse", "Someone is falling off the horse"),
    ("double_PP", "A boy walks at night", "A boy walks at night at night"),
    ("double_PP", "The man is playing with a skull",
     "The man is playing with a skull with a skull"),
    ("remove_prep", "A man danced in costume", "A man danced costume"),
    ("remove_prep", "A man is cutting a rope with a sword", "A man is cutting a rope a sword"),
    ("sv_disagreement", "A man is playing a guitar", "A man are playing a guitar"),
    ("sv_disagreement", "Two dogs are playing", "Two dogs is playing"),
    ("sv_disagreement", "A dog runs on the beach.", "A dog run on the beach."),
    ("sv_disagreement", "The dogs run.", "The dogs runs."),
    ("sem_opps", "A man is sitting", "A woman is sitting"),  # the draw picks "man"
]


@pytest.mark.parametrize("kind, text, expected", APPLIES,
                         ids=[f"{k}:{t[:24]}" for k, t, _ in APPLIES])
def test_generator_applies(kind, text, expected):
    if kind == "sem_opps":
        # two candidates (man -> woman, sitting -> standing): the seed picks one of them
        got = {one(text, kind, seed) for seed in range(20)}
        assert got == {"A woman is sitting", "A man is standing"}
        return
    assert one(text, kind) == expected


def test_antonym_and_synonym_keep_inflection_and_article():
    assert one("The men are laughing", "sem_opps", 3) in {"The women are laughing",
                                                          "The men are crying"}
    assert one("A dog with short hair", "sem_opps") == "A dog with long hair" or \
        one("A dog with short hair", "sem_opps") == "A cat with short hair"
    got = {one("A man is slicing an onion", "near_syms", s) for s in range(20)}
    assert got == {"A guy is slicing an onion", "A man is cutting an onion"}
    # the article follows the new word: "an" before a vowel sound
    assert one("A big dog is here", "near_syms", 1) in {"A large dog is here"}


def test_swap_chunks_permutes_the_chunks_and_keeps_final_punctuation():
    text = "A woman is slicing garlic."
    outs = {one(text, "swap_chunks", s) for s in range(30)}
    assert text not in outs and len(outs) > 1
    for out in outs:
        assert out.endswith(".")
        assert sorted(out[:-1].split()) == sorted(text[:-1].split())
    assert "is slicing garlic A woman." in outs or "garlic is slicing A woman." in outs


def test_sentence_reorder_permutes_sentences():
    text = "The sun is shining. A dog is running. Kids play."
    out = one(text, "sentence_reorder")
    assert out != text
    assert sorted(re.split(r"(?<=\.) ", out)) == sorted(re.split(r"(?<=\.) ", text))


# ----------------------------------------------------------------------------- refuses
REFUSES = [
    ("neg_subj", "There is no man playing", "already negated"),
    ("neg_subj", "Someone is typing", "pronoun"),
    ("neg_subj", "Playing in the park", "noun phrase subject"),
    ("neg_verb", "A dog is not barking", "already negated"),
    ("neg_verb", "Dogs", "no finite verb"),
    ("passive", "A jet is flying", "direct object"),
    ("passive", "A potato is being cut by a man", "already passive"),
    ("passive", "A dog is running", "does not passivise"),
    ("det_sub", "Someone is typing", "no article"),
    ("double_PP", "A man is playing a harp", "no prepositional phrase"),
    ("remove_prep", "A jet is flying", "no prepositional phrase"),
    ("sem_opps", "A jet is flying", "antonyms lexicon"),
    ("near_syms", "A jet is flying", "synonyms lexicon"),
    ("swap_chunks", "Dogs", "fewer than two"),
    ("sv_disagreement", "A dog can swim", "modal"),
    ("sv_disagreement", "A man danced", "past-tense"),
    ("sentence_reorder", "A dog is running.", "single sentence"),
    ("sentence_reorder", "Go. Go.", "identical"),
]


@pytest.mark.parametrize("kind, text, why", REFUSES, ids=[f"{k}:{t[:20]}" for k, t, _ in REFUSES])
def test_generator_refuses_with_a_reason(kind, text, why):
    assert why in reason(text, kind)


def test_empty_text_is_refused_and_bad_input_named():
    out = corrupt(["", "A man is running"], "neg_verb", random_seed=0)
    assert out["applied"].tolist() == [False, True]
    assert out["reason"].iloc[0] == "empty text"
    with pytest.raises(TypeError, match=r"texts\[1\] is float"):
        corrupt(["a", float("nan")], "neg_verb")
    with pytest.raises(ValueError, match="unknown corruption 'negation'"):
        corrupt(["a"], "negation")


# ----------------------------------------------------------------------------- contract
def test_never_unchanged_and_deterministic_given_the_seed():
    texts = ["A man is playing a guitar on the beach.", "Two dogs are running in a field",
             "A woman is slicing an onion with a knife", "The boy jumps into the water.",
             "A girl in a red dress is dancing. Her friend is watching. Music plays."]
    a = corrupt(texts, random_seed=3)
    b = corrupt(list(reversed(texts)), random_seed=3)
    applied = a[a["applied"]]
    assert len(applied) > 35
    norm = applied["corrupted"].str.lower().str.replace(r"[^\w\s]", "", regex=True)
    orig = applied["original"].str.lower().str.replace(r"[^\w\s]", "", regex=True)
    assert (norm != orig).all()
    # a text's corruption does not depend on the other texts of the call
    key = ["original", "corruption"]
    pd.testing.assert_frame_equal(
        a.set_index(key)[["corrupted", "reason"]].sort_index(),
        b.set_index(key)[["corrupted", "reason"]].sort_index())
    assert a.attrs["random_seed"] == 3
    drawn = corrupt(texts[:1], "swap_chunks")
    assert isinstance(drawn.attrs["random_seed"], int)
    again = corrupt(texts[:1], "swap_chunks", random_seed=drawn.attrs["random_seed"])
    assert again["corrupted"].tolist() == drawn["corrupted"].tolist()


def test_categories_aliases_and_coverage():
    out = corrupt(pd.Series(["A man is cutting a potato", "A dog"], index=["x", "y"]),
                  ["active_to_passive", "meaning_altering"], random_seed=0)
    assert list(dict.fromkeys(out["corruption"])) == ["passive", "neg_subj", "neg_verb",
                                                      "sem_opps"]
    assert set(out["text_id"]) == {"x", "y"}
    cov = coverage(out)
    assert cov.loc["passive", "coverage"] == 0.5
    assert cov.loc["neg_verb", "top_reason"] == "no finite verb after the subject"
    assert set(CATEGORIES.values()) == {"meaning_altering", "meaning_preserving", "fluency",
                                        "coherence"}
    assert bm.corrupt is corrupt


# ----------------------------------------------------------------------------- SICK
def _sick() -> pd.DataFrame:
    home = data_home()
    path = None if home is None else home / "mutt" / "sick_corruptions.csv"
    if path is None or not path.is_file():
        if os.environ.get("BAYESMETA_REQUIRE_DATA", "") not in ("", "0", "false", "False"):
            pytest.fail(f"BAYESMETA_REQUIRE_DATA is set but {path} is missing")
        pytest.skip("mutt/sick_corruptions.csv not found (set BAYESMETA_DATA)")
    return pd.read_csv(path)


def _norm(s: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"[^\w\s]", " ", str(s).lower())).strip()


# Exact-match rates of our output with SICK's own transformed sentence, measured on the
# SICK originals of sick_corruptions.csv (seed 0). They are regression values: the rules
# differ from SICK's annotators by design where SICK changes other words too (e.g. SICK's
# determiner substitutions change the 2nd article in 29% of pairs, its negated subjects
# often shorten the subject: "There is no dog playing" for "A cluster of four brown dogs
# are playing"). Rates are printed by vignettes/paper004_mutt.py.
SICK_EXACT = {"det_sub": (150, 106), "neg_subj": (543, 428), "neg_verb": (339, 272),
              "passive": (304, 171)}


@pytest.mark.data
@pytest.mark.parametrize("kind", list(SICK_EXACT))
def test_exact_match_with_sicks_own_transformations(kind):
    sick = _sick()
    d = sick[sick["corruption"] == kind].reset_index(drop=True)
    out = corrupt(d["sentence"], kind, random_seed=0)
    match = sum(c is not None and _norm(c) == _norm(r)
                for c, r in zip(out["corrupted"], d["corrupted"], strict=True))
    n, expected = SICK_EXACT[kind]
    assert len(d) == n
    assert match == expected
    assert out["applied"].mean() > 0.85  # the rules cover most of SICK's sentences
