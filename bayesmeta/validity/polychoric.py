r"""Polychoric correlations of ordinal variables and the asymptotic covariance of the
thresholds and polychorics (the sample statistics of lavaan's WLSMV).

Each ordinal variable :math:`y_j` with categories :math:`1..K_j` is the coarsened version of a
standard normal :math:`y^*_j`: :math:`y_j = c \iff \tau_{j,c-1} < y^*_j \le \tau_{j,c}`, with
:math:`\tau_{j,0} = -\infty`, :math:`\tau_{j,K_j} = \infty`. Estimation is the two-step
method of Olsson (1979) as used by Muthén (1984) and lavaan:

1. **Thresholds** from the marginal proportions,
   :math:`\hat\tau_{j,c} = \Phi^{-1}(\hat P(y_j \le c))` (the univariate ML estimate).
2. **Polychoric correlation** of each pair with the thresholds held fixed: maximise
   :math:`\ell(\rho) = \sum_{a,b} n_{ab} \log \pi_{ab}(\rho)` with
   :math:`\pi_{ab} = \Phi_2(\tau_a, \kappa_b; \rho) - \Phi_2(\tau_{a-1}, \kappa_b; \rho)
   - \Phi_2(\tau_a, \kappa_{b-1}; \rho) + \Phi_2(\tau_{a-1}, \kappa_{b-1}; \rho)`
   (Fisher scoring; :math:`\partial \Phi_2 / \partial\rho = \phi_2`).
3. **Asymptotic covariance** :math:`\Gamma` of :math:`\sqrt N (\hat\tau, \hat\rho)`, from
   the casewise scores (Muthén 1984; lavaan's ``muthen1984``): with :math:`S` the
   :math:`N \times (n_\tau + n_\rho)` matrix of scores (univariate scores for the
   thresholds, bivariate scores with respect to :math:`\rho` for the correlations),
   :math:`B = S^\top S` and the block-triangular
   :math:`A = \begin{pmatrix} A_{11} & 0 \\ A_{21} & A_{22}\end{pmatrix}`, where
   :math:`A_{11}` is the per-variable block diagonal of :math:`B`,
   :math:`A_{21} = \sum_i s_{\rho,i} \, \partial \log \pi_{ab}(i) / \partial \tau` and
   :math:`A_{22} = \mathrm{diag}(\sum_i s_{\rho,i}^2)`,

   .. math:: \Gamma = N\, A^{-1} B A^{-\top}.

Missing values are handled pairwise (lavaan's ``missing = "pairwise"``): thresholds use
every observed value of a variable, a polychoric every case where both are observed, and a
missing value contributes a zero score. No case is dropped.

References
----------
Olsson, U. (1979). Maximum likelihood estimation of the polychoric correlation coefficient.
*Psychometrika*, 44, 443-460.
Muthén, B. (1984). A general structural equation model with dichotomous, ordered
categorical, and continuous latent variable indicators. *Psychometrika*, 49, 115-132.
Genz, A. (2004). Numerical computation of rectangular bivariate and trivariate normal and t
probabilities. *Statistics and Computing*, 14, 251-260.
Rosseel, Y. (2012). lavaan: An R package for structural equation modeling. *Journal of
Statistical Software*, 48(2).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import special

# Gauss-Legendre nodes/weights on [-1, 1] (20 points, as in Genz's BVND), one half.
_GL_X = np.array([
    0.9931285991850949, 0.9639719272779138, 0.9122344282513259, 0.8391169718222188,
    0.7463319064601508, 0.6360536807265150, 0.5108670019508271, 0.3737060887154196,
    0.2277858511416451, 0.07652652113349733])
_GL_W = np.array([
    0.01761400713915212, 0.04060142980038694, 0.06267204833410906, 0.08327674157670475,
    0.1019301198172404, 0.1181945319615184, 0.1316886384491766, 0.1420961093183821,
    0.1491729864726037, 0.1527533871307259])
_X = np.concatenate([1 - _GL_X, 1 + _GL_X])  # nodes on [0, 2]
_W = np.concatenate([_GL_W, _GL_W])
_TWO_PI = 2 * np.pi


def _phi(x: np.ndarray) -> np.ndarray:
    return np.exp(-0.5 * x * x) / np.sqrt(_TWO_PI)


def _bvn_upper(h: np.ndarray, k: np.ndarray, r: np.ndarray) -> np.ndarray:
    """P(X > h, Y > k) for finite h, k and |r| < 1 (Genz's BVNU, vectorised)."""
    out = np.empty(h.shape)
    small = np.abs(r) < 0.925
    if small.any():
        hs, ks, rs = h[small], k[small], r[small]
        hk = hs * ks
        half = (hs * hs + ks * ks) / 2
        asr = np.arcsin(rs) / 2
        sn = np.sin(asr[:, None] * _X[None, :])
        val = np.exp((sn * hk[:, None] - half[:, None]) / (1 - sn * sn)) @ _W
        out[small] = val * asr / _TWO_PI + special.ndtr(-hs) * special.ndtr(-ks)
    big = ~small
    if big.any():
        hb, kb, rb = h[big], k[big].copy(), r[big]
        kb = np.where(rb < 0, -kb, kb)
        hk = hb * kb
        a_s = 1 - rb * rb
        a = np.sqrt(a_s)
        bs = (hb - kb) ** 2
        c = (4 - hk) / 8
        d = (12 - hk) / 80
        asr = -(bs / a_s + hk) / 2
        bvn = np.where(asr > -100,
                       a * np.exp(asr) * (1 - c * (bs - a_s) * (1 - d * bs) / 3
                                          + c * d * a_s * a_s), 0.0)
        b = np.sqrt(bs)
        sp = np.sqrt(_TWO_PI) * special.ndtr(-b / a)
        bvn = np.where(hk > -100, bvn - np.exp(-hk / 2) * sp * b * (1 - c * bs * (1 - d * bs) / 3),
                       bvn)
        a2 = a / 2
        xs = (a2[:, None] * _X[None, :]) ** 2
        asr_x = -(bs[:, None] / xs + hk[:, None]) / 2
        ok = asr_x > -100
        spx = 1 + c[:, None] * xs * (1 + 5 * d[:, None] * xs)
        rs = np.sqrt(1 - xs)
        ep = np.exp(-(hk[:, None] / 2) * xs / (1 + rs) ** 2) / rs
        terms = np.where(ok, np.exp(np.where(ok, asr_x, 0.0)) * (spx - ep), 0.0)
        bvn = (a2 * (terms @ _W) - bvn) / _TWO_PI
        pos = rb > 0
        lower = np.where(hb < 0, special.ndtr(kb) - special.ndtr(hb),
                         special.ndtr(-hb) - special.ndtr(-kb))
        bvn = np.where(pos, bvn + special.ndtr(-np.maximum(hb, kb)),
                       np.where(hb >= kb, -bvn, lower - bvn))
        out[big] = bvn
    return np.clip(out, 0.0, 1.0)


def bvn_cdf(h: np.ndarray, k: np.ndarray, rho: np.ndarray | float) -> np.ndarray:
    r"""Bivariate standard normal CDF :math:`\Phi_2(h, k; \rho) = P(X \le h, Y \le k)`.

    Vectorised over broadcastable ``h``, ``k``, ``rho``; infinite limits are allowed. Genz's
    (2004) algorithm: Gauss-Legendre quadrature of Plackett's identity for
    :math:`|\rho| < 0.925`, Drezner-Wesolowsky's expansion beyond; absolute error about
    :math:`10^{-15}`.

    Examples
    --------
    >>> from bayesmeta.validity.polychoric import bvn_cdf
    >>> round(float(bvn_cdf(0.0, 0.0, 0.5)), 6)  # 1/4 + asin(0.5) / (2 pi)
    0.333333
    """
    h, k, r = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (h, k, rho)))
    shape = h.shape
    h, k, r = h.ravel(), k.ravel(), r.ravel()
    out = np.zeros(h.shape)
    neg_inf = (h == -np.inf) | (k == -np.inf)
    h_inf, k_inf = h == np.inf, k == np.inf
    out[h_inf & ~neg_inf] = special.ndtr(k[h_inf & ~neg_inf])
    out[k_inf & ~neg_inf & ~h_inf] = special.ndtr(h[k_inf & ~neg_inf & ~h_inf])
    finite = ~(neg_inf | h_inf | k_inf)
    if finite.any():
        out[finite] = _bvn_upper(-h[finite], -k[finite], r[finite])
    return out.reshape(shape)


def bvn_pdf(h: np.ndarray, k: np.ndarray, rho: np.ndarray | float) -> np.ndarray:
    r""":math:`\phi_2(h, k; \rho) = \exp\{-(h^2 - 2\rho hk + k^2) / (2(1-\rho^2))\} /
    (2\pi\sqrt{1-\rho^2})`, zero at infinite limits."""
    h, k, r = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (h, k, rho)))
    fin = np.isfinite(h) & np.isfinite(k)
    hh, kk = np.where(fin, h, 0.0), np.where(fin, k, 0.0)
    one = 1 - r * r
    val = np.exp(-(hh * hh - 2 * r * hh * kk + kk * kk) / (2 * one)) / (_TWO_PI * np.sqrt(one))
    return np.where(fin, val, 0.0)


@dataclass(frozen=True)
class PolychoricFit:
    """Sample statistics of ordinal data: thresholds, polychoric correlations, and their
    asymptotic covariance (see the module docstring).

    Attributes
    ----------
    variables : tuple of str
    levels : tuple of tuple of float
        The observed categories of each variable (as in R's ``ordered()``).
    thresholds : tuple of numpy.ndarray
        ``K_j - 1`` thresholds per variable.
    correlation : numpy.ndarray
        ``p x p`` polychoric correlation matrix.
    gamma : numpy.ndarray or None
        :math:`\\Gamma`, the asymptotic covariance of :math:`\\sqrt N` (thresholds,
        correlations) in :attr:`labels` order (lavaan's ``lavInspect(fit, "gamma")``).
    n_obs : int
        Number of cases (rows), missing values included.
    n_pairs : numpy.ndarray
        ``p x p`` number of cases observed on both variables.
    """

    variables: tuple[str, ...]
    levels: tuple[tuple[float, ...], ...]
    thresholds: tuple[np.ndarray, ...]
    correlation: np.ndarray
    gamma: np.ndarray | None
    n_obs: int
    n_pairs: np.ndarray

    @property
    def pairs(self) -> list[tuple[int, int]]:
        """Variable pairs ``(i, j)``, ``i > j``, in lavaan's order (column-wise lower
        triangle)."""
        p = len(self.variables)
        return [(i, j) for j in range(p - 1) for i in range(j + 1, p)]

    @property
    def labels(self) -> list[str]:
        """Labels of the statistics: ``"x|t1"`` thresholds, then ``"x~~y"`` correlations."""
        th = [f"{v}|t{c + 1}" for v, t in zip(self.variables, self.thresholds, strict=True)
              for c in range(len(t))]
        v = self.variables
        return th + [f"{v[j]}~~{v[i]}" for i, j in self.pairs]

    @property
    def statistics(self) -> np.ndarray:
        """The vector (thresholds, correlations) in :attr:`labels` order."""
        r = self.correlation
        return np.concatenate([*self.thresholds, [r[i, j] for i, j in self.pairs]])

    @property
    def n_thresholds(self) -> int:
        return int(sum(len(t) for t in self.thresholds))

    def to_frame(self) -> pd.DataFrame:
        """The polychoric correlation matrix as a labelled DataFrame."""
        return pd.DataFrame(self.correlation, index=list(self.variables),
                            columns=list(self.variables))


def _codes(column: np.ndarray) -> tuple[np.ndarray, tuple[float, ...]]:
    """Category codes 0..K-1 (``-1`` for missing) and the observed levels."""
    ok = ~np.isnan(column)
    levels, inv = np.unique(column[ok], return_inverse=True)
    codes = np.full(column.shape, -1, dtype=int)
    codes[ok] = inv
    return codes, tuple(float(v) for v in levels)


def _cell_probabilities(tau: np.ndarray, kappa: np.ndarray, rho: float,
                        threshold_grads: bool = True):
    """Cell probabilities and their derivatives for one pair; ``tau``/``kappa`` include
    the infinite end points. Returns ``P``, ``dP/drho``, and (if ``threshold_grads``) the
    grids ``H1``, ``H2`` with ``dPhi2(tau_a, kappa_b)/dtau_a = H1[a, b]`` and
    ``dPhi2/dkappa_b = H2[a, b]``."""
    tt, kk = np.meshgrid(tau, kappa, indexing="ij")
    grid = bvn_cdf(tt, kk, rho)
    dens = bvn_pdf(tt, kk, rho)
    prob = grid[1:, 1:] - grid[:-1, 1:] - grid[1:, :-1] + grid[:-1, :-1]
    dprob = dens[1:, 1:] - dens[:-1, 1:] - dens[1:, :-1] + dens[:-1, :-1]
    prob = np.maximum(prob, 1e-300)
    if not threshold_grads:
        return prob, dprob
    sd = np.sqrt(1 - rho * rho)
    t0, k0 = np.where(np.isfinite(tt), tt, 0.0), np.where(np.isfinite(kk), kk, 0.0)
    with np.errstate(invalid="ignore"):
        h1 = np.where(np.isfinite(tt), _phi(t0) * special.ndtr((kk - rho * t0) / sd), 0.0)
        h2 = np.where(np.isfinite(kk), _phi(k0) * special.ndtr((tt - rho * k0) / sd), 0.0)
    return prob, dprob, h1, h2


def _fit_rho(table: np.ndarray, tau: np.ndarray, kappa: np.ndarray, start: float) -> float:
    """ML polychoric correlation of one contingency table, thresholds fixed: Fisher
    scoring on rho, halving a step whenever it would lower the log-likelihood."""
    n = table.sum()
    rho = float(np.clip(start, -0.95, 0.95))
    p, dp = _cell_probabilities(tau, kappa, rho, threshold_grads=False)
    ll = float(np.sum(table * np.log(p)))
    for _ in range(200):
        step = float(np.sum(table * dp / p)) / float(n * np.sum(dp * dp / p))
        new = float(np.clip(rho + step, -0.99999, 0.99999))
        while True:
            p_new, dp_new = _cell_probabilities(tau, kappa, new, threshold_grads=False)
            ll_new = float(np.sum(table * np.log(p_new)))
            if ll_new >= ll - 1e-12 or abs(new - rho) < 1e-14:
                break
            new = (new + rho) / 2
        converged = abs(new - rho) < 1e-11
        rho, ll, p, dp = new, ll_new, p_new, dp_new
        if converged:
            break
    return rho


def polychoric(
    data: np.ndarray | pd.DataFrame,
    *,
    names: list[str] | None = None,
    acov: bool = True,
) -> PolychoricFit:
    r"""Thresholds, polychoric correlations and (optionally) their asymptotic covariance.

    Parameters
    ----------
    data : array (N, p) or DataFrame
        Ordinal values (any numbers; the sorted distinct observed values are the
        categories), NaN for missing.
    names : list of str, optional
        Variable names (default: the DataFrame's columns, else ``x1..xp``).
    acov : bool
        Also compute :math:`\Gamma` (needed for WLSMV standard errors and tests).

    Returns
    -------
    PolychoricFit

    Notes
    -----
    See the module docstring for the formulas. lavaan equivalent:
    ``lavCor(d, ordered = names(d), missing = "pairwise", output = "cor")`` and
    ``lavInspect(fit, "gamma")``. Every variable needs at least two observed categories.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmeta.validity.polychoric import polychoric
    >>> rng = np.random.default_rng(0)
    >>> z = rng.multivariate_normal([0, 0], [[1, 0.6], [0.6, 1]], size=2000)
    >>> y = np.digitize(z, [-1.0, 0.0, 1.0])  # 4 categories each
    >>> bool(abs(polychoric(y, acov=False).correlation[0, 1] - 0.6) < 0.05)
    True
    """
    if isinstance(data, pd.DataFrame):
        names = list(map(str, data.columns)) if names is None else names
        values = data.to_numpy(dtype=float)
    else:
        values = np.asarray(data, dtype=float)
    if values.ndim != 2 or values.shape[1] < 2:
        raise ValueError(f"data must be a 2-D array with at least two columns, got shape "
                         f"{values.shape}.")
    n_obs, p = values.shape
    names = [f"x{j + 1}" for j in range(p)] if names is None else list(names)
    if len(names) != p:
        raise ValueError(f"names has {len(names)} entries but data has {p} columns.")

    codes, levels, thresholds, cuts = [], [], [], []
    for j in range(p):
        c, lev = _codes(values[:, j])
        if len(lev) < 2:
            raise ValueError(f"variable {names[j]!r} has {len(lev)} observed categor"
                             f"{'y' if len(lev) == 1 else 'ies'}; at least 2 are needed.")
        counts = np.bincount(c[c >= 0], minlength=len(lev))
        tau = special.ndtri(np.cumsum(counts)[:-1] / counts.sum())
        codes.append(c)
        levels.append(lev)
        thresholds.append(tau)
        cuts.append(np.concatenate([[-np.inf], tau, [np.inf]]))

    corr = np.eye(p)
    n_pairs = np.zeros((p, p), dtype=int)
    tables = {}
    for j in range(p - 1):
        for i in range(j + 1, p):
            both = (codes[i] >= 0) & (codes[j] >= 0)
            table = np.zeros((len(levels[i]), len(levels[j])))
            np.add.at(table, (codes[i][both], codes[j][both]), 1.0)
            n_pairs[i, j] = n_pairs[j, i] = int(both.sum())
            if n_pairs[i, j] < 2:
                raise ValueError(f"variables {names[i]!r} and {names[j]!r} are observed "
                                 f"together in {n_pairs[i, j]} case(s); a polychoric "
                                 f"correlation needs more.")
            start = np.corrcoef(codes[i][both], codes[j][both])[0, 1]
            start = 0.0 if not np.isfinite(start) else start
            corr[i, j] = corr[j, i] = _fit_rho(table, cuts[i], cuts[j], start)
            tables[i, j] = table
    np.fill_diagonal(n_pairs, [int((c >= 0).sum()) for c in codes])

    fit = PolychoricFit(tuple(names), tuple(levels), tuple(thresholds), corr, None, n_obs,
                        n_pairs)
    if not acov:
        return fit
    return PolychoricFit(tuple(names), tuple(levels), tuple(thresholds), corr,
                         _gamma(fit, codes, cuts), n_obs, n_pairs)


def _gamma(fit: PolychoricFit, codes: list[np.ndarray], cuts: list[np.ndarray]) -> np.ndarray:
    """:math:`\\Gamma = N A^{-1} B A^{-T}` from casewise scores (Muthén 1984; lavaan)."""
    n, p = fit.n_obs, len(fit.variables)
    n_th = [len(t) for t in fit.thresholds]
    start = np.concatenate([[0], np.cumsum(n_th)])
    nth, pairs = start[-1], fit.pairs
    sc_th = np.zeros((n, nth))
    for j in range(p):
        c, tau = codes[j], cuts[j]
        prob = np.diff(special.ndtr(tau))
        obs = c >= 0
        for k in range(n_th[j]):  # threshold k+1 is the upper bound of category k
            d = _phi(tau[k + 1])
            col = np.zeros(n)
            col[obs & (c == k)] = d / prob[k]
            col[obs & (c == k + 1)] = -d / prob[k + 1]
            sc_th[:, start[j] + k] = col
    sc_rho = np.zeros((n, len(pairs)))
    a21 = np.zeros((len(pairs), nth))
    for q, (i, j) in enumerate(pairs):
        both = (codes[i] >= 0) & (codes[j] >= 0)
        a, b = codes[i][both], codes[j][both]
        prob, dprob, h1, h2 = _cell_probabilities(cuts[i], cuts[j], fit.correlation[i, j])
        s_rho = (dprob / prob)[a, b]
        sc_rho[both, q] = s_rho
        # bivariate scores with respect to the thresholds of variable i (rows) and j (cols)
        for k in range(n_th[i]):
            g = h1[k + 1, 1:] - h1[k + 1, :-1]  # d/dtau_k of the cells in row k / k+1
            dk = np.where(a == k, g[b], 0.0) - np.where(a == k + 1, g[b], 0.0)
            a21[q, start[i] + k] = np.sum(s_rho * dk / prob[a, b])
        for k in range(n_th[j]):
            g = h2[1:, k + 1] - h2[:-1, k + 1]
            dk = np.where(b == k, g[a], 0.0) - np.where(b == k + 1, g[a], 0.0)
            a21[q, start[j] + k] = np.sum(s_rho * dk / prob[a, b])
    scores = np.hstack([sc_th, sc_rho])
    inner = scores.T @ scores  # B; A11 is its per-variable block diagonal
    # A is block lower-triangular with A11 block diagonal and A22 diagonal:
    # A^-1 = [[A11^-1, 0], [-A22^-1 A21 A11^-1, A22^-1]]
    a11_inv = np.zeros((nth, nth))
    for j in range(p):
        blk = slice(start[j], start[j + 1])
        a11_inv[blk, blk] = np.linalg.inv(inner[blk, blk])
    a22_inv = 1 / np.sum(sc_rho * sc_rho, axis=0)
    ainv = np.zeros((nth + len(pairs), nth + len(pairs)))
    ainv[:nth, :nth] = a11_inv
    ainv[nth:, :nth] = -(a22_inv[:, None] * a21) @ a11_inv
    ainv[nth:, nth:] = np.diag(a22_inv)
    return n * ainv @ inner @ ainv.T
