"""What ``rope.apply`` runs, bound to the kernel the proofs trace.

``rope.elementwise_form`` traces :func:`pemath.rope._core.rotate` (the portable kernel) on symbolic arrays. On
NumPy input ``rope.apply`` runs another kernel: the cache-blocked one (:mod:`pemath.rope._fast_numpy`, a real and
a complex variant) or, where numba is installed, a compiled one (:mod:`pemath.rope._fast_numba`). Neither can be
traced, so each is bound by an exhaustive equality check against the portable kernel over a stated finite domain
(:data:`DOMAIN`): every case below, with the kernel's contract ``(x, pos, freq, factor, layout, r, out)``.

Equal means bitwise, except one documented case: the complex kernel (float32, contiguous features) may round a
float64 product computed with a fused multiply-add, so a float32 element may differ by one ulp where the portable
kernel's float64 value lies within 2^-50 (relative) of a float32 rounding tie. Nothing else is tolerated.

The CUDA kernel (:mod:`pemath.rope._fast_cupy`) is bound by the ``cupy`` checks where a device exists.
"""

from __future__ import annotations

import itertools

import numpy as np

from ..rope import _core, _fast_numba, _fast_numpy
from ._model import CheckFailure

__all__ = ["DOMAIN", "cases", "check_kernels"]

_DTYPES = (np.float16, np.float32, np.float64)
_LAYOUTS = ("interleaved", "half")
_STORAGE = ("contiguous", "strided features", "transposed rows")
_ROTARY = ("all", "partial", "one pair")
_OUT = ("new", "given", "in place")
_HEADS = (2, 6, 16, 64)
_LEADS = ((1,), (5,), (2, 3, 7))
_POSITIONS = ("per row", "last axis", "scalar")

#: The stated domain, in words (the check's summary repeats it).
DOMAIN = ("dtype float16/32/64 x layout interleaved/half x storage contiguous/strided features/transposed rows x "
          "rotary dim all/partial/one pair x out new/given/in place (every combination, 162 cases), each with a "
          "head dim from {2, 6, 16, 64}, leading shape from {(1,), (5,), (2, 3, 7)}, positions per row, along the "
          "last axis or one scalar (integers from -2^31 to 2^31), attention factor 1 or 0.8 and frequencies of "
          "either sign (the inverse), taken in turn; plus one case per dtype and layout of 327,680 elements (many "
          "blocks, several threads)")


def _head(rotary: str, k: int) -> tuple[int, int]:
    d = _HEADS[k % len(_HEADS)]
    if rotary == "all" or d == 2:
        return d, d
    if rotary == "one pair":
        return d, 2
    return d, d - 2 if d <= 6 else d // 2


def _x(seed: int, lead: tuple[int, ...], d: int, dtype: type, storage: str) -> np.ndarray:
    """Random features of that storage, the same for the same seed: a contiguous array, every other feature of a
    wider one, or rows transposed (a non-C-contiguous layout)."""
    rng = np.random.default_rng(seed)
    if storage == "strided features":
        wide = rng.standard_normal((*lead, 2 * d)).astype(dtype)
        return wide[..., ::2]
    if storage == "transposed rows" and len(lead) > 1:
        base = rng.standard_normal((*lead[::-1], d)).astype(dtype)
        return np.moveaxis(base, tuple(range(len(lead))), tuple(range(len(lead)))[::-1])
    return rng.standard_normal((*lead, d)).astype(dtype)


def _positions(rng: np.random.Generator, lead: tuple[int, ...], how: str) -> np.ndarray:
    shape = {"per row": lead, "last axis": lead[-1:], "scalar": ()}[how]
    return rng.integers(-2**31, 2**31, size=shape, dtype=np.int64)


def cases() -> list[dict]:
    """Every case of :data:`DOMAIN`, built from one seed."""
    rng = np.random.default_rng(20261207)
    out = []
    for k, (dtype, layout, storage, rotary, mode) in enumerate(
            itertools.product(_DTYPES, _LAYOUTS, _STORAGE, _ROTARY, _OUT)):
        d, r = _head(rotary, k)
        lead = _LEADS[k % len(_LEADS)]
        x = _x(k, lead, d, dtype, storage)
        freq = 1.0 / 10000.0 ** (np.arange(r // 2) * 2.0 / r)
        sign = -1.0 if (k // 2) % 2 else 1.0
        out.append(dict(x=x, fresh=(k, lead, d, dtype, storage), pos=_positions(rng, lead, _POSITIONS[k % 3]),
                        freq=sign * freq, factor=0.8 if k % 2 else 1.0, layout=layout, r=r, mode=mode))
    for dtype, layout in itertools.product(_DTYPES, _LAYOUTS):
        x = rng.standard_normal((40, 128, 64)).astype(dtype)
        out.append(dict(x=x, fresh=None, pos=np.arange(128, dtype=np.int64) * 977 + 3, freq=1.0 / 10000.0 ** (np.arange(32) / 32),
                        factor=1.0, layout=layout, r=64, mode="new"))
    return out


def _portable(case: dict, x: np.ndarray) -> np.ndarray:
    return _core.rotate_into(x, _pos(case), case["freq"], case["factor"], case["layout"], case["r"], None,
                             xp=np, wdt=np.float64)


def _pos(case: dict) -> np.ndarray:
    return case["pos"].astype(np.float64)  # as rope.apply hands positions to every kernel (exact below 2^53)


def _run(kernel, case: dict) -> np.ndarray:
    # in place: a fresh x of the same values and the same storage, rotated into itself
    x = _x(*case["fresh"]) if case["mode"] == "in place" else case["x"]
    if case["mode"] == "new":
        return kernel(x, _pos(case), case["freq"], case["factor"], case["layout"], case["r"], None)
    out = x if case["mode"] == "in place" else np.full(x.shape, np.nan, dtype=x.dtype)
    got = kernel(x, _pos(case), case["freq"], case["factor"], case["layout"], case["r"], out)
    if got is not out:
        raise CheckFailure("the kernel did not return the out array it was given")
    return out


def _compare(name: str, got: np.ndarray, case: dict, i: int) -> int:
    """0 when bitwise equal, else the number of float32 elements one ulp apart at a float64 rounding tie (the
    complex kernel's documented FMA case); anything else is a CheckFailure."""
    want = _portable(case, case["x"])
    if got.shape != want.shape or got.dtype != want.dtype:
        raise CheckFailure(f"{name} kernel, case {i}: shape/dtype {got.shape} {got.dtype}, portable {want.shape} "
                           f"{want.dtype}")
    g, w = np.ascontiguousarray(got), np.ascontiguousarray(want)
    bits = {2: np.uint16, 4: np.uint32, 8: np.uint64}[g.dtype.itemsize]
    differ = g.view(bits) != w.view(bits)
    if not differ.any():
        return 0
    where = tuple(int(v) for v in np.argwhere(differ)[0])
    what = (f"{name} kernel, case {i} ({case['layout']}, {g.dtype}, r = {case['r']} of {g.shape[-1]}, out "
            f"{case['mode']}): element {where} is {g[where]!r}, the portable kernel's {w[where]!r}")
    if g.dtype != np.float32:
        raise CheckFailure(what)
    wide = _portable(case, case["x"].astype(np.float64))[differ]
    lo, hi = np.minimum(g[differ], w[differ]), np.maximum(g[differ], w[differ])
    mid = (lo.astype(np.float64) + hi.astype(np.float64)) / 2
    if not (np.all(np.nextafter(lo, np.float32(np.inf)) == hi) and np.all(np.abs(wide - mid) <= 2.0**-50 * np.abs(wide))):
        raise CheckFailure(what + " (not a one-ulp rounding tie)")
    return int(differ.sum())


def check_kernels() -> str:
    """Each kernel ``rope.apply`` dispatches NumPy input to, against the portable kernel, on :data:`DOMAIN`."""
    all_cases = cases()
    kernels = [("numpy", _fast_numpy.rotate_into)]
    numba = _fast_numba.available()
    if numba:
        kernels.append(("numba", _fast_numba.rotate_into))
    counts = {}
    for name, kernel in kernels:
        n, ties = 0, 0
        for i, case in enumerate(all_cases):
            if name == "numba" and not _fast_numba.supports(case["x"], None if case["mode"] == "new" else case["x"]):
                continue  # apply() sends this case to the NumPy kernel
            ties += _compare(name, _run(kernel, case), case, i)
            n += 1
        counts[name] = (n, ties)
    said = "; ".join(f"{k}: {n} cases equal" + (f" ({t} float32 elements one ulp apart at a rounding tie)" if t else
                                                 ", bitwise") + (" (the C-contiguous float32/64 inputs it takes)"
                                                                 if k == "numba" else "")
                     for k, (n, t) in counts.items())
    return (f"{said}{'' if numba else '; numba: not installed, not checked'} against the traced kernel "
            f"(_core.rotate) over {DOMAIN}")
