"""Agreement between raters: Krippendorff's alpha and ICC(2,k) (:func:`agreement`), and the
toolkit of chance-corrected coefficients and ICC forms (:func:`agreement_coefficients`)
and their paired differences between traits or panels (:func:`compare_agreement`), and
coefficient omega of ordinal indicators from a CFA (:func:`omega_ordinal`)."""

from bayesmeta.agreement.classical import agreement
from bayesmeta.agreement.coefficients import agreement_coefficients
from bayesmeta.agreement.comparison import compare_agreement
from bayesmeta.agreement.omega import omega_ordinal

__all__ = ["agreement", "agreement_coefficients", "compare_agreement", "omega_ordinal"]
