"""The public entry points: a config's RoPE per layer, from the family table or measured from transformers' code.

A ``model_type`` in pemath's family table (:mod:`.families`) is read from the table, which
works without transformers and which ``tests/test_hf_measure.py`` holds equal to the
measurement. Any other model type is measured from its own code (:mod:`.measure`) where
torch and transformers are installed; without them, ``layout=`` gives the generic reading
(:func:`.config.table_spec`, which refuses keys it does not read), and no ``layout`` is a
refusal saying both ways.
"""

from __future__ import annotations

import json
from typing import Any

from ..._validate import show
from .. import _core
from ..spec import NoRope, Spec
from . import probe
from .config import FAMILIES, _layers, _load, _prepare, table_spec

__all__ = ["from_hf_config", "layers"]


def from_hf_config(config: Any, *, layer: int | None = None, layer_type: str | None = None,
                   layout: str | None = None) -> Spec | NoRope:
    r"""The :class:`~pemath.rope.Spec` a Hugging Face ``config.json`` implies, whole.

    Reads what a model's own transformers code reads: the head dim (``head_dim``, else
    ``hidden_size / num_attention_heads`` or their GPT-style spellings; DeepSeek's
    ``qk_rope_head_dim``), the partial rotary size in any of its spellings
    (``partial_rotary_factor``; GPT-NeoX's ``rotary_pct``; GPT-J's ``rotary_dim``),
    ``rope_theta`` wherever the config version keeps it (v5 ``rope_parameters``, v4 top
    level, GPT-NeoX's ``rotary_emb_base``; the model class's default where the file has
    none), ``rope_scaling`` / ``rope_parameters`` (through :func:`pemath.rope.from_hf`,
    which refuses any key it does not read), ``text_config`` of multimodal configs,
    M-RoPE (``mrope_section``, ``mrope_interleaved``), the RoPE of each layer type
    (Gemma 3, ModernBERT), and the layout the model's code uses (from ``model_type``).

    Contract: for ``x`` in the layout of the model's HF weights,
    ``rope.apply(x, positions, spec=from_hf_config(cfg))`` equals what the model's HF
    rotary-embedding class and apply function return (positions broadcast as in
    :func:`pemath.rope.apply`: HF's ``position_ids`` of shape ``(batch, seq)`` go in as
    ``position_ids[:, None, :]`` for ``x`` of shape ``(batch, heads, seq, dim)``; M-RoPE's
    ``(3, batch, seq)`` as ``position_ids[:, :, None, :]``). ``tests/test_models.py``
    checks it against recorded HF output for every registered model.

    Parameters
    ----------
    config : dict or path
        The parsed ``config.json`` or its path.
    layer : int, optional
        The layer (0-based, as transformers' ``layer_idx``): its Spec, or
        :class:`~pemath.rope.NoRope` where that layer applies no RoPE. Needs the config's
        ``num_hidden_layers``. :func:`pemath.rope.layers` gives every layer at once.
    layer_type : str, optional
        For configs whose layer types use different RoPE (Gemma 3's
        ``"sliding_attention"`` and ``"full_attention"``): which one. Required there
        (or ``layer``); elsewhere it may name any of the config's ``layer_types``. A
        layer type whose layers apply no RoPE (Cohere 2's ``"full_attention"``) gives
        :class:`~pemath.rope.NoRope`.
    layout : {"interleaved", "half"}, optional
        For a ``model_type`` pemath has not checked, where transformers is not installed:
        the layout of its apply function (the config is then read generically, and every
        key that may change the RoPE and that this reading does not read is refused).
        Where pemath knows the model type, giving a layout is an error unless it agrees;
        where it measures the model, the measured pairing must agree.

    Returns
    -------
    pemath.rope.Spec or pemath.rope.NoRope
        With ``head_dim`` set; DeepSeek's softmax-scale multiplier, Ministral 3's query
        scaling and DeepSeek-V3's output layout included.

    Raises
    ------
    ValueError
        An unknown ``model_type`` without ``layout``; several RoPE layer types without
        ``layer_type`` (the message lists them); a model whose layers mix RoPE and
        NoPE without ``layer`` or ``layer_type`` (the message names the NoPE layers); a config of an ALiBi or T5 model; any
        key :func:`pemath.rope.from_hf` refuses.

    Examples
    --------
    >>> from pemath import rope
    >>> cfg = {"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32,
    ...        "max_position_embeddings": 4096}           # Llama 2: no rope_theta in the file
    >>> rope.from_hf_config(cfg)
    Spec(layout='half', base=10000.0, head_dim=128, rotary_dim=128)
    >>> rope.from_hf_config({"model_type": "gptj", "n_embd": 4096, "n_head": 16, "rotary_dim": 64})
    Spec(layout='interleaved', base=10000.0, head_dim=256, rotary_dim=64)
    """
    if layer is not None and (isinstance(layer, bool) or not isinstance(layer, int) or layer < 0):
        raise TypeError(f"layer must be a non-negative int (transformers' layer_idx), got {show(layer)}")
    if layer is not None and layer_type is not None:
        raise TypeError(f"pass layer= or layer_type=, not both; got layer={layer!r}, layer_type={layer_type!r}")
    raw = _load(config)
    cfg = _prepare(raw)
    measurement = _measurement(raw, cfg, layout)
    if measurement is None:
        return table_spec(cfg, layer=layer, layer_type=layer_type, layout=layout)
    if layer is not None:
        return table_spec(cfg, layer=layer, layer_type=layer_type, layout=layout, per=measurement.specs_or_raise())
    return measurement.one(layer_type)


def layers(config: Any, *, layout: str | None = None) -> tuple[Spec | NoRope, ...]:
    """The RoPE of every layer of a Hugging Face model: a :class:`~pemath.rope.Spec` or a :class:`~pemath.rope.NoRope` each.

    Layer ``i`` of the result is :func:`from_hf_config` ``(config, layer=i)``. Needs
    ``num_hidden_layers`` in the config (a measured model: its config class's).

    Examples
    --------
    >>> from pemath import models, rope
    >>> specs = rope.layers(models.get("smollm3-3b").config)
    >>> len(specs), [i for i, s in enumerate(specs) if isinstance(s, rope.NoRope)][:3]
    (36, [3, 7, 11])
    """
    raw = _load(config)
    cfg = _prepare(raw)
    measurement = _measurement(raw, cfg, layout)
    if measurement is not None:
        return measurement.specs_or_raise()
    return _layers(cfg, layout)


def _measurement(raw: dict[str, Any], cfg: dict[str, Any], layout: str | None) -> Any:
    """The measurement of a config whose model type the family table does not hold (None: read the table, or the
    generic reading where ``layout`` is given and transformers is not installed). ``raw``: the file as given (what
    transformers builds the model from); ``cfg``: its language model's keys, merged (what the table reads)."""
    if layout is not None:
        layout = _core.check_layout(layout)
    if cfg.get("model_type") in FAMILIES:
        return None
    if not probe.available():
        if layout is None:
            raise ValueError(
                f"config['model_type'] is {cfg.get('model_type')!r}, which pemath's family table has not checked. "
                "pemath measures such a model from its own transformers code (pip install 'pemath[hf]': torch and "
                "transformers), or reads the config generically if you name the pairing of its apply function: "
                "layout='half' (rotate_half, pairs (i, i + d/2)) or layout='interleaved' (pairs (2i, 2i+1))"
            )
        return None
    # the measurement reads with pemath.testing (recover_rope), which imports pemath.rope: loaded when a model is
    # measured, so that importing pemath.rope never needs pemath.testing
    from .measure import measure_cached

    found = measure_cached(json.dumps(raw, sort_keys=True, default=str), layout)
    if layout is not None:
        measured = {s.layout for s in found.specs if isinstance(s, Spec)}
        if measured and measured != {layout}:
            raise ValueError(f"layout={layout!r}, but the model's code pairs features as {sorted(measured)} "
                             f"({found.provenance})")
    return found
