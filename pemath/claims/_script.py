"""What every ``proofs/*.py`` script runs: narrate one family's derivations, fail loudly."""

from __future__ import annotations

import argparse
import sys

from ._registry import all_claims
from ._runner import run_claim
from .report import exit_code, narrate, summary_line

__all__ = ["family_main"]


def family_main(family: str, argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=f"Narrate and decide pemath's {family} claims.")
    parser.add_argument("--latex", action="store_true", help="formulas as LaTeX instead of pretty text")
    args = parser.parse_args(argv)
    claims = [c for c in all_claims() if c.family == family]
    if not claims:
        print(f"no claims registered for family {family!r}", file=sys.stderr)
        return 2
    outcomes = []
    for c in claims:
        o = run_claim(c)
        outcomes.append(o)
        print(narrate(o, latex=args.latex), flush=True)
        print()
    print(summary_line(outcomes))
    return exit_code(outcomes)
