"""``rope.Spec``: one value that describes one RoPE completely.

Every RoPE entry point takes ``spec=`` (keyword-only) as the alternative to its
configuration keywords (``layout``, ``base``, ``rotary_dim``, ``scaling``, and for
M-RoPE ``mrope_section``/``interleaved``). The rule when both are given: it is an
error (``TypeError`` naming the keywords), never a silent merge, since either choice
would surprise someone. Per-call arguments (``positions``, ``seq_len``, ``inverse``,
``out``, ``dtype``) stay keywords. Inside pemath the keywords are turned into a Spec
at once (:func:`resolve`), so the Spec is the one representation the kernels see.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any

import numpy as np

from .. import _compat
from .._validate import check_bool, check_choice, check_real, check_rotary_dim, check_size, show
from ..scaling import RopeScaling
from . import _core
from ._axes import AXIAL_FREQUENCIES, GROUPINGS, int_list, mrope_components

__all__ = ["Spec", "NoRope"]

_DEFAULT_BASE = 10000.0


@dataclasses.dataclass(frozen=True, repr=False)
class Spec:
    r"""A complete, validated description of one rotary position embedding.

    Parameters
    ----------
    layout : {"interleaved", "half"}
        How the input's features pair up: ``"interleaved"`` rotates :math:`(2i, 2i+1)`,
        ``"half"`` rotates :math:`(i, i + r/2)`. Required.
    base : float, optional
        :math:`b` in :math:`\theta_i = b^{-2i/d_r}` (HF's ``rope_theta``); 10000 when
        neither ``base`` nor ``inv_freq`` is given.
    head_dim : int, optional
        The feature axis the Spec is for. When given, every call checks that
        ``x.shape[-1]`` equals it; when omitted the Spec fits any head size.
    rotary_dim : int, optional
        The leading slice that rotates (even, ``<= head_dim``); the rest passes through.
        Default: the whole head.
    scaling : pemath.scaling.RopeScaling, optional
        The frequency scaling (with its attention factor and length policy).
    inv_freq : sequence of float, optional
        Explicit inverse frequencies, one per rotated pair, instead of ``base`` (timm's
        pixel-frequency vision RoPE, learned or hand-made bands). Excludes ``base``
        and ``scaling``; fixes ``rotary_dim = 2 * len(inv_freq)``.
    out_layout : {"interleaved", "half"}, optional
        The layout the output is written in, where the model's code rotates in one
        layout and returns another (HF DeepSeek-V3 with ``rope_interleave``: the input
        is interleaved as the weights store it, the output half-split). Default: the
        input's ``layout``.
    mrope_section : sequence of int, optional
        Multi-axis RoPE (Qwen2-VL's M-RoPE): frequency-index counts per position
        component, summing to ``rotary_dim / 2``. Positions then carry a leading axis
        with one entry per component (HF's ``position_ids`` of shape ``(3, batch, seq)``).
    mrope_interleaved : bool
        Qwen3-VL's interleaved component pattern instead of contiguous sections.
    axial_dims : sequence of int, optional
        Axial N-D RoPE (:func:`pemath.rope.apply_axial`: vision towers, video): the
        feature group size of each position axis. Positions then carry a trailing axis
        with one coordinate per axis. Excludes ``mrope_section`` and ``inv_freq``.
    axial_grouping : {"features", "pairs"}
        How the axis groups map onto the features (see :func:`~pemath.rope.apply_axial`).
    axial_frequencies : {"per_axis", "strided"}
        Where each axis' frequencies come from (see :func:`~pemath.rope.apply_axial`).
    softmax_scale : float
        What the configuration implies beyond the rotation: the factor that multiplies
        the attention logits' :math:`1/\sqrt{d}` scale (DeepSeek's YaRN
        ``mscale_all_dim``: :math:`(0.1\,m \ln s + 1)^2`). pemath does not apply it
        (it is not part of RoPE); it is exposed so that it is never silently dropped.
    query_scaling_beta : float, optional
        Llama 4 / Ministral 3 scale queries by :math:`1 + \beta \ln(1 + \lfloor p / L_0
        \rfloor)` (``llama_4_scaling_beta``), also outside RoPE and exposed here with
        :attr:`query_scaling_length` (:math:`L_0`).
    query_scaling_length : int, optional
        :math:`L_0` of ``query_scaling_beta``.
    rotary_offset : int
        Where the rotated slice starts in the head (default 0): features
        ``[rotary_offset, rotary_offset + rotary_dim)`` rotate, the others pass through
        (llama.cpp's ``ggml_rope_set_offset``, which rotates DeepSeek's last 64 features of a
        head). Without ``rotary_dim`` the slice runs to the end of the head. Single-axis
        RoPE in one layout only.
    provenance : str, optional
        Where the Spec comes from, where pemath measured it (the transformers version and
        classes run, :func:`pemath.rope.hf.measure`); not compared, not shown in the repr.

    Notes
    -----
    A Spec is immutable, hashable and compared by value after normalisation (defaults
    filled in, derived sizes computed): ``Spec("half")`` equals ``Spec("half",
    base=10000.0)``. Specs that describe the same numbers differently (a base, or the
    same frequencies listed in ``inv_freq``) are not equal. :meth:`replace` gives a
    modified copy (validated again).

    Examples
    --------
    >>> from pemath import rope, scaling
    >>> s = rope.Spec("half", base=500000.0, head_dim=128,
    ...               scaling=scaling.Llama3(8.0, 8192))
    >>> s
    Spec(layout='half', base=500000.0, head_dim=128, rotary_dim=128, scaling=Llama3(factor=8.0, original_max_position=8192, low_freq_factor=1.0, high_freq_factor=4.0))
    >>> s.replace(rotary_dim=64).rotary_dim
    64
    >>> s == rope.Spec("half", base=5e5, head_dim=128, scaling=scaling.Llama3(8.0, 8192))
    True
    """

    layout: str
    base: float | None = None
    head_dim: int | None = None
    rotary_dim: int | None = None
    scaling: Any = None
    inv_freq: tuple[float, ...] | None = None
    out_layout: str | None = None
    mrope_section: tuple[int, ...] | None = None
    mrope_interleaved: bool = False
    axial_dims: tuple[int, ...] | None = None
    axial_grouping: str = "features"
    axial_frequencies: str = "per_axis"
    softmax_scale: float = 1.0
    query_scaling_beta: float | None = None
    query_scaling_length: int | None = None
    rotary_offset: int = 0
    provenance: str | None = dataclasses.field(default=None, compare=False)

    def __post_init__(self) -> None:
        put = lambda name, value: object.__setattr__(self, name, value)  # noqa: E731
        given_rotary = self.rotary_dim
        put("layout", _core.check_layout(self.layout, "Spec.layout"))
        put("scaling", _core.check_scaling(self.scaling))
        if self.head_dim is not None:
            put("head_dim", check_size("Spec.head_dim", self.head_dim, minimum=2))
        if self.inv_freq is not None:
            freq = _explicit_freq(self.inv_freq)
            if self.base is not None or self.scaling is not None:
                raise ValueError(
                    "Spec.inv_freq gives the frequencies explicitly; it excludes Spec.base and Spec.scaling, "
                    f"got base={self.base!r}, scaling={self.scaling!r}"
                )
            if self.rotary_dim is not None and self.rotary_dim != 2 * len(freq):
                raise ValueError(
                    f"Spec.rotary_dim must be 2 * len(inv_freq) = {2 * len(freq)}, got {self.rotary_dim!r}"
                )
            put("inv_freq", freq)
            put("rotary_dim", 2 * len(freq))
        else:
            put("base", _DEFAULT_BASE if self.base is None else _core.check_base(self.base))
        if isinstance(self.rotary_offset, bool) or not isinstance(self.rotary_offset, (int, np.integer)) \
                or self.rotary_offset < 0:
            raise TypeError(f"Spec.rotary_offset must be an integer >= 0, got {show(self.rotary_offset)}")
        put("rotary_offset", int(self.rotary_offset))
        offset = self.rotary_offset
        if offset and self.head_dim is not None and self.rotary_dim is None:
            if offset >= self.head_dim:
                raise ValueError(f"Spec.rotary_offset {offset} leaves nothing to rotate in head_dim {self.head_dim}")
            put("rotary_dim", self.head_dim - offset)  # the slice runs to the end of the head
        if self.rotary_dim is not None or self.head_dim is not None:
            if self.head_dim is None:  # checked against x.shape[-1] at each call
                r = check_size("rotary_dim", self.rotary_dim, minimum=2)
                if r % 2:
                    raise ValueError(f"rotary_dim must be an even integer >= 2, got {r}")
            else:
                r = check_rotary_dim(self.rotary_dim, self.head_dim, dim_name="Spec.head_dim")
                if offset + r > self.head_dim:
                    raise ValueError(f"Spec.rotary_offset {offset} + rotary_dim {r} exceeds head_dim {self.head_dim}")
            put("rotary_dim", r)
        if self.out_layout is not None:
            out = _core.check_layout(self.out_layout, "Spec.out_layout")
            put("out_layout", None if out == self.layout else out)
        put("mrope_interleaved", check_bool("Spec.mrope_interleaved", self.mrope_interleaved))
        if self.mrope_section is not None:
            put("mrope_section", _mrope_section(self.mrope_section, self.rotary_dim, self.mrope_interleaved))
        elif self.mrope_interleaved:
            raise ValueError("Spec.mrope_interleaved=True needs Spec.mrope_section")
        put("axial_grouping", check_choice("Spec.axial_grouping", self.axial_grouping, GROUPINGS))
        put("axial_frequencies", check_choice("Spec.axial_frequencies", self.axial_frequencies, AXIAL_FREQUENCIES))
        if self.axial_dims is not None:
            dims = tuple(int_list("axial_dims", self.axial_dims))
            if any(d % 2 for d in dims):
                raise ValueError(f"Spec.axial_dims must be even (each group rotates in pairs), got {list(dims)}")
            if self.mrope_section is not None or self.inv_freq is not None or self.scaling is not None:
                raise ValueError("Spec.axial_dims describes axial RoPE, whose frequencies come from the base per axis; "
                                 "it excludes mrope_section, inv_freq and scaling")
            if given_rotary is not None and given_rotary != sum(dims):
                raise ValueError(f"Spec.rotary_dim must be sum(axial_dims) = {sum(dims)}, got {given_rotary}")
            if self.head_dim is not None and sum(dims) > self.head_dim:
                raise ValueError(f"Spec.axial_dims sum to {sum(dims)}, more than head_dim {self.head_dim}")
            put("axial_dims", dims)
            put("rotary_dim", sum(dims))
            if self.out_layout is not None:
                raise ValueError("Spec.out_layout with axial_dims: no model rotates axially and returns another "
                                 "layout; convert the output with rope.convert_layout")
        elif self.axial_grouping != "features" or self.axial_frequencies != "per_axis":
            raise ValueError("Spec.axial_grouping and Spec.axial_frequencies need Spec.axial_dims")
        if offset and (self.mrope_section is not None or self.axial_dims is not None or self.out_layout is not None):
            raise ValueError("Spec.rotary_offset is for single-axis RoPE in one layout (the rotated slice of a head); "
                             "it excludes mrope_section, axial_dims and out_layout")
        if self.provenance is not None and not isinstance(self.provenance, str):
            raise TypeError(f"Spec.provenance must be a string or None, got {show(self.provenance)}")
        put("softmax_scale", check_real("Spec.softmax_scale", self.softmax_scale, positive=True))
        if (self.query_scaling_beta is None) != (self.query_scaling_length is None):
            raise ValueError(
                "Spec.query_scaling_beta and Spec.query_scaling_length go together (both or neither), got "
                f"{self.query_scaling_beta!r} and {self.query_scaling_length!r}"
            )
        if self.query_scaling_beta is not None:
            put("query_scaling_beta", check_real("Spec.query_scaling_beta", self.query_scaling_beta, nonnegative=True))
            put("query_scaling_length", check_size("Spec.query_scaling_length", self.query_scaling_length))

    # ------------------------------------------------------------------ reading

    @property
    def output_layout(self) -> str:
        """The layout the output is written in (``out_layout``, else ``layout``)."""
        return self.out_layout or self.layout

    @property
    def attention_factor(self) -> float:
        """The factor that multiplies cos and sin up to the original context (``seq_len`` None)."""
        return self.attention_factor_at(None)

    def attention_factor_at(self, seq_len: int | None = None) -> float:
        """The factor that multiplies cos and sin at ``seq_len`` (PhiMoE's differs by regime; 1.0 without scaling)."""
        return 1.0 if self.scaling is None else float(self.scaling.attention_factor_at(seq_len))

    @property
    def is_multi_axis(self) -> bool:
        """Whether positions carry one coordinate per axis (M-RoPE: a leading axis; axial: a trailing one)."""
        return self.mrope_section is not None or self.axial_dims is not None

    def rotary_dim_for(self, d: int, name: str = "x.shape[-1]") -> int:
        """The rotated slice for a feature axis of length ``d`` (checked against ``head_dim``)."""
        if self.head_dim is not None and d != self.head_dim:
            raise ValueError(f"{name} is {d}, but the spec is for head_dim {self.head_dim}: {self!r}")
        o = self.rotary_offset
        if not o:
            return check_rotary_dim(self.rotary_dim, d, dim_name=name)
        if o >= d:
            raise ValueError(f"{name} is {d}: the spec's rotary_offset {o} leaves nothing to rotate: {self!r}")
        r = check_rotary_dim(self.rotary_dim if self.rotary_dim is not None else d - o, d - o,
                             dim_name=f"{name} - rotary_offset")
        return r

    def frequencies(self, dim: int | None = None, seq_len: int | None = None) -> tuple[np.ndarray, float]:
        """The float64 inverse frequencies over rotary dim ``dim`` and the attention factor."""
        if dim is None:
            if self.rotary_dim is None:
                raise ValueError(
                    f"the rotary dimension is not fixed by {self!r}: give the spec a head_dim or rotary_dim"
                )
            dim = self.rotary_dim
        elif self.rotary_dim is not None and dim != self.rotary_dim:
            raise ValueError(f"dim is {dim!r}, but the spec rotates {self.rotary_dim} features: {self!r} (leave dim "
                             "out, or give a spec without a fixed rotary dim)")
        if self.inv_freq is not None:
            if dim != self.rotary_dim:
                raise ValueError(f"dim must be {self.rotary_dim} for a spec with {len(self.inv_freq)} explicit "
                                 f"frequencies, got {dim}")
            return np.asarray(self.inv_freq, dtype=np.float64), 1.0
        return _core.frequencies(dim, self.base, self.scaling, seq_len)

    def query_scale(self, positions: Any) -> np.ndarray:
        r"""Llama 4's query temperature :math:`1 + \beta \ln(1 + \lfloor p / L_0 \rfloor)` (1 without one)."""
        p = np.asarray(positions, dtype=np.float64)
        if self.query_scaling_beta is None:
            return np.ones_like(p)
        return 1.0 + self.query_scaling_beta * np.log1p(np.floor(p / self.query_scaling_length))

    def keys(self) -> Any:
        """A Spec is not a mapping: ``**spec`` (the keyword-dict API of ``rope.from_hf`` before 0.1.0 settled) fails
        with what replaced it."""
        raise TypeError(
            "a pemath.rope.Spec is not a keyword dict: rope.from_hf and rope.from_hf_config return a Spec (they returned "
            "keyword arguments in early 0.1.0 development); pass it as spec=..., e.g. "
            "rope.apply(x, positions, spec=rope.from_hf(config)) instead of rope.apply(x, positions, "
            "**rope.from_hf(config))"
        )

    def replace(self, **changes: Any) -> Spec:
        """A copy with ``changes`` applied, validated again.

        Changing the frequency source clears the other: ``replace(inv_freq=...)`` drops
        ``base``; ``replace(base=...)`` drops explicit ``inv_freq`` (a scaling alone does
        not: a spec with explicit frequencies refuses one). A rotary dim that was
        derived (the whole head, ``2 * len(inv_freq)``, ``sum(axial_dims)``) is derived
        again from the new fields; one given explicitly is kept.
        """
        unknown = sorted(set(changes) - {f.name for f in dataclasses.fields(self)})
        if unknown:
            allowed = ", ".join(f.name for f in dataclasses.fields(self))
            raise TypeError(f"Spec.replace got unknown field(s) {unknown}; the fields are {allowed}")
        if "inv_freq" in changes and changes["inv_freq"] is not None:
            changes.setdefault("base", None)
        if "base" in changes and changes["base"] is not None:
            changes.setdefault("inv_freq", None)
        if "rotary_dim" not in changes and self.rotary_dim == self._derived_rotary_dim():
            # a rotary dim that was derived (the whole head, 2 * len(inv_freq), sum(axial_dims)) is derived again
            changes["rotary_dim"] = None
        return dataclasses.replace(self, **changes)

    def _derived_rotary_dim(self) -> int | None:
        if self.inv_freq is not None:
            return 2 * len(self.inv_freq)
        if self.axial_dims is not None:
            return sum(self.axial_dims)
        return self.head_dim

    def __repr__(self) -> str:
        items = [f"layout={self.layout!r}"]
        for f in dataclasses.fields(self)[1:]:
            if f.name == "provenance":
                continue
            value = getattr(self, f.name)
            if value != f.default:
                items.append(f"{f.name}={list(value) if isinstance(value, tuple) else value!r}")
        return f"Spec({', '.join(items)})"


@dataclasses.dataclass(frozen=True)
class NoRope:
    """A layer that applies no rotary embedding (NoPE): what a model's own code does on that layer.

    Models mix RoPE and NoPE layers (Llama 4's and SmolLM3's ``no_rope_layers``, Cohere 2's
    global layers, EXAONE 4's global layers, the linear-attention layers of hybrids).
    :func:`pemath.rope.from_hf_config` and :func:`pemath.rope.layers` return a ``NoRope`` for
    such a layer, never a :class:`Spec`. :func:`pemath.rope.apply` with ``spec=NoRope(...)``
    returns ``x`` unchanged (a copy, or ``out``); :func:`pemath.testing.assert_rope_close`
    asserts that the output equals ``x``. Entry points that compute frequencies or cos/sin
    tables refuse it, naming the reason.

    Parameters
    ----------
    head_dim : int, optional
        The layer's head dimension; when given, calls check ``x.shape[-1]`` against it.
    reason : str
        Why the layer has no RoPE, in words (not compared).
    provenance : str, optional
        Where this answer comes from (the family table, or the transformers version and
        classes measured); not compared.

    Examples
    --------
    >>> import numpy as np
    >>> from pemath import rope
    >>> x = np.arange(8.0).reshape(2, 4)
    >>> nope = rope.NoRope(head_dim=4, reason="SmolLM3 no_rope_layers[3] = 0")
    >>> bool(np.array_equal(rope.apply(x, [5, 6], spec=nope), x))
    True
    >>> nope == rope.NoRope(head_dim=4)
    True
    """

    head_dim: int | None = None
    reason: str = dataclasses.field(default="", compare=False)
    provenance: str | None = dataclasses.field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.head_dim is not None:
            object.__setattr__(self, "head_dim", check_size("NoRope.head_dim", self.head_dim, minimum=1))
        if not isinstance(self.reason, str):
            raise TypeError(f"NoRope.reason must be a string, got {show(self.reason)}")
        if self.provenance is not None and not isinstance(self.provenance, str):
            raise TypeError(f"NoRope.provenance must be a string or None, got {show(self.provenance)}")

    def check_x(self, d: int, name: str = "x.shape[-1]") -> None:
        """``x``'s feature size against ``head_dim`` (where given)."""
        if self.head_dim is not None and d != self.head_dim:
            raise ValueError(f"{name} is {d}, but the layer's head_dim is {self.head_dim}: {self!r}")

    def replace(self, **changes: Any) -> NoRope:
        """A copy with ``changes`` applied."""
        return dataclasses.replace(self, **changes)


def _explicit_freq(values: Any) -> tuple[float, ...]:
    if isinstance(values, (str, bytes)) or not hasattr(values, "__len__"):
        raise TypeError(f"Spec.inv_freq must be a sequence of positive numbers, got {show(values)}")
    arr = np.asarray(values)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"Spec.inv_freq must be a non-empty 1-D sequence, got shape {arr.shape}")
    if arr.dtype.kind not in "iuf":
        raise TypeError(f"Spec.inv_freq must hold real numbers, got dtype {arr.dtype}")
    out = tuple(float(v) for v in arr.astype(np.float64))
    if not all(math.isfinite(v) and v >= 0.0 for v in out):
        raise ValueError(f"Spec.inv_freq must be finite and >= 0, got {list(out)[:8]}...")
    return out


def _mrope_section(values: Any, rotary_dim: int | None, interleaved: bool) -> tuple[int, ...]:
    sec = tuple(int_list("mrope_section", values))
    mrope_components(sec, interleaved=interleaved)  # validates the pattern
    if rotary_dim is not None and 2 * sum(sec) != rotary_dim:
        raise ValueError(
            f"mrope_section {list(sec)} sums to {sum(sec)}, but it must sum to rotary_dim / 2 = {rotary_dim // 2}"
        )
    return sec


@functools.lru_cache(maxsize=256)
def _cached_spec(items: tuple) -> Spec:
    return Spec(**{k: v for k, _, v in items})


def resolve(spec: Any, where: str, /, *, layout_free: bool = False, **given: Any) -> Spec:
    """The Spec of a call: ``spec`` itself, or one built from the call's keywords.

    ``given`` holds the call's configuration keywords, ``None`` where not passed. Both
    a spec and any of them is a ``TypeError`` naming them. ``layout_free``: the call
    does not depend on the layout (frequencies, the complex form), so none is needed.
    """
    if spec is None:
        kw = {k: v for k, v in given.items() if v is not None}
        if layout_free:
            kw["layout"] = "half"
        elif "layout" not in kw:
            _core.check_layout(None)
        if all(isinstance(v, (str, int, float, RopeScaling)) for v in kw.values()):
            # the same scalar keywords call after call (a decode loop): validated once. Containers are
            # not cached: (2, 1, 1) and (2.0, 1, 1) are equal keys but not equally valid
            return _cached_spec(tuple(sorted((k, type(v), v) for k, v in kw.items())))
        return Spec(**kw)
    if isinstance(spec, NoRope):
        raise ValueError(
            f"{where}: spec is {spec!r}, a layer that applies no RoPE ({spec.reason or 'NoPE'}): it has no "
            "frequencies, cos/sin tables or rotation to compute; rope.apply returns x unchanged for it and "
            "pemath.testing.assert_rope_close asserts the output equals x"
        )
    if not isinstance(spec, Spec):
        raise TypeError(f"{where}: spec must be a pemath.rope.Spec or NoRope (e.g. from rope.from_hf_config), got "
                        f"{show(spec)}")
    both = sorted(k for k, v in given.items() if v is not None)
    if both:
        raise TypeError(
            f"{where}: pass spec= or the keywords it replaces ({', '.join(given)}), not both; got spec and "
            + ", ".join(f"{k}={given[k]!r}" for k in both)
        )
    return spec


def hf_seq_len(scaling: Any, positions: Any, seq_len: Any) -> Any:
    """``seq_len`` as transformers' forward takes it: where not given and the scaling depends on it (dynamic NTK,
    LongRoPE), ``max(positions) + 1`` (floor of the largest position, plus one); otherwise ``seq_len`` itself.

    Engines that fix the regime for a whole run (vLLM's ``max_model_len``, llama.cpp's context size) pass that
    length as ``seq_len`` explicitly."""
    if seq_len is not None or not getattr(scaling, "length_dependent", False) or positions is None:
        return seq_len
    try:
        host = _compat.to_numpy(positions) if _compat.is_array(positions) else np.asarray(positions, dtype=np.float64)
        top = float(np.max(host)) if np.size(host) else 0.0
    except (TypeError, ValueError):
        return seq_len  # the call's own validation names the bad positions
    if not math.isfinite(top):
        return seq_len
    return max(int(math.floor(top)) + 1, 1)


def frequencies_of(
    where: str, spec: Any, dim: Any, seq_len: Any, *, multi_axis_ok: bool = False, rotary_dim: Any = None,
    **given: Any,
) -> tuple[np.ndarray, float]:
    """Frequencies and attention factor for a layout-free entry point taking ``dim`` or ``spec=``.

    ``rotary_dim`` is accepted as another name for ``dim`` (so a spec's fields, or
    ``from_hf``'s, spread into any entry point); both given must agree.
    """
    if isinstance(dim, (Spec, NoRope)) and spec is None:
        raise TypeError(f"{where}: dim must be an integer, got {dim!r}; pass a Spec as spec= (keyword)")
    if rotary_dim is not None:
        if spec is not None:
            resolve(spec, where, rotary_dim=rotary_dim)  # raises: both
        if dim is not None and dim != rotary_dim:
            raise ValueError(f"{where}: dim and rotary_dim name the same size and must agree, got {dim!r} and "
                             f"{rotary_dim!r}")
        dim = rotary_dim
    spec = resolve(spec, where, layout_free=True, **given)
    if spec.is_multi_axis and not multi_axis_ok:
        raise ValueError(f"{where} takes a single-axis spec; {spec!r} is M-RoPE (use rope.apply)")
    if dim is None and spec.rotary_dim is None:
        raise TypeError(f"{where} needs dim (the rotary dimension), or a spec that fixes it")
    return spec.frequencies(dim, seq_len)
