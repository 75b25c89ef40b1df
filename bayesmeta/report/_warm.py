"""Compile the report's slow Bayesian models in a second process while the first sections
run, so that each of those sections finds its model in the on-disk compile cache.

On a machine that has never compiled them, nutpie's numba compile of the rater model, the
Bayesian ordinal CFA and the joint metric-validity model takes 40-60 s each, single
threaded (``benchmarks/results/compile_cache.jsonl``), and with a warm cache 7-15 s. The
report's first sections (reliability, correlation measures, discriminative power) leave a
core idle much of the time. :class:`Warmer` starts ``python -m bayesmeta.report._warm``
with the data and the report's settings; the child runs each warmable section's
``Section.warm`` function inside :func:`bayesmeta.sampling.compile_only` (it compiles the
section's first model and stops before sampling) and prints ``done <key>``. Before such a
section, the report waits until the child is done with it (a warm compile then costs the
report seconds), or goes on at once where the child has died or was never started.

Nothing here changes a number: compiling draws nothing, and each section still compiles
(from the cache) and samples in the report's own process. A failure of the child is
silent: the report compiles as it would without it.
"""

from __future__ import annotations

import os
import pickle
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

#: Longest wait (seconds) for the child before a section: a cold compile takes about a
#: minute, so past this the child is stuck and the section compiles itself.
MAX_WAIT = 300.0


class Warmer:
    """The child process that warms the compile cache, and what it has finished.

    ``Warmer.start(data, context, sections)`` returns None where nothing is to be warmed
    (``bayes="off"``, no section after the first has a ``warm`` function, or PyTensor
    keeps no on-disk cache) or the child cannot be started; else the running warmer.
    ``wait(key)`` blocks until the child is done with section ``key`` (or has died, or
    :data:`MAX_WAIT` passed); ``stop()`` ends the child and removes its files.
    """

    def __init__(self, proc: subprocess.Popen[bytes], keys: list[str],
                 folder: str) -> None:
        self.proc, self.keys, self.folder = proc, keys, folder
        self.done: dict[str, str] = {}  # key -> "done" or "error ..."
        self._cond = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    @classmethod
    def start(cls, data: Any, context: Any, sections: Sequence[Any]) -> Warmer | None:
        """Start the child for the sections after the first that have a ``warm``
        function; None where there is nothing to gain or it cannot start."""
        if getattr(context, "bayes", "off") == "off":
            return None
        # a first section compiles at once in this process: warming it would only
        # duplicate that work
        jobs = [(s.key, s.warm) for s in sections[1:] if s.warm is not None]
        if not jobs or not _disk_cache_on() or not sys.executable \
                or getattr(sys, "frozen", False):
            return None
        folder = tempfile.mkdtemp(prefix="bayesmeta-warm-")
        try:
            payload = Path(folder) / "job.pkl"
            ctx = replace(context, fits={}, progress=False)
            payload.write_bytes(pickle.dumps((data, ctx, jobs)))
            root = Path(__file__).resolve().parents[2]
            path = [os.environ.get("PYTHONPATH", "")]
            if root.name not in ("site-packages", "dist-packages"):  # a source tree
                path.insert(0, str(root))
            env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, path))}
            with open(Path(folder) / "child.log", "wb") as log:
                # -P and cwd: the child imports this bayesmeta, not one in a working folder
                proc = subprocess.Popen(
                    [sys.executable, "-P", "-m", "bayesmeta.report._warm", str(payload),
                     str(os.getpid())],
                    stdout=subprocess.PIPE, stderr=log, stdin=subprocess.DEVNULL, env=env,
                    cwd=folder)
        except Exception:  # an optimisation only: the report runs without it
            shutil.rmtree(folder, ignore_errors=True)
            return None
        return cls(proc, [k for k, _ in jobs], folder)

    def _read(self) -> None:
        """The reader thread: records the child's ``done KEY`` / ``error KEY TYPE`` lines."""
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            word, _, rest = raw.decode(errors="replace").strip().partition(" ")
            key, _, why = rest.partition(" ")
            if word in ("done", "error"):
                with self._cond:
                    self.done[key] = word if word == "done" else f"error {why}"
                    self._cond.notify_all()
        with self._cond:
            self._cond.notify_all()

    def wait(self, key: str, timeout: float = MAX_WAIT) -> float:
        """Block until the child is done with ``key`` (or has exited, or ``timeout``);
        returns the seconds waited. After a timeout the child is stopped, so that no later
        section waits for it again."""
        t0 = time.perf_counter()
        if key not in self.keys:
            return 0.0
        with self._cond:
            while key not in self.done and self._reader.is_alive():
                left = timeout - (time.perf_counter() - t0)
                if left <= 0:
                    break
                self._cond.wait(min(left, 1.0))
            late = key not in self.done and self._reader.is_alive()
        if late:
            self.stop()
        return time.perf_counter() - t0

    def stop(self) -> None:
        """End the child (if it still runs) and remove its files."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._reader.join(5)
        if self.proc.stdout is not None and not self._reader.is_alive():
            self.proc.stdout.close()
        shutil.rmtree(self.folder, ignore_errors=True)


def _disk_cache_on() -> bool:
    """Whether PyTensor keeps its numba kernels on disk (``config.numba__cache``): without
    it the child's compile would be lost, and a section waiting for it would compile twice."""
    import pytensor

    return bool(getattr(pytensor.config, "numba__cache", False))


def _child(path: str, parent: int) -> None:
    """The child: each section's warm function inside ``compile_only``, in order; it reads
    and deletes the job file first, and stops when its parent has gone."""
    import warnings

    from bayesmeta.sampling import CompileOnly, compile_only

    warnings.simplefilter("ignore")
    job = Path(path)
    data, ctx, jobs = pickle.loads(job.read_bytes())
    job.unlink()  # a copy of the user's data: not left behind if the report is killed
    for key, warm in jobs:
        if os.getppid() != parent:
            return
        try:
            with compile_only():
                warm(data, ctx)
        except CompileOnly:
            pass
        except Exception as err:  # the section itself will say what went wrong
            print(f"error {key} {type(err).__name__}", flush=True)
            continue
        print(f"done {key}", flush=True)


if __name__ == "__main__":  # python -P -m bayesmeta.report._warm JOB.pkl PARENT_PID
    _child(sys.argv[1], int(sys.argv[2]))
