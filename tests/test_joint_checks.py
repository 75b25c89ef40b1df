"""The joint model's trait-drift check (``bayesmeta.validity._joint_checks``): its factor
correlations against the ratings' own, from the CFA passed or a WLSMV fit of the
ratings."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from bayesmeta.validity.joint_simulate import simulate_joint_validity

TWO = ("coh =~ Rater.1.COH + Rater.2.COH + Rater.3.COH\n"
       "con =~ Rater.1.CON + Rater.2.CON + Rater.3.CON")


def _draws(mean: float, sd: float, n: int = 4000) -> xr.DataArray:
    """Factor-correlation draws (chain, draw, trait, trait2) of two traits whose
    off-diagonal has exactly this mean and sd."""
    z = np.random.default_rng(0).standard_normal(n)
    r = mean + sd * (z - z.mean()) / z.std()
    corr = np.ones((2, n // 2, 2, 2))
    corr[..., 0, 1] = corr[..., 1, 0] = r.reshape(2, -1)
    return xr.DataArray(corr, dims=("chain", "draw", "trait", "trait2"),
                        coords={"trait": ["coh", "con"], "trait2": ["coh", "con"]})


def _ref(estimate: float, se: float) -> pd.DataFrame:
    idx = pd.MultiIndex.from_tuples([("coh", "con")], names=["lhs", "rhs"])
    return pd.DataFrame({"estimate": [estimate], "se": [se]}, index=idx)


@pytest.mark.parametrize(("joint", "joint_sd", "ref", "ref_se", "moved"), [
    (0.96, 0.01, 0.68, 0.03, True),    # SummEval's con-flu: 0.28 apart, 8.9 se
    (0.80, 0.02, 0.68, 0.03, False),   # 0.12 apart: under DRIFT_ABS
    (0.90, 0.10, 0.70, 0.05, False),   # 0.20 apart but 1.8 se: noise at this size
    (0.40, 0.02, 0.68, 0.03, True),    # moved down counts too
])
def test_trait_drift_flags_a_correlation_moved_far_and_surely(joint, joint_sd, ref, ref_se,
                                                              moved):
    from bayesmeta.validity._joint_checks import drift_message, trait_drift

    d = trait_drift(_draws(joint, joint_sd), _ref(ref, ref_se))
    row = d.loc[("coh", "con")]
    assert row["joint"] == pytest.approx(joint, abs=1e-9)
    assert row["joint_sd"] == pytest.approx(joint_sd, rel=1e-3)
    assert row["difference"] == pytest.approx(joint - ref, abs=1e-9)
    assert bool(row["moved"]) is moved
    msg = drift_message(d, "a WLSMV fit of the ratings")
    assert (msg is not None) is moved
    if moved:
        assert f"coh-con {joint:.2f} vs {ref:.2f}" in msg


def test_ratings_only_reference_is_the_wlsmv_fit_with_its_standard_errors():
    """Given syntax, the reference is a WLSMV fit of the ratings: its correlations equal
    ``bm.cfa``'s (lavaan-verified) estimates and its standard errors their SEs; given that
    ``bm.cfa`` result, the same numbers, said to come from the CFA passed."""
    import bayesmeta as bm
    from bayesmeta.validity._joint_build import prepare
    from bayesmeta.validity._joint_checks import ratings_only_correlations

    ds = simulate_joint_validity(6, n_systems=10, n_items=30, n_traits=2, n_metrics=3)
    jd = prepare(ds, TWO, None, None, "first")
    ref, source = ratings_only_correlations(TWO, jd.spec, jd.data, jd.design)
    assert source == "a WLSMV fit of the ratings"
    fit = bm.cfa(TWO, ds)
    par = fit.parameters().xs("factor_correlation", level=0).droplevel("op")
    assert ref.loc[("coh", "con"), "estimate"] == pytest.approx(
        par.loc[("coh", "con"), "classical"], abs=1e-6)
    assert ref.loc[("coh", "con"), "se"] == pytest.approx(par.loc[("coh", "con"), "se"],
                                                          rel=1e-4)
    ref2, source2 = ratings_only_correlations(fit, jd.spec, jd.data, jd.design)
    assert source2 == "the CFA passed as fit"
    np.testing.assert_allclose(ref2.values, ref.values, rtol=1e-4)


def test_only_free_correlations_are_compared():
    """Traits in separate blocks (correlation fixed at 0) are not compared: with two
    blocks of one trait there is nothing to compare, and the joint fit's check says so in
    its header instead of counting a fixed pair."""
    from bayesmeta.validity._joint_build import prepare
    from bayesmeta.validity._joint_checks import free_pairs, ratings_only_correlations

    ds = simulate_joint_validity(6, n_systems=10, n_items=30, n_traits=2, n_metrics=3)
    jd = prepare(ds, TWO, None, None, "first")
    assert free_pairs(jd.design) == [("coh", "con")]
    apart = prepare(ds, TWO + "\ncoh ~~ 0*con", None, None, "first")
    assert free_pairs(apart.design) == []
    ref, why = ratings_only_correlations(TWO + "\ncoh ~~ 0*con", apart.spec, apart.data,
                                         apart.design)
    assert ref is None and "no free factor correlation" in why


def test_a_failing_check_becomes_a_note_not_an_error(monkeypatch):
    """The check runs after sampling: a failure of the ratings-only fit must not discard
    the finished fit; it becomes the note and the header says "not compared"."""
    from bayesmeta.validity import joint_model
    from bayesmeta.validity._joint_build import prepare

    ds = simulate_joint_validity(6, n_systems=10, n_items=30, n_traits=2, n_metrics=3)
    jd = prepare(ds, TWO, None, None, "first")

    def boom(*args, **kwargs):
        raise np.linalg.LinAlgError("singular polychoric matrix")

    monkeypatch.setattr(joint_model, "ratings_only_correlations", boom)
    line, note, moved = joint_model._drift(TWO, jd, xr.Dataset())
    assert line == "not compared (see notes)" and not moved
    assert note == ("traits not compared with the ratings alone: LinAlgError: singular "
                    "polychoric matrix")
    post = xr.Dataset({"factor_corr": _draws(0.96, 0.01)})
    monkeypatch.undo()
    line, note, moved = joint_model._drift(TWO, jd, post)
    assert moved and note.startswith("the metrics bend the traits")
    assert line.startswith("largest factor-correlation difference +")


def test_a_bayesian_cfa_reference_is_its_posterior_mean_and_sd():
    """Given a Bayesian CFA (a table with posterior ``mean`` and ``sd`` beside its WLSMV
    twin), the reference is the posterior, whichever way round the pair is written."""
    from bayesmeta.validity._joint_build import prepare
    from bayesmeta.validity._joint_checks import ratings_only_correlations

    ds = simulate_joint_validity(6, n_systems=10, n_items=30, n_traits=2, n_metrics=3)
    jd = prepare(ds, TWO, None, None, "first")
    idx = pd.MultiIndex.from_tuples([("factor_correlation", "con", "~~", "coh"),
                                     ("loading", "coh", "=~", "Rater.1.COH")],
                                    names=["estimand", "lhs", "op", "rhs"])
    table = pd.DataFrame({"classical": [0.40, 0.7], "classical_low": [0.30, 0.6],
                          "classical_high": [0.50, 0.8], "mean": [0.45, 0.72],
                          "sd": [0.04, 0.03]}, index=idx)

    class BayesCFA:
        def summary(self):
            return table

    ref, source = ratings_only_correlations(BayesCFA(), jd.spec, jd.data, jd.design)
    assert source == "the CFA passed as fit"
    assert ref.loc[("coh", "con"), "estimate"] == pytest.approx(0.45)
    assert ref.loc[("coh", "con"), "se"] == pytest.approx(0.04)


def test_more_metrics_than_rating_columns_warns_before_sampling(monkeypatch):
    """Where the metrics outnumber the rating columns, the joint call with independent
    errors says before its MCMC that they can redefine the traits and points to the
    modular route; the default then fits correlated errors (which cannot) and says
    nothing, as it does with fewer metrics, where it keeps independent errors."""
    import warnings

    import bayesmeta as bm
    import bayesmeta.sampling as sampling
    from bayesmeta.validity._joint_checks import TraitDriftWarning

    class _Stop(Exception):
        pass

    seen = []

    def no_mcmc(model, *args, **kwargs):
        seen.append(set(model.named_vars))
        raise _Stop

    monkeypatch.setattr(sampling, "sample", no_mcmc)
    model = ("coh =~ Rater.1.COH + Rater.2.COH + Rater.3.COH\n"
             "con =~ Rater.1.CON + Rater.2.CON + Rater.3.CON")
    many = simulate_joint_validity(0, n_systems=4, n_items=15, n_traits=2, n_metrics=8)
    with pytest.warns(TraitDriftWarning, match="8 metrics against 6 rating columns"):
        with pytest.raises(_Stop):
            bm.metric_variance(many, model, estimator="joint", random_seed=1,
                               residuals="independent")
    assert "trait_metric_white" not in seen[-1]
    with warnings.catch_warnings():
        warnings.simplefilter("error", TraitDriftWarning)
        with pytest.raises(_Stop):
            bm.metric_variance(many, model, estimator="joint", random_seed=1)
    assert "trait_metric_white" in seen[-1]  # the correlated-errors model
    few = simulate_joint_validity(0, n_systems=4, n_items=15, n_traits=2, n_metrics=4)
    with warnings.catch_warnings():
        warnings.simplefilter("error", TraitDriftWarning)
        with pytest.raises(_Stop):
            bm.metric_variance(few, model, estimator="joint", random_seed=1)
    assert "trait_metric_white" not in seen[-1]
