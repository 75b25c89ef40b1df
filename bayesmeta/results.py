"""Result objects: compute once, then print, plot, summarise or save.

Every analysis in bayesmeta returns a :class:`Result`:

* :meth:`Result.summary`: the estimates in the one table shape of
  :mod:`bayesmeta.summaries` (index ``estimand`` then design labels; columns ``classical,
  classical_low, classical_high, mean, sd, hdi_low, hdi_high, r_hat, ess_bulk, ess_tail``
  where they apply; interval kinds and probabilities as attributes). Raw values: only
  printing rounds.
* :meth:`Result.details`: everything that is not an estimate (counts, ranks, p-values,
  flags, the columns of other software), indexed like the summary where that makes sense.
* :attr:`Result.provenance`: bayesmeta's version, the random seed (drawn and recorded when
  none was given), the data hash, and the sampler settings of MCMC fits; printed as a
  one-line signature (as sacrebleu does) so a table pasted into a paper can be recomputed.
* ``print(result)``: an R-like report; :meth:`Result.plot`: a figure;
  :meth:`Result.save` / :func:`load`: a lossless round trip through netCDF.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import xarray as xr

from bayesmeta._version import __version__
from bayesmeta.summaries import CI_PROB, COLUMNS, hdi, make_table

__all__ = ["Result", "TableView", "data_hash", "hdi", "load"]

_REGISTRY: dict[str, type[Result]] = {}


class TableView:
    """A table posing as a result for the plot helpers: one slice of a result's summary
    (e.g. one estimand) with its own title and interval probability."""

    def __init__(self, table: pd.DataFrame, title: str, ci_prob: float) -> None:
        self.table, self.title, self.ci_prob = table, title, ci_prob

    def summary(self) -> pd.DataFrame:
        return self.table.copy()


def data_hash(ds: xr.Dataset | xr.DataArray | np.ndarray) -> str:
    """A short, stable hash of a dataset's values and labels (provenance).

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmeta.results import data_hash
    >>> data_hash(np.arange(3.0)) == data_hash(np.arange(3.0))
    True
    """
    h = hashlib.sha256()
    if isinstance(ds, np.ndarray):
        h.update(np.ascontiguousarray(ds, dtype=float).tobytes())
        return h.hexdigest()[:16]
    if isinstance(ds, xr.DataArray):
        ds = ds.to_dataset(name=str(ds.name or "value"))
    for name in sorted(ds.data_vars):
        h.update(str(name).encode())
        h.update(np.ascontiguousarray(ds[name].values, dtype=float).tobytes())
    for name in sorted(ds.coords):
        h.update(str(name).encode())
        h.update("|".join(map(str, np.asarray(ds[name].values).ravel())).encode())
    return h.hexdigest()[:16]


def _flat_frame(table: pd.DataFrame) -> tuple[xr.Dataset, list[str]]:
    """A frame as a netCDF-safe Dataset (index levels as columns, dtypes recorded)."""
    table = table.copy()
    names = [n if n is not None else f"level_{k}" for k, n in enumerate(table.index.names)]
    table.index = table.index.set_names(names)
    flat = table.reset_index()
    dtypes = {str(c): str(flat[c].dtype) for c in flat.columns}
    for col in flat.columns:
        if isinstance(flat[col].dtype, pd.api.extensions.ExtensionDtype) and \
                pd.api.types.is_numeric_dtype(flat[col]):
            flat[col] = flat[col].astype("float64")
        elif flat[col].dtype == bool:
            flat[col] = flat[col].astype("int8")
        elif not pd.api.types.is_numeric_dtype(flat[col]):
            flat[col] = flat[col].astype(str).astype(object)
    flat.index = pd.RangeIndex(len(flat), name="__row__")
    out = xr.Dataset.from_dataframe(flat)
    out.attrs["index_names"] = json.dumps(names)
    out.attrs["columns"] = json.dumps([str(c) for c in table.columns])
    out.attrs["dtypes"] = json.dumps(dtypes)
    out.attrs["frame_attrs"] = json.dumps(table.attrs, default=str)
    return out, names


def _unflat_frame(ds: xr.Dataset) -> pd.DataFrame:
    names = json.loads(ds.attrs["index_names"])
    dtypes = json.loads(ds.attrs.get("dtypes", "{}"))
    flat = ds.to_dataframe()
    for col in flat.columns:
        want = dtypes.get(str(col))
        if want in ("bool",):
            flat[col] = flat[col].astype(bool)
        elif want and want not in ("object", "str", "string") and not want.startswith(
                "<StringDtype") and want != str(flat[col].dtype):
            flat[col] = flat[col].astype(want)
        elif flat[col].dtype == object or pd.api.types.is_string_dtype(flat[col]):
            flat[col] = flat[col].astype(str)
            if want == "object":
                flat[col] = flat[col].astype(object)
    out = flat.set_index(names)[json.loads(ds.attrs["columns"])]
    out.attrs = json.loads(ds.attrs.get("frame_attrs", "{}"))
    return out


class Result:
    """Base class of every bayesmeta result.

    Parameters
    ----------
    table : pandas.DataFrame
        The estimates: index ``estimand`` then design labels; any columns of
        :data:`~bayesmeta.summaries.COLUMNS`. Other columns are moved to :meth:`details`.
    title : str
        The first line of the printed summary.
    info : dict
        Header facts (data size, estimator, ...), printed as ``key: value``.
    details : pandas.DataFrame, optional
        Counts, ranks, p-values, flags (joined with the columns split off ``table``).
    idata : arviz.InferenceData, optional
        Posterior and sampler statistics of MCMC fits.
    extra : dict of xarray.DataArray or xarray.Dataset, optional
        Further labelled outputs (draws, curves, matrices), saved with the result.
    notes : list of str
        Footer lines (explanations, warnings).
    ci_prob : float
        Probability of the intervals (both kinds unless ``classical_ci_prob`` differs).
    ci_kind : str, optional
        What ``hdi_low``/``hdi_high`` are (default ``"hdi"``).
    classical_ci_kind : str, optional
        What ``classical_low``/``classical_high`` are (``"percentile bootstrap"``,
        ``"Fisher z"``, ``"Wald (robust SE)"``...); required when the table has them.
    classical_ci_prob : float, optional
        Their probability when it is not ``ci_prob``.
    elpd_ci_kind : str, optional
        What ``elpd_low``/``elpd_high`` are (model comparison); required when the table has
        them.
    posterior : str, optional
        Where ``mean`` ... ``hdi_high`` come from, for the footer (default ``"MCMC
        posterior"`` when the table has ``r_hat``, else ``"posterior"``).
    random_seed : int, optional
        The seed used (drawn by the analysis when the user gave none).
    data_hash : str, optional
        :func:`data_hash` of the data analysed.
    """

    kind: ClassVar[str] = "result"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _REGISTRY[cls.__name__] = cls

    def __init__(
        self,
        table: pd.DataFrame,
        *,
        title: str,
        info: dict[str, Any] | None = None,
        details: pd.DataFrame | None = None,
        idata: Any = None,
        extra: dict[str, xr.DataArray | xr.Dataset] | None = None,
        notes: list[str] | None = None,
        ci_prob: float = CI_PROB,
        ci_kind: str | None = None,
        classical_ci_kind: str | None = None,
        classical_ci_prob: float | None = None,
        elpd_ci_kind: str | None = None,
        posterior: str | None = None,
        random_seed: int | None = None,
        data_hash: str | None = None,
    ) -> None:
        split = [c for c in table.columns if c not in COLUMNS]
        if split:
            moved = table[split]
            details = moved if details is None else details.join(moved, how="outer")
            table = table.drop(columns=split)
        self._table = make_table(table, ci_prob=ci_prob, ci_kind=ci_kind,
                                 classical_ci_kind=classical_ci_kind,
                                 classical_ci_prob=classical_ci_prob,
                                 elpd_ci_kind=elpd_ci_kind)
        self._details = details.copy() if details is not None else pd.DataFrame(
            index=self._table.index)
        # column labels as text, so that an empty details() also survives save()/load()
        self._details.columns = pd.Index([str(c) for c in self._details.columns], dtype="str")
        self.title = title
        self.info = dict(info or {})
        self.idata = idata
        self.extra = dict(extra or {})
        self.notes = list(notes or [])
        self.ci_prob = float(ci_prob)
        self.posterior_kind = posterior or (
            "MCMC posterior" if "r_hat" in self._table.columns else "posterior")
        prov: dict[str, Any] = {"bayesmeta": __version__}
        if random_seed is not None:
            prov["random_seed"] = int(random_seed)
        if data_hash is not None:
            prov["data_hash"] = str(data_hash)
        if idata is not None and hasattr(idata, "posterior"):
            a = idata.posterior.attrs
            for key in ("sampler", "chains", "draws", "tune", "fast", "random_seed"):
                if key in a:
                    prov.setdefault(key, a[key])
        self.provenance = prov

    # ------------------------------------------------------------------ access
    def summary(self) -> pd.DataFrame:
        """The table of estimates (raw, unrounded values) with its interval attributes
        ``ci_kind``, ``ci_prob``, ``classical_ci_kind``, ``classical_ci_prob``."""
        out = self._table.copy()
        out.attrs = {**self._table.attrs, "title": self.title}
        return out

    def details(self) -> pd.DataFrame:
        """What is not an estimate: counts, ranks, p-values, flags, other software's
        columns."""
        return self._details.copy()

    @property
    def posterior(self) -> xr.Dataset | None:
        """The posterior draws (dims ``chain``, ``draw`` and named model dims)."""
        return None if self.idata is None else self.idata.posterior

    def signature(self) -> str:
        """The provenance as one line, e.g. ``bayesmeta:0.2.0|data:1f2e...|seed:7|ci:hdi-0.94``."""
        p = self.provenance
        parts = [f"bayesmeta:{p['bayesmeta']}"]
        if "data_hash" in p:
            parts.append(f"data:{p['data_hash']}")
        if "random_seed" in p:
            parts.append(f"seed:{p['random_seed']}")
        a = self._table.attrs
        if a.get("ci_kind"):
            parts.append(f"ci:{a['ci_kind']}-{a['ci_prob']:g}")
        if a.get("classical_ci_kind"):
            parts.append(f"classical_ci:{a['classical_ci_kind'].replace(' ', '_')}-"
                         f"{a['classical_ci_prob']:g}")
        if "sampler" in p:
            parts.append(f"sampler:{p['sampler']}-{p.get('chains', '?')}x{p.get('draws', '?')}"
                         + ("-fast" if int(p.get("fast", 0)) else ""))
        return "|".join(parts)

    def to_csv(self, path: str | Path) -> None:
        """Write the raw summary table to CSV."""
        self.summary().to_csv(path)

    # ------------------------------------------------------------------ printing
    @staticmethod
    def _format_table(table: pd.DataFrame) -> str:
        shown = table.copy()
        for col in shown.columns:
            if col in ("ess_bulk", "ess_tail") and pd.api.types.is_numeric_dtype(shown[col]):
                shown[col] = shown[col].map(lambda v: "" if pd.isna(v) else f"{v:.0f}")
            elif pd.api.types.is_float_dtype(shown[col]):
                shown[col] = shown[col].map(lambda v: "" if pd.isna(v) else f"{v:.3f}")
        with pd.option_context("display.max_rows", 500, "display.width", 200):
            return shown.to_string()

    def _body(self) -> str:
        return self._format_table(self._table)

    def _footer(self) -> list[str]:
        a, cols = self._table.attrs, self._table.columns
        lines = []
        if "classical_low" in cols:
            lines.append(f"  classical_low/high: {a['classical_ci_prob']:.0%} "
                         f"{a['classical_ci_kind']} interval of the classical estimate.")
        if "hdi_low" in cols:
            kind = ("highest-density interval" if a["ci_kind"] == "hdi"
                    else f"{a['ci_kind']} interval")
            lines.append(f"  mean, sd, hdi_low/high: {self.posterior_kind}; "
                         f"{a['ci_prob']:.0%} {kind}.")
        if "elpd_low" in cols:
            lines.append(f"  elpd, elpd_low/high: PSIS-LOO expected log predictive density; "
                         f"{a['elpd_ci_prob']:.0%} {a['elpd_ci_kind']} interval.")
        if "r_hat" in cols:
            lines.append("  r_hat <= 1.01 and ess_bulk/ess_tail >= 400: the chains agree and the "
                         "summary is precise enough to report.")
        return lines

    def __str__(self) -> str:
        lines = [self.title, ""]
        width = max((len(k) for k in self.info), default=0)
        for key, value in self.info.items():
            lines.append(f"  {key:<{width}}  {value}")
        lines += [f"  {'signature':<{width}}  {self.signature()}", "", self._body()]
        footer = self._footer()
        if footer:
            lines += ["", *footer]
        if self.notes:
            lines += [""] + [f"  Note: {n}" for n in self.notes]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {self.title} ({len(self._table)} rows)>"

    # ------------------------------------------------------------------ plotting
    def plot(self, ax: Any = None, column: str | None = None) -> Any:
        """Forest plot of the estimates: classical estimate as a cross (with its interval),
        posterior mean with its HDI as a dot and a line. Returns the matplotlib Figure."""
        from bayesmeta.plots import plot_forest

        return plot_forest(self, ax=ax, column=column).figure

    def plot_estimand(self, estimand: str, ax: Any = None, column: str | None = None) -> Any:
        """Forest plot of the rows of one estimand (their design labels on the axis);
        an estimand the table lacks raises a ``ValueError`` listing those it has."""
        from bayesmeta.plots import plot_forest

        levels = list(dict.fromkeys(self._table.index.get_level_values("estimand")))
        if estimand not in levels:
            raise ValueError(f"estimand must be one of {', '.join(map(repr, levels))}, "
                             f"got {estimand!r}.")
        view = TableView(self._table.xs(estimand, level="estimand"),
                         f"{self.title}: {estimand}", self.ci_prob)
        return plot_forest(view, ax=ax, column=column).figure

    # ------------------------------------------------------------------ saving
    def save(self, path: str | Path) -> Path:
        """Save the result to a netCDF file (groups: summary, details, idata groups,
        extras); :func:`load` restores it without loss."""
        path = Path(path)
        tree: dict[str, xr.Dataset] = {}
        tree["/summary"], _ = _flat_frame(self._table)
        tree["/details"], _ = _flat_frame(self._details)
        if self.idata is not None:
            for group in self.idata.groups():
                tree[f"/idata/{group}"] = self.idata[group]
        for name, value in self.extra.items():
            tree[f"/extra/{name}"] = value.to_dataset(name="__value__") if isinstance(
                value, xr.DataArray
            ) else value
        tree["/"] = xr.Dataset(
            attrs={
                "bayesmeta_class": type(self).__name__,
                "bayesmeta_module": type(self).__module__,
                "title": self.title,
                "info": json.dumps(self.info, default=str),
                "notes": json.dumps(self.notes),
                "ci_prob": self.ci_prob,
                "posterior_kind": self.posterior_kind,
                "provenance": json.dumps(self.provenance, default=str),
                "state": json.dumps(self._state(), default=str),
                "extra_kinds": json.dumps(
                    {k: ("dataarray" if isinstance(v, xr.DataArray) else "dataset")
                     for k, v in self.extra.items()}
                ),
            }
        )
        xr.DataTree.from_dict(tree).to_netcdf(path, engine="h5netcdf")
        return path

    def _state(self) -> dict[str, Any]:
        """Extra JSON-serialisable state of a subclass, restored by :meth:`_restore`."""
        return {}

    def _restore(self, state: dict[str, Any]) -> None:
        return None


def _result_class(name: str, module: str) -> type[Result]:
    """The Result subclass saved under ``name``, importing its module (recorded at save
    time) when it is not loaded yet, e.g. a Bayesian CFA saved in another session (its
    model module is imported lazily, so that ``import bayesmeta`` stays light)."""
    if name not in _REGISTRY and module.startswith("bayesmeta."):
        import importlib

        try:
            importlib.import_module(module)
        except ImportError:  # a module renamed since: fall back to the base class
            pass
    return _REGISTRY.get(name, Result)


def load(path: str | Path) -> Result:
    """Load a result saved with :meth:`Result.save`.

    Raises
    ------
    FileNotFoundError
        No such file.
    ValueError
        The file is not a saved result (not netCDF4/HDF5, or a netCDF file without the
        result's ``bayesmeta_class`` attribute and ``summary`` group), named in the message.

    Examples
    --------
    >>> import bayesmeta as bm, tempfile, os
    >>> res = bm.consistency(bm.datasets.simulated(n_systems=5, n_items=10))
    >>> p = os.path.join(tempfile.mkdtemp(), "fit.nc")
    >>> _ = res.save(p)
    >>> bm.load(p).summary().equals(res.summary())
    True
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no saved result {str(path)!r}: the file does not exist.")
    try:
        dt = xr.open_datatree(path, engine="h5netcdf").load()
    except Exception as err:  # h5py/netCDF raise OSError, ValueError, ... on other files
        raise ValueError(f"{str(path)!r} is not a bayesmeta result saved with Result.save() "
                         f"(it cannot be read as netCDF4/HDF5: {err}).") from None
    attrs = dt.attrs
    if "bayesmeta_class" not in attrs or "summary" not in dt.children:
        raise ValueError(f"{str(path)!r} is not a bayesmeta result saved with Result.save(): "
                         f"it is a netCDF file without the 'bayesmeta_class' attribute and "
                         f"'summary' group (a dataset? read it with xarray.open_dataset).")
    cls = _result_class(attrs["bayesmeta_class"], attrs.get("bayesmeta_module", ""))
    table = _unflat_frame(dt["summary"].to_dataset())
    details = _unflat_frame(dt["details"].to_dataset()) if "details" in dt.children else None
    idata = None
    if "idata" in dt.children:
        import arviz as az

        groups = {name: node.to_dataset() for name, node in dt["idata"].children.items()}
        idata = az.InferenceData(**groups)
    extra: dict[str, xr.DataArray | xr.Dataset] = {}
    kinds = json.loads(attrs.get("extra_kinds", "{}"))
    if "extra" in dt.children:
        for name, node in dt["extra"].children.items():
            ds = node.to_dataset()
            extra[name] = ds["__value__"] if kinds.get(name) == "dataarray" else ds
    obj = cls.__new__(cls)
    ta = table.attrs
    Result.__init__(
        obj,
        table,
        title=attrs["title"],
        info=json.loads(attrs["info"]),
        details=details,
        idata=idata,
        extra=extra,
        notes=json.loads(attrs["notes"]),
        ci_prob=float(attrs["ci_prob"]),
        ci_kind=ta.get("ci_kind") or None,
        classical_ci_kind=ta.get("classical_ci_kind") or None,
        classical_ci_prob=(None if not ta.get("classical_ci_kind")
                           else float(ta["classical_ci_prob"])),
        elpd_ci_kind=ta.get("elpd_ci_kind") or None,
        posterior=attrs.get("posterior_kind"),
    )
    obj.provenance = json.loads(attrs.get("provenance", "{}")) or obj.provenance
    obj._restore(json.loads(attrs.get("state", "{}")))
    return obj
