r"""The intraclass correlation in all of McGraw & Wong's (1996) forms, with F-based intervals.

For a complete (targets x raters) array, the two-way ANOVA mean squares :math:`MS_R`
(targets), :math:`MS_C` (raters), :math:`MS_E` (residual) and the one-way
:math:`MS_W` (within targets) give

* ``icc_oneway_single``: :math:`(MS_R - MS_W)/(MS_R + (k-1)MS_W)` (McGraw-Wong ICC(1),
  Shrout-Fleiss ICC1);
* ``icc_oneway_average``: :math:`(MS_R - MS_W)/MS_R` (ICC(k), ICC1k);
* ``icc_twoway_agreement_single``: :math:`(MS_R - MS_E)/(MS_R + (k-1)MS_E +
  k(MS_C - MS_E)/n)` (ICC(A,1), ICC2);
* ``icc_twoway_agreement_average``: :math:`(MS_R - MS_E)/(MS_R + (MS_C - MS_E)/n)`
  (ICC(A,k), ICC2k);
* ``icc_twoway_consistency_single``: :math:`(MS_R - MS_E)/(MS_R + (k-1)MS_E)`
  (ICC(C,1), ICC3);
* ``icc_twoway_consistency_average``: :math:`(MS_R - MS_E)/MS_R` (ICC(C,k), ICC3k).

The two-way forms are the same numbers whether the raters are random (a sample of raters)
or fixed (mixed model); only their reading differs (McGraw & Wong 1996, Table 4), so a
form's name says one-way/two-way, agreement/consistency and single/average, and
``details()`` gives both the McGraw-Wong and the Shrout-Fleiss name. The intervals are the
F-based ones of McGraw & Wong (1996) as ``psych::ICC`` and pingouin compute them
(Satterthwaite degrees of freedom for the agreement forms).

References
----------
McGraw, K. O. & Wong, S. P. (1996). Forming inferences about some intraclass correlation
coefficients. *Psychological Methods* 1(1), 30-46. Shrout, P. E. & Fleiss, J. L. (1979).
*Psychological Bulletin* 86(2), 420-428.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

#: Form name -> (McGraw-Wong name, Shrout-Fleiss name).
ICC_FORMS = {
    "icc_oneway_single": ("ICC(1)", "ICC1"),
    "icc_oneway_average": ("ICC(k)", "ICC1k"),
    "icc_twoway_agreement_single": ("ICC(A,1)", "ICC2"),
    "icc_twoway_agreement_average": ("ICC(A,k)", "ICC2k"),
    "icc_twoway_consistency_single": ("ICC(C,1)", "ICC3"),
    "icc_twoway_consistency_average": ("ICC(C,k)", "ICC3k"),
}


def _ms_from_sums(N, row_sum, rowmean_sq, col_sum, sq_sum, n, k: int) -> dict[str, np.ndarray]:
    """MS_R, MS_C, MS_E, MS_W from weighted sums over units (total weight N, shape (B,)):
    of the row sums, of the squared row means, of the columns (B, k) and of the squares."""
    grand = row_sum / (N * k)
    ss_r = k * (rowmean_sq - N * grand**2)
    col = col_sum / N[:, None]
    ss_c = N * ((col - grand[:, None]) ** 2).sum(1)
    ss_t = sq_sum - N * k * grand**2
    ss_e = ss_t - ss_r - ss_c
    return {"ms_r": ss_r / (n - 1), "ms_c": ss_c / (k - 1),
            "ms_e": ss_e / ((n - 1) * (k - 1)), "ms_w": (ss_t - ss_r) / (n * (k - 1)),
            "n": n, "k": k}


def mean_squares(y: np.ndarray, unit_weights: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """MS_R, MS_C, MS_E, MS_W of a complete (n, k) array, each of shape (B,) for unit
    weights (B, n) (a bootstrap's counts or a Bayesian bootstrap's n Dir(1) draws; the
    weights of a row sum to n), default one row of ones."""
    y = np.asarray(y, dtype=float)
    n, k = y.shape
    u = np.ones((1, n)) if unit_weights is None else np.asarray(unit_weights, dtype=float)
    return _ms_from_sums(u.sum(1), u @ y.sum(1), u @ y.mean(1) ** 2, u @ y,
                         u @ (y**2).sum(1), n, k)


def jackknife_se(y: np.ndarray) -> dict[str, float]:
    r"""Jackknife standard error of every ICC form of a complete (n, k) array.

    Leaving unit i out gives :math:`\hat\theta_{(i)}`, the form on the other n - 1 units,
    and :math:`\widehat{se}^2 = \frac{n-1}{n}\sum_i(\hat\theta_{(i)} - \bar\theta_{(\cdot)})^2`
    (Efron & Tibshirani 1993, ch. 11). Unlike the F-based intervals it assumes no normal
    ratings; the n leave-one-out sums are formed in O(nk) without an (n, n) array.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmeta.agreement.icc import jackknife_se
    >>> y = np.array([[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6],
    ...               [10, 5, 6, 9], [6, 2, 4, 7.]])
    >>> bool(jackknife_se(y)["icc_twoway_agreement_single"] > 0)
    True

    R equivalent: none in ``psych``/``irr``; ``bootstrap::jackknife(1:n, theta, y)``.
    """
    y = np.asarray(y, dtype=float)
    n, k = y.shape
    rs, rm2, sq = y.sum(1), y.mean(1) ** 2, (y**2).sum(1)
    m = np.full(n, n - 1)
    ms = _ms_from_sums(m.astype(float), rs.sum() - rs, rm2.sum() - rm2,
                       y.sum(0)[None, :] - y, sq.sum() - sq, m, k)
    with np.errstate(divide="ignore", invalid="ignore"):
        loo = icc_values(ms)
    return {f: float(np.sqrt((n - 1) / n * ((v - v.mean()) ** 2).sum()))
            for f, v in loo.items()}


def icc_values(ms: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Every form of :data:`ICC_FORMS` from :func:`mean_squares`."""
    r, c, e, w, n, k = (ms[x] for x in ("ms_r", "ms_c", "ms_e", "ms_w", "n", "k"))
    return {
        "icc_oneway_single": (r - w) / (r + (k - 1) * w),
        "icc_oneway_average": (r - w) / r,
        "icc_twoway_agreement_single": (r - e) / (r + (k - 1) * e + k * (c - e) / n),
        "icc_twoway_agreement_average": (r - e) / (r + (c - e) / n),
        "icc_twoway_consistency_single": (r - e) / (r + (k - 1) * e),
        "icc_twoway_consistency_average": (r - e) / r,
    }


def icc(y: np.ndarray, *, ci_prob: float = 0.95) -> dict[str, dict[str, float]]:
    r"""Every ICC form of a complete (targets x raters) array with its F-based interval.

    One-way and consistency forms: with :math:`F = MS_R/MS_W` (one-way) or
    :math:`MS_R/MS_E`, :math:`F_L = F / F_{1-a/2}(df_1, df_2)`,
    :math:`F_U = F\,F_{1-a/2}(df_2, df_1)`, single :math:`(F_L - 1)/(F_L + k - 1)`,
    average :math:`1 - 1/F_L` (and likewise the upper end). Agreement forms: McGraw & Wong's
    (1996) Satterthwaite approximation (their Table 7), the average form by Spearman-Brown
    of the single form's bounds, as pingouin and ``psych::ICC``.

    Parameters
    ----------
    y : array (targets, raters)
        Complete ratings (no NaN).
    ci_prob : float
        Probability of the intervals.

    Returns
    -------
    dict
        form name -> ``{"value", "low", "high", "F", "df1", "df2"}``.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmeta.agreement.icc import icc
    >>> y = np.array([[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6],
    ...               [10, 5, 6, 9], [6, 2, 4, 7.]])
    >>> round(icc(y)["icc_twoway_agreement_single"]["value"], 4)  # Shrout & Fleiss ICC(2,1)
    0.2898

    R equivalent: ``psych::ICC(y)``; ``irr::icc(y, model="twoway", type="agreement",
    unit="single")``.
    """
    y = np.asarray(y, dtype=float)
    if np.isnan(y).any():
        raise ValueError("icc needs complete ratings (no NaN); leave incomplete targets out.")
    ms = mean_squares(y)
    vals = {f: float(v[0]) for f, v in icc_values(ms).items()}
    r, c, e, w = (float(ms[x][0]) for x in ("ms_r", "ms_c", "ms_e", "ms_w"))
    n, k = y.shape
    q = 0.5 + ci_prob / 2
    out: dict[str, dict[str, float]] = {}
    df1, df_w, df_e = n - 1, n * (k - 1), (n - 1) * (k - 1)
    for kind, f0, df2 in (("oneway", r / w, df_w), ("twoway_consistency", r / e, df_e)):
        fl = f0 / stats.f.ppf(q, df1, df2)
        fu = f0 * stats.f.ppf(q, df2, df1)
        out[f"icc_{kind}_single"] = {"low": (fl - 1) / (fl + k - 1),
                                     "high": (fu - 1) / (fu + k - 1), "F": f0, "df2": df2}
        out[f"icc_{kind}_average"] = {"low": 1 - 1 / fl, "high": 1 - 1 / fu, "F": f0,
                                      "df2": df2}
    a = vals["icc_twoway_agreement_single"]
    fj = c / e
    v = df_e * (k * a * fj + n * (1 + (k - 1) * a) - k * a) ** 2 / (
        df1 * k**2 * a**2 * fj**2 + (n * (1 + (k - 1) * a) - k * a) ** 2)
    f2u, f2l = stats.f.ppf(q, n - 1, v), stats.f.ppf(q, v, n - 1)
    lo = n * (r - f2u * e) / (f2u * (k * c + (k * n - k - n) * e) + n * r)
    hi = n * (f2l * r - e) / (k * c + (k * n - k - n) * e + n * f2l * r)
    out["icc_twoway_agreement_single"] = {"low": lo, "high": hi, "F": r / e, "df2": df_e}
    out["icc_twoway_agreement_average"] = {"low": lo * k / (1 + lo * (k - 1)),
                                           "high": hi * k / (1 + hi * (k - 1)),
                                           "F": r / e, "df2": df_e}
    return {f: {"value": vals[f], **{key: float(x) for key, x in out[f].items()},
                "df1": float(df1)} for f in ICC_FORMS}


__all__ = ["ICC_FORMS", "icc", "icc_values", "jackknife_se", "mean_squares"]
