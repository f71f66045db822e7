"""A whole Hugging Face ``config.json`` as a :class:`pemath.rope.Spec`."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from typing import Any

from ..._validate import check_bool, check_real, check_size, show
from .. import _core
from .families import (
    ALIBI_TYPES,
    DEFAULT_QK_ROPE_HEAD_DIM,
    DEFAULT_ROTARY_DIM,
    FAMILIES,
    FIXED_BASE,
    T5_TYPES,
)
from ...scaling import LongRoPE
from ...scaling.yarn import _mscale
from .parameters import from_hf
from ..spec import NoRope, Spec

__all__ = ["table_spec"]

_HEADS = ("num_attention_heads", "n_head", "num_heads", "n_heads")
_HIDDEN = ("hidden_size", "n_embd", "d_model", "dim")
_LENGTH = ("max_position_embeddings", "n_positions", "max_seq_len", "seq_length")
#: keys of a config's top level (or text_config) that only the rope dict should hold in v5
_ROPE_DICT_KEYS = ("rope_parameters", "rope_scaling")


def _load(config: Any) -> dict[str, Any]:
    if isinstance(config, (str, os.PathLike)) and os.path.isdir(config):
        # a model snapshot (a Hugging Face cache directory, a downloaded repository): its config.json
        inner = os.path.join(os.fspath(config), "config.json")
        if not os.path.isfile(inner):
            raise ValueError(f"config: {os.fspath(config)!r} is a directory without a config.json; give the "
                             "config.json's path or a snapshot directory that holds one")
        config = inner
    if isinstance(config, (str, os.PathLike)):
        try:
            with open(config, encoding="utf-8") as fh:
                data = json.load(fh)
        except OSError as exc:
            raise ValueError(f"config: cannot read {os.fspath(config)!r}: {exc.strerror or exc}") from exc
        except json.JSONDecodeError as exc:
            raise ValueError(f"config: {os.fspath(config)!r} is not valid JSON: {exc}") from exc
        config = data
    if not isinstance(config, Mapping):
        raise TypeError(f"config must be a config.json as a dict or a path to one, got {show(config)}")
    return dict(config)


def _first(cfg: Mapping[str, Any], names: tuple[str, ...]) -> tuple[str, Any] | tuple[None, None]:
    for n in names:
        if cfg.get(n) is not None:
            return n, cfg[n]
    return None, None


def _int(name: str, value: Any, minimum: int = 1) -> int:
    if isinstance(value, float) and value.is_integer() and abs(value) <= 2**53:
        value = int(value)
    return check_size(f"config[{name!r}]", value, minimum=minimum, maximum=2**40)


def _text(cfg: dict[str, Any]) -> dict[str, Any]:
    """The language model's config: ``text_config`` over the top level (multimodal configs)."""
    text = cfg.get("text_config")
    if text is None:
        return cfg
    if not isinstance(text, Mapping):
        raise TypeError(f"config['text_config'] must be a dict, got {show(text)}")
    merged = {k: v for k, v in cfg.items() if k != "text_config"}
    merged.update({k: v for k, v in text.items() if v is not None or k not in merged})
    if text.get("model_type") is None and cfg.get("model_type") is not None:
        merged["model_type"] = cfg["model_type"]
    return merged


def _head_dim(cfg: Mapping[str, Any], model_type: str | None) -> int:
    family = FAMILIES.get(model_type) if model_type is not None else None
    key = family.rope_head_key if family is not None else None
    if key is not None:
        return _int(key, cfg.get(key, DEFAULT_QK_ROPE_HEAD_DIM), 2)
    if cfg.get("head_dim") is not None:
        return _int("head_dim", cfg["head_dim"], 2)
    if family is not None and family.default_head_dim is not None:  # the config class's, not derived
        return family.default_head_dim
    hk, heads = _first(cfg, _HEADS)
    dk, hidden = _first(cfg, _HIDDEN)
    if heads is None or hidden is None:
        raise ValueError(
            "config has no head_dim, and no hidden size and head count to derive it from (looked for head_dim, "
            f"{'/'.join(_HIDDEN)} and {'/'.join(_HEADS)})"
        )
    heads, hidden = _int(hk, heads), _int(dk, hidden)
    if hidden % heads:
        raise ValueError(f"config[{dk!r}] = {hidden} is not a multiple of config[{hk!r}] = {heads}; give head_dim")
    return hidden // heads


def _refuse_other_encodings(cfg: Mapping[str, Any], model_type: str | None) -> None:
    attn = cfg.get("attn_config")
    alibi = cfg.get("alibi") is True or (isinstance(attn, Mapping) and attn.get("alibi") is True)
    if (model_type in ALIBI_TYPES and ALIBI_TYPES[model_type] is None) or alibi:
        raise ValueError(
            f"this config (model_type {model_type!r}) uses ALiBi, not RoPE: see pemath.alibi, or "
            "pemath.models.get(name).alibi for the registered ALiBi models"
        )
    if model_type in T5_TYPES:
        raise ValueError(f"model_type {model_type!r} uses T5's relative position buckets, not RoPE: see pemath.t5")
    pet = cfg.get("position_embedding_type")
    # "rope_gptj" (every shipped Cohere 2 config): RoPE; transformers does not read the key, the pairing is the code's
    if pet is not None and pet not in ("rotary", "rope", "rope_gptj"):
        raise ValueError(f"config['position_embedding_type'] is {pet!r}: this model does not use RoPE")
    if model_type in ALIBI_TYPES and model_type not in FAMILIES:
        raise ValueError(f"model_type {model_type!r} uses ALiBi, not RoPE: see pemath.alibi")


def _per_layer_type(cfg: Mapping[str, Any], model_type: str | None, rope: Any) -> dict[str, Any] | None:
    """The rope dict of each layer type, for configs whose layer types differ in RoPE; else None."""
    if isinstance(rope, Mapping) and rope and all(isinstance(v, Mapping) for v in rope.values()):
        return {str(k): dict(v) for k, v in rope.items()}
    family = FAMILIES.get(model_type) if model_type is not None else None
    if family is None or family.per_type is None:
        return None
    if rope and not any(takes for *_, takes in family.per_type):
        raise ValueError(f"a {model_type} config with rope_scaling/rope_parameters: HF's code reads "
                         f"{' and '.join(key for _, key, _, _ in family.per_type)}; pemath does not know what it "
                         "would do with the dict")
    out = {}
    for layer_type, key, default, takes in family.per_type:
        params = dict(rope or {}) if takes else {"rope_type": "default"}
        if params.get("rope_theta") is None:
            params["rope_theta"] = _given(cfg, key, default)
        out[layer_type] = params
    return out


def _given(cfg: Mapping[str, Any], key: str, default: float) -> Any:
    """The config's value of ``key``, the class default where absent; an explicit null is refused."""
    if key not in cfg:
        return default
    if cfg[key] is None:
        raise ValueError(f"config[{key!r}] is null; give a number or leave the key out (HF's default is {default:g})")
    return cfg[key]


def _phimoe(scaling: Any, short_mscale: Any, long_mscale: Any) -> Any:
    """HF's PhiMoE: the short factors in every regime; short_mscale / long_mscale as the attention factors."""
    if not isinstance(scaling, LongRoPE):
        raise ValueError(f"short_mscale/long_mscale go with rope_type 'longrope' (PhiMoE), got {scaling!r}")
    if short_mscale is None or long_mscale is None:
        raise ValueError("PhiMoE's rope_parameters need both short_mscale and long_mscale (HF reads the one of the "
                         "regime in force)")
    return LongRoPE(scaling.short_factor, scaling.short_factor, scaling.original_max_position,
                    factor=scaling.factor, max_position=scaling.max_position,
                    attention_factor=check_real("rope_parameters['long_mscale']", long_mscale, positive=True),
                    short_attention_factor=check_real("rope_parameters['short_mscale']", short_mscale, positive=True))


def _prepare(config: Any) -> dict[str, Any]:
    cfg = _text(_load(config))
    model_type = cfg.get("model_type")
    if model_type is not None and not isinstance(model_type, str):
        raise TypeError(f"config['model_type'] must be a string, got {show(model_type)}")
    _refuse_other_encodings(cfg, model_type)
    return cfg


def _num_layers(cfg: Mapping[str, Any], at_least: int | None = None) -> int:
    """The config's layer count; without one, the length of its per-layer lists, else ``at_least`` (enough for
    the class defaults, which are periodic in the layer index), else a refusal."""
    n = cfg.get("num_hidden_layers", cfg.get("n_layer", cfg.get("num_layers")))
    if n is None:
        for key in ("layer_types", "no_rope_layers"):
            if isinstance(cfg.get(key), list) and cfg[key]:
                return len(cfg[key])
        if at_least is not None:
            return at_least
    if n is None:
        raise ValueError("config has no num_hidden_layers (nor n_layer / num_layers): the per-layer RoPE needs the "
                         "number of layers; give the config.json's value")
    return _int("num_hidden_layers", n)


def _rope_mask(cfg: Mapping[str, Any], rule: str | None, n: int) -> list[bool] | None:
    """Which of the ``n`` layers apply RoPE under the family's rule (None: all of them)."""
    if rule is None:
        return None
    if rule == "no_rope_layers":
        flags = cfg.get("no_rope_layers")
        if not flags:  # the config classes' default: every interval-th layer is NoPE
            interval = _int("no_rope_layer_interval", cfg.get("no_rope_layer_interval", 4))
            return [(i + 1) % interval != 0 for i in range(n)]
        if not isinstance(flags, list) or len(flags) != n or any(f not in (0, 1) for f in flags):
            raise ValueError(f"config['no_rope_layers'] must be a list of {n} flags 0/1 (1: the layer applies "
                             f"RoPE; num_hidden_layers = {n}), got {show(flags)}")
        return [bool(f) for f in flags]
    if rule == "sliding":
        if "sliding_window" in cfg and cfg["sliding_window"] is None:  # the code rotates only where it slides
            return [False] * n
        return [t == "sliding_attention" for t in _layer_types(cfg, n)]
    raise AssertionError(f"unknown rope_layers rule {rule!r}")  # the family table is pemath's own


def _layer_types(cfg: Mapping[str, Any], n: int) -> list[str] | None:
    """The config's ``layer_types`` (checked against ``n``), else the list its config class derives (the family
    table's ``layer_pattern``), else None."""
    types = cfg.get("layer_types")
    if types is not None:
        if not isinstance(types, list) or len(types) != n or not all(isinstance(t, str) for t in types):
            raise ValueError(f"config['layer_types'] must be a list of {n} strings (num_hidden_layers = {n}), got "
                             f"{show(types)}")
        return list(types)
    family = FAMILIES.get(cfg.get("model_type"))
    if family is None or family.layer_pattern is None:
        return None
    key, default, where = family.layer_pattern
    every = _int(key, cfg.get(key, default))
    full = (lambda i: (i + 1) % every == 0) if where == "last" else (lambda i: i % every == 0)
    return ["full_attention" if full(i) else "sliding_attention" for i in range(n)]


def _temperature(cfg: Mapping[str, Any], family: Any) -> str:
    """What a NoPE layer does to its queries beyond RoPE, in words ("" where nothing)."""
    if family is None or family.nope_temperature is None:
        return ""
    flag, on, fkey, fdef, skey, sdef = family.nope_temperature
    if not check_bool(f"config[{flag!r}]", cfg.get(flag, on)):
        return ""
    floor, scale = cfg.get(fkey, fdef), cfg.get(skey, sdef)
    return (f"; its queries are scaled by 1 + {scale:g} ln(1 + floor((i + 1) / {floor:g})) of the token index i "
            f"({flag}), outside RoPE: pemath does not apply it")


def _nope(cfg: Mapping[str, Any], head_dim: int, why: str) -> NoRope:
    return NoRope(head_dim, reason=why, provenance=f"pemath family table (model_type {cfg.get('model_type')!r})")


def _layers(cfg: dict[str, Any], layout: str | None, at_least: int | None = None) -> tuple[Spec | NoRope, ...]:
    n = _num_layers(cfg, at_least)
    family = FAMILIES.get(cfg.get("model_type"))
    mask = _rope_mask(cfg, family.rope_layers if family is not None else None, n)
    per_type = _per_layer_type(cfg, cfg.get("model_type"), _rope_dict(cfg, family))
    sliding = family is not None and family.rope_layers == "sliding"
    types = _layer_types(cfg, n) if per_type is not None or sliding else None
    if per_type is not None and types is None:
        raise ValueError(f"this config gives each layer type its own RoPE ({sorted(per_type)}) but no layer_types "
                         "list saying which layer is which; give the config.json's layer_types")
    made: dict[Any, Spec] = {}
    out: list[Spec | NoRope] = []
    for i in range(n):
        lt = types[i] if per_type is not None else None
        if lt not in made:
            made[lt] = _type_spec(cfg, layer_type=lt, layout=layout)
        if mask is not None and not mask[i]:
            rule = family.rope_layers
            why = (f"no_rope_layers[{i}] = 0" if rule == "no_rope_layers" and cfg.get("no_rope_layers") else
                   f"layer {i} is a NoPE layer (every {cfg.get('no_rope_layer_interval', 4)}th layer)"
                   if rule == "no_rope_layers" else f"layer_types[{i}] = {types[i]!r}: RoPE on sliding layers only")
            out.append(_nope(cfg, made[lt].head_dim, f"{cfg.get('model_type')}: {why}{_temperature(cfg, family)}"))
        else:
            out.append(made[lt])
    return tuple(out)


def _rope_dict(cfg: Mapping[str, Any], family: Any) -> Any:
    """The config's RoPE dict: v5 rope_parameters or v4 rope_scaling (both, differing: refused), else the config
    class's own (the family table's default_rope: gpt-oss and Ministral 3 ship YaRN)."""
    v5, v4 = cfg.get("rope_parameters"), cfg.get("rope_scaling")
    if v5 is not None and v4 is not None and v5 != v4:
        raise ValueError("config has both rope_parameters (v5) and rope_scaling (v4) and they differ; keep one")
    rope_dict = v5 if v5 is not None else v4
    if rope_dict is None and family is not None and family.default_rope is not None:
        rope_dict = dict(family.default_rope)
    if rope_dict is not None and not isinstance(rope_dict, Mapping):
        raise TypeError(f"config's rope_parameters/rope_scaling must be a dict or null, got {show(rope_dict)}")
    return rope_dict


def table_spec(cfg: dict[str, Any], *, layer: int | None = None, layer_type: str | None = None,
               layout: str | None = None, per: tuple | None = None) -> Spec | NoRope:
    """:func:`pemath.rope.from_hf_config` from the family table (or the generic reading with ``layout``), for a
    prepared config; ``per``: the layers' answers where already known (measured)."""
    family = FAMILIES.get(cfg.get("model_type"))
    if layer is not None:
        if layer_type is not None:
            raise TypeError(f"pass layer= or layer_type=, not both; got layer={layer!r}, layer_type={layer_type!r}")
        if isinstance(layer, bool) or not isinstance(layer, int) or layer < 0:
            raise TypeError(f"layer must be a non-negative int (transformers' layer_idx), got {show(layer)}")
        per = per if per is not None else _layers(cfg, layout, at_least=layer + 1)
        i = layer
        if i >= len(per):
            raise ValueError(f"layer must be an int in [0, {len(per)}) (num_hidden_layers = {len(per)}), got "
                             f"{layer!r}")
        return per[i]
    rule = family.rope_layers if family is not None else None
    if rule == "sliding" and layer_type is not None and cfg.get("layer_types") is None:
        if layer_type not in ("sliding_attention", "full_attention"):
            raise ValueError(f"layer_type must be 'sliding_attention' or 'full_attention' for model_type "
                             f"{cfg.get('model_type')!r}, got {layer_type!r}")
        spec = _type_spec(cfg, layer_type=None, layout=layout)
        if layer_type == "sliding_attention":
            return spec
        return _nope(cfg, spec.head_dim, f"{cfg.get('model_type')}: layer type 'full_attention' applies no RoPE "
                                         "(RoPE on sliding layers only)")
    if rule is not None:
        n = _num_layers(cfg, at_least=8)  # the class defaults are periodic (period 4): 8 layers show both kinds
        mask = _rope_mask(cfg, rule, n)
        types = _layer_types(cfg, n) if rule == "sliding" else None
        if layer_type is not None and types is not None:
            chosen = [m for m, t in zip(mask, types) if t == layer_type]
            if chosen and not any(chosen):
                spec = _type_spec(cfg, layer_type=None, layout=layout)
                return _nope(cfg, spec.head_dim, f"{cfg.get('model_type')}: layer type {layer_type!r} applies no "
                                                 "RoPE (RoPE on sliding layers only)")
            if chosen and all(chosen):
                return _type_spec(cfg, layer_type=None, layout=layout)
        if not all(mask):
            nope = [i for i, m in enumerate(mask) if not m]
            raise ValueError(
                f"this model mixes RoPE and NoPE layers: layers {_short(nope)} apply no RoPE ({family.note}); pass "
                "layer= (or use rope.layers(config) for every layer)"
                + (f", or layer_type= one of {sorted(set(types))}" if types is not None else ""))
    return _type_spec(cfg, layer_type=layer_type, layout=layout)


def _short(idx: list[int]) -> str:
    return str(idx) if len(idx) <= 8 else f"[{', '.join(map(str, idx[:6]))}, ..., {idx[-1]}] ({len(idx)} layers)"


#: config keys whose names say they may change a model's RoPE (matched anywhere in the key)
_ROPE_WORDS = re.compile(r"rope|rotary|theta|position_emb|nope|partial|layer_types|window_pattern|global_attn|"
                         r"temperature|floor_scale|attn_scale|interleave|local_base|base_freq|freq_base|ntk|^alpha$|"
                         r"attention_interval|block_type|block_config|layer_config|per_layer|override_pattern|"
                         r"attn_layer|layer_period|mixer|hybrid|alibi|pe_type|position_enc|swa|global_layer|"
                         r"attention_type|sliding_window|use_rope|use_nope")
#: what the generic reading (an unknown model type with layout=) reads, besides the sizes
_GENERIC_READS = frozenset({"rope_theta", "rope_scaling", "rope_parameters", "partial_rotary_factor",
                            "position_embedding_type", "max_position_embeddings", "original_max_position_embeddings"})


def _refuse_unread(cfg: Mapping[str, Any]) -> None:
    """For a model type outside the family table: refuse every key whose name says it may change the RoPE (or
    which layers have it) and that the generic reading does not read, and layer types the config does not tie to
    RoPE. A list of names, so not every possible spelling: with transformers installed the model is measured."""
    unread = sorted(k for k, v in cfg.items()
                    if v is not None and v is not False and _ROPE_WORDS.search(k) and k not in _GENERIC_READS
                    and not (k == "layer_types" and _uniform(v)))
    if unread:
        raise ValueError(
            f"config key(s) {unread} may change the RoPE of model_type {cfg.get('model_type')!r}, and pemath's generic "
            "reading (layout=) does not read them: their meaning is in the model's code. Install pemath[hf] "
            "(torch and transformers) so that pemath measures the model from its code; or, if you have read that "
            "code and the keys do not change the RoPE, remove them from the dict you pass")


def _uniform(types: Any) -> bool:
    return isinstance(types, list) and len(set(map(str, types))) <= 1


def _type_spec(config: Any, *, layer_type: str | None = None, layout: str | None = None, guard: bool = True) -> Spec:
    """The Spec of one layer type (every layer of it applies RoPE); ``config``: the merged text config."""
    cfg = config
    model_type = cfg.get("model_type")
    family = FAMILIES.get(model_type) if model_type is not None else None
    if layout is not None:
        layout = _core.check_layout(layout)
        if family is not None and family.layout != layout:
            raise ValueError(f"layout={layout!r}, but model_type {model_type!r}'s code uses {family.layout!r} "
                             f"({family.note or 'rotate_half' if family.layout == 'half' else family.note})")
    elif family is None:
        raise ValueError(
            f"config['model_type'] is {model_type!r}, which pemath has not checked; the layout is fixed by the "
            "model's code, not its config: read its apply function and pass layout='half' (rotate_half, pairs "
            "(i, i + d/2)) or layout='interleaved' (pairs (2i, 2i+1)), or install pemath[hf] to measure it"
        )
    if family is None and guard:  # the measurement checks its candidates against the code instead
        _refuse_unread(cfg)
    in_layout = layout or family.layout
    out_layout = family.out_layout if family is not None else None
    key = family.interleave_key if family is not None else None
    if key is not None and not check_bool(f"config[{key!r}]", cfg.get(key, True)):
        in_layout, out_layout = "half", None

    head_dim = _head_dim(cfg, model_type)
    lk, mpe = _first(cfg, _LENGTH)
    mpe = None if mpe is None else _int(lk, mpe)

    rope_dict = _rope_dict(cfg, family)
    per_type = _per_layer_type(cfg, model_type, rope_dict)
    declared = cfg.get("layer_types")
    if per_type is not None:
        names = sorted(per_type)
        if layer_type is None:
            distinct = {json.dumps(v, sort_keys=True) for v in per_type.values()}
            if len(distinct) > 1:
                raise ValueError(f"this config gives each layer type its own RoPE; pass layer_type= one of {names}")
            layer_type = names[0]
        if layer_type not in per_type:
            raise ValueError(f"layer_type must be one of {names} (the config's RoPE layer types), got {layer_type!r}")
        params = per_type[layer_type]
    else:
        if layer_type is not None and (not isinstance(declared, list) or layer_type not in declared):
            raise ValueError(f"layer_type {layer_type!r} is not among the config's layer_types "
                             f"{sorted(set(declared)) if isinstance(declared, list) else '(none declared)'}")
        params = dict(rope_dict or {})

    for key in family.unread if family is not None else ():
        if cfg.get(key) is not None:
            raise ValueError(
                f"config[{key!r}] is set, but model_type {model_type!r}'s config class does not read it ("
                f"{family.note}); HF would run with its default: move it into rope_parameters, or use the key the "
                "class reads"
            )
    # multi-axis and beyond-rotation keys: taken out of the dict, into the Spec
    mrope_section = params.pop("mrope_section", None)
    mrope_interleaved = params.pop("mrope_interleaved", False)
    if family is not None and family.default_mrope is not None:
        if mrope_section is None:
            mrope_section = list(family.default_mrope)
        mrope_interleaved = family.mrope_interleaved  # what the code does, whatever the file says
    if params.get("type") == "mrope" or params.get("rope_type") == "mrope":
        if mrope_section is None:
            raise ValueError("config's rope type is 'mrope' but it has no mrope_section")
        params.pop("type", None), params.pop("rope_type", None)
    beta = params.pop("llama_4_scaling_beta", None)
    mscales = None
    if family is not None and family.longrope_mscales and ("short_mscale" in params or "long_mscale" in params):
        mscales = (params.pop("short_mscale", None), params.pop("long_mscale", None))

    theta = params.get("rope_theta")
    if theta is None:
        theta = cfg.get("rope_theta")
    if theta is None and family is not None and family.theta_key is not None:
        theta = cfg.get(family.theta_key)
    if model_type in FIXED_BASE:
        fixed = FIXED_BASE[model_type]
        if theta is not None and theta != fixed:
            raise ValueError(f"config gives rope_theta {theta!r}, but model_type {model_type!r}'s code fixes RoPE's "
                             f"base at {fixed:g} and does not read it; remove the key (or use layout= with a model "
                             "type whose code reads it)")
        theta = fixed
    if theta is None and family is not None:
        theta = family.default_theta
    prf = params.get("partial_rotary_factor")
    if prf is None:
        prf = cfg.get("partial_rotary_factor")
    explicit_rotary = None
    if family is not None and family.rotary_key == "rotary_pct" and prf is None:
        prf = cfg.get("rotary_pct")
    if prf is None and family is not None:
        prf = family.default_partial
    if family is not None and family.rotary_key == "rotary_dim":
        if "rotary_dim" not in cfg:  # the config class's default
            explicit_rotary = DEFAULT_ROTARY_DIM[model_type]
        elif cfg["rotary_dim"] is not None:  # null: the code rotates the whole head
            explicit_rotary = _int("rotary_dim", cfg["rotary_dim"], 2)
    if prf is not None:
        prf = check_real("config['partial_rotary_factor']", prf, minimum=0.0, maximum=1.0)

    spec = from_hf(params, head_dim=head_dim, layout=in_layout, max_position_embeddings=mpe, rope_theta=theta,
                   partial_rotary_factor=prf,
                   original_max_position_embeddings=cfg.get("original_max_position_embeddings"))
    changes: dict[str, Any] = {"out_layout": out_layout}
    if mscales is not None:
        changes["scaling"] = _phimoe(spec.scaling, *mscales)
    if explicit_rotary is not None:
        if spec.scaling is not None:
            raise ValueError(f"config['rotary_dim'] with a RoPE scaling ({spec.scaling!r}) has no HF equivalent")
        changes["rotary_dim"] = explicit_rotary
    if mrope_section is not None:
        changes["mrope_section"] = mrope_section
        changes["mrope_interleaved"] = check_bool("config's mrope_interleaved", mrope_interleaved)
    if family is not None and family.softmax_mscale and params.get("mscale_all_dim"):
        m = check_real("rope_parameters['mscale_all_dim']", params["mscale_all_dim"], nonnegative=True)
        changes["softmax_scale"] = _mscale(spec.scaling.factor, m) ** 2
    if beta is not None:
        L0 = params.get("original_max_position_embeddings")
        if L0 is None:
            raise ValueError("llama_4_scaling_beta needs rope_parameters['original_max_position_embeddings'], its "
                             "length scale")
        changes["query_scaling_beta"] = check_real("rope_parameters['llama_4_scaling_beta']", beta)
        changes["query_scaling_length"] = _int("original_max_position_embeddings", L0)
    return spec.replace(**changes)
