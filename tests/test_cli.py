"""The `bayesmeta` command."""

from __future__ import annotations

import pandas as pd
import pytest

from bayesmeta.cli import main


def test_demo_prints_tables(capsys):
    assert main(["demo", "--text"]) == 0
    out = capsys.readouterr().out
    for heading in ("Metric stability", "Metric consistency", "Agreement coefficients",
                    "Multitrait-multimethod", "Concurrent validity"):
        assert heading in out


def test_reliability_on_metriceval_csv(tmp_path, capsys, simulated):
    df = simulated["score"].sel(run="1").to_dataframe()["score"].unstack("metric")
    ratings = simulated["rating"].to_dataframe()["rating"].unstack(["rater", "trait"])
    ratings.columns = [f"Expert.{r.split('.')[1]}.{t}" for r, t in ratings.columns]
    table = pd.concat([ratings, df], axis=1).reset_index().rename(
        columns={"system": "model_id", "item": "test_id"})
    table.to_csv(tmp_path / "run1.csv", index=False)
    assert main(["reliability", str(tmp_path / "run1.csv")]) == 0
    out = capsys.readouterr().out
    assert "Expert.1.COH" in out and "metric01.COH" in out
    assert "Metric stability" not in out  # one run: no test-retest


def test_reliability_reports_bad_input(tmp_path, capsys):
    pd.DataFrame({"model_id": ["a", "b"], "test_id": [1, 1], "Expert.1.COH": [3, 9]}).to_csv(
        tmp_path / "bad.csv", index=False)
    assert main(["reliability", str(tmp_path / "bad.csv")]) == 2
    err = capsys.readouterr().err
    assert "Expert.1.COH" in err and "9" in err


@pytest.mark.slow  # an MCMC run (32 s): the slow tier, for the default tier's budget
def test_demo_with_bayes_prints_posteriors_beside_classical(capsys):
    assert main(["demo", "--text", "--bayes", "--fast", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "True-score reliability" in out and "hdi_low" in out
    assert "Metric consistency (coefficient alpha)" in out


# ---------------------------------------------------------------- reading options, `read`
def _hanna_like(path):
    import numpy as np

    rng = np.random.default_rng(4)
    rows = []
    for p in range(5):
        for s in ("GPT-2", "Fusion", "Human"):
            row = {"Story ID": len(rows), "Prompt": f"prompt {p}", "Story": "Once upon...",
                   "Model": s, "BLEU": rng.random(), "BERTScore F1": rng.random()}
            for t in ("Relevance", "Coherence"):
                for r in (1, 2, 3):
                    row[f"{t}{r}"] = int(rng.integers(1, 6))
            rows.append(row)
    pd.DataFrame(rows).to_csv(path, index=False)


def test_read_prints_what_was_read(tmp_path, capsys):
    path = tmp_path / "hanna.csv"
    _hanna_like(path)
    assert main(["read", str(path), "--system", "Model", "--item", "Prompt", "--ratings",
                 r"^(?P<trait>[A-Z][a-z]+)(?P<rater>\d)$"]) == 0
    out, err = capsys.readouterr()
    assert "sizes: system 3, item 5, rater 3, trait 2, metric 2, run 1" in out
    assert ("human scores (2): Relevance (rating, mean over raters), Coherence (rating, mean "
            "over raters)") in out
    assert "metrics (2, chosen default): BLEU, BERTScore F1" in out
    assert "reference dim: none" in out
    assert "left out (2): Story ID (identifier), Story (text)" in out
    # the one ReadWarning goes to stderr, naming the columns left out and the metrics chosen
    assert "warning: reading" in err and "'Story ID' (identifier), 'Story' (text)" in err
    assert "2 metric(s) chosen by default" in err


def test_read_without_ratings_flags_rating_columns(tmp_path, capsys):
    path = tmp_path / "hanna.csv"
    _hanna_like(path)
    assert main(["read", str(path), "--system", "Model", "--item", "Prompt"]) == 0
    out, err = capsys.readouterr()
    assert "metrics (8, chosen default)" in out  # the 6 rating columns are metrics ...
    assert "'Relevance1' (name and small integers)" in err  # ... and flagged
    assert "look like ratings or human scores but were read as metrics" in err


def test_read_options_are_built_once_for_every_subcommand():
    from bayesmeta.cli import build_parser, read_options

    argv = ["--id", "id", "--id-split", "_", "--human", "Natural,Maintains Context",
            "--human", "Overall=overall", "--metrics", "re:_hypo$", "--scale", "0..10",
            "--decimal", ",", "--exclude", "notes"]
    for command in (["read", "f.csv"], ["reliability", "f.csv", "--format", "wide"]):
        args = build_parser().parse_args(command + argv)
        opts = read_options(args)
        assert opts.pop("metrics").pattern == "_hypo$"
        assert opts == {"format": "wide", "id": "id", "id_split": "_",
                        "human": {"Natural": "Natural", "Maintains Context": "Maintains Context",
                                  "Overall": "overall"},
                        "exclude": ["notes"], "scale": (0.0, 10.0), "decimal": ","}
    args = build_parser().parse_args(["read", "f.csv", "--ratings", "c1=Expert.1.COH",
                                      "--format", "long", "--trait", "t", "--value", "v"])
    assert read_options(args) == {"format": "long", "ratings": {"c1": ("Expert.1", "COH")},
                                  "trait": "t", "value": "v"}


def test_read_reports_bad_input_with_the_remedy(tmp_path, capsys):
    path = tmp_path / "avg.csv"
    pd.DataFrame({"system": ["a", "b"], "item": [1, 1], "coh": [2.6667, 3.0],
                  "bleu": [0.1, 0.2]}).to_csv(path, index=False)
    assert main(["read", str(path), "--ratings", "coh=mean.coh"]) == 2
    err = capsys.readouterr().err
    assert "column 'coh' has rating 2.6667 in row 0" in err and "human=" in err
    assert main(["read", str(path), "--human", "coh", "--metrics", "bleu"]) == 0
    out = capsys.readouterr().out
    assert "human scores (1): coh (judgment)" in out
    assert main(["read", str(path), "--scale", "1to5"]) == 2
    assert "--scale must be 'min,max'" in capsys.readouterr().err
