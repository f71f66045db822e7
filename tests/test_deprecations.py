"""The versioning policy (docs/versioning.rst) holds: a deprecated name warns with its replacement for one release,
a behaviour that changed warns where old code could silently get new numbers, and an old call that can no longer
work says what replaced it."""

from __future__ import annotations

import importlib
import warnings

import numpy as np
import pytest

from pemath import rope


def test_moved_names_warn_with_their_replacement_and_still_work():
    with pytest.warns(DeprecationWarning, match="from pemath.rope import from_hf_config"):
        old = importlib.import_module("pemath.rope.hf_config").from_hf_config
    assert old is rope.from_hf_config
    with pytest.warns(DeprecationWarning, match="pemath.rope.apply_mrope"):
        from pemath.rope.axial import apply_mrope
    assert apply_mrope is rope.apply_mrope


def test_bloom_alibi_warns_that_its_numbers_changed_until_dtype_is_given():
    pytest.importorskip("ml_dtypes")
    from pemath.testing import pipelines

    mask = np.ones((1, 300), dtype=np.int64)
    with pytest.warns(FutureWarning, match="in 0.1.0 it computed Falcon's bfloat16 one, now pipelines.falcon_alibi"):
        new = pipelines.bloom_alibi(40, mask)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        explicit = pipelines.bloom_alibi(40, mask, dtype="bfloat16")
        old = pipelines.falcon_alibi(40, mask)
    assert np.array_equal(new.astype(np.float64), explicit.astype(np.float64))
    assert not np.array_equal(new.astype(np.float64), old.astype(np.float64))  # the numbers did change


def test_the_keyword_dict_api_of_from_hf_fails_saying_what_replaced_it():
    spec = rope.from_hf({"rope_type": "default", "rope_theta": 10000.0}, layout="half", head_dim=8)
    x = np.ones((2, 8))
    with pytest.raises(TypeError, match=r"pass it as spec=\.\.\., e\.g\. rope\.apply\(x, positions, "
                                        r"spec=rope\.from_hf\(config\)\)"):
        rope.apply(x, [0, 1], **spec)
    with pytest.raises(TypeError, match="not a keyword dict"):
        dict(spec)
    np.testing.assert_allclose(rope.apply(x, [0, 1], spec=spec), rope.apply(x, [0, 1], layout="half"))


def test_the_changelog_names_every_breaking_change_with_its_migration():
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "CHANGELOG.md").read_text()
    breaking = [block for block in text.split("\n- ") if block.startswith("**Breaking")]
    assert len(breaking) >= 4
    for block in breaking:
        assert "igrate" in block or "use `" in block or "pass " in block or "instead" in block, block
