"""pipelines.bloom_alibi: BLOOM's and Falcon's bfloat16 ALiBi, bit for bit; named when compared with the exact bias."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pemath import alibi
from pemath.testing import assert_alibi_close, pipelines

ml_dtypes = pytest.importorskip("ml_dtypes")


def hf_build_alibi_tensor(torch, attention_mask, num_heads, dtype):
    """transformers' build_alibi_tensor (BLOOM, Falcon), as written there."""
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
    alibi_t = slopes[..., None].bfloat16() * arange_tensor
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
    ref = hf_build_alibi_tensor(torch, torch.from_numpy(mask), heads, torch.bfloat16).float().numpy()
    got = pipelines.bloom_alibi(heads, mask, libm=libm)
    assert got.dtype == ml_dtypes.bfloat16 and got.shape == (2, heads, 1, 3000)
    assert np.array_equal(got.astype(np.float32), ref.reshape(2, heads, 1, 3000))


def test_the_bfloat16_roundings_are_there():
    b = pipelines.bloom_alibi(8, np.ones((1, 600), dtype=np.int64)).astype(np.float64)
    # head 0: slope 2^-1; key index 257 is 256 in bfloat16, 513 is 512
    assert b[0, 0, 0, 257] == 128.0 and b[0, 0, 0, 513] == 256.0
    # a padded position has index 0
    m = np.ones((1, 5), dtype=np.int64)
    m[0, :2] = 0
    assert pipelines.bloom_alibi(8, m)[0, 0, 0].astype(np.float64).tolist() == [0.0, 0.0, 0.0, 0.5, 1.0]


@pytest.mark.parametrize("heads", [40, 64])
def test_falcon_bfloat16_is_named_against_the_exact_bias(heads):
    q, k = 4, 3000
    truth = np.asarray(alibi.bias(heads, q, k, form="shifted"))
    row = pipelines.bloom_alibi(heads, np.ones((1, k), dtype=np.int64))[0, :, 0, :].astype(np.float64)
    actual = np.where(np.isneginf(truth), -np.inf, row[:, None, :]).astype(ml_dtypes.bfloat16)
    with pytest.raises(AssertionError) as exc:
        assert_alibi_close(actual, heads, q, k, form="shifted")
    assert "Diagnosis: the output matches BLOOM's and Falcon's bfloat16 pipeline" in str(exc.value)


@pytest.mark.parametrize("kwargs, error, match", [
    ({"heads": 0}, ValueError, "heads must be >= 1"),
    ({"heads": 8.0}, TypeError, "heads must be an integer"),
    ({"attention_mask": np.ones(5, dtype=np.int64)}, ValueError, "attention_mask must be 2-D"),
    ({"attention_mask": np.full((1, 5), 2)}, ValueError, "only 0 and 1"),
    ({"attention_mask": np.ones((1, 5))}, TypeError, "attention_mask must hold 0 and 1"),
    ({"libm": "fast"}, ValueError, "libm must be one of"),
])
def test_bad_arguments(kwargs, error, match):
    kw = {"heads": 8, "attention_mask": np.ones((1, 5), dtype=np.int64), **kwargs}
    with pytest.raises(error, match=match):
        pipelines.bloom_alibi(kw.pop("heads"), kw.pop("attention_mask"), **kw)
