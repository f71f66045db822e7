"""Statements and steps render as proper LaTeX: named quantities carry their own LaTeX
(:mod:`pemath.symbolic.notation`), so SymPy's printer sets no word in italics and reads no ``_``
or ``^`` of a name as a subscript or superscript."""

from __future__ import annotations

import pickle
import re

import pytest
import sympy as sp

from pemath import claims
from pemath.symbolic.notation import Label, MatrixLabel, label, matrix_label

from ._claim_checks import all_outcomes

#: Commands whose argument is text, a name or an environment, not math letters.
_TEXT_ARGUMENT = re.compile(
    r"\\(?:text|mathrm|operatorname|mathit|mathbf|mathtt|mathbb|mathcal|begin|end)\{(?:[^{}]|\\_)*\}"
    r"(?:\{[lcr|]*\})?"  # an array's column spec
)


def italic_words(tex: str) -> list[str]:
    """Runs of three or more letters the LaTeX would set as an italic product of variables
    (``lambda`` where ``\\lambda`` was meant, ``score``, ``half``), and angle brackets written
    as ``<a, b>`` (a name that held them)."""
    body = re.sub(r"\\[A-Za-z]+", " ", _TEXT_ARGUMENT.sub(" ", tex))
    found = re.findall(r"[A-Za-z]{3,}", body)
    found += re.findall(r"<[^<>=]*,[^<>]*>", body)
    return found


def test_the_detector_finds_what_the_docs_used_to_show():
    # the two defects issue 15 reported, as SymPy printed them from bare Symbol names
    assert italic_words(sp.latex(sp.Symbol("<R(m)q_i, R(n)k_i>")))
    assert italic_words(sp.latex(sp.Symbol("lambda_{d/2-1}"))) == ["lambda"]
    assert italic_words(sp.latex(sp.Symbol("score_twice")))
    # and passes what is right
    assert italic_words(r"\langle R(m)\,q_i,\; R(n)\,k_i \rangle = \sum_{i=0}^{h - 1} \cos{\left(\theta \right)}") == []
    assert italic_words(r"r_{1} < r_{2} \Rightarrow B{\left(r_{2} \right)} \leq B{\left(r_{1} \right)}") == []
    assert italic_words(r"\left[\begin{array}{cccc}1 & 0\end{array}\right] \text{True} \mathtt{num\_buckets}") == []


def test_a_label_prints_text_in_the_terminal_and_latex_in_the_docs():
    a = label("<R(m)q, R(n)k>", r"\langle R(m)q, R(n)k \rangle")
    assert str(a) == "<R(m)q, R(n)k>" and sp.pretty(a) == "<R(m)q, R(n)k>"
    assert sp.latex(sp.Eq(a, sp.Symbol("x") + 1)) == r"\langle R(m)q, R(n)k \rangle = x + 1"
    assert isinstance(a, Label) and a == label("<R(m)q, R(n)k>", r"\langle R(m)q, R(n)k \rangle")
    assert a != label("<R(m)q, R(n)k>", "S") and a != sp.Symbol("<R(m)q, R(n)k>")
    back = pickle.loads(pickle.dumps(a))
    assert back == a and back.tex == a.tex
    positive = label("s_mid", r"s_{\mathrm{mid}}", positive=True)
    assert positive.is_positive and sp.latex(2 * positive) == r"2 s_{\mathrm{mid}}"
    assert sp.pretty(positive) == "s_mid" and str(positive) == "s_mid"  # no subscript made of the name
    assert label("y", "y", positive=1).is_positive is True  # assumptions sanitised as Symbol does
    # one quantity, one object: a label and a plain Symbol of the same name are different symbols
    from pemath.claims import get
    from pemath.symbolic import published
    assert get("sinusoidal.wavelengths").statement().lhs is published.LAMBDA_I


def test_a_label_of_a_sum_or_quotient_is_bracketed_in_products_and_powers():
    ratio = label("b_static / b", r"b_{\mathrm{static}} / b")
    assert sp.latex(ratio**2) == r"\left(b_{\mathrm{static}} / b\right)^{2}" and str(ratio**2) == "(b_static / b)**2"
    assert sp.latex(2 * label("M + m", r"M + \min(K)")) == r"2 \left(M + \min(K)\right)"
    assert sp.latex(2 * label("|a - b|", r"\left|a - b\right|")) == r"2 \left|a - b\right|"  # bracketed already
    assert sp.latex(3 * label("lambda_i", r"\lambda_i")) == r"3 \lambda_i"


def test_a_matrix_label_keeps_its_latex_through_products_transposes_and_doit():
    M = matrix_label("R_half(m)", 4, 4, r"R_{\mathrm{half}}(m)")
    P = sp.MatrixSymbol("P", 4, 4)
    e = sp.Eq(M, sp.MatMul(P, M, P.T, evaluate=False), evaluate=False)
    assert sp.latex(e) == r"R_{\mathrm{half}}(m) = P R_{\mathrm{half}}(m) P^{T}"
    assert sp.latex(e.doit()) == sp.latex(e) and M.shape == (4, 4) and isinstance(M, MatrixLabel)
    assert str(e) == "Eq(R_half(m), P*R_half(m)*P.T)" and sp.pretty(M) == "R_half(m)"
    # rebuilt from its args: func(*args), pickle, copies, substitution into a symbolic shape
    import copy

    n = sp.Symbol("n", integer=True, positive=True)
    A = matrix_label("A", n, n, r"A_{\mathrm{x}}")
    for back in (A.func(*A.args), pickle.loads(pickle.dumps(A)), copy.deepcopy(A), copy.copy(A)):
        assert back == A and back.tex == A.tex
    assert A.subs(n, 3).shape == (3, 3) and sp.latex(A.xreplace({n: 3})) == r"A_{\mathrm{x}}"


@pytest.mark.parametrize("text, tex, error", [
    ("", "x", TypeError), ("x", "", TypeError), (3, "x", TypeError), ("x", None, TypeError),
    ("x", r"\frac{1}{2", ValueError),
])
def test_a_label_refuses_what_would_print_badly(text, tex, error):
    with pytest.raises(error, match="label's"):
        label(text, tex)


@pytest.fixture(scope="module")
def outcomes():
    return list(all_outcomes())


def test_every_claim_statement_is_proper_latex():
    bad = {}
    for c in claims.all_claims():
        words = italic_words(sp.latex(c.statement()))
        if words:
            bad[c.id] = words
    assert bad == {}, f"statements that print words in italics or <a, b> (name them with notation.label): {bad}"


def test_every_step_of_every_claim_is_proper_latex(outcomes):
    bad = []
    for c, o in outcomes:
        for s in o.derivation.steps if o.derivation is not None else []:
            tex = s.latex()
            if tex is not None and italic_words(tex):
                bad.append((c.id, s.text[:60], italic_words(tex)[:3]))
    assert bad == [], f"steps whose formula prints words in italics (name them with notation.label): {bad}"
