"""Fuzzing rope.Spec: every field hostile, accepted values give a Spec that holds together."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from pemath import rope
from pemath import scaling as sc

from ._common import scaling_kind
from ._fuzz import (
    H,
    Spec,
    _junk,
    choices,
    covers,
    fuzz_settings,
    ints,
    loosen,
    maybe,
    reals,
    reject,
    run_spec,
    run_valid,
    valid,
)


def _base(draw) -> dict[str, Any]:
    head = draw(st.sampled_from([None, 8, 64, 128]))
    rotary = draw(st.sampled_from([None, 4] if head is None else [None, head // 2, head]))
    return {"layout": draw(st.sampled_from(["interleaved", "half"])), "base": draw(st.sampled_from([None, 1e4, 5e5])),
            "head_dim": head, "rotary_dim": rotary, "scaling": draw(st.sampled_from([None, sc.Linear(2.0)])),
            "softmax_scale": draw(st.sampled_from([1.0, 1.5]))}


def _rotary_kind(base: dict[str, Any]) -> st.SearchStrategy[H]:
    d = base["head_dim"]
    return ints(minimum=2, maximum=d, even=True, optional=True, typical=(2, 4) if d is None else (2, d))(base)


def _mrope_kind(base: dict[str, Any]) -> st.SearchStrategy[H]:
    r = base["rotary_dim"] or base["head_dim"]
    out = [valid(None), reject("16,24,24"), reject([1.5, 2]), reject([0, 2]), reject([]), reject(7), reject([True])]
    if r is not None:
        h = r // 2
        out += [valid([h]), valid((h - 1, 1)) if h > 1 else valid([h]), reject([h + 1]), valid(np.array([h]))]
    return st.one_of(st.sampled_from(out), _junk(True))


def _interleaved_kind(base: dict[str, Any]) -> st.SearchStrategy[H]:
    # True needs an mrope_section (the base draws none): refused, as every non-bool
    out = [valid(False), valid(np.False_), reject(True), reject(0), reject(1), reject("False"), reject(None)]
    return st.one_of(st.sampled_from(out), _junk(False))


def _axial_kind(base: dict[str, Any]) -> st.SearchStrategy[H]:
    r = base["rotary_dim"] or base["head_dim"]
    ok = base["scaling"] is None and (base["rotary_dim"] is None or base["rotary_dim"] == 4)
    out = [valid(None), reject([3, 1]), reject([0, 2]), reject("2,2"), reject(4), reject([2.0, 2]), reject([True, 2])]
    if ok and (base["head_dim"] is None or base["head_dim"] >= 4):
        out += [valid((2, 2)), valid([2, 2])]
    if r is not None:
        out.append(reject([r, 2]))  # more than the rotated slice, or than head_dim
    return st.one_of(st.sampled_from(out), _junk(True))


def _offset_kind(base: dict[str, Any]) -> st.SearchStrategy[H]:
    d, r = base["head_dim"], base["rotary_dim"]
    out = [valid(0), maybe(2), reject(-1), reject(1.5), reject(True), reject("2"), reject(None)]
    if d is not None:
        out += [reject(d), maybe(d - (r or d))]
    return st.one_of(st.sampled_from(out), _junk(False))


def _check(spec: Any, kw: dict[str, Any]) -> None:
    assert isinstance(spec, rope.Spec)
    assert spec == spec.replace() and hash(spec) == hash(spec.replace())
    assert spec.layout in ("interleaved", "half") and spec.base > 0
    if spec.head_dim is not None:
        assert spec.rotary_dim is not None and 2 <= spec.rotary_dim <= spec.head_dim and spec.rotary_dim % 2 == 0
    if spec.rotary_dim is not None:
        freq, factor = spec.frequencies()
        assert freq.shape == (spec.rotary_dim // 2,) and np.all(np.isfinite(freq)) and factor > 0
    if spec.mrope_section is not None:
        assert 2 * sum(spec.mrope_section) == spec.rotary_dim
    if spec.rotary_offset and spec.head_dim is not None:
        assert spec.rotary_offset + spec.rotary_dim <= spec.head_dim
    assert repr(spec).startswith("Spec(layout=")


SPEC = Spec(
    rope.Spec,
    st.composite(_base)(),
    {
        "layout": choices(["interleaved", "half"]),
        "base": loosen(reals(positive=True, typical=(10000.0, 3.0), optional=True), lambda b: False),
        # a head_dim below a given rotary_dim is refused: loosened there
        "head_dim": loosen(ints(minimum=2, even=True, optional=True, typical=(64, 128)),
                           lambda b: b["rotary_dim"] is not None),
        "rotary_dim": _rotary_kind,
        "scaling": scaling_kind,
        "mrope_section": _mrope_kind,
        "mrope_interleaved": _interleaved_kind,
        "softmax_scale": reals(positive=True, typical=(1.0, 2.25)),
        "axial_dims": _axial_kind,
        "axial_grouping": lambda b: st.sampled_from([valid("features"), reject("pairs"), reject("rows"), reject(3)]),
        "axial_frequencies": lambda b: st.sampled_from([valid("per_axis"), reject("strided"), reject("x"), reject(1)]),
        "rotary_offset": _offset_kind,
    },
    _check,
    aliases={"head_dim": ("rotary_dim",), "rotary_dim": ("head_dim",), "mrope_section": ("rotary_dim",),
             "mrope_interleaved": ("mrope_section",), "scaling": ("frequencies", "dim"),
             "axial_dims": ("rotary_dim", "head_dim", "axial"), "axial_grouping": ("axial",),
             "axial_frequencies": ("axial",),
             "base": ("frequencies",), "rotary_offset": ("rotary_dim", "head_dim")},
)


@covers("pemath.rope.Spec")
@fuzz_settings()
@given(st.data())
def test_spec(data):
    run_spec(SPEC, data)


@fuzz_settings()
@given(st.data())
def test_spec_valid(data):
    run_valid(SPEC, data)
