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

The build steps live in :mod:`bayesmeta.raters._model_build`, the derived quantities in
:mod:`bayesmeta.raters._model_derived`, their classical twins in
:mod:`bayesmeta.raters.classical`; this module fits the model and reports. PyMC is
imported inside the functions that need it.

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
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import xarray as xr

from bayesmeta.options import SamplerOptions, resolve_seed
from bayesmeta.raters._model_build import (
    DEFAULT_PARAMETERIZATION,
    PARAMETERIZATIONS,
    PRIORS,
    RaterDesign,
    build_rater_model,
    cut_labels,
    make_design_from_array,
    parameterization_spec,
    rater_design,
)
from bayesmeta.raters._model_derived import derived_quantities, pairwise_harsher
from bayesmeta.raters.classical import classical_counterparts
from bayesmeta.results import Result, data_hash
from bayesmeta.summaries import CI_PROB, check_ci_prob, posterior_table

#: Posterior variables reported in the summary, in table order.
REPORTED = ("severity", "threshold", "panel_threshold", "marginal_threshold", "loading",
            "reliability_system", "icc_output", "share_system", "share_item", "share_output")

def _reported(discrimination: bool) -> list[str]:
    """The reported quantities of a fit (no loadings without discriminations)."""
    return [n for n in REPORTED if discrimination or n != "loading"]


#: This model's sampler defaults (the rest from ``bayesmeta.options.SAMPLER_DEFAULTS``):
#: nutpie's low-rank modified mass matrix, which captures the joint move of a
#: near-deterministic rater's discrimination with the spread of the latent qualities that
#: the diagonal one could not, and 300 tuning iterations per trait (1,000 until stop 37,
#: 500 until stop 40: SummEval met the targets on five of five seeds with 300, for 13-33%
#: less CPU, and six of six recovery datasets at the first check), and the
#: first check of the targets at 500 draws (1,000 until stop 39: with the partially
#: centred quality consistency met them at 500-800 draws; ``models/rater.md``,
#: "Convergence with the defaults"); its eigenvalue cutoff 10 (nutpie's default 100,
#: until stop 46): at fixed length, 2.4-7.9 times the bulk ESS of the slowest quantity
#: (a loading) per gradient evaluation on SummEval's coherence and relevance, the traits
#: that set the pace (1.2-3.2 on consistency, 0.7-0.9 on fluency).
DEFAULTS: dict[str, Any] = {"mass_matrix": "low_rank", "eigval_cutoff": 10.0, "tune": 300,
                            "draws": 500}


#: The design levels of the summary index, after ``estimand``.
LEVELS = ("rater", "trait", "cut")


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
        # p_harsher (a detail, not an estimate) is printed beside the thresholds and
        # severities it is about
        table = self._table.join(self._details[["p_harsher"]]) if "p_harsher" in \
            self._details else self._table
        parts = []
        for q in dict.fromkeys(table.index.get_level_values("estimand")):
            sub = table.xs(q, level="estimand")
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
        from bayesmeta.raters.plots import plot_rater_thresholds

        return plot_rater_thresholds(self, ax=ax).figure


# ----------------------------------------------------------------------------- fitting
#: the output-level latent quality and its sampled coordinates: not kept in the posterior
LATENT_QUALITY = ("quality", "quality_z", "quality_tilde")


def _sample_together(models: list[Any], **kwargs: Any) -> list[Any]:
    """The one place this module samples (bayesmeta.sampling: nutpie by default)."""
    from bayesmeta.sampling import sample_together

    return sample_together(models, **kwargs)


def _fit(design: RaterDesign, *, discrimination: bool, item_effect: bool, by_trait: bool,
         options: SamplerOptions, seed: int, progress: bool | None,
         attrs: Mapping[str, Any], parameterization: str = DEFAULT_PARAMETERIZATION) -> Any:
    import arviz as az

    from bayesmeta.sampling import cached_model

    parts = [design.subset(t) for t in design.traits] if by_trait else [design]
    names = _reported(discrimination)
    partial = parameterization_spec(parameterization)["quality"] == "partial"
    models, data, reported = [], [], []
    for d in parts:
        key = ("rater", len(d.traits), len(d.systems), len(d.items), len(d.raters),
               d.n_categories, d.n_obs, discrimination, item_effect, parameterization,
               tuple(d.systems), tuple(d.items), tuple(d.raters))
        models.append(cached_model(key, lambda d=d: build_rater_model(
            d, discrimination=discrimination, item_effect=item_effect,
            parameterization=parameterization)))
        fields = {"output_index": d.output_index, "cell_index": d.cell_index,
                  "category": d.category}
        if partial:
            fields["centring_weight"] = d.centring_weight
        data.append(fields)
        # each trait samples until its reported (derived) quantities meet the targets
        reported.append(lambda tr, d=d: derived_quantities(tr.posterior, d)[names])
    # every variable but the output-level qualities (1,700 per trait on SummEval), which no
    # reported quantity reads: not traced, they cost no memory (the compile time is the
    # same: 83 s against 85 s, cold, stop 46)
    trace = [v.name for v in (*models[0].free_RVs, *models[0].deterministics)
             if v.name not in LATENT_QUALITY]
    t0 = time.perf_counter()
    # traits are separate models sampled one after the other, each to its own targets; they
    # share the draw dim, so a trait that needed more draws is thinned to the shortest
    # length and re-checked there (bayesmeta.sampling.sample_together)
    fits = _sample_together(models, options=options, data=data,
                            random_seed=[seed + k for k in range(len(parts))],
                            progress=progress, attrs=attrs, reported=reported,
                            var_names=trace)
    seconds = time.perf_counter() - t0
    posts, stats = [], []
    for d, idata in zip(parts, fits, strict=True):
        post = idata.posterior.drop_vars(list(LATENT_QUALITY), errors="ignore")
        posts.append(post.assign_coords(trait=d.traits))
        st = idata.sample_stats[[v for v in ("diverging", "reached_max_treedepth")
                                 if v in idata.sample_stats]]
        stats.append(st.expand_dims(trait=d.traits) if by_trait else st)
    attrs = dict(posts[0].attrs)
    if by_trait:
        for key in ("draws_met", "draws_sampled"):
            attrs[f"{key}_by_trait"] = ", ".join(
                f"{t}: {f.posterior.attrs.get(key, f.posterior.sizes['draw'])}"
                for t, f in zip(design.traits, fits, strict=True))
        for phase in ("compile", "warmup", "sampling"):
            attrs[f"seconds_{phase}"] = float(sum(
                float(f.posterior.attrs.get(f"seconds_{phase}", 0.0)) for f in fits))
        stop = [str(f.posterior.attrs["stop_reason"]) for f in fits
                if "stop_reason" in f.posterior.attrs]
        if stop:  # the first reason that is not "targets_met", if any
            attrs["stop_reason"] = next((r for r in stop if r != "targets_met"), stop[0])
        posterior = xr.concat(posts, dim="trait", data_vars="all", coords="minimal",
                              compat="override", combine_attrs="override")
        sample_stats = xr.concat(stats, dim="trait", data_vars="all",
                                 combine_attrs="override")
        attrs["random_seed"] = seed
        attrs["seeds_by_trait"] = ", ".join(f"{t}: {seed + k}" for k, t in
                                            enumerate(design.traits))
    else:
        posterior, sample_stats = posts[0], stats[0]
    attrs.pop("draws_met", None)
    attrs.pop("draws_sampled", None)
    attrs["draws"] = int(posterior.sizes["draw"])
    attrs["seconds"] = f"{seconds:.0f}"
    posterior.attrs, sample_stats.attrs = attrs, attrs
    return az.InferenceData(posterior=posterior, sample_stats=sample_stats)


def _column(values: Mapping[str, xr.DataArray], index: pd.MultiIndex) -> np.ndarray:
    """Values of labelled arrays (one per estimand, dims among :data:`LEVELS`) aligned to
    the rows of ``index``; NaN where an estimand has none."""
    keyed: dict[tuple[str, ...], float] = {}
    for name, da in values.items():
        dims = list(da.dims)
        for key, value in da.to_series().items() if dims else [((), float(da))]:
            key = key if isinstance(key, tuple) else (key,)
            label = dict(zip(dims, map(str, key), strict=True))
            keyed[(name, *(label.get(lv, "") for lv in LEVELS))] = float(value)
    return np.array([keyed.get(tuple(map(str, row)), np.nan) for row in index])


def rater_bias(
    data: xr.Dataset,
    *,
    traits: Sequence[str] | None = None,
    raters: Sequence[str] | None = None,
    discrimination: bool = True,
    item_effect: bool = True,
    by_trait: bool = True,
    ci_prob: float = CI_PROB,
    sampling: SamplerOptions | Mapping[str, Any] | str | None = None,
    random_seed: int | None = None,
    progress: bool | None = None,
    parameterization: str = DEFAULT_PARAMETERIZATION,
) -> RaterBiasResult:
    r"""Rater leniency and reliability from the many-facet ordinal rater model.

    Fits the probit many-facet model of :mod:`bayesmeta.raters.model` (latent quality per
    output = system + item + output deviation; per rater and trait a severity shift,
    partially pooled threshold spacing and a discrimination) and reports, per rater and
    trait, the overall severity and each category threshold with HDIs and the posterior
    probability that the rater is harsher than the panel, plus the reliability of
    system-level human scores and of the raters' mean on one output.

    Parameters
    ----------
    data : xarray.Dataset
        A bayesmeta dataset with ordinal ``rating(system, item, rater, trait)``; missing
        ratings (NaN) drop out of the likelihood. Continuous ``judgment`` s (averages over
        annotators) are refused: they have no raters or categories to model.
    traits, raters : list of str, optional
        Subsets by label (default all rated traits and all raters).
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
        Probability of the highest-density intervals (default 0.94).
    sampling : SamplerOptions, dict, "fast" or "full", optional
        Draws, tuning, chains, sampler backend, step-size target, mass matrix and fast mode
        (:class:`bayesmeta.SamplerOptions`; defaults 4 chains, 300 tuning iterations per
        trait, the first check at 500 draws, extended until the targets are met, with
        nutpie's low-rank
        modified mass matrix: on SummEval COH it met R-hat <= 1.01 and ESS >= 400 in 1,200
        draws where the diagonal one had not at 5,000; ``models/rater.md``).
        ``mass_matrix="diag"`` gives the diagonal adaptation of release 0.10.
    random_seed : int, optional
        Seed; trait k gets ``random_seed + k``. Drawn and recorded when not given.
    progress : bool, optional
        Show the sampler's progress bar (default: in interactive full runs).
    parameterization : str
        How the model is written, a name in
        :data:`bayesmeta.raters._model_build.PARAMETERIZATIONS`. Default
        ``"rater_units_fixed_middle_partial"``: the severities, log-gaps and
        log-discriminations have fixed weakly informative SDs over the raters (1, 0.5,
        0.5) instead of SDs estimated from a handful of raters, whose funnels made release
        0.10's build diverge; each rater's severity shift sits at its middle threshold(s),
        so that the gap to a category the rater never uses (an LLM judge that never gives
        5) moves only that end threshold; the item effects are non-centred, which
        removes the funnel of an item SD near 0 (two of nine recovery datasets failed
        without it); and the output quality is **partially centred**: centred where an
        output's ratings locate it, non-centred where they only bound it (every rating
        in the top category, or every one in the bottom one: 1,399 of SummEval's 1,700
        outputs on consistency), which took consistency from about 2,200 draws per
        chain to reach bulk ESS 400 to 1,000 draws with ESS 900-1,060.
        ``"rater_units_fixed_middle_noncentred_items"`` is the same with every output
        centred (the default before); ``"rater_units_fixed_middle"`` also centres the item
        effects; ``"rater_units_fixed"`` centres the shift on the mean
        threshold (its fits of SummEval with six LLM judges had rare divergences there);
        ``"rater_units"`` is release 0.10's build and priors (kept to reproduce earlier
        results); the other variants were measured and mix worse on SummEval.
        The reported quantities mean the same in all of them; the priors differ as
        ``models/rater.md`` ("Convergence with the defaults") states, with the
        measurements.

    Returns
    -------
    RaterBiasResult
        ``summary()`` indexed by ``(estimand, rater, trait, cut)`` (``""`` where a level
        does not apply) with columns ``classical``, ``mean``, ``sd``, ``hdi_low``,
        ``hdi_high``, ``r_hat``, ``ess_bulk``, ``ess_tail``; estimands ``severity``,
        ``threshold``, ``panel_threshold``, ``marginal_threshold``, ``loading``,
        ``reliability_system``, ``icc_output``, ``share_system``, ``share_item``,
        ``share_output``. ``details()`` holds ``p_harsher`` (posterior probability of a
        threshold above the panel's, or of a severity above 0). ``.idata`` holds the
        posterior (named dims; the output-level latent quality is dropped to keep files
        small); ``.extra["p_harsher_pairwise"]`` is P(threshold of ``rater`` > that of
        ``rater2``) per trait and cut (``cut="mean"``: severity).
        :meth:`RaterBiasResult.p_harsher` and :meth:`RaterBiasResult.p_lenient` give joint
        statements such as "rater 3 is more lenient than raters 1 and 2 at cut 4->5".

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
    >>> res = bm.rater_bias(ds, traits=["COH"], sampling="fast",
    ...                     random_seed=1)  # doctest: +SKIP
    >>> res.summary().loc["severity"]  # doctest: +SKIP
    >>> res.p_lenient("Rater.3", ["Rater.1", "Rater.2"], trait="COH",
    ...               cut="4->5")  # doctest: +SKIP

    R equivalent: ``brms::brm(y | thres(gr = rater) ~ 1 + (1 | system) + (1 | item) +
    (1 | output), family = cumulative("probit"))`` per trait (without discrimination).
    """
    from bayesmeta.sampling import check_convergence, describe_run, diagnose

    ci_prob = check_ci_prob(ci_prob)
    spec = parameterization_spec(parameterization)
    options = SamplerOptions.coerce(sampling).resolve(**DEFAULTS)
    design = rater_design(data, traits=traits, raters=raters)
    seed = resolve_seed(random_seed)
    dhash = data_hash(data)
    t0 = time.perf_counter()
    idata = _fit(design, discrimination=discrimination, item_effect=item_effect,
                 by_trait=by_trait, options=options, seed=seed, progress=progress,
                 attrs={"data_hash": dhash, "parameterization": parameterization},
                 parameterization=parameterization)
    seconds = time.perf_counter() - t0
    derived = derived_quantities(idata.posterior, design)
    names = _reported(discrimination)
    for name in derived.data_vars:
        idata.posterior[name] = derived[name]
    diag = diagnose(derived[names])
    report = check_convergence(idata, names, diagnostics=diag, warn=True)
    table = posterior_table(derived, names, index=list(LEVELS), ci_prob=ci_prob,
                            diagnostics=diag)
    classical = classical_counterparts(design.labelled(), scale_min=design.scale_min,
                                       n_categories=design.n_categories)
    table.insert(0, "classical", _column(classical, table.index))
    p_harsher = {"threshold": ((derived["threshold"] - derived["panel_threshold"]) > 0)
                 .mean(("chain", "draw")),
                 "severity": (derived["severity"] > 0).mean(("chain", "draw"))}
    details = pd.DataFrame({"p_harsher": _column(p_harsher, table.index)}, index=table.index)
    if "is_judge" in data.coords:  # LLM judges added as raters (bm.add_judges)
        judge = dict(zip(map(str, data["rater"].values), map(bool, data["is_judge"].values),
                         strict=True))
        details["is_judge"] = [judge.get(str(r), False)
                               for r in table.index.get_level_values("rater")]
    pairwise = pairwise_harsher(derived["threshold"], derived["severity"])
    n_missing = int(np.isnan(design.rating).sum())
    info = {
        "data": (f"{len(design.systems)} systems x {len(design.items)} items, "
                 f"{len(design.raters)} raters x {len(design.traits)} traits, "
                 f"{design.n_obs} ratings ({n_missing} missing) on "
                 f"{design.scale_min}..{design.scale_min + design.n_categories - 1}"),
        "model": ("probit many-facet: quality = system + " + ("item + " if item_effect else "")
                  + "output; thresholds by rater x trait"
                  + ("; rater discrimination" if discrimination else "; equal slopes")
                  + f"; {parameterization} ({spec['units']} units, {spec['scales']} rater "
                  f"scales, {spec['quality']} quality)"),
        "sampler": describe_run(idata) + (" (one fit per trait)" if by_trait else ""),
        "convergence": str(report),
        "time": f"{seconds:.0f} s (build, compile, sample)" + (
            f"; draws at which each trait met the targets: "
            f"{idata.posterior.attrs['draws_met_by_trait']}"
            if "draws_met_by_trait" in idata.posterior.attrs else "") + (
            f"; draws sampled: {idata.posterior.attrs['draws_sampled_by_trait']} (the "
            f"longer ones thinned to the {idata.posterior.attrs['draws']} kept)"
            if "draws_sampled_by_trait" in idata.posterior.attrs else ""),
    }
    notes = list(report.messages)
    notes.append("p_harsher (in details()): posterior probability that the rater's threshold "
                 "is above the panel's (mean over raters) at that cut, or that the severity "
                 "is above 0; 1 - p_harsher is the probability of being more lenient.")
    return RaterBiasResult(table, title="Rater bias (many-facet ordinal model)", info=info,
                           details=details, idata=idata,
                           extra={"p_harsher_pairwise": pairwise}, notes=notes,
                           ci_prob=ci_prob, posterior="MCMC posterior", random_seed=seed,
                           data_hash=dhash)


__all__ = [
    "DEFAULT_PARAMETERIZATION",
    "PARAMETERIZATIONS",
    "PRIORS",
    "RaterBiasResult",
    "RaterDesign",
    "build_rater_model",
    "cut_labels",
    "derived_quantities",
    "make_design_from_array",
    "rater_bias",
    "rater_design",
]
