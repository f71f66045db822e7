r"""Where a derived tolerance cannot fail: the oracle says so instead of passing silently.

The derived tolerance of an element grows with its phase (the honest float32 phase's
own uncertainty, ``_core/tolerance.py``). At very long positions it can admit every value the
element could take at all, whatever the phase:

* a rotated RoPE element with truth :math:`t` lies, for any phase, in
  :math:`[-|a|\rho, |a|\rho]`, where :math:`\rho = \sqrt{x_a^2 + x_b^2} > 0` is the
  magnitude of its pair and :math:`a` the attention factor; every such value is within
  :math:`\tau` of :math:`t` exactly when :math:`\tau \ge |a|\rho + |t|`;
* a sinusoidal entry lies in :math:`[-1, 1]`: vacuous exactly when :math:`\tau \ge 1 + |t|`.

Such an element is *vacuous*: a kernel with any phase there (a wrong position, a wrong
frequency) passes. The asserts then emit a :class:`~pemath.VacuousToleranceWarning`
naming how many elements, the first position and pair, and what to do. Elements of a
zero pair (:math:`\rho = 0`), pass-through features and the zero column of a
tensor2tensor table have a tolerance that still constrains them and are never vacuous.
"""

from __future__ import annotations

import numpy as np

from ... import _precision
from ..._errors import VacuousToleranceWarning

__all__ = ["warn_vacuous"]


def warn_vacuous(vacuous: np.ndarray, index: np.ndarray, pos: np.ndarray, freq: np.ndarray, what: str,
                 shape: tuple[int, ...]) -> None:
    """Emit a :class:`~pemath.VacuousToleranceWarning` when any element is vacuous.

    ``vacuous`` is ``(N, k)``, ``index`` the frequency index of each of the ``k``
    columns, ``pos`` the ``(N,)`` positions, ``shape`` the user's array shape (for the
    element's index).
    """
    count = int(np.count_nonzero(vacuous))
    if not count:
        return
    rows, cols = np.nonzero(vacuous)
    first = int(np.argmin(np.abs(pos[rows])))  # the vacuous element at the shortest position
    row, col = int(rows[first]), int(cols[first])
    i = int(index[col])
    p = float(pos[row])
    where = np.unravel_index(row * vacuous.shape[1] + col, shape)
    where_text = tuple(int(v) for v in where)
    p_text = str(int(p)) if p.is_integer() else repr(p)
    _precision.warn(
        f"the derived tolerance cannot fail at {count} of {vacuous.size} elements of {what}: from position "
        f"{p_text} (element {where_text}, frequency index {i}, phase {abs(p * float(freq[i])):.6g} rad), an honest "
        "float32 phase is uncertain by so much that the tolerance admits every value the element can take, so "
        "these elements are not checked at all. Check shorter positions as well (the allowance grows with the "
        "phase), or give rtol and atol to choose the tolerance yourself; see docs/tolerance.rst, "
        "'Precision warnings'",
        VacuousToleranceWarning,
    )
