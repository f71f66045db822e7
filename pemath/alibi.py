r"""ALiBi: attention with linear biases (Press, Smith and Lewis, 2022).

Each head ``a`` adds :math:`-m_a \cdot (i - j)` to the attention logit of query ``i``
and key ``j``; the slopes :math:`m_a` are a fixed geometric sequence. Projects write the
same bias three ways, which agree after the softmax but not before it:

``"causal"``
    :math:`-m\,(i - j)` for :math:`j \le i`, :math:`-\infty` above the diagonal (the
    paper's figure 3).
``"shifted"``
    :math:`m\,j` for :math:`j \le i`, :math:`-\infty` above: the causal bias plus the
    per-row constant :math:`m\,i`, which the softmax ignores. The reference code
    (ofirpress/attention_with_linear_biases, a fairseq fork) adds the row vector
    ``slopes * arange(maxpos)`` to its ``triu(-inf, 1)`` future mask; HF BLOOM's
    ``build_alibi_tensor`` adds ``slopes * j`` with ``j`` counted over non-padding keys
    and masks separately. HF MPT's ``build_mpt_alibi_tensor`` uses another row constant,
    :math:`m\,(j - (L - 1))`.
``"symmetric"``
    :math:`-m\,|i - j|` everywhere (bidirectional). x-transformers'
    ``AlibiPositionalBias`` builds this (queries at ``k_len - q_len .. k_len - 1``) and
    applies its causal mask separately, which gives ``"causal"`` on the visible entries.

In float16 or bfloat16 the shifted form grows with the sequence length and loses the
small differences between neighbouring keys; the causal form does not.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction
from typing import Any

import mpmath
import numpy as np

from . import _compat
from ._validate import MAX_LEN, as_float_array, check_choice, check_int, check_size, show

__all__ = ["FORMS", "slopes", "bias"]

FORMS = ("causal", "shifted", "symmetric")

_MAX_EXACT_F64 = 2**53


def _exponents(num_heads: int) -> list[Fraction]:
    """The base-2 exponents of the reference slopes."""
    c = 1 << (num_heads.bit_length() - 1)  # the largest power of two <= num_heads
    exps = [Fraction(-8 * (k + 1), c) for k in range(c)]
    # Every other slope of 2c heads: 2**(-8(2j+1)/(2c)), for the num_heads - c (< c) extra heads.
    exps += [Fraction(-8 * (2 * j + 1), 2 * c) for j in range(num_heads - c)]
    return exps


def _pow2(e: Fraction) -> float:
    if e.denominator == 1:
        return math.ldexp(1.0, int(e))  # exact
    with mpmath.workdps(40):
        return float(mpmath.power(2, mpmath.mpf(e.numerator) / e.denominator))


@functools.lru_cache(maxsize=64)
def _slopes(num_heads: int) -> np.ndarray:
    out = np.array([_pow2(e) for e in _exponents(num_heads)], dtype=np.float64)
    out.setflags(write=False)
    return out


def slopes(num_heads: int) -> np.ndarray:
    r"""The ALiBi head slopes of the reference code, each correctly rounded to float64.

    For :math:`n` a power of two:

    .. math:: m_k = 2^{-8(k+1)/n}, \qquad k = 0, \dots, n - 1

    Otherwise, with :math:`c` the largest power of two below :math:`n`: the :math:`c`
    slopes of :math:`c` heads, then every other slope of :math:`2c` heads,
    :math:`2^{-8(2j+1)/(2c)}` for :math:`j = 0, \dots, n - c - 1` (the reference
    ``get_slopes``; HF BLOOM's ``_get_alibi_slopes`` and MPT's interleaving with
    ``alibi_bias_max=8`` give the same list). The reference multiplies floats
    (``start * ratio**i``) and BLOOM raises a float32 base to integer powers; these
    values are the float64 nearest the exact powers of two (exact where the exponent is
    an integer).

    Parameters
    ----------
    num_heads : int
        ``>= 1``.

    Returns
    -------
    numpy.ndarray
        float64, shape ``(num_heads,)``, read-only, each in :math:`[2^{-8}, 1)`.

    Examples
    --------
    >>> from pemath import alibi
    >>> alibi.slopes(8) * 256
    array([128.,  64.,  32.,  16.,   8.,   4.,   2.,   1.])
    >>> alibi.slopes(6) * 256
    array([ 64.,  16.,   4.,   1., 128.,  32.])
    """
    return _slopes(check_size("num_heads", num_heads, minimum=1))


def _namespace(xp: Any, device: Any) -> Any:
    if xp is None:
        if device not in (None, "cpu"):
            raise ValueError(f"device must be None or 'cpu' when xp is None (NumPy), got {device!r}")
        return _compat.namespace(np.empty(0)), "cpu"
    if not (hasattr(xp, "asarray") and hasattr(xp, "arange")):
        raise TypeError(f"xp must be an array namespace (numpy, cupy, torch, array_api_strict, ...), got {show(xp)}")
    try:
        probe = xp.asarray(0.0) if device is None else xp.asarray(0.0, device=device)
    except Exception as exc:
        raise ValueError(f"device {device!r} is not a device of {getattr(xp, '__name__', xp)}: {exc}") from exc
    return _compat.namespace(probe), _compat.device_of(probe)


def bias(
    heads: Any,
    q_len: int,
    k_len: int,
    *,
    form: str | None = None,
    offset: int | None = None,
    xp: Any = None,
    device: Any = None,
    dtype: Any = None,
) -> Any:
    r"""The ALiBi bias added to the attention logits, shape ``(heads, q_len, k_len)``.

    Query ``i`` sits at position :math:`q_i = \text{offset} + i` and key ``j`` at
    :math:`j`; with slope :math:`m` of the head:

    .. math::

        \text{causal:}\quad B_{ij} = \begin{cases} -m\,(q_i - j) & j \le q_i \\
            -\infty & j > q_i \end{cases}
        \qquad
        \text{shifted:}\quad B_{ij} = \begin{cases} m\,j & j \le q_i \\
            -\infty & j > q_i \end{cases}
        \qquad
        \text{symmetric:}\quad B_{ij} = -m\,|q_i - j|

    "causal" and "shifted" differ by :math:`m\,q_i`, constant along each row, so they give
    the same softmax. Which project writes which form: see the module docstring.

    Parameters
    ----------
    heads : int or sequence of float
        The number of heads (the reference :func:`slopes`), or the slopes themselves
        (a 1-D list or array of finite reals, e.g. learned or re-scaled slopes).
    q_len, k_len : int
        ``>= 1``.
    form : {"causal", "shifted", "symmetric"}
        Required.
    offset : int, optional
        The position of the first query. Default ``k_len - q_len``: the queries are the
        last ``q_len`` positions of the keys (decoding with a KV cache). For the masked
        forms it must be ``>= 0``, so that every query sees at least key 0 (a row of
        only :math:`-\infty` would give NaN after the softmax).
    xp, device : optional
        The array namespace and device of the result (default NumPy on the CPU).
    dtype : optional
        A real floating dtype of the namespace: the float64 result is cast once, at the end.

    Returns
    -------
    array
        float64 (or ``dtype``), shape ``(heads, q_len, k_len)``.

    Examples
    --------
    >>> from pemath import alibi
    >>> alibi.bias([0.5], 3, 3, form="causal")
    array([[[ 0. , -inf, -inf],
            [-0.5,  0. , -inf],
            [-1. , -0.5,  0. ]]])
    >>> alibi.bias([0.5], 1, 3, form="shifted")  # one query at position 2 (a KV cache)
    array([[[0. , 0.5, 1. ]]])
    >>> alibi.bias(8, 4, 4, form="symmetric").shape
    (8, 4, 4)
    """
    if form is None:
        raise TypeError(
            "form is required: 'causal' is -m*(i-j) with -inf above the diagonal (the paper); "
            "'shifted' is m*j with -inf above the diagonal (the reference code, BLOOM; same "
            "softmax); 'symmetric' is -m*|i-j| (bidirectional, x-transformers)"
        )
    form = check_choice("form", form, FORMS)
    if isinstance(heads, (bool, np.bool_)):
        raise TypeError(f"heads must be a number of heads (int) or a 1-D sequence of slopes, got {show(heads)}")
    if isinstance(heads, (int, np.integer)):
        m = slopes(check_size("heads", heads, minimum=1))
    else:
        m = as_float_array("heads", heads)
        if m.shape[0] == 0:
            raise ValueError("heads must hold at least one slope, got an empty sequence")
    q_len = check_size("q_len", q_len, minimum=1, maximum=MAX_LEN)
    k_len = check_size("k_len", k_len, minimum=1, maximum=MAX_LEN)
    if offset is None:
        offset = k_len - q_len
        if form != "symmetric" and offset < 0:
            raise ValueError(
                f"q_len ({q_len}) > k_len ({k_len}): with the default offset k_len - q_len the first "
                f"queries see no key under form={form!r}; pass offset >= 0"
            )
    else:
        lo = 0 if form != "symmetric" else -_MAX_EXACT_F64
        offset = check_int("offset", offset, minimum=lo, maximum=_MAX_EXACT_F64 - q_len)
    xp, device = _namespace(xp, device)
    if dtype is not None and not _compat.is_real_floating(xp, dtype):
        raise TypeError(f"dtype must be a real floating dtype of {xp.__name__}, got {dtype!r}")
    _check_range(m, q_len, k_len, offset, form, dtype, xp)
    wdt = _compat.working_dtype(xp, device)
    mm = xp.asarray(m.tolist(), dtype=wdt, device=device)[:, None, None]
    qpos = xp.arange(q_len, dtype=wdt, device=device)[:, None] + float(offset)
    kpos = xp.arange(k_len, dtype=wdt, device=device)[None, :]
    rel = kpos - qpos  # j - q_i, exact: integers below 2**53
    if form == "symmetric":
        return _cast(mm * -xp.abs(rel)[None, ...] + 0.0, dtype, xp)  # + 0.0: no -0.0 on the diagonal
    if form == "causal":
        out = mm * rel[None, ...]
    else:
        out = mm * xp.broadcast_to(kpos, (q_len, k_len))[None, ...]
    neg_inf = xp.asarray(-math.inf, dtype=wdt, device=device)
    out = xp.where((rel > 0)[None, ...], neg_inf, out)
    return _cast(out, dtype, xp)


def _check_range(m: np.ndarray, q_len: int, k_len: int, offset: int, form: str, dtype: Any, xp: Any) -> None:
    """Refuse slopes whose biases overflow float64 (or ``dtype``): -inf would be silent garbage."""
    top = max(abs(offset), abs(offset + q_len - 1)) + k_len  # bounds every |q_i - j| and j
    big = float(np.max(np.abs(m))) * top
    if not big < 1.7976931348623157e308:
        raise ValueError(
            f"heads holds slopes up to {float(np.max(np.abs(m)))!r}: times distances up to {top} the bias "
            "overflows float64; pass smaller slopes"
        )
    if dtype is None:
        return
    try:
        fmax = float(xp.finfo(dtype).max)
    except (TypeError, ValueError, AttributeError):
        try:
            import ml_dtypes

            fmax = float(ml_dtypes.finfo(np.dtype(dtype)).max)
        except (ImportError, TypeError, ValueError):
            return
    if big > fmax:
        raise ValueError(
            f"dtype {dtype!r} holds magnitudes up to {fmax}, but the biases reach up to {big!r} (slopes up to "
            f"{float(np.max(np.abs(m)))!r} times distances up to {top}); pass a wider dtype"
        )


def _cast(out: Any, dtype: Any, xp: Any) -> Any:
    return out if dtype is None else xp.astype(out, dtype)
