"""Time of the report's agreement section on SummEval (issue 24, item 4): the 3 experts alone
(one panel: the coefficients of the ordinal level) and the experts with the alt-test
authors' 6 LLM judges (two panels: also the paired panel differences), 4 traits x 1,700
outputs, the report's default 1,000 resamples. Needs the shared data (BAYESMETA_DATA).

Run: ``nice python benchmarks/bench_report_agreement.py``; appends JSON lines to
``benchmarks/results/report_agreement.jsonl`` with the load average beside each time (the
project's machine is shared, so times are upper bounds)."""

from __future__ import annotations

import json
import os
import time
import warnings
from pathlib import Path

import bayesmeta as bm
from bayesmeta.data.datasets import data_home

OUT = Path(__file__).parent / "results" / "report_agreement.jsonl"


def main() -> None:
    folder = data_home() / "alttest" / "summeval"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        data = bm.datasets.summeval()
        ann = bm.read_annotations(folder / "human_annotations.json",
                                  folder / "llm_annotations.json")
        joined = bm.add_judges(data, ann)
    for name, ds in (("experts", data), ("experts_and_judges", joined)):
        load = os.getloadavg()
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rep = bm.report(ds, sections=["agreement"], random_seed=1, progress=False,
                            budget=0)
        sec = rep.section("agreement")
        row = {"data": name, "status": sec.status, "seconds": time.perf_counter() - start,
               "section_seconds": sec.seconds, "n_resamples": rep.context.n_resamples,
               "tables": len(sec.output.tables) if sec.output else 0,
               "reading": sec.output.reading if sec.output else sec.reason,
               "loadavg_before": load, "loadavg_after": os.getloadavg()}
        print(json.dumps(row), flush=True)
        with open(OUT, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
