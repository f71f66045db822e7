"""Exact SymPy derivations of the properties of positional encodings.

Symbols carry assumptions, constants are Rational, and every step is decided: a
difference reduces to exactly zero or the derivation raises :class:`ProofFailure`.
"""

from ._decide import CERTIFICATES, PARTS, ROLES, Derivation, ProofFailure, Step, reduce_to_zero

__all__ = ["CERTIFICATES", "PARTS", "ROLES", "Derivation", "ProofFailure", "Step", "reduce_to_zero"]
