"""Options never dropped (issue 20): the report passes each section exactly the options its
analyses take, an option that no section of the run takes is an error naming it, and a
misspelt option is an error naming it."""

from __future__ import annotations

import functools
import importlib
import inspect

import pytest

import bayesmeta as bm
from bayesmeta.options import ResamplingOptions
from bayesmeta.report import SECTIONS
from bayesmeta.report._core import OPTIONS

#: The packages the sections call into, whose public functions are watched.
PACKAGES = ["bayesmeta.reliability", "bayesmeta.agreement", "bayesmeta.validity",
            "bayesmeta.correlation", "bayesmeta.reference_free", "bayesmeta.raters",
            "bayesmeta.compare"]
GIVEN = {"coefficient": "pearson", "ci_prob": 0.8, "random_seed": 5,
         "resampling": {"n_resamples": 20, "n_permutations": 19}}


@pytest.fixture(scope="module")
def data():
    ds = bm.datasets.simulated(n_systems=6, n_items=20, random_seed=2)
    metrics = [str(m) for m in ds["metric"].values]
    return bm.metric_kinds(ds, reference_based=metrics[: len(metrics) // 2])


@pytest.fixture
def calls(monkeypatch):
    """Every call of a watched analysis, as (name, keyword arguments, signature)."""
    seen: list[tuple[str, dict, inspect.Signature]] = []
    for pkg_name in PACKAGES:
        pkg = importlib.import_module(pkg_name)
        names = getattr(pkg, "__all__", [])
        for name in names:
            fn = getattr(pkg, name, None)
            if not inspect.isfunction(fn):
                continue

            def wrap(f=fn, n=name):
                @functools.wraps(f)
                def inner(*args, **kwargs):
                    seen.append((n, dict(kwargs), inspect.signature(f)))
                    return f(*args, **kwargs)
                return inner

            monkeypatch.setattr(pkg, name, wrap())
    return seen


def _received(value, option):
    if option == "resampling":
        opts = ResamplingOptions.coerce(value)
        return (opts.n_resamples, opts.n_permutations) == (20, 19)
    return value == GIVEN[option]


# "judges" needs data with LLM judges: tests/test_report_judges.py checks its options;
# "wmt" a WMT campaign: tests/test_report_wmt.py checks its options
@pytest.mark.parametrize("section", [s for s in SECTIONS if not s.bayesian and
                                     s.key not in ("data", "judges", "wmt")],
                         ids=lambda s: s.key)
def test_each_option_reaches_every_analysis_that_takes_it(section, data, calls):
    """Run one section with the options it declares: every analysis it calls that takes
    ``ci_prob``, ``resampling``, ``random_seed`` or ``coefficient`` receives the report's
    value, and every declared option reaches at least one analysis."""
    options = {k: v for k, v in GIVEN.items() if k in (section.options or ())}
    rep = bm.report(data, sections=[section.key], progress=False, **options)
    run = rep.section(section.key)
    assert run.status == "ok", (run.reason, run.error)
    assert calls, f"section {section.key} called no watched analysis"
    reached = set()
    for name, kwargs, sig in calls:
        for option in ("ci_prob", "resampling", "random_seed", "coefficient"):
            if option in sig.parameters and option in options:
                assert option in kwargs, f"{section.key}: {name}() takes {option}= but got none"
                if name == "compare_metrics" and option == "resampling":
                    # the report shows no compare_metrics p-value: it runs without its
                    # permutation tests (issue 21, time budget), the resamples unchanged
                    opts = ResamplingOptions.coerce(kwargs[option])
                    assert (opts.n_resamples, opts.n_permutations) == (20, 0)
                else:
                    assert _received(kwargs[option], option), (section.key, name, option)
                reached.add(option)
        if "measures" in kwargs and "coefficient" in options:
            assert kwargs["measures"] in (GIVEN["coefficient"], *(
                f"{g}_{GIVEN['coefficient']}" for g in ("system", "global", "within_item",
                                                         "within_system"))), (name, kwargs)
            reached.add("coefficient")
    assert reached == set(options), (section.key, sorted(set(options) - reached))


def test_declared_options_are_report_options():
    for sec in SECTIONS:
        assert set(sec.options) <= set(OPTIONS), sec.key


def test_an_option_no_section_takes_is_an_error(data):
    with pytest.raises(ValueError, match=r"option coefficient= is taken by no section.*"
                                         r"'mtmm'"):
        bm.report(data, sections=["data", "agreement"], coefficient="pearson")
    with pytest.raises(ValueError, match=r"option resampling= is taken by no section"):
        bm.report(data, sections=["mtmm"], resampling={"n_resamples": 50})
    # options left at their defaults are never an error
    assert bm.report(data, sections=["agreement"]).section("agreement").status == "ok"


def test_a_misspelt_option_is_an_error_naming_it(data):
    with pytest.raises(TypeError, match="n_resample"):
        bm.report(data, sections=["data"], n_resample=10)
    with pytest.raises(TypeError, match="method"):
        bm.report(data, sections=["data"], method="pearson")
    with pytest.raises(TypeError, match="n_resamples"):
        bm.report(data, sections=["data"], resampling={"n_resample": 10})


def test_loo_comparison_runs_only_on_request(data, monkeypatch, tmp_path):
    """The CFA section's LOO comparison with one general factor (a second Bayesian CFA) runs
    with ``loo=True`` only (issue 19: no work nobody asked for); asking for it without the
    Bayesian models, or without the CFA section, is an error naming why."""
    with pytest.raises(ValueError, match="loo=True compares Bayesian CFAs"):
        bm.report(data, sections=["cfa"], loo=True)
    with pytest.raises(ValueError, match=r"option loo= is taken by no section.*'cfa'"):
        bm.report(data, sections=["rater"], bayes="full", loo=True)
    with pytest.raises(ValueError, match="loo must be True or False"):
        bm.report(data, sections=["cfa"], bayes="full", loo="yes")
    # the command line passes --loo through (the report itself stood in for)
    import bayesmeta.cli as cli

    seen = {}

    class _Stop(Exception):
        pass

    def fake_report(ds, **kwargs):
        seen.update(kwargs)
        raise _Stop

    monkeypatch.setattr(bm, "report", fake_report)
    for argv, want in ((["demo", "--bayes", "full", "--loo"], True), (["demo"], None)):
        seen.clear()
        with pytest.raises(_Stop):
            cli.main([*argv, "--out", str(tmp_path / "x.html"), "--no-progress"])
        assert seen["loo"] is want, argv
