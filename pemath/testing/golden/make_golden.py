"""Regenerate pemath's golden RoPE vectors (``v1/*.json``) from pemath itself.

The files are generated, never edited by hand::

    python -m pemath.testing.golden.make_golden            # rewrite the packaged v1/ files
    python -m pemath.testing.golden.make_golden --out DIR  # write them elsewhere

Regenerating gives byte-identical files: the inputs come from SHA-256 (no random
generator whose stream could change between library versions), the expected values
are exact rotations evaluated with mpmath at 120 bits and rounded once to float64, and
the JSON is written in a fixed layout. ``tests/test_golden.py`` regenerates into a
temporary folder and compares. A change to the format or to the values needs a new
format version (``v2/``), never an edit of ``v1/``.

What each file holds is documented in ``README.md`` next to this script.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
from pathlib import Path
from typing import Any

import mpmath
import numpy as np

from ... import __version__
from ...rope import from_hf, inv_freq
from ...scaling import DynamicNTK, Linear, Llama3, LongRoPE, Proportional, RopeScaling, YaRN

__all__ = ["FORMAT", "FORMAT_VERSION", "SPECS", "build", "write_all"]

FORMAT = "pemath.testing.golden.rope"
FORMAT_VERSION = 1
HERE = Path(__file__).resolve().parent
OUT = HERE / f"v{FORMAT_VERSION}"

#: Positions of every case: 1 (the first rotation: an off-by-one shows at once) and
#: long positions 2^13 - 1, 2^16 - 1, 2^17 - 1 (none exact in bfloat16 or float16, so
#: positions stored in a narrow dtype show too). Kept few so that all files stay small.
POSITIONS = (1, 8191, 65535, 131071)
HEADS = 2
#: Inputs are k / 16 with |k| <= 48: exact in bfloat16, float16 and wider.
X_SCALE = 16
X_MAX = 48

# Phi-3-mini-128k-instruct's LongRoPE factors (config.json of the July 2024 update).
PHI3_LONG = [
    1.0700000524520874, 1.1200000047683716, 1.149999976158142, 1.4199999570846558, 1.5699999332427979,
    1.7999999523162842, 2.129999876022339, 2.129999876022339, 3.009999990463257, 5.910000324249268,
    6.950000286102295, 9.070000648498535, 9.930000305175781, 10.710000038146973, 11.130000114440918,
    14.609999656677246, 15.409998893737793, 19.809999465942383, 37.279998779296875, 38.279998779296875,
    38.599998474121094, 40.12000274658203, 46.20000457763672, 50.940006256103516, 53.66000747680664,
    54.9373893737793, 56.89738845825195, 57.28738784790039, 59.98738479614258, 60.86738586425781,
    60.887386322021484, 61.71739196777344, 62.91739273071289, 62.957393646240234, 63.41739273071289,
    63.8173942565918, 63.83739471435547, 63.897396087646484, 63.93739700317383, 64.06739807128906,
    64.11434936523438, 64.12435150146484, 64.15435028076172, 64.19435119628906, 64.24435424804688,
    64.57435607910156, 64.69000244140625, 64.76000213623047,
]
PHI3_SHORT = [
    1.1, 1.1, 1.1, 1.3000000000000003, 1.3500000000000003, 1.3500000000000003, 1.4000000000000004,
    1.5500000000000005, 2.000000000000001, 2.000000000000001, 2.000000000000001, 2.000000000000001,
    2.000000000000001, 2.000000000000001, 2.000000000000001, 2.000000000000001, 2.000000000000001,
    2.000000000000001, 2.000000000000001, 2.000000000000001, 2.000000000000001, 2.000000000000001,
    2.000000000000001, 2.000000000000001, 2.000000000000001, 2.0500000000000007, 2.0500000000000007,
    2.0500000000000007, 2.0500000000000007, 2.0500000000000007, 2.0500000000000007, 2.1000000000000005,
    2.1000000000000005, 2.1500000000000004, 2.25, 2.25, 2.25, 2.25, 2.25, 2.3999999999999995,
    2.4499999999999993, 2.499999999999999, 2.6999999999999984, 2.6999999999999984, 2.7499999999999982,
    2.799999999999998, 2.8999999999999977, 3.049999999999997,
]

#: One entry per file: the model, its layout, the RoPE fields of its HF config.json
#: (verbatim), the pemath.rope.from_hf arguments they amount to, and notes.
SPECS: list[dict[str, Any]] = [
    {
        "name": "llama-3.1-8b",
        "model": "meta-llama/Llama-3.1-8B",
        "layout": "half",
        "hf_config": {
            "hidden_size": 4096,
            "num_attention_heads": 32,
            "max_position_embeddings": 131072,
            "rope_theta": 500000.0,
            "rope_scaling": {
                "factor": 8.0,
                "low_freq_factor": 1.0,
                "high_freq_factor": 4.0,
                "original_max_position_embeddings": 8192,
                "rope_type": "llama3",
            },
        },
        "from_hf": {"head_dim": 128, "rope_theta": 500000.0, "max_position_embeddings": 131072},
        "notes": (
            "HF's layout (rotate_half). Meta's own checkpoint and reference code pair features (2i, 2i+1): "
            "HF's convert_llama_weights_to_hf permutes the q/k rows so that both give the same scores."
        ),
    },
    {
        "name": "qwen2-7b",
        "model": "Qwen/Qwen2-7B",
        "layout": "half",
        "hf_config": {
            "hidden_size": 3584,
            "num_attention_heads": 28,
            "max_position_embeddings": 131072,
            "rope_theta": 1000000.0,
        },
        "from_hf": {"head_dim": 128, "rope_theta": 1000000.0, "max_position_embeddings": 131072},
        "notes": "Plain RoPE with a large base.",
    },
    {
        "name": "qwen2.5-7b-instruct-yarn",
        "model": "Qwen/Qwen2.5-7B-Instruct",
        "layout": "half",
        "hf_config": {
            "hidden_size": 3584,
            "num_attention_heads": 28,
            "max_position_embeddings": 32768,
            "rope_theta": 1000000.0,
            "rope_scaling": {"factor": 4.0, "original_max_position_embeddings": 32768, "type": "yarn"},
        },
        "from_hf": {"head_dim": 128, "rope_theta": 1000000.0, "max_position_embeddings": 32768},
        "notes": (
            "The rope_scaling block Qwen's model card tells users to add for inputs beyond 32768 tokens "
            "(config.json ships without it). Attention factor 0.1 ln 4 + 1 multiplies cos and sin."
        ),
    },
    {
        "name": "deepseek-v3",
        "model": "deepseek-ai/DeepSeek-V3",
        "layout": "interleaved",
        "hf_config": {
            "qk_rope_head_dim": 64,
            "max_position_embeddings": 163840,
            "rope_theta": 10000,
            "rope_scaling": {
                "beta_fast": 32,
                "beta_slow": 1,
                "factor": 40,
                "mscale": 1.0,
                "mscale_all_dim": 1.0,
                "original_max_position_embeddings": 4096,
                "type": "yarn",
            },
        },
        "from_hf": {"head_dim": 64, "rope_theta": 10000.0, "max_position_embeddings": 163840},
        "notes": (
            "Only the 64 rotary features of each head (qk_rope_head_dim); pairs (2i, 2i+1) as in DeepSeek's "
            "code and HF's rope_interleave. mscale == mscale_all_dim gives attention factor 1 for cos/sin "
            "(DeepSeek scales the softmax by mscale^2 separately, outside RoPE)."
        ),
    },
    {
        "name": "gpt-j-6b",
        "model": "EleutherAI/gpt-j-6b",
        "layout": "interleaved",
        "hf_config": {"n_embd": 4096, "n_head": 16, "rotary_dim": 64, "n_positions": 2048},
        "from_hf": {"head_dim": 256, "rope_theta": 10000.0, "partial_rotary_factor": 0.25},
        "notes": (
            "Base 10000 is hard-coded in GPT-J's code. The first 64 of 256 features rotate, in pairs "
            "(2i, 2i+1) (rotate_every_two); the other 192 pass through unchanged. Positions beyond the "
            "2048-token context are included as a precision test: the formula is the same."
        ),
    },
    {
        "name": "gpt-neox-20b",
        "model": "EleutherAI/gpt-neox-20b",
        "layout": "half",
        "hf_config": {
            "hidden_size": 6144,
            "num_attention_heads": 64,
            "rotary_pct": 0.25,
            "rotary_emb_base": 10000,
            "max_position_embeddings": 2048,
        },
        "from_hf": {"head_dim": 96, "rope_theta": 10000.0, "partial_rotary_factor": 0.25},
        "notes": (
            "Partial rotary: the first 24 of 96 features rotate, pairs (i, i + 12) with frequencies over the "
            "rotary dim 24; the other 72 pass through unchanged. Positions beyond the 2048-token context are "
            "included as a precision test."
        ),
    },
    {
        "name": "phi-3-mini-128k",
        "model": "microsoft/Phi-3-mini-128k-instruct",
        "layout": "half",
        "hf_config": {
            "hidden_size": 3072,
            "num_attention_heads": 32,
            "max_position_embeddings": 131072,
            "original_max_position_embeddings": 4096,
            "rope_theta": 10000.0,
            "rope_scaling": {"long_factor": PHI3_LONG, "short_factor": PHI3_SHORT, "type": "longrope"},
        },
        "from_hf": {
            "head_dim": 96,
            "rope_theta": 10000.0,
            "max_position_embeddings": 131072,
            "original_max_position_embeddings": 4096,
        },
        "notes": (
            "LongRoPE: short_factor while the sequence fits the original 4096 tokens, long_factor beyond (HF "
            "decides by max(position_ids) + 1, for the whole sequence). Attention factor "
            "sqrt(1 + ln 32 / ln 4096) in both regimes. Factor lists: the July 2024 config.json of "
            "microsoft/Phi-3-mini-128k-instruct; long_factor's first 31 entries were checked against the "
            "Hub page, the rest and short_factor come from a third-party copy of that file."
        ),
        "cases": [
            {"name": "short", "seq_len": 4096, "positions": [1, 4095]},
            {"name": "long", "seq_len": 131072, "positions": list(POSITIONS)},
        ],
    },
]


# --------------------------------------------------------------------------- inputs


def _x(name: str, case: str, shape: tuple[int, ...]) -> list:
    """Deterministic inputs k / X_SCALE, |k| <= X_MAX, from SHA-256 of (name, case, index)."""
    n = int(np.prod(shape))
    vals = []
    for i in range(n):
        h = hashlib.sha256(f"pemath-golden/{name}/{case}/{i}".encode()).digest()
        k = int.from_bytes(h[:8], "little") % (2 * X_MAX + 1) - X_MAX
        vals.append(k / X_SCALE)
    return np.array(vals, dtype=np.float64).reshape(shape).tolist()


def _pairs(layout: str, rotary_dim: int) -> list[tuple[int, int]]:
    h = rotary_dim // 2
    if layout == "half":
        return [(i, i + h) for i in range(h)]
    return [(2 * i, 2 * i + 1) for i in range(h)]


# --------------------------------------------------------------------------- the exact rotation


def _round53(v: mpmath.mpf) -> float:
    with mpmath.workprec(53):  # round to nearest, ties to even, at float64's 53 bits
        return float(+v)


def _expected(x: list, positions: list[int], freq: list[float], attention: float, layout: str, r: int) -> list:
    """The exact rotation of x by position * freq (freq and attention taken as exact), rounded once."""
    return expected_rotation(x, [[p] * (r // 2) for p in positions], freq, attention, layout, layout, r)


def expected_rotation(x: list, pos_of_pair: list[list[float]], freq: list[float], attention: float, layout: str,
                      out_layout: str, r: int) -> list:
    """Exact rotation (120 bits, rounded once): pair i of row t turns by ``pos_of_pair[t][i] * freq[i]``,
    read in ``layout`` and written in ``out_layout``; features beyond ``r`` pass through."""
    out = []
    src, dst = _pairs(layout, r), _pairs(out_layout, r)
    with mpmath.workprec(120):
        a = mpmath.mpf(attention)
        for head in x:
            rows = []
            for t, row in enumerate(head):
                y = list(row)
                for i, ((ia, ib), (oa, ob)) in enumerate(zip(src, dst)):
                    ph = mpmath.mpf(pos_of_pair[t][i]) * mpmath.mpf(freq[i])
                    c, s = mpmath.cos(ph), mpmath.sin(ph)
                    xa, xb = mpmath.mpf(row[ia]), mpmath.mpf(row[ib])
                    y[oa] = _round53(a * (xa * c - xb * s))
                    y[ob] = _round53(a * (xb * c + xa * s))
                rows.append(y)
            out.append(rows)
    return out


# --------------------------------------------------------------------------- honest error budget


def phase_error_units(scaling: RopeScaling | None, base: float, r: int) -> list[float]:
    r"""Per pair, a bound ``c_i`` on an honest implementation's relative phase error, in units of u.

    An implementation computing frequencies and phases in a binary format of unit
    roundoff ``u`` (float32: 2^-24), by the usual formulas, has
    :math:`|\phi_i' - \phi_i| \le c_i\, u\, |\phi_i|`. Counted: the exponent
    ``fl(2i/d_r)`` (its rounding moves :math:`b^{-e}` by :math:`\ln(b)\, e\, u`), the base
    rounded (``e u``), ``pow`` (<= 1 ulp = 2u), the reciprocal (u), the phase product
    (u), and each scaling's own operations: Linear and Proportional one division,
    LongRoPE the factor rounded and a product (2), YaRN the two reciprocals, the blend
    and the ramp (5 + s: the ramp weight's absolute error u is relative error up to s
    in the interpolated frequency), Llama 3.1 the wavelength and smoothing weight in
    its medium band (the weight's error h/(h-l) (c + 5) u, relative error up to s
    times that).
    """
    out = []
    for i in range(r // 2):
        e = 2 * i / r
        c = math.log(base) * e + 4 + 1  # frequency (pow, reciprocal, roundings) + the phase product
        if isinstance(scaling, (Linear, Proportional)):
            c += 1
        elif isinstance(scaling, LongRoPE):
            c += 2
        elif isinstance(scaling, YaRN):
            c += 5 + scaling.factor
        elif isinstance(scaling, Llama3):
            lam = 2 * math.pi * base**e
            L0 = scaling.original_max_position
            lo, hi = scaling.low_freq_factor, scaling.high_freq_factor
            if lam > L0 / lo:
                c += 1
            elif lam >= L0 / hi and hi > lo:  # Llama 4: no smoothing band when lo == hi
                c += scaling.factor * hi / (hi - lo) * (c + 5) + 5
        elif isinstance(scaling, DynamicNTK):
            # the enlarged base b' (float32 at run time) for seq_len up to 4 L0: its logarithm and 8 roundings
            c += 8 + e * math.log(4 * scaling.factor) * r / (r - 2)
        elif scaling is not None:
            raise ValueError(f"no error budget for {scaling!r}")
        out.append(round(c, 2))
    return out


# --------------------------------------------------------------------------- files


def _scaling_json(s: RopeScaling | None) -> dict | None:
    if s is None:
        return None
    fields = {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in s._fields().items()}
    return {"class": type(s).__name__, "rope_type": s.rope_type, "attention_factor": s.attention_factor, **fields}


def build(spec: dict[str, Any]) -> dict[str, Any]:
    """The golden document of one spec (a JSON-ready dict)."""
    args = dict(spec["from_hf"])
    rope_parameters = spec["hf_config"].get("rope_scaling")
    rspec = from_hf(rope_parameters, layout=spec["layout"], **args)
    base, r, scaling = rspec.base, rspec.rotary_dim, rspec.scaling
    head_dim = args["head_dim"]
    attention = 1.0 if scaling is None else float(scaling.attention_factor)
    cases = spec.get("cases") or [{"name": "default", "seq_len": None, "positions": list(POSITIONS)}]
    out_cases = []
    for case in cases:
        freq = [float(v) for v in inv_freq(r, base=base, scaling=scaling, seq_len=case["seq_len"])]
        positions = list(case["positions"])
        x = _x(spec["name"], case["name"], (HEADS, len(positions), head_dim))
        out_cases.append(
            {
                "name": case["name"],
                "seq_len": case["seq_len"],
                "positions": positions,
                "inv_freq": freq,
                "phase_error_units": phase_error_units(scaling, base, r),
                "x": x,
                "expected": _expected(x, positions, freq, attention, spec["layout"], r),
            }
        )
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "generator": "pemath/testing/golden/make_golden.py",
        "pemath_version": __version__,
        "name": spec["name"],
        "model": spec["model"],
        "notes": spec["notes"],
        "hf_config": spec["hf_config"],
        "from_hf": {"rope_parameters": "hf_config.rope_scaling" if rope_parameters is not None else None, **args},
        "rope": {
            "layout": spec["layout"],
            "head_dim": head_dim,
            "rotary_dim": r,
            "base": base,
            "attention_factor": attention,
            "scaling": _scaling_json(scaling),
        },
        "shape": "x and expected: [head][position index][feature], features in the layout above",
        "cases": out_cases,
    }


def _dump(obj: Any, indent: int = 0) -> str:
    """JSON with one line per innermost list of numbers (readable and small)."""
    pad, inner = " " * indent, " " * (indent + 1)
    if isinstance(obj, dict):
        if not obj:
            return "{}"
        items = [f"{inner}{json.dumps(k)}: {_dump(v, indent + 1)}" for k, v in obj.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(obj, list) and obj and isinstance(obj[0], (list, dict)):
        return "[\n" + ",\n".join(inner + _dump(v, indent + 1) for v in obj) + "\n" + pad + "]"
    return json.dumps(obj, separators=(",", ":") if isinstance(obj, list) else (", ", ": "))


def render(doc: dict[str, Any]) -> str:
    text = _dump(doc) + "\n"
    if json.loads(text) != doc:  # the custom layout must be plain JSON of the same document
        raise AssertionError("golden rendering does not round-trip")
    return text


def write_all(out: Path | str = OUT) -> list[Path]:
    """Write every spec's file into ``out``; return the paths."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for spec in SPECS:
        path = out / f"{spec['name']}.json"
        path.write_text(render(build(spec)), encoding="utf-8")
        paths.append(path)
    return paths


def run_cli(argv: list[str] | None, description: str, default_out: Path, write: Any) -> int:
    """The command line of a generator: ``--out DIR``, then one line per file written."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--out", default=str(default_out), help=f"output folder (default: {default_out})")
    args = parser.parse_args(argv)
    for path in write(args.out):
        print(f"wrote {path} ({path.stat().st_size / 1024:.1f} KiB)")
    return 0


def main(argv: list[str] | None = None) -> int:
    return run_cli(argv, __doc__.splitlines()[0], OUT, write_all)


if __name__ == "__main__":
    raise SystemExit(main())
