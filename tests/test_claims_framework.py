"""The claim machinery: a proof decides, a failure is loud, the report is complete."""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys

import pytest
import sympy as sp

from pemath import claims
from pemath.claims import Check, CheckFailure, Claim, Skip, Verdict
from pemath.symbolic import Derivation, ProofFailure, reduce_to_zero

x, y = sp.symbols("x y", real=True)


def test_reduce_to_zero_decides_and_refuses():
    assert reduce_to_zero(sp.sin(x + y) - sp.sin(x) * sp.cos(y) - sp.cos(x) * sp.sin(y))[0]
    assert reduce_to_zero(sp.cos(x) ** 2 + sp.sin(x) ** 2 - 1)[0]
    ok, how, residual = reduce_to_zero(sp.sin(x + y) - sp.sin(x) * sp.cos(y))
    assert not ok and how is None and residual != 0
    assert reduce_to_zero(sp.Matrix([[x - x, 0], [0, sp.exp(x) * sp.exp(y) - sp.exp(x + y)]]))[0]
    assert not reduce_to_zero(sp.Matrix([[0, 0], [0, x]]))[0]


def test_derivation_steps_fail_loudly():
    d = Derivation("demo")
    d.equal("a true identity", sp.cos(2 * x), 1 - 2 * sp.sin(x) ** 2)
    with pytest.raises(ProofFailure, match="not proved: a false identity"):
        d.equal("a false identity", sp.cos(2 * x), 1 - sp.sin(x) ** 2)
    assert [s.status for s in d.steps] == ["proved", "failed"]
    with pytest.raises(ProofFailure):
        d.true("an undecided relation is not a proof", sp.Gt(x, 0))
    for bare in (False, True):  # a Python bool carries no certificate: refused, even True
        with pytest.raises(TypeError, match="takes an unevaluated SymPy relation"):
            d.true("a bare bool is not a proof", bare)
    p = sp.Symbol("p", positive=True)
    with pytest.raises(ProofFailure, match="already evaluated"):  # SymPy decided it on construction: no formula
        d.true("decided with assumptions", sp.Gt(p, 0))
    d.true("decided with assumptions", sp.Gt(p, 0, evaluate=False))
    assert d.steps[-1].certificate == "exact boolean" and d.steps[-1].formula == sp.Gt(p, 0, evaluate=False)


def test_every_decided_step_carries_its_certificate_and_formula():
    from pemath.symbolic._decide import CERTIFICATES, unevaluated

    p = sp.Symbol("p", positive=True)
    k = sp.Symbol("k", integer=True, nonnegative=True)
    d = Derivation("certificates")
    d.equal("built as zero", unevaluated(lambda: sp.cos(x) - sp.cos(x)), sp.S.Zero)
    d.equal("a rewrite", sp.cos(2 * x), 1 - 2 * sp.sin(x) ** 2)
    d.enumerated("squares of 0..4 are below 17", k, range(5), sp.Lt(k**2, 17))
    d.assumed("p^2 + 1 is positive", p**2 + 1, "positive")
    d.free_of("the rewrite's right side is free of p", 1 - 2 * sp.sin(x) ** 2, {p})
    d.solved("p^2 = 4 over p > 0 (p's own assumption) has the one solution 2", sp.Eq(p**2, 4), p, [2])
    d.interval("sqrt(2) > 141/100 from an enclosure", sp.sqrt(2), ">", sp.Rational(141, 100), digits=15)
    kinds = [s.certificate for s in d.steps]
    assert kinds == ["closed on construction", "rewrite", "enumeration", "assumption query", "free symbols",
                     "solution set", "interval"]
    assert set(kinds) <= set(CERTIFICATES) and d.steps[2].method == "5 cases"
    assert d.steps[3].method.startswith("is_positive from: p ") and "positive" in d.steps[3].method
    assert all(s.formula is not None and s.record() for s in d.steps)


@pytest.mark.parametrize("make", [
    lambda d: d.zero("a float inside the expression", sp.cos(sp.Float(0.5) * x) - sp.cos(x / 2)),
    lambda d: d.enumerated("one case fails", sp.Symbol("k", integer=True), range(3),
                           sp.Lt(sp.Symbol("k", integer=True), 2)),
    lambda d: d.assumed("x is not known positive", x, "positive"),
    lambda d: d.free_of("x involves x", 2 * x, {x}),
    lambda d: d.solved("x^2 = 4 over the reals has two solutions", sp.Eq(x**2, 4), x, [2]),
    lambda d: d.interval("enclosures that cannot separate equal numbers decide nothing", sp.sqrt(2) ** 2, ">", 2,
                         digits=15),
    lambda d: d.interval("a bare bool is no expression", True, ">", 0, digits=15),
    lambda d: d.interval("a float is no exact expression", sp.Integer(2), ">", 1.5, digits=15),
])
def test_each_certificate_can_fail(make):
    with pytest.raises((ProofFailure, TypeError)):
        make(Derivation("failing"))


def test_prove_json_carries_each_steps_certificate():
    import json

    out = json.loads(claims.to_json([claims.run_claim(c, checks=False) for c in claims.all_claims()[:6]]))
    steps = [s for o in out for s in o["steps"] if s["status"] == "proved"]
    assert steps and all(s["certificate"] for s in steps)


def _claim(proof, *checks, kind="theorem"):
    return Claim(id="demo.x", title="demo", kind=kind, family="demo", statement=lambda: sp.S.true,
                 proof=proof, checks=tuple(checks))


def _decided(title="ok", part="statement"):
    d = Derivation(title)
    with d.part(part):
        d.equal("double angle", sp.cos(2 * x), 1 - 2 * sp.sin(x) ** 2)
    return d


def _ok():
    return Verdict(_decided())


def _raise(exc):
    def f():
        raise exc
    return f


def test_runner_statuses():
    assert claims.run_claim(_claim(_ok)).status == "proved"
    assert claims.run_claim(_claim(_raise(ProofFailure("nope")))).status == "failed"
    assert claims.run_claim(_claim(_raise(ZeroDivisionError("bug")))).status == "error"
    cx = lambda: Verdict(_decided("r", "counterexample"), "x = 1")  # noqa: E731
    refuted = claims.run_claim(_claim(cx, kind="published claim"))
    assert refuted.status == "refuted" and refuted.counterexample == "x = 1"
    # a refuted theorem is a failure, not a verdict
    assert claims.run_claim(_claim(cx)).status == "failed"
    # checks: a failing check fails the claim, an erroring one errors it, a skip is recorded
    o = claims.run_claim(_claim(_ok, Check("numeric", _raise(CheckFailure("off by 1")))))
    assert o.status == "failed" and o.checks["numeric"].startswith("failed")
    o = claims.run_claim(_claim(_ok, Check("numeric", _raise(KeyError("k")))))
    assert o.status == "error"
    o = claims.run_claim(_claim(_ok, Check("cupy", _raise(Skip("no GPU"))), Check("numeric", lambda: "3 examples")))
    assert o.status == "proved" and o.checks == {"symbolic": "passed", "cupy": "skipped: no GPU",
                                                 "numeric": "passed: 3 examples"}
    assert claims.exit_code([o]) == 0
    assert claims.exit_code([o, claims.run_claim(_claim(_raise(ProofFailure("x"))))]) == 1


def test_registry_ids_are_unique_and_complete():
    every = claims.all_claims()
    ids = [c.id for c in every]
    assert len(ids) == len(set(ids))
    for c in every:
        assert c.kind in ("theorem", "published claim")
        assert c.references, f"{c.id} has no reference"
        assert isinstance(c.statement(), sp.Basic), f"{c.id}'s statement is not a SymPy object"
    with pytest.raises(ValueError, match="unknown claim id"):
        claims.get("no.such.claim")


def test_prove_cli_json_and_exit_code():
    out = subprocess.run([sys.executable, "-m", "pemath.cli", "prove", "rope.relative", "--json"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert [d["id"] for d in data] == ["rope.relative"]
    for key in ("id", "title", "kind", "status", "seconds", "checks"):
        assert key in data[0]
    assert data[0]["name"] == "RoPE's score depends only on the relative position"
    assert data[0]["status"] == "proved" and data[0]["checks"]["numeric"].startswith("passed")
    bad = subprocess.run([sys.executable, "-m", "pemath.cli", "prove", "nonexistent"], capture_output=True, text=True)
    assert bad.returncode == 2 and "unknown claim id" in bad.stderr


def test_every_registered_claim_has_a_name_in_words():
    """The docs' tables and headings show Claim.name: words, no ASCII math (the title keeps that)."""
    bad = {c.id: c.name for c in claims.all_claims() if not c.name or re.search(r"[\^_*<>=|{}\\]", c.name)}
    assert bad == {}
    names = [c.name for c in claims.all_claims()]
    assert len(set(names)) == len(names), "two claims share a name"
    c = claims.get("rope.relative")
    assert c.display_name == c.name and dataclasses.replace(c, name=None).display_name == c.title
    with pytest.raises(TypeError, match="Claim name must be a non-empty string"):
        dataclasses.replace(c, name="")


@pytest.mark.parametrize("bad", ["demo x", "demo.x ", "demo.x\u200b", "démo.x"])
def test_a_claim_id_the_recheck_cannot_read_is_refused_at_construction(bad):
    with pytest.raises(ValueError, match="id"):
        Claim(id=bad, title="demo", kind="theorem", family="demo", statement=lambda: sp.S.true, proof=lambda: None)
    Claim(id="lab.claim-2_b", title="demo", kind="theorem", family="demo", statement=lambda: sp.S.true,
          proof=lambda: None)
