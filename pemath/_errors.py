"""Exception and warning classes of pemath."""

from __future__ import annotations

__all__ = ["PrecisionWarning", "InexactPositionsWarning", "TablePrecisionWarning", "VacuousToleranceWarning", "GGUFWarning"]


class PrecisionWarning(UserWarning):
    """A requested computation loses precision beyond pemath's documented tolerance.

    Raised as a warning (never silently): positions larger than a dtype can hold
    exactly, a backend that cannot compute phases in float64, and the like. The
    subclasses below name the specific cases, so that each can be filtered alone
    (``warnings.simplefilter("error", pemath.InexactPositionsWarning)``).
    """


class InexactPositionsWarning(PrecisionWarning):
    """Positions beyond the range of integers their dtype holds exactly.

    Emitted when floating positions (float16, bfloat16, float32, ...) reach a
    magnitude above :func:`pemath.positions.max_exact_position` of their dtype
    (2048, 256, 2**24, ...), where consecutive integer positions may already have
    merged before pemath received them; and when positions are converted to such a
    dtype on the way (a backend without float64 computes phases in float32; the
    emulated pipelines of :mod:`pemath.testing.pipelines` cast position ids to
    float32, as the originals do).
    """


class TablePrecisionWarning(PrecisionWarning):
    """A table requested in a dtype it cannot be delivered in to its documented accuracy.

    pemath's cos/sin and sinusoidal tables are computed in float64 and rounded once to
    the requested dtype: their error is at most that dtype's unit roundoff at every
    position, so no warning is due. Where a backend cannot compute float64, the phases
    are computed in float32, and their rounding error grows with the phase: once it
    exceeds the unit roundoff of the requested dtype, the table is not accurate to its
    dtype, and this warning says so (``docs/tolerance.rst``, "Precision warnings").
    """


class VacuousToleranceWarning(PrecisionWarning):
    """A derived tolerance of :mod:`pemath.testing` under which some elements cannot fail.

    At very long positions the honest float32 phase is uncertain by so much that the
    derived tolerance of an element admits every value the element could take (any
    point of the circle a rotated pair lies on; any value in [-1, 1] for a sinusoid).
    Such an element is not checked at all; the assert passing says nothing about it.
    """


class GGUFWarning(UserWarning):
    """A GGUF file holds RoPE data that llama.cpp's code for its architecture does not read.

    :func:`pemath.rope.from_gguf` returns what llama.cpp computes, so that data is left out
    of the returned Spec too; the warning says which tensor or key, and why.
    """
