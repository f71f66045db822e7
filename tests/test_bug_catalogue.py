"""A catalogue of plausible buggy RoPE kernels: the oracle must reject every one and name the cause.

Each kernel below is written the way such code is written in the wild (NumPy stand-ins for
a Triton/CUDA kernel or a model port, float32 frequencies and phases unless the bug is
about them), independently of pemath. For each, ``assert_rope_close`` must raise; for the
bugs the diagnosis knows, its message must name the cause. Honest kernels (float32,
float16, bfloat16 via ml_dtypes, and Hugging Face's rotary pipeline run through torch on
the CPU) must pass at long positions. ``test_catalogue_figures`` prints the figures
(``pytest -s``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from pemath import rope
from pemath import scaling as sc
from pemath.testing import assert_rope_close

# Positions up to 10**6 are tested on purpose; there a few elements' derived tolerance admits every
# value (pemath.VacuousToleranceWarning, tested in tests/test_precision_guard.py), which is not what
# this file examines.
pytestmark = pytest.mark.filterwarnings("ignore::pemath.VacuousToleranceWarning")

ml_dtypes = pytest.importorskip("ml_dtypes")
BF16 = ml_dtypes.bfloat16

RNG = np.random.default_rng(20240604)
#: Short positions (where most bugs are blatant) and long ones (where float32 phases are coarse).
POSITIONS = np.concatenate([np.arange(24), [100, 1000, 4097, 30_000, 65_000]])
LONG = np.concatenate([np.arange(8), [4097, 65_537, 100_000, 524_288, 999_999, 1_000_000]])


# --------------------------------------------------------------------------- a plain kernel


def inv_freq32(r: int, base: float, denominator: int | None = None) -> np.ndarray:
    """``1 / base ** (arange(0, r, 2) / r)`` in float32, as HF, Meta and GPT-NeoX write it."""
    e = np.arange(0, r, 2, dtype=np.float32) / np.float32(denominator or r)
    return (np.float32(1.0) / np.power(np.float32(base), e)).astype(np.float32)


def pairs(x: np.ndarray, layout: str, r: int) -> tuple[np.ndarray, np.ndarray]:
    if layout == "half":
        return x[..., : r // 2], x[..., r // 2 : r]
    return x[..., 0:r:2], x[..., 1:r:2]


def unpairs(a: np.ndarray, b: np.ndarray, layout: str) -> np.ndarray:
    if layout == "half":
        return np.concatenate([a, b], axis=-1)
    return np.stack([a, b], axis=-1).reshape(*a.shape[:-1], 2 * a.shape[-1])


def kernel(
    x: np.ndarray,
    pos: Any,
    *,
    layout: str,
    base: float = 10000.0,
    r: int | None = None,
    dtype: Any = np.float32,
    inv: np.ndarray | None = None,
    attention: float = 1.0,
    phase: np.ndarray | None = None,
) -> np.ndarray:
    """An honest RoPE kernel: float32 frequencies and phases, cos/sin cast to ``dtype``, products in ``dtype``."""
    r = r or x.shape[-1]
    inv = inv_freq32(r, base) if inv is None else inv
    if phase is None:
        phase = np.asarray(pos, dtype=np.float32)[..., None] * inv
    cos = (np.cos(phase) * np.float32(attention)).astype(dtype)
    sin = (np.sin(phase) * np.float32(attention)).astype(dtype)
    xt = x.astype(dtype)
    a, b = pairs(xt, layout, r)
    out = unpairs((a * cos - b * sin).astype(dtype), (b * cos + a * sin).astype(dtype), layout)
    return np.concatenate([out, xt[..., r:]], axis=-1)


# --------------------------------------------------------------------------- the bugs


@dataclasses.dataclass
class Case:
    name: str
    run: Callable[[np.ndarray, np.ndarray], np.ndarray]
    cause: str | None  # a phrase the diagnosis must contain; None: not diagnosable
    layout: str = "half"
    d: int = 64
    dtype: Any = np.float32
    positions: np.ndarray = dataclasses.field(default_factory=lambda: POSITIONS)
    kwargs: dict = dataclasses.field(default_factory=dict)
    x_shape: tuple[int, ...] | None = None
    source: str = ""  # the public report (shared/reference/rope-bugs.md) the kernel realises


YARN = sc.YaRN(16.0, 4096)
LLAMA3 = sc.Llama3(8.0, 8192, low_freq_factor=1.0, high_freq_factor=4.0)


def _yarn_inv(r: int, base: float) -> np.ndarray:
    # the kernel's own YaRN frequencies: float32, blend by pair index (as HF)
    low, high = YARN.correction_range(r, base)
    ramp = np.clip((np.arange(r // 2, dtype=np.float32) - low) / np.float32(high - low), 0, 1)
    extra = 1 - ramp
    inv = inv_freq32(r, base)
    return (inv / np.float32(YARN.factor) * (1 - extra) + inv * extra).astype(np.float32)


def seed_rotary_matrix(context_len: int, d_model: int) -> np.ndarray:
    """The seeds' get_rotary_matrix: positions 1..L, and R[2i+1, 2i] (the lower sin) never set."""
    R = np.zeros((context_len, d_model, d_model))
    positions = np.arange(1, context_len + 1)[:, None]
    i = np.arange(0, d_model // 2)
    theta = 10000.0 ** (-2.0 * i / d_model)
    m_theta = positions * theta
    R[:, 2 * i, 2 * i] = np.cos(m_theta)
    R[:, 2 * i, 2 * i + 1] = -np.sin(m_theta)
    R[:, 2 * i + 1, 2 * i + 1] = np.cos(m_theta)
    return R


def bug_seed_matrix(x: np.ndarray, pos: np.ndarray) -> np.ndarray:
    R = seed_rotary_matrix(int(pos.max()) + 1, x.shape[-1])
    return np.einsum("nij,nj->ni", R[pos], x.astype(np.float64)).astype(np.float32)


def bug_half_with_interleaved_table(x: np.ndarray, pos: np.ndarray) -> np.ndarray:
    inv = inv_freq32(x.shape[-1], 10000.0)
    freqs = pos.astype(np.float32)[:, None] * inv
    emb = np.repeat(freqs, 2, axis=-1)  # GPT-J's table, fed to rotate_half
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2 :]
    return x * np.cos(emb) + np.concatenate([-x2, x1], axis=-1) * np.sin(emb)


def bug_cos_sin_swapped(x: np.ndarray, pos: np.ndarray) -> np.ndarray:
    phase = pos.astype(np.float32)[:, None] * inv_freq32(x.shape[-1], 10000.0)
    cos, sin = np.sin(phase), np.cos(phase)  # unpacked in the wrong order
    a, b = pairs(x, "half", x.shape[-1])
    return unpairs(a * cos - b * sin, b * cos + a * sin, "half")


def bug_wrong_slice(x: np.ndarray, pos: np.ndarray) -> np.ndarray:
    r = 32
    tail = kernel(x[..., -r:], pos, layout="half", r=r)
    return np.concatenate([x[..., :-r], tail], axis=-1)


def bug_phase_bf16(x: np.ndarray, pos: np.ndarray) -> np.ndarray:
    # model.to(bfloat16) cast the inv_freq buffer; t = arange(seq, dtype=inv_freq.dtype)
    inv = inv_freq32(x.shape[-1], 10000.0).astype(BF16)
    t = pos.astype(BF16)
    freqs = t[:, None] * inv[None, :]
    return kernel(x, pos, layout="half", dtype=BF16, phase=freqs.astype(np.float32))


def bug_inv_freq_bf16(x: np.ndarray, pos: np.ndarray) -> np.ndarray:
    inv = inv_freq32(x.shape[-1], 10000.0).astype(BF16).astype(np.float32)  # buffer cast, phase in float32
    return kernel(x, pos, layout="half", dtype=BF16, inv=inv)


def bug_phase_f16(x: np.ndarray, pos: np.ndarray) -> np.ndarray:
    inv = inv_freq32(x.shape[-1], 10000.0).astype(np.float16)
    freqs = pos.astype(np.float16)[:, None] * inv[None, :]
    return kernel(x, pos, layout="interleaved", dtype=np.float16, phase=freqs.astype(np.float32))


def bug_ignores_position_ids(x: np.ndarray, pos: np.ndarray) -> np.ndarray:
    # x: (batch, seq, d); the kernel rotates by arange(seq), ignoring left-padded position ids
    seq = x.shape[1]
    return kernel(x, np.arange(seq)[None, :], layout="half")


def left_padded_positions() -> np.ndarray:
    mask = np.array([[0, 0, 0, 1, 1, 1, 1, 1], [0, 1, 1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1, 1, 1]])
    pos = mask.cumsum(-1) - 1
    return np.where(mask == 0, 1, pos)


def bug_int_division_exponent(x: np.ndarray, pos: np.ndarray) -> np.ndarray:
    d = x.shape[-1]
    inv = (1.0 / 10000.0 ** (np.arange(0, d, 2) // d)).astype(np.float32)  # // : every exponent 0
    return kernel(x, pos, layout="half", inv=inv)


def bug_feature_frequencies(x: np.ndarray, pos: np.ndarray) -> np.ndarray:
    # one frequency per feature instead of per pair: the two members of a pair turn at different rates
    d = x.shape[-1]
    theta = (10000.0 ** (-np.arange(d) / d)).astype(np.float32)
    ang = pos.astype(np.float32)[:, None] * theta
    rot = np.stack([-x[:, 1::2], x[:, 0::2]], axis=-1).reshape(x.shape)
    return x * np.cos(ang) + rot * np.sin(ang)


def bug_sin_missing(x: np.ndarray, pos: np.ndarray) -> np.ndarray:
    phase = pos.astype(np.float32)[:, None] * inv_freq32(x.shape[-1], 10000.0)
    return x * np.concatenate([np.cos(phase), np.cos(phase)], axis=-1)


# --------------------------------------------------------------------------- from public trackers (rope-bugs.md)

NTK = sc.DynamicNTK(4.0, 2048)
YARN_GIVEN = sc.YaRN(64.0, 4096, attention_factor=1.0)
YARN_DS = sc.YaRN(40.0, 4096, mscale=1.0, mscale_all_dim=1.0)
YARN_OSS = sc.YaRN(32.0, 4096, truncate=False)
SHORT = np.linspace(1.0, 1.6, 32)
LONG_F = np.linspace(1.0, 40.0, 32)
LONGROPE = sc.LongRoPE(SHORT, LONG_F, 4096, factor=32.0)
SHORT_POS = np.concatenate([np.arange(24), [100, 1000, 2000]])


def _inv_of(scaling, r: int, base: float, **kw) -> np.ndarray:
    """A kernel's float32 frequencies for a (mis)configured scaling."""
    return np.asarray(scaling.inv_freq(r, base, **kw)).astype(np.float32)


def bug_static_ntk(x, pos):
    # vLLM #41236: the base computed once at the maximum length, used at every position
    inv = inv_freq32(x.shape[-1], NTK.scaled_base(x.shape[-1], 10000.0, 8192))
    return kernel(x, pos, layout="half", inv=inv)


def bug_ntk_wrong_length(x, pos):
    # a variant of vLLM #41236: the dynamic base computed for the allocated context (6000), not max(position_ids) + 1
    inv = inv_freq32(x.shape[-1], NTK.scaled_base(x.shape[-1], 10000.0, 6000))
    return kernel(x, pos, layout="half", inv=inv)


def bug_yarn_factor_ignored(x, pos):
    # vLLM #48351: attention_factor=1.0 not read, the default 0.1 ln s + 1 used
    plain = sc.YaRN(64.0, 4096)
    return kernel(x, pos, layout="half", inv=_inv_of(plain, 64, 10000.0), attention=plain.attention_factor)


def bug_mscale_alone(x, pos):
    # exllamav3 #259: get_mscale(factor, mscale) on cos/sin, without dividing by get_mscale(factor, mscale_all_dim)
    inv = _inv_of(YARN_DS, 64, 10000.0)
    return kernel(x, pos, layout="half", inv=inv, attention=0.1 * np.log(40.0) + 1.0)


def bug_yarn_truncated(x, pos):
    # vLLM #27722: gpt-oss has truncate=false; the ramp bounds were rounded anyway
    rounded = sc.YaRN(32.0, 4096, truncate=True)
    return kernel(x, pos, layout="half", base=150000.0, inv=_inv_of(rounded, 64, 150000.0),
                  attention=rounded.attention_factor)


def bug_yarn_max_position(x, pos):
    # Megatron-LM #1418, HF #38224: the ramp computed from max_position_embeddings
    wrong = sc.YaRN(16.0, 65536)
    return kernel(x, pos, layout="half", inv=_inv_of(wrong, 64, 10000.0), attention=YARN.attention_factor)


def bug_yarn_twice(x, pos):
    # TensorRT-LLM #16378: keys rotated by 2 theta and scaled by the factor squared
    return kernel(x, 2 * pos, layout="half", inv=_yarn_inv(64, 10000.0), attention=YARN.attention_factor ** 2)


def bug_longrope_regime(x, pos):
    # llama.cpp #24823: the long factors chosen from the allocated context, for a short prompt
    return kernel(x, pos, layout="half", inv=_inv_of(LONGROPE, 64, 10000.0, seq_len=8192),
                  attention=LONGROPE.attention_factor)


def bug_llama3_linear(x, pos):
    # mlxcel #1688: 1/factor applied to every frequency
    inv = (inv_freq32(128, 500000.0) / np.float32(8.0)).astype(np.float32)
    return kernel(x, pos, layout="half", inv=inv)


def bug_table_bf16(x, pos):
    # gpt-neox #1003, SGLang #33117: the cos/sin cache stored in bfloat16, the output in float32
    phase = pos.astype(np.float32)[:, None] * inv_freq32(x.shape[-1], 10000.0)
    cos = np.cos(phase).astype(BF16).astype(np.float32)
    sin = np.sin(phase).astype(BF16).astype(np.float32)
    a, b = pairs(x, "half", x.shape[-1])
    return unpairs(a * cos - b * sin, b * cos + a * sin, "half")


def bug_positions_bf16(x, pos):
    # candle #3520: positions cast to bfloat16 (exact integers only up to 256)
    return kernel(x, pos.astype(BF16).astype(np.float32), layout="half")


def bug_split_at_head_dim(x, pos):
    # cascadia #69: partial rotary (32 of 128) split at head_dim/2 instead of rotary_dim/2
    d, r = x.shape[-1], 32
    phase = pos.astype(np.float32)[:, None] * inv_freq32(r, 10000.0)
    cos, sin = np.cos(phase), np.sin(phase)
    out = x.copy()
    a, b = x[:, : r // 2], x[:, d // 2 : d // 2 + r // 2]
    out[:, : r // 2] = a * cos - b * sin
    out[:, d // 2 : d // 2 + r // 2] = b * cos + a * sin
    return out


def bug_partial_twice(x, pos):
    # vLLM #43770: rotary_dim halved again in every layer on a shared module
    r = 16
    return np.concatenate([kernel(x[:, :r], pos, layout="half"), x[:, r:]], axis=-1)


def bug_gemma_local_global(x, pos):
    # vLLM #29111: a sliding-window layer given the global layers' RoPE (base 1e6, linear factor 8)
    return kernel(x, pos, layout="half", inv=(inv_freq32(64, 1e6) / np.float32(8.0)).astype(np.float32))


def bug_rows_ignore_batch(x, pos):
    # exllama #101: every batch row rotated with the positions of the first one
    return kernel(x, np.broadcast_to(pos[:1], pos.shape), layout="half")


def bug_negative_rows_unwritten(x, pos):
    # flash-linear-attention #967: rows with negative positions skipped, the output from empty_like (NaN here)
    out = kernel(x, pos, layout="half")
    out[pos < 0] = np.nan
    return out


def bug_decode_off_by_one(x, pos):
    # onnxruntime-genai #2354: positions 0..8 for a 9-token prompt, then 10, 11, ... while decoding
    return kernel(x, np.where(pos >= 9, pos + 1, pos), layout="half")


def bug_packing_ignored(x, pos):
    # Megatron-LM #453: position_ids of packed sequences ignored, contiguous [0, S) assumed
    return kernel(x, np.arange(x.shape[1])[None, :], layout="half")


def bug_cache_clamped(x, pos):
    # vLLM #55910: a cos/sin cache of max_position_embeddings rows, positions beyond it read the last row
    return kernel(x, np.minimum(pos, 4095), layout="half")


def bug_longrope_mixed(x, pos):
    # uzu #604: chunked prefill mixed both regimes inside one KV cache (short factors below 4096, long beyond)
    short = kernel(x, pos, layout="half", inv=_inv_of(LONGROPE, 64, 10000.0), attention=LONGROPE.attention_factor)
    long = kernel(x, pos, layout="half", inv=_inv_of(LONGROPE, 64, 10000.0, seq_len=8192),
                  attention=LONGROPE.attention_factor)
    return np.where((pos >= 4096)[:, None], long, short)


def bug_gqa_pairing(x, pos):
    # HF #31766: q/k permuted for interleaved->half with the wrong head count: pairs (i, i + 16) in 32-blocks
    return np.concatenate([kernel(x[:, :32], pos, layout="half", inv=inv_freq32(64, 10000.0)[:16]),
                           kernel(x[:, 32:], pos, layout="half", inv=inv_freq32(64, 10000.0)[16:])], axis=-1)


def _packed_positions() -> np.ndarray:
    return np.concatenate([np.arange(n) for n in (5, 11, 16)])[None, :]


def _batch_offsets() -> np.ndarray:
    return np.arange(8)[None, :] + np.array([[0], [100], [4096]])


TRACKER_BUGS: list[Case] = [
    Case("dynamic NTK: a static base at the maximum length", bug_static_ntk,
         "dynamic NTK's base computed once at the maximum length 8192", positions=SHORT_POS,
         kwargs={"scaling": NTK, "seq_len": 2001}, source="vLLM #41236"),
    Case("dynamic NTK: the base of another length", bug_ntk_wrong_length,
         "dynamic NTK's base computed at length 6000 instead of seq_len 2001", positions=SHORT_POS,
         kwargs={"scaling": NTK, "seq_len": 2001}, source="a variant of vLLM #41236 (the allocated context)"),
    Case("YaRN: an explicit attention_factor ignored", bug_yarn_factor_ignored,
         "the config's attention_factor=1 ignored", kwargs={"scaling": YARN_GIVEN}, source="vLLM #48351"),
    Case("YaRN: mscale without mscale_all_dim", bug_mscale_alone, "get_mscale(factor, mscale) = 1.3688879 used alone",
         kwargs={"scaling": YARN_DS}, source="exllamav3 #259"),
    Case("YaRN: ramp bounds rounded where truncate=false", bug_yarn_truncated, "YaRN's ramp bounds rounded to integers",
         kwargs={"scaling": YARN_OSS, "base": 150000.0}, source="vLLM #27722"),
    Case("YaRN: ramp from max_position_embeddings", bug_yarn_max_position,
         "YaRN's ramp computed from max_position_embeddings=65536", kwargs={"scaling": YARN}, source="Megatron-LM #1418"),
    Case("YaRN: rotation applied twice", bug_yarn_twice, "the rotation applied twice, attention factor included",
         kwargs={"scaling": YARN}, source="TensorRT-LLM #16378"),
    Case("LongRoPE: long factors for a short prompt", bug_longrope_regime, "LongRoPE's long factors where the sequence",
         positions=SHORT_POS, kwargs={"scaling": LONGROPE, "seq_len": 2001}, source="llama.cpp #24823"),
    Case("Llama 3.1 treated as linear", bug_llama3_linear, "Llama 3.1 scaling treated as linear", d=128,
         kwargs={"base": 500000.0, "scaling": LLAMA3}, source="mlxcel #1688"),
    Case("cos/sin table stored in bfloat16", bug_table_bf16, "the cos/sin table stored in bfloat16",
         source="gpt-neox #1003"),
    Case("positions cast to bfloat16", bug_positions_bf16, "positions rounded to bfloat16 before the phase",
         source="candle #3520"),
    Case("NeoX pairing hard-coded for a GPT-J-style model", lambda x, p: kernel(x, p, layout="half"),
         "the other layout", layout="interleaved", source="vLLM #49290"),
    Case("partial rotary split at head_dim/2", bug_split_at_head_dim, "the half split taken at head_dim/2 = 64",
         d=128, kwargs={"rotary_dim": 32}, source="cascadia #69"),
    Case("partial rotary factor applied twice", bug_partial_twice, "rotary_dim halved (16 instead of 32",
         kwargs={"rotary_dim": 32}, source="vLLM #43770"),
    Case("partial rotary factor lost", lambda x, p: kernel(x, p, layout="half"), "every feature rotated",
         kwargs={"rotary_dim": 32}, source="mlx-lm #1698"),
    Case("Gemma 3: a local layer given the global RoPE", bug_gemma_local_global,
         "the frequencies of base 1000000 with linear scaling by 8", source="vLLM #29111"),
    Case("rows mapped to positions ignoring the batch", bug_rows_ignore_batch,
         "every row of axis 0 (the batch) rotated with the positions of its first entry",
         positions=_batch_offsets(), x_shape=(3, 8, 64), source="exllama #101"),
    Case("rows with negative positions left unwritten", bug_negative_rows_unwritten, "row(s) never written",
         positions=np.concatenate([np.arange(-4, 20), [100, 1000]]), source="flash-linear-attention #967"),
    Case("off by one after the prompt", bug_decode_off_by_one, "e.g. row 9: position 10 instead of 9",
         positions=np.arange(16), source="onnxruntime-genai #2354"),
    Case("packed sequences' position_ids ignored", bug_packing_ignored,
         "positions 0, 1, 2, ... along axis 1", positions=_packed_positions(), x_shape=(1, 32, 64),
         source="Megatron-LM #453"),
    Case("LongRoPE: both regimes in one sequence", bug_longrope_mixed, "LongRoPE's regime chosen per position",
         positions=np.concatenate([np.arange(24), [4000, 4095, 4096, 5000, 8000]]),
         kwargs={"scaling": LONGROPE, "seq_len": 8001}, source="uzu #604"),
    Case("GQA: q/k permuted with the wrong head count", bug_gqa_pairing, None, source="HF #31766"),
    Case("a cos/sin cache too short for the positions", bug_cache_clamped, "positions clamped at 4095",
         positions=np.concatenate([np.arange(24), [4094, 4095, 4096, 4097, 4100, 5000, 8000]]), source="vLLM #55910"),
]

# Multi-axis RoPE: Qwen3-VL's interleaved M-RoPE on image tokens with distinct t/h/w, a 2-D axial vision RoPE.
QWEN3_VL = rope.Spec("half", head_dim=64, mrope_section=[12, 10, 10], mrope_interleaved=True, base=5e6)
PIXTRAL = rope.Spec("half", head_dim=64, axial_dims=[32, 32], axial_grouping="pairs", axial_frequencies="strided",
                    base=10000.0)


def _mrope_positions() -> np.ndarray:
    t = np.concatenate([np.arange(6), np.full(12, 6), np.arange(7, 13)])
    h = np.concatenate([np.arange(6), 6 + np.repeat(np.arange(3), 4), np.arange(7, 13)])
    w = np.concatenate([np.arange(6), 6 + np.tile(np.arange(4), 3), np.arange(7, 13)])
    return np.stack([t, h, w])[:, None, :]  # (3, 1, seq) against x (1, seq, d)


def _grid() -> np.ndarray:
    return np.stack(np.meshgrid(np.arange(5), np.arange(6), indexing="ij"), -1).reshape(1, 30, 2)


def _f32(y) -> np.ndarray:
    return np.asarray(y).astype(np.float32)


MULTI_AXIS_BUGS: list[Case] = [
    Case("M-RoPE position ids not built (text positions for image tokens)",
         lambda x, p: _f32(rope.apply(x, p[0], spec=QWEN3_VL.replace(mrope_section=None, mrope_interleaved=False))),
         "M-RoPE position ids not built", positions=_mrope_positions(), x_shape=(1, 24, 64),
         kwargs={"spec": QWEN3_VL}, source="Liger #276, HF #40490"),
    Case("M-RoPE sections blocked where Qwen3-VL interleaves them",
         lambda x, p: _f32(rope.apply(x, p, spec=QWEN3_VL.replace(mrope_interleaved=False))),
         "the blocked section layout", positions=_mrope_positions(), x_shape=(1, 24, 64), kwargs={"spec": QWEN3_VL},
         source="MNN #4133, mlx-vlm #576"),
    Case("mrope_interleaved read as the pair layout",
         lambda x, p: _f32(rope.apply(x, p, spec=QWEN3_VL.replace(layout="interleaved"))),
         "the other pair layout: layout='interleaved'", positions=_mrope_positions(), x_shape=(1, 24, 64),
         kwargs={"spec": QWEN3_VL}, source="xllm #2120"),
    Case("2-D vision RoPE with the axes swapped",
         lambda x, p: _f32(rope.apply(x, p[..., ::-1], spec=PIXTRAL)),
         "the axes in reverse order", positions=_grid(), x_shape=(1, 30, 64), kwargs={"spec": PIXTRAL},
         source="llama.cpp #13282"),
]

# Mechanisms from public reports that no listed alternative names (issue 23): named by a fitted formula or a
# per-row pattern, not by a longer list. Each realised as its code is written.
YARN_RAMP = sc.YaRN(4.0, 4096)


def bug_llama3_blend_swapped(x, pos):
    # Llama 3.1's medium band blended with smooth and 1 - smooth exchanged
    inv = inv_freq32(x.shape[-1], 500000.0).astype(np.float64)
    s, L0, lo, hi = LLAMA3.factor, LLAMA3.original_max_position, LLAMA3.low_freq_factor, LLAMA3.high_freq_factor
    wavelen = 2 * np.pi / inv
    smooth = (L0 / wavelen - lo) / (hi - lo)
    scaled = np.where(wavelen > L0 / lo, inv / s, inv)
    medium = (wavelen >= L0 / hi) & (wavelen <= L0 / lo)
    inv = np.where(medium, smooth * scaled / s + (1 - smooth) * scaled, scaled).astype(np.float32)
    return kernel(x, pos, layout="half", inv=inv)


def bug_yarn_betas_swapped(x, pos):
    # YaRN's find_correction_range(beta_slow, beta_fast, ...): the ramp's bounds from the exchanged betas
    r, base, y = x.shape[-1], 10000.0, YARN_RAMP

    def corr(beta):
        return r * np.log(y.original_max_position / (beta * 2 * np.pi)) / (2 * np.log(base))

    low, high = max(np.floor(corr(y.beta_slow)), 0), min(np.ceil(corr(y.beta_fast)), r - 1)
    ramp = np.clip((np.arange(r // 2, dtype=np.float32) - low) / np.float32(high - low), 0, 1)
    extra = 1 - ramp
    inv = inv_freq32(r, base)
    inv = (inv / np.float32(y.factor)) * (1 - extra) + inv * extra
    return kernel(x, pos, layout="half", inv=inv.astype(np.float32), attention=y.attention_factor)


def bug_cos_sin_swapped_some_heads(x, pos):
    # a fused kernel's second path (heads 4..7 of 8) reads the cos/sin table in the other order
    out = kernel(x, pos, layout="half")
    out[:, 4:] = bug_cos_sin_swapped(x[:, 4:], pos)
    return out


def bug_positions_bf16_twice(x, pos):
    # positions built in the input's dtype (bfloat16), the phase table then cast to it too
    p = pos.astype(BF16)
    phase = (p.astype(np.float32)[:, None] * inv_freq32(x.shape[-1], 10000.0)).astype(np.float32)
    return kernel(x, pos, layout="half", dtype=BF16, phase=phase)


def bug_positions_uint16(x, pos):
    # position ids stored in uint16: 65536 reads as 0
    return kernel(x, pos.astype(np.uint16).astype(np.int64), layout="half")


UNLISTED_BUGS: list[Case] = [
    Case("Llama 3: medium-band blend weights swapped", bug_llama3_blend_swapped,
         "Llama 3's smoothing with its two weights swapped", d=128, kwargs={"base": 500000.0, "scaling": LLAMA3}),
    Case("YaRN: beta_fast and beta_slow swapped", bug_yarn_betas_swapped, "beta_fast and beta_slow swapped",
         d=128, kwargs={"scaling": YARN_RAMP}),
    Case("cos and sin swapped on some heads only", bug_cos_sin_swapped_some_heads,
         "cos and sin swapped, on the rows at batch all (2), head 4-7 (of 8), position all (29) only",
         x_shape=(2, 8, 29, 64)),
    Case("positions rounded to bfloat16 twice", bug_positions_bf16_twice,
         "positions rounded to bfloat16 before the phase", dtype=BF16),
    Case("positions stored in uint16", bug_positions_uint16, "positions stored in uint16 (wrapped modulo 2^16",
         positions=np.concatenate([np.arange(24), [100, 1000, 65_535, 65_536, 65_540, 70_000]])),
]

#: Bug classes of rope-bugs.md not realised as kernels here, with the reason (said in the issue's note).
NOT_REALISED = {
    "fast sin/cos intrinsics (__sinf past 48039)": "no faithful CPU emulation of the hardware approximation",
    "several dynamic-NTK formulas (Qwen's alpha)": "a choice of formula, not a kernel defect",
}


BUGS_OWN: list[Case] = [
    Case("wrong layout (interleaved kernel, half model)", lambda x, p: kernel(x, p, layout="interleaved"),
         "the other layout"),
    Case("positions off by one (+1)", lambda x, p: kernel(x, p + 1, layout="half"), "shifted by +1"),
    Case("positions off by one (-1)", lambda x, p: kernel(x, p - 1, layout="interleaved"), "shifted by -1",
         layout="interleaved"),
    Case("positions shifted by a KV-cache length", lambda x, p: kernel(x, p + 300, layout="half"),
         "shifted by +300"),
    Case("inverse rotation (rotate_half as cat(x2, -x1))", lambda x, p: kernel(x, -p, layout="half"),
         "inverse rotation"),
    Case("wrong base (10000 for a Llama 3 model)", lambda x, p: kernel(x, p, layout="half", base=10000.0),
         "base=10000 instead of 500000", d=128, kwargs={"base": 500000.0}),
    Case("frequencies over head_dim instead of rotary_dim",
         lambda x, p: kernel(x, p, layout="half", r=32, inv=inv_freq32(32, 10000.0, denominator=128)),
         "over head_dim=128", d=128, kwargs={"rotary_dim": 32}),
    Case("YaRN attention factor applied twice",
         lambda x, p: kernel(x, p, layout="half", inv=_yarn_inv(64, 10000.0), attention=YARN.attention_factor ** 2),
         "attention factor applied twice", kwargs={"scaling": YARN}),
    Case("YaRN attention factor missing",
         lambda x, p: kernel(x, p, layout="half", inv=_yarn_inv(64, 10000.0)),
         "attention factor missing", kwargs={"scaling": YARN}),
    Case("phase computed in bfloat16", bug_phase_bf16, "phase computed in bfloat16", dtype=BF16),
    Case("inv_freq buffer stored in bfloat16", bug_inv_freq_bf16, "inverse frequencies stored in bfloat16",
         dtype=BF16),
    Case("phase computed in float16", bug_phase_f16, "phase computed in float16", layout="interleaved",
         dtype=np.float16),
    Case("the seeds' rotary matrix (lower sin dropped, positions 1..L)", bug_seed_matrix,
         "missing its lower sin entry (y_b = x_b cos, without + x_a sin) at positions p + 1",
         layout="interleaved"),
    Case("cos and sin swapped", bug_cos_sin_swapped, "cos and sin swapped"),
    Case("half rotation fed an interleaved cos table", bug_half_with_interleaved_table,
         "half rotation (rotate_half) fed an interleaved"),
    Case("partial rotary on the wrong slice", bug_wrong_slice, "wrong slice", kwargs={"rotary_dim": 32}),
    Case("linear scaling multiplying positions", lambda x, p: kernel(x, p * 4.0, layout="half"),
         "multiplying the positions by 4", kwargs={"scaling": sc.Linear(4.0)}),
    Case("Llama 3 scaling left out", lambda x, p: kernel(x, p, layout="half", base=500000.0),
         "scaling left out", d=128, kwargs={"base": 500000.0, "scaling": LLAMA3}),
    Case("position ids ignored under left padding", bug_ignores_position_ids,
         "positions 0, 1, 2, ... along axis 1", positions=left_padded_positions(), x_shape=(3, 8, 64)),
    Case("exponent by integer division (every frequency 1)", bug_int_division_exponent,
         "the frequencies of base 1 (θ_i = 1^(-2i/64)"),  # named by the fit, not by a list
    Case("one frequency per feature instead of per pair", bug_feature_frequencies, None, layout="interleaved"),
    Case("sin term missing (x * cos only)", bug_sin_missing, None),
]

BUGS: list[Case] = BUGS_OWN + TRACKER_BUGS + MULTI_AXIS_BUGS + UNLISTED_BUGS


def _inputs(case: Case) -> tuple[np.ndarray, np.ndarray]:
    shape = case.x_shape or (case.positions.shape[-1] if case.positions.ndim > 1 else case.positions.size, case.d)
    x = RNG.standard_normal(shape).astype(np.float32).astype(case.dtype)
    return x, case.positions


_VERDICTS: dict[str, tuple[bool, str]] = {}


def _verdict(case: Case) -> tuple[bool, str]:
    """(rejected, message) of the oracle on the buggy kernel's output (computed once per bug)."""
    if case.name not in _VERDICTS:
        _VERDICTS[case.name] = _run(case)
    return _VERDICTS[case.name]


def _run(case: Case) -> tuple[bool, str]:
    x, pos = _inputs(case)
    actual = case.run(x, pos)
    layout = None if "spec" in case.kwargs else case.layout
    try:
        assert_rope_close(actual, x, pos, layout=layout, **case.kwargs)
    except AssertionError as exc:
        return True, str(exc)
    return False, ""


@pytest.mark.parametrize("case", BUGS, ids=[c.name for c in BUGS])
def test_bug_is_rejected_and_diagnosed(case):
    rejected, message = _verdict(case)
    assert rejected, f"{case.name}: the oracle accepted a buggy kernel"
    assert "Mismatched elements: " in message and "Worst element" in message and "position" in message
    diagnosis = [line for line in message.splitlines() if line.startswith("Diagnosis:")]
    assert len(diagnosis) == 1
    assert "raised an error" not in message, message
    if case.cause is None:
        assert "no known bug explains the mismatch" in diagnosis[0], message
    else:
        assert case.cause in diagnosis[0], message
        assert "(max error within tolerance)" in diagnosis[0]


def test_every_bug_gets_a_measured_finding():
    """Beyond the named list: what the output itself measures (pemath.testing.recover_rope), for every bug."""
    for case in BUGS:
        _, message = _verdict(case)
        assert any(line.startswith("Measured from the output: ") for line in message.splitlines()), message


@pytest.mark.parametrize("name, finding", [
    ("positions off by one (+1)", "position p + 1: positions offset by a constant"),
    ("positions shifted by a KV-cache length", "position p + 300"),
    ("wrong base (10000 for a Llama 3 model)", "an effective base of 10000 fits"),
    ("exponent by integer division (every frequency 1)", "an effective base of 1 fits"),  # on no named list
    ("YaRN attention factor applied twice", "the expected factor squared"),
    ("Llama 3 scaling left out", "pairs 29..63 of 64 turn at other frequencies than the spec's: divided by 0.125"),
    ("position ids ignored under left padding", "rows read as other positions"),
    ("GQA: q/k permuted with the wrong head count",
     "the features are rotated in pairs that are neither layout's (0, 16), (1, 17)"),  # measured, not listed
])
def test_the_measured_finding_is_the_bug(name, finding):
    case = next(c for c in BUGS if c.name == name)
    _, message = _verdict(case)
    assert finding in message, message


def test_catalogue_is_large_enough():
    assert len(BUGS) >= 12
    assert sum(c.cause is not None for c in BUGS) >= 12


# --------------------------------------------------------------------------- honest kernels


def honest_numpy(dtype: Any, layout: str, d: int) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    return lambda x, p: kernel(x, p, layout=layout, dtype=dtype)


HONEST_NUMPY = [
    (f"numpy {np.dtype(dt).name} {layout} d={d}", dt, layout, d)
    for dt in (np.float32, np.float16, BF16)
    for layout in ("half", "interleaved")
    for d in (64, 128)
]


def _honest_ok(run, dtype, layout, d, positions=LONG, **kwargs) -> bool:
    x = RNG.standard_normal((positions.size, d)).astype(np.float32).astype(dtype)
    actual = run(x, positions)
    try:
        assert_rope_close(actual, x, positions, layout=layout, **kwargs)
    except AssertionError as exc:
        pytest.fail(f"an honest kernel was rejected:\n{exc}")
    return True


@pytest.mark.parametrize("name, dtype, layout, d", HONEST_NUMPY, ids=[h[0] for h in HONEST_NUMPY])
def test_honest_numpy_kernels_pass_at_long_positions(name, dtype, layout, d):
    assert _honest_ok(honest_numpy(dtype, layout, d), dtype, layout, d)


# HF's rotary pipeline, written here as transformers writes it (LlamaRotaryEmbedding + apply_rotary_pos_emb).


def hf_torch(x, positions, *, dtype_name: str, layout: str, base: float = 10000.0):
    torch = pytest.importorskip("torch")
    dt = getattr(torch, dtype_name)
    d = x.shape[-1]
    q = torch.from_numpy(x.astype(np.float32)).to(dt)[None]  # (1, seq, d)
    position_ids = torch.from_numpy(np.asarray(positions, dtype=np.int64))[None]
    inv_freq = 1.0 / (base ** (torch.arange(0, d, 2, dtype=torch.int64).float() / d))
    inv_freq_expanded = inv_freq[None, :, None].float().expand(position_ids.shape[0], -1, 1)
    position_ids_expanded = position_ids[:, None, :].float()
    freqs = (inv_freq_expanded.float() @ position_ids_expanded.float()).transpose(1, 2)
    if layout == "half":
        emb = torch.cat((freqs, freqs), dim=-1)
    else:
        emb = torch.repeat_interleave(freqs, 2, dim=-1)
    cos, sin = emb.cos().to(dt), emb.sin().to(dt)

    def rotate_half(t):
        t1, t2 = t[..., : t.shape[-1] // 2], t[..., t.shape[-1] // 2 :]
        return torch.cat((-t2, t1), dim=-1)

    def rotate_every_two(t):
        t1, t2 = t[..., ::2], t[..., 1::2]
        return torch.stack((-t2, t1), dim=-1).flatten(-2)

    rot = rotate_half if layout == "half" else rotate_every_two
    return (q * cos) + (rot(q) * sin)


HONEST_TORCH = [(f"torch HF {dt} {layout} d={d}", dt, layout, d)
                for dt in ("float32", "float16", "bfloat16") for layout in ("half", "interleaved") for d in (64, 128)]


@pytest.mark.torch
@pytest.mark.parametrize("name, dtype_name, layout, d", HONEST_TORCH, ids=[h[0] for h in HONEST_TORCH])
def test_honest_hf_torch_pipeline_passes(name, dtype_name, layout, d):
    pytest.importorskip("torch")
    x = RNG.standard_normal((LONG.size, d)).astype(np.float32)
    actual = hf_torch(x, LONG, dtype_name=dtype_name, layout=layout)[0]  # torch tensor, bf16 included
    xt = actual.new_tensor(x).to(actual.dtype)  # the model's input in its dtype
    assert_rope_close(actual, xt, LONG, layout=layout)


# --------------------------------------------------------------------------- the figures


def _from_measurement(diagnosis: str) -> bool:
    """A name built from the measurement (a fitted formula, a per-row pattern), not taken from a list."""
    return "fitted" in diagnosis or "on the rows at" in diagnosis


def catalogue_figures() -> dict[str, int]:
    rejected = diagnosed = fitted = 0
    diagnosable = sum(c.cause is not None for c in BUGS)
    for case in BUGS:
        ok, message = _verdict(case)
        rejected += ok
        diag = next((ln for ln in message.splitlines() if ln.startswith("Diagnosis:")), "")
        named = case.cause is not None and case.cause in diag
        diagnosed += named
        fitted += named and _from_measurement(diag)
    for run in TABLE_BUGS.values():  # ALiBi and T5: rejected and named
        message = run()
        rejected += message is not None
        diagnosed += message is not None and "no known bug" not in message
        fitted += message is not None and "fitted" in message
        diagnosable += 1
    honest = 0
    total = 0
    for _, dt, layout, d in HONEST_NUMPY:
        total += 1
        x = RNG.standard_normal((LONG.size, d)).astype(np.float32).astype(dt)
        try:
            assert_rope_close(kernel(x, LONG, layout=layout, dtype=dt), x, LONG, layout=layout)
            honest += 1
        except AssertionError:
            pass
    try:
        import torch  # noqa: F401
    except ImportError:
        torch = None
    if torch is not None:
        for _, dtn, layout, d in HONEST_TORCH:
            total += 1
            x = RNG.standard_normal((LONG.size, d)).astype(np.float32)
            actual = hf_torch(x, LONG, dtype_name=dtn, layout=layout)[0]
            try:
                assert_rope_close(actual, actual.new_tensor(x).to(actual.dtype), LONG, layout=layout)
                honest += 1
            except AssertionError:
                pass
    for name, run, layout, kwargs in HONEST_SCALED:
        total += 1
        x = RNG.standard_normal((LONG.size, 64)).astype(np.float32)
        try:
            assert_rope_close(run(x, LONG), x, LONG, layout=layout, **kwargs)
            honest += 1
        except AssertionError:
            pass
    try:
        import mlx.core  # noqa: F401
    except ImportError:
        pass
    else:
        for dtype_name in ("float32", "float16", "bfloat16"):
            for traditional in (False, True):
                total += 1
                try:
                    test_honest_mlx_fast_rope_passes(dtype_name, traditional)
                    honest += 1
                except AssertionError:
                    pass
    return {"buggy": len(BUGS) + len(TABLE_BUGS), "rejected": rejected, "diagnosable": diagnosable,
            "diagnosed": diagnosed, "honest": total, "accepted": honest, "fitted": fitted}


def test_catalogue_figures():
    f = catalogue_figures()
    print(
        f"\ncatalogue: {f['rejected']} buggy rejected / {f['buggy']}, {f['diagnosed']} named / {f['buggy']} "
        f"({100 * f['diagnosed'] / f['buggy']:.0f}%; {f['diagnosable']} with an expected cause), "
        f"{f['accepted']} honest accepted / {f['honest']}; not realised: {len(NOT_REALISED)} classes; "
        f"{f['fitted']} of the names built from the measurement (a fitted formula or a per-row pattern)"
    )
    assert f["fitted"] >= 5
    assert f["rejected"] == f["buggy"]
    assert f["diagnosed"] == f["diagnosable"] and f["diagnosed"] >= 0.9 * f["buggy"]
    assert f["accepted"] == f["honest"]


# --------------------------------------------------------------------------- ALiBi and T5 (rope-bugs.md)


def _alibi_geometric_for_12_heads() -> str | None:
    # mlx #3071, TensorRT-LLM #1611, HF #28380: 2^(-8i/n) used for a head count that is not a power of two
    from pemath.testing import assert_alibi_close

    n = 12
    slopes = 2.0 ** (-8 * np.arange(1, n + 1) / n)
    rel = -np.abs(np.arange(16)[None, :] - np.arange(16)[:, None])
    try:
        assert_alibi_close((slopes[:, None, None] * rel[None]).astype(np.float32), n, 16, 16, form="symmetric")
    except AssertionError as exc:
        return next(ln for ln in str(exc).splitlines() if ln.startswith("Diagnosis:"))
    return None


def _t5_without_clamp() -> str | None:
    # candle #1312: min(., num_buckets - 1) missing; the buckets keep growing past max_distance
    from pemath.testing import assert_t5_buckets_equal

    rel = np.arange(-300, 300)
    n = np.abs(rel)
    large = 8 + (np.log(np.maximum(n, 1) / 8) / np.log(128 / 8) * 8).astype(np.int64)
    buckets = (rel > 0) * 16 + np.where(n < 8, n, large)
    try:
        assert_t5_buckets_equal(buckets, rel)
    except AssertionError as exc:
        return next(ln for ln in str(exc).splitlines() if ln.startswith("Diagnosis:"))
    return None


def _alibi_slopes_from_head_0() -> str | None:
    # unlisted: get_slopes written with range(n) instead of range(1, n + 1), 16 heads
    from pemath.testing import assert_alibi_close

    n = 16
    slopes = 2.0 ** (-8 * np.arange(n) / n)
    rel = np.arange(16)[None, :] - np.arange(16)[:, None]
    bias = np.where(rel <= 0, slopes[:, None, None] * rel[None], -np.inf).astype(np.float32)
    try:
        assert_alibi_close(bias, n, 16, 16, form="causal")
    except AssertionError as exc:
        return next(ln for ln in str(exc).splitlines() if ln.startswith("Diagnosis:"))
    return None


def _alibi_slopes_halved_exponent() -> str | None:
    # unlisted: 2^(-4(h+1)/n), the exponent's 8 written as 4
    from pemath.testing import assert_alibi_close

    n = 8
    slopes = 2.0 ** (-4 * np.arange(1, n + 1) / n)
    rel = np.arange(12)[None, :] - np.arange(12)[:, None]
    bias = np.where(rel <= 0, slopes[:, None, None] * rel[None], -np.inf).astype(np.float32)
    try:
        assert_alibi_close(bias, n, 12, 12, form="causal")
    except AssertionError as exc:
        return next(ln for ln in str(exc).splitlines() if ln.startswith("Diagnosis:"))
    return None


TABLE_BUGS = {"ALiBi: geometric slopes for 12 heads": _alibi_geometric_for_12_heads,
              "T5: buckets without the clamp": _t5_without_clamp,
              "ALiBi: slopes with the head index from 0": _alibi_slopes_from_head_0,
              "ALiBi: the exponent's 8 written as 4": _alibi_slopes_halved_exponent}


def test_alibi_and_t5_tracker_bugs_are_named():
    assert "the naive slopes 2^(-8(k+1)/12)" in _alibi_geometric_for_12_heads()
    assert "the clamp min(·, 15) is missing" in _t5_without_clamp()


def test_unlisted_alibi_slopes_are_named_by_a_fit():
    assert ("the slopes 2^(-8(h + 0)/16) for h = 0..15 (fitted to the measured slopes: Press et al.'s sequence with "
            "the head index counted from 0 instead of 1)") in _alibi_slopes_from_head_0()
    assert "the slopes 2^(-4(h + 1)/8) for h = 0..7 (fitted to the measured slopes)" in _alibi_slopes_halved_exponent()


# Honest kernels with a scaling: linear scaling on the positions or on the frequencies (rope-bugs.md: equal
# mathematically, not in rounding; both honest), YaRN and Llama 3 with the kernel's own float32 frequencies.
HONEST_SCALED = [
    ("linear: positions divided", lambda x, p: kernel(x, p.astype(np.float32) / np.float32(4.0), layout="half"),
     "half", {"scaling": sc.Linear(4.0)}),
    ("linear: frequencies divided", lambda x, p: kernel(x, p, layout="half",
                                                        inv=(inv_freq32(64, 10000.0) / np.float32(4.0))),
     "half", {"scaling": sc.Linear(4.0)}),
    ("YaRN, float32 frequencies", lambda x, p: kernel(x, p, layout="half", inv=_yarn_inv(64, 10000.0),
                                                      attention=YARN.attention_factor), "half", {"scaling": YARN}),
    ("Llama 3, float32 frequencies", lambda x, p: kernel(x, p, layout="interleaved",
                                                         inv=_inv_of(LLAMA3, 64, 500000.0)),
     "interleaved", {"scaling": LLAMA3, "base": 500000.0}),
]


@pytest.mark.parametrize("name, run, layout, kwargs", HONEST_SCALED, ids=[h[0] for h in HONEST_SCALED])
def test_honest_scaled_kernels_pass(name, run, layout, kwargs):
    x = RNG.standard_normal((LONG.size, 64)).astype(np.float32)
    assert_rope_close(run(x, LONG), x, LONG, layout=layout, **kwargs)


# mlx's fused kernel (mx.fast.rope), where mlx installs: traditional=True is the interleaved layout; positions
# are an offset plus 0, 1, 2, ... per batch row.
MLX_OFFSETS = (0, 4096, 65_536, 999_000)


@pytest.mark.parametrize("dtype_name", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("traditional", [False, True])
def test_honest_mlx_fast_rope_passes(dtype_name, traditional):
    mx = pytest.importorskip("mlx.core", reason="mlx is optional (pip install 'mlx[cpu]')")
    x = RNG.standard_normal((len(MLX_OFFSETS), 1, 24, 64)).astype(np.float32)
    xm = mx.array(x).astype(getattr(mx, dtype_name))
    out = mx.fast.rope(xm, 64, traditional=traditional, base=10000.0, scale=1.0,
                       offset=mx.array(np.array(MLX_OFFSETS, dtype=np.int32)))
    positions = (np.array(MLX_OFFSETS)[:, None] + np.arange(24)[None, :])[:, None, :]
    x_seen = np.array(xm.astype(mx.float32))  # the exact values the kernel received
    got = np.array(out.astype(mx.float32)).astype(BF16 if dtype_name == "bfloat16" else dtype_name)
    assert_rope_close(got, x_seen.astype(got.dtype), positions, layout="interleaved" if traditional else "half")


def _float32_multi_axis(x, comp_pos, freq, layout, dtype):
    """An honest multi-axis kernel: per-pair positions (..., r/2) and frequencies in float32, output in dtype."""
    phase = comp_pos.astype(np.float32) * freq.astype(np.float32)
    cos, sin = np.cos(phase).astype(dtype), np.sin(phase).astype(dtype)
    a, b = pairs(x.astype(dtype), layout, x.shape[-1])
    return unpairs((a * cos - b * sin).astype(dtype), (b * cos + a * sin).astype(dtype), layout)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, BF16], ids=["float32", "float16", "bfloat16"])
def test_honest_multi_axis_kernels_pass(dtype):
    from pemath.rope import mrope_components
    from pemath.rope.axial import axis_frequencies

    x = RNG.standard_normal((1, 24, 64)).astype(np.float32).astype(dtype)
    p = _mrope_positions() + 60_000  # long positions too
    comp = mrope_components([12, 10, 10], interleaved=True)
    freq = np.asarray(rope.inv_freq(64, base=5e6))
    per_pair = np.moveaxis(p[comp][:, 0, :], 0, -1)[None]  # (1, seq, 32): each pair's own component
    assert_rope_close(_float32_multi_axis(x, per_pair, freq, "half", dtype), x, p + 0, spec=QWEN3_VL)
    g = _grid()
    xg = RNG.standard_normal((1, 30, 64)).astype(np.float32).astype(dtype)
    f = np.concatenate(axis_frequencies([32, 32], 10000.0, "strided"))
    per_pair = np.concatenate([np.repeat(g[..., :1], 16, -1), np.repeat(g[..., 1:], 16, -1)], -1)
    assert_rope_close(_float32_multi_axis(xg, per_pair, f, "half", dtype), xg, g, spec=PIXTRAL)


@pytest.mark.parametrize("name, dtype_words", [
    ("phase computed in bfloat16", "about bfloat16's (u = 2^-8)"),
    ("phase computed in float16", "about float16's (u = 2^-11)"),
])
def test_a_low_precision_phase_is_measured_as_such(name, dtype_words):
    case = next(c for c in BUGS if c.name == name)
    _, message = _verdict(case)
    measured = [ln for ln in message.splitlines() if ln.startswith("Measured from the output: the angles scatter")]
    assert measured and dtype_words in measured[0], message
