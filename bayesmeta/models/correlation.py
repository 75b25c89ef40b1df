r"""The hierarchical bivariate model of metric-human correlation (paper 001, App. C).

For one metric, the (metric, human) scores of the outputs of system :math:`s` on items
:math:`i = 1..n_s` are bivariate normal with a system-specific correlation :math:`r_s`;
the system means are bivariate normal with the *system-level* correlation :math:`\rho`,
and the :math:`r_s` scatter around the *item-level* location :math:`\mu_r`::

    (x[s, i], y[s, i]) ~ N2((a[s], b[s]), [[sx^2, r[s] sx sy], [r[s] sx sy, sy^2]])
    r[s]               ~ TruncatedNormal(mu_r, sigma_r, lower=-1, upper=1)
    (a[s], b[s])       ~ N2((mu_x, mu_y), [[tx^2, rho tx ty], [rho tx ty, ty^2]])

with ``x`` the metric and ``y`` the human score (Gao et al. 2024, App. C.1). Every metric
gets its own independent copy of these parameters; the model is vectorised over the
``metric`` dim. The system means are integrated out analytically, so the likelihood of
each (metric, system) cell needs only its sufficient statistics (count, two means, the
2 x 2 within-system scatter matrix) and the model has ``9 + S`` parameters per metric.

Reported per metric, next to the classical measures computed in NumPy:

* ``item_level``: the mean over the data's systems of :math:`r_s` (classical twin: the
  mean over systems of the within-system Pearson correlation, paper 001's item-level
  Pearson);
* ``system_level``: :math:`\rho` (classical twin: Pearson's r of the system means);
* ``item_level_sd``: :math:`\sigma_r` (classical: the SD over systems of the
  within-system Pearson correlations, inflated by their sampling error).

:meth:`CorrelationResult.parameter_draws` returns posterior draws of all App. C parameters
on the original score scales, and :func:`simulate_correlation_data` draws datasets from
them (posterior predictive) or from any other parameter values. See the model card
``models/correlation.md``.

PyMC is imported only inside the functions that build and sample the model.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayesmeta.data.schema import validate
from bayesmeta.results import Result, TableView, bayes_summary, data_hash

#: Rows of the summary table (per metric).
ESTIMANDS = ("item_level", "system_level", "item_level_sd")
#: The correlation measure of ``bm.correlations`` / :mod:`bayesmeta.classical.correlation`
#: that each estimand is the population counterpart of.
MEASURE_OF = {"item_level": "item_pearson", "system_level": "system_pearson"}
#: App. C parameters per metric, in the order of :meth:`CorrelationResult.parameter_draws`.
PARAMETERS = ("mu_metric", "mu_human", "tau_metric", "tau_human", "rho",
              "sigma_metric", "sigma_human", "r_mu", "r_sigma")
#: Prior scales on the standardised scale (each variable has pooled mean 0 and SD 1).
PRIORS = {
    "mu_metric": "Normal(0, 1)",
    "mu_human": "Normal(0, 1)",
    "tau_metric": "HalfNormal(1)",
    "tau_human": "HalfNormal(1)",
    "sigma_metric": "HalfNormal(1)",
    "sigma_human": "HalfNormal(1)",
    "rho": "(rho + 1) / 2 ~ Beta(2, 2)  (LKJ(2) for a 2 x 2 correlation)",
    "r_mu": "(r_mu + 1) / 2 ~ Beta(2, 2)",
    "r_sigma": "HalfNormal(0.25)",
}
R_SIGMA_PRIOR = 0.25
MIN_ITEMS = 3
_LOG2PI = float(np.log(2.0 * np.pi))


# ============================================================================ statistics
@dataclass
class CorrelationStats:
    """Sufficient statistics of the (metric, human) pairs per metric and system.

    All arrays have shape ``(M, S)``; the scores are standardised per metric by ``center``
    and ``scale`` (shape ``(M, 2)``: metric, human), the pooled mean and SD over the
    pairs where both scores are observed.
    """

    n: np.ndarray
    xbar: np.ndarray
    ybar: np.ndarray
    wxx: np.ndarray
    wyy: np.ndarray
    wxy: np.ndarray
    center: np.ndarray
    scale: np.ndarray

    def model_data(self) -> dict[str, np.ndarray]:
        """Values of the model's ``pm.Data`` containers."""
        return {"n": self.n.astype(float), "xbar": self.xbar, "ybar": self.ybar,
                "wxx": self.wxx, "wyy": self.wyy, "wxy": self.wxy}

    def subset(self, idx: np.ndarray | slice) -> CorrelationStats:
        """The statistics of the metrics at ``idx``."""
        return CorrelationStats(*(getattr(self, f)[idx] for f in
                                  ("n", "xbar", "ybar", "wxx", "wyy", "wxy", "center",
                                   "scale")))


def sufficient_stats(x: np.ndarray, y: np.ndarray) -> CorrelationStats:
    r"""Per (metric, system) counts, means and within-system scatter of standardised pairs.

    Parameters
    ----------
    x : (M, S, I) array
        Metric scores, NaN for missing.
    y : (S, I) or (M, S, I) array
        Human scores, NaN for missing (a separate human score per metric is allowed).

    Returns
    -------
    CorrelationStats
        With :math:`\tilde x = (x - c_x)/d_x` on the pairs where both are observed,
        :math:`n_{ms}`, :math:`\bar x_{ms}`, :math:`\bar y_{ms}` and
        :math:`W_{xx} = \sum_i (\tilde x_{msi} - \bar x_{ms})^2`, likewise
        :math:`W_{yy}`, :math:`W_{xy}`.

    Raises
    ------
    ValueError
        If a metric or the human score is constant, or a (metric, system) has fewer than
        3 observed pairs (its within-system correlation is undefined).
    """
    x = np.asarray(x, dtype=float)
    y = np.broadcast_to(np.asarray(y, dtype=float), x.shape)
    ok = ~np.isnan(x) & ~np.isnan(y)
    n = ok.sum(axis=-1)
    if (n < MIN_ITEMS).any():
        m, s = np.argwhere(n < MIN_ITEMS)[0]
        raise ValueError(f"metric #{m}, system #{s} has {n[m, s]} item(s) with both a metric "
                         f"and a human score; at least {MIN_ITEMS} are needed.")
    xs = np.where(ok, x, 0.0)
    ys = np.where(ok, y, 0.0)
    tot = ok.sum(axis=(1, 2))
    cx = xs.sum(axis=(1, 2)) / tot
    cy = ys.sum(axis=(1, 2)) / tot
    dx = np.sqrt((np.where(ok, x - cx[:, None, None], 0.0) ** 2).sum(axis=(1, 2)) / (tot - 1))
    dy = np.sqrt((np.where(ok, y - cy[:, None, None], 0.0) ** 2).sum(axis=(1, 2)) / (tot - 1))
    for name, d in (("metric", dx), ("human score", dy)):
        if not (np.isfinite(d) & (d > 0)).all():
            raise ValueError(f"the {name} is constant for metric #{int(np.argmin(d))}: its "
                             f"correlation is undefined.")
    zx = np.where(ok, (x - cx[:, None, None]) / dx[:, None, None], 0.0)
    zy = np.where(ok, (y - cy[:, None, None]) / dy[:, None, None], 0.0)
    xbar = zx.sum(-1) / n
    ybar = zy.sum(-1) / n
    ex = np.where(ok, zx - xbar[..., None], 0.0)
    ey = np.where(ok, zy - ybar[..., None], 0.0)
    return CorrelationStats(n=n, xbar=xbar, ybar=ybar, wxx=(ex * ex).sum(-1),
                            wyy=(ey * ey).sum(-1), wxy=(ex * ey).sum(-1),
                            center=np.stack([cx, cy], -1), scale=np.stack([dx, dy], -1))


def classical_correlations(x: np.ndarray, y: np.ndarray, *, ci_prob: float = 0.94,
                           min_count: int = MIN_ITEMS) -> dict[str, np.ndarray]:
    r"""Classical item- and system-level Pearson correlations of every metric (NumPy).

    .. math::
        r^{\text{item}} = \frac1S \sum_s \operatorname{cor}(x_{s\cdot}, y_{s\cdot}), \qquad
        r^{\text{system}} = \operatorname{cor}(\bar x_{s\cdot}, \bar y_{s\cdot}),

    the within-system correlations over the items where both scores are observed (NaN and
    left out of the mean with fewer than ``min_count``), system means over each score's
    own observed items (as in :mod:`bayesmeta.classical.correlation`). Also the SD over
    systems (``ddof=1``) of the within-system correlations, and the Fisher-z interval
    :math:`\tanh(\operatorname{atanh} r \pm z_{(1+p)/2}/\sqrt{S-3})` of the
    system-level r.

    Parameters
    ----------
    x : (M, S, I) array
    y : (S, I) or (M, S, I) array
    ci_prob : float
        Probability of the Fisher-z interval.
    min_count : int

    Returns
    -------
    dict
        ``item_level``, ``item_level_sd``, ``system_level``, ``system_low``,
        ``system_high`` (arrays of length M) and ``within`` (M, S).

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmeta.models.correlation import classical_correlations
    >>> rng = np.random.default_rng(0)
    >>> y = rng.normal(size=(5, 30))
    >>> x = (y + rng.normal(size=(5, 30)))[None]
    >>> c = classical_correlations(x, y)
    >>> bool(np.isclose(c["item_level"][0], np.mean([np.corrcoef(x[0, s], y[s])[0, 1]
    ...                                              for s in range(5)])))
    True
    """
    from scipy.stats import norm

    x = np.asarray(x, dtype=float)
    y = np.broadcast_to(np.asarray(y, dtype=float), x.shape)
    ok = ~np.isnan(x) & ~np.isnan(y)
    n = ok.sum(-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mx = np.where(ok, x, 0).sum(-1) / n
        my = np.where(ok, y, 0).sum(-1) / n
        ex = np.where(ok, x - mx[..., None], 0)
        ey = np.where(ok, y - my[..., None], 0)
        r = (ex * ey).sum(-1) / np.sqrt((ex**2).sum(-1) * (ey**2).sum(-1))
    r = np.where(n >= min_count, r, np.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        item = np.nanmean(r, axis=-1)
        item_sd = np.nanstd(r, axis=-1, ddof=1)
        sx = np.nanmean(x, axis=-1)
        sy = np.nanmean(y, axis=-1)
    both = ~np.isnan(sx) & ~np.isnan(sy)
    ax_ = np.where(both, sx - np.nanmean(np.where(both, sx, np.nan), -1, keepdims=True), 0)
    ay_ = np.where(both, sy - np.nanmean(np.where(both, sy, np.nan), -1, keepdims=True), 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        system = (ax_ * ay_).sum(-1) / np.sqrt((ax_**2).sum(-1) * (ay_**2).sum(-1))
        half = norm.ppf(0.5 + ci_prob / 2) / np.sqrt(both.sum(-1) - 3)
        zr = np.arctanh(np.clip(system, -1 + 1e-15, 1 - 1e-15))
    return {"item_level": item, "item_level_sd": item_sd, "system_level": system,
            "system_low": np.tanh(zr - half), "system_high": np.tanh(zr + half),
            "within": r}


# ============================================================================ model
def build_model(n_metrics: int, n_systems: int, *, centered: bool = True) -> Any:
    r"""Build the (data-free) PyMC model for ``n_metrics`` metrics and ``n_systems`` systems.

    The data enter through ``pm.Data`` containers ``n``, ``xbar``, ``ybar``, ``wxx``,
    ``wyy``, ``wxy`` (all ``(metric, system)``, standardised scale; see
    :func:`sufficient_stats`), so one compiled model serves every dataset of that shape.

    Variables (dims in brackets): ``mu_metric``, ``mu_human``, ``tau_metric``,
    ``tau_human``, ``sigma_metric``, ``sigma_human``, ``rho``, ``r_mu``, ``r_sigma``
    [metric]; ``r`` [metric, system]. The log-likelihood is the potential
    ``loglik`` [metric, system]: the exact marginal log-density of the standardised
    scores of one system with its means :math:`(a_s, b_s)` integrated out,

    .. math::
        \ell_{ms} = -(n-1)\log 2\pi - \log n - \tfrac{n-1}{2}\log|\Sigma_{ms}|
          - \tfrac12\operatorname{tr}(\Sigma_{ms}^{-1} W_{ms})
          + \log N_2\big((\bar x, \bar y);\ (\mu_x, \mu_y),\ T_m + \Sigma_{ms}/n\big),

    :math:`\Sigma_{ms}` the within-system covariance with correlation :math:`r_{ms}`,
    :math:`T_m` the covariance of system means with correlation :math:`\rho_m`.

    Parameters
    ----------
    n_metrics, n_systems : int
    centered : bool
        ``True``: ``r ~ TruncatedNormal(r_mu, r_sigma, -1, 1)`` directly. ``False``: the
        non-centred form ``r = F^{-1}(u)``, ``u ~ Uniform(0, 1)``, with ``F`` the
        truncated-normal CDF (for weakly informative data, where ``r_sigma`` is small).
    """
    import pymc as pm
    import pytensor.tensor as pt

    M, S = int(n_metrics), int(n_systems)
    coords = {"metric": np.arange(M), "system": np.arange(S)}
    fill = {"n": np.full((M, S), 10.0), "xbar": np.zeros((M, S)), "ybar": np.zeros((M, S)),
            "wxx": np.full((M, S), 9.0), "wyy": np.full((M, S), 9.0),
            "wxy": np.zeros((M, S))}
    with pm.Model(coords=coords) as model:
        d = {k: pm.Data(k, v, dims=("metric", "system")) for k, v in fill.items()}
        mu_x = pm.Normal("mu_metric", 0.0, 1.0, dims="metric")
        mu_y = pm.Normal("mu_human", 0.0, 1.0, dims="metric")
        tx = pm.HalfNormal("tau_metric", 1.0, dims="metric")
        ty = pm.HalfNormal("tau_human", 1.0, dims="metric")
        sx = pm.HalfNormal("sigma_metric", 1.0, dims="metric")
        sy = pm.HalfNormal("sigma_human", 1.0, dims="metric")
        # (rho + 1) / 2 ~ Beta(2, 2), i.e. p(rho) = 3/4 (1 - rho^2) on (-1, 1): a Uniform
        # base plus a potential (the same density; a smaller graph than a scaled Beta)
        rho = pm.Uniform("rho", -1.0, 1.0, dims="metric")
        r_mu = pm.Uniform("r_mu", -1.0, 1.0, dims="metric")
        pm.Potential("rho_prior", np.log(1.5) + pt.log1p(-(rho**2)), dims="metric")
        pm.Potential("r_mu_prior", np.log(1.5) + pt.log1p(-(r_mu**2)), dims="metric")
        r_sigma = pm.HalfNormal("r_sigma", R_SIGMA_PRIOR, dims="metric")
        if centered:
            # r ~ TruncatedNormal(r_mu, r_sigma, -1, 1), written out: a Uniform(-1, 1) base
            # (its interval transform) plus the truncated-normal log-density as a potential
            # (simpler graph than pm.TruncatedNormal, so nutpie compiles it faster)
            r = pm.Uniform("r", -1.0, 1.0, dims=("metric", "system"))
            mu_c, sd_c = r_mu[:, None], r_sigma[:, None]
            mass = 0.5 * (pt.erfc((mu_c - 1.0) / (sd_c * np.sqrt(2.0)))
                          - pt.erfc((mu_c + 1.0) / (sd_c * np.sqrt(2.0))))
            pm.Potential("r_prior", -0.5 * ((r - mu_c) / sd_c) ** 2 - pt.log(sd_c)
                         - 0.5 * _LOG2PI + np.log(2.0) - pt.log(mass),
                         dims=("metric", "system"))
        else:
            u = pm.Uniform("r_unit", 0.0, 1.0, dims=("metric", "system"))
            lo = (-1.0 - r_mu[:, None]) / r_sigma[:, None]
            hi = (1.0 - r_mu[:, None]) / r_sigma[:, None]
            # F^{-1}(u) via the complementary error function, stable in both tails
            plo = 0.5 * pt.erfc(-lo / np.sqrt(2.0))
            phi = 0.5 * pt.erfc(-hi / np.sqrt(2.0))
            p = plo + u * (phi - plo)
            z = -np.sqrt(2.0) * pt.erfcinv(2.0 * p)
            r = pm.Deterministic("r", pt.clip(r_mu[:, None] + r_sigma[:, None] * z,
                                              -1 + 1e-9, 1 - 1e-9), dims=("metric", "system"))
        n = d["n"]
        sxm, sym, txm, tym = sx[:, None], sy[:, None], tx[:, None], ty[:, None]
        one_r2 = 1.0 - r**2
        within = (-(n - 1.0) * _LOG2PI - pt.log(n)
                  - 0.5 * (n - 1.0) * (2 * pt.log(sxm) + 2 * pt.log(sym) + pt.log(one_r2))
                  - 0.5 / one_r2 * (d["wxx"] / sxm**2 - 2 * r * d["wxy"] / (sxm * sym)
                                    + d["wyy"] / sym**2))
        c11 = txm**2 + sxm**2 / n
        c22 = tym**2 + sym**2 / n
        c12 = rho[:, None] * txm * tym + r * sxm * sym / n
        det = c11 * c22 - c12**2
        ex = d["xbar"] - mu_x[:, None]
        ey = d["ybar"] - mu_y[:, None]
        quad = (c22 * ex**2 - 2 * c12 * ex * ey + c11 * ey**2) / det
        means = -_LOG2PI - 0.5 * pt.log(det) - 0.5 * quad
        pm.Potential("loglik", within + means, dims=("metric", "system"))
    return model


# ============================================================================ simulation
def sample_prior(n_metrics: int, *, random_seed: int | None = None) -> xr.Dataset:
    """Draw App. C parameters from the model's prior (standardised scale), one set per
    metric: the truth of simulation-based calibration. Returns a Dataset with the
    variables of :data:`PARAMETERS` (dim ``metric``)."""
    rng = np.random.default_rng(random_seed)
    M = int(n_metrics)
    vals = {
        "mu_metric": rng.normal(0, 1, M), "mu_human": rng.normal(0, 1, M),
        "tau_metric": np.abs(rng.normal(0, 1, M)), "tau_human": np.abs(rng.normal(0, 1, M)),
        "rho": 2 * rng.beta(2, 2, M) - 1,
        "sigma_metric": np.abs(rng.normal(0, 1, M)),
        "sigma_human": np.abs(rng.normal(0, 1, M)),
        "r_mu": 2 * rng.beta(2, 2, M) - 1,
        "r_sigma": np.abs(rng.normal(0, R_SIGMA_PRIOR, M)),
    }
    return xr.Dataset({k: ("metric", v) for k, v in vals.items()},
                      coords={"metric": [f"m{j}" for j in range(M)]})


def _truncnorm(rng: np.random.Generator, mu: np.ndarray, sigma: np.ndarray,
               size: tuple[int, ...]) -> np.ndarray:
    from scipy.stats import truncnorm

    mu, sigma = np.broadcast_arrays(mu, sigma)
    a = (-1.0 - mu) / sigma
    b = (1.0 - mu) / sigma
    u = rng.uniform(size=size)
    out = truncnorm.ppf(u, a, b, loc=mu, scale=sigma)
    return np.clip(out, -1 + 1e-12, 1 - 1e-12)


def simulate_correlation_data(
    params: xr.Dataset | Mapping[str, Any],
    *,
    n_systems: int = 17,
    n_items: int = 100,
    random_seed: int | None = None,
    r: Any = None,
) -> xr.Dataset:
    r"""Draw (metric, human) scores from the App. C generative model.

    For every metric :math:`m` (and every leading sample index, if the parameters have
    one)::

        r[s]         ~ TruncatedNormal(r_mu, r_sigma, -1, 1)        (unless r is given)
        (a[s], b[s]) ~ N2((mu_metric, mu_human),
                          [[tau_metric^2, rho tau_metric tau_human], [..., tau_human^2]])
        (x[s,i], y[s,i]) ~ N2((a[s], b[s]),
                          [[sigma_metric^2, r[s] sigma_metric sigma_human], [..., ...]])

    Parameters
    ----------
    params : xarray.Dataset or dict
        The variables of :data:`PARAMETERS`, each with dim ``metric`` and optionally
        leading dims (e.g. ``sample`` from :meth:`CorrelationResult.parameter_draws`).
    n_systems, n_items : int
        Size of each simulated dataset.
    random_seed : int, optional
    r : array-like, optional
        Fixed within-system correlations with dims ``(..., metric, system)`` (the
        same-systems posterior predictive); drawn from the truncated normal when omitted.

    Returns
    -------
    xarray.Dataset
        ``score`` with dims ``(..., system, item, metric, run)`` (``run`` of length 1, the
        schema's order), ``human`` with dims ``(..., metric, system, item)`` (App. C
        simulates a human score per metric), and the true ``r`` ``(..., metric, system)``
        and system means ``a``, ``b``. Fit it with
        ``fit_correlation_model(sim, human=sim["human"])`` (one sample at a time).

    References
    ----------
    Gao, Hu, Lin & Wan (2024), *Analyzing and Evaluating Correlation Measures in NLG
    Meta-Evaluation*, App. C.1 (paper 001).

    Examples
    --------
    >>> from bayesmeta.models.correlation import sample_prior, simulate_correlation_data
    >>> sim = simulate_correlation_data(sample_prior(3, random_seed=1), n_systems=5,
    ...                                 n_items=20, random_seed=2)
    >>> dict(sim["human"].sizes)
    {'metric': 3, 'system': 5, 'item': 20}
    """
    rng = np.random.default_rng(random_seed)
    if isinstance(params, xr.Dataset):
        ds = params
    else:
        ds = xr.Dataset({k: (("metric",) if np.ndim(v) == 1 else
                             (*tuple(f"dim_{j}" for j in range(np.ndim(v) - 1)), "metric"),
                             np.asarray(v, float)) for k, v in params.items()})
    missing = [p for p in PARAMETERS if p not in ds]
    if missing:
        raise ValueError(f"params: missing {', '.join(missing)}.")
    ds = ds[list(PARAMETERS)].transpose(..., "metric")
    lead = [d for d in ds["rho"].dims if d != "metric"]
    P = {k: np.asarray(ds[k].values, float) for k in PARAMETERS}
    shape = P["rho"].shape  # (..., M)
    S, I = int(n_systems), int(n_items)
    if r is None:
        rr = _truncnorm(rng, P["r_mu"][..., None], P["r_sigma"][..., None], (*shape, S))
    else:
        rr = np.asarray(r.values if isinstance(r, xr.DataArray) else r, float)
        rr = np.broadcast_to(rr, (*shape, S))
    z1, z2 = rng.normal(size=(2, *shape, S))
    tx, ty, rho = P["tau_metric"][..., None], P["tau_human"][..., None], P["rho"][..., None]
    a = P["mu_metric"][..., None] + tx * z1
    b = P["mu_human"][..., None] + ty * (rho * z1 + np.sqrt(1 - rho**2) * z2)
    e1, e2 = rng.normal(size=(2, *shape, S, I))
    sx, sy = P["sigma_metric"][..., None, None], P["sigma_human"][..., None, None]
    rs = rr[..., None]
    x = a[..., None] + sx * e1
    y = b[..., None] + sy * (rs * e1 + np.sqrt(1 - rs**2) * e2)
    metric = (ds["metric"].values if "metric" in ds.coords
              else np.array([f"m{j}" for j in range(shape[-1])]))
    coords: dict[str, Any] = {"metric": metric, "system": [f"s{j}" for j in range(S)],
                              "item": [f"i{j}" for j in range(I)], "run": ["1"]}
    for dname in lead:
        if dname in ds.coords:
            coords[dname] = ds[dname].values
    nl = len(lead)
    order = [*range(nl), nl + 1, nl + 2, nl]  # (..., S, I, M)
    score = np.transpose(x, order)[..., None]
    return xr.Dataset(
        {"score": ((*lead, "system", "item", "metric", "run"), score),
         "human": ((*lead, "metric", "system", "item"), y),
         "r": ((*lead, "metric", "system"), rr),
         "a": ((*lead, "metric", "system"), a),
         "b": ((*lead, "metric", "system"), b)},
        coords=coords,
        attrs={"simulator": "bayesmeta.models.correlation (paper 001, App. C)",
               "random_seed": -1 if random_seed is None else int(random_seed)},
    )


# ============================================================================ results
class CorrelationResult(Result):
    """Posterior item- and system-level metric-human correlations next to the classical ones.

    Returned by :func:`fit_correlation_model`. ``summary()`` is indexed by
    ``(metric, estimand)`` with estimands ``item_level``, ``system_level`` and
    ``item_level_sd``; :meth:`parameters` summarises every App. C parameter;
    :meth:`parameter_draws` gives the posterior draws for simulation.
    """

    _SECTIONS = (
        ("item_level", "Item-level correlation: mean over systems of the within-system "
                       "correlation r_s (classical: mean within-system Pearson r)"),
        ("system_level", "System-level correlation rho of the system means (classical: "
                         "Pearson r of system means, Fisher-z interval)"),
        ("item_level_sd", "Spread of r_s across systems, sigma_r (classical: SD of the "
                          "within-system Pearson r, inflated by their sampling error)"),
    )

    def _body(self) -> str:
        tab = self._table
        parts = []
        for est, title in self._SECTIONS:
            if est not in set(tab.index.get_level_values("estimand")):
                continue
            sub = tab.xs(est, level="estimand")
            sub = sub[[c for c in sub.columns if not sub[c].isna().all()]]
            parts += [title, self._format_table(sub), ""]
        return "\n".join(parts).rstrip()

    def plot(self, ax: Any = None, column: str | None = None, *,
             estimand: str = "item_level") -> Any:
        """Forest plot of one estimand over the metrics: posterior mean with its HDI and
        the classical estimate (cross). Returns the Figure."""
        from bayesmeta.plots import plot_forest

        if estimand not in ESTIMANDS:
            raise ValueError(f"estimand must be one of {', '.join(ESTIMANDS)}, got "
                             f"{estimand!r}.")
        view = TableView(self._table.xs(estimand, level="estimand"),
                          f"{self.title}: {estimand}", self.ci_prob)
        return plot_forest(view, ax=ax, column=column).figure

    def by_measure(self) -> pd.DataFrame:
        """The posterior columns indexed like ``bm.correlations(...).summary()``:
        ``(metric, measure)`` with ``measure`` in ``item_pearson`` (the item-level estimand)
        and ``system_pearson`` (the system-level one), columns ``mean, sd, hdi_low,
        hdi_high, r_hat, ess_bulk, ess_tail``. Join it to that table to show the model's
        posterior next to the sample measures and their (Bayesian) bootstrap.

        Examples
        --------
        >>> res = bm.correlations(ds, "COH")  # doctest: +SKIP
        >>> fit = bm.fit_correlation_model(ds, trait="COH")  # doctest: +SKIP
        >>> res.summary().join(fit.by_measure(), rsuffix="_model")  # doctest: +SKIP
        """
        tab = self._table.reset_index()
        tab = tab[tab["measure"] != ""]
        cols = ["mean", "sd", "hdi_low", "hdi_high", "r_hat", "ess_bulk", "ess_tail"]
        return tab.set_index(["metric", "measure"])[cols]

    def parameters(self) -> pd.DataFrame:
        """Posterior summary of every App. C parameter on the original score scales,
        indexed by ``(metric, parameter)`` (``r`` indexed by ``(metric, system)`` is in
        :meth:`within_system`)."""
        post = self.parameter_draws(stack=False)
        tab = bayes_summary(post, list(PARAMETERS), ci_prob=self.ci_prob)
        tab = tab.rename(columns={"variable": "parameter"})
        order = {m: j for j, m in enumerate(post["metric"].values)}
        tab = tab.iloc[np.lexsort((tab["parameter"].map(PARAMETERS.index).values,
                                   tab["metric"].map(order).values))]
        return tab.set_index(["metric", "parameter"])

    def within_system(self) -> pd.DataFrame:
        """Posterior of each system's correlation :math:`r_s`, indexed by
        ``(metric, system)``, with the classical within-system Pearson r."""
        tab = bayes_summary(self.idata.posterior, ["r"], ci_prob=self.ci_prob)
        tab = tab.drop(columns="variable").set_index(["metric", "system"])
        classical = self.extra["within_classical"].to_series()
        tab.insert(0, "classical", classical.reindex(tab.index).values)
        return tab

    def parameter_draws(self, n_draws: int | None = None, *, random_seed: int | None = None,
                        stack: bool = True) -> xr.Dataset:
        r"""Posterior draws of the App. C parameters, on the original score scales.

        The standardised-scale parameters are transformed back with the per-metric pooled
        mean :math:`c` and SD :math:`d` of each score: :math:`\mu \to c + d\mu`,
        :math:`\tau \to d\tau`, :math:`\sigma \to d\sigma`; correlations are unchanged.

        Parameters
        ----------
        n_draws : int, optional
            A random subset of this many draws (default all).
        random_seed : int, optional
            Seed of the subset.
        stack : bool
            Stack ``chain`` and ``draw`` into one dim ``sample`` (default), the form
            :func:`simulate_correlation_data` and the App. C simulator take.

        Returns
        -------
        xarray.Dataset
            Variables :data:`PARAMETERS` with dims ``(sample, metric)`` and ``r``
            ``(sample, metric, system)`` (the fitted systems' correlations).

        Examples
        --------
        >>> draws = fit.parameter_draws(200, random_seed=0)  # doctest: +SKIP
        >>> sim = simulate_correlation_data(draws, n_systems=17, n_items=100)  # doctest: +SKIP
        """
        post = self.idata.posterior
        scale = self.extra["scale"]
        out = xr.Dataset(attrs={"scale": "original score scales"})
        for name in PARAMETERS:
            da = post[name]
            side = "metric" if name.endswith("_metric") else "human"
            if name.startswith("mu_"):
                da = (self.extra["center"].sel(side=side, drop=True)
                      + scale.sel(side=side, drop=True) * da)
            elif name.startswith(("tau_", "sigma_")):
                da = scale.sel(side=side, drop=True) * da
            out[name] = da
        out["r"] = post["r"]
        if not stack:
            return out
        out = out.stack(sample=("chain", "draw")).transpose("sample", ...)
        out = out.drop_vars(["sample", "chain", "draw"]).assign_coords(
            sample=np.arange(out.sizes["sample"]))
        if n_draws is not None:
            if not 0 < n_draws <= out.sizes["sample"]:
                raise ValueError(f"n_draws must be in 1..{out.sizes['sample']}, got {n_draws}.")
            idx = np.sort(np.random.default_rng(random_seed).choice(
                out.sizes["sample"], n_draws, replace=False))
            out = out.isel(sample=idx)
        return out

    def simulate(self, n_datasets: int = 1, *, n_systems: int | None = None,
                 n_items: int | None = None, same_systems: bool = False,
                 random_seed: int | None = None) -> xr.Dataset:
        """Posterior predictive datasets: ``n_datasets`` posterior draws, one simulated
        dataset each (dim ``sample``). ``same_systems=True`` reuses the fitted systems'
        correlations ``r`` (then ``n_systems`` must equal the data's); otherwise new
        systems draw ``r`` from the truncated normal. See
        :func:`simulate_correlation_data`."""
        rng = np.random.default_rng(random_seed)
        draws = self.parameter_draws(n_datasets, random_seed=int(rng.integers(2**31)))
        S = self.n_systems if n_systems is None else int(n_systems)
        if same_systems and S != self.n_systems:
            raise ValueError(f"same_systems=True needs n_systems={self.n_systems}, got {S}.")
        return simulate_correlation_data(
            draws, n_systems=S, n_items=self.n_items if n_items is None else int(n_items),
            random_seed=int(rng.integers(2**31)),
            r=draws["r"].transpose("sample", "metric", "system") if same_systems else None)

    def _state(self) -> dict[str, Any]:
        return {"n_systems": self.n_systems, "n_items": self.n_items}

    def _restore(self, state: dict[str, Any]) -> None:
        self.n_systems = int(state["n_systems"])
        self.n_items = int(state["n_items"])


# ============================================================================ data
def _human_scores(data: xr.Dataset, trait: str | None, human: Any) -> tuple[xr.DataArray, str]:
    if isinstance(human, xr.DataArray):
        need = {"system", "item"}
        if not need <= set(human.dims) or not set(human.dims) <= need | {"metric"}:
            raise ValueError(f"human must have dims (system, item) or (metric, system, item), "
                             f"got {human.dims}.")
        return human, human.name or "given human score"
    if "rating" not in data:
        raise ValueError("data has no 'rating' variable; pass human scores as a DataArray "
                         "(human=...).")
    rating = data["rating"]
    traits = [str(t) for t in rating["trait"].values]
    if trait is None:
        if len(traits) != 1:
            raise ValueError(f"trait is required: data has traits {', '.join(traits)}.")
        trait = traits[0]
    if str(trait) not in traits:
        raise ValueError(f"trait {trait!r} is not in dim 'trait' ({', '.join(traits)}).")
    sel = rating.isel(trait=traits.index(str(trait)))
    if isinstance(human, str) and human == "mean":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return sel.mean("rater", skipna=True), f"mean of {sel.sizes['rater']} raters, {trait}"
    raters = [str(r) for r in rating["rater"].values]
    if not isinstance(human, str) or human not in raters:
        raise ValueError(f"human must be 'mean', a rater ({', '.join(raters)}) or a DataArray, "
                         f"got {human!r}.")
    return sel.isel(rater=raters.index(human)), f"{human}, {trait}"


# ============================================================================ public API
def fit_correlation_model(
    data: xr.Dataset,
    *,
    trait: str | None = None,
    human: str | xr.DataArray = "mean",
    metrics: Sequence[str] | None = None,
    run: str | int | None = None,
    ci_prob: float = 0.94,
    centered: bool = False,
    batch_size: int | None = None,
    draws: int = 1000,
    tune: int = 1000,
    chains: int = 4,
    cores: int | None = None,
    sampler: str = "nutpie",
    fast: bool = False,
    random_seed: int | None = None,
    progressbar: bool | None = None,
    target_accept: float = 0.9,
) -> CorrelationResult:
    r"""Posterior item- and system-level metric-human correlations (paper 001, App. C model).

    Fits, for every metric at once, the hierarchical bivariate model

    .. math::
        (x_{si}, y_{si}) &\sim N_2\big((a_s, b_s),\ \Sigma_s\big),\quad
            \Sigma_s = \begin{pmatrix}\sigma_x^2 & r_s\sigma_x\sigma_y\\
                       r_s\sigma_x\sigma_y & \sigma_y^2\end{pmatrix},\\
        r_s &\sim \mathcal{TN}_{(-1,1)}(\mu_r, \sigma_r),\qquad
        (a_s, b_s) \sim N_2\Big((\mu_x, \mu_y),
            \begin{pmatrix}\tau_x^2 & \rho\tau_x\tau_y\\ \rho\tau_x\tau_y & \tau_y^2
            \end{pmatrix}\Big)

    (x the metric, y the human score, s the system, i the item) and reports the
    item-level correlation :math:`\bar r = \frac1S\sum_s r_s`, the system-level
    correlation :math:`\rho` and the spread :math:`\sigma_r`, next to their classical
    estimates (:func:`classical_correlations`). Priors (standardised scores):
    :math:`\mu \sim N(0,1)`, :math:`\tau, \sigma \sim N^+(0,1)`,
    :math:`(\rho+1)/2, (\mu_r+1)/2 \sim \mathrm{Beta}(2,2)`,
    :math:`\sigma_r \sim N^+(0, 0.25)`.

    Parameters
    ----------
    data : xarray.Dataset
        A bayesmeta dataset with ``score`` (and ``rating`` unless ``human`` is a
        DataArray).
    trait : str, optional
        The trait of the human score (required when the data have several).
    human : "mean", rater label or xarray.DataArray
        ``"mean"``: the mean over raters of the trait's ratings (paper 001); a rater label:
        that rater's ratings; a DataArray with dims ``(system, item)`` or ``(metric,
        system, item)``: given human scores.
    metrics : list of str, optional
        Metrics to fit (default all).
    run : label, int, "mean" or None
        Which metric run (default the first).
    ci_prob : float
        Probability of the highest-density intervals (and of the Fisher-z interval).
    centered : bool
        Centred (default) or non-centred truncated normal for :math:`r_s` (see
        :func:`build_model`).
    batch_size : int, optional
        Fit the metrics in batches of this size (one compiled model, data swapped);
        default: all metrics in one model.
    draws, tune, chains, cores, sampler, fast, random_seed, progressbar, target_accept
        Passed to :func:`bayesmeta.sampling.sample` (``fast=True``: 2 chains x 300 draws,
        a preview; never report fast-mode numbers).

    Returns
    -------
    CorrelationResult
        ``summary()`` indexed by ``(metric, estimand)`` with columns ``measure`` (the
        matching measure of ``bm.correlations``), ``classical``, ``classical_low``,
        ``classical_high``, ``mean``, ``sd``, ``hdi_low``, ``hdi_high``, ``r_hat``,
        ``ess_bulk``, ``ess_tail``.

    Notes
    -----
    Each metric is an independent copy of the model (the human score enters each copy).
    The system means are integrated out in closed form, so the sampled parameters are
    the nine App. C parameters and the S correlations :math:`r_s` per metric. The
    likelihood is invariant to the scale of each score; scores are standardised (pooled
    over systems and items) so that the priors are on a unit scale, and
    :meth:`CorrelationResult.parameter_draws` returns the parameters on the original
    scales. ``item_level`` is the finite-population mean over the data's systems (the
    estimand of the classical item-level Pearson); ``r_mu`` (in :meth:`parameters`) is
    the location of the population of systems. See ``models/correlation.md``.

    References
    ----------
    Gao, Hu, Lin & Wan (2024), *Analyzing and Evaluating Correlation Measures in NLG
    Meta-Evaluation*, App. C (paper 001). Lewandowski, Kurowicka & Joe (2009), LKJ prior.

    Examples
    --------
    >>> import bayesmeta as bm  # doctest: +SKIP
    >>> fit = bm.fit_correlation_model(bm.datasets.summeval(), trait="COH",
    ...                                metrics=["BLEU", "BertScore_f1"], fast=True,
    ...                                random_seed=1)  # doctest: +SKIP
    >>> fit.summary().loc[("BLEU", "system_level"), ["classical", "mean"]]  # doctest: +SKIP

    R equivalent: none packaged; ``brms`` with a custom family, or Stan.
    """
    from bayesmeta.classical._select import pick_run
    from bayesmeta.sampling import (
        cached_model,
        check_convergence,
        describe_run,
        diagnose,
        sample,
        set_attrs,
    )

    if not 0 < ci_prob < 1:
        raise ValueError(f"ci_prob must be in (0, 1), got {ci_prob}.")
    if not isinstance(data, xr.Dataset):
        raise TypeError(f"data must be an xarray.Dataset, got {type(data).__name__}.")
    if "score" not in data:
        raise ValueError("data has no 'score' variable (the metric scores).")
    validate(data.drop_vars([v for v in data.data_vars if v not in ("score", "rating")]),
             warn_missing=False)
    score = pick_run(data, run)
    labels = [str(m) for m in score["metric"].values]
    if metrics is not None:
        if isinstance(metrics, str):
            metrics = [metrics]
        unknown = [m for m in metrics if str(m) not in labels]
        if unknown:
            raise ValueError(f"metrics: unknown metric(s) {', '.join(map(repr, unknown))}; "
                             f"not in dim 'metric'.")
        score = score.isel(metric=[labels.index(str(m)) for m in metrics])
        labels = [str(m) for m in metrics]
    hum, human_label = _human_scores(data, trait, human)
    if "metric" in hum.dims:
        hum = hum.sel(metric=score["metric"].values)
        z = hum.transpose("metric", "system", "item").values.astype(float)
    else:
        z = hum.transpose("system", "item").values.astype(float)
    if hum.sizes["system"] != data.sizes["system"] or hum.sizes["item"] != data.sizes["item"]:
        raise ValueError("human must have the data's systems and items.")
    x = score.transpose("metric", "system", "item").values.astype(float)
    M, S, I = x.shape
    if S < 3:
        raise ValueError(f"dim 'system' has {S} labels; at least 3 are needed for a "
                         f"system-level correlation.")
    stats = sufficient_stats(x, z)
    classical = classical_correlations(x, z, ci_prob=ci_prob)
    if batch_size is None:
        batch_size = M
    batch_size = int(min(max(batch_size, 1), M))

    dhash = data_hash(xr.Dataset({"score": score, "human": hum}))
    key = ("correlation", batch_size, S, bool(centered))
    model = cached_model(key, lambda: build_model(batch_size, S, centered=centered))
    t0 = time.perf_counter()
    parts = []
    if random_seed is None:
        random_seed = int(np.random.SeedSequence().entropy % (2**31 - 1))
    for k, start in enumerate(range(0, M, batch_size)):
        idx = np.arange(start, min(start + batch_size, M))
        pad = np.r_[idx, np.full(batch_size - len(idx), idx[-1])]
        seed = int((random_seed + k) % (2**31 - 1))
        idata_k = sample(model, data=stats.subset(pad).model_data(), draws=draws, tune=tune,
                         chains=chains, cores=cores, sampler=sampler, fast=fast,
                         random_seed=seed, progressbar=progressbar,
                         target_accept=target_accept,
                         attrs={"model": "correlation", "data_hash": dhash})
        parts.append((idata_k, len(idx)))
    elapsed = time.perf_counter() - t0
    idata = _merge(parts, labels, [str(s) for s in data["system"].values])
    post = idata.posterior
    post["item_level"] = post["r"].mean("system")
    keep = ["item_level", "rho", "r_sigma", "r_mu", *[p for p in PARAMETERS if p not in
                                                      ("rho", "r_sigma", "r_mu")], "r"]
    diag = diagnose(post[keep])
    report = check_convergence(idata, keep, diagnostics=diag)
    set_attrs(idata, {"human": human_label, "sampling_seconds": round(elapsed, 2)})

    # ---- table
    var_of = {"item_level": "item_level", "system_level": "rho", "item_level_sd": "r_sigma"}
    frames = []
    for est, var in var_of.items():
        t = bayes_summary(post, [var], ci_prob=ci_prob, diagnostics=diag)
        t = t.drop(columns="variable")
        t.insert(1, "estimand", est)
        t.insert(2, "measure", MEASURE_OF.get(est, ""))
        t.insert(3, "classical", classical[est])
        low = classical["system_low"] if est == "system_level" else np.full(M, np.nan)
        high = classical["system_high"] if est == "system_level" else np.full(M, np.nan)
        t.insert(4, "classical_low", low)
        t.insert(5, "classical_high", high)
        frames.append(t)
    table = pd.concat(frames, ignore_index=True)
    order = {m: j for j, m in enumerate(labels)}
    table["_o"] = table["metric"].map(order)
    table["_e"] = table["estimand"].map({e: j for j, e in enumerate(ESTIMANDS)})
    table = table.sort_values(["_o", "_e"]).drop(columns=["_o", "_e"])
    table = table.set_index(["metric", "estimand"])

    center = xr.DataArray(stats.center, dims=("metric", "side"),
                          coords={"metric": labels, "side": ["metric", "human"]})
    scale = xr.DataArray(stats.scale, dims=("metric", "side"),
                         coords={"metric": labels, "side": ["metric", "human"]})
    within = xr.DataArray(classical["within"], dims=("metric", "system"),
                          coords={"metric": labels, "system": post["system"].values})
    n_batches = -(-M // batch_size)
    info = {
        "data": f"{S} systems x {I} items; {M} metric(s); human score: {human_label}",
        "model": "App. C of paper 001: per-system bivariate normal, r_s ~ TN(r_mu, r_sigma; "
                 "-1, 1), system means bivariate normal with correlation rho",
        "priors": "mu ~ N(0,1); tau, sigma ~ HalfN(1) (standardised scores); "
                  "(rho+1)/2, (r_mu+1)/2 ~ Beta(2,2); r_sigma ~ HalfN(0.25)",
        "sampler": describe_run(idata) + (f"; {n_batches} batches of {batch_size} metrics"
                                          if n_batches > 1 else ""),
        "convergence": str(report),
        "classical": "mean within-system Pearson r; Pearson r of system means "
                     f"(Fisher-z {ci_prob:.0%} interval)",
        "data hash": dhash,
    }
    notes = list(report.messages)
    res = CorrelationResult(table, title="Metric-human correlation (hierarchical bivariate "
                                         "model, paper 001 App. C)",
                            info=info, idata=idata,
                            extra={"center": center, "scale": scale, "within_classical": within},
                            notes=notes, ci_prob=ci_prob)
    res.n_systems, res.n_items = int(S), int(I)
    return res


def _merge(parts: list[tuple[Any, int]], metrics: list[str], systems: list[str]) -> Any:
    """Concatenate batch fits along ``metric`` (padding dropped) and label the coords."""
    import arviz as az

    posts, stats = [], []
    for idata, k in parts:
        p = idata.posterior.isel(metric=slice(0, k))
        posts.append(p.drop_vars(["metric", "system"], errors="ignore"))
        stats.append(idata.sample_stats)
    post = xr.concat(posts, dim="metric") if len(posts) > 1 else posts[0]
    post = post.assign_coords(metric=metrics, system=systems)
    post = post.drop_vars([v for v in ("r_unit",) if v in post])
    post.attrs = dict(parts[0][0].posterior.attrs)
    if len(stats) == 1:
        sstats = stats[0]
    else:
        sstats = stats[0][["diverging"]].copy()
        sstats["diverging"] = sum(s["diverging"] for s in stats)
        for name in ("reached_max_treedepth",):
            if all(name in s for s in stats):
                sstats[name] = sum(s[name].astype(int) for s in stats)
        sstats.attrs = dict(stats[0].attrs)
    return az.InferenceData(posterior=post, sample_stats=sstats)


__all__ = [
    "ESTIMANDS",
    "MEASURE_OF",
    "PARAMETERS",
    "PRIORS",
    "CorrelationResult",
    "CorrelationStats",
    "build_model",
    "classical_correlations",
    "fit_correlation_model",
    "sample_prior",
    "simulate_correlation_data",
    "sufficient_stats",
]
