r"""Decision study of the true-score model: reliability of system means for other designs.

For each posterior draw of the variance components of a :func:`bayesmeta.reliability` fit,
the generalizability coefficient of a system mean over :math:`J'` items and :math:`R'` runs
and the number of items needed for a target reliability; next to them the classical
(ANOVA plug-in) curve of :func:`bayesmeta.reliability.generalizability.decision_curve`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayesmeta.data.select import check_labels
from bayesmeta.reliability.generalizability import decision_curve, g_coefficient, items_for
from bayesmeta.reliability.true_score import TrueScoreResult
from bayesmeta.results import Result
from bayesmeta.summaries import check_ci_prob, posterior_table

#: Default numbers of items of a decision study (the data's J is added).
DEFAULT_ITEMS = (10, 20, 50, 100, 200, 500, 1000)


class DecisionStudyResult(Result):
    """Reliability of system means against the number of items and runs (a D study).

    ``summary()`` is indexed by ``(estimand, variable, n_items, n_runs)``: estimand
    ``reliability`` per design, and ``items_needed`` (``n_items`` blank) per variable and
    number of runs. ``details()["median"]`` holds the posterior median of the items needed;
    :meth:`items_needed` gives those rows with it.
    """

    def _state(self) -> dict[str, Any]:
        return {"target": self.target}

    def _restore(self, state: dict[str, Any]) -> None:
        self.target = float(state["target"])

    def items_needed(self) -> pd.DataFrame:
        """Items needed for the target reliability, indexed by ``(variable, n_runs)``:
        ``classical`` (ANOVA plug-in), ``mean``, ``sd``, ``hdi_low``, ``hdi_high``,
        ``median`` of the posterior of the (rounded-up) number of items, ``r_hat``,
        ``ess_bulk``, ``ess_tail``."""
        rows = self._table.index.get_level_values("estimand") == "items_needed"
        out = self._table[rows].join(self._details[["median"]])
        out = out.droplevel(["estimand", "n_items"])
        cols = [c for c in ("classical", "mean", "sd", "hdi_low", "hdi_high", "median",
                            "r_hat", "ess_bulk", "ess_tail") if c in out.columns]
        out = out[cols]
        out.attrs = dict(self._table.attrs)
        return out

    def _body(self) -> str:
        rel = self._table.xs("reliability", level="estimand", drop_level=False)
        rel = rel.droplevel("estimand")
        parts = [f"Items needed for reliability {self.target:g}",
                 self._format_table(self.items_needed()), "",
                 "Reliability of system means by number of items (and runs)",
                 self._format_table(rel)]
        return "\n".join(parts)

    def plot(self, ax: Any = None, column: str | None = None, *,
             variables: Sequence[str] | None = None,
             n_runs: Sequence[int] | None = None) -> Any:
        """Decision-study curves: posterior mean reliability against the number of items,
        with HDI bands, the classical plug-in curve (dashed) and the target line. Returns
        the Figure."""
        from bayesmeta.reliability.plots import plot_decision_curve

        return plot_decision_curve(self.summary(), ax=ax, variables=variables, n_runs=n_runs,
                                   target=self.target, title=self.title).figure


def decision_study(
    fit: TrueScoreResult,
    *,
    n_items: Sequence[int] | None = None,
    n_runs: Sequence[int] | None = None,
    target: float | None = None,
    variables: Sequence[str] | None = None,
    ci_prob: float | None = None,
) -> DecisionStudyResult:
    r"""Decision study: posterior reliability of system means for other test designs.

    For each posterior draw of the variance components, the generalizability coefficient
    of a system mean over :math:`J'` items and :math:`R'` runs,

    .. math:: \rho(J', R') = \frac{\sigma^2_s}{\sigma^2_s + \sigma^2_{si}/J' +
              \sigma^2_e/(J'R')},

    and the number of items needed for the target reliability with :math:`R'` runs,
    :math:`J^*(R') = \lceil t\,(\sigma^2_{si} + \sigma^2_e/R') / ((1-t)\,\sigma^2_s)\rceil`.
    ``rho(J, 1)`` is the consistency of :func:`bayesmeta.reliability`; with one run it is
    the Spearman-Brown projection of alpha.

    Parameters
    ----------
    fit : TrueScoreResult
        A fit of :func:`bayesmeta.reliability` (or one loaded with :func:`bayesmeta.load`).
    n_items : list of int, optional
        Numbers of items (default 10, 20, 50, 100, 200, 500, 1000 and the data's J).
    n_runs : list of int, optional
        Numbers of runs (default 1, 2, 4 when some variable has several runs, else 1).
        Variables with one run in the data support only ``n_runs = 1``; their other rows
        are left out.
    target : float, optional
        Target reliability (default the fit's).
    variables : list of str, optional
        Variables to include (default all).
    ci_prob : float, optional
        HDI probability (default the fit's).

    Returns
    -------
    DecisionStudyResult
        ``summary()`` indexed by ``(estimand, variable, n_items, n_runs)`` (labels are
        strings) with ``classical`` (ANOVA plug-in), ``mean``, ``sd``, ``hdi_low``,
        ``hdi_high``, ``r_hat``, ``ess_bulk``, ``ess_tail``; estimands ``reliability`` and
        ``items_needed``; ``items_needed()``; ``plot()`` draws the curves with bands.

    References
    ----------
    Brennan, R. L. (2001). *Generalizability Theory*, ch. 4. Xiao et al. (2023), Fig. 3.

    Examples
    --------
    >>> import bayesmeta as bm  # doctest: +SKIP
    >>> fit = bm.reliability(bm.datasets.summeval(), raters=False,
    ...                      sampling="fast")  # doctest: +SKIP
    >>> ds = bm.decision_study(fit, n_items=range(10, 101, 10), n_runs=[1])  # doctest: +SKIP
    >>> ds.items_needed().loc[("G.EVAL.4.COH", "1")]  # doctest: +SKIP

    R equivalent: ``gtheory::dstudy``.
    """
    import arviz as az

    from bayesmeta.sampling import diagnose, set_attrs

    if not isinstance(fit, TrueScoreResult) or fit.idata is None:
        raise TypeError("fit must be a TrueScoreResult from bm.reliability(), got "
                        f"{type(fit).__name__}.")
    target = fit.target if target is None else float(target)
    if not 0 < target < 1:
        raise ValueError(f"target must be in (0, 1), got {target}.")
    ci_prob = check_ci_prob(fit.ci_prob if ci_prob is None else ci_prob)
    design = fit.extra["design"]
    post = fit.idata.posterior
    labels = [str(q) for q in post["variable"].values]
    if variables is not None:
        picked = [str(v) for v in check_labels(labels, list(variables), "variable")]
        post, design, labels = post.sel(variable=picked), design.sel(variable=picked), picked
    J = int(design.attrs["n_items"])
    runs_data = design["n_runs"].values
    items = sorted({*DEFAULT_ITEMS, J}) if n_items is None else [int(v) for v in n_items]
    runs = ([1, 2, 4] if (runs_data > 1).any() else [1]) if n_runs is None else [
        int(v) for v in n_runs]
    for name, vals in (("n_items", items), ("n_runs", runs)):
        if not vals or min(vals) < 1:
            raise ValueError(f"{name} must be a non-empty list of positive integers, got {vals}.")
    item_da = xr.DataArray(items, dims="n_items", coords={"n_items": items})
    run_da = xr.DataArray(runs, dims="n_runs", coords={"n_runs": runs})
    s2_s = post["sd_system"] ** 2
    s2_si = post["sd_system_item"] ** 2
    s2_e = (post["sd_run"] ** 2).fillna(0.0)
    ok = (xr.DataArray(runs_data > 1, dims="variable", coords={"variable": labels})
          | (run_da == 1))
    rho = g_coefficient(s2_s, s2_si, s2_e, item_da, run_da).where(ok)
    need = np.ceil(items_for(target, s2_s, s2_si + s2_e / run_da) - 1e-9).where(ok)
    dpost = xr.Dataset({
        "reliability": rho.transpose("chain", "draw", "variable", "n_runs", "n_items"),
        "items_needed": need.transpose("chain", "draw", "variable", "n_runs")})
    dpost.attrs = dict(post.attrs)

    c_rho, c_need = decision_curve(design["ss"].values, design["df"].values,
                                   n_systems=int(design.attrs["n_systems"]), n_items=J,
                                   n_runs=runs_data, items=items, runs=runs, target=target)
    classical = xr.Dataset({
        "reliability": (("variable", "n_runs", "n_items"), c_rho),
        "items_needed": (("variable", "n_runs"), c_need)},
        coords={"variable": labels, "n_runs": runs, "n_items": items})
    index = ["variable", "n_items", "n_runs"]
    table = posterior_table(dpost, ["reliability", "items_needed"], index=index,
                            ci_prob=ci_prob, diagnostics=diagnose(dpost))
    cl = pd.concat([_rows(classical[n], n, index) for n in ("reliability", "items_needed")])
    table.insert(0, "classical", cl.reindex(table.index).to_numpy())
    med = pd.Series(np.nan, index=table.index)
    is_need = table.index.get_level_values("estimand") == "items_needed"
    med[is_need] = need.median(("chain", "draw")).transpose("variable", "n_runs").values.ravel()
    table["median"] = med.to_numpy()
    table = table[table["mean"].notna()]

    didata = az.InferenceData(posterior=dpost)
    set_attrs(didata, {**dict(post.attrs), "derived_from": "true_score posterior"})
    info = {
        "fit": fit.info.get("data", ""),
        "sampler": fit.info.get("sampler", ""),
        "design": f"n_items {items}; n_runs {runs}",
        "target": f"{target:g}",
        "formula": "rho(J', R') = s2_system / (s2_system + s2_system_item / J' "
                   "+ s2_run / (J' R'))",
    }
    notes = []
    if (runs_data == 1).any() and any(r > 1 for r in runs):
        notes.append("variables with one run in the data (ratings, judgments, single-run "
                     "metrics) are shown for n_runs = 1 only: their run noise is not "
                     "separable.")
    res = DecisionStudyResult(
        table, title="Decision study: reliability of system means", info=info, idata=didata,
        notes=notes, ci_prob=ci_prob, posterior="MCMC posterior",
        random_seed=fit.provenance.get("random_seed"),
        data_hash=fit.provenance.get("data_hash"))
    res.target = target
    return res


def _rows(values: xr.DataArray, estimand: str, index: list[str]) -> pd.Series:
    """A classical array as a Series indexed like :func:`posterior_table`'s rows."""
    frame = values.to_dataframe(name="classical").reset_index()
    for level in index:
        frame[level] = frame[level].astype(str) if level in frame else ""
    frame.insert(0, "estimand", estimand)
    return frame.set_index(["estimand", *index])["classical"]


__all__ = ["DEFAULT_ITEMS", "DecisionStudyResult", "decision_study"]
