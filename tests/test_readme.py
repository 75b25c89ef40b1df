"""README's commands are the ones CI runs (the product card requires it)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```bash\n(.*?)```", text, flags=re.S)
    return [line.strip() for line in "\n".join(blocks[:2]).splitlines() if line.strip()]


def test_ci_runs_readme_install_and_test_commands():
    install, main_job, test = _readme_commands()[:3]
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    assert install.startswith("python -m pip install")
    assert test.startswith("python -m pytest")
    assert install in ci and main_job in ci and test in ci
    assert ci.index(install) < ci.index(test)
    assert "export BAYESMETA_REQUIRE_DATA=1" in ci


def _readme_report_usr() -> list[str]:
    """The README's report example on paper 002's USR topical-chat file, as argv."""
    import shlex

    text = (ROOT / "README.md").read_text()
    line = next(ln for ln in text.splitlines()
                if ln.startswith("bayesmeta report usr_topic_mean.csv"))
    return shlex.split(line)[1:]


def test_readme_report_example_on_usr_names_every_human_column(tmp_path):
    """Issue 21: the README's example read the file's other human columns (Overall, ...)
    as metrics, and the human Overall score came out as the best "metric"."""
    import os
    import warnings

    import pytest

    import bayesmeta as bm
    from bayesmeta.cli import build_parser, read_from_args
    from bayesmeta.data.datasets import NLGEVAL_HUMAN

    try:
        folder = bm.datasets.find_nlgeval()
    except FileNotFoundError as err:
        if os.environ.get("BAYESMETA_REQUIRE_DATA", "") not in ("", "0", "false", "False"):
            pytest.fail(f"BAYESMETA_REQUIRE_DATA is set but the nlgeval files are missing: "
                        f"{err}")
        pytest.skip(f"nlgeval files not found (set BAYESMETA_DATA): {err}")
    argv = _readme_report_usr()
    argv[argv.index("usr_topic_mean.csv")] = str(folder / "usr_topic_mean.csv")
    argv[argv.index("--out") + 1] = str(tmp_path / "report.html")
    args = build_parser().parse_args(argv)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds = read_from_args(args.paths, args)
    human = list(NLGEVAL_HUMAN["usr_topic_mean"])
    assert sorted(map(str, ds["trait"].values)) == sorted(human)
    metrics = [str(m) for m in ds["metric"].values]
    assert not set(metrics) & set(human)
    # the best metric (sample-level correlation with each trait) is a metric, not a human
    # column; and the example without the other human columns is refused, naming them
    res = bm.kind_comparison(ds, trait="Natural", random_seed=0,
                             resampling={"n_resamples": 50, "n_permutations": 0})
    corr = res.summary().xs("correlation", level=0)
    best = corr["classical"].astype(float).idxmax()
    best = str(best[0] if isinstance(best, tuple) else best)
    assert best in metrics and best not in human
    narrow = ["report", argv[1], "--id", "id", "--id-split", "_", "--human",
              "Natural,Maintains Context"]
    with pytest.raises(ValueError, match=r"'Understandable' \(name\).*'Overall' \(name\) look "
                                         r"like human scores but are not declared"):
        read_from_args([argv[1]], build_parser().parse_args(narrow))
