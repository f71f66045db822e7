"""Each proof can fail: wrong statements are not proved.

The mutants are the bugs of the field: a sign flipped, the other layout's pairing,
the seeds' rotary matrix that drops its lower sin entry, a frequency off by one index.
"""

from __future__ import annotations

import pytest
import sympy as sp

from tests.mutation._patch import mutate
from pemath.symbolic import ProofFailure
from pemath.symbolic import rope as R
from pemath.symbolic import sinusoidal as S


def seed_block(x):
    """seeds/002's get_rotary_matrix: R[2i+1, 2i] (the lower sin) is never set."""
    return sp.Matrix([[sp.cos(x), -sp.sin(x)], [0, sp.cos(x)]])


def flipped_block(x):
    return sp.Matrix([[sp.cos(x), sp.sin(x)], [sp.sin(x), sp.cos(x)]])


def test_true_statements_are_proved():
    R.relative_block()
    R.relative_symbolic_d()
    for layout in R.LAYOUTS:
        R.relative_expanded(4, layout)
    for order in S.ORDERS:
        S.shift_matrix(order)


@pytest.mark.parametrize(
    "mutant",
    [
        pytest.param(lambda: mutate(R.relative_block, seed_block)(), id="seed-block"),
        pytest.param(lambda: mutate(R.relative_block, flipped_block)(), id="sign-flipped-block"),
        pytest.param(lambda: mutate(R.relative_symbolic_d, seed_block)(), id="symbolic-d-seed-block"),
        pytest.param(lambda: mutate(R.relative_symbolic_d, rhs_angle=lambda m, n: (m - n) * R.THETA(R.I))(),
                     id="symbolic-d-sign-flipped"),
        pytest.param(lambda: mutate(R.relative_symbolic_d, rhs_angle=lambda m, n: (n - m) * R.THETA(R.I + 1))(),
                     id="symbolic-d-frequency-off-by-one"),
        pytest.param(lambda: mutate(R.relative_symbolic_d, rhs_angle=lambda m, n: (n - m + 1) * R.THETA(R.I))(),
                     id="symbolic-d-position-off-by-one"),
        pytest.param(lambda: mutate(R.relative_expanded, 4, "half", perm_layout="interleaved")(), id="other-layout"),
        pytest.param(lambda: mutate(R.relative_expanded, 4, "interleaved", blk=seed_block)(), id="expanded-seed-block"),
    ],
)
def test_rope_mutants_are_not_proved(mutant):
    with pytest.raises(ProofFailure):
        mutant()


def _bad_cos_order(order, x, freq=S.w):
    return sp.Matrix([sp.sin(freq * x), sp.cos(freq * (x + 1))]) if order == "sin_cos" else S.pair(order, x, freq)


def _bad_frequency(order, x, freq=S.w):
    return sp.Matrix([sp.sin(freq * x), sp.cos(2 * freq * x)])


def _not_periodic(order, x, freq=S.w):
    return sp.Matrix([sp.sin(freq * x), x])


@pytest.mark.parametrize("encoding", [_bad_cos_order, _bad_frequency, _not_periodic])
def test_sinusoidal_mutants_are_not_proved(encoding):
    with pytest.raises(ProofFailure):
        mutate(S.shift_matrix, "sin_cos", encoding=encoding)()
