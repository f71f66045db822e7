"""The registry of claims, in the order they were registered."""

from __future__ import annotations

import importlib

from ._model import Claim

__all__ = ["register", "all_claims", "get", "FAMILIES"]

_CLAIMS: dict[str, Claim] = {}

#: Modules of pemath.claims that define claims, loaded on first use.
FAMILIES = (
    "sinusoidal",
    "rope_relative",
    "rope_forms",
    "rope_calculus",
    "scaling",
    "multidim",
    "xpos",
    "alibi",
    "t5",
    "pedagogy",
    "rope_derivation",
    "rope_decay",
    "published",
    "failures",
)


def register(claim: Claim) -> Claim:
    if not isinstance(claim, Claim):
        raise TypeError(f"claim must be a pemath.claims.Claim, got {claim!r}")
    if claim.id in _CLAIMS:
        raise ValueError(f"claim id {claim.id!r} is registered twice")
    _CLAIMS[claim.id] = claim
    return claim


def _load() -> None:
    for fam in FAMILIES:
        importlib.import_module(f"pemath.claims.{fam}")


def all_claims() -> list[Claim]:
    _load()
    return list(_CLAIMS.values())


def get(claim_id: str) -> Claim:
    if not isinstance(claim_id, str):
        raise TypeError(f"claim_id must be a string, got {claim_id!r} ({type(claim_id).__name__})")
    _load()
    try:
        return _CLAIMS[claim_id]
    except KeyError:
        known = ", ".join(sorted(_CLAIMS))
        raise ValueError(f"unknown claim id {claim_id!r} (claim_id); known ids: {known}") from None
