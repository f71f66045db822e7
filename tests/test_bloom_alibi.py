"""pipelines.falcon_alibi (bfloat16 throughout) and pipelines.bloom_alibi (float32, one rounding), bit for bit with
transformers' code; Falcon's is named when compared with the exact bias, BLOOM's passes."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pemath import alibi
from pemath.testing import assert_alibi_close, pipelines

ml_dtypes = pytest.importorskip("ml_dtypes")


def hf_build_alibi_tensor(torch, attention_mask, num_heads, dtype, *, falcon=True):
    """transformers' build_alibi_tensor, as written there: Falcon's (``slopes.bfloat16()``) or BLOOM's (float32)."""
    batch_size, seq_length = attention_mask.shape
    closest_power_of_2 = 2 ** math.floor(math.log2(num_heads))
    base = torch.tensor(2 ** (-(2 ** -(math.log2(closest_power_of_2) - 3))), dtype=torch.float32)
    powers = torch.arange(1, 1 + closest_power_of_2, dtype=torch.int32)
    slopes = torch.pow(base, powers)
    if closest_power_of_2 != num_heads:
        extra_base = torch.tensor(2 ** (-(2 ** -(math.log2(2 * closest_power_of_2) - 3))), dtype=torch.float32)
        num_remaining_heads = min(closest_power_of_2, num_heads - closest_power_of_2)
        extra_powers = torch.arange(1, 1 + 2 * num_remaining_heads, 2, dtype=torch.int32)
        slopes = torch.cat([slopes, torch.pow(extra_base, extra_powers)], dim=0)
    arange_tensor = ((attention_mask.cumsum(dim=-1) - 1) * attention_mask)[:, None, :]
    alibi_t = (slopes[..., None].bfloat16() if falcon else slopes[..., None]) * arange_tensor
    return alibi_t.reshape(batch_size * num_heads, 1, seq_length).to(dtype)


def _mask() -> np.ndarray:
    mask = np.ones((2, 3000), dtype=np.int64)
    mask[1, :100] = 0  # left padding
    return mask


@pytest.mark.torch
@pytest.mark.parametrize("heads", [12, 40, 64, 71, 112])
@pytest.mark.parametrize("libm", ["exact", "torch"])
def test_bit_for_bit_with_transformers_code(heads, libm):
    torch = pytest.importorskip("torch", reason="torch is optional (pip install torch==2.13.0)")
    mask = _mask()
    for falcon, pipeline in ((True, pipelines.falcon_alibi), (False, pipelines.bloom_alibi)):
        ref = hf_build_alibi_tensor(torch, torch.from_numpy(mask), heads, torch.bfloat16, falcon=falcon)
        got = pipeline(heads, mask, libm=libm, **({} if falcon else {"dtype": "bfloat16"}))
        assert got.dtype == ml_dtypes.bfloat16 and got.shape == (2, heads, 1, 3000)
        assert np.array_equal(got.astype(np.float32), ref.float().numpy().reshape(2, heads, 1, 3000))


def test_the_bfloat16_roundings_are_there():
    b = pipelines.falcon_alibi(8, np.ones((1, 600), dtype=np.int64)).astype(np.float64)
    # head 0: slope 2^-1; key index 257 is 256 in bfloat16, 513 is 512
    assert b[0, 0, 0, 257] == 128.0 and b[0, 0, 0, 513] == 256.0
    # a padded position has index 0
    m = np.ones((1, 5), dtype=np.int64)
    m[0, :2] = 0
    assert pipelines.falcon_alibi(8, m)[0, 0, 0].astype(np.float64).tolist() == [0.0, 0.0, 0.0, 0.5, 1.0]
    # BLOOM: 0.5 * 257 = 128.5 in float32, rounded once to bfloat16 (128); in float32 it stays
    assert pipelines.bloom_alibi(8, np.ones((1, 600), dtype=np.int64), dtype="float32")[0, 0, 0, 257] == 128.5


def test_bloom_and_falcon_differ_where_the_issue_measured():
    """At 40 heads and 300 keys, 2336 of the 12000 values differ (BLOOM rounds once, Falcon three times)."""
    mask = np.ones((1, 300), dtype=np.int64)
    bloom = pipelines.bloom_alibi(40, mask, dtype="bfloat16").astype(np.float64)
    falcon = pipelines.falcon_alibi(40, mask).astype(np.float64)
    assert int(np.count_nonzero(bloom != falcon)) == 2336 and bloom.size == 12000


@pytest.mark.parametrize("heads", [40, 64])
def test_falcon_bfloat16_is_named_against_the_exact_bias(heads):
    q, k = 4, 3000
    truth = np.asarray(alibi.bias(heads, q, k, form="shifted"))
    row = pipelines.falcon_alibi(heads, np.ones((1, k), dtype=np.int64))[0, :, 0, :].astype(np.float64)
    actual = np.where(np.isneginf(truth), -np.inf, row[:, None, :]).astype(ml_dtypes.bfloat16)
    with pytest.raises(AssertionError) as exc:
        assert_alibi_close(actual, heads, q, k, form="shifted")
    assert "Diagnosis: the output matches Falcon's bfloat16 pipeline" in str(exc.value)
    assert "BLOOM" not in str(exc.value).split("Diagnosis:")[1].split("(")[0]
    bloom = pipelines.bloom_alibi(heads, np.ones((1, k), dtype=np.int64), dtype="bfloat16")[0, :, 0, :].astype(
        np.float64)
    assert_alibi_close(np.where(np.isneginf(truth), -np.inf, bloom[:, None, :]).astype(ml_dtypes.bfloat16), heads, q,
                       k, form="shifted")


@pytest.mark.parametrize("kwargs, error, match", [
    ({"heads": 0}, ValueError, "heads must be >= 1"),
    ({"heads": 8.0}, TypeError, "heads must be an integer"),
    ({"attention_mask": np.ones(5, dtype=np.int64)}, ValueError, "attention_mask must be 2-D"),
    ({"attention_mask": np.full((1, 5), 2)}, ValueError, "only 0 and 1"),
    ({"attention_mask": np.ones((1, 5))}, TypeError, "attention_mask must hold 0 and 1"),
    ({"libm": "fast"}, ValueError, "libm must be one of"),
])
@pytest.mark.parametrize("pipeline", [pipelines.bloom_alibi, pipelines.falcon_alibi])
def test_bad_arguments(kwargs, error, match, pipeline):
    kw = {"heads": 8, "attention_mask": np.ones((1, 5), dtype=np.int64), **kwargs}
    with pytest.raises(error, match=match):
        pipeline(kw.pop("heads"), kw.pop("attention_mask"), **kw)


@pytest.mark.torch
@pytest.mark.parametrize("heads", [12, 40, 71])
def test_bit_for_bit_with_the_installed_transformers(heads):
    """Against transformers' own modules (BLOOM: float32 then one rounding; Falcon: bfloat16 throughout)."""
    torch = pytest.importorskip("torch", reason="torch is optional (pip install torch==2.13.0)")
    bloom = pytest.importorskip("transformers.models.bloom.modeling_bloom", reason="transformers is optional")
    falcon = pytest.importorskip("transformers.models.falcon.modeling_falcon", reason="transformers is optional")
    mask = _mask()
    for module, pipeline in ((bloom, pipelines.bloom_alibi), (falcon, pipelines.falcon_alibi)):
        ref = module.build_alibi_tensor(torch.from_numpy(mask), heads, torch.bfloat16).float().numpy()
        got = pipeline(heads, mask, libm="torch", **({} if pipeline is pipelines.falcon_alibi else
                                                   {"dtype": "bfloat16"})).astype(np.float32)
        assert np.array_equal(got, ref.reshape(2, heads, 1, 3000)), pipeline.__name__
