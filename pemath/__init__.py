"""pemath: the mathematical reference for transformer positional encodings."""

from __future__ import annotations

import importlib
from typing import Any

from ._errors import GGUFWarning, InexactPositionsWarning, PrecisionWarning, TablePrecisionWarning, VacuousToleranceWarning

__version__ = "0.2.0.dev0"

_SUBMODULES = ("rope", "scaling", "sinusoidal", "alibi", "t5", "positions", "pedagogy", "testing", "models")

__all__ = [
    "PrecisionWarning",
    "InexactPositionsWarning",
    "TablePrecisionWarning",
    "VacuousToleranceWarning",
    "GGUFWarning",
    "__version__",
    *_SUBMODULES,
]


def __getattr__(name: str) -> Any:
    # Submodules load on first use: `import pemath` stays light (no SymPy, no backend).
    if name in _SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'pemath' has no attribute {name!r}")
