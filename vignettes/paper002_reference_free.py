# %% [markdown]
# # Is a reference necessary? Paper 002 with intervals
#
# Sheng et al. compare reference-free metrics (`_src_hypo`: GPTScore, BARTScore, UniEval)
# with reference-based ones (`_ref_hypo`: BERTScore, ROUGE, METEOR, BLEU, MoverScore) on
# eight datasets, with numbers printed without intervals. This vignette recomputes their
# KS scores (Table 10), perturbation detection (Fig. 3), meta-correlation (Table 11),
# reference-choice distributions (App. B) and the pre-assessment study (App. C) with
# bayesmeta, each with an interval and, where the metric kinds are known, a posterior
# contrast "reference-free minus reference-based".
#
# Run it with `python vignettes/paper002_reference_free.py` (needs `BAYESMETA_DATA` with
# `nlgeval/` and, for the perturbation section, `mutt/`). Resampling counts are kept small
# so that it runs in well under a minute; raise them for a report.

# %%
import json

import numpy as np
import pandas as pd

import bayesmeta as bm
from bayesmeta.data.datasets import data_home

home = data_home()
HAVE_NLG = home is not None and (home / "nlgeval" / "origin" / "SFHOT.csv").is_file()
HAVE_MUTT = home is not None and (home / "mutt" / "pairs.csv").is_file()
if not HAVE_NLG:
    print("This vignette needs the nlgeval/ data of paper 002 (set BAYESMETA_DATA).")
if HAVE_NLG:
    sfhot = bm.datasets.nlgeval("SFHOT")
    kinds = sfhot["reference_based"].to_series().map({True: "reference-based",
                                                      False: "reference-free"})
    print(dict(sfhot.sizes))
    print(kinds.value_counts().to_string())

# %% [markdown]
# ## Metric kinds
# The reader sets the metric coordinates `reference_based` and `inputs` from the column
# suffixes; `bm.metric_kinds` applies the same rule to any dataset and takes overrides.

# %%
if HAVE_NLG:
    print(pd.DataFrame({"reference_based": sfhot["reference_based"].values,
                        "inputs": sfhot["inputs"].values},
                       index=sfhot["metric"].values).head(6).to_string())

# %% [markdown]
# ## Sample-level correlations (Eq. 3, Table 2)
# Spearman with naturalness over all 875 outputs (first reference, as the repository), and
# the question of the paper in one posterior: does the best reference-free metric beat the
# best reference-based one? The best of each kind is re-chosen in every Bayesian-bootstrap
# draw, so the selection is part of the uncertainty.

# %%
if HAVE_NLG:
    kc = bm.kind_comparison(sfhot, "naturalness", random_seed=0,
                            resampling={"n_resamples": 300})
    tab = kc.summary()
    print(tab.drop(index="correlation", level="estimand").round(3).to_string())
    print(kc.details().dropna(how="all", subset=["p_free_wins"]).to_string())

# %% [markdown]
# ## KS score between quality groups (Eq. 4, Table 3, Table 10)
# SFHOT informativeness: low < 3, moderate [3, 5), high >= 5. The classical column is the
# repository's number for the reference-free metrics. For the reference-based ones the
# repository took the KS of the list *strings* (`"[0.51, 0.66]"`, sorted alphabetically);
# bayesmeta uses the scores (first reference), so about half of those entries differ.

# %%
if HAVE_NLG:
    ks = bm.ks_score(sfhot, "informativeness", cuts="SFHOT", random_seed=1,
                     resampling={"n_resamples": 300, "n_permutations": 300})
    tab = ks.summary()
    lohi = tab.xs(("ks", "low", "high"), level=("estimand", "group", "group2")).droplevel("set")
    repo = json.loads((home / "nlgeval" / "analysis" / "ks_result.json").read_text())
    lohi = lohi.assign(repository=[repo["SFHOT"]["consistency"][f"{m}-lohi"]
                                   for m in lohi.index], kind=kinds.reindex(lohi.index).values)
    print(lohi[["kind", "classical", "classical_low", "classical_high", "mean", "hdi_low",
                "hdi_high", "repository"]].round(3).to_string())
    print(tab.loc[["ks_group_mean", "ks_free_minus_based"]].round(3).to_string())

# %% [markdown]
# ## Perturbation detection (Sec. 3.4, Fig. 3)
# Paper 002's perturbed SummEval outputs are not shared; MUTT's reorderings (`swap_chunks`,
# `shuffled`) and negations are. Two toy lexical metrics against the five references: a
# unigram F1 cannot see a reordering (ties, the paper's "far below 50%"), a bigram F1 can.

# %%
def ngram_f1(hyp, refs, n):
    def grams(text):
        w = text.lower().replace(".", "").split()
        return [tuple(w[i:i + n]) for i in range(len(w) - n + 1)]

    h = grams(hyp)
    best = 0.0
    for ref in refs:
        r = grams(ref)
        common = sum(min(h.count(g), r.count(g)) for g in set(h))
        if common:
            p, q = common / len(h), common / len(r)
            best = max(best, 2 * p * q / (p + q))
    return best


if HAVE_MUTT:
    pairs = pd.read_csv(home / "mutt" / "pairs.csv")
    refs = pd.read_csv(home / "mutt" / "references.csv")
    refs = refs[refs["n_refs"] == 5].groupby(["corruption", "pair_id"])["reference"].apply(list)
    pairs = pairs[pairs["corruption"].isin(["swap_chunks", "shuffled", "neg_subj"])]
    rows = []
    for r in pairs.itertuples():
        rr = refs.loc[(r.corruption, r.pair_id)]
        for name, n in (("unigram_f1_ref_hypo", 1), ("bigram_f1_ref_hypo", 2)):
            rows.append({"metric": name, "pair_id": r.pair_id, "corruption": r.corruption,
                         "score_original": ngram_f1(r.original, rr, n),
                         "score_corrupted": ngram_f1(r.corrupted, rr, n)})
    det = bm.perturbation_detection(pd.DataFrame(rows), random_seed=2,
                                    resampling={"n_resamples": 2000})
    tab = det.summary()
    print(tab.loc[["detection_rate", "tie_rate"]].round(3).to_string())
    print(det.details().loc["detection_difference", ["n_pairs", "p_beats"]].to_string())

# %% [markdown]
# ## Meta-correlation (Eq. 5-7, Table 11)
# USR-Topical: 5 systems (decoding strategies) with 60 outputs each. Few systems make the
# meta-correlation very uncertain; the intervals resample systems and items within systems.

# %%
if HAVE_NLG:
    usr = bm.datasets.nlgeval("usr_topic_mean")
    meta = bm.meta_correlation(usr, "Natural", random_seed=3,
                               resampling={"n_resamples": 300})
    tab = meta.summary()
    print(tab.xs("meta_correlation", level="estimand").droplevel(["system", "set"])
          .round(2).head(8).to_string())
    print(tab.loc[["meta_group_mean", "meta_free_minus_based"]].round(3).to_string())

# %% [markdown]
# ## Reference choice (App. B, Fig. 5)
# SFHOT has 1 to 154 references per output. Draw one reference per output at random and
# recompute the Spearman correlation with informativeness; the share column says how much
# of the correlation's total uncertainty (references and outputs) is due to the reference.

# %%
if HAVE_NLG:
    rc = bm.reference_choice(sfhot, "informativeness", resampling={"n_resamples": 1000},
                             random_seed=4)
    tab = rc.summary()
    tab = tab.droplevel("set")
    out = pd.DataFrame({
        "first": tab.xs(("correlation", "first"), level=("estimand", "reference"))["classical"],
        "random_mean": tab.xs(("correlation", "random"), level=("estimand", "reference"))["mean"],
        "random_sd": tab.xs(("correlation", "random"), level=("estimand", "reference"))["sd"],
        "total_sd": tab.xs("correlation_total", level="estimand").droplevel("reference")["sd"],
        "share_reference": tab.xs("share_reference_choice", level="estimand")
        .droplevel("reference")["classical"]})
    print(out.round(3).to_string())
    item3 = sfhot["score"].sel(item="3", metric="bertscore_microsoft/deberta-large-mnli_"
                               "layer_default_ref_hypo_P").values.ravel()
    print("SFHOT id=3, BERTScore-P per reference:", np.round(item3[np.isfinite(item3)], 3))

# %% [markdown]
# ## Pre-assessment: how many outputs? (Sec. 4, App. C)
# The paper finds 50 human-scored outputs enough. The planner asks it directly: the n at
# which the Spearman estimate is within 0.1 of the full-data value with probability 0.9,
# and the n at which the decision "correlation > 0.3" agrees with the full data.

# %%
if HAVE_NLG:
    free = [m for m in sfhot["metric"].values if not sfhot["reference_based"].sel(metric=m)]
    pa = bm.pre_assessment(sfhot, "informativeness", metrics=free[:4], n=(20, 50, 100),
                           n_subsets=1000, random_seed=5)
    tab = pa.summary()
    print(tab.xs("correlation", level="estimand")[["classical", "mean", "sd", "hdi_low",
                                                   "hdi_high"]].round(3).to_string())
    print(tab.loc[["n_needed", "n_needed_decision"], "classical"].to_string())
