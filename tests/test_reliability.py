"""Classical reliability: alpha, SEM, stability, Spearman-Brown, rank normalisation.

References: pingouin (alpha), scipy (Pearson, normal quantiles), closed forms, and the
numbers MetricEval reports for SummEval (Xiao et al. 2023, Sec. 4.1.1 and Table 1)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pingouin as pg
import pytest
from scipy import stats

import bayesmeta as bm
from bayesmeta.classical.reliability import cronbach_alpha, pairwise_covariance


def _matrix(seed: int = 0, s: int = 17, j: int = 30) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.normal(size=(s, 1)) + rng.normal(size=(s, j)) * 1.5 + rng.normal(size=(1, j))


def test_alpha_equals_pingouin_complete():
    y = _matrix()
    ref = pg.cronbach_alpha(pd.DataFrame(y))[0]
    assert cronbach_alpha(y) == pytest.approx(ref, abs=1e-10)


def test_alpha_equals_pingouin_pairwise_with_missing():
    y = _matrix(1)
    rng = np.random.default_rng(2)
    y[rng.random(y.shape) < 0.1] = np.nan
    ref = pg.cronbach_alpha(pd.DataFrame(y), nan_policy="pairwise")[0]
    assert cronbach_alpha(y) == pytest.approx(ref, abs=1e-10)


def test_pairwise_covariance_matches_pandas():
    y = _matrix(4, j=6)
    y[[0, 3, 5], [1, 2, 2]] = np.nan
    np.testing.assert_allclose(pairwise_covariance(y), pd.DataFrame(y).cov().values, atol=1e-12)


def test_alpha_is_vectorised_over_leading_dims():
    ys = np.stack([_matrix(k) for k in range(3)])
    np.testing.assert_allclose(cronbach_alpha(ys), [cronbach_alpha(y) for y in ys], atol=1e-14)


def test_consistency_table_matches_direct_computation(simulated):
    res = bm.consistency(simulated)
    tab = res.summary()
    y = simulated["score"].sel(metric="metric03.FLU", run="1").values
    alpha = pg.cronbach_alpha(pd.DataFrame(y))[0]
    sd = np.std(y.mean(axis=1), ddof=1)
    assert tab.loc["metric03.FLU", "classical"] == pytest.approx(alpha, abs=1e-10)
    assert tab.loc["metric03.FLU", "sem"] == pytest.approx(sd * np.sqrt(1 - alpha), abs=1e-12)
    r = simulated["rating"].sel(rater="Rater.2", trait="REL").values
    assert tab.loc["Rater.2.REL", "classical"] == pytest.approx(
        pg.cronbach_alpha(pd.DataFrame(r))[0], abs=1e-10)
    assert set(tab["kind"]) == {"metric", "rating"}
    assert len(tab) == 12 + 12


def test_consistency_random_subsets_reproducible_and_correct(simulated):
    a = bm.consistency(simulated, n_items=20, n_subsets=30, random_seed=7,
                       ratings=False).summary()
    b = bm.consistency(simulated, n_items=20, n_subsets=30, random_seed=7,
                       ratings=False).summary()
    pd.testing.assert_frame_equal(a, b)
    # direct loop with the same subsets
    rng = np.random.default_rng(7)
    subsets = np.unique(np.sort(np.stack([rng.choice(100, 20, replace=False)
                                          for _ in range(30)]), axis=1), axis=0)
    y = simulated["score"].sel(metric="metric05.COH", run="1").values
    alphas = [pg.cronbach_alpha(pd.DataFrame(y[:, c]))[0] for c in subsets]
    assert a.loc["metric05.COH", "classical"] == pytest.approx(np.mean(alphas), abs=1e-10)
    assert a.loc["metric05.COH", "classical_low"] == pytest.approx(
        np.quantile(alphas, 0.025), abs=1e-10)
    assert (a["n_items"] == 20).all()


def test_consistency_all_items_equals_no_subsets(simulated):
    a = bm.consistency(simulated, ratings=False).summary()
    b = bm.consistency(simulated, n_items=100, ratings=False).summary()
    pd.testing.assert_frame_equal(a, b)


def test_consistency_bad_arguments(simulated):
    with pytest.raises(ValueError, match="n_items must be between 2 and the number of items"):
        bm.consistency(simulated, n_items=1)
    with pytest.raises(ValueError, match="unknown metric"):
        bm.consistency(simulated, metrics=["nope"])
    with pytest.raises(ValueError, match="run 'x' is not a label of dim 'run'"):
        bm.consistency(simulated, run="x")


def test_stability_equals_scipy_pearson(simulated):
    tab = bm.stability(simulated).summary()
    means = simulated["score"].mean("item")
    for m in ("metric11.FLU", "metric12.REL", "metric01.COH"):
        x = means.sel(metric=m, run="1").values
        y = means.sel(metric=m, run="2").values
        assert tab.loc[m, "classical"] == pytest.approx(stats.pearsonr(x, y)[0], abs=1e-12)
    r, n = tab.loc["metric11.FLU", "classical"], 17
    z = np.arctanh(r)
    half = stats.norm.ppf(0.975) / np.sqrt(n - 3)
    assert tab.loc["metric11.FLU", "classical_low"] == pytest.approx(np.tanh(z - half), abs=1e-12)


def test_stability_needs_two_runs(simulated):
    with pytest.raises(ValueError, match="at least 2 runs in dim 'run'"):
        bm.stability(simulated.isel(run=[0]))


def test_spearman_brown_and_items_needed_closed_form():
    assert bm.spearman_brown(0.5, 3) == pytest.approx(0.75, abs=1e-15)
    assert bm.spearman_brown(0.8, 1) == pytest.approx(0.8, abs=1e-15)
    need = bm.items_needed(0.7, 40, target=0.9)
    # the smallest J with SB(0.7, J / 40) >= 0.9
    assert bm.spearman_brown(0.7, need / 40) >= 0.9 - 1e-12
    assert bm.spearman_brown(0.7, (need - 1) / 40) < 0.9
    assert np.isnan(bm.items_needed(-0.1, 40))
    with pytest.raises(ValueError, match="target must be in"):
        bm.items_needed(0.5, 10, target=1.2)


def test_rank_normalize_matches_metriceval_formula():
    x = np.array([3.0, 1.0, 2.0, 2.0, 10.0, np.nan, -4.0])
    z = bm.rank_normalize(x)
    ok = ~np.isnan(x)
    ecdf = stats.rankdata(x[ok], method="max") / ok.sum()
    q = stats.norm.ppf(0.001 + 0.998 * ecdf)
    np.testing.assert_allclose(z[ok], (q - q.mean()) / q.std(), atol=1e-12)
    assert np.isnan(z[5])


# ---------------------------------------------------------------- SummEval (MetricEval)
def test_summeval_meteor_consistency_and_sem(summeval):
    tab = bm.consistency(summeval).summary()
    # MetricEval Sec. 4.1.1: "metric consistency estimate was .966 ... .38 x sqrt(1 - .966)
    # ~= .07"; the paper rounds to 3 and 2 decimals, hence the tolerances.
    assert tab.loc["METEOR", "classical"] == pytest.approx(0.966, abs=5e-4)
    assert tab.loc["METEOR", "sem"] == pytest.approx(0.07, abs=5e-3)
    assert tab.loc["METEOR", "sd_system_mean"] == pytest.approx(0.38, abs=5e-3)
    # ROUGE-4 less consistent than ROUGE-1 (0.896 vs 0.959)
    assert tab.loc["ROUGE.4", "classical"] == pytest.approx(0.896, abs=5e-4)
    assert tab.loc["ROUGE.1", "classical"] == pytest.approx(0.959, abs=5e-4)
    # MetricEval Table 1 diagonal (2 decimals)
    assert tab.loc["Expert.1.COH", "classical"] == pytest.approx(0.96, abs=5e-3)
    assert tab.loc["Expert.3.REL", "classical"] == pytest.approx(0.90, abs=5e-3)


def test_summeval_stability(summeval):
    tab = bm.stability(summeval).summary()
    for m in ("BLEU", "METEOR", "ROUGE.1", "BertScore_f1"):
        assert round(tab.loc[m, "classical"], 3) == 1.0
    # LLM metrics are less stable (MetricEval Fig. 2: G-Eval-3.5-COH about .97)
    assert tab.loc["G.EVAL.3.5.COH", "classical"] == pytest.approx(0.97, abs=0.01)
    assert tab.loc["G.EVAL.3.5.COH", "classical"] < tab.loc["G.EVAL.4.COH", "classical"]
