"""The MS-COCO caption evaluation metrics (pycocoevalcap): PTB tokenisation, BLEU-n, CIDEr
(CIDEr-D, as the package computes it) and METEOR 1.5.

pycocoevalcap tokenises with Stanford's PTBTokenizer (Java) and runs METEOR (and SPICE) in
Java. With a ``java`` executable on the PATH the Java tokenizer is used, exactly as the
paper's code did; without one, :func:`ptb_tokenize` reproduces the PTB rules in Python
(lower-casing, splitting clitics and punctuation, then dropping punctuation as
pycocoevalcap does), the result says so, and METEOR is refused with a clear message.
Tokenised sentences are cached, so scoring many groups calls Java once per new sentence
batch, not once per group.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from typing import Any

import numpy as np

#: pycocoevalcap drops these tokens after PTB tokenisation.
PUNCTUATIONS = frozenset(["''", "'", "``", "`", "-LRB-", "-RRB-", "-LCB-", "-RCB-", ".", "?",
                          "!", ",", ":", "-", "--", "...", ";", "-lrb-", "-rrb-", "-lcb-",
                          "-rcb-"])
_BRACKETS = {"(": "-lrb-", ")": "-rrb-", "{": "-lcb-", "}": "-rcb-", "[": "-lsb-",
             "]": "-rsb-"}
_CACHE: dict[tuple[str, str], str] = {}
_CLITIC = re.compile(r"(?i)\b(\w+)(n't|'s|'re|'ll|'d|'m|'ve|')(?=\s|$)")
_SPLIT = re.compile(r"(?i)\b(can)(not)\b|\b(gon|wan)(na)\b")


def coco() -> Any:
    """The pycocoevalcap package, or an ImportError with the install hint."""
    try:
        import pycocoevalcap
        import pycocoevalcap.bleu.bleu
    except ImportError as err:
        raise ImportError("the MS-COCO metrics need pycocoevalcap: pip install "
                          "'bayesmeta[text]' (or pip install pycocoevalcap).") from err
    return pycocoevalcap


def java_available() -> bool:
    """Whether a ``java`` executable is on the PATH (PTB tokenizer, METEOR, SPICE)."""
    return shutil.which("java") is not None


def _python_ptb(sentence: str) -> str:
    s = sentence.replace("\n", " ").lower()
    s = s.replace('"', " '' ")
    s = re.sub(r"([,;:?!])", r" \1 ", s)
    for bracket, name in _BRACKETS.items():
        s = s.replace(bracket, f" {name} ")
    s = re.sub(r"/(?=\s|$)", " / ", s)
    s = re.sub(r"\.\.\.", " ... ", s)
    s = re.sub(r"(?<=\w)\.(?=\s|$)", " .", s)  # sentence-final or word-final period
    s = re.sub(r"(?<![\w-])-{2,}|-{2,}(?![\w-])", " -- ", s)
    s = _SPLIT.sub(lambda m: " ".join(x for x in m.groups() if x), s)
    s = re.sub(r"(?<=\w)n't\b", " n't", s)
    s = re.sub(r"(?i)(?<=\w)('s|'re|'ll|'d|'m|'ve)\b", r" \1", s)
    s = re.sub(r"(?<=\w)'(?=\s|$)", " '", s)
    s = re.sub(r"(?:(?<=\s)|^)'(?!(?:s|re|ll|d|m|ve)\b)(?=\w)", "` ", s)
    tokens = [t for t in s.split() if t not in PUNCTUATIONS]
    return " ".join(tokens)


#: A line written after every sentence of a batch. Stanford's PTBTokenizer looks past the
#: end of a line (a sentence-final "s." is a period after an upper-case next line, an
#: abbreviation otherwise), so in one batch a sentence's tokens would depend on the next
#: sentence (pycocoevalcap's are); after a lower-case line each sentence is tokenized as
#: if it were alone in the file (checked on the 11,127 MUTT sentences).
_JAVA_SENTINEL = "x"


def _java_ptb(sentences: list[str]) -> list[str]:
    import pycocoevalcap.tokenizer.ptbtokenizer as ptb

    coco()
    folder = os.path.dirname(os.path.abspath(ptb.__file__))
    jar = os.path.join(folder, "stanford-corenlp-3.4.1.jar")
    with tempfile.NamedTemporaryFile("w", delete=False, suffix=".txt",
                                     encoding="utf-8") as fh:
        flat = (s.replace("\n", " ") for s in sentences)
        fh.write("".join(f"{s}\n{_JAVA_SENTINEL}\n" for s in flat))
        name = fh.name
    try:
        out = subprocess.run(["java", "-cp", jar, "edu.stanford.nlp.process.PTBTokenizer",
                              "-preserveLines", "-lowerCase", name], capture_output=True,
                             check=True).stdout.decode("utf-8")
    finally:
        os.remove(name)
    lines = out.split("\n")
    return [" ".join(w for w in line.rstrip().split(" ") if w not in PUNCTUATIONS)
            for line in lines[: 2 * len(sentences): 2]]


def ptb_tokenize(sentences: list[str], *, java: bool | None = None) -> list[str]:
    """Tokenise as pycocoevalcap does (PTB rules, lower case, punctuation dropped), each
    sentence as if alone (pycocoevalcap's one Java call lets a sentence's last token
    depend on the sentence after it; here it does not, so the result is the same in any
    batch, order or process).

    Parameters
    ----------
    sentences : list of str
    java : bool, optional
        Use Stanford's PTBTokenizer through Java (the paper's setting); default: when a
        ``java`` executable is found. ``False`` uses the Python re-implementation.

    Examples
    --------
    >>> ptb_tokenize(["A boat's sail isn't red."], java=False)
    ["a boat 's sail is n't red"]
    """
    use_java = java_available() if java is None else bool(java)
    if use_java and not java_available():
        raise RuntimeError("java=True but no 'java' executable is on the PATH (install a "
                           "JRE, e.g. Debian's default-jre-headless).")
    key = "java" if use_java else "python"
    todo = list(dict.fromkeys(s for s in sentences if (key, s) not in _CACHE))
    if todo:
        done = _java_ptb(todo) if use_java else [_python_ptb(s) for s in todo]
        for s, t in zip(todo, done, strict=True):
            _CACHE[(key, s)] = t
    return [_CACHE[(key, s)] for s in sentences]


def _dicts(candidates: list[str], references: list[list[str]], java: bool | None
           ) -> tuple[dict[int, list[str]], dict[int, list[str]]]:
    flat = [r for refs in references for r in refs]
    tok = ptb_tokenize(list(candidates) + flat, java=java)
    cands, rest = tok[: len(candidates)], tok[len(candidates):]
    gts: dict[int, list[str]] = {}
    k = 0
    for i, refs in enumerate(references):
        gts[i] = rest[k: k + len(refs)]
        k += len(refs)
    res = {i: [c] for i, c in enumerate(cands)}
    return gts, res


def bleu(candidates: list[str], references: list[list[str]], *, n: int = 4,
         java: bool | None = None) -> np.ndarray:
    """pycocoevalcap's sentence BLEU-n ("closest" reference length, its 1e-9 smoothing)."""
    from pycocoevalcap.bleu.bleu import Bleu

    coco()
    gts, res = _dicts(candidates, references, java)
    _, scores = Bleu(n).compute_score(gts, res, verbose=0)
    return np.asarray(scores[n - 1], dtype=float)


def cider(candidates: list[str], references: list[list[str]], *,
          java: bool | None = None) -> np.ndarray:
    """pycocoevalcap's CIDEr (CIDEr-D: clipped, length-penalised, x10). The idf weights
    come from the references of the whole call, so a score depends on the other
    references scored with it, as in the paper's runs (one call per corruption and number
    of references)."""
    from pycocoevalcap.cider.cider import Cider

    coco()
    gts, res = _dicts(candidates, references, java)
    _, scores = Cider().compute_score(gts, res)
    return np.asarray(scores, dtype=float)


def meteor(candidates: list[str], references: list[list[str]], *,
           java: bool | None = None) -> np.ndarray:
    """pycocoevalcap's METEOR 1.5 (Java only)."""
    coco()
    if not java_available() or java is False:
        raise RuntimeError("METEOR runs in Java (pycocoevalcap's meteor-1.5.jar) and no "
                           "'java' executable is on the PATH: install a JRE (Debian: "
                           "default-jre-headless) or leave METEOR out.")
    from pycocoevalcap.meteor.meteor import Meteor

    gts, res = _dicts(candidates, references, True)
    scorer = Meteor()
    try:
        _, scores = scorer.compute_score(gts, res)
    finally:
        scorer.meteor_p.kill()
        scorer.meteor_p.wait()
    return np.asarray(scores, dtype=float)
