"""pemath.testing.check_rope_kernel: a user's kernel driven over what breaks kernels, one table back."""

from __future__ import annotations

import numpy as np
import pytest

from pemath import rope
from pemath.testing import ConformanceReport, check_rope_kernel

ml_dtypes = pytest.importorskip("ml_dtypes")


def honest(x, p):
    """A kernel with the documented convention: x (batch, seq, heads, d), positions (batch, seq)."""
    return rope.apply(x, p[:, :, None], layout="half")


def test_an_honest_kernel_passes_every_case_in_every_dtype():
    report = check_rope_kernel(honest, layout="half", head_dim=64)
    assert isinstance(report, ConformanceReport) and report.passed, report
    assert len(report.rows) == 13 * 3
    assert {r.dtype for r in report.rows} == {"float32", "float16", "bfloat16"}
    text = str(report)
    assert text.splitlines()[0].endswith("39 of 39 cases pass")
    for case in ("one token at position 0", "sequence of 4097", "either side of 48039", "left padding",
                 "packed sequences", "rows offset by", "exact-integer limits", "long positions up to 1e+06"):
        assert case in text
    report.assert_ok()


def test_an_off_by_one_kernel_fails_every_case_with_the_cause():
    report = check_rope_kernel(lambda x, p: rope.apply(x, p[:, :, None] + 1, layout="half"),
                               layout="half", head_dim=64, dtypes=("float32",))
    assert not report.passed and len(report.failures) == 13
    assert all("shifted by +1" in r.finding for r in report.failures), report
    with pytest.raises(AssertionError, match="0 of 13 cases pass"):
        report.assert_ok()


def test_a_kernel_ignoring_positions_fails_only_where_they_are_not_0_1_2():
    def ignores(x, p):
        return rope.apply(x, np.arange(x.shape[1])[None, :, None], layout="half")

    report = check_rope_kernel(ignores, layout="half", head_dim=32, dtypes=("float32",))
    failed = {r.case for r in report.failures}
    assert {"left padding (HF position_ids)", "rows offset by 0, 100, 4096", "packed sequences (cu_seqlens)"} <= failed
    assert "sequence of 129" not in failed and "one token at position 0" not in failed
    padding = next(r for r in report.rows if r.case.startswith("left padding"))
    assert "given positions were ignored" in padding.finding


def test_positions_rounded_to_bfloat16_fail_past_256():
    def bf16_positions(x, p):
        return rope.apply(x, p.astype(ml_dtypes.bfloat16).astype(np.float64)[:, :, None], layout="half")

    report = check_rope_kernel(bf16_positions, layout="half", head_dim=32, dtypes=("float32",))
    failed = {r.case for r in report.failures}
    assert "sequence of 129" not in failed and "sequence of 4097" in failed
    limits = next(r for r in report.rows if "exact-integer limits" in r.case)
    assert not limits.passed and limits.finding.startswith("positions rounded to bfloat16 before the phase"), report
    assert "Diagnosis:" in limits.message and "Mismatched elements" in limits.message


def test_in_place_kernels_and_kernels_that_clobber_their_input():
    def in_place(x, p):
        x[...] = rope.apply(x, p[:, :, None], layout="interleaved")

    assert check_rope_kernel(in_place, layout="interleaved", head_dim=16, dtypes=("float32",)).passed

    def clobbers(x, p):
        y = rope.apply(x, p[:, :, None], layout="interleaved")
        x[...] = 0
        return y

    report = check_rope_kernel(clobbers, layout="interleaved", head_dim=16, dtypes=("float32",))
    assert len(report.failures) == 13 and all("overwrote its input" in r.finding for r in report.failures)


def test_a_kernel_that_raises_is_a_failed_row_not_an_error():
    def no_bf16(x, p):
        if x.dtype == ml_dtypes.bfloat16:
            raise NotImplementedError("bfloat16 is not supported")
        return honest(x, p)

    report = check_rope_kernel(no_bf16, layout="half", head_dim=16)
    assert {r.dtype for r in report.failures} == {"bfloat16"}
    assert all("raised NotImplementedError: bfloat16 is not supported" in r.finding for r in report.failures)


def test_cu_seqlens_reaches_a_varlen_kernel():
    seen = []

    def varlen(x, p, cu_seqlens=None):
        seen.append(None if cu_seqlens is None else cu_seqlens.tolist())
        if cu_seqlens is None:
            return honest(x, p)
        pos = np.concatenate([np.arange(b - a) for a, b in zip(cu_seqlens[:-1], cu_seqlens[1:])])
        return rope.apply(x, pos[None, :, None], layout="half")

    assert check_rope_kernel(varlen, layout="half", head_dim=16, dtypes=("float32",)).passed
    assert [0, 5, 16, 32, 33] in seen


def test_a_spec_from_a_config_with_partial_rotary():
    spec = rope.from_hf_config({"model_type": "gpt_neox", "hidden_size": 256, "num_attention_heads": 4,
                                "rotary_pct": 0.25, "rotary_emb_base": 10000})
    assert spec.rotary_dim_for(64) == 16
    assert check_rope_kernel(lambda x, p: rope.apply(x, p[:, :, None], spec=spec), spec,
                             dtypes=("float32",)).passed

    def whole_head(x, p):  # rotates all 64 features
        return rope.apply(x, p[:, :, None], layout="half")

    report = check_rope_kernel(whole_head, spec, dtypes=("float32",))
    assert len(report.failures) >= 12 and report.rows[0].passed  # position 0 is the identity either way


@pytest.mark.parametrize("kwargs, error, match", [
    ({"fn": 3}, TypeError, "fn must be a callable"),
    ({"dtypes": "float32"}, TypeError, "dtypes must be a non-empty tuple"),
    ({"dtypes": ("float8",)}, ValueError, "dtypes must be among"),
    ({"backend": "tensorflow"}, ValueError, "backend must be one of"),
    ({"head_dim": 63}, ValueError, "head_dim must be even"),
    ({"head_dim": 8.0}, TypeError, "head_dim must be an integer"),
    ({"max_position": 100}, ValueError, "max_position must be >= 4097"),
    ({"heads": 0}, ValueError, "heads must be >= 1"),
    ({"seed": -1}, ValueError, "seed must be >= 0"),
])
def test_bad_arguments_are_refused_with_their_name(kwargs, error, match):
    kw = {"fn": honest, "layout": "half", "head_dim": 16, **kwargs}
    with pytest.raises(error, match=match):
        check_rope_kernel(kw.pop("fn"), **kw)


@pytest.mark.torch
def test_the_torch_backend_with_an_hf_style_kernel():
    torch = pytest.importorskip("torch", reason="torch is optional (pip install torch==2.13.0)")

    def hf(x, p):  # LlamaRotaryEmbedding + apply_rotary_pos_emb, x (batch, seq, heads, d)
        d = x.shape[-1]
        inv = 1.0 / (10000 ** (torch.arange(0, d, 2, dtype=torch.int64).float() / d))
        freqs = p[:, :, None].float() * inv
        emb = torch.cat((freqs, freqs), dim=-1)[:, :, None, :]
        cos, sin = emb.cos().to(x.dtype), emb.sin().to(x.dtype)
        x1, x2 = x[..., : d // 2], x[..., d // 2:]
        return x * cos + torch.cat((-x2, x1), dim=-1) * sin

    report = check_rope_kernel(hf, layout="half", head_dim=64, backend="torch")
    assert report.passed, report


def test_an_in_place_kernel_returning_a_view_of_x_passes():
    def in_place_view(x, p):
        x[...] = rope.apply(x, p[:, :, None], layout="half")
        return x[...]

    assert check_rope_kernel(in_place_view, layout="half", head_dim=16, dtypes=("float32",)).passed


def test_the_offsets_case_stays_at_the_smallest_max_position():
    report = check_rope_kernel(honest, layout="half", head_dim=16, dtypes=("float32",), max_position=4097)
    assert any(r.case.startswith("rows offset by 0, 100, 4081") for r in report.rows)
