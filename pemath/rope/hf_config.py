"""Deprecated home of :func:`pemath.rope.from_hf_config` (now :mod:`pemath.rope.hf.select`).

``from pemath.rope.hf_config import from_hf_config`` still works for one release, with a
``DeprecationWarning`` naming the replacement: ``from pemath.rope import from_hf_config``.
"""

from __future__ import annotations

import warnings
from typing import Any

__all__: list[str] = []


def __getattr__(name: str) -> Any:
    if name == "from_hf_config":
        warnings.warn("pemath.rope.hf_config is deprecated and goes in the next release: use "
                      "`from pemath.rope import from_hf_config` (or pemath.rope.layers for every layer)",
                      DeprecationWarning, stacklevel=2)
        from .hf.select import from_hf_config

        return from_hf_config
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
