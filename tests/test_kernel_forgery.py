"""Every route by which a certificate was once obtained for a false statement through the public Derivation API
(issue 22's audit: 16 of 16 accepted), each refused now, and the re-checker re-deciding records from formulas."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
import sympy as sp
from mpmath import iv

from pemath import claims
from pemath.claims import Check, Claim, Verdict
from pemath.symbolic import Derivation, ProofFailure, Step
from pemath.symbolic._decide import unevaluated
from pemath.symbolic.recheck import recheck

from ._claim_checks import all_outcomes

x = sp.Symbol("x", real=True)
n = sp.Symbol("n", integer=True)


def test_a_sympified_true_or_a_relation_between_bare_numbers_decides_nothing():
    d = Derivation("forgery")
    for condition in (sp.true, sp.sympify(True), sp.Eq(1, 1)):  # Eq(1, 1) is True on construction
        with pytest.raises(ProofFailure, match="already evaluated"):
            d.true("pi is rational", condition)
    with pytest.raises(ProofFailure, match="numbers computed outside the kernel"):
        d.true("pi is rational", sp.Eq(1, 1, evaluate=False))
    with pytest.raises(TypeError, match="Python bool carries no certificate"):
        d.true("pi is rational", True)
    assert not [s for s in d.steps if s.status == "proved"]


def test_an_enumeration_states_its_domain_and_a_predicate_in_its_variable():
    d = Derivation("forgery")
    k = sp.Symbol("k", integer=True)
    with pytest.raises(TypeError):  # no free-text "over": the domain is the set enumerated
        d.enumerated("n^2 < 5 for every integer n", k, range(3), sp.Lt(k**2, 5), over="every integer n")
    d.enumerated("k^2 < 5 for k = 0, 1, 2", k, range(3), sp.Lt(k**2, 5))
    assert d.steps[-1].formula == sp.Tuple(k, sp.Range(3), sp.Lt(k**2, 5)) and d.steps[-1].method == "3 cases"
    for predicate in (lambda c: True, sp.true, sp.Ge(k**2, 0), sp.Lt(n**2, 5)):  # a callable, a constant, a
        # predicate SymPy already decided for every k (nothing enumerated), another variable
        with pytest.raises((TypeError, ProofFailure)):
            d.enumerated("every integer is small", k, range(3), predicate)
    with pytest.raises(ProofFailure, match="finite set"):
        d.enumerated("every integer", k, sp.S.Integers, sp.Lt(k**2, 5))


def test_an_interval_encloses_the_statements_own_two_sides():
    d = Derivation("forgery")
    with pytest.raises((TypeError, ProofFailure)):  # an enclosure computed elsewhere is no longer accepted
        d.interval("pi > 4", iv.mpf(5), ">", 4)
    with pytest.raises(ProofFailure, match="do not decide"):
        d.interval("pi > 4", sp.pi, ">", 4)
    d.interval("pi > 3", sp.pi, ">", 3)
    assert d.steps[-1].formula == sp.StrictGreaterThan(sp.pi, 3, evaluate=False)


def test_a_property_smuggled_in_through_a_symbols_assumptions_fails_the_claim():
    t_real, t_pos = sp.Symbol("t", real=True), sp.Symbol("t", positive=True)

    def proof() -> Verdict:
        d = Derivation("smuggled")
        d.assumed("t is positive for every real t", t_pos, "positive")  # the statement's t is only real
        return Verdict(d)

    claim = Claim(id="forgery.smuggled", title="every real t is positive", kind="theorem", family="forgery",
                  statement=lambda: sp.Gt(t_real, 0), proof=proof)
    out = claims.run_claim(claim)
    assert out.status == "failed" and "declares t" in out.message and "positive" in out.message
    d = proof().derivation  # and the record names the assumption it rests on
    assert ("t", ("positive", "nonnegative", "nonzero", "real")) in d.assumptions()


def test_free_of_and_equal_decide_the_statements_objects_only():
    d = Derivation("forgery")
    with pytest.raises(ProofFailure, match="not a side"):
        d.free_of("the score does not depend on m", sp.Integer(3) * x, [sp.Symbol("m")])
    with pytest.raises(ProofFailure, match="same expression"):
        d.equal("the Riemann hypothesis", x, x)
    with pytest.raises(ProofFailure, match="same expression"):
        d.zero("1 = 2", sp.S.Zero)
    d.equal("but SymPy's evaluation may be the argument, recorded as built", unevaluated(lambda: sp.cos(-x)),
            sp.cos(x))
    assert d.steps[-1].certificate == "closed on construction" and d.steps[-1].formula.lhs != d.steps[-1].formula.rhs


def test_a_solution_set_is_taken_over_the_domain_the_symbol_declares():
    d = Derivation("forgery")
    with pytest.raises(TypeError):  # no caller-chosen domain
        d.solved("x^2 = 4 only at 2", sp.Eq(x**2, 4), x, sp.Interval(0, 3), [2])
    with pytest.raises(ProofFailure, match="returned"):
        d.solved("x^2 = 4 only at 2", sp.Eq(x**2, 4), x, [2])
    d.solved("x^2 = 4 at -2 and 2", sp.Eq(x**2, 4), x, [-2, 2])


def test_specialize_keeps_the_quantifier_and_never_starts_from_a_definition_or_cited_fact():
    d = Derivation("forgery")
    d.equal("log(e^x) = x for real x", sp.log(sp.exp(x), evaluate=False), x)
    eq = d.steps[-1].formula
    with pytest.raises(ProofFailure, match="declared .*real"):  # the audit's "proved" 0 = 2 pi i
        d.specialize("at x = 2 pi i: 0 = 2 pi i", eq, {x: 2 * sp.pi * sp.I})
    d.specialize("at x = 3", eq, {x: 3})
    for role in ("define", "cite", "remark"):
        fact = sp.Eq(sp.Symbol("a"), 1)
        if role == "cite":
            d.cite("a = 1", fact, source="a textbook, theorem 1")
        else:
            getattr(d, role)("a = 1", fact)
        with pytest.raises(ProofFailure, match="neither decided earlier"):
            d.specialize("so a = 1 at a = 2", fact, {sp.Symbol("a"): 2})
    c_ = sp.Symbol("c")
    h = d.hypothesis("b c = c for every c (a hypothesis of the claim)", sp.Eq(sp.Symbol("b") * c_, c_), forall=(c_,))
    d.specialize("from the hypothesis, at c = 1", h, {c_: 1})
    assert d.steps[-1].rests_on == ("b c = c for every c (a hypothesis of the claim)",)  # conditional, and said
    with pytest.raises(ProofFailure, match="fixed by a hypothesis"):  # b is one number, not every number
        d.specialize("at b = 2", h, {sp.Symbol("b"): 2})


def test_an_instance_keeps_the_declared_properties_of_the_function_it_replaces():
    t = sp.Symbol("t", real=True)
    g = sp.Function("g", positive=True)
    d = Derivation("forgery")
    d.equal("log(g^2) = 2 log g for a positive g", sp.log(g(t) ** 2), 2 * sp.log(g(t)), methods=("expand", "simplify"))
    lemma = d.steps[-1].formula
    with pytest.raises(ProofFailure, match="declared .*positive"):  # the audit's "proved" log(t^2) = 2 log t
        d.instance("so log(t^2) = 2 log t for real t", lemma, g, sp.Lambda(t, t))
    d.instance("and log((1 + t^2)^2) = 2 log(1 + t^2)", lemma, g, sp.Lambda(t, 1 + t**2))


def test_a_decided_step_is_made_by_the_kernel_only_and_never_changed():
    d = Derivation("forgery")
    with pytest.raises(TypeError, match="made only by the kernel"):
        Step("Fermat's last theorem", sp.Eq(sp.Integer(1), 2), "proved", "expand", "rewrite")
    with pytest.raises(TypeError):
        d.steps.append("a decided step")
    d.remark("a narration")
    with pytest.raises(AttributeError, match="never changed"):
        d.steps[-1].status = "proved"
    d.equal("double angle", sp.cos(2 * x), 1 - 2 * sp.sin(x) ** 2)
    with pytest.raises(AttributeError, match="never changed"):
        d.steps[-1].formula = sp.Eq(sp.Integer(1), 2)
    with pytest.raises(TypeError):
        d.steps[0] = d.steps[-1]
    with pytest.raises(AttributeError):
        d.steps = []


def test_verdicts_are_computed_from_the_steps():
    d = Derivation("forgery")
    d.equal("double angle", sp.cos(2 * x), 1 - 2 * sp.sin(x) ** 2)
    with pytest.raises(TypeError):
        Verdict(True, d)  # holds is no longer passed in
    with pytest.raises(ValueError, match="counterexample"):
        Verdict(d, "a counterexample in words, none decided")
    with pytest.raises(ValueError, match="decided no step"):
        Verdict(Derivation("nothing"))
    v = Verdict(d)
    assert v.holds is True and v.fair_holds is None
    with pytest.raises(TypeError):  # holds is a property computed from the steps, not a field
        Verdict(d, holds=False)
    fair = Derivation("fair")
    with fair.part("counterexample"):
        fair.interval("3 < pi", sp.pi, ">", 3)
    assert Verdict(fair, "x", "a reading nothing decides").fair_holds is False


def test_every_decided_step_of_every_claim_stores_its_formula_and_the_recheck_redecides_it():
    outs = [o for _, o in all_outcomes()]
    record = json.loads(claims.to_json(outs))
    decided = [s for o in record for s in o["steps"] if s["status"] == "proved"]
    assert decided and all(s["formula"] for s in decided)
    result = recheck(record)
    assert result.ok and result.decided == result.total == len(decided), result.summary()


def test_the_recheck_refuses_a_tampered_record():
    record = json.loads(claims.to_json([claims.run_claim(claims.get("sinusoidal.dot_product"), checks=False)]))
    step = next(s for s in record[0]["steps"] if s["status"] == "proved" and s["certificate"] == "rewrite")
    step["formula"] = step["formula"].replace("Integer(1)", "Integer(2)", 1) if "Integer(1)" in step["formula"] else \
        "Equality(Symbol('a'), Symbol('b'))"
    result = recheck(record)
    assert not result.ok and result.failures
    for s in record[0]["steps"]:
        if s["status"] == "proved":
            s["formula"] = None
    emptied = recheck(record)
    steps = [f for f in emptied.failures if f[1] != 0]  # step n fails; n = 0 is the claim's verdict
    assert emptied.decided == 0 and not emptied.ok and len(steps) == emptied.total > 0
    # with no step re-decided, the formal statement's verdict cannot be derived either
    assert [f[2] for f in emptied.failures if f[1] == 0] == ["the verdict"]


def test_prove_recheck_runs_in_a_fresh_process_and_reports_the_count(tmp_path):
    out = subprocess.run([sys.executable, "-m", "pemath.cli", "prove", "sinusoidal", "--no-checks", "--recheck"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    assert re.search(r"re-checked (\d+)/\1 decided steps of 3 claims from their formulas alone", out.stdout), out.stdout
    path = tmp_path / "record.json"
    path.write_text(subprocess.run([sys.executable, "-m", "pemath.cli", "prove", "sinusoidal.shift", "--no-checks",
                                    "--json"], capture_output=True, text=True, check=True).stdout)
    again = subprocess.run([sys.executable, "-I", "-m", "pemath.symbolic.recheck", str(path)], capture_output=True,
                           text=True)
    assert again.returncode == 0 and "re-checked" in again.stdout, again.stderr
    bad = subprocess.run([sys.executable, "-I", "-m", "pemath.symbolic.recheck", str(tmp_path / "missing.json")],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "unusable record" in bad.stderr


def test_a_check_cannot_stand_for_a_decision():
    claim = Claim(id="forgery.checks", title="numbers agree", kind="theorem", family="forgery",
                  statement=lambda: sp.S.true, proof=lambda: Verdict(Derivation("nothing")),
                  checks=(Check("numeric", lambda: "1 example"),))
    assert claims.run_claim(claim).status == "error"  # a verdict with no decided step is refused


def test_an_independent_audits_routes_are_refused(tmp_path):
    """The routes a second, adversarial review found after the first round (each once gave "proved")."""
    d = Derivation("second audit")
    p = sp.Symbol("p", prime=True)
    d.equal("totient(p) = p - 1 for a prime p", unevaluated(lambda: sp.totient(p)), p - 1)
    with pytest.raises(ProofFailure, match="declared prime"):  # every declared property is kept, not ten of them
        d.specialize("at p = 4", d.steps[-1].formula, {p: 4})
    y = sp.Symbol("y")
    d.equal("y/y = 1", unevaluated(lambda: y / y), 1)
    with pytest.raises(ProofFailure, match="undefined there"):  # no specialisation where SymPy's identity breaks
        d.specialize("at y = 0", d.steps[-1].formula, {y: 0})
    xr = sp.Symbol("x", positive=True)
    d.solved("x^2 = 4 for x > 0 only at 2", sp.Eq(xr**2, 4), xr, [2])
    with pytest.raises(ProofFailure, match="neither decided earlier"):  # a solution set is no universal equation
        d.specialize("so 3 = 2", sp.Eq(xr, 2), {xr: 3})
    h = d.hypothesis("x = 2, for one particular x", sp.Eq(x, 2))
    with pytest.raises(ProofFailure, match="fixed by a hypothesis"):
        d.specialize("so 3 = 2", h, {x: 3})
    with pytest.raises(ProofFailure, match="function of the value"):
        d.apply("differentiate both sides", h, sp.Lambda(sp.Symbol("z"), sp.Derivative(sp.Symbol("z"), x)))
    one = sp.Add(sp.pi, 1 - sp.pi, evaluate=False)  # 1, as an expression the kernel encloses
    for left, right in ((one, 1 + sp.Rational(1, 10**20)), (sp.pi, sp.pi + sp.Rational(1, 10**25))):
        with pytest.raises(ProofFailure, match="do not decide"):  # the enclosures' ends keep all their bits
            d.interval("a >= a + tiny", left, ">=", right, digits=30)
    with pytest.raises(ProofFailure, match="computed outside the kernel"):  # two bare numbers decide nothing
        d.interval("1 > 0", 1, ">", 0, digits=30)
    k = sp.Symbol("k", integer=True)
    d.equal("a reversed sum, SymPy's convention", sp.Sum(k, (k, 5, 1)), -9, methods=("doit",))
    with pytest.raises(ProofFailure):  # the enclosure follows the same convention
        d.interval("and yet > -1", sp.Sum(k, (k, 5, 1)), ">", -1)
    with pytest.raises(ProofFailure, match="real numbers"):
        d.interval("sqrt(3 - pi) > 0", sp.sqrt(3 - sp.pi), ">", 0)
    with pytest.raises(ProofFailure, match="declared"):  # a Subs point outside the bound variable's assumptions
        d.equal("sqrt(x^2) at x = -1 is -1", sp.Subs(sp.sqrt(xr**2), xr, -1), -1, methods=("doit",))


def test_a_derivation_with_a_failed_step_gives_no_verdict():
    d = Derivation("swallowed")
    with pytest.raises(ProofFailure):
        d.equal("a false identity", sp.cos(x), sp.sin(x))
    d.interval("pi > 3", sp.pi, ">", 3)
    with pytest.raises(ValueError, match="failed"):
        Verdict(d)


def test_the_recheck_refuses_records_that_run_code_or_forge_premises(tmp_path):
    from pemath.symbolic._certify import load

    marker = tmp_path / "pwned"
    for text in (f"sympify(\"__import__('os').system('touch {marker}')\")",
                 "().__class__.__base__.__subclasses__()",
                 f"Add(Symbol('x'), \"__import__('os').system('touch {marker}')\")",
                 "Symbol('x').__class__"):
        with pytest.raises((ValueError, SyntaxError)):
            load(text)
    assert not marker.exists()
    record = json.loads(claims.to_json([claims.run_claim(claims.get("rope.derivation"), checks=False)]))
    assert recheck(record).ok
    hyp = next(s for s in record[0]["steps"] if s["role"] == "hypothesis")
    hyp["status"] = "proved"  # a hypothesis passed off as decided
    assert not recheck(record).ok
    record = json.loads(claims.to_json([claims.run_claim(claims.get("pi.theorem_2_1"), checks=False)]))
    record[0]["status"] = "proved"  # a verdict that its counterexample contradicts
    assert not recheck(record).ok


def test_a_third_audits_routes_are_refused():
    """A third adversarial audit (after issue 22 landed): each route to a false decided step, refused."""
    from pemath.symbolic._decide import unevaluated

    d = Derivation("third audit")
    # 1. a bound variable whose declared assumptions its range contradicts (j positive, summed over -2..2: 6)
    j = sp.Symbol("j", positive=True)
    s = unevaluated(lambda: sp.Sum(sp.sqrt(j**2) - j, (j, -2, 2)))
    with pytest.raises(ProofFailure):
        d.zero("sum is 0", s)
    with pytest.raises(ProofFailure):
        d.zero("integral is 0", unevaluated(lambda: sp.Integral(sp.sqrt(j**2) - j, (j, -1, 0))))
    d.equal("the sum is 6", s, 6, methods=("doit",))  # what it is, with the index made from its range
    # 2. a sum from a half-integer: the index is no integer ((-1)^(2j) is -1 at j = 1/2, 3/2, 5/2)
    i, h = sp.Symbol("i"), sp.Rational(1, 2)
    with pytest.raises(ProofFailure):
        d.equal("half", sp.Sum((-1) ** (2 * i), (i, h, 5 * h)), sp.Sum(1, (i, h, 5 * h)), methods=("sums",))
    # 3. an induction whose base lies outside its variable's domain; a variable n -> n + 1 does not keep
    n = sp.Symbol("n", integer=True, positive=True)
    with pytest.raises(ProofFailure, match="the base -2 is not known to be"):
        d.induction("|n| = n + 4", lambda v: unevaluated(lambda: sp.Abs(v)), lambda v: v + 4, n, -2)
    m_ = sp.Symbol("m", integer=True, nonnegative=True)
    with pytest.raises(ProofFailure, match="undefined on the chain"):  # (m^2 - m)/(m - 1) = m, undefined at m = 1
        d.induction("removable", lambda v: unevaluated(lambda: (v**2 - v) / (v - 1)), lambda v: v, m_, 0)
    p_ = sp.Symbol("p", positive=True, integer=True)
    with pytest.raises(ProofFailure, match="same expression"):  # sign(p) = 1 stored as Eq(1, 1)
        d.induction("sign(p) = 1", lambda v: sp.sign(v), lambda v: 1, p_, 1)
    e = sp.Symbol("e", integer=True, even=True)
    with pytest.raises(ProofFailure, match="declared even"):
        d.induction("even", lambda v: v, lambda v: v, e, 0)
    # 4. an enclosure with an infinite end (1/z^2 for z an exact zero SymPy does not evaluate)
    z = sp.sin(1) ** 2 + sp.cos(1) ** 2 - 1
    with pytest.raises(ProofFailure, match="unbounded|not decided nonzero"):  # the fourth audit's check comes first
        d.interval("1/z^2 > 10^50", 1 / z**2, ">", 10**50)
    # 5. floats anywhere in a formula: a specialisation's value, an enumeration's domain, an instance's Lambda
    y, t, g = sp.Symbol("y"), sp.Symbol("t"), sp.Function("g")
    c = sp.Eq(unevaluated(lambda: y + 1 - y), 1, evaluate=False)
    d.equal("y + 1 - y = 1", c.lhs, c.rhs)
    with pytest.raises((ProofFailure, TypeError), match="floating-point"):
        d.specialize("at 1e20", c, {y: sp.Float(1e20)})
    with pytest.raises((ProofFailure, TypeError), match="floating-point"):
        d.enumerated("over 1e20", y, [sp.Float(1e20)], sp.Eq(unevaluated(lambda: y + 1 - y), 1, evaluate=False))
    lemma = sp.Eq(unevaluated(lambda: g(t) + 1 - g(t)), 1, evaluate=False)
    d.equal("g(t) + 1 - g(t) = 1", lemma.lhs, lemma.rhs)
    with pytest.raises((ProofFailure, TypeError), match="floating-point"):
        d.instance("g := t + 1e20", lemma, g, sp.Lambda(t, t + sp.Float(1e20)))
    # 6. solution sets with a parameter where it degenerates the equation (a = 0: every x solves a x = a)
    x, a = sp.Symbol("x", real=True), sp.Symbol("a", real=True)
    for eq, sol in ((sp.Eq(a * x, a), [1]), (sp.Eq(a * x, 0), [0])):
        with pytest.raises(ProofFailure, match="leading coefficient"):
            d.solved("generic", eq, x, sol)
    with pytest.raises(ProofFailure, match="non-integer exponent"):
        d.solved("cube root", sp.Eq(x ** sp.Rational(1, 3), -1), x, [-1])
    d.solved("a nonzero leading coefficient: one root whatever the parameter", sp.Eq(x - a, 1), x, [a + 1])
    # 7. a replacement captured by the lemma's sum
    k, u = sp.Symbol("k", integer=True), sp.Symbol("u")
    cap = sp.Eq(sp.Sum(g(n), (k, 1, 2)), 2 * g(n), evaluate=False)
    d.equal("Sum_{k=1}^{2} g(n) = 2 g(n)", cap.lhs, cap.rhs, methods=("doit",))
    with pytest.raises(ProofFailure, match="captured"):
        d.instance("g := k", cap, g, sp.Lambda(u, k))
    # 8. a rewrite under a binder with an equation about one value of the bound variable
    t3 = sp.Eq(sp.Sum(g(k), (k, 1, 3)), g(1) + g(2) + g(3), evaluate=False)
    d.equal("Sum_{k=1}^{3} g(k)", t3.lhs, t3.rhs, methods=("doit",))
    one = d.hypothesis("g(k) = 0 for this one k", sp.Eq(g(k), 0))
    with pytest.raises(ProofFailure, match="bound inside the premise"):
        d.rewrite_with("under the sum", t3, one)
    # 9. derivatives where none exists: SymPy's conventions sign(0) = 0, Heaviside(0) = 1/2
    w = sp.Symbol("w", real=True)
    for expr in (sp.Abs(w), sp.Max(w, 0)):
        with pytest.raises(ProofFailure, match="not differentiable everywhere"):
            d.equal("kink", sp.Subs(sp.Derivative(expr, w), w, 0), 0)
    # and the smaller ones: an undefined side, a variable named twice, bare numbers in an interval
    with pytest.raises(ProofFailure, match="undefined"):
        d.true("1/0 = 2/0", sp.Eq(sp.Pow(0, -1, evaluate=False), sp.Mul(2, sp.Pow(0, -1, evaluate=False),
                                                                     evaluate=False), evaluate=False))
    with pytest.raises(ProofFailure, match="each variable once"):
        d.enumerated("twice", (k, k), sp.ProductSet(sp.FiniteSet(1, 2), sp.FiniteSet(3)), sp.Eq(k, 3))
    # what was decided is exactly the true steps above, nothing of the refused ones
    assert [st.text for st in d.steps if st.status == "proved"] == [
        "the sum is 6", "y + 1 - y = 1", "g(t) + 1 - g(t) = 1", "a nonzero leading coefficient: one root whatever "
        "the parameter", "Sum_{k=1}^{2} g(n) = 2 g(n)", "Sum_{k=1}^{3} g(k)"]


def test_the_rechecker_refuses_an_unknown_status_and_a_verdict_without_steps():
    from pemath.symbolic.recheck import recheck

    bare = [{"id": "riemann", "status": "proved", "steps": []}]
    assert recheck(bare).failures and "no step was decided" in recheck(bare).failures[0][3]
    odd = [{"id": "x", "status": "proved", "steps": [{"text": "1 = 2", "status": "Proved", "certificate": "rewrite",
                                                       "formula": "Equality(Integer(1), Integer(2))"}]}]
    assert any("status is info, proved or failed" in f[3] for f in recheck(odd).failures)


def _record_of(*steps):
    """A record as ``pemath prove --json`` writes it, holding the given (text, certificate, formula) steps as decided."""
    from pemath.symbolic._certify import dump

    return [{"id": "forged", "status": "proved", "steps": [
        {"text": text, "status": "proved", "certificate": cert, "method": None, "rests_on": [], "part": "statement",
         "formula": formula if isinstance(formula, str) else dump(formula)} for text, cert, formula in steps]}]


def test_a_fourth_audits_routes_are_refused():
    """A fourth adversarial audit: each route to a false decided step, refused by the kernel and by the re-checker."""
    d = Derivation("fourth audit")
    j, jn = sp.Symbol("j", positive=True), sp.Symbol("j", negative=True)
    S = sp.Sum(j, (j, -5, 1))  # -14, though j is declared positive
    X = sp.sin(1) ** 2 + sp.cos(1) ** 2 - 1  # exactly 0; SymPy's evaluation does not see it
    t, y, u = sp.Symbol("t", real=True), sp.Symbol("y"), sp.Symbol("u")
    xp = sp.Symbol("x", positive=True)
    forged = []
    # 1. assumption queries on a sum or product whose index's declared assumptions its range contradicts
    for e, prop in ((S, "positive"), (sp.Product(j, (j, 0, 0)), "nonzero"), (sp.Sum(jn, (jn, 1, 3)), "negative")):
        with pytest.raises(ProofFailure, match="is_"):
            d.assumed("by the index's declaration", e, prop)
        forged.append(("q", "assumption query", getattr(sp.Q, prop)(e)))
    # 2. the same through specialize, instance and solved: log(S^2) = 2 log S at S = -14; x^2 = -14 in the reals
    log2 = sp.Eq(sp.log(xp**2), 2 * sp.log(xp), evaluate=False)
    d.equal("log(x^2) = 2 log x, x > 0", log2.lhs, log2.rhs, methods=("expand",))
    with pytest.raises(ProofFailure, match="not known to be"):
        d.specialize("at x = S", log2, {xp: S})
    g = sp.Function("g", positive=True)
    logg = sp.Eq(sp.log(g(t) ** 2), 2 * sp.log(g(t)), evaluate=False)
    d.equal("log(g^2) = 2 log g, g > 0", logg.lhs, logg.rhs, methods=("expand",))
    with pytest.raises(ProofFailure, match="not known to be"):
        d.instance("g := S", logg, g, sp.Lambda(t, S))
    with pytest.raises(ProofFailure, match="solveset"):
        d.solved("x^2 = S", sp.Eq(t**2, S), t, [-sp.sqrt(S), sp.sqrt(S)])
    forged.append(("x^2 = S", "solution set", sp.Tuple(sp.Eq(t**2, S), t, sp.FiniteSet(-sp.sqrt(S), sp.sqrt(S)))))
    # 3. a rewrite that carries a generic identity (y/y = 1) to where it is undefined (y = 0)
    yy = sp.Eq(unevaluated(lambda: y / y), 1, evaluate=False)
    d.equal("y/y = 1 (generic)", yy.lhs, yy.rhs)
    zero = d.hypothesis("y = 0", sp.Eq(y, 0))
    with pytest.raises(ProofFailure, match="undefined there"):
        d.rewrite_with("so nan = 1", yy, zero)
    # 4. an instance at a function where the lemma is undefined, or one that is not a function to numbers
    gr, f = sp.Function("g_r", real=True), sp.Function("f")
    gg = sp.Eq(unevaluated(lambda: gr(t) / gr(t)), 1, evaluate=False)
    d.equal("g/g = 1 (generic)", gg.lhs, gg.rhs)
    with pytest.raises(ProofFailure, match="evaluates to False"):
        d.instance("g := 0", gg, gr, sp.Lambda(t, 0))
    ff = sp.Eq(unevaluated(lambda: f(t) - f(t) + 1), 1, evaluate=False)
    d.equal("f - f + 1 = 1", ff.lhs, ff.rhs)
    with pytest.raises(ProofFailure, match="oo, zoo or nan"):
        d.instance("f := oo", ff, f, sp.Lambda(t, sp.oo))
    # 5. a function "arbitrary" in name only: its derivative (or value) given by fiat
    fd = sp.Function("f_d", fdiff=sp.Lambda(u, sp.Integer(0)))
    with pytest.raises(ProofFailure, match="not assumptions alone"):
        d.equal("d/dt f(t) = 0 for every f", sp.Derivative(fd(t), t), 0, methods=("doit",))
    fe = "Function('f', eval=Lambda(Tuple(Symbol('u')), Integer(1)))(Symbol('t', real=True))"  # f(t) = 1 on build
    forged.append(("f(t) = 1 for every f", "closed on construction", f"Equality({fe}, Integer(1))"))
    # 6. a set relation decided by the sets' form: [0, x] != {0} "for every x >= 0" (false at x = 0)
    xn = sp.Symbol("x", nonnegative=True)
    for rel in (sp.Ne(sp.Interval(0, xn), sp.FiniteSet(0), evaluate=False),
                sp.Ne(sp.Interval(0, X), sp.FiniteSet(0), evaluate=False)):
        with pytest.raises(ProofFailure, match="by its form"):
            d.true("sets", rel)
        forged.append(("sets", "exact boolean", rel))
    # 7. a concrete 0/0: X/X = 1, 2X/X = 2, X/X > 1/2
    for lhs, rhs in ((unevaluated(lambda: X / X), 1), (unevaluated(lambda: 2 * X / X), 2)):
        with pytest.raises(ProofFailure, match="not decided nonzero"):
            d.equal("0/0", lhs, rhs)
        forged.append(("0/0", "rewrite", sp.Eq(lhs, rhs, evaluate=False)))
    with pytest.raises(ProofFailure, match="not decided nonzero"):
        d.true("0/0 > 1/2", sp.Gt(unevaluated(lambda: X / X), sp.Rational(1, 2), evaluate=False))
    # 8. linearity and reindexing applied to a divergent series (oo - oo)
    k, i = sp.Symbol("k", integer=True), sp.Symbol("i", integer=True)
    H = sp.Sum(1 / k, (k, 1, sp.oo))
    for lhs, rhs in ((H - sp.Sum(1 / i, (i, 1, sp.oo)), 0), (H - sp.Sum(1 / (k + 1), (k, 1, sp.oo)), 1)):
        with pytest.raises(ProofFailure, match="convergent"):
            d.equal("harmonic", lhs, rhs)
        forged.append(("harmonic", "rewrite", sp.Eq(lhs, rhs, evaluate=False)))
    # and a ramp's derivative at its kink (SymPy's SingularityFunction convention)
    w = sp.Symbol("w", real=True)
    for kink in (sp.SingularityFunction(w, 0, 1), sp.Mod(w, 1)):
        with pytest.raises(ProofFailure, match="not differentiable everywhere"):
            d.equal("kink", sp.Subs(sp.Derivative(kink, w), w, 0), 1, methods=("doit",))
    # what is decided is the true steps only; a convergent series and a nonzero constant denominator still are
    d.equal("sum 1/k^2 - sum 1/i^2 = 0", sp.Sum(1 / k**2, (k, 1, sp.oo)) - sp.Sum(1 / i**2, (i, 1, sp.oo)), 0,
            methods=("sums",))
    d.equal("(pi - 3)/(pi - 3) = 1", unevaluated(lambda: (sp.pi - 3) / (sp.pi - 3)), 1)
    assert [s.text for s in d.steps if s.status == "proved"] == [
        "log(x^2) = 2 log x, x > 0", "log(g^2) = 2 log g, g > 0", "y/y = 1 (generic)", "g/g = 1 (generic)",
        "f - f + 1 = 1", "sum 1/k^2 - sum 1/i^2 = 0", "(pi - 3)/(pi - 3) = 1"]
    # the re-checker, fed each forged step as a decided one, refuses every one
    result = recheck(_record_of(*forged))
    assert len(result.failures) == len(forged), [f[3] for f in result.failures]


def test_a_fifth_audits_routes_are_refused():
    """A fifth adversarial audit, and the constant-sign routes found while fixing it: each refused, by the kernel and
    by the re-checker."""
    import zlib

    d = Derivation("fifth audit")
    X = sp.sin(1) ** 2 + sp.cos(1) ** 2 - 1  # exactly 0; SymPy's evaluation does not see it
    s = sp.sin(X)  # SymPy holds it negative (it is 0)
    y, k, t = sp.Symbol("y"), sp.Symbol("k", integer=True), sp.Symbol("t", positive=True)
    forged = []
    # 1. a free dummy equal to the index the kernel re-makes a sum's bound variable as, captured by the sum
    D = sp.Dummy("k", dummy_index=zlib.crc32(b"pemath-bound:k:integer"), integer=True)
    with pytest.raises(ProofFailure, match="captured"):
        d.equal("Sum_{k=1}^{3} D = 3 D", sp.Sum(D, (k, 1, 3)), 3 * D, methods=("doit",))
    # 2. a cubic with a parameter: Cardano's roots are 0/0 at a = 0
    xc, a = sp.Symbol("x"), sp.Symbol("a")
    cubic = sp.Eq(xc**3 - 3 * a * xc + 2 * a, 0)
    with pytest.raises(ProofFailure, match="degree 1 or 2"):
        d.solved("for every a", cubic, xc, list(sp.solveset(cubic, xc, sp.S.Complexes).args))
    # 3. an infinite limit hidden in a divergent integral, and a divergent improper integral
    inf = sp.Integral(1 / t**2, (t, 0, 1))
    with pytest.raises(ProofFailure, match="neither known finite|finite value"):
        d.equal("H - H = 0", sp.Sum(1 / k, (k, 1, inf)) - sp.Sum(1 / y, (y, 1, inf)), 0, methods=("sums",))
    xi = sp.Symbol("x", positive=True)
    div = unevaluated(lambda: sp.Integral(1 / xi, (xi, 1, sp.oo)) - sp.Integral(1 / xi, (xi, 1, sp.oo)))
    with pytest.raises(ProofFailure, match="finite value"):
        d.equal("oo - oo = 0", div, 0)
    forged.append(("oo - oo = 0", "rewrite", sp.Eq(div, 0, evaluate=False)))
    # 4. a constant denominator behind a symbol that cancels, or a bound index
    Xy, Xk = unevaluated(lambda: X + y - y), unevaluated(lambda: X + k - k)
    for lhs, rhs in ((unevaluated(lambda: Xy / Xy), 1), (sp.Sum(unevaluated(lambda: Xk / Xk), (k, 1, 3)), 3)):
        with pytest.raises(ProofFailure, match="nonzero"):
            d.equal("0/0", lhs, rhs, methods=("doit",))
        forged.append(("0/0", "rewrite", sp.Eq(lhs, rhs, evaluate=False)))
    # 5. singular points that are not divisions: log(0), tan(pi/2), exp(-log 0)
    for lhs, rhs in ((unevaluated(lambda: 0 * sp.log(X)), 0), (unevaluated(lambda: 0 * sp.tan(sp.pi / 2 + X)), 0),
                     (unevaluated(lambda: X * sp.exp(-sp.log(X))), 1)):
        with pytest.raises(ProofFailure, match="nonzero|confirms"):
            d.equal("singular", lhs, rhs, methods=("simplify",))
        forged.append(("singular", "rewrite", sp.Eq(lhs, rhs, evaluate=False)))
    # 6. free_of on a random symbol, whose free symbols omit its distribution's parameters (E[X] = mu)
    import sympy.stats as stats

    mu = sp.Symbol("mu", real=True)
    EX = stats.Expectation(stats.Normal("X", mu, 1))
    d.define("E[X] for X ~ N(mu, 1)", EX)
    with pytest.raises(ProofFailure, match="random symbols"):
        d.free_of("E[X] does not involve mu", EX, [mu])
    # 7. SymPy's sign of a constant, got numerically and fooled by a hidden zero: sin(X) < 0, sign(sin X) = -1, ...
    yn = sp.Symbol("y_n", nonzero=True)
    with pytest.raises(ProofFailure, match="is_nonzero"):
        d.assumed("sin(X) is nonzero", s, "nonzero")
    with pytest.raises(ProofFailure, match="is_nonzero"):
        d.assumed("y sin(X) is nonzero", yn * s, "nonzero")
    forged.append(("sin(X) nonzero", "assumption query", sp.Q.nonzero(s)))
    for rel in (sp.Lt(s, 0, evaluate=False), sp.Ne(s, 0, evaluate=False)):
        with pytest.raises(ProofFailure, match="confirms"):
            d.true("sin(X) < 0", rel)
        forged.append(("sin(X) < 0", "exact boolean", rel))
    for jump, value in ((sp.sign, -1), (sp.Heaviside, 0), (lambda z: sp.Piecewise((1, z < 0), (2, True)), 1)):
        lhs = unevaluated(lambda: jump(s))
        with pytest.raises(ProofFailure, match="confirms"):
            d.equal("a jump at a hidden zero", lhs, value)
        forged.append(("jump", "rewrite", sp.Eq(lhs, value, evaluate=False)))
    # 8. a generic identity specialised, rewritten or instantiated at a hidden zero (SymPy cancels X/X first)
    yy = sp.Eq(unevaluated(lambda: y / y), 1, evaluate=False)
    d.equal("y/y = 1 (generic)", yy.lhs, yy.rhs)
    with pytest.raises(ProofFailure, match="not defined there"):
        d.specialize("at y = X", yy, {y: X})
    with pytest.raises(ProofFailure, match="not defined there"):
        d.rewrite_with("with y = X", yy, d.hypothesis("y = X", sp.Eq(y, X)))
    # 9. (a review of the fixes) a hidden zero inside a jump's argument behind a cancelling symbol or a bound index;
    # arg and atan2 at a hidden zero; 0/0 at a value of a sum's index
    Xy = unevaluated(lambda: X + y - y)
    for lhs, rhs in ((unevaluated(lambda: sp.sign(sp.sin(Xy))), -1), (unevaluated(lambda: sp.floor(sp.sin(Xy))), -1),
                     (sp.Sum(unevaluated(lambda: sp.sign(sp.sin(X + k - k))), (k, 1, 3)), -3),
                     (unevaluated(lambda: sp.arg(s)), sp.pi), (unevaluated(lambda: sp.atan2(s, -1)), -sp.pi)):
        with pytest.raises(ProofFailure, match="confirms"):
            d.equal("a jump at a hidden zero", lhs, rhs, methods=("doit",))
        forged.append(("jump", "rewrite", sp.Eq(lhs, rhs, evaluate=False)))
    n_ = sp.Symbol("n", integer=True, positive=True)
    for lhs, rhs in ((sp.Sum(unevaluated(lambda: k / k), (k, 0, 0)), 1), (sp.Sum(unevaluated(lambda: k / k), (k, -1, 1)), 3),
                     (sp.Sum(unevaluated(lambda: k / k), (k, -n_, n_)), 2 * n_ + 1)):
        with pytest.raises(ProofFailure, match="for k from"):
            d.equal("0/0 in a sum", lhs, rhs, methods=("doit",))
        forged.append(("0/0 in a sum", "rewrite", sp.Eq(lhs, rhs, evaluate=False)))
    d.equal("sum_{k=1}^{n} k/k = n", sp.Sum(unevaluated(lambda: k / k), (k, 1, n_)), n_, methods=("doit",))
    # what is decided is the true steps only; constants bounded away from 0 keep their signs
    d.equal("sign(pi - 3) = 1", unevaluated(lambda: sp.sign(sp.pi - 3)), 1)
    d.true("sin(1) > 0", sp.Gt(sp.sin(1), 0, evaluate=False))
    d.equal("(pi - 3)/(pi - 3) = 1", unevaluated(lambda: (sp.pi - 3) / (sp.pi - 3)), 1)
    assert [st.text for st in d.steps if st.status == "proved"] == [
        "y/y = 1 (generic)", "sum_{k=1}^{n} k/k = n", "sign(pi - 3) = 1", "sin(1) > 0", "(pi - 3)/(pi - 3) = 1"]
    result = recheck(_record_of(*forged))
    assert len(result.failures) == len(forged), [f[3] for f in result.failures]
