"""The `bayesmeta` command."""

from __future__ import annotations

import pandas as pd

from bayesmeta.cli import main


def test_demo_prints_tables(capsys):
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    for heading in ("Metric stability", "Metric consistency", "Inter-rater agreement",
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


def test_demo_with_bayes_prints_posteriors_beside_classical(capsys):
    assert main(["demo", "--bayes", "--fast", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "True-score reliability" in out and "hdi_low" in out
    assert "Metric consistency (coefficient alpha)" in out
