"""Result objects: summary shape, printing, plotting, netCDF round trip."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pandas as pd

import bayesmeta as bm


def test_classical_results_round_trip(tmp_path, simulated):
    for res in (bm.consistency(simulated, n_items=30, n_subsets=10, random_seed=1),
                bm.stability(simulated), bm.agreement(simulated), bm.mtmm(simulated),
                bm.concurrent_validity(simulated, ["COH", "FLU"])):
        path = res.save(tmp_path / f"{type(res).__name__}.nc")
        back = bm.load(path)
        assert type(back) is type(res)
        pd.testing.assert_frame_equal(back.summary(), res.summary())
        assert back.info == res.info and back.title == res.title
        assert str(back) == str(res)


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


def test_plot_returns_figure(simulated):
    fig = bm.stability(simulated).plot()
    assert isinstance(fig, matplotlib.figure.Figure)
    assert len(fig.axes[0].get_yticklabels()) == 12
