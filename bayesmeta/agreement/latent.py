r"""The ICC on the latent scale, from the posterior of the many-facet rater model
(:func:`bayesmeta.rater_bias`), in the four McGraw & Wong forms (issue 24, item 3).

The rater model's latent response of rater :math:`r` to output :math:`n` is, in units of
the SD of true output quality, :math:`\theta_n - s_r + \varepsilon_{nr}/(\bar a\sigma)`
(:math:`s_r` the rater's severity, :math:`\bar a` the mean discrimination, :math:`\sigma`
the SD of quality), so with the signal-to-noise ratio of one rater
:math:`x = \bar a^2\sigma^2` and the variance of the severities over the :math:`R` raters
:math:`v = \sum_r (s_r - \bar s)^2/(R-1)`:

* ``icc_latent_consistency_single`` :math:`= x/(1 + x)` and
  ``icc_latent_consistency_average`` :math:`= Rx/(1 + Rx)` (the model's ``icc_output``);
* ``icc_latent_agreement_single`` :math:`= 1/(1 + v + 1/x)` and
  ``icc_latent_agreement_average`` :math:`= 1/(1 + (v + 1/x)/R)`: severity differences
  count as disagreement, as the rater variance does in McGraw & Wong's ICC(A,1)/ICC(A,k).

Each is computed draw by draw, so its posterior carries the model's uncertainty; unlike the
classical ICCs of the integer ratings, these are on the scale of the probit latent
responses (no attenuation by the categories).
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import xarray as xr

from bayesmeta.summaries import summarize

#: Latent form -> (McGraw-Wong name, Shrout-Fleiss name) of its classical counterpart.
LATENT_FORMS = {
    "icc_latent_consistency_single": ("ICC(C,1)", "ICC3"),
    "icc_latent_consistency_average": ("ICC(C,k)", "ICC3k"),
    "icc_latent_agreement_single": ("ICC(A,1)", "ICC2"),
    "icc_latent_agreement_average": ("ICC(A,k)", "ICC2k"),
}


def latent_icc_draws(posterior: xr.Dataset) -> xr.DataArray:
    """Draws ``(chain, draw, trait, estimand)`` of :data:`LATENT_FORMS` from a rater
    model posterior holding ``icc_output(trait)`` and ``severity(rater, trait)``."""
    avg = posterior["icc_output"]
    R = posterior.sizes["rater"]
    x = avg / (R * (1 - avg))
    v = posterior["severity"].var("rater", ddof=1)
    forms = {
        "icc_latent_consistency_single": x / (1 + x),
        "icc_latent_consistency_average": avg,
        "icc_latent_agreement_single": 1 / (1 + v + 1 / x),
        "icc_latent_agreement_average": 1 / (1 + (v + 1 / x) / R),
    }
    out = xr.concat([forms[f].transpose("chain", "draw", "trait") for f in LATENT_FORMS],
                    dim=pd.Index(list(LATENT_FORMS), name="estimand"))
    return out.transpose("chain", "draw", "trait", "estimand")


def latent_icc_rows(fit: Any, traits: list[str], ci_prob: float) -> pd.DataFrame:
    """Summary rows ``(estimand, trait)`` of the latent ICCs of ``fit`` (a
    :func:`bayesmeta.rater_bias` result) for the ``traits`` it has, with ``mean``, ``sd``,
    ``hdi_low``, ``hdi_high``, ``r_hat``, ``ess_bulk``, ``ess_tail`` and the detail
    columns ``mcgraw_wong``, ``shrout_fleiss``."""
    posterior = getattr(fit, "posterior", None)
    if posterior is None or "icc_output" not in posterior or "severity" not in posterior:
        raise TypeError(f"fit must be a rater model result (bm.rater_bias(data)), got "
                        f"{type(fit).__name__}.")
    have = [t for t in traits if t in set(map(str, posterior["trait"].values))]
    if not have:
        raise ValueError(f"fit has none of the traits {traits}; it has "
                         f"{[str(t) for t in posterior['trait'].values]}.")
    draws = latent_icc_draws(posterior).sel(trait=have)
    s = summarize(draws, ci_prob=ci_prob, sample_dims=("chain", "draw"))
    rows = []
    for form, (mw, sf) in LATENT_FORMS.items():
        for t in have:
            cell = s.sel(estimand=form, trait=t)
            rows.append({"estimand": form, "trait": t,
                         "mean": float(cell["mean"]), "sd": float(cell["sd"]),
                         "hdi_low": float(cell["interval"].sel(ci_bound="lower")),
                         "hdi_high": float(cell["interval"].sel(ci_bound="upper")),
                         "r_hat": float(cell["r_hat"]), "ess_bulk": float(cell["ess_bulk"]),
                         "ess_tail": float(cell["ess_tail"]),
                         "mcgraw_wong": f"{mw} latent", "shrout_fleiss": f"{sf} latent"})
    return pd.DataFrame(rows).set_index(["estimand", "trait"])


__all__ = ["LATENT_FORMS", "latent_icc_draws", "latent_icc_rows"]
