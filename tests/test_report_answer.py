"""The report's opening answer, its partial sections and its time budget (issue 21).

- The page opens with the answer (best metrics per trait with intervals and P(best), raters,
  limits, data quality); the sections follow; settings and provenance close the page.
- The headline of the README's USR example names the metric and value a reader computes by
  hand (pandas + scipy.stats.kendalltau on the file itself).
- A section with an estimate that cannot be computed is "partial", with the reason.
- The budget lowers default resamples on a SummEval-sized file and refuses a 2,000-metric
  file before computing.
"""

from __future__ import annotations

import ast
import os
import time
import warnings

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import bayesmeta as bm
from bayesmeta.cli import main
from bayesmeta.report import SECTIONS
from bayesmeta.report._budget import BAYES_BUDGET, DEFAULT_BUDGET, MIN_RESAMPLES, plan


@pytest.fixture(scope="module")
def small():
    return bm.datasets.simulated(random_seed=5, n_systems=6, n_items=12, n_metrics=4)


@pytest.fixture(scope="module")
def small_report(small):
    return bm.report(small, sections=["data", "agreement", "correlations"], random_seed=2,
                     resampling={"n_resamples": 30}, progress=False)


def test_the_page_opens_with_the_answer_and_ends_with_provenance(small_report):
    html = small_report.html()
    order = ['id="answer"', 'id="answer-metrics"', 'id="answer-raters"', 'id="answer-limits"',
             'id="answer-quality"', 'id="sec-data"', 'id="sec-agreement"',
             'id="sec-correlations"', 'id="provenance"', 'id="convergence-ok"',
             "Signature:"]
    where = [html.index(key) for key in order]
    assert where == sorted(where), dict(zip(order, where, strict=True))
    # one headline per trait, in the answer, with intervals and P(best)
    answer = html[html.index('id="answer"'):html.index('id="sec-data"')]
    for trait in small_report.context.traits:
        assert f'data-trait="{trait}"' in answer
    assert "P(best)" in answer and "classical estimate" in answer
    assert "posterior mean" in answer
    # the raters' finding and the limits (Bayesian sections off) are in the answer
    assert "krippendorff" in answer
    assert "--bayes off" in answer


def test_headline_values_are_the_tables_own(small_report, small):
    """The headline's best metric is the correlation table's maximum of the classical
    system-level Kendall, and its P(best) the rank-1 probability of compare_metrics."""
    run = small_report.section("correlations")
    findings = [f for f in run.output.findings if f.kind == "best"]
    assert [f.trait for f in findings] == list(small_report.context.traits)
    for f, (cor, cmp_) in zip(findings, zip(run.output.results[::2],
                                             run.output.results[1::2], strict=True),
                              strict=True):
        sub = cor.summary().xs("system_kendall", level=0)["classical"].droplevel("trait")
        best = f.frame.index[0]
        assert sub[best] == pytest.approx(sub.max(), abs=1e-12)
        assert f.frame.loc[best, "classical"] == pytest.approx(sub.max(), abs=1e-12)
        p1 = cmp_.rank_probability("system_kendall").loc[best].iloc[0]
        assert f.frame.loc[best, "p_best"] == pytest.approx(p1, abs=1e-12)
        assert f"the best metric is {best}, system_kendall {sub.max():.2f}" in f.text


def _first(cell):
    """A reference-based cell of the nlgeval files: a list string, its first element."""
    if isinstance(cell, str) and cell.startswith("["):
        return float(ast.literal_eval(cell)[0])
    return float(cell)


def test_usr_headline_is_the_hand_computed_best_metric(tmp_path):
    """Must show (issue 21): the README's report example on the USR file; its headline
    for 'Natural' names the metric with the highest system-level Kendall tau-b between
    system means, computed here by hand from the CSV with pandas and scipy."""
    from scipy.stats import kendalltau
    from test_readme import _readme_report_usr

    from bayesmeta.cli import build_parser, read_from_args

    try:
        folder = bm.datasets.find_nlgeval()
    except FileNotFoundError as err:
        if os.environ.get("BAYESMETA_REQUIRE_DATA", "") not in ("", "0", "false", "False"):
            pytest.fail(f"BAYESMETA_REQUIRE_DATA is set but the nlgeval files are missing: "
                        f"{err}")
        pytest.skip(f"nlgeval files not found (set BAYESMETA_DATA): {err}")
    path = folder / "usr_topic_mean.csv"
    argv = _readme_report_usr()
    argv[argv.index("usr_topic_mean.csv")] = str(path)
    argv[argv.index("--out") + 1] = str(tmp_path / "report.html")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds = read_from_args([str(path)], build_parser().parse_args(argv))
    rep = bm.report(ds, traits="Natural", sections=["data", "correlations"], random_seed=0,
                    resampling={"n_resamples": 40}, progress=False)
    finding = next(f for f in rep.section("correlations").output.findings
                   if f.kind == "best")
    # by hand: system = the id's part after the first "_", means over items, tau-b
    raw = pd.read_csv(path)
    system = raw["id"].str.split("_", n=1).str[1]
    human = ["Understandable", "Natural", "Maintains Context", "Engaging",
             "Uses Knowledge", "Overall"]
    h = raw["Natural"].groupby(system).mean()
    taus = {}
    for col in raw.columns:
        if col == "id" or col in human:
            continue
        x = raw[col].map(_first).groupby(system).mean()
        taus[col] = kendalltau(x.loc[h.index], h, variant="b").statistic
    best_value = max(taus.values())
    winners = {m for m, v in taus.items() if abs(v - best_value) < 1e-12}
    metric = str(finding.frame.index[0])
    assert metric in winners, (metric, sorted(winners))
    assert finding.frame.iloc[0]["classical"] == pytest.approx(best_value, abs=1e-12)
    html = rep.html()
    answer = html[html.index('id="answer"'):html.index('id="sec-data"')]
    assert f"Natural: the best metric is {metric}, system_kendall {best_value:.2f}" in answer
    assert metric not in human


def test_an_estimate_that_cannot_be_computed_makes_the_section_partial(small):
    ds = small.copy(deep=True)
    const = str(ds["metric"].values[0])
    ds["score"].loc[{"metric": const}] = 0.5
    rep = bm.report(ds, traits="COH", sections=["correlations"], random_seed=1,
                    resampling={"n_resamples": 20}, progress=False)
    run = rep.section("correlations")
    assert run.status == "partial"
    text = " ".join(run.partial)
    assert f"system_kendall of {const} cannot be computed: the metric is constant" in text
    assert "have no estimate (NaN)" in text
    html = rep.html()
    assert 'data-status="partial"' in html and "the metric is constant" in html
    answer = html[html.index('id="answer"'):html.index('id="sec-correlations"')]
    assert "Correlation measures: system_kendall of" in answer
    assert "partial" in rep.text()


def test_budget_lowers_default_resamples_on_a_summeval_sized_file():
    ds = bm.datasets.simulated(n_metrics=43)  # 17 systems x 100 items, as SummEval
    keys = [s.key for s in SECTIONS]
    traits = [str(t) for t in ds["trait"].values]
    p = plan(ds, traits, keys, n_resamples=1000, n_permutations=1000,
             budget=DEFAULT_BUDGET, resamples_given=False)
    assert p.seconds <= DEFAULT_BUDGET and MIN_RESAMPLES <= p.n_resamples < 1000
    assert p.reduced and "resamples reduced from 1000 to" in p.reduced[0]
    # a choice the user made is never lowered: the report refuses instead, naming it
    with pytest.raises(ValueError, match=r"with 1000 resamples, over the budget of 120 s"):
        plan(ds, traits, keys, n_resamples=1000, n_permutations=1000,
             budget=DEFAULT_BUDGET, resamples_given=True)
    # no budget: nothing reduced
    assert plan(ds, traits, keys, n_resamples=1000, n_permutations=1000, budget=0,
                resamples_given=False).n_resamples == 1000


def test_reduced_resamples_are_said_on_the_page():
    """The budget's reduction reaches the sections and the top of the page (a stand-in
    section under the key "correlations", so the plan is the real one and nothing heavy
    runs)."""
    from bayesmeta.report import Section, SectionOutput

    seen = {}

    def cheap(data, ctx):
        seen["resampling"] = ctx.resampling
        return SectionOutput("Correlation measures", reading="cheap")

    ds = bm.datasets.simulated(random_seed=1, n_systems=6, n_items=12, n_metrics=60)
    sec = Section("correlations", "Correlation measures", cheap)
    p = plan(ds, ["COH"], ["correlations"], n_resamples=1000, n_permutations=1000,
             budget=0, resamples_given=False)
    budget = 0.6 * p.seconds  # forces a reduction
    rep = bm.report(ds, traits="COH", sections=[sec], random_seed=1, budget=budget,
                    progress=False)
    assert rep.context.n_resamples < 1000
    assert seen["resampling"].n_resamples == rep.context.n_resamples
    assert seen["resampling"].n_permutations == rep.context.n_resamples
    html = rep.html()
    assert 'id="budget-reduced"' in html and "resamples reduced from 1000 to" in html
    assert html.index('id="budget-reduced"') < html.index('id="sec-correlations"')



def test_a_bayesian_report_keeps_its_resampling_within_a_default_budget():
    """Issue 19: with ``bayes="full"`` the resampling sections had no budget, so a SummEval
    report ran 1,000 permutations per metric pair (1,827 s) beside its MCMC. Now the default
    budget (300 s) covers the estimated work, and the plan says the sampling comes on top.
    A stand-in section under the key "correlations" (estimated 412 s for 4 traits on
    SummEval-sized data with 1,000 resamples), so the plan is the real one and nothing
    heavy runs."""
    from bayesmeta.report import Section, SectionOutput

    seen = {}

    def cheap(data, ctx):
        seen["resampling"], seen["bayes"] = ctx.resampling, ctx.bayes
        return SectionOutput("Correlation measures", reading="cheap")

    ds = bm.datasets.simulated(random_seed=1, n_metrics=43)  # 17 systems x 100 items
    sec = Section("correlations", "Correlation measures", cheap,
                  options=("resampling", "bayes"))
    traits = [str(t) for t in ds["trait"].values]
    full = plan(ds, traits, ["correlations"], n_resamples=1000, n_permutations=1000,
                budget=0, resamples_given=False, bayes="full")
    assert full.seconds > BAYES_BUDGET  # the test needs a run over the default
    rep = bm.report(ds, sections=[sec], bayes="full", random_seed=1,
                    progress=False)
    assert seen["bayes"] == "full"
    assert MIN_RESAMPLES <= seen["resampling"].n_resamples < 1000
    assert f"budget {BAYES_BUDGET:.0f} s" in rep.budget_line
    assert "Bayesian models' sampling (not in the estimate)" in rep.budget_line
    # --budget 0 still runs everything, and bayes="off" keeps its 2-minute default
    bm.report(ds, sections=[sec], bayes="full", random_seed=1, budget=0,
              progress=False)
    assert seen["resampling"].n_resamples == 1000
    rep = bm.report(ds, sections=[sec], random_seed=1, progress=False)
    assert f"budget {DEFAULT_BUDGET:.0f} s" in rep.budget_line
    assert "not in the estimate" not in rep.budget_line

def test_a_2000_metric_file_is_refused_before_computing(tmp_path, capsys):
    """Must show (issue 21): `bayesmeta report` on a 2,000-metric file refuses with the
    reason, quickly and before computing (no page written)."""
    rng = np.random.default_rng(0)
    systems, items, m = 10, 20, 2000
    frame = pd.DataFrame(rng.normal(size=(systems * items, m)),
                         columns=[f"m{k:04d}" for k in range(m)])
    frame.insert(0, "human", rng.integers(1, 6, size=systems * items).astype(float))
    frame.insert(0, "item", np.tile(np.arange(items), systems))
    frame.insert(0, "system", np.repeat([f"s{k}" for k in range(systems)], items))
    path = tmp_path / "wide2000.csv"
    frame.to_csv(path, index=False)
    out = tmp_path / "r.html"
    start = time.perf_counter()
    code = main(["report", str(path), "--system", "system", "--item", "item", "--human",
                 "human", "--no-progress", "--out", str(out)])
    took = time.perf_counter() - start
    err = capsys.readouterr().err
    assert code == 2, err
    assert "over the budget of 120 s" in err and "2,000 metrics" in err
    assert "Nothing was computed" in err and "--budget" in err
    assert not out.exists()
    assert took < 60, f"the refusal took {took:.0f} s (load {os.getloadavg()})"


def test_progress_is_off_when_not_interactive_and_when_asked(small, capsys):
    bm.report(small, sections=["data"], random_seed=1, progress=False)
    assert capsys.readouterr().err == ""
    bm.report(small, sections=["data"], random_seed=1)  # pytest's stderr is no terminal
    assert capsys.readouterr().err == ""
    bm.report(small, sections=["data"], random_seed=1, progress=True)
    err = capsys.readouterr().err
    assert err.startswith("bayesmeta report: estimated") and "[1/1] Data and design" in err


def test_budget_argument_is_checked(small):
    with pytest.raises(ValueError, match="budget"):
        bm.report(small, sections=["data"], budget=-1)
    assert isinstance(small, xr.Dataset)


def test_budget_counts_the_agreement_section_by_its_size():
    """The agreement section's estimate grows linearly with resamples and raters (its
    cost model: resamples x outputs x raters x traits), so a panel of LLM judges added
    to the experts is counted, not a fixed second."""
    from bayesmeta.report._budget import SEC_AGREE, SEC_FIXED, estimate

    ds = bm.datasets.simulated(n_systems=6, n_items=10)
    n = 6 * 10 * ds.sizes["rater"] * ds.sizes["trait"]
    per, _ = estimate(ds, [], ["agreement"], n_resamples=500, n_permutations=0)
    assert per["agreement"] == pytest.approx(SEC_FIXED + SEC_AGREE * 500 * n, rel=1e-12)
    per2, _ = estimate(ds, [], ["agreement"], n_resamples=1000, n_permutations=0)
    assert per2["agreement"] - SEC_FIXED == pytest.approx(2 * (per["agreement"] - SEC_FIXED),
                                                          rel=1e-12)


def test_the_wmt_section_costs_nothing_on_data_that_is_not_a_campaign():
    """Regression: the WMT section's SPA cost (growing with permutations squared) was
    estimated on every dataset, so `bayesmeta demo` refused its own built-in data as over
    budget; the section skips on data without language pairs and must be counted so."""
    from bayesmeta.report._budget import SEC_FIXED, estimate

    ds = bm.datasets.simulated()  # the demo's data: no 'lp' dim, no attrs['lp']
    traits = [str(t) for t in ds["trait"].values]
    per, _ = estimate(ds, traits, ["wmt"], n_resamples=1000, n_permutations=1000)
    assert per["wmt"] == pytest.approx(SEC_FIXED, rel=1e-12)
    keys = [s.key for s in SECTIONS]
    p = plan(ds, traits, keys, n_resamples=200, n_permutations=200, budget=DEFAULT_BUDGET,
             resamples_given=False)
    assert p.seconds <= DEFAULT_BUDGET
