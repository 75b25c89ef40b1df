"""``bm.cfa``: confirmatory factor analysis of ordinal ratings from lavaan-style syntax.

The public entry point and the result of the classical fit. The classical estimator
(lavaan's WLSMV: polychorics + DWLS + robust SEs + scaled-shifted test) lives in
:mod:`bayesmeta.validity.wlsmv`; the Bayesian twin (``estimator="bayes"``) in
:mod:`bayesmeta.validity.ordinal_cfa`. Ratings in a bayesmeta Dataset come through
:func:`bayesmeta.data.select.ratings_wide`, which refuses continuous judgments.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr
from scipy import stats

from bayesmeta.data import select
from bayesmeta.options import SamplerOptions
from bayesmeta.results import Result, data_hash
from bayesmeta.summaries import CI_PROB, check_ci_prob
from bayesmeta.validity.polychoric import polychoric
from bayesmeta.validity.syntax import ModelSpec, parse_model, resolve_column
from bayesmeta.validity.wlsmv import FIT_MEASURES, OrdinalCFAFit, fit_wlsmv, parameter_table

__all__ = ["CFAResult", "cfa", "ordinal_frame"]

METHODS = ("wlsmv", "bayes")


def ordinal_frame(data: xr.Dataset | pd.DataFrame) -> pd.DataFrame:
    """Cases x variables table of ordinal values (NaN for missing). A Dataset gives one
    column per rater x trait, labelled ``"<rater>.<trait>"``, one row per (system, item)
    (:func:`bayesmeta.data.select.ratings_wide`; continuous judgments are refused with the
    reason); a DataFrame is used as it is."""
    if isinstance(data, xr.Dataset):
        return select.ratings_wide(data, analysis="cfa")
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
    model: str | ModelSpec,
    data: xr.Dataset | pd.DataFrame,
    *,
    estimator: str = "wlsmv",
    ordered: bool = True,
    ci_prob: float = CI_PROB,
    sampling: SamplerOptions | Mapping[str, Any] | str | None = None,
    random_seed: int | None = None,
    progress: bool | None = None,
    loading_prior: tuple[float, float] | None = None,
    lkj_eta: float | None = None,
    parameterization: str | None = None,
    loo: bool | None = None,
    n_ppc: int | None = None,
) -> Any:
    r"""Confirmatory factor analysis of ordinal indicators, specified in lavaan syntax.

    ``estimator="wlsmv"`` reproduces lavaan's ``cfa(model, data, ordered = TRUE,
    std.lv = TRUE, missing = "pairwise")``: thresholds and polychoric correlations (two-step
    ML), their asymptotic covariance from casewise scores, DWLS estimation with the diagonal
    weight, robust (sandwich) standard errors and the scaled-shifted test statistic, with
    lavaan's fit indices. Factors have variance 1 (``std.lv``) and indicators' latent
    responses variance 1 (delta parameterization), so the standardized (std.all) and
    unstandardized estimates coincide except for residual covariances.

    Parameters
    ----------
    model : str or ModelSpec
        lavaan model syntax (``=~`` and ``~~``; see :mod:`bayesmeta.validity.syntax`), e.g.
        ``"coh =~ Expert.1.COH + Expert.2.COH + Expert.3.COH"`` (lavaan's argument order:
        model first).
    data : xarray.Dataset or pandas.DataFrame
        A bayesmeta Dataset with ordinal ``rating`` s (each rater x trait is a variable
        named ``"<rater>.<trait>"``, e.g. ``Expert.1.COH``; ``Expert_1_COH`` is accepted
        too; each (system, item) is a case), or a DataFrame with one column per indicator
        (numbers or ordered categoricals, NaN for missing). Continuous ``judgment`` s are
        refused: a factor model of ordinal ratings needs raters and categories.
    estimator : {"wlsmv", "bayes"}
        The estimator (lavaan's ``estimator =``). ``"bayes"``: the Bayesian ordinal CFA
        (:func:`bayesmeta.validity.ordinal_cfa.ordinal_cfa`; card ``models/ordinal_cfa.md``),
        with lavaan's WLSMV estimates in the ``classical`` columns beside the posterior.
    ordered : bool
        Treat the indicators as ordinal (the only mode implemented).
    ci_prob : float
        Probability of every interval (default 0.94): the Wald intervals
        ``est.std +/- z * se`` of WLSMV (lavaan's ``ci.lower`` / ``ci.upper`` with
        ``level = ci_prob``; pass 0.95 to compare with lavaan's default) and, for
        ``"bayes"``, the HDIs.
    sampling : SamplerOptions, dict, "fast" or "full", optional
        ``estimator="bayes"`` only: how the posterior is sampled
        (:class:`bayesmeta.SamplerOptions`).
    random_seed : int, optional
        ``estimator="bayes"`` only (WLSMV draws no random numbers): the seed, drawn and
        recorded when not given.
    progress : bool, optional
        ``estimator="bayes"`` only: show the sampler's progress bar.
    loading_prior, lkj_eta, parameterization, loo, n_ppc : optional
        ``estimator="bayes"`` only: the options of
        :func:`~bayesmeta.validity.ordinal_cfa.ordinal_cfa` (Beta prior of the standardized
        loadings, LKJ shape of the factor correlations, ``"augmented"`` or ``"marginal"``,
        keep LOO's pointwise likelihood, posterior predictive draws); None takes its
        default. Given with ``estimator="wlsmv"`` they are an error, never ignored.

    Returns
    -------
    CFAResult or OrdinalCFAResult
        ``summary()`` indexed by ``(estimand, lhs, op, rhs)`` with estimands
        ``"loading"`` (``=~``), ``"threshold"`` (``|``), ``"factor_correlation"``,
        ``"residual_variance"``, ``"variance"`` and ``"covariance"`` (``~~``); columns
        ``classical`` (lavaan's ``est.std``), ``classical_low``, ``classical_high``
        (``classical_ci_kind = "Wald (robust SE)"``). ``details()``: ``se``, ``z``,
        ``pvalue``, ``est`` and ``est_se`` (unstandardized), ``free``. ``parameters()``:
        both side by side, lavaan's ``parameterEstimates`` + ``standardizedSolution``.
        ``fit_measures()``: the fit indices.

    Notes
    -----
    Missing ratings are handled pairwise (each threshold from every observed rating of that
    indicator, each polychoric from the cases observed on both), as lavaan's
    ``missing = "pairwise"``; no case is dropped except cases with no rating at all on the
    model's indicators (as lavaan does), which the result's notes count. The categories of
    an indicator are its observed values. Formulas and references:
    :mod:`bayesmeta.validity.polychoric` (Olsson 1979; Muthén 1984) and
    :mod:`bayesmeta.validity.wlsmv` (Muthén, du Toit & Spisic 1997; Satorra & Bentler
    1994; Asparouhov & Muthén 2010).

    Examples
    --------
    >>> import bayesmeta as bm
    >>> ds = bm.datasets.simulated(random_seed=0)
    >>> model = "coh =~ Rater.1.COH + Rater.2.COH + Rater.3.COH"
    >>> fit = bm.cfa(model, ds)  # lavaan: cfa(model, d, ordered = TRUE, std.lv = TRUE)
    >>> fit.summary().loc[("loading", "coh", "=~", "Rater.1.COH"),
    ...                   ["classical", "classical_low"]].shape
    (2,)
    >>> float(fit.fit_measures()["df"])  # three indicators, one factor: just identified
    0.0

    R equivalent: ``lavaan::cfa(model, data, ordered = TRUE, std.lv = TRUE,
    missing = "pairwise")`` then ``standardizedSolution(fit, level = 0.94)``.
    """
    key = str(estimator).lower()
    if key not in METHODS:
        raise ValueError(f"estimator must be one of {', '.join(map(repr, METHODS))}, got "
                         f"{estimator!r}.")
    if not isinstance(ordered, bool | np.bool_):
        raise TypeError(f"ordered must be True or False, got {type(ordered).__name__}.")
    ci_prob = check_ci_prob(ci_prob)
    bayes_only = {"loading_prior": loading_prior, "lkj_eta": lkj_eta,
                  "parameterization": parameterization, "loo": loo, "n_ppc": n_ppc}
    given = {k: v for k, v in bayes_only.items() if v is not None}
    if key == "bayes":
        from bayesmeta.validity.ordinal_cfa import ordinal_cfa

        if not ordered:
            raise NotImplementedError("ordered=False is not implemented for "
                                      "estimator='bayes'; the Bayesian CFA fits ordinal "
                                      "indicators only.")
        return ordinal_cfa(model, data, ci_prob=ci_prob, sampling=sampling,
                           random_seed=random_seed, progress=progress, **given)
    if given:
        raise TypeError(f"{', '.join(given)} appl{'ies' if len(given) == 1 else 'y'} to "
                        f"estimator='bayes' only; WLSMV has no such option.")
    if sampling is not None:
        raise TypeError("sampling= applies to estimator='bayes' only; WLSMV does not sample.")
    if not ordered:
        raise NotImplementedError("ordered=False (continuous indicators, ML) is not "
                                  "implemented; bm.cfa fits ordinal indicators only.")

    frame = ordinal_frame(data)
    columns = [str(c) for c in frame.columns]
    syntax = model.syntax if isinstance(model, ModelSpec) else model
    spec = parse_model(syntax, columns=columns)
    values = np.column_stack([_column(frame, frame.columns[columns.index(
        resolve_column(v, columns))]) for v in spec.observed])
    empty = np.isnan(values).all(axis=1)
    values = values[~empty]
    sample = polychoric(values, names=list(spec.observed))
    fit = fit_wlsmv(spec, sample)
    dhash = data_hash(data) if isinstance(data, xr.Dataset) else frame_hash(
        values, spec.observed)
    ratings = _ratings(values, frame.index[~empty], spec.observed)
    return _result(spec, fit, values, int(empty.sum()), ci_prob, dhash, ratings)


def _ratings(values: np.ndarray, index: pd.Index, names: Any) -> xr.DataArray:
    """The cases x indicators ratings the model was fitted to (dims ``output``,
    ``indicator``; ``system`` and ``item`` coords along ``output`` when the cases are
    labelled so), kept for :meth:`CFAResult.factor_scores`."""
    coords: dict[str, Any] = {"output": np.arange(values.shape[0]),
                              "indicator": [str(n) for n in names]}
    if isinstance(index, pd.MultiIndex) and {"system", "item"} <= set(index.names):
        coords["system"] = ("output", index.get_level_values("system").astype(str).to_numpy())
        coords["item"] = ("output", index.get_level_values("item").astype(str).to_numpy())
    else:
        coords["case"] = ("output", index.astype(str).to_numpy())
    return xr.DataArray(values, dims=("output", "indicator"), coords=coords, name="rating")


def frame_hash(values: np.ndarray, names: Any) -> str:
    """:func:`bayesmeta.results.data_hash` of a cases x indicators matrix and its names."""
    return data_hash(xr.Dataset({"rating": (("case", "indicator"), np.asarray(values,
                                                                              dtype=float))},
                                coords={"indicator": [str(n) for n in names]}))


def _result(spec: ModelSpec, fit: OrdinalCFAFit, values: np.ndarray, n_empty: int,
            ci_prob: float, dhash: str, ratings: xr.DataArray | None = None) -> CFAResult:
    table = parameter_table(fit, spec.factors, ci_prob=ci_prob)
    n_missing = int(np.isnan(values).sum())
    info = {
        "method": "WLSMV (DWLS, robust SE, scaled-shifted test), lavaan-style",
        "observations": int(values.shape[0]),
        "indicators": len(spec.observed),
        "factors": len(spec.factors),
        "missing": f"pairwise ({n_missing} of {values.size} ratings missing)",
        "converged": bool(fit.converged),
        "iterations": int(fit.iterations),
    }
    notes = [f"Standardized (std.all) estimates in 'classical'; intervals are {ci_prob:.0%} "
             f"Wald intervals from robust (sandwich) standard errors, as lavaan's "
             f"standardizedSolution(level = {ci_prob:g}); details() holds se, z, pvalue "
             f"and the unstandardized 'est' / 'est_se'."]
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
    if ratings is not None:
        extra["ratings"] = ratings
    res = CFAResult(table, title="Ordinal confirmatory factor analysis (WLSMV)", info=info,
                    extra=extra, notes=notes, ci_prob=ci_prob,
                    classical_ci_kind="Wald (robust SE)", data_hash=dhash)
    res._restore({"fit_measures": fit.fit_measures.to_dict(), "syntax": spec.syntax})
    return res


class CFAResult(Result):
    """Result of :func:`cfa` (WLSMV): lavaan's parameter table plus fit measures.

    ``summary()`` has one row per parameter, indexed ``(estimand, lhs, op, rhs)``
    (``("loading", "coh", "=~", "Expert.1.COH")``, ``("factor_correlation", "coh", "~~",
    "con")``, ``("threshold", "Expert.1.COH", "|", "t1")``), with columns ``classical``
    (lavaan's ``est.std``), ``classical_low``, ``classical_high`` (Wald intervals);
    ``details()`` has ``se``, ``z``, ``pvalue``, ``est`` and ``est_se`` (unstandardized),
    ``free``; :meth:`parameters` joins the two.
    """

    kind = "cfa"

    def _state(self) -> dict[str, Any]:
        return {"fit_measures": {k: float(v) for k, v in self._fit.items()},
                "syntax": "" if self.spec is None else self.spec.syntax}

    def _restore(self, state: dict[str, Any]) -> None:
        self._fit = pd.Series(state.get("fit_measures", {}), dtype=float).reindex(
            list(FIT_MEASURES))
        self.spec = parse_model(state["syntax"]) if state.get("syntax") else None

    def parameters(self) -> pd.DataFrame:
        """The estimates and their details side by side, one row per parameter (lavaan's
        ``parameterEstimates`` and ``standardizedSolution`` in one table)."""
        out = self._table.join(self._details)
        out.attrs = dict(self._table.attrs)
        return out

    def factor_scores(self, *, level: str = "output", method: str = "EBM") -> xr.DataArray:
        r"""Factor scores of every output (or their system means), as lavaan's
        ``lavPredict()``.

        Parameters
        ----------
        level : {"output", "system"}
            ``"output"``: one score per output (system x item) and factor; ``"system"``:
            the mean over items of each system's output scores.
        method : {"EBM", "regression"}
            ``"EBM"``: empirical Bayes modal, the mode of the factors' posterior given the
            output's ratings with the WLSMV estimates plugged in (lavaan's default for
            ordered indicators). ``"regression"``: lavaan's ``method = "regression"``, which
            lavaan 0.6-14 computes as EBM when indicators are ordered, so it equals
            ``"EBM"`` here too.

        Returns
        -------
        xarray.DataArray
            dims ``(system, item, trait)`` (``level="output"``; ``trait`` holds the factor
            names), ``(system, trait)`` (``level="system"``), or ``(output, trait)`` for a
            DataFrame without system and item labels; NaN for an output with no rating.

        Notes
        -----
        The EBM score of output :math:`n` minimises
        :math:`\tfrac12 \eta^\top\Psi^{-1}\eta - \sum_j \log[\Phi((\tau_{j,k_{nj}} -
        \lambda_j^\top\eta)/\sqrt{\theta_{jj}}) - \Phi((\tau_{j,k_{nj}-1} -
        \lambda_j^\top\eta)/\sqrt{\theta_{jj}})]` over its observed ratings (residual
        covariances ignored, as lavaan does); solved by Newton's method to machine precision
        (:func:`bayesmeta.validity.factor_scores.ebm_scores`). lavaan stops BFGS at a relative
        objective change of 1e-8: the two agree to about 1e-5 on SummEval.

        References
        ----------
        Rosseel (2012), lavaan, *J. Stat. Softw.* 48(2); Skrondal & Rabe-Hesketh (2004),
        *Generalized latent variable modeling*, Sec. 7.3.

        Examples
        --------
        >>> import bayesmeta as bm
        >>> ds = bm.datasets.simulated(random_seed=0, n_systems=5, n_items=20)
        >>> fit = bm.cfa("coh =~ Rater.1.COH + Rater.2.COH + Rater.3.COH", ds)
        >>> fit.factor_scores().dims
        ('system', 'item', 'trait')
        >>> fit.factor_scores(level="system").sizes["system"]
        5

        R equivalent: ``lavPredict(fit)`` (``method = "EBM"``) per output; system means with
        ``aggregate(lavPredict(fit), list(system = d$model_id), mean)``.
        """
        from bayesmeta.validity import factor_scores as fsc

        fsc.check_level(level)
        method = fsc.check_method(method)
        ratings = self.extra.get("ratings")
        if ratings is None or self.spec is None:
            raise ValueError("this CFA result keeps no ratings (saved by an older "
                             "bayesmeta); refit with bm.cfa to get factor scores.")
        codes, thresholds = _codes_and_thresholds(ratings, self._details)
        lam, psi, theta = _matrices(self._details, list(ratings["indicator"].values),
                                    list(self.spec.factors))
        values = fsc.ebm_scores(codes, lam, psi, theta, thresholds)
        out = fsc.from_cases(values, ratings, list(self.spec.factors))
        out.name = "factor_score"
        out.attrs = {"method": method, "level": "output",
                     "estimator": "empirical Bayes modal (lavPredict, EBM)"}
        if level == "system":
            out = fsc.system_means(out)
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
        n_free = int(self._details["free"].sum())

        def row(label: str, *vals: str) -> str:
            return f"  {label:<40}" + "".join(f"{v:>12}" for v in vals)

        def num(v: float, digits: int = 3) -> str:
            return "" if pd.isna(v) else f"{v:.{digits}f}"

        status = "ended normally" if info.get("converged", True) else "did NOT converge"
        lines = [self.title, "",
                 f"  bayesmeta {self.provenance['bayesmeta']} {status} after "
                 f"{info.get('iterations', '?')} iterations",
                 f"  signature: {self.signature()}", "",
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
        t = self.parameters().reset_index()
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


def _codes_and_thresholds(ratings: xr.DataArray, details: pd.DataFrame
                          ) -> tuple[np.ndarray, list[np.ndarray]]:
    """Category positions (0..K-1 among each indicator's observed values, NaN missing) and
    the estimated thresholds of each indicator (lavaan's t1, t2, ... in order)."""
    values = np.asarray(ratings.values, dtype=float)
    codes = np.full(values.shape, np.nan)
    est = details["est"]
    thresholds = []
    for j, ind in enumerate(ratings["indicator"].values):
        col = values[:, j]
        ok = ~np.isnan(col)
        levels = np.unique(col[ok])
        codes[ok, j] = np.searchsorted(levels, col[ok])
        rows = est.xs(("threshold", str(ind), "|"), level=("estimand", "lhs", "op"))
        t = rows.loc[[f"t{c + 1}" for c in range(len(levels) - 1)]].to_numpy(dtype=float)
        thresholds.append(t)
    return codes, thresholds


def _matrices(details: pd.DataFrame, indicators: list[str], factors: list[str]
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Loadings (J x F), factor correlations (F x F) and residual variances (J) from the
    unstandardized estimates of a WLSMV fit (``details()["est"]``)."""
    est = details["est"]
    lam = np.zeros((len(indicators), len(factors)))
    psi = np.eye(len(factors))
    theta = np.zeros(len(indicators))
    for (kind, lhs, _op, rhs), value in est.items():
        if kind == "loading":
            lam[indicators.index(rhs), factors.index(lhs)] = value
        elif kind == "factor_correlation":
            a, b = factors.index(lhs), factors.index(rhs)
            psi[a, b] = psi[b, a] = value
        elif kind == "residual_variance":
            theta[indicators.index(lhs)] = value
    return lam, psi, theta
