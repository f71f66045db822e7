"""Llama 3.1's frequency-dependent scaling (NTK-by-parts in wavelength form)."""

from __future__ import annotations

import math

import numpy as np

from .._frequencies import base_inv_freq
from .._validate import check_int, check_real
from ._base import RopeScaling

__all__ = ["Llama3"]


class Llama3(RopeScaling):
    r"""Llama 3.1 scaling (Meta's ``apply_scaling``; HF ``rope_type="llama3"``).

    With wavelength :math:`\lambda_i = 2\pi/\theta_i`, :math:`\lambda_{hi} = L_0/h`,
    :math:`\lambda_{lo} = L_0/l`:

    .. math::

        \theta_i' = \begin{cases}
            \theta_i & \lambda_i < \lambda_{hi} \\
            \theta_i / s & \lambda_i > \lambda_{lo} \\
            (1-\gamma)\,\theta_i/s + \gamma\,\theta_i,\;
            \gamma = \dfrac{L_0/\lambda_i - l}{h - l} & \text{otherwise}
        \end{cases}

    Parameters
    ----------
    factor : float
        ``s > 0`` (8 for Llama 3.1).
    original_max_position : int
        ``L_0`` (8192 for Llama 3.1).
    low_freq_factor, high_freq_factor : float
        ``l <= h`` (1 and 4 for Llama 3.1). ``l == h`` (Llama 4 Scout: both 1) leaves
        no smoothing band: wavelengths below :math:`L_0/h` keep their frequency, the
        rest are divided by ``s`` (HF computes the same, its empty band aside).

    Examples
    --------
    >>> import numpy as np
    >>> from pemath.scaling import Llama3
    >>> f = Llama3(8.0, 8192).inv_freq(128, 500000.0)
    >>> ratio = f / (500000.0 ** (-np.arange(0, 128, 2) / 128))
    >>> int(np.sum(np.isclose(ratio, 1.0))), int(np.sum(np.isclose(ratio, 1 / 8)))
    (29, 29)
    """

    rope_type = "llama3"

    def __init__(
        self,
        factor: float,
        original_max_position: int,
        *,
        low_freq_factor: float = 1.0,
        high_freq_factor: float = 4.0,
    ) -> None:
        self.factor = check_real("factor", factor, positive=True)
        self.original_max_position = check_int("original_max_position", original_max_position, minimum=1)
        self.low_freq_factor = check_real("low_freq_factor", low_freq_factor, positive=True)
        self.high_freq_factor = check_real("high_freq_factor", high_freq_factor, positive=True)
        if not self.low_freq_factor <= self.high_freq_factor:
            raise ValueError(
                "low_freq_factor must be <= high_freq_factor (the smoothing band runs from the one to the "
                f"other), got low_freq_factor={self.low_freq_factor}, "
                f"high_freq_factor={self.high_freq_factor}"
            )

    def _inv_freq(self, dim: int, base: float, seq_len: int | None) -> np.ndarray:
        freq = base_inv_freq(dim, base)
        L0, s = float(self.original_max_position), self.factor
        lo, hi = self.low_freq_factor, self.high_freq_factor
        wavelen = 2 * math.pi / freq
        if lo == hi:  # no smoothing band
            return np.where(wavelen < L0 / hi, freq, freq / s)
        smooth = (L0 / wavelen - lo) / (hi - lo)
        out = np.where(
            wavelen < L0 / hi,
            freq,
            np.where(wavelen > L0 / lo, freq / s, (1 - smooth) * freq / s + smooth * freq),
        )
        return out
