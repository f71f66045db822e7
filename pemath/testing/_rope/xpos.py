r"""The oracle for xPos kernels: a derived tolerance for the decaying scale, and a diagnosis fitted to it.

xPos (:mod:`pemath.rope.xpos`) multiplies each rotated pair by
:math:`g = a\,\zeta_i^{e}`, :math:`e = s\,(n - c)/B` (:math:`s = +1` for queries, :math:`-1`
for keys, :math:`a` a scaling's attention factor). An honest kernel computes, in float32
or better, as torchscale and rotary-embedding-torch do:

* :math:`\zeta_i = (2i + \gamma d)/((1 + \gamma) d)`: :math:`\gamma d`, the sum, :math:`(1+\gamma) d`
  and the quotient rounded, :math:`\gamma` and :math:`1 + \gamma` themselves: :math:`C_\zeta = 6`
  roundings, relative;
* the exponent :math:`e = (n - c)/B`: the difference and the quotient, :math:`2u` relative
  (and the position's own rounding to float32 above :math:`2^{24}`, exactly);
* :math:`g = \mathrm{powf}(\zeta_i, e)`, 4 ulp (:math:`8u`); a key's ``1 / g``, 1 ulp (:math:`2u`);
  the product with cos and sin, :math:`2u`.

Propagated to :math:`g`: :math:`\delta g / g = e\,\delta\zeta/\zeta + \ln\zeta\,\delta e`, so the
relative error of the scale is at most

.. math::

    C_g\, u = \big(12 + |e|\,(C_\zeta + 2 |\ln \zeta_i|)\big)\, u
        + \frac{|\ln \zeta_i|}{B}\, |\mathrm{fl}_{32}(n) - n| ,

and everything else is RoPE's bound (``_tolerance``), relative to :math:`g` instead of the
attention factor. For a rotated element:

.. math::

    \tau = \sigma\, g\, S \Big[ \delta\varphi + 2u + C_g u + 3 u_T
        + u_{64}(|e \ln \zeta_i| + 8) \Big],

:math:`\delta\varphi` the phase error of RoPE's bound, :math:`S = |x_a| + |x_b|`,
:math:`\sigma = 2`; a feature beyond the rotary dim may be off by :math:`u_T |x_j|`.

On failure the report says what the output measures (per row, the exponent :math:`e` read
from each pair's amplitude, :math:`\ln(|y|/|x|) / \ln\zeta_i`) and names the mechanism:
the role swapped, the scale missing or applied without the rotation, another centre, the
other layout, positions shifted, and, fitted to the measured amplitudes, another scale
base :math:`B` and centre :math:`c` (a line through the measured exponents) or another
:math:`\gamma` (the :math:`\zeta_i` that the pairs' amplitudes follow).
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from .._core.arrays import as_host, rope_case
from .._core.measure import snap
from .._core.report import compare, diagnosis_lines, first_match, fmt, index_of, locate, mismatch_line, nonfinite_line
from .._core.tolerance import C_OUTPUT, C_TRIG, SAFETY, U32, U64, phase_error, position_rounding, unit_roundoff
from .tolerance import pair_bounds

__all__ = ["assert_xpos_close", "xpos_tolerance"]

#: Roundings of zeta in float32 (gamma d, the sum, (1 + gamma) d, the quotient, gamma, 1 + gamma).
C_ZETA = 6.0
#: powf (4 ulp), a key's reciprocal (1 ulp) and the product into cos and sin (1 rounding each), in u32.
C_SCALE = 12.0


@dataclasses.dataclass(frozen=True)
class _Xpos:
    """A validated xPos call: the RoPE case, and the scale's parameters."""

    case: Any
    role: str
    gamma: float
    scale_base: float
    center: float | str
    c: float
    seq_len: int | None

    def apply(self, x2: np.ndarray, pos: np.ndarray, **over: Any) -> np.ndarray:
        """``xpos.apply`` on ``(N, d)`` rows with ``(N,)`` positions, some parameters changed."""
        from ...rope import xpos

        kw = {"role": self.role, "gamma": self.gamma, "scale_base": self.scale_base, "center": self.center,
              "seq_len": self.seq_len if isinstance(self.center, str) else None, "spec": self.case.spec}
        kw.update(over)
        if not isinstance(kw["center"], str):
            kw["seq_len"] = None
        return np.asarray(xpos.apply(x2, pos, **kw))

    def exponent(self, pos: np.ndarray, *, role: str | None = None, c: float | None = None,
                 scale_base: float | None = None) -> np.ndarray:
        sign = 1.0 if (role or self.role) == "query" else -1.0
        return sign * (pos - (self.c if c is None else c)) / (scale_base or self.scale_base)

    def bound(self, x2: np.ndarray, pos: np.ndarray, u_t: float, **over: Any) -> np.ndarray:
        """The derived tolerance of ``(N, d)`` rows (module docstring), some parameters changed."""
        from ...rope import xpos

        c = self.case
        gamma = over.get("gamma", self.gamma)
        z = xpos.zeta(c.r, gamma=gamma)
        lnz = np.abs(np.log(z))
        e = self.exponent(pos, role=over.get("role"), c=over.get("c"), scale_base=over.get("scale_base"))
        g = abs(c.factor) * np.power(z[None, :], e[:, None])
        c_g = C_SCALE + np.abs(e)[:, None] * (C_ZETA + 2.0 * lnz[None, :])
        moved = lnz[None, :] * position_rounding(pos)[:, None] / over.get("scale_base", self.scale_base)
        k = SAFETY * g * (phase_error(pos, c.freq, c.cfreq) + (C_TRIG + c_g) * U32 + moved + C_OUTPUT * u_t
                          + U64 * (np.abs(e)[:, None] * lnz[None, :] + 8.0))
        out = np.empty(x2.shape, dtype=np.float64)
        out[:, : c.r] = pair_bounds(x2[:, : c.r], k, over.get("layout", c.layout), c.r, u_t)
        out[:, c.r:] = u_t * np.abs(x2[:, c.r:])
        return out


def _xpos_case(x: Any, positions: Any, *, role: Any, layout: Any, base: Any, gamma: Any, scale_base: Any,
               center: Any, seq_len: Any, rotary_dim: Any, spec: Any, where: str) -> tuple[_Xpos, np.ndarray]:
    from ...rope import xpos

    case = rope_case(x, positions, layout=layout, base=base, rotary_dim=rotary_dim, seq_len=seq_len, spec=spec,
                     where=where)
    # xpos.apply validates role, gamma, scale_base, center and seq_len, and gives the truth
    truth = np.asarray(xpos.apply(case.x2, case.pos, role=role, gamma=gamma, scale_base=scale_base,
                                  center=center, seq_len=seq_len, spec=case.spec))
    c = float(xpos.center_of(seq_len, center)) if isinstance(center, str) else float(center)
    return _Xpos(case, role, float(gamma), float(scale_base), center, c, seq_len), truth


def xpos_tolerance(
    x: Any,
    positions: Any,
    *,
    role: str | None = None,
    layout: str | None = None,
    dtype: Any = None,
    base: float | None = None,
    gamma: float = 0.4,
    scale_base: float = 512.0,
    center: float | str = 0.0,
    seq_len: int | None = None,
    rotary_dim: int | None = None,
    spec: Any = None,
) -> np.ndarray:
    r"""The oracle's default absolute tolerance for each element of an xPos output.

    .. math::

        \tau = \sigma\, g\, S \Big[ \delta\varphi + 2u + C_g u + 3 u_T + u_{64}(|e \ln \zeta_i| + 8) \Big],
        \quad C_g = 12 + |e|\,(6 + 2 |\ln \zeta_i|) + \frac{|\ln\zeta_i|}{B u} |\mathrm{fl}_{32}(n) - n|

    with :math:`g = a\,\zeta_i^{e}` the element's scale, :math:`e = \pm (n - c)/B`,
    :math:`\delta\varphi` RoPE's phase error (:func:`rope_tolerance`), :math:`u = 2^{-24}`,
    :math:`\sigma = 2`; the derivation is in ``docs/tolerance.rst``.

    Parameters
    ----------
    x, positions, role, layout, base, gamma, scale_base, center, seq_len, rotary_dim, spec
        As in :func:`pemath.rope.xpos.apply`.
    dtype : optional
        The kernel's output dtype (default: ``x``'s).

    Returns
    -------
    numpy.ndarray
        float64, ``x``'s shape.

    Examples
    --------
    >>> import numpy as np
    >>> from pemath.testing import xpos_tolerance
    >>> x = np.ones((2, 4), dtype=np.float32)
    >>> tol = xpos_tolerance(x, [0, 512], layout="interleaved", role="query")
    >>> float(np.round(tol[0, 0] * 2**24, 6))   # n = 0: scale 1, sigma S (2u + 12u + 3u_T) = 2 * 2 * 17 units
    68.0
    """
    xc, _ = _xpos_case(x, positions, role=role, layout=layout, base=base, gamma=gamma, scale_base=scale_base,
                       center=center, seq_len=seq_len, rotary_dim=rotary_dim, spec=spec, where="xpos_tolerance")
    u_t = unit_roundoff(xc.case.x_dtype if dtype is None else dtype)
    return xc.case.to_x_order(xc.bound(xc.case.x2, xc.case.pos, u_t)).reshape(xc.case.shape)


# --------------------------------------------------------------------------- measurement and diagnosis


def _measured_exponents(xc: _Xpos, a2: np.ndarray, gamma: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Per row, the exponent e read from the pairs' amplitudes (ln(|y|/|x|) / ln zeta_i, median), and whether
    the amplitudes of that row follow one exponent (within 1e-3 relative)."""
    from ...rope import _core, xpos

    c = xc.case
    xa, xb = _core.split_pairs(c.x2, c.layout, c.r)
    ya, yb = _core.split_pairs(a2, c.layout, c.r)
    with np.errstate(all="ignore"):
        lnz = np.log(xpos.zeta(c.r, gamma=gamma or xc.gamma))
        ratio = np.log(np.hypot(ya, yb) / np.hypot(xa, xb) / abs(c.factor)) / lnz[None, :]
        ratio = np.where(np.isfinite(ratio) & (np.hypot(xa, xb) > 1e-6), ratio, np.nan)
        with warnings.catch_warnings():  # a row with no readable pair (zero x) has no reading: NaN, no warning
            warnings.simplefilter("ignore", RuntimeWarning)
            e = np.nanmedian(ratio, axis=1)
            spread = np.nanmax(np.abs(ratio - e[:, None]), axis=1)
    return e, spread <= 1e-3 * np.maximum(1.0, np.abs(e)) + 1e-4


def _fit_gamma(xc: _Xpos, a2: np.ndarray) -> float | None:
    """The gamma whose zeta_i the measured amplitudes follow (one exponent per row), scanned then refined."""
    from ...rope import _core

    c = xc.case
    xa, xb = _core.split_pairs(c.x2, c.layout, c.r)
    ya, yb = _core.split_pairs(a2, c.layout, c.r)
    with np.errstate(all="ignore"):
        L = np.log(np.hypot(ya, yb) / np.hypot(xa, xb) / abs(c.factor))
    rows = np.all(np.isfinite(L), axis=1) & (np.max(np.abs(L), axis=1) > 1e-3)
    if np.count_nonzero(rows) < 1 or c.r < 6:
        return None
    L = L[rows]
    i = np.arange(c.r // 2, dtype=np.float64)

    def resid(g: float) -> float:
        lz = np.log((2 * i / c.r + g) / (1 + g))
        e = (L @ lz) / (lz @ lz)
        return float(np.sum((L - e[:, None] * lz[None, :]) ** 2))

    grid = np.exp(np.linspace(math.log(1e-3), math.log(100.0), 400))
    best = float(grid[int(np.argmin([resid(g) for g in grid]))])
    lo, hi = best / 1.05, best * 1.05
    for _ in range(60):  # golden-section refinement
        m1, m2 = lo + 0.382 * (hi - lo), lo + 0.618 * (hi - lo)
        if resid(m1) < resid(m2):
            hi = m2
        else:
            lo = m1
    return 0.5 * (lo + hi)


def _candidates(xc: _Xpos, x2: np.ndarray, pos: np.ndarray, a2: np.ndarray, u_t: float,
                judge: Callable[..., Any]) -> Iterator[tuple[str, Callable[[], Any]]]:
    from ... import rope
    from ...rope import xpos

    c = xc.case
    other = "key" if xc.role == "query" else "query"
    yield (f"the role swapped: the {other}'s scale zeta^({'-' if other == 'key' else '+'}(n - c)/B) for a "
           f"{xc.role}", lambda: judge(xc.apply(x2, pos, role=other), role=other))
    yield ("plain RoPE: the xPos scale missing",
           lambda: judge(np.asarray(rope.apply(x2, pos, spec=c.spec, seq_len=None)), plain=True))
    yield "the scale without the rotation (zeta^e x, no cos/sin)", lambda: judge(_scale_only(xc, x2, pos))
    other_layout = "half" if c.layout == "interleaved" else "interleaved"
    yield (f"the other layout: layout={other_layout!r}",
           lambda: judge(xc.apply(x2, pos, spec=c.spec.replace(layout=other_layout)), layout=other_layout))
    yield "positions shifted by +1 (rotation and scale)", lambda: judge(xc.apply(x2, pos + 1))
    yield "positions shifted by -1 (rotation and scale)", lambda: judge(xc.apply(x2, pos - 1))
    centres: list[tuple[str, float | str]] = [("0 (no centring)", 0.0)]
    if xc.seq_len is not None:
        centres += [(f"{name!r} (c = {xpos.center_of(xc.seq_len, name)})", name) for name in xpos.CENTERS]
    for words, cen in centres:
        value = float(xpos.center_of(xc.seq_len, cen)) if isinstance(cen, str) else cen
        if value != xc.c:
            yield (f"the scale centred at {words} instead of c = {fmt(xc.c)}",
                   lambda cen=cen, value=value: judge(xc.apply(x2, pos, center=cen), c=value))
    # fitted: a line through the measured exponents gives B and c
    e, one = _measured_exponents(xc, a2)
    ok = np.isfinite(e) & one
    if np.count_nonzero(ok) >= 2 and np.ptp(pos[ok]) > 0:
        slope, intercept = np.polyfit(pos[ok], e[ok], 1)
        if slope != 0:
            sign = 1.0 if slope > 0 else -1.0
            b_fit, c_fit = snap(sign / slope), -intercept / slope
            c_fit = float(round(c_fit)) if abs(c_fit - round(c_fit)) < 1e-3 else snap(c_fit)  # centres are integers
            role = "query" if sign > 0 else "key"
            if (b_fit, c_fit) != (snap(xc.scale_base), snap(xc.c)) and b_fit > 0:  # equal: a role swap, listed
                yield (f"the xPos scale of a {role} with scale_base B = {fmt(b_fit)} and centre c = {fmt(c_fit)} "
                       f"(fitted to the measured exponents; the spec: B = {fmt(xc.scale_base)}, c = {fmt(xc.c)}, "
                       f"{xc.role})",
                       lambda: judge(xc.apply(x2, pos, role=role, scale_base=b_fit, center=c_fit),
                                     role=role, scale_base=b_fit, c=c_fit))
    g_fit = _fit_gamma(xc, a2)
    if g_fit is not None and snap(g_fit) != snap(xc.gamma):
        g_fit = snap(g_fit)
        yield (f"zeta_i = (2i/d + gamma)/(1 + gamma) with gamma = {fmt(g_fit)} instead of {fmt(xc.gamma)} (fitted to "
               "the measured amplitudes)", lambda: judge(xc.apply(x2, pos, gamma=g_fit), gamma=g_fit))


def _scale_only(xc: _Xpos, x2: np.ndarray, pos: np.ndarray) -> np.ndarray:
    from ...rope import _core, xpos

    c = xc.case
    g = abs(c.factor) * np.power(xpos.zeta(c.r, gamma=xc.gamma)[None, :], xc.exponent(pos)[:, None])
    out = x2.astype(np.float64).copy()
    xa, xb = _core.split_pairs(out, c.layout, c.r)
    out[:, : c.r] = _core.merge_pairs(xa * g, xb * g, c.layout, np)
    return out


def assert_xpos_close(
    actual: Any,
    x: Any,
    positions: Any,
    *,
    role: str | None = None,
    layout: str | None = None,
    base: float | None = None,
    gamma: float = 0.4,
    scale_base: float = 512.0,
    center: float | str = 0.0,
    seq_len: int | None = None,
    rotary_dim: int | None = None,
    rtol: float | None = None,
    atol: float | None = None,
    spec: Any = None,
) -> None:
    r"""Assert that ``actual`` is xPos of ``x`` at ``positions``, or explain what it is instead.

    The truth is :func:`pemath.rope.xpos.apply` of the given ``x`` in float64. Each element
    must be within the derived tolerance (:func:`pemath.testing.xpos_tolerance`: RoPE's,
    scaled by the element's :math:`\zeta_i^{e}`, plus the float32 error of that scale) or
    ``atol + rtol |truth|``.

    On failure the message measures, per row, the exponent :math:`e` that the pairs'
    amplitudes follow, and names the mechanism: the role swapped, the scale missing (plain
    RoPE), the scale without the rotation, another centre (0, torchscale's, lucidrains'),
    the other layout, positions shifted by one; fitted to the measurement, another scale
    base and centre, or another :math:`\gamma`.

    Parameters
    ----------
    actual : array
        The kernel's output (NumPy, CuPy, torch, JAX, MLX), the shape of ``x``.
    x : array
        The kernel's input.
    positions, role, layout, base, gamma, scale_base, center, seq_len, rotary_dim, spec
        As in :func:`pemath.rope.xpos.apply` (``role`` and a layout are required).
    rtol, atol : float, optional
        Both or neither.

    Examples
    --------
    >>> import numpy as np
    >>> from pemath.rope import xpos
    >>> from pemath.testing import assert_xpos_close
    >>> x = np.random.default_rng(0).standard_normal((16, 32)).astype(np.float32)
    >>> pos = np.arange(16)
    >>> assert_xpos_close(xpos.apply(x, pos, layout="interleaved", role="query"), x, pos, layout="interleaved",
    ...                   role="query")
    >>> try:
    ...     assert_xpos_close(xpos.apply(x, pos, layout="interleaved", role="key"), x, pos, layout="interleaved",
    ...                       role="query")
    ... except AssertionError as e:
    ...     print(str(e).splitlines()[-1])
    Diagnosis: the output matches the role swapped: the key's scale zeta^(-(n - c)/B) for a query (max error within tolerance)
    """
    __tracebackhide__ = True
    from .._core.arrays import user_tolerance

    user = user_tolerance(rtol, atol)
    xc, truth = _xpos_case(x, positions, role=role, layout=layout, base=base, gamma=gamma, scale_base=scale_base,
                           center=center, seq_len=seq_len, rotary_dim=rotary_dim, spec=spec,
                           where="assert_xpos_close")
    c = xc.case
    a, t_name = as_host("actual", actual)
    if tuple(a.shape) != c.shape:
        raise ValueError(f"actual has shape {tuple(a.shape)}, but x has shape {c.shape}")
    a2 = c.to_case_order(a.reshape(c.x2.shape)).astype(np.float64)
    u_t = unit_roundoff(t_name)

    def tol_of(expected: np.ndarray, x2: np.ndarray, pos: np.ndarray, **over: Any) -> np.ndarray:
        if user is not None:
            return user[1] + user[0] * np.abs(expected)
        return xc.bound(x2, pos, u_t, **over)

    verdict = compare(a2, truth, tol_of(truth, c.x2, c.pos))
    if verdict.passed:
        return
    rows = np.arange(c.x2.shape[0])
    if rows.size * c.d > 1 << 16:  # diagnose on the worst rows and an even sample
        worst = np.argsort(-verdict.ratio.max(axis=1), kind="stable")[:64]
        rows = np.unique(np.concatenate([worst, np.linspace(0, rows.size - 1, 192).astype(np.int64)]))
    x2, pos, sub = c.x2[rows], c.pos[rows], a2[rows]

    def judge(expected: np.ndarray, plain: bool = False, **over: Any) -> Any:
        if plain:
            from .tolerance import rope_bound

            tol = rope_bound(x2, pos, c.freq, c.factor, c.layout, c.r, u_t, c.cfreq) if user is None else \
                user[1] + user[0] * np.abs(expected)
        else:
            tol = tol_of(expected, x2, pos, **over)
        return compare(sub, expected, tol)

    sub_case = dataclasses.replace(xc, case=dataclasses.replace(c, x2=x2, pos=pos))
    e, one = _measured_exponents(sub_case, sub)
    lines = [f"xPos output differs from pemath.rope.xpos.apply(x, positions, role={xc.role!r}, gamma={fmt(xc.gamma)}, "
             f"scale_base={fmt(xc.scale_base)}, center={xc.center!r}, spec={c.spec!r}) beyond the tolerance."]
    ok = np.isfinite(e) & one
    if ok.any():
        expect = xc.exponent(pos)
        shown = [k for k in np.nonzero(ok)[0][:4]]
        lines.append("Measured from the output: the scale's exponent e per row (from the pairs' amplitudes): "
                     + ", ".join(f"position {fmt(pos[k])}: {fmt(round(float(e[k]), 6) + 0.0)} (expected "
                                 f"{fmt(expect[k])})" for k in shown))
    elif np.isfinite(e).any():
        lines.append("Measured from the output: the pairs' amplitudes do not follow one exponent of zeta_i per row "
                     "(not an xPos scale with these zeta_i)")
    lines.append(mismatch_line(verdict))
    nf = nonfinite_line(a2)
    if nf:
        lines.append(nf)
    w = verdict.worst
    lines.append(f"Worst element at index {index_of(w, c.shape)}: actual {fmt(a2.flat[w])}, expected "
                 f"{fmt(truth.flat[w])}, abs error {fmt(verdict.err.flat[w])}")
    if len(c.shape) > 1:
        lines.append(f"Mismatched rows at: {locate(np.nonzero(~verdict.ok.all(axis=1))[0], c.shape[:-1], c.given_pos)}")
    lines.append("Tolerance: " + (f"derived for a {t_name} output: pemath.testing.xpos_tolerance" if user is None
                                  else f"given, atol={fmt(user[1])} + rtol={fmt(user[0])} * |expected|"))
    matched, tried, raised = first_match(_candidates(sub_case, x2, pos, sub, u_t, judge))
    note = "" if rows.size == c.x2.shape[0] else f"  (diagnosis run on {rows.size} of {c.x2.shape[0]} rows)"
    lines += diagnosis_lines(matched, tried, raised, note=note)
    raise AssertionError("\n".join(lines))
