r"""A synthetic WMT metrics-task campaign with known truth.

Generative model, for systems :math:`s`, segments (items) :math:`i`, metrics :math:`m`:

.. math::
    q_{si} &= \mu_s + u_i + \gamma_{si}, \quad \mu_s \sim N(0, \sigma_{sys}^2),\;
        u_i \sim N(0, \sigma_{item}^2),\; \gamma_{si} \sim N(0, 1),\\
    h_{si} &= \mathrm{clip}\big(c + d\,(q_{si} + \epsilon_{si}),\ lo,\ hi\big),\quad
        \epsilon_{si} \sim N(0, \sigma_h^2),\\
    x_{sim} &= \lambda_m q_{si} + \beta_{sm} + e_{sim},\quad e \sim N(0, 1 - \lambda_m^2),
        \;\beta_{sm} \sim N(0, \sigma_{bias}^2),

so metric m's segment-level validity is :math:`\lambda_m` (drawn uniformly from
``loadings``) and its system-level error the per-system bias :math:`\beta_{sm}`. The human
score is DA-like (``scale="da"``: 0..100, ``c = 70, d = 12``, rounded to integers so that
ties occur as in real DA) or MQM-like (``scale="mqm"``: :math:`-25..0`, ``c = -5, d = 4``,
rounded to multiples of 1, the MQM error weights). Returned as a bayesmeta Dataset with the
human score as the continuous ``judgment`` of trait ``"quality"`` and true values
``true_loading(metric)``, ``true_system_quality(system)``; ``attrs["lp"]`` names the
language pair (which makes the dataset a WMT-style campaign for the report's WMT ranking
section).
"""

from __future__ import annotations

import zlib

import numpy as np
import xarray as xr

_SCALES = {"da": (70.0, 12.0, 0.0, 100.0), "mqm": (-5.0, 4.0, -25.0, 0.0)}


def simulate_campaign(
    n_systems: int = 8,
    n_items: int = 60,
    n_metrics: int = 6,
    *,
    scale: str = "da",
    random_seed: int = 0,
    system_sd: float = 0.5,
    item_sd: float = 0.7,
    human_sd: float = 0.5,
    bias_sd: float = 0.15,
    loadings: tuple[float, float] = (0.2, 0.8),
    lp: str = "xx-yy",
) -> xr.Dataset:
    """Simulate one language pair of a WMT campaign (see the module docstring); ``lp`` is
    its label (``attrs["lp"]``).

    Examples
    --------
    >>> from bayesmeta.wmt.simulate import simulate_campaign
    >>> ds = simulate_campaign(n_systems=5, n_items=10, n_metrics=3, random_seed=1)
    >>> dict(ds["score"].sizes)
    {'system': 5, 'item': 10, 'metric': 3, 'run': 1}
    >>> simulate_campaign(5, 10, 3, random_seed=1, lp="en-de").attrs["lp"]
    'en-de'
    """
    if not isinstance(lp, str) or not lp:
        raise ValueError(f"lp: the language pair's label, a non-empty str, got {lp!r}.")
    if scale not in _SCALES:
        raise ValueError(f"scale must be one of {', '.join(_SCALES)}, got {scale!r}.")
    c, d, lo, hi = _SCALES[scale]
    rng = np.random.default_rng(random_seed)
    mu = rng.normal(0, system_sd, n_systems)
    q = mu[:, None] + rng.normal(0, item_sd, n_items)[None, :] + rng.normal(
        0, 1, (n_systems, n_items))
    h = np.clip(np.round(c + d * (q + rng.normal(0, human_sd, q.shape))), lo, hi)
    lam = rng.uniform(*loadings, n_metrics)
    bias = rng.normal(0, bias_sd, (n_systems, n_metrics))
    x = (lam[None, None, :] * q[:, :, None] + bias[:, None, :]
         + rng.normal(0, 1, (n_systems, n_items, n_metrics)) * np.sqrt(1 - lam ** 2))
    systems = [f"sys{s:02d}" for s in range(n_systems)]
    items = [f"seg{i:04d}" for i in range(n_items)]
    metrics = [f"metric{m:02d}" for m in range(n_metrics)]
    ds = xr.Dataset(
        {"judgment": (("system", "item", "trait"), h[:, :, None]),
         "score": (("system", "item", "metric", "run"), x[..., None]),
         "true_loading": (("metric",), lam),
         "true_system_quality": (("system",), mu)},
        coords={"system": systems, "item": items, "trait": ["quality"], "metric": metrics,
                "run": ["1"]},
        attrs={"source": f"bayesmeta.wmt.simulate_campaign(seed={random_seed}, "
                         f"scale={scale!r})", "lp": lp},
    )
    ds["judgment"].attrs.update(scale_min=lo, scale_max=hi)
    return ds


def language_pair_seed(random_seed: int, key: str | int) -> int:
    """The seed of one language pair, derived from the campaign's seed and the language
    pair's label by :class:`numpy.random.SeedSequence` (entropy ``(random_seed,
    crc32(label))``): it depends on neither the other language pairs nor their order, nor on
    where the language pair is computed, so results do not depend on the scheduler, the
    chunking or the number of workers.

    Examples
    --------
    >>> from bayesmeta.wmt.simulate import language_pair_seed
    >>> language_pair_seed(0, "en-de") == language_pair_seed(0, "en-de")
    True
    """
    crc = zlib.crc32(str(key).encode())
    return int(np.random.SeedSequence([int(random_seed), crc]).generate_state(1)[0])


def _one_pair(n_systems, n_items, n_metrics, scale, seed):
    ds = simulate_campaign(n_systems, n_items, n_metrics, scale=scale, random_seed=seed)
    return (ds["score"].values, ds["judgment"].values, ds["true_loading"].values,
            ds["true_system_quality"].values)


def simulate_language_pairs(
    n_language_pairs: int = 16,
    n_systems: int = 20,
    n_items: int = 1500,
    n_metrics: int = 40,
    *,
    scale: str = "mqm",
    random_seed: int = 0,
    lazy: bool = False,
) -> xr.Dataset:
    """Simulate a WMT-sized campaign: ``n_language_pairs`` independent language pairs, each
    from :func:`simulate_campaign` (the model of the module docstring, its own metric
    loadings and system qualities) with the seed :func:`language_pair_seed` ``(random_seed,
    "lpNN")``. The defaults are a WMT campaign's size: 16 x 20 x 1,500 x 40 = 19.2 million
    metric-score cells.

    Returns a Dataset with a leading ``lp`` dim (``"lp00"``, ...) on ``score``,
    ``judgment``, ``true_loading`` and ``true_system_quality``; with ``lazy=True`` the
    variables are dask arrays with one chunk per language pair, each simulated only when a
    computation needs it (nothing of the campaign is held in memory at once). The human
    score is MQM-like by default (``scale``, as in WMT24/25's main tasks).

    Examples
    --------
    >>> from bayesmeta.wmt.simulate import simulate_language_pairs
    >>> ds = simulate_language_pairs(3, 4, 10, 2, random_seed=1)
    >>> dict(ds["score"].sizes)
    {'lp': 3, 'system': 4, 'item': 10, 'metric': 2, 'run': 1}
    """
    if n_language_pairs < 1:
        raise ValueError(f"n_language_pairs must be at least 1, got {n_language_pairs!r}.")
    lps = [f"lp{k:02d}" for k in range(n_language_pairs)]
    seeds = [language_pair_seed(random_seed, lp) for lp in lps]
    shapes = [(n_systems, n_items, n_metrics, 1), (n_systems, n_items, 1), (n_metrics,),
              (n_systems,)]
    if lazy:
        import dask
        import dask.array as da

        parts = []
        for s in seeds:
            d = dask.delayed(_one_pair, nout=4, pure=True)(n_systems, n_items, n_metrics,
                                                            scale, s)
            parts.append([da.from_delayed(d[j], shape, float)
                          for j, shape in enumerate(shapes)])
        arrays = [da.stack([p[j] for p in parts]) for j in range(4)]
    else:
        got = [_one_pair(n_systems, n_items, n_metrics, scale, s) for s in seeds]
        arrays = [np.stack([g[j] for g in got]) for j in range(4)]
    lo, hi = _SCALES[scale][2:]
    ds = xr.Dataset(
        {"judgment": (("lp", "system", "item", "trait"), arrays[1]),
         "score": (("lp", "system", "item", "metric", "run"), arrays[0]),
         "true_loading": (("lp", "metric"), arrays[2]),
         "true_system_quality": (("lp", "system"), arrays[3])},
        coords={"lp": lps, "system": [f"sys{s:02d}" for s in range(n_systems)],
                "item": [f"seg{i:04d}" for i in range(n_items)], "trait": ["quality"],
                "metric": [f"metric{m:02d}" for m in range(n_metrics)], "run": ["1"],
                "seed": ("lp", seeds)},
        attrs={"source": f"bayesmeta.wmt.simulate_language_pairs(seed={random_seed}, "
                         f"scale={scale!r})"},
    )
    ds["judgment"].attrs.update(scale_min=lo, scale_max=hi)
    return ds
