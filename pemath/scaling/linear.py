"""Position interpolation (Chen et al. 2023): every frequency divided by the factor."""

from __future__ import annotations

import numpy as np

from .._frequencies import base_inv_freq
from .._validate import check_real
from ._base import RopeScaling

__all__ = ["Linear"]


class Linear(RopeScaling):
    r"""Linear scaling / position interpolation.

    .. math:: \theta_i' = \theta_i / s

    equivalent to dividing every position by ``s`` (HF divides ``inv_freq``; the
    paper divides positions: the phases are identical).

    Parameters
    ----------
    factor : float
        ``s > 0``; ``s > 1`` stretches the context by ``s``.

    Examples
    --------
    >>> import numpy as np
    >>> from pemath.scaling import Linear
    >>> Linear(4.0).inv_freq(4, 100.0)
    array([0.25 , 0.025])
    """

    rope_type = "linear"

    def __init__(self, factor: float) -> None:
        self.factor = check_real("factor", factor, positive=True)

    def _inv_freq(self, dim: int, base: float, seq_len: int | None) -> np.ndarray:
        return base_inv_freq(dim, base) / self.factor
