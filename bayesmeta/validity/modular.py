r"""The modular Bayesian metric-validity route: the traits from the experts' ratings alone,
each metric's validity coefficients and error variance given them
(``bm.metric_variance(data, bayes_fit, estimator="modular")``; card:
``models/metric_validity.md``).

The model is the joint model's measurement structure (:mod:`bayesmeta.validity.joint_model`):
traits :math:`f_n \sim N(0, \Psi)`, ordinal ratings through the CFA's probit measurement
model, and standardized metric scores :math:`x_{nm} = a_m + b_m^\top f_n + e_{nm}`,
:math:`e_{nm} \sim N(0, \sigma_m^2)`. The CFA's parameters and the traits' posterior
:math:`p(f \mid y)` are the Bayesian CFA's, from the ratings alone: the metrics do not feed
back into them (a cut in the sense of Plummer 2015, on the CFA's parameters; each output's
traits are integrated out of the metric's likelihood against :math:`p(f_n \mid y)`
rather than drawn, which would attenuate :math:`b_m`), so the traits stay the experts' by
construction. That guards against interpretational
confounding (Burt 1976), where many metrics redefine the traits: on SummEval's 43
metrics the joint posterior moves a factor correlation by up to 0.29
(``models/metric_validity.md``).

Given the ratings :math:`y`, each output's traits have posterior mean
:math:`\bar f_n = E[f_n \mid y]` and covariance :math:`\Sigma_n = \operatorname{Var}(f_n
\mid y)` (the CFA's factor-score draws), and :math:`f_n = \bar f_n + u_n` with
:math:`u_n` uncorrelated with :math:`\bar f_n` (a Berkson error). So

.. math:: E[x_{nm} \mid y] = a_m + b_m^\top \bar f_n, \qquad
          \operatorname{Var}(x_{nm} \mid y) = b_m^\top \Sigma_n b_m + \sigma_m^2 :

regressing the metric on the posterior-mean scores estimates :math:`b_m` without
attenuation (regression calibration, Carroll et al. 2006, ch. 4), and the residual
variance exceeds the error variance by the scores' own uncertainty. (Regressing instead on
each draw's scores, or on each draw's conditional means given its imputed latent
responses, attenuates :math:`b_m`: those imputations ignore the metric, so their noise is
uncorrelated with it; 9% on a simulated dataset, ``models/metric_validity.md``.)

Each metric is fitted on its own, with a normal likelihood of residual variance
:math:`s_m^2 = b_m^\top \bar\Sigma b_m + \sigma_m^2` (:math:`\bar\Sigma` the average of
:math:`\Sigma_n` over the outputs it scored; the spread of :math:`\Sigma_n` over outputs
is ignored, which leaves :math:`\hat b_m` consistent) and the reference prior
:math:`p(a_m, b_m, s_m^2) \propto s_m^{-2}` on :math:`\{\sigma_m^2 > 0\}`. Its posterior is
drawn exactly: :math:`s_m^2 \sim \mathrm{RSS}/\chi^2_{n-T-1}`, then
:math:`(a_m, b_m) \mid s_m^2 \sim N(\hat\gamma, s_m^2 (X^\top X)^{-1})`, both redrawn where
:math:`\sigma_m^2 \le 0`. One draw per CFA draw, whose factor correlations :math:`\Psi`
standardize it; the regression draws are independent, so the table's R-hat and ESS check
little beyond :math:`\Psi`. The factor-score draws behind :math:`\bar f_n` are checked
separately: per draw, their projections on each metric,
:math:`\sum_n f^{(s)}_{nt} x_{nm} / n_m`, must reach R-hat <= 1.01 and bulk ESS >= 400, or a
:class:`~bayesmeta.convergence.ConvergenceWarning` and a note say so (the CFA's own check
covers its loadings, thresholds and factor correlations, not the scores). What is left
out: the posterior-mean scores' own dependence on the CFA's parameters (second order with
hundreds of outputs), the spread of :math:`\Sigma_n` over outputs (the interval can be a
few per cent narrow where it is large), and the information the metrics carry about the
traits (the cut). Cost: :math:`O(S N T (T + M))` NumPy, linear in the number of metrics,
no MCMC.

Estimands and table: those of the joint route (:func:`~bayesmeta.validity._joint_build.
estimand_draws`, model-implied variance :math:`V_m = b_m^\top \Psi b_m + \sigma_m^2`).

References
----------
Plummer, M. (2015). Cuts in Bayesian graphical models. *Statistics and Computing*, 25,
37-43.
Burt, R. S. (1976). Interpretational confounding of unobserved variables in structural
equation models. *Sociological Methods & Research*, 5, 3-52.
Carroll, R. J., Ruppert, D., Stefanski, L. A., & Crainiceanu, C. M. (2006). *Measurement
Error in Nonlinear Models* (2nd ed.). Chapman & Hall (ch. 4, regression calibration;
Berkson errors).
"""

from __future__ import annotations

import time
import warnings
import zlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayesmeta.data import select
from bayesmeta.options import resolve_seed
from bayesmeta.results import Result, data_hash
from bayesmeta.summaries import CI_PROB
from bayesmeta.validity._factor_common import _claims
from bayesmeta.validity._joint_build import JointData, prepare

#: Redraws allowed for a (draw, metric) whose sigma^2 came out <= 0 before giving up.
MAX_REDRAWS = 200


class ModularValidityResult(Result):
    """Result of the modular route (``bm.metric_variance(data, bayes_cfa,
    estimator="modular")``): ``metric_variance``'s table with the joint route's rows, the
    posterior in ``idata`` (the CFA's chains and draws), ``probability()`` and
    ``residual_correlation_draws()`` (``bm.metric_residuals``)."""

    kind = "modular_metric_validity"

    def probability(self, metric: str, trait: str, trait2: str) -> float:
        """Posterior probability that ``metric``'s validity coefficient on ``trait`` is at
        least its coefficient on ``trait2``."""
        from bayesmeta.validity.joint_model import coefficient_probability

        return coefficient_probability(self.idata.posterior, metric, trait, trait2)

    def residual_correlation_draws(self, metrics: Sequence[str] | None = None
                                   ) -> tuple[np.ndarray, list[str], int]:
        r"""Per-draw correlations of the metrics' errors :math:`e_{nm}` (chain, draw,
        metric, metric2) of ``metrics`` (default all) over the outputs with all of them
        scored, their names and the number of those outputs (used by
        ``bm.metric_residuals`` on this fit). The residuals on the posterior-mean scores,
        :math:`r_n = x_n - a - B \bar f_n = B u_n + e_n`, have covariance
        :math:`B \bar\Sigma B^\top + \Sigma_e`, so :math:`\Sigma_e` is their sample
        covariance less :math:`B \bar\Sigma B^\top` (MetricEval App. A.6 with the scores'
        own uncertainty removed); its correlations, clipped to [-1, 1], are returned. A
        plug-in per draw: its spread is the parameters' posterior uncertainty, not the
        sampling error of a correlation over these outputs (about
        :math:`(1 - \rho^2)/\sqrt{N}`)."""
        from bayesmeta.validity.joint_model import metric_rows

        jd, moments = getattr(self, "_jd", None), getattr(self, "_moments", None)
        if jd is None or moments is None:
            raise ValueError("this result was saved and loaded: the standardized metric "
                             "scores and the factor scores are not kept; refit to compute "
                             "residuals.")
        keep, idx, rows = metric_rows(jd, metrics)
        if rows.size < 3:
            raise ValueError(f"only {rows.size} output(s) have all of {keep[:5]} scored: too "
                             f"few for residual correlations.")
        mean, cov = moments
        post = self.idata.posterior
        a = post["metric_intercept"].transpose("chain", "draw", "metric").values[..., idx]
        b = post["metric_loading"].transpose("chain", "draw", "metric", "trait").values
        sd = post["error_sd"].transpose("chain", "draw", "metric").values[..., idx]
        return (residual_error_correlations(mean[rows], cov[rows].mean(0),
                                            jd.x[rows][:, idx], a, b[:, :, idx], sd),
                keep, int(rows.size))


def residual_error_correlations(mean: np.ndarray, cov_bar: np.ndarray, x: np.ndarray,
                                a: np.ndarray, b: np.ndarray, sd: np.ndarray) -> np.ndarray:
    """Correlations of the metric errors per draw (see
    :meth:`ModularValidityResult.residual_correlation_draws`): ``mean`` (N, T) posterior-mean
    scores, ``cov_bar`` (T, T) their average posterior covariance, ``x`` (N, M) complete,
    ``a`` (C, D, M), ``b`` (C, D, M, T), ``sd`` (C, D, M) the drawn error sds, which scale
    the covariances (the moment estimate of a variance can fall below 0). Returns
    (C, D, M, M), unit diagonal, clipped to [-1, 1]."""
    N, M = x.shape
    C, D = a.shape[:2]
    a, b, sd = a.reshape(C * D, M), b.reshape(C * D, M, -1), sd.reshape(C * D, M)
    out = np.empty((C * D, M, M))
    for lo in range(0, C * D, 64):  # (64, N, M) residuals at a time
        sl = slice(lo, min(C * D, lo + 64))
        r = x[None] - a[sl, None, :] - mean @ np.swapaxes(b[sl], 1, 2)  # (s, N, M)
        r = r - r.mean(1, keepdims=True)
        cov = (np.swapaxes(r, 1, 2) @ r / (N - 1)
               - b[sl] @ cov_bar @ np.swapaxes(b[sl], 1, 2))
        out[sl] = np.clip(cov / (sd[sl, :, None] * sd[sl, None, :]), -1.0, 1.0)
        idx = np.arange(M)
        out[sl, idx, idx] = 1.0
    return out.reshape(C, D, M, M)


def score_moments(fit: Any, jd: JointData) -> tuple[np.ndarray, np.ndarray]:
    """Each output's posterior mean (output, trait) and covariance (output, trait, trait) of
    the traits, from a Bayesian CFA's factor-score draws, on the rows and in the trait order
    of ``jd``. Raises where the fit is not a Bayesian CFA of these outputs and traits."""
    post = getattr(fit, "idata", None)
    post = None if post is None else post.posterior
    if post is None or "factor_score" not in post:
        raise TypeError("estimator='modular' needs a Bayesian CFA of the ratings: "
                        "bm.cfa(model, data, estimator='bayes').")
    scores = post["factor_score"]
    d = jd.design
    traits = [str(t) for t in scores["trait"].values]
    if scores.sizes["output"] != d.n_rows or sorted(traits) != sorted(d.factors):
        raise ValueError(f"the CFA was fitted to other outputs or traits than these data "
                         f"({scores.sizes['output']} outputs, traits {traits}; here "
                         f"{d.n_rows} outputs, traits {list(d.factors)}): pass the data and "
                         f"model the CFA was fitted to.")
    if "system" in scores.coords and jd.data.system is not None:
        same = (np.array(scores["system"].values, dtype=str) == np.array(jd.data.system,
                                                                        dtype=str)).all()
        same &= (np.array(scores["item"].values, dtype=str) == np.array(jd.data.item,
                                                                       dtype=str)).all()
        if not same:
            raise ValueError("the CFA's outputs (system, item) differ from these data's: pass "
                             "the data the CFA was fitted to.")
    f = scores.transpose("chain", "draw", "output", "trait").values[..., [
        traits.index(t) for t in d.factors]]
    f = f.reshape(-1, *f.shape[2:])  # (S, N, T)
    mean = f.mean(0)
    dev = f - mean
    return mean, np.einsum("snt,snu->ntu", dev, dev) / (f.shape[0] - 1)


def score_check(fit: Any, jd: JointData) -> tuple[float, float]:
    r"""Worst R-hat and lowest bulk ESS of the factor-score draws' projections on the
    metrics, :math:`\sum_n f^{(s)}_{nt} x_{nm} / n_m` per draw (T x M quantities; missing
    scores count 0): whether the chains agree on the scores that :math:`\bar f_n` averages
    (the CFA's own check covers its loadings, thresholds and factor correlations only). A
    constant shift between chains moves only the intercepts (the scores are standardized)
    and is rightly ignored."""
    import arviz as az

    scores = fit.idata.posterior["factor_score"].transpose("chain", "draw", "output", "trait")
    obs = np.isfinite(jd.x)
    xz = np.where(obs, jd.x, 0.0) / obs.sum(0)
    proj = np.einsum("cdnt,nm->cdtm", scores.values, xz, optimize=True)
    da = xr.DataArray(proj.reshape(*proj.shape[:2], -1), dims=("chain", "draw", "q"))
    ds = xr.Dataset({"p": da})
    r_hat = float(az.rhat(ds)["p"].max())
    ess = float(az.ess(ds, method="bulk")["p"].min())
    return r_hat, ess


def _row_check(table: pd.DataFrame, *, fast: bool) -> str | None:
    """Why the table's own rows cannot be read yet, or None: R-hat and bulk and tail ESS of
    every row (the CFA's draws of the factor correlations paired with the metrics' exact
    draws) against the convergence targets (fast-mode targets for a fast-mode CFA)."""
    from bayesmeta.convergence import ESS_MIN, ESS_MIN_FAST, RHAT_MAX, RHAT_MAX_FAST

    r_max, e_min = (RHAT_MAX_FAST, ESS_MIN_FAST) if fast else (RHAT_MAX, ESS_MIN)
    rh, eb, et = (table[c].astype(float) for c in ("r_hat", "ess_bulk", "ess_tail"))
    bad = (rh > r_max) | (eb < e_min) | (et < e_min)
    if not bad.any():
        return None

    def label(key: Any) -> str:
        e, t, m = key
        return f"{e}[{t}, {m}]" if t else f"{e}[{m}]"

    return (f"{int(bad.sum())} row(s) of the table miss the convergence targets (R-hat <= "
            f"{r_max}, bulk and tail ESS >= {e_min:g}): max R-hat {rh.max():.3f} "
            f"({label(rh.idxmax())}), min bulk ESS {eb.min():.0f} ({label(eb.idxmin())}), "
            f"min tail ESS {et.min():.0f}. They pair the CFA's draws of the factor "
            f"correlations with the metrics' exact draws: refit the CFA with more draws "
            f"before reading those rows.")


def metric_rng(seed: int, metric: str) -> np.random.Generator:
    """The random stream of one metric: seeded by the route's seed and the metric's name, so
    a metric's draws do not change when other metrics are added or left out."""
    return np.random.default_rng([int(seed), 20261127, 22, zlib.crc32(metric.encode())])


def draw_metric_parameters(mean: np.ndarray, cov: np.ndarray, x: np.ndarray,
                           n_draws: int, seed: int,
                           metrics: Sequence[str]) -> dict[str, np.ndarray]:
    r"""``n_draws`` draws of :math:`(a_m, b_m, \sigma_m)` per metric (module docstring):
    ``mean`` (N, T) posterior-mean scores, ``cov`` (N, T, T) their posterior covariances,
    ``x`` (N, M) standardized scores (NaN: missing, that output left out of that metric's
    regression), ``seed`` (each metric's stream: :func:`metric_rng`). Returns ``intercept``
    (S, M), ``loading`` (S, M, T), ``error_sd`` (S, M) and ``redrawn`` (M,), per metric the
    draws whose first try had :math:`\sigma_m^2 \le 0`."""
    N, T = mean.shape
    M, S, p = x.shape[1], int(n_draws), T + 1
    obs = np.isfinite(x)
    n_obs = obs.sum(0)
    short = [m for m, k in zip(metrics, n_obs, strict=True) if k <= p + 1]
    if short:
        raise ValueError(f"metric(s) {short[:5]} have {p + 1} or fewer scored outputs: too "
                         f"few to estimate {p} coefficients and an error variance.")
    X = np.column_stack([np.ones(N), mean])
    out = {"intercept": np.empty((S, M)), "loading": np.empty((S, M, T)),
           "error_sd": np.empty((S, M)), "redrawn": np.zeros(M, dtype=int)}
    for j in range(M):
        rng = metric_rng(seed, metrics[j])
        keep = obs[:, j]
        Xj, xj = X[keep], x[keep, j]
        inv = np.linalg.inv(Xj.T @ Xj)
        gamma_hat = inv @ (Xj.T @ xj)
        rss = max(float(np.sum((xj - Xj @ gamma_hat) ** 2)), 1e-300)
        root = np.linalg.cholesky(0.5 * (inv + inv.T))
        v = cov[keep].mean(0)  # the scores' average posterior covariance
        gamma, sig2 = np.empty((S, p)), np.empty(S)
        todo = np.arange(S)
        for attempt in range(MAX_REDRAWS + 1):
            if not todo.size:
                break
            if attempt == 1:
                out["redrawn"][j] = todo.size
            s2 = rss / rng.chisquare(n_obs[j] - p, size=todo.size)
            g = gamma_hat + np.sqrt(s2)[:, None] * (rng.standard_normal((todo.size, p))
                                                    @ root.T)
            e2 = s2 - np.einsum("kt,ts,ks->k", g[:, 1:], v, g[:, 1:])
            gamma[todo], sig2[todo] = g, e2
            todo = todo[e2 <= 0]
        if todo.size:
            raise ValueError(f"metric {metrics[j]!r}: no draw of its error variance stayed "
                             f"positive in {MAX_REDRAWS} tries for {todo.size} draw(s); the "
                             f"metric is (almost) a function of the posterior-mean scores, "
                             f"so its error variance cannot be separated from the scores' "
                             f"own uncertainty.")
        out["intercept"][:, j] = gamma[:, 0]
        out["loading"][:, j] = gamma[:, 1:]
        out["error_sd"][:, j] = np.sqrt(sig2)
    return out


def modular_metric_variance(
    data: xr.Dataset,
    fit: Any,
    *,
    metrics: Sequence[str] | None = None,
    claims: Mapping[str, str] | None = None,
    run: Any = None,
    reference: Any = "first",
    ci_prob: float = CI_PROB,
    random_seed: int | None = None,
) -> ModularValidityResult:
    r"""The modular route (module docstring), summarised in ``metric_variance``'s table
    with the joint route's rows (``error_variance`` included).

    Called through :func:`bayesmeta.metric_variance` with ``estimator="modular"``, whose
    docstring documents the arguments; ``fit`` must be ``bm.cfa(model, data,
    estimator="bayes")`` on the same ``data``. The posterior (``metric_intercept``,
    ``metric_loading``, ``error_sd`` on the standardized metric scale, ``validity_raw`` and
    ``error_variance`` on the metric's own scale, plus the standardized
    ``validity_coefficient`` and ``error_share``) is in ``result.idata``, with the CFA's
    chains and draws.

    Examples
    --------
    >>> import bayesmeta as bm  # doctest: +SKIP
    >>> from bayesmeta.validity.joint_simulate import simulate_joint_validity
    >>> ds = simulate_joint_validity(0, n_traits=2, n_metrics=3)  # doctest: +SKIP
    >>> m = ("coh =~ Rater.1.COH + Rater.2.COH + Rater.3.COH\n"
    ...      "con =~ Rater.1.CON + Rater.2.CON + Rater.3.CON")
    >>> cfa = bm.cfa(m, ds, estimator="bayes", random_seed=1)  # doctest: +SKIP
    >>> bm.metric_variance(ds, cfa, estimator="modular", random_seed=1)  # doctest: +SKIP

    R equivalent: none packaged; by hand, ``fs <- blavaan::blavPredict(fit, type = "lv")``
    (posterior means and covariances of the scores), ``lm(metric ~ fs_mean)``, and the
    residual variance less :math:`b^\top \bar\Sigma b`.
    """
    import arviz as az

    from bayesmeta.validity.joint_model import add_estimands, estimand_table

    t0 = time.perf_counter()
    seed = resolve_seed(random_seed)
    jd = prepare(data, fit, metrics, run, reference)
    traits = list(jd.design.factors)
    claimed = _claims(data, list(jd.metrics), traits, claims)
    mean, cov = score_moments(fit, jd)
    cfa_post = fit.idata.posterior
    C, D = cfa_post.sizes["chain"], cfa_post.sizes["draw"]
    T, M = len(traits), len(jd.metrics)
    drawn = draw_metric_parameters(mean, cov, jd.x, C * D, seed, jd.metrics)
    check = score_check(fit, jd)
    post = xr.Dataset(
        {"metric_intercept": (("chain", "draw", "metric"),
                              drawn["intercept"].reshape(C, D, M)),
         "metric_loading": (("chain", "draw", "metric", "trait"),
                            drawn["loading"].reshape(C, D, M, T)),
         "error_sd": (("chain", "draw", "metric"), drawn["error_sd"].reshape(C, D, M)),
         "factor_corr": (("chain", "draw", "trait", "trait2"),
                         cfa_post["factor_corr"].sel(trait=traits, trait2=traits)
                         .transpose("chain", "draw", "trait", "trait2").values)},
        coords={"chain": np.arange(C), "draw": np.arange(D), "metric": list(jd.metrics),
                "trait": traits, "trait2": traits})
    parts = add_estimands(post, jd)
    post.attrs.update({"route": "modular", "random_seed": seed})
    table = estimand_table(parts, post, traits, jd.metrics, claimed, ci_prob)
    seconds = time.perf_counter() - t0
    notes = ["Modular posterior: the traits are the Bayesian CFA's, from the ratings alone "
             "(the metrics do not redefine them); each metric is regressed on the "
             "posterior-mean factor scores (regression calibration), with the scores' "
             "posterior covariance in the residual (b' Sigma b), and paired with the CFA's "
             "draws of the factor correlations; R-hat and ESS are computed on those draws, "
             f"and the score draws themselves check at R-hat {check[0]:.3f}, bulk ESS "
             f"{check[1]:.0f} (their projections on the metrics)."]
    post.attrs.update({"score_check_r_hat": check[0], "score_check_ess_bulk": check[1]})
    if check[0] > 1.01 or check[1] < 400:
        from bayesmeta.convergence import ConvergenceWarning

        msg = (f"the CFA's factor-score draws behind the posterior-mean scores do not agree "
               f"across chains (their projections on the metrics: max R-hat {check[0]:.3f}, "
               f"min bulk ESS {check[1]:.0f}; targets 1.01 and 400): refit the CFA with more "
               f"draws before reading this table.")
        notes.append(msg[0].upper() + msg[1:])
        warnings.warn(msg, ConvergenceWarning, stacklevel=3)
    rows_msg = _row_check(table, fast=bool(int(cfa_post.attrs.get("fast", 0))))
    if rows_msg:
        from bayesmeta.convergence import ConvergenceWarning

        notes.append(rows_msg[0].upper() + rows_msg[1:])
        warnings.warn(rows_msg, ConvergenceWarning, stacklevel=3)
    notes.append("Error variances (error_variance): in the simulation study their 94% HDIs "
                 "cover the truth less often than nominal (the validity coefficients and "
                 "error shares cover as they should; models/metric_validity.md, 'Modular "
                 "route: coverage'): read those intervals as somewhat too narrow.")
    redrawn = {m: int(k) for m, k in zip(jd.metrics, drawn["redrawn"], strict=True) if k}
    if redrawn:
        worst = max(redrawn, key=redrawn.get)
        notes.append(f"{len(redrawn)} metric(s) were redrawn where sigma^2 came out <= 0 "
                     f"(most: {worst}, {redrawn[worst]} of {C * D} draws): their error "
                     f"variance lies near 0.")
    n_miss = int((~jd.observed).sum())
    if n_miss:
        notes.append(f"{n_miss} missing metric score(s): each metric is regressed on the "
                     f"outputs it scored.")
    unclaimed = [m for m in jd.metrics if m not in claimed]
    if unclaimed:
        notes.append(f"no claimed trait for {len(unclaimed)} metric(s) "
                     f"({', '.join(unclaimed[:5])}{', ...' if len(unclaimed) > 5 else ''}); "
                     f"pass claims= for their trait_share and specificity.")
    info = {"data": select.describe(data),
            "model": " ; ".join(f"{t} =~ {' + '.join(jd.spec.indicators(t))}"
                                for t in traits),
            "metrics": f"{M} (standardized; normal errors)",
            "method": "modular: the CFA's traits from the ratings; each metric regressed on "
                      "the posterior-mean scores, their uncertainty as Berkson error",
            "outputs": f"{jd.design.n_rows} rated outputs",
            "posterior": f"{C} x {D} draws (the CFA's factor correlations)",
            "score draws": f"max R-hat {check[0]:.3f}, min bulk ESS {check[1]:.0f} "
                           f"(projections on the metrics)",
            "shares": "Pratt (1987): beta_t * r_t, summing to R^2",
            "time": f"{seconds:.1f} s (after the CFA)"}
    result = ModularValidityResult(
        table, title="Metric variance: claimed trait, other traits, error (Bayesian, "
        "modular)", info=info, idata=az.InferenceData(posterior=post), notes=notes,
        ci_prob=ci_prob, posterior="CFA posterior x exact regression draws (modular)",
        random_seed=seed, data_hash=data_hash(data))
    result._jd, result._moments = jd, (mean, cov)  # residual correlations (not saved)
    return result


__all__ = ["ModularValidityResult", "draw_metric_parameters", "metric_rng",
           "modular_metric_variance", "residual_error_correlations", "score_check",
           "score_moments"]
