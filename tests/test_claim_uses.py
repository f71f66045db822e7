"""A claim uses another claim's result only by reference (Claim.uses): the checker follows it, the re-checker finds
it in the used claim's record, and the report shows the graph (issue 32)."""

from __future__ import annotations

import copy
import json

import pytest
import sympy as sp

from pemath import claims, kernel
from pemath.claims._model import Claim, Verdict
from pemath.claims._registry import register
from pemath.claims.report import uses_line
from pemath.symbolic import Derivation, ProofFailure
from pemath.symbolic._decide import using
from pemath.symbolic.recheck import recheck

USER, USED = "vaswani.wavelengths", "sinusoidal.wavelengths"


@pytest.fixture(scope="module")
def record():
    outs = claims.run_claims([claims.get(USED), claims.get(USER)], checks=False)
    return outs, json.loads(claims.to_json(outs, latex=False))


def _refs(claim_record):
    return [i for i, s in enumerate(claim_record["steps"]) if s["certificate"] == "reference"]


def test_the_fair_reading_is_used_from_the_claim_that_proves_it(record):
    outs, rec = record
    assert [o.status for o in outs] == ["proved", "imprecise"]
    assert outs[1].uses == (USED,) and rec[1]["uses"] == [USED]
    refs = _refs(rec[1])
    assert len(refs) == 4 and all(rec[1]["steps"][i]["part"] == "fair reading" for i in refs)
    assert uses_line(outs) == f"claims used by claims: {USER} -> {USED} (4 reference steps)"
    assert uses_line(outs[:1]) == "claims used by claims: none"


def test_the_record_of_both_rechecks(record):
    result = recheck(record[1])
    assert result.ok, result.failures


def test_a_reference_without_the_used_claims_record_fails(record):
    result = recheck([record[1][1]])
    assert not result.ok
    assert any("not one this claim may use" in f[3] for f in result.failures)


def test_a_reference_to_a_step_the_used_claim_did_not_verify_fails(record):
    rec = copy.deepcopy(record[1])
    step = rec[1]["steps"][_refs(rec[1])[0]]
    other = rec[1]["steps"][_refs(rec[1])[1]]  # the premise of another reference: verified, but not this one's
    step["kernel"]["premises"][0]["entry"][1] = ["instance", 0, []]  # an entry that is no verified step of USED
    result = recheck(rec)
    assert any("not the step it names, verified in claim" in f[3] for f in result.failures)
    rec = copy.deepcopy(record[1])
    step = rec[1]["steps"][_refs(rec[1])[0]]
    step["kernel"]["premises"] = copy.deepcopy(other["kernel"]["premises"])  # the checker refuses the instance
    assert any("refuses" in f[3] for f in recheck(rec).failures)


def test_a_reference_whose_formula_and_entry_differ_fails(record):
    rec = copy.deepcopy(record[1])
    step = rec[1]["steps"][_refs(rec[1])[0]]
    step["kernel"]["premises"][0]["claim"] = "pi.theorem_2_1"
    assert any("formula and its checker entry differ" in f[3] for f in recheck(rec).failures)


def test_a_used_claim_whose_record_fails_is_not_used(record):
    rec = copy.deepcopy(record[1])
    rec[0]["status"] = "refuted"  # the used claim's record no longer re-checks
    result = recheck(rec)
    assert any(f[0] == USER and "not one this claim may use" in f[3] for f in result.failures)


def test_a_reference_outside_a_claim_that_uses_the_other_fails():
    d = Derivation("uses nothing")
    prop = ("forall", (("var", "x", "real"),), (), ("eq", ("var", "x", "real"), ("var", "x", "real")))
    with pytest.raises(ProofFailure, match="is not one this claim uses"):
        d.from_claim("x = x", USED, prop)


def test_a_proposition_the_used_claim_did_not_verify_fails():
    x = ("var", "x", "pos")
    with using({USED: [{"step": 0, "proposition": kernel.to_json(("forall", (x,), (), ("lt", ("num", 0, 1), x))),
                         "certificate": kernel.to_json(("sign",))}]}):
        d = Derivation("uses one")
        with pytest.raises(ProofFailure, match="no verified step"):
            d.from_claim("0 < x + 1", USED, ("forall", (x,), (), ("lt", ("num", 0, 1), ("add", x, ("num", 1, 1)))))
        d.from_claim("0 < x", USED, ("forall", (x,), (), ("lt", ("num", 0, 1), x)))
        assert d.steps[-1].certificate == "reference"
        # an entry that does not verify is never used
    with using({USED: [{"step": 0, "proposition": kernel.to_json(("forall", (), (), ("lt", ("num", 1, 1),
                                                                                   ("num", 0, 1)))),
                         "certificate": kernel.to_json(("eval",))}]}):
        with pytest.raises(ProofFailure, match="refuses"):
            Derivation("uses a false one").from_claim("1 < 0", USED, ("forall", (), (), ("lt", ("num", 1, 1),
                                                                                           ("num", 0, 1))))


def _claim(cid, uses, kind="theorem", formal=True):
    return Claim(id=cid, title="t", kind=kind, family="test", statement=lambda: sp.true,
                 proof=lambda: Verdict(Derivation("d")), uses=uses,
                 formal=(lambda: ("forall", (), (), ("eq", ("num", 0, 1), ("num", 0, 1)))) if formal else None)


def test_uses_are_claims_registered_before_theorems_with_formal_statements():
    with pytest.raises(ValueError, match="not registered before it"):
        register(_claim("test.uses_later", ("test.not_yet",)))
    with pytest.raises(ValueError, match="not a theorem with a formal statement"):
        register(_claim("test.uses_published", ("pi.theorem_2_1",)))
    with pytest.raises(ValueError, match="never the claim itself"):
        _claim("test.self", ("test.self",))
    with pytest.raises(TypeError, match="tuple of claim ids"):
        _claim("test.bad", "sinusoidal.wavelengths")


def test_the_command_line_runs_a_used_claim_before_its_user(capsys):
    from pemath.cli import main

    assert main(["prove", "--no-checks", USER]) == 0
    out = capsys.readouterr().out
    assert out.index(USED) < out.index(USER) and f"{USER} -> {USED} (4 reference steps)" in out
