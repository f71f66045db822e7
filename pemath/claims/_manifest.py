"""The claims' manifest: what each registered claim states, hashed, for the re-checker that loads no claim code.

``pemath/claims/manifest.json`` maps each claim id to the SHA-256 of its kind, its written title and, for a
claim with a formal statement, the statement, witness and fair reading (the checker's plain data). The
re-checker compares a record against it, so a record whose statement, title or kind was replaced, or whose
formal statement was deleted, fails. Regenerate it with ``python -m pemath.claims._manifest`` after changing a
claim (a test fails until it matches the registry).
"""

from __future__ import annotations

import json
import pathlib

from ..symbolic.recheck import claim_digest as digest

__all__ = ["PATH", "digest", "build", "main"]

PATH = pathlib.Path(__file__).with_name("manifest.json")


def build() -> dict[str, str]:
    """The manifest of the registered claims."""
    from ..kernel import to_json
    from ._registry import all_claims

    out = {}
    for c in all_claims():
        j = lambda f: None if f is None else to_json(f())  # noqa: E731
        out[c.id] = digest(c.kind, c.title, j(c.formal), j(c.witness), j(c.fair))
    return dict(sorted(out.items()))


def main() -> None:
    PATH.write_text(json.dumps(build(), indent=1) + "\n", encoding="utf-8")
    print(f"wrote {PATH}")


if __name__ == "__main__":
    main()
