"""The release metadata: the licence file matches the declared licence, the citation and the version agree with the
package, and pemath prove --json records the versions a cited verdict needs."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pemath

ROOT = Path(__file__).resolve().parents[1]


def test_license_file_matches_the_declared_licence():
    text = (ROOT / "LICENSE").read_text()
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert text.startswith("MIT License") and 'license = "MIT"' in pyproject
    assert 'license-files = ["LICENSE"]' in pyproject and "pemath contributors" in text


def test_one_version_everywhere():
    cff = (ROOT / "CITATION.cff").read_text()
    assert f'version: "{pemath.__version__}"' in cff
    assert 'version = { attr = "pemath.__version__" }' in (ROOT / "pyproject.toml").read_text()
    assert f"## Unreleased ({pemath.__version__})" in (ROOT / "CHANGELOG.md").read_text()
    assert "license: MIT" in cff and re.search(r"^cff-version: 1\.2\.0$", cff, re.M)


def test_prove_json_records_the_versions():
    from pemath.claims import get, run_claim, to_json

    record = json.loads(to_json([run_claim(get("sinusoidal.shift"))], latex=False))[0]
    assert record["pemath_version"] == pemath.__version__
    assert re.fullmatch(r"\d+ claims, sha256 [0-9a-f]{16}", record["registry_version"])


def test_the_registry_version_changes_with_a_claim(monkeypatch):
    from pemath.claims import _registry, all_claims, registry_version

    before = registry_version()
    claim = all_claims()[0]
    monkeypatch.setitem(_registry._CLAIMS, claim.id, claim.__class__(**{**claim.__dict__, "title": "changed"}))
    assert registry_version() != before
