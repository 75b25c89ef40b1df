"""Convergence checks of MCMC fits: R-hat, bulk and tail ESS, divergences, tree depth.

:func:`check_convergence` turns the diagnostics of a fit into a :class:`ConvergenceReport`
and :class:`ConvergenceWarning` s that say what to do.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import xarray as xr

from bayesmeta.summaries import diagnose

#: Default thresholds of :func:`check_convergence`.
RHAT_MAX = 1.01
RHAT_MAX_FAST = 1.05
ESS_MIN = 400
ESS_MIN_FAST = 100


class ConvergenceWarning(UserWarning):
    """The sampler did not converge well enough to trust the summaries (see the message)."""


class SamplingCapWarning(ConvergenceWarning):
    """Adaptive sampling reached its cap (``max_draws`` or ``max_seconds``) before the
    reported quantities met the R-hat and ESS targets (see the message)."""


@dataclass
class ConvergenceReport:
    """Convergence diagnostics of one fit; ``str()`` gives the one-line header summary.

    Attributes
    ----------
    max_rhat, min_ess_bulk, min_ess_tail : float
        Worst values over the checked (non-constant) quantities.
    n_divergent, n_max_treedepth, n_draws : int
        Divergent transitions and draws at the maximum tree depth (after tuning), out of
        ``n_draws`` draws over all chains.
    messages : list of str
        One message per failed check, saying what to do.
    """

    max_rhat: float
    min_ess_bulk: float
    min_ess_tail: float
    n_divergent: int
    n_max_treedepth: int
    n_draws: int
    rhat_max: float = RHAT_MAX
    ess_min: float = ESS_MIN
    messages: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when every check passed."""
        return not self.messages

    def __str__(self) -> str:
        verdict = "ok" if self.ok else f"{len(self.messages)} warning(s), see notes"
        return (f"{verdict}: max R-hat {self.max_rhat:.3f}, min ESS bulk "
                f"{self.min_ess_bulk:.0f} / tail {self.min_ess_tail:.0f}, "
                f"{self.n_divergent} divergent, {self.n_max_treedepth} at max tree depth")


def _worst(ds: xr.Dataset, largest: bool) -> tuple[float, str]:
    best_val, best_name = (np.nan, "")
    for name, da in ds.data_vars.items():
        vals = np.asarray(da.values, dtype=float)
        if not np.isfinite(vals).any():
            continue
        flat = np.where(np.isfinite(vals), vals, -np.inf if largest else np.inf)
        idx = int(np.argmax(flat) if largest else np.argmin(flat))
        v = float(flat.ravel()[idx])
        if np.isnan(best_val) or (v > best_val if largest else v < best_val):
            where = np.unravel_index(idx, vals.shape) if vals.ndim else ()
            label = ", ".join(str(da[d].values[i]) if d in da.coords else str(i)
                              for d, i in zip(da.dims, where, strict=True))
            best_val, best_name = v, f"{name}[{label}]" if label else str(name)
    return best_val, best_name


def _count_bad(ds: xr.Dataset, bad: Callable[[np.ndarray], np.ndarray]) -> int:
    return int(sum(bad(np.asarray(da.values, dtype=float)).sum() for da in ds.data_vars.values()))


def check_convergence(
    idata: Any,
    var_names: Iterable[str] | None = None,
    *,
    rhat_max: float | None = None,
    ess_min: float | None = None,
    fast: bool | None = None,
    warn: bool = True,
    diagnostics: xr.Dataset | None = None,
) -> ConvergenceReport:
    r"""Check R-hat, bulk and tail ESS, divergences and tree-depth saturation.

    Parameters
    ----------
    idata : arviz.InferenceData
        A fit from :func:`sample`.
    var_names : list of str, optional
        Posterior variables to check (default all). Quantities that are constant across
        draws (fixed by the model, e.g. a stability of exactly 1) are skipped.
    rhat_max : float, optional
        Largest acceptable rank-normalised split R-hat: 1.01 for full runs (Vehtari et
        al. 2021), 1.05 in fast mode (two short chains give noisy R-hat; fast mode is for
        previews).
    ess_min : float, optional
        Smallest acceptable bulk and tail ESS: 400 for full runs, 100 in fast mode.
    fast : bool, optional
        Whether the fit was a fast-mode fit (default: read from the attributes).
    warn : bool
        Issue a :class:`ConvergenceWarning` per failed check.
    diagnostics : xarray.Dataset, optional
        Precomputed ``r_hat``, ``ess_bulk``, ``ess_tail`` (variables named
        ``<var>__r_hat`` etc.), to avoid computing them twice.

    Returns
    -------
    ConvergenceReport

    References
    ----------
    Vehtari, Gelman, Simpson, Carpenter, Bürkner (2021). Rank-normalization, folding, and
    localization: an improved R-hat for assessing convergence of MCMC. *Bayesian
    Analysis* 16(2).

    Examples
    --------
    >>> from bayesmeta.sampling import check_convergence  # doctest: +SKIP
    >>> rep = check_convergence(idata, ["consistency"])  # doctest: +SKIP
    >>> print(rep)  # doctest: +SKIP
    ok: max R-hat 1.002, min ESS bulk 1510 / tail 1822, 0 divergent, 0 at max tree depth
    """
    post = idata.posterior
    names = list(var_names) if var_names is not None else list(post.data_vars)
    if fast is None:
        fast = bool(int(post.attrs.get("fast", 0)))
    if ess_min is None:
        ess_min = ESS_MIN_FAST if fast else ESS_MIN
    if rhat_max is None:
        rhat_max = RHAT_MAX_FAST if fast else RHAT_MAX
    if diagnostics is None:
        diagnostics = diagnose(post[names])
    rh = xr.Dataset({n: diagnostics[f"{n}__r_hat"] for n in names})
    eb = xr.Dataset({n: diagnostics[f"{n}__ess_bulk"] for n in names})
    et = xr.Dataset({n: diagnostics[f"{n}__ess_tail"] for n in names})
    max_rhat, where_rhat = _worst(rh, largest=True)
    min_bulk, where_bulk = _worst(eb, largest=False)
    min_tail, where_tail = _worst(et, largest=False)
    stats = getattr(idata, "sample_stats", None)
    n_draws = int(post.sizes["chain"] * post.sizes["draw"])
    n_div = int(stats["diverging"].sum()) if stats is not None and "diverging" in stats else 0
    n_depth = (int(stats["reached_max_treedepth"].sum())
               if stats is not None and "reached_max_treedepth" in stats else 0)
    max_depth = post.attrs.get("max_treedepth", 10)

    msgs: list[str] = []
    if np.isfinite(max_rhat) and max_rhat > rhat_max:
        n_bad = _count_bad(rh, lambda v: v > rhat_max)
        msgs.append(
            f"R-hat is {max_rhat:.3f} (> {rhat_max}) for {n_bad} quantit"
            f"{'y' if n_bad == 1 else 'ies'} (worst: {where_rhat}): the chains disagree, so "
            f"the posterior was not explored. Run longer (more tune and draws); if it "
            f"persists, look for non-identified or multimodal parameters. Do not report "
            f"these estimates."
        )
    for kind, value, where in (("bulk", min_bulk, where_bulk), ("tail", min_tail, where_tail)):
        if np.isfinite(value) and value < ess_min:
            ds = eb if kind == "bulk" else et
            n_bad = _count_bad(ds, lambda v: v < ess_min)
            what = "means and SDs" if kind == "bulk" else "interval limits"
            msgs.append(
                f"{kind} ESS is {value:.0f} (< {ess_min:g}) for {n_bad} quantit"
                f"{'y' if n_bad == 1 else 'ies'} (worst: {where}): too few effective draws "
                f"for stable {what}. Increase draws (and chains)"
                + ("; fast mode is for previews, use sampling='full'." if fast else ".")
            )
    if n_div:
        msgs.append(
            f"{n_div} divergent transition(s) after tuning ({n_div / n_draws:.1%} of draws): "
            f"the sampler could not follow the posterior's curvature and the estimates may be "
            f"biased. Raise target_accept (e.g. 0.95); if divergences persist, reparameterise "
            f"(non-centred effects) or use more informative priors."
        )
    if n_depth:
        msgs.append(
            f"{n_depth} draw(s) ({n_depth / n_draws:.1%}) hit the maximum tree depth "
            f"({max_depth}): sampling is inefficient, usually from strongly correlated or "
            f"non-identified parameters. Reparameterise, or raise max_treedepth."
        )
    if warn:
        for m in msgs:
            warnings.warn(m, ConvergenceWarning, stacklevel=2)
    return ConvergenceReport(
        max_rhat=max_rhat, min_ess_bulk=min_bulk, min_ess_tail=min_tail, n_divergent=n_div,
        n_max_treedepth=n_depth, n_draws=n_draws, rhat_max=rhat_max, ess_min=ess_min,
        messages=msgs,
    )


__all__ = [
    "ESS_MIN",
    "RHAT_MAX",
    "ConvergenceReport",
    "ConvergenceWarning",
    "SamplingCapWarning",
    "check_convergence",
]
