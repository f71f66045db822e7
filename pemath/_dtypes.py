"""Everything pemath knows about floating dtypes, in one place.

Names (NumPy, ml_dtypes, torch, CuPy, JAX, array-api-strict, MLX, or a string), unit
roundoffs, the exact-integer limits of each format (:func:`max_exact_position`,
re-exported by :mod:`pemath.positions`), and the optional ml_dtypes import. Nothing here
imports another pemath module but ``_validate.show``'s twin below, so every module can
import it without cycles.
"""

from __future__ import annotations

import math
import sys
from typing import Any

import numpy as np

__all__ = ["ml_dtypes", "name", "label", "unit_roundoff", "max_exact_position", "NARROW_FORMATS", "KNOWN_U",
           "FLOAT32_EXACT"]

#: Unit roundoff u = eps / 2 of the common formats, by name.
KNOWN_U = {"float64": 2.0**-53, "float32": 2.0**-24, "float16": 2.0**-11, "bfloat16": 2.0**-8}


def _show(value: Any) -> str:
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{text} ({type(value).__name__})"


def ml_dtypes(required_for: str | None = None) -> Any:
    """The ml_dtypes module, or None when it is not installed (an ImportError naming its use if required)."""
    try:
        import ml_dtypes as mld
    except ImportError as exc:  # optional
        if required_for is None:
            return None
        raise ImportError(f"{required_for} needs ml_dtypes (pip install ml_dtypes), which pemath does not "
                          "require") from exc
    return mld


def name(dtype: Any) -> str:
    """The plain name of a dtype of any backend ('float32', 'bfloat16', 'float8_e4m3fn'), or of a name."""
    if dtype is None:  # np.dtype(None) is float64: never a silent default
        raise TypeError("dtype must be a floating dtype or its name, got None")
    if isinstance(dtype, str):
        return dtype.removeprefix("torch.")
    top = type(dtype).__module__.split(".")[0]
    if top in ("torch", "mlx"):
        return str(dtype).rsplit(".", 1)[-1]
    inner = getattr(dtype, "_np_dtype", None)  # array_api_strict
    if inner is not None:
        return np.dtype(inner).name
    try:
        return np.dtype(dtype).name
    except TypeError as exc:
        raise TypeError(f"dtype must be a floating dtype or its name, got {_show(dtype)}") from exc


def label(dtype: Any) -> str:
    """A name for messages: the backend's own spelling where it has one ('torch.bfloat16')."""
    if type(dtype).__module__.split(".")[0] == "torch":
        return str(dtype)
    try:
        return name(dtype)
    except TypeError:
        return str(dtype)


def unit_roundoff(dtype: Any) -> float:
    r"""The unit roundoff :math:`u = \epsilon / 2` of a real floating dtype (of any backend, or a name).

    float64 :math:`2^{-53}`, float32 :math:`2^{-24}`, float16 :math:`2^{-11}`, bfloat16
    :math:`2^{-8}`; float8 and other narrow formats through ml_dtypes (an ImportError
    says so where it is missing).
    """
    n = name(dtype)
    if n in KNOWN_U:
        return KNOWN_U[n]
    if n.startswith(("float8", "float4", "float6")):
        mld = ml_dtypes(f"the unit roundoff of {n}")
        return float(mld.finfo(getattr(mld, n)).eps) / 2
    raise TypeError(f"dtype must be a real floating dtype, got {_show(dtype)} ({n})")


def _n_from_float(eps: float, maximum: float) -> int:
    # eps = 2**-m for m stored mantissa bits: integers up to 2**(m + 1) are exact.
    mant, exp = math.frexp(float(eps))
    if mant != 0.5:
        raise ValueError(f"unexpected machine epsilon {eps!r}: not a power of two")
    p = 2 - exp  # significand bits, implicit bit included
    return min(2**p, math.floor(float(maximum)))


def _from_numpy_dtype(dt: np.dtype, given: Any) -> int:
    mld = ml_dtypes()
    is_ml = getattr(dt.type, "__module__", "").startswith("ml_dtypes")
    if dt.kind == "b":
        raise TypeError(f"dtype must be a real floating or integer dtype, got {given!r} (bool)")
    if dt.kind in "iu" and not is_ml:
        return int(np.iinfo(dt).max)
    if dt.kind == "f" and not is_ml:
        fi = np.finfo(dt)
        return _n_from_float(float(fi.eps), float(fi.max))
    if is_ml and mld is not None:
        try:
            fi = mld.finfo(dt)
        except (ValueError, TypeError):
            return int(mld.iinfo(dt).max)
        if float(np.asarray(0.0).astype(dt).astype(np.float64)) != 0.0:
            raise ValueError(f"dtype {given!r} cannot represent 0, so no range [0, N] of integers is exact")
        return _n_from_float(float(fi.eps), float(fi.max))
    raise TypeError(f"dtype must be a real floating or integer dtype, got {given!r} (NumPy kind {dt.kind!r})")


def _from_torch(dtype: Any) -> int:
    torch = sys.modules["torch"]
    if dtype == torch.bool or dtype.is_complex:
        raise TypeError(f"dtype must be a real floating or integer dtype, got {dtype!r}")
    if not dtype.is_floating_point:
        return int(torch.iinfo(dtype).max)
    try:
        fi = torch.finfo(dtype)
        zero = float(torch.zeros(1, dtype=torch.float32).to(dtype).to(torch.float32)[0])
    except (TypeError, RuntimeError) as exc:
        raise ValueError(f"dtype {dtype!r}: torch cannot report its range ({exc})") from exc
    if zero != 0.0:
        raise ValueError(f"dtype {dtype!r} cannot represent 0, so no range [0, N] of integers is exact")
    return _n_from_float(float(fi.eps), float(fi.max))


def _from_array_api(module: Any, dtype: Any) -> int:
    if module.isdtype(dtype, "bool") or module.isdtype(dtype, "complex floating"):
        raise TypeError(f"dtype must be a real floating or integer dtype, got {dtype!r}")
    if module.isdtype(dtype, "integral"):
        return int(module.iinfo(dtype).max)
    fi = module.finfo(dtype)
    return _n_from_float(float(fi.eps), float(fi.max))


#: max_exact_position of the narrow formats by name, for machines without ml_dtypes
#: (N = min(2**p, floor(max)); tests check the table against ml_dtypes where installed).
NARROW_FORMATS = {
    "bfloat16": 256,
    "float8_e4m3fn": 16,
    "float8_e4m3fnuz": 16,
    "float8_e4m3b11fnuz": 16,
    "float8_e5m2": 8,
    "float8_e5m2fnuz": 8,
    "float8_e3m4": 15,
}


def max_exact_position(dtype: Any) -> int:
    r"""The largest ``N`` such that every integer in ``[0, N]`` is exact in ``dtype``.

    For a binary floating format with :math:`p` significand bits (the implicit bit
    included) and largest finite value :math:`M`:

    .. math:: N = \min(2^p, \lfloor M \rfloor)

    float16: 2048, bfloat16: 256, float32: :math:`2^{24}`, float64: :math:`2^{53}`;
    float8_e4m3fn: 16, float8_e5m2: 8 (via ml_dtypes, or torch's float8 dtypes). For an
    integer dtype, its maximum. Position ids stored in (or cast to) ``dtype`` beyond
    ``N`` collide: position ``N + 1`` rounds to a neighbour.

    Parameters
    ----------
    dtype
        A NumPy dtype, scalar type or name (``"float32"``, ``"bfloat16"``,
        ``"float8_e4m3fn"``: the ml_dtypes names need ml_dtypes installed); an ml_dtypes
        type; a torch dtype (``torch.bfloat16``; torch is used only when given one); a
        CuPy or JAX dtype (NumPy dtypes); an array-api-strict dtype.

    Returns
    -------
    int

    Raises
    ------
    TypeError
        For something that is not a dtype, or a bool/complex dtype.
    ValueError
        For an unknown name, or a format without 0 (float8_e8m0fnu).

    Examples
    --------
    >>> from pemath import positions
    >>> positions.max_exact_position("bfloat16"), positions.max_exact_position("float16")
    (256, 2048)
    """
    if dtype is None or isinstance(dtype, bool):
        raise TypeError(f"dtype must be a dtype or a dtype name, got {_show(dtype)}")
    if isinstance(dtype, str):
        try:
            dt = np.dtype(dtype)
        except TypeError:
            mld = ml_dtypes()
            found = getattr(mld, dtype, None) if mld is not None and dtype.isidentifier() else None
            if mld is None and dtype in NARROW_FORMATS:
                return NARROW_FORMATS[dtype]
            if found is None or not isinstance(found, type):
                hint = "" if mld is not None else " (ml_dtypes is not installed: bfloat16 and float8 names need it)"
                raise ValueError(f"dtype {dtype!r} is not a known dtype name{hint}") from None
            dt = np.dtype(found)
        return _from_numpy_dtype(dt, dtype)
    top = type(dtype).__module__.split(".")[0]
    if top == "torch" and "torch" in sys.modules:
        return _from_torch(dtype)
    if top == "array_api_strict" and "array_api_strict" in sys.modules:
        return _from_array_api(sys.modules["array_api_strict"], dtype)
    try:
        dt = np.dtype(dtype)
    except TypeError as exc:
        raise TypeError(
            f"dtype must be a NumPy, ml_dtypes, torch, CuPy, JAX or array-api-strict dtype, or a name "
            f"such as 'float32', got {_show(dtype)}"
        ) from exc
    return _from_numpy_dtype(dt, dtype)


#: max_exact_position("float32"): positions up to 2**24 are exact in float32.
FLOAT32_EXACT = 2**24
