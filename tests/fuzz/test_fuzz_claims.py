"""Fuzzing the claim registry API, the symbolic helpers that take user input, and the CLI."""

from __future__ import annotations

import contextlib
import io
import json
from typing import Any

import pytest
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st

from pemath import claims, cli
from pemath.claims import Check, Claim, Outcome, Verdict
from pemath.symbolic import Derivation, Step, reduce_to_zero

from ._fuzz import H, Spec, _junk, bools, covers, fuzz_settings, maybe, reject, run_spec, valid

x = sp.Symbol("x", real=True)


def _ok() -> Verdict:
    d = Derivation("demo")
    d.equal("double angle", sp.cos(2 * x), 1 - 2 * sp.sin(x) ** 2)
    return Verdict(d)


def _claim(**kw: Any) -> Claim:
    args = {"id": "fuzz.demo", "title": "demo", "kind": "theorem", "family": "fuzz", "statement": lambda: sp.S.true,
            "proof": _ok, "checks": (Check("numeric", lambda: "1 example"),), "references": ("nowhere",)}
    args.update(kw)
    return Claim(**args)


def _text_kind(base: dict[str, Any]) -> st.SearchStrategy[H]:
    # a string from the junk pool ("4") is a valid name: only the non-strings are junk here
    junk = _junk().map(lambda h: maybe(h.value) if isinstance(h.value, str) else h)
    return st.one_of(st.sampled_from([valid("a.b"), reject(""), reject(3), reject(["a"]), reject(b"a")]), junk)


def _check_claim(result: Any, kw: dict[str, Any]) -> None:
    assert isinstance(result, Claim)
    o = claims.run_claim(result)
    assert o.status == "proved" and all(v.startswith("passed") for v in o.checks.values())


CLAIM = Spec(
    _claim,
    st.just({}),
    {"id": _text_kind, "title": _text_kind, "family": _text_kind,
     "kind": lambda b: st.sampled_from([valid("theorem"), maybe("published claim"), reject("lemma"), reject(None),
                                        reject(1), reject(["theorem"])]),
     "statement": lambda b: st.sampled_from([valid(lambda: sp.S.true), reject(None), reject("x > 0"), reject(3)]),
     "proof": lambda b: st.sampled_from([valid(_ok), reject(None), reject(True), reject("proof")]),
     "checks": lambda b: st.sampled_from([valid(()), reject([Check("n", lambda: "")]), reject(("numeric",)),
                                          reject(None), reject(Check("n", lambda: ""))]),
     "references": lambda b: st.sampled_from([valid(()), valid(("a", "b")), reject("ref"), reject([1]),
                                              reject((1,)), reject(None)])},
    _check_claim,
)


def _check_check(result: Any, kw: dict[str, Any]) -> None:
    assert isinstance(result, Check) and isinstance(result.run(), str)


CHECK = Spec(Check, st.just({"name": "numeric", "run": lambda: "ok"}),
             {"name": _text_kind,
              "run": lambda b: st.sampled_from([valid(lambda: "ok"), reject(None), reject("ok"), reject(3)])},
             _check_check)

def _decided() -> Derivation:
    d = Derivation("d")
    d.equal("double angle", sp.cos(2 * x), 1 - 2 * sp.sin(x) ** 2)
    return d


# a verdict is computed from its derivation's decided steps: a counterexample text needs a decided counterexample
VERDICT = Spec(Verdict, st.just({"derivation": _decided(), "counterexample": None}),
               {"derivation": lambda b: st.sampled_from([valid(_decided()), reject(Derivation("empty")),
                                                         reject(None), reject("d"), reject(True)]),
                "counterexample": lambda b: st.sampled_from(
                    [valid(None), reject("x = 1"), reject(1), reject(["x"]), reject(b"x")])},
               lambda r, kw: r.holds is True and r.fair_holds is None)


def _outcome_list_kind(base: dict[str, Any]) -> st.SearchStrategy[H]:
    good = claims.run_claim(_claim())
    return st.one_of(st.sampled_from([valid([good]), valid((good,)), valid([]), reject(good), reject("proved"),
                                      reject([good, None]), reject(None), reject([{"id": "x"}]), reject(3),
                                      reject({good.id: good})]), _junk())


def _check_report(result: Any, kw: dict[str, Any]) -> None:
    assert isinstance(result, (str, int))


REPORTS = {name: Spec(getattr(claims, name), st.just({"outcomes": [claims.run_claim(_claim())]}),
                      {"outcomes": _outcome_list_kind}, _check_report)
           for name in ("table", "to_json", "summary_line", "exit_code")}

NARRATE = Spec(claims.narrate, st.just({"outcome": claims.run_claim(_claim()), "latex": False}),
               {"outcome": lambda b: st.one_of(st.sampled_from([valid(b["outcome"]), reject([b["outcome"]]),
                                                                reject("o"), reject(None)]), _junk()),
                "latex": bools()}, _check_report)


def _check_outcome(result: Any, kw: dict[str, Any]) -> None:
    assert isinstance(result, Outcome)
    json.dumps(result.as_json())
    claims.narrate(result)


RUN_CLAIM = Spec(claims.run_claim, st.just({"claim": _claim(), "checks": True}),
                 {"claim": lambda b: st.one_of(st.sampled_from([valid(b["claim"]), reject("fuzz.demo"),
                                                                reject([b["claim"]]), reject(None)]), _junk()),
                  "checks": bools()}, _check_outcome)
RUN_CLAIMS = Spec(claims.run_claims, st.just({"claims": [_claim()], "checks": False}),
                  {"claims": lambda b: st.one_of(st.sampled_from([valid([_claim()]), valid(()), valid(iter([_claim()])),
                                                                  reject(_claim()), reject(["fuzz.demo"]),
                                                                  reject("fuzz.demo"), reject(None)]), _junk()),
                   "checks": bools()}, lambda r, kw: all(isinstance(o, Outcome) for o in r))


def _check_get(result: Any, kw: dict[str, Any]) -> None:
    assert isinstance(result, Claim) and result.id == kw["claim_id"]


GET = Spec(claims.get, st.just({"claim_id": "rope.relative"}),
           {"claim_id": lambda b: st.one_of(st.sampled_from([maybe("rope.relative"), reject("no.such.claim"),
                                                             reject(""), reject(["rope.relative"]), reject(3)]),
                                            _junk())},
           _check_get)

REGISTER = Spec(claims.register, st.just({"claim": None}),
                {"claim": lambda b: st.one_of(st.sampled_from([reject("x"), reject(None), reject({"id": "x"}),
                                                               reject(claims.get("rope.relative"))]), _junk())},
                lambda r, kw: None)


def _family_main(**kw: Any) -> Any:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            return claims.family_main(**kw)
        except SystemExit as exc:  # argparse's documented exit on a bad command line
            return ("exit", exc.code)


FAMILY_MAIN = Spec(_family_main, st.just({"family": "no-such-family", "argv": []}),
                   {"family": lambda b: st.one_of(st.sampled_from([valid("no-such-family"), valid(""), reject(3),
                                                                   reject(["t5"])]),
                                                  _junk().filter(lambda h: not isinstance(h.value, str))),
                    "argv": lambda b: st.sampled_from([valid([]), valid(None), maybe(["--bogus"]), maybe(["--latex"]),
                                                       reject("--latex"), reject([3]), reject(3), reject([None])])},
                   lambda r, kw: None)


def _check_reduce(result: Any, kw: dict[str, Any]) -> None:
    ok, how, residual = result
    assert isinstance(ok, bool) and (how is None) == (not ok)


REDUCE = Spec(reduce_to_zero, st.just({"expr": sp.cos(x) ** 2 + sp.sin(x) ** 2 - 1, "methods": None}),
              {"expr": lambda b: st.sampled_from(
                  [valid(b["expr"]), valid(sp.Integer(0)), valid(0), reject(1.5), reject(sp.Float(2) * x),
                   valid(sp.Matrix([[x - x]])),
                   reject("x - x"), reject("__import__('os')"), reject(None), reject([x]), reject({"x": 1}),
                   reject(sp.Eq(x, x)), reject(object()), reject(b"x")]),
               "methods": lambda b: st.sampled_from(
                   [valid(None), valid(["expand"]), valid(("trigsimp", "simplify")), valid([]), reject("expand"),
                    reject(["nope"]), reject([3]), reject(3), reject({"expand": 1})])},
              _check_reduce)


def _step_check(result: Any, kw: dict[str, Any]) -> None:
    assert isinstance(result, Step)
    result.pretty()
    result.latex()


STEP = Spec(Step, st.just({"text": "t", "expr": x, "status": "info", "method": None, "certificate": None,
                           "role": "definition"}),
            {"text": lambda b: st.sampled_from([valid("t"), valid(""), reject(3), reject(None)]),
             # a proved step without a certificate is refused: it would not say what decided it; a role belongs to
             # narrated steps only
             "status": lambda b: st.sampled_from([valid("info"), reject("proved"), reject("failed"), reject("done"),
                                                  reject(None), reject(1)]),
             # a narrated step says what it is, so no reader takes it for proof
             "role": lambda b: st.sampled_from([valid("definition"), valid("hypothesis"), valid("remark"),
                                                valid("cited"), reject(None), reject("proof"), reject(1),
                                                reject(["remark"])]),
             "method": lambda b: st.sampled_from([valid(None), valid("expand"), reject(3), reject(["expand"])]),
             "certificate": lambda b: st.sampled_from([valid(None), valid("rewrite"), valid("interval"),
                                                       reject("proof"), reject("unverified boolean"), reject(1),
                                                       reject(["rewrite"])])},
            _step_check)

DERIVATION = Spec(Derivation, st.just({"title": "t"}),
                  {"title": lambda b: st.sampled_from([valid("t"), reject(3), reject(None), reject(["t"])])},
                  lambda r, kw: None)


def _cli(argv: Any) -> Any:
    with contextlib.redirect_stdout(io.StringIO()) as out, contextlib.redirect_stderr(io.StringIO()) as err:
        try:
            code = cli.main(argv)
        except SystemExit as exc:  # argparse: usage errors exit 2 with a message on stderr
            assert exc.code in (0, 2), exc.code
            if exc.code == 2:
                assert err.getvalue().strip(), "a usage error without a message"
            return ("exit", exc.code)
    del out
    return code


_CLI_ARGVS = [
    valid(["inv-freq", "--head-dim", "8"]), valid(["inv-freq", "--head-dim", "8", "--base", "100"]),
    valid(["prove", "--list"]), valid([]), valid(["--version"]),
    maybe(["inv-freq", "--head-dim", "7"]), maybe(["inv-freq", "--head-dim", "-2"]),
    maybe(["inv-freq", "--head-dim", "99999999999999999999"]), maybe(["inv-freq", "--head-dim", "8", "--base", "nan"]),
    maybe(["inv-freq", "--head-dim", "8", "--base", "inf"]), maybe(["inv-freq", "--head-dim", "8", "--base", "-1"]),
    maybe(["inv-freq", "--head-dim", "8", "--base", "1e-320"]), maybe(["inv-freq", "--head-dim", "x"]),
    maybe(["inv-freq"]), maybe(["nope"]), maybe(["prove", "no.such.claim"]), maybe(["prove", "--list", "--json"]),
    maybe(["prove", "--bogus"]), maybe(["inv-freq", "--head-dim", "2097152"]), maybe(["\x00"]),
    reject("prove"), reject(3), reject([3]), reject(["inv-freq", None]), reject(b"prove"),
]


@covers("pemath.cli.main")
@fuzz_settings()
@given(st.data())
def test_cli(data):
    spec = Spec(_cli, st.just({"argv": ["prove", "--list"]}), {"argv": lambda b: st.sampled_from(_CLI_ARGVS)},
                lambda r, kw: None)
    run_spec(spec, data)


SPECS = {
    "pemath.claims.Claim": CLAIM,
    "pemath.claims.Check": CHECK,
    "pemath.claims.Verdict": VERDICT,
    "pemath.claims.table": REPORTS["table"],
    "pemath.claims.to_json": REPORTS["to_json"],
    "pemath.claims.summary_line": REPORTS["summary_line"],
    "pemath.claims.exit_code": REPORTS["exit_code"],
    "pemath.claims.narrate": NARRATE,
    "pemath.claims.run_claim": RUN_CLAIM,
    "pemath.claims.run_claims": RUN_CLAIMS,
    "pemath.claims.get": GET,
    "pemath.claims.register": REGISTER,
    "pemath.claims.family_main": FAMILY_MAIN,
    "pemath.symbolic.reduce_to_zero": REDUCE,
    "pemath.symbolic.Step": STEP,
    "pemath.symbolic.Derivation": DERIVATION,
}


@covers(*SPECS)
@pytest.mark.parametrize("name", sorted(SPECS))
@fuzz_settings(0.5)
@given(data=st.data())
def test_claims_api(name, data):
    run_spec(SPECS[name], data)
