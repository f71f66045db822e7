"""pemath.rope.from_hf: Hugging Face RoPE configs (v5 rope_parameters, v4 rope_scaling)."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest

from pemath import rope
from pemath.rope.hf.parameters import KNOWN_ROPE_TYPES
from pemath.scaling import DynamicNTK, Linear, Llama3, LongRoPE, Proportional, YaRN


def from_hf(*args, **kw):
    """rope.from_hf for the HF Llama family (rotate_half): the layout is not part of the dict."""
    return rope.from_hf(*args, layout="half", **kw)


def parts(spec):
    return {"base": spec.base, "rotary_dim": spec.rotary_dim, "scaling": spec.scaling}

# ----------------------------------------------------------------------------- real configs

# Llama-3.1-8B: hidden 4096 / 32 heads = head_dim 128, max_position_embeddings 131072.
LLAMA31_V5 = {
    "rope_type": "llama3",
    "rope_theta": 500000.0,
    "factor": 8.0,
    "low_freq_factor": 1.0,
    "high_freq_factor": 4.0,
    "original_max_position_embeddings": 8192,
}
# its v4 config.json: rope_theta lives at the top level, not in rope_scaling
LLAMA31_V4 = {k: v for k, v in LLAMA31_V5.items() if k != "rope_theta"}

# DeepSeek-V3: qk_rope_head_dim 64, rope_theta 10000, max_position_embeddings 163840.
DEEPSEEK_V3 = {
    "beta_fast": 32,
    "beta_slow": 1,
    "factor": 40,
    "mscale": 1.0,
    "mscale_all_dim": 1.0,
    "original_max_position_embeddings": 4096,
    "type": "yarn",
}

# Phi-3-mini-128k-style: head_dim 3072 / 32 = 96 (48 pairs), max 131072; the v4 config keeps
# original_max_position_embeddings = 4096 at the top level, outside rope_scaling.
PHI3_SHORT = [1.0 + 0.05 * i for i in range(48)]
PHI3_LONG = [1.0 + 63.0 * (i / 47) ** 2 for i in range(48)]
PHI3_V4 = {"type": "longrope", "short_factor": PHI3_SHORT, "long_factor": PHI3_LONG}

# GPT-NeoX / Pythia: rotary_pct 0.25 is HF's partial_rotary_factor.
NEOX_V5 = {"rope_type": "default", "rope_theta": 10000, "partial_rotary_factor": 0.25}


def test_llama31_8b():
    kw = from_hf(LLAMA31_V5, head_dim=128, max_position_embeddings=131072)
    assert parts(kw) == {
        "base": 500000.0,
        "rotary_dim": 128,
        "scaling": Llama3(8.0, 8192, low_freq_factor=1.0, high_freq_factor=4.0),
    }
    assert type(kw.base) is float and type(kw.rotary_dim) is int
    # v4: the same once the top-level rope_theta is passed; without it, an error, not 10000
    assert from_hf(LLAMA31_V4, head_dim=128, max_position_embeddings=131072, rope_theta=500000.0) == kw
    with pytest.raises(ValueError, match=r"'rope_theta'.*'llama3'"):
        from_hf(LLAMA31_V4, head_dim=128, max_position_embeddings=131072)


def test_qwen2_default_theta_1e6():
    # Qwen2-7B: hidden 3584 / 28 heads = 128; v5 carries rope_theta, v4 has rope_scaling null
    want = {"base": 1e6, "rotary_dim": 128, "scaling": None}
    assert parts(from_hf({"rope_type": "default", "rope_theta": 1000000.0}, head_dim=128)) == want
    assert parts(from_hf(None, head_dim=128, rope_theta=1e6)) == want
    x = np.random.default_rng(0).standard_normal((4, 128))
    kw = from_hf({"rope_type": "default", "rope_theta": 1000000.0}, head_dim=128)
    np.testing.assert_array_equal(
        rope.apply(x, np.arange(4), spec=kw), rope.apply(x, np.arange(4), layout="half", base=1e6)
    )


def test_deepseek_v3_yarn():
    kw = from_hf(DEEPSEEK_V3, head_dim=64, max_position_embeddings=163840, rope_theta=10000.0)
    want = YaRN(40.0, 4096, beta_fast=32.0, beta_slow=1.0, mscale=1.0, mscale_all_dim=1.0)
    assert parts(kw) == {"base": 10000.0, "rotary_dim": 64, "scaling": want}
    assert kw.scaling.attention_factor == 1.0  # mscale / mscale_all_dim = 1
    v2 = dict(DEEPSEEK_V3, mscale=0.707, mscale_all_dim=1.0)
    got = from_hf(v2, head_dim=64, max_position_embeddings=163840, rope_theta=1e4).scaling.attention_factor
    ln40 = math.log(40)
    assert got == pytest.approx((1 + 0.0707 * ln40) / (1 + 0.1 * ln40), rel=1e-15)


def test_gpt_oss_style_yarn_without_truncation():
    cfg = {
        "rope_type": "yarn",
        "rope_theta": 150000,
        "factor": 32.0,
        "beta_fast": 32.0,
        "beta_slow": 1.0,
        "original_max_position_embeddings": 4096,
        "truncate": False,
    }
    kw = from_hf(cfg, head_dim=64, max_position_embeddings=131072)
    assert kw.scaling == YaRN(32.0, 4096, truncate=False)
    assert kw.base == 150000.0


def test_phi3_mini_128k_longrope():
    kw = from_hf(
        PHI3_V4,
        head_dim=96,
        max_position_embeddings=131072,
        original_max_position_embeddings=4096,
        rope_theta=10000.0,
    )
    s = kw.scaling
    assert kw.rotary_dim == 96 and kw.base == 10000.0
    assert s == LongRoPE(PHI3_SHORT, PHI3_LONG, 4096, max_position=131072)
    # factor from 131072 / 4096 = 32 = 2^5, L0 = 2^12: sqrt(1 + 5/12)
    assert s.attention_factor == pytest.approx(math.sqrt(17 / 12), rel=1e-15)
    plain = 10000.0 ** (-np.arange(0, 96, 2) / 96)
    f = lambda n: rope.inv_freq(kw.rotary_dim, base=kw.base, scaling=s, seq_len=n)  # noqa: E731
    np.testing.assert_allclose(f(4096), plain / np.array(PHI3_SHORT), rtol=1e-14)
    np.testing.assert_allclose(f(4097), plain / np.array(PHI3_LONG), rtol=1e-14)
    # the top-level original_max_position_embeddings wins over the dict's, as in HF
    in_dict = dict(PHI3_V4, original_max_position_embeddings=2048)
    assert (
        from_hf(
            in_dict, head_dim=96, max_position_embeddings=131072, original_max_position_embeddings=4096, rope_theta=1e4
        )
        == kw
    )
    # without it anywhere, HF's default is max_position_embeddings: factor 1, never "long"
    bare = from_hf(PHI3_V4, head_dim=96, max_position_embeddings=131072, rope_theta=1e4).scaling
    assert bare.original_max_position == 131072 and bare.attention_factor == 1.0


def test_gpt_neox_partial_rotary():
    kw = from_hf(NEOX_V5, head_dim=128)
    assert parts(kw) == {"base": 10000.0, "rotary_dim": 32, "scaling": None}
    # the v4 form: rotary_pct at the top level
    assert from_hf(None, head_dim=128, partial_rotary_factor=0.25, rope_theta=10000) == kw
    x = np.random.default_rng(1).standard_normal((3, 128))
    out = rope.apply(x, np.array([1, 50, 900]), spec=kw)
    np.testing.assert_array_equal(out[:, 32:], x[:, 32:])
    assert np.all(out[:, :32] != x[:, :32])


@pytest.mark.parametrize(
    "head_dim, prf, rotary",
    [(80, 0.4, 32), (96, 0.5, 48), (128, 0.25, 32), (64, 1.0, 64), (256, 0.75, 192), (100, 0.29, 28)],
)
def test_partial_rotary_factor_truncates_like_hf(head_dim, prf, rotary):
    # HF: int(head_dim * partial_rotary_factor); 100 * 0.29 = 28.999999999999996 -> 28
    assert from_hf({"rope_theta": 1e4, "partial_rotary_factor": prf}, head_dim=head_dim).rotary_dim == rotary


# ----------------------------------------------------------------------------- every rope_type

L0 = 4096
CONFIGS = {
    "default": ({"rope_theta": 5e5}, None),
    "linear": ({"rope_theta": 5e5, "factor": 4.0}, Linear(4.0)),
    "dynamic": ({"rope_theta": 5e5, "factor": 2.0}, DynamicNTK(2.0, 16384)),
    "yarn": ({"rope_theta": 5e5, "factor": 4.0, "original_max_position_embeddings": L0}, YaRN(4.0, L0)),
    "longrope": (
        {"rope_theta": 5e5, "short_factor": [1.0] * 32, "long_factor": [4.0] * 32, "original_max_position_embeddings": L0},
        LongRoPE([1.0] * 32, [4.0] * 32, L0, max_position=16384),
    ),
    "llama3": (
        {
            "rope_theta": 5e5,
            "factor": 8.0,
            "low_freq_factor": 1.0,
            "high_freq_factor": 4.0,
            "original_max_position_embeddings": L0,
        },
        Llama3(8.0, L0),
    ),
    "proportional": ({"rope_theta": 5e5, "partial_rotary_factor": 0.25}, Proportional(0.25)),
}


@pytest.mark.parametrize("rope_type", list(CONFIGS))
@pytest.mark.parametrize("type_key", ["rope_type", "type", "both"])
def test_every_rope_type_v5_and_v4(rope_type, type_key):
    params, want = CONFIGS[rope_type]
    cfg = dict(params)
    if type_key == "both":
        cfg.update(rope_type=rope_type, type=rope_type)
    else:
        cfg[type_key] = rope_type
    kw = from_hf(cfg, head_dim=64, max_position_embeddings=16384)
    assert parts(kw) == {"base": 5e5, "rotary_dim": 64, "scaling": want}
    assert KNOWN_ROPE_TYPES == tuple(CONFIGS)


@pytest.mark.parametrize("rope_type", list(CONFIGS))
def test_returned_spec_drives_apply_and_cos_sin(rope_type):
    params, _ = CONFIGS[rope_type]
    kw = from_hf(dict(params, rope_type=rope_type), head_dim=64, max_position_embeddings=16384)
    x = np.random.default_rng(2).standard_normal((5, 64))
    pos = np.arange(5)
    y = rope.apply(x, pos, spec=kw, seq_len=20000)
    c, s = rope.cos_sin(pos, spec=kw, seq_len=20000)
    half = np.concatenate([-x[:, 32:], x[:, :32]], axis=-1)  # HF's rotate_half
    np.testing.assert_allclose(y, x * c + half * s, rtol=0, atol=1e-12)


def test_input_dict_not_mutated():
    cfg = copy.deepcopy(PHI3_V4)
    from_hf(cfg, head_dim=96, max_position_embeddings=131072, original_max_position_embeddings=4096, rope_theta=1e4)
    assert cfg == PHI3_V4


# ----------------------------------------------------------------------------- defaults


def test_empty_and_none_need_theta_and_are_plain_rope():
    # no rope_theta anywhere: an error naming it, not HF's model-dependent default_theta
    for cfg in (None, {}, {"type": "default"}, {"rope_type": "default"}):
        with pytest.raises(ValueError, match=r"rope_parameters\['rope_theta'\] is missing.*'default'"):
            from_hf(cfg, head_dim=64)
        want = {"base": 10000.0, "rotary_dim": 64, "scaling": None}
        assert parts(from_hf(cfg, head_dim=64, rope_theta=10000.0)) == want
        assert from_hf(cfg, head_dim=64, rope_theta=100).base == 100.0


@pytest.mark.parametrize("rope_type", list(CONFIGS))
@pytest.mark.parametrize("type_key", ["rope_type", "type"])
def test_missing_theta_raises_for_every_rope_type(rope_type, type_key):
    params, want = CONFIGS[rope_type]
    cfg = {k: v for k, v in params.items() if k != "rope_theta"}
    cfg[type_key] = rope_type
    with pytest.raises(ValueError, match=rf"rope_parameters\['rope_theta'\] is missing.*'{rope_type}'"):
        from_hf(cfg, head_dim=64, max_position_embeddings=16384)
    # the keyword (v4: top-level rope_theta) supplies it, and nothing else changes
    kw = from_hf(cfg, head_dim=64, max_position_embeddings=16384, rope_theta=123.0)
    assert parts(kw) == {"base": 123.0, "rotary_dim": 64, "scaling": want}
    assert type(kw.base) is float


def test_dict_values_win_over_top_level_ones():
    cfg = {"rope_theta": 5e5, "partial_rotary_factor": 0.5}
    kw = from_hf(cfg, head_dim=64, rope_theta=1e4, partial_rotary_factor=0.25)
    assert kw.base == 5e5 and kw.rotary_dim == 32


def test_none_values_count_as_absent():
    cfg = {"rope_type": "yarn", "factor": 4.0, "rope_theta": None, "beta_fast": None, "beta_slow": None,
           "mscale": None, "mscale_all_dim": None, "attention_factor": None, "original_max_position_embeddings": None,
           "partial_rotary_factor": None}
    kw = from_hf(cfg, head_dim=64, max_position_embeddings=8192, rope_theta=2e6)
    assert parts(kw) == {"base": 2e6, "rotary_dim": 64, "scaling": YaRN(4.0, 8192)}
    # rope_theta None with no keyword is missing, not a default
    with pytest.raises(ValueError, match=r"rope_parameters\['rope_theta'\] is missing.*'yarn'"):
        from_hf(cfg, head_dim=64, max_position_embeddings=8192)
    with pytest.raises(ValueError, match=r"rope_parameters\['rope_theta'\] is missing.*'default'"):
        from_hf({"rope_theta": None}, head_dim=64)


def test_yarn_defaults():
    # factor None: max / original (HF); original defaults to max (standardize_rope_params)
    kw = from_hf({"type": "yarn", "factor": None, "original_max_position_embeddings": 4096}, head_dim=64,
                      max_position_embeddings=32768, rope_theta=1e4)
    assert kw.scaling == YaRN(8.0, 4096)
    assert kw.scaling.attention_factor == pytest.approx(0.1 * math.log(8) + 1, rel=1e-15)
    kw = from_hf({"type": "yarn", "factor": 4.0}, head_dim=64, max_position_embeddings=32768, rope_theta=1e4)
    s = kw.scaling
    assert (s.original_max_position, s.beta_fast, s.beta_slow, s.truncate, s.ramp) == (32768, 32.0, 1.0, True, "index")
    # Qwen2.5-style v4: rope_theta at the top level
    qwen = {"factor": 4.0, "original_max_position_embeddings": 32768, "type": "yarn"}
    kw = from_hf(qwen, head_dim=128, max_position_embeddings=131072, rope_theta=1e6)
    assert parts(kw) == {"base": 1e6, "rotary_dim": 128, "scaling": YaRN(4.0, 32768)}


def test_longrope_defaults_and_attention_factor():
    cfg = {"type": "longrope", "rope_theta": 1e4, "short_factor": [1.0] * 4, "long_factor": [2.0] * 4}
    s = from_hf(cfg, head_dim=8, max_position_embeddings=16384, original_max_position_embeddings=1024).scaling
    assert s.attention_factor == pytest.approx(math.sqrt(1 + math.log(16) / math.log(1024)), rel=1e-15)
    s = from_hf(dict(cfg, factor=2.0), head_dim=8, max_position_embeddings=16384,
                     original_max_position_embeddings=1024).scaling
    assert s.attention_factor == pytest.approx(math.sqrt(1.1), rel=1e-15)  # ln 2 / ln 1024 = 1/10
    s = from_hf(dict(cfg, attention_factor=1.25), head_dim=8, original_max_position_embeddings=1024).scaling
    assert s.attention_factor == 1.25


def test_llama3_original_defaults_to_max():
    cfg = {k: v for k, v in LLAMA31_V5.items() if k != "original_max_position_embeddings"}
    assert from_hf(cfg, head_dim=128, max_position_embeddings=8192).scaling == Llama3(8.0, 8192)


def test_proportional_keeps_the_whole_head():
    # Gemma-4-style global layers: head 512, p = 0.25 -> 64 of 256 pairs rotate
    kw = from_hf({"rope_type": "proportional", "rope_theta": 1e6, "partial_rotary_factor": 0.25}, head_dim=512)
    assert kw.rotary_dim == 512 and kw.scaling == Proportional(0.25)
    f = rope.inv_freq(kw.rotary_dim, base=kw.base, scaling=kw.scaling)
    assert np.count_nonzero(f) == 64
    np.testing.assert_allclose(f[:64], 1e6 ** (-np.arange(0, 128, 2) / 512), rtol=1e-14)
    kw = from_hf({"rope_type": "proportional", "rope_theta": 1e6, "factor": 2.0}, head_dim=8)
    assert kw.scaling == Proportional(1.0, factor=2.0)
    assert from_hf({"rope_type": "proportional", "rope_theta": 1e6, "partial_rotary_factor": 0.0},
                        head_dim=8).scaling == Proportional(0.0)


def test_integral_float_lengths_accepted():
    cfg = dict(LLAMA31_V5, original_max_position_embeddings=8192.0)
    assert from_hf(cfg, head_dim=128, max_position_embeddings=131072.0).scaling == Llama3(8.0, 8192)


# ----------------------------------------------------------------------------- errors


REQUIRED = [
    ("linear", "factor"),
    ("dynamic", "factor"),
    ("yarn", "factor"),
    ("longrope", "short_factor"),
    ("longrope", "long_factor"),
    ("llama3", "factor"),
    ("llama3", "low_freq_factor"),
    ("llama3", "high_freq_factor"),
    ("llama3", "rope_theta"),
    ("proportional", "rope_theta"),
]


@pytest.mark.parametrize("rope_type, key", REQUIRED)
@pytest.mark.parametrize("how", ["missing", "None"])
def test_missing_key_names_key_and_rope_type(rope_type, key, how):
    params, _ = CONFIGS[rope_type]
    cfg = dict(params, rope_type=rope_type)
    if how == "missing":
        cfg.pop(key)
    else:
        cfg[key] = None
        if rope_type == "yarn":  # HF: factor None means max / original, not an error
            assert from_hf(cfg, head_dim=64, max_position_embeddings=16384).scaling.factor == 4.0
            return
    with pytest.raises(ValueError, match=rf"'{key}'.*'{rope_type}'"):
        from_hf(cfg, head_dim=64, max_position_embeddings=16384)


@pytest.mark.parametrize("rope_type", ["yarn", "longrope", "llama3"])
def test_missing_original_without_max_position(rope_type):
    params, _ = CONFIGS[rope_type]
    cfg = {k: v for k, v in params.items() if k != "original_max_position_embeddings"}
    cfg["rope_type"] = rope_type
    with pytest.raises(ValueError, match=rf"original_max_position_embeddings.*'{rope_type}'.*max_position_embeddings"):
        from_hf(cfg, head_dim=64)


def test_max_position_required_where_hf_uses_it():
    with pytest.raises(ValueError, match=r"max_position_embeddings.*'dynamic'"):
        from_hf({"type": "dynamic", "factor": 2.0}, head_dim=64, rope_theta=1e4)
    with pytest.raises(ValueError, match=r"'factor'.*'yarn'.*max_position_embeddings"):
        from_hf({"type": "yarn", "factor": None, "original_max_position_embeddings": 4096}, head_dim=64,
                     rope_theta=1e4)
    with pytest.raises(ValueError, match=r"'factor'.*'longrope'.*max_position_embeddings"):
        from_hf(dict(PHI3_V4, original_max_position_embeddings=4096), head_dim=96, rope_theta=1e4)


def test_unknown_rope_type_lists_known():
    with pytest.raises(ValueError, match="rope_type") as info:
        from_hf({"rope_type": "ntk-by-parts"}, head_dim=64, rope_theta=1e4)
    for name in KNOWN_ROPE_TYPES:
        assert repr(name) in str(info.value)
    with pytest.raises(ValueError, match="longrope"):
        from_hf({"type": "su", "short_factor": [1.0], "long_factor": [1.0]}, head_dim=2, rope_theta=1e4)
    with pytest.raises(TypeError, match="rope_type"):
        from_hf({"rope_type": 3}, head_dim=64, rope_theta=1e4)


def test_conflicting_type_keys():
    with pytest.raises(ValueError, match=r"rope_type.*type.*disagree"):
        from_hf({"rope_type": "linear", "type": "dynamic", "factor": 2.0}, head_dim=64, rope_theta=1e4)


@pytest.mark.parametrize(
    "cfg, key",
    [
        (dict(LLAMA31_V5, low_freq_facter=1.0), "low_freq_facter"),
        ({"rope_type": "default", "factor": 2.0}, "factor"),  # factor without a type: HF ignores it
        ({"rope_type": "dynamic", "factor": 2.0, "original_max_position_embeddings": 4096}, "original_max"),
        ({"rope_type": "linear", "factor": 2.0, "beta_fast": 32}, "beta_fast"),
        ({"rope_type": "longrope", "short_factor": [1.0], "long_factor": [1.0], "short_mscale": 1.2}, "PhiMoE"),
        (dict(LLAMA31_V5, llama_4_scaling_beta=0.1), "queries"),
    ],
)
def test_unknown_keys_refused(cfg, key):
    with pytest.raises(ValueError, match=key):
        from_hf(cfg, head_dim=2, max_position_embeddings=131072, rope_theta=1e4)


def test_mrope_refused_with_a_way_out():
    qwen2_vl = {"type": "mrope", "mrope_section": [16, 24, 24]}
    with pytest.raises(ValueError, match=r"'mrope'.*'default'"):
        from_hf(qwen2_vl, head_dim=128, rope_theta=1e6)
    with pytest.raises(ValueError, match=r"mrope_section.*drop"):
        from_hf({"rope_type": "default", "mrope_section": [16, 24, 24]}, head_dim=128, rope_theta=1e6)
    with pytest.raises(ValueError, match="multi-axis"):
        from_hf({"rope_type": "axial"}, head_dim=128, rope_theta=1e6)


def test_nested_layer_types_refused():
    gemma3 = {"full_attention": {"rope_type": "linear", "factor": 8.0}, "sliding_attention": {"rope_type": "default"}}
    with pytest.raises(ValueError, match="nested"):
        from_hf(gemma3, head_dim=128, rope_theta=1e6)
    assert from_hf(gemma3["full_attention"], head_dim=128, rope_theta=1e6).scaling == Linear(8.0)


@pytest.mark.parametrize(
    "cfg, kwargs, exc, name",
    [
        ([("rope_type", "linear")], {}, TypeError, "rope_parameters"),
        ("linear", {}, TypeError, "rope_parameters"),
        ({1: 2}, {}, TypeError, "keys"),
        ({"type": "linear", "factor": "8"}, {}, TypeError, "factor"),
        ({"type": "linear", "factor": True}, {}, TypeError, "factor"),
        ({"type": "linear", "factor": 0}, {}, ValueError, "factor"),
        ({"type": "linear", "factor": float("nan")}, {}, ValueError, "factor"),
        ({"rope_theta": -1.0}, {}, ValueError, "rope_theta"),
        ({"rope_theta": "1e4"}, {}, TypeError, "rope_theta"),
        ({}, {"rope_theta": 0.0}, ValueError, "rope_theta"),
        ({}, {"head_dim": 64.0}, TypeError, "head_dim"),
        ({}, {"head_dim": 0}, ValueError, "head_dim"),
        ({}, {"head_dim": 63}, ValueError, "head_dim"),
        ({}, {"max_position_embeddings": "4096"}, TypeError, "max_position_embeddings"),
        ({}, {"max_position_embeddings": 0}, ValueError, "max_position_embeddings"),
        ({}, {"original_max_position_embeddings": 4096.5}, TypeError, "original_max_position_embeddings"),
        ({"partial_rotary_factor": 0.0}, {}, ValueError, "partial_rotary_factor"),
        ({"partial_rotary_factor": 1.5}, {}, ValueError, "partial_rotary_factor"),
        ({"partial_rotary_factor": "0.5"}, {}, TypeError, "partial_rotary_factor"),
        ({"partial_rotary_factor": 0.25}, {"head_dim": 100}, ValueError, r"partial_rotary_factor.*25"),
        ({}, {"partial_rotary_factor": 0.01}, ValueError, "partial_rotary_factor"),
        ({"rope_type": "proportional", "rope_theta": 1.0, "partial_rotary_factor": 1.5}, {}, ValueError,
         "partial_rotary_factor"),
        ({"type": "yarn", "factor": 4.0, "truncate": None}, {}, ValueError, "truncate"),
        ({"type": "yarn", "factor": 4.0, "truncate": "false"}, {}, TypeError, "truncate"),
        ({"type": "yarn", "factor": 4.0, "beta_fast": 0}, {}, ValueError, "beta_fast"),
        ({"type": "yarn", "factor": 4.0, "beta_fast": 1, "beta_slow": 32}, {}, ValueError, r"'yarn'.*beta_fast"),
        ({"type": "yarn", "factor": 4.0, "mscale": -1.0}, {}, ValueError, "mscale"),
        ({"type": "yarn", "factor": 4.0, "attention_factor": 0.0}, {}, ValueError, "attention_factor"),
        ({"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 0}, {}, ValueError,
         "original_max_position_embeddings"),
        (dict(LLAMA31_V5, low_freq_factor=5.0), {}, ValueError, r"'llama3'.*low_freq_factor"),
        (dict(LLAMA31_V5, high_freq_factor=[4.0]), {}, TypeError, "high_freq_factor"),
        ({"type": "longrope", "short_factor": [1.0] * 31, "long_factor": [1.0] * 32}, {}, ValueError,
         r"short_factor.*31.*32"),
        ({"type": "longrope", "short_factor": [1.0] * 32, "long_factor": 1.0}, {}, TypeError, "long_factor"),
        ({"type": "longrope", "short_factor": [1.0] * 31 + ["x"], "long_factor": [1.0] * 32}, {}, TypeError,
         "short_factor"),
        ({"type": "longrope", "short_factor": [1.0] * 31 + [0.0], "long_factor": [1.0] * 32}, {}, ValueError,
         "short_factor"),
        ({"type": "dynamic", "factor": 2.0}, {"head_dim": 2}, ValueError, "rotary dim"),
    ],
)
def test_bad_values(cfg, kwargs, exc, name):
    # an explicit rope_theta, so each case fails for its own reason, not a missing theta
    kw = {"head_dim": 64, "max_position_embeddings": 16384, "rope_theta": 1e4, **kwargs}
    with pytest.raises(exc, match=name):
        from_hf(cfg, **kw)
