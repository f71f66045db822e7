"""recover_rope reads what a kernel did; a failing assert reports the measurements in words."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pemath import rope
from pemath import scaling as sc
from pemath.testing import assert_rope_close, recover_rope

RNG = np.random.default_rng(0)
X = RNG.standard_normal((64, 128)).astype(np.float32)
POS = np.arange(64)
SPEC = rope.Spec("half", base=5e5, head_dim=128, scaling=sc.Llama3(8.0, 8192))


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(["interleaved", "half"]), st.sampled_from([8, 32, 64]), st.integers(0, 2**20),
       st.sampled_from([1.0, 1.25]))
def test_recovery_reads_the_applied_angles_and_amplitudes(layout, r, p, factor):
    x = np.random.default_rng(p).standard_normal((3, 64))
    pos = np.array([p, p + 1, 0])
    s = rope.Spec(layout, base=1e4, head_dim=64, rotary_dim=r,
                  scaling=None if factor == 1.0 else sc.YaRN(4.0, 64, attention_factor=factor))
    y = rope.apply(x, pos, spec=s)
    rec = recover_rope(y, x)  # layout and rotated slice found from the output alone
    assert (rec.layout, rec.rotary_dim) == (layout, r)
    freq, a = s.frequencies()
    want = (pos[:, None] * freq[None, :] + np.pi) % (2 * np.pi) - np.pi
    diff = np.abs((rec.angle - want + np.pi) % (2 * np.pi) - np.pi)
    assert np.nanmax(diff) <= 1e-9 * max(1.0, p * freq.max())
    np.testing.assert_allclose(rec.amplitude, a, rtol=1e-12)
    assert rec.passthrough_error == 0.0
    assert np.all(rec.uncertainty < 1e-14)


def test_recovery_of_a_low_precision_output_carries_its_uncertainty():
    y = rope.apply(X, POS, spec=SPEC).astype(np.float16)
    rec = recover_rope(y, X, spec=SPEC)
    freq, _ = SPEC.frequencies()
    want = (POS[:, None] * freq + np.pi) % (2 * np.pi) - np.pi
    diff = np.abs((rec.angle - want + np.pi) % (2 * np.pi) - np.pi)
    ok = np.isfinite(diff)
    assert np.all(diff[ok] <= 2 * rec.uncertainty[ok])  # the float16 rounding bounds the angle's error
    assert 1e-5 < np.nanmedian(rec.uncertainty) < 1e-2


def test_recovery_arguments():
    with pytest.raises(ValueError, match="actual has shape"):
        recover_rope(X[:, :64], X)
    with pytest.raises(ValueError, match="rotary_dim must be even"):
        recover_rope(X, X, rotary_dim=3)
    with pytest.raises(TypeError, match="not both"):
        recover_rope(X, X, spec=SPEC, layout="half")
    with pytest.raises(ValueError, match="one layout's pairs"):
        recover_rope(X, X, spec=SPEC.replace(out_layout="interleaved"))


def _message(y, pos=POS, spec=SPEC):
    with pytest.raises(AssertionError) as info:
        assert_rope_close(y.astype(np.float32), X, pos, spec=spec)
    return str(info.value)


@pytest.mark.parametrize("wrong, finding", [
    (lambda: rope.apply(X, POS, spec=SPEC) * np.float32(1.2608), "amplitude 1.2608 where 1 was expected"),
    (lambda: rope.apply(X, POS, spec=SPEC) * np.float32(2.0), "amplitude 2 where 1 was expected"),
    (lambda: rope.apply(X, POS + 7, spec=SPEC), "positions offset by a constant"),
    (lambda: rope.apply(X, POS * 0.5, spec=SPEC), "position 0.5 * p: positions scaled"),
    (lambda: rope.apply(X, np.maximum(POS - 20, 0), spec=SPEC), "rows read as other positions"),
    (lambda: rope.apply(X, POS, spec=SPEC.replace(scaling=sc.Linear(8.0))),
     "pairs 0..34 of 64 turn at other frequencies than the spec's: divided by"),
    (lambda: rope.apply(X, POS, spec=SPEC.replace(scaling=None)), "pairs 29..63 of 64 turn at other frequencies"),
    (lambda: rope.apply(X, POS, spec=SPEC.replace(base=1e4, scaling=None)), "an effective base of"),
])
def test_a_failing_assert_says_what_it_measured(wrong, finding):
    msg = _message(wrong())
    assert finding in msg, msg
    assert msg.splitlines()[1].startswith("Measured from the output: ")  # the finding leads


def test_two_defects_at_once_are_both_measured():
    msg = _message(rope.apply(X, POS + 3, spec=SPEC) * np.float32(2.0))
    assert "amplitude 2 where 1 was expected" in msg and "p + 3" in msg


def test_the_effective_base_is_the_kernels():
    msg = _message(rope.apply(X, POS, spec=SPEC.replace(base=1e4, scaling=None)))
    base = float(msg.split("an effective base of ")[1].split()[0])
    assert abs(base - 1e4) / 1e4 < 1e-3


def test_sparse_positions_do_not_pretend_to_measure_aliased_frequencies():
    pos = POS * 100
    msg = _message(rope.apply(X, pos, spec=SPEC.replace(scaling=sc.Linear(8.0))), pos)
    assert "turn at other angles than the spec's" in msg  # the high frequencies cannot be followed
