r"""The teaching encodings that come before the sinusoid.

Introductions to positional encoding (e.g. "You could have designed state of the art
positional encoding", and Renard's "Positional Encodings of Attention Mechanisms, part
2") motivate the sinusoid by three naive encodings and their faults, and end with the
learned table of BERT and GPT-2:

* :func:`integer`: the position itself in every component; unbounded, it swamps the
  token embedding.
* :func:`normalized`: the position over the sequence length; bounded, but the same
  position gets a different vector in sequences of different lengths.
* :func:`binary`: the bits of the position; bounded and length-independent, but
  discontinuous.
* :class:`LearnedTable`: one trained row per position, and nothing beyond the last row.

Each function takes integer positions (a scalar, list, or integer array of any backend)
and returns ``positions.shape + (dim,)`` in float64 (or ``dtype``) in the namespace of
the positions (NumPy for Python input).
"""

from __future__ import annotations

import math
from typing import Any

from . import _compat
from ._validate import as_int64, as_real_table, check_int, check_size

__all__ = ["integer", "normalized", "binary", "LearnedTable"]

_MAX_EXACT_F64 = 2**53


def _int_positions(
    positions: Any, xp: Any = None, device: Any = None, *, owner: str = ""
) -> tuple[Any, Any, Any, int | None, int | None]:
    """(int64 array, namespace, device, min, max) of integer positions (min/max None if empty).

    Arrays keep their namespace and device; Python values go to ``xp``/``device``
    (default NumPy). Floats, bools and strings are refused, never truncated.
    """
    arr, xp, device = as_int64("positions", positions, xp=xp, device=device, meaning="integers (token indices)",
                               owner=owner or "x")
    if not math.prod(int(s) for s in arr.shape):
        return arr, xp, device, None, None
    lo, hi = int(xp.min(arr)), int(xp.max(arr))
    return arr, xp, device, lo, hi


def _check_range(lo: int | None, hi: int | None, limit: int | None, why: str) -> None:
    if lo is None:
        return
    if lo < 0:
        raise ValueError(f"positions must be >= 0, got {lo}")
    if limit is not None and hi >= limit:
        raise ValueError(f"positions must be < {why}, got {hi}")


def _finish(out: Any, dtype: Any, xp: Any) -> Any:
    return out if dtype is None else xp.astype(out, dtype)


def _check_dtype(dtype: Any, xp: Any) -> None:
    if dtype is not None and not _compat.is_real_floating(xp, dtype):
        raise TypeError(f"dtype must be a real floating dtype of {xp.__name__}, got {dtype!r}")


def integer(positions: Any, dim: int, *, dtype: Any = None) -> Any:
    r"""Every component equal to the position.

    .. math:: PE(p)_j = p, \qquad j = 0, \dots, d - 1

    Unbounded: at position 1000 it dwarfs token embeddings of order 1.

    Parameters
    ----------
    positions : int, list of int, or integer array
        ``>= 0``.
    dim : int
        ``>= 1``.
    dtype : optional
        A real floating dtype of the namespace (default float64).

    Examples
    --------
    >>> from pemath import pedagogy
    >>> pedagogy.integer([0, 3], 4)
    array([[0., 0., 0., 0.],
           [3., 3., 3., 3.]])
    """
    dim = check_size("dim", dim, minimum=1)
    pos, xp, _, lo, hi = _int_positions(positions)
    _check_dtype(dtype, xp)
    _check_range(lo, hi, _MAX_EXACT_F64 + 1, "2**53 + 1 (float64 is exact up to 2**53)")
    col = xp.astype(pos, xp.float64)[..., None]
    out = xp.broadcast_to(col, tuple(pos.shape) + (dim,))
    return _finish(xp.asarray(out, copy=True), dtype, xp)


def normalized(positions: Any, dim: int, *, length: int, dtype: Any = None) -> Any:
    r"""Every component equal to the position over the current sequence length.

    .. math:: PE(p)_j = p / L, \qquad 0 \le p < L

    Bounded in :math:`[0, 1)`, but the same position gets a different vector in a
    sequence of another length: ``normalized(2, d, length=4)`` is 0.5 everywhere,
    ``normalized(2, d, length=8)`` is 0.25.

    Parameters
    ----------
    positions : int, list of int, or integer array
        In ``[0, length)``.
    dim : int
        ``>= 1``.
    length : int
        :math:`L \ge 1`, the length of the current sequence (required).
    dtype : optional
        A real floating dtype of the namespace (default float64).

    Examples
    --------
    >>> from pemath import pedagogy
    >>> pedagogy.normalized([0, 1, 2, 3], 2, length=4)
    array([[0.  , 0.  ],
           [0.25, 0.25],
           [0.5 , 0.5 ],
           [0.75, 0.75]])
    """
    dim = check_size("dim", dim, minimum=1)
    length = check_int("length", length, minimum=1, maximum=_MAX_EXACT_F64)
    pos, xp, _, lo, hi = _int_positions(positions)
    _check_dtype(dtype, xp)
    _check_range(lo, hi, length, f"length = {length} (a sequence of that length has positions 0 .. {length - 1})")
    col = (xp.astype(pos, xp.float64) / float(length))[..., None]
    out = xp.broadcast_to(col, tuple(pos.shape) + (dim,))
    return _finish(xp.asarray(out, copy=True), dtype, xp)


def binary(positions: Any, dim: int, *, dtype: Any = None) -> Any:
    r"""The bits of the position, least significant first.

    .. math:: PE(p)_j = \lfloor p / 2^j \rfloor \bmod 2, \qquad 0 \le p < 2^d

    Component 0 flips at every step, component :math:`j` every :math:`2^j` steps: the
    discrete ancestor of the sinusoid's wavelengths.

    Parameters
    ----------
    positions : int, list of int, or integer array
        In ``[0, 2**dim)``: larger positions would need more bits than ``dim``.
    dim : int
        ``>= 1``, the number of bits.
    dtype : optional
        A real floating dtype of the namespace (default float64).

    Examples
    --------
    >>> from pemath import pedagogy
    >>> pedagogy.binary(252, 8)  # 252 = 0b11111100
    array([0., 0., 1., 1., 1., 1., 1., 1.])
    """
    dim = check_size("dim", dim, minimum=1)
    pos, xp, device, lo, hi = _int_positions(positions)
    _check_dtype(dtype, xp)
    _check_range(lo, hi, 2 ** min(dim, 64), f"2**dim = {2**dim} to fit in dim={dim} bits" if dim < 64 else "2**dim")
    nbits = min(dim, 63)  # non-negative int64 values have bits 0 .. 62 only (shifts >= 64 are undefined)
    shifts = xp.arange(nbits, dtype=xp.int64, device=device)
    bits = xp.bitwise_and(xp.bitwise_right_shift(pos[..., None], shifts), 1)
    out = xp.astype(bits, xp.float64)
    if dim > nbits:
        out = xp.concat([out, xp.zeros(tuple(pos.shape) + (dim - nbits,), dtype=xp.float64, device=device)], axis=-1)
    return _finish(out, dtype, xp)


class LearnedTable:
    r"""A learned absolute position table (BERT, GPT-2): row ``p`` is the encoding of position ``p``.

    .. math:: PE(p) = W_{p,:}, \qquad 0 \le p < N

    It has nothing to say about positions :math:`\ge N`: looking one up is an error,
    not a wrap-around or a clamp.

    Parameters
    ----------
    table : array or nested list
        Real, shape ``(N, dim)`` with ``N >= 1`` (e.g. HF GPT-2's ``wpe.weight``).
        Arrays keep their namespace, device and dtype; lists become float64 NumPy.

    Examples
    --------
    >>> import numpy as np
    >>> from pemath import pedagogy
    >>> pe = pedagogy.LearnedTable(np.arange(6.0).reshape(3, 2))
    >>> pe([2, 0])
    array([[4., 5.],
           [0., 1.]])
    >>> pe(3)
    Traceback (most recent call last):
    ...
    ValueError: learned table has 3 rows, position 3 is outside [0, 3)
    """

    def __init__(self, table: Any) -> None:
        table, xp = as_real_table("table", table, "a 2-D array (rows, dim)")
        if table.ndim != 2 or int(table.shape[0]) < 1 or int(table.shape[1]) < 1:
            raise ValueError(
                f"table must be 2-D (rows, dim) with at least one row and column, got shape {tuple(table.shape)}"
            )
        self._table = table
        self._xp = xp

    @property
    def table(self) -> Any:
        """The table, as given (not copied)."""
        return self._table

    @property
    def num_rows(self) -> int:
        """``N``: positions ``0 .. N - 1`` have a row."""
        return int(self._table.shape[0])

    @property
    def dim(self) -> int:
        return int(self._table.shape[1])

    def __repr__(self) -> str:
        return f"LearnedTable(rows={self.num_rows}, dim={self.dim}, dtype={self._table.dtype})"

    def lookup(self, positions: Any) -> Any:
        """The rows at ``positions``, shape ``positions.shape + (dim,)``, in the table's dtype."""
        xp, n = self._xp, self.num_rows
        device = _compat.device_of(self._table)
        pos, _, pdevice, lo, hi = _int_positions(positions, xp, device, owner="the table")
        if lo is not None and (lo < 0 or hi >= n):
            raise ValueError(f"learned table has {n} rows, position {lo if lo < 0 else hi} is outside [0, {n})")
        if pdevice != device:
            raise ValueError(f"positions are on device {pdevice!r} but the table is on {device!r}")
        rows = xp.take(self._table, xp.reshape(pos, (-1,)), axis=0)
        return xp.reshape(rows, tuple(pos.shape) + (self.dim,))

    __call__ = lookup
