"""Freeze ppi-python's prediction-powered means and intervals on the shared alt-test data.

Run in a throwaway venv with ppi-python installed (it is a test-only reference, never a
runtime dependency of bayesmeta):

    python -m venv --system-site-packages /tmp/ppivenv
    /tmp/ppivenv/bin/pip install ppi-python
    BAYESMETA_DATA=/work/shared/data /tmp/ppivenv/bin/python tests/results/make_ppi_reference.py

Writes tests/results/ppi_reference.json. The data preparation is written out here in plain
Python (it does not import bayesmeta), and ``tests/test_ppi.py`` repeats it:

* the human score of an instance is the mean of the labels of the annotators who labelled it;
* the instances are sorted by id; every fifth one (position 0, 5, 10, ...) keeps its human
  score (the labelled set), the others are treated as unlabelled (judge scores only);
* SummEval is restricted to one trait (instances ``<doc>__<system>__<trait>``); per-system
  values use the system in the id, and a difference of two systems combines the two
  independent per-system intervals: ``theta_a - theta_b +- z * sqrt(se_a^2 + se_b^2)`` with
  ``se = (upper - lower) / (2 z)`` of ppi-python's interval (ppi-python has no function for a
  difference of two independent means).
"""

from __future__ import annotations

import json
import os
from importlib.metadata import version
from pathlib import Path

import numpy as np
from ppi_py import classical_mean_ci, ppi_mean_ci, ppi_mean_pointestimate
from scipy.stats import norm

ALPHA = 0.06  # bayesmeta's default ci_prob = 0.94
DATASETS = {"summeval": "coherence", "10k_prompts": None, "cebab_stars": None}
SYSTEM_JUDGE = "gpt-4o"
SYSTEM_PAIRS = [("M11", "M12"), ("M8", "M23"), ("M0", "M17")]
OUT = Path(__file__).with_name("ppi_reference.json")


def prepare(folder: Path, trait: str | None) -> tuple[list[str], dict, dict]:
    human = json.loads((folder / "human_annotations.json").read_text())
    llm = json.loads((folder / "llm_annotations.json").read_text())
    items = sorted({i for labs in human.values() for i in labs})
    if trait is not None:
        items = [i for i in items if i.endswith("__" + trait)]
    y = {}
    for i in items:
        labs = [float(labs[i]) for labs in human.values() if i in labs]
        y[i] = sum(labs) / len(labs)
    return items, y, llm


def split(items: list[str]) -> tuple[list[str], list[str]]:
    return [i for k, i in enumerate(items) if k % 5 == 0], \
        [i for k, i in enumerate(items) if k % 5 != 0]


def ppi_values(Y: np.ndarray, Yhat: np.ndarray, Yhat_u: np.ndarray) -> dict:
    out = {"n_labelled": int(Y.size), "n_unlabelled": int(Yhat_u.size)}
    for tag, lam in (("tuned", None), ("ppi", 1.0)):
        lo, hi = ppi_mean_ci(Y, Yhat, Yhat_u, alpha=ALPHA, lam=lam)
        out[f"{tag}_estimate"] = float(np.squeeze(ppi_mean_pointestimate(Y, Yhat, Yhat_u,
                                                                         lam=lam)))
        out[f"{tag}_low"], out[f"{tag}_high"] = float(np.squeeze(lo)), float(np.squeeze(hi))
    lo, hi = classical_mean_ci(Y, alpha=ALPHA)
    out["classical_low"], out["classical_high"] = float(np.squeeze(lo)), float(np.squeeze(hi))
    return out


def main() -> None:
    home = Path(os.environ.get("BAYESMETA_DATA", "/work/shared/data")) / "alttest"
    z = float(norm.ppf(1 - ALPHA / 2))
    ref: dict = {
        "source": "ppi-python " + version("ppi-python") + ": ppi_mean_pointestimate(Y, "
                  "Yhat, Yhat_unlabeled, lam=lam), ppi_mean_ci(Y, Yhat, Yhat_unlabeled, "
                  f"alpha={ALPHA}, lam=lam) with lam=None (power-tuned, 'tuned_*') and "
                  f"lam=1 ('ppi_*'), classical_mean_ci(Y, alpha={ALPHA}); made by "
                  "tests/results/make_ppi_reference.py",
        "alpha": ALPHA, "split": "sorted instance ids, every fifth (k % 5 == 0) labelled",
        "means": [], "systems": [], "differences": []}
    for name, trait in DATASETS.items():
        items, y, llm = prepare(home / name, trait)
        lab, unl = split(items)
        for judge, scores in llm.items():
            Y = np.array([y[i] for i in lab])
            Yhat = np.array([float(scores[i]) for i in lab])
            Yhat_u = np.array([float(scores[i]) for i in unl])
            ref["means"].append({"dataset": name, "trait": trait, "judge": judge,
                                 **ppi_values(Y, Yhat, Yhat_u)})
    items, y, llm = prepare(home / "summeval", "coherence")
    lab, unl = split(items)
    scores = llm[SYSTEM_JUDGE]
    per = {}
    for s in sorted({i.split("__")[1] for i in items}):
        ls = [i for i in lab if i.split("__")[1] == s]
        us = [i for i in unl if i.split("__")[1] == s]
        vals = ppi_values(np.array([y[i] for i in ls]), np.array([float(scores[i]) for i in ls]),
                          np.array([float(scores[i]) for i in us]))
        per[s] = vals
        ref["systems"].append({"dataset": "summeval", "trait": "coherence",
                               "judge": SYSTEM_JUDGE, "system": s, **vals})
    for a, b in SYSTEM_PAIRS:
        row = {"system": a, "system2": b}
        for tag in ("tuned", "ppi"):
            se_a = (per[a][f"{tag}_high"] - per[a][f"{tag}_low"]) / (2 * z)
            se_b = (per[b][f"{tag}_high"] - per[b][f"{tag}_low"]) / (2 * z)
            d = per[a][f"{tag}_estimate"] - per[b][f"{tag}_estimate"]
            half = z * float(np.sqrt(se_a**2 + se_b**2))
            row.update({f"{tag}_estimate": d, f"{tag}_low": d - half, f"{tag}_high": d + half})
        ref["differences"].append(row)
    OUT.write_text(json.dumps(ref, indent=1) + "\n")
    print(f"wrote {OUT}: {len(ref['means'])} means, {len(ref['systems'])} systems")


if __name__ == "__main__":
    main()
