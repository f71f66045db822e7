r"""The RoPE that llama.cpp computes for a GGUF file.

A GGUF carries its RoPE as metadata (``{arch}.rope.freq_base``, ``.rope.dimension_count``,
``.rope.dimension_sections``, ``.rope.scaling.type / factor / original_context_length /
attn_factor``) and tensors (``rope_freqs.weight``, Llama 3.1's smoothing as per-pair factors;
``rope_factors_long/short.weight``, LongRoPE's), and llama.cpp's code decides the rest: the
pairing of each architecture (``llama_model_rope_type``: NORM pairs ``(2i, 2i+1)``, NEOX pairs
``(i, i + n_rot/2)``, M-RoPE), the defaults of absent keys, whether the architecture's graph
reads the factor tensors at all, and its per-layer rules. :func:`from_gguf` applies those
rules, read from llama.cpp's source into ``gguf_archs.json`` (one table keyed by architecture,
with the llama.cpp commit it was read from; ``tests/fixtures/make_gguf_archs.py`` regenerates
it) and, for the per-architecture handling, from the model files pemath has checked.

llama.cpp's rules, as applied here (``src/llama-model.cpp``, ``src/llama-context.cpp``):

* ``freq_base`` defaults to 10000; the rotary dim ``n_rot`` to the head dim
  (``attention.key_length``, else ``embedding_length / head_count``); llama, deci, falcon and
  llama-embed refuse an ``n_rot`` other than the head dim;
* the scaling type defaults to ``"linear"``; the factor is ``rope.scaling.factor`` (else the
  old ``rope.scale_linear``), ``freq_scale = 1 / factor`` (1 when absent); type ``"none"``
  never scales;
* YaRN (type ``"yarn"``): ext_factor 1, beta_fast 32 and beta_slow 1 (llama.cpp's defaults:
  only Mistral 3 and Grok read the file's betas; a file whose other betas would be ignored is
  warned about), the ramp bounds floored and ceiled (``truncate``), the amplitude
  :math:`(1 + 0.1 \ln s)` times ``rope.scaling.attn_factor``, or with a YaRN log multiplier
  :math:`m` (Mistral 3, DeepSeek-2) :math:`(1 + 0.1\,\mu \ln s) / (1 + 0.1\,m \ln s)` times it
  (:math:`\mu = m` for DeepSeek-2 where :math:`m \ne 1`, else 1);
* otherwise the amplitude is ``rope.scaling.attn_factor`` (default 1);
* frequency factors: ``rope_freqs.weight`` when present, else ``rope_factors_long`` when the
  context ``n_ctx`` exceeds ``original_context_length``, else ``rope_factors_short``; each
  pair's angle is divided by its factor. Only for architectures whose graph passes them.

The pairing is llama.cpp's on the file's own q/k weights. llama.cpp's converter permutes the
q/k weights of the NORM architectures it converts from Hugging Face's half layout (Llama and
its derivatives), so a NORM Spec here applied to those weights equals the Hugging Face
config's half-layout RoPE on the original weights (:func:`pemath.rope.permute_qk_weight`).
"""

from __future__ import annotations

import functools
import json
import math
import os
import warnings
from pathlib import Path
from collections.abc import Callable
from typing import Any

import numpy as np

from .._errors import GGUFWarning
from .._validate import check_int, show
from .spec import NoRope, Spec

__all__ = ["from_gguf", "gguf_differences", "gguf_architectures", "LLAMA_CPP"]

_TABLE = Path(__file__).with_name("gguf_archs.json")

#: How the architectures whose sliding-window layers take their own RoPE parameters set them, read from their
#: model file (``src/models/<file>.cpp``: ``load_hparams`` and the graph) at :data:`LLAMA_CPP`'s commit:
#:
#: * ``pattern``, ``dense_first``: ``load_swa_pattern(ml, pattern, dense_first)``, used unless the file's
#:   ``attention.sliding_window_pattern`` says otherwise (a layer is sliding when ``layer % pattern < pattern - 1``,
#:   or with ``dense_first`` when ``layer % pattern != 0``);
#: * ``needs_window``: sliding layers only where the file has a non-zero ``attention.sliding_window``;
#: * ``base``: the sliding layers' base where the file has no ``rope.freq_base_swa``: ``"global"`` (the file's
#:   ``rope.freq_base``) or a number (llama_hparams' default); ``graph_base`` when the graph passes the global base
#:   to the sliding layers whatever that key says (OLMo 2's);
#: * ``scaling``: ``"global"`` (the sliding layers keep the file's ``freq_scale``: ``1 / rope.scaling.factor`` as
#:   read, even under type ``"none"``, which resets only the global layers') or ``"none"`` (``freq_scale`` 1:
#:   plain frequencies, with the file's ``attn_factor`` unless ``plain``: OLMo 2's graph passes 1 and no YaRN).
_SWA = {
    "gemma2": dict(pattern=2, dense_first=False, needs_window=False, base="global", scaling="global"),
    "gemma3": dict(pattern=6, dense_first=False, needs_window=True, base=10000.0, scaling="none"),
    "gpt-oss": dict(pattern=2, dense_first=False, needs_window="required", base="global", scaling="global"),
    "olmo2": dict(pattern=4, dense_first=False, needs_window=True, base="global", scaling="none", graph_base=True,
                  plain=True),
    "modern-bert": dict(pattern=3, dense_first=True, needs_window=True, base=10000.0, scaling="none"),
    # chunked attention unless the file has attention.sliding_window = 0 (then no sliding layers)
    "llama4": dict(pattern=4, dense_first=False, needs_window="unless zero", base="global", scaling="global"),
}

#: Architectures whose graph skips RoPE on every n-th layer (``use_rope = (il + 1) % n_no_rope_layer_step != 0``):
#: the step, and for Llama 4 the file's ``attention.sliding_window = 0`` setting it to the layer count.
_NOPE_STEP = {"llama4": 4, "smollm3": 4}

#: Architectures whose special handling (in ``gguf_archs.json``'s ``special``) pemath models, by reading
#: their model file: M-RoPE sections, and the sliding-window layers of :data:`_SWA`.
_HANDLED_SPECIAL = {
    "M-RoPE sections": ("qwen2vl", "qwen3vl", "qwen3vlmoe", "glm4", "glm4moe"),
    "a per-layer base and scale (sliding-window layers)": tuple(_SWA),
    "sliding-window layers with their own base": tuple(_SWA),
    "layers without RoPE": tuple(_NOPE_STEP),
    "layers without RoPE (every n-th)": tuple(_NOPE_STEP),
    # mistral3's load_hparams reads rope.scaling.yarn_beta_fast/_slow and yarn_log_multiplier (llama_context then
    # sets the amplitude to get_mscale(s, 1) / get_mscale(s, log_mul) times rope.scaling.attn_factor)
    "YaRN's beta_fast and beta_slow read from the file": ("mistral3",),
    "YaRN's log multiplier (DeepSeek's mscale_all_dim)": ("mistral3", "deepseek2"),
}

#: Architectures whose graph has several RoPE calls, all with the global parameters, on a slice of the head:
#: DeepSeek-2's q_pe and k_pe, the last ``rope.dimension_count`` features of a ``key_length_mla`` head
#: (``ggml_rope_set_offset(Qcur, n_embd_head_qk_nope)`` in src/models/deepseek2.cpp), its YaRN log multiplier
#: stored times 0.1 by the converter (``rope_yarn_log_mul /= 0.1f`` at load) and its softmax scale
#: ``mscale * mscale / sqrt(n_embd_head_k)`` with ``mscale = attn_factor_org * (1 + 0.1 log_mul ln s)``.
_TRAILING_SLICE = ("deepseek2",)

#: Architectures whose RoPE calls take per-layer parameters that pemath models (read from their model file).
_HANDLED_PER_LAYER = tuple(_SWA) + tuple(_NOPE_STEP) + _TRAILING_SLICE

#: llama.cpp refuses n_rot other than the head dim for these (``load_hparams``).
_N_ROT_IS_HEAD_DIM = ("llama", "deci", "falcon", "llama-embed")


@functools.lru_cache(maxsize=1)
def _table() -> dict[str, Any]:
    return json.loads(_TABLE.read_text())


def gguf_architectures() -> dict[str, dict[str, Any]]:
    """The architecture table: for each GGUF ``general.architecture``, llama.cpp's rope type and what its graph does.

    Examples
    --------
    >>> from pemath.rope import gguf_architectures
    >>> gguf_architectures()["llama"]["rope_type"], gguf_architectures()["qwen2"]["rope_type"]
    ('norm', 'neox')
    """
    return {k: dict(v) for k, v in _table()["archs"].items()}


#: The llama.cpp source the table was read from (commit and date).
LLAMA_CPP: dict[str, str] = dict(_table()["llama_cpp"])


def _reader(source: Any) -> Any:
    try:
        import gguf
    except ImportError as exc:
        raise ImportError("rope.from_gguf needs the gguf package (llama.cpp's reader): pip install 'pemath[gguf]'") \
            from exc
    if hasattr(source, "fields") and hasattr(source, "tensors"):
        return source
    if not isinstance(source, (str, os.PathLike)):
        raise TypeError(f"path must be a path to a GGUF file or a gguf.GGUFReader, got {show(source)}")
    path = Path(source)
    if not path.is_file():
        raise ValueError(f"path {str(path)!r} is not a file")
    with open(path, "rb") as f:
        magic = f.read(4)
    if magic != b"GGUF":
        raise ValueError(f"path {str(path)!r} is not a GGUF file (it starts with {magic!r}, not b'GGUF')")
    try:
        return gguf.GGUFReader(str(path))
    except Exception as exc:  # noqa: BLE001 - a damaged file: say so, naming it
        raise ValueError(f"path {str(path)!r} could not be read as GGUF: {exc}") from exc


def _metadata(reader: Any) -> dict[str, Any]:
    out = {}
    for name, field in reader.fields.items():
        try:
            value = field.contents()
        except Exception:  # noqa: BLE001 - a field pemath does not need
            continue
        out[name] = value
    return out


def _tensor(reader: Any, name: str) -> np.ndarray | None:
    for t in reader.tensors:
        if t.name == name:
            return np.asarray(t.data, dtype=np.float64).reshape(-1)
    return None


def _per_layer(value: Any, layer: int | None, key: str) -> Any:
    if isinstance(value, (list, tuple)):
        if layer is None:
            if len(set(value)) > 1:
                raise TypeError(f"{key} differs between layers ({list(value)[:8]}...): pass layer=")
            return value[0]
        return value[layer]
    return value


def from_gguf(path: Any, *, n_ctx: int | None = None, layer: int | None = None) -> Spec | NoRope:
    r"""The RoPE that llama.cpp computes for a GGUF file (per layer where the architecture mixes layers).

    Parameters
    ----------
    path : str, os.PathLike or gguf.GGUFReader
        The GGUF file. Needs the ``gguf`` package (``pip install 'pemath[gguf]'``).
    n_ctx : int, optional
        The context llama.cpp runs with: it chooses LongRoPE's long factors when ``n_ctx``
        exceeds the file's original context. Required for such files.
    layer : int, optional
        The layer, for architectures whose layers differ (the sliding-window layers of Gemma 2 and 3, gpt-oss,
        OLMo 2/3, ModernBERT and Llama 4, where they take their own base or no scaling; the layers without RoPE
        of Llama 4 and SmolLM3, a ``NoRope``).

    Returns
    -------
    Spec or NoRope
        The pairing llama.cpp applies to the file's q/k weights (``"interleaved"`` for NORM,
        ``"half"`` for NEOX and M-RoPE), the base, the rotary dim, the head dim, and the
        scaling: ``Linear`` (``freq_scale``), ``YaRN`` (llama.cpp's ramp and amplitude), or the
        per-pair frequency factors as ``LongRoPE`` with one regime. A ``NoRope`` for an
        architecture without RoPE.

    Raises
    ------
    ImportError
        Without the ``gguf`` package.
    ValueError
        Not a GGUF file; no ``general.architecture``; an architecture llama.cpp's table does not
        hold (the refusal names it and the RoPE keys found); an architecture whose RoPE handling
        pemath does not model (named, with what it does); a frequency-factor tensor of the wrong
        length; a value llama.cpp itself refuses.
    TypeError
        ``n_ctx`` missing for a LongRoPE file, ``layer`` missing where layers differ.

    Warns
    -----
    pemath.GGUFWarning
        When the file holds data that changes the numbers but that the architecture's graph does
        not read: frequency factors, M-RoPE sections on a NORM/NEOX architecture, YaRN betas other
        than llama.cpp's 32 and 1 (llama.cpp ignores them; so does the returned Spec).

    Examples
    --------
    >>> import gguf, tempfile, os
    >>> from pemath import rope
    >>> path = os.path.join(tempfile.mkdtemp(), "tiny.gguf")
    >>> w = gguf.GGUFWriter(path, "qwen2")
    >>> w.add_uint32("qwen2.embedding_length", 256); w.add_uint32("qwen2.attention.head_count", 4)
    >>> w.add_float32("qwen2.rope.freq_base", 1000000.0)
    >>> w.write_header_to_file(); w.write_kv_data_to_file(); w.write_tensors_to_file(); w.close()
    >>> rope.from_gguf(path)
    Spec(layout='half', base=1000000.0, head_dim=64, rotary_dim=64)
    """
    reader = _reader(path)
    kv = _metadata(reader)
    arch = kv.get("general.architecture")
    if not isinstance(arch, str):
        raise ValueError("the GGUF file has no general.architecture: llama.cpp cannot load it either")
    if n_ctx is not None:
        n_ctx = check_int("n_ctx", n_ctx, minimum=1, maximum=2**32 - 1)  # llama.cpp's n_ctx is a uint32
    table = _table()["archs"]
    entry = table.get(arch)
    rope_keys = sorted(k for k in kv if ".rope." in k or k.endswith(".context_length"))
    if entry is None:
        raise ValueError(f"general.architecture {arch!r} is not in llama.cpp's table ({len(table)} architectures, "
                         f"llama.cpp {LLAMA_CPP['commit'][:12]}); RoPE keys found: {rope_keys or 'none'}")
    k = lambda name, default=None: kv.get(f"{arch}.{name}", default)  # noqa: E731
    n_layer = k("block_count")
    if layer is not None:
        layer = check_int("layer", layer, minimum=0, maximum=None if n_layer is None else int(n_layer) - 1)
    provenance = f"llama.cpp {LLAMA_CPP['commit'][:12]} rules for {arch!r} ({entry.get('file', 'no model file')})"
    rope_type = entry["rope_type"]
    sections = [int(v) for v in (k("rope.dimension_sections") or [])]
    if isinstance(rope_type, list):  # conditional: M-RoPE when the file carries sections
        rope_type = rope_type[1] if any(sections) else rope_type[2]
    if rope_type == "none" or entry.get("rope_calls", 1) == 0:
        try:
            head = _head_dim(kv, arch, layer)
        except ValueError:
            head = None
        return NoRope(head_dim=head, reason=f"llama.cpp's {arch!r} graph applies no RoPE", provenance=provenance)
    if rope_type == "vision":
        raise ValueError(f"{arch!r}: llama.cpp's VISION rope type (a 2-D rotation of vision encoders) is not modelled "
                         "by from_gguf")
    special = [s for s in entry.get("special", []) if arch not in _HANDLED_SPECIAL.get(s, ())]
    if special or not (entry.get("generic", False) or arch in _HANDLED_PER_LAYER):
        what = "; ".join(special) if special else "RoPE calls with other parameters than the global ones"
        raise ValueError(f"{arch!r}: llama.cpp's graph ({entry.get('file')}) has RoPE handling pemath does not model "
                         f"({what}); refused rather than guessed")
    head_dim = _head_dim(kv, arch, layer)
    if arch in _NOPE_STEP:
        step = _NOPE_STEP[arch]
        if arch == "llama4" and k("attention.sliding_window") == 0:
            if n_layer is None:
                raise ValueError(f"the file has no {arch}.block_count, which llama.cpp requires (and which says which "
                                 "layer skips RoPE when attention.sliding_window is 0)")
            step = int(n_layer)  # llama.cpp's "always use rope": every layer but the last
        if layer is None and n_layer and int(n_layer) >= step > 0:
            raise TypeError(f"{arch}: llama.cpp's graph skips RoPE on every layer il with (il + 1) % {step} == 0 "
                            "(n_no_rope_layer_step) and rotates the others: pass layer=")
        if layer is not None and step > 0 and (layer + 1) % step == 0:
            return NoRope(head_dim=head_dim, reason=f"llama.cpp's {arch!r} graph skips RoPE on layer {layer} "
                          f"(({layer} + 1) % n_no_rope_layer_step {step} == 0)", provenance=provenance)
    n_rot = int(_per_layer(k("rope.dimension_count", head_dim), layer, f"{arch}.rope.dimension_count"))
    if arch in _N_ROT_IS_HEAD_DIM and n_rot != head_dim:
        raise ValueError(f"{arch}.rope.dimension_count = {n_rot} but the head dim is {head_dim}: llama.cpp refuses "
                         "this file (invalid n_rot)")
    if not 2 <= n_rot <= head_dim or n_rot % 2:
        raise ValueError(f"{arch}.rope.dimension_count = {n_rot}: must be even and within the head dim {head_dim}")
    base = float(k("rope.freq_base", 10000.0))
    kind = str(k("rope.scaling.type", "linear"))
    factor = float(k("rope.scaling.factor", 0.0) or k("rope.scale_linear", 0.0) or 0.0)
    freq_scale = 1.0 if factor == 0.0 or kind == "none" else 1.0 / factor
    attn = float(k("rope.scaling.attn_factor", 1.0))
    n_ctx_orig = k("rope.scaling.original_context_length", k("context_length"))
    if arch in _SWA:
        for key in ("rope.dimension_count_swa", "attention.key_length_swa"):
            if k(key) is not None:
                raise ValueError(f"the file holds {arch}.{key} = {k(key)}: llama.cpp then rotates with the sliding "
                                 "layers' dims (hparams.n_rot(0)); not modelled by from_gguf, refused")
        if _SWA[arch]["needs_window"] == "required" and k("attention.sliding_window") is None:
            raise ValueError(f"the file has no {arch}.attention.sliding_window, which llama.cpp requires for {arch!r}")
        if layer is None:  # one answer for every layer, or a refusal: a sliding and a global layer computed, compared
            if not n_layer:
                raise ValueError(f"the file has no {arch}.block_count, which llama.cpp requires (and which says which "
                                 "layers slide)")
            is_swa = _swa_rule(kv, arch)
            layers = range(int(n_layer))
            swa = next((i for i in layers if is_swa(i)), None)
            dense = next((i for i in layers if not is_swa(i)), None)
            if swa is not None and dense is not None:
                with warnings.catch_warnings():  # the file's warnings are given once, below
                    warnings.simplefilter("ignore")
                    a, b = (from_gguf(reader, n_ctx=n_ctx, layer=i) for i in (swa, dense))
                if a != b:
                    raise TypeError(f"{arch}: llama.cpp rotates the sliding-window layers (layer {swa}, ...) as {a!r} "
                                    f"and the others (layer {dense}, ...) as {b!r}: pass layer=")
            elif swa is not None:
                layer = swa  # every layer slides
    if arch in _SWA and layer is not None and _swa_rule(kv, arch)(layer):  # get_rope_freq_base / get_rope_freq_scale, or the graph's own
        rule = _SWA[arch]
        if rule["scaling"] == "global" and kind == "none" and factor not in (0.0, 1.0):
            freq_scale, kind = 1.0 / factor, "linear"  # rope_freq_scale_train_swa took the factor as read
        if not rule.get("graph_base"):
            base = float(k("rope.freq_base_swa", base if rule["base"] == "global" else rule["base"]))
        if rule["scaling"] == "none":
            freq_scale, kind = 1.0, "linear"
            attn = 1.0 if rule.get("plain") else attn
    factors = _factors(reader, entry, arch, n_rot, n_ctx, n_ctx_orig)
    yarn: dict[str, float] = {}
    if arch in _HANDLED_SPECIAL["YaRN's beta_fast and beta_slow read from the file"]:
        yarn = {"beta_fast": float(k("rope.scaling.yarn_beta_fast", 32.0)),
                "beta_slow": float(k("rope.scaling.yarn_beta_slow", 1.0))}
    else:
        for key, used in (("yarn_beta_fast", 32.0), ("yarn_beta_slow", 1.0)):
            if k(f"rope.scaling.{key}") not in (None, used):
                warnings.warn(f"the file holds {arch}.rope.scaling.{key} = {k(f'rope.scaling.{key}'):g}, but llama.cpp "
                              f"does not read it for {arch!r} and uses {used:g}: ignored, as llama.cpp ignores it",
                              GGUFWarning, stacklevel=2)
    if arch in _HANDLED_SPECIAL["YaRN's log multiplier (DeepSeek's mscale_all_dim)"]:
        log_mul = np.float32(k("rope.scaling.yarn_log_multiplier", 0.0))
        if arch == "deepseek2" and log_mul != 0:
            log_mul = log_mul / np.float32(0.1)  # [TAG_DEEPSEEK2_YARN_LOG_MUL_FIX]: the converter's 0.1 cancelled
        yarn["log_mul"] = float(log_mul)
        # llama_context: mscale = log_mul for DeepSeek-2 where log_mul != 1, else 1
        yarn["mscale"] = float(log_mul) if arch == "deepseek2" and log_mul not in (0.0, 1.0) else 1.0
    scaling = _scaling(kind, freq_scale, attn, factors, n_rot, n_ctx_orig, arch, **yarn)
    layout = "interleaved" if rope_type == "norm" else "half"
    spec_kw: dict[str, Any] = {}
    if any(sections) and rope_type not in ("mrope", "imrope"):
        warnings.warn(f"the file holds {arch}.rope.dimension_sections = {sections}, but llama.cpp rotates {arch!r} "
                      f"with its {rope_type.upper()} rope type, without M-RoPE sections: ignored, as llama.cpp ignores "
                      "them", GGUFWarning, stacklevel=2)
    if rope_type in ("mrope", "imrope"):
        used = [s for s in sections if s]
        if len(used) < 2 or sum(used) != n_rot // 2:
            raise ValueError(f"{arch}.rope.dimension_sections = {sections}: M-RoPE needs sections summing to "
                             f"n_rot/2 = {n_rot // 2}")
        spec_kw = {"mrope_section": tuple(used), "mrope_interleaved": rope_type == "imrope"}
    if arch in _TRAILING_SLICE:
        s = 1.0 / freq_scale
        # the graph's attn_factor_org = cparams.yarn_attn_factor * (1 + 0.1 ln s), whatever the scaling type: YaRN's
        # amplitude, or attn_factor * (1 + 0.1 ln s) under linear scaling; then mscale and kq_scale
        org = scaling.attention_factor if kind == "yarn" and scaling is not None else attn * (1.0 + 0.1 * math.log(s))
        kq = org * (1.0 + 0.1 * yarn.get("log_mul", 0.0) * math.log(s))
        spec_kw = {"rotary_offset": head_dim - n_rot, "softmax_scale": kq * kq}
    return Spec(layout, base=base, head_dim=head_dim, rotary_dim=n_rot, scaling=scaling, provenance=provenance,
                **spec_kw)


def _head_dim(kv: dict[str, Any], arch: str, layer: int | None) -> int:
    n_embd = kv.get(f"{arch}.embedding_length")
    n_head = _per_layer(kv.get(f"{arch}.attention.head_count"), layer, f"{arch}.attention.head_count")
    key_length = kv.get(f"{arch}.attention.key_length")
    if arch in _TRAILING_SLICE and kv.get(f"{arch}.attention.key_length_mla") is not None:
        return int(kv[f"{arch}.attention.key_length_mla"])  # MLA: the decompressed head (n_embd_head_k_mla)
    if key_length is not None:
        return int(key_length)
    if n_embd is None or not n_head:
        raise ValueError(f"the GGUF file has neither {arch}.attention.key_length nor {arch}.embedding_length and "
                         f"{arch}.attention.head_count: the head dim is unknown")
    return int(n_embd) // int(n_head)


def _swa_rule(kv: dict[str, Any], arch: str) -> Callable[[int], bool]:
    """Which layers llama.cpp rotates as sliding-window layers of :data:`_SWA` (``hparams.is_swa``)."""
    rule = _SWA[arch]
    window = kv.get(f"{arch}.attention.sliding_window")
    if (window == 0) if rule["needs_window"] == "unless zero" else (rule["needs_window"] is True and not window):
        return lambda i: False
    pattern = kv.get(f"{arch}.attention.sliding_window_pattern", rule["pattern"])
    if isinstance(pattern, (list, tuple)):
        if not all(isinstance(v, (bool, np.bool_)) for v in pattern):
            raise ValueError(f"{arch}.attention.sliding_window_pattern holds {list(pattern)[:4]}...: llama.cpp reads "
                             "a bool array (or an integer) and refuses this file")
        flags = [bool(v) for v in pattern]  # layers past the array's end are dense (llama.cpp fills with false)
        return lambda i: i < len(flags) and flags[i]
    n = int(pattern)
    if rule["dense_first"]:
        return lambda i: n == 0 or i % n != 0
    return lambda i: n == 0 or i % n < n - 1


def _factors(reader: Any, entry: dict[str, Any], arch: str, n_rot: int, n_ctx: int | None,
             n_ctx_orig: Any) -> np.ndarray | None:
    names = [n for n in ("rope_freqs.weight", "rope_factors_long.weight", "rope_factors_short.weight")
             if _tensor(reader, n) is not None]
    if not names:
        return None
    if not entry.get("factors", False):
        warnings.warn(f"the file holds {', '.join(names)}, which llama.cpp's {arch!r} graph does not read "
                      f"({entry.get('file')} passes no frequency factors): ignored, as llama.cpp ignores them",
                      GGUFWarning, stacklevel=3)
        return None
    if "rope_freqs.weight" in names:
        name = "rope_freqs.weight"
    else:
        if n_ctx is None:
            raise TypeError(f"the file holds LongRoPE factors (rope_factors_long/short): llama.cpp chooses them by the "
                            f"context size (long when n_ctx > {n_ctx_orig}): pass n_ctx")
        name = "rope_factors_long.weight" if n_ctx > int(n_ctx_orig) else "rope_factors_short.weight"
    ff = _tensor(reader, name)
    if ff.shape != (n_rot // 2,):
        raise ValueError(f"{name} has {ff.size} values; llama.cpp needs n_rot/2 = {n_rot // 2} (one per rotated pair)")
    if not np.all(np.isfinite(ff) & (ff > 0)):
        raise ValueError(f"{name} holds values that are not positive and finite")
    return ff


def _scaling(kind: str, freq_scale: float, attn: float, factors: np.ndarray | None, n_rot: int, n_ctx_orig: Any,
             arch: str, beta_fast: float = 32.0, beta_slow: float = 1.0, log_mul: float = 0.0,
             mscale: float = 1.0) -> Any:
    from ..scaling import Linear, LongRoPE, YaRN

    if kind not in ("none", "linear", "yarn", "longrope"):
        raise ValueError(f"{arch}.rope.scaling.type = {kind!r}: llama.cpp knows none, linear, yarn, longrope")
    if factors is not None:
        if freq_scale != 1.0 or kind == "yarn":
            raise ValueError(f"{arch}: frequency factors together with {kind} scaling (freq_scale {freq_scale}) are "
                             "not modelled by from_gguf")
        return LongRoPE(short_factor=factors.tolist(), long_factor=factors.tolist(),
                        original_max_position=int(n_ctx_orig or 1), attention_factor=attn)
    if kind == "yarn":
        s = 1.0 / freq_scale
        if not s > 1.0 or n_ctx_orig is None:
            raise ValueError(f"{arch}: YaRN with factor {s} and original context {n_ctx_orig} is not modelled")
        # llama_context: yarn_attn_factor = get_mscale(s, 1) [/ get_mscale(s, log_mul)] / (1 + 0.1 ln s) * attn,
        # and ggml's rope_yarn multiplies it by 1 + 0.1 ln s again
        amplitude = (1.0 + 0.1 * mscale * math.log(s)) / ((1.0 + 0.1 * log_mul * math.log(s)) if log_mul else 1.0)
        return YaRN(s, int(n_ctx_orig), beta_fast=beta_fast, beta_slow=beta_slow, truncate=True,
                    attention_factor=attn * amplitude)
    if attn != 1.0:
        raise ValueError(f"{arch}.rope.scaling.attn_factor = {attn} without YaRN or frequency factors: not modelled")
    if freq_scale != 1.0:
        return Linear(1.0 / freq_scale)
    return None


# --------------------------------------------------------------------------- GGUF against the model's config


def _describe_scaling(s: Any) -> str:
    return "none" if s is None else repr(s)


def gguf_differences(path: Any, config: Any, *, n_ctx: int | None = None, layer: int | None = None,
                     seq_len: int | None = None, layout: str | None = None) -> list[str]:
    r"""How the RoPE a GGUF implies differs from the RoPE of the model's Hugging Face config, in words.

    The GGUF side is :func:`from_gguf` (llama.cpp's rules) on the file's q/k weights; where
    llama.cpp's converter permutes the q/k rows of the architecture (recorded in the table,
    ``converter_permutes_qk``), its NORM pairs on those rows are the config's half layout on the
    original weights. The config side is :func:`pemath.rope.from_hf_config`. Every difference is
    listed, not only the first: the pairing,
    the head dim, rotary dim and rotary offset (a config Spec of the rotated slice alone, as DeepSeek's
    ``q_pe``, is compared with the GGUF's slice), the base, every pair's frequency (the frequency
    factors included), the attention factor, the softmax scale, the M-RoPE sections. Not compared: an
    ``out_layout``, a reordering of the rotated features shared by q and k that leaves every score as it
    is. A frequency difference the base alone explains is said once, as the base.

    Where the config's RoPE depends on the sequence length (dynamic NTK, LongRoPE) and no
    ``n_ctx`` is given, the frequencies are compared at the original context and again at a
    long one (the config's extended context: ``original × factor``, or its
    ``max_position_embeddings``), and a difference there is said with that context: llama.cpp
    has no dynamic NTK, for one. An empty list means they agree at every context compared.

    Parameters
    ----------
    path
        The GGUF file (as :func:`from_gguf`).
    config : dict, str or os.PathLike
        The Hugging Face config (a dict or a ``config.json`` path).
    n_ctx, layer
        As :func:`from_gguf` (``layer`` also picks the config's layer).
    layout : {"half", "interleaved"}, optional
        As :func:`pemath.rope.from_hf_config`: the pairing of the model's code, for a model type
        pemath has not checked.
    seq_len : int, optional
        The length for the config's length-dependent scalings (default: ``n_ctx``).

    Examples
    --------
    >>> import gguf, tempfile, os
    >>> from pemath import rope
    >>> path = os.path.join(tempfile.mkdtemp(), "q.gguf")
    >>> w = gguf.GGUFWriter(path, "qwen2")
    >>> w.add_uint32("qwen2.embedding_length", 512); w.add_uint32("qwen2.attention.head_count", 4)
    >>> w.add_float32("qwen2.rope.freq_base", 10000.0)       # the config says 1e6: off by 100x
    >>> w.write_header_to_file(); w.write_kv_data_to_file(); w.write_tensors_to_file(); w.close()
    >>> config = {"model_type": "qwen2", "hidden_size": 512, "num_attention_heads": 4, "rope_theta": 1000000.0}
    >>> print(rope.gguf_differences(path, config)[0])
    base: the GGUF has 10000 (qwen2.rope.freq_base), the config 1e+06 (100 times the GGUF's)
    """
    from .hf import from_hf_config

    if isinstance(config, (str, os.PathLike)):
        p = Path(config)
        if not p.is_file():
            raise ValueError(f"config {str(p)!r} is not a file")
        config = json.loads(p.read_text())
    if not isinstance(config, dict):
        raise TypeError(f"config must be a dict or a path to a config.json, got {show(config)}")
    reader = _reader(path)
    g = from_gguf(reader, n_ctx=n_ctx, layer=layer)
    arch = _metadata(reader).get("general.architecture")
    h = from_hf_config(config, layer=layer, layout=layout)
    if isinstance(g, NoRope) or isinstance(h, NoRope):
        if isinstance(g, NoRope) != isinstance(h, NoRope):
            return [f"RoPE: the GGUF's {'has none' if isinstance(g, NoRope) else 'is ' + repr(g)}, the config's "
                    f"{'has none' if isinstance(h, NoRope) else 'is ' + repr(h)}"]
        return []
    seq_len = seq_len if seq_len is not None else n_ctx
    out = _compare(g, h, arch, seq_len)
    long = _long_context(h) if seq_len is None else None
    if long is not None:
        at = f"at a context of {long} tokens (n_ctx={long}): "
        out += [at + line for line in _compare(g, h, arch, long, frequencies_only=True)]
    return out


def _long_context(h: Spec) -> int | None:
    """A context where a length-dependent config RoPE (dynamic NTK, LongRoPE) has left its original regime, or
    None where the config's frequencies do not depend on the length."""
    s = h.scaling
    orig = getattr(s, "original_max_position", None)
    if not orig:
        return None
    factor = getattr(s, "factor", None) or 1.0
    long = int(max(orig * factor, orig + 1))
    if h.head_dim is None:
        return None
    r = h.rotary_dim_for(h.head_dim)
    f0, a0 = h.frequencies(r, orig)
    f1, a1 = h.frequencies(r, long)
    if np.array_equal(np.asarray(f0), np.asarray(f1)) and a0 == a1:
        return None
    return long


def _compare(g: Spec, h: Spec, arch: Any, seq_len: int | None, frequencies_only: bool = False) -> list[str]:
    """Every difference between the GGUF's Spec and the config's, at one sequence length."""
    out: list[str] = []
    if g.rotary_offset and h.head_dim == g.rotary_dim and not h.rotary_offset:
        # the config's Spec is of the rotated slice alone (DeepSeek's q_pe), the GGUF's of the whole head with the
        # slice at its end: compare the slices
        g = g.replace(head_dim=g.rotary_dim, rotary_offset=0)
    hd = h.head_dim or g.head_dim
    r_g, r_h = g.rotary_dim_for(g.head_dim), h.rotary_dim_for(hd)
    if not frequencies_only:
        permutes = _table()["archs"].get(arch, {}).get("converter_permutes_qk")
        layout = "half" if g.layout == "interleaved" and permutes else g.layout
        if layout != h.layout:
            how = ("llama.cpp's NORM pairs (2i, 2i+1) on q/k rows the converter did not permute"
                   if g.layout == "interleaved" else "llama.cpp's NEOX pairs (i, i + n_rot/2)")
            out.append(f"pairing: the GGUF is rotated with {how}; the config's model rotates {h.layout!r} pairs"
                       + ("" if permutes is not None or g.layout == "half" else
                          f" (whether llama.cpp's converter permutes q/k for {arch!r} is not recorded)"))
        if h.head_dim is not None and g.head_dim != h.head_dim:
            out.append(f"head dim: the GGUF's is {g.head_dim}, the config's {h.head_dim}")
        if g.rotary_offset != h.rotary_offset:
            out.append(f"rotary offset: the GGUF rotates features from {g.rotary_offset}, the config from "
                       f"{h.rotary_offset}")
        if r_g != r_h:
            out.append(f"rotary dims: the GGUF rotates {r_g} ({arch}.rope.dimension_count), the config {r_h}")
        if g.base != h.base and g.base is not None and h.base is not None:
            ratio = h.base / g.base
            words = f" ({_fmt_ratio(ratio)} the GGUF's)" if ratio >= 10 or ratio <= 0.1 else ""
            out.append(f"base: the GGUF has {g.base:g} ({arch}.rope.freq_base), the config {h.base:g}{words}")
    if r_g != r_h:  # no pair-by-pair comparison; the scaling in words
        if type(g.scaling) is not type(h.scaling) or _missing_factors(g, h):
            out.append(f"scaling: the GGUF's {_describe_scaling(g.scaling)}, the config's "
                       f"{_describe_scaling(h.scaling)}" + _missing_factors(g, h))
        return out
    f_h, a_h = h.frequencies(r_h, seq_len)
    f_h = np.asarray(f_h, dtype=np.float64)
    # the base said once: the frequencies compared as if the GGUF had the config's base
    g_same = g.replace(base=h.base) if (g.base != h.base and g.base is not None and h.base is not None) else g
    f_g, a_g = g_same.frequencies(r_g, seq_len)
    f_g = np.asarray(f_g, dtype=np.float64)
    bad = np.nonzero(~np.isclose(f_g, f_h, rtol=2e-6, atol=0.0))[0]
    if bad.size:
        lo, hi = int(bad[0]), int(bad[-1])
        beside = " (beside the base)" if g_same is not g else ""
        out.append(f"frequencies{beside}: pairs {lo}..{hi} of {r_g // 2} differ (pair {lo}: {f_g[lo]:.6g} in the "
                   f"GGUF, {f_h[lo]:.6g} in the config); the GGUF's scaling {_describe_scaling(g.scaling)}, the "
                   f"config's {_describe_scaling(h.scaling)}" + _missing_factors(g, h))
    if not math.isclose(a_g, a_h, rel_tol=2e-6):
        out.append(f"attention factor: the GGUF's is {a_g:.6g}, the config's {a_h:.6g}")
    if frequencies_only:
        return out
    if not math.isclose(g.softmax_scale, h.softmax_scale, rel_tol=2e-6):
        out.append(f"softmax scale (times 1/sqrt(head dim)): the GGUF's is {g.softmax_scale:.6g}, the config's "
                   f"{h.softmax_scale:.6g}")
    if (g.mrope_section, g.mrope_interleaved) != (h.mrope_section, h.mrope_interleaved):
        out.append(f"M-RoPE sections: the GGUF's {g.mrope_section} (interleaved {g.mrope_interleaved}), the config's "
                   f"{h.mrope_section} (interleaved {h.mrope_interleaved})")
    return out


def _fmt_ratio(r: float) -> str:
    return f"{r:g} times" if r >= 1 else f"1/{1 / r:g} of"


def _missing_factors(g: Spec, h: Spec) -> str:
    from ..scaling import Llama3, LongRoPE

    if g.scaling is None and isinstance(h.scaling, (Llama3, LongRoPE)):
        return (": the GGUF has no frequency factors (rope_freqs.weight, or rope_factors_long/short) where the "
                "config's scaling needs them")
    return ""
