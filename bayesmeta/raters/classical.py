r"""Classical twins of the many-facet rater model's quantities, from the ratings alone.

NumPy and SciPy only: the rater model (:mod:`bayesmeta.raters.model`) puts these beside its
posterior in the ``classical`` column.

* ``marginal_threshold(rater, trait, cut)``: :math:`\Phi^{-1}` of the cumulative proportion
  of a rater's ratings at or below each category (lavaan's thresholds; NaN where a
  proportion is 0 or 1, i.e. an unbounded threshold);
* ``reliability_system(trait)``: coefficient alpha of the system x item matrix of
  rater-mean ratings (systems as examinees, items as test items);
* ``icc_output(trait)``: coefficient alpha across raters with outputs as examinees, i.e.
  ICC(3,k), the consistency of the mean of k raters (Shrout & Fleiss, 1979).

References
----------
Shrout, P. E., & Fleiss, J. L. (1979). Intraclass correlations: uses in assessing rater
reliability. *Psychological Bulletin*, 86(2), 420-428.
Cronbach, L. J. (1951). Coefficient alpha and the internal structure of tests.
*Psychometrika*, 16, 297-334.
"""

from __future__ import annotations

import warnings

import numpy as np
import xarray as xr
from scipy import special

from bayesmeta.reliability.classical import cronbach_alpha

__all__ = ["classical_counterparts", "cut_labels"]

RATING_DIMS = ("trait", "system", "item", "rater")


def cut_labels(n_categories: int, scale_min: int = 1) -> list[str]:
    """Cut-point labels ``"1->2"``, ..., ``"4->5"`` (style.md rule 5).

    Examples
    --------
    >>> from bayesmeta.raters.classical import cut_labels
    >>> cut_labels(3, scale_min=0)
    ['0->1', '1->2']
    """
    return [f"{k}->{k + 1}" for k in range(scale_min, scale_min + n_categories - 1)]


def classical_counterparts(rating: xr.DataArray, *, scale_min: int, n_categories: int
                           ) -> dict[str, xr.DataArray]:
    r"""Probit of cumulative proportions per rater, alpha of system means, ICC(3,k).

    Parameters
    ----------
    rating : xarray.DataArray
        Ordinal ratings with dims ``(trait, system, item, rater)``, NaN for missing, on
        ``scale_min .. scale_min + n_categories - 1``.
    scale_min, n_categories : int
        The lowest category and the number of categories of the declared scale.

    Returns
    -------
    dict of str -> xarray.DataArray
        ``marginal_threshold`` (dims ``rater, trait, cut``), ``reliability_system`` and
        ``icc_output`` (dim ``trait``).

    Notes
    -----
    With :math:`n_{rt}` observed ratings of rater :math:`r` on trait :math:`t`, the marginal
    threshold at cut :math:`k` is :math:`\Phi^{-1}(\#\{y \le k\} / n_{rt})`. Alpha is
    :func:`bayesmeta.reliability.classical.cronbach_alpha` (pairwise-complete covariances);
    alpha across raters with outputs as subjects equals ICC(3,k) from the two-way ANOVA mean
    squares, :math:`(MS_R - MS_E)/MS_R`, on complete data.

    Examples
    --------
    >>> import bayesmeta as bm
    >>> from bayesmeta.raters.classical import classical_counterparts
    >>> ds = bm.datasets.simulated(n_systems=4, n_items=10, random_seed=1)
    >>> r = ds["rating"].transpose("trait", "system", "item", "rater")
    >>> cl = classical_counterparts(r, scale_min=1, n_categories=5)
    >>> cl["marginal_threshold"].dims
    ('rater', 'trait', 'cut')

    R equivalent: ``qnorm(cumsum(table(y)) / length(y))`` per rater;
    ``psych::alpha(system_by_item)``; ``psych::ICC(outputs_by_rater)`` (ICC3k).
    """
    if tuple(rating.dims) != RATING_DIMS:
        raise ValueError(f"rating must have dims {RATING_DIMS}, got {tuple(rating.dims)}.")
    y = np.asarray(rating.values, dtype=float)  # (T, S, I, R)
    cats = scale_min + np.arange(n_categories - 1)
    n = (~np.isnan(y)).sum(axis=(1, 2))  # (T, R)
    with np.errstate(divide="ignore", invalid="ignore"):
        cum = np.stack([(y <= c).sum(axis=(1, 2)) for c in cats], axis=-1) / n[..., None]
        marg = special.ndtri(cum)
    marg = np.where(np.isfinite(marg), marg, np.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all raters missing on an output
        rater_mean = np.nanmean(y, axis=-1)  # (T, S, I)
    rel = cronbach_alpha(rater_mean)
    flat = y.reshape(y.shape[0], -1, y.shape[-1])  # (T, S*I, R)
    icc = cronbach_alpha(flat)
    traits = rating["trait"].values
    return {
        "marginal_threshold": xr.DataArray(
            np.transpose(marg, (1, 0, 2)), dims=("rater", "trait", "cut"),
            coords={"rater": rating["rater"].values, "trait": traits,
                    "cut": cut_labels(n_categories, scale_min)}),
        "reliability_system": xr.DataArray(rel, dims="trait", coords={"trait": traits}),
        "icc_output": xr.DataArray(icc, dims="trait", coords={"trait": traits}),
    }
