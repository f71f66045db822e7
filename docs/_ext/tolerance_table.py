"""The ``pemath-tolerance-table`` directive: the oracle's tolerance, dtype by position, computed at build time.

Every number is :func:`pemath.testing.rope_tolerance` of a pair with ``S = |x_a| + |x_b| = 2``
(RoPE, interleaved, base 10000, d = 128): nothing in the table is typed by hand.
"""

from __future__ import annotations

#: (column title, position, pair index)
COLUMNS = ((":math:`p = 0`", 0, 0), (":math:`p = 10^3`, pair 0", 10**3, 0), (":math:`p = 10^6`, pair 0", 10**6, 0),
           (":math:`p = 10^6`, pair 63", 10**6, 63))
DIM = 128


def tau(dtype, position: int, pair: int) -> float:
    """The tolerance of one element of pair ``pair`` (S = 2) at ``position``, output ``dtype``."""
    import numpy as np

    from pemath.testing import rope_tolerance

    x = np.zeros(DIM)
    x[2 * pair] = x[2 * pair + 1] = 1.0
    return float(rope_tolerance(x, position, layout="interleaved", dtype=dtype)[2 * pair])


def rows() -> list[list[str]]:
    import ml_dtypes
    import numpy as np

    out = []
    for name, dt in (("float64", np.float64), ("float32", np.float32), ("float16", np.float16),
                     ("bfloat16", ml_dtypes.bfloat16)):
        out.append([name] + [f"{tau(dt, p, i):.3g}" for _, p, i in COLUMNS])
    return out


def setup(app):
    # docutils is imported here, so the tests can import rows() with the test extra alone
    from docutils.parsers.rst import Directive

    from _rst import list_table, parsed

    class ToleranceTable(Directive):
        has_content = False

        def run(self):
            return parsed(self, list_table([["output dtype"] + [c[0] for c in COLUMNS], *rows()]))

    app.add_directive("pemath-tolerance-table", ToleranceTable)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
