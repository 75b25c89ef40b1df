"""The SummEval report with ``--bayes full`` (issue 19): its time per section and whether a
convergence box opens the page, through the public call with its defaults.

Runs ``bm.report(summeval, bayes="full", random_seed=SEED)`` (all sections, the default
budget of the resampling, 300 s since stop 37 (before: none), the LOO comparison left at
its default: off) and appends one JSON line per run to
``benchmarks/results/report_full.jsonl``: seconds and status per section, the total, the
load average at start and end, and the convergence problems the page would list at its
top (``Report.convergence``: MCMC rows with R-hat > 1.01 or bulk ESS < 400, and fits with
divergent transitions). The target is under 15 minutes on 2 cores (goal 10); times mean
something only when the load average beside them shows a quiet machine.

    nice python benchmarks/summeval_report_full.py [--seed 1] [--out report.html]
"""

from __future__ import annotations

import argparse
import json
import os
import time
import warnings
from pathlib import Path

import bayesmeta as bm

OUT = Path(__file__).parent / "results" / "report_full.jsonl"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, default=None, help="also save the HTML page")
    parser.add_argument("--results", type=Path, default=OUT)
    args = parser.parse_args()
    ds = bm.datasets.summeval(bm.datasets.find_summeval(download=False))
    load_start = [round(x, 2) for x in os.getloadavg()]
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep = bm.report(ds, bayes="full", random_seed=args.seed, progress=False)
    total = time.perf_counter() - t0
    if args.out is not None:
        rep.save(args.out)
    problems = rep.convergence
    rec = {"seed": args.seed, "seconds": round(total, 1), "load_start": load_start,
           "load_end": [round(x, 2) for x in os.getloadavg()],
           "sections": {r.key: {"seconds": round(r.seconds, 1), "status": r.status,
                                **({"error": r.error[:200]} if r.error else {})}
                        for r in rep.runs},
           "convergence_rows": len(problems),
           "convergence_tables": sorted({f"{s} / {t}" for s, t in
                                         zip(problems["section"], problems["table"],
                                             strict=True)}) if len(problems) else [],
           "when": time.strftime("%Y-%m-%dT%H:%M:%S")}
    args.results.parent.mkdir(parents=True, exist_ok=True)
    with args.results.open("a") as fh:
        fh.write(json.dumps(rec) + "\n")
    print(json.dumps(rec, indent=1))


if __name__ == "__main__":
    main()
