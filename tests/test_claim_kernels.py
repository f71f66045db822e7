"""The check that binds the kernels rope.apply runs on NumPy input to the traced portable kernel."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from pemath.claims import _kernels as K
from pemath.claims._model import CheckFailure
from pemath.rope import _core, _fast_numba, _fast_numpy


def test_the_domain_is_every_combination_it_states():
    cases = K.cases()
    assert len(cases) == 162 + 6
    seen = {(c["x"].dtype.name, c["layout"], c["mode"]) for c in cases}
    assert seen >= set(itertools.product(("float16", "float32", "float64"), ("interleaved", "half"),
                                         ("new", "given", "in place")))
    assert any(not c["x"].flags.c_contiguous and c["x"].strides[-1] != c["x"].itemsize for c in cases)  # strided
    assert any(not c["x"].flags.c_contiguous and c["x"].strides[-1] == c["x"].itemsize for c in cases)  # transposed
    assert {c["r"] < c["x"].shape[-1] for c in cases} == {True, False}
    assert {c["factor"] for c in cases} == {1.0, 0.8} and {bool(c["freq"][0] < 0) for c in cases} == {True, False}


def test_every_shipped_numpy_kernel_agrees():
    said = K.check_kernels()
    assert "numpy: 168 cases equal" in said
    assert ("numba: " in said) and (_fast_numba.available() == ("not installed" not in said))


def _portable(x, pos, freq, factor, layout, r, out):
    y = _core.rotate_into(x, pos, freq, factor, layout, r, None, xp=np, wdt=np.float64)
    if out is None:
        return y
    out[...] = y
    return out


def _break(flip):
    def kernel(x, pos, freq, factor, layout, r, out):
        y = _portable(x, pos, freq, factor, layout, r, out)
        flip(y, r)
        return y
    return kernel


@pytest.mark.parametrize("flip, what", [
    (lambda y, r: y.__setitem__((..., -1), np.nextafter(y[..., -1], np.inf)), "one ulp"),  # not at a tie
    (lambda y, r: y.__setitem__((..., r - 1), -y[..., r - 1]) if r > 2 else None, "a sign"),
    (lambda y, r: y.__setitem__((..., slice(r, None)), 0) if r < y.shape[-1] else None, "the pass-through"),
])
def test_a_kernel_that_differs_anywhere_is_refused(monkeypatch, flip, what):
    monkeypatch.setattr(_fast_numpy, "rotate_into", _break(flip))
    with pytest.raises(CheckFailure, match="numpy kernel, case"):
        K.check_kernels()


def test_a_kernel_that_ignores_out_is_refused(monkeypatch):
    monkeypatch.setattr(_fast_numpy, "rotate_into", lambda x, pos, freq, factor, layout, r, out:
                        _portable(x, pos, freq, factor, layout, r, None))
    with pytest.raises(CheckFailure, match="did not return the out array"):
        K.check_kernels()


def test_the_portable_kernel_itself_passes_as_a_kernel(monkeypatch):
    monkeypatch.setattr(_fast_numpy, "rotate_into", _portable)
    assert "numpy: 168 cases equal, bitwise" in K.check_kernels()


# --- every configuration pemath ships, bound to its golden vectors (pemath.claims._golden) ------------------------

from pemath import rope  # noqa: E402
from pemath.claims import _golden as GD  # noqa: E402


def test_every_registered_model_gives_its_golden_vectors_through_every_form():
    said = GD.check_models()
    assert "59 cases of 49 registered models" in said and "seq_len read from the positions" in said


@pytest.mark.parametrize("form, wrong", [
    ("cos_sin", lambda f: lambda *a, **k: tuple(t * 1.0001 for t in f(*a, **k))),
    ("freqs_cis", lambda f: lambda *a, **k: np.conj(f(*a, **k))),
    ("matrix", lambda f: lambda *a, **k: f(*a, **k).T),
])
def test_a_form_that_differs_is_caught(monkeypatch, form, wrong):
    monkeypatch.setattr(rope, form, wrong(getattr(rope, form)))
    with pytest.raises(CheckFailure, match="through|rotary_offset"):
        GD.check_models()


def test_a_config_read_otherwise_is_caught(monkeypatch):
    real = rope.from_hf_config
    monkeypatch.setattr(rope, "from_hf_config", lambda cfg, **kw: real(cfg, **kw).replace(base=real(cfg, **kw).base * 2)
                        if real(cfg, **kw).base else real(cfg, **kw))
    with pytest.raises(CheckFailure, match="frequencies"):
        GD.check_models()
