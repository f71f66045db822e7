"""Shared base draws and result properties of the fuzz tests."""

from __future__ import annotations

from typing import Any

import array_api_strict as xps
import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from pemath import scaling as sc
from pemath._compat import is_array, to_numpy

from ._fuzz import H, _junk, maybe, reject, valid

#: Values exactly representable in float16 and bfloat16 (multiples of 1/8 in [-4, 4]).
SMALL = st.integers(-32, 32).map(lambda v: v / 8)

LEADS = [(), (3,), (2, 3), (1, 2, 3), (0,), (2, 0)]

SCALINGS = [
    None,
    sc.Linear(2.0),
    sc.YaRN(4.0, 64),
    sc.Llama3(8.0, 64),
    sc.Proportional(0.5),
]
#: valid only for rotary dimensions above 2
NTK_SCALINGS = [sc.NTK(4.0), sc.DynamicNTK(2.0, 64)]


def scaling_kind(base: dict[str, Any]) -> st.SearchStrategy[H]:
    # NTK's base exponent is dim / (dim - 2): it needs a rotary dimension above 2.
    out = [valid(s) if not isinstance(s, (sc.NTK, sc.DynamicNTK)) else maybe(s) for s in SCALINGS]
    out += [reject(sc.Linear, "a class"), reject("linear"), reject({"rope_type": "linear", "factor": 2.0}),
            reject(2.0), reject(True), reject([sc.Linear(2.0)]), reject(sc.RopeScaling)]
    out += [maybe(s) for s in NTK_SCALINGS]
    return st.one_of(st.sampled_from(out), _junk(True))


STRICT_ARRAY = type(xps.asarray(0))


def xp_of(a: Any) -> Any:
    return xps if isinstance(a, STRICT_ARRAY) else np


def np64(a: Any) -> np.ndarray:
    """A float64 NumPy copy of an accepted array argument (any backend, or nested lists)."""
    return np.asarray(to_numpy(a) if is_array(a) else a).astype(np.float64)


def check_array(result: Any, *, like: Any = None, shape: tuple[int, ...] | None = None, dtype: Any = None,
                backend: Any = None) -> np.ndarray:
    """The common properties: an array of ``like``'s library (or ``backend``), shape and dtype."""
    assert is_array(result), f"the result is not an array: {type(result)}"
    if like is not None:
        backend = xp_of(like) if is_array(like) else np
    if backend is not None:
        assert xp_of(result) is backend, f"the result is a {type(result)}, expected {backend.__name__}"
    if shape is not None:
        assert tuple(result.shape) == tuple(shape), f"shape {tuple(result.shape)} != {tuple(shape)}"
    if dtype is not None:
        assert result.dtype == dtype, f"dtype {result.dtype} != {dtype}"
    return np.asarray(to_numpy(result))


def int_positions(shape: tuple[int, ...], lo: int = -20, hi: int = 5000) -> st.SearchStrategy[np.ndarray]:
    return hnp.arrays(np.int64, shape, elements=st.integers(lo, hi))


def suffix_shapes(target: tuple[int, ...]) -> st.SearchStrategy[tuple[int, ...]]:
    """Shapes that broadcast to ``target`` without enlarging it."""
    cands = {target, ()}
    for k in range(len(target) + 1):
        suf = target[k:]
        cands.add(suf)
        cands.add(tuple(1 if i % 2 else s for i, s in enumerate(suf)))
    return st.sampled_from(sorted(cands))


def floats_array(shape: tuple[int, ...]) -> st.SearchStrategy[np.ndarray]:
    return hnp.arrays(np.float64, shape, elements=SMALL)


def maybe_list(values: list[Any]) -> st.SearchStrategy[H]:
    return st.sampled_from([maybe(v) for v in values])
