"""The documentation sources stay consistent with the code: every claim family has a theory page,
every claim a page mentions exists, every figure script is used and draws, the index links every page.

These read the sources (no Sphinx build); tests/test_docs_render.py checks a built site.
"""

from __future__ import annotations

import importlib.util
import re
import runpy
import sys
from pathlib import Path

import pytest

from pemath.claims import all_claims
from pemath.claims._registry import FAMILIES

DOCS = Path(__file__).resolve().parents[1] / "docs"
THEORY = DOCS / "theory"
PLOTS = DOCS / "plots"


@pytest.fixture(scope="module")
def ext():
    """docs/_ext/claims_page.py, imported as the docs build does (it needs Sphinx)."""
    pytest.importorskip("sphinx", reason="Sphinx is not installed (pip install -e '.[docs]')")
    sys.path.insert(0, str(DOCS / "_ext"))
    try:
        import claims_page
    finally:
        sys.path.remove(str(DOCS / "_ext"))
    return claims_page


def _rst_files() -> list[Path]:
    return sorted(p for p in DOCS.rglob("*.rst") if not {"_build", "_generated", "_templates"} & set(p.parts))


def test_every_claim_family_is_on_exactly_one_page(ext):
    pages_of = {fam: [p for p, fams in ext.PAGES.items() if fam in fams] for fam in FAMILIES}
    assert {fam: pages for fam, pages in pages_of.items() if len(pages) != 1} == {}
    assert {c.family for c in all_claims()} <= set(FAMILIES)


def test_every_page_exists_and_includes_its_generated_claims(ext):
    for page in ext.PAGES:
        doc = DOCS / (ext.page_doc(page) + ".rst")
        assert doc.exists(), f"claims_page.PAGES names {page!r} but {doc} is missing"
        assert f"_generated/claims/{page}.inc" in doc.read_text(), f"{doc.name} does not include its claims"
    assert "_generated/claims/index.inc" in (DOCS / "claims.rst").read_text()
    assert "_generated/claims/published_table.inc" in (DOCS / "published.rst").read_text()


def test_every_claim_a_page_links_to_exists():
    known = {c.id for c in all_claims()}
    linked = {}
    for path in _rst_files():
        for cid in re.findall(r"<claim-([A-Za-z0-9_.]+)>`|:ref:`claim-([A-Za-z0-9_.]+)`", path.read_text()):
            linked.setdefault(cid[0] or cid[1], []).append(path.name)
    assert linked, "the theory pages link to no claim"
    assert {cid: where for cid, where in linked.items() if cid not in known} == {}


def test_the_theory_pages_link_most_of_their_claims(ext):
    # The hand-written introductions walk through the claims of their page; a new claim
    # should get a sentence (the generated records are there in any case).
    claims = all_claims()
    for page, fams in ext.PAGES.items():
        if page == "published":
            continue
        text = (DOCS / (ext.page_doc(page) + ".rst")).read_text()
        ids = [c.id for c in claims if c.family in fams]
        missing = [cid for cid in ids if f"<claim-{cid}>" not in text]
        assert len(missing) <= len(ids) // 3, f"theory/{page}.rst mentions none of {missing}"


def test_the_index_links_every_page():
    index = (DOCS / "index.rst").read_text()
    toctree = set(re.findall(r"^   (\S+)$", index, re.M))
    docs = {str(p.relative_to(DOCS).with_suffix("")) for p in _rst_files()} - {"index"}
    assert docs - toctree == set(), "pages missing from the index's toctrees"
    for page in ("tolerance", "benchmarks", "conventions", "published", "claims", "api"):
        assert page in toctree


def test_every_plot_script_is_used_by_a_page():
    scripts = {p.name for p in PLOTS.glob("*.py")}
    used = set()
    for path in _rst_files():
        used |= set(re.findall(r"^\.\. plot:: (\S+\.py)\s*$", path.read_text(), re.M))
    assert scripts, "docs/plots has no scripts"
    assert used == scripts, f"unused: {scripts - used}; missing: {used - scripts}"


@pytest.mark.parametrize("script", sorted(p.name for p in PLOTS.glob("*.py")))
def test_every_plot_script_draws_with_agg(script):
    if importlib.util.find_spec("matplotlib") is None:
        pytest.skip("matplotlib is not installed (pip install -e '.[docs]')")
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    plt.close("all")
    runpy.run_path(str(PLOTS / script), run_name="__main__")
    figs = [plt.figure(n) for n in plt.get_fignums()]
    assert figs, f"{script} drew no figure"
    for fig in figs:
        lines = [ln for ax in fig.axes for ln in ax.get_lines()]
        images = [im for ax in fig.axes for im in ax.get_images()]
        assert lines or images, f"{script}: a figure with nothing drawn"
        for ln in lines:
            y = ln.get_ydata()
            assert len(y) > 0
    plt.close("all")


def test_the_plot_scripts_are_seeded():
    for path in PLOTS.glob("*.py"):
        text = path.read_text()
        calls = re.findall(r"np\.random\.\w+\([^)]*\)", text)
        assert all(re.fullmatch(r"np\.random\.default_rng\(\d+\)", c) for c in calls), f"{path.name}: {calls}"
        assert "import random" not in text, f"{path.name} uses the unseeded random module"


def test_the_generated_record_of_a_claim(ext):
    """The record a page shows: label, statement via sympy.latex, decided steps, counterexample, checks."""
    import sympy as sp

    from pemath.claims import Check, Claim, Verdict, run_claim
    from pemath.symbolic._decide import Derivation

    x = sp.Symbol("x", real=True)

    def proof():
        d = Derivation("t")
        d.define("Expand the square.")
        with d.part("counterexample"):
            d.zero("(x + 1)^2 - x^2 - 2x - 1 = 0", (x + 1) ** 2 - x**2 - 2 * x - 1)
        return Verdict(d, "x = 0: 1 != 2")

    claim = Claim(
        id="docs.example",
        title="A *published* claim [about] x_1",
        kind="published claim",
        family="published",
        statement=lambda: sp.Eq((x + 1) ** 2, x**2 + 2 * x + 1),
        proof=proof,
        checks=(Check("numeric", lambda: "3 examples"),),
        references=("Someone et al. (2020), eq. 1",),
    )
    outcome = run_claim(claim)
    assert outcome.status == "refuted"
    text = "\n".join(ext._claim_rst(claim, outcome, sp.latex, "~"))
    assert ".. _claim-docs.example:" in text
    assert r"A \*published\* claim \[about\] x\_1" in text  # inline markup made inert
    assert "\\left(x + 1\\right)^{2} = x^{2} + 2 x + 1" in text
    assert "``docs.example`` · published claim · verdict **refuted**" in text
    assert "As ``pemath prove`` lists it: ``A *published* claim [about] x_1``" in text
    assert "x = 0\\: 1 != 2" in text
    # the argument, shown; then the machine record, in a closed dropdown
    argument, record = text.split("**Proof.**")[1].split(".. dropdown::")
    assert "1. Expand the square. *(definition)*" in argument and "*(decided by rewrite: expand)*" in argument
    assert record.startswith(" The machine record: 2 steps (1 decided, each with its certificate) in 1 derivation")
    assert "   *t*" in record and "   2. (x + 1)^2" in record
    assert "* ``numeric``: passed\\: 3 examples" in text
    assert "Someone et al. (2020), eq. 1" in text


def test_the_argument_is_a_few_steps_and_the_record_has_them_all(ext):
    """A claim's argument: the main derivation's first steps (a repeated step and the pair-partition
    lemma folded into one line), the other derivations named; the record keeps every step."""
    import sympy as sp

    from pemath.symbolic import pairs
    from pemath.symbolic._decide import Derivation, unevaluated

    d = Derivation("group, every even d")
    u, v = sp.IndexedBase("u"), sp.IndexedBase("v")
    pairs.inner_over_pairs(d, "half", u, v, partial=True)  # 4 lemma steps
    x = sp.Symbol("x")
    for k in range(ext.ARGUMENT_STEPS + 2):
        d.equal(f"step {k}: x + {k} = {k} + x", unevaluated(lambda: x + k), k + x)  # noqa: B023
    d.equal("step 0: x + 0 = 0 + x", unevaluated(lambda: x + 0), x)  # the same text again: shown once
    other = Derivation("group, d = 4")
    other.equal("x = x", unevaluated(lambda: x * 1), x)
    steps = d.steps + other.steps  # each step keeps its derivation's title as its section
    argument = "\n".join(ext._argument(steps))
    assert argument.startswith("Uses the pair partition lemma (decided by induction, instance) and the pass-through "
                               "split lemma (decided by instance, rewrite); their steps are in the machine record.")
    assert "enumerate the features" not in argument and "split off" not in argument
    shown = [k for k in range(ext.ARGUMENT_STEPS + 2) if f"step {k}\\:" in argument]
    assert shown == list(range(ext.ARGUMENT_STEPS)) and argument.count("step 0\\:") == 1
    assert "In the machine record: 2 more steps of this derivation, and 1 more derivation (d = 4)." in argument
    record = "\n".join(ext._record(steps))
    assert all(ext._text(s.text) in record for s in steps)
    assert f"The machine record: {len(steps)} steps ({len(steps)} decided" in record


def test_the_generator_writes_every_page_and_warns_on_a_failed_theorem(ext, monkeypatch):
    """generate() on the real registry, with the run replaced by canned outcomes (fast)."""
    import pemath.claims as claims_pkg
    from pemath.claims import Outcome

    def fake_run(claims):
        out = []
        for i, c in enumerate(claims):
            status = "failed" if i == 0 else "refuted" if c.kind == "published claim" else "proved"
            o = Outcome(c.id, c.title, c.kind, c.family, status, 0.0, references=c.references)
            o.checks = {"numeric": "passed: canned"}
            if status == "failed":
                o.message = "step 2 did not reduce to zero"
            if status == "refuted":
                o.counterexample = f"canned counterexample of {c.id}"
            out.append(o)
        return out

    monkeypatch.setattr(claims_pkg, "run_claims", fake_run)
    files, warnings = ext.generate()
    first = claims_pkg.all_claims()[0]
    assert warnings == [f"claim {first.id}: failed: step 2 did not reduce to zero"]
    assert set(files) == {f"{p}.inc" for p in ext.PAGES} | {"index.inc", "published_table.inc"}
    every = "".join(files[f"{p}.inc"] for p in ext.PAGES)
    for c in claims_pkg.all_claims():
        assert every.count(f".. _claim-{c.id}:\n") == 1, c.id
        assert f"<claim-{c.id}>` (``{c.id}``)" in files["index.inc"]
        if c.kind == "published claim":
            assert ext._text(f"canned counterexample of {c.id}") in files["published_table.inc"]
