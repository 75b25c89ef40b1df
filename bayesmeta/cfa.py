"""``bm.cfa``: confirmatory factor analysis of ordinal ratings from lavaan-style syntax.

The public entry point and its result. The classical fit (lavaan's WLSMV: polychorics +
DWLS + robust SEs + scaled-shifted test) lives in :mod:`bayesmeta.classical.ordinal`; the
Bayesian twin (``method="bayes"``) will live in ``bayesmeta.models.ordinal_cfa``.
"""

from __future__ import annotations

import hashlib
import textwrap
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr
from scipy import stats

from bayesmeta.classical.ordinal import FIT_MEASURES, OrdinalCFAFit, fit_wlsmv
from bayesmeta.classical.polychoric import polychoric
from bayesmeta.data.schema import validate
from bayesmeta.results import Result
from bayesmeta.syntax import ModelSpec, parse_model, resolve_column

METHODS = ("wlsmv", "bayes")


def _ordinal_frame(data: xr.Dataset | pd.DataFrame) -> pd.DataFrame:
    """Cases x variables table of ordinal values (NaN for missing). A Dataset gives one
    column per rater x trait, labelled ``"<rater>.<trait>"``, one row per (system, item)."""
    if isinstance(data, xr.Dataset):
        validate(data, warn_missing=False)
        if "rating" not in data:
            raise ValueError("data has no 'rating' variable; an ordinal CFA needs ratings.")
        rating = data["rating"].transpose("system", "item", "rater", "trait")
        values = rating.values.reshape(-1, data.sizes["rater"] * data.sizes["trait"])
        labels = [f"{r}.{t}" for r in rating["rater"].values for t in rating["trait"].values]
        return pd.DataFrame(values, columns=labels)
    if isinstance(data, pd.DataFrame):
        return data
    raise TypeError(f"data must be a bayesmeta xarray.Dataset or a pandas.DataFrame, got "
                    f"{type(data).__name__}.")


def _column(frame: pd.DataFrame, col: str) -> np.ndarray:
    values = frame[col]
    if isinstance(values.dtype, pd.CategoricalDtype):
        if not values.cat.ordered:
            raise TypeError(f"column {col!r} is an unordered categorical; make it ordered "
                            f"or numeric.")
        codes = values.cat.codes.to_numpy().astype(float)
        codes[codes < 0] = np.nan
        return codes
    if not pd.api.types.is_numeric_dtype(values) or pd.api.types.is_bool_dtype(values):
        raise TypeError(f"column {col!r} must hold numeric ordinal ratings, got dtype "
                        f"{values.dtype}.")
    out = values.to_numpy(dtype=float)
    if np.isinf(out).any():
        raise ValueError(f"column {col!r} has infinite values.")
    return out


def cfa(
    syntax: str,
    data: xr.Dataset | pd.DataFrame,
    *,
    ordered: bool = True,
    method: str = "wlsmv",
    ci_prob: float | None = None,
    **kwargs: Any,
) -> CFAResult:
    r"""Confirmatory factor analysis of ordinal indicators, specified in lavaan syntax.

    ``method="wlsmv"`` reproduces lavaan's ``cfa(model, data, ordered = TRUE,
    std.lv = TRUE, missing = "pairwise")``: thresholds and polychoric correlations (two-step
    ML), their asymptotic covariance from casewise scores, DWLS estimation with the diagonal
    weight, robust (sandwich) standard errors and the scaled-shifted test statistic, with
    lavaan's fit indices. Factors have variance 1 (``std.lv``) and indicators' latent
    responses variance 1 (delta parameterization), so the standardized (std.all) and
    unstandardized estimates coincide except for residual covariances.

    Parameters
    ----------
    syntax : str
        lavaan model syntax (``=~`` and ``~~``; see :mod:`bayesmeta.syntax`), e.g.
        ``"coh =~ Expert.1.COH + Expert.2.COH + Expert.3.COH"``.
    data : xarray.Dataset or pandas.DataFrame
        A bayesmeta Dataset (each rater x trait is a variable named ``"<rater>.<trait>"``,
        e.g. ``Expert.1.COH``; ``Expert_1_COH`` is accepted too; each (system, item) is a
        case), or a DataFrame with one column per indicator (numbers or ordered
        categoricals, NaN for missing).
    ordered : bool
        Treat the indicators as ordinal (the only mode implemented).
    method : {"wlsmv", "bayes"}
        ``"bayes"``: the Bayesian ordinal CFA (:func:`bayesmeta.models.ordinal_cfa.
        ordinal_cfa`; card ``models/ordinal_cfa.md``), with lavaan's WLSMV estimates in
        the ``classical`` column beside the posterior.
    ci_prob : float, optional
        ``"wlsmv"``: coverage of the Wald intervals ``est.std +/- z * se`` (lavaan's
        ``ci.lower`` / ``ci.upper``; default 0.95). ``"bayes"``: probability of the HDIs
        (default 0.94).
    **kwargs
        ``method="bayes"`` only: passed to ``ordinal_cfa`` (``random_seed``, ``chains``,
        ``draws``, ``tune``, ``fast``, ...).

    Returns
    -------
    CFAResult
        ``summary()`` is lavaan's parameter table; ``fit_measures()`` the fit indices.

    Notes
    -----
    Missing ratings are handled pairwise (each threshold from every observed rating of that
    indicator, each polychoric from the cases observed on both), as lavaan's
    ``missing = "pairwise"``; no case is dropped except cases with no rating at all on the
    model's indicators (as lavaan does), which the result's notes count. The categories of
    an indicator are its observed values. Formulas and references:
    :mod:`bayesmeta.classical.polychoric` (Olsson 1979; Muthén 1984) and
    :mod:`bayesmeta.classical.ordinal` (Muthén, du Toit & Spisic 1997; Satorra & Bentler
    1994; Asparouhov & Muthén 2010).

    Examples
    --------
    >>> import bayesmeta as bm
    >>> ds = bm.datasets.simulated(random_seed=0)
    >>> model = "coh =~ Rater.1.COH + Rater.2.COH + Rater.3.COH"
    >>> fit = bm.cfa(model, ds)  # lavaan: cfa(model, d, ordered = TRUE, std.lv = TRUE)
    >>> fit.summary().loc["coh =~ Rater.1.COH", ["classical", "se"]].shape
    (2,)
    >>> float(fit.fit_measures()["df"])  # three indicators, one factor: just identified
    0.0
    """
    key = str(method).lower()
    if key == "bayes":
        from bayesmeta.models.ordinal_cfa import ordinal_cfa

        if not ordered:
            raise NotImplementedError("ordered=False is not implemented for method='bayes'; "
                                      "the Bayesian CFA fits ordinal indicators only.")
        return ordinal_cfa(syntax, data, ci_prob=0.94 if ci_prob is None else ci_prob,
                           **kwargs)
    if kwargs:
        raise TypeError(f"unexpected argument(s) for method='wlsmv': {', '.join(kwargs)}.")
    ci_prob = 0.95 if ci_prob is None else ci_prob
    if key not in METHODS:
        raise ValueError(f"method must be one of {', '.join(map(repr, METHODS))}, got "
                         f"{method!r}.")
    if not isinstance(ordered, bool | np.bool_):
        raise TypeError(f"ordered must be True or False, got {type(ordered).__name__}.")
    if not ordered:
        raise NotImplementedError("ordered=False (continuous indicators, ML) is not "
                                  "implemented; bm.cfa fits ordinal indicators only.")
    if not 0 < ci_prob < 1:
        raise ValueError(f"ci_prob must lie strictly between 0 and 1, got {ci_prob!r}.")

    frame = _ordinal_frame(data)
    columns = [str(c) for c in frame.columns]
    spec = parse_model(syntax, columns=columns)
    values = np.column_stack([_column(frame, frame.columns[columns.index(
        resolve_column(v, columns))]) for v in spec.observed])
    empty = np.isnan(values).all(axis=1)
    values = values[~empty]
    sample = polychoric(values, names=list(spec.observed))
    fit = fit_wlsmv(spec, sample)
    return _result(spec, fit, values, int(empty.sum()), ci_prob)


def _result(spec: ModelSpec, fit: OrdinalCFAFit, values: np.ndarray, n_empty: int,
            ci_prob: float) -> CFAResult:
    t = fit.table
    z = stats.norm.ppf(0.5 + ci_prob / 2)
    table = pd.DataFrame({
        "lhs": t["lhs"], "op": t["op"], "rhs": t["rhs"],
        "classical": t["std"], "se": t["se"],
        "classical_low": t["std"] - z * t["se"], "classical_high": t["std"] + z * t["se"],
        "z": t["z"], "pvalue": t["pvalue"], "est": t["est"], "est_se": t["est_se"],
        "free": t["free"],
    })
    table.index = pd.Index([f"{a} {o} {b}" for a, o, b in zip(t["lhs"], t["op"], t["rhs"],
                                                                strict=True)], name="parameter")
    n_missing = int(np.isnan(values).sum())
    digest = hashlib.sha256(np.ascontiguousarray(values).tobytes())
    digest.update("|".join(spec.observed).encode())
    info = {
        "method": "WLSMV (DWLS, robust SE, scaled-shifted test), lavaan-style",
        "observations": int(values.shape[0]),
        "indicators": len(spec.observed),
        "factors": len(spec.factors),
        "missing": f"pairwise ({n_missing} of {values.size} ratings missing)",
        "converged": bool(fit.converged),
        "iterations": int(fit.iterations),
        "data_hash": digest.hexdigest()[:16],
    }
    notes = [f"Standardized (std.all) estimates in 'classical'; intervals are {ci_prob:.0%} "
             f"Wald intervals from robust (sandwich) standard errors, as lavaan's "
             f"standardizedSolution(); 'est' / 'est_se' are unstandardized."]
    if n_empty:
        notes.append(f"{n_empty} case(s) with no rating on any indicator were left out "
                     f"(as lavaan does).")
    notes += list(fit.warnings)
    p = list(spec.observed)
    extra = {
        "polychoric": xr.DataArray(fit.sample.correlation, dims=("variable", "variable2"),
                                   coords={"variable": p, "variable2": p}),
        "implied": xr.DataArray(fit.implied, dims=("variable", "variable2"),
                                coords={"variable": p, "variable2": p}),
    }
    res = CFAResult(table, title="Ordinal confirmatory factor analysis (WLSMV)", info=info,
                    extra=extra, notes=notes, ci_prob=ci_prob)
    res._restore({"fit_measures": fit.fit_measures.to_dict(), "syntax": spec.syntax})
    return res


class CFAResult(Result):
    """Result of :func:`cfa`: lavaan's parameter table plus fit measures.

    ``summary()`` has one row per parameter, indexed ``"lhs op rhs"`` (``"coh =~
    Expert.1.COH"``, ``"coh ~~ con"``, ``"Expert.1.COH | t1"``), with columns ``lhs``,
    ``op``, ``rhs``, ``classical`` (lavaan's ``est.std``), ``se``, ``classical_low``,
    ``classical_high``, ``z``, ``pvalue``, ``est`` and ``est_se`` (unstandardized), ``free``.
    """

    def _state(self) -> dict[str, Any]:
        return {"fit_measures": {k: float(v) for k, v in self._fit.items()},
                "syntax": "" if self.spec is None else self.spec.syntax}

    def _restore(self, state: dict[str, Any]) -> None:
        self._fit = pd.Series(state.get("fit_measures", {}), dtype=float).reindex(
            list(FIT_MEASURES))
        self.spec = parse_model(state["syntax"]) if state.get("syntax") else None

    def summary(self) -> pd.DataFrame:
        """The parameter table (raw values); attrs give the interval kind and coverage."""
        out = self._table.copy()
        out.attrs = {"ci_prob": self.ci_prob, "ci_kind": "wald (robust se)",
                     "title": self.title}
        return out

    def fit_measures(self) -> pd.Series:
        """chisq, df, pvalue, their ``.scaled`` (scaled-shifted) versions, the scaling
        factor and shift, the baseline model, CFI, TLI, RMSEA (plain and scaled), SRMR;
        named as in lavaan's ``fitMeasures()``."""
        return self._fit.copy()

    # ------------------------------------------------------------------ printing
    def __str__(self) -> str:
        """A summary laid out like lavaan's ``summary(fit, standardized = TRUE)``."""
        fm, info = self._fit, self.info
        n_free = int(self._table["free"].sum())

        def row(label: str, *vals: str) -> str:
            return f"  {label:<40}" + "".join(f"{v:>12}" for v in vals)

        def num(v: float, digits: int = 3) -> str:
            return "" if pd.isna(v) else f"{v:.{digits}f}"

        status = "ended normally" if info.get("converged", True) else "did NOT converge"
        lines = [self.title, "",
                 f"  bayesmeta {info.get('bayesmeta', '')} {status} after "
                 f"{info.get('iterations', '?')} iterations", "",
                 row("Estimator", "DWLS"),
                 row("Number of model parameters", str(n_free)),
                 row("Number of observations", str(info.get("observations", ""))),
                 row("Missing data", str(info.get("missing", ""))), "",
                 "Model Test User Model:",
                 row("", "Standard", "Scaled"),
                 row("Test Statistic", num(fm["chisq"]), num(fm["chisq.scaled"])),
                 row("Degrees of freedom", f"{fm['df']:.0f}", f"{fm['df.scaled']:.0f}"),
                 row("P-value (Chi-square)", num(fm["pvalue"]), num(fm["pvalue.scaled"])),
                 row("Scaling correction factor", "", num(fm["chisq.scaling.factor"])),
                 row("Shift parameter", "", num(fm["chisq.shift.parameter"])),
                 "    simple second-order correction", "",
                 "Model Test Baseline Model:",
                 row("Test statistic", num(fm["baseline.chisq"]),
                     num(fm["baseline.chisq.scaled"])),
                 row("Degrees of freedom", f"{fm['baseline.df']:.0f}",
                     f"{fm['baseline.df']:.0f}"), "",
                 "User Model versus Baseline Model:",
                 row("Comparative Fit Index (CFI)", num(fm["cfi"]), num(fm["cfi.scaled"])),
                 row("Tucker-Lewis Index (TLI)", num(fm["tli"]), num(fm["tli.scaled"])), "",
                 "Root Mean Square Error of Approximation:",
                 row("RMSEA", num(fm["rmsea"]), num(fm["rmsea.scaled"])), "",
                 "Standardized Root Mean Square Residual:",
                 row("SRMR", num(fm["srmr"]), num(fm["srmr"])), "",
                 "Parameter Estimates:",
                 row("Standard errors", "Robust.sem"),
                 row("Information", "Expected"),
                 row("Parameterization", "Delta")]
        lines += self._sections()
        for note in self.notes:
            lines += ["", *textwrap.wrap(f"Note: {note}", width=88, initial_indent="  ",
                                         subsequent_indent="  ")]
        return "\n".join(lines)

    def _sections(self) -> list[str]:
        t = self._table
        head = f"{'':<22}{'Estimate':>10}{'Std.Err':>9}{'z-value':>9}{'P(>|z|)':>9}{'Std.all':>9}"

        def line(label: str, r: pd.Series) -> str:
            fixed = not r["free"] or pd.isna(r["est_se"])
            cells = [f"{r['est']:.3f}"] + (["", "", ""] if fixed else [
                f"{r['est_se']:.3f}", f"{r['est'] / r['est_se']:.3f}" if r["est_se"] > 0
                else "", f"{2 * stats.norm.sf(abs(r['est'] / r['est_se'])):.3f}"
                if r["est_se"] > 0 else ""])
            widths = (10, 9, 9, 9)
            return (f"    {label:<18}" + "".join(f"{c:>{w}}" for c, w in zip(cells, widths,
                                                                          strict=True))
                    + f"{r['classical']:>9.3f}")

        out: list[str] = []
        observed = set(t.loc[t["op"] == "=~", "rhs"])  # the indicators (lavaan's dot prefix)
        lat = t[t["op"] == "=~"]
        cov = t[(t["op"] == "~~") & (t["lhs"] != t["rhs"])]
        thr = t[t["op"] == "|"]
        var = t[(t["op"] == "~~") & (t["lhs"] == t["rhs"])]
        for title, part, group in (("Latent Variables", lat, True), ("Covariances", cov, True),
                                   ("Thresholds", thr, False), ("Variances", var, False)):
            if not len(part):
                continue
            out += ["", f"{title}:", head]
            current = None
            for _, r in part.iterrows():
                if group:
                    dot = "." if r["op"] == "~~" and r["lhs"] in observed else ""
                    if r["lhs"] != current:
                        current = r["lhs"]
                        out.append(f"  {dot}{current} {r['op']}")
                    out.append(line(dot + r["rhs"], r))
                elif r["op"] == "|":
                    out.append(line(f"{r['lhs']}|{r['rhs']}", r))
                else:
                    out.append(line(("." if r["lhs"] in observed else "") + r["lhs"], r))
        return out
