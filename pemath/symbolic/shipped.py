"""The shipped numeric code against the symbolic results: ``pemath prove`` decides that what ``pemath`` computes
is what the claims prove things about.

A claim about a formula that ``pemath`` also ships (a scaling's frequencies, YaRN's ramp and attention factor,
ALiBi's slopes, the sinusoidal wavelengths) records a step deciding, by interval enclosures, that the shipped
float64 values agree with the exact formula at a concrete configuration (tables of integers, T5's buckets and the
layout permutations, are enumerated exactly in their own claims instead): ``sum_i |x_i - e_i| <= tol * sum_i e_i``, each ``x_i`` the shipped value as
the exact binary rational it is, each ``e_i`` the formula at that configuration, recorded unevaluated (the kernel
evaluates it, then encloses it). A wrong constant, bound or rounding in ``pemath/`` moves some value far more than
``tol`` (2^-40, about 1e-12 relative: float64 arithmetic over a few operations stays far below it) and fails the
claim.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import sympy as sp

from ..rope import _core as _rope_core
from . import pairs, traced
from ._decide import Derivation, unevaluated
from .indices import H, I

__all__ = ["TOLERANCE", "agrees", "exact_values", "kernel_rotate"]

#: The relative agreement decided between a shipped float64 result and its exact formula.
TOLERANCE = sp.Rational(1, 2**40)


def exact_values(formula: sp.Expr, index: sp.Symbol, count: int, values: dict[Any, Any],
                 per_index: Callable[[int], dict[Any, Any]] | None = None) -> list[sp.Expr]:
    """``formula`` at ``index = 0..count-1`` and the given parameter values (and, with ``per_index``, values that
    depend on the index, e.g. a factor table f_i), each recorded as built (SymPy's evaluation of floors, clips and
    branches at those numbers happens when the kernel evaluates the formula)."""
    def at(k: int) -> sp.Expr:
        out = formula.xreplace({**values, index: sp.Integer(k)})
        return out.xreplace(per_index(k)) if per_index is not None else out
    return [unevaluated(lambda k=k: at(k)) for k in range(count)]


def agrees(d: Derivation, text: str, shipped: Sequence[float] | np.ndarray, exact: Sequence[sp.Expr], *,
           tol: sp.Expr = TOLERANCE) -> None:
    """Decide that the shipped float64 values agree with the exact ones: sum |x_i - e_i| <= tol sum |e_i|."""
    xs = np.asarray(shipped, dtype=np.float64).ravel()
    if xs.shape[0] != len(exact):
        d.fail(f"{text}: the shipped code gave {xs.shape[0]} values, the formula {len(exact)}")
    if not np.all(np.isfinite(xs)):
        d.fail(f"{text}: the shipped code gave a non-finite value: {xs.tolist()[:8]}")
    err = sp.Add(*[sp.Abs(sp.Add(sp.Rational(float(x)), -e, evaluate=False), evaluate=False)
                   for x, e in zip(xs, exact)], evaluate=False)
    scale = sp.Add(*[sp.Abs(e, evaluate=False) for e in exact], evaluate=False)
    d.interval(f"{text} (sum of |shipped - exact| <= 2^-40 times sum of |exact|, at 30 digits)", err, "<=",
               tol * scale, digits=30)


def scaled(d: Derivation, name: str, scaling: Any, formula: sp.Expr, index: sp.Symbol, values: dict[Any, Any],
           dim: int, base: int, *, seq_len: int | None = None, describe: Callable[[], str] | None = None,
           per_index: Callable[[int], dict[Any, Any]] | None = None) -> None:
    """The frequencies ``scaling.inv_freq(dim, base, seq_len)`` of a shipped :class:`pemath.scaling.RopeScaling`
    against the variant's symbolic frequency ``formula`` (pair index ``index``) at ``values``."""
    got = scaling.inv_freq(dim, float(base), seq_len=seq_len)
    where = describe() if describe is not None else f"d = {dim}, base {base}"
    agrees(d, f"pemath.scaling.{type(scaling).__name__} computes {name}'s theta'_i ({where})", got,
           exact_values(formula, index, dim // 2, values, per_index))


def kernel_rotate(d: Derivation, layout: str, x: sp.IndexedBase, cos: sp.IndexedBase,
                  sin: sp.IndexedBase) -> tuple[sp.Expr, sp.Expr]:
    """Decide, for every number of pairs ``h``, what ``pemath.rope``'s kernel function ``rotate`` computes: its source
    run on symbolic arrays (:mod:`~pemath.symbolic.traced`; a head ``x`` of ``2h`` features, per-pair tables ``cos``
    and ``sin`` of ``h`` entries) returns ``2h`` features, and at pair i's features ``(a_i, b_i)``
    ``(x_a cos_i - x_b sin_i, x_b cos_i + x_a sin_i)``; with ``e >= 1`` features past the rotary ones (partial
    rotary) the same, and feature ``2h + j`` passed through. Returns the pair's two entries."""
    g, g2 = sp.symbols("g g'", integer=True, nonnegative=True)
    e = sp.Symbol("e", integer=True, positive=True)
    a, b = pairs.features(I, layout)
    want = (x[a] * cos[I] - x[b] * sin[I], x[b] * cos[I] + x[a] * sin[I])
    every_pair = {H: I + 1 + g}  # h = i + 1 + g, g >= 0: i ranges over the pairs 0..h-1
    for total, what in ((2 * H, "a head of d = 2h features"),
                        (2 * H + e, "a head of 2h + e features, e >= 1 past the rotary ones (partial rotary)")):
        try:
            out = _rope_core.rotate(traced.vector(total, x), traced.vector(H, cos), traced.vector(H, sin), layout,
                                    2 * H, traced.NAMESPACE, "float64")
        except (traced.TraceError, TypeError) as exc:  # TypeError: a size relation SymPy cannot decide
            d.fail(f"pemath.rope's rotate ({layout}) could not be run on symbolic arrays: {exc}")
        if not isinstance(out, traced.Traced) or out.ndim != 1:
            d.fail(f"pemath.rope's rotate ({layout}) returned {out!r}, not a one-axis array")
        entries = unevaluated(lambda: sp.Matrix([out.shape[0], out(a), out(b)]).xreplace(every_pair))
        c, s = cos.label, sin.label
        d.equal(f"pemath.rope's rotate ({layout}), its source run on symbolic arrays ({what}, tables {c}, {s} of h "
                f"entries): it returns {sp.sstr(total)} features, and at pair i < h, features ({a}, {b}), "
                f"x_a {c}_i - x_b {s}_i and x_b {c}_i + x_a {s}_i (every h: h = i + 1 + g, g >= 0)", entries,
                sp.Matrix([total, *want]).xreplace(every_pair))
        if total != 2 * H:
            k = 2 * H + pairs.J
            d.equal(f"and feature 2h + j, j < e, is x_(2h + j) unchanged ({layout}; every e: e = j + 1 + g')",
                    unevaluated(lambda: out(k).xreplace({e: pairs.J + 1 + g2})), x[k])
    return want
