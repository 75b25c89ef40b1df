r"""The true-score (generalizability) model of metric scores and ratings.

Every quantity (an automatic metric, or one rater x trait of the human ratings) is a
crossed system x item design with replicated runs nested in the cells::

    y[s, i, r] = mu + a[s] + b[i] + c[s, i] + e[s, i, r]
    a ~ N(0, sd_system),  b ~ N(0, sd_item),  c ~ N(0, sd_system_item),  e ~ N(0, sd_run)

Reliability of the mean score of a system over J items and R runs (the items shared by all
systems) is the generalizability coefficient

    rho(J, R) = s2_system / (s2_system + s2_system_item / J + s2_run / (J R)),

of which *consistency* (coefficient alpha's counterpart, one run) is ``rho(J, 1)`` and
*stability* (test-retest of system means over the same items) is
``(s2_system + s2_system_item / J) / (s2_system + (s2_system_item + s2_run) / J)``. See the
model card ``models/true_score.md`` for the derivations, priors, identification and the
validation evidence.

For complete data the likelihood of the variance components depends on the data only
through the four ANOVA sums of squares, independent scaled chi-squares once the grand mean
is integrated out under a flat prior (Box & Tiao 1973, ch. 5-6); that exact marginal
likelihood is used, so all quantities of a dataset fit in about a second. Quantities with
missing cells use the likelihood of the random-effects model for the observed scores, with
the system means as parameters and the item effects, interactions and run noise integrated
out exactly (per item, in closed form).

PyMC is imported only inside the functions that build and sample the model.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayesmeta.classical._select import rating_label
from bayesmeta.data.schema import validate
from bayesmeta.results import Result, TableView, bayes_summary, data_hash

COMPONENTS = ("system", "item", "system_item", "run")
ESTIMANDS = ("consistency", "stability", "sem", "items_needed",
             "sd_system", "sd_item", "sd_system_item", "sd_run")
METHODS = ("auto", "full")
#: Runs whose scores differ by at most this fraction of the quantity's SD are identical
#: (deterministic metric; differences that small are storage round-off, e.g. SummEval's
#: BLEU runs differ by at most 5e-10).
IDENTICAL_RTOL = 1e-8
_PAD_DF = np.array([8.0, 8.0, 8.0, 8.0])
_PAD_SS = np.array([8.0 * 5.0, 8.0 * 5.0, 8.0 * 3.0, 8.0 * 1.0])


# ============================================================================ design
@dataclass
class _Design:
    labels: list[str]
    kind: list[str]
    y: np.ndarray  # (Q, S, I, R) with NaN for missing and for runs a quantity lacks
    n_runs: np.ndarray  # (Q,) runs used (1 for ratings and single-run metrics)
    complete: np.ndarray  # (Q,) no missing cell among the used runs
    identical: np.ndarray  # (Q,) several runs, all identical (deterministic metric)
    scale: np.ndarray  # (Q,) SD of all observed values (ddof=1)
    center: np.ndarray  # (Q,) mean of all observed values
    systems: np.ndarray
    items: np.ndarray
    dropped: list[str]

    @property
    def free_run(self) -> np.ndarray:
        """Run noise is a free parameter (several runs, not identical)."""
        return (self.n_runs > 1) & ~self.identical


def _select_ratings(ds: xr.Dataset, raters: Any) -> list[tuple[str, str, str]]:
    rating = ds["rating"]
    pairs = [(str(r), str(t), rating_label(r, t))
             for r in rating["rater"].values for t in rating["trait"].values]
    if raters is None or raters is True:
        return pairs
    if isinstance(raters, str):
        raters = [raters]
    wanted: list[tuple[str, str, str]] = []
    for w in raters:
        hit = [p for p in pairs if w in (p[0], p[2])]
        if not hit:
            raise ValueError(
                f"raters: {w!r} is neither a rater (dim 'rater': "
                f"{', '.join(sorted({p[0] for p in pairs}))}) nor a '<rater>.<trait>' label "
                f"such as {pairs[0][2]!r}."
            )
        wanted += [p for p in hit if p not in wanted]
    return wanted


def _collect(data: xr.Dataset, metrics: Sequence[str] | None, raters: Any) -> _Design:
    validate(data, warn_missing=False)
    blocks: list[tuple[np.ndarray, list[str], str, int]] = []
    n_run_dim = data.sizes.get("run", 1)
    if metrics is not None and isinstance(metrics, str):
        metrics = [metrics]
    if "score" in data and (metrics is None or len(metrics)):
        score = data["score"]
        if metrics is not None:
            known = [str(m) for m in score["metric"].values]
            unknown = [m for m in metrics if str(m) not in known]
            if unknown:
                raise ValueError(f"metrics: unknown metric(s) {', '.join(map(repr, unknown))}; "
                                 f"not in dim 'metric'.")
            score = score.isel(metric=[known.index(str(m)) for m in metrics])
        arr = score.transpose("metric", "system", "item", "run").values.astype(float)
        blocks.append((arr, [str(m) for m in score["metric"].values], "metric", n_run_dim))
    elif metrics:
        raise ValueError("metrics: data has no 'score' variable, so metrics cannot be selected.")
    use_ratings = raters is not False and not (isinstance(raters, Sequence)
                                               and not isinstance(raters, str)
                                               and len(raters) == 0)
    if "rating" in data and use_ratings:
        picked = _select_ratings(data, raters)
        rating = data["rating"]
        vals = np.stack([rating.sel(rater=_coord(rating, "rater", r),
                                    trait=_coord(rating, "trait", t))
                         .transpose("system", "item").values.astype(float)
                         for r, t, _ in picked])
        blocks.append((vals[..., None], [p[2] for p in picked], "rating", 1))
    elif raters not in (None, False) and use_ratings:
        raise ValueError("raters: data has no 'rating' variable.")
    if not blocks:
        raise ValueError("nothing to analyse: no metrics and no ratings were selected.")
    R = max(b[0].shape[-1] for b in blocks)
    ys, labels, kinds, nr = [], [], [], []
    for arr, lab, kind, r in blocks:
        pad = np.full((*arr.shape[:3], R), np.nan)
        pad[..., : arr.shape[-1]] = arr
        ys.append(pad)
        labels += lab
        kinds += [kind] * len(lab)
        nr += [r] * len(lab)
    y = np.concatenate(ys, axis=0)
    n_runs = np.array(nr, dtype=int)
    # a quantity needs replicated cells to separate run noise; otherwise it is single-run
    for q in range(len(labels)):
        if n_runs[q] > 1 and not ((~np.isnan(y[q, :, :, : n_runs[q]])).sum(-1) >= 2).any():
            n_runs[q] = 1
        y[q, :, :, n_runs[q]:] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        scale = np.array([np.nanstd(v, ddof=1) for v in y])
        center = np.array([np.nanmean(v) for v in y])
    bad = ~(np.isfinite(scale) & (scale > 0))
    dropped = [labels[q] for q in np.flatnonzero(bad)]
    keep = np.flatnonzero(~bad)
    if not len(keep):
        raise ValueError(f"no quantity varies: {', '.join(dropped)} are constant, so their "
                         f"reliability is undefined.")
    y, n_runs, scale, center = y[keep], n_runs[keep], scale[keep], center[keep]
    labels = [labels[q] for q in keep]
    kinds = [kinds[q] for q in keep]
    complete = np.array([not np.isnan(y[q, :, :, : n_runs[q]]).any() for q in range(len(keep))])
    identical = np.zeros(len(keep), dtype=bool)
    for q in range(len(keep)):
        if n_runs[q] > 1:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # empty (missing) cells
                first = np.nanmean(y[q, :, :, : n_runs[q]], axis=-1, keepdims=True)
            dev = np.abs(y[q, :, :, : n_runs[q]] - first)
            identical[q] = bool(np.nanmax(dev) <= IDENTICAL_RTOL * scale[q])
    return _Design(labels, kinds, y, n_runs, complete, identical, scale, center,
                   np.asarray(data["system"].values), np.asarray(data["item"].values), dropped)


def _coord(da: xr.DataArray, dim: str, label: str) -> Any:
    vals = list(da[dim].values)
    return vals[[str(v) for v in vals].index(label)]


# ============================================================================ ANOVA
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
    >>> from bayesmeta.models.true_score import anova_ss
    >>> y = np.random.default_rng(0).normal(size=(5, 8, 2))
    >>> ss, df = anova_ss(y)
    >>> bool(np.isclose(ss.sum(), ((y - y.mean()) ** 2).sum())), df.tolist()
    (True, [4.0, 7.0, 28.0, 40.0])
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
    (returned as is). Returns an array (..., 4) in the order ``system, item, system_item,
    run``.
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
    >>> from bayesmeta.models.true_score import g_coefficient
    >>> round(float(g_coefficient(1.0, 4.0, 0.0, items=36)), 4)
    0.9
    """
    return s2_system / (s2_system + s2_system_item / items + s2_run / (items * runs))


def stability_coefficient(s2_system: Any, s2_system_item: Any, s2_run: Any, items: Any) -> Any:
    r"""Test-retest correlation of system means over the same ``items`` items, two runs.

    .. math:: \rho_{\mathrm{stab}} = \frac{\sigma^2_s + \sigma^2_{si}/J}
              {\sigma^2_s + (\sigma^2_{si} + \sigma^2_e)/J}
    """
    return (s2_system + s2_system_item / items) / (
        s2_system + (s2_system_item + s2_run) / items)


def _items_for(target: float, s2_system: Any, error_per_item: Any) -> Any:
    """Continuous J* solving rho(J*) = target for error variance ``error_per_item`` / J."""
    return target / (1 - target) * error_per_item / s2_system


# ============================================================================ model
#: Complete quantities are padded to a multiple of this, so that any dataset with up to 64
#: of them (SummEval has 55) reuses one compiled model. The block is always present (64
#: padding rows when every quantity has missing cells), so a fit with missing cells and
#: a method="full" fit of the same shape share one compiled model too.
BUCKET = 64


def _bucket(n: int) -> int:
    """Padded number of complete quantities (a positive multiple of :data:`BUCKET`)."""
    return int(BUCKET * max(1, np.ceil(n / BUCKET)))


def build_model(n_exact: int, n_full: int = 0, n_systems: int = 0, n_items: int = 0) -> Any:
    r"""Build the (data-free) PyMC model of ``n_exact`` complete and ``n_full`` incomplete
    quantities on the standardised scale; data enter through ``pm.Data`` containers.

    Variables (dim ``quantity`` of length ``n_exact + n_full``): ``sd_system``,
    ``sd_item``, ``sd_system_item``, ``sd_run``, each ``HalfNormal(1)`` in units of the
    quantity's total SD. Complete quantities add the exact ANOVA likelihood (potential
    ``anova_likelihood``). Incomplete ones add the grand level ``level`` (dim
    ``quantity_full``), the system contrasts ``system_raw`` (``quantity_full,
    system_contrast``) and the random-effects likelihood of the observed cell means with
    the item effects integrated out (potential ``cell_likelihood``), plus the within-cell
    run term (potential ``within_cell``).

    Data containers: ``free_run`` (Q,); ``n_run_exact``, ``n_sys_exact``,
    ``n_item_exact`` (n_exact,), ``ss``, ``df`` (n_exact, 4); ``cell_y``, ``cell_n``
    (n_full, n_systems, n_items; ``cell_n = 0`` marks a missing cell), ``ss_within``,
    ``df_within``, ``pncp_weight`` (n_full,), ``contrasts`` (n_systems, n_systems - 1).

    Notes
    -----
    System true means are :math:`\theta_s = \ell + \sigma_s^{w} (H\tilde a)_s` with
    :math:`H` an orthonormal basis of the contrasts (columns orthogonal to 1),
    :math:`\tilde a \sim N(0, \sigma_s^{1-w})` and a flat-like ``level`` :math:`\ell`, so
    that :math:`\theta` is :math:`N(\mu, \sigma^2_s)` with the grand mean integrated out.
    :math:`w` (``pncp_weight``) is the partial non-centring weight, 0 (centred) when the
    data pin the system means down and 1 (non-centred) when they do not; it is set to one
    minus the classical reliability of the system means, clipped to [0, 1]
    (Papaspiliopoulos, Roberts & Sköld 2007). For item :math:`i`, with
    :math:`r_{si} = \bar y_{si} - \theta_s`, :math:`v_{si} = \sigma^2_{si} +
    \sigma^2_e/n_{si}` and :math:`d_{si} = 1/v_{si}` over observed cells, the item effect
    integrates out in closed form (Sherman-Morrison):

    .. math::
        -2\log p_i = \sum_s \log(2\pi v_{si}) + \log q_i + \sum_s d_{si} r_{si}^2
                     - \sigma^2_i z_i^2 / q_i,\quad q_i = 1 + \sigma^2_i \sum_s d_{si},
                     \quad z_i = \sum_s d_{si} r_{si}.
    """
    import pymc as pm
    import pytensor.tensor as pt

    Q = n_exact + n_full
    coords: dict[str, Any] = {"quantity": np.arange(Q)}
    if n_full:
        coords.update(quantity_full=np.arange(n_full), system=np.arange(n_systems),
                      system_contrast=np.arange(n_systems - 1))
    with pm.Model(coords=coords) as model:
        free_run = pm.Data("free_run", np.ones(Q))
        sd_system = pm.HalfNormal("sd_system", 1.0, dims="quantity")
        sd_item = pm.HalfNormal("sd_item", 1.0, dims="quantity")
        sd_si = pm.HalfNormal("sd_system_item", 1.0, dims="quantity")
        sd_run = pm.HalfNormal("sd_run", 1.0, dims="quantity")
        s2_e = free_run * sd_run**2
        s2_e_safe = pt.switch(free_run > 0, s2_e, 1.0)
        if n_exact:
            ex = slice(0, n_exact)
            ss = pm.Data("ss", np.tile(_PAD_SS, (n_exact, 1)))
            df = pm.Data("df", np.tile(_PAD_DF, (n_exact, 1)))
            S = pm.Data("n_sys_exact", np.full(n_exact, 2.0))
            I = pm.Data("n_item_exact", np.full(n_exact, 2.0))
            R = pm.Data("n_run_exact", np.full(n_exact, 2.0))
            lam_si = s2_e[ex] + R * sd_si[ex] ** 2
            lam = pt.stack([
                lam_si + I * R * sd_system[ex] ** 2,
                lam_si + S * R * sd_item[ex] ** 2,
                lam_si,
                s2_e_safe[ex],
            ], axis=1)
            # rows with a fixed (zero) or absent run component carry df = ss = 0 there
            pm.Potential("anova_likelihood", pt.sum(-0.5 * df * pt.log(lam) - 0.5 * ss / lam))
        if n_full:
            fu = slice(n_exact, Q)
            y = pm.Data("cell_y", np.zeros((n_full, n_systems, n_items)))
            n = pm.Data("cell_n", np.zeros((n_full, n_systems, n_items)))
            ssw = pm.Data("ss_within", np.zeros(n_full))
            dfw = pm.Data("df_within", np.zeros(n_full))
            wgt = pm.Data("pncp_weight", np.ones(n_full))
            H = pm.Data("contrasts", _helmert(n_systems))
            level = pm.Normal("level", 0.0, 10.0, dims="quantity_full")
            sd_s = sd_system[fu][:, None]
            raw = pm.Normal("system_raw", 0.0, sd_s ** (1.0 - wgt[:, None]),
                            dims=("quantity_full", "system_contrast"))
            theta = level[:, None] + sd_s ** wgt[:, None] * pt.dot(raw, H.T)
            obs = n > 0
            s2i = (sd_item[fu] ** 2)[:, None]
            v = (sd_si[fu] ** 2)[:, None, None] + s2_e[fu][:, None, None] / pt.maximum(n, 1.0)
            d = pt.switch(obs, 1.0 / v, 0.0)
            r = pt.switch(obs, y - theta[:, :, None], 0.0)
            dr = d * r
            z = dr.sum(axis=1)
            q = 1.0 + s2i * d.sum(axis=1)
            pm.Potential("cell_likelihood", -0.5 * (
                pt.switch(obs, pt.log(2 * np.pi * v), 0.0).sum() + pt.log(q).sum()
                + (dr * r).sum() - (s2i * z**2 / q).sum()))
            pm.Potential("within_cell", pt.sum(
                -0.5 * dfw * pt.log(s2_e_safe[fu]) - 0.5 * ssw / s2_e_safe[fu]))
    return model


def _helmert(n: int) -> np.ndarray:
    """Orthonormal basis (n, n - 1) of the vectors that sum to zero."""
    if n < 2:
        return np.zeros((n, 0))
    basis = np.linalg.qr(np.eye(n) - 1.0 / n, mode="reduced")[0][:, : n - 1]
    return basis


def _anova_table(design: _Design) -> dict[str, np.ndarray]:
    """Sums of squares and df (original scale) of every complete quantity (NaN otherwise);
    identical runs get an exact zero within-cell sum of squares."""
    Q = len(design.labels)
    anova = {"ss": np.full((Q, 4), np.nan), "df": np.full((Q, 4), np.nan)}
    for q in np.flatnonzero(design.complete):
        s, d = anova_ss(design.y[q, :, :, : design.n_runs[q]])
        if design.identical[q]:
            s[3] = 0.0
        anova["ss"][q], anova["df"][q] = s, d
    return anova


def _model_data(design: _Design, anova: dict[str, np.ndarray], exact_idx: np.ndarray,
                full_idx: np.ndarray, n_pad: int, full_shape: tuple[int, int, int],
                ) -> dict[str, np.ndarray]:
    """Values of the model's pm.Data containers (standardised scale)."""
    qf_pad, s_pad, i_pad = full_shape
    Q = n_pad + qf_pad
    S, I = design.y.shape[1], design.y.shape[2]
    free = np.ones(Q)
    free[: len(exact_idx)] = design.free_run[exact_idx]
    free[n_pad: n_pad + len(full_idx)] = design.free_run[full_idx]
    data: dict[str, np.ndarray] = {"free_run": free}
    if n_pad:
        ss = np.tile(_PAD_SS, (n_pad, 1))
        df = np.tile(_PAD_DF, (n_pad, 1))
        for k, q in enumerate(exact_idx):
            s, d = anova["ss"][q].copy(), anova["df"][q].copy()
            if not design.free_run[q]:
                s[3] = d[3] = 0.0
            ss[k] = s / design.scale[q] ** 2
            df[k] = d
        n_run = np.full(n_pad, 2.0)
        n_run[: len(exact_idx)] = design.n_runs[exact_idx]
        data.update(ss=ss, df=df, n_run_exact=n_run, n_sys_exact=np.r_[
            np.full(len(exact_idx), float(S)), np.full(n_pad - len(exact_idx), 2.0)],
                    n_item_exact=np.r_[np.full(len(exact_idx), float(I)),
                                       np.full(n_pad - len(exact_idx), 2.0)])
    if qf_pad:
        cy = np.zeros((qf_pad, s_pad, i_pad))
        cn = np.zeros((qf_pad, s_pad, i_pad))
        ssw = np.zeros(qf_pad)
        dfw = np.zeros(qf_pad)
        for k, q in enumerate(full_idx):
            z = (design.y[q, :, :, : design.n_runs[q]] - design.center[q]) / design.scale[q]
            cnt = (~np.isnan(z)).sum(-1)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                m = np.nanmean(z, axis=-1)
            cy[k, :S, :I] = np.where(cnt > 0, m, 0.0)
            cn[k, :S, :I] = cnt
            if design.free_run[q]:
                ssw[k] = float(np.nansum((z - m[..., None]) ** 2))
                dfw[k] = float((cnt[cnt > 0] - 1).sum())
        data.update(cell_y=cy, cell_n=cn, ss_within=ssw, df_within=dfw,
                    pncp_weight=_pncp_weights(cy, cn, len(full_idx)),
                    contrasts=_helmert(s_pad))
    return data


def _pncp_weights(cy: np.ndarray, cn: np.ndarray, n_real: int) -> np.ndarray:
    """1 - classical reliability of the system means (pairwise alpha of the cell means),
    clipped to [0, 1]; 1 (non-centred) for padding and where alpha is undefined."""
    from bayesmeta.classical.reliability import cronbach_alpha

    out = np.ones(cy.shape[0])
    for k in range(n_real):
        cells = np.where(cn[k] > 0, cy[k], np.nan)
        cells = cells[:, ~np.isnan(cells).all(axis=0)]
        with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            alpha = float(cronbach_alpha(cells)) if cells.shape[1] >= 2 else np.nan
        out[k] = 1.0 - np.clip(alpha, 0.0, 1.0) if np.isfinite(alpha) else 1.0
    return out


def _full_shape(n_full: int, S: int, I: int) -> tuple[int, int, int]:
    """Padded (quantities, systems, items) of the random-effects block: quantities and items
    to multiples of 8 (padding has no observed cells), systems exactly."""
    if not n_full:
        return (0, 0, 0)
    return (int(8 * np.ceil(n_full / 8)), int(S), int(8 * np.ceil(I / 8)))


# ============================================================================ results
class TrueScoreResult(Result):
    """Posterior and classical reliability of every metric and rater x trait.

    Returned by :func:`reliability`. ``summary()`` is indexed by ``(quantity, estimand)``
    with estimands ``consistency``, ``stability`` (quantities with several runs), ``sem``,
    ``items_needed``, ``sd_system``, ``sd_item``, ``sd_system_item`` and ``sd_run``.
    """

    _SECTIONS = (
        ("consistency", "Consistency of system means over {J} items, one run "
                        "(Bayesian coefficient alpha)"),
        ("stability", "Stability of system means across runs, same {J} items (test-retest)"),
        ("sem", "Standard error of measurement of a system mean (one run, {J} items; "
                "score units)"),
        ("items_needed", "Items needed for reliability {target} with one run"),
    )

    def _state(self) -> dict[str, Any]:
        return {"target": self.target, "n_items": self.n_items, "n_systems": self.n_systems}

    def _restore(self, state: dict[str, Any]) -> None:
        self.target = float(state["target"])
        self.n_items = int(state["n_items"])
        self.n_systems = int(state["n_systems"])

    def _body(self) -> str:
        tab = self._table
        parts = []
        shown_cols = [c for c in ("classical", "metriceval", "mean", "median", "sd", "hdi_low",
                                  "hdi_high", "r_hat", "ess_bulk", "ess_tail") if c in tab.columns]
        for est, title in self._SECTIONS:
            sub = tab.xs(est, level="estimand") if est in tab.index.get_level_values(
                "estimand") else None
            if sub is None or not len(sub):
                continue
            # items needed has a long right tail: show the median, not the mean and SD
            drop = ({"metriceval", "mean", "sd"} if est == "items_needed" else {"median"})
            cols = [c for c in shown_cols if c not in drop]
            parts.append(title.format(J=self.n_items, target=f"{self.target:g}"))
            parts.append(self._format_table(sub[cols]))
            parts.append("")
        comp = tab[tab.index.get_level_values("estimand").str.startswith("sd_")]
        if len(comp):
            wide = comp["mean"].unstack("estimand")
            wide = wide[[c for c in ("sd_system", "sd_item", "sd_system_item", "sd_run")
                         if c in wide.columns]]
            wide.columns = [c.removeprefix("sd_") for c in wide.columns]
            wide = wide.loc[[q for q in dict.fromkeys(comp.index.get_level_values("quantity"))]]
            parts.append("Variance components: posterior mean SDs in score units "
                         "(classical ANOVA values and intervals in summary())")
            parts.append(self._format_table(wide))
        return "\n".join(parts).rstrip()

    def plot(self, ax: Any = None, column: str | None = None, *,
             estimand: str = "consistency") -> Any:
        """Forest plot of one estimand over all quantities: posterior mean with its HDI
        (dot and line) and the classical ANOVA estimate (cross). Returns the Figure."""
        from bayesmeta.plots import plot_forest

        levels = self._table.index.get_level_values("estimand")
        if estimand not in set(levels):
            raise ValueError(f"estimand must be one of {', '.join(dict.fromkeys(levels))}, "
                             f"got {estimand!r}.")
        view = TableView(self._table.xs(estimand, level="estimand"),
                          f"{self.title}: {estimand}", self.ci_prob)
        return plot_forest(view, ax=ax, column=column).figure

    def decision_study(self, items: Sequence[int] | None = None,
                       runs: Sequence[int] | None = None, **kwargs: Any) -> DecisionStudyResult:
        """Shorthand for :func:`decision_study` on this fit."""
        return decision_study(self, items=items, runs=runs, **kwargs)


class DecisionStudyResult(Result):
    """Reliability of system means against the number of items and runs (a D study).

    ``summary()`` is indexed by ``(quantity, runs, items)``; :meth:`items_needed` gives the
    number of items needed for the target reliability per quantity and number of runs.
    """

    def _state(self) -> dict[str, Any]:
        return {"target": self.target}

    def _restore(self, state: dict[str, Any]) -> None:
        self.target = float(state["target"])

    def items_needed(self) -> pd.DataFrame:
        """Items needed for the target reliability, indexed by ``(quantity, runs)``:
        ``classical`` (ANOVA plug-in), ``mean``, ``sd``, ``hdi_low``, ``hdi_high``,
        ``median`` of the posterior of the (rounded-up) number of items."""
        ds = self.extra["items_needed"]
        out = ds.to_dataframe()
        out["quantity"] = out["quantity"].astype(str)
        out = out.set_index(["quantity", "runs"])
        out = out[[c for c in ("classical", "mean", "sd", "hdi_low", "hdi_high", "median",
                               "r_hat", "ess_bulk", "ess_tail") if c in out.columns]]
        return out

    def _body(self) -> str:
        need = self.items_needed()
        parts = [f"Items needed for reliability {self.target:g}",
                 self._format_table(need), "",
                 "Reliability of system means by number of items (and runs)",
                 self._format_table(self._table)]
        return "\n".join(parts)

    def plot(self, ax: Any = None, column: str | None = None, *,
             quantities: Sequence[str] | None = None, runs: Sequence[int] | None = None) -> Any:
        """Decision-study curves: posterior mean reliability against the number of items,
        with HDI bands, the classical plug-in curve (dashed) and the target line. Returns
        the Figure."""
        from bayesmeta.plots import plot_decision_curve

        return plot_decision_curve(self, ax=ax, quantities=quantities, runs=runs).figure


# ============================================================================ public API
def reliability(
    data: xr.Dataset,
    metrics: Sequence[str] | None = None,
    raters: Sequence[str] | bool | None = None,
    target: float = 0.9,
    *,
    method: str = "auto",
    ci_prob: float = 0.94,
    draws: int = 1000,
    tune: int = 1000,
    chains: int = 4,
    cores: int | None = None,
    sampler: str = "nutpie",
    fast: bool = False,
    random_seed: int | None = None,
    progressbar: bool | None = None,
    target_accept: float | None = None,
) -> TrueScoreResult:
    r"""Posterior reliability of metrics and raters next to the classical estimates.

    Fits the true-score (generalizability) model ``y[s,i,r] = mu + a_s + b_i + c_si +
    e_sir`` to every metric and every rater x trait in one vectorised model, and reports
    for each: consistency of system means over the J items of the data (coefficient
    alpha's Bayesian counterpart), stability across runs (test-retest; metrics with
    several runs), the standard error of measurement of a system mean, the number of items
    needed for ``target`` reliability, and the four variance components.

    .. math::
        \mathrm{consistency} &= \frac{\sigma^2_s}{\sigma^2_s + (\sigma^2_{si}+\sigma^2_e)/J},
        \qquad
        \mathrm{stability} = \frac{\sigma^2_s + \sigma^2_{si}/J}
                                  {\sigma^2_s + (\sigma^2_{si}+\sigma^2_e)/J}, \\
        \mathrm{SEM} &= \sqrt{(\sigma^2_{si}+\sigma^2_e)/J}, \qquad
        J^* = \Big\lceil \frac{t}{1-t}\,\frac{\sigma^2_{si}+\sigma^2_e}{\sigma^2_s}\Big\rceil

    The ``classical`` column holds the ANOVA (generalizability-theory) plug-in estimates;
    with one run the consistency plug-in equals coefficient alpha (Hoyt 1941) and the SEM
    plug-in equals MetricEval's :math:`s_X\sqrt{1-\alpha}`. The ``metriceval`` column
    holds MetricEval's own estimators (alpha and SEM of the first run,
    pairwise-complete; Pearson test-retest of run means), which coincide with the
    ``classical`` column for deterministic and single-run quantities.

    Parameters
    ----------
    data : xarray.Dataset
        A bayesmeta dataset with ``score`` and/or ``rating``.
    metrics : list of str, optional
        Metrics to fit (default all; ``[]`` for none).
    raters : list of str or bool, optional
        Ratings to fit: None or True for every rater x trait, False or ``[]`` for none, or
        a list of raters (``"Expert.1"``: all its traits) and ``"<rater>.<trait>"`` labels.
        Ratings are single-run scores.
    target : float
        Target reliability of the items-needed estimate.
    method : {"auto", "full"}
        ``"auto"``: exact ANOVA marginal likelihood for complete quantities and the
        random-effects model for quantities with missing cells; ``"full"``: the
        random-effects model for all (slower; same posterior on complete data).
    ci_prob : float
        Probability of the highest-density intervals.
    draws, tune, chains, cores, sampler, fast, random_seed, progressbar, target_accept
        Passed to :func:`bayesmeta.sampling.sample` (``fast=True``: 2 chains x 300 draws,
        a preview). ``target_accept`` defaults to 0.8, and to 0.9 when some quantity uses
        the random-effects likelihood (its system means make the geometry harder).

    Returns
    -------
    TrueScoreResult
        ``summary()`` indexed by ``(quantity, estimand)`` with columns ``kind``,
        ``classical``, ``metriceval``, ``mean``, ``median``, ``sd``, ``hdi_low``,
        ``hdi_high``, ``r_hat``, ``ess_bulk``, ``ess_tail``; ``.idata`` with the posterior of the
        variance components and of every derived quantity (dim ``quantity``).

    Notes
    -----
    Runs that are identical (deterministic metrics) make the run variance exactly zero:
    its likelihood is unbounded at zero and the posterior would be improper, so the run
    SD is fixed at 0 and stability is exactly 1. With one run the system x item
    interaction and the run noise are not separable; their sum is reported as
    ``sd_system_item``. Constant quantities are left out with a note. See
    ``models/true_score.md``.

    References
    ----------
    Box, G. E. P. & Tiao, G. C. (1973). *Bayesian Inference in Statistical Analysis*,
    ch. 5-6. Brennan, R. L. (2001). *Generalizability Theory*. Hoyt, C. (1941). Test
    reliability estimated by analysis of variance. *Psychometrika* 6. Xiao et al. (2023),
    *Evaluating Evaluation Metrics*, Sec. 3.1, 4.1.1.

    Examples
    --------
    >>> import bayesmeta as bm  # doctest: +SKIP
    >>> fit = bm.reliability(bm.datasets.summeval(), fast=True, random_seed=1)  # doctest: +SKIP
    >>> fit.summary().loc[("METEOR", "consistency"), ["classical", "mean"]]  # doctest: +SKIP
    classical    0.966124
    mean         0.967...

    R equivalent: ``gtheory::gstudy`` / ``lme4::lmer(y ~ (1|system) + (1|item) +
    (1|system:item))`` for the classical components; ``brms`` for the posterior.
    """
    from bayesmeta.classical.reliability import consistency as _alpha
    from bayesmeta.classical.reliability import stability as _retest
    from bayesmeta.sampling import (
        ConvergenceWarning,
        cached_model,
        check_convergence,
        describe_run,
        diagnose,
        sample,
    )

    if not 0 < target < 1:
        raise ValueError(f"target must be in (0, 1), got {target}.")
    if not 0 < ci_prob < 1:
        raise ValueError(f"ci_prob must be in (0, 1), got {ci_prob}.")
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(map(repr, METHODS))}, "
                         f"got {method!r}.")
    design = _collect(data, metrics, raters)
    Q = len(design.labels)
    S, I = design.y.shape[1], design.y.shape[2]
    if method == "full":
        exact_idx = np.array([], dtype=int)
        full_idx = np.arange(Q)
    else:
        exact_idx = np.flatnonzero(design.complete)
        full_idx = np.flatnonzero(~design.complete)
    n_pad = _bucket(len(exact_idx))
    full_shape = _full_shape(len(full_idx), S, I)
    key = ("true_score", n_pad, *full_shape)
    model = cached_model(key, lambda: build_model(n_pad, *full_shape))
    anova = _anova_table(design)
    mdata = _model_data(design, anova, exact_idx, full_idx, n_pad, full_shape)
    dhash = data_hash(data)
    if target_accept is None:
        target_accept = 0.9 if len(full_idx) else 0.8
    idata = sample(model, data=mdata, draws=draws, tune=tune, chains=chains, cores=cores,
                   sampler=sampler, fast=fast, random_seed=random_seed,
                   progressbar=progressbar, target_accept=target_accept,
                   attrs={"model": "true_score", "data_hash": dhash})

    # ---- posterior on the original scale, relabelled, padding dropped
    positions = np.empty(Q, dtype=int)
    positions[exact_idx] = np.arange(len(exact_idx))
    positions[full_idx] = n_pad + np.arange(len(full_idx))
    raw = idata.posterior
    qcoords = {"quantity": design.labels, "kind": ("quantity", design.kind)}
    scale = xr.DataArray(design.scale, dims="quantity", coords=qcoords)
    free = xr.DataArray(design.free_run, dims="quantity", coords=qcoords)
    multi = xr.DataArray(design.n_runs > 1, dims="quantity", coords=qcoords)

    def pick(name: str) -> xr.DataArray:
        da = raw[name].isel(quantity=positions)
        return da.assign_coords(quantity=design.labels, kind=("quantity", design.kind))

    s2 = {c: (pick(f"sd_{c}") * scale) ** 2 for c in ("system", "item", "system_item", "run")}
    s2["run"] = s2["run"].where(free, 0.0)
    post = _derived(s2, J=I, target=target, multi=multi)
    post.attrs = dict(raw.attrs)
    idata.posterior = post
    # ---- summaries
    names = [n for n in ESTIMANDS if n in post]
    diag = diagnose(post[names])
    long = bayes_summary(post, names, ci_prob=ci_prob, diagnostics=diag)
    long = long.rename(columns={"variable": "estimand"}).drop(columns=["kind"], errors="ignore")
    med = post[names].median(("chain", "draw"))
    long["median"] = np.concatenate([med[n].values.ravel() for n in names])
    classical = _classical_table(design, anova, exact_idx, I, target)
    metric_labels = [lab for lab, k in zip(design.labels, design.kind, strict=True)
                     if k == "metric"]
    rating_labels = [lab for lab, k in zip(design.labels, design.kind, strict=True)
                     if k == "rating"]
    me = _metriceval_table(data, metric_labels, rating_labels, _alpha, _retest)
    table = long.merge(classical, on=["quantity", "estimand"], how="left")
    table = table.merge(me, on=["quantity", "estimand"], how="left")
    table["kind"] = table["quantity"].map(dict(zip(design.labels, design.kind, strict=True)))
    incomplete = ~table["quantity"].map(dict(zip(design.labels, design.complete,
                                                 strict=True))).astype(bool)
    fill = incomplete & table["estimand"].isin(["consistency", "stability", "sem"])
    table.loc[fill, "classical"] = table.loc[fill, "metriceval"]
    need = incomplete & (table["estimand"] == "items_needed")
    if need.any():
        from bayesmeta.classical.reliability import items_needed as _sb_items

        alpha = table[table["estimand"] == "consistency"].set_index("quantity")["metriceval"]
        table.loc[need, "classical"] = _sb_items(
            table.loc[need, "quantity"].map(alpha).to_numpy(dtype=float), I, target=target)
    applicable = ~(table["estimand"].isin(["stability", "sd_run"])
                   & ~table["quantity"].map(dict(zip(design.labels, design.n_runs > 1,
                                                     strict=True))).astype(bool))
    table = table[applicable]
    order_q = {lab: k for k, lab in enumerate(design.labels)}
    order_e = {e: k for k, e in enumerate(ESTIMANDS)}
    table = table.assign(_q=table["quantity"].map(order_q), _e=table["estimand"].map(order_e))
    table = table.sort_values(["_q", "_e"]).drop(columns=["_q", "_e"])
    table = table.set_index(["quantity", "estimand"])
    table = table[["kind", "classical", "metriceval", "mean", "median", "sd", "hdi_low",
                   "hdi_high", "r_hat", "ess_bulk", "ess_tail"]]

    report = check_convergence(idata, [n for n in names if n != "items_needed"],
                               diagnostics=diag, warn=False)
    for message in report.messages:
        warnings.warn(message, ConvergenceWarning, stacklevel=2)
    notes = list(report.messages)
    n_ident = int(design.identical.sum())
    if n_ident:
        notes.append(f"{n_ident} metric(s) gave identical scores in every run (deterministic): "
                     f"their run SD is fixed at 0 and stability is exactly 1.")
    n_single = int((design.n_runs == 1).sum())
    if n_single:
        notes.append(f"{n_single} quantit{'y has' if n_single == 1 else 'ies have'} one run "
                     f"(ratings count as one run): interaction and run noise are not "
                     f"separable, so sd_system_item is their sum and stability is not "
                     f"estimated.")
    if len(full_idx) and method == "auto":
        notes.append(f"{len(full_idx)} quantit{'y has' if len(full_idx) == 1 else 'ies have'} "
                     f"missing cells and used the random-effects likelihood; their classical "
                     f"column holds MetricEval's pairwise-complete estimators.")
    if design.dropped:
        notes.append(f"left out (constant, reliability undefined): {', '.join(design.dropped)}.")
        warnings.warn(f"reliability: left out constant quantities {', '.join(design.dropped)}.",
                      UserWarning, stacklevel=2)
    lik = []
    if len(exact_idx):
        lik.append(f"exact ANOVA marginal (Box & Tiao) for {len(exact_idx)} complete")
    if len(full_idx):
        lik.append(f"random effects for {len(full_idx)} "
                   f"{'incomplete' if method == 'auto' else ''}".rstrip())
    n_met, n_rat = len(metric_labels), len(rating_labels)
    info = {
        "data": (f"{S} systems x {I} items; {n_met} metric(s)"
                 + (f" x {int(design.n_runs[np.array(design.kind) == 'metric'].max())} run(s)"
                    if n_met else "") + f"; {n_rat} rater x trait rating(s)"),
        "model": "true_score: y = mu + system + item + system x item + run noise",
        "likelihood": "; ".join(lik) + " quantities",
        "priors": "sd_* ~ HalfNormal(1 x total SD of the quantity)",
        "sampler": describe_run(idata),
        "convergence": str(report),
        "classical": "ANOVA (G-theory) plug-in; equals coefficient alpha with one run",
        "data hash": dhash,
    }
    res = TrueScoreResult(table, title="True-score reliability (generalizability model)",
                          info=info, idata=idata,
                          extra={"design": _design_dataset(design, anova)},
                          notes=notes, ci_prob=ci_prob)
    res.target, res.n_items, res.n_systems = float(target), int(I), int(S)
    return res


def _derived(s2: dict[str, xr.DataArray], *, J: int, target: float,
             multi: xr.DataArray) -> xr.Dataset:
    err = s2["system_item"] + s2["run"]
    out = xr.Dataset({
        "sd_system": np.sqrt(s2["system"]),
        "sd_item": np.sqrt(s2["item"]),
        "sd_system_item": np.sqrt(s2["system_item"]),
        "sd_run": np.sqrt(s2["run"]).where(multi),
        "consistency": g_coefficient(s2["system"], s2["system_item"], s2["run"], J),
        "stability": stability_coefficient(s2["system"], s2["system_item"], s2["run"],
                                           J).where(multi),
        "sem": np.sqrt(err / J),
        "items_needed": np.ceil(_items_for(target, s2["system"], err) - 1e-9),
    })
    out["items_needed"].attrs["target"] = target
    return out.transpose("chain", "draw", "quantity")


def _classical_table(design: _Design, anova: dict[str, np.ndarray], exact_idx: np.ndarray,
                     J: int, target: float) -> pd.DataFrame:
    """ANOVA plug-in estimates for complete quantities (NaN for the others)."""
    from bayesmeta.classical.reliability import items_needed

    Q = len(design.labels)
    S = design.y.shape[1]
    comp = np.full((Q, 4), np.nan)
    complete = ~np.isnan(anova["ss"]).any(axis=1)
    comp[complete] = variance_components(anova["ss"][complete], anova["df"][complete], S, J,
                                         design.n_runs[complete])
    s2_s, s2_i, s2_si, s2_e = comp.T
    cons = g_coefficient(s2_s, s2_si, s2_e, J)
    with np.errstate(invalid="ignore"):
        rows = {
            "consistency": cons,
            "stability": stability_coefficient(s2_s, s2_si, s2_e, J),
            "sem": np.sqrt((s2_si + s2_e) / J),
            "items_needed": items_needed(cons, J, target=target),
            "sd_system": np.sqrt(np.clip(s2_s, 0, None)),
            "sd_item": np.sqrt(np.clip(s2_i, 0, None)),
            "sd_system_item": np.sqrt(np.clip(s2_si, 0, None)),
            "sd_run": np.sqrt(np.clip(s2_e, 0, None)),
        }
    frames = [pd.DataFrame({"quantity": design.labels, "estimand": est, "classical": v})
              for est, v in rows.items()]
    return pd.concat(frames, ignore_index=True)


def _metriceval_table(data: xr.Dataset, metric_labels: list[str], rating_labels: list[str],
                      alpha_fn: Any, retest_fn: Any) -> pd.DataFrame:
    """MetricEval's estimators: alpha and SEM of the first run, Pearson test-retest."""
    rows = []
    if metric_labels or rating_labels:
        cons = alpha_fn(data, metrics=metric_labels, ratings=rating_labels or False).summary()
        for q, row in cons.iterrows():
            rows.append((q, "consistency", row["classical"]))
            rows.append((q, "sem", row["sem"]))
    if metric_labels and data.sizes.get("run", 1) > 1:
        st = retest_fn(data, metrics=metric_labels).summary()
        rows += [(q, "stability", v) for q, v in st["classical"].items()]
    return pd.DataFrame(rows, columns=["quantity", "estimand", "metriceval"])


def _design_dataset(design: _Design, anova: dict[str, np.ndarray]) -> xr.Dataset:
    return xr.Dataset(
        {
            "n_runs": ("quantity", design.n_runs.astype("int64")),
            "complete": ("quantity", design.complete.astype("int64")),
            "identical_runs": ("quantity", design.identical.astype("int64")),
            "scale": ("quantity", design.scale),
            "ss": (("quantity", "component"), anova["ss"]),
            "df": (("quantity", "component"), anova["df"]),
        },
        coords={"quantity": design.labels, "kind": ("quantity", design.kind),
                "component": list(COMPONENTS)},
        attrs={"n_systems": int(design.y.shape[1]), "n_items": int(design.y.shape[2])},
    )


def decision_study(
    fit: TrueScoreResult,
    items: Sequence[int] | None = None,
    runs: Sequence[int] | None = None,
    *,
    target: float | None = None,
    quantities: Sequence[str] | None = None,
    ci_prob: float | None = None,
) -> DecisionStudyResult:
    r"""Decision study: posterior reliability of system means for other test designs.

    For each posterior draw of the variance components, the generalizability coefficient
    of a system mean over :math:`J'` items and :math:`R'` runs,

    .. math:: \rho(J', R') = \frac{\sigma^2_s}{\sigma^2_s + \sigma^2_{si}/J' +
              \sigma^2_e/(J'R')},

    and the number of items needed for the target reliability with :math:`R'` runs,
    :math:`J^*(R') = \lceil t\,(\sigma^2_{si} + \sigma^2_e/R') / ((1-t)\,\sigma^2_s)\rceil`.
    ``rho(J, 1)`` is the consistency of :func:`reliability`; with one run it is the
    Spearman-Brown projection of alpha.

    Parameters
    ----------
    fit : TrueScoreResult
        A fit of :func:`reliability` (or one loaded with :func:`bayesmeta.load`).
    items : list of int, optional
        Numbers of items (default 10, 20, 50, 100, 200, 500, 1000 and the data's J).
    runs : list of int, optional
        Numbers of runs (default 1, 2, 4 when some quantity has several runs, else 1).
        Quantities with one run in the data support only ``runs = 1``; their other rows
        are left out.
    target : float, optional
        Target reliability (default the fit's).
    quantities : list of str, optional
        Quantities to include (default all).
    ci_prob : float, optional
        HDI probability (default the fit's).

    Returns
    -------
    DecisionStudyResult
        ``summary()`` indexed by ``(quantity, runs, items)`` with ``classical`` (ANOVA
        plug-in), ``mean``, ``sd``, ``hdi_low``, ``hdi_high``, ``r_hat``, ``ess_bulk``,
        ``ess_tail``; ``items_needed()``; ``plot()`` draws the curves with bands.

    References
    ----------
    Brennan, R. L. (2001). *Generalizability Theory*, ch. 4. Xiao et al. (2023), Fig. 3.

    Examples
    --------
    >>> import bayesmeta as bm  # doctest: +SKIP
    >>> fit = bm.reliability(bm.datasets.summeval(), raters=False, fast=True)  # doctest: +SKIP
    >>> ds = bm.decision_study(fit, items=range(10, 101, 10), runs=[1])  # doctest: +SKIP
    >>> ds.items_needed().loc[("G.EVAL.4.COH", 1)]  # doctest: +SKIP

    R equivalent: ``gtheory::dstudy``.
    """
    from bayesmeta.sampling import diagnose, set_attrs

    if not isinstance(fit, TrueScoreResult) or fit.idata is None:
        raise TypeError("fit must be a TrueScoreResult from bm.reliability(), got "
                        f"{type(fit).__name__}.")
    target = fit.target if target is None else float(target)
    if not 0 < target < 1:
        raise ValueError(f"target must be in (0, 1), got {target}.")
    ci_prob = fit.ci_prob if ci_prob is None else float(ci_prob)
    design = fit.extra["design"]
    post = fit.idata.posterior
    labels = [str(q) for q in post["quantity"].values]
    if quantities is not None:
        unknown = [q for q in quantities if q not in labels]
        if unknown:
            raise ValueError(f"quantities: unknown {', '.join(map(repr, unknown))}; the fit "
                             f"has {', '.join(labels[:5])}{' ...' if len(labels) > 5 else ''}.")
        post = post.sel(quantity=list(quantities))
        design = design.sel(quantity=list(quantities))
        labels = list(quantities)
    J = int(design.attrs["n_items"])
    n_runs = design["n_runs"].values
    if items is None:
        items = sorted({10, 20, 50, 100, 200, 500, 1000, J})
    if runs is None:
        runs = [1, 2, 4] if (n_runs > 1).any() else [1]
    items = [int(v) for v in items]
    runs = [int(v) for v in runs]
    for name, vals in (("items", items), ("runs", runs)):
        if not vals or min(vals) < 1:
            raise ValueError(f"{name} must be a non-empty list of positive integers, got {vals}.")
    item_da = xr.DataArray(items, dims="items", coords={"items": items})
    run_da = xr.DataArray(runs, dims="runs", coords={"runs": runs})
    s2_s = post["sd_system"] ** 2
    s2_si = post["sd_system_item"] ** 2
    s2_e = (post["sd_run"] ** 2).fillna(0.0)
    ok = (xr.DataArray(n_runs > 1, dims="quantity", coords={"quantity": labels})
          | (run_da == 1))
    rho = g_coefficient(s2_s, s2_si, s2_e, item_da, run_da).where(ok)
    need = np.ceil(_items_for(target, s2_s, s2_si + s2_e / run_da) - 1e-9).where(ok)
    dpost = xr.Dataset({"reliability": rho.transpose("chain", "draw", "quantity", "runs",
                                                     "items"),
                        "items_needed": need.transpose("chain", "draw", "quantity", "runs")})
    dpost.attrs = dict(post.attrs)

    # classical plug-ins from the saved ANOVA table (NaN for incomplete quantities)
    comp = variance_components(design["ss"].values, design["df"].values,
                               int(design.attrs["n_systems"]), J, n_runs)
    cs = xr.DataArray(comp, dims=("quantity", "component"),
                      coords={"quantity": labels, "component": list(COMPONENTS)})
    c_rho = g_coefficient(cs.sel(component="system"), cs.sel(component="system_item"),
                          cs.sel(component="run"), item_da, run_da).where(ok)
    with np.errstate(invalid="ignore", divide="ignore"):
        c_need = xr.apply_ufunc(
            lambda s, si, e, r: np.where(s > 0, np.ceil(_items_for(target, s, si + e / r)
                                                         - 1e-9), np.nan),
            cs.sel(component="system"), cs.sel(component="system_item"),
            cs.sel(component="run"), run_da).where(ok)

    diag = diagnose(dpost)
    long = bayes_summary(dpost, ["reliability"], ci_prob=ci_prob, diagnostics=diag)
    long = long.drop(columns=["variable", "kind"], errors="ignore")
    classical = c_rho.to_dataframe(name="classical").reset_index()[
        ["quantity", "runs", "items", "classical"]]
    table = long.merge(classical, on=["quantity", "runs", "items"], how="left")
    table = table.dropna(subset=["mean"]).set_index(["quantity", "runs", "items"])
    table = table[["classical", "mean", "sd", "hdi_low", "hdi_high", "r_hat", "ess_bulk",
                   "ess_tail"]]

    nl = bayes_summary(dpost, ["items_needed"], ci_prob=ci_prob, diagnostics=diag)
    nl = nl.drop(columns=["variable", "kind"], errors="ignore")
    nl["median"] = need.median(("chain", "draw")).transpose("quantity", "runs").values.ravel()
    nl = nl.merge(c_need.to_dataframe(name="classical").reset_index()[
        ["quantity", "runs", "classical"]], on=["quantity", "runs"], how="left")
    nl = nl.dropna(subset=["mean"]).reset_index(drop=True)
    nl.index.name = "row"
    need_ds = xr.Dataset.from_dataframe(nl[["quantity", "runs", "classical", "mean", "sd",
                                            "hdi_low", "hdi_high", "median", "r_hat",
                                            "ess_bulk", "ess_tail"]])

    import arviz as az

    didata = az.InferenceData(posterior=dpost)
    set_attrs(didata, {**dict(post.attrs), "derived_from": "true_score posterior"})
    info = {
        "fit": fit.info.get("data", ""),
        "sampler": fit.info.get("sampler", ""),
        "design": f"items {items}; runs {runs}",
        "target": f"{target:g}",
        "formula": "rho(J', R') = s2_system / (s2_system + s2_system_item / J' "
                   "+ s2_run / (J' R'))",
    }
    notes = []
    if (n_runs == 1).any() and any(r > 1 for r in runs):
        notes.append("quantities with one run in the data (ratings, single-run metrics) are "
                     "shown for runs = 1 only: their run noise is not separable.")
    res = DecisionStudyResult(table, title="Decision study: reliability of system means",
                              info=info, idata=didata, extra={"items_needed": need_ds},
                              notes=notes, ci_prob=ci_prob)
    res.target = target
    return res


__all__ = [
    "COMPONENTS",
    "ESTIMANDS",
    "DecisionStudyResult",
    "TrueScoreResult",
    "anova_ss",
    "build_model",
    "decision_study",
    "g_coefficient",
    "reliability",
    "stability_coefficient",
    "variance_components",
]
