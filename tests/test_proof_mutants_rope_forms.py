"""Each RoPE forms / calculus proof can fail: wrong statements are not proved.

The mutants are the bugs of the field: a sign flipped in the block, the seeds' rotary
matrix that drops its lower sin entry, the other layout's rotate or permutation, a
frequency off by one index, the conjugate complex convention, a Jacobian transposed
wrongly, the forward rotation used for the backward pass, cached keys left unshifted.
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

from tests.mutation._patch import mutate
from pemath.symbolic import ProofFailure
from pemath.symbolic import rope as R
from pemath.symbolic import rope_algebra as A


_ROTATE = A.rotate_features  # the true rotate, captured before a patch replaces it


def seed_block(x):
    """seeds/002's get_rotary_matrix: R[2i+1, 2i] (the lower sin) is never set."""
    return sp.Matrix([[sp.cos(x), -sp.sin(x)], [0, sp.cos(x)]])


def flipped_block(x):
    return sp.Matrix([[sp.cos(x), sp.sin(x)], [sp.sin(x), sp.cos(x)]])


def clockwise_block(x):
    """R(-x) in place of R(x): a rotation still, but the other direction (the conjugate convention)."""
    return sp.Matrix([[sp.cos(x), sp.sin(x)], [-sp.sin(x), sp.cos(x)]])


def negated_rotate(x, layout):
    return -_ROTATE(x, layout)


def other_layouts_rotate(x, layout):
    return _ROTATE(x, "interleaved" if layout == "half" else "half")


def off_by_one(dim):
    return lambda i: R.frequency(i + 1, dim)


def test_true_statements_are_proved():
    A.group_block()
    A.group_symbolic_d()
    A.complex_form()
    A.layout_symbolic_d()
    A.translation_symbolic_d()
    A.backward_symbolic_d()
    for layout in R.LAYOUTS:
        A.group_dense(4, layout)
        A.elementwise_form(4, layout)
        A.translation_dense(4, layout, length=1)
        A.backward_dense(4, layout)
    A.layout_conjugacy(8)
    A.weight_permutation(8)


def test_conjugacy_holds_for_any_block():
    # the layouts differ by a permutation whatever the block is: not a mutant of this claim
    mutate(A.layout_conjugacy, 4, blk=seed_block)()


def test_the_mutant_permutation_differs_from_P():
    # at d = 4 the permutation is its own inverse; d = 8 is the smallest size telling the directions apart
    assert R.permutation(4) == R.permutation(4).T
    assert R.permutation(8) != R.permutation(8).T


GROUP = [
    pytest.param(lambda: mutate(A.group_block, seed_block)(), id="block-seed"),
    pytest.param(lambda: mutate(A.group_block, flipped_block)(), id="block-sign-flipped"),
    pytest.param(lambda: mutate(A.group_symbolic_d, seed_block)(), id="symbolic-d-seed-block"),
    pytest.param(lambda: mutate(A.group_symbolic_d, flipped_block)(), id="symbolic-d-sign-flipped"),
    pytest.param(lambda: mutate(A.group_symbolic_d, rhs_angle=lambda m, n: (m + n) * R.THETA(R.I + 1))(),
                 id="symbolic-d-frequency-off-by-one"),
    pytest.param(lambda: mutate(A.group_symbolic_d, rhs_angle=lambda m, n: (m - n) * R.THETA(R.I))(),
                 id="symbolic-d-difference-not-sum"),
    pytest.param(lambda: mutate(A.group_dense, 4, "half", blk=seed_block)(), id="dense-seed-block"),
    pytest.param(lambda: mutate(A.group_dense, 4, "interleaved", blk=flipped_block)(), id="dense-sign-flipped"),
]

FORMS = [
    pytest.param(lambda: mutate(A.elementwise_form, 4, "interleaved", rotate=negated_rotate)(), id="elementwise-rotate-sign"),
    pytest.param(lambda: mutate(A.elementwise_form, 4, "half", rotate=other_layouts_rotate)(), id="elementwise-other-rotate"),
    pytest.param(lambda: mutate(A.elementwise_form, 4, "interleaved", rotate=other_layouts_rotate)(),
                 id="elementwise-other-rotate-interleaved"),
    pytest.param(lambda: mutate(A.elementwise_form, 4, "half", freq=off_by_one(4))(), id="elementwise-frequency-off-by-one"),
    pytest.param(lambda: mutate(A.elementwise_form, 4, "half", blk=seed_block)(), id="elementwise-seed-block"),
    pytest.param(lambda: mutate(A.elementwise_form, 4, "interleaved", blk=clockwise_block)(), id="elementwise-clockwise"),
    pytest.param(lambda: mutate(A.complex_form, sign=-1)(), id="complex-conjugate-exponent"),
    pytest.param(lambda: mutate(A.complex_form, swap=True)(), id="complex-pair-swapped"),
    pytest.param(lambda: mutate(A.complex_form, blk=seed_block)(), id="complex-seed-block"),
    pytest.param(lambda: mutate(A.complex_form, blk=flipped_block)(), id="complex-sign-flipped"),
    pytest.param(lambda: mutate(A.layout_conjugacy, 8, perm=R.permutation(8).T)(), id="conjugacy-other-direction"),
    pytest.param(lambda: mutate(A.layout_conjugacy, 4, perm=sp.eye(4))(), id="conjugacy-no-permutation"),
    pytest.param(lambda: mutate(A.layout_symbolic_d, index=lambda j, h: sp.floor(j / 2) + h * sp.Mod(j + 1, 2))(),
                 id="symbolic-d-pairs-swapped"),
    pytest.param(lambda: mutate(A.layout_symbolic_d, index=lambda j, h: sp.floor(j / 2))(), id="symbolic-d-pairs-collapsed"),
    pytest.param(lambda: mutate(A.weight_permutation, 8, perm=R.permutation(8).T)(), id="weights-other-direction"),
    pytest.param(lambda: mutate(A.weight_permutation, 4, perm=sp.eye(4))(), id="weights-not-permuted"),
]

CALCULUS = [
    pytest.param(lambda: mutate(A.translation_symbolic_d, seed_block)(), id="translation-seed-block"),
    pytest.param(lambda: mutate(A.translation_symbolic_d, flipped_block)(), id="translation-sign-flipped"),
    pytest.param(lambda: mutate(A.translation_symbolic_d, key_shift=0)(), id="translation-keys-not-shifted"),
    pytest.param(lambda: mutate(A.translation_symbolic_d, key_shift=2 * A.c)(), id="translation-keys-shifted-twice"),
    pytest.param(lambda: mutate(A.translation_dense, 4, "half", length=1, key_shift=0)(), id="translation-dense-keys-stale"),
    pytest.param(lambda: mutate(A.translation_dense, 2, "interleaved", blk=seed_block)(), id="translation-dense-seed-block"),
    pytest.param(lambda: mutate(A.backward_symbolic_d, rhs_sign=1)(), id="backward-forward-rotation"),
    pytest.param(lambda: mutate(A.backward_symbolic_d, seed_block)(), id="backward-seed-block"),
    pytest.param(lambda: mutate(A.backward_dense, 4, "half", vjp=lambda J, v: J * v)(), id="backward-jacobian-not-transposed"),
    pytest.param(lambda: mutate(A.backward_dense, 4, "interleaved", vjp=lambda J, v: J.T * J * v)(),
                 id="backward-extra-factor"),
    pytest.param(lambda: mutate(A.backward_dense, 4, "half", rhs_sign=1)(), id="backward-dense-forward-rotation"),
    pytest.param(lambda: mutate(A.backward_dense, 4, "half", rotate=other_layouts_rotate)(), id="backward-other-rotate"),
    pytest.param(lambda: mutate(A.backward_dense, 4, "interleaved", blk=seed_block)(), id="backward-seed-block-dense"),
]


@pytest.mark.parametrize("mutant", GROUP + FORMS + CALCULUS)
def test_rope_algebra_mutants_are_not_proved(mutant):
    with pytest.raises(ProofFailure):
        mutant()


def test_half_index_matches_pemath_convert_layout():
    # the closed form sigma(j) used by the symbolic-d step agrees with the numeric layout conversion
    from pemath import rope

    for dim in (2, 4, 8, 16, 34):
        x = np.arange(dim, dtype=float)
        out = rope.convert_layout(x, src="interleaved", dst="half")
        sigma = [int(A.half_index(sp.Integer(j), sp.Integer(dim // 2))) for j in range(dim)]
        assert [out[s] for s in sigma] == list(x)
