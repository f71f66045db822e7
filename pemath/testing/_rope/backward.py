r"""The oracle for RoPE's backward pass: ``dx`` from ``dy`` is the transposed rotation.

RoPE is linear in ``x``: per pair, :math:`y = a\,R(p\,\theta_i)\,x` with :math:`R` a
rotation and :math:`a` the attention factor. Its gradient with respect to ``x`` is the
transpose, :math:`dx = a\,R(p\,\theta_i)^\top dy = a\,R(-p\,\theta_i)\,dy`: RoPE of
``dy`` at the negated positions. The positions themselves carry no gradient (they are
integers), and the frequencies are constants.

So the backward assert is the forward one at :math:`-p`, and its tolerance is the forward
derivation unchanged: every term depends on :math:`|p\,\theta_i|` (and on
:math:`|\mathrm{fl}_{32}(p) - p|`, which is symmetric), and an honest backward kernel
performs the same operations with the sign of sin flipped. A scaling whose frequencies
depend on the sequence length (dynamic NTK, LongRoPE) is evaluated at the length of the
forward positions. The report is the forward one at :math:`-p`; its first line says so,
and a backward kernel that applied the forward rotation instead of its transpose is named
in those words.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ... import _compat
from ...rope.spec import NoRope, Spec, hf_seq_len

__all__ = ["assert_rope_backward_close"]

_FORWARD = "the inverse rotation (angle -pθ: the sign of sin flipped)"


def _negated(positions: Any) -> Any:
    """``-positions``; a value that cannot be negated is passed on as it is, for the forward assert's validation to
    name (booleans, strings, ...)."""
    try:
        if _compat.is_array(positions):
            host = np.asarray(_compat.to_numpy(positions))
        elif isinstance(positions, (bool, np.bool_)):
            return positions
        elif isinstance(positions, (int, float, np.integer, np.floating)):
            return positions if isinstance(positions, (int, np.integer)) and abs(int(positions)) > 2**53 else \
                -positions
        else:
            host = np.asarray(positions)
        if host.dtype.kind not in "iuf":
            return positions
        if host.dtype.kind in "iu" and host.size and int(np.max(host)) > 2**53:
            return positions  # beyond what the forward assert takes: its validation refuses it, named
        return -host.astype(np.int64) if host.dtype.kind in "iu" else -host
    except (TypeError, ValueError):
        return positions


def assert_rope_backward_close(
    actual: Any,
    dy: Any,
    positions: Any,
    *,
    layout: str | None = None,
    base: float | None = None,
    rotary_dim: int | None = None,
    scaling: Any = None,
    seq_len: int | None = None,
    rtol: float | None = None,
    atol: float | None = None,
    spec: Any = None,
) -> None:
    r"""Assert that ``actual`` is the gradient of RoPE with respect to its input, or explain what it is.

    For ``y = RoPE(x, positions)`` and an upstream gradient ``dy``, the gradient with
    respect to ``x`` is the transposed rotation, per pair

    .. math:: dx = a\,R(p\,\theta_i)^\top dy = a\,R(-p\,\theta_i)\, dy ,

    that is :func:`pemath.rope.apply` of ``dy`` at the negated positions (``inverse=True``).
    The derived tolerance is the forward one (:func:`pemath.testing.rope_tolerance`): it
    depends on :math:`|p\,\theta_i|` only. Length-dependent scalings use the length of the
    forward ``positions`` (or ``seq_len``).

    On failure the report is :func:`assert_rope_close`'s at the negated positions (its
    first line says so): a position read there as :math:`-p + c` is a backward pass that
    used :math:`p - c`, and a backward kernel that applied the forward rotation
    :math:`R(p\,\theta_i)` instead of its transpose is named so.

    Parameters
    ----------
    actual : array
        The backward kernel's ``dx``, the shape of ``dy``.
    dy : array
        The upstream gradient (any floating dtype; its exact values are used).
    positions, layout, base, rotary_dim, scaling, seq_len, rtol, atol, spec
        As in :func:`assert_rope_close`, for the forward pass.

    Examples
    --------
    >>> import numpy as np
    >>> from pemath import rope
    >>> from pemath.testing import assert_rope_backward_close
    >>> dy = np.random.default_rng(0).standard_normal((8, 64)).astype(np.float32)
    >>> pos = np.arange(8)
    >>> assert_rope_backward_close(rope.apply(dy, pos, layout="half", inverse=True), dy, pos, layout="half")
    >>> try:  # the forward rotation where its transpose belongs
    ...     assert_rope_backward_close(rope.apply(dy, pos, layout="half"), dy, pos, layout="half")
    ... except AssertionError as e:
    ...     print(next(line for line in str(e).splitlines() if line.startswith("Diagnosis")))
    Diagnosis: the output matches the forward rotation R(pθ) instead of its transpose R(pθ)^T = R(-pθ) (the sign of sin not flipped) (max error within tolerance)
    """
    __tracebackhide__ = True
    from .asserts import assert_rope_close

    if not isinstance(spec, NoRope):
        seq_len = hf_seq_len(spec.scaling if isinstance(spec, Spec) else scaling, positions, seq_len)
    try:
        assert_rope_close(actual, dy, _negated(positions), layout=layout, base=base, rotary_dim=rotary_dim,
                          scaling=scaling, seq_len=seq_len, rtol=rtol, atol=atol, spec=spec)
    except AssertionError as exc:
        text = str(exc).replace(_FORWARD, "the forward rotation R(pθ) instead of its transpose R(pθ)^T = R(-pθ) "
                                          "(the sign of sin not flipped)")
        raise AssertionError(
            "Backward pass: dx must be the transposed rotation R(pθ)^T dy = RoPE(dy, -p); what follows compares with "
            "RoPE at the negated positions -p (a position read as -p + c is a backward pass that used p - c).\n"
            + text) from None
