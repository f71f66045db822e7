"""LongRoPE (Phi-3): per-frequency rescale factors, short or long by sequence length."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._frequencies import base_inv_freq
from .._validate import as_float_array, check_int, check_real
from ._base import RopeScaling

__all__ = ["LongRoPE"]


class LongRoPE(RopeScaling):
    r"""LongRoPE scaling as Hugging Face computes it (``rope_type="longrope"``).

    .. math::

        \theta_i' = \frac{\theta_i}{f_i}, \qquad
        f = \begin{cases} \text{long\_factor} & \text{seq\_len} > L_0 \\
                          \text{short\_factor} & \text{otherwise (and seq\_len None)} \end{cases}

    The attention factor is ``attention_factor`` if given, else
    :math:`\sqrt{1 + \ln s / \ln L_0}` for :math:`s > 1` (1 otherwise), with
    ``s = factor`` or, without it, ``max_position / original_max_position`` (Phi-3).

    Parameters
    ----------
    short_factor, long_factor : sequence of float
        One positive factor per rotary pair (``rotary_dim // 2`` each).
    original_max_position : int
        ``L_0``, the pre-training context length.
    factor : float, optional
        The context extension ratio ``s``.
    max_position : int, optional
        The extended context; gives ``s = max_position / original_max_position`` when
        ``factor`` is not given.
    attention_factor : float, optional
        Overrides the derived attention factor.
    short_attention_factor : float, optional
        A different attention factor for the short regime (``seq_len <= L_0`` or
        None): PhiMoE's ``short_mscale``, with ``attention_factor`` its ``long_mscale``.
        :attr:`attention_factor` stays the long one; :meth:`attention_factor_at` gives
        the factor of a regime.

    Examples
    --------
    >>> from pemath.scaling import LongRoPE
    >>> s = LongRoPE([1.0, 1.0], [2.0, 4.0], 4096, factor=32.0)
    >>> s.inv_freq(4, 100.0), s.inv_freq(4, 100.0, seq_len=8192)
    (array([1. , 0.1]), array([0.5  , 0.025]))
    >>> round(s.attention_factor ** 2, 12)    # 1 + ln 32 / ln 4096 = 17/12
    1.416666666667
    """

    length_dependent = True

    rope_type = "longrope"

    def __init__(
        self,
        short_factor: Sequence[float],
        long_factor: Sequence[float],
        original_max_position: int,
        *,
        factor: float | None = None,
        max_position: int | None = None,
        attention_factor: float | None = None,
        short_attention_factor: float | None = None,
    ) -> None:
        self.short_factor = as_float_array("short_factor", short_factor, positive=True)
        self.long_factor = as_float_array("long_factor", long_factor, positive=True)
        if self.short_factor.shape != self.long_factor.shape:
            raise ValueError(
                "short_factor and long_factor must have the same length (one per rotary pair), got "
                f"{self.short_factor.shape[0]} and {self.long_factor.shape[0]}"
            )
        self.original_max_position = check_int("original_max_position", original_max_position, minimum=1)
        self.factor = None if factor is None else check_real("factor", factor, positive=True)
        self.max_position = None if max_position is None else check_int("max_position", max_position, minimum=1)
        af = None if attention_factor is None else check_real("attention_factor", attention_factor, positive=True)
        self._attention_factor = af
        self.short_attention_factor = (
            None
            if short_attention_factor is None
            else check_real("short_attention_factor", short_attention_factor, positive=True)
        )
        if af is None and self.factor is None and self.max_position is None:
            raise ValueError(
                "LongRoPE needs factor, max_position or attention_factor to fix its attention factor; got none"
            )
        s = self.factor if self.factor is not None else (self.max_position or 1) / self.original_max_position
        if af is None and s > 1.0 and self.original_max_position < 2:
            raise ValueError(
                f"original_max_position must be >= 2 to derive the attention factor sqrt(1 + ln s / "
                f"ln original_max_position) (s = {s}); got {self.original_max_position}: pass attention_factor"
            )

    @property
    def attention_factor(self) -> float:
        if self._attention_factor is not None:
            return self._attention_factor
        s = self.factor if self.factor is not None else self.max_position / self.original_max_position
        if s <= 1.0:
            return 1.0
        return math.sqrt(1 + math.log(s) / math.log(self.original_max_position))

    def _fields(self) -> dict[str, Any]:
        fields = super()._fields()
        if fields.get("short_attention_factor") is None:  # the common case (Phi-3): one attention factor
            fields.pop("short_attention_factor", None)
        return fields

    def attention_factor_at(self, seq_len: int | None = None) -> float:
        long = self._long(seq_len)
        if self.short_attention_factor is not None and not long:
            return self.short_attention_factor
        return self.attention_factor

    def _long(self, seq_len: int | None) -> bool:
        from .._validate import check_seq_len

        seq_len = check_seq_len(seq_len)
        return seq_len is not None and seq_len > self.original_max_position

    def _inv_freq(self, dim: int, base: float, seq_len: int | None) -> np.ndarray:
        n = dim // 2
        if self.short_factor.shape[0] != n:
            raise ValueError(
                f"short_factor and long_factor have {self.short_factor.shape[0]} entries, but dim "
                f"(the rotary dim) {dim} has {n} pairs: they need one entry per pair"
            )
        ext = self.long_factor if self._long(seq_len) else self.short_factor
        return base_inv_freq(dim, base) / ext
