"""Time of the agreement toolkit on SummEval (issue 24): every coefficient and ICC form for
3 experts x 4 traits x 1,700 outputs with 1,000 Bayesian-bootstrap draws and 1,000
bootstrap resamples, against pingouin's ``intraclass_corr`` (point estimates of the 6 ICC
forms, 4 traits) timed in the same run. Prints the load average (the machine may be busy).

Target: under 10 s.

Second part (``--large``, issue 24): 2 raters x 120,000 outputs (simulated 1-5 ratings, 100
systems x 1,200 items), the ICC forms alone and every coefficient (point estimates with
their analytic intervals), against pingouin's ``intraclass_corr`` on the same data in the
same run (pingouin's users report 40 s for one ICC at this size with older versions).
Target: under 5 s.

    PYTHONPATH=. python benchmarks/bench_agreement.py [--n-resamples 1000] [--large]

Measured (2-core machine loaded by MCMC jobs, load average 13.7 12.8 11.9; wall clock;
15 estimands x 4 traits = 60 rows)::

    agreement_coefficients, point estimates                          0.16 s
    agreement_coefficients, 1000 Bayesian-bootstrap + 1000 bootstrap  7.77 s
    pingouin.intraclass_corr, 6 ICC forms x 4 traits, no resamples    0.20 s

``--large`` (same machine, load average 18.4 18.4 17.4; one shared Panel per trait and
einsum instead of threaded BLAS for the tall per-output products; before those, the same
call took 4.3 s at load 13.9)::

    agreement_coefficients, 6 ICC forms                     0.20 s
    agreement_coefficients, all 17 coefficients             0.93 s  (target < 5 s)
    pingouin.intraclass_corr, 6 ICC forms                   0.51 s
    ratio ICC forms bayesmeta / pingouin                    0.40
    (SummEval with 1000 + 1000 resamples in the same run: 9.64 s)

After the weighted sums shared between coefficients are computed once per resample chunk
(the agreement, the unit and rater margins, Krippendorff's pair sums; same numbers to
1e-14), at load average 16.1 17.5 17.2::

    agreement_coefficients, 1000 Bayesian-bootstrap + 1000 bootstrap   3.76 s  (SummEval)
    agreement_coefficients, all 17 coefficients                         1.35 s  (--large)
    ratio ICC forms bayesmeta / pingouin                                0.27

(2 raters x 120,000 outputs with 200 + 200 resamples: 14.5 s at load 16.)
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np
import pandas as pd
import xarray as xr

from bayesmeta.agreement.icc import ICC_FORMS


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-resamples", type=int, default=1000)
    parser.add_argument("--large", action="store_true",
                        help="also time 2 raters x 120,000 outputs against pingouin")
    args = parser.parse_args()
    import pingouin as pg

    import bayesmeta as bm

    data = bm.datasets.summeval()
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; "
          f"{os.cpu_count()} CPUs")
    t0 = time.perf_counter()
    point = bm.agreement_coefficients(data)
    t1 = time.perf_counter()
    res = bm.agreement_coefficients(data, resampling={"n_resamples": args.n_resamples},
                                    random_seed=0)
    t2 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for t in data["trait"].values:
            y = data["rating"].sel(trait=t).stack(u=("system", "item")).transpose("u", "rater")
            long = pd.DataFrame(y.values).reset_index().melt(id_vars="index", var_name="rater",
                                                             value_name="rating")
            pg.intraclass_corr(long, targets="index", raters="rater", ratings="rating")
    t3 = time.perf_counter()
    n_est = len(point.summary())
    print(f"agreement_coefficients, point estimates ({n_est} rows)       {t1 - t0:7.2f} s")
    print(f"agreement_coefficients, {args.n_resamples} Bayesian-bootstrap + "
          f"{args.n_resamples} bootstrap   {t2 - t1:7.2f} s  (target < 10 s)")
    print(f"pingouin.intraclass_corr, 6 ICC forms x 4 traits, no resamples  {t3 - t2:7.2f} s")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(res.summary().xs("COH", level="trait").round(3).to_string())
    if args.large:
        large(pg, bm)


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def large(pg, bm) -> None:
    """2 raters x 120,000 outputs: bayesmeta's ICC forms and every coefficient beside
    pingouin's six ICC forms on the same data."""
    n, S = 120_000, 100
    rng = np.random.default_rng(0)
    y = np.clip(np.round(3 + rng.normal(size=(n, 1)) + rng.normal(scale=0.7, size=(n, 2))),
                1, 5)
    rating = xr.DataArray(
        y.reshape(S, n // S, 2, 1), dims=("system", "item", "rater", "trait"),
        coords={"system": [f"s{i}" for i in range(S)],
                "item": [f"i{i}" for i in range(n // S)], "rater": ["A", "B"],
                "trait": ["T"]}, attrs={"scale_min": 1, "scale_max": 5})
    ds = xr.Dataset({"rating": rating})
    long = pd.DataFrame(y).reset_index().melt(id_vars="index", var_name="rater",
                                              value_name="rating")
    forms = list(ICC_FORMS)
    print(f"\n2 raters x {n:,} outputs; load average before: {_load()}")
    t0 = time.perf_counter()
    ours = bm.agreement_coefficients(ds, coefficients=forms)
    t1 = time.perf_counter()
    every = bm.agreement_coefficients(ds)
    t2 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = pg.intraclass_corr(long, targets="index", raters="rater", ratings="rating")
    t3 = time.perf_counter()
    icc2 = ours.summary().loc[("icc_twoway_agreement_single", "T"), "classical"]
    print(f"agreement_coefficients, 6 ICC forms                  {t1 - t0:7.2f} s")
    print(f"agreement_coefficients, all {len(every.summary())} coefficients           "
          f"{t2 - t1:7.2f} s  (target < 5 s)")
    print(f"pingouin.intraclass_corr, 6 ICC forms               {t3 - t2:7.2f} s")
    print(f"ratio ICC forms bayesmeta / pingouin                {(t1 - t0) / (t3 - t2):7.2f}")
    print(f"ICC(A,1): bayesmeta {icc2:.6f}, pingouin "
          f"{ref.set_index('Type').loc['ICC(A,1)', 'ICC']:.6f}")
    print(f"load average after: {_load()}")


if __name__ == "__main__":
    main()
