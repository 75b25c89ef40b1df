"""Inter-rater agreement per trait: Krippendorff's alpha (ordinal, interval) and ICC(2,k)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import xarray as xr

from bayesmeta.classical.reliability import _describe
from bayesmeta.data.schema import validate
from bayesmeta.results import Result


def krippendorff_alpha(units: np.ndarray, level: str = "interval") -> float:
    r"""Krippendorff's alpha for a (units x coders) array with NaN for missing.

    .. math:: \alpha = 1 - (n - 1)\frac{\sum_{c,k} o_{ck}\,\delta^2_{ck}}
              {\sum_{c,k} n_c n_k\,\delta^2_{ck}}

    with the coincidence matrix :math:`o_{ck}` over pairable units (two or more values),
    :math:`n_c` its margins, and :math:`\delta^2_{ck} = (c-k)^2` (interval) or
    :math:`\big(\sum_{g=c}^{k} n_g - \tfrac{n_c + n_k}{2}\big)^2` (ordinal), as in
    Krippendorff (2011), *Computing Krippendorff's alpha-reliability*.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmeta.classical.agreement import krippendorff_alpha
    >>> u = np.array([[1, 1], [2, 2], [3, 3], [4, 3.]])
    >>> round(krippendorff_alpha(u, "interval"), 4)
    0.8889
    """
    if level not in ("interval", "ordinal", "nominal"):
        raise ValueError(f"level must be 'interval', 'ordinal' or 'nominal', got {level!r}.")
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


class AgreementResult(Result):
    """Inter-rater agreement per trait (see :func:`agreement`)."""


def agreement(
    data: xr.Dataset,
    *,
    traits: Sequence[str] | None = None,
    raters: Sequence[str] | None = None,
) -> AgreementResult:
    """Inter-rater agreement for each trait: Krippendorff's alpha and ICC(2,k).

    Units are the outputs (system x item); coders are the raters. Krippendorff's alpha
    uses every pairable unit (missing ratings drop out of a unit, not the unit out of the
    data); ICC(2,k) needs complete units, so incomplete ones are left out and counted in
    ``n_incomplete``.

    Returns
    -------
    AgreementResult
        ``summary()`` indexed by (trait, statistic) with ``classical``; statistics are
        ``krippendorff_ordinal``, ``krippendorff_interval`` and ``icc2k``.

    Examples
    --------
    >>> import bayesmeta as bm
    >>> tab = bm.agreement(bm.datasets.simulated()).summary()
    >>> sorted(tab.index.get_level_values("statistic").unique())
    ['icc2k', 'krippendorff_interval', 'krippendorff_ordinal']

    R equivalent: ``irr::kripp.alpha(t(y), "ordinal")``, ``psych::ICC(y)``.
    """
    validate(data, warn_missing=False)
    if "rating" not in data:
        raise ValueError("agreement needs ratings: data has no 'rating' variable.")
    rating = data["rating"]
    if traits is not None:
        rating = rating.sel(trait=list(traits))
    if raters is not None:
        rating = rating.sel(rater=list(raters))
    if rating.sizes["rater"] < 2:
        raise ValueError(f"agreement needs at least 2 raters in dim 'rater', got "
                         f"{rating.sizes['rater']}.")
    rows = []
    for t in rating["trait"].values:
        y = rating.sel(trait=t).stack(unit=("system", "item")).transpose("unit", "rater").values
        complete = ~np.isnan(y).any(axis=1)
        n_inc = int((~complete).sum())
        for stat, val in (
            ("krippendorff_ordinal", krippendorff_alpha(y, "ordinal")),
            ("krippendorff_interval", krippendorff_alpha(y, "interval")),
            ("icc2k", icc2k(y[complete]) if complete.sum() > 1 else np.nan),
        ):
            rows.append((str(t), stat, val, y.shape[0], n_inc if stat == "icc2k" else 0))
    table = pd.DataFrame(rows, columns=["trait", "statistic", "classical", "n_units",
                                        "n_incomplete"]).set_index(["trait", "statistic"])
    notes = []
    if table["n_incomplete"].any():
        notes.append("ICC(2,k) needs complete units; incomplete ones are counted in "
                     "n_incomplete and left out of it only.")
    return AgreementResult(table, title="Inter-rater agreement per trait",
                           info={"data": _describe(data), "raters": rating.sizes["rater"]},
                           notes=notes)
