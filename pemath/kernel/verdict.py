"""A claim's verdict, derived from its formal statement and the propositions the checker verified; never read.

A claim states a proposition (:mod:`pemath.kernel.check`). Against the checked steps of its derivation, each
tagged with the part of the verdict it bears on ("statement", "counterexample", "fair reading"):

* the statement is *established* when every relation of its conclusion is the conclusion (or one relation of
  the conclusion) of a checked "statement" step whose hypotheses are among the statement's and whose binders
  are among the statement's;
* it is *refuted* when a checked "counterexample" step proves exactly :func:`counterexample` of it at the
  witness the claim names: the statement's hypotheses at the witness, and the negation of one of its relations
  there, all closed;
* a published claim refuted whose fair reading (a proposition too) is established is *imprecise*.

:func:`derive` gives "proved", "refuted", "imprecise" or "failed"; the runner and the re-checker both call it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .check import MALFORMED, _in_sort, _plain, _same_rel, well_formed
from .poly import budget
from .rules import negated
from .terms import KernelError, refusing, show_proposition, substitute_relation

__all__ = ["negation", "counterexample", "established", "derive", "title"]


@refusing
def negation(r: tuple) -> tuple:
    return negated(r, "a relation to negate")


def _relations(concl: tuple) -> list[tuple]:
    return list(concl[1:]) if concl[0] == "and" else [concl]


@refusing
def counterexample(statement: tuple, witness: Any) -> tuple:
    """The closed proposition that refutes ``statement`` at ``witness`` = ``(index, ((name, term), ...))``: its
    hypotheses at the witness and the negation of its relation ``index`` there. Every binder gets a closed value
    (a statement about every function has no counterexample of this form)."""
    if not (isinstance(witness, tuple) and len(witness) == 2 and type(witness[0]) is int
            and isinstance(witness[1], tuple) and all(isinstance(p, tuple) and len(p) == 2 and isinstance(p[0], str)
                                                      and isinstance(p[1], tuple) and len(p[1]) == 3
                                                      for p in witness[1])):
        raise KernelError("a witness is (relation index, ((name, ('num', p, q)), ...))")
    index, pairs = witness
    _plain(statement, "statement")
    well_formed(statement)  # the statement checked before it is read (the ninth audit's route 7)
    rels = _relations(statement[3])
    if not 0 <= index < len(rels):
        raise KernelError(f"the statement has {len(rels)} relations, not {index + 1}")
    if any(h[0] in ("in", "all") for h in statement[2]):
        raise KernelError("a statement with a membership or universal hypothesis has no counterexample of this form")
    values = dict(pairs)
    if set(values) != {b[1] for b in statement[1]} or any(b[0] != "var" for b in statement[1]):
        raise KernelError("a witness gives every binder of the statement (variables only) a value")
    for b in statement[1]:
        value = values[b[1]]
        if not (value[0] == "num" and type(value[1]) is int and type(value[2]) is int and value[2] > 0):
            raise KernelError(f"the witness's value of {b[1]!r} is not a number ('num', p, q) with q > 0")
        if not _in_sort(value, b[2]):
            raise KernelError(f"the witness's value of {b[1]!r} is not a number of its sort {b[2]!r}")
    closed = [substitute_relation(h, values) for h in statement[2]] + [negation(substitute_relation(rels[index],
                                                                                                         values))]
    return well_formed(("forall", (), (), closed[0] if len(closed) == 1 else ("and", *closed)))


def _covers(step: tuple, statement: tuple, r: tuple, binders: frozenset) -> bool:
    """Whether checked ``step`` gives relation ``r`` of ``statement``: one of its relations is r, its binders are
    among the statement's (``binders``, the set built once) and each of its hypotheses is one of the statement's (a
    step that needs fewer hypotheses says more). Each pair is charged what it reads."""
    budget.spend("monomials", len(step[1]) + len(step[2]) * (len(statement[2]) + 1) + 1)  # the scans below
    if not set(step[1]) <= binders:
        return False
    if not all(any(_same_rel(a, b) for b in statement[2]) for a in step[2]):
        return False
    return any(_same_rel(c, r) for c in _relations(step[3]))


@refusing
def established(statement: tuple, props: Sequence[tuple]) -> bool:
    """Whether the checked propositions ``props`` establish every relation of ``statement``'s conclusion."""
    binders = frozenset(statement[1])
    return all(any(_covers(p, statement, r, binders) for p in props) for r in _relations(statement[3]))


def derive(kind: str, statement: tuple, checked: Sequence[tuple[str, tuple]], *, witness: Any = None,
           fair: tuple | None = None) -> str:
    """The verdict of a claim of ``kind`` ("theorem" or "published claim") from its formal ``statement`` and the
    ``(part, proposition)`` of each checked step; its work is bounded like a check's, and malformed input is
    refused with KernelError."""
    try:
        with budget.scope():
            for x, what in ((statement, "statement"), (fair, "fair reading"), (witness, "witness")):
                if x is not None:
                    _plain(x, what)  # sizes counted with shared subterms expanded, before any walk
            if not isinstance(checked, (list, tuple)):
                raise KernelError("the checked steps are a list of (part, proposition)")
            for _, p in checked:
                _plain(p, "checked proposition")
            well_formed(statement)
            if fair is not None:
                well_formed(fair)
            return _derive(kind, statement, checked, witness, fair)
    except KernelError:
        raise
    except MALFORMED as exc:
        raise KernelError(f"a malformed statement, witness or step ({type(exc).__name__}: {exc})"[:300]) from None


def _derive(kind: str, statement: tuple, checked: Sequence[tuple[str, tuple]], witness: Any,
            fair: tuple | None) -> str:
    by_part: dict[str, list[tuple]] = {}
    for part, prop in checked:
        by_part.setdefault(part, []).append(prop)
    if established(statement, by_part.get("statement", [])):
        return "proved"
    if witness is not None and kind == "published claim":
        refuting = counterexample(statement, witness)
        if any(_same_closed(p, refuting) for p in by_part.get("counterexample", [])):
            if fair is not None and established(fair, by_part.get("fair reading", [])):
                return "imprecise"
            return "refuted"
    return "failed"


def _same_closed(p: tuple, q: tuple) -> bool:
    if p[1] or p[2] or q[1] or q[2]:
        return False
    a, b = _relations(p[3]), _relations(q[3])
    return len(a) == len(b) and all(_same_rel(x, y) for x, y in zip(a, b))


@refusing
def title(statement: tuple) -> str:
    """The title a formal claim's record carries: generated from its statement, so it says exactly that."""
    return show_proposition(statement)
