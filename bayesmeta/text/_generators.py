"""The corruption generators: one function per transformation, one sentence at a time.

Each generator takes a sentence (without its final punctuation, as tagged tokens) and a
NumPy random generator, and returns the corrupted words or raises :class:`NotApplicable`
with the reason. Never an unchanged or half-transformed sentence: a generator that cannot
find what it needs refuses. The public entry point is :func:`bayesmeta.text.corrupt`.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from importlib import resources

import numpy as np

from bayesmeta.text import _grammar as g
from bayesmeta.text._grammar import Token


class NotApplicable(ValueError):
    """A corruption does not apply to a sentence; the message says why."""


Generator = Callable[[list[Token], np.random.Generator], list[str]]


# ----------------------------------------------------------------------------- lexicons
@lru_cache(maxsize=4)
def lexicon(name: str) -> dict[tuple[str, str], tuple[str, ...]]:
    """A word-pair lexicon shipped with the package (``antonyms`` or ``synonyms``):
    ``{(pos, lemma): replacements}``, read both ways."""
    text = resources.files("bayesmeta.text").joinpath(f"lexicons/{name}.tsv").read_text(
        encoding="utf-8")
    out: dict[tuple[str, str], list[str]] = {}
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        pos, a, b = line.split("\t")
        out.setdefault((pos, a), []).append(b)
        out.setdefault((pos, b), []).append(a)
    return {k: tuple(dict.fromkeys(v)) for k, v in out.items()}


# ----------------------------------------------------------------------------- clause
def _words(toks: list[Token]) -> list[str]:
    return [t.text for t in toks]


def _clause(toks: list[Token]) -> tuple[int, int]:
    """(end of the subject, index of the finite verb or auxiliary) of a declarative
    clause that opens the sentence; NotApplicable when there is none."""
    if not toks or toks[0].tag not in ("DET", "NUM", "ADJ", "NOUN", "PRON"):
        raise NotApplicable("the sentence does not open with a noun phrase subject")
    for i, t in enumerate(toks):
        if t.tag == "AUX" or (t.tag == "VERB" and t.form in ("VBZ", "VBP", "VBD")):
            if i == 0:
                break
            if not any(x.tag in ("NOUN", "PRON") for x in toks[:i]):
                raise NotApplicable("no noun before the verb: the subject was not found")
            if any(x.tag in ("VERB", "REL", "CONJ") for x in toks[:i]):
                raise NotApplicable("the subject holds a clause or coordination this rule "
                                    "does not parse")
            return i, i
        if t.tag in ("VERB", "PUNCT"):
            break
    raise NotApplicable("no finite verb after the subject")


def _negated(toks: list[Token]) -> bool:
    return any(t.low in g.NEGATIONS for t in toks) or (bool(toks) and toks[0].low == "there")


def _subject_number(subj: list[Token]) -> str:
    if any(t.low == "and" for t in subj):
        return "plural"
    heads = [t for t in subj if t.tag in ("NOUN", "PRON")]
    # the head of "a group of people" is "group": the first noun before "of"
    cut = next((k for k, t in enumerate(subj) if t.low == "of"), len(subj))
    first = [t for t in subj[:cut] if t.tag in ("NOUN", "PRON")]
    head = (first or heads)[-1]
    if head.tag == "PRON":
        return "plural" if head.low in g.PLURAL_PRONOUNS else "singular"
    if subj[0].low in g.NUMBERS - {"one"}:
        return "plural"
    return g.noun_number(head.text)


def _be(number: str, past: bool) -> str:
    if past:
        return "were" if number == "plural" else "was"
    return "are" if number == "plural" else "is"


def _match_case(new: str, old: str) -> str:
    if old[:1].isupper():
        return new[:1].upper() + new[1:]
    return new


# ----------------------------------------------------------------------------- meaning altering
def neg_subj(toks: list[Token], rng: np.random.Generator) -> list[str]:
    """Negated subject: "A man is playing a harp" -> "There is no man playing a harp";
    with a simple-tense verb "A dog runs" -> "No dog runs"."""
    if _negated(toks):
        raise NotApplicable("the sentence is already negated")
    end, v = _clause(toks)
    subj = toks[:end]
    if subj[0].tag == "PRON" or all(t.tag == "PRON" for t in subj):
        raise NotApplicable("the subject is a pronoun")
    body = subj[1:] if subj[0].tag in ("DET", "NUM") else subj
    if subj[0].tag == "DET" and subj[0].low not in g.INDEFINITE | {"the", "some", "this",
                                                                   "that", "these", "those"}:
        if subj[0].low in g.NUMBERS:
            body = subj[1:]
        else:
            raise NotApplicable(f"the subject's determiner {subj[0].text!r} does not negate "
                                "as 'no'")
    if not body:
        raise NotApplicable("the subject has no noun after its determiner")
    verb = toks[v]
    rest = _words(toks[v + 1:])
    noun = [*g.lower_first([body[0].text]), *_words(body[1:])]
    if verb.low in g.AUX_BE and rest:
        return ["There", verb.low, "no", *noun, *rest]
    if verb.tag == "VERB" or verb.low in ("has", "have", "had"):
        return ["No", *noun, verb.text, *rest]
    raise NotApplicable(f"the verb group {verb.text!r} does not take a negated subject here")


def neg_verb(toks: list[Token], rng: np.random.Generator) -> list[str]:
    """Negated action: "A jet is flying" -> "A jet is not flying"; "A dog runs" -> "A dog
    does not run"."""
    if _negated(toks):
        raise NotApplicable("the sentence is already negated")
    _, v = _clause(toks)
    verb = toks[v]
    words = _words(toks)
    if verb.tag == "AUX":
        if v + 1 >= len(toks):
            raise NotApplicable("the auxiliary ends the sentence")
        return [*words[: v + 1], "not", *words[v + 1:]]
    if not verb.lemma:
        raise NotApplicable(f"the verb {verb.text!r} has no known lemma")
    do = {"VBZ": "does", "VBP": "do", "VBD": "did"}[verb.form]
    return [*words[:v], do, "not", verb.lemma, *words[v + 1:]]


def _replace_from(toks: list[Token], rng: np.random.Generator, name: str) -> list[str]:
    lex = lexicon(name)
    options: list[tuple[int, str]] = []
    for i, t in enumerate(toks):
        low = t.low
        if t.tag == "VERB" and t.lemma:
            options += [(i, g.inflect(alt, t.form) if t.form else alt)
                        for alt in lex.get(("VERB", t.lemma), ())]
        if t.tag == "NOUN":
            plural = g.noun_number(low) == "plural"
            lem = (g.lemmas(low).get("NOUN") or (low,))[0]
            options += [(i, g.inflect(alt, "NNS") if plural else alt)
                        for alt in lex.get(("NOUN", lem), ())]
        if t.tag == "PRON":
            options += [(i, alt) for alt in lex.get(("NOUN", low), ())]
        if t.tag in ("ADJ", "ADV", "NOUN", "PREP") or (t.tag == "VERB" and t.form == "VBN"):
            options += [(i, alt) for pos in ("ADJ", "ADV") for alt in lex.get((pos, low), ())]
    options = [(i, w) for i, w in dict.fromkeys(options) if w.lower() != toks[i].low]
    if not options:
        raise NotApplicable(f"no word of the sentence is in the {name} lexicon")
    i, new = options[int(rng.integers(len(options)))]
    words = _words(toks)
    words[i] = _match_case(new, words[i])
    if i > 0 and words[i - 1].lower() in ("a", "an"):
        words[i - 1] = _match_case(_article(new), words[i - 1])
    return words


def _article(word: str) -> str:
    low = word.lower()
    if low.startswith(("uni", "use", "one", "eu", "u.")):
        return "a"
    if low.startswith(("hour", "honest", "honor", "heir")) or low[:1] in "aeiou":
        return "an"
    return "a"


def sem_opps(toks: list[Token], rng: np.random.Generator) -> list[str]:
    """Antonym replacement: one word replaced by its opposite from the shipped lexicon
    ("a dog with short hair" -> "a dog with long hair"); the word is drawn with ``rng``
    when several qualify."""
    return _replace_from(toks, rng, "antonyms")


# ----------------------------------------------------------------------------- meaning preserving
_NO_PASSIVE = frozenset({"be", "have", "become", "seem", "resemble", "lack", "cost",
                         "weigh", "stand", "sit", "lie", "go", "come", "walk", "run"})


def passive(toks: list[Token], rng: np.random.Generator) -> list[str]:
    """Active to passive: "A man is cutting a potato" -> "A potato is being cut by a man";
    "A man cuts a potato" -> "A potato is cut by a man"."""
    if any(t.low in ("being", "by") for t in toks):
        raise NotApplicable("the sentence is already passive or has a by-phrase")
    end, v = _clause(toks)
    subj = toks[:end]
    k = v
    progressive = False
    past = False
    if toks[v].low in g.AUX_BE:
        k = v + 1
        while k < len(toks) and toks[k].tag == "ADV":
            k += 1
        if k >= len(toks) or toks[k].tag != "VERB" or toks[k].form != "VBG":
            raise NotApplicable("no progressive verb after 'is/are'")
        progressive = True
        past = toks[v].low in ("was", "were")
    elif toks[v].tag == "AUX":
        raise NotApplicable(f"the auxiliary {toks[v].text!r} is not handled by this rule")
    else:
        past = toks[v].form == "VBD"
    verb = toks[k]
    if not verb.lemma or verb.lemma in _NO_PASSIVE:
        raise NotApplicable(f"the verb {verb.text!r} does not passivise here")
    j = k + 1
    particle = []
    if j < len(toks) and toks[j].tag == "PRT":
        particle = [toks[j].text]
        j += 1
    if j >= len(toks) or toks[j].tag not in ("DET", "NUM", "ADJ", "NOUN", "PRON"):
        raise NotApplicable(f"the verb {verb.text!r} has no direct object")
    o = j
    while o < len(toks) and toks[o].tag in ("DET", "NUM", "ADJ", "NOUN", "POS"):
        o += 1
    if toks[j].tag == "PRON":
        o = j + 1
    while o + 1 < len(toks) and toks[o].low == "of" and toks[o + 1].tag in (
            "DET", "NUM", "ADJ", "NOUN"):
        o += 1
        while o < len(toks) and toks[o].tag in ("DET", "NUM", "ADJ", "NOUN", "POS"):
            o += 1
    obj = toks[j:o]
    if not any(t.tag in ("NOUN", "PRON") for t in obj):
        raise NotApplicable("the object has no noun")
    if obj[0].low in ("himself", "herself", "itself", "themselves", "each", "one"):
        raise NotApplicable("a reflexive or reciprocal object does not passivise")
    obj_words = _words(obj)
    if obj[0].tag == "PRON":
        obj_words = [{"him": "he", "her": "she", "them": "they", "us": "we", "me": "I"}.get(
            obj[0].low, obj[0].text)]
    agent = [g.OBJECT_PRONOUN.get(subj[0].low, subj[0].text), *_words(subj[1:])] \
        if subj[0].tag == "PRON" else _words(subj)
    be = _be(_subject_number(obj) if obj[0].tag != "PRON" else (
        "plural" if obj_words[0].lower() in g.PLURAL_PRONOUNS else "singular"), past)
    vbn = g.inflect(verb.lemma, "VBN")
    return [*g.capitalize(g.lower_first(obj_words)), be, *(["being"] if progressive else []),
            vbn, *particle, "by", *g.lower_first(agent), *_words(toks[o:])]


def near_syms(toks: list[Token], rng: np.random.Generator) -> list[str]:
    """Synonymous phrase: one word replaced by a near-synonym from the shipped lexicon ("A
    dog is eating a doll" -> "A dog is biting a doll" in SICK; here e.g. "A man is cutting
    a tomato" -> "A man is slicing a tomato")."""
    return _replace_from(toks, rng, "synonyms")


def det_sub(toks: list[Token], rng: np.random.Generator) -> list[str]:
    """Determiner substitution: the first article swapped, "a"/"an" -> "the" and "the" ->
    "a"/"an" ("A cat is eating food" -> "The cat is eating food")."""
    words = _words(toks)
    for i, t in enumerate(toks):
        if t.low in ("a", "an", "the") and t.tag == "DET":
            if t.low == "the":
                nxt = words[i + 1] if i + 1 < len(words) else ""
                if not nxt or (toks[i + 1].tag == "NOUN" and g.noun_number(nxt) == "plural"):
                    continue  # "the dogs" has no singular indefinite twin
                words[i] = _match_case(_article(nxt), t.text)
            else:
                words[i] = _match_case("the", t.text)
            return words
    raise NotApplicable("no article ('a', 'an', 'the') to substitute")


# ----------------------------------------------------------------------------- fluency
def _pnps(toks: list[Token]) -> list[tuple[int, int]]:
    """Spans (start, end) of prepositional phrases: a preposition and the noun phrase after
    it."""
    spans = []
    i = 0
    while i < len(toks):
        if toks[i].tag == "PREP":
            j = i + 1
            while j < len(toks) and toks[j].tag in ("DET", "NUM", "ADJ", "NOUN", "POS", "PRON"):
                j += 1
                if toks[j - 1].tag == "PRON":
                    break
            if j > i + 1 and any(t.tag in ("NOUN", "PRON") for t in toks[i + 1:j]):
                spans.append((i, j))
                i = j
                continue
        i += 1
    return spans


def double_PP(toks: list[Token], rng: np.random.Generator) -> list[str]:
    """Duplicate prepositional phrase: every PP repeated ("A boy walks at night" -> "A boy
    walks at night at night"), as the paper's code does."""
    spans = _pnps(toks)
    if not spans:
        raise NotApplicable("no prepositional phrase")
    words = _words(toks)
    out: list[str] = []
    last = 0
    for a, b in spans:
        out += words[last:b] + words[a:b]
        last = b
    return out + words[last:]


def remove_prep(toks: list[Token], rng: np.random.Generator) -> list[str]:
    """Remove the head from PP: the preposition of every PP dropped ("A man danced in
    costume" -> "A man danced costume"), as the paper's code does."""
    spans = _pnps(toks)
    if not spans:
        raise NotApplicable("no prepositional phrase")
    heads = {a for a, _ in spans}
    return [t.text for i, t in enumerate(toks) if i not in heads]


def swap_chunks(toks: list[Token], rng: np.random.Generator) -> list[str]:
    """Re-order chunked phrases: the chunks (NP, VP, PP, other tokens) shuffled with
    ``rng`` until their order differs ("A woman is slicing garlic" -> "Is slicing garlic a
    woman"), case kept as in the paper's output."""
    chunks = [c.text for c in g.chunk(toks)]
    if len(set(chunks)) < 2:
        raise NotApplicable("fewer than two distinct chunks to re-order")
    for _ in range(100):
        order = rng.permutation(len(chunks))
        new = [chunks[k] for k in order]
        if new != chunks:
            return " ".join(new).split(" ")
    raise NotApplicable("no re-ordering differs from the original")  # pragma: no cover


_FLIP = {"is": "are", "are": "is", "was": "were", "were": "was", "has": "have",
         "have": "has", "does": "do", "do": "does", "am": "are"}


def sv_disagreement(toks: list[Token], rng: np.random.Generator) -> list[str]:
    """Subject-verb disagreement: the finite verb takes the other number ("A man is
    playing" -> "A man are playing"; "A dog runs" -> "A dog run"), a fluency perturbation
    of paper 002."""
    for i, t in enumerate(toks):
        if t.tag == "AUX" and t.low in _FLIP:
            words = _words(toks)
            words[i] = _match_case(_FLIP[t.low], t.text)
            return words
        if t.tag == "AUX":
            raise NotApplicable(f"the modal {t.text!r} does not agree in number")
        if t.tag == "VERB" and t.form in ("VBZ", "VBP") and t.lemma:
            words = _words(toks)
            words[i] = _match_case(g.inflect(t.lemma, "VBP" if t.form == "VBZ" else "VBZ"),
                                   t.text)
            if words[i].lower() == t.low:
                raise NotApplicable(f"the verb {t.text!r} has one form for both numbers")
            return words
        if t.tag == "VERB" and t.form == "VBD":
            raise NotApplicable(f"the past-tense verb {t.text!r} does not agree in number")
    raise NotApplicable("no finite verb")


GENERATORS: dict[str, Generator] = {
    "neg_subj": neg_subj, "neg_verb": neg_verb, "sem_opps": sem_opps,
    "passive": passive, "near_syms": near_syms, "det_sub": det_sub,
    "double_PP": double_PP, "remove_prep": remove_prep, "swap_chunks": swap_chunks,
    "sv_disagreement": sv_disagreement,
}
