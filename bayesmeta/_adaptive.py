"""The adaptive run length behind :func:`bayesmeta.sampling.sample`: sample until the
reported quantities meet the R-hat and ESS targets, in checks at fixed draw counts.

:class:`AdaptiveRun` starts nutpie once in the background with ``max_draws`` draws per
chain and pauses it at the first check where the targets are met. Several models sampled
one after the other (the rater model's traits) must keep the same number of draws: a run
that met its targets later than the others is thinned to the shortest length, with the
targets re-checked on the thinned trace (:meth:`AdaptiveRun.thin_to`, sampling on where
they fail), or, where that cannot be done, the others are resumed to its length
(:meth:`AdaptiveRun.extend`). Checks fall at ``draws`` draws per chain, then every
``check_every`` draws or 10% more draws, whichever is more: the same seed gives the same
draws and the same stop.

nutpie, ArviZ and pyarrow are imported inside the functions, never at import time.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from bayesmeta.convergence import SamplingCapWarning
from bayesmeta.options import EARLY_STOP_FACTOR, SamplerOptions
from bayesmeta.summaries import diagnose

#: What a model reports: posterior variable names, or a callable that takes a trace
#: (``arviz.InferenceData`` with a ``posterior`` group) and returns an ``xarray.Dataset`` of
#: the reported quantities with dims ``(chain, draw, ...)`` (derived ones included).
Reported = Sequence[str] | Callable[[Any], Any]


def reported_dataset(idata: Any, reported: Reported) -> Any:
    """The reported quantities of a trace as an ``xarray.Dataset``."""
    if callable(reported):
        return reported(idata)
    return idata.posterior[list(reported)]


def targets_met(idata: Any, reported: Reported, opts: SamplerOptions
                ) -> tuple[bool, float, float, float]:
    """Whether the reported quantities of ``idata`` meet the targets, and their worst
    R-hat, bulk ESS and tail ESS (constant quantities are skipped)."""
    diag = diagnose(reported_dataset(idata, reported))
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


def _chain_counts(raw: Any) -> tuple[list[int], list[int], Any, Any]:
    """Per chain: finished tuning draws and posterior draws of a raw nutpie trace, and the
    draws and sampler statistics so far."""
    draws, stats = raw.get_arrow_trace()
    tuned, kept = [], []
    for d, st in zip(draws, stats, strict=True):
        n_tune = int(np.asarray(st.column("tuning").to_numpy()).sum()) \
            if d.num_rows else 0
        tuned.append(n_tune)
        kept.append(int(d.num_rows) - n_tune)
    return tuned, kept, draws, stats


def thin_index(n: int, keep: int) -> np.ndarray:
    """``keep`` evenly spaced positions out of ``n`` draws, the first and the last
    included (``keep <= n``): how a run that met its targets at ``n`` draws per chain is
    thinned to the common length of runs sampled together."""
    if not 1 <= keep <= n:
        raise ValueError(f"cannot keep {keep} of {n} draws")
    return np.round(np.linspace(0, n - 1, keep)).astype(int)


def _thinned(idata: Any, n: int, keep: int) -> Any:
    """The first ``n`` draws of every group of ``idata`` thinned to ``keep`` (the draw
    coordinate renumbered 0..keep-1)."""
    idx = thin_index(n, keep)
    for group in ("posterior", "sample_stats"):
        if group in idata.groups():
            ds = getattr(idata, group).isel(draw=idx)
            setattr(idata, group, ds.assign_coords(draw=np.arange(keep)))
    return idata


def _partial_idata(draw_batches: Sequence[Any], tuned: Sequence[int], n: int,
                   coords: Any) -> Any:
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


#: Longest sleep between two looks at the chains of an adaptive run (seconds).
MAX_WAIT = 2.0


class AdaptiveRun:
    """One nutpie run of ``max_draws`` draws per chain in the background, paused at the
    first check where the reported quantities meet the targets.

    Use: ``run = AdaptiveRun(compiled, opts, kwargs, reported)``, ``run.run()`` (optionally
    ``run.thin_to(n, upto)`` to a shorter common length, or ``run.extend(n)`` to a longer
    one), then ``idata, stop, seconds = run.finish()``. The seconds of warm-up and
    sampling count only the time the chains ran, not the time the run was paused.
    """

    def __init__(self, compiled: Any, opts: SamplerOptions, kwargs: dict[str, Any],
                 reported: Reported) -> None:
        import nutpie

        self.compiled, self.opts, self.reported = compiled, opts, reported
        self.block = int(opts.check_every or max(50, opts.draws // 5))
        self.checkpoint = int(opts.draws)
        self.worst: tuple[float, float, float] = (np.nan, np.nan, np.nan)
        self.stop, self.used = "max_draws", int(opts.max_draws)
        self.keep: int | None = None  # draws kept per chain when thinned (thin_to)
        self.sampled: int | None = None  # draws per chain sampled before thinning
        self._upto = int(opts.max_draws)  # the last check of the current run() call
        self.finished = False
        self._active = 0.0           # seconds the chains ran (not paused)
        self._t_warm: float | None = None  # active seconds at the end of warm-up
        self._rate, self._last_done, self._last_t = 0.0, 0, 0.0
        self._poll_seconds = 0.0  # what the last look at the chains cost
        self._t0 = time.perf_counter()
        self.sampler = nutpie.sample(compiled, draws=opts.max_draws, blocking=False,
                                     **kwargs)

    # --------------------------------------------------------------- bookkeeping
    def _elapsed(self) -> float:
        return self._active + (time.perf_counter() - self._t0)

    def _overtime(self) -> bool:
        return self.opts.max_seconds is not None and self._elapsed() > self.opts.max_seconds

    def _poll(self) -> tuple[list[int], list[int], Any, int, int]:
        """Tuning and kept draws per chain, the draws so far, the kept draws of the slowest
        chain and its total draws (warm-up included); updates the draw rate."""
        t0 = time.perf_counter()
        self.finished = _is_finished(self.sampler)
        tuned, kept, batches, _ = _chain_counts(self.sampler._sampler.inspect())
        self._poll_seconds = time.perf_counter() - t0
        started = len(kept) == self.opts.chains
        reached = min(kept) if started else 0
        done = min(t + k for t, k in zip(tuned, kept, strict=True)) if started else 0
        now = self._elapsed()
        if done > self._last_done and now > self._last_t:
            self._rate = (done - self._last_done) / (now - self._last_t)
        self._last_done, self._last_t = done, now
        if self._t_warm is None and started and all(t >= self.opts.tune for t in tuned):
            # the slowest chain ended its warm-up ``reached`` draws ago
            self._t_warm = max(0.0, now - (reached / self._rate if self._rate > 0 else 0.0))
        return tuned, kept, batches, reached, done

    def _sleep_until(self, target: int, done: int) -> None:
        """Sleep until the slowest chain is expected at ``target`` kept draws, but at most
        :data:`MAX_WAIT` seconds: the rate is first measured in the warm-up's opening
        iterations, which are far slower than the rest, and the chains run on while this
        sleeps (with a 60-second cap, until stop 46, they ran some 3,800 draws per chain
        where 1,331 were needed, in a minute of a coherence fit of 80 seconds). A look
        copies the trace so far, so the cap grows to ten times what the last one cost. The
        checks fall at fixed draw counts, so how often this looks changes the time, not
        the draws."""
        left = self.opts.tune + target - done
        wait = 1.0 if self._rate <= 0 else 1.05 * left / self._rate
        if self.opts.max_seconds is not None:
            wait = min(wait, self.opts.max_seconds - self._elapsed())
        time.sleep(float(np.clip(wait, 0.2, max(MAX_WAIT, 10 * self._poll_seconds))))

    def _pause(self) -> None:
        if not self.finished:
            self.sampler.pause()
        self._active += time.perf_counter() - self._t0

    def _resume(self) -> None:
        if not self.finished:
            self.sampler.resume()
        self._t0 = time.perf_counter()

    # --------------------------------------------------------------- running
    def _next(self, checkpoint: int) -> int:
        return min(checkpoint + max(self.block, checkpoint // 10), int(self.opts.max_draws),
                   self._upto)

    def run(self, upto: int | None = None) -> int:
        """Sample until the first check where the targets are met (or a cap), then pause.
        Returns the draws per chain to keep.

        ``upto`` (below ``max_draws``) makes the check at ``upto`` draws the last one: if
        it fails too, the run pauses there with the stop reason ``"upto"``, which is for
        :meth:`thin_to` only (it never reaches a trace)."""
        opts = self.opts
        self._upto = int(opts.max_draws) if upto is None else min(int(upto),
                                                                  int(opts.max_draws))
        try:
            while True:
                tuned, _kept, batches, reached, done = self._poll()
                while (reached >= self.checkpoint and self.checkpoint < opts.max_draws
                       and not self._overtime()):
                    part = _partial_idata(batches, tuned, self.checkpoint,
                                          self.compiled.coords)
                    if self.keep is not None and self.keep < self.checkpoint:
                        part = _thinned(part, self.checkpoint, self.keep)
                    ok, *worst = targets_met(part, self.reported, opts)
                    self.worst = tuple(worst)
                    if ok:
                        self.stop, self.used = "targets_met", self.checkpoint
                        break
                    if (opts.stop_early and self.checkpoint > opts.draws
                            and self.projected() > EARLY_STOP_FACTOR * opts.max_draws):
                        self.stop, self.used = "projected_beyond_cap", self.checkpoint
                        break
                    if self.checkpoint >= self._upto:
                        self.stop, self.used = "upto", self.checkpoint
                        break
                    self.checkpoint = self._next(self.checkpoint)
                if self.stop in ("targets_met", "projected_beyond_cap", "upto") \
                        or self.finished:
                    break
                if self._overtime():
                    self.stop, self.used = "max_seconds", reached
                    break
                self._sleep_until(self.checkpoint, done)
        except BaseException:
            self.sampler.cancel()
            raise
        self._pause()
        return self.used

    def projected(self) -> float:
        """Draws per chain at which the worst ESS of the last check, growing in proportion
        to the draws, would reach the target (inf without a finite positive ESS)."""
        ess = min(self.worst[1], self.worst[2])
        if not np.isfinite(ess) or ess <= 0:
            return float("inf")
        return self.checkpoint * self.opts.target_ess / ess

    def thin_to(self, n: int, upto: int) -> bool:
        """Keep ``n`` evenly spaced draws per chain of a run that met its targets at more
        (:func:`thin_index`): the targets are re-checked on the thinned trace, and while
        they fail the run samples on to its next check, at most to ``upto`` draws per chain.
        Returns whether the thinned trace meets them with no divergent transition among the
        draws left out (so that the kept trace shows every divergence). If not, the run is
        left unthinned at the length where it first met its targets, for the others to be
        resumed to."""
        if self.stop != "targets_met" or self.used <= n:
            return True
        self.keep, met = int(n), self.used
        self.checkpoint, self.stop = met, "max_draws"
        self._resume()
        self.run(upto=max(met, upto))
        if self.stop == "targets_met" and not self._divergent_left_out():
            return True
        self.keep = None
        self.stop, self.used = "targets_met", met
        return False

    def _divergent_left_out(self) -> bool:
        """Whether a draw that thinning to ``keep`` leaves out was divergent."""
        tuned, _kept, _draws, stats = _chain_counts(self.sampler._sampler.inspect())
        out = np.setdiff1d(np.arange(self.used), thin_index(self.used, int(self.keep)))
        for c, st in enumerate(stats):
            div = np.asarray(st.column("diverging").to_numpy(), dtype=bool)
            if div[tuned[c]:tuned[c] + self.used][out].any():
                return True
        return False

    def extend(self, n: int) -> int:
        """Resume a paused run until every chain has ``n`` draws (or the run's cap), then
        pause again: the run keeps ``n`` draws, with its stop reason unchanged."""
        n = min(int(n), int(self.opts.max_draws))
        if n <= self.used or self.stop != "targets_met":
            return self.used
        self._resume()
        try:
            while True:
                *_, reached, done = self._poll()
                if reached >= n or self.finished:
                    break
                self._sleep_until(n, done)
        except BaseException:
            self.sampler.cancel()
            raise
        self._pause()
        self.used = n
        return n

    def finish(self, stacklevel: int = 4) -> tuple[Any, str, dict[str, float]]:
        """Stop the chains and return the trace cut at the draws kept, the stop reason and
        the seconds of warm-up and sampling; warns when a cap stopped the run first."""
        opts = self.opts
        try:
            idata = self.sampler.wait() if self.finished else self.sampler.abort()
        except BaseException:
            self.sampler.cancel()
            raise
        if self.stop == "max_draws":
            self.used = int(idata.posterior.sizes["draw"])
        if self.used < 1:
            raise RuntimeError(f"sampling stopped after max_seconds={opts.max_seconds} "
                               f"before any chain finished its warm-up; raise max_seconds.")
        keep = {"draw": slice(0, self.used)}
        for group in ("posterior", "sample_stats"):
            if group in idata.groups():
                setattr(idata, group, getattr(idata, group).isel(keep))
        for group in [g for g in idata.groups() if g.startswith("warmup")]:
            delattr(idata, group)
        self.sampled = self.used
        if self.keep is not None and self.keep < self.used:
            idata = _thinned(idata, self.used, self.keep)
            self.used = self.keep
        ok = self.stop == "targets_met"
        if not ok:
            ok, *worst = targets_met(idata, self.reported, opts)
            self.worst = tuple(worst)
            if ok and self.stop == "max_draws":
                self.stop = "targets_met"  # met exactly at the cap
        if not ok:
            w = self.worst
            if self.stop == "projected_beyond_cap":
                head = (f"Sampling stopped early, at {self.used} draws per chain: at this "
                        f"rate the worst ESS would reach {opts.target_ess:g} only after about "
                        f"{self.projected():,.0f} draws per chain, more than "
                        f"{EARLY_STOP_FACTOR:g} times the cap max_draws={opts.max_draws}, so "
                        f"the reported quantities do not meet the targets")
                advice = ("The chains disagree: look for a multimodal or poorly identified "
                          "parameter (more draws will not fix that soon), or pass "
                          "sampling={'stop_early': False} to sample to the cap")
            else:
                cap = (f"max_draws={opts.max_draws} draws per chain"
                       if self.stop == "max_draws"
                       else f"max_seconds={opts.max_seconds:g} s ({self.used} draws per "
                            f"chain)")
                head = (f"Sampling stopped at the cap of {cap} before the reported "
                        f"quantities met the targets")
                advice = ("Raise sampling={'max_draws': ...} (or max_seconds), or look for "
                          "a poorly identified parameter")
            warnings.warn(
                f"{head}: max R-hat {w[0]:.3f} (target <= {opts.target_rhat:g}), min "
                f"ESS bulk {w[1]:.0f} / tail {w[2]:.0f} (target >= {opts.target_ess:g}). "
                f"{advice}; do not report estimates that fail the checks.",
                SamplingCapWarning, stacklevel=stacklevel)
        warm = self._active if self._t_warm is None else self._t_warm
        return idata, self.stop, {"seconds_warmup": warm,
                                  "seconds_sampling": self._active - warm}
