"""bm.compare: PSIS-LOO model comparison (closed forms and clear errors)."""

from __future__ import annotations

import warnings
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import bayesmeta as bm
from bayesmeta.summaries import check_table

az = pytest.importorskip("arviz")


def _fit(loglik: np.ndarray) -> SimpleNamespace:
    """A stand-in fit whose InferenceData holds a (chain, draw, output) log likelihood."""
    idata = az.from_dict(log_likelihood={"y": loglik},
                         posterior={"mu": np.zeros(loglik.shape[:2])})
    return SimpleNamespace(idata=idata)


def test_constant_log_likelihood_gives_the_closed_form():
    """With the same log p(y_n | theta) in every draw, the leave-one-out predictive density
    is that value: elpd_loo = sum_n log p(y_n), p_loo = 0."""
    rng = np.random.default_rng(0)
    a = rng.normal(-1.0, 0.3, 50)
    b = a - 0.2  # every output 0.2 worse
    fits = {"a": _fit(np.broadcast_to(a, (2, 200, 50)).copy()),
            "b": _fit(np.broadcast_to(b, (2, 200, 50)).copy())}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = bm.compare(fits)
    tab, det = res.summary(), res.details()
    assert list(det.index) == ["a", "b"]
    assert tab.loc[("elpd_loo", "a"), "elpd"] == pytest.approx(a.sum(), abs=1e-8)
    assert tab.loc[("elpd_diff", "b"), "elpd"] == pytest.approx(0.2 * 50, abs=1e-8)
    assert det.loc["a", "p_loo"] == pytest.approx(0.0, abs=1e-8)


def test_pareto_note_counts_the_outputs_at_fault():
    rng = np.random.default_rng(1)
    ll = rng.normal(-1.0, 0.05, (2, 200, 40))
    ll[..., 7] = rng.standard_cauchy((2, 200)) * 5 - 1  # one output with heavy tails
    fits = {"good": _fit(rng.normal(-1.0, 0.05, (2, 200, 40))), "heavy": _fit(ll)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = bm.compare(fits)
    notes = " ".join(res.notes)
    assert "heavy: Pareto k above" in notes and "of 40 outputs" in notes
    assert "good:" not in notes


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_errors_name_the_problem():
    with pytest.raises(ValueError, match="at least two"):
        bm.compare({"a": _fit(np.zeros((1, 10, 5)))})
    with pytest.raises(ValueError, match="number of outputs"):
        bm.compare({"a": _fit(np.zeros((1, 10, 5))), "b": _fit(np.zeros((1, 10, 6)))})
    with pytest.raises(TypeError, match="neither a loo"):
        bm.compare({"a": object(), "b": object()})


def test_table_shape_normal_intervals_and_round_trip(tmp_path):
    """Rows (elpd_loo, model) and (elpd_diff, model); the interval is estimate +- z * se
    (or dse) with z = Phi^-1((1 + ci_prob) / 2), a closed form of ArviZ's own columns."""
    rng = np.random.default_rng(3)
    fits = {"x": _fit(rng.normal(-1.0, 0.1, (2, 200, 30))),
            "y": _fit(rng.normal(-1.3, 0.1, (2, 200, 30)))}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = bm.compare(fits)
        res95 = bm.compare(fits, ci_prob=0.95)
    tab, det = res.summary(), res.details()
    check_table(tab)
    assert tab.index.names == ["estimand", "model"]
    assert list(tab.index) == [("elpd_loo", "x"), ("elpd_loo", "y"), ("elpd_diff", "x"),
                               ("elpd_diff", "y")]
    assert list(tab.columns) == ["elpd", "elpd_low", "elpd_high"]
    assert tab.attrs["elpd_ci_kind"].startswith("normal")
    assert tab.attrs["elpd_ci_prob"] == pytest.approx(0.94)
    for est, sd, key in (("elpd_loo", "se", "y"), ("elpd_diff", "dse", "y")):
        row = tab.loc[(est, key)]
        half = stats.norm.ppf(0.97) * det.loc[key, sd]
        assert row["elpd"] == pytest.approx(det.loc[key, est], rel=1e-12)
        assert row["elpd_low"] == pytest.approx(row["elpd"] - half, rel=1e-12)
        assert row["elpd_high"] == pytest.approx(row["elpd"] + half, rel=1e-12)
    half95 = stats.norm.ppf(0.975) * det.loc["y", "se"]
    assert res95.summary().loc[("elpd_loo", "y"), "elpd_high"] == pytest.approx(
        det.loc["y", "elpd_loo"] + half95, rel=1e-12)
    assert tab.loc[("elpd_diff", "x"), "elpd"] == 0.0  # the best model
    back = bm.load(res.save(tmp_path / "cmp.nc"))
    pd.testing.assert_frame_equal(back.summary(), tab)
    pd.testing.assert_frame_equal(back.details(), det)
    assert str(back) == str(res)
