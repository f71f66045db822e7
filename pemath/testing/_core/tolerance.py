r"""The default tolerances of the oracle, derived from the arithmetic of an honest kernel.

A tolerance that is picked ("atol=1e-3 until it is green") is either too loose to catch
a bug or too tight for long positions. The tolerances here are *bounds on the error of
an honest implementation*, element by element, so an honest kernel passes at any
position and anything that exceeds them is a bug, not noise.

What "honest" means
-------------------
The truth is pemath's float64 rotation of the **given** ``x`` (the oracle never compares
against a low-precision copy of itself, and the rounding of ``x`` to the kernel's input
dtype is not counted: the truth starts from the exact values the kernel received). An
honest kernel whose output has dtype ``T`` (unit roundoff :math:`u_T`: float64
:math:`2^{-53}`, float32 :math:`2^{-24}`, float16 :math:`2^{-11}`, bfloat16
:math:`2^{-8}`)

1. computes the inverse frequencies :math:`\theta_i = b^{-e_i}`, :math:`e_i = 2i/d_r`, and the
   phases :math:`\varphi = p\,\theta_i` in **float32 or better** (:math:`u = 2^{-24}`);
2. evaluates cos and sin in float32 or better, optionally multiplies them by the attention
   factor :math:`a`, and rounds them to ``T``;
3. multiplies and adds in ``T`` (or better), giving
   :math:`y_a = x_a c - x_b s,\ y_b = x_b c + x_a s`.

Computing the phase in bfloat16 or float16 is not honest: it is one of the bugs the
oracle must catch (at position 1000 a bfloat16 phase is off by up to 2 radians).

The bound, term by term
-----------------------
Write :math:`S = |x_a| + |x_b|` for the pair of the element, :math:`u = 2^{-24}`. The
derivative of :math:`y` with respect to the phase is at most :math:`aS` in absolute value,
so every error below is multiplied by :math:`aS`.

Frequency (relative error :math:`C_\theta u`). The two forms found in real code:

* ``1 / b ** (2i/d_r)`` in float32 (Hugging Face, Meta, GPT-NeoX): the base rounded to
  float32 moves :math:`b^{e}` by :math:`e u`; the exponent rounded moves it by
  :math:`e \ln b\, u`; we allow ``powf`` 4 ulp (glibc and SLEEF, which torch uses on
  the CPU, are within 1 ulp; GPU math libraries document a few), i.e. :math:`8u`
  relative (one ulp is at most :math:`2u` relative); we allow the reciprocal 1 ulp (:math:`2u`;
  an IEEE division is within half an ulp).
  Total :math:`e(\ln b + 1) + 10`.
* ``exp(-(2i/d_r) ln b)`` in float32 (tensor2tensor, fairseq style): three roundings in the
  exponent, each :math:`e \ln b\, u` in absolute terms, and we allow ``expf`` 2 ulp:
  :math:`3 e \ln b + 4`.

Both are below :math:`C_\theta = 3 e \ln b + e + 10`, except for the first pair: ``pow(b, 0)``
and ``exp(0)`` are exactly 1 in every C library (C99 Annex F), so :math:`C_\theta = 0` at
:math:`e = 0`. A scaling variant adds the roundings of its own operations
(:func:`frequency_constants`).

Phase. :math:`\mathrm{fl}(p\,\theta)` adds one rounding: relative :math:`(C_\theta + 1) u`,
i.e. an absolute phase error :math:`(C_\theta + 1) u |\varphi|`. The position itself is
rounded to float32 above :math:`2^{24}`: that error, :math:`\theta\,|\mathrm{fl}(p) - p|`, is
computed exactly from the given positions.

cos and sin. We allow 2 ulp in float32 (glibc and SLEEF are within 1; not the
``-use_fast_math`` intrinsics ``__cosf``/``__sinf``, whose error grows with the phase):
an absolute error of at most :math:`2u` for values in :math:`[-1, 1]`. With an attention
factor: its rounding to float32 and its product, :math:`2u` more, relative.

Rounding cos and sin to ``T``: :math:`u_T` each (relative to :math:`a`). The two products
and the sum in ``T``: :math:`u_T (|x_a c| + |x_b s|) + u_T |y| \le 2 u_T a S`. So
:math:`3 u_T` in all. (A kernel that multiplies in float32 and rounds once does better.)

The reference. pemath's float64 result is within :math:`u_{64}(|\varphi| + 8)` of the exact
value per unit of :math:`aS` (its own phase, cos, sin and products); it is added so that
float64 kernels are judged fairly.

Altogether, for a rotated element of pair :math:`i` at position :math:`p`:

.. math::

    \tau = \sigma\, a\, S \left[ (C_\theta + 1)\, u\, |\varphi| + \theta\,|\mathrm{fl}_{32}(p) - p|
        + (2 + 2[a \ne 1])\, u + 3 u_T + u_{64} (|\varphi| + 8) \right]

with the safety factor :math:`\sigma = 2`: the terms above are first order in the unit
roundoffs, and the factor covers the second-order terms and a libm one ulp worse than
its documentation, at the price of one bit of sensitivity (every bug in pemath's
catalogue is off by far more). A feature beyond ``rotary_dim`` is passed through: its
only allowed error is the rounding to ``T``, :math:`u_T |x_j|`.

What this can and cannot see
----------------------------
At short positions the :math:`3 u_T` term dominates: a bfloat16 kernel is checked to
about :math:`6 u_T \approx 2.3\%` of :math:`S`, float16 to :math:`0.3\%`, float32 to about
:math:`4 \cdot 10^{-7}`. The phase term grows with the position, in proportion to the
frequency, like the effect of a wrong position: positions off by one change the phase by
:math:`\theta_i`, the allowance is :math:`2 (C_\theta + 1) u\, p\, \theta_i`. So a kernel
that is off by one is caught while :math:`p \lesssim 1 / (2 (C_\theta + 1) u)`, about
:math:`3 \cdot 10^5` for :math:`C_\theta \approx 12`: beyond that an honest float32 phase
is itself uncertain by a sizeable fraction of :math:`\theta_i`, and no tolerance that
accepts every honest kernel can tell the two apart. Errors that do not scale with the
position (layout, base, scaling, attention factor, sign, cos/sin order, a bfloat16
phase) are caught at every position. Test with short positions as well as long ones.
Further out (from about :math:`6 \cdot 10^5` for :math:`d = 128`) the bound of a few elements
admits every value they could take; the asserts then say so with a
:class:`~pemath.VacuousToleranceWarning` (``_vacuity``) instead of passing silently.

Sinusoidal and ALiBi tables follow the same accounting (``_tables/tolerance.py``).

This module holds what every encoding's bound shares (the unit roundoffs, the frequency
and phase errors); the RoPE bound is ``_rope/tolerance.py``, the tables' bounds
``_tables/tolerance.py``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ... import _dtypes

__all__ = [
    "U32",
    "U64",
    "SAFETY",
    "unit_roundoff",
    "frequency_constants",
    "recurrence_constants",
    "position_rounding",
    "phase_error",
    "output_floor",
]

#: Unit roundoff of float32, the precision an honest kernel computes its phases in.
U32 = 2.0**-24
#: Unit roundoff of float64, pemath's own working precision.
U64 = 2.0**-53
#: The safety factor on the first-order bounds (module docstring).
SAFETY = 2.0
#: cos/sin evaluated in float32: at most 2 ulp, i.e. 2 u32 absolute on [-1, 1].
C_TRIG = 2.0
#: The attention factor rounded to float32 and multiplied into cos and sin: 2 u32 relative.
C_ATTENTION = 2.0
#: Rounding cos and sin to T, two products and a sum in T: 3 u_T.
C_OUTPUT = 3.0
#: The frequency's constant part, in u32 (module docstring: powf 8, reciprocal 2).
C_FREQ = 10.0



# --------------------------------------------------------------------------- dtypes


dtype_name = _dtypes.name


def unit_roundoff(dtype: Any) -> float:
    r"""The unit roundoff :math:`u = \epsilon / 2` of a floating dtype.

    One rounding to the dtype changes a value by a relative amount of at most :math:`u`:
    float64 :math:`2^{-53}`, float32 :math:`2^{-24}`, float16 :math:`2^{-11}`, bfloat16
    :math:`2^{-8}`; float8 and other narrow formats via ml_dtypes.

    Parameters
    ----------
    dtype
        A NumPy, ml_dtypes, torch, CuPy or array-api-strict dtype, or its name.

    Examples
    --------
    >>> from pemath.testing import unit_roundoff
    >>> unit_roundoff("bfloat16") == 2.0**-8, unit_roundoff("float32") == 2.0**-24
    (True, True)
    """
    return _dtypes.unit_roundoff(dtype)


# --------------------------------------------------------------------------- frequencies


def frequency_constants(
    r: int, base: float | None, scaling: Any = None, seq_len: int | None = None, *, explicit: bool = False
) -> np.ndarray:
    r""":math:`C_\theta` of each pair: the relative float32 error of an honest frequency, in units of :math:`u`.

    :math:`3 e_i |\ln b| + e_i + 10` with :math:`e_i = 2i/d_r` (0 for :math:`e_i = 0`: :math:`b^0 = 1`
    exactly; module docstring), plus for each
    scaling variant the roundings of its own float32 operations: a division by the factor
    (linear, proportional: 2), the enlarged base (NTK: its logarithm replaces
    :math:`\ln b`; dynamic NTK computes it in float32 at run time: 8 more), YaRN's blend and
    ramp (:math:`7 + \Delta\gamma`, the ramp's float32 error), LongRoPE's division by the
    per-pair factor (2), Llama 3's smoothing (:math:`(1 + h_f/(h_f - l))(C_\theta + 5)`, :math:`l` and
    :math:`h_f` its low and high frequency factors), and 16 for a variant pemath does not know.
    ``explicit``: the frequencies are given as numbers (a spec's ``inv_freq``); a kernel
    derives them with a few float32 operations of its own (timm: ``linspace``, then a product by :math:`\pi`; or a power), 4 roundings.

    Returns
    -------
    numpy.ndarray
        float64, shape ``(r // 2,)``.
    """
    from ... import scaling as sc

    if explicit:
        return np.full(r // 2, 4.0)
    e = np.arange(r // 2, dtype=np.float64) * 2.0 / r

    def pow_form(b: float) -> np.ndarray:
        return 3.0 * e * abs(math.log(b)) + e + np.where(e > 0, C_FREQ, 0.0)

    if scaling is None:
        return pow_form(base)
    if isinstance(scaling, (sc.Linear, sc.Proportional)):
        return pow_form(base) + 2.0
    if isinstance(scaling, sc.NTK):
        return pow_form(scaling.scaled_base(r, base)) + 2.0
    if isinstance(scaling, sc.DynamicNTK):
        return pow_form(scaling.scaled_base(r, base, seq_len)) + 8.0
    if isinstance(scaling, sc.YaRN):
        low, high = scaling.correction_range(r, base)
        if low == high:
            high += 0.001
        d_gamma = (abs(high) + abs(low)) / (high - low) + 2 + abs(low) / (high - low)
        return pow_form(base) + 7.0 + d_gamma
    if isinstance(scaling, sc.LongRoPE):
        return pow_form(base) + 2.0
    if isinstance(scaling, sc.Llama3):
        h, lo = scaling.high_freq_factor, scaling.low_freq_factor
        if h == lo:  # no smoothing band: each frequency is theta or theta / s
            return pow_form(base) + 2.0
        return (1 + h / (h - lo)) * (pow_form(base) + 5.0)
    return pow_form(base) + 16.0


#: ggml's ``theta_scale = powf(b, -2.0f/d_r)``: the exponent's rounding (e_1 ln b), the base's (e_1) and
#: powf's 4 ulp (8), in u32.
C_SCALE_POW = 8.0


def recurrence_constants(r: int, base: float) -> np.ndarray:
    r"""The relative phase error of the float32 recurrence :math:`t_{i+1} = \mathrm{fl}_{32}(t_i s)`, in u32.

    :math:`i (C_s + 1)` for pair :math:`i`, with :math:`C_s = e_1 (|\ln b| + 1) + 8` the error of
    :math:`s = \mathrm{powf}(b, -2/d_r)` (``_honest``): :math:`i` roundings and :math:`i` factors
    :math:`s`. The oracle does not accept an output on this bound (it recognises the
    recurrence exactly instead); the diagnosis judges its alternatives with it when the
    kernel's angles come from the recurrence.
    """
    e1 = 2.0 / r
    c_s = e1 * (abs(math.log(base)) + 1.0) + C_SCALE_POW
    return np.arange(r // 2, dtype=np.float64) * (c_s + 1.0)


#: Fractional positions computed in float32 as a grid: ``start + k * step`` over the range (5 u32 of the
#: largest |position|) and a rescaling by a ratio (timm's ``t / f * r``: 2 more).
C_GRID = 7.0


#: The spacing of the subnormals of each output dtype, by its unit roundoff (float8 e4m3fn and e4m3fnuz share
#: u = 2^-4: the larger spacing is kept).
_SUBNORMAL = {2.0**-53: 2.0**-1074, 2.0**-24: 2.0**-149, 2.0**-11: 2.0**-24, 2.0**-8: 2.0**-133, 2.0**-4: 2.0**-9,
              2.0**-3: 2.0**-16}


def output_floor(u_t: float) -> float:
    r"""The absolute part of rounding an output element to ``T``: :math:`\sigma \cdot 1.5\,\eta_T`.

    A rounding to ``T`` is within :math:`u_T |v|` of ``v`` only for normal ``v``; in ``T``'s
    subnormal range the error is up to half the subnormal spacing :math:`\eta_T` (float16
    :math:`2^{-24}`, bfloat16 :math:`2^{-133}`, float32 :math:`2^{-149}`) whatever ``v``. The two
    products and the sum of a rotated element are three such roundings: :math:`1.5\,\eta_T`.
    Negligible except for small values in float16 (below about :math:`6 \cdot 10^{-5}`).
    """
    return SAFETY * 1.5 * _SUBNORMAL.get(float(u_t), 0.0)


def position_rounding(pos: np.ndarray) -> np.ndarray:
    r"""The error of positions handed to a float32 phase.

    ``|fl32(p) - p|``, exactly (integers above :math:`2^{24}`). When most of the (distinct)
    positions given are fractional, they are a grid the kernel computes in float32
    (``torch.linspace``, ``start + k * step``,
    ``arange(n) / n``, a rescaling ``t / f * r``): each is within :math:`7 u R` of the exact
    value, :math:`R` the largest ``|p|`` of the positions given (the grid's step rounded and
    multiplied by :math:`k`, :math:`k\,\text{step} \le 2R`: :math:`4uR`; the sum :math:`uR`; the
    rescaling's two roundings :math:`2uR`), which is also the error at the grid's centre,
    where ``p = 0`` (a float32 ``linspace(-1, 1, 7)`` need not give 0 there).
    """
    pos = np.asarray(pos, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        err = np.abs(pos.astype(np.float32).astype(np.float64) - pos)
        finite = np.unique(pos[np.isfinite(pos)])
        fractional = np.count_nonzero(finite != np.round(finite))
        if finite.size and 2 * fractional >= finite.size:  # a grid: most positions fractional
            err = err + C_GRID * U32 * float(np.max(np.abs(finite)))
    return err


def phase_error(pos: np.ndarray, freq: np.ndarray, cfreq: np.ndarray) -> np.ndarray:
    """The bound on an honest float32 phase's absolute error, shape ``pos.shape + freq.shape``."""
    phi = np.abs(pos[..., None] * freq)
    with np.errstate(invalid="ignore"):  # a zero frequency at an infinitely rounded position: no phase, no error
        moved = np.abs(freq) * position_rounding(pos)[..., None]
    moved = np.where(freq == 0, 0.0, moved)
    return (cfreq + 1.0) * U32 * phi + moved + U64 * (phi + 8.0)
