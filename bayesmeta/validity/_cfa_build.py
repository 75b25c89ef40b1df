"""PyMC model builder of the Bayesian ordinal CFA (see :mod:`bayesmeta.validity.ordinal_cfa`).

Kept apart from the public module so that the parameterisation study of the model card
(``models/ordinal_cfa.md``) and the benchmark can build every variant with one function.
PyMC and PyTensor are imported inside the functions.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from bayesmeta._ordinal import log_interval_prob, padded_cutpoints

#: Parameterisations of the factor scores (see :func:`build_model`).
FACTOR_PARAMS = ("polar", "zerosum", "noncentred")
#: What :func:`build_model` also takes: ``"centred"`` scores, for the joint metric-validity
#: model (many indicators per output), not among ``bm.cfa``'s parameterizations.
BUILD_FACTOR_PARAMS = (*FACTOR_PARAMS, "centred")
#: Likelihood implementations (see :func:`build_model`).
LIKELIHOODS = ("split", "splitfast", "interval")

_HALF_LOG_2PI = 0.5 * float(np.log(2 * np.pi))
_SQRT2 = float(np.sqrt(2.0))
_CLIP = 25.0  # log Phi(x) is 0 to double precision beyond 8.3; 25 keeps erfcx finite


@dataclass(frozen=True)
class Design:
    """The data of an ordinal CFA in long form, one entry per observed rating.

    Attributes
    ----------
    factors : tuple of str
        Factor names (the ``trait`` dim of the model).
    indicators : tuple of str
        Indicator (data column) names, in model order.
    factor_of : numpy.ndarray of int, shape (J,)
        The factor of each indicator.
    n_categories : int
        Categories ``1..K`` of the rating scale (``K - 1`` cut points per indicator).
    n_rows : int
        Number of outputs (rows of the wide data).
    row, ind, cat : numpy.ndarray of int
        Long-form data: row index, indicator index and category ``0..K-1`` of every
        observed rating; missing ratings are absent.
    blocks : tuple of tuple of int
        Groups of factors whose correlations are free; correlations between groups are
        fixed at 0.
    """

    factors: tuple[str, ...]
    indicators: tuple[str, ...]
    factor_of: np.ndarray
    n_categories: int
    n_rows: int
    row: np.ndarray
    ind: np.ndarray
    cat: np.ndarray
    blocks: tuple[tuple[int, ...], ...] = field(default=())

    @property
    def n_factors(self) -> int:
        return len(self.factors)

    @property
    def n_indicators(self) -> int:
        return len(self.indicators)

    def counts(self) -> np.ndarray:
        """Category counts per indicator, shape (J, K)."""
        out = np.zeros((self.n_indicators, self.n_categories), dtype=int)
        np.add.at(out, (self.ind, self.cat), 1)
        return out

    def shape_key(self) -> tuple:
        """What the compiled model depends on besides the data values."""
        groups = tuple(int(((self.cat == 0)).sum()) for _ in (0,))
        return (self.factors, self.indicators, tuple(self.factor_of.tolist()),
                self.n_categories, self.n_rows, self.row.size, groups, self.blocks)


def cut_labels(n_categories: int) -> list[str]:
    """Cut-point labels ``"1->2"``, ... (style rule 5)."""
    return [f"{k}->{k + 1}" for k in range(1, n_categories)]


def start_thresholds(design: Design) -> np.ndarray:
    """Standardized thresholds from the marginal proportions (the univariate ML estimate,
    with half a count added to every category so that empty categories stay finite)."""
    from scipy import stats

    counts = design.counts() + 0.5
    cum = np.cumsum(counts, axis=1)[:, :-1] / counts.sum(axis=1, keepdims=True)
    return stats.norm.ppf(cum)


def anchor_cuts(design: Design) -> np.ndarray:
    """Per indicator, the cut whose observed cumulative proportion is nearest 1/2."""
    counts = design.counts() + 0.5
    cum = np.cumsum(counts, axis=1)[:, :-1] / counts.sum(axis=1, keepdims=True)
    return np.argmin(np.abs(cum - 0.5), axis=1)


def log_ndtr_fast(x):
    r"""log Phi(x) with one branch: :math:`\log(\tfrac12 \operatorname{erfcx}(-x/\sqrt2))
    - x^2/2`, exact in the lower tail and, for ``x`` up to the clip at 25, accurate to
    ~1e-15 in absolute terms in the upper tail (where log Phi(x) is ~0)."""
    import pytensor.tensor as pt

    x = pt.minimum(x, _CLIP)
    return pt.log(0.5 * pt.erfcx(-x / _SQRT2)) - 0.5 * x**2


def log_interval_prob_fast(lower, upper):
    """log(Phi(upper) - Phi(lower)) as :func:`bayesmeta._ordinal.log_interval_prob`
    (reflected so that ``lower + upper <= 0``) but with the one-branch
    :func:`log_ndtr_fast`."""
    import pytensor.tensor as pt

    from bayesmeta._ordinal import log1mexp

    flip = (lower + upper) > 0
    lo = pt.switch(flip, -upper, lower)
    hi = pt.switch(flip, -lower, upper)
    log_hi = log_ndtr_fast(hi)
    return log_hi + log1mexp(log_ndtr_fast(lo) - log_hi)


def lkj_cholesky(name: str, n: int, eta: float, dims: str | None = None):
    r"""Cholesky factor of an ``n x n`` correlation matrix with an LKJ(:math:`\eta`) prior,
    built as in Stan from canonical partial correlations :math:`z = \tanh(y)` of free
    :math:`y` (Lewandowski, Kurowicka & Joe 2009).

    Adds the free vector ``{name}_free`` (length ``n(n-1)/2``) and a Potential with the LKJ
    density on the Cholesky factor and the log-Jacobian of ``y -> L``:

    .. math:: \log p = \sum_{i \ge 1} (n - i - 1 + 2\eta - 2) \log L_{ii}
              + \sum_{i > j} \big[\log(1 - z_{ij}^2)
              + \tfrac12 \log(1 - \textstyle\sum_{k<j} L_{ik}^2)\big].

    Returns the pytensor Cholesky factor (lower triangular, unit row norms).
    """
    import pymc as pm
    import pytensor.tensor as pt

    m = n * (n - 1) // 2
    y = pm.Flat(f"{name}_free", shape=(m,), dims=dims, initval=np.zeros(m))
    z = pt.tanh(y)
    rows, cols = np.tril_indices(n, -1)
    zmat = pt.set_subtensor(pt.zeros((n, n))[rows, cols], z)
    # 1 - sum_{k<j} L_ik^2 = prod_{k<j} (1 - z_ik^2): exclusive cumulative sums of logs
    w = pt.log1p(-(zmat**2))
    c = pt.cumsum(w, axis=1) - w  # c[i, j] = sum_{k<j} w[i, k]
    # L_ij = z_ij sqrt(prod_{k<j} (1 - z_ik^2)) below the diagonal, L_ii = sqrt(prod_{k<i}
    # (1 - z_ik^2)); zmat is 0 on and above the diagonal. Written as one elementwise product:
    # a pt.diag(...) of the diagonal here made PyTensor's rewrites duplicate every node
    # downstream of the factor (twice the likelihood cost in the augmented model)
    chol = pt.exp(0.5 * c) * (zmat + np.eye(n))
    logj = pt.sum(pt.log1p(-(z**2))) + 0.5 * pt.sum(c[rows, cols])
    exps = np.array([n - i - 1 + 2 * eta - 2 for i in range(n)], dtype=float)
    lkj = pt.sum(exps * 0.5 * pt.diagonal(c))
    pm.Potential(f"{name}_prior", lkj + logj)
    return chol


def model_coords(design: Design) -> dict[str, object]:
    """Named coordinates of the model's dims (style rule 5)."""
    return {
        "output": np.arange(design.n_rows),
        "trait": list(design.factors),
        "trait2": list(design.factors),
        "indicator": list(design.indicators),
        "cut": cut_labels(design.n_categories),
    }


def _structural_parameters(design: Design, loading_prior: tuple[float, float],
                           lkj_eta: float, anchor_data: bool = False):
    """Inside a model context: the standardized loadings (Beta prior), the standardized
    thresholds (ordered, induced-Dirichlet(1) prior) and the Cholesky factor of the factor
    correlations (LKJ per block), shared by :func:`build_model` and
    :func:`build_augmented_model`. Returns ``(loading_std, threshold_std, chol, psi)``.
    ``anchor_data``: hold the anchor cuts (:func:`anchor_cuts`) in a ``pm.Data`` container
    ``threshold_anchor_cut``, so that a model refitted to other data of the same shape
    samples in that data's own coordinates (the initial values stay the build data's)."""
    import pymc as pm
    import pytensor.tensor as pt

    F, J, K = design.n_factors, design.n_indicators, design.n_categories
    th0 = start_thresholds(design)
    # ---- loadings (standardized, Beta prior; logit transform) --------------------------
    a, b = loading_prior
    lstd = pm.Beta("loading_std", alpha=a, beta=b, dims="indicator",
                   initval=np.full(J, 0.7))
    # ---- thresholds (standardized, ordered, induced-Dirichlet(1) prior) ----------------
    # anchored at the cut nearest the median rating (best determined by the data);
    # the other cuts at cumulative positive gaps below and above it
    k0 = anchor_cuts(design)
    gaps0 = np.log(np.maximum(np.diff(th0, axis=1), 1e-2))
    anchor = pm.Flat("threshold_anchor", dims="indicator", initval=th0[np.arange(J), k0])
    log_gaps = pm.Flat("threshold_log_gaps", shape=(J, K - 2), initval=gaps0)
    cum = pt.concatenate([pt.zeros((J, 1)), pt.cumsum(pt.exp(log_gaps), axis=1)], axis=1)
    k = pm.Data("threshold_anchor_cut", k0.astype(np.int64)) if anchor_data else k0
    tau = anchor[:, None] + cum - cum[np.arange(J), k][:, None]
    # uniform prior on the model-implied marginal category probabilities
    # p = diff(Phi([-inf, tau, inf])): density prod phi(tau_k), Jacobian prod gaps
    pm.Potential("threshold_prior", pt.sum(-0.5 * tau**2) + pt.sum(log_gaps))
    tau = pm.Deterministic("threshold_std", tau, dims=("indicator", "cut"))
    # ---- factor correlations (LKJ via Cholesky of canonical partial correlations) ------
    chol = pt.zeros((F, F))
    for g, block in enumerate(design.blocks):
        idx = np.array(block)
        if len(block) == 1:
            chol = pt.set_subtensor(chol[idx[0], idx[0]], 1.0)
            continue
        Lb = lkj_cholesky(f"corr{g}" if len(design.blocks) > 1 else "corr", len(block),
                          lkj_eta)
        chol = pt.set_subtensor(chol[np.ix_(idx, idx)], Lb)
    psi = pm.Deterministic("factor_corr", chol @ chol.T, dims=("trait", "trait2"))
    return lstd, tau, chol, psi


def build_model(
    design: Design,
    *,
    factor_param: str = "polar",
    likelihood: str = "split",
    loading_prior: tuple[float, float] = (1.0, 1.0),
    lkj_eta: float = 1.0,
    store_scores: bool = True,
    data_containers: bool = False,
):
    r"""Build the PyMC model of the ordinal CFA (theta parameterisation sampled through its
    standardized (delta) quantities).

    Parameters
    ----------
    design : Design
        Long-form data and structure.
    factor_param : {"polar", "zerosum", "noncentred"}
        How the standard-normal factor innovations ``z`` (N x F; scores are
        ``eta = z L^T``) are sampled: ``noncentred`` iid N(0, 1); ``zerosum`` their
        per-factor mean ``m ~ N(0, 1/N)`` plus zero-sum deviations; ``polar`` the mean plus
        a radius ``r`` (``r^2 ~ chi^2_{N-1}``) times a uniform direction on the zero-sum
        sphere (``w / |w|`` with ``w`` zero-sum normal); ``centred`` samples the scores
        ``eta ~ N(0, Psi)`` themselves (better when many indicators measure each output,
        as in the joint metric-validity model). All four give the same prior.
    likelihood : {"split", "interval"}
        ``split``: one ``log Phi`` for ratings in the lowest and highest categories, the
        interval formula for the others; ``interval``: the interval formula everywhere.
    loading_prior : (a, b)
        Beta prior of the standardized loadings (default uniform on (0, 1)).
    lkj_eta : float
        LKJ shape of the factor correlation matrix (1: uniform over correlation matrices).
    store_scores : bool
        Keep the factor scores as a Deterministic (needed for ``factor_scores()``).
    data_containers : bool
        Hold the long-form data in ``pm.Data`` containers ``obs_row``, ``obs_ind``,
        ``obs_cat`` (interval likelihood) and the thresholds' anchor cuts in
        ``threshold_anchor_cut`` (:func:`anchor_cuts`), so that one compiled model refits
        any dataset with the same number of outputs and ratings (simulation studies).
    """
    import pymc as pm
    import pytensor.tensor as pt

    if factor_param not in BUILD_FACTOR_PARAMS:
        raise ValueError(f"factor_param must be one of {BUILD_FACTOR_PARAMS}, got "
                         f"{factor_param!r}.")
    if likelihood not in LIKELIHOODS:
        raise ValueError(f"likelihood must be one of {LIKELIHOODS}, got {likelihood!r}.")
    N, F, J, K = design.n_rows, design.n_factors, design.n_indicators, design.n_categories
    coords = model_coords(design)
    with pm.Model(coords=coords) as model:
        lstd, tau, chol, _ = _structural_parameters(design, loading_prior, lkj_eta,
                                                    anchor_data=data_containers)
        one_minus = (1.0 - lstd) * (1.0 + lstd)
        resid_sd = pt.sqrt(one_minus)  # sd of y* given eta on the standardized scale
        # ---- factor scores ------------------------------------------------------------
        if factor_param == "centred":
            z = None
        elif factor_param == "noncentred":
            z = pm.Normal("z", 0.0, 1.0, shape=(N, F))
        else:
            m = pm.Normal("score_mean", 0.0, 1.0 / np.sqrt(N), dims="trait")
            if factor_param == "zerosum":
                dev = pm.ZeroSumNormal("z_dev", sigma=1.0, shape=(N, F), n_zerosum_axes=1)
                z = m[None, :] + dev
            else:
                w0 = np.random.default_rng(0).standard_normal((F, N))
                w0 -= w0.mean(axis=1, keepdims=True)  # |w| > 0 at the start (0/0 otherwise)
                w = pm.ZeroSumNormal("z_dir", sigma=1.0, shape=(F, N), n_zerosum_axes=1,
                                     initval=w0)
                r2 = pm.ChiSquared("score_radius2", nu=N - 1, dims="trait",
                                   initval=np.full(F, N - 1.0))
                unit = w / pt.sqrt(pt.sum(w**2, axis=1, keepdims=True))
                z = m[None, :] + (pt.sqrt(r2)[:, None] * unit).T
        if z is None:  # the scores themselves, eta_n ~ N(0, Psi): for well-measured scores
            eta = pm.MvNormal("eta", mu=np.zeros(F), chol=chol, shape=(N, F))
        else:
            eta = z @ chol.T
        if store_scores:
            pm.Deterministic("factor_score", eta, dims=("output", "trait"))
        # ---- likelihood ---------------------------------------------------------------
        row, ind, cat = design.row, design.ind, design.cat
        # dense (N, J) linear predictor, then 1-D gathers of the observed entries (cheaper
        # than 2-D advanced indexing, in the forward pass and in the gradient)
        loc_flat = (eta[:, design.factor_of] * lstd[None, :]).reshape((N * J,))
        tau_flat = tau.reshape((J * (K - 1),))

        def group(mask):
            r_, i_, c_ = row[mask], ind[mask], cat[mask]
            return i_, c_, loc_flat[r_ * J + i_], resid_sd[i_]

        def th(i_, c_):
            return tau_flat[i_ * (K - 1) + c_]

        if data_containers:
            r_d = pm.Data("obs_row", row)
            i_d = pm.Data("obs_ind", ind)
            c_d = pm.Data("obs_cat", cat)
            cuts = padded_cutpoints(tau)
            cuts_flat = cuts.reshape((J * (K + 1),))
            loc = loc_flat[r_d * J + i_d]
            sd = resid_sd[i_d]
            lo = (cuts_flat[i_d * (K + 1) + c_d] - loc) / sd
            hi = (cuts_flat[i_d * (K + 1) + c_d + 1] - loc) / sd
            pm.Potential("loglik", pt.sum(log_interval_prob(lo, hi)))
        elif likelihood == "interval":
            i_, c_, loc, sd = group(np.ones(row.size, dtype=bool))
            cuts = padded_cutpoints(tau)
            cuts_flat = cuts.reshape((J * (K + 1),))
            lo = (cuts_flat[i_ * (K + 1) + c_] - loc) / sd
            hi = (cuts_flat[i_ * (K + 1) + c_ + 1] - loc) / sd
            pm.Potential("loglik", pt.sum(log_interval_prob(lo, hi)))
        else:
            bottom, top = cat == 0, cat == K - 1
            mid = ~(bottom | top)
            terms = []
            if bottom.any():
                i_, c_, loc, sd = group(bottom)
                terms.append(pt.sum(log_ndtr_fast((th(i_, c_) - loc) / sd)))
            if top.any():
                i_, c_, loc, sd = group(top)
                terms.append(pt.sum(log_ndtr_fast((loc - th(i_, c_ - 1)) / sd)))
            if mid.any():
                i_, c_, loc, sd = group(mid)
                lo = (th(i_, c_ - 1) - loc) / sd
                hi = (th(i_, c_) - loc) / sd
                if likelihood == "split":
                    terms.append(pt.sum(log_interval_prob(lo, hi)))
                else:
                    terms.append(pt.sum(log_interval_prob_fast(lo, hi)))
            pm.Potential("loglik", sum(terms))
    return model


def design_from_wide(
    values: np.ndarray,
    *,
    factors: tuple[str, ...],
    indicators: tuple[str, ...],
    factor_of: np.ndarray,
    scale: tuple[int, int],
    blocks: tuple[tuple[int, ...], ...] | None = None,
) -> Design:
    """Long-form :class:`Design` from a wide (N, J) array of ratings (NaN = missing)."""
    values = np.asarray(values, dtype=float)
    lo, hi = scale
    obs = np.isfinite(values)
    row, ind = np.nonzero(obs)
    cat = (values[row, ind] - lo).astype(int)
    if blocks is None:
        blocks = (tuple(range(len(factors))),)
    return Design(
        factors=tuple(factors), indicators=tuple(indicators),
        factor_of=np.asarray(factor_of, dtype=int), n_categories=int(hi - lo + 1),
        n_rows=values.shape[0], row=row.astype(np.int64), ind=ind.astype(np.int64),
        cat=cat.astype(np.int64), blocks=tuple(tuple(b) for b in blocks),
    )


def category_slots(design: Design) -> tuple[np.ndarray, np.ndarray]:
    """The (N, J) columns of the padded cut vector (0 = -BIG, 1..K-1 = the thresholds,
    K = +BIG) below and above each rating; a missing rating spans the whole line."""
    N, J, K = design.n_rows, design.n_indicators, design.n_categories
    cat = np.full((N, J), -1, dtype=np.int64)
    cat[design.row, design.ind] = design.cat
    return np.where(cat < 0, 0, cat), np.where(cat < 0, K, cat + 1)


def build_augmented_model(
    design: Design,
    *,
    loading_prior: tuple[float, float] = (1.0, 1.0),
    lkj_eta: float = 1.0,
    store_scores: bool = True,
):
    r"""The same ordinal CFA with the factor scores integrated out and the latent responses
    augmented (Chib & Greenberg 1998; the construction of blavaan's ordinal models).

    Marginally, the standardized latent responses of an output are
    :math:`y^*_n \sim N_J(0, \Sigma)`, :math:`\Sigma = \Lambda^* \Psi \Lambda^{*\top} +
    \operatorname{diag}(1 - \lambda^{*2})`, truncated to the box of its observed categories
    (missing ratings: the whole line). With :math:`\Sigma = L L^\top` and uniform
    :math:`u_{nj}` the box is filled sequentially (Goodrich's parameterisation of the GHK
    construction): :math:`e_{nj} = \Phi^{-1}\big(\Phi(a_{nj}) + u_{nj} (\Phi(b_{nj}) -
    \Phi(a_{nj}))\big)` with :math:`a, b = (\text{cut} - \sum_{k<j} L_{jk} e_{nk}) / L_{jj}`,
    adding :math:`\log(\Phi(b_{nj}) - \Phi(a_{nj}))` to the log density; then
    :math:`y^*_n = L e_n`. The factor scores given :math:`y^*` are normal with mean
    :math:`\Psi \Lambda^{*\top} L^{-\top} e_n` and covariance :math:`\Psi - A A^\top`
    (:math:`A = \Psi \Lambda^{*\top} L^{-\top}`); the mean is stored as
    ``factor_score_mean`` and the scores are drawn from it after sampling.
    """
    import pymc as pm
    import pytensor.tensor as pt
    from pytensor.tensor.slinalg import solve_triangular

    from bayesmeta.validity._ghk import cholesky, ghk_innovations, ghk_loglik

    N, F, J = design.n_rows, design.n_factors, design.n_indicators
    coords = model_coords(design)
    lo_slot, hi_slot = category_slots(design)
    with pm.Model(coords=coords) as model:
        lstd, tau, chol, psi = _structural_parameters(design, loading_prior, lkj_eta)
        # ---- marginal covariance of the standardized latent responses ------------------
        fo = design.factor_of
        lam = lstd[:, None] * np.eye(F)[fo]  # (J, F), one loading per row
        # unit diagonal: lambda*^2 Psi_ff + (1 - lambda*^2), Psi_ff = 1
        lc = lam @ chol  # (J, F)
        sigma = lc @ lc.T + pt.diag(1.0 - lstd**2)
        L = cholesky(sigma)
        cuts = padded_cutpoints(tau)
        u = pm.Uniform("latent_u", 0.0, 1.0, shape=(N, J), initval=np.full((N, J), 0.5))
        pm.Potential("loglik", ghk_loglik(L, cuts, lo_slot, hi_slot, u))
        if store_scores:
            e = ghk_innovations(L, cuts, lo_slot, hi_slot, u)
            A = solve_triangular(L, lam @ psi, lower=True).T  # (F, J): Psi Lam' L^-T
            pm.Deterministic("factor_score_mean", e @ A.T, dims=("output", "trait"))
    return model
