"""Argument validation shared by every public function.

Each checker raises ``TypeError`` (wrong kind of value) or ``ValueError`` (right kind,
wrong value) with a message that names the argument, shows what was given and says
what is allowed.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable
from typing import Any

import numpy as np

from . import _compat, _precision

__all__ = [
    "show",
    "check_int",
    "check_real",
    "check_choice",
    "check_bool",
    "check_even_dim",
    "check_size",
    "MAX_DIM",
    "MAX_LEN",
    "check_rotary_dim",
    "check_seq_len",
    "as_positions",
    "check_not_traced",
    "as_float_array",
    "as_real_table",
    "as_int64",
]

_MAX_EXACT_F64 = 2**53


def show(value: Any) -> str:
    """A short description of ``value`` for an error message."""
    if not isinstance(value, type) and _compat.is_array(value):
        shape = tuple(getattr(value, "shape", ()))
        return f"an array of shape {shape} and dtype {getattr(value, 'dtype', '?')}"
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{text} ({type(value).__name__})"


def check_bool(name: str, value: Any) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {show(value)}")
    return bool(value)


def check_int(name: str, value: Any, *, minimum: int | None = None, maximum: int | None = None) -> int:
    """An integer (Python or NumPy, never bool or float) within [minimum, maximum]."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {show(value)}")
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {value}")
    return value


def check_real(
    name: str,
    value: Any,
    *,
    positive: bool = False,
    nonnegative: bool = False,
    minimum: float | None = None,
    maximum: float | None = None,
    finite: bool = True,
) -> float:
    """A finite real number (int or float, never bool or complex) as a float."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {show(value)}")
    out = float(value)
    if finite and not math.isfinite(out):
        raise ValueError(f"{name} must be finite, got {out}")
    if positive and not out > 0:
        raise ValueError(f"{name} must be > 0, got {out}")
    if nonnegative and not out >= 0:
        raise ValueError(f"{name} must be >= 0, got {out}")
    if minimum is not None and out < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {out}")
    if maximum is not None and out > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {out}")
    return out


def check_choice(name: str, value: Any, choices: Iterable[str]) -> str:
    choices = tuple(choices)
    allowed = ", ".join(repr(c) for c in choices)
    if not isinstance(value, str):
        raise TypeError(f"{name} must be one of {allowed}, got {show(value)}")
    if value not in choices:
        raise ValueError(f"{name} must be one of {allowed}, got {value!r}")
    return value


#: The largest dimension, head count or bucket count pemath accepts: far beyond any model
#: (head dims <= 1024, model dims <= 65536), and small enough that the work done per entry
#: (one correctly rounded mpmath frequency each, exact fractions for ALiBi slopes) ends in
#: seconds. A larger value is almost surely a wrong argument (a length passed as a dim).
MAX_DIM = 2**20

#: The largest sequence length pemath materialises (query/key lengths of a bias table).
MAX_LEN = 2**31 - 1


def check_size(name: str, value: Any, *, minimum: int = 1, maximum: int = MAX_DIM) -> int:
    """An integer count in [minimum, maximum] (``MAX_DIM`` by default), with a message saying why the cap."""
    n = check_int(name, value, minimum=minimum)
    if n > maximum:
        what = "dimensions, head and bucket counts" if maximum == MAX_DIM else "sequence lengths"
        raise ValueError(
            f"{name} must be <= {maximum} (pemath's limit for {what}; far beyond any model), got {n}"
        )
    return n


def check_even_dim(name: str, value: Any) -> int:
    dim = check_size(name, value, minimum=2)
    if dim % 2:
        raise ValueError(f"{name} must be even (features are rotated in pairs), got {dim}")
    return dim


def check_rotary_dim(
    rotary_dim: Any, dim: int, *, dim_name: str = "the feature dimension", allow_empty: bool = False
) -> int:
    """rotary_dim: None (all of ``dim``, which must then be even) or an even int in [2, dim].

    ``allow_empty``: a feature axis of length 0 is fine (a pure permutation), else at least
    one pair is needed.
    """
    if rotary_dim is None:
        if dim < 2 and not (allow_empty and dim == 0):
            raise ValueError(f"{dim_name} must be >= 2 for RoPE (at least one rotated pair), got {dim}")
        if dim % 2:
            raise ValueError(
                f"{dim_name} must be even for RoPE, got {dim} (features are rotated in pairs); "
                "pass rotary_dim to rotate only an even-sized leading slice"
            )
        return dim
    r = check_int("rotary_dim", rotary_dim)
    if r <= 0 or r > dim or r % 2:
        raise ValueError(f"rotary_dim must be an even integer in [2, {dim}] ({dim_name} is {dim}), got {r}")
    return r


def check_seq_len(seq_len: Any) -> int | None:
    if seq_len is None:
        return None
    return check_int("seq_len", seq_len, minimum=1)


def as_float_array(name: str, values: Any, *, length: int | None = None, positive: bool = False) -> np.ndarray:
    """A 1-D float64 NumPy array from a list or array of real numbers, finite, optionally of given length."""
    if isinstance(values, (str, bytes)) or values is None:
        raise TypeError(f"{name} must be a sequence of real numbers, got {show(values)}")
    try:
        arr = np.asarray(_compat.to_numpy(values) if _compat.is_array(values) else list(values))
    except TypeError as exc:
        raise TypeError(f"{name} must be a sequence of real numbers, got {show(values)}") from exc
    if arr.dtype.kind not in "iuf" or arr.ndim != 1:
        raise TypeError(f"{name} must be a 1-D sequence of real numbers, got {show(values)}")
    arr = arr.astype(np.float64)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must hold finite numbers, got {show(values)}")
    if positive and not np.all(arr > 0):
        raise ValueError(f"{name} must hold numbers > 0, got {show(values)}")
    if length is not None and arr.shape[0] != length:
        raise ValueError(f"{name} must have {length} entries, got {arr.shape[0]}")
    arr.setflags(write=False)
    return arr


def as_int64(
    name: str, value: Any, *, xp: Any = None, device: Any = None, meaning: str = "integers", owner: str = "x"
) -> tuple[Any, Any, Any]:
    """``(int64 array, namespace, device)`` from an integer array or Python ints / nested lists.

    Arrays keep their namespace and device (and must share ``xp`` when it is given, the
    namespace of ``owner``); Python values go to ``xp``/``device`` (default NumPy).
    Floats, bools and strings are refused, never truncated; uint64 values beyond int64
    are refused. ``meaning`` says what the integers are, for the messages.
    """
    if _compat.is_array(value):
        vxp = _compat.namespace(value)
        if xp is not None and vxp is not xp and not (_compat.is_numpy(vxp) and _compat.is_numpy(xp)):
            raise TypeError(
                f"{name} is {show(value)} from {_compat.backend_name(vxp)}, but {owner} is a "
                f"{_compat.backend_name(xp)} array; pass {name} from the same array library"
            )
        if not _compat.is_integer_dtype(vxp, value.dtype):
            raise TypeError(f"{name} must hold {meaning}, got {show(value)}; fractions are not truncated silently")
        xp, device, arr = vxp, _compat.device_of(value), value
    else:
        if isinstance(value, (str, bytes)) or value is None:
            raise TypeError(f"{name} must be {meaning} (a scalar, list or integer array), got {show(value)}")
        try:
            host = np.asarray(value)
        except (TypeError, ValueError, OverflowError) as exc:
            raise TypeError(f"{name} must be {meaning}, got {show(value)}") from exc
        if host.size == 0 and host.dtype == np.float64 and not isinstance(value, np.ndarray):
            host = host.astype(np.int64)  # an empty list: NumPy's default dtype, not a float in sight
        if host.dtype.kind not in "iu":
            raise TypeError(f"{name} must be {meaning}, got {show(value)} (NumPy dtype {host.dtype})")
        if host.dtype == np.uint64 and host.size and int(host.max()) > 2**63 - 1:
            raise ValueError(f"{name} holds {int(host.max())}, beyond the int64 range")
        if xp is None:
            xp, device = _compat.namespace(host), "cpu"
        arr = xp.asarray(host.astype(np.int64).tolist() if host.ndim else int(host), dtype=xp.int64, device=device)
    if _size(arr) and arr.dtype == xp.uint64 and int(xp.max(arr)) > 2**63 - 1:
        raise ValueError(f"{name} holds {int(xp.max(arr))}, beyond the int64 range")
    return xp.astype(arr, xp.int64), xp, device


def as_real_table(name: str, table: Any, what: str) -> tuple[Any, Any]:
    """A real floating array (given as an array of any backend, or nested lists → NumPy float64).

    ``what`` describes the expected layout for messages, e.g. ``"a 2-D array (rows, dim)"``.
    Returns ``(array, xp)``; the caller checks the shape.
    """
    if not _compat.is_array(table):
        if isinstance(table, (str, bytes)) or table is None:
            raise TypeError(f"{name} must be {what}, got {show(table)}")
        try:
            host = np.asarray(table)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{name} must be {what} of real numbers, got {show(table)}") from exc
        if host.dtype.kind not in "iuf":
            raise TypeError(f"{name} must hold real numbers, got {show(table)} (NumPy dtype {host.dtype})")
        table = host.astype(np.float64)
    xp = _compat.namespace(table)
    if not _compat.is_real_floating(xp, table.dtype):
        raise TypeError(f"{name} must have a real floating dtype, got {show(table)}")
    return table, xp


def check_not_traced(positions: Any, name: str = "positions") -> None:
    """Refuse JAX tracers: position values are validated before use."""
    if _compat.is_traced(positions):
        raise TypeError(
            f"{name} is traced (inside jax.jit, vmap or grad): pemath checks position values (exactness, "
            "range) before using them; pass them as a concrete array (a JAX array closed over, or a static "
            "argument), or call pemath outside the traced function"
        )


def as_positions(
    positions: Any,
    xp: Any,
    device: Any,
    dtype: Any,
    *,
    target_shape: tuple[int, ...] | None = None,
    name: str = "positions",
    owner: str = "x",
) -> Any:
    """Positions as an array of ``dtype`` in ``xp`` on ``device``.

    Accepts an array of that namespace, or Python numbers / nested lists. Integer and
    real floating positions only (bool, complex and strings are refused). NaN and inf
    are refused. Integer positions beyond 2**53 are refused (they would not be exact
    in the float64 phase). If ``target_shape`` is given, the positions must broadcast
    to it without changing it (``owner`` names the array it goes with, for messages). Floating positions beyond the integers their dtype holds
    exactly (float16 above 2048, ...), and positions converted to a narrower ``dtype``
    beyond its range, get an :class:`~pemath.InexactPositionsWarning`
    (``pemath._precision.check_positions``).
    """
    if type(positions) is np.ndarray and positions.dtype.kind in "iu" and _compat.is_numpy(xp) and \
            np.dtype(dtype) == np.float64:
        return _int_positions_float64(positions, target_shape, name, owner)
    check_not_traced(positions, name)
    if _compat.is_jax(xp) and (not _compat.is_array(positions) or _compat.is_jax(_compat.namespace(positions))):
        # validated on the host (values are needed; under jax.jit, JAX operations would be traced),
        # then handed to JAX as a constant of the working dtype
        host = _compat.to_numpy(positions) if _compat.is_array(positions) else positions
        checked = as_positions(host, _compat.namespace(np.empty(0)), "cpu", np.dtype(dtype),
                               target_shape=target_shape, name=name, owner=owner)
        return xp.asarray(np.asarray(checked), dtype=dtype, device=device)
    if _compat.is_array(positions):
        pxp = _compat.namespace(positions)
        if pxp is not xp and not (_compat.is_numpy(pxp) and _compat.is_numpy(xp)):
            raise TypeError(
                f"{name} is {show(positions)} from {_compat.backend_name(pxp)}, but {owner} is a "
                f"{_compat.backend_name(xp)} array; "
                f"pass {name} from the same array library as {owner}"
            )
        arr = positions
    else:
        if isinstance(positions, (str, bytes)) or positions is None:
            raise TypeError(f"{name} must be integers or real numbers (a scalar, list or array), got {show(positions)}")
        try:
            host = np.asarray(positions)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{name} must be integers or real numbers, got {show(positions)}") from exc
        if host.dtype.kind not in "iuf":
            raise TypeError(
                f"{name} must be integers or real numbers, got {show(positions)} (NumPy dtype {host.dtype})"
            )
        # Python floats are float64: never let a backend's default dtype (torch: float32) round them.
        kw = {"dtype": dtype} if host.dtype.kind == "f" and _compat.is_real_floating(xp, dtype) else {}
        arr = xp.asarray(host.tolist() if host.ndim else host.item(), device=device, **kw)
    is_int = _compat.is_integer_dtype(xp, arr.dtype)
    if not is_int and not _compat.is_real_floating(xp, arr.dtype):
        raise TypeError(
            f"{name} must have an integer or real floating dtype, got {show(positions)}"
        )
    _check_broadcast(tuple(arr.shape), target_shape, name, owner)
    if is_int:
        if _size(arr) and _compat.is_array(arr):
            # max and min as Python ints: no cast or abs() that wraps (uint64 beyond int64, -2**63)
            big = max(int(xp.max(arr)), -int(xp.min(arr)))
            if big > _MAX_EXACT_F64:
                raise ValueError(
                    f"{name} holds {big}, beyond 2**53, which float64 phases cannot represent exactly"
                )
    else:
        if _size(arr) and not bool(xp.all(xp.isfinite(arr))):
            bad = int(xp.sum(xp.astype(~xp.isfinite(arr), xp.int64)))
            raise ValueError(f"{name} must be finite, got {bad} NaN or infinite value(s) in {show(positions)}")
    _precision.check_positions(arr, xp, dtype, name, host=None if _compat.is_array(positions) else host)
    return xp.astype(arr, dtype)


def _check_broadcast(shape: tuple[int, ...], target_shape: tuple[int, ...] | None, name: str, owner: str) -> None:
    """Positions of ``shape`` must broadcast to ``target_shape`` without enlarging it."""
    if target_shape is None:
        return
    try:
        got = np.broadcast_shapes(shape, tuple(target_shape))
    except ValueError:
        got = None
    if got != tuple(target_shape):
        hint = ""
        t = tuple(target_shape)
        if len(shape) == 1 and len(t) >= 2 and shape[0] in t[:-1]:
            # a (seq,) vector for x of (..., seq, heads, dim): the sequence axis is not the last one before features
            axis = max(i for i, n in enumerate(t) if n == shape[0])
            hint = (f"; if axis {axis} of {owner} is the sequence, pass {name} with shape "
                    f"{tuple(n if i == axis else 1 for i, n in enumerate(t))[axis:]} "
                    f"(e.g. {name}[:{', None' * (len(t) - 1 - axis)}])")
        raise ValueError(
            f"{name} of shape {shape} does not broadcast against {owner}.shape[:-1] = "
            f"{t} (the last axis of {owner} is the feature axis; positions must "
            "broadcast to the other axes without enlarging them)" + hint
        )


def _int_positions_float64(positions: np.ndarray, target_shape: tuple[int, ...] | None, name: str,
                           owner: str) -> np.ndarray:
    """The general path's checks, for the common case of NumPy integer positions and float64 phases: the
    shape broadcasts to ``target_shape``, and |positions| <= 2**53 (integers are exact in their dtype, and
    float64 holds every integer up to 2**53, so no precision warning applies)."""
    _check_broadcast(tuple(positions.shape), target_shape, name, owner)
    if positions.size:
        big = max(int(positions.max()), -int(positions.min()))
        if big > _MAX_EXACT_F64:
            raise ValueError(f"{name} holds {big}, beyond 2**53, which float64 phases cannot represent exactly")
    return positions.astype(np.float64)


def _size(a: Any) -> int:
    n = 1
    for s in a.shape:
        n *= int(s)
    return n
