"""The oracle's asserts for the tables: sinusoidal encodings, ALiBi biases, T5 buckets."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._core.arrays import as_host, check_shape, sinusoidal_case, user_tolerance
from .._core.report import compare
from .._core.vacuity import warn_vacuous
from .vacuity import sinusoidal_vacuous
from .._core.tolerance import unit_roundoff
from .tolerance import sinusoidal_bound

__all__ = ["assert_sinusoidal_close", "assert_alibi_close", "assert_t5_buckets_equal"]


def assert_sinusoidal_close(
    actual: Any,
    positions: Any,
    dim: int,
    *,
    base: float = 10000.0,
    convention: str | None = None,
    rtol: float | None = None,
    atol: float | None = None,
) -> None:
    r"""Assert that ``actual`` is the sinusoidal encoding of ``positions``, or explain what it is.

    The truth is :func:`pemath.sinusoidal.encode` in float64; the default tolerance
    (:func:`pemath.testing.sinusoidal_tolerance`) is derived from ``actual``'s dtype and
    each entry's phase :math:`p\,\omega_i`. On failure the message names the worst entry
    (position, frequency index, sin or cos) and diagnoses the other conventions,
    positions shifted (by one, by fairseq's ``padding_idx + 1``, by an estimated
    constant), and sin and cos swapped.

    Parameters
    ----------
    actual : array
        Shape ``positions.shape + (dim,)``: NumPy, CuPy, torch, JAX or MLX (read on the host,
        exactly).
    positions, dim, base, convention
        As in :func:`pemath.sinusoidal.encode`.
    rtol, atol : float, optional
        Both or neither.

    Warns
    -----
    pemath.VacuousToleranceWarning
        When the derived tolerance of some entries admits every value in
        :math:`[-1, 1]` (:math:`\tau \ge 1 + |\text{truth}|`, at very long positions):
        those entries are not checked.

    Examples
    --------
    >>> import numpy as np
    >>> from pemath import sinusoidal
    >>> from pemath.testing import assert_sinusoidal_close
    >>> pe = sinusoidal.encode(np.arange(8), 16, convention="concat", dtype=np.float32)
    >>> assert_sinusoidal_close(pe, np.arange(8), 16, convention="concat")
    """
    __tracebackhide__ = True
    from ... import sinusoidal
    from .diagnose import sinusoidal_message

    user = user_tolerance(rtol, atol)
    case = sinusoidal_case(positions, dim, base=base, convention=convention)
    a, t_name = as_host("actual", actual)
    check_shape(a, case.shape + (case.dim,), "positions.shape + (dim,)")
    a2 = a.reshape(-1, case.dim)
    u_t = unit_roundoff(t_name)
    expected = np.asarray(sinusoidal.encode(case.pos, case.dim, base=case.base, convention=case.convention))
    if user is None:
        tol = sinusoidal_bound(case.pos, case.freq, case.base, case.dim, case.convention, u_t)
        vacuous, column = sinusoidal_vacuous(case, expected, tol)
        warn_vacuous(vacuous, column, case.pos, case.freq, "the sinusoidal table", case.shape + (case.dim,))
    else:
        tol = user[1] + user[0] * np.abs(expected)
    verdict = compare(a2, expected, tol)
    if verdict.passed:
        return
    raise AssertionError(sinusoidal_message(case, a2, expected, tol, verdict, u_t=u_t, t_name=t_name, user=user))


def assert_alibi_close(
    actual: Any,
    heads: Any,
    q_len: int,
    k_len: int,
    *,
    form: str | None = None,
    offset: int | None = None,
    rtol: float | None = None,
    atol: float | None = None,
) -> None:
    r"""Assert that ``actual`` is the ALiBi bias, or explain what it is.

    The truth is :func:`pemath.alibi.bias` (same ``heads``, ``q_len``, ``k_len``,
    ``form``, ``offset``) in float64. Unmasked entries must be within the derived
    tolerance (:func:`pemath.testing.alibi_tolerance`) or ``atol + rtol |truth|``. A
    masked entry (``-inf`` in the truth) passes when ``actual`` is ``-inf`` or a finite
    mask value at least :math:`10^4` below the largest bias of its row (its softmax
    weight, :math:`e^{-10^4}`, is 0 in every dtype: HF's ``finfo.min`` and BERT's -10000
    masks pass). On failure the diagnosis tries the other forms, the bias without its
    causal mask (BLOOM adds the mask separately), the sign flipped, the slopes in reverse
    order, the naive slopes :math:`2^{-8(k+1)/n}` for a head count that is not a power
    of two, and queries placed at positions ``0..q_len-1`` instead of the last ``q_len``.

    Parameters
    ----------
    actual : array
        Shape ``(heads, q_len, k_len)``: NumPy, CuPy, torch, JAX or MLX (read on the host,
        exactly).
    heads, q_len, k_len, form, offset
        As in :func:`pemath.alibi.bias` (``heads``: the number of heads or the slopes).
    rtol, atol : float, optional
        Both or neither.

    Examples
    --------
    >>> from pemath import alibi
    >>> from pemath.testing import assert_alibi_close
    >>> assert_alibi_close(alibi.bias(8, 4, 4, form="causal"), 8, 4, 4, form="causal")
    """
    __tracebackhide__ = True
    from .diagnose import alibi_check

    alibi_check(actual, heads, q_len, k_len, form=form, offset=offset, user=user_tolerance(rtol, atol))


def assert_t5_buckets_equal(
    actual: Any,
    relative_position: Any,
    *,
    bidirectional: bool = True,
    num_buckets: int = 32,
    max_distance: int = 128,
    exact: bool = False,
) -> None:
    r"""Assert that ``actual`` holds T5's bucket of each relative position, exactly.

    The truth is :func:`pemath.t5.bucket` (T5's float32 formula by default, the exact
    floor with ``exact=True``). Buckets are integers: no tolerance. On failure the
    message reports the mismatch count and the first mismatched element (index, relative
    position, actual and expected bucket) and diagnoses the relative position taken as
    query − key instead of key − query, the ``bidirectional`` flag flipped, the other
    floor (float32 vs exact), and another ``max_distance``.

    Parameters
    ----------
    actual : array
        Integers, the shape of ``relative_position``: NumPy, CuPy, torch, JAX or MLX.
    relative_position, bidirectional, num_buckets, max_distance, exact
        As in :func:`pemath.t5.bucket` (``key - query``).

    Examples
    --------
    >>> import numpy as np
    >>> from pemath import t5
    >>> from pemath.testing import assert_t5_buckets_equal
    >>> rel = np.arange(-300, 300)
    >>> assert_t5_buckets_equal(t5.bucket(rel), rel)
    """
    __tracebackhide__ = True
    from .diagnose import t5_check

    t5_check(actual, relative_position, bidirectional=bidirectional, num_buckets=num_buckets,
             max_distance=max_distance, exact=exact)
