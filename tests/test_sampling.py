"""The sampling layer: caching, seeds, fast mode, provenance, convergence checks.

Structure tests build InferenceData by hand (no sampling). The one sampling test here fits a
deliberately non-identified toy model with PyMC's NUTS (the fallback sampler), so it also
covers sampler="pymc"; nutpie is exercised by tests/test_true_score.py.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import xarray as xr

from bayesmeta.options import SamplerOptions
from bayesmeta.results import hdi
from bayesmeta.sampling import (
    ConvergenceWarning,
    cached_model,
    check_convergence,
    describe_run,
    diagnose,
    sample,
)
from bayesmeta.summaries import posterior_table


def _idata(posterior: dict[str, np.ndarray], diverging=None, depth=None, fast=0):
    import arviz as az

    n_chain, n_draw = next(iter(posterior.values())).shape[:2]
    stats = {"diverging": np.zeros((n_chain, n_draw), bool) if diverging is None else diverging,
             "reached_max_treedepth": (np.zeros((n_chain, n_draw), bool) if depth is None
                                       else depth)}
    idata = az.from_dict(posterior=posterior, sample_stats=stats)
    idata.posterior.attrs.update(fast=fast, max_treedepth=10)
    return idata


def test_cached_model_builds_once_per_key():
    calls = []

    def build():
        calls.append(1)
        return object()

    a = cached_model(("test_sampling", 1), build)
    b = cached_model(("test_sampling", 1), build)
    c = cached_model(("test_sampling", 2), build)
    assert a is b and a is not c
    assert len(calls) == 2


@pytest.mark.parametrize(("options", "match"), [
    ({"sampler": "stan"}, "sampler must be one of"),
    ({"draws": 0}, "draws must be an integer >= 1"),
    ({"chains": 1.5}, "chains must be an integer"),
    ({"target_accept": 1.2}, "target_accept must be in"),
    ({"mass_matrix": "dense"}, "mass_matrix must be one of"),
    ({"mass_matrix": "low_rank", "sampler": "pymc"}, "needs sampler='nutpie'"),
    ({"draw": 10}, "unknown option"),
    ({"target_rhat": 1.0}, "target_rhat must be > 1"),
    ({"target_ess": 0}, "target_ess must be > 0"),
    ({"max_draws": 0}, "max_draws must be an integer >= 1"),
    ({"max_seconds": -1}, "max_seconds must be > 0"),
    ({"adaptive": "yes"}, "adaptive must be True or False"),
    ({"eigval_cutoff": 1.0}, "eigval_cutoff must be a number > 1"),
    ({"eigval_cutoff": "3"}, "eigval_cutoff must be a number > 1"),
])
def test_sample_validates_arguments(options, match):
    with pytest.raises((ValueError, TypeError), match=match):
        sample(object(), options)


def test_sample_validates_the_seed():
    with pytest.raises(ValueError, match="random_seed must be >= 0"):
        sample(object(), "fast", random_seed=-1)


def test_check_convergence_flags_rhat_ess_divergences_and_treedepth():
    rng = np.random.default_rng(0)
    good = rng.normal(size=(4, 1000))
    stuck = rng.normal(size=(4, 1000)) + np.array([0.0, 0.0, 3.0, 3.0])[:, None]
    const = np.ones((4, 1000))
    div = np.zeros((4, 1000), bool)
    div[0, :7] = True
    depth = np.zeros((4, 1000), bool)
    depth[1, :50] = True
    idata = _idata({"good": good, "stuck": stuck, "const": const}, div, depth)
    with pytest.warns(ConvergenceWarning) as rec:
        rep = check_convergence(idata)
    text = " ".join(str(w.message) for w in rec)
    assert "R-hat" in text and "stuck" in text
    assert "7 divergent" in text and "target_accept" in text
    assert "maximum tree depth" in text and "50 draw(s)" in text
    assert not rep.ok and rep.n_divergent == 7 and rep.n_max_treedepth == 50
    # the constant quantity is skipped, not flagged
    assert "const" not in text
    # a clean posterior passes silently
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        assert check_convergence(_idata({"good": good}), warn=True).ok


def test_ess_threshold_depends_on_fast_mode():
    rng = np.random.default_rng(1)
    # an AR(1) chain with strong autocorrelation: ESS well below 400, above 100
    x = np.zeros((2, 300))
    for c in range(2):
        for t in range(1, 300):
            x[c, t] = 0.5 * x[c, t - 1] + rng.normal()
    ess = float(diagnose(xr.Dataset({"x": (("chain", "draw"), x)}))["x__ess_bulk"])
    assert 100 < ess < 400
    full = check_convergence(_idata({"x": x}, fast=0), warn=False, rhat_max=2.0)
    fast = check_convergence(_idata({"x": x}, fast=1), warn=False, rhat_max=2.0)
    assert any("bulk ESS" in m for m in full.messages)
    assert not any("bulk ESS" in m for m in fast.messages)
    assert full.ess_min == 400 and fast.ess_min == 100


def test_hdi_matches_arviz():
    import arviz as az

    rng = np.random.default_rng(2)
    x = rng.gamma(2.0, size=(3, 700, 4))
    ours = hdi(x, 0.94)
    ref = az.hdi(xr.DataArray(x, dims=("chain", "draw", "k")).to_dataset(name="x"),
                 hdi_prob=0.94)["x"].values
    np.testing.assert_array_equal(ours, ref)


def test_posterior_table_columns_and_values():
    """The one summariser on MCMC draws: mean, sd (ddof=1, as ArviZ) and the HDI of
    :func:`hdi` (checked against ArviZ above), one row per element."""
    rng = np.random.default_rng(3)
    x = rng.normal(2.0, 0.5, size=(2, 800, 3))
    post = xr.Dataset({"b": (("chain", "draw", "metric"), x)},
                      coords={"metric": ["u", "v", "w"]})
    tab = posterior_table(post, index=["metric"])
    assert list(tab.columns) == ["mean", "sd", "hdi_low", "hdi_high", "r_hat", "ess_bulk",
                                 "ess_tail"]
    assert tab.index.tolist() == [("b", "u"), ("b", "v"), ("b", "w")]
    np.testing.assert_allclose(tab["mean"], x.mean(axis=(0, 1)), rtol=1e-12)
    np.testing.assert_allclose(tab["sd"], x.reshape(-1, 3).std(axis=0, ddof=1), rtol=1e-12)
    np.testing.assert_array_equal(tab[["hdi_low", "hdi_high"]].to_numpy(),
                                  hdi(x, 0.94))


def test_describe_run_states_fast_mode():
    idata = _idata({"x": np.zeros((2, 10))}, fast=1)
    idata.posterior.attrs.update(sampler="nutpie", chains=2, draws=300, tune=300,
                                 random_seed=5)
    text = describe_run(idata)
    assert "2 chains x 300 draws" in text and "FAST MODE" in text and "seed 5" in text


def test_non_identified_toy_model_triggers_warnings():
    """x enters the likelihood only through x**2 (sign not identified: two modes at +-2 that
    chains never cross) and (v, z) is Neal's funnel: R-hat and divergence warnings."""
    pm = pytest.importorskip("pymc")
    y = np.full(20, 4.0) + np.random.default_rng(4).normal(0, 0.05, 20)
    with pm.Model() as toy:
        x = pm.Normal("x", 0.0, 10.0)
        v = pm.Normal("v", 0.0, 3.0)
        pm.Normal("z", 0.0, pm.math.exp(v / 2), shape=9)
        pm.Normal("y", x**2, 0.1, observed=y)
    with pytest.warns(ConvergenceWarning) as rec:
        idata = sample(toy, {"sampler": "pymc", "draws": 200, "tune": 200, "chains": 4,
                             "cores": 1}, random_seed=11)
        rep = check_convergence(idata, ["x", "v"])
    text = " ".join(str(w.message) for w in rec)
    assert "R-hat" in text and "x" in text
    assert rep.max_rhat > 1.2
    assert rep.n_divergent > 0 and "divergent" in text
    assert idata.posterior.attrs["sampler"] == "pymc"
    assert idata.sample_stats.attrs["random_seed"] == 11


def test_low_rank_mass_matrix_reaches_nutpie():
    """mass_matrix="low_rank" is passed to nutpie (its low-rank adaptation stores the
    mass-matrix eigenvalues in sample_stats) and recorded in the provenance and header."""
    pm = pytest.importorskip("pymc")
    pytest.importorskip("nutpie")
    with pm.Model() as m:
        mu = pm.Normal("mu", 0.0, 10.0, shape=3)
        pm.Normal("y", mu, 1.0, observed=np.array([[0.1, -0.3, 0.5]] * 4))
    idata = sample(m, SamplerOptions(fast=True, mass_matrix="low_rank"), random_seed=3)
    assert idata.posterior.attrs["mass_matrix"] == "low_rank"
    assert "low_rank mass matrix" in describe_run(idata)
    diag = sample(m, "fast", random_seed=3)
    assert diag.posterior.attrs["mass_matrix"] == "diag"
    assert not np.allclose(idata.posterior["mu"].values, diag.posterior["mu"].values)


def test_eigenvalue_cutoff_reaches_nutpie():
    """eigval_cutoff is nutpie's mass_matrix_eigval_cutoff: on a posterior with one
    direction 39 times as wide as the other (correlation 0.95), the default cutoff 100
    ignores it and 2 corrects it, so the same seed gives other draws; recorded in the
    provenance and header. With the diagonal mass matrix it is not recorded."""
    pm = pytest.importorskip("pymc")
    pytest.importorskip("nutpie")
    with pm.Model() as m:
        pm.MvNormal("x", mu=np.zeros(2), cov=np.array([[1.0, 0.95], [0.95, 1.0]]))
    opts = {"fast": True, "mass_matrix": "low_rank"}
    wide = sample(m, opts, random_seed=4)
    narrow = sample(m, {**opts, "eigval_cutoff": 2.0}, random_seed=4)
    assert wide.posterior.attrs["eigval_cutoff"] == pytest.approx(100.0)
    assert narrow.posterior.attrs["eigval_cutoff"] == pytest.approx(2.0)
    assert "eigenvalue cutoff 2" in describe_run(narrow)
    assert not np.allclose(wide.posterior["x"].values, narrow.posterior["x"].values)
    again = sample(m, {**opts, "eigval_cutoff": 2.0}, random_seed=4)
    np.testing.assert_array_equal(again.posterior["x"].values, narrow.posterior["x"].values)
    assert "eigval_cutoff" not in sample(m, "fast", random_seed=4).posterior.attrs


def test_old_keywords_are_refused_and_seed_is_recorded():
    """No shims (issue 20): the previous release's fast= is an error naming it; the same seed
    gives the same draws; a seed is drawn and recorded when none is given."""
    pm = pytest.importorskip("pymc")
    with pm.Model() as m:
        mu = pm.Normal("mu", 0.0, 10.0)
        pm.Normal("y", mu, 1.0, observed=np.array([0.1, -0.3, 0.5]))
    with pytest.raises(TypeError, match="fast"):
        sample(m, fast=True, random_seed=4)
    old = sample(m, "fast", random_seed=4)
    new = sample(m, "fast", random_seed=4)
    np.testing.assert_array_equal(old.posterior["mu"].values, new.posterior["mu"].values)
    drawn = sample(m, "fast")
    assert 0 <= drawn.posterior.attrs["random_seed"] < 2**31


# ----------------------------------------------------------------------------- adaptive
#: A small first block, so that the toy model's checks are quick.
_ADAPT = {"draws": 100, "tune": 200, "check_every": 50}


@pytest.fixture(scope="module")
def toy():
    """Three normal means (nutpie compiles it once for this module)."""
    pm = pytest.importorskip("pymc")
    pytest.importorskip("nutpie")
    with pm.Model() as m:
        mu = pm.Normal("mu", 0.0, 10.0, shape=3)
        pm.Normal("y", mu, 1.0, observed=np.random.default_rng(0).normal(size=(20, 3)))
    return m


def test_adaptive_sampling_stops_when_the_targets_are_met(toy):
    idata = sample(toy, {**_ADAPT, "max_draws": 5000}, random_seed=3, reported=["mu"])
    a = idata.posterior.attrs
    assert a["stop_reason"] == "targets_met" and a["adaptive"] == 1
    assert 100 <= a["draws"] == idata.posterior.sizes["draw"] < 5000
    assert idata.sample_stats.sizes["draw"] == a["draws"]
    rep = check_convergence(idata, ["mu"], warn=False)
    assert rep.max_rhat <= 1.01 and min(rep.min_ess_bulk, rep.min_ess_tail) >= 400


def test_adaptive_sampling_warns_at_the_draw_cap(toy):
    from bayesmeta.sampling import SamplingCapWarning

    with pytest.warns(SamplingCapWarning, match=r"max_draws=150 draws per chain.*Raise"):
        idata = sample(toy, {**_ADAPT, "max_draws": 150, "target_ess": 1e6}, random_seed=3,
                       reported=["mu"])
    assert idata.posterior.attrs["stop_reason"] == "max_draws"
    assert idata.posterior.sizes["draw"] == 150
    assert "targets NOT met" in describe_run(idata)


def test_adaptive_sampling_warns_at_the_time_cap(toy):
    from bayesmeta.sampling import SamplingCapWarning

    with pytest.warns(SamplingCapWarning, match="max_seconds"):
        idata = sample(toy, {**_ADAPT, "max_draws": 10**7, "max_seconds": 1.0,
                             "target_ess": 1e9, "stop_early": False}, random_seed=3,
                       reported=["mu"])
    assert idata.posterior.attrs["stop_reason"] == "max_seconds"
    assert idata.posterior.attrs["seconds_warmup"] + idata.posterior.attrs[
        "seconds_sampling"] < 60


def test_adaptive_sampling_checks_the_derived_quantities(toy):
    """A callable's quantities are what is checked: a derived quantity that differs between
    chains (never converges) runs to the cap although mu converges."""
    from bayesmeta.sampling import SamplingCapWarning

    def reported(idata):
        post = idata.posterior
        return xr.Dataset({"chain_id": post["mu"].isel(mu_dim_0=0) * 0 + post["chain"]})

    with pytest.warns(SamplingCapWarning, match="R-hat"):
        idata = sample(toy, {**_ADAPT, "max_draws": 200, "stop_early": False}, random_seed=3,
                       reported=reported)
    assert idata.posterior.attrs["stop_reason"] == "max_draws"
    ok = sample(toy, {**_ADAPT, "max_draws": 5000}, random_seed=3,
                reported=lambda d: xr.Dataset({"total": d.posterior["mu"].sum("mu_dim_0")}))
    assert ok.posterior.attrs["stop_reason"] == "targets_met"


def test_adaptive_sampling_stops_early_when_the_targets_project_beyond_the_cap(toy):
    """stop_early (default): from the second check on, a worst ESS that, growing with the
    draws, would reach the target only after more than 4 x max_draws draws stops the run
    there, with the projection in the warning; the first check never stops it; a target
    within reach (mu's ESS of 400) runs on to meet it; stop_early=False samples to the
    cap."""
    from bayesmeta.options import EARLY_STOP_FACTOR
    from bayesmeta.sampling import SamplingCapWarning

    assert EARLY_STOP_FACTOR == 4.0
    with pytest.warns(SamplingCapWarning, match=r"stopped early, at 150 draws per chain.*"
                                                r"more than 4 times the cap max_draws=5000"):
        idata = sample(toy, {**_ADAPT, "max_draws": 5000, "target_ess": 1e6},
                       random_seed=3, reported=["mu"])
    a = idata.posterior.attrs
    assert a["stop_reason"] == "projected_beyond_cap" and a["draws"] == 150
    assert "stopped early" in describe_run(idata) and "targets NOT met" in describe_run(idata)
    # the projection in the message: 150 draws x 1e6 / worst ESS at 150 draws
    rep = check_convergence(idata, ["mu"], warn=False)
    ess = min(rep.min_ess_bulk, rep.min_ess_tail)
    assert 150 * 1e6 / ess > EARLY_STOP_FACTOR * 5000
    with pytest.warns(SamplingCapWarning, match="cap of max_draws=300"):
        full = sample(toy, {**_ADAPT, "max_draws": 300, "target_ess": 1e6,
                            "stop_early": False}, random_seed=3, reported=["mu"])
    assert full.posterior.attrs["stop_reason"] == "max_draws"
    assert full.posterior.sizes["draw"] == 300


def test_adaptive_sampling_same_seed_same_draws(toy):
    a = sample(toy, {**_ADAPT, "max_draws": 5000}, random_seed=8, reported=["mu"])
    b = sample(toy, {**_ADAPT, "max_draws": 5000}, random_seed=8, reported=["mu"])
    assert a.posterior.attrs["draws"] == b.posterior.attrs["draws"]
    np.testing.assert_array_equal(a.posterior["mu"].values, b.posterior["mu"].values)


def test_run_attributes_are_recorded_printed_and_survive_netcdf(toy, tmp_path):
    import arviz as az

    from bayesmeta.sampling import add_seconds

    idata = sample(toy, {**_ADAPT, "max_draws": 5000}, random_seed=5, reported=["mu"])
    add_seconds(idata, "postprocess", 1.5)
    keys = ("seconds_compile", "seconds_warmup", "seconds_sampling", "seconds_postprocess")
    for group in ("posterior", "sample_stats"):
        attrs = idata[group].attrs
        assert all(float(attrs[k]) >= 0 for k in keys)
        assert attrs["seconds_postprocess"] == pytest.approx(1.5)
        assert attrs["draws"] == idata.posterior.sizes["draw"]
    line = describe_run(idata)
    assert "stopped when R-hat <= 1.01 and ESS >= 400 were met" in line
    assert "seconds: compile" in line and "postprocess 1.5" in line
    path = tmp_path / "fit.nc"
    idata.to_netcdf(str(path))
    back = az.from_netcdf(str(path)).posterior.attrs
    for k in (*keys, "draws", "stop_reason", "max_draws", "target_ess"):
        assert back[k] == idata.posterior.attrs[k]


def test_fixed_draws_without_reported_or_in_fast_mode(toy):
    fixed = sample(toy, {**_ADAPT, "max_draws": 5000}, random_seed=3)
    assert fixed.posterior.attrs["stop_reason"] == "fixed_draws"
    assert fixed.posterior.sizes["draw"] == 100
    fast = sample(toy, "fast", random_seed=3, reported=["mu"])
    assert fast.posterior.attrs["stop_reason"] == "fixed_draws"
    assert fast.posterior.attrs["adaptive"] == 0
    off = sample(toy, {**_ADAPT, "adaptive": False}, random_seed=3, reported=["mu"])
    assert off.posterior.sizes["draw"] == 100


def test_no_blas_warning_when_importing_and_fitting():
    """PyTensor's "could not link to a BLAS installation" never reaches a user: bayesmeta's
    samplers compile through numba (a fresh process, since the warning fires once)."""
    import subprocess
    import sys

    pytest.importorskip("nutpie")
    code = ("import warnings; warnings.simplefilter('always')\n"
            "import numpy as np, bayesmeta\n"
            "import pymc as pm\n"
            "from bayesmeta.sampling import sample\n"
            "with pm.Model() as m:\n"
            "    mu = pm.Normal('mu', 0, 1)\n"
            "    pm.Normal('y', mu, 1, observed=np.zeros(3))\n"
            "sample(m, 'fast', random_seed=1)\n"
            "import pytensor\n"
            "pytensor.config.blas__ldflags  # resolved (and cached) quietly by the fit\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=600, check=True)
    assert "BLAS" not in out.stderr + out.stdout


# ----------------------------------------------------------------------------- together
@pytest.fixture(scope="module")
def sticky():
    """A model that needs many more draws than ``toy`` (its 10 means are strongly
    correlated with ``z``, which nutpie's diagonal mass matrix mixes slowly: about 2,500
    draws per chain for seed 4), so its targets are met later."""
    pm = pytest.importorskip("pymc")
    with pm.Model() as m:
        z = pm.Normal("z", 0.0, 1.0)
        pm.Normal("u", 3 * z, 0.3, shape=10)
    return m


@pytest.mark.slow
def test_models_sampled_together_are_thinned_to_the_shortest_length_and_rechecked(toy,
                                                                                  sticky):
    """Each model samples to its own targets; the one that needed more draws is thinned to
    the shorter one's length (evenly spaced draws of the same seed's run), and its thinned
    trace meets the targets again, so the quick model is not sampled on to the slow one's
    length."""
    from bayesmeta._adaptive import thin_index
    from bayesmeta.sampling import sample_together
    from bayesmeta.summaries import diagnose

    opts = {**_ADAPT, "max_draws": 5000}
    fast_alone = sample(toy, opts, random_seed=3, reported=["mu"])
    slow_alone = sample(sticky, opts, random_seed=4, reported=["z"])
    met_fast = fast_alone.posterior.attrs["draws"]
    met_slow = slow_alone.posterior.attrs["draws"]
    assert met_fast < met_slow  # the premise: toy is met first
    a, b = sample_together([toy, sticky], opts, random_seed=[3, 4],
                           reported=[["mu"], ["z"]])
    n = a.posterior.sizes["draw"]
    assert n == b.posterior.sizes["draw"] == b.sample_stats.sizes["draw"] == met_fast
    assert a.posterior.attrs["draws_met"] == a.posterior.attrs["draws_sampled"] == met_fast
    assert b.posterior.attrs["draws_met"] == met_slow
    sampled = b.posterior.attrs["draws_sampled"]
    assert met_slow <= sampled <= 2 * met_slow
    assert a.posterior.attrs["stop_reason"] == b.posterior.attrs["stop_reason"] == \
        "targets_met"
    np.testing.assert_array_equal(a.posterior["mu"].values, fast_alone.posterior["mu"].values)
    # the slow model's draws: evenly spaced draws of the same seed's run, first and last in
    slow_run = sample(sticky, {**opts, "adaptive": False, "draws": sampled}, random_seed=4)
    np.testing.assert_array_equal(
        b.posterior["z"].values, slow_run.posterior["z"].values[:, thin_index(sampled, n)])
    np.testing.assert_array_equal(b.posterior["draw"].values, np.arange(n))
    # ... and what is kept meets the targets
    diag = diagnose(b.posterior[["z"]])
    assert float(diag["z__r_hat"]) <= 1.01
    assert min(float(diag["z__ess_bulk"]), float(diag["z__ess_tail"])) >= 400
    # the same call again gives the same draws
    _a2, b2 = sample_together([toy, sticky], opts, random_seed=[3, 4],
                              reported=[["mu"], ["z"]])
    np.testing.assert_array_equal(b2.posterior["z"].values, b.posterior["z"].values)


def test_thin_index_keeps_evenly_spaced_draws_with_both_ends():
    from bayesmeta._adaptive import thin_index

    np.testing.assert_array_equal(thin_index(10, 4), [0, 3, 6, 9])
    np.testing.assert_array_equal(thin_index(7, 7), np.arange(7))
    idx = thin_index(2000, 1200)
    assert len(np.unique(idx)) == 1200 and idx[0] == 0 and idx[-1] == 1999
    assert set(np.diff(idx)) == {1, 2}
    with pytest.raises(ValueError, match="cannot keep 5 of 4 draws"):
        thin_index(4, 5)


class _Run:
    """A stand-in for a paused AdaptiveRun: where it stopped, and whether thinning works."""

    def __init__(self, used: int, stop: str = "targets_met", thins: bool = True) -> None:
        self.used, self.stop, self.thins, self.keep = used, stop, thins, None
        self.calls: list[tuple] = []

    def thin_to(self, n: int, upto: int) -> bool:
        self.calls.append(("thin_to", n, upto))
        if self.used > n:
            self.keep = n
        return self.thins

    def extend(self, n: int) -> int:
        self.calls.append(("extend", n))
        self.used = max(self.used, n)
        return self.used


def test_runs_that_cannot_be_thinned_are_not_thinned_and_the_others_resumed():
    """The fallback: a run whose thinned trace fails its re-check (or that missed its
    targets) leaves every run unthinned, resumed to the longest length."""
    from bayesmeta.sampling import _align

    ok = [_Run(600), _Run(1400), _Run(900)]
    _align(ok)
    assert [r.calls[0] for r in ok] == [("thin_to", 600, 1200), ("thin_to", 600, 2800),
                                        ("thin_to", 600, 1800)]
    assert [r.keep for r in ok] == [None, 600, 600]
    assert not any(c[0] == "extend" for r in ok for c in r.calls)
    failing = [_Run(600), _Run(1400, thins=False), _Run(900)]
    _align(failing)
    assert [r.keep for r in failing] == [None, None, None]
    assert [r.used for r in failing] == [1400, 1400, 1400]
    capped = [_Run(600), _Run(5000, stop="max_draws")]
    _align(capped)
    assert not any(c[0] == "thin_to" for r in capped for c in r.calls)
    assert [r.used for r in capped] == [5000, 5000] and capped[1].keep is None


def test_models_sampled_together_check_their_arguments(toy):
    from bayesmeta.sampling import sample_together

    with pytest.raises(ValueError, match="one data, random_seed and reported per model"):
        sample_together([toy, toy], _ADAPT, random_seed=[1], reported=[["mu"], ["mu"]])
    fixed = sample_together([toy, toy], "fast", random_seed=[1, 2], reported=[["mu"]] * 2)
    assert [f.posterior.sizes["draw"] for f in fixed] == [300, 300]


# ----------------------------------------------------------------------------- jax
def test_backend_option_is_checked_and_recorded():
    with pytest.raises(ValueError, match="backend must be one of 'numba', 'jax'"):
        SamplerOptions(backend="cuda")
    with pytest.raises(ValueError, match="backend='jax' needs sampler='nutpie'"):
        SamplerOptions(backend="jax", sampler="pymc").resolve()
    assert SamplerOptions().resolve().backend == "numba"


def test_jax_backend_equals_numba_within_monte_carlo_error(toy):
    """The accelerator path: the same model through nutpie's JAX backend (on the CPU here,
    on a GPU where JAX sees one) gives the numba backend's posterior within Monte Carlo
    error (4 MCSE of the difference of two independent estimates of each mean)."""
    pytest.importorskip("jax", reason="the jax extra is not installed")
    opts = {**_ADAPT, "max_draws": 5000}
    nb = sample(toy, opts, random_seed=3, reported=["mu"])
    jx = sample(toy, {**opts, "backend": "jax"}, random_seed=3, reported=["mu"])
    assert jx.posterior.attrs["backend"] == "jax" and "jax backend" in describe_run(jx)
    assert jx.posterior.attrs["stop_reason"] == "targets_met"
    import arviz as az

    m_nb, m_jx = nb.posterior["mu"].mean(("chain", "draw")), jx.posterior["mu"].mean(
        ("chain", "draw"))
    se = np.hypot(az.mcse(nb.posterior["mu"])["mu"], az.mcse(jx.posterior["mu"])["mu"])
    assert (np.abs(m_nb - m_jx) <= 4 * se).all()
    sd_nb, sd_jx = nb.posterior["mu"].std(("chain", "draw")), jx.posterior["mu"].std(
        ("chain", "draw"))
    np.testing.assert_allclose(sd_jx, sd_nb, rtol=0.15)


def _dims_model():
    pm = pytest.importorskip("pymc")
    pytest.importorskip("nutpie")
    pytest.importorskip("jax", reason="the jax extra is not installed")
    with pm.Model(coords={"group": ["a", "b", "c"]}) as m:
        sd = pm.HalfNormal("sd", 1.0)
        eff = pm.ZeroSumNormal("eff", sigma=sd, dims="group")
        pm.Normal("y", eff, 1.0, observed=np.random.default_rng(1).normal(size=(10, 3)))
    return m


def _dims(model):
    return {k: tuple(v) for k, v in model.named_vars_to_dims.items()}


def test_jax_compile_leaves_the_model_dims_as_they_were():
    """nutpie's JAX compile adds dims of its own (``sd_log___dim_0``) to the model's
    ``named_vars_to_dims``, in place, for every transformed variable; a numba fit of the
    same model object afterwards then failed in nutpie ("Unknown dimension size for
    dimension sd_log___dim_0"). The model keeps its own dims (the full sequence of fits is
    the slow test below)."""
    from bayesmeta.sampling import _compiled_nutpie

    m = _dims_model()
    dims = _dims(m)
    _compiled_nutpie(m, None, "jax")
    assert _dims(m) == dims


@pytest.mark.slow
def test_numba_fit_after_a_jax_fit_of_the_same_model():
    """The user-facing failure of the test above: a JAX fit, then a numba fit of the same
    model object, in one process."""
    m = _dims_model()
    fixed = {"adaptive": False, "tune": 50, "draws": 50, "chains": 2}
    jx = sample(m, {**fixed, "backend": "jax"}, random_seed=1)
    nb = sample(m, fixed, random_seed=1)
    for idata in (jx, nb):
        assert idata.posterior["eff"].dims == ("chain", "draw", "group")
        assert idata.posterior.sizes["draw"] == 50


def test_jax_erfcx_equals_scipy_with_its_closed_form_gradient():
    """JAX has no erfcx (PyTensor maps it to TensorFlow Probability); bayesmeta's own
    (exp(x^2) erfc(x) below 25, the asymptotic series above) equals SciPy's to 1e-12
    relative over [-20, 1e6], and its jax.grad the closed form 2 x erfcx(x) - 2/sqrt(pi)
    where that form does not cancel (|x| < 5), to 1e-11."""
    jax = pytest.importorskip("jax", reason="the jax extra is not installed")
    from scipy.special import erfcx

    from bayesmeta.sampling import _erfcx_jax, _register_jax_special_functions

    _register_jax_special_functions()
    x = np.concatenate([np.linspace(-20, 60, 8001), np.geomspace(60, 1e6, 200)])
    got = np.asarray(_erfcx_jax(jax.numpy.asarray(x)))
    np.testing.assert_allclose(got, erfcx(x), rtol=1e-12)
    xs = np.linspace(-5, 5, 401)
    grad = np.asarray(jax.vmap(jax.grad(_erfcx_jax))(jax.numpy.asarray(xs)))
    np.testing.assert_allclose(grad, 2 * xs * erfcx(xs) - 2 / np.sqrt(np.pi), rtol=1e-11,
                               atol=1e-13)
    big = np.asarray(jax.vmap(jax.grad(_erfcx_jax))(jax.numpy.asarray([25.0, 1e3, 1e6])))
    assert np.isfinite(big).all() and (big < 0).all()


def test_jax_backend_keeps_data_containers_and_initial_values():
    """nutpie freezes a model's pm.Data into constants for JAX unless told not to; the
    accelerator path keeps them swappable (the rater model refits each trait's data into
    one compiled model) and keeps initial values (which freezing refuses). Conjugate
    check: mu ~ N(0, 1), y_i ~ N(mu x_i, 1) has posterior mean sum(x y) / (1 + sum x^2)
    and sd 1 / sqrt(1 + sum x^2); with the data swapped to 2x both change as they must
    (4 Monte Carlo standard errors; sd to 10%)."""
    pytest.importorskip("jax", reason="the jax extra is not installed")
    import pymc as pm

    y = np.array([0.3, 1.1, 1.9, 3.2, 3.9])
    x = np.arange(5.0)
    with pm.Model() as m:
        xd = pm.Data("xd", x)
        mu = pm.Normal("mu", 0.0, 1.0, initval=0.3)
        pm.Normal("y", mu * xd, 1.0, observed=y)
    for xx in (x, 2 * x):
        post = sample(m, {**_ADAPT, "backend": "jax", "max_draws": 5000},
                      data={"xd": xx}, random_seed=5, reported=["mu"]).posterior[["mu"]]
        import arviz as az

        prec = 1 + np.sum(xx**2)
        mean, sd = float(post["mu"].mean()), float(post["mu"].std())
        assert abs(mean - np.sum(xx * y) / prec) <= 4 * float(az.mcse(post)["mu"])
        np.testing.assert_allclose(sd, 1 / np.sqrt(prec), rtol=0.1)


def test_an_adaptive_run_looks_at_its_chains_every_few_seconds(monkeypatch):
    """The wait until the next look is capped at MAX_WAIT seconds (ten times the last
    look's cost when that is more), however slow the rate measured so far: the warm-up's
    opening iterations are far slower than the rest, and the chains sample on while the run
    sleeps (stop 46: a 60-second cap let a coherence fit run 3,800 draws per chain where
    1,331 were kept)."""
    import types

    from bayesmeta import _adaptive

    slept: list[float] = []
    monkeypatch.setattr(_adaptive.time, "sleep", slept.append)
    run = types.SimpleNamespace(opts=SamplerOptions().resolve(), _rate=6.0,
                                _poll_seconds=0.01, _elapsed=lambda: 1.0)
    _adaptive.AdaptiveRun._sleep_until(run, 500, 6)  # 6 warm-up iterations in a second
    assert slept[-1] == pytest.approx(_adaptive.MAX_WAIT)
    run._poll_seconds = 0.5  # a long trace: looking costs more, so look less often
    _adaptive.AdaptiveRun._sleep_until(run, 500, 6)
    assert slept[-1] == pytest.approx(5.0)
    run._rate = 1000.0  # the expected wait itself when it is shorter
    _adaptive.AdaptiveRun._sleep_until(run, 500, run.opts.tune + 300)  # 200 draws left
    assert slept[-1] == pytest.approx(1.05 * 200 / 1000.0)
