r"""Why a RoPE output is wrong: the failure report and the search for a known bug that explains it.

When :func:`pemath.testing.assert_rope_close` fails, each plausible wrong implementation
is computed with pemath's own functions (:func:`pemath.rope.apply`,
:func:`pemath.rope.cos_sin`, :func:`pemath.rope.inv_freq` and the rotation kernel) and
compared with the actual output under the same derived tolerance, computed for the
alternative's own phases. An alternative that matches every element is named:

* the other layout; positions shifted by :math:`\pm 1`, or by a constant estimated from
  the phase difference between the actual output and the input (unwrapped from the
  lowest frequency to the highest, then verified); other positions row by row (e.g.
  :math:`0, 1, 2, \dots` along an axis: the given positions ignored);
* the inverse rotation; cos and sin swapped; no rotation; the rotation applied twice;
* a different base among those of real models (:data:`COMMON_BASES`);
* frequencies computed over the head dimension instead of ``rotary_dim``; every feature
  rotated; the rotary slice taken from the end of the head;
* the attention factor missing or applied twice; the scaling left out; linear scaling
  multiplying the positions instead of dividing them;
* a ``rotate_half`` rotation fed an interleaved cos/sin table, and the converse;
* a rotation matrix missing its lower sin entry (the seeds' ``get_rotary_matrix``), at
  the given positions or at :math:`p + 1` (positions counted from 1);
* the phase computed in bfloat16 or float16 (positions, inverse frequencies and their
  product rounded), the phase rounded to bfloat16/float16 before cos and sin, and the
  inverse frequencies stored in bfloat16/float16.

Inputs larger than :data:`MAX_DIAGNOSIS_ELEMENTS` are diagnosed on a subset of rows
(the worst ones and an even sample), which the message says.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ... import _compat
from .._core.arrays import RopeCase
from .._core.measure import unwrap_shift, wrap
from .._core.report import Candidate, Verdict, compare, diagnosis_lines, first_match, fmt, index_of, locate, nonfinite_line, ranges
from .diagnose_scaling import scaling_variants
from .fitted import fitted_candidates
from . import honest
from .tolerance import element_bound, rope_bound
from .._core.tolerance import frequency_constants

__all__ = ["COMMON_BASES", "MAX_DIAGNOSIS_ELEMENTS", "GROUPS", "FALLBACK_GROUPS", "rope_message"]

#: RoPE bases of real models: 10^4 (Llama 1/2, GPT-NeoX, Gemma, Phi-3, Mistral 7B v0.1),
#: 10^5 (StarCoder2), 5·10^5 (Llama 3), 10^6 (Qwen2/2.5/3, Mistral v0.2+, CodeLlama, Mixtral),
#: 5·10^6 (Yi), 8·10^6 (Command-R), 10^7 (Qwen2.5-1M, Granite).
COMMON_BASES = (10_000.0, 100_000.0, 500_000.0, 1_000_000.0, 5_000_000.0, 8_000_000.0, 10_000_000.0)

#: Above this many elements the diagnosis runs on a subset of rows.
MAX_DIAGNOSIS_ELEMENTS = 1 << 16

_LOW = ("bfloat16", "float16")
#: Unit roundoffs of the low dtypes above.
_LOW_U = {"bfloat16": 2.0**-8, "float16": 2.0**-11}


def _low_dtype(name: str) -> Any:
    if name == "float16":
        return np.float16
    import ml_dtypes  # ImportError: the candidate is skipped

    return ml_dtypes.bfloat16


@dataclasses.dataclass
class _Judge:
    """The actual output and the rules to judge an alternative against it."""

    case: RopeCase
    a2: np.ndarray
    u_t: float
    user: tuple[float, float] | None  # (rtol, atol)
    memo: dict = dataclasses.field(default_factory=dict)  # what is computed once per judge (the truth)

    @property
    def xp(self) -> Any:
        return _compat.namespace(self.case.x2)

    def tol(self, expected: np.ndarray, bound: Callable[[], np.ndarray]) -> np.ndarray:
        if self.user is not None:
            rtol, atol = self.user
            return atol + rtol * np.abs(expected)
        return bound()

    def judge(self, expected: np.ndarray, bound: Callable[[], np.ndarray],
              reference: np.ndarray | None = None) -> Verdict:
        """The alternative's verdict on the actual output, and whether it is told apart from ``reference`` (the right
        output: pemath's truth, or an honest form's) under the same tolerance."""
        tol = self.tol(expected, bound)
        verdict = compare(self.a2, expected, tol)
        if verdict.ok.ndim == 2 and not verdict.ok.all(axis=1).any():
            return verdict  # explains no row: nothing to tell apart
        ref = self.truth() if reference is None else reference
        with np.errstate(invalid="ignore"):
            apart = ~(np.abs(ref - expected) <= tol)
        rows = apart.any(axis=1) if apart.ndim == 2 else None
        return dataclasses.replace(verdict, separated=bool(apart.any()), separated_rows=rows)

    def truth(self) -> np.ndarray:
        """pemath's float64 rotation of the case's rows (computed once)."""
        if self.memo.get("truth") is None:
            from ... import rope

            c = self.case
            self.memo["truth"] = np.asarray(rope.apply(c.x2.astype(np.float64), c.pos, spec=c.spec,
                                                       seq_len=c.seq_len))
        return self.memo["truth"]

    # ---- pemath's own computations, with their bounds

    def bound(self, *, pos=None, freq=None, factor=None, layout=None, r=None, cfreq=None, start=0) -> np.ndarray:
        c = self.case
        r_used = c.r if r is None else r
        cfreq = c.cfreq if cfreq is None else cfreq
        return rope_bound(
            c.x2,
            c.pos if pos is None else pos,
            c.freq if freq is None else freq,
            c.factor if factor is None else factor,
            c.layout if layout is None else layout,
            r_used,
            self.u_t,
            cfreq,
            start=start,
        )

    def apply(self, pos=None, inverse: bool = False, seq_len: Any = "case", **over: Any) -> Verdict:
        """Judge ``pemath.rope.apply`` with some fields of the case's Spec (or its seq_len) changed."""
        from ... import rope

        c = self.case
        spec = c.spec.replace(**over) if over else c.spec
        pos = c.pos if pos is None else pos
        n = c.seq_len if seq_len == "case" else seq_len
        expected = np.asarray(rope.apply(c.x2, pos, spec=spec, seq_len=n, inverse=inverse))

        def bound() -> np.ndarray:
            r = spec.rotary_dim_for(c.d)
            freq, factor = spec.frequencies(r, n)
            cfreq = frequency_constants(r, spec.base, spec.scaling, n, explicit=spec.inv_freq is not None)
            return self.bound(pos=pos, freq=freq, factor=factor, layout=spec.layout, r=r, cfreq=cfreq)

        return self.judge(expected, bound)

    def rotate(self, phase: np.ndarray, *, factor: float | None = None, swap: bool = False,
               drop_lower_sin: bool = False, bound: Callable[[], np.ndarray] | None = None,
               table_dtype: Any = None) -> Verdict:
        """Judge the rotation of x by the given per-pair phases ``(N, r/2)``, with optional defects
        (``table_dtype``: cos and sin stored in that dtype)."""
        from ...rope import _core

        c = self.case
        factor = c.factor if factor is None else factor
        cos, sin = np.cos(phase) * factor, np.sin(phase) * factor
        if table_dtype is not None:
            cos, sin = (t.astype(np.float32).astype(table_dtype).astype(np.float64) for t in (cos, sin))
        if swap:
            cos, sin = sin, cos
        if drop_lower_sin:
            xa, xb = _core.split_pairs(c.x2, c.layout, c.r)
            rot = _core.merge_pairs(xa * cos - xb * sin, xb * cos, c.layout, self.xp)
            expected = np.concatenate([rot, c.x2[:, c.r :]], axis=-1)
        else:
            expected = np.asarray(_core.rotate(c.x2, cos, sin, c.layout, c.r, self.xp, np.float64))
        return self.judge(expected, bound or (lambda: self.bound(factor=factor)))


# --------------------------------------------------------------------------- the candidates


def _phase(c: RopeCase, pos: np.ndarray | None = None, freq: np.ndarray | None = None) -> np.ndarray:
    return (c.pos if pos is None else pos)[:, None] * (c.freq if freq is None else freq)[None, :]


def _table_mix(j: _Judge, rotation: str) -> Verdict:
    """A ``rotation``-layout kernel fed the other layout's per-feature cos/sin table."""
    from ... import rope
    from ...rope import _core

    c = j.case
    table = "interleaved" if rotation == "half" else "half"
    cos, sin = (np.asarray(t) for t in rope.cos_sin(c.pos, c.r, spec=c.spec.replace(layout=table),
                                                     seq_len=c.seq_len))
    xa, xb = _core.split_pairs(c.x2, rotation, c.r)
    rotated = _core.merge_pairs(-xb, xa, rotation, j.xp)  # rotate_half / rotate_every_two
    expected = np.concatenate([c.x2[:, : c.r] * cos + rotated * sin, c.x2[:, c.r :]], axis=-1)

    def bound() -> np.ndarray:
        # each element turns at its table entry's frequency; S from the rotation's own pairs
        s = np.abs(xa) + np.abs(xb)
        s_el = _core.merge_pairs(s, s, rotation, np)
        f = c.freq[None, :]
        cf = c.cfreq[None, :]
        freq_el = _core.merge_pairs(f, f, table, np)[0]
        cfreq_el = _core.merge_pairs(cf, cf, table, np)[0]
        out = j.u_t * np.abs(c.x2)
        out[:, : c.r] = element_bound(s_el, c.pos, freq_el, cfreq_el, c.factor, j.u_t)
        return out

    return j.judge(expected, bound)


def _low_phase(j: _Judge, low: str, variant: str) -> Verdict:
    c = j.case
    lo = _low_dtype(low)
    t32 = c.freq.astype(np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        if variant == "all":
            phase = c.pos.astype(lo)[:, None] * t32.astype(lo)[None, :]
        elif variant == "cast":
            phase = (c.pos.astype(np.float32)[:, None] * t32[None, :]).astype(lo)
        else:  # the inverse frequencies stored in the low dtype, the phase in float32
            phase = c.pos.astype(np.float32)[:, None] * t32.astype(lo).astype(np.float32)[None, :]
        return j.rotate(phase.astype(np.float64))


def _slice_at(j: _Judge, at: int) -> Verdict:
    """A spec with rotary_offset whose kernel rotated the slice starting at feature ``at`` instead."""
    from ... import rope

    c = j.case
    x = c.to_x_order(c.x2).astype(np.float64)
    inner = c.spec.replace(head_dim=None, rotary_dim=c.r)
    expected = x.copy()
    expected[:, at:at + c.r] = np.asarray(rope.apply(x[:, at:at + c.r], c.pos, spec=inner, seq_len=c.seq_len))
    bound = rope_bound(x, c.pos, c.freq, c.factor, c.layout, c.r, j.u_t, c.cfreq, start=at)
    return j.judge(c.to_case_order(expected), lambda: c.to_case_order(bound))


def _wrong_slice(j: _Judge) -> Verdict:
    from ... import rope

    c = j.case
    start = c.d - c.r
    expected = c.x2.copy()
    tail = c.spec.replace(head_dim=None, rotary_dim=None)
    expected[:, start:] = np.asarray(rope.apply(c.x2[:, start:], c.pos, spec=tail, seq_len=c.seq_len))
    return j.judge(expected, lambda: j.bound(start=start))


def _rows_from(mask: np.ndarray, where_true: Verdict, where_false: Verdict) -> Verdict:
    """A verdict taking each row from one of two (rows where ``mask`` holds from the first)."""
    m = mask[:, None]
    return Verdict(ok=np.where(m, where_true.ok, where_false.ok), err=np.where(m, where_true.err, where_false.err),
                   ratio=np.where(m, where_true.ratio, where_false.ratio))


def _split_at_head_dim(j: _Judge) -> Verdict:
    """Half layout, partial rotary: pairs (i, i + d/2) for i < r/2, the other features passed through."""
    c = j.case
    h, half = c.r // 2, c.d // 2
    phase = _phase(c)
    cos, sin = np.cos(phase) * c.factor, np.sin(phase) * c.factor
    xa, xb = c.x2[:, :h], c.x2[:, half:half + h]
    expected = c.x2.copy()
    expected[:, :h] = xa * cos - xb * sin
    expected[:, half:half + h] = xb * cos + xa * sin

    def bound() -> np.ndarray:
        from .tolerance import pair_scale

        out = j.u_t * np.abs(c.x2)
        b = (np.abs(xa) + np.abs(xb)) * pair_scale(c.pos, c.freq, c.cfreq, c.factor, j.u_t)
        out[:, :h] = b
        out[:, half:half + h] = b
        return out

    return j.judge(expected, bound)


def _head_dim_freq(j: _Judge) -> Verdict:
    from ... import rope

    c = j.case
    freq = np.asarray(rope.inv_freq(c.d, base=c.base, scaling=c.scaling, seq_len=c.seq_len))[: c.r // 2]
    cfreq = frequency_constants(c.d, c.base, c.scaling, c.seq_len)[: c.r // 2]
    return j.rotate(_phase(c, freq=freq), bound=lambda: j.bound(freq=freq, cfreq=cfreq))


def _row_offsets(c: RopeCase, a2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row, the position shift ``c`` with ``actual ≈ RoPE(x, p + c)``, from the rotation angles.

    The angle each pair turned by, minus the expected ``p θ_i``, is ``c θ_i`` modulo 2π;
    unwrapping from the lowest frequency to the highest pins ``c`` down (each step must
    be off by less than π: fine while ``|c| θ_min < π``). Returns ``(c, found)``.
    """
    from ...rope import _core

    xa, xb = _core.split_pairs(c.x2, c.layout, c.r)
    ya, yb = _core.split_pairs(a2, c.layout, c.r)
    with np.errstate(invalid="ignore", over="ignore"):
        mx, my = np.hypot(xa, xb), np.hypot(ya, yb)
        scale = np.max(mx, axis=1, keepdims=True)
        valid = (mx > 1e-2 * scale) & (my > 1e-2 * scale * min(1.0, abs(c.factor))) & np.isfinite(my)
        psi = np.arctan2(yb * xa - ya * xb, ya * xa + yb * xb)
        delta = wrap(psi - wrap(_phase(c)))
    return unwrap_shift(delta, c.freq, valid)


def _arange_axis(est: np.ndarray, shape: tuple[int, ...]) -> int | None:
    """The axis along which ``est`` (flat over ``shape``) counts 0, 1, 2, ..., if any."""
    grid = est.reshape(shape)
    for k, n in enumerate(shape):
        if n > 1:
            ar = np.arange(n).reshape([n if i == k else 1 for i in range(len(shape))])
            if np.array_equal(grid, np.broadcast_to(ar, shape)):
                return k
    return None




def _estimated(j: _Judge, full_rows: bool, rows_shape: tuple[int, ...]) -> Iterator[Candidate]:
    """Candidates from the estimated per-row shift: a constant one, then per-row positions."""
    c = j.case
    shift, found = _row_offsets(c, j.a2)
    if not found.any():
        return
    integral = bool(np.all(c.pos == np.round(c.pos)))
    if integral:
        shift = np.round(shift)
    # a reading below 1e-3 of a position is the phases' own rounding, not a shift (and a fractional shift would
    # make the alternative's positions a float32 grid, with its wider position term)
    shift = np.where(np.abs(shift) < 1e-3, 0.0, shift)
    vals, counts = np.unique(shift[found], return_counts=True)
    const = float(vals[np.argmax(counts)])
    if const not in (0.0, 1.0, -1.0):
        text = f"{int(const):+d}" if integral else f"{const:+.6g}"
        yield (f"positions shifted by {text} (the kernel rotated position p as p {text[0]} {text[1:]})",
               lambda: j.apply(pos=c.pos + const))
    est = np.where(found, c.pos + shift, c.pos)
    if np.array_equal(est, c.pos) or np.unique(est - c.pos).size == 1:
        return
    axis = _arange_axis(est, rows_shape) if full_rows else None
    rounded = _rounded_positions(c.pos, est)
    top = float(est.max())
    if rounded is None and np.array_equal(est, np.minimum(c.pos, top)):
        label = (f"positions clamped at {fmt(top)} (a cos/sin table of {fmt(top + 1)} rows, too short for positions "
                 f"up to {fmt(c.pos.max())})")
    elif rounded is not None:
        label = (f"positions rounded to {rounded[0]} before the phase (exact integers only up to {rounded[1]}: "
                 f"position {fmt(c.pos[rounded[2]])} became {fmt(est[rounded[2]])})")
    elif full_rows and _first_row_everywhere(est, c.pos, rows_shape):
        label = ("every row of axis 0 (the batch) rotated with the positions of its first entry (rows mapped to "
                 "positions ignoring the batch)")
    elif axis is not None:
        label = (f"RoPE at positions 0, 1, 2, ... along axis {axis} of x: the given positions were ignored "
                 "(lost padding offsets or KV-cache offset)")
    else:
        k = int(np.argmax(est != c.pos))
        n = int(np.sum(est != c.pos))
        label = (f"RoPE at other positions than the given ones ({n} of {est.size} rows differ; e.g. row {k}: "
                 f"position {fmt(est[k])} instead of {fmt(c.pos[k])})")
    yield label, lambda: j.apply(pos=est)


def _first_row_everywhere(est: np.ndarray, pos: np.ndarray, rows_shape: tuple[int, ...]) -> bool:
    if len(rows_shape) < 2 or rows_shape[0] < 2 or est.size != math.prod(rows_shape):
        return False
    e, p = est.reshape(rows_shape), pos.reshape(rows_shape)
    return bool(np.all(e == e[:1]) and np.all(e[:1] == p[:1]) and not np.all(p == p[:1]))


def _rounded_positions(pos: np.ndarray, est: np.ndarray) -> tuple[str, int, int] | None:
    """(dtype, exact limit, first changed row) when the read positions are the given ones rounded to a low dtype."""
    for name, limit in (("bfloat16", 256), ("float16", 2048), ("float32", 2**24)):
        try:
            low = _low_dtype(name) if name != "float32" else np.float32
            with np.errstate(over="ignore"):
                r = pos.astype(low).astype(np.float64)
        except ImportError:
            continue
        changed = r != pos
        if changed.any() and np.array_equal(r, est):
            return name, limit, int(np.argmax(changed))
    return None


def _listed(j: _Judge, full_rows: bool, shape: tuple[int, ...]) -> Iterator[Candidate]:
    """The listed mistakes: layout, positions, rotation, scaling, rotary slice, bases, tables, precision, rows."""
    from ...scaling import Linear, LongRoPE

    c = j.case
    other = "half" if c.layout == "interleaved" else "interleaved"
    names = {"interleaved": "interleaved pairs (2i, 2i+1)", "half": "half-split pairs (i, i + r/2)"}
    yield f"the other layout: layout={other!r}, {names[other]}", lambda: j.apply(layout=other)
    if c.offset:
        for at in sorted({0, c.d - c.r} - {c.offset}):
            yield (f"the rotated slice taken at features {at}..{at + c.r - 1} instead of {c.offset}.."
                   f"{c.offset + c.r - 1} (rotary_offset={c.offset} " + ("ignored)" if at == 0 else "misplaced)"),
                   lambda at=at: _slice_at(j, at))
    yield "positions shifted by +1 (positions counted from 1)", lambda: j.apply(pos=c.pos + 1)
    yield "positions shifted by -1", lambda: j.apply(pos=c.pos - 1)
    yield "the inverse rotation (angle -pθ: the sign of sin flipped)", lambda: j.apply(inverse=True)
    yield "cos and sin swapped", lambda: j.rotate(_phase(c), swap=True)
    if c.factor != 1.0:
        a = c.factor
        yield (f"the attention factor missing (cos and sin not multiplied by {fmt(a)})",
               lambda: j.rotate(_phase(c), factor=1.0))
        yield (f"the attention factor applied twice ({fmt(a)}^2 = {fmt(a * a)} instead of {fmt(a)})",
               lambda: j.rotate(_phase(c), factor=a * a))
    if c.factor != 1.0:
        a = c.factor
        yield (f"the rotation applied twice, attention factor included (angle 2pθ, amplitude {fmt(a)}^2)",
               lambda: j.rotate(_phase(c, pos=2 * c.pos), factor=a * a, bound=lambda: j.bound(pos=2 * c.pos,
                                                                                               factor=a * a)))
    if c.scaling is not None:
        yield f"the scaling left out (plain RoPE instead of {c.scaling!r})", lambda: j.apply(scaling=None)
        for label, over in scaling_variants(c.scaling, c.seq_len):
            yield label, (lambda over=over: j.apply(**over))
        if isinstance(c.scaling, LongRoPE):
            L = c.scaling.original_max_position
            beyond = c.pos >= L
            if beyond.any() and not beyond.all():
                yield (f"LongRoPE's regime chosen per position (short factors up to position {L - 1}, long ones "
                       "beyond) inside one sequence, instead of once per forward pass from max(position_ids) + 1",
                       lambda: _rows_from(beyond, j.apply(seq_len=L + 1), j.apply(seq_len=L)))
        if isinstance(c.scaling, Linear):
            s = c.scaling.factor
            yield (f"linear scaling multiplying the positions by {fmt(s)} instead of dividing them",
                   lambda: j.apply(scaling=Linear(1.0 / s)))
    explicit = c.spec.inv_freq is not None
    if c.r < c.d and not explicit:
        yield (f"frequencies computed over head_dim={c.d} instead of rotary_dim={c.r} "
               f"(θ_i = base^(-2i/{c.d}))", lambda: _head_dim_freq(j))
        if c.d % 2 == 0:
            yield (f"every feature rotated (rotary_dim={c.r} ignored)", lambda: j.apply(rotary_dim=None))
        yield (f"partial rotary on the wrong slice (the last {c.r} features rotated instead of the first {c.r})",
               lambda: _wrong_slice(j))
        if (c.r // 2) % 2 == 0:
            yield (f"rotary_dim halved ({c.r // 2} instead of {c.r}: the partial rotary factor applied twice)",
                   lambda: j.apply(rotary_dim=c.r // 2))
        if c.layout == "half":
            yield (f"the half split taken at head_dim/2 = {c.d // 2} instead of rotary_dim/2 = {c.r // 2} (pairs "
                   f"(i, i + {c.d // 2}))", lambda: _split_at_head_dim(j))
    for b in () if explicit else COMMON_BASES:
        if b != c.base:
            yield f"base={fmt(b)} instead of {fmt(c.base)}", (lambda b=b: j.apply(base=b))
    yield ("a half rotation (rotate_half) fed an interleaved cos/sin table [c0, c0, c1, c1, ...]",
           lambda: _table_mix(j, "half"))
    yield ("an interleaved rotation (rotate_every_two) fed a half-layout cos/sin table [c0, c1, ..., c0, c1, ...]",
           lambda: _table_mix(j, "interleaved"))
    yield ("a rotation matrix missing its lower sin entry (y_b = x_b cos, without + x_a sin)",
           lambda: j.rotate(_phase(c), drop_lower_sin=True))
    yield ("a rotation matrix missing its lower sin entry (y_b = x_b cos, without + x_a sin) at positions "
           "p + 1, as the seeds' get_rotary_matrix (positions 1..L)",
           lambda: j.rotate(_phase(c, pos=c.pos + 1), drop_lower_sin=True,
                            bound=lambda: j.bound(pos=c.pos + 1)))
    for low in _LOW:
        yield (f"the phase computed in {low} (positions, inverse frequencies and their product rounded to {low})",
               lambda low=low: _low_phase(j, low, "all"))
        if j.u_t < _LOW_U[low]:  # a table in the output's own dtype is honest
            yield (f"the cos/sin table stored in {low} (cos and sin rounded to {low}, the output in a wider dtype)",
                   lambda low=low: j.rotate(_phase(c), table_dtype=_low_dtype(low)))
        yield (f"the phase rounded to {low} before cos and sin (computed in float32, then cast)",
               lambda low=low: _low_phase(j, low, "cast"))
        yield (f"inverse frequencies stored in {low} (the inv_freq buffer cast with the model), "
               "phase in float32", lambda low=low: _low_phase(j, low, "freq"))
    unwritten = ~np.all(np.isfinite(j.a2), axis=1)
    if unwritten.any() and not unwritten.all():
        rows = np.nonzero(unwritten)[0]
        yield (f"{rows.size} row(s) never written (non-finite, e.g. from empty_like, at positions "
               f"{', '.join(fmt(p) for p in c.pos[rows[:4]])}{', ...' if rows.size > 4 else ''}); every other "
               "row is right", lambda: dataclasses.replace(  # NaN rows: told apart from the right output there
                   _Judge(dataclasses.replace(c, x2=np.where(unwritten[:, None], 0.0, c.x2)),
                          np.where(unwritten[:, None], 0.0, j.a2), j.u_t, j.user).apply(),
                   separated=True, separated_rows=unwritten))
    yield "no rotation at all (the output equals x)", lambda: j.judge(c.x2, lambda: j.bound())
    yield "the rotation applied twice (angle 2pθ)", lambda: j.apply(pos=2 * c.pos)


def _from_positions(j: _Judge, full_rows: bool, shape: tuple[int, ...]) -> Iterator[Candidate]:
    """Positions read from the output, row by row (a constant shift, per-row positions), then verified."""
    yield from _estimated(j, full_rows, shape[:-1])


def _honest_variants(j: _Judge, full_rows: bool, shape: tuple[int, ...]) -> Iterator[Candidate]:
    """Bugs on top of an honest computation the bound does not cover (llama.cpp's angles), computed by it exactly."""
    yield from honest.variants(j, COMMON_BASES)


def _fitted(j: _Judge, full_rows: bool, shape: tuple[int, ...]) -> Iterator[Candidate]:
    """Formulas with free parameters fitted to the measurement (``fitted.FAMILIES``)."""
    yield from fitted_candidates(j)


#: The extension point of the diagnosis: each group is ``group(j, full_rows, shape) -> Iterator[(label, thunk)]``,
#: tried in this order. ``j`` is the ``_Judge`` (the case, the actual output, the rules); ``full_rows`` says
#: whether every row is present (not a sample); ``shape`` is x's. A thunk returns the ``Verdict`` of its
#: alternative (``j.apply``, ``j.rotate``, ``j.judge``), or None when it does not apply; the first label whose
#: verdict passes is the diagnosis. A new listed mistake is a yield in a group or a new group here; a family
#: with free parameters is a generator in ``fitted.FAMILIES``.
GROUPS: tuple[Callable[[_Judge, bool, tuple[int, ...]], Iterator[Candidate]], ...] = (
    _listed, _from_positions, _fitted)
#: Groups tried only when no group of ``GROUPS`` names the output: the honest computations' own variants (an
#: output that a listed alternative explains needs no recurrence to explain it).
FALLBACK_GROUPS: tuple[Callable[[_Judge, bool, tuple[int, ...]], Iterator[Candidate]], ...] = (_honest_variants,)


def _candidates(j: _Judge, full_rows: bool, shape: tuple[int, ...], groups: Any = GROUPS) -> Iterator[Candidate]:
    for group in groups:
        yield from group(j, full_rows, shape)


# --------------------------------------------------------------------------- the message


def _feature(c: RopeCase, jf: int) -> tuple[int | None, str]:
    """(pair index, description) of column ``jf`` of the case (described by x's feature index)."""
    name = c.original_feature(jf)
    if jf >= c.r:
        return None, f"feature {name}: outside the rotated slice, passed through"
    jf_shown = name
    h = c.r // 2
    if c.layout == "interleaved":
        i, member = jf // 2, "a (first of the pair)" if jf % 2 == 0 else "b (second of the pair)"
    else:
        i, member = jf % h, "a (first of the pair)" if jf < h else "b (second of the pair)"
    return i, f"feature {jf_shown}: pair {i} (frequency index {i}), member {member}"


def _subset(case: RopeCase, a2: np.ndarray,
            row_ratio: np.ndarray) -> tuple[RopeCase, np.ndarray, str, np.ndarray]:
    """The rows the diagnosis runs on (all of a small input), ``a2`` among them in float64, and their indices."""
    n, d = case.x2.shape
    if n * d <= MAX_DIAGNOSIS_ELEMENTS:
        return case.widened(), a2.astype(np.float64, copy=False), "", np.arange(n)
    keep = max(1, MAX_DIAGNOSIS_ELEMENTS // d)
    worst_rows = np.argsort(-row_ratio, kind="stable")[: max(1, keep // 4)]
    even = np.linspace(0, n - 1, keep - worst_rows.size).astype(np.int64)
    rows = np.unique(np.concatenate([worst_rows, even]))
    sub = dataclasses.replace(case, x2=case.x2[rows].astype(np.float64), pos=case.pos[rows])
    return sub, a2[rows].astype(np.float64), (f"  (diagnosis run on {rows.size} of {n} rows: the worst ones and an "
                                              "even sample)"), rows


def _measured(c: RopeCase, a2: np.ndarray, u_t: float, t_name: str) -> list[str]:
    """Findings read from the output itself (pemath.testing.recover_rope), never an error of their own."""
    from .recover import measure, recover_host

    if c.x2.shape[0] > MAX_DIAGNOSIS_ELEMENTS // max(c.d, 1):
        return []
    finite = np.all(np.isfinite(a2), axis=1)
    out = []
    if not finite.all():
        out.append(f"{int((~finite).sum())} of {finite.size} rows hold NaN or infinity (the rest measured alone)")
        if not finite.any():
            return out
        c, a2 = dataclasses.replace(c, x2=c.x2[finite], pos=c.pos[finite]), a2[finite]
    try:
        rec = recover_host(a2, c.x2, u_t, t_name, c.shape, None, None)
        return out + measure(rec, c.pos, c.spec, c.freq, c.factor, a2, c.x2)
    except (ValueError, FloatingPointError, MemoryError):  # an output too odd to read: the diagnosis still runs
        return out


def _on_some_rows(j: _Judge, per_row: list[tuple[str, np.ndarray]], rows: np.ndarray, shape: tuple[int, ...],
                  positions: np.ndarray, sampled: bool) -> list[str]:
    """An alternative that explains some rows while the others are right (a fused kernel's second path, some heads
    only): named with where those rows are, by (batch, head, position)."""
    right = j.apply().ok.all(axis=1)
    if right.all():
        return []
    for label, explains in per_row:
        if explains.shape == right.shape and np.all(explains | right) and np.any(explains & ~right):
            where = locate(rows[explains & ~right], shape[:-1], positions)
            return [f"{label}, on the rows at {where} only; every other row is right"
                    + (" (on the rows sampled)" if sampled else "")]
    return []


def rope_message(
    case: RopeCase,
    a2: np.ndarray,
    summary: Any,
    *,
    u_t: float,
    t_name: str,
    user: tuple[float, float] | None,
) -> str:
    """The failure message of :func:`pemath.testing.assert_rope_close` (``summary``: ``_exact.Summary``)."""
    c = case
    shape = c.shape
    shown = c.spec.replace(rotary_offset=c.offset) if c.offset else c.spec
    config = (f"spec={shown!r}" if c.spec.head_dim is not None or c.spec.inv_freq is not None else
              f"layout={c.layout!r}, base={fmt(c.base)}, rotary_dim={c.r}, scaling={c.scaling!r}")
    config += f", seq_len={c.seq_len}" if c.seq_len is not None else ""
    lines = [f"RoPE output differs from pemath.rope.apply(x, positions, {config}) beyond the tolerance."]
    if c.offset:
        lines[0] = lines[0].replace("beyond the tolerance.", f"beyond the tolerance (features {c.offset}.."
                                                             f"{c.offset + c.r - 1} rotated, the others passed "
                                                             "through; the measurements below read the rotated slice "
                                                             "first).")
    sub, sub_a2, note, sub_rows = _subset(c, a2, summary.row_ratio)  # large inputs: measured and diagnosed on rows
    lines += [f"Measured from the output: {m}" for m in _measured(sub, sub_a2, u_t, t_name)]
    n, m = summary.mismatches, summary.size
    lines.append(f"Mismatched elements: {n} / {m} ({100.0 * n / max(m, 1):.3g}%)")
    nf = nonfinite_line(a2)
    if nf:
        lines.append(nf)
    w = summary.worst
    row, jf = divmod(w, c.d)
    pair, where = _feature(c, jf)
    w = row * c.d + c.original_feature(jf)  # the index in x's own feature order
    got, want, err, tol = summary.worst_values
    lines.append(
        f"Worst element (largest error / tolerance) at index {index_of(w, shape)}: actual {fmt(got)}, "
        f"expected {fmt(want)}, abs error {fmt(err)}, tolerance {fmt(tol)}"
    )
    p = c.pos[row]
    if pair is None:
        lines.append(f"  position {fmt(p)}, {where}")
    else:
        th = c.freq[pair]
        lines.append(f"  position {fmt(p)}, {where}, θ = {fmt(th)}, phase p·θ = {fmt(p * th)}")
    rows_bad = np.nonzero(summary.rows_bad)[0]
    feats_bad = np.nonzero(summary.feats_bad)[0]
    pairs_bad = [(_feature(c, int(f))[0]) for f in feats_bad]
    rot = np.array([q for q in pairs_bad if q is not None], dtype=np.int64)
    passed = sum(q is None for q in pairs_bad)
    pb = c.pos[rows_bad]
    lines.append(
        f"Mismatches at positions {fmt(pb.min())} .. {fmt(pb.max())} ({rows_bad.size} of {c.pos.size} rows), "
        f"pairs {ranges(rot)} (of {c.r // 2})" + (f", and {passed} pass-through feature(s)" if passed else "")
    )
    if len(shape) > 1:
        lines.append(f"Mismatched rows at: {locate(rows_bad, shape[:-1], c.given_pos)}")
    if user is None:
        lines.append(
            f"Tolerance: derived for a {t_name} output (u_T = 2^{int(round(math.log2(u_t)))}), phases in float32 "
            "or better: pemath.testing.rope_tolerance"
        )
    else:
        lines.append(f"Tolerance: given, atol={fmt(user[1])} + rtol={fmt(user[0])} * |expected|")
    judge = _Judge(sub, sub_a2, u_t, user)
    per_row: list[tuple[str, np.ndarray]] = []
    matched, tried, raised = first_match(_candidates(judge, not note, shape), per_row)
    if not matched:
        matched, more, more_raised = first_match(_candidates(judge, not note, shape, FALLBACK_GROUPS), per_row)
        tried, raised = tried + more, raised + more_raised
    if not matched and len(shape) > 1:
        matched = _on_some_rows(judge, per_row, sub_rows, shape, c.given_pos, bool(note))
    lines += diagnosis_lines(matched, tried, raised, note=note)
    return "\n".join(lines)
