"""Compare Bayesian fits of the same data by PSIS-LOO (ArviZ), e.g. factor structures.

:func:`compare` takes a dict of fitted results (anything with a ``loo()`` method, or an
``idata`` with a ``log_likelihood`` group) and returns a :class:`CompareResult`: the ELPD
of each model and its difference from the best, with normal intervals from their standard
errors, in the table shape of :mod:`bayesmeta.summaries`; :func:`arviz.compare`'s own
table (one row per model, best first) is its ``details()``.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from bayesmeta.results import Result
from bayesmeta.summaries import CI_PROB, check_ci_prob

__all__ = ["CompareResult", "compare"]


#: What the interval of the comparison's ELPD columns is.
CI_KIND = "normal (estimate +- z SE)"


class CompareResult(Result):
    """Result of :func:`compare`: rows ``("elpd_loo", model)`` and ``("elpd_diff", model)``
    (models ranked by expected log predictive density); ArviZ's table in ``details()``."""

    kind = "compare"

    def _body(self) -> str:
        return (f"{self._format_table(self._table)}\n\nArviZ's comparison (details()):\n"
                f"{self._format_table(self._details)}")


def compare(fits: Mapping[str, Any], *, ci_prob: float = CI_PROB, scale: str = "log"
            ) -> CompareResult:
    r"""Rank models of the same data by their expected log pointwise predictive density.

    Parameters
    ----------
    fits : dict of str -> result
        Named fits of the same outputs (e.g. ``{"four factors": f4, "one factor": f1}``),
        each with a ``loo()`` method (such as
        :class:`bayesmeta.validity.ordinal_cfa.OrdinalCFAResult`) or an ``idata`` holding a
        ``log_likelihood`` group.
    ci_prob : float
        Probability of the normal intervals (default 0.94).
    scale : {"log", "negative_log", "deviance"}
        Scale of the ELPD (ArviZ's ``scale``).

    Returns
    -------
    CompareResult
        ``summary()`` indexed ``(estimand, model)``, in the columns of their own kind
        ``elpd``, ``elpd_low``, ``elpd_high`` (an ELPD is neither a classical estimate nor a
        posterior summary): ``("elpd_loo", model)`` with the model's ELPD and the interval
        ``elpd +- z se``, and ``("elpd_diff", model)`` with the difference from the best
        model and ``elpd_diff +- z dse`` (``elpd_ci_kind`` says so;
        :math:`z = \Phi^{-1}((1 + p)/2)`).
        ``details()`` is ArviZ's table, indexed by ``model``: ``rank``, ``elpd_loo``,
        ``p_loo``, ``elpd_diff``, ``weight`` (stacking), ``se``, ``dse`` (standard error of
        the difference), ``warning`` (some Pareto k above ArviZ's threshold,
        ``min(1 - 1/log10 S, 0.7)`` for ``S`` draws; the note says how many and the
        largest), ``scale``.

    Notes
    -----
    :math:`\widehat{\mathrm{elpd}}_{\mathrm{loo}} = \sum_n \log p(y_n \mid y_{-n})`, estimated
    by Pareto-smoothed importance sampling; a difference is worth reporting when it is
    several times its ``dse`` (Vehtari, Gelman & Gabry 2017). The intervals are the normal
    approximation of Vehtari et al.; they are not posterior intervals.

    References
    ----------
    Vehtari, A., Gelman, A., & Gabry, J. (2017). Practical Bayesian model evaluation using
    leave-one-out cross-validation and WAIC. *Statistics and Computing*, 27, 1413-1432.

    Examples
    --------
    >>> import bayesmeta as bm  # doctest: +SKIP
    >>> bm.compare({"four factors": fit4, "one factor": fit1})  # doctest: +SKIP

    R equivalent: ``loo::loo_compare(loo(fit4), loo(fit1))``.
    """
    import arviz as az

    ci_prob = check_ci_prob(ci_prob)
    if not isinstance(fits, Mapping) or len(fits) < 2:
        raise ValueError("fits must be a dict of at least two named fits.")
    loos = {}
    for name, fit in fits.items():
        if hasattr(fit, "loo"):
            loos[str(name)] = fit.loo()
        elif getattr(fit, "idata", None) is not None:
            loos[str(name)] = az.loo(fit.idata, pointwise=True)
        else:
            raise TypeError(f"fits[{name!r}] has neither a loo() method nor an idata with "
                            f"a log likelihood.")
    sizes = {k: v.n_data_points for k, v in loos.items()}
    if len(set(sizes.values())) > 1:
        raise ValueError(f"the fits are not of the same data (number of outputs: {sizes}).")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        table = az.compare(loos, ic="loo", scale=scale)
    table = pd.DataFrame(table)
    table.index.name = "model"
    table["warning"] = table["warning"].astype(bool)
    notes = []
    for name, v in loos.items():
        if not bool(getattr(v, "warning", False)):
            continue
        k = np.asarray(getattr(v, "pareto_k", []), dtype=float)
        good = float(getattr(v, "good_k", 0.7))  # ArviZ's threshold, min(1 - 1/log10 S, 0.7)
        if k.size:
            notes.append(f"{name}: Pareto k above {good:.2f} for {int((k > good).sum())} of "
                         f"{k.size} outputs (max {k.max():.2f}); their pointwise LOO "
                         f"estimates are less reliable.")
        else:
            notes.append(f"{name}: ArviZ flagged its LOO estimate as less reliable "
                         f"(Pareto k).")
    z = stats.norm.ppf(0.5 + ci_prob / 2)
    models = [str(m) for m in table.index]
    index = pd.MultiIndex.from_tuples([(e, m) for e in ("elpd_loo", "elpd_diff")
                                       for m in models], names=["estimand", "model"])
    est = np.concatenate([table["elpd_loo"].to_numpy(float), table["elpd_diff"].to_numpy(float)])
    se = np.concatenate([table["se"].to_numpy(float), table["dse"].to_numpy(float)])
    summary = pd.DataFrame({"elpd": est, "elpd_low": est - z * se, "elpd_high": est + z * se},
                           index=index)
    info = {"criterion": "PSIS-LOO (ArviZ)", "models": len(loos),
            "outputs": next(iter(sizes.values())), "scale": scale}
    notes.append(f"elpd_diff: difference from the best model ({models[0]!r}); intervals "
                 f"are {ci_prob:.0%} normal intervals from the standard errors se and dse "
                 f"(ArviZ's table in details()).")
    return CompareResult(summary, title="Model comparison (PSIS-LOO)", info=info,
                         details=table, notes=notes, ci_prob=ci_prob,
                         elpd_ci_kind=CI_KIND)
