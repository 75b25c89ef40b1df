"""Score transforms that analyses apply to data before estimating (NumPy/SciPy only)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats


def rank_normalize(
    x: np.ndarray | pd.Series, *, squeeze: float = 0.001, standardize: bool = True
) -> np.ndarray:
    r"""Inverse-normal transform of the empirical CDF (MetricEval App. A.2).

    .. math:: x^*_j = \Phi^{-1}\big(c + (1 - 2c)\,\hat F(x_j)\big),
              \quad \hat F(x_j) = \tfrac{1}{N}\sum_i I(x_i \le x_j)

    The paper's formula is :math:`\Phi^{-1}(\hat F)`, which is infinite at the maximum;
    MetricEval's code squeezes the ECDF into ``[c, 1 - c]`` with ``c = 0.001`` and then
    standardises (mean 0, population SD 1). Both are reproduced here. NaNs stay NaN and do
    not enter the ECDF.

    Examples
    --------
    >>> import numpy as np, bayesmeta as bm
    >>> z = bm.rank_normalize(np.array([3.0, 1.0, 2.0, 10.0]))
    >>> bool(np.all(np.argsort(z) == [1, 2, 0, 3]))
    True

    R equivalent: ``qnorm(0.001 + 0.998 * ecdf(x)(x))``, then ``scale()``.
    """
    x = np.asarray(x, dtype=float)
    out = np.full_like(x, np.nan)
    ok = ~np.isnan(x)
    v = x[ok]
    if v.size == 0:
        return out
    ecdf = np.searchsorted(np.sort(v), v, side="right") / v.size
    z = stats.norm.ppf(squeeze + (1 - 2 * squeeze) * ecdf)
    if standardize:
        sd = z.std()
        z = (z - z.mean()) / sd if sd > 0 else z - z.mean()
    out[ok] = z
    return out


__all__ = ["rank_normalize"]
