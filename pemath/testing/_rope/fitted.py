r"""Naming a mechanism from the measurement: formulas with free parameters, fitted to what the output reads.

The listed alternatives of ``_diagnose`` name the bugs someone wrote down. A kernel can be
wrong in a way no list holds and still be described precisely: its frequencies follow
YaRN's ramp with other bounds, its weights are Llama 3's with the two sides exchanged,
its positions wrapped at a power of two. Each family here reads one quantity from the
output (:func:`pemath.testing.recover_rope`: the per-pair frequencies, the amplitude),
fits a formula with free parameters to it, and yields the fitted formula as a candidate
that is then judged like any listed one: against every element, with the derived bound.
A fit that does not reproduce the output is not named. The label names the family and
the fitted parameters, and says which spec parameters they correspond to when a simple
exchange explains them.

Families (:data:`FAMILIES`, in the order tried):

* **power law** :math:`\theta_i = b^{-2i/d_r} / s`: a base and a linear factor (the
  spec's base or factor wrong, dynamic NTK at another length);
* **two-table blend** :math:`\theta_i' = w_i\,\theta_i + (1 - w_i)\,\theta_i / s` with the
  spec's extrapolated and interpolated tables and a weight linear in the pair index
  (YaRN's ramp, bounds :math:`(a, b)` fitted) or in :math:`L_0/\lambda_i` (Llama 3's
  smoothing, factors fitted; a falling weight is the two sides exchanged);
* **amplitude** :math:`a' = 1 + 0.1\,k \ln s` (YaRN's form with another multiplier
  :math:`k`) or :math:`a' = a^q` (the factor raised to a power), named only when
  :math:`k` or :math:`q` is a simple number (any amplitude fits some real :math:`k`);
* **wrapped positions** :math:`p \bmod 2^k`, unsigned or two's complement: positions
  stored in a :math:`k`-bit integer (uint16: 65536 reads as 0).

A new family is a generator ``family(j) -> Iterator[(label, thunk)]`` added to
:data:`FAMILIES`; ``thunk()`` returns the ``Verdict`` of the fitted formula (``j.rotate``,
``j.apply``), or None when it does not apply.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from .._core.measure import snap
from .._core.report import Candidate, fmt

__all__ = ["FAMILIES", "fitted_candidates"]

def _simple(v: float, denominators: tuple[int, ...] = (1, 2, 3, 4), rtol: float = 1e-4) -> float | None:
    """``v`` as a fraction with a small denominator, if it is one (within ``rtol``)."""
    for q in denominators:
        n = round(v * q)
        if abs(v * q - n) <= rtol * max(1.0, abs(v * q)):
            return n / q
    return None


def measured_frequencies(j: Any) -> np.ndarray | None:
    """The per-pair frequencies read from the output (NaN where unreadable), or None when nothing can be read."""
    from .recover import effective_frequencies, recover_host

    c = j.case
    if c.r < 4 or not np.all(np.isfinite(j.a2)):
        return None
    try:
        rec = recover_host(j.a2, c.x2, j.u_t, "float64", (c.d,), c.layout, c.r)
    except (ValueError, FloatingPointError):
        return None
    with np.errstate(all="ignore"):
        f = effective_frequencies(rec, c.pos, c.freq)
    f = np.where(np.isfinite(f) & (f > 0), f, np.nan)
    return f if np.count_nonzero(np.isfinite(f)) >= 2 else None


def measured_amplitude(j: Any) -> float | None:
    """The median amplitude read from the output (the attention factor it applied), or None."""
    from .recover import recover_host

    c = j.case
    if not np.all(np.isfinite(j.a2)):
        return None
    try:
        rec = recover_host(j.a2, c.x2, j.u_t, "float64", (c.d,), c.layout, c.r)
    except (ValueError, FloatingPointError):
        return None
    amp = rec.amplitude[np.isfinite(rec.amplitude)]
    return float(np.median(amp)) if amp.size else None


def _with_frequencies(j: Any, freq: np.ndarray) -> Any:
    """The verdict of a rotation of the case's x at the case's positions by ``freq`` (its own bound)."""
    c = j.case
    return j.rotate(c.pos[:, None] * freq[None, :], bound=lambda: j.bound(freq=freq))


# --------------------------------------------------------------------------- power law


def _ntk_length(c: Any, base_fit: float) -> int | None:
    """For a dynamic NTK spec: the length whose scaled base is the measured one (b' = b (s L/L0 - (s - 1))^(r/(r-2)))."""
    from ...scaling import DynamicNTK

    sc = c.scaling
    if not isinstance(sc, DynamicNTK) or c.r <= 2 or not base_fit > c.base:
        return None
    t = (base_fit / c.base) ** ((c.r - 2) / c.r)
    length = int(round(sc.original_max_position * (t + sc.factor - 1) / sc.factor))
    return length if length > sc.original_max_position and length != c.seq_len else None


def power_law(j: Any) -> Iterator[Candidate]:
    """Fit the measured frequencies to theta_i = b^(-2i/d_r) / s (a base and a linear factor) and name the fit."""
    from ...scaling import Linear

    c = j.case
    if c.spec.inv_freq is not None:
        return
    f = measured_frequencies(j)
    if f is None:
        return
    ok = np.isfinite(f)
    e = 2.0 * np.arange(c.r // 2)[ok] / c.r
    slope, intercept = np.polyfit(e, np.log(f[ok]), 1)
    b, s = snap(math.exp(-slope)), snap(math.exp(-intercept))
    if not (math.isfinite(b) and math.isfinite(s)) or b <= 0 or s <= 0:
        return
    if b == c.base and c.scaling is None and s == 1.0:
        return
    ntk = _ntk_length(c, math.exp(-slope)) if s == 1.0 else None
    if ntk is not None:
        yield (f"dynamic NTK's base computed at length {ntk} instead of seq_len {c.seq_len} (the length solved from "
               f"the measured base {fmt(b)})", lambda: j.apply(seq_len=ntk))
    scaling = None if s == 1.0 else Linear(s)
    words = f"base {fmt(b)}" + ("" if s == 1.0 else f" with linear scaling by {fmt(s)}")
    yield (f"the frequencies of {words} (θ_i = {fmt(b)}^(-2i/{c.r})" + ("" if s == 1.0 else f" / {fmt(s)}")
           + f", fitted to the measured ones; the spec: base {fmt(c.base)}"
           + (f", {c.scaling!r}" if c.scaling is not None else "") + ")",
           lambda: j.apply(base=b, scaling=scaling))


# --------------------------------------------------------------------------- two-table blend


def _blend_weights(j: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, float] | None:
    """``(w, theta, interp, s)``: the measured weight of the extrapolated table per pair (NaN where unreadable)."""
    from ... import rope

    c = j.case
    s = getattr(c.scaling, "factor", None)
    if c.spec.inv_freq is not None or not isinstance(s, (int, float)) or s == 1.0:
        return None
    f = measured_frequencies(j)
    if f is None:
        return None
    theta = np.asarray(rope.inv_freq(c.r, base=c.base), dtype=np.float64)
    interp = theta / s
    with np.errstate(all="ignore"):
        w = (f - interp) / (theta - interp)
    return w, theta, interp, float(s)


def _line(v: np.ndarray, w: np.ndarray) -> tuple[float, float] | None:
    """Least-squares ``w = alpha + beta v`` over the pairs strictly inside the blend (0.02 < w < 0.98)."""
    inner = np.isfinite(w) & (w > 0.02) & (w < 0.98)
    if np.count_nonzero(inner) < 2 or np.ptp(v[inner]) == 0:
        return None
    beta, alpha = np.polyfit(v[inner], w[inner], 1)
    if not (math.isfinite(alpha) and math.isfinite(beta)) or beta == 0:
        return None
    return float(alpha), float(beta)


def _yarn_bounds(sc: Any, r: int, base: float, fast: float, slow: float) -> tuple[float, float]:
    """YaRN's (low, high) ramp bounds for the given betas, as ``correction_range`` computes them (any order)."""
    from ...scaling import YaRN

    def one(beta: float) -> tuple[float, float]:
        return YaRN(sc.factor, sc.original_max_position, beta_fast=beta, beta_slow=beta,
                    truncate=sc.truncate).correction_range(r, base)

    return one(fast)[0], one(slow)[1]


def yarn_ramp(j: Any) -> Iterator[Candidate]:
    """YaRN's blend with the ramp's bounds fitted: 1 - w_i = clip((i - a)/(b - a), 0, 1)."""
    from ...scaling import YaRN

    c = j.case
    if not isinstance(c.scaling, YaRN) or c.scaling.ramp != "index":
        return
    got = _blend_weights(j)
    if got is None:
        return
    w, theta, interp, _ = got
    i = np.arange(c.r // 2, dtype=np.float64)
    fit = _line(i, 1.0 - w)
    if fit is None:
        return
    alpha, beta = fit  # 1 - w = alpha + beta i = (i - a) / (b - a)
    a, b = -alpha / beta, -alpha / beta + 1.0 / beta
    a, b = (float(round(a)) if abs(a - round(a)) < 0.02 else snap(a)), (
        float(round(b)) if abs(b - round(b)) < 0.02 else snap(b))
    low, high = c.scaling.correction_range(c.r, c.base)
    if (a, b) == (low, high) or a == b:
        return
    ramp = np.clip((i - a) / (b - a), 0.0, 1.0)
    freq = (1.0 - ramp) * theta + ramp * interp
    sc = c.scaling
    words = f"YaRN's ramp with bounds (low, high) = ({fmt(a)}, {fmt(b)}) instead of ({fmt(low)}, {fmt(high)})"
    try:
        swapped = _yarn_bounds(sc, c.r, c.base, sc.beta_slow, sc.beta_fast)
    except ValueError:
        swapped = None
    if swapped is not None and (a, b) == tuple(float(t) for t in swapped):
        words += (f": beta_fast and beta_slow swapped (the ramp's bounds of beta_fast={fmt(sc.beta_slow)}, "
                  f"beta_slow={fmt(sc.beta_fast)})")
    elif a > b:
        words += ": the ramp runs backwards (a > b)"
    yield words + " (fitted to the measured frequencies)", lambda: _with_frequencies(j, freq)


def llama3_blend(j: Any) -> Iterator[Candidate]:
    """Llama 3's smoothing with its weight fitted: w = alpha + beta L0/lambda in the band, the spec's outside it."""
    from ...scaling import Llama3

    c = j.case
    sc = c.scaling
    if not isinstance(sc, Llama3) or sc.high_freq_factor == sc.low_freq_factor:
        return
    got = _blend_weights(j)
    if got is None:
        return
    w, theta, interp, _ = got
    L0, lo, hi = sc.original_max_position, sc.low_freq_factor, sc.high_freq_factor
    v = L0 * theta / (2 * math.pi)  # L0 / wavelength
    fit = _line(v, w)
    if fit is None:
        return
    alpha, beta = fit
    if beta > 0:  # w = (v - l) / (h - l)
        lo2 = snap(-alpha / beta)
        hi2 = snap(lo2 + 1.0 / beta)
        if (lo2, hi2) == (snap(lo), snap(hi)):
            return
        band = (v >= min(lo, lo2)) & (v <= max(hi, hi2))
        weight = np.clip((v - lo2) / (hi2 - lo2), 0.0, 1.0)
        words = (f"Llama 3's smoothing with low_freq_factor {fmt(lo2)} and high_freq_factor {fmt(hi2)} instead of "
                 f"{fmt(lo)} and {fmt(hi)}")
    else:  # w = (h - v) / (h - l): the two weights exchanged
        span = -1.0 / beta
        hi2 = snap(-alpha / beta)
        lo2 = snap(hi2 - span)
        band = (v >= lo) & (v <= hi)
        weight = (hi2 - v) / (hi2 - lo2)
        words = (f"Llama 3's smoothing with its two weights swapped: θ_i/s weighted by smooth and θ_i by 1 - smooth, "
                 f"smooth = (L0/λ - {fmt(lo2)}) / ({fmt(hi2)} - {fmt(lo2)})")
        if (lo2, hi2) == (snap(lo), snap(hi)):
            words += " (the spec's factors)"
    expected_w = np.where(v > hi, 1.0, np.where(v < lo, 0.0, (v - lo) / (hi - lo)))
    w_fit = np.where(band, weight, expected_w)
    freq = w_fit * theta + (1.0 - w_fit) * interp
    yield words + " (fitted to the measured frequencies)", lambda: _with_frequencies(j, freq)


# --------------------------------------------------------------------------- amplitude


def amplitude(j: Any) -> Iterator[Candidate]:
    """The measured amplitude as YaRN's 1 + 0.1 k ln s, or as the expected factor to a power, for a simple k or q."""
    c = j.case
    a = measured_amplitude(j)
    if a is None or not a > 0 or abs(a - c.factor) <= 1e-6 * max(1.0, abs(c.factor)):
        return
    s = getattr(c.scaling, "factor", None)
    if isinstance(s, (int, float)) and s > 1:
        k = _simple((a - 1.0) / (0.1 * math.log(s)))
        if k is not None and k not in (0.0,):
            a_k = 1.0 + 0.1 * k * math.log(s)
            yield (f"the attention factor 0.1·k·ln(s) + 1 with k = {fmt(k)} (= {fmt(a_k)}; YaRN's form with mscale "
                   f"{fmt(k)}), where {fmt(c.factor)} was expected (fitted to the measured amplitude)",
                   lambda: j.rotate(c.pos[:, None] * c.freq[None, :], factor=a_k))
    if c.factor > 0 and c.factor != 1.0:
        q = _simple(math.log(a) / math.log(c.factor))
        if q is not None and q not in (1.0, 0.0, 2.0):  # 0 and 2 are listed ("missing", "twice")
            a_q = c.factor ** q
            yield (f"the attention factor raised to the power {fmt(q)} ({fmt(c.factor)}^{fmt(q)} = {fmt(a_q)}; "
                   "fitted to the measured amplitude)",
                   lambda: j.rotate(c.pos[:, None] * c.freq[None, :], factor=a_q))


# --------------------------------------------------------------------------- wrapped positions


_INT_NAMES = {8: "8", 16: "16", 32: "32"}


def wrapped_positions(j: Any) -> Iterator[Candidate]:
    """Positions stored in a k-bit integer: p mod 2^k (unsigned) or the two's complement wrap (signed)."""
    c = j.case
    pos = c.pos
    if not np.all(pos == np.round(pos)) or pos.size == 0:
        return
    top = float(np.max(np.abs(pos)))
    for k in range(8, 33):
        m = 2.0**k
        if m <= top:
            unsigned = np.mod(pos, m)
            name = f"uint{k}" if k in _INT_NAMES else f"an unsigned {k}-bit integer"
            yield (f"positions stored in {name} (wrapped modulo 2^{k} = {int(m)}: {int(m)} reads as 0; fitted "
                   "from the positions)", lambda unsigned=unsigned: j.apply(pos=unsigned))
        if m / 2 <= top:
            signed = np.mod(pos + m / 2, m) - m / 2
            name = f"int{k}" if k in _INT_NAMES else f"a signed {k}-bit integer"
            yield (f"positions stored in {name} (two's complement: {int(m // 2)} reads as {-int(m // 2)}; fitted "
                   "from the positions)", lambda signed=signed: j.apply(pos=signed))


#: The fitted families, in the order tried.
FAMILIES: tuple[Callable[[Any], Iterator[Candidate]], ...] = (
    power_law, yarn_ramp, llama3_blend, amplitude, wrapped_positions)


def fitted_candidates(j: Any) -> Iterator[Candidate]:
    """Every family's fitted candidates (a family that fails while fitting is skipped: the assertion matters more)."""
    for family in FAMILIES:
        try:
            yield from family(j)
        except (ValueError, FloatingPointError, np.linalg.LinAlgError, ZeroDivisionError, OverflowError):
            continue
