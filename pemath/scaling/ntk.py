"""NTK-aware scaling: a larger base, static or driven by the sequence length."""

from __future__ import annotations

import math

import numpy as np

from .._frequencies import base_inv_freq
from .._validate import check_even_dim, check_int, check_real, check_seq_len
from ._base import RopeScaling

__all__ = ["NTK", "DynamicNTK"]


def _check_dim(dim: int) -> int:
    dim = check_even_dim("dim", dim)
    if dim <= 2:
        raise ValueError(
            f"dim must be > 2 for NTK-aware scaling (the base exponent is dim/(dim-2)), got {dim}"
        )
    return dim


def _scaled(base: float, ratio: float, dim: int, what: str) -> float:
    """``base * ratio ** (dim / (dim - 2))``, refusing overflow to inf."""
    try:
        out = base * ratio ** (dim / (dim - 2))
    except OverflowError:
        out = math.inf
    if not math.isfinite(out) or out <= 0:
        raise ValueError(
            f"the NTK-scaled base overflows float64 ({what}, base={base}, dim={dim}); "
            "the requested scaling is out of range"
        )
    return out


class NTK(RopeScaling):
    r"""Static NTK-aware scaling (not an HF ``rope_type``; HF's ``"dynamic"`` is :class:`DynamicNTK`).

    .. math:: b' = b \, s^{d/(d-2)}

    The base is chosen so that the lowest frequency :math:`b^{-(d-2)/d}` is divided
    by ``s`` while the highest (1) is unchanged.

    Parameters
    ----------
    factor : float
        ``s > 0``.

    Examples
    --------
    >>> import numpy as np
    >>> from pemath.scaling import NTK
    >>> np.round(NTK(4.0).inv_freq(4, 100.0), 6)   # lowest 0.1 -> 0.1 / 4
    array([1.   , 0.025])
    """

    rope_type = "ntk"

    def __init__(self, factor: float) -> None:
        self.factor = check_real("factor", factor, positive=True)

    def scaled_base(self, dim: int, base: float) -> float:
        """The enlarged base :math:`b s^{d/(d-2)}`."""
        dim = _check_dim(dim)
        base = check_real("base", base, positive=True)
        return _scaled(base, self.factor, dim, f"factor={self.factor}")

    def _inv_freq(self, dim: int, base: float, seq_len: int | None) -> np.ndarray:
        return base_inv_freq(dim, self.scaled_base(dim, base))


class DynamicNTK(RopeScaling):
    r"""Dynamic NTK scaling, Hugging Face's ``rope_type="dynamic"``.

    .. math::

        L = \max(\text{seq\_len}, L_0), \qquad
        b' = b \left(\frac{s L}{L_0} - (s - 1)\right)^{d/(d-2)}
           = b \left(1 + \frac{s (L - L_0)}{L_0}\right)^{d/(d-2)}

    (evaluated in the second form, which is exactly :math:`b` at :math:`L = L_0`). At
    ``seq_len <= L_0`` (and when ``seq_len`` is None) the frequencies are RoPE's own.

    HF's forward pass uses ``seq_len = max(position_ids) + 1``, and caches: it keeps
    the frequencies of the longest ``seq_len`` seen so far and only returns to the
    original ones when a sequence shorter than :math:`L_0` arrives. This class is
    stateless; pass the ``seq_len`` whose frequencies you want.

    Parameters
    ----------
    factor : float
        ``s > 0``.
    original_max_position : int
        ``L_0``, the context length the model was trained on (HF uses the config's
        ``max_position_embeddings``, not ``original_max_position_embeddings``).

    Examples
    --------
    >>> import numpy as np
    >>> from pemath.scaling import DynamicNTK
    >>> s = DynamicNTK(2.0, 1024)
    >>> s.scaled_base(4, 100.0, seq_len=512), s.scaled_base(4, 100.0, seq_len=2048)
    (100.0, 900.0)
    """

    length_dependent = True

    rope_type = "dynamic"

    def __init__(self, factor: float, original_max_position: int) -> None:
        self.factor = check_real("factor", factor, positive=True)
        self.original_max_position = check_int("original_max_position", original_max_position, minimum=1)

    def scaled_base(self, dim: int, base: float, seq_len: int | None = None) -> float:
        """The base used at sequence length ``seq_len``."""
        dim = _check_dim(dim)
        base = check_real("base", base, positive=True)
        seq_len = check_seq_len(seq_len)
        L0 = self.original_max_position
        if seq_len is None or seq_len <= L0:
            return base
        ratio = 1.0 + self.factor * (seq_len - L0) / L0
        return _scaled(base, ratio, dim, f"factor={self.factor}, seq_len={seq_len}")

    def _inv_freq(self, dim: int, base: float, seq_len: int | None) -> np.ndarray:
        return base_inv_freq(dim, self.scaled_base(dim, base, seq_len))
