"""Golden RoPE vectors of named real models, versioned, readable without pemath.

Each vector is a JSON file: a model's RoPE configuration (its HF ``config.json``
fields and the resulting base, rotary dim, layout, scaling and inverse frequencies),
small inputs at positions up to 131071, and the exact rotation rounded once to
float64. Format 1 (``v1/``): seven hand-picked models. Format 2 (``v2/``): one file per
RoPE model of :mod:`pemath.models`, each case with its own RoPE description (layer
types, regimes, M-RoPE components, DeepSeek-V3's output layout). ``README.md`` in this folder documents the format and how to
check an implementation with nothing but ``json`` and ``math`` (``check.py`` here does
it with the standard library only).

Examples
--------
>>> from pemath.testing import golden
>>> "llama-3.1-8b" in golden.names()
True
>>> g = golden.load("gpt-neox-20b", version=1)
>>> g["rope"]["layout"], g["rope"]["head_dim"], g["rope"]["rotary_dim"]
('half', 96, 24)
>>> g2 = golden.load("gemma-3-4b-it")          # the newest format: one RoPE per case
>>> [(c["name"], c["rope"]["base"]) for c in g2["cases"]]
[('full_attention/default', 1000000.0), ('sliding_attention/default', 10000.0)]
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from ..._validate import check_choice, check_int, show

__all__ = ["FORMAT_VERSION", "names", "load"]

#: The newest format version shipped (files under ``v<version>/``).
FORMAT_VERSION = 2
_VERSIONS = (1, 2)


def _folder(version: Any) -> Any:
    v = check_int("version", version)
    if v not in _VERSIONS:
        raise ValueError(f"version must be one of {list(_VERSIONS)}, got {v}")
    return resources.files(__name__) / f"v{v}"


def names(version: int = FORMAT_VERSION) -> list[str]:
    """The names of the golden vectors of format ``version``, sorted.

    Examples
    --------
    >>> from pemath.testing import golden
    >>> golden.names(1)[:2]
    ['deepseek-v3', 'gpt-j-6b']
    >>> len(golden.names()) >= 40
    True
    """
    folder = _folder(version)
    return sorted(p.name[: -len(".json")] for p in folder.iterdir() if p.name.endswith(".json"))


def load(name: str, version: int = FORMAT_VERSION) -> dict[str, Any]:
    """The parsed JSON document of golden vector ``name`` (see ``names()``).

    Parameters
    ----------
    name : str
        E.g. ``"llama-3.1-8b"``.
    version : int
        The format version (default: the newest).

    Returns
    -------
    dict
        ``format``, ``format_version``, ``pemath_version``, ``model``, ``notes``,
        ``hf_config``, ``from_hf``, ``rope`` and ``cases`` (each with ``positions``,
        ``inv_freq``, ``phase_error_units``, ``x`` and ``expected``), as documented in
        the README.

    Examples
    --------
    >>> from pemath.testing import golden
    >>> g = golden.load("qwen2-7b", version=1)
    >>> case = g["cases"][0]
    >>> case["positions"][-1], len(case["x"][0][0]), len(case["inv_freq"])
    (131071, 128, 64)
    """
    if not isinstance(name, str):
        raise TypeError(f"name must be a golden vector name (a str, see golden.names()), got {show(name)}")
    available = names(version)
    check_choice("name", name, available)
    text = (_folder(version) / f"{name}.json").read_text(encoding="utf-8")
    return json.loads(text)
