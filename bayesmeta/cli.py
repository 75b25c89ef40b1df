"""The ``bayesmeta`` command.

    bayesmeta reliability [PATH ...] [--format metriceval|wide|long] [--method kendall]
                          [--bayes [--fast] [--seed N]]
    bayesmeta demo [--bayes [--fast] [--seed N]]

``reliability`` prints the classical reliability and validity tables (stability,
consistency with SEM, inter-rater agreement, the MTMM table of the ratings, concurrent
validity of each metric against each trait) for one CSV, or several CSVs holding repeated
metric runs. With no PATH it reads the shared SummEval files when they are found
(``$BAYESMETA_DATA``), and otherwise the built-in simulated data. ``demo`` always uses the
built-in simulated SummEval-shaped data. ``--bayes`` adds the posterior of the true-score
model (consistency, stability, SEM, items needed) next to the classical estimates.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Sequence

import xarray as xr


def _load(args: argparse.Namespace) -> tuple[xr.Dataset, str]:
    from bayesmeta.data import datasets, read_csv

    if args.paths:
        columns = {k: getattr(args, k) for k in ("system", "item", "rater", "trait", "metric",
                                                  "run", "value") if getattr(args, k)}
        if args.format == "wide":
            columns.pop("value", None)
        return read_csv(args.paths if len(args.paths) > 1 else args.paths[0],
                        format=args.format, **columns), ", ".join(args.paths)
    try:
        folder = datasets.find_summeval(download=False)
    except FileNotFoundError:
        return datasets.simulated(), "built-in simulated SummEval-shaped data (seed 0)"
    return datasets.summeval(folder), f"SummEval ({folder})"


def _tables(ds: xr.Dataset, source: str, method: str, bayes: bool = False,
            fast: bool = False, seed: int | None = None) -> str:
    import bayesmeta as bm

    out = [f"bayesmeta {bm.__version__}: classical reliability and validity", f"data: {source}",
           ""]
    if bayes and "score" in ds:
        out += [str(bm.reliability(ds, fast=fast, random_seed=seed)), ""]
    if "score" in ds and ds.sizes["run"] >= 2:
        out += [str(bm.stability(ds)), ""]
    out += [str(bm.consistency(ds)), ""]
    if "rating" in ds:
        if ds.sizes["rater"] >= 2:
            out += [str(bm.agreement(ds)), ""]
        out += [str(bm.mtmm(ds, method=method)), ""]
        if "score" in ds:
            traits = [str(t) for t in ds["trait"].values]
            cv = bm.concurrent_validity(ds, traits, method=method)
            tab = cv.summary()
            wide = tab["classical"].unstack("criterion")
            wide = wide.reindex(index=tab.index.get_level_values("metric").unique(),
                                columns=tab.index.get_level_values("criterion").unique())
            out += [f"Concurrent validity (system level, {method}; criterion = mean of raters)",
                    "", wide.to_string(float_format=lambda v: f"{v:.3f}"), ""]
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bayesmeta", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    rel = sub.add_parser("reliability", help="classical reliability and validity tables")
    rel.add_argument("paths", nargs="*", help="CSV file(s); several = repeated metric runs")
    rel.add_argument("--format", default="metriceval", choices=["metriceval", "wide", "long"])
    for col in ("system", "item", "rater", "trait", "metric", "run", "value"):
        rel.add_argument(f"--{col}", default=None, help=f"name of the {col} column")
    demo = sub.add_parser("demo", help="run on the built-in simulated data")
    for p in (rel, demo):
        p.add_argument("--method", default="kendall",
                       choices=["kendall", "spearman", "pearson"])
        p.add_argument("--bayes", action="store_true",
                       help="add the Bayesian true-score posteriors (bm.reliability) beside "
                            "the classical estimates")
        p.add_argument("--fast", action="store_true",
                       help="with --bayes: fewer draws, for a preview (said in the header)")
        p.add_argument("--seed", type=int, default=None, help="random seed of the sampler")
    args = parser.parse_args(argv)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            if args.command == "demo":
                from bayesmeta.data import datasets

                ds, source = datasets.simulated(), "built-in simulated SummEval-shaped data"
            else:
                ds, source = _load(args)
            text = _tables(ds, source, args.method, bayes=args.bayes, fast=args.fast,
                           seed=args.seed)
    except (ValueError, TypeError, FileNotFoundError) as err:
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
