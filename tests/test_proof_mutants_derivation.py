"""Each proof of the rope_derivation, rope_decay and published families can fail.

Wrong statements are not proved (the recurrence solved from the wrong initial value, an
m-dependent increment, a position-dependent radius, the Abel form with S_i for S_{i+1},
Vaswani's end point for the paper's formula, E = 0 for k = q), the published verdicts
flip where they should (PI's bound with 4 instead of 8), and the numeric checks, which
call pemath's real implementations, reject wrong implementations.
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

from pemath.claims import CheckFailure, get, run_claim
from tests.mutation._patch import mutate
from pemath.symbolic import ProofFailure
from pemath.symbolic import decay as D
from pemath.symbolic import published as P
from pemath.symbolic import rope_derivation as RD
from ._claim_checks import check_of, rejects


def test_true_statements_are_proved():
    d = RD.derive()
    assert sp.simplify(d.result["phi"] - RD.m * RD.theta) == 0
    D.abel_symbolic_d()
    for pairs in (1, 2, 3):
        D.abel_expanded(pairs)
    D.bound()
    for conv in ("interleaved", "tensor2tensor"):
        P.wavelengths(conv)
    P.gaussian_no_decay()
    P.gaussian_no_decay(independent=False)


@pytest.mark.parametrize(
    "mutant",
    [
        pytest.param(lambda: mutate(RD.derive, initial=RD.theta)(), id="recurrence-initial-value-theta"),
        pytest.param(lambda: mutate(RD.derive, initial=1)(), id="recurrence-initial-value-1"),
        pytest.param(lambda: mutate(RD.derive, step=RD.m * RD.theta)(), id="increment-depends-on-m"),
        pytest.param(lambda: mutate(RD.derive, radius=lambda r, m: r * (1 + m**2))(), id="radius-grows-with-position"),
        pytest.param(lambda: mutate(RD.derive, radius=lambda r, m: r**2)(), id="radius-squared"),
    ],
)
def test_derivation_mutants_are_not_proved(mutant):
    with pytest.raises(ProofFailure):
        mutant()


@pytest.mark.parametrize(
    "mutant",
    [
        pytest.param(lambda: mutate(D.abel_symbolic_d, shift=0)(), id="symbolic-d-S_i-for-S_i+1"),
        pytest.param(lambda: mutate(D.abel_symbolic_d, shift=2)(), id="symbolic-d-S_i+2"),
        pytest.param(lambda: mutate(D.abel_expanded, 4, shift=0)(), id="d8-S_i-for-S_i+1"),
        pytest.param(lambda: mutate(D.abel_expanded, 2, shift=2)(), id="d4-S_i+2"),
    ],
)
def test_abel_mutants_are_not_proved(mutant):
    with pytest.raises(ProofFailure):
        mutant()


def test_wavelength_end_point_mutants_are_not_proved():
    b = 1 + P._beta
    with pytest.raises(ProofFailure):  # Vaswani's end point for the paper's formula
        mutate(P.wavelengths, "interleaved", last=2 * sp.pi * b)()
    with pytest.raises(ProofFailure):  # the paper's end point for tensor2tensor's formula
        mutate(P.wavelengths, "tensor2tensor", last=2 * sp.pi * b ** ((2 * P._h - 2) / (2 * P._h)))()
    mutate(P.wavelengths, "tensor2tensor", last=2 * sp.pi * b)()  # where 2 pi b is right


def test_expectation_with_k_equal_q_is_not_zero():
    with pytest.raises(ProofFailure):
        mutate(P.gaussian_no_decay, independent=False, claimed=0)()
    with pytest.raises(ProofFailure):
        mutate(P.gaussian_no_decay, claimed=sp.Symbol("A_00"))()


def test_pi_bound_verdicts():
    v8 = P.pi_interpolation_bound(128, 10000, 8)  # PI's Theorem 2.1: refuted on the unit grid
    assert not v8.holds and "s_2 = 1" in v8.counterexample
    assert v8.data["error"].a > v8.data["bound"].b
    # With 4 instead of 8 the bound is twice as large: it holds at d = 128 (d >= 4 ln c, the proof's own
    # steps give d/(8 ln c) + 1/2 <= d/(4 ln c)) but not at d = 8, where sum theta^2 / 2 = 0.505 > 8/(4 ln c).
    assert P.pi_interpolation_bound(128, 10000, 4).holds
    assert not P.pi_interpolation_bound(8, 10000, 4).holds
    # for huge d the unit interval no longer violates PI's bound, but a shorter one still does
    big = P.pi_interpolation_bound(4096, 10000, 8)
    assert not big.holds and big.data["length"] < 1


def test_decay_verdict_needs_an_increase():
    from pemath.claims.rope_decay import decay_verdict

    v = decay_verdict(64)
    assert not v.holds and v.derivation.result["r0"] == 11
    with pytest.raises(ProofFailure):  # d = 2: B(r) = 1 for every r, so no counterexample exists
        decay_verdict(2)


def test_family_verdicts():
    for cid, status in [("rope.derivation", "proved"), ("rope.decay_abel", "proved"),
                        ("roformer.long_term_decay", "imprecise"), ("sinusoidal.wavelengths", "proved"),
                        ("vaswani.wavelengths", "imprecise"), ("pi.theorem_2_1", "refuted"),
                        ("barbero.prop_3_2", "proved")]:
        out = run_claim(get(cid), checks=False)
        assert out.status == status, (cid, out.message)
        assert get(cid).references


# ----------------------------------------------------------------------------------------------
# the numeric checks reject wrong implementations
# ----------------------------------------------------------------------------------------------




def test_derivation_checks_reject_the_inverse_rotation(monkeypatch, no_shrink):
    from pemath import rope

    real = rope.apply
    monkeypatch.setattr(rope, "apply", lambda x, p, **kw: real(x, p, **{**kw, "inverse": True}))
    rejects(check_of("rope.derivation", "numeric"))
    rejects(check_of("rope.derivation", "mpmath"))


def test_abel_checks_reject_a_frequency_off_by_one(monkeypatch, no_shrink):
    from pemath import rope

    real = rope.inv_freq
    monkeypatch.setattr(rope, "inv_freq", lambda dim, **kw: np.roll(real(dim, **kw), 1))
    rejects(check_of("rope.decay_abel", "numeric"))


def test_decay_checks_reject_partial_sums_from_one(monkeypatch):
    from pemath import rope

    real = rope.long_term_decay

    def skips_first(distances, dim, **kw):  # S_j = sum_{0 < i < j}: drops theta_0
        full = np.asarray(real(distances, dim, **kw))
        return full - np.cos(np.asarray(distances, dtype=float) * 0) / (dim // 2)

    monkeypatch.setattr(rope, "long_term_decay", skips_first)
    rejects(check_of("roformer.long_term_decay", "mpmath"))
    rejects(check_of("roformer.long_term_decay", "numeric"))


def test_wavelength_checks_reject_the_other_convention(monkeypatch, no_shrink):
    from pemath import sinusoidal

    real = sinusoidal.wavelengths
    swap = {"interleaved": "tensor2tensor", "tensor2tensor": "interleaved"}

    def swapped(dim, *, base=10000.0, convention=None):
        if dim < 4:
            return real(dim, base=base, convention=convention)
        return real(dim, base=base, convention=swap[convention])

    monkeypatch.setattr(sinusoidal, "wavelengths", swapped)
    # the proof itself now decides that the shipped wavelengths are the formula's (issue 22): it fails first
    with pytest.raises(ProofFailure, match="pemath.sinusoidal.wavelengths"):
        P.wavelengths("interleaved")
    for cid, kind in (("sinusoidal.wavelengths", "numeric"), ("sinusoidal.wavelengths", "mpmath"),
                      ("vaswani.wavelengths", "numeric")):
        with pytest.raises((CheckFailure, ProofFailure)):
            check_of(cid, kind)()


def test_pi_and_barbero_checks_reject_a_wrong_rotation(monkeypatch, no_shrink):
    from pemath import rope

    real = rope.apply
    # rotating by twice the angle: the interpolation error quadruples, the k = q mean is tr R^{2r}
    monkeypatch.setattr(rope, "apply", lambda x, p, **kw: real(real(x, p, **kw), p, **kw))
    rejects(check_of("pi.theorem_2_1", "mpmath"))
    rejects(check_of("barbero.prop_3_2", "monte-carlo"))
