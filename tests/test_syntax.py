"""lavaan-style model syntax: valid models, modifiers, layout, and every error path."""

from __future__ import annotations

import re

import pytest

from bayesmeta.validity.syntax import Covariance, Loading, ModelSpec, parse_model

COLUMNS = [f"Expert.{e}.{t}" for e in (1, 2, 3) for t in ("COH", "CON", "FLU", "REL")]
FOUR = """
coh =~ Expert.1.COH + Expert.2.COH + Expert.3.COH
con =~ Expert.1.CON + Expert.2.CON + Expert.3.CON
flu =~ Expert.1.FLU + Expert.2.FLU + Expert.3.FLU
rel =~ Expert.1.REL + Expert.2.REL + Expert.3.REL
"""


def _raises(syntax: str, message: str, columns=None):
    with pytest.raises(ValueError, match=re.escape(message)):
        parse_model(syntax, columns=columns)


# ---------------------------------------------------------------- valid models
def test_four_factor_model():
    spec = parse_model(FOUR, columns=COLUMNS)
    assert isinstance(spec, ModelSpec)
    assert spec.factors == ("coh", "con", "flu", "rel")
    assert spec.indicators("con") == ("Expert.1.CON", "Expert.2.CON", "Expert.3.CON")
    assert spec.observed[:4] == ("Expert.1.COH", "Expert.2.COH", "Expert.3.COH", "Expert.1.CON")
    assert spec.loadings[0] == Loading("coh", "Expert.1.COH", None, 2)
    cors = spec.factor_correlations()
    assert len(cors) == 6 and all(v is None for v in cors.values())  # all free by default
    assert spec.residual_covariances == ()


def test_fixed_and_free_covariances():
    spec = parse_model(FOUR + "coh ~~ 0*con\nrel ~~ 0.3*flu\ncoh ~~ rel\n")
    cors = spec.factor_correlations()
    assert cors[("coh", "con")] == 0.0
    assert cors[("flu", "rel")] == 0.3  # written in the other order
    assert cors[("coh", "rel")] is None and cors[("con", "flu")] is None
    assert Covariance("coh", "con", 0.0, 6) in spec.covariances


def test_residual_covariance_and_factor_variance_statements():
    spec = parse_model(FOUR + "Expert.1.COH ~~ Expert.1.REL\ncoh ~~ coh\ncon ~~ 1*con")
    assert spec.residual_covariances == (Covariance("Expert.1.COH", "Expert.1.REL", None, 6),)
    # factor variances are fixed at 1 (std.lv): the statements change nothing
    assert len(spec.covariances) == 1


def test_comments_blank_lines_and_semicolons():
    spec = parse_model("""
    # a comment line
    coh =~ a + b + c   # trailing comment
    ! lavaan's other comment character

    con =~ d + e + f; coh ~~ 0*con  # two statements on one line
    """)
    assert spec.factors == ("coh", "con")
    assert spec.indicators("coh") == ("a", "b", "c")
    assert spec.factor_correlations() == {("coh", "con"): 0.0}


def test_multi_line_statements():
    spec = parse_model("""
    coh =~ a +
           b +
           c
    con =~
        d + e
        + f
    """)
    assert spec.indicators("coh") == ("a", "b", "c")
    assert spec.indicators("con") == ("d", "e", "f")
    assert spec.loadings[3].line == 5  # a continued statement keeps its first line


def test_loading_modifiers():
    spec = parse_model("f =~ NA*a + 1*b + 0.5*c + d + -2e-1*e")
    assert [ld.fixed for ld in spec.loadings] == [None, 1.0, 0.5, None, -0.2]
    assert str(spec).startswith("f =~ a + 1*b + 0.5*c + d + -0.2*e")


def test_identified_small_factors():
    # two indicators are identified when the factor correlates with another factor
    spec = parse_model("f =~ a + b\ng =~ c + d + e")
    assert spec.indicators("f") == ("a", "b")
    # one indicator with a fixed loading is identified (the factor is that y*)
    assert parse_model("f =~ 1*a\ng =~ c + d + e").indicators("f") == ("a",)


def test_underscore_names_match_dotted_columns():
    spec = parse_model(FOUR.replace(".", "_"), columns=COLUMNS)
    assert spec.observed[0] == "Expert_1_COH"  # names are kept as written


def test_to_frame_is_a_lavaan_like_table():
    table = parse_model("f =~ a + b + c\ng =~ d + e + f2\nf ~~ 0*g").to_frame()
    assert list(table.columns) == ["lhs", "op", "rhs", "free", "fixed", "line"]
    assert table[table.op == "=~"].shape[0] == 6
    row = table[(table.lhs == "f") & (table.rhs == "g")].iloc[0]
    assert not row.free and row.fixed == 0.0


def test_never_evaluated():
    with pytest.raises(ValueError, match="is not a valid variable name"):
        parse_model("f =~ __import__('os').system('echo hacked') + b + c")


# ---------------------------------------------------------------- errors name the culprit
def test_unknown_variables():
    _raises(FOUR.replace("Expert.3.REL", "Expert.4.REL"),
            "unknown variable 'Expert.4.REL' in line 5: it is not a column of the data. "
            "Did you mean", columns=COLUMNS)
    _raises(FOUR + "coh ~~ foo", "unknown variable 'foo' in line 6 ('coh ~~ foo')")


def test_single_indicator_factors():
    _raises("f =~ a + b + c\ng =~ d\nf ~~ 0*g",
            "factor 'g' in line 2 ('g =~ d') has one indicator ('d') and is not correlated "
            "with any other factor")
    _raises("g =~ d", "factor 'g' in line 1 ('g =~ d') has one indicator ('d')")
    _raises("f =~ a + b + c\ng =~ d", "has one indicator ('d') and is correlated with other "
            "factors")


def test_two_indicators_standalone():
    _raises("f =~ a + b", "factor 'f' in line 1 ('f =~ a + b') has two indicators and no "
            "correlation with another factor")
    _raises("f =~ a + b\ng =~ c + d + e\nf ~~ 0*g", "factor 'f' in line 1")


@pytest.mark.parametrize(("syntax", "message"), [
    ("coh Expert.1.COH", "line 1 ('coh Expert.1.COH') is not a model statement"),
    ("f =~", "line 1 ('f =~') has nothing right of '=~'"),
    ("f =~ a + + b + c", "malformed term '' in line 1"),
    ("f =~ a + b + 1x", "'1x' in line 1 ('f =~ a + b + 1x') is not a valid variable name"),
    ("f g =~ a + b + c", "left-hand side 'f g' of line 1"),
    ("f =~ a + b =~ c", "line 1 ('f =~ a + b =~ c') has more than one operator"),
    ("y ~ x", "line 1 ('y ~ x'): regressions ('~') and intercepts ('~ 1') are not supported"),
    ("f =~ a + b + c\nab := a*b", "line 2 ('ab := a*b'): defined parameters (':=')"),
    ("f =~ a + b + c\na | t1", "line 2 ('a | t1'): threshold statements ('|')"),
    ("f =~ lam*a + b + c", "label 'lam' in line 1 ('f =~ lam*a + b + c'): parameter labels"),
    ("f =~ start(1)*a + b + c", "modifier 'start(1)' in line 1"),
    ("f =~ 1*2*a + b + c", "term '1*2*a' in line 1 ('f =~ 1*2*a + b + c') has more than one"),
])
def test_malformed_lines(syntax, message):
    _raises(syntax, message)


@pytest.mark.parametrize(("syntax", "message"), [
    ("f =~ a + b + a", "indicator 'a' of factor 'f' appears twice (line 1"),
    ("f =~ a + b + c\ng =~ d + e + h\nf ~~ g\ng ~~ 0*f",
     "the covariance of 'g' and 'f' is specified twice (line 4"),
    ("f =~ a + b + c\ng =~ f + d + e", "factor 'f' is used as an indicator of 'g' in line 2"),
    ("f =~ a + b + c\nf ~~ a", "line 2 ('f ~~ a'): a covariance between factor and indicator"),
    ("f =~ a + b + c\nf ~~ 2*f", "line 2 ('f ~~ 2*f'): factor variances are fixed at 1"),
    ("f =~ a + b + c\na ~~ a", "line 2 ('a ~~ a'): the residual variance of an ordinal"),
    ("f =~ a + b + c\ng =~ d + e + h\nf ~~ 1.5*g", "factor correlations must lie in [-1, 1]"),
])
def test_inconsistent_models(syntax, message):
    _raises(syntax, message)


def test_factor_named_like_a_column():
    _raises("Expert.1.COH =~ Expert.2.COH + Expert.3.COH + Expert.1.REL",
            "factor name 'Expert.1.COH' in line 1", columns=COLUMNS)


def test_empty_and_non_string_syntax():
    _raises("  # nothing here\n", "syntax has no model statements")
    with pytest.raises(TypeError, match="syntax must be a string"):
        parse_model(None)  # type: ignore[arg-type]
