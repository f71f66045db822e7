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
    assert len(report.rows) == 16 * 3
    assert {r.dtype for r in report.rows} == {"float32", "float16", "bfloat16"}
    text = str(report)
    assert text.splitlines()[0].endswith("48 of 48 cases pass")
    for case in ("one token at position 0", "sequence of 4097", "either side of 48039", "left padding",
                 "packed sequences", "rows offset by", "exact-integer limits", "long positions up to 1e+06"):
        assert case in text
    report.assert_ok()


def test_an_off_by_one_kernel_fails_every_case_with_the_cause():
    report = check_rope_kernel(lambda x, p: rope.apply(x, p[:, :, None] + 1, layout="half"),
                               layout="half", head_dim=64, dtypes=("float32",))
    assert not report.passed and len(report.failures) == 16
    assert all("shifted by +1" in r.finding for r in report.failures), report
    with pytest.raises(AssertionError, match="0 of 16 cases pass"):
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
    assert len(report.failures) == 16 and all("overwrote its input" in r.finding for r in report.failures)


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


# --------------------------------------------------------------------------- strided memory


def _as_if_contiguous(x):
    """What a kernel that computes flat offsets i * d + j from the shape sees: x's buffer read contiguously."""
    itemsize = x.itemsize
    b, s, h, d = x.shape
    return np.lib.stride_tricks.as_strided(x, shape=x.shape, strides=(s * h * d * itemsize, h * d * itemsize,
                                                                     d * itemsize, itemsize))


def test_a_kernel_that_ignores_strides_fails_only_the_strided_cases_and_says_so():
    def flat(x, p):
        return rope.apply(np.array(_as_if_contiguous(x)), p[:, :, None], layout="half")

    report = check_rope_kernel(flat, layout="half", head_dim=64, dtypes=("float32",))
    failed = {r.case for r in report.failures}
    assert failed == {"strided x: transposed (b, h, s, d) memory", "strided x: k slice of a fused qkv buffer",
                      "strided x: rows padded to head_dim + 16"}, report
    assert all("fails only with x not contiguous" in r.finding for r in report.failures), report


def test_an_in_place_kernel_writing_outside_its_view_fails():
    def in_place_flat(x, p):
        y = rope.apply(np.ascontiguousarray(x), p[:, :, None], layout="half")
        _as_if_contiguous(x)[...] = y  # writes the buffer from x's first element on, as if contiguous

    report = check_rope_kernel(in_place_flat, layout="half", head_dim=64, dtypes=("float32",))
    qkv = next(r for r in report.rows if "qkv" in r.case)
    assert not qkv.passed and "wrote outside x" in qkv.finding, report


def test_an_honest_in_place_kernel_passes_the_strided_cases():
    def in_place(x, p):
        x[...] = rope.apply(x, p[:, :, None], layout="half")

    report = check_rope_kernel(in_place, layout="half", head_dim=64, dtypes=("float32", "bfloat16"))
    assert report.passed, report
    assert sum("strided" in r.case for r in report.rows) == 6


# --------------------------------------------------------------------------- the backward pass


def test_a_backward_kernel_is_judged_against_the_transposed_rotation():
    good = check_rope_kernel(lambda dy, p: rope.apply(dy, p[:, :, None], layout="half", inverse=True),
                             layout="half", head_dim=64, dtypes=("float32", "bfloat16"), direction="backward")
    assert good.passed, good
    forward = check_rope_kernel(lambda dy, p: rope.apply(dy, p[:, :, None], layout="half"), layout="half",
                                head_dim=64, dtypes=("float32",), direction="backward")
    assert {r.case for r in forward.failures} == {r.case for r in forward.rows} - {"one token at position 0"}
    assert all("the forward rotation R(pθ) instead of its transpose" in r.finding for r in forward.failures), forward
    assert "Backward pass: dx must be the transposed rotation" in forward.failures[0].message


def test_a_backward_kernel_with_positions_off_by_one_is_named_in_backward_terms():
    from pemath.testing import assert_rope_backward_close

    dy = np.random.default_rng(0).standard_normal((16, 64)).astype(np.float32)
    pos = np.arange(16)
    assert_rope_backward_close(rope.apply(dy, pos, layout="half", inverse=True), dy, pos, layout="half")
    with pytest.raises(AssertionError) as info:
        assert_rope_backward_close(rope.apply(dy, pos + 1, layout="half", inverse=True), dy, pos, layout="half")
    msg = str(info.value)
    assert msg.startswith("Backward pass:") and "positions shifted by -1" in msg  # -p - 1 = -(p + 1)


def test_the_backward_scaling_length_comes_from_the_forward_positions():
    """LongRoPE's regime is chosen from max(forward positions) + 1, not from the negated ones."""
    from pemath import scaling as sc
    from pemath.testing import assert_rope_backward_close

    s = sc.LongRoPE(short_factor=[1.0] * 16, long_factor=[4.0] * 16, original_max_position=64, attention_factor=1.0)
    dy = np.random.default_rng(1).standard_normal((100, 32)).astype(np.float32)
    pos = np.arange(100)  # beyond 64: the long factors
    dx = rope.apply(dy, pos, layout="half", scaling=s, inverse=True, seq_len=100)
    assert_rope_backward_close(dx, dy, pos, layout="half", scaling=s)


# --------------------------------------------------------------------------- multi-axis kernels

QWEN3_VL = rope.Spec("half", head_dim=64, mrope_section=[12, 10, 10], mrope_interleaved=True, base=5e6)
PIXTRAL = rope.Spec("half", head_dim=64, axial_dims=[32, 32], axial_grouping="pairs", axial_frequencies="strided",
                    base=10000.0)


def test_an_mrope_kernel_is_swept_with_qwen2_vl_position_ids():
    """vLLM's MRotaryEmbedding convention: positions (3, tokens); here (3, batch, seq)."""
    good = check_rope_kernel(lambda x, p: rope.apply(x, p[..., None], spec=QWEN3_VL), QWEN3_VL,
                             dtypes=("float32", "bfloat16"))
    assert good.passed and len(good.rows) == 2 * 11, good
    text_only = QWEN3_VL.replace(mrope_section=None, mrope_interleaved=False)
    bad = check_rope_kernel(lambda x, p: rope.apply(x, p[0][..., None], spec=text_only), QWEN3_VL,
                            dtypes=("float32",))
    failed = {r.case for r in bad.failures}
    assert all("image" in c or "video" in c or "strided" in c for c in failed) and len(failed) == 7, bad
    assert all("M-RoPE position ids not built" in r.finding for r in bad.failures), bad


def test_an_axial_kernel_is_swept_over_grids():
    good = check_rope_kernel(lambda x, p: rope.apply(x, p[:, :, None, :], spec=PIXTRAL), PIXTRAL,
                             dtypes=("float32",))
    assert good.passed and len(good.rows) == 9, good
    swapped = check_rope_kernel(lambda x, p: rope.apply(x, p[:, :, None, ::-1], spec=PIXTRAL), PIXTRAL,
                                dtypes=("float32",))
    assert len(swapped.failures) == 8 and all("axes in reverse order" in r.finding for r in swapped.failures), swapped


def test_timms_pixel_rope_is_swept_with_fractional_coordinates():
    spec = rope.pixel_spec(64, max_res=224.0)
    report = check_rope_kernel(lambda x, p: rope.apply(x, p[..., None], spec=spec), spec, dtypes=("float32",))
    assert report.passed, report
    assert sum("pixel coordinates" in r.case for r in report.rows) == 3


def test_figures_for_multi_axis_kernels():
    """Print the conformance tables of an M-RoPE and an axial kernel (pytest -s)."""
    print()
    print(check_rope_kernel(lambda x, p: rope.apply(x, p[..., None], spec=QWEN3_VL), QWEN3_VL, dtypes=("float32",)))
    print(check_rope_kernel(lambda x, p: rope.apply(x, p[:, :, None, :], spec=PIXTRAL), PIXTRAL, dtypes=("float32",)))
