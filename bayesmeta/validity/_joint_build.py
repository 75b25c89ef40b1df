r"""Setup, PyMC builder and posterior estimands of the joint metric-validity model (see
:mod:`bayesmeta.validity.joint_model`, the public entry, and ``models/metric_validity.md``).

The ratings enter through the ordinal CFA's own measurement model
(:func:`bayesmeta.validity._cfa_build.build_model`, factor scores sampled, long-form data in
``pm.Data`` containers); the metrics are added to that model as continuous indicators of
the same factor scores,

.. math:: x_{nm} = a_m + \sum_t b_{mt} f_{nt} + \sigma_m \epsilon_{nm},

with :math:`x` each metric's scores standardized by their sample mean and sd. The metric
part costs :math:`O(N M T)` per gradient: linear in the number of metrics. PyMC and
PyTensor are imported inside the functions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import xarray as xr

from bayesmeta._ordinal import padded_cutpoints
from bayesmeta.validity._cfa_build import (
    Design,
    _structural_parameters,
    anchor_cuts,
    build_model,
    category_slots,
    model_coords,
)
from bayesmeta.validity._cfa_setup import _Data, setup
from bayesmeta.validity._factor_common import _metric_array
from bayesmeta.validity.syntax import ModelSpec

#: Distributions of the metric errors.
ERRORS = ("normal", "student_t")
#: How the traits enter the sampler: ``"marginal"`` integrates them out (normal errors,
#: every metric scored on every rated output), the others sample them
#: (:func:`bayesmeta.validity._cfa_build.build_model`); ``"auto"`` picks ``"marginal"``
#: where it applies, else ``"noncentred"``.
PARAMETERIZATIONS = ("auto", "marginal", "noncentred", "centred")
#: Posterior variables kept in the trace (``factor_score`` or, when the traits are
#: integrated out, ``factor_score_mean``, from which they are drawn after sampling).
TRACE = ("loading_std", "threshold_std", "factor_corr", "factor_score", "metric_intercept",
         "metric_loading", "error_sd", "error_nu")
MARGINAL_TRACE = ("loading_std", "threshold_std", "factor_corr", "factor_score_mean",
                  "metric_intercept", "metric_loading", "error_sd", "method_loading")


@dataclass(frozen=True)
class JointData:
    """Ratings (the CFA's design) and standardized metric scores of the same outputs."""

    spec: ModelSpec
    data: _Data
    design: Design
    metrics: tuple[str, ...]
    x: np.ndarray  # (N, M) standardized scores, NaN = missing
    center: np.ndarray  # (M,) sample means of the raw scores
    scale: np.ndarray  # (M,) sample sds of the raw scores

    @property
    def observed(self) -> np.ndarray:
        return np.isfinite(self.x)


def model_syntax(fit: Any) -> str | ModelSpec:
    """The CFA model of ``fit``: lavaan syntax given as is, a classical CFA's ``spec``, or
    the model line of a Bayesian CFA's header."""
    if isinstance(fit, str | ModelSpec):
        return fit
    spec = getattr(fit, "spec", None)
    if isinstance(spec, ModelSpec):
        return spec
    info = getattr(fit, "info", None)
    if isinstance(info, dict) and isinstance(info.get("model"), str):
        return info["model"].replace(" ; ", "\n")
    raise TypeError(f"fit must be a bm.cfa result or lavaan syntax (str) for "
                    f"estimator='joint' or 'modular', got {type(fit).__name__}.")


def prepare(data: xr.Dataset, fit: Any, metrics: Sequence[str] | None, run: Any,
            reference: Any) -> JointData:
    """The ratings in the CFA's long form and the chosen metrics' scores on the same rows,
    standardized per metric. Raises on a metric without variance or without scores."""
    if not isinstance(data, xr.Dataset):
        raise TypeError(f"data must be a bayesmeta xarray.Dataset for estimator='joint' or "
                        f"'modular', got {type(data).__name__}.")
    spec, data_, design = setup(model_syntax(fit), data)
    if data_.system is None:
        raise ValueError("estimator='joint' and 'modular' need a bayesmeta Dataset with "
                         "system and item labels.")
    systems = [str(s) for s in data_.system]
    items = [str(i) for i in data_.item]
    xa = _metric_array(data, metrics, run, reference, sorted(set(systems)),
                       sorted(set(items)))
    mnames = tuple(str(m) for m in xa["metric"].values)
    if not mnames:
        raise ValueError("metrics selects no metric.")
    raw = np.stack([xa.sel(system=s, item=i).values for s, i in zip(systems, items,
                                                                     strict=True)])
    raw = raw.astype(float)  # (N, M)
    n_obs = np.isfinite(raw).sum(0)
    few = [m for m, k in zip(mnames, n_obs, strict=True) if k < 3]
    if few:
        raise ValueError(f"metric(s) {few} have fewer than 3 scores on the rated outputs.")
    center = np.nanmean(raw, axis=0)
    scale = np.nanstd(raw, axis=0, ddof=1)
    flat = [m for m, s in zip(mnames, scale, strict=True) if not s > 0]
    if flat:
        raise ValueError(f"metric(s) {flat} are constant on the rated outputs: no variance "
                         f"to explain.")
    return JointData(spec, data_, design, mnames, (raw - center) / scale, center, scale)


def model_key(jd: JointData, errors: str, parameterization: str,
              method_factors: int = 0) -> tuple:
    """What the compiled model depends on besides the data values (the data are in
    ``pm.Data`` containers): refits of same-shaped data reuse the compilation. The
    thresholds' anchor cuts (:func:`~bayesmeta.validity._cfa_build.anchor_cuts`), which
    set the sampler's coordinates, are data too, so a fit's draws do not depend on which
    dataset of the shape the process fitted first."""
    d = jd.design
    return ("joint_validity", d.factors, d.indicators, tuple(d.factor_of.tolist()),
            d.n_categories, d.n_rows, int(d.row.size), d.blocks, len(jd.metrics), errors,
            parameterization, int(method_factors))


def resolve_parameterization(jd: JointData, errors: str, parameterization: str) -> str:
    """``parameterization`` checked against the data: ``"auto"`` is ``"marginal"`` for
    normal errors and complete metric scores, else ``"noncentred"``; an explicit
    ``"marginal"`` that cannot apply raises, saying why."""
    if parameterization not in PARAMETERIZATIONS:
        raise ValueError(f"parameterization must be one of {PARAMETERIZATIONS}, got "
                         f"{parameterization!r}.")
    missing = {m: int(k) for m, k in zip(jd.metrics, (~jd.observed).sum(0), strict=True)
               if k}
    if parameterization == "auto":
        return "marginal" if errors == "normal" and not missing else "noncentred"
    if parameterization == "marginal":
        if errors != "normal":
            raise ValueError(f"parameterization='marginal' integrates the traits out, "
                             f"which needs normal metric errors; with errors={errors!r} use "
                             f"parameterization='noncentred'.")
        if missing:
            few = ", ".join(f"{m} ({k})" for m, k in list(missing.items())[:5])
            raise ValueError(f"parameterization='marginal' needs every metric scored on "
                             f"every rated output; missing scores: {few}. Use "
                             f"parameterization='noncentred' (missing scores left out of "
                             f"the likelihood) or select metrics without gaps.")
    return parameterization


def method_structure(M: int, leaders: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """The (M, K) free-entry mask and diagonal-position matrix of the method loadings
    ``C``: leader ``k`` (metric ``leaders[k]``) loads on factors ``0..k`` only, with a
    positive loading on factor ``k`` (the lower-triangular rotation with the leaders as the
    first rows); every other metric loads freely."""
    K = len(leaders)
    mask = np.ones((M, K))
    pivot = np.zeros((M, K))
    for k, j in enumerate(leaders):
        mask[j, k:] = 0.0
        pivot[j, k] = 1.0
    return mask, pivot


def model_data(jd: JointData, parameterization: str = "noncentred",
               leaders: Sequence[int] = ()) -> dict[str, np.ndarray]:
    """Values of the model's data containers (``leaders``: the method factors' leading
    metrics, :func:`method_structure`)."""
    obs = jd.observed
    anchor = anchor_cuts(jd.design).astype(np.int64)
    if parameterization == "marginal":
        lo, hi = category_slots(jd.design)
        out = {"lo_slot": lo, "hi_slot": hi, "metric_score": jd.x,
               "threshold_anchor_cut": anchor}
        if len(leaders):
            out["method_mask"], out["method_pivot"] = method_structure(len(jd.metrics),
                                                                       leaders)
        return out
    return {"obs_row": jd.design.row, "obs_ind": jd.design.ind, "obs_cat": jd.design.cat,
            "metric_score": np.where(obs, jd.x, 0.0), "metric_observed": obs.astype(float),
            "threshold_anchor_cut": anchor}


def _metric_priors(M: int, F: int):
    """Inside a model context: the metric intercepts, coefficients and error sds (the
    priors of :func:`build_joint_model`)."""
    import pymc as pm

    a = pm.Normal("metric_intercept", 0.0, 1.0, dims="metric")
    b = pm.Normal("metric_loading", 0.0, 1.0, dims=("metric", "trait"),
                  initval=np.zeros((M, F)))
    sd = pm.HalfNormal("error_sd", 1.0, dims="metric", initval=np.full(M, 0.8))
    return a, b, sd


def _orthonormal_loadings(chol: Any, M: int, F: int) -> Any:
    r"""Inside a model context: the validity coefficients ``metric_loading`` :math:`B`
    (prior :math:`b_m \sim N(0, I)`, as :func:`_metric_priors`) sampled as their loadings
    on orthonormal trait coordinates, :math:`\beta_m = L^\top b_m` (``metric_loading_orth``;
    :math:`\Psi = LL^\top`, ``chol``), so that :math:`B\Psi B^\top = \beta\beta^\top`.

    Same model, other coordinates: :math:`\beta_m \sim N(0, L^\top L)`, whose log density
    :math:`-\tfrac12\lVert b_m\rVert^2 - \sum_t \log L_{tt} - \tfrac F2 \log 2\pi` is the
    prior of :math:`b_m` plus the log Jacobian of :math:`\beta \mapsto b`. Where the traits
    are strongly correlated (SummEval's joint posterior: an eigenvalue of :math:`\Psi` at
    0.02) the posterior of :math:`b_m` is a narrow ridge along :math:`\Psi`'s small
    eigenvectors (within-chain sds from 0.015 to 0.26 per metric); that of
    :math:`\beta_m` is nearly round (0.023-0.046), which a diagonal mass matrix fits."""
    import pymc as pm
    import pytensor.tensor as pt
    from pytensor.tensor.slinalg import solve_triangular

    beta = pm.Flat("metric_loading_orth", dims=("metric", "trait"),
                   initval=np.zeros((M, F)))
    b = pm.Deterministic("metric_loading",
                         solve_triangular(chol.T, beta.T, lower=False).T,
                         dims=("metric", "trait"))
    pm.Potential("metric_loading_prior",
                 -0.5 * pt.sum(b**2) - M * pt.sum(pt.log(pt.diagonal(chol)))
                 - 0.5 * M * F * np.log(2 * np.pi))
    return b


def build_marginal_joint_model(jd: JointData, method_factors: int = 0,
                               leaders: Sequence[int] | None = None) -> Any:
    r"""The joint model with the traits integrated out (normal errors, complete scores).

    With :math:`f_n \sim N(0, \Psi)`, :math:`x_n = a + B f_n + e_n`,
    :math:`e_n \sim N(0, D)`, :math:`D = \operatorname{diag}(\sigma^2)`, and the ratings'
    standardized latent responses :math:`y^*_n = \Lambda f_n + \delta_n`,
    :math:`\delta_n \sim N(0, \operatorname{diag}(1 - \lambda^{*2}))`, everything is
    jointly normal, so the likelihood factors as :math:`p(x_n)\,P(y_n \mid x_n)`:

    * :math:`P = \Psi^{-1} + B^\top D^{-1} B`, :math:`V = P^{-1}`,
      :math:`m_n = V B^\top D^{-1}(x_n - a)` (the traits given the metrics);
    * :math:`x_n \sim N(a, B\Psi B^\top + D)`, evaluated with Woodbury's identity:
      :math:`\log|B\Psi B^\top + D| = \sum_m \log\sigma_m^2 + \log|\Psi| + \log|P|`,
      quadratic form :math:`r^\top D^{-1} r - g^\top V g`, :math:`g = B^\top D^{-1} r`;
      :math:`O(NMT)` per gradient, linear in the number of metrics;
    * :math:`y^*_n \mid x_n \sim N(\Lambda m_n, \Lambda V \Lambda^\top +
      \operatorname{diag}(1 - \lambda^{*2}))`, truncated to the box of the observed
      categories: the ordinal CFA's augmented (GHK) likelihood with each output's box
      moved by its mean (``bayesmeta.validity._ghk``, ``mu``).

    ``method_factors`` :math:`K > 0` adds metric method factors independent of the traits,
    :math:`x_n = a + B f_n + C h_n + e_n`, :math:`h_n \sim N(0, I_K)`, :math:`C` (M x K)
    lower-triangular with a positive diagonal once its rows are ordered with the K
    ``leaders`` first (rotation and signs fixed; default the first K metrics; the public
    function picks metrics with large, distinct method loadings, so that no diagonal
    entry sits near 0, where its sign would be weakly identified;
    :func:`method_structure`, held in data containers so one compilation serves any
    leaders): the same algebra with
    :math:`[B, C]` and :math:`\operatorname{blockdiag}(\Psi, I_K)`, the ratings
    conditioned on the trait block of :math:`m_n` and :math:`V`.

    The traits given :math:`y^*` and :math:`x` are normal with mean
    :math:`m_n + A e_n` (:math:`A = V\Lambda^\top L^{-\top}`, :math:`LL^\top` the
    conditional covariance above, :math:`e_n` the GHK innovations), stored as
    ``factor_score_mean``, and covariance :math:`V - AA^\top`; the traits are drawn from
    it after sampling (:func:`draw_marginal_traits`). Same priors as
    :func:`build_joint_model`; the validity coefficients are sampled in orthonormal trait
    coordinates (:func:`_orthonormal_loadings`).
    """
    import pymc as pm
    import pytensor.tensor as pt
    from pytensor.tensor.slinalg import block_diag, solve_triangular

    from bayesmeta.validity._ghk import cholesky

    d = jd.design
    N, F = d.n_rows, d.n_factors
    M = len(jd.metrics)
    if not jd.observed.all():
        raise ValueError("the marginal joint model needs every metric score observed.")
    K = int(method_factors)
    if not 0 <= K < M:
        raise ValueError(f"method_factors must be an integer in [0, {M - 1}] (fewer than the "
                         f"{M} metrics), got {method_factors!r}.")
    Q = F + K
    leaders = tuple(range(K)) if leaders is None else tuple(int(j) for j in leaders)
    if len(leaders) != K or len(set(leaders)) != K or not all(0 <= j < M for j in leaders):
        raise ValueError(f"leaders must be {K} distinct metric indices in [0, {M}), got "
                         f"{leaders!r}.")
    vals = model_data(jd, "marginal", leaders)
    coords = {**model_coords(d), "metric": list(jd.metrics),
              "method": [f"method{k + 1}" for k in range(K)]}
    eye_f, eye_q = np.eye(F), np.eye(Q)
    with pm.Model(coords=coords) as model:
        lo, hi = category_data(vals)
        x = pm.Data("metric_score", vals["metric_score"], dims=("output", "metric"))
        lstd, tau, chol, _ = _structural_parameters(d, (1.0, 1.0), 1.0, anchor_data=True)
        a = pm.Normal("metric_intercept", 0.0, 1.0, dims="metric")
        sd = pm.HalfNormal("error_sd", 1.0, dims="metric", initval=np.full(M, 0.8))
        b = _orthonormal_loadings(chol, M, F)
        # ---- the metrics, traits integrated out (Woodbury) ------------------------------
        w = sd**-2  # (M,)
        r = x - a[None, :]  # (N, M)
        chol_inv = solve_triangular(chol, eye_f, lower=True)
        prior_prec = chol_inv.T @ chol_inv  # Psi^-1
        bt = b
        if K:
            mask = pm.Data("method_mask", vals["method_mask"], dims=("metric", "method"))
            pivot = pm.Data("method_pivot", vals["method_pivot"], dims=("metric", "method"))
            free = pm.Normal("method_loading_free", 0.0, 1.0, shape=(M, K),
                             initval=np.zeros((M, K)))
            diag = pm.HalfNormal("method_loading_diag", 1.0, shape=K,
                                 initval=np.full(K, 0.5))
            C = pm.Deterministic("method_loading", free * mask + pivot * diag[None, :],
                                 dims=("metric", "method"))
            bt = pt.concatenate([b, C], axis=1)  # (M, Q)
            prior_prec = block_diag(prior_prec, np.eye(K))
        G = bt.T * w[None, :]  # (Q, M): [B, C]' D^-1
        P = prior_prec + G @ bt  # blockdiag(Psi, I)^-1 + [B, C]' D^-1 [B, C]
        LP = cholesky(P)
        h = solve_triangular(LP, (r @ G.T).T, lower=True)  # (Q, N)
        m = solve_triangular(LP.T, h, lower=False).T[:, :F]  # (N, F): traits given x
        logdet = (pt.sum(pt.log(sd**2)) + 2 * pt.sum(pt.log(pt.diagonal(chol)))
                  + 2 * pt.sum(pt.log(pt.diagonal(LP))))
        quad = pt.sum(r**2 * w[None, :]) - pt.sum(h**2)
        pm.Potential("metric_loglik",
                     -0.5 * (N * M * np.log(2 * np.pi) + N * logdet + quad))
        Vh = solve_triangular(LP, eye_q, lower=True)[:, :F]  # traits' V = Vh' Vh
        ratings_given_metrics(d, lstd, tau, lo, hi, m, Vh.T)
    return model


def category_data(vals: dict[str, np.ndarray]) -> tuple[Any, Any]:
    """The ratings' category slots (``lo_slot``, ``hi_slot``) as data containers of the
    model in context, cast to the int64 the GHK kernel reads (PyMC stores integer data as
    int32)."""
    import pymc as pm
    import pytensor.tensor as pt

    return tuple(pt.cast(pm.Data(name, vals[name], dims=("output", "indicator")), "int64")
                 for name in ("lo_slot", "hi_slot"))


def ratings_given_metrics(design: Design, lstd: Any, tau: Any, lo: Any, hi: Any,
                          mean: Any, vroot: Any) -> None:
    r"""Inside a model context: the ratings given the metrics, for the builds that
    integrate the traits out. With the traits given the metrics :math:`N(m_n, V)`,
    :math:`V = RR^\top` (``mean`` (N, F), ``vroot`` R (F, Q)), the standardized latent
    responses are :math:`N(\Lambda m_n, \Lambda V\Lambda^\top +
    \operatorname{diag}(1 - \lambda^{*2}))`, truncated to the box of the observed
    categories (``lo``/``hi`` slots of the padded ``tau``): the ordinal CFA's augmented GHK
    likelihood with each output's box moved by its mean (``rating_loglik``, latent
    ``latent_u``). Adds ``factor_score_mean``, the traits' mean given :math:`y^*` and the
    metrics, :math:`m_n + A e_n` (:math:`A = V\Lambda^\top L^{-\top}`, :math:`e_n` the
    GHK innovations)."""
    import pymc as pm
    import pytensor.tensor as pt
    from pytensor.tensor.slinalg import solve_triangular

    from bayesmeta.validity._ghk import cholesky, ghk_innovations, ghk_loglik

    N, F, J = design.n_rows, design.n_factors, design.n_indicators
    lam = lstd[:, None] * np.eye(F)[design.factor_of]  # (J, F)
    lv = lam @ vroot  # (J, Q)
    L = cholesky(lv @ lv.T + pt.diag(1.0 - lstd**2))
    cuts = padded_cutpoints(tau)
    mu = mean @ lam.T  # (N, J)
    u = pm.Uniform("latent_u", 0.0, 1.0, shape=(N, J), initval=np.full((N, J), 0.5))
    pm.Potential("rating_loglik", ghk_loglik(L, cuts, lo, hi, u, mu))
    e = ghk_innovations(L, cuts, lo, hi, u, mu)
    A = solve_triangular(L, lam @ (vroot @ vroot.T), lower=True).T  # (F, J)
    pm.Deterministic("factor_score_mean", mean + e @ A.T, dims=("output", "trait"))


def draw_marginal_traits(posterior: xr.Dataset, jd: JointData, seed: int) -> xr.Dataset:
    r"""The traits of the marginal model: per posterior draw, one draw from
    :math:`N(\text{factor\_score\_mean}, V - AA^\top)` (see
    :func:`build_marginal_joint_model`), the covariance computed in its precision form
    :math:`(\Psi^{-1} + B^\top D^{-1} B + \Lambda^\top \Theta^{-1} \Lambda)^{-1}`,
    :math:`\Theta = \operatorname{diag}(1 - \lambda^{*2})`; seeded by the fit's seed.
    Returns the posterior with ``factor_score`` in place of ``factor_score_mean``."""
    d = jd.design
    F = d.n_factors
    mean = posterior["factor_score_mean"].transpose("chain", "draw", "output", "trait")
    C, S = posterior.sizes["chain"], posterior.sizes["draw"]
    lstd = posterior["loading_std"].transpose("chain", "draw", "indicator").values
    psi = posterior["factor_corr"].transpose("chain", "draw", "trait", "trait2").values
    b = posterior["metric_loading"].transpose("chain", "draw", "metric", "trait").values
    sd = posterior["error_sd"].transpose("chain", "draw", "metric").values
    lstd, psi = lstd.reshape(C * S, -1), psi.reshape(C * S, F, F)
    b, sd = b.reshape(C * S, -1, F), sd.reshape(C * S, -1)
    lam = lstd[:, :, None] * np.eye(F)[d.factor_of][None]  # (S, J, F)
    if "method_loading" in posterior:
        c = posterior["method_loading"].transpose("chain", "draw", "metric", "method")
        bt = np.concatenate([b, c.values.reshape(C * S, -1, c.sizes["method"])], axis=-1)
    else:
        bt = b
    # V - A A' in its precision form (positive definite by construction), the traits'
    # block of (blockdiag(Psi, I)^-1 + [B, C]' D^-1 [B, C] + Lambda' Theta^-1 Lambda)^-1;
    # with correlated errors V^-1 + Lambda' Theta^-1 Lambda, V stored by the model
    rating_prec = np.einsum("sjf,sj,sjg->sfg", lam, 1.0 / (1.0 - lstd**2), lam)
    if "trait_given_metrics" in posterior:  # V, stored by the correlated-errors build
        v = posterior["trait_given_metrics"].transpose("chain", "draw", "trait", "trait2")
        prec = np.linalg.inv(v.values.reshape(C * S, F, F)) + rating_prec
    else:
        prec = np.einsum("smf,sm,smg->sfg", bt, sd**-2, bt)
        prec[:, :F, :F] += np.linalg.inv(psi) + rating_prec
        prec[:, F:, F:] += np.eye(bt.shape[-1] - F)
    cond = np.linalg.inv(prec)[:, :F, :F]
    chol = np.linalg.cholesky(0.5 * (cond + np.swapaxes(cond, 1, 2)))
    rng = np.random.default_rng([seed, 20261127])
    z = rng.standard_normal((C * S, d.n_rows, F))
    noise = np.einsum("sfg,sng->snf", chol, z).reshape(C, S, d.n_rows, F)
    out = posterior.copy()
    out["factor_score"] = mean + xr.DataArray(noise, dims=mean.dims)
    return out.drop_vars([v for v in ("factor_score_mean", "trait_given_metrics")
                          if v in out])


def build_joint_model(jd: JointData, *, errors: str = "normal",
                      parameterization: str = "noncentred") -> Any:
    r"""The PyMC model: the ordinal CFA (factor scores sampled) plus the metric part.

    Priors (metric scores standardized): :math:`a_m \sim N(0, 1)`, :math:`b_{mt} \sim
    N(0, 1)`, :math:`\sigma_m \sim \mathrm{HalfNormal}(1)`; with ``errors="student_t"``
    the error is a Student-t with :math:`\nu_m = 2 + g_m`, :math:`g_m \sim
    \mathrm{Gamma}(2, 0.1)`, scaled so that :math:`\sigma_m` stays the error sd.
    """
    import pymc as pm
    import pytensor.tensor as pt

    if errors not in ERRORS:
        raise ValueError(f"errors must be one of {ERRORS}, got {errors!r}.")
    M = jd.x.shape[1]
    model = build_model(jd.design, factor_param=parameterization, likelihood="interval",
                        store_scores=True, data_containers=True)
    model.add_coord("metric", list(jd.metrics))
    vals = model_data(jd)
    with model:
        x = pm.Data("metric_score", vals["metric_score"], dims=("output", "metric"))
        w = pm.Data("metric_observed", vals["metric_observed"], dims=("output", "metric"))
        f = model["factor_score"]
        a, b, sd = _metric_priors(M, jd.design.n_factors)
        resid = x - a[None, :] - f @ b.T  # (N, M)
        if errors == "normal":
            ll = -0.5 * (resid / sd) ** 2 - pt.log(sd) - 0.5 * np.log(2 * np.pi)
        else:
            g = pm.Gamma("error_nu_excess", 2.0, 0.1, dims="metric")
            nu = pm.Deterministic("error_nu", 2.0 + g, dims="metric")
            ll = pm.logp(pm.StudentT.dist(nu=nu, mu=0.0,
                                          sigma=sd * pt.sqrt(g / nu)), resid)
        pm.Potential("metric_loglik", pt.sum(ll * w))
    return model


def metric_log_likelihood(posterior: xr.Dataset, jd: JointData) -> xr.DataArray:
    """Pointwise log density of every output's metric scores given its factor scores and
    the parameters, summed over metrics: (chain, draw, output)."""
    from scipy import stats

    f = posterior["factor_score"].transpose("chain", "draw", "output", "trait").values
    a = posterior["metric_intercept"].transpose("chain", "draw", "metric").values
    b = posterior["metric_loading"].transpose("chain", "draw", "metric", "trait").values
    sd = posterior["error_sd"].transpose("chain", "draw", "metric").values
    obs = jd.observed
    x = np.where(obs, jd.x, 0.0)
    C, D = a.shape[:2]
    out = np.empty((C, D, x.shape[0]))
    nu = (posterior["error_nu"].transpose("chain", "draw", "metric").values
          if "error_nu" in posterior else None)
    for c in range(C):
        for d in range(D):
            e = x - a[c, d] - f[c, d] @ b[c, d].T
            if nu is None:
                lp = stats.norm.logpdf(e, scale=sd[c, d])
            else:
                n = nu[c, d]
                lp = stats.t.logpdf(e, df=n, scale=sd[c, d] * np.sqrt((n - 2) / n))
            out[c, d] = (lp * obs).sum(1)
    return xr.DataArray(out, dims=("chain", "draw", "output"))


def estimand_draws(posterior: xr.Dataset) -> dict[str, np.ndarray]:
    r"""Standardized estimands per draw from the model-implied variance of each metric,
    :math:`V_m = b_m^\top \Psi b_m + c_m^\top c_m + \sigma_m^2` (:math:`c_m` its method
    loadings, if any): ``beta`` :math:`b_m / \sqrt{V_m}` (C, D, M, T), ``r2``
    :math:`b_m^\top\Psi b_m / V_m`, ``error_share`` :math:`\sigma_m^2 / V_m` (C, D, M),
    ``r`` :math:`\Psi \beta_m` (C, D, M, T), and with method factors ``method_share``
    :math:`c_m^\top c_m / V_m`."""
    b = posterior["metric_loading"].transpose("chain", "draw", "metric", "trait").values
    sd = posterior["error_sd"].transpose("chain", "draw", "metric").values
    psi = posterior["factor_corr"].transpose("chain", "draw", "trait", "trait2").values
    rb = np.einsum("cdst,cdmt->cdms", psi, b)
    quad = np.einsum("cdmt,cdmt->cdm", b, rb)
    method = (np.square(posterior["method_loading"].transpose("chain", "draw", "metric",
                                                              "method").values).sum(-1)
              if "method_loading" in posterior else np.zeros_like(sd))
    var = quad + method + sd**2
    root = np.sqrt(var)
    out = {"beta": b / root[..., None], "r": rb / root[..., None], "r2": quad / var,
           "error_share": sd**2 / var}
    if "method_loading" in posterior:
        out["method_share"] = method / var
    return out


def reported_dataset(idata: Any) -> xr.Dataset:
    """The sampled parameters behind the joint model's table: the validity coefficients and
    error shares of every metric, the raw error sds and coefficients, and the CFA's loadings
    and factor correlations. The stopping rule and the convergence check read these and
    every row of the table itself (``joint_model.reported_quantities``)."""
    post = idata.posterior
    parts = estimand_draws(post)
    dims = ("chain", "draw", "metric", "trait")
    ds = xr.Dataset({
        "validity_coefficient": (dims, parts["beta"]),
        "error_share": (dims[:3], parts["error_share"]),
        "error_sd": post["error_sd"], "metric_loading": post["metric_loading"],
        "loading_std": post["loading_std"], "factor_corr": post["factor_corr"],
    })
    if "method_share" in parts:  # rotation-invariant; the method loadings themselves not
        ds["method_share"] = (dims[:3], parts["method_share"])
    return ds


def residual_correlation_draws(posterior: xr.Dataset, jd: JointData,
                               rows: np.ndarray) -> np.ndarray:
    r"""Per draw, the correlation over outputs ``rows`` of the residuals
    :math:`e_{nm} = x_{nm} - a_m - b_m^\top f_n` (MetricEval App. A.6 on the model's own
    draws): (C, D, M, M)."""
    f = posterior["factor_score"].transpose("chain", "draw", "output", "trait").values
    a = posterior["metric_intercept"].transpose("chain", "draw", "metric").values
    b = posterior["metric_loading"].transpose("chain", "draw", "metric", "trait").values
    x = jd.x[rows]
    C, D, M = a.shape
    out = np.empty((C, D, M, M))
    for c in range(C):
        for d in range(D):
            e = x - a[c, d] - f[c, d][rows] @ b[c, d].T
            e = e - e.mean(0)
            cov = e.T @ e
            s = np.sqrt(np.diag(cov))
            out[c, d] = cov / np.outer(s, s)
    return out


__all__ = [
    "ERRORS",
    "MARGINAL_TRACE",
    "PARAMETERIZATIONS",
    "JointData",
    "build_joint_model",
    "build_marginal_joint_model",
    "category_data",
    "draw_marginal_traits",
    "estimand_draws",
    "metric_log_likelihood",
    "model_data",
    "model_key",
    "model_syntax",
    "prepare",
    "ratings_given_metrics",
    "reported_dataset",
    "residual_correlation_draws",
    "resolve_parameterization",
]
