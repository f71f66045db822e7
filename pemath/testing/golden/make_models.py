"""Regenerate the per-model golden vectors (``v2/*.json``) from pemath's model registry.

One file per registered RoPE model (:mod:`pemath.models`)::

    python -m pemath.testing.golden.make_models            # rewrite the packaged v2/ files
    python -m pemath.testing.golden.make_models --out DIR  # write them elsewhere

Format 2 is format 1 (``README.md``) with the RoPE description moved into each case,
because one model can hold several (Gemma 3's layer types, LongRoPE's regimes):
``case["rope"]`` has ``layout``, ``out_layout`` (the layout the output is written in:
DeepSeek-V3 rotates interleaved pairs and returns them half-split), ``head_dim``,
``rotary_dim``, ``base``, ``attention_factor``, ``scaling``, and for M-RoPE
``components`` (which position component drives each pair) with the case's
``position_components`` (one list of positions per component) in place of
``positions``. A model whose layers mix RoPE and NoPE (Llama 4, SmolLM3) lists the
layers without RoPE as ``nope_layers`` (0-based); its cases are its RoPE layers'. The file keeps the model's registered ``config`` (the config.json keys)
and its ``spec`` (what the config implies beyond the rotation: DeepSeek's softmax scale,
Ministral 3's query scaling). Regenerating gives byte-identical files.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


from ... import __version__, models
from ...rope import inv_freq, mrope_components
from ...scaling import DynamicNTK, LongRoPE
from .make_golden import FORMAT, HERE, _scaling_json, _x, expected_rotation, phase_error_units, render, run_cli

__all__ = ["FORMAT_VERSION", "build", "write_all"]

FORMAT_VERSION = 2
OUT = HERE / f"v{FORMAT_VERSION}"
HEADS = 1
POSITIONS = (1, 8191, 131071)


def _cases(spec: Any, mpe: int | None) -> list[dict[str, Any]]:
    """The regimes of a spec: its switch's both sides for LongRoPE and dynamic NTK."""
    s = spec.scaling
    if isinstance(s, LongRoPE):
        L0 = s.original_max_position
        return [{"name": "short", "seq_len": L0, "positions": [1, L0 - 1]},
                {"name": "long", "seq_len": max(mpe or 0, 2 * L0), "positions": list(POSITIONS)}]
    if isinstance(s, DynamicNTK):
        L0 = s.original_max_position
        return [{"name": "below", "seq_len": L0, "positions": [1, L0 - 1]},
                {"name": "above", "seq_len": 4 * L0, "positions": [1, L0, 4 * L0 - 1]}]
    return [{"name": "default", "seq_len": None, "positions": list(POSITIONS)}]


def build(name: str) -> dict[str, Any]:
    """The format-2 golden document of registered model ``name``."""
    m = models.get(name)
    cfg = m.config
    text = cfg.get("text_config") or cfg
    mpe = text.get("max_position_embeddings") or cfg.get("max_position_embeddings")
    out_cases, beyond = [], None
    for lt in m.layer_types or (None,):
        spec = m.rope_spec(lt)
        beyond = {"softmax_scale": spec.softmax_scale, "query_scaling_beta": spec.query_scaling_beta,
                  "query_scaling_length": spec.query_scaling_length}
        r, layout = spec.rotary_dim, spec.layout
        out_layout = spec.output_layout
        comp = (mrope_components(list(spec.mrope_section), interleaved=spec.mrope_interleaved).tolist()
                if spec.mrope_section else None)
        for case in _cases(spec, mpe):
            cname = "/".join(p for p in (lt, case["name"]) if p)
            positions = case["positions"]
            variants = [("", None)]
            if comp is not None:  # text tokens (components equal) and an image-like grid
                variants = [("text", [positions] * 3),
                            ("image", [positions, [p // 4 + 3 for p in positions], [p % 4 + 7 for p in positions]])]
            for vname, components in variants:
                full = "/".join(p for p in (cname, vname) if p)
                freq = [float(v) for v in inv_freq(spec=spec, seq_len=case["seq_len"])]
                attention = float(spec.scaling.attention_factor_at(case["seq_len"])) if spec.scaling else 1.0
                if components is None:
                    pos_of_pair = [[p] * (r // 2) for p in positions]
                else:
                    pos_of_pair = [[components[comp[i]][t] for i in range(r // 2)] for t in range(len(positions))]
                x = _x(name, full, (HEADS, len(positions), spec.head_dim))
                entry: dict[str, Any] = {"name": full, "layer_type": lt, "seq_len": case["seq_len"]}
                if components is None:
                    entry["positions"] = positions
                else:
                    entry["position_components"] = components
                entry.update({
                    "rope": {"layout": layout, "out_layout": out_layout, "head_dim": spec.head_dim, "rotary_dim": r,
                             "base": spec.base, "attention_factor": attention, "components": comp,
                             "scaling": _scaling_json(spec.scaling)},
                    "inv_freq": freq,
                    "phase_error_units": phase_error_units(spec.scaling, spec.base, r),
                    "x": x,
                    "expected": expected_rotation(x, pos_of_pair, freq, attention, layout, out_layout, r),
                })
                out_cases.append(entry)
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "generator": "pemath/testing/golden/make_models.py",
        "pemath_version": __version__,
        "name": name,
        "model": m.hf_id,
        "notes": m.note,
        "source": m.source,
        "reconstructed": m.reconstructed,
        "config": cfg,
        **({"nope_layers": list(m.nope_layers)} if m.nope_layers else {}),
        "beyond_rotation": beyond,
        "shape": "x and expected: [head][position index][feature]; x in case.rope.layout, expected in "
                 "case.rope.out_layout",
        "cases": out_cases,
    }


def write_all(out: Path | str = OUT) -> list[Path]:
    """Write one file per registered RoPE model into ``out``; return the paths."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for name in models.names(encoding="rope"):
        path = out / f"{name}.json"
        path.write_text(render(build(name)), encoding="utf-8")
        paths.append(path)
    return paths


def main(argv: list[str] | None = None) -> int:
    return run_cli(argv, __doc__.splitlines()[0], OUT, write_all)


if __name__ == "__main__":
    raise SystemExit(main())
