"""Recording a derivation step by step; every decided step established by the kernel from its formula.

A proof here is a decision: a difference is reduced to *exactly* zero (the SymPy ``S.Zero`` object, or a zero
matrix) by one of a fixed list of rewrites, a stored relation evaluates to ``True``, an enumeration, an interval
enclosure or an assumption query settles it, or the step fails and raises :class:`ProofFailure`.
``simplify`` not reaching zero, or ``.equals`` answering ``None``, is a failure, never a pass.

The kernel is this module and :mod:`pemath.symbolic._certify`: a :class:`Derivation`'s methods build the formula
of a step from the statement's own expressions, :func:`~pemath.symbolic._certify.decide` establishes the
certificate from that formula alone, and only then is the step minted. A :class:`Step` with status
``"proved"`` cannot be constructed elsewhere, its decided fields cannot be changed afterwards, and
``pemath prove --recheck`` replays every stored formula in a fresh process.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import sympy as sp

from ._certify import (FACTS, Premise, ProofFailure, conclusion, decide, dump, fixed_of, match, rebuilt, reduce_to_zero,
                       rests_of, used_premises)

__all__ = ["ProofFailure", "Step", "Derivation", "reduce_to_zero", "unevaluated", "CERTIFICATES", "ROLES", "PARTS"]

#: What decided a step (``Step.certificate``); each is established from ``Step.formula`` by
#: :func:`pemath.symbolic._certify.decide` (its table gives each formula):
#:
#: * ``"rewrite"``: the difference reduced to exactly zero by the rewrite named in ``method``;
#: * ``"closed on construction"``: SymPy's automatic evaluation had already made it zero
#:   when the expression was built (no rewrite was needed: the identity is structural);
#: * ``"exact boolean"``: a stored SymPy relation between exact expressions evaluated to ``True``;
#: * ``"enumeration"``: a SymPy predicate checked exactly at every element of a finite SymPy set;
#: * ``"interval"``: interval enclosures of the two sides, made by the kernel, decided the relation;
#: * ``"assumption query"``: SymPy's assumptions system answered ``True`` from the declared
#:   assumptions of the symbols (``method`` lists them);
#: * ``"free symbols"``: the expression's free symbols exclude the named ones, so it is constant in them;
#: * ``"solution set"``: ``solveset`` over the domain the symbol's assumptions give returned this finite set;
#: * ``"induction"``: the base case and the step from ``n`` to ``n + 1`` each reduced to exactly zero (``method``
#:   names the variable, the base and the rewrites);
#: * ``"instance"``: an identity decided earlier in the same derivation for an arbitrary function, with that
#:   function replaced by one that keeps its declared properties;
#: * ``"substitution"``: an equation decided earlier in the same derivation specialised at values that keep its
#:   symbols' assumptions, or rewritten with another decided equation;
#: * ``"checked"``: a proposition and certificate written in the checker's own terms (:mod:`pemath.kernel`),
#:   verified by it alone: no SymPy formula is translated and no simplifier runs;
#: * ``"reference"``: a proposition verified in the proof of another claim, one the running claim uses
#:   (``Claim.uses``): the checker's instance of that claim's verified step, its theorem the context
#:   (:meth:`Derivation.from_claim`).
CERTIFICATES = ("rewrite", "closed on construction", "exact boolean", "enumeration", "interval", "assumption query",
                "free symbols", "solution set", "induction", "instance", "substitution", "checked", "reference")

#: What a narrated (undecided) step is. None of them carries logic a later step rests on, and no decided step
#: can start from one (a substitution's or instance's premise must be decided):
#:
#: * ``"definition"``: notation, the objects studied, or the published text being examined;
#: * ``"hypothesis"``: what the claim assumes (it is part of the statement, not proved);
#: * ``"remark"``: commentary (context, a reading of what was proved); nothing later depends on it;
#: * ``"cited"``: a standard textbook fact the argument uses without deciding it here (named, with its source);
#:   ``pemath prove --json`` lists every one, so a reader sees exactly what is trusted.
ROLES = ("definition", "hypothesis", "remark", "cited")

#: What part of a claim's verdict a step belongs to (:meth:`Derivation.part`): the statement (default), a
#: counterexample to it (a published claim found false), or the fair reading of a false published claim.
#: :class:`pemath.claims.Verdict` is computed from these: it holds when no decided step refutes it.
PARTS = ("statement", "counterexample", "fair reading")

_MINTING: list[bool] = []  # non-empty only while the kernel mints a decided step

#: The claims the running claim uses, each with its verified steps' checker entries ({claim id: [{"step": index,
#: "proposition", "certificate"}, ...]}): set by the claims' runner around a claim's proof (:func:`using`), read by
#: :meth:`Derivation.from_claim`. Empty outside a claim that uses others.
_USED: list[dict[str, list[dict]]] = [{}]


@contextmanager
def using(claims: dict[str, list[dict]]) -> Iterator[None]:
    """Make the verified steps of ``claims`` (claim id -> checker entries) available to :meth:`Derivation.from_claim`
    inside the ``with`` block (the claims' runner does this for the claims a claim uses, once they are proved)."""
    _USED.append(dict(claims))
    try:
        yield
    finally:
        _USED.pop()
_DECIDED_FIELDS = ("status", "formula", "certificate", "method", "part", "rests_on", "fixed", "kernel")


def _np_bools() -> tuple[type, ...]:
    import numpy as np

    return (np.bool_,)


class _Steps(list):
    """A derivation's steps: a step appended without a section gets the derivation's title, and, inside
    :meth:`Derivation.lemma`, the lemma's name; steps taken from another derivation keep theirs. A decided
    substitution or instance taken from another derivation must find its premise among the steps before it."""

    def __init__(self, title: str, steps: Any = ()) -> None:
        super().__init__()
        self.title = title
        self.lemma: str | None = None
        self.extend(steps)

    def conclusions(self) -> list[Any]:
        return [conclusion(s.certificate, s.formula) for s in self if s.status == "proved"]

    def sources(self) -> list[tuple[Premise, tuple[str, ...]]]:
        """Each premise a substitution or an instance may start from, with the hypotheses it rests on: a decided
        conclusion (resting on what its own premises rest on, holding their fixed symbols), or a hypothesis's
        equation (resting on itself, holding fixed every symbol it does not declare ``forall``)."""
        out: list[tuple[Premise, tuple[str, ...]]] = []
        for s in self:
            if s.status == "proved":
                out.append((Premise(conclusion(s.certificate, s.formula), s.fixed), s.rests_on))
            elif s.role == "hypothesis":
                for e in (s.expr if isinstance(s.expr, (list, tuple)) else [s.expr]):
                    if isinstance(e, sp.Eq):
                        out.append((Premise(e, e.free_symbols - set(s.forall)), (s.text,)))
        return out

    def premises(self) -> list[Premise]:
        """What a substitution or an instance may start from: the decided conclusions and the hypotheses (a result
        resting on a hypothesis is conditional on it: :attr:`Step.rests_on` names them)."""
        return [e for e, _ in self.sources()]

    def rests_on(self, formulas: Sequence[Any]) -> tuple[str, ...]:
        """The hypotheses the given premises rest on, in the order they were stated."""
        return rests_of(formulas, self.sources())

    def append(self, step: Any) -> None:
        if not isinstance(step, Step):
            raise TypeError(f"a derivation's steps are Step objects made by its methods, got {step!r}")
        if step.status == "proved" and step.certificate in ("substitution", "instance"):
            premises = used_premises(step.certificate, step.formula)
            have = self.premises()
            for p in premises:
                if match(p, have, either_way=True) is None:
                    raise ProofFailure(f"{self.title}: the step {step.text[:80]!r} rests on {sp.sstr(p)[:120]}, which "
                                       "is not decided before it here (steps taken from another derivation keep their "
                                       "premises)", p)
        if step.section is None:
            object.__setattr__(step, "section", self.title)
        if step.lemma is None:
            object.__setattr__(step, "lemma", self.lemma)
        super().append(step)

    def extend(self, steps: Any) -> None:
        for step in steps:
            self.append(step)

    def insert(self, *args: Any) -> None:
        raise TypeError("steps are appended in order (a decided step's premises come before it)")

    def __setitem__(self, *args: Any) -> None:
        raise TypeError("a derivation's steps are not replaced: append new ones")


@dataclass
class Step:
    """One line of a derivation: a claim about expressions, and how it was decided.

    A decided step (``status="proved"``) is made only by a :class:`Derivation` method, after the kernel
    established its ``certificate`` from its ``formula``; constructing one directly raises ``TypeError``, and its
    ``status``, ``formula``, ``certificate``, ``method`` and ``part`` cannot be changed afterwards. ``expr`` is
    what reports show (by default the conclusion of the formula).
    """

    text: str
    expr: Any = None
    status: str = "info"  # "info" (narration), "proved", "failed"
    method: str | None = None
    certificate: str | None = None  # what decided a proved step: one of CERTIFICATES
    role: str | None = None  # what a narrated step is: one of ROLES
    section: str | None = None  # the title of the derivation that made the step (kept when steps are combined)
    lemma: str | None = None  # the shared lemma the step belongs to (Derivation.lemma), e.g. "pair partition"
    formula: Any = None  # what the certificate decided (pemath.symbolic._certify's table)
    part: str = "statement"  # PARTS: what the step bears on
    rests_on: tuple[str, ...] = ()  # the hypotheses a decided step rests on (through its premises): conditional
    fixed: frozenset = frozenset()  # symbols a hypothesis it rests on holds fixed (never specialised)
    forall: tuple = ()  # a hypothesis: the symbols it is quantified over (the others it holds fixed)
    #: the checker's verification of a decided step (:mod:`pemath.kernel`): ``{"proposition", "certificate"}`` as
    #: plain data when :func:`pemath.kernel.check` verified it, ``{"refused": reason}`` when the step is outside
    #: what the checker covers yet (decided by the SymPy kernel alone); None for narration
    kernel: dict | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise TypeError(f"Step text must be a string, got {self.text!r}")
        if self.status not in ("info", "proved", "failed"):
            raise ValueError(f"Step status must be 'info', 'proved' or 'failed', got {self.status!r}")
        if self.status == "proved" and not _MINTING:
            raise TypeError("a decided Step (status 'proved') is made only by the kernel, after it decides the "
                            "step's formula: use a Derivation method (equal, zero, true, enumerated, interval, ...)")
        if self.method is not None and not isinstance(self.method, str):
            raise TypeError(f"Step method must be None or a string, got {self.method!r}")
        if self.certificate is not None and self.certificate not in CERTIFICATES:
            raise ValueError(f"Step certificate must be None or one of {CERTIFICATES}, got {self.certificate!r}")
        if self.section is not None and not isinstance(self.section, str):
            raise TypeError(f"Step section must be None or a string (a derivation's title), got {self.section!r}")
        if self.lemma is not None and (not isinstance(self.lemma, str) or not self.lemma):
            raise TypeError(f"Step lemma must be None or a lemma's name (a non-empty string), got {self.lemma!r}")
        if self.part not in PARTS:
            raise ValueError(f"Step part must be one of {PARTS}, got {self.part!r}")
        if self.status == "info" and (not isinstance(self.role, str) or self.role not in ROLES):
            raise ValueError(f"Step role must be one of {ROLES} for a narrated step (status 'info': it carries no "
                             f"logic), got {self.role!r}")
        if self.status != "info" and self.role is not None:
            raise ValueError(f"Step role must be None for a step with status {self.status!r} (only narrated steps, "
                             f"status 'info', have a role), got {self.role!r}")
        if self.status == "proved" and (self.certificate is None or self.formula is None):
            raise ValueError(f"Step status 'proved' needs a certificate (one of {CERTIFICATES}) and the formula it "
                             "decided")

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _DECIDED_FIELDS and name in self.__dict__ and not _MINTING:
            raise AttributeError(f"a step's {name} is set by the kernel when it decides the step, never changed "
                                 "afterwards")
        object.__setattr__(self, name, value)

    def record(self) -> str | None:
        """The formula as text (``srepr``) for the re-checker: a decided step's formula, or a hypothesis's
        equations (the premises a decided step may start from); None for other narration."""
        if self.status == "proved":
            return dump(self.formula)
        if self.role == "hypothesis":
            rels = hypothesis_relations(self)
            return dump(sp.Tuple(sp.Tuple(*self.forall), sp.Tuple(*rels))) if rels else None
        return None

    def latex(self) -> str | None:
        if self.expr is None:
            return None
        try:
            return sp.latex(self.expr)
        except (TypeError, ValueError, AttributeError, KeyError, sp.core.facts.InconsistentAssumptions):
            # SymPy's printer can stumble on a formula recorded unevaluated (its assumptions of 0*(-2)): print the
            # formula as SymPy evaluates it instead; the record (srepr) keeps it as built
            return sp.latex(rebuilt(self.expr))

    @property
    def trivial(self) -> bool:
        """Whether the step's expression adds nothing to its text: none, a bare ``True`` or an exact zero
        (scalar or matrix), where the certificate already says what was decided. Reports print no
        formula for such a step (``pemath prove --narrate``, the docs)."""
        e = self.expr
        if e is None or e is True or e is sp.true:
            return True
        if isinstance(e, sp.MatrixBase):
            return all(x == 0 for x in e)
        if isinstance(e, (int, sp.Basic)) and not isinstance(e, bool):
            return e == 0
        return False

    def pretty(self, width: int = 100, max_lines: int = 24) -> str | None:
        """Pretty-printed, or the plain string form when the picture would be too tall."""
        if self.expr is None:
            return None
        try:
            text = sp.pretty(self.expr, use_unicode=True, num_columns=width)
            expr = self.expr
        except (TypeError, ValueError, AttributeError, KeyError, sp.core.facts.InconsistentAssumptions):
            expr = rebuilt(self.expr)  # as in latex(): the printer stumbled on the formula as built
            text = sp.pretty(expr, use_unicode=True, num_columns=width)
        if text.count("\n") < max_lines:
            return text
        plain = sp.sstr(expr)
        return plain if len(plain) <= 4 * width else plain[: 4 * width - 3] + "..."




def _relation(left: Any, relation: str, right: Any) -> Any:
    ops = {">": sp.StrictGreaterThan, ">=": sp.GreaterThan, "<": sp.StrictLessThan, "<=": sp.LessThan}
    if relation not in ops:
        raise ValueError(f"relation must be one of {sorted(ops)}, got {relation!r}")
    return ops[relation](sp.sympify(left, strict=True), sp.sympify(right, strict=True), evaluate=False)


def _as_set(domain: Any) -> sp.Set:
    if isinstance(domain, range):
        return sp.Range(domain.start, domain.stop, domain.step)
    if isinstance(domain, sp.Set):
        return domain
    if isinstance(domain, (list, tuple)):
        return sp.FiniteSet(*[sp.Tuple(*c) if isinstance(c, (list, tuple)) else c for c in domain])
    raise TypeError(f"an enumeration's domain is a range, a list of exact values or a SymPy set, got {domain!r}")


@dataclass
class Derivation:
    """A derivation: narration and decided steps, in order.

    Every decided step raises :class:`ProofFailure` the moment its certificate cannot be established, so a
    derivation that returns has decided every step. Each decided step stores the formula it decided.
    """

    title: str
    steps: list[Step] = field(default_factory=list)
    result: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.title, str):
            raise TypeError(f"Derivation title must be a string, got {self.title!r}")
        self.steps = _Steps(self.title, self.steps)
        self._part = "statement"

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "steps" and isinstance(getattr(self, "steps", None), _Steps):
            raise AttributeError("a derivation's steps are not replaced: append new ones (steps.extend)")
        object.__setattr__(self, name, value)

    # --- structure ---------------------------------------------------------------------------------------

    @contextmanager
    def lemma(self, name: str) -> Iterator[None]:
        """Mark the steps made inside the ``with`` block as those of the shared lemma ``name`` (reports may
        fold them into one line: the docs' argument of a claim does). Not nested."""
        if not isinstance(name, str) or not name:
            raise TypeError(f"lemma name must be a non-empty string, got {name!r}")
        if self.steps.lemma is not None:
            raise ValueError(f"lemma {name!r} inside lemma {self.steps.lemma!r}: lemmas are not nested")
        self.steps.lemma = name
        try:
            yield
        finally:
            self.steps.lemma = None

    @contextmanager
    def part(self, name: str) -> Iterator[None]:
        """Mark the steps decided inside the ``with`` block as bearing on ``name`` (one of :data:`PARTS`): a
        ``"counterexample"`` step refutes the statement; ``"fair reading"`` steps prove the fair reading of a
        false published claim. The verdict is computed from them."""
        if name not in PARTS:
            raise ValueError(f"part must be one of {PARTS}, got {name!r}")
        old, self._part = self._part, name
        try:
            yield
        finally:
            self._part = old

    def include(self, steps: Any, *, part: str | None = None) -> None:
        """Append the steps of another derivation, in order; with ``part``, its decided steps bear on that part of
        this claim's verdict (:meth:`part`). A decided step is copied by the kernel, its certificate unchanged."""
        if part is not None and part not in PARTS:
            raise ValueError(f"part must be None or one of {PARTS}, got {part!r}")
        for st in steps:
            if part is not None and st.status == "proved" and st.part != part:
                _MINTING.append(True)
                try:
                    st = dataclasses.replace(st, part=part)
                finally:
                    _MINTING.pop()
            self.steps.append(st)

    def assumptions(self) -> list[tuple[str, tuple[str, ...]]]:
        """The standing assumptions of the decided steps, read from their formulas' symbols: ``(symbol, facts)``
        for every symbol declared with one of the facts a certificate may rest on."""
        seen: dict[str, tuple[str, ...]] = {}
        for s in self.steps:
            if s.status == "proved" and isinstance(s.formula, sp.Basic):
                for sym in s.formula.free_symbols:
                    facts = tuple(k for k in FACTS if sym.assumptions0.get(k))
                    if facts:
                        seen.setdefault(str(sym), facts)
        return sorted(seen.items())

    # --- narration ---------------------------------------------------------------------------------------

    def define(self, text: str, expr: Any = None) -> Any:
        """Narrate a definition: notation, the objects studied, or the published text examined (no decision)."""
        self.steps.append(Step(text, expr, "info", role="definition"))
        return expr

    def hypothesis(self, text: str, expr: Any = None, *, forall: Sequence[Any] = ()) -> Any:
        """Narrate a hypothesis of the claim: part of its statement, assumed, not proved. An equation of it may be
        a premise of a decided step, which then rests on it; it is about its symbols, each held fixed, except those
        it is stated for every value of (``forall``), which a substitution may specialise."""
        forall = tuple(forall)
        if not all(isinstance(v, sp.Symbol) for v in forall):
            raise TypeError(f"{self.title}: {text}: forall holds the symbols the hypothesis quantifies, got {forall!r}")
        self.steps.append(Step(text, expr, "info", role="hypothesis", forall=forall))
        return expr

    def remark(self, text: str, expr: Any = None) -> Any:
        """Narrate commentary: context or a reading of what was proved. No later step may rest on it."""
        self.steps.append(Step(text, expr, "info", role="remark"))
        return expr

    def cite(self, text: str, expr: Any = None, *, source: str) -> Any:
        """Use a standard textbook fact without deciding it here: listed as trusted, never proved. ``source``
        names where it is stated (a textbook and its theorem)."""
        if not isinstance(source, str) or len(source.strip()) < 8:
            raise TypeError(f"{self.title}: a cited fact names its source (a textbook and its theorem), got "
                            f"{source!r}")
        self.steps.append(Step(f"{text} [{source}]", expr, "info", role="cited"))
        return expr

    def fail(self, text: str, expr: Any = None) -> None:
        self.steps.append(Step(text, expr, "failed"))
        raise ProofFailure(f"{self.title}: {text}", expr)

    # --- the kernel ----------------------------------------------------------------------------------------

    def _mint(self, text: str, certificate: str, formula: Any, method: str | None = None, *,
              allowed: Sequence[str] | None = None, shown: Any = None) -> Any:
        if not isinstance(text, str):
            raise TypeError(f"{self.title}: a step's text must be a string, got {text!r}")
        try:
            established = decide(certificate, formula, method, self.steps.premises(), allowed=allowed)
        except ProofFailure as exc:
            self.steps.append(Step(text, exc.residual if isinstance(exc.residual, sp.Basic) else None, "failed"))
            raise ProofFailure(f"{self.title}: not proved: {text} ({exc})", exc.residual) from None
        if certificate == "rewrite" and established == "identical":
            certificate = "closed on construction"
        concl = conclusion(certificate, formula)
        checked = _checker(certificate, formula, method, self.steps)
        rests: tuple[str, ...] = ()
        fixed: frozenset = frozenset()
        if certificate in ("substitution", "instance"):
            rests = self.steps.rests_on(used_premises(certificate, formula))
            fixed = fixed_of(certificate, formula, self.steps.premises())
        _MINTING.append(True)
        try:
            step = Step(text, concl if shown is None else shown, "proved", established, certificate,
                        formula=formula, part=self._part, rests_on=rests, fixed=fixed, kernel=checked)
        finally:
            _MINTING.pop()
        self.steps.append(step)
        return concl

    def zero(self, text: str, expr: Any, *, methods: Sequence[str] | None = None) -> None:
        """Decide ``expr == 0`` exactly, or fail."""
        if isinstance(expr, sp.MatrixBase):
            self._mint(text, "rewrite", sp.Eq(sp.ImmutableMatrix(expr), sp.ImmutableMatrix(sp.zeros(*expr.shape)),
                                              evaluate=False), allowed=methods, shown=sp.ImmutableMatrix(expr))
        else:
            self._mint(text, "rewrite", sp.Eq(_expr(expr, text), sp.S.Zero, evaluate=False), allowed=methods,
                       shown=expr)

    def equal(self, text: str, lhs: Any, rhs: Any, *, methods: Sequence[str] | None = None) -> None:
        """Decide ``lhs == rhs`` exactly (as ``lhs - rhs`` reducing to zero), or fail."""
        if isinstance(lhs, (sp.MatrixBase, sp.MatrixExpr)) or isinstance(rhs, (sp.MatrixBase, sp.MatrixExpr)):
            mat = lambda x: x if isinstance(x, sp.MatrixExpr) else sp.ImmutableMatrix(x)  # noqa: E731
            formula = sp.Eq(mat(lhs), mat(rhs), evaluate=False)
        else:
            formula = sp.Eq(_expr(lhs, text), _expr(rhs, text), evaluate=False)
        self._mint(text, "rewrite", formula, allowed=methods)

    def true(self, text: str, condition: Any) -> None:
        """Decide a stored SymPy relation between exact expressions (or And/Or/Not of them) is True, or fail.

        The relation is built unevaluated (``sp.Gt(a, b, evaluate=False)``), so its two sides are recorded and
        the kernel evaluates it. A Python ``bool``, or a relation SymPy has already evaluated, is refused: it
        says nothing about what was decided."""
        if isinstance(condition, (bool, _np_bools())) or not isinstance(condition, sp.Basic):
            raise TypeError(f"{self.title}: {text}: Derivation.true takes an unevaluated SymPy relation, got "
                            f"{condition!r}; a Python bool carries no certificate")
        self._mint(text, "exact boolean", condition)

    def enumerated(self, text: str, variables: Any, domain: Any, predicate: Any) -> None:
        """Decide the SymPy boolean ``predicate`` at every element of the finite ``domain`` (a ``range``, a list
        of exact values or tuples, or a finite SymPy set), the ``variables`` (a symbol, or a tuple of symbols
        for tuple elements) taking each element's values, or fail. The stored formula is all three."""
        if not isinstance(predicate, sp.logic.boolalg.Boolean):
            raise TypeError(f"{self.title}: {text}: an enumeration's predicate is a SymPy boolean in its variables (the "
                            f"kernel evaluates it at each element), got {predicate!r}")
        variables = sp.Tuple(*variables) if isinstance(variables, (tuple, list)) else variables
        self._mint(text, "enumeration", sp.Tuple(variables, _as_set(domain), predicate))

    def interval(self, text: str, left: Any, relation: str, right: Any, *, digits: int = 30) -> None:
        """Decide ``left relation right`` for two exact constant expressions by interval enclosures the kernel
        makes at ``digits`` decimal digits (``mpmath.iv``), or fail. Enclosures that overlap decide nothing."""
        if isinstance(digits, bool) or not isinstance(digits, int) or not 10 <= digits <= 1000:
            raise ValueError(f"{self.title}: {text}: digits must be an int in [10, 1000], got {digits!r}")
        self._mint(text, "interval", _relation(left, relation, right), f"{digits} digits")

    def assumed(self, text: str, expr: Any, prop: str) -> None:
        """Decide ``expr.is_<prop>`` is True from the symbols' declared assumptions, or fail."""
        if prop not in FACTS:
            raise ValueError(f"prop must be a SymPy assumption among {FACTS}, got {prop!r}")
        self._mint(text, "assumption query", getattr(sp.Q, prop)(_expr(expr, text)))

    def free_of(self, text: str, expr: Any, symbols: Any) -> None:
        """Decide ``expr`` does not involve ``symbols``, or fail. ``expr`` must be named earlier in this derivation
        (a side of a decided equation, or a definition), so the record shows which object the step is about."""
        e = sp.ImmutableMatrix(expr) if isinstance(expr, sp.MatrixBase) else _expr(expr, text)
        objects = self.steps.conclusions() + [s.expr for s in self.steps if s.role == "definition"]
        sides = [x for c in objects if isinstance(c, sp.Eq) for x in (c.lhs, c.rhs)] + objects
        if not any(e == x for x in sides if x is not None):
            self.steps.append(Step(text, e, "failed"))
            raise ProofFailure(f"{self.title}: not proved: {text} ({sp.sstr(e)[:160]} is not a side of an equation "
                               "decided or defined earlier in this derivation)", e)
        self._mint(text, "free symbols", sp.Tuple(e, sp.Tuple(*symbols)))

    def solved(self, text: str, equation: Any, symbol: Any, expected: Any) -> None:
        """Decide the complete solution set of ``equation`` for ``symbol`` is ``expected``, over the domain the
        symbol's own assumptions give (an integer symbol: the integers; real: the reals; positive: (0, oo))."""
        want = sp.FiniteSet(*expected) if not isinstance(expected, sp.Set) else expected
        shown = sp.Eq(symbol, want.args[0], evaluate=False) if isinstance(want, sp.FiniteSet) and len(want) == 1 \
            else sp.Contains(symbol, want, evaluate=False)
        self._mint(text, "solution set", sp.Tuple(equation, symbol, want), shown=shown)

    def induction(self, text: str, lhs: Callable[[Any], Any], rhs: Callable[[Any], Any], var: Any, base: int,
                  *, methods: Sequence[str] | None = None) -> Any:
        """Decide ``lhs(n) == rhs(n)`` for every integer ``n >= base`` by induction on ``var``: the base case
        reduces to zero, and so does ``[lhs(n+1) - lhs(n)] - [rhs(n+1) - rhs(n)]`` (finite sums in ``n`` are
        unrolled). Returns the equation proved."""
        if not (isinstance(var, sp.Symbol) and var.is_integer):
            raise TypeError(f"{self.title}: {text}: induction runs over an integer symbol, got {var!r}")
        if isinstance(base, bool) or not isinstance(base, int):
            raise TypeError(f"{self.title}: {text}: base must be an int, got {base!r}")
        formula = sp.Tuple(var, sp.Integer(base), sp.Lambda(var, lhs(var)), sp.Lambda(var, rhs(var)))
        return self._mint(text, "induction", formula, allowed=methods)

    def checked(self, text: str, proposition: tuple, certificate: tuple) -> None:
        """Decide ``proposition`` (the checker's plain data, :mod:`pemath.kernel.check`) by ``certificate``, which
        the checker alone verifies, or fail. For reasoning SymPy's formulas cannot state: universal hypotheses
        about arbitrary functions, instantiated by the certificate."""
        import json

        from ..kernel import to_json, well_formed
        from ..kernel.terms import show_proposition
        from sympy.core.symbol import Str

        from .notation import label

        formula = sp.Tuple(Str(json.dumps(to_json(proposition))), Str(json.dumps(to_json(certificate))))
        well_formed(proposition)
        shown = show_proposition(proposition)
        tex = r"\text{" + shown.replace("{", r"\{").replace("}", r"\}") + "}"  # MathJax shows \text's _ and ^ as typed
        self._mint(text, "checked", formula, shown=label(shown, tex))

    def from_claim(self, text: str, claim_id: str, proposition: tuple) -> None:
        """``proposition`` (the checker's plain data) as verified in the proof of claim ``claim_id``, one this
        claim uses (``Claim.uses``), proved in this run: the step is the checker's instance of that claim's
        verified step with the same proposition, the used step's theorem (verified again here) its context. The
        record names the claim and the used step; the re-checker finds that step among the used claim's verified
        ones. A step of the used claim that rests on its hypotheses or on another step is not used this way."""
        import json

        from sympy.core.symbol import Str

        from .. import kernel
        from ..kernel.terms import show_proposition
        from .notation import label

        if not isinstance(text, str) or not isinstance(claim_id, str):
            raise TypeError(f"{self.title}: from_claim takes a text and a claim id, got {text!r}, {claim_id!r}")
        entries = _USED[-1].get(claim_id)
        if entries is None:
            raise ProofFailure(f"{self.title}: {text}: claim {claim_id!r} is not one this claim uses (Claim.uses), "
                               "proved in this run")
        proposition = kernel.well_formed(proposition)
        cert = ("instance", 0, ())
        for k in entries:
            if k.get("premises") or k.get("hypotheses"):
                continue
            used = kernel.from_json(k["proposition"])
            if not kernel.same(used, proposition):
                continue
            try:
                theorem = kernel.check(used, kernel.from_json(k["certificate"]))
                kernel.check(proposition, cert, (theorem,))
            except kernel.KernelError as exc:
                raise ProofFailure(f"{self.title}: {text}: pemath.kernel refuses it: {exc}"[:400]) from None
            break
        else:
            raise ProofFailure(f"{self.title}: {text}: no verified step of claim {claim_id!r} proves "
                               f"{show_proposition(proposition)[:200]}")
        formula = sp.Tuple(Str(json.dumps(kernel.to_json(proposition))), Str(json.dumps(kernel.to_json(cert))),
                           Str(claim_id))
        shown = show_proposition(proposition)
        tex = r"\text{" + shown.replace("{", r"\{").replace("}", r"\}") + "}"
        entry = {"proposition": kernel.to_json(proposition), "certificate": kernel.to_json(cert),
                 "premises": [{"claim": claim_id, "step": k["step"], "entry": [k["proposition"], k["certificate"]]}]}
        _MINTING.append(True)
        try:
            step = Step(f"{text} [claim {claim_id}]", label(shown, tex), "proved", "pemath.kernel", "reference",
                        formula=formula, part=self._part, kernel=entry)
        finally:
            _MINTING.pop()
        self.steps.append(step)

    def specialize(self, text: str, premise: Any, values: dict[Any, Any]) -> Any:
        """The equation ``premise`` (decided earlier in this derivation, quantified over its free symbols) at
        ``values``; each value must keep the assumptions of the symbol it replaces."""
        if not isinstance(premise, sp.Eq):
            raise TypeError(f"{self.title}: {text}: specialize takes a SymPy Eq, got {premise!r}")
        out = sp.Eq(premise.lhs.subs(values), premise.rhs.subs(values), evaluate=False)
        return self._mint(text, "substitution", sp.Tuple(premise, sp.Dict(values), out))

    def rewrite_with(self, text: str, target: Any, using: Any) -> Any:
        """``target`` with ``using.lhs`` replaced by ``using.rhs`` (both decided earlier in this derivation, or
        hypotheses; ``using`` may be a decided equation read right to left)."""
        if not (isinstance(target, sp.Eq) and isinstance(using, sp.Eq)):
            raise TypeError(f"{self.title}: {text}: rewrite_with takes two SymPy Eq, got {target!r}, {using!r}")
        out = sp.Eq(target.lhs.xreplace({using.lhs: using.rhs}), target.rhs.xreplace({using.lhs: using.rhs}),
                    evaluate=False)
        return self._mint(text, "substitution", sp.Tuple(target, using, out))

    def apply(self, text: str, premise: Any, function: Any) -> Any:
        """Apply ``function`` (a one-argument ``Lambda``, e.g. ``Lambda(z, Abs(z))``) to both sides of ``premise``,
        an equation decided earlier or a hypothesis (congruence). Returns the equation, as SymPy evaluates it."""
        if not (isinstance(premise, sp.Eq) and isinstance(function, sp.Lambda) and len(function.variables) == 1):
            raise TypeError(f"{self.title}: {text}: apply takes an Eq and a one-argument Lambda, got {premise!r}, "
                            f"{function!r}")
        out = sp.Eq(function(premise.lhs), function(premise.rhs), evaluate=False)
        return self._mint(text, "substitution", sp.Tuple(premise, function, out))

    def instance(self, text: str, lemma: Any, function: Any, replacement: Any) -> Any:
        """Instantiate ``lemma``, an equation decided earlier in this derivation for an arbitrary (undefined)
        ``function``, with ``function`` replaced by ``replacement`` (a ``Lambda`` that keeps every property the
        function was declared with). Returns the instance."""
        if not (isinstance(function, sp.core.function.UndefinedFunction) and isinstance(replacement, sp.Lambda)):
            raise TypeError(f"{self.title}: {text}: instance replaces an undefined function by a Lambda, got "
                            f"{function!r} -> {replacement!r}")
        out = lemma.replace(function, replacement)
        return self._mint(text, "instance", sp.Tuple(lemma, function(*replacement.variables), replacement, out))


def _checker(certificate: str, formula: Any, method: str | None, steps: Sequence[Step] = ()) -> dict:
    """The step verified by :mod:`pemath.kernel` (SymPy proposes the translation and the certificate, the checker
    decides), or the reason it is not yet. An instance of a lemma decided earlier (and verified) is the checker's
    instance of the lemma's theorem; the record then carries the lemma's proposition and certificate as its
    premise, so the re-checker rebuilds the theorem it starts from."""
    from . import bridge
    from ..kernel import KernelError, from_json, to_json

    premises: list = []
    used: list = []
    try:
        if certificate == "instance":
            lemma = formula[0]
            source = next((s for s in reversed(steps) if s.status == "proved" and isinstance(s.kernel, dict)
                           and "proposition" in s.kernel and conclusion(s.certificate, s.formula) == lemma), None)
            if source is None:
                raise bridge.NoCertificate("the lemma it instantiates is not verified by the checker")
            lp, lc = from_json(source.kernel["proposition"]), from_json(source.kernel["certificate"])
            prop, cert, _ = bridge.instance(formula, lp, lc)
            premises = [[source.kernel["proposition"], source.kernel["certificate"]]]
        else:
            prop, cert, _ = _certified(bridge, certificate, formula, method, steps, used)
    except (bridge.Untranslatable, bridge.NoCertificate, KernelError) as exc:
        return {"refused": f"{type(exc).__name__}: {exc}"[:300]}
    except Exception as exc:  # noqa: BLE001 - the proposer is untrusted: its failure leaves the step unchecked
        return {"refused": f"the proposer failed ({type(exc).__name__}: {exc})"[:300]}
    out = {"proposition": to_json(prop), "certificate": to_json(cert)}
    if premises:
        out["premises"] = premises
    if used:
        out["hypotheses"] = [dump(h) for h in used]
    return out


def _certified(bridge: Any, certificate: str, formula: Any, method: str | None, steps: Sequence[Step],
               used: list) -> tuple:
    """bridge.certify; where an equation's sides are defined only under the claim's stated hypotheses (a 1/u
    or log u the sorts do not show defined), again under those of its hypotheses about its symbols (``used``
    gets them)."""
    from ..kernel import KernelError

    if certificate == "substitution":
        # a rewrite with a stated hypothesis's equation: checked from scratch under that hypothesis
        rests = steps.rests_on(used_premises(certificate, formula)) if hasattr(steps, "rests_on") else ()
        on = [r for s in steps if s.role == "hypothesis" and s.text in rests and not s.forall
              for r in hypothesis_relations(s)]
        if on:
            out = bridge.certify(certificate, formula, method, hypotheses=on)
            used.extend(on)
            return out
    try:
        return bridge.certify(certificate, formula, method)
    except (KernelError, bridge.NoCertificate) as exc:
        if "not shown" not in str(exc) or certificate not in ("rewrite", "closed on construction", "free symbols"):
            raise
        free = formula[0].free_symbols if certificate == "free symbols" else formula.free_symbols
        stated = [r for s in steps if s.role == "hypothesis" for r in hypothesis_relations(s)
                  if r.free_symbols <= free]
        if not stated:
            raise
        out = bridge.certify(certificate, formula, method, hypotheses=stated)
        used.extend(stated)
        return out


def hypothesis_relations(step: Step) -> list:
    """The relations (=, <, <=, !=) a hypothesis step states."""
    exprs = step.expr if isinstance(step.expr, (list, tuple)) else [step.expr]
    return [e for e in exprs if isinstance(e, (sp.Eq, sp.Ne, sp.StrictLessThan, sp.LessThan, sp.StrictGreaterThan,
                                               sp.GreaterThan))]


def unevaluated(build: Callable[..., Any], *args: Any) -> Any:
    """``build(*args)`` made under ``sp.evaluate(False)``: a side whose construction is the argument (a shift that
    cancels, a function at a point) is recorded as built, and the kernel's evaluation decides it."""
    with sp.evaluate(False):
        return build(*args)


def _expr(e: Any, text: str) -> Any:
    if isinstance(e, (str, bytes)):
        raise TypeError(f"{text}: expressions are built with SymPy, never parsed from strings, got {e!r}")
    if isinstance(e, bool):
        raise TypeError(f"{text}: a bool is not an expression, got {e!r}")
    try:
        return sp.sympify(e, strict=True)
    except (sp.SympifyError, TypeError, ValueError) as exc:
        raise TypeError(f"{text}: expected a SymPy expression, got {e!r} ({type(e).__name__})") from exc
