# %% [markdown]
# # LLM judges against the human panel
#
# Can an LLM judge replace the human annotators? The alternative annotator test (alt-test;
# Calderon, Reichart & Dror, ACL 2025) leaves one annotator out at a time and asks whether
# the judge represents the remaining annotators as well as the left-out one does, up to a
# cost-benefit margin epsilon. This vignette runs it on the five datasets of the paper
# shared in `alttest/` (the authors' files), classical and Bayesian side by side, compares
# judges with a posterior probability, shows how the decision moves with epsilon, and
# then puts the SummEval judges beside the experts as raters.
#
# Run it with `python vignettes/llm_judges.py` (needs `BAYESMETA_DATA` with `alttest/`
# and `summeval/`).

# %%
import os
import time
import warnings

import pandas as pd

import bayesmeta as bm
from bayesmeta.data.datasets import data_home

pd.set_option("display.width", 160)
SEED = 2025
home = data_home()
folder = home / "alttest" if home is not None else None
HAVE_DATA = folder is not None and (folder / "framing" / "llm_annotations.json").is_file()
# scoring and epsilon as in the paper; the text of an instance, where its id names one
SETTINGS = {"summeval": ("neg_rmse", 0.2, "__"), "mtbench": ("accuracy", 0.2, "__"),
            "10k_prompts": ("neg_rmse", 0.15, None), "cebab_stars": ("neg_rmse", 0.1, None),
            "framing": ("accuracy", 0.15, "__")}
if not HAVE_DATA:
    print("This vignette needs the alttest/ data (set BAYESMETA_DATA).")

# %% [markdown]
# ## Classical and Bayesian alt-test on every dataset and judge
# `bm.alt_test(..., estimator="bayes")` keeps the classical test (t tests, the
# Benjamini-Yekutieli step at q = 0.05, the winning rate, rho with percentile-bootstrap
# intervals) and adds a posterior: per instance, the judge wins, ties or loses against the
# left-out annotator; each annotator's win/tie/loss law gets a Dirichlet-process posterior
# (instances, or the texts that group them, are the units; annotators pooled towards the
# panel). From it: `prob_beats` = P(the judge beats annotator j by epsilon), the posterior
# winning rate and `prob_pass` = P(winning rate >= 0.5), a Bayesian false-discovery
# decision (`passes_bayes`), and the HDI of rho. Where instance ids name their text
# (`<article>__<frame>`, `<doc>__<system>__<trait>`), `group="__"` makes the texts the
# units, so that several instances of one text do not count as independent evidence.

# %%
results = {}
if HAVE_DATA:
    t0 = time.perf_counter()
    for name, (scoring, eps, sep) in SETTINGS.items():
        data = bm.read_annotations(folder / name / "human_annotations.json",
                                   folder / name / "llm_annotations.json")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # few instances: Wilcoxon, noted
            results[name] = bm.alt_test(data, epsilon=eps, scoring=scoring,
                                        estimator="bayes", group=sep, random_seed=SEED)
    seconds = time.perf_counter() - t0
    rows = []
    for name, res in results.items():
        tab, det = res.summary(), res.details()
        for judge in tab.xs("winning_rate", level="estimand").index.get_level_values(0):
            w, a = det.loc[("winning_rate", judge, "")], tab.loc[
                ("advantage_probability", judge, "")]
            rows.append({"dataset": name, "judge": judge,
                         "omega": tab.loc[("winning_rate", judge, ""), "classical"],
                         "passes": bool(w["passes"]), "prob_pass": w["prob_pass"],
                         "omega_bayes": w["winning_rate_bayes"],
                         "passes_bayes": bool(w["passes_bayes"]),
                         "rho": a["classical"], "rho_hdi": f"[{a['hdi_low']:.3f}, "
                                                           f"{a['hdi_high']:.3f}]"})
    table = pd.DataFrame(rows)
    print(table.round(3).to_string(index=False))
    print(f"\n{len(table)} dataset x judge pairs, classical + Bayesian with 1,000 "
          f"resamples and 1,000 posterior draws each: {seconds:.1f} s "
          f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")

# %% [markdown]
# The classical winning rates and rho equal the authors' published values to their two
# printed decimals (checked in `tests/test_judges.py`). The two decisions agree on most
# pairs. Where they differ, the Bayesian one passes where the classical one fails, for two
# reasons, both visible per annotator below: the Benjamini-Yekutieli step divides q by
# the harmonic number H_m (it guards against any dependence between the tests, and is
# conservative), while the Bayesian rule bounds the posterior expected false-discovery
# rate of the declared set (Newton et al. 2004), so a few near-certain wins make room for
# one at 0.9; and the posterior pools annotators towards the panel, so an annotator with
# 40-50 instances and a borderline t test borrows the panel's evidence. In the large-sample
# limit both decisions agree (`tests/test_judges_bayes.py`); with 50-100 instances per
# annotator the Bayesian decision is the more lenient of the two, and the classical one
# remains the paper's criterion.

# %%
if HAVE_DATA:
    differ = table[table["passes"] != table["passes_bayes"]]
    print(f"{len(differ)} of {len(table)} decisions differ")
    for _, row in differ.iterrows():
        det = results[row["dataset"]].details().xs("rho_judge", level="estimand")
        per = det.loc[row["judge"], ["n_instances", "p_value", "rejected", "prob_beats",
                                     "beats_bayes"]]
        m = len(per)
        h_m = sum(1 / k for k in range(1, m + 1))
        by = [0.05 * k / (m * h_m) for k in range(1, m + 1)]
        sel = per[per["beats_bayes"].astype(bool)]
        print(f"\n{row['dataset']} / {row['judge']}: BY rejects the k smallest p-values when "
              f"the k-th is below 0.05 k / (m H_m) = "
              f"{', '.join(f'{b:.4f}' for b in by[:4])}{' ...' if m > 4 else ''}; the "
              f"Bayesian rule declares {len(sel)} beaten with a posterior expected "
              f"false-discovery rate of {(1 - sel['prob_beats']).mean():.3f} (<= 0.05)")
        print(per.round(4).to_string())

# %% [markdown]
# ## Which judge? P(rho_A > rho_B)
# The paper compares judges by rho. The posterior draws of all judges share their instance
# weights, so the difference is paired: `advantage_difference` rows hold rho_A - rho_B with
# its HDI, and `details()["prob_greater"]` = P(rho_A > rho_B). Here, per dataset, the two
# judges with the highest rho.

# %%
if HAVE_DATA:
    for name, res in results.items():
        rho = res.summary().xs("advantage_probability", level="estimand")["classical"]
        a, b = rho.sort_values(ascending=False).index.get_level_values(0)[:2]
        key = ("advantage_difference", a, b)
        tab = res.summary()
        if key not in tab.index:
            key = ("advantage_difference", b, a)
        d, p = tab.loc[key], res.details().loc[key, "prob_greater"]
        print(f"{name:12s} {key[1]} - {key[2]}: {d['mean']:+.3f} "
              f"[{d['hdi_low']:+.3f}, {d['hdi_high']:+.3f}], P(rho_{key[1]} > "
              f"rho_{key[2]}) = {p:.3f}")

# %% [markdown]
# ## How the decision moves with epsilon
# Epsilon is a judgement call (0.2 for experts, 0.15 for skilled annotators, 0.1 for
# crowd-workers). The posterior does not depend on it, so one fit gives the decision at
# every margin: `epsilon_curve()` tabulates P(winning rate >= 0.5) and both winning rates,
# `plot_epsilon()` draws them.

# %%
if HAVE_DATA:
    curve = results["10k_prompts"].epsilon_curve().reset_index()
    wide = curve[curve["epsilon"].isin([0.05, 0.1, 0.15, 0.2, 0.25])].pivot(
        index="rater", columns="epsilon", values="prob_pass")
    print("P(winning rate >= 0.5), 10k_prompts:")
    print(wide.round(3).to_string())
    first = curve[curve["passes_bayes"]].groupby("rater")["epsilon"].min()
    first_c = curve[curve["passes_classical"]].groupby("rater")["epsilon"].min()
    print("\nsmallest epsilon that passes (Bayesian, classical):")
    print(pd.DataFrame({"bayes": first, "classical": first_c}).to_string())
    ax = results["10k_prompts"].plot_epsilon()
    ax.set_title("10k_prompts: the decision against epsilon")

# %% [markdown]
# ## Judges as raters
# The alt-test asks whether a judge can replace the annotators. The rater model asks how
# each rater uses the scale. `bm.add_judges` joins the six judges' SummEval scores to the
# expert ratings (the instance ids `<doc>__<system>__<trait>` name the output and the
# trait; the judges scored 16 of the 17 systems, the 17th stays missing for them), so
# that agreement and the rater model see the judges beside the experts.

# %%
HAVE_SUMMEVAL = HAVE_DATA and (folder / "summeval" / "llm_annotations.json").is_file()
if HAVE_SUMMEVAL:
    ann = bm.read_annotations(folder / "summeval" / "human_annotations.json",
                              folder / "summeval" / "llm_annotations.json")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bm.MissingDataWarning)
        se = bm.add_judges(bm.datasets.summeval(), ann)
        experts = [str(r) for r, j in zip(se["rater"].values, se["is_judge"].values,
                                          strict=True) if not j]
        judges = [str(r) for r, j in zip(se["rater"].values, se["is_judge"].values,
                                         strict=True) if j]
        panels = {"experts": experts, **{f"experts+{j}": [*experts, j] for j in judges}}
        cmp = bm.compare_agreement(se, panels=panels, random_seed=SEED)
    print(se["rating"].mean(("system", "item")).to_pandas().round(2).to_string())
    kr = cmp.summary().xs("krippendorff_ordinal", level="estimand").xs("experts",
                                                                          level="group")
    print("\nKrippendorff's ordinal alpha: experts minus experts + one judge (a positive "
          "difference: the judge lowers the panel's agreement)")
    print(kr[["classical", "hdi_low", "hdi_high"]].round(3).to_string())

# %% [markdown]
# The mean ratings show the judges' leniency on the experts' scale at a glance (mistral-v03
# rates almost everything 4 or 5). The rater model puts it on a firm footing: per rater and
# trait a severity shift and thresholds with HDIs, and P(harsher than the panel). Its MCMC
# fit on SummEval with 9 raters takes half an hour or more on two cores, so it is not run
# here; the command (and `benchmarks/judges_as_raters.py`, which records its R-hat, ESS,
# divergences and each judge's severity) is:
#
# ```python
# fit = bm.rater_bias(se, random_seed=3)
# fit.summary().xs("severity", level="estimand")      # each judge's severity with its HDI
# fit.details()[["p_harsher", "is_judge"]]
# ```

# %%
print(f"bayesmeta {bm.__version__}, seed {SEED}")
if HAVE_DATA:
    for name, res in results.items():
        print(f"{name}: {res.signature()}")
