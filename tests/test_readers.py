"""The readers on files of the shapes people have, and one test per friction of issue 10.

The synthetic files mirror public meta-evaluation data that is NOT in shared/ (REALSumm's
per-summary pyramid recall, Newsroom's per-annotator ratings with text columns, paper 002's
layout with other names and a composite id, WMT DA's long tables, HANNA's story table);
every correlation is checked against SciPy on the arrays the test built by hand.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from scipy import stats

import bayesmeta as bm
from bayesmeta.correlation.measures import correlation_measures
from bayesmeta.data import ReadWarning, read_report, select

GLOBAL = ["global_pearson", "global_spearman", "global_kendall"]
SYSTEM = ["system_pearson", "system_spearman", "system_kendall"]


def _scipy(x, z) -> list[float]:
    """Pearson, Spearman, Kendall tau-b on the pairs observed in both (pairwise deletion)."""
    x, z = np.asarray(x, float), np.asarray(z, float)
    ok = ~np.isnan(x) & ~np.isnan(z)
    return [stats.pearsonr(x[ok], z[ok])[0], stats.spearmanr(x[ok], z[ok])[0],
            stats.kendalltau(x[ok], z[ok])[0]]


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return fn(*args, **kwargs)


# ---------------------------------------------------------------- REALSumm-like
def _realsumm(rng) -> pd.DataFrame:
    """Per (summary system, document): pyramid recall (share of SCUs, 0..1), metrics,
    the summary text; unbalanced (some pairs absent), some cells missing."""
    rows = []
    for d in rng.permutation(20):
        for s in ("bart_out", "pegasus_out", "presumm_ext", "matchsum", "heter_graph",
                  "refresh", "neusum", "banditsum"):
            if rng.random() < 0.08:
                continue
            q = rng.normal()
            n_scu = int(rng.integers(5, 12))
            rows.append({"doc_id": int(d), "system_name": s,
                         "litepyramid_recall": rng.binomial(n_scu, 1 / (1 + np.exp(-q))) / n_scu,
                         "rouge_1_f": 0.3 + 0.05 * q + 0.05 * rng.normal(),
                         "bert_score_f": 0.85 + 0.01 * q + 0.01 * rng.normal(),
                         "js-2": -0.1 * q + rng.normal() * 0.1,
                         "summary": f"summary of document {d} by {s}"})
    df = pd.DataFrame(rows)
    df.loc[rng.choice(len(df), 6, replace=False), "rouge_1_f"] = np.nan
    df.loc[rng.choice(len(df), 3, replace=False), "litepyramid_recall"] = np.nan
    return df


def test_realsumm_shape_correlations_match_scipy(tmp_path):
    df = _realsumm(np.random.default_rng(11))
    path = tmp_path / "realsumm.csv"
    df.to_csv(path, index=False)
    with pytest.warns(ReadWarning) as record:
        ds = bm.read_csv(path, system="system_name", item="doc_id",
                         human=["litepyramid_recall"], human_scale=(0, 1))
    text = str(record[0].message)
    assert "left out 1 column(s) not named anywhere: 'summary' (text)" in text
    assert "3 metric(s) chosen by default" in text and "'rouge_1_f', 'bert_score_f', 'js-2'" in text
    assert list(ds["metric"].values) == ["rouge_1_f", "bert_score_f", "js-2"]
    assert select.human_traits(ds) == {"litepyramid_recall": "judgment"}
    human = select.human_score(ds, "litepyramid_recall").values
    scores = select.metric_scores(ds)
    got = correlation_measures(scores, human, measures=GLOBAL + SYSTEM)
    sys_means = df.groupby("system_name").mean(numeric_only=True)  # each over its own rows
    for m in ["rouge_1_f", "bert_score_f", "js-2"]:
        np.testing.assert_allclose(got.sel(metric=m, measure=GLOBAL).values,
                                   _scipy(df[m], df["litepyramid_recall"]), rtol=0, atol=1e-12)
        np.testing.assert_allclose(got.sel(metric=m, measure=SYSTEM).values,
                                   _scipy(sys_means[m], sys_means["litepyramid_recall"]),
                                   rtol=0, atol=1e-12)


# ---------------------------------------------------------------- paper 002 shape, other names
def _lists_file(rng):
    """One row per output, a composite id '<doc>|<system>', averaged human scores, list
    cells of 1 to 5 references (some blank), a reference-free scalar metric."""
    rows, first, mean = [], {"chrf": [], "comet": []}, {"chrf": [], "comet": []}
    for d in range(25):
        n_ref = int(rng.integers(1, 6))
        for s in ("beam", "nucleus", "human"):
            q = rng.normal()
            row = {"key": f"doc{d}|{s}",
                   "adequacy_mean": np.round(rng.integers(1, 6, 3).mean() + 0 * q, 4),
                   "fluency_mean": rng.integers(0, 4, 3).mean() / 3 + 0.1 * q,
                   "perplexity_src_hypo": 20 - 3 * q + rng.normal()}
            for name in ("chrf", "comet"):
                refs = list(0.5 + 0.1 * q + 0.1 * rng.normal(size=n_ref))
                if rng.random() < 0.05:
                    row[name] = ""  # a missing cell
                    first[name].append(np.nan)
                    mean[name].append(np.nan)
                else:
                    row[name] = "[" + ", ".join(repr(float(v)) for v in refs) + "]"
                    first[name].append(refs[0])
                    mean[name].append(np.mean(refs))
            rows.append(row)
    df = pd.DataFrame(rows).rename(columns={"chrf": "chrf_ref", "comet": "comet_src_ref_hypo"})
    return df, first, mean


def test_paper002_shape_with_other_names(tmp_path):
    df, first, mean = _lists_file(np.random.default_rng(5))
    path = tmp_path / "outputs.csv"
    df.to_csv(path, index=False)
    with pytest.warns(ReadWarning, match="3 metric\\(s\\) chosen by default"):
        ds = bm.read_csv(path, id="key", id_split=r"^(?P<item>[^|]+)\|(?P<system>.+)$",
                         human=r"^(?P<trait>\w+)_mean$")
    assert list(ds["system"].values) == ["beam", "nucleus", "human"]
    assert ds.sizes["item"] == 25 and ds.sizes["reference"] == 5
    assert select.human_traits(ds) == {"adequacy": "judgment", "fluency": "judgment"}
    assert list(ds["metric"].values) == ["perplexity_src_hypo", "chrf_ref", "comet_src_ref_hypo"]
    assert list(ds["inputs"].values) == ["src", "", "src+ref"]
    assert list(ds["reference_based"].values) == [False, True, True]
    si = ds.indexes["system"].get_indexer(df["key"].str.split("|").str[1])
    ii = ds.indexes["item"].get_indexer(df["key"].str.split("|").str[0])
    perplexity = ds["score"].sel(metric="perplexity_src_hypo", run="1").values
    np.testing.assert_array_equal(perplexity[si, ii, 0], df["perplexity_src_hypo"])
    assert np.isnan(perplexity[..., 1:]).all()  # reference-free: first reference only
    for reference, truth in (("first", first), ("mean", mean)):
        scores = select.metric_scores(ds, reference=reference)
        for name, col in (("chrf", "chrf_ref"), ("comet", "comet_src_ref_hypo")):
            np.testing.assert_allclose(scores.sel(metric=col).values[si, ii], truth[name],
                                       rtol=1e-15, atol=0)
        for trait in ("adequacy", "fluency"):
            human = select.human_score(ds, trait).values
            got = correlation_measures(scores, human, measures=GLOBAL)
            for name, col in (("chrf", "chrf_ref"), ("comet", "comet_src_ref_hypo")):
                np.testing.assert_allclose(got.sel(metric=col).values,
                                           _scipy(truth[name], df[f"{trait}_mean"]),
                                           rtol=0, atol=1e-12)


# ---------------------------------------------------------------- Newsroom-like ratings
def test_newsroom_shape_ratings_by_annotator(tmp_path):
    rng = np.random.default_rng(8)
    rows = []
    for a in range(30):
        for s in ("fragments", "abstractive", "lede3", "pointer_c", "textrank"):
            q = rng.normal()
            row = {"ArticleID": f"ny-{1000 + a}", "System": s, "ArticleText": "text " * 5,
                   "SystemSummary": f"summary {a} {s}",
                   "rouge_l": 0.3 + 0.05 * q + 0.05 * rng.normal()}
            for t in ("coherence", "fluency"):
                for r in (1, 2, 3):
                    row[f"{t}_{r}"] = int(np.clip(np.round(3 + q + rng.normal()), 1, 5))
            rows.append(row)
    df = pd.DataFrame(rows)
    path = tmp_path / "newsroom.csv"
    df.to_csv(path, index=False)
    with pytest.warns(ReadWarning, match=r"'ArticleText' \(text\), 'SystemSummary' \(text\)"):
        ds = bm.read_csv(path, system="System", item="ArticleID",
                         ratings=r"^(?P<trait>[a-z]+)_(?P<rater>\d)$", metrics=["rouge_l"])
    assert dict(ds.sizes) == {"system": 5, "item": 30, "rater": 3, "trait": 2, "metric": 1,
                              "run": 1}
    human = select.human_score(ds, "coherence")
    assert human.source == "rating mean"
    scores = select.metric_scores(ds)
    got = correlation_measures(scores, human.values, measures=GLOBAL)
    coh = df[["coherence_1", "coherence_2", "coherence_3"]].mean(axis=1)
    np.testing.assert_allclose(got.sel(metric="rouge_l").values, _scipy(df["rouge_l"], coh),
                               rtol=0, atol=1e-12)


# ---------------------------------------------------------------- WMT DA-like long tables
def test_wmt_shape_long_tables():
    rng = np.random.default_rng(2)
    systems, segs = ["Online-A", "Facebook-FAIR", "NiuTrans", "eTranslation"], range(40)
    human = pd.DataFrame([{"system": s, "seg_id": g, "trait": "da_z",
                           "value": rng.normal()} for s in systems for g in segs])
    human = human.sample(frac=0.9, random_state=1)  # not every segment is annotated
    metric = pd.DataFrame([{"system": r.system, "seg_id": r.seg_id, "metric": m,
                            "value": r.value * w + rng.normal()}
                           for r in human.itertuples() for m, w in (("BLEU", .5), ("COMET", 2))])
    ds_h = _quiet(bm.from_long, human, item="seg_id", trait="trait")
    ds_m = _quiet(bm.from_long, metric, item="seg_id", metric="metric")
    ds = xr.merge([ds_h, ds_m], join="outer", combine_attrs="drop_conflicts")
    got = correlation_measures(select.metric_scores(ds), select.human_score(ds, "da_z").values,
                               measures=GLOBAL)
    for m in ("BLEU", "COMET"):
        pair = metric[metric["metric"] == m].merge(human, on=["system", "seg_id"])
        np.testing.assert_allclose(got.sel(metric=m).values,
                                   _scipy(pair["value_x"], pair["value_y"]), rtol=0, atol=1e-12)


# ---------------------------------------------------------------- frictions of issue 10
def test_friction_composite_id_2140_fragments(tmp_path):
    df = pd.DataFrame({"id": ["2140_fragments", "2140_lede3", "2141_fragments", "2141_lede3",
                              "2142_fragments", "2142_lede3"],
                       "doc": [2140, 2140, 2141, 2141, 2142, 2142],
                       "system": ["fragments", "lede3"] * 3,
                       "coherence": [2.6667, 3.0, 4.3333, 1.6667, 3.3333, 5.0],
                       "bleu": [0.1, 0.2, 0.3, 0.25, 0.15, 0.4]})
    path = tmp_path / "newsroom_ids.csv"
    df.to_csv(path, index=False)
    # the call of the issue, which failed with "column 'id' has non-numeric value"
    with pytest.warns(ReadWarning, match=r"left out 1 column\(s\) not named anywhere: 'id' "
                                         r"\(text\)"):
        ds = bm.read_csv(path, system="system", item="doc", human=["coherence"])
    assert list(ds["metric"].values) == ["bleu"]
    # the id alone gives item and system, split at the first '_'
    ds2 = bm.read_csv(path, id="id", id_split="_", human=["coherence"], metrics=["bleu"],
                      exclude=["doc", "system"])
    assert list(ds2["item"].values) == ["2140", "2141", "2142"]
    assert list(ds2["system"].values) == ["fragments", "lede3"]
    assert ds2["judgment"].equals(ds["judgment"]) and ds2["score"].equals(ds["score"])
    assert read_report(ds2).set_index("column").loc["doc", "role"] == "left out"


def test_friction_usr_id_with_spaces_in_system():
    df = pd.DataFrame({"id": ["0_Argmax Decoding", "0_Nucleus Sampling (p = 0.3)",
                              "1_Argmax Decoding", "1_Nucleus Sampling (p = 0.3)"],
                       "Natural": [2.3333, 3.0, 1.0, 2.6667], "m_src_hypo": [.1, .2, .3, .4]})
    ds = bm.from_wide(df, id_split="_", human=["Natural"], metrics=["m_src_hypo"])
    assert list(ds["system"].values) == ["Argmax Decoding", "Nucleus Sampling (p = 0.3)"]
    assert ds["judgment"].sel(system="Argmax Decoding", item="1", trait="Natural") == 1.0


def test_friction_averaged_human_scores_are_judgments():
    df = pd.DataFrame({"system": list("AABB"), "item": [1, 2, 1, 2],
                       "coherence": [2.66667, 4.0, 3.33333, 1.0], "bleu": [.1, .3, .2, .4]})
    with pytest.raises(ValueError, match=r"'coherence' has rating 2.66667 in row 0.*not an "
                                         r"integer.*read them as continuous human scores with "
                                         r"human="):
        bm.from_wide(df, ratings={"coherence": ("mean", "coherence")}, metrics=["bleu"])
    ds = bm.from_wide(df, human=["coherence"], metrics=["bleu"])
    human = select.human_score(ds, "coherence")
    assert human.source == "judgment" and "judgment" in human.label
    np.testing.assert_array_equal(human.values.values.ravel(), df["coherence"].to_numpy())
    # a mapping renames the trait, bounds are checked
    ds = bm.from_wide(df, human={"coherence": "COH"}, human_scale=(1, 5), metrics=["bleu"])
    assert list(ds["trait"].values) == ["COH"] and ds["judgment"].attrs["scale_max"] == 5.0
    with pytest.raises(ValueError, match=r"judgment 2.66667 of trait 'COH'.*off the declared scale "
                                         r"0\.\.1"):
        bm.from_wide(df, human={"coherence": "COH"}, human_scale=(0, 1), metrics=["bleu"])


def test_friction_integer_and_string_labels_meet():
    df = pd.DataFrame({"system": ["A", "A", "A", "B", "B", "B"], "item": [1.0, 2.0, 3.0] * 2,
                       "bleu": [.1, .5, .2, .4, .3, .6]})
    ds = bm.from_wide(df, metrics=["bleu"])
    assert list(ds["item"].values) == ["1", "2", "3"]  # 1.0 -> "1"
    # a human score built the natural way has integer item labels
    human = pd.DataFrame({"system": ["B", "B", "B", "A", "A", "A"], "item": [3, 2, 1] * 2,
                          "h": [2, 1, 3, 5, 4, 1.5]}).set_index(["system", "item"])["h"]
    picked = select.human_score(ds, human=human.to_xarray())
    assert not np.isnan(picked.values).any()
    got = correlation_measures(select.metric_scores(ds), picked.values, measures=GLOBAL)
    aligned = human.reindex(pd.MultiIndex.from_arrays([df["system"], df["item"].astype(int)]))
    np.testing.assert_allclose(got.sel(metric="bleu").values, _scipy(df["bleu"], aligned),
                               rtol=0, atol=1e-12)
    other = human.rename(index=lambda i: f"x{i}" if isinstance(i, int) else i, level="item")
    with pytest.raises(ValueError, match=r"share no label on dim 'item'"):
        select.human_score(ds, human=other.to_xarray())


def _hanna(rng) -> pd.DataFrame:
    rows = []
    for p in range(6):
        for s in ("GPT-2", "Fusion", "HINT", "Human"):
            q = rng.normal()
            row = {"Story ID": len(rows), "Prompt": f"[WP] prompt {p}", "Story": "Once...",
                   "Model": s, "BLEU": 0.1 + 0.01 * q + 0.01 * rng.normal(),
                   "BERTScore F1": 0.8 + 0.02 * rng.normal()}
            for t in ("Relevance", "Coherence"):
                for r in (1, 2, 3):
                    row[f"{t}{r}"] = int(np.clip(np.round(3 + q + rng.normal()), 1, 5))
            rows.append(row)
    return pd.DataFrame(rows)


def test_friction_numeric_ids_and_rating_columns_are_not_silent_metrics():
    df = _hanna(np.random.default_rng(4))
    with pytest.warns(ReadWarning) as record:
        ds = bm.from_wide(df, system="Model", item="Prompt")
    text = str(record[0].message)
    assert "'Story ID' (identifier)" in text and "'Story' (text)" in text
    ratings = [f"{t}{r}" for t in ("Relevance", "Coherence") for r in (1, 2, 3)]
    for c in ratings:
        assert f"'{c}' (name and small integers)" in text
    assert "look like ratings or human scores but were read as metrics; pass ratings=" in text
    assert "Story ID" not in ds["metric"].values
    assert list(ds["metric"].values) == ["BLEU", "BERTScore F1", *ratings]
    assert ds.attrs["metrics_chosen"] == "default"
    # named as ratings, they are ratings and nothing is announced but the left-out columns
    with pytest.warns(ReadWarning) as record:
        ds = bm.from_wide(df, system="Model", item="Prompt",
                          ratings=r"^(?P<trait>[A-Z][a-z]+)(?P<rater>\d)$")
    text = str(record[0].message)
    assert "look like" not in text
    assert list(ds["metric"].values) == ["BLEU", "BERTScore F1"]
    assert list(ds["rater"].values) == ["1", "2", "3"]


def test_friction_run_labels_not_positions(tmp_path):
    df = pd.DataFrame({"system": ["A", "B", "A", "B"] * 2, "item": [1, 1, 2, 2] * 2,
                       "run": [1, 1, 1, 1, 0, 0, 0, 0],
                       "bleu": [.1, .2, .3, .4, .15, .25, .35, .45],
                       "fluency": [1.5, 2.0, 3.5, 4.0] * 2})
    path = tmp_path / "runs.csv"
    df.to_csv(path, index=False)
    ds = bm.read_csv(path, run="run", human=["fluency"], metrics=["bleu"])
    assert list(ds["run"].values) == ["1", "0"]  # strings, in order of appearance
    for label in (0, 1):
        want = df[df["run"] == label].set_index(["system", "item"])["bleu"]
        got = select.metric_scores(ds, run=label).sel(metric="bleu")
        for (s, i), v in want.items():
            assert got.sel(system=s, item=str(i)).item() == v
    assert select.metric_scores(ds, run="0").equals(select.metric_scores(ds, run=0))
    with pytest.raises(ValueError, match=r"2 is not a label of dim 'run'"):
        select.metric_scores(ds, run=2)
    bad = df.assign(fluency=[1.5, 2.0, 3.5, 4.0, 1.5, 2.0, 3.5, 9.0])
    with pytest.raises(ValueError, match=r"column 'fluency' differs between runs for system "
                                         r"'B', item '2' \((9 vs 4|4 vs 9)\)"):
        bm.from_wide(bad, run="run", human=["fluency"], metrics=["bleu"])


def test_friction_list_cells_become_the_reference_dim():
    df = pd.DataFrame({"system": ["A", "A", "B", "B"], "item": [1, 2, 1, 2],
                       "bleu": ["[0.51, 0.66]", "[0.2]", "", "[0.1, nan, 0.3]"],
                       "bart_src_hypo": [-1.0, -2.0, -1.5, -0.5]})
    with pytest.warns(bm.MissingDataWarning, match="score bleu: 1 of 4"):
        ds = bm.from_wide(df, metrics=["bleu", "bart_src_hypo"])
    assert list(ds["reference"].values) == ["1", "2", "3"]
    b = ds["score"].sel(metric="bleu", run="1")
    np.testing.assert_array_equal(b.sel(system="A", item="1").values, [0.51, 0.66, np.nan])
    np.testing.assert_array_equal(b.sel(system="B", item="2").values, [0.1, np.nan, 0.3])
    assert b.sel(system="B", item="1").isnull().all()
    src = ds["score"].sel(metric="bart_src_hypo", run="1")
    np.testing.assert_array_equal(src.isel(reference=0).values, [[-1.0, -2.0], [-1.5, -0.5]])
    assert src.isel(reference=slice(1, None)).isnull().all()
    mean = select.metric_scores(ds, reference="mean").sel(metric="bleu")
    np.testing.assert_allclose(mean.values, [[0.585, 0.2], [np.nan, 0.2]])
    assert list(ds["reference_based"].values) == [True, False]
    # the user's word wins over the inference
    ds = bm.from_wide(df.fillna("[0.4]").replace("", "[0.4]"), metrics=["bleu", "bart_src_hypo"],
                      reference_based=["bleu"], inputs={"bleu": "ref", "bart_src_hypo": "src"})
    assert list(ds["inputs"].values) == ["ref", "src"]
    with pytest.raises(ValueError, match=r"inputs must be one of"):
        bm.from_wide(df, metrics=["bleu"], inputs={"bleu": "reference"})


def test_parse_lists_is_vectorised_and_exact():
    from bayesmeta.data._columns import parse_lists

    rng = np.random.default_rng(0)
    lengths = rng.integers(0, 155, 900)
    values = [rng.normal(size=k) for k in lengths]
    cells = pd.Series(["[" + ", ".join(repr(float(v)) for v in row) + "]" for row in values])
    out, got_lengths = parse_lists(cells, "x")
    np.testing.assert_array_equal(got_lengths, lengths)
    assert out.shape == (900, lengths.max())
    for k in (0, 17, 899):
        np.testing.assert_array_equal(out[k, : lengths[k]], values[k])  # repr round-trips
        assert np.isnan(out[k, lengths[k]:]).all()


def test_read_report_and_attrs_record_every_column():
    df = _hanna(np.random.default_rng(4))
    ds = _quiet(bm.from_wide, df, system="Model", item="Prompt",
                ratings=r"^(?P<trait>[A-Z][a-z]+)(?P<rater>\d)$", exclude=["BERTScore F1"])
    report = read_report(ds).set_index("column")
    assert list(report.index) == list(df.columns)
    assert report.loc["Story ID", "detail"] == "identifier"
    assert report.loc["BERTScore F1", "detail"] == "exclude="
    assert report.loc["Coherence2", "role"] == "rating"
    assert report.loc["BLEU", "role"] == "metric"
    assert report.loc["Model", "role"] == "system"
    assert ds.attrs["format"] == "wide" and ds.attrs["source"] == "a DataFrame"


def test_metrics_as_regex_and_single_system_table():
    df = pd.DataFrame({"id": range(6), "q": [1.5, 2, 3, 4, 2.5, 5],
                       "bleu_ref_hypo": [.1, .2, .3, .4, .5, .6],
                       "bart_src_hypo": [.3, .1, .2, .6, .5, .4], "notes": list("abcdef")})
    with pytest.warns(ReadWarning, match=r"one system labelled 'all'") as record:
        ds = bm.from_wide(df, item="id", human=["q"], metrics=r"_hypo$")
    assert "chosen by default" not in str(record[0].message)
    assert list(ds["metric"].values) == ["bleu_ref_hypo", "bart_src_hypo"]
    assert list(ds["system"].values) == ["all"] and ds.sizes["item"] == 6
    got = correlation_measures(select.metric_scores(ds), select.human_score(ds, "q").values,
                               measures=GLOBAL)
    np.testing.assert_allclose(got.sel(metric="bart_src_hypo").values,
                               _scipy(df["bart_src_hypo"], df["q"]), rtol=0, atol=1e-12)


def test_long_tables_judgments_ratings_and_lists():
    df = pd.DataFrame({"system": list("AABB"), "item": [1, 2, 1, 2], "trait": "coh",
                       "value": [2.5, 3.0, 4.5, 1.0]})
    ds = bm.from_long(df, trait="trait")
    assert "judgment" in ds and ds["judgment"].sel(system="B", item="1", trait="coh") == 4.5
    with pytest.raises(ValueError, match=r"rating 2.5 in row 0.*trait= alone \(long\)"):
        bm.from_long(df.assign(rater="r1"), rater="rater", trait="trait")
    scores = pd.DataFrame({"system": list("AABB"), "item": [1, 2, 1, 2], "metric": "bleu",
                           "value": ["[0.1, 0.2]", "[0.3]", "[0.2, 0.25, 0.5]", "[0.4]"]})
    ds = bm.from_long(scores, metric="metric")
    assert ds["score"].dims[-1] == "reference" and ds.sizes["reference"] == 3
    np.testing.assert_array_equal(ds["score"].sel(system="B", item="1").values.ravel(),
                                  [0.2, 0.25, 0.5])
    refs = pd.DataFrame({"system": ["A"] * 4, "item": [1, 1, 2, 2], "metric": "bleu",
                         "ref": ["r1", "r2", "r1", "r2"], "value": [.1, .2, .3, .4]})
    ds = bm.from_long(refs, metric="metric", reference="ref")
    assert list(ds["reference"].values) == ["r1", "r2"]
    assert ds["score"].sel(item="2", reference="r2").item() == 0.4
