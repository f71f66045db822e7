"""Mutation suite over the symbolic layer: every wrong statement must fail to prove.

Two sources of mutants, for every family of claims in :mod:`pemath.claims`:

* :data:`CATALOGUE`, written by hand: the bugs of the field fed to the derivations
  (perturbed statements, wrong signs, the other layout, frequencies off by one index or
  with the base exponent changed, dropped terms, positions off by one, swapped
  parameters, wrong constants), and for the published claims wrong constants that
  make the verdict flip.
* :func:`auto_mutants`: a generic statement perturbation. Each :class:`Hook` is one
  ingredient of a claim's proof that states what is claimed (the claimed angle, base,
  ratio, smoothing, sign, ...), written as a SymPy expression of placeholder
  arguments; the mutator rewrites it one site at a time (a symbol -> symbol + 1 or -> 0,
  one argument for another, sin <-> cos, a term negated or dropped, a factor dropped, a
  number + 1, an exponent negated, a relation loosened, two matrix rows swapped) and
  runs the derivation with it.

A mutant is *killed* iff proving raises :class:`~pemath.symbolic.ProofFailure` (or, for
a published claim, the verdict flips); one that proves *survives*; any other exception
is an *error* (reported, neither killed nor survived). Perturbations that leave the
statement true are *equivalent*: they are listed in :data:`EQUIVALENT` with the reason,
must prove, and together with :data:`REWRITINGS` (true rewritings of the statements)
show that the prover does not simply fail everything.

Run ``python -m tests.mutation.symbolic [--fast] [--only SUBSTRING]``: one line per
mutant, the kill rate, exit status 1 if any mutant survives or an equivalent fails.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any
from unittest import mock

import sympy as sp

from ._patch import mutate
from pemath.symbolic import ProofFailure
from pemath.symbolic import alibi as AL
from pemath.symbolic import decay as DC
from pemath.symbolic import failures as FL
from pemath.symbolic import multidim as MD
from pemath.symbolic import pairs as PR
from pemath.symbolic import pedagogy as PD
from pemath.symbolic import published as PB
from pemath.symbolic import rope as R
from pemath.symbolic import rope_algebra as RA
from pemath.symbolic import rope_derivation as RD
from pemath.symbolic import scaling as SC
from pemath.symbolic import sinusoidal as SN
from pemath.symbolic import t5 as T5
from pemath.symbolic import xpos as XP

__all__ = ["Mutant", "Hook", "CATALOGUE", "HOOKS", "REWRITINGS", "EQUIVALENT", "KNOWN_ERRORS", "auto_mutants",
           "unmutated", "decide", "run_all", "main"]


@dataclass(frozen=True)
class Mutant:
    """A wrong statement: ``run()`` runs the claim's derivation with the mutated ingredient."""

    name: str
    claim: str
    kind: str
    run: Callable[[], Any]
    verdict: bool | None = None  # published claims: the unmutated verdict; killed iff it flips
    slow: bool = False


def decide(mutant: Mutant, timeout: int = 60) -> tuple[str, str]:
    """``("killed" | "survived" | "error" | "timeout", detail)``."""
    try:
        with _alarm(timeout):
            out = mutant.run()
    except ProofFailure as exc:
        return "killed", str(exc).split("; residual")[0][:160]
    except _Timeout:
        return "timeout", f"over {timeout} s"
    except Exception as exc:  # noqa: BLE001  (reported: neither killed nor survived)
        return "error", f"{type(exc).__name__}: {exc}"[:200]
    holds = getattr(out, "holds", None)
    if mutant.verdict is not None and holds is not None and holds != mutant.verdict:
        return "killed", f"verdict flipped to holds={holds}"
    return "survived", ""


class _Timeout(Exception):
    pass


@contextlib.contextmanager
def _alarm(seconds: int) -> Iterator[None]:
    """A timeout of ``seconds`` of this process's CPU time (SIGPROF), not of the wall clock: CI runs other checks
    beside the tests, and a derivation's work does not depend on them."""
    if not hasattr(signal, "SIGPROF"):
        yield
        return

    def raise_timeout(signum, frame):
        raise _Timeout

    old = signal.signal(signal.SIGPROF, raise_timeout)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, old)


def _patched(module: Any, name: str, value: Any, run: Callable[[], Any]) -> Callable[[], Any]:
    def go():
        with mock.patch.object(module, name, value):
            return run()

    return go


# ------------------------------------------------------------------------------------------------
# wrong blocks, encodings and maps (the bugs of the field)


def seed_block(x):
    """seeds/002's get_rotary_matrix: the lower sin entry is never set."""
    return sp.Matrix([[sp.cos(x), -sp.sin(x)], [0, sp.cos(x)]])


def flipped_block(x):
    return sp.Matrix([[sp.cos(x), sp.sin(x)], [sp.sin(x), sp.cos(x)]])


def clockwise_block(x):
    return sp.Matrix([[sp.cos(x), sp.sin(x)], [-sp.sin(x), sp.cos(x)]])


def transposed_sin_block(x):
    """sin and cos exchanged in the block (a reflection-like matrix, det = -cos 2x)."""
    return sp.Matrix([[sp.sin(x), -sp.cos(x)], [sp.cos(x), sp.sin(x)]])


def _pair_bad_cos(order, x, freq=SN.w):
    return sp.Matrix([sp.sin(freq * x), sp.cos(freq * (x + 1))])


def _pair_bad_freq(order, x, freq=SN.w):
    return sp.Matrix([sp.sin(freq * x), sp.cos(2 * freq * x)])


def _pair_not_periodic(order, x, freq=SN.w):
    return sp.Matrix([sp.sin(freq * x), x])


def _pair_dropped(order, x, freq=SN.w):
    return sp.Matrix([sp.sin(freq * x), 0])


def _pair_two_sines(order, x, freq=SN.w):
    return sp.Matrix([sp.sin(freq * x), sp.sin(freq * x)])


# the true ingredients, captured before any patch replaces them
_BITS, _ROTATE = PD.binary_bits, RA.rotate_features


def _gray(p, d):
    return _BITS(p ^ (p >> 1), d)


def _negated_rotate(x, layout):
    return -_ROTATE(x, layout)


def _other_rotate(x, layout):
    return _ROTATE(x, "interleaved" if layout == "half" else "half")


_SECTION_START, _SECTION_SIZE = (0, 2, 3), (2, 1, 1)
_b = sp.Symbol("b", positive=True)


def _spurious_increase(distances, dim, **kw):
    """A long_term_decay curve that rises at r = 3 -> 4, where the true curve falls."""
    import numpy as np

    from pemath.rope import analysis

    real = np.asarray(analysis.long_term_decay(distances, dim, **kw))
    r = np.asarray(distances)
    return np.where(r == 4, real[3] + 1.0, real)


def _monotone_curve(distances, dim, **kw):
    """A long_term_decay curve that decays monotonically: RoFormer's claim would hold for it."""
    import numpy as np

    return (dim // 2 + 1) / 2 / (1.0 + np.abs(np.asarray(distances, dtype=float)))


def _m(name, claim, kind, run, **kw):
    return Mutant(name, claim, kind, run, **kw)


def _swapped_rotation(angle):
    """cos and sin swapped in the rotation: not a rotation, so applying it twice is no doubled angle."""
    return sp.Matrix([[sp.sin(angle), -sp.cos(angle)], [sp.cos(angle), sp.sin(angle)]])


def _scaled_rotation(angle):
    """A rotation stretched along one axis: the score is then no function of the angle difference."""
    return sp.Matrix([[2 * sp.cos(angle), -sp.sin(angle)], [sp.sin(angle), sp.cos(angle)]])


def _round_half_up(n, bits, e=None):
    """Rounding to ``bits`` significant bits with ties away from zero (up), as a SymPy formula: the wrong rule."""
    e = sp.floor(sp.log(n, 2)) + 1 if e is None else e
    u = sp.Integer(2) ** sp.Max(e - bits, 0)
    return sp.floor(n / u + sp.S.Half) * u


def _half_pairs_off_by_one(i, layout, h=PR.H):
    """The half split taken one feature early, (i, i + h - 1): a pair map that is no partition."""
    return (2 * i, 2 * i + 1) if layout == "interleaved" else (i, i + h - 1)


def _interleaved_pairs_shifted(i, layout, h=PR.H):
    """Interleaved pairs (2i + 1, 2i + 2): feature 0 never visited, feature 2h visited."""
    return (2 * i + 1, 2 * i + 2) if layout == "interleaved" else (i, i + h)


def _pass_through_overlap(d):
    """The pass-through features start one early, overlapping the rotary ones."""
    lhs = sp.Sum(PR.F(PR.J), (PR.J, 0, 2 * PR.H + PR.PASS - 1))
    rhs = sp.Sum(PR.F(PR.J), (PR.J, 0, 2 * PR.H - 1)) + sp.Sum(PR.F(PR.J), (PR.J, 2 * PR.H - 1, 2 * PR.H + PR.PASS - 1))
    d.equal("overlapping split", lhs, rhs, methods=("sums",))
    return sp.Eq(lhs, rhs, evaluate=False)


CATALOGUE: list[Mutant] = [
    # --- the pair partition every "every even d" proof rests on ----------------------------------------
    _m("pairs: half split at i + h - 1", "rope.relative", "position",
       _patched(PR, "features", _half_pairs_off_by_one, lambda: R.relative_symbolic_d(layout="half"))),
    _m("pairs: interleaved pairs shifted by one feature", "rope.relative", "position",
       _patched(PR, "features", _interleaved_pairs_shifted, lambda: R.relative_symbolic_d(layout="interleaved"))),
    _m("pairs: pass-through overlapping the rotary features", "rope.relative", "position",
       _patched(PR, "pass_through", _pass_through_overlap, lambda: R.relative_symbolic_d(layout="half"))),
    _m("group, every d: half split at i + h - 1", "rope.group", "position",
       _patched(PR, "features", _half_pairs_off_by_one, lambda: RA.group_symbolic_d(layout="half"))),
    _m("weights, every d: P read as the identity", "rope.weight_permutation", "permutation",
       _patched(RA, "hf_pair", lambda q: sp.Matrix([q[R.I], q[R.I + R.H]]), RA.weight_permutation_symbolic_d)),
    _m("weights, every d: P^T instead of P (pairs swapped)", "rope.weight_permutation", "permutation",
       _patched(RA, "hf_pair", lambda q: sp.Matrix([q[2 * R.I + 1], q[2 * R.I]]), RA.weight_permutation_symbolic_d)),
    _m("elementwise, every d: clockwise block", "rope.elementwise_form", "sign",
       _patched(RA, "block", clockwise_block, lambda: RA.elementwise_symbolic_d("half"))),
    _m("layout, every d: sigma sends 2i + 1 to i + h - 1", "rope.layout_conjugacy", "position",
       lambda: mutate(RA.layout_symbolic_d, lambda j, h: sp.floor(j / 2) + (h - 1) * sp.Mod(j, 2))()),
    _m("sinusoidal dot product, every d: pairs shifted", "sinusoidal.dot_product", "position",
       _patched(PR, "features", _interleaved_pairs_shifted, SN.dot_product)),
    _m("xpos, every d: half split at i + h - 1", "xpos.relative", "position",
       _patched(PR, "features", _half_pairs_off_by_one, XP.relative_symbolic_d)),
    _m("t5 count: hypothesis E <= M log(D/M) dropped", "t5.bucket_count", "statement",
       _patched(T5, "count_hypothesis", lambda e, m, log_ratio: (), T5.every_log_bucket_reached)),
    _m("PI: PI's own constant d/(8 ln c), no + 1/2", "pi.theorem_2_1", "constant",
       _patched(PB, "CORRECTED_OFFSET", sp.Integer(0), PB.pi_corrected_constant)),

    # --- failures ------------------------------------------------------------------------------
    _m("rotation twice: cos and sin swapped", "failures.rotation_twice", "statement",
       _patched(FL, "_rot", _swapped_rotation, FL.rotation_twice)),
    _m("low-precision integers: one bit fewer", "failures.low_precision_integers", "bits",
       _patched(FL, "rounded", lambda n, bits, *e, _r=FL.rounded: _r(n, bits - 1, *e),
                lambda: FL.integers_exact("bfloat16"))),
    _m("low-precision integers: ties rounded up", "failures.low_precision_integers", "statement",
       _patched(FL, "rounded", _round_half_up, lambda: FL.integers_exact("float16"))),
    _m("mixed frequencies: a stretched rotation", "failures.mixed_frequencies", "statement",
       _patched(FL, "_rot", _scaled_rotation, FL.mixed_frequencies)),
    _m("gqa: the wrong count permutes like the right one", "failures.gqa_wrong_heads", "statement",
       _patched(FL, "hf_permutation", lambda rows, heads, _p=FL.hf_permutation: _p(rows, 1), FL.gqa_wrong_heads)),
    _m("linear two ways: the frequency multiplied by s", "failures.linear_two_ways", "statement",
       _patched(FL, "scaled_frequency", lambda theta, s: theta * s, FL.linear_two_ways)),
    _m("static NTK: another multiplier", "failures.static_ntk", "statement", lambda: FL.static_ntk(factor=2)),
    _m("factor twice: another factor", "failures.factor_twice", "statement", lambda: FL.factor_twice(s_value=64)),
    _m("positions rounded: one bit fewer", "failures.positions_rounded", "statement",
       _patched(FL, "rounded", lambda n, bits, *e, _r=FL.rounded: _r(n, bits - 1, *e), FL.positions_rounded)),
    # --- sinusoidal ------------------------------------------------------------------------------
    _m("shift: cos component at position x + 1", "sinusoidal.shift", "position",
       lambda: mutate(SN.shift_matrix, "sin_cos", encoding=_pair_bad_cos)()),
    _m("shift: cos at twice the frequency", "sinusoidal.shift", "frequency",
       lambda: mutate(SN.shift_matrix, "sin_cos", encoding=_pair_bad_freq)()),
    _m("shift: cos component replaced by the position", "sinusoidal.shift", "statement",
       lambda: mutate(SN.shift_matrix, "sin_cos", encoding=_pair_not_periodic)()),
    _m("shift: cos component dropped", "sinusoidal.shift", "dropped term",
       lambda: mutate(SN.shift_matrix, "sin_cos", encoding=_pair_dropped)()),
    _m("shift: sin twice (cos -> sin)", "sinusoidal.shift", "statement",
       lambda: mutate(SN.shift_matrix, "cos_sin", encoding=_pair_two_sines)()),
    _m("dot product: cos at position x + 1", "sinusoidal.dot_product", "position",
       _patched(SN, "pair", _pair_bad_cos, SN.dot_product)),
    _m("dot product: cos at twice the frequency", "sinusoidal.dot_product", "frequency",
       _patched(SN, "pair", _pair_bad_freq, SN.dot_product)),
    _m("dot product: sin twice", "sinusoidal.dot_product", "statement",
       _patched(SN, "pair", _pair_two_sines, SN.dot_product)),
    # --- rope.relative -----------------------------------------------------------------------------
    _m("relative: seed block (lower sin dropped)", "rope.relative", "dropped term", lambda: mutate(R.relative_block, seed_block)()),
    _m("relative: sign-flipped block", "rope.relative", "sign", lambda: mutate(R.relative_block, flipped_block)()),
    _m("relative: sin and cos exchanged in the block", "rope.relative", "statement",
       lambda: mutate(R.relative_block, transposed_sin_block)()),
    _m("relative, every d: seed block", "rope.relative", "dropped term", lambda: mutate(R.relative_symbolic_d, seed_block)()),
    _m("relative, every d: (m - n) for (n - m)", "rope.relative", "sign",
       lambda: mutate(R.relative_symbolic_d, rhs_angle=lambda m, n: (m - n) * R.THETA(R.I))()),
    _m("relative, every d: theta_{i+1}", "rope.relative", "frequency",
       lambda: mutate(R.relative_symbolic_d, rhs_angle=lambda m, n: (n - m) * R.THETA(R.I + 1))()),
    _m("relative, every d: position off by one", "rope.relative", "position",
       lambda: mutate(R.relative_symbolic_d, rhs_angle=lambda m, n: (n - m + 1) * R.THETA(R.I))()),
    _m("relative, every d: (n + m)", "rope.relative", "statement",
       lambda: mutate(R.relative_symbolic_d, rhs_angle=lambda m, n: (n + m) * R.THETA(R.I))()),
    _m("relative, d = 4: R(n - m) in the other layout", "rope.relative", "layout",
       lambda: mutate(R.relative_expanded, 4, "half", perm_layout="interleaved")()),
    _m("relative, d = 4: R(n - m) in the other layout (interleaved)", "rope.relative", "layout",
       lambda: mutate(R.relative_expanded, 4, "interleaved", perm_layout="half")()),
    _m("relative, d = 4: seed block", "rope.relative", "dropped term",
       lambda: mutate(R.relative_expanded, 4, "interleaved", blk=seed_block)()),
    # --- rope.group ----------------------------------------------------------------------------------
    _m("group: seed block", "rope.group", "dropped term", lambda: mutate(RA.group_block, seed_block)()),
    _m("group: sign-flipped block", "rope.group", "sign", lambda: mutate(RA.group_block, flipped_block)()),
    _m("group, every d: theta_{i+1}", "rope.group", "frequency",
       lambda: mutate(RA.group_symbolic_d, rhs_angle=lambda m, n: (m + n) * R.THETA(R.I + 1))()),
    _m("group, every d: (m - n) for (m + n)", "rope.group", "sign",
       lambda: mutate(RA.group_symbolic_d, rhs_angle=lambda m, n: (m - n) * R.THETA(R.I))()),
    _m("group, every d: seed block", "rope.group", "dropped term", lambda: mutate(RA.group_symbolic_d, seed_block)()),
    _m("group, d = 4 half: seed block", "rope.group", "dropped term",
       lambda: mutate(RA.group_dense, 4, "half", blk=seed_block)()),
    _m("group, d = 4 interleaved: sign-flipped block", "rope.group", "sign",
       lambda: mutate(RA.group_dense, 4, "interleaved", blk=flipped_block)()),
    # --- rope.elementwise_form / complex_form ---------------------------------------------------------------
    _m("elementwise: rotate negated", "rope.elementwise_form", "sign",
       lambda: mutate(RA.elementwise_form, 4, "interleaved", rotate=_negated_rotate)()),
    _m("elementwise: the other layout's rotate (half)", "rope.elementwise_form", "layout",
       lambda: mutate(RA.elementwise_form, 4, "half", rotate=_other_rotate)()),
    _m("elementwise: the other layout's rotate (interleaved)", "rope.elementwise_form", "layout",
       lambda: mutate(RA.elementwise_form, 4, "interleaved", rotate=_other_rotate)()),
    _m("elementwise: frequency off by one index", "rope.elementwise_form", "frequency",
       lambda: mutate(RA.elementwise_form, 4, "half", freq=lambda i: R.frequency(i + 1, 4))()),
    _m("elementwise: base exponent -i/d for -2i/d", "rope.elementwise_form", "frequency",
       lambda: mutate(RA.elementwise_form, 4, "interleaved", freq=lambda i: _b ** (-sp.Integer(i) / 4))()),
    _m("elementwise: clockwise block", "rope.elementwise_form", "sign",
       lambda: mutate(RA.elementwise_form, 4, "interleaved", blk=clockwise_block)()),
    _m("complex: conjugate exponent e^{-i m theta}", "rope.complex_form", "sign", lambda: mutate(RA.complex_form, sign=-1)()),
    _m("complex: pair read as x_b + i x_a", "rope.complex_form", "swapped parameters",
       lambda: mutate(RA.complex_form, swap=True)()),
    _m("complex: seed block", "rope.complex_form", "dropped term", lambda: mutate(RA.complex_form, blk=seed_block)()),
    _m("complex: sign-flipped block", "rope.complex_form", "sign", lambda: mutate(RA.complex_form, blk=flipped_block)()),
    # --- layouts ------------------------------------------------------------------------------------
    _m("conjugacy, d = 8: P^T for P", "rope.layout_conjugacy", "layout",
       lambda: mutate(RA.layout_conjugacy, 8, perm=R.permutation(8).T)()),
    _m("conjugacy, d = 4: no permutation", "rope.layout_conjugacy", "layout",
       lambda: mutate(RA.layout_conjugacy, 4, perm=sp.eye(4))()),
    _m("conjugacy, every d: pair members swapped", "rope.layout_conjugacy", "layout",
       lambda: mutate(RA.layout_symbolic_d, index=lambda j, h: sp.floor(j / 2) + h * sp.Mod(j + 1, 2))()),
    _m("conjugacy, every d: sigma(j) = j", "rope.layout_conjugacy", "layout",
       lambda: mutate(RA.layout_symbolic_d, index=lambda j, h: j)()),
    _m("weights, d = 8: P^T for P", "rope.weight_permutation", "layout",
       lambda: mutate(RA.weight_permutation, 8, perm=R.permutation(8).T)()),
    _m("weights, d = 4: not permuted", "rope.weight_permutation", "layout",
       lambda: mutate(RA.weight_permutation, 4, perm=sp.eye(4))()),
    # --- calculus ----------------------------------------------------------------------------------
    _m("translation: cached keys not shifted", "rope.translation_invariance", "dropped term",
       lambda: mutate(RA.translation_symbolic_d, key_shift=0)()),
    _m("translation: keys shifted twice", "rope.translation_invariance", "constant",
       lambda: mutate(RA.translation_symbolic_d, key_shift=2 * RA.c)()),
    _m("translation: keys shifted by c + 1", "rope.translation_invariance", "position",
       lambda: mutate(RA.translation_symbolic_d, key_shift=RA.c + 1)()),
    _m("translation: seed block", "rope.translation_invariance", "dropped term",
       lambda: mutate(RA.translation_symbolic_d, seed_block)()),
    _m("translation, dense: keys stale", "rope.translation_invariance", "dropped term",
       lambda: mutate(RA.translation_dense, 4, "half", length=1, key_shift=0)()),
    _m("backward: forward rotation for the VJP", "rope.backward", "sign", lambda: mutate(RA.backward_symbolic_d, rhs_sign=1)()),
    _m("backward: seed block", "rope.backward", "dropped term", lambda: mutate(RA.backward_symbolic_d, seed_block)()),
    _m("backward, dense: J v for J^T v", "rope.backward", "swapped parameters",
       lambda: mutate(RA.backward_dense, 4, "half", vjp=lambda J, v: J * v)()),
    _m("backward, dense: extra factor J^T J v", "rope.backward", "statement",
       lambda: mutate(RA.backward_dense, 4, "interleaved", vjp=lambda J, v: J.T * J * v)()),
    _m("backward, dense: the other layout's rotate", "rope.backward", "layout",
       lambda: mutate(RA.backward_dense, 4, "half", rotate=_other_rotate)()),
    # --- scaling --------------------------------------------------------------------------------
    _m("scaling: frequency moves with the position", "scaling.relative", "position",
       lambda: mutate(SC.per_frequency_relative, lambda i, pos: SC.G(i) * (1 + pos / SC.L0))()),
    _m("scaling: attention factor counted once", "scaling.relative", "constant",
       lambda: mutate(SC.per_frequency_relative, power=1)()),
    _m("scaling: dynamic NTK driven by the token's position", "scaling.relative", "position",
       lambda: mutate(SC.per_frequency_relative, 
           variants={"dyn": SC.variant_frequencies()["DynamicNTK"].subs(SC.seq_len, SC.m + 1)})()),
    _m("ntk: exponent d/(d-1)", "scaling.ntk_base", "frequency", lambda: mutate(SC.ntk_base, lambda b, s, d: b * s ** (d / (d - 1)))()),
    _m("ntk: b s", "scaling.ntk_base", "dropped term", lambda: mutate(SC.ntk_base, lambda b, s, d: b * s)()),
    _m("dynamic: ratio without -(s - 1)", "scaling.dynamic_continuity", "dropped term",
       lambda: mutate(SC.dynamic_continuity, lambda L, L0, s: s * L / L0)()),
    _m("dynamic: ratio L/L0 - (s - 1)", "scaling.dynamic_continuity", "dropped term",
       lambda: mutate(SC.dynamic_continuity, lambda L, L0, s: L / L0 - (s - 1))()),
    _m("llama3 = yarn: alpha and beta swapped", "scaling.llama3_is_yarn", "swapped parameters",
       lambda: mutate(SC.llama3_is_yarn, SC.high, SC.low)()),
    _m("llama3 = yarn: beta doubled", "scaling.llama3_is_yarn", "constant", lambda: mutate(SC.llama3_is_yarn, SC.low, 2 * SC.high)()),
    _m("llama3 continuity: l and h swapped", "scaling.llama3_continuity", "swapped parameters",
       lambda: mutate(SC.llama3_continuity, lambda w: (SC.L0 / w - SC.high) / (SC.low - SC.high))()),
    _m("llama3 continuity: smoothing in lambda/L0", "scaling.llama3_continuity", "statement",
       lambda: mutate(SC.llama3_continuity, lambda w: (w / SC.L0 - SC.low) / (SC.high - SC.low))()),
    _m("p-RoPE keeps the lowest", "scaling.proportional_limits", "layout",
       lambda: mutate(SC.proportional_limits, lambda i, k, h: sp.GreaterThan(i, h - k))()),
    _m("p-RoPE keeps k + 1", "scaling.proportional_limits", "position",
       lambda: mutate(SC.proportional_limits, lambda i, k, h: sp.LessThan(i, k))()),
    _m("unit factor: blend weight forgotten", "scaling.unit_factor", "dropped term",
       lambda: mutate(SC.unit_factor, lambda g, th, s: (1 - g) * th / s + th)()),
    # --- multidim / xpos -----------------------------------------------------------------------------
    _m("axial: key group rotated by the next axis", "multidim.axial_relative", "swapped parameters",
       lambda: mutate(MD.axial_relative_symbolic, key_axis=lambda a: a + 1)()),
    _m("axial: axes swapped (4, 4)", "multidim.axial_relative", "swapped parameters",
       lambda: mutate(MD.axial_relative_expanded, (4, 4), "half", key_perm=[1, 0])()),
    _m("axial: axes cycled (2, 2, 2)", "multidim.axial_relative", "swapped parameters",
       lambda: mutate(MD.axial_relative_expanded, (2, 2, 2), "interleaved", key_perm=[1, 2, 0])()),
    _m("axial: seed block", "multidim.axial_relative", "dropped term", lambda: mutate(MD.axial_relative_symbolic, blk=seed_block)()),
    _m("mrope: frequencies restarted per component", "multidim.mrope_reduces", "frequency",
       lambda: mutate(MD.mrope_reduces_symbolic, freq=lambda i, c: MD.THETA_AJ(c, i))()),
    _m("mrope: frequencies restarted per section", "multidim.mrope_reduces", "frequency",
       lambda: mutate(MD.mrope_reduces_expanded, (2, 1, 1), "half", freq=lambda i, c: _b ** (
           -2 * sp.Integer(i - _SECTION_START[c]) / (2 * _SECTION_SIZE[c])))()),
    _m("xpos: same sign for queries and keys", "xpos.relative", "sign", lambda: mutate(XP.relative_block, key_sign=+1)()),
    _m("xpos, every d: same sign", "xpos.relative", "sign", lambda: mutate(XP.relative_symbolic_d, key_sign=+1)()),
    _m("xpos, d = 4: same sign", "xpos.relative", "sign", lambda: mutate(XP.relative_expanded, 4, "interleaved", key_sign=+1)()),
    _m("xpos: seed block", "xpos.relative", "dropped term", lambda: mutate(XP.relative_block, blk=seed_block)()),
    # --- alibi ------------------------------------------------------------------------------------
    _m("alibi: shifted bias m j is not relative", "alibi.relative", "statement", lambda: mutate(AL.relative, AL.shifted)()),
    _m("alibi: bias -m (i + j)", "alibi.relative", "sign", lambda: mutate(AL.relative, lambda q, k: -AL.slope * (q + k))()),
    _m("softmax: shift varies with the key", "alibi.softmax_shift", "statement",
       lambda: mutate(AL.softmax_shift, shift=lambda k: AL.c * k)()),
    _m("softmax: plain normalisation", "alibi.softmax_shift", "statement", lambda: mutate(AL.softmax_shift, f=lambda v: v)()),
    _m("softmax, any length: f = square", "alibi.softmax_shift", "statement",
       lambda: mutate(AL.softmax_shift_symbolic_n, f=lambda v: v**2)()),
    _m("causal = shifted: quadratic bias", "alibi.softmax_shift", "statement",
       lambda: mutate(AL.causal_equals_shifted, other=lambda q, k: AL.slope * k * k)()),
    _m("causal = shifted: key off by one", "alibi.softmax_shift", "position",
       lambda: mutate(AL.causal_equals_shifted, other=lambda q, k: AL.slope * (k + 1))()),
    _m("slopes: ratio start^2", "alibi.slopes_geometric", "constant", lambda: mutate(AL.slopes_exact, ratio=lambda s: s**2)()),
    _m("slopes: ratio 2 start", "alibi.slopes_geometric", "constant", lambda: mutate(AL.slopes_exact, ratio=lambda s: 2 * s)()),
    _m("slopes, every n: ratio start^2", "alibi.slopes_geometric", "constant",
       lambda: mutate(AL.slopes_symbolic, ratio=lambda s: s**2)()),
    # --- t5 ---------------------------------------------------------------------------------------
    _m("t5: absolute key position", "t5.relative", "statement", lambda: mutate(T5.relative, lambda q, k: k)()),
    _m("t5: k + q", "t5.relative", "sign", lambda: mutate(T5.relative, lambda q, k: k + q)()),
    _m("t5: max_exact h/2 + 1", "t5.exact_below_max_exact", "position",
       lambda: mutate(T5.exact_below_max_exact, max_exact=lambda h: h // 2 + 1)()),
    _m("t5: max_exact h/2 - 1", "t5.exact_below_max_exact", "position",
       lambda: mutate(T5.exact_below_max_exact, max_exact=lambda h: h // 2 - 1)()),
    _m("t5: log reference M + 1", "t5.exact_below_max_exact", "constant", lambda: mutate(T5.exact_below_max_exact, ref=T5.M + 1)()),
    _m("t5: exact branch n + 1", "t5.exact_below_max_exact", "position",
       lambda: mutate(T5.exact_below_max_exact, exact=lambda n: n + 1)()),
    _m("t5: log offset M - 2", "t5.monotone", "constant", lambda: mutate(T5.monotone, offset=T5.M - 2)()),
    _m("t5: decreasing index 1/x for log", "t5.monotone", "statement", lambda: mutate(T5.monotone, log=lambda x: 1 / x)()),
    _m("t5: cap E for E - 1", "t5.bucket_count", "constant", lambda: mutate(T5.bucket_count, cap=T5.E)()),
    _m("t5: max_distance D + 1", "t5.bucket_count", "constant", lambda: mutate(T5.bucket_count, top=T5.D + 1)()),
    _m("t5: distance 1 in bucket 0", "t5.bucket_count", "position", lambda: mutate(T5.bucket_count, exact=lambda n: n - 1)()),
    # --- pedagogy ---------------------------------------------------------------------------------------
    _m("integer encoding squashed p/(p+1)", "pedagogy.integer_unbounded", "statement",
       lambda: mutate(PD.integer_unbounded, lambda p: p / (p + 1))()),
    _m("integer encoding constant", "pedagogy.integer_unbounded", "statement",
       lambda: mutate(PD.integer_unbounded, lambda p: sp.Integer(7))()),
    _m("normalized by a fixed length", "pedagogy.normalized_depends_on_length", "statement",
       lambda: mutate(PD.normalized_depends_on_length, lambda p, L: p / 1024)()),
    _m("binary: Gray code does not jump", "pedagogy.binary_bounded_unique_discontinuous", "statement",
       lambda: mutate(PD.binary_jump, bits=_gray)()),
    _m("binary: top bit dropped", "pedagogy.binary_bounded_unique_discontinuous", "dropped term",
       lambda: mutate(PD.binary_bounded_unique, bits=lambda p, d: _BITS(p, d - 1) + [0])()),
    _m("binary: entries 0 or 2", "pedagogy.binary_bounded_unique_discontinuous", "constant",
       lambda: mutate(PD.binary_bounded_unique, bits=lambda p, d: [2 * v for v in _BITS(p, d)])()),
    # --- rope.derivation / decay ---------------------------------------------------------------------------
    _m("derivation: phi(0) = theta", "rope.derivation", "constant", lambda: mutate(RD.derive, initial=RD.theta)()),
    _m("derivation: phi(0) = 1", "rope.derivation", "constant", lambda: mutate(RD.derive, initial=1)()),
    _m("derivation: increment m theta", "rope.derivation", "position", lambda: mutate(RD.derive, step=RD.m * RD.theta)()),
    _m("derivation: radius grows with the position", "rope.derivation", "position",
       lambda: mutate(RD.derive, radius=lambda r, m: r * (1 + m**2))()),
    _m("derivation: radius |x|^2", "rope.derivation", "statement", lambda: mutate(RD.derive, radius=lambda r, m: r**2)()),
    _m("abel, every d: S_i for S_{i+1}", "rope.decay_abel", "position", lambda: mutate(DC.abel_symbolic_d, shift=0)()),
    _m("abel, every d: S_{i+2}", "rope.decay_abel", "position", lambda: mutate(DC.abel_symbolic_d, shift=2)()),
    _m("abel, d = 8: S_i", "rope.decay_abel", "position", lambda: mutate(DC.abel_expanded, 4, shift=0)()),
    _m("roformer decay: d = 2 (a flat curve, no counterexample)", "roformer.long_term_decay", "constant",
       lambda: __import__("pemath.claims.rope_decay", fromlist=["decay_verdict"]).decay_verdict(2), verdict=False),
    _m("roformer decay: spurious increase at r = 3", "roformer.long_term_decay", "statement",
       lambda: _with_curve(_spurious_increase), verdict=False),
    _m("roformer decay: a curve that decays", "roformer.long_term_decay", "statement",
       lambda: _with_curve(_monotone_curve), verdict=False),
    # --- published --------------------------------------------------------------------------------------
    _m("wavelengths: Vaswani's end point 2 pi b for the paper's formula", "vaswani.wavelengths", "constant",
       lambda: mutate(PB.wavelengths, "interleaved", last=2 * sp.pi * (1 + PB._beta))()),
    _m("wavelengths: the paper's end point for tensor2tensor", "sinusoidal.wavelengths", "frequency",
       lambda: mutate(PB.wavelengths, "tensor2tensor", last=2 * sp.pi * (1 + PB._beta) ** ((2 * PB._h - 2) / (2 * PB._h)))()),
    _m("wavelengths: last pair off by one (i = d/2 - 2)", "sinusoidal.wavelengths", "position",
       lambda: mutate(PB.wavelengths, "interleaved", last=2 * sp.pi * (1 + PB._beta) ** ((2 * PB._h - 4) / (2 * PB._h)))()),
    _m("PI bound with 4 for 8 (true at d = 128)", "pi.theorem_2_1", "constant",
       lambda: PB.pi_interpolation_bound(128, 10000, 4), verdict=False),
    _m("PI bound with 6 for 8 (true at d = 128)", "pi.theorem_2_1", "constant",
       lambda: PB.pi_interpolation_bound(128, 10000, 6), verdict=False),
    _m("PI bound with 2 for 8", "pi.theorem_2_1", "constant",
       lambda: PB.pi_interpolation_bound(128, 10000, 2), verdict=False),
    _m("barbero: E = A_00 for independent q, k", "barbero.prop_3_2", "statement",
       lambda: mutate(PB.gaussian_no_decay, claimed=sp.Symbol("A_00", real=True))()),
    _m("barbero: E = 0 when k = q", "barbero.prop_3_2", "statement",
       lambda: mutate(PB.gaussian_no_decay, independent=False, claimed=0)()),
    _m("barbero: E = 1 for independent q, k", "barbero.prop_3_2", "constant",
       lambda: mutate(PB.gaussian_no_decay, claimed=1)()),
]


def _with_curve(curve):
    from pemath import rope
    from pemath.claims.rope_decay import decay_verdict

    with mock.patch.object(rope, "long_term_decay", curve):
        return decay_verdict()


# ------------------------------------------------------------------------------------------------
# true rewritings: must prove (the prover is not failing everything)


@dataclass(frozen=True)
class Rewriting:
    name: str
    claim: str
    run: Callable[[], Any]


REWRITINGS: list[Rewriting] = [
    Rewriting("relative: angle n theta - m theta", "rope.relative",
              lambda: mutate(R.relative_symbolic_d, rhs_angle=lambda m, n: n * R.THETA(R.I) - m * R.THETA(R.I))()),
    Rewriting("relative: angle -(m - n) theta", "rope.relative",
              lambda: mutate(R.relative_symbolic_d, rhs_angle=lambda m, n: -(m - n) * R.THETA(R.I))()),
    Rewriting("relative: the clockwise block is relative too", "rope.relative", lambda: mutate(R.relative_block, clockwise_block)()),
    Rewriting("group: angle (n + m) theta", "rope.group",
              lambda: mutate(RA.group_symbolic_d, rhs_angle=lambda m, n: R.THETA(R.I) * n + R.THETA(R.I) * m)()),
    Rewriting("shift: (sin, -cos) is shifted by a rotation too", "sinusoidal.shift",
              lambda: mutate(SN.shift_matrix, "sin_cos", encoding=lambda o, x, freq=SN.w: sp.Matrix(
                  [sp.sin(freq * x), -sp.cos(freq * x)]))()),
    Rewriting("ntk: b (s^d)^(1/(d-2))", "scaling.ntk_base", lambda: mutate(SC.ntk_base, lambda b, s, d: b * (s**d) ** (1 / (d - 2)))()),
    Rewriting("dynamic: ratio 1 + s (L - L0)/L0", "scaling.dynamic_continuity",
              lambda: mutate(SC.dynamic_continuity, lambda L, L0, s: 1 + s * (L - L0) / L0)()),
    Rewriting("translation: key shift c + 0", "rope.translation_invariance",
              lambda: mutate(RA.translation_symbolic_d, key_shift=RA.c + sp.Integer(0))()),
    Rewriting("backward, dense: (v^T J)^T", "rope.backward", lambda: mutate(RA.backward_dense, 4, "half", vjp=lambda J, v: (v.T * J).T)()),
    Rewriting("alibi: bias m (j - i)", "alibi.relative", lambda: mutate(AL.relative, lambda q, k: AL.slope * (k - q))()),
    Rewriting("t5: rel -(i - j)", "t5.relative", lambda: mutate(T5.relative, lambda q, k: -(q - k))()),
    Rewriting("normalized: p L^-1", "pedagogy.normalized_depends_on_length",
              lambda: mutate(PD.normalized_depends_on_length, lambda p, L: p * L**-1)()),
    Rewriting("derivation: radius sqrt(|x|^2)", "rope.derivation", lambda: mutate(RD.derive, radius=lambda r, m: sp.sqrt(r**2))()),
    Rewriting("wavelengths: last 2 pi b^(1 - 1/h)", "sinusoidal.wavelengths",
              lambda: mutate(PB.wavelengths, "interleaved", last=2 * sp.pi * (1 + PB._beta) ** (1 - 1 / PB._h))()),
    Rewriting("barbero: k = q gives A_11 + A_00", "barbero.prop_3_2",
              lambda: mutate(PB.gaussian_no_decay, independent=False, claimed=sp.Symbol("A_11", real=True)
                                           + sp.Symbol("A_00", real=True))()),
    Rewriting("slopes: ratio 2^(log2 start)", "alibi.slopes_geometric",
              lambda: mutate(AL.slopes_symbolic, ratio=lambda s: 2 ** (sp.log(s, 2)))()),
]


# ------------------------------------------------------------------------------------------------
# the generic statement perturbation


@dataclass(frozen=True)
class Hook:
    """One claimed ingredient: ``true(*placeholders)`` is it, ``run(f)`` proves with ``f`` in its place.

    ``kind`` says how ``run`` receives the ingredient: ``"call"`` (a function of the
    placeholders), ``"value"`` (the expression itself), ``"int"`` (a Python int).
    """

    claim: str
    name: str
    params: tuple[str, ...]
    true: Callable[..., Any]
    run: Callable[[Any], Any]
    kind: str = "call"


def _pair_hook_run(f):
    return mutate(SN.shift_matrix, "sin_cos", encoding=lambda order, x: f(x, SN.w))()


def _dot_hook_run(f):
    with mock.patch.object(SN, "pair", lambda order, x, freq=SN.w: f(x, freq)):
        return SN.dot_product()


_H_MR, _B_MR = sp.Symbol("h", integer=True, positive=True), sp.Symbol("b", positive=True)
_WB = 1 + PB._beta

HOOKS: list[Hook] = [
    Hook("sinusoidal.shift", "shift_matrix(encoding)", ("x", "w"), lambda x, w: SN.pair("sin_cos", x, w), _pair_hook_run),
    Hook("sinusoidal.dot_product", "dot_product with pair", ("x", "w"), lambda x, w: SN.pair("sin_cos", x, w),
         _dot_hook_run),
    Hook("rope.relative", "relative_symbolic_d(rhs_angle)", ("m", "n"), lambda m, n: (n - m) * R.THETA(R.I),
         lambda f: mutate(R.relative_symbolic_d, rhs_angle=f)()),
    Hook("rope.relative", "relative_block(blk)", ("x",), R.block, lambda f: mutate(R.relative_block, f)()),
    Hook("rope.group", "group_symbolic_d(rhs_angle)", ("m", "n"), lambda m, n: (m + n) * R.THETA(R.I),
         lambda f: mutate(RA.group_symbolic_d, rhs_angle=f)()),
    Hook("rope.group", "group_block(blk)", ("x",), R.block, lambda f: mutate(RA.group_block, f)()),
    Hook("rope.elementwise_form", "elementwise_form(4, half, rotate)", ("x0", "x1", "x2", "x3"),
         lambda *x: _ROTATE(sp.Matrix(x), "half"),
         lambda f: mutate(RA.elementwise_form, 4, "half", rotate=lambda x, layout: f(*x))()),
    Hook("rope.elementwise_form", "elementwise_form(4, interleaved, rotate)", ("x0", "x1", "x2", "x3"),
         lambda *x: _ROTATE(sp.Matrix(x), "interleaved"),
         lambda f: mutate(RA.elementwise_form, 4, "interleaved", rotate=lambda x, layout: f(*x))()),
    Hook("rope.elementwise_form", "elementwise_form(4, interleaved, freq)", ("i",), lambda i: R.frequency(i, 4),
         lambda f: mutate(RA.elementwise_form, 4, "interleaved", freq=f)()),
    Hook("rope.complex_form", "complex_form(sign)", (), lambda: sp.Integer(1), lambda v: mutate(RA.complex_form, sign=v)(), "int"),
    Hook("rope.layout_conjugacy", "layout_symbolic_d(index)", ("j", "h"), RA.half_index,
         lambda f: mutate(RA.layout_symbolic_d, index=f)()),
    Hook("rope.layout_conjugacy", "layout_conjugacy(4, perm)", (), lambda: R.permutation(4),
         lambda v: mutate(RA.layout_conjugacy, 4, perm=v)(), "value"),
    Hook("rope.weight_permutation", "weight_permutation(4, perm)", (), lambda: R.permutation(4),
         lambda v: mutate(RA.weight_permutation, 4, perm=v)(), "value"),
    Hook("rope.translation_invariance", "translation_symbolic_d(key_shift)", (), lambda: RA.c,
         lambda v: mutate(RA.translation_symbolic_d, key_shift=v)(), "value"),
    Hook("rope.backward", "backward_symbolic_d(rhs_sign)", (), lambda: sp.Integer(-1),
         lambda v: mutate(RA.backward_symbolic_d, rhs_sign=v)(), "int"),
    Hook("scaling.relative", "per_frequency_relative(freq)", ("i", "pos"), lambda i, pos: SC.G(i),
         lambda f: mutate(SC.per_frequency_relative, f)()),
    Hook("scaling.relative", "per_frequency_relative(power)", (), lambda: sp.Integer(2),
         lambda v: mutate(SC.per_frequency_relative, power=v)(), "int"),
    Hook("scaling.ntk_base", "ntk_base(claimed)", ("b", "s", "d"), lambda b, s, d: b * s ** (d / (d - 2)),
         lambda f: mutate(SC.ntk_base, f)()),
    Hook("scaling.dynamic_continuity", "dynamic_continuity(ratio)", ("L", "L0", "s"), SC.dynamic_ratio,
         lambda f: mutate(SC.dynamic_continuity, f)()),
    Hook("scaling.llama3_is_yarn", "llama3_is_yarn(alpha)", (), lambda: SC.low, lambda v: mutate(SC.llama3_is_yarn, v, SC.high)(),
         "value"),
    Hook("scaling.llama3_is_yarn", "llama3_is_yarn(beta)", (), lambda: SC.high, lambda v: mutate(SC.llama3_is_yarn, SC.low, v)(),
         "value"),
    Hook("scaling.llama3_continuity", "llama3_continuity(gamma)", ("w",), SC.llama3_gamma,
         lambda f: mutate(SC.llama3_continuity, f)()),
    Hook("scaling.proportional_limits", "proportional_limits(kept)", ("i", "k", "h"), lambda i, k, h: sp.StrictLessThan(i, k),
         lambda f: mutate(SC.proportional_limits, f)()),
    Hook("scaling.unit_factor", "unit_factor(blend)", ("g", "th", "s"), lambda g, th, s: (1 - g) * th / s + g * th,
         lambda f: mutate(SC.unit_factor, f)()),
    Hook("multidim.axial_relative", "axial_relative_symbolic(key_axis)", ("a",), lambda a: a,
         lambda f: mutate(MD.axial_relative_symbolic, key_axis=f)()),
    Hook("multidim.mrope_reduces", "mrope_reduces_symbolic(freq)", ("i", "c"), lambda i, c: R.frequency(i, 2 * _H_MR, _B_MR),
         lambda f: mutate(MD.mrope_reduces_symbolic, freq=f)()),
    Hook("xpos.relative", "relative_block(key_sign)", (), lambda: sp.Integer(-1),
         lambda v: mutate(XP.relative_block, key_sign=v)(), "int"),
    Hook("xpos.relative", "relative_symbolic_d(key_sign)", (), lambda: sp.Integer(-1),
         lambda v: mutate(XP.relative_symbolic_d, key_sign=v)(), "int"),
    Hook("alibi.relative", "relative(form)", ("q", "k"), AL.causal, lambda f: mutate(AL.relative, f)()),
    Hook("alibi.softmax_shift", "softmax_shift(shift)", ("k",), lambda k: AL.c, lambda f: mutate(AL.softmax_shift, shift=f)()),
    Hook("alibi.softmax_shift", "softmax_shift(f)", ("x",), sp.exp, lambda f: mutate(AL.softmax_shift, f=f)()),
    Hook("alibi.softmax_shift", "causal_equals_shifted(other)", ("q", "k"), AL.shifted,
         lambda f: mutate(AL.causal_equals_shifted, other=f)()),
    Hook("alibi.slopes_geometric", "slopes_symbolic(ratio)", ("s",), lambda s: s, lambda f: mutate(AL.slopes_symbolic, f)()),
    Hook("alibi.slopes_geometric", "slopes_exact(ratio)", ("s",), lambda s: s,
         lambda f: mutate(AL.slopes_exact, (1, 2, 4, 8, 16), ratio=f)()),
    Hook("t5.relative", "relative(rel)", ("q", "k"), lambda q, k: k - q, lambda f: mutate(T5.relative, f)()),
    Hook("t5.monotone", "monotone(offset)", (), lambda: T5.M, lambda v: mutate(T5.monotone, offset=v)(), "value"),
    Hook("t5.monotone", "monotone(exact)", ("n",), lambda n: n, lambda f: mutate(T5.monotone, exact=f)()),
    Hook("t5.exact_below_max_exact", "exact_below_max_exact(cut)", (), lambda: T5.M,
         lambda v: mutate(T5.exact_below_max_exact, cut=v)(), "value"),
    Hook("t5.exact_below_max_exact", "exact_below_max_exact(offset)", (), lambda: T5.M,
         lambda v: mutate(T5.exact_below_max_exact, offset=v)(), "value"),
    Hook("t5.exact_below_max_exact", "exact_below_max_exact(exact)", ("n",), lambda n: n,
         lambda f: mutate(T5.exact_below_max_exact, exact=f)()),
    Hook("t5.bucket_count", "bucket_count(cap)", (), lambda: T5.E - 1, lambda v: mutate(T5.bucket_count, cap=v)(), "value"),
    Hook("t5.bucket_count", "bucket_count(top)", (), lambda: T5.D, lambda v: mutate(T5.bucket_count, top=v)(), "value"),
    Hook("pedagogy.integer_unbounded", "integer_unbounded(encoding)", ("p",), lambda p: p,
         lambda f: mutate(PD.integer_unbounded, f)()),
    Hook("pedagogy.normalized_depends_on_length", "normalized_depends_on_length(encoding)", ("p", "L"),
         lambda p, L: p / L, lambda f: mutate(PD.normalized_depends_on_length, f)()),
    Hook("rope.derivation", "derive(radius)", ("r", "m"), lambda r, m: r, lambda f: mutate(RD.derive, radius=f)()),
    Hook("rope.derivation", "derive(initial)", (), lambda: sp.Integer(0), lambda v: mutate(RD.derive, initial=v)(), "value"),
    Hook("rope.decay_abel", "abel_symbolic_d(shift)", (), lambda: sp.Integer(1),
         lambda v: mutate(DC.abel_symbolic_d, shift=v)(), "int"),
    Hook("rope.decay_abel", "abel_expanded(2, shift)", (), lambda: sp.Integer(1),
         lambda v: mutate(DC.abel_expanded, 2, shift=v)(), "int"),
    Hook("sinusoidal.wavelengths", "wavelengths(interleaved, last)", (),
         lambda: 2 * sp.pi * _WB ** ((2 * PB._h - 2) / (2 * PB._h)),
         lambda v: mutate(PB.wavelengths, "interleaved", last=v)(), "value"),
    Hook("sinusoidal.wavelengths", "wavelengths(tensor2tensor, last)", (), lambda: 2 * sp.pi * _WB,
         lambda v: mutate(PB.wavelengths, "tensor2tensor", last=v)(), "value"),
    Hook("barbero.prop_3_2", "gaussian_no_decay(k = q, claimed)", (),
         lambda: sp.Symbol("A_00", real=True) + sp.Symbol("A_11", real=True),
         lambda v: mutate(PB.gaussian_no_decay, independent=False, claimed=v)(), "value"),
]

_RELATIONS = {sp.StrictLessThan: sp.LessThan, sp.LessThan: sp.StrictLessThan,
              sp.StrictGreaterThan: sp.GreaterThan, sp.GreaterThan: sp.StrictGreaterThan}


def _replace_at(expr: sp.Basic, path: tuple[int, ...], new: sp.Basic) -> sp.Basic:
    if not path:
        return new
    args = list(expr.args)
    args[path[0]] = _replace_at(args[path[0]], path[1:], new)
    return expr.func(*args)


def _sites(expr: sp.Basic, path: tuple[int, ...] = ()) -> Iterator[tuple[tuple[int, ...], sp.Basic]]:
    yield path, expr
    if isinstance(expr, (sp.Indexed, sp.Idx)) or not isinstance(expr, sp.Basic):
        return
    for i, a in enumerate(expr.args):
        yield from _sites(a, path + (i,))


def _perturbations(node: sp.Basic, placeholders: tuple[sp.Symbol, ...]) -> Iterator[tuple[str, sp.Basic]]:
    """(operator, replacement) for one node."""
    if isinstance(node, sp.Symbol):
        yield "symbol + 1", node + 1
        yield "symbol -> 0", sp.S.Zero
        for other in placeholders:
            if other != node:
                yield "swap argument", other
    elif isinstance(node, (sp.sin, sp.cos)):
        yield "sin <-> cos", (sp.cos if isinstance(node, sp.sin) else sp.sin)(*node.args)
    elif isinstance(node, sp.Number) and node.is_finite:
        yield "number + 1", node + 1
    if isinstance(node, sp.Add):
        for i, a in enumerate(node.args):
            rest = node.args[:i] + node.args[i + 1:]
            yield "drop term", sp.Add(*rest)
            yield "negate term", sp.Add(*rest, -a)
    if isinstance(node, sp.Mul):
        for i, a in enumerate(node.args):
            if not a.is_Number:
                yield "drop factor", sp.Mul(*(node.args[:i] + node.args[i + 1:]))
    if isinstance(node, sp.Pow):
        yield "negate exponent", sp.Pow(node.base, -node.exp)
    if type(node) in _RELATIONS:
        yield "loosen/tighten relation", _RELATIONS[type(node)](*node.args)
        yield "reverse relation", type(node)(node.args[1], node.args[0])


def _mutations(value: Any, placeholders: tuple[sp.Symbol, ...]) -> list[tuple[str, Any]]:
    """Every single-site perturbation of ``value`` (expression or matrix), named, distinct, != value."""
    out: list[tuple[str, Any]] = []
    seen = set()

    def keep(name, new):
        key = sp.srepr(new)
        if key in seen:
            return
        seen.add(key)
        out.append((name, new))

    seen.add(sp.srepr(value if not isinstance(value, sp.MatrixBase) else sp.ImmutableMatrix(value)))
    if isinstance(value, sp.MatrixBase):
        M = sp.ImmutableMatrix(value)
        for r in range(M.rows - 1):
            rows = list(range(M.rows))
            rows[r], rows[r + 1] = rows[r + 1], rows[r]
            keep(f"swap rows {r}, {r + 1}", M.extract(rows, list(range(M.cols))))
        for idx in range(len(M)):
            for op, new_entry in _entry_mutations(M[idx], placeholders):
                flat = list(M)
                flat[idx] = new_entry
                keep(f"entry {divmod(idx, M.cols)}: {op}", sp.ImmutableMatrix(M.rows, M.cols, flat))
        return out
    expr = sp.sympify(value)
    if not isinstance(expr, sp.Add) and not isinstance(expr, sp.Rel) and expr != 0:
        keep(f"negate {sp.sstr(expr)}", -expr)
    for op, new in _entry_mutations(expr, placeholders):
        keep(op, new)
    return out


def _entry_mutations(expr: sp.Basic, placeholders) -> Iterator[tuple[str, sp.Basic]]:
    for path, node in _sites(expr):
        for op, new in _perturbations(node, placeholders):
            try:
                mutated = _replace_at(expr, path, new)
            except (TypeError, ValueError):
                continue
            if mutated != expr:
                yield f"{op}: {sp.sstr(node)} -> {sp.sstr(new)}", mutated


def _as_ingredient(hook: Hook, value: Any, placeholders: tuple[sp.Symbol, ...]) -> Any:
    if hook.kind == "int":
        v = sp.sympify(value)
        return int(v) if v.is_Integer else v
    if hook.kind == "value":
        return sp.Matrix(value) if isinstance(value, sp.MatrixBase) else value

    def ingredient(*args):
        sub = dict(zip(placeholders, (sp.sympify(a) for a in args)))
        out = value.xreplace(sub) if sub else value
        return sp.Matrix(out) if isinstance(out, sp.MatrixBase) else out

    return ingredient


def _template(hook: Hook) -> tuple[Any, tuple[sp.Symbol, ...]]:
    ph = tuple(sp.Dummy(p) for p in hook.params)
    value = hook.true(*ph)
    if isinstance(value, sp.MatrixBase):
        value = sp.ImmutableMatrix(value)
    return value, ph


def auto_mutants(hooks: list[Hook] | None = None) -> list[Mutant]:
    """The generic statement perturbations of every hook (and each hook's unmutated run, checked separately)."""
    out = []
    for hook in hooks if hooks is not None else HOOKS:
        value, ph = _template(hook)
        for op, new in _mutations(value, ph):
            ingredient = _as_ingredient(hook, new, ph)
            label = op.replace("_", "")
            out.append(Mutant(f"{hook.claim} {hook.name}: {label}", hook.claim, "auto",
                              (lambda h=hook, g=ingredient: h.run(g))))
    return out


def unmutated(hook: Hook) -> Callable[[], Any]:
    value, ph = _template(hook)
    ingredient = _as_ingredient(hook, value, ph)
    return lambda: hook.run(ingredient)


_ANY_OF_DIFFERENCE = "still a function of the difference of the positions: the statement stays true"
_CONSTANT_SHIFT = "a shift by one constant for every logit: softmax is invariant to it, the statement stays true"

#: Automatic perturbations that leave the statement true, with the reason (they must prove).
EQUIVALENT: dict[str, str] = {
    "sinusoidal.shift shift_matrix(encoding): swap rows 0, 1":
        "(cos, sin) is the other order of the pair, which the claim covers: its shift is a rotation too",
    "sinusoidal.dot_product dot_product with pair: swap rows 0, 1":
        "a dot product does not depend on the order of the components",
    "scaling.unit_factor unit_factor(blend): drop factor: th*(1 - g)/s -> th*(1 - g)":
        "the claim is the blend at s = 1, where theta/s = theta",
    "scaling.unit_factor unit_factor(blend): negate exponent: 1/s -> s":
        "the claim is the blend at s = 1, where theta s = theta/s = theta",
    "alibi.relative relative(form): negate -m*(-k + q)": _ANY_OF_DIFFERENCE + " (m (i - j))",
    "alibi.relative relative(form): drop factor: -m*(-k + q) -> k - q": _ANY_OF_DIFFERENCE + " (j - i)",
    "alibi.relative relative(form): drop factor: -m*(-k + q) -> -m": "a constant bias is (trivially) relative",
    "alibi.relative relative(form): number + 1: -1 -> 0": "the zero bias is (trivially) relative",
    "alibi.relative relative(form): symbol + 1: m -> m + 1": _ANY_OF_DIFFERENCE + " (another slope)",
    "alibi.relative relative(form): symbol + 1: k -> k + 1": _ANY_OF_DIFFERENCE + " (plus a constant)",
    "alibi.relative relative(form): symbol + 1: q -> q + 1": _ANY_OF_DIFFERENCE + " (plus a constant)",
    "alibi.softmax_shift softmax_shift(shift): negate c": _CONSTANT_SHIFT,
    "alibi.softmax_shift softmax_shift(shift): symbol + 1: c -> c + 1": _CONSTANT_SHIFT,
    "alibi.softmax_shift softmax_shift(shift): symbol -> 0: c -> 0": _CONSTANT_SHIFT + " (zero)",
    "alibi.softmax_shift softmax_shift(f): symbol + 1: x -> x + 1":
        "exp(x + 1) = e exp(x): the factor e cancels from every ratio, the normalisation is still shift-invariant",
    "alibi.softmax_shift softmax_shift(f): symbol -> 0: x -> 0":
        "f = 1 normalises every row to 1/L whatever the logits: (trivially) shift-invariant",
    "t5.relative relative(rel): symbol + 1: q -> q + 1": _ANY_OF_DIFFERENCE + " (k - q - 1)",
    "t5.relative relative(rel): symbol + 1: k -> k + 1": _ANY_OF_DIFFERENCE + " (k - q + 1)",
    "t5.relative relative(rel): swap argument: q -> k": "b(0) for every pair: a constant is (trivially) relative",
    "pedagogy.integer_unbounded integer_unbounded(encoding): symbol + 1: p -> p + 1":
        "p + 1 is unbounded too: the statement stays true",
}

#: Mutants on which a derivation raises something other than ProofFailure (reported, counted as neither).
KNOWN_ERRORS: dict[str, str] = {}


# ------------------------------------------------------------------------------------------------
# running


def run_all(mutants: list[Mutant], out=sys.stdout, timeout: int = 60) -> dict[str, list]:
    results: dict[str, list] = {"killed": [], "survived": [], "error": [], "known-error": [], "timeout": [],
                                "equivalent": [], "equivalent-not-proved": []}
    for mu in mutants:
        t0 = time.perf_counter()
        status, detail = decide(mu, timeout)
        if status == "error" and mu.name in KNOWN_ERRORS:
            status, detail = "known-error", KNOWN_ERRORS[mu.name]
        if mu.name in EQUIVALENT:
            status = "equivalent" if status == "survived" else "equivalent-not-proved"
            detail = EQUIVALENT[mu.name] if status == "equivalent" else detail
        results[status].append((mu, detail))
        print(f"{status:21s} {time.perf_counter() - t0:6.2f}s  [{mu.claim}] {mu.name}  {detail[:110]}", file=out,
              flush=True)
    return results


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.mutation.symbolic", description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default=None, help="run the mutants whose name or claim contains this")
    ap.add_argument("--no-auto", action="store_true", help="the hand-written catalogue only")
    ap.add_argument("--timeout", type=int, default=60, help="seconds per mutant")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    bad = 0
    print("== unmutated hooks and true rewritings (must prove)")
    for name, run in [(f"[{h.claim}] {h.name} unmutated", unmutated(h)) for h in HOOKS] + [
            (f"[{r.claim}] {r.name}", r.run) for r in REWRITINGS]:
        if args.only and args.only not in name:
            continue
        status, detail = decide(Mutant(name, "", "", run), args.timeout)
        ok = status == "survived"
        bad += not ok
        print(f"{'proved' if ok else 'NOT PROVED (' + status + ')':21s} {name}  {detail[:120]}", flush=True)
    mutants = CATALOGUE + ([] if args.no_auto else auto_mutants())
    if args.only:
        mutants = [m for m in mutants if args.only in m.name or args.only in m.claim]
    print(f"== {len(mutants)} mutants")
    res = run_all(mutants, timeout=args.timeout)
    from pemath.claims import all_claims

    covered = {m.claim for m in CATALOGUE}
    missing = [c.id for c in all_claims() if c.id not in covered]
    counted = len(res["killed"]) + len(res["survived"]) + len(res["timeout"])
    rate = len(res["killed"]) / counted if counted else 1.0
    print("\n" + ", ".join(f"{len(v)} {k}" for k, v in res.items()))
    for key in ("survived", "error", "known-error", "timeout", "equivalent-not-proved"):
        for mu, detail in res[key]:
            print(f"{key.upper()}: [{mu.claim}] {mu.name}  {detail}")
    if missing:
        print(f"claims without a hand-written mutant: {', '.join(missing)}")
    print(f"symbolic kill rate: {100 * rate:.2f} % ({len(res['killed'])} of {counted} mutants; "
          f"{len(res['equivalent'])} justified equivalents proved, "
          f"{len(res['error']) + len(res['known-error'])} errors, of them {len(res['known-error'])} known) in "
          f"{time.perf_counter() - t0:.0f} s")
    failed = bad or res["survived"] or res["error"] or res["timeout"] or res["equivalent-not-proved"] or missing
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
