"""The oracle's asserts: one line in a kernel's test that says "correct", or explains why not."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validate import check_real
from ..rope.spec import NoRope, Spec, hf_seq_len
from ._arrays import as_host, rope_case, sinusoidal_case
from ._nope import assert_no_rope
from ._diagnose import rope_message
from ._report import compare
from ._tolerance import rope_bound, sinusoidal_bound, unit_roundoff
from ._certain import certain_rope_pass
from ._honest import recognised
from ._exact import Summary, exact_summary
from ._vacuity import rope_may_be_vacuous, rope_vacuous, sinusoidal_vacuous, warn_vacuous

__all__ = ["assert_rope_close", "assert_sinusoidal_close", "assert_alibi_close", "assert_t5_buckets_equal"]


def user_tolerance(rtol: Any, atol: Any) -> tuple[float, float] | None:
    """``(rtol, atol)`` given by the user (both or neither, as torch.testing), or None."""
    if rtol is None and atol is None:
        return None
    if rtol is None or atol is None:
        raise ValueError(
            f"rtol and atol must be given together or both omitted (the default is derived), got rtol={rtol!r}, "
            f"atol={atol!r}"
        )
    return check_real("rtol", rtol, nonnegative=True), check_real("atol", atol, nonnegative=True)


def _check_shape(actual: np.ndarray, shape: tuple[int, ...], what: str) -> None:
    if tuple(actual.shape) != tuple(shape):
        raise ValueError(f"actual has shape {tuple(actual.shape)}, but {what} has shape {tuple(shape)}")


def assert_rope_close(
    actual: Any,
    x: Any,
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
    r"""Assert that ``actual`` is RoPE of ``x`` at ``positions``, or explain what it is instead.

    The truth is :func:`pemath.rope.apply` of the given ``x`` in float64 (``x`` may be of
    any floating dtype: its exact values are used). Each element must satisfy
    :math:`|\text{actual} - \text{truth}| \le \tau`, where the default :math:`\tau` is derived
    from the unit roundoff of ``actual``'s dtype, the magnitude of the element's pair in
    ``x`` and its phase :math:`p\,\theta_i` (:func:`pemath.testing.rope_tolerance`): an
    honest float32, float16 or bfloat16 kernel passes at any position, a bug fails.

    On failure the ``AssertionError`` reports the mismatch count, the worst element
    (index, actual, expected, error, tolerance, its position and pair), and a diagnosis:
    which known bug (other layout, shifted positions, inverse rotation, another base,
    frequencies over the head dim, the attention factor missing or doubled, the phase
    computed in bfloat16, ...) reproduces the output.

    Parameters
    ----------
    actual : array
        The kernel's output: NumPy (ml_dtypes bfloat16 included), CuPy, torch (bfloat16
        and float16 included), JAX, MLX (read on the host, exactly; bfloat16 included);
        same shape as ``x``.
    x : array
        The kernel's input.
    positions
        As in :func:`pemath.rope.apply`: broadcast against ``x.shape[:-1]``.
    layout : {"interleaved", "half"}
        Required.
    base, rotary_dim, scaling, seq_len
        As in :func:`pemath.rope.apply`.
    rtol, atol : float, optional
        Both or neither: :math:`\tau = \text{atol} + \text{rtol}\,|\text{truth}|` instead of
        the derived tolerance.
    spec : pemath.rope.Spec, optional
        Instead of ``layout``, ``base``, ``rotary_dim`` and ``scaling`` (giving both
        raises ``TypeError``); e.g. ``rope.from_hf_config(config)``. M-RoPE specs take
        positions with their component axis first (HF's ``position_ids[:, :, None, :]``),
        axial specs with their coordinates last (``(..., n_axes)``), and specs with
        ``out_layout`` (DeepSeek-V3) an output in that layout. Each pair is judged at its
        own component's position; a failure measures which component drove each pair and
        names the structural mistakes (section layout, text positions for image tokens,
        axes swapped, grouping, frequencies, pair layout, out_layout not applied).

    Warns
    -----
    pemath.VacuousToleranceWarning
        When the derived tolerance of some elements admits every value they could take
        (:math:`\tau \ge |a|\rho + |\text{truth}|` with :math:`\rho` the magnitude of
        the pair: very long positions, where an honest float32 phase is uncertain by
        radians): those elements are not checked, and the warning says from which
        position.

    Raises
    ------
    AssertionError
        With the report described above.
    TypeError, ValueError
        For invalid arguments (e.g. ``actual`` of another shape than ``x``).

    Examples
    --------
    >>> import numpy as np
    >>> from pemath import rope
    >>> from pemath.testing import assert_rope_close
    >>> x = np.random.default_rng(0).standard_normal((16, 64)).astype(np.float32)
    >>> pos = np.arange(16)
    >>> assert_rope_close(rope.apply(x, pos, layout="half"), x, pos, layout="half")
    >>> try:
    ...     assert_rope_close(rope.apply(x, pos + 1, layout="half"), x, pos, layout="half")
    ... except AssertionError as e:
    ...     print(str(e).splitlines()[-1])
    Diagnosis: the output matches positions shifted by +1 (positions counted from 1) (max error within tolerance)
    """
    __tracebackhide__ = True
    from .. import rope

    user = user_tolerance(rtol, atol)
    if isinstance(spec, NoRope):  # a layer without RoPE: the output must be x
        given = {"layout": layout, "base": base, "rotary_dim": rotary_dim, "scaling": scaling}
        if any(v is not None for v in given.values()):
            raise TypeError("assert_rope_close: pass spec= or the keywords it replaces, not both; got spec="
                            f"{spec!r} and " + ", ".join(f"{k}={v!r}" for k, v in given.items() if v is not None))
        assert_no_rope(actual, x, positions, spec, user)
        return
    # transformers' forward length where the scaling depends on it (dynamic NTK, LongRoPE) and none was given
    seq_len = hf_seq_len(spec.scaling if isinstance(spec, Spec) else scaling, positions, seq_len)
    if getattr(spec, "is_multi_axis", False) or getattr(spec, "out_layout", None) is not None:
        # M-RoPE, axial, or a change of layout on output (a non-Spec spec is refused by rope_case below)
        from ..rope.spec import resolve
        from ._multi_axis import assert_multi_axis

        spec = resolve(spec, "assert_rope_close", layout=layout, base=base, rotary_dim=rotary_dim, scaling=scaling)
        assert_multi_axis(actual, x, positions, spec, seq_len, user)
        return
    if user is None and certain_rope_pass(actual, x, positions, seq_len, spec=spec, layout=layout, base=base,
                                          rotary_dim=rotary_dim, scaling=scaling):
        return  # decided in float32 with a proof that the exact comparison below passes (_certain)
    case = rope_case(x, positions, layout=layout, base=base, rotary_dim=rotary_dim, scaling=scaling,
                     seq_len=seq_len, spec=spec, where="assert_rope_close", widen=False)
    a, t_name = as_host("actual", actual, widen=False)
    _check_shape(a, case.shape, "x")
    a2 = a.reshape(case.x2.shape)
    u_t = unit_roundoff(t_name)
    if user is None and rope_may_be_vacuous(case, u_t):  # whole arrays: the elements that cannot fail are named
        case = case.widened()
        # positions as given: rope.apply's table then has one row per distinct position, not per row of x
        expected = np.asarray(rope.apply(case.x2.reshape(case.shape), case.given_pos, **case.kwargs()))
        expected = expected.reshape(a2.shape)
        tol = rope_bound(case.x2, case.pos, case.freq, case.factor, case.layout, case.r, u_t, case.cfreq)
        vacuous, pair = rope_vacuous(case, expected, tol, u_t)
        warn_vacuous(vacuous, pair, case.pos, case.freq, "the RoPE output", case.shape)
        summary = Summary.of(a2, expected, tol, compare(a2.astype(np.float64), expected, tol))
    else:
        summary = exact_summary(case, a2, u_t, user)
    if summary.passed:
        return
    if user is None and recognised(case, a2, u_t, summary.row_ratio) is not None:
        return  # an honest computation outside the bound, reproduced exactly (_honest)
    raise AssertionError(rope_message(case, a2, summary, u_t=u_t, t_name=t_name, user=user))


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
    from .. import sinusoidal
    from ._diagnose_tables import sinusoidal_message

    user = user_tolerance(rtol, atol)
    case = sinusoidal_case(positions, dim, base=base, convention=convention)
    a, t_name = as_host("actual", actual)
    _check_shape(a, case.shape + (case.dim,), "positions.shape + (dim,)")
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
    from ._diagnose_tables import alibi_check

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
    from ._diagnose_tables import t5_check

    t5_check(actual, relative_position, bidirectional=bidirectional, num_buckets=num_buckets,
             max_distance=max_distance, exact=exact)
