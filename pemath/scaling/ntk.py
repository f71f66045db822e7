"""NTK-aware scaling: a larger base, static or driven by the sequence length."""

from __future__ import annotations

import numpy as np

from .._frequencies import base_inv_freq
from .._validate import check_int, check_real
from ._base import RopeScaling

__all__ = ["NTK", "DynamicNTK"]


def _check_dim(dim: int) -> None:
    if dim <= 2:
        raise ValueError(
            f"NTK-aware scaling needs a rotary dim > 2 (the exponent is dim/(dim-2)), got {dim}"
        )


class NTK(RopeScaling):
    r"""Static NTK-aware scaling.

    .. math:: b' = b \, s^{d/(d-2)}

    The base is chosen so that the lowest frequency :math:`b^{-(d-2)/d}` is divided
    by ``s`` while the highest (1) is unchanged.

    Parameters
    ----------
    factor : float
        ``s > 0``.
    """

    rope_type = "ntk"

    def __init__(self, factor: float) -> None:
        self.factor = check_real("factor", factor, positive=True)

    def scaled_base(self, dim: int, base: float) -> float:
        _check_dim(dim)
        return base * self.factor ** (dim / (dim - 2))

    def inv_freq(self, dim: int, base: float, *, seq_len: int | None = None) -> np.ndarray:
        return base_inv_freq(dim, self.scaled_base(dim, base))


class DynamicNTK(RopeScaling):
    r"""Dynamic NTK scaling, Hugging Face's ``rope_type="dynamic"``.

    .. math::

        L = \max(\text{seq\_len}, L_0), \qquad
        b' = b \left(\frac{s L}{L_0} - (s - 1)\right)^{d/(d-2)}

    At ``seq_len <= L_0`` (and when ``seq_len`` is None) the frequencies are RoPE's own.
    HF's forward pass uses ``seq_len = max(position_ids) + 1``.

    Parameters
    ----------
    factor : float
        ``s > 0``.
    original_max_position : int
        ``L_0``, the context length the model was trained on (HF's
        ``max_position_embeddings``).
    """

    rope_type = "dynamic"

    def __init__(self, factor: float, original_max_position: int) -> None:
        self.factor = check_real("factor", factor, positive=True)
        self.original_max_position = check_int("original_max_position", original_max_position, minimum=1)

    def scaled_base(self, dim: int, base: float, seq_len: int | None = None) -> float:
        _check_dim(dim)
        L0 = self.original_max_position
        L = L0 if seq_len is None else max(int(seq_len), L0)
        return base * ((self.factor * L / L0) - (self.factor - 1)) ** (dim / (dim - 2))

    def inv_freq(self, dim: int, base: float, *, seq_len: int | None = None) -> np.ndarray:
        return base_inv_freq(dim, self.scaled_base(dim, base, seq_len))
