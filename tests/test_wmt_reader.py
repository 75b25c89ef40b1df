"""The MTME directory reader on a tiny tree written in MTME's documented format (README,
"File organization and naming convention"), and the WMT statistics on what it reads."""

from __future__ import annotations

import numpy as np
import pytest

import bayesmeta as bm
from bayesmeta.wmt import kernels

SYSTEMS = ["sysA", "sysB", "sysC", "refB"]
N_SEG = 6


def _write_tree(root, gold, metrics, *, none_system="refB"):
    (root / "sources").mkdir(parents=True)
    (root / "documents").mkdir()
    (root / "human-scores").mkdir()
    (root / "system-outputs" / "en-de").mkdir(parents=True)
    (root / "metric-scores" / "en-de").mkdir(parents=True)
    (root / "sources" / "en-de.txt").write_text("".join(f"src {i}\n" for i in range(N_SEG)))
    (root / "documents" / "en-de.docs").write_text(
        "".join(f"news doc{i // 3}\n" for i in range(N_SEG)))
    for s in SYSTEMS:
        (root / "system-outputs" / "en-de" / f"{s}.txt").write_text("out\n" * N_SEG)
    lines = []
    for s in SYSTEMS:
        for i in range(N_SEG):
            v = "None" if s == none_system else repr(float(gold[s][i]))
            lines.append(f"{s} {v}\n")
    (root / "human-scores" / "en-de.mqm.seg.score").write_text("".join(lines))
    (root / "human-scores" / "en-de.wmt-z.seg.score").write_text("".join(lines))
    for name, table in metrics.items():
        (root / "metric-scores" / "en-de" / f"{name}.seg.score").write_text("".join(
            f"{s}\t{table[s][i]!r}\n" for s in table for i in range(N_SEG)))


@pytest.fixture
def tree(tmp_path):
    rng = np.random.default_rng(0)
    gold = {s: np.round(-rng.gamma(1, 3, N_SEG)) for s in SYSTEMS}
    metrics = {name: {s: [float(v) for v in rng.normal(size=N_SEG)] for s in SYSTEMS}
               for name in ("COMET-refA", "BLEU-refA", "BLEU-refB", "QE-src")}
    _write_tree(tmp_path / "wmt99", gold, metrics)
    return tmp_path / "wmt99", gold, metrics


def test_reader_values_and_layout(tree):
    root, gold, metrics = tree
    with pytest.warns(bm.ReadWarning, match="refB"):
        ds = bm.read_mtme(root, lp="en-de", human="mqm")
    assert list(ds["system"].values) == ["sysA", "sysB", "sysC"]
    assert list(ds["metric"].values) == sorted(metrics)
    assert ds.attrs["lp"] == "en-de"
    for s in ["sysA", "sysB", "sysC"]:
        np.testing.assert_array_equal(ds["judgment"].sel(system=s, trait="mqm").values,
                                      gold[s])
        for m in metrics:
            np.testing.assert_array_equal(ds["score"].sel(system=s, metric=m).values[:, 0],
                                          metrics[m][s])
    assert list(ds["document"].values) == ["doc0"] * 3 + ["doc1"] * 3
    assert dict(zip(ds["metric"].values, ds["reference_based"].values, strict=True)) == {
        "BLEU-refA": True, "BLEU-refB": True, "COMET-refA": True, "QE-src": False}
    bm.validate(ds)


def test_reader_reference_filter_and_statistics(tree):
    root, gold, metrics = tree
    with pytest.warns(bm.ReadWarning):
        ds = bm.read_mtme(root, lp="en-de", human="mqm", reference="refA")
    assert sorted(ds["metric"].values) == ["BLEU-refA", "COMET-refA", "QE-src"]
    res = bm.pairwise_difference_pearson(ds, "mqm", resampling={"n_resamples": 0})
    z = np.array([gold[s] for s in ["sysA", "sysB", "sysC"]])
    x = np.array([[metrics[m][s] for s in ["sysA", "sysB", "sysC"]]
                  for m in ["BLEU-refA", "COMET-refA", "QE-src"]])
    # brute force: Pearson of all ordered within-segment differences
    for k, m in enumerate(["BLEU-refA", "COMET-refA", "QE-src"]):
        dz = (z[:, None, :] - z[None, :, :]).ravel()
        dx = (x[k][:, None, :] - x[k][None, :, :]).ravel()
        got = res.summary()["classical"].xs(m, level="metric").iloc[0]
        assert got == pytest.approx(np.corrcoef(dz, dx)[0, 1], abs=1e-12)
    assert kernels.pairwise_difference_pearson(x, z) == pytest.approx(
        res.summary()["classical"].to_numpy()[[0, 1, 2]], abs=1e-12)


def test_reader_errors_name_the_problem(tree, tmp_path):
    root, _, _ = tree
    with pytest.raises(ValueError, match="lp"):
        bm.read_mtme(root, lp="xx-yy")
    with pytest.raises(ValueError, match="human"):
        bm.read_mtme(root, lp="en-de", human="esa")
    bad = root / "metric-scores" / "en-de" / "BAD-refA.seg.score"
    bad.write_text("sysA 0.1\nsysA zero\n")
    with pytest.raises(ValueError, match="non-numeric"):
        bm.read_mtme(root, lp="en-de", human="mqm")
