r"""Confirmatory factor analysis of ordinal indicators by DWLS with robust standard errors
and a mean-and-variance adjusted test: lavaan's ``cfa(..., ordered = TRUE, std.lv = TRUE)``
(estimator ``"WLSMV"``).

Model (delta parameterization, unit scale factors). Each indicator is the coarsened
version of a standard-normal :math:`y^*`,

.. math:: y^* = \Lambda \eta + \varepsilon, \qquad \operatorname{Var}(\eta) = \Psi
          \ (\operatorname{diag} \Psi = 1), \qquad
          \Sigma^*(\theta) = \Lambda \Psi \Lambda^\top + \Theta,

with :math:`\operatorname{diag}\Theta = 1 - \operatorname{diag}(\Lambda\Psi\Lambda^\top)`
(not free), free residual covariances where the syntax asks for them, and one free threshold
per sample threshold. The sample statistics :math:`s = (\hat\tau, \hat\rho)` (thresholds and
polychoric correlations, :mod:`bayesmeta.validity.polychoric`) have asymptotic covariance
:math:`\Gamma / N`.

Estimation and inference (Muthén, du Toit & Spisic 1997; lavaan):

* **DWLS**: minimise :math:`F(\theta) = (s - \sigma(\theta))^\top W (s - \sigma(\theta))`
  with the diagonal weight :math:`W = \operatorname{diag}(\Gamma)^{-1}`. The thresholds are
  saturated, so :math:`\hat\tau` equals the sample thresholds.
* **Robust (sandwich) covariance** with :math:`\Delta = \partial\sigma/\partial\theta^\top`:
  :math:`\widehat{\operatorname{Var}}(\hat\theta) = (N-1)^{-1} (\Delta^\top W \Delta)^{-1}
  \Delta^\top W \Gamma W \Delta (\Delta^\top W \Delta)^{-1}`.
* **Test**: :math:`T = (N - 1) F(\hat\theta)` on :math:`d` = #statistics - #parameters degrees of
  freedom; the **scaled-shifted** statistic (Asparouhov & Muthén 2010) with
  :math:`U = W - W\Delta(\Delta^\top W\Delta)^{-1}\Delta^\top W`:
  :math:`a = \sqrt{d / \operatorname{tr}[(U\Gamma)^2]}`,
  :math:`b = d - a \operatorname{tr}(U\Gamma)`, :math:`T_{ss} = aT + b`, also on :math:`d`
  degrees of freedom (lavaan's ``"scaled.shifted"``; Satorra & Bentler 1994 for the
  trace approach).
* **Baseline** (for CFI/TLI): all polychorics zero, thresholds free, scaled the same way.
* **Fit indices** as lavaan computes them (:math:`N` cases, :math:`B` the baseline):
  :math:`\mathrm{CFI} = 1 - \max(T-d, 0)/\max(T-d, T_B-d_B, 0)`,
  :math:`\mathrm{TLI} = 1 - \frac{(T-d)\,d_B}{(T_B-d_B)\,d}`,
  :math:`\mathrm{RMSEA} = \sqrt{\max(T/(N'd) - 1/N', 0)}` with :math:`N' = N - 1`; the
  ``.scaled`` versions put the
  scaled-shifted statistics in place of :math:`T` and :math:`T_B`. SRMR is the root mean
  square of the correlation residuals over the :math:`p(p+1)/2` elements of the lower
  triangle with its (zero) diagonal, lavaan's categorical ``srmr``.

Sample size: as lavaan does for (D)WLS, the test statistic, the parameter covariance and
RMSEA use :math:`N - 1` (lavaan's DWLS objective carries a factor :math:`(N-1)/N`, and its
``lav_utils_get_ntotal`` subtracts one per group for every estimator but ML), while
:math:`\Gamma` is scaled by :math:`N`.

References
----------
Muthén, B. (1984). A general structural equation model with dichotomous, ordered
categorical, and continuous latent variable indicators. *Psychometrika*, 49, 115-132.
Muthén, B., du Toit, S. H. C., & Spisic, D. (1997). Robust inference using weighted least
squares and quadratic estimating equations in latent variable modeling with categorical
and continuous outcomes. Unpublished technical report.
Satorra, A., & Bentler, P. M. (1994). Corrections to test statistics and standard errors in
covariance structure analysis. In *Latent variables analysis* (pp. 399-419). Sage.
Asparouhov, T., & Muthén, B. (2010). Simple second order chi-square correction. Mplus
technical appendix.
Rosseel, Y. (2012). lavaan: An R package for structural equation modeling. *Journal of
Statistical Software*, 48(2).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import optimize, stats

from bayesmeta.validity.polychoric import PolychoricFit
from bayesmeta.validity.syntax import ModelSpec

FIT_MEASURES = ("chisq", "df", "pvalue", "chisq.scaled", "df.scaled", "pvalue.scaled",
                "chisq.scaling.factor", "chisq.shift.parameter", "baseline.chisq",
                "baseline.df", "baseline.chisq.scaled", "cfi", "tli", "rmsea", "cfi.scaled",
                "tli.scaled", "rmsea.scaled", "srmr")


@dataclass
class _Structure:
    """Index bookkeeping of the free parameters of the correlation structure."""

    p: int
    m: int
    lam_fixed: np.ndarray  # p x m, fixed values (0 where absent)
    lam_free: list[tuple[int, int]]
    psi_fixed: np.ndarray  # m x m, 1 on the diagonal
    psi_free: list[tuple[int, int]]
    theta_fixed: np.ndarray  # p x p, off-diagonal fixed residual covariances
    theta_free: list[tuple[int, int]]

    @property
    def n_par(self) -> int:
        return len(self.lam_free) + len(self.psi_free) + len(self.theta_free)

    def matrices(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        lam, psi, theta = self.lam_fixed.copy(), self.psi_fixed.copy(), self.theta_fixed.copy()
        k = 0
        for i, f in self.lam_free:
            lam[i, f] = x[k]
            k += 1
        for a, b in self.psi_free:
            psi[a, b] = psi[b, a] = x[k]
            k += 1
        for i, j in self.theta_free:
            theta[i, j] = theta[j, i] = x[k]
            k += 1
        return lam, psi, theta

    def implied(self, x: np.ndarray) -> np.ndarray:
        """Model-implied correlation matrix (unit diagonal)."""
        lam, psi, theta = self.matrices(x)
        sigma = lam @ psi @ lam.T + theta
        np.fill_diagonal(sigma, 1.0)
        return sigma

    def jacobian(self, x: np.ndarray, pairs: list[tuple[int, int]]) -> np.ndarray:
        """d sigma_ij / d x for the off-diagonal pairs (rows) and free parameters."""
        lam, psi, _ = self.matrices(x)
        rows, cols = np.array([i for i, _ in pairs]), np.array([j for _, j in pairs])
        lp = lam @ psi
        out = np.zeros((len(pairs), self.n_par))
        k = 0
        for i, f in self.lam_free:
            d = np.zeros((self.p, self.p))
            d[i, :] += lp[:, f]
            d[:, i] += lp[:, f]
            out[:, k] = d[rows, cols]
            k += 1
        for a, b in self.psi_free:
            d = np.outer(lam[:, a], lam[:, b])
            out[:, k] = (d + d.T)[rows, cols]
            k += 1
        for i, j in self.theta_free:
            out[:, k] = ((rows == i) & (cols == j)) | ((rows == j) & (cols == i))
            k += 1
        return out


def _structure(spec: ModelSpec, variables: list[str]) -> _Structure:
    factors = list(spec.factors)
    p, m = len(variables), len(factors)
    pos = {v: i for i, v in enumerate(variables)}
    lam_fixed, lam_free = np.zeros((p, m)), []
    for ld in spec.loadings:
        i, f = pos[ld.indicator], factors.index(ld.factor)
        if ld.fixed is None:
            lam_free.append((i, f))
        else:
            lam_fixed[i, f] = ld.fixed
    psi_fixed, psi_free = np.eye(m), []
    for (a, b), value in spec.factor_correlations().items():
        ia, ib = factors.index(a), factors.index(b)
        if value is None:
            psi_free.append((ia, ib))
        else:
            psi_fixed[ia, ib] = psi_fixed[ib, ia] = value
    theta_fixed, theta_free = np.zeros((p, p)), []
    for cov in spec.residual_covariances:
        i, j = pos[cov.lhs], pos[cov.rhs]
        if cov.fixed is None:
            theta_free.append((i, j))
        else:
            theta_fixed[i, j] = theta_fixed[j, i] = cov.fixed
    return _Structure(p, m, lam_fixed, lam_free, psi_fixed, psi_free, theta_fixed, theta_free)


def _scaled_shifted(delta: np.ndarray, w: np.ndarray, gamma: np.ndarray, df: int,
                    stat: float) -> tuple[float, float, float]:
    """Asparouhov-Muthén (2010) scaled-shifted statistic: returns (T_ss, 1/a, b)."""
    wd = delta * w[:, None]
    u = np.diag(w) - wd @ np.linalg.solve(delta.T @ wd, wd.T)
    ug = u @ gamma
    tr1, tr2 = np.trace(ug), np.sum(ug * ug.T)
    a = np.sqrt(df / tr2)
    shift = df - a * tr1
    return float(a * stat + shift), float(1 / a), float(shift)


def _indices(t: float, df: float, tb: float, dfb: float, n: int) -> tuple[float, float, float]:
    """CFI, TLI and RMSEA as lavaan 0.6-14 computes them (lav_fit_cfi/tli/rmsea); ``n`` is
    the sample size used in RMSEA (N - 1 for DWLS)."""
    t1, t2 = max(t - df, 0.0), max(t - df, tb - dfb, 0.0)
    cfi = 1.0 if np.isclose(t1, 0) and np.isclose(t2, 0) else 1 - t1 / t2
    num, den = (t - df) * dfb, (tb - dfb) * df
    tli = 1 - num / den if df > 0 and abs(den) > 0 else 1.0
    rmsea = float(np.sqrt(max(t / n / df - 1 / n, 0.0))) if df > 0 else 0.0
    return float(cfi), float(tli), rmsea


@dataclass(frozen=True)
class OrdinalCFAFit:
    """Raw output of :func:`fit_wlsmv`: the parameter table, fit measures and matrices."""

    table: pd.DataFrame
    fit_measures: pd.Series
    sample: PolychoricFit
    implied: np.ndarray
    converged: bool
    iterations: int
    warnings: tuple[str, ...] = ()


def fit_wlsmv(spec: ModelSpec, sample: PolychoricFit) -> OrdinalCFAFit:
    r"""Fit an ordinal CFA by DWLS to thresholds and polychorics (lavaan's WLSMV).

    Parameters
    ----------
    spec : ModelSpec
        From :func:`bayesmeta.validity.syntax.parse_model`; its indicators must be
        ``sample.variables`` (in any order).
    sample : PolychoricFit
        From :func:`bayesmeta.validity.polychoric.polychoric` with ``acov=True``.

    Returns
    -------
    OrdinalCFAFit
        ``table``: one row per parameter with ``lhs``, ``op``, ``rhs``, ``est``
        (unstandardized), ``est_se``, ``std`` (lavaan's ``est.std``, std.all), ``se``,
        ``z``, ``pvalue``, ``free``; ``fit_measures``: see :data:`FIT_MEASURES`.

    Notes
    -----
    Formulas in the module docstring. lavaan equivalent:
    ``cfa(model, data, ordered = TRUE, std.lv = TRUE, missing = "pairwise")`` followed by
    ``standardizedSolution(fit)`` and ``fitMeasures(fit)``.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmeta.validity.syntax import parse_model
    >>> from bayesmeta.validity.polychoric import polychoric
    >>> rng = np.random.default_rng(1)
    >>> eta = rng.normal(size=(3000, 1))
    >>> ystar = 0.8 * eta + 0.6 * rng.normal(size=(3000, 3))
    >>> y = np.digitize(ystar, [-1.0, 0.0, 1.0])
    >>> fit = fit_wlsmv(parse_model("f =~ x1 + x2 + x3"), polychoric(y))
    >>> bool(np.allclose(fit.table.loc[fit.table.op == "=~", "std"], 0.8, atol=0.05))
    True
    """
    if sample.gamma is None:
        raise ValueError("sample has no asymptotic covariance; call polychoric(..., "
                         "acov=True).")
    variables = list(sample.variables)
    missing = [v for v in spec.observed if v not in variables]
    if missing or len(spec.observed) != len(variables):
        raise ValueError(f"the model's indicators {list(spec.observed)} must be the sample "
                         f"statistics' variables {variables}.")
    st = _structure(spec, variables)
    pairs = sample.pairs
    n, nth, npair = sample.n_obs, sample.n_thresholds, len(pairs)
    gamma = sample.gamma
    w = 1 / np.diag(gamma)
    w_cor = w[nth:]
    r = np.array([sample.correlation[i, j] for i, j in pairs])
    df = nth + npair - (nth + st.n_par)
    if df < 0:
        raise ValueError(f"the model has {nth + st.n_par} free parameters but only "
                         f"{nth + npair} sample statistics (df = {df}): not identified.")

    rows, cols = np.array([i for i, _ in pairs]), np.array([j for _, j in pairs])
    sw = np.sqrt(w_cor)

    def resid(x: np.ndarray) -> np.ndarray:
        return sw * (r - st.implied(x)[rows, cols])

    def jac(x: np.ndarray) -> np.ndarray:
        return -sw[:, None] * st.jacobian(x, pairs)

    x0 = np.concatenate([np.full(len(st.lam_free), 0.7), np.zeros(len(st.psi_free)),
                         np.zeros(len(st.theta_free))])
    if st.n_par:
        opt = optimize.least_squares(resid, x0, jac=jac, method="lm", xtol=1e-14,
                                     ftol=1e-14, gtol=1e-14, max_nfev=2000)
        x, converged, iters = _orient(st, opt.x), bool(opt.success), int(opt.nfev)
    else:
        x, converged, iters = x0, True, 0
    sigma = st.implied(x)

    # sandwich covariance of (thresholds, structural parameters)
    delta = np.zeros((nth + npair, nth + st.n_par))
    delta[:nth, :nth] = np.eye(nth)
    delta[nth:, nth:] = st.jacobian(x, pairs)
    wd = delta * w[:, None]
    info = delta.T @ wd
    if np.linalg.cond(info) > 1e12:
        raise ValueError("the information matrix of the fitted model is singular, so the "
                         "model is not identified (empirically, at these data); lavaan "
                         "says 'Could not compute standard errors!'. Check factors with few "
                         "indicators and correlations fixed at zero.")
    bread = np.linalg.inv(info)
    vcov = bread @ wd.T @ gamma @ wd @ bread / (n - 1)

    # tests and fit indices
    res = r - sigma[rows, cols]
    chisq = float((n - 1) * np.sum(w_cor * res * res))
    measures = {"chisq": chisq, "df": float(df), "pvalue": float(stats.chi2.sf(chisq, df))}
    base_delta = np.zeros((nth + npair, nth))
    base_delta[:nth] = np.eye(nth)
    base = float((n - 1) * np.sum(w_cor * r * r))
    if df > 0:
        scaled, factor, shift = _scaled_shifted(delta, w, gamma, df, chisq)
    else:
        scaled, factor, shift = chisq, np.nan, np.nan
    base_scaled, *_ = _scaled_shifted(base_delta, w, gamma, npair, base)
    measures.update({"chisq.scaled": scaled, "df.scaled": float(df),
                     "pvalue.scaled": float(stats.chi2.sf(scaled, df)),
                     "chisq.scaling.factor": factor, "chisq.shift.parameter": shift,
                     "baseline.chisq": base, "baseline.df": float(npair),
                     "baseline.chisq.scaled": base_scaled})
    cfi, tli, rmsea = _indices(chisq, df, base, npair, n - 1)
    cfi_s, tli_s, rmsea_s = _indices(scaled, df, base_scaled, npair, n - 1)
    measures.update({"cfi": cfi, "tli": tli, "rmsea": rmsea, "cfi.scaled": cfi_s,
                     "tli.scaled": tli_s, "rmsea.scaled": rmsea_s,
                     "srmr": float(np.sqrt(np.sum(res * res) / (npair + len(variables))))})
    table = _parameter_table(spec, variables, sample, st, x, vcov)
    return OrdinalCFAFit(table, pd.Series(measures)[list(FIT_MEASURES)], sample, sigma,
                         converged, iters, _warnings(st, x, variables, spec, converged))


def _warnings(st: _Structure, x: np.ndarray, variables: list[str], spec: ModelSpec,
              converged: bool) -> tuple[str, ...]:
    """lavaan's post-fit checks: convergence, negative residual variances, a factor
    correlation matrix that is not positive definite."""
    out = []
    if not converged:
        out.append("the DWLS optimizer did not converge; estimates are unreliable.")
    lam, psi, _ = st.matrices(x)
    resid = 1 - np.einsum("ik,kl,il->i", lam, psi, lam)
    if (resid < 0).any():
        names = ", ".join(v for v, r in zip(variables, resid, strict=True) if r < 0)
        out.append(f"negative residual variance (Heywood case) for {names}: the model may "
                   f"be misspecified.")
    if st.m > 1 and np.linalg.eigvalsh(psi).min() <= 0:
        out.append(f"the factor correlation matrix ({', '.join(spec.factors)}) is not "
                   f"positive definite (smallest eigenvalue "
                   f"{np.linalg.eigvalsh(psi).min():.3g}).")
    return tuple(out)


def _orient(st: _Structure, x: np.ndarray) -> np.ndarray:
    """Reflect factors whose loadings sum to a negative number (std.lv leaves the sign of a
    factor free unless a fixed loading or fixed correlation pins it; lavaan's start values
    make the loadings positive)."""
    lam, _, _ = st.matrices(x)
    pinned = (st.lam_fixed != 0).any(axis=0)
    off = st.psi_fixed - np.eye(st.m)
    pinned |= (off != 0).any(axis=0)
    sign = np.where((lam.sum(axis=0) < 0) & ~pinned, -1.0, 1.0)
    out = x.copy()
    k = 0
    for _, f in st.lam_free:
        out[k] *= sign[f]
        k += 1
    for a, b in st.psi_free:
        out[k] *= sign[a] * sign[b]
        k += 1
    return out


def _parameter_table(spec: ModelSpec, variables: list[str], sample: PolychoricFit,
                     st: _Structure, x: np.ndarray, vcov: np.ndarray) -> pd.DataFrame:
    """lavaan-ordered rows (=~, ~~ covariances, |, ~~ variances) with unstandardized and
    standardized (std.all) estimates; standardized SEs by the delta method."""
    factors, nth = list(spec.factors), sample.n_thresholds
    th_start = np.concatenate([[0], np.cumsum([len(t) for t in sample.thresholds])])
    rows: list[dict] = []  # each: lhs, op, rhs, value(theta_full) -> (est, std), free index

    def add(lhs, op, rhs, fn, free_idx=None):
        rows.append({"lhs": lhs, "op": op, "rhs": rhs, "fn": fn, "free_idx": free_idx})

    pos = {v: i for i, v in enumerate(variables)}
    k_of = {("lam", *key): nth + k for k, key in enumerate(st.lam_free)}
    k_of.update({("psi", *key): nth + len(st.lam_free) + k for k, key in enumerate(st.psi_free)})
    off = nth + len(st.lam_free) + len(st.psi_free)
    k_of.update({("theta", *key): off + k for k, key in enumerate(st.theta_free)})

    def resid_var(mats, i):
        lam, psi, _ = mats
        return 1.0 - lam[i] @ psi @ lam[i]

    for ld in spec.loadings:
        i, f = pos[ld.indicator], factors.index(ld.factor)
        add(ld.factor, "=~", ld.indicator, lambda mats, th, i=i, f=f: (mats[0][i, f],) * 2,
            k_of.get(("lam", i, f)))
    for (a, b) in spec.factor_correlations():
        ia, ib = factors.index(a), factors.index(b)
        add(a, "~~", b, lambda mats, th, ia=ia, ib=ib: (mats[1][ia, ib],) * 2,
            k_of.get(("psi", ia, ib)))
    for cov in spec.residual_covariances:
        i, j = pos[cov.lhs], pos[cov.rhs]

        def fn(mats, th, i=i, j=j):
            est = mats[2][i, j]
            return est, est / np.sqrt(resid_var(mats, i) * resid_var(mats, j))

        add(cov.lhs, "~~", cov.rhs, fn, k_of.get(("theta", i, j)))
    for v, t in zip(variables, sample.thresholds, strict=True):
        for c in range(len(t)):
            k = int(th_start[pos[v]] + c)
            add(v, "|", f"t{c + 1}", lambda mats, th, k=k: (th[k],) * 2, k)
    for v in variables:
        add(v, "~~", v, lambda mats, th, i=pos[v]: (resid_var(mats, i),) * 2, "derived")
    for f in factors:
        add(f, "~~", f, lambda mats, th: (1.0, 1.0), None)

    full = np.concatenate([sample.statistics[:nth], x])

    def evaluate(theta_full: np.ndarray) -> np.ndarray:
        mats, th = st.matrices(theta_full[nth:]), theta_full[:nth]
        return np.array([row["fn"](mats, th) for row in rows])

    values = evaluate(full)
    # delta-method Jacobian of (est, std) by central differences (step 1e-6: error ~1e-10)
    h = 1e-6
    jac = np.zeros((len(rows), 2, full.size))
    for k in range(nth, full.size):  # thresholds enter linearly: unit derivative, below
        e = np.zeros(full.size)
        e[k] = h
        jac[:, :, k] = (evaluate(full + e) - evaluate(full - e)) / (2 * h)
    for q, row in enumerate(rows):
        if row["op"] == "|":
            jac[q, :, row["free_idx"]] = 1.0
    var = np.einsum("rsk,kl,rsl->rs", jac, vcov, jac)
    se = np.sqrt(np.maximum(var, 0.0))
    table = pd.DataFrame({
        "lhs": [r_["lhs"] for r_ in rows], "op": [r_["op"] for r_ in rows],
        "rhs": [r_["rhs"] for r_ in rows], "est": values[:, 0], "est_se": se[:, 0],
        "std": values[:, 1], "se": se[:, 1],
        "free": [isinstance(r_["free_idx"], int) for r_ in rows],
    })
    table.loc[[r_["free_idx"] == "derived" for r_ in rows], "est_se"] = np.nan
    table["z"] = np.where(table["se"] > 0, table["std"] / table["se"].where(table["se"] > 0),
                          np.nan)
    table["pvalue"] = 2 * stats.norm.sf(np.abs(table["z"]))
    return table


#: Estimands of the rows of a CFA parameter table (index level ``estimand``).
ESTIMANDS = ("loading", "threshold", "factor_correlation", "residual_variance", "variance",
             "covariance")


def estimand(lhs: str, op: str, rhs: str, factors: tuple[str, ...] | list[str]) -> str:
    """The estimand of one lavaan parameter row: ``"loading"`` (``=~``), ``"threshold"``
    (``|``), ``"factor_correlation"`` (``~~`` between two factors), ``"variance"`` (``~~``
    of a factor with itself), ``"residual_variance"`` (``~~`` of an indicator with itself),
    ``"covariance"`` (any other ``~~``, e.g. a residual covariance).

    Examples
    --------
    >>> from bayesmeta.validity.wlsmv import estimand
    >>> estimand("coh", "~~", "rel", ["coh", "rel"]), estimand("x1", "~~", "x1", ["coh"])
    ('factor_correlation', 'residual_variance')
    """
    if op == "=~":
        return "loading"
    if op == "|":
        return "threshold"
    if op != "~~":
        raise ValueError(f"unknown lavaan operator {op!r} in '{lhs} {op} {rhs}'.")
    if lhs == rhs:
        return "variance" if lhs in factors else "residual_variance"
    if lhs in factors and rhs in factors:
        return "factor_correlation"
    return "covariance"


def parameter_table(fit: OrdinalCFAFit, factors: tuple[str, ...] | list[str], *,
                    ci_prob: float) -> pd.DataFrame:
    r"""The parameters of a WLSMV fit in bayesmeta's table shape.

    Index ``(estimand, lhs, op, rhs)`` (:func:`estimand`), in lavaan's row order; columns
    ``classical`` (lavaan's ``est.std``, std.all), ``classical_low`` / ``classical_high``
    (the Wald interval :math:`\hat\theta \pm z_{(1+p)/2}\,\mathrm{se}`, lavaan's
    ``standardizedSolution(fit, level = p)``), then ``se``, ``z``, ``pvalue``, ``est``,
    ``est_se`` and ``free``, which a :class:`~bayesmeta.results.Result` moves to
    ``details()``.
    """
    t = fit.table
    z = stats.norm.ppf(0.5 + ci_prob / 2)
    index = pd.MultiIndex.from_arrays(
        [[estimand(a, o, b, factors) for a, o, b in zip(t["lhs"], t["op"], t["rhs"],
                                                        strict=True)],
         t["lhs"].astype(str), t["op"].astype(str), t["rhs"].astype(str)],
        names=["estimand", "lhs", "op", "rhs"])
    out = pd.DataFrame({
        "classical": t["std"].to_numpy(),
        "classical_low": (t["std"] - z * t["se"]).to_numpy(),
        "classical_high": (t["std"] + z * t["se"]).to_numpy(),
        "se": t["se"].to_numpy(), "z": t["z"].to_numpy(), "pvalue": t["pvalue"].to_numpy(),
        "est": t["est"].to_numpy(), "est_se": t["est_se"].to_numpy(),
        "free": t["free"].to_numpy(dtype=bool),
    }, index=index)
    return out
