"""MTMM table and concurrent validity against scipy's correlations and direct loops."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import bayesmeta as bm

SCIPY = {
    "pearson": lambda x, y: stats.pearsonr(x, y)[0],
    "spearman": lambda x, y: stats.spearmanr(x, y)[0],
    "kendall": lambda x, y: stats.kendalltau(x, y, variant="b")[0],
}


@pytest.mark.parametrize("method", ["kendall", "spearman", "pearson"])
def test_mtmm_cells_equal_scipy(simulated, method):
    res = bm.mtmm(simulated, method=method)
    tab = res.summary()
    means = simulated["rating"].mean("item")
    for a, b in [("Rater.1.COH", "Rater.2.COH"), ("Rater.1.COH", "Rater.1.REL"),
                 ("Rater.3.FLU", "Rater.2.CON")]:
        ra, ta = a.rsplit(".", 1)
        rb, tb = b.rsplit(".", 1)
        x = means.sel(rater=ra, trait=ta).values
        y = means.sel(rater=rb, trait=tb).values
        key = f"{a} ~ {b}" if f"{a} ~ {b}" in tab.index else f"{b} ~ {a}"
        assert tab.loc[key, "classical"] == pytest.approx(SCIPY[method](x, y), abs=1e-12)


def test_mtmm_labels_and_diagonal(simulated):
    res = bm.mtmm(simulated)
    tab = res.summary()
    alpha = bm.consistency(simulated, metrics=[]).summary()["classical"]
    diag = tab[tab["cell"] == "reliability"]
    assert len(diag) == 12
    for _pair, row in diag.iterrows():
        assert row["classical"] == pytest.approx(alpha.loc[row["variable1"]], abs=1e-14)
    assert tab.loc["Rater.1.COH ~ Rater.2.COH", "cell"] == "convergent"
    assert tab.loc["Rater.1.COH ~ Rater.1.REL", "cell"] == "divergent"
    assert tab.loc["Rater.1.COH ~ Rater.2.REL", "cell"] == "heterotrait-heteromethod"
    assert len(tab) == 12 * 13 // 2
    mat = res.matrix()
    assert mat.shape == (12, 12)
    text = str(res)
    assert "*" in text and "(" in text and "[" in text


def test_mtmm_with_metric_design(simulated):
    design = {"metric01.COH": ("autoA", "COH"), "metric02.CON": ("autoA", "CON"),
              "Rater.1.COH": ("Rater.1", "COH"), "Rater.1.CON": ("Rater.1", "CON")}
    tab = bm.mtmm(simulated, design=design, method="pearson").summary()
    assert tab.loc["metric01.COH ~ Rater.1.COH", "cell"] == "convergent"
    x = simulated["score"].sel(metric="metric01.COH", run="1").mean("item").values
    y = simulated["rating"].sel(rater="Rater.1", trait="COH").mean("item").values
    assert tab.loc["metric01.COH ~ Rater.1.COH", "classical"] == pytest.approx(
        stats.pearsonr(x, y)[0], abs=1e-12)


def _loop(x: np.ndarray, y: np.ndarray, method: str, level: str) -> float:
    f = SCIPY[method]
    if level == "system":
        return f(x.mean(1), y.mean(1))
    if level == "global":
        return f(x.ravel(), y.ravel())
    if level == "item":
        return np.nanmean([f(x[s], y[s]) for s in range(x.shape[0])])
    return np.nanmean([f(x[:, i], y[:, i]) if np.ptp(y[:, i]) > 0 else np.nan
                       for i in range(x.shape[1])])


@pytest.mark.parametrize("level", ["system", "item", "input", "global"])
@pytest.mark.parametrize("method", ["kendall", "pearson"])
def test_concurrent_validity_equals_direct_loop(simulated, level, method):
    tab = bm.concurrent_validity(simulated, "REL", method=method, level=level).summary()
    human = simulated["rating"].sel(trait="REL").mean("rater").values
    for m in ("metric04.REL", "metric11.FLU"):
        x = simulated["score"].sel(metric=m, run="1").values
        assert tab.loc[m, "classical"] == pytest.approx(_loop(x, human, method, level),
                                                        abs=1e-12)


def test_concurrent_validity_criteria(simulated):
    many = bm.concurrent_validity(simulated, ["COH", "Rater.2.FLU"]).summary()
    assert many.index.names == ["criterion", "metric"]
    one = bm.concurrent_validity(simulated, "Rater.2.FLU").summary()
    np.testing.assert_allclose(many.xs("Rater.2.FLU", level="criterion")["classical"],
                               one["classical"], atol=1e-15)
    with pytest.raises(ValueError, match="unknown criterion 'XYZ'"):
        bm.concurrent_validity(simulated, "XYZ")
    with pytest.raises(ValueError, match="level must be"):
        bm.concurrent_validity(simulated, "COH", level="document")


def test_summeval_mtmm_reproduces_paper_structure(summeval):
    """MetricEval Table 1: coherence and relevance by the same expert correlate nearly as
    highly as coherence across experts; diagonal = consistency (0.96 for Expert 1 COH)."""
    tab = bm.mtmm(summeval).summary()
    assert tab.loc["Expert.1.COH ~ Expert.1.COH", "classical"] == pytest.approx(0.96, abs=5e-3)
    conv = tab[(tab["cell"] == "convergent") & (tab["trait1"] != "FLU")]["classical"]
    div = tab[tab["cell"] == "divergent"]["classical"]
    assert conv.mean() > div.mean()
    coh_rel = tab.loc[["Expert.1.COH ~ Expert.1.REL", "Expert.2.COH ~ Expert.2.REL",
                       "Expert.3.COH ~ Expert.3.REL"], "classical"]
    assert (coh_rel > 0.55).all()


# MetricEval (Xiao et al. 2023) Table 1, upper triangle row by row, order
# COH E1 E2 E3, CON E1 E2 E3, FLU E1 E2 E3, REL E1 E2 E3 (diagonal = consistency).
TABLE1 = """
0.96 0.79 0.69 0.35 0.57 0.28 0.59 0.26 0.54 0.71 0.56 0.72
0.98 0.81 0.17 0.41 0.19 0.56 0.21 0.51 0.74 0.65 0.66
0.95 0.18 0.42 0.09 0.6 0.34 0.38 0.6 0.6 0.65
0.98 0.74 0.79 0.44 0.48 0.46 0.36 0.41 0.33
0.98 0.68 0.64 0.44 0.6 0.57 0.67 0.55
0.98 0.36 0.34 0.52 0.39 0.43 0.3
0.97 0.53 0.63 0.65 0.74 0.72
0.96 0.4 0.38 0.41 0.37
0.95 0.63 0.57 0.59
0.92 0.79 0.78
0.98 0.72
0.91
"""


def test_summeval_mtmm_reproduces_metriceval_table1(summeval):
    """Table 1 was computed on rank-normalised ratings (App. A.2); every one of its 78
    cells is reproduced to the two decimals printed (tolerance 0.005 + float slack)."""
    mat = bm.mtmm(summeval, method="kendall", normalize=True).matrix()
    rows = [list(map(float, line.split())) for line in TABLE1.strip().splitlines()]
    for i, row in enumerate(rows):
        for k, expected in enumerate(row):
            got = mat.iloc[i, i + k]
            assert got == pytest.approx(expected, abs=0.0051), (mat.index[i], mat.columns[i + k])
