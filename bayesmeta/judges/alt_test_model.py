r"""The Bayesian alt-test: a posterior of each annotator's advantage outcomes.

For a judge :math:`f` and a left-out annotator :math:`j`, every instance :math:`i` gives one
of three outcomes of the alt-test's comparison: the judge aligns strictly better with the
other annotators (*win*, :math:`W^f_i = 1, W^h_i = 0`), as well (*tie*, both 1), or strictly
worse (*loss*, :math:`W^f_i = 0, W^h_i = 1`). Let :math:`\theta_j = (\theta_{j,win},
\theta_{j,tie}, \theta_{j,loss})` be their probabilities over the population of instances;
the alt-test's quantities are functions of them:

.. math:: \rho^f_j = \theta_{j,win} + \theta_{j,tie},\quad
          \rho^h_j = \theta_{j,loss} + \theta_{j,tie},\quad
          \delta_j = \rho^h_j - \rho^f_j = \theta_{j,loss} - \theta_{j,win},

the judge beats annotator :math:`j` by :math:`\varepsilon` when :math:`\delta_j <
\varepsilon` (the alternative hypothesis of the classical test), the latent winning rate is
:math:`\omega = \frac1m\sum_j 1[\delta_j < \varepsilon]` and the advantage probability is
:math:`\rho = \frac1m\sum_j\rho^f_j`.

**Model** (a hierarchical Dirichlet process, sampled exactly). The instances (or, with
``group``, the texts they belong to) are the sampling units. Their joint law of outcomes
(all annotators, all judges) has a Dirichlet-process prior with mass :math:`\alpha_0 = 1` on
a base law uniform over win, tie and loss (Ferguson 1973), whose posterior puts
Dirichlet(1, ..., 1) weights :math:`w` on the observed units (the Bayesian bootstrap, Rubin
1981, is its :math:`\alpha_0 \to 0` limit) and the weight :math:`V_{0j} \sim
\mathrm{Beta}(\alpha_0, N_j)` on the base law; the prior mass keeps a judge that won on
every one of 30 instances from being certain to win always. The weights are **shared** by
all annotators and all judges, so the posterior keeps the dependence between annotators
compared on the same instances, between the instances of one text, and between two judges
(:math:`P(\rho_A > \rho_B)` is paired). On top, each annotator's outcome law is pooled
towards the panel's: a Dirichlet-process prior with base law :math:`\mu` (the panel's
pooled outcome law) and concentration :math:`\kappa` gives the posterior draw

.. math:: \theta_j = V_j P_j + (1 - V_j)\,\hat\theta_j(w),\quad
          V_j \sim \mathrm{Beta}(\kappa, N_j),\ P_j \sim \mathrm{Dirichlet}(\kappa\mu_w),
          \quad \hat\theta_j(w) = V_{0j} P_{0j} + (1 - V_{0j})
          \frac{\sum_u w_u c_{uj}}{\sum_u w_u n_{uj}},

with :math:`c_{uj}` the outcome counts and :math:`n_{uj}` the instances of unit :math:`u`
for annotator :math:`j`, :math:`N_j` its units, :math:`P_{0j} \sim
\mathrm{Dirichlet}(\alpha_0/3, \alpha_0/3, \alpha_0/3)` and :math:`\mu_w` the pooled outcome shares
under the same weights (so :math:`\mu`'s uncertainty is the Bayesian bootstrap's). With
texts as units the pooling counts :math:`N_j/\mathrm{deff}_j` effective instances
(:func:`design_effect`), so the prior's weight and the data's are on one scale.
:math:`\kappa` (how alike the annotators are) has a grid posterior: the proper prior
:math:`p(\kappa) = (1+\kappa)^{-2}` times the Dirichlet-multinomial likelihood of the
annotators' outcome counts around the pooled shares. Annotators who look alike (large
:math:`\kappa`) borrow strength; a heterogeneous panel (small :math:`\kappa`) leaves each
annotator's Bayesian bootstrap as it is. Every draw is independent: no Markov chain, no
R-hat.

**Decision.** The Bayesian counterpart of the Benjamini-Yekutieli step is the Bayesian
false-discovery rule (Newton et al. 2004; Müller, Parmigiani & Rice 2006): declare beaten
the largest set of annotators, taken in decreasing order of :math:`P(\delta_j < \varepsilon
\mid y)`, whose mean posterior probability of a false declaration is at most :math:`q`. The
Bayesian winning rate is the share declared beaten; the judge passes when it is at least
0.5. In the large-sample limit :math:`P(\delta_j < \varepsilon\mid y) \to 1[\delta_j <
\varepsilon]` and the classical p-values tend to 0 or 1 on the same annotators, so both
decisions agree (tested in ``tests/test_judges_bayes.py``).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import xarray as xr
from scipy import special

__all__ = ["bayes_fdr", "design_effect", "difference_rows", "epsilon_curve", "group_units",
           "kappa_posterior", "outcome_codes", "theta_draws"]

#: The Dirichlet process's prior mass alpha_0 on its base law (uniform over win, tie, loss):
#: one prior unit, so that a judge that won on every instance is not certain to always win.
PRIOR_MASS = 1.0
#: The grid of the pooling concentration kappa.
KAPPA_GRID = np.exp(np.linspace(np.log(0.1), np.log(1e4), 41))
WIN, TIE, LOSS = 0, 1, 2


def outcome_codes(wf: np.ndarray, wh: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Per (instance, annotator): 0 win, 1 tie, 2 loss of the judge; -1 where not compared."""
    code = np.where(wf.astype(bool) & ~wh.astype(bool), WIN,
                    np.where(wf.astype(bool) & wh.astype(bool), TIE, LOSS))
    return np.where(valid, code, -1)


def group_units(items: Sequence[str],
                group: Mapping[str, Any] | Callable[[str], Any] | str | None
                ) -> tuple[np.ndarray, list[Any]]:
    """The sampling unit of each instance: itself, or its text (``group``).

    ``group`` is a mapping instance -> text, a callable on the instance label, or a
    separator string: the text is the part of the label before its last occurrence (e.g.
    ``"__"``: ``"article7__economic"`` -> ``"article7"``).
    """
    items = [str(i) for i in items]
    if group is None:
        return np.arange(len(items)), items
    if isinstance(group, str):
        if group == "":
            raise ValueError("group must be a non-empty separator, a mapping or a callable.")
        no_sep = [i for i in items if group not in i]
        if no_sep:
            raise ValueError(f"group={group!r}: instance(s) {no_sep[:3]} hold no {group!r} "
                             f"({len(no_sep)} in all); the text is the part before the last "
                             f"separator.")
        labels = [i.rsplit(group, 1)[0] for i in items]
    elif isinstance(group, Mapping):
        missing = [i for i in items if i not in group]
        if missing:
            raise ValueError(f"group: no text for instance(s) {missing[:3]} "
                             f"({len(missing)} in all).")
        labels = [group[i] for i in items]
    elif callable(group):
        labels = [group(i) for i in items]
    else:
        raise TypeError(f"group must be a separator string, a mapping instance -> text or a "
                        f"callable, got {type(group).__name__}.")
    uniq = list(dict.fromkeys(labels))
    pos = {g: k for k, g in enumerate(uniq)}
    return np.array([pos[g] for g in labels]), uniq


def kappa_posterior(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""Grid posterior of the pooling concentration :math:`\kappa`.

    ``counts``: (m, 3) outcome counts per annotator. With :math:`\hat\mu` the pooled
    outcome shares, the log weight of a grid point is :math:`\log p(\kappa) + \log\kappa
    + \sum_j \log\mathrm{DirMult}(n_j\mid\kappa\hat\mu)` (the :math:`\log\kappa` is the
    Jacobian of the log-spaced grid). Returns the grid and its normalised weights.
    """
    n = np.asarray(counts, dtype=float)                                # (m, 3)
    mu = (n.sum(axis=0) + 0.5) / (n.sum() + 1.5)
    kappa = KAPPA_GRID
    alpha = kappa[:, None] * mu[None, :]                               # (G, 3)
    tot = n.sum(axis=1)
    ll = (special.gammaln(kappa)[:, None] - special.gammaln(kappa[:, None] + tot[None, :])
          ).sum(axis=1)
    ll += (special.gammaln(alpha[:, None, :] + n[None, :, :])
           - special.gammaln(alpha)[:, None, :]).sum(axis=(1, 2))
    logw = ll - 2.0 * np.log1p(kappa) + np.log(kappa)
    w = np.exp(logw - logw.max())
    return kappa, w / w.sum()


def design_effect(emp: np.ndarray, counts: np.ndarray) -> np.ndarray:
    r"""Each annotator's design effect of texts as units (Kish 1965; Rao & Scott 1981).

    The mean over the outcomes of the Bayesian-bootstrap variance of the outcome share
    (``emp`` (S, m, 3), units as texts) over its variance were the instances independent,
    :math:`\hat\theta(1-\hat\theta)/N_j`; at least 1. The pooling then counts
    :math:`N_j / \mathrm{deff}_j` effective instances.
    """
    n = counts.sum(axis=1)
    share = counts / np.maximum(n, 1)[:, None]
    iid = share * (1 - share) / np.maximum(n, 1)[:, None]
    var = np.nanvar(emp, axis=0, ddof=1)
    ok = iid > 0
    ratio = np.where(ok, var / np.where(ok, iid, 1.0), np.nan)
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        deff = np.nanmean(ratio, axis=1)
    return np.maximum(np.nan_to_num(deff, nan=1.0), 1.0)


def theta_draws(codes: np.ndarray, units: np.ndarray, weights: np.ndarray,
                rng: np.random.Generator, *, prior_u: np.ndarray | None = None,
                pooled: bool = True) -> np.ndarray:
    r"""Posterior draws of :math:`\theta_j` (win, tie, loss) for every annotator.

    ``codes`` (n, m) from :func:`outcome_codes`; ``units`` (n,) the unit of each instance;
    ``weights`` (S, U) the shared Dirichlet weights of the units; ``prior_u`` (S,) shared
    uniforms that set the weight :math:`V_{0j} \sim \mathrm{Beta}(\alpha_0, N_j)` of the
    Dirichlet process's base law (:data:`PRIOR_MASS`; None: the plain Bayesian bootstrap).
    Returns (S, m, 3). ``pooled=False`` leaves out the pooling across annotators.
    """
    n_units = weights.shape[1]
    s, m = weights.shape[0], codes.shape[1]
    per_unit = np.zeros((n_units, m, 3))
    for k in (WIN, TIE, LOSS):
        np.add.at(per_unit[:, :, k], units, (codes == k).astype(float))
    size = per_unit.sum(axis=2)                                        # (U, m)
    num = np.einsum("su,umk->smk", weights, per_unit)
    den = weights @ size                                               # (S, m)
    with np.errstate(invalid="ignore", divide="ignore"):
        boot = num / den[:, :, None]
    emp = boot
    n_j = (size > 0).sum(axis=0).astype(float)                         # units per annotator
    if prior_u is not None:
        v0 = special.betaincinv(PRIOR_MASS, n_j[None, :], np.asarray(prior_u)[:, None])
        emp = v0[:, :, None] * _dirichlet(rng, np.full((s, m, 3), PRIOR_MASS / 3)) + (
            1.0 - v0[:, :, None]) * boot
    if not pooled:
        return emp
    mu_s = (emp * den[:, :, None]).sum(axis=1) / den.sum(axis=1)[:, None]  # (S, 3) panel's
    mu_s = np.clip(mu_s, 1e-6, None)
    mu_s /= mu_s.sum(axis=1, keepdims=True)
    counts = per_unit.sum(axis=0)                                      # (m, 3)
    n_inst = counts.sum(axis=1)
    deff = design_effect(boot, counts) if n_units < codes.shape[0] else np.ones(m)
    kappa, w = kappa_posterior(counts / deff[:, None])
    k_s = kappa[rng.choice(w.size, size=s, p=w)]                       # (S,)
    v = rng.beta(np.broadcast_to(k_s[:, None], (s, m)),
                 np.broadcast_to((n_inst / deff)[None, :], (s, m)))
    p = _dirichlet(rng, np.broadcast_to((k_s[:, None] * mu_s)[:, None, :], (s, m, 3)))
    return v[:, :, None] * p + (1.0 - v[:, :, None]) * emp


def _dirichlet(rng: np.random.Generator, alpha: np.ndarray) -> np.ndarray:
    """Dirichlet draws along the last axis (gamma normalised; an all-zero draw of tiny
    shapes falls back to the normalised shapes)."""
    g = rng.standard_gamma(alpha)
    tot = g.sum(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(tot > 0, g / tot, alpha / alpha.sum(axis=-1, keepdims=True))


def bayes_fdr(prob: np.ndarray, q: float) -> np.ndarray:
    r"""Bayesian false-discovery selection along the last axis.

    Take the annotators in decreasing order of :math:`P_j = P(\delta_j < \varepsilon\mid
    y)`; select the largest :math:`k` with :math:`\frac1k\sum_{l\le k}(1 - P_{(l)}) \le q`
    (Newton et al. 2004, Biostatistics 5(2); Müller, Parmigiani & Rice 2006).

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmeta.judges.alt_test_model import bayes_fdr
    >>> bayes_fdr(np.array([0.99, 0.5, 0.97]), 0.05).tolist()
    [True, False, True]
    """
    p = np.asarray(prob, dtype=float)
    order = np.argsort(-p, axis=-1, kind="stable")
    srt = np.take_along_axis(p, order, axis=-1)
    m = p.shape[-1]
    fdr = np.cumsum(1.0 - srt, axis=-1) / np.arange(1, m + 1)
    k = np.where(fdr <= q + 1e-12, np.arange(1, m + 1), 0).max(axis=-1, keepdims=True)
    sel_sorted = np.arange(1, m + 1) <= k
    out = np.zeros(p.shape, dtype=bool)
    np.put_along_axis(out, order, sel_sorted, axis=-1)
    return out


def difference_rows(kept: dict[str, dict[str, Any]], ci_prob: float) -> list[dict[str, Any]]:
    """``advantage_difference`` rows: rho of each judge minus rho of each later judge; the
    bootstrap and the posterior draws of the judges share their unit weights (paired)."""
    from bayesmeta.summaries import equal_tailed, hdi

    rows = []
    names = list(kept)
    for a_i, a in enumerate(names):
        for b in names[a_i + 1:]:
            boot = kept[a]["boot_rho"] - kept[b]["boot_rho"]
            post = kept[a]["rho"] - kept[b]["rho"]
            lo, hi = equal_tailed(boot, ci_prob)
            h_lo, h_hi = hdi(post, ci_prob, axis=(0,))
            rows.append({"estimand": "advantage_difference", "rater": a, "rater2": b,
                         "classical": kept[a]["point"] - kept[b]["point"],
                         "classical_low": lo, "classical_high": hi, "mean": float(post.mean()),
                         "sd": float(post.std(ddof=1)), "hdi_low": h_lo, "hdi_high": h_hi,
                         "prob_greater": float((post > 0).mean())})
    return rows


def epsilon_curve(kept: dict[str, dict[str, Any]], epsilon: float, q: float,
                  grid: np.ndarray, *, p_values: Callable[[dict[str, Any], float], np.ndarray],
                  adjust: Callable[[np.ndarray, float], np.ndarray]) -> xr.Dataset:
    """The decision against epsilon, per judge: ``prob_pass``, the Bayesian winning rate
    (the same draws at every margin: the posterior does not depend on epsilon) and the
    classical one (``p_values(judge, eps)`` re-tested, ``adjust`` = Benjamini-Yekutieli)."""
    grid = np.unique(np.append(grid, float(epsilon)))
    out: dict[str, list[np.ndarray]] = {k: [] for k in (
        "prob_pass", "winning_rate_bayes", "winning_rate_classical")}
    for k in kept.values():
        beats = k["delta"][None, :, :] < grid[:, None, None]            # (E, S, m)
        out["prob_pass"].append((beats.mean(axis=2) >= 0.5).mean(axis=1))
        out["winning_rate_bayes"].append(bayes_fdr(beats.mean(axis=1), q).mean(axis=1))
        p = np.array([p_values(k, float(eps)) for eps in grid])
        out["winning_rate_classical"].append(adjust(p, q).mean(axis=1))
    ds = xr.Dataset({name: (("rater", "epsilon"), np.array(v)) for name, v in out.items()},
                    coords={"rater": list(kept), "epsilon": grid})
    ds["passes_bayes"] = ds["winning_rate_bayes"] >= 0.5
    ds["passes_classical"] = ds["winning_rate_classical"] >= 0.5
    return ds
