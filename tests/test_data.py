"""Data schema, readers and loaders: shapes, round trips, and one clear error per bad input."""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import bayesmeta as bm


def _wide_frame() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    rows = []
    for s in ["A", "B", "C"]:
        for i in range(4):
            rows.append({"sys": s, "doc": f"d{i}", "r1_coh": int(rng.integers(1, 6)),
                         "r2_coh": int(rng.integers(1, 6)), "bleu": float(rng.normal())})
    return pd.DataFrame(rows)


def _wide(df: pd.DataFrame, **kw) -> xr.Dataset:
    return bm.from_wide(df, system="sys", item="doc",
                        ratings={"r1_coh": ("r1", "coh"), "r2_coh": ("r2", "coh")},
                        metrics=["bleu"], **kw)


def test_from_wide_shapes_and_values():
    df = _wide_frame()
    ds = _wide(df)
    assert dict(ds.sizes) == {"system": 3, "item": 4, "rater": 2, "trait": 1, "metric": 1,
                              "run": 1}
    row = df.iloc[5]
    assert ds["rating"].sel(system=row.sys, item=row.doc, rater="r2", trait="coh") == row.r2_coh
    assert ds["score"].sel(system=row.sys, item=row.doc, metric="bleu").item() == row.bleu
    assert ds["rating"].attrs["scale_min"] == 1 and ds["rating"].attrs["scale_max"] == 5


def test_from_long_matches_from_wide():
    df = _wide_frame()
    wide = _wide(df)
    long = df.melt(id_vars=["sys", "doc"], value_vars=["r1_coh", "r2_coh"])
    long["rater"] = long["variable"].str[:2]
    long["trait"] = "coh"
    ds = bm.from_long(long, system="sys", item="doc", rater="rater", trait="trait")
    xr.testing.assert_equal(ds["rating"], wide["rating"])
    scores = df[["sys", "doc", "bleu"]].assign(metric="bleu")
    sc = bm.from_long(scores, system="sys", item="doc", metric="metric", value="bleu")
    np.testing.assert_array_equal(sc["score"].values, wide["score"].values)


def test_read_csv_wide_and_long(tmp_path):
    df = _wide_frame()
    p = tmp_path / "wide.csv"
    df.to_csv(p, index=False)
    ds = bm.read_csv(p, system="sys", item="doc", ratings=r"^(?P<rater>r\d)_(?P<trait>\w+)$",
                     metrics=["bleu"])
    xr.testing.assert_equal(ds["rating"], _wide(df)["rating"])


def test_missing_ratings_are_nan_and_reported():
    df = _wide_frame()
    df.loc[[1, 7], "r1_coh"] = np.nan
    with pytest.warns(bm.MissingDataWarning, match=r"rating r1\.coh: 2 of 12"):
        ds = _wide(df)
    assert int(ds["rating"].isnull().sum()) == 2  # kept as NaN, never zero-filled
    report = bm.missing_report(ds).set_index("label")
    assert report.loc["r1.coh", "missing"] == 2 and report.loc["r2.coh", "missing"] == 0


def test_missing_cells_of_an_unbalanced_table_are_reported():
    df = _wide_frame().drop(index=[2])  # one (system, item) row absent
    with pytest.warns(bm.MissingDataWarning, match="score bleu: 1 of 12"):
        ds = _wide(df)
    assert np.isnan(ds["score"].values).sum() == 1


# ---------------------------------------------------------------- bad input: one error each
def test_duplicated_system_item_pair_is_named(tmp_path):
    df = _wide_frame()
    df = pd.concat([df, df.iloc[[4]]], ignore_index=True)
    p = tmp_path / "dup.csv"
    df.to_csv(p, index=False)
    with pytest.raises(ValueError, match=r"duplicate \(sys, doc\) key: sys='B', doc='d0'"):
        bm.read_csv(p, system="sys", item="doc", metrics=["bleu"])


def test_rating_off_scale_is_named(tmp_path):
    df = _wide_frame()
    df.loc[3, "r2_coh"] = 6
    p = tmp_path / "six.csv"
    df.to_csv(p, index=False)
    with pytest.raises(ValueError, match=r"column 'r2_coh' has rating 6 in row 3.*1\.\.5"):
        bm.read_csv(p, system="sys", item="doc", ratings={"r2_coh": ("r2", "coh")},
                    metrics=[])


def test_non_integer_rating_is_named():
    df = _wide_frame()
    df["r1_coh"] = df["r1_coh"].astype(float)
    df.loc[0, "r1_coh"] = 2.5
    with pytest.raises(ValueError, match=r"'r1_coh' has rating 2.5 in row 0"):
        _wide(df)


def test_non_numeric_score_is_named(tmp_path):
    df = _wide_frame()
    df["bleu"] = df["bleu"].astype(object)
    df.loc[2, "bleu"] = "n/a?"
    p = tmp_path / "text.csv"
    df.to_csv(p, index=False)
    with pytest.raises(TypeError, match=r"column 'bleu' has non-numeric value 'n/a\?' in row 2"):
        bm.read_csv(p, system="sys", item="doc", metrics=["bleu"])


def test_unknown_column_is_named_with_suggestion():
    with pytest.raises(ValueError, match=r"unknown metric column 'bleuu'.*Did you mean 'bleu'"):
        bm.from_wide(_wide_frame(), system="sys", item="doc", metrics=["bleuu"])
    with pytest.raises(ValueError, match=r"unknown key column 'system'.*system=None"):
        bm.from_wide(_wide_frame(), system="system", item="doc", metrics=["bleu"])
    # system= left out and no 'system' column: one system, so the repeated items are named
    with pytest.raises(ValueError, match=r"duplicate \(doc\) key: doc='d0'.*name their "
                                         r"column with system="):
        bm.from_wide(_wide_frame(), item="doc", metrics=["bleu"])


def test_single_system_reads_and_minimum_is_checked_by_analyses():
    # validate() accepts one system since the redesign (files of one system's outputs);
    # an analysis that needs several asks for them with validate(min_systems=) / select.require
    df = _wide_frame()
    df = df[df["sys"] == "A"]
    ds = _wide(df)
    assert ds.sizes["system"] == 1
    with pytest.raises(ValueError, match=r"dim 'system' has 1 label\(s\) \('A'\)"):
        bm.validate(ds, min_systems=2)


def test_validator_names_duplicate_labels_and_wrong_dims():
    ds = _wide(_wide_frame())
    bad = ds.assign_coords(item=["d0", "d1", "d1", "d3"])
    with pytest.raises(ValueError, match=r"dim 'item' has duplicate labels: 'd1'"):
        bm.validate(bad)
    with pytest.raises(ValueError, match=r"variable .rating. must have dims"):
        bm.validate(ds.transpose("item", "system", ...))
    with pytest.raises(TypeError, match=r"xarray\.Dataset"):
        bm.validate(ds["score"])
    allnan = ds.assign(score=ds["score"] * np.nan)
    with pytest.raises(ValueError, match="'score' is entirely missing"):
        bm.validate(allnan)


def test_validator_rejects_off_scale_rating_in_dataset():
    ds = _wide(_wide_frame())
    ds["rating"][0, 0, 0, 0] = 7
    with pytest.raises(ValueError, match=r"rating 7 of rater 'r1', trait 'coh' \(system 'A', "
                                         r"item 'd0'\)"):
        bm.validate(ds)


# ---------------------------------------------------------------- built-in data
def test_summeval_layout(summeval):
    assert dict(summeval.sizes) == {"system": 17, "item": 100, "rater": 3, "trait": 4,
                                    "metric": 43, "run": 2}
    assert list(summeval["rater"].values) == ["Expert.1", "Expert.2", "Expert.3"]
    assert list(summeval["trait"].values) == ["COH", "CON", "FLU", "REL"]
    for name in ("METEOR", "G.EVAL.3.5.COH", "BLUERT", "ROUGE.su."):
        assert name in summeval["metric"].values
    assert int(summeval["rating"].isnull().sum()) == 0
    assert summeval["metric_trait"].sel(metric="G.EVAL.4.FLU").item() == "FLU"
    # the two runs differ for G-Eval and agree for deterministic metrics
    diff = abs(summeval["score"].sel(run="1") - summeval["score"].sel(run="2")).max("item")
    assert float(diff.sel(metric="BLEU").max()) < 1e-8  # CSV rounding only
    assert float(diff.sel(metric="G.EVAL.3.5.COH").max()) > 0
    raw = pd.read_csv(bm.datasets.find_summeval(download=False) / "metric_scores_long.csv")
    r = raw.iloc[123]
    assert summeval["rating"].sel(system=r.model_id, item=r.test_id, rater="Expert.2",
                                  trait="FLU").item() == r["Expert.2.FLU"]
    assert summeval["score"].sel(system=r.model_id, item=r.test_id, metric="METEOR",
                                 run="1").item() == r["METEOR"]


def test_summeval_reports_missing_path(tmp_path):
    with pytest.raises(FileNotFoundError, match="no SummEval files"):
        bm.datasets.summeval(tmp_path)


def test_summeval_offline_message(tmp_path, monkeypatch):
    monkeypatch.setenv("BAYESMETA_DATA", str(tmp_path / "nowhere"))
    with pytest.raises(FileNotFoundError, match="BAYESMETA_DATA"):
        bm.datasets.summeval()
    monkeypatch.delenv("BAYESMETA_DATA")
    monkeypatch.setenv("BAYESMETA_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(bm.datasets, "data_home", lambda: None)
    import urllib.request

    def offline(*a, **k):
        raise OSError("network unreachable")

    monkeypatch.setattr(urllib.request, "urlopen", offline)
    with pytest.raises(FileNotFoundError, match="could not be downloaded"):
        bm.datasets.summeval()
    assert not list((tmp_path / "cache" / "summeval").glob("*.part"))


def test_simulated_is_seeded_and_has_truth():
    a = bm.datasets.simulated(random_seed=5)
    b = bm.datasets.simulated(random_seed=5)
    c = bm.datasets.simulated(random_seed=6)
    xr.testing.assert_identical(a, b)
    assert not a["score"].equals(c["score"])
    assert a["rating"].shape == (17, 100, 3, 4)
    assert a["score"].shape == (17, 100, 12, 2)
    assert set(np.unique(a["rating"])) <= {1.0, 2.0, 3.0, 4.0, 5.0}
    for name in ("true_loading", "true_threshold", "true_trait_corr", "true_run_sd"):
        assert name in a
    # deterministic metrics repeat exactly; stochastic ones do not
    run_diff = abs(a["score"].sel(run="1") - a["score"].sel(run="2")).max(("system", "item"))
    np.testing.assert_array_equal(run_diff.values == 0, a["true_run_sd"].values == 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bm.validate(a)


def test_import_does_not_import_pymc():
    # the package and every module that builds a model: PyMC is imported only when a
    # model is built
    modules = ("bayesmeta, bayesmeta.sampling, bayesmeta.validity.factor_analysis, "
               "bayesmeta.compare, bayesmeta.reliability.true_score, bayesmeta.correlation.model, "
               "bayesmeta.raters.model, bayesmeta.validity.ordinal_cfa")
    code = (f"import sys, {modules}; bad = [m for m in ('pymc', 'pytensor', 'nutpie', "
            "'arviz') if m in sys.modules]; print(','.join(bad))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == ""


def test_ratings_pattern_needs_named_groups():
    with pytest.raises(ValueError, match="needs named groups 'rater' and 'trait'"):
        bm.from_wide(_wide_frame(), system="sys", item="doc", ratings=r"^r\d_coh$")
    with pytest.raises(ValueError, match="no column matches the ratings pattern"):
        bm.from_wide(_wide_frame(), system="sys", item="doc",
                     ratings=r"^(?P<rater>x\d)_(?P<trait>\w+)$")
