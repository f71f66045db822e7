"""Package hygiene: light imports, explicit public names, a working command line."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import pemath

PUBLIC_MODULES = ["pemath.rope", "pemath.scaling", "pemath.sinusoidal", "pemath.alibi", "pemath.t5",
                  "pemath.positions", "pemath.pedagogy", "pemath.testing"]


def test_import_pulls_in_no_backend_and_no_sympy():
    code = (
        "import sys, pemath, pemath.rope, pemath.scaling\n"
        "heavy = [m for m in ('torch', 'cupy', 'jax', 'sympy', 'array_api_strict') if m in sys.modules]\n"
        "print(','.join(heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


@pytest.mark.parametrize("name", PUBLIC_MODULES)
def test_public_names_are_listed_and_exist(name):
    mod = importlib.import_module(name)
    assert mod.__all__, f"{name} has an empty __all__"
    for public in mod.__all__:
        assert hasattr(mod, public), f"{name}.__all__ lists {public!r}, which does not exist"
    # every public callable defined in the module's own private submodules is listed
    for attr, value in vars(mod).items():
        if attr.startswith("_") or not callable(value) or isinstance(value, type(pemath)):
            continue
        if getattr(value, "__module__", "").startswith(name):
            assert attr in mod.__all__, f"{name}.{attr} is public but missing from __all__"


def test_lazy_submodules_and_unknown_attribute():
    assert pemath.rope.apply is importlib.import_module("pemath.rope").apply
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        pemath.nope  # noqa: B018


def test_py_typed_is_shipped():
    assert (Path(pemath.__file__).parent / "py.typed").exists()


def test_command_line():
    out = subprocess.run([sys.executable, "-m", "pemath.cli", "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and pemath.__version__ in out.stdout
    out = subprocess.run([sys.executable, "-m", "pemath.cli", "inv-freq", "--head-dim", "4", "--base", "100"],
                         capture_output=True, text=True)
    assert out.returncode == 0 and "0.1" in out.stdout
    out = subprocess.run([sys.executable, "-m", "pemath.cli", "inv-freq", "--head-dim", "5"],
                         capture_output=True, text=True)
    assert out.returncode == 2 and "must be an even integer >= 2, got 5" in out.stderr
