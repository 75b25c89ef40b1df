"""``bm.compare_agreement``: differences in agreement between traits or between rater panels,
with a paired bootstrap test, their Bayesian-bootstrap posterior and P(A > B) (issue 24).

The outputs are the same for every trait and every panel of one dataset, so the
comparisons are paired: each Bayesian-bootstrap draw weighs the outputs once and every
coefficient in it is computed under those weights; differences of draws are draws of the
difference.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr
from scipy import stats

from bayesmeta.agreement.chance import WEIGHTS, Panel
from bayesmeta.agreement.coefficients import (
    DEFAULT_UNIT,
    _choose,
    agreement_weights,
    resample_draws,
)
from bayesmeta.data.select import describe, ordinal_ratings, require
from bayesmeta.options import ResamplingOptions
from bayesmeta.reliability.classical import _ByEstimand
from bayesmeta.results import data_hash
from bayesmeta.summaries import CI_PROB, check_ci_prob, summarize
from bayesmeta.vocabulary import resampling_options

#: Most groups of the delete-a-group jackknife (one per unit up to this many).
_JACK_GROUPS = 50


def _jackknife_weights(rng: np.random.Generator, S: int, I: int, unit: str
                       ) -> list[tuple[np.ndarray, np.ndarray]]:
    """Delete-a-group jackknife weights of ``unit`` (systems and items for ``"both"``: one
    set each, their variances added): the units in random order split into
    G = min(n, 50) near-equal groups, group g weighing 0 and the others n/(n - |g|)."""
    out = []
    for dim, n in (("systems", S), ("items", I)):
        if unit not in (dim, "both") or n < 2:
            continue
        G = min(n, _JACK_GROUPS)
        group = np.empty(n, dtype=int)
        group[rng.permutation(n)] = np.arange(n) % G
        w = (group[None, :] != np.arange(G)[:, None]).astype(float)
        w *= n / w.sum(1, keepdims=True)
        other = np.ones((G, I if dim == "systems" else S))
        out.append((w, other) if dim == "systems" else (other, w))
    return out


class AgreementComparisonResult(_ByEstimand):
    """Paired differences in agreement (see :func:`compare_agreement`)."""


def compare_agreement(
    data: xr.Dataset,
    *,
    panels: Mapping[str, Sequence[str]] | None = None,
    coefficients: str | Sequence[str] | None = None,
    weights: str = "identity",
    traits: Sequence[str] | None = None,
    ci_prob: float = CI_PROB,
    resampling: ResamplingOptions | Mapping[str, Any] | None = None,
    random_seed: int | None = None,
) -> AgreementComparisonResult:
    r"""Paired differences in agreement between traits, or between rater panels per trait.

    Without ``panels``, every pair of traits (A, B) is compared on the full panel of
    raters; with ``panels`` (name -> raters, e.g. experts against crowd workers, or two
    halves of a panel), every pair of panels is compared within each trait. Each row gives
    the difference :math:`\Delta = \kappa_A - \kappa_B` of one coefficient (any estimand of
    :func:`~bayesmeta.agreement.coefficients.agreement_coefficients`), paired: every
    resample weighs the outputs once and both coefficients are computed under those weights.

    * **Test** (classical): ``classical`` the difference of the estimates,
      ``classical_low``/``classical_high`` :math:`\hat\Delta \pm t_{G-1,(1+p)/2}\,se` and
      in ``details()`` ``p_value`` :math:`= 2\,P(T_{G-1} > |\hat\Delta|/se)`, with ``se``
      the paired delete-a-group jackknife standard error over ``resampling.unit``: the
      units in random order split into :math:`G = \min(n, 50)` groups,
      :math:`\hat\Delta_{(g)}` the difference without group g,
      :math:`se^2 = \frac{G-1}{G}\sum_g(\hat\Delta_{(g)} - \bar\Delta_{(\cdot)})^2`
      (for ``unit="both"`` the systems' and the items' jackknife variances added, G the
      smaller). The interval excludes 0 exactly when ``p_value < 1 - ci_prob``. Why the
      jackknife: the percentile interval of the bootstrap (``bootstrap_low``/
      ``bootstrap_high``, kept for reference, not the test) rejected 6-8.5% at 5% for the
      ICC and Krippendorff's ordinal alpha at 50-200 outputs, and a normal test with the
      bootstrap sd still 5.8-7.4% where that sd was 6-8% too small (50 outputs, or the ICC on
      48 complete ones); the jackknife variance errs upward (Efron & Stein 1981). Type-I
      error at 5% (``benchmarks/agreement_coverage.py``, 1,300 panel pairs per scenario,
      12 coefficients): 1.8-5.5% at 50 outputs, 3.5-4.8% at 200, 2.4-6.1% at 200 with 30%
      missing, 4.2-5.6% on a crossed 10 x 40 panel; no cell significantly above 5%
      (smallest one-sided binomial p 0.046 before correcting for the 48 cells).
    * **Posterior**: ``mean``, ``sd``, ``hdi_low``, ``hdi_high`` of the paired Bayesian
      bootstrap (flat Dirichlet weights of ``resampling.unit``) and ``p_greater`` =
      :math:`P(\kappa_A > \kappa_B)` under it.

    ``resampling.unit`` defaults to ``"items"`` (systems fixed; see
    :func:`~bayesmeta.agreement.coefficients.agreement_coefficients`).

    Parameters
    ----------
    data : xarray.Dataset
        A bayesmeta dataset with ``rating``.
    panels : dict of str to list of str, optional
        Named rater panels (each at least two raters; default: compare traits).
    coefficients : str or list of str, optional
        Estimands compared (default ``gwet_ac``, ``krippendorff_ordinal``,
        ``icc_twoway_agreement_average``).
    weights : str
        Gwet's weights (see :func:`~bayesmeta.agreement.coefficients.agreement_coefficients`).
    traits : list of str, optional
        Traits included (default all).
    ci_prob : float
        Probability of every interval.
    resampling : ResamplingOptions or dict, optional
        Draws (default ``n_resamples=1000``, ``unit="items"``).
    random_seed : int, optional
        Seed of the draws.

    Returns
    -------
    AgreementComparisonResult
        ``summary()`` indexed by ``(estimand, trait, trait2)`` (traits) or
        ``(estimand, trait, group, group2)`` (panels).

    References
    ----------
    Rubin (1981), The Bayesian bootstrap, *Ann. Statist.* 9(1); Gwet (2014), ch. 5; Efron &
    Tibshirani (1993), *An Introduction to the Bootstrap*, ch. 11; Efron & Stein (1981), The
    jackknife estimate of variance, *Ann. Statist.* 9(3).

    Examples
    --------
    >>> import bayesmeta as bm
    >>> res = bm.compare_agreement(bm.datasets.simulated(), coefficients="gwet_ac",
    ...                            traits=["COH", "FLU"], resampling={"n_resamples": 100},
    ...                            random_seed=0)
    >>> res.summary().index.tolist()
    [('gwet_ac', 'COH', 'FLU')]
    >>> bool(0 <= res.details()["p_greater"].iloc[0] <= 1)
    True
    >>> row = res.summary().iloc[0]
    >>> bool((row["classical_low"] > 0 or row["classical_high"] < 0)
    ...      == (res.details()["p_value"].iloc[0] < 0.06))
    True

    R equivalent: none in irrCAC (``irrCAC`` compares coefficients only by their intervals).
    """
    ci_prob = check_ci_prob(ci_prob)
    if weights not in WEIGHTS:
        raise ValueError(f"weights must be one of {', '.join(WEIGHTS)}, got {weights!r}.")
    opts = resampling_options(resampling, n_resamples=1000, unit=DEFAULT_UNIT)
    if opts.n_resamples < 10:
        raise ValueError("compare_agreement needs resampling n_resamples >= 10.")
    rating = ordinal_ratings(data, traits=traits, analysis="agreement")
    groups = {"all": [str(r) for r in rating["rater"].values]} if panels is None else {
        str(k): list(v) for k, v in panels.items()}
    for name, members in groups.items():
        require(len(members), 2, "rater", f"agreement (panel {name!r})")
        missing = [m for m in members if m not in set(map(str, rating["rater"].values))]
        if missing:
            raise ValueError(f"panel {name!r}: rater(s) {missing} not in the data.")
    trait_labels = [str(t) for t in rating["trait"].values]
    if panels is None and len(trait_labels) < 2:
        raise ValueError("comparing traits needs at least 2 traits (or give panels=).")
    if panels is not None and len(groups) < 2:
        raise ValueError("panels= needs at least 2 panels.")
    min_raters = min(len(m) for m in groups.values())
    names = (["gwet_ac", "krippendorff_ordinal", "icc_twoway_agreement_average"]
             if coefficients is None else _choose(coefficients, min_raters))
    seed = int(np.random.SeedSequence().entropy % 2**32) if random_seed is None else random_seed
    rng = np.random.default_rng(seed)
    S, I = rating.sizes["system"], rating.sizes["item"]
    B = opts.n_resamples
    weights_by_kind = [(np.ones((1, S)), np.ones((1, I))),
                       *agreement_weights(rng, B, (S, I), opts.unit)]
    jack = _jackknife_weights(rng, S, I, opts.unit)      # one or two (systems, items) sets
    if not jack:
        raise ValueError(f"resampling unit {opts.unit!r} needs at least 2 {opts.unit} "
                         f"(the data has {S} system(s), {I} item(s)).")
    weights_by_kind += jack
    # draws[(trait, panel)] = [point (1, C), bayes (B, C), boot (B, C)]
    draws: dict[tuple[str, str], list[np.ndarray]] = {}
    for t in trait_labels:
        for g, members in groups.items():
            y = rating.sel(trait=t, rater=members).transpose("system", "item", "rater")
            y = y.values.reshape(S * I, -1)
            panel = Panel(y)
            draws[(t, g)] = [resample_draws(y, panel, names, weights, *w)
                             for w in weights_by_kind]
    if panels is None:
        pairs = [((t1, "all"), (t2, "all"), (t1, t2)) for t1, t2 in combinations(trait_labels, 2)]
        index_names = ["estimand", "trait", "trait2"]
    else:
        pairs = [((t, g1), (t, g2), (t, g1, g2)) for t in trait_labels
                 for g1, g2 in combinations(groups, 2)]
        index_names = ["estimand", "trait", "group", "group2"]
    jack_diffs = [np.stack([draws[A][3 + m] - draws[Bk][3 + m] for A, Bk, _ in pairs], axis=1)
                  for m in range(len(jack))]                         # (G, pairs, C) each
    diffs = np.stack([[draws[A][k] - draws[Bk][k] for k in range(1, 3)]
                      for A, Bk, _ in pairs], axis=2)              # (2, B, pairs, C)
    point = np.stack([draws[A][0][0] - draws[Bk][0][0] for A, Bk, _ in pairs])  # (pairs, C)
    da = xr.DataArray(diffs, dims=("kind", "resample", "pair", "estimand"),
                      coords={"estimand": names})
    bay = summarize(da[0], ci_prob=ci_prob, sample_dims=("resample",))
    boot = summarize(da[1], ci_prob=ci_prob, sample_dims=("resample",), interval="equal_tailed")
    with np.errstate(invalid="ignore"):
        valid = ~np.isnan(diffs[0])
        p_greater = np.where(valid.sum(0) > 0, (diffs[0] > 0).sum(0) / valid.sum(0), np.nan)
        var = 0.0
        for jd in jack_diffs:
            G = jd.shape[0]
            var = var + (G - 1) / G * np.nansum((jd - np.nanmean(jd, axis=0)) ** 2, axis=0)
        se = np.sqrt(var)                                              # (pairs, C)
        z = point / se
    df = min(jd.shape[0] for jd in jack_diffs) - 1
    half = stats.t.ppf(0.5 + ci_prob / 2, df) * se
    p_value = 2 * stats.t.sf(np.abs(z), df)
    rows = []
    for c_i, c in enumerate(names):
        for p_i, (_, _, labels) in enumerate(pairs):
            rows.append({
                **dict(zip(index_names, (c, *labels), strict=True)),
                "classical": point[p_i, c_i],
                "classical_low": point[p_i, c_i] - half[p_i, c_i],
                "classical_high": point[p_i, c_i] + half[p_i, c_i],
                "mean": float(bay["mean"].values[p_i, c_i]),
                "sd": float(bay["sd"].values[p_i, c_i]),
                "hdi_low": float(bay["interval"].values[p_i, c_i, 0]),
                "hdi_high": float(bay["interval"].values[p_i, c_i, 1]),
                "se": float(se[p_i, c_i]),
                "p_value": float(p_value[p_i, c_i]),
                "p_greater": float(p_greater[p_i, c_i]),
                "bootstrap_low": float(boot["interval"].values[p_i, c_i, 0]),
                "bootstrap_high": float(boot["interval"].values[p_i, c_i, 1]),
            })
    frame = pd.DataFrame(rows).set_index(index_names)
    columns = ["classical", "classical_low", "classical_high", "mean", "sd", "hdi_low",
               "hdi_high"]
    return AgreementComparisonResult(
        frame[columns], title="Paired differences in agreement",
        info={"data": describe(data), "weights": weights, "n_resamples": B,
              "panels": {k: list(v) for k, v in groups.items()}, "random_seed": seed},
        notes=[f"Differences A - B; classical interval and p_value: t on {df} df with the "
               f"paired delete-a-group jackknife se ({df + 1} groups of {opts.unit}); "
               f"posterior: {B} paired "
               f"Bayesian-bootstrap draws of {opts.unit}, p_greater = P(A > B); "
               f"bootstrap_*: percentile interval of the resamples (not the test)."],
        details=frame.drop(columns=columns), ci_prob=ci_prob, ci_kind="hdi",
        classical_ci_kind="t with the paired jackknife standard error",
        random_seed=seed, data_hash=data_hash(data))


__all__ = ["AgreementComparisonResult", "compare_agreement"]
