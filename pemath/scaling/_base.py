"""The interface every RoPE scaling variant implements."""

from __future__ import annotations

import abc
from typing import Any

import numpy as np

__all__ = ["RopeScaling"]


class RopeScaling(abc.ABC):
    """A change of RoPE's per-pair frequencies (and optionally an attention factor).

    Subclasses are immutable value objects: equal parameters compare equal and hash
    equal. ``inv_freq`` returns float64 NumPy frequencies; the rotation code turns
    them into arrays of whatever backend the activations live on.
    """

    #: HF's ``rope_type`` name of this variant.
    rope_type: str = ""

    @property
    def attention_factor(self) -> float:
        """The factor that multiplies cos and sin (1.0 where the variant has none)."""
        return 1.0

    @abc.abstractmethod
    def inv_freq(self, dim: int, base: float, *, seq_len: int | None = None) -> np.ndarray:
        """The ``dim // 2`` scaled inverse frequencies for rotary dimension ``dim``.

        ``seq_len`` matters only to the variants driven by the sequence length
        (:class:`DynamicNTK`, :class:`LongRoPE`); ``None`` means "at most the original
        context", the state Hugging Face initialises a model in.
        """

    def _params(self) -> tuple[Any, ...]:
        return tuple(
            tuple(v) if isinstance(v, np.ndarray) else v for v in self.__dict__.values()
        )

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self._params() == other._params()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self).__name__, self._params()))

    def __repr__(self) -> str:
        items = ", ".join(
            f"{k}={list(v) if isinstance(v, np.ndarray) else v!r}" for k, v in self.__dict__.items()
        )
        return f"{type(self).__name__}({items})"
