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

import contextlib
import contextvars
import dataclasses
import functools
import os
import sys
import time
import warnings
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from bayesmeta._adaptive import AdaptiveRun, Reported
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
from bayesmeta.summaries import diagnose  # noqa: F401  (re-exported)

#: Why sampling stopped (posterior attribute ``stop_reason``).
STOP_REASONS = ("targets_met", "max_draws", "max_seconds", "projected_beyond_cap",
                "fixed_draws")

#: Set inside :func:`compile_only`.
_COMPILE_ONLY: contextvars.ContextVar[bool] = contextvars.ContextVar("compile_only",
                                                                     default=False)

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


def _compile_key(model: Any, var_names: Sequence[str] | None,
                 backend: str = "numba") -> tuple:
    return id(model), None if var_names is None else tuple(var_names), backend


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


_ERFCX_SWITCH = 25.0  # erfcx by exp(x^2) erfc(x) below, by its asymptotic series above


def _erfcx_jax(x: Any) -> Any:
    r"""The scaled complementary error function :math:`\operatorname{erfcx}(x) = e^{x^2}
    \operatorname{erfc}(x)` in JAX, which has none (PyTensor maps its ``Erfcx`` to
    TensorFlow Probability, not a dependency here). Below ``x = 25`` the product itself
    (``erfc`` is still a normal double there, relative error ~1e-13); above it the asymptotic
    series :math:`\frac{1}{x\sqrt\pi}(1 - \frac{1}{2x^2} + \frac{3}{4x^4} -
    \frac{15}{8x^6} + \frac{105}{16x^8})`, whose next term is below 1e-13 relative there.
    Both branches get clamped arguments, so that neither produces NaN or infinity in the
    other's region and ``jax.grad`` stays finite."""
    import jax.numpy as jnp
    from jax.scipy.special import erfc

    lo = jnp.minimum(x, _ERFCX_SWITCH)
    hi = jnp.maximum(x, _ERFCX_SWITCH)
    u = 1.0 / (2.0 * hi * hi)
    series = (1.0 - u * (1.0 - 3.0 * u * (1.0 - 5.0 * u * (1.0 - 7.0 * u)))) / (
        hi * np.sqrt(np.pi))
    return jnp.where(x < _ERFCX_SWITCH, jnp.exp(lo * lo) * erfc(lo), series)


@functools.cache
def _register_jax_special_functions() -> None:
    """Prepare JAX for bayesmeta's models, once per process: double precision (JAX
    computes in float32 unless told otherwise, and the ordinal likelihoods' tails
    overflow there; the numba path is float64 too), and the special functions the models
    use that PyTensor's JAX linker lacks (``erfcx``, in the stable log Phi of every
    ordinal likelihood)."""
    import jax

    jax.config.update("jax_enable_x64", True)
    from pytensor.link.jax.dispatch import jax_funcify
    from pytensor.scalar.math import Erfcx

    @jax_funcify.register(Erfcx)
    def _jax_funcify_erfcx(op: Any, **kwargs: Any) -> Callable[[Any], Any]:
        return _erfcx_jax

    from bayesmeta._interval import register_jax

    register_jax()  # the ordinal-probit likelihood Op of the rater model


def _compiled_nutpie(model: Any, var_names: Sequence[str] | None = None,
                     backend: str = "numba") -> tuple[Any, float]:
    """nutpie's compiled model (cached per model object and backend) and the seconds spent
    compiling it in this call (0 on a cache hit)."""
    key = _compile_key(model, var_names, backend)
    entry = _COMPILED.get(key)
    if entry is not None and entry[0]() is model:
        return entry[1], 0.0
    _quiet_blas_check()
    import nutpie
    from numba.core.errors import NumbaWarning

    kwargs: dict[str, Any] = {} if var_names is None else {"var_names": list(var_names)}
    if backend == "jax":
        try:
            import jax  # noqa: F401
        except ImportError as err:
            raise ImportError('SamplerOptions(backend="jax") needs JAX: pip install '
                              '"bayesmeta[jax]" (or a CUDA build of jax for a GPU).') from err
        # the gradient from PyTensor's own graph (as on the numba path: jax.grad of the
        # ordinal likelihoods' switch branches gives 0 * inf = NaN), and the model not
        # frozen, so that its pm.Data stay swappable (with_data) and its initial values
        # (which freezing refuses) stay
        kwargs.update(backend="jax", gradient_backend="pytensor", freeze_model=False)
        _register_jax_special_functions()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        # "cannot cache ... dynamic globals": a kernel holding a pointer (nutpie's
        # cfunc wrappers hold the data's) compiles once per session, not cached on disk
        warnings.simplefilter("ignore", NumbaWarning)
        # nutpie's JAX compile adds dims of its own ("x_log___dim_0") to the model's
        # named_vars_to_dims, in place, for every transformed variable; a later numba
        # compile of the same model then fails to build its trace ("Unknown dimension
        # size"). The compiled model keeps the dict it was given; the model gets its own back.
        dims = dict(model.named_vars_to_dims)
        t0 = time.perf_counter()
        compiled = nutpie.compile_pymc_model(model, **kwargs)
        seconds = time.perf_counter() - t0
        if dict(model.named_vars_to_dims) != dims:
            model.named_vars_to_dims = dims
    _COMPILED[key] = (weakref.ref(model), compiled)
    return compiled, seconds


class CompileOnly(BaseException):
    """Raised by :func:`sample` and :func:`sample_together` inside :func:`compile_only`,
    once the model (or every model) is compiled: nothing was sampled. A ``BaseException``
    (as ``KeyboardInterrupt``), so that no ``except Exception`` between the sampler and
    the caller of :func:`compile_only` can catch it and go on to sample."""


@contextlib.contextmanager
def compile_only() -> Iterator[None]:
    """Inside this block, :func:`sample` and :func:`sample_together` compile their models
    for nutpie and raise :class:`CompileOnly` instead of sampling.

    A second process calls an analysis this way to fill the on-disk compile cache
    (PyTensor's numba kernels) before the first process reaches the same model, which then
    compiles from the cache: :mod:`bayesmeta.report._warm` does so for the report's slow
    Bayesian sections while the first ones run. Compiling is deterministic and draws
    nothing, so the numbers are those of an unwarmed run.

    Examples
    --------
    >>> import numpy as np, pymc as pm  # doctest: +SKIP
    >>> from bayesmeta.sampling import CompileOnly, compile_only, sample
    >>> with pm.Model() as m:  # doctest: +SKIP
    ...     pm.Normal("y", pm.Normal("mu", 0, 10), 1, observed=np.zeros(3))
    >>> try:  # doctest: +SKIP
    ...     with compile_only():
    ...         sample(m, random_seed=1)
    ... except CompileOnly:
    ...     pass
    """
    token = _COMPILE_ONLY.set(True)
    try:
        yield
    finally:
        _COMPILE_ONLY.reset(token)


def _stop_if_compile_only(models: Sequence[Any], var_names: Sequence[str] | None,
                          opts: SamplerOptions) -> None:
    """Inside :func:`compile_only`: compile ``models`` (nutpie) and raise CompileOnly."""
    if not _COMPILE_ONLY.get():
        return
    if opts.sampler == "nutpie":
        for m in models:
            _compiled_nutpie(m, var_names, opts.backend)
    raise CompileOnly(f"{len(models)} model(s) compiled, nothing sampled (compile_only)")


#: Half-width of the uniform jitter (unconstrained scale) around ``initial_values``.
START_JITTER = 0.1


def unconstrained_start(model: Any, values: Mapping[str, Any],
                        point: Mapping[str, np.ndarray] | None = None) -> dict[str, np.ndarray]:
    """``values`` (free variables on their own scale, keyed by name) on the sampler's
    unconstrained scale, keyed by value-variable name (``error_sd`` -> ``error_sd_log__``).
    Raises on a name that is not a free variable or a value of the wrong shape. ``point``:
    the model's ``initial_point()`` where the caller has it already (it gives the
    shapes)."""
    import pytensor.tensor as pt

    free = {rv.name: rv for rv in model.free_RVs}
    start = model.initial_point() if point is None else point
    out: dict[str, np.ndarray] = {}
    for name, value in values.items():
        rv = free.get(name)
        if rv is None:
            raise ValueError(f"initial_values: {name!r} is not a free variable of the model "
                             f"(free: {', '.join(sorted(free))}).")
        vname = model.rvs_to_values[rv].name
        arr = np.asarray(value, dtype=float)
        transform = model.rvs_to_transforms.get(rv)
        if transform is not None:
            arr = np.asarray(transform.forward(pt.as_tensor(arr), *rv.owner.inputs).eval(),
                             dtype=float)
        if arr.shape != start[vname].shape:
            raise ValueError(f"initial_values[{name!r}] has shape {np.shape(value)}, the "
                             f"variable {start[vname].shape}.")
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"initial_values[{name!r}] is outside the variable's support "
                             f"(non-finite on the unconstrained scale).")
        out[vname] = arr
    return out


def _start_at(compiled: Any, model: Any, values: Mapping[str, Any]) -> Any:
    """nutpie's compiled model with its chains started at ``values`` (see
    :func:`sample`): the model's own start function, then the given variables' slots
    replaced by their unconstrained values plus U(-START_JITTER, START_JITTER)."""
    import dataclasses

    start = model.initial_point()
    target = unconstrained_start(model, values, start)
    slots, cursor = {}, 0
    for rv in model.free_RVs:  # nutpie's flat layout: the free variables in model order
        vname = model.rvs_to_values[rv].name
        size = int(np.prod(start[vname].shape))
        slots[vname] = slice(cursor, cursor + size)
        cursor += size
    field = ("initial_point_func" if hasattr(compiled, "initial_point_func")
             else "_make_initial_points")
    base = getattr(compiled, field)

    def start_fn(seed: Any = None) -> np.ndarray:
        flat = np.array(base(seed), dtype="float64")
        if flat.size != cursor:
            raise RuntimeError(f"nutpie's start vector has {flat.size} entries, the model's "
                               f"free variables {cursor}.")
        rng = np.random.default_rng(seed)
        for vname, arr in target.items():
            sl = slots[vname]
            flat[sl] = arr.ravel() + rng.uniform(-START_JITTER, START_JITTER, sl.stop - sl.start)
        return flat

    return dataclasses.replace(compiled, **{field: start_fn})


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
    initial_values: Mapping[str, Any] | None = None,
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
    initial_values : dict, optional
        Starting values of free variables on their own (constrained) scale, keyed by
        variable name: every chain starts there plus a uniform jitter of
        :data:`START_JITTER` in the unconstrained space (different per chain; seeded). The
        other variables start at the model's initial values with nutpie's U(-1, 1) jitter
        (``sampler="pymc"``: every chain at the values themselves, no jitter).
        A model function passes a cheap moment-based solution where starting from the
        prior lets chains settle in poor local modes (``models/metric_validity.md``).

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
    _stop_if_compile_only([model], var_names, opts)

    if opts.sampler == "nutpie":
        import nutpie

        compiled, seconds["seconds_compile"] = _compiled_nutpie(model, var_names,
                                                                opts.backend)
        if data:
            compiled = compiled.with_data(**data)
        if initial_values:
            compiled = _start_at(compiled, model, initial_values)
        kwargs = _nutpie_kwargs(opts, seed, bool(progress))
        with _blas_threads(1), warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            if adaptive:
                run = AdaptiveRun(compiled, opts, kwargs, reported)
                run.run()
                idata, stop_reason, timing = run.finish()
                seconds.update(timing)
            else:
                t0 = time.perf_counter()
                idata = nutpie.sample(compiled, draws=opts.draws, **kwargs)
                seconds["seconds_sampling"] = time.perf_counter() - t0
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
                    initvals=dict(initial_values) if initial_values else None,
                    # no U(-1, 1) jitter on given starting values ("jitter+adapt_diag")
                    init="adapt_diag" if initial_values else "auto",
                )
        seconds["seconds_sampling"] = time.perf_counter() - t0
    return _finalise(idata, opts, seed=seed, adaptive=adaptive, stop_reason=stop_reason,
                     seconds=seconds, attrs=attrs)


def sample_together(
    models: Sequence[Any],
    options: SamplerOptions | Mapping[str, Any] | str | None = None,
    *,
    data: Sequence[Mapping[str, Any] | None] | None = None,
    random_seed: Sequence[int],
    progress: bool | None = None,
    attrs: Mapping[str, Any] | None = None,
    var_names: Sequence[str] | None = None,
    reported: Sequence[Reported],
) -> list[Any]:
    """Sample several models one after the other (the rater model's traits), each until its
    reported quantities meet the targets, and keep the **same number of draws** in all.

    With the adaptive length, each model is sampled until its own targets are met. The
    common length is the shortest of these: a model that needed more draws is **thinned**
    to it (evenly spaced draws, :func:`bayesmeta._adaptive.thin_index`), and the targets
    are checked again on the thinned trace, sampling on to the next check while they fail
    (at most to twice the draws it first needed). Thinning a trace whose worst quantities
    have an autocorrelation time longer than the thinning step costs them little ESS, so
    the slow model's check passes on the thinned trace, and the quick models are not
    sampled on to the slow one's length. Where that fails (the re-check does not pass by
    then, a draw left out diverged, or a model did not meet its targets at all) nothing is
    thinned: every model is resumed to the longest length, as before thinning was used.
    Each trace records ``draws`` (the common length), ``draws_met`` (where its own targets
    were met) and ``draws_sampled`` (the draws per chain sampled before thinning).
    Without the adaptive length (fast mode, ``adaptive=False``, PyMC) each model takes
    exactly ``draws`` draws, as in :func:`sample`.

    Parameters are those of :func:`sample`, one ``data``, ``random_seed`` and ``reported``
    per model.

    Returns
    -------
    list of arviz.InferenceData
        One per model, in order, with the same ``draw`` length.
    """
    # one common length for every model: a run stopped early would cut the others short
    opts = dataclasses.replace(SamplerOptions.coerce(options).resolve(), stop_early=False)
    k = len(models)
    data_list = list(data) if data is not None else [None] * k
    if not (len(data_list) == len(random_seed) == len(reported) == k):
        raise ValueError(f"sample_together needs one data, random_seed and reported per "
                         f"model: got {k} models, {len(data_list)} data, "
                         f"{len(random_seed)} seeds, {len(reported)} reported.")
    _stop_if_compile_only(models, var_names, opts)
    if not (opts.adaptive and opts.sampler == "nutpie"):
        return [sample(m, opts, data=d, random_seed=s, progress=progress, attrs=attrs,
                       var_names=var_names, reported=r)
                for m, d, s, r in zip(models, data_list, random_seed, reported, strict=True)]
    if progress is None:
        progress = (not opts.fast) and _interactive()
    runs: list[tuple[AdaptiveRun, float]] = []
    with _blas_threads(1), warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        try:
            for m, d, s, r in zip(models, data_list, random_seed, reported, strict=True):
                compiled, t_compile = _compiled_nutpie(m, var_names, opts.backend)
                if d:
                    compiled = compiled.with_data(**d)
                run = AdaptiveRun(compiled, opts, _nutpie_kwargs(opts, int(s),
                                                                 bool(progress)), r)
                runs.append((run, t_compile))
                run.run()
            met = [run.used for run, _ in runs]
            _align(runs=[run for run, _ in runs])
            out = []
            for (run, t_compile), s, n_met in zip(runs, random_seed, met, strict=True):
                idata, stop, timing = run.finish(stacklevel=5)
                seconds = {"seconds_compile": t_compile, **timing,
                           "seconds_postprocess": 0.0}
                out.append(_finalise(idata, opts, seed=int(s), adaptive=True,
                                     stop_reason=stop, seconds=seconds,
                                     attrs={**(attrs or {}), "draws_met": int(n_met),
                                            "draws_sampled": int(run.sampled)}))
        except BaseException:
            for run, _ in runs:
                run.sampler.cancel()
            raise
    return out


def _align(runs: Sequence[AdaptiveRun]) -> None:
    """Bring paused runs to one draw length: thin the longer ones to the shortest (each
    re-checked, at most to twice its own length) or, if any cannot be, resume all to the
    longest unthinned; then cut all to the shortest of a run stopped by ``max_seconds``."""
    met_all = all(run.stop == "targets_met" for run in runs)
    shortest = min(run.used for run in runs)
    if met_all and all(run.thin_to(shortest, upto=2 * run.used) for run in runs):
        return
    for run in runs:
        run.keep = None
    common = max(run.used for run in runs)
    for run in runs:
        run.extend(common)
    common = min(run.used for run in runs)  # a run stopped by max_seconds
    for run in runs:
        if run.used > common:
            run.used, run.stop = common, "max_seconds"


def _nutpie_kwargs(opts: SamplerOptions, seed: int, progress: bool) -> dict[str, Any]:
    """nutpie's keyword arguments for ``opts``: one thread per chain (nutpie runs chains
    beyond ``cores`` one after another, which would let the first chains finish all their
    draws before the others start)."""
    return {"tune": opts.tune, "chains": opts.chains, "cores": int(opts.cores or opts.chains),
            "seed": seed, "progress_bar": progress, "save_warmup": False,
            "target_accept": opts.target_accept, "maxdepth": opts.max_treedepth,
            "low_rank_modified_mass_matrix": opts.mass_matrix == "low_rank",
            **({"mass_matrix_eigval_cutoff": float(opts.eigval_cutoff)}
               if opts.mass_matrix == "low_rank" else {})}


def _finalise(idata: Any, opts: SamplerOptions, *, seed: int, adaptive: bool,
              stop_reason: str, seconds: Mapping[str, float],
              attrs: Mapping[str, Any] | None) -> Any:
    """The tree-depth flag under one name and the provenance attributes on every group."""
    stats = idata.sample_stats
    if "maxdepth_reached" in stats:
        idata.sample_stats["reached_max_treedepth"] = stats["maxdepth_reached"]
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
        **({"eigval_cutoff": float(opts.eigval_cutoff)} if opts.mass_matrix == "low_rank"
           else {}),
        "backend": opts.backend,
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
    "projected_beyond_cap": "stopped early: the targets projected far beyond the cap of "
                            "{max_draws} draws per chain, targets NOT met",
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
        if "eigval_cutoff" in a:
            text += f" (eigenvalue cutoff {float(a['eigval_cutoff']):g})"
    if a.get("backend", "numba") != "numba":
        text += f", {a['backend']} backend"
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
    "CompileOnly",
    "SamplingCapWarning",
    "add_seconds",
    "cached_model",
    "clear_cache",
    "compile_only",
    "describe_run",
    "is_compiled",
    "sample",
    "sample_together",
    "set_attrs",
]
