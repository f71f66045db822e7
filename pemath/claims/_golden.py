"""Every configuration pemath ships, bound to the vectors it publishes for it.

``pemath.testing.golden`` ships one file per registered RoPE model (format 2): the model's config.json keys, and
per case (layer type, regime, M-RoPE components) the inverse frequencies, the attention factor, the layouts, a
small ``x`` at positions up to 131071 and its exact rotation. The files are regenerated from the registry by
``python -m pemath.testing.golden.make_models``; the test suite checks the registry against transformers' own code
on recorded inputs (``tests/test_models.py``, ``tests/fixtures/peers/``). This check binds what ``pemath prove``
runs to those files: for each case, the spec that ``rope.from_hf_config`` reads from the config (the config reader,
the scalings and their regimes) must give the file's frequencies bitwise and its attention factor and layouts, and
the rotation must be the file's within the float64 bound, through each public form that applies (``rope.apply``;
``x cos + rotate(x) sin`` with ``rope.cos_sin``'s tables; the complex form, with ``apply_complex`` and with
Meta's ``freqs_cis`` table; the dense matrix; and apply and the matrix again with two features before the head
left alone by ``rotary_offset``) and, for a scaling
that depends on the sequence length, with ``seq_len`` left to be read from the positions (transformers' largest
position plus one).
"""

from __future__ import annotations

import numpy as np

from .. import rope
from ..testing import golden
from ..testing.golden import check as G
from ._model import CheckFailure

__all__ = ["check_models"]


def _spec(doc: dict, case: dict) -> rope.Spec:
    if doc.get("nope_layers"):  # a model that mixes RoPE and NoPE layers: the spec its RoPE layers share
        specs = {s for s in rope.layers(doc["config"]) if isinstance(s, rope.Spec)}
        if len(specs) != 1:
            raise CheckFailure(f"{doc['name']}: its RoPE layers have {len(specs)} specs, the file one")
        return specs.pop()
    return rope.from_hf_config(doc["config"], layer_type=case["layer_type"])


def _rotate_pairs(x: np.ndarray, layout: str) -> np.ndarray:
    """rotate(x) of eq. 34, written from the pairing: (x_a, x_b) -> (-x_b, x_a) on each pair."""
    out = np.empty_like(x)
    h = x.shape[-1] // 2
    if layout == "half":
        out[..., :h], out[..., h:] = -x[..., h:], x[..., :h]
    else:
        out[..., 0::2], out[..., 1::2] = -x[..., 1::2], x[..., 0::2]
    return out


def _forms(spec: rope.Spec, x: np.ndarray, pos: np.ndarray, seq_len: int) -> dict[str, np.ndarray]:
    """The case's rotation through each public form that applies to the spec (a spec with an output layout or
    M-RoPE has apply only)."""
    out = {"apply": rope.apply(x, pos, spec=spec, seq_len=seq_len)}
    if spec.is_multi_axis or spec.out_layout is not None:
        return out
    r = spec.rotary_dim_for(x.shape[-1])
    head, rest = x[..., :r], x[..., r:]
    cos, sin = rope.cos_sin(pos, spec=spec, seq_len=seq_len)
    rot = head * cos + _rotate_pairs(head, spec.layout) * sin
    out["cos_sin"] = np.concatenate([rot, rest], axis=-1)
    z = rope.to_complex(head, layout=spec.layout)
    out["complex"] = np.concatenate([rope.from_complex(rope.apply_complex(z, pos, spec=spec, seq_len=seq_len),
                                                       layout=spec.layout), rest], axis=-1)
    fc = rope.freqs_cis(pos, spec=spec, seq_len=seq_len)  # Meta's table: a e^{i p theta}, one row per position
    out["freqs_cis"] = np.concatenate([rope.from_complex(z * fc, layout=spec.layout), rest], axis=-1)
    dense = np.stack([rope.matrix(float(p), spec=spec, seq_len=seq_len) for p in pos])  # (T, d, d): the whole head
    out["matrix"] = np.einsum("tij,htj->hti", dense, x)
    return out


def _offset(doc: dict, case: dict, spec: rope.Spec, x: np.ndarray, pos: np.ndarray, where: str) -> int:
    """The case with two features put before the head and ``rotary_offset = 2``: every form must leave them as
    they are and rotate the rest as the file says. Returns the number of forms compared."""
    moved = spec.replace(rotary_offset=2, head_dim=None if spec.head_dim is None else spec.head_dim + 2)
    lead = np.full(x.shape[:-1] + (2,), 0.75)
    want = np.concatenate([lead, np.array(case["expected"])], axis=-1)
    tol = np.concatenate([np.zeros(lead.shape), np.array(G.bounds(doc, case, dtype="float64"))], axis=-1)
    x2 = np.concatenate([lead, x], axis=-1)
    forms = {"apply": rope.apply(x2, pos, spec=moved, seq_len=case["seq_len"]),
             "matrix": np.einsum("tij,htj->hti", np.stack([rope.matrix(float(p), spec=moved, seq_len=case["seq_len"])
                                                           for p in pos]), x2)}
    for form, y in forms.items():
        excess = np.abs(y - want) - tol
        if np.max(excess) > 0:
            at = np.unravel_index(int(np.argmax(excess)), excess.shape)
            raise CheckFailure(f"{where} with rotary_offset 2 through {form}: element {tuple(int(i) for i in at)} is "
                               f"{y[at]!r}, the file's rotation after two features left alone {want[at]!r}")
    return len(forms)


def check_models() -> str:
    """Each registered model's golden file against the spec pemath reads from its config (module docstring)."""
    n_cases, n_forms, regimes = 0, 0, 0
    for name in golden.names(2):
        doc = golden.load(name, version=2)
        for case in doc["cases"]:
            spec = _spec(doc, case)
            where = f"{name} / {case['name']}"
            want = case["rope"]
            if (spec.layout, spec.output_layout) != (want["layout"], want["out_layout"]):
                raise CheckFailure(f"{where}: layouts {spec.layout}/{spec.output_layout}, the file's "
                                   f"{want['layout']}/{want['out_layout']}")
            if "position_components" in case:
                pos = np.array(case["position_components"])[:, None, :]
            else:
                pos = np.array(case["positions"])
            if not spec.is_multi_axis:
                inv, factor = spec.frequencies(seq_len=case["seq_len"])
                if inv.tolist() != case["inv_freq"]:
                    raise CheckFailure(f"{where}: inverse frequencies differ from the file's (first at index "
                                       f"{int(np.argmax(inv != np.array(case['inv_freq'])))})")
                if factor != want["attention_factor"]:
                    raise CheckFailure(f"{where}: attention factor {factor!r}, the file's {want['attention_factor']!r}")
            x = np.array(case["x"], dtype=np.float64)
            forms = _forms(spec, x, pos, case["seq_len"])
            if getattr(spec.scaling, "length_dependent", False) and "positions" in case \
                    and case["seq_len"] == max(case["positions"]) + 1:
                forms["seq_len from positions"] = rope.apply(x, pos, spec=spec)
                regimes += 1
            for form, y in forms.items():
                report = G.compare(doc, case, y.tolist(), dtype="float64")
                if not report["ok"]:
                    raise CheckFailure(f"{where} through {form}: {G.describe(report)}"[:400])
            if len(forms) > 1:  # the same rotation behind two features left alone (Spec.rotary_offset)
                n_forms += _offset(doc, case, spec, x, pos, where)
            n_cases += 1
            n_forms += len(forms)
    return (f"{n_cases} cases of {len(golden.names(2))} registered models: the spec read from each config gives "
            f"the file's frequencies (bitwise), attention factor and layouts, and {n_forms} rotations through "
            f"apply, cos_sin, the complex form, freqs_cis and the dense matrix (where the spec has them; with two "
            f"features before the head and rotary_offset 2 too; {regimes} with seq_len read from the positions) are "
            "the file's within the float64 bound")
