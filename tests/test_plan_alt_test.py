"""Planning the alt-test (issue 23, item 6): bm.plan_alt_test against bm.alt_test on the same
simulated datasets (exact), against the exact expectations of the paper's generative model
(enumeration over all label combinations; Monte Carlo tolerance stated), and its large-sample
limit."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

import bayesmeta as bm
from bayesmeta.judges.plan import _alt_test_batch, _model, simulate_alt_test_labels

PRIORS = [0.4, 0.3, 0.2, 0.1]


def exact_advantage(priors, noise_h: float, noise_f: float, m: int) -> tuple[float, float]:
    """E[W^f] and E[W^h] for one annotator left out, enumerating the gold label, the judge's,
    the left-out annotator's and the m - 1 others' labels (the paper's App. C model)."""
    pi = np.asarray(priors, dtype=float)
    k = pi.size

    def p_label(c: int, g: int, eta: float) -> float:
        return eta * pi[c] + (1 - eta) * (c == g)

    e_wf = e_wh = 0.0
    for g in range(k):
        for x in range(k):
            for yj in range(k):
                for rest in itertools.product(range(k), repeat=m - 1):
                    pr = pi[g] * p_label(x, g, noise_f) * p_label(yj, g, noise_h)
                    for c in rest:
                        pr *= p_label(c, g, noise_h)
                    s_f = np.mean([x == c for c in rest])
                    s_h = np.mean([yj == c for c in rest])
                    e_wf += pr * (s_f >= s_h)
                    e_wh += pr * (s_h >= s_f)
    return e_wf, e_wh


def test_batch_equals_alt_test_exactly():
    """The vectorised alt-test of the planner equals bm.alt_test (accuracy, t tests) on each
    of 20 simulated datasets: winning rate and advantage probability to 1e-12."""
    spec = _model({"noise_annotators": 0.3, "noise_judge": 0.35})
    y, f = simulate_alt_test_labels(spec, 20, 40, np.random.default_rng(3))
    eps = [0.0, 0.1, 0.2]
    wr, rho = _alt_test_batch(y, f, eps, 0.05)
    for d in range(20):
        human = {f"a{j}": {str(i): int(y[d, i, j]) for i in range(40)} for j in range(3)}
        llm = {"llm": {str(i): int(f[d, i]) for i in range(40)}}
        ds = bm.read_annotations(human, llm)
        for e, ep in enumerate(eps):
            tab = bm.alt_test(ds, epsilon=ep, scoring="accuracy", test="t",
                              resampling={"n_resamples": 0}).summary()
            assert tab.loc[("winning_rate", "llm", ""), "classical"] == pytest.approx(
                wr[d, e], abs=1e-12)
            assert tab.loc[("advantage_probability", "llm", ""), "classical"] == \
                pytest.approx(rho[d], abs=1e-12)


def test_advantage_probability_closed_form():
    """With fixed priors the mean advantage probability equals the exact E[W^f]; 2,000
    datasets x 100 instances: Monte Carlo sd at most sqrt(0.25 / 200,000) = 0.0011, tolerance
    0.005."""
    exact_f, _ = exact_advantage(PRIORS, 0.2, 0.4, 3)
    res = bm.plan_alt_test(model={"priors": PRIORS, "noise_annotators": 0.2,
                                  "noise_judge": 0.4},
                           n_items=[100], n_replicates=2000, random_seed=11)
    got = res.summary().loc[("advantage_probability", "100", ""), "classical"]
    assert got == pytest.approx(exact_f, abs=0.005)


@pytest.mark.parametrize("side", [-1, 1])
def test_large_sample_limit(side):
    """At 3,000 instances each annotator's t test decides by the sign of eps - E[d], with
    E[d] = E[W^h] - E[W^f] exact: eps = E[d] + 0.1 passes (probability 1 up to 200
    datasets' Monte Carlo error), eps = E[d] - 0.1 fails (the margin is 5 standard errors
    of a mean of 3,000 d's, |d| <= 1)."""
    e_wf, e_wh = exact_advantage(PRIORS, 0.2, 0.4, 3)
    eps = (e_wh - e_wf) + side * 0.1
    res = bm.plan_alt_test(model={"priors": PRIORS, "noise_annotators": 0.2,
                                  "noise_judge": 0.4},
                           n_items=[3000], epsilon=eps, n_replicates=200, random_seed=2)
    p = res.summary().loc[("pass_probability", "3000", f"{eps:g}"), "classical"]
    assert p == (1.0 if side > 0 else 0.0)


def test_pass_probability_grows_and_n_needed():
    res = bm.plan_alt_test(n_items=[30, 60, 120], epsilon=[0.1, 0.2], prob=0.8,
                           n_replicates=400, random_seed=5)
    tab = res.summary()
    p = tab.xs("pass_probability", level="estimand")["classical"]
    for ep in ("0.1", "0.2"):
        assert p[("30", ep)] < p[("120", ep)]
        grid = [n for n in ("30", "60", "120") if p[(n, ep)] >= 0.8]
        need = tab.loc[("n_needed", "", ep), "classical"]
        assert (float(grid[0]) if grid else np.nan) == pytest.approx(need, nan_ok=True)
        row = tab.loc[("pass_probability", "60", ep)]
        assert row["classical_low"] <= row["classical"] <= row["classical_high"]
        assert row["hdi_low"] <= row["mean"] <= row["hdi_high"]
    again = bm.plan_alt_test(n_items=[30, 60, 120], epsilon=[0.1, 0.2], prob=0.8,
                             n_replicates=400, random_seed=5).summary()
    pd.testing.assert_frame_equal(tab, again)


def test_bad_model():
    with pytest.raises(ValueError, match="unknown parameter"):
        bm.plan_alt_test(model={"noise": 0.3})
    with pytest.raises(ValueError, match="noise_judge"):
        bm.plan_alt_test(model={"noise_judge": 1.5})
    with pytest.raises(ValueError, match="priors"):
        bm.plan_alt_test(model={"priors": [0.5, 0.5]})
    with pytest.raises(ValueError, match="at least 30"):
        bm.plan_alt_test(n_items=[20, 50])
    with pytest.raises(ValueError, match="n_annotators"):
        bm.plan_alt_test(model={"n_annotators": 1})
