"""One place that runs samplers: nutpie by default, PyMC's NUTS as the fallback.

:func:`sample` draws from any bayesmeta PyMC model with the settings of one
:class:`~bayesmeta.options.SamplerOptions` and returns an ArviZ ``InferenceData`` with
provenance attributes (bayesmeta version, seed, sampler, draws) on every group. Convergence
checks live in :mod:`bayesmeta.convergence`.

Compilation is cached: a model built once per shape (see :func:`cached_model`) is compiled
once by nutpie, and refitting it to new data of the same shape only swaps the data
(``pm.Data`` containers), so a refit costs sampling time only.

Adaptive length (:class:`~bayesmeta.options.SamplerOptions` ``adaptive``, on by default):
a model function passes what it reports (``reported=``: variable names, or a callable that
computes the reported, possibly derived, quantities from a trace). nutpie is started once
with ``max_draws`` draws per chain in the background; from ``draws`` on, every
``check_every`` draws the first *k* draws of every chain are checked, and sampling stops at
the first *k* where every reported quantity has R-hat <= ``target_rhat`` and bulk and tail
ESS >= ``target_ess``. The checks fall at fixed draw counts, so the same seed gives the same
draws; warm-up runs once. The posterior attributes record ``draws`` (per chain, used),
``stop_reason``, and the seconds of each phase (``seconds_compile``, ``seconds_warmup``,
``seconds_sampling``, ``seconds_postprocess``).

PyMC and nutpie are imported inside the functions, never at import time.
"""

from __future__ import annotations

import os
import sys
import time
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
    SamplingCapWarning,
    check_convergence,
)
from bayesmeta.options import (
    FAST_SETTINGS,
    SamplerOptions,
    resolve_seed,
)
from bayesmeta.summaries import diagnose

#: What a model reports: posterior variable names, or a callable that takes a trace
#: (``arviz.InferenceData`` with a ``posterior`` group) and returns an ``xarray.Dataset`` of
#: the reported quantities with dims ``(chain, draw, ...)`` (derived ones included).
Reported = Sequence[str] | Callable[[Any], Any]

#: Why sampling stopped (posterior attribute ``stop_reason``).
STOP_REASONS = ("targets_met", "max_draws", "max_seconds", "fixed_draws")

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


def _quiet_blas_check() -> None:
    """Resolve PyTensor's BLAS flags once per process without its warning "PyTensor could
    not link to a BLAS installation". The check is only relevant to PyTensor's C backend;
    nutpie compiles through numba, whose kernels call the BLAS and LAPACK that NumPy and
    SciPy ship. PyTensor caches the result, so no later access warns either. (PyPI wheels
    of NumPy and SciPy ship OpenBLAS under renamed symbols, which PyTensor's C code cannot
    link to: silencing is the feasible fix, and it is applied only on the numba path.)"""
    import pytensor

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="PyTensor could not link to a BLAS",
                                category=UserWarning)
        _ = pytensor.config.blas__ldflags


def _compiled_nutpie(model: Any, var_names: Sequence[str] | None = None) -> tuple[Any, float]:
    """nutpie's compiled model (cached per model object) and the seconds spent compiling it
    in this call (0 on a cache hit)."""
    key = _compile_key(model, var_names)
    entry = _COMPILED.get(key)
    if entry is not None and entry[0]() is model:
        return entry[1], 0.0
    _quiet_blas_check()
    import nutpie
    from numba.core.errors import NumbaWarning

    kwargs = {} if var_names is None else {"var_names": list(var_names)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        # "cannot cache ... dynamic globals": kernels calling SciPy's Cephes through
        # ctypes compile once per session instead of being cached on disk
        warnings.simplefilter("ignore", NumbaWarning)
        t0 = time.perf_counter()
        compiled = nutpie.compile_pymc_model(model, **kwargs)
        seconds = time.perf_counter() - t0
    _COMPILED[key] = (weakref.ref(model), compiled)
    return compiled, seconds


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
    reported: Reported | None = None,
) -> Any:
    r"""Draw from the posterior of a PyMC model with nutpie (default) or PyMC's NUTS.

    Parameters
    ----------
    model : pymc.Model
        The model. Reuse the same object (see :func:`cached_model`) to reuse its
        compilation; new data for its ``pm.Data`` containers go in ``data``.
    options : SamplerOptions, dict, "fast" or "full", optional
        Draws, tuning, chains, backend, step-size target, tree depth, mass matrix, fast
        mode and the adaptive length (:class:`~bayesmeta.options.SamplerOptions`); fields
        left at None take the package defaults. A model function resolves its own defaults
        first.
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
    reported : list of str or callable, optional
        What the model reports, for the adaptive length: posterior variable names, or a
        callable taking a trace (InferenceData) and returning an ``xarray.Dataset`` of the
        reported quantities, derived ones included, with dims ``(chain, draw, ...)``. Their
        R-hat and bulk and tail ESS are what is checked. Without it (or with
        ``adaptive=False``, fast mode, or ``sampler="pymc"``) exactly ``draws`` draws are
        taken.

    Returns
    -------
    arviz.InferenceData
        Groups ``posterior`` (dims ``chain``, ``draw`` and the model's named dims) and
        ``sample_stats`` (with ``diverging`` and ``reached_max_treedepth``); attributes
        ``bayesmeta_version``, ``sampler``, ``random_seed``, ``chains``, ``draws`` (per
        chain, the draws kept), ``tune``, ``fast``, ``target_accept``, ``max_treedepth``,
        ``mass_matrix``, ``adaptive``, ``target_rhat``, ``target_ess``, ``max_draws``,
        ``stop_reason`` (one of :data:`STOP_REASONS`) and ``seconds_compile``,
        ``seconds_warmup``, ``seconds_sampling``, ``seconds_postprocess`` on every group
        (a model function adds its own post-processing with :func:`add_seconds`).

    Warns
    -----
    SamplingCapWarning
        Adaptive sampling reached ``max_draws`` or ``max_seconds`` before the targets.

    Notes
    -----
    Beyond the adaptive stopping rule no convergence check happens here; call
    :func:`~bayesmeta.convergence.check_convergence` on the quantities you report (derived
    quantities included), as the model functions of bayesmeta do. Divergences are not a
    stopping criterion (more draws do not remove them); they are reported by that check.

    Examples
    --------
    >>> import numpy as np, pymc as pm  # doctest: +SKIP
    >>> from bayesmeta.sampling import sample  # doctest: +SKIP
    >>> from bayesmeta.convergence import check_convergence  # doctest: +SKIP
    >>> with pm.Model() as m:  # doctest: +SKIP
    ...     mu = pm.Normal("mu", 0, 10)
    ...     pm.Normal("y", mu, 1, observed=np.array([0.1, -0.3, 0.5]))
    >>> idata = sample(m, random_seed=1, reported=["mu"])  # doctest: +SKIP
    >>> idata.posterior.attrs["stop_reason"]  # doctest: +SKIP
    'targets_met'

    R equivalent: ``brms::brm(..., backend = "cmdstanr", seed = 1)`` followed by
    ``rstan::check_hmc_diagnostics``.
    """
    opts = SamplerOptions.coerce(options).resolve()
    seed = resolve_seed(random_seed)
    if progress is None:
        progress = (not opts.fast) and _interactive()
    data = dict(data or {})
    adaptive = bool(opts.adaptive) and reported is not None and opts.sampler == "nutpie"
    seconds = {"seconds_compile": 0.0, "seconds_warmup": 0.0, "seconds_sampling": 0.0,
               "seconds_postprocess": 0.0}
    stop_reason = "fixed_draws"

    if opts.sampler == "nutpie":
        # one thread per chain: nutpie runs chains beyond ``cores`` one after another, which
        # would let the first chains finish all their draws before the others start
        import nutpie

        cores = int(opts.cores or opts.chains)
        compiled, seconds["seconds_compile"] = _compiled_nutpie(model, var_names)
        if data:
            compiled = compiled.with_data(**data)
        kwargs = {"tune": opts.tune, "chains": opts.chains, "cores": cores, "seed": seed,
                  "progress_bar": bool(progress), "save_warmup": False,
                  "target_accept": opts.target_accept, "maxdepth": opts.max_treedepth,
                  "low_rank_modified_mass_matrix": opts.mass_matrix == "low_rank"}
        with _blas_threads(1), warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            if adaptive:
                idata, stop_reason, timing = _sample_adaptive(compiled, opts, kwargs,
                                                              reported)
                seconds.update(timing)
            else:
                t0 = time.perf_counter()
                idata = nutpie.sample(compiled, draws=opts.draws, **kwargs)
                seconds["seconds_sampling"] = time.perf_counter() - t0
        stats = idata.sample_stats
        if "maxdepth_reached" in stats:
            idata.sample_stats["reached_max_treedepth"] = stats["maxdepth_reached"]
    else:
        import pymc as pm

        cores = int(opts.cores or min(opts.chains, os.cpu_count() or 1))
        t0 = time.perf_counter()
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
        seconds["seconds_sampling"] = time.perf_counter() - t0
    provenance = {
        "bayesmeta_version": __version__,
        "sampler": opts.sampler,
        "random_seed": seed,
        "chains": int(opts.chains),
        "draws": int(idata.posterior.sizes["draw"]),
        "tune": int(opts.tune),
        "fast": int(bool(opts.fast)),
        "target_accept": float(opts.target_accept),
        "max_treedepth": int(opts.max_treedepth),
        "mass_matrix": opts.mass_matrix,
        "adaptive": int(adaptive),
        "target_rhat": float(opts.target_rhat),
        "target_ess": float(opts.target_ess),
        "max_draws": int(opts.max_draws) if adaptive else int(opts.draws),
        "stop_reason": stop_reason,
        **seconds,
    }
    provenance.update(attrs or {})
    set_attrs(idata, provenance)
    return idata


class _blas_threads:
    """Limit BLAS (OpenBLAS/MKL) threads while chains run in parallel threads, so that the
    chains do not fight over the cores with BLAS's own threads (threadpoolctl; a no-op when
    it is missing)."""

    def __init__(self, n: int) -> None:
        self.n, self._ctx = n, None

    def __enter__(self) -> _blas_threads:
        try:
            from threadpoolctl import threadpool_limits
        except ImportError:  # pragma: no cover - threadpoolctl ships with scikit-learn/scipy
            return self
        self._ctx = threadpool_limits(self.n, user_api="blas")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._ctx is not None:
            self._ctx.restore_original_limits()


def _reported_dataset(idata: Any, reported: Reported) -> Any:
    if callable(reported):
        return reported(idata)
    return idata.posterior[list(reported)]


def _targets_met(idata: Any, reported: Reported, opts: SamplerOptions
                 ) -> tuple[bool, float, float, float]:
    """Whether the reported quantities of ``idata`` meet the targets, and their worst
    R-hat, bulk ESS and tail ESS (constant quantities are skipped)."""
    diag = diagnose(_reported_dataset(idata, reported))
    worst = {"r_hat": -np.inf, "ess_bulk": np.inf, "ess_tail": np.inf}
    for name, da in diag.data_vars.items():
        stat = str(name).rsplit("__", 1)[-1]
        vals = np.asarray(da.values, dtype=float)
        vals = vals[np.isfinite(vals)]
        if stat not in worst or not vals.size:
            continue
        worst[stat] = (max(worst[stat], vals.max()) if stat == "r_hat"
                       else min(worst[stat], vals.min()))
    rhat, bulk, tail = worst["r_hat"], worst["ess_bulk"], worst["ess_tail"]
    ok = rhat <= opts.target_rhat and bulk >= opts.target_ess and tail >= opts.target_ess
    return bool(ok), float(rhat), float(bulk), float(tail)


def _chain_counts(raw: Any) -> tuple[list[int], list[int], Any]:
    """Per chain: finished tuning draws and posterior draws of a raw nutpie trace."""
    draws, stats = raw.get_arrow_trace()
    tuned, kept = [], []
    for d, st in zip(draws, stats, strict=True):
        n_tune = int(np.asarray(st.column("tuning").to_numpy()).sum()) \
            if d.num_rows else 0
        tuned.append(n_tune)
        kept.append(int(d.num_rows) - n_tune)
    return tuned, kept, draws


def _partial_idata(draw_batches: Sequence[Any], tuned: Sequence[int], n: int,
                   coords: Mapping[str, Any]) -> Any:
    """The first ``n`` posterior draws of every chain as InferenceData (posterior only)."""
    import arviz as az
    import pyarrow

    data: dict[str, np.ndarray] = {}
    dims: dict[str, list[str]] = {}
    for c, batch in enumerate(draw_batches):
        part = batch.slice(tuned[c], n)
        for name in part.column_names:
            col = part.column(name)
            meta = col.field.metadata or {}
            shape = [int(x) for x in meta.get(b"shape", b"").decode().split(",") if x]
            item_dims = [x for x in meta.get(b"dims", b"").decode().split(",") if x]
            arr = pyarrow.array(col)
            if hasattr(arr, "flatten"):
                arr = arr.flatten()
            vals = np.asarray(arr.to_numpy(False), dtype=float).reshape(n, *shape)
            if name not in data:
                data[name] = np.empty((len(draw_batches), n, *shape))
                if item_dims:
                    dims[name] = item_dims
            data[name][c] = vals
    used = {d for ds in dims.values() for d in ds}
    return az.from_dict(posterior=data, dims=dims,
                        coords={k: v for k, v in coords.items() if k in used})


def _is_finished(sampler: Any) -> bool:
    """nutpie 0.16's ``is_finished`` raises ``TimeoutError`` while the chains still run."""
    try:
        return bool(sampler.is_finished)
    except TimeoutError:
        return False


def _sample_adaptive(compiled: Any, opts: SamplerOptions, kwargs: dict[str, Any],
                     reported: Reported) -> tuple[Any, str, dict[str, float]]:
    """Start nutpie once with ``max_draws`` draws per chain in the background and stop at
    the first check where the reported quantities meet the targets. Checks fall at
    ``draws`` draws per chain, then after every ``check_every`` draws or 10% more draws,
    whichever is more (so that a fast sampler is not held up by its checks). Returns the
    trace cut at that check, the stop reason and the seconds of warm-up and sampling."""
    import nutpie

    block = int(opts.check_every or max(50, opts.draws // 5))
    checkpoint = int(opts.draws)
    t_start = time.perf_counter()
    sampler = nutpie.sample(compiled, draws=opts.max_draws, blocking=False, **kwargs)
    t_warm: float | None = None
    worst = (np.nan, np.nan, np.nan)
    stop, used = "max_draws", opts.max_draws
    last_done, last_t, rate = 0, t_start, 0.0

    def overtime() -> bool:
        return opts.max_seconds is not None and time.perf_counter() - t_start > opts.max_seconds

    try:
        while True:
            finished = _is_finished(sampler)
            # a copy of the trace so far: polled sparingly (below), as it grows with it
            tuned, kept, batches = _chain_counts(sampler._sampler.inspect())
            now = time.perf_counter()
            started = len(kept) == opts.chains
            reached = min(kept) if started else 0
            done = min(t + k for t, k in zip(tuned, kept, strict=True)) if started else 0
            if now > last_t and done > last_done:
                rate = (done - last_done) / (now - last_t)
            last_done, last_t = done, now
            if t_warm is None and started and all(t >= opts.tune for t in tuned):
                # the slowest chain ended its warm-up ``reached`` draws ago
                t_warm = max(t_start, now - (reached / rate if rate > 0 else 0.0))
            while reached >= checkpoint and checkpoint < opts.max_draws and not overtime():
                part = _partial_idata(batches, tuned, checkpoint, compiled.coords)
                ok, *worst = _targets_met(part, reported, opts)
                if ok:
                    stop, used = "targets_met", checkpoint
                    break
                checkpoint = min(checkpoint + max(block, checkpoint // 10), opts.max_draws)
            if stop == "targets_met" or finished:
                break
            if overtime():
                stop, used = "max_seconds", reached
                break
            # sleep until the slowest chain is expected at the next check (warm-up included)
            left = opts.tune + checkpoint - done
            wait = 1.0 if rate <= 0 else 1.05 * left / rate
            if opts.max_seconds is not None:
                wait = min(wait, opts.max_seconds - (now - t_start))
            time.sleep(float(np.clip(wait, 0.2, 60.0)))
        idata = sampler.wait() if finished else sampler.abort()
    except BaseException:
        sampler.cancel()
        raise
    t_end = time.perf_counter()
    if stop == "max_draws":
        used = int(idata.posterior.sizes["draw"])
    if used < 1:
        raise RuntimeError(f"sampling stopped after max_seconds={opts.max_seconds} before "
                           f"any chain finished its warm-up; raise max_seconds.")
    keep = {"draw": slice(0, used)}
    for group in ("posterior", "sample_stats"):
        if group in idata.groups():
            setattr(idata, group, getattr(idata, group).isel(keep))
    for group in [g for g in idata.groups() if g.startswith("warmup")]:
        delattr(idata, group)
    ok = stop == "targets_met"
    if not ok:
        ok, *worst = _targets_met(idata, reported, opts)
        if ok and stop == "max_draws":
            stop = "targets_met"  # met exactly at the cap
    if not ok:
        cap = (f"max_draws={opts.max_draws} draws per chain" if stop == "max_draws"
               else f"max_seconds={opts.max_seconds:g} s ({used} draws per chain)")
        warnings.warn(
            f"Sampling stopped at the cap of {cap} before the reported quantities met the "
            f"targets: max R-hat {worst[0]:.3f} (target <= {opts.target_rhat:g}), min ESS "
            f"bulk {worst[1]:.0f} / tail {worst[2]:.0f} (target >= {opts.target_ess:g}). Raise "
            f"sampling={{'max_draws': ...}} (or max_seconds), or look for a poorly "
            f"identified parameter; do not report estimates that fail the checks.",
            SamplingCapWarning, stacklevel=3)
    t_warm = t_end if t_warm is None else t_warm
    return idata, stop, {"seconds_warmup": t_warm - t_start, "seconds_sampling": t_end - t_warm}


def add_seconds(idata: Any, phase: str, seconds: float) -> None:
    """Add ``seconds`` to the attribute ``seconds_<phase>`` of every group (a model function
    records its own post-processing as ``add_seconds(idata, "postprocess", t)``)."""
    key = f"seconds_{phase}"
    set_attrs(idata, {key: float(idata.posterior.attrs.get(key, 0.0)) + float(seconds)})


def set_attrs(idata: Any, attrs: Mapping[str, Any]) -> None:
    """Set the attributes ``attrs`` on every group of ``idata`` (netCDF-safe values)."""
    clean = {k: (v if isinstance(v, str | int | float | np.integer | np.floating) else str(v))
             for k, v in attrs.items()}
    for group in idata.groups():
        idata[group].attrs.update(clean)


_STOP_TEXT = {
    "targets_met": "stopped when R-hat <= {target_rhat:g} and ESS >= {target_ess:g} were met",
    "max_draws": "stopped at the cap of {max_draws} draws per chain, targets NOT met",
    "max_seconds": "stopped at the time cap (max_seconds), targets NOT met",
}


def describe_run(idata: Any) -> str:
    """One line for result headers: sampler, chains x draws, seed, why sampling stopped,
    the seconds of each phase and the fast flag."""
    a = idata.posterior.attrs
    text = (f"{a.get('sampler', '?')} NUTS, {a.get('chains', '?')} chains x "
            f"{a.get('draws', '?')} draws ({a.get('tune', '?')} tuning), "
            f"seed {a.get('random_seed', '?')}")
    if a.get("mass_matrix", "diag") != "diag":
        text += f", {a['mass_matrix']} mass matrix"
    reason = a.get("stop_reason")
    if reason in _STOP_TEXT:
        text += "; " + _STOP_TEXT[reason].format(**{k: a.get(k, "?") for k in (
            "target_rhat", "target_ess", "max_draws")})
    phases = [(p, a[f"seconds_{p}"]) for p in ("compile", "warmup", "sampling",
                                                "postprocess") if f"seconds_{p}" in a]
    if phases:
        text += "; seconds: " + ", ".join(f"{p} {float(v):.1f}" for p, v in phases)
    if int(a.get("fast", 0)):
        text += "  [FAST MODE: few draws, a preview; use sampling='full' for reported numbers]"
    return text


__all__ = [
    "FAST_SETTINGS",
    "STOP_REASONS",
    "SamplingCapWarning",
    "add_seconds",
    "cached_model",
    "clear_cache",
    "describe_run",
    "is_compiled",
    "sample",
    "set_attrs",
]
