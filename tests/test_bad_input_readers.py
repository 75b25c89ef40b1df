"""The reader half of issue 10's bad-input catalogue: each case with its asserted behaviour.

No NumPy RuntimeWarning may escape a reader: every test here runs with RuntimeWarning as an
error.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import bayesmeta as bm
from bayesmeta.data import ReadWarning, read_report, select

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")


def _frame(n_items: int = 6, systems=("A", "B", "C")) -> pd.DataFrame:
    rng = np.random.default_rng(1)
    rows = [{"system": s, "item": f"d{i}", "coherence": float(rng.integers(3, 15)) / 3,
             "bleu": float(rng.random()), "rouge": float(rng.random())}
            for s in systems for i in range(n_items)]
    return pd.DataFrame(rows)


def _read(df, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        warnings.simplefilter("error", RuntimeWarning)
        return bm.from_wide(df, **kw)


def test_all_nan_metric_column():
    df = _frame().assign(empty=np.nan)
    # not named: left out, and the warning says so
    with pytest.warns(ReadWarning, match=r"left out 1 column\(s\) not named anywhere: "
                                         r"'empty' \(entirely empty\)"):
        ds = bm.from_wide(df, human=["coherence"])
    assert list(ds["metric"].values) == ["bleu", "rouge"]
    # named: an error naming it
    with pytest.raises(ValueError, match=r"metric column 'empty' is entirely empty"):
        bm.from_wide(df, human=["coherence"], metrics=["bleu", "empty"])
    # a column of blanks read from text is empty too
    with pytest.raises(ValueError, match=r"metric column 'blank' is entirely empty"):
        bm.from_wide(df.assign(blank=" "), human=["coherence"], metrics=["blank"])
    # all values missing after parsing ('nan' strings): the schema names the metric
    with pytest.raises(ValueError, match=r"metric column 'nan_text' has no number in any row"):
        bm.from_wide(df.assign(nan_text="nan"), human=["coherence"], metrics=["nan_text"])
    with pytest.warns(ReadWarning, match=r"'nan_text' \(entirely empty\)"):
        ds = bm.from_wide(df.assign(nan_text="nan"), human=["coherence"])
    assert "nan_text" not in ds["metric"].values


def test_constant_metric_reads_fine():
    df = _frame().assign(const=0.5)
    ds = _read(df, human=["coherence"], metrics=["bleu", "const"])
    assert (ds["score"].sel(metric="const").values == 0.5).all()
    assert "const" in ds["metric"].values


def test_rating_columns_in_a_wide_file_without_ratings():
    df = _frame()
    rng = np.random.default_rng(2)
    for r in (1, 2):
        df[f"Expert.{r}.COH"] = rng.integers(1, 6, len(df))
    # issue 21: with a human column named, undeclared human-looking columns are an error
    with pytest.raises(ValueError, match=r"column\(s\) 'Expert.1.COH' \(name and small "
                                         r"integers\), 'Expert.2.COH' \(name and small "
                                         r"integers\) look like human scores but are not "
                                         r"declared: 1 human column\(s\) \('coherence'\)"):
        bm.from_wide(df, human=["coherence"])
    # with none named, they are read as metrics and flagged, in the warning and on the data
    with pytest.warns(ReadWarning) as record:
        ds = bm.from_wide(df.drop(columns="coherence"))
    text = str(record[0].message)
    assert ("column(s) 'Expert.1.COH' (name and small integers), 'Expert.2.COH' (name and "
            "small integers) look like ratings or human scores but were read as metrics; pass "
            "ratings= (ordinal, by rater) or human= (continuous)") in text
    assert "4 metric(s) chosen by default" in text
    report = read_report(ds)
    assert report.set_index("column").loc["Expert.1.COH", "detail"].startswith(
        "numbers; looks like a human score")
    assert any("look like ratings or human scores" in n for n in report.attrs["notes"])
    # a rating-like column by its values alone
    df2 = _frame().assign(score_x=np.tile([1, 2, 3], 6))
    with pytest.raises(ValueError, match=r"'score_x' \(small integers\) look like human"):
        bm.from_wide(df2, human=["coherence"])
    with pytest.warns(ReadWarning, match=r"'score_x' \(small integers\) look like ratings"):
        bm.from_wide(df2.drop(columns="coherence"))
    # named, they are ratings and nothing is flagged
    with warnings.catch_warnings():
        warnings.simplefilter("error", ReadWarning)
        ds = _read(df, human=["coherence"], metrics=["bleu", "rouge"],
                   ratings=r"^(?P<rater>Expert\.\d)\.(?P<trait>\w+)$")
    assert list(ds["rater"].values) == ["Expert.1", "Expert.2"]
    assert select.human_traits(ds) == {"COH": "rating", "coherence": "judgment"}


def test_infinite_score():
    df = _frame()
    df.loc[4, "bleu"] = np.inf
    with pytest.raises(ValueError, match=r"infinite values for metric\(s\) 'bleu', first at "
                                         r"metric 'bleu', system 'A', item 'd4'"):
        _read(df, human=["coherence"], metrics=["bleu"])
    lists = _frame().assign(bleu=["[0.1, inf]"] + ["[0.2]"] * 17)
    with pytest.raises(ValueError, match=r"infinite values for metric\(s\) 'bleu'.*system 'A', "
                                         r"item 'd0'"):
        _read(lists, human=["coherence"], metrics=["bleu"])
    df = _frame()
    df.loc[2, "coherence"] = -np.inf
    with pytest.raises(ValueError, match=r"judgment has an infinite value for trait "
                                         r"'coherence' \(system 'A', item 'd2'\)"):
        _read(df, human=["coherence"], metrics=["bleu"])


def test_missing_key(tmp_path):
    df = _frame()
    df.loc[7, "item"] = None
    with pytest.raises(ValueError, match=r"key column 'item' has 1 missing value\(s\), first "
                                         r"in row 7"):
        _read(df, human=["coherence"])
    df = _frame()
    df.loc[3, "system"] = "  "
    with pytest.raises(ValueError, match=r"key column 'system' has 1 missing value\(s\), first "
                                         r"in row 3"):
        _read(df, human=["coherence"])
    df = _frame().drop(columns="item")
    with pytest.raises(ValueError, match=r"no item column: name the column"):
        _read(df, human=["coherence"])
    path = tmp_path / "k.csv"
    _frame().to_csv(path, index=False)
    with pytest.raises(ValueError, match=r"unknown key column 'doc'.*not in the data"):
        bm.read_csv(path, item="doc")


def test_whitespace_variants_of_a_label():
    df = _frame(n_items=3)
    df.loc[df["system"] == "B", "system"] = ["B", " B", "B "]
    with pytest.warns(ReadWarning, match=r"column 'system': labels 'B', ' B', 'B ' are read as "
                                         r"one label 'B'"):
        ds = bm.from_wide(df, human=["coherence"], metrics=["bleu"])
    assert list(ds["system"].values) == ["A", "B", "C"]
    assert not ds["score"].sel(system="B").isnull().any()
    # when the merged label repeats a key, the duplicate is named
    df = _frame(n_items=3)
    df.loc[3, "system"], df.loc[3, "item"] = " A ", "d0"
    with pytest.raises(ValueError, match=r"duplicate \(system, item\) key: system='A', "
                                         r"item='d0' appears 2 times \(rows 0, 3\)"):
        _read(df, human=["coherence"])


def test_duplicate_column_names(tmp_path):
    path = tmp_path / "dup.csv"
    path.write_text("system,item,bleu,coherence,bleu\nA,1,0.1,2.5,0.2\nB,1,0.3,3.5,0.4\n")
    with pytest.raises(ValueError, match=r"duplicate column name\(s\) in its header: 'bleu' "
                                         r"\(columns 3, 5\)"):
        bm.read_csv(path, human=["coherence"])
    df = pd.DataFrame([["A", 1, 0.1, 0.2]], columns=["system", "item", "bleu", "bleu"])
    with pytest.raises(ValueError, match=r"duplicate column name\(s\) 'bleu'"):
        bm.from_wide(df)


def test_decimal_commas(tmp_path):
    path = tmp_path / "comma.csv"
    path.write_text('system,item,coherence,bleu\nA,1,"2,5","0,51"\nB,1,"3,5","0,66"\n'
                    'A,2,"4,0","0,12"\nB,2,"1,5","0,30"\n')
    with pytest.raises(TypeError, match=r"human column 'coherence' looks like numbers with "
                                        r"decimal commas \('2,5' in row 0\); pass decimal=','"):
        bm.read_csv(path, human=["coherence"], metrics=["bleu"])
    with pytest.raises(TypeError, match=r"column 'bleu' looks like numbers with decimal commas "
                                        r"\('0,51'\); pass decimal=','"):
        bm.read_csv(path, human=["coherence"])
    ds = _read_csv_quiet(path, human=["coherence"], decimal=",")
    np.testing.assert_array_equal(ds["score"].sel(metric="bleu", run="1").values,
                                  [[0.51, 0.12], [0.66, 0.30]])
    np.testing.assert_array_equal(ds["judgment"].sel(trait="coherence").values,
                                  [[2.5, 4.0], [3.5, 1.5]])
    # semicolon-separated files, the usual companion of decimal commas
    semi = tmp_path / "semi.csv"
    semi.write_text("system;item;bleu\nA;1;0,51\nB;1;0,66\n")
    with pytest.raises(ValueError, match=r"separated by ';'; pass sep=';'"):
        bm.read_csv(semi)
    ds = _read_csv_quiet(semi, sep=";", decimal=",", metrics=["bleu"])
    np.testing.assert_array_equal(ds["score"].values.ravel(), [0.51, 0.66])
    # a DataFrame of strings reads with decimal=',' too
    df = pd.DataFrame({"system": ["A", "B"], "item": [1, 1], "bleu": ["0,51", "0,66"]})
    ds = _read(df, metrics=["bleu"], decimal=",")
    np.testing.assert_array_equal(ds["score"].values.ravel(), [0.51, 0.66])


def _read_csv_quiet(path, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        warnings.simplefilter("error", RuntimeWarning)
        return bm.read_csv(path, **kw)


def test_two_systems_only_read_fine():
    ds = _read(_frame(systems=("A", "B")), human=["coherence"])
    assert ds.sizes["system"] == 2 and ds.sizes["item"] == 6


def test_malformed_list_cell_names_column_row_value():
    df = _frame().assign(bleu=["[0.1, 0.2]"] * 5 + ["[0.1; 0.2]"] + ["[0.3]"] * 12)
    with pytest.raises(ValueError, match=r"column 'bleu' has a malformed list cell in row 5: "
                                         r"'\[0.1; 0.2\]' \(element '0.1; 0.2' is not a number\)"):
        _read(df, human=["coherence"], metrics=["bleu"])
    nested = _frame().assign(bleu=["[[0.1, 0.2]]"] + ["[0.3]"] * 17)
    with pytest.raises(ValueError, match=r"malformed list cell in row 0"):
        _read(nested, human=["coherence"], metrics=["bleu"])
    human_lists = _frame().assign(coherence=["[2.5]"] * 18)
    with pytest.raises(ValueError, match=r"human column 'coherence' holds list cells"):
        _read(human_lists, human=["coherence"], metrics=["bleu"])


def test_text_among_numbers_is_named():
    df = _frame()
    df["rouge"] = df["rouge"].astype(object)
    df.loc[9, "rouge"] = "error"
    # not named: a mostly-numeric column with a stray text cell is an error, not text
    with pytest.raises(TypeError, match=r"column 'rouge' has non-numeric value 'error' in "
                                        r"row 9; 1 such value"):
        _read(df, human=["coherence"])
    with pytest.raises(TypeError, match=r"human column 'coherence' has non-numeric value 'x'"):
        _read(_frame().assign(coherence=["x"] + [2.0] * 17), human=["coherence"])


def test_bad_options_are_named():
    df = _frame()
    with pytest.raises(ValueError, match=r"column 'bleu' is named as a human score and as a "
                                         r"excluded|column 'bleu' is named as a"):
        _read(df, human=["bleu"], exclude=["bleu"])
    with pytest.raises(ValueError, match=r"column 'bleu' is named as a metric and as a key"):
        _read(df, human=["bleu"], metrics=["bleu"])
    with pytest.raises(ValueError, match=r"human columns 'a' and 'b' both map to trait 't'"):
        _read(df.assign(a=1.0, b=2.0), human={"a": "t", "b": "t"}, metrics=["bleu"])
    with pytest.raises(ValueError, match=r"id='id' needs id_split="):
        _read(df.assign(id="x_y"), id="id")
    with pytest.raises(ValueError, match=r"give item= or id="):
        _read(df.assign(id="x_y"), id="id", id_split="_", item="item")
    with pytest.raises(ValueError, match=r"value 'd0' in row 0 has no separator '_'"):
        _read(df.assign(id=df["item"]), id="id", id_split="_", exclude=["system", "item"])
    with pytest.raises(ValueError, match=r"unknown metric column 'zzz': no column has that name"):
        _read(df, metrics="zzz")
    with pytest.raises(ValueError, match=r"reference_based names unknown metric\(s\) 'x'"):
        _read(df, metrics=["bleu"], reference_based={"x": True})
    with pytest.raises(TypeError, match=r"metriceval' fixes the columns; unexpected argument\(s\) "
                                        r"human"):
        bm.read_csv(__file__, format="metriceval", human=["x"])
    with pytest.raises(TypeError, match=r"rater belong to format='long'"):
        bm.read_csv(__file__, rater="r")
