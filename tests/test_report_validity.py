"""The report section "Metric validity: claimed trait, other traits, error" (issue 22 item 4).

Reference: ``bm.metric_variance`` called directly on a WLSMV ``bm.cfa`` fit of the same
factor model, written out here (one factor per trait, each rater's ratings as indicators),
with the same seed and resamples (classical route), and ``bm.metric_variance(...,
estimator="modular")`` on ``bm.cfa(..., estimator="bayes")`` with the same seed and sampler
setting (the Bayesian route under ``bayes="full"``; slow tier, and in the fast tier with the
Bayesian CFA stood in for). Every
number the section shows must equal the reference to 1e-12 (the section only lays the
result out). The CFA is fitted once per report: the CFA section's fit is reused.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import bayesmeta as bm
from bayesmeta.report._budget import (
    MODULAR_DRAWS,
    SEC_MODULAR,
    SEC_MODULAR_FIXED,
    estimate,
)

TOL = 1e-12
SEED = 5
N_RES = 100
CLASSICAL = ["classical", "classical_low", "classical_high"]
POSTERIOR = ["mean", "sd", "hdi_low", "hdi_high", "r_hat", "ess_bulk", "ess_tail"]


def _syntax(ds) -> str:
    """The report's factor model, written independently of the report's code."""
    return "\n".join(f"{str(t).lower()} =~ " + " + ".join(f"{r}.{t}" for r in
                                                          ds["rater"].values)
                     for t in ds["trait"].values)


def _assert_same(shown, ref, columns) -> None:
    """Every row the section shows is the reference's row, each value to 1e-12."""
    assert len(shown) > 0
    assert set(shown.index) <= set(ref.index)
    for col in columns:
        got = shown[col].to_numpy(dtype=float)
        want = ref.loc[shown.index, col].to_numpy(dtype=float)
        assert np.isfinite(want).all(), col
        np.testing.assert_allclose(got, want, rtol=0, atol=TOL, err_msg=col)


@pytest.fixture(scope="module")
def demo():
    """The built-in data of `bayesmeta demo` (17 systems x 100 items x 3 raters x 4 traits x
    12 metrics)."""
    return bm.datasets.simulated()


def test_classical_section_equals_metric_variance(demo, monkeypatch):
    import bayesmeta.validity as validity

    calls = []
    real_cfa = validity.cfa

    def counting_cfa(*args, **kwargs):
        calls.append(kwargs.get("estimator", "wlsmv"))
        return real_cfa(*args, **kwargs)

    monkeypatch.setattr(validity, "cfa", counting_cfa)
    rep = bm.report(demo, sections=["cfa", "metric_validity"], random_seed=SEED,
                    resampling={"n_resamples": N_RES}, progress=False)
    assert calls == ["wlsmv"], "the CFA must be fitted once and shared by both sections"
    sec = rep.section("metric_validity")
    assert sec.status == "ok", sec.error or sec.reason
    ref = bm.metric_variance(demo, real_cfa(_syntax(demo), demo),
                             resampling={"n_resamples": N_RES}, random_seed=SEED).summary()
    shares, every = sec.output.tables
    _assert_same(every.frame, ref, CLASSICAL)
    assert len(every.frame) == len(ref)  # every estimate of metric_variance is on the page
    _assert_same(shares.frame, ref, CLASSICAL)
    assert set(shares.frame.index.get_level_values(0)) == {
        "trait_share", "other_traits_share", "error_share"}
    assert "hdi_low" not in every.frame.columns  # bayes off: no posterior columns
    # the route is said on the page, and the joint model is offered
    assert "Classical two-stage route" in shares.notes[0]
    assert any("--bayes full" in n for n in sec.output.notes)
    # the reading names the metrics with most and least error (the reference's)
    err = ref.xs("error_share", level="estimand")["classical"]
    worst, best = err.droplevel("trait").idxmax(), err.droplevel("trait").idxmin()
    first = sec.output.reading.split("\n")[0]
    assert f"most error {worst} {err.max():.2f}" in first
    assert f"least error {best} {err.min():.2f}" in first
    assert "Metric validity: claimed trait, other traits, error" in rep.html()


def test_section_skips_with_the_reason(demo):
    cases = [(demo.drop_vars("rating"), "no ordinal ratings"),
             (demo.drop_vars("score"), "no metric scores"),
             # one trait with 2 raters: the one-factor model is not identified
             (demo.sel(trait=["COH"], rater=["Rater.1", "Rater.2"]), "unidentified"),
             # 6 x 12 outputs: the WLSMV fit has a Heywood case, so no EBM factor scores
             (bm.datasets.simulated(random_seed=2, n_systems=6, n_items=12, n_metrics=4),
              "Heywood case")]
    for ds, reason in cases:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rep = bm.report(ds, sections=["metric_validity"], random_seed=SEED,
                            resampling={"n_resamples": 20}, progress=False)
        run = rep.section("metric_validity")
        assert run.status == "skipped", (reason, run.error)
        assert reason in run.reason, run.reason


def test_cost_estimate_counts_the_section(demo):
    """The classical route is small; the modular route (bayes="full") adds a term linear in
    a fixed part and CFA draws x outputs x (metrics + traits) x traits."""
    kw = {"n_resamples": 200, "n_permutations": 200}
    traits = [str(t) for t in demo["trait"].values]
    off, _ = estimate(demo, traits, ["metric_validity"], **kw)
    full, _ = estimate(demo, traits, ["metric_validity"], bayes="full", **kw)
    assert 1.0 < off["metric_validity"] < 5.0  # measured 0.3 s (200 resamples, load 5)
    n, t, m = 1700, 4, 12
    modular = SEC_MODULAR_FIXED + SEC_MODULAR * MODULAR_DRAWS * n * (m + t) * t
    assert abs(full["metric_validity"] - off["metric_validity"] - modular) < 1e-9
    fewer = demo.isel(metric=slice(0, 6))
    full6, _ = estimate(fewer, traits, ["metric_validity"], bayes="full", **kw)
    off6, _ = estimate(fewer, traits, ["metric_validity"], **kw)
    assert abs((full["metric_validity"] - off["metric_validity"])
               - (full6["metric_validity"] - off6["metric_validity"])
               - SEC_MODULAR * MODULAR_DRAWS * n * 6 * t) < 1e-9
    # without ratings the section skips and costs its fixed second only
    bare, _ = estimate(demo.drop_vars("rating"), traits, ["metric_validity"],
                       bayes="full", **kw)
    assert abs(bare["metric_validity"] - 1.0) < 1e-12  # SEC_FIXED


def test_bayes_full_shows_the_modular_route_on_the_shared_bayesian_cfa(monkeypatch):
    """bayes="full": the section sets the modular route's posterior (on the report's one
    Bayesian CFA, stood in for here) beside the classical columns, equal to the direct call
    to 1e-12, and says which route each column comes from."""
    import importlib

    from test_modular import fake_bayes_cfa_data

    section = importlib.import_module("bayesmeta.report._validity_section")

    ds, fit, _ = fake_bayes_cfa_data()
    calls = []

    def shared(data, ctx, syntax):
        calls.append(syntax)
        return fit

    monkeypatch.setattr(section, "bayes_cfa", shared)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep = bm.report(ds, sections=["metric_validity"], bayes="full", random_seed=SEED,
                        resampling={"n_resamples": N_RES}, progress=False)
    sec = rep.section("metric_validity")
    assert sec.status in ("ok", "partial"), sec.error or sec.reason
    post = bm.metric_variance(ds, fit, estimator="modular", random_seed=SEED).summary()
    every = next(t.frame for t in sec.output.tables if "hdi_low" in t.frame.columns
                 and len(t.frame) == len(post))
    _assert_same(every, post, POSTERIOR)
    notes = " ".join(sec.output.notes)
    assert "Modular Bayesian route" in notes and "estimator='joint'" in notes
    assert calls and set(calls) == {_syntax(ds)}


def _modular_reference(ds):
    """The direct calls the section must equal: the Bayesian CFA with the report's seed and
    sampler setting, then the modular route on it."""
    fit = bm.cfa(_syntax(ds), ds, estimator="bayes", sampling="full", random_seed=SEED)
    return fit, bm.metric_variance(ds, fit, estimator="modular", random_seed=SEED)


@pytest.mark.slow
def test_modular_route_equals_direct_modular_fit():
    """bayes="full": the modular route's posterior beside the classical columns, equal to
    the direct calls with the same seed and sampler setting, its convergence line and (when
    the CFA fails the targets) the warning on the page."""
    from bayesmeta.validity.joint_simulate import simulate_joint_validity

    ds = simulate_joint_validity(1, n_systems=4, n_items=15, n_traits=2, n_metrics=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep = bm.report(ds, sections=["metric_validity"], bayes="full", random_seed=SEED,
                        resampling={"n_resamples": N_RES}, progress=False)
        sec = rep.section("metric_validity")
        assert sec.status == "ok", sec.error or sec.reason
        fit, modular = _modular_reference(ds)
        classical = bm.metric_variance(ds, bm.cfa(_syntax(ds), ds),
                                       resampling={"n_resamples": N_RES}, random_seed=SEED)
    post, cl = modular.summary(), classical.summary()
    r_hat, ess = float(post["r_hat"].max()), float(post["ess_bulk"].min())
    n_div = int(fit.idata.sample_stats["diverging"].sum())
    failed = r_hat > 1.01 or ess < 400 or n_div > 0
    # the posterior leads only where it can be read; else the classical route does
    first = 2 if failed else 0
    shares, every = sec.output.tables[first:first + 2]
    assert len(every.frame) == len(post)  # the posterior's rows, error_variance included
    _assert_same(every.frame, post, POSTERIOR)
    _assert_same(shares.frame, post, POSTERIOR)
    with_classical = every.frame[every.frame.index.get_level_values(0) != "error_variance"]
    _assert_same(with_classical, cl, CLASSICAL)
    # the classical tables, unchanged, after the posterior's or before them
    _assert_same(sec.output.tables[3 - first].frame, cl, CLASSICAL)
    notes = " ".join(every.notes)
    assert "Classical two-stage route (classical columns)" in notes
    assert "Modular Bayesian route (mean, sd and HDI columns)" in notes
    line = f"max R-hat {r_hat:.3f}, min bulk ESS {ess:.0f}, {n_div} divergent"
    assert line in notes and any(line in n for n in sec.output.notes)
    assert ("WARNING: the modular route's draws" in sec.output.notes[0]) == failed
    assert ("(posterior mean)" in sec.output.reading) == (not first)
    assert any("come from the classical route" in n for n in sec.output.notes) == bool(first)


@pytest.mark.slow
def test_modular_route_alone_when_the_wlsmv_fit_has_no_factor_scores():
    """A Heywood case of the WLSMV fit (no EBM scores, so no classical route): with
    bayes="full" the section shows the modular route alone, equal to the direct calls, and
    is "partial" with the reason."""
    from bayesmeta.validity.joint_simulate import simulate_joint_validity

    ds = simulate_joint_validity(2, n_systems=4, n_items=15, n_traits=2, n_metrics=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match="Heywood"):  # the premise of this test
            bm.metric_variance(ds, bm.cfa(_syntax(ds), ds), resampling={"n_resamples": 20})
        rep = bm.report(ds, sections=["metric_validity"], bayes="full", random_seed=SEED,
                        resampling={"n_resamples": N_RES}, progress=False)
        _, modular = _modular_reference(ds)
    sec = rep.section("metric_validity")
    assert sec.status == "partial", sec.error or sec.reason
    assert any("Heywood" in p for p in sec.partial)
    assert len(sec.output.tables) == 2  # the posterior's two tables, no classical ones
    every = sec.output.tables[1].frame
    assert "classical" not in every.columns
    _assert_same(every, modular.summary(), POSTERIOR)
    assert "classical route cannot be computed" in sec.output.notes[0] or \
        "WARNING" in sec.output.notes[0]
