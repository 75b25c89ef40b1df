"""Speed of the alt-test with its Bayesian version on every shared dataset and judge.

Issue 23's target: the alt-test with the Bayesian version, all shared datasets x all judges,
under 60 s on 2 cores. Runs ``bm.alt_test(estimator="bayes")`` (1,000 bootstrap resamples
and 1,000 posterior draws, the defaults) on the five datasets of ``$BAYESMETA_DATA/alttest``
with the paper's scoring and epsilon, texts as units where instance ids name their text,
and, as the peer in the same run, the classical test alone (``n_resamples=0``). Prints and
appends one JSON line per run to ``benchmarks/results/alt_test_speed.jsonl`` with the load
average (timings on a loaded machine say little).

    python benchmarks/bench_alt_test.py
"""

from __future__ import annotations

import json
import os
import time
import warnings
from pathlib import Path

import bayesmeta as bm
from bayesmeta.data.datasets import data_home

#: scoring, epsilon (the paper's) and the text of an instance (its id up to the last "__").
SETTINGS = {"summeval": ("neg_rmse", 0.2, "__"), "mtbench": ("accuracy", 0.2, "__"),
            "10k_prompts": ("neg_rmse", 0.15, None), "cebab_stars": ("neg_rmse", 0.1, None),
            "framing": ("accuracy", 0.15, "__")}
OUT = Path(__file__).parent / "results" / "alt_test_speed.jsonl"


def main() -> None:
    home = data_home()
    if home is None:
        raise SystemExit("set BAYESMETA_DATA to the shared data folder")
    datasets = {}
    for name in SETTINGS:
        folder = home / "alttest" / name
        datasets[name] = bm.read_annotations(folder / "human_annotations.json",
                                             folder / "llm_annotations.json")
    times: dict[str, float] = {}
    for label, kw in (("classical_only", {"resampling": {"n_resamples": 0}}),
                      ("with_bayes", {"estimator": "bayes"})):
        t0 = time.perf_counter()
        n_judges = 0
        for name, data in datasets.items():
            scoring, eps, sep = SETTINGS[name]
            extra = {"group": sep} if sep and label == "with_bayes" else {}
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = bm.alt_test(data, epsilon=eps, scoring=scoring, random_seed=1,
                                  **kw, **extra)
            n_judges += res.info["judges"]
        times[label] = round(time.perf_counter() - t0, 2)
    row = {"what": "alt_test, 5 shared datasets x all judges", "pairs": n_judges,
           "seconds": times, "target_s": 60, "loadavg": os.getloadavg(),
           "cpus": os.cpu_count(), "bayesmeta": bm.__version__}
    print(json.dumps(row))
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with open(OUT, "a") as fh:
        fh.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
