"""rope.Spec: the value object, and spec= on every RoPE entry point (same numbers as the keywords)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pemath import rope
from pemath import scaling as sc
from pemath.testing import assert_rope_close, rope_tolerance

SCALINGS = [None, sc.Linear(2.0), sc.YaRN(4.0, 64), sc.Llama3(8.0, 64), sc.LongRoPE([1.0, 2.0] * 8, [3.0, 4.0] * 8, 64,
                                                                                     factor=4.0)]


@st.composite
def specs(draw):
    head = draw(st.sampled_from([8, 32, 64]))
    r = draw(st.sampled_from([head, head // 2]))
    s = draw(st.sampled_from(SCALINGS))
    if isinstance(s, sc.LongRoPE):
        r = 32
        head = max(head, 32)
    return rope.Spec(draw(st.sampled_from(["interleaved", "half"])), base=draw(st.sampled_from([1e4, 5e5, 100.0])),
                     head_dim=head, rotary_dim=r, scaling=s)


def _kw(spec):
    return {"layout": spec.layout, "base": spec.base, "rotary_dim": spec.rotary_dim, "scaling": spec.scaling}


@settings(max_examples=40, deadline=None)
@given(specs(), st.integers(0, 2**16), st.sampled_from([None, 16, 200]))
def test_spec_equals_its_keywords_everywhere(spec, p, seq_len):
    rng = np.random.default_rng(p)
    x = rng.standard_normal((3, spec.head_dim))
    pos = np.array([0, p, p + 7])
    kw = _kw(spec)
    r = spec.rotary_dim
    assert np.array_equal(rope.apply(x, pos, spec=spec, seq_len=seq_len), rope.apply(x, pos, seq_len=seq_len, **kw))
    assert np.array_equal(rope.inv_freq(spec=spec, seq_len=seq_len),
                          rope.inv_freq(r, base=spec.base, scaling=spec.scaling, seq_len=seq_len))
    for a, b in zip(rope.cos_sin(pos, spec=spec, seq_len=seq_len),
                    rope.cos_sin(pos, r, layout=spec.layout, base=spec.base, scaling=spec.scaling, seq_len=seq_len)):
        assert np.array_equal(a, b)
    assert np.array_equal(rope.freqs_cis(pos, spec=spec, seq_len=seq_len),
                          rope.freqs_cis(pos, r, base=spec.base, scaling=spec.scaling, seq_len=seq_len))
    z = rope.to_complex(x[:, :r], layout=spec.layout)
    assert np.array_equal(rope.apply_complex(z, pos, spec=spec, seq_len=seq_len),
                          rope.apply_complex(z, pos, base=spec.base, scaling=spec.scaling, seq_len=seq_len))
    assert np.array_equal(rope.matrix(p, spec=spec, seq_len=seq_len), rope.matrix(p, spec.head_dim, seq_len=seq_len, **kw))
    assert np.array_equal(rope.long_term_decay([1, 50], spec=spec, seq_len=seq_len),
                          rope.long_term_decay([1, 50], r, base=spec.base, scaling=spec.scaling, seq_len=seq_len))
    y = rope.apply(x.astype(np.float32), pos, spec=spec, seq_len=seq_len)
    assert_rope_close(y, x.astype(np.float32), pos, spec=spec, seq_len=seq_len)
    assert np.array_equal(rope_tolerance(x, pos, spec=spec, seq_len=seq_len),
                          rope_tolerance(x, pos, seq_len=seq_len, **kw))


@pytest.mark.parametrize(
    "call",
    [
        lambda s: rope.apply(np.ones(8), 1, spec=s, layout="half"),
        lambda s: rope.apply(np.ones(8), 1, spec=s, base=10000.0),
        lambda s: rope.inv_freq(8, spec=s, scaling=sc.Linear(2.0)),
        lambda s: rope.cos_sin([1], spec=s, layout="half"),
        lambda s: rope.matrix(1, spec=s, rotary_dim=8),
        lambda s: rope.freqs_cis([1], spec=s, base=1e4),
        lambda s: rope.long_term_decay([1], spec=s, base=1e4),
        lambda s: rope.apply_mrope(np.ones(8), [[1], [1], [1]], spec=s.replace(mrope_section=[2, 1, 1]),
                                   mrope_section=[2, 1, 1]),
        lambda s: assert_rope_close(np.ones(8), np.ones(8), 0, spec=s, layout="half"),
        lambda s: rope_tolerance(np.ones(8), 0, spec=s, base=1e4),
    ],
)
def test_spec_and_its_keywords_together_raise(call):
    with pytest.raises(TypeError, match=r"pass spec= or the keywords it replaces .* not both"):
        call(rope.Spec("half", head_dim=8))


def test_spec_checks_the_head_dim_and_its_own_fields():
    with pytest.raises(ValueError, match=r"x.shape\[-1\] is 6, but the spec is for head_dim 8"):
        rope.apply(np.ones(6), 1, spec=rope.Spec("half", head_dim=8))
    with pytest.raises(TypeError, match="spec must be a pemath.rope.Spec"):
        rope.apply(np.ones(8), 1, spec={"layout": "half"})
    with pytest.raises(TypeError, match="layout is required"):
        rope.Spec(None)
    with pytest.raises(ValueError, match=r"rotary_dim must be an even integer in \[2, 8\]"):
        rope.Spec("half", head_dim=8, rotary_dim=10)
    with pytest.raises(ValueError, match="excludes Spec.base and Spec.scaling"):
        rope.Spec("half", base=1e4, inv_freq=[1.0, 0.5])
    with pytest.raises(ValueError, match=r"mrope_section \[2, 1, 1\] sums to 4, but it must sum to rotary_dim / 2 = 8"):
        rope.Spec("half", head_dim=16, mrope_section=[2, 1, 1])
    with pytest.raises(ValueError, match="query_scaling_beta and Spec.query_scaling_length go together"):
        rope.Spec("half", query_scaling_beta=0.1)
    with pytest.raises(TypeError, match=r"unknown field\(s\) \['theta'\]"):
        rope.Spec("half").replace(theta=5.0)


def test_spec_value_semantics():
    a = rope.Spec("half", head_dim=64, scaling=sc.Linear(2.0))
    b = rope.Spec("half", base=10000, head_dim=64, rotary_dim=64, scaling=sc.Linear(2.0), out_layout="half")
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert repr(a) == "Spec(layout='half', base=10000.0, head_dim=64, rotary_dim=64, scaling=Linear(factor=2.0))"
    assert a.replace(base=5e5) != a and a.replace(base=5e5).base == 5e5
    with pytest.raises(AttributeError):
        a.base = 3.0  # type: ignore[misc]
    c = a.replace(scaling=None, inv_freq=[1.0, 0.25])
    assert c.base is None and c.rotary_dim == 4 and c.inv_freq == (1.0, 0.25)
    assert c.replace(base=100.0, head_dim=4).inv_freq is None


def test_explicit_frequencies_rotate_by_exactly_those_frequencies():
    f = np.pi * np.linspace(1.0, 8.0, 4)  # timm's pixel bands for coordinates in [-1, 1]
    spec = rope.Spec("half", inv_freq=f)
    x = np.random.default_rng(1).standard_normal((5, 8))
    pos = np.linspace(-1.0, 1.0, 5)
    y = rope.apply(x, pos, spec=spec)
    ph = pos[:, None] * f
    xa, xb = x[:, :4], x[:, 4:]
    want = np.concatenate([xa * np.cos(ph) - xb * np.sin(ph), xb * np.cos(ph) + xa * np.sin(ph)], axis=-1)
    np.testing.assert_allclose(y, want, rtol=0, atol=1e-14)
    assert_rope_close(y.astype(np.float32), x.astype(np.float32), pos, spec=spec)
    wrong = rope.apply(x, pos + 1, spec=spec).astype(np.float32)
    with pytest.raises(AssertionError, match="positions shifted by \\+1"):
        assert_rope_close(wrong, x.astype(np.float32), pos, spec=spec)


@pytest.mark.parametrize("layout, out", [("interleaved", "half"), ("half", "interleaved")])
def test_out_layout_rotates_then_relays(layout, out):
    spec = rope.Spec(layout, head_dim=16, rotary_dim=8, out_layout=out)
    x = np.random.default_rng(2).standard_normal((4, 16))
    pos = np.arange(4) * 1000
    y = rope.apply(x, pos, spec=spec)
    plain = rope.apply(x, pos, layout=layout, rotary_dim=8)
    assert np.array_equal(y, rope.convert_layout(plain, src=layout, dst=out, rotary_dim=8))
    np.testing.assert_allclose(rope.apply(y, pos, spec=spec, inverse=True), x, atol=1e-12)
    for p in (0, 3, 1000):
        np.testing.assert_allclose(rope.matrix(p, spec=spec) @ x[0], rope.apply(x[0], p, spec=spec), atol=1e-12)
    buf = np.empty_like(x)
    assert rope.apply(x, pos, spec=spec, out=buf) is buf and np.array_equal(buf, y)
    assert_rope_close(y, x, pos, spec=spec)  # checked in the output's layout


def test_mrope_spec_takes_hf_position_ids_and_a_scaling():
    spec = rope.Spec("half", head_dim=16, mrope_section=[4, 2, 2], scaling=sc.Linear(2.0))
    x = np.random.default_rng(3).standard_normal((2, 3, 5, 16))  # (batch, heads, seq, dim)
    pid = np.stack([np.arange(5)[None].repeat(2, 0)] * 3)  # (3, batch, seq), text tokens
    y = rope.apply(x, pid[:, :, None, :], spec=spec)
    assert np.array_equal(y, rope.apply(x, pid[0][:, None, :], spec=spec.replace(mrope_section=None)))
    assert np.array_equal(y, rope.apply_mrope(x, pid[:, :, None, :], mrope_section=[4, 2, 2], scaling=sc.Linear(2.0)))
    img = pid.copy()
    img[1] += 3
    z = rope.apply(x, img[:, :, None, :], spec=spec)
    comp = rope.mrope_components([4, 2, 2])
    f = rope.inv_freq(spec=spec)
    for c in range(3):  # each frequency index turns by its own component's position (both members of the pair)
        ph = img[c][:, None, :, None] * f[comp == c]
        half = np.flatnonzero(comp == c)
        xa, xb = x[..., half], x[..., half + 8]
        np.testing.assert_allclose(z[..., half], xa * np.cos(ph) - xb * np.sin(ph), atol=1e-12)
        np.testing.assert_allclose(z[..., half + 8], xb * np.cos(ph) + xa * np.sin(ph), atol=1e-12)
    np.testing.assert_allclose(rope.apply(z, img[:, :, None, :], spec=spec, inverse=True), x, atol=1e-12)
    with pytest.raises(ValueError, match="single-axis spec"):
        rope.cos_sin([1], spec=spec)


def test_query_scaling_is_exposed_not_applied():
    spec = rope.Spec("half", query_scaling_beta=0.1, query_scaling_length=8192)
    np.testing.assert_allclose(spec.query_scale([0, 8191, 8192, 3 * 8192]),
                               [1.0, 1.0, 1 + 0.1 * np.log(2), 1 + 0.1 * np.log(4)])
    x = np.ones(8)
    assert np.array_equal(rope.apply(x, 9000, spec=spec), rope.apply(x, 9000, layout="half"))


def test_xpos_takes_a_spec_and_its_scaling():
    from pemath.rope import xpos

    x = np.random.default_rng(5).standard_normal((3, 16))
    pos = np.array([0, 5, 900])
    spec = rope.Spec("interleaved", base=500.0, head_dim=16, rotary_dim=8)
    kw = dict(role="query", scale_base=64.0)
    assert np.array_equal(xpos.apply(x, pos, spec=spec, **kw),
                          xpos.apply(x, pos, layout="interleaved", base=500.0, rotary_dim=8, **kw))
    scaled = spec.replace(scaling=sc.YaRN(4.0, 64))
    y = xpos.apply(x, pos, spec=scaled, **kw)
    # xPos's scale times the plain rotation by the scaled frequencies, attention factor included
    plain = rope.apply(x, pos, spec=scaled)
    z = xpos.zeta(8)
    s = np.repeat(z ** (pos[:, None] / 64.0), 2, axis=-1)
    np.testing.assert_allclose(y[:, :8], plain[:, :8] * s, rtol=1e-12)
    assert np.array_equal(y[:, 8:], x[:, 8:])  # beyond the rotary dim: untouched
    np.testing.assert_allclose(xpos.apply(y, pos, spec=scaled, inverse=True, **kw), x, rtol=1e-12, atol=1e-12)
    with pytest.raises(TypeError, match="not both"):
        xpos.apply(x, pos, spec=spec, base=10.0, **kw)


def test_rotary_dim_spreads_to_every_frequency_entry_point():
    kw = {"base": 500.0, "rotary_dim": 8, "scaling": sc.Linear(2.0)}  # e.g. a spec's or a config's fields
    f = rope.inv_freq(8, base=500.0, scaling=sc.Linear(2.0))
    assert np.array_equal(rope.inv_freq(**kw), f)
    assert np.array_equal(rope.long_term_decay([3], **kw), rope.long_term_decay([3], 8, base=500.0,
                                                                                  scaling=sc.Linear(2.0)))
    assert np.array_equal(rope.freqs_cis([3], **kw), rope.freqs_cis([3], 8, base=500.0, scaling=sc.Linear(2.0)))
    c, _ = rope.cos_sin([3], layout="half", **kw)
    assert c.shape == (1, 8)
    with pytest.raises(ValueError, match="must agree"):
        rope.inv_freq(16, rotary_dim=8)
    with pytest.raises(TypeError, match="not both"):
        rope.inv_freq(rotary_dim=8, spec=rope.Spec("half", rotary_dim=8))


def test_convert_layout_takes_a_spec():
    x = np.arange(12.0)
    spec = rope.Spec("interleaved", head_dim=12, rotary_dim=8, out_layout="half")
    assert np.array_equal(rope.convert_layout(x, spec=spec), rope.convert_layout(x, src="interleaved", dst="half",
                                                                                 rotary_dim=8))
    assert np.array_equal(rope.convert_layout(x, spec=spec, dst="interleaved"), x)
    with pytest.raises(TypeError, match="not both"):
        rope.convert_layout(x, spec=spec, src="half")
    with pytest.raises(TypeError, match="dst"):
        rope.convert_layout(x, spec=spec.replace(out_layout=None))


@pytest.mark.parametrize("grouping", ["features", "pairs"])
@pytest.mark.parametrize("frequencies", ["per_axis", "strided"])
def test_axial_spec_is_apply_axial(grouping, frequencies):
    x = np.random.default_rng(7).standard_normal((2, 5, 20))
    pos = np.stack([np.arange(5), np.arange(5)[::-1] * 3], axis=-1)  # (seq, 2): row, column
    spec = rope.Spec("half", base=100.0, head_dim=20, axial_dims=(8, 8), axial_grouping=grouping,
                     axial_frequencies=frequencies)
    want = rope.apply_axial(x, pos, layout="half", base=100.0, axis_dims=[8, 8], grouping=grouping,
                            frequencies=frequencies)
    assert np.array_equal(rope.apply(x, pos, spec=spec), want)
    assert np.array_equal(rope.apply_axial(x, pos, spec=spec), want)
    np.testing.assert_allclose(rope.apply(want, pos, spec=spec, inverse=True), x, atol=1e-12)
    assert spec.rotary_dim == 16 and spec.is_multi_axis
    with pytest.raises(TypeError, match="not both"):
        rope.apply_axial(x, pos, spec=spec, grouping="pairs")
    with pytest.raises(ValueError, match="excludes mrope_section, inv_freq and scaling"):
        spec.replace(scaling=sc.Linear(2.0))


def test_review_findings_stay_fixed():
    s64 = rope.Spec("half", rotary_dim=64)
    with pytest.raises(ValueError, match="dim is 128, but the spec rotates 64"):
        rope.inv_freq(128, spec=s64)
    with pytest.raises(ValueError, match="dim is 128"):
        rope.cos_sin([1], 128, spec=s64)
    with pytest.raises(ValueError, match="dim is 32"):
        rope.inv_freq(32, spec=rope.Spec("half", head_dim=64))
    # a derived rotary dim follows the head dim; an explicit one stays
    assert rope.Spec("half", head_dim=128).replace(head_dim=256).rotary_dim == 256
    assert rope.Spec("half", head_dim=128, rotary_dim=64).replace(head_dim=256).rotary_dim == 64
    assert rope.Spec("half", axial_dims=(4, 4)).replace(axial_dims=(8, 8)).rotary_dim == 16
    assert rope.Spec("half", head_dim=16, mrope_section=(4, 2, 2)).replace(
        head_dim=32, mrope_section=(8, 4, 4)).rotary_dim == 32
    with pytest.raises(ValueError, match="excludes Spec.base and Spec.scaling"):
        rope.Spec("half", inv_freq=[1.0, 0.5], head_dim=4).replace(scaling=sc.Linear(2.0))
    # containers are not cached: an invalid tuple after an equal valid one is still refused
    x = np.ones(8)
    rope.apply_mrope(x, [5, 5, 5], mrope_section=(2, 1, 1))
    with pytest.raises(TypeError, match=r"mrope_section\[0\] must be an integer"):
        rope.apply_mrope(x, [5, 5, 5], mrope_section=(2.0, 1, 1))
    with pytest.raises(TypeError, match=r"mrope_section\[0\] must be an integer"):
        rope.apply_mrope(x, [5, 5, 5], mrope_section=(True, 1, 1, 0)[:3])
    # PhiMoE: the short regime's factor
    lr = sc.LongRoPE([1.0] * 4, [2.0] * 4, 64, attention_factor=1.3, short_attention_factor=1.05)
    s = rope.Spec("half", head_dim=8, scaling=lr)
    assert s.attention_factor == 1.05 and s.attention_factor_at(65) == 1.3
    with pytest.raises(ValueError, match="out_layout with axial_dims"):
        rope.Spec("half", axial_dims=(4, 4), out_layout="interleaved")
    with pytest.raises(ValueError, match="query_scaling_beta must be >= 0"):
        rope.Spec("half", query_scaling_beta=-5.0, query_scaling_length=10)
    with pytest.raises(ValueError, match="one layout"):
        rope.cos_sin([1], spec=rope.Spec("interleaved", head_dim=8, out_layout="half"))
    z = rope.to_complex(np.ones((2, 8)), layout="half")
    with pytest.raises(ValueError, match=r"against z\.shape"):
        rope.apply_complex(z, [1, 2, 3])


def test_assert_rope_close_takes_mrope_and_out_layout_specs():
    x = np.random.default_rng(11).standard_normal((1, 2, 6, 16)).astype(np.float32)
    pid = np.stack([np.arange(6), np.arange(6) // 2 + 3, np.arange(6) % 2 + 7])[:, None, None, :]  # (3, 1, 1, 6)
    spec = rope.Spec("half", head_dim=16, mrope_section=[4, 2, 2], base=1e4)
    y = rope.apply(x, pid, spec=spec)
    assert_rope_close(y, x, pid, spec=spec)                       # float32 output of float64 phases
    with pytest.raises(AssertionError, match="M-RoPE"):
        assert_rope_close(rope.apply(x, pid, spec=spec.replace(mrope_section=[2, 4, 2])), x, pid, spec=spec)
    with pytest.raises(ValueError, match="a leading axis of 3 components"):
        assert_rope_close(y, x, pid[:2], spec=spec)
    v3 = rope.Spec("interleaved", head_dim=16, out_layout="half", base=1e4)
    pos = np.arange(6)
    z = rope.apply(x, pos, spec=v3)
    assert_rope_close(z, x, pos, spec=v3)
    with pytest.raises(AssertionError, match="written in the half layout"):
        assert_rope_close(rope.apply(x, pos, spec=v3.replace(out_layout=None)), x, pos, spec=v3)
