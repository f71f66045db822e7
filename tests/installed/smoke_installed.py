"""Smoke tests of an installed (non-editable) pemath wheel, run by .ci/run from outside the repository.

Not collected by the main suite (no ``test_`` prefix): it checks the installed package itself. Run as::

    cd "$(mktemp -d)" && python -m pytest -q -p no:cacheprovider /path/to/tests/installed/smoke_installed.py

It checks that pemath is imported from site-packages (not the source tree), that the package data is there
(the model registry, the golden vectors, the GGUF architecture table, py.typed), that the entry point runs,
that a proof runs and records its versions, that the oracle works, and that the optional extras missing here
(gguf, torch) fail with the install command that brings them.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import pemath

PKG = Path(pemath.__file__).resolve().parent


def test_imported_from_the_installed_wheel():
    assert "site-packages" in str(PKG), PKG
    assert not (PKG.parent / "pyproject.toml").exists()


@pytest.mark.parametrize("data", ["py.typed", "models/registry.json", "rope/gguf_archs.json",
                                  "testing/golden/README.md", "testing/golden/v2/llama-3.1-8b.json"])
def test_package_data_is_installed(data):
    assert (PKG / data).is_file(), data


def test_the_data_loads():
    from pemath import models, rope
    from pemath.testing import golden

    assert models.get("llama-3.1-8b").spec().base == 500000.0
    assert len(rope.gguf_architectures()) > 100
    assert len(golden.names()) > 10 and golden.load(golden.names()[0])


def test_the_entry_point_and_a_proof_with_its_versions():
    exe = shutil.which("pemath")
    assert exe is not None
    out = subprocess.run([exe, "--version"], capture_output=True, text=True, check=True).stdout
    assert pemath.__version__ in out
    from pemath.claims import get, run_claim, to_json

    record = json.loads(to_json([run_claim(get("rope.relative"))], latex=False))[0]
    assert record["status"] == "proved" and record["pemath_version"] == pemath.__version__


def test_the_oracle_works():
    from pemath import rope
    from pemath.testing import assert_rope_close

    x = np.random.default_rng(0).standard_normal((8, 64)).astype(np.float32)
    pos = np.arange(8)
    assert_rope_close(rope.apply(x, pos, layout="half"), x, pos, layout="half")
    with pytest.raises(AssertionError, match="shifted by \\+1"):
        assert_rope_close(rope.apply(x, pos + 1, layout="half"), x, pos, layout="half")


def test_missing_extras_say_how_to_install_them():
    try:
        import gguf  # noqa: F401
    except ImportError:
        from pemath import rope

        with pytest.raises(ImportError, match=r"pip install 'pemath\[gguf\]'"):
            rope.from_gguf("model.gguf")
    try:
        import torch  # noqa: F401
    except ImportError:
        from pemath.testing import pipelines

        with pytest.raises(ImportError, match="torch"):
            pipelines.hf(np.ones((1, 4), dtype=np.float32), [1], libm="torch")


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
