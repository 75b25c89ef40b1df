"""Frequentist coverage of the pass-rate posteriors of metric unit tests (issue 14).

Simulated pairs with known pass rates, scored through the same functions the analysis
uses (:mod:`bayesmeta.unit_tests.pass_rates`), 94% HDIs:

* Beta-Binomial per cell: fixed true rates .05, .40, .90, .985 in cells of 65, 214, 240 and
  500 pairs (the sizes of det_sub, passive, near_syms and swap_chunks), 300 simulations;
* hierarchical model of one category: three cells of 214, 240 and 65 pairs whose true
  rates are drawn from Beta(mean .35, concentration 8), 200 simulations;
* the paired comparison: two metrics on 240 pairs with pass rates .45 and .35 and a joint
  pass rate of .30, 300 simulations, interval of the difference.

Run: ``python benchmarks/coverage_mutt.py`` (about 20 s). The tests in
``tests/test_unit_tests_posterior.py`` run the first two with the same settings.
"""

from __future__ import annotations

import numpy as np

from bayesmeta.summaries import hdi
from bayesmeta.unit_tests import pass_rates as pr

CI = 0.94


def beta_binomial(n_sims: int = 300, seed: int = 11) -> tuple[float, int]:
    rng = np.random.default_rng(seed)
    truth = np.array([0.05, 0.4, 0.9, 0.985])
    n = np.array([65, 214, 240, 500])
    hits = np.zeros(truth.size)
    for _ in range(n_sims):
        k = rng.binomial(n, truth)
        iv = hdi(pr.beta_binomial_draws(k, n, rng, 4000), CI, axis=(0,))
        hits += (iv[:, 0] <= truth) & (truth <= iv[:, 1])
    print("Beta-Binomial, per cell (n=65, 214, 240, 500):", np.round(hits / n_sims, 3))
    return float(hits.sum() / (n_sims * truth.size)), n_sims * truth.size


def hierarchical(n_sims: int = 200, seed: int = 12) -> tuple[float, int]:
    rng = np.random.default_rng(seed)
    n = np.array([214, 240, 65])
    hits = np.zeros(3)
    for _ in range(n_sims):
        truth = rng.beta(0.35 * 8, 0.65 * 8, size=3)
        k = rng.binomial(n, truth)
        d = pr.hierarchical_draws(k, n, rng, 4000, n_mu=120, n_kappa=120)["p"]
        iv = hdi(d, CI, axis=(0,))
        hits += (iv[:, 0] <= truth) & (truth <= iv[:, 1])
    print("hierarchical, per cell (n=214, 240, 65):", np.round(hits / n_sims, 3))
    return float(hits.sum() / (n_sims * 3)), n_sims * 3


def paired(n_sims: int = 300, seed: int = 13) -> tuple[float, int]:
    rng = np.random.default_rng(seed)
    probs = np.array([0.30, 0.15, 0.05, 0.50])  # both, only A, only B, neither
    truth = probs[1] - probs[2]
    hits_b = hits_w = 0
    for _ in range(n_sims):
        counts = rng.multinomial(240, probs)
        iv = hdi(pr.paired_draws(counts, rng, 4000)[:, None], CI, axis=(0,))[0]
        hits_b += iv[0] <= truth <= iv[1]
        _, lo, hi = pr.paired_wald(counts, CI)
        hits_w += lo <= truth <= hi
    print(f"paired difference: Dirichlet HDI {hits_b / n_sims:.3f}, classical Wald "
          f"{hits_w / n_sims:.3f}")
    return hits_b / n_sims, n_sims


if __name__ == "__main__":
    for name, f in (("Beta-Binomial", beta_binomial), ("hierarchical", hierarchical),
                    ("paired Dirichlet", paired)):
        cov, m = f()
        print(f"{name}: coverage of the {CI:.0%} HDI = {cov:.3f} over {m} intervals "
              f"(binomial sd {np.sqrt(CI * (1 - CI) / m):.3f})")
