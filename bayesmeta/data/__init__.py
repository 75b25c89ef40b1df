"""Data: the xarray schema, readers, and built-in datasets."""

from bayesmeta.data import datasets
from bayesmeta.data._columns import ReadWarning
from bayesmeta.data.io import from_long, from_wide, read_csv, read_report
from bayesmeta.data.schema import MissingDataWarning, missing_report, validate

__all__ = [
    "MissingDataWarning",
    "ReadWarning",
    "datasets",
    "from_long",
    "from_wide",
    "missing_report",
    "read_csv",
    "read_report",
    "validate",
]
