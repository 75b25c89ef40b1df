"""``bm.agreement_coefficients``: every chance-corrected coefficient and ICC form per trait,
with analytic intervals, a bootstrap over outputs and a Bayesian-bootstrap posterior.

Kernels: :mod:`bayesmeta.agreement.chance` (Gwet's framework) and
:mod:`bayesmeta.agreement.icc` (McGraw & Wong). Resampling draws are made as in
:mod:`bayesmeta.correlation.resampling` (system and item weights, output (s, i) weighing
``a_s b_i``) and summarised by the one summariser, :func:`bayesmeta.summaries.summarize`.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr
from scipy import stats

from bayesmeta.agreement.chance import (
    COEFFICIENTS,
    WEIGHTS,
    Panel,
    coefficient_draws,
    estimate,
)
from bayesmeta.agreement.icc import ICC_FORMS, icc, icc_values, jackknife_se, mean_squares
from bayesmeta.agreement.latent import LATENT_FORMS, latent_icc_rows
from bayesmeta.correlation.resampling import resampling_weights
from bayesmeta.data.select import describe, ordinal_ratings, require
from bayesmeta.options import ResamplingOptions
from bayesmeta.reliability.classical import _ByEstimand
from bayesmeta.results import data_hash
from bayesmeta.summaries import CI_PROB, COLUMNS, check_ci_prob, summarize
from bayesmeta.vocabulary import resampling_options

#: Every estimand of :func:`agreement_coefficients`.
ESTIMANDS = COEFFICIENTS + tuple(ICC_FORMS)
_TWO_RATERS = ("cohen_kappa", "scott_pi")


class AgreementCoefficientsResult(_ByEstimand):
    """Chance-corrected coefficients and ICC forms per trait (see
    :func:`agreement_coefficients`)."""

    default_estimand = "gwet_ac"


def _choose(coefficients: str | Sequence[str] | None, n_raters: int) -> list[str]:
    if coefficients is None or coefficients == "all":
        return [c for c in ESTIMANDS if n_raters == 2 or c not in _TWO_RATERS]
    chosen = [coefficients] if isinstance(coefficients, str) else list(coefficients)
    bad = [c for c in chosen if c not in ESTIMANDS]
    if bad:
        raise ValueError(f"unknown coefficient(s) {bad}; coefficients are "
                         f"{', '.join(ESTIMANDS)}.")
    if n_raters != 2 and any(c in _TWO_RATERS for c in chosen):
        raise ValueError(f"cohen_kappa and scott_pi are for 2 raters, got {n_raters}: use "
                         "conger_kappa and fleiss_kappa.")
    return chosen


def _draws(y: np.ndarray, panel: Panel, names: list[str], weights: str, u: np.ndarray
           ) -> np.ndarray:
    """(B, len(names)) draws for per-output weights u (B, outputs)."""
    out = np.full((u.shape[0], len(names)), np.nan)
    uk = u[:, panel.kept]
    uk = uk * (uk.shape[1] / uk.sum(1, keepdims=True))
    complete = ~np.isnan(y).any(axis=1)
    iccs = None
    if complete.sum() > 2 and any(c in ICC_FORMS for c in names):
        uc = u[:, complete]
        uc = uc * (uc.shape[1] / uc.sum(1, keepdims=True))
        with np.errstate(divide="ignore", invalid="ignore"):
            iccs = icc_values(mean_squares(y[complete], uc))
    cache: dict = {}                       # sums shared between coefficients
    with np.errstate(divide="ignore", invalid="ignore"):
        for j, c in enumerate(names):
            if c in ICC_FORMS:
                if iccs is not None:
                    out[:, j] = iccs[c]
            else:
                out[:, j] = coefficient_draws(panel, c, weights, uk, cache)
    return out


#: Default resampling unit of the agreement functions (a dict or None ``resampling``).
DEFAULT_UNIT = "items"


def agreement_weights(rng: np.random.Generator, n: int, shape: tuple[int, int], unit: str
                      ) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """(Bayesian-bootstrap, bootstrap) system and item weights, both of ``unit``: the
    Bayesian bootstrap gives the resampled unit flat-Dirichlet weights (times its size) and
    the others weight 1, the bootstrap multinomial counts. Resampling only items keeps the
    systems fixed; weighing both counts the residual variance up to three times (Owen &
    Eckles 2012) and over-covered 98.5-99.8% in ``benchmarks/agreement_coverage.py``."""
    S, I = shape
    da, db = resampling_weights(rng, "bayesian", n, shape)
    a, b = resampling_weights(rng, "bootstrap", n, shape, unit)
    ones_s, ones_i = np.ones((n, S)), np.ones((n, I))
    bayes = (da if unit in ("systems", "both") else ones_s,
             db if unit in ("items", "both") else ones_i)
    return bayes, (ones_s if a is None else a, ones_i if b is None else b)


#: The most product weights (resamples x outputs) held at once: 4e6 floats, 32 MB.
_CHUNK = 4_000_000


def resample_draws(y: np.ndarray, panel: Panel, names: list[str], weights: str,
                   system_weights: np.ndarray, item_weights: np.ndarray) -> np.ndarray:
    """(B, len(names)) draws for system weights (B, S) and item weights (B, I), output
    (s, i) weighing ``a_s b_i``; the (B, S*I) product weights are formed a chunk of
    resamples at a time, so memory stays bounded however many outputs (each resample is
    computed on its own, so chunking changes no number)."""
    a, b = system_weights, item_weights
    B, S, I = a.shape[0], a.shape[1], b.shape[1]
    step = max(1, _CHUNK // (S * I))
    out = np.empty((B, len(names)))
    for start in range(0, B, step):
        rows = slice(start, start + step)
        u = (a[rows, :, None] * b[rows, None, :]).reshape(-1, S * I)
        out[rows] = _draws(y, panel, names, weights, u)
    return out


def agreement_coefficients(
    data: xr.Dataset,
    *,
    coefficients: str | Sequence[str] | None = None,
    weights: str = "identity",
    traits: Sequence[str] | None = None,
    raters: Sequence[str] | None = None,
    population: float | None = None,
    fit: Any = None,
    ci_prob: float = CI_PROB,
    resampling: ResamplingOptions | Mapping[str, Any] | None = None,
    random_seed: int | None = None,
) -> AgreementCoefficientsResult:
    r"""Chance-corrected agreement coefficients and every ICC form, per trait.

    Units are the outputs (system x item), raters the raters. For each trait:

    * **Gwet's framework** (:func:`bayesmeta.agreement.chance.chance_corrected`):
      :math:`\kappa = (p_a - p_e)/(1 - p_e)` with the weighted percent agreement
      :math:`p_a` over units with two or more ratings and the chance agreement of
      ``percent_agreement`` (:math:`p_e = 0`), ``cohen_kappa`` and ``scott_pi`` (2 raters),
      ``fleiss_kappa``, ``conger_kappa``, ``gwet_ac`` (AC1 with identity weights, AC2
      otherwise), ``brennan_prediger`` and Krippendorff's alpha at each level of measurement
      (``krippendorff_nominal``, ``_ordinal``, ``_interval``, ``_ratio``; their weights are
      the level's, whatever ``weights`` says). ``classical_low``/``classical_high``:
      :math:`\kappa \pm t_{n-1}\sqrt{v}` with Gwet's linearised variance
      :math:`v = \frac{1-f}{n(n-1)}\sum_i(\kappa_i^\star - \kappa)^2`, :math:`f = n/N`
      (``population`` = N), upper end capped at 1, as irrCAC.
    * **ICC** (:func:`bayesmeta.agreement.icc.icc`): ``icc_oneway_single``,
      ``icc_oneway_average``, ``icc_twoway_agreement_single``/``_average``,
      ``icc_twoway_consistency_single``/``_average`` on the complete units;
      ``classical_low``/``classical_high``: :math:`\hat\rho \pm t_{n-1}\,se_J` with the
      jackknife standard error over units (:func:`bayesmeta.agreement.icc.jackknife_se`,
      ``se`` in ``details()``), upper end capped at 1; McGraw & Wong's F-based interval
      (pingouin's ``CI95``, ``psych::ICC``'s) is in ``details()`` as ``f_low``/``f_high``;
      ``details()`` names each form in McGraw & Wong's and Shrout & Fleiss' notation
      (``mcgraw_wong``, ``shrout_fleiss``).

    * **Latent ICC** (with ``fit``, a :func:`bayesmeta.rater_bias` result;
      :mod:`bayesmeta.agreement.latent`): ``icc_latent_consistency_single``/``_average``
      and ``icc_latent_agreement_single``/``_average``, the posterior of the ICC of the
      rater model's probit latent responses (one rater's signal-to-noise ratio
      :math:`x = \bar a^2\sigma^2`, severities' variance :math:`v`:
      :math:`x/(1+x)`, :math:`Rx/(1+Rx)`, :math:`1/(1+v+1/x)`, :math:`1/(1+(v+1/x)/R)`),
      beside the classical forms: ``mean``, ``sd``, ``hdi_low``, ``hdi_high``, ``r_hat``,
      ``ess_bulk``, ``ess_tail`` from the MCMC draws, ``classical`` empty.

    Calibration (``benchmarks/agreement_coverage.py``, panels with known population
    coefficients, 400 replicates): Gwet's analytic intervals and both resamplings cover
    91-96% at 94% for independent outputs. The F-based ICC intervals assume normal ratings
    and cover only 81-90% on 5-category ratings, hence not the default; the jackknife-t
    intervals, which do not assume normality, cover 90-94.5%. Weighing systems and items
    (``unit="both"``) was conservative (98.5-99.8%) on a crossed 10 systems x 40 items panel
    whose agreement does not vary between systems, hence the default ``unit="items"``
    (systems fixed: bootstrap 89.5-95%, Bayesian bootstrap 88.8-94%); give
    ``unit="both"`` to generalise to other systems.

    Missing ratings drop out of a unit, not the unit out of the data (ICC: incomplete units
    are left out, counted in ``n_incomplete``); a warning counts them.

    With ``resampling`` (``n_resamples`` > 0, default 1000 when a dict or options object is
    given; ``unit`` default ``"items"`` when a dict): a Bayesian bootstrap (flat Dirichlet
    weights of the resampled ``unit``, the others weighing 1, output (s, i) weighing
    :math:`a_s b_i`, Rubin 1981) gives ``mean``, ``sd``, ``hdi_low``, ``hdi_high``; a
    classical bootstrap of the same ``unit`` (systems, items or both) gives
    ``bootstrap_se``, ``bootstrap_low``, ``bootstrap_high`` (percentile) in ``details()``.
    Draws are weighted sums over units, so resamples are matrix products.

    Parameters
    ----------
    data : xarray.Dataset
        A bayesmeta dataset with ``rating``.
    coefficients : str or list of str, optional
        Estimands (default every one that applies: :data:`ESTIMANDS`, the 2-rater ones only
        for 2 raters, ``krippendorff_ratio`` only without a 0 rating).
    weights : str
        Gwet's weights: ``identity`` (unweighted), ``linear``, ``quadratic``, ``ordinal``,
        ``radical``, ``ratio``, ``circular``, ``bipolar``.
    traits, raters : list of str, optional
        Traits and raters included (default all; at least two raters).
    population : float, optional
        Number of units in the population, for the finite-population correction of Gwet's
        variance (default infinite).
    fit : RaterBiasResult, optional
        A rater model fitted to the same data (:func:`bayesmeta.rater_bias`): adds the
        latent ICC forms' posterior for the traits it has.
    ci_prob : float
        Probability of every interval (0.94).
    resampling : ResamplingOptions or dict, optional
        Bootstrap and Bayesian-bootstrap resamples (none by default).
    random_seed : int, optional
        Seed of the resamples.

    Returns
    -------
    AgreementCoefficientsResult
        ``summary()`` indexed by ``(estimand, trait)``: ``classical``, ``classical_low``,
        ``classical_high`` and, with resampling, ``mean``, ``sd``, ``hdi_low``,
        ``hdi_high``. ``details()``: ``se``, ``n_units`` (units in the estimate),
        ``n_missing`` (missing ratings), ``n_incomplete``, ``weights``, ``mcgraw_wong``,
        ``shrout_fleiss``, ``f_low``/``f_high`` (ICC) and the bootstrap columns.

    References
    ----------
    Gwet (2014), *Handbook of Inter-Rater Reliability*, 4th ed.; McGraw & Wong (1996),
    *Psychological Methods* 1(1); Krippendorff (2011), *Computing Krippendorff's
    alpha-reliability*; Rubin (1981), The Bayesian bootstrap, *Ann. Statist.* 9(1); Efron &
    Tibshirani (1993), *An Introduction to the Bootstrap*, ch. 11 (jackknife); Owen &
    Eckles (2012), Bootstrapping data arrays of arbitrary order, *Ann. Appl. Stat.* 6(3).

    Examples
    --------
    >>> import bayesmeta as bm
    >>> res = bm.agreement_coefficients(bm.datasets.simulated(), traits=["COH"],
    ...                                 coefficients=["gwet_ac", "fleiss_kappa"],
    ...                                 weights="quadratic")
    >>> res.summary().index.get_level_values("estimand").tolist()
    ['gwet_ac', 'fleiss_kappa']

    R equivalent: ``irrCAC::gwet.ac1.raw(y, weights = "quadratic")``,
    ``irrCAC::fleiss.kappa.raw``, ``irrCAC::krippen.alpha.raw``, ``psych::ICC(y)``,
    ``irr::icc(y, model = "twoway", type = "agreement")``.
    """
    ci_prob = check_ci_prob(ci_prob)
    if weights not in WEIGHTS:
        raise ValueError(f"weights must be one of {', '.join(WEIGHTS)}, got {weights!r}.")
    rating = ordinal_ratings(data, traits=traits, raters=raters, analysis="agreement")
    require(rating.sizes["rater"], 2, "rater", "agreement")
    n_raters = rating.sizes["rater"]
    names = _choose(coefficients, n_raters)
    explicit = coefficients is not None and coefficients != "all"
    if not explicit and np.nanmin(rating.values) <= 0:  # ratio distances divide by c + k
        names = [c for c in names if c != "krippendorff_ratio"]
    opts = None if resampling is None else resampling_options(resampling, n_resamples=1000,
                                                               unit=DEFAULT_UNIT)
    n_draws = 0 if opts is None else opts.n_resamples
    seed = int(np.random.SeedSequence().entropy % 2**32) if random_seed is None else random_seed
    rng = np.random.default_rng(seed)
    S, I = rating.sizes["system"], rating.sizes["item"]
    if n_draws:
        w_bayes, w_boot = agreement_weights(rng, n_draws, (S, I), opts.unit)
    N = np.inf if population is None else float(population)
    rows, post, notes = [], [], []
    trait_labels = [str(t) for t in rating["trait"].values]
    for t in rating["trait"].values:
        y = rating.sel(trait=t).transpose("system", "item", "rater").values.reshape(S * I, -1)
        missing = int(np.isnan(y).sum())
        complete = ~np.isnan(y).any(axis=1)
        if missing:
            warnings.warn(f"trait {t}: {missing} of {y.size} ratings missing "
                          f"({100 * missing / y.size:.1f}%); chance-corrected coefficients "
                          f"use every unit with two or more ratings, the ICC forms the "
                          f"{int(complete.sum())} complete units.", UserWarning, stacklevel=2)
        panel = Panel(y)
        forms = icc(y[complete], ci_prob=ci_prob) if complete.sum() > 2 else {}
        jack = jackknife_se(y[complete]) if complete.sum() > 2 else {}
        t_icc = stats.t.ppf(0.5 + ci_prob / 2, max(int(complete.sum()) - 1, 1))
        for c in names:
            row = {"estimand": c, "trait": str(t), "weights": weights, "n_missing": missing,
                   "n_incomplete": int((~complete).sum()) if c in ICC_FORMS else 0,
                   "mcgraw_wong": ICC_FORMS.get(c, ("", ""))[0],
                   "shrout_fleiss": ICC_FORMS.get(c, ("", ""))[1]}
            if c in ICC_FORMS:
                f = forms.get(c, {"value": np.nan, "low": np.nan, "high": np.nan})
                se = jack.get(c, np.nan)
                row.update(classical=f["value"], classical_low=f["value"] - t_icc * se,
                           classical_high=min(1.0, f["value"] + t_icc * se), se=se,
                           f_low=f["low"], f_high=f["high"], n_units=int(complete.sum()))
            else:
                with np.errstate(divide="ignore", invalid="ignore"):
                    est = estimate(panel, c, weights, population=N, ci_prob=ci_prob)
                row.update(classical=est["value"], classical_low=est["low"],
                           classical_high=est["high"], se=est["se"], n_units=est["n"])
            rows.append(row)
        if n_draws:
            post.append(np.stack([resample_draws(y, panel, names, weights, *w_bayes),
                                  resample_draws(y, panel, names, weights, *w_boot)]))
    table = pd.DataFrame(rows).set_index(["estimand", "trait"])
    order = pd.MultiIndex.from_product([names, trait_labels], names=["estimand", "trait"])
    table = table.reindex(order)
    columns = ["classical", "classical_low", "classical_high"]
    details = table.drop(columns=columns)
    ci_kind = None
    if n_draws:
        draws = xr.DataArray(np.stack(post, axis=1), dims=("kind", "trait", "resample",
                                                           "estimand"),
                             coords={"trait": trait_labels, "estimand": names})
        bay = summarize(draws[0], ci_prob=ci_prob, sample_dims=("resample",))
        boot = summarize(draws[1], ci_prob=ci_prob, sample_dims=("resample",),
                         interval="equal_tailed")
        for name, src, fn in (("mean", bay, "mean"), ("sd", bay, "sd"),
                              ("bootstrap_se", boot, "sd")):
            v = src[fn].transpose("estimand", "trait").values.ravel()
            (table if name in ("mean", "sd") else details)[name] = v
        for lo_name, hi_name, src, dest in (("hdi_low", "hdi_high", bay, table),
                                            ("bootstrap_low", "bootstrap_high", boot, details)):
            iv = src["interval"].transpose("estimand", "trait", "ci_bound").values
            dest[lo_name], dest[hi_name] = iv[..., 0].ravel(), iv[..., 1].ravel()
        columns += ["mean", "sd", "hdi_low", "hdi_high"]
        ci_kind = "hdi"
        notes.append(f"mean, sd, hdi: Bayesian bootstrap ({n_draws} draws of {opts.unit}); "
                     f"bootstrap_* in details: {n_draws} resamples of {opts.unit}.")
    summary = table[columns]
    if fit is not None:
        latent = latent_icc_rows(fit, trait_labels, ci_prob)
        names_all = list(summary.columns) + [c for c in latent.columns if c in COLUMNS]
        summary = pd.concat([summary, latent[[c for c in latent.columns if c in COLUMNS]]])
        summary = summary[[c for c in COLUMNS if c in names_all]]
        details = pd.concat([details, latent[["mcgraw_wong", "shrout_fleiss"]]])
        ci_kind = "hdi"
        notes.append(f"icc_latent_*: posterior of the rater model's latent-response ICC "
                     f"({', '.join(LATENT_FORMS)}; MCMC draws, r_hat and ESS in their "
                     f"rows)" + ("; the other rows' mean, sd, hdi are the Bayesian bootstrap."
                                 if n_draws else "."))
    if np.isfinite(N):
        notes.append(f"Gwet's variances use the finite-population correction with N = {N:g}.")
    return AgreementCoefficientsResult(
        summary, title="Agreement coefficients per trait",
        info={"data": describe(data), "raters": n_raters, "weights": weights,
              "n_resamples": n_draws, "random_seed": seed},
        notes=notes, details=details, ci_prob=ci_prob, ci_kind=ci_kind,
        classical_ci_kind="analytic: t with Gwet's (2014) linearised variance; ICC: t with "
                          "the jackknife variance (McGraw & Wong's F interval in details, "
                          "f_low/f_high)",
        random_seed=seed, data_hash=data_hash(data))


__all__ = ["ESTIMANDS", "AgreementCoefficientsResult", "agreement_coefficients",
           "resample_draws"]
