"""The proof checker: the only code pemath trusts to decide a mathematical step.

It is small on purpose (the de Bruijn criterion): it imports no SymPy and no other simplifier, only the
standard library (``fractions``) and mpmath's interval context. Terms are its own (:mod:`.terms`); a term's
normal form is a polynomial over the rationals in its atoms (:mod:`.poly`); the facts it knows about functions
are a short table of relations with side conditions (:mod:`.rules`); closed inequalities are decided by
outward-rounded enclosures (:mod:`.interval`); :func:`check` verifies a certificate for a proposition and only
then returns a :class:`Theorem` (:mod:`.check`). Every check has its cost bounded before it starts.

SymPy proposes (``pemath.symbolic.bridge`` translates formulas and finds cofactors); this package disposes.
"""

from .check import MAX_CASES, RELATIONS, Theorem, check, defined, same, well_formed
from .terms import SORTS, KernelError, from_json, show, to_json

__all__ = ["check", "Theorem", "KernelError", "well_formed", "defined", "same", "SORTS", "RELATIONS", "MAX_CASES",
           "from_json", "to_json", "show", "size"]
