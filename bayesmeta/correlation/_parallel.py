"""Worker threads and a progress bar for the resampling engines (private)."""

from __future__ import annotations

import sys
import time


class Progress:
    """A minimal progress bar on stderr (shown when ``enabled``)."""

    def __init__(self, total: int, desc: str, enabled: bool) -> None:
        self.total, self.desc, self.enabled = total, desc, enabled
        self.done, self.start, self._last = 0, time.perf_counter(), 0.0

    def update(self, n: int = 1) -> None:
        self.done += n
        if not self.enabled:
            return
        now = time.perf_counter()
        if now - self._last < 0.5 and self.done < self.total:
            return
        self._last = now
        el = now - self.start
        eta = el / self.done * (self.total - self.done) if self.done else float("nan")
        bar = "#" * int(30 * self.done / max(self.total, 1))
        sys.stderr.write(f"\r{self.desc} [{bar:<30}] {self.done}/{self.total} "
                         f"{el:6.1f}s elapsed, {eta:6.1f}s left")
        if self.done >= self.total:
            sys.stderr.write("\n")
        sys.stderr.flush()


def parallel_map(fn, items: list, n_jobs: int | None) -> list:
    """``[fn(x) for x in items]`` on ``n_jobs`` threads (default: the usable cores), with BLAS
    limited to one thread each (threadpoolctl, a PyMC dependency, when installed): NumPy
    releases the GIL in the array work, and one BLAS thread per worker avoids oversubscribing
    the cores."""
    import os
    from concurrent.futures import ThreadPoolExecutor

    if n_jobs is None:
        try:
            n_jobs = len(os.sched_getaffinity(0))  # the cores this process may use
        except AttributeError:  # pragma: no cover - not on Linux
            n_jobs = os.cpu_count() or 1
    n_jobs = int(n_jobs)
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl comes with PyMC
        import contextlib

        limit = contextlib.nullcontext()
    else:
        limit = threadpool_limits(1, user_api="blas")
    with limit:
        if n_jobs <= 1 or len(items) <= 1:
            return [fn(x) for x in items]
        with ThreadPoolExecutor(max_workers=n_jobs) as pool:
            return list(pool.map(fn, items))


def show_progress(progress: bool | None, work: float) -> bool:
    if progress is None:
        return work > 2e9 and sys.stderr.isatty()
    return bool(progress)
