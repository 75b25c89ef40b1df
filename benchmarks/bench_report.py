"""Time of `bayesmeta demo` and `bayesmeta report` on SummEval with `--bayes off`
(issue 21), printed beside their budgets, the report's own estimate and the load average.

Budgets: `bayesmeta demo` well under 2 minutes (README); `bayesmeta report` on the shared
SummEval files (17 systems x 100 documents, 43 metrics, 4 traits, 2 runs) under 2 minutes
with `--bayes off` and the default time budget (120 s), which lowers the default 1,000
resamples when its estimate needs it and says so on the page. Each command runs as a
subprocess, as a user types it; one JSON line per command goes to
`benchmarks/results/bench_report.jsonl`.

    PYTHONPATH=. python benchmarks/bench_report.py [--only demo|report]

The timings mean something only on an otherwise idle machine: the load average is printed
before and after each command.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUDGET_S = 120.0


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def _run(name: str, argv: list[str]) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    before = _load()
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "bayesmeta.cli", *argv], env=env,
                          capture_output=True, text=True)
    took = time.perf_counter() - start
    estimate = next((ln for ln in proc.stderr.splitlines()
                     if ln.startswith("bayesmeta report: estimated")), "")
    row = {"command": name, "argv": argv, "seconds": round(took, 1), "budget_s": BUDGET_S,
           "within_budget": took <= BUDGET_S, "exit": proc.returncode,
           "estimate": estimate.removeprefix("bayesmeta report: "),
           "load_before": before, "load_after": _load(), "cpus": os.cpu_count()}
    print(f"{name:<8} {took:7.1f} s  (budget {BUDGET_S:.0f} s; "
          f"{'within' if took <= BUDGET_S else 'OVER'}; exit {proc.returncode})")
    print(f"         {row['estimate'] or '(no estimate printed)'}")
    print(f"         load average before {before}, after {row['load_after']}")
    if proc.returncode:
        print(proc.stderr[-2000:])
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=["demo", "report"], default=None)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    import bayesmeta as bm

    folder = Path(tempfile.mkdtemp(prefix="bench_report_"))
    rows = []
    if args.only in (None, "demo"):
        rows.append(_run("demo", ["demo", "--out", str(folder / "demo.html")]))
    if args.only in (None, "report"):
        data = bm.datasets.find_summeval(download=False)
        files = [str(Path(data) / "metric_scores_long.csv"),
                 str(Path(data) / "metric_scores_long_2nd_run.csv")]
        rows.append(_run("report", ["report", *files, "--format", "metriceval", "--bayes",
                                    "off", "--seed", "1", "--out",
                                    str(folder / "summeval.html")]))
    out = ROOT / "benchmarks" / "results" / "bench_report.jsonl"
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("a", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row) + "\n")
    print(f"pages in {folder}; results appended to {out}")


if __name__ == "__main__":
    main()
