"""Speed of metric unit tests from texts (issue 14): all corruptions of the 2,489 SICK
sentences of ``mutt/sick_corruptions.csv``, scored with sacrebleu's sentence BLEU and chrF
against 5 references each, then tested (pass rates, posteriors, paired comparisons).

Target: under 60 s on 2 cores. The peer, timed in the same run on the same (candidate,
references) pairs, is the plain loop a user would write with sacrebleu's convenience
functions (``sacrebleu.sentence_bleu`` / ``sentence_chrf`` per pair); the ratio says what
generation, bookkeeping and the unit-test statistics cost on top of scoring.

References: a SICK sentence that is the original of a pair in ``mutt/pairs.csv`` gets
that pair's 5 references (``references.csv``); the others get 5 references drawn (seed 0)
from the same pool. Only the timing depends on them.

Run: ``BAYESMETA_DATA=/path/to/shared/data python benchmarks/bench_mutt.py``.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

import bayesmeta as bm
from bayesmeta.data.datasets import data_home


def main() -> None:
    folder = data_home() / "mutt"
    sick = pd.read_csv(folder / "sick_corruptions.csv")
    pairs = pd.read_csv(folder / "pairs.csv")
    refs = pd.read_csv(folder / "references.csv")
    five = refs[refs["n_refs"] == 5].merge(pairs[["corruption", "pair_id", "original"]],
                                           on=["corruption", "pair_id"])
    by_text = five.groupby("original")["reference"].agg(list).to_dict()
    pool = five["reference"].to_numpy()
    rng = np.random.default_rng(0)
    texts = sick["sentence"].tolist()
    references = [by_text[t][:5] if t in by_text else list(rng.choice(pool, 5, replace=False))
                  for t in texts]
    matched = float(np.mean([t in by_text for t in texts]))

    t0, c0 = time.perf_counter(), time.process_time()
    table = bm.corrupt(texts, random_seed=0)
    t_gen, c_gen = time.perf_counter() - t0, time.process_time() - c0
    from bayesmeta.text import corruptions

    corruptions._tagged.cache_clear()  # the full run below starts cold
    corruptions._parsed.cache_clear()
    t0, c0 = time.perf_counter(), time.process_time()
    res = bm.metric_unit_tests(texts, metrics=["bleu", "chrf"], references=references,
                               random_seed=0, progress=False)
    t_all, c_all = time.perf_counter() - t0, time.process_time() - c0

    import sacrebleu

    applied = table[table["applied"]]
    pos = {tid: k for k, tid in enumerate(range(len(texts)))}
    work = [(c, references[pos[i]]) for c, i in zip(applied["corrupted"], applied["text_id"],
                                                     strict=True)]
    work += [(t, r) for t, r in zip(texts, references, strict=True)]
    t0, c0 = time.perf_counter(), time.process_time()
    for c, r in work:
        sacrebleu.sentence_bleu(c, r)
        sacrebleu.sentence_chrf(c, r)
    t_peer, c_peer = time.perf_counter() - t0, time.process_time() - c0

    n_trials = int(res.details().xs("pass_rate", level="estimand")["n_pairs"].sum())
    print(f"SICK sentences: {len(texts)} ({matched:.0%} with the references of their MUTT "
          "pair), 5 references each")
    print(f"corruptions generated: {int(table['applied'].sum())} of {len(table)} "
          f"(text x corruption); trials scored: {n_trials} (2 metrics)")
    print("                                    wall s   CPU s")
    print(f"bm.corrupt alone                   {t_gen:7.1f} {c_gen:7.1f}")
    print(f"bm.metric_unit_tests (all steps)   {t_all:7.1f} {c_all:7.1f}   (target < 60 s)")
    print(f"peer: sacrebleu loop, {len(work)} texts {t_peer:7.1f} {c_peer:7.1f}")
    print(f"ratio bayesmeta / peer: wall {t_all / t_peer:.2f}, CPU {c_all / c_peer:.2f}")
    print("(wall times on a shared machine include waiting for a core; CPU time does not)")


if __name__ == "__main__":
    main()
