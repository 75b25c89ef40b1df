r"""Planning the alt-test: how many instances does a judge need to pass, given its noise and
the annotators'? The simulation of Calderon, Reichart & Dror (2025, App. C).

Each simulated dataset draws the categories' probabilities :math:`\pi \sim
\mathrm{Dirichlet}(1_K)` (or takes them given), and per instance a gold label
:math:`g \sim \mathrm{Cat}(\pi)`; every annotator's label and the judge's follow

.. math:: y \sim \mathrm{Cat}\big(\eta\,\pi + (1 - \eta)\,e_g\big)

(keep the gold label with probability :math:`1 - \eta`, otherwise draw afresh from
:math:`\pi`), with noise :math:`\eta_h` for the annotators and :math:`\eta_f` for the judge.
The alt-test (accuracy scoring, one-sided t tests, Benjamini-Yekutieli at ``q``) runs on
each dataset; the **pass probability** (power) at ``n`` instances is the share of datasets
whose winning rate reaches 0.5.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import special, stats

from bayesmeta.judges.alt_test import MIN_INSTANCES, benjamini_yekutieli
from bayesmeta.options import resolve_seed
from bayesmeta.results import Result
from bayesmeta.summaries import CI_PROB, check_ci_prob, hdi

__all__ = ["DEFAULT_MODEL", "PlanResult", "plan_alt_test", "simulate_alt_test_labels"]

#: The paper's default simulation (the authors' notebook): four categories, noise 0.3 for
#: annotators and judge (annotators' Cohen's kappa about 0.48), three annotators.
DEFAULT_MODEL: dict[str, Any] = {"n_categories": 4, "noise_annotators": 0.3,
                                 "noise_judge": 0.3, "n_annotators": 3, "priors": None}


class PlanResult(Result):
    """Pass probability of the alt-test against the number of instances (see
    :func:`plan_alt_test`)."""


def _model(model: Mapping[str, Any] | None) -> dict[str, Any]:
    spec = dict(DEFAULT_MODEL)
    if model is not None:
        unknown = sorted(set(model) - set(DEFAULT_MODEL))
        if unknown:
            raise ValueError(f"model: unknown parameter(s) {unknown}; the parameters are "
                             f"{sorted(DEFAULT_MODEL)}.")
        spec.update(model)
    for key in ("noise_annotators", "noise_judge"):
        v = spec[key]
        if not isinstance(v, int | float) or isinstance(v, bool) or not 0 <= v <= 1:
            raise ValueError(f"model: {key} must be a number in [0, 1], got {v!r}.")
    for key, low in (("n_categories", 2), ("n_annotators", 2)):
        v = spec[key]
        if not isinstance(v, int | np.integer) or isinstance(v, bool) or v < low:
            raise ValueError(f"model: {key} must be an integer of at least {low}, got {v!r}.")
    if spec["priors"] is not None:
        pri = np.asarray(spec["priors"], dtype=float)
        if pri.shape != (spec["n_categories"],) or (pri < 0).any() or not np.isclose(
                pri.sum(), 1.0):
            raise ValueError(f"model: priors must be {spec['n_categories']} probabilities "
                             f"summing to 1, got {spec['priors']!r}.")
        spec["priors"] = pri
    return spec


def simulate_alt_test_labels(spec: Mapping[str, Any], n_datasets: int, n_items: int,
                             rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Labels of ``n_datasets`` simulated datasets: annotators ``(dataset, item, annotator)``
    and judge ``(dataset, item)``, integer codes ``0 .. K-1``.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmeta.judges.plan import DEFAULT_MODEL, simulate_alt_test_labels
    >>> y, f = simulate_alt_test_labels(DEFAULT_MODEL, 2, 50, np.random.default_rng(0))
    >>> y.shape, f.shape
    ((2, 50, 3), (2, 50))
    """
    k, m = int(spec["n_categories"]), int(spec["n_annotators"])
    if spec["priors"] is None:
        pri = rng.dirichlet(np.ones(k), size=n_datasets)
    else:
        pri = np.broadcast_to(np.asarray(spec["priors"], dtype=float), (n_datasets, k))
    cum = np.cumsum(pri, axis=1)
    cum[:, -1] = 1.0

    def draw(shape: tuple[int, ...]) -> np.ndarray:
        u = rng.random((n_datasets, *shape))
        c = cum.reshape((n_datasets,) + (1,) * len(shape) + (k,))
        return (u[..., None] >= c).sum(-1)

    gold = draw((n_items,))
    fresh = draw((n_items, m + 1))
    keep_h = rng.random((n_datasets, n_items, m)) >= spec["noise_annotators"]
    keep_f = rng.random((n_datasets, n_items)) >= spec["noise_judge"]
    y = np.where(keep_h, gold[..., None], fresh[..., :m])
    f = np.where(keep_f, gold, fresh[..., m])
    return y, f


def _alt_test_batch(y: np.ndarray, f: np.ndarray, epsilons: Sequence[float], q: float
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Winning rates ``(dataset, epsilon)`` and advantage probabilities ``(dataset,)`` of
    the alt-test with accuracy scoring and t tests, vectorised over datasets."""
    m = y.shape[-1]
    n = y.shape[1]
    match_f = (f[..., None] == y).astype(float)                     # (D, n, m)
    agree = (y[..., :, None] == y[..., None, :]).astype(float)      # (D, n, m, m)
    s_f = (match_f.sum(-1, keepdims=True) - match_f) / (m - 1)      # judge vs others of j
    s_h = (agree.sum(-1) - 1.0) / (m - 1)                          # j vs the others
    wf = (s_f >= s_h).astype(float)
    wh = (s_h >= s_f).astype(float)
    d = wh - wf
    mean = d.mean(1)
    var = d.var(1, ddof=1)
    rho = wf.mean(1).mean(-1)
    wr = np.empty((y.shape[0], len(epsilons)))
    for e, eps in enumerate(epsilons):
        with np.errstate(divide="ignore", invalid="ignore"):
            t = (mean - eps) / np.sqrt(var / n)
        # a constant d: t = -inf or +inf as the sign of mean - eps (as bm.alt_test)
        t = np.where(var <= 1e-14, np.where(mean < eps - 1e-12, -np.inf,
                                            np.where(mean > eps + 1e-12, np.inf, np.nan)), t)
        p = special.stdtr(n - 1, t)
        wr[:, e] = benjamini_yekutieli(p, q).mean(-1)
    return wr, rho


def plan_alt_test(
    *,
    model: Mapping[str, Any] | None = None,
    n_items: Sequence[int] = tuple(range(30, 201, 10)),
    epsilon: float | Sequence[float] = 0.2,
    q: float = 0.05,
    prob: float = 0.8,
    n_replicates: int = 1000,
    ci_prob: float = CI_PROB,
    random_seed: int | None = None,
) -> PlanResult:
    r"""How many annotated instances the alt-test needs: its pass probability (power)
    against the number of instances, in the simulation of Calderon, Reichart & Dror (2025).

    For each ``n`` in ``n_items``, ``n_replicates`` datasets of ``n`` instances are drawn
    from the model

    .. math:: \pi \sim \mathrm{Dirichlet}(1_K),\quad g_i \sim \mathrm{Cat}(\pi),\quad
              y_{ij},\, f_i \sim \mathrm{Cat}\big(\eta\,\pi + (1 - \eta)\,e_{g_i}\big)

    (annotators with :math:`\eta_h`, the judge with :math:`\eta_f`), and the alt-test
    (:func:`bayesmeta.alt_test` with ``scoring="accuracy"``, ``test="t"``) runs on each.
    The pass probability :math:`P_n` is the share of datasets with winning rate
    :math:`\omega \ge 0.5`; ``n_needed`` the smallest ``n`` with :math:`P_n \ge` ``prob``.

    Parameters
    ----------
    model : dict, optional
        The simulation: ``n_categories`` (K, default 4), ``noise_annotators``
        (:math:`\eta_h`, 0.3), ``noise_judge`` (:math:`\eta_f`, 0.3), ``n_annotators``
        (3), ``priors`` (the categories' probabilities; default a fresh
        Dirichlet(1, ..., 1) draw per dataset, as the paper). Noise 0.1, 0.2, 0.3, 0.4
        give the annotators a Cohen's kappa of about 0.80, 0.63, 0.48, 0.36.
    n_items : list of int
        Numbers of instances (each at least 30, the paper's minimum for the t test).
    epsilon : float or list of float
        The cost-benefit margins (the same simulated datasets for every one).
    q : float
        False-discovery rate of the Benjamini-Yekutieli procedure.
    prob : float
        The required pass probability (power) for ``n_needed``.
    n_replicates : int
        Simulated datasets per number of instances (the Monte Carlo standard error of
        :math:`P_n` is at most :math:`0.5/\sqrt{n_{replicates}}`).
    ci_prob : float
        Probability of the intervals.
    random_seed : int, optional
        Drawn and recorded when None.

    Returns
    -------
    PlanResult
        ``summary()`` indexed by ``(estimand, n_items, epsilon)``: ``pass_probability``
        (classical: the share of datasets with a Clopper-Pearson interval; posterior:
        Beta(1 + passes, 1 + fails), the Monte Carlo uncertainty), ``winning_rate`` and
        ``advantage_probability`` (mean over datasets, CLT interval of that mean); and
        ``n_needed`` per epsilon (``n_items`` empty; NaN when no ``n`` in the grid reaches
        ``prob``; its posterior propagates the Beta uncertainty of every :math:`P_n`).
        ``details()``: the 5% and 95% quantiles of the winning rate and advantage
        probability over datasets (what one study may see).

    Notes
    -----
    The authors' notebook simulates 500 instances and 6 annotators per dataset and
    subsamples ``n`` instances and 3 annotators ten times; every subsample is a fresh
    dataset of the same model, which is what is drawn here directly. Requires
    :math:`n \ge 30`: below, :func:`bayesmeta.alt_test` uses the Wilcoxon test.

    References
    ----------
    Calderon, Reichart & Dror (2025), The Alternative Annotator Test for LLM-as-a-Judge.
    *ACL 2025*, pp. 16051-16081, App. C.

    Examples
    --------
    >>> import bayesmeta as bm
    >>> res = bm.plan_alt_test(model={"noise_judge": 0.2}, n_items=[30, 100],
    ...                        epsilon=0.2, n_replicates=300, random_seed=1)
    >>> tab = res.summary()
    >>> p = tab.xs("pass_probability", level="estimand")["classical"]
    >>> bool(p[("100", "0.2")] > p[("30", "0.2")])
    True

    R equivalent: none (a loop of ``t.test`` and ``p.adjust(method = "BY")`` over
    simulated datasets).
    """
    spec = _model(model)
    ci_prob = check_ci_prob(ci_prob)
    sizes = sorted({int(k) for k in np.atleast_1d(n_items)})
    bad = [k for k in sizes if k < MIN_INSTANCES]
    if bad:
        raise ValueError(f"n_items={bad}: each number of instances must be at least "
                         f"{MIN_INSTANCES} (the t test; below, alt_test uses Wilcoxon).")
    eps = [float(e) for e in np.atleast_1d(epsilon)]
    if any(not -1 <= e <= 1 for e in eps):
        raise ValueError(f"epsilon must lie in [-1, 1], got {eps}.")
    if not 0 < q < 1:
        raise ValueError(f"q must lie strictly between 0 and 1, got {q!r}.")
    if not 0 < prob < 1:
        raise ValueError(f"prob must lie strictly between 0 and 1, got {prob!r}.")
    if not isinstance(n_replicates, int | np.integer) or n_replicates < 10:
        raise ValueError(f"n_replicates must be an integer of at least 10, got "
                         f"{n_replicates!r}.")
    seed = resolve_seed(random_seed)
    rng = np.random.default_rng(seed)
    z = float(stats.norm.ppf(0.5 + ci_prob / 2))
    a = (1 - ci_prob) / 2
    rows, det = [], []
    beta_draws = np.empty((len(sizes), len(eps), 4000))
    for s, n in enumerate(sizes):
        wr = np.empty((n_replicates, len(eps)))
        rho = np.empty(n_replicates)
        chunk = max(1, int(2e6 // (n * spec["n_annotators"] ** 2)))
        for start in range(0, n_replicates, chunk):
            b = min(chunk, n_replicates - start)
            y, f = simulate_alt_test_labels(spec, b, n, rng)
            wr[start:start + b], rho[start:start + b] = _alt_test_batch(y, f, eps, q)
        for e, ep in enumerate(eps):
            k = int((wr[:, e] >= 0.5).sum())
            lo = stats.beta.ppf(a, k, n_replicates - k + 1) if k > 0 else 0.0
            hi = stats.beta.ppf(1 - a, k + 1, n_replicates - k) if k < n_replicates else 1.0
            draws = rng.beta(1 + k, 1 + n_replicates - k, size=4000)
            beta_draws[s, e] = draws
            h = hdi(draws, ci_prob, axis=(0,))
            rows.append({"estimand": "pass_probability", "n_items": str(n),
                         "epsilon": f"{ep:g}", "classical": k / n_replicates,
                         "classical_low": float(lo), "classical_high": float(hi),
                         "mean": float(draws.mean()), "sd": float(draws.std(ddof=1)),
                         "hdi_low": float(h[0]), "hdi_high": float(h[1])})
            det.append({"passes": k, "q05": np.nan, "q95": np.nan})
            for est, v in (("winning_rate", wr[:, e]), ("advantage_probability", rho)):
                if est == "advantage_probability" and e > 0:
                    continue  # rho does not depend on epsilon
                se = float(v.std(ddof=1) / np.sqrt(v.size))
                rows.append({"estimand": est, "n_items": str(n),
                             "epsilon": f"{ep:g}" if est == "winning_rate" else "",
                             "classical": float(v.mean()),
                             "classical_low": float(v.mean()) - z * se,
                             "classical_high": float(v.mean()) + z * se})
                det.append({"passes": pd.NA, "q05": float(np.quantile(v, 0.05)),
                            "q95": float(np.quantile(v, 0.95))})
    grid = np.array(sizes, dtype=float)
    for e, ep in enumerate(eps):
        p_hat = np.array([r["classical"] for r in rows if r["estimand"] == "pass_probability"
                          and r["epsilon"] == f"{ep:g}"])
        reach = np.flatnonzero(p_hat >= prob)
        need = grid[reach[0]] if reach.size else np.nan
        ok = beta_draws[:, e, :] >= prob                                  # (n, draws)
        first = np.where(ok.any(0), grid[np.argmax(ok, axis=0)], np.nan)
        row = {"estimand": "n_needed", "n_items": "", "epsilon": f"{ep:g}",
               "classical": need}
        if np.isfinite(first).mean() >= ci_prob:
            fin = first[np.isfinite(first)]
            h = hdi(fin, ci_prob, axis=(0,))
            row.update(mean=float(fin.mean()), sd=float(fin.std(ddof=1)),
                       hdi_low=float(h[0]), hdi_high=float(h[1]))
        rows.append(row)
        det.append({"passes": pd.NA, "q05": np.nan, "q95": np.nan})
    frame = pd.DataFrame(rows)
    index = pd.MultiIndex.from_frame(frame[["estimand", "n_items", "epsilon"]])
    table = frame.drop(columns=["estimand", "n_items", "epsilon"]).set_index(index)
    details = pd.DataFrame(det).set_index(index)
    details["passes"] = details["passes"].astype("Int64")
    notes = [f"{n_replicates} simulated datasets per number of instances; K = "
             f"{spec['n_categories']} categories, {spec['n_annotators']} annotators, noise "
             f"{spec['noise_annotators']:g} (annotators) and {spec['noise_judge']:g} (judge), "
             f"priors {'Dirichlet(1) per dataset' if spec['priors'] is None else 'fixed'}; "
             f"accuracy scoring, t tests, Benjamini-Yekutieli at q = {q:g}.",
             f"n_needed: the smallest number of instances in the grid whose pass probability "
             f"reaches {prob:g}; intervals are Monte Carlo uncertainty of the simulation."]
    return PlanResult(
        table, title="Planning the alt-test: pass probability against instances",
        info={"replicates": n_replicates, "sizes": len(sizes), "epsilons": len(eps)},
        details=details, notes=notes, ci_prob=ci_prob, ci_kind="hdi",
        classical_ci_kind="Clopper-Pearson (pass probability), normal (means)",
        posterior="Beta(1 + passes, 1 + fails) of the pass probability (Monte Carlo)",
        random_seed=seed)
