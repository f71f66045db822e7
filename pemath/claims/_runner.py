"""Running claims: decide the proof, run the checks, time it all."""

from __future__ import annotations

import time
import traceback
from collections.abc import Iterable
from typing import Any

import sympy as sp

from ..symbolic._certify import known_facts
from ..symbolic._decide import ProofFailure, using
from ._model import CheckFailure, Claim, Outcome, Skip

__all__ = ["run_claim", "run_claims"]


def _assumes_more(claim: Claim, derivation: Any) -> str | None:
    """A decided step whose symbol has the name of one of the statement's symbols but more declared properties:
    the proof would assume what the statement does not say (a property smuggled in through the assumptions)."""
    statement = claim.statement()
    if not isinstance(statement, sp.Basic):
        return None
    want: dict[str, set[str]] = {}
    for s in statement.free_symbols:
        if isinstance(s, sp.Symbol):
            want.setdefault(s.name, set(known_facts(s)))
    for step in derivation.steps:
        if step.status != "proved" or not isinstance(step.formula, sp.Basic):
            continue
        for s in step.formula.free_symbols:
            if not isinstance(s, sp.Symbol) or s.name not in want:
                continue
            extra = set(known_facts(s)) - want[s.name]
            if extra:
                return (f"the step {step.text[:80]!r} declares {s.name} {', '.join(sorted(extra))}, "
                        f"which the statement's {s.name} is not: the proof assumes more than the statement says")
    return None


def checked_steps(derivation: Any) -> list[tuple[str, tuple]]:
    """``(part, proposition)`` of every step of ``derivation`` that pemath.kernel verified."""
    from ..kernel import from_json

    return [(s.part, from_json(s.kernel["proposition"])) for s in derivation.steps
            if s.status == "proved" and isinstance(s.kernel, dict) and "proposition" in s.kernel]


def _formal_verdict(claim: Claim, out: Outcome, derivation: Any) -> None:
    """The verdict derived from the formal statement and the checked steps; the claim fails where it differs
    from the derivation's own (a statement that says more than is checked, or a counterexample to another)."""
    from ..kernel import well_formed
    from ..kernel.verdict import derive, title

    out.statement = well_formed(claim.formal())
    out.witness = None if claim.witness is None else claim.witness()
    out.fair = None if claim.fair is None else well_formed(claim.fair())
    out.headline, out.title = claim.title, title(out.statement)
    derived = derive(claim.kind, out.statement, checked_steps(derivation), witness=out.witness, fair=out.fair)
    if derived != out.status:
        raise ProofFailure(f"the formal statement's verdict is {derived!r}, the derivation's {out.status!r}: the "
                           f"statement says more than the checked steps establish ({out.title[:300]})")


#: The checker entries of the verified steps of each claim proved in this process ({id: (claim, entries)}), for
#: the claims that use it (Claim.uses); filled by run_claim.
_PROVED: dict[str, tuple[Claim, list[dict]]] = {}


def _verified_entries(derivation: Any) -> list[dict]:
    """Each verified step's checker entry, with the step's index in the derivation (``{"step": i, **entry}``)."""
    return [{"step": i, **s.kernel} for i, s in enumerate(derivation.steps)
            if s.status == "proved" and isinstance(s.kernel, dict) and "proposition" in s.kernel]


def _used(claim: Claim) -> dict[str, list[dict]]:
    """The verified steps of each claim ``claim`` uses, from this process's run of it (run here, without its
    checks, when it has not run yet); a used claim that is not proved is left out (the step that needs it fails,
    saying so)."""
    from ._registry import get

    out = {}
    for cid in claim.uses:
        used = get(cid)
        if _PROVED.get(cid, (None,))[0] is not used:
            run_claim(used, checks=False)
        if _PROVED.get(cid, (None,))[0] is used:
            out[cid] = _PROVED[cid][1]
    return out


def run_claim(claim: Claim, *, checks: bool = True) -> Outcome:
    """Run one claim: its proof (decided by the kernel), then, with ``checks``, its numeric and mpmath
    cross-checks; the :class:`Outcome` holds the verdict, the derivation and the timing."""
    if not isinstance(claim, Claim):
        raise TypeError(f"claim must be a pemath.claims.Claim, got {claim!r}")
    if not isinstance(checks, bool):
        raise TypeError(f"checks must be True or False, got {checks!r}")
    t0 = time.perf_counter()
    out = Outcome(claim.id, claim.title, claim.kind, claim.family, "error", 0.0, references=claim.references,
                  name=claim.display_name)
    out.uses = claim.uses
    _PROVED.pop(claim.id, None)  # proved again below, or not
    try:
        if claim.uses:
            with using(_used(claim)):
                verdict = claim.proof()
        else:
            verdict = claim.proof()
        out.derivation = verdict.derivation
        clash = _assumes_more(claim, verdict.derivation)
        if clash:
            raise ProofFailure(clash)
        if verdict.holds:
            out.status = "proved"
        elif claim.kind == "published claim":
            out.status = "imprecise" if verdict.fair_holds else "refuted"
            out.counterexample = verdict.counterexample
            if verdict.fair_reading is not None:
                out.fair_reading = ("proved: " if verdict.fair_holds else "refuted: ") + verdict.fair_reading
        else:
            out.status = "failed"
            out.message = f"theorem refuted: {verdict.counterexample}"
        out.checks["symbolic"] = "passed" if verdict.holds else "refuted"
        if claim.formal is not None:
            _formal_verdict(claim, out, verdict.derivation)
        if out.status == "proved":
            _PROVED[claim.id] = (claim, _verified_entries(verdict.derivation))
    except ProofFailure as exc:
        out.status = "failed"
        out.message = str(exc)
        out.checks["symbolic"] = "failed"
    except Exception as exc:  # an error in the proof code is reported, never hidden
        out.status = "error"
        out.message = f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=4)}"
        out.checks["symbolic"] = "error"
    if checks:
        for check in claim.checks:
            try:
                out.checks[check.name] = "passed: " + check.run()
            except Skip as exc:
                out.checks[check.name] = f"skipped: {exc}"
            except CheckFailure as exc:
                out.checks[check.name] = f"failed: {exc}"
                if out.status in ("proved", "imprecise", "refuted"):
                    out.status = "failed"
                    out.message = f"{check.name} check failed: {exc}"
            except Exception as exc:
                out.checks[check.name] = f"error: {type(exc).__name__}: {exc}"
                if out.status != "failed":
                    out.status = "error"
                    out.message = f"{check.name} check raised {type(exc).__name__}: {exc}"
    out.seconds = time.perf_counter() - t0
    return out


def run_claims(claims: Iterable[Claim], *, checks: bool = True) -> list[Outcome]:
    """:func:`run_claim` for each claim, in order."""
    if isinstance(claims, (str, bytes, Claim)) or not isinstance(claims, Iterable):
        raise TypeError(f"claims must be an iterable of Claim (e.g. all_claims()), got {claims!r}")
    claims = list(claims)
    bad = [c for c in claims if not isinstance(c, Claim)]
    if bad:
        raise TypeError(f"claims must hold pemath.claims.Claim objects, got {bad[0]!r}")
    return [run_claim(c, checks=checks) for c in claims]
