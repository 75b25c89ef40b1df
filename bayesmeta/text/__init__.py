"""Text tools for metric unit tests (paper 004): rule-based corruptions and adapters for
lexical metrics. Importing this package is light: lemminflect (the generators), sacrebleu,
rouge-score and pycocoevalcap (the metrics) are imported only when used (``pip install
'bayesmeta[text]'``)."""

from bayesmeta.text.corruptions import (
    ALIASES,
    CATEGORIES,
    LABELS,
    corrupt,
    coverage,
    resolve_kinds,
)

__all__ = ["ALIASES", "CATEGORIES", "LABELS", "corrupt", "coverage", "resolve_kinds"]
