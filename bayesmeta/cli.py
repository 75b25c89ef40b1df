"""The ``bayesmeta`` command.

    bayesmeta read FILE [reading options]
    bayesmeta reliability [PATH ...] [reading options] [--coefficient kendall]
                          [--bayes [--fast] [--seed N]]
    bayesmeta report DATA [--design design.toml] [reading options] [--trait T]
                     [--bayes off|fast|full] [--loo] [--seed N] [--resamples N]
                     [--budget S]
                     [--no-progress] --out report.html
    bayesmeta demo [--out bayesmeta-demo.html] [--bayes off|fast|full] [--seed N] [--text]
    bayesmeta vignette PATH [--out FILE]

``read`` reads a CSV as :func:`bayesmeta.read_csv` would and prints what was read: sizes,
the human scores and their kind, the metrics, the reference dim, the columns left out and
why. ``reliability`` prints the classical reliability and validity tables (stability,
consistency with SEM, inter-rater agreement, the MTMM table of the ratings, concurrent
validity of each metric against each trait) for one CSV, or several CSVs holding repeated
metric runs. With no PATH it reads the shared SummEval files when they are found
(``$BAYESMETA_DATA``), and otherwise the built-in simulated data. ``demo`` always uses the
built-in simulated SummEval-shaped data. ``--bayes`` adds the posterior of the true-score
model (consistency, stability, SEM, items needed) next to the classical estimates.

``report`` writes the uncertainty-aware metric report (:func:`bayesmeta.report`): one
self-contained HTML file; on stderr the cost estimate before the work, then a progress bar
(or, when stderr is not a terminal, one line per section; ``--no-progress``: nothing); then
where the file is and a short text summary on stdout. ``--budget SECONDS`` (default 120
with ``--bayes off``, 300 with ``--bayes fast`` or ``full``, whose MCMC comes on top) caps
the estimated time: over it the default resamples are lowered, as the page says, or the
report refuses with the reason before computing. ``--trait``
picks the human traits (in ``report`` the long-format trait column is ``--trait-column``).
``demo`` writes the same report of the built-in simulated data (``--bayes off`` and 200
resamples by default, so it takes well under two minutes on two cores); ``demo --text``
prints the classical text tables instead.

``vignette`` runs a vignette (a jupytext percent script, ``vignettes/*.py``) cell by cell
and writes it as one self-contained HTML page: Markdown, code, printed output and figures
(:func:`bayesmeta.report.vignette.render_vignette`); a failing cell ends the run, its
traceback is on the page, and the exit status is 1.

``report --design design.toml`` reads the reading and report options from a TOML file
(keys as the long flags with ``_`` for ``-``: ``format``, ``system``, ``item``, ``metrics``,
``ratings``, ``human``, ``scale``, ..., ``trait_column``, and ``data``, ``traits``,
``bayes``, ``seed``, ``resamples``, ``budget``, ``coefficient``, ``out``; top level or in
``[read]`` and ``[report]`` tables). A flag given on the command line overrides the file;
an unknown key is an error naming it. See :func:`load_design`.

Reading options (the keywords of :func:`bayesmeta.read_csv`): ``--format``, ``--system``,
``--item``, ``--id``, ``--id-split``, ``--run``, ``--metrics``, ``--ratings``, ``--human``,
``--exclude``, ``--scale``, ``--human-scale``, ``--decimal``, ``--sep``, ``--encoding``
(the file's text encoding when it is not UTF-8 or has no byte-order mark),
``--lower-is-better`` (metrics such as distances and error rates, whose negation the
analyses read), and for long
tables ``--value``, ``--rater``, ``--trait``, ``--metric``, ``--reference``. Column lists
are comma-separated (``--human "Natural,Maintains Context"``) or repeated; ``re:PATTERN``
is a regular expression (``--metrics 're:_hypo(_[PRF])?$'``); ``--human col=trait`` renames.
"""

from __future__ import annotations

import argparse
import re
import sys
import tomllib
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr

LONG_OPTIONS = ("value", "rater", "trait", "metric", "reference")


# ----------------------------------------------------------------------------- reading
def add_read_arguments(parser: argparse.ArgumentParser, *, default_format: str = "wide",
                       rename: dict[str, str] | None = None) -> None:
    """Add the reading options of :func:`bayesmeta.read_csv` to a (sub)command;
    ``rename`` gives another flag to a long-format option (``{"trait": "trait-column"}``
    where ``--trait`` means something else)."""
    rename = rename or {}
    g = parser.add_argument_group("reading options (see bayesmeta.read_csv)")
    g.add_argument("--format", default=default_format, choices=["wide", "long", "metriceval"],
                   help=f"table layout (default {default_format})")
    g.add_argument("--system", help="column naming the system (default: 'system' if "
                                    "present, else one system labelled 'all')")
    g.add_argument("--item", help="column naming the item (default: 'item')")
    g.add_argument("--id", help="composite id column holding item and system")
    g.add_argument("--id-split", dest="id_split",
                   help="separator of --id (<item><sep><system>) or a regex with groups "
                        "(?P<item>...) and (?P<system>...)")
    g.add_argument("--run", help="column labelling repeated metric runs")
    g.add_argument("--metrics", action="append",
                   help="metric columns (comma-separated, repeatable, or re:PATTERN); "
                        "default: every other column of numbers or list cells")
    g.add_argument("--ratings", help="ordinal rating columns: a regex with groups "
                                     "(?P<rater>...) and (?P<trait>...), or "
                                     "col=rater.trait,... pairs")
    g.add_argument("--human", action="append",
                   help="continuous human score columns (comma-separated, repeatable, "
                        "col=trait to rename, or re:PATTERN)")
    g.add_argument("--exclude", action="append", help="columns to leave out on purpose")
    g.add_argument("--scale", default="1,5", help="rating scale min,max (default 1,5)")
    g.add_argument("--human-scale", dest="human_scale", help="bounds min,max of human scores")
    g.add_argument("--decimal", default=".", help="decimal mark of the file (e.g. ',')")
    g.add_argument("--sep", default=",", help="field separator of the file (e.g. ';')")
    g.add_argument("--encoding", default=None,
                   help="text encoding of the file (e.g. latin-1, cp1252, utf-16); default: "
                        "from a byte-order mark, else UTF-8")
    g.add_argument("--lower-is-better", dest="lower_is_better", action="append",
                   help="metrics where lower is better (distances, error rates, "
                        "perplexity; comma-separated or repeated): analyses read their "
                        "negation")
    for name in LONG_OPTIONS:
        g.add_argument(f"--{rename.get(name, name)}", dest=name, default=None,
                       help=f"long format: the {name} column")


def _pair(text: str | None, option: str) -> tuple[float, float] | None:
    if text is None:
        return None
    parts = [p for p in re.split(r"\.\.|,|:", text) if p.strip()]
    try:
        lo, hi = (float(p) for p in parts)
    except ValueError:
        raise ValueError(f"{option} must be 'min,max' (e.g. 1,5), got {text!r}.") from None
    return lo, hi


def _columns(values: list[str] | None, option: str, *, renames: bool = False):
    """Column lists from repeated, comma-separated option values; ``re:`` marks a regex."""
    if values is None:
        return None
    patterns = [v[3:] for v in values if v.startswith("re:")]
    names = [p.strip() for v in values if not v.startswith("re:")
             for p in v.split(",") if p.strip()]
    if patterns:
        if names or len(patterns) > 1:
            raise ValueError(f"{option}: give one re:PATTERN or column names, not both.")
        return re.compile(patterns[0])
    if renames and any("=" in n for n in names):
        pairs = [n.split("=", 1) if "=" in n else (n, n) for n in names]
        return {c.strip(): t.strip() for c, t in pairs}
    return names


def _ratings(text: str | None):
    if text is None or "(?P<" in text:
        return text
    out = {}
    for part in text.split(","):
        column, _, target = part.partition("=")
        rater, dot, trait = target.strip().rpartition(".")
        if not dot or not rater or not trait:
            raise ValueError(f"--ratings: {part!r} must read column=rater.trait, or give a "
                             f"regex with groups (?P<rater>...) and (?P<trait>...).")
        out[column.strip()] = (rater, trait)
    return out


def read_options(args: argparse.Namespace) -> dict:
    """The keyword arguments of :func:`bayesmeta.read_csv` given on the command line."""
    opts = {
        "format": args.format,
        "system": args.system, "item": args.item, "id": args.id, "id_split": args.id_split,
        "run": args.run,
        "metrics": _columns(args.metrics, "--metrics"),
        "ratings": _ratings(args.ratings),
        "human": _columns(args.human, "--human", renames=True),
        "exclude": _columns(args.exclude, "--exclude"),
        "human_scale": _pair(args.human_scale, "--human-scale"),
        "encoding": getattr(args, "encoding", None),
        "lower_is_better": _columns(getattr(args, "lower_is_better", None),
                                    "--lower-is-better"),
        **{k: getattr(args, k) for k in LONG_OPTIONS},
    }
    opts = {k: v for k, v in opts.items() if v is not None}
    scale = _pair(args.scale, "--scale")
    if scale != (1.0, 5.0):
        opts["scale"] = scale
    for key, default in (("decimal", "."), ("sep", ",")):
        if getattr(args, key) != default:
            opts[key] = getattr(args, key)
    return opts


def read_from_args(paths: Sequence[str], args: argparse.Namespace) -> xr.Dataset:
    """Read the CSV file(s) named on the command line with the reading options given."""
    from bayesmeta.data import read_csv

    return read_csv(paths[0] if len(paths) == 1 else list(paths), **read_options(args))


def _load(args: argparse.Namespace) -> tuple[xr.Dataset, str]:
    from bayesmeta.data import datasets

    if args.paths:
        return read_from_args(args.paths, args), ", ".join(args.paths)
    try:
        folder = datasets.find_summeval(download=False)
    except FileNotFoundError:
        return datasets.simulated(), "built-in simulated SummEval-shaped data (seed 0)"
    return datasets.summeval(folder), f"SummEval ({folder})"


def describe_read(ds: xr.Dataset, source: str) -> str:
    """What a reader made of a file: sizes, human scores, metrics, references, left out."""
    from bayesmeta.data import missing_report, read_report
    from bayesmeta.data.select import describe, human_traits

    def listing(values, limit=None) -> str:
        values = [str(v) for v in values]
        shown = values if limit is None else values[:limit]
        more = f", ... ({len(values) - limit} more)" if limit and len(values) > limit else ""
        return ", ".join(shown) + more if values else "none"

    report = read_report(ds)
    out = [f"bayesmeta read: {source} ({ds.attrs.get('format', '?')} format)",
           f"sizes: {describe(ds)}",
           f"systems ({ds.sizes['system']}): {listing(ds['system'].values, 10)}"]
    kinds = human_traits(ds)
    human = [f"{t} ({k}{', mean over raters' if k == 'rating' else ''})"
             for t, k in kinds.items()]
    out.append(f"human scores ({len(human)}): {listing(human)}")
    if "rating" in ds:
        out.append(f"raters ({ds.sizes['rater']}): {listing(ds['rater'].values, 10)}; scale "
                   f"{ds['rating'].attrs['scale_min']:g}..{ds['rating'].attrs['scale_max']:g}")
    if "score" in ds:
        metrics = []
        for m in ds["metric"].values:
            tag = str(ds["inputs"].sel(metric=m).item()) if "inputs" in ds.coords else ""
            if not tag and "reference_based" in ds.coords:
                tag = "ref" if bool(ds["reference_based"].sel(metric=m)) else "no ref"
            metrics.append(f"{m} [{tag}]" if tag else str(m))
        out.append(f"metrics ({len(metrics)}, chosen {ds.attrs.get('metrics_chosen', 'given')}"
                   f"): {listing(metrics)}")
        out.append(f"runs ({ds.sizes['run']}): {listing(ds['run'].values, 10)}")
        if "reference" in ds["score"].dims:
            counts = ds["score"].notnull().sum("reference").max(("metric", "run")).values
            counts = counts[counts > 0]
            out.append(f"reference dim: {ds.sizes['reference']} positions; references per "
                       f"output {int(counts.min())} to {int(counts.max())} (median "
                       f"{float(np.median(counts)):g})")
        else:
            out.append("reference dim: none (one score per output)")
    left = report[report["role"] == "left out"]
    out.append(f"left out ({len(left)}): "
               + listing([f"{r.column} ({r.detail})" for r in left.itertuples()]))
    missing = missing_report(ds)
    missing = [f"{r.variable} {r.label} {r.missing} of {r.total}"
               for r in missing.itertuples() if r.missing > 0]
    out.append(f"missing: {listing(missing, 10)}")
    if "higher_is_better" in ds.coords:
        lower = [str(m) for m, h in zip(ds["metric"].values, ds["higher_is_better"].values,
                                        strict=True) if not h]
        out.append(f"lower is better (analyses read the negation): {listing(lower)}")
    if "score" in ds:
        from bayesmeta.data.quality import data_quality

        try:
            quality = data_quality(ds)
            found = [f"{r.metric}: {r.finding} ({r.reason})" for r in quality.itertuples()]
            out.append(f"data quality ({len(found)} finding(s)): {listing(found, 10)}")
        except ValueError as err:
            out.append(f"data quality: not checked ({err})")
    out += ["", "column roles:", report.to_string(index=False)]
    return "\n".join(out)


# ----------------------------------------------------------------------------- tables
#: The report sections whose results ``bayesmeta reliability`` and ``bayesmeta demo --text``
#: print: the report decides what runs, the command only prints it as text.
TEXT_SECTIONS = ("reliability", "agreement", "mtmm", "concurrent_validity")


def _tables(ds: xr.Dataset, source: str, coefficient: str, bayes: bool = False,
            fast: bool = False, seed: int | None = None) -> str:
    """The results of the report's reliability and validity sections as text (with
    ``bayes``, the true-score posteriors beside the classical estimates)."""
    from bayesmeta._version import __version__
    from bayesmeta.report import report

    mode = ("fast" if fast else "full") if bayes else "off"
    rep = report(ds, sections=list(TEXT_SECTIONS), coefficient=coefficient, bayes=mode,
                 random_seed=seed, progress=False)
    out = [f"bayesmeta {__version__}: classical reliability and validity", f"data: {source}",
           ""]
    for run in rep.runs:
        if run.status == "failed":
            raise ValueError(f"{run.title}: {run.error}")
        if run.status == "skipped":
            out += [f"{run.title}: skipped ({run.reason})", ""]
            continue
        for res in run.output.results:
            if type(res).__name__ == "CorrelationsResult":  # the intervals of concurrent
                continue  # validity: on the HTML page (`bayesmeta report`)
            out += [str(res), ""]
    return "\n".join(out)


def build_parser() -> argparse.ArgumentParser:
    """The ``bayesmeta`` argument parser (subcommands ``read``, ``reliability``, ``report``,
    ``demo``, ``vignette``)."""
    parser = argparse.ArgumentParser(prog="bayesmeta", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    read = sub.add_parser("read", help="read a CSV and print what was read")
    read.add_argument("path", help="CSV file")
    add_read_arguments(read, default_format="wide")
    rel = sub.add_parser("reliability", help="classical reliability and validity tables")
    rel.add_argument("paths", nargs="*", help="CSV file(s); several = repeated metric runs")
    add_read_arguments(rel, default_format="metriceval")
    add_report_parsers(sub)
    from bayesmeta.report.vignette import add_vignette_parser

    add_vignette_parser(sub)
    for p in (rel,):
        p.add_argument("--coefficient", default="kendall",
                       choices=["kendall", "spearman", "pearson"],
                       help="correlation coefficient of MTMM, concurrent validity and the "
                            "measures shown (default kendall)")
        p.add_argument("--bayes", action="store_true",
                       help="add the Bayesian true-score posteriors (bm.reliability) beside "
                            "the classical estimates")
        p.add_argument("--fast", action="store_true",
                       help="with --bayes: fewer draws, for a preview (said in the header)")
        p.add_argument("--seed", type=int, default=None, help="random seed of the sampler")
    return parser


# ----------------------------------------------------------------------------- report
DEMO_RESAMPLES = 200


def add_report_parsers(sub: Any) -> None:
    """The ``report`` and ``demo`` subcommands (the HTML metric report)."""
    rep = sub.add_parser("report", help="write the uncertainty-aware metric report (HTML)")
    rep.add_argument("paths", nargs="*", metavar="DATA",
                     help="CSV file(s); several = repeated metric runs (or `data` in "
                          "--design)")
    rep.add_argument("--design", metavar="TOML",
                     help="a TOML file of reading and report options (keys as the long "
                          "flags, e.g. format, metrics, human, traits, bayes, seed, "
                          "resamples, data); flags given here override it")
    add_read_arguments(rep, default_format="wide", rename={"trait": "trait-column"})
    rep.add_argument("--out", default="report.html", help="HTML file to write "
                                                          "(default report.html)")
    demo = sub.add_parser("demo", help="write the report of the built-in simulated data")
    demo.add_argument("--out", default="bayesmeta-demo.html",
                      help="HTML file to write (default bayesmeta-demo.html)")
    demo.add_argument("--text", action="store_true",
                      help="print the classical text tables instead of writing the report")
    for p, resamples in ((rep, 1000), (demo, DEMO_RESAMPLES)):
        if p is rep:
            p.add_argument("--trait", dest="traits", action="append",
                           help="human trait(s) to analyse (comma-separated or repeated; "
                                "default all)")
        p.add_argument("--bayes", nargs="?", const="full", default="off",
                       choices=["off", "fast", "full"],
                       help="Bayesian models: off (default), fast (a preview, stated on every "
                            "table) or full")
        p.add_argument("--fast", action="store_true", help="same as --bayes fast")
        p.add_argument("--loo", action="store_true", default=None,
                       help="with --bayes full: also compare the CFA's trait factors with one "
                            "general factor by LOO (a second Bayesian CFA)")
        if p is rep:
            p.add_argument("--seed", type=int, default=None, help="random seed (drawn and "
                                                                  "recorded when not given)")
        else:
            p.add_argument("--seed", type=int, default=0, help="random seed (default 0: the "
                                                               "demo is reproducible)")
        p.add_argument("--resamples", type=int, default=None if p is rep else resamples,
                       help=f"resamples and permutations of the resampling analyses "
                            f"(default {resamples}" + (", lowered by the time budget when "
                                                       "not given" if p is rep else "") + ")")
        p.add_argument("--budget", type=float, default=None, metavar="SECONDS",
                       help="seconds the report may take (default 120 with --bayes off, 300 "
                            "plus the MCMC with --bayes fast or full; 0: no limit): "
                            "estimated before computing; over it, the default resamples are "
                            "lowered (said on the page) or the report refuses with the "
                            "reason")
        p.add_argument("--no-progress", dest="progress", action="store_false",
                       help="no progress bars or cost estimate on stderr")
        p.add_argument("--coefficient", default="kendall",
                       choices=["kendall", "spearman", "pearson"],
                       help="correlation coefficient of MTMM, concurrent validity and the "
                            "measures shown (default kendall)")


# ----------------------------------------------------------------------------- design file
#: Keys of a design file: reading options (``[read]``) and report options (``[report]``),
#: each mapped to the ``bayesmeta report`` option (argparse dest) it stands for.
DESIGN_READ_KEYS = {
    "format": "format", "system": "system", "item": "item", "id": "id",
    "id_split": "id_split", "run": "run", "metrics": "metrics", "ratings": "ratings",
    "human": "human", "exclude": "exclude", "scale": "scale", "human_scale": "human_scale",
    "decimal": "decimal", "sep": "sep", "encoding": "encoding",
    "lower_is_better": "lower_is_better", "value": "value", "rater": "rater",
    "trait_column": "trait", "metric": "metric", "reference": "reference"}
DESIGN_REPORT_KEYS = {
    "budget": "budget",
    "data": "paths", "traits": "traits", "bayes": "bayes", "seed": "seed",
    "resamples": "resamples", "coefficient": "coefficient", "out": "out", "loo": "loo"}
_CHOICES = {"format": ("wide", "long", "metriceval"), "bayes": ("off", "fast", "full"),
            "coefficient": ("kendall", "spearman", "pearson")}
_LISTS = ("metrics", "human", "exclude", "traits", "lower_is_better")  # repeatable flags


def _design_value(key: str, value: Any, where: str) -> Any:
    """One design value in the form its command-line flag gives it to argparse."""
    def bad(expected: str) -> TypeError:
        return TypeError(f"{where}: {key!r} must be {expected}, got {value!r}.")

    if key in ("seed", "resamples"):
        if isinstance(value, bool) or not isinstance(value, int):
            raise bad("an integer")
        if key == "resamples" and value < 1:
            raise ValueError(f"{where}: 'resamples' must be at least 1, got {value}.")
        return value
    if key == "budget":
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise bad("a number of seconds >= 0")
        return float(value)
    if key == "bayes" and isinstance(value, bool):
        return "full" if value else "off"
    if key == "loo":
        if not isinstance(value, bool):
            raise bad("true or false")
        return value or None
    if key in ("scale", "human_scale"):
        if isinstance(value, list):
            if len(value) != 2 or not all(isinstance(v, int | float) and
                                          not isinstance(v, bool) for v in value):
                raise bad("[min, max] (two numbers) or 'min,max'")
            return f"{value[0]},{value[1]}"
        if not isinstance(value, str):
            raise bad("[min, max] (two numbers) or 'min,max'")
        return value
    if key == "human" and isinstance(value, dict):  # {column = "trait"}: renames
        if not all(isinstance(v, str) for v in value.values()):
            raise bad("a table of column = \"trait\" strings")
        return [f"{c}={t}" for c, t in value.items()]
    if key == "ratings" and isinstance(value, dict):  # {column = "rater.trait"}
        parts = []
        for column, target in value.items():
            if isinstance(target, list) and len(target) == 2:
                target = f"{target[0]}.{target[1]}"
            if not isinstance(target, str):
                raise bad('a regex or a table of column = "rater.trait"')
            parts.append(f"{column}={target}")
        return ",".join(parts)
    if key in _LISTS or key == "data":
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list) or not all(isinstance(v, str) for v in items):
            raise bad("a string or a list of strings")
        return list(items)
    if not isinstance(value, str):
        raise bad("a string")
    if key in _CHOICES and value not in _CHOICES[key]:
        raise ValueError(f"{where}: {key!r} must be one of {', '.join(_CHOICES[key])}; "
                         f"got {value!r}.")
    return value


def load_design(path: str | Path) -> dict[str, Any]:
    """Read a design file for ``bayesmeta report``: the options as argparse would hold them.

    A design file is TOML: the reading options of :func:`bayesmeta.read_csv` and the report
    options, as top-level keys or in ``[read]`` and ``[report]`` tables. Keys are the long
    flags with ``_`` for ``-`` (``id_split``, ``human_scale``; the long-format trait column
    is ``trait_column``); lists are TOML arrays, ``scale = [1, 5]``, ``human = {col =
    "trait"}`` renames, ``ratings`` is a regex or ``{column = "rater.trait"}``, ``bayes``
    is ``"off"``/``"fast"``/``"full"`` (or true/false), and ``data`` names the CSV file(s),
    relative to the design file (``out``, like ``--out``, is relative to the working
    directory). For example::

        data = ["summeval.csv"]
        [read]
        format = "wide"
        metrics = ["BLEU", "ROUGE-L"]
        human = {fluency = "FLU"}
        [report]
        traits = ["FLU"]
        bayes = "fast"
        seed = 1
        resamples = 200

    Returns
    -------
    dict
        argparse dest -> value (``data`` resolved against the design file's folder).

    Raises
    ------
    FileNotFoundError, ValueError, TypeError
        A missing file, invalid TOML, an unknown key (named), a value of the wrong type.
    """
    path = Path(path)
    try:
        with path.open("rb") as fh:
            doc = tomllib.load(fh)
    except FileNotFoundError:
        raise FileNotFoundError(f"--design: no file {str(path)!r}.") from None
    except tomllib.TOMLDecodeError as err:
        raise ValueError(f"--design {path}: not valid TOML ({err}).") from None
    keys = {"read": DESIGN_READ_KEYS, "report": DESIGN_REPORT_KEYS}
    every = {**DESIGN_READ_KEYS, **DESIGN_REPORT_KEYS}
    entries: list[tuple[str, Any, str, dict[str, str]]] = []
    for key, value in doc.items():
        if key in keys and isinstance(value, dict):
            entries += [(k, v, f"{path} [{key}]", keys[key]) for k, v in value.items()]
        else:
            entries.append((key, value, str(path), every))
    out: dict[str, Any] = {}
    for key, value, where, allowed in entries:
        name = key.replace("-", "_")
        if name not in allowed:
            hint = ("" if name not in every else
                    f" (it belongs in [{'read' if name in DESIGN_READ_KEYS else 'report'}])")
            raise ValueError(f"{where}: unknown key {key!r}{hint}; known keys: "
                             f"{', '.join(sorted(allowed))}.")
        dest = allowed[name]
        if dest in out:
            raise ValueError(f"{where}: {key!r} is given twice.")
        value = _design_value(name, value, where)
        if name == "data":
            value = [str(p if Path(p).is_absolute() else path.parent / p) for p in value]
        out[dest] = value
    return out


def _given_options(parser: argparse.ArgumentParser, argv: Sequence[str]) -> set[str]:
    """The dests of the options typed on the command line (not filled in by a default)."""
    actions = parser._actions  # argparse has no public list of a parser's actions
    saved = [(a, a.default) for a in actions]
    try:
        for a in actions:
            a.default = argparse.SUPPRESS
        given = set(vars(parser.parse_args(list(argv))))
    finally:
        for a, default in saved:
            a.default = default
    given.discard("paths")  # a '*' positional always lands in the namespace
    return given


def apply_design(args: argparse.Namespace, argv: Sequence[str]) -> argparse.Namespace:
    """Fill the options of ``bayesmeta report`` from the design file ``args.design``;
    options typed on the command line (``argv``: the words after ``report``) win."""
    design = load_design(args.design)
    given = _given_options(_report_subparser(), argv)
    for dest, value in design.items():
        if dest == "paths":
            if not args.paths:
                args.paths = value
        elif dest not in given:
            setattr(args, dest, value)
    return args


def _report_subparser() -> argparse.ArgumentParser:
    sub = argparse.ArgumentParser(prog="bayesmeta").add_subparsers(dest="command")
    add_report_parsers(sub)
    return sub.choices["report"]


def check_out(out: str | Path) -> Path:
    """The report's output file, checked before any computation: an error (naming the path)
    when it is a folder, its folder does not exist, or it cannot be written."""
    import os

    path = Path(out)
    if path.is_dir():
        raise ValueError(f"--out {str(out)!r} is a folder; give a file name, e.g. "
                         f"{str(path / 'report.html')!r}.")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise ValueError(f"--out {str(out)!r}: the folder {str(parent)!r} does not exist.")
    if path.exists() and not os.access(path, os.W_OK):
        raise ValueError(f"--out {str(out)!r}: the file exists and cannot be written "
                         f"(permission denied).")
    if not path.exists() and not os.access(parent, os.W_OK | os.X_OK):
        raise ValueError(f"--out {str(out)!r}: the folder {str(parent)!r} cannot be written "
                         f"(permission denied).")
    return path


def report_main(args: argparse.Namespace, caught: list | None = None) -> int:
    """Run ``bayesmeta report`` / ``bayesmeta demo``: write the HTML report, print where it
    is and its short text summary; one progress line per section on stderr."""
    import bayesmeta as bm

    bayes = "fast" if args.fast else args.bayes
    check_out(args.out)  # before the reading and the long computation
    if args.command == "demo":
        from bayesmeta.data import datasets

        ds = datasets.simulated()
        source = "built-in simulated SummEval-shaped data (seed 0)"
        traits = None
    else:
        if not args.paths:
            raise ValueError("report: give the DATA file(s) on the command line or as "
                             "`data = [...]` in the --design file.")
        ds = read_from_args(args.paths, args)
        source = ", ".join(args.paths)
        traits = _columns(args.traits, "--trait")
    resampling = None if args.resamples is None else {"n_resamples": args.resamples}
    rep = bm.report(ds, traits=traits, bayes=bayes, random_seed=args.seed,
                    resampling=resampling, coefficient=args.coefficient, source=source,
                    progress=args.progress, budget=args.budget, loo=args.loo)
    path = rep.save(args.out)
    for w in caught or []:
        print(f"warning: {w.message}", file=sys.stderr)
    try:
        print(f"report written to {path.resolve()}")
        if args.command == "demo":
            print(f"(demo: --bayes {bayes}, {args.resamples} resamples; "
                  f"`bayesmeta demo --bayes fast` adds the Bayesian models as a preview)")
        print(rep.text())
    except BrokenPipeError:  # e.g. `bayesmeta demo | head`
        sys.stderr.close()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            if args.command == "vignette":
                from bayesmeta.report.vignette import vignette_main

                return vignette_main(args)
            if args.command == "report" and args.design:
                apply_design(args, argv[argv.index("report") + 1:])
            if args.command == "report" or (args.command == "demo" and not args.text):
                return report_main(args, caught)
            if args.command == "read":
                text = describe_read(read_from_args([args.path], args), repr(args.path))
            else:
                if args.command == "demo":
                    from bayesmeta.data import datasets

                    ds, source = datasets.simulated(), "built-in simulated SummEval-shaped data"
                else:
                    ds, source = _load(args)
                text = _tables(ds, source, args.coefficient, bayes=args.bayes not in (False, "off"),
                               fast=args.fast or args.bayes == "fast",
                               seed=args.seed)
    except (ValueError, TypeError, OSError) as err:
        for w in caught:
            print(f"warning: {w.message}", file=sys.stderr)
        print(f"bayesmeta: error: {err}", file=sys.stderr)
        return 2
    try:
        print(text)
    except BrokenPipeError:  # e.g. `bayesmeta demo | head`
        sys.stderr.close()
        return 0
    for w in caught:
        print(f"warning: {w.message}", file=sys.stderr)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
