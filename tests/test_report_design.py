"""``bayesmeta report --design design.toml``: a TOML file of reading and report options,
overridden by the flags typed on the command line (issue 15, item 1)."""

from __future__ import annotations

import re

import pytest

import bayesmeta as bm
from bayesmeta.cli import apply_design, build_parser, load_design, main


@pytest.fixture(scope="module")
def csv_file(tmp_path_factory):
    tiny = bm.datasets.simulated(random_seed=2, n_systems=6, n_items=12, n_metrics=4)
    wide = tiny["score"].sel(run="1").to_dataframe()["score"].unstack("metric")
    wide.columns = [str(c) for c in wide.columns]
    wide = wide.reset_index()
    wide["fluency"] = tiny["rating"].sel(trait="FLU").mean("rater").values.ravel()
    wide["coherence"] = tiny["rating"].sel(trait="COH").mean("rater").values.ravel()
    folder = tmp_path_factory.mktemp("design")
    wide.to_csv(folder / "d.csv", index=False)
    return folder / "d.csv", [str(c) for c in tiny["metric"].values]


def _parse(argv):
    args = build_parser().parse_args(argv)
    return apply_design(args, argv[1:]) if args.design else args


def _masked(text: str) -> str:
    """A report's text or HTML with what differs between two runs of the same report (the
    seconds each section took, the output path, the minute it was created: two runs can
    straddle a minute) masked."""
    text = re.sub(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC", "<created>", text)
    text = re.sub(r"\d+(\.\d+)? ?(s|ms)\b", "<time>", text)
    return re.sub(r"report written to .*", "", text)


def test_design_file_gives_the_same_report_as_the_flags(tmp_path, capsys, csv_file):
    path, metrics = csv_file
    flags = ["report", str(path), "--metrics", ",".join(metrics[:3]),
             "--human", "fluency=FLU,coherence=COH", "--trait", "FLU", "--seed", "4",
             "--resamples", "30", "--coefficient", "spearman"]
    assert main([*flags, "--out", str(tmp_path / "flags.html")]) == 0
    by_flags = capsys.readouterr()
    design = path.parent / "design.toml"  # beside the data: `data` is relative to it
    design.write_text(
        f'data = ["{path.name}"]\n'
        "[read]\n"
        f"metrics = {metrics[:3]!r}\n".replace("'", '"') +
        'human = {fluency = "FLU", coherence = "COH"}\n'
        "[report]\n"
        'traits = ["FLU"]\nseed = 4\nresamples = 30\ncoefficient = "spearman"\n'
        f'out = "{(tmp_path / "design.html").as_posix()}"\n', encoding="utf-8")
    assert main(["report", "--design", str(design)]) == 0, capsys.readouterr().err
    by_design = capsys.readouterr()
    assert "signature: bayesmeta:" in by_design.out and "seed:4" in by_design.out
    assert _masked(by_design.out) == _masked(by_flags.out)
    html_flags = (tmp_path / "flags.html").read_text(encoding="utf-8")
    html_design = (tmp_path / "design.html").read_text(encoding="utf-8")
    assert "report written to" in by_flags.out
    # same data hash, seed, settings, tables and readings: only the timings differ
    assert _masked(html_design) == _masked(html_flags)


def test_flags_override_the_design_file(tmp_path):
    design = tmp_path / "d.toml"
    design.write_text('data = "x.csv"\nmetrics = ["a", "b"]\nbayes = "fast"\nseed = 3\n'
                      'resamples = 50\nscale = [0, 10]\n[report]\ntraits = ["FLU", "COH"]\n',
                      encoding="utf-8")
    args = _parse(["report", "--design", str(design)])
    assert args.paths == [str(tmp_path / "x.csv")] and args.metrics == ["a", "b"]
    assert (args.bayes, args.seed, args.resamples, args.scale, args.traits) == \
        ("fast", 3, 50, "0,10", ["FLU", "COH"])
    args = _parse(["report", "y.csv", "--design", str(design), "--seed", "9", "--metrics",
                   "c", "--bayes", "off", "--trait", "REL", "--scale", "1,5"])
    assert args.paths == ["y.csv"] and args.metrics == ["c"] and args.traits == ["REL"]
    assert (args.bayes, args.seed, args.resamples, args.scale) == ("off", 9, 50, "1,5")


def test_unknown_design_key_is_an_error_naming_it(tmp_path, capsys, csv_file):
    design = tmp_path / "d.toml"
    design.write_text("seeds = 3\n", encoding="utf-8")
    with pytest.raises(ValueError, match="unknown key 'seeds'"):
        load_design(design)
    assert main(["report", str(csv_file[0]), "--design", str(design)]) == 2
    assert "unknown key 'seeds'" in capsys.readouterr().err
    design.write_text('[read]\nbayes = "off"\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"unknown key 'bayes' \(it belongs in \[report\]\)"):
        load_design(design)


@pytest.mark.parametrize("text, error, match", [
    ("seed = 1.5\n", TypeError, "'seed' must be an integer"),
    ('bayes = "sometimes"\n', ValueError, "'bayes' must be one of off, fast, full"),
    ("scale = [1, 2, 3]\n", TypeError, "'scale' must be"),
    ("metrics = [1, 2]\n", TypeError, "'metrics' must be a string or a list of strings"),
    ("seed = 1\nseed = 2\n", ValueError, "not valid TOML"),
    ('seed = 1\n[report]\nseed = 2\n', ValueError, "'seed' is given twice"),
])
def test_bad_design_values_are_errors(tmp_path, text, error, match):
    design = tmp_path / "d.toml"
    design.write_text(text, encoding="utf-8")
    with pytest.raises(error, match=match):
        load_design(design)


def test_missing_design_file_and_missing_data(tmp_path, capsys):
    assert main(["report", "--design", str(tmp_path / "none.toml")]) == 2
    assert "--design: no file" in capsys.readouterr().err
    (tmp_path / "d.toml").write_text("seed = 1\n", encoding="utf-8")
    assert main(["report", "--design", str(tmp_path / "d.toml")]) == 2
    assert "give the DATA file(s)" in capsys.readouterr().err
