r"""Hypothesis strategies for property tests of RoPE implementations.

Import this module explicitly (it imports hypothesis; ``import pemath.testing`` does
not)::

    from hypothesis import given
    from pemath.testing import strategies as pst

    @given(cfg=pst.rope_configs(), p=pst.positions(dtype="bfloat16"))
    def test_my_kernel(cfg, p): ...

The draws favour what breaks kernels: head dims that are not powers of two (80, 96,
112, 72, ...), partial rotary dims, the bases and scaling parameters of real models,
and positions at each dtype's exactness boundary (:math:`N = 2^p` for a format with
``p`` significand bits: ``N - 1``, ``N``, ``N + 1`` and the other ``2^k \pm 1``), where
positions stored in the dtype start to collide.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
from hypothesis import strategies as st

from .._validate import check_int, check_size, show
from ..positions import max_exact_position
from ..rope._core import LAYOUTS
from ..rope.spec import Spec
from ..scaling import NTK, DynamicNTK, Linear, Llama3, LongRoPE, Proportional, RopeScaling, YaRN

__all__ = [
    "HEAD_DIMS",
    "BASES",
    "SCALINGS",
    "RopeConfig",
    "head_dims",
    "bases",
    "scalings",
    "rope_configs",
    "boundary_positions",
    "positions",
    "position_arrays",
    "activations",
]

#: Head dims of real models, non-powers of two included (Phi-2: 80, Phi-3: 96,
#: Falcon-40B / StarCoder2: 112 ... ).
HEAD_DIMS = (32, 64, 72, 80, 96, 112, 128, 160, 192, 256)
#: RoPE bases of real models (GPT-NeoX/Llama 2: 1e4, Llama 3: 5e5, Qwen2: 1e6, ...).
BASES = (10000.0, 25000.0, 100000.0, 150000.0, 500000.0, 1000000.0, 5000000.0, 10000000.0)
#: The scaling variants :func:`scalings` draws from.
SCALINGS = ("linear", "ntk", "dynamic", "yarn", "llama3", "longrope", "proportional")
_ORIGINAL = (2048, 4096, 8192, 32768)


@dataclasses.dataclass(frozen=True)
class RopeConfig:
    """A RoPE configuration drawn by :func:`rope_configs`: a :class:`pemath.rope.Spec` and a ``seq_len``.

    ``kwargs()`` gives the keyword arguments of :func:`pemath.rope.apply` (and of
    ``pemath.testing.assert_rope_close``): ``spec`` and ``seq_len``. ``head_dim`` (the
    last axis of ``x``), ``layout``, ``rotary_dim``, ``base`` and ``scaling`` read the spec.
    """

    spec: Spec
    seq_len: int | None = None

    layout = property(lambda self: self.spec.layout)
    head_dim = property(lambda self: self.spec.head_dim)
    rotary_dim = property(lambda self: self.spec.rotary_dim)
    base = property(lambda self: self.spec.base)
    scaling = property(lambda self: self.spec.scaling)

    def kwargs(self) -> dict[str, Any]:
        return {"spec": self.spec, "seq_len": self.seq_len}


def _bounds(name_lo: str, lo: Any, name_hi: str, hi: Any, *, minimum: int) -> tuple[int, int]:
    lo = check_size(name_lo, lo, minimum=minimum)
    hi = check_size(name_hi, hi, minimum=minimum)
    if lo > hi:
        raise ValueError(f"{name_lo} must be <= {name_hi}, got {name_lo}={lo}, {name_hi}={hi}")
    return lo, hi


def head_dims(*, min_dim: int = 2, max_dim: int = 256) -> st.SearchStrategy[int]:
    """Even head dims in ``[min_dim, max_dim]``: real ones (:data:`HEAD_DIMS`) and any even value.

    Examples
    --------
    >>> from hypothesis import find
    >>> from pemath.testing import strategies as pst
    >>> d = find(pst.head_dims(), lambda d: d & (d - 1) != 0)   # a head dim that is not a power of two
    >>> d % 2, d & (d - 1) != 0
    (0, True)
    """
    lo, hi = _bounds("min_dim", min_dim, "max_dim", max_dim, minimum=2)
    lo += lo % 2
    if lo > hi:
        raise ValueError(f"no even head dim in [{min_dim}, {max_dim}]")
    real = [d for d in HEAD_DIMS if lo <= d <= hi]
    anything = st.integers(lo // 2, hi // 2).map(lambda h: 2 * h)
    return st.one_of(st.sampled_from(real), anything) if real else anything


def bases() -> st.SearchStrategy[float]:
    """RoPE bases: those of real models (:data:`BASES`), or any in [100, 1e8]."""
    return st.one_of(
        st.sampled_from(BASES),
        st.floats(min_value=100.0, max_value=1e8, allow_nan=False, allow_infinity=False),
    )


def _longrope(n: int) -> st.SearchStrategy[LongRoPE]:
    """Phi-3-like factor lists: short near 1, long rising to ~64, sorted, one per pair."""

    @st.composite
    def build(draw: Any) -> LongRoPE:
        short = sorted(draw(st.lists(st.floats(1.0, 3.0), min_size=n, max_size=n)))
        long = sorted(draw(st.lists(st.floats(1.0, 64.0), min_size=n, max_size=n)))
        L0 = draw(st.sampled_from(_ORIGINAL))
        return LongRoPE(short, long, L0, max_position=L0 * draw(st.sampled_from((4, 8, 16, 32))))

    return build()


def scalings(rotary_dim: int, *, kinds: tuple[str, ...] = SCALINGS) -> st.SearchStrategy[RopeScaling]:
    """pemath.scaling variants with the parameters of real models, valid for ``rotary_dim``.

    Linear (factor 2-16), static and dynamic NTK, YaRN (Qwen2.5's and DeepSeek's
    settings among others, truncated or not), Llama 3.1 (factor 8, L0 8192 and
    variations), LongRoPE (Phi-3-like factor lists of ``rotary_dim / 2`` entries),
    Proportional (p-RoPE). NTK variants need ``rotary_dim > 2`` and are left out
    below that.
    """
    r = check_size("rotary_dim", rotary_dim, minimum=2)
    if r % 2:
        raise ValueError(f"rotary_dim must be even, got {r}")
    if isinstance(kinds, str) or not isinstance(kinds, (tuple, list)) or not kinds or not all(
        isinstance(k, str) for k in kinds
    ):
        raise TypeError(f"kinds must be a non-empty tuple of names from {SCALINGS}, got {show(kinds)}")
    unknown = [k for k in kinds if k not in SCALINGS]
    if unknown:
        raise ValueError(f"kinds must be names from {SCALINGS}, got unknown {unknown}")
    factors = st.sampled_from((1.5, 2.0, 4.0, 8.0, 16.0, 32.0, 40.0))
    options: dict[str, st.SearchStrategy[RopeScaling]] = {
        "linear": st.builds(Linear, st.sampled_from((2.0, 4.0, 8.0, 16.0))),
        "ntk": st.builds(NTK, factors),
        "dynamic": st.builds(DynamicNTK, factors, st.sampled_from(_ORIGINAL)),
        "yarn": st.one_of(
            st.builds(YaRN, st.just(4.0), st.just(32768)),  # Qwen2.5
            st.builds(YaRN, st.just(40.0), st.just(4096), mscale=st.just(1.0), mscale_all_dim=st.just(1.0)),
            st.builds(
                YaRN,
                factors,
                st.sampled_from(_ORIGINAL),
                beta_fast=st.sampled_from((16.0, 32.0)),
                beta_slow=st.sampled_from((1.0, 2.0)),
                truncate=st.booleans(),
            ),
        ),
        "llama3": st.builds(
            Llama3,
            st.sampled_from((8.0, 16.0, 32.0)),
            st.sampled_from((8192, 4096)),
            low_freq_factor=st.just(1.0),
            high_freq_factor=st.sampled_from((4.0, 2.0)),
        ),
        "longrope": _longrope(r // 2),
        "proportional": st.builds(
            Proportional, st.sampled_from((0.25, 0.5, 0.75, 1.0)), factor=st.sampled_from((1.0, 8.0))
        ),
    }
    chosen = [options[k] for k in kinds if not (k in ("ntk", "dynamic") and r <= 2)]
    if not chosen:
        raise ValueError(f"none of {kinds} applies to rotary_dim {r} (NTK variants need rotary_dim > 2)")
    return st.one_of(*chosen)


def rope_configs(
    *,
    layouts: tuple[str, ...] = LAYOUTS,
    max_head_dim: int = 256,
    partial: bool = True,
    scaling: bool = True,
) -> st.SearchStrategy[RopeConfig]:
    """Whole RoPE configurations (:class:`RopeConfig`).

    Parameters
    ----------
    layouts : tuple of {"interleaved", "half"}
    max_head_dim : int
    partial : bool
        Also draw ``rotary_dim < head_dim`` (even, as GPT-J, GPT-NeoX, Phi-2).
    scaling : bool
        Also draw a scaling variant (:func:`scalings`) and, for the variants driven by
        the sequence length, a ``seq_len`` below or above the original context.

    Examples
    --------
    >>> import numpy as np
    >>> from hypothesis import given
    >>> from pemath import rope
    >>> from pemath.testing import strategies as pst
    >>> @given(pst.rope_configs())
    ... def test(cfg):
    ...     y = rope.apply(np.ones((3, cfg.head_dim)), [0, 1, 2], **cfg.kwargs())
    ...     assert y.shape == (3, cfg.head_dim)
    >>> test()
    """
    if (
        isinstance(layouts, str)
        or not isinstance(layouts, (tuple, list))
        or not layouts
        or any(not isinstance(lay, str) or lay not in LAYOUTS for lay in layouts)
    ):
        raise ValueError(f"layouts must be a non-empty tuple of {LAYOUTS}, got {layouts!r}")
    max_head_dim = check_size("max_head_dim", max_head_dim, minimum=2)
    if not isinstance(partial, bool) or not isinstance(scaling, bool):
        raise TypeError(f"partial and scaling must be True or False, got {show(partial)}, {show(scaling)}")

    @st.composite
    def build(draw: Any) -> RopeConfig:
        d = draw(head_dims(max_dim=max_head_dim))
        r = d
        if partial and d > 2 and draw(st.booleans()):
            r = draw(st.one_of(st.sampled_from([v for v in (d // 4, d // 2) if v >= 2 and v % 2 == 0] or [2]),
                               st.integers(1, d // 2).map(lambda h: 2 * h)))
        s = draw(st.one_of(st.none(), scalings(r))) if scaling else None
        seq_len = None
        L0 = getattr(s, "original_max_position", None)
        if isinstance(s, (DynamicNTK, LongRoPE)) and draw(st.booleans()):
            seq_len = draw(st.sampled_from((L0 // 2, L0, L0 + 1, 2 * L0, 8 * L0)))
        spec = Spec(draw(st.sampled_from(layouts)), base=draw(bases()), head_dim=d, rotary_dim=r, scaling=s)
        return RopeConfig(spec, seq_len)

    return build()


def boundary_positions(dtype: Any = "float32", *, max_position: int = 131071) -> list[int]:
    r"""The positions at which ``dtype`` stops counting exactly, up to ``max_position``.

    With :math:`N` = :func:`pemath.positions.max_exact_position` (``2^p``): every
    :math:`2^k - 1, 2^k, 2^k + 1` for :math:`k \le` ``log2(max_position + 1)``
    (:math:`N + 1` is the first integer the dtype cannot hold) and :math:`N + 2`, plus
    0 and ``max_position``; sorted, within ``[0, max_position]``.

    Examples
    --------
    >>> from pemath.testing import strategies as pst
    >>> [p for p in pst.boundary_positions("bfloat16", max_position=600) if 200 < p < 300]
    [255, 256, 257, 258]
    """
    max_position = check_int("max_position", max_position, minimum=0, maximum=2**53)
    n = max_exact_position(dtype)
    out = {0, max_position}
    k = 0
    while 2**k - 1 <= max_position:
        out.update((2**k - 1, 2**k, 2**k + 1))
        k += 1
    out.update((n - 1, n, n + 1, n + 2))
    return sorted(p for p in out if 0 <= p <= max_position)


def positions(
    *, dtype: Any = "float32", max_position: int = 131071, min_position: int = 0
) -> st.SearchStrategy[int]:
    """Integer positions in ``[min_position, max_position]``, half of the draws on
    :func:`boundary_positions` of ``dtype`` (where positions stored in ``dtype`` collide).

    Examples
    --------
    >>> from hypothesis import find
    >>> from pemath.testing import strategies as pst
    >>> find(pst.positions(dtype="float16"), lambda p: p > 2048)   # the first one float16 rounds
    2049
    """
    max_position = check_int("max_position", max_position, minimum=0, maximum=2**53)
    min_position = check_int("min_position", min_position, minimum=0, maximum=2**53)
    if min_position > max_position:
        raise ValueError(
            f"min_position must be <= max_position, got min_position={min_position}, max_position={max_position}"
        )
    edges = [p for p in boundary_positions(dtype, max_position=max_position) if p >= min_position]
    anywhere = st.integers(min_position, max_position)
    return st.one_of(st.sampled_from(edges), anywhere) if edges else anywhere


def position_arrays(
    shape: int | tuple[int, ...], *, dtype: Any = "float32", max_position: int = 131071
) -> st.SearchStrategy[np.ndarray]:
    """int64 NumPy arrays of ``shape`` whose entries are :func:`positions` draws."""
    shp = (shape,) if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool) else shape
    if not isinstance(shp, tuple) or not all(isinstance(s, (int, np.integer)) and not isinstance(s, bool) and s >= 0
                                             for s in shp):
        raise TypeError(f"shape must be a non-negative int or a tuple of them, got {show(shape)}")
    size = math.prod(shp)
    elems = positions(dtype=dtype, max_position=max_position)
    return st.lists(elems, min_size=size, max_size=size).map(lambda v: np.array(v, dtype=np.int64).reshape(shp))


_ACT_DTYPES = ("float64", "float32", "float16", "bfloat16")


def activations(
    shape: int | tuple[int, ...], *, dtype: str = "float32", max_magnitude: float = 8.0
) -> st.SearchStrategy[np.ndarray]:
    """Finite NumPy activations of ``shape`` and ``dtype`` (bfloat16 via ml_dtypes).

    Values are drawn in float32 within ``[-max_magnitude, max_magnitude]`` (zeros,
    tiny and exactly representable values included) and rounded to ``dtype``.
    """
    shp = (shape,) if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool) else shape
    if not isinstance(shp, tuple) or not all(isinstance(s, (int, np.integer)) and not isinstance(s, bool) and s >= 0
                                             for s in shp):
        raise TypeError(f"shape must be a non-negative int or a tuple of them, got {show(shape)}")
    if dtype not in _ACT_DTYPES:
        raise ValueError(f"dtype must be one of {_ACT_DTYPES}, got {dtype!r}")
    if not isinstance(max_magnitude, (int, float)) or isinstance(max_magnitude, bool) or not (
        0 < max_magnitude < 60000
    ):
        raise ValueError(f"max_magnitude must be a number in (0, 60000) (float16's range), got {show(max_magnitude)}")
    if dtype == "bfloat16":
        try:
            import ml_dtypes
        except ImportError as exc:
            raise ImportError("bfloat16 activations need ml_dtypes: pip install ml_dtypes") from exc
        target: Any = np.dtype(ml_dtypes.bfloat16)
    else:
        target = np.dtype(dtype)
    m = float(np.float32(max_magnitude))
    size = math.prod(shp)
    elems = st.floats(-m, m, width=32, allow_nan=False, allow_infinity=False)
    return st.lists(elems, min_size=size, max_size=size).map(
        lambda v: np.array(v, dtype=np.float32).reshape(shp).astype(target)
    )
