"""The symbolic arrays the shipped kernel is run on (pemath.symbolic.traced): the same entries as NumPy's arrays at
every concrete size, refusals for what they do not model, and the every-h proof of pemath.rope's ``rotate`` failing
when the kernel's indexing is wrong."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st

from pemath.rope import _core
from pemath.symbolic import ProofFailure, shipped, traced
from pemath.symbolic._decide import Derivation
from pemath.symbolic.indices import H

K = sp.IndexedBase("k")


def _values(t: traced.Traced) -> list[int]:
    """The entries of a traced array of concrete shape, as integers (the recorded expressions evaluated)."""
    if t.ndim == 1:
        return [int(sp.sympify(t(j)).doit()) for j in range(int(t.shape[0]))]
    return [[int(sp.sympify(t(i, c)).doit()) for c in range(int(t.shape[1]))] for i in range(int(t.shape[0]))]


def _ints(length: int, offset: int = 0) -> traced.Traced:
    return traced.Traced((length,), lambda k: k + offset)


@given(st.integers(0, 40), st.integers(0, 45), st.one_of(st.none(), st.integers(0, 45)), st.integers(1, 5))
def test_slices_hold_numpys_entries(length, start, stop, step):
    want = np.arange(length)[..., start:stop:step].tolist()
    got = _ints(length)[..., start:stop:step]
    assert int(got.shape[0]) == len(want)
    assert _values(got) == want


@given(st.integers(0, 20), st.integers(0, 20))
def test_concat_stack_reshape_hold_numpys_entries(la, lb):
    a, b = np.arange(la), 100 + np.arange(lb)
    ta, tb = _ints(la), _ints(lb, 100)
    ns = traced.NAMESPACE
    assert _values(ns.concat([ta, tb], axis=-1)) == np.concatenate([a, b]).tolist()
    tb2 = _ints(la, 100)
    stacked = ns.stack([ta, tb2], axis=-1)
    want = np.stack([a, 100 + np.arange(la)], axis=-1)
    assert _values(stacked) == want.tolist()
    assert _values(ns.reshape(stacked, (2 * la,))) == want.reshape(2 * la).tolist()


@given(st.integers(1, 24), st.integers(0, 5), st.sampled_from(["interleaved", "half"]))
def test_the_kernel_traced_at_a_concrete_size_is_the_kernel(h, extra, layout):
    """rotate on traced arrays of concrete sizes gives, entry by entry, what it gives on NumPy arrays."""
    dim = 2 * h + extra
    x = np.arange(1, dim + 1, dtype=np.float64)
    cos, sin = 1000.0 * np.arange(1, h + 1), 10**6 * np.arange(1, h + 1)
    got = _core.rotate(_ints(dim, 1), traced.Traced((h,), lambda k: 1000 * (k + 1)),
                       traced.Traced((h,), lambda k: 10**6 * (k + 1)), layout, 2 * h, traced.NAMESPACE, "float64")
    want = _core.rotate(x[None], cos[None], sin[None], layout, 2 * h, np, np.float64)[0]
    assert _values(got) == want.astype(np.int64).tolist()


def test_symbolic_sizes():
    e = sp.Symbol("e", integer=True, positive=True)
    x = traced.vector(2 * H + e, K)
    assert x[..., 0:2 * H:2].shape == (H,)
    assert x[..., 2 * H:].shape == (e,)
    assert x[..., : (2 * H) // 2].shape == (H,)
    assert sp.sympify(x[..., 1:2 * H:2](sp.Symbol("j"))).doit() == K[2 * sp.Symbol("j") + 1]


@pytest.mark.parametrize("make, match", [
    (lambda x: x[..., -1:], "nonnegative"),
    (lambda x: x[..., ::-1], "positive int step"),
    (lambda x: x[3], r"x\[\.\.\., a:b:s\]"),
    (lambda x: x[..., 0:sp.Symbol("n", integer=True, nonnegative=True)], "not decided"),
    (lambda x: x * 2, "not traced"),
    (lambda x: x[..., :H] * x, "differ"),
    (lambda x: traced.NAMESPACE.concat([x, x, x], axis=-1), "two one-axis"),
    (lambda x: traced.NAMESPACE.reshape(x, (H, 2)), "two axes into one"),
])
def test_what_is_not_modelled_is_refused(make, match):
    with pytest.raises(traced.TraceError, match=match):
        make(traced.vector(2 * H, K))


def test_kernel_rotate_decides_every_h():
    d = Derivation("rotate")
    x, c, s = (sp.IndexedBase(n, real=True) for n in ("x", "c", "s"))
    for layout in ("interleaved", "half"):
        shipped.kernel_rotate(d, layout, x, c, s)
    assert [st_.status for st_ in d.steps] == ["proved"] * 6
    assert all(st_.formula is not None for st_ in d.steps)


def _other_split(x, layout, r):
    if layout == "half":
        return x[..., r // 2 : r], x[..., : r // 2]
    return x[..., 1:r:2], x[..., 0:r:2]


def _one_short(x, layout, r):
    return (x[..., : r // 2], x[..., r // 2 + 1 : r]) if layout == "half" else (x[..., 0:r:2], x[..., 3:r:2])


def _merged_backwards(a, b, layout, xp):
    if layout == "half":
        return xp.concat([b, a], axis=-1)
    return xp.reshape(xp.stack([b, a], axis=-1), (2 * a.shape[-1],))


@pytest.mark.parametrize("layout", ["interleaved", "half"])
@pytest.mark.parametrize("name, patch", [("split_pairs", _other_split), ("split_pairs", _one_short),
                                         ("merge_pairs", _merged_backwards)])
def test_a_wrong_kernel_is_not_proved(monkeypatch, layout, name, patch):
    monkeypatch.setattr(_core, name, patch)
    x, c, s = (sp.IndexedBase(n, real=True) for n in ("x", "c", "s"))
    with pytest.raises(ProofFailure, match="rotate"):
        shipped.kernel_rotate(Derivation("rotate"), layout, x, c, s)


def test_a_wrong_pass_through_is_not_proved(monkeypatch):
    true = _core.rotate

    def dropped_tail(x, cos, sin, layout, r, xp, wdt):  # the features past r replaced by the rotated ones
        out = true(x, cos, sin, layout, r, xp, wdt)
        return out if out.shape[0] == r else xp.concat([out[..., :r], x[..., :out.shape[0] - r]], axis=-1)

    monkeypatch.setattr(_core, "rotate", dropped_tail)
    x, c, s = (sp.IndexedBase(n, real=True) for n in ("x", "c", "s"))
    with pytest.raises(ProofFailure, match="2h \\+ j"):
        shipped.kernel_rotate(Derivation("rotate"), "half", x, c, s)
