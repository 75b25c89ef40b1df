"""bayesmeta: how far can you trust an evaluation metric or a panel of raters?

Classical measurement theory (reliability, validity, correlation measures) side by side
with Bayesian posteriors, for NLG evaluation. The public API is R-style::

    import bayesmeta as bm
    data = bm.datasets.summeval()
    bm.consistency(data)
    bm.mtmm(data)

Importing bayesmeta never imports PyMC; Bayesian models import it when they are built.
"""

from bayesmeta._version import __version__
from bayesmeta.cfa import cfa
from bayesmeta.classical.agreement import agreement
from bayesmeta.classical.reliability import (
    consistency,
    items_needed,
    rank_normalize,
    spearman_brown,
    stability,
)
from bayesmeta.classical.validity import concurrent_validity, mtmm
from bayesmeta.data import (
    MissingDataWarning,
    datasets,
    from_long,
    from_wide,
    missing_report,
    read_csv,
    validate,
)
from bayesmeta.results import Result, load

__all__ = [
    "MissingDataWarning",
    "Result",
    "__version__",
    "agreement",
    "cfa",
    "concurrent_validity",
    "consistency",
    "datasets",
    "from_long",
    "from_wide",
    "items_needed",
    "load",
    "missing_report",
    "mtmm",
    "rank_normalize",
    "read_csv",
    "spearman_brown",
    "stability",
    "validate",
]
