"""Fuzzing from_hf_config and the model registry: registered configs made hostile key by key."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from pemath import models, rope

from ._fuzz import (
    H,
    Spec,
    _junk,
    choices,
    covers,
    fuzz_settings,
    ints,
    maybe,
    reject,
    run_spec,
    run_valid,
    valid,
)

ROPE_MODELS = [m for m in models.names(encoding="rope") if not models.get(m).layer_types and not models.get(m).nope_layers]
#: the registered RoPE models whose config gives its layer count (rope.layers needs it)
LAYERED_MODELS = [m for m in models.names(encoding="rope")
                  if (models.get(m).config.get("text_config") or models.get(m).config).get("num_hidden_layers")]
_JUNK_VALUES = [None, -1, 0, 0.5, 1e30, "128", True, [], {}, float("nan")]


def _config_kind(base: dict[str, Any]) -> st.SearchStrategy[H]:
    cfg = base["config"]

    @st.composite
    def mutate(draw) -> H:
        c = json.loads(json.dumps(cfg))
        inner = c.get("text_config", c)
        key = draw(st.sampled_from(sorted(inner)))
        how = draw(st.sampled_from(["value", "drop"]))
        if how == "value":
            inner[key] = draw(st.sampled_from(_JUNK_VALUES))
            return maybe(c, f"{key}={inner[key]!r}")
        del inner[key]
        return maybe(c, f"without {key}")

    def with_type(value: Any) -> dict:  # the language model's model_type decides (text_config's where present)
        c = json.loads(json.dumps(cfg))
        c.get("text_config", c)["model_type"] = value
        if "text_config" in c:
            c["model_type"] = value
        return c

    return st.one_of(mutate(), st.sampled_from([reject([1, 2]), reject("llama"), reject(3.0), reject(None),
                                                reject("/nonexistent/config.json"),
                                                reject(with_type("no-such-model")), reject(with_type(3))]),
                     _junk(False))


def _check(result: Any, kw: dict[str, Any]) -> None:
    assert isinstance(result, rope.Spec) and result.head_dim is not None
    assert 2 <= result.rotary_dim <= result.head_dim and result.rotary_dim % 2 == 0
    freq, factor = result.frequencies(seq_len=4096)
    assert np.all(np.isfinite(freq)) and np.all(freq >= 0) and factor > 0


FROM_HF_CONFIG = Spec(
    rope.from_hf_config,
    st.sampled_from(ROPE_MODELS).map(lambda n: {"config": models.get(n).config, "layer": None, "layer_type": None,
                                                "layout": None}),
    {
        "layer": lambda b: st.sampled_from([valid(None), valid(0), reject(-1), reject(True), reject("0"),
                                            reject(1.5), maybe(10**6)]),
        "config": _config_kind,
        "layer_type": lambda b: st.sampled_from(
            [valid(None), reject(3), reject(""), reject("no_such_layer")]
            + [valid(t) for t in set(b["config"].get("layer_types") or ())]),
        "layout": lambda b: st.sampled_from([valid(None), reject("Half"), reject(3), reject("rotate_half")]),
    },
    _check,
    aliases={"config": ("config", "rope_parameters", "rope_scaling", "head_dim", "rotary_dim", "dim",
                        "max_position", "original", "factor", "base", "mrope", "model_type", "layout",
                        "rope_theta", "theta", "partial", "hidden", "head", "rotary", "mscale", "beta",
                        "section", "position", "interleave", "layer", "short", "long", "attention", "truncate"),
             "layer_type": ("layer_types",)},
)


@covers("pemath.rope.from_hf_config")
@fuzz_settings()
@given(st.data())
def test_from_hf_config(data):
    run_spec(FROM_HF_CONFIG, data)


@fuzz_settings()
@given(st.data())
def test_from_hf_config_valid(data):
    run_valid(FROM_HF_CONFIG, data)


def _check_layers(result: Any, kw: dict[str, Any]) -> None:
    assert isinstance(result, tuple) and len(result) >= 1
    assert all(isinstance(s, (rope.Spec, rope.NoRope)) for s in result)
    cfg = kw["config"].get("text_config") or kw["config"]
    if isinstance(cfg.get("num_hidden_layers"), int):
        assert len(result) == cfg["num_hidden_layers"]


LAYERS = Spec(
    rope.layers,
    st.sampled_from(LAYERED_MODELS).map(lambda n: {"config": models.get(n).config, "layout": None}),
    {
        "config": _config_kind,
        "layout": lambda b: st.sampled_from([valid(None), reject("Half"), reject(3), reject("rotate_half")]),
    },
    _check_layers,
    aliases=FROM_HF_CONFIG.aliases,
)


@covers("pemath.rope.layers")
@fuzz_settings()
@given(st.data())
def test_layers(data):
    run_spec(LAYERS, data)


NO_ROPE = Spec(
    rope.NoRope,
    st.just({"head_dim": 128, "reason": "", "provenance": None}),
    {"head_dim": lambda b: st.sampled_from([valid(None), valid(1), valid(128), reject(0), reject(-1), reject(1.5),
                                            reject("128"), reject(True)]),
     "reason": lambda b: st.sampled_from([valid(""), valid("SmolLM3 layer 3"), reject(None), reject(3)]),
     "provenance": lambda b: st.sampled_from([valid(None), valid("table"), reject(3), reject(b"x")])},
    lambda out, kw: isinstance(out, rope.NoRope) and out.head_dim == kw["head_dim"],
)


@covers("pemath.rope.NoRope")
@fuzz_settings()
@given(st.data())
def test_no_rope(data):
    run_spec(NO_ROPE, data)


GET = Spec(
    models.get,
    st.sampled_from(models.names()).map(lambda n: {"name": n}),
    {"name": lambda b: st.one_of(st.sampled_from([valid(b["name"]), reject(b["name"].upper() + "x"), reject(""),
                                                  reject(None), reject(3), reject([b["name"]])]), _junk(False))},
    lambda m, kw: isinstance(m, models.Model) and m.name == kw["name"],
)


@covers("pemath.models.get")
@fuzz_settings()
@given(st.data())
def test_models_get(data):
    run_spec(GET, data)


NAMES = Spec(
    models.names,
    st.just({"encoding": None}),
    {"encoding": choices(["rope", "alibi", "t5"], optional=True)},
    lambda out, kw: isinstance(out, list) and out == sorted(out) and len(out) > 0,
)


@covers("pemath.models.names")
@fuzz_settings()
@given(st.data())
def test_models_names(data):
    run_spec(NAMES, data)


ALIBI = Spec(
    models.AlibiSpec,
    st.just({"num_heads": 32, "bias_max": 8.0}),
    {"num_heads": ints(minimum=1, typical=(32, 40), huge="maybe"),
     "bias_max": lambda b: st.sampled_from([valid(8.0), valid(8), reject(4.0), reject(None), reject("8"),
                                            reject(float("nan")), reject(True)])},
    lambda out, kw: out.slopes().shape == (out.num_heads,) if out.num_heads < 5000 else True,
)


@covers("pemath.models.AlibiSpec")
@fuzz_settings()
@given(st.data())
def test_alibi_spec(data):
    run_spec(ALIBI, data)


T5 = Spec(
    models.T5Spec,
    st.just({"num_buckets": 32, "max_distance": 128, "num_heads": 8}),
    {"num_buckets": ints(minimum=4, maximum=4096, typical=(32,)),
     "max_distance": ints(minimum=9, typical=(128,)),
     "num_heads": ints(minimum=1, typical=(8,), huge="maybe")},
    lambda out, kw: int(out.bucket(np.array([0]), bidirectional=True)[0]) == 0,
)


@covers("pemath.models.T5Spec")
@fuzz_settings()
@given(st.data())
def test_t5_spec(data):
    run_spec(T5, data)
