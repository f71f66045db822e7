"""What every ``proofs/*.py`` script runs: narrate one family's derivations, fail loudly."""

from __future__ import annotations

import argparse
import sys

from .._pipes import quiet_on_closed_pipe
from ._registry import all_claims
from ._runner import run_claim
from .report import exit_code, narrate, summary_line, terminal_width

__all__ = ["family_main"]


def _check_argv(argv: object) -> None:
    if argv is None:
        return
    if isinstance(argv, (str, bytes)) or not isinstance(argv, (list, tuple)) or not all(
        isinstance(a, str) for a in argv
    ):
        raise TypeError(f"argv must be None or a list of strings, got {argv!r}")


def family_main(family: str, argv: list[str] | None = None) -> int:
    """The command line of a ``proofs/*.py`` script: run one family's claims, print them, return the exit code."""
    if not isinstance(family, str):
        raise TypeError(f"family must be a string (a proofs/ script name), got {family!r}")
    _check_argv(argv)
    return quiet_on_closed_pipe(lambda: _family_main(family, argv))


def _family_main(family: str, argv: list[str] | None) -> int:
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
        print(narrate(o, latex=args.latex, width=terminal_width()), flush=True)
        print()
    print(summary_line(outcomes))
    return exit_code(outcomes)
