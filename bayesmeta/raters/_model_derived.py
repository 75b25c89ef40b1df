r"""Derived quantities of the many-facet rater model, computed draw by draw.

The model's own parameters (thresholds :math:`\tau` in rater-noise units, discriminations
:math:`a`, the quality SDs) depend on how the model is identified; the quantities reported
by :func:`bayesmeta.rater_bias` do not: thresholds on the scale of true output quality,
severities, the lavaan-comparable marginal thresholds and loadings, the reliability of
system-level human scores and variance shares (see :func:`derived_quantities` and
``models/rater.md``).
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from bayesmeta.raters._model_build import RaterDesign

__all__ = ["derived_quantities", "pairwise_harsher"]


def derived_quantities(posterior: xr.Dataset, design: RaterDesign) -> xr.Dataset:
    r"""The reported quantities, computed draw by draw from the model's posterior.

    With :math:`\sigma^\theta_t`, :math:`\tau` and :math:`a` as in the module docstring,
    :math:`\bar a_t` the mean discrimination over the :math:`R` raters and :math:`I` items
    per system:

    * ``threshold(rater, trait, cut)`` :math:`= (\tau - \mu)/\sigma^\theta`;
      ``panel_threshold(trait, cut)`` its mean over raters; ``severity(rater, trait)`` a
      rater's mean threshold minus the panel's mean threshold;
    * ``marginal_threshold`` :math:`= a(\tau - \mu)/\sqrt{1 + a^2(\sigma^\theta)^2}`, the
      model-implied :math:`\Phi^{-1}` of the cumulative proportion (lavaan's threshold);
    * ``loading`` :math:`= a\sigma^\theta/\sqrt{1 + a^2(\sigma^\theta)^2}`, the correlation
      of a rater's latent response with true quality (lavaan's standardised loading);
    * ``reliability_system`` :math:`= \sigma_{\rm sys}^2 / (\sigma_{\rm sys}^2 +
      \sigma_{\rm out}^2/I + 1/(\bar a^2 I R))`, the relative G coefficient of the
      system mean of the raters' latent responses over :math:`I` items and :math:`R`
      raters;
    * ``icc_output`` :math:`= \bar a^2(\sigma^\theta)^2 / (\bar a^2(\sigma^\theta)^2 + 1/R)`,
      the consistency of the mean of :math:`R` raters' latent responses on one output;
    * ``share_system``, ``share_item``, ``share_output``: variance shares of quality.
    """
    p = posterior
    sd_item = p["sd_item"] if "sd_item" in p else xr.zeros_like(p["sd_system"])
    var_q = p["sd_system"] ** 2 + sd_item**2 + p["sd_output"] ** 2
    sig = np.sqrt(var_q)
    a = p["discrimination"] if "discrimination" in p else xr.ones_like(p["rater_shift"])
    rel_tau = p["tau"] - p["mu"]
    threshold = (rel_tau / sig).transpose("chain", "draw", "rater", "trait", "cut")
    panel = threshold.mean("rater")
    severity = threshold.mean("cut") - panel.mean("cut")
    marginal = (a * rel_tau / np.sqrt(1 + a**2 * var_q)).transpose(
        "chain", "draw", "rater", "trait", "cut")
    loading = (a * sig / np.sqrt(1 + a**2 * var_q)).transpose("chain", "draw", "rater", "trait")
    I, R = len(design.items), len(design.raters)
    abar2 = a.mean("rater") ** 2
    rel_sys = p["sd_system"] ** 2 / (p["sd_system"] ** 2 + p["sd_output"] ** 2 / I
                                     + 1 / (abar2 * I * R))
    icc = abar2 * var_q / (abar2 * var_q + 1 / R)
    out = xr.Dataset({
        "severity": severity.transpose("chain", "draw", "rater", "trait"),
        "threshold": threshold,
        "panel_threshold": panel.transpose("chain", "draw", "trait", "cut"),
        "marginal_threshold": marginal,
        "loading": loading,
        "reliability_system": rel_sys,
        "icc_output": icc,
        "share_system": p["sd_system"] ** 2 / var_q,
        "share_item": sd_item**2 / var_q,
        "share_output": p["sd_output"] ** 2 / var_q,
        "system_quality": (p["system_effect"] / sig).transpose("chain", "draw", "system",
                                                                "trait"),
    })
    return out


def pairwise_harsher(threshold: xr.DataArray, severity: xr.DataArray) -> xr.DataArray:
    """P(rater's threshold > rater2's) per trait and cut, plus ``cut="mean"`` (severity)."""
    other = threshold.rename(rater="rater2")
    p_cut = (threshold > other).mean(("chain", "draw"))
    sev2 = severity.rename(rater="rater2")
    p_sev = (severity > sev2).mean(("chain", "draw")).expand_dims(cut=["mean"])
    out = xr.concat([p_cut, p_sev], dim="cut").transpose("rater", "rater2", "trait", "cut")
    return out.astype(float)
