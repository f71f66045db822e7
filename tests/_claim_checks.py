"""Helpers for the tests that feed wrong implementations to the claims' numeric checks."""

from __future__ import annotations

import pytest

from pemath.claims import CheckFailure, get


def check_of(claim_id: str, name: str):
    """The ``run`` function of check ``name`` of claim ``claim_id``."""
    return next(c.run for c in get(claim_id).checks if c.name == name)


def rejects(run) -> None:
    """``run()`` must fail with CheckFailure: the check rejected the wrong implementation."""
    try:
        run()
    except CheckFailure:
        return
    pytest.fail("the check accepted a wrong implementation")


_ALL: list = []


def all_outcomes() -> tuple:
    """Every registered claim run once per test session (symbolic proofs, no numeric checks): ``(claim, outcome)``
    pairs, shared by the tests that read every claim's record (each reads it, none changes it)."""
    from pemath import claims

    if not _ALL:
        cs = claims.all_claims()
        _ALL.extend(zip(cs, claims.run_claims(cs, checks=False)))
    return tuple(_ALL)
