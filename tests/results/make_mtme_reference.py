"""Reference values of the WMT statistics from Google's mt-metrics-eval (MTME).

Run OUTSIDE the test suite, with a checkout of MTME's public source (github.com/
google-research/mt-metrics-eval; NOT the unrelated PyPI package of that name, which must never
be installed)::

    git clone https://github.com/google-research/mt-metrics-eval /tmp/mtme
    PYTHONPATH=/path/to/bayesmeta python tests/results/make_mtme_reference.py /tmp/mtme
    # one dataset into the existing file; "light" skips MTME's slowest pure-Python parts
    # (global-grouping acc23, the pairs test)
    PYTHONPATH=... python tests/results/make_mtme_reference.py /tmp/mtme summeval light

MTME's ``stats.py``/``pce.py`` need only NumPy and SciPy; ``data.py`` (``CompareMetrics``,
``AssignRanks``) imports ``apache_beam`` at the top for its optional parallel mode, which is
never used here, and ``ratings.py`` imports ``dacite`` to read rating files, also unused,
so empty stand-in modules are put in ``sys.modules`` first. No MTME data is
downloaded: the inputs are two synthetic campaigns from
:func:`bayesmeta.wmt.simulate.simulate_campaign` (seeded) and the shared SummEval data.
Writes ``tests/results/mtme_reference.json`` with MTME's commit, the library versions and,
for every value, the MTME call that produced it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import scipy
import scipy.stats

HERE = Path(__file__).resolve().parent

CAMPAIGNS = {
    "sim_da": {"n_systems": 8, "n_items": 60, "n_metrics": 6, "scale": "da",
               "random_seed": 11, "threshold": 25.0, "spa_clusters": True},
    "sim_mqm": {"n_systems": 12, "n_items": 40, "n_metrics": 5, "scale": "mqm",
                "random_seed": 12, "threshold": 5.0, "spa_clusters": False},
}
SUMMEVAL_TRAIT = "COH"
SUMMEVAL_THRESHOLD = 1.0
#: Metrics of SummEval used for the (slow) permutation significance matrices.
SUMMEVAL_SIG_METRICS = ["BertScore_f1", "BLEU", "ROUGE.1", "ROUGE.L", "S3.pyr", "BLANC"]
K = 1000          # permutations of MTME's significance tests
SIG_SEED = 1234   # np.random.seed before each CompareMetrics call (MTME uses the global stream)


def _load_mtme(root: Path):
    for name in ("apache_beam", "dacite"):  # parallel mode / rating files: unused here
        sys.modules.setdefault(name, types.ModuleType(name))
    sys.path.insert(0, str(root))
    from mt_metrics_eval import data, stats
    return data, stats


def _flat(a: np.ndarray) -> list[float]:
    """(S, I) -> MTME's packed vector: consecutive rows are systems."""
    return [float(v) for v in np.asarray(a, float).ravel()]


def _compute(x: np.ndarray, z: np.ndarray, metrics: list[str], threshold: float,
             sig_metrics: list[str], spa_clusters: bool, data, stats,
             light: bool = False) -> dict:
    """MTME's values; ``light`` skips the global-grouping acc23 and the pairs test (the
    slowest pure-Python parts of MTME)."""
    global_metrics = sig_metrics
    S = z.shape[0]
    out: dict = {"calls": {}}
    corr = {m: stats.Correlation(S, _flat(z), _flat(x[k])) for k, m in enumerate(metrics)}
    sys_corr = {m: stats.Correlation(S, [float(v) for v in z.mean(1)],
                                     [float(v) for v in x[k].mean(1)])
                for k, m in enumerate(metrics)}
    out["calls"]["spa"] = "stats.Correlation(S, gold, metric).PairwiseConfidenceError('none')"
    out["spa"] = {m: float(c.PairwiseConfidenceError("none")[0]) for m, c in corr.items()}
    for g, avg in (("item", "item"), ("system", "sys"), ("global", "none")):
        print(" ", g, flush=True)
        use = corr if g != "global" else {m: corr[m] for m in global_metrics}
        out["calls"][f"pdp_{g}"] = f"Correlation.Pearson(average_by={avg!r}, pdp=True)"
        out[f"pdp_{g}"] = {m: float(c.Pearson(avg, pdp=True)[0]) for m, c in use.items()}
        if light and g == "global":
            continue
        out["calls"][f"acc23_{g}"] = (f"stats.KendallWithTiesOpt(gold, metric, 'acc23', S, "
                                      f"{avg!r}, sample_rate=1.0) -> (acc, epsilon)")
        out[f"acc23_{g}"] = {m: [float(v) for v in stats.KendallWithTiesOpt(
            c.gold_scores, c.metric_scores, "acc23", S, avg, 1.0)[:2]]
            for m, c in use.items()}
    for g, avg in (("item", "item"), ("global", "none")):
        use = corr if g != "global" else {m: corr[m] for m in global_metrics}
        out["calls"][f"kendall_like_{g}"] = (f"Correlation.KendallLike(average_by={avg!r}, "
                                             f"thresh={threshold})")
        out[f"kendall_like_{g}"] = {m: float(c.KendallLike(avg, thresh=threshold)[0])
                                    for m, c in use.items()}
    # Williams' test for every ordered pair, system level and global (all segments)
    out["calls"]["williams_system"] = ("stats.WilliamsSigDiff(sys_corr[m1], sys_corr[m2], "
                                       "scipy.stats.pearsonr) -> (pval, r1, r2)")
    out["calls"]["williams_global"] = ("stats.WilliamsSigDiff(corr[m1], corr[m2], "
                                       "scipy.stats.pearsonr) -> (pval, r1, r2)")
    for level, cs in (("system", sys_corr), ("global", corr)):
        out[f"williams_{level}"] = {
            f"{m1}|{m2}": [float(v) for v in stats.WilliamsSigDiff(
                cs[m1], cs[m2], scipy.stats.pearsonr)]
            for m1 in metrics for m2 in metrics if m1 != m2}
    # significance matrices and MTME's clusters
    sig: dict = {}
    sub = {m: sys_corr[m] for m in sig_metrics}
    np.random.seed(SIG_SEED)  # noqa: NPY002 - MTME draws from the global stream
    ranks, mat, _, _ = data.CompareMetrics(sub, scipy.stats.pearsonr, "none", k=K)
    sig["system_pearson"] = {"call": f"np.random.seed({SIG_SEED}); data.CompareMetrics("
                                     f"sys_corr, scipy.stats.pearsonr, 'none', k={K})",
                             "order": list(ranks), "value": [ranks[m][0] for m in ranks],
                             "cluster": [int(ranks[m][1]) for m in ranks],
                             "matrix": mat.tolist()}
    sub = {m: corr[m] for m in sig_metrics}
    np.random.seed(SIG_SEED)  # noqa: NPY002 - MTME draws from the global stream
    ranks, mat, _, _ = data.CompareMetrics(sub, scipy.stats.pearsonr, "none", k=K)
    sig["global_pearson"] = {"call": f"np.random.seed({SIG_SEED}); data.CompareMetrics("
                                     f"corr, scipy.stats.pearsonr, 'none', k={K})",
                             "order": list(ranks), "value": [ranks[m][0] for m in ranks],
                             "cluster": [int(ranks[m][1]) for m in ranks],
                             "matrix": mat.tolist()}
    sub = {m: corr[m] for m in sig_metrics}
    print("  significance", flush=True)
    np.random.seed(SIG_SEED)  # noqa: NPY002 - MTME draws from the global stream
    ranks, mat, _, _ = (None, None, None, None) if light else data.CompareMetrics(
        sub, stats.KendallWithTiesOpt, "item", k=K,
        perm_test="pairs", variant="acc23", sample_rate=1.0)
    if not light:
        sig["within_item_acc_eq"] = {
            "call": f"np.random.seed({SIG_SEED}); data.CompareMetrics(corr, "
                    f"stats.KendallWithTiesOpt, 'item', k={K}, perm_test='pairs', "
                    f"variant='acc23', sample_rate=1.0)",
            "order": list(ranks), "value": [ranks[m][0] for m in ranks],
            "cluster": [int(ranks[m][1]) for m in ranks], "matrix": mat.tolist()}
    if spa_clusters:
        np.random.seed(SIG_SEED)  # noqa: NPY002 - MTME draws from the global stream
        ranks, mat, _, _ = data.CompareMetricsWithPairwiseConfidenceError(sub, k=K)
        sig["spa"] = {"call": f"np.random.seed({SIG_SEED}); data."
                              f"CompareMetricsWithPairwiseConfidenceError(corr, k={K})",
                      "order": list(ranks), "value": [ranks[m][0] for m in ranks],
                      "cluster": [int(ranks[m][1]) for m in ranks], "matrix": mat.tolist()}
    for v in sig.values():
        v["assign_ranks_0.05"] = [int(r) for r in data.AssignRanks(np.asarray(v["matrix"]),
                                                                   0.05)]
        v["assign_ranks_0.2"] = [int(r) for r in data.AssignRanks(np.asarray(v["matrix"]),
                                                                  0.2)]
    out["significance"] = sig
    return out


def main(root: str, only: str | None = None, light: bool = False) -> None:
    import bayesmeta as bm
    from bayesmeta.wmt.simulate import simulate_campaign

    data, stats = _load_mtme(Path(root))
    commit = subprocess.run(["git", "-C", root, "rev-parse", "HEAD"], capture_output=True,
                            text=True, check=True).stdout.strip()
    ref: dict = {"mtme": "github.com/google-research/mt-metrics-eval", "mtme_commit": commit,
                 "numpy": np.__version__, "scipy": scipy.__version__,
                 "bayesmeta": bm.__version__, "significance_k": K, "sig_seed": SIG_SEED,
                 "datasets": {}}
    if only:  # recompute one dataset into the existing file
        ref["datasets"] = json.loads((HERE / "mtme_reference.json").read_text())["datasets"]
    for name, cfg in CAMPAIGNS.items():
        if only and name != only:
            continue
        args = {k: cfg[k] for k in ("n_systems", "n_items", "n_metrics", "scale",
                                    "random_seed")}
        ds = simulate_campaign(**args)
        z = ds["judgment"].sel(trait="quality").transpose("system", "item").values
        x = ds["score"].isel(run=0).transpose("metric", "system", "item").values
        metrics = [str(m) for m in ds["metric"].values]
        print(name, flush=True)
        res = _compute(x, z, metrics, cfg["threshold"], metrics, cfg["spa_clusters"],
                       data, stats)
        res.update(source=f"simulate_campaign(**{args})", trait="quality",
                   threshold=cfg["threshold"], metrics=metrics,
                   fingerprint=[float(z.sum()), float(x.sum())])
        ref["datasets"][name] = res
        _write(ref)
    if only and only != "summeval":
        return
    ds = bm.datasets.summeval(download=False)
    z = ds["rating"].sel(trait=SUMMEVAL_TRAIT).mean("rater").transpose("system", "item").values
    x = ds["score"].sel(run="1").transpose("metric", "system", "item").values
    metrics = [str(m) for m in ds["metric"].values]
    print("summeval", flush=True)
    res = _compute(x, z, metrics, SUMMEVAL_THRESHOLD, SUMMEVAL_SIG_METRICS, False, data, stats,
                   light)
    res.update(source="bm.datasets.summeval(); human = rating COH mean over raters; "
                      "score run '1'", trait=SUMMEVAL_TRAIT, threshold=SUMMEVAL_THRESHOLD,
               metrics=metrics, sig_metrics=SUMMEVAL_SIG_METRICS,
               global_metrics=SUMMEVAL_SIG_METRICS,
               fingerprint=[float(z.sum()), float(x.sum())], light=light)
    ref["datasets"]["summeval"] = res
    _write(ref)


def _write(ref: dict) -> None:
    (HERE / "mtme_reference.json").write_text(json.dumps(ref, indent=1) + "\n")


if __name__ == "__main__":
    # make_mtme_reference.py MTME_ROOT [DATASET [light]]
    main(sys.argv[1] if len(sys.argv) > 1 else "/tmp/mtme",
         sys.argv[2] if len(sys.argv) > 2 else None, len(sys.argv) > 3 and sys.argv[3] == "light")
