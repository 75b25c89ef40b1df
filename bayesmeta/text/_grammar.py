"""A small rule-based grammar of English captions: tokens, coarse tags, chunks, inflection.

The corruption generators of :mod:`bayesmeta.text.corruptions` need to find the subject
noun phrase, the finite verb, prepositional phrases and chunk boundaries of short
descriptive sentences ("A man is playing a guitar on the beach"). No trained tagger is
downloaded: closed word classes (determiners, prepositions, auxiliaries, pronouns) are
listed here, open-class words are looked up in the dictionary that `lemminflect
<https://pypi.org/project/lemminflect/>`_ bundles (which parts of speech a word can have
and how it inflects), and a few positional rules choose between them (after a determiner
a word is nominal, after an auxiliary it is verbal, ...). The rules are made for the
declarative present-tense sentences of image and video captions (SICK, Flickr, MS-COCO,
MSR-Video); a generator that meets a sentence outside them refuses it, it does not guess.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

DETERMINERS = frozenset("""a an the this that these those some several many few each every
another his her their its my our your both all any no one two three four five six seven
eight nine ten eleven twelve twenty hundred dozens numerous various""".split())
INDEFINITE = frozenset({"a", "an"})
NUMBERS = frozenset("""one two three four five six seven eight nine ten eleven twelve
twenty hundred several many few numerous various""".split())
PREPOSITIONS = frozenset("""in on at with by for from into onto over under through across
along near behind beside besides between above below toward towards around down up off
inside outside against past of during without among beneath underneath upon via beyond
within throughout amid amongst atop about after before like""".split())
PARTICLES = frozenset("up down off out away back over around".split())
AUX_BE = frozenset("is are was were am".split())
AUXILIARIES = AUX_BE | frozenset("""be been being has have had does do did can could will
would may might must shall should""".split())
PRONOUNS = frozenset("""he she it they we i you someone somebody nobody everyone everybody
anyone something nothing this""".split())
PLURAL_PRONOUNS = frozenset({"they", "we", "you", "i"})
OBJECT_PRONOUN = {"he": "him", "she": "her", "they": "them", "we": "us", "i": "me",
                  "it": "it", "you": "you", "someone": "someone", "somebody": "somebody"}
CONJUNCTIONS = frozenset("and or but while as because although whereas".split())
RELATIVES = frozenset("who which that whose where".split())
ADVERBS = frozenset("""not n't never very quickly slowly happily carefully outdoors
indoors together also still just only really almost too quietly loudly""".split())
NEGATIONS = frozenset({"not", "n't", "no", "never", "nobody", "nothing", "none"})
PUNCT = re.compile(r"^[^\w\s]+$")
_TOKEN = re.compile(r"\w+(?:[-']\w+)*|'s\b|[^\w\s]")


@dataclass
class Token:
    """One word of a sentence: surface ``text`` and coarse ``tag``.

    Tags: DET, NUM, ADJ, NOUN, PRON, VERB (``form``: Penn tag VB, VBZ, VBP, VBD, VBG, VBN),
    AUX, NEG, PREP, PRT, CONJ, REL, ADV, POS ('s), PUNCT.
    """

    text: str
    tag: str = ""
    form: str = ""
    lemma: str = ""

    @property
    def low(self) -> str:
        return self.text.lower()


@dataclass
class Chunk:
    """A run of tokens: ``kind`` NP, VP, PP (the preposition alone, as a chunker's PP
    chunk) or O (any other single token)."""

    kind: str
    tokens: list[Token] = field(default_factory=list)

    @property
    def text(self) -> str:
        return " ".join(t.text for t in self.tokens)


def tokenize(text: str) -> list[str]:
    """Words and punctuation marks of ``text`` (words with an apostrophe or a hyphen, such
    as possessives, contractions and compounds, kept whole).

    Examples
    --------
    >>> tokenize("A boat's sail, well-reflected.")
    ['A', "boat's", 'sail', ',', 'well-reflected', '.']
    """
    return _TOKEN.findall(text)


def detokenize(words: list[str]) -> str:
    """Join words with single spaces, attaching punctuation and 's to the word before.

    Examples
    --------
    >>> detokenize(["A", "boat", "'s", "sail", ",", "reflected", "."])
    "A boat's sail, reflected."
    """
    out = ""
    for w in words:
        if out and not (PUNCT.match(w) and w not in ("(", "``", "--")) and w != "'s" \
                and not out.endswith("("):
            out += " "
        out += w
    return out


def lemminflect() -> Any:
    """The lemminflect module, or an ImportError with the install hint."""
    try:
        import lemminflect as lm
    except ImportError as err:  # pragma: no cover - exercised without the extra
        raise ImportError("the corruption generators need lemminflect: pip install "
                          "'bayesmeta[text]' (or pip install lemminflect).") from err
    return lm


@lru_cache(maxsize=65536)
def lemmas(word: str) -> dict[str, tuple[str, ...]]:
    """Parts of speech a word can have, with its lemmas (lemminflect's dictionary)."""
    return dict(lemminflect().getAllLemmas(word.lower()))


@lru_cache(maxsize=65536)
def verb_form(word: str) -> tuple[str, str]:
    """(lemma, Penn tag) of ``word`` read as a verb, ("", "") when it is not one."""
    lm = lemminflect()
    low = word.lower()
    cand = lemmas(low).get("VERB") or lemmas(low).get("AUX")
    if not cand:
        return "", ""
    lemma = cand[0]
    if low == lemma and lemma != "be":
        return lemma, "VBP"  # present (or base) form: "run", "cut", "put"
    forms = lm.getAllInflections(lemma, upos="VERB")
    for tag in ("VBG", "VBZ", "VBD", "VBN", "VBP", "VB"):
        if low in forms.get(tag, ()):
            return lemma, tag
    return lemma, ""


def inflect(lemma: str, tag: str) -> str:
    """``lemma`` inflected to the Penn ``tag`` (lemminflect; regular rules when it does not
    know the word)."""
    lm = lemminflect()
    got = lm.getInflection(lemma, tag=tag) or lm.getInflection(lemma, tag=tag, inflect_oov=True)
    return got[0] if got else lemma


def noun_number(word: str) -> str:
    """"plural" or "singular" for a noun (lemminflect's lemma differs for plurals)."""
    low = word.lower()
    lem = lemmas(low).get("NOUN")
    if lem:
        return "singular" if low in lem else "plural"
    if low.endswith("s") and not low.endswith(("ss", "us", "is")):
        return "plural"
    return "singular"


def _open_class(low: str) -> set[str]:
    pos = set(lemmas(low))
    if not pos:
        if low.endswith("ing"):
            return {"VERB"}
        if low.endswith("ly"):
            return {"ADV"}
        return {"NOUN"}
    return pos


def tag(text: str | list[str]) -> list[Token]:
    """Coarse part-of-speech tags for a caption-like sentence.

    Closed classes come from the word lists of this module; an open-class word takes the
    reading its position allows (nominal after a determiner or adjective, verbal after an
    auxiliary or right after the subject), using the parts of speech lemminflect's
    dictionary lists for it.

    Examples
    --------
    >>> [t.tag for t in tag("A man is playing a guitar")]
    ['DET', 'NOUN', 'AUX', 'VERB', 'DET', 'NOUN']
    """
    words = tokenize(text) if isinstance(text, str) else list(text)
    toks = [Token(w) for w in words]
    finite_seen = False
    for i, t in enumerate(toks):
        low = t.low
        prev = toks[i - 1] if i else None
        nxt = words[i + 1].lower() if i + 1 < len(words) else ""
        if PUNCT.match(t.text):
            t.tag = "PUNCT"
        elif low == "'s":
            t.tag = "POS"
        elif low in ("not", "n't"):
            t.tag = "NEG"
        elif low in NUMBERS and (prev is None or prev.tag in ("DET", "PREP", "CONJ")):
            t.tag = "NUM"
        elif (low in DETERMINERS and low not in ("that", "this")) or (
                low in ("that", "this") and nxt and _open_class(nxt) & {"NOUN", "ADJ"}
                and nxt not in AUXILIARIES):
            t.tag = "DET"
        elif low in AUXILIARIES:
            t.tag = "AUX"
            t.lemma, t.form = verb_form(low)
            finite_seen = True
        elif low in PRONOUNS and (prev is None or prev.tag in ("PREP", "CONJ", "PUNCT", "VERB")):
            t.tag = "PRON"
        elif low in RELATIVES:
            t.tag = "REL"
        elif low in CONJUNCTIONS:
            t.tag = "CONJ"
        elif low in PARTICLES and prev is not None and prev.tag == "VERB" and (
                not nxt or PUNCT.match(nxt) or nxt in PREPOSITIONS or low in ("away", "back")):
            t.tag = "PRT"
        elif low in PREPOSITIONS:
            t.tag = "PREP"
        elif low in ADVERBS or (low.endswith("ly") and "ADV" in _open_class(low)
                                and "ADJ" not in _open_class(low)):
            t.tag = "ADV"
        else:
            pos = _open_class(low)
            after_nominal = prev is not None and prev.tag in ("NOUN", "PRON")
            after_det = prev is not None and prev.tag in ("DET", "NUM", "ADJ", "POS")
            after_aux = prev is not None and (prev.tag in ("AUX", "NEG") or (
                prev.tag == "ADV" and i > 1 and toks[i - 2].tag in ("AUX", "NEG")))
            vlemma, vtag = verb_form(low) if "VERB" in pos else ("", "")
            if after_aux and vtag in ("VBG", "VBN", "VB", "VBP", "VBD"):
                t.tag, t.lemma, t.form = "VERB", vlemma, vtag
            elif vtag == "VBG" and not after_det:
                t.tag, t.lemma, t.form = "VERB", vlemma, vtag
            elif after_det:
                nxt_pos = _open_class(nxt) if nxt and not PUNCT.match(nxt) else set()
                if "ADJ" in pos and (nxt_pos & {"NOUN", "ADJ"}) and nxt not in PREPOSITIONS \
                        and nxt not in AUXILIARIES:
                    t.tag = "ADJ"
                elif "NOUN" in pos or "PROPN" in pos:
                    t.tag = "NOUN"
                elif "ADJ" in pos:
                    t.tag = "ADJ"
                elif vtag in ("VBG", "VBN"):
                    t.tag, t.lemma, t.form = "VERB", vlemma, vtag
                else:
                    t.tag = "NOUN"
            elif after_nominal and ("NOUN" in pos) and (
                    nxt in AUXILIARIES or (vtag == "VBP" and prev.tag == "NOUN"
                                           and noun_number(prev.text) == "singular")
                    or (vtag == "VBZ" and prev.tag == "NOUN"
                        and noun_number(prev.text) == "plural")):
                t.tag = "NOUN"  # a noun compound ("panda bear is"), not a verb
            elif after_nominal and not finite_seen and vtag in ("VBZ", "VBP", "VBD"):
                t.tag, t.lemma, t.form = "VERB", vlemma, vtag
                finite_seen = True
            elif prev is not None and prev.tag == "VERB" and vtag == "VBN" and "NOUN" not in pos:
                t.tag, t.lemma, t.form = "VERB", vlemma, vtag
            elif "NOUN" in pos or "PROPN" in pos:
                t.tag = "NOUN"
            elif "ADJ" in pos:
                t.tag = "ADJ"
            elif vtag:
                t.tag, t.lemma, t.form = "VERB", vlemma, vtag
                if vtag in ("VBZ", "VBP", "VBD"):
                    finite_seen = True
            else:
                t.tag = "ADV" if "ADV" in pos else "NOUN"
    return toks


def chunk(tokens: list[Token]) -> list[Chunk]:
    """Group tagged tokens into chunks: NP (determiner, modifiers, nouns, possessives),
    VP (auxiliaries, negation, adverbs between them, verbs, particles), PP (a preposition)
    and O (anything else, one token each).

    Examples
    --------
    >>> [(c.kind, c.text) for c in chunk(tag("A man is slicing garlic"))]
    [('NP', 'A man'), ('VP', 'is slicing'), ('NP', 'garlic')]
    """
    out: list[Chunk] = []
    nominal = ("DET", "NUM", "ADJ", "NOUN", "POS")
    for t in tokens:
        last = out[-1] if out else None
        if t.tag in nominal or t.tag == "PRON":
            if last is not None and last.kind == "NP" and t.tag != "DET" \
                    and last.tokens[-1].tag != "PRON":
                last.tokens.append(t)
            elif last is not None and last.kind == "NP" and t.tag == "DET" \
                    and last.tokens[-1].tag == "POS":
                last.tokens.append(t)
            else:
                out.append(Chunk("NP", [t]))
        elif t.tag in ("AUX", "VERB", "NEG", "PRT") or (
                t.tag == "ADV" and last is not None and last.kind == "VP"):
            if last is not None and last.kind == "VP":
                last.tokens.append(t)
            else:
                out.append(Chunk("VP", [t]))
        elif t.tag == "PREP":
            out.append(Chunk("PP", [t]))
        else:
            out.append(Chunk("O", [t]))
    return out


def split_sentences(text: str) -> list[str]:
    """Sentences of a multi-sentence text (split after . ! ? followed by white space and an
    upper-case letter, a digit or a quote).

    Examples
    --------
    >>> split_sentences("A dog runs. It is happy! Is it?")
    ['A dog runs.', 'It is happy!', 'Is it?']
    """
    parts = re.split(r"(?<=[.!?])\s+(?=[\"'A-Z0-9])", text.strip())
    return [p for p in (s.strip() for s in parts) if p]


def strip_final(words: list[str]) -> tuple[list[str], list[str]]:
    """Split off the sentence-final punctuation marks."""
    k = len(words)
    while k and PUNCT.match(words[k - 1]):
        k -= 1
    return words[:k], words[k:]


def capitalize(words: list[str]) -> list[str]:
    """Upper-case the first letter of the first word."""
    if words:
        words = [words[0][:1].upper() + words[0][1:], *words[1:]]
    return words


def lower_first(words: list[str], keep: frozenset[str] = frozenset({"I"})) -> list[str]:
    """Lower-case the first word unless it is a proper name ("I", or capitalised in
    mid-sentence use: unknown to the dictionary and capitalised)."""
    if not words:
        return words
    w = words[0]
    if w in keep or (w[:1].isupper() and not lemmas(w.lower()) and w.lower() not in
                     DETERMINERS | PRONOUNS | NUMBERS):
        return words
    return [w[:1].lower() + w[1:], *words[1:]]


__all__ = ["Chunk", "Token", "chunk", "detokenize", "inflect", "noun_number",
           "split_sentences", "tag", "tokenize", "verb_form"]
