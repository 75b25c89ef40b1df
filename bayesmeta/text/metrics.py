"""Metric adapters: lexical metrics from PyPI behind one calling convention.

A metric is any callable ``metric(candidates, references) -> scores``: ``candidates`` a
list of n strings, ``references`` a list of n lists of reference strings, ``scores`` n
floats. :class:`Metric` wraps one with its name and direction (higher or lower is
better); :func:`get_metric` builds the built-in ones by name:

===========  ==========================================  =========  ===================
name         implementation                              direction  needs
===========  ==========================================  =========  ===================
bleu         sacrebleu ``BLEU(effective_order=True)``     higher     sacrebleu
             ``.sentence_score``
chrf         sacrebleu ``CHRF().sentence_score``          higher     sacrebleu
ter          sacrebleu ``TER().sentence_score``           lower      sacrebleu
rouge1/2/L   rouge-score F-measure, max over references   higher     rouge-score
coco_bleu4   pycocoevalcap BLEU-4 (the paper's "BLEU")    higher     pycocoevalcap
cider        pycocoevalcap CIDEr(-D) (the paper's)        higher     pycocoevalcap
meteor       pycocoevalcap METEOR 1.5                     higher     pycocoevalcap, Java
===========  ==========================================  =========  ===================

Nothing is imported until a metric is called (``pip install 'bayesmeta[text]'``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bayesmeta.text import _coco

Scorer = Callable[[list[str], list[list[str]]], Any]


def _need(module: str, pip: str) -> Any:
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as err:
        raise ImportError(f"this metric needs {pip}: pip install 'bayesmeta[text]' (or pip "
                          f"install {pip}).") from err


@dataclass(frozen=True)
class Metric:
    """A metric with its name and direction.

    Parameters
    ----------
    name : str
        Label in result tables.
    func : callable
        ``func(candidates, references) -> scores`` (n candidates, n lists of references).
    direction : {"higher", "lower"}
        Whether higher or lower scores mean better text (TER: lower).
    corpus : bool
        The scores of a call depend on the whole call (CIDEr's idf weights): the unit
        tests then score each corruption and number of references in its own call, as the
        paper did.
    note : str
        Said in the result (e.g. which tokenizer ran).

    Examples
    --------
    >>> from bayesmeta.text.metrics import Metric
    >>> overlap = Metric("overlap", lambda c, r: [len(set(x.split()) & set(r[0][0].split()))
    ...                                           for x in c])
    >>> overlap(["a b c", "a"], [["a b"], ["a b"]]).tolist()
    [2.0, 1.0]
    """

    name: str
    func: Scorer
    direction: str = "higher"
    corpus: bool = False
    note: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if self.direction not in ("higher", "lower"):
            raise ValueError(f"direction of metric {self.name!r} must be 'higher' or "
                             f"'lower', got {self.direction!r}.")

    def __call__(self, candidates: Sequence[str], references: Sequence[Sequence[str]]
                 ) -> np.ndarray:
        cands = [str(c) for c in candidates]
        refs = [[str(r) for r in rs] for rs in references]
        if len(cands) != len(refs):
            raise ValueError(f"metric {self.name!r}: {len(cands)} candidates but "
                             f"{len(refs)} reference lists.")
        empty = [i for i, rs in enumerate(refs) if not rs]
        if empty:
            raise ValueError(f"metric {self.name!r}: candidate {empty[0]} has no reference.")
        if not cands:
            return np.zeros(0)
        out = np.asarray(self.func(cands, refs), dtype=float).reshape(-1)
        if out.shape != (len(cands),):
            raise ValueError(f"metric {self.name!r} returned {out.size} scores for "
                             f"{len(cands)} candidates.")
        return out


# ----------------------------------------------------------------------------- sacrebleu
def sentence_bleu(candidates: list[str], references: list[list[str]]) -> np.ndarray:
    """sacrebleu's sentence BLEU (effective order, exponential smoothing), 0-100."""
    sb = _need("sacrebleu", "sacrebleu")
    scorer = sb.metrics.BLEU(effective_order=True)
    return np.array([scorer.sentence_score(c, r).score for c, r in
                     zip(candidates, references, strict=True)])


def sentence_chrf(candidates: list[str], references: list[list[str]]) -> np.ndarray:
    """sacrebleu's sentence chrF (character 6-grams, beta 2), 0-100."""
    sb = _need("sacrebleu", "sacrebleu")
    scorer = sb.metrics.CHRF()
    return np.array([scorer.sentence_score(c, r).score for c, r in
                     zip(candidates, references, strict=True)])


def sentence_ter(candidates: list[str], references: list[list[str]]) -> np.ndarray:
    """sacrebleu's sentence TER (edits per reference word x 100; lower is better)."""
    sb = _need("sacrebleu", "sacrebleu")
    scorer = sb.metrics.TER()
    return np.array([scorer.sentence_score(c, r).score for c, r in
                     zip(candidates, references, strict=True)])


def _rouge(kind: str) -> Scorer:
    def score(candidates: list[str], references: list[list[str]]) -> np.ndarray:
        rs = _need("rouge_score.rouge_scorer", "rouge-score")
        scorer = rs.RougeScorer([kind], use_stemmer=True)
        return np.array([scorer.score_multi(r, c)[kind].fmeasure for c, r in
                         zip(candidates, references, strict=True)])

    score.__name__ = f"rouge_{kind}"
    score.__doc__ = (f"rouge-score's {kind} F-measure (Porter stemmer), the best over the "
                     "references (``score_multi``).")
    return score


# ----------------------------------------------------------------------------- registry
def _coco_note() -> str:
    if _coco.java_available():
        return "pycocoevalcap with Stanford's PTBTokenizer (Java)"
    return ("pycocoevalcap with bayesmeta's Python re-implementation of the PTB tokenizer "
            "(no Java found)")


def get_metric(name: str | Metric | Scorer, *, direction: str | None = None) -> Metric:
    """A :class:`Metric` from a built-in name, a Metric, or any callable.

    Parameters
    ----------
    name : str, Metric or callable
        A built-in name (``bleu``, ``chrf``, ``ter``, ``rouge1``, ``rouge2``, ``rougeL``,
        ``coco_bleu4`` (alias ``BLEU``), ``cider`` (``CIDEr``), ``meteor`` (``METEOR``)) or
        a callable ``f(candidates, references) -> scores`` (named after ``f.__name__``).
    direction : {"higher", "lower"}, optional
        Overrides the direction (default: the built-in's; "higher" for a callable).

    Raises
    ------
    ValueError
        For an unknown name (listing the known ones).
    RuntimeError
        For METEOR without Java.

    Examples
    --------
    >>> from bayesmeta.text.metrics import get_metric
    >>> get_metric("ter").direction
    'lower'
    """
    if isinstance(name, Metric):
        return name if direction is None else Metric(name.name, name.func, direction,
                                                     name.corpus, name.note)
    if callable(name) and not isinstance(name, str):
        label = getattr(name, "__name__", type(name).__name__)
        return Metric(label, name, direction or "higher")
    if not isinstance(name, str):
        raise TypeError(f"a metric is a name or a callable, got {type(name).__name__}.")
    key = {"BLEU": "coco_bleu4", "CIDEr": "cider", "METEOR": "meteor", "chrF": "chrf",
           "TER": "ter", "rougel": "rougeL", "ROUGE_L": "rougeL"}.get(name, name)
    if key == "meteor" and not _coco.java_available():
        raise RuntimeError("METEOR is Java-only (pycocoevalcap's meteor-1.5.jar) and no "
                           "'java' executable is on the PATH: install a JRE (Debian: "
                           "default-jre-headless) or leave METEOR out; BLEU and CIDEr run "
                           "without Java.")
    builtin: dict[str, tuple[str, Scorer, str, bool, str]] = {
        "bleu": ("bleu", sentence_bleu, "higher", False, "sacrebleu sentence BLEU"),
        "chrf": ("chrf", sentence_chrf, "higher", False, "sacrebleu sentence chrF"),
        "ter": ("ter", sentence_ter, "lower", False, "sacrebleu sentence TER"),
        "rouge1": ("rouge1", _rouge("rouge1"), "higher", False, "rouge-score"),
        "rouge2": ("rouge2", _rouge("rouge2"), "higher", False, "rouge-score"),
        "rougeL": ("rougeL", _rouge("rougeL"), "higher", False, "rouge-score"),
        "coco_bleu4": ("BLEU", _coco.bleu, "higher", False, _coco_note()),
        "cider": ("CIDEr", _coco.cider, "higher", True, _coco_note()),
        "meteor": ("METEOR", _coco.meteor, "higher", False, "pycocoevalcap (Java)"),
    }
    if key not in builtin:
        raise ValueError(f"unknown metric {name!r}; built-in: {', '.join(builtin)} (or pass "
                         "a callable metric(candidates, references) -> scores).")
    label, func, dirn, corpus, note = builtin[key]
    return Metric(label, func, direction or dirn, corpus, note)


__all__ = ["Metric", "get_metric", "sentence_bleu", "sentence_chrf", "sentence_ter"]
