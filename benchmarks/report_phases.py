"""Where the first `bayesmeta report --bayes full` on a machine spends its time (issue 19):
runs the CLI with a line on stderr for every nutpie compile and every fit of the report's
own process (its run description: compile, warm-up and sampling seconds) and for every numba
compile over 2 s, with the seconds since the start.

For a first run on a new machine, empty PyTensor's base_compiledir (its numba cache) and
run a fresh copy of the package (the GHK kernels cache in its ``__pycache__``)::

    git ls-files -co --exclude-standard | grep -v __pycache__ | tar cf - -T - | tar xf - -C COPY
    cd COPY && PYTHONPATH=. PYTENSOR_FLAGS=base_compiledir=$(mktemp -d) \\
      /usr/bin/time -v python benchmarks/report_phases.py report S/metric_scores_long.csv \\
      S/metric_scores_long_2nd_run.csv --format metriceval --bayes full --seed 3 --out r.html \\
      2> LOG

    python benchmarks/report_phases.py --summarize LOG --seed 3 --note "..." \\
      >> benchmarks/results/bench_report.jsonl

``--summarize`` turns such a log (with ``load before`` / ``load after`` lines holding
``/proc/loadavg`` and the ``/usr/bin/time -v`` output) into one JSON line of
``bench_report.jsonl``. Times mean something only on an otherwise idle machine.
"""

from __future__ import annotations

import json
import re
import sys
import time
from typing import Any

T0 = time.perf_counter()


def _log(msg: str) -> None:
    print(f"[phases {time.perf_counter() - T0:7.1f}s] {msg}", file=sys.stderr, flush=True)


def _instrument() -> None:
    from numba.core import event

    depth, start = [0], [0.0]

    class Top(event.Listener):  # numba's compile events nest: time the outermost
        def on_start(self, ev: event.Event) -> None:
            if depth[0] == 0:
                start[0] = time.perf_counter()
            depth[0] += 1

        def on_end(self, ev: event.Event) -> None:
            depth[0] -= 1
            dt = time.perf_counter() - start[0]
            if depth[0] == 0 and dt > 2:
                f = getattr(ev.data.get("dispatcher"), "py_func", None)
                _log(f"numba compile {dt:.1f}s {getattr(f, '__qualname__', '?')}")

    event.register("numba:compile", Top())
    import bayesmeta.sampling as s

    compiled, finalise = s._compiled_nutpie, s._finalise

    def _compiled(model: Any, *a: Any, **k: Any) -> Any:
        out = compiled(model, *a, **k)
        if out[1]:
            _log(f"nutpie compile {out[1]:.1f}s ndim={getattr(out[0], 'n_dim', '?')}")
        return out

    def _finalised(idata: Any, *a: Any, **k: Any) -> Any:
        out = finalise(idata, *a, **k)
        _log("fit: " + s.describe_run(out))
        return out

    s._compiled_nutpie, s._finalise = _compiled, _finalised


def summarize(path: str, seed: str, note: str) -> dict:
    txt = open(path).read()

    def grab(pattern: str) -> str:
        return re.search(pattern, txt).group(1)

    sections = {m.group(1): float(m.group(2)) for m in re.finditer(
        r"^\[\d+/\d+\] (.+?): (?:done|skipped.*?|partial.*?) in ([\d.]+) s$", txt, re.M)}
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\d+):([\d.]+)", txt)
    return {"command": "report",
            "argv": ["report", "<summeval>/metric_scores_long.csv",
                     "<summeval>/metric_scores_long_2nd_run.csv", "--format", "metriceval",
                     "--bayes", "full", "--seed", seed],
            "seconds": round(int(wall.group(1)) * 60 + float(wall.group(2)), 1),
            "load_before": grab(r"load before ([\d.]+ [\d.]+ [\d.]+)"),
            "load_after": grab(r"load after ([\d.]+ [\d.]+ [\d.]+)"),
            "sections_s": sections, "convergence": grab(r"convergence: (.*)"),
            "cpu_user_s": float(grab(r"User time \(seconds\): ([\d.]+)")),
            "cpu_system_s": float(grab(r"System time \(seconds\): ([\d.]+)")),
            "max_rss_kb": int(grab(r"Maximum resident set size \(kbytes\): (\d+)")),
            "compile_s_report_process": [float(x) for x in
                                         re.findall(r"nutpie compile ([\d.]+)s", txt)],
            "note": note}


if __name__ == "__main__":
    if sys.argv[1:2] == ["--summarize"]:
        import argparse

        p = argparse.ArgumentParser()
        p.add_argument("--summarize", required=True)
        p.add_argument("--seed", required=True)
        p.add_argument("--note", default="")
        a = p.parse_args()
        print(json.dumps(summarize(a.summarize, a.seed, a.note)))
    else:
        _instrument()
        from bayesmeta.cli import main

        sys.exit(main(sys.argv[1:]))
