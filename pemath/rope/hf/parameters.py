"""Hugging Face RoPE configurations as pemath.rope keyword arguments.

Mirrors transformers 5.x ``modeling_rope_utils`` (``standardize_rope_params``, the
``_compute_*_parameters`` functions and the ``_validate_*_rope_parameters`` key sets),
but strictly: where HF logs a warning and carries on (an unknown key, a mistyped
value) this module raises, because a silently ignored key changes the numbers.
"""

from __future__ import annotations

import dataclasses
import math
import re
import numbers
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..._validate import check_bool, check_int, check_real, check_size, show
from .. import _core
from ..spec import Spec
from ...scaling import DynamicNTK, Linear, Llama3, LongRoPE, Proportional, RopeScaling, YaRN

__all__ = ["from_hf"]

#: HF's ``PreTrainedConfig.default_theta`` (model classes may override it).
DEFAULT_THETA = 10000.0


# Keys every rope_type accepts (HF: rope_type / legacy type, rope_theta, partial_rotary_factor).
_COMMON_KEYS = frozenset({"rope_type", "type", "rope_theta", "partial_rotary_factor"})

# The further keys each rope_type reads (HF's required + optional keys of its validator).
_TYPE_KEYS: dict[str, frozenset[str]] = {
    "default": frozenset(),
    "linear": frozenset({"factor"}),
    "dynamic": frozenset({"factor"}),
    "yarn": frozenset(
        {
            "factor",
            "original_max_position_embeddings",
            "attention_factor",
            "beta_fast",
            "beta_slow",
            "mscale",
            "mscale_all_dim",
            "truncate",
        }
    ),
    "longrope": frozenset(
        {"short_factor", "long_factor", "factor", "original_max_position_embeddings", "attention_factor"}
    ),
    "llama3": frozenset({"factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"}),
    "proportional": frozenset({"factor"}),
}

# Keys seen in real configs that change the model's positional encoding beyond what a
# 1-D pemath.rope call computes: refused with an explanation rather than ignored.
_EXPLAINED_KEYS = {
    "mrope_section": (
        "it describes multimodal RoPE (Qwen2-VL and kin), whose frequency bands follow separate "
        "temporal/height/width position ids; pemath.rope takes one position per token, which equals "
        "M-RoPE only where the three ids coincide (text tokens). To get that 1-D RoPE, drop the key"
    ),
    "mrope_interleaved": "it belongs to multimodal RoPE (see mrope_section); drop it to get the text-only 1-D RoPE",
    "interleaved": "it belongs to multimodal RoPE (Qwen3-Omni); drop it to get the text-only 1-D RoPE",
    "short_mscale": (
        "PhiMoE multiplies cos/sin by short_mscale/long_mscale instead of the LongRoPE attention "
        "factor; to reproduce it, drop short_mscale/long_mscale and set attention_factor (one value "
        "per regime)"
    ),
    "long_mscale": "see short_mscale: PhiMoE's own attention factor, not read by HF's generic longrope",
    "llama_4_scaling_beta": "it scales the queries (Mistral 4 / Ministral 3), outside RoPE; drop it",
    "alpha": "HunYuan's NTK alpha is model-specific code, not one of HF's generic rope types",
}


def _key(name: str) -> str:
    return f"rope_parameters[{name!r}]"


def _int_like(name: str, value: Any) -> int:
    """A positive integer; an integral float (4096.0, as some JSON writers emit) is accepted."""
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        if abs(value) > 2**53:
            raise ValueError(
                f"{name} must be an integer, got the float {value!r}, beyond 2**53 where floats no longer "
                "hold every integer exactly; write it as an int"
            )
        value = int(value)
    return check_int(name, value, minimum=1)


def _rotary_dim(head_dim: int, prf: float, rope_type: str) -> int:
    where = f"(rope_type {rope_type!r})"
    if not 0.0 < prf <= 1.0:
        raise ValueError(f"{_key('partial_rotary_factor')} must be in (0, 1] {where}, got {prf}")
    r = int(head_dim * prf)  # HF's truncation, exactly
    if r < 2 or r % 2:
        raise ValueError(
            f"{_key('partial_rotary_factor')} = {prf} with head_dim {head_dim} gives rotary dim "
            f"int({head_dim} * {prf}) = {r} {where}; pemath needs an even rotary dim >= 2 (HF pads an odd "
            "one by a pair whose frequencies use the odd dim as exponent denominator, which has no "
            "pemath.rope equivalent)"
        )
    return r


def _resolve_type(params: Mapping[str, Any]) -> str:
    new, old = params.get("rope_type"), params.get("type")
    if new is not None and old is not None and new != old:
        raise ValueError(
            f"{_key('rope_type')} = {new!r} and the legacy {_key('type')} = {old!r} disagree; "
            "HF would silently use rope_type: remove the wrong one"
        )
    rope_type = new if new is not None else old if old is not None else "default"
    if not isinstance(rope_type, str):
        raise TypeError(f"{_key('rope_type')} must be a string, got {show(rope_type)}")
    known = ", ".join(repr(t) for t in KNOWN_ROPE_TYPES)
    if rope_type in ("mrope", "axial"):
        raise ValueError(
            f"{_key('rope_type')} = {rope_type!r} is multi-axis RoPE (vision/multimodal positions), which "
            f"pemath.rope does not express; known rope types: {known}. For text tokens (all position axes "
            "equal) M-RoPE equals rope_type 'default' with the mrope keys dropped"
        )
    if rope_type not in KNOWN_ROPE_TYPES:
        hint = " (Phi-3's legacy 'su' is 'longrope')" if rope_type == "su" else ""
        raise ValueError(f"{_key('rope_type')} must be one of {known}, got {rope_type!r}{hint}")
    return rope_type


def _check_keys(params: Mapping[str, Any], rope_type: str) -> None:
    allowed = _COMMON_KEYS | _TYPE_KEYS[rope_type]
    extra = sorted(str(k) for k in params if k not in allowed)
    if not extra:
        return
    why = "; ".join(f"{k}: {_EXPLAINED_KEYS[k]}" for k in extra if k in _EXPLAINED_KEYS)
    raise ValueError(
        f"rope_parameters has key(s) {extra} that HF's rope_type {rope_type!r} does not read; it reads "
        f"{sorted(allowed)}. A misspelt key would silently change the result, so unknown keys are refused"
        + (f" ({why})" if why else "")
    )


def from_hf(
    rope_parameters: Mapping[str, Any] | None,
    *,
    head_dim: int,
    layout: str | None = None,
    max_position_embeddings: int | None = None,
    rope_theta: float | None = None,
    partial_rotary_factor: float | None = None,
    original_max_position_embeddings: int | None = None,
) -> Spec:
    r"""The :class:`pemath.rope.Spec` of a Hugging Face RoPE parameter dict.

    Accepts a transformers v5 ``rope_parameters`` dict or a v4 ``rope_scaling`` dict
    (``rope_type`` or the legacy ``type``; ``None`` or ``{}`` is plain RoPE) and
    returns a Spec with HF's ``rope_theta`` as ``base``, ``head_dim``, the rotated
    dimension :math:`r = \mathrm{int}(d_{head} \cdot p)` and a :mod:`pemath.scaling`
    instance (``None`` for ``"default"``). The frequencies are
    :math:`\theta_i = b^{-2i/d_r}` changed by the scaling, as HF's ``ROPE_INIT_FUNCTIONS``.

    For a whole ``config.json`` use :func:`pemath.rope.from_hf_config`, which works out
    the head dim, the layout, the old key names and the model class's defaults, and
    calls this function. Use it as::

        spec = rope.from_hf(config["rope_parameters"], head_dim=128, layout="half",
                            max_position_embeddings=131072)
        rope.apply(q, positions, spec=spec)
        rope.inv_freq(spec=spec)

    The layout is not part of the dict, so it is a required argument: HF's
    Llama-family ``rotate_half`` is ``layout="half"``. ``dynamic`` and ``longrope``
    depend on the sequence length: pass ``seq_len`` (HF: ``max(position_ids) + 1``) to
    ``apply``/``cos_sin``.

    Keys per ``rope_type`` (besides ``rope_type``/``type``, ``rope_theta``,
    ``partial_rotary_factor``; required ones marked \*). ``rope_theta`` is required for
    every ``rope_type``, ``None``/``{}`` included: in the dict or as the ``rope_theta``
    keyword.

    ============  ===================================================================
    default       (none)
    linear        factor\*
    dynamic       factor\*  (HF's original length is ``max_position_embeddings``)
    yarn          factor\* (``None``: max/original), original_max_position_embeddings,
                  attention_factor, beta_fast, beta_slow, mscale, mscale_all_dim, truncate
    longrope      short_factor\*, long_factor\*, factor, original_max_position_embeddings,
                  attention_factor
    llama3        factor\*, low_freq_factor\*, high_freq_factor\*,
                  original_max_position_embeddings
    proportional  factor (default 1); ``partial_rotary_factor`` is the kept
                  fraction and the rotary dim stays ``head_dim``
    ============  ===================================================================

    Defaults follow HF: a key whose value is ``None`` counts as absent (except
    ``truncate``, see below); ``original_max_position_embeddings`` defaults to
    ``max_position_embeddings`` (HF's ``standardize_rope_params``); ``beta_fast`` and
    ``beta_slow`` to 32 and 1; YaRN's ``factor: None`` and LongRoPE's missing ``factor``
    to ``max_position_embeddings / original_max_position_embeddings``; the attention
    factors as in :class:`pemath.scaling.YaRN` and :class:`pemath.scaling.LongRoPE`.

    Stricter than HF, where HF would log a warning or silently pick a value:

    * an unknown key raises (a misspelt ``low_freq_facter`` would otherwise be
      ignored). Keys that change the model beyond 1-D RoPE are refused with an
      explanation: ``mrope_section``/``mrope_interleaved`` (multimodal RoPE: drop them
      to get the text-token RoPE), PhiMoE's ``short_mscale``/``long_mscale``, Mistral
      4's ``llama_4_scaling_beta``. Nested per-layer-type dicts (Gemma 3's
      ``{"full_attention": {...}, ...}``) raise: pass one of the inner dicts;
    * ``rope_type`` and ``type`` that disagree raise; ``truncate: None`` raises (HF
      reads it as False, though its documented default is True); ``beta_fast: 0`` or
      ``beta_slow: 0`` raise (HF's ``or`` would substitute 32 or 1);
    * an odd ``int(head_dim * partial_rotary_factor)`` raises.

    Parameters
    ----------
    rope_parameters : mapping or None
        ``config.rope_parameters`` (v5) or ``config.rope_scaling`` (v4).
    head_dim : int
        The attention head dimension (HF: ``head_dim``, else ``hidden_size //
        num_attention_heads``).
    layout : {"interleaved", "half"}
        Required: how the model's code pairs the features.
    max_position_embeddings : int, optional
        The config's top-level ``max_position_embeddings``. Required for
        ``"dynamic"``, and wherever HF derives a value from it.
    rope_theta : float, optional
        The config's top-level ``rope_theta`` (v4 configs keep it outside
        ``rope_scaling``); used when the dict has none. One of the two is required:
        HF's own fallback is the model class's ``default_theta``, which differs between
        models (10000 for most; Llama 4: 5e5, SmolLM3: 2e6, Gemma 4: 100), so pemath
        does not guess it.
    partial_rotary_factor : float, optional
        The config's top-level ``partial_rotary_factor`` (used when the dict has
        none; default 1.0). GPT-NeoX's ``rotary_pct`` is this value.
    original_max_position_embeddings : int, optional
        The config's top-level ``original_max_position_embeddings`` (Phi-3 keeps it
        there). For ``llama3``, ``yarn`` and ``longrope`` it takes priority over the
        dict's value, as in HF.

    Returns
    -------
    pemath.rope.Spec

    Raises
    ------
    ValueError
        An unknown ``rope_type`` (the message lists the known ones) or key; a key the
        ``rope_type`` needs is missing (the message names the key and the
        ``rope_type``); a value out of range.
    TypeError
        A value of the wrong type.

    Examples
    --------
    >>> from pemath import rope
    >>> llama31 = {"rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0,
    ...            "low_freq_factor": 1.0, "high_freq_factor": 4.0,
    ...            "original_max_position_embeddings": 8192}
    >>> spec = rope.from_hf(llama31, head_dim=128, layout="half", max_position_embeddings=131072)
    >>> spec.base, spec.rotary_dim, type(spec.scaling).__name__
    (500000.0, 128, 'Llama3')
    >>> rope.from_hf({"type": "linear", "factor": 2.0}, head_dim=64, layout="half", rope_theta=1e4).scaling
    Linear(factor=2.0)
    >>> rope.from_hf(None, head_dim=64, layout="half")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    ValueError: rope_parameters['rope_theta'] is missing; it is required for rope_type 'default'...
    >>> rope.from_hf(None, head_dim=64, layout="interleaved", rope_theta=1e6)
    Spec(layout='interleaved', base=1000000.0, head_dim=64, rotary_dim=64)
    """
    layout = _core.check_layout(layout)
    head_dim = check_size("head_dim", head_dim, minimum=2)
    mpe = None if max_position_embeddings is None else _int_like("max_position_embeddings", max_position_embeddings)
    top_ompe = (
        None
        if original_max_position_embeddings is None
        else _int_like("original_max_position_embeddings", original_max_position_embeddings)
    )
    # The top-level values are checked even where the dict's own value takes priority:
    # a bad argument is refused, never silently ignored.
    if rope_theta is not None:
        check_real("rope_theta", rope_theta, positive=True)
    if partial_rotary_factor is not None:
        check_real("partial_rotary_factor", partial_rotary_factor, minimum=0.0, maximum=1.0)
    if rope_parameters is None:
        rope_parameters = {}
    if not isinstance(rope_parameters, Mapping):
        raise TypeError(
            "rope_parameters must be a dict (HF's config.rope_parameters or config.rope_scaling) or None, "
            f"got {show(rope_parameters)}"
        )
    params = dict(rope_parameters)
    for k, v in params.items():
        if not isinstance(k, str):
            raise TypeError(f"rope_parameters keys must be strings, got {show(k)}")
        if isinstance(v, Mapping):
            raise ValueError(
                f"rope_parameters[{k!r}] is a dict: rope_parameters looks nested by layer type "
                f"({sorted(kk for kk, vv in params.items() if isinstance(vv, Mapping))}); pass the "
                "inner dict of the layer type you want"
            )

    rope_type = _resolve_type(params)
    _check_keys(params, rope_type)
    where = f"for rope_type {rope_type!r}"

    # base
    theta = params.get("rope_theta")
    if theta is None:
        theta = rope_theta
    if theta is None:
        # HF falls back to the model class's default_theta, which differs between models
        # (10000 for most, 5e5 for Llama 4, 2e6 for SmolLM3, 100 for Gemma 4): guessing it
        # here would silently give the wrong frequencies, so it must be given.
        raise ValueError(
            f"{_key('rope_theta')} is missing; it is required {where}. v4 configs keep rope_theta at the "
            "top level: pass rope_theta=config['rope_theta'] (HF's fallback is the model class's "
            f"default_theta, {DEFAULT_THETA} for most models but not all)"
        )
    base = check_real(_key("rope_theta"), theta, positive=True)

    # rotary dim
    prf_value = params.get("partial_rotary_factor")
    if prf_value is None:
        prf_value = partial_rotary_factor
    if rope_type == "proportional":
        fraction = 1.0 if prf_value is None else check_real(_key("partial_rotary_factor"), prf_value, minimum=0.0,
                                                                     maximum=1.0)
        if head_dim % 2:
            raise ValueError(f"head_dim must be even {where} (the whole head is rotated in pairs), got {head_dim}")
        rotary_dim = head_dim
    else:
        fraction = 1.0
        prf = 1.0 if prf_value is None else check_real(_key("partial_rotary_factor"), prf_value)
        if prf == 1.0 and head_dim % 2:
            raise ValueError(
                f"head_dim must be even when the whole head rotates (features are rotated in pairs), got {head_dim}"
            )
        rotary_dim = _rotary_dim(head_dim, prf, rope_type)

    r = _Reading(params, rope_type, where, head_dim, rotary_dim, mpe, top_ompe, fraction)
    try:
        scaling = _BUILDERS[rope_type](r)
    except (TypeError, ValueError) as exc:
        if "rope_parameters" in str(exc) or "max_position_embeddings" in str(exc):
            raise
        # the scaling classes' argument names, in HF's spelling
        msg = re.sub(r"\boriginal_max_position\b", "original_max_position_embeddings", str(exc))
        raise type(exc)(f"rope_parameters {where}: {msg}") from exc
    return Spec(layout, base=base, head_dim=head_dim, rotary_dim=rotary_dim, scaling=scaling)


@dataclasses.dataclass(frozen=True)
class _Reading:
    """One rope_parameters dict being read: its keys and what the config around it fixed."""

    params: Mapping[str, Any]
    rope_type: str
    where: str
    head_dim: int
    rotary_dim: int
    mpe: int | None
    top_ompe: int | None
    fraction: float

    def get(self, name: str) -> Any:
        return self.params.get(name)

    def required(self, name: str) -> Any:
        if self.get(name) is None:
            state = "is None" if name in self.params else "is missing"
            raise ValueError(f"{_key(name)} {state}; it is required {self.where}")
        return self.params[name]

    def real(self, name: str, value: Any, **kw: Any) -> float:
        return check_real(_key(name), value, **kw)

    def original(self) -> int:
        """The original context length (llama3, yarn, longrope): the top-level value first, as HF."""
        if self.top_ompe is not None:
            return self.top_ompe
        value = self.get("original_max_position_embeddings")
        if value is not None:
            return _int_like(_key("original_max_position_embeddings"), value)
        if self.mpe is not None:
            return self.mpe
        raise ValueError(
            f"{_key('original_max_position_embeddings')} is missing; it is required {self.where}, and HF's "
            "default for it, max_position_embeddings, was not given"
        )


def _default(r: _Reading) -> RopeScaling | None:
    return None


def _linear(r: _Reading) -> RopeScaling:
    return Linear(r.real("factor", r.required("factor"), positive=True))


def _dynamic(r: _Reading) -> RopeScaling:
    factor = r.real("factor", r.required("factor"), positive=True)
    if r.mpe is None:
        raise ValueError(
            f"max_position_embeddings is required {r.where}: HF's dynamic NTK uses it as the original context length"
        )
    if r.rotary_dim <= 2:
        raise ValueError(
            f"head_dim {r.head_dim} and partial_rotary_factor give rotary dim {r.rotary_dim}, but "
            "dynamic NTK needs a rotary dim > 2 (its base exponent is dim/(dim-2))"
        )
    return DynamicNTK(factor, r.mpe)


def _yarn(r: _Reading) -> RopeScaling:
    if "factor" not in r.params:
        raise ValueError(
            f"{_key('factor')} is missing; it is required {r.where} (set it to None to derive it as "
            "max_position_embeddings / original_max_position_embeddings, as HF does)"
        )
    L0 = r.original()
    factor = r.get("factor")
    if factor is None:
        if r.mpe is None:
            raise ValueError(
                f"{_key('factor')} is None {r.where}, and HF's fallback max_position_embeddings / "
                "original_max_position_embeddings needs max_position_embeddings, which was not given"
            )
        factor = r.mpe / L0
    truncate: Any = True
    if "truncate" in r.params:
        if r.params["truncate"] is None:
            raise ValueError(
                f"{_key('truncate')} is None {r.where}: HF reads None as False (no truncation) though "
                "its documented default is True; give true or false"
            )
        truncate = check_bool(_key("truncate"), r.params["truncate"])

    def optional(name: str, **kw: Any) -> float | None:
        return None if r.get(name) is None else r.real(name, r.get(name), **kw)

    return YaRN(
        r.real("factor", factor, positive=True),
        L0,
        beta_fast=r.real("beta_fast", r.get("beta_fast") if r.get("beta_fast") is not None else 32.0, positive=True),
        beta_slow=r.real("beta_slow", r.get("beta_slow") if r.get("beta_slow") is not None else 1.0, positive=True),
        mscale=optional("mscale", nonnegative=True),
        mscale_all_dim=optional("mscale_all_dim", nonnegative=True),
        attention_factor=optional("attention_factor", positive=True),
        truncate=truncate,
    )


def _longrope(r: _Reading) -> RopeScaling:
    n = r.rotary_dim // 2
    lists = {}
    for name in ("short_factor", "long_factor"):
        value = r.required(name)
        if isinstance(value, (str, bytes, Mapping)) or not hasattr(value, "__len__"):
            raise TypeError(f"{_key(name)} must be a list of numbers, got {show(value)}")
        if len(value) != n:
            raise ValueError(
                f"{_key(name)} has {len(value)} entries, but {r.where} it needs one per rotary pair: "
                f"{n} (rotary dim {r.rotary_dim} = int(head_dim {r.head_dim} * partial_rotary_factor))"
            )
        if any(isinstance(v, bool) or not isinstance(v, numbers.Real) for v in value):
            raise TypeError(f"{_key(name)} must hold real numbers, got {show(value)}")
        lists[name] = np.asarray([float(v) for v in value], dtype=np.float64)
    L0 = r.original()
    factor = r.get("factor")
    attention = r.get("attention_factor")
    if factor is None and attention is None and r.mpe is None:
        raise ValueError(
            f"{_key('factor')} is missing {r.where}, and HF's fallback max_position_embeddings / "
            "original_max_position_embeddings (for the attention factor) needs max_position_embeddings, "
            "which was not given"
        )
    return LongRoPE(
        lists["short_factor"],
        lists["long_factor"],
        L0,
        factor=None if factor is None else r.real("factor", factor, positive=True),
        max_position=r.mpe,
        attention_factor=None if attention is None else r.real("attention_factor", attention, positive=True),
    )


def _llama3(r: _Reading) -> RopeScaling:
    factor = r.real("factor", r.required("factor"), positive=True)
    low = r.real("low_freq_factor", r.required("low_freq_factor"), positive=True)
    high = r.real("high_freq_factor", r.required("high_freq_factor"), positive=True)
    return Llama3(factor, r.original(), low_freq_factor=low, high_freq_factor=high)


def _proportional(r: _Reading) -> RopeScaling:
    factor = r.get("factor")
    return Proportional(r.fraction, factor=1.0 if factor is None else r.real("factor", factor, positive=True))


#: HF's rope_type -> the builder of its pemath.scaling instance (None: plain RoPE)
_BUILDERS = {"default": _default, "linear": _linear, "dynamic": _dynamic, "yarn": _yarn, "longrope": _longrope,
             "llama3": _llama3, "proportional": _proportional}
#: the rope types pemath reads (HF's ROPE_INIT_FUNCTIONS, each with its own key set in _TYPE_KEYS)
KNOWN_ROPE_TYPES = tuple(_BUILDERS)
