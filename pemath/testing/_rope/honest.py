r"""Honest computations that the derived bound does not cover: recognised by emulating them.

The bound of ``_tolerance`` covers the frequencies computed per pair (``1 / b ** e`` or
``exp(-e ln b)``), whose relative error is a few units :math:`u = 2^{-24}` whatever the
pair. One honest computation in wide use is different: **the float32 recurrence** of
llama.cpp's CPU kernel (``ggml_rope_cache_init``: ``theta *= theta_scale``), where the
angle of pair :math:`i` is :math:`t_i = \mathrm{fl}_{32}(t_{i-1} s)`, :math:`t_0 = \mathrm{fl}_{32}(p)`,
with :math:`s = \mathrm{powf}(b, \mathrm{fl}_{32}(-2/d_r))`. Its relative phase error is
up to :math:`i` roundings plus :math:`i` times the error of :math:`s`:

.. math:: |t_i - p\,b^{-2i/d_r}| \le i\,(C_s + 1)\, u\, |t_i|, \qquad C_s = e_1 (\ln b + 1) + 8 ,

(``_tolerance.recurrence_constants``), which at the last pair of :math:`d_r = 512` is about :math:`2300 u`, against the
:math:`39 u` that the per-pair forms need. A bound that wide would let positions off by
one through, in the upper half of the pairs, from position :math:`\approx 3600`: it is not
the fix. The phases of the recurrence are not random, though: they are fixed by
:math:`p` and :math:`s`, so the oracle **recognises** them. When an output fails the
bound, it recomputes the recurrence's float32 phases exactly
(as ``pipelines.llama_cpp`` computes them) for :math:`s` the correctly rounded
``powf`` and its two float32 neighbours (a libm within 1 ulp, as glibc's and Apple's
are), and accepts the output when it is within the bound of everything after the phase:
cos and sin (2 ulp), the attention factor, the rounding to ``T`` and the products
(:math:`3 u_T`), pemath's float64 evaluation:

.. math:: \tau_{\text{rec}} = \sigma\, a\, S \left[ (2 + 2[a \ne 1])\, u + 3 u_T + u_{64}(|t_i| + 8) \right].

A kernel is accepted this way only if its output agrees with the recurrence at that
tightness for every element: a bug elsewhere (a wrong position, base, layout, factor)
moves some element by far more, and the position's own rounding is part of the
emulation. The same holds for llama.cpp's GPU backends (CUDA, Vulkan, SYCL), which compute each
angle as ``p * powf(theta_scale, i)``: the frequency :math:`s^i` carries :math:`i` times the
rounding of :math:`s`, all of one sign. It is recognised the same way: the frequencies
:math:`s^i` (for :math:`s` and its neighbours) are exact, and only ``powf``'s own error
(2 ulp in CUDA's math library), the division by a frequency factor and the product with
:math:`p` are left to the bound (``pair_scale`` with :math:`C_\theta = 4 + 2` per factor).

Recognised for single-axis RoPE with integer positions and no scaling, linear scaling
(ggml's ``freq_scale``), Llama 3's per-pair factors (the GGUF's ``rope_freqs``) or YaRN
(the index ramp, truncated, its default attention factor: ggml mixes the extrapolated and
interpolated angles with its ramp in float32, and multiplies cos and sin by its own float32
amplitude, which the emulation reproduces).

A bug on top of such a computation (positions shifted, the other layout, another base) is
named by the diagnosis group ``variants``: the alternative's angles are computed by the
same honest form, exactly, and judged with the same tight bound (never a widened one).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from .._core.tolerance import C_ATTENTION, C_OUTPUT, C_TRIG, SAFETY, U32, U64
from .tolerance import pair_bounds, pair_scale

__all__ = ["FORMS", "recognised", "recurrence_applies", "variants"]

#: Rows checked first (the worst of the failed comparison): a bug is refused on them.
_FIRST_ROWS = 16
#: CUDA's powf: within 2 ulp (4 u32) relative; a division by a frequency factor and the product by freq_scale: 1 each.
_C_GPU_POW = 4.0


@dataclasses.dataclass(frozen=True)
class Ggml:
    """How llama.cpp runs a spec: ``theta_scale`` (float32), the frequency factors, ``freq_scale``, YaRN's ramp
    bounds (None without YaRN) and the amplitude it multiplies cos and sin by (float32)."""

    s: np.float32
    ff: np.ndarray | None
    fs: float
    yarn: tuple | None
    mscale: np.float32

    def with_scale(self, s: np.float32) -> Ggml:
        return dataclasses.replace(self, s=s)


@dataclasses.dataclass(frozen=True)
class Form:
    """An honest way to compute the angles that the derived bound does not cover."""

    name: str
    #: ``phases(pos, g, r)``: float64 angles ``(P, r/2)`` for llama.cpp's parameters ``g``
    phases: Callable[..., np.ndarray]
    #: whether the phases are exact (the emulation reproduces every rounding) or carry a bounded error
    exact: bool


def _recurrence(pos: np.ndarray, g: Ggml, r: int) -> np.ndarray:
    from .. import pipelines

    return pipelines._recurrence_phases(pos, g.s, r // 2, g.ff, g.fs, g.yarn).astype(np.float64)


def _gpu_freq(g: Ggml, r: int) -> np.ndarray:
    """p * powf(s, i), divided by the factor, times freq_scale (YaRN: mixed with the extrapolated one), per unit p."""
    from .. import pipelines

    f = np.float64(g.s) ** np.arange(r // 2, dtype=np.float64)
    if g.ff is not None:
        f = f / np.asarray(g.ff, dtype=np.float64)
    if g.yarn is None:
        return f * g.fs
    mix = pipelines._yarn_mix(r // 2, g.yarn).astype(np.float64)
    return f * (g.fs * (1.0 - mix) + mix)


def _gpu_pow(pos: np.ndarray, g: Ggml, r: int) -> np.ndarray:
    return pos[:, None] * _gpu_freq(g, r)[None, :]


#: The honest computations recognised by emulation.
FORMS = (
    Form("the float32 recurrence of the angles (llama.cpp's CPU kernel, theta *= theta_scale)", _recurrence, True),
    Form("the angles p * powf(theta_scale, i) (llama.cpp's GPU kernels)", _gpu_pow, False),
)


def _neighbours(s: np.float32) -> tuple[np.float32, ...]:
    return (s, np.nextafter(s, np.float32(0.0)), np.nextafter(s, np.float32(1.0)))


def _setup(spec: Any, r: int) -> Ggml | None:
    """llama.cpp's parameters for a spec it runs this way, or None."""
    from .. import pipelines

    if spec.is_multi_axis or spec.out_layout is not None or spec.inv_freq is not None:
        return None
    try:
        ff, fs, yarn, mscale = pipelines._ggml_params(spec, r)
        s = pipelines._theta_scale_f32(spec.base, r)
    except (ValueError, TypeError, OverflowError):
        return None
    return Ggml(s, ff, fs, yarn, mscale)


def _integral(pos: np.ndarray) -> bool:
    return bool(np.all(pos == np.round(pos)) and not np.any(np.abs(pos) >= 2**31))  # ggml's positions are int32


def recurrence_applies(case: Any) -> bool:
    """Whether llama.cpp computes this case one of the ways of ``FORMS`` (single axis, integer positions, ...)."""
    return _integral(case.pos) and _setup(case.spec, case.r) is not None


def _tables(form: Form, pos: np.ndarray, g: Ggml, r: int, factor: float, u_t: float) -> tuple[np.ndarray, ...]:
    """``(inverse, cos, sin, k)`` per distinct position: the form's angles and the bound per unit of S."""
    distinct, inverse = np.unique(pos, return_inverse=True)
    phase = form.phases(distinct, g, r)
    amp = float(g.mscale) if g.yarn is not None else factor  # llama.cpp's own float32 amplitude under YaRN
    if form.exact:
        c_abs = (C_TRIG + (C_ATTENTION if amp != 1.0 else 0.0)) * U32 + C_OUTPUT * u_t
        k = SAFETY * abs(amp) * (c_abs + U64 * (np.abs(phase) + 8.0))
    else:
        extra = (1.0 if g.ff is not None else 0.0) + (1.0 if g.fs != 1.0 else 0.0) + (3.0 if g.yarn else 0.0)
        c = np.full(r // 2, _C_GPU_POW + extra)
        c[0] = 0.0 if extra == 0.0 else c[0]  # powf(s, 0) = 1 exactly
        k = pair_scale(distinct, _gpu_freq(g, r), c, amp, u_t)
    return inverse.reshape(-1), np.cos(phase) * amp, np.sin(phase) * amp, k


def _judge(case: Any, a2: np.ndarray, rows: np.ndarray, inverse: np.ndarray, cos: np.ndarray, sin: np.ndarray,
           k: np.ndarray, u_t: float, layout: str | None = None) -> bool:
    """Whether every element of ``rows`` is within the form's bound of the rotation by the given tables."""
    from ...rope import _core

    r, layout = case.r, layout or case.layout
    x = case.x2[rows].astype(np.float64)
    a = a2[rows].astype(np.float64)
    idx = inverse[rows]
    truth = _core.rotate(x, cos[idx], sin[idx], layout, r, np, np.float64)
    tol = np.empty_like(x)
    tol[:, :r] = pair_bounds(x[:, :r], k[idx], layout, r, u_t)
    tol[:, r:] = u_t * np.abs(x[:, r:])
    with np.errstate(invalid="ignore"):
        return bool(np.all(np.abs(a - truth) <= tol))


def _scatter(n: int, rows: np.ndarray, values: np.ndarray) -> np.ndarray:
    """An index array of length ``n`` holding ``values`` at ``rows`` (0 elsewhere)."""
    out = np.zeros(n, dtype=np.int64)
    out[rows] = values
    return out


def recognised(case: Any, a2: np.ndarray, u_t: float, row_ratio: np.ndarray) -> str | None:
    """The name of the honest computation that ``a2`` (``(N, d)``) is, or None.

    Called only for an output that failed the derived bound; ``row_ratio`` (each row's
    largest error / tolerance) orders the rows so that a bug is refused on its worst rows
    first.
    """
    if not recurrence_applies(case) or not np.all(np.isfinite(a2)):
        return None
    g0 = _setup(case.spec, case.r)
    n = case.x2.shape[0]
    order = np.argsort(-np.nan_to_num(row_ratio, nan=np.inf), kind="stable")
    first, rest = order[:_FIRST_ROWS], order[_FIRST_ROWS:]
    for form in FORMS:
        for s in _neighbours(g0.s):
            g = g0.with_scale(s)
            inv, cos, sin, k = _tables(form, case.pos[first], g, case.r, case.factor, u_t)
            if not _judge(case, a2, first, _scatter(n, first, inv), cos, sin, k, u_t):
                continue  # the worst rows first: a bug is refused there, cheaply
            if rest.size == 0:
                return form.name
            inv, cos, sin, k = _tables(form, case.pos, g, case.r, case.factor, u_t)
            if all(_judge(case, a2, rest[i:i + 4096], inv, cos, sin, k, u_t) for i in range(0, rest.size, 4096)):
                return form.name
    return None


def variants(j: Any, bases: tuple[float, ...]) -> Iterator[tuple[str, Callable[[], Any]]]:
    """Bugs on top of an honest form (a diagnosis group): positions shifted by one, the other layout, another of
    ``bases``, each computed by the form exactly and judged with its tight bound."""
    c = j.case
    if j.user is not None or not recurrence_applies(c):
        return
    other = "half" if c.layout == "interleaved" else "interleaved"
    changes = [("positions shifted by +1 (positions counted from 1)", c.pos + 1, c.spec, c.layout),
               ("positions shifted by -1", c.pos - 1, c.spec, c.layout),
               (f"the other layout: layout={other!r}", c.pos, c.spec, other)]
    changes += [(f"base={b:g} instead of {c.base:g}", c.pos, c.spec.replace(base=b), c.layout)
                for b in bases if b != c.base]
    for form in FORMS:
        for words, pos, spec, layout in changes:
            def thunk(form=form, pos=pos, spec=spec, layout=layout) -> Any:
                from ...rope import _core

                g = _setup(spec, c.r)
                if g is None or not _integral(pos):
                    return None
                inv, cos, sin, k = _tables(form, pos, g, c.r, c.factor, j.u_t)
                expected = np.asarray(_core.rotate(c.x2, cos[inv], sin[inv], layout, c.r, np, np.float64))
                key = ("honest right output", form.name)
                if key not in j.memo:  # the form's right output, computed once per form
                    inv0, cos0, sin0, _ = _tables(form, c.pos, _setup(c.spec, c.r), c.r, c.factor, j.u_t)
                    j.memo[key] = np.asarray(_core.rotate(c.x2, cos0[inv0], sin0[inv0], c.layout, c.r, np,
                                                          np.float64))
                right = j.memo[key]

                def bound() -> np.ndarray:
                    out = j.u_t * np.abs(c.x2)
                    out[:, :c.r] = pair_bounds(c.x2[:, :c.r], k[inv], layout, c.r, j.u_t)
                    return out

                return j.judge(expected, bound, reference=right)  # told apart from the form's right output

            yield f"{words}, with {form.name}", thunk
