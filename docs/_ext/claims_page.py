"""Sphinx extension: write the claims page body from the claim registry.

At ``builder-inited`` it runs ``pemath.claims.run_claims(pemath.claims.all_claims())``
(about 10 s) and writes ``docs/_generated/claims.inc``, which ``docs/claims.rst``
includes: per claim its title, id, kind, verdict, the statement and the proof steps
(rendered with :func:`sympy.latex`), the checks, the counterexample of a refuted claim,
and the references, grouped by family. A claim whose status is ``failed`` or ``error``
is reported as a Sphinx warning, so ``sphinx-build -W`` fails on it.

The file is rewritten only when its text changes, so an unchanged registry does not
force the page to be re-read.
"""

from __future__ import annotations

import os
import re

from sphinx.util import logging

logger = logging.getLogger(__name__)

_INLINE_SPECIAL = re.compile(r"([\\`*_|\[\]<>:])")

FAMILY_TITLES = {
    "sinusoidal": "Sinusoidal encoding",
    "rope_relative": "RoPE: relative positions",
    "rope_forms": "RoPE: equivalent forms",
    "rope_calculus": "RoPE: calculus",
    "scaling": "RoPE scalings",
    "multidim": "Multi-dimensional RoPE",
    "xpos": "xPos",
    "alibi": "ALiBi",
    "t5": "T5 relative buckets",
    "pedagogy": "Pedagogical encodings",
    "rope_derivation": "RoPE: derivation",
    "rope_decay": "RoPE: long-term decay",
    "published": "Published claims",
}


def _text(s: object) -> str:
    """Plain text made inert for reST inline markup, on one line."""
    return _INLINE_SPECIAL.sub(r"\\\1", " ".join(str(s).split()))


def _heading(title: str, char: str) -> list[str]:
    title = _text(title)
    return [title, char * len(title), ""]


def _math(latex: str, indent: str = "") -> list[str]:
    return [f"{indent}.. math::", "", f"{indent}   {' '.join(latex.split())}", ""]


def _literal_block(text: str, indent: str) -> list[str]:
    return [f"{indent}::", ""] + [f"{indent}   {line}" for line in str(text).splitlines()] + [""]


def _claim_rst(claim, outcome, latex) -> list[str]:
    out = [f".. _claim-{claim.id}:", ""]
    out += _heading(claim.title, "~")
    out += [
        f":id: ``{claim.id}``",
        f":kind: {claim.kind}",
        f":verdict: **{outcome.status}**",
        f":time: {outcome.seconds:.2f} s",
        "",
    ]
    out += ["**Statement**", ""]
    try:
        out += _math(latex(claim.statement()))
    except Exception as exc:  # pragma: no cover - reported, never hidden
        logger.warning("claim %s: statement() raised %s: %s", claim.id, type(exc).__name__, exc)
    if outcome.counterexample:
        out += ["**Counterexample**", "", _text(outcome.counterexample), ""]
    if outcome.message:
        out += ["**Message**", ""] + _literal_block(outcome.message, "")
    steps = outcome.derivation.steps if outcome.derivation is not None else []
    if steps:
        out += ["**Proof**", ""]
        for i, step in enumerate(steps, 1):
            mark = {"proved": " *(decided: " + _text(step.method or "exact") + ")*", "failed": " **(failed)**"}
            out.append(f"{i}. {_text(step.text)}{mark.get(step.status, '')}")
            out.append("")
            tex = step.latex()
            if tex is not None:
                out += _math(tex, "   ")
    if outcome.checks:
        out += ["**Checks**", ""]
        for name, result in outcome.checks.items():
            out.append(f"* ``{name}``: {_text(result)}")
        out.append("")
    if claim.references:
        out += ["**References**", ""]
        out += [f"* {_text(r)}" for r in claim.references]
        out.append("")
    return out


def claims_rst() -> str:
    import sympy as sp

    from pemath.claims import all_claims, run_claims
    from pemath.claims._registry import FAMILIES

    claims = all_claims()
    outcomes = run_claims(claims)
    by_family: dict[str, list] = {}
    for claim, outcome in zip(claims, outcomes):
        by_family.setdefault(claim.family, []).append((claim, outcome))
        if outcome.status not in ("proved", "refuted"):
            logger.warning("claim %s: %s: %s", claim.id, outcome.status, outcome.message.splitlines()[0] if outcome.message else "")

    counts: dict[str, int] = {}
    for o in outcomes:
        counts[o.status] = counts.get(o.status, 0) + 1
    lines = [
        f"{len(outcomes)} claims: " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())) + ".",
        "",
        ".. list-table::",
        "   :header-rows: 1",
        "",
        "   * - claim",
        "     - kind",
        "     - verdict",
    ]
    for claim, outcome in zip(claims, outcomes):
        lines += [f"   * - :ref:`claim-{claim.id}`", f"     - {claim.kind}", f"     - {outcome.status}"]
    lines.append("")
    order = [f for f in FAMILIES if f in by_family] + sorted(set(by_family) - set(FAMILIES))
    for fam in order:
        lines += _heading(FAMILY_TITLES.get(fam, fam), "-")
        for claim, outcome in by_family[fam]:
            lines += _claim_rst(claim, outcome, sp.latex)
    return "\n".join(lines) + "\n"


def _write(app) -> None:
    path = os.path.join(app.srcdir, "_generated", "claims.inc")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    logger.info("running the claim registry for the claims page ...")
    text = claims_rst()
    old = None
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            old = f.read()
    if text != old:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)


def setup(app):
    app.connect("builder-inited", _write)
    return {"version": "0.1", "parallel_read_safe": True, "parallel_write_safe": True}
