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


BUGS: list[Case] = [
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
    Case("exponent by integer division (every frequency 1)", bug_int_division_exponent, None),
    Case("one frequency per feature instead of per pair", bug_feature_frequencies, None, layout="interleaved"),
    Case("sin term missing (x * cos only)", bug_sin_missing, None),
]


def _inputs(case: Case) -> tuple[np.ndarray, np.ndarray]:
    shape = case.x_shape or (case.positions.size, case.d)
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
    try:
        assert_rope_close(actual, x, pos, layout=case.layout, **case.kwargs)
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


def catalogue_figures() -> dict[str, int]:
    rejected = diagnosed = 0
    diagnosable = sum(c.cause is not None for c in BUGS)
    for case in BUGS:
        ok, message = _verdict(case)
        rejected += ok
        diag = next((ln for ln in message.splitlines() if ln.startswith("Diagnosis:")), "")
        diagnosed += case.cause is not None and case.cause in diag
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
    return {"buggy": len(BUGS), "rejected": rejected, "diagnosable": diagnosable, "diagnosed": diagnosed,
            "honest": total, "accepted": honest}


def test_catalogue_figures():
    f = catalogue_figures()
    print(
        f"\ncatalogue: {f['rejected']} buggy rejected / {f['buggy']}, {f['diagnosed']} diagnosed / "
        f"{f['diagnosable']} diagnosable, {f['accepted']} honest accepted / {f['honest']}"
    )
    assert f["rejected"] == f["buggy"]
    assert f["diagnosed"] == f["diagnosable"]
    assert f["accepted"] == f["honest"]
