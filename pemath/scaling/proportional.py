"""p-RoPE / proportional RoPE: keep a fraction of the highest frequencies, drop the rest."""

from __future__ import annotations

import numpy as np

from .._frequencies import base_inv_freq
from .._validate import check_even_dim, check_real
from ._base import RopeScaling

__all__ = ["Proportional"]


class Proportional(RopeScaling):
    r"""p-RoPE (Barbero et al. 2024), HF's ``rope_type="proportional"``.

    Of the ``d/2`` frequencies :math:`\theta_i = b^{-2i/d}` (exponents over the full
    rotary dim), the first ``k = floor(p d / 2)`` (the highest) are kept, the others
    set to 0, so those pairs are not rotated (NoPE). All are then divided by
    ``factor``. ``p = 1`` is RoPE, ``p = 0`` is NoPE.

    Parameters
    ----------
    fraction : float
        ``p`` in [0, 1].
    factor : float, optional
        Linear factor applied after truncation (HF's ``factor``, default 1).

    Examples
    --------
    >>> from pemath.scaling import Proportional
    >>> Proportional(0.5).inv_freq(8, 10000.0)
    array([1. , 0.1, 0. , 0. ])
    """

    rope_type = "proportional"

    def __init__(self, fraction: float, *, factor: float = 1.0) -> None:
        self.fraction = check_real("fraction", fraction, minimum=0.0, maximum=1.0)
        self.factor = check_real("factor", factor, positive=True)

    def kept_pairs(self, dim: int) -> int:
        """``int(p * dim // 2)``: the number of rotated (lowest-index, highest-frequency) pairs, as HF."""
        dim = check_even_dim("dim", dim)
        return int(self.fraction * dim // 2)

    def _inv_freq(self, dim: int, base: float, seq_len: int | None) -> np.ndarray:
        freq = np.array(base_inv_freq(dim, base))
        freq[self.kept_pairs(dim):] = 0.0
        return freq / self.factor
