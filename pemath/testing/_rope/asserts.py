"""The oracle's asserts: one line in a kernel's test that says "correct", or explains why not."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._validate import check_rotary_dim
from ...rope.spec import NoRope, hf_seq_len
from .._core.arrays import as_host, check_shape, rope_case, user_tolerance
from .nope import assert_no_rope
from .diagnose import rope_message
from .._core.report import compare
from .tolerance import rope_bound
from .._core.tolerance import unit_roundoff
from .certain import certain_rope_pass
from .honest import recognised
from .exact import Summary, exact_summary
from .._core.vacuity import warn_vacuous
from .vacuity import rope_may_be_vacuous, rope_vacuous

__all__ = ["assert_rope_close"]


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
    from ... import rope

    user = user_tolerance(rtol, atol)
    if isinstance(spec, NoRope):  # a layer without RoPE: the output must be x
        given = {"layout": layout, "base": base, "rotary_dim": rotary_dim, "scaling": scaling}
        if any(v is not None for v in given.values()):
            raise TypeError("assert_rope_close: pass spec= or the keywords it replaces, not both; got spec="
                            f"{spec!r} and " + ", ".join(f"{k}={v!r}" for k, v in given.items() if v is not None))
        assert_no_rope(actual, x, positions, spec, user)
        return
    from ...rope.spec import resolve

    if spec is None and rotary_dim is not None and hasattr(x, "shape") and len(x.shape) >= 1:
        check_rotary_dim(rotary_dim, int(x.shape[-1]), dim_name="x.shape[-1]")
    # the spec, resolved once here; everything below receives it
    spec = resolve(spec, "assert_rope_close", layout=layout, base=base, rotary_dim=rotary_dim, scaling=scaling)
    # transformers' forward length where the scaling depends on it (dynamic NTK, LongRoPE) and none was given
    seq_len = hf_seq_len(spec.scaling, positions, seq_len)
    if spec.is_multi_axis or spec.out_layout is not None:  # M-RoPE, axial, or a change of layout on output
        from .multi_axis import assert_multi_axis

        assert_multi_axis(actual, x, positions, spec, seq_len, user)
        return
    if user is None and certain_rope_pass(actual, x, positions, seq_len, spec=spec):
        return  # decided in float32 with a proof that the exact comparison below passes (certain)
    case = rope_case(x, positions, seq_len=seq_len, spec=spec, where="assert_rope_close", widen=False)
    a, t_name = as_host("actual", actual, widen=False)
    check_shape(a, case.shape, "x")
    a2 = case.to_case_order(a.reshape(case.x2.shape))
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
        return  # an honest computation outside the bound, reproduced exactly (honest)
    raise AssertionError(rope_message(case, a2, summary, u_t=u_t, t_name=t_name, user=user))
