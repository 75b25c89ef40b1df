"""Judges as raters (issue 23 item 4): the rater model on SummEval with its six LLM judges.

Joins the judges' scores of ``$BAYESMETA_DATA/alttest/summeval`` to the expert ratings of
``bm.datasets.summeval()`` with ``bm.add_judges`` (3 experts + 6 judges = 9 raters; the
judges did not score the 17th system, whose outputs stay missing for them), fits
``bm.rater_bias`` with the package defaults (the defaults of issue 19) and appends one JSON
line to ``benchmarks/results/judges_as_raters.jsonl``: R-hat, bulk and tail ESS over every
reported parameter, divergences, draws, seconds, the load average, and each judge's
severity per trait (posterior mean and HDI) with P(harsher than the panel).

Expensive (about 30+ minutes on an idle 2-core machine; longer under load):

    nice python benchmarks/judges_as_raters.py --seed 3 [--save /tmp/judges_rater.nc]
        [--sampling '{"target_accept": 0.9}'] [--parameterization NAME]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import bayesmeta as bm
from bayesmeta.data.datasets import data_home

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_bayes_defaults import _load, record

OUT = Path(__file__).resolve().parent / "results" / "judges_as_raters.jsonl"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--save", type=Path, default=None)
    ap.add_argument("--sampling", type=json.loads, default=None,
                    help="sampling= of the fit as JSON (default: the function's defaults)")
    ap.add_argument("--parameterization", default=None,
                    help="rater_bias(parameterization=...) (default: the function's)")
    args = ap.parse_args()
    folder = data_home() / "alttest" / "summeval"
    ann = bm.read_annotations(folder / "human_annotations.json",
                              folder / "llm_annotations.json")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bm.MissingDataWarning)
        data = bm.add_judges(bm.datasets.summeval(), ann)
    load_start = _load()
    t0 = time.perf_counter()
    extra = {} if args.parameterization is None else {
        "parameterization": args.parameterization}
    res = bm.rater_bias(data, random_seed=args.seed, sampling=args.sampling, **extra)
    seconds = time.perf_counter() - t0
    line = record("rater", res, args.seed, seconds, load_start, "judges_as_raters")
    tab, det = res.summary(), res.details()
    sev = tab.xs("severity", level="estimand")
    judges = [str(r) for r, j in zip(data["rater"].values, data["is_judge"].values,
                                     strict=True) if j]
    line["sampling"] = args.sampling or "defaults"
    line["parameterization"] = args.parameterization or "default"
    line["raters"] = [str(r) for r in data["rater"].values]
    line["judges"] = judges
    line["severity"] = {
        f"{r}/{t}": {"mean": float(sev.loc[(r, t, ""), "mean"]),
                     "hdi": [float(sev.loc[(r, t, ""), "hdi_low"]),
                             float(sev.loc[(r, t, ""), "hdi_high"])],
                     "p_harsher": float(det.loc[("severity", r, t, ""), "p_harsher"])}
        for (r, t, _c) in sev.index}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "a") as fh:
        fh.write(json.dumps(line) + "\n")
    print(json.dumps(line, indent=1))
    if args.save is not None:
        res.save(args.save)


if __name__ == "__main__":
    main()
