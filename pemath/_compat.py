"""Array-namespace plumbing.

This is the only module that imports :mod:`array_api_compat`. Everything numeric in
pemath is written against the array API standard through the namespace returned by
:func:`namespace`; no backend (CuPy, torch, JAX) is imported here or anywhere at
import time.
"""

from __future__ import annotations

import warnings
from typing import Any

import array_api_compat
import numpy as np

from ._errors import PrecisionWarning

__all__ = [
    "namespace",
    "is_array",
    "device_of",
    "is_numpy",
    "is_real_floating",
    "is_integer_dtype",
    "working_dtype",
    "to_numpy",
    "is_mlx",
    "is_jax",
    "is_traced",
]

is_array = array_api_compat.is_array_api_obj
device_of = array_api_compat.device
is_numpy = array_api_compat.is_numpy_namespace
is_cupy = array_api_compat.is_cupy_namespace
is_torch = array_api_compat.is_torch_namespace


def is_mlx(a: Any) -> bool:
    """Whether ``a`` is an MLX array (which advertises the array API but lacks parts pemath needs)."""
    return type(a).__module__.split(".")[0] == "mlx"


def is_jax(xp: Any) -> bool:
    return array_api_compat.is_jax_namespace(xp)


def is_traced(a: Any) -> bool:
    """Whether ``a`` is a JAX tracer (inside jax.jit, grad, vmap): its values are not on the host."""
    if type(a).__module__.split(".")[0] not in ("jax", "jaxlib"):
        return False
    import jax

    return isinstance(a, jax.core.Tracer)


MLX_ADVICE = (
    "pemath computes RoPE phases, cos and sin in float64, which MLX does not offer on every device, and MLX "
    "arrays lack parts of the array API pemath relies on (device, in-place writes): convert with "
    "numpy.array(x) (mx.array(result) to go back; bfloat16 via x.astype(mx.float32) first, which is exact)"
)


_NUMPY_NS = array_api_compat.array_namespace(np.empty(0))


def namespace(*arrays: Any, names: tuple[str, ...] = ()) -> Any:
    """The array API namespace shared by ``arrays``.

    Raises ``TypeError`` naming the arguments when they come from different
    backends (mixing CuPy and NumPy, say), instead of the backend's own message, and
    for MLX arrays, saying how to convert them.
    """
    if arrays and all(type(a) is np.ndarray for a in arrays):  # the common case, without the general lookup
        return _NUMPY_NS
    labels = names or tuple(f"argument {i}" for i in range(len(arrays)))
    for n, a in zip(labels, arrays):
        if is_mlx(a):
            raise TypeError(f"{n} is an MLX array; {MLX_ADVICE}")
    try:
        return array_api_compat.array_namespace(*arrays)
    except TypeError as exc:
        kinds = ", ".join(
            f"{n}: {type(a).__module__}.{type(a).__qualname__}"
            for n, a in zip(names or tuple(f"argument {i}" for i in range(len(arrays))), arrays)
        )
        raise TypeError(
            f"arrays from different backends cannot be mixed ({kinds}); "
            "convert them to one array library first"
        ) from exc


def backend_name(xp: Any) -> str:
    """'numpy', 'cupy', 'torch', 'array_api_strict', ... for a namespace."""
    name = xp.__name__
    return name[len("array_api_compat."):] if name.startswith("array_api_compat.") else name


def _is_ml_dtypes_float(dtype: Any) -> bool:
    # ml_dtypes (bfloat16, float8_*) registers NumPy dtypes of kind 'V', not 'f'.
    t = getattr(dtype, "type", None)
    return (
        t is not None
        and getattr(t, "__module__", "").startswith("ml_dtypes")
        and "float" in getattr(t, "__name__", "")
    )


def is_real_floating(xp: Any, dtype: Any) -> bool:
    """Whether ``dtype`` is a real floating dtype (ml_dtypes' bfloat16 and float8 included)."""
    if xp is _NUMPY_NS and isinstance(dtype, np.dtype) and dtype.kind in "fiub":  # the common case, decided at once
        return dtype.kind == "f"
    try:
        with warnings.catch_warnings():  # NumPy warns when handed another library's dtype: it is refused
            warnings.simplefilter("ignore", UserWarning)
            if xp.isdtype(dtype, "real floating"):
                return True
    except (TypeError, ValueError, AttributeError):
        pass
    if not is_numpy(xp):
        return False
    try:
        return _is_ml_dtypes_float(np.dtype(dtype))
    except (TypeError, ValueError):  # not a NumPy dtype at all (another library's, a junk value)
        return False


def is_integer_dtype(xp: Any, dtype: Any) -> bool:
    if xp is _NUMPY_NS and isinstance(dtype, np.dtype) and dtype.kind in "fiubc":
        return dtype.kind in "iu"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return bool(xp.isdtype(dtype, "integral"))
    except (TypeError, ValueError, AttributeError):
        return False


def has_float64(xp: Any, device: Any) -> bool:
    """Whether the backend computes float64 on ``device`` (JAX without x64 does not)."""
    if xp is _NUMPY_NS:
        return True
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            probe = xp.asarray(0.0, dtype=xp.float64, device=device)
        except Exception:  # a backend without float64 on this device
            return False
    return probe.dtype == xp.float64


def working_dtype(xp: Any, device: Any) -> Any:
    """float64 where the backend and device support it.

    Phases are computed in float64. Where a backend cannot (JAX without x64 inside
    ``jax.jit``, a device without float64) this falls back to float32 with a
    :class:`PrecisionWarning`: never a silent loss of precision. (Concrete JAX arrays
    without x64 never get here: ``rope.apply`` and ``rope.cos_sin`` compute them on the
    host in float64.)
    """
    if has_float64(xp, device):
        return xp.float64
    hint = (" (JAX without x64 inside a traced function such as jax.jit: enable jax_enable_x64, or call "
            "pemath outside the traced function, where it computes on the host in float64)" if is_jax(xp) else "")
    warnings.warn(
        f"the array backend {backend_name(xp)} cannot compute float64 on device {device!r}; "
        f"phases are computed in float32 and lose precision at large positions{hint}",
        PrecisionWarning,
        stacklevel=3,
    )
    return xp.float32


def host_route(xp: Any, device: Any, *arrays: Any) -> bool:
    """Whether to compute on the host in float64 NumPy: concrete JAX arrays on a backend without float64."""
    return is_jax(xp) and not any(is_traced(a) for a in arrays) and not has_float64(xp, device)


def from_host(y: np.ndarray, like_device: Any) -> Any:
    """A NumPy result back onto a JAX device (dtype kept: it was rounded once on the host)."""
    import jax

    return jax.device_put(y, like_device)


def to_numpy(a: Any) -> np.ndarray:
    """A NumPy copy of any supported array (CuPy and torch moved to the host)."""
    if isinstance(a, np.ndarray):
        return a
    if is_mlx(a):  # host-side reading (the oracle): exact, through float32 for MLX's bfloat16
        import mlx.core as mx

        return np.array(a.astype(mx.float32) if a.dtype == mx.bfloat16 else a)
    if is_cupy(namespace(a)):
        return a.get()
    if is_torch(namespace(a)):
        return a.detach().cpu().numpy()
    return np.asarray(a)
