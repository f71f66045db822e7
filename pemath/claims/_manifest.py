"""The claims' manifest: what each registered claim states, hashed, for the re-checker that loads no claim code.

``pemath/claims/manifest.json`` maps each claim id to its name and the SHA-256 of its kind, its written title
and, for a claim with a formal statement, the statement, witness and fair reading (the checker's plain data),
with the verdict pemath's run gives it and the skeleton of that run's steps (each one's status, role, part,
certificate, the hypotheses it rests on and its text; a remark's text left out), and the claims it uses
(``Claim.uses``: the only ones its reference steps may name). The re-checker compares a
record against it, so a record whose statement, title, kind or verdict was replaced, whose formal statement
was deleted, or with a step deleted, appended, moved, relabelled or rewritten fails; a record of an unregistered
claim may not carry a registered claim's name or an id that differs from one only in case. Regenerate it with ``python -m pemath.claims._manifest`` after changing a
claim (a test fails until it matches the registry).
"""

from __future__ import annotations

import json
import pathlib
from collections.abc import Sequence
from typing import Any

from ..symbolic.recheck import claim_digest as digest
from ..symbolic.recheck import display, step_skeleton

__all__ = ["PATH", "digest", "build", "main"]

PATH = pathlib.Path(__file__).with_name("manifest.json")


def build(outcomes: Sequence[Any] | None = None) -> dict[str, dict[str, str]]:
    """The manifest of the registered claims, from ``outcomes`` (``run_claims(all_claims(), checks=False)``, run
    here when not given)."""
    from ..kernel import to_json
    from ._registry import all_claims
    from ._runner import run_claims

    claims = all_claims()
    runs = run_claims(claims, checks=False) if outcomes is None else list(outcomes)
    if [o.id for o in runs] != [c.id for c in claims]:
        raise ValueError("outcomes must be the registered claims' runs, in the registry's order")
    out = {}
    for c, o in zip(claims, runs):
        j = lambda f: None if f is None else to_json(f())  # noqa: E731
        record = o.as_json(latex=False)
        out[c.id] = {"name": c.name, "digest": digest(c.kind, c.title, j(c.formal), j(c.witness), j(c.fair),
                                                      o.status, step_skeleton(record["steps"]), display(record)),
                     "checks": [k.name for k in c.checks]}
        if c.uses:  # the claims its reference steps may use (the re-checker allows no other)
            out[c.id]["uses"] = list(c.uses)
    return dict(sorted(out.items()))


def main() -> None:
    PATH.write_text(json.dumps(build(), indent=1) + "\n", encoding="utf-8")
    print(f"wrote {PATH}")


if __name__ == "__main__":
    main()
