"""RoPE scaling variants: each changes the per-pair frequencies, none breaks relativity.

Pass an instance as ``scaling=`` to :func:`pemath.rope.apply`, :func:`pemath.rope.inv_freq`
or :func:`pemath.rope.cos_sin`; :func:`pemath.rope.from_hf` builds one from a Hugging
Face config.
"""

from ._base import RopeScaling
from .linear import Linear
from .llama3 import Llama3
from .longrope import LongRoPE
from .ntk import NTK, DynamicNTK
from .proportional import Proportional
from .yarn import YaRN

__all__ = ["RopeScaling", "Linear", "NTK", "DynamicNTK", "YaRN", "Llama3", "LongRoPE", "Proportional"]
