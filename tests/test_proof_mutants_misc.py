"""Each proof of the multidim, xpos, alibi, t5 and pedagogy families can fail.

Wrong statements (the bugs of the field: the wrong axis pairing, xPos with one sign for
queries and keys, ALiBi's ratio squared, T5's max_exact off by one, a Gray code for the
binary encoding, ...) are not proved; and the numeric checks, which call pemath's real
implementations, reject a wrong implementation.
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

from pemath.claims import get, run_claim
from tests.mutation._patch import mutate
from pemath.symbolic import ProofFailure
from pemath.symbolic import alibi as A
from pemath.symbolic import multidim as MD
from pemath.symbolic import pedagogy as PD
from pemath.symbolic import t5 as T
from pemath.symbolic import xpos as X
from ._claim_checks import check_of, rejects


def seed_block(x):
    """seeds/002's rotary block without its lower sin entry."""
    return sp.Matrix([[sp.cos(x), -sp.sin(x)], [0, sp.cos(x)]])


_BITS = PD.binary_bits  # the true bits, captured before a patch replaces them


def gray_bits(p, d):
    """The reflected Gray code: one bit flips per step (continuous, unlike binary)."""
    return _BITS(p ^ (p >> 1), d)


def test_true_statements_are_proved():
    MD.axial_relative_symbolic()
    MD.axial_relative_expanded((2, 4), "half")
    MD.mrope_reduces_symbolic()
    MD.mrope_reduces_expanded((2, 1, 1), "interleaved", interleaved=True)
    X.relative_block()
    X.relative_symbolic_d()
    X.relative_expanded(4, "half")
    A.relative()
    A.softmax_shift()
    A.softmax_shift_symbolic_n()
    A.causal_equals_shifted()
    A.slopes_exact()
    A.slopes_symbolic()
    T.relative()
    T.exact_below_max_exact()
    T.monotone()
    assert T.bucket_count().result["counts"][(32, 128, True)] == 31
    PD.integer_unbounded()
    PD.normalized_depends_on_length()
    PD.binary_bounded_unique()
    PD.binary_jump()
    PD.sinusoid_step()


_SECTION_START, _SECTION_SIZE = (0, 2, 3), (2, 1, 1)
_b = sp.Symbol("b", positive=True)

MUTANTS = [
    # axial: the key's group a rotated by another axis' coordinate
    pytest.param(lambda: mutate(MD.axial_relative_symbolic, key_axis=lambda a: a + 1)(), id="axial-wrong-axis-pairing"),
    pytest.param(lambda: mutate(MD.axial_relative_expanded, (4, 4), "half", key_perm=[1, 0])(), id="axial-axes-swapped"),
    pytest.param(lambda: mutate(MD.axial_relative_expanded, (2, 2, 2), "interleaved", key_perm=[1, 2, 0])(),
                 id="axial-axes-cycled"),
    pytest.param(lambda: mutate(MD.axial_relative_symbolic, blk=seed_block)(), id="axial-seed-block"),
    # M-RoPE with frequencies restarted in each section (axial-style) does not reduce to RoPE
    pytest.param(lambda: mutate(MD.mrope_reduces_symbolic, freq=lambda i, c: MD.THETA_AJ(c, i))(), id="mrope-per-component-freq"),
    pytest.param(lambda: mutate(MD.mrope_reduces_expanded, 
        (2, 1, 1), "half",
        freq=lambda i, c: _b ** (-2 * sp.Integer(i - _SECTION_START[c]) / (2 * _SECTION_SIZE[c])))(),
        id="mrope-per-section-freq"),
    # xPos with the same sign of exponent for queries and keys: not relative
    pytest.param(lambda: mutate(X.relative_block, key_sign=+1)(), id="xpos-same-sign"),
    pytest.param(lambda: mutate(X.relative_symbolic_d, key_sign=+1)(), id="xpos-same-sign-symbolic-d"),
    pytest.param(lambda: mutate(X.relative_expanded, 4, "interleaved", key_sign=+1)(), id="xpos-same-sign-expanded"),
    pytest.param(lambda: mutate(X.relative_block, blk=seed_block)(), id="xpos-seed-block"),
    # ALiBi
    pytest.param(lambda: mutate(A.relative, A.shifted)(), id="alibi-shifted-is-not-relative"),
    pytest.param(lambda: mutate(A.softmax_shift, shift=lambda k: A.c * k)(), id="softmax-shift-varies-with-key"),
    pytest.param(lambda: mutate(A.softmax_shift, f=lambda v: v)(), id="plain-normalisation-not-invariant"),
    pytest.param(lambda: mutate(A.softmax_shift_symbolic_n, f=lambda v: v**2)(), id="softmax-n-squares"),
    pytest.param(lambda: mutate(A.causal_equals_shifted, other=lambda q, k: A.slope * k * k)(), id="alibi-quadratic-bias"),
    pytest.param(lambda: mutate(A.slopes_exact, ratio=lambda s: s**2)(), id="slopes-ratio-start-squared"),
    pytest.param(lambda: mutate(A.slopes_exact, (1024,), ratio=lambda s: s**2)(), id="slopes-ratio-squared-1024"),
    pytest.param(lambda: mutate(A.slopes_exact, ratio=lambda s: 2 * s)(), id="slopes-ratio-doubled"),
    pytest.param(lambda: mutate(A.slopes_symbolic, ratio=lambda s: s**2)(), id="slopes-symbolic-ratio-squared"),
    # T5
    pytest.param(lambda: mutate(T.relative, lambda q, k: k)(), id="t5-absolute-key-position"),
    pytest.param(lambda: mutate(T.exact_below_max_exact, max_exact=lambda h: h // 2 + 1)(), id="t5-max-exact-plus-one"),
    pytest.param(lambda: mutate(T.exact_below_max_exact, max_exact=lambda h: h // 2 - 1)(), id="t5-max-exact-minus-one"),
    pytest.param(lambda: mutate(T.exact_below_max_exact, ref=T.M + 1)(), id="t5-log-reference-off-by-one"),
    pytest.param(lambda: mutate(T.exact_below_max_exact, exact=lambda n: n + 1)(), id="t5-exact-branch-shifted"),
    pytest.param(lambda: mutate(T.monotone, offset=T.M - 2)(), id="t5-log-offset-too-low"),
    pytest.param(lambda: mutate(T.monotone, log=lambda x: 1 / x)(), id="t5-decreasing-index"),
    pytest.param(lambda: mutate(T.bucket_count, cap=T.E)(), id="t5-cap-one-too-high"),
    pytest.param(lambda: mutate(T.bucket_count, top=T.D + 1)(), id="t5-max-distance-off-by-one"),
    pytest.param(lambda: mutate(T.bucket_count, exact=lambda n: n - 1)(), id="t5-distance-one-in-bucket-zero"),
    # pedagogy
    pytest.param(lambda: mutate(PD.integer_unbounded, lambda p: p / (p + 1))(), id="integer-squashed"),
    pytest.param(lambda: mutate(PD.integer_unbounded, lambda p: sp.Integer(7))(), id="integer-constant"),
    pytest.param(lambda: mutate(PD.normalized_depends_on_length, lambda p, L: p / 1024)(), id="normalized-fixed-length"),
    pytest.param(lambda: mutate(PD.binary_jump, bits=gray_bits)(), id="gray-code-does-not-jump"),
    pytest.param(lambda: mutate(PD.binary_bounded_unique, bits=lambda p, d: _BITS(p, d - 1) + [0])(),
                 id="binary-top-bit-dropped"),
    pytest.param(lambda: mutate(PD.binary_bounded_unique, bits=lambda p, d: [2 * v for v in _BITS(p, d)])(),
                 id="binary-entries-not-bits"),
]


@pytest.mark.parametrize("mutant", MUTANTS)
def test_mutants_are_not_proved(mutant):
    with pytest.raises(ProofFailure):
        mutant()


def test_t5_bucket_count_states_the_encoder_count():
    """Bidirectional T5 uses 2 floor(num_buckets / 2) - 1 buckets; the hypothesis E <= M ln(D/M) is sufficient, not
    necessary (issue 22: the title said num_buckets - 1, false for 33 buckets, and "false without it")."""
    out = run_claim(get("t5.bucket_count"), checks=False)
    assert out.status == "proved"
    texts = [s.text for s in out.derivation.steps if s.status == "proved"]
    assert any(t.startswith("32/128 bidirectional (pemath.t5.bucket): a witness r for each of the 31 buckets")
               for t in texts)
    assert any(t.startswith("32/128 unidirectional (pemath.t5.bucket): a witness r for each of the 32 buckets")
               for t in texts)
    assert any(t.startswith("33/128 bidirectional (pemath.t5.bucket): a witness r for each of the 31 buckets")
               for t in texts)  # an odd count: 2 floor(33/2) - 1 = 31, not 32
    assert any(t.startswith("32/20 bidirectional: a witness r for each of the 31 buckets") for t in texts)
    # the hypothesis fails there, and still every bucket is used: sufficient, not necessary


def test_families_registered_and_decided():
    ids = {c: run_claim(get(c)).status for c in (
        "multidim.axial_relative", "multidim.mrope_reduces", "xpos.relative", "alibi.relative",
        "alibi.softmax_shift", "alibi.slopes_geometric", "t5.relative", "t5.monotone",
        "t5.exact_below_max_exact", "pedagogy.integer_unbounded", "pedagogy.normalized_depends_on_length",
        "pedagogy.binary_bounded_unique_discontinuous")}
    assert set(ids.values()) == {"proved"}, ids


# ----------------------------------------------------------------------------------------------
# The checks exercise pemath's real implementations: a wrong implementation fails them.
# ----------------------------------------------------------------------------------------------




def test_axial_check_rejects_swapped_axes(monkeypatch, no_shrink):
    from pemath import rope

    real = rope.apply_axial

    def swapped(x, positions, **kw):
        p = np.asarray(positions)
        return real(x, p[..., ::-1] if p.shape[-1] > 1 else p + 1, **kw)

    monkeypatch.setattr(rope, "apply_axial", swapped)
    rejects(check_of("multidim.axial_relative", "numeric"))


def test_mrope_check_rejects_per_section_frequencies(monkeypatch, no_shrink):
    from pemath import rope

    real = rope.apply_mrope

    def wrong(x, positions, *, mrope_section, **kw):
        return real(x, positions, mrope_section=mrope_section, base=kw.pop("base", 10000.0) * 2, **kw)

    monkeypatch.setattr(rope, "apply_mrope", wrong)
    rejects(check_of("multidim.mrope_reduces", "numeric"))


def test_xpos_check_rejects_same_sign_scales(monkeypatch, no_shrink):
    from pemath.rope import xpos

    real = xpos.apply
    monkeypatch.setattr(xpos, "apply", lambda x, p, *, role, **kw: real(x, p, role="query", **kw))
    rejects(check_of("xpos.relative", "numeric"))


def test_slopes_checks_reject_squared_ratio(monkeypatch, no_shrink):
    from pemath import alibi

    def squared(n):
        start = 2.0 ** (-8.0 / n)
        return np.array([start * (start * start) ** k for k in range(n)])

    monkeypatch.setattr(alibi, "slopes", squared)
    for name in ("numeric", "mpmath"):
        rejects(check_of("alibi.slopes_geometric", name))


def test_t5_checks_reject_max_exact_off_by_one(monkeypatch, no_shrink):
    from pemath import t5
    from pemath.claims import t5 as claims_t5

    real = t5.bucket

    def off_by_one(r, *, bidirectional=True, num_buckets=32, max_distance=128, exact=False):
        out = np.asarray(real(r, bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance,
                              exact=exact))
        h = num_buckets // 2 if bidirectional else num_buckets
        n = np.abs(np.asarray(r)) if bidirectional else np.maximum(-np.asarray(r), 0)
        return np.where(n == h // 2 + 1, out + 1, out)  # as if the exact branch ran one distance further

    monkeypatch.setattr(t5, "bucket", off_by_one)
    claims_t5._buckets.cache_clear()
    try:
        rejects(check_of("t5.exact_below_max_exact", "numeric"))
        rejects(check_of("t5.monotone", "mpmath"))
    finally:
        claims_t5._buckets.cache_clear()


def test_binary_check_rejects_gray_code(monkeypatch, no_shrink):
    from pemath import pedagogy

    real = pedagogy.binary
    monkeypatch.setattr(pedagogy, "binary", lambda p, d: real(np.asarray(p) ^ (np.asarray(p) >> 1), d))
    rejects(check_of("pedagogy.binary_bounded_unique_discontinuous", "numeric"))
