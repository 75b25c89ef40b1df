"""The HTML metric report (bm.report, `bayesmeta report`, `bayesmeta demo`).

Structure tests use sections made here (a contract-shaped Result, a failing and a skipped
section), so they check the document without running analyses; one module-scoped report
on small simulated data checks every real section; the nlgeval files (continuous human
scores, no raters) check the skip reasons; a headless-Chromium test renders the page.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import numpy as np
import pandas as pd
import pytest

import bayesmeta as bm
from bayesmeta.cli import main
from bayesmeta.report import SECTIONS, Section, SectionOutput, Skipped
from bayesmeta.report._render import MAX_ROWS
from bayesmeta.report.sections import block

EVIL = "<script>alert(1)</script>"


def _self_contained(html: str) -> None:
    """No external resource: nothing loaded over the network, no script at all."""
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", html, re.I)
    assert not re.search(r"url\(\s*['\"]?(https?:)?//", html, re.I)
    assert "<link" not in html.lower() and "@import" not in html
    assert "<script" not in html.lower()
    assert "<iframe" not in html.lower()


# ----------------------------------------------------------------------- fake sections
def _contract_result(title: str = "Fake posterior", bad_rhat: bool = True) -> bm.Result:
    index = pd.MultiIndex.from_tuples(
        [("alpha", "m1"), ("alpha", EVIL), ("sem", "m1"), ("sem", EVIL)],
        names=["estimand", "metric"])
    table = pd.DataFrame({
        "classical": [0.8, 0.6, 0.1, 0.2], "classical_low": [0.7, 0.4, 0.05, 0.1],
        "classical_high": [0.9, 0.75, 0.15, 0.3], "mean": [0.79, 0.61, 0.11, 0.19],
        "sd": [0.03, 0.05, 0.01, 0.02], "hdi_low": [0.72, 0.5, 0.09, 0.15],
        "hdi_high": [0.85, 0.7, 0.13, 0.23],
        "r_hat": [1.0, 1.05 if bad_rhat else 1.0, 1.0, 1.0],
        "ess_bulk": [1200.0, 900.0, 1100.0, 150.0 if bad_rhat else 800.0],
        "ess_tail": [1000.0, 800.0, 900.0, 700.0]}, index=index)
    return bm.Result(table, title=title, classical_ci_kind="percentile bootstrap",
                     random_seed=5, data_hash="abc")


def _fake_sections() -> list[Section]:
    def good(data, ctx):
        import matplotlib.pyplot as plt

        res = _contract_result()
        fig, ax = plt.subplots()
        ax.plot([0, 1], [0, 1])
        return SectionOutput("Fake", [block(res, ctx)], [fig], "line one\nline two",
                             [bm.consistency], [res])

    def failing(data, ctx):
        raise ValueError(f"no column named {EVIL!r} in the data.")

    def skipped(data, ctx):
        return Skipped(f"the data has no {EVIL}")

    return [Section("good", "Good section", good), Section("bad", "Failing section", failing),
            Section("skip", "Skipped section", skipped)]


@pytest.fixture(scope="module")
def tiny():
    return bm.datasets.simulated(random_seed=2, n_systems=6, n_items=12, n_metrics=4)


@pytest.fixture(scope="module")
def fake_report(tiny):
    return bm.report(tiny, sections=_fake_sections(), random_seed=3, bayes="fast")


def test_failed_and_skipped_sections_are_shown_not_raised(fake_report):
    status = {r.key: r.status for r in fake_report.runs}
    assert status == {"good": "ok", "bad": "failed", "skip": "skipped"}
    html = fake_report.html()
    assert 'id="sec-bad"' in html and "no column named" in html
    assert "Skipped: the data has no" in html
    assert all(r.seconds >= 0 for r in fake_report.runs)


def test_convergence_problems_are_listed_at_the_top(fake_report):
    conv = fake_report.convergence
    assert len(conv) == 2
    assert conv["problem"].str.contains("r_hat 1.050").any()
    assert conv["problem"].str.contains("ess_bulk 150").any()
    html = fake_report.html()
    top = html.index('id="convergence-problems"')
    assert top < html.index('id="sec-good"')


def test_tables_show_intervals_as_bars_and_fast_preview(fake_report):
    html = fake_report.html()
    assert html.count('<svg class="bar"') == 4  # one per row with an interval
    assert "<circle" in html and "stroke=\"#d9730d\"" in html  # posterior dot, classical line
    assert "94% percentile bootstrap interval" in html
    assert "--bayes fast" in html and "preview" in html.lower()
    assert "bayesmeta.consistency" in html  # the method's docstring is linked
    assert "line one" in html and "line two" in html
    assert 'src="data:image/png;base64,' in html


def test_data_labels_and_errors_are_escaped(fake_report):
    html = fake_report.html()
    assert EVIL not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    _self_contained(html)


def test_provenance_header_and_text_summary(fake_report, tmp_path):
    p = fake_report.provenance
    assert p["random_seed"] == 3 and p["bayes"] == "fast" and p["data_hash"]
    assert p["sampler"]["fast"] is True
    sig = fake_report.signature()
    assert f"bayesmeta:{bm.__version__}" in sig and "seed:3" in sig and "bayes:fast" in sig
    html = fake_report.html()
    assert sig in html
    text = fake_report.text()
    assert "Good section" in text and "failed" in text and "skipped" in text
    assert "2 problem(s)" in text
    out = fake_report.save(tmp_path / "r.html")
    assert out.read_text(encoding="utf-8") == html
    frag = fake_report._repr_html_()
    assert "<html" not in frag and 'id="sec-good"' in frag


def test_long_tables_show_the_top_rows_and_the_full_table(tiny):
    """Issue 21: a long table shows its top rows, every row in a collapsible full table,
    and a CSV download of every row (a data: URI, the page stays self-contained)."""
    import base64
    import io

    n = MAX_ROWS + 5
    idx = pd.MultiIndex.from_product([["rho"], [f"m{k}" for k in range(n)]],
                                     names=["estimand", "metric"])
    values = np.linspace(0, 1, n)
    res = bm.Result(pd.DataFrame({"classical": values}, index=idx), title="Long")
    sec = Section("long", "Long", lambda d, c: SectionOutput(
        "Long", [block(res, c), block(res, c, "Ranked", rank=True)]))
    html = bm.report(tiny, sections=[sec], random_seed=1).html()
    assert f"showing the {MAX_ROWS} rows first of {n}" in html
    assert f"showing the {MAX_ROWS} rows with the highest estimate of {n}" in html
    assert html.count(f"the full table: all {n} rows</summary>") == 2
    section = html[html.index('id="sec-long"'):]
    ranked = section[section.index("<h3>Ranked</h3>"):]
    top = ranked[:ranked.index("<details")]
    assert f"<td>m{n - 1}</td>" in top and "<td>m0</td>" not in top  # best first
    uris = re.findall(r'href="(data:text/csv;charset=utf-8;base64,[^"]+)"', section)
    assert len(uris) == 2
    csv = pd.read_csv(io.StringIO(base64.b64decode(uris[0].split(",", 1)[1]).decode()))
    assert len(csv) == n
    np.testing.assert_allclose(csv["classical"], values, rtol=1e-12)  # raw, not rounded
    _self_contained(html)


def test_report_rejects_bad_arguments(tiny):
    with pytest.raises(ValueError, match="bayes"):
        bm.report(tiny, bayes="yes")
    with pytest.raises(ValueError, match="traits"):
        bm.report(tiny, traits=["nope"])
    with pytest.raises(ValueError, match="sections"):
        bm.report(tiny, sections=["nope"])
    with pytest.raises(TypeError, match="Dataset"):
        bm.report(pd.DataFrame())


# ----------------------------------------------------------------------- real sections
@pytest.fixture(scope="module")
def evil_data():
    ds = bm.datasets.simulated(random_seed=1, n_systems=8, n_items=30, n_metrics=6)
    systems = [str(s) for s in ds["system"].values]
    systems[0] = EVIL
    metrics = [str(m) for m in ds["metric"].values]
    metrics[1] = 'bleu"&<b>'
    return ds.assign_coords(system=systems, metric=metrics)


@pytest.fixture(scope="module")
def sim_report(evil_data):
    return bm.report(evil_data, random_seed=1, resampling={"n_resamples": 50})


def test_simulated_report_has_every_section(sim_report):
    html = sim_report.html()
    for sec in SECTIONS:
        assert f'id="sec-{sec.key}"' in html
        run = sim_report.section(sec.key)
        assert run.status in ("ok", "skipped"), f"{sec.key}: {run.error}"
        if run.status == "skipped":
            assert run.reason and f"Skipped: {run.reason}"[:40] in html
        else:
            assert run.output.reading.strip(), sec.key
    # bayes off: the Bayesian rater model is skipped with the reason
    assert sim_report.section("rater").status == "skipped"
    assert "--bayes fast" in sim_report.section("rater").reason
    # every computed section with a plot has it inline
    for run in sim_report.runs:
        if run.status == "ok":
            assert run.images, run.key
        for img in run.images:  # a PNG with something drawn, not an empty canvas
            assert img.startswith("data:image/png;base64,") and len(img) > 5000, run.key


def test_bayes_off_alpha_and_mtmm_tables_carry_classical_intervals(sim_report):
    """Issue 21, every interval: with --bayes off the alpha (Feldt F) and MTMM (Fisher z)
    tables have classical intervals around their estimates, and no 'no interval' note."""
    from bayesmeta.report._render import table_view

    for key, estimands in (("reliability", ["alpha"]), ("mtmm", ["alpha", "correlation"])):
        run = sim_report.section(key)
        assert run.status == "ok", run.error
        table = run.output.tables[0]
        frame = table.frame
        assert "hdi_low" not in frame.columns  # bayes off: classical only
        for est in estimands:
            rows = frame[frame.index.get_level_values(0) == est]
            assert len(rows), (key, est)
            ok = rows["classical"].notna()
            assert rows.loc[ok, "classical_low"].notna().all(), (key, est)
            assert (rows.loc[ok, "classical_low"] <= rows.loc[ok, "classical"]).all()
            assert (rows.loc[ok, "classical"] <= rows.loc[ok, "classical_high"]).all()
        notes = " ".join(table_view(table)["notes"])
        assert "no interval" not in notes, key
        assert "classical_low/high: 94%" in notes, key


def test_simulated_report_is_self_contained_and_escaped(sim_report, tmp_path):
    html = sim_report.save(tmp_path / "sim.html").read_text(encoding="utf-8")
    _self_contained(html)
    assert EVIL not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert 'bleu"&<b>' not in html


@pytest.mark.slow
def test_simulated_report_with_bayes_fast(evil_data):
    rep = bm.report(evil_data, random_seed=1, bayes="fast",
                    sections=["reliability", "rater"])
    for run in rep.runs:
        assert run.status == "ok", run.error
        assert any(b.preview for b in run.output.tables)
    assert "do not report" in rep.html()


@pytest.mark.slow
def test_bayesian_cfa_and_loo_comparison(tiny):
    # bayes="full" runs this; here with the fast sampler to check the plumbing
    from bayesmeta.report import Context
    from bayesmeta.report.sections import _cfa_syntax, cfa_bayes

    traits = ["COH", "FLU"]
    ctx = Context(traits=traits, bayes="fast", random_seed=1, loo=True)
    tables, results, line = cfa_bayes(tiny, ctx, _cfa_syntax(tiny, traits), traits)
    assert len(tables) == 2 and len(results) == 3
    assert "LOO comparison" in tables[1].caption
    assert "elpd_loo" in tables[1].frame.index.get_level_values(0)
    assert line.startswith("LOO prefers")


# ----------------------------------------------------------------------- nlgeval files
def _require_data() -> bool:
    return os.environ.get("BAYESMETA_REQUIRE_DATA", "") not in ("", "0", "false", "False")


@pytest.fixture(scope="module")
def nlgeval_names():
    try:
        return bm.datasets.nlgeval_names()
    except FileNotFoundError as err:
        if _require_data():
            pytest.fail(f"BAYESMETA_REQUIRE_DATA is set but the nlgeval files are missing: "
                        f"{err}")
        pytest.skip(f"nlgeval files not found (set BAYESMETA_DATA): {err}")


RATER_SECTIONS = ["agreement", "mtmm", "rater", "cfa"]


def test_nlgeval_rater_sections_are_skipped_with_reason(nlgeval_names):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds = bm.datasets.nlgeval("usr_topic_mean")
    rep = bm.report(ds, sections=["data", "reference_free", *RATER_SECTIONS], bayes="fast",
                    random_seed=0, resampling={"n_resamples": 100})
    assert rep.section("data").status == "ok"
    ref = rep.section("reference_free")  # paper 002's section plugs in through the interface
    assert ref.status == "ok", ref.error
    assert "P(best reference-free metric beats best reference-based)" in ref.output.reading
    html = rep.html()
    for key in RATER_SECTIONS:
        run = rep.section(key)
        assert run.status == "skipped", key
        assert "continuous human scores" in run.reason and "no ordinal ratings" in run.reason
        assert f'id="sec-{key}"' in html
    _self_contained(html)


@pytest.mark.slow
def test_nlgeval_origin_reports_render(nlgeval_names, tmp_path):
    import warnings

    for name in nlgeval_names:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ds = bm.datasets.nlgeval(name)
        rep = bm.report(ds, random_seed=0, resampling={"n_resamples": 100})
        for key in RATER_SECTIONS:
            assert rep.section(key).status == "skipped", (name, key)
        failed = {r.key: r.error for r in rep.runs if r.status == "failed"}
        assert not failed, (name, failed)
        _self_contained(rep.save(tmp_path / f"{name}.html").read_text(encoding="utf-8"))


# ----------------------------------------------------------------------- command line
def test_cli_report_on_a_csv(tmp_path, capsys, tiny):
    wide = tiny["score"].sel(run="1").to_dataframe()["score"].unstack("metric")
    wide.columns = [str(c) for c in wide.columns]
    wide = wide.reset_index()
    wide["system"] = wide["system"].replace({wide["system"].iloc[0]: EVIL})
    wide["fluency"] = tiny["rating"].sel(trait="FLU").mean("rater").values.ravel()
    wide.to_csv(tmp_path / "d.csv", index=False)
    out = tmp_path / "r.html"
    code = main(["report", str(tmp_path / "d.csv"), "--human", "fluency", "--trait",
                 "fluency", "--seed", "4", "--out", str(out)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert f"report written to {out.resolve()}" in captured.out
    assert "signature: bayesmeta:" in captured.out
    assert f"[1/{len(SECTIONS)}] Data and design" in captured.err  # a line per section
    html = out.read_text(encoding="utf-8")
    _self_contained(html)
    assert EVIL not in html
    assert "Rater diagnosis" in html


def test_cli_report_bad_input_is_an_error(tmp_path, capsys):
    assert main(["report", str(tmp_path / "missing.csv"), "--out",
                 str(tmp_path / "r.html")]) == 2
    assert "bayesmeta: error:" in capsys.readouterr().err


@pytest.mark.slow
def test_cli_demo_writes_the_report_quickly(tmp_path, capsys):
    import time

    start = time.perf_counter()
    assert main(["demo", "--out", str(tmp_path / "demo.html"), "--seed", "0"]) == 0
    took = time.perf_counter() - start
    out = capsys.readouterr().out
    assert "report written to" in out and "(demo: --bayes off" in out
    assert took < 120, f"the demo took {took:.0f} s (budget: 2 minutes on 2 cores)"
    html = (tmp_path / "demo.html").read_text(encoding="utf-8")
    assert 'data-status="failed"' not in html


# ----------------------------------------------------------------------- real browser
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium not installed (Debian's "
                                              "`chromium`; .ci/run installs it)")
def test_report_renders_in_headless_chromium(sim_report, tmp_path):
    import matplotlib.image as mpimg

    page = sim_report.save(tmp_path / "sim.html")
    shot = tmp_path / "shot.png"
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
             "--allow-file-access-from-files", "--window-size=1200,4000"]
    subprocess.run([CHROMIUM, *flags, f"--screenshot={shot}", page.as_uri()], check=True,
                   capture_output=True, timeout=120)
    img = mpimg.imread(shot)
    assert img.ndim == 3 and img.shape[0] > 100
    rgb = img[..., :3]
    assert rgb.std() > 0.02, "the screenshot is blank"
    assert (rgb < 0.5).mean() > 0.001, "no dark pixels: no text was drawn"
    dom = subprocess.run([CHROMIUM, *flags, "--dump-dom", page.as_uri()], check=True,
                         capture_output=True, timeout=120, text=True).stdout
    for sec in SECTIONS:
        assert f'id="sec-{sec.key}"' in dom
    # the escaped system name is text in the rendered DOM, not a script element
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in dom
    assert "<script>alert(1)" not in dom
    n_img = dom.count('<img class="plot"')
    assert n_img == sum(len(r.images) for r in sim_report.runs) and n_img > 0
    assert dom.count("data:image/png;base64,") == n_img
