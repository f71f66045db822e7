"""pemath as a test oracle for other projects' positional-encoding code.

One line in a kernel's test says "correct" or explains why not::

    from pemath.testing import assert_rope_close
    assert_rope_close(my_rope(x, pos), x, pos, layout="half")

The asserts compare against pemath's float64 reference with tolerances derived from the
output dtype, the input's magnitude and the phase (:func:`rope_tolerance`), and on failure
diagnose the known bugs; :func:`recover_rope` reads the angle and amplitude a kernel
applied to each pair from its output, and a failing assert reports what those measure
(amplitude, effective positions, effective frequencies by band) before the named diagnosis;
:func:`check_rope_kernel` drives a kernel over the inputs that break kernels and returns a
conformance table. The submodules ``pipelines`` (bit-level emulation of real
pipelines), ``strategies`` (hypothesis strategies; needs hypothesis) and ``golden``
(conformance vectors) load on first use. Importing this package imports no array backend
and not hypothesis.
"""

from __future__ import annotations

import importlib
from typing import Any

from ._tables.asserts import assert_alibi_close, assert_sinusoidal_close, assert_t5_buckets_equal
from ._rope.asserts import assert_rope_close
from ._rope.backward import assert_rope_backward_close
from ._rope.xpos import assert_xpos_close, xpos_tolerance
from ._rope.conformance import ConformanceReport, ConformanceRow, check_rope_kernel
from ._rope.recover import RopeRecovery, recover_rope
from ._tables.tolerance import alibi_tolerance, sinusoidal_tolerance
from ._rope.tolerance import rope_tolerance
from ._core.tolerance import unit_roundoff

_SUBMODULES = ("pipelines", "strategies", "golden")

__all__ = [
    "assert_rope_close",
    "assert_rope_backward_close",
    "assert_xpos_close",
    "assert_sinusoidal_close",
    "assert_alibi_close",
    "assert_t5_buckets_equal",
    "rope_tolerance",
    "sinusoidal_tolerance",
    "alibi_tolerance",
    "xpos_tolerance",
    "unit_roundoff",
    "recover_rope",
    "RopeRecovery",
    "check_rope_kernel",
    "ConformanceReport",
    "ConformanceRow",
    *_SUBMODULES,
]


def __getattr__(name: str) -> Any:
    # The submodules load on first use: strategies needs hypothesis, which a user's
    # production environment need not have.
    if name in _SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'pemath.testing' has no attribute {name!r}")
