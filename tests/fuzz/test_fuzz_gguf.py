"""Fuzzing rope.from_gguf and rope.gguf_differences: hostile paths, readers, contexts, layers and configs."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pemath import rope
from tests.gguf_records import write_kv

from ._fuzz import Spec, covers, fuzz_settings, ints, loosen, maybe, reject, run_spec, valid

gguf = pytest.importorskip("gguf", reason="gguf is optional (pip install 'pemath[gguf]')")

_DIR = Path(tempfile.mkdtemp())


def _file(name: str, arch: str, kv: dict, tensors: dict | None = None) -> str:
    return write_kv(_DIR / name, arch, kv, tensors)


QWEN = _file("qwen.gguf", "qwen2", {"embedding_length": 256, "attention.head_count": 4, "block_count": 4,
                                     "rope.freq_base": 1000000.0})
PHI = _file("phi.gguf", "phi3", {"embedding_length": 256, "attention.head_count": 4, "block_count": 4,
                                  "rope.scaling.original_context_length": 4096},
            {"rope_factors_long.weight": np.full(32, 4.0), "rope_factors_short.weight": np.ones(32)})
NOT_GGUF = str(_DIR / "not.gguf")
Path(NOT_GGUF).write_bytes(b"not a gguf file at all")
CONFIG = {"model_type": "qwen2", "hidden_size": 256, "num_attention_heads": 4, "num_hidden_layers": 4,
          "rope_theta": 1000000.0}


def _paths(base: dict[str, Any]) -> st.SearchStrategy:
    return st.sampled_from([valid(QWEN), valid(Path(QWEN), "Path"), valid(gguf.GGUFReader(QWEN), "reader"),
                            reject(NOT_GGUF, "not GGUF"), reject(str(_DIR / "missing.gguf"), "missing"),
                            reject(3), reject(None), reject(b"x.gguf", "bytes")])


def _check(result: Any, kw: dict[str, Any]) -> None:
    assert isinstance(result, (rope.Spec, rope.NoRope, list))


FROM_GGUF = Spec(
    rope.from_gguf,
    st.fixed_dictionaries({"path": st.sampled_from([QWEN, PHI]), "n_ctx": st.just(8192)}),
    # None is refused for the LongRoPE file (llama.cpp chooses its factors by n_ctx): loosened
    {"path": _paths, "n_ctx": loosen(ints(minimum=1, optional=True, typical=(4096, 8192))),
     "layer": ints(minimum=0, maximum=3, optional=True, typical=(0, 3))},
    _check, args=("path",),
)
DIFFERENCES = Spec(
    rope.gguf_differences,
    st.fixed_dictionaries({"path": st.just(QWEN), "config": st.just(CONFIG)}),
    {"path": _paths, "config": lambda b: st.sampled_from([
        valid(CONFIG), reject(str(_DIR / "missing.json"), "missing"), reject(3), reject(None),
        reject({"model_type": "qwen2"}, "no sizes"), maybe({**CONFIG, "rope_theta": 10000.0}, "other base")]),
     "n_ctx": ints(minimum=1, optional=True, typical=(4096,)), "layer": ints(minimum=0, maximum=3, optional=True,
                                                                             typical=(0,))},
    _check, args=("path", "config"),
)


@covers("pemath.rope.from_gguf")
@fuzz_settings(scale=0.3)
@given(st.data())
def test_from_gguf(data):
    run_spec(FROM_GGUF, data)


@covers("pemath.rope.gguf_differences")
@fuzz_settings(scale=0.3)
@given(st.data())
def test_gguf_differences(data):
    run_spec(DIFFERENCES, data)
