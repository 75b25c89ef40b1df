"""lavaan-style model syntax -> a model specification (parsed, never evaluated).

The subset of lavaan's model syntax (Rosseel 2012) that a confirmatory factor model of
ordinal ratings needs::

    # four traits, three experts each
    coh =~ Expert.1.COH + Expert.2.COH + Expert.3.COH
    con =~ Expert.1.CON + Expert.2.CON +
           Expert.3.CON                  # a line ending in '+' continues
    coh ~~ 0*con; flu =~ a + b + c       # ';' separates statements; 0* fixes

* ``f =~ x + y + z``: factor ``f`` is measured by indicators ``x, y, z``; a numeric
  modifier fixes a loading (``1*x``), ``NA*x`` frees it explicitly.
* ``a ~~ b``: a covariance, free by default; ``a ~~ 0*b`` fixes it (to 0 or any number).
  Between factors it is a factor correlation (factor variances are fixed at 1, lavaan's
  ``std.lv = TRUE``, so ``f ~~ f`` and ``f ~~ 1*f`` are accepted and change nothing);
  between indicators it is a residual covariance. Every pair of factors is correlated
  unless fixed, as in lavaan's ``cfa()``.
* ``#`` and ``!`` start a comment; blank lines are ignored; a statement continues on the
  next line when it ends with ``+``, ``=~``, ``~~`` or ``*``, or the next line starts
  with ``+``.

Everything else (regressions ``~``, intercepts ``~ 1``, labels and equality constraints,
``:=``, thresholds ``|``) raises a ``ValueError`` that names the line. So do unknown
variables (when the data's columns are given), a factor that lavaan cannot identify (a
single indicator with a free loading; two indicators and no correlation with another
factor), duplicated statements, and second-order factors.

References
----------
Rosseel, Y. (2012). lavaan: An R package for structural equation modeling. *Journal of
Statistical Software*, 48(2). Model syntax: https://lavaan.ugent.be/tutorial/syntax1.html
Bollen, K. A. (1989). *Structural equations with latent variables*, ch. 7 (identification:
the three- and two-indicator rules).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

import pandas as pd

_NAME = re.compile(r"^[A-Za-z_.][A-Za-z0-9_.]*$")
_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")
_CONTINUE = ("+", "=~", "~~", "*")
_UNSUPPORTED = (
    (":=", "defined parameters (':=')"),
    ("==", "equality constraints ('==')"),
    ("<", "inequality constraints ('<')"),
    (">", "inequality constraints ('>')"),
    ("|", "threshold statements ('|'); thresholds are estimated from the data"),
    ("%", "block statements ('%')"),
    ("~", "regressions ('~') and intercepts ('~ 1')"),
)


@dataclass(frozen=True)
class Loading:
    """One ``factor =~ indicator`` term; ``fixed`` is None for a free loading."""

    factor: str
    indicator: str
    fixed: float | None = None
    line: int = 0


@dataclass(frozen=True)
class Covariance:
    """One ``lhs ~~ rhs`` term as written; ``fixed`` is None for a free covariance."""

    lhs: str
    rhs: str
    fixed: float | None = None
    line: int = 0


@dataclass(frozen=True)
class ModelSpec:
    """A parsed confirmatory factor model.

    Attributes
    ----------
    loadings : tuple of Loading
        In the order written.
    covariances : tuple of Covariance
        The ``~~`` statements as written (factor variances dropped: they are fixed at 1).
    syntax : str
        The model text it came from.
    """

    loadings: tuple[Loading, ...]
    covariances: tuple[Covariance, ...] = ()
    syntax: str = field(default="", compare=False)

    @property
    def factors(self) -> tuple[str, ...]:
        """Factor names in order of first appearance."""
        return tuple(dict.fromkeys(ld.factor for ld in self.loadings))

    @property
    def observed(self) -> tuple[str, ...]:
        """Indicator names in order of first appearance."""
        return tuple(dict.fromkeys(ld.indicator for ld in self.loadings))

    def indicators(self, factor: str) -> tuple[str, ...]:
        """The indicators of one factor, in the order written."""
        if factor not in self.factors:
            raise ValueError(f"unknown factor {factor!r}; factors are "
                             f"{', '.join(map(repr, self.factors))}.")
        return tuple(ld.indicator for ld in self.loadings if ld.factor == factor)

    def factor_correlations(self) -> dict[tuple[str, str], float | None]:
        """Every pair of factors (in factor order) -> fixed value, or None if free.

        Pairs that the syntax does not mention are free (lavaan's ``cfa()`` default)."""
        fs = self.factors
        out: dict[tuple[str, str], float | None] = {
            (fs[a], fs[b]): None for a in range(len(fs)) for b in range(a + 1, len(fs))}
        for cov in self.covariances:
            if cov.lhs in fs and cov.rhs in fs:
                key = (cov.lhs, cov.rhs) if (cov.lhs, cov.rhs) in out else (cov.rhs, cov.lhs)
                out[key] = cov.fixed
        return out

    @property
    def residual_covariances(self) -> tuple[Covariance, ...]:
        """The ``~~`` statements between indicators."""
        obs = set(self.observed)
        return tuple(c for c in self.covariances if c.lhs in obs)

    def to_frame(self) -> pd.DataFrame:
        """The specification as a lavaan-like parameter table (``lhs op rhs free fixed``)."""
        rows = [(ld.factor, "=~", ld.indicator, ld.fixed is None, ld.fixed, ld.line)
                for ld in self.loadings]
        rows += [(f, "~~", f, False, 1.0, 0) for f in self.factors]
        rows += [(a, "~~", b, v is None, v, 0) for (a, b), v in self.factor_correlations().items()]
        rows += [(c.lhs, "~~", c.rhs, c.fixed is None, c.fixed, c.line)
                 for c in self.residual_covariances]
        return pd.DataFrame(rows, columns=["lhs", "op", "rhs", "free", "fixed", "line"])

    def __str__(self) -> str:
        lines = []
        for f in self.factors:
            terms = [(f"{ld.fixed:g}*" if ld.fixed is not None else "") + ld.indicator
                     for ld in self.loadings if ld.factor == f]
            lines.append(f"{f} =~ {' + '.join(terms)}")
        lines += [f"{c.lhs} ~~ {'' if c.fixed is None else f'{c.fixed:g}*'}{c.rhs}"
                  for c in self.covariances]
        return "\n".join(lines)


def _statements(syntax: str) -> list[tuple[int, str]]:
    """Split model text into ``(first line number, statement)``: comments dropped,
    continuation lines joined, ``;`` separating statements."""
    segments: list[tuple[int, str]] = []
    for number, raw in enumerate(syntax.splitlines(), start=1):
        text = re.split(r"[#!]", raw, maxsplit=1)[0]
        for part in text.split(";"):
            if part.strip():
                segments.append((number, part.strip()))
    out: list[tuple[int, str]] = []
    for number, text in segments:
        if out and (out[-1][1].endswith(_CONTINUE) or text.startswith("+")):
            out[-1] = (out[-1][0], f"{out[-1][1]} {text}")
        else:
            out.append((number, text))
    return out


def _where(number: int, statement: str) -> str:
    return f"line {number} ({statement!r})"


def _term(term: str, number: int, statement: str) -> tuple[str, float | None]:
    """One right-hand-side term ``[modifier*]name`` -> (name, fixed value or None)."""
    parts = [p.strip() for p in term.split("*")]
    if any(not p for p in parts) or not term:
        raise ValueError(f"malformed term {term!r} in {_where(number, statement)}: expected "
                         f"a variable name, optionally preceded by a number and '*'.")
    if len(parts) > 2:
        raise ValueError(f"term {term!r} in {_where(number, statement)} has more than one "
                         f"modifier; use one, e.g. '0*{parts[-1]}'.")
    name = parts[-1]
    if not _NAME.match(name):
        raise ValueError(f"{name!r} in {_where(number, statement)} is not a valid variable "
                         f"name (letters, digits, '.' and '_', not starting with a digit).")
    if len(parts) == 1:
        return name, None
    mod = parts[0]
    if mod == "NA":
        return name, None
    if _NUMBER.match(mod):
        return name, float(mod)
    if _NAME.match(mod):
        raise ValueError(f"label {mod!r} in {_where(number, statement)}: parameter labels "
                         f"and equality constraints are not supported; use a number to fix "
                         f"a parameter (e.g. '0*{name}').")
    raise ValueError(f"modifier {mod!r} in {_where(number, statement)} is not supported; "
                     f"only numbers (fixed values) and NA (free) are.")


def _split_statement(number: int, statement: str) -> tuple[str, str, list[str]]:
    for op in ("=~", "~~"):
        if op in statement:
            lhs, rhs = statement.split(op, 1)
            if "=~" in rhs or "~~" in rhs:
                raise ValueError(f"{_where(number, statement)} has more than one operator; "
                                 f"write one statement per line or separate them with ';'.")
            break
    else:
        for token, what in _UNSUPPORTED:
            if token in statement:
                raise ValueError(f"{_where(number, statement)}: {what} are not supported; "
                                 f"bayesmeta's CFA understands '=~' (loadings) and '~~' "
                                 f"(covariances).")
        raise ValueError(f"{_where(number, statement)} is not a model statement: expected "
                         f"'factor =~ indicator + ...' or 'a ~~ b'.")
    lhs = lhs.strip()
    if not _NAME.match(lhs):
        raise ValueError(f"left-hand side {lhs!r} of {_where(number, statement)} must be a "
                         f"single variable name.")
    if not rhs.strip():
        raise ValueError(f"{_where(number, statement)} has nothing right of {op!r}.")
    return lhs, op, [t.strip() for t in rhs.split("+")]


def resolve_column(name: str, columns: list[str] | None) -> str | None:
    """The data column a syntax name refers to: exact, else the one column that matches
    with ``.`` and ``_`` treated as equal (``Expert_1_COH`` -> ``Expert.1.COH``); None if
    there is no such column."""
    if columns is None or name in columns:
        return name
    norm = name.replace(".", "_")
    hits = [c for c in columns if c.replace(".", "_") == norm]
    return hits[0] if len(hits) == 1 else None


def parse_model(syntax: str, *, columns: Iterable[str] | None = None) -> ModelSpec:
    """Parse lavaan-style CFA syntax into a :class:`ModelSpec` (see the module docstring).

    Parameters
    ----------
    syntax : str
        The model, e.g. ``"coh =~ Expert.1.COH + Expert.2.COH + Expert.3.COH"``.
    columns : iterable of str, optional
        The data's variable names; every indicator must be one of them (``.`` and ``_``
        are interchangeable, so ``Expert_1_COH`` finds the column ``Expert.1.COH``).

    Returns
    -------
    ModelSpec

    Raises
    ------
    ValueError
        Naming the line and the culprit: malformed statements, unsupported operators or
        modifiers, unknown variables, duplicates, second-order factors, covariances
        between a factor and an indicator, free variances, and factors that cannot be
        identified.

    Examples
    --------
    >>> from bayesmeta.validity.syntax import parse_model
    >>> spec = parse_model('''
    ... f =~ a + b + c   # one factor
    ... g =~ d + e +
    ...      h
    ... f ~~ 0*g''')
    >>> spec.factors, spec.indicators("g"), spec.factor_correlations()
    (('f', 'g'), ('d', 'e', 'h'), {('f', 'g'): 0.0})
    """
    if not isinstance(syntax, str):
        raise TypeError(f"syntax must be a string of lavaan model syntax, got "
                        f"{type(syntax).__name__}.")
    cols = None if columns is None else [str(c) for c in columns]
    statements = _statements(syntax)
    if not statements:
        raise ValueError("syntax has no model statements; expected e.g. 'f =~ x1 + x2 + x3'.")
    loadings: list[Loading] = []
    cov_terms: list[tuple[str, str, float | None, int, str]] = []
    where_factor: dict[str, tuple[int, str]] = {}
    for number, statement in statements:
        lhs, op, raw_terms = _split_statement(number, statement)
        for raw in raw_terms:
            name, fixed = _term(raw, number, statement)
            if op == "=~":
                if any(ld.factor == lhs and ld.indicator == name for ld in loadings):
                    raise ValueError(f"indicator {name!r} of factor {lhs!r} appears twice "
                                     f"({_where(number, statement)}).")
                loadings.append(Loading(lhs, name, fixed, number))
                where_factor.setdefault(lhs, (number, statement))
            else:
                cov_terms.append((lhs, name, fixed, number, statement))

    factors = list(dict.fromkeys(ld.factor for ld in loadings))
    observed = list(dict.fromkeys(ld.indicator for ld in loadings))
    for ld in loadings:
        if ld.indicator in factors:
            raise ValueError(f"factor {ld.indicator!r} is used as an indicator of "
                             f"{ld.factor!r} in line {ld.line}: second-order factors are "
                             f"not supported.")
    if cols is not None:
        for f in factors:
            if f in cols:
                number, statement = where_factor[f]
                raise ValueError(f"factor name {f!r} in {_where(number, statement)} is also "
                                 f"a column of the data; give the factor another name.")
        for ld in loadings:
            if resolve_column(ld.indicator, cols) is None:
                close = difflib.get_close_matches(ld.indicator, cols, n=3)
                hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
                raise ValueError(f"unknown variable {ld.indicator!r} in line {ld.line}: it "
                                 f"is not a column of the data.{hint}")

    covariances: list[Covariance] = []
    seen: set[frozenset[str]] = set()
    for lhs, rhs, fixed, number, statement in cov_terms:
        for name in (lhs, rhs):
            if name not in factors and name not in observed:
                known = factors + observed
                close = difflib.get_close_matches(name, known, n=3)
                hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
                raise ValueError(f"unknown variable {name!r} in {_where(number, statement)}: "
                                 f"it is neither a factor nor an indicator of one.{hint}")
        if lhs == rhs:
            if lhs in factors:
                if fixed not in (None, 1.0):
                    raise ValueError(f"{_where(number, statement)}: factor variances are "
                                     f"fixed at 1 (std.lv = TRUE); write '{lhs} ~~ 1*{lhs}' "
                                     f"or leave the statement out.")
                continue
            raise ValueError(f"{_where(number, statement)}: the residual variance of an "
                             f"ordinal indicator is not a free parameter (it is 1 minus the "
                             f"explained variance, delta parameterization); remove it.")
        if (lhs in factors) != (rhs in factors):
            raise ValueError(f"{_where(number, statement)}: a covariance between factor and "
                             f"indicator ({lhs!r}, {rhs!r}) is not supported.")
        if fixed is not None and lhs in factors and abs(fixed) > 1:
            raise ValueError(f"{_where(number, statement)}: factor correlations must lie in "
                             f"[-1, 1], got {fixed:g}.")
        key = frozenset((lhs, rhs))
        if key in seen:
            raise ValueError(f"the covariance of {lhs!r} and {rhs!r} is specified twice "
                             f"({_where(number, statement)}).")
        seen.add(key)
        covariances.append(Covariance(lhs, rhs, fixed, number))

    spec = ModelSpec(tuple(loadings), tuple(covariances), syntax)
    _check_identified(spec, where_factor)
    return spec


def _check_identified(spec: ModelSpec, where: dict[str, tuple[int, str]]) -> None:
    """lavaan's identification limits for a factor whose loadings are all free (with unit
    factor variance): one indicator is never identified; two need a correlation with
    another factor (Bollen's two-indicator rule)."""
    cors = spec.factor_correlations()
    for f in spec.factors:
        terms = [ld for ld in spec.loadings if ld.factor == f]
        if any(ld.fixed is not None for ld in terms):
            continue
        number, statement = where[f]
        correlated = any(f in pair and v != 0 for pair, v in cors.items())
        if len(terms) == 1:
            detail = ("and is correlated with other factors, so only the product of its "
                      "loading and its correlations is identified" if correlated else
                      "and is not correlated with any other factor")
            raise ValueError(f"factor {f!r} in {_where(number, statement)} has one indicator "
                             f"({terms[0].indicator!r}) {detail}: the model is not "
                             f"identified. Add indicators or fix the loading "
                             f"('{f} =~ 1*{terms[0].indicator}').")
        if len(terms) == 2 and not correlated:
            raise ValueError(f"factor {f!r} in {_where(number, statement)} has two "
                             f"indicators and no correlation with another factor: its two "
                             f"loadings are not identified from one correlation. Add an "
                             f"indicator or let it correlate with another factor.")
