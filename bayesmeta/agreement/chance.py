r"""Chance-corrected agreement coefficients for raw ratings, with Gwet's analytic variance.

One (units x raters) array with NaN for missing ratings; the coefficients share Gwet's
(2014) framework, in which each is :math:`\kappa = (p_a - p_e) / (1 - p_e)` with the
weighted percent agreement

.. math:: p_a = \frac{1}{n'}\sum_{i: r_i \ge 2}\sum_k
          \frac{r_{ik}(r^\star_{ik} - 1)}{r_i(r_i - 1)},\qquad
          r^\star_{ik} = \sum_l w_{kl} r_{il}

(:math:`r_{ik}` raters classifying unit :math:`i` into category :math:`k`, :math:`r_i` its
ratings, :math:`n'` the units with two or more) and a chance agreement :math:`p_e` that
differs by coefficient: Fleiss (:math:`\sum_{kl} w_{kl}\pi_k\pi_l`), Gwet's AC1/AC2
(:math:`\frac{T_w}{q(q-1)}\sum_k \pi_k(1-\pi_k)`), Brennan-Prediger (:math:`T_w/q^2`),
Conger (pairwise rater margins), Krippendorff (Gwet's form of alpha). The variance is
Gwet's linearisation :math:`v = \frac{1-f}{n(n-1)}\sum_i(\kappa_i^\star - \kappa)^2`
with :math:`f = n/N` (finite-population correction; :math:`N=\infty` by default).

Every function here takes resampling weights of the units (``unit_weights``, shape
``(B, n)``): multinomial counts give the classical bootstrap, :math:`n\,\mathrm{Dir}(1)`
draws the Bayesian bootstrap, and one row of ones the point estimate; every sum over units
is a weighted sum, so B resamples are a few matrix products.

References
----------
Gwet, K. L. (2014). *Handbook of Inter-Rater Reliability*, 4th ed., Advanced Analytics
(chs. 2-5; as the irrCAC packages implement it). Krippendorff, K. (2011). *Computing
Krippendorff's alpha-reliability*.

R equivalent: ``irrCAC::gwet.ac1.raw``, ``fleiss.kappa.raw``, ``conger.kappa.raw``,
``bp.coeff.raw``, ``krippen.alpha.raw``, ``pa.coeff.raw``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from scipy import stats

#: Gwet's weight schemes (Gwet 2014, sec. 3.6; irrCAC's ``weights``).
WEIGHTS = ("identity", "linear", "quadratic", "ordinal", "radical", "ratio", "circular",
           "bipolar")
#: Coefficients of Gwet's framework and their chance agreement.
COEFFICIENTS = ("percent_agreement", "cohen_kappa", "scott_pi", "fleiss_kappa",
                "conger_kappa", "gwet_ac", "brennan_prediger", "krippendorff_nominal",
                "krippendorff_ordinal", "krippendorff_interval", "krippendorff_ratio")
#: The weights that make Gwet's alpha Krippendorff's alpha of each level of measurement.
KRIPPENDORFF_WEIGHTS = {"nominal": "identity", "interval": "quadratic", "ratio": "ratio",
                        "ordinal": "krippendorff_ordinal"}


def weight_matrix(categories: np.ndarray, weights: str = "identity") -> np.ndarray:
    r"""Gwet's (q x q) agreement weights of the sorted numeric ``categories``.

    identity :math:`[k=l]`; linear :math:`1-|c_k-c_l|/(c_{max}-c_{min})`; quadratic
    :math:`1-(c_k-c_l)^2/(c_{max}-c_{min})^2`; ordinal :math:`1-\binom{|k-l|+1}{2}/
    \max`; radical :math:`1-\sqrt{|c_k-c_l|}/\sqrt{c_{max}-c_{min}}`; ratio
    :math:`1-[(c_k-c_l)/(c_k+c_l)]^2/[(c_{max}-c_{min})/(c_{max}+c_{min})]^2`; circular
    :math:`1-\sin^2(\pi(c_k-c_l)/U)/\max` with :math:`U = c_{max}-c_{min}+1`; bipolar as
    Gwet (2014, sec. 3.6). R equivalent: ``irrCAC::quadratic.weights(categ)`` etc.

    Examples
    --------
    >>> from bayesmeta.agreement.chance import weight_matrix
    >>> weight_matrix([1, 2, 3], "linear")[0].tolist()
    [1.0, 0.5, 0.0]
    """
    c = np.asarray(categories, dtype=float)
    q = c.size
    d = c[:, None] - c[None, :]
    span = c.max() - c.min() if q > 1 else 1.0
    if weights == "identity":
        return np.eye(q)
    if weights == "linear":
        return 1 - np.abs(d) / span
    if weights == "quadratic":
        return 1 - (d / span) ** 2
    if weights == "radical":
        return 1 - np.sqrt(np.abs(d)) / np.sqrt(span)
    if weights == "ordinal":
        m = np.abs(np.subtract.outer(np.arange(q), np.arange(q))) + 1.0
        w = m * (m - 1) / 2
    elif weights == "ratio":
        if np.any(c == 0):
            raise ValueError("ratio weights need no category 0 (they divide by c_k + c_l).")
        s = c[:, None] + c[None, :]
        return 1 - (d / s) ** 2 / ((c.max() - c.min()) / (c.max() + c.min())) ** 2
    elif weights == "circular":
        w = np.sin(np.pi * d / (c.max() - c.min() + 1)) ** 2
    elif weights == "bipolar":
        s = c[:, None] + c[None, :]
        with np.errstate(divide="ignore", invalid="ignore"):
            w = np.where(d == 0, 0.0, d**2 / ((s - 2 * c.min()) * (2 * c.max() - s)))
    else:
        raise ValueError(f"weights must be one of {', '.join(WEIGHTS)}, got {weights!r}.")
    return 1 - w / w.max() if w.max() > 0 else np.eye(q)


def _ordinal_krippendorff_weights(n_c: np.ndarray) -> np.ndarray:
    """Krippendorff's ordinal metric from the margins ``n_c`` (..., q), as weights
    ``1 - d2 / max(d2)``; batched over leading dims."""
    q = n_c.shape[-1]
    cum = np.cumsum(n_c, axis=-1)
    lo = np.minimum.outer(np.arange(q), np.arange(q))
    hi = np.maximum.outer(np.arange(q), np.arange(q))
    below = np.where(lo > 0, cum[..., np.maximum(lo - 1, 0)], 0.0)
    d2 = (cum[..., hi] - below - (n_c[..., :, None] + n_c[..., None, :]) / 2) ** 2
    top = d2.max(axis=(-2, -1), keepdims=True)
    return 1 - d2 / np.where(top > 0, top, 1.0)


class Panel:
    """Per-unit counts of a (units x raters) array of ratings (units with no rating are
    dropped, as in irrCAC): ``counts`` (n, q), ``onehot`` (n, raters, q)."""

    def __init__(self, y: np.ndarray, categories: np.ndarray | None = None) -> None:
        y = np.asarray(y, dtype=float)
        self.kept = ~np.isnan(y).all(axis=1)
        y = y[self.kept]
        self.y = y
        self.categories = (np.unique(y[~np.isnan(y)]) if categories is None
                           else np.asarray(categories, dtype=float))
        idx = np.searchsorted(self.categories, np.where(np.isnan(y), self.categories[0], y))
        self.observed = ~np.isnan(y)
        self.onehot = (np.arange(self.categories.size) == idx[..., None]) & \
            self.observed[..., None]
        self.counts = self.onehot.sum(axis=1).astype(float)
        self.r_i = self.counts.sum(axis=1)
        self.n, self.raters = y.shape
        self.q = self.categories.size
        self.n_missing = int((~self.observed).sum())


def _agreeing(C: np.ndarray, W: np.ndarray) -> np.ndarray:
    """:math:`\\sum_{kl} C_{ik} W_{kl} C_{il}` per unit (weighted agreeing ordered pairs,
    self-pairs included). einsum, not a BLAS product: a tall (n, q) x (q, q) product is
    memory-bound, and a threaded BLAS on a busy machine made it 50 times slower."""
    return (np.einsum("ik,lk->il", C, W) * C).sum(1)


def _weighted_mean(u: np.ndarray, x: np.ndarray) -> np.ndarray:
    """sum_i u_bi x_i... / sum_i u_bi for weights u (B, n) and per-unit x (n, ...)."""
    tot = u.sum(axis=1)
    return np.tensordot(u, x, axes=(1, 0)) / tot.reshape((-1,) + (1,) * (x.ndim - 1))


def _memo(cache: dict | None, key: object, make: Callable[[], Any]) -> Any:
    """``make()`` once per key of ``cache`` (no cache: every time)."""
    if cache is None:
        return make()
    if key not in cache:
        cache[key] = make()
    return cache[key]


def coefficient_draws(panel: Panel, coefficient: str, weights: str, unit_weights: np.ndarray,
                      cache: dict | None = None) -> np.ndarray:
    """The coefficient under each row of ``unit_weights`` (B, n): shape (B,).

    ``cache`` (a dict, one per ``unit_weights``) shares the weighted sums that several
    coefficients need (the agreement of every Gwet-family coefficient, the unit and rater
    margins, Krippendorff's pair sums for all four levels), so each is computed once."""
    C, r_i = panel.counts, panel.r_i
    u = np.asarray(unit_weights, dtype=float)
    pair = r_i >= 2
    if coefficient.startswith("krippendorff_"):
        level = coefficient.split("_", 1)[1]

        def pairable() -> tuple[np.ndarray, ...]:
            up, Cp, rp = u[:, pair], C[pair], r_i[pair]
            rbar = _weighted_mean(up, rp)                                # (B,)
            pi = _weighted_mean(up, Cp) / rbar[:, None]                  # (B, q)
            # paprime = mean_i (C_i' W C_i - r_i) / (rbar (r_i - 1))
            G = np.einsum("ik,il->ikl", Cp, Cp) / (rp - 1)[:, None, None]
            agg = _weighted_mean(up, G)                                   # (B, q, q)
            return (rbar, pi, agg, _weighted_mean(up, rp / (rp - 1)), 1 / (up @ rp),
                    up.sum(1))

        rbar, pi, agg, r_term, eps, total = _memo(cache, "krippendorff", pairable)
        W = _krippendorff_weights(level, panel, pi * rbar[:, None] * total[:, None])
        paprime = ((W * agg).sum((-2, -1)) - r_term) / rbar
        pa = (1 - eps) * paprime + eps
        pe = np.einsum("bk,bkl,bl->b", pi, W, pi)
        return (pa - pe) / (1 - pe)
    W = weight_matrix(panel.categories, weights)

    def agreement() -> np.ndarray:
        den = np.where(pair, r_i * (r_i - 1), 1.0)
        pa_i = np.where(pair, _agreeing(C, W) - r_i, 0.0) / den
        return (u @ pa_i) / (u @ pair)

    pa = _memo(cache, ("pa", weights), agreement)
    if coefficient == "percent_agreement":
        return pa
    pe = _chance(panel, coefficient, W, u, cache)
    return (pa - pe) / (1 - pe)


def _krippendorff_weights(level: str, panel: Panel, n_c: np.ndarray) -> np.ndarray:
    if level not in KRIPPENDORFF_WEIGHTS:
        raise ValueError(f"Krippendorff's alpha levels are {', '.join(KRIPPENDORFF_WEIGHTS)}, "
                         f"got {level!r}.")
    if level == "ordinal":
        return _ordinal_krippendorff_weights(n_c)
    W = weight_matrix(panel.categories, KRIPPENDORFF_WEIGHTS[level])
    return np.broadcast_to(W, (n_c.shape[0], *W.shape))


def _chance(panel: Panel, coefficient: str, W: np.ndarray, u: np.ndarray,
            cache: dict | None = None) -> np.ndarray:
    C, r_i, q = panel.counts, panel.r_i, panel.q
    if coefficient in ("fleiss_kappa", "scott_pi", "gwet_ac"):
        pi = _memo(cache, "unit_margins",
                   lambda: _weighted_mean(u, C / r_i[:, None]))          # (B, q)
        if coefficient == "gwet_ac":
            return W.sum() * (pi * (1 - pi)).sum(1) / (q * (q - 1)) if q > 1 else 1 - 1e-15
        return np.einsum("bk,kl,bl->b", pi, W, pi)
    if coefficient == "brennan_prediger":
        return np.full(u.shape[0], W.sum() / q**2)
    if coefficient in ("conger_kappa", "cohen_kappa"):
        R = panel.raters

        def rater_margins() -> tuple[np.ndarray, np.ndarray]:
            ng = u @ panel.observed                                     # (B, R)
            onehot = panel.onehot.reshape(panel.n, -1).astype(float)     # (n, R q)
            P = (u @ onehot).reshape(u.shape[0], R, q) / ng[..., None]   # (B, R, q)
            pbar = P.mean(axis=1)
            s2 = (np.einsum("bgk,bgl->bkl", P, P)
                  - R * pbar[:, :, None] * pbar[:, None, :]) / (R - 1)
            return pbar, s2

        pbar, s2 = _memo(cache, "rater_margins", rater_margins)
        return (W * (pbar[:, :, None] * pbar[:, None, :] - s2 / R)).sum((-2, -1))
    raise ValueError(f"coefficient must be one of {', '.join(COEFFICIENTS)}, got "
                     f"{coefficient!r}.")


def _influence(panel: Panel, coefficient: str, weights: str) -> tuple[float, np.ndarray, int]:
    """(coefficient, Gwet's linearised unit values kappa_i*, n) for the analytic variance."""
    C, r_i, q, n = panel.counts, panel.r_i, panel.q, panel.n
    one = np.ones((1, n))
    pair = r_i >= 2
    if coefficient.startswith("krippendorff_"):
        level = coefficient.split("_", 1)[1]
        Cp, rp = C[pair], r_i[pair]
        m = Cp.shape[0]
        rbar = rp.mean()
        pi = Cp.mean(0) / rbar
        W = _krippendorff_weights(level, panel, (pi * rbar * m)[None])[0]
        sum_q = _agreeing(Cp, W) - rp
        paprime = (sum_q / (rbar * (rp - 1))).mean()
        eps = 1 / rp.sum()
        pa = (1 - eps) * paprime + eps
        pe = pi @ W @ pi
        alpha = (pa - pe) / (1 - pe)
        alpha_p = (paprime - pe) / (1 - pe)
        pa_i = sum_q / (rbar * (rp - 1)) - pa * (rp - rbar) / rbar
        k_i = (pa_i - pe) / (1 - pe)
        pe_i = np.einsum("ik,k->i", Cp, (W + W.T) @ pi / 2) / rbar - pe * (rp - rbar) / rbar
        return alpha, k_i - 2 * (1 - alpha_p) * (pe_i - pe) / (1 - pe) - alpha_p + alpha, m
    W = weight_matrix(panel.categories, weights)
    n2 = pair.sum()
    den = np.where(pair, r_i * (r_i - 1), 1.0)
    pa_i = np.where(pair, _agreeing(C, W) - r_i, 0.0) / den
    pa = pa_i[pair].mean()
    if coefficient == "percent_agreement":
        return pa, (n / n2) * pa_i, n
    pe = float(_chance(panel, coefficient, W, one)[0])
    kappa = (pa - pe) / (1 - pe)
    k_i = (n / n2) * (pa_i - pe * pair) / (1 - pe)
    if coefficient == "brennan_prediger":
        return kappa, k_i, n
    if coefficient == "gwet_ac":
        pi = (C / r_i[:, None]).mean(0)
        pe_i = W.sum() / (q * (q - 1)) * np.einsum("ik,k->i", C, 1 - pi) / r_i
    elif coefficient in ("fleiss_kappa", "scott_pi"):
        pi = (C / r_i[:, None]).mean(0)
        pe_i = np.einsum("ik,k->i", C, (W + W.T) @ pi / 2) / r_i
    else:  # Conger / Cohen
        R = panel.raters
        D = panel.onehot.astype(float)
        E = panel.observed.astype(float)
        ng = E.sum(0)
        P = D.sum(0) / ng[:, None]                                      # (R, q)
        term = D - (E - ng / n)[..., None] * P[None]                    # (n, R, q)
        T = (n / ng)[None, :, None] * np.einsum("igl,kl->igk", term, W)  # (n, R, k)
        lam = (T * (P.sum(0)[None, None, :] - P[None])).sum(2)           # (n, R)
        pe_i = lam.sum(1) / (R * (R - 1))
    return kappa, k_i - 2 * (1 - kappa) * (pe_i - pe) / (1 - pe), n


def chance_corrected(y: np.ndarray, coefficient: str = "gwet_ac", weights: str = "identity",
                     *, categories: np.ndarray | None = None, population: float = np.inf,
                     ci_prob: float = 0.95) -> dict[str, float]:
    r"""One chance-corrected coefficient of a (units x raters) array, with Gwet's variance.

    :math:`\kappa = (p_a - p_e)/(1 - p_e)` (see the module docstring for each
    :math:`p_e`); standard error :math:`\sqrt{v}` with
    :math:`v = \frac{1-f}{n(n-1)}\sum_i(\kappa^\star_i - \kappa)^2`, :math:`f = n/N`;
    interval :math:`\kappa \pm t_{n-1}\,\mathrm{se}`, the upper end capped at 1 (irrCAC).
    ``cohen_kappa`` is Conger's kappa of two raters and ``scott_pi`` Fleiss' kappa of two
    raters (Gwet 2014, ch. 2). Krippendorff's alpha takes the weights of its level
    (nominal: identity, interval: quadratic, ratio: ratio, ordinal: Krippendorff's
    rank-frequency metric) and ignores ``weights``. Its variance is Gwet's for alpha
    (irrCAC's ``krippendorff``); for the ordinal level the metric's weights, which depend
    on the observed margins, are held fixed in it (no reference implements that case).

    Parameters
    ----------
    y : array (units, raters)
        Numeric ratings, NaN for missing.
    coefficient : str
        One of :data:`COEFFICIENTS`.
    weights : str
        One of :data:`WEIGHTS`.
    categories : array, optional
        All possible ratings (default: those observed).
    population : float
        Population size :math:`N` of units for the finite-population correction.
    ci_prob : float
        Probability of the interval.

    Returns
    -------
    dict
        ``value``, ``se``, ``low``, ``high``, ``n`` (units in the variance).

    References
    ----------
    Gwet (2014), *Handbook of Inter-Rater Reliability*, 4th ed., chs. 2-5.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmeta.agreement.chance import chance_corrected
    >>> y = np.array([[1, 1, np.nan, 1], [2, 2, 3, 2], [3, 3, 3, 3], [3, 3, 3, 3],
    ...               [2, 2, 2, 2], [1, 2, 3, 4], [4, 4, 4, 4], [1, 1, 2, 1],
    ...               [2, 2, 2, 2], [np.nan, 5, 5, 5], [np.nan, np.nan, 1, 1],
    ...               [np.nan, np.nan, 3, np.nan]])
    >>> out = chance_corrected(y, "gwet_ac")
    >>> round(out["value"], 5), round(out["se"], 5)
    (0.77544, 0.14295)

    R equivalent: ``irrCAC::gwet.ac1.raw(y)$est``.
    """
    return estimate(Panel(y, categories), coefficient, weights, population=population,
                    ci_prob=ci_prob)


def estimate(panel: Panel, coefficient: str, weights: str = "identity", *,
             population: float = np.inf, ci_prob: float = 0.95) -> dict[str, float]:
    """:func:`chance_corrected` of a :class:`Panel` already built (one panel serves every
    coefficient of a trait)."""
    if coefficient in ("cohen_kappa", "scott_pi") and panel.raters != 2:
        raise ValueError(f"{coefficient} is for 2 raters, got {panel.raters}; use "
                         f"{'conger_kappa' if coefficient == 'cohen_kappa' else 'fleiss_kappa'}.")
    value, k_i, n = _influence(panel, coefficient, weights)
    f = panel.n / population  # irrCAC: all rated units, also for alpha's pairable n
    se = float(np.sqrt((1 - f) / (n * (n - 1)) * ((k_i - value) ** 2).sum())) if n > 1 \
        else np.nan
    half = stats.t.ppf(0.5 + ci_prob / 2, n - 1) * (se if se > 0 else 1e-15)
    return {"value": float(value), "se": se, "low": float(value - half),
            "high": float(min(1.0, value + half)), "n": int(n)}


__all__ = ["COEFFICIENTS", "KRIPPENDORFF_WEIGHTS", "WEIGHTS", "Panel", "chance_corrected",
           "coefficient_draws", "estimate", "weight_matrix"]
