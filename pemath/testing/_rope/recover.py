r"""What a RoPE kernel did, read from its output.

For every rotated pair, :math:`(y_a + i\,y_b) / (x_a + i\,x_b) = a\,e^{i\varphi}`: the
amplitude :math:`a` and the angle :math:`\varphi` the kernel applied, exact up to the
output's rounding wherever the input pair is not tiny. :func:`recover_rope` returns these
tables (and finds the layout and the rotated slice when they are not given);
:func:`measure` compares them with what a spec expects and says, in words, how they differ:
the amplitude, each row's effective position (offset, scale, padding), each pair's
effective frequency (as bands of pairs), and an effective base.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from typing import Any

import numpy as np

from ..._validate import check_choice, check_int
from ...rope import _core
from .._core.arrays import as_host, check_finite
from .._core.measure import wrap

__all__ = ["RopeRecovery", "recover_rope", "measure"]

_TWO_PI = 2.0 * math.pi


@dataclasses.dataclass(frozen=True, eq=False)
class RopeRecovery:
    """Angles and amplitudes a RoPE kernel applied, per row and rotated pair (see :func:`recover_rope`)."""

    layout: str
    rotary_dim: int
    #: (rows, r/2) radians in (-pi, pi]; NaN where the input pair is too small to read
    angle: np.ndarray
    #: (rows, r/2) the output pair's modulus over the input pair's; NaN where unreadable
    amplitude: np.ndarray
    #: (rows, r/2) bound on the angle's error (radians) and the amplitude's relative error, from the
    #: output's rounding
    uncertainty: np.ndarray
    #: largest relative difference between ``actual`` and ``x`` over the features beyond rotary_dim (0: an
    #: exact copy)
    passthrough_error: float
    #: mean deviation of the log-amplitudes under each layout tried (the chosen one has the smaller):
    #: the right pairing gives one amplitude, a wrong one mixes features of different pairs
    spread: dict
    dtype: str
    shape: tuple

    @property
    def rows(self) -> int:
        return int(self.angle.shape[0])

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        for f in dataclasses.fields(self):
            a, b = getattr(self, f.name), getattr(other, f.name)
            same = np.array_equal(a, b, equal_nan=True) if isinstance(a, np.ndarray) else a == b
            if not same:
                return False
        return True

    __hash__ = None  # type: ignore[assignment]  # holds arrays


def _pair_tables(a2: np.ndarray, x2: np.ndarray, layout: str, r: int, u_t: float) -> tuple[np.ndarray, ...]:
    xa, xb = _core.split_pairs(x2, layout, r)
    ya, yb = _core.split_pairs(a2, layout, r)
    zx = xa + 1j * xb
    zy = ya + 1j * yb
    mag = np.abs(zx)
    scale = np.max(np.abs(x2), axis=-1, keepdims=True) if x2.size else np.zeros((x2.shape[0], 1))
    readable = mag > 64 * u_t * np.maximum(scale, np.finfo(np.float64).tiny)
    with np.errstate(divide="ignore", invalid="ignore"):
        w = np.where(readable, zy / np.where(readable, zx, 1.0), np.nan)
        amp = np.abs(w)
        angle = np.angle(w)
        unc = np.where(readable, u_t * (np.abs(ya) + np.abs(yb)) / np.where(readable, mag, 1.0), np.nan)
        unc = unc / np.where(amp > 0, amp, 1.0)
    angle = np.where(readable, angle, np.nan)
    return angle, amp, unc


def _spread(amp: np.ndarray) -> float:
    with np.errstate(divide="ignore", invalid="ignore"):
        lg = np.log(amp[np.isfinite(amp) & (amp > 0)])
    if lg.size == 0:
        return math.inf
    return float(np.mean(np.abs(lg - np.median(lg))))  # the mean: a few pairs turned far apart decide


def _rotated_dim(a2: np.ndarray, x2: np.ndarray, u_t: float) -> int:
    """The leading slice a kernel changed: features past it equal x (rounded to the output) in every row."""
    d = int(x2.shape[-1])
    same = np.all(np.abs(a2 - x2) <= u_t * np.abs(x2), axis=0)
    r = d
    while r > 0 and same[r - 1]:
        r -= 1
    if r == 0:  # nothing changed (every position 0, say): the whole head, as far as one can tell
        return d - d % 2
    return min(d - d % 2, r + r % 2)


def recover_rope(
    actual: Any,
    x: Any,
    *,
    layout: str | None = None,
    rotary_dim: int | None = None,
    spec: Any = None,
) -> RopeRecovery:
    r"""The angle and amplitude a RoPE kernel applied to each pair of each row.

    For each rotated pair :math:`(a, b)` of the layout,
    :math:`w = (y_a + i\,y_b) / (x_a + i\,x_b)`: its argument is the angle the kernel
    turned the pair by (modulo :math:`2\pi`), its modulus the amplitude (the attention
    factor, for an honest kernel). Each is exact up to the output's rounding, whose bound
    is returned as ``uncertainty``: :math:`u_T (|y_a| + |y_b|) / (|x_a + i x_b|\,|w|)`.
    Pairs whose input is too small to read (below :math:`64 u_T` of the row's largest
    feature) are NaN.

    Parameters
    ----------
    actual : array
        The kernel's output (any backend and floating dtype), shape of ``x``.
    x : array
        The kernel's input.
    layout : {"interleaved", "half"}, optional
        The pairing; when omitted (and no ``spec``), both are tried and the one whose
        amplitudes agree best is kept (``spread``).
    rotary_dim : int, optional
        The rotated slice; when omitted (and no ``spec``), the longest tail of features
        equal to ``x`` in every row is taken as pass-through.
    spec : pemath.rope.Spec, optional
        Gives ``layout`` and ``rotary_dim`` (both given: ``TypeError``).

    Returns
    -------
    RopeRecovery
        ``angle``, ``amplitude``, ``uncertainty`` of shape ``(rows, rotary_dim / 2)``
        (rows: ``x`` flattened over its leading axes), the ``layout`` and
        ``rotary_dim`` used, and ``passthrough_error``.

    Examples
    --------
    >>> import numpy as np
    >>> from pemath import rope
    >>> from pemath.testing import recover_rope
    >>> x = np.random.default_rng(0).standard_normal((3, 8))
    >>> y = rope.apply(x, [0, 1, 2], layout="interleaved", base=10000.0)
    >>> rec = recover_rope(y, x)
    >>> rec.layout, rec.rotary_dim
    ('interleaved', 8)
    >>> np.round(rec.angle[2], 6).tolist()   # position 2 times (1, 0.1, 0.01, 0.001)
    [2.0, 0.2, 0.02, 0.002]
    """
    from ..._dtypes import unit_roundoff

    a, t_name = as_host("actual", actual)
    xh, _ = as_host("x", x)
    if tuple(a.shape) != tuple(xh.shape):
        raise ValueError(f"actual has shape {tuple(a.shape)}, but x has shape {tuple(xh.shape)}")
    if xh.ndim < 1 or xh.shape[-1] < 2:
        raise ValueError(f"x must have a feature axis of at least 2 (one pair), got shape {tuple(xh.shape)}")
    check_finite("x", xh)
    check_finite("actual", a)
    d = int(xh.shape[-1])
    x2, a2 = xh.reshape(-1, d), a.reshape(-1, d)
    u_t = unit_roundoff(t_name)
    if spec is not None:
        from ...rope.spec import resolve

        spec = resolve(spec, "recover_rope", layout=layout, rotary_dim=rotary_dim)
        if spec.is_multi_axis or spec.out_layout is not None:
            raise ValueError(f"recover_rope reads one layout's pairs; got {spec!r}")
        layout, r = spec.layout, spec.rotary_dim_for(d)
    else:
        if layout is not None:
            layout = check_choice("layout", layout, _core.LAYOUTS)
        if rotary_dim is not None:
            r = check_int("rotary_dim", rotary_dim, minimum=2, maximum=d)
            if r % 2:
                raise ValueError(f"rotary_dim must be even, got {r}")
        else:
            r = _rotated_dim(a2, x2, u_t)
    return recover_host(a2, x2, u_t, t_name, tuple(xh.shape), layout, r)


def recover_host(a2: np.ndarray, x2: np.ndarray, u_t: float, t_name: str, shape: tuple, layout: str | None,
                 r: int | None) -> RopeRecovery:
    """:func:`recover_rope` on validated float64 host arrays ``(rows, d)``; ``layout``/``r`` None: found."""
    if r is None:
        r = _rotated_dim(a2, x2, u_t)
    with np.errstate(invalid="ignore", divide="ignore"):
        rest = np.abs(a2[:, r:] - x2[:, r:]) / np.maximum(np.abs(x2[:, r:]), np.finfo(np.float64).tiny)
    passthrough = float(np.max(rest)) if rest.size else 0.0
    tables = {lay: _pair_tables(a2, x2, lay, r, u_t) for lay in ((layout,) if layout else _core.LAYOUTS)}
    spread = {lay: _spread(t[1]) for lay, t in tables.items()}
    chosen = layout or min(spread, key=lambda k: (spread[k], k != "half"))
    angle, amp, unc = tables[chosen]
    return RopeRecovery(chosen, r, angle, amp, unc, passthrough, spread, t_name, shape)


# --------------------------------------------------------------------------- measuring


def effective_positions(rec: RopeRecovery, freq: np.ndarray, prior: np.ndarray | None = None) -> np.ndarray:
    """Each row's position as the kernel's angles read it, assuming the frequencies ``freq``.

    Unwrapped from the lowest frequency to the highest, each step refining the estimate:
    ``p += wrap(angle - p θ) / θ``, starting from ``prior`` (the given positions: the
    reading nearest them, unambiguous within :math:`\\pi / \\theta_{min}`) or, without one,
    from the lowest frequency's own reading. NaN for rows without a readable pair.
    """
    p = np.full(rec.rows, np.nan) if prior is None else np.asarray(prior, dtype=np.float64).copy()
    for i in np.argsort(freq):  # vectorised over rows, one pair at a time
        th = float(freq[i])
        if th <= 0:
            continue
        ang = rec.angle[:, i]
        ok = np.isfinite(ang)
        first = ok & np.isnan(p)
        with np.errstate(invalid="ignore"):
            step = np.where(ok & ~first, wrap(ang - p * th) / th, 0.0)
        p = np.where(first, ang / th, p + np.nan_to_num(step))
    return p


def effective_frequencies(rec: RopeRecovery, pos: np.ndarray, freq: np.ndarray) -> np.ndarray:
    """Each pair's frequency as the kernel's angles read it at the given positions (NaN if unreadable).

    Rows are taken by increasing ``|p|``; each refines ``θ += wrap(angle - p θ) / p``,
    starting from the expected ``freq``, so a frequency far from the expected one is
    followed as long as consecutive positions are close.
    """
    order = np.argsort(np.abs(pos), kind="stable")
    theta = np.array(freq, dtype=np.float64)
    seen = np.zeros(theta.shape, dtype=bool)
    for n in order:
        p = pos[n]
        if p == 0:
            continue
        ang = rec.angle[n]
        ok = np.isfinite(ang)
        step = wrap(np.where(ok, ang, 0.0) - p * theta) / p
        theta = np.where(ok, theta + step, theta)
        seen |= ok
    return np.where(seen, theta, np.nan)


#: An honest float32 kernel's phase is off by a few units of 2^-24 of the phase (frequency,
#: product, cos/sin roundings): angles within this of the spec's are not findings.
_PHASE_UNITS = 64 * 2.0**-24


def _slack(rec: RopeRecovery, pos: np.ndarray, freq: np.ndarray) -> np.ndarray:
    """Per element, how far an honest kernel's angle may be from ``pos * freq``."""
    return 8 * np.nan_to_num(rec.uncertainty, nan=0.0) + _PHASE_UNITS * np.abs(pos[:, None] * freq[None, :]) + 1e-7


def _readable(pos: np.ndarray, freq: np.ndarray) -> np.ndarray:
    """Pairs whose frequency the positions pin down: the first positions (from 0) close enough to follow.

    Once the first few positions have fixed a frequency, later, sparser ones only refine it
    (and the reading is verified against every row afterwards)."""
    ps = np.unique(np.abs(pos[np.isfinite(pos)]))
    ps = np.concatenate([[0.0], ps[ps > 0]])[:8]
    gap = float(np.max(np.diff(ps))) if ps.size > 1 else math.inf
    return gap * freq < math.pi / 2


def _runs(idx: np.ndarray) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for i in idx.tolist():
        if out and i == out[-1][1] + 1:
            out[-1] = (out[-1][0], i)
        else:
            out.append((i, i))
    return out


def _fmt(v: float) -> str:
    return f"{v:.6g}"


def _amplitude_words(measured: float, expected: float, spec: Any) -> str:
    names = {"1 (the attention factor missing)": 1.0, "the expected factor squared": expected * expected,
             "1 / the expected factor": 1.0 / expected, "the square root of the expected factor": math.sqrt(expected)}
    s = getattr(spec.scaling, "factor", None)
    if isinstance(s, (int, float)) and s > 1:
        names["YaRN's 0.1 ln(s) + 1 for the spec's factor"] = 0.1 * math.log(s) + 1.0
        L0 = getattr(spec.scaling, "original_max_position", None)
        if L0 and L0 > 1:
            names["LongRoPE's sqrt(1 + ln s / ln L0)"] = math.sqrt(1 + math.log(s) / math.log(L0))
    for label, value in names.items():
        if abs(value - expected) > 1e-12 and abs(measured - value) <= 1e-5 * max(1.0, value):
            return f"amplitude {_fmt(measured)} where {_fmt(expected)} was expected: {label}"
    return f"amplitude {_fmt(measured)} where {_fmt(expected)} was expected"


#: Unit roundoffs a phase may have been computed in, by name.
_PHASE_DTYPES = {"bfloat16": 2.0**-8, "float16": 2.0**-11, "float32": 2.0**-24}


def _phase_precision(rec: RopeRecovery, pos: np.ndarray, freq: np.ndarray) -> str | None:
    """A phase error that scatters (no consistent sign) and grows like eps * |p theta|: its eps and dtype."""
    phi = np.abs(pos[:, None] * freq[None, :])
    err = wrap(rec.angle - pos[:, None] * freq[None, :])
    big = np.isfinite(err) & (phi > 4.0) & (phi < 1e6)
    if np.count_nonzero(big) < 16:
        return None
    excess = np.abs(err) > _slack(rec, pos, freq)
    if not np.any(excess & big):
        return None
    rel = np.abs(err[big]) / phi[big]
    eps = float(np.quantile(rel, 0.99))
    if eps > 2.0**-6:  # beyond any rounding of a phase to a floating dtype: a wrong frequency, aliased by the wrap
        return None
    positive = float(np.mean(err[big & excess] > 0))
    if not 0.2 <= positive <= 0.8:  # a consistent sign: a wrong frequency or position, not rounding
        return None
    if np.any(np.abs(err[~big & np.isfinite(err)]) > 8 * _slack(rec, pos, freq)[~big & np.isfinite(err)] +
              2 * eps * np.maximum(phi[~big & np.isfinite(err)], 1.0)):
        return None  # errors at small phases that do not scale with the phase
    name = min(_PHASE_DTYPES, key=lambda k: abs(math.log(eps / _PHASE_DTYPES[k])))
    close = abs(math.log2(eps / _PHASE_DTYPES[name])) <= 2.5
    return (f"the angles scatter around the spec's by up to {_fmt(eps)} * |p·θ| (no consistent sign): a phase computed "
            f"in low precision" + (f", about {name}'s (u = 2^{int(round(math.log2(_PHASE_DTYPES[name])))})" if close
                                   else ""))


def measure(rec: RopeRecovery, pos: np.ndarray, spec: Any, freq: np.ndarray, factor: float,
            a2: np.ndarray | None = None, x2: np.ndarray | None = None) -> list[str]:
    """What the recovered tables say about the kernel, against ``spec`` (findings in words, then numbers);
    with the arrays ``a2``, ``x2`` a pairing that is neither layout is searched for too."""
    with np.errstate(all="ignore"):  # extreme positions (5e-324, 1e308): readings become NaN, not warnings
        return _measure(rec, pos, spec, freq, factor, a2, x2)


def find_pairing(a2: np.ndarray, x2: np.ndarray, r: int, rows: int = 64) -> np.ndarray | None:
    """Each rotated feature's partner, found from the output (see ``_find_pairing``); a cheap pass first on every
    8th of the rows the full search reads: when no consistent pairing shows there, the output is not searched
    further (a measurement, never a verdict: the report then has no pairing line)."""
    take = np.linspace(0, a2.shape[0] - 1, min(rows, a2.shape[0])).astype(np.int64)
    if take.size > 8 and _find_pairing(a2, x2, r, take[::8]) is None:
        return None
    return _find_pairing(a2, x2, r, take)


def _find_pairing(a2: np.ndarray, x2: np.ndarray, r: int, take: np.ndarray) -> np.ndarray | None:
    """Each rotated feature's partner, found from the output: a rotation keeps ``y_j^2 + y_k^2`` a fixed multiple
    of ``x_j^2 + x_k^2`` in every row. None when no consistent pairing of the first ``r`` features exists.

    The rows ``take`` (evenly spread) and blocks of features keep the work at ``len(take) * r^2`` and the memory
    at ``len(take) * 2^16`` numbers."""
    y2, xx = a2[take, :r] ** 2, x2[take, :r] ** 2
    spread = np.empty((r, r))
    step = max(1, (1 << 16) // max(r, 1))
    for j0 in range(0, r, step):
        j1 = min(r, j0 + step)
        num = y2[:, j0:j1, None] + y2[:, None, :]
        den = xx[:, j0:j1, None] + xx[:, None, :]
        with np.errstate(divide="ignore", invalid="ignore"):
            lg = np.log(num / den)
        ok = np.isfinite(lg)
        with warnings.catch_warnings():  # a pair of zero features in every row has no reading: its spread is NaN
            warnings.simplefilter("ignore", RuntimeWarning)
            med = np.nanmedian(np.where(ok, lg, np.nan), axis=0)
            spread[j0:j1] = np.nanmax(np.where(ok, np.abs(lg - med[None]), np.nan), axis=0)
    spread[np.arange(r), np.arange(r)] = np.inf
    spread = np.where(np.isfinite(spread), spread, np.inf)
    partner = np.argmin(spread, axis=1)
    if not np.all(partner[partner] == np.arange(r)) or np.max(spread[np.arange(r), partner]) > 1e-3:
        return None
    return partner


def _pairing_words(partner: np.ndarray) -> str:
    pairs = sorted({(min(j, int(k)), max(j, int(k))) for j, k in enumerate(partner)})
    gaps = {b - a for a, b in pairs}
    shown = ", ".join(f"({a}, {b})" for a, b in pairs[:6]) + (", ..." if len(pairs) > 6 else "")
    pattern = f": every pair (i, i + {gaps.pop()})" if len(gaps) == 1 else ""
    return f"the features are rotated in pairs that are neither layout's {shown}{pattern}"


def _measure(rec: RopeRecovery, pos: np.ndarray, spec: Any, freq: np.ndarray, factor: float,
             a2: np.ndarray | None = None, x2: np.ndarray | None = None) -> list[str]:
    out: list[str] = []
    h = rec.rotary_dim // 2
    if a2 is not None and min(rec.spread.values()) > 1e-3:  # neither layout keeps each pair's magnitude
        partner = find_pairing(a2, x2, rec.rotary_dim)
        if partner is not None:
            return [_pairing_words(partner)]
    if rec.layout != spec.layout or rec.rotary_dim != spec.rotary_dim_for(rec.shape[-1]):
        out.append(f"the output reads as {rec.layout} pairs over the first {rec.rotary_dim} features "
                   f"(the spec: {spec.layout}, rotary_dim {spec.rotary_dim_for(rec.shape[-1])})")
        if rec.layout != spec.layout or freq.shape[0] != h:
            return out
    amp = rec.amplitude[np.isfinite(rec.amplitude)]
    if amp.size:
        a = float(np.median(amp))
        unc = float(np.nanmedian(rec.uncertainty)) if np.any(np.isfinite(rec.uncertainty)) else 0.0
        if abs(a - factor) > 8 * unc * max(a, factor) + 1e-9:
            out.append(_amplitude_words(a, factor, spec))
    # positions: do the expected frequencies explain every pair once each row's position is re-read?
    p_eff = effective_positions(rec, freq, prior=pos)
    p_eff = np.where(np.isfinite(p_eff) & np.any(np.isfinite(rec.angle), axis=1), p_eff, np.nan)
    ok = np.isfinite(p_eff)
    if np.any(ok):
        resid = np.abs(wrap(rec.angle - p_eff[:, None] * freq[None, :])) - _slack(rec, p_eff, freq)
        fits = np.nanmax(resid[ok], initial=-1.0) <= 0
        delta = p_eff - pos
        if fits and np.nanmax(np.abs(delta[ok])) > 1e-3:
            d0 = delta[ok]
            # a float32 kernel reads positions to ~64 u |p|: offsets equal within that are one offset
            if np.ptp(d0) <= 1e-3 * max(1.0, float(np.max(np.abs(d0)))) + _PHASE_UNITS * float(np.max(np.abs(pos))):
                off = float(np.median(d0))
                out.append(f"every row's angles are those of position p {'-' if off < 0 else '+'} {_fmt(abs(off))}: "
                           "positions offset by a constant")
            else:
                nz = ok & (pos != 0)
                ratio = p_eff[nz] / pos[nz] if np.any(nz) else np.array([])
                if ratio.size and np.ptp(ratio) <= 1e-4 * max(1.0, float(np.max(np.abs(ratio)))):
                    out.append(f"every row's angles are those of position {_fmt(float(np.median(ratio)))} * p: "
                               "positions scaled")
                else:
                    rows = np.nonzero(ok & (np.abs(delta) > 1e-3))[0]
                    out.append(f"{rows.size} rows read as other positions (per-row offsets, e.g. padding or a cache "
                               f"offset); first rows: " + ", ".join(
                                   f"row {int(n)}: p = {_fmt(pos[n])} reads as {_fmt(round(float(p_eff[n]), 6) + 0.0)}"
                                   for n in rows[:4]))
            return out
    zero = pos == 0
    if np.any(zero):
        z = np.abs(rec.angle[zero])
        if np.nanmax(z, initial=0.0) > 1e-3:
            out.append(f"position 0 is not the identity: rows at position 0 are turned by up to "
                       f"{_fmt(float(np.nanmax(z)))} rad")
    precision = _phase_precision(rec, pos, freq)
    if precision:
        out.append(precision)
        return out
    # frequencies: which pairs turn at another rate than the spec's
    if np.count_nonzero(pos != 0) >= 1:
        resid = np.abs(wrap(rec.angle - pos[:, None] * freq[None, :]))
        slack = _slack(rec, pos, freq)
        differ = np.nonzero(np.nanmax(np.where(resid > slack, 1.0, 0.0), axis=0, initial=0.0) > 0)[0]
        if differ.size:
            f_eff = effective_frequencies(rec, pos, freq)
            f_eff = np.where(np.isfinite(f_eff), f_eff, np.nan)
            check = np.abs(wrap(rec.angle - pos[:, None] * f_eff[None, :])) - _slack(rec, pos, f_eff)
            verified = ((np.nanmax(np.where(np.isfinite(check), check, -1.0), axis=0) <= 0)
                        & (np.nan_to_num(f_eff, nan=-1.0) > 0)  # a negative frequency is an alias, not a reading
                        & _readable(pos, np.maximum(freq, np.nan_to_num(f_eff, nan=0.0))))
            for lo, hi in _runs(differ)[:4]:
                ok = verified[lo:hi + 1]
                if np.all(ok):
                    ratio = freq[lo:hi + 1] / f_eff[lo:hi + 1]
                    how = (f"divided by {_fmt(float(np.median(ratio)))}" if np.ptp(ratio) <= 1e-3 * np.max(np.abs(ratio))
                           else f"divided by {_fmt(float(ratio.min()))} .. {_fmt(float(ratio.max()))} (a ramp)")
                    out.append(f"pairs {lo}..{hi} of {h} turn at other frequencies than the spec's: {how} (pair {lo}: "
                               f"{_fmt(float(f_eff[lo]))} where {_fmt(float(freq[lo]))} was expected)")
                else:
                    out.append(f"pairs {lo}..{hi} of {h} turn at other angles than the spec's; their frequencies cannot "
                               "be read from these positions (too far apart to follow the angle: include consecutive "
                               "positions from 0)" if not np.any(ok) else
                               f"pairs {lo}..{hi} of {h} turn at other angles than the spec's (measured where readable: "
                               + ", ".join(f"pair {k}: {_fmt(float(f_eff[k]))} where {_fmt(float(freq[k]))} was expected"
                                           for k in range(lo, hi + 1) if verified[k])[:300] + ")")
            if differ.size >= h - 1 and h > 2 and np.all(verified[1:]) and np.all(f_eff[1:] > 0):
                e = 2.0 * np.arange(h) / rec.rotary_dim
                slope = np.polyfit(e[1:], np.log(f_eff[1:]), 1)[0]
                out.append(f"an effective base of {_fmt(math.exp(-slope))} fits the measured frequencies")
    return out
