"""Inputs for the numeric cross-checks: hypothesis when installed, else a seeded generator.

Hypothesis (installed with ``pemath[test]``) searches and shrinks; without it the
checks still run on a fixed seeded sample that includes the edge values. The check's
summary says which drove it.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ._model import CheckFailure

__all__ = ["Ints", "Floats", "Choice", "for_all"]


@dataclass(frozen=True)
class Ints:
    lo: int
    hi: int


@dataclass(frozen=True)
class Floats:
    lo: float
    hi: float


@dataclass(frozen=True)
class Choice:
    values: Sequence[Any]


def _strategy(spec: Any) -> Any:
    from hypothesis import strategies as st

    if isinstance(spec, Ints):
        return st.integers(spec.lo, spec.hi)
    if isinstance(spec, Floats):
        return st.floats(spec.lo, spec.hi, allow_nan=False, allow_infinity=False)
    return st.sampled_from(list(spec.values))


def _draw(spec: Any, rng: random.Random, edge: int) -> Any:
    if isinstance(spec, Ints):
        edges = [spec.lo, spec.hi, 0 if spec.lo <= 0 <= spec.hi else spec.lo]
        return edges[edge] if edge < len(edges) else rng.randint(spec.lo, spec.hi)
    if isinstance(spec, Floats):
        edges = [spec.lo, spec.hi]
        return edges[edge] if edge < len(edges) else rng.uniform(spec.lo, spec.hi)
    vals = list(spec.values)
    return vals[edge] if edge < len(vals) else rng.choice(vals)


def for_all(check: Callable[..., None], /, *, examples: int = 40, **specs: Any) -> str:
    """Run ``check(**drawn)`` on many inputs; raise CheckFailure naming the failing input.

    Every keyword but ``examples`` names an argument of ``check`` and its input spec
    (so a check may well have an argument called ``seed``). The inputs are
    reproducible: hypothesis runs derandomized, the fallback uses a fixed seed.
    Returns a summary such as ``"40 hypothesis examples"``.
    """
    try:
        from hypothesis import HealthCheck, given, settings
    except ImportError:
        rng = random.Random(0)
        for n in range(examples):
            kw = {k: _draw(v, rng, n) for k, v in specs.items()}
            try:
                check(**kw)
            except AssertionError as exc:
                raise CheckFailure(f"fails at {kw}: {exc}") from exc
        return f"{examples} seeded examples"

    @settings(
        max_examples=examples,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        report_multiple_bugs=False,
    )
    @given(**{k: _strategy(v) for k, v in specs.items()})
    def run(**kw: Any) -> None:
        check(**kw)

    try:
        run()
    except AssertionError as exc:
        raise CheckFailure(f"hypothesis found a counterexample: {exc}") from exc
    return f"{examples} hypothesis examples"
