"""ALiBi and T5 failures say what the output measures: the bias form and slopes, the bucket function's shape."""

from __future__ import annotations

import numpy as np
import pytest

from pemath import alibi, t5
from pemath.testing import assert_alibi_close, assert_t5_buckets_equal


def _measured(fn, *args, **kw) -> list[str]:
    with pytest.raises(AssertionError) as exc:
        fn(*args, **kw)
    return [ln for ln in str(exc.value).splitlines() if ln.startswith("Measured from the")]


def test_alibi_form_and_naive_slopes_are_measured():
    n, q = 12, 16
    slopes = 2.0 ** (-8 * np.arange(1, n + 1) / n)
    rel = -np.abs(np.arange(q)[None, :] - np.arange(q)[:, None])
    lines = _measured(assert_alibi_close, (slopes[:, None, None] * rel[None]).astype(np.float32), n, q, q,
                      form="symmetric")
    assert lines[0].startswith("Measured from the output: the bias has the form -m·|i - j| ('symmetric'")
    assert "2^(-8(k+1)/n), the naive geometric sequence (expected 0.5, 0.25" in lines[1]


@pytest.mark.parametrize("form", ["causal", "shifted", "symmetric"])
def test_alibi_scaled_slopes_are_measured_in_every_form(form):
    b = np.asarray(alibi.bias(8, 10, 12, form=form)) * 1.5
    lines = _measured(assert_alibi_close, b, 8, 10, 12, form=form)
    assert f"('{form}'" in lines[0] and "every slope multiplied by 1.5" in lines[1]


def test_alibi_in_another_form_is_measured_as_that_form():
    b = np.asarray(alibi.bias(4, 6, 6, form="symmetric"))
    lines = _measured(assert_alibi_close, b, 4, 6, 6, form="causal")
    assert "-m·|i - j| ('symmetric'" in lines[0]


def test_t5_measures_the_direction_the_clamp_and_the_reach():
    rel = np.arange(-300, 300)
    lines = _measured(assert_t5_buckets_equal, np.asarray(t5.bucket(-rel)), rel)
    assert lines == ["Measured from the buckets: the upper half of the buckets holds keys before the query "
                     "(expected: after it)"]
    lines = _measured(assert_t5_buckets_equal, np.asarray(t5.bucket(rel, max_distance=256)), rel)
    assert lines == ["Measured from the buckets: the last bucket of a half is 15, first reached at distance 166 "
                     "(expected 15, at 91)"]
    exact = np.asarray(t5.bucket(rel)).copy()
    exact[np.abs(rel) == 9] = 9 + (rel[np.abs(rel) == 9] > 0) * 16  # one more exact bucket
    assert any("buckets equal the distance up to distance 9 (expected 8)" in ln
               for ln in _measured(assert_t5_buckets_equal, exact, rel))
