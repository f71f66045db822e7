"""The engines' recordings (tests/fixtures/engines/engines.*) judged by the oracle against each model's config.

Shared by tests/test_engines.py and the docs' table check: ``verdicts()`` gives, per model, regime and engine, one of
``agrees``, ``differs: <the oracle's finding>`` or ``not supported: <reason>``.
"""

from __future__ import annotations

import functools
import json
import warnings
from pathlib import Path

import numpy as np

from pemath import models, rope
from pemath.testing import assert_rope_close

PEERS = Path(__file__).resolve().parent / "fixtures" / "engines"
ENGINES = ("llama.cpp", "vLLM", "mlx-lm", "rotary-embedding-torch", "torchtune", "onnxruntime")


@functools.lru_cache(maxsize=1)
def recordings() -> tuple[dict, dict]:
    meta = json.loads((PEERS / "engines.json").read_text())
    with np.load(PEERS / "engines.npz") as z:
        arrays = {k: z[k] for k in z.files}
    return meta, arrays


def _finding(message: str) -> str:
    lines = message.splitlines()
    diag = next((ln for ln in lines if ln.startswith("Diagnosis: ")), "")
    if diag and "no known bug" not in diag:
        return diag.removeprefix("Diagnosis: the output matches ").removesuffix(" (max error within tolerance)")
    measured = [ln.removeprefix("Measured from the output: ") for ln in lines if ln.startswith("Measured from")]
    return "measured: " + "; ".join(measured) if measured else diag


@functools.lru_cache(maxsize=1)
def verdicts() -> dict[tuple[str, str, str], str]:
    meta, arrays = recordings()
    out = {}
    for name, regimes in meta["models"].items():
        if "error" in regimes:
            continue
        spec = rope.from_hf_config(models.get(name).config, layer=0)
        for regime, engines in regimes.items():
            first, n = meta["regimes"][regime]
            # M-RoPE models were recorded at an image's (t, h, w) positions; the others at first .. first + n - 1
            pos = arrays.get(f"{name}/{regime}/positions", np.arange(first, first + n))
            x = arrays[f"{name}/{regime}/x"]
            for engine, status in engines.items():
                if status != "recorded":
                    out[(name, regime, engine)] = f"not supported: {status}"
                    continue
                y = arrays[f"{name}/{regime}/{engine}"]
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        assert_rope_close(y, x, pos, spec=spec, seq_len=first + n)
                    out[(name, regime, engine)] = "agrees"
                except AssertionError as exc:
                    out[(name, regime, engine)] = "differs: " + _finding(str(exc))
    return out


#: The size of gpt-oss's departure where YaRN's ramp bounds are rounded (measured from the two Specs' frequencies).
_GPT_OSS = ("the frequencies of pairs 9..17 of 32 differ, by up to 76% (pair 17): an angle error of up to 0.0015 rad "
            "at position 7 and 22 rad (unrelated phases) at position 100003")

#: The engines' departures from the model's own code found in the recordings, with their cause (the docs say it).
CAUSES = {
    ("gpt-oss-20b", "mlx-lm"): "mlx-lm's initialize_rope forwards YaRN's beta_fast, beta_slow, mscale and "
                               "mscale_all_dim but not truncate, so gpt-oss's truncate=false is lost: " + _GPT_OSS +
                               " (the class of vLLM #27722; no mlx-lm issue found)",
    ("gpt-oss-20b", "llama.cpp"): "llama.cpp's YaRN always rounds the ramp bounds (ggml_rope_yarn_corr_dims: "
                                  "floor and ceil) and a GGUF has no key for truncate, so gpt-oss's truncate=false is "
                                  "lost: " + _GPT_OSS + " (the class of vLLM #27722; no llama.cpp issue found)",
    ("internlm3-8b-instruct", "llama.cpp"): "llama.cpp has no dynamic NTK: past the original context it keeps the "
                                            "base (the converter writes no scaling for rope_type dynamic; "
                                            "ggml-org/llama.cpp #8361, closed as stale)",
    ("qwen3-vl-8b-instruct", "llama.cpp"): "llama.cpp's interleaved M-RoPE (IMROPE, ggml-cpu's rope cache) gives "
                                           "the pairs past the h and w sections that are not t's own (61 and 62 of "
                                           "64 for sections 24/20/20) the fourth position stream, which llama.cpp "
                                           "fills with 0 for text and image tokens (llama-graph.cpp, mtmd); Hugging "
                                           "Face's Qwen3-VL (and vLLM) give them t. Those two lowest-frequency pairs "
                                           "are never rotated: 0.041 and 0.032 rad missing at t = 100000; in the "
                                           "short regime t = 0 and both leave them unrotated (no llama.cpp issue "
                                           "found)",
}


#: Cells that are not departures in the recordings but that a reader deciding which engine to run must not miss.
NOTES = {
    ("internlm3-8b-instruct", "vLLM"): "vLLM derives a max_model_len of 196608 for InternLM3 (dynamic NTK, factor 6) "
                                       "and accepts it, but sizes the cos/sin cache to 32768 rows: past position "
                                       "32767 its native path raises IndexError (recorded here), and "
                                       "vllm-project/vllm PR #55910 (open) reports a device-side assert on GPU, "
                                       "which was not measured here",
}


def departures() -> str:
    """The docs page's list of the departures found, each with its cause, then the notes (reStructuredText)."""
    found = sorted({(m, e) for (m, _, e), v in verdicts().items() if v.startswith("differs")})
    out = "\n".join(f"* **{e}**, {m}: {CAUSES[(m, e)]}." for m, e in found) + "\n"
    return out + "\nNoted, though not a departure in the recordings:\n\n" + "\n".join(
        f"* **{e}**, {m}: {NOTES[(m, e)]}." for m, e in sorted(NOTES)) + "\n"


def _cell(model: str, engine: str) -> str:
    v = verdicts()
    regimes = ("short", "long")
    got = {r: v[(model, r, engine)] for r in regimes if (model, r, engine) in v}
    if got and all(s == "agrees" for s in got.values()):
        return "agrees"
    # the findings are plain text in reStructuredText: a measured pattern's '*' must not start emphasis
    differs = [f"{r}: {s.removeprefix('differs: ')}".replace("*", "\\*") for r, s in got.items()
               if s.startswith("differs")]
    if differs:
        cause = CAUSES.get((model, engine), "")
        return "**differs** (" + "; ".join(differs) + ")" + (f". {cause}" if cause else "")
    if got.get("short") == "agrees":  # the long regime not run: the reason says why
        return "agrees in the short regime; long not recorded: " + got["long"].removeprefix("not supported: ")
    reasons = {s.removeprefix("not supported: ") for s in got.values()}
    return "not recorded: " + "; ".join(sorted(reasons))


def render() -> str:
    """The docs page's table (reStructuredText list-table body)."""
    meta, _ = recordings()
    lines = [".. list-table::", "   :header-rows: 1", "   :widths: 14 18 18 14 12 12 12", "",
             "   * - model", *[f"     - {e}" for e in ENGINES]]
    for model in sorted(meta["models"]):
        if "error" in meta["models"][model]:
            continue
        lines.append(f"   * - {model}")
        lines += [f"     - {_cell(model, e)}" for e in ENGINES]
    return "\n".join(lines) + "\n"


def counts() -> dict[str, dict[str, int]]:
    """Per engine, how many models agree (in both regimes), agree in the short regime with the long one not run,
    differ, are not recorded."""
    meta, _ = recordings()
    kinds = ("agrees", "short only", "differs", "not recorded")
    out: dict[str, dict[str, int]] = {e: dict.fromkeys(kinds, 0) for e in ENGINES}
    for model in meta["models"]:
        if "error" in meta["models"][model]:
            continue
        for e in ENGINES:
            c = _cell(model, e)
            out[e]["agrees" if c == "agrees" else "short only" if c.startswith("agrees in the short")
                   else "differs" if c.startswith("**differs") else "not recorded"] += 1
    return out


def counts_text() -> str:
    """The counts as the docs page says them."""
    return "; ".join(f"{e} {n['agrees']} agree, {n['short only']} agree in the short regime only, {n['differs']} "
                     f"differ, {n['not recorded']} not recorded" for e, n in counts().items())
