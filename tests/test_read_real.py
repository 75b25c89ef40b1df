"""Paper 002's meta-evaluation files (shared/data/nlgeval) through the readers.

Each file loads with ONE ``bm.read_csv`` call and from the command line, with its human
columns as continuous judgments and every metric column read (list cells into the
``reference`` dim); the sample-level Pearson, Spearman and Kendall correlations of every
metric with every criterion, taking the first reference, reproduce the repository's own
``analysis/correlation_<dataset>.csv`` (susisheng/NLGEvaluation, commit 0aa1d45,
``Analysis/analysis.py``: ``scipy.stats.pearsonr/spearmanr/kendalltau`` on the whole file,
``eval(cell)[0]`` for the reference-based columns) to 1e-9.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import bayesmeta as bm
from bayesmeta.cli import main
from bayesmeta.correlation.measures import correlation_measures
from bayesmeta.data import select

# paper 002, Table 1 (and the shared data README): the human columns of each file
HUMAN = {
    "BAGEL": ["informativeness", "naturalness", "quality"],
    "QAGS_CNN": ["fact"],
    "QAGS_XSUM": ["fact"],
    "SFHOT": ["informativeness", "naturalness", "quality"],
    "SFRES": ["informativeness", "naturalness", "quality"],
    "usr_persona_mean": ["Understandable", "Natural", "Maintains Context", "Engaging",
                         "Uses Knowledge", "Overall"],
    "usr_topic_mean": ["Understandable", "Natural", "Maintains Context", "Engaging",
                       "Uses Knowledge", "Overall"],
    "webnlg": ["fluency", "grammar", "semantics"],
}
MEASURES = ["global_pearson", "global_spearman", "global_kendall"]


@pytest.fixture(scope="module")
def nlgeval_dir() -> Path:
    home = bm.datasets.data_home()  # $BAYESMETA_DATA, else ../shared/data beside the repo
    folder = home / "nlgeval" if home is not None else None
    if folder is None or not (folder / "origin").is_dir():
        if os.environ.get("BAYESMETA_REQUIRE_DATA", "") not in ("", "0", "false", "False"):
            pytest.fail("BAYESMETA_REQUIRE_DATA is set but nlgeval/ is missing.")
        pytest.skip("nlgeval data not found (set BAYESMETA_DATA, or put shared/data beside "
                    "the repo)")
    return folder


def _options(name: str) -> dict:
    keys = {"id": "id", "id_split": "_"} if name.startswith("usr") else {"item": "id"}
    return {**keys, "human": HUMAN[name]}


def _read(folder: Path, name: str):
    return bm.read_csv(folder / "origin" / f"{name}.csv", **_options(name))


def test_every_file_is_covered(nlgeval_dir):
    assert sorted(p.stem for p in (nlgeval_dir / "origin").glob("*.csv")) == sorted(HUMAN)
    assert bm.datasets.nlgeval_names() == sorted(HUMAN, key=str.lower)


@pytest.mark.parametrize("name", sorted(HUMAN))
def test_file_loads_with_one_call(nlgeval_dir, name):
    raw = pd.read_csv(nlgeval_dir / "origin" / f"{name}.csv")
    with pytest.warns(bm.data.ReadWarning) as record:
        ds = _read(nlgeval_dir, name)
    text = "\n".join(str(w.message) for w in record)
    assert "metric(s) chosen by default" in text and "left out" not in text
    assert "look like" not in text  # the human columns were named, nothing else looks human
    # human columns: continuous judgments, values as in the file
    assert select.human_traits(ds) == {h: "judgment" for h in HUMAN[name]}
    metric_cols = [c for c in raw.columns if c != "id" and c not in HUMAN[name]]
    assert list(ds["metric"].values) == metric_cols  # EVERY metric column, in file order
    if name.startswith("usr"):
        parts = raw["id"].str.split("_", n=1, expand=True)
        systems, items = parts[1].to_numpy(), parts[0].to_numpy()
        assert ds.sizes["system"] == len(set(systems)) and ds.sizes["item"] == 60
    else:
        systems, items = np.full(len(raw), "all"), raw["id"].astype(str).to_numpy()
        assert ds.sizes["system"] == 1 and ds.sizes["item"] == len(raw)
    si = ds.indexes["system"].get_indexer(systems)
    ii = ds.indexes["item"].get_indexer(items)
    assert (si >= 0).all() and (ii >= 0).all()
    for h in HUMAN[name]:
        np.testing.assert_array_equal(ds["judgment"].sel(trait=h).values[si, ii], raw[h])
    # list cells: parsed independently with json; NaN-padded; reference-free at reference 1
    score = ds["score"].isel(run=0).transpose("metric", "system", "item", "reference").values
    longest = 0
    for m, c in enumerate(metric_cols):
        got = score[m][si, ii]
        if c.endswith(("_src_hypo",)):
            np.testing.assert_array_equal(got[:, 0], raw[c].to_numpy(dtype=float))
            assert np.isnan(got[:, 1:]).all()
            assert not bool(ds["reference_based"].values[m])
            assert ds["inputs"].values[m] == "src"
            continue
        lists = [json.loads(cell) for cell in raw[c]]
        lengths = np.array([len(v) for v in lists])
        longest = max(longest, lengths.max())
        flat = np.concatenate([np.asarray(v, dtype=float) for v in lists])
        mask = np.arange(got.shape[1])[None, :] < lengths[:, None]
        np.testing.assert_array_equal(got[mask], flat)
        assert np.isnan(got[~mask]).all()
        assert bool(ds["reference_based"].values[m]) and ds["inputs"].values[m] == "ref"
    assert ds.sizes["reference"] == longest
    if name == "SFHOT":  # the README: 1 to 154 references per output
        assert longest == 154


@pytest.mark.parametrize("name", sorted(HUMAN))
def test_correlations_reproduce_the_repository(nlgeval_dir, name):
    ds = _read(nlgeval_dir, name)
    expected = pd.read_csv(nlgeval_dir / "analysis" / f"correlation_{name}.csv")
    expected = expected.set_index("metrics")
    scores = select.metric_scores(ds, reference="first")
    # the repository's scipy calls have no NaN handling; its files have no missing value,
    # so pairwise deletion (what correlation_measures does) and scipy on the full columns agree
    assert not np.isnan(scores.values).any() and not np.isnan(ds["judgment"].values).any()
    seen = []
    for trait in HUMAN[name]:
        human = select.human_score(ds, trait)
        assert human.source == "judgment"
        got = correlation_measures(scores, human.values, measures=MEASURES)
        for metric in ds["metric"].values:
            row = f"{trait}_{metric}"  # the repository names rows <criterion>_<metric>
            seen.append(row)
            want = expected.loc[row, ["pearson", "spearman", "kendalltau"]].to_numpy(float)
            np.testing.assert_allclose(got.sel(metric=metric).values, want, rtol=0, atol=1e-9,
                                       err_msg=row)
    assert sorted(seen) == sorted(expected.index)  # every row of the file, no other


def test_reference_reduction_on_sfhot(nlgeval_dir):
    # shared/data README: SFHOT informativeness vs BERTScore-F, Spearman .2206 with the
    # first reference (what the repository used), .2488 with the mean, .1873 with the max
    ds = _read(nlgeval_dir, "SFHOT")
    human = select.human_score(ds, "informativeness").values
    metric = "bertscore_microsoft/deberta-large-mnli_layer_default_ref_hypo_F"
    for reference, value in (("first", 0.2206), ("mean", 0.2488), ("max", 0.1873)):
        scores = select.metric_scores(ds, [metric], reference=reference)
        rho = correlation_measures(scores, human, measures=["global_spearman"]).item()
        assert round(rho, 4) == value, reference


@pytest.mark.parametrize("name", sorted(HUMAN))
def test_dataset_loader_equals_read_csv(nlgeval_dir, name):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the loader names every column: nothing to announce
        loaded = bm.datasets.nlgeval(name)
    direct = _read(nlgeval_dir, name)
    for var in ("judgment", "score"):
        assert loaded[var].equals(direct[var])
    for coord in ("reference_based", "inputs"):
        np.testing.assert_array_equal(loaded[coord].values, direct[coord].values)
    assert "NLGEvaluation" in loaded.attrs["source"]


def test_dataset_loader_names_unknown_dataset(nlgeval_dir):
    with pytest.raises(ValueError, match=r"no nlgeval dataset 'SFHOTT'.*'SFHOT'"):
        bm.datasets.nlgeval("SFHOTT")


@pytest.mark.parametrize("name", sorted(HUMAN))
def test_every_file_reads_from_the_command_line(nlgeval_dir, name, capsys):
    path = str(nlgeval_dir / "origin" / f"{name}.csv")
    keys = ["--id", "id", "--id-split", "_"] if name.startswith("usr") else ["--item", "id"]
    assert main(["read", path, *keys, "--human", ",".join(HUMAN[name])]) == 0
    out, err = capsys.readouterr()
    raw = pd.read_csv(path, nrows=1)
    n_metrics = len(raw.columns) - 1 - len(HUMAN[name])
    assert f"human scores ({len(HUMAN[name])}): " in out
    assert all(f"{h} (judgment)" in out for h in HUMAN[name])
    assert f"metrics ({n_metrics}, chosen default)" in out
    assert "left out (0): none" in out
    assert "reference dim: " in out and "references per output 1 to" in out
    assert "metric(s) chosen by default" in err  # the ReadWarning goes to stderr
