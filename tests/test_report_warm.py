"""The report's compile-cache warm-up (bayesmeta.report._warm) and the sampler's
compile-only mode it rests on (bayesmeta.sampling.compile_only).

What is checked: inside ``compile_only`` the sampler compiles and draws nothing (the
compiled model is cached, no trace exists); the warm-up child runs each section's warm
function in order, reports a failure without stopping, and leaves no file behind; where
nothing can be warmed, no child starts. Whether warming saves time is a benchmark
(``benchmarks/results/bench_report.jsonl``), not a test.
"""

from __future__ import annotations

import operator
import os
from pathlib import Path

import numpy as np
import pytest

from bayesmeta.report._core import Context, Section
from bayesmeta.report._warm import Warmer
from bayesmeta.report.sections import SECTIONS, data_section, rater_section
from bayesmeta.sampling import CompileOnly, compile_only, is_compiled, sample, sample_together


def _toy(y: float):
    import pymc as pm

    with pm.Model() as m:
        mu = pm.Normal("mu", 0, 10)
        pm.Normal("y", mu, 1, observed=np.array([y, y + 0.5, y - 0.3]))
    return m


def test_compile_only_compiles_and_draws_nothing(monkeypatch):
    import nutpie

    m1, m2 = _toy(0.1), _toy(2.0)

    def no_sampling(*args, **kwargs):
        raise AssertionError("compile_only sampled")

    with monkeypatch.context() as mp:
        mp.setattr(nutpie, "sample", no_sampling)
        with pytest.raises(CompileOnly), compile_only():
            sample(m1, random_seed=1, reported=["mu"])
        assert is_compiled(m1)
        with pytest.raises(CompileOnly, match="2 model"), compile_only():
            sample_together([m1, m2], random_seed=[1, 2], reported=[["mu"], ["mu"]])
        assert is_compiled(m2)
    # outside the block the same model samples: mu's posterior mean is the data's mean
    # shrunk by the N(0, 10^2) prior (closed form: 3 ybar / (3 + 1/100))
    idata = sample(m2, {"draws": 500, "chains": 2, "adaptive": False}, random_seed=1)
    ybar = np.mean([2.0, 2.5, 1.7])
    assert float(idata.posterior["mu"].mean()) == pytest.approx(3 * ybar / 3.01, abs=0.15)


def _sections(*warm) -> list[Section]:
    first = Section("data", "Data and design", data_section)
    return [first, *(Section(k, k, data_section, warm=w) for k, w in warm)]


def test_warmer_runs_each_warm_function_in_order_and_reports_failures(monkeypatch):
    import pytensor

    from bayesmeta.simulate import simulate_rater

    monkeypatch.setattr(pytensor.config, "numba__cache", True)

    ds = simulate_rater(0, n_systems=3, n_items=4, n_raters=2)
    # the rater section on one rater: skipped at once (nothing to compile); truediv(ds,
    # ctx) raises TypeError in the child, which must go on to the next job
    one = ds.isel(rater=[0])
    ctx = Context(traits=[str(t) for t in ds["trait"].values], bayes="full", random_seed=1)
    w = Warmer.start(one, ctx, _sections(("rater", rater_section), ("bad", operator.truediv),
                                         ("rater2", rater_section)))
    assert w is not None and w.keys == ["rater", "bad", "rater2"]
    try:
        for key in w.keys:
            w.wait(key, timeout=120)
        assert w.done == {"rater": "done", "bad": "error TypeError", "rater2": "done"}
        assert w.wait("not-warmed") == 0.0
    finally:
        w.stop()
    assert w.proc.poll() is not None
    assert not Path(w.folder).exists()


@pytest.mark.parametrize("case", ["off", "first only", "unpicklable", "no disk cache"])
def test_no_child_where_nothing_can_be_warmed(case, monkeypatch):
    import pytensor

    # the child's kernels would be lost without the disk cache: nothing to gain
    monkeypatch.setattr(pytensor.config, "numba__cache", case != "no disk cache")
    ctx = Context(traits=["COH"], bayes="off" if case == "off" else "full")
    if case == "first only":  # the first section compiles in the report's own process
        sections = [Section("rater", "Rater", data_section, warm=rater_section)]
    else:
        def local(data, context):  # a local function: pickle cannot name it
            return None

        sections = _sections(("rater", local if case == "unpicklable" else rater_section))
    assert Warmer.start(None, ctx, sections) is None


def test_report_sections_warm_the_three_slow_models():
    warm = {s.key for s in SECTIONS if s.warm is not None}
    assert warm == {"rater", "cfa", "metric_validity"}


@pytest.mark.slow
def test_warm_child_fills_the_on_disk_cache(tmp_path, monkeypatch):
    """The child compiles the rater section's model into PyTensor's numba cache (an empty
    base_compiledir here, so every kernel file in it is the child's)."""
    from bayesmeta.simulate import simulate_rater

    monkeypatch.setenv("PYTENSOR_FLAGS", f"base_compiledir={tmp_path}")
    ds = simulate_rater(0, n_systems=3, n_items=6, n_raters=3)
    ctx = Context(traits=[str(t) for t in ds["trait"].values], bayes="full", random_seed=1)
    w = Warmer.start(ds, ctx, _sections(("rater", rater_section)))
    assert w is not None
    try:
        w.wait("rater", timeout=600)
        assert w.done == {"rater": "done"}
    finally:
        w.stop()
    kernels = list((tmp_path / "numba").glob("*.nbi"))
    assert len(kernels) > 20, os.listdir(tmp_path)
