"""The engines' recorded RoPE (llama.cpp's CPU kernel, vLLM, mlx-lm, rotary-embedding-torch, torchtune, ONNX Runtime)
judged against each model's config: the departures are exactly the ones docs/engines.rst names, with their cause, and
the page's table is the one these recordings give (tests/engine_table.py; recorded by
tests/fixtures/make_engine_fixtures.py)."""

from __future__ import annotations

from pathlib import Path

from tests.engine_table import CAUSES, counts, counts_text, departures, recordings, render, verdicts

PAGE = Path(__file__).resolve().parents[1] / "docs" / "engines.rst"


def test_every_departure_found_is_named_with_its_cause():
    differs = {(m, e) for (m, _, e), v in verdicts().items() if v.startswith("differs")}
    assert differs == set(CAUSES), differs ^ set(CAUSES)


def test_the_departures_are_the_mechanisms_the_causes_say():
    v = verdicts()
    for engine in ("mlx-lm", "llama.cpp"):
        assert "YaRN's ramp bounds rounded to integers (truncate=True; the spec has truncate=False)" in \
            v[("gpt-oss-20b", "short", engine)]
    assert v[("gpt-oss-20b", "short", "vLLM")] == "agrees"  # vLLM passes truncate since PR #28244
    assert v[("internlm3-8b-instruct", "short", "llama.cpp")] == "agrees"  # within the original context
    assert "the scaling left out (plain RoPE instead of DynamicNTK" in v[("internlm3-8b-instruct", "long", "llama.cpp")]
    # Qwen3-VL in llama.cpp: pairs 61 and 62 measured as never rotated, the rest as the spec's components
    qwen3vl = v[("qwen3-vl-8b-instruct", "long", "llama.cpp")]
    pattern = qwen3vl.split("0..127: ")[1].split(" ")[0]
    assert pattern[61:63] == "00" and "0" not in pattern[:61] and v[("qwen3-vl-8b-instruct", "short", "llama.cpp")] == "agrees"


def test_vllm_and_llama_cpp_run_m_rope_at_an_images_positions():
    meta, arrays = recordings()
    v = verdicts()
    for model in ("qwen2-vl-7b-instruct", "qwen2.5-vl-7b-instruct", "qwen3-vl-8b-instruct"):
        pos = arrays[f"{model}/long/positions"]
        assert pos.shape == (3, 4) and len({tuple(row) for row in pos}) == 3  # t, h, w all differ
        assert v[(model, "short", "vLLM")] == v[(model, "long", "vLLM")] == "agrees", model
    assert v[("qwen2-vl-7b-instruct", "long", "llama.cpp")] == "agrees"


def test_vllm_past_its_cache_is_said_not_guessed():
    v = verdicts()
    # vLLM derives max_model_len 32768 x 6 for InternLM3's dynamic NTK but sizes the cache to 32768 rows
    assert "PR #55910" in v[("internlm3-8b-instruct", "long", "vLLM")]
    assert "VLLM_ALLOW_LONG_MAX_MODEL_LEN" in v[("llama-2-7b", "long", "vLLM")]
    assert v[("phi-3-mini-128k-instruct", "short", "vLLM")] == v[("phi-3-mini-128k-instruct", "long", "vLLM")] \
        == "agrees"  # LongRoPE's factors picked by max_model_len, here the regime's length


def test_llama_cpp_agrees_on_the_families_it_runs():
    v = verdicts()
    for model in ("llama-3.1-8b", "qwen2.5-7b-instruct-yarn", "phi-3-mini-128k-instruct", "gemma-3-4b-it",
                  "gpt-neox-20b", "falcon-7b", "c4ai-command-r-v01", "gemma-2-9b", "olmo-2-1124-7b", "modernbert-base"):
        assert v[(model, "short", "llama.cpp")] == v[(model, "long", "llama.cpp")] == "agrees", model


def test_the_docs_table_is_the_recordings():
    page = PAGE.read_text()
    assert render() in page and departures() in page
    assert counts_text() in " ".join(page.split())


def test_engine_figures():
    meta, _ = recordings()
    c = counts()
    print("\nengines against the models' own RoPE (" + ", ".join(f"{k} {v}" for k, v in meta["versions"].items())
          + "): " + counts_text())
    assert c["llama.cpp"]["agrees"] >= 30 and c["mlx-lm"]["agrees"] >= 15 and c["onnxruntime"]["agrees"] >= 40
    assert c["torchtune"]["agrees"] >= 10 and c["vLLM"]["agrees"] + c["vLLM"]["short only"] >= 40


def test_the_recordings_stay_small():
    from tests.engine_table import PEERS

    total = sum(p.stat().st_size for p in PEERS.glob("engines.*"))
    assert total < 1.5 * 2**20, f"the engine recordings take {total} bytes; keep them under 1.5 MiB"


def test_the_gpt_oss_figures_the_page_gives():
    """The size of the truncate departure, from the model's Spec and the same Spec with its ramp bounds rounded."""
    import numpy as np

    from pemath import models, rope
    from tests.engine_table import _GPT_OSS

    h = rope.from_hf_config(models.get("gpt-oss-20b").config)
    y = h.scaling
    t = h.replace(scaling=type(y)(y.factor, y.original_max_position, beta_fast=y.beta_fast, beta_slow=y.beta_slow,
                                  attention_factor=y.attention_factor, truncate=True))
    f_h, f_t = (np.asarray(s.frequencies(64, None)[0]) for s in (h, t))
    rel = np.abs(f_t - f_h) / f_h
    bad = np.nonzero(rel > 1e-12)[0]
    assert (bad[0], bad[-1], int(np.argmax(rel))) == (9, 17, 17)
    assert f"by up to {100 * rel.max():.0f}% (pair 17)" in _GPT_OSS
    assert f"{7 * np.max(np.abs(f_t - f_h)):.2g} rad at position 7" in _GPT_OSS
    assert f"{100003 * np.max(np.abs(f_t - f_h)):.2g} rad (unrelated phases)" in _GPT_OSS
