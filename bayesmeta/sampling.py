"""One place that runs samplers: nutpie by default, PyMC's NUTS as the fallback.

:func:`sample` draws from any bayesmeta PyMC model with the settings of one
:class:`~bayesmeta.options.SamplerOptions` and returns an ArviZ ``InferenceData`` with
provenance attributes (bayesmeta version, seed, sampler, draws) on every group. Convergence
checks live in :mod:`bayesmeta.convergence`.

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
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any

import numpy as np

from bayesmeta._version import __version__
from bayesmeta.convergence import (  # noqa: F401  (re-exported: the sampler's checks)
    ConvergenceReport,
    ConvergenceWarning,
    check_convergence,
)
from bayesmeta.options import (
    FAST_SETTINGS,
    SamplerOptions,
    legacy_sampling,
    resolve_seed,
)
from bayesmeta.summaries import diagnose  # noqa: F401  (re-exported)

_MODEL_CACHE_SIZE = 16
_MODELS: OrderedDict[Hashable, Any] = OrderedDict()
_COMPILED: dict[tuple, tuple[weakref.ref, Any]] = {}


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
def _interactive() -> bool:
    if "ipykernel" in sys.modules:
        return True
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def sample(
    model: Any,
    options: SamplerOptions | Mapping[str, Any] | str | None = None,
    *,
    data: Mapping[str, Any] | None = None,
    random_seed: int | None = None,
    progress: bool | None = None,
    attrs: Mapping[str, Any] | None = None,
    var_names: Sequence[str] | None = None,
    **legacy: Any,
) -> Any:
    r"""Draw from the posterior of a PyMC model with nutpie (default) or PyMC's NUTS.

    Parameters
    ----------
    model : pymc.Model
        The model. Reuse the same object (see :func:`cached_model`) to reuse its
        compilation; new data for its ``pm.Data`` containers go in ``data``.
    options : SamplerOptions, dict, "fast" or "full", optional
        Draws, tuning, chains, backend, step-size target, tree depth, mass matrix and fast
        mode (:class:`~bayesmeta.options.SamplerOptions`); fields left at None take the
        package defaults. A model function resolves its own defaults first.
    data : dict, optional
        New values of ``pm.Data`` containers (same shapes as at build time for nutpie).
    random_seed : int, optional
        Seed; the same seed, data and settings give identical draws. When omitted a seed
        is drawn and recorded in the attributes, so the run can be repeated.
    progress : bool, optional
        Show a progress bar. Default: on for full (not fast) runs in an interactive
        terminal or notebook, off otherwise.
    attrs : dict, optional
        More provenance attributes (e.g. ``data_hash``) for every InferenceData group.
    var_names : list of str, optional
        Variables kept in the trace (default: all). Models with many auxiliary
        coordinates (the augmented latent responses of the ordinal CFA) keep only what
        they report, so that the trace stays small.
    **legacy
        The keywords of the previous release (``draws=``, ``fast=``, ...), folded into
        ``options`` with a ``FutureWarning``.

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
    No convergence check happens here; call
    :func:`~bayesmeta.convergence.check_convergence` on the quantities you report (derived
    quantities included), as the model functions of bayesmeta do.

    Examples
    --------
    >>> import numpy as np, pymc as pm  # doctest: +SKIP
    >>> from bayesmeta.sampling import sample  # doctest: +SKIP
    >>> from bayesmeta.convergence import check_convergence  # doctest: +SKIP
    >>> with pm.Model() as m:  # doctest: +SKIP
    ...     mu = pm.Normal("mu", 0, 10)
    ...     pm.Normal("y", mu, 1, observed=np.array([0.1, -0.3, 0.5]))
    >>> idata = sample(m, "fast", random_seed=1)  # doctest: +SKIP
    >>> check_convergence(idata, ["mu"]).ok  # doctest: +SKIP
    True

    R equivalent: ``brms::brm(..., backend = "cmdstanr", seed = 1)`` followed by
    ``rstan::check_hmc_diagnostics``.
    """
    if "progressbar" in legacy:
        progress = legacy.pop("progressbar")
    opts = legacy_sampling(options, legacy, function="sample").resolve()
    seed = resolve_seed(random_seed)
    cores = int(opts.cores or min(opts.chains, os.cpu_count() or 1))
    if progress is None:
        progress = (not opts.fast) and _interactive()
    data = dict(data or {})

    if opts.sampler == "nutpie":
        import nutpie

        compiled = _compiled_nutpie(model, var_names)
        if data:
            compiled = compiled.with_data(**data)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            idata = nutpie.sample(
                compiled, draws=opts.draws, tune=opts.tune, chains=opts.chains, cores=cores,
                seed=seed, progress_bar=bool(progress), save_warmup=False,
                target_accept=opts.target_accept, maxdepth=opts.max_treedepth,
                low_rank_modified_mass_matrix=opts.mass_matrix == "low_rank",
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
                    draws=opts.draws, tune=opts.tune, chains=opts.chains, cores=cores,
                    random_seed=seed, progressbar=bool(progress),
                    target_accept=opts.target_accept, max_treedepth=opts.max_treedepth,
                    compute_convergence_checks=False, return_inferencedata=True,
                    var_names=None if var_names is None else list(var_names),
                )
    provenance = {
        "bayesmeta_version": __version__,
        "sampler": opts.sampler,
        "random_seed": seed,
        "chains": int(opts.chains),
        "draws": int(opts.draws),
        "tune": int(opts.tune),
        "fast": int(bool(opts.fast)),
        "target_accept": float(opts.target_accept),
        "max_treedepth": int(opts.max_treedepth),
        "mass_matrix": opts.mass_matrix,
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
        text += "  [FAST MODE: few draws, a preview; use sampling='full' for reported numbers]"
    return text


__all__ = [
    "FAST_SETTINGS",
    "cached_model",
    "clear_cache",
    "describe_run",
    "is_compiled",
    "sample",
    "set_attrs",
]
