r"""Null calibration of the WMT significance tests and posteriors (issue 25, "Must show").

Two metrics of equal validity (same loading, independent noise) in a campaign of
:func:`bayesmeta.wmt.simulate.simulate_campaign`: by exchangeability the true difference of
every statistic is 0. Per replicate and statistic, :func:`bayesmeta.significance_clusters`
gives the one-sided permutation p-value of "the metric ranked second is at least as good";
the direction is chosen after seeing the data (MTME's convention), so twice it is the
two-sided p-value, a false alarm when <= 0.05. ``bias_sd`` is the sd of each metric's
per-system error (0: errors independent per output, the assumption of swapping single
outputs). Also the 94% interval of the difference from the bootstrap and
from the Bayesian-bootstrap posterior (covers 0 or not).

Usage::

    nice python benchmarks/wmt_null_calibration.py [n_reps] [n_permutations] [n_resamples] [bias_sd]

Writes JSON lines to ``benchmarks/results/wmt_null_calibration.jsonl`` (one per setting).

The swap tests alone with p = (b + 1) / (n + 1) (label ``swap-tests-plus-one``; every
statistic's score swap, system Pearson's system swap, acc_eq's comparison swaps ``pairs``
and ``pairs-items``)::

    nice python benchmarks/wmt_null_calibration.py swap [n_reps] [n_permutations] \
        [bias_sd] [n_systems ...]

The number of draws behind an HDI (label ``hdi-draws``: system Pearson and PDP, 8 and 20
systems, 200 against 1,000 draws on the same campaigns)::

    nice python benchmarks/wmt_null_calibration.py draws [n_reps]

The paired-bootstrap study (label ``paired-bootstrap``; issue 25's calibrated test)::

    nice python benchmarks/wmt_null_calibration.py paired [n_reps] [n_permutations] \
        [n_resamples] [bias_sd] [n_systems ...]

per campaign and statistic: the bootstrap-t test of the paired difference over systems
(``boot_t``: :math:`|\hat\theta_A - \hat\theta_B| / s^* > t_{S-1, 0.975}`, the test of
``significance_clusters(pair_test="bootstrap")``; covers: the 94% t interval contains 0),
the percentile test of the paired bootstrap difference
(Efron & Tibshirani 1993, sec. 16.4: reject "equal expected statistic" at two-sided 5% when
0 lies outside the 95% percentile interval of :math:`\hat\theta_A^* - \hat\theta_B^*`,
both metrics' statistics on the same resample) for each resampled ``unit``, the 94%
interval of that difference and the 94% HDI of the Bayesian-bootstrap difference (cover 0
or not), and the swap permutation tests (two-sided p as above).

The defaults study (label ``defaults-unbiased``, before the Dirichlet((S - 2) / S) default
``defaults-systems``; the intervals and posterior of the public function with its default
resampling unit, systems for these statistics, and its default Dirichlet)::

    nice python benchmarks/wmt_null_calibration.py defaults [n_reps] [n_permutations] \
        [n_resamples] [bias_sd] [n_systems ...]

per campaign and statistic, from ``bm.significance_clusters(ds, "quality", statistic=...,
resampling={"n_resamples": ..., "n_permutations": ...})`` (``n_permutations`` only sets
SPA's inner system-pair tests; the pair test is the default paired bootstrap): the 94%
percentile interval of the difference of ``extra["bootstrap"]``, the 94% HDI of the
difference of ``extra["posterior"]`` (cover 0 or not), ``extra["p_beats"]`` outside
[0.025, 0.975], and the paired bootstrap test at two-sided 5%. ``concentration`` (label
``dirichlet-concentration``, exploratory) compares the flat Dirichlet over systems with
Dirichlet(``(S - 2) / S``) on the same campaigns. ``table defaults-systems`` prints the
latest lines of a label as a table.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import xarray as xr

import bayesmeta as bm
from bayesmeta.summaries import summarize
from bayesmeta.wmt._common import WMT_DIRICHLET
from bayesmeta.wmt.simulate import simulate_campaign

OUT = Path(__file__).parent / "results" / "wmt_null_calibration.jsonl"
#: label -> (statistic, extra keywords, permutation scheme)
STATISTICS = {"system_pearson": ("system_pearson", {}, "both"), "spa": ("spa", {}, "both"),
              "pdp": ("pdp", {}, "both"),
              "kendall_like": ("kendall_like", {"threshold": 25.0}, "both"),
              "within_item_acc_eq": ("within_item_acc_eq", {}, "both"),
              "within_item_acc_eq_pairs": ("within_item_acc_eq", {}, "pairs"),
              "within_item_acc_eq_pairs_items": ("within_item_acc_eq", {}, "pairs-items")}


def _rates(rows: list[dict], statistics, keys=None) -> dict:
    """Per statistic and key (default: every key the rows have), the share of campaigns
    where it is true and its binomial Monte Carlo sd, ``[rate, sd]``."""
    out: dict = {}
    for stat in statistics:
        out[stat] = {}
        for k in keys or sorted({k for r in rows for k in r[stat]}):
            rate = float(np.mean([r[stat][k] for r in rows]))
            out[stat][k] = [round(rate, 4),
                            round(float(np.sqrt(rate * (1 - rate) / len(rows))), 4)]
    return out


def _append(rec: dict) -> None:
    """Append one result line to ``OUT`` and print it."""
    OUT.parent.mkdir(exist_ok=True)
    with OUT.open("a") as f:
        f.write(json.dumps(rec) + "\n")
    print(json.dumps(rec), flush=True)


def _equal_metrics(n_systems: int, n_items: int, seed: int, bias_sd: float) -> xr.Dataset:
    return simulate_campaign(n_systems, n_items, 2, random_seed=seed, loadings=(0.6, 0.6),
                             bias_sd=bias_sd)


def one(n_systems: int, n_items: int, seed: int, n_perm: int, n_res: int,
        bias_sd: float = 0.15) -> dict:
    ds = _equal_metrics(n_systems, n_items, seed, bias_sd)
    out = {}
    for label, (stat, kw, scheme) in STATISTICS.items():
        res = bm.significance_clusters(ds, "quality", statistic=stat, random_seed=seed,
                                       resampling={"n_permutations": n_perm,
                                                   "n_resamples": n_res, "scheme": scheme},
                                       **kw)
        # one-sided in the direction observed (MTME's convention): twice it is two-sided
        p = min(1.0, 2 * float(res.matrix().to_numpy()[0, 1]))
        post = res.extra["posterior"].values
        boot = res.extra["bootstrap"].values
        d = xr.DataArray(post[:, 0] - post[:, 1], dims=("resample",))
        hdi = summarize(d, ci_prob=0.94)["interval"].values
        b = boot[:, 0] - boot[:, 1]
        lo, hi = np.nanquantile(b, [0.03, 0.97])
        out[label] = {"p": p, "hdi_covers": bool(hdi[0] <= 0 <= hdi[1]),
                     "boot_covers": bool(lo <= 0 <= hi)}
    return out


def main(n_reps: int = 100, n_perm: int = 200, n_res: int = 200, bias_sd: float = 0.15
         ) -> None:
    for n_systems in (8, 16, 30):
        t0 = time.time()
        rows = [one(n_systems, 50, 1000 * n_systems + r, n_perm, n_res, bias_sd)
                for r in range(n_reps)]
        summary = {}
        for stat in STATISTICS:
            ps = np.array([r[stat]["p"] for r in rows])
            summary[stat] = {
                "type1_0.05": float((ps <= 0.05).mean()),
                "hdi94_coverage": float(np.mean([r[stat]["hdi_covers"] for r in rows])),
                "boot94_coverage": float(np.mean([r[stat]["boot_covers"] for r in rows]))}
        rec = {"benchmark": "wmt_null_calibration", "n_systems": n_systems, "n_items": 50,
               "bias_sd": bias_sd, "pvalue": "two-sided (2 x one-sided)",
               "n_reps": n_reps, "n_permutations": n_perm, "n_resamples": n_res,
               "results": summary, "seconds": round(time.time() - t0, 1),
               "loadavg": os.getloadavg(), "bayesmeta": bm.__version__}
        _append(rec)


UNITS = ("both", "systems", "items")


def one_paired(n_systems: int, n_items: int, seed: int, n_perm: int, n_res: int,
               bias_sd: float, pvalue: str = "raw") -> dict:
    """One null campaign: per statistic, the paired-bootstrap tests and intervals of every
    unit, the Bayesian-bootstrap HDI, and the swap tests' two-sided p-values."""
    from scipy.stats import t as t_dist

    from bayesmeta.wmt._common import draws, inputs
    from bayesmeta.wmt.clusters import _statistic

    ds = _equal_metrics(n_systems, n_items, seed, bias_sd)
    x, z, _, _ = inputs(ds, "quality", None, None, None, None, "first")
    out = {}
    for label, (stat_name, kw, scheme) in STATISTICS.items():
        row: dict = {}
        if scheme == "both" and n_res:
            stat = _statistic(stat_name, kw.get("threshold", 25.0), n_perm or 100, 4,
                              z.shape[1])
            for unit in UNITS:
                b = draws(stat, x, z, "bootstrap", n_res, seed + 1, unit)
                d = b[:, 0] - b[:, 1]
                lo95, hi95 = np.nanquantile(d, [0.025, 0.975])
                lo94, hi94 = np.nanquantile(d, [0.03, 0.97])
                row[f"boot_{unit}_reject"] = bool(not lo95 <= 0 <= hi95)
                row[f"boot_{unit}_covers"] = bool(lo94 <= 0 <= hi94)
                if unit == "systems":
                    # the test of significance_clusters(pair_test="bootstrap"): bootstrap-t
                    pt = np.asarray(stat(x, z, None, None), float)
                    se, df = np.nanstd(d, ddof=1), n_systems - 1
                    tt = abs(pt[0] - pt[1]) / se
                    row["boot_t_reject"] = bool(tt > t_dist.ppf(0.975, df))
                    row["boot_t_covers"] = bool(tt <= t_dist.ppf(0.97, df))
            post = draws(stat, x, z, "bayesian", n_res, seed + 2)
            d = xr.DataArray(post[:, 0] - post[:, 1], dims=("resample",))
            hdi = summarize(d, ci_prob=0.94)["interval"].values
            row["hdi_covers"] = bool(hdi[0] <= 0 <= hdi[1])
            pb = float((d.values > 0).mean() + 0.5 * (d.values == 0).mean())
            row["bayes_reject"] = bool(min(pb, 1 - pb) <= 0.025)
        if n_perm:
            schemes = [scheme] + (["systems"] if stat_name == "system_pearson" else [])
            for sc in schemes:
                res = bm.significance_clusters(
                    ds, "quality", statistic=stat_name, random_seed=seed,
                    pair_test="permutation",
                    resampling={"n_permutations": n_perm, "n_resamples": 0, "scheme": sc,
                                "pvalue": pvalue},
                    **kw)
                p = min(1.0, 2 * float(res.matrix().to_numpy()[0, 1]))
                row[f"swap_{sc}_reject"] = bool(p <= 0.05)
        out[label] = row
    return out


def paired_main(n_reps: int = 200, n_perm: int = 100, n_res: int = 200,
                bias_sd: float = 0.15, systems: tuple[int, ...] = (8, 20),
                pvalue: str = "raw") -> None:
    """The ``paired-bootstrap`` study (``swap-tests`` with ``n_res=0``; ``swap`` mode:
    ``swap-tests-plus-one``, p = (b + 1) / (n + 1)): one JSON line per number of systems,
    each rate with its binomial Monte Carlo sd."""
    for n_systems in systems:
        t0 = time.time()
        rows = [one_paired(n_systems, 50, 1000 * n_systems + r, n_perm, n_res, bias_sd,
                           pvalue) for r in range(n_reps)]
        summary = _rates(rows, STATISTICS)
        rec = {"benchmark": "wmt_null_calibration",
               "label": "paired-bootstrap" if n_res else "swap-tests" + (
                   "-plus-one" if pvalue == "plus-one" else ""), "pvalue": pvalue,
               "n_systems": n_systems, "n_items": 50, "bias_sd": bias_sd,
               "test": "two-sided 5%: 0 outside the 95% interval (bootstrap), "
                       "P(A beats B) outside [0.025, 0.975] (Bayesian), 2 x one-sided p "
                       "<= 0.05 (swap); covers: 94% interval contains 0",
               "rates": "[rate, binomial Monte Carlo sd]",
               "n_reps": n_reps, "n_permutations": n_perm, "n_resamples": n_res,
               "results": summary, "seconds": round(time.time() - t0, 1),
               "loadavg": os.getloadavg(), "bayesmeta": bm.__version__}
        _append(rec)


def pairs_variance(n_reps: int = 150, systems: tuple[int, ...] = (8, 20)) -> None:
    """Why the comparison swap over-rejects: the sd of acc_eq(A) - acc_eq(B) across null
    campaigns (per-output errors only) against the mean sd of the comparison-swap null,
    :math:`\\sqrt{\\sum_p c_p^2 d_p^2}` (independent sign flips keep only the diagonal of
    the covariance; comparisons sharing an output are positively correlated). Label
    ``pairs-variance``; the normal approximation of the rejection rate at a nominal
    two-sided 5% is :math:`2\\Phi(-1.96 / \\text{ratio})`."""
    from scipy.stats import norm

    from bayesmeta.wmt import ties
    from bayesmeta.wmt._common import inputs

    for n_systems in systems:
        d_obs, sd_swap = [], []
        for r in range(n_reps):
            ds = _equal_metrics(n_systems, 50, 50000 + 100 * n_systems + r, 0.0)
            x, z, _, _ = inputs(ds, "quality", None, None, None, None, "first")
            _, eps = ties.calibrate_ties(x, z, grouping="item")
            agree, coef = ties.agreement(x, z, eps, grouping="item")
            diff = (agree[0] - agree[1]) * coef
            d_obs.append(diff.sum())
            sd_swap.append(np.sqrt((diff ** 2).sum()))
        ratio = float(np.std(d_obs, ddof=1) / np.mean(sd_swap))
        rec = {"benchmark": "wmt_null_calibration", "label": "pairs-variance",
               "n_systems": n_systems, "n_items": 50, "bias_sd": 0.0, "n_reps": n_reps,
               "sd_null_difference": float(np.std(d_obs, ddof=1)),
               "mean_sd_comparison_swap": float(np.mean(sd_swap)), "ratio": ratio,
               "implied_rejection_at_5pct": float(2 * norm.sf(1.959964 / ratio)),
               "loadavg": os.getloadavg(), "bayesmeta": bm.__version__}
        _append(rec)


#: The statistics of the ``defaults`` study (the swap schemes do not matter there).
DEFAULT_STATISTICS = {k: v for k, v in STATISTICS.items() if v[2] == "both"}


def one_defaults(n_systems: int, n_items: int, seed: int, n_perm: int, n_res: int,
                 bias_sd: float) -> dict:
    """One null campaign through the public function with its defaults (except
    ``n_resamples`` and SPA's inner ``n_permutations``): per statistic, whether the 94%
    percentile interval of the bootstrap difference (``extra["bootstrap"]``) and the 94%
    HDI of the posterior difference (``extra["posterior"]``) contain 0, whether
    P(A beats B) (``extra["p_beats"]``) lies outside [0.025, 0.975], and whether the
    default paired bootstrap-t test rejects at two-sided 5% (2 x the matrix's one-sided p)."""
    ds = _equal_metrics(n_systems, n_items, seed, bias_sd)
    out = {}
    for label, (stat_name, kw, _) in DEFAULT_STATISTICS.items():
        res = bm.significance_clusters(ds, "quality", statistic=stat_name, random_seed=seed,
                                       resampling={"n_resamples": n_res,
                                                   "n_permutations": n_perm}, **kw)
        boot = res.extra["bootstrap"].values
        post = res.extra["posterior"].values
        b = boot[:, 0] - boot[:, 1]
        lo, hi = np.nanquantile(b, [0.03, 0.97])
        d = xr.DataArray(post[:, 0] - post[:, 1], dims=("resample",))
        hdi = summarize(d, ci_prob=0.94)["interval"].values
        pb = float(res.extra["p_beats"].values[0, 1])
        p = min(1.0, 2 * float(res.matrix().to_numpy()[0, 1]))
        out[label] = {"boot_covers": bool(lo <= 0 <= hi),
                      "hdi_covers": bool(hdi[0] <= 0 <= hdi[1]),
                      "p_beats_reject": bool(not 0.025 <= pb <= 0.975),
                      "pair_test_reject": bool(p <= 0.05),
                      "kind": [res.summary().attrs.get("classical_ci_kind"),
                               res.posterior_kind]}
    return out


def defaults_main(n_reps: int = 200, n_perm: int = 100, n_res: int = 200,
                  bias_sd: float = 0.15, systems: tuple[int, ...] = (8, 20)) -> None:
    """The defaults study: the public ``significance_clusters`` with its default resampling
    unit (systems for these statistics) and Dirichlet (label ``defaults-<dirichlet>``:
    ``defaults-systems`` was the flat Dirichlet, ``defaults-unbiased`` the current
    default); one JSON line per number of systems, each rate with its binomial Monte Carlo
    sd."""
    for n_systems in systems:
        t0 = time.time()
        rows = [one_defaults(n_systems, 50, 1000 * n_systems + r, n_perm, n_res, bias_sd)
                for r in range(n_reps)]
        summary = _rates(rows, DEFAULT_STATISTICS,
                         ("boot_covers", "hdi_covers", "p_beats_reject", "pair_test_reject"))
        for stat in DEFAULT_STATISTICS:
            summary[stat]["kind"] = rows[0][stat]["kind"]
        rec = {"benchmark": "wmt_null_calibration", "label": f"defaults-{WMT_DIRICHLET}",
               "call": "bm.significance_clusters(ds, 'quality', statistic=..., "
                       "random_seed=seed, resampling={'n_resamples': n_resamples, "
                       "'n_permutations': n_permutations}) (default unit, dirichlet and "
                       "pair_test)",
               "n_systems": n_systems, "n_items": 50, "bias_sd": bias_sd,
               "test": "covers: 94% percentile interval (bootstrap) / 94% HDI (posterior) "
                       "of the difference contains 0; p_beats_reject: P(A beats B) outside "
                       "[0.025, 0.975]; pair_test_reject: 2 x one-sided p <= 0.05",
               "rates": "[rate, binomial Monte Carlo sd]",
               "n_reps": n_reps, "n_permutations": n_perm, "n_resamples": n_res,
               "results": summary, "seconds": round(time.time() - t0, 1),
               "loadavg": os.getloadavg(), "bayesmeta": bm.__version__}
        _append(rec)


def one_concentration(n_systems: int, n_items: int, seed: int, n_perm: int, n_res: int,
                      bias_sd: float, alphas: dict[str, float]) -> dict:
    r"""Exploratory: the posterior of the difference under system weights
    :math:`S\,\mathrm{Dir}(\alpha 1_S)` (items weighing one) for each ``alphas`` entry:
    whether its 94% HDI contains 0 and whether P(A beats B) lies outside [0.025, 0.975].
    ``alpha = 1`` is the default flat Dirichlet; ``alpha = (S - 2) / S`` makes the
    posterior variance of a mean :math:`\hat\sigma^2_{\text{biased}} / (S\alpha + 1)`
    equal to the usual :math:`s^2 / S`."""
    from bayesmeta.wmt._common import inputs
    from bayesmeta.wmt.clusters import _statistic

    ds = _equal_metrics(n_systems, n_items, seed, bias_sd)
    x, z, _, _ = inputs(ds, "quality", None, None, None, None, "first")
    S = z.shape[0]
    out = {}
    for label, (stat_name, kw, _) in DEFAULT_STATISTICS.items():
        stat = _statistic(stat_name, kw.get("threshold", 25.0), n_perm, 4, z.shape[1])
        row = {}
        for name, alpha in alphas.items():
            rng = np.random.default_rng([seed, 2])
            a = S * rng.dirichlet(np.full(S, alpha), size=n_res)
            post = stat(x, z, a, None)
            d = xr.DataArray(post[:, 0] - post[:, 1], dims=("resample",))
            hdi = summarize(d, ci_prob=0.94)["interval"].values
            pb = float((d.values > 0).mean() + 0.5 * (d.values == 0).mean())
            row[f"hdi_covers_{name}"] = bool(hdi[0] <= 0 <= hdi[1])
            row[f"p_beats_reject_{name}"] = bool(not 0.025 <= pb <= 0.975)
        out[label] = row
    return out


def concentration_main(n_reps: int = 200, n_perm: int = 100, n_res: int = 200,
                       bias_sd: float = 0.15, systems: tuple[int, ...] = (8, 20)) -> None:
    r"""Label ``dirichlet-concentration`` (exploratory, not a default): the flat Dirichlet
    over systems against :math:`\alpha = (S - 2) / S`, same campaigns as ``defaults``."""
    for n_systems in systems:
        t0 = time.time()
        alphas = {"flat": 1.0, "s2": (n_systems - 2) / n_systems}
        rows = [one_concentration(n_systems, 50, 1000 * n_systems + r, n_perm, n_res,
                                  bias_sd, alphas) for r in range(n_reps)]
        summary = _rates(rows, DEFAULT_STATISTICS)
        rec = {"benchmark": "wmt_null_calibration", "label": "dirichlet-concentration",
               "alphas": {"flat": 1.0, "s2": "(S - 2) / S"},
               "n_systems": n_systems, "n_items": 50, "bias_sd": bias_sd,
               "test": "94% HDI of the posterior difference contains 0; P(A beats B) "
                       "outside [0.025, 0.975]",
               "rates": "[rate, binomial Monte Carlo sd]",
               "n_reps": n_reps, "n_permutations": n_perm, "n_resamples": n_res,
               "results": summary, "seconds": round(time.time() - t0, 1),
               "loadavg": os.getloadavg(), "bayesmeta": bm.__version__}
        _append(rec)


def table(labels: tuple[str, ...] = ("paired-bootstrap", "swap-tests")) -> None:
    """Print the latest lines of ``labels`` as one table: rate (Monte Carlo sd) per
    statistic, test and setting."""
    latest: dict = {}
    for line in OUT.read_text().splitlines():
        r = json.loads(line)
        if r.get("label") in labels:
            for stat, v in r["results"].items():
                for k, val in v.items():
                    if k == "kind":
                        continue
                    rate, sd = val
                    latest[(stat, k, r["n_systems"], r["bias_sd"])] = f"{rate:.3f} ({sd:.3f})"
    cols = sorted({(k[2], k[3]) for k in latest})
    print(f"{'statistic':26s} {'test':22s} " + " ".join(f"S={c[0]},bias={c[1]:<10}"
                                                      for c in cols))
    for stat, key in sorted({(k[0], k[1]) for k in latest}):
        print(f"{stat:26s} {key:22s} " + " ".join(
            f"{latest.get((stat, key, *c), '-'):19s}" for c in cols))


def hdi_draws(n_reps: int = 200, bias_sd: float = 0.15, systems: tuple[int, ...] = (8, 20),
              counts: tuple[int, ...] = (200, 1000)) -> None:
    """Label ``hdi-draws``: the 94% HDI coverage of the posterior difference (system Pearson
    and PDP, the default Dirichlet((S - 2) / S) over systems) on the same null campaigns
    and weight streams as the defaults study, with 200 and with 1,000 draws: the empirical
    HDI of few draws is too narrow."""
    from bayesmeta.wmt._common import draws, inputs
    from bayesmeta.wmt.clusters import _statistic

    for n_systems in systems:
        t0 = time.time()
        hits = {(s, n): [] for s in ("system_pearson", "pdp") for n in counts}
        for r in range(n_reps):
            seed = 1000 * n_systems + r
            ds = _equal_metrics(n_systems, 50, seed, bias_sd)
            x, z, _, _ = inputs(ds, "quality", None, None, None, None, "first")
            for s, n in hits:
                stat = _statistic(s, 25.0, 100, 4, z.shape[1])
                post = draws(stat, x, z, "bayesian", n, seed + 2, "systems",
                             dirichlet="unbiased")
                d = xr.DataArray(post[:, 0] - post[:, 1], dims=("resample",))
                lo, hi = summarize(d, ci_prob=0.94)["interval"].values
                hits[(s, n)].append(bool(lo <= 0 <= hi))
        res = {f"{s}@{n}": [float(np.mean(v)), float(np.sqrt(np.mean(v) * (1 - np.mean(v))
                                                             / len(v)))]
               for (s, n), v in hits.items()}
        _append({"benchmark": "wmt_null_calibration", "label": "hdi-draws",
                 "n_systems": n_systems, "n_items": 50, "bias_sd": bias_sd, "n_reps": n_reps,
                 "test": "94% HDI of the posterior difference contains 0, by number of draws",
                 "rates": "[rate, binomial Monte Carlo sd]", "results": res,
                 "seconds": round(time.time() - t0, 1), "loadavg": os.getloadavg(),
                 "bayesmeta": bm.__version__})


if __name__ == "__main__":
    if sys.argv[1:2] == ["table"]:
        table(*([tuple(sys.argv[2:])] if sys.argv[2:] else []))
    elif sys.argv[1:2] == ["variance"]:
        pairs_variance(*[int(v) for v in sys.argv[2:3]])
    elif sys.argv[1:2] == ["concentration"]:
        a = sys.argv[2:]
        concentration_main(*[int(v) for v in a[:3]], *[float(v) for v in a[3:4]],
                           *([tuple(int(v) for v in a[4:])] if a[4:] else []))
    elif sys.argv[1:2] == ["defaults"]:
        a = sys.argv[2:]
        defaults_main(*[int(v) for v in a[:3]], *[float(v) for v in a[3:4]],
                      *([tuple(int(v) for v in a[4:])] if a[4:] else []))
    elif sys.argv[1:2] == ["draws"]:
        hdi_draws(*[int(v) for v in sys.argv[2:3]])
    elif sys.argv[1:2] == ["swap"]:
        a = sys.argv[2:]
        paired_main(*[int(v) for v in a[:2]], 0, *[float(v) for v in a[2:3]],
                    *([tuple(int(v) for v in a[3:])] if a[3:] else [(8, 20)]),
                    pvalue="plus-one")
    elif sys.argv[1:2] == ["paired"]:
        a = sys.argv[2:]
        paired_main(*[int(v) for v in a[:3]], *[float(v) for v in a[3:4]],
                    *([tuple(int(v) for v in a[4:])] if a[4:] else []))
    else:
        main(*[int(a) for a in sys.argv[1:4]], *[float(a) for a in sys.argv[4:5]])
