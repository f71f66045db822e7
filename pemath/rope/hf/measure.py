"""Per-layer RoPE Specs read from what a model's own code did to probes (NumPy only).

A :class:`~pemath.rope.hf.probe.Probe` holds, for every attention layer and position set,
the query and key the layer's code produced after RoPE from one pre-RoPE vector per probe.
Relative to position 0 (where RoPE is the identity up to its attention factor), the
output at position ``p`` is the rotation RoPE applies at ``p``. pemath reads it with its
own measurement (:func:`pemath.testing.recover_rope`: the pairing, the rotated features,
each pair's angle) and accepts a Spec only if that Spec predicts every recorded angle at
every position and regime (``seq_len = max(position_ids) + 1``, as transformers' forward),
the amplitude, and the rotary module's attention factor. Where pemath's family table
knows the model type, the table's Spec must pass this check or the result is an error
naming both; elsewhere the generic reading of the config is tried with the measured
pairing, then explicit frequencies; what none explains is refused with what did not fit.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import re
import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from ...testing import recover_rope
from .. import _core
from ..layout import convert_layout
from ..spec import NoRope, Spec
from .config import _layers, _load, _prepare, _type_spec
from .families import FAMILIES
from .probe import Probe, run_probe

__all__ = ["LayerReading", "Measurement", "measure_probe", "measure", "measure_cached", "MeasurementMismatch"]

#: float32 rounding in the model's code: HF computes the frequencies in float32 (``base ** (2i/d)``: the
#: exponent's rounding times ln(base) is up to about 14 units for base 1e6, then the scaling's own arithmetic) and
#: ``inv_freq @ position_ids`` in float32 (one more unit of the phase). ``_PHASE`` units of the phase cover both
#: with room; a wrong base, scaling or position moves a phase by a relative 1e-3 or more, 10^4 units
_U32 = 2.0**-24
_PHASE = 32


class MeasurementMismatch(ValueError):
    """The family table and the model's own code disagree about a layer's RoPE."""


@dataclasses.dataclass(frozen=True)
class LayerReading:
    """What one layer's code did, as read from the probes."""

    layer: int
    #: "rope", "nope" (attention without RoPE), "mixer" (no attention module: Mamba, gated delta nets, ...) or
    #: "unknown" (an attention module whose query and key were not recorded: refused)
    kind: str
    layout: str | None = None
    rotary_dim: int | None = None
    #: features before the rotated ones that never move (DeepSeek's MLA query is cat(q_nope, q_pe))
    offset: int = 0
    #: angle of each rotated pair at position 1 (radians)
    angle_at_1: tuple[float, ...] | None = None


@dataclasses.dataclass(frozen=True)
class Measurement:
    """The per-layer answer of :func:`measure`: ``specs[i]`` is a Spec, a NoRope, or None (refused: ``refusals[i]``)."""

    specs: tuple
    readings: tuple
    refusals: dict
    source: dict  # layer -> "table" | "generic" | "explicit" | "nope"
    provenance: str
    seconds: float
    layer_types: tuple | None = None

    def spec(self, layer: int) -> Spec | NoRope:
        if self.specs[layer] is None:
            raise ValueError(f"layer {layer}: {self.refusals[layer]}")
        return self.specs[layer]

    def specs_or_raise(self) -> tuple:
        """Every layer's Spec or NoRope; a ValueError naming each refused layer and why."""
        if self.refusals:
            raise ValueError("pemath cannot give this model's RoPE: "
                             + "; ".join(f"layer {i}: {w}" for i, w in sorted(self.refusals.items())[:3])
                             + (f" (and {len(self.refusals) - 3} more layers)" if len(self.refusals) > 3 else ""))
        return self.specs

    def one(self, layer_type: str | None = None) -> Spec | NoRope:
        """The RoPE all layers (of ``layer_type``) share; a ValueError where they differ (pass ``layer=``)."""
        specs = self.specs_or_raise()
        types = self.layer_types
        chosen = [s for i, s in enumerate(specs) if layer_type is None or (types and types[i] == layer_type)]
        if layer_type is not None and not chosen:
            raise ValueError(f"layer_type must be one of {sorted(set(types or ()))} (the config's layer_types), got "
                             f"{layer_type!r}")
        distinct = list(dict.fromkeys(chosen))
        if len(distinct) == 1:
            return distinct[0]
        if all(isinstance(s, NoRope) for s in chosen):
            return NoRope(reason="no layer of this model applies RoPE (measured from its code)",
                          provenance=self.provenance)
        nope = [i for i, s in enumerate(specs) if isinstance(s, NoRope)]
        raise ValueError(
            "this model's layers differ in RoPE (measured from its code)"
            + (f": layers {nope[:8]}{' ...' if len(nope) > 8 else ''} apply no RoPE" if nope else "")
            + "; pass layer= (or use rope.layers(config) for every layer)"
            + (f", or layer_type= one of {sorted(set(types))}" if types and layer_type is None else ""))


def _rows(a: np.ndarray) -> np.ndarray:
    """(probes, positions, heads, d) -> (positions, probes * heads, d)."""
    p, n, h, d = a.shape
    return np.transpose(a, (1, 0, 2, 3)).reshape(n, p * h, d)


def _moved(arr: np.ndarray) -> float:
    """The largest change of any feature between positions, relative to the largest feature at position 0."""
    r = _rows(arr)
    scale = float(np.max(np.abs(r[0]))) or 1.0
    return float(np.max(np.abs(r - r[:1]))) / scale


#: below this relative change a layer's query and key do not depend on the position: float32 rounding of rows
#: that hold the same values (the model's GEMMs may round rows differently) stays far below it; RoPE moves the
#: highest-frequency pair by at least ~0.1 rad between the probed positions 0, 1, 2 and 100 (pair 0 turns by its
#: frequency, 1 rad unscaled, and over 100 positions even a factor-32 linear scaling turns it by 3 rad)
_STILL = 1e-4


def _to_input_layout(r: np.ndarray, spec: Spec, rd: int) -> np.ndarray:
    if spec.out_layout is None:
        return r
    return np.asarray(convert_layout(r, src=spec.out_layout, dst=spec.layout, rotary_dim=rd))


def _slice(spec: Spec, d: int) -> tuple[int, int]:
    """Where the spec's head sits in the recorded features: DeepSeek's MLA head is [nope | rope]."""
    hd = spec.head_dim or d
    if hd == d:
        return 0, d
    if hd < d:
        return d - hd, d  # the RoPE part of a query that is cat(q_nope, q_pe)
    raise ValueError(f"the spec's head_dim {hd} is larger than the recorded head {d}")


def check_spec(spec: Spec | NoRope, q_sets: list[np.ndarray], k_sets: list[np.ndarray], positions: list[list[int]],
               factors: list) -> str | None:
    """None if ``spec`` predicts every recorded query and key; else what it does not predict, in words.

    ``factors[s]``: the attention factors the code's rotary modules give at position set ``s`` (a set, or a
    number, or None where none was read); the spec's factor must be among them."""
    if isinstance(spec, NoRope):
        worst = max(max(_moved(q), _moved(k)) for q, k in zip(q_sets, k_sets))
        return None if worst < _STILL else f"the code rotates this layer (relative change {worst:.3g} between positions)"
    factors = [({f} if isinstance(f, (int, float)) else f) for f in factors]
    for s, pos in enumerate(positions):
        seq_len = max(pos) + 1
        freq, a = spec.frequencies(spec.rotary_dim, seq_len)
        found = factors[s] if factors[s] is not None else set()
        if found and not any(abs(f - a) <= 1e-5 * max(1.0, a) for f in found):
            return (f"attention factor at seq_len {seq_len}: the code's rotary module gives "
                    f"{', '.join(f'{f:.9g}' for f in sorted(found))}, the spec {a:.9g}")
        if not found and abs(a - 1.0) > 1e-12:
            return (f"attention factor at seq_len {seq_len}: the spec has {a:.9g}, and no rotary module of the code "
                    "could be read to confirm it")
        for which, arr in (("query", q_sets[s]), ("key", k_sets[s])):
            r = _rows(arr)
            lo, hi = _slice(spec, r.shape[-1])
            if lo and _moved(arr[..., :lo]) > _STILL:
                return f"{which}: the features before the rotary slice [{lo}, {hi}) move with the position"
            r = _to_input_layout(r[..., lo:hi], spec, spec.rotary_dim).astype(np.float32)  # the model's dtype
            ref = r[0]
            rd = spec.rotary_dim
            plain = spec.replace(out_layout=None, mrope_section=None, mrope_interleaved=False)
            # each pair's size against its row's largest feature: the model's float32 projections round each
            # row on its own, which moves a small pair's angle by about u * row max / |pair|
            xa, xb = _core.split_pairs(ref.astype(np.float64), spec.layout, rd)
            rel = np.max(np.abs(ref), axis=-1, keepdims=True) / np.maximum(np.hypot(xa, xb), 1e-300)
            scale0 = spec.query_scale(0) if which == "query" else 1.0
            for j, p in enumerate(pos[1:], start=1):
                rec = recover_rope(r[j], ref, spec=plain)
                want = np.remainder(p * freq + math.pi, 2 * math.pi) - math.pi
                diff = np.abs(np.remainder(rec.angle - want[None, :] + math.pi, 2 * math.pi) - math.pi)
                allow = _PHASE * _U32 * (abs(p) * freq + math.pi) + 16 * _U32 * rel + 1e-6 + 4 * rec.uncertainty
                bad = np.nan_to_num(diff - allow, nan=0.0) > 0
                if np.any(bad):
                    i = int(np.nonzero(bad.any(axis=0))[0][0])
                    got = float(np.nanmedian(rec.angle[:, i]))
                    return (f"{which} at position {p} (seq_len {seq_len}): pair {i} turned by {got:.9g} rad, the spec "
                            f"gives {float(want[i]):.9g} (frequency {float(freq[i]):.9g})")
                qs = (spec.query_scale(p) / scale0) if which == "query" else 1.0
                amp = float(np.nanmedian(rec.amplitude))
                if abs(amp - qs) > 1e-4 * qs:
                    return f"{which} at position {p}: amplitude {amp:.9g} relative to position 0, the spec gives {qs:.9g}"
                rest = np.max(np.abs(r[j][:, rd:].astype(np.float64) - ref[:, rd:])) if r.shape[-1] > rd else 0.0
                if rest > 16 * _U32 * float(np.max(np.abs(ref))):
                    return f"{which} at position {p}: the features past the rotary dim {rd} move"
    return None


def _read_layer(i: int, q1: np.ndarray, positions: list[int]) -> LayerReading:
    """Pairing, rotated features and angles at position 1 of one layer, from the first position set.

    The rotated features are those that move at any probed position beyond float32 noise (at position 1 the
    lowest frequencies turn by less than a float32 unit, so position 1 alone would miss the last pairs); the
    pairing is read at the largest position, where every pair has turned; the angles at position 1."""
    r = _rows(q1).astype(np.float32)
    x0 = r[0].astype(np.float64)
    noise = 16 * _U32 * float(np.max(np.abs(x0)) or 1.0)
    moved = np.max(np.abs(r.astype(np.float64) - x0[None]), axis=(0, 1)) > noise
    idx = np.nonzero(moved)[0]
    lo, hi = int(idx[0]) - int(idx[0]) % 2, int(idx[-1]) + 1  # a still prefix: MLA's q_nope; a still tail: partial
    hi += (hi - lo) % 2
    far = int(np.argmax(positions))
    layout = recover_rope(r[far][:, lo:hi], r[0][:, lo:hi], rotary_dim=hi - lo).layout
    rec = recover_rope(r[positions.index(1)][:, lo:hi], r[0][:, lo:hi], layout=layout, rotary_dim=hi - lo)
    return LayerReading(i, "rope", layout, hi - lo, lo, tuple(float(v) for v in np.nanmedian(rec.angle, axis=0)))


def _factors(probe: Probe, layer: int) -> list[set]:
    """The attention factors the rotary modules give at each position set, for ``layer``: its layer type's module
    where the modules are per type; else every module's (a spec's factor must be among them)."""
    types = probe.hf_config.get("layer_types")
    lt = types[layer] if isinstance(types, list) and layer < len(types) else None
    out = []
    for amps in probe.rotary:
        own = {round(v, 9) for k, v in amps.items() if lt is not None and k.endswith("|" + lt)}
        out.append(own or {round(v, 9) for v in amps.values()})
    return out


def measure_probe(probe: Probe, *, table: bool = True, layout: str | None = None) -> Measurement:
    """Per-layer Specs from a recorded probe (see the module docstring). ``table``: check the family table."""
    t0 = time.perf_counter()
    cfg = _prepare(probe.config)
    # the sizes the model was built with where the file has none (the config class's defaults); the RoPE keys stay
    # the file's, so that the family table's own defaults (base, head dim, partial rotary) are what is checked
    text = cfg
    for key in ("num_hidden_layers", "hidden_size", "num_attention_heads"):
        if text.get(key) is None and probe.hf_config.get(key) is not None:
            text[key] = probe.hf_config[key]
    mt = cfg.get("model_type")
    built = probe.hf_config.get("model_type")
    if mt not in FAMILIES and built in FAMILIES:
        # a new model_type over a checked class (kimi_k2 is DeepseekV3), or a wrapper whose text config the file
        # does not spell out (GOT-OCR2 over Qwen2): the table reads the text config the code was built with
        cfg = _prepare({**probe.hf_config, "model_type": built})
        mt = built
    family = FAMILIES.get(mt) if table else None
    n = probe.num_layers
    expected: tuple | None = None
    if family is not None:
        try:
            expected = _layers(cfg, None)
        except (TypeError, ValueError) as exc:  # the table refuses this config: so does the measurement
            why = f"pemath's family table refuses this config ({exc}); the measurement does not answer around it"
            return Measurement(tuple([None] * n), (), {i: why for i in range(n)}, {}, probe.provenance,
                               probe.seconds + time.perf_counter() - t0, None)
    specs: list = []
    readings: list = []
    refusals: dict = {}
    source: dict = {}
    cache: dict = {}
    for i in range(n):
        qs = [probe.query[s].get(i) for s in range(len(probe.positions))]
        ks = [probe.key[s].get(i) for s in range(len(probe.positions))]
        if any(q is None for q in qs):
            mods = probe.attention_modules.get(i) or []
            if mods:
                specs.append(None)
                readings.append(LayerReading(i, "unknown"))
                refusals[i] = (f"layer {i}'s attention module ({', '.join(mods)}) did not call transformers' attention "
                               "interface, so its query and key could not be read; pemath does not guess them")
                continue
            specs.append(NoRope(None, reason=f"layer {i} has no attention module (a RoPE-free mixer)",
                                provenance=probe.provenance))
            readings.append(LayerReading(i, "mixer"))
            source[i] = "nope"
            continue
        d = qs[0].shape[-1]
        moved = max(max(_moved(q), _moved(k)) for q, k in zip(qs, ks))
        if moved < _STILL:
            reading = LayerReading(i, "nope")
            found: Any = NoRope(d, reason=f"layer {i}: the code applies no RoPE (query and key do not change with the "
                                          "position)", provenance=probe.provenance)
            how = "nope"
        else:
            reading = _read_layer(i, qs[0], probe.positions[0])
            found, how = None, None
        if expected is not None:
            want = expected[i]
            why = check_spec(want, qs, ks, probe.positions, _factors(probe, i))
            if why is not None:
                raise MeasurementMismatch(
                    f"model_type {mt!r}, layer {i}: pemath's family table gives {want!r}, but the model's code "
                    f"({probe.provenance}) disagrees: {why}")
            found, how = want, "table"
        elif found is None:
            key = (reading.layout, reading.rotary_dim, reading.offset, reading.angle_at_1)
            if key in cache and check_spec(cache[key][0], qs, ks, probe.positions, _factors(probe, i)) is None:
                found, how = cache[key]  # an earlier layer's answer, checked again on this layer's recording
            else:
                found, how, why = _derive(cfg, probe, i, reading, qs, ks, layout)
                if found is None:
                    specs.append(None)
                    readings.append(reading)
                    refusals[i] = why
                    continue
                cache[key] = (found, how)
        if isinstance(found, (Spec, NoRope)) and found.provenance is None:
            found = found.replace(provenance=probe.provenance)
        specs.append(found)
        readings.append(reading)
        source[i] = how
    captured = any(probe.query[s] for s in range(len(probe.positions)))
    if n and captured and all(isinstance(sp, NoRope) for sp in specs) and probe.rotary_classes:
        # a rotary module, yet no layer's query or key moved: positions may not have reached the layers
        why = (f"the model has a rotary module ({', '.join(probe.rotary_classes)}) but no layer's query or key "
               "changed with position_ids: pemath cannot tell whether it applies no RoPE or takes its positions "
               "from elsewhere, and does not conclude")
        specs = [None] * n
        refusals = {i: why for i in range(n)}
        source = {}
    types = probe.hf_config.get("layer_types")
    types = tuple(types) if isinstance(types, list) and len(types) == n else None
    return Measurement(tuple(specs), tuple(readings), refusals, source, probe.provenance,
                       probe.seconds + time.perf_counter() - t0, types)


def _derive(cfg: Mapping[str, Any], probe: Probe, i: int, reading: LayerReading, qs: list, ks: list,
            layout: str | None) -> tuple[Any, str | None, str]:
    """A Spec for an unknown model type's layer: the generic reading with the measured pairing, else explicit
    frequencies; (None, None, why) where neither predicts the recorded output."""
    lay = layout or reading.layout
    # the config as the model's config class made it (its defaults filled in), not only the file's keys
    cfg = _prepare({**probe.hf_config, "model_type": cfg.get("model_type")})
    hidden = sorted(k for k, v in _flat(cfg).items() if _UNSEEN.search(k) and v not in (None, False, 0, [], {}))
    if hidden:
        return None, None, (f"config key(s) {hidden} act where the probe cannot see (a reordering of the features "
                            "the same at every position, the softmax scale, a query temperature, M-RoPE's axes): "
                            "pemath does not certify a Spec for this model type")
    tried = []
    types = cfg.get("layer_types") if isinstance(cfg.get("layer_types"), list) else None
    lt_options = [types[i]] if types and i < len(types) else [None]
    for lt in lt_options:
        for kw in ({"layer_type": lt}, {}):
            try:
                cand = _type_spec(cfg, layout=lay, guard=False, **kw)
            except (TypeError, ValueError) as exc:
                tried.append(f"the config's generic reading with layout {lay!r}: {exc}")
                continue
            if cand.mrope_section is not None:
                tried.append(f"the generic reading {cand!r}: M-RoPE sections cannot be measured with one position "
                             "per token, and pemath does not certify what it did not measure")
                continue
            why = check_spec(cand, qs, ks, probe.positions, _factors(probe, i))
            if why is None:
                return cand, "generic", ""
            tried.append(f"the generic reading {cand!r}: {why}")
    # explicit frequencies: the angles at position 1 are the frequencies (each below pi)
    ang = np.asarray(reading.angle_at_1, dtype=np.float64)
    if np.all(np.isfinite(ang)) and np.all(ang >= 0):
        d = qs[0].shape[-1]
        try:
            cand = Spec(lay, inv_freq=tuple(ang), head_dim=d - reading.offset)
        except (TypeError, ValueError) as exc:
            tried.append(f"explicit frequencies: {exc}")
        else:
            # refine each frequency from the largest position of the first set (the angle there, unwrapped)
            cand = _refine(cand, qs[0], probe.positions[0])
            why = check_spec(cand, qs, ks, probe.positions, _factors(probe, i))
            if why is None:
                return cand, "explicit", ""
            tried.append(f"explicit frequencies measured at position 1: {why}")
    return None, None, ("the model's code was measured but no Spec pemath can express predicts it ("
                        + "; ".join(tried) + ")")


#: keys whose effect is invisible to the probe's relative reading (one position per token, relative to position 0)
_UNSEEN = re.compile(r"interleave|mscale_all_dim|temperature|mrope|softmax")


def _flat(cfg: Mapping[str, Any]) -> dict:
    """The config's keys and those of its RoPE dict(s), one level."""
    out = dict(cfg)
    for key in ("rope_parameters", "rope_scaling"):
        inner = cfg.get(key)
        if isinstance(inner, Mapping):
            for v in ([inner] if not all(isinstance(x, Mapping) for x in inner.values()) else inner.values()):
                out.update(v)
    return out


def _refine(spec: Spec, q: np.ndarray, pos: list[int]) -> Spec:
    r = _rows(q)
    freq = np.asarray(spec.inv_freq)
    j = int(np.argmax(pos))
    p = pos[j]
    if p <= 1:
        return spec
    lo = r.shape[-1] - spec.rotary_dim if spec.head_dim and spec.head_dim < r.shape[-1] else 0
    rec = recover_rope(r[j][:, lo:lo + spec.rotary_dim], r[0][:, lo:lo + spec.rotary_dim], layout=spec.layout,
                       rotary_dim=spec.rotary_dim)
    ang = np.nanmedian(rec.angle, axis=0)
    turns = np.round((p * freq - ang) / (2 * math.pi))
    better = (ang + 2 * math.pi * turns) / p
    ok = np.isfinite(better) & (np.abs(better - freq) < 1e-3 * np.maximum(freq, 1e-12) + 1e-6)
    return spec.replace(inv_freq=tuple(np.where(ok, better, freq)))


@functools.lru_cache(maxsize=32)
def measure_cached(config_json: str, layout: str | None) -> Measurement:
    """:func:`measure` of a config given as JSON text, cached (from_hf_config asks once per layer)."""
    return measure(json.loads(config_json), layout=layout)


def measure(config: Any, *, table: bool = True, layout: str | None = None) -> Measurement:
    """Run the model's own transformers code on probes and read its per-layer RoPE (needs torch, transformers).

    Returns a :class:`Measurement`: ``specs[i]`` for every layer (a Spec, a NoRope, or None
    where refused, with the reason in ``refusals[i]``), each carrying the transformers
    version and classes measured as ``provenance``; ``seconds``: the time it took. With
    ``table`` (the default), a model type in pemath's family table must agree with the
    measurement on every layer, or :class:`MeasurementMismatch` names both.
    """
    raw = _load(config)
    return measure_probe(run_probe(raw), table=table, layout=layout)
