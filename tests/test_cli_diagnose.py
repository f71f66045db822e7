"""``pemath diagnose``: saved arrays in, the oracle's report out; a bad input is one line, never a traceback."""

from __future__ import annotations

import json

import numpy as np
import pytest

from pemath import models, rope
from pemath.cli import main

RNG = np.random.default_rng(11)
X = RNG.standard_normal((2, 4, 16, 64)).astype(np.float32)  # (batch, heads, seq, dim)
PID = np.tile(np.arange(16), (2, 1))  # HF position_ids (batch, seq)


def _save(tmp_path, name="arrays.npz", **arrays):
    path = tmp_path / name
    np.savez(path, **arrays)
    return str(path)


def _run(capsys, *argv):
    rc = main(list(argv))
    out = capsys.readouterr()
    return rc, out.out, out.err


def _one_line_error(rc, out, err, *words):
    assert rc == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("pemath diagnose: error: "), err
    assert "Traceback" not in err
    for w in words:
        assert w in lines[0], lines[0]


def test_a_passing_output_with_hf_position_ids(tmp_path, capsys):
    path = _save(tmp_path, x=X, actual=rope.apply(X, PID[:, None, :], layout="half"), position_ids=PID)
    rc, out, _ = _run(capsys, "diagnose", path, "--layout", "half")
    assert rc == 0
    assert "positions (2, 16) HF position_ids (batch, seq) against x (batch, heads, seq, dim)" in out
    assert out.strip().endswith("within the derived tolerance")


def test_a_failing_output_prints_the_report_and_exits_1(tmp_path, capsys):
    path = _save(tmp_path, x=X, actual=rope.apply(X, PID[:, None, :] + 1, layout="half"), positions=PID)
    rc, out, _ = _run(capsys, "diagnose", path, "--layout", "half")
    assert rc == 1
    assert "Mismatched elements" in out and "Diagnosis: the output matches positions shifted by +1" in out


def test_separate_files_default_positions_and_a_config(tmp_path, capsys):
    cfg = {"model_type": "llama", "hidden_size": 256, "num_attention_heads": 4, "rope_theta": 500000.0}
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    spec = rope.from_hf_config(cfg)
    np.save(tmp_path / "x.npy", X)
    np.save(tmp_path / "y.npy", rope.apply(X, np.arange(16), spec=spec))
    rc, out, err = _run(capsys, "diagnose", "--x", str(tmp_path / "x.npy"), "--actual", str(tmp_path / "y.npy"),
                        "--config", str(tmp_path / "config.json"))
    assert rc == 0, out + err
    assert "positions 0 .. 15 along axis 2 (none saved)" in out and "base=500000.0" in out


def test_a_registered_model(tmp_path, capsys):
    spec = models.get("llama-3.1-8b").spec()
    x = RNG.standard_normal((1, 2, 8, 128)).astype(np.float32)
    path = _save(tmp_path, x=x, actual=rope.apply(x, np.arange(8), spec=spec))
    assert _run(capsys, "diagnose", path, "--model", "llama-3.1-8b")[0] == 0


def test_a_bfloat16_output_saved_as_float32(tmp_path, capsys):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    y = rope.apply(X, np.arange(16), layout="half").astype(ml_dtypes.bfloat16)
    path = _save(tmp_path, x=X, actual=y.astype(np.float32))
    assert _run(capsys, "diagnose", path, "--layout", "half")[0] == 1  # judged as a float32 output: too coarse
    assert _run(capsys, "diagnose", path, "--layout", "half", "--dtype", "bfloat16")[0] == 0
    _one_line_error(*_run(capsys, "diagnose", _save(tmp_path, "f32.npz", x=X, actual=X * 1.001),
                          "--layout", "half", "--dtype", "bfloat16"), "not bfloat16 numbers")


@pytest.mark.parametrize("make, argv, words", [
    (lambda t: str(t / "none.npz"), ["--layout", "half"], ["no such file", "none.npz"]),
    (lambda t: _save(t, q=X, outt=X), ["--layout", "half"], ["holds ['outt', 'q']", "'actual'"]),
    (lambda t: _save(t, x=X, actual=X[:, :, :8]), ["--layout", "half"], ["actual has shape (2, 4, 8, 64)"]),
    (lambda t: _save(t, x=X, actual=X), ["--model", "llama-9"], ["no registered model named 'llama-9'",
                                                                 "did you mean"]),
    (lambda t: _save(t, x=X, actual=X), [], ["say which RoPE"]),
    (lambda t: _save(t, x=X, actual=X, positions=np.arange(5)), ["--layout", "half"],
     ["positions of shape (5,) do not fit x of shape (2, 4, 16, 64)"]),
    (lambda t: _save(t, x=X, actual=X), ["--model", "llama-3.1-8b"], ["x.shape[-1] is 64", "head_dim 128"]),
    (lambda t: _save(t, x=X, actual=X), ["--layout", "half", "--rotary-dim", "65"], ["rotary_dim"]),
    (lambda t: _save(t, x=X, actual=X), ["--config", "/nonexistent/config.json"], ["No such file"]),
    (lambda t: _save(t, x=X, actual=X), ["--model", "llama-3.1-8b", "--base", "5"], ["--base and --rotary-dim"]),
    (lambda t: str(t / "bad.txt"), ["--layout", "half"], ["no such file"]),
])
def test_bad_inputs_are_one_line(tmp_path, capsys, make, argv, words):
    _one_line_error(*_run(capsys, "diagnose", make(tmp_path), *argv), *words)


def test_files_of_the_wrong_kind(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("hello")
    _one_line_error(*_run(capsys, "diagnose", str(tmp_path / "notes.txt"), "--layout", "half"),
                    "neither .npz, .npy nor .pt")
    (tmp_path / "broken.npz").write_bytes(b"not a zip file")
    _one_line_error(*_run(capsys, "diagnose", str(tmp_path / "broken.npz"), "--layout", "half"), "cannot read")
    np.save(tmp_path / "one.npy", X)
    _one_line_error(*_run(capsys, "diagnose", str(tmp_path / "one.npy"), "--layout", "half"), "holds one array")
    two = _save(tmp_path, x=X, actual=X)
    _one_line_error(*_run(capsys, "diagnose", "--x", two, "--actual", two, "--layout", "half"),
                    "--x:", "expected one array")
    _one_line_error(*_run(capsys, "diagnose", "--x", two, "--layout", "half"), "both --x and --actual")


@pytest.mark.torch
def test_torch_pt_files(tmp_path, capsys):
    torch = pytest.importorskip("torch", reason="torch is optional (pip install torch==2.13.0)")
    y = rope.apply(X, PID[:, None, :], layout="interleaved")
    torch.save({"x": torch.from_numpy(X).bfloat16(), "actual": torch.from_numpy(y).bfloat16(),
                "position_ids": torch.from_numpy(PID)}, tmp_path / "dump.pt")
    rc, out, err = _run(capsys, "diagnose", str(tmp_path / "dump.pt"), "--layout", "interleaved")
    assert "x bfloat16 (2, 4, 16, 64)" in out
    assert rc == 0 and "Traceback" not in err, out + err  # an honest bfloat16 output of the bfloat16 x


# --------------------------------------------------------------------------- found by review


def test_hf_position_ids_are_read_as_hf_means_them_when_batch_equals_heads(tmp_path, capsys):
    x = RNG.standard_normal((2, 2, 8, 16)).astype(np.float32)
    pid = np.stack([np.arange(8), np.arange(8) + 100])
    y = rope.apply(x.astype(np.float64), pid[:, None, :], layout="half").astype(np.float32)
    rc, out, _ = _run(capsys, "diagnose", _save(tmp_path, x=x, actual=y, position_ids=pid), "--layout", "half")
    assert rc == 0 and "HF position_ids (batch, seq) against x (batch, heads, seq, dim)" in out


@pytest.mark.parametrize("positions, words", [
    (np.array([0.0, np.nan] * 8), ["positions must be finite"]),
    (np.array([0.0, np.inf] * 8), ["positions must be finite"]),
])
def test_non_finite_positions_are_one_line(tmp_path, capsys, positions, words):
    path = _save(tmp_path, x=X, actual=X, positions=positions)
    _one_line_error(*_run(capsys, "diagnose", path, "--layout", "half"), *words)


def test_empty_arrays_and_negative_positions(tmp_path, capsys):
    empty = np.zeros((2, 0, 16), np.float32)
    _one_line_error(*_run(capsys, "diagnose", _save(tmp_path, x=empty, actual=empty), "--layout", "half"),
                    "x is empty")
    neg = -np.arange(1, 17)
    y = rope.apply(X, neg, layout="half")
    assert _run(capsys, "diagnose", _save(tmp_path, "neg.npz", x=X, actual=y, positions=neg), "--layout", "half")[0] == 0


def test_a_dtype_wider_than_the_output_is_refused(tmp_path, capsys):
    path = _save(tmp_path, x=X, actual=rope.apply(X, np.arange(16), layout="half").astype(np.float16))
    _one_line_error(*_run(capsys, "diagnose", path, "--layout", "half", "--dtype", "float32"),
                    "--dtype float32 is wider than the saved output (float16)")


def test_a_config_that_is_not_utf8_and_defaults_for_multi_axis_specs(tmp_path, capsys):
    (tmp_path / "config.json").write_bytes(b"\xff\xfe{}")
    _one_line_error(*_run(capsys, "diagnose", _save(tmp_path, x=X, actual=X), "--config",
                          str(tmp_path / "config.json")), "--config:", "not a UTF-8 JSON file")
    cfg = {"model_type": "qwen2_vl", "hidden_size": 256, "num_attention_heads": 4, "rope_theta": 1e6,
           "rope_scaling": {"type": "mrope", "mrope_section": [8, 12, 12]}}
    (tmp_path / "vl.json").write_text(json.dumps(cfg))
    spec = rope.from_hf_config(cfg)
    x = RNG.standard_normal((1, 4, 16, 64)).astype(np.float32)
    text = np.stack([np.arange(16)] * 3)[:, None, None, :]
    y = rope.apply(x, text, spec=spec).astype(np.float32)
    rc, out, err = _run(capsys, "diagnose", _save(tmp_path, "vl.npz", x=x, actual=y), "--config",
                        str(tmp_path / "vl.json"))
    assert rc == 0 and "text positions 0 .. 15" in out, out + err
