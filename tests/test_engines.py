"""The engines' recorded RoPE (llama.cpp's CPU kernel, mlx-lm, rotary-embedding-torch, torchtune, ONNX Runtime) judged
against each model's
config: the departures are exactly the ones docs/engines.rst names, with their cause, and the page's table is the
one these recordings give (tests/engine_table.py; recorded by tests/fixtures/make_engine_fixtures.py)."""

from __future__ import annotations

from pathlib import Path

from tests.engine_table import CAUSES, counts, recordings, render, verdicts

PAGE = Path(__file__).resolve().parents[1] / "docs" / "engines.rst"


def test_every_departure_found_is_named_with_its_cause():
    differs = {(m, e) for (m, _, e), v in verdicts().items() if v.startswith("differs")}
    assert differs == set(CAUSES), differs ^ set(CAUSES)


def test_the_departures_are_the_mechanisms_the_causes_say():
    v = verdicts()
    assert "YaRN's ramp bounds rounded to integers (truncate=True; the spec has truncate=False)" in \
        v[("gpt-oss-20b", "short", "mlx-lm")]
    assert v[("internlm3-8b-instruct", "short", "llama.cpp")] == "agrees"  # within the original context
    assert "the scaling left out (plain RoPE instead of DynamicNTK" in v[("internlm3-8b-instruct", "long", "llama.cpp")]


def test_llama_cpp_agrees_on_the_families_it_runs():
    v = verdicts()
    for model in ("llama-3.1-8b", "qwen2.5-7b-instruct-yarn", "phi-3-mini-128k-instruct", "gemma-3-4b-it",
                  "gpt-neox-20b", "falcon-7b", "c4ai-command-r-v01"):
        assert v[(model, "short", "llama.cpp")] == v[(model, "long", "llama.cpp")] == "agrees", model


def test_the_docs_table_is_the_recordings():
    assert render() in PAGE.read_text()
    c = counts()
    text = " ".join(PAGE.read_text().split())
    for e, n in c.items():
        assert f"{e} {n['agrees']} agree, {n['differs']} differ, {n['not recorded']} not recorded" in text


def test_engine_figures():
    meta, _ = recordings()
    c = counts()
    print("\nengines against the models' own RoPE (" + ", ".join(f"{k} {v}" for k, v in meta["versions"].items())
          + "): " + "; ".join(f"{e}: {n['agrees']} agree, {n['differs']} differ, {n['not recorded']} not recorded"
                              for e, n in c.items()))
    assert c["llama.cpp"]["agrees"] >= 30 and c["mlx-lm"]["agrees"] >= 15 and c["onnxruntime"]["agrees"] >= 40
    assert c["torchtune"]["agrees"] >= 10


def test_the_recordings_stay_small():
    from tests.engine_table import PEERS

    total = sum(p.stat().st_size for p in PEERS.glob("engines.*"))
    assert total < 2**20, f"the engine recordings take {total} bytes; keep them under 1 MiB"
