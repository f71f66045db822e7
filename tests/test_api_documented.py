"""Every public name (``__all__`` of each public module) is in the API reference, and nothing private is.

The API reference (docs/api.rst) documents modules with ``autosummary`` and ``automodule :members:``, which
documents exactly the names of a module's ``__all__``: so a public module must be listed there, and the
top-level names of ``pemath`` (the warnings) by name.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

from tests.fuzz.test_fuzz_coverage import PUBLIC_MODULES

API = Path(__file__).resolve().parents[1] / "docs" / "api.rst"


def _listed() -> list[str]:
    return re.findall(r"^   (pemath[\w.]*)\s*$", API.read_text(), re.M)


def test_every_public_module_is_in_the_api_reference():
    listed = set(_listed())
    missing = [m for m in PUBLIC_MODULES if m != "pemath" and m not in listed]
    assert not missing, f"public modules not in docs/api.rst: {missing}"


def test_every_top_level_name_is_documented():
    import pemath

    listed = set(_listed())
    for name in pemath.__all__:
        if name == "__version__":
            continue
        assert f"pemath.{name}" in listed, f"pemath.{name} is public but not in docs/api.rst"


def test_nothing_private_is_documented_and_public_names_are_public():
    for entry in _listed():
        assert not any(part.startswith("_") for part in entry.split(".")), entry
    for modname in PUBLIC_MODULES:
        mod = importlib.import_module(modname)
        for name in mod.__all__:
            assert name == "__version__" or not name.startswith("_"), f"{modname}.__all__ lists {name}"
            assert hasattr(mod, name), f"{modname}.__all__ lists {name}, which does not exist"
            doc = getattr(getattr(mod, name), "__doc__", None)
            assert isinstance(getattr(mod, name), (str, int, float, dict, tuple, frozenset)) or doc, \
                f"{modname}.{name} has no docstring"
