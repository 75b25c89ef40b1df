r"""The true-score (generalizability) model: :func:`reliability` and its result.

Every variable (an automatic metric, one rater x trait of the ordinal ratings, or a
continuous judgment) is a crossed system x item design with replicated runs nested in the
cells::

    y[s, i, r] = mu + a[s] + b[i] + c[s, i] + e[s, i, r]
    a ~ N(0, sd_system),  b ~ N(0, sd_item),  c ~ N(0, sd_system_item),  e ~ N(0, sd_run)

Reliability of the mean score of a system over J items and R runs (the items shared by all
systems) is the generalizability coefficient

    rho(J, R) = s2_system / (s2_system + s2_system_item / J + s2_run / (J R)),

of which *consistency* (coefficient alpha's counterpart, one run) is ``rho(J, 1)`` and
*stability* (test-retest of system means over the same items) is
``(s2_system + s2_system_item / J) / (s2_system + (s2_system_item + s2_run) / J)``.

The module is split along its seams: the design, ANOVA table and PyMC model in
:mod:`bayesmeta.reliability._true_score_build`, the derived quantities and the table in
:mod:`bayesmeta.reliability._true_score_derived`, the classical (NumPy) G-study in
:mod:`bayesmeta.reliability.generalizability`, the decision study in
:mod:`bayesmeta.reliability.d_study`. See the model card ``models/true_score.md``.

PyMC is imported only inside the functions that build and sample the model.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import xarray as xr

from bayesmeta.options import SamplerOptions, resolve_seed
from bayesmeta.reliability._true_score_build import (
    BUCKET,
    anova_table,
    bucket,
    build_model,
    collect,
    design_dataset,
    full_shape,
    model_data,
)
from bayesmeta.reliability._true_score_derived import (
    ESTIMANDS,
    original_scale,
    reliability_notes,
    reliability_table,
)
from bayesmeta.reliability.generalizability import (
    COMPONENTS,
    anova_ss,
    g_coefficient,
    stability_coefficient,
    variance_components,
)
from bayesmeta.results import Result, data_hash
from bayesmeta.summaries import CI_PROB, check_ci_prob

METHODS = ("auto", "full")


class TrueScoreResult(Result):
    """Posterior and classical reliability of every metric, rater x trait and judgment.

    Returned by :func:`reliability`. ``summary()`` is indexed by ``(estimand, variable)``
    with estimands ``consistency``, ``stability`` (variables with several runs), ``sem``,
    ``items_needed``, ``sd_system``, ``sd_item``, ``sd_system_item`` and ``sd_run``;
    ``details()`` holds ``kind``, ``metriceval`` and ``median`` per row.
    """

    _SECTIONS = (
        ("consistency", "Consistency of system means over {J} items, one run "
                        "(Bayesian coefficient alpha)"),
        ("stability", "Stability of system means across runs, same {J} items (test-retest)"),
        ("sem", "Standard error of measurement of a system mean (one run, {J} items; "
                "score units)"),
        ("items_needed", "Items needed for reliability {target} with one run"),
    )

    def _state(self) -> dict[str, Any]:
        return {"target": self.target, "n_items": self.n_items, "n_systems": self.n_systems}

    def _restore(self, state: dict[str, Any]) -> None:
        self.target = float(state["target"])
        self.n_items = int(state["n_items"])
        self.n_systems = int(state["n_systems"])

    def _body(self) -> str:
        tab = self._table
        shown = tab.join(self._details[["metriceval", "median"]])
        order = [c for c in ("classical", "metriceval", "mean", "median", "sd", "hdi_low",
                             "hdi_high", "r_hat", "ess_bulk", "ess_tail") if c in shown]
        estimands = set(tab.index.get_level_values("estimand"))
        parts = []
        for est, title in self._SECTIONS:
            if est not in estimands:
                continue
            sub = shown.xs(est, level="estimand")
            # items needed has a long right tail: show the median, not the mean and SD
            drop = {"metriceval", "mean", "sd"} if est == "items_needed" else {"median"}
            parts.append(title.format(J=self.n_items, target=f"{self.target:g}"))
            parts.append(self._format_table(sub[[c for c in order if c not in drop]]))
            parts.append("")
        comp = tab[tab.index.get_level_values("estimand").str.startswith("sd_")]
        if len(comp):
            wide = comp["mean"].unstack("estimand")
            wide = wide[[f"sd_{c}" for c in COMPONENTS if f"sd_{c}" in wide.columns]]
            wide.columns = [c.removeprefix("sd_") for c in wide.columns]
            wide = wide.loc[list(dict.fromkeys(comp.index.get_level_values("variable")))]
            parts.append("Variance components: posterior mean SDs in score units "
                         "(classical ANOVA values and intervals in summary())")
            parts.append(self._format_table(wide))
        return "\n".join(parts).rstrip()

    def plot(self, ax: Any = None, column: str | None = None, *,
             estimand: str = "consistency") -> Any:
        """Forest plot of one estimand over all variables: posterior mean with its HDI
        (dot and line) and the classical ANOVA estimate (cross). Returns the Figure."""
        return self.plot_estimand(estimand, ax=ax, column=column)



def reliability(
    data: xr.Dataset,
    *,
    metrics: Sequence[str] | None = None,
    raters: Sequence[str] | bool | None = None,
    judgments: bool | Sequence[str] = True,
    reference: Any = "first",
    target: float = 0.9,
    estimator: str = "auto",
    ci_prob: float = CI_PROB,
    sampling: SamplerOptions | Mapping[str, Any] | str | None = None,
    random_seed: int | None = None,
    progress: bool | None = None,
) -> TrueScoreResult:
    r"""Posterior reliability of metrics, raters and judgments next to the classical estimates.

    Fits the true-score (generalizability) model ``y[s,i,r] = mu + a_s + b_i + c_si +
    e_sir`` to every selected variable in one vectorised model, and reports for each:
    consistency of system means over the J items of the data (coefficient alpha's
    Bayesian counterpart), stability across runs (test-retest; metrics with several runs),
    the standard error of measurement of a system mean, the number of items needed for
    ``target`` reliability, and the four variance components.

    .. math::
        \mathrm{consistency} &= \frac{\sigma^2_s}{\sigma^2_s + (\sigma^2_{si}+\sigma^2_e)/J},
        \qquad
        \mathrm{stability} = \frac{\sigma^2_s + \sigma^2_{si}/J}
                                  {\sigma^2_s + (\sigma^2_{si}+\sigma^2_e)/J}, \\
        \mathrm{SEM} &= \sqrt{(\sigma^2_{si}+\sigma^2_e)/J}, \qquad
        J^* = \Big\lceil \frac{t}{1-t}\,\frac{\sigma^2_{si}+\sigma^2_e}{\sigma^2_s}\Big\rceil

    The ``classical`` column holds the ANOVA (generalizability-theory) plug-in estimates
    (:func:`bayesmeta.reliability.generalizability.g_study`); with one run the consistency
    plug-in equals coefficient alpha (Hoyt 1941) and the SEM plug-in equals MetricEval's
    :math:`s_X\sqrt{1-\alpha}`. ``details()["metriceval"]`` holds MetricEval's own
    estimators (alpha and SEM of the first run, pairwise-complete, from
    :func:`bayesmeta.consistency`; Pearson test-retest of run means, from
    :func:`bayesmeta.stability`), which coincide with ``classical`` for deterministic and
    single-run variables.

    Parameters
    ----------
    data : xarray.Dataset
        A bayesmeta dataset with ``score``, ``rating`` and/or ``judgment``.
    metrics : list of str, optional
        Metrics to fit (default all; ``[]`` for none).
    raters : list of str or bool, optional
        Ordinal ratings to fit: None or True for every rater x trait, False or ``[]`` for
        none, or raters (``"Expert.1"``: all its traits) and ``"<rater>.<trait>"`` labels.
    judgments : bool or list of str
        Continuous judgments to fit (True: all, labelled by trait). Ratings and judgments
        are single-run scores.
    reference : "first", "mean", "max", "min" or label
        One score per output for metrics with a ``reference`` dim
        (:func:`bayesmeta.data.select.pick_reference`).
    target : float
        Target reliability of the items-needed estimate.
    estimator : {"auto", "full"}
        The likelihood. ``"auto"``: exact ANOVA marginal likelihood for
        complete variables and the random-effects model for variables with missing cells;
        ``"full"``: the random-effects model for all (slower; same posterior on complete
        data).
    ci_prob : float
        Probability of the highest-density intervals.
    sampling : SamplerOptions, dict, "fast" or "full", optional
        Sampler settings (:class:`bayesmeta.SamplerOptions`; ``"fast"``: 2 chains x 300
        draws, a preview). ``target_accept`` defaults to 0.8, and to 0.9 when some
        variable uses the random-effects likelihood (its system means make the geometry
        harder).
    random_seed : int, optional
        Seed (drawn and recorded when omitted): the same seed gives the same draws.
    progress : bool, optional
        Progress bar (default: on for full runs in an interactive session).

    Returns
    -------
    TrueScoreResult
        ``summary()`` indexed by ``(estimand, variable)`` with columns ``classical``,
        ``mean``, ``sd``, ``hdi_low``, ``hdi_high``, ``r_hat``, ``ess_bulk``,
        ``ess_tail``; ``details()`` with ``kind``, ``metriceval`` and ``median``; ``.idata``
        with the posterior of the variance components and of every derived quantity (dim
        ``variable``).

    Notes
    -----
    Runs that are identical (deterministic metrics) make the run variance exactly zero:
    its likelihood is unbounded at zero and the posterior would be improper, so the run
    SD is fixed at 0 and stability is exactly 1. With one run the system x item
    interaction and the run noise are not separable; their sum is reported as
    ``sd_system_item``. Constant variables are left out with a warning and a note. See
    ``models/true_score.md``.

    References
    ----------
    Box, G. E. P. & Tiao, G. C. (1973). *Bayesian Inference in Statistical Analysis*,
    ch. 5-6. Brennan, R. L. (2001). *Generalizability Theory*. Hoyt, C. (1941). Test
    reliability estimated by analysis of variance. *Psychometrika* 6. Xiao et al. (2023),
    *Evaluating Evaluation Metrics*, Sec. 3.1, 4.1.1.

    Examples
    --------
    >>> import bayesmeta as bm  # doctest: +SKIP
    >>> fit = bm.reliability(bm.datasets.summeval(), sampling="fast",
    ...                      random_seed=1)  # doctest: +SKIP
    >>> fit.summary().loc[("consistency", "METEOR"), ["classical", "mean"]]  # doctest: +SKIP
    classical    0.966124
    mean         0.967...

    R equivalent: ``gtheory::gstudy`` / ``lme4::lmer(y ~ (1|system) + (1|item) +
    (1|system:item))`` for the classical components; ``brms`` for the posterior.
    """
    from bayesmeta.sampling import (
        ConvergenceWarning,
        cached_model,
        check_convergence,
        describe_run,
        diagnose,
        sample,
    )

    opts = SamplerOptions.coerce(sampling)
    if not 0 < target < 1:
        raise ValueError(f"target must be in (0, 1), got {target}.")
    ci_prob = check_ci_prob(ci_prob)
    if estimator not in METHODS:
        raise ValueError(f"estimator must be one of {', '.join(map(repr, METHODS))}, "
                         f"got {estimator!r}.")
    seed = resolve_seed(random_seed)
    design = collect(data, metrics=metrics, raters=raters, judgments=judgments,
                     reference=reference)
    Q = len(design.labels)
    S, I = design.y.shape[1], design.y.shape[2]
    if estimator == "full":
        exact_idx, full_idx = np.array([], dtype=int), np.arange(Q)
    else:
        exact_idx, full_idx = np.flatnonzero(design.complete), np.flatnonzero(~design.complete)
    n_pad = bucket(len(exact_idx))
    shape = full_shape(len(full_idx), S, I)
    model = cached_model(("true_score", n_pad, *shape), lambda: build_model(n_pad, *shape))
    anova = anova_table(design)
    dhash = data_hash(data)
    opts = opts.resolve(target_accept=0.9 if len(full_idx) else 0.8)
    positions = np.empty(Q, dtype=int)
    positions[exact_idx] = np.arange(len(exact_idx))
    positions[full_idx] = n_pad + np.arange(len(full_idx))
    # the adaptive length checks what the table reports: the derived estimands on each
    # variable's own scale (items_needed is a rounded-up count: left out of the check)
    checked = [n for n in ESTIMANDS if n != "items_needed"]

    def reported(trace: Any) -> xr.Dataset:
        derived = original_scale(trace.posterior, design, positions, target=target)
        return derived[[n for n in checked if n in derived]]

    idata = sample(model, opts, data=model_data(design, anova, exact_idx, full_idx, n_pad, shape),
                   random_seed=seed, progress=progress, reported=reported,
                   attrs={"model": "true_score", "data_hash": dhash})
    post = original_scale(idata.posterior, design, positions, target=target)
    idata.posterior = post
    names = [n for n in ESTIMANDS if n in post]
    diag = diagnose(post[names])
    table = reliability_table(post, design, anova, data=data, target=target, ci_prob=ci_prob,
                              diagnostics=diag, reference=reference)
    report = check_convergence(idata, [n for n in names if n != "items_needed"],
                               diagnostics=diag, warn=False)
    for message in report.messages:
        warnings.warn(message, ConvergenceWarning, stacklevel=2)
    if design.dropped:
        warnings.warn(f"reliability: left out constant variables {', '.join(design.dropped)} "
                      f"(their reliability is undefined).", UserWarning, stacklevel=2)
    lik = []
    if len(exact_idx):
        lik.append(f"exact ANOVA marginal (Box & Tiao) for {len(exact_idx)} complete")
    if len(full_idx):
        lik.append(f"random effects for {len(full_idx)} "
                   f"{'incomplete' if estimator == 'auto' else ''}".rstrip())
    kinds = np.array(design.kind)
    n_met, n_rat, n_jud = ((kinds == k).sum() for k in ("metric", "rating", "judgment"))
    info = {
        "data": (f"{S} systems x {I} items; {n_met} metric(s)"
                 + (f" x {int(design.n_runs[kinds == 'metric'].max())} run(s)" if n_met else "")
                 + f"; {n_rat} rater x trait rating(s)"
                 + (f"; {n_jud} judgment(s)" if n_jud else "")),
        "model": "true_score: y = mu + system + item + system x item + run noise",
        "likelihood": "; ".join(lik) + " variables",
        "priors": "sd_* ~ HalfNormal(1 x total SD of the variable)",
        "sampler": describe_run(idata),
        "convergence": str(report),
        "classical": "ANOVA (G-theory) plug-in; equals coefficient alpha with one run",
    }
    notes = reliability_notes(design, method=estimator, n_full=len(full_idx),
                              messages=report.messages)
    res = TrueScoreResult(
        table, title="True-score reliability (generalizability model)", info=info,
        idata=idata, extra={"design": design_dataset(design, anova)},
        notes=notes,
        ci_prob=ci_prob, posterior="MCMC posterior", random_seed=seed, data_hash=dhash)
    res.target, res.n_items, res.n_systems = float(target), int(I), int(S)
    return res


__all__ = [
    "BUCKET",
    "COMPONENTS",
    "ESTIMANDS",
    "TrueScoreResult",
    "anova_ss",
    "build_model",
    "g_coefficient",
    "reliability",
    "stability_coefficient",
    "variance_components",
]
