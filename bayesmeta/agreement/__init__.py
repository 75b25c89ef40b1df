"""Agreement between raters: Krippendorff's alpha (ordinal, interval) and ICC(2,k)."""

from bayesmeta.agreement.classical import agreement

__all__ = ["agreement"]
