"""The built documentation renders its formulas offline, as a reader's browser would.

Needs a built site: ``sphinx-build -W -b html docs docs/_build/html`` (or the folder named by
``PEMATH_DOCS_BUILD``). Without one every test here is skipped, with the reason; set
``PEMATH_DOCS_REQUIRE=1`` (CI, after the docs build) to make a missing site or a missing
Chromium a failure instead.

* Static checks (always, given a site): every ``<script>``/``<link>``/``<img>`` of every page
  is a file of the site (no ``http:``, ``https:`` or ``//`` address: no CDN); every page
  with math loads MathJax from the site, and MathJax's fonts are there; every figure of the
  theory pages was drawn; every registered claim has its record on exactly one page.
* Browser check (given a ``chromium`` binary; Debian's ``chromium`` package, or
  ``PEMATH_CHROMIUM``): headless Chromium, with every host name unresolvable so nothing can
  come from the network, opens the pages with math and dumps the DOM after MathJax ran.
  Every ``math`` element must hold a typeset ``mjx-container`` (none left as raw ``\\(...\\)``
  TeX), MathJax must report no error (``mjx-merror``, ``data-mjx-error``, or the red text of
  an undefined macro), and the browser must log no failed load.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from html.parser import HTMLParser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SITE = Path(os.environ.get("PEMATH_DOCS_BUILD", ROOT / "docs" / "_build" / "html"))
REQUIRE = os.environ.get("PEMATH_DOCS_REQUIRE", "") not in ("", "0")

#: Pages the browser opens: every page with claim records, and the conventions.
RENDERED = [
    "theory/rope.html",  # the most formulas first: the pages are shared among a few browsers
    "theory/sinusoidal.html",
    "theory/failures.html",
    "theory/scaling.html",
    "theory/multidim.html",
    "theory/xpos.html",
    "theory/alibi.html",
    "theory/t5.html",
    "conventions.html",
    "published.html",
]

#: The figures (docs/plots/*.py) each theory page shows.
FIGURES = {
    "theory/sinusoidal.html": ["sinusoidal_heatmap"],
    "theory/rope.html": ["rope_decay", "rope_dot_offset"],
    "theory/scaling.html": ["scaling_frequencies"],
    "theory/alibi.html": ["alibi_biases"],
    "theory/t5.html": ["t5_buckets"],
}

MATH_ELEMENT = re.compile(r'<(span|div) class="math notranslate nohighlight">')


def _missing(what: str):
    if REQUIRE:
        pytest.fail(f"{what} (PEMATH_DOCS_REQUIRE is set)")
    pytest.skip(what)


@pytest.fixture(scope="module")
def site() -> Path:
    if not (SITE / "index.html").exists():
        _missing(f"no built documentation at {SITE}: run sphinx-build -W -b html docs docs/_build/html first")
    return SITE


def _pages(site: Path) -> list[Path]:
    return sorted(p for p in site.rglob("*.html") if "_static" not in p.relative_to(site).parts)


class _Assets(HTMLParser):
    """The addresses a page loads: script src, link href (stylesheets and icons), img src."""

    def __init__(self) -> None:
        super().__init__()
        self.scripts: list[str] = []
        self.links: list[tuple[str, str]] = []
        self.images: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "script" and a.get("src"):
            self.scripts.append(a["src"])
        elif tag == "link" and a.get("href"):
            self.links.append((a.get("rel", ""), a["href"]))
        elif tag == "img" and a.get("src"):
            self.images.append(a["src"])


def _assets(page: Path) -> _Assets:
    parser = _Assets()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser


def _local_file(page: Path, address: str) -> Path:
    return (page.parent / address.split("?", 1)[0].split("#", 1)[0]).resolve()


def _is_remote(address: str) -> bool:
    return bool(re.match(r"^(?:[a-z][a-z0-9+.-]*:)?//", address, re.I))


def test_no_page_loads_anything_from_the_network(site):
    remote, missing = [], []
    for page in _pages(site):
        a = _assets(page)
        loaded = a.scripts + a.images + [href for rel, href in a.links if rel in ("stylesheet", "icon", "preload")]
        for address in loaded:
            if _is_remote(address):
                remote.append(f"{page.relative_to(site)}: {address}")
            elif not _local_file(page, address).is_file():
                missing.append(f"{page.relative_to(site)}: {address}")
    assert remote == [], "pages load from the network (a CDN?)"
    assert missing == [], "pages load files the site does not have"


def test_every_page_with_math_loads_mathjax_from_the_site(site):
    with_math = 0
    for page in _pages(site):
        html = page.read_text(encoding="utf-8")
        if not MATH_ELEMENT.search(html):
            continue
        with_math += 1
        mathjax = [s for s in _assets(page).scripts if "mathjax" in s.lower()]
        assert mathjax, f"{page.relative_to(site)} has math but loads no MathJax"
        for src in mathjax:
            assert not _is_remote(src) and _local_file(page, src).is_file(), f"{page.relative_to(site)}: {src}"
    assert with_math >= len(RENDERED), f"only {with_math} pages have math"
    fonts = list((site / "_static" / "mathjax" / "output" / "chtml" / "fonts" / "woff-v2").glob("*.woff"))
    assert len(fonts) >= 10, "MathJax's CHTML fonts are not in the site"


def test_the_theory_pages_show_their_figures(site):
    for page, names in FIGURES.items():
        images = [Path(src).stem for src in _assets(site / page).images]
        for name in names:
            assert name in images, f"{page} lacks the figure of docs/plots/{name}.py (has {images})"
            png = next(_local_file(site / page, s) for s in _assets(site / page).images if Path(s).stem == name)
            assert png.stat().st_size > 10_000, f"{png} is suspiciously small"


def test_every_claim_has_its_record_on_exactly_one_page(site):
    from pemath.claims import all_claims

    anchors: dict[str, list[str]] = {}
    for page in _pages(site):
        for cid in re.findall(r'id="claim-([A-Za-z0-9_.-]+)"', page.read_text(encoding="utf-8")):
            anchors.setdefault(cid, []).append(str(page.relative_to(site)))
    assert anchors, "no claim records in the site"
    ids = {re.sub(r"[^a-z0-9]+", "-", c.id.lower()) for c in all_claims()}  # docutils' id normalisation
    assert {i: anchors.get(i, []) for i in ids if len(anchors.get(i, [])) != 1} == {}


# -- the browser -------------------------------------------------------------------------------


def _chromium() -> str | None:
    given = os.environ.get("PEMATH_CHROMIUM")
    if given:
        return given
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    return None


def _render(binary: str, page: Path) -> tuple[str, str]:
    with tempfile.TemporaryDirectory(prefix="pemath-chromium-") as profile:
        cmd = [
            binary,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            f"--user-data-dir={profile}",
            "--host-resolver-rules=MAP * ~NOTFOUND",  # no host name resolves: nothing from the network
            "--enable-logging=stderr",
            "--v=0",
            "--virtual-time-budget=30000",
            "--dump-dom",
            page.as_uri(),
        ]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"chromium failed on {page}: {done.stderr[-2000:]}"
    return done.stdout, done.stderr


@pytest.fixture(scope="module")
def rendered(site) -> dict[str, tuple[str, str]]:
    binary = _chromium()
    if binary is None:
        _missing("no chromium binary (apt-get install chromium, or set PEMATH_CHROMIUM)")
    pages = [p for p in RENDERED if (site / p).exists()]
    with ThreadPoolExecutor(max_workers=3) as pool:
        dumps = list(pool.map(lambda p: _render(binary, site / p), pages))
    return dict(zip(pages, dumps))


@pytest.mark.parametrize("page", RENDERED)
def test_the_browser_typesets_every_formula(site, rendered, page):
    assert (site / page).exists(), f"{page} was not built"
    source = (site / page).read_text(encoding="utf-8")
    dom, log = rendered[page]
    expected = len(MATH_ELEMENT.findall(source))
    assert expected > 0, f"{page} has no math to check"

    # Each math element now starts with MathJax's output; none is left as TeX.
    elements = [m.end() for m in MATH_ELEMENT.finditer(dom)]
    typeset = [e for e in elements if re.match(r"\s*<mjx-container\b", dom[e : e + 200])]
    assert len(elements) == expected, f"{page}: {len(elements)} math elements in the DOM, {expected} in the page"
    assert len(typeset) == expected, f"{page}: {expected - len(typeset)} of {expected} formulas not typeset"
    assert dom.count("<mjx-container") >= expected
    assert not re.search(r"\\\(|\\\[", re.sub(r"<(script|style)\b.*?</\1>", "", dom, flags=re.S)), (
        f"{page}: raw TeX delimiters remain in the page"
    )
    # No TeX error: a syntax error gives an mjx-merror node, an undefined macro red text (MathJax's
    # noundefined extension; the pages colour nothing else). No failed load.
    assert "<mjx-merror" not in dom and "data-mjx-error" not in dom, f"{page}: MathJax reported a TeX error"
    undefined = re.findall(r'<mtext mathcolor="red">([^<]*)</mtext>', dom)
    assert undefined == [], f"{page}: undefined TeX macros {undefined}"
    failures = [ln for ln in log.splitlines() if "Failed to load resource" in ln or "ERR_NAME_NOT_RESOLVED" in ln]
    assert failures == [], f"{page}: the browser could not load: {failures}"


# -- layout: no page wider than a phone or a laptop window, theory pages of a readable height ---------------

#: The pages whose size is checked, and those photographed (the screenshots are build artifacts).
MEASURED = ["index.html", "getting_started.html", "claims.html", "published.html", "conventions.html",
            "models.html", "testing_your_kernel.html", "tolerance.html", "benchmarks.html", "api.html"]
SHOT = ["index.html", "getting_started.html", "theory/rope.html", "theory/scaling.html",
        "testing_your_kernel.html", "tolerance.html"]
WIDTHS = (1280, 400)
#: The most a theory page may measure at 1280 px, machine records collapsed (the RoPE page, the longest,
#: measured about 16 400 px with each claim's argument shown, in Furo; it was about 29 000 px with every step inline;
#: 18 144 px on 2026-12-08, after the every-d pair identities began to show their unevaluated differences and
#: rope.elementwise_form gained its kernels and models checks: shortening four headlines did not change it).
THEORY_MAX_HEIGHT = 18500
SCREENSHOTS = ROOT / "docs" / "_build" / "screenshots"


def _measure(binary: str, page: Path, width: int) -> tuple[int, int, list[str], int, int]:
    """Height, horizontal overflow, the images that did not load, the count of raw TeX or MathJax errors,
    and the count of code blocks wider than their box (below 1280 px, recorded tables of figures excepted)."""
    with tempfile.TemporaryDirectory(prefix="pemath-chromium-") as profile:
        cmd = [binary, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", f"--user-data-dir={profile}",
               "--host-resolver-rules=MAP * ~NOTFOUND", f"--window-size={width},900", "--virtual-time-budget=30000",
               "--dump-dom", page.as_uri()]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    height = re.search(r'data-pemath-height="(\d+)"', done.stdout)
    over = re.search(r'data-pemath-overflow="(\d+)"', done.stdout)
    broken = re.search(r'data-pemath-broken="([^"]*)"', done.stdout)
    raw = re.search(r'data-pemath-raw-tex="(\d+)"', done.stdout)
    clipped = re.search(r'data-pemath-clipped="(\d+)"', done.stdout)
    tables = re.search(r'data-pemath-clipped-tables="(\d+)"', done.stdout)
    assert height and over and broken and raw and clipped and tables, (
        f"{page}: the page did not record its size (is _static/pemath-measure.js loaded?)")
    # a recorded table of figures may scroll in its own box on a phone, never at 1280 px
    clipped_code = int(clipped.group(1)) - (int(tables.group(1)) if width < 1280 else 0)
    return int(height.group(1)), int(over.group(1)), broken.group(1).split(), int(raw.group(1)), clipped_code


@pytest.fixture(scope="module")
def sizes(site) -> dict[tuple[str, int], tuple[int, int, list[str], int, int]]:
    binary = _chromium()
    if binary is None:
        _missing("no chromium binary (apt-get install chromium, or set PEMATH_CHROMIUM)")
    theory = sorted(str(p.relative_to(site)) for p in (site / "theory").glob("*.html"))
    jobs = [(p, w) for p in MEASURED + theory for w in WIDTHS if (site / p).exists()]
    with ThreadPoolExecutor(max_workers=3) as pool:
        got = list(pool.map(lambda job: _measure(binary, site / job[0], job[1]), jobs))
    return dict(zip(jobs, got))


def test_no_page_is_wider_than_the_window(sizes):
    wide = {f"{p} at {w}px": over for (p, w), (_, over, *_) in sizes.items() if over > 0}
    assert wide == {}, f"pages wider than the window (px): {wide}"
    assert {w for _, w in sizes} == set(WIDTHS) and len(sizes) >= 2 * (len(MEASURED) + 8)


def test_theory_pages_are_of_a_readable_height(sizes):
    tall = {p: h for (p, w), (h, *_) in sizes.items() if p.startswith("theory/") and w == 1280 and
            h > THEORY_MAX_HEIGHT}
    assert tall == {}, f"theory pages taller than {THEORY_MAX_HEIGHT} px at 1280 px: {tall}"


def test_every_figure_loads_and_no_raw_tex_is_left(sizes):
    """In the browser, on every measured page at both widths: each <img> loaded (complete, a natural
    width), and no text still holds TeX delimiters or a MathJax error."""
    broken = {f"{p} at {w}px": b for (p, w), (_, _, b, *_) in sizes.items() if b}
    assert broken == {}, f"images that did not load: {broken}"
    raw = {f"{p} at {w}px": n for (p, w), (_, _, _, n, _) in sizes.items() if n}
    assert raw == {}, f"text nodes with raw TeX or a MathJax error: {raw}"
    figures = sum(1 for (p, w) in sizes if p in FIGURES)
    assert figures == 2 * len(FIGURES), "the pages with figures were not all measured"


def test_no_code_block_is_clipped(sizes):
    """Code and messages wrap inside the column (pemath.css): no <pre> wider than its box at 1280 px, and at
    400 px none but the recorded tables of figures (div.pemath-output, the benchmarks), which scroll in their box."""
    clipped = {f"{p} at {w}px": n for (p, w), (*_, n) in sizes.items() if n}
    assert clipped == {}, f"code blocks wider than their box (a reader would scroll or miss the end): {clipped}"


def _screenshot(binary: str, page: Path, out: Path, *, dark: bool = False) -> None:
    out.unlink(missing_ok=True)  # a picture left by an earlier run must not pass for this one
    with tempfile.TemporaryDirectory(prefix="pemath-chromium-") as profile:
        subprocess.run([binary, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                        f"--user-data-dir={profile}", "--host-resolver-rules=MAP * ~NOTFOUND",
                        "--window-size=1280,2400", "--virtual-time-budget=30000", "--hide-scrollbars",
                        *(["--force-dark-mode"] if dark else []), f"--screenshot={out}", page.as_uri()],
                       capture_output=True, timeout=120)
    assert out.exists() and out.stat().st_size > 10_000, f"no screenshot of {page}"


def test_screenshots_of_the_main_pages(site):
    """The pages of SHOT at 1280 px (docs/_build/screenshots/, build artifacts), and the first two again with
    the reader's system in dark mode: the theme follows it (the page's mean brightness drops)."""
    binary = _chromium()
    if binary is None:
        _missing("no chromium binary (apt-get install chromium, or set PEMATH_CHROMIUM)")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for page in SHOT:
        _screenshot(binary, site / page, SCREENSHOTS / (page.replace("/", "-").replace(".html", ".png")))
    for page in SHOT[:2]:
        name = page.replace("/", "-").replace(".html", "")
        _screenshot(binary, site / page, SCREENSHOTS / f"{name}-dark.png", dark=True)
    from PIL import Image, ImageStat  # Pillow comes with matplotlib, which drew the site's figures

    for page in SHOT[:2]:
        name = page.replace("/", "-").replace(".html", "")
        mean = [ImageStat.Stat(Image.open(SCREENSHOTS / f"{name}{suffix}.png").convert("L")).mean[0]
                for suffix in ("", "-dark")]
        assert mean[0] > 180 and mean[1] < 90, f"{page}: mean brightness light {mean[0]:.0f}, dark {mean[1]:.0f}"
