"""Build the many-facet ordinal rater model: the ratings in long form and the PyMC model.

The model is written out in :mod:`bayesmeta.raters.model` (and ``models/rater.md``); this
module holds its two build steps, so that the derived quantities
(:mod:`bayesmeta.raters._model_derived`) and the public entry point stay short. PyMC is
imported inside :func:`build_rater_model`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import xarray as xr

from bayesmeta.data import select
from bayesmeta.raters.classical import cut_labels

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

    @property
    def centring_weight(self) -> np.ndarray:
        """Per (trait, system, item): 1 where the output's ratings locate its latent
        quality (not all in the lowest category and not all in the highest), 0 where they
        only bound it (every rating in the lowest category, or every one in the highest)
        or there is none. The ``quality="partial"`` parameterisation centres the first kind
        and non-centres the second (Papaspiliopoulos, Roberts & Skold 2007)."""
        shape = (len(self.traits), len(self.systems), len(self.items))
        n, idx = int(np.prod(shape)), self.output_index
        count = np.bincount(idx, minlength=n)
        low = np.bincount(idx, weights=self.category == 0, minlength=n)
        high = np.bincount(idx, weights=self.category == self.n_categories - 1, minlength=n)
        return ((count > 0) & (low < count) & (high < count)).astype(float).reshape(shape)

    def labelled(self) -> xr.DataArray:
        """The ratings as a labelled ``(trait, system, item, rater)`` DataArray."""
        return xr.DataArray(self.rating, dims=("trait", "system", "item", "rater"),
                            coords={"trait": self.traits, "system": self.systems,
                                    "item": self.items, "rater": self.raters})

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
    """The ordinal ratings of ``data`` in the long form of the rater model.

    The ratings come from :func:`bayesmeta.data.select.ordinal_ratings`, which validates
    the dataset, picks traits and raters by label and refuses continuous judgments.

    Raises
    ------
    ValueError
        If ``data`` has no ordinal ratings (or only continuous judgments), an unknown trait
        or rater is asked for (the message names the dim and the label), fewer than two
        raters or fewer than three categories are left.
    """
    rating = select.ordinal_ratings(data, traits=traits, raters=raters, analysis="rater_bias")
    select.require(rating.sizes["rater"], 2, "rater", "rater_bias")
    lo, hi = int(rating.attrs["scale_min"]), int(rating.attrs["scale_max"])
    K = hi - lo + 1
    if K < 3:
        raise ValueError(f"rater_bias needs a rating scale with at least 3 categories, got "
                         f"scale_min={lo}, scale_max={hi}.")
    arr = rating.transpose("trait", "system", "item", "rater").values.astype(float)
    return make_design_from_array(
        arr, [str(v) for v in rating["system"].values], [str(v) for v in rating["item"].values],
        [str(v) for v in rating["rater"].values], [str(v) for v in rating["trait"].values],
        K, lo,
    )


# ----------------------------------------------------------------------------- model
#: How the model is written (same reported quantities, see ``models/rater.md``,
#: "Convergence with the defaults"). ``units``: ``"quality"`` measures the latent scale in
#: SDs of true output quality (variance shares on a simplex, a free slope per rater);
#: ``"rater"`` in the latent-response noise of a typical rater (discriminations with
#: geometric mean 1, free quality SDs; the parameterization of release 0.10).
#: ``scales``: ``"hierarchical"`` estimates the spread over the raters of severities,
#: log-gaps and log-discriminations; ``"fixed"`` gives them fixed weakly informative SDs.
#: ``quality``: the output-level latent quality ``"centred"``, ``"noncentred"`` or
#: ``"partial"`` (centred where the ratings locate it, non-centred where they only bound
#: it: :attr:`RaterDesign.centring_weight`).
#: ``thresholds``: where a rater's severity shift sits, ``"mean"`` (the mean of its
#: thresholds, the default) or ``"middle"`` (the mean of its middle threshold(s)): with
#: ``"middle"`` an end gap moves only its own end threshold, so a category a rater never
#: uses (an LLM judge that never gives 5) leaves the shift and the other thresholds
#: alone, instead of coupling them through exp(log-gap) (a curved ridge).
PARAMETERIZATIONS: dict[str, dict[str, str]] = {
    "quality_units": {"units": "quality", "scales": "fixed", "quality": "centred"},
    "quality_units_noncentred": {"units": "quality", "scales": "fixed",
                                 "quality": "noncentred"},
    "rater_units": {"units": "rater", "scales": "hierarchical", "quality": "centred"},
    "rater_units_fixed": {"units": "rater", "scales": "fixed", "quality": "centred"},
    "rater_units_noncentred": {"units": "rater", "scales": "hierarchical",
                               "quality": "noncentred"},
    "rater_units_fixed_noncentred": {"units": "rater", "scales": "fixed",
                                     "quality": "noncentred"},
    "rater_units_fixed_noncentred_items": {"units": "rater", "scales": "fixed",
                                           "quality": "noncentred", "items": "noncentred"},
    "rater_units_fixed_middle": {"units": "rater", "scales": "fixed", "quality": "centred",
                                 "thresholds": "middle"},
    "rater_units_fixed_middle_noncentred_items": {"units": "rater", "scales": "fixed",
                                                  "quality": "centred", "thresholds": "middle",
                                                  "items": "noncentred"},
    "rater_units_fixed_middle_partial": {"units": "rater", "scales": "fixed",
                                         "quality": "partial", "thresholds": "middle",
                                         "items": "noncentred"},
}

#: The parameterization :func:`build_rater_model` and :func:`bayesmeta.rater_bias` use.
DEFAULT_PARAMETERIZATION = "rater_units_fixed_middle_partial"

#: Fixed prior SDs of the ``scales="fixed"`` parameterisations (see the model card), and
#: the prior of the log slopes (signal-to-noise ratio of a rater on the quality scale).
FIXED_PRIORS: dict[str, float] = {
    "severity_sd": 1.0,
    "log_gap_sd": 0.5,
    "log_discrimination_sd": 0.5,
    "log_slope_mean": 1.0,
    "log_slope_sd": 1.0,
    "share_concentration": 1.0,
}


def parameterization_spec(parameterization: str | dict[str, str]) -> dict[str, str]:
    """The ``units`` / ``scales`` / ``quality`` choices of a parameterization name."""
    if isinstance(parameterization, dict):
        spec = dict(PARAMETERIZATIONS[DEFAULT_PARAMETERIZATION], **parameterization)
    elif parameterization in PARAMETERIZATIONS:
        spec = dict(PARAMETERIZATIONS[parameterization])
    else:
        raise ValueError(f"parameterization must be one of "
                         f"{', '.join(map(repr, PARAMETERIZATIONS))}, got "
                         f"{parameterization!r}.")
    allowed = {"units": ("quality", "rater"), "scales": ("fixed", "hierarchical"),
               "quality": ("centred", "noncentred", "partial"), "items": ("centred", "noncentred"),
               "thresholds": ("mean", "middle")}
    for k, v in spec.items():
        if k not in allowed or v not in allowed[k]:
            raise ValueError(f"unknown parameterization setting {k}={v!r}.")
    return spec


def build_rater_model(design: RaterDesign, *, discrimination: bool = True,
                      item_effect: bool = True,
                      parameterization: str | dict[str, str] = DEFAULT_PARAMETERIZATION
                      ) -> Any:
    r"""The PyMC model of the module docstring for one :class:`RaterDesign`.

    The observed ratings are ``pm.Data`` containers (``output_index``, ``cell_index``,
    ``category``), so the model is built and compiled once per shape and refitted to new
    data of the same shape (another trait, another simulated dataset).

    Parameters
    ----------
    design : RaterDesign
        From :func:`rater_design`.
    discrimination : bool
        Rater- and trait-specific discriminations; ``False`` gives all raters of a trait
        the same slope (the many-facet Rasch model's equal slopes).
    item_effect : bool
        Include the item (input) main effect :math:`v_{ti}` in the latent quality.
    parameterization : str or dict
        A name in :data:`PARAMETERIZATIONS` (default :data:`DEFAULT_PARAMETERIZATION`,
        ``"rater_units_fixed_middle_partial"``: output quality centred where the ratings
        locate it and non-centred where they only bound it
        (:attr:`RaterDesign.centring_weight`), non-centred item effects, fixed prior SDs
        over the raters, each rater's severity shift at its middle threshold(s); chosen
        on measured convergence, see ``models/rater.md``). Every
        parameterization has the deterministic (or free) variables ``mu``, ``sd_system``,
        ``sd_item``, ``sd_output``, ``system_effect``, ``rater_shift``, ``tau`` and
        ``discrimination`` from which
        :func:`~bayesmeta.raters._model_derived.derived_quantities` computes the reported
        quantities, whose meaning does not depend on the choice.

    Returns
    -------
    pymc.Model
        Coords ``trait``, ``system``, ``item``, ``rater``, ``cut``, ``gap``; deterministic
        ``tau(trait, rater, cut)`` and ``discrimination(trait, rater)``.

    Examples
    --------
    >>> import bayesmeta as bm
    >>> from bayesmeta.raters.model import build_rater_model, rater_design
    >>> d = rater_design(bm.datasets.simulated(n_systems=4, n_items=5), traits=["COH"])
    >>> m = build_rater_model(d)  # doctest: +SKIP
    >>> sorted(m.coords)  # doctest: +SKIP
    ['cut', 'gap', 'item', 'rater', 'system', 'trait']
    """
    import pymc as pm
    import pytensor.tensor as pt

    from bayesmeta import _ordinal
    from bayesmeta._ordinal import padded_cutpoints

    spec = parameterization_spec(parameterization)
    quality_units = spec["units"] == "quality"
    fixed = spec["scales"] == "fixed"
    T, S, I, R = (len(design.traits), len(design.systems), len(design.items),
                  len(design.raters))
    K = design.n_categories
    coords = {"trait": design.traits, "system": design.systems, "item": design.items,
              "rater": design.raters, "cut": design.cuts,
              "gap": [f"{a}|{b}" for a, b in zip(design.cuts[:-1], design.cuts[1:],
                                                 strict=True)]}
    if quality_units:
        coords["component"] = ["system", "item", "output"] if item_effect else \
            ["system", "output"]
    P, F = PRIORS, FIXED_PRIORS
    with pm.Model(coords=coords) as model:
        out_idx = pm.Data("output_index", design.output_index)
        cell_idx = pm.Data("cell_index", design.cell_index)
        cat = pm.Data("category", design.category)

        # latent quality: system + item + output deviation
        mu = pm.Normal("mu", 0.0, P["mu_sd"], dims="trait")
        if quality_units:
            # unit variance of true quality, split into shares (a simplex per trait)
            C = len(coords["component"])
            share = pm.Dirichlet("variance_share", a=np.full((T, C), F["share_concentration"]),
                                 dims=("trait", "component"))
            sd = pt.sqrt(share)
            sd_system = pm.Deterministic("sd_system", sd[:, 0], dims="trait")
            sd_output = pm.Deterministic("sd_output", sd[:, -1], dims="trait")
            if item_effect:
                sd_item = pm.Deterministic("sd_item", sd[:, 1], dims="trait")
        else:
            sd_system = pm.HalfNormal("sd_system", P["sd_quality"], dims="trait")
            sd_output = pm.HalfNormal("sd_output", P["sd_quality"], dims="trait")
            if item_effect:
                sd_item = pm.HalfNormal("sd_item", P["sd_quality"], dims="trait")
        system_effect = pm.ZeroSumNormal("system_effect", sigma=sd_system[:, None],
                                         dims=("trait", "system"))
        loc = mu[:, None, None] + system_effect[:, :, None]
        if item_effect and spec.get("items", "centred") == "noncentred":
            item_z = pm.ZeroSumNormal("item_effect_z", sigma=1.0, dims=("trait", "item"))
            item = pm.Deterministic("item_effect", sd_item[:, None] * item_z,
                                    dims=("trait", "item"))
            loc = loc + item[:, None, :]
        elif item_effect:
            item = pm.ZeroSumNormal("item_effect", sigma=sd_item[:, None],
                                    dims=("trait", "item"))
            loc = loc + item[:, None, :]
        else:
            loc = pt.broadcast_to(loc, (T, S, I))
        if spec["quality"] == "centred":
            quality = pm.Normal("quality", loc, sd_output[:, None, None],
                                dims=("trait", "system", "item"))
        elif spec["quality"] == "partial":
            # w = 1 centred, w = 0 non-centred: quality = loc + sd^(1-w) (q~ - w loc),
            # q~ ~ Normal(w loc, sd^w). w is 0 or 1 (RaterDesign.centring_weight), so sd^w
            # and sd^(1-w) are switches: the same values and gradients as the powers, which
            # had cost 15% of a gradient evaluation on SummEval (models/rater.md, "Fitting")
            w = pm.Data("centring_weight", design.centring_weight)
            sd3 = sd_output[:, None, None]
            centred = pt.gt(w, 0.5)
            tilde = pm.Normal("quality_tilde", w * loc, pt.switch(centred, sd3, 1.0),
                              dims=("trait", "system", "item"))
            quality = pm.Deterministic("quality", loc + pt.switch(centred, 1.0, sd3)
                                       * (tilde - w * loc),
                                       dims=("trait", "system", "item"))
        else:
            z = pm.Normal("quality_z", 0.0, 1.0, dims=("trait", "system", "item"))
            quality = pm.Deterministic("quality", loc + sd_output[:, None, None] * z,
                                       dims=("trait", "system", "item"))

        # thresholds: severity shift + log-gaps pooled towards the panel's (ordered)
        if fixed:
            shift = pm.ZeroSumNormal("rater_shift", sigma=F["severity_sd"],
                                     dims=("trait", "rater"))
        else:
            sd_sev = pm.HalfNormal("sd_severity", P["sd_severity"], dims="trait")
            shift = pm.ZeroSumNormal("rater_shift", sigma=sd_sev[:, None],
                                     dims=("trait", "rater"))
        panel_log_gap = pm.Normal("panel_log_gap", 0.0, P["panel_log_gap_sd"],
                                  dims=("trait", "gap"))
        sd_gap = F["log_gap_sd"] if fixed else \
            pm.HalfNormal("sd_log_gap", P["sd_log_gap"], dims="trait")[:, None, None]
        log_gap = pm.Normal("log_gap", panel_log_gap[:, None, :], sd_gap,
                            dims=("trait", "rater", "gap"))
        steps = pt.concatenate([pt.zeros((T, R, 1)), pt.cumsum(pt.exp(log_gap), axis=-1)],
                               axis=-1)
        if spec.get("thresholds", "mean") == "middle":
            n_cut = K - 1
            mid = [n_cut // 2] if n_cut % 2 else [n_cut // 2 - 1, n_cut // 2]
            steps = steps - steps[..., mid].mean(axis=-1, keepdims=True)
        else:
            steps = steps - steps.mean(axis=-1, keepdims=True)
        tau = pm.Deterministic("tau", shift[:, :, None] + steps, dims=("trait", "rater", "cut"))

        # slopes
        if quality_units:
            # signal-to-noise of each rater on the quality scale: a_rt = b_rt (one unit is
            # one SD of true quality); equal slopes share one b per trait
            if discrimination:
                log_b = pm.Normal("log_slope", F["log_slope_mean"], F["log_slope_sd"],
                                  dims=("trait", "rater"))
            else:
                log_b = pm.Normal("log_slope", F["log_slope_mean"], F["log_slope_sd"],
                                  dims="trait")[:, None] * pt.ones((1, R))
            disc = pm.Deterministic("discrimination", pt.exp(log_b), dims=("trait", "rater"))
        elif discrimination:
            sd_disc = F["log_discrimination_sd"] if fixed else pm.HalfNormal(
                "sd_log_discrimination", P["sd_log_discrimination"], dims="trait")[:, None]
            log_disc = pm.ZeroSumNormal("log_discrimination", sigma=sd_disc,
                                        dims=("trait", "rater"))
            disc = pm.Deterministic("discrimination", pt.exp(log_disc), dims=("trait", "rater"))
        else:
            disc = pt.ones((T, R))

        # likelihood, long form: one term per observed rating
        cuts = padded_cutpoints(tau).reshape((-1,))
        theta = quality.reshape((-1,))[out_idx]
        a = disc.reshape((-1,))[cell_idx]
        base = cell_idx * (K + 1) + cat
        lower = a * (cuts[base] - theta)
        upper = a * (cuts[base + 1] - theta)
        # through the module attribute, so that the kernel's tests and benchmark can build
        # the same model with the graph it replaced, for comparison
        pm.Potential("loglik", _ordinal.log_interval_prob_sum(lower, upper))
    return model


__all__ = [
    "DEFAULT_PARAMETERIZATION",
    "FIXED_PRIORS",
    "PARAMETERIZATIONS",
    "PRIORS",
    "RaterDesign",
    "build_rater_model",
    "cut_labels",
    "make_design_from_array",
    "parameterization_spec",
    "rater_design",
]
