"""Every public function's keywords come from the one vocabulary
(:data:`bayesmeta.vocabulary.KEYWORDS`); no ``*args`` or ``**kwargs`` catch-alls (issue 20).
The table of signatures is printed on failure, one row per (function, keyword)."""

from __future__ import annotations

import inspect

import pandas as pd
import pytest

import bayesmeta as bm
from bayesmeta.vocabulary import KEYWORDS

PUBLIC = {name: getattr(bm, name) for name in bm.__all__
          if inspect.isfunction(getattr(bm, name))}


def signature_table() -> pd.DataFrame:
    """One row per (function, parameter): its kind and whether the vocabulary has it."""
    rows = []
    for name, fn in sorted(PUBLIC.items()):
        for p in inspect.signature(fn).parameters.values():
            rows.append({"function": name, "keyword": p.name, "kind": p.kind.name,
                         "in_vocabulary": p.name in KEYWORDS})
    return pd.DataFrame(rows)


def test_the_public_api_has_functions():
    assert len(PUBLIC) >= 40


def test_every_keyword_is_in_the_vocabulary():
    table = signature_table()
    outside = table[~table["in_vocabulary"]]
    assert outside.empty, "keywords outside bayesmeta.vocabulary.KEYWORDS:\n" + \
        outside.to_string(index=False)


def test_no_catch_all_arguments():
    table = signature_table()
    bad = table[table["kind"].isin(["VAR_POSITIONAL", "VAR_KEYWORD"])]
    assert bad.empty, "*args / **kwargs in the public API:\n" + bad.to_string(index=False)


@pytest.mark.parametrize("old", ["method", "n_draws", "n_trials", "n_jobs", "n_resamples",
                                 "ds", "df", "criterion"])
def test_retired_names_are_gone(old):
    """The names the vocabulary retired (see CHANGELOG) are in no public signature."""
    assert old not in KEYWORDS
    table = signature_table()
    assert table.loc[table["keyword"] == old, "function"].tolist() == []


def test_options_after_the_data_are_keyword_only():
    """``f(data, trait, *, options)``: at most the data and one design label by position."""
    positional = {}
    for name, fn in PUBLIC.items():
        params = list(inspect.signature(fn).parameters.values())
        pos = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        if len(pos) > 3:
            positional[name] = pos
    assert positional == {}
