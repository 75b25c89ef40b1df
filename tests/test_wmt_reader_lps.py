"""Several language pairs of an MTME tree read into one dataset with the dim ``lp``
(issue 25, item 2): values against what was written, padding where a pair lacks a system,
segment or metric, errors that name the pair, and the campaign ranked whole."""

from __future__ import annotations

import numpy as np
import pytest

import bayesmeta as bm

#: Each pair's systems and segment count (different, as in real campaigns).
PAIRS = {"en-de": (["sysA", "sysB", "sysC"], 6), "ja-zh": (["sysB", "sysD", "sysE"], 4)}
METRICS = {"en-de": ["BLEU-refA", "COMET-refA", "QE-src"], "ja-zh": ["BLEU-refA", "QE-src"]}


def _write(root, lp, systems, n_seg, gold, metrics, human="mqm"):
    for sub in ("sources", "documents", "human-scores", f"metric-scores/{lp}",
                f"system-outputs/{lp}"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    (root / "sources" / f"{lp}.txt").write_text("".join(f"s{i}\n" for i in range(n_seg)))
    (root / "documents" / f"{lp}.docs").write_text(
        "".join(f"news {lp}-doc{i // 2}\n" for i in range(n_seg)))
    (root / "human-scores" / f"{lp}.{human}.seg.score").write_text("".join(
        f"{s} {float(gold[s][i])!r}\n" for s in systems for i in range(n_seg)))
    for name, table in metrics.items():
        (root / "metric-scores" / lp / f"{name}.seg.score").write_text("".join(
            f"{s}\t{table[s][i]!r}\n" for s in systems for i in range(n_seg)))


@pytest.fixture
def campaign(tmp_path):
    rng = np.random.default_rng(7)
    truth = {}
    root = tmp_path / "wmt99"
    for lp, (systems, n_seg) in PAIRS.items():
        gold = {s: np.round(-rng.gamma(1, 3, n_seg)) for s in systems}
        metrics = {m: {s: [float(v) for v in rng.normal(size=n_seg)] for s in systems}
                   for m in METRICS[lp]}
        _write(root, lp, systems, n_seg, gold, metrics)
        truth[lp] = (gold, metrics)
    return root, truth


def _read(root, lp, **kw):
    with pytest.warns(bm.ReadWarning, match="COMET-refA"):
        return bm.read_mtme(root, lp=lp, **kw)


def test_several_pairs_values_and_padding(campaign):
    root, truth = campaign
    ds = _read(root, ["en-de", "ja-zh"])
    assert ds["judgment"].dims == ("lp", "system", "item", "trait")
    assert ds["score"].dims == ("lp", "system", "item", "metric", "run")
    assert list(ds["lp"].values) == ["en-de", "ja-zh"]
    assert list(ds["system"].values) == ["sysA", "sysB", "sysC", "sysD", "sysE"]
    assert ds.sizes["item"] == 6 and list(ds["metric"].values) == [
        "BLEU-refA", "COMET-refA", "QE-src"]
    for lp, (gold, metrics) in truth.items():
        systems, n_seg = PAIRS[lp]
        for s in ds["system"].values:
            h = ds["judgment"].sel(lp=lp, system=s, trait="mqm").values
            if s in systems:  # what was written, then padding beyond the pair's segments
                np.testing.assert_array_equal(h[:n_seg], gold[s])
                assert np.isnan(h[n_seg:]).all()
            else:
                assert np.isnan(h).all()
            for m in ds["metric"].values:
                x = ds["score"].sel(lp=lp, system=s, metric=m).values[:, 0]
                if s in systems and m in metrics:
                    np.testing.assert_array_equal(x[:n_seg], metrics[m][s])
                    assert np.isnan(x[n_seg:]).all()
                else:
                    assert np.isnan(x).all()
    assert list(ds["document"].sel(lp="ja-zh").values) == [
        "ja-zh-doc0", "ja-zh-doc0", "ja-zh-doc1", "ja-zh-doc1", "", ""]
    assert dict(zip(ds["metric"].values, ds["reference_based"].values, strict=True)) == {
        "BLEU-refA": True, "COMET-refA": True, "QE-src": False}
    bm.validate(ds, warn_missing=False)


def test_split_gives_back_each_pair_read_alone(campaign):
    root, _ = campaign
    ds = _read(root, ["en-de", "ja-zh"])
    parts = bm.split_language_pairs(ds)
    assert list(parts) == ["en-de", "ja-zh"]
    for lp, part in parts.items():
        alone = bm.read_mtme(root, lp=lp)
        assert part.attrs["lp"] == lp
        for dim in ("system", "item", "metric", "trait"):
            assert list(part[dim].values) == list(alone[dim].values), (lp, dim)
        np.testing.assert_array_equal(part["judgment"].values, alone["judgment"].values)
        np.testing.assert_array_equal(part["score"].values, alone["score"].values)
        assert list(part["document"].values) == list(alone["document"].values)


def test_errors_name_the_language_pair(campaign):
    root, _ = campaign
    with pytest.raises(ValueError, match=r"'xx-yy'.*no source file"):
        bm.read_mtme(root, lp=["en-de", "xx-yy"])
    with pytest.raises(ValueError, match="twice"):
        bm.read_mtme(root, lp=["en-de", "en-de"])
    # a metric file of ja-zh one segment short: the error names the pair and the metric
    bad = root / "metric-scores" / "ja-zh" / "BLEU-refA.seg.score"
    lines = bad.read_text().splitlines(keepends=True)
    bad.write_text("".join(lines[:-1]))
    with pytest.raises(ValueError, match=r"language pair 'ja-zh'.*BLEU-refA.*3 segment"):
        bm.read_mtme(root, lp=["en-de", "ja-zh"])
    bad.write_text("".join(lines))
    # different human scores in the pairs: named, with each pair's
    (root / "human-scores" / "ja-zh.mqm.seg.score").rename(
        root / "human-scores" / "ja-zh.esa.seg.score")
    with pytest.raises(ValueError, match="en-de: mqm, ja-zh: esa"):
        bm.read_mtme(root, lp=["en-de", "ja-zh"])


def test_one_pair_analyses_refuse_a_campaign_and_ranking_reads_it_whole(campaign):
    root, _ = campaign
    ds = _read(root, ["en-de", "ja-zh"])
    with pytest.raises(ValueError, match=r"2 language pairs.*split_language_pairs"):
        bm.soft_pairwise_accuracy(ds, "mqm")
    opts = {"n_permutations": 30, "n_resamples": 20}
    whole = bm.wmt_ranking(ds, "mqm", random_seed=4, resampling=opts)
    parts = {lp: bm.read_mtme(root, lp=lp, reference=None) for lp in ("en-de", "ja-zh")}
    apart = bm.wmt_ranking(parts, "mqm", random_seed=4, resampling=opts)
    # metrics in every pair only (COMET-refA is not scored in ja-zh)
    assert list(whole.summary().index.get_level_values("metric")) == ["BLEU-refA", "QE-src"]
    np.testing.assert_allclose(whole.summary().to_numpy(), apart.summary().to_numpy(),
                               rtol=0, atol=1e-12)
    np.testing.assert_array_equal(whole.details().to_numpy(), apart.details().to_numpy())


def test_simulated_pair_is_labelled():
    ds = bm.wmt.simulate_campaign(4, 6, 3, lp="ja-zh", random_seed=11)
    assert ds.attrs["lp"] == "ja-zh"
    np.testing.assert_array_equal(
        ds["score"].values, bm.wmt.simulate_campaign(4, 6, 3, random_seed=11)["score"].values)
    with pytest.raises(ValueError, match="lp"):
        bm.wmt.simulate_campaign(4, 6, 3, lp=["en-de", "ja-zh"])
