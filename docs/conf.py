"""Sphinx configuration for pemath.

Build (warnings are errors; no network needed)::

    sphinx-build -W -b html docs docs/_build/html
    sphinx-build -b doctest docs docs/_build/doctest

Theory pages (docs/theory/*.rst) carry hand-written introductions; the claim records on
them, the claims index and the published-claims table are written at build time from the
claim registry by docs/_ext/claims_page.py. Figures are drawn at build time from
docs/plots/*.py by matplotlib's plot directive.

MathJax is served from the built site (the ``sphinx-mathjax-offline`` package ships
MathJax 3.2.2 and copies it into ``_static/mathjax``); nothing is loaded from a CDN.
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # the repository root: import pemath from the checkout
sys.path.insert(0, os.path.join(HERE, "_ext"))

import pemath  # noqa: E402

project = "pemath"
author = "pemath contributors"
copyright = "pemath contributors"
release = getattr(pemath, "__version__", "0.1.0")
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx.ext.doctest",
    "sphinx.ext.mathjax",
    "sphinx-mathjax-offline",  # bundles MathJax into _static/mathjax (no CDN)
    "sphinx_copybutton",  # a copy button on every code block (prompts and output left out)
    "sphinx_design",  # tabs and dropdowns
    "matplotlib.sphinxext.plot_directive",  # figures drawn at build time from docs/plots/*.py
    "claims_page",  # docs/_ext/claims_page.py: the claim pages, built from the registry
    "models_table",  # docs/_ext/models_table.py: the model registry as a table
    "tolerance_table",  # docs/_ext/tolerance_table.py: rope_tolerance, dtype by position
    "scaling_formulas",  # docs/_ext/scaling_formulas.py: every scaling's formula, from pemath.symbolic.scaling
]

# MathJax from the built site only (sphinx-mathjax-offline copies it there).
mathjax_path = "mathjax/tex-chtml.js"

templates_path = ["_templates"]
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]

# autodoc / autosummary
autosummary_generate = True
autodoc_default_options = {"members": True, "show-inheritance": True}
autodoc_typehints = "none"  # the numpydoc Parameters sections carry the types
autodoc_member_order = "bysource"

# napoleon: numpydoc-style sections
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False

# doctest builder: the examples in the docstrings and pages
doctest_global_setup = """
import numpy as np
import pemath
"""

# Furo: light and dark (following the reader's system, with a toggle), a sidebar that folds away on
# a phone, nothing loaded from the network (system fonts).
html_theme = "furo"
html_static_path = ["_static"]
html_css_files = ["pemath.css"]  # machine records collapsed, wide formulas scroll in their own box
html_js_files = ["pemath-measure.js"]  # the page size, for the render check (tests/test_docs_render.py)
html_title = "pemath"
# No assets off the site (tests/test_docs_render.py checks every page); the footer keeps Furo's
# credit link, which loads nothing.
html_show_sphinx = False
html_theme_options = {
    "navigation_with_keys": True,
    "top_of_page_buttons": [],  # no "edit this page" link to a host the site does not know
    "light_css_variables": {"color-brand-primary": "#1d5b8f", "color-brand-content": "#1d5b8f"},
    "dark_css_variables": {"color-brand-primary": "#7cb7e8", "color-brand-content": "#7cb7e8"},
}

# Copy buttons: strip the ">>> " and "... " prompts and leave the output lines out, so a copied
# doctest pastes into Python as it is.
copybutton_prompt_text = r">>> |\.\.\. |\$ "
copybutton_prompt_is_regexp = True
copybutton_only_copy_prompt_lines = True

# Figures: docs/plots/*.py run at build time (Agg, seeded), one PNG each, no links to the
# scripts or other formats, so the build is quick, -W clean and the same every time.
plot_basedir = "plots"
plot_formats = [("png", 110)]
plot_html_show_source_link = False
plot_html_show_formats = False
plot_include_source = False
plot_pre_code = "import numpy as np\nimport matplotlib\nmatplotlib.use('Agg')\nfrom matplotlib import pyplot as plt\n"
plot_apply_rcparams = True
plot_rcparams = {
    "figure.figsize": (7.0, 3.6),
    "figure.dpi": 110,
    "savefig.bbox": "tight",
    "font.size": 9,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "svg.hashsalt": "pemath",
}
