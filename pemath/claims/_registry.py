"""The registry of claims, in the order they were registered."""

from __future__ import annotations

import importlib

from ._model import Claim

__all__ = ["register", "all_claims", "get", "registry_version", "FAMILIES"]

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
    """Add a claim to the registry (its id must be new); returns it, so it can decorate a module-level claim."""
    if not isinstance(claim, Claim):
        raise TypeError(f"claim must be a pemath.claims.Claim, got {claim!r}")
    if claim.id in _CLAIMS:
        raise ValueError(f"claim id {claim.id!r} is registered twice")
    for used in claim.uses:  # registered before it: the graph of uses has no cycle, by construction
        if used not in _CLAIMS:
            raise ValueError(f"claim {claim.id!r} uses {used!r}, which is not registered before it (a claim uses only "
                             "claims registered earlier)")
        if _CLAIMS[used].kind != "theorem" or _CLAIMS[used].formal is None:
            raise ValueError(f"claim {claim.id!r} uses {used!r}, which is not a theorem with a formal statement")
    _CLAIMS[claim.id] = claim
    return claim


def _load() -> None:
    for fam in FAMILIES:
        importlib.import_module(f"pemath.claims.{fam}")


def all_claims() -> list[Claim]:
    """Every registered claim, in registration order (the families of ``FAMILIES`` are loaded first)."""
    _load()
    return list(_CLAIMS.values())


def get(claim_id: str) -> Claim:
    """The registered claim with this id (``ValueError`` naming the known ids otherwise)."""
    if not isinstance(claim_id, str):
        raise TypeError(f"claim_id must be a string, got {claim_id!r} ({type(claim_id).__name__})")
    _load()
    try:
        return _CLAIMS[claim_id]
    except KeyError:
        known = ", ".join(sorted(_CLAIMS))
        raise ValueError(f"unknown claim id {claim_id!r} (claim_id); known ids: {known}") from None


def registry_version() -> str:
    """The claim registry's version: the number of claims and a digest of every claim's id, title, kind, family,
    references and the source of its statement and proof (any change to what a claim says or how it is proved
    changes it). ``pemath prove --json`` records it with pemath's version, so a cited verdict can be reproduced.

    Examples
    --------
    >>> from pemath.claims import registry_version
    >>> registry_version().split()[1]
    'claims,'
    """
    import hashlib
    import inspect

    claims = sorted(all_claims(), key=lambda c: c.id)
    key = tuple((c.id, id(c)) for c in claims)
    if key in _VERSIONS:
        return _VERSIONS[key]
    h = hashlib.sha256()
    for c in claims:
        for part in (c.id, c.title, c.kind, c.family, *c.references):
            h.update(part.encode() + b"\0")
        for fn in (c.statement, c.proof):
            try:
                h.update(inspect.getsource(fn).encode())
            except (OSError, TypeError):  # no source (a lambda built at run time): its name stands in
                h.update(getattr(fn, "__qualname__", repr(fn)).encode())
    _VERSIONS[key] = f"{len(claims)} claims, sha256 {h.hexdigest()[:16]}"
    return _VERSIONS[key]


#: registry_version's answers, by the registered claims (a claim registered later changes the key).
_VERSIONS: dict[tuple, str] = {}
