"""Issue 21's bad-input catalogue: every bad input ends in one clear error that names the
file, column, value or dim at fault (or in a documented warning), checked before any long
computation.

``CASES`` is the catalogue: one entry per bad input, with the exception and the text it must
contain. The tests after it check what the readers now keep or record instead of losing
silently (leading zeros, read notes, directions, data quality, numeric scale).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import bayesmeta as bm
from bayesmeta.cli import check_out, main
from bayesmeta.data import ReadWarning, orient, read_report, select

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")


# ----------------------------------------------------------------------------- inputs
def _frame(n_items: int = 6, systems=("A", "B", "C")) -> pd.DataFrame:
    rng = np.random.default_rng(1)
    return pd.DataFrame([{"system": s, "item": f"d{i}",
                          "coherence": float(rng.integers(3, 15)) / 3,
                          "bleu": float(rng.random()), "rouge": float(rng.random())}
                         for s in systems for i in range(n_items)])


def _quiet(fn: Callable, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return fn(*args, **kw)


def _csv(tmp: Path, name: str, df: pd.DataFrame, **kw) -> Path:
    path = tmp / name
    df.to_csv(path, index=False, **kw)
    return path


def _metriceval(tmp: Path, name: str, *, items=("007", "008", "009"), systems=("A", "B"),
                ratings: bool = True, shift: int = 0, metrics=("m1", "m2")) -> Path:
    rng = np.random.default_rng(3)
    rows = []
    for s in systems:
        for i in items:
            row = {"model_id": s, "test_id": i}
            if ratings:
                row.update({"Expert.1.COH": 3 + shift * (s == "A" and i == items[0]),
                            "Expert.2.COH": 4})
            row.update({m: float(rng.random()) for m in metrics})
            rows.append(row)
    path = tmp / name
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def _me_read(tmp, **second):
    return bm.read_csv([_metriceval(tmp, "run1.csv"), _metriceval(tmp, "run2.csv", **second)],
                       format="metriceval")


def _read_csv_text(tmp: Path, text: bytes | str, name: str = "t.csv", **kw):
    path = tmp / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return bm.read_csv(path, **kw)


_LATIN1 = "system,item,bleu,Qualité\nA,1,0.1,2\nB,1,0.2,3\n".encode("latin-1")


def _mixed_n_refs(tmp):
    rows = [{"corruption": "neg_subj", "metric": "m", "n_refs": n, "pair_id": p,
             "score_original": 1.0 + p / 10, "score_corrupted": 0.5}
            for n in (5, "5") for p in range(4)]
    return bm.metric_unit_tests(pd.DataFrame(rows))


def _saved_dataset(tmp):
    path = tmp / "data.nc"
    bm.datasets.simulated(n_systems=3, n_items=4).drop_attrs().to_netcdf(path,
                                                                        engine="h5netcdf")
    return bm.load(path)


def _usr_like(tmp, **kw):
    """USR's shape: six averaged human columns; two are named."""
    rng = np.random.default_rng(5)
    n = 30
    df = pd.DataFrame({"id": [f"{i}_{s}" for i in range(n // 3) for s in ("greedy", "nucleus",
                                                                           "human")]})
    for c in ("Understandable", "Natural", "Maintains Context", "Engaging", "Overall"):
        df[c] = rng.integers(3, 10, n) / 3
    df["q7"] = rng.integers(3, 10, n) / 3  # not a human-looking name: caught by its scale
    df["bleu_ref_hypo"] = rng.random(n)
    return bm.read_csv(_csv(tmp, "usr.csv", df), id="id", id_split="_", **kw)


def _corroboration_twice(tmp):
    ds = orient(bm.datasets.simulated(n_systems=4, n_items=6), lower_is_better=["metric01.COH"])
    return bm.corroboration(ds, "COH", directions={"metric01.COH": "lower"})


def _no_write(tmp):
    from unittest import mock

    folder = tmp / "locked"
    folder.mkdir()
    with mock.patch("os.access", return_value=False):  # as for a read-only folder (root too)
        return check_out(folder / "r.html")


# (id, call(tmp_path), exception, text the message must contain (a regex))
CASES: list[tuple[str, Callable[[Path], object], type[Exception], str]] = [
    # --- not a text table, or not in the expected encoding
    ("png", lambda t: _read_csv_text(t, b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "plot.png"),
     ValueError, r"'.*plot\.png' is not a text table: it looks like a PNG image"),
    ("pdf", lambda t: _read_csv_text(t, b"%PDF-1.7\n...", "paper.pdf"),
     ValueError, r"paper\.pdf' is not a text table: it looks like a PDF document"),
    ("xlsx", lambda t: _read_csv_text(t, b"PK\x03\x04\x14\x00", "scores.xlsx"),
     ValueError, r"scores\.xlsx' is not a text table: it looks like a ZIP archive \(an \.xlsx"),
    ("old-xls", lambda t: _read_csv_text(t, b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1\x00", "s.xls"),
     ValueError, r"s\.xls' is not a text table: it looks like an old Excel"),
    ("gzip", lambda t: _read_csv_text(t, b"\x1f\x8b\x08\x00", "s.csv.gz"),
     ValueError, r"s\.csv\.gz' is not a text table: it looks like a gzip archive"),
    ("utf16-no-bom", lambda t: _read_csv_text(t, "system,item\nA,1\n".encode("utf-16-le")),
     ValueError, r"t\.csv' is not a text table: it holds NUL bytes .*encoding='utf-16-le'"),
    ("latin-1", lambda t: _read_csv_text(t, _LATIN1),
     ValueError, r"t\.csv' is not utf-8 text: byte 0xe9 at position 23 \(line 1\) cannot be "
                 r"decoded; pass encoding= \(CLI --encoding\)"),
    ("excel-unicode-text", lambda t: _read_csv_text(
        t, "system\titem\tbleu\nA\t1\t0.5\n".encode("utf-16"), "export.txt"),
     ValueError, r"export\.txt' has a single column 'system\\titem\\tbleu': it seems to be "
                 r"separated by '\\\\t'; pass sep="),
    ("wrong-encoding-given", lambda t: _read_csv_text(t, "system,item,é\n", encoding="ascii"),
     ValueError, r"t\.csv' is not ascii text: byte 0xc3 .*pass the file's actual encoding="),
    ("unknown-encoding", lambda t: _read_csv_text(t, "system,item\n", encoding="utf-99"),
     ValueError, r"unknown encoding 'utf-99'"),
    ("empty-file", lambda t: _read_csv_text(t, "\n\n"),
     ValueError, r"t\.csv' is empty: there is no header and no row"),
    ("missing-file", lambda t: bm.read_csv(t / "nope.csv"),
     FileNotFoundError, r"CSV file not found: '.*nope\.csv'"),
    ("semicolons", lambda t: _read_csv_text(t, "system;item;bleu\nA;1;0,5\n"),
     ValueError, r"single column 'system;item;bleu': it seems to be separated by ';'"),
    ("duplicate-header", lambda t: _read_csv_text(t, "system,item,bleu,bleu\nA,1,.1,.2\n"),
     ValueError, r"duplicate column name\(s\) in its header: 'bleu' \(columns 3, 4\)"),
    # --- MetricEval run files
    ("runs-disjoint-items", lambda t: _me_read(t, items=("100", "101", "102")),
     ValueError, r"the runs share no label on dim 'item' \(column 'test_id'\): run 2 "
                 r"\('.*run2\.csv'\) lacks 3 of run 1's test_id\(s\) '007', '008', '009' and "
                 r"has 3 test_id\(s\) run 1 lacks '100', '101', '102'"),
    ("runs-some-items", lambda t: _me_read(t, items=("007", "008")),
     ValueError, r"the runs differ on dim 'item' \(column 'test_id'\): run 2 .* lacks 1 of run "
                 r"1's test_id\(s\) '009'"),
    ("runs-disjoint-systems", lambda t: _me_read(t, systems=("C", "D")),
     ValueError, r"share no label on dim 'system' \(column 'model_id'\)"),
    ("run2-without-experts", lambda t: _me_read(t, ratings=False),
     ValueError, r"run 2 \('.*run2\.csv'\) lacks the expert rating column\(s\) 'Expert\.1\.COH', "
                 r"'Expert\.2\.COH' of run 1"),
    ("run2-without-a-metric", lambda t: _me_read(t, metrics=("m1",)),
     ValueError, r"run 2 \('.*run2\.csv'\) lacks metric column\(s\) 'm2'"),
    ("runs-ratings-differ", lambda t: _me_read(t, shift=1),
     ValueError, r"expert ratings differ between run 1 and run 2 for model_id='A', "
                 r"test_id='007'"),
    ("wide-runs-disjoint-items", lambda t: _quiet(bm.from_wide, pd.concat(
        [_frame().assign(run="1"), _frame().assign(run="2", item=lambda d: "x" + d["item"])]),
        human=["coherence"], run="run"),
     ValueError, r"the runs share no label on dim 'item' \(column 'item'\): run '2' lacks 6 "
                 r"of run '1''s item\(s\) 'd0', 'd1'"),
    ("long-runs-differ", lambda t: _quiet(bm.from_long, pd.DataFrame(
        {"system": ["A", "A", "A"], "item": ["1", "2", "1"], "metric": "m",
         "run": ["1", "1", "2"], "value": [.1, .2, .3]}), metric="metric", run="run"),
     ValueError, r"the runs differ on dim 'item' \(column 'item'\): run '2' lacks 1 of run "
                 r"'1''s item\(s\) '2'"),
    ("metriceval-no-test-id", lambda t: bm.read_csv(
        _csv(t, "x.csv", pd.DataFrame({"model_id": ["A"], "doc": [1], "m": [.5]})),
        format="metriceval"),
     ValueError, r"unknown MetricEval key column \(in '.*x\.csv'\) 'test_id'"),
    # --- human columns that would silently become metrics
    ("usr-two-of-six-human", lambda t: _usr_like(t, human=["Natural", "Maintains Context"]),
     ValueError, r"'Understandable' \(name and values on the declared human scores' scale\), "
                 r"'Engaging' \(name and .*\), 'Overall' \(name and .*\), 'q7' \(values on "
                 r"the declared human scores' scale\) look like human scores but are not "
                 r"declared"),
    ("usr-cli-hint", lambda t: _usr_like(t, human=["Natural"]),
     ValueError, r"CLI --human \"Natural,Understandable,Maintains Context,Engaging,Overall,"
                 r"q7\""),
    ("rating-like-with-human", lambda t: _quiet(
        bm.from_wide, _frame().assign(votes=np.tile([1, 2, 3], 6)), human=["coherence"]),
     ValueError, r"'votes' \(small integers\) look like human scores but are not declared"),
    # --- metric directions
    ("direction-unknown-metric", lambda t: _quiet(bm.from_wide, _frame(), human=["coherence"],
                                                  lower_is_better=["bleux"]),
     ValueError, r"unknown metric\(s\) 'bleux' .*did you mean 'bleu'"),
    ("direction-bad-value", lambda t: _quiet(bm.from_wide, _frame(), human=["coherence"],
                                             directions={"bleu": "down"}),
     ValueError, r"a direction must be 'higher' or 'lower', got \{'bleu': 'down'\}"),
    ("direction-twice", lambda t: _quiet(bm.from_wide, _frame(), human=["coherence"],
                                         directions={"bleu": "higher"},
                                         lower_is_better="bleu"),
     ValueError, r"'bleu' are given as 'higher' in directions= and in lower_is_better="),
    ("direction-no-metric", lambda t: _quiet(bm.from_wide, _frame(), human=["coherence"],
                                             metrics=[], lower_is_better=["bleu"]),
     ValueError, r"describe metrics, but no metric was read"),
    ("direction-declared-twice", _corroboration_twice,
     ValueError, r"\['metric01\.COH'\] are declared lower-is-better in the data .*and again in "
                 r"directions="),
    # --- bm.load of files that are not saved results
    ("load-csv", lambda t: bm.load(_csv(t, "scores.csv", _frame())),
     ValueError, r"scores\.csv' is not a bayesmeta result saved with Result\.save\(\)"),
    ("load-dataset", _saved_dataset,
     ValueError, r"data\.nc' is not a bayesmeta result .*without the 'bayesmeta_class'"),
    ("load-missing", lambda t: bm.load(t / "fit.nc"),
     FileNotFoundError, r"no saved result '.*fit\.nc'"),
    # --- report --out, checked before any computation
    ("out-is-folder", lambda t: check_out(t),
     ValueError, r"--out '.*' is a folder; give a file name"),
    ("out-no-folder", lambda t: check_out(t / "missing" / "r.html"),
     ValueError, r"--out '.*r\.html': the folder '.*missing' does not exist"),
    ("out-unwritable", _no_write,
     ValueError, r"--out '.*r\.html': the folder '.*locked' cannot be written"),
    # --- score tables of the unit tests
    ("n-refs-fraction", lambda t: bm.metric_unit_tests(pd.DataFrame(
        [{"corruption": "neg_subj", "metric": "m", "n_refs": 2.5, "pair_id": 0,
          "score_original": 1.0, "score_corrupted": 0.5}])),
     ValueError, r"column 'n_refs' holds 2\.5, which is not a whole number"),
    ("n-refs-duplicate-after-normalising", lambda t: bm.metric_unit_tests(pd.DataFrame(
        [{"corruption": "neg_subj", "metric": "m", "n_refs": n, "pair_id": 0,
          "score_original": 1.0, "score_corrupted": 0.5} for n in (5, "5")])),
     ValueError, r"duplicate row for corruption 'neg_subj', metric 'm', n_refs 5, pair_id 0"),
    # --- cells, keys and options (issue 10's catalogue, kept)
    ("missing-key", lambda t: _quiet(bm.from_wide, _frame().assign(
        item=[None] + [f"d{i}" for i in range(1, 18)]), human=["coherence"]),
     ValueError, r"key column 'item' has 1 missing value\(s\), first in row 0"),
    ("duplicate-key", lambda t: _quiet(bm.from_wide, pd.concat([_frame(), _frame().head(1)]),
                                       human=["coherence"]),
     ValueError, r"duplicate \(system, item\) key: system='A', item='d0' appears 2 times"),
    ("id-without-separator", lambda t: _quiet(bm.from_wide, _frame().assign(id="d0"),
                                              id="id", id_split="_",
                                              exclude=["system", "item"]),
     ValueError, r"id column 'id': value 'd0' in row 0 has no separator '_'"),
    ("decimal-commas", lambda t: _read_csv_text(t, 'system,item,bleu\nA,1,"0,5"\nB,1,"0,7"\n'),
     TypeError, r"column 'bleu' looks like numbers with decimal commas \('0,5'\); pass "
                r"decimal=','"),
    ("infinite-score", lambda t: _quiet(bm.from_wide, _frame().assign(
        bleu=[np.inf] + [0.5] * 17), human=["coherence"]),
     ValueError, r"infinite values for metric\(s\) 'bleu', first at metric 'bleu', system 'A', "
                 r"item 'd0'"),
    ("malformed-list", lambda t: _quiet(bm.from_wide, _frame().assign(
        bleu=["[0.1; 0.2]"] + ["[0.3]"] * 17), human=["coherence"], metrics=["bleu"]),
     ValueError, r"column 'bleu' has a malformed list cell in row 0: '\[0\.1; 0\.2\]'"),
    ("text-in-metric", lambda t: _quiet(bm.from_wide, _frame().assign(
        rouge=["error"] + [0.5] * 17), human=["coherence"], metrics=["rouge"]),
     TypeError, r"metric column 'rouge' has non-numeric value 'error' in row 0"),
    ("empty-human", lambda t: _quiet(bm.from_wide, _frame().assign(coherence=np.nan),
                                     human=["coherence"]),
     ValueError, r"human column 'coherence' is entirely empty"),
    ("rating-off-scale", lambda t: _quiet(bm.from_wide, _frame().assign(
        r1=[9] + [3] * 17), ratings={"r1": ("r1", "coh")}, metrics=["bleu"]),
     ValueError, r"column 'r1' has rating 9 in row 0, which is not an integer on the scale "
                 r"1\.\.5"),
    ("unknown-human-column", lambda t: _quiet(bm.from_wide, _frame(), human=["coherance"]),
     ValueError, r"unknown human column 'coherance'.*Did you mean 'coherence'"),
    ("human-list-cells", lambda t: _quiet(bm.from_wide, _frame().assign(
        coherence=["[2.5]"] * 18), human=["coherence"], metrics=["bleu"]),
     ValueError, r"human column 'coherence' holds list cells"),
    ("two-roles", lambda t: _quiet(bm.from_wide, _frame(), human=["bleu"], metrics=["bleu"]),
     ValueError, r"column 'bleu' is named as a metric and as a key, rating, human score"),
    ("unknown-format", lambda t: bm.read_csv(_csv(t, "a.csv", _frame()), format="tall"),
     ValueError, r"format must be 'wide', 'long' or 'metriceval', got 'tall'"),
    ("long-option-in-wide", lambda t: bm.read_csv(_csv(t, "a.csv", _frame()), rater="r"),
     TypeError, r"rater belong to format='long'"),
    ("ratings-pattern-groups", lambda t: _quiet(bm.from_wide, _frame(), ratings=r"^r\d$"),
     ValueError, r"the ratings pattern '\^r.*d\$' needs named groups 'rater' and 'trait'"),
    # --- data quality
    ("quality-no-score", lambda t: bm.data_quality(
        _quiet(bm.from_wide, _frame(), human=["coherence"], metrics=[])),
     ValueError, r"data has no 'score' variable"),
    ("quality-unknown-trait", lambda t: bm.data_quality(
        _quiet(bm.from_wide, _frame(), human=["coherence"]), traits="fluency"),
     ValueError, r"'fluency' is not a label of dim 'trait'"),
]


@pytest.mark.parametrize(("case", "call", "error", "text"), CASES,
                         ids=[c[0] for c in CASES])
def test_bad_input_is_named(case, call, error, text, tmp_path):
    with pytest.raises(error, match=text):
        _quiet(call, tmp_path)


def test_catalogue_has_forty_cases():
    assert len(CASES) >= 40
    assert len({c[0] for c in CASES}) == len(CASES)


# ----------------------------------------------------------------------------- kept, not lost
def test_leading_zeros_of_ids_are_kept(tmp_path):
    df = pd.DataFrame({"system": ["A"] * 20 + ["B"] * 20,
                       "item": [f"{i:03d}" for i in range(20)] * 2,
                       "coherence": 3.0, "bleu": np.linspace(0, 1, 40)})
    ds = _quiet(bm.read_csv, _csv(tmp_path, "z.csv", df), human=["coherence"])
    assert list(ds["item"].values[:3]) == ["000", "001", "002"]
    me = _quiet(bm.read_csv, [_metriceval(tmp_path, "r1.csv"), _metriceval(tmp_path, "r2.csv")],
                format="metriceval")
    assert list(me["item"].values) == ["007", "008", "009"]
    long = pd.DataFrame({"system": ["A", "B"], "item": ["01", "01"], "metric": "m",
                         "value": [0.1, 0.2]})
    ds = _quiet(bm.read_csv, _csv(tmp_path, "l.csv", long), format="long", metric="metric")
    assert list(ds["item"].values) == ["01"]


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16", "utf-16-be", "utf-32"])
def test_byte_order_marks_are_read(tmp_path, encoding):
    path = tmp_path / "bom.csv"
    text = "system,item,bleu,Qualité\nA,1,0.1,2\nB,1,0.2,3\n"
    enc = "utf-16" if encoding == "utf-16-be" else encoding
    raw = text.encode(enc) if encoding != "utf-16-be" else b"\xfe\xff" + text.encode(
        "utf-16-be")
    path.write_bytes(raw)
    ds = _quiet(bm.read_csv, path, human=["Qualité"])
    assert list(ds["trait"].values) == ["Qualité"]


def test_latin1_reads_with_encoding_and_cli_names_the_option(tmp_path, capsys):
    path = tmp_path / "l1.csv"
    path.write_bytes(_LATIN1)
    ds = _quiet(bm.read_csv, path, human=["Qualité"], encoding="latin-1")
    assert list(ds["trait"].values) == ["Qualité"]
    assert main(["read", str(path), "--human", "Qualité"]) == 2
    assert "--encoding" in capsys.readouterr().err
    assert main(["read", str(path), "--human", "Qualité", "--encoding", "latin-1"]) == 0


def test_read_notes_are_kept_on_the_dataset():
    df = _frame().drop(columns="coherence").assign(Overall=np.tile([1, 2, 3], 6))
    with pytest.warns(ReadWarning):
        ds = bm.from_wide(df)
    notes = read_report(ds).attrs["notes"]
    assert any("3 metric(s) chosen by default" in n for n in notes)
    assert any("'Overall' (name and small integers) look like ratings" in n for n in notes)
    assert ds.attrs["read_notes"] == "\n".join(notes)


def test_cli_report_out_is_checked_before_reading(tmp_path, capsys):
    bad = tmp_path / "not-a-table.png"
    bad.write_bytes(b"\x89PNG\r\n\x1a\n")
    assert main(["report", str(bad), "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "is a folder" in err and "PNG" not in err  # the --out check came first


def test_cli_lower_is_better_and_encoding_options(tmp_path):
    from bayesmeta.cli import build_parser, read_options

    args = build_parser().parse_args(["read", "x.csv", "--lower-is-better", "TER,WER",
                                      "--lower-is-better", "BaryScore", "--encoding",
                                      "cp1252"])
    opts = read_options(args)
    assert opts["lower_is_better"] == ["TER", "WER", "BaryScore"]
    assert opts["encoding"] == "cp1252"


# ----------------------------------------------------------------------------- directions
def _quality_frame(n_systems: int = 6, n_items: int = 8) -> pd.DataFrame:
    rng = np.random.default_rng(7)
    quality = rng.normal(size=n_systems)
    rows = []
    for s in range(n_systems):
        for i in range(n_items):
            h = quality[s] + rng.normal(scale=0.3)
            rows.append({"system": f"S{s}", "item": f"i{i}", "human": h,
                         "good1": h + rng.normal(scale=0.3), "good2": h + rng.normal(scale=.3),
                         "good3": h + rng.normal(scale=0.3),
                         "distance": -h + rng.normal(scale=0.3),
                         "const": 0.25, "binary": float(h > 0),
                         "bleu": (h + 3) * 1e-78, "huge": (h + 3) * 1e307,
                         "sparse": h if i == 0 else np.nan})
    return pd.DataFrame(rows)


def test_lower_is_better_orients_scores_in_the_selection_layer():
    df = _quality_frame()
    plain = _quiet(bm.from_wide, df, human=["human"], metrics=["good1", "distance"])
    ds = _quiet(bm.from_wide, df, human=["human"], metrics=["good1", "distance"],
                lower_is_better=["distance"])
    assert ds["higher_is_better"].values.tolist() == [True, False]
    rr = read_report(ds)
    assert rr[rr["role"] == "direction"]["column"].tolist() == ["distance"]
    x, x0 = select.metric_scores(ds), select.metric_scores(plain)
    np.testing.assert_array_equal(x.sel(metric="distance"), -x0.sel(metric="distance"))
    np.testing.assert_array_equal(x.sel(metric="good1"), x0.sel(metric="good1"))
    assert x.attrs["orientation"].endswith(": distance")
    # the same with directions=, and on the dataset's raw score nothing changes
    ds2 = _quiet(bm.from_wide, df, human=["human"], metrics=["good1", "distance"],
                 directions={"distance": "lower"})
    assert ds2["higher_is_better"].values.tolist() == [True, False]
    np.testing.assert_array_equal(ds2["score"], plain["score"])


def test_data_quality_findings():
    df = _quality_frame()
    ds = _quiet(bm.from_wide, df, human=["human"],
                metrics=["good1", "good2", "good3", "distance", "const", "binary", "bleu",
                         "huge", "sparse"])
    q = bm.data_quality(ds)
    assert list(q.columns) == ["metric", "finding", "reason", "value"]
    found = set(map(tuple, q[["metric", "finding"]].to_numpy()))
    assert found == {("distance", "suspicious direction"), ("const", "constant"),
                     ("binary", "tied"), ("bleu", "underflow"), ("huge", "overflow"),
                     ("sparse", "near-empty")}
    reasons = q.set_index(["metric", "finding"])["reason"]
    assert reasons[("bleu", "underflow")].startswith("every |value| <= ")
    assert reasons[("sparse", "near-empty")].startswith("88% of its values are missing")
    distance = q[q["metric"] == "distance"]["reason"].tolist()
    assert distance[0].startswith("its name says lower is better")
    assert distance[1].startswith("correlates negatively with the human score at system level")
    # declared lower-is-better: read negated, so no longer suspicious
    oriented = orient(ds, lower_is_better=["distance"])
    q2 = bm.data_quality(oriented)
    assert "distance" not in set(q2["metric"])
    assert q2.attrs["checked"] == 9


def test_data_quality_flags_distance_names():
    df = _quality_frame().rename(columns={"good3": "BaryScore"})
    ds = _quiet(bm.from_wide, df, human=["human"], metrics=["good1", "BaryScore"])
    q = bm.data_quality(ds)
    assert q.set_index("metric").loc["BaryScore", "reason"].startswith(
        "its name says lower is better")


def test_data_quality_of_clean_data_is_empty():
    q = bm.data_quality(bm.datasets.simulated())
    assert q.empty and list(q.columns) == ["metric", "finding", "reason", "value"]


# ----------------------------------------------------------------------------- numeric scale
@pytest.mark.parametrize("scale", [1e307, 1e-300, 2.0**-60, 1e150])
def test_correlations_do_not_depend_on_the_metric_scale(scale):
    from bayesmeta.correlation.measures import correlation_measures

    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 5, 30))
    z = x[0] + rng.normal(size=(5, 30))
    base = correlation_measures(x, z)
    scaled = correlation_measures(x * scale, z)
    np.testing.assert_allclose(scaled.values, base.values, rtol=1e-12, atol=1e-12)
    ws = scaled.sel(measure="within_system_pearson").values
    np.testing.assert_allclose(ws, base.sel(measure="within_system_pearson").values,
                               rtol=1e-12)


def test_power_of_two_scaling_is_bit_for_bit_on_ordinary_scales():
    from bayesmeta.correlation.measures import correlation_measures

    rng = np.random.default_rng(1)
    x = rng.normal(size=(3, 6, 20)) * 2.0**5
    z = rng.normal(size=(6, 20))
    np.testing.assert_array_equal(correlation_measures(x, z).values,
                                  correlation_measures(x * 2.0**-9, z).values)


def test_a_metric_of_magnitude_1e307_correlates_as_at_magnitude_1():
    ds = bm.datasets.simulated(n_systems=6, n_items=20)
    big = ds.copy(deep=True)
    big["score"].values[:, :, 0, :] *= 1e307
    opts = dict(measures=["within_system_pearson", "global_pearson", "system_pearson"],
                random_seed=0, resampling={"n_resamples": 20, "n_permutations": 0})
    a = bm.correlations(ds, "COH", **opts).summary()
    b = bm.correlations(big, "COH", **opts).summary()
    np.testing.assert_allclose(b["classical"].astype(float), a["classical"].astype(float),
                               rtol=1e-12)



def test_report_page_shows_read_decisions_and_data_quality():
    df = _quality_frame().drop(columns=["sparse", "huge", "binary"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        ds = bm.from_wide(df, human=["human"])
        rep = bm.report(ds, sections=["data"], random_seed=0)
    section = rep.section("data")
    assert section.status == "ok", section.error
    html = rep.html()
    assert "How the reader read each column" in html
    assert "metric(s) chosen by default" in html  # the ReadWarning's note, on the page
    assert "Data-quality findings per metric" in html
    assert "underflow" in html and "suspicious direction" in html
    assert "chose the 6 metric(s) by default" in section.output.reading


def test_design_file_takes_encoding_and_lower_is_better(tmp_path):
    from bayesmeta.cli import load_design

    path = tmp_path / "design.toml"
    path.write_text('data = ["s.csv"]\n[read]\nencoding = "latin-1"\n'
                    'lower_is_better = ["TER", "BaryScore"]\n')
    design = load_design(path)
    assert design["encoding"] == "latin-1"
    assert design["lower_is_better"] == ["TER", "BaryScore"]


def test_orient_scores_keeps_extra_dims():
    ds = bm.datasets.simulated(n_systems=3, n_items=4)
    oriented = orient(ds, lower_is_better=["metric02.CON"])
    out = select.orient_scores(oriented["score"])
    assert out.dims == ds["score"].dims
    np.testing.assert_array_equal(out.sel(metric="metric02.CON"),
                                  -ds["score"].sel(metric="metric02.CON"))
    np.testing.assert_array_equal(out.sel(metric="metric01.COH"),
                                  ds["score"].sel(metric="metric01.COH"))
    plain = ds["score"]
    assert select.orient_scores(plain) is plain  # nothing declared: unchanged
