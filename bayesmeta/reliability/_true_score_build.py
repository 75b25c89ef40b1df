r"""Data and model of the true-score (generalizability) model: the design of every variable,
its ANOVA table, the values of the model's data containers and the PyMC model itself.

Every variable (an automatic metric, one rater x trait of the ordinal ratings, or a
continuous judgment) is a crossed system x item design with replicated runs nested in the
cells::

    y[s, i, r] = mu + a[s] + b[i] + c[s, i] + e[s, i, r]
    a ~ N(0, sd_system),  b ~ N(0, sd_item),  c ~ N(0, sd_system_item),  e ~ N(0, sd_run)

For complete data the likelihood of the variance components depends on the data only
through the four ANOVA sums of squares (:func:`bayesmeta.reliability.generalizability.anova_ss`),
independent scaled chi-squares once the grand mean is integrated out under a flat prior
(Box & Tiao 1973, ch. 5-6). Variables with missing cells use the likelihood of the
random-effects model for the observed scores, with the system means as parameters and the
item effects, interactions and run noise integrated out exactly (per item, in closed form).
See the model card ``models/true_score.md``.

PyMC is imported only inside :func:`build_model`.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import xarray as xr

from bayesmeta.data import select
from bayesmeta.reliability.generalizability import COMPONENTS, anova_ss

#: Runs whose scores differ by at most this fraction of the variable's SD are identical
#: (deterministic metric; differences that small are storage round-off, e.g. SummEval's
#: BLEU runs differ by at most 5e-10).
IDENTICAL_RTOL = 1e-8
_PAD_DF = np.array([8.0, 8.0, 8.0, 8.0])
_PAD_SS = np.array([8.0 * 5.0, 8.0 * 5.0, 8.0 * 3.0, 8.0 * 1.0])


# ============================================================================ design
@dataclass
class Design:
    """The scores of every variable as one array, with what the model needs to know."""

    labels: list[str]
    kind: list[str]  # "metric", "rating" or "judgment"
    y: np.ndarray  # (Q, S, I, R) with NaN for missing and for runs a variable lacks
    n_runs: np.ndarray  # (Q,) runs used (1 for ratings, judgments and single-run metrics)
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


def collect(
    data: xr.Dataset,
    *,
    metrics: Sequence[str] | None = None,
    raters: Any = None,
    judgments: bool | Sequence[str] = True,
    reference: Any = "first",
) -> Design:
    """Select the variables of a reliability analysis (through
    :func:`bayesmeta.data.select.quantities`, once per run of the metric scores) and describe
    their design.

    Raises
    ------
    ValueError
        For unknown metrics or raters (naming the dim), fewer than 2 systems or items, or
        when no selected variable varies.
    """
    if raters not in (None, True, False) and not (
            isinstance(raters, Sequence) and not isinstance(raters, str) and len(raters) == 0
    ) and "rating" not in data:
        raise ValueError("raters: data has no ordinal ratings (variable 'rating'), so raters "
                         "cannot be selected.")
    runs = list(data["run"].values) if "score" in data else [None]
    stacks = [select.quantities(data, metrics=metrics, raters=raters, judgments=judgments,
                                run=run, reference=reference) for run in runs]
    first = stacks[0]
    labels = [str(v) for v in first["variable"].values]
    kinds = [str(k) for k in first["kind"].values]
    S, I = first.sizes["system"], first.sizes["item"]
    select.require(S, 2, "system", "reliability")
    select.require(I, 2, "item", "reliability")
    y = np.stack([np.asarray(q.values, dtype=float) for q in stacks], axis=-1)
    is_metric = np.array(kinds) == "metric"
    y[~is_metric, :, :, 1:] = np.nan  # ratings and judgments are single-run scores
    n_runs = np.where(is_metric, len(runs), 1).astype(int)
    # a variable needs replicated cells to separate run noise; otherwise it is single-run
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
        raise ValueError(f"no variable varies: {', '.join(dropped)} are constant, so their "
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
                first_run = np.nanmean(y[q, :, :, : n_runs[q]], axis=-1, keepdims=True)
            dev = np.abs(y[q, :, :, : n_runs[q]] - first_run)
            identical[q] = bool(np.nanmax(dev) <= IDENTICAL_RTOL * scale[q])
    return Design(labels, kinds, y, n_runs, complete, identical, scale, center,
                  np.asarray(first["system"].values), np.asarray(first["item"].values),
                  dropped)


def anova_table(design: Design) -> dict[str, np.ndarray]:
    """Sums of squares and df (original scale) of every complete variable (NaN otherwise);
    identical runs get an exact zero within-cell sum of squares."""
    Q = len(design.labels)
    anova = {"ss": np.full((Q, 4), np.nan), "df": np.full((Q, 4), np.nan)}
    for q in np.flatnonzero(design.complete):
        s, d = anova_ss(design.y[q, :, :, : design.n_runs[q]])
        if design.identical[q]:
            s[3] = 0.0
        anova["ss"][q], anova["df"][q] = s, d
    return anova


def design_dataset(design: Design, anova: dict[str, np.ndarray]) -> xr.Dataset:
    """The design facts a decision study needs, saved with the result (``extra["design"]``)."""
    return xr.Dataset(
        {
            "n_runs": ("variable", design.n_runs.astype("int64")),
            "complete": ("variable", design.complete.astype("int64")),
            "identical_runs": ("variable", design.identical.astype("int64")),
            "scale": ("variable", design.scale),
            "ss": (("variable", "component"), anova["ss"]),
            "df": (("variable", "component"), anova["df"]),
        },
        coords={"variable": design.labels, "kind": ("variable", design.kind),
                "component": list(COMPONENTS)},
        attrs={"n_systems": int(design.y.shape[1]), "n_items": int(design.y.shape[2])},
    )


# ============================================================================ model
#: Complete variables are padded to a multiple of this, so that any dataset with up to 64
#: of them (SummEval has 55) reuses one compiled model. The block is always present (64
#: padding rows when every variable has missing cells), so a fit with missing cells and
#: a method="full" fit of the same shape share one compiled model too.
BUCKET = 64


def bucket(n: int) -> int:
    """Padded number of complete variables (a positive multiple of :data:`BUCKET`)."""
    return int(BUCKET * max(1, np.ceil(n / BUCKET)))


def build_model(n_exact: int, n_full: int = 0, n_systems: int = 0, n_items: int = 0) -> Any:
    r"""Build the (data-free) PyMC model of ``n_exact`` complete and ``n_full`` incomplete
    variables on the standardised scale; data enter through ``pm.Data`` containers.

    Variables (dim ``variable`` of length ``n_exact + n_full``): ``sd_system``,
    ``sd_item``, ``sd_system_item``, ``sd_run``, each ``HalfNormal(1)`` in units of the
    variable's total SD. Complete variables add the exact ANOVA likelihood (potential
    ``anova_likelihood``). Incomplete ones add the grand level ``level`` (dim
    ``variable_full``), the system contrasts ``system_raw`` (``variable_full,
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
    coords: dict[str, Any] = {"variable": np.arange(Q)}
    if n_full:
        coords.update(variable_full=np.arange(n_full), system=np.arange(n_systems),
                      system_contrast=np.arange(n_systems - 1))
    with pm.Model(coords=coords) as model:
        free_run = pm.Data("free_run", np.ones(Q))
        sd_system = pm.HalfNormal("sd_system", 1.0, dims="variable")
        sd_item = pm.HalfNormal("sd_item", 1.0, dims="variable")
        sd_si = pm.HalfNormal("sd_system_item", 1.0, dims="variable")
        sd_run = pm.HalfNormal("sd_run", 1.0, dims="variable")
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
            level = pm.Normal("level", 0.0, 10.0, dims="variable_full")
            sd_s = sd_system[fu][:, None]
            raw = pm.Normal("system_raw", 0.0, sd_s ** (1.0 - wgt[:, None]),
                            dims=("variable_full", "system_contrast"))
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


def model_data(design: Design, anova: dict[str, np.ndarray], exact_idx: np.ndarray,
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
    from bayesmeta.reliability.classical import cronbach_alpha

    out = np.ones(cy.shape[0])
    for k in range(n_real):
        cells = np.where(cn[k] > 0, cy[k], np.nan)
        cells = cells[:, ~np.isnan(cells).all(axis=0)]
        with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            alpha = float(cronbach_alpha(cells)) if cells.shape[1] >= 2 else np.nan
        out[k] = 1.0 - np.clip(alpha, 0.0, 1.0) if np.isfinite(alpha) else 1.0
    return out


def full_shape(n_full: int, S: int, I: int) -> tuple[int, int, int]:
    """Padded (variables, systems, items) of the random-effects block: variables and items
    to multiples of 8 (padding has no observed cells), systems exactly."""
    if not n_full:
        return (0, 0, 0)
    return (int(8 * np.ceil(n_full / 8)), int(S), int(8 * np.ceil(I / 8)))

