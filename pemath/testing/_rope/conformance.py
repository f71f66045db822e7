"""``check_rope_kernel``: drive a user's RoPE kernel over the inputs that break kernels, one table back.

Each case is a batch of queries ``x`` of shape ``(batch, seq, heads, head_dim)`` and integer
positions ``(batch, seq)``, built for a known failure: lengths one either side of a power
of two and of a block size, position 0, each dtype's exact-integer limit, the range where
CUDA's fast ``__sinf``/``__cosf`` stop reducing their argument, long positions, rows with
distinct offsets, HF-style left padding, packed sequences, and ``x`` as a strided view
(transposed memory, a slice of a fused qkv buffer, padded rows). Multi-axis specs get
their own cases (M-RoPE position ids for text, images and video; axial grids). The
kernel's output is judged by :func:`~pemath.testing.assert_rope_close` (or, for a backward
kernel, :func:`~pemath.testing.assert_rope_backward_close`), and a failure keeps the
oracle's finding in words.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from ..._errors import VacuousToleranceWarning
from ..._validate import check_choice, check_even_dim, check_int, check_size, show

__all__ = ["check_rope_kernel", "ConformanceReport", "ConformanceRow"]

_BACKENDS = ("numpy", "torch", "cupy", "jax")
_DTYPES = ("float32", "float16", "bfloat16", "float64")
#: CUDA's __sinf / __cosf reduce their argument accurately only below this (kekzl/imp #1630).
FAST_TRIG_LIMIT = 48039


@dataclasses.dataclass(frozen=True)
class _Case:
    name: str
    positions: np.ndarray  # (batch, seq) int64; multi-axis: (components, batch, seq) or (batch, seq, axes)
    cu_seqlens: np.ndarray | None = None
    memory: str = "contiguous"  # how x lies in memory (_MEMORY)


#: How x may lie in memory, besides contiguous: (the buffer's shape from x's (b, s, h, d), the view of x in it,
#: the buffer's parts outside x, which an in-place kernel must leave alone). Kernels that assume contiguity
#: (a flat index ``i * d + j``) read and write the wrong elements here.
_MEMORY: dict[str, tuple[Callable, Callable, tuple[Callable, ...]]] = {
    "transposed (b, h, s, d) memory": (
        lambda b, s, h, d: (b, h, s, d), lambda buf, h, d: buf.swapaxes(1, 2), ()),
    "k slice of a fused qkv buffer": (
        lambda b, s, h, d: (b, s, 3 * h, d), lambda buf, h, d: buf[:, :, h:2 * h, :],
        (lambda buf, h, d: buf[:, :, :h, :], lambda buf, h, d: buf[:, :, 2 * h:, :])),
    "rows padded to head_dim + 16": (
        lambda b, s, h, d: (b, s, h, d + 16), lambda buf, h, d: buf[..., :d], (lambda buf, h, d: buf[..., d:],)),
}


def _left_padded() -> np.ndarray:
    mask = np.ones((3, 12), dtype=np.int64)
    mask[0, :5] = 0
    mask[1, :1] = 0
    pos = np.cumsum(mask, axis=-1) - 1
    return np.where(mask == 0, 1, pos)  # HF: position_ids.masked_fill_(attention_mask == 0, 1)


def _cases(max_position: int) -> list[_Case]:
    row = lambda v: np.asarray(v, dtype=np.int64)[None, :]  # noqa: E731
    lengths = [5, 11, 16, 1]
    packed = np.concatenate([np.arange(n) for n in lengths])
    out = [_Case("one token at position 0", row([0])),
           _Case("one token at position 4096", row([4096]))]
    out += [_Case(f"sequence of {n}", row(np.arange(n))) for n in (31, 33, 127, 129, 4097)]
    limits = [255, 256, 257, 2047, 2048, 2049, 2**24 - 1, 2**24, 2**24 + 1]
    out.append(_Case("exact-integer limits of bf16, f16, f32",
                     row([0, 1] + [p for p in limits if p <= max_position])))
    fast = [FAST_TRIG_LIMIT - 1, FAST_TRIG_LIMIT, FAST_TRIG_LIMIT + 1, 50_000, 65_535, 65_536, 100_000]
    out.append(_Case(f"either side of {FAST_TRIG_LIMIT} (fast sin/cos)",
                     row([p for p in fast if p <= max_position])))
    long = [131_072, 262_144, 524_287, 999_999, 1_000_000]
    if max_position >= long[0]:
        out.append(_Case(f"long positions up to {max_position:g}", row([p for p in long if p <= max_position]
                                                                     + [max_position])))
    far = min(4096, max_position - 16)
    out.append(_Case(f"rows offset by 0, 100, {far}", np.arange(17)[None, :] + np.array([[0], [100], [far]])))
    out.append(_Case("left padding (HF position_ids)", _left_padded()))
    out.append(_Case("packed sequences (cu_seqlens)", row(packed),
                     np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)))
    strided = np.arange(17)[None, :] + np.array([[0], [100]])
    out += [_Case(f"strided x: {kind}", strided, memory=kind) for kind in _MEMORY]
    return [c for c in out if c.positions.size and c.positions.max() <= max_position]


def _text(n: int, p: np.ndarray) -> np.ndarray:
    """Text tokens of M-RoPE: every one of the ``n`` components equal to the position, ``(n, batch, seq)``."""
    p = np.asarray(p, dtype=np.int64)
    p = p[None, :] if p.ndim == 1 else p
    return np.repeat(p[None], n, axis=0)


def _image(n: int, h: int, w: int, frames: int = 1, start: int = 5) -> np.ndarray:
    """Qwen2-VL's position ids for ``start`` text tokens, then ``frames`` x h x w patches (t per frame, then the row
    and column offsets), then 5 text tokens from one past the largest: ``(n, 1, seq)``."""
    f, i, j = (a.reshape(-1) for a in np.meshgrid(np.arange(frames), np.arange(h), np.arange(w), indexing="ij"))
    vis = [start + f, start + i, start + j][-n:] if n <= 3 else None
    if vis is None:
        raise ValueError(f"check_rope_kernel builds M-RoPE positions for 2 or 3 components, got {n}")
    after = int(max(v.max() for v in vis)) + 1
    comps = [np.concatenate([np.arange(start), v, np.arange(after, after + 5)]) for v in vis]
    return np.stack(comps)[:, None, :].astype(np.int64)


def _grid(shape: tuple[int, ...], offset: int = 0) -> np.ndarray:
    """Axial coordinates of a grid in row-major token order: ``(1, tokens, axes)``."""
    g = np.meshgrid(*[np.arange(k) + offset for k in shape], indexing="ij")
    return np.stack([a.reshape(-1) for a in g], axis=-1)[None].astype(np.int64)


def _multi_axis_cases(spec: Any, max_position: int) -> list[_Case]:
    """Cases for M-RoPE (positions ``(components, batch, seq)``) or axial RoPE (``(batch, seq, axes)``)."""
    limits = [p for p in [0, 1, 255, 256, 257, 2047, 2048, 2049, 2**24 - 1, 2**24, 2**24 + 1] if p <= max_position]
    if spec.mrope_section is not None:
        n = len(spec.mrope_section)
        out = [_Case("text tokens 0..32 (every component equal)", _text(n, np.arange(33))),
               _Case("one text token at position 4096", _text(n, [4096])),
               _Case("an image of 4 x 6 patches between text tokens", _image(n, 4, 6)),
               _Case("an image of 37 x 37 patches", _image(n, 37, 37))]
        if n == 3:
            out.append(_Case("a video of 2 frames of 3 x 4 patches", _image(n, 3, 4, frames=2)))
        out += [_Case("text at the exact-integer limits of bf16, f16, f32", _text(n, limits)),
                _Case("text rows offset by 0, 100, 4096", _text(n, np.arange(17)[None, :] + np.array([[0], [100],
                                                                                                     [4096]]))),
                _Case("an image after 4096 text tokens", _image(n, 4, 6, start=4096))]
        if spec.inv_freq is not None and n == 2:  # explicit pixel frequencies: timm's coordinates in [-1, 1]
            from ...rope.vision import pixel_positions

            out += [_Case(f"pixel coordinates of a {h} x {w} map (float32 linspace in timm)",
                          pixel_positions((h, w))[:, None, :]) for h, w in ((1, 1), (7, 11), (37, 37))]
        out += [_Case(f"strided x: {kind}", out[2].positions, memory=kind) for kind in _MEMORY]
        return [c for c in out if np.max(np.abs(c.positions)) <= max_position]
    n = len(spec.axial_dims)
    sizes = {1: [(33,), (129,)], 2: [(5, 6), (37, 37), (1, 129)], 3: [(2, 3, 4), (4, 8, 8)]}.get(n, [(3,) * n])
    out = [_Case("one patch at the origin", _grid((1,) * n))]
    out += [_Case("a grid of " + " x ".join(map(str, g)), _grid(g)) for g in sizes]
    out.append(_Case("a grid at offset 4096", _grid(sizes[0], offset=4096)))
    lim = np.array(limits, dtype=np.int64)
    out.append(_Case("coordinates at the exact-integer limits of bf16, f16, f32",
                     np.stack([np.roll(lim, k) for k in range(n)], axis=-1)[None]))
    out += [_Case(f"strided x: {kind}", out[1].positions, memory=kind) for kind in _MEMORY]
    return [c for c in out if np.max(np.abs(c.positions)) <= max_position]


@dataclasses.dataclass(frozen=True)
class ConformanceRow:
    """One case in one dtype: passed or not, the oracle's finding in words, and its whole report."""

    case: str
    dtype: str
    shape: tuple[int, ...]
    passed: bool
    finding: str
    message: str = ""  # the AssertionError of assert_rope_close for a failed case ("" otherwise)


@dataclasses.dataclass(frozen=True)
class ConformanceReport:
    """The table returned by :func:`check_rope_kernel`: print it, or ``assert report.passed, report``."""

    rows: tuple[ConformanceRow, ...]
    spec: Any

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.rows)

    @property
    def failures(self) -> tuple[ConformanceRow, ...]:
        return tuple(r for r in self.rows if not r.passed)

    def __str__(self) -> str:
        w_case = max(len(r.case) for r in self.rows)
        w_dt = max(len(r.dtype) for r in self.rows)
        lines = [f"RoPE kernel conformance against {self.spec!r}: {len(self.rows) - len(self.failures)} of "
                 f"{len(self.rows)} cases pass"]
        for r in self.rows:
            mark = "pass" if r.passed else "FAIL"
            lines.append(f"  {mark}  {r.case:<{w_case}}  {r.dtype:<{w_dt}}  {r.finding}".rstrip())
        return "\n".join(lines)

    def assert_ok(self) -> None:
        """Raise ``AssertionError`` with the table when a case failed."""
        __tracebackhide__ = True
        if not self.passed:
            raise AssertionError(str(self))


def _backend(name: str, device: Any) -> tuple[Callable[[np.ndarray, str], Any], Callable[[np.ndarray], Any]]:
    """(float32 NumPy, dtype name) -> the backend's array; int64 NumPy -> the backend's positions."""
    if name == "numpy":
        def to_float(a: np.ndarray, dt: str) -> Any:
            if dt == "bfloat16":
                import ml_dtypes  # ImportError: reported in the row

                return a.astype(ml_dtypes.bfloat16)
            return a.astype(dt)

        return to_float, lambda p: p
    if name == "torch":
        import torch

        dev = device or "cpu"
        return (lambda a, dt: torch.from_numpy(a).to(device=dev, dtype=getattr(torch, dt)),
                lambda p: torch.from_numpy(p).to(device=dev))
    if name == "cupy":
        import cupy

        return (lambda a, dt: cupy.asarray(a).astype(dt)), (lambda p: cupy.asarray(p))
    import jax.numpy as jnp

    return (lambda a, dt: jnp.asarray(a).astype(dt)), (lambda p: jnp.asarray(p))


def _copy(a: Any) -> Any:
    clone = getattr(a, "clone", None)  # torch
    return clone() if callable(clone) else a.copy() if hasattr(a, "copy") else a


def _same(a: Any, b: Any) -> bool:
    """Equal element for element (NaN equal to NaN), on the arrays' own backend."""
    from ... import _compat

    xp = _compat.namespace(a, b)
    return bool(xp.all(xp.logical_or(a == b, xp.logical_and(xp.isnan(a), xp.isnan(b)))))


def _same_buffer(a: Any, b: Any) -> bool:
    """Whether two arrays share memory (an in-place kernel returning x itself or a view of it)."""
    if a is b:
        return True
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return bool(np.shares_memory(a, b))
    storage = getattr(a, "untyped_storage", None)  # torch
    if callable(storage) and callable(getattr(b, "untyped_storage", None)):
        return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()
    ptr_a, ptr_b = getattr(getattr(a, "data", None), "ptr", None), getattr(getattr(b, "data", None), "ptr", None)
    return ptr_a is not None and ptr_a == ptr_b  # CuPy: the same device buffer


def _finding(message: str) -> str:
    """The oracle's finding in words: the named diagnosis, else what the output measures, else the first line."""
    lines = message.splitlines()
    diagnosis = next((ln.removeprefix("Diagnosis: ") for ln in lines if ln.startswith("Diagnosis: ")), None)
    measured = [ln.removeprefix("Measured from the output: ") for ln in lines
                if ln.startswith("Measured from the output: ")]
    if diagnosis and not diagnosis.startswith("no known bug"):
        return diagnosis.removeprefix("the output matches ").removesuffix(" (max error within tolerance)")
    if measured:
        return "measured: " + "; ".join(measured)
    return diagnosis or lines[0]


def check_rope_kernel(
    fn: Callable[..., Any],
    spec: Any = None,
    *,
    layout: str | None = None,
    base: float | None = None,
    rotary_dim: int | None = None,
    scaling: Any = None,
    head_dim: int | None = None,
    heads: int = 2,
    dtypes: tuple[str, ...] = ("float32", "float16", "bfloat16"),
    backend: str = "numpy",
    device: Any = None,
    max_position: int = 1_000_000,
    seed: int = 0,
    direction: str = "forward",
) -> ConformanceReport:
    """Run a RoPE kernel over the inputs that break kernels and return a conformance table.

    ``fn(x, positions)`` must return RoPE of ``x`` (or return ``None`` after rotating ``x``
    in place), with ``x`` of shape ``(batch, seq, heads, head_dim)`` in the case's dtype and
    ``positions`` integer ``(batch, seq)`` on the same backend; a kernel with another
    convention is wrapped in a lambda. If ``fn`` has a ``cu_seqlens`` parameter it also
    receives the int32 cumulative sequence lengths of the packed case (``None`` elsewhere).

    Cases: lengths 1 (position 0, and a decode token at 4096), 31, 33, 127, 129, 4097; the
    float16, bfloat16 and float32 exact-integer limits (256, 2048, 2**24, where at most
    ``max_position``); positions either side of 48039, beyond which CUDA's fast
    ``__sinf``/``__cosf`` lose their range reduction; long positions up to
    ``max_position``; a batch with distinct offsets; HF-style left padding; packed
    sequences. Each runs in every dtype of ``dtypes``; partial rotary is exercised when the
    spec's rotary dim is below ``head_dim``; ``x`` laid out in strided memory (a transposed
    ``(b, h, s, d)`` buffer, the k slice of a fused qkv buffer, rows padded beyond
    ``head_dim``), where an in-place kernel must also leave the rest of the buffer alone. A
    kernel that writes into its input while returning a new array fails the case.

    An M-RoPE spec (``mrope_section``) is swept with positions ``(components, batch, seq)``
    as vLLM's ``MRotaryEmbedding`` takes them (Qwen2-VL's position ids: text tokens with
    every component equal, an image of 4 x 6 and one of 37 x 37 patches between text
    tokens, a video, text at the exact-integer limits, offsets, an image after 4096 text
    tokens; pixel coordinates in [-1, 1] for timm's explicit frequencies); an axial spec
    (``axial_dims``) with coordinates ``(batch, seq, axes)`` (a patch at the origin, grids
    such as 5 x 6, 37 x 37 and 1 x 129, a grid at offset 4096, coordinates at the limits);
    both also with strided ``x``.

    With ``direction="backward"``, ``fn(dy, positions)`` is the backward kernel and must
    return ``dx``, the transposed rotation (:func:`~pemath.testing.assert_rope_backward_close`).

    Parameters
    ----------
    fn : callable
        The kernel, as above.
    spec : pemath.rope.Spec, optional
        The RoPE the kernel implements (e.g. ``rope.from_hf_config(config)``), or the
        keywords ``layout``, ``base``, ``rotary_dim``, ``scaling``.
    head_dim : int, optional
        Features per head; default: the spec's ``head_dim``, else 128.
    heads : int
        Heads per token (default 2).
    dtypes : tuple of str
        Among ``"float32"``, ``"float16"``, ``"bfloat16"``, ``"float64"``.
    backend : {"numpy", "torch", "cupy", "jax"}
        Where the inputs are made; ``device`` (e.g. ``"cuda"``) for torch.
    max_position : int
        The largest position tried (default 10**6, at least 4097).
    seed : int
        For the random ``x``.
    direction : {"forward", "backward"}
        Which pass ``fn`` computes.

    Returns
    -------
    ConformanceReport
        ``.rows`` (case, dtype, shape, passed, finding, and for a failed assert the whole
        message), ``.passed``, ``.failures``,
        ``str()`` a table, ``.assert_ok()`` raising ``AssertionError`` with the table.

    Examples
    --------
    >>> import numpy as np
    >>> from pemath import rope
    >>> from pemath.testing import check_rope_kernel
    >>> report = check_rope_kernel(lambda x, p: rope.apply(x, p[:, :, None], layout="half"),
    ...                            layout="half", head_dim=64, dtypes=("float32",))
    >>> report.passed, len(report.rows)
    (True, 16)
    """
    __tracebackhide__ = True
    from ...rope.spec import resolve
    from .. import assert_rope_backward_close, assert_rope_close

    if not callable(fn):
        raise TypeError(f"fn must be a callable fn(x, positions), got {show(fn)}")
    spec = resolve(spec, "check_rope_kernel", layout=layout, base=base, rotary_dim=rotary_dim, scaling=scaling)
    if spec.out_layout is not None:
        raise ValueError(f"check_rope_kernel checks RoPE that keeps its layout on output, got {spec!r}")
    d = check_even_dim("head_dim", head_dim) if head_dim is not None else (spec.head_dim or 128)
    if spec.head_dim is not None and d != spec.head_dim:
        raise ValueError(f"head_dim={d} contradicts the spec's head_dim={spec.head_dim}")
    spec.rotary_dim_for(d)  # ValueError: a rotary dim larger than the head dim
    heads = check_size("heads", heads, maximum=1024)
    max_position = check_int("max_position", max_position, minimum=4097, maximum=2**53)
    seed = check_int("seed", seed, minimum=0, maximum=2**63 - 1)
    if isinstance(dtypes, str) or not isinstance(dtypes, (tuple, list)) or not dtypes:
        raise TypeError(f"dtypes must be a non-empty tuple of dtype names {_DTYPES}, got {show(dtypes)}")
    bad = [t for t in dtypes if not isinstance(t, str) or t not in _DTYPES]
    if bad:
        raise ValueError(f"dtypes must be among {_DTYPES}, got {bad!r}")
    check_choice("backend", backend, _BACKENDS)
    judge = assert_rope_backward_close if check_choice("direction", direction, ("forward", "backward")) == "backward" \
        else assert_rope_close
    to_float, to_pos = _backend(backend, device)
    try:
        takes_cu = "cu_seqlens" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        takes_cu = False
    rng = np.random.default_rng(seed)
    rows: list[ConformanceRow] = []
    cases = _multi_axis_cases(spec, max_position) if spec.is_multi_axis else _cases(max_position)
    for case in cases:
        batch, seq = _batch_seq(spec, case.positions)
        x32 = rng.standard_normal((batch, seq, heads, d)).astype(np.float32)
        for dt in dtypes:
            if case.memory != "contiguous" and backend == "jax":
                continue  # JAX arrays have no strides to get wrong, and are never written in place
            row = _run(fn, spec, case, x32, dt, to_float, to_pos, takes_cu, judge)
            if not row.passed and case.memory != "contiguous":
                flat = _run(fn, spec, dataclasses.replace(case, memory="contiguous"), x32, dt, to_float, to_pos,
                            takes_cu, judge)
                if flat.passed:  # the same input, contiguous, passes: name the cause
                    row = dataclasses.replace(row, finding="fails only with x not contiguous (the same input "
                                              f"contiguous passes): the kernel ignores x's strides; {row.finding}")
            rows.append(row)
    return ConformanceReport(tuple(rows), spec)


def _batch_seq(spec: Any, positions: np.ndarray) -> tuple[int, int]:
    if spec.mrope_section is not None:
        return positions.shape[1], positions.shape[2]
    return positions.shape[0], positions.shape[1]


def _for_assert(spec: Any, positions: np.ndarray) -> np.ndarray:
    """The case's positions against x of shape (batch, seq, heads, d), as assert_rope_close takes them."""
    if spec.mrope_section is not None:
        return positions[..., None]  # (components, batch, seq, 1)
    if spec.axial_dims is not None:
        return positions[:, :, None, :]  # (batch, seq, 1, axes)
    return positions[:, :, None]


def _inputs(case: _Case, x32: np.ndarray, dt: str, to_float: Callable) -> tuple[Any, Any, tuple]:
    """``(x, buffer, outside)``: x in the case's memory layout, the buffer it is a view of (None when contiguous)
    and the buffer's parts outside x as they were (an in-place kernel must leave them alone)."""
    if case.memory == "contiguous":
        return to_float(x32, dt), None, ()
    shape_of, view, outside = _MEMORY[case.memory]
    b, s, h, d = x32.shape
    buf32 = np.random.default_rng(1).standard_normal(shape_of(b, s, h, d)).astype(np.float32)
    view(buf32, h, d)[...] = x32
    buf = to_float(buf32, dt)
    return view(buf, h, d), buf, tuple((part, _copy(part(buf, h, d))) for part in outside)


def _run(fn, spec, case, x32, dt, to_float, to_pos, takes_cu, assert_rope_close) -> ConformanceRow:
    shape = tuple(x32.shape)
    try:
        x, buf, outside = _inputs(case, x32, dt, to_float)
    except (ImportError, TypeError, ValueError) as exc:
        return ConformanceRow(case.name, dt, shape, False, f"could not make {dt} inputs: {exc}")
    x_seen = _copy(x)  # the exact values the kernel received
    kwargs = {"cu_seqlens": to_pos(case.cu_seqlens) if case.cu_seqlens is not None else None} if takes_cu else {}
    try:
        out = fn(x, to_pos(case.positions), **kwargs)
    except Exception as exc:  # the kernel's own error is the finding
        return ConformanceRow(case.name, dt, shape, False, f"the kernel raised {type(exc).__name__}: {exc}")
    if out is None:
        out = x
    elif not _same_buffer(out, x) and not _same(x, x_seen):
        return ConformanceRow(case.name, dt, shape, False, "the kernel returned a new array but also overwrote its "
                              "input x")
    h, d = shape[2], shape[3]
    for part, before in outside:
        if not _same(part(buf, h, d), before):
            return ConformanceRow(case.name, dt, shape, False, f"the kernel wrote outside x in the buffer x is a view "
                                  f"of ({case.memory}): it assumed x contiguous")
    if tuple(getattr(out, "shape", ())) != shape:
        return ConformanceRow(case.name, dt, shape, False, f"the output has shape {tuple(getattr(out, 'shape', ()))}, "
                              f"x {shape}")
    seq_len = int(np.max(case.positions)) + 1  # HF's length for the length-dependent scalings
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", VacuousToleranceWarning)
        try:
            assert_rope_close(out, x_seen, _for_assert(spec, case.positions), spec=spec, seq_len=seq_len)
        except AssertionError as exc:
            return ConformanceRow(case.name, dt, shape, False, _finding(str(exc)), str(exc))
        except (TypeError, ValueError) as exc:  # e.g. an output of another shape
            return ConformanceRow(case.name, dt, shape, False, f"the output is not checkable: {exc}")
    vac = [w for w in caught if issubclass(w.category, VacuousToleranceWarning)]
    for w in caught:
        if w not in vac:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    note = ""
    if vac:
        m = re.search(r"cannot fail at (\d+) of (\d+) elements", str(vac[0].message))
        count = f"{m.group(1)} of {m.group(2)}" if m else "some"
        note = f"passes; {count} elements unchecked (an honest float32 phase is uncertain by radians there)"
    return ConformanceRow(case.name, dt, shape, True, note or "within the derived tolerance")
