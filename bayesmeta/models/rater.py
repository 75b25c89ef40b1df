r"""Many-facet ordinal rater model: rater leniency, threshold spacing and discrimination.

The many-facet view of ratings (Linacre, 1989; Eckes, 2011), with a probit link and rater-
and trait-specific thresholds as in brms ``thres(gr = rater)``. For trait :math:`t`, output
(system :math:`s`, item :math:`i`) and rater :math:`r`, with :math:`K` categories:

.. math::

    \theta_{tsi} &\sim \mathcal N(\mu_t + u_{ts} + v_{ti},\ \sigma^{\rm out}_t),
    \quad u_{t\cdot} \sim \mathrm{ZSN}(\sigma^{\rm sys}_t),
    \quad v_{t\cdot} \sim \mathrm{ZSN}(\sigma^{\rm item}_t) \\
    P(y_{tsir} \le k \mid \theta) &= \Phi\big(a_{rt}(\tau_{trk} - \theta_{tsi})\big),
    \quad k = 1, \dots, K-1 \\
    \tau_{tr\cdot} &= \delta_{tr} + c_{tr\cdot} - \bar c_{tr},
    \quad c_{tr1} = 0,\ c_{tr,k+1} = c_{trk} + e^{g_{trk}} \\
    \delta_{t\cdot} &\sim \mathrm{ZSN}(\sigma^{\delta}_t), \quad
    g_{trk} \sim \mathcal N(\bar g_{tk}, \sigma^{g}_t), \quad
    \log a_{t\cdot} \sim \mathrm{ZSN}(\sigma^{a}_t)

(ZSN: zero-sum normal over its last axis.) The latent scale is identified by the raters:
the thresholds of trait :math:`t` average to zero over raters and cuts and the
discriminations have geometric mean one (so one unit is the latent-response noise of a
typical rater); :math:`\mu_t` and the :math:`\sigma`'s of the latent quality are free.
Missing ratings are not in the (long-form) likelihood.

Reported quantities do not depend on that choice of units: thresholds are put on the scale
of true output quality, :math:`\tau^{*}_{rtk} = (\tau_{trk} - \mu_t)/\sigma^\theta_t` with
:math:`(\sigma^\theta_t)^2 = (\sigma^{\rm sys}_t)^2 + (\sigma^{\rm item}_t)^2 +
(\sigma^{\rm out}_t)^2` (a rater gives more than category :math:`k` with probability 1/2 to
an output :math:`\tau^*` SDs of quality above the mean output). See ``models/rater.md`` for
the priors, the derived quantities and the validation.

PyMC is imported inside the functions that need it.

References
----------
Linacre, J. M. (1989). *Many-facet Rasch measurement*. MESA Press.
Eckes, T. (2011). *Introduction to many-facet Rasch measurement*. Peter Lang.
Bürkner, P.-C., & Vuorre, M. (2019). Ordinal regression models in psychology: a tutorial.
*AMPPS* 2(1) (brms ``cumulative("probit")`` with ``thres(gr = rater)``).
Brennan, R. L. (2001). *Generalizability theory*. Springer (the relative G coefficient).
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import xarray as xr
from scipy import special

from bayesmeta.classical.reliability import cronbach_alpha
from bayesmeta.data.schema import validate
from bayesmeta.results import Result, data_hash

#: Prior scales (see the model card): latent quality SDs, threshold location,
#: rater severity SD, log-gap SD, log-discrimination SD.
PRIORS: dict[str, float] = {
    "mu_sd": 3.0,
    "sd_quality": 3.0,
    "sd_severity": 1.0,
    "panel_log_gap_sd": 1.0,
    "sd_log_gap": 0.5,
    "sd_log_discrimination": 0.5,
}

#: Posterior variables reported in the summary, in table order.
REPORTED = ("severity", "threshold", "panel_threshold", "marginal_threshold", "loading",
            "reliability_system", "icc_output", "share_system", "share_item", "share_output")

_LEVELS = ("quantity", "rater", "trait", "cut")


def cut_labels(n_categories: int, scale_min: int = 1) -> list[str]:
    """Cut-point labels ``"1->2"``, ..., ``"4->5"`` (style.md rule 5)."""
    return [f"{k}->{k + 1}" for k in range(scale_min, scale_min + n_categories - 1)]


# ----------------------------------------------------------------------------- design
@dataclass(frozen=True)
class RaterDesign:
    """Ratings of one dataset in the long form the model needs (missing ones dropped).

    Attributes
    ----------
    rating : numpy.ndarray
        (trait, system, item, rater) ratings, NaN for missing, on ``scale_min..``.
    systems, items, raters, traits : list of str
        Labels.
    n_categories, scale_min : int
        Number of categories on the declared scale and its lowest value.
    trait_index, system_index, item_index, rater_index, category : numpy.ndarray
        One entry per observed rating; ``category`` is 0-based.
    """

    rating: np.ndarray
    systems: list[str]
    items: list[str]
    raters: list[str]
    traits: list[str]
    n_categories: int
    scale_min: int
    trait_index: np.ndarray
    system_index: np.ndarray
    item_index: np.ndarray
    rater_index: np.ndarray
    category: np.ndarray

    @property
    def cuts(self) -> list[str]:
        return cut_labels(self.n_categories, self.scale_min)

    @property
    def n_obs(self) -> int:
        return int(self.category.size)

    @property
    def output_index(self) -> np.ndarray:
        """Flat index of (trait, system, item) into the latent quality."""
        S, I = len(self.systems), len(self.items)
        return (self.trait_index * S + self.system_index) * I + self.item_index

    @property
    def cell_index(self) -> np.ndarray:
        """Flat index of (trait, rater) of every observed rating."""
        return self.trait_index * len(self.raters) + self.rater_index

    def subset(self, trait: str) -> RaterDesign:
        """The design of one trait."""
        return make_design_from_array(self.rating[[self.traits.index(trait)]], self.systems,
                                      self.items, self.raters, [trait], self.n_categories,
                                      self.scale_min)


def make_design_from_array(rating: np.ndarray, systems: list[str], items: list[str],
                           raters: list[str], traits: list[str], n_categories: int,
                           scale_min: int) -> RaterDesign:
    """Build a :class:`RaterDesign` from a (trait, system, item, rater) array."""
    ok = ~np.isnan(rating)
    t, s, i, r = (a[ok].astype(np.int64) for a in np.indices(rating.shape))
    cat = (rating[ok] - scale_min).astype(np.int64)
    return RaterDesign(rating, list(systems), list(items), list(raters), list(traits),
                       int(n_categories), int(scale_min), t, s, i, r, cat)


def rater_design(
    data: xr.Dataset,
    *,
    traits: Sequence[str] | None = None,
    raters: Sequence[str] | None = None,
) -> RaterDesign:
    """Validate ``data`` and put its ratings in the long form of the rater model.

    Raises
    ------
    ValueError
        If ``data`` has no ratings, an unknown trait or rater is asked for, fewer than two
        raters or fewer than three categories are left.
    """
    validate(data, warn_missing=False)
    if "rating" not in data:
        raise ValueError("rater_bias needs ratings: data has no 'rating' variable.")
    rating = data["rating"]
    for dim, chosen in (("trait", traits), ("rater", raters)):
        if chosen is None:
            continue
        chosen = [chosen] if isinstance(chosen, str) else list(chosen)
        known = [str(v) for v in rating[dim].values]
        unknown = [c for c in chosen if c not in known]
        if unknown:
            raise ValueError(f"unknown {dim}(s) {', '.join(map(repr, unknown))}; "
                             f"known: {', '.join(map(repr, known))}.")
        rating = rating.sel({dim: chosen})
    if rating.sizes["rater"] < 2:
        raise ValueError(f"rater_bias needs at least 2 raters in dim 'rater', got "
                         f"{rating.sizes['rater']}.")
    lo, hi = int(rating.attrs["scale_min"]), int(rating.attrs["scale_max"])
    K = hi - lo + 1
    if K < 3:
        raise ValueError(f"rater_bias needs a rating scale with at least 3 categories, got "
                         f"scale_min={lo}, scale_max={hi}.")
    for t in rating["trait"].values:
        if bool(rating.sel(trait=t).isnull().all()):
            raise ValueError(f"trait {str(t)!r} has no ratings.")
    arr = rating.transpose("trait", "system", "item", "rater").values.astype(float)
    return make_design_from_array(
        arr, [str(v) for v in rating["system"].values], [str(v) for v in rating["item"].values],
        [str(v) for v in rating["rater"].values], [str(v) for v in rating["trait"].values],
        K, lo,
    )


# ----------------------------------------------------------------------------- model
def build_rater_model(design: RaterDesign, *, discrimination: bool = True,
                      item_effect: bool = True) -> Any:
    r"""The PyMC model of the module docstring for one :class:`RaterDesign`.

    The observed ratings are ``pm.Data`` containers (``output_index``, ``cell_index``,
    ``category``), so the model is built and compiled once per shape and refitted to new
    data of the same shape (another trait, another simulated dataset).

    Parameters
    ----------
    design : RaterDesign
        From :func:`rater_design`.
    discrimination : bool
        Rater- and trait-specific discriminations :math:`a_{rt}` (geometric mean 1 per
        trait); ``False`` fixes them at 1 (the many-facet Rasch model's equal slopes).
    item_effect : bool
        Include the item (input) main effect :math:`v_{ti}` in the latent quality.

    Returns
    -------
    pymc.Model
        Coords ``trait``, ``system``, ``item``, ``rater``, ``cut``, ``gap``; deterministic
        ``tau(trait, rater, cut)`` and ``discrimination(trait, rater)``.

    Examples
    --------
    >>> import bayesmeta as bm
    >>> from bayesmeta.models.rater import rater_design, build_rater_model
    >>> d = rater_design(bm.datasets.simulated(n_systems=4, n_items=5), traits=["COH"])
    >>> m = build_rater_model(d)  # doctest: +SKIP
    >>> sorted(m.coords)  # doctest: +SKIP
    ['cut', 'gap', 'item', 'rater', 'system', 'trait']
    """
    import pymc as pm
    import pytensor.tensor as pt

    from bayesmeta.models._ordinal import padded_cutpoints

    T, S, I, R = (len(design.traits), len(design.systems), len(design.items),
                  len(design.raters))
    K = design.n_categories
    coords = {"trait": design.traits, "system": design.systems, "item": design.items,
              "rater": design.raters, "cut": design.cuts,
              "gap": [f"{a}|{b}" for a, b in zip(design.cuts[:-1], design.cuts[1:],
                                                 strict=True)]}
    P = PRIORS
    with pm.Model(coords=coords) as model:
        out_idx = pm.Data("output_index", design.output_index)
        cell_idx = pm.Data("cell_index", design.cell_index)
        cat = pm.Data("category", design.category)

        # latent quality: system + item + output deviation (centred: the ratings inform it)
        mu = pm.Normal("mu", 0.0, P["mu_sd"], dims="trait")
        sd_system = pm.HalfNormal("sd_system", P["sd_quality"], dims="trait")
        system_effect = pm.ZeroSumNormal("system_effect", sigma=sd_system[:, None],
                                         dims=("trait", "system"))
        loc = mu[:, None, None] + system_effect[:, :, None]
        if item_effect:
            sd_item = pm.HalfNormal("sd_item", P["sd_quality"], dims="trait")
            item = pm.ZeroSumNormal("item_effect", sigma=sd_item[:, None],
                                    dims=("trait", "item"))
            loc = loc + item[:, None, :]
        else:
            loc = pt.broadcast_to(loc, (T, S, I))
        sd_output = pm.HalfNormal("sd_output", P["sd_quality"], dims="trait")
        quality = pm.Normal("quality", loc, sd_output[:, None, None],
                            dims=("trait", "system", "item"))

        # thresholds: severity shift + partially pooled log-gaps (ordered by construction)
        sd_sev = pm.HalfNormal("sd_severity", P["sd_severity"], dims="trait")
        shift = pm.ZeroSumNormal("rater_shift", sigma=sd_sev[:, None], dims=("trait", "rater"))
        panel_log_gap = pm.Normal("panel_log_gap", 0.0, P["panel_log_gap_sd"],
                                  dims=("trait", "gap"))
        sd_gap = pm.HalfNormal("sd_log_gap", P["sd_log_gap"], dims="trait")
        log_gap = pm.Normal("log_gap", panel_log_gap[:, None, :], sd_gap[:, None, None],
                            dims=("trait", "rater", "gap"))
        steps = pt.concatenate([pt.zeros((T, R, 1)), pt.cumsum(pt.exp(log_gap), axis=-1)],
                               axis=-1)
        steps = steps - steps.mean(axis=-1, keepdims=True)
        tau = pm.Deterministic("tau", shift[:, :, None] + steps, dims=("trait", "rater", "cut"))

        if discrimination:
            sd_disc = pm.HalfNormal("sd_log_discrimination", P["sd_log_discrimination"],
                                    dims="trait")
            log_disc = pm.ZeroSumNormal("log_discrimination", sigma=sd_disc[:, None],
                                        dims=("trait", "rater"))
            disc = pm.Deterministic("discrimination", pt.exp(log_disc), dims=("trait", "rater"))
        else:
            disc = pt.ones((T, R))

        # likelihood, long form: one term per observed rating
        from bayesmeta.models._ordinal import log_interval_prob

        cuts = padded_cutpoints(tau).reshape((-1,))
        theta = quality.reshape((-1,))[out_idx]
        a = disc.reshape((-1,))[cell_idx]
        base = cell_idx * (K + 1) + cat
        lower = a * (cuts[base] - theta)
        upper = a * (cuts[base + 1] - theta)
        pm.Potential("loglik", log_interval_prob(lower, upper).sum())
    return model


# ----------------------------------------------------------------------------- derived
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


def classical_counterparts(design: RaterDesign) -> dict[str, xr.DataArray]:
    r"""Classical twins of the reported quantities, from the ratings alone (NumPy).

    * ``marginal_threshold``: :math:`\Phi^{-1}` of the cumulative proportion of ratings
      :math:`\le k` per rater and trait (lavaan's thresholds; NaN where a proportion is 0
      or 1);
    * ``reliability_system``: coefficient alpha of system means of the raters' mean rating
      over items (:func:`bayesmeta.classical.reliability.cronbach_alpha`, systems as
      examinees, items as test items);
    * ``icc_output``: coefficient alpha across raters with outputs as examinees, i.e.
      ICC(3,k), the consistency of the mean of k raters (Shrout & Fleiss, 1979).
    """
    y = design.rating  # (T, S, I, R)
    K = design.n_categories
    cats = design.scale_min + np.arange(K - 1)
    n = (~np.isnan(y)).sum(axis=(1, 2))  # (T, R)
    cum = np.stack([(y <= c).sum(axis=(1, 2)) for c in cats], axis=-1) / n[..., None]
    with np.errstate(divide="ignore", invalid="ignore"):
        marg = special.ndtri(cum)
    marg = np.where(np.isfinite(marg), marg, np.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all raters missing on an output
        rater_mean = np.nanmean(y, axis=-1)  # (T, S, I)
    rel = cronbach_alpha(rater_mean)
    flat = y.reshape(y.shape[0], -1, y.shape[-1])  # (T, S*I, R)
    icc = cronbach_alpha(flat)
    return {
        "marginal_threshold": xr.DataArray(
            np.transpose(marg, (1, 0, 2)), dims=("rater", "trait", "cut"),
            coords={"rater": design.raters, "trait": design.traits, "cut": design.cuts}),
        "reliability_system": xr.DataArray(rel, dims="trait", coords={"trait": design.traits}),
        "icc_output": xr.DataArray(icc, dims="trait", coords={"trait": design.traits}),
    }


def pairwise_harsher(threshold: xr.DataArray, severity: xr.DataArray) -> xr.DataArray:
    """P(rater's threshold > rater2's) per trait and cut, plus ``cut="mean"`` (severity)."""
    other = threshold.rename(rater="rater2")
    p_cut = (threshold > other).mean(("chain", "draw"))
    sev2 = severity.rename(rater="rater2")
    p_sev = (severity > sev2).mean(("chain", "draw")).expand_dims(cut=["mean"])
    out = xr.concat([p_cut, p_sev], dim="cut").transpose("rater", "rater2", "trait", "cut")
    return out.astype(float)


# ----------------------------------------------------------------------------- result
class RaterBiasResult(Result):
    """Rater leniency per trait and cut, with reliability (see :func:`rater_bias`)."""

    kind = "rater_bias"

    def _prob(self, rater: str, than: str | Sequence[str] | None, trait: str,
              cut: str | None, harsher: bool) -> float:
        if self.posterior is None:
            raise ValueError("this result has no posterior draws.")
        post = self.posterior
        var = "severity" if cut is None else "threshold"
        da = post[var].sel(trait=trait)
        if cut is not None:
            da = da.sel(cut=cut)
        x = da.sel(rater=rater)
        if than is None:
            others = [da.mean("rater") if var == "threshold" else xr.zeros_like(x)]
        else:
            than = [than] if isinstance(than, str) else list(than)
            if rater in than:
                raise ValueError(f"than must not contain the rater itself ({rater!r}).")
            others = [da.sel(rater=o) for o in than]
        ok = xr.ones_like(x, dtype=bool)
        for o in others:
            ok = ok & ((x > o) if harsher else (x < o))
        return float(ok.mean())

    def p_harsher(self, rater: str, than: str | Sequence[str] | None = None, *, trait: str,
                  cut: str | None = None) -> float:
        """Posterior probability that ``rater`` is harsher than every rater in ``than``.

        Parameters
        ----------
        rater : str
            The rater.
        than : str or list of str, optional
            Raters compared with (jointly: harsher than all of them). Default: the panel
            (the mean over raters of the threshold, or a severity of 0).
        trait : str
            The trait.
        cut : str, optional
            A cut label such as ``"4->5"`` (a higher threshold = harsher there); default the
            overall severity (mean threshold).
        """
        return self._prob(rater, than, trait, cut, harsher=True)

    def p_lenient(self, rater: str, than: str | Sequence[str] | None = None, *, trait: str,
                  cut: str | None = None) -> float:
        """Posterior probability that ``rater`` is more lenient than every rater in
        ``than`` (a lower threshold); arguments as in :meth:`p_harsher`."""
        return self._prob(rater, than, trait, cut, harsher=False)

    _TITLES: ClassVar[dict[str, str]] = {
        "severity": "Severity: rater's mean threshold minus the panel's (SD of quality; "
                    "> 0 harsher)",
        "threshold": "Thresholds on the quality scale (SD of output quality from the mean)",
        "panel_threshold": "Panel thresholds (mean over raters)",
        "marginal_threshold": "Marginal thresholds (probit of cumulative proportions; "
                              "classical = lavaan's)",
        "loading": "Loadings (correlation of a rater's latent response with quality)",
        "reliability_system": "Reliability of system-level human scores (classical = alpha "
                              "of rater-mean ratings)",
        "icc_output": "Inter-rater reliability of one output, mean of the raters "
                      "(classical = ICC(3,k))",
        "share_system": "Variance share of latent quality: system",
        "share_item": "Variance share of latent quality: item",
        "share_output": "Variance share of latent quality: output",
    }

    def _body(self) -> str:
        table = self._table
        parts = []
        for q in dict.fromkeys(table.index.get_level_values("quantity")):
            sub = table.xs(q, level="quantity")
            empty = [lv for lv in sub.index.names
                     if (sub.index.get_level_values(lv) == "").all()]
            if empty and len(empty) < sub.index.nlevels:
                sub = sub.droplevel(empty)
            sub = sub.dropna(axis=1, how="all")
            parts.append(f"{self._TITLES.get(q, q)}:\n{self._format_table(sub)}")
        return "\n\n".join(parts)

    def plot(self, ax: Any = None, column: str | None = None) -> Any:
        """Forest plot of the thresholds by rater (posterior mean and HDI per trait and cut,
        with the panel threshold as a grey tick). Returns the matplotlib Figure."""
        return plot_rater_thresholds(self, ax=ax).figure


def plot_rater_thresholds(result: RaterBiasResult, ax: Any = None) -> Any:
    """Forest plot of a :class:`RaterBiasResult`'s thresholds by rater; returns the Axes.

    One row per trait and cut, one colour per rater: the posterior mean as a dot, the HDI
    as a line; the panel threshold (mean over raters) as a grey vertical tick. Nothing is
    computed here: the values come from ``result.summary()``.
    """
    from bayesmeta.plots import _axes

    table = result.summary()
    q = table.index.get_level_values("quantity")
    thr = table[q == "threshold"].droplevel("quantity")
    panel = table[q == "panel_threshold"].droplevel(["quantity", "rater"])
    raters = list(dict.fromkeys(thr.index.get_level_values("rater")))
    rows = list(dict.fromkeys((t, c) for _, t, c in thr.index))
    ax = _axes(ax, height=max(3.0, 0.35 * len(rows) + 1))
    n = len(raters)
    offsets = ((n - 1) / 2 - np.arange(n)) * (0.6 / max(n, 1))  # first rater on top
    ypos = {row: len(rows) - 1 - k for k, row in enumerate(rows)}
    for j, rater in enumerate(raters):
        sub = thr.xs(rater, level="rater")
        y = np.array([ypos[(t, c)] for t, c in sub.index]) + offsets[j]
        ax.hlines(y, sub["hdi_low"], sub["hdi_high"], color=f"C{j}", lw=1.6)
        ax.plot(sub["mean"], y, "o", color=f"C{j}", ms=4, label=rater)
    for (t, c), row in panel.iterrows():
        ax.vlines(row["mean"], ypos[(t, c)] - 0.4, ypos[(t, c)] + 0.4, color="0.5", lw=1)
    ax.set_yticks([ypos[r] for r in rows])
    ax.set_yticklabels([f"{t} {c}" for t, c in rows], fontsize=8)
    ax.set_xlabel("threshold (SD of output quality; grey: panel)")
    ax.set_title(f"{result.title}: thresholds by rater ({result.ci_prob:.0%} HDI)", fontsize=10)
    ax.legend(fontsize=8, loc="best")
    ax.figure.tight_layout()
    return ax


# ----------------------------------------------------------------------------- fitting
def _sample(model: Any, **kwargs: Any) -> Any:
    """The one place this module samples (bayesmeta.sampling: nutpie by default)."""
    from bayesmeta.sampling import sample

    return sample(model, **kwargs)


def _fit(design: RaterDesign, *, discrimination: bool, item_effect: bool, by_trait: bool,
         sample_kwargs: dict[str, Any], seed: int) -> Any:
    import arviz as az

    from bayesmeta.sampling import cached_model

    parts = [design.subset(t) for t in design.traits] if by_trait else [design]
    posts, stats, seconds = [], [], []
    for k, d in enumerate(parts):
        t0 = time.perf_counter()
        key = ("rater", len(d.traits), len(d.systems), len(d.items), len(d.raters),
               d.n_categories, d.n_obs, discrimination, item_effect,
               tuple(d.systems), tuple(d.items), tuple(d.raters))
        model = cached_model(key, lambda d=d: build_rater_model(
            d, discrimination=discrimination, item_effect=item_effect))
        data = {"output_index": d.output_index, "cell_index": d.cell_index,
                "category": d.category}
        idata = _sample(model, data=data, random_seed=seed + k, **sample_kwargs)
        seconds.append(time.perf_counter() - t0)
        post = idata.posterior.drop_vars(["quality"], errors="ignore")
        post = post.assign_coords(trait=d.traits)
        posts.append(post)
        st = idata.sample_stats[[v for v in ("diverging", "reached_max_treedepth")
                                 if v in idata.sample_stats]]
        stats.append(st.expand_dims(trait=d.traits) if by_trait else st)
    attrs = dict(posts[0].attrs)
    if by_trait:
        posterior = xr.concat(posts, dim="trait", data_vars="all", coords="minimal",
                              compat="override", combine_attrs="override")
        sample_stats = xr.concat(stats, dim="trait", data_vars="all",
                                 combine_attrs="override")
        attrs["random_seed"] = seed
        attrs["seeds_by_trait"] = ", ".join(f"{t}: {seed + k}" for k, t in
                                            enumerate(design.traits))
    else:
        posterior, sample_stats = posts[0], stats[0]
    attrs["seconds"] = ", ".join(f"{t}: {x:.0f}" for t, x in zip(
        design.traits if by_trait else ["all"], seconds, strict=True))
    posterior.attrs, sample_stats.attrs = attrs, attrs
    return az.InferenceData(posterior=posterior, sample_stats=sample_stats)


def _rows(name: str, da: xr.DataArray) -> pd.MultiIndex:
    dims = [d for d in da.dims if d not in ("chain", "draw")]
    labels = [da[d].values.astype(str) for d in dims]
    grid = np.meshgrid(*labels, indexing="ij") if labels else []
    cols = {d: g.ravel() for d, g in zip(dims, grid, strict=True)}
    n = int(np.prod([len(x) for x in labels])) if labels else 1
    arrays = [np.repeat(name, n)] + [cols.get(lv, np.repeat("", n)) for lv in _LEVELS[1:]]
    return pd.MultiIndex.from_arrays(arrays, names=_LEVELS)


def _summary_table(derived: xr.Dataset, diag: xr.Dataset, hdi: xr.Dataset,
                   classical: dict[str, xr.DataArray], p_harsher: dict[str, xr.DataArray],
                   names: Sequence[str]) -> pd.DataFrame:
    frames = []
    for name in names:
        da = derived[name]
        dims = [d for d in da.dims if d not in ("chain", "draw")]
        cols: dict[str, np.ndarray] = {}
        cl = classical.get(name)
        cols["classical"] = (cl.transpose(*dims).values.ravel() if cl is not None
                             else np.full(int(np.prod([da.sizes[d] for d in dims])), np.nan))
        cols["mean"] = da.mean(("chain", "draw")).values.ravel()
        cols["sd"] = da.std(("chain", "draw"), ddof=1).values.ravel()
        h = hdi[name].transpose(*dims, "hdi")
        cols["hdi_low"] = h.sel(hdi="lower").values.ravel()
        cols["hdi_high"] = h.sel(hdi="higher").values.ravel()
        for s in ("r_hat", "ess_bulk", "ess_tail"):
            cols[s] = diag[f"{name}__{s}"].transpose(*dims).values.ravel()
        ph = p_harsher.get(name)
        cols["p_harsher"] = (ph.transpose(*dims).values.ravel() if ph is not None
                             else np.full(cols["mean"].size, np.nan))
        frames.append(pd.DataFrame(cols, index=_rows(name, da)))
    return pd.concat(frames)


def rater_bias(
    data: xr.Dataset,
    *,
    traits: Sequence[str] | None = None,
    raters: Sequence[str] | None = None,
    discrimination: bool = True,
    item_effect: bool = True,
    by_trait: bool = True,
    ci_prob: float = 0.94,
    draws: int = 1000,
    tune: int = 1000,
    chains: int = 4,
    fast: bool = False,
    sampler: str = "nutpie",
    target_accept: float = 0.8,
    random_seed: int | None = None,
    mass_matrix: str = "diag",
) -> RaterBiasResult:
    r"""Rater leniency and reliability from the many-facet ordinal rater model.

    Fits the probit many-facet model of :mod:`bayesmeta.models.rater` (latent quality per
    output = system + item + output deviation; per rater and trait a severity shift,
    partially pooled threshold spacing and a discrimination) and reports, per rater and
    trait, the overall severity and each category threshold with HDIs and the posterior
    probability that the rater is harsher than the panel, plus the reliability of
    system-level human scores and of the raters' mean on one output.

    Parameters
    ----------
    data : xarray.Dataset
        A bayesmeta dataset with ``rating(system, item, rater, trait)``; missing ratings
        (NaN) drop out of the likelihood.
    traits, raters : list of str, optional
        Subsets (default all).
    discrimination : bool
        Rater discriminations (geometric mean 1 per trait); ``False`` gives the equal-slope
        many-facet Rasch form.
    item_effect : bool
        Include an item main effect in latent quality (items shared by all systems).
    by_trait : bool
        Fit each trait separately (the traits share no parameter, so this is the same
        posterior); one compiled model serves every trait of the same shape. ``False``
        fits all traits in one model.
    ci_prob : float
        Probability of the highest-density intervals.
    draws, tune, chains, fast, sampler, target_accept, random_seed, mass_matrix
        Passed to :func:`bayesmeta.sampling.sample` (trait k gets seed ``random_seed + k``).
        ``mass_matrix="low_rank"`` selects nutpie's low-rank modified mass matrix; on
        SummEval COH it did not improve the mixing of the discriminations (see
        ``models/rater.md``, Known limitations).

    Returns
    -------
    RaterBiasResult
        ``summary()`` indexed by (quantity, rater, trait, cut) with columns ``classical``,
        ``mean``, ``sd``, ``hdi_low``, ``hdi_high``, ``r_hat``, ``ess_bulk``, ``ess_tail``
        and ``p_harsher`` (posterior probability of a threshold above the panel's, or of a
        severity above 0); quantities ``severity``, ``threshold``, ``panel_threshold``,
        ``marginal_threshold``, ``loading``, ``reliability_system``, ``icc_output``,
        ``share_system``, ``share_item``, ``share_output``. ``.idata`` holds the posterior
        (named dims; the output-level latent quality is dropped to keep files small);
        ``.extra["p_harsher_pairwise"]`` is P(threshold of ``rater`` > that of ``rater2``)
        per trait and cut (``cut="mean"``: severity). :meth:`RaterBiasResult.p_harsher` and
        :meth:`RaterBiasResult.p_lenient` give joint statements such as "rater 3 is more
        lenient than raters 1 and 2 at cut 4->5".

    Notes
    -----
    With :math:`\tau^*_{rtk}` the threshold of rater :math:`r` on trait :math:`t` at cut
    :math:`k` in SD units of true output quality and :math:`\bar\tau^*_{tk}` its mean over
    raters (the panel), ``p_harsher`` :math:`= P(\tau^*_{rtk} > \bar\tau^*_{tk} \mid y)`;
    for severity, :math:`P(\bar\tau^*_{rt\cdot} > \bar\tau^*_{t\cdot\cdot} \mid y)`. The
    reliability of system-level scores is the relative generalizability coefficient

    .. math:: \rho_{\rm sys} = \frac{\sigma^2_{\rm sys}}{\sigma^2_{\rm sys}
              + \sigma^2_{\rm out}/I + 1/(\bar a^2 I R)}

    of the mean over :math:`I` items and :math:`R` raters of the raters' latent responses
    (item main effects cancel because every system is rated on the same items); its
    classical twin is coefficient alpha of the rater-mean ratings (``classical``), which is
    lower on skewed, ceiling-bound scales because it works on the observed categories.
    See ``models/rater.md``.

    References
    ----------
    Linacre (1989); Eckes (2011), *Introduction to many-facet Rasch measurement*; Bürkner &
    Vuorre (2019) (brms ``thres(gr = rater)``); Brennan (2001), *Generalizability theory*;
    Xiao et al. (2023), *Evaluating evaluation metrics*, App. A.4.

    Examples
    --------
    >>> import bayesmeta as bm
    >>> ds = bm.datasets.simulated(n_systems=5, n_items=12)
    >>> res = bm.rater_bias(ds, traits=["COH"], fast=True, random_seed=1)  # doctest: +SKIP
    >>> res.summary().loc["severity"]  # doctest: +SKIP
    >>> res.p_lenient("Rater.3", ["Rater.1", "Rater.2"], trait="COH", cut="4->5")  # doctest: +SKIP

    R equivalent: ``brms::brm(y | thres(gr = rater) ~ 1 + (1 | system) + (1 | item) +
    (1 | output), family = cumulative("probit"))`` per trait (without discrimination).
    """
    import arviz as az

    from bayesmeta.sampling import check_convergence, describe_run, diagnose

    if not 0 < ci_prob < 1:
        raise ValueError(f"ci_prob must be in (0, 1), got {ci_prob}.")
    design = rater_design(data, traits=traits, raters=raters)
    if random_seed is None:
        seed = int(np.random.SeedSequence().entropy % (2**31 - 1 - 64))
    elif isinstance(random_seed, bool) or not isinstance(random_seed, int | np.integer) \
            or random_seed < 0:
        raise ValueError(f"random_seed must be a non-negative int or None, got {random_seed!r}.")
    else:
        seed = int(random_seed)
    sample_kwargs = {"draws": draws, "tune": tune, "chains": chains, "fast": fast,
                     "sampler": sampler, "target_accept": target_accept,
                     "mass_matrix": mass_matrix,
                     "attrs": {"data_hash": data_hash(data[["rating"]])}}
    t0 = time.perf_counter()
    idata = _fit(design, discrimination=discrimination, item_effect=item_effect,
                 by_trait=by_trait, sample_kwargs=sample_kwargs, seed=seed)
    seconds = time.perf_counter() - t0
    derived = derived_quantities(idata.posterior, design)
    names = [n for n in REPORTED if discrimination or n != "loading"]
    for name in derived.data_vars:
        idata.posterior[name] = derived[name]
    diag = diagnose(derived[names])
    report = check_convergence(idata, names, diagnostics=diag, warn=True)
    hdi = az.hdi(derived[names], hdi_prob=ci_prob)
    classical = classical_counterparts(design)
    p_harsher = {"threshold": ((derived["threshold"] - derived["panel_threshold"]) > 0)
                 .mean(("chain", "draw")),
                 "severity": (derived["severity"] > 0).mean(("chain", "draw"))}
    table = _summary_table(derived, diag, hdi, classical, p_harsher, names)
    pairwise = pairwise_harsher(derived["threshold"], derived["severity"])
    n_missing = int(np.isnan(design.rating).sum())
    info = {
        "data": (f"{len(design.systems)} systems x {len(design.items)} items, "
                 f"{len(design.raters)} raters x {len(design.traits)} traits, "
                 f"{design.n_obs} ratings ({n_missing} missing) on "
                 f"{design.scale_min}..{design.scale_min + design.n_categories - 1}"),
        "model": ("probit many-facet: quality = system + " + ("item + " if item_effect else "")
                  + "output; thresholds by rater x trait"
                  + ("; rater discrimination" if discrimination else "; equal slopes")),
        "sampler": describe_run(idata) + (" (one fit per trait)" if by_trait else ""),
        "convergence": str(report),
        "time": f"{seconds:.0f} s (build, compile, sample; by trait: "
                f"{idata.posterior.attrs['seconds']})",
        "data_hash": sample_kwargs["attrs"]["data_hash"],
    }
    notes = list(report.messages)
    notes.append("p_harsher: posterior probability that the rater's threshold is above the "
                 "panel's (mean over raters) at that cut, or that the severity is above 0; "
                 "1 - p_harsher is the probability of being more lenient.")
    return RaterBiasResult(table, title="Rater bias (many-facet ordinal model)", info=info,
                           idata=idata, extra={"p_harsher_pairwise": pairwise},
                           notes=notes, ci_prob=ci_prob)


__all__ = [
    "PRIORS",
    "RaterBiasResult",
    "RaterDesign",
    "build_rater_model",
    "classical_counterparts",
    "cut_labels",
    "derived_quantities",
    "plot_rater_thresholds",
    "rater_bias",
    "rater_design",
]
