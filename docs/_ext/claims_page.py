"""Sphinx extension: the claim pages, written from the claim registry at build time.

At ``builder-inited`` it runs ``pemath.claims.run_claims(pemath.claims.all_claims())``
once (about 10 s) and writes, under ``docs/_generated/claims/``:

``<page>.inc``
    for each theory page of :data:`PAGES`, the record of each claim of the page's families:
    its name (``Claim.name``, words without formulas), id, kind and verdict; the statement
    (:func:`sympy.latex`; named quantities carry their LaTeX, :mod:`pemath.symbolic.notation`);
    the title as ``pemath prove`` lists it; the counterexample of a refuted claim; the proof
    as a reader follows it (:func:`_argument`: the first steps of the main derivation, each
    formula displayed, the pair-partition lemma folded into one line); the machine record of
    every step with its certificate, in a closed sphinx-design dropdown (:func:`_record`);
    the checks and the references. Each claim is written on exactly one page (its
    ``claim-<id>`` label).
``index.inc``
    the table of every claim: its name linking to its record, id, page, kind and verdict.
``published_table.inc``
    the table of every published claim (kind ``"published claim"``, and the claims of the
    family ``published``): verdict and counterexample.

A claim whose status is ``failed`` or ``error`` is reported as a Sphinx warning, so
``sphinx-build -W`` fails on it; so does a family that no page shows.

The registry is not run again when nothing it depends on changed: the files carry a
key, the SHA-256 of pemath's sources, of this file and of the SymPy, mpmath and NumPy
versions; a second build with the same key (the doctest build after the html build)
reuses them and repeats their warnings.
Files are rewritten only when their text changes, so an unchanged registry does not
force the pages to be re-read.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path

from _rst import list_table  # docs/_ext/_rst.py: the list-table every generated table uses
from sphinx.util import logging

logger = logging.getLogger(__name__)

_INLINE_SPECIAL = re.compile(r"([\\`*_|\[\]<>:])")

#: Theory page -> the claim families it shows, in order. Page ``x`` is ``docs/theory/x.rst``,
#: except ``published`` (``docs/published.rst``).
PAGES: dict[str, tuple[str, ...]] = {
    "sinusoidal": ("sinusoidal", "pedagogy"),
    "rope": ("rope_relative", "rope_forms", "rope_calculus", "rope_derivation", "rope_decay"),
    "failures": ("failures",),
    "scaling": ("scaling",),
    "multidim": ("multidim",),
    "xpos": ("xpos",),
    "alibi": ("alibi",),
    "t5": ("t5",),
    "published": ("published",),
}

FAMILY_TITLES = {
    "sinusoidal": "Sinusoidal encoding",
    "pedagogy": "Simpler encodings, and why they fail",
    "rope_relative": "Relative positions",
    "rope_forms": "Equivalent forms and layouts",
    "rope_calculus": "Translation invariance and the backward pass",
    "rope_derivation": "Deriving RoPE",
    "rope_decay": "Long-term decay",
    "failures": "Bugs users hit, as theorems",
    "scaling": "RoPE scalings",
    "multidim": "Multi-dimensional RoPE",
    "xpos": "xPos",
    "alibi": "ALiBi",
    "t5": "T5 relative buckets",
    "published": "Published claims",
}

PUBLISHED_KIND = "published claim"


def page_doc(page: str) -> str:
    """The Sphinx document name of a page of :data:`PAGES`."""
    return page if page == "published" else f"theory/{page}"


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


#: The argument shows at most this many steps of a claim's main derivation (a step whose text it has
#: shown already, a lemma used twice, is not repeated), and formulas up to this many characters of
#: LaTeX; the rest is in the machine record, one click away.
ARGUMENT_STEPS = 4
#: Longer formulas in the machine record (a shipped table against its formula) are named, not typeset.
RECORD_FORMULA_CHARS = 4000
ARGUMENT_FORMULA_CHARS = 500


def _mark(step) -> str:
    """How a step stands: decided (and by what), or the role of a narrated step."""
    if step.status == "proved":
        return f" *(decided by {_text(step.certificate or '')}: {_text(step.method or 'exact')})*"
    if step.status == "failed":
        return " **(failed)**"
    return f" *({_text(step.role or '')})*"


def _sections(steps) -> list[str | None]:
    out: list[str | None] = []
    for s in steps:
        if s.section not in out:
            out.append(s.section)
    return out


def _without_common_prefix(titles: list[str]) -> list[str]:
    """``["RoPE group, d = 2", "RoPE group, d = 4"]`` -> ``["d = 2", "d = 4"]`` (cut at a word boundary)."""
    if len(titles) < 2:
        return titles
    prefix = os.path.commonprefix(titles)
    cut = max(prefix.rfind(", "), prefix.rfind(": "))
    if cut <= 0:
        return titles
    return [t[cut + 2:] or t for t in titles]


def _argument(steps, indent: str = "") -> list[str]:
    """The proof as a reader follows it: the first steps of the claim's main derivation (its first
    section), each with its formula displayed; the other derivations (the same facts at fixed sizes,
    the other layout, a lemma) are named in one line."""
    sections = _sections(steps)
    main = [s for s in steps if s.section == sections[0]]
    seen: set[str] = set()
    shown = []
    lemmas: dict[str, set[str]] = {}  # a shared lemma's steps (Derivation.lemma), folded into one line
    for step in main:
        if step.lemma is not None:
            lemmas.setdefault(step.lemma, set()).add(step.certificate or step.role or "")
        elif step.text not in seen:
            seen.add(step.text)
            shown.append(step)
    out: list[str] = []
    if lemmas:
        used = " and ".join(f"the {_text(name)} lemma (decided by {', '.join(sorted(c))})" for name, c in lemmas.items())
        out += [f"{indent}Uses {used}; {'their' if len(lemmas) > 1 else 'its'} steps are in the machine record.", ""]
    for n, step in enumerate(shown[:ARGUMENT_STEPS], 1):
        out += [f"{indent}{n}. {_text(step.text)}{_mark(step)}", ""]
        tex = None if step.trivial else step.latex()
        if tex is not None and len(tex) <= ARGUMENT_FORMULA_CHARS:
            out += _math(tex, indent + "   ")
    rest = len(shown) - min(len(shown), ARGUMENT_STEPS)
    others = [s for s in sections[1:] if s]
    if rest or others:
        more = [f"{rest} more step{'s' if rest != 1 else ''} of this derivation"] if rest else []
        if others:
            names = "; ".join(_text(t) for t in _without_common_prefix([s for s in sections if s])[1:])
            more.append(f"{len(others)} more derivation{'s' if len(others) != 1 else ''} ({names})")
        out += [f"{indent}In the machine record: " + ", and ".join(more) + ".", ""]
    return out


def _record(steps) -> list[str]:
    """Every step, with its certificate, in a dropdown (closed): grouped by the derivation that made it."""
    decided = sum(s.status == "proved" for s in steps)
    sections = _sections(steps)
    plural = "s" if len(sections) != 1 else ""
    out = [f".. dropdown:: The machine record: {len(steps)} steps ({decided} decided, each with its certificate) "
           f"in {len(sections)} derivation{plural}", "   :class-container: pemath-record", ""]
    section = object()
    for i, step in enumerate(steps, 1):
        if step.section != section:
            section = step.section
            out += [f"   *{_text(section or 'derivation')}*", ""]
        out += [f"   {i}. {_text(step.text)}{_mark(step)}", ""]
        tex = None if step.trivial else step.latex()
        if tex is not None and len(tex) <= RECORD_FORMULA_CHARS:
            out += _math(tex, "      ")
        elif tex is not None:
            out += [f"      (its formula has {len(tex)} characters of LaTeX: ``pemath prove --json`` prints it)", ""]
    return out


def _claim_rst(claim, outcome, latex, char: str) -> list[str]:
    out = [f".. _claim-{claim.id}:", ""]
    out += _heading(claim.display_name, char)
    out += [f"``{claim.id}`` · {claim.kind} · verdict **{outcome.status}**", ""]
    out += ["**Statement.**", ""]
    try:
        out += _math(latex(claim.statement()))
    except Exception as exc:  # pragma: no cover - reported, never hidden
        logger.warning("claim %s: statement() raised %s: %s", claim.id, type(exc).__name__, exc)
    if outcome.statement is not None:
        # closed, like the machine record: a formal statement is one long line of text
        out += [".. dropdown:: Formal statement: the proposition the proof checker matches",
                "   :class-container: pemath-record", "",
                f"   ``pemath prove``'s title for it (the proof checker derives the verdict from it and the checked "
                f"steps): ``{' '.join(outcome.title.split())}``", "",
                f"   Its written title: ``{' '.join(claim.title.split())}``", ""]
    else:
        out += [f"As ``pemath prove`` lists it: ``{' '.join(claim.title.split())}``", ""]
    decided = [s for s in (outcome.derivation.steps if outcome.derivation is not None else []) if s.status == "proved"]
    if decided:
        checked = sum(1 for s in decided if isinstance(s.kernel, dict) and "proposition" in s.kernel)
        out += [f"{checked} of its {len(decided)} decided steps are verified by the proof checker "
                "(:doc:`/claims`); the others are decided by the SymPy kernel alone.", ""]
    if outcome.counterexample:
        out += ["**False as stated.**", "", _text(outcome.counterexample), ""]
    if outcome.fair_reading:
        out += ["**Fair reading.**", "", _text(outcome.fair_reading), ""]
    if outcome.message:
        out += ["**Message**", ""] + _literal_block(outcome.message, "")
    steps = outcome.derivation.steps if outcome.derivation is not None else []
    if steps:
        out += ["**Proof.**", ""] + _argument(steps) + _record(steps)
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


def _link(claim) -> str:
    """A table cell: the claim's name in words, linking to its record, and its id."""
    name = claim.display_name.replace("<", "\\<").replace("`", "\\`")
    return f":ref:`{name} <claim-{claim.id}>` (``{claim.id}``)"


def _counts(outcomes) -> str:
    counts: dict[str, int] = {}
    for o in outcomes:
        counts[o.status] = counts.get(o.status, 0) + 1
    return f"{len(outcomes)} claims: " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())) + "."


def _table(header: list[str], rows: list[list[str]], widths: str) -> list[str]:
    return list_table([header, *rows], (f":widths: {widths}",)) + [""]


def _page_rst(pairs, latex) -> list[str]:
    """The claims of one page; a family heading (``~``) when the page shows several families."""
    families = list(dict.fromkeys(c.family for c, _ in pairs))
    lines = [_counts([o for _, o in pairs]), ""]
    lines += _table(
        ["claim", "kind", "verdict"],
        [[_link(c), c.kind, f"**{o.status}**"] for c, o in pairs],
        "70 15 15",
    )
    for fam in families:
        char = "~"
        if len(families) > 1:
            lines += _heading(FAMILY_TITLES.get(fam, fam), "~")
            char = "^"
        for claim, outcome in pairs:
            if claim.family == fam:
                lines += _claim_rst(claim, outcome, latex, char)
    return lines


def _page_of(family: str) -> str | None:
    return next((p for p, fams in PAGES.items() if family in fams), None)


def generate() -> tuple[dict[str, str], list[str]]:
    """Run the registry once: the text of each include file, and the warnings to report."""
    import sympy as sp

    from pemath.claims import all_claims, run_claims

    claims = all_claims()
    outcomes = run_claims(claims)
    warnings = []
    for claim, outcome in zip(claims, outcomes):
        if outcome.status not in ("proved", "imprecise", "refuted"):
            first = outcome.message.splitlines()[0] if outcome.message else ""
            warnings.append(f"claim {claim.id}: {outcome.status}: {first}")
        if _page_of(claim.family) is None:
            warnings.append(f"claim {claim.id}: family {claim.family!r} is on no page of claims_page.PAGES")
    pairs = list(zip(claims, outcomes))
    files: dict[str, str] = {}
    for page, fams in PAGES.items():
        mine = [(c, o) for c, o in pairs if c.family in fams]
        files[f"{page}.inc"] = "\n".join(_page_rst(mine, sp.latex)) + "\n"

    rows = []
    for c, o in pairs:
        page = _page_of(c.family)
        where = f":doc:`/{page_doc(page)}`" if page else "(none)"
        rows.append([_link(c), where, c.kind, f"**{o.status}**"])
    files["index.inc"] = "\n".join([_counts(outcomes), ""] + _table(["claim", "page", "kind", "verdict"], rows, "55 15 15 15")) + "\n"

    published = [(c, o) for c, o in pairs if c.kind == PUBLISHED_KIND or c.family == "published"]
    rows = [
        [
            _link(c),
            c.kind,
            f"**{o.status}**",
            _text(o.counterexample) if o.counterexample else "(none: it holds)" if o.status == "proved" else "",
            _text(o.fair_reading) if o.fair_reading else "",
        ]
        for c, o in published
    ]
    files["published_table.inc"] = "\n".join(_table(["claim", "kind", "verdict", "false as stated", "fair reading"], rows,
                                                     "24 10 10 30 26")) + "\n"
    return files, warnings


def _key(confdir: str) -> str:
    """SHA-256 of pemath's sources, this extension and the SymPy/mpmath/NumPy versions: what the files depend on."""
    import mpmath
    import numpy
    import sympy

    repo = Path(confdir).resolve().parent
    h = hashlib.sha256(f"sympy {sympy.__version__} mpmath {mpmath.__version__} numpy {numpy.__version__}".encode())
    for path in sorted((repo / "pemath").rglob("*.py")) + [Path(__file__).resolve()]:
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def _write_if_changed(path: Path, text: str) -> None:
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def _write(app) -> None:
    outdir = Path(app.srcdir) / "_generated" / "claims"
    outdir.mkdir(parents=True, exist_ok=True)
    stamp = outdir / "key.json"
    key = _key(app.confdir)
    names = [f"{p}.inc" for p in PAGES] + ["index.inc", "published_table.inc"]
    cached = None
    if stamp.exists() and all((outdir / n).exists() for n in names):
        try:
            cached = json.loads(stamp.read_text(encoding="utf-8"))
        except ValueError:
            cached = None
    if cached is not None and cached.get("key") == key:
        logger.info("claim pages: registry unchanged since the last build, reusing docs/_generated/claims")
        warnings = cached.get("warnings", [])
    else:
        logger.info("running the claim registry for the claim pages ...")
        files, warnings = generate()
        for name, text in files.items():
            _write_if_changed(outdir / name, text)
        _write_if_changed(stamp, json.dumps({"key": key, "warnings": warnings}, indent=1) + "\n")
    for w in warnings:
        logger.warning(w)


def setup(app):
    app.connect("builder-inited", _write)
    return {"version": "0.2", "parallel_read_safe": True, "parallel_write_safe": True}
