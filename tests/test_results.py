"""Result objects: summary shape, printing, plotting, netCDF round trip."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pandas as pd
import pytest

import bayesmeta as bm
from bayesmeta.summaries import check_table


def test_classical_results_round_trip(tmp_path, simulated):
    for res in (bm.consistency(simulated, n_items=30, n_subsets=10, random_seed=1),
                bm.stability(simulated), bm.agreement(simulated), bm.mtmm(simulated),
                bm.concurrent_validity(simulated, ["COH", "FLU"])):
        check_table(res.summary())
        path = res.save(tmp_path / f"{type(res).__name__}.nc")
        back = bm.load(path)
        assert type(back) is type(res)
        pd.testing.assert_frame_equal(back.summary(), res.summary())
        pd.testing.assert_frame_equal(back.details(), res.details())
        assert back.info == res.info and back.title == res.title
        assert back.provenance == res.provenance
        assert str(back) == str(res)


def test_classical_table_indexes(simulated):
    """The index levels of the classical tables (design: estimand first, then labels)."""
    assert bm.consistency(simulated).summary().index.names == ["estimand", "variable"]
    assert bm.stability(simulated).summary().index.names == ["estimand", "metric"]
    assert bm.agreement(simulated).summary().index.names == ["estimand", "trait"]
    mt = bm.mtmm(simulated)
    assert mt.summary().index.names == ["estimand", "variable", "variable2"]
    assert "cell" in mt.details().columns
    cv = bm.concurrent_validity(simulated, "COH").summary()
    assert cv.index.names == ["estimand", "trait", "metric"]
    assert set(cv.index.get_level_values("estimand")) == {"system_kendall"}


def test_summary_is_a_copy_and_unrounded(simulated):
    res = bm.consistency(simulated)
    tab = res.summary()
    tab.loc[:, "classical"] = 0
    assert (res.summary()["classical"] != 0).all()
    assert res.summary()["classical"].iloc[0] != round(res.summary()["classical"].iloc[0], 3)


def test_print_reads_like_a_report(simulated):
    text = str(bm.consistency(simulated))
    assert text.startswith("Metric consistency")
    assert "system 17, item 100" in text
    assert "Rater.1.COH" in text
    text = str(bm.consistency(simulated, n_items=20, n_subsets=5, random_seed=4))
    assert "94% range over random item subsets" in text
    assert "seed:4" in text
    assert "94% Fisher z interval" in str(bm.stability(simulated))


def test_plot_returns_figure(simulated):
    fig = bm.stability(simulated).plot()
    assert isinstance(fig, matplotlib.figure.Figure)
    assert len(fig.axes[0].get_yticklabels()) == 12
    assert fig.axes[0].get_yticklabels()[0].get_text() == "metric01.COH"
    fig = bm.consistency(simulated).plot(estimand="sem")
    assert len(fig.axes[0].get_yticklabels()) == 24
    with pytest.raises(ValueError, match="estimand must be one of 'alpha', 'sem'"):
        bm.consistency(simulated).plot(estimand="stability")


def test_load_imports_the_module_of_a_lazily_imported_result_class(tmp_path):
    """A Bayesian CFA result saved in one session loads as itself in a fresh one, where
    its model module (imported lazily to keep `import bayesmeta` light) is not loaded."""
    import subprocess
    import sys
    import textwrap

    save = textwrap.dedent('''
        import sys
        import pandas as pd
        from bayesmeta.validity.ordinal_cfa import OrdinalCFAResult
        idx = pd.MultiIndex.from_tuples([("loading", "coh")], names=["estimand", "trait"])
        OrdinalCFAResult(pd.DataFrame({"mean": [0.8]}, index=idx), title="t").save(sys.argv[1])
    ''')
    load = textwrap.dedent('''
        import sys
        import bayesmeta as bm
        assert "bayesmeta.validity.ordinal_cfa" not in sys.modules
        print(type(bm.load(sys.argv[1])).__name__)
    ''')
    path = str(tmp_path / "cfa.nc")
    subprocess.run([sys.executable, "-c", save, path], check=True)
    out = subprocess.run([sys.executable, "-c", load, path], check=True, capture_output=True,
                         text=True)
    assert out.stdout.strip() == "OrdinalCFAResult"
