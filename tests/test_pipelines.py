"""pemath.testing.pipelines: real pipelines emulated operation by operation.

Three kinds of evidence:

* the recorded peer fixtures (``tests/fixtures/peers``: HF transformers 5.23 and Meta's
  llama_models run through torch 2.13 CPU, float32): with ``libm="torch"`` the
  emulation must reproduce them bit for bit; with ``libm="exact"`` it differs only
  where torch's float32 pow/cos/sin are not correctly rounded, by a derived amount;
* HF's and Meta's algorithms typed in torch here, run at bfloat16/float16/float32
  (skipped without torch): bit for bit with ``libm="torch"``;
* identities that need no peer: layouts are a permutation, Meta's complex product is
  HF's interleaved rotation in float32, GPT-J is HF's interleaved pipeline, hand values.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

from pemath import rope
from pemath.scaling import NTK, DynamicNTK, Linear, Llama3, LongRoPE, Proportional, YaRN
from pemath.testing import pipelines as P

ml_dtypes = pytest.importorskip("ml_dtypes", reason="the narrow dtypes need ml_dtypes (pip install ml_dtypes)")

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "peers"
MANIFEST = json.loads((FIXTURES / "manifest.json").read_text()) if (FIXTURES / "manifest.json").exists() else {}
U32 = 2.0**-24


def ulps32(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Distance in float32 ulps between same-sign float32 arrays."""
    return np.abs(a.astype(np.float32).view(np.int32).astype(np.int64) - b.astype(np.float32).view(np.int32))


def _hf_cases(kind: str) -> list[str]:
    entry = MANIFEST.get("files", {}).get("hf_rope.npz")
    if entry is None:
        return [pytest.param(None, marks=pytest.mark.skip(reason="fixture hf_rope.npz absent"))]
    return sorted(c for c, v in entry["cases"].items() if v["kind"] == kind)


def _hf_case(case: str) -> tuple[dict, dict, dict]:
    params = MANIFEST["files"]["hf_rope.npz"]["cases"][case]
    with np.load(FIXTURES / "hf_rope.npz") as z:
        arrays = {k[len(case) + 1 :]: z[k] for k in z.files if k.startswith(case + "/")}
    spec = rope.from_hf(
        dict(params["rope_parameters_standardized"]),
        head_dim=params["head_dim"],
        layout="half",
        max_position_embeddings=params["max_position_embeddings"],
        original_max_position_embeddings=params.get("original_max_position_embeddings_top_level"),
    )
    return params, arrays, spec


def _torch_matches_recording():
    """Skip unless this torch is the one that recorded the fixtures (same version, AVX-512 CPU).

    torch's float32 pow/cos/sin come from SLEEF/MKL/glibc kernels chosen by CPU
    capability; bit parity with a recording holds for the same build and capability.
    """
    torch = pytest.importorskip("torch", reason="libm='torch' needs torch (pip install torch==2.13.0)")
    recorded = MANIFEST.get("versions", {}).get("torch")
    if torch.__version__ != recorded:
        pytest.skip(f"fixtures recorded with torch {recorded}, this is {torch.__version__}")
    cap = torch.backends.cpu.get_cpu_capability()
    if cap != "AVX512":
        pytest.skip(f"fixtures recorded on an AVX512 CPU; this torch runs its {cap} kernels")
    return torch


# --------------------------------------------------------------------------- recorded fixtures


@pytest.mark.parametrize("case", _hf_cases("inv_freq"))
def test_inv_freq_exact_libm_within_one_ulp_of_hf(case):
    params, arrays, kw = _hf_case(case)
    r, base, scaling, seq_len = kw.rotary_dim, kw.base, kw.scaling, params["seq_len"]
    if isinstance(scaling, DynamicNTK) and seq_len and seq_len > scaling.original_max_position:
        # The recorded call passed a Python int seq_len: HF's init path computes the larger
        # base in Python float64 (the forward pass uses float32: tested with the apply cases).
        f, L0 = scaling.factor, scaling.original_max_position
        base = base * ((f * seq_len / L0) - (f - 1)) ** (r / (r - 2))
        scaling, seq_len = None, None
    ours, attention = P.hf_inv_freq(r, base=base, scaling=scaling, seq_len=seq_len)
    theirs = arrays["inv_freq"]
    assert ours.dtype == np.float32 and ours.shape == theirs.shape
    assert attention == float(arrays["attention_factor"])
    d = ulps32(ours, theirs)
    # torch's pow is SLEEF/glibc (<= 1 ulp); ours is correctly rounded: <= 1 ulp apart before
    # the scaling's float32 operations, which can carry it to one more ulp.
    assert d.max() <= 2, f"{case}: {d.tolist()}"
    assert np.mean(d == 0) >= 0.9


@pytest.mark.parametrize("case", _hf_cases("inv_freq"))
def test_inv_freq_torch_libm_bit_identical_to_hf(case):
    _torch_matches_recording()
    params, arrays, kw = _hf_case(case)
    r, base, scaling, seq_len = kw.rotary_dim, kw.base, kw.scaling, params["seq_len"]
    if isinstance(scaling, DynamicNTK) and seq_len and seq_len > scaling.original_max_position:
        f, L0 = scaling.factor, scaling.original_max_position
        base = base * ((f * seq_len / L0) - (f - 1)) ** (r / (r - 2))
        scaling, seq_len = None, None
    ours, _ = P.hf_inv_freq(r, base=base, scaling=scaling, seq_len=seq_len, libm="torch")
    np.testing.assert_array_equal(ours, arrays["inv_freq"])


def _apply_inputs(case: str):
    params, arrays, kw = _hf_case(case)
    pos = arrays["position_ids"][:, None, :]  # [batch, 1, seq] against q [batch, heads, seq, dim]
    return params, arrays, kw, pos


@pytest.mark.parametrize("case", _hf_cases("apply"))
def test_forward_torch_libm_bit_identical_to_hf(case):
    _torch_matches_recording()
    params, arrays, kw, pos = _apply_inputs(case)
    for name in ("q", "k"):
        out = P.hf(arrays[name], pos, dtype="float32", libm="torch", spec=kw)
        np.testing.assert_array_equal(out, arrays[name + "_out"], err_msg=f"{case}/{name}")


@pytest.mark.parametrize("case", _hf_cases("apply"))
def test_forward_exact_libm_differs_from_hf_only_by_libm_rounding(case):
    params, arrays, kw, pos = _apply_inputs(case)
    inv_ours, a = P.hf_inv_freq(spec=kw, seq_len=params["seq_len"])
    k = int(ulps32(inv_ours, arrays["inv_freq"]).max())  # frequency ulps apart (pow's rounding)
    r = kw.rotary_dim
    for name in ("q", "k"):
        x = arrays[name].astype(np.float64)
        ours = P.hf(arrays[name], pos, dtype="float32", spec=kw).astype(np.float64)
        theirs = arrays[name + "_out"].astype(np.float64)
        # Phases: k ulps of frequency plus the two products' roundings; cos, sin: <= 1 ulp each
        # side (2^-23 between them); then the attention factor, products and sum: <= 2 ulps of
        # the output between the two roundings.
        phase = np.abs(pos.astype(np.float64))[..., None] * inv_ours.astype(np.float64)
        xa, xb = np.abs(x[..., : r // 2]), np.abs(x[..., r // 2 : r])
        pair = a * (xa + xb) * ((k + 1) * 2.0**-23 * phase + 2.0**-21)
        tol = np.concatenate([pair, pair], axis=-1) + 2.0**-22 * np.abs(theirs[..., :r])
        diff = np.abs(ours[..., :r] - theirs[..., :r])
        assert np.all(diff <= tol), f"{case}/{name}: worst {np.max(diff / tol):.3g}x the libm bound"
        np.testing.assert_array_equal(ours[..., r:], theirs[..., r:])  # pass-through bits
        assert np.mean(ours == theirs) >= 0.85


def _meta(name: str):
    entry = MANIFEST.get("files", {}).get("meta_llama.npz")
    if entry is None:
        pytest.skip("fixture meta_llama.npz absent")
    with np.load(FIXTURES / "meta_llama.npz") as z:
        return {k[len(name) + 1 :]: z[k] for k in z.files if k.startswith(name + "/")}, entry["cases"][name]


LLAMA31 = Llama3(8.0, 8192, low_freq_factor=1.0, high_freq_factor=4.0)


@pytest.mark.parametrize("case", ["apply_plain", "apply_scaled"])
def test_meta_exact_libm_against_llama_models(case):
    arrays, params = _meta(case)
    scaling = LLAMA31 if params["scaling"] else None
    pos = arrays["positions"][None, :, None]  # x: [batch, seq, heads, dim]
    inv, _ = P.hf_inv_freq(128, base=500000.0, scaling=scaling)  # bit-identical to Meta's (test below)
    phase = np.abs(pos.astype(np.float64))[..., None] * inv.astype(np.float64)
    for name, key in (("xq", "q_out"), ("xk", "k_out")):
        ours = P.meta(arrays[name], pos, base=500000.0, scaling=scaling)
        assert ours.dtype == np.float32
        x = arrays[name].astype(np.float64)
        # same frequencies and phases; glibc's cosf/sinf (torch.polar) within 1 ulp of ours,
        # then two products and a sum rounded on both sides
        pair = (np.abs(x[..., 0::2]) + np.abs(x[..., 1::2])) * (2.0**-23 * phase + 2.0**-21)
        tol = np.repeat(pair, 2, axis=-1) + 2.0**-22 * np.abs(arrays[key])
        assert np.all(np.abs(ours - arrays[key]) <= tol)
        assert np.mean(ours == arrays[key]) >= 0.95


@pytest.mark.parametrize("case", ["apply_plain", "apply_scaled", "freqs_cis_plain", "freqs_cis_scaled"])
def test_meta_torch_libm_bit_identical_to_llama_models(case):
    _torch_matches_recording()
    arrays, params = _meta(case)
    scaling = LLAMA31 if params["scaling"] else None
    if case.startswith("apply"):
        pos = arrays["positions"][None, :, None]
        np.testing.assert_array_equal(P.meta(arrays["xq"], pos, base=500000.0, scaling=scaling, libm="torch"),
                                      arrays["q_out"])
    else:
        # freqs_cis rows are (cos, sin) of each position: rotate (1, 0) pairs to read them out
        rows = arrays["rows"]
        ones = np.tile(np.array([1.0, 0.0], dtype=np.float32), 64)[None, :].repeat(len(rows), 0)
        out = P.meta(ones, rows, base=500000.0, scaling=scaling, libm="torch")
        np.testing.assert_array_equal(out[:, 0::2] + 1j * out[:, 1::2], arrays["freqs_cis"])


def test_meta_apply_scaling_bit_identical():
    arrays, _ = _meta("apply_scaling")
    # Meta's float32 apply_scaling on its own float32 frequencies: no libm involved.
    ours, _ = P.hf_inv_freq(128, base=500000.0, scaling=LLAMA31)
    np.testing.assert_array_equal(P.hf_inv_freq(128, base=500000.0)[0], arrays["freqs"])
    np.testing.assert_array_equal(ours, arrays["scaled"])


# --------------------------------------------------------------------------- HF typed in torch


def _torch():
    return pytest.importorskip("torch", reason="torch is optional (pip install torch==2.13.0)")


def _hf_in_torch(torch, q, position_ids, inv_freq, attention, rotary_dim, layout):
    """transformers' rotary forward and apply_rotary_pos_emb (v5), typed here from its definition."""
    freqs = position_ids[..., None].float() * inv_freq
    if layout == "half":
        emb = torch.cat((freqs, freqs), dim=-1)
    else:
        emb = torch.repeat_interleave(freqs, 2, dim=-1)
    cos = (emb.cos() * attention).to(q.dtype)[:, None]
    sin = (emb.sin() * attention).to(q.dtype)[:, None]
    q_rot, q_pass = q[..., :rotary_dim], q[..., rotary_dim:]
    if layout == "half":
        h = rotary_dim // 2
        rotated = torch.cat((-q_rot[..., h:], q_rot[..., :h]), dim=-1)
    else:
        rotated = torch.stack((-q_rot[..., 1::2], q_rot[..., 0::2]), dim=-1).flatten(-2)
    return torch.cat([q_rot * cos + rotated * sin, q_pass], dim=-1)


def _hf_inv_freq_in_torch(torch, r, base, scaling):
    inv = 1.0 / (base ** (torch.arange(0, r, 2, dtype=torch.int64).float() / r))
    if isinstance(scaling, Llama3):
        wavelen = 2 * math.pi / inv
        lo_w = scaling.original_max_position / scaling.low_freq_factor
        hi_w = scaling.original_max_position / scaling.high_freq_factor
        scaled = torch.where(wavelen > lo_w, inv / scaling.factor, inv)
        smooth = (scaling.original_max_position / wavelen - scaling.low_freq_factor) / (
            scaling.high_freq_factor - scaling.low_freq_factor
        )
        blended = (1 - smooth) * scaled / scaling.factor + smooth * scaled
        inv = torch.where(~(wavelen < hi_w) * ~(wavelen > lo_w), blended, scaled)
    elif isinstance(scaling, YaRN):
        pos_freqs = base ** (torch.arange(0, r, 2).float() / r)
        low, high = scaling.correction_range(r, base)
        if low == high:
            high += 0.001
        ramp = torch.clamp((torch.arange(r // 2, dtype=torch.float32) - low) / (high - low), 0, 1)
        keep = 1 - ramp
        inv = (1.0 / (scaling.factor * pos_freqs)) * (1 - keep) + (1.0 / pos_freqs) * keep
    return inv


@pytest.mark.torch
@pytest.mark.parametrize(
    "scaling",
    [
        LLAMA31,
        Llama3(32.0, 8192, high_freq_factor=2.0),
        Llama3(8.0, 3000),
        YaRN(4.0, 32768),
        YaRN(40.0, 4096, mscale=1.0, mscale_all_dim=1.0),
        YaRN(32.0, 4096, truncate=False),
        YaRN(16.0, 2048, beta_fast=16.0, beta_slow=2.0),
    ],
)
def test_scaled_inv_freq_bit_identical_over_configs(scaling):
    # Grids of head dims and bases: the order of HF's float32 operations matters (``c / t``
    # is ``t.reciprocal() * c`` in torch), and a wrong order shows in some of these.
    torch = _torch()
    for base in (10000.0, 500000.0, 75000.0, 1e6):
        for d in range(16, 264, 24):
            ref = _hf_inv_freq_in_torch(torch, d, base, scaling).numpy()
            ours, _ = P.hf_inv_freq(d, base=base, scaling=scaling, libm="torch")
            np.testing.assert_array_equal(ours, ref, err_msg=f"base {base}, dim {d}")


TORCH_DTYPES = ["bfloat16", "float16", "float32"]
# (base, head_dim, rotary_dim, layout, scaling): Llama 3.1, Qwen2 with a non-power-of-two
# head, YaRN with its attention factor, GPT-NeoX's partial rotary, GPT-J's interleaved slice.
TORCH_CASES = [
    (500000.0, 128, 128, "half", LLAMA31),
    (1000000.0, 80, 80, "half", None),
    (1000000.0, 128, 128, "half", YaRN(4.0, 32768)),
    (10000.0, 96, 24, "half", None),
    (10000.0, 256, 64, "interleaved", None),
]


@pytest.mark.torch
@pytest.mark.parametrize("dtype", TORCH_DTYPES)
@pytest.mark.parametrize("base, d, r, layout, scaling", TORCH_CASES)
def test_hf_bit_identical_to_hf_algorithm_in_torch(dtype, base, d, r, layout, scaling):
    torch = _torch()
    tdt = getattr(torch, dtype)
    rng = np.random.default_rng(d + r)
    q = torch.from_numpy(rng.standard_normal((2, 3, 8, d)).astype(np.float32)).to(tdt)
    pos = np.sort(rng.integers(0, 131072, (2, 8)), axis=-1)
    pos[0, :5] = [0, 1, 8191, 65535, 131071]
    inv = _hf_inv_freq_in_torch(torch, r, base, scaling)
    attention = 1.0 if scaling is None else scaling.attention_factor
    with torch.no_grad():
        ref = _hf_in_torch(torch, q, torch.from_numpy(pos), inv, attention, r, layout).float().numpy()
    ours = P.hf(q, pos[:, None, :], layout=layout, dtype=dtype, base=base, rotary_dim=r, scaling=scaling,
                libm="torch")
    assert ours.dtype == P._resolve_dtype(dtype)
    np.testing.assert_array_equal(ours.astype(np.float32), ref)
    exact = P.hf(q, pos[:, None, :], layout=layout, dtype=dtype, base=base, rotary_dim=r, scaling=scaling)
    same = np.mean(exact.astype(np.float32) == ref)
    # Correctly rounded transcendentals agree with torch's after rounding to the model dtype
    # except near a rounding boundary; float32 keeps their one-ulp differences.
    assert same >= (0.9 if dtype == "float32" else 0.98), same
    if layout == "interleaved" and scaling is None and base == 10000.0:
        np.testing.assert_array_equal(P.gptj(q, pos[:, None, :], dtype=dtype, rotary_dim=r, libm="torch")
                                      .astype(np.float32), ref)


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["bfloat16", "float32"])
def test_meta_bit_identical_to_meta_algorithm_in_torch(dtype):
    torch = _torch()
    tdt = getattr(torch, dtype)
    rng = np.random.default_rng(7)
    d, start = 128, 120000
    xq = torch.from_numpy(rng.standard_normal((2, 6, 4, d)).astype(np.float32)).to(tdt)
    freqs = 1.0 / (500000.0 ** (torch.arange(0, d, 2)[: d // 2].float() / d))
    t = torch.arange(start, start + 6, dtype=torch.float32)
    fc = torch.polar(torch.ones(6, d // 2), torch.outer(t, freqs))
    with torch.no_grad():
        z = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2)) * fc[None, :, None, :]
        ref = torch.view_as_real(z).flatten(3).type_as(xq).float().numpy()
    pos = np.arange(start, start + 6)[None, :, None]
    np.testing.assert_array_equal(P.meta(xq, pos, base=500000.0, libm="torch").astype(np.float32), ref)


# --------------------------------------------------------------------------- identities


def test_inv_freq_hand_values():
    f, a = P.hf_inv_freq(8, base=10000.0)
    # exponents 0, 1/4, 1/2, 3/4 are exact and 10000 ** them are exact integers
    assert f.tolist() == [1.0, float(np.float32(0.1)), float(np.float32(0.01)), float(np.float32(0.001))]
    assert a == 1.0


@pytest.mark.parametrize("base", [10000.0, 500000.0, 1000000.0, 150000.0, 12345.678])
def test_inv_freq_is_correctly_rounded_pow(base):
    # Independent route: float64 pow of the float32 operands, rounded once to float32 (wrong
    # only within 2^-29 of a tie); then the float32 reciprocal.
    for d in (64, 80, 96, 128, 256):
        e = np.arange(0, d, 2).astype(np.float32) / np.float32(d)
        p = (np.float64(np.float32(base)) ** e.astype(np.float64)).astype(np.float32)
        np.testing.assert_array_equal(P.hf_inv_freq(d, base=base)[0], np.float32(1.0) / p)


def test_layouts_are_a_permutation_bit_for_bit():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 5, 64)).astype(ml_dtypes.bfloat16)
    pos = np.array([0, 1, 4097, 65535, 131071])
    half = P.hf(x, pos, layout="half", scaling=YaRN(4.0, 4096), base=1e6)
    x_int = rope.convert_layout(x, src="half", dst="interleaved")
    inter = P.hf(x_int, pos, layout="interleaved", scaling=YaRN(4.0, 4096), base=1e6)
    assert (rope.convert_layout(half, src="half", dst="interleaved") == inter).all()


def test_partial_rotary_passes_features_through():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((4, 96)).astype(np.float16)
    out = P.hf(x, [0, 5, 900, 2047], rotary_dim=24)
    assert out.dtype == np.float16
    assert (out[:, 24:] == x[:, 24:]).all()
    assert not (out[1:, :24] == x[1:, :24]).all()


def test_meta_float32_is_hf_interleaved_float32():
    # (a + ib)(c + is): real fl(fl(ac) - fl(bs)), imaginary fl(fl(as) + fl(bc)) is exactly HF's
    # x*cos + rotate_every_two(x)*sin in float32, pair by pair.
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 7, 64)).astype(np.float32)
    pos = np.array([0, 1, 2, 8191, 8192, 65535, 131071])
    for scaling in (None, LLAMA31):
        m = P.meta(x, pos, base=500000.0, scaling=scaling)
        h = P.hf(x, pos, layout="interleaved", dtype="float32", base=500000.0, scaling=scaling)
        assert (m == h).all()


def test_meta_bfloat16_keeps_float32_products():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((4, 8, 64)).astype(ml_dtypes.bfloat16)
    pos = np.arange(1000, 1008)
    m = P.meta(x, pos, base=500000.0)
    assert m.dtype == ml_dtypes.bfloat16
    via32 = P.hf(x.astype(np.float32), pos, layout="interleaved", dtype="float32", base=500000.0)
    assert (m == via32.astype(ml_dtypes.bfloat16)).all()  # products in float32, one rounding at the end
    hf16 = P.hf(x, pos, layout="interleaved", base=500000.0)  # HF: cos/sin and products in bfloat16
    assert (hf16 != m).any()


def test_gptj_is_hf_interleaved():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 4, 256)).astype(np.float16)
    pos = np.array([0, 3, 2047, 9000])
    assert (P.gptj(x, pos, rotary_dim=64) == P.hf(x, pos, layout="interleaved", rotary_dim=64)).all()


@pytest.mark.parametrize(
    "scaling, seq_len",
    [
        (None, None),
        (Linear(4.0), None),
        (YaRN(40.0, 4096, mscale=1.0, mscale_all_dim=0.5), None),
        (LongRoPE(np.linspace(1, 1.5, 32), np.linspace(1, 60, 32), 4096, max_position=131072), 131072),
        (DynamicNTK(2.0, 4096), 100000),
        (Proportional(0.5, factor=8.0), None),
        (LLAMA31, None),
    ],
)
def test_float32_pipeline_close_to_reference(scaling, seq_len):
    # An honest float32 pipeline is within float32's derived error of the float64 reference.
    rng = np.random.default_rng(6)
    x = rng.standard_normal((3, 6, 64))
    pos = np.array([0, 1, 255, 4097, 65535, 131071])
    ours = P.hf(x, pos, dtype="float32", base=10000.0, scaling=scaling, seq_len=seq_len).astype(np.float64)
    ref = rope.apply(x.astype(np.float32).astype(np.float64), pos, layout="half", base=10000.0, scaling=scaling,
                     seq_len=seq_len)
    a = 1.0 if scaling is None else scaling.attention_factor
    freq = rope.inv_freq(64, base=10000.0, scaling=scaling, seq_len=seq_len)
    phase = pos[:, None] * freq
    xa, xb = np.abs(x[..., :32]), np.abs(x[..., 32:])
    pair = a * (xa + xb) * U32 * (64 * phase + 8)
    tol = np.concatenate([pair, pair], axis=-1)
    assert np.all(np.abs(ours - ref) <= tol)
    # ...and visibly not the float64 reference: its errors grow with the position
    assert np.max(np.abs(ours - ref)[:, -1]) > 1e3 * np.max(np.abs(ours - ref)[:, 1])


def test_float64_model_dtype_rounds_cos_sin_to_float32():
    x = np.array([[1.0, 0.0]])
    out = P.hf(x, [1], dtype="float64")
    assert out.dtype == np.float64
    assert out[0, 0] == float(np.float32(math.cos(1.0))) and out[0, 1] == float(np.float32(math.sin(1.0)))


def test_float8_model_dtype():
    x = np.array([[1.0, 0.5, -0.25, 2.0]])
    out = P.hf(x, [3], dtype="float8_e4m3fn")
    assert out.dtype == ml_dtypes.float8_e4m3fn
    ref = rope.apply(x, [3], layout="half")
    assert np.max(np.abs(out.astype(np.float64) - ref)) <= 3 * 2.0**-3 * 2  # a few e4m3 ulps of |x| <= 2


@pytest.mark.torch
def test_torch_bfloat16_input_accepted():
    torch = _torch()
    q = torch.tensor([[1.0, 2.0, 3.0, 4.0]], dtype=torch.bfloat16)
    out = P.hf(q, [5])
    assert out.dtype == ml_dtypes.bfloat16
    assert (out == P.hf(np.array([[1.0, 2.0, 3.0, 4.0]], dtype=ml_dtypes.bfloat16), [5])).all()


def test_default_seq_len_is_max_position_plus_one():
    s = LongRoPE([1.0] * 4, [8.0] * 4, 100, factor=4.0)
    x = np.ones((2, 8), dtype=np.float32)
    short = P.hf(x, [0, 99], scaling=s)  # max + 1 = 100 <= 100: short factors
    long = P.hf(x, [0, 100], scaling=s)  # 101 > 100: long factors for every position
    assert (short[0] == long[0]).all()  # position 0 is the identity either way
    assert (P.hf(x, [0, 100], scaling=s, seq_len=100)[1] != long[1]).any()


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        ({"dtype": "float128"}, ValueError, "dtype"),
        ({"dtype": 3}, TypeError, "dtype"),
        ({"layout": "diagonal"}, ValueError, "layout"),
        ({"libm": "glibc"}, ValueError, "libm"),
        ({"base": -1.0}, ValueError, "base"),
        ({"rotary_dim": 3}, ValueError, "rotary_dim"),
        ({"scaling": NTK(2.0)}, ValueError, "scaling"),
        ({"scaling": "yarn"}, TypeError, "scaling"),
        ({"scaling": YaRN(4.0, 4096, ramp="ratio")}, ValueError, "ramp"),
        ({"seq_len": 0}, ValueError, "seq_len"),
    ],
)
def test_hf_bad_arguments(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        P.hf(np.ones((2, 8)), [0, 1], **kwargs)


@pytest.mark.parametrize(
    "x, positions, exc, match",
    [
        ([1.0, 2.0], [0], TypeError, "x must be an array"),
        (np.ones((2, 4), dtype=np.int32), [0, 1], TypeError, "x must have a real floating dtype"),
        (np.ones((2, 4)), [0.5, 1.0], TypeError, "positions must be integers"),
        (np.ones((2, 4)), [True, False], TypeError, "positions"),
        (np.ones((2, 4)), [0, 1, 2], ValueError, "positions"),
        (np.ones((2, 4)), "0", TypeError, "positions"),
    ],
)
def test_hf_bad_inputs(x, positions, exc, match):
    with pytest.raises(exc, match=match):
        P.hf(x, positions)


def test_meta_and_gptj_bad_arguments():
    with pytest.raises(TypeError, match="scaling"):
        P.meta(np.ones((1, 8)), [0], scaling=YaRN(4.0, 4096))
    with pytest.raises(ValueError, match="x.shape"):
        P.meta(np.ones((1, 7)), [0])
    with pytest.raises(ValueError, match="rotary_dim"):
        P.gptj(np.ones((1, 8)), [0], rotary_dim=10)
    with pytest.raises(ValueError, match="dim"):
        P.hf_inv_freq(7)
    with pytest.raises(ValueError, match="rotary_dim"):
        P.hf(np.ones((1, 4)), [5000], rotary_dim=2, scaling=DynamicNTK(2.0, 100))


def test_missing_optional_dependencies(monkeypatch):
    monkeypatch.setitem(sys.modules, "ml_dtypes", None)
    with pytest.raises(ImportError, match="pip install ml_dtypes"):
        P.hf(np.ones((1, 4)), [0], dtype="bfloat16")
    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(ImportError, match="pip install torch"):
        P.hf(np.ones((1, 4)), [0], libm="torch")
    assert P.hf(np.ones((1, 4), dtype=np.float32), [1]).dtype == np.float32  # float32 needs neither


def test_hf_refuses_a_base_beyond_float32_as_hf_inv_freq_does():
    # found by the fuzz campaign: base 1e300 overflowed float32 inside the emulation and gave NaN
    with pytest.raises(ValueError, match="base must be within float32's range"):
        P.hf(np.array([0.0, 0.0]), np.array(0), dtype="float32", base=1e300)
