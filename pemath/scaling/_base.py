"""The interface every RoPE scaling variant implements."""

from __future__ import annotations

import abc
import functools
from typing import Any

import numpy as np

from .._validate import check_even_dim, check_real, check_seq_len

__all__ = ["RopeScaling"]


class RopeScaling(abc.ABC):
    """A change of RoPE's per-pair frequencies (and optionally an attention factor).

    Subclasses are immutable value objects: equal parameters compare equal and hash
    equal, and attributes cannot be reassigned after construction. ``inv_freq``
    validates its arguments and returns float64 NumPy frequencies; the rotation code
    turns them into arrays of whatever backend the activations live on.

    A subclass implements :meth:`_inv_freq` (called with validated arguments).
    """

    #: HF's ``rope_type`` name of this variant.
    rope_type: str = ""
    #: whether the frequencies depend on the sequence length (dynamic NTK, LongRoPE): with ``seq_len=None``,
    #: pemath's RoPE functions and oracle use transformers' forward length ``max(positions) + 1``
    length_dependent: bool = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "__init__" in cls.__dict__:
            init = cls.__dict__["__init__"]

            @functools.wraps(init)
            def frozen_init(self: RopeScaling, *args: Any, **kw: Any) -> None:
                object.__setattr__(self, "_RopeScaling__frozen", False)
                init(self, *args, **kw)
                if type(self) is cls:  # the most derived __init__ freezes
                    object.__setattr__(self, "_RopeScaling__frozen", True)

            cls.__init__ = frozen_init  # type: ignore[method-assign]

    def __setattr__(self, name: str, value: Any) -> None:
        if self.__dict__.get("_RopeScaling__frozen", False):
            raise AttributeError(
                f"{type(self).__name__} is immutable (it is hashed and compared by value); "
                f"build a new instance instead of setting {name!r}"
            )
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable; cannot delete {name!r}")

    @property
    def attention_factor(self) -> float:
        """The factor that multiplies cos and sin (1.0 where the variant has none)."""
        return 1.0

    def attention_factor_at(self, seq_len: int | None = None) -> float:
        """The attention factor in force at ``seq_len`` (only PhiMoE's LongRoPE changes it with the regime)."""
        check_seq_len(seq_len)
        return self.attention_factor

    def inv_freq(self, dim: int, base: float, *, seq_len: int | None = None) -> np.ndarray:
        """The ``dim // 2`` scaled inverse frequencies for rotary dimension ``dim``.

        Parameters
        ----------
        dim : int
            The rotary dimension (even, >= 2).
        base : float
            RoPE's base (HF's ``rope_theta``), > 0.
        seq_len : int, optional
            Matters only to the variants driven by the sequence length
            (:class:`DynamicNTK`, :class:`LongRoPE`); ``None`` means "at most the
            original context", the state Hugging Face initialises a model in.

        Returns
        -------
        numpy.ndarray
            float64, shape ``(dim // 2,)``.
        """
        dim = check_even_dim("dim", dim)
        base = check_real("base", base, positive=True)
        seq_len = check_seq_len(seq_len)
        # extreme parameters (factor 5e-324, say) overflow: reported below as one clear error,
        # not as a NumPy RuntimeWarning followed by infinities
        with np.errstate(over="ignore", divide="ignore", invalid="ignore", under="ignore"):
            freq = np.asarray(self._inv_freq(dim, base, seq_len), dtype=np.float64)
        if freq.shape != (dim // 2,) or not np.all(np.isfinite(freq)) or np.any(freq < 0):
            raise ValueError(
                f"{self!r} gives non-finite or negative frequencies for dim={dim}, base={base}, "
                f"seq_len={seq_len}: its parameters are out of range (an extreme factor?)"
            )
        return freq

    @abc.abstractmethod
    def _inv_freq(self, dim: int, base: float, seq_len: int | None) -> np.ndarray:
        """The frequencies, for already validated ``dim``, ``base`` and ``seq_len``."""

    def _fields(self) -> dict[str, Any]:
        return {k.lstrip("_"): v for k, v in self.__dict__.items() if not k.startswith("_RopeScaling__")}

    def _params(self) -> tuple[Any, ...]:
        return tuple(tuple(v.tolist()) if isinstance(v, np.ndarray) else v for v in self._fields().values())

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self._params() == other._params()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self).__name__, self._params()))

    def __repr__(self) -> str:
        items = ", ".join(
            f"{k}={v.tolist() if isinstance(v, np.ndarray) else v!r}" for k, v in self._fields().items()
        )
        return f"{type(self).__name__}({items})"
