"""GGUFs written by llama.cpp's own converter (recorded), read back by rope.from_gguf, against from_hf_config.

tests/fixtures/make_gguf_fixtures.py recorded, for every registered model llama.cpp's converter handles, what its
``set_gguf_parameters`` and ``generate_extra_tensors`` write. Here each record becomes a GGUF again
(gguf.GGUFWriter) and ``rope.gguf_differences`` compares llama.cpp's reading of it with the model's config:
each registered model either agrees, or is refused by from_gguf with the reason, or differs, with the
difference listed in EXPECTED_DIFFERENCES and its cause. ``test_converted_figures`` prints the counts.

Then the public conversion bugs of issue 24, each written as a GGUF with the bug, are named by
``pemath diagnose --gguf``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pemath import models, rope
from tests.gguf_records import write_record

gguf = pytest.importorskip("gguf", reason="gguf is optional (pip install 'pemath[gguf]')")

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "peers" / "gguf_converted.json"
RECORDS = json.loads(FIXTURE.read_text())

#: Models whose converted GGUF from_gguf refuses, with the reason's words (architectures whose RoPE handling
#: pemath does not model).
REFUSED: dict[str, str] = {}
#: Models whose converted GGUF llama.cpp reads as other RoPE than the config's, with the difference and its cause.
EXPECTED_DIFFERENCES: dict[str, tuple[str, str]] = {
    "internlm3-8b-instruct": ("at a context of 196608 tokens (n_ctx=196608): frequencies: pairs 1..63 of 64 differ",
                              "llama.cpp has no dynamic NTK: the converter writes no scaling for rope_type dynamic, "
                              "so past the original context llama.cpp keeps the base (ggml-org/llama.cpp #8361)"),
    "gpt-oss-20b": ("pairs 9..17 of 32 differ", "llama.cpp's YaRN always rounds the ramp bounds "
                    "(ggml_rope_yarn_corr_dims: floor and ceil), and a GGUF has no key for truncate; gpt-oss has "
                    "truncate=false (the class of vllm-project/vllm #27722 and sgl-project/sglang PR #14270; no "
                    "llama.cpp issue found)"),
}


def write(tmp_path: Path, name: str, record: dict) -> str:
    return write_record(tmp_path / f"{name}.gguf", record)


def _n_ctx(record: dict) -> int | None:
    if "rope_factors_long.weight" in record["tensors"]:
        return 131072
    return None


def verdict(tmp_path: Path, name: str) -> tuple[str, list[str]]:
    record = RECORDS["models"][name]
    path = write(tmp_path, name, record)
    config = models.get(name).config
    layers = [None]
    if record["gguf_arch"] in ("gemma2", "gemma3", "gpt-oss", "olmo2", "modern-bert", "llama4", "smollm3"):
        layers = list(range(8))  # sliding-window and global layers, with and without RoPE, whatever the pattern
    out: list[str] = []
    for layer in layers:
        try:
            out += rope.gguf_differences(path, config, n_ctx=_n_ctx(record), layer=layer)
        except ValueError as exc:
            return "refused", [str(exc)]
    return ("agrees" if not out else "differs"), out


@pytest.mark.parametrize("name", sorted(RECORDS["models"]))
def test_a_converted_gguf_reads_back_as_its_config(tmp_path, name):
    kind, lines = verdict(tmp_path, name)
    if name in REFUSED:
        assert kind == "refused" and REFUSED[name] in lines[0], lines
    elif name in EXPECTED_DIFFERENCES:
        assert kind == "differs" and any(EXPECTED_DIFFERENCES[name][0] in ln for ln in lines), lines
    else:
        assert kind == "agrees", "\n".join(lines)


def test_converted_figures(tmp_path):
    counts = {"agrees": 0, "differs": 0, "refused": 0}
    for name in RECORDS["models"]:
        counts[verdict(tmp_path, name)[0]] += 1
    print(f"\nGGUFs from llama.cpp's converter ({RECORDS['llama_cpp']['commit'][:12]}), read back by from_gguf against "
          f"from_hf_config: {counts['agrees']} agree, {counts['differs']} differ, {counts['refused']} refused; "
          f"{len(RECORDS['not_converted'])} registered models the converter does not handle; from_gguf knows "
          f"{len(rope.gguf_architectures())} architectures")
    assert counts["agrees"] >= 30
    page = " ".join((Path(__file__).resolve().parents[1] / "docs" / "models.rst").read_text().split())
    assert (f"read back as their config in {counts['agrees']} cases, differ in {counts['differs']}" in page
            and f"are refused in {counts['refused']}" in page), "docs/models.rst's GGUF figures are stale"


# --------------------------------------------------------------------------- public conversion bugs, named


def _cli(*args: str) -> tuple[int, str]:
    from pemath.cli import main

    import contextlib
    import io

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["diagnose", *args])
    return code, out.getvalue() + err.getvalue()


def _with(record: dict, *, drop: tuple[str, ...] = (), kv: dict | None = None, tensors: bool = True,
          arch: str | None = None) -> dict:
    """A recorded conversion with a bug put in: keys dropped or changed, the extra tensors left out, another arch."""
    rec = json.loads(json.dumps(record))
    rec["kv"] = {k: v for k, v in rec["kv"].items() if not any(k.endswith(d) for d in drop)}
    for k, v in (kv or {}).items():
        rec["kv"][k] = v
    if not tensors:
        rec["tensors"] = {}
    if arch is not None:
        old = rec["gguf_arch"]
        rec["kv"] = {k.replace(f"{old}.", f"{arch}.", 1): v for k, v in rec["kv"].items()}
        rec["gguf_arch"] = arch
    return rec


def test_the_models_own_conversion_agrees_on_the_command_line(tmp_path):
    path = write(tmp_path, "llama-3.1-8b", RECORDS["models"]["llama-3.1-8b"])
    code, out = _cli("--gguf", path, "--model", "llama-3.1-8b")
    assert code == 0 and "AGREE" in out, out


def test_rope_freqs_never_written_for_a_llama_31_derivative(tmp_path):
    """ggml-org/llama.cpp #9114 (PR #9117), ik_llama.cpp PR #402: a Llama 3.1 GGUF without rope_freqs."""
    path = write(tmp_path, "bug", _with(RECORDS["models"]["llama-3.1-8b"], tensors=False))
    code, out = _cli("--gguf", path, "--model", "llama-3.1-8b")
    assert code == 1, out
    assert "the GGUF has no frequency factors (rope_freqs.weight" in out and "Llama3" in out, out


def test_freq_base_off_by_100x(tmp_path):
    """abetlen/llama-cpp-python #1271: freq_base 10000 in the GGUF of a model trained at 1e6."""
    path = write(tmp_path, "bug", _with(RECORDS["models"]["qwen2-7b-instruct"],
                                        kv={"qwen2.rope.freq_base": ["FLOAT32", 10000.0]}))
    code, out = _cli("--gguf", path, "--model", "qwen2-7b-instruct")
    assert code == 1 and "base: the GGUF has 10000 (qwen2.rope.freq_base), the config 1e+06 (100 times" in out, out


def test_glms_half_rotary_misconverted(tmp_path):
    """ggml-org/llama.cpp PR #12957: GLM's partial rotary (half of the head) converted as the whole head."""
    rec = RECORDS["models"]["glm-4-9b-chat-hf"]
    head = 128
    path = write(tmp_path, "bug", _with(rec, kv={"chatglm.rope.dimension_count": ["UINT32", head]}))
    code, out = _cli("--gguf", path, "--model", "glm-4-9b-chat-hf")
    assert code == 1 and "rotary dims: the GGUF rotates 128 (chatglm.rope.dimension_count), the config 64" in out, out


def test_normal_versus_neox_chosen_wrong(tmp_path):
    """jzhang38/TinyLlama #24: a model converted under an architecture with the other pairing mode."""
    rec = _with(RECORDS["models"]["llama-2-7b"], arch="command-r")  # NORM, q/k not permuted by its converter
    path = write(tmp_path, "bug", rec)
    code, out = _cli("--gguf", path, "--model", "llama-2-7b")
    assert code == 1 and "pairing: the GGUF is rotated with llama.cpp's NORM pairs (2i, 2i+1) on q/k rows the " \
                         "converter did not permute; the config's model rotates 'half' pairs" in out, out


@pytest.mark.parametrize("args, match", [
    (["--model", "llama-2-7b"], "no such file|is not a file"),
    ([], "--gguf needs the model's config"),
])
def test_unusable_input_exits_2(tmp_path, args, match):
    import re

    code, out = _cli("--gguf", str(tmp_path / "missing.gguf"), *args)
    assert code == 2 and re.search(match, out), out


def test_the_command_runs_as_a_program(tmp_path):
    path = write(tmp_path, "q", RECORDS["models"]["qwen3-8b"])
    res = subprocess.run([sys.executable, "-m", "pemath.cli", "diagnose", "--gguf", path, "--model", "qwen3-8b"],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0 and "AGREE" in res.stdout, res.stdout + res.stderr


def test_every_difference_is_listed_not_only_the_first(tmp_path):
    """A base off by 100x and no rope_freqs: both said; rotary dims and base: both said."""
    rec = _with(RECORDS["models"]["llama-3.1-8b"], tensors=False, kv={"llama.rope.freq_base": ["FLOAT32", 5000.0]})
    code, out = _cli("--gguf", write(tmp_path, "two", rec), "--model", "llama-3.1-8b")
    assert code == 1 and "DIFFERS: base: the GGUF has 5000" in out, out
    assert "frequencies (beside the base)" in out and "the GGUF has no frequency factors" in out, out
    rec = _with(RECORDS["models"]["qwen2-7b-instruct"], kv={"qwen2.rope.dimension_count": ["UINT32", 64],
                                                            "qwen2.rope.freq_base": ["FLOAT32", 10000.0]})
    lines = rope.gguf_differences(write(tmp_path, "dims", rec), models.get("qwen2-7b-instruct").config)
    assert [ln.split(":")[0] for ln in lines] == ["rotary dims", "base"], lines


def test_a_length_dependent_config_is_compared_past_its_original_context(tmp_path):
    """InternLM3 (dynamic NTK): the GGUF agrees at 32768 tokens, not at 196608 (llama.cpp has no dynamic NTK)."""
    path = write(tmp_path, "internlm3", RECORDS["models"]["internlm3-8b-instruct"])
    config = models.get("internlm3-8b-instruct").config
    assert rope.gguf_differences(path, config, n_ctx=32768) == []
    lines = rope.gguf_differences(path, config)
    assert len(lines) == 1 and lines[0].startswith("at a context of 196608 tokens (n_ctx=196608): frequencies"), lines


def test_the_command_line_refuses_flags_it_would_not_use_and_passes_layout(tmp_path):
    path = write(tmp_path, "llama-3.1-8b", RECORDS["models"]["llama-3.1-8b"])
    code, out = _cli("--gguf", path, "--model", "llama-3.1-8b", "--base", "5")
    assert code == 2 and "--base would not be used" in out, out
    code, out = _cli("--gguf", path, "--model", "llama-3.1-8b")
    assert "per-pair frequency factors from the file (64 values, 1 to 8" in out and "LongRoPE" not in out, out
    config = {k: v for k, v in models.get("llama-3.1-8b").config.items()}
    config["model_type"] = "my_llama"  # a model type pemath has not checked: read generically with --layout
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps(config))
    code, out = _cli("--gguf", path, "--config", str(cfg))
    assert code == 2 and "--layout" in out, out
    code, out = _cli("--gguf", path, "--config", str(cfg), "--layout", "half")
    assert code == 0 and "AGREE" in out, out
