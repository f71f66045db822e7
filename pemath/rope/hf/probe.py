"""Run a model's own transformers code on probes and record what its attention layers received.

Needs torch and transformers (``pip install 'pemath[hf]'``); nothing else of pemath imports
this module. The model is built from its config with its own classes, made small where size
does not touch RoPE (one attention head per layer with the config's head dims, tiny MLPs and
expert counts, a tiny vocabulary) and with random weights: no checkpoint is read. Every
token is its own sequence of length one, at its own position, so no layer mixes positions
(causal convolutions and recurrent layers included) and a layer's pre-RoPE query is the
same at every position; a probe attention function, registered with transformers'
``AttentionInterface``, records each layer's query and key after the model's own RoPE and
returns zeros, so the residual stream stays position-free. What RoPE did is then read from
the recorded arrays alone (:mod:`pemath.rope.hf.measure`, NumPy only).

What the probe cannot see: code that depends on a token's index in its sequence rather
than on ``position_ids`` (every probe token is index 0 of its own sequence: Llama 4's
``attn_temperature_tuning`` scales the NoPE layers' queries that way, outside RoPE; the
family table says so in those layers' NoRope reason), and attention modules that do not
call transformers' attention interface (refused, never guessed).
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import re
import time
from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = ["Probe", "run_probe", "position_sets", "available"]

#: sizes that do not touch RoPE, shrunk so that any model probes in seconds and a few hundred MB
_SHRINK = {"intermediate_size": 16, "moe_intermediate_size": 16, "shared_expert_intermediate_size": 16,
           "ffn_hidden_size": 16, "vocab_size": 64, "expert_intermediate_size": 16, "n_inner": 16, "ffn_dim": 16,
           "d_ff": 16, "inner_hidden_size": 16}
_CAP = {"num_experts": 4, "num_local_experts": 4, "n_routed_experts": 4, "num_experts_per_tok": 2, "top_k": 2,
        "n_group": 1, "topk_group": 1, "n_shared_experts": 1, "moe_topk": 2, "num_shared_experts": 1,
        "linear_num_key_heads": 1, "linear_num_value_heads": 1, "index_n_heads": 1, "q_lora_rank": 64}
_PROBES = 1


@dataclasses.dataclass
class Probe:
    """What a model's attention layers received after RoPE, for one config (NumPy arrays only).

    ``query[s][i]`` / ``key[s][i]``: layer ``i``'s arrays for position set ``s``, shape
    ``(probes, positions, heads, dim)``; a layer missing from them called no attention
    function. ``attention_modules[i]``: the class names of the attention-like modules of
    layer ``i`` (a layer whose attention module was not recorded is refused, not taken as
    NoPE). ``rotary[s]``: each rotary module's amplitude ``sqrt(cos^2 + sin^2)`` at
    position 0, per layer type. ``config``: the config as given; ``hf_config``: what
    transformers' config class made of it (its ``to_dict``).
    """

    config: dict
    hf_config: dict
    model_type: str
    num_layers: int
    positions: list
    query: list
    key: list
    attention_modules: dict
    rotary: list
    provenance: str
    seconds: float
    #: class names of the model's rotary modules (an empty list: the model has none)
    rotary_classes: list = dataclasses.field(default_factory=list)
    #: position sets the model's code refused (JSON of the set -> the error), e.g. past an absolute table
    skipped: dict = dataclasses.field(default_factory=dict)

    def to_npz(self) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Arrays and a JSON-able manifest (``tests/fixtures`` replays probes recorded this way)."""
        arrays: dict[str, np.ndarray] = {}
        same: dict[str, int] = {}
        layers = sorted(self.query[0])
        for pos, i in enumerate(layers):
            twin = next((j for j in layers[:pos] if str(j) not in same and all(
                np.array_equal(self.query[s][i], self.query[s][j]) and np.array_equal(self.key[s][i], self.key[s][j])
                for s in range(len(self.positions)))), None)
            if twin is not None:
                same[str(i)] = twin
                continue
            for s in range(len(self.positions)):
                arrays[f"{s}/{i}/q"] = self.query[s][i].astype(np.float32)
                arrays[f"{s}/{i}/k"] = self.key[s][i].astype(np.float32)
        meta = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name not in ("query", "key")}
        meta["attention_modules"] = {str(k): v for k, v in self.attention_modules.items()}
        meta["same_as"] = same
        return arrays, json.loads(json.dumps(meta, default=_jsonable))

    @classmethod
    def from_npz(cls, arrays: Mapping[str, np.ndarray], meta: Mapping[str, Any]) -> Probe:
        sets = len(meta["positions"])
        query: list = [{} for _ in range(sets)]
        key: list = [{} for _ in range(sets)]
        for name, a in arrays.items():
            s, i, which = name.split("/")
            (query if which == "q" else key)[int(s)][int(i)] = np.asarray(a)
        for i, j in meta.get("same_as", {}).items():
            for s in range(sets):
                query[s][int(i)], key[s][int(i)] = query[s][j], key[s][j]
        kw = {k: v for k, v in meta.items() if k != "same_as"}
        kw["attention_modules"] = {int(k): v for k, v in meta["attention_modules"].items()}
        return cls(query=query, key=key, **kw)


def _jsonable(v: Any) -> Any:
    if isinstance(v, (np.integer, np.floating)):
        return v.item()
    if isinstance(v, np.ndarray):
        return v.tolist()
    return str(v)


def available() -> bool:
    """Whether torch and transformers can be imported (without importing them)."""
    import importlib.util

    return all(importlib.util.find_spec(m) is not None for m in ("torch", "transformers"))


def _deps() -> tuple[Any, Any]:
    try:
        import torch
        import transformers
    except ImportError as exc:
        raise ImportError(
            "measuring a model's RoPE runs its transformers code: install torch (the CPU build is enough) and "
            f"transformers, e.g. pip install 'pemath[hf]' ({exc})"
        ) from exc
    return torch, transformers


def _config_class(cfg: Mapping[str, Any], transformers: Any) -> Any:
    from transformers import CONFIG_MAPPING

    mt = cfg.get("model_type")
    if isinstance(mt, str) and mt in CONFIG_MAPPING:
        return CONFIG_MAPPING[mt]
    # a new model_type over a known class (kimi_k2 is DeepseekV3ForCausalLM): the class's config
    for arch in cfg.get("architectures") or ():
        cls = getattr(transformers, str(arch), None)
        if cls is not None and getattr(cls, "config_class", None) is not None:
            return cls.config_class
    raise ValueError(
        f"transformers {transformers.__version__} does not know model_type {mt!r}"
        + (f" nor the architectures {cfg.get('architectures')}" if cfg.get("architectures") else "")
        + ": its code cannot be run to measure the RoPE (a newer transformers, or trust_remote_code models, "
        "are outside what pemath measures)"
    )


def build_config(config: Mapping[str, Any]) -> tuple[Any, Any]:
    """transformers' config object for ``config`` and its text (decoder) config."""
    torch, transformers = _deps()
    cls = _config_class(config, transformers)
    kwargs = {k: v for k, v in config.items() if k not in ("model_type", "architectures", "transformers_version")}
    try:
        conf = cls(**json.loads(json.dumps(kwargs)))
    except Exception as exc:  # the config class's own validation: its message is the reason
        raise ValueError(f"transformers {transformers.__version__}'s {cls.__name__} rejects this config: "
                         f"{type(exc).__name__}: {exc}") from exc
    text = conf.get_text_config(decoder=True) if hasattr(conf, "get_text_config") else conf
    return conf, text


def _small_overrides(text: Any, n_heads: int) -> dict[str, Any]:
    """The config values that make the model small without touching RoPE (read from the full text config):
    ``n_heads`` attention heads of the config's head dim (fewer where the config has fewer)."""
    over: dict[str, Any] = {}
    heads = getattr(text, "num_attention_heads", None)
    hidden = getattr(text, "hidden_size", None)
    d = getattr(text, "head_dim", None)
    if d is None and isinstance(heads, int) and isinstance(hidden, int) and heads:
        d = hidden // heads
    if isinstance(heads, int) and isinstance(d, int):
        h = min(n_heads, heads)
        over.update(num_attention_heads=h, hidden_size=h * d)
        if not isinstance(getattr(type(text), "head_dim", None), property):  # Falcon derives it, read-only
            over["head_dim"] = d
        kv = getattr(text, "num_key_value_heads", None)
        if isinstance(kv, int):
            over["num_key_value_heads"] = next(k for k in range(min(kv, h), 0, -1) if h % k == 0)
    for k, v in _SHRINK.items():
        if isinstance(getattr(text, k, None), int):
            over[k] = v
    ids = [getattr(text, k, None) for k in ("pad_token_id", "bos_token_id", "eos_token_id")]
    ids = [i for v in ids for i in (v if isinstance(v, (list, tuple)) else [v]) if isinstance(i, int)]
    if ids and "vocab_size" in over:
        over["vocab_size"] = max(over["vocab_size"], max(ids) + 1)  # the special tokens stay in the vocabulary
    for k, v in _CAP.items():
        cur = getattr(text, k, None)
        if isinstance(cur, int) and cur > v:
            over[k] = v
    for k in ("num_experts_per_tok", "top_k", "moe_topk"):  # routing the class leaves unset (DeepSeek-V2's
        if k in text.to_dict() and text.to_dict()[k] is None:  # default): any value, routing is not RoPE
            over[k] = 1
    return over


#: config keys whose values may change the RoPE or the layer structure: a small config keeps each as the full has it
_ROPE_KEYS = re.compile(r"rope|rotary|theta|position_emb|nope|partial|layer|block|hybrid|attn|attention|interval|"
                        r"pattern|sliding|window|interleave|local_base|freq|max_position|head_dim")


def _small_config(config: Mapping[str, Any], conf: Any, text: Any, n_heads: int) -> Any:
    """The text config with the small sizes, built so that what its class derives from sizes (a Mamba head size,
    say) is derived again, and checked to keep every RoPE key of the full config.

    Tried in turn: the class on the file's own keys (sizes derived again), the class on the full config's values
    (a wrapper's defaults for its text config kept: Mistral 3), the full config with the sizes set on it. The
    first whose RoPE keys equal the full config's is used."""
    import copy

    over = _small_overrides(text, n_heads)
    full = text.to_dict()
    own = (config.get("text_config") or config) if text is not conf else config  # a flat v4 multimodal file too
    own = {k: v for k, v in (own or {}).items() if k not in ("model_type", "architectures", "transformers_version")}
    base = {k: v for k, v in full.items() if k not in ("model_type", "architectures", "transformers_version")}
    for kwargs in (own, base):
        try:
            small = type(text)(**json.loads(json.dumps({**kwargs, **over}, default=_jsonable)))
        except Exception:  # noqa: BLE001 - the next way is tried
            continue
        if _same_rope_keys(full, small.to_dict(), over):
            return small
    small = copy.deepcopy(text)
    for k, v in over.items():
        setattr(small, k, v)
    if not _same_rope_keys(full, small.to_dict(), over):
        raise ValueError("the config cannot be made small without changing a RoPE or layer-structure key")
    return small


def _same_rope_keys(full: dict, small: dict, over: dict) -> bool:
    return all(small.get(k) == v for k, v in full.items() if _ROPE_KEYS.search(k) and k not in over)


def _base_model_class(text: Any, transformers: Any) -> Any:
    from transformers.models.auto.modeling_auto import MODEL_MAPPING_NAMES

    name = MODEL_MAPPING_NAMES.get(text.model_type)
    if isinstance(name, (list, tuple)):
        name = name[0]
    cls = getattr(transformers, name, None) if name else None
    if cls is None:
        raise ValueError(f"transformers {transformers.__version__} has no base model class for model_type "
                         f"{text.model_type!r}: nothing to run")
    return cls


def position_sets(config: Mapping[str, Any], text: Any) -> list[list[int]]:
    """Position sets, one forward each, so that each length-driven regime is seen on both sides of its switch.

    HF's dynamic NTK and LongRoPE choose their regime from ``max(position_ids) + 1``. Each set
    holds 0 (the reference), 1, 2, 100 and one more position: ``max_position_embeddings - 1``
    (seq_len at the context), ``max_position_embeddings`` (just past it), each
    ``original_max_position_embeddings`` the config names minus 1 and itself, and twice the
    largest length plus 3 (far past every switch).
    """
    full = text.to_dict() if hasattr(text, "to_dict") else {}
    lengths, originals = set(), set()
    for src in (full, config):
        if isinstance(src.get("max_position_embeddings"), int) and src["max_position_embeddings"] > 101:
            lengths.add(int(src["max_position_embeddings"]))
        if isinstance(src.get("original_max_position_embeddings"), int):
            originals.add(int(src["original_max_position_embeddings"]))
        rp = src.get("rope_parameters") or src.get("rope_scaling") or {}
        inner = list(rp.values()) if isinstance(rp, Mapping) and rp and all(
            isinstance(v, Mapping) for v in rp.values()) else [rp]
        for d in inner:
            v = d.get("original_max_position_embeddings") if isinstance(d, Mapping) else None
            if isinstance(v, int):
                originals.add(int(v))
    start = [0, 1, 2, 100]
    sets = []
    for n in sorted(lengths | {L for L in originals if L > 101}):
        sets += [start + [n - 1], start + [n]]
    sets.append(start + [2 * max(lengths | originals | {4096}) + 3])
    return sets


def _attention_modules(layers: Any) -> dict[int, list[str]]:
    """Class names of each decoder layer's attention-like modules (the class name contains "Attention": a layer
    that holds one but whose query and key are not recorded is refused, never taken as NoPE; Mamba mixers and
    gated delta nets hold none)."""
    import torch

    out: dict[int, list[str]] = {}
    for i, layer in enumerate(layers):
        names = []
        for mod in layer.modules():
            cname = type(mod).__name__
            if "Attention" in cname and not isinstance(mod, torch.nn.Linear) and cname not in names:
                names.append(cname)
        out[i] = names
    return out


def _decoder_layers(model: Any, n: int) -> Any:
    """The model's list of ``n`` decoder layers (its one ModuleList of ``num_hidden_layers`` modules), or None."""
    import torch

    found = [mod for _, mod in model.named_modules() if isinstance(mod, torch.nn.ModuleList) and len(mod) == n]
    return found[0] if len(found) == 1 else None  # none, or several candidates: pemath does not guess which


def _same_input_every_layer(layers: Any, torch: Any) -> tuple[list, dict]:
    """Make every layer see what layer 0 sees, with the weights of the first earlier layer of its structure.

    Then a layer's pre-RoPE query depends only on its structure, so layers that treat positions
    alike record identical arrays (the recordings keep one copy), and no layer's input
    depends on what the layers before it did. Returns the hook handles and the dict that holds layer 0's input
    (cleared before each forward)."""
    seen: dict = {}
    for layer in layers:
        sig = tuple((k, tuple(v.shape), str(v.dtype)) for k, v in layer.state_dict().items())
        if sig in seen:
            layer.load_state_dict(seen[sig].state_dict())
        else:
            seen[sig] = layer
    first: dict = {}

    def hook(module: Any, args: tuple, kwargs: dict) -> Any:
        hs = args[0] if args else kwargs.get("hidden_states")
        if not isinstance(hs, torch.Tensor):
            return None
        if "h" not in first:
            first["h"] = hs
            return None
        if hs.shape != first["h"].shape:
            return None
        if args:
            return (first["h"], *args[1:]), kwargs
        return args, {**kwargs, "hidden_states": first["h"]}

    return [layer.register_forward_pre_hook(hook, with_kwargs=True) for layer in layers], first


def _rotary_amplitudes(model: Any, torch: Any, hidden: int, pid: Any) -> dict[str, float]:
    """Each rotary module's ``sqrt(cos^2 + sin^2)`` at position 0 (the attention factor), per layer type."""
    out: dict[str, float] = {}
    x = torch.zeros(1, 1, hidden)
    for name, mod in model.named_modules():
        cname = type(mod).__name__
        if not cname.endswith("RotaryEmbedding") or "Vision" in cname:
            continue
        params = inspect.signature(mod.forward).parameters
        types = [None]
        if "layer_type" in params:
            types = list(getattr(mod, "layer_types", None) or getattr(getattr(mod, "config", None), "layer_types",
                                                                        None) or [None])
            types = sorted(set(t for t in types if t is not None)) or [None]
        for lt in types:
            try:
                with torch.no_grad():
                    res = mod(x, pid, **({"layer_type": lt} if lt is not None else {}))
            except Exception:  # noqa: BLE001 - a rotary module that needs other inputs: no amplitude read
                continue
            if isinstance(res, torch.Tensor) and res.is_complex():
                amp = res.abs().reshape(-1)
            elif isinstance(res, (tuple, list)) and len(res) == 2:
                cos, sin = (t.double() for t in res)
                amp = torch.sqrt(cos * cos + sin * sin)
                amp = amp.reshape(-1, amp.shape[-1])[0]
            else:
                continue
            out[f"{name}|{lt or ''}"] = float(amp.reshape(-1)[0])
    return out


#: the size keys a generic reading of the config needs (head dim, layer count), kept with the RoPE keys
_SIZES = frozenset({"model_type", "hidden_size", "num_attention_heads", "num_key_value_heads", "num_hidden_layers",
                    "n_embd", "n_head", "n_layer", "d_model", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim"})

#: head counts tried in turn: one head is the smallest model; some attention codes need more (CodeGen's 4-way
#: split of its heads)
_HEAD_COUNTS = (1, 2, 4, 8)


def run_probe(config: Mapping[str, Any]) -> Probe:
    """Build the model of ``config`` with its transformers classes and record its attention inputs (see module)."""
    t0 = time.perf_counter()
    torch, transformers = _deps()
    from transformers import AttentionInterface

    conf, full = build_config(config)
    cls = _base_model_class(full, transformers)
    captured: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def probe_attention(module: Any, query: Any, key: Any, value: Any, attention_mask: Any, **kw: Any) -> Any:
        idx = getattr(module, "layer_idx", None)
        if idx is None:
            raise RuntimeError(f"{type(module).__name__} has no layer_idx: its layer cannot be named")
        if int(idx) in captured:  # two attention calls in one layer: which one applies RoPE is not ours to guess
            raise RuntimeError(f"layer {idx} calls the attention function twice ({type(module).__name__})")
        captured[int(idx)] = (query.detach().double().numpy().copy(), key.detach().double().numpy().copy())
        b, h, s, _ = query.shape
        return torch.zeros(b, s, h, value.shape[-1], dtype=query.dtype), None

    AttentionInterface.register("pemath_probe", probe_attention)  # a name of pemath's own, set again each call
    with torch.random.fork_rng(devices=[]):  # the probe's random weights leave the caller's generator as it was
        return _run(config, conf, full, cls, captured, probe_attention, torch, transformers, t0)


def _run(config: Mapping[str, Any], conf: Any, full: Any, cls: Any, captured: dict, probe_attention: Any, torch: Any,
         transformers: Any, t0: float) -> Probe:
    # the model's own config (before shrinking): its RoPE and layer-structure keys and its sizes, what the
    # measurement reads (the generic reading of an unchecked model type is made from it)
    hf_config = {k: v for k, v in json.loads(json.dumps(full.to_dict(), default=_jsonable)).items()
                 if _ROPE_KEYS.search(k) or k in _SIZES}
    sets = position_sets(config, full)
    failures = []
    for n_heads in _HEAD_COUNTS:
        text = _small_config(config, conf, full, n_heads)
        text._attn_implementation = "pemath_probe"
        torch.manual_seed(0)
        try:
            _check_size(cls, text, torch)
            model = cls(text).eval()
            n = int(getattr(text, "num_hidden_layers", 0) or 0)
            layers = _decoder_layers(model, n)
            if layers is None:
                raise ValueError(f"pemath cannot tell which of {cls.__name__}'s modules are the {n} decoder layers "
                                 "(no single ModuleList of num_hidden_layers modules)")
            attn = _attention_modules(layers)
            hooks, first = _same_input_every_layer(layers, torch)
            hidden = int(text.hidden_size)
            emb = torch.randn(_PROBES, hidden, dtype=torch.float32)
            runs = [_forward(model, torch, emb, sets[0], captured, first)] if any(attn.values()) else [None]
            break
        except Exception as exc:  # noqa: BLE001 - the model's own error is the reason; more heads may fix it
            model = None
            if isinstance(exc, MemoryError):
                raise ValueError(f"transformers {transformers.__version__}'s {cls.__name__}: {exc}") from exc
            if isinstance(exc, KeyError) and "pemath_probe" in str(exc):
                raise ValueError(
                    f"transformers {transformers.__version__}'s {cls.__name__} picks its attention class itself "
                    "instead of calling transformers' attention interface, so pemath cannot read the query and key "
                    "its layers produce (GPT-J-style code); it is not measured") from exc
            failures.append(f"{n_heads} head(s): {type(exc).__name__}: {exc}")
    else:
        raise ValueError(f"transformers {transformers.__version__}'s {cls.__name__} could not be built and run on "
                         f"the probe (made small: {'; '.join(failures[:1] + failures[-1:])})")
    skipped: dict[str, str] = {}
    kept = [sets[0]]
    if any(attn.values()):
        for pos in sets[1:]:
            try:
                runs.append(_forward(model, torch, emb, pos, captured, first))
                kept.append(pos)
            except Exception as exc:  # noqa: BLE001 - e.g. a position past an absolute embedding table
                skipped[json.dumps(pos)] = f"{type(exc).__name__}: {str(exc)[:200]}"
    for h in hooks:
        h.remove()
    queries = [r[0] if r else {} for r in runs]
    keys = [r[1] if r else {} for r in runs]
    rotary = [_rotary_amplitudes(model, torch, hidden, torch.tensor([pos], dtype=torch.long)) if r else {}
              for r, pos in zip(runs, kept)]
    rot_classes = sorted({type(m).__name__ for m in model.modules() if "Rotary" in type(m).__name__
                          or "RoPE" in type(m).__name__ or "Rope" in type(m).__name__})
    attn_classes = sorted({c for v in attn.values() for c in v})
    provenance = (f"measured from transformers {transformers.__version__} (torch {torch.__version__}): "
                  f"{cls.__name__}, {', '.join(attn_classes) or 'no attention class'}"
                  + (f", {', '.join(rot_classes)}" if rot_classes else "")
                  + (f"; position sets the model's code refused: {sorted(skipped)}" if skipped else ""))
    return Probe(config=dict(config), hf_config=hf_config, model_type=str(text.model_type), num_layers=n,
                 positions=kept, query=queries, key=keys, attention_modules=attn, rotary=rotary,
                 provenance=provenance, seconds=time.perf_counter() - t0, rotary_classes=rot_classes,
                 skipped=skipped)


#: the most parameters a probe model may hold (float32: 1 GiB): what the probe shrinks keeps any model far below
_MAX_PARAMS = 2**28


def _check_size(cls: Any, text: Any, torch: Any) -> None:
    """Refuse a probe model that would stay large (sizes under keys pemath does not know to shrink): counted on
    the meta device, before any memory is taken."""
    with torch.device("meta"):
        n = sum(p.numel() for p in cls(text).parameters())
    if n > _MAX_PARAMS:
        big = sorted((k for k, v in text.to_dict().items() if isinstance(v, int) and v >= 1024 and k not in (
            "max_position_embeddings", "original_max_position_embeddings", "pad_token_id", "bos_token_id",
            "eos_token_id", "vocab_size")))
        raise MemoryError(f"the probe model would still hold {n:,} parameters (over {_MAX_PARAMS:,}) after "
                          f"shrinking; large sizes left under keys pemath does not shrink: {big}")


def _forward(model: Any, torch: Any, emb: Any, pos: list[int], captured: dict, first: dict) -> tuple[dict, dict]:
    """One forward of every probe at every position of ``pos`` (each token its own sequence): q, k per layer."""
    captured.clear()
    first.clear()
    x = emb.repeat_interleave(len(pos), 0)[:, None, :]
    pid = torch.tensor(pos * emb.shape[0], dtype=torch.long)[:, None]
    with torch.no_grad():
        model(inputs_embeds=x, position_ids=pid, use_cache=False)
    q = {i: a.reshape(emb.shape[0], len(pos), a.shape[1], a.shape[-1]) for i, (a, _) in captured.items()}
    k = {i: b.reshape(emb.shape[0], len(pos), b.shape[1], b.shape[-1]) for i, (_, b) in captured.items()}
    return q, k
