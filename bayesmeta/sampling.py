"""One place that runs samplers: nutpie by default, PyMC's NUTS as the fallback.

:func:`sample` draws from any bayesmeta PyMC model and returns an ArviZ ``InferenceData``
with provenance attributes (bayesmeta version, seed, sampler, draws) on every group.
:func:`check_convergence` turns R-hat, bulk and tail ESS, divergences and tree-depth
saturation into a :class:`ConvergenceReport` and :class:`ConvergenceWarning` s that say
what to do.

Compilation is cached: a model built once per shape (see :func:`cached_model`) is compiled
once by nutpie, and refitting it to new data of the same shape only swaps the data
(``pm.Data`` containers), so a refit costs sampling time only.

PyMC and nutpie are imported inside the functions, never at import time.
"""

from __future__ import annotations

import os
import sys
import warnings
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import xarray as xr

from bayesmeta._version import __version__

SAMPLERS = ("nutpie", "pymc")
MASS_MATRICES = ("diag", "low_rank")

#: Draw settings of the fast mode (tests and previews): fewer chains and draws.
FAST_SETTINGS: dict[str, int] = {"chains": 2, "tune": 300, "draws": 300}

#: Default thresholds of :func:`check_convergence`.
RHAT_MAX = 1.01
RHAT_MAX_FAST = 1.05
ESS_MIN = 400
ESS_MIN_FAST = 100

_MODEL_CACHE_SIZE = 16
_MODELS: OrderedDict[Hashable, Any] = OrderedDict()
_COMPILED: dict[tuple, tuple[weakref.ref, Any]] = {}


class ConvergenceWarning(UserWarning):
    """The sampler did not converge well enough to trust the summaries (see the message)."""


# ----------------------------------------------------------------------------- caching
def cached_model(key: Hashable, build: Callable[[], Any]) -> Any:
    """Return the PyMC model cached under ``key``, building it with ``build()`` on a miss.

    Models that hold their data in ``pm.Data`` containers are built once per shape (the
    key) and refitted by passing new data to :func:`sample`; nutpie's compiled version is
    cached with the model. The cache keeps the 16 most recently used models.

    Examples
    --------
    >>> from bayesmeta.sampling import cached_model
    >>> calls = []
    >>> m1 = cached_model(("doc", 1), lambda: calls.append(1) or object())
    >>> m2 = cached_model(("doc", 1), lambda: calls.append(1) or object())
    >>> m1 is m2, len(calls)
    (True, 1)
    """
    if key in _MODELS:
        _MODELS.move_to_end(key)
        return _MODELS[key]
    model = build()
    _MODELS[key] = model
    while len(_MODELS) > _MODEL_CACHE_SIZE:
        _, old = _MODELS.popitem(last=False)
        _COMPILED.pop(id(old), None)
    return model


def clear_cache() -> None:
    """Forget all cached models and compiled samplers."""
    _MODELS.clear()
    _COMPILED.clear()


def _compile_key(model: Any, var_names: Sequence[str] | None) -> tuple:
    return id(model), None if var_names is None else tuple(var_names)


def _compiled_nutpie(model: Any, var_names: Sequence[str] | None = None) -> Any:
    key = _compile_key(model, var_names)
    entry = _COMPILED.get(key)
    if entry is not None and entry[0]() is model:
        return entry[1]
    import nutpie
    from numba.core.errors import NumbaWarning

    kwargs = {} if var_names is None else {"var_names": list(var_names)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        # "cannot cache ... dynamic globals": kernels calling SciPy's Cephes through
        # ctypes compile once per session instead of being cached on disk
        warnings.simplefilter("ignore", NumbaWarning)
        compiled = nutpie.compile_pymc_model(model, **kwargs)
    _COMPILED[key] = (weakref.ref(model), compiled)
    return compiled


def is_compiled(model: Any, var_names: Sequence[str] | None = None) -> bool:
    """True when nutpie has already compiled ``model`` in this session (cheap refits)."""
    entry = _COMPILED.get(_compile_key(model, var_names))
    return entry is not None and entry[0]() is model


# ----------------------------------------------------------------------------- sampling
def _resolve_seed(random_seed: int | None) -> int:
    if random_seed is None:
        return int(np.random.SeedSequence().entropy % (2**31 - 1))
    if isinstance(random_seed, bool) or not isinstance(random_seed, int | np.integer):
        raise TypeError(f"random_seed must be an int or None, got {type(random_seed).__name__}.")
    if random_seed < 0:
        raise ValueError(f"random_seed must be >= 0, got {random_seed}.")
    return int(random_seed)


def _interactive() -> bool:
    if "ipykernel" in sys.modules:
        return True
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def sample(
    model: Any,
    *,
    data: Mapping[str, Any] | None = None,
    draws: int = 1000,
    tune: int = 1000,
    chains: int = 4,
    cores: int | None = None,
    sampler: str = "nutpie",
    fast: bool = False,
    random_seed: int | None = None,
    target_accept: float = 0.8,
    max_treedepth: int = 10,
    progressbar: bool | None = None,
    attrs: Mapping[str, Any] | None = None,
    mass_matrix: str = "diag",
    var_names: Sequence[str] | None = None,
) -> Any:
    r"""Draw from the posterior of a PyMC model with nutpie (default) or PyMC's NUTS.

    Parameters
    ----------
    model : pymc.Model
        The model. Reuse the same object (see :func:`cached_model`) to reuse its
        compilation; new data for its ``pm.Data`` containers go in ``data``.
    data : dict, optional
        New values of ``pm.Data`` containers (same shapes as at build time for nutpie).
    draws, tune, chains : int
        Posterior draws and tuning iterations per chain, number of chains.
    cores : int, optional
        Chains run in parallel (default ``min(chains, os.cpu_count())``).
    sampler : {"nutpie", "pymc"}
        nutpie (compiled with numba, fast) or PyMC's own NUTS (no numba needed).
    fast : bool
        Fast mode for tests and previews: ``chains=2, tune=300, draws=300`` (the
        values of :data:`FAST_SETTINGS`, each capped by the arguments). Recorded in the
        attributes and printed in result headers; do not report fast-mode numbers.
    random_seed : int, optional
        Seed; the same seed, data and settings give identical draws. When omitted a seed
        is drawn and recorded in the attributes, so the run can be repeated.
    target_accept : float
        Target acceptance rate of step-size adaptation (raise to 0.95 on divergences).
    max_treedepth : int
        Maximum NUTS tree depth.
    progressbar : bool, optional
        Show a progress bar. Default: on for full (not fast) runs in an interactive
        terminal or notebook, off otherwise.
    attrs : dict, optional
        More provenance attributes (e.g. ``data_hash``) for every InferenceData group.
    mass_matrix : {"diag", "low_rank"}
        nutpie's mass-matrix adaptation: diagonal (default), or its low-rank modified mass
        matrix (``low_rank_modified_mass_matrix=True``: the diagonal plus the few
        directions in which draws and gradients are most correlated; for posteriors with
        a handful of strongly correlated directions, e.g. loadings against scales). PyMC's
        sampler supports ``"diag"`` only.
    var_names : list of str, optional
        Variables kept in the trace (default: all). Models with many auxiliary
        coordinates (the augmented latent responses of the ordinal CFA) keep only what
        they report, so that the trace stays small.

    Returns
    -------
    arviz.InferenceData
        Groups ``posterior`` (dims ``chain``, ``draw`` and the model's named dims) and
        ``sample_stats`` (with ``diverging`` and ``reached_max_treedepth``); attributes
        ``bayesmeta_version``, ``sampler``, ``random_seed``, ``chains``, ``draws``,
        ``tune``, ``fast``, ``target_accept``, ``max_treedepth``, ``mass_matrix`` on every
        group.

    Notes
    -----
    No convergence check happens here; call :func:`check_convergence` on the quantities
    you report (derived quantities included), as the model functions of bayesmeta do.

    Examples
    --------
    >>> import numpy as np, pymc as pm  # doctest: +SKIP
    >>> from bayesmeta.sampling import sample, check_convergence  # doctest: +SKIP
    >>> with pm.Model() as m:  # doctest: +SKIP
    ...     mu = pm.Normal("mu", 0, 10)
    ...     pm.Normal("y", mu, 1, observed=np.array([0.1, -0.3, 0.5]))
    >>> idata = sample(m, fast=True, random_seed=1)  # doctest: +SKIP
    >>> check_convergence(idata, ["mu"], fast=True).ok  # doctest: +SKIP
    True

    R equivalent: ``brms::brm(..., backend = "cmdstanr", seed = 1)`` followed by
    ``rstan::check_hmc_diagnostics``.
    """
    if sampler not in SAMPLERS:
        raise ValueError(f"sampler must be one of {', '.join(map(repr, SAMPLERS))}, "
                         f"got {sampler!r}.")
    for name, value, least in (("draws", draws, 1), ("tune", tune, 0), ("chains", chains, 1)):
        if not isinstance(value, int | np.integer) or value < least:
            raise ValueError(f"{name} must be an integer >= {least}, got {value!r}.")
    if not 0 < target_accept < 1:
        raise ValueError(f"target_accept must be in (0, 1), got {target_accept}.")
    if mass_matrix not in MASS_MATRICES:
        raise ValueError(f"mass_matrix must be one of {', '.join(map(repr, MASS_MATRICES))}, "
                         f"got {mass_matrix!r}.")
    if mass_matrix != "diag" and sampler != "nutpie":
        raise ValueError(f"mass_matrix={mass_matrix!r} needs sampler='nutpie', got "
                         f"sampler={sampler!r}.")
    if fast:
        draws = min(draws, FAST_SETTINGS["draws"])
        tune = min(tune, FAST_SETTINGS["tune"])
        chains = min(chains, FAST_SETTINGS["chains"])
    seed = _resolve_seed(random_seed)
    cores = int(cores or min(chains, os.cpu_count() or 1))
    if progressbar is None:
        progressbar = (not fast) and _interactive()
    data = dict(data or {})

    if sampler == "nutpie":
        import nutpie

        compiled = _compiled_nutpie(model, var_names)
        if data:
            compiled = compiled.with_data(**data)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            idata = nutpie.sample(
                compiled, draws=draws, tune=tune, chains=chains, cores=cores, seed=seed,
                progress_bar=bool(progressbar), save_warmup=False,
                target_accept=target_accept, maxdepth=max_treedepth,
                low_rank_modified_mass_matrix=mass_matrix == "low_rank",
            )
        stats = idata.sample_stats
        if "maxdepth_reached" in stats:
            idata.sample_stats["reached_max_treedepth"] = stats["maxdepth_reached"]
    else:
        import pymc as pm

        with model:
            if data:
                pm.set_data(data)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", FutureWarning)
                warnings.simplefilter("ignore", UserWarning)
                idata = pm.sample(
                    draws=draws, tune=tune, chains=chains, cores=cores, random_seed=seed,
                    progressbar=bool(progressbar), target_accept=target_accept,
                    max_treedepth=max_treedepth, compute_convergence_checks=False,
                    return_inferencedata=True,
                    var_names=None if var_names is None else list(var_names),
                )
    provenance = {
        "bayesmeta_version": __version__,
        "sampler": sampler,
        "random_seed": seed,
        "chains": int(chains),
        "draws": int(draws),
        "tune": int(tune),
        "fast": int(bool(fast)),
        "target_accept": float(target_accept),
        "max_treedepth": int(max_treedepth),
        "mass_matrix": mass_matrix,
    }
    provenance.update(attrs or {})
    set_attrs(idata, provenance)
    return idata


def set_attrs(idata: Any, attrs: Mapping[str, Any]) -> None:
    """Set the attributes ``attrs`` on every group of ``idata`` (netCDF-safe values)."""
    clean = {k: (v if isinstance(v, str | int | float | np.integer | np.floating) else str(v))
             for k, v in attrs.items()}
    for group in idata.groups():
        idata[group].attrs.update(clean)


def describe_run(idata: Any) -> str:
    """One line for result headers: sampler, chains x draws, seed and the fast flag."""
    a = idata.posterior.attrs
    text = (f"{a.get('sampler', '?')} NUTS, {a.get('chains', '?')} chains x "
            f"{a.get('draws', '?')} draws ({a.get('tune', '?')} tuning), "
            f"seed {a.get('random_seed', '?')}")
    if a.get("mass_matrix", "diag") != "diag":
        text += f", {a['mass_matrix']} mass matrix"
    if int(a.get("fast", 0)):
        text += "  [FAST MODE: few draws, a preview; use fast=False for reported numbers]"
    return text


# ----------------------------------------------------------------------------- convergence
@dataclass
class ConvergenceReport:
    """Convergence diagnostics of one fit; ``str()`` gives the one-line header summary.

    Attributes
    ----------
    max_rhat, min_ess_bulk, min_ess_tail : float
        Worst values over the checked (non-constant) quantities.
    n_divergent, n_max_treedepth, n_draws : int
        Divergent transitions and draws at the maximum tree depth (after tuning), out of
        ``n_draws`` draws over all chains.
    messages : list of str
        One message per failed check, saying what to do.
    """

    max_rhat: float
    min_ess_bulk: float
    min_ess_tail: float
    n_divergent: int
    n_max_treedepth: int
    n_draws: int
    rhat_max: float = RHAT_MAX
    ess_min: float = ESS_MIN
    messages: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when every check passed."""
        return not self.messages

    def __str__(self) -> str:
        verdict = "ok" if self.ok else f"{len(self.messages)} warning(s), see notes"
        return (f"{verdict}: max R-hat {self.max_rhat:.3f}, min ESS bulk "
                f"{self.min_ess_bulk:.0f} / tail {self.min_ess_tail:.0f}, "
                f"{self.n_divergent} divergent, {self.n_max_treedepth} at max tree depth")


def _worst(ds: xr.Dataset, largest: bool) -> tuple[float, str]:
    best_val, best_name = (np.nan, "")
    for name, da in ds.data_vars.items():
        vals = np.asarray(da.values, dtype=float)
        if not np.isfinite(vals).any():
            continue
        flat = np.where(np.isfinite(vals), vals, -np.inf if largest else np.inf)
        idx = int(np.argmax(flat) if largest else np.argmin(flat))
        v = float(flat.ravel()[idx])
        if np.isnan(best_val) or (v > best_val if largest else v < best_val):
            where = np.unravel_index(idx, vals.shape) if vals.ndim else ()
            label = ", ".join(str(da[d].values[i]) if d in da.coords else str(i)
                              for d, i in zip(da.dims, where, strict=True))
            best_val, best_name = v, f"{name}[{label}]" if label else str(name)
    return best_val, best_name


def _count_bad(ds: xr.Dataset, bad: Callable[[np.ndarray], np.ndarray]) -> int:
    return int(sum(bad(np.asarray(da.values, dtype=float)).sum() for da in ds.data_vars.values()))


def check_convergence(
    idata: Any,
    var_names: Iterable[str] | None = None,
    *,
    rhat_max: float | None = None,
    ess_min: float | None = None,
    fast: bool | None = None,
    warn: bool = True,
    diagnostics: xr.Dataset | None = None,
) -> ConvergenceReport:
    r"""Check R-hat, bulk and tail ESS, divergences and tree-depth saturation.

    Parameters
    ----------
    idata : arviz.InferenceData
        A fit from :func:`sample`.
    var_names : list of str, optional
        Posterior variables to check (default all). Quantities that are constant across
        draws (fixed by the model, e.g. a stability of exactly 1) are skipped.
    rhat_max : float, optional
        Largest acceptable rank-normalised split R-hat: 1.01 for full runs (Vehtari et
        al. 2021), 1.05 in fast mode (two short chains give noisy R-hat; fast mode is for
        previews).
    ess_min : float, optional
        Smallest acceptable bulk and tail ESS: 400 for full runs, 100 in fast mode.
    fast : bool, optional
        Whether the fit was a fast-mode fit (default: read from the attributes).
    warn : bool
        Issue a :class:`ConvergenceWarning` per failed check.
    diagnostics : xarray.Dataset, optional
        Precomputed ``r_hat``, ``ess_bulk``, ``ess_tail`` (variables named
        ``<var>__r_hat`` etc.), to avoid computing them twice.

    Returns
    -------
    ConvergenceReport

    References
    ----------
    Vehtari, Gelman, Simpson, Carpenter, Bürkner (2021). Rank-normalization, folding, and
    localization: an improved R-hat for assessing convergence of MCMC. *Bayesian
    Analysis* 16(2).

    Examples
    --------
    >>> from bayesmeta.sampling import check_convergence  # doctest: +SKIP
    >>> rep = check_convergence(idata, ["consistency"])  # doctest: +SKIP
    >>> print(rep)  # doctest: +SKIP
    ok: max R-hat 1.002, min ESS bulk 1510 / tail 1822, 0 divergent, 0 at max tree depth
    """
    post = idata.posterior
    names = list(var_names) if var_names is not None else list(post.data_vars)
    if fast is None:
        fast = bool(int(post.attrs.get("fast", 0)))
    if ess_min is None:
        ess_min = ESS_MIN_FAST if fast else ESS_MIN
    if rhat_max is None:
        rhat_max = RHAT_MAX_FAST if fast else RHAT_MAX
    if diagnostics is None:
        diagnostics = diagnose(post[names])
    rh = xr.Dataset({n: diagnostics[f"{n}__r_hat"] for n in names})
    eb = xr.Dataset({n: diagnostics[f"{n}__ess_bulk"] for n in names})
    et = xr.Dataset({n: diagnostics[f"{n}__ess_tail"] for n in names})
    max_rhat, where_rhat = _worst(rh, largest=True)
    min_bulk, where_bulk = _worst(eb, largest=False)
    min_tail, where_tail = _worst(et, largest=False)
    stats = getattr(idata, "sample_stats", None)
    n_draws = int(post.sizes["chain"] * post.sizes["draw"])
    n_div = int(stats["diverging"].sum()) if stats is not None and "diverging" in stats else 0
    n_depth = (int(stats["reached_max_treedepth"].sum())
               if stats is not None and "reached_max_treedepth" in stats else 0)
    max_depth = post.attrs.get("max_treedepth", 10)

    msgs: list[str] = []
    if np.isfinite(max_rhat) and max_rhat > rhat_max:
        n_bad = _count_bad(rh, lambda v: v > rhat_max)
        msgs.append(
            f"R-hat is {max_rhat:.3f} (> {rhat_max}) for {n_bad} quantit"
            f"{'y' if n_bad == 1 else 'ies'} (worst: {where_rhat}): the chains disagree, so "
            f"the posterior was not explored. Run longer (more tune and draws); if it "
            f"persists, look for non-identified or multimodal parameters. Do not report "
            f"these estimates."
        )
    for kind, value, where in (("bulk", min_bulk, where_bulk), ("tail", min_tail, where_tail)):
        if np.isfinite(value) and value < ess_min:
            ds = eb if kind == "bulk" else et
            n_bad = _count_bad(ds, lambda v: v < ess_min)
            what = "means and SDs" if kind == "bulk" else "interval limits"
            msgs.append(
                f"{kind} ESS is {value:.0f} (< {ess_min:g}) for {n_bad} quantit"
                f"{'y' if n_bad == 1 else 'ies'} (worst: {where}): too few effective draws "
                f"for stable {what}. Increase draws (and chains)"
                + ("; fast mode is for previews, use fast=False." if fast else ".")
            )
    if n_div:
        msgs.append(
            f"{n_div} divergent transition(s) after tuning ({n_div / n_draws:.1%} of draws): "
            f"the sampler could not follow the posterior's curvature and the estimates may be "
            f"biased. Raise target_accept (e.g. 0.95); if divergences persist, reparameterise "
            f"(non-centred effects) or use more informative priors."
        )
    if n_depth:
        msgs.append(
            f"{n_depth} draw(s) ({n_depth / n_draws:.1%}) hit the maximum tree depth "
            f"({max_depth}): sampling is inefficient, usually from strongly correlated or "
            f"non-identified parameters. Reparameterise, or raise max_treedepth."
        )
    if warn:
        for m in msgs:
            warnings.warn(m, ConvergenceWarning, stacklevel=2)
    return ConvergenceReport(
        max_rhat=max_rhat, min_ess_bulk=min_bulk, min_ess_tail=min_tail, n_divergent=n_div,
        n_max_treedepth=n_depth, n_draws=n_draws, rhat_max=rhat_max, ess_min=ess_min,
        messages=msgs,
    )


def diagnose(posterior: xr.Dataset) -> xr.Dataset:
    """Rank-normalised split R-hat, bulk and tail ESS of every variable (ArviZ), as one
    Dataset with variables ``<var>__r_hat``, ``<var>__ess_bulk``, ``<var>__ess_tail``.
    Constant quantities (no variation across draws) get NaN."""
    import arviz as az

    missing = posterior.isnull().any(("chain", "draw"))
    filled = posterior.fillna(0.0)
    with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        rhat = az.rhat(filled, method="rank")
        bulk = az.ess(filled, method="bulk")
        tail = az.ess(filled, method="tail")
    out = {}
    for name, da in posterior.data_vars.items():
        const = (da.max(("chain", "draw")) - da.min(("chain", "draw"))) <= 0
        keep = ~const & ~missing[name]
        for suffix, ds in (("r_hat", rhat), ("ess_bulk", bulk), ("ess_tail", tail)):
            out[f"{name}__{suffix}"] = ds[name].where(keep)
    return xr.Dataset(out)


__all__ = [
    "FAST_SETTINGS",
    "ConvergenceReport",
    "ConvergenceWarning",
    "cached_model",
    "check_convergence",
    "clear_cache",
    "describe_run",
    "diagnose",
    "is_compiled",
    "sample",
    "set_attrs",
]
