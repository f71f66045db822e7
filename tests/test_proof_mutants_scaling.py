"""Each scaling proof can fail, and so can each numeric check.

Symbolic mutants are the bugs of the field fed to the derivations: a frequency that
moves with the position, the attention factor counted once, the NTK exponent
d/(d-1), the dynamic ratio without its -(s-1), Llama's factors swapped, p-RoPE
keeping its lowest frequencies. Numeric mutants patch a wrong rule into the real
pemath.scaling classes and show the claims' checks catch it.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp

from pemath import scaling
from pemath.claims import CheckFailure, get, run_claim
from tests.mutation._patch import mutate
from pemath.symbolic import ProofFailure
from pemath.symbolic import scaling as S

DERIVATIONS = [
    S.per_frequency_relative,
    S.ntk_base,
    S.dynamic_continuity,
    S.llama3_is_yarn,
    S.llama3_continuity,
    S.proportional_limits,
    S.unit_factor,
]


@pytest.mark.parametrize("derivation", DERIVATIONS, ids=lambda f: f.__name__)
def test_true_statements_are_proved(derivation):
    der = derivation()
    assert all(step.status in ("info", "proved") for step in der.steps)
    assert any(step.status == "proved" for step in der.steps)


def test_ntk_solution_is_the_published_base():
    b, s, D = S.ntk_base().result["symbols"]
    assert sp.simplify(S.ntk_base().result["base"].subs({b: 10, s: 4, D: 6}) - 10 * 4 ** sp.Rational(3, 2)) == 0


def _dynamic_at_position(name):
    # HF's seq_len is max(position) + 1; a "dynamic" rule fed each token's own position breaks relativity
    return {name: S.variant_frequencies()["DynamicNTK"].subs(S.seq_len, S.m + 1)}


@pytest.mark.parametrize(
    "mutant",
    [
        pytest.param(lambda: mutate(S.per_frequency_relative, lambda i, pos: S.G(i) * (1 + pos / S.L0))(),
                     id="frequency-moves-with-position"),
        pytest.param(lambda: mutate(S.per_frequency_relative, power=1)(), id="attention-factor-counted-once"),
        pytest.param(lambda: mutate(S.per_frequency_relative, power=0)(), id="attention-factor-forgotten"),
        pytest.param(lambda: mutate(S.per_frequency_relative, variants=_dynamic_at_position("dynamic-per-token"))(),
                     id="variant-driven-by-position"),
        pytest.param(lambda: mutate(S.per_frequency_relative, 
            variants={"LongRoPE-per-token": S.frequency(S.I, 2 * S.H, S.b) / sp.IndexedBase("f")[S.n]})(),
            id="longrope-factor-indexed-by-position"),
        pytest.param(lambda: mutate(S.ntk_base, lambda b, s, d: b * s ** (d / (d - 1)))(), id="ntk-exponent-d/(d-1)"),
        pytest.param(lambda: mutate(S.ntk_base, lambda b, s, d: b * s)(), id="ntk-base-times-s"),
        pytest.param(lambda: mutate(S.ntk_base, lambda b, s, d: b * s ** (d / (d - 2)) ** 2)(), id="ntk-squared"),
        pytest.param(lambda: mutate(S.dynamic_continuity, lambda L, L0, s: s * L / L0)(), id="dynamic-without-(s-1)"),
        pytest.param(lambda: mutate(S.dynamic_continuity, lambda L, L0, s: L / L0 - (s - 1))(), id="dynamic-without-s-slope"),
        pytest.param(lambda: mutate(S.llama3_is_yarn, S.high, S.low)(), id="llama-alpha-beta-swapped"),
        pytest.param(lambda: mutate(S.llama3_is_yarn, S.low, 2 * S.high)(), id="llama-beta-doubled"),
        pytest.param(lambda: mutate(S.llama3_continuity, lambda w: (S.L0 / w - S.high) / (S.low - S.high))(),
                     id="llama-smoothing-l-h-swapped"),
        pytest.param(lambda: mutate(S.llama3_continuity, lambda w: (S.L0 / w) / (S.high - S.low))(),
                     id="llama-smoothing-without-l"),
        pytest.param(lambda: mutate(S.llama3_continuity, lambda w: (w / S.L0 - S.low) / (S.high - S.low))(),
                     id="llama-smoothing-in-lambda-not-r"),
        pytest.param(lambda: mutate(S.proportional_limits, lambda i, k, h: sp.GreaterThan(i, h - k))(),
                     id="p-rope-keeps-lowest"),
        pytest.param(lambda: mutate(S.proportional_limits, lambda i, k, h: sp.LessThan(i, k))(), id="p-rope-keeps-k+1"),
        pytest.param(lambda: mutate(S.unit_factor, lambda g, th, s: (1 - g) * th / s + th)(), id="blend-weight-forgotten"),
    ],
)
def test_scaling_mutants_are_not_proved(mutant):
    with pytest.raises(ProofFailure):
        mutant()


def test_p_rope_keeping_lowest_agrees_at_the_limits():
    """The 'keeps the lowest' mutant is caught only where p is strictly between 0 and 1."""
    with pytest.raises(ProofFailure) as exc:
        mutate(S.proportional_limits, lambda i, k, h: sp.GreaterThan(i, h - k))()
    assert "p = 1/2" in str(exc.value)


def test_dynamic_ntk_at_unit_factor_is_not_rope():
    der = S.unit_factor()
    b, D, L, L0 = der.result["symbols"]
    assert der.result["dynamic_at_one"].subs({b: 1, D: 4, L: 2, L0: 1}) == 4


# --- numeric checks catch wrong implementations ------------------------------------------


def _run_check(claim_id, name):
    claim = get(claim_id)
    (check,) = [c for c in claim.checks if c.name == name]
    return check.run()


def test_all_scaling_claims_are_decided():
    for cid in ("scaling.relative", "scaling.ntk_base", "scaling.dynamic_continuity", "scaling.llama3_is_yarn",
                "scaling.llama3_continuity", "scaling.proportional_limits", "scaling.unit_factor"):
        out = run_claim(get(cid))
        assert out.status == "proved", (cid, out.message)


def test_numeric_catches_wrong_ntk_exponent(monkeypatch):
    from pemath._frequencies import base_inv_freq

    def scaled_base(self, dim, base):
        return base * self.factor ** (dim / (dim - 1))

    monkeypatch.setattr(scaling.NTK, "scaled_base", scaled_base)
    monkeypatch.setattr(scaling.NTK, "inv_freq",
                        lambda self, dim, base, *, seq_len=None: base_inv_freq(dim, self.scaled_base(dim, base)))
    with pytest.raises(CheckFailure):
        _run_check("scaling.ntk_base", "numeric")


def test_numeric_catches_dynamic_without_offset(monkeypatch):
    from pemath._frequencies import base_inv_freq

    def scaled_base(self, dim, base, seq_len=None):
        L0 = self.original_max_position
        if seq_len is None or seq_len <= L0:
            return base
        return base * (self.factor * seq_len / L0) ** (dim / (dim - 2))

    monkeypatch.setattr(scaling.DynamicNTK, "scaled_base", scaled_base)
    monkeypatch.setattr(scaling.DynamicNTK, "inv_freq", lambda self, dim, base, *, seq_len=None: base_inv_freq(
        dim, self.scaled_base(dim, base, seq_len)))
    with pytest.raises(CheckFailure):
        _run_check("scaling.dynamic_continuity", "numeric")


def _llama(smooth_of, keep_strict=True):
    from pemath._frequencies import base_inv_freq

    def inv_freq(self, dim, base, *, seq_len=None):
        f = base_inv_freq(dim, base)
        L0, s = float(self.original_max_position), self.factor
        lo, hi = self.low_freq_factor, self.high_freq_factor
        w = 2 * math.pi / f
        g = smooth_of(L0 / w, lo, hi)
        keep = w < L0 / hi if keep_strict else w <= L0 / hi
        interp = w > L0 / lo if keep_strict else w >= L0 / lo
        return np.where(keep, f, np.where(interp, f / s, (1 - g) * f / s + g * f))

    return inv_freq


def test_numeric_catches_llama_smoothing_swapped(monkeypatch):
    monkeypatch.setattr(scaling.Llama3, "inv_freq", _llama(lambda r, lo, hi: (r - hi) / (lo - hi)))
    with pytest.raises(CheckFailure):
        _run_check("scaling.llama3_continuity", "numeric")
    with pytest.raises(CheckFailure):
        _run_check("scaling.llama3_is_yarn", "numeric")


def test_numeric_edges_do_not_care_about_strictness(monkeypatch):
    """Closed instead of open outer bands: the same frequencies (the rule is continuous)."""
    monkeypatch.setattr(scaling.Llama3, "inv_freq", _llama(lambda r, lo, hi: (r - lo) / (hi - lo), keep_strict=False))
    _run_check("scaling.llama3_continuity", "numeric")
    _run_check("scaling.llama3_is_yarn", "numeric")


def test_numeric_catches_p_rope_keeping_lowest(monkeypatch):
    from pemath._frequencies import base_inv_freq

    def inv_freq(self, dim, base, *, seq_len=None):
        f = np.array(base_inv_freq(dim, base))
        k = int(self.fraction * dim // 2)
        f[: dim // 2 - k] = 0.0
        return f / self.factor

    monkeypatch.setattr(scaling.Proportional, "inv_freq", inv_freq)
    with pytest.raises(CheckFailure):
        _run_check("scaling.proportional_limits", "numeric")


def test_numeric_catches_position_dependent_frequency(monkeypatch):
    """A variant whose frequencies follow the position (seq_len = position + 1) is not relative."""
    from pemath import rope

    real_apply = rope.apply

    def apply(x, positions, **kw):
        if isinstance(kw.get("scaling"), scaling.DynamicNTK):
            kw["seq_len"] = int(abs(positions)) + 1
        return real_apply(x, positions, **kw)

    monkeypatch.setattr(rope, "apply", apply)
    # draw only the dynamic variant, so the mutant is exercised whatever examples are drawn
    import pemath.claims.scaling as claims_scaling

    monkeypatch.setattr(claims_scaling, "VARIANTS", ("DynamicNTK",))
    with pytest.raises(CheckFailure):
        _run_check("scaling.relative", "numeric")
