r"""Reference choice (paper 002, App. B, Fig. 5): how much does a reference-based metric's
correlation with humans depend on which reference each output is scored against?

For outputs with several references (the ``reference`` dim; list cells of paper 002's
files), draw one reference per output at random, correlate the metric with the human score,
and repeat (the paper: 5,000 times). The spread of that distribution is the uncertainty due
to reference choice alone. Drawing the outputs too (a bootstrap over outputs, with a random
reference each) gives the total uncertainty; by the law of total variance

.. math:: \mathrm{Var}(r) = E_{out}[\mathrm{Var}_{ref}(r \mid out)]
          + \mathrm{Var}_{out}(E_{ref}[r \mid out]),

and the share due to reference choice is estimated by :math:`\mathrm{Var}_{ref}(r \mid
\text{observed outputs}) / \mathrm{Var}(r)`.

Reference-free vs reference-based: when the metrics selected include both kinds (metric
coordinate ``reference_based``), the mean correlation of each kind and their difference, with
every reference-based metric scored against a random reference per output: a percentile
bootstrap and a Bayesian bootstrap over the outputs, the same output weights and the same
reference draw for every metric (paired), so the interval carries both the output sampling
and the reference choice that a single-reference comparison hides.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayesmeta.data import select
from bayesmeta.options import ResamplingOptions, resolve_seed
from bayesmeta.reference_free.kinds import kind_contrast, kind_note, kind_of
from bayesmeta.reference_free.meta_correlation import weighted_corr
from bayesmeta.reference_free.pre_assessment import COEFFICIENTS, average_ranks
from bayesmeta.results import Result, data_hash
from bayesmeta.summaries import CI_PROB, check_ci_prob, summarize, summary_rows
from bayesmeta.vocabulary import resampling_options


def _corr_with_fixed(x: np.ndarray, hc: np.ndarray, coefficient: str) -> np.ndarray:
    """Correlation of each row of ``x`` ``(draws, N)`` with the centred human score."""
    if coefficient == "spearman":
        x = average_ranks(x)
    x = _scaled(x - x.mean(-1, keepdims=True))
    hc = _scaled(hc)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (x @ hc) / np.sqrt((x * x).sum(-1) * (hc @ hc))


def _scaled(x: np.ndarray) -> np.ndarray:
    """Rows divided by their largest absolute value (correlations are scale-free; BLEU
    scores of 1e-155 would otherwise underflow when squared)."""
    big = np.abs(x).max(-1, keepdims=True)
    return x / np.where(big > 0, big, 1.0)


def _codes(values: np.ndarray) -> np.ndarray:
    """Dense integer codes of all finite values (order and ties kept), 16-bit when they fit
    so that sorting is a radix sort; NaN stays NaN-coded as -1."""
    ok = np.isfinite(values)
    codes = np.full(values.shape, -1, dtype=np.int64)
    codes[ok] = np.unique(values[ok], return_inverse=True)[1]
    return codes.astype(np.int32 if codes.max() >= 32767 else np.int16)


def reference_choice(
    data: xr.Dataset,
    trait: str | None = None,
    *,
    metrics: Sequence[str] | None = None,
    resampling: ResamplingOptions | Mapping[str, Any] | None = None,
    coefficient: str = "spearman",
    decompose: bool = True,
    human: xr.DataArray | None = None,
    run: Any = None,
    ci_prob: float = CI_PROB,
    random_seed: int | None = None,
) -> Result:
    r"""Distribution of the metric-human correlation when each output's reference is drawn
    at random (paper 002, App. B, Fig. 5), and the share of the correlation's uncertainty
    due to reference choice.

    .. math:: r^{(b)} = \rho\big([s_{1,J_1^{(b)}}, \dots, s_{N,J_N^{(b)}}],
              [h_1, \dots, h_N]\big), \qquad J_i^{(b)} \sim \mathrm{Uniform}\{1..R_i\}

    Parameters
    ----------
    data : xarray.Dataset
        ``score`` with a ``reference`` dim (one score per reference, NaN padding) and a human
        score.
    trait : str
        The human criterion; or ``human=``.
    metrics : list of str, optional
        Default: every metric with more than one reference for some output. Include
        reference-free metrics to get the reference-free vs reference-based contrast.
    resampling : ResamplingOptions or dict, optional
        ``n_resamples``: random reference draws (default here 5,000, as the paper), the
        same draws for every metric.
    coefficient : {"spearman", "pearson"}
    decompose : bool
        Also draw outputs (bootstrap) with a random reference each, for the total spread and
        the share due to reference choice.
    human, run
        Selection (:mod:`bayesmeta.data.select`).
    ci_prob : float
        Probability of the equal-tailed intervals.
    random_seed : int, optional
        Drawn and recorded when omitted.

    Returns
    -------
    Result
        ``correlation`` (index ``metric, reference, set``): ``reference="first"`` the classical
        correlation with the first reference (what paper 002's repository reports);
        ``reference="random"`` mean, sd and equal-tailed interval over the random reference
        draws. ``correlation_total`` (random references and bootstrapped outputs) and
        ``share_reference_choice`` (classical: variance ratio). With the ``reference_based``
        coordinate and both kinds selected: ``correlation_group_mean`` (``set`` =
        reference-free / reference-based) and ``correlation_free_minus_based``
        (``reference="random"``): classical from the first reference, the percentile-bootstrap
        interval and the Bayesian-bootstrap posterior (``n_draws`` each) over outputs with a
        random reference per output, on the outputs every selected metric scored; otherwise
        a note says why they are absent. ``details()``: outputs, references per output, min
        and max over the draws.

    Notes
    -----
    Outputs with one reference contribute the same score to every draw. The intervals
    describe variation over draws, not a posterior. The share is a ratio of Monte Carlo
    variances (its error is a few percent at 5,000 draws).

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> import bayesmeta as bm
    >>> rng = np.random.default_rng(0)
    >>> h = rng.normal(size=(1, 100))
    >>> s = h[..., None] + rng.normal(size=(1, 100, 4))   # 4 references per output
    >>> ds = xr.Dataset({"judgment": (("system", "item", "trait"), h[..., None]),
    ...                  "score": (("metric", "system", "item", "reference"), s[None])},
    ...                 coords={"metric": ["bleu_ref_hypo"], "trait": ["q"],
    ...                         "reference": list("1234")})
    >>> res = bm.reference_choice(ds, "q", resampling={"n_resamples": 500},
    ...                           random_seed=1)
    >>> tab = res.summary()
    >>> bool(tab.loc[("correlation", "bleu_ref_hypo", "random", ""), "sd"] > 0)
    True

    R equivalent: ``replicate(5000, cor(s[cbind(1:N, sapply(R, sample, 1))], h,
    method = "spearman"))``.
    """
    n_draws = resampling_options(resampling, n_resamples=5000).n_resamples
    ci_prob = check_ci_prob(ci_prob)
    if coefficient not in COEFFICIENTS:
        raise ValueError(f"coefficient must be one of {COEFFICIENTS}, got {coefficient!r}.")
    seed = resolve_seed(random_seed)
    rng = np.random.default_rng(seed)
    if not isinstance(data, xr.Dataset) or "score" not in data:
        raise ValueError("data must be an xarray.Dataset with a 'score' variable.")
    if "reference" not in data["score"].dims:
        raise ValueError("data's 'score' has no 'reference' dim: reference choice needs one "
                         "score per reference (list cells).")
    score = select.orient_scores(data["score"])  # lower-is-better metrics negated
    if "run" in score.dims:
        score = select.pick_run(score, run)
    hs = select.human_score(data, trait, human=human)
    h = np.asarray(hs.values.transpose("system", "item").values, float).ravel()
    s = score.transpose("metric", "system", "item", "reference").values
    s = s.reshape(s.shape[0], -1, s.shape[-1])
    all_labels = [str(m) for m in data["metric"].values]
    n_refs_all = np.isfinite(s).sum(-1)                              # (metric, output)
    if metrics is None:
        labels = [m for m, k in zip(all_labels, n_refs_all.max(1), strict=True) if k > 1]
        if not labels:
            raise ValueError("no metric has more than one reference for any output.")
    else:
        labels = [str(m) for m in select.check_metrics(data, metrics)]
    rows, draws_r, draws_t, det = [], [], [], []
    for m in labels:
        k = all_labels.index(m)
        ok = np.isfinite(h) & (n_refs_all[k] > 0)
        if ok.sum() < 4:
            raise ValueError(f"metric {m!r} has {int(ok.sum())} outputs with a score and "
                             f"{hs.label!r}; at least 4 are needed.")
        sm, hm, nr = s[k][ok], h[ok], n_refs_all[k][ok]
        order = np.argsort(~np.isfinite(sm), axis=1, kind="stable")  # references first
        sm = np.take_along_axis(sm, order, 1)
        vals = _codes(sm) if coefficient == "spearman" else sm
        hv = average_ranks(hm) if coefficient == "spearman" else hm
        hc = hv - hv.mean()
        first = float(_corr_with_fixed(sm[None, :, 0], hc, coefficient)[0])
        n_out = hm.size
        pick = (rng.random((n_draws, n_out)) * nr).astype(np.int64)
        r_ref = _corr_with_fixed(vals[np.arange(n_out), pick], hc, coefficient)
        draws_r.append(r_ref)
        if decompose:
            out = rng.integers(0, n_out, (n_draws, n_out))
            pick_t = (rng.random((n_draws, n_out)) * nr[out]).astype(np.int64)
            xb = vals[out, pick_t]
            hb = hv[out]
            if coefficient == "spearman":
                xb, hb = average_ranks(xb), average_ranks(hb)
            xb = _scaled(xb - xb.mean(1, keepdims=True))
            hb = _scaled(hb - hb.mean(1, keepdims=True))
            with np.errstate(invalid="ignore", divide="ignore"):
                r_tot = (xb * hb).sum(1) / np.sqrt((xb * xb).sum(1) * (hb * hb).sum(1))
            draws_t.append(r_tot)
        rows.append(("correlation", m, "first", first))
        det.append({"n_outputs": n_out, "refs_median": float(np.median(nr)),
                    "refs_max": int(nr.max()), "draw_min": float(r_ref.min()),
                    "draw_max": float(r_ref.max())})
    idx = ["metric", "reference", "set"]
    frames = [pd.DataFrame([(*r[:3], "", r[3]) for r in rows],
                           columns=["estimand", *idx, "classical"]).set_index(
        ["estimand", *idx])]
    dets = [pd.DataFrame(det, index=frames[0].index)]
    da = xr.DataArray(np.stack(draws_r, 1), dims=("resample", "metric"),
                      coords={"metric": labels}).expand_dims(reference=["random"], axis=2)
    frames.append(summary_rows(summarize(da, ci_prob=ci_prob, interval="equal_tailed"),
                               estimand="correlation", index=idx))
    if decompose:
        tot = np.stack(draws_t, 1)
        dt = xr.DataArray(tot, dims=("resample", "metric"), coords={"metric": labels}
                          ).expand_dims(reference=["random"], axis=2)
        frames.append(summary_rows(summarize(dt, ci_prob=ci_prob, interval="equal_tailed"),
                                   estimand="correlation_total", index=idx))
        share = np.nanvar(np.stack(draws_r, 1), 0, ddof=1) / np.nanvar(tot, 0, ddof=1)
        frames.append(pd.DataFrame({"classical": share}, index=pd.MultiIndex.from_arrays(
            [["share_reference_choice"] * len(labels), labels, ["random"] * len(labels),
             [""] * len(labels)], names=["estimand", *idx])))
    kinds = kind_of(data, labels)
    why_not = kind_note(kinds, "reference_choice")
    notes = ["reference='first': the first reference of each list, as paper 002's "
             "repository; 'random': one reference per output drawn uniformly."]
    if why_not is None:  # drawn last: the rows above do not depend on the kinds
        frames.append(_kind_rows(s, h, [all_labels.index(m) for m in labels], kinds,
                                 n_draws, coefficient, rng, ci_prob))
        notes.append("Kind contrast: reference-based metrics scored against a random "
                     "reference per output (the same draw for every metric), outputs "
                     "resampled; classical = first reference.")
    else:
        notes.append(why_not + (" By default only metrics with several references are "
                                "selected: pass metrics= with reference-free ones too."
                                if kinds is not None and kinds.all() else ""))
    table = pd.concat(frames)
    return Result(
        table, title=f"Reference choice: {coefficient} with {hs.label} when each output's "
                     f"reference is drawn at random (paper 002, App. B)",
        info={"outputs": int(np.isfinite(h).sum()), "metrics": len(labels),
              "draws": n_draws},
        details=pd.concat(dets).reindex(table.index), ci_prob=ci_prob, ci_kind="equal_tailed",
        notes=notes,
        classical_ci_kind="percentile bootstrap (outputs, random reference)"
        if why_not is None else None,
        posterior="distribution over random reference draws (not a posterior)" + (
            "; Bayesian bootstrap over outputs with random references for the kind "
            "contrast" if why_not is None else ""),
        extra={"draws": da.isel(reference=0, drop=True).rename("correlation")},
        random_seed=seed, data_hash=data_hash(np.nan_to_num(s, nan=-9.0)),
    )


def _kind_rows(s: np.ndarray, h: np.ndarray, rows: list[int], kinds: np.ndarray,
               n_draws: int, coefficient: str, rng: np.random.Generator, ci_prob: float
               ) -> pd.DataFrame:
    """Reference-free vs reference-based group means of the correlation, on the outputs
    every selected metric scored: classical from the first reference; percentile bootstrap
    and Bayesian bootstrap over outputs, each draw with one uniform ``u`` per output shared
    by all metrics (reference ``floor(u R_i)`` of the metric's ``R_i`` references: the same
    reference wherever the metrics have the same lists)."""
    sm = s[rows]                                                     # (M, outputs, refs)
    nr = np.isfinite(sm).sum(-1)
    ok = np.isfinite(h) & (nr > 0).all(0)
    if ok.sum() < 4:
        raise ValueError(f"only {int(ok.sum())} outputs have a score of every metric "
                         "selected and a human score; the kind contrast needs at least 4.")
    sm, nr, hh = sm[:, ok], nr[:, ok], h[ok]
    order = np.argsort(~np.isfinite(sm), axis=-1, kind="stable")     # references first
    sm = np.take_along_axis(sm, order, -1)
    N, M = hh.size, len(rows)
    first = weighted_corr(sm[..., 0], hh[None], np.ones(N), coefficient)
    boot, bb = np.empty((n_draws, M)), np.empty((n_draws, M))
    single = (nr == 1).all(1)
    size = max(1, int(2e6 // N))
    for a in range(0, n_draws, size):
        b = min(size, n_draws - a)
        u = rng.random((b, N))
        cnt = rng.multinomial(N, np.full(N, 1 / N), size=b)
        cw = np.stack([cnt, rng.exponential(size=(b, N))])          # (2, b, N)
        for m in range(M):
            v = (sm[m, :, 0][None] if single[m]                       # one sort only
                 else sm[m, np.arange(N), (u * nr[m]).astype(np.int64)])  # (b, N)
            # both weightings in one call: the scores are sorted once
            boot[a:a + b, m], bb[a:a + b, m] = weighted_corr(v, hh[None], cw, coefficient)
    return kind_contrast(bb, kinds, prefix="correlation", index=["metric", "reference", "set"],
                         ci_prob=ci_prob, classical=first, boot=boot, interval="equal_tailed",
                         labels={"reference": "random"})


__all__ = ["reference_choice"]
