"""The claim registry: every derivation bound to its numeric and high-precision checks."""

from ._model import Check, CheckFailure, Claim, Outcome, Skip, Verdict
from ._registry import all_claims, get, register, registry_version
from ._runner import run_claim, run_claims
from ._script import family_main
from .report import exit_code, narrate, summary_line, table, to_json

__all__ = [
    "Claim",
    "Check",
    "CheckFailure",
    "Skip",
    "Verdict",
    "Outcome",
    "register",
    "all_claims",
    "get",
    "registry_version",
    "run_claim",
    "run_claims",
    "family_main",
    "table",
    "to_json",
    "narrate",
    "summary_line",
    "exit_code",
]
