"""Data: the xarray schema, readers, and built-in datasets."""

from bayesmeta.data import datasets
from bayesmeta.data._columns import ReadWarning
from bayesmeta.data.annotations import add_judges, from_annotations, read_annotations
from bayesmeta.data.io import from_long, from_wide, orient, read_csv, read_report
from bayesmeta.data.mtme import read_mtme
from bayesmeta.data.quality import data_quality
from bayesmeta.data.schema import (
    MissingDataWarning,
    missing_report,
    split_language_pairs,
    validate,
)

__all__ = [
    "MissingDataWarning",
    "ReadWarning",
    "add_judges",
    "data_quality",
    "datasets",
    "from_annotations",
    "from_long",
    "from_wide",
    "missing_report",
    "orient",
    "read_annotations",
    "read_csv",
    "read_mtme",
    "read_report",
    "split_language_pairs",
    "validate",
]
