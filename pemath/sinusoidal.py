r"""Sinusoidal absolute position encodings, in the three layouts found in practice.

The same idea, a bank of sines and cosines of the position at geometrically spaced
frequencies, is laid out three ways, and a table built in one layout is not a table in
another. The layout is therefore a required keyword, ``convention``:

``"interleaved"``
    Vaswani et al. (2017), section 3.5, and HF XLM's ``create_sinusoidal_embeddings``:
    ``PE[2i] = sin(p w_i)``, ``PE[2i+1] = cos(p w_i)`` with :math:`w_i = b^{-2i/d}`.
``"concat"``
    ``[sin | cos]`` with the same frequencies :math:`b^{-2i/d}`: HF Marian's
    ``MarianSinusoidalPositionalEmbedding``.
``"tensor2tensor"``
    ``[sin | cos]`` with frequencies :math:`w_i = \exp(-i \ln b / (d/2 - 1))`,
    i.e. the first is 1 and the last exactly :math:`1/b`: tensor2tensor's
    ``get_timing_signal_1d``, fairseq's ``SinusoidalPositionalEmbedding`` and HF's
    M2M100 / Speech2Text / FSMT copies of it.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from . import _compat, _precision
from ._frequencies import base_inv_freq
from ._validate import as_positions, check_choice, check_real, check_size

__all__ = ["CONVENTIONS", "CONVENTIONS_2D", "encode", "encode_2d", "frequencies", "wavelengths"]

CONVENTIONS = ("interleaved", "concat", "tensor2tensor")
#: The 2-D sin-cos tables of vision transformers (:func:`encode_2d`).
CONVENTIONS_2D = ("mae", "timm", "timm_interleaved", "mocov3")


def _check_convention(convention: Any) -> str:
    if convention is None:
        raise TypeError(
            "convention is required (there is no safe default): 'interleaved' puts sin/cos in "
            "pairs (2i, 2i+1) with frequencies base**(-2i/dim) (Vaswani et al., HF XLM); 'concat' "
            "puts [sin | cos] with the same frequencies (HF Marian); 'tensor2tensor' puts "
            "[sin | cos] with frequencies base**(-i/(dim//2 - 1)) (tensor2tensor, fairseq, M2M100)"
        )
    return check_choice("convention", convention, CONVENTIONS)


def frequencies(dim: int, *, base: float = 10000.0, convention: str | None = None) -> np.ndarray:
    r"""The angular frequencies :math:`\omega_i` of a sinusoidal encoding, in radians per position.

    .. math::

        \omega_i = b^{-2i/d}, \quad i = 0, \dots, \lceil d/2 \rceil - 1
        \qquad \text{("interleaved", "concat")}

        \omega_i = b^{-i/(\lfloor d/2 \rfloor - 1)}, \quad i = 0, \dots, \lfloor d/2 \rfloor - 1
        \qquad \text{("tensor2tensor")}

    Each value is the float64 nearest the exact real number (evaluated with mpmath and
    rounded once). The origins compute them with ``np.power`` in float64 (XLM, Marian)
    or ``exp`` in float32 (fairseq, M2M100), so they differ from these in the last bits.

    Parameters
    ----------
    dim : int
        The encoding dimension ``d`` (``>= 1``; ``>= 4`` for ``"tensor2tensor"``).
    base : float
        ``b > 0`` (10000 in every origin; tensor2tensor's ``max_timescale / min_timescale``).
    convention : {"interleaved", "concat", "tensor2tensor"}
        Required. For odd ``d`` the first two have :math:`\lceil d/2 \rceil` frequencies
        (the sine block has one more column than the cosine block), tensor2tensor
        :math:`\lfloor d/2 \rfloor` (its last column is zero).

    Returns
    -------
    numpy.ndarray
        float64, read-only.

    Examples
    --------
    >>> from pemath import sinusoidal
    >>> sinusoidal.frequencies(4, base=100.0, convention="interleaved")
    array([1. , 0.1])
    >>> sinusoidal.frequencies(6, base=100.0, convention="tensor2tensor")
    array([1.  , 0.1 , 0.01])
    """
    convention = _check_convention(convention)
    dim = check_size("dim", dim, minimum=1)
    base = check_real("base", base, positive=True)
    if convention == "tensor2tensor":
        half = dim // 2
        if half < 2:
            raise ValueError(
                f"dim must be >= 4 for convention='tensor2tensor', got {dim}: its frequency spacing "
                "ln(base) / (dim // 2 - 1) divides by zero for dim 2 or 3 (fairseq and HF M2M100 "
                "raise ZeroDivisionError there; tensor2tensor clamps the divisor to 1), so the "
                "convention has no single definition at that size"
            )
        # base**(-i/(half-1)) == base**(-2i/(2*half-2)), correctly rounded.
        return base_inv_freq(2 * half, base, denominator=2 * half - 2)
    n = (dim + 1) // 2
    return base_inv_freq(2 * n, base, denominator=dim)


def wavelengths(dim: int, *, base: float = 10000.0, convention: str | None = None) -> np.ndarray:
    r"""The wavelengths :math:`\lambda_i = 2\pi / \omega_i` (positions per period) of :func:`frequencies`.

    .. math:: \lambda_i = \frac{2\pi}{\omega_i}

    Examples
    --------
    >>> import numpy as np
    >>> from pemath import sinusoidal
    >>> np.round(sinusoidal.wavelengths(4, base=100.0, convention="concat"), 4)
    array([ 6.2832, 62.8319])
    """
    freq = frequencies(dim, base=base, convention=convention)
    with np.errstate(over="ignore"):
        out = (2.0 * math.pi) / freq
    if not np.all(np.isfinite(out)):
        raise ValueError(
            f"base = {base!r} gives frequencies down to {float(freq.min())!r}, whose wavelengths 2*pi/omega "
            "overflow float64; pass a smaller base"
        )
    out.setflags(write=False)
    return out


def encode(
    positions: Any,
    dim: int,
    *,
    base: float = 10000.0,
    convention: str | None = None,
    dtype: Any = None,
) -> Any:
    r"""The sinusoidal encoding of ``positions``, shape ``positions.shape + (dim,)``.

    With :math:`\omega_i` from :func:`frequencies` and :math:`h = \lfloor d/2 \rfloor`:

    .. math::

        \text{interleaved:}\quad PE_{2i} = \sin(p\,\omega_i),\;
            PE_{2i+1} = \cos(p\,\omega_i)

        \text{concat:}\quad PE_{i} = \sin(p\,\omega_i),\;
            PE_{\lceil d/2 \rceil + i} = \cos(p\,\omega_i)

        \text{tensor2tensor:}\quad PE_{i} = \sin(p\,\omega_i),\;
            PE_{h + i} = \cos(p\,\omega_i)

    Odd ``dim``, as each origin defines it (read from their sources):

    * ``"interleaved"`` (HF XLM ``create_sinusoidal_embeddings``: column ``j`` has angle
      ``p / 10000**(2*(j//2)/dim)``, sine on even ``j``, cosine on odd ``j``): the last
      column is a sine, :math:`\sin(p\,b^{-2h/d})`.
    * ``"concat"`` (HF Marian ``create_weight``: ``sentinel = dim // 2 + 1`` for odd dim):
      the sine block has :math:`h + 1` columns, the cosine block :math:`h`, both with
      exponents :math:`2i/d`.
    * ``"tensor2tensor"`` (``get_timing_signal_1d`` pads ``channels % 2``; fairseq and
      M2M100 ``get_embedding`` append a zero column): :math:`2h` sinusoid columns then one
      zero column.

    Positions are used as given: fairseq and M2M100 look rows up at
    ``padding_idx + 1 + t`` (and zero the padding row), so their row ``r`` is
    ``encode(r, ...)``.

    Parameters
    ----------
    positions : array or int/float or list
        Integer or real positions of any shape (fractional positions are exact, never
        truncated). Arrays keep their namespace and device; Python values give NumPy.
    dim : int
        The encoding dimension.
    base : float
        ``b > 0``.
    convention : {"interleaved", "concat", "tensor2tensor"}
        Required: see the module docstring.
    dtype : optional
        A real floating dtype of the namespace: the float64 result is cast once, at the
        end, so each entry is within the dtype's unit roundoff of the truth at every
        position (float16 and bfloat16 at position :math:`10^6` included). Where the
        backend has no float64 and computes the angles in float32, a
        :class:`~pemath.TablePrecisionWarning` says when their rounding error,
        :math:`2^{-24} \max|p\,\omega_i|`, exceeds that unit roundoff (``docs/tolerance.rst``,
        "Precision warnings"). Formats without negative numbers (``float8_e8m0fnu``)
        are refused.

    Returns
    -------
    array
        float64 (or ``dtype``), in the namespace and on the device of ``positions``.
        Angles, sines and cosines are computed in float64. Floating positions beyond the
        integers their dtype holds exactly get an :class:`~pemath.InexactPositionsWarning`.

    Examples
    --------
    >>> import numpy as np
    >>> from pemath import sinusoidal
    >>> np.round(sinusoidal.encode(1, 4, base=100.0, convention="interleaved"), 6)
    array([0.841471, 0.540302, 0.099833, 0.995004])
    >>> np.round(sinusoidal.encode(1, 4, base=100.0, convention="concat"), 6)
    array([0.841471, 0.099833, 0.540302, 0.995004])
    >>> sinusoidal.encode([0, 1, 2], 6, convention="tensor2tensor").shape
    (3, 6)
    """
    freq = frequencies(dim, base=base, convention=convention)
    dim = int(dim)
    if _compat.is_array(positions):
        xp = _compat.namespace(positions)
        device = _compat.device_of(positions)
    else:
        xp = _compat.namespace(np.empty(0))
        device = _compat.device_of(np.empty(0))
    if dtype is not None and not _compat.is_real_floating(xp, dtype):
        raise TypeError(f"dtype must be a real floating dtype of {xp.__name__}, got {dtype!r}")
    _precision.check_table_dtype(xp, dtype)
    wdt = _compat.working_dtype(xp, device)
    pos = as_positions(positions, xp, device, wdt)
    _precision.check_table_phases(pos, freq, xp, wdt, dtype, "the sinusoidal table")
    theta = pos[..., None] * xp.asarray(freq.tolist(), dtype=wdt, device=device)
    sin, cos = xp.sin(theta), xp.cos(theta)
    half = dim // 2
    if convention == "interleaved":
        pairs = xp.stack([sin[..., :half], cos[..., :half]], axis=-1)
        out = xp.reshape(pairs, tuple(pos.shape) + (2 * half,))
        if dim % 2:
            out = xp.concat([out, sin[..., half:]], axis=-1)
    elif convention == "concat":
        out = xp.concat([sin, cos[..., :half]], axis=-1)
    else:
        parts = [sin, cos]
        if dim % 2:
            parts.append(xp.zeros(tuple(pos.shape) + (1,), dtype=wdt, device=device))
        out = xp.concat(parts, axis=-1)
    if dtype is not None:
        out = xp.astype(out, dtype)
    return out


def encode_2d(grid_shape: Any, dim: int, *, convention: str | None = None, base: float = 10000.0) -> np.ndarray:
    r"""The 2-D sin-cos position table of a vision transformer, one row per patch.

    For a grid of ``H`` rows and ``W`` columns, patch :math:`(i, j)` and
    :math:`\omega_k = b^{-k/(d/4)}`, :math:`k < d/4` (the float64 values of
    :func:`frequencies` ``(d/2, convention="concat")``), with :math:`S(p)` and :math:`C(p)`
    the blocks :math:`[\sin p\,\omega_k]_k` and :math:`[\cos p\,\omega_k]_k`:

    ======================== ==================================== ==================
    ``convention``           row of patch :math:`(i, j)`            row order
    ======================== ==================================== ==================
    ``"mae"``                :math:`[S(j), C(j), S(i), C(i)]`       :math:`iW + j`
    ``"timm"``               :math:`[S(i), S(j), C(i), C(j)]`       :math:`iW + j`
    ``"timm_interleaved"``   :math:`[S(i), C(i), S(j), C(j)]`       :math:`iW + j`
    ``"mocov3"``             :math:`[S(j), C(j), S(i), C(i)]`       :math:`jH + i`
    ======================== ==================================== ==================

    ``"mae"`` is MAE's ``get_2d_sincos_pos_embed`` (and its copies in DiT, diffusers,
    ...): its ``meshgrid(grid_w, grid_h)`` puts the column coordinate first, so the
    first half encodes :math:`j` although the code names it ``emb_h``. ``"timm"`` and
    ``"timm_interleaved"`` are timm's ``build_sincos2d_pos_embed`` (``reverse_coord=False``,
    ``interleave_sin_cos`` False / True). ``"mocov3"`` is MoCo v3's
    ``build_2d_sincos_position_embedding``: ``meshgrid(grid_w, grid_h, indexing="ij")``
    orders the patches column-major. MAE's optional class-token row (zeros) is not
    included: prepend it where the model has one.

    Parameters
    ----------
    grid_shape : (int, int)
        ``(H, W)``, patches per column and per row.
    dim : int
        The embedding dimension, a multiple of 4.
    convention : {"mae", "timm", "timm_interleaved", "mocov3"}
        Required: the four tables differ (a model fine-tuned on one and fed another
        sees scrambled positions).
    base : float
        :math:`b` (MAE and timm's ``temperature``: 10000).

    Returns
    -------
    numpy.ndarray
        float64, shape ``(H * W, dim)``; angles, sines and cosines in float64.

    Examples
    --------
    >>> import numpy as np
    >>> from pemath import sinusoidal
    >>> t = sinusoidal.encode_2d((2, 3), 8, convention="mae")
    >>> t.shape
    (6, 8)
    >>> patch = 1 * 3 + 2    # row i = 1, column j = 2
    >>> bool(np.array_equal(t[patch], np.concatenate([sinusoidal.encode(2, 4, convention="concat"),
    ...                                                 sinusoidal.encode(1, 4, convention="concat")])))
    True
    """
    convention = check_choice("convention", convention, CONVENTIONS_2D) if convention is not None else None
    if convention is None:
        raise TypeError(f"convention is required: one of {', '.join(map(repr, CONVENTIONS_2D))} (the four "
                        "tables differ; see the docstring)")
    if isinstance(grid_shape, (str, bytes)) or not hasattr(grid_shape, "__len__") or len(grid_shape) != 2:
        raise TypeError(f"grid_shape must be (H, W), two sizes, got {grid_shape!r}")
    h, w = (check_size(f"grid_shape[{k}]", v, minimum=1) for k, v in enumerate(grid_shape))
    if h * w > 2**24:
        raise ValueError(f"grid_shape {h} x {w} is beyond pemath's limit of 2**24 patches")
    d = check_size("dim", dim, minimum=4)
    if d % 4:
        raise ValueError(f"dim must be a multiple of 4 (sin and cos of two coordinates), got {d}")
    q = d // 4
    i, j = np.meshgrid(np.arange(h), np.arange(w), indexing="ij")  # row-major patches
    if convention == "mocov3":
        i, j = i.T, j.T  # column-major patches
    i, j = i.reshape(-1), j.reshape(-1)
    ei = encode(i, 2 * q, base=base, convention="concat")  # [S(i) | C(i)]
    ej = encode(j, 2 * q, base=base, convention="concat")
    if convention in ("mae", "mocov3"):
        return np.concatenate([ej, ei], axis=-1)
    if convention == "timm_interleaved":
        return np.concatenate([ei, ej], axis=-1)
    return np.concatenate([ei[:, :q], ej[:, :q], ei[:, q:], ej[:, q:]], axis=-1)
