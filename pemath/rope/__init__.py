"""Rotary position embedding (RoPE): numeric reference in every layout and convention."""

from .spec import NoRope, Spec
from .apply import apply, apply_mrope, cos_sin, inv_freq
from .gguf import LLAMA_CPP, from_gguf, gguf_architectures, gguf_differences
from .hf import from_hf, from_hf_config, layers
from .complex_form import apply_complex, freqs_cis, from_complex, to_complex
from .dense import matrix
from .layout import convert_layout, permute_qk_weight, permute_qk_weights
from . import xpos
from .axial import apply_axial, mrope_components
from .analysis import long_term_decay
from .vision import pixel_bands, pixel_positions, pixel_spec

__all__ = [
    "Spec",
    "NoRope",
    "inv_freq",
    "apply",
    "cos_sin",
    "from_hf",
    "from_hf_config",
    "from_gguf",
    "gguf_differences",
    "gguf_architectures",
    "LLAMA_CPP",
    "layers",
    "matrix",
    "to_complex",
    "from_complex",
    "freqs_cis",
    "apply_complex",
    "convert_layout",
    "permute_qk_weight",
    "permute_qk_weights",
    "xpos",
    "apply_axial",
    "apply_mrope",
    "mrope_components",
    "long_term_decay",
    "pixel_bands",
    "pixel_positions",
    "pixel_spec",
]
