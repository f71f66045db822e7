"""The production-mutant harness's data: every mutant applies, its named killers are registered claims."""

from __future__ import annotations

from pathlib import Path

from pemath.claims import all_claims

from .mutation import production as P

ROOT = Path(__file__).resolve().parents[1]


def test_every_mutant_changes_one_place_and_names_registered_killers():
    names = {m.name for m in P.MUTANTS}
    assert len(names) == len(P.MUTANTS)
    for m in P.MUTANTS:
        assert (ROOT / m.path).read_text().count(m.old) == 1, m.name
    assert set(P.KILLERS) == names, "each mutant names the claims that killed it in a full run (--full prints them)"
    ids = {c.id for c in all_claims()}
    assert all(k and set(k) <= ids for k in P.KILLERS.values())
    assert set(P.JUSTIFIED) <= names
