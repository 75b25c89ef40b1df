"""Inter-rater agreement per trait: Krippendorff's alpha (ordinal, interval) and ICC(2,k).

Ratings come through :func:`bayesmeta.data.select.ordinal_ratings`; :func:`agreement`
reports in the one table shape of :mod:`bayesmeta.summaries` (index ``(estimand, trait)``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import xarray as xr

from bayesmeta.data.select import describe, ordinal_ratings, require
from bayesmeta.reliability.classical import _ByEstimand
from bayesmeta.results import data_hash


def krippendorff_alpha(units: np.ndarray, level: str = "interval") -> float:
    r"""Krippendorff's alpha for a (units x coders) array with NaN for missing.

    .. math:: \alpha = 1 - (n - 1)\frac{\sum_{c,k} o_{ck}\,\delta^2_{ck}}
              {\sum_{c,k} n_c n_k\,\delta^2_{ck}}

    with the coincidence matrix :math:`o_{ck}` over pairable units (two or more values),
    :math:`n_c` its margins, and :math:`\delta^2_{ck} = (c-k)^2` (interval) or
    :math:`\big(\sum_{g=c}^{k} n_g - \tfrac{n_c + n_k}{2}\big)^2` (ordinal),
    :math:`[c \ne k]` (nominal) or :math:`((c-k)/(c+k))^2` (ratio), as in
    Krippendorff (2011), *Computing Krippendorff's alpha-reliability*.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmeta.agreement.classical import krippendorff_alpha
    >>> u = np.array([[1, 1], [2, 2], [3, 3], [4, 3.]])
    >>> round(krippendorff_alpha(u, "interval"), 4)
    0.8889
    """
    if level not in ("interval", "ordinal", "nominal", "ratio"):
        raise ValueError(f"level must be 'nominal', 'ordinal', 'interval' or 'ratio', got "
                         f"{level!r}.")
    x = np.asarray(units, dtype=float)
    m_u = (~np.isnan(x)).sum(axis=1)
    x = x[m_u >= 2]
    m_u = m_u[m_u >= 2]
    values = np.unique(x[~np.isnan(x)])
    if values.size < 2:
        return float("nan")
    idx = np.searchsorted(values, np.where(np.isnan(x), values[0], x))
    V = values.size
    counts = np.zeros((x.shape[0], V))
    rows = np.repeat(np.arange(x.shape[0]), x.shape[1])
    ok = ~np.isnan(x).ravel()
    np.add.at(counts, (rows[ok], idx.ravel()[ok]), 1.0)
    # coincidences: o_ck = sum_u (n_uc n_uk - [c==k] n_uc) / (m_u - 1)
    w = 1.0 / (m_u - 1)
    o = np.einsum("u,uc,uk->ck", w, counts, counts) - np.diag((counts * w[:, None]).sum(0))
    n_c = o.sum(axis=1)
    n = n_c.sum()
    if level == "interval":
        d2 = (values[:, None] - values[None, :]) ** 2
    elif level == "nominal":
        d2 = 1.0 - np.eye(V)
    elif level == "ratio":
        with np.errstate(divide="ignore", invalid="ignore"):
            s = values[:, None] + values[None, :]
            d2 = np.where(s == 0, 0.0, ((values[:, None] - values[None, :]) / s) ** 2)
    else:
        cum = np.cumsum(n_c)
        lo = np.minimum.outer(np.arange(V), np.arange(V))
        hi = np.maximum.outer(np.arange(V), np.arange(V))
        between = cum[hi] - np.where(lo > 0, cum[np.maximum(lo - 1, 0)], 0.0)
        d2 = (between - (n_c[:, None] + n_c[None, :]) / 2) ** 2
    d_o = (o * d2).sum()
    d_e = (np.outer(n_c, n_c) * d2).sum()
    return float(1 - (n - 1) * d_o / d_e) if d_e > 0 else float("nan")


def icc2k(y: np.ndarray) -> float:
    r"""ICC(2,k): two-way random effects, absolute agreement, mean of k raters
    (Shrout & Fleiss, 1979), for a complete (targets x raters) array.

    .. math:: \mathrm{ICC}(2,k) = \frac{MS_R - MS_E}{MS_R + (MS_C - MS_E)/n}

    R equivalent: ``psych::ICC(y)$results["Average_random_raters", "ICC"]``.
    """
    y = np.asarray(y, dtype=float)
    n, k = y.shape
    grand = y.mean()
    ss_r = k * ((y.mean(1) - grand) ** 2).sum()
    ss_c = n * ((y.mean(0) - grand) ** 2).sum()
    ss_e = ((y - grand) ** 2).sum() - ss_r - ss_c
    ms_r, ms_c, ms_e = ss_r / (n - 1), ss_c / (k - 1), ss_e / ((n - 1) * (k - 1))
    return float((ms_r - ms_e) / (ms_r + (ms_c - ms_e) / n))


class AgreementResult(_ByEstimand):
    """Inter-rater agreement per trait (see :func:`agreement`)."""


STATISTICS = ("krippendorff_ordinal", "krippendorff_interval", "icc2k")


def agreement(
    data: xr.Dataset,
    *,
    traits: Sequence[str] | None = None,
    raters: Sequence[str] | None = None,
) -> AgreementResult:
    """Inter-rater agreement for each trait: Krippendorff's alpha and ICC(2,k).

    Units are the outputs (system x item); coders are the raters. Krippendorff's alpha
    (:func:`krippendorff_alpha`, ordinal and interval distances) uses every pairable unit
    (missing ratings drop out of a unit, not the unit out of the data); ICC(2,k)
    (:func:`icc2k`) needs complete units, so incomplete ones are left out of it and counted
    in ``n_incomplete``. Needs ordinal ratings by rater (``rating``); continuous judgments
    have no raters and are refused with the reason.

    Parameters
    ----------
    data : xarray.Dataset
        A bayesmeta dataset with ``rating``.
    traits : list of str, optional
        Traits to include (default every trait with ratings).
    raters : list of str, optional
        Raters to include (default all; at least two).

    Returns
    -------
    AgreementResult
        ``summary()`` indexed by ``(estimand, trait)`` with column ``classical``; the
        estimands are the statistics ``krippendorff_ordinal``, ``krippendorff_interval``
        and ``icc2k``. ``details()``: ``n_units`` (outputs) and ``n_incomplete`` (units
        left out of ICC(2,k); 0 for Krippendorff's alpha).

    References
    ----------
    Krippendorff (2011), *Computing Krippendorff's alpha-reliability*; Shrout & Fleiss
    (1979), Intraclass correlations. *Psychological Bulletin* 86(2).

    Examples
    --------
    >>> import bayesmeta as bm
    >>> res = bm.agreement(bm.datasets.simulated())
    >>> tab = res.summary()
    >>> list(tab.index.get_level_values("estimand").unique())
    ['krippendorff_ordinal', 'krippendorff_interval', 'icc2k']
    >>> int(res.details().loc[("icc2k", "COH"), "n_units"])
    1700

    R equivalent: ``irr::kripp.alpha(t(y), "ordinal")``, ``psych::ICC(y)``.
    """
    rating = ordinal_ratings(data, traits=traits, raters=raters, analysis="agreement")
    require(rating.sizes["rater"], 2, "rater", "agreement")
    values: dict[str, list[float]] = {s: [] for s in STATISTICS}
    n_units, n_incomplete = [], []
    trait_labels = [str(t) for t in rating["trait"].values]
    for t in rating["trait"].values:
        y = rating.sel(trait=t).stack(unit=("system", "item")).transpose("unit", "rater").values
        complete = ~np.isnan(y).any(axis=1)
        values["krippendorff_ordinal"].append(krippendorff_alpha(y, "ordinal"))
        values["krippendorff_interval"].append(krippendorff_alpha(y, "interval"))
        values["icc2k"].append(icc2k(y[complete]) if complete.sum() > 1 else np.nan)
        n_units.append(y.shape[0])
        n_incomplete.append(int((~complete).sum()))
    index = pd.MultiIndex.from_product([list(STATISTICS), trait_labels],
                                       names=["estimand", "trait"])
    table = pd.DataFrame({"classical": np.concatenate([values[s] for s in STATISTICS])},
                         index=index)
    zeros = [0] * len(trait_labels)
    details = pd.DataFrame({"n_units": n_units * len(STATISTICS),
                            "n_incomplete": zeros + zeros + n_incomplete}, index=index)
    notes = []
    if any(n_incomplete):
        notes.append("ICC(2,k) needs complete units; incomplete ones are counted in "
                     "n_incomplete (details) and left out of it only.")
    return AgreementResult(table, title="Inter-rater agreement per trait",
                           info={"data": describe(data), "raters": rating.sizes["rater"]},
                           notes=notes, details=details, data_hash=data_hash(data))


__all__ = ["AgreementResult", "agreement", "icc2k", "krippendorff_alpha"]
