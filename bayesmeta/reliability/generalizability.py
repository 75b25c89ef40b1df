r"""Generalizability theory in NumPy: ANOVA sums of squares, variance components and the
classical (plug-in) reliabilities of system means.

The design is crossed system x item with replicated runs nested in the cells::

    y[s, i, r] = mu + a[s] + b[i] + c[s, i] + e[s, i, r]

The ANOVA (method-of-moments) estimates of the four variance components, plugged into the
generalizability coefficient

.. math:: \rho(J, R) = \frac{\sigma^2_s}{\sigma^2_s + \sigma^2_{si}/J + \sigma^2_e/(JR)},

give the classical column of :func:`bayesmeta.reliability` and of
:func:`bayesmeta.decision_study`; with one run the consistency plug-in is coefficient alpha
(Hoyt 1941). The Bayesian model of the same design is :mod:`bayesmeta.reliability.true_score`.

References
----------
Brennan, R. L. (2001). *Generalizability Theory*. Springer. Hoyt, C. (1941). Test
reliability estimated by analysis of variance. *Psychometrika* 6.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

#: The variance components, in the order of every ``(..., 4)`` array of this module.
COMPONENTS = ("system", "item", "system_item", "run")


def anova_ss(y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""Sums of squares and degrees of freedom of the balanced system x item x run design.

    Parameters
    ----------
    y : array (..., S, I, R)
        Complete scores (no NaN); R may be 1.

    Returns
    -------
    ss, df : arrays (..., 4)
        For the components ``system, item, system_item, run`` (the last is the within-cell
        residual). With ``S`` systems, ``I`` items, ``R`` runs and dots for means:

        .. math::
            SS_s &= IR\sum_s(\bar y_{s..}-\bar y)^2, \quad df = S-1 \\
            SS_i &= SR\sum_i(\bar y_{.i.}-\bar y)^2, \quad df = I-1 \\
            SS_{si} &= R\sum_{s,i}(\bar y_{si.}-\bar y_{s..}-\bar y_{.i.}+\bar y)^2,
                \quad df = (S-1)(I-1) \\
            SS_e &= \sum_{s,i,r}(y_{sir}-\bar y_{si.})^2, \quad df = SI(R-1)

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmeta.reliability.generalizability import anova_ss
    >>> y = np.random.default_rng(0).normal(size=(5, 8, 2))
    >>> ss, df = anova_ss(y)
    >>> bool(np.isclose(ss.sum(), ((y - y.mean()) ** 2).sum())), df.tolist()
    (True, [4.0, 7.0, 28.0, 40.0])

    R equivalent: ``summary(aov(y ~ system * item, data))`` (sums of squares).
    """
    y = np.asarray(y, dtype=float)
    S, I, R = y.shape[-3:]
    g = y.mean(axis=(-3, -2, -1), keepdims=True)
    ms = y.mean(axis=(-2, -1), keepdims=True)
    mi = y.mean(axis=(-3, -1), keepdims=True)
    mc = y.mean(axis=-1, keepdims=True)
    ss = np.stack([
        I * R * ((ms - g) ** 2).sum(axis=(-3, -2, -1)),
        S * R * ((mi - g) ** 2).sum(axis=(-3, -2, -1)),
        R * ((mc - ms - mi + g) ** 2).sum(axis=(-3, -2, -1)),
        ((y - mc) ** 2).sum(axis=(-3, -2, -1)),
    ], axis=-1)
    df = np.array([S - 1, I - 1, (S - 1) * (I - 1), S * I * (R - 1)], dtype=float)
    return ss, np.broadcast_to(df, ss.shape).copy()


def variance_components(ss: np.ndarray, df: np.ndarray, n_systems: int | np.ndarray,
                        n_items: int | np.ndarray, n_runs: int | np.ndarray) -> np.ndarray:
    r"""ANOVA (method-of-moments) estimates of the variance components.

    Solves the expected mean squares :math:`E[MS_e]=\sigma^2_e`,
    :math:`E[MS_{si}]=\sigma^2_e+R\sigma^2_{si}`,
    :math:`E[MS_s]=\sigma^2_e+R\sigma^2_{si}+IR\sigma^2_s`,
    :math:`E[MS_i]=\sigma^2_e+R\sigma^2_{si}+SR\sigma^2_i`. With one run
    (``n_runs == 1``) :math:`\sigma^2_{si}` and :math:`\sigma^2_e` are not separable: the
    ``system_item`` estimate is their sum and ``run`` is 0. Estimates can be negative
    (returned as is).

    Returns
    -------
    numpy.ndarray
        Shape ``(..., 4)`` in the order of :data:`COMPONENTS`.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmeta.reliability.generalizability import anova_ss, variance_components
    >>> y = np.random.default_rng(1).normal(size=(6, 9, 1))
    >>> variance_components(*anova_ss(y), 6, 9, 1)[..., 3].item()
    0.0

    R equivalent: ``gtheory::gstudy`` (components of a balanced design).
    """
    ss, df = np.asarray(ss, dtype=float), np.asarray(df, dtype=float)
    S, I, R = (np.asarray(v, dtype=float) for v in (n_systems, n_items, n_runs))
    with np.errstate(invalid="ignore", divide="ignore"):
        ms = ss / df
    ms_e = np.where(R > 1, np.nan_to_num(ms[..., 3]), 0.0)
    s2_si = (ms[..., 2] - ms_e) / R
    s2_s = (ms[..., 0] - ms[..., 2]) / (I * R)
    s2_i = (ms[..., 1] - ms[..., 2]) / (S * R)
    return np.stack([s2_s, s2_i, s2_si, ms_e], axis=-1)


def g_coefficient(s2_system: Any, s2_system_item: Any, s2_run: Any, items: Any,
                  runs: Any = 1) -> Any:
    r"""Generalizability coefficient of a system mean over ``items`` items and ``runs`` runs.

    .. math:: \rho(J', R') = \frac{\sigma^2_s}{\sigma^2_s + \sigma^2_{si}/J' +
              \sigma^2_e/(J'R')}

    Works on NumPy arrays and xarray objects (broadcasting by dim names).

    Examples
    --------
    >>> from bayesmeta.reliability.generalizability import g_coefficient
    >>> round(float(g_coefficient(1.0, 4.0, 0.0, items=36)), 4)
    0.9

    R equivalent: ``gtheory::dstudy`` (relative G coefficient).
    """
    return s2_system / (s2_system + s2_system_item / items + s2_run / (items * runs))


def stability_coefficient(s2_system: Any, s2_system_item: Any, s2_run: Any, items: Any) -> Any:
    r"""Test-retest correlation of system means over the same ``items`` items, two runs.

    .. math:: \rho_{\mathrm{stab}} = \frac{\sigma^2_s + \sigma^2_{si}/J}
              {\sigma^2_s + (\sigma^2_{si} + \sigma^2_e)/J}

    Examples
    --------
    >>> from bayesmeta.reliability.generalizability import stability_coefficient
    >>> float(stability_coefficient(1.0, 2.0, 0.0, items=10))
    1.0
    """
    return (s2_system + s2_system_item / items) / (
        s2_system + (s2_system_item + s2_run) / items)


def items_for(target: float, s2_system: Any, error_per_item: Any) -> Any:
    r"""The continuous number of items :math:`J^*` with :math:`\rho(J^*) = t` when the error
    variance of a system mean over :math:`J` items is ``error_per_item / J``:

    .. math:: J^* = \frac{t}{1 - t}\,\frac{\sigma^2_{\mathrm{err}}}{\sigma^2_s}

    Examples
    --------
    >>> from bayesmeta.reliability.generalizability import items_for
    >>> round(float(items_for(0.9, 1.0, 4.0)), 10)
    36.0
    """
    return target / (1 - target) * error_per_item / s2_system


def g_study(ss: np.ndarray, df: np.ndarray, *, n_systems: int, n_items: int,
            n_runs: np.ndarray, target: float) -> dict[str, np.ndarray]:
    r"""Classical (ANOVA plug-in) reliabilities of the system means of several quantities.

    Parameters
    ----------
    ss, df : arrays (Q, 4)
        From :func:`anova_ss`; rows with NaN (quantities with missing cells) give NaN.
    n_systems, n_items : int
        ``S`` and ``J`` of the data.
    n_runs : array (Q,)
        Runs of each quantity (1: interaction and run noise are not separable).
    target : float
        Target reliability of ``items_needed``.

    Returns
    -------
    dict of arrays (Q,)
        ``consistency`` :math:`\rho(J, 1)`, ``stability``, ``sem``
        :math:`\sqrt{(\sigma^2_{si}+\sigma^2_e)/J}`, ``items_needed`` (Spearman-Brown of
        the consistency, :func:`bayesmeta.items_needed`) and the component SDs
        ``sd_system``, ``sd_item``, ``sd_system_item``, ``sd_run`` (negative variance
        estimates clipped to 0).

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmeta.reliability.generalizability import anova_ss, g_study
    >>> ss, df = anova_ss(np.random.default_rng(0).normal(size=(1, 5, 8, 2)))
    >>> sorted(g_study(ss, df, n_systems=5, n_items=8, n_runs=np.array([2]), target=0.9))[:3]
    ['consistency', 'items_needed', 'sd_item']
    """
    from bayesmeta.reliability.classical import items_needed

    ss, df = np.asarray(ss, dtype=float), np.asarray(df, dtype=float)
    comp = np.full(ss.shape, np.nan)
    complete = ~np.isnan(ss).any(axis=1)
    comp[complete] = variance_components(ss[complete], df[complete], n_systems, n_items,
                                         np.asarray(n_runs)[complete])
    s2_s, s2_i, s2_si, s2_e = comp.T
    J = n_items
    cons = g_coefficient(s2_s, s2_si, s2_e, J)
    with np.errstate(invalid="ignore"):
        return {
            "consistency": cons,
            "stability": stability_coefficient(s2_s, s2_si, s2_e, J),
            "sem": np.sqrt((s2_si + s2_e) / J),
            "items_needed": items_needed(cons, J, target=target),
            "sd_system": np.sqrt(np.clip(s2_s, 0, None)),
            "sd_item": np.sqrt(np.clip(s2_i, 0, None)),
            "sd_system_item": np.sqrt(np.clip(s2_si, 0, None)),
            "sd_run": np.sqrt(np.clip(s2_e, 0, None)),
        }


def decision_curve(ss: np.ndarray, df: np.ndarray, *, n_systems: int, n_items: int,
                   n_runs: np.ndarray, items: Sequence[int], runs: Sequence[int],
                   target: float) -> tuple[np.ndarray, np.ndarray]:
    r"""Classical decision study: plug-in :math:`\rho(J', R')` and items needed.

    Parameters
    ----------
    ss, df : arrays (Q, 4)
        From :func:`anova_ss` (NaN rows give NaN).
    n_systems, n_items : int
        ``S`` and ``J`` of the data the components were estimated on.
    n_runs : array (Q,)
        Runs of each quantity in the data; a quantity with one run has no separable run
        noise, so only ``R' = 1`` is defined for it (NaN elsewhere).
    items, runs : sequences of int
        The designs :math:`J'` and :math:`R'`.
    target : float
        Target reliability.

    Returns
    -------
    rho : array (Q, len(runs), len(items))
        :func:`g_coefficient` of the ANOVA components.
    need : array (Q, len(runs))
        :math:`\lceil J^*(R') \rceil` with error per item :math:`\sigma^2_{si} +
        \sigma^2_e / R'` (:func:`items_for`); NaN where :math:`\sigma^2_s \le 0`.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmeta.reliability.generalizability import anova_ss, decision_curve
    >>> ss, df = anova_ss(np.random.default_rng(0).normal(size=(1, 5, 8, 1)))
    >>> rho, need = decision_curve(ss, df, n_systems=5, n_items=8, n_runs=np.array([1]),
    ...                            items=[8, 16], runs=[1, 2], target=0.9)
    >>> rho.shape, bool(np.isnan(rho[0, 1]).all())
    ((1, 2, 2), True)
    """
    n_runs = np.asarray(n_runs)
    comp = variance_components(ss, df, n_systems, n_items, n_runs)
    s, si, e = (comp[:, k][:, None, None] for k in (0, 2, 3))
    J = np.asarray(items, dtype=float)[None, None, :]
    R = np.asarray(runs, dtype=float)[None, :, None]
    ok = (n_runs[:, None] > 1) | (np.asarray(runs)[None, :] == 1)  # (Q, R')
    rho = np.where(ok[..., None], g_coefficient(s, si, e, J, R), np.nan)
    with np.errstate(invalid="ignore", divide="ignore"):
        s0, si0, e0, R0 = s[..., 0], si[..., 0], e[..., 0], R[..., 0]
        need = np.where(s0 > 0, np.ceil(items_for(target, s0, si0 + e0 / R0) - 1e-9), np.nan)
    return rho, np.where(ok, need, np.nan)


__all__ = [
    "COMPONENTS",
    "anova_ss",
    "decision_curve",
    "g_coefficient",
    "g_study",
    "items_for",
    "stability_coefficient",
    "variance_components",
]
