"""The report section "Metric validity: claimed trait, other traits, error" (issue 22 item 4).

Reference: ``bm.metric_variance`` called directly on a WLSMV ``bm.cfa`` fit of the same
factor model, written out here (one factor per trait, each rater's ratings as indicators),
with the same seed and resamples (classical route), and under ``bayes="full"`` the two
Bayesian routes on ``bm.cfa(..., estimator="bayes")`` with the same seed and sampler
setting: ``bm.metric_variance(..., estimator="modular")`` and ``estimator="joint"`` (slow
tier; in the fast tier the Bayesian CFA and the joint fit are stood in for). Every
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


def _full_section(monkeypatch, joint):
    """bayes="full" on the stand-in Bayesian CFA of ``test_modular`` (``bayes_cfa`` patched)
    with the joint route's fit replaced by ``joint(ds, fit, ctx)``: the section, the data,
    the stand-in fit and the syntaxes the shared CFA was asked for."""
    import importlib

    from test_modular import fake_bayes_cfa_data

    section = importlib.import_module("bayesmeta.report._validity_section")
    ds, fit, _ = fake_bayes_cfa_data()
    calls = []

    def shared(data, ctx, syntax):
        calls.append(syntax)
        return fit

    monkeypatch.setattr(section, "bayes_cfa", shared)
    monkeypatch.setattr(section, "joint_fit", joint)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep = bm.report(ds, sections=["metric_validity"], bayes="full", random_seed=SEED,
                        resampling={"n_resamples": N_RES}, progress=False)
    sec = rep.section("metric_validity")
    assert sec.status in ("ok", "partial"), sec.error or sec.reason
    assert calls and set(calls) == {_syntax(ds)}
    return sec, ds, fit


def _stand_in_joint(seed, drift=False):
    """A joint route's fit stood in for by the modular route with another seed (a result of
    the same shape), optionally with the joint model's warning that the traits moved."""
    from bayesmeta.validity._joint_checks import TraitDriftWarning

    def joint(ds, fit, ctx):
        assert ctx.random_seed == SEED and ctx.sampling == "full"
        if drift:
            warnings.warn("factor correlation coh-con moved by 0.3", TraitDriftWarning,
                          stacklevel=2)
        return bm.metric_variance(ds, fit, estimator="modular", random_seed=seed)
    return joint


def test_bayes_full_leads_with_the_joint_route_beside_the_modular_one(monkeypatch):
    """bayes="full": the joint route's posterior leads beside the classical columns (shares,
    then every estimate), the modular route's every estimate follows, each equal to its
    direct call to 1e-12, and every table says which route its columns come from."""
    sec, ds, fit = _full_section(monkeypatch, _stand_in_joint(SEED + 1))
    joint = bm.metric_variance(ds, fit, estimator="modular", random_seed=SEED + 1).summary()
    modular = bm.metric_variance(ds, fit, estimator="modular", random_seed=SEED).summary()
    shares, every, other = sec.output.tables[:3]
    assert len(every.frame) == len(joint) == len(other.frame)
    for table, ref in ((shares, joint), (every, joint), (other, modular)):
        _assert_same(table.frame, ref, POSTERIOR)
    assert not np.allclose(every.frame["mean"], other.frame["mean"], rtol=0, atol=1e-9)
    assert "Joint Bayesian route (mean, sd and HDI columns)" in " ".join(every.notes)
    assert "Modular Bayesian route (mean, sd and HDI columns)" in " ".join(other.notes)
    assert "joint Bayesian route" in every.caption and "modular" in other.caption
    assert not any("leads" in n for n in sec.output.notes)


def test_modular_route_leads_when_the_joint_traits_moved(monkeypatch):
    """A TraitDriftWarning from the joint fit: the modular route leads, the joint route's
    table follows with the warning's text, and the page says why."""
    sec, ds, fit = _full_section(monkeypatch, _stand_in_joint(SEED + 1, drift=True))
    modular = bm.metric_variance(ds, fit, estimator="modular", random_seed=SEED).summary()
    _, every, other = sec.output.tables[:3]
    _assert_same(every.frame, modular, POSTERIOR)
    assert "modular" in every.caption and "joint" in other.caption
    assert "coh-con moved by 0.3" in " ".join(other.notes)
    assert any("modular route leads" in n for n in sec.output.notes)


def test_modular_route_alone_when_the_joint_route_cannot_be_computed(monkeypatch):
    """A ValueError from the joint fit: the modular route's two tables, then the classical
    ones, and the reason on the page."""
    def joint(ds, fit, ctx):
        raise ValueError("residuals='correlated' needs every metric score observed.")

    sec, ds, fit = _full_section(monkeypatch, joint)
    modular = bm.metric_variance(ds, fit, estimator="modular", random_seed=SEED).summary()
    assert len(sec.output.tables) == 4
    _assert_same(sec.output.tables[1].frame, modular, POSTERIOR)
    assert any("joint route cannot be computed on this data: residuals='correlated' needs"
               in n for n in sec.output.notes)


def _bayes_references(ds):
    """The direct calls the section must equal: the Bayesian CFA with the report's seed and
    sampler setting, the modular route on it, and the joint route (with whether its traits
    moved: a ``TraitDriftWarning``)."""
    from bayesmeta.validity._joint_checks import TraitDriftWarning

    fit = bm.cfa(_syntax(ds), ds, estimator="bayes", sampling="full", random_seed=SEED)
    modular = bm.metric_variance(ds, fit, estimator="modular", random_seed=SEED)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        joint = bm.metric_variance(ds, fit, estimator="joint", sampling="full",
                                   random_seed=SEED)
    moved = any(issubclass(w.category, TraitDriftWarning) for w in caught)
    return fit, modular, joint, moved


def _converged(result, sampled) -> tuple[bool, str]:
    """Targets met (R-hat <= 1.01, bulk ESS >= 400 over the table's rows and, for the
    modular route, its check of the factor-score draws; no divergent transition of the run
    ``sampled``) and the line the page must show."""
    tab = result.summary()
    r_hat, ess = float(tab["r_hat"].max()), float(tab["ess_bulk"].min())
    attrs = result.idata.posterior.attrs  # the modular route's check of its score draws
    r_hat = max(r_hat, float(attrs.get("score_check_r_hat", r_hat)))
    ess = min(ess, float(attrs.get("score_check_ess_bulk", ess)))
    n_div = int(sampled.idata.sample_stats["diverging"].sum())
    return (r_hat <= 1.01 and ess >= 400 and n_div == 0,
            f"max R-hat {r_hat:.3f}, min bulk ESS {ess:.0f}, {n_div} divergent")


@pytest.mark.slow
def test_bayes_routes_equal_direct_fits():
    """bayes="full": the leading Bayesian route's posterior beside the classical columns
    (the joint route unless its traits moved, or its chains failed where the modular
    route's met the targets), then the other route's, each equal to the direct calls with
    the same seed and sampler setting, with their convergence lines; where the leading
    route fails the targets, the warning and the classical tables first."""
    from bayesmeta.validity.joint_simulate import simulate_joint_validity

    ds = simulate_joint_validity(1, n_systems=4, n_items=15, n_traits=2, n_metrics=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep = bm.report(ds, sections=["metric_validity"], bayes="full", random_seed=SEED,
                        resampling={"n_resamples": N_RES}, progress=False)
        sec = rep.section("metric_validity")
        assert sec.status == "ok", sec.error or sec.reason
        fit, modular, joint, moved = _bayes_references(ds)
        classical = bm.metric_variance(ds, bm.cfa(_syntax(ds), ds),
                                       resampling={"n_resamples": N_RES}, random_seed=SEED)
    m_ok, m_line = _converged(modular, fit)
    j_ok, j_line = _converged(joint, joint)
    joint_leads = not moved and (j_ok or not m_ok)
    (lead, ok, line, name), (other, _, other_line, other_name) = (
        ((joint, j_ok, j_line, "Joint"), (modular, m_ok, m_line, "Modular")) if joint_leads
        else ((modular, m_ok, m_line, "Modular"), (joint, j_ok, j_line, "Joint")))
    post, cl = lead.summary(), classical.summary()
    first = 0 if ok else 2  # the posterior leads only where it can be read
    shares, every, other_table = sec.output.tables[first:first + 3]
    assert len(every.frame) == len(post)  # the posterior's rows, error_variance included
    _assert_same(every.frame, post, POSTERIOR)
    _assert_same(shares.frame, post, POSTERIOR)
    _assert_same(other_table.frame, other.summary(), POSTERIOR)
    with_classical = every.frame[every.frame.index.get_level_values(0) != "error_variance"]
    _assert_same(with_classical, cl, CLASSICAL)
    # the classical tables, unchanged, after the posteriors' or before them
    _assert_same(sec.output.tables[4 if ok else 1].frame, cl, CLASSICAL)
    notes = " ".join(every.notes)
    assert "Classical two-stage route (classical columns)" in notes
    assert f"{name} Bayesian route (mean, sd and HDI columns)" in notes and line in notes
    assert f"{other_name} Bayesian route (mean, sd and HDI columns)" in \
        " ".join(other_table.notes) and other_line in " ".join(other_table.notes)
    assert ("WARNING: the" in sec.output.notes[0]) == (not ok)
    assert ("(posterior mean)" in sec.output.reading) == ok
    assert any("come from the classical route" in n for n in sec.output.notes) == (not ok)


@pytest.mark.slow
def test_bayes_routes_alone_when_the_wlsmv_fit_has_no_factor_scores():
    """A Heywood case of the WLSMV fit (no EBM scores, so no classical route): with
    bayes="full" the section shows the Bayesian routes alone, equal to the direct calls,
    and is "partial" with the reason."""
    from bayesmeta.validity.joint_simulate import simulate_joint_validity

    ds = simulate_joint_validity(2, n_systems=4, n_items=15, n_traits=2, n_metrics=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match="Heywood"):  # the premise of this test
            bm.metric_variance(ds, bm.cfa(_syntax(ds), ds), resampling={"n_resamples": 20})
        rep = bm.report(ds, sections=["metric_validity"], bayes="full", random_seed=SEED,
                        resampling={"n_resamples": N_RES}, progress=False)
        _, modular, joint, _ = _bayes_references(ds)
    sec = rep.section("metric_validity")
    assert sec.status == "partial", sec.error or sec.reason
    assert any("Heywood" in p for p in sec.partial)
    assert len(sec.output.tables) == 3  # the posteriors' tables, no classical ones
    for table in sec.output.tables[1:]:
        assert "classical" not in table.frame.columns
        ref = modular if "modular" in table.caption else joint
        _assert_same(table.frame, ref.summary(), POSTERIOR)
    assert "classical route cannot be computed" in sec.output.notes[0] or \
        "WARNING" in sec.output.notes[0]
