"""What a claim is: one statement used three ways (proved, checked numerically, checked in high precision)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Claim", "Check", "Verdict", "Outcome", "CheckFailure", "Skip", "KINDS", "STATUSES"]

KINDS = ("theorem", "published claim")
STATUSES = ("proved", "refuted", "failed", "error")


class CheckFailure(AssertionError):
    """A numeric or high-precision check found a disagreement."""


class Skip(Exception):
    """A check cannot run here (e.g. no CUDA device); the message says why."""


@dataclass(frozen=True)
class Verdict:
    """What a proof decided.

    ``holds`` is True for a proved statement, False for a refuted one (a published
    claim shown false); ``counterexample`` says how it fails. ``derivation`` is the
    :class:`pemath.symbolic.Derivation` with the narrated steps.
    """

    holds: bool
    derivation: Any
    counterexample: str | None = None


@dataclass(frozen=True)
class Check:
    """A cross-check: ``run()`` returns a one-line summary or raises CheckFailure / Skip."""

    name: str  # "numeric", "cupy", "mpmath", ...
    run: Callable[[], str]


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
    """

    id: str
    title: str
    kind: str
    family: str
    statement: Callable[[], Any]
    proof: Callable[[], Verdict]
    checks: tuple[Check, ...] = ()
    references: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {self.kind!r}")


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

    def as_json(self) -> dict[str, Any]:
        steps = []
        if self.derivation is not None:
            for s in self.derivation.steps:
                steps.append({"text": s.text, "status": s.status, "method": s.method, "latex": s.latex()})
        return {
            "id": self.id,
            "title": self.title,
            "kind": self.kind,
            "family": self.family,
            "status": self.status,
            "seconds": round(self.seconds, 4),
            "checks": self.checks,
            "message": self.message,
            "counterexample": self.counterexample,
            "references": list(self.references),
            "steps": steps,
        }
