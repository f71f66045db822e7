"""Conformance with real peer implementations, from recorded fixtures (no torch here).

``tests/fixtures/make_peer_fixtures.py`` ran Hugging Face transformers, torchtune, Meta's
``llama_models``, rotary-embedding-torch and x-transformers (versions in
``tests/fixtures/peers/manifest.json``) and stored their inputs and outputs. Each test
here feeds the same inputs to pemath and compares.

Tolerances
----------
The peers compute in float32; pemath is given the same inputs as float64 (float32 values
are exact in float64) and computes in float64, so the comparison measures the peer's
float32 error, which is bounded from the peer's own sequence of operations. With
``u32 = 2**-24`` (float32 unit roundoff: one rounding changes a value by at most a
relative ``u32``; one ulp of a value in [-1, 1] is at most ``u32`` in absolute terms)
and ``u64 = 2**-53``:

* frequencies ``1 / base ** fl(2i/d)``: the rounded exponent ``e`` (|Δe| <= e u32 <= u32)
  moves ``base**e`` by ``ln(base) u32`` relative; ``pow`` itself <= 1 ulp (2 u32);
  the reciprocal one rounding (u32); the base rounded to float32 (``e u32 <= u32``):
  ``c_pow(base) = ln(base) + 4`` units of ``u32``, relative. Each scaling variant adds
  the roundings of its own operations (counted in :func:`freq_constant`).
* a rotation ``out = a (x_a cos φ - x_b sin φ)`` (and its partner) with the peer's phase
  ``φ' = fl(p f')``, ``|f' - f| <= C_f u32 f``: ``|φ' - φ| <= (C_f + 1) u32 |φ|``; cos
  and sin <= 2 ulp (2 u32, absolute); the two products and the sum, 3 roundings; the
  attention factor ``a`` rounded to float32 and multiplied in, 2 more. Hence per element
  ``|Δ| <= a (|x_a| + |x_b|) [u32 ((C_f + 1)|φ| + K) + u64 (|φ| + 8)]`` with
  ``K = 2 + 3 (+ 2 with an attention factor)``; the ``u64`` term bounds pemath's own
  float64 error. Features beyond ``rotary_dim`` must be copied bit-identically.

Every family also checks that a wrong answer (the other layout, positions shifted by
one, the other convention, the scaling left out) does NOT pass the same tolerance.
T5 buckets are integers: exact equality.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import math
from pathlib import Path

import numpy as np
import pytest

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "peers"
MANIFEST_PATH = FIXTURES / "manifest.json"
REGENERATE = "regenerate with /work/peers-venv/bin/python tests/fixtures/make_peer_fixtures.py"

U32 = 2.0**-24
U64 = 2.0**-53

# cos/sin of a float32 phase: <= 2 ulp of a value in [-1, 1], i.e. <= 2 u32 absolute.
K_COS_SIN = 2
# x_a * c, x_b * s and their sum: three float32 roundings.
K_ARITH = 3
# the attention factor rounded to float32, and its product with cos/sin.
K_ATTENTION = 2


def _manifest() -> dict:
    return json.loads(MANIFEST_PATH.read_text()) if MANIFEST_PATH.exists() else {}


MANIFEST = _manifest()


def cases(file: str, prefix: str = "") -> list:
    """The case names of ``file`` (starting with ``prefix``), or one skipped placeholder."""
    entry = MANIFEST.get("files", {}).get(file)
    if entry is None:
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"fixture {file} absent; {REGENERATE}"))]
    return [c for c in sorted(entry["cases"]) if c.startswith(prefix)]


def load(file: str, case: str) -> tuple[dict, dict]:
    """The parameters and arrays of one case (skips if the fixture file is absent)."""
    path = FIXTURES / file
    if not path.exists() or file not in MANIFEST.get("files", {}):
        pytest.skip(f"fixture {file} absent; {REGENERATE}")
    params = MANIFEST["files"][file]["cases"][case]
    with np.load(path) as z:
        arrays = {k[len(case) + 1 :]: z[k] for k in z.files if k.startswith(case + "/")}
    return params, arrays


def pm(name: str):
    return importlib.import_module(f"pemath.{name}")


# --------------------------------------------------------------------------- tolerance helpers


def c_pow(base: float) -> float:
    """Relative error (in u32) of a float32 ``1 / base ** fl(2i/d)`` (module docstring)."""
    return math.log(base) + 4


def freq_constant(scaling, base: float, dim: int, *, seq_len=None, forward=False) -> float:
    """``C_f``: the peer's float32 frequency error, relative, in units of u32.

    Counts the float32 roundings HF / torchtune / Meta / lucidrains perform after
    ``1 / base ** fl(2i/d)`` (``c_pow``) for each scaling variant.
    """
    sc = pm("scaling")
    if scaling is None:
        return c_pow(base)
    if isinstance(scaling, (sc.Linear, sc.Proportional)):
        return c_pow(base) + 1  # one division by the factor
    if isinstance(scaling, sc.NTK):
        return c_pow(scaling.scaled_base(dim, base))  # the larger base, rounded to float32 (in c_pow)
    if isinstance(scaling, sc.DynamicNTK):
        # HF's forward computes the scaled base in float32 from a tensor seq_len:
        # factor*L (1), /L0 (1), -(factor-1) (1, magnified by (factor L/L0)/result <= 2 here),
        # ** (d/(d-2)) (pow 2, inputs' error times d/(d-2) <= 1.1), base * (1): <= 8 u32 on the
        # base, which moves base**-e by e * 8 u32 <= 8 u32. The init function computes the
        # base in Python float64 (one float32 rounding, already in c_pow).
        return c_pow(scaling.scaled_base(dim, base, seq_len)) + (8 if forward else 0)
    if isinstance(scaling, sc.YaRN):
        # interpolation 1/(factor * base**e): +1 rounding; the blend (1 - γ) (1), two products
        # and a sum (3); and the ramp γ = clamp((i - low)/(high - low)) in float32: low, high
        # rounded to float32, a subtraction in numerator and denominator and a division give
        # |Δγ| <= u32 ((|h| + |l|)/(h - l) + 2 + |l|/(h - l)); Δγ moves the frequency by at most
        # |θ - θ/s| Δγ <= θ Δγ.
        low, high = scaling.correction_range(dim, base)
        if low == high:
            high += 0.001
        d_gamma = (abs(high) + abs(low)) / (high - low) + 2 + abs(low) / (high - low)
        return c_pow(base) + 5 + d_gamma
    if isinstance(scaling, sc.LongRoPE):
        return c_pow(base) + 2  # the factor rounded to float32, its product with base**e
    if isinstance(scaling, sc.Llama3):
        # wavelen = fl(2π)/f (+2), L0/wavelen (+1), -l and /(h-l) (+2): the smoothing weight s is
        # off by Δs <= h/(h-l) (C + 5) u32 (L0/wavelen <= h in the blended band); the blend
        # (1-s) f/s' + s f adds (1) + (1) + 3 roundings and Δs * f. Branches agree at the band
        # edges, so a flipped comparison costs no more.
        h, lo = scaling.high_freq_factor, scaling.low_freq_factor
        return (1 + h / (h - lo)) * (c_pow(base) + 5)
    raise AssertionError(f"no tolerance derived for {scaling!r}")


def split(x: np.ndarray, layout: str, r: int) -> tuple[np.ndarray, np.ndarray]:
    """The two members of each rotated pair (the layout's definition), each (..., r/2)."""
    if layout == "half":
        return x[..., : r // 2], x[..., r // 2 : r]
    return x[..., 0:r:2], x[..., 1:r:2]


def per_feature(pair_values: np.ndarray, layout: str) -> np.ndarray:
    """A per-pair array (..., r/2) laid out over the r rotated features."""
    if layout == "half":
        return np.concatenate([pair_values, pair_values], axis=-1)
    return np.repeat(pair_values, 2, axis=-1)


def rope_tolerance(x, positions, freq, layout, r, *, c_freq, attention=1.0) -> np.ndarray:
    """Per-element bound on |peer - exact| for a float32 rotation (module docstring).

    ``positions`` broadcasts against ``x.shape[:-1]``; ``freq`` is pemath's float64
    frequency per pair. Features beyond ``r`` get 0 (must be bit-identical).
    """
    xa, xb = split(np.abs(x.astype(np.float64)), layout, r)
    phase = np.abs(np.asarray(positions, dtype=np.float64))[..., None] * freq
    k = K_COS_SIN + K_ARITH + (K_ATTENTION if attention != 1.0 else 0)
    pair = attention * (xa + xb) * (U32 * ((c_freq + 1) * phase + k) + U64 * (phase + 8))
    tol = np.zeros(x.shape, dtype=np.float64)
    tol[..., :r] = per_feature(pair, layout)
    return tol


def excess(actual, expected, tol) -> tuple[float, str]:
    """max |actual - expected| / tol (inf where tol is 0 and they differ) and a description."""
    actual = np.asarray(actual, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    tol = np.broadcast_to(np.asarray(tol, dtype=np.float64), expected.shape)
    assert actual.shape == expected.shape, f"shape {actual.shape} != {expected.shape}"
    err = np.abs(actual - expected)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(tol > 0, err / np.where(tol > 0, tol, 1), np.where(err > 0, np.inf, 0.0))
    if ratio.size == 0:
        return 0.0, "empty"
    i = np.unravel_index(int(np.argmax(ratio)), ratio.shape)
    return float(ratio[i]), (
        f"worst at {tuple(int(v) for v in i)}: got {actual[i]!r}, peer {expected[i]!r}, "
        f"|Δ| = {err[i]:.3e}, tolerance {tol[i]:.3e}; max |Δ| overall {err.max():.3e}"
    )


def assert_within(actual, expected, tol, what: str) -> None:
    r, msg = excess(actual, expected, tol)
    assert r <= 1.0, f"{what}: error {r:.3g}x the derived tolerance; {msg}"


def assert_outside(actual, expected, tol, what: str) -> None:
    r, msg = excess(actual, expected, tol)
    assert r > 1.0, f"sanity: {what} should NOT match the peer within the tolerance, but does ({msg})"


def test_manifest_matches_files():
    if not MANIFEST:
        pytest.skip(f"no manifest; {REGENERATE}")
    for file, entry in MANIFEST["files"].items():
        path = FIXTURES / file
        assert path.exists(), f"{file} listed in the manifest is missing"
        assert hashlib.sha256(path.read_bytes()).hexdigest() == entry["sha256"], f"{file} changed since recorded"
    total = sum(p.stat().st_size for p in FIXTURES.iterdir())
    assert total < 2 * 2**20, f"fixtures take {total} bytes; keep them small"


# --------------------------------------------------------------------------- HF RoPE


def hf_scaling(name: str, params: dict):
    """The pemath scaling for an HF case, written out by hand from the recorded parameters."""
    sc = pm("scaling")
    p = params["rope_parameters_given"]
    table = {
        "default_theta1e4_d64": lambda: None,
        "default_theta5e5_d128": lambda: None,
        "llama_default_d64": lambda: None,
        "neox_partial_quarter": lambda: None,
        "linear_f4_d128": lambda: sc.Linear(4.0),
        "llama_linear_f4": lambda: sc.Linear(4.0),
        "linear_f2_partial_half": lambda: sc.Linear(2.0),
        "dynamic_f2_above": lambda: sc.DynamicNTK(2.0, 2048),
        "dynamic_f2_below": lambda: sc.DynamicNTK(2.0, 2048),
        "llama_dynamic_f2_above": lambda: sc.DynamicNTK(2.0, 2048),
        "yarn_qwen25_f4": lambda: sc.YaRN(4.0, 32768),
        "llama_yarn_qwen25_f4": lambda: sc.YaRN(4.0, 32768),
        "yarn_deepseek_v3": lambda: sc.YaRN(40.0, 4096, beta_fast=32, beta_slow=1, mscale=1.0, mscale_all_dim=1.0),
        "yarn_mscale_unequal": lambda: sc.YaRN(40.0, 4096, mscale=1.0, mscale_all_dim=0.5),
        "llama_yarn_mscale_unequal": lambda: sc.YaRN(40.0, 4096, mscale=1.0, mscale_all_dim=0.5),
        "yarn_gptoss_notruncate": lambda: sc.YaRN(32.0, 4096, truncate=False),
        # Phi-3: factor absent, so the attention factor comes from 131072 / 4096.
        "longrope_phi3_short": lambda: sc.LongRoPE(p["short_factor"], p["long_factor"], 4096, max_position=131072),
        "longrope_phi3_long": lambda: sc.LongRoPE(p["short_factor"], p["long_factor"], 4096, max_position=131072),
        "phi3_longrope_short": lambda: sc.LongRoPE(p["short_factor"], p["long_factor"], 4096, max_position=131072),
        "phi3_longrope_long": lambda: sc.LongRoPE(p["short_factor"], p["long_factor"], 4096, max_position=131072),
        "llama3_llama31_8b": lambda: sc.Llama3(8.0, 8192, low_freq_factor=1.0, high_freq_factor=4.0),
        "llama_llama31_8b": lambda: sc.Llama3(8.0, 8192, low_freq_factor=1.0, high_freq_factor=4.0),
        "proportional_quarter": lambda: sc.Proportional(0.25),
        "proportional_half_f8": lambda: sc.Proportional(0.5, factor=8.0),
    }
    return table[name.split("/", 1)[1]]()


def hf_from_hf(params: dict, which: str):
    rope = pm("rope")
    return rope.from_hf(
        params[which],
        head_dim=params["head_dim"],
        layout="half",
        max_position_embeddings=params["max_position_embeddings"],
        original_max_position_embeddings=params["original_max_position_embeddings_top_level"],
    )


def attention_tol(a: float) -> float:
    # HF and pemath both evaluate log/sqrt/ratios in float64: a handful of roundings each.
    return 8 * U64 * abs(a)


@pytest.mark.parametrize("case", cases("hf_rope.npz", "inv_freq/"))
def test_hf_inv_freq(case):
    params, arr = load("hf_rope.npz", case)
    rope = pm("rope")
    scaling = hf_scaling(case, params)
    r, base, seq_len = params["rotary_dim"], params["base"], params["seq_len"]
    ref = rope.inv_freq(r, base=base, scaling=scaling, seq_len=seq_len)
    c = freq_constant(scaling, base, r, seq_len=seq_len)
    assert_within(ref, arr["inv_freq"], c * U32 * np.abs(ref), f"{case} inv_freq (C_f = {c:.1f})")
    a = 1.0 if scaling is None else scaling.attention_factor
    assert abs(a - float(arr["attention_factor"])) <= attention_tol(a), (case, a, float(arr["attention_factor"]))


@pytest.mark.parametrize("which", ["rope_parameters_given", "rope_parameters_standardized"])
@pytest.mark.parametrize("case", cases("hf_rope.npz", "inv_freq/"))
def test_hf_inv_freq_through_from_hf(case, which):
    """pemath.rope.from_hf reads the same dict HF read, and gives HF's numbers."""
    params, arr = load("hf_rope.npz", case)
    rope = pm("rope")
    spec = hf_from_hf(params, which)
    assert spec.base == params["base"]
    assert spec.rotary_dim == params["rotary_dim"]
    ref = rope.inv_freq(spec=spec, seq_len=params["seq_len"])
    c = freq_constant(spec.scaling, spec.base, spec.rotary_dim, seq_len=params["seq_len"])
    assert_within(ref, arr["inv_freq"], c * U32 * np.abs(ref), f"{case} via from_hf({which})")
    a = spec.attention_factor
    assert abs(a - float(arr["attention_factor"])) <= attention_tol(a)


def test_hf_inv_freq_tolerance_rejects_wrong_answers():
    """Sanity: the tolerances above separate neighbouring variants."""
    rope, sc = pm("rope"), pm("scaling")

    def check_fails(case, scaling, *, dim=None, seq_len="same", what=""):
        params, arr = load("hf_rope.npz", case)
        r = params["rotary_dim"] if dim is None else dim
        sl = params["seq_len"] if seq_len == "same" else seq_len
        good = hf_scaling(case, params)
        c = freq_constant(good, params["base"], params["rotary_dim"], seq_len=params["seq_len"])
        wrong = rope.inv_freq(r, base=params["base"], scaling=scaling, seq_len=sl)[: arr["inv_freq"].shape[0]]
        assert_outside(wrong, arr["inv_freq"], c * U32 * np.abs(wrong), f"{case}: {what}")

    check_fails("inv_freq/default_theta5e5_d128", None, dim=130, what="the rotary dim off by one pair")
    check_fails("inv_freq/llama3_llama31_8b", None, what="Llama 3 scaling left out")
    check_fails("inv_freq/yarn_gptoss_notruncate", sc.YaRN(32.0, 4096, truncate=True), what="truncate=True")
    check_fails("inv_freq/yarn_qwen25_f4", sc.YaRN(4.0, 32768, ramp="ratio"), what="the paper's ratio ramp")
    check_fails("inv_freq/dynamic_f2_above", sc.DynamicNTK(2.0, 2048), seq_len=None, what="seq_len ignored")
    params, _ = load("hf_rope.npz", "inv_freq/longrope_phi3_long")
    check_fails("inv_freq/longrope_phi3_long", hf_scaling("inv_freq/longrope_phi3_long", params), seq_len=4096,
                what="short factors at seq_len = original")
    check_fails("inv_freq/proportional_quarter", sc.Proportional(0.5), what="twice the kept fraction")
    # and the attention factors: DeepSeek's mscale ratio vs YaRN's plain 0.1 ln s + 1
    params, arr = load("hf_rope.npz", "inv_freq/yarn_mscale_unequal")
    plain = sc.YaRN(40.0, 4096).attention_factor
    assert abs(plain - float(arr["attention_factor"])) > attention_tol(plain)


def _hf_apply(params, arr, scaling, *, layout="half", shift=0, rotary_dim="same"):
    rope = pm("rope")
    pos = arr["position_ids"][:, None, :] + shift  # [batch, 1, seq] against q's [batch, heads, seq]
    r = params["rotary_dim"] if rotary_dim == "same" else rotary_dim
    kw = dict(layout=layout, base=params["base"], rotary_dim=r, scaling=scaling, seq_len=params["seq_len"])
    q = rope.apply(arr["q"].astype(np.float64), pos, **kw)
    k = rope.apply(arr["k"].astype(np.float64), pos, **kw)
    return q, k


def _hf_apply_tol(params, arr, scaling, x):
    rope = pm("rope")
    r, base = params["rotary_dim"], params["base"]
    freq = rope.inv_freq(r, base=base, scaling=scaling, seq_len=params["seq_len"])
    c = freq_constant(scaling, base, r, seq_len=params["seq_len"], forward=True)
    a = 1.0 if scaling is None else scaling.attention_factor
    return rope_tolerance(x, arr["position_ids"][:, None, :], freq, "half", r, c_freq=c, attention=a)


@pytest.mark.parametrize("case", cases("hf_rope.npz", "apply/"))
def test_hf_apply(case):
    params, arr = load("hf_rope.npz", case)
    assert params["layout"] == "half"
    scaling = hf_scaling(case, params)
    q, k = _hf_apply(params, arr, scaling)
    assert_within(q, arr["q_out"], _hf_apply_tol(params, arr, scaling, arr["q"]), f"{case} q")
    assert_within(k, arr["k_out"], _hf_apply_tol(params, arr, scaling, arr["k"]), f"{case} k")
    # The frequencies the module actually used (after its dynamic / longrope update).
    rope = pm("rope")
    r, base = params["rotary_dim"], params["base"]
    ref = rope.inv_freq(r, base=base, scaling=scaling, seq_len=params["seq_len"])
    c = freq_constant(scaling, base, r, seq_len=params["seq_len"], forward=True)
    assert_within(ref, arr["inv_freq"], c * U32 * ref, f"{case} module inv_freq")
    r_ = params["rotary_dim"]
    if r_ < params["head_dim"]:  # GPT-NeoX partial rotary: the rest is passed through untouched
        np.testing.assert_array_equal(arr["q_out"][..., r_:], arr["q"][..., r_:])
        np.testing.assert_array_equal(q[..., r_:], arr["q"][..., r_:])


@pytest.mark.parametrize("case", cases("hf_rope.npz", "apply/"))
def test_hf_apply_through_from_hf(case):
    params, arr = load("hf_rope.npz", case)
    rope = pm("rope")
    spec = hf_from_hf(params, "rope_parameters_standardized")
    assert spec.rotary_dim == params["rotary_dim"]
    pos = arr["position_ids"][:, None, :]
    q = rope.apply(arr["q"].astype(np.float64), pos, spec=spec, seq_len=params["seq_len"])
    assert_within(q, arr["q_out"], _hf_apply_tol(params, arr, spec.scaling, arr["q"]), f"{case} q via from_hf")


def named(file: str, names: list[str]) -> list:
    """``names`` if ``file``'s fixture was recorded, else one skipped placeholder."""
    return names if file in MANIFEST.get("files", {}) else cases(file)


@pytest.mark.parametrize(
    "case",
    named(
        "hf_rope.npz",
        ["apply/llama_default_d64", "apply/llama_llama31_8b", "apply/llama_yarn_qwen25_f4",
         "apply/phi3_longrope_long", "apply/neox_partial_quarter"],
    ),
)
def test_hf_apply_tolerance_rejects_wrong_answers(case):
    params, arr = load("hf_rope.npz", case)
    scaling = hf_scaling(case, params)
    tol = _hf_apply_tol(params, arr, scaling, arr["q"])
    q, _ = _hf_apply(params, arr, scaling, layout="interleaved")
    assert_outside(q, arr["q_out"], tol, f"{case} with layout='interleaved'")
    q, _ = _hf_apply(params, arr, scaling, shift=1)
    assert_outside(q, arr["q_out"], tol, f"{case} with positions + 1")
    if scaling is not None and scaling.attention_factor != 1.0:
        sc = pm("scaling")
        if isinstance(scaling, sc.YaRN):
            no_attention = sc.YaRN(scaling.factor, scaling.original_max_position, attention_factor=1.0,
                                   mscale=scaling.mscale, mscale_all_dim=scaling.mscale_all_dim)
        else:
            p = params["rope_parameters_given"]
            no_attention = sc.LongRoPE(p["short_factor"], p["long_factor"], 4096, attention_factor=1.0)
        q, _ = _hf_apply(params, arr, no_attention)
        assert_outside(q, arr["q_out"], tol, f"{case} without the attention factor")
    if params["rotary_dim"] < params["head_dim"]:
        q, _ = _hf_apply(params, arr, scaling, rotary_dim=None)
        assert_outside(q, arr["q_out"], tol, f"{case} rotating the whole head")


# --------------------------------------------------------------------------- torchtune


def _tt_scaling(params):
    s = params["scaling"]
    if s is None:
        return None
    return pm("scaling").Llama3(s["factor"], s["original_max_position"], low_freq_factor=s["low_freq_factor"],
                                high_freq_factor=s["high_freq_factor"])


@pytest.mark.parametrize("case", cases("torchtune_rope.npz"))
def test_torchtune(case):
    params, arr = load("torchtune_rope.npz", case)
    rope = pm("rope")
    scaling = _tt_scaling(params)
    r, base = params["rotary_dim"], params["base"]
    assert params["layout"] == "interleaved"
    pos = arr["input_pos"][..., None]  # [batch, seq, 1] against x's [batch, seq, heads]
    out = rope.apply(arr["x"].astype(np.float64), pos, layout="interleaved", base=base, scaling=scaling)
    freq = rope.inv_freq(r, base=base, scaling=scaling)
    c = freq_constant(scaling, base, r)
    tol = rope_tolerance(arr["x"], pos, freq, "interleaved", r, c_freq=c)
    assert_within(out, arr["out"], tol, case)
    assert_within(freq, arr["theta"], c * U32 * freq, f"{case} theta")
    # sanity: the other layout and shifted positions are rejected
    wrong = rope.apply(arr["x"].astype(np.float64), pos, layout="half", base=base, scaling=scaling)
    assert_outside(wrong, arr["out"], tol, f"{case} with layout='half'")
    wrong = rope.apply(arr["x"].astype(np.float64), pos + 1, layout="interleaved", base=base, scaling=scaling)
    assert_outside(wrong, arr["out"], tol, f"{case} with positions + 1")


# --------------------------------------------------------------------------- Meta's llama reference


def _meta_scaling(params):
    s = params["scaling"]
    if s is None:
        return None
    return pm("scaling").Llama3(s["factor"], s["original_max_position"], low_freq_factor=s["low_freq_factor"],
                                high_freq_factor=s["high_freq_factor"])


@pytest.mark.parametrize("case", cases("meta_llama.npz", "freqs_cis"))
def test_meta_freqs_cis(case):
    params, arr = load("meta_llama.npz", case)
    rope = pm("rope")
    scaling = _meta_scaling(params)
    r, base, rows = params["rotary_dim"], params["base"], arr["rows"]
    cos, sin = rope.cos_sin(rows, r, layout="interleaved", base=base, scaling=scaling)
    cos, sin = np.asarray(cos)[..., ::2], np.asarray(sin)[..., ::2]
    freq = rope.inv_freq(r, base=base, scaling=scaling)
    phase = np.abs(rows.astype(np.float64))[:, None] * freq
    c = freq_constant(scaling, base, r)
    # cos(φ'), sin(φ') with |φ' - φ| <= (C_f + 1) u32 |φ| (outer product: one rounding), <= 2 ulp each
    tol = U32 * ((c + 1) * phase + K_COS_SIN) + U64 * (phase + 8)
    assert_within(cos, arr["freqs_cis"].real, tol, f"{case} real part")
    assert_within(sin, arr["freqs_cis"].imag, tol, f"{case} imaginary part")
    if hasattr(rope, "freqs_cis"):  # pemath's complex form of the same table
        z = np.asarray(rope.freqs_cis(rows, r, base=base, scaling=scaling))
        assert_within(z.real, arr["freqs_cis"].real, tol, f"{case} rope.freqs_cis real")
        assert_within(z.imag, arr["freqs_cis"].imag, tol, f"{case} rope.freqs_cis imag")
    # sanity: the conjugate (inverse rotation) and the other scaling are rejected
    assert_outside(-sin, arr["freqs_cis"].imag, tol, f"{case} conjugated")
    other = None if scaling is not None else pm("scaling").Llama3(8.0, 8192)
    _, s2 = rope.cos_sin(rows, r, layout="interleaved", base=base, scaling=other)
    assert_outside(np.asarray(s2)[..., ::2], arr["freqs_cis"].imag, tol, f"{case} with scaling {other!r}")


def test_meta_apply_scaling():
    params, arr = load("meta_llama.npz", "apply_scaling")
    rope = pm("rope")
    scaling = _meta_scaling(params)
    r, base = params["rotary_dim"], params["base"]
    plain = rope.inv_freq(r, base=base)
    assert_within(plain, arr["freqs"], c_pow(base) * U32 * plain, "unscaled freqs")
    ref = rope.inv_freq(r, base=base, scaling=scaling)
    c = freq_constant(scaling, base, r)
    assert_within(ref, arr["scaled"], c * U32 * ref, "apply_scaling")
    assert_outside(plain, arr["scaled"], c * U32 * plain, "unscaled vs apply_scaling")


@pytest.mark.parametrize("case", [c for c in cases("meta_llama.npz", "apply_") if c != "apply_scaling"])
def test_meta_apply_rotary_emb(case):
    params, arr = load("meta_llama.npz", case)
    rope = pm("rope")
    scaling = _meta_scaling(params)
    r, base = params["rotary_dim"], params["base"]
    pos = arr["positions"][None, :, None]  # [1, seq, 1] against [batch, seq, heads]
    freq = rope.inv_freq(r, base=base, scaling=scaling)
    c = freq_constant(scaling, base, r)
    for name in ("q", "k"):
        x = arr[f"x{name}"]
        out = rope.apply(x.astype(np.float64), pos, layout="interleaved", base=base, scaling=scaling)
        # complex64 product (a + ib)(c + id): two products and a sum per component, as K_ARITH
        tol = rope_tolerance(x, np.broadcast_to(pos, x.shape[:-1]), freq, "interleaved", r, c_freq=c)
        assert_within(out, arr[f"{name}_out"], tol, f"{case} {name}")
    x = arr["xq"]
    tol = rope_tolerance(x, np.broadcast_to(pos, x.shape[:-1]), freq, "interleaved", r, c_freq=c)
    wrong = rope.apply(x.astype(np.float64), pos, layout="half", base=base, scaling=scaling)
    assert_outside(wrong, arr["q_out"], tol, f"{case} with layout='half'")
    wrong = rope.apply(x.astype(np.float64), pos - 1, layout="interleaved", base=base, scaling=scaling)
    assert_outside(wrong, arr["q_out"], tol, f"{case} with positions - 1")


# --------------------------------------------------------------------------- rotary-embedding-torch


def _lucid_scaling(params):
    s = params["scaling"]
    if s is None:
        return None
    sc = pm("scaling")
    return sc.Linear(s["factor"]) if s["type"] == "linear" else sc.NTK(s["factor"])


@pytest.mark.parametrize("case", cases("rotary_embedding_torch.npz"))
def test_rotary_embedding_torch(case):
    params, arr = load("rotary_embedding_torch.npz", case)
    rope = pm("rope")
    scaling = _lucid_scaling(params)
    r, base, x = params["rotary_dim"], params["base"], arr["x"]
    assert params["layout"] == "interleaved"
    pos = arr["positions"]  # (seq,) against x's [batch, heads, seq]
    freq = rope.inv_freq(r, base=base, scaling=scaling)
    c = freq_constant(scaling, base, r)
    # the peer's positions (arange + offset) / interpolate_factor are exact in float32 (a power of 2)
    tol = rope_tolerance(x, np.broadcast_to(pos, x.shape[:-1]), freq, "interleaved", r, c_freq=c)
    out = rope.apply(x.astype(np.float64), pos, layout="interleaved", base=base, rotary_dim=r, scaling=scaling)
    assert_within(out, arr["out"], tol, case)
    # its `freqs` parameter: interpolate_factor divides the positions, not the frequencies
    unscaled = scaling if not isinstance(scaling, pm("scaling").Linear) else None
    f_param = rope.inv_freq(r, base=base, scaling=unscaled)
    assert_within(f_param, arr["freqs"], c * U32 * f_param, f"{case} freqs")
    if r < x.shape[-1]:
        np.testing.assert_array_equal(arr["out"][..., r:], x[..., r:])
        wrong = rope.apply(x.astype(np.float64), pos, layout="interleaved", base=base, scaling=scaling)
        assert_outside(wrong, arr["out"], tol, f"{case} rotating the whole head")
    wrong = rope.apply(x.astype(np.float64), pos, layout="half", base=base, rotary_dim=r, scaling=scaling)
    assert_outside(wrong, arr["out"], tol, f"{case} with layout='half'")
    wrong = rope.apply(x.astype(np.float64), pos + 1, layout="interleaved", base=base, rotary_dim=r, scaling=scaling)
    assert_outside(wrong, arr["out"], tol, f"{case} with positions + 1")


# --------------------------------------------------------------------------- x-transformers ALiBi


def slopes_tol(heads: int, slopes: np.ndarray) -> np.ndarray:
    """x-transformers' float64 slopes: start = 2**(-2**-(log2 n - 3)) (pow, 1 ulp = 2 u64),
    ratio**i (the start's error times i, plus pow's 2 u64), one product (u64); index i < 2n
    (the interleaved second half draws from the 2n-head list). pemath's own value <= 2 u64.
    Relative bound (2 (2n) + 7) u64."""
    return (4 * heads + 7) * U64 * np.abs(slopes)


@pytest.mark.parametrize("case", cases("x_transformers_alibi.npz", "slopes/"))
def test_alibi_slopes(case):
    params, arr = load("x_transformers_alibi.npz", case)
    alibi = pm("alibi")
    n = params["heads"]
    ref = np.asarray(alibi.slopes(n), dtype=np.float64)
    assert ref.shape == (n,)
    assert_within(ref, arr["slopes"], slopes_tol(n, ref), case)
    # the module's float32 buffer: one more rounding
    assert_within(ref, arr["slopes_buffer"], slopes_tol(n, ref) + U32 * np.abs(ref), f"{case} float32 buffer")
    # sanity: the naive geometric sequence 2**(-8 (i+1)/n) is wrong for n not a power of two
    naive = 2.0 ** (-8.0 * np.arange(1, n + 1) / n)
    if n & (n - 1):
        assert_outside(naive, arr["slopes"], slopes_tol(n, naive), f"{case} naive geometric slopes")
    else:
        assert_within(naive, arr["slopes"], slopes_tol(n, naive), f"{case} geometric slopes (power of two)")


@pytest.mark.parametrize("case", cases("x_transformers_alibi.npz", "bias/"))
def test_alibi_bias(case):
    params, arr = load("x_transformers_alibi.npz", case)
    alibi = pm("alibi")
    heads, total = params["heads"], params["total_heads"]
    s = np.asarray(alibi.slopes(heads), dtype=np.float64)
    dist = np.abs(arr["key_positions"][None, :] - arr["query_positions"][:, None]).astype(np.float64)
    expected = np.zeros(arr["bias"].shape)
    expected[:heads] = -s[:, None, None] * dist
    # float32: the slope rounded (u32) and one product (u32); padded heads exactly 0
    tol = 2 * U32 * np.abs(expected) + slopes_tol(heads, s).max() * dist.max()
    assert_within(expected, arr["bias"], tol, case)
    np.testing.assert_array_equal(arr["bias"][heads:], 0.0)
    assert_outside(-expected, arr["bias"], tol, f"{case} with the sign flipped")
    # pemath's own bias: x-transformers builds the symmetric form, queries the last q_len keys
    i, j = params["i"], params["j"]
    got = np.asarray(alibi.bias(heads, i, j, form="symmetric"), dtype=np.float64)
    assert_within(got, arr["bias"][:heads], tol[:heads], f"{case} alibi.bias(form='symmetric')")
    shifted = np.asarray(alibi.bias(heads, i, j, form="symmetric", offset=j - i - 1), dtype=np.float64)
    assert_outside(shifted, arr["bias"][:heads], tol[:heads], f"{case} with the queries one position early")


# --------------------------------------------------------------------------- T5 buckets


@pytest.mark.parametrize("case", cases("hf_t5.npz"))
def test_t5_bucket_exact(case):
    params, arr = load("hf_t5.npz", case)
    t5 = pm("t5")
    rel, peer = arr["relative_position"], arr["bucket"]
    kw = dict(num_buckets=params["num_buckets"], max_distance=params["max_distance"])
    got = np.asarray(t5.bucket(rel, bidirectional=params["bidirectional"], **kw))
    bad = np.nonzero(got != peer)[0]
    assert bad.size == 0, (
        f"{case}: {bad.size} mismatches, e.g. relative positions {rel[bad][:10].tolist()} -> "
        f"pemath {got[bad][:10].tolist()}, HF {peer[bad][:10].tolist()}"
    )
    # sanity: the other directionality and the opposite sign convention differ
    other = np.asarray(t5.bucket(rel, bidirectional=not params["bidirectional"], **kw))
    assert np.any(other != peer)
    flipped = np.asarray(t5.bucket(-rel, bidirectional=params["bidirectional"], **kw))
    assert np.any(flipped != peer)


# HF's float32 floor parts from the exact floor at these distances (0..1000 recorded); pemath's
# default (exact=False) follows HF everywhere (test above), exact=True only here.
T5_FLOAT32_VS_EXACT = {
    "bucket/nb83_md1000_uni_dense": {796},
    "bucket/nb99_md784_uni_dense": {426},
    "bucket/nb36_md50_uni_dense": {30},  # ln(50/18) = 2 ln(30/18): the true quotient is exactly 9
    "bucket/nb72_md100_uni_dense": {60},  # ln(100/36) = 2 ln(60/36)
    "bucket/nb9_md128_uni_dense": set(),
}


@pytest.mark.parametrize("case", named("hf_t5.npz", sorted(T5_FLOAT32_VS_EXACT)))
def test_t5_exact_floor_differs_from_hf_only_where_float32_rounds(case):
    params, arr = load("hf_t5.npz", case)
    t5 = pm("t5")
    rel, peer = arr["relative_position"], arr["bucket"]
    got = np.asarray(t5.bucket(rel, bidirectional=False, num_buckets=params["num_buckets"],
                               max_distance=params["max_distance"], exact=True))
    differ = {int(-r) for r in rel[got != peer]}
    assert differ == T5_FLOAT32_VS_EXACT[case]
    assert np.all(np.abs(got - peer) <= 1)


# --------------------------------------------------------------------------- sinusoidal tables


def sin_tol_float64_then_float32(table: np.ndarray, positions: np.ndarray, base: float) -> np.ndarray:
    """XLM and Marian: float64 NumPy, then rounded to float32. float64 stage: pos / base**e
    (exponent rounding ln(base) u64, pow 2 u64, division u64) and sin/cos (2 u64), with
    |φ| <= pos (every frequency <= 1); pemath's float64 value likewise; then one float32
    rounding, <= u32 |value|."""
    phase = np.abs(positions.astype(np.float64))[:, None]
    return U32 * np.abs(table) + 2 * U64 * (phase * (math.log(base) + 3) + 2)


def sin_tol_float32(positions: np.ndarray, base: float) -> np.ndarray:
    """M2M100: all float32. ω_i = exp(fl(i * fl(-ln(base)/(h-1)))): the argument (|a| <= ln base)
    off by 2 |a| u32, exp 1 ulp (2 u32), so ω off by (2 ln(base) + 2) u32 relative; the phase
    p ω one more rounding: |Δφ| <= (2 ln(base) + 3) u32 |φ|, |φ| <= p; sin/cos 2 u32."""
    phase = np.abs(positions.astype(np.float64))[:, None]
    return U32 * (phase * (2 * math.log(base) + 3) + K_COS_SIN) + 2 * U64 * (phase + 8)


def _encode(positions, dim, base, convention):
    return np.asarray(pm("sinusoidal").encode(positions, dim, base=base, convention=convention), dtype=np.float64)


@pytest.mark.parametrize("case", cases("hf_sinusoidal.npz", "xlm/") + cases("hf_sinusoidal.npz", "marian/"))
def test_sinusoidal_xlm_marian(case):
    params, arr = load("hf_sinusoidal.npz", case)
    table, dim, base = arr["table"], params["dim"], params["base"]
    pos = np.arange(params["n_positions"])
    got = _encode(pos, dim, base, params["convention"])
    tol = sin_tol_float64_then_float32(table, pos, base)
    assert_within(got, table, tol, case)
    other = "concat" if params["convention"] == "interleaved" else "interleaved"
    assert_outside(_encode(pos, dim, base, other), table, tol, f"{case} as convention {other!r}")
    assert_outside(_encode(pos + 1, dim, base, params["convention"]), table, tol, f"{case} with positions + 1")


@pytest.mark.parametrize("case", [c for c in cases("hf_sinusoidal.npz", "m2m100/") if c != "m2m100/forward_pad1"])
def test_sinusoidal_m2m100_table(case):
    params, arr = load("hf_sinusoidal.npz", case)
    table, dim, base, pad = arr["table"], params["dim"], params["base"], params["padding_idx"]
    pos = np.arange(params["n_positions"])
    keep = pos != pad if pad is not None else np.ones(pos.shape, bool)
    if pad is not None:  # the padding row is zeroed, not an encoding
        np.testing.assert_array_equal(table[pad], 0.0)
    got = _encode(pos[keep], dim, base, "tensor2tensor")
    tol = sin_tol_float32(pos[keep], base)
    assert_within(got, table[keep], tol, f"{case} (row r = position r)")
    assert_outside(_encode(pos[keep], dim, base, "concat"), table[keep], tol, f"{case} as convention 'concat'")
    shifted = _encode(pos[keep] - 2, dim, base, "tensor2tensor")  # token index instead of position
    assert_outside(shifted, table[keep], tol, f"{case} with the offset of 2 forgotten")


def test_sinusoidal_m2m100_forward_offset():
    """M2M100 (fairseq) gives token t of a row position padding_idx + 1 + t; padding tokens get
    the zeroed padding row."""
    params, arr = load("hf_sinusoidal.npz", "m2m100/forward_pad1")
    pad, dim = params["padding_idx"], params["dim"]
    ids, pos, out = arr["input_ids"], arr["position_ids"], arr["out"]
    is_pad = ids == pad
    assert np.all(pos[is_pad] == pad)
    non_pad_index = np.cumsum(~is_pad, axis=1) - 1
    assert np.all(pos[~is_pad] == (pad + 1 + non_pad_index)[~is_pad])
    np.testing.assert_array_equal(out[is_pad], 0.0)
    p = pos[~is_pad]
    assert_within(_encode(p, dim, 10000.0, "tensor2tensor"), out[~is_pad], sin_tol_float32(p, 10000.0), "lookup")
