r"""The modular (cut) Bayesian metric-validity route: the traits from the experts' ratings
alone, each metric's validity coefficients and error variance given them
(``bm.metric_variance(data, bayes_fit, estimator="modular")``; card:
``models/metric_validity.md``).

The model is the joint model's measurement structure (:mod:`bayesmeta.validity.joint_model`):
traits :math:`f_n \sim N(0, \Psi)`, ordinal ratings through the CFA's probit measurement
model, and standardized metric scores :math:`x_{nm} = a_m + b_m^\top f_n + e_{nm}`,
:math:`e_{nm} \sim N(0, \sigma_m^2)`. What differs is the posterior. The ratings' part is the
Bayesian CFA's posterior, so the metrics do not feed back into the traits (a *cut*,
Plummer 2015) and the traits stay the experts' by construction. That guards against
interpretational confounding (Burt 1976), where many metrics redefine the traits: on
SummEval's 43 metrics the joint posterior moves a factor correlation by up to 0.29
(``models/metric_validity.md``). Each metric is also fitted on its own (one cut per metric:
the other metrics do not inform its traits either), so within a draw the metrics' errors
are modelled as independent; their correlations are estimated afterwards
(:meth:`ModularValidityResult.residual_correlation_draws`).

Given one CFA draw, with latent responses :math:`y^*` and parameters :math:`\theta`, the
traits are normal, :math:`f_n \mid y^*, \theta \sim N(m_n, V)` (the augmented CFA's
conditional mean :math:`m_n` and covariance :math:`V = \Psi - AA^\top`). So the metric's
likelihood given that draw is exactly

.. math:: x_{nm} \mid y^*, \theta \sim N(a_m + b_m^\top m_n,\; s_m^2), \qquad
          s_m^2 = b_m^\top V b_m + \sigma_m^2 ,

an ordinary regression on :math:`m_n` whose residual variance holds the traits' own
uncertainty (regression calibration, Carroll et al. 2006, ch. 4, made exact for this
draw). The prior is the reference prior :math:`p(a_m, b_m, s_m^2) \propto s_m^{-2}` on
:math:`\{s_m^2 > b_m^\top V b_m\}` (that is, :math:`\sigma_m^2 > 0`; in terms of
:math:`(b_m, \sigma_m^2)` it is :math:`\propto 1/(\sigma_m^2 + b_m^\top V b_m)`, not the
joint route's N(0, 1) and HalfNormal(1); with hundreds of outputs either prior is
negligible). Under it each CFA draw gets one exact conditional draw per metric:
:math:`s_m^2 \sim \mathrm{RSS}/\chi^2_{n-T-1}`, then
:math:`(a_m, b_m) \mid s_m^2 \sim N(\hat\gamma, s_m^2 (X^\top X)^{-1})`, both redrawn where
:math:`\sigma_m^2 \le 0`. The chains and draws are the CFA's, with one conditional draw
each. R-hat and ESS are computed on these draws as for any MCMC output. The CFA's own
adaptive check covers its loadings, thresholds and factor correlations, not the latent
responses behind :math:`m_n`, so the table's R-hat and ESS are the check that counts.
Cost: :math:`O(S N M T)` for :math:`S` draws, linear in the number of metrics, no MCMC.

Estimands and table: those of the joint route (:func:`~bayesmeta.validity._joint_build.
estimand_draws`, model-implied variance :math:`V_m = b_m^\top \Psi b_m + \sigma_m^2`).

References
----------
Plummer, M. (2015). Cuts in Bayesian graphical models. *Statistics and Computing*, 25,
37-43.
Burt, R. S. (1976). Interpretational confounding of unobserved variables in structural
equation models. *Sociological Methods & Research*, 5, 3-52.
Carroll, R. J., Ruppert, D., Stefanski, L. A., & Crainiceanu, C. M. (2006). *Measurement
Error in Nonlinear Models* (2nd ed.). Chapman & Hall.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayesmeta.data import select
from bayesmeta.options import resolve_seed
from bayesmeta.results import Result, data_hash
from bayesmeta.summaries import CI_PROB, summarize
from bayesmeta.validity._cfa_derived import noise_check, score_noise
from bayesmeta.validity._factor_common import _claims
from bayesmeta.validity._joint_build import JointData, estimand_draws, prepare

#: Redraws allowed for a (draw, metric) whose sigma^2 came out <= 0 before giving up.
MAX_REDRAWS = 200
#: CFA draws processed at once (memory: chunk x outputs x (traits + 1) floats).
CHUNK = 128


class ModularValidityResult(Result):
    """Result of the modular route (``bm.metric_variance(data, bayes_cfa,
    estimator="modular")``): ``metric_variance``'s table with the joint route's rows, the
    posterior in ``idata`` (the CFA's chains and draws) and ``probability()``."""

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
        ``bm.metric_residuals`` on this fit). In each draw the residuals on the traits'
        conditional means, :math:`r_n = x_n - a - B m_n = B(f_n - m_n) + e_n`, have
        covariance :math:`B V B^\top + \Sigma_e`, so :math:`\Sigma_e` is their sample
        covariance minus :math:`B V B^\top` (MetricEval App. A.6, the traits' own
        uncertainty removed); its correlations are returned. A moment estimate per draw:
        its spread is the parameters' posterior uncertainty, not the sampling error of a
        correlation over these outputs (about :math:`(1 - \rho^2)/\sqrt{N}`)."""
        jd, cfa = getattr(self, "_jd", None), getattr(self, "_cfa", None)
        if jd is None or cfa is None:
            raise ValueError("this result was saved and loaded: the standardized metric "
                             "scores and the CFA are not kept; refit to compute residuals.")
        from bayesmeta.validity.joint_model import metric_rows

        keep, idx, rows = metric_rows(jd, metrics)
        if rows.size < 3:
            raise ValueError(f"only {rows.size} output(s) have all of {keep[:5]} scored: too "
                             f"few for residual correlations.")
        mean, cond = conditional_means(cfa, jd)
        post = self.idata.posterior
        a = post["metric_intercept"].transpose("chain", "draw", "metric").values[..., idx]
        b = post["metric_loading"].transpose("chain", "draw", "metric", "trait").values
        return (residual_error_correlations(mean[:, :, rows], cond, jd.x[rows][:, idx], a,
                                            b[:, :, idx]), keep, int(rows.size))


def residual_error_correlations(mean: np.ndarray, cond: np.ndarray, x: np.ndarray,
                                a: np.ndarray, b: np.ndarray) -> np.ndarray:
    r"""Correlations of the metric errors per draw (see
    :meth:`ModularValidityResult.residual_correlation_draws`): ``mean`` (C, D, N, T),
    ``cond`` (C * D, T, T), ``x`` (N, M) complete, ``a`` (C, D, M), ``b`` (C, D, M, T).
    Returns (C, D, M, M)."""
    C, D, N, _ = mean.shape
    M = x.shape[1]
    out = np.empty((C * D, M, M))
    mean = mean.reshape(C * D, N, -1)
    a, b = a.reshape(C * D, M), b.reshape(C * D, M, -1)
    for lo in range(0, C * D, CHUNK):
        sl = slice(lo, min(C * D, lo + CHUNK))
        r = x[None] - a[sl, None, :] - mean[sl] @ np.swapaxes(b[sl], 1, 2)  # (s, N, M)
        r = r - r.mean(1, keepdims=True)
        cov = np.swapaxes(r, 1, 2) @ r / (N - 1) - b[sl] @ cond[sl] @ np.swapaxes(b[sl], 1, 2)
        sd = np.sqrt(np.clip(np.diagonal(cov, axis1=1, axis2=2), 1e-12, None))
        # a plug-in: the corrected matrix need not be positive semi-definite
        out[sl] = np.clip(cov / (sd[:, :, None] * sd[:, None, :]), -1.0, 1.0)
    return out.reshape(C, D, M, M)


def conditional_means(fit: Any, jd: JointData) -> tuple[np.ndarray, np.ndarray]:
    """The CFA draws' conditional trait means :math:`m_n` (chain, draw, output, trait) and
    covariances :math:`V` (chain * draw, trait, trait), recovered from the fit's score
    draws and seed (:func:`bayesmeta.validity._cfa_derived.score_noise`), on the rows and in
    the trait order of ``jd``. Raises where the fit is not an augmented Bayesian CFA of
    these outputs and indicators, or where its draws are not those it drew the scores for
    (thinned, subset or combined since)."""
    post = getattr(fit, "idata", None)
    post = None if post is None else post.posterior
    if post is None or "factor_score" not in post or "loading_std" not in post:
        raise TypeError("estimator='modular' needs a Bayesian CFA of the ratings: "
                        "bm.cfa(model, data, estimator='bayes').")
    param = post.attrs.get("parameterization")
    if param != "augmented":
        raise ValueError(f"estimator='modular' needs the CFA's conditional trait means, "
                         f"which the augmented parameterization (the default) gives; this "
                         f"CFA's posterior says parameterization={param!r}. Refit with the "
                         f"default.")
    seed = post.attrs.get("factor_score_noise_seed", fit.provenance.get("random_seed"))
    if seed is None:
        raise ValueError("the CFA result has no recorded random seed, which its score draws "
                         "need to be traced back to their conditional means.")
    scores = post["factor_score"]
    d = jd.design
    traits = [str(t) for t in scores["trait"].values]
    inds = [str(i) for i in post["loading_std"]["indicator"].values]
    if (scores.sizes["output"] != d.n_rows or sorted(traits) != sorted(d.factors)
            or sorted(inds) != sorted(d.indicators)):
        raise ValueError(f"the CFA was fitted to other outputs, traits or indicators than "
                         f"these data ({scores.sizes['output']} outputs, traits {traits}; "
                         f"here {d.n_rows} outputs, traits {list(d.factors)}): pass the data "
                         f"and model the CFA was fitted to.")
    if "system" in scores.coords and jd.data.system is not None:
        same = (np.array(scores["system"].values, dtype=str) == np.array(jd.data.system,
                                                                        dtype=str)).all()
        same &= (np.array(scores["item"].values, dtype=str) == np.array(jd.data.item,
                                                                       dtype=str)).all()
        if not same:
            raise ValueError("the CFA's outputs (system, item) differ from these data's: pass "
                             "the data the CFA was fitted to.")
    # the CFA's own indicator and trait order (its draws' layout), with each indicator's
    # trait from the model
    trait_of = {i: d.factors[f] for i, f in zip(d.indicators, d.factor_of, strict=True)}
    own = replace(d, factors=tuple(traits), indicators=tuple(inds),
                  factor_of=np.array([traits.index(trait_of[i]) for i in inds]))
    noise, cond = score_noise(post, own, int(seed))
    stored = post.attrs.get("factor_score_noise_check")
    if stored is not None and stored != noise_check(
            noise.transpose("chain", "draw", "output", "trait").values):
        raise ValueError("the CFA's score draws are not the ones it drew (thinned, subset or "
                         "combined since the fit), so their conditional means cannot be "
                         "recovered: use the CFA result as bm.cfa returned it.")
    mean = (scores.transpose("chain", "draw", "output", "trait").values
            - noise.transpose("chain", "draw", "output", "trait").values)
    perm = [traits.index(t) for t in d.factors]
    return mean[..., perm], cond[:, perm][:, :, perm]


def draw_metric_parameters(mean: np.ndarray, cond: np.ndarray, x: np.ndarray,
                           rng: np.random.Generator, metrics: Sequence[str]
                           ) -> dict[str, np.ndarray]:
    r"""One draw of :math:`(a_m, b_m, \sigma_m)` per CFA draw and metric (module
    docstring): ``mean`` (S, N, T) conditional trait means, ``cond`` (S, T, T) their
    covariance, ``x`` (N, M) standardized scores (NaN: missing, that output left out of
    that metric's regression). Returns ``intercept`` (S, M), ``loading`` (S, M, T),
    ``error_sd`` (S, M) and ``redrawn`` (M,), per metric the CFA draws in which the first
    draw had :math:`\sigma_m^2 \le 0` and was redrawn."""
    S, N, T = mean.shape
    M = x.shape[1]
    p = T + 1
    obs = np.isfinite(x)
    n_obs = obs.sum(0)
    short = [m for m, k in zip(metrics, n_obs, strict=True) if k <= p + 1]
    if short:
        raise ValueError(f"metric(s) {short[:5]} have {p + 1} or fewer scored outputs: too "
                         f"few to estimate {p} coefficients and an error variance.")
    xz = np.where(obs, x, 0.0)
    gaps = np.flatnonzero(~obs.all(0))  # metrics with missing scores: their own X'X
    out = {"intercept": np.empty((S, M)), "loading": np.empty((S, M, T)),
           "error_sd": np.empty((S, M)), "redrawn": np.zeros(M, dtype=int)}
    for lo in range(0, S, CHUNK):
        sl = slice(lo, min(S, lo + CHUNK))
        X = np.concatenate([np.ones((sl.stop - lo, N, 1)), mean[sl]], axis=2)  # (s, N, p)
        xtx = np.repeat((X.transpose(0, 2, 1) @ X)[:, None], M, axis=1)  # (s, M, p, p)
        for j in gaps:
            Xj = X[:, obs[:, j]]
            xtx[:, j] = Xj.transpose(0, 2, 1) @ Xj
        xty = X.transpose(0, 2, 1) @ xz  # (s, p, M)
        xty = xty.transpose(0, 2, 1)  # (s, M, p)
        yty = (xz**2).sum(0)  # (M,)
        inv = np.linalg.inv(xtx)
        gamma_hat = np.einsum("smpq,smq->smp", inv, xty)
        rss = np.maximum(yty[None] - np.einsum("smp,smp->sm", gamma_hat, xty), 1e-300)
        root = np.linalg.cholesky(0.5 * (inv + np.swapaxes(inv, -1, -2)))
        v = cond[sl]  # (s, T, T)
        gamma = np.empty_like(gamma_hat)
        sig2 = np.empty(rss.shape)
        todo = np.ones(rss.shape, dtype=bool)
        for attempt in range(MAX_REDRAWS + 1):
            idx = np.nonzero(todo)
            k = idx[0].size
            if not k:
                break
            if attempt == 1:  # the (draw, metric) pairs that needed a redraw
                np.add.at(out["redrawn"], idx[1], 1)
            s2 = rss[idx] / rng.chisquare(n_obs[idx[1]] - p)
            g = gamma_hat[idx] + np.sqrt(s2)[:, None] * np.einsum(
                "kpq,kq->kp", root[idx], rng.standard_normal((k, p)))
            b = g[:, 1:]
            e2 = s2 - np.einsum("kt,kts,ks->k", b, v[idx[0]], b)
            gamma[idx], sig2[idx] = g, e2
            todo[idx] = e2 <= 0
        if todo.any():
            bad = sorted({metrics[j] for j in np.nonzero(todo)[1]})
            raise ValueError(f"metric(s) {bad[:5]}: in some CFA draws no draw of the error "
                             f"variance stayed positive in {MAX_REDRAWS} tries; the metric "
                             f"is (almost) a function of the traits' conditional means, so "
                             f"its error variance cannot be separated from the traits' own "
                             f"uncertainty.")
        out["intercept"][sl] = gamma[..., 0]
        out["loading"][sl] = gamma[..., 1:]
        out["error_sd"][sl] = np.sqrt(sig2)
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
    estimator="bayes")`` (default parameterization) on the same ``data``. The posterior
    (``metric_intercept``, ``metric_loading``, ``error_sd`` on the standardized metric
    scale, ``validity_raw`` and ``error_variance`` on the metric's own scale, plus the
    standardized ``validity_coefficient`` and ``error_share``) is in ``result.idata``, with
    the CFA's chains and draws.

    Examples
    --------
    >>> import bayesmeta as bm  # doctest: +SKIP
    >>> from bayesmeta.validity.joint_simulate import simulate_joint_validity
    >>> ds = simulate_joint_validity(0, n_traits=2, n_metrics=3)  # doctest: +SKIP
    >>> m = ("coh =~ Rater.1.COH + Rater.2.COH + Rater.3.COH\n"
    ...      "con =~ Rater.1.CON + Rater.2.CON + Rater.3.CON")
    >>> cfa = bm.cfa(m, ds, estimator="bayes", random_seed=1)  # doctest: +SKIP
    >>> bm.metric_variance(ds, cfa, estimator="modular", random_seed=1)  # doctest: +SKIP

    R equivalent: none packaged; by hand, per posterior draw of ``blavaan::bcfa(...,
    ordered = TRUE)``, ``lm(metric ~ E[eta | y*])`` with the residual variance corrected by
    :math:`b^\top V b`.
    """
    import arviz as az

    from bayesmeta.validity.joint_model import INDEX, _rows, frame

    t0 = time.perf_counter()
    seed = resolve_seed(random_seed)
    jd = prepare(data, fit, metrics, run, reference)
    traits = list(jd.design.factors)
    claimed = _claims(data, list(jd.metrics), traits, claims)
    mean, cond = conditional_means(fit, jd)
    C, D = mean.shape[:2]
    T, M = len(traits), len(jd.metrics)
    rng = np.random.default_rng([seed, 20261127, 22])
    drawn = draw_metric_parameters(mean.reshape(C * D, *mean.shape[2:]), cond, jd.x, rng,
                                   jd.metrics)
    cfa_post = fit.idata.posterior
    mcoord = {"metric": list(jd.metrics), "trait": traits}
    post = xr.Dataset(
        {"metric_intercept": (("chain", "draw", "metric"),
                              drawn["intercept"].reshape(C, D, M)),
         "metric_loading": (("chain", "draw", "metric", "trait"),
                            drawn["loading"].reshape(C, D, M, T)),
         "error_sd": (("chain", "draw", "metric"), drawn["error_sd"].reshape(C, D, M)),
         "factor_corr": (("chain", "draw", "trait", "trait2"),
                         cfa_post["factor_corr"].sel(trait=traits, trait2=traits)
                         .transpose("chain", "draw", "trait", "trait2").values),
         "loading_std": (("chain", "draw", "indicator"),
                         cfa_post["loading_std"].sel(indicator=list(jd.design.indicators))
                         .transpose("chain", "draw", "indicator").values)},
        coords={"chain": np.arange(C), "draw": np.arange(D), **mcoord,
                "trait2": traits, "indicator": list(jd.design.indicators)})
    parts = estimand_draws(post)
    scale = xr.DataArray(jd.scale, dims="metric", coords={"metric": list(jd.metrics)})
    post["validity_raw"] = post["metric_loading"] * scale
    post["error_variance"] = (post["error_sd"] * scale) ** 2
    post["validity_coefficient"] = (("chain", "draw", "metric", "trait"), parts["beta"])
    post["error_share"] = (("chain", "draw", "metric"), parts["error_share"])
    post.attrs.update({"route": "modular", "random_seed": seed,
                       "cfa_random_seed": int(fit.provenance["random_seed"])})
    keys, vals = _rows(parts["beta"], parts["r"], parts["r2"], parts["error_share"],
                       post["error_variance"].transpose("chain", "draw", "metric").values,
                       traits, jd.metrics, claimed)
    da = xr.DataArray(np.moveaxis(vals, 0, -1), dims=("chain", "draw", "row"))
    table = frame(summarize(da, ci_prob=ci_prob), pd.MultiIndex.from_tuples(keys,
                                                                              names=INDEX))
    seconds = time.perf_counter() - t0
    notes = ["Modular (cut) posterior: the traits are the Bayesian CFA's, from the ratings "
             "alone; per CFA draw each metric is regressed on the traits' conditional means "
             "with their uncertainty b' V b in the residual, so the CFA's uncertainty "
             "propagates and the metrics do not redefine the traits. The draws are the CFA's "
             "chains with one exact conditional draw each; R-hat and ESS are computed on "
             "them."]
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
            "method": "modular (cut): the CFA's traits from the ratings; each metric given "
                      "them, one exact conditional draw per CFA draw",
            "outputs": f"{jd.design.n_rows} rated outputs",
            "posterior": f"{C} x {D} draws of the Bayesian CFA",
            "shares": "Pratt (1987): beta_t * r_t, summing to R^2",
            "time": f"{seconds:.1f} s (after the CFA)"}
    idata = az.InferenceData(posterior=post)
    result = ModularValidityResult(
        table, title="Metric variance: claimed trait, other traits, error (Bayesian, "
        "modular)", info=info, idata=idata, notes=notes, ci_prob=ci_prob,
        posterior="CFA posterior x exact conditional draws (modular)", random_seed=seed,
        data_hash=data_hash(data))
    result._jd, result._cfa = jd, fit  # residual correlations on request (not saved)
    return result


__all__ = ["ModularValidityResult", "conditional_means", "draw_metric_parameters",
           "modular_metric_variance", "residual_error_correlations"]
