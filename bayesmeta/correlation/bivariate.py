r"""Classical within-system and system-level correlations of metric and human scores, and
the sufficient statistics of the hierarchical bivariate model (paper 001, App. C).

For metric scores :math:`x_{si}` and human scores :math:`y_{si}` of system :math:`s` on item
:math:`i`:

.. math::
    r^{\text{within\_system}} = \frac1S \sum_s \operatorname{cor}(x_{s\cdot}, y_{s\cdot}),
    \qquad
    r^{\text{system}} = \operatorname{cor}(\bar x_{s\cdot}, \bar y_{s\cdot})

(paper 001's *item-level* and *system-level* Pearson; ``within_system_pearson`` and
``system_pearson`` in :func:`bayesmeta.correlations`). :func:`sufficient_stats` reduces
the pairs of each (metric, system) to the six numbers the likelihood of
:mod:`bayesmeta.correlation.model` needs. NumPy and SciPy only.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

#: Fewest pairs with both scores for a within-system correlation.
MIN_ITEMS = 3


@dataclass
class CorrelationStats:
    """Sufficient statistics of the (metric, human) pairs per metric and system.

    All arrays have shape ``(M, S)``; the scores are standardised per metric by ``center``
    and ``scale`` (shape ``(M, 2)``: metric, human), the pooled mean and SD over the
    pairs where both scores are observed.
    """

    n: np.ndarray
    xbar: np.ndarray
    ybar: np.ndarray
    wxx: np.ndarray
    wyy: np.ndarray
    wxy: np.ndarray
    center: np.ndarray
    scale: np.ndarray

    def model_data(self) -> dict[str, np.ndarray]:
        """Values of the model's ``pm.Data`` containers."""
        return {"n": self.n.astype(float), "xbar": self.xbar, "ybar": self.ybar,
                "wxx": self.wxx, "wyy": self.wyy, "wxy": self.wxy}

    def subset(self, idx: np.ndarray | slice) -> CorrelationStats:
        """The statistics of the metrics at ``idx``."""
        return CorrelationStats(*(getattr(self, f)[idx] for f in
                                  ("n", "xbar", "ybar", "wxx", "wyy", "wxy", "center",
                                   "scale")))


def sufficient_stats(x: np.ndarray, y: np.ndarray) -> CorrelationStats:
    r"""Per (metric, system) counts, means and within-system scatter of standardised pairs.

    Parameters
    ----------
    x : (M, S, I) array
        Metric scores, NaN for missing.
    y : (S, I) or (M, S, I) array
        Human scores, NaN for missing (a separate human score per metric is allowed).

    Returns
    -------
    CorrelationStats
        With :math:`\tilde x = (x - c_x)/d_x` on the pairs where both are observed,
        :math:`n_{ms}`, :math:`\bar x_{ms}`, :math:`\bar y_{ms}` and
        :math:`W_{xx} = \sum_i (\tilde x_{msi} - \bar x_{ms})^2`, likewise
        :math:`W_{yy}`, :math:`W_{xy}`.

    Raises
    ------
    ValueError
        If a metric or the human score is constant, or a (metric, system) has fewer than
        3 observed pairs (its within-system correlation is undefined). The message gives
        positions; :func:`bayesmeta.fit_correlation_model` checks labels first.
    """
    x = np.asarray(x, dtype=float)
    y = np.broadcast_to(np.asarray(y, dtype=float), x.shape)
    ok = ~np.isnan(x) & ~np.isnan(y)
    n = ok.sum(axis=-1)
    if (n < MIN_ITEMS).any():
        m, s = np.argwhere(n < MIN_ITEMS)[0]
        raise ValueError(f"metric #{m}, system #{s} has {n[m, s]} item(s) with both a metric "
                         f"and a human score; at least {MIN_ITEMS} are needed.")
    xs = np.where(ok, x, 0.0)
    ys = np.where(ok, y, 0.0)
    tot = ok.sum(axis=(1, 2))
    cx = xs.sum(axis=(1, 2)) / tot
    cy = ys.sum(axis=(1, 2)) / tot
    dx = np.sqrt((np.where(ok, x - cx[:, None, None], 0.0) ** 2).sum(axis=(1, 2)) / (tot - 1))
    dy = np.sqrt((np.where(ok, y - cy[:, None, None], 0.0) ** 2).sum(axis=(1, 2)) / (tot - 1))
    for name, d in (("metric", dx), ("human score", dy)):
        if not (np.isfinite(d) & (d > 0)).all():
            raise ValueError(f"the {name} is constant for metric #{int(np.argmin(d))}: its "
                             f"correlation is undefined.")
    zx = np.where(ok, (x - cx[:, None, None]) / dx[:, None, None], 0.0)
    zy = np.where(ok, (y - cy[:, None, None]) / dy[:, None, None], 0.0)
    xbar = zx.sum(-1) / n
    ybar = zy.sum(-1) / n
    ex = np.where(ok, zx - xbar[..., None], 0.0)
    ey = np.where(ok, zy - ybar[..., None], 0.0)
    return CorrelationStats(n=n, xbar=xbar, ybar=ybar, wxx=(ex * ex).sum(-1),
                            wyy=(ey * ey).sum(-1), wxy=(ex * ey).sum(-1),
                            center=np.stack([cx, cy], -1), scale=np.stack([dx, dy], -1))


def classical_correlations(x: np.ndarray, y: np.ndarray, *, ci_prob: float = 0.94,
                           min_count: int = MIN_ITEMS) -> dict[str, np.ndarray]:
    r"""Classical within-system and system-level Pearson correlations of every metric.

    .. math::
        r^{\text{within\_system}} = \frac1S \sum_s \operatorname{cor}(x_{s\cdot},
            y_{s\cdot}), \qquad
        r^{\text{system}} = \operatorname{cor}(\bar x_{s\cdot}, \bar y_{s\cdot}),

    the within-system correlations over the items where both scores are observed (NaN and
    left out of the mean with fewer than ``min_count``), system means over each score's
    own observed items (as in :mod:`bayesmeta.correlation.measures`). Also the SD over
    systems (``ddof=1``) of the within-system correlations, and the Fisher-z interval
    :math:`\tanh(\operatorname{atanh} r \pm z_{(1+p)/2}/\sqrt{S-3})` of the
    system-level r.

    Parameters
    ----------
    x : (M, S, I) array
    y : (S, I) or (M, S, I) array
    ci_prob : float
        Probability of the Fisher-z interval.
    min_count : int

    Returns
    -------
    dict
        ``within_system_pearson`` (the mean within-system r), ``within_system_sd`` (their SD
        over systems), ``system_pearson``, ``system_low``, ``system_high`` (arrays of
        length M) and ``within`` (M, S).

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmeta.correlation.bivariate import classical_correlations
    >>> rng = np.random.default_rng(0)
    >>> y = rng.normal(size=(5, 30))
    >>> x = (y + rng.normal(size=(5, 30)))[None]
    >>> c = classical_correlations(x, y)
    >>> ref = np.mean([np.corrcoef(x[0, s], y[s])[0, 1] for s in range(5)])
    >>> bool(np.isclose(c["within_system_pearson"][0], ref))
    True

    R equivalent: ``mean(sapply(split(d, d$system), function(g) cor(g$x, g$y)))`` and
    ``cor(tapply(d$x, d$system, mean), tapply(d$y, d$system, mean))``.
    """
    from scipy.stats import norm

    x = np.asarray(x, dtype=float)
    y = np.broadcast_to(np.asarray(y, dtype=float), x.shape)
    ok = ~np.isnan(x) & ~np.isnan(y)
    n = ok.sum(-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mx = np.where(ok, x, 0).sum(-1) / n
        my = np.where(ok, y, 0).sum(-1) / n
        ex = np.where(ok, x - mx[..., None], 0)
        ey = np.where(ok, y - my[..., None], 0)
        r = (ex * ey).sum(-1) / np.sqrt((ex**2).sum(-1) * (ey**2).sum(-1))
    r = np.where(n >= min_count, r, np.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        r_mean = np.nanmean(r, axis=-1)
        r_sd = np.nanstd(r, axis=-1, ddof=1)
        sx = np.nanmean(x, axis=-1)
        sy = np.nanmean(y, axis=-1)
    both = ~np.isnan(sx) & ~np.isnan(sy)
    ax_ = np.where(both, sx - np.nanmean(np.where(both, sx, np.nan), -1, keepdims=True), 0)
    ay_ = np.where(both, sy - np.nanmean(np.where(both, sy, np.nan), -1, keepdims=True), 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        system = (ax_ * ay_).sum(-1) / np.sqrt((ax_**2).sum(-1) * (ay_**2).sum(-1))
        half = norm.ppf(0.5 + ci_prob / 2) / np.sqrt(both.sum(-1) - 3)
        zr = np.arctanh(np.clip(system, -1 + 1e-15, 1 - 1e-15))
    return {"within_system_pearson": r_mean, "within_system_sd": r_sd,
            "system_pearson": system,
            "system_low": np.tanh(zr - half), "system_high": np.tanh(zr + half),
            "within": r}


__all__ = ["MIN_ITEMS", "CorrelationStats", "classical_correlations", "sufficient_stats"]
