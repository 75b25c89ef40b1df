"""The result of :func:`bayesmeta.fit_correlation_model`: tables, parameter draws and the
posterior predictive simulator."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayesmeta.correlation._model_build import PARAMETERS
from bayesmeta.results import Result
from bayesmeta.summaries import make_table, posterior_table

#: Rows of the summary per metric: the model's counterparts of two correlation measures of
#: :func:`bayesmeta.correlations`, and the spread of the within-system correlations.
ESTIMANDS = ("within_system_pearson", "system_pearson", "within_system_sd")
#: The posterior variable behind each estimand.
VARIABLE_OF = {"within_system_pearson": "r_mean", "system_pearson": "rho",
               "within_system_sd": "r_sigma"}


def label_trait(table: pd.DataFrame, trait: str) -> pd.DataFrame:
    """Set the ``trait`` index level of every row to ``trait``."""
    idx = table.index.to_frame(index=False)
    idx["trait"] = str(trait)
    table.index = pd.MultiIndex.from_frame(idx)
    return table


class CorrelationResult(Result):
    """Posterior within-system and system-level metric-human correlations next to the
    classical ones.

    Returned by :func:`bayesmeta.fit_correlation_model`. ``summary()`` is indexed by
    ``(estimand, trait, metric)`` like :func:`bayesmeta.correlations`, with estimands
    ``within_system_pearson`` (paper 001's item level), ``system_pearson`` and
    ``within_system_sd``; :meth:`parameters` summarises every App. C parameter,
    :meth:`within_system` every system's correlation, :meth:`parameter_draws` gives the
    posterior draws for simulation and :meth:`simulate` posterior predictive datasets.
    """

    _SECTIONS = (
        ("within_system_pearson", "Within-system correlation: mean over systems of the "
                                  "correlation r_s over items (classical: mean within-system "
                                  "Pearson r; paper 001's item level)"),
        ("system_pearson", "System-level correlation rho of the system means (classical: "
                           "Pearson r of system means, Fisher-z interval)"),
        ("within_system_sd", "Spread of r_s across systems, sigma_r (classical: SD of the "
                             "within-system Pearson r, inflated by their sampling error)"),
    )

    def _state(self) -> dict[str, Any]:
        return {"n_systems": self.n_systems, "n_items": self.n_items, "trait": self.trait}

    def _restore(self, state: dict[str, Any]) -> None:
        self.n_systems = int(state["n_systems"])
        self.n_items = int(state["n_items"])
        self.trait = str(state["trait"])

    def _body(self) -> str:
        tab = self._table
        parts = []
        for est, title in self._SECTIONS:
            if est not in set(tab.index.get_level_values("estimand")):
                continue
            sub = tab.xs(est, level="estimand")
            sub = sub[[c for c in sub.columns if not sub[c].isna().all()]]
            parts += [title, self._format_table(sub), ""]
        return "\n".join(parts).rstrip()

    def plot(self, ax: Any = None, column: str | None = None, *,
             estimand: str = "within_system_pearson") -> Any:
        """Forest plot of one estimand over the metrics: posterior mean with its HDI and
        the classical estimate (cross). Returns the Figure."""
        return self.plot_estimand(estimand, ax=ax, column=column)

    def by_measure(self) -> pd.DataFrame:
        """The posterior columns of the rows that are correlation measures
        (``within_system_pearson``, ``system_pearson``), indexed like
        ``bm.correlations(...).summary()``: ``(estimand, trait, metric)``. Join it to that
        table to show the model's posterior next to the sample measures and their
        (Bayesian) bootstrap.

        Examples
        --------
        >>> res = bm.correlations(ds, "COH")  # doctest: +SKIP
        >>> fit = bm.fit_correlation_model(ds, "COH")  # doctest: +SKIP
        >>> res.summary().join(fit.by_measure(), rsuffix="_model")  # doctest: +SKIP
        """
        tab = self._table
        rows = tab.index.get_level_values("estimand").isin(ESTIMANDS[:2])
        cols = ["mean", "sd", "hdi_low", "hdi_high", "r_hat", "ess_bulk", "ess_tail"]
        return tab.loc[rows, cols]

    def parameters(self) -> pd.DataFrame:
        """Posterior summary of every App. C parameter on the original score scales, in the
        table shape with index ``(estimand, trait, metric)`` (``estimand`` = the
        parameter); ``r`` per system is in :meth:`within_system`."""
        post = self.parameter_draws(stack=False)
        tab = posterior_table(post, list(PARAMETERS), index=["trait", "metric"],
                              ci_prob=self.ci_prob)
        return make_table(label_trait(tab, self.trait), ci_prob=self.ci_prob)

    def within_system(self) -> pd.DataFrame:
        """Posterior of each system's correlation :math:`r_s`, index ``("r", trait,
        metric, system)``, with the classical within-system Pearson r."""
        tab = posterior_table(self.idata.posterior, ["r"], index=["trait", "metric", "system"],
                              ci_prob=self.ci_prob)
        tab = label_trait(tab, self.trait)
        classical = self.extra["within_classical"].to_series()
        classical.index = classical.index.set_levels(
            [lv.astype(str) for lv in classical.index.levels])
        keys = list(zip(tab.index.get_level_values("metric"),
                        tab.index.get_level_values("system"), strict=True))
        tab.insert(0, "classical", classical.reindex(keys).to_numpy())
        return make_table(tab, ci_prob=self.ci_prob)

    def parameter_draws(self, n_draws: int | None = None, *, random_seed: int | None = None,
                        stack: bool = True) -> xr.Dataset:
        r"""Posterior draws of the App. C parameters, on the original score scales.

        The standardised-scale parameters are transformed back with the per-metric pooled
        mean :math:`c` and SD :math:`d` of each score: :math:`\mu \to c + d\mu`,
        :math:`\tau \to d\tau`, :math:`\sigma \to d\sigma`; correlations are unchanged.

        Parameters
        ----------
        n_draws : int, optional
            A random subset of this many draws (default all).
        random_seed : int, optional
            Seed of the subset.
        stack : bool
            Stack ``chain`` and ``draw`` into one dim ``sample`` (default), the form
            :func:`bayesmeta.simulate.simulate_correlation_study` takes as ``params``.

        Returns
        -------
        xarray.Dataset
            Variables :data:`PARAMETERS` with dims ``(sample, metric)`` and ``r``
            ``(sample, metric, system)`` (the fitted systems' correlations).

        Examples
        --------
        >>> from bayesmeta.simulate import simulate_correlation_study  # doctest: +SKIP
        >>> draws = fit.parameter_draws(200, random_seed=0)  # doctest: +SKIP
        >>> sim = simulate_correlation_study(1, params=draws, n_systems=17)  # doctest: +SKIP
        """
        post = self.idata.posterior
        scale = self.extra["scale"]
        out = xr.Dataset(attrs={"scale": "original score scales"})
        for name in PARAMETERS:
            da = post[name]
            side = "metric" if name.endswith("_metric") else "human"
            if name.startswith("mu_"):
                da = (self.extra["center"].sel(side=side, drop=True)
                      + scale.sel(side=side, drop=True) * da)
            elif name.startswith(("tau_", "sigma_")):
                da = scale.sel(side=side, drop=True) * da
            out[name] = da
        out["r"] = post["r"]
        if not stack:
            return out
        out = out.stack(sample=("chain", "draw")).transpose("sample", ...)
        out = out.drop_vars(["sample", "chain", "draw"]).assign_coords(
            sample=np.arange(out.sizes["sample"]))
        if n_draws is not None:
            if not 0 < n_draws <= out.sizes["sample"]:
                raise ValueError(f"n_draws must be in 1..{out.sizes['sample']}, got {n_draws}.")
            idx = np.sort(np.random.default_rng(random_seed).choice(
                out.sizes["sample"], n_draws, replace=False))
            out = out.isel(sample=idx)
        return out

    def simulate(self, n_datasets: int = 1, *, n_systems: int | None = None,
                 n_items: int | None = None, same_systems: bool = False,
                 human_levels: int | None = None, metric_levels: tuple[int, ...] = (),
                 random_seed: int | None = None) -> xr.Dataset:
        """Posterior predictive datasets: ``n_datasets`` posterior draws, one simulated
        dataset each (dim ``sample``). ``same_systems=True`` reuses the fitted systems'
        correlations ``r`` (then ``n_systems`` must equal the data's); otherwise new
        systems draw ``r`` from the truncated normal. ``human_levels`` / ``metric_levels``
        discretise the scores (granularity studies). See
        :func:`bayesmeta.simulate.simulate_correlation_study`."""
        from bayesmeta.simulate import simulate_correlation_study

        rng = np.random.default_rng(random_seed)
        draws = self.parameter_draws(n_datasets, random_seed=int(rng.integers(2**31)))
        S = self.n_systems if n_systems is None else int(n_systems)
        if same_systems and S != self.n_systems:
            raise ValueError(f"same_systems=True needs n_systems={self.n_systems}, got {S}.")
        return simulate_correlation_study(
            int(rng.integers(2**31)), params=draws, n_systems=S,
            n_items=self.n_items if n_items is None else int(n_items),
            human_levels=human_levels, metric_levels=metric_levels,
            r=draws["r"].transpose("sample", "metric", "system") if same_systems else None)


__all__ = ["ESTIMANDS", "VARIABLE_OF", "CorrelationResult", "label_trait"]
