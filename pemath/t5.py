r"""T5's relative position buckets and the bias looked up from them (Raffel et al., 2020).

T5 (Mesh TensorFlow's ``_relative_position_bucket``, copied by HF as
``T5Attention._relative_position_bucket``) maps the relative position
``key - query`` to one of ``num_buckets`` buckets: exact buckets for small distances,
logarithmically wider ones up to ``max_distance``, one last bucket beyond. Each head
learns one scalar per bucket (HF's ``relative_attention_bias``, a
``(num_buckets, heads)`` embedding), added to the attention logits.

The logarithmic buckets are a floor of a logarithm, computed by T5 and HF in float32.
Near the bucket boundaries the float32 result can differ from the exact floor; see
:func:`bucket` for what pemath computes and where the two disagree.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import mpmath
import numpy as np

from . import _compat
from ._validate import MAX_LEN, as_int64, as_real_table, check_bool, check_int, check_size

__all__ = ["bucket", "bias", "thresholds"]

_MAX_EXACT_F64 = 2**53
_INT64_MIN = -(2**63)

#: The most buckets accepted (T5 uses 32, the largest models a few hundred): the exact
#: thresholds cost a big-integer search per bucket.
MAX_BUCKETS = 4096


# ---------------------------------------------------------------------------------------
# The bucket boundaries, computed once per configuration on the host.
#
# For a distance n >= max_exact the bucket is max_exact + min(K(n), e - 1), where
# e = half - max_exact and K(n) = floor(e * log(n / me) / log(md / me)) is non-decreasing
# in n. So the bucket is fixed by the thresholds t_k = min{n : K(n) >= k}, k = 1 .. e-1:
# K(n) (capped at e - 1) is the number of thresholds <= n, a searchsorted on the device.
# ---------------------------------------------------------------------------------------


def _least(ok, start: int, me: int) -> int:
    """min{n > me : ok(n)} for a non-decreasing predicate with ok(me) false, searched from ``start``.

    Gallops away from ``start`` (doubling steps) until the answer is bracketed, then
    bisects: about 2 log2(distance) evaluations, where a walk one by one would never end
    for max_distance ~ 2**60.
    """
    step = 1
    if ok(start):
        hi, lo = start, max(me, start - step)
        while lo > me and ok(lo):
            hi, step = lo, 2 * step
            lo = max(me, start - step)
    else:
        lo, hi = start, start + step
        while not ok(hi):
            lo, step = hi, 2 * step
            hi = start + step
    while hi - lo > 1:  # not ok(lo), ok(hi)
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi


def _exact_threshold(k: int, e: int, me: int, md: int) -> int:
    """min{n : e*log(n/me) >= k*log(md/me)} = min{n : n**e * me**k >= md**k * me**e}, in integers."""
    rhs = md**k * me**e

    def ok(n: int) -> bool:
        return n**e * me**k >= rhs

    # from a float estimate (off by about 1e-16 * md); ok(me) is false: me**k < md**k
    return _least(ok, max(me + 1, math.ceil(me * (md / me) ** (k / e))), me)


def _log_f32(x: np.float32) -> np.float32:
    """The float32 nearest ln(x): evaluated at 80 bits, rounded once to 24."""
    with mpmath.workprec(80):
        v = mpmath.log(mpmath.mpf(float(x)))
    with mpmath.workprec(24):
        return np.float32(float(+v))


def _k_float32(n: int, e: int, me: int, md: int) -> int:
    """T5's ``int(log(float32(n) / me) / math.log(md / me) * e)``, every step IEEE float32."""
    x = np.float32(n) / np.float32(me)
    q = _log_f32(x) / np.float32(math.log(md / me))
    return math.floor(float(q * np.float32(e)))


def _float32_threshold(k: int, e: int, me: int, md: int, start: int) -> int:
    """min{n >= me : _k_float32(n) >= k}, searched outwards from the exact threshold."""
    # _k_float32(me) == 0 < k: me is never ok
    return _least(lambda n: _k_float32(n, e, me, md) >= k, start, me)


@functools.lru_cache(maxsize=64)
def _thresholds(half: int, md: int, exact: bool) -> tuple[int, ...]:
    me = half // 2
    e = half - me
    out = []
    for k in range(1, e):
        t = _exact_threshold(k, e, me, md)
        out.append(t if exact else _float32_threshold(k, e, me, md, t))
    if any(a > b for a, b in zip(out, out[1:])):  # cannot happen: K(n) is monotone
        raise RuntimeError(f"internal error: T5 bucket thresholds not sorted for {(half, md, exact)}")
    return tuple(out)


def _check_params(bidirectional: Any, num_buckets: Any, max_distance: Any, exact: Any) -> tuple[bool, int, int, bool]:
    """Validated (bidirectional, half, max_distance, exact); half = buckets per direction."""
    bidirectional = check_bool("bidirectional", bidirectional)
    exact = check_bool("exact", exact)
    nb = check_int("num_buckets", num_buckets)
    minimum = 4 if bidirectional else 2
    if nb < minimum:
        raise ValueError(
            f"num_buckets must be >= {minimum} for bidirectional={bidirectional}, got {nb}: "
            + ("each direction gets num_buckets // 2 buckets, " if bidirectional else "")
            + "of which half (max_exact, at least 1) are exact and the rest logarithmic"
        )
    check_size("num_buckets", nb, minimum=minimum, maximum=MAX_BUCKETS)
    half = nb // 2 if bidirectional else nb
    me = half // 2
    md = check_int("max_distance", max_distance, maximum=2**63 - 1)
    if md <= me:
        raise ValueError(
            f"max_distance must be > max_exact = {me} "
            f"(num_buckets{' // 2' if bidirectional else ''} // 2 with num_buckets={nb}), got {md}: "
            "the logarithmic buckets span [max_exact, max_distance), and T5's formula divides by "
            "log(max_distance / max_exact)"
        )
    return bidirectional, half, md, exact


def thresholds(
    *, bidirectional: bool = True, num_buckets: int = 32, max_distance: int = 128, exact: bool = False
) -> tuple[int, ...]:
    r"""The distances at which the logarithmic buckets start.

    With :math:`h` the buckets per direction (``num_buckets // 2`` if bidirectional) and
    :math:`e = h - \lfloor h/2 \rfloor`, entry ``k - 1`` (``k = 1 .. e - 1``) is the
    smallest distance :math:`n` in bucket :math:`\lfloor h/2 \rfloor + k` or beyond
    (before the direction offset). Bucket :math:`\lfloor h/2 \rfloor` starts at
    :math:`n = \lfloor h/2 \rfloor`.

    Examples
    --------
    >>> from pemath import t5
    >>> t5.thresholds()
    (12, 16, 23, 32, 46, 64, 91)
    """
    _, half, md, exact = _check_params(bidirectional, num_buckets, max_distance, exact)
    return _thresholds(half, md, exact)


def _as_int64(name: str, value: Any) -> tuple[Any, Any, Any]:
    """(int64 array, namespace, device) from integers: an integer array or Python ints/lists."""
    arr, xp, device = as_int64(name, value, meaning="integers (key position - query position)")
    size = math.prod(int(s) for s in arr.shape)
    if size and int(xp.min(arr)) == _INT64_MIN:
        raise ValueError(f"{name} holds -2**63, whose absolute value overflows int64")
    return arr, xp, device


def _bucket(rel: Any, xp: Any, device: Any, bidirectional: bool, half: int, md: int, exact: bool) -> Any:
    me = half // 2
    if bidirectional:
        n = xp.abs(rel)
    else:
        n = xp.where(rel < 0, -rel, 0)
    t = _thresholds(half, md, exact)
    if t:
        large = me + xp.searchsorted(xp.asarray(t, dtype=xp.int64, device=device), n, side="right")
    else:
        large = xp.full(tuple(n.shape), me, dtype=xp.int64, device=device)
    out = xp.where(n < me, n, xp.astype(large, xp.int64))
    if bidirectional:
        out = out + xp.astype(rel > 0, xp.int64) * half
    return out


def bucket(
    relative_position: Any,
    *,
    bidirectional: bool = True,
    num_buckets: int = 32,
    max_distance: int = 128,
    exact: bool = False,
) -> Any:
    r"""T5's bucket of each relative position ``key - query``.

    With :math:`h` = ``num_buckets // 2`` if bidirectional else ``num_buckets``, the
    distance :math:`n = |r|` (bidirectional) or :math:`n = \max(-r, 0)` (unidirectional:
    keys after the query all share bucket 0), and :math:`m = \lfloor h/2 \rfloor`
    (``max_exact``):

    .. math::

        b(r) = h\,[r > 0]_{\text{bidirectional}} + \begin{cases}
            n & n < m \\
            m + \min\!\left(\left\lfloor (h - m)\,
                \dfrac{\ln(n/m)}{\ln(D/m)} \right\rfloor,\; h - m - 1\right) & n \ge m
        \end{cases}

    with :math:`D` = ``max_distance``. Keys after the query (:math:`r > 0`) take the
    upper half of the buckets when bidirectional. As in T5, some rows of a bidirectional
    table are never used: bucket :math:`h` (keys after the query have :math:`n \ge 1`,
    so the upper half starts at :math:`h + 1`), and bucket ``num_buckets - 1`` when
    ``num_buckets`` is odd. A logarithmic bucket narrower than one position (a small
    ``max_distance``) is skipped as well.

    ``exact=False`` (the default) computes the floor as T5 does: every step in IEEE
    float32 (``float32(n) / m``, the logarithm, division by ``float32(math.log(D/m))``,
    product with :math:`h - m`, truncation), with the float32 logarithm correctly
    rounded, so the result is the same on every backend. ``exact=True`` computes the
    mathematical floor with integer arithmetic:
    :math:`(n/m)^{h-m} \ge (D/m)^k \iff n^{h-m} m^k \ge D^k m^{h-m}`.

    Notes
    -----
    Findings (``h`` below is the buckets per direction, :math:`D` = ``max_distance``):
    for the T5 configurations (32/128 bidirectional and unidirectional, 64/256,
    128/256, 128/512, 32/64, 16/64) the float32 formula, the exact floor and the same
    formula in float64 agree for every :math:`|r| \le 8192`. Elsewhere they differ at
    single distances. Float32 against the exact floor: :math:`n = 30` for
    :math:`h = 36, D = 50` and :math:`n = 60` for :math:`h = 72, D = 100` (one below),
    :math:`n = 168` for :math:`h = 72, D = 784` (one below), :math:`n = 796` for
    :math:`h = 83, D = 1000` and :math:`n = 426` for :math:`h = 99, D = 784` (one
    above). Float64 is one below the exact floor where the true quotient is an
    integer, e.g. :math:`n = 8, 16, 64` for :math:`h = 9, D = 128`. ``exact=False``
    matched HF's ``_relative_position_bucket`` run by torch on the CPU at every point of
    9322 configurations (``num_buckets`` 2 to 261, 26 values of ``max_distance``, both
    directions, :math:`|r| \le 8192`); NumPy's float32 ``log``, not correctly rounded,
    gives the exact floor instead at the first two points above. torch on CUDA divides
    by a scalar as a product with its reciprocal and was not checked. A model's learned
    table follows what its training code computed: float32.

    Parameters
    ----------
    relative_position : int, list of int, or integer array
        ``memory_position - query_position`` (HF's and Mesh TensorFlow's sign). Arrays of
        any backend keep their namespace and device; Python values give NumPy.
    bidirectional : bool
        True for encoders (HF: ``not is_decoder``).
    num_buckets : int
        ``>= 4`` if bidirectional, ``>= 2`` otherwise.
    max_distance : int
        ``> max_exact`` (``num_buckets // 4`` bidirectional, ``num_buckets // 2`` not).
    exact : bool
        The mathematical floor instead of T5's float32 computation.

    Returns
    -------
    array
        int64, the shape of ``relative_position``, values in ``[0, num_buckets)``.

    Examples
    --------
    >>> from pemath import t5
    >>> t5.bucket([-1, 0, 1, -15, -16, -1000, 1000])
    array([ 1,  0, 17,  9, 10, 15, 31])
    >>> t5.bucket([-3, 3], bidirectional=False)
    array([3, 0])
    """
    bidirectional, half, md, exact = _check_params(bidirectional, num_buckets, max_distance, exact)
    rel, xp, device = _as_int64("relative_position", relative_position)
    return _bucket(rel, xp, device, bidirectional, half, md, exact)


def bias(
    table: Any,
    q_len: int,
    k_len: int,
    *,
    bidirectional: bool = True,
    num_buckets: int | None = None,
    max_distance: int = 128,
    offset: int | None = None,
    exact: bool = False,
) -> Any:
    r"""T5's position bias: the table row of each (query, key) bucket, shape ``(heads, q_len, k_len)``.

    .. math:: B_{h,i,j} = T_{b(j - q_i),\,h}, \qquad q_i = \text{offset} + i

    as HF's ``T5Attention.compute_bias`` (``relative_attention_bias(buckets)`` permuted
    to heads first).

    Parameters
    ----------
    table : array
        Real floating, shape ``(num_buckets, heads)`` (HF's
        ``relative_attention_bias.weight``). The result keeps its namespace, device and
        dtype (a lookup: no arithmetic on the values).
    q_len, k_len : int
        ``>= 1``.
    bidirectional, max_distance, exact
        As in :func:`bucket`.
    num_buckets : int, optional
        Defaults to ``table.shape[0]``; if given, must equal it.
    offset : int, optional
        Position of the first query; default ``k_len - q_len`` (the queries are the last
        ``q_len`` keys: decoding with a cache, as HF's ``cache_position``).

    Examples
    --------
    >>> import numpy as np
    >>> from pemath import t5
    >>> table = np.arange(32.0)[:, None]  # one head whose value is the bucket number
    >>> t5.bias(table, 2, 3)[0]
    array([[ 1.,  0., 17.],
           [ 2.,  1.,  0.]])
    """
    table, xp = as_real_table("table", table, "a 2-D array (num_buckets, heads)")
    if table.ndim != 2:
        raise ValueError(f"table must be 2-D (num_buckets, heads), got shape {tuple(table.shape)}")
    rows = int(table.shape[0])
    if num_buckets is None:
        num_buckets = rows
    elif check_int("num_buckets", num_buckets) != rows:
        raise ValueError(f"num_buckets ({num_buckets}) must equal table.shape[0] ({rows})")
    bidirectional, half, md, exact = _check_params(bidirectional, num_buckets, max_distance, exact)
    q_len = check_size("q_len", q_len, minimum=1, maximum=MAX_LEN)
    k_len = check_size("k_len", k_len, minimum=1, maximum=MAX_LEN)
    if offset is None:
        offset = k_len - q_len
    offset = check_int("offset", offset, minimum=-_MAX_EXACT_F64, maximum=_MAX_EXACT_F64)
    device = _compat.device_of(table)
    qpos = xp.arange(q_len, dtype=xp.int64, device=device)[:, None] + offset
    kpos = xp.arange(k_len, dtype=xp.int64, device=device)[None, :]
    buckets = _bucket(kpos - qpos, xp, device, bidirectional, half, md, exact)
    values = xp.take(table, xp.reshape(buckets, (-1,)), axis=0)
    heads = int(table.shape[1])
    return xp.permute_dims(xp.reshape(values, (q_len, k_len, heads)), (2, 0, 1))
