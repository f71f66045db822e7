"""What a claim is: one statement used three ways (proved, checked numerically, checked in high precision)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from ..symbolic import Derivation

__all__ = ["Claim", "Check", "Verdict", "Outcome", "CheckFailure", "Skip", "KINDS", "STATUSES"]

KINDS = ("theorem", "published claim")
#: A theorem is "proved" (or "failed"); a published claim is "proved", "imprecise" (false as stated, but a fair
#: reading of it is proved: an end point off, a word too strong) or "refuted" (false as stated, and its fair reading
#: refuted or none exists). "error" is a defect in pemath's own proof code.
STATUSES = ("proved", "imprecise", "refuted", "failed", "error")


def _text(owner: str, name: str, value: Any, *, optional: bool = False) -> None:
    if optional and value is None:
        return
    if not isinstance(value, str) or not value:
        raise TypeError(f"{owner} {name} must be a non-empty string, got {value!r} ({type(value).__name__})")


def _callable(owner: str, name: str, value: Any) -> None:
    if not callable(value):
        raise TypeError(f"{owner} {name} must be callable, got {value!r} ({type(value).__name__})")


class CheckFailure(AssertionError):
    """A numeric or high-precision check found a disagreement."""


class Skip(Exception):
    """A check cannot run here (e.g. no CUDA device); the message says why."""


@dataclass(frozen=True)
class Verdict:
    """What a proof decided, computed from its derivation's decided steps (never passed in as a bool).

    ``holds`` is True when no decided step refutes the statement (none in the ``"counterexample"`` part, see
    :meth:`pemath.symbolic.Derivation.part`), False when one does (a published claim shown false);
    ``counterexample`` says in words how it fails, and is required exactly when it fails. ``fair_holds`` is True
    when the derivation decided steps in the ``"fair reading"`` part: the fair reading of a false published claim
    is proved; False when a fair reading is stated but no step decides it.
    """

    derivation: Any
    counterexample: str | None = None
    fair_reading: str | None = None

    def __post_init__(self) -> None:

        if not isinstance(self.derivation, Derivation):
            raise TypeError(f"Verdict derivation must be a pemath.symbolic.Derivation, got {self.derivation!r}")
        if not any(s.status == "proved" for s in self.derivation.steps):
            raise ValueError(f"Verdict: the derivation {self.derivation.title!r} decided no step: nothing is proved")
        failed = [s.text for s in self.derivation.steps if s.status == "failed"]
        if failed:
            raise ValueError(f"Verdict: the derivation {self.derivation.title!r} has a step that failed "
                             f"({failed[0][:120]!r}): a verdict is never drawn from a derivation that did not decide")
        if self.counterexample is not None and not isinstance(self.counterexample, str):
            raise TypeError(f"Verdict counterexample must be None or a string, got {self.counterexample!r}")
        if self.fair_reading is not None and not isinstance(self.fair_reading, str):
            raise TypeError(f"Verdict fair_reading must be None or a string, got {self.fair_reading!r}")
        if self.holds != (self.counterexample is None):
            raise ValueError(f"Verdict counterexample describes a decided counterexample step: the derivation "
                             f"{'decided none' if self.holds else 'decided one'}, and counterexample is "
                             f"{self.counterexample!r}")
        if self.holds and self.fair_reading is not None:
            raise ValueError(f"Verdict fair_reading is for a claim false as stated, got a statement that holds and "
                             f"fair_reading={self.fair_reading!r}")

    def _decided(self, part: str) -> bool:
        return any(s.status == "proved" and s.part == part for s in self.derivation.steps)

    @property
    def holds(self) -> bool:
        return not self._decided("counterexample")

    @property
    def fair_holds(self) -> bool | None:
        return None if self.fair_reading is None else self._decided("fair reading")


@dataclass(frozen=True)
class Check:
    """A cross-check: ``run()`` returns a one-line summary or raises CheckFailure / Skip."""

    name: str  # "numeric", "cupy", "mpmath", ...
    run: Callable[[], str]

    def __post_init__(self) -> None:
        _text("Check", "name", self.name)
        _callable("Check", "run", self.run)


@dataclass(frozen=True)
class Claim:
    """A registered claim.

    Parameters
    ----------
    id : str
        Stable identifier, e.g. ``"rope.relative"``.
    title : str
    kind : {"theorem", "published claim"}
        A theorem must be proved; a published claim is checked and given a verdict.
    family : str
        The proofs/ script that narrates it (``sinusoidal``, ``rope_relative``, ...).
    statement : callable
        Returns the statement as a SymPy object (for display and for the docs).
    proof : callable
        Returns a :class:`Verdict`; raises ProofFailure if a step does not decide.
    checks : tuple of Check
    references : tuple of str
    formal : callable, optional
        Returns the claim's formal statement: a proposition of :mod:`pemath.kernel` (quantifiers with their sorts,
        hypotheses, conclusion). When given, the verdict is derived from it and the steps the checker verified
        (:func:`pemath.kernel.verdict.derive`), the record's title is generated from it, and ``pemath prove
        --recheck`` derives the verdict again; a claim whose steps do not establish it fails.
    witness : callable, optional
        For a published claim with a formal statement found false: returns ``(relation index, ((name, term),
        ...))``, the point where the statement fails; a checked counterexample step must prove exactly
        :func:`pemath.kernel.verdict.counterexample` of the statement there.
    fair : callable, optional
        For such a claim: its fair reading as a proposition, established by the "fair reading" steps.
    uses : tuple of str, optional
        Ids of claims registered before this one whose verified steps this claim's proof may use
        (:meth:`pemath.symbolic.Derivation.from_claim`): a claim uses another's result only through such a
        reference, which the checker follows (the used step's theorem is the context of an instance) and the
        re-checker checks against the used claim's record; the report shows the graph.
    name : str, optional
        A short name in words, without formulas (``"RoPE's score depends only on the relative
        position"``): the docs' tables and headings show it, where the title's ASCII math would not
        read well. Every registered claim has one; without it the title is shown.
    """

    id: str
    title: str
    kind: str
    family: str
    statement: Callable[[], Any]
    proof: Callable[[], Verdict]
    checks: tuple[Check, ...] = ()
    references: tuple[str, ...] = ()
    name: str | None = None
    formal: Callable[[], Any] | None = None
    witness: Callable[[], Any] | None = None
    fair: Callable[[], Any] | None = None
    uses: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for fname in ("formal", "witness", "fair"):
            if getattr(self, fname) is not None:
                _callable("Claim", fname, getattr(self, fname))
        if (self.witness is not None or self.fair is not None) and self.formal is None:
            raise ValueError("Claim witness and fair need a formal statement (formal=)")
        for name in ("id", "title", "family"):
            _text("Claim", name, getattr(self, name))
        from ..symbolic.recheck import CLAIM_ID

        if not CLAIM_ID.fullmatch(self.id):
            raise ValueError(f"Claim id must be ASCII letters, digits, '_', '.' and '-' (the re-checker reads no other), "
                             f"got {self.id!r}")
        _text("Claim", "name", self.name, optional=True)
        if not isinstance(self.kind, str):
            raise TypeError(f"kind must be one of {KINDS}, got {self.kind!r}")
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {self.kind!r}")
        _callable("Claim", "statement", self.statement)
        _callable("Claim", "proof", self.proof)
        if not isinstance(self.checks, tuple) or not all(isinstance(c, Check) for c in self.checks):
            raise TypeError(f"Claim checks must be a tuple of Check, got {self.checks!r}")
        if not isinstance(self.references, tuple) or not all(isinstance(r, str) for r in self.references):
            raise TypeError(f"Claim references must be a tuple of strings, got {self.references!r}")
        if not isinstance(self.uses, tuple) or not all(isinstance(u, str) for u in self.uses):
            raise TypeError(f"Claim uses must be a tuple of claim ids, got {self.uses!r}")
        if len(set(self.uses)) != len(self.uses) or self.id in self.uses:
            raise ValueError(f"Claim uses names each other claim once and never the claim itself, got {self.uses!r}")

    @property
    def display_name(self) -> str:
        """The name the docs show: :attr:`name`, or the title where there is none."""
        return self.name or self.title


@dataclass
class Outcome:
    """The result of running one claim."""

    id: str
    title: str
    kind: str
    family: str
    status: str
    seconds: float
    checks: dict[str, str] = field(default_factory=dict)
    message: str = ""
    counterexample: str | None = None
    derivation: Any = None
    references: tuple[str, ...] = ()
    fair_reading: str | None = None
    name: str | None = None  # the claim's name in words (Claim.display_name)
    #: the formal statement (a pemath.kernel proposition), its witness and fair reading, when the claim has one:
    #: then ``title`` is generated from it and the claim's written title is ``headline``
    statement: Any = None
    witness: Any = None
    fair: Any = None
    headline: str | None = None
    uses: tuple[str, ...] = ()  # the claims whose verified steps this one's proof used (Claim.uses)

    def as_json(self, *, latex: bool = True) -> dict[str, Any]:
        """The outcome as JSON-ready data; ``latex=False`` leaves out each step's LaTeX (the re-checker's record
        needs the formulas only, and LaTeX of a large formula is slow)."""
        steps = []
        if self.derivation is not None:
            for s in self.derivation.steps:
                steps.append({"text": s.text, "status": s.status, "role": s.role, "method": s.method,
                              "certificate": s.certificate, "section": s.section, "lemma": s.lemma, "part": s.part,
                              "rests_on": list(s.rests_on), "formula": s.record(), "kernel": s.kernel,
                              "latex": s.latex() if latex else None})
        from .. import __version__
        from ._registry import registry_version

        from ..kernel import to_json

        formal = None if self.statement is None else {
            "proposition": to_json(self.statement),
            "witness": None if self.witness is None else to_json(self.witness),
            "fair": None if self.fair is None else to_json(self.fair)}
        return {
            "id": self.id,
            "pemath_version": __version__,
            "registry_version": registry_version(),
            "name": self.name,
            "title": self.title,
            "headline": self.headline,
            "statement": formal,
            "kind": self.kind,
            "family": self.family,
            "status": self.status,
            "seconds": round(self.seconds, 4),
            "checks": self.checks,
            "message": self.message,
            "counterexample": self.counterexample,
            "fair_reading": self.fair_reading,
            "references": list(self.references),
            "uses": list(self.uses),
            "assumptions": [] if self.derivation is None else [
                {"symbol": name, "facts": list(facts)} for name, facts in self.derivation.assumptions()],
            "hypotheses": [] if self.derivation is None else [
                s.text for s in self.derivation.steps if s.role == "hypothesis"],
            "steps": steps,
        }
