"""GGUF files for the tests: from a recorded conversion (tests/fixtures/peers/gguf_converted.json's records, for
tests/test_gguf_converted.py and the engines' recorder) or from plain metadata (tests/test_gguf.py, the fuzz)."""

from __future__ import annotations

from pathlib import Path

import numpy as np


def write_record(path: str | Path, record: dict) -> str:
    """Write ``record`` (``gguf_arch``, ``kv`` as ``{key: [value type name, value]}``, ``tensors``) to ``path``."""
    import gguf

    path = str(path)
    w = gguf.GGUFWriter(path, record["gguf_arch"])
    for key, (kind, value) in record["kv"].items():
        if key == "general.architecture":
            continue
        vt = gguf.GGUFValueType[kind]
        if vt == gguf.GGUFValueType.ARRAY:
            w.add_array(key, value)
        else:
            if "INT" in kind and isinstance(value, float):  # a placeholder recorded as a float
                value = int(value)
            w.add_key_value(key, value, vt)
    return _finish(w, path, record["tensors"])


def write_kv(path: str | Path, arch: str, kv: dict, tensors: dict | None = None) -> str:
    """A GGUF file for ``arch`` with the metadata ``kv`` (keys without the ``{arch}.`` prefix unless they start with
    ``general.``; ints as uint32, floats as float32, bools, strings, lists as arrays) and float32 ``tensors``."""
    import gguf

    path = str(path)
    w = gguf.GGUFWriter(path, arch)
    for key, value in kv.items():
        full = key if key.startswith("general.") else f"{arch}.{key}"
        if isinstance(value, bool):
            w.add_bool(full, value)
        elif isinstance(value, int):
            w.add_uint32(full, value)
        elif isinstance(value, float):
            w.add_float32(full, value)
        elif isinstance(value, str):
            w.add_string(full, value)
        else:
            w.add_array(full, list(value))
    return _finish(w, path, tensors or {})


def _finish(w, path: str, tensors: dict) -> str:
    """Add the float32 ``tensors`` to the GGUF writer ``w`` and write the file."""
    for tname, data in tensors.items():
        w.add_tensor(tname, np.asarray(data, dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path
