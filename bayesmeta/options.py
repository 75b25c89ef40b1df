"""One place for the keyword sets that every sampler or resampler takes.

* :class:`SamplerOptions`: how a Bayesian model is sampled (draws, tuning, chains, sampler
  backend, step-size target, mass matrix, fast preview). Every Bayesian function takes it as
  ``sampling=`` (an object, a dict of its fields, or ``"fast"`` / ``"full"``); a field left
  at ``None`` takes the model's own default, which :meth:`SamplerOptions.resolve` fills in.
* :class:`ResamplingOptions`: how classical resampling runs (bootstrap resamples and what
  they resample, permutations and their scheme, p-value convention, worker threads), taken
  as ``resampling=`` by every resampling analysis.
* :func:`resolve_seed`: the one seed rule. A given seed is used as is; when none is given a
  seed is drawn from the operating system's entropy, used, and recorded in the result, so
  every run, MCMC or classical resampling, can be repeated exactly.

``random_seed``, ``progress`` and ``ci_prob`` stay top-level keywords of every analysis.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

SAMPLERS = ("nutpie", "pymc")
MASS_MATRICES = ("diag", "low_rank")
#: How nutpie evaluates the model: numba-compiled on the CPU, or JAX (CPU, GPU or TPU,
#: wherever JAX finds an accelerator; needs ``pip install "bayesmeta[jax]"``).
BACKENDS = ("numba", "jax")
UNITS = ("systems", "items", "both")
SCHEMES = ("systems", "items", "both", "both-rowcol", "pairs", "pairs-items")
#: Names of the previous release: paper 001 and Deutsch et al. say "inputs" for items.
_RENAMED = {"inputs": "items"}
PVALUES = ("plus-one", "raw")
#: The Bayesian bootstrap's Dirichlet (see
#: :func:`bayesmeta.correlation.resampling.dirichlet_concentration`).
DIRICHLETS = ("flat", "unbiased")

#: Draw settings of the fast mode (tests and previews): caps on chains, tuning and draws.
FAST_SETTINGS: dict[str, int] = {"chains": 2, "tune": 300, "draws": 300}

#: Package-wide sampler defaults; a model may override any of them. With ``adaptive`` on,
#: ``draws`` is the first block: a model that names what it reports is sampled until its
#: max R-hat <= ``target_rhat`` and min bulk and tail ESS >= ``target_ess``, up to
#: ``max_draws`` per chain (or ``max_seconds``).
SAMPLER_DEFAULTS: dict[str, Any] = {
    "draws": 1000, "tune": 1000, "chains": 4, "cores": None, "sampler": "nutpie",
    "target_accept": 0.8, "max_treedepth": 10, "mass_matrix": "diag", "fast": False,
    "adaptive": True, "target_rhat": 1.01, "target_ess": 400, "max_draws": 5000,
    "max_seconds": None, "check_every": None, "backend": "numba", "stop_early": True,
    "eigval_cutoff": 100.0,
}
#: ``stop_early``: stop at a check (from the second on) where the worst ESS, growing in
#: proportion to the draws, would reach ``target_ess`` only after more than this many
#: times ``max_draws`` draws per chain.
EARLY_STOP_FACTOR = 4.0



def _positive_int(name: str, value: Any, least: int) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < least:
        raise ValueError(f"{name} must be an integer >= {least}, got {value!r}.")


@dataclass(frozen=True)
class SamplerOptions:
    """How a Bayesian model is sampled. ``None`` means the model's default.

    Parameters
    ----------
    draws, tune : int
        Posterior draws and tuning iterations per chain.
    chains : int
        Number of chains.
    cores : int
        Chains run in parallel (default ``min(chains, cpu count)``).
    sampler : {"nutpie", "pymc"}
        nutpie (numba-compiled NUTS, the default) or PyMC's own NUTS.
    target_accept : float
        Target acceptance rate of step-size adaptation (raise to 0.95 on divergences).
    max_treedepth : int
        Maximum NUTS tree depth.
    mass_matrix : {"diag", "low_rank"}
        nutpie's diagonal or low-rank modified mass-matrix adaptation.
    eigval_cutoff : float
        ``mass_matrix="low_rank"`` only: the low-rank correction of the mass matrix keeps
        the directions whose estimated posterior variance differs from the diagonal's by
        more than this factor (either way) and ignores the rest (nutpie's
        ``mass_matrix_eigval_cutoff``; package default 100, nutpie's own). Lower values
        correct milder correlations too, at no extra gradient evaluation; the rater model
        uses 10 (``models/rater.md``).
    fast : bool
        Preview mode: chains, tuning and draws capped at :data:`FAST_SETTINGS`, no adaptive
        extension; recorded and printed on every table it produces. Never report fast-mode
        numbers.
    adaptive : bool
        Sample until the targets are met (default on; nutpie only): a model function names
        the quantities it reports, the chains run without stopping and are checked every
        ``check_every`` draws from ``draws`` on, and sampling stops at the first check
        where every reported quantity has R-hat <= ``target_rhat`` and bulk and tail ESS
        >= ``target_ess`` (no warm-up is repeated). Off: exactly ``draws`` draws.
    target_rhat : float
        Largest acceptable rank-normalised split R-hat of a reported quantity (1.01).
    target_ess : float
        Smallest acceptable bulk and tail ESS of a reported quantity (400).
    max_draws : int
        Cap on the draws per chain (5,000); reaching it gives a
        :class:`~bayesmeta.convergence.SamplingCapWarning`.
    max_seconds : float, optional
        Cap on the seconds of warm-up plus sampling (default none). A time cap makes the
        number of draws depend on the machine: use ``max_draws`` for repeatable runs.
    check_every : int, optional
        Draws per chain between checks (default ``max(50, draws // 5)``; once 10% of the
        draws so far is more, checks come every 10%). The checks fall at fixed draw
        counts, so the same seed gives the same draws.
    stop_early : bool
        Adaptive sampling only (default on): give up at a check, from the second on, where
        the worst bulk or tail ESS so far, projected in proportion to the draws, would
        reach ``target_ess`` only after more than :data:`EARLY_STOP_FACTOR` (4) times
        ``max_draws`` draws per chain: chains that disagree that much (a multimodal or
        weakly identified posterior) would not agree by the cap either, and running to it
        costs minutes to hours. Gives a
        :class:`~bayesmeta.convergence.SamplingCapWarning` with the projection, like the
        caps. Off: sample to the cap (always off where several models are sampled to one
        common length, as the rater model's traits are).
    backend : {"numba", "jax"}
        How nutpie evaluates the model and its gradient: ``"numba"`` (default, compiled
        for the CPU) or ``"jax"`` (the accelerator path: JAX runs the log density and its
        gradient on a GPU or TPU when one is visible to JAX, else on the CPU; needs
        ``pip install "bayesmeta[jax]"``, or a CUDA build of jax for a GPU). The draws
        differ from the numba backend's by Monte Carlo error only (same model, same NUTS).
        JAX compiles bayesmeta's models in seconds where numba takes minutes; nutpie
        still calls the log density once per leapfrog step and chain, so a GPU pays a
        launch per step (measurements: ``benchmarks/bench_jax_backend.py``,
        ``benchmarks/results/jax_backend.jsonl``). The CFA's default
        ``parameterization="augmented"`` is numba-only; JAX runs ``"polar"``.

    Examples
    --------
    >>> import bayesmeta as bm
    >>> opts = bm.SamplerOptions(draws=2000)
    >>> opts.resolve(tune=400).tune, opts.resolve(tune=400).draws
    (400, 2000)
    >>> bm.SamplerOptions.coerce("fast").resolve().draws
    300

    R equivalent: the ``chains``, ``iter``, ``warmup``, ``control = list(adapt_delta,
    max_treedepth)`` arguments of ``brms::brm``.
    """

    draws: int | None = None
    tune: int | None = None
    chains: int | None = None
    cores: int | None = None
    sampler: str | None = None
    target_accept: float | None = None
    max_treedepth: int | None = None
    mass_matrix: str | None = None
    fast: bool | None = None
    adaptive: bool | None = None
    target_rhat: float | None = None
    target_ess: float | None = None
    max_draws: int | None = None
    max_seconds: float | None = None
    check_every: int | None = None
    backend: str | None = None
    stop_early: bool | None = None
    eigval_cutoff: float | None = None

    def __post_init__(self) -> None:
        _positive_int("draws", self.draws, 1)
        _positive_int("tune", self.tune, 0)
        _positive_int("chains", self.chains, 1)
        _positive_int("cores", self.cores, 1)
        _positive_int("max_treedepth", self.max_treedepth, 1)
        if self.sampler is not None and self.sampler not in SAMPLERS:
            raise ValueError(f"sampler must be one of {', '.join(map(repr, SAMPLERS))}, got "
                             f"{self.sampler!r}.")
        if self.mass_matrix is not None and self.mass_matrix not in MASS_MATRICES:
            raise ValueError(f"mass_matrix must be one of "
                             f"{', '.join(map(repr, MASS_MATRICES))}, got {self.mass_matrix!r}.")
        if self.backend is not None and self.backend not in BACKENDS:
            raise ValueError(f"backend must be one of {', '.join(map(repr, BACKENDS))}, got "
                             f"{self.backend!r}.")
        if self.target_accept is not None and not 0 < self.target_accept < 1:
            raise ValueError(f"target_accept must be in (0, 1), got {self.target_accept!r}.")
        for name in ("fast", "adaptive", "stop_early"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, bool | np.bool_):
                raise TypeError(f"{name} must be True or False, got {value!r}.")
        _positive_int("max_draws", self.max_draws, 1)
        _positive_int("check_every", self.check_every, 1)
        if self.target_rhat is not None and not self.target_rhat > 1:
            raise ValueError(f"target_rhat must be > 1, got {self.target_rhat!r}.")
        if self.target_ess is not None and not self.target_ess > 0:
            raise ValueError(f"target_ess must be > 0, got {self.target_ess!r}.")
        if self.max_seconds is not None and not self.max_seconds > 0:
            raise ValueError(f"max_seconds must be > 0, got {self.max_seconds!r}.")
        if self.eigval_cutoff is not None and (
                isinstance(self.eigval_cutoff, bool) or not isinstance(
                    self.eigval_cutoff, int | float | np.integer | np.floating)
                or not self.eigval_cutoff > 1):
            raise ValueError(f"eigval_cutoff must be a number > 1, got "
                             f"{self.eigval_cutoff!r}.")

    @classmethod
    def coerce(cls, value: SamplerOptions | Mapping[str, Any] | str | None) -> SamplerOptions:
        """Accept an options object, a dict of its fields, ``"fast"`` or ``"full"`` (the
        defaults), or None."""
        if value is None or (isinstance(value, str) and value == "full"):
            return cls()
        if isinstance(value, str) and value == "fast":
            return cls(fast=True)
        if isinstance(value, cls):
            return value
        if isinstance(value, Mapping):
            unknown = sorted(set(value) - {f.name for f in dataclasses.fields(cls)})
            if unknown:
                raise TypeError(f"sampling: unknown option(s) {', '.join(unknown)}; options "
                                f"are {', '.join(f.name for f in dataclasses.fields(cls))}.")
            return cls(**dict(value))
        raise TypeError(f"sampling must be a SamplerOptions, a dict, 'fast' or 'full', got "
                        f"{value!r}.")

    def resolve(self, **model_defaults: Any) -> SamplerOptions:
        """Fill every ``None`` from ``model_defaults``, then from :data:`SAMPLER_DEFAULTS`,
        and apply the fast-mode caps (no adaptive extension in fast mode); the result has no
        ``None`` except ``cores``, ``max_seconds`` and ``check_every``. ``max_draws`` is
        raised to ``draws`` when it is smaller."""
        unknown = sorted(set(model_defaults) - set(SAMPLER_DEFAULTS))
        if unknown:
            raise TypeError(f"unknown sampler default(s) {', '.join(unknown)}.")
        values = {}
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if v is None:
                v = model_defaults.get(f.name, SAMPLER_DEFAULTS[f.name])
            values[f.name] = v
        if values["fast"]:
            for k, cap in FAST_SETTINGS.items():
                values[k] = min(values[k], cap)
            values["adaptive"] = False
        values["max_draws"] = max(values["max_draws"], values["draws"])
        if values["mass_matrix"] != "diag" and values["sampler"] != "nutpie":
            raise ValueError(f"mass_matrix={values['mass_matrix']!r} needs sampler='nutpie', "
                             f"got sampler={values['sampler']!r}.")
        if values["backend"] != "numba" and values["sampler"] != "nutpie":
            raise ValueError(f"backend={values['backend']!r} needs sampler='nutpie', "
                             f"got sampler={values['sampler']!r}.")
        return type(self)(**values)

    def replace(self, **changes: Any) -> SamplerOptions:
        """A copy with some fields changed."""
        return dataclasses.replace(self, **changes)

    def as_dict(self) -> dict[str, Any]:
        """The fields as a dict (for provenance attributes)."""
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class ResamplingOptions:
    """How classical resampling runs.

    Parameters
    ----------
    n_resamples : int
        Bootstrap resamples and Bayesian-bootstrap draws (0: point estimates only).
    unit : {"both", "systems", "items"}
        What the classical bootstrap resamples (Deutsch et al. 2021: Boot-Both,
        Boot-Systems, Boot-Inputs; their "inputs" are bayesmeta's items); the correlation
        package's Bayesian bootstrap always weighs both, the WMT functions' weighs the same
        unit (their default is ``"systems"`` where a statistic compares systems on the same
        items, see :mod:`bayesmeta.wmt._common`).
    n_permutations : int
        Permutations per test (0: no tests).
    scheme : {"both", "systems", "items", "both-rowcol", "pairs", "pairs-items"}
        What a permutation swaps (see :mod:`bayesmeta.correlation.resampling`); ``"pairs"``
        swaps pairwise comparisons one by one (MTME's, anti-conservative) and
        ``"pairs-items"`` all comparisons of an item together, for tie-calibrated accuracy
        only (:mod:`bayesmeta.wmt.ties`).
    pvalue : {"plus-one", "raw"}
        ``(b + 1) / (n + 1)`` (Phipson & Smyth 2010) or ``b / n`` (paper 001's code).
    n_jobs : int, optional
        Worker threads (default: the usable cores).
    dirichlet : {"flat", "unbiased"}
        The Bayesian bootstrap's weights over the k resampled units: ``"flat"`` (Rubin
        1981, every concentration 1) or ``"unbiased"`` (every concentration
        :math:`(k - 2) / k`, so that the posterior variance of a weighted mean is the
        unbiased :math:`s^2 / k`; flat below 3 units, and flat when systems and items are
        weighed jointly). Default ``"flat"``; the WMT functions default to ``"unbiased"``
        (:mod:`bayesmeta.wmt._common`).

    Examples
    --------
    >>> import bayesmeta as bm
    >>> bm.ResamplingOptions.coerce({"n_resamples": 200}).n_resamples
    200
    """

    n_resamples: int = 1000
    unit: str = "both"
    n_permutations: int = 1000
    scheme: str = "both"
    pvalue: str = "plus-one"
    n_jobs: int | None = field(default=None)
    dirichlet: str = "flat"

    def __post_init__(self) -> None:
        for name in ("unit", "scheme"):
            old = getattr(self, name)
            if old in _RENAMED:
                warnings.warn(f"{name}={old!r} is now spelled {name}={_RENAMED[old]!r} (the "
                              f"data dim is 'item'); the old name goes in the next release.",
                              FutureWarning, stacklevel=4)
                object.__setattr__(self, name, _RENAMED[old])
        _positive_int("n_resamples", self.n_resamples, 0)
        _positive_int("n_permutations", self.n_permutations, 0)
        _positive_int("n_jobs", self.n_jobs, 1)
        for name, value, allowed in (("unit", self.unit, UNITS), ("scheme", self.scheme, SCHEMES),
                                     ("pvalue", self.pvalue, PVALUES),
                                     ("dirichlet", self.dirichlet, DIRICHLETS)):
            if value not in allowed:
                raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}, got "
                                 f"{value!r}.")

    @classmethod
    def coerce(cls, value: ResamplingOptions | Mapping[str, Any] | None) -> ResamplingOptions:
        """Accept an options object, a dict of its fields, or None (the defaults)."""
        if value is None:
            return cls()
        if isinstance(value, cls):
            return value
        if isinstance(value, Mapping):
            unknown = sorted(set(value) - {f.name for f in dataclasses.fields(cls)})
            if unknown:
                raise TypeError(f"resampling: unknown option(s) {', '.join(unknown)}; options "
                                f"are {', '.join(f.name for f in dataclasses.fields(cls))}.")
            return cls(**dict(value))
        raise TypeError(f"resampling must be a ResamplingOptions or a dict, got {value!r}.")

    def replace(self, **changes: Any) -> ResamplingOptions:
        """A copy with some fields changed."""
        return dataclasses.replace(self, **changes)

    def as_dict(self) -> dict[str, Any]:
        """The fields as a dict (for provenance attributes)."""
        return dataclasses.asdict(self)


def resolve_seed(random_seed: int | None) -> int:
    """The seed to use: ``random_seed`` itself, or, when None, one drawn from the operating
    system's entropy (record it: the same seed gives the same numbers).

    Examples
    --------
    >>> from bayesmeta.options import resolve_seed
    >>> resolve_seed(7)
    7
    >>> 0 <= resolve_seed(None) < 2**31
    True
    """
    if random_seed is None:
        return int(np.random.SeedSequence().entropy % (2**31 - 1))
    if isinstance(random_seed, bool) or not isinstance(random_seed, int | np.integer):
        raise TypeError(f"random_seed must be an int or None, got {type(random_seed).__name__}.")
    if random_seed < 0:
        raise ValueError(f"random_seed must be >= 0, got {random_seed}.")
    return int(random_seed)


__all__ = [
    "FAST_SETTINGS",
    "SAMPLER_DEFAULTS",
    "ResamplingOptions",
    "SamplerOptions",
    "resolve_seed",
]
