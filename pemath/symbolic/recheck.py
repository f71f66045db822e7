"""Re-decide a record of decided steps from the formulas alone: the independent re-checker.

``pemath prove --json`` stores, for every decided step, its certificate, its method and its formula (SymPy's
``srepr``), and for every hypothesis its equation. :func:`recheck` reads such a record and decides each step again
with :func:`pemath.symbolic._certify.decide`, in order, claim by claim, each substitution or instance starting only
from the conclusions re-decided before it in the same claim and the claim's hypotheses. It imports no claim code
and runs none: ``pemath prove --recheck`` runs it in a fresh Python process (``python -m pemath.symbolic.recheck
RECORD``), which checks that no module of ``pemath.claims`` was loaded.
"""

from __future__ import annotations

import json
import re
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import sympy as sp

from ._certify import Premise, ProofFailure, conclusion, decide, dump, fixed_of, load, rests_of, used_premises

__all__ = ["Recheck", "recheck", "main", "claim_digest", "step_skeleton", "CLAIM_ID"]


@dataclass
class Recheck:
    """What the re-checker decided: ``decided`` of ``total`` decided steps re-established, and each failure as
    ``(claim id, step number, step text, reason)``."""

    decided: int = 0
    total: int = 0
    failures: list[tuple[str, int, str, str]] = field(default_factory=list)
    seconds: float = 0.0
    claims: int = 0
    checked: int = 0  # decided steps whose proposition and certificate pemath.kernel verified again
    formal: int = 0  # claims whose verdict was derived again from their formal statement
    unregistered: list[str] = field(default_factory=list)  # claims checked against themselves only
    absent: int = 0  # registered claims the record does not hold (a partial record, said so)

    @property
    def ok(self) -> bool:
        return not self.failures and self.decided == self.total

    def summary(self) -> str:
        head = (f"re-checked {self.decided}/{self.total} decided steps of {self.claims} claims from their formulas "
                f"alone in {self.seconds:.1f} s; {self.checked} of them also verified by pemath.kernel from their "
                f"propositions and certificates; {self.formal} claims' verdicts derived again from their formal "
                "statements")
        if self.absent:
            head += f"; {self.absent} claims pemath registers are not in this record"
        if self.unregistered:
            head += (f"; {len(self.unregistered)} claims pemath does not register, checked against themselves only: "
                     f"{', '.join(repr(c) for c in self.unregistered[:8])}")
        if self.ok:
            return head
        lines = [head + f"; {len(self.failures)} not re-decided:"]
        lines += [f"  {cid} step {n}: {text[:90]} ({why[:300]})" for cid, n, text, why in self.failures]
        return "\n".join(lines)


def _claims(record: Any) -> list[dict]:
    if not isinstance(record, list) or not all(isinstance(c, dict) and isinstance(c.get("steps"), list)
                                               and all(isinstance(s, dict) for s in c["steps"]) for c in record):
        raise ValueError("a record is the JSON array `pemath prove --json` prints: one object per claim, each with "
                         "its steps")
    return record


def _hypothesis(text: str) -> list[Premise]:
    """A hypothesis step's equations, each holding fixed the symbols the hypothesis does not quantify."""
    forall, eqs = load(text)
    return [Premise(e, e.free_symbols - set(forall)) for e in eqs if isinstance(e, sp.Eq)]


def _verdict_consistent(claim: dict) -> str | None:
    """The claim's recorded status against its decided steps' parts (a verdict is computed from them)."""
    decided = [s for s in claim["steps"] if s.get("status") == "proved"]
    refuted = any(s.get("part") == "counterexample" for s in decided)
    fair = any(s.get("part") == "fair reading" for s in decided)
    status = claim.get("status")
    if status in ("proved", "imprecise", "refuted") and not decided:
        return f"recorded as {status}, but no step was decided"
    if status == "proved" and refuted:
        return "recorded as proved, but a counterexample step was decided"
    if status in ("refuted", "imprecise") and not refuted:
        return f"recorded as {status}, but no counterexample step was decided"
    if status == "imprecise" and not fair:
        return "recorded as imprecise, but no step of its fair reading was decided"
    if status in ("proved", "imprecise", "refuted") and any(s.get("status") == "failed" for s in claim["steps"]):
        return f"recorded as {status}, but a step failed"
    return None


def claim_digest(kind: Any, title: Any, statement: Any, witness: Any, fair: Any, verdict: Any = None,
                 steps: Any = None, display: Any = None) -> str:
    """The SHA-256 of what a claim states (its kind, written title, and formal statement, witness and fair reading
    as JSON-ready data) and of what pemath's run of it gives (its verdict, :func:`step_skeleton` of its steps and
    :func:`display` of the record): the manifest's entry, computed the same way from the registry's run and from a
    record."""
    import hashlib

    text = json.dumps([kind, title, statement, witness, fair, verdict, steps, display], sort_keys=True,
                      separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def display(claim: dict) -> list:
    """What the manifest binds of a claim's record beyond its statement and steps: the prose a reader takes as the
    verdict's reasons (the counterexample, the fair reading, the message), the references, the family, and the
    standing assumptions of its symbols (the seventeenth audit's route 4: each could be rewritten and the record
    still re-checked)."""
    return [claim.get("counterexample"), claim.get("fair_reading"), claim.get("message"), claim.get("references"),
            claim.get("family"), claim.get("assumptions")]


#: The fields of a claim's record and of a step's (``Outcome.as_json``): any other is refused, since nothing checks it.
_CLAIM_KEYS = frozenset({"id", "pemath_version", "registry_version", "name", "title", "headline", "statement", "kind",
                         "family", "status", "seconds", "checks", "message", "counterexample", "fair_reading",
                         "references", "uses", "assumptions", "hypotheses", "steps"})
_STEP_KEYS = frozenset({"text", "status", "role", "method", "certificate", "section", "lemma", "part", "rests_on",
                        "formula", "kernel", "latex"})


def _derived_fields(claim: dict, manifest: dict) -> str | None:
    """The record's fields that are derived from what is re-checked, compared with it: the hypotheses (the texts of
    the hypothesis steps, in order), the symbolic check (the derivation's verdict), the other checks (the claim's
    own, by name, each passed or skipped unless the claim failed; their one-line results are pemath's run's report,
    not re-checked), and no LaTeX (display: ``pemath prove --json --latex`` adds it, for reading, not re-checking)."""
    steps = claim["steps"]  # a field the record leaves out states nothing; one it holds must be the derived one
    extra = sorted(set(claim) - _CLAIM_KEYS) + sorted({k for st in steps for k in st} - _STEP_KEYS)
    if isinstance(claim.get("statement"), dict):
        extra += sorted(set(claim["statement"]) - {"proposition", "witness", "fair"})
    for st in steps:
        k = st.get("kernel")
        if isinstance(k, dict):
            extra += sorted(set(k) - {"proposition", "certificate", "premises", "hypotheses", "refused"})
            extra += sorted({x for p in k.get("premises") or [] if isinstance(p, dict) for x in p}
                            - {"claim", "step", "entry"})
        if st.get("status") != "proved" and (k is not None or st.get("part") not in (None, "statement") or (
                st.get("formula") is not None and st.get("role") != "hypothesis")):
            return ("a step that is not decided holds a checker entry, a part or a formula: only a decided step "
                    "(and a hypothesis its formula) has them")
    if extra:
        return f"it holds fields a record does not have: {extra[:6]}"
    for st in steps:  # why the checker refused a step: the proposer's words, one of its refusals (the order in
        k = st.get("kernel")  # which it meets a formula's parts can vary, so the text is not bound, its form is)
        if isinstance(k, dict) and "refused" in k and (set(k) != {"refused"} or not str(k["refused"]).startswith(
                ("Untranslatable: ", "NoCertificate: ", "KernelError: ", "the proposer failed ("))):
            return f"a step's checker entry says {str(k)[:120]!r}, not a refusal of the proposer's"
    named = sorted({p.get("claim") for st in steps if st.get("certificate") == "reference"
                    and isinstance(st.get("kernel"), dict) for p in st["kernel"].get("premises") or []
                    if isinstance(p, dict)}, key=str)
    cid = claim.get("id")
    uses = manifest[cid].get("uses", []) if cid in manifest else named
    if "uses" in claim and sorted(claim["uses"], key=str) != sorted(uses, key=str):
        return f"it says it uses {claim['uses']}, but {sorted(uses, key=str)} is what it uses"
    if "hypotheses" in claim and claim["hypotheses"] != [s.get("text") for s in steps if s.get("role") == "hypothesis"]:
        return "its hypotheses are not the texts of its hypothesis steps"
    if any(s.get("latex") is not None for s in steps):
        return ("it holds LaTeX, which is display: the re-checker takes a record made without it (pemath prove "
                "--json; --latex adds it, for reading)")
    checks = claim.get("checks", {})
    status = claim.get("status")
    if not isinstance(checks, dict) or not all(isinstance(v, str) for v in checks.values()):
        return "its checks are not a mapping of names to results"
    want = {"proved": "passed", "imprecise": "refuted", "refuted": "refuted"}.get(status)
    if want is not None and checks and checks.get("symbolic") != want:
        return f"its symbolic check says {checks.get('symbolic')!r}, its verdict {status!r} gives {want!r}"
    if cid in manifest:
        own = manifest[cid].get("checks", [])
        if checks and set(checks) not in ({"symbolic"}, {"symbolic", *own}):
            return f"its checks are {sorted(checks)}, the claim's are {sorted(['symbolic', *own])}"
    if status in ("proved", "imprecise", "refuted") and not all(
            v.startswith(("passed: ", "skipped: ")) for k, v in checks.items() if k != "symbolic"):
        return f"it is {status} with a check that did not pass: {checks}"[:300]
    return None


def step_skeleton(steps: Sequence[dict]) -> list:
    """What the manifest binds of a claim's steps, in order: each step's status, role, part, certificate, the
    hypotheses it rests on, its text (a remark's text left out: it may quote a measured figure), the lemma and
    section it is shown under, what it says established it (its method), a hypothesis's formula (premises later
    steps may start from), and a reference step's premise (the used claim and step); and of a step
    the checker verified, what its proposition says (:func:`canonical`: each relation's normal form, independent of
    how SymPy prints or orders the formula it was translated from). A record with a step deleted, appended, moved,
    relabelled, replaced by another, rewritten or stripped of its checker entry fails (the ninth audit's route
    1: the counts of decided steps per part let two counterexample steps swap parts; the fourteenth audit: a
    verified step's formula replaced by x = x, its checker entry deleted)."""
    out = []
    for s in steps:
        role = s.get("role")
        k = s.get("kernel")
        premise = k.get("premises") if isinstance(k, dict) and s.get("certificate") == "reference" else None
        row = [s.get("status"), role, s.get("part") if s.get("status") == "proved" else None,
               s.get("certificate"), sorted(s.get("rests_on") or []), None if role == "remark" else s.get("text"),
               s.get("lemma"), s.get("section"), s.get("method"),
               s.get("formula") if role == "hypothesis" else None,  # premises later steps may start from
               [(p.get("claim"), p.get("step")) for p in premise if isinstance(p, dict)]
               if isinstance(premise, list) else None]
        if s.get("status") == "proved":
            row.append(canonical(k["proposition"]) if isinstance(k, dict) and "proposition" in k else None)
        out.append(row)
    return out


def _fingerprint(poly: dict) -> str:
    """A normal form as text that does not depend on the order its atoms were first met in (an application's key
    numbers them, and ``1/u`` and ``|u|`` scale u so that its key-first monomial has coefficient 1): equal
    polynomials give equal text in any process. For binding a record to a manifest."""
    import hashlib
    from fractions import Fraction

    from ..kernel.poly import _PARTS, _key

    seen: dict[str, tuple[str, Fraction]] = {}

    def poly_text(items: Any) -> str:  # (monomial, coefficient) pairs
        out = []
        for mono, c in items:
            factor, texts = Fraction(c), []
            for a, e in mono:
                text, f = atom(a)
                size = e * (f.numerator.bit_length() + f.denominator.bit_length())
                if size > 65_536:  # measured before it is built (the nineteenth audit: 3-million-bit factors, 17 s)
                    raise ValueError(f"a scaled atom's factor of about {size} bits is refused")
                factor *= f ** e
                texts.append([text, e])
            out.append([json.dumps(sorted(texts)), f"{factor.numerator}/{factor.denominator}"])
        return json.dumps(sorted(out))

    def atom(a: str) -> tuple[str, Fraction]:  # (text, f): the atom is f times the atom the text names
        if not a.startswith("@"):
            return a, Fraction(1)  # a variable or pi: its repr
        if a not in seen:
            head, *parts = _PARTS[a]
            f = Fraction(1)
            if head in ("min", "max"):  # symmetric
                body = sorted(poly_text(x) for x in parts)
            elif head in ("app", "if"):
                body = [parts[0]] + [poly_text(x) for x in parts[1:]]
            elif head == "sum":
                body = [poly_text([(parts[0], 1)]), parts[1], poly_text(parts[2]), poly_text(parts[3])]
            elif head in ("inv", "abs"):  # u scaled so that its first monomial, in text order, has coefficient 1
                terms = sorted((poly_text([(m, 1)]), c) for m, c in parts[0])
                c0 = Fraction(terms[0][1])
                f = 1 / c0 if head == "inv" else abs(c0)
                body = [poly_text([(m, Fraction(c) / c0) for m, c in parts[0]])]
            else:
                body = [poly_text(x) for x in parts]
            seen[a] = (hashlib.sha256(json.dumps([head, *body]).encode()).hexdigest(), f)  # fixed length at any depth
        return seen[a]

    return poly_text(_key(poly))


def canonical(proposition: Any) -> Any:
    """What a stored checker proposition says, as data: its binders (sorted), and each hypothesis and relation of
    its conclusion as its kind and the normal form of the difference of its sides (an equation's either way round;
    a membership or universal hypothesis as it is). Two translations of one formula give the same; for a
    proposition the checker refuses, ValueError (a record that holds one fails)."""
    from .. import kernel
    from ..kernel.poly import add_poly, budget, function_sorts, normal

    def rel(r: tuple) -> Any:
        if r[0] in ("in", "all"):
            return kernel.to_json(r)
        d = add_poly(normal(r[2]), normal(r[1]), -1)
        either = (_fingerprint(d), _fingerprint(add_poly({}, d, -1))) if r[0] in ("eq", "ne") else (_fingerprint(d),)
        return [r[0], min(either)]

    limit = sys.getrecursionlimit()
    try:  # a term 200 levels deep (the checker's limit) takes about 5 frames a level here (the fifteenth audit)
        sys.setrecursionlimit(max(limit, 4000))
        p = kernel.well_formed(kernel.from_json(proposition))
        with budget.scope(), function_sorts({b[1]: b[3] for b in p[1] if b[0] == "fun"}):
            relations = list(p[3][1:]) if p[3][0] == "and" else [p[3]]
            return [sorted(repr(b) for b in p[1]), [rel(h) for h in p[2]], [rel(r) for r in relations]]
    except Exception as exc:  # noqa: BLE001 - refused, never bound as a value two propositions could share
        raise ValueError(f"a verified step's proposition has no canonical form ({type(exc).__name__})") from None
    finally:
        sys.setrecursionlimit(limit)


#: a claim id: ASCII letters, digits, "_", "." and "-", nothing invisible or confusable (``Claim`` refuses others)
CLAIM_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]*")


def _manifest() -> dict:
    """pemath's claims manifest (``pemath/claims/manifest.json``), read as data: no claim code is imported."""
    import pathlib

    path = pathlib.Path(__file__).resolve().parents[1] / "claims" / "manifest.json"
    return json.loads(path.read_text(encoding="utf-8"))


def _registered(claim: dict, manifest: dict) -> str | None:
    """A claim whose id pemath registers must state what the manifest holds for it: its kind, written title and
    formal statement (with witness and fair reading), its name, and the verdict and the steps (:func:`step_skeleton`)
    pemath's run gives (a claim without a formal statement has its verdict bound here: the eighth audit deleted
    such a claim's counterexample and relabelled it proved). A record of other claims is checked against itself
    only, under an id and a name no registered claim has."""
    cid = claim.get("id")
    if cid not in manifest:
        # a claim pemath does not register: its id is well formed and unlike any registered one, and its name is
        # not a registered claim's (the ninth audit's route 2 re-checked a tampered record under "id " or "ID")
        if not (isinstance(cid, str) and CLAIM_ID.fullmatch(cid)):
            return f"its id {cid!r:.60} is not a claim id (ASCII letters, digits, '_', '.', '-')"
        if any(cid.casefold() == k.casefold() for k in manifest):
            return f"its id {cid!r} differs from a registered claim's only in case"
        if claim.get("name") is not None and claim.get("name") in {v["name"] for v in manifest.values()}:
            return f"it has a registered claim's name ({claim.get('name')!r}) under an id pemath does not register"
        return None
    formal = claim.get("statement") or {}
    title = claim.get("headline") if claim.get("statement") else claim.get("title")
    if claim.get("name") != manifest[cid]["name"] or claim_digest(
            claim.get("kind"), title, formal.get("proposition"), formal.get("witness"), formal.get("fair"),
            claim.get("status"), step_skeleton(claim["steps"]), display(claim)) != manifest[cid]["digest"]:
        return ("its name, kind, title, formal statement, verdict, steps (their order, parts, roles, certificates, "
                "texts, lemmas and sections), counterexample, fair reading, message, references, family or "
                "assumptions are not the ones pemath registers for it (pemath/claims/manifest.json)")
    return None


def _formal_consistent(claim: dict, verified: list[tuple[str, tuple]]) -> str | None:
    """For a claim with a formal statement: its title is generated from the statement, and its recorded verdict
    is the one derived from the statement and the steps verified here."""
    formal = claim.get("statement")
    if not formal:
        return None
    from .. import kernel
    from ..kernel.verdict import derive, title

    try:
        statement = kernel.well_formed(kernel.from_json(formal["proposition"]))
        witness = None if formal.get("witness") is None else kernel.from_json(formal["witness"])
        fair = None if formal.get("fair") is None else kernel.well_formed(kernel.from_json(formal["fair"]))
        if claim.get("title") != title(statement):
            return "the title is not the one generated from the formal statement"
        derived = derive(str(claim.get("kind")), statement, verified, witness=witness, fair=fair)
    except Exception as exc:  # any malformed statement, witness or fair reading is a failure, never a crash
        return f"the formal statement is unusable: {type(exc).__name__}: {exc}"[:300]
    if derived != claim.get("status"):
        return f"recorded as {claim.get('status')}, but its formal statement and checked steps give {derived}"
    return None


def _reference(step: dict, formula: Any, used: dict[str, dict]) -> tuple:
    """A step of certificate "reference" (:meth:`pemath.symbolic.Derivation.from_claim`): its formula holds its
    checker proposition and certificate (an instance, nothing else) and the used claim's id, the same as its
    checker entry's; that entry's one premise names the used claim and one of its steps by index, whose entry it
    holds (the index bound by the manifest: the eighteenth audit re-pointed a premise to another step of the same
    normal form), which must be a step
    verified when that claim was re-checked earlier in this record (``used``: claim id -> its verified entries'
    JSON -> theorem, only claims this one may use). Returns the (proposition, certificate, context) to verify."""
    from sympy.core.symbol import Str

    from .. import kernel

    k = step.get("kernel")
    if not (isinstance(k, dict) and isinstance(formula, sp.Tuple) and len(formula) == 3
            and all(isinstance(x, Str) for x in formula)):
        raise ProofFailure("a reference step's formula is Tuple(Str(proposition), Str(certificate), Str(claim id)) "
                           "with its checker entry")
    premises = k.get("premises")
    if not (isinstance(premises, list) and len(premises) == 1 and isinstance(premises[0], dict)
            and set(premises[0]) == {"claim", "step", "entry"} and isinstance(premises[0]["entry"], list)
            and type(premises[0]["step"]) is int):
        raise ProofFailure("a reference step's checker entry holds one premise: {'claim': id, 'step': index, "
                           "'entry': [proposition, certificate]}")
    claim_id = premises[0]["claim"]
    if json.loads(formula[0].name) != k.get("proposition") or json.loads(formula[1].name) != k.get("certificate") \
            or formula[2].name != claim_id:
        raise ProofFailure("a reference step's formula and its checker entry differ")
    certificate = kernel.from_json(k["certificate"])
    if not (isinstance(certificate, tuple) and certificate[:1] == ("instance",)):
        raise ProofFailure("a reference step's certificate is an instance of the used step")
    if claim_id not in used:
        raise ProofFailure(f"a reference step uses claim {str(claim_id)[:60]!r}, which is not one this claim may use "
                           "(the manifest's uses), re-checked earlier in this record without a failure")
    key = json.dumps(premises[0]["entry"], sort_keys=True)
    theorems, at = used[claim_id]
    if at.get(premises[0]["step"]) != key or key not in theorems:
        raise ProofFailure(f"a reference step's premise is not the step it names, verified in claim {claim_id!r}'s "
                           "record")
    return kernel.from_json(k["proposition"]), certificate, (theorems[key],)


def _kernel_check(step: dict, cert: str, formula: Any, stated: Sequence[str] = (),
                  theorems: dict | None = None, used: dict[str, dict] | None = None) -> bool:
    """Verify a step's stored checker proposition and certificate with :mod:`pemath.kernel`, after checking the
    proposition is the translation of the step's formula, under the claim's hypotheses it names (each one a
    relation of a hypothesis step recorded before it: ``stated``), so neither can be swapped alone. An instance's
    one premise is the checker entry of a step verified before it in the same claim (``theorems``: each entry's
    JSON to its theorem, which this adds the step's to), never a theorem the record brings along. False when the
    record holds none for the step (decided by the SymPy kernel alone); raises when it holds one that fails."""
    from .. import kernel
    from . import bridge

    k = step.get("kernel")
    if cert == "reference":
        prop, certificate, context = _reference(step, formula, used or {})
        try:
            theorem = kernel.check(prop, certificate, context)
        except kernel.KernelError as exc:
            raise ProofFailure(f"pemath.kernel refuses the stored certificate: {exc}") from None
        if theorems is not None:
            theorems[json.dumps([k["proposition"], k["certificate"]], sort_keys=True)] = theorem
        return True
    if not isinstance(k, dict) or "proposition" not in k:
        return False
    prop, certificate = kernel.from_json(k["proposition"]), kernel.from_json(k["certificate"])
    named = k.get("hypotheses") or []
    # each named relation, read back as the hypothesis steps' are (a stored formula is rebuilt by SymPy: compare
    # the forms it rebuilds, never the strings as written)
    if not isinstance(named, list) or not all(isinstance(h, str) and (h in stated or dump(load(h)) in stated)
                                              for h in named):
        raise ProofFailure("the step's checker entry names a hypothesis the claim does not state before it")
    try:
        translated = bridge.proposition(cert, formula, [load(h) for h in named])
    except bridge.Untranslatable as exc:
        raise ProofFailure(f"the record holds a checker proposition for a formula that has none ({exc})") from None
    if translated != prop and not kernel.same(translated, prop):
        raise ProofFailure("the stored checker proposition is not the translation of the step's formula")
    theorems = {} if theorems is None else theorems
    premises = k.get("premises") or []
    if premises and (cert != "instance" or not isinstance(premises, list) or len(premises) != 1):
        raise ProofFailure("only an instance's checker entry holds a premise, exactly one (the thirteenth audit: "
                           "premises added to a record were checked, and the record passed)")
    context = ()
    if premises:
        key = json.dumps(premises[0], sort_keys=True)
        if key not in theorems:
            raise ProofFailure("an instance's premise is not the checker entry of a step verified before it in this "
                               "claim")
        context = (theorems[key],)
    try:
        theorem = kernel.check(prop, certificate, context)
    except kernel.KernelError as exc:
        raise ProofFailure(f"pemath.kernel refuses the stored certificate: {exc}") from None
    theorems[json.dumps([k["proposition"], k["certificate"]], sort_keys=True)] = theorem
    return True


def recheck(record: Sequence[dict]) -> Recheck:
    """Re-decide every decided step of ``record`` (the parsed output of ``pemath prove --json``), and check each
    claim's recorded verdict and each step's recorded hypotheses (``rests_on``) against what is re-decided."""
    out = Recheck()
    t0 = time.perf_counter()
    manifest = _manifest()
    rechecked: dict[str, dict] = {}  # each claim re-checked without a failure: its verified entries' theorems
    for claim in _claims(record):
        out.claims += 1
        cid = str(claim.get("id"))
        failures_before = len(out.failures)
        may_use = manifest[cid].get("uses", []) if cid in manifest else list(rechecked)
        used = {u: rechecked[u] for u in may_use if u in rechecked}
        earlier: list[Premise] = []
        sources: list[tuple[Premise, tuple[str, ...]]] = []
        verified: list[tuple[str, tuple]] = []  # (part, proposition) of the steps pemath.kernel verified here
        theorems: dict = {}  # each verified step's checker entry (JSON) to its theorem: an instance's premise
        at: dict[int, str] = {}  # each verified step's index in the claim's steps to its entry's JSON
        stated: list[str] = []  # the relations of the claim's hypotheses recorded so far
        for n, step in enumerate(claim["steps"], 1):
            text = str(step.get("text", ""))
            try:
                if step.get("role") == "hypothesis":
                    if step.get("status") != "info":
                        raise ProofFailure("a hypothesis is narrated (status info), never decided")
                    if step.get("formula"):
                        for prem in _hypothesis(step["formula"]):
                            earlier.append(prem)
                            sources.append((prem, (text,)))
                        stated += [dump(r) for r in load(step["formula"])[1]]
                    continue
                if step.get("status") not in ("info", "proved", "failed"):
                    raise ProofFailure(f"a step's status is info, proved or failed, got {step.get('status')!r}")
                if step.get("status") != "proved":
                    continue
                out.total += 1
                if not step.get("formula"):
                    raise ProofFailure("the record holds no formula for this decided step")
                formula = load(step["formula"])
                cert = step.get("certificate")
                method = step.get("method")
                if cert != "reference":  # a reference is decided in the claim it uses (re-checked before it)
                    got = decide(cert, formula, method if cert in ("rewrite", "interval") else None, earlier,
                                 strict=False)
                    # what a step states it was established by is re-derived, where that is the step's own text:
                    # an enclosure, an assumption query's facts, an enumeration's count, a solution set (the
                    # seventeenth audit's route 4 rewrote the enclosures); a rewrite's, a substitution's and an
                    # instance's method name the route SymPy took, which a loaded formula may take otherwise
                    if cert not in ("rewrite", "closed on construction", "substitution", "instance") and got != method:
                        raise ProofFailure(f"the record says it was established by {str(method)[:120]!r}; "
                                           f"re-deciding it gives {str(got)[:120]!r}")
                elif method != "pemath.kernel":
                    raise ProofFailure("a reference step is established by pemath.kernel")
                fixed = fixed_of(cert, formula, earlier)
                rests = list(rests_of(used_premises(cert, formula), sources))
                if sorted(rests) != sorted(step.get("rests_on") or []):
                    raise ProofFailure(f"the record says it rests on {step.get('rests_on')}, the premises on {rests}")
                if _kernel_check(step, cert, formula, stated, theorems, used):
                    out.checked += 1
                    at[n - 1] = json.dumps([step["kernel"]["proposition"], step["kernel"]["certificate"]],
                                           sort_keys=True)
                    from ..kernel import from_json

                    verified.append((str(step.get("part")), from_json(step["kernel"]["proposition"])))
                prem = Premise(conclusion(cert, formula), fixed)
                earlier.append(prem)
                sources.append((prem, tuple(rests)))
                out.decided += 1
            except Exception as exc:  # noqa: BLE001 - any failure to re-decide a step is that step's failure
                out.failures.append((cid, n, text, f"{type(exc).__name__}: {exc}"))
        if cid not in manifest:
            out.unregistered.append(str(cid))
        try:
            why = (_verdict_consistent(claim) or _registered(claim, manifest) or _derived_fields(claim, manifest)
                   or _formal_consistent(claim, verified))
        except Exception as exc:  # a malformed record fails, never crashes the re-checker
            why = f"unusable: {type(exc).__name__}: {exc}"[:300]
        if why:
            out.failures.append((cid, 0, "the verdict", why))
        if claim.get("statement"):
            out.formal += 1
        if len(out.failures) == failures_before and isinstance(claim.get("id"), str):
            rechecked[cid] = (theorems, at)
    held = {c.get("id") for c in _claims(record)}
    out.absent = sum(1 for cid in manifest if cid not in held)
    out.seconds = time.perf_counter() - t0
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m pemath.symbolic.recheck [--registered-only] RECORD.json``: exit 0 when every decided step is
    re-decided (and, with ``--registered-only``, every claim is one pemath registers: ``pemath prove --recheck``
    re-checks what pemath itself just ran)."""
    args = list(sys.argv[1:] if argv is None else argv)
    registered_only = "--registered-only" in args
    args = [a for a in args if a != "--registered-only"]
    if len(args) != 1:
        print("usage: python -m pemath.symbolic.recheck [--registered-only] RECORD.json (the output of pemath prove "
              "--json)", file=sys.stderr)
        return 2
    try:
        with open(args[0], encoding="utf-8") as fh:
            record = json.load(fh)
        result = recheck(record)
    except (OSError, ValueError, RecursionError) as exc:  # RecursionError: JSON nested too deep (the fourteenth audit)
        print(f"recheck: unusable record {args[0]!r}: {type(exc).__name__}: {str(exc)[:200]}", file=sys.stderr)
        return 2
    loaded = sorted(m for m in sys.modules if m.startswith("pemath.claims"))
    # a record's ids and texts are printed as they are, but a lone surrogate (valid JSON) cannot be encoded
    print(result.summary().encode("utf-8", "backslashreplace").decode("utf-8"))
    if loaded:
        print(f"recheck: claim code was loaded ({', '.join(loaded)}): not an independent re-check", file=sys.stderr)
        return 1
    if registered_only and result.unregistered:
        print(f"recheck: {len(result.unregistered)} claims are not registered by pemath", file=sys.stderr)
        return 1
    return 0 if result.ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
