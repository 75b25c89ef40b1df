"""bm.compare: PSIS-LOO model comparison (closed forms and clear errors)."""

from __future__ import annotations

import warnings
from types import SimpleNamespace

import numpy as np
import pytest

import bayesmeta as bm

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
    tab = res.summary() if hasattr(res, "summary") else res
    assert list(tab.index) == ["a", "b"]
    assert tab.loc["a", "elpd_loo"] == pytest.approx(a.sum(), abs=1e-8)
    assert tab.loc["b", "elpd_diff"] == pytest.approx(0.2 * 50, abs=1e-8)
    assert tab.loc["a", "p_loo"] == pytest.approx(0.0, abs=1e-8)


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
