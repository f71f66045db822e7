"""Fuzzing the RoPE scaling variants (constructors and methods) with hostile inputs."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pemath import scaling as sc

from ._common import check_array
from ._fuzz import (
    H,
    Spec,
    bools,
    call,
    choices,
    covers,
    equiv,
    fuzz_settings,
    ints,
    loosen,
    reals,
    reject,
    run_spec,
    valid,
)


def _check_instance(result: Any, kw: dict[str, Any]) -> None:
    assert isinstance(result, sc.RopeScaling)
    a = result.attention_factor
    assert isinstance(a, float) and math.isfinite(a) and a > 0, f"attention factor {a!r}"
    dim = 2 * len(kw["short_factor"]) if "short_factor" in kw else 64
    for seq_len in (None, 1, 10**6):
        out = call(result.inv_freq, dim, 10000.0, seq_len=seq_len, names=("factor", "seq_len", "base"))
        if not out.accepted:  # a clear error for an extreme configuration
            continue
        f = out.result
        check_array(f, shape=(dim // 2,), dtype=np.float64, backend=np)
        assert np.all(np.isfinite(f)) and np.all(f >= 0)
    assert result == result and hash(result) == hash(result)
    assert type(result).__name__ in repr(result)


def _factors_kind(base: dict[str, Any], key: str) -> st.SearchStrategy[H]:
    v = base[key]
    n = len(v)
    out = [valid(v), equiv(tuple(v), v, "tuple"), equiv(np.array(v), v, "array"),
           equiv(np.array(v, np.float32), v, "float32 array"), equiv([int(x) for x in v], v, "ints")
           if all(float(x).is_integer() for x in v) else valid(v),
           reject([1.0] * (n + 1), "wrong length"), reject([], "empty"), reject([0.0] * n, "zeros"),
           reject([-1.0] * n, "negative"), reject([math.nan] * n, "nan"), reject([math.inf] * n, "inf"),
           reject(["a"] * n, "strings"), reject("1.0"), reject(None), reject(1.0, "scalar"),
           reject([[1.0]] * n, "2-d"), reject([True] * n, "bools"), reject([1 + 1j] * n, "complex"),
           reject(np.array(v, dtype=object) if n else None, "object array"), reject({"a": 1.0}),
           reject(np.ones((n, 1)), "2-d array")]
    return st.sampled_from(out)


SPECS = {
    "Linear": Spec(sc.Linear, st.fixed_dictionaries({"factor": st.sampled_from([0.5, 2.0, 8.0])}),
                   {"factor": reals(positive=True, typical=(2.0,))}, _check_instance),
    "NTK": Spec(sc.NTK, st.fixed_dictionaries({"factor": st.sampled_from([2.0, 8.0])}),
                {"factor": reals(positive=True, typical=(2.0,))}, _check_instance),
    "DynamicNTK": Spec(
        sc.DynamicNTK,
        st.fixed_dictionaries({"factor": st.sampled_from([2.0, 8.0]), "original_max_position": st.just(2048)}),
        {"factor": reals(positive=True, typical=(2.0,)), "original_max_position": ints(minimum=1, typical=(2048,), huge="maybe")},
        _check_instance,
    ),
    "YaRN": Spec(
        sc.YaRN,
        st.fixed_dictionaries({"factor": st.sampled_from([0.5, 4.0, 40.0]), "original_max_position": st.just(4096),
                               "ramp": st.sampled_from(["index", "ratio"]), "truncate": st.booleans()}),
        {"factor": reals(positive=True, typical=(4.0,)), "original_max_position": ints(minimum=1, typical=(4096,), huge="maybe"),
         "beta_fast": loosen(reals(positive=True, typical=(32.0,))),
         "beta_slow": loosen(reals(positive=True, typical=(1.0,))),
         "mscale": reals(nonnegative=True, optional=True, typical=(1.0,)),
         "mscale_all_dim": reals(nonnegative=True, optional=True, typical=(1.0,)),
         "attention_factor": reals(positive=True, optional=True, typical=(1.0,)),
         "truncate": bools(), "ramp": choices(("index", "ratio"))},
        _check_instance,
        aliases={"beta_fast": ("beta_slow",), "beta_slow": ("beta_fast",)},
    ),
    "Llama3": Spec(
        sc.Llama3,
        st.fixed_dictionaries({"factor": st.sampled_from([8.0, 32.0]), "original_max_position": st.just(8192)}),
        {"factor": reals(positive=True, typical=(8.0,)), "original_max_position": ints(minimum=1, typical=(8192,), huge="maybe"),
         "low_freq_factor": loosen(reals(positive=True, typical=(1.0,))),
         "high_freq_factor": loosen(reals(positive=True, typical=(4.0,)))},
        _check_instance,
        aliases={"low_freq_factor": ("high_freq_factor",), "high_freq_factor": ("low_freq_factor",)},
    ),
    "LongRoPE": Spec(
        sc.LongRoPE,
        st.fixed_dictionaries({"short_factor": st.sampled_from([[1.0, 1.5], [1.0, 1.0, 2.0, 4.0]]),
                               "long_factor": st.sampled_from([[2.0, 3.0], [1.0, 2.0, 4.0, 8.0]]),
                               "original_max_position": st.just(4096), "factor": st.sampled_from([None, 32.0]),
                               "max_position": st.just(131072)}).filter(
            lambda d: len(d["short_factor"]) == len(d["long_factor"])),
        {"short_factor": lambda b: _factors_kind(b, "short_factor"),
         "long_factor": lambda b: _factors_kind(b, "long_factor"),
         "original_max_position": loosen(ints(minimum=1, typical=(4096,), huge="maybe")),
         "factor": reals(positive=True, optional=True, typical=(32.0,)),
         "max_position": loosen(ints(minimum=1, optional=True, typical=(131072,), huge="maybe")),
         "attention_factor": reals(positive=True, optional=True, typical=(1.2,))},
        _check_instance,
        aliases={"short_factor": ("long_factor",), "long_factor": ("short_factor",),
                 "max_position": ("factor", "attention_factor"), "factor": ("max_position",)},
    ),
    "Proportional": Spec(
        sc.Proportional,
        st.fixed_dictionaries({"fraction": st.sampled_from([0.0, 0.25, 1.0]), "factor": st.sampled_from([1.0, 2.0])}),
        {"fraction": reals(minimum=0.0, maximum=1.0, typical=(0.5,)), "factor": reals(positive=True, typical=(1.0,))},
        _check_instance,
    ),
}


@covers(*(f"pemath.scaling.{name}" for name in SPECS))
@pytest.mark.parametrize("name", sorted(SPECS))
@fuzz_settings()
@given(data=st.data())
def test_constructors(name, data):
    run_spec(SPECS[name], data)


# ---------------------------------------------------------------------------------------
# methods


INSTANCES = [sc.Linear(2.0), sc.NTK(4.0), sc.DynamicNTK(2.0, 64), sc.YaRN(4.0, 64), sc.YaRN(4.0, 64, ramp="ratio"),
             sc.Llama3(8.0, 64), sc.LongRoPE([1.0, 2.0], [2.0, 4.0], 64, factor=8.0), sc.Proportional(0.5)]


def _bound(method: str):
    def call(scaling: Any, **kw: Any) -> Any:
        return getattr(scaling, method)(**kw)

    call.__name__ = method
    return call


def _check_inv_freq(result: Any, kw: dict[str, Any]) -> None:
    dim = int(kw["dim"])
    f = check_array(result, shape=(dim // 2,), dtype=np.float64, backend=np)
    assert np.all(np.isfinite(f)) and np.all(f >= 0)


def _dim_kind(base: dict[str, Any]) -> st.SearchStrategy[H]:
    # NTK needs dim > 2, LongRoPE exactly its factor count: the validity depends on the instance
    return loosen(ints(minimum=2, even=True, typical=(4, 8)))(base)


_SCALING_METHOD_BASE = st.fixed_dictionaries({"scaling": st.sampled_from(INSTANCES), "dim": st.just(4),
                                              "base": st.sampled_from([10000.0, 500000.0])})


def _seq_kind(base: dict[str, Any]) -> st.SearchStrategy[H]:
    return ints(minimum=1, optional=True, typical=(100, 10**6), huge="maybe")(base)


def _not_one(kind):
    """A base kind where base == 1 is context-dependent (YaRN's ramp divides by ln(base))."""
    return loosen(kind)


METHODS = {
    "inv_freq": Spec(_bound("inv_freq"), st.builds(lambda b, s: {**b, "seq_len": s}, _SCALING_METHOD_BASE,
                                                    st.sampled_from([None, 1, 100000])),
                     {"dim": _dim_kind, "base": _not_one(reals(positive=True, typical=(10000.0,))),
                      "seq_len": _seq_kind}, _check_inv_freq),
}


def _check_scaled_base(result: Any, kw: dict[str, Any]) -> None:
    assert isinstance(result, float) and math.isfinite(result) and result > 0


def _check_range(result: Any, kw: dict[str, Any]) -> None:
    lo, hi = result
    assert 0 <= lo and hi <= int(kw["dim"]) - 1


def _check_ramp(result: Any, kw: dict[str, Any]) -> None:
    g = check_array(result, shape=(int(kw["dim"]) // 2,), dtype=np.float64, backend=np)
    assert np.all((g >= 0) & (g <= 1))


def _check_kept(result: Any, kw: dict[str, Any]) -> None:
    assert type(result) is int and 0 <= result <= int(kw["dim"]) // 2


_NTK_BASE = st.fixed_dictionaries({"scaling": st.sampled_from([sc.NTK(4.0), sc.DynamicNTK(2.0, 64)]),
                                   "dim": st.sampled_from([4, 64]), "base": st.just(10000.0)})
_YARN_BASE = st.fixed_dictionaries({"scaling": st.sampled_from([sc.YaRN(4.0, 64), sc.YaRN(4.0, 4096, ramp="ratio"),
                                                                sc.YaRN(40.0, 8192, truncate=False)]),
                                    "dim": st.sampled_from([2, 8, 128]), "base": st.sampled_from([10000.0, 2.0])})
METHODS.update({
    "NTK.scaled_base": Spec(_bound("scaled_base"), _NTK_BASE,
                            {"dim": ints(minimum=4, even=True, typical=(8,)),
                             "base": reals(positive=True, typical=(10000.0,))}, _check_scaled_base,
                            aliases={"dim": ("NTK",), "base": ("NTK",)}),
    "YaRN.correction_range": Spec(_bound("correction_range"), _YARN_BASE,
                                  {"dim": ints(minimum=2, even=True, typical=(8,)),
                                   "base": _not_one(reals(positive=True, typical=(10000.0,)))}, _check_range),
    "YaRN.ramp_weights": Spec(_bound("ramp_weights"), _YARN_BASE,
                              {"dim": ints(minimum=2, even=True, typical=(8,)),
                               "base": _not_one(reals(positive=True, typical=(10000.0,)))}, _check_ramp),
    "Proportional.kept_pairs": Spec(_bound("kept_pairs"),
                                    st.fixed_dictionaries({"scaling": st.just(sc.Proportional(0.25)),
                                                           "dim": st.sampled_from([2, 8, 256])}),
                                    {"dim": ints(minimum=2, even=True, typical=(8,))}, _check_kept),
})


@covers("pemath.scaling.RopeScaling")
@pytest.mark.parametrize("name", sorted(METHODS))
@fuzz_settings()
@given(data=st.data())
def test_methods(name, data):
    run_spec(METHODS[name], data)


@fuzz_settings()
@given(st.sampled_from(INSTANCES), st.sampled_from(["factor", "x", "_RopeScaling__frozen"]),
       st.sampled_from([1.0, None, "a"]))
def test_instances_are_immutable(scaling, attr, value):
    """Setting or deleting an attribute is refused (the documented AttributeError), never a silent change."""
    before = repr(scaling)
    for act in (lambda: setattr(scaling, attr, value), lambda: delattr(scaling, attr)):
        try:
            act()
        except AttributeError as exc:
            assert "immutable" in str(exc)
        else:
            raise AssertionError("an attribute of a scaling instance was changed")
    assert repr(scaling) == before



