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
ENGINES = ("llama.cpp", "mlx-lm", "rotary-embedding-torch", "torchtune", "onnxruntime")


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
            pos = np.arange(first, first + n)
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


#: The engines' departures from the model's own code found in the recordings, with their cause (the docs say it).
CAUSES = {
    ("gpt-oss-20b", "mlx-lm"): "mlx-lm's initialize_rope forwards YaRN's beta_fast, beta_slow, mscale and "
                               "mscale_all_dim but not truncate, so gpt-oss's truncate=false is lost (the class of "
                               "vLLM #27722; no mlx-lm issue found)",
    ("internlm3-8b-instruct", "llama.cpp"): "llama.cpp has no dynamic NTK: past the original context it keeps the "
                                            "base (the converter writes no scaling for rope_type dynamic; "
                                            "ggml-org/llama.cpp #8361, closed as stale)",
}


def _cell(model: str, engine: str) -> str:
    v = verdicts()
    regimes = ("short", "long")
    got = {r: v[(model, r, engine)] for r in regimes if (model, r, engine) in v}
    if got and all(s == "agrees" for s in got.values()):
        return "agrees"
    differs = [f"{r}: {s.removeprefix('differs: ')}" for r, s in got.items() if s.startswith("differs")]
    if differs:
        cause = CAUSES.get((model, engine), "")
        return "**differs** (" + "; ".join(differs) + ")" + (f". {cause}" if cause else "")
    reasons = {s.removeprefix("not supported: ") for s in got.values()}
    return "not recorded: " + "; ".join(sorted(reasons))


def render() -> str:
    """The docs page's table (reStructuredText list-table body)."""
    meta, _ = recordings()
    lines = [".. list-table::", "   :header-rows: 1", "   :widths: 16 21 21 14 14 14", "",
             "   * - model", *[f"     - {e}" for e in ENGINES]]
    for model in sorted(meta["models"]):
        if "error" in meta["models"][model]:
            continue
        lines.append(f"   * - {model}")
        lines += [f"     - {_cell(model, e)}" for e in ENGINES]
    return "\n".join(lines) + "\n"


def counts() -> dict[str, dict[str, int]]:
    """Per engine, how many models agree, differ, are not recorded."""
    meta, _ = recordings()
    out: dict[str, dict[str, int]] = {e: {"agrees": 0, "differs": 0, "not recorded": 0} for e in ENGINES}
    for model in meta["models"]:
        if "error" in meta["models"][model]:
            continue
        for e in ENGINES:
            c = _cell(model, e)
            out[e]["agrees" if c == "agrees" else "differs" if c.startswith("**differs") else "not recorded"] += 1
    return out
