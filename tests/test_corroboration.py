"""Corroboration with heterogeneous metrics (paper 003, Amigó et al.).

Reference: the definitions of paper 003 (Secs. 5-7) implemented below as plain loops over
explicitly enumerated pairs (s, s') of outputs of different systems for the same item.
Every vectorised statistic must equal them to 1e-12 (they count the same pairs; only the
order of floating-point sums differs).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import xarray as xr

import bayesmeta as bm
from bayesmeta.corroboration import heterogeneity as het
from bayesmeta.summaries import check_table

TOL = 1e-12


# ----------------------------------------------------------------------------- reference
def ref_pairs(S, I):
    return [(s, t, i) for i in range(I) for s in range(S) for t in range(S) if s != t]


def _ge(strict):
    return (lambda a, b: a > b) if strict else (lambda a, b: a >= b)


def ref_stats(x, q, X, *, strict=False, w=None, lower=()):
    """R, S, H of metric set X (positions) by the paper's definitions, optionally with a
    weight per pair (dict (s, t, i) -> weight); metrics in ``lower`` (positions) are
    lower-is-better: "s at least as s'" reads x(s) <= x(s') for them."""
    ge = _ge(strict)
    _, S, I = x.shape
    agree = agree_good = good = split = total = 0.0

    def better(m, s, t, i):  # x(s) "better or equal" x(s'), in the metric's direction
        return ge(x[m, t, i], x[m, s, i]) if m in lower else ge(x[m, s, i], x[m, t, i])

    def gt(m, s, t, i):  # strictly better
        return x[m, s, i] < x[m, t, i] if m in lower else x[m, s, i] > x[m, t, i]

    for s, t, i in ref_pairs(S, I):
        wt = 1.0 if w is None else w[(s, t, i)]
        total += wt
        g = ge(q[s, i], q[t, i])
        a = all(better(m, s, t, i) for m in X)
        h = any(gt(m, s, t, i) and gt(n, t, s, i) for m in X for n in X)
        good += wt * g
        agree += wt * a
        agree_good += wt * (a and g)
        split += wt * h
    R = agree_good / agree if agree > 0 else np.nan
    return R, agree_good / good, split / total


def ref_curve(x, q, m, *, strict=False, w=None, lower=()):
    """(threshold, R_th, S_th) for every distinct score difference of metric m (the
    difference x(s') - x(s) when m is lower-is-better)."""
    ge = _ge(strict)
    _, S, I = x.shape
    pairs = ref_pairs(S, I)
    wt = (lambda p: 1.0) if w is None else w.__getitem__

    def d(s, t, i):
        return x[m, t, i] - x[m, s, i] if m in lower else x[m, s, i] - x[m, t, i]

    diffs = sorted({d(s, t, i) for s, t, i in pairs}, reverse=True)
    out = []
    for th in diffs:
        sel = [(s, t, i) for s, t, i in pairs if d(s, t, i) >= th]
        good = sum(wt((s, t, i)) for s, t, i in pairs if ge(q[s, i], q[t, i]))
        n_sel = sum(wt(p) for p in sel)
        n_sg = sum(wt((s, t, i)) for s, t, i in sel if ge(q[s, i], q[t, i]))
        out.append((th, n_sg / n_sel, n_sg / good))
    return out


def ref_match(curve, s_x, how):
    """The highest R_th among equal S_th, then interpolated or nearest at S(X)."""
    best = {}
    for _, r, s in curve:
        best[s] = max(best.get(s, -np.inf), r)
    ss = sorted(best)
    rr = [best[s] for s in ss]
    if how == "interpolate":
        return float(np.interp(s_x, ss, rr))
    d = [abs(s - s_x) for s in ss]
    cands = [r for dd, r in zip(d, rr, strict=True) if dd == min(d)]
    return max(cands)


def ref_gain(x, q, X, how="interpolate", w=None, lower=()):
    R, S_, _ = ref_stats(x, q, X, w=w, lower=lower)
    return R - max(ref_match(ref_curve(x, q, m, w=w, lower=lower), S_, how) for m in X)


# ----------------------------------------------------------------------------- hand-made
def one_item(*rows):
    return np.array(rows, dtype=float)[:, :, None]


def test_known_answers_perfect_and_reversed_metric():
    q = np.array([[1.0], [2.0], [3.0]])
    x = one_item([1, 2, 3], [-1, -2, -3])  # a = Q, b = reversed
    pt = het.build_pairs(x, q, metrics=["a", "b"])
    st = het.set_statistics(pt, het.as_index_sets([[0], [1], [0, 1]], 2))
    assert st["reliability"][:2].tolist() == [1.0, 0.0]
    assert st["sensitivity"].tolist() == [1.0, 0.0, 0.0]
    assert st["heterogeneity"].tolist() == [0.0, 0.0, 1.0]
    # the two never agree: R({a, b}) is undefined, and so is its gain
    assert np.isnan(st["reliability"][2])
    curve = het.threshold_curve(pt, 0)
    assert curve["threshold"].tolist() == [2.0, 1.0, -1.0, -2.0]
    assert curve["reliability"].tolist() == [1.0, 1.0, 0.6, 0.5]
    assert np.allclose(curve["sensitivity"], [1 / 3, 1, 1, 1], atol=TOL)


def test_known_answers_ties():
    q = np.array([[1.0], [1.0], [2.0]])
    x = one_item([0, 0, 1], [0, 0, 0])  # c follows Q's ties; d is constant
    idx = het.as_index_sets([[0], [1], [0, 1]], 2)
    paper = het.set_statistics(het.build_pairs(x, q), idx)
    assert paper["reliability"].tolist() == [1.0, 4 / 6, 1.0]
    assert paper["sensitivity"].tolist() == [1.0, 1.0, 1.0]
    assert paper["heterogeneity"].tolist() == [0.0, 0.0, 0.0]
    strict = het.set_statistics(het.build_pairs(x, q, ties="strict"), idx)
    assert strict["reliability"][0] == 1.0 and np.isnan(strict["reliability"][1])
    assert strict["sensitivity"].tolist() == [1.0, 0.0, 0.0]


def small_example(seed=0, S=4, I=3):
    """Discrete scores with ties, a random metric and a reversed metric."""
    rng = np.random.default_rng(seed)
    q = rng.integers(1, 4, size=(S, I)).astype(float)
    good = q + rng.integers(0, 2, size=(S, I))
    noisy = np.round(q + rng.normal(0, 1, size=(S, I)), 1)
    rand = rng.integers(0, 3, size=(S, I)).astype(float)
    rev = 1.0 / (noisy + 10.0)  # the paper's reversal x' = 1/x
    return np.stack([good, noisy, rand, rev]), q


ALL_SETS = [list(c) for k in (1, 2, 3, 4) for c in itertools.combinations(range(4), k)]


@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize("seed", [0, 1])
def test_statistics_equal_the_loop_definitions(seed, strict):
    x, q = small_example(seed)
    pt = het.build_pairs(x, q, ties="strict" if strict else "paper")
    st = het.set_statistics(pt, het.as_index_sets(ALL_SETS, 4))
    for k, X in enumerate(ALL_SETS):
        R, S_, H = ref_stats(x, q, X, strict=strict)
        assert st["sensitivity"][k] == pytest.approx(S_, abs=TOL), X
        assert st["heterogeneity"][k] == pytest.approx(H, abs=TOL), X
        if np.isnan(R):
            assert np.isnan(st["reliability"][k]), X
        else:
            assert st["reliability"][k] == pytest.approx(R, abs=TOL), X


def test_curves_and_gain_equal_the_loop_definitions():
    x, q = small_example(2, S=5, I=3)
    pt = het.build_pairs(x, q)
    for m in range(4):
        c = het.threshold_curve(pt, m)
        ref = ref_curve(x, q, m)
        assert np.allclose(c["threshold"], [r[0] for r in ref], atol=TOL, rtol=0)
        assert np.allclose(c["reliability"], [r[1] for r in ref], atol=TOL, rtol=0)
        assert np.allclose(c["sensitivity"], [r[2] for r in ref], atol=TOL, rtol=0)
    idx = het.as_index_sets(ALL_SETS, 4)
    st = het.set_statistics(pt, idx)
    for how in ("interpolate", "nearest"):
        g, _ = het.gain(pt, idx, st, match=how)
        for k, X in enumerate(ALL_SETS):
            want = ref_gain(x, q, X, how)
            if np.isnan(want):
                assert np.isnan(g[k])
            else:
                assert g[k] == pytest.approx(want, abs=TOL), (X, how)


def test_additive_check_equals_the_loop_definition():
    x, q = small_example(3)
    pt = het.build_pairs(x, q)
    sets = [[0], [1], [2], [0, 1], [2, 3]]
    holds, diff = het.additive_cases(pt, het.as_index_sets(sets, 4))
    for k, X in enumerate(sets):
        for m in range(4):
            if m in X:
                assert np.isnan(diff[k, m])
                continue
            r0, r1 = ref_stats(x, q, X)[0], ref_stats(x, q, [*X, m])[0]
            if np.isnan(r0) or np.isnan(r1):
                assert np.isnan(holds[k, m])
            else:
                assert diff[k, m] == pytest.approx(r1 - r0, abs=TOL)
                assert holds[k, m] == float(r1 >= r0)


def test_weighted_additive_check_equals_the_weighted_loop():
    x, q = small_example(3)
    pt = het.build_pairs(x, q)
    sets = [[0], [1], [2], [0, 1], [2, 3], [0, 1, 2]]
    idx = het.as_index_sets(sets, 4)
    holds, _ = het.additive_cases(pt, idx)
    h1, n1 = het.additive_weighted(pt, idx, np.ones((pt.n_pairs, 1)))
    assert n1[0] == (~np.isnan(holds)).sum() and h1[0] == np.nansum(holds)
    rng = np.random.default_rng(1)
    a, b = rng.dirichlet(np.ones(4), size=3) * 4, rng.dirichlet(np.ones(3), size=3) * 3
    h, n = het.additive_weighted(pt, idx, het.pair_weights(pt, a, b))
    for d in range(3):
        w = {(s, t, i): a[d, s] * a[d, t] * b[d, i] for s, t, i in ref_pairs(4, 3)}
        want_h = want_n = 0
        for X in sets:
            r0 = ref_stats(x, q, X, w=w)[0]
            for m in set(range(4)) - set(X):
                r1 = ref_stats(x, q, [*X, m], w=w)[0]
                if not (np.isnan(r0) or np.isnan(r1)):
                    want_n += 1
                    want_h += r1 - r0 >= -1e-12
        assert (h[d], n[d]) == (want_h, want_n), d


def test_weighted_statistics_equal_the_weighted_loop():
    x, q = small_example(4)
    pt = het.build_pairs(x, q)
    rng = np.random.default_rng(0)
    a, b = rng.dirichlet(np.ones(4), size=3) * 4, rng.dirichlet(np.ones(3), size=3) * 3
    W = het.pair_weights(pt, a, b)
    idx = het.as_index_sets(ALL_SETS, 4)
    st = het.set_statistics(pt, idx, W)
    for d in range(3):
        w = {(s, t, i): a[d, s] * a[d, t] * b[d, i] for s, t, i in ref_pairs(4, 3)}
        for k, X in enumerate(ALL_SETS):
            R, S_, H = ref_stats(x, q, X, w=w)
            assert st["sensitivity"][k, d] == pytest.approx(S_, abs=TOL)
            assert st["heterogeneity"][k, d] == pytest.approx(H, abs=TOL)
            if not np.isnan(R):
                assert st["reliability"][k, d] == pytest.approx(R, abs=TOL)
        g, _ = het.gain(pt, idx, st, W)
        for k, X in enumerate(ALL_SETS):
            want = ref_gain(x, q, X, w=w)
            if not np.isnan(want):
                assert g[k, d] == pytest.approx(want, abs=TOL), X
    # weights that differ between a pair and its reverse (the general path)
    Wa = rng.uniform(0.1, 2.0, size=(pt.n_pairs, 2))
    sta = het.set_statistics(pt, idx, Wa)
    for d in range(2):
        keys = zip(pt.system.tolist(), pt.system2.tolist(), pt.item.tolist(), strict=True)
        w = dict(zip(keys,
                     Wa[:, d], strict=True))
        for k, X in enumerate(ALL_SETS):
            R, S_, H = ref_stats(x, q, X, w=w)
            assert sta["sensitivity"][k, d] == pytest.approx(S_, abs=TOL)
            assert sta["heterogeneity"][k, d] == pytest.approx(H, abs=TOL)
            if not np.isnan(R):
                assert sta["reliability"][k, d] == pytest.approx(R, abs=TOL)
    # unit weights give the unweighted statistics
    ones = het.set_statistics(pt, idx, np.ones((pt.n_pairs, 1)))
    plain = het.set_statistics(pt, idx)
    for key in ("sensitivity", "heterogeneity"):
        assert np.allclose(ones[key][:, 0], plain[key], atol=TOL, rtol=0)


# ----------------------------------------------------------------------------- SummEval
def summeval_subset(ds, trait, n_systems=5, n_items=4):
    from bayesmeta.data import select

    x = select.metric_scores(ds).isel(system=slice(0, n_systems), item=slice(0, n_items))
    q = select.human_score(ds, trait).values.isel(system=slice(0, n_systems),
                                                  item=slice(0, n_items))
    return np.asarray(x.values), np.asarray(q.values), [str(m) for m in x["metric"].values]


def test_summeval_subset_equals_the_loop_definitions(summeval):
    x, q, names = summeval_subset(summeval, "COH")
    pt = het.build_pairs(x, q, metrics=names)
    rng = np.random.default_rng(5)
    sets = [sorted(rng.choice(len(names), size=k, replace=False).tolist())
            for k in (1, 2, 3, 5) for _ in range(3)]
    idx = het.as_index_sets(sets, len(names))
    st = het.set_statistics(pt, idx)
    g, _ = het.gain(pt, idx, st)
    for k, X in enumerate(sets):
        R, S_, H = ref_stats(x, q, X)
        assert st["sensitivity"][k] == pytest.approx(S_, abs=TOL)
        assert st["heterogeneity"][k] == pytest.approx(H, abs=TOL)
        if not np.isnan(R):
            assert st["reliability"][k] == pytest.approx(R, abs=TOL)
            assert g[k] == pytest.approx(ref_gain(x, q, X), abs=TOL), X


# ----------------------------------------------------------------------------- directions
def _same(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    assert np.array_equal(np.isnan(a), np.isnan(b))
    ok = ~np.isnan(a)
    assert np.allclose(a[ok], b[ok], atol=TOL, rtol=0), np.abs(a[ok] - b[ok]).max()


def _all_statistics(pt, sets):
    idx = het.as_index_sets(sets, pt.n_metrics)
    st = het.set_statistics(pt, idx)
    out = {k: st[k] for k in ("reliability", "sensitivity", "heterogeneity")}
    for how in ("interpolate", "nearest"):
        out[f"gain_{how}"] = het.gain(pt, idx, st, match=how)[0]
    return out


def test_reversed_metric_declared_lower_equals_the_original_hand_made():
    x, q = small_example(0, S=5, I=3)
    names = ["good", "noisy", "rand", "rev"]
    flipped = x.copy()
    flipped[1] = -x[1]  # "noisy" reversed: lower is now better
    base = het.build_pairs(x, q, metrics=names)
    decl = het.build_pairs(flipped, q, metrics=names, directions={"noisy": "lower"})
    assert decl.directions == ("higher", "lower", "higher", "higher")
    assert np.array_equal(decl.dx, base.dx)  # negation is exact
    a, b = _all_statistics(base, ALL_SETS), _all_statistics(decl, ALL_SETS)
    for key in a:
        _same(b[key], a[key])
    for m in range(4):
        cb, cd = het.threshold_curve(base, m), het.threshold_curve(decl, m)
        for key in ("threshold", "reliability", "sensitivity"):
            _same(cd[key], cb[key])
    # undeclared, the reversed metric is a different (anti-correlated) metric
    raw = _all_statistics(het.build_pairs(flipped, q, metrics=names), ALL_SETS)
    assert not np.allclose(raw["sensitivity"], a["sensitivity"])
    # the loop reference reading "noisy" as lower-is-better agrees with the vectorised code
    for k, X in enumerate(ALL_SETS):
        R, S_, H = ref_stats(flipped, q, X, lower=(1,))
        assert b["sensitivity"][k] == pytest.approx(S_, abs=TOL), X
        assert b["heterogeneity"][k] == pytest.approx(H, abs=TOL), X
        if np.isnan(R):
            assert np.isnan(b["reliability"][k])
            continue
        assert b["reliability"][k] == pytest.approx(R, abs=TOL), X
        for how in ("interpolate", "nearest"):
            want = ref_gain(flipped, q, X, how, lower=(1,))
            assert b[f"gain_{how}"][k] == pytest.approx(want, abs=TOL), (X, how)
    # the paper's reversal x' = 1/x declared "lower" keeps every sign: R, S, H as "noisy"
    inv = x.copy()
    inv[3] = 1.0 / (x[1] + 10.0)
    sets = [[3], [0, 3], [2, 3], [0, 2, 3]]
    same = [[1], [0, 1], [2, 1], [0, 2, 1]]
    d3 = _all_statistics(het.build_pairs(inv, q, directions={"m3": "lower"}), sets)
    d1 = _all_statistics(base, same)
    for key in ("reliability", "sensitivity", "heterogeneity"):
        _same(d3[key], d1[key])


def test_reversed_metric_declared_lower_equals_the_original_on_summeval(summeval):
    x, q, names = summeval_subset(summeval, "COH")
    rng = np.random.default_rng(7)
    flip = [3, 17, 30]
    flipped = x.copy()
    flipped[flip] = -x[flip]
    base = het.build_pairs(x, q, metrics=names)
    decl = het.build_pairs(flipped, q, metrics=names,
                           directions={names[m]: "lower" for m in flip})
    sets = [[3], [17, 30], [3, 5], [0, 17, 30]] + [
        sorted(rng.choice(len(names), size=k, replace=False).tolist())
        for k in (2, 3, 5) for _ in range(3)]
    a, b = _all_statistics(base, sets), _all_statistics(decl, sets)
    for key in a:
        _same(b[key], a[key])
    for k, X in enumerate(sets[:4]):  # the loop reference with the declared directions
        R, S_, H = ref_stats(flipped, q, X, lower=flip)
        assert b["sensitivity"][k] == pytest.approx(S_, abs=TOL), X
        assert b["heterogeneity"][k] == pytest.approx(H, abs=TOL), X
        if not np.isnan(R):
            assert b["reliability"][k] == pytest.approx(R, abs=TOL), X
            assert b["gain_interpolate"][k] == pytest.approx(
                ref_gain(flipped, q, X, lower=flip), abs=TOL), X


def test_corroboration_directions_public_api(summeval):
    sub = ["ROUGE-1", "BLEU", "BertScore_f1", "CIDEr", "ROUGE.we.1"]
    sub = [m for m in sub if m in set(map(str, summeval["metric"].values))][:4]
    flipped = summeval.copy()
    flipped["score"] = summeval["score"].where(summeval["metric"] != sub[1],
                                               -summeval["score"])
    kw = {"metrics": sub, "sizes": [2, 3], "n_sets": 4, "resampling": {"n_resamples": 8},
          "random_seed": 2}
    base = bm.corroboration(summeval, "COH", **kw)
    decl = bm.corroboration(flipped, "COH", directions={sub[1]: "lower"}, **kw)
    assert base.info["directions"] == "all higher is better"
    assert decl.info["directions"] == f"lower is better (sign flipped): {sub[1]}"
    ta, tb = base.summary(), decl.summary()
    assert ta.index.equals(tb.index)
    for col in ta.columns:
        _same(tb[col], ta[col])
    off = bm.corroboration(summeval, "COH", additive_intervals=False, **kw).summary()
    add = off.xs("additive_share", level="estimand")
    assert add["classical_low"].isna().all() and add["mean"].isna().all()
    _same(add["classical"], ta.xs("additive_share", level="estimand")["classical"])
    # a name of the data's metrics outside metrics= is accepted (and has no effect)
    other = next(m for m in map(str, summeval["metric"].values) if m not in sub)
    bm.corroboration(summeval, "COH", sets=[sub[:2]], directions={other: "lower"},
                     resampling={"n_resamples": 0}, random_seed=0)
    with pytest.raises(ValueError, match="NOPE"):
        bm.corroboration(summeval, "COH", sets=[sub[:2]], directions={"NOPE": "lower"})
    with pytest.raises(ValueError, match=f"direction must be 'higher' or 'lower'.*{sub[1]}"):
        bm.corroboration(summeval, "COH", sets=[sub[:2]], directions={sub[1]: "worse"})


def test_recommend_directions_and_build_pairs_errors():
    from bayesmeta.simulate import simulate_corroboration

    ds = simulate_corroboration(0, n_systems=6, n_items=5)
    flipped = ds.copy()
    flipped["score"] = ds["score"].where(ds["metric"] != "m2", -ds["score"])
    kw = {"k": 2, "target_sensitivity": 0.3, "resampling": {"n_resamples": 10},
          "random_seed": 0}
    a = bm.recommend_metric_set(ds, "Q", **kw)
    b = bm.recommend_metric_set(flipped, "Q", directions={"m2": "lower"}, **kw)
    assert a.info["greedy E[R]"] == pytest.approx(b.info["greedy E[R]"], abs=TOL)
    assert b.info["directions"] == "lower is better (sign flipped): m2"
    _same(b.summary()["classical"], a.summary()["classical"])
    with pytest.raises(ValueError, match="m9"):
        bm.recommend_metric_set(ds, "Q", directions={"m9": "lower"}, **kw)
    x, q = small_example(0)
    with pytest.raises(ValueError, match="'m1': 'down'"):
        het.build_pairs(x, q, directions={"m1": "down"})
    with pytest.raises(ValueError, match="TER"):
        het.build_pairs(x, q, directions={"TER": "lower"})
    with pytest.raises(ValueError, match="dict"):
        het.build_pairs(x, q, directions=["m1"])


@pytest.fixture(scope="module")
def summeval_result(summeval):
    return bm.corroboration(summeval, "COH", sizes=[2, 3, 5, 10, 20, 40], n_sets=20,
                            resampling={"n_resamples": 60}, random_seed=3)


def test_corroboration_table_shape_and_full_data_loop(summeval, summeval_result):
    res = summeval_result
    tab = res.summary()
    check_table(tab)
    assert tab.index.names == ["estimand", "set", "size"]
    assert tab.attrs["classical_ci_kind"] == "cluster bootstrap (items, systems)"
    assert set(tab.index.get_level_values("estimand")) == {
        "reliability", "sensitivity", "heterogeneity", "gain", "share_positive_gain",
        "corr_heterogeneity_reliability", "additive_share"}
    wide = res.sets("classical")
    assert len(wide) == 6 * 20 and wide.index.get_level_values("size").max() == 40
    d = res.details()
    gd = d.xs("gain", level="estimand")
    defined = gd["p_positive"].notna()
    assert gd.loc[defined, "p_positive"].between(0, 1).all()
    assert (gd.loc[~defined, "n_agree"] <= 5).all()  # undefined only where metrics never agree
    assert "draws" in res.extra and res.extra["draws"].sizes["resample"] == 60
    add = tab.xs("additive_share", level="estimand")
    assert add[["classical_low", "classical_high", "hdi_low", "hdi_high"]].notna().all().all()
    # (size 40: every draw gives the same share, so the mean may differ in the last bit)
    assert ((add["hdi_low"] <= add["mean"] + TOL) & (add["mean"] <= add["hdi_high"] + TOL)).all()
    assert add[["classical_low", "hdi_low"]].ge(0).all().all()
    assert add[["classical_high", "hdi_high"]].le(1).all().all()
    assert str(res).count("cluster bootstrap") >= 1
    # one full-data set against the loop over all 27,200 SummEval pairs
    from bayesmeta.data import select

    label = wide.index.get_level_values("set")[0]
    names = label.split("+")
    x = select.metric_scores(summeval, names).values
    q = select.human_score(summeval, "COH").values.values
    R, S_, H = ref_stats(x, q, list(range(len(names))))
    assert wide.iloc[0]["reliability"] == pytest.approx(R, abs=TOL)
    assert wide.iloc[0]["sensitivity"] == pytest.approx(S_, abs=TOL)
    assert wide.iloc[0]["heterogeneity"] == pytest.approx(H, abs=TOL)


def test_corroboration_explicit_sets_and_errors(summeval):
    res = bm.corroboration(summeval, "REL", sets=["ROUGE.we.1+BLEU", ["BertScore_f1", "CIDEr"]],
                           resampling={"n_resamples": 0}, random_seed=0)
    tab = res.summary()
    assert list(tab.columns) == ["classical"]
    assert "ROUGE.we.1+BLEU" in set(tab.index.get_level_values("set"))
    with pytest.raises(ValueError, match="metric"):
        bm.corroboration(summeval, "REL", sets=[["ROUGE.we.1", "NOPE"]])
    with pytest.raises(ValueError, match="ties"):
        bm.corroboration(summeval, "REL", sets=[["ROUGE.we.1"]], ties="loose")
    with pytest.raises(ValueError, match="exceed"):
        bm.corroboration(summeval, "REL", metrics=["ROUGE.we.1", "BLEU"], sizes=[3])


def test_plots_return_axes(summeval_result):
    import matplotlib.pyplot as plt

    from bayesmeta.corroboration.plots import plot_heterogeneity, plot_threshold_curves

    assert plot_heterogeneity(summeval_result).get_xlabel() == "heterogeneity H(X)"
    assert plot_heterogeneity(summeval_result, y="gain").get_ylabel() == "reliability gain"
    ax = plot_threshold_curves(summeval_result, metrics=["ROUGE.we.1", "BLEU"])
    assert len(ax.lines) == 2
    plt.close("all")


def test_curves_table(summeval_result, summeval):
    from bayesmeta.data import select

    cur = summeval_result.curves().xs("BLEU", level="metric")
    _, q, _ = summeval_subset(summeval, "COH", n_systems=17, n_items=100)
    pt = het.build_pairs(select.metric_scores(summeval, ["BLEU"]).values, q)
    want = het.threshold_curve(pt, 0)
    assert np.array_equal(cur["threshold"].to_numpy(), want["threshold"])
    assert np.allclose(cur["reliability"].to_numpy(), want["reliability"], atol=TOL, rtol=0)
    assert cur["sensitivity"].iloc[-1] == 1.0


def test_save_load_round_trip(summeval_result, tmp_path):
    back = bm.load(summeval_result.save(tmp_path / "c.nc"))
    assert back.summary().equals(summeval_result.summary())


# one trait in the default tier, all four in the slow one (the default tier's budget)
@pytest.mark.parametrize("trait", ["COH", pytest.param("CON", marks=pytest.mark.slow),
                                   pytest.param("FLU", marks=pytest.mark.slow),
                                   pytest.param("REL", marks=pytest.mark.slow)])
def test_greedy_is_within_001_of_exhaustive_on_summeval(summeval, trait):
    rec = bm.recommend_metric_set(summeval, trait, k=3, target_sensitivity=0.3,
                                  exhaustive=True, resampling={"n_resamples": 8},
                                  random_seed=1)
    check_table(rec.summary())
    assert rec.info["exhaustive E[R]"] - rec.info["greedy E[R]"] <= 0.01
    assert rec.info["exhaustive E[R]"] >= rec.info["greedy E[R]"] - 1e-12
    est = set(rec.summary().index.get_level_values("estimand"))
    assert {"best_single_reliability", "gain_vs_best_single"} <= est


# ----------------------------------------------------------------------------- coverage
def coverage(n_data, n_systems, n_items, n_draws, ci_prob=0.94, seed=0, cluster=False):
    """Share of simulated datasets whose 94% Bayesian-bootstrap HDI (and naive Wilson
    interval with the agreeing pairs as independent trials; and, with ``cluster``, the
    cluster-bootstrap percentile interval of R) holds the true value."""
    from scipy import stats

    from bayesmeta.summaries import summarize

    sets, labels = [[0, 1], [0], [2, 3]], ["m1+m2", "m1", "m3+m4"]
    hits = {k: np.zeros(3) for k in ("reliability", "sensitivity", "heterogeneity", "naive",
                                     "cluster")}
    z = stats.norm.ppf(0.5 + ci_prob / 2)
    for ss in np.random.SeedSequence(seed).spawn(n_data):
        rng = np.random.default_rng(ss)
        ds = bm.simulate.simulate_corroboration(int(rng.integers(2**31)),
                                                n_systems=n_systems, n_items=n_items)
        x = ds["score"].isel(run=0).transpose("metric", "system", "item").values
        pt = het.build_pairs(x, ds["judgment"].sel(trait="Q").values)
        idx = het.as_index_sets(sets, 4)
        a = n_systems * rng.dirichlet(np.ones(n_systems), size=n_draws)
        b = n_items * rng.dirichlet(np.ones(n_items), size=n_draws)
        st = het.set_statistics(pt, idx, het.pair_weights(pt, a, b))
        for key in ("reliability", "sensitivity", "heterogeneity"):
            iv = summarize(xr.DataArray(st[key].T, dims=("resample", "set")),
                           ci_prob=ci_prob)["interval"].values
            truth = ds[f"true_{key}"].sel(set=labels).values
            hits[key] += (iv[:, 0] <= truth) & (truth <= iv[:, 1])
        p0 = het.set_statistics(pt, idx)
        n, p = p0["n_agree"], p0["reliability"]
        centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
        truth = ds["true_reliability"].sel(set=labels).values
        hits["naive"] += (centre - half <= truth) & (truth <= centre + half)
        if cluster:
            ca = rng.multinomial(n_systems, np.full(n_systems, 1 / n_systems), size=n_draws)
            cb = rng.multinomial(n_items, np.full(n_items, 1 / n_items), size=n_draws)
            cs = het.set_statistics(pt, idx, het.pair_weights(pt, ca, cb))
            iv = summarize(xr.DataArray(cs["reliability"].T, dims=("resample", "set")),
                           ci_prob=ci_prob, interval="equal_tailed")["interval"].values
            hits["cluster"] += (iv[:, 0] <= truth) & (truth <= iv[:, 1])
    return {k: v / n_data for k, v in hits.items()}


def test_bayesian_bootstrap_covers_and_naive_binomial_does_not():
    # 200 datasets of 16 systems x 20 items (4,560 ordered pairs each), 200 draws.
    cov = coverage(200, 16, 20, 200)
    for key in ("reliability", "sensitivity"):
        assert np.all((cov[key] >= 0.88) & (cov[key] <= 0.99)), (key, cov[key])
    het_pairs = cov["heterogeneity"][[0, 2]]  # a single metric has H = 0 exactly
    assert np.all((het_pairs >= 0.88) & (het_pairs <= 0.99)), cov["heterogeneity"]
    assert np.all(cov["naive"] < 0.8), cov["naive"]


def test_simulator_truth_matches_a_large_sample():
    from bayesmeta.simulate import simulate_corroboration

    ds = simulate_corroboration(2, n_systems=600, n_items=20)
    bm.validate(ds)
    x = ds["score"].isel(run=0).transpose("metric", "system", "item").values
    pt = het.build_pairs(x, ds["judgment"].sel(trait="Q").values)
    st = het.set_statistics(pt, het.as_index_sets([[0], [0, 1], [2, 3]], 4))
    truth = ds["true_reliability"].sel(set=["m1", "m1+m2", "m3+m4"]).values
    # 600 systems: the sampling sd of R is about 0.004 (system effects shared by all pairs)
    assert np.abs(st["reliability"] - truth).max() < 0.015


def test_api_options_and_errors():
    from bayesmeta.simulate import simulate_corroboration

    ds = simulate_corroboration(0, n_systems=6, n_items=5)
    strict = bm.corroboration(ds, "Q", sets=["m1+m2"], ties="strict",
                              resampling={"n_resamples": 20}, random_seed=0)
    assert strict.info["ties"] == "strict (>)"
    # a user-given human score (here the judgment itself) gives the same table
    given = bm.corroboration(ds, human=ds["judgment"].sel(trait="Q", drop=True).rename("Q"),
                             sets=["m1+m2"], ties="strict", resampling={"n_resamples": 20},
                             random_seed=0)
    assert np.allclose(given.summary()["classical"], strict.summary()["classical"],
                       equal_nan=True)
    assert strict.provenance["random_seed"] == 0
    with pytest.raises(ValueError, match="target_sensitivity"):
        bm.recommend_metric_set(ds, "Q", target_sensitivity=1.5)
    with pytest.raises(ValueError, match="no single metric reaches"):
        bm.recommend_metric_set(ds, "Q", target_sensitivity=1.0,
                                resampling={"n_resamples": 5}, random_seed=0)
    with pytest.raises(ValueError, match="k must"):
        bm.recommend_metric_set(ds, "Q", k=0)
    with pytest.raises(ValueError, match="n_sets"):
        bm.corroboration(ds, "Q", n_sets=0)
    with pytest.raises(ValueError, match="match"):
        bm.corroboration(ds, "Q", sets=["m1+m2"], match="closest",
                         resampling={"n_resamples": 0})


@pytest.mark.slow
def test_coverage_at_summeval_size():
    # 17 systems x 100 items as SummEval (27,200 ordered pairs), 200 datasets, 200 draws.
    cov = coverage(200, 17, 100, 200, seed=1, cluster=True)
    print(cov)
    for key in ("reliability", "sensitivity"):
        assert np.all((cov[key] >= 0.88) & (cov[key] <= 0.99)), (key, cov[key])
    assert np.all(cov["naive"] < 0.8), cov["naive"]
