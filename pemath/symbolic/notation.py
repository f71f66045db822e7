r"""Named quantities in statements and steps: plain text for the terminal, LaTeX for the docs.

A statement such as ``<R(m)q, R(n)k> = q^T R(n-m) k`` names a quantity that is not a SymPy
expression of its own (the score, the bucket set, a matrix written by its formula). A bare
``sp.Symbol("<R(m)q, R(n)k>")`` prints well in a terminal but SymPy's LaTeX printer reads
``_`` and ``^`` in a symbol's name as subscripts and superscripts and sets every other
letter in italics, so the docs showed ``<R(m)q_{i,R(n)ki>}`` and an italic word "lambda".
:class:`Label` and :class:`MatrixLabel` carry both spellings: ``str()``, ``sp.pretty`` and
``pemath prove --narrate`` show the text, ``sp.latex`` (the docs) shows the LaTeX.

A :class:`Label` is an ordinary SymPy symbol with a second spelling: it may carry assumptions and
take part in algebra (``solve``, trigonometric rewrites), like any symbol. Give one quantity one
label object, built in one place: a label and a plain ``Symbol`` of the same name are different
symbols. A label whose LaTeX is a sum or a quotient (``b_{\mathrm{static}} / b``) is bracketed
when it appears in a product or a power, as SymPy brackets a sum.
"""

from __future__ import annotations

import re

import sympy as sp
from sympy.core.symbol import Str
from sympy.printing.precedence import PRECEDENCE
from sympy.printing.pretty.stringpict import prettyForm

__all__ = ["Label", "MatrixLabel", "label", "matrix_label"]


def _check(text: object, tex: object) -> None:
    if not isinstance(text, str) or not text.strip():
        raise TypeError(f"a label's text must be a non-empty string, got {text!r}")
    if not isinstance(tex, str) or not tex.strip():
        raise TypeError(f"a label's tex must be a non-empty string of LaTeX, got {tex!r}")
    if tex.count("{") != tex.count("}"):
        raise ValueError(f"a label's tex must have balanced braces, got {tex!r}")


_TOKENS = re.compile(r"\\left|\\right|[{}()\[\]+\-/]")


def _precedence(tex: str) -> int:
    """How a printer must treat a label's LaTeX inside a larger expression: a sum (a ``+`` or ``-`` outside
    every bracket), a quotient (a ``/`` outside every bracket) or an atom."""
    depth, top = 0, set()
    for token in _TOKENS.findall(tex):
        if token in ("\\left", "{", "(", "["):
            depth += 1
        elif token in ("\\right", "}", ")", "]"):
            depth -= 1
        elif depth == 0:
            top.add(token)
    if top & {"+", "-"}:
        return PRECEDENCE["Add"]
    if "/" in top:
        return PRECEDENCE["Mul"]
    return PRECEDENCE["Atom"]


class Label(sp.Symbol):
    """A scalar quantity named by ``text`` (terminal) and ``tex`` (LaTeX).

    Two labels are equal when both spellings and the assumptions agree.
    """

    __slots__ = ("tex",)

    def __new__(cls, text: str, tex: str, **assumptions):
        _check(text, tex)
        cls._sanitize(assumptions, cls)  # as Symbol does: True/False values, no None
        obj = sp.Symbol.__xnew__(cls, text, **assumptions)  # uncached: the cache would ignore tex
        obj.tex = tex
        return obj

    @property
    def precedence(self) -> int:
        return _precedence(self.tex)

    def __getnewargs_ex__(self):
        return ((self.name, self.tex), self.assumptions0)

    def _hashable_content(self):
        return (*super()._hashable_content(), self.tex)

    def _latex(self, printer) -> str:
        return self.tex

    def _pretty(self, printer):
        return prettyForm(self.name)


class MatrixLabel(sp.MatrixSymbol):
    """A matrix quantity of shape ``(n, m)`` named by ``text`` (terminal) and ``tex`` (LaTeX)."""

    def __new__(cls, text: str, n, m, tex: str):
        # func(*args), pickle and copy rebuild it from its args, where text and tex are Str
        text = text.name if isinstance(text, Str) else text
        tex = tex.name if isinstance(tex, Str) else tex
        _check(text, tex)
        base = sp.MatrixSymbol(text, n, m)
        return sp.Basic.__new__(cls, *base.args, Str(tex))

    @property
    def tex(self) -> str:
        return self.args[3].name

    def doit(self, **hints):
        return self

    def _latex(self, printer) -> str:
        return self.tex

    def _pretty(self, printer):
        return prettyForm(self.name)


def label(text: str, tex: str, **assumptions) -> Label:
    """A :class:`Label`: ``label("<R(m)q, R(n)k>", r"\\langle R(m)q, R(n)k\\rangle")``."""
    return Label(text, tex, **assumptions)


def matrix_label(text: str, n, m, tex: str) -> MatrixLabel:
    """A :class:`MatrixLabel`: ``matrix_label("R_half(m)", 4, 4, r"R_{\\mathrm{half}}(m)")``."""
    return MatrixLabel(text, n, m, tex)
