"""The shared layer of the redesign: one summariser, one table shape, one options object,
one selection layer, provenance on every result."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.stats as st
import xarray as xr

import bayesmeta as bm
from bayesmeta.data import select
from bayesmeta.options import ResamplingOptions, SamplerOptions, resolve_seed
from bayesmeta.results import Result
from bayesmeta.summaries import (
    COLUMNS,
    LOO_COLUMNS,
    check_table,
    make_table,
    posterior_table,
    summarize,
)


# ----------------------------------------------------------------------------- summariser
def test_summarize_resample_draws_against_numpy():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(4000, 3))
    da = xr.DataArray(x, dims=("resample", "metric"), coords={"metric": list("abc")})
    s = summarize(da, ci_prob=0.9)
    np.testing.assert_allclose(s["mean"].values, x.mean(0), rtol=1e-12)
    np.testing.assert_allclose(s["sd"].values, x.std(0, ddof=1), rtol=1e-12)
    # HDI of a symmetric unimodal sample ~ the central interval (closed form: +-1.645)
    np.testing.assert_allclose(s["interval"].values, [[-1.645, 1.645]] * 3, atol=0.08)
    assert s["interval"].dims == ("metric", "ci_bound")
    assert "r_hat" not in s  # resampling draws have no chains


def test_summarize_equal_tailed_matches_quantiles():
    x = np.random.default_rng(0).gamma(2.0, size=(2000, 2))
    da = xr.DataArray(x, dims=("resample", "k"))
    s = summarize(da, ci_prob=0.8, interval="equal_tailed")
    np.testing.assert_allclose(s["interval"].values, np.quantile(x, [0.1, 0.9], axis=0).T,
                               rtol=1e-12)


def test_summarize_drops_undefined_draws_per_element():
    x = np.random.default_rng(1).normal(size=(500, 2))
    x[:100, 1] = np.nan
    s = summarize(xr.DataArray(x, dims=("resample", "k")))
    np.testing.assert_allclose(s["mean"].values[1], np.mean(x[100:, 1]), rtol=1e-12)
    x[:495, 0] = np.nan  # only 5 defined draws: undefined
    s = summarize(xr.DataArray(x, dims=("resample", "k")))
    assert np.isnan(s["mean"].values[0])


def test_summarize_mcmc_has_rhat_and_ess_matching_arviz():
    import arviz as az

    rng = np.random.default_rng(2)
    x = rng.normal(size=(2, 500, 2))
    da = xr.DataArray(x, dims=("chain", "draw", "k"))
    s = summarize(da)
    ref = az.summary(az.convert_to_inference_data({"x": x}), kind="diagnostics")
    np.testing.assert_allclose(s["ess_bulk"].values, ref["ess_bulk"].values, rtol=1e-3)
    np.testing.assert_allclose(s["r_hat"].values, ref["r_hat"].values, atol=0.005)


def test_posterior_table_index_and_blank_levels():
    rng = np.random.default_rng(1)
    post = xr.Dataset({"severity": (("chain", "draw", "rater", "trait"),
                                    rng.normal(size=(2, 100, 2, 1))),
                       "threshold": (("chain", "draw", "rater", "trait", "cut"),
                                     rng.normal(size=(2, 100, 2, 1, 2)))},
                      coords={"rater": ["r1", "r2"], "trait": ["COH"], "cut": ["1->2", "2->3"]})
    tab = posterior_table(post, index=["rater", "trait", "cut"])
    assert tab.index.names == ["estimand", "rater", "trait", "cut"]
    assert ("severity", "r2", "COH", "") in tab.index
    assert ("threshold", "r1", "COH", "2->3") in tab.index
    assert list(tab.columns) == [c for c in COLUMNS if c not in
                                 ("classical", "classical_low", "classical_high", *LOO_COLUMNS)]


def test_make_table_refuses_foreign_columns_and_index():
    idx = pd.MultiIndex.from_tuples([("alpha", "m1")], names=["estimand", "metric"])
    with pytest.raises(ValueError, match="details"):
        make_table(pd.DataFrame({"classical": [1.0], "pvalue": [0.1]}, index=idx))
    with pytest.raises(ValueError, match="estimand"):
        make_table(pd.DataFrame({"classical": [1.0]}, index=pd.Index(["m1"], name="metric")))
    with pytest.raises(ValueError, match="vocabulary"):
        make_table(pd.DataFrame({"classical": [1.0]}, index=pd.MultiIndex.from_tuples(
            [("alpha", "m1")], names=["estimand", "quantity"])))
    with pytest.raises(ValueError, match="classical_ci_kind"):
        make_table(pd.DataFrame({"classical": [1.0], "classical_low": [0.0],
                                 "classical_high": [2.0]}, index=idx))


# ----------------------------------------------------------------------------- results
def _result(**kw):
    idx = pd.MultiIndex.from_tuples([("alpha", "m1"), ("alpha", "m2")],
                                    names=["estimand", "metric"])
    table = pd.DataFrame({"hdi_high": [0.9, 0.8], "classical": [0.5, 0.4],
                          "classical_low": [0.1, 0.2], "classical_high": [0.7, 0.6],
                          "mean": [0.5, 0.41], "sd": [0.1, 0.1], "hdi_low": [0.2, 0.1],
                          "n_items": pd.array([10, 12], dtype="Int64"),
                          "flag": [True, False]}, index=idx)
    return Result(table, title="t", classical_ci_kind="percentile bootstrap",
                  posterior="Bayesian-bootstrap posterior", random_seed=11,
                  data_hash="abc", **kw)


def test_result_splits_details_orders_columns_and_records_provenance():
    res = _result()
    tab = res.summary()
    check_table(tab)
    assert list(tab.columns) == ["classical", "classical_low", "classical_high", "mean", "sd",
                                 "hdi_low", "hdi_high"]
    assert list(res.details().columns) == ["n_items", "flag"]
    assert tab.attrs["classical_ci_kind"] == "percentile bootstrap"
    assert tab.attrs["ci_prob"] == pytest.approx(0.94)
    assert res.provenance["random_seed"] == 11
    text = str(res)
    assert "seed:11" in text and "94% percentile bootstrap" in text
    assert "Bayesian-bootstrap posterior; 94% highest-density interval" in text


def test_result_round_trip_keeps_details_dtypes_and_provenance(tmp_path):
    res = _result()
    back = bm.load(res.save(tmp_path / "r.nc"))
    pd.testing.assert_frame_equal(back.summary(), res.summary())
    pd.testing.assert_frame_equal(back.details(), res.details())
    assert back.summary().attrs == res.summary().attrs
    assert back.provenance == res.provenance
    assert str(back) == str(res)


# ----------------------------------------------------------------------------- options
def test_sampler_options_resolve_model_defaults_and_fast_caps():
    o = SamplerOptions(draws=2000).resolve(tune=400, chains=2)
    assert (o.draws, o.tune, o.chains, o.sampler) == (2000, 400, 2, "nutpie")
    f = SamplerOptions.coerce("fast").resolve(draws=5000)
    assert (f.draws, f.tune, f.chains) == (300, 300, 2)
    assert SamplerOptions.coerce({"chains": 3}).chains == 3
    with pytest.raises(TypeError, match="unknown option"):
        SamplerOptions.coerce({"iter": 3})
    with pytest.raises(ValueError, match="draws"):
        SamplerOptions(draws=0)
    with pytest.raises(ValueError, match="needs sampler='nutpie'"):
        SamplerOptions(sampler="pymc", mass_matrix="low_rank").resolve()


def test_sampler_keywords_of_the_previous_release_are_refused():
    """No shims (issue 20): draws= and friends go in sampling=, an old spelling is an error
    naming the keyword, never silently folded in or dropped."""
    import bayesmeta as bm

    with pytest.raises(TypeError, match="draws"):
        bm.rater_bias(bm.datasets.simulated(n_systems=3, n_items=4), draws=50)
    with pytest.raises(TypeError, match="unknown option"):
        SamplerOptions.coerce({"drawz": 5})


def test_resampling_options_and_seeds():
    assert ResamplingOptions.coerce({"n_resamples": 7}).n_resamples == 7
    with pytest.raises(ValueError, match="unit"):
        ResamplingOptions(unit="rows")
    assert resolve_seed(5) == 5
    a, b = resolve_seed(None), resolve_seed(None)
    assert isinstance(a, int) and a != b
    with pytest.raises(TypeError):
        resolve_seed(1.5)


# ----------------------------------------------------------------------------- selection
def test_runs_are_chosen_by_label_only(simulated):
    first = select.metric_scores(simulated, run=None)
    assert (select.metric_scores(simulated, run=1) == first).all()  # the label "1"
    with pytest.raises(ValueError, match="dim 'run'"):
        select.metric_scores(simulated, run=0)


def test_integer_and_string_labels_meet(simulated):
    h = select.human_score(simulated, "COH").values
    relabel = h.assign_coords(item=[int(s[3:]) for s in simulated["item"].values])
    ds = simulated.assign_coords(item=[str(int(s[3:])) for s in simulated["item"].values])
    got = select.human_score(ds, human=relabel).values
    np.testing.assert_array_equal(got.values, h.values)


def test_disjoint_labels_name_the_dim(simulated):
    h = select.human_score(simulated, "COH").values
    bad = h.assign_coords(item=[f"x{k}" for k in range(h.sizes["item"])])
    with pytest.raises(ValueError, match=r"share no label on dim 'item'.*'x0'.*'doc001'"):
        select.human_score(simulated, human=bad)


def test_partial_overlap_warns_with_counts(simulated):
    h = select.human_score(simulated, "COH").values.isel(item=slice(0, 90))
    with pytest.warns(bm.MissingDataWarning, match="10 of 100 items"):
        got = select.human_score(simulated, human=h).values
    assert int(got.isnull().sum()) == 10 * simulated.sizes["system"]


def test_judgments_are_human_scores_and_ordinal_analyses_refuse_them(simulated):
    judged = simulated["rating"].mean("rater")
    ds = simulated[["score"]].assign(judgment=judged)
    h = select.human_score(ds, "COH")
    assert h.source == "judgment"
    np.testing.assert_allclose(h.values.values,
                               select.human_score(simulated, "COH").values.values)
    with pytest.raises(ValueError, match=r"continuous human judgments.*no raters"):
        select.ordinal_ratings(ds, analysis="agreement")
    q = select.quantities(ds, metrics=[])
    assert list(q["kind"].values) == ["judgment"] * 4


def test_reference_reductions_closed_form():
    vals = np.array([[[[[0.5, 0.7, np.nan]]]]])  # one output, three reference slots
    score = xr.DataArray(vals, dims=("system", "item", "metric", "run", "reference"),
                         coords={"reference": ["1", "2", "3"]})
    assert float(select.pick_reference(score, "first").squeeze()) == 0.5
    assert float(select.pick_reference(score, "mean").squeeze()) == pytest.approx(0.6)
    assert float(select.pick_reference(score, "max").squeeze()) == 0.7
    assert float(select.pick_reference(score, 2).squeeze()) == 0.7
    with pytest.raises(ValueError, match="dim 'reference'"):
        select.pick_reference(score, "9")


def test_rank_normalize_has_no_import_circle():
    import subprocess
    import sys

    code = "import bayesmeta.data.select as s; print(s.rank_normalize.__module__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "bayesmeta.data.transform"


def test_schema_rejects_a_trait_in_both_ratings_and_judgments(simulated):
    ds = simulated[["rating", "score"]].assign(judgment=simulated["rating"].mean("rater"))
    with pytest.raises(ValueError, match="both ordinal ratings"):
        bm.validate(ds)


def test_schema_names_an_all_missing_metric_and_an_infinite_score(simulated):
    ds = simulated[["score"]].copy(deep=True)
    ds["score"].loc[{"metric": "metric02.CON"}] = np.nan
    with pytest.raises(ValueError, match=r"'metric02\.CON' have no score"):
        bm.validate(ds)
    ds = simulated[["score"]].copy(deep=True)
    ds["score"][0, 1, 3, 0] = np.inf
    with pytest.raises(ValueError, match=r"metric 'metric04\.REL', system 'S01', item 'doc002'"):
        bm.validate(ds)


def test_kendall_check_of_a_selected_matrix(simulated):
    # the selection layer's arrays are what scipy sees: a spot check of the plumbing
    x = select.metric_scores(simulated, ["metric01.COH"]).values[0]
    z = select.human_score(simulated, "COH").values.values
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tau = st.kendalltau(x.mean(1), z.mean(1)).statistic
    assert -1 <= tau <= 1
