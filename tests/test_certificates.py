"""Induction, instances, substitutions, the sum rewrite, step roles and the verdict scale: each decides or fails."""

from __future__ import annotations

import json

import pytest
import sympy as sp

from pemath import claims
from pemath.claims import Claim, Verdict
from pemath.symbolic import ROLES, Derivation, ProofFailure, Step, reduce_to_zero
from pemath.symbolic import pairs

from ._claim_checks import all_outcomes

h = sp.Symbol("h", integer=True, positive=True)
i, j = sp.symbols("i j", integer=True, nonnegative=True)
F = sp.Function("F")


def test_induction_decides_true_sum_identities_and_refuses_false_ones():
    d = Derivation("induction")
    eq = d.induction("pairs", lambda n: sp.Sum(F(j), (j, 0, 2 * n - 1)),
                     lambda n: sp.Sum(F(2 * i) + F(2 * i + 1), (i, 0, n - 1)), h, 1)
    assert d.steps[-1].certificate == "induction" and "base case" in d.steps[-1].method and isinstance(eq, sp.Eq)
    n = sp.Symbol("n", integer=True, nonnegative=True)
    d.induction("Gauss", lambda k: sp.Sum(j, (j, 0, k)), lambda k: k * (k + 1) / 2, n, 0)
    with pytest.raises(ProofFailure, match="base case"):  # wrong at h = 1
        d.induction("bad base", lambda k: sp.Sum(F(j), (j, 0, 2 * k - 1)),
                    lambda k: sp.Sum(F(i) + F(i + k + 1), (i, 0, k - 1)), h, 1)
    with pytest.raises(ProofFailure, match="step"):  # right at n = 0, wrong after
        d.induction("bad step", lambda k: sp.Sum(j, (j, 0, k)), lambda k: k**2, n, 0)
    with pytest.raises(TypeError, match="integer symbol"):
        d.induction("real var", lambda k: k, lambda k: k, sp.Symbol("t", real=True), 0)
    with pytest.raises(ProofFailure, match="fixed count"):  # a range growing by h terms is not unrolled
        d.induction("growing range", lambda k: sp.Sum(F(j), (j, 0, k * k)), lambda k: sp.Sum(F(i), (i, 0, k * k)), h, 1)


def test_instance_needs_a_proved_lemma_for_an_arbitrary_function():
    d = Derivation("instance")
    q = sp.IndexedBase("q")
    lemma = pairs.partition(d, "half")
    out = d.instance("squares", lemma, F, sp.Lambda(j, q[j] ** 2))
    assert out.rhs == sp.Sum(q[i] ** 2 + q[i + h] ** 2, (i, 0, h - 1)) and d.steps[-1].certificate == "instance"
    with pytest.raises(ProofFailure, match="neither decided earlier"):
        d.instance("unproved", sp.Eq(sp.Sum(F(j), (j, 0, h)), 0), F, sp.Lambda(j, j))
    with pytest.raises(TypeError, match="undefined function"):
        d.instance("not a function", lemma, sp.Symbol("G"), sp.Lambda(j, j))


def test_specialize_and_rewrite_with_take_decided_equations_or_hypotheses_only():
    a, b, m, n = sp.symbols("a b m n", real=True)
    g = sp.Function("g")
    d = Derivation("substitution")
    eq = sp.Eq(g(m, n), a * (n - m))
    d.hypothesis("g is linear in n - m, for every m, n", eq, forall=(m, n))  # a result resting on it is conditional
    at = d.specialize("n = m", eq, {n: m})
    assert at == sp.Eq(g(m, m), 0, evaluate=False) and d.steps[-1].certificate == "substitution"
    with pytest.raises(ProofFailure, match="neither decided earlier"):
        d.specialize("from nowhere", sp.Eq(g(m, n), b), {n: m})
    d.remark("a remark is no premise", sp.Eq(g(a, b), 1))
    with pytest.raises(ProofFailure, match="neither decided earlier"):
        d.specialize("from a remark", sp.Eq(g(a, b), 1), {a: 0})
    d.define("a definition is no premise", sp.Eq(g(a, b), 2))
    with pytest.raises(ProofFailure, match="neither decided earlier"):
        d.specialize("from a definition", sp.Eq(g(a, b), 2), {a: 0})
    d.cite("cited", sp.Eq(g(m, m), sp.Symbol("c")), source="a textbook, theorem 1")
    with pytest.raises(ProofFailure, match="neither decided earlier"):
        d.rewrite_with("from a cited fact", eq, sp.Eq(g(m, m), sp.Symbol("c")))
    with pytest.raises(ProofFailure, match="does not occur"):
        d.rewrite_with("nothing to rewrite", eq, at)


def test_the_sum_rewrite_uses_linearity_and_additivity_only():
    u, v = sp.IndexedBase("u"), sp.IndexedBase("v")
    p = sp.Symbol("p", integer=True, nonnegative=True)
    assert reduce_to_zero(sp.Sum(F(j), (j, 0, h - 1)) + sp.Sum(F(j), (j, h, 2 * h + p)) - sp.Sum(F(i), (i, 0, 2 * h + p)),
                          methods=("sums",))[0]
    x = sp.Symbol("x", real=True)
    assert reduce_to_zero(sp.Sum(sp.sin(x + u[i]) - sp.sin(x) * sp.cos(u[i]) - sp.cos(x) * sp.sin(u[i]), (i, 0, h - 1)),
                          methods=("sums",))[0]
    # ranges that overlap, or leave a gap, are not joined
    assert not reduce_to_zero(sp.Sum(F(j), (j, 0, h)) + sp.Sum(F(j), (j, h, 2 * h)) - sp.Sum(F(j), (j, 0, 2 * h)),
                              methods=("sums",))[0]
    assert not reduce_to_zero(sp.Sum(F(j), (j, 0, h - 1)) + sp.Sum(F(j), (j, h + 1, 2 * h)) - sp.Sum(F(j), (j, 0, 2 * h)),
                              methods=("sums",))[0]
    assert not reduce_to_zero(sp.Sum(u[i] * v[i], (i, 0, h - 1)) - sp.Sum(u[i] * v[i + 1], (i, 0, h - 1)),
                              methods=("sums",))[0]


def test_narrated_steps_carry_a_role_and_the_json_says_which():
    assert set(ROLES) == {"definition", "hypothesis", "remark", "cited"}
    with pytest.raises(ValueError, match="role"):
        Step("t", None, "info")
    with pytest.raises(ValueError, match="role"):
        Step("t", None, "failed", role="remark")
    with pytest.raises(TypeError, match="made only by the kernel"):
        Step("t", sp.Eq(sp.Integer(1), 2), "proved", "expand", "rewrite")
    assert not hasattr(Derivation("t"), "say")  # every narration says what it is
    out = json.loads(claims.to_json([claims.run_claim(claims.get("rope.relative"), checks=False)]))
    narrated = [s for s in out[0]["steps"] if s["status"] == "info"]
    assert narrated and all(s["role"] in ROLES for s in narrated)


def test_every_decided_step_of_every_claim_names_its_certificate_and_no_narration_lacks_a_role():
    outs = [o for _, o in all_outcomes()]
    assert len(outs) >= 45 and all(o.status in ("proved", "imprecise", "refuted") for o in outs)
    for o in outs:
        for s in o.derivation.steps:
            assert (s.status == "proved" and s.certificate) or (s.status == "info" and s.role in ROLES), (o.id, s.text)


def _claim(verdict):
    return Claim(id="demo.v", title="demo", kind="published claim", family="demo", statement=lambda: sp.S.true,
                 proof=lambda: verdict)


def _decided(part="statement"):
    d = Derivation("v")
    x = sp.Symbol("x", real=True)
    with d.part(part):
        d.equal("double angle", sp.cos(2 * x), 1 - 2 * sp.sin(x) ** 2)
    return d


def test_the_verdict_scale_tells_false_as_stated_from_imprecise():
    both = _decided("counterexample")
    both.include(_decided().steps, part="fair reading")
    imprecise = claims.run_claim(_claim(Verdict(both, "the end point is off", "the progression")))
    assert imprecise.status == "imprecise" and imprecise.fair_reading == "proved: the progression"
    refuted = claims.run_claim(_claim(Verdict(_decided("counterexample"), "false", "the weaker form")))
    assert refuted.status == "refuted" and refuted.fair_reading.startswith("refuted: ")
    assert claims.run_claim(_claim(Verdict(_decided("counterexample"), "false"))).status == "refuted"
    with pytest.raises(ValueError, match="fair_reading"):
        Verdict(_decided(), None, "a reading")
    with pytest.raises(ValueError, match="counterexample"):  # a counterexample in words needs a decided one
        Verdict(_decided(), "x")
    with pytest.raises(ValueError, match="counterexample"):  # and a decided one needs its words
        Verdict(_decided("counterexample"))
    with pytest.raises(ValueError, match="decided no step"):
        Verdict(Derivation("empty"))
    assert "1 imprecise" in claims.summary_line([imprecise, refuted])
    status = {o.id: o.status for _, o in all_outcomes() if o.id in (
        "vaswani.wavelengths", "roformer.long_term_decay", "pi.theorem_2_1")}
    assert status == {"vaswani.wavelengths": "imprecise", "roformer.long_term_decay": "imprecise",
                      "pi.theorem_2_1": "refuted"}


def test_production_derivations_take_no_mutation_parameters():
    """Wrong ingredients are patched in by the mutation tests (tests/mutation/_patch.py), never passed in."""
    import importlib
    import inspect

    from tests.mutation._patch import CALLS

    for where, old in CALLS.items():
        mod, name = where.split(".")
        fn = getattr(importlib.import_module(f"pemath.symbolic.{mod}"), name)
        hooks = {"blk", "rhs_angle", "perm_layout", "rotate", "perm", "index", "key_shift", "rhs_sign", "vjp", "sign",
                 "swap", "encoding", "max_exact", "rel", "key_sign", "key_axis", "key_perm", "form", "shift", "f",
                 "other", "ratio", "power", "variants", "claimed", "gamma", "kept", "blend", "last", "initial", "step",
                 "radius", "bits", "alpha", "beta"}
        params = set(inspect.signature(fn).parameters)
        assert not params & hooks, f"{where} still takes {sorted(params & hooks)}"
        assert not any(p.kind is p.VAR_KEYWORD for p in inspect.signature(fn).parameters.values()), where


def test_a_lemma_marks_its_steps_and_they_keep_the_mark_when_combined():
    import sympy as sp

    from pemath.symbolic import pairs

    d = Derivation("outer")
    x = sp.Symbol("x", real=True)
    d.equal("before", sp.cos(2 * x), 1 - 2 * sp.sin(x) ** 2)
    pairs.inner_over_pairs(d, "half", sp.IndexedBase("u"), sp.IndexedBase("v"), partial=True)
    d.equal("after", sp.cos(2 * x), 1 - 2 * sp.sin(x) ** 2)
    assert [s.lemma for s in d.steps] == [None, pairs.PARTITION, pairs.PARTITION, pairs.PASS_THROUGH,
                                          pairs.PASS_THROUGH, None]
    combined = Derivation("combined")
    combined.steps.extend(d.steps)
    assert [s.lemma for s in combined.steps] == [s.lemma for s in d.steps]
    assert all(s.section == "outer" for s in combined.steps)
    with pytest.raises(ValueError, match="lemmas are not nested"):
        with d.lemma("a"):
            with d.lemma("b"):
                pass
    assert d.steps.lemma is None  # left as it was, after the error too
    with pytest.raises(TypeError, match="lemma name must be a non-empty string"):
        with d.lemma(""):
            pass
