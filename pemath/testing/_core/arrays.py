"""The oracle's inputs brought to the host as float64 NumPy, validated, with their configuration."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ... import _compat
from ..._validate import as_positions, check_real, check_rotary_dim, show
from .tolerance import dtype_name, frequency_constants

__all__ = ["as_host", "host_positions", "rope_case", "sinusoidal_case", "RopeCase", "SinusoidalCase"]

_NARROW_TORCH = ("bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz")


def _is_floating_name(name: str) -> bool:
    return name.startswith(("float", "bfloat"))


def as_host(name: str, a: Any, *, floating: bool = True, widen: bool = True) -> tuple[np.ndarray, str]:
    """``(NumPy array, dtype name)`` of an array of any backend; float64 when ``floating`` and ``widen``.

    torch bfloat16 and float8 go through float32, which holds them exactly; ml_dtypes
    arrays (bfloat16, float8) are NumPy arrays already. ``floating`` checks the dtype is
    real floating; ``widen=False`` keeps its values in their own (host) dtype, a view
    where one is possible.
    """
    if not _compat.is_array(a):
        raise TypeError(f"{name} must be an array (NumPy, CuPy, torch, JAX, ...), got {show(a)}")
    if _compat.is_mlx(a):  # the oracle reads MLX outputs on the host, exactly
        dname = str(a.dtype).rsplit(".", 1)[-1]
        host = _compat.to_numpy(a)
    elif _compat.is_torch(_compat.namespace(a)):
        dname = dtype_name(a.dtype)
        t = a.detach().cpu()
        host = (t.float() if dname in _NARROW_TORCH else t).numpy()
    else:
        dname = dtype_name(a.dtype)
        host = np.asarray(_compat.to_numpy(a))
    if floating:
        if not _is_floating_name(dname) or dname.startswith("float8_e8m0"):
            raise TypeError(f"{name} must have a real floating dtype, got {show(a)}")
        if widen:
            host = host.astype(np.float64)
    return host, dname


def host_positions(positions: Any, target_shape: tuple[int, ...], name: str = "positions") -> np.ndarray:
    """Positions as float64 NumPy of ``target_shape`` (validated as by pemath.rope.apply), flattened."""
    pos = given_positions(positions, target_shape, name)
    return np.broadcast_to(pos, target_shape).reshape(-1).copy()


def given_positions(positions: Any, target_shape: tuple[int, ...], name: str = "positions") -> np.ndarray:
    """Positions as float64 NumPy, validated as by pemath.rope.apply, in their given shape (not broadcast)."""
    if _compat.is_array(positions):
        host, _ = as_host(name, positions, floating=False)
        if host.dtype.kind not in "iuf":
            raise TypeError(f"{name} must have an integer or real floating dtype, got {show(positions)}")
    else:
        host = positions
    xp = _compat.namespace(np.empty(0))
    pos = np.asarray(as_positions(host, xp, "cpu", np.float64, target_shape=target_shape, name=name))
    np.broadcast_to(pos, target_shape)  # a ValueError for positions that do not broadcast
    return pos


def check_finite(name: str, a: np.ndarray) -> None:
    bad = int(np.sum(~np.isfinite(a)))
    if bad:
        raise ValueError(f"{name} must be finite, got {bad} NaN or infinite value(s)")


@dataclasses.dataclass(frozen=True)
class RopeCase:
    """A validated RoPE call: its :class:`pemath.rope.Spec`, its input on the host, its frequencies."""

    shape: tuple[int, ...]
    x2: np.ndarray  # (N, d) float64 (x's own dtype where built with widen=False)
    x_dtype: str
    pos: np.ndarray  # (N,) float64
    given_pos: np.ndarray  # the positions as given (validated, float64), broadcasting against shape[:-1]
    spec: Any  # pemath.rope.Spec, the one description of the configuration
    r: int
    seq_len: int | None
    freq: np.ndarray  # (r/2,)
    factor: float
    cfreq: np.ndarray  # (r/2,)
    #: with a spec's rotary_offset: the order of x's features in ``x2`` (the rotated slice first, then the features
    #: before it, then those after), and the offset; the case's spec is the same RoPE without the offset
    perm: np.ndarray | None = None
    offset: int = 0

    def original_feature(self, j: int) -> int:
        """x's feature index of column ``j`` of ``x2``."""
        return int(self.perm[j]) if self.perm is not None else int(j)

    def to_case_order(self, a2: np.ndarray) -> np.ndarray:
        """``(N, d)`` rows in x's feature order, put in the case's (the rotated slice first)."""
        return a2 if self.perm is None else a2[:, self.perm]

    def to_x_order(self, b2: np.ndarray) -> np.ndarray:
        """``(N, d)`` rows in the case's feature order, put back in x's."""
        if self.perm is None:
            return b2
        out = np.empty_like(b2)
        out[:, self.perm] = b2
        return out

    @property
    def d(self) -> int:
        return self.shape[-1]

    @property
    def layout(self) -> str:
        return self.spec.layout

    @property
    def base(self) -> float:
        return self.spec.base

    @property
    def scaling(self) -> Any:
        return self.spec.scaling

    def kwargs(self) -> dict[str, Any]:
        return {"spec": self.spec, "seq_len": self.seq_len}

    def widened(self) -> RopeCase:
        """This case with ``x2`` in float64."""
        return self if self.x2.dtype == np.float64 else dataclasses.replace(self, x2=self.x2.astype(np.float64))


def rope_case(
    x: Any,
    positions: Any,
    *,
    layout: Any = None,
    base: Any = None,
    rotary_dim: Any = None,
    scaling: Any = None,
    seq_len: Any = None,
    spec: Any = None,
    where: str = "pemath.testing",
    widen: bool = True,
) -> RopeCase:
    """A validated RoPE call; ``widen=False`` keeps ``x2`` in x's own (host) dtype (the caller widens blocks)."""
    from ...rope.spec import resolve

    if not _compat.is_array(x):
        raise TypeError(f"x must be an array (NumPy, CuPy, torch, JAX, ...), got {show(x)}")
    host, x_dtype = as_host("x", x, widen=widen)
    if host.ndim < 1:
        raise ValueError("x must have at least one axis (the feature axis is the last), got a 0-d array")
    check_finite("x", host)
    d = int(host.shape[-1])
    if spec is None and rotary_dim is not None:
        check_rotary_dim(rotary_dim, d, dim_name="x.shape[-1]")
    spec = resolve(spec, where, layout=layout, base=base, rotary_dim=rotary_dim, scaling=scaling)
    if spec.is_multi_axis or spec.out_layout is not None:
        raise ValueError(
            f"{where} checks single-axis RoPE in one layout; {spec!r} is "
            + ("M-RoPE" if spec.is_multi_axis else f"{spec.layout} in, {spec.out_layout} out")
            + ": compare in the input layout (spec.replace(out_layout=None) after rope.convert_layout) or per "
            "position component"
        )
    r = spec.rotary_dim_for(d)
    x2 = host.reshape(-1, d)
    perm, offset = None, spec.rotary_offset
    if offset:  # the rotated slice moved to the front: the rest of the oracle works on a slice starting at 0
        perm = np.concatenate([np.arange(offset, offset + r), np.arange(offset), np.arange(offset + r, d)])
        x2 = x2[:, perm]
        spec = spec.replace(rotary_offset=0, head_dim=d, rotary_dim=r)
    freq, factor = spec.frequencies(r, seq_len)
    given = given_positions(positions, tuple(host.shape[:-1]))
    pos = np.broadcast_to(given, tuple(host.shape[:-1])).reshape(-1).copy()
    return RopeCase(
        perm=perm,
        offset=offset,
        shape=tuple(host.shape),
        x2=x2,
        x_dtype=x_dtype,
        pos=pos,
        given_pos=given,
        spec=spec,
        r=r,
        seq_len=seq_len,
        freq=np.asarray(freq, dtype=np.float64),
        factor=float(factor),
        cfreq=frequency_constants(r, spec.base, spec.scaling, seq_len, explicit=spec.inv_freq is not None),
    )


@dataclasses.dataclass(frozen=True)
class SinusoidalCase:
    shape: tuple[int, ...]  # positions' shape
    pos: np.ndarray  # (N,)
    dim: int
    base: float
    convention: str
    freq: np.ndarray


def sinusoidal_case(positions: Any, dim: Any, *, base: Any, convention: Any) -> SinusoidalCase:
    from ... import sinusoidal

    freq = sinusoidal.frequencies(dim, base=base, convention=convention)  # validates all three
    if _compat.is_array(positions):
        host, _ = as_host("positions", positions, floating=False)
    else:
        host = positions
    xp = _compat.namespace(np.empty(0))
    pos = np.asarray(as_positions(host, xp, "cpu", np.float64))
    return SinusoidalCase(tuple(pos.shape), pos.reshape(-1), int(dim), float(base), convention, freq)


def user_tolerance(rtol: Any, atol: Any) -> tuple[float, float] | None:
    """``(rtol, atol)`` given by the user (both or neither, as torch.testing), or None."""
    if rtol is None and atol is None:
        return None
    if rtol is None or atol is None:
        raise ValueError(
            f"rtol and atol must be given together or both omitted (the default is derived), got rtol={rtol!r}, "
            f"atol={atol!r}"
        )
    return check_real("rtol", rtol, nonnegative=True), check_real("atol", atol, nonnegative=True)


def check_shape(actual: np.ndarray, shape: tuple[int, ...], what: str) -> None:
    if tuple(actual.shape) != tuple(shape):
        raise ValueError(f"actual has shape {tuple(actual.shape)}, but {what} has shape {tuple(shape)}")
