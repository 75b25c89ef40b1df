r"""Posteriors of metric unit-test pass rates: conjugate, exact-grid and paired.

Three models, all NumPy/SciPy (exact or on a grid, no MCMC):

* **Beta-Binomial per cell**: ``k`` passes of ``n`` pairs, ``p ~ Beta(a, b)`` gives
  ``p | k ~ Beta(a + k, b + n - k)``.
* **Hierarchical across the corruptions of one category** (partial pooling): ``k_j ~
  Binomial(n_j, p_j)``, ``p_j ~ Beta(mu kappa, (1 - mu) kappa)``, ``mu ~ Uniform(0, 1)``,
  ``kappa`` with density ``(1 + kappa)^{-2}`` (a proper prior with median 1 that lets the
  data choose between no pooling and full pooling). The posterior of ``(mu, log kappa)``
  is computed on a grid from the beta-binomial marginal likelihood ``prod_j BB(k_j | n_j,
  mu kappa, (1 - mu) kappa)``; draws of ``p_j`` then come exactly from ``Beta(mu kappa +
  k_j, (1 - mu) kappa + n_j - k_j)`` (Gelman et al., BDA3, Sec. 5.3).
* **Paired comparison of two metrics on the same pairs**: the four joint outcomes (both
  pass, only A, only B, neither) are multinomial with a Dirichlet posterior; the
  difference of pass rates is ``theta_A - theta_B`` (the two "only" cells) and
  ``P(A passes more often than B) = P(theta_A > theta_B) = P(Beta(alpha_A, alpha_B) >
  1/2)`` in closed form. The same model contrasts one metric's pass rate at two numbers
  of references (the pairs are the same).
"""

from __future__ import annotations

import numpy as np
from scipy import special, stats

#: Default prior of the per-cell Beta-Binomial (uniform) and the paired Dirichlet.
BETA_PRIOR = (1.0, 1.0)
DIRICHLET_PRIOR = 1.0


def beta_binomial_draws(k: np.ndarray, n: np.ndarray, rng: np.random.Generator, n_draws: int,
                        prior: tuple[float, float] = BETA_PRIOR) -> np.ndarray:
    """Exact posterior draws of each cell's pass rate, shape ``(n_draws, cells)``.

    Examples
    --------
    >>> import numpy as np
    >>> d = beta_binomial_draws(np.array([3]), np.array([10]), np.random.default_rng(0), 4000)
    >>> round(float(d.mean()), 2)  # (1 + 3) / (2 + 10)
    0.33
    """
    k, n = np.asarray(k, float), np.asarray(n, float)
    a, b = prior
    return rng.beta(a + k, b + n - k, size=(n_draws, k.size))


def _log_prior_kappa(log_kappa: np.ndarray) -> np.ndarray:
    kappa = np.exp(log_kappa)
    return np.log(kappa) - 2 * np.log1p(kappa)  # density (1 + kappa)^-2 on the log scale


def hierarchical_grid(k: np.ndarray, n: np.ndarray, *, n_mu: int = 200, n_kappa: int = 200,
                      log_kappa: tuple[float, float] = (-3.0, 10.0)
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Posterior of ``(mu, log kappa)`` on a grid: ``(mu values, log-kappa values,
    normalised probabilities of shape (n_mu, n_kappa))``. Cell midpoints; the grid spans
    kappa from e^-3 (no pooling) to e^10 (full pooling)."""
    k, n = np.asarray(k, float), np.asarray(n, float)
    mu = (np.arange(n_mu) + 0.5) / n_mu
    lk = np.linspace(*log_kappa, n_kappa)
    kappa = np.exp(lk)
    a = mu[:, None, None] * kappa[None, :, None]
    b = (1 - mu)[:, None, None] * kappa[None, :, None]
    ll = (special.betaln(a + k, b + n - k) - special.betaln(a, b)).sum(-1)
    lp = ll + _log_prior_kappa(lk)[None, :]
    lp -= lp.max()
    w = np.exp(lp)
    return mu, lk, w / w.sum()


def hierarchical_draws(k: np.ndarray, n: np.ndarray, rng: np.random.Generator, n_draws: int,
                       **grid: int) -> dict[str, np.ndarray]:
    """Posterior draws of the partially pooled pass rates ``p`` (``(n_draws, cells)``) and
    of the category's ``mu`` and ``kappa``."""
    k, n = np.asarray(k, float), np.asarray(n, float)
    mu, lk, w = hierarchical_grid(k, n, **grid)
    flat = rng.choice(w.size, size=n_draws, p=w.ravel())
    i, j = np.unravel_index(flat, w.shape)
    dmu = 1.0 / mu.size
    dlk = lk[1] - lk[0]
    m = np.clip(mu[i] + rng.uniform(-dmu / 2, dmu / 2, n_draws), 1e-9, 1 - 1e-9)
    kap = np.exp(lk[j] + rng.uniform(-dlk / 2, dlk / 2, n_draws))
    a = m[:, None] * kap[:, None] + k[None, :]
    b = (1 - m)[:, None] * kap[:, None] + (n - k)[None, :]
    return {"p": rng.beta(a, b), "mu": m, "kappa": kap}


def paired_counts(pass_a: np.ndarray, pass_b: np.ndarray) -> np.ndarray:
    """Counts of the four joint outcomes (both, only A, only B, neither) of two boolean
    vectors over the same pairs."""
    a, b = np.asarray(pass_a, bool), np.asarray(pass_b, bool)
    return np.array([(a & b).sum(), (a & ~b).sum(), (~a & b).sum(), (~a & ~b).sum()])


def paired_draws(counts: np.ndarray, rng: np.random.Generator, n_draws: int,
                 prior: float = DIRICHLET_PRIOR) -> np.ndarray:
    """Draws of the difference of pass rates ``theta_A - theta_B`` from the Dirichlet
    posterior of the four joint outcomes."""
    theta = rng.dirichlet(np.asarray(counts, float) + prior, size=n_draws)
    return theta[:, 1] - theta[:, 2]


def p_beats(counts: np.ndarray, prior: float = DIRICHLET_PRIOR) -> float:
    """Closed-form posterior probability that metric A passes more often than B on the
    same pairs: ``P(theta_A > theta_B) = P(Beta(c_A + prior, c_B + prior) > 1/2)``.

    Examples
    --------
    >>> p_beats(np.array([10, 0, 0, 10]))  # no discordant pair: a coin flip
    0.5
    """
    c = np.asarray(counts, float)
    return float(stats.beta.sf(0.5, c[1] + prior, c[2] + prior))


def mcnemar_exact(counts: np.ndarray) -> float:
    """Two-sided exact McNemar p-value: a binomial test of the discordant pairs (only A
    vs only B) against 1/2 (``scipy.stats.binomtest``); 1.0 with no discordant pair."""
    b, c = int(counts[1]), int(counts[2])
    if b + c == 0:
        return 1.0
    return float(stats.binomtest(b, b + c, 0.5).pvalue)


def paired_wald(counts: np.ndarray, ci_prob: float) -> tuple[float, float, float]:
    """Classical difference of paired proportions ``(b - c) / n`` with its Wald interval,
    variance ``(b + c - (b - c)^2 / n) / n^2`` (Agresti, *Categorical Data Analysis*,
    Sec. 10.1)."""
    n = float(np.sum(counts))
    b, c = float(counts[1]), float(counts[2])
    d = (b - c) / n
    se = np.sqrt(max(b + c - (b - c) ** 2 / n, 0.0)) / n
    z = stats.norm.ppf((1 + ci_prob) / 2)
    return d, d - z * se, d + z * se


def clopper_pearson(k: np.ndarray, n: np.ndarray, ci_prob: float
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Exact (Clopper-Pearson) interval of a binomial proportion, vectorised; the same as
    ``scipy.stats.binomtest(k, n).proportion_ci(ci_prob, method="exact")``."""
    k, n = np.asarray(k, float), np.asarray(n, float)
    alpha = 1 - ci_prob
    with np.errstate(invalid="ignore"):
        lo = np.where(k > 0, stats.beta.ppf(alpha / 2, k, n - k + 1), 0.0)
        hi = np.where(k < n, stats.beta.ppf(1 - alpha / 2, k + 1, n - k), 1.0)
    return lo, hi


__all__ = ["beta_binomial_draws", "clopper_pearson", "hierarchical_draws",
           "hierarchical_grid", "mcnemar_exact", "p_beats", "paired_counts", "paired_draws",
           "paired_wald"]
