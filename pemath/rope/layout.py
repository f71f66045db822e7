"""Converting between RoPE's two layouts: activations, and q/k projection weights."""

from __future__ import annotations

from typing import Any

from .. import _compat
from .._validate import check_int, check_rotary_dim, show
from . import _core
from .spec import resolve

__all__ = ["convert_layout", "permute_qk_weight", "permute_qk_weights"]


def convert_layout(
    x: Any, *, src: str | None = None, dst: str | None = None, rotary_dim: int | None = None, spec: Any = None
) -> Any:
    r"""Reorder the last axis of ``x`` from layout ``src`` to layout ``dst``.

    With :math:`h = r/2`, interleaved feature :math:`2i` moves to half feature
    :math:`i` and interleaved :math:`2i+1` to :math:`i + h`; the features beyond
    ``rotary_dim`` stay where they are. Rotating then converting equals converting
    then rotating in the other layout:

    .. math:: P\,R_\text{interleaved}(m)\,x = R_\text{half}(m)\,P\,x

    Parameters
    ----------
    x : array
        Any array whose last axis holds the features.
    src, dst : {"interleaved", "half"}
        Both required, except that a ``spec`` gives ``src``.
    rotary_dim : int, optional
        The rotated leading slice (default: all features, which must be even).
    spec : pemath.rope.Spec, optional
        Instead of ``src`` and ``rotary_dim`` (both given: ``TypeError``): the spec's
        ``layout`` and rotated slice. ``dst`` defaults to the spec's ``output_layout``
        when it differs from its layout (DeepSeek-V3's weights to its output).

    Examples
    --------
    >>> import numpy as np
    >>> from pemath import rope
    >>> rope.convert_layout(np.arange(6), src="interleaved", dst="half")
    array([0, 2, 4, 1, 3, 5])
    """
    if not _compat.is_array(x):
        raise TypeError(f"x must be an array, got {show(x)}")
    xp = _compat.namespace(x)
    if x.ndim < 1:
        raise ValueError("x must have at least one axis (the feature axis is the last), got a 0-d array")
    if spec is not None:
        spec = resolve(spec, "rope.convert_layout", src=src, rotary_dim=rotary_dim)
        src = spec.layout
        if dst is None and spec.out_layout is not None:
            dst = spec.out_layout
        r = spec.rotary_dim_for(int(x.shape[-1]))
    src = _core.check_layout(src, "src")
    dst = _core.check_layout(dst, "dst")
    if spec is None:
        r = check_rotary_dim(rotary_dim, int(x.shape[-1]), dim_name="x.shape[-1]", allow_empty=True)
    if src == dst:
        return x
    a, b = _core.split_pairs(x, src, r)
    out = _core.merge_pairs(a, b, dst, xp)
    if r < x.shape[-1]:
        out = xp.concat([out, x[..., r:]], axis=-1)
    return out


def permute_qk_weight(weight: Any, *, n_heads: int, src: str = "interleaved", dst: str = "half",
                      head_dim: int | None = None) -> Any:
    r"""Permute a q or k projection's output rows between RoPE layouts, head by head.

    Meta's checkpoints (complex form, ``interleaved``) and Hugging Face's Llama
    (``rotate_half``, ``half``) differ by this permutation of each head's output
    features; it is HF's ``convert_llama_weights_to_hf`` permutation
    (``src="interleaved", dst="half"``) and its inverse. With the permuted
    weights, RoPE in the ``dst`` layout gives the same q·k scores as the original
    weights in the ``src`` layout: the rotated q and k are the original ones permuted,
    bit for bit, so the scores differ only by the order in which the dot product is
    summed (a few ulps in floating point, nothing in exact arithmetic).

    Parameters
    ----------
    weight : array
        Shape ``(n_heads * head_dim, in_features)`` (a weight) or
        ``(n_heads * head_dim,)`` (a bias).
    n_heads : int
        Heads of this projection: the query heads for ``q_proj``, the key/value heads
        (``n_kv_heads``) for ``k_proj`` under grouped-query attention.
    src, dst : {"interleaved", "half"}
    head_dim : int, optional
        The model's head dim (its config's ``head_dim``). Given, a weight whose rows are
        not ``n_heads * head_dim`` is refused: the guard against permuting a grouped-query
        k projection with the query head count, which pairs the wrong features (the rows
        alone cannot tell). :func:`permute_qk_weights` reads it from ``wq``.

    Examples
    --------
    >>> import numpy as np
    >>> from pemath import rope
    >>> rope.permute_qk_weight(np.arange(8), n_heads=2)
    array([0, 2, 1, 3, 4, 6, 5, 7])
    """
    if not _compat.is_array(weight):
        raise TypeError(f"weight must be an array, got {show(weight)}")
    xp = _compat.namespace(weight)
    n_heads = check_int("n_heads", n_heads, minimum=1)
    src = _core.check_layout(src, "src")
    dst = _core.check_layout(dst, "dst")
    if weight.ndim not in (1, 2):
        raise ValueError(
            f"weight must be 1-D (a bias) or 2-D (out_features, in_features), got shape {tuple(weight.shape)}"
        )
    out_features = int(weight.shape[0])
    if head_dim is not None:
        head_dim = check_int("head_dim", head_dim, minimum=2)
        if out_features != n_heads * head_dim:
            raise ValueError(
                f"weight has {out_features} output features, not n_heads * head_dim = {n_heads} * {head_dim}: "
                f"n_heads={n_heads} is not this projection's head count ({out_features // head_dim} heads of "
                f"{head_dim} would fit; a grouped-query k projection has n_kv_heads heads, and permuting it with "
                "the query head count pairs the wrong features)"
                if out_features % head_dim == 0 else
                f"weight has {out_features} output features, not a multiple of head_dim={head_dim}"
            )
    if out_features % n_heads or (out_features // n_heads) % 2:
        raise ValueError(
            f"weight has {out_features} output features, which do not split into n_heads={n_heads} heads "
            "of even head_dim"
        )
    head_dim = out_features // n_heads
    rest = tuple(weight.shape[1:])
    heads = xp.reshape(weight, (n_heads, head_dim) + rest)
    if rest:
        heads = xp.moveaxis(heads, 1, -1)
    heads = convert_layout(heads, src=src, dst=dst)
    if rest:
        heads = xp.moveaxis(heads, -1, 1)
    return xp.reshape(heads, (out_features,) + rest)


def permute_qk_weights(
    wq: Any, wk: Any, *, n_heads: int, n_kv_heads: int | None = None, src: str = "interleaved", dst: str = "half"
) -> tuple[Any, Any]:
    """:func:`permute_qk_weight` for a q and a k projection (weights or biases) at once.

    ``n_kv_heads`` (default ``n_heads``) is the number of key/value heads of
    grouped-query attention. The head dim is read from ``wq`` (its output features over
    ``n_heads``), and ``wk`` must have ``n_kv_heads`` heads of it: a grouped-query k with the
    query head count (``n_kv_heads`` left out) is refused, naming the head count that fits,
    since permuting it with the wrong count pairs the wrong features and changes every score.
    """
    n_heads = check_int("n_heads", n_heads, minimum=1)
    n_kv = n_heads if n_kv_heads is None else check_int("n_kv_heads", n_kv_heads, minimum=1)
    wq2 = permute_qk_weight(wq, n_heads=n_heads, src=src, dst=dst)
    head_dim = int(wq.shape[0]) // n_heads
    try:
        wk2 = permute_qk_weight(wk, n_heads=n_kv, src=src, dst=dst, head_dim=head_dim)
    except ValueError as exc:
        if n_kv_heads is None:
            raise ValueError(f"{exc} [n_kv_heads was left out, so it defaulted to n_heads={n_heads}; pass "
                             "n_kv_heads= for grouped-query attention]") from None
        raise
    return wq2, wk2
