r"""Rule-based sentence corruptions for metric unit tests (paper 004, MUTT).

Boag et al. (2016) test a metric the way one tests code: corrupt a reference sentence in a
known way and check that the metric notices. Tables 1-2 of the paper list nine
transformations in three categories; paper 002 (Sheng et al.) adds two perturbations of
coherence and fluency:

=================  ==================  ===================================================
name               category            example
=================  ==================  ===================================================
neg_subj           meaning_altering    A man is playing a harp -> There is no man playing a
                                       harp
neg_verb           meaning_altering    A jet is flying -> A jet is not flying
sem_opps           meaning_altering    a dog with short hair -> a dog with long hair
passive            meaning_preserving  A man is cutting a potato -> A potato is being cut by
                                       a man
near_syms          meaning_preserving  A man is cutting a tomato -> A man is slicing a tomato
det_sub            meaning_preserving  A cat is eating food -> The cat is eating food
double_PP          fluency             A boy walks at night -> A boy walks at night at night
remove_prep        fluency             A man danced in costume -> A man danced costume
swap_chunks        fluency             A woman is slicing garlic -> is slicing garlic A woman
sv_disagreement    fluency             A man is playing -> A man are playing
sentence_reorder   coherence           the sentences of a multi-sentence text permuted
=================  ==================  ===================================================

Every generator is rule-based (closed word lists, two small lexicons shipped with the
package, lemminflect's bundled dictionary for parts of speech and inflection) and
deterministic given a seed. A generator that does not apply to a text says so, with the
reason; it never returns the text unchanged or half transformed.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd

from bayesmeta.options import resolve_seed

#: Category of every corruption: the pass rule of :func:`bayesmeta.metric_unit_tests`
#: follows it (meaning_preserving: within tolerance; the others: original scores higher).
CATEGORIES: dict[str, str] = {
    "neg_subj": "meaning_altering",
    "neg_verb": "meaning_altering",
    "sem_opps": "meaning_altering",
    "passive": "meaning_preserving",
    "near_syms": "meaning_preserving",
    "det_sub": "meaning_preserving",
    "double_PP": "fluency",
    "remove_prep": "fluency",
    "swap_chunks": "fluency",
    "sv_disagreement": "fluency",
    "sentence_reorder": "coherence",
}
#: The paper's name of each corruption (Tables 4-6; the last two are paper 002's).
LABELS: dict[str, str] = {
    "neg_subj": "1. Negated Subject",
    "neg_verb": "2. Negated Action",
    "sem_opps": "3. Antonym Replacement",
    "passive": "4. Active-to-Passive",
    "near_syms": "5. Synonymous Phrases",
    "det_sub": "6. DT Substitution",
    "double_PP": "7. Duplicate PP",
    "remove_prep": "8. Remove Head From PP",
    "swap_chunks": "9. Re-order Chunks",
    "sv_disagreement": "subject-verb disagreement (paper 002)",
    "sentence_reorder": "sentence reorder (paper 002)",
}
ALIASES: dict[str, str] = {
    "negated_subject": "neg_subj", "negated_action": "neg_verb", "antonym": "sem_opps",
    "antonym_replacement": "sem_opps", "active_to_passive": "passive",
    "synonym": "near_syms", "synonymous_phrase": "near_syms",
    "determiner_substitution": "det_sub", "duplicate_pp": "double_PP",
    "double_pp": "double_PP", "remove_head_from_pp": "remove_prep",
    "reorder_chunks": "swap_chunks", "subject_verb_disagreement": "sv_disagreement",
}


def resolve_kinds(kind: str | Sequence[str] | None) -> list[str]:
    """Canonical corruption names from a name, an alias, a category, "all" or a list.

    Raises
    ------
    ValueError
        Naming the unknown corruption and listing the known ones.
    """
    if kind is None or kind == "all":
        return list(CATEGORIES)
    names = [kind] if isinstance(kind, str) else list(kind)
    out: list[str] = []
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f"kind must be a corruption name or a list of them, got "
                            f"{type(name).__name__}.")
        if name in CATEGORIES.values():
            out += [k for k, c in CATEGORIES.items() if c == name]
            continue
        canon = name if name in CATEGORIES else ALIASES.get(name.lower())
        if canon is None:
            raise ValueError(f"unknown corruption {name!r}; known: {', '.join(CATEGORIES)} "
                             f"(or a category: {', '.join(dict.fromkeys(CATEGORIES.values()))}"
                             ").")
        out.append(canon)
    return list(dict.fromkeys(out))


def _texts(texts: str | Iterable[str] | pd.Series) -> tuple[list[str], list[Any]]:
    if isinstance(texts, str):
        return [texts], [0]
    if isinstance(texts, pd.Series):
        values, index = list(texts.values), list(texts.index)
    else:
        values = list(texts)
        index = list(range(len(values)))
    for i, v in zip(index, values, strict=True):
        if not isinstance(v, str):
            raise TypeError(f"texts[{i!r}] is {type(v).__name__} ({v!r}), not a string.")
    return values, index


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"[^\w\s]", " ", text.lower())).strip()


@lru_cache(maxsize=20000)
def _parsed(sentence: str) -> tuple[list[str], list[str]]:
    from bayesmeta.text import _grammar as g

    return g.strip_final(g.tokenize(sentence))


@lru_cache(maxsize=20000)
def _tagged(words: tuple[str, ...]) -> tuple[Any, ...]:
    """Tags of a sentence's words, computed once for all corruptions (generators do not
    modify the tokens)."""
    from bayesmeta.text import _grammar as g

    return tuple(g.tag(list(words)))


def _apply(text: str, kind: str, rng: np.random.Generator) -> str:
    from bayesmeta.text import _generators as gen
    from bayesmeta.text import _grammar as g

    if not text.strip():
        raise gen.NotApplicable("empty text")
    sentences = g.split_sentences(text)
    if kind == "sentence_reorder":
        if len(sentences) < 2:
            raise gen.NotApplicable("a single sentence: nothing to re-order")
        if len(set(sentences)) < 2:
            raise gen.NotApplicable("all sentences are identical")
        for _ in range(100):
            order = rng.permutation(len(sentences))
            if [sentences[k] for k in order] != sentences:
                return " ".join(sentences[k] for k in order)
        raise gen.NotApplicable("no order differs from the original")  # pragma: no cover
    func = gen.GENERATORS[kind]
    reasons = []
    for k in rng.permutation(len(sentences)) if len(sentences) > 1 else [0]:
        words, final = _parsed(sentences[k])
        try:
            new = func(list(_tagged(tuple(words))), rng)
        except gen.NotApplicable as err:
            reasons.append(str(err))
            continue
        out = list(sentences)
        out[k] = g.detokenize([*new, *final])
        return " ".join(out)
    raise gen.NotApplicable(reasons[0] if len(reasons) == 1 else
                            f"no sentence qualifies ({reasons[0]})")


def corrupt(
    texts: str | Iterable[str] | pd.Series,
    kind: str | Sequence[str] | None = "all",
    *,
    random_seed: int | None = None,
    progress: bool = False,
) -> pd.DataFrame:
    r"""Corrupt texts in known ways, for metric unit tests (paper 004, Tables 1-2).

    Parameters
    ----------
    texts : str, sequence of str or pandas.Series
        Reference-like sentences (or multi-sentence texts: sentence-level corruptions
        change one sentence, drawn with the seed among those that qualify).
    kind : str or list of str
        Corruption names (see :data:`CATEGORIES`), a category ("meaning_altering",
        "meaning_preserving", "fluency", "coherence") or "all".
    random_seed : int, optional
        Seeds the choices (which word, which sentence, which chunk order); drawn and
        recorded in ``attrs["random_seed"]`` when omitted. Each text's generator is seeded
        from ``(random_seed, text, kind)``, so a text's corruption does not depend on the
        other texts in the call.
    progress : bool
        Show a progress bar (tqdm) over texts.

    Returns
    -------
    pandas.DataFrame
        One row per text and corruption: ``text_id`` (position, or the Series' index),
        ``corruption``, ``category``, ``original``, ``corrupted`` (None where it does not
        apply), ``applied`` and ``reason`` (why not, "" where applied). ``attrs`` hold
        ``random_seed``; :func:`coverage` summarises it.

    Notes
    -----
    The rules are written for declarative present-tense captions (SICK, Flickr, MS-COCO,
    MSR-Video): ``neg_subj`` rewrites "Det N is V-ing ..." as "There is no N V-ing ..."
    (and "Det N V-s" as "No N V-s"), ``neg_verb`` inserts "not" after the first auxiliary
    (do-support for simple tenses), ``passive`` moves the direct object of a transitive
    verb to the front, ``double_PP`` / ``remove_prep`` repeat every prepositional phrase /
    drop every preposition as the paper's code does, ``swap_chunks`` shuffles NP, VP and
    PP chunks. Parts of speech come from lemminflect's dictionary (the ``text`` extra).

    References
    ----------
    Boag, Campos, Saenko, Rumshisky (2016). MUTT: Metric Unit TesTing for Language
    Generation Tasks. ACL. Tables 1-2. Sheng et al. (2024), perturbations of Sec. 5.

    Examples
    --------
    >>> import bayesmeta as bm
    >>> out = bm.corrupt(["A man is playing a guitar", "Dogs"], kind="neg_verb",
    ...                  random_seed=0)
    >>> out["corrupted"].tolist()
    ['A man is not playing a guitar', None]
    >>> out["reason"].iloc[1]
    'no finite verb after the subject'
    """
    values, index = _texts(texts)
    kinds = resolve_kinds(kind)
    seed = resolve_seed(random_seed)
    from bayesmeta.text import _generators as gen

    rows = []
    iterator: Iterable[tuple[Any, str]] = zip(index, values, strict=True)
    if progress:
        from tqdm.auto import tqdm

        iterator = tqdm(iterator, total=len(values), desc="corrupt")
    done: dict[tuple[str, str], tuple[str | None, bool, str]] = {}
    for tid, text in iterator:
        for name in kinds:
            key = (text, name)
            if key not in done:  # a text's corruption depends on the text and seed only
                rng = np.random.default_rng([seed, zlib.crc32(text.encode("utf-8")),
                                             list(CATEGORIES).index(name)])
                try:
                    new = _apply(text, name, rng)
                    if _norm(new) == _norm(text):
                        raise gen.NotApplicable("the rule left the text unchanged")
                    done[key] = (new, True, "")
                except gen.NotApplicable as err:
                    done[key] = (None, False, str(err))
            rows.append((tid, name, CATEGORIES[name], text, *done[key]))

    out = pd.DataFrame(rows, columns=["text_id", "corruption", "category", "original",
                                      "corrupted", "applied", "reason"])
    out["corrupted"] = pd.Series([r[4] for r in rows], dtype=object)  # None, not NaN
    out.attrs["random_seed"] = seed
    return out


def coverage(table: pd.DataFrame) -> pd.DataFrame:
    """Share of texts each corruption applied to, from a :func:`corrupt` table, with the
    most frequent reason for refusing.

    Examples
    --------
    >>> import bayesmeta as bm
    >>> from bayesmeta.text import coverage
    >>> cov = coverage(bm.corrupt(["A man is cutting a potato", "A dog"], "passive",
    ...                           random_seed=0))
    >>> float(cov.loc["passive", "coverage"])
    0.5
    """
    for col in ("corruption", "applied", "reason"):
        if col not in table.columns:
            raise ValueError(f"coverage needs a corrupt() table; column {col!r} is missing.")
    rows = []
    for name, grp in table.groupby("corruption", sort=False):
        refused = grp.loc[~grp["applied"], "reason"]
        rows.append((name, CATEGORIES.get(str(name), ""), len(grp), int(grp["applied"].sum()),
                     float(grp["applied"].mean()),
                     refused.value_counts().index[0] if len(refused) else ""))
    return pd.DataFrame(rows, columns=["corruption", "category", "n_texts", "n_applied",
                                       "coverage", "top_reason"]).set_index("corruption")


__all__ = ["ALIASES", "CATEGORIES", "LABELS", "corrupt", "coverage", "resolve_kinds"]
