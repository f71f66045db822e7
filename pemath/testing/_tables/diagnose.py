"""Checks and failure reports for the tables: sinusoidal encodings, ALiBi biases, T5 buckets."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from ..._validate import show
from .._core.arrays import SinusoidalCase, as_host
from .._core.measure import snap, unwrap_shift, wrap
from .._core.report import Candidate, Verdict, compare, diagnosis_lines, first_match, fmt, index_of, mismatch_line, nonfinite_line
from .tolerance import alibi_bound, sinusoidal_bound, sinusoidal_columns
from .._core.tolerance import unit_roundoff

__all__ = ["sinusoidal_message", "alibi_check", "t5_check"]



def _tolerance_line(t_name: str, u_t: float, user: tuple[float, float] | None, helper: str) -> str:
    if user is None:
        return (f"Tolerance: derived for a {t_name} output (u_T = 2^{int(round(math.log2(u_t)))}), phases in "
                f"float32 or better: pemath.testing.{helper}")
    return f"Tolerance: given, atol={fmt(user[1])} + rtol={fmt(user[0])} * |expected|"


# --------------------------------------------------------------------------- sinusoidal


def _sin_cos_first(table: np.ndarray, dim: int, convention: str) -> np.ndarray | None:
    """The same table with cos where sin belongs and vice versa (even dim only)."""
    if dim % 2:
        return None
    if convention == "interleaved":
        out = table.copy()
        out[:, 0::2], out[:, 1::2] = table[:, 1::2], table[:, 0::2]
        return out
    h = dim // 2
    return np.concatenate([table[:, h:], table[:, :h]], axis=1)


def _sinusoidal_shift(case: SinusoidalCase, a2: np.ndarray) -> np.ndarray | None:
    """Per-row position shift estimated from the actual (sin, cos) columns of each frequency."""
    idx, sine = sinusoidal_columns(case.dim, case.convention)
    k = case.freq.size
    s_col = np.full(k, -1)
    c_col = np.full(k, -1)
    for j, (i, is_sin) in enumerate(zip(idx, sine)):
        if i >= 0:
            (s_col if is_sin else c_col)[i] = j
    both = (s_col >= 0) & (c_col >= 0)
    if not both.any():
        return None
    freq = case.freq[both]
    s, c = a2[:, s_col[both]], a2[:, c_col[both]]
    with np.errstate(invalid="ignore"):
        psi = np.arctan2(s, c)
        valid = np.isfinite(psi) & (np.hypot(s, c) > 0.5)
        delta = wrap(psi - wrap(case.pos[:, None] * freq[None, :]))
    shift, found = unwrap_shift(delta, freq, valid)
    if not found.any():
        return None
    return np.round(shift[found])


def _sinusoidal_candidates(case: SinusoidalCase, a2: np.ndarray, u_t: float,
                           user: tuple[float, float] | None) -> Iterator[Candidate]:
    from ... import sinusoidal

    def judge(expected: np.ndarray, pos: np.ndarray, convention: str) -> Verdict:
        if user is not None:
            tol = user[1] + user[0] * np.abs(expected)
        else:
            freq = sinusoidal.frequencies(case.dim, base=case.base, convention=convention)
            tol = sinusoidal_bound(pos, freq, case.base, case.dim, convention, u_t)
        return compare(a2, expected, tol)

    def encode(pos: np.ndarray, convention: str) -> np.ndarray:
        return np.asarray(sinusoidal.encode(pos, case.dim, base=case.base, convention=convention))

    for conv in sinusoidal.CONVENTIONS:
        if conv != case.convention:
            yield f"convention={conv!r}", (lambda conv=conv: judge(encode(case.pos, conv), case.pos, conv))
    for shift, why in ((1, "positions counted from 1"), (-1, ""), (2, "fairseq's padding_idx + 1 offset with "
                                                                      "padding_idx=1")):
        label = f"positions shifted by {shift:+d}" + (f" ({why})" if why else "")
        yield label, (lambda s=shift: judge(encode(case.pos + s, case.convention), case.pos + s, case.convention))

    def swapped() -> Verdict | None:
        table = _sin_cos_first(encode(case.pos, case.convention), case.dim, case.convention)
        return None if table is None else judge(table, case.pos, case.convention)

    yield "sin and cos swapped (cos where sin belongs)", swapped
    est = _sinusoidal_shift(case, a2)
    if est is not None:
        vals, counts = np.unique(est, return_counts=True)
        c = float(vals[np.argmax(counts)])
        if c not in (0.0, 1.0, -1.0, 2.0):
            yield (f"positions shifted by {int(c):+d}",
                   lambda: judge(encode(case.pos + c, case.convention), case.pos + c, case.convention))


def sinusoidal_message(case: SinusoidalCase, a2: np.ndarray, expected: np.ndarray, tol: np.ndarray,
                       verdict: Verdict, *, u_t: float, t_name: str, user: tuple[float, float] | None) -> str:
    lines = [
        f"Sinusoidal encoding differs from pemath.sinusoidal.encode(positions, {case.dim}, base={fmt(case.base)}, "
        f"convention={case.convention!r}) beyond the tolerance.",
        mismatch_line(verdict),
    ]
    nf = nonfinite_line(a2)
    if nf:
        lines.append(nf)
    w = verdict.worst
    row, col = divmod(w, case.dim)
    lines.append(
        f"Worst element (largest error / tolerance) at index {index_of(w, case.shape + (case.dim,))}: actual "
        f"{fmt(a2.flat[w])}, expected {fmt(expected.flat[w])}, abs error {fmt(verdict.err.flat[w])}, "
        f"tolerance {fmt(tol.flat[w])}"
    )
    idx, sine = sinusoidal_columns(case.dim, case.convention)
    p = case.pos[row]
    if idx[col] < 0:
        lines.append(f"  position {fmt(p)}, column {col}: the zero column (odd dim)")
    else:
        om = case.freq[idx[col]]
        lines.append(f"  position {fmt(p)}, column {col}: {'sin' if sine[col] else 'cos'} of frequency index "
                     f"{idx[col]}, ω = {fmt(om)}, phase p·ω = {fmt(p * om)}")
    lines.append(_tolerance_line(t_name, u_t, user, "sinusoidal_tolerance"))
    matched, tried, raised = first_match(_sinusoidal_candidates(case, a2, u_t, user))
    lines += diagnosis_lines(matched, tried, raised)
    return "\n".join(lines)


# --------------------------------------------------------------------------- ALiBi

#: A finite mask value passes when it is at least this far below the row's largest bias.
MASK_MARGIN = 1.0e4


def _alibi_verdict(actual: np.ndarray, truth: np.ndarray, tol: np.ndarray) -> Verdict:
    masked = np.isneginf(truth)
    with np.errstate(invalid="ignore"):
        row_max = np.max(np.where(masked, -np.inf, truth), axis=-1, keepdims=True)
        mask_ok = np.isneginf(actual) | (np.isfinite(actual) & (actual <= row_max - MASK_MARGIN))
    v = compare(actual, truth, tol)
    ok = np.where(masked, mask_ok, v.ok)
    err = np.where(masked, np.where(mask_ok, 0.0, np.inf), v.err)
    ratio = np.where(masked, np.where(mask_ok, 0.0, np.inf), v.ratio)
    return Verdict(ok=ok, err=err, ratio=ratio)


def _alibi_slopes(heads: Any) -> np.ndarray:
    from ... import alibi

    if isinstance(heads, (int, np.integer)) and not isinstance(heads, bool):
        return alibi.slopes(int(heads))
    return np.asarray(heads, dtype=np.float64)


def _unmasked(slopes: np.ndarray, q_len: int, k_len: int, offset: int, form: str) -> np.ndarray:
    q = np.arange(q_len, dtype=np.float64)[:, None] + offset
    k = np.arange(k_len, dtype=np.float64)[None, :]
    rel = np.broadcast_to(k - q if form == "causal" else k + 0 * q, (q_len, k_len))
    return slopes[:, None, None] * rel[None]


_FORM_WORDS = {"causal": "-m·(i - j)", "shifted": "m·j", "symmetric": "-m·|i - j|"}


def fit_slopes(actual: np.ndarray, q_len: int, k_len: int, off: int) -> tuple[str, float, np.ndarray] | None:
    """``(form, relative residual, slope per head)`` of the ALiBi form that best fits the finite entries, or None."""
    q = np.arange(q_len, dtype=np.float64)[:, None] + off
    k = np.arange(k_len, dtype=np.float64)[None, :]
    dist = {"causal": np.broadcast_to(k - q, (q_len, k_len)), "shifted": np.broadcast_to(k + 0 * q, (q_len, k_len)),
            "symmetric": -np.abs(k - q)}
    fin = np.isfinite(actual)
    fits = {}
    for form, dmat in dist.items():
        dd = np.where(fin, dmat[None], 0.0)
        denom = np.sum(dd * dd, axis=(1, 2))
        if np.any(denom == 0):
            continue
        m = np.sum(np.where(fin, actual, 0.0) * dd, axis=(1, 2)) / denom
        res = np.max(np.abs(np.where(fin, actual - m[:, None, None] * dmat[None], 0.0)))
        scale = max(float(np.max(np.abs(np.where(fin, actual, 0.0)))), 1e-300)
        fits[form] = (res / scale, m)
    if not fits:
        return None
    form = min(fits, key=lambda f: fits[f][0])
    return form, fits[form][0], fits[form][1]


def alibi_measure(actual: np.ndarray, expected_slopes: np.ndarray, q_len: int, k_len: int, off: int) -> list[str]:
    """Fit the bias form and each head's slope to the finite entries of the output, in words."""
    fitted = fit_slopes(actual, q_len, k_len, off)
    if fitted is None:
        return []
    form, rel, m = fitted
    if rel > 0.05:
        return [f"no ALiBi form fits the finite entries (the best, {_FORM_WORDS[form]}, leaves {rel:.2g} of the "
                "largest entry)"]
    out = [f"the bias has the form {_FORM_WORDS[form]} ({form!r}, residual {rel:.2g} of the largest entry)"]
    ratio = m / expected_slopes
    if np.allclose(ratio, 1.0, rtol=1e-2):
        out.append("the slopes are the expected ones")
        return out
    n = m.size
    named = {"2^(-8(k+1)/n), the naive geometric sequence": 2.0 ** (-8.0 * np.arange(1, n + 1) / n),
             "the expected slopes in reverse order": expected_slopes[::-1]}
    words = next((w for w, ref in named.items() if np.allclose(m, ref, rtol=1e-2)), None)
    if words is None and np.allclose(ratio, ratio[0], rtol=1e-3):
        words = f"every slope multiplied by {fmt(ratio[0])}"
    shown = ", ".join(f"{fmt(v)}" for v in m[:4]) + (", ..." if n > 4 else "")
    want = ", ".join(f"{fmt(v)}" for v in expected_slopes[:4]) + (", ..." if n > 4 else "")
    out.append(f"slopes {shown}" + (f": {words}" if words else "") + f" (expected {want})")
    return out


def _falcon(heads: int, truth: np.ndarray) -> np.ndarray:
    """pipelines.falcon_alibi broadcast over the queries, masked where pemath's shifted form is -inf."""
    from ..pipelines import falcon_alibi

    k_len = truth.shape[-1]
    row = falcon_alibi(int(heads), np.ones((1, k_len), dtype=np.int64))[0, :, 0, :].astype(np.float64)
    return np.where(np.isneginf(truth), -np.inf, row[:, None, :])


def _alibi_candidates(actual: np.ndarray, heads: Any, q_len: int, k_len: int, form: str, offset: int | None,
                      u_t: float, user: tuple[float, float] | None) -> Iterator[Candidate]:
    from ... import alibi

    def judge(truth: np.ndarray) -> Verdict:
        if user is not None:
            tol = user[1] + user[0] * np.where(np.isfinite(truth), np.abs(truth), 0.0)
        else:
            tol = alibi_bound(truth, u_t, max(q_len, k_len) + abs(offset or 0))
        return _alibi_verdict(actual, truth, tol)

    def bias(h: Any = heads, f: str = form, off: int | None = offset) -> np.ndarray:
        return np.asarray(alibi.bias(h, q_len, k_len, form=f, offset=off))

    truth = bias()
    for f in alibi.FORMS:
        if f != form:
            yield f"form={f!r}", (lambda f=f: judge(bias(f=f)))
    slopes = _alibi_slopes(heads)
    off = (k_len - q_len) if offset is None else offset
    for f, who in (("shifted", "BLOOM's build_alibi_tensor: m*j for every key, the mask added separately"),
                   ("causal", "-m*(i - j) for every key, the mask added separately")):
        yield (f"form={f!r} without its causal mask ({who})",
               lambda f=f: judge(_unmasked(slopes, q_len, k_len, off, f)))
    yield "the sign of the bias flipped (+m*(i - j))", lambda: judge(np.where(np.isneginf(truth), -np.inf, -truth))
    if truth.shape[0] > 1:
        yield "the slopes in reverse order (head 0 has the smallest slope)", lambda: judge(truth[::-1])
    n = slopes.size
    if isinstance(heads, (int, np.integer)) and n & (n - 1):
        naive = [2.0 ** (-8.0 * (k + 1) / n) for k in range(n)]
        yield (f"the naive slopes 2^(-8(k+1)/{n}) (the reference interleaves the slopes of "
               f"{1 << (n.bit_length() - 1)} and {2 << (n.bit_length() - 1)} heads when the head count is not a "
               "power of two)", lambda: judge(bias(h=naive)))
        c2 = 2 << (n.bit_length() - 1)
        first = [2.0 ** (-8.0 * (k + 1) / c2) for k in range(n)]
        yield (f"the first {n} slopes of {c2} heads", lambda: judge(bias(h=first)))
    if form == "shifted" and isinstance(heads, (int, np.integer)):
        yield ("Falcon's bfloat16 pipeline: slopes, key indices and their product rounded to bfloat16 "
               "(pemath.testing.pipelines.falcon_alibi; key indices are exact in bfloat16 only up to 256; BLOOM's "
               "pipeline computes in float32 and rounds once, which passes)",
               lambda: judge(_falcon(heads, truth)))
    if off != 0 and (form == "symmetric" or q_len <= k_len):
        yield ("queries at positions 0..q_len-1 (offset=0) instead of the last q_len key positions "
               f"(offset={off}: the KV-cache offset lost)", lambda: judge(bias(off=0)))
    if q_len == k_len:
        yield "the bias transposed (query and key axes swapped)", lambda: judge(np.swapaxes(truth, 1, 2))
    yield from _fitted_slopes(actual, slopes, q_len, k_len, off, form, judge, bias)


def _fitted_slopes(actual: np.ndarray, expected: np.ndarray, q_len: int, k_len: int, off: int, form: str,
                   judge: Any, bias: Any) -> Iterator[Candidate]:
    """Slopes fitted to the output: one factor on every expected slope, or a geometric sequence
    2^(-A (h + B) / n) (A and B fitted: 8 and 1 in Press et al.'s for n a power of two), each judged."""
    fitted = fit_slopes(actual, q_len, k_len, off)
    if fitted is None or fitted[1] > 0.05 or fitted[0] != form:
        return
    m = fitted[2]
    n = m.size
    if n >= 2 and np.all(m > 0):
        h = np.arange(n, dtype=np.float64)
        a, ab = np.polyfit(h, -n * np.log2(m), 1)  # -n log2 m_h = A h + A B
        if a > 0 and np.max(np.abs(-n * np.log2(m) - (a * h + ab))) <= 1e-3 * max(1.0, abs(ab)):
            A = snap(a)
            B = snap(ab / a) if abs(ab / a - round(ab / a)) > 1e-3 else float(round(ab / a))
            geometric = [2.0 ** (-A * (k + B) / n) for k in range(n)]
            if not np.allclose(geometric, expected, rtol=1e-6):
                words = f"the slopes 2^(-{fmt(A)}(h + {fmt(B)})/{n}) for h = 0..{n - 1} (fitted to the measured slopes"
                if A == 8 and B == 0:
                    words += ": Press et al.'s sequence with the head index counted from 0 instead of 1"
                yield words + ")", lambda: judge(bias(h=geometric))
    ratio = m / expected
    if np.all(np.isfinite(ratio)) and np.ptp(ratio) <= 1e-3 * abs(float(ratio[0])) and abs(ratio[0] - 1) > 1e-3:
        c = snap(float(np.median(ratio)))
        yield (f"every slope multiplied by {fmt(c)} (fitted to the measured slopes)",
               lambda: judge(bias(h=[float(v) for v in c * expected])))


def alibi_check(actual: Any, heads: Any, q_len: Any, k_len: Any, *, form: Any, offset: Any,
                user: tuple[float, float] | None) -> None:
    __tracebackhide__ = True
    from ... import alibi

    truth = np.asarray(alibi.bias(heads, q_len, k_len, form=form, offset=offset))  # validates everything
    a, t_name = as_host("actual", actual)
    if tuple(a.shape) != truth.shape:
        raise ValueError(f"actual has shape {tuple(a.shape)}, but the ALiBi bias has shape (heads, q_len, k_len) = "
                         f"{truth.shape}")
    u_t = unit_roundoff(t_name)
    q_len, k_len = int(q_len), int(k_len)
    if user is None:
        tol = alibi_bound(truth, u_t, max(q_len, k_len) + abs(offset or 0))
    else:
        tol = user[1] + user[0] * np.where(np.isfinite(truth), np.abs(truth), 0.0)
    verdict = _alibi_verdict(a, truth, tol)
    if verdict.passed:
        return
    off = (k_len - q_len) if offset is None else int(offset)
    heads_text = str(int(heads)) if isinstance(heads, (int, np.integer)) else f"slopes {show(heads)}"
    lines = [
        f"ALiBi bias differs from pemath.alibi.bias({heads_text}, {q_len}, {k_len}, form={form!r}, offset={off}) "
        "beyond the tolerance.",
        mismatch_line(verdict),
    ]
    w = verdict.worst
    h, i, j = index_of(w, truth.shape)
    slopes = _alibi_slopes(heads)
    lines.append(f"Worst element (largest error / tolerance) at index {(h, i, j)}: actual {fmt(a.flat[w])}, "
                 f"expected {fmt(truth.flat[w])}, abs error {fmt(verdict.err.flat[w])}, tolerance {fmt(tol.flat[w])}")
    what = " (masked: -inf, or a value >= 1e4 below the row's largest bias)" if np.isneginf(truth.flat[w]) else ""
    lines.append(f"  head {h} (slope {fmt(slopes[h])}), query position {i + off}, key position {j}, "
                 f"distance key - query = {j - i - off}{what}")
    lines.append(_tolerance_line(t_name, u_t, user, "alibi_tolerance").replace(", phases in float32 or better",
                                                                              ", slopes in float32 or better"))
    lines[1:1] = [f"Measured from the output: {m}" for m in alibi_measure(a, slopes, q_len, k_len, off)]
    matched, tried, raised = first_match(_alibi_candidates(a, heads, q_len, k_len, form, offset, u_t, user))
    lines += diagnosis_lines(matched, tried, raised)
    raise AssertionError("\n".join(lines))


# --------------------------------------------------------------------------- T5

_MAX_DISTANCES = (64, 128, 256, 512, 1024)


def t5_check(actual: Any, relative_position: Any, *, bidirectional: Any, num_buckets: Any, max_distance: Any,
             exact: Any) -> None:
    __tracebackhide__ = True
    from ... import t5
    from ..._compat import is_array

    truth = np.asarray(_to_host_int(t5.bucket(relative_position, bidirectional=bidirectional,
                                              num_buckets=num_buckets, max_distance=max_distance, exact=exact)))
    rel = (np.asarray(as_host("relative_position", relative_position, floating=False)[0])
           if is_array(relative_position) else np.asarray(relative_position)).astype(np.int64)
    if not is_array(actual):
        raise TypeError(f"actual must be an array of bucket indices (NumPy, CuPy, torch, ...), got {show(actual)}")
    a, _ = as_host("actual", actual, floating=False)
    if a.dtype.kind not in "iu":
        raise TypeError(f"actual must hold integers (bucket indices), got {show(actual)}")
    if tuple(a.shape) != truth.shape:
        raise ValueError(f"actual has shape {tuple(a.shape)}, but relative_position has shape {truth.shape}")
    a = a.astype(np.int64)
    ok = a == truth
    if ok.all():
        return
    params = dict(bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance, exact=exact)
    lines = [
        "T5 buckets differ from pemath.t5.bucket(relative_position, "
        + ", ".join(f"{k}={v!r}" for k, v in params.items()) + ").",
        mismatch_line(Verdict(ok=ok, err=np.zeros(ok.shape), ratio=np.zeros(ok.shape))),
    ]
    first = int(np.argmax(~ok.reshape(-1)))
    idx = index_of(first, ok.shape)
    lines.append(f"First mismatch at index {idx}: relative position (key - query) {int(rel.flat[first])}, "
                 f"actual bucket {int(a.flat[first])}, expected {int(truth.flat[first])}")
    wrong = rel[~ok]
    lines.append(f"Mismatched relative positions span {int(wrong.min())} .. {int(wrong.max())}")

    def judge(**over: Any) -> Verdict | None:
        kw = dict(params)
        sign = over.pop("sign", 1)
        kw.update(over)
        alt = np.asarray(_to_host_int(t5.bucket(sign * rel, **kw)))
        eq = a == alt
        return Verdict(ok=eq, err=np.zeros(eq.shape), ratio=np.zeros(eq.shape))

    half = num_buckets // 2 if bidirectional else num_buckets
    upper = (rel > 0) * half if bidirectional else np.zeros_like(rel)

    dist = np.abs(rel) if bidirectional else np.maximum(-rel, 0)

    def unclamped() -> Verdict | None:
        # the fitted pattern of a missing clamp: at every distance from max_distance on, the kernel's bucket is
        # past the last one of its half (the unclamped formula gives at least h there), and those are the only
        # mismatches
        beyond = dist >= max_distance
        past = a - upper > half - 1
        if not beyond.any() or not np.all(past[beyond]):
            return None
        eq = ok | ((truth - upper == half - 1) & past)
        return Verdict(ok=eq, err=np.zeros(eq.shape), ratio=np.zeros(eq.shape))

    lines[2:2] = [f"Measured from the buckets: {m}" for m in _t5_measure(a, truth, rel, bidirectional, half)]

    def candidates() -> Iterator[Candidate]:
        top = int(np.max(a - upper))
        yield (f"buckets past the last one of their half (up to {top} where the last is {half - 1}): the clamp "
               f"min(·, {half - 1}) is missing", unclamped)
        yield "the relative position taken as query - key instead of key - query", lambda: judge(sign=-1)
        yield f"bidirectional={not bidirectional}", lambda: judge(bidirectional=not bidirectional)
        yield (f"query - key with bidirectional={not bidirectional}",
               lambda: judge(sign=-1, bidirectional=not bidirectional))
        yield (("T5's float32 floor (exact=False)" if exact else "the exact floor (exact=True) instead of T5's "
                "float32 computation"), lambda: judge(exact=not exact))
        for md in _MAX_DISTANCES:
            if md != max_distance:
                yield f"max_distance={md}", (lambda md=md: judge(max_distance=md))

    matched, tried, raised = first_match(candidates())
    lines += diagnosis_lines(matched, tried, raised)
    raise AssertionError("\n".join(lines))


def _t5_stats(a: np.ndarray, rel: np.ndarray, bidirectional: bool, half: int) -> tuple[bool, int, int, int]:
    """(upper half holds keys before the query, last distance with bucket == distance, last bucket, where first)."""
    if bidirectional:
        after = float(np.mean(a[rel > 0] >= half)) if np.any(rel > 0) else 0.0
        before = float(np.mean(a[rel < 0] >= half)) if np.any(rel < 0) else 0.0
        reversed_ = before > after
        upper = (a >= half) * half
    else:
        reversed_, upper = False, np.zeros_like(a)
    dist = np.abs(rel) if bidirectional else np.maximum(-rel, 0)
    near = a - upper
    wrong = np.unique(dist[near != dist])
    exact_to = int(wrong.min()) - 1 if wrong.size else int(dist.max())
    top = int(near.max())
    return reversed_, exact_to, top, int(dist[near == top].min())


def _t5_measure(a: np.ndarray, truth: np.ndarray, rel: np.ndarray, bidirectional: bool, half: int) -> list[str]:
    """Direction, exact range and last bucket, read from the buckets themselves, beside pemath's."""
    rev, exact_to, top, first = _t5_stats(a, rel, bidirectional, half)
    _, e_exact, e_top, e_first = _t5_stats(truth, rel, bidirectional, half)
    out = ["the upper half of the buckets holds keys before the query (expected: after it)"] if rev else []
    if exact_to != e_exact:
        out.append(f"buckets equal the distance up to distance {exact_to} (expected {e_exact})")
    if (top, first) != (e_top, e_first):
        out.append(f"the last bucket of a half is {top}, first reached at distance {first} (expected {e_top}, "
                   f"at {e_first})")
    return out


def _to_host_int(a: Any) -> np.ndarray:
    return as_host("buckets", a, floating=False)[0]
