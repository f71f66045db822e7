"""Tolerances of the numeric cross-checks, derived rather than picked.

pemath computes every phase ``p * w`` in float64 from a correctly rounded ``w``: the
product carries a relative error of at most ``2u`` (u = 2**-53, one rounding of ``w``
and one of the product), i.e. an absolute phase error of ``2u |p w|``; ``cos`` and
``sin`` add about ``u`` each (libm is faithful to within an ulp). A quantity
assembled from ``n`` such terms of size at most ``s`` is then off by at most
``n s (2u |p w| + 2u)`` plus ``n`` roundings of the sums. The helpers below state
that bound with a safety factor of 4 for the libm and accumulation constants.
"""

from __future__ import annotations

U64 = 2.0**-53

__all__ = ["U64", "phase_bound"]


def phase_bound(max_phase: float, *, terms: int = 1, scale: float = 1.0) -> float:
    """Bound on the float64 error of ``terms`` products of size ``scale`` with phases up to ``max_phase``."""
    return 4.0 * terms * scale * (2 * U64 * abs(max_phase) + 4 * U64)
