"""Exception and warning classes of pemath."""

from __future__ import annotations

__all__ = ["PrecisionWarning"]


class PrecisionWarning(UserWarning):
    """A requested computation loses precision beyond pemath's documented tolerance.

    Raised as a warning (never silently): positions larger than a dtype can hold
    exactly, a backend that cannot compute phases in float64, and the like.
    """
