r"""Position ids: from padding masks and packed sequences, and the exact range of a dtype.

Positions are what every encoding in pemath takes; these helpers build them the way
inference stacks do, and say how far a floating dtype can count exactly.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _compat
from ._dtypes import max_exact_position
from ._validate import MAX_LEN, check_int, show

__all__ = ["from_attention_mask", "from_cu_seqlens", "max_exact_position"]


def _as_array(name: str, value: Any) -> tuple[Any, Any]:
    """``value`` as an array of its own namespace (lists and tuples become NumPy)."""
    if _compat.is_array(value):
        return value, _compat.namespace(value)
    if isinstance(value, (list, tuple)):
        try:
            arr = np.asarray(value)
        except ValueError as exc:  # ragged
            raise ValueError(f"{name} must be a rectangular array, got {show(value)}") from exc
        if arr.dtype.kind not in "biu":
            raise TypeError(f"{name} must hold integers (or booleans), got {show(value)} (NumPy dtype {arr.dtype})")
        return arr, _compat.namespace(arr)
    raise TypeError(f"{name} must be an array (NumPy, CuPy, torch, ...) or a list, got {show(value)}")


def from_attention_mask(mask: Any, *, pad_value: int = 1) -> Any:
    r"""Position ids of a padded batch from its attention mask.

    .. math:: p_{b,t} = \Big(\sum_{s \le t} m_{b,s}\Big) - 1 \ \text{ where } m_{b,t} = 1,
              \qquad p_{b,t} = \text{pad\_value} \ \text{ where } m_{b,t} = 0

    the convention of HF transformers' ``generate`` (``position_ids =
    attention_mask.long().cumsum(-1) - 1`` then ``masked_fill_(attention_mask == 0, 1)``):
    the real tokens of each row count ``0, 1, 2, ...`` whether the row is left- or
    right-padded, and padded slots get ``pad_value`` (1 in HF; any value, since those
    slots are masked out of attention).

    Parameters
    ----------
    mask : array or list
        Shape ``(batch, seq)``, bool or integer, values 0 and 1 only (1 = real token).
    pad_value : int
        The position written at padded slots (default 1, HF's).

    Returns
    -------
    array
        int64, shape ``(batch, seq)``, in ``mask``'s namespace and device (NumPy for
        a list).

    Examples
    --------
    >>> from pemath import positions
    >>> positions.from_attention_mask([[0, 0, 1, 1, 1], [1, 1, 1, 1, 1]]).tolist()
    [[1, 1, 0, 1, 2], [0, 1, 2, 3, 4]]
    """
    arr, xp = _as_array("mask", mask)
    pad_value = check_int("pad_value", pad_value, minimum=-(2**63), maximum=2**63 - 1)  # stored as int64
    if arr.ndim != 2:
        raise ValueError(f"mask must be 2-D (batch, seq), got {show(mask)}")
    if not (arr.dtype == xp.bool or _compat.is_integer_dtype(xp, arr.dtype)):
        raise TypeError(f"mask must have a bool or integer dtype (1 = token, 0 = padding), got {show(mask)}")
    m = xp.astype(arr, xp.int64)
    if m.shape[0] * m.shape[1] and not bool(xp.all((m == 0) | (m == 1))):
        bad = int(xp.sum(xp.astype((m != 0) & (m != 1), xp.int64)))
        raise ValueError(f"mask must hold only 0 and 1, got {bad} other value(s) in {show(mask)}")
    pos = xp.cumulative_sum(m, axis=1) - 1
    fill = xp.full(pos.shape, pad_value, dtype=xp.int64, device=_compat.device_of(arr))
    return xp.where(m == 0, fill, pos)


def from_cu_seqlens(cu_seqlens: Any) -> Any:
    r"""Position ids of packed sequences from their cumulative lengths.

    flash-attn's varlen convention: ``cu_seqlens = [0, l_0, l_0 + l_1, ...]`` marks
    where each of the packed sequences starts; positions restart at 0 in each one:

    .. math:: p_t = t - \text{cu}_j \quad \text{for } \text{cu}_j \le t < \text{cu}_{j+1}

    Empty sequences (repeated entries) are allowed.

    Parameters
    ----------
    cu_seqlens : array or list
        1-D, integer, starting at 0, non-decreasing.

    Returns
    -------
    array
        int64, shape ``(cu_seqlens[-1],)``, in ``cu_seqlens``' namespace and device.

    Examples
    --------
    >>> from pemath import positions
    >>> positions.from_cu_seqlens([0, 3, 5, 5, 6]).tolist()
    [0, 1, 2, 0, 1, 0]
    """
    arr, xp = _as_array("cu_seqlens", cu_seqlens)
    if arr.ndim != 1 or arr.shape[0] < 1:
        raise ValueError(f"cu_seqlens must be 1-D and non-empty ([0, l0, l0 + l1, ...]), got {show(cu_seqlens)}")
    if arr.dtype == xp.bool or not _compat.is_integer_dtype(xp, arr.dtype):
        raise TypeError(f"cu_seqlens must have an integer dtype, got {show(cu_seqlens)}")
    cu = xp.astype(arr, xp.int64)
    first = int(cu[0])
    if first != 0:
        raise ValueError(f"cu_seqlens must start at 0, got cu_seqlens[0] = {first}")
    n = int(cu.shape[0])
    if n > 1:
        steps = cu[1:] - cu[:-1]
        if not bool(xp.all(steps >= 0)):
            k = int(xp.argmax(xp.astype(steps < 0, xp.int8)))
            raise ValueError(
                f"cu_seqlens must be non-decreasing (cumulative lengths), got cu_seqlens[{k + 1}] = "
                f"{int(cu[k + 1])} < cu_seqlens[{k}] = {int(cu[k])}"
            )
    total = int(cu[-1])
    if total > MAX_LEN:
        raise ValueError(
            f"cu_seqlens ends at {total} tokens, beyond pemath's limit for sequence lengths ({MAX_LEN}); "
            "the result would hold one position per token"
        )
    device = _compat.device_of(arr)
    t = xp.arange(total, dtype=xp.int64, device=device)
    seg = xp.searchsorted(cu, t, side="right") - 1
    return t - xp.take(cu, xp.astype(seg, xp.int64), axis=0)


# max_exact_position lives with the rest of the dtype knowledge (pemath._dtypes); it is public here.
