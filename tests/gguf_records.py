"""A GGUF file from a recorded conversion (tests/fixtures/peers/gguf_converted.json's records): shared by
tests/test_gguf_converted.py and the engines' recorder (tests/fixtures/make_engine_fixtures.py)."""

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
    for tname, data in record["tensors"].items():
        w.add_tensor(tname, np.asarray(data, dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path
