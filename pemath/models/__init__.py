"""Real models' position encodings, as their config.json files ship.

``registry.json`` (package data) holds, for each registered model, the position
encoding keys of its ``config.json`` verbatim, where they were read, and whether the
entry was reconstructed from a model card or a config class instead of a copy of the
file. :func:`get` returns a :class:`Model`; its :meth:`Model.spec` is
:func:`pemath.rope.from_hf_config` of that config, so the registry holds data and no
second reading of it.

Examples
--------
>>> from pemath import models
>>> m = models.get("llama-3.1-8b")
>>> m.hf_id, m.spec().scaling
('meta-llama/Llama-3.1-8B', Llama3(factor=8.0, original_max_position=8192, low_freq_factor=1.0, high_freq_factor=4.0))
>>> models.get("gemma-3-4b-it").layer_types
('full_attention', 'sliding_attention')
>>> models.get("bloom-7b1").alibi()
AlibiSpec(num_heads=32, bias_max=8.0)
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import json
import types
from importlib import resources
from typing import Any

from .._validate import check_int, check_real, show

__all__ = ["Model", "AlibiSpec", "T5Spec", "get", "names"]


@dataclasses.dataclass(frozen=True)
class AlibiSpec:
    """An ALiBi model's bias: ``num_heads`` geometric slopes :math:`2^{-b k / n}` (``bias_max`` = b)."""

    num_heads: int
    bias_max: float = 8.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "num_heads", check_int("num_heads", self.num_heads, minimum=1))
        b = check_real("bias_max", self.bias_max, positive=True)
        if b != 8.0:
            raise ValueError(f"bias_max must be 8 (the slopes pemath.alibi computes: Press et al., BLOOM, MPT's "
                             f"default), got {b}")
        object.__setattr__(self, "bias_max", b)

    def slopes(self) -> Any:
        """:func:`pemath.alibi.slopes` for this model's head count."""
        from .. import alibi

        return alibi.slopes(self.num_heads)


@dataclasses.dataclass(frozen=True)
class T5Spec:
    """A T5 model's relative position buckets (bidirectional in the encoder, causal in the decoder)."""

    num_buckets: int = 32
    max_distance: int = 128
    num_heads: int = 8

    def __post_init__(self) -> None:
        from .. import t5

        t5._check_params(True, self.num_buckets, self.max_distance, False)  # valid in both directions
        object.__setattr__(self, "num_buckets", int(self.num_buckets))
        object.__setattr__(self, "max_distance", int(self.max_distance))
        object.__setattr__(self, "num_heads", check_int("num_heads", self.num_heads, minimum=1))

    def bucket(self, relative_position: Any, *, bidirectional: bool) -> Any:
        """:func:`pemath.t5.bucket` with this model's parameters."""
        from .. import t5

        return t5.bucket(relative_position, bidirectional=bidirectional, num_buckets=self.num_buckets,
                         max_distance=self.max_distance)


def _frozen(value: Any) -> Any:
    if isinstance(value, dict):
        return types.MappingProxyType({k: _frozen(v) for k, v in value.items()})
    if isinstance(value, list):
        return tuple(_frozen(v) for v in value)
    return value


def _thawed(value: Any) -> Any:
    if isinstance(value, types.MappingProxyType):
        return {k: _thawed(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [_thawed(v) for v in value]
    return value


@dataclasses.dataclass(frozen=True)
class Model:
    """One registered model: its config keys, their provenance, and its position encoding."""

    name: str
    hf_id: str
    family: str
    encoding: str  # "rope", "alibi" or "t5"
    source: str
    reconstructed: bool
    note: str
    _config: Any = dataclasses.field(repr=False)

    @property
    def config(self) -> dict[str, Any]:
        """The position-encoding keys of the model's config.json (a fresh copy)."""
        return _thawed(self._config)

    @property
    def model_type(self) -> str | None:
        cfg = self.config
        return (cfg.get("text_config") or {}).get("model_type") or cfg.get("model_type")

    @property
    def layer_types(self) -> tuple[str, ...]:
        """The layer types with their own RoPE (Gemma 3, ModernBERT); ``()`` where all layers share one."""
        from ..rope.hf import config as hf_config

        cfg = hf_config._text(self.config)
        per = hf_config._per_layer_type(cfg, cfg.get("model_type"), cfg.get("rope_parameters") or
                                        cfg.get("rope_scaling"))
        return () if per is None else tuple(sorted(per))

    def spec(self, layer_type: str | None = None, *, layer: int | None = None) -> Any:
        """:func:`pemath.rope.from_hf_config` of this model's config (a Spec, or NoRope for a layer without RoPE)."""
        from ..rope import from_hf_config

        if self.encoding != "rope":
            raise ValueError(f"{self.name} uses {self.encoding}, not RoPE: use .{self.encoding}()")
        return from_hf_config(self.config, layer_type=layer_type, layer=layer)

    def layers(self) -> tuple:
        """:func:`pemath.rope.layers` of this model's config: a Spec or a NoRope per layer."""
        from ..rope import layers

        if self.encoding != "rope":
            raise ValueError(f"{self.name} uses {self.encoding}, not RoPE: use .{self.encoding}()")
        return layers(self.config)

    @property
    def nope_layers(self) -> tuple[int, ...]:
        """The layers (0-based) that apply no RoPE (Llama 4's and SmolLM3's NoPE layers); ``()`` where all do."""
        from ..rope import NoRope
        from ..rope.hf.families import FAMILIES

        family = FAMILIES.get(self.model_type)
        if self.encoding != "rope" or family is None or family.rope_layers is None:
            return ()
        return tuple(i for i, s in enumerate(self.layers()) if isinstance(s, NoRope))

    def rope_spec(self, layer_type: str | None = None) -> Any:
        """The Spec of this model's RoPE layers (of ``layer_type``): :meth:`spec` where every layer applies RoPE;
        where NoPE layers are mixed in (:attr:`nope_layers`), the one Spec its other layers share."""
        from ..rope import NoRope

        if not self.nope_layers:
            return self.spec(layer_type)
        if layer_type is not None:
            raise ValueError(f"{self.name} mixes RoPE and NoPE layers without per-type RoPE; use layer= or layers()")
        specs = list(dict.fromkeys(s for s in self.layers() if not isinstance(s, NoRope)))
        if len(specs) != 1:
            raise ValueError(f"{self.name}'s RoPE layers do not share one Spec: use layers()")
        return specs[0]

    def alibi(self) -> AlibiSpec:
        if self.encoding != "alibi":
            raise ValueError(f"{self.name} uses {self.encoding}, not ALiBi")
        cfg = self.config
        heads = next(cfg[k] for k in ("n_head", "num_attention_heads", "n_heads") if cfg.get(k) is not None)
        bias_max = (cfg.get("attn_config") or {}).get("alibi_bias_max", 8.0)
        return AlibiSpec(heads, float(bias_max))

    def t5(self) -> T5Spec:
        if self.encoding != "t5":
            raise ValueError(f"{self.name} uses {self.encoding}, not T5 buckets")
        cfg = self.config
        return T5Spec(cfg.get("relative_attention_num_buckets", 32), cfg.get("relative_attention_max_distance", 128),
                      cfg.get("num_heads", 8))


@functools.lru_cache(maxsize=1)
def _registry() -> dict[str, Model]:
    doc = json.loads(resources.files(__package__).joinpath("registry.json").read_text(encoding="utf-8"))
    out = {}
    for e in doc["models"]:
        out[e["name"]] = Model(e["name"], e["hf_id"], e["family"], e["encoding"], e["source"], e["reconstructed"],
                               e["note"], _frozen(e["config"]))
    return out


def names(*, encoding: str | None = None) -> list[str]:
    """The registered model names (sorted), optionally only those of one ``encoding``."""
    if encoding is not None and encoding not in ("rope", "alibi", "t5"):
        raise ValueError(f"encoding must be one of 'rope', 'alibi', 't5' or None, got {encoding!r}")
    return sorted(n for n, m in _registry().items() if encoding is None or m.encoding == encoding)


def get(name: str) -> Model:
    """The registered model ``name`` (see :func:`names`); a near miss is suggested."""
    if not isinstance(name, str):
        raise TypeError(f"name must be a string, got {show(name)}")
    reg = _registry()
    if name not in reg:
        close = difflib.get_close_matches(name, list(reg), n=3)
        hint = f"; did you mean {', '.join(map(repr, close))}?" if close else f"; registered: {sorted(reg)}"
        raise ValueError(f"no registered model named {name!r}{hint}")
    return reg[name]
