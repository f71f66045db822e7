r"""The oracle for RoPE whose pairs follow different position components: M-RoPE and axial N-D RoPE.

Both are plain RoPE pair by pair: rotated pair :math:`i` turns by :math:`p_{c(i)}\,\theta_i`,
where :math:`c(i)` is the position component that drives it (M-RoPE's temporal, height
and width sections; an axial spec's row, column, frame groups) and :math:`\theta_i` its
frequency. So the derived tolerance of each element is the single-axis one
(``_tolerance.pair_scale``) at *its own* component's position, and the output can be
measured the same way: for every pair, which component's positions explain the angles the
kernel applied. A failure names the usual structural mistakes (the other section layout,
text positions for image tokens, axes swapped, the other grouping or frequency scheme,
the other pair layout) and prints the measured component of every pair.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import numpy as np

from ... import _compat
from .._core.arrays import as_host, check_finite, given_positions
from .._core.report import compare, diagnosis_lines, first_match, fmt, index_of, mismatch_line
from .._core.tolerance import frequency_constants, unit_roundoff
from .tolerance import pair_bounds, pair_scale

__all__ = ["assert_multi_axis"]


@dataclasses.dataclass(frozen=True)
class Block:
    """Features ``[start, start + r)`` rotated as plain RoPE in ``layout``; pair ``i`` follows ``comp[i]``."""

    start: int
    r: int
    layout: str
    freq: np.ndarray
    cfreq: np.ndarray
    comp: np.ndarray


def blocks_of(spec: Any, d: int, seq_len: Any) -> tuple[list[Block], float, int]:
    """``(blocks, attention factor, number of components)`` of an M-RoPE, axial or single-axis spec."""
    from ...rope.axial import axis_frequencies, mrope_components

    r = spec.rotary_dim_for(d)
    if spec.axial_dims is not None:
        dims = list(spec.axial_dims)
        n = len(dims)
        freqs = axis_frequencies(dims, spec.base, spec.axial_frequencies)
        if spec.axial_frequencies == "strided":
            full = frequency_constants(sum(dims), spec.base, None, None)
            consts = [full[a::n] for a in range(n)]
        else:
            consts = [frequency_constants(k, spec.base, None, None) for k in dims]
        comps = [np.full(k // 2, a, dtype=np.int64) for a, k in enumerate(dims)]
        if spec.axial_grouping == "pairs":
            return [Block(0, sum(dims), spec.layout, np.concatenate(freqs), np.concatenate(consts),
                          np.concatenate(comps))], 1.0, n
        starts = np.concatenate([[0], np.cumsum(dims)[:-1]]).tolist()
        return [Block(int(s), k, spec.layout, f, c, cp) for s, k, f, c, cp in zip(starts, dims, freqs, consts, comps)], \
            1.0, n
    inner = spec.replace(out_layout=None, mrope_section=None, mrope_interleaved=False)
    freq, factor = inner.frequencies(r, seq_len)
    cfreq = frequency_constants(r, inner.base, inner.scaling, seq_len, explicit=inner.inv_freq is not None)
    if spec.mrope_section is not None:
        comp = mrope_components(spec.mrope_section, interleaved=spec.mrope_interleaved)
        return [Block(0, r, spec.layout, np.asarray(freq), cfreq, comp)], float(factor), len(spec.mrope_section)
    return [Block(0, r, spec.layout, np.asarray(freq), cfreq, np.zeros(r // 2, dtype=np.int64))], float(factor), 1


def component_positions(spec: Any, positions: Any, lead: tuple[int, ...]) -> np.ndarray:
    """``(components, rows)`` float64 positions: M-RoPE's leading component axis, axial's trailing one."""
    host = as_host("positions", positions, floating=False)[0] if _is_array(positions) else np.asarray(positions)
    if spec.mrope_section is not None:
        n = len(spec.mrope_section)
        if host.ndim < 1 or host.shape[0] != n:
            raise ValueError(f"positions must have a leading axis of {n} components (one per mrope_section entry: "
                             f"HF's position_ids[:, :, None, :]), got shape {host.shape}")
        comps = [host[k] for k in range(n)]
        label = "positions[{}]"
    elif spec.axial_dims is not None:
        n = len(spec.axial_dims)
        if host.ndim < 1 or host.shape[-1] != n:
            raise ValueError(f"positions must have a trailing axis of {n} coordinates (one per axial_dims entry), "
                             f"got shape {host.shape}")
        comps = [host[..., k] for k in range(n)]
        label = "positions[..., {}]"
    else:
        comps, label = [host], "positions"
    out = [np.broadcast_to(given_positions(p, lead, name=label.format(k)), lead).reshape(-1) for k, p in
           enumerate(comps)]
    return np.stack(out).astype(np.float64)


def _is_array(a: Any) -> bool:
    from ... import _compat

    return _compat.is_array(a)


def multi_bound(x2: np.ndarray, pos: np.ndarray, blocks: list[Block], factor: float, u_t: float) -> np.ndarray:
    """The derived bound of every element: each pair at its own component's position."""
    out = u_t * np.abs(x2)
    for b in blocks:
        k = np.empty((x2.shape[0], b.r // 2), dtype=np.float64)
        for c in np.unique(b.comp):
            idx = b.comp == c
            k[:, idx] = pair_scale(pos[c], b.freq[idx], b.cfreq[idx], factor, u_t)
        out[:, b.start:b.start + b.r] = pair_bounds(x2[:, b.start:b.start + b.r], k, b.layout, b.r, u_t)
    return out


def bound_for(spec: Any, x2: np.ndarray, pos: np.ndarray, seq_len: Any, u_t: float) -> np.ndarray:
    """:func:`multi_bound` of a spec, written in its output layout."""
    from ... import rope

    blocks, factor, _ = blocks_of(spec, int(x2.shape[-1]), seq_len)
    tol = multi_bound(x2, pos, blocks, factor, u_t)
    if spec.out_layout is not None:
        r = spec.rotary_dim_for(int(x2.shape[-1]))
        tol = np.asarray(rope.convert_layout(tol, src=spec.layout, dst=spec.out_layout, rotary_dim=r))
    return tol


def measured_components(a2: np.ndarray, x2: np.ndarray, pos: np.ndarray, block: Block, factor: float,
                        u_t: float) -> np.ndarray:
    """Per pair of ``block``: the component whose positions explain every angle the kernel applied
    (-1: none does; -2: several do, e.g. equal components; -3: none does, but the pair is not rotated at all, as
    position 0 for every row would leave it, e.g. a kernel that reads a fourth position stream holding 0)."""
    from .._core.measure import wrap as _wrap
    from .recover import _slack, recover_host

    rec = recover_host(a2[:, block.start:block.start + block.r], x2[:, block.start:block.start + block.r], u_t,
                       "float64", (block.r,), block.layout, block.r)
    out = np.full(block.r // 2, -1, dtype=np.int64)
    fits = []
    for c in range(pos.shape[0]):
        expect = pos[c][:, None] * block.freq[None, :]
        res = np.abs(_wrap(np.nan_to_num(rec.angle, nan=0.0) - expect))
        ok = (res <= _slack(rec, pos[c], block.freq)) | ~np.isfinite(rec.angle)
        fits.append(np.all(ok, axis=0))
    fits = np.array(fits)  # (components, pairs)
    count = fits.sum(axis=0)
    out[count == 1] = np.argmax(fits, axis=0)[count == 1]
    out[count > 1] = -2
    zero = np.zeros_like(pos[0])
    still = np.abs(_wrap(np.nan_to_num(rec.angle, nan=0.0)))
    unrotated = np.all((still <= _slack(rec, zero, block.freq)) | ~np.isfinite(rec.angle), axis=0)
    out[(count == 0) & unrotated] = -3
    return out


def _pattern(comp: np.ndarray, names: str) -> str:
    return "".join(names[c] if c >= 0 else {-1: "?", -2: "*", -3: "0"}[int(c)] for c in comp)


def assert_multi_axis(actual: Any, x: Any, positions: Any, spec: Any, seq_len: Any, user: Any) -> None:
    """assert_rope_close for M-RoPE, axial and out_layout specs (a resolved Spec)."""
    __tracebackhide__ = True
    from ... import rope

    xh, _ = as_host("x", x)
    check_finite("x", xh)
    a, t_name = as_host("actual", actual)
    if tuple(a.shape) != tuple(xh.shape):
        raise ValueError(f"actual has shape {tuple(a.shape)}, but x has shape {tuple(xh.shape)}")
    if _compat.is_array(positions) and not isinstance(positions, np.ndarray):
        # torch, CuPy, JAX, MLX positions: read on the host like x and actual (the oracle works in NumPy)
        positions = _compat.to_numpy(positions)
    d = int(xh.shape[-1])
    lead = tuple(xh.shape[:-1])
    u_t = unit_roundoff(t_name)
    blocks, factor, n = blocks_of(spec, d, seq_len)
    pos = component_positions(spec, positions, lead)
    x2 = xh.reshape(-1, d)
    expected = np.asarray(rope.apply(xh, positions, spec=spec, seq_len=seq_len)).reshape(x2.shape)
    tol = bound_for(spec, x2, pos, seq_len, u_t)
    if user is not None:
        tol = user[1] + user[0] * np.abs(expected)
    a2 = a.reshape(x2.shape)
    verdict = compare(a2, expected, tol)
    if verdict.passed:
        return
    what = ("M-RoPE" if spec.mrope_section is not None else "axial RoPE" if spec.axial_dims is not None else
            f"{spec.layout} pairs written in the {spec.out_layout} layout")
    w = verdict.worst
    lines = [f"RoPE output differs from pemath.rope.apply(x, positions, spec={spec!r}) ({what}) beyond the tolerance."]
    names = "THW" if spec.mrope_section is not None and n == 3 else "0123456789"[:n] if n <= 10 else None
    if spec.out_layout is None and names is not None and np.all(np.isfinite(a2)):
        for b in blocks:
            try:
                got = measured_components(a2, x2, pos, b, factor, u_t)
            except (ValueError, FloatingPointError):
                continue
            if not np.array_equal(got, b.comp):
                lines.append(f"Measured from the output: the component driving each pair of features {b.start}.."
                             f"{b.start + b.r - 1}: {_pattern(got, names)} (the spec: {_pattern(b.comp, names)}; "
                             "? none fits, * several do, 0 not rotated)")
    lines += [mismatch_line(verdict),
              f"Worst element at index {index_of(w, tuple(xh.shape))}: actual {fmt(a2.flat[w])}, expected "
              f"{fmt(expected.flat[w])}, abs error {fmt(verdict.err.flat[w])}, tolerance {fmt(tol.flat[w])}",
              "Tolerance: " + (f"derived for a {t_name} output, each pair at its own component's position"
                               if user is None else "given")]
    matched, tried, raised = first_match(_candidates(spec, xh, positions, a2, seq_len, user, u_t))
    lines += diagnosis_lines(matched, tried, raised)
    raise AssertionError("\n".join(lines))


def _candidates(spec: Any, xh: np.ndarray, positions: Any, a2: np.ndarray, seq_len: Any, user: Any, u_t: float) -> Iterator[tuple[str, Any]]:
    from ... import rope

    x2 = xh.reshape(-1, xh.shape[-1])
    lead = tuple(xh.shape[:-1])

    def judge(changes: dict, alt_positions: Any):
        def run():
            try:
                alt_spec = spec.replace(**changes)
            except ValueError:  # a change this spec cannot take (sections that cannot interleave): not a candidate
                return None
            expected = np.asarray(rope.apply(xh, alt_positions, spec=alt_spec, seq_len=seq_len)).reshape(x2.shape)
            if user is not None:
                t = user[1] + user[0] * np.abs(expected)
            else:
                t = bound_for(alt_spec, x2, component_positions(alt_spec, alt_positions, lead), seq_len, u_t)
            return compare(a2, expected, t)
        return run

    other = "half" if spec.layout == "interleaved" else "interleaved"
    if spec.mrope_section is not None:
        p = np.asarray(as_host("positions", positions, floating=False)[0] if _is_array(positions) else positions)
        flip = not spec.mrope_interleaved
        yield (f"the {'interleaved' if flip else 'blocked'} section layout of sections {list(spec.mrope_section)} "
               f"(mrope_interleaved={flip}; the spec has {not flip}: "
               "Qwen3-VL interleaves, Qwen2-VL and Qwen2.5-VL do not)",
               judge({"mrope_interleaved": flip}, positions))
        yield ("text positions for every pair (component 0, the temporal one, used for the height and width "
               "sections too: M-RoPE position ids not built for the image tokens)",
               judge({"mrope_section": None, "mrope_interleaved": False}, p[0]))
        yield (f"the sections in reverse order ({list(spec.mrope_section)[::-1]})",
               judge({"mrope_section": tuple(spec.mrope_section)[::-1]}, positions))
        yield f"the other pair layout: layout={other!r}", judge({"layout": other}, positions)
    elif spec.axial_dims is not None:
        p = np.asarray(as_host("positions", positions, floating=False)[0] if _is_array(positions) else positions)
        if len(spec.axial_dims) > 1:
            yield ("the axes in reverse order (e.g. rows and columns swapped: Pixtral's [H, W] against Llama 4's "
                   "order)", judge({}, p[..., ::-1]))
        g = "pairs" if spec.axial_grouping == "features" else "features"
        yield (f"axial_grouping={g!r} (the spec: {spec.axial_grouping!r})", judge({"axial_grouping": g}, positions))
        if len(set(spec.axial_dims)) == 1:
            f = "strided" if spec.axial_frequencies == "per_axis" else "per_axis"
            yield (f"axial_frequencies={f!r} (the spec: {spec.axial_frequencies!r})",
                   judge({"axial_frequencies": f}, positions))
        yield f"the other pair layout: layout={other!r}", judge({"layout": other}, positions)
    else:
        yield (f"the output left in the input layout {spec.layout!r} (out_layout={spec.out_layout!r} not applied)",
               judge({"out_layout": None}, positions))
