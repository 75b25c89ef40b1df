# %% [markdown]
# # Metric unit tests (MUTT, paper 004) with intervals
#
# Boag et al. (2016) test a metric the way one tests code: corrupt a sentence in a known
# way and check that the metric notices. This vignette reproduces the paper's Tables 4-6
# (pycocoevalcap's BLEU-4 and CIDEr against 5, 10 and 20 references) on the repository's
# pairs, puts intervals and posteriors on every accuracy, and repeats the human-score
# inconsistency of Sec. 5 with intervals.
#
# Run it with `python vignettes/paper004_mutt.py` (needs `BAYESMETA_DATA` with `mutt/`, and
# the `text` extra: `pip install 'bayesmeta[text]'`; Java makes the tokenizer the paper's).
# Scoring all 13,302 trials with pycocoevalcap takes about a minute the first time; the
# scores are cached (`$BAYESMETA_CACHE`), later runs take seconds.

# %%
import importlib.util
import re

import numpy as np
import pandas as pd

import bayesmeta as bm
from bayesmeta.data.datasets import data_home

home = data_home()
folder = home / "mutt" if home is not None else None
HAVE_DATA = folder is not None and (folder / "pairs.csv").is_file()
HAVE_TEXT = all(importlib.util.find_spec(m) is not None
                for m in ("lemminflect", "sacrebleu", "pycocoevalcap"))
if not (HAVE_DATA and HAVE_TEXT):
    print("Most of this vignette needs the mutt/ data (BAYESMETA_DATA) and the 'text' "
          f"extra; data found: {HAVE_DATA}, extra installed: {HAVE_TEXT}.")
if HAVE_DATA:
    pairs = pd.read_csv(folder / "pairs.csv")
    references = pd.read_csv(folder / "references.csv")
    sick = pd.read_csv(folder / "sick_corruptions.csv")
    print(pairs.groupby(["category", "corruption"]).size().rename("pairs").to_string())

# %% [markdown]
# ## The corruption generators
# Each generator transforms a sentence or refuses it with the reason, deterministically
# given the seed. On SICK's originals, we compare with SICK's own transformed sentence.

# %%
if HAVE_DATA and HAVE_TEXT:
    demo = bm.corrupt(["A man is playing a guitar on the beach.",
                       "Two dogs are running through the grass."], random_seed=0)
    print(demo[["original", "corruption", "corrupted", "reason"]].to_string(index=False))

    def norm(s):
        return re.sub(r"\s+", " ", re.sub(r"[^\w\s]", " ", str(s).lower())).strip()

    rows = []
    for kind in ("det_sub", "neg_subj", "neg_verb", "passive"):
        d = sick[sick["corruption"] == kind].reset_index(drop=True)
        out = bm.corrupt(d["sentence"], kind, random_seed=0)
        exact = sum(c is not None and norm(c) == norm(r)
                    for c, r in zip(out["corrupted"], d["corrupted"], strict=True))
        rows.append((kind, len(d), out["applied"].mean(), exact / len(d)))
    match = pd.DataFrame(rows, columns=["corruption", "SICK pairs", "coverage",
                                        "exact match with SICK"])
    print(match.round(3).to_string(index=False))

# %% [markdown]
# ## Tables 4-6: accuracy by corruption and number of references
# Scores from pycocoevalcap (the paper's implementation), the pass rules of Sec. 6
# (original wins; Difference formula within 15% for meaning-preserving corruptions).

# %%
PAPER = {
    ("neg_subj", "CIDEr"): (99.4, 99.4, 99.4), ("neg_subj", "BLEU"): (99.1, 99.7, 99.7),
    ("neg_verb", "CIDEr"): (98.5, 98.5, 98.5), ("neg_verb", "BLEU"): (97.5, 97.5, 98.0),
    ("sem_opps", "CIDEr"): (86.2, 92.7, 93.5), ("sem_opps", "BLEU"): (76.4, 85.4, 88.6),
    ("passive", "CIDEr"): (5.5, 0.8, 2.5), ("passive", "BLEU"): (7.6, 4.6, 3.8),
    ("near_syms", "CIDEr"): (32.1, 26.2, 30.0), ("near_syms", "BLEU"): (45.0, 36.7, 34.2),
    ("det_sub", "CIDEr"): (40.0, 38.5, 56.9), ("det_sub", "BLEU"): (21.5, 27.7, 53.8),
    ("double_PP", "CIDEr"): (100.0, 99.0, 100.0), ("double_PP", "BLEU"): (100.0, 100.0, 100.0),
    ("remove_prep", "CIDEr"): (69.5, 76.8, 80.8), ("remove_prep", "BLEU"): (63.5, 81.3, 87.7),
    ("swap_chunks", "CIDEr"): (91.4, 95.6, 96.6), ("swap_chunks", "BLEU"): (83.0, 91.4, 94.2),
}
PAPER_COUNTS = {"neg_subj": 337, "neg_verb": 202, "sem_opps": 246, "passive": 238,
                "near_syms": 240, "det_sub": 65, "double_PP": 500, "remove_prep": 500,
                "swap_chunks": 500}
if HAVE_DATA and HAVE_TEXT:
    from bayesmeta.text.scoring import cached_scores

    scores = cached_scores(pairs, references, ["BLEU", "CIDEr"], progress=False)
    print("\n".join(scores.attrs["notes"]))
    res = bm.metric_unit_tests(scores, rules={"shuffled": "greater"}, random_seed=0)
    acc = res.accuracy()
    counts = pairs.groupby("corruption").size()
    rows = []
    for (corr, met), printed in PAPER.items():
        ours = acc.loc[(corr, met), ["5", "10", "20"]].to_numpy(float)
        for nref, o, p in zip((5, 10, 20), ours, printed, strict=True):
            rows.append((corr, met, nref, counts[corr], PAPER_COUNTS[corr], o, p))
    side = pd.DataFrame(rows, columns=["corruption", "metric", "n_refs", "pairs",
                                       "paper pairs", "ours", "paper"])
    side["match"] = np.isclose(side["ours"].round(1), side["paper"])
    with pd.option_context("display.max_rows", 100):
        print(side.round(1).to_string(index=False))
    # Where the repository's pairs match the paper's counts the accuracies match to the
    # printed precision (sem_opps CIDEr at 5 references: see below).
    same = side[side["corruption"].isin(["sem_opps", "near_syms", "det_sub"])]
    assert same["match"].sum() == len(same) - 1
    assert side[side["corruption"] == "neg_subj"]["match"].all()

# %% [markdown]
# ## The differences, with their cause
# * neg_verb, passive, double_PP, remove_prep: the repository's run holds other pairs than
#   Tables 1-2 count (198 vs 202, 214 vs 238, 202 vs 500, 202 vs 500).
# * swap_chunks: the chunks were shuffled without a seed; our numbers equal the
#   repository's stored run (`results/coco.txt`: BLEU 80.6/90.0/94.6, CIDEr 90.4/95.4/97.4),
#   whose pairs we have; the paper's Table 6 came from another draw.
# * sem_opps, CIDEr, 5 references (85.4 vs 86.2): 18 pairs score exactly the same before
#   and after the corruption. They are ties: they fail the strict rule. In the paper's
#   Python 2 run two of them came out "higher" by floating-point summation order; the
#   printed 86.2 lies between our strict count and our count with the ties as passes.

# %%
if HAVE_DATA and HAVE_TEXT:
    diff = side[~side["match"]].copy()
    diff["ours - paper"] = diff["ours"].round(1) - diff["paper"]
    print(diff.round(1).to_string(index=False))
    det = res.details().xs("pass_rate", level="estimand")
    tie = det.loc[("sem_opps", "meaning_altering", "CIDEr", "", "5")]
    print(f"sem_opps CIDEr 5 refs: {int(tie['n_pass'])} passes, {int(tie['n_tie'])} ties of "
          f"{int(tie['n_pairs'])}: strict {tie['n_pass'] / tie['n_pairs']:.1%}, ties as passes "
          f"{(tie['n_pass'] + tie['n_tie']) / tie['n_pairs']:.1%}, paper 86.2%")
    assert tie["n_pass"] / 246 < 0.862 <= (tie["n_pass"] + tie["n_tie"]) / 246

# %% [markdown]
# ## Intervals and posteriors
# Every accuracy gets a Clopper-Pearson interval and a Beta-Binomial posterior; the
# hierarchical model pools the corruptions of one category, so det_sub (65 pairs)
# borrows strength from passive and near_syms. Paired comparisons use the same pairs.

# %%
if HAVE_DATA and HAVE_TEXT:
    tab = res.summary()
    cols = ["classical", "classical_low", "classical_high", "mean", "hdi_low", "hdi_high"]
    print(tab.xs(("det_sub", "CIDEr"), level=("corruption", "metric"))[cols].round(3)
          .to_string())
    # the number of references as a posterior contrast (paper Fig. 4: more is better here)
    refs_eff = res.details().xs("refs_effect", level="estimand")["p_beats"]
    print("P(more references pass more often), det_sub:")
    print(refs_eff.xs("det_sub", level="corruption").round(3).to_string())
    cmp = tab.xs("pass_rate_difference", level="estimand")
    print("BLEU - CIDEr (paired), by corruption at 5 references:")
    five = cmp[cmp.index.get_level_values("n_refs") == "5"]
    print(five[["classical", "hdi_low", "hdi_high"]].droplevel(["category", "metric",
                                                                "metric2"]).round(3))

# %% [markdown]
# ## Human scores within one transformation (Sec. 5, Fig. 1-2)
# The paper: negated-subject pairs' relatedness is "approximately normal, centred at 3.6,
# with a standard deviation of about .45".

# %%
if HAVE_DATA:
    hum = bm.human_inconsistency(sick, random_seed=0)
    print(hum)
    neg = hum.summary().loc[("mean", "neg_subj")]
    sd = hum.summary().loc[("sd", "neg_subj")]
    assert round(neg["classical"], 1) == 3.6 and round(sd["classical"], 2) == 0.45
