"""Metric adapters against the packages' own entry points, the Python PTB tokenizer against
Stanford's (Java), and the messages for a missing extra or a missing Java."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest

from bayesmeta.data.datasets import data_home
from bayesmeta.text import _coco
from bayesmeta.text.metrics import Metric, get_metric

CANDS = ["A man is playing a guitar.", "There is no man playing a guitar",
         "a guitar is being played by a man", "Two dogs run in a park."]
REFS = [["A man plays the guitar.", "A man is playing a guitar on stage."],
        ["A man is playing guitar.", "Someone plays a guitar."],
        ["The man is playing the guitar.", "A guitar player performs."],
        ["Dogs are running in the park.", "Two dogs play on the grass.", "A dog runs."]]


def test_sacrebleu_adapters_equal_sacrebleus_sentence_functions():
    sb = pytest.importorskip("sacrebleu", reason="needs the 'text' extra (sacrebleu)")
    for name, ref in (("bleu", sb.sentence_bleu), ("chrf", sb.sentence_chrf),
                      ("ter", sb.sentence_ter)):
        got = get_metric(name)(CANDS, REFS)
        want = [ref(c, r).score for c, r in zip(CANDS, REFS, strict=True)]
        np.testing.assert_allclose(got, want, rtol=1e-12)
    assert get_metric("ter").direction == "lower"
    assert get_metric("chrF").name == "chrf"


def test_rouge_adapter_is_the_best_f_over_references():
    rs = pytest.importorskip("rouge_score.rouge_scorer", reason="needs 'text' (rouge-score)")
    scorer = rs.RougeScorer(["rougeL"], use_stemmer=True)
    want = [max(scorer.score(r, c)["rougeL"].fmeasure for r in refs)
            for c, refs in zip(CANDS, REFS, strict=True)]
    np.testing.assert_allclose(get_metric("rougeL")(CANDS, REFS), want, rtol=1e-12)


def _coco_reference(cands, refs, scorer):
    """pycocoevalcap run as the paper's code ran it: its own PTBTokenizer (Java)."""
    from pycocoevalcap.tokenizer.ptbtokenizer import PTBTokenizer

    gts = {i: [{"caption": r} for r in rs] for i, rs in enumerate(refs)}
    res = {i: [{"caption": c}] for i, c in enumerate(cands)}
    tok = PTBTokenizer()
    return scorer.compute_score(tok.tokenize(gts), tok.tokenize(res))


@pytest.mark.skipif(not _coco.java_available(), reason="needs Java for pycocoevalcap's "
                    "own tokenizer")
def test_coco_bleu_and_cider_equal_pycocoevalcap_run_directly():
    pytest.importorskip("pycocoevalcap.bleu.bleu", reason="needs 'text' (pycocoevalcap)")
    from pycocoevalcap.bleu.bleu import Bleu
    from pycocoevalcap.cider.cider import Cider

    _, bleu = _coco_reference(CANDS, REFS, Bleu(4))
    np.testing.assert_allclose(get_metric("BLEU")(CANDS, REFS), bleu[3], rtol=1e-12)
    _, cider = _coco_reference(CANDS, REFS, Cider())
    np.testing.assert_allclose(get_metric("CIDEr")(CANDS, REFS), cider, rtol=1e-12)
    assert get_metric("CIDEr").corpus  # idf from the call's references
    assert "Java" in get_metric("CIDEr").note


def test_python_ptb_tokenizer_on_hand_written_cases():
    got = _coco.ptb_tokenize(['A boat\'s sail isn\'t "red" (really), is it?',
                              "They cannot go -- gonna stay.", "The dogs' bowls"], java=False)
    assert got == ["a boat 's sail is n't red really is it", "they can not go gon na stay",
                   "the dogs bowls"]


@pytest.mark.data
@pytest.mark.skipif(not _coco.java_available(), reason="needs Java for the PTBTokenizer")
def test_python_ptb_tokenizer_agrees_with_stanfords_on_the_mutt_sentences():
    home = data_home()
    folder = None if home is None else home / "mutt"
    if folder is None or not (folder / "references.csv").is_file():
        if os.environ.get("BAYESMETA_REQUIRE_DATA", "") not in ("", "0", "false", "False"):
            pytest.fail("BAYESMETA_REQUIRE_DATA is set but mutt/references.csv is missing")
        pytest.skip("mutt/ data not found (set BAYESMETA_DATA)")
    pytest.importorskip("pycocoevalcap.bleu.bleu", reason="needs 'text' (pycocoevalcap)")
    pairs = pd.read_csv(folder / "pairs.csv")
    refs = pd.read_csv(folder / "references.csv")
    sents = list(dict.fromkeys([*pairs["original"], *pairs["corrupted"], *refs["reference"]]))
    java = _coco.ptb_tokenize(sents, java=True)
    py = _coco.ptb_tokenize(sents, java=False)
    differ = sum(a != b for a, b in zip(java, py, strict=True))
    # 7 of 11,127 differ (run-together "...", "?They", "vs.", "part.1", "chili,s.": noisy
    # references; "chili,s." is Stanford's abbreviation "s." with no upper-case line after
    # it, i.e. the sentence tokenized alone)
    assert len(sents) == 11127
    assert differ <= 7


def test_java_ptb_tokens_of_a_sentence_do_not_depend_on_the_sentence_after_it():
    """Stanford's tokenizer looks past the end of a line: in one pycocoevalcap batch a
    final "s." is split before an upper-case sentence and kept before a lower-case one.
    Each sentence must come out as it does alone."""
    pytest.importorskip("pycocoevalcap.bleu.bleu", reason="needs 'text' (pycocoevalcap)")
    if not _coco.java_available():
        pytest.skip("no java executable")
    s = "The onions and green chili,s."
    alone = _coco._java_ptb([s])[0]
    assert alone == "the onions and green chili s."
    assert _coco._java_ptb([s, "A man sings."])[0] == alone
    assert _coco._java_ptb([s, "a man sings."])[0] == alone


def test_callable_metric_and_checks():
    m = get_metric(lambda c, r: [float(len(x)) for x in c])
    assert m.name == "<lambda>" and m.direction == "higher"
    np.testing.assert_array_equal(m(["ab", "abc"], [["x"], ["y"]]), [2.0, 3.0])
    low = get_metric(m, direction="lower")
    assert low.direction == "lower"
    with pytest.raises(ValueError, match="2 candidates but 1 reference lists"):
        m(["a", "b"], [["x"]])
    with pytest.raises(ValueError, match="candidate 1 has no reference"):
        m(["a", "b"], [["x"], []])
    with pytest.raises(ValueError, match="returned 1 scores for 2"):
        Metric("bad", lambda c, r: [1.0])(["a", "b"], [["x"], ["y"]])
    with pytest.raises(ValueError, match="direction of metric 'x'"):
        Metric("x", len, direction="up")
    with pytest.raises(ValueError, match="unknown metric 'bert'"):
        get_metric("bert")


def test_meteor_without_java_is_refused_with_the_reason(monkeypatch):
    monkeypatch.setattr(_coco, "java_available", lambda: False)
    with pytest.raises(RuntimeError, match="METEOR is Java-only"):
        get_metric("METEOR")
    note = get_metric("CIDEr").note
    assert "Python re-implementation of the PTB tokenizer" in note
