r"""Named real RoPE pipelines, emulated at their own precisions in NumPy.

pemath's reference (:func:`pemath.rope.apply`) computes in float64 and rounds once.
Real pipelines do not: Hugging Face computes the frequencies and phases in float32,
rounds cos and sin to the model dtype and multiplies in the model dtype. When a test
needs *the same bits* as such a pipeline (not merely the right answer within a
tolerance), these functions reproduce its sequence of roundings, operation by
operation, with NumPy (and ml_dtypes for bfloat16 and float8).

Each elementary operation (``+ - * /``) is a correctly rounded IEEE operation, as in
torch. Ops on dtypes narrower than float32 are computed in float32 and rounded to the
dtype, which is what torch does on CPU and CUDA (its "opmath" type).

Where bit parity stops: ``libm``
--------------------------------
The transcendental functions (``pow``, ``cos``, ``sin``) are not correctly rounded in
torch: on CPU it calls SLEEF, MKL or glibc (within 1 ulp), on CUDA the CUDA math library
(within a few ulps), and the results can depend on the CPU's vector width and on where
an element falls in a vectorised loop. With ``libm="exact"`` (the default) they are
correctly rounded to float32: portable, and equal to torch 2.13's CPU results (AVX-512)
on about 98.5 % of float32 ``pow``, ``cos`` and ``sin`` values, one float32 ulp apart
on the others. With ``libm="torch"`` they are evaluated by the installed torch, on CPU,
on arrays of the same shapes as the pipeline's own, and the emulation then matches the
pipeline run through that torch on CPU bit for bit.

After the rounding to bfloat16 (8 significant bits) or float16 (11), a one-ulp float32
difference in cos or sin survives only near a rounding boundary (about 2^-16 and 2^-13
of elements). A one-ulp difference in an inverse frequency ``f`` moves the phase
``p f`` by ``p f 2^-24``, which at long positions can exceed the model dtype's ulp: bit
parity with a given torch at every position needs ``libm="torch"``. (Measured against
HF 5.23 on torch 2.13 CPU with ``libm="exact"``: about 95 % of float32 outputs and
over 99.9 % of bfloat16 and float16 outputs identical, positions up to 131071.)

Pipelines
---------
:func:`hf`
    transformers' ``LlamaRotaryEmbedding`` + ``apply_rotary_pos_emb`` (v5), every
    ``rope_type``; with ``rotary_dim`` the GPT-NeoX / Phi-3 partial rotary
    (``q_rot``/``q_pass``).
:func:`gptj`
    transformers' GPT-J (``create_sinusoidal_positions``, ``rotate_every_two``):
    the same arithmetic as :func:`hf` with ``layout="interleaved"`` (in transformers
    v5 GPT-J casts its float32 ``sincos`` table to the model dtype before the
    products), base 10000, no scaling.
:func:`meta`
    Meta's reference ``precompute_freqs_cis`` + ``apply_rotary_emb``: float32
    frequencies, ``torch.polar``, the activations upcast to float32 and multiplied
    as complex64, the result cast back.

:func:`llama_cpp`
    llama.cpp's CPU kernel (``ggml_rope_ext``): the angles by the float32 recurrence
    ``theta *= theta_scale``, products
    in float32, one rounding to the tensor's type.
:func:`falcon_alibi`
    Falcon's ``build_alibi_tensor``: the ALiBi bias with slopes, key indices and their
    product in bfloat16.
:func:`bloom_alibi`
    BLOOM's ``build_alibi_tensor``: the same slopes kept in float32, one product, one
    rounding to the model dtype.

:func:`hf_inv_freq` returns HF's float32 inverse frequencies and attention factor
(``ROPE_INIT_FUNCTIONS``), for comparing a kernel's frequency table alone.

Positions above :math:`2^{24}` are rounded to float32 by every pipeline here, as by
the originals (``position_ids.float()``): the emulation reproduces it and emits an
:class:`~pemath.InexactPositionsWarning`.

Not emulated: Cohere (upcasts q and k to float32 for the products), vLLM and
flash-attn kernels (fused, FMA-contracted).
"""

from __future__ import annotations

import functools
import math
from typing import Any

import mpmath
import numpy as np

from .. import _compat, _dtypes, _precision
from .._errors import InexactPositionsWarning
from .._validate import as_int64, as_positions, check_choice, check_rotary_dim, check_seq_len, check_size, show
from ..rope import _core
from ..rope.spec import resolve
from ..scaling import DynamicNTK, Linear, Llama3, LongRoPE, Proportional, RopeScaling, YaRN

__all__ = ["hf", "gptj", "meta", "llama_cpp", "hf_inv_freq", "bloom_alibi",
           "falcon_alibi", "LIBMS", "DTYPES"]

#: The choices of ``libm``.
LIBMS = ("exact", "torch")

#: The model dtypes by name (the narrow ones need ml_dtypes).
DTYPES = (
    "float64",
    "float32",
    "float16",
    "bfloat16",
    "float8_e4m3fn",
    "float8_e5m2",
    "float8_e4m3fnuz",
    "float8_e5m2fnuz",
)

_F32 = np.float32
_F32_EXACT = _dtypes.FLOAT32_EXACT
_NARROW_ML = ("bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz")


# --------------------------------------------------------------------------- dtypes


def _ml_dtypes() -> Any:
    return _dtypes.ml_dtypes("pemath.testing.pipelines (bfloat16 and float8 in NumPy)")


def _dtype_name(dtype: Any) -> str | None:
    """The DTYPES name of a string, NumPy/ml_dtypes dtype or type, or torch dtype; None if unknown."""
    try:
        return _dtypes.name(dtype)
    except TypeError:
        return None


def _resolve_dtype(dtype: Any) -> np.dtype:
    name = _dtype_name(dtype)
    if name not in DTYPES:
        allowed = ", ".join(repr(d) for d in DTYPES)
        raise (ValueError if isinstance(dtype, str) else TypeError)(
            f"dtype must be one of {allowed} (a name, NumPy/ml_dtypes dtype or torch dtype), got {show(dtype)}"
        )
    if name in _NARROW_ML:
        return np.dtype(getattr(_ml_dtypes(), name))
    return np.dtype(name)


def _opmath(dt: np.dtype) -> np.dtype:
    """The dtype arithmetic on ``dt`` is carried out in (torch's opmath_type)."""
    return np.dtype(np.float64) if dt == np.float64 else np.dtype(np.float32)


def _host(name: str, a: Any) -> np.ndarray:
    """Any supported array as a NumPy array (torch bfloat16/float8 through float32, exactly)."""
    if not _compat.is_array(a):
        raise TypeError(f"{name} must be an array (NumPy, CuPy, torch, ...), got {show(a)}")
    if _compat.is_torch(_compat.namespace(a)) and str(a.dtype) in ("torch.bfloat16",) + tuple(
        f"torch.{n}" for n in _NARROW_ML
    ):
        return a.detach().cpu().float().numpy().astype(_resolve_dtype(a.dtype))
    return np.asarray(_compat.to_numpy(a))


def _torch_like_errors(fn: Any) -> Any:
    """Run a pipeline without NumPy's floating-point warnings: torch, which it emulates, gives
    inf and NaN silently (a NaN or inf in ``x`` propagates as it would in the model)."""

    @functools.wraps(fn)
    def quiet(*args: Any, **kwargs: Any) -> Any:
        with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
            return fn(*args, **kwargs)

    return quiet


def _check_base(base: Any) -> float:
    """A base > 0 that float32 holds as a positive finite number (the pipelines compute in float32)."""
    base = _core.check_base(base)
    with np.errstate(over="ignore", under="ignore"):
        b32, inv32 = np.float32(base), np.float32(1.0 / base)
    if not (np.isfinite(b32) and b32 > 0 and np.isfinite(inv32) and inv32 > 0):
        raise ValueError(
            f"base must be within float32's range (these pipelines compute their frequencies in float32), "
            f"got {base!r}"
        )
    return base


def _check_x(x: Any, dtype: Any) -> tuple[np.ndarray, np.dtype]:
    host = _host("x", x)
    if _dtype_name(host.dtype) not in DTYPES:
        raise TypeError(f"x must have a real floating dtype (one of {', '.join(DTYPES)}), got {show(x)}")
    if host.ndim < 1:
        raise ValueError("x must have at least one axis (the feature axis is the last), got a 0-d array")
    dt = _resolve_dtype(host.dtype if dtype is None else dtype)
    return host.astype(dt), dt


def _check_positions(positions: Any, x: np.ndarray) -> np.ndarray:
    """Integer positions (HF's int64 position_ids) broadcasting against x.shape[:-1], as int64 NumPy."""
    if _compat.is_array(positions):
        positions = np.asarray(_compat.to_numpy(positions))  # any backend: the emulation runs in NumPy
    host, xp, _ = as_int64("positions", positions,
                           meaning="integers (the pipelines take int64 position_ids; pemath.rope.apply takes "
                                   "fractional positions)")
    pos = np.asarray(as_positions(host, xp, "cpu", np.int64, target_shape=tuple(x.shape[:-1])))
    big = int(np.max(np.abs(pos))) if pos.size else 0
    if big > _F32_EXACT:
        _precision.warn(
            f"positions reach {big}, beyond 2**24 = {_F32_EXACT}, the integers float32 holds exactly: the pipeline "
            "casts its position ids to float32 (position_ids.float()) before the phases, so positions above 2**24 "
            "are rounded and consecutive ones merge; the emulation reproduces that rounding, as the original does. "
            "pemath.rope.apply takes the positions exactly",
            InexactPositionsWarning,
        )
    return pos


# --------------------------------------------------------------------------- float32 elementary functions


def _round24(v: mpmath.mpf) -> float:
    with mpmath.workprec(24):  # round to nearest, ties to even, at float32's 24 significant bits
        return float(+v)


@functools.lru_cache(maxsize=512)
def _exact_pow(base: float, exponents: tuple[float, ...]) -> np.ndarray:
    with mpmath.workprec(113):
        b = mpmath.mpf(base)
        out = np.array([_round24(b ** mpmath.mpf(e)) for e in exponents], dtype=np.float32)
    out.setflags(write=False)
    return out


class _Exact:
    """Correctly rounded float32 pow (mpmath), cos and sin (float64, rounded once)."""

    name = "exact"

    @staticmethod
    def pow(base: np.float32, e: np.ndarray) -> np.ndarray:
        return _exact_pow(float(base), tuple(float(v) for v in e.reshape(-1))).reshape(e.shape)

    @staticmethod
    def cos(a: np.ndarray) -> np.ndarray:
        return np.cos(a.astype(np.float64)).astype(np.float32)

    @staticmethod
    def sin(a: np.ndarray) -> np.ndarray:
        return np.sin(a.astype(np.float64)).astype(np.float32)

    polar = None  # cos and sin, as above


class _Torch:
    """The installed torch's float32 pow, cos, sin and polar, on CPU."""

    name = "torch"

    def __init__(self) -> None:
        try:
            import torch
        except ImportError as exc:
            raise ImportError('libm="torch" needs torch installed (pip install torch); use libm="exact"') from exc
        self.torch = torch

    def pow(self, base: Any, e: np.ndarray, *, tensor_base: bool = False) -> np.ndarray:
        t = self.torch
        b = t.tensor(base, dtype=t.float32) if tensor_base else float(base)
        return t.pow(b, t.from_numpy(np.ascontiguousarray(e))).numpy()

    def pow_scalar(self, base: np.float32, exponent: float) -> np.float32:
        t = self.torch
        return np.float32(float(t.tensor(float(base), dtype=t.float32) ** exponent))

    def cos(self, a: np.ndarray) -> np.ndarray:
        return self.torch.from_numpy(np.ascontiguousarray(a)).cos().numpy()

    def sin(self, a: np.ndarray) -> np.ndarray:
        return self.torch.from_numpy(np.ascontiguousarray(a)).sin().numpy()

    def polar(self, a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        t = self.torch
        ang = t.from_numpy(np.ascontiguousarray(a))
        z = t.polar(t.ones_like(ang), ang)
        return z.real.numpy().copy(), z.imag.numpy().copy()


def _libm(libm: Any) -> Any:
    return _Exact() if check_choice("libm", libm, LIBMS) == "exact" else _Torch()


def _pow(lm: Any, base: Any, e: np.ndarray, *, tensor_base: bool = False) -> np.ndarray:
    if lm.name == "torch":
        return lm.pow(base, e, tensor_base=tensor_base)
    return lm.pow(_F32(base), e)


def _pow_scalar(lm: Any, base: np.float32, exponent: float) -> np.float32:
    if lm.name == "torch":
        return lm.pow_scalar(base, exponent)
    return _F32(lm.pow(base, np.array([_F32(exponent)], dtype=np.float32))[0])


# --------------------------------------------------------------------------- HF frequencies


def _exponents(n_pairs: int, denominator: int) -> np.ndarray:
    """``arange(0, 2n, 2).float() / denominator`` in float32."""
    return np.arange(0, 2 * n_pairs, 2).astype(np.float32) / _F32(denominator)


def _recip(a: np.ndarray) -> np.ndarray:
    """``1.0 / t`` in torch is ``t.reciprocal() * 1.0``: one float32 division."""
    return _F32(1.0) / a


def _rdiv(c: float, a: np.ndarray) -> np.ndarray:
    """``c / t`` for a Python number c: torch evaluates ``t.reciprocal() * c`` (two roundings)."""
    return (_F32(1.0) / a) * _F32(c)


def _llama3_f32(inv: np.ndarray, s: Llama3, *, meta: bool) -> np.ndarray:
    """HF's ``_compute_llama3_parameters`` / Meta's ``apply_scaling`` on float32 frequencies."""
    L0, f = s.original_max_position, s.factor
    lo, hi = s.low_freq_factor, s.high_freq_factor
    low_wavelen, high_wavelen = L0 / lo, L0 / hi  # Python floats, compared in float32
    wavelen = _rdiv(2 * math.pi, inv)
    scaled = np.where(wavelen > _F32(low_wavelen), inv / _F32(f), inv)
    smooth = (_rdiv(L0, wavelen) - _F32(lo)) / _F32(hi - lo)
    smoothed = ((_F32(1.0) - smooth) * scaled) / _F32(f) + smooth * scaled
    medium = (wavelen >= _F32(high_wavelen)) & (wavelen <= _F32(low_wavelen))
    del meta  # HF's ~(w < hi) * ~(w > lo) and Meta's (w >= hi) & (w <= lo) are the same mask
    return np.where(medium, smoothed, scaled).astype(np.float32)


def _yarn_f32(r: int, base: float, s: YaRN, lm: Any) -> np.ndarray:
    if s.ramp != "index":
        raise ValueError(f"HF's YaRN uses the 'index' ramp; got {s!r} with ramp={s.ramp!r}")
    pos_freqs = _pow(lm, base, _exponents(r // 2, r))
    extrapolation = _recip(pos_freqs)
    interpolation = _recip(_F32(s.factor) * pos_freqs)
    low, high = s.correction_range(r, base)
    if low == high:
        high += 0.001
    linear = (np.arange(r // 2, dtype=np.float32) - _F32(low)) / _F32(high - low)
    ramp = np.clip(linear, _F32(0.0), _F32(1.0))
    keep = _F32(1.0) - ramp
    return (interpolation * (_F32(1.0) - keep) + extrapolation * keep).astype(np.float32)


def _dynamic_base_f32(r: int, base: float, s: DynamicNTK, seq_len: int, lm: Any) -> np.float32:
    """HF's forward: ``base * ((factor * seq_len / L0) - (factor - 1)) ** (d/(d-2))`` with a tensor seq_len."""
    L0 = s.original_max_position
    t = (_F32(s.factor) * _F32(seq_len)) / _F32(L0) - _F32(s.factor - 1)
    return _F32(_F32(base) * _pow_scalar(lm, _F32(t), r / (r - 2)))


def _hf_inv_freq(
    r: int, base: float, scaling: RopeScaling | None, seq_len: int | None, lm: Any
) -> tuple[np.ndarray, float]:
    n = r // 2
    if scaling is None:
        return _recip(_pow(lm, base, _exponents(n, r))), 1.0
    if isinstance(scaling, Linear):
        return _recip(_pow(lm, base, _exponents(n, r))) / _F32(scaling.factor), 1.0
    if isinstance(scaling, Proportional):
        k = scaling.kept_pairs(r)
        inv = np.zeros(n, dtype=np.float32)
        if k:
            inv[:k] = _recip(_pow(lm, base, _exponents(k, r)))
        return inv / _F32(scaling.factor), 1.0
    if isinstance(scaling, DynamicNTK):
        if r <= 2:
            raise ValueError(f"rotary_dim must be > 2 for DynamicNTK (its base exponent is d/(d-2)), got {r}")
        if seq_len is None or seq_len <= scaling.original_max_position:
            f = scaling.factor
            L0 = scaling.original_max_position
            b = base * ((f * L0 / L0) - (f - 1)) ** (r / (r - 2))  # HF's init, in Python floats
            return _recip(_pow(lm, b, _exponents(n, r))), 1.0
        b32 = _dynamic_base_f32(r, base, scaling, seq_len, lm)
        return _recip(_pow(lm, b32, _exponents(n, r), tensor_base=True)), 1.0
    if isinstance(scaling, YaRN):
        return _yarn_f32(r, base, scaling, lm), float(scaling.attention_factor)
    if isinstance(scaling, LongRoPE):
        if scaling.short_factor.shape[0] != n:
            raise ValueError(
                f"{scaling!r} has {scaling.short_factor.shape[0]} factors per list, but rotary_dim {r} has {n} pairs"
            )
        long = seq_len is not None and seq_len > scaling.original_max_position
        ext = (scaling.long_factor if long else scaling.short_factor).astype(np.float32)
        return _recip(ext * _pow(lm, base, _exponents(n, r))), float(scaling.attention_factor_at(seq_len))
    if isinstance(scaling, Llama3):
        return _llama3_f32(_recip(_pow(lm, base, _exponents(n, r))), scaling, meta=False), 1.0
    raise ValueError(
        f"scaling {scaling!r} is not one of Hugging Face's rope types (None, Linear, DynamicNTK, YaRN, LongRoPE, "
        "Llama3, Proportional); HF's 'dynamic' is pemath.scaling.DynamicNTK, and static NTK has no HF pipeline"
    )


@_torch_like_errors
def hf_inv_freq(
    dim: int | None = None,
    *,
    base: float | None = None,
    scaling: RopeScaling | None = None,
    seq_len: int | None = None,
    libm: str = "exact",
    spec: Any = None,
) -> tuple[np.ndarray, float]:
    r"""Hugging Face's float32 inverse frequencies and attention factor.

    What ``ROPE_INIT_FUNCTIONS[rope_type](config, seq_len=seq_len)`` returns, and for
    :class:`~pemath.scaling.DynamicNTK` above the original context what the forward
    pass computes (its base in float32 from a tensor ``seq_len``). The unscaled
    frequencies are

    .. math:: f_i = \mathrm{fl}\big(1 / \mathrm{pow}(\mathrm{fl}(b),\ \mathrm{fl}(2i / d))\big)

    in float32, and each scaling repeats HF's float32 operations in HF's order
    (``c / t`` as ``t.reciprocal() * c``, as torch evaluates it).

    Parameters
    ----------
    dim : int
        The rotary dimension (even); optional with a ``spec`` that fixes it.
    base : float
        Default 10000.
    scaling : pemath.scaling variant, optional
        One of HF's: Linear, DynamicNTK, YaRN (``ramp="index"``), LongRoPE, Llama3,
        Proportional.
    seq_len : int, optional
        Chooses LongRoPE's long factors (``seq_len > original_max_position``) and
        DynamicNTK's base; HF's forward uses ``max(position_ids) + 1``.
    libm : {"exact", "torch"}
        See the module notes.
    spec : pemath.rope.Spec, optional
        Instead of ``base`` and ``scaling`` (both given: ``TypeError``).

    Returns
    -------
    (numpy.ndarray, float)
        float32 frequencies of shape ``(dim // 2,)`` and the attention factor (a
        Python float: HF multiplies cos and sin by it in float32).

    Examples
    --------
    >>> from pemath.testing import pipelines
    >>> f, a = pipelines.hf_inv_freq(8, base=10000.0)
    >>> f.dtype, f.tolist()[:2], a
    (dtype('float32'), [1.0, 0.10000000149011612], 1.0)
    """
    spec = resolve(spec, "pipelines.hf_inv_freq", layout_free=True, base=base, scaling=scaling)
    if spec.inv_freq is not None:
        raise ValueError(f"pipelines.hf_inv_freq computes HF's frequencies from a base; {spec!r} gives them")
    if dim is None:
        if spec.rotary_dim is None:
            raise TypeError("pipelines.hf_inv_freq needs dim (the rotary dimension), or a spec that fixes it")
        dim = spec.rotary_dim
    r = check_size("dim", dim, minimum=2)
    if r % 2:
        raise ValueError(f"dim must be even for RoPE, got {r} (features are rotated in pairs)")
    base = _check_base(spec.base)
    scaling = spec.scaling
    seq_len = check_seq_len(seq_len)
    inv, a = _hf_inv_freq(r, base, scaling, seq_len, _libm(libm))
    return np.asarray(inv, dtype=np.float32), a


# --------------------------------------------------------------------------- the rotation in the model dtype


def _rotate_model_dtype(
    x: np.ndarray, cos: np.ndarray, sin: np.ndarray, layout: str, r: int, dt: np.dtype
) -> np.ndarray:
    """``x * cos + rotate(x) * sin`` with each op computed in opmath and rounded to ``dt`` (per feature cos/sin)."""
    om = _opmath(dt)
    xr = x[..., :r]
    if layout == "half":
        rot = np.concatenate([-xr[..., r // 2 :], xr[..., : r // 2]], axis=-1)
    else:
        rot = np.stack([-xr[..., 1::2], xr[..., 0::2]], axis=-1).reshape(xr.shape)
    a = (xr.astype(om) * cos.astype(om)).astype(dt)
    b = (rot.astype(om) * sin.astype(om)).astype(dt)
    out = (a.astype(om) + b.astype(om)).astype(dt)
    if r < x.shape[-1]:
        out = np.concatenate([out, x[..., r:]], axis=-1)
    return out


def _phases(pos: np.ndarray, inv: np.ndarray) -> np.ndarray:
    """``position_ids[..., None].float() * inv_freq`` in float32."""
    return pos.astype(np.float32)[..., None] * inv


@_torch_like_errors
def hf(
    x: Any,
    positions: Any,
    *,
    layout: str | None = None,
    dtype: Any = None,
    base: float | None = None,
    rotary_dim: int | None = None,
    scaling: RopeScaling | None = None,
    seq_len: int | None = None,
    libm: str = "exact",
    spec: Any = None,
) -> np.ndarray:
    r"""Hugging Face transformers' RoPE, rounding where it rounds.

    ``LlamaRotaryEmbedding.forward`` then ``apply_rotary_pos_emb`` (transformers v5),
    for a model run in ``dtype``:

    .. math::

        f &= \text{HF's float32 inv\_freq (see } \texttt{hf\_inv\_freq}\text{)} \\
        \phi &= \mathrm{fl}_{32}(\mathrm{fl}_{32}(p) \cdot f), \quad
        c = \mathrm{fl}_{d}(\mathrm{fl}_{32}(\mathrm{fl}_{32}(\cos\phi)\, \mathrm{fl}_{32}(a))), \quad
        s = \mathrm{fl}_{d}(\dots\sin\dots) \\
        y &= \mathrm{fl}_{d}\big(\mathrm{fl}_{d}(x \cdot c) + \mathrm{fl}_{d}(\mathrm{rot}(x) \cdot s)\big)

    where ``a`` is the attention factor, :math:`\mathrm{fl}_d` rounds to ``dtype`` and
    ``rot`` is ``rotate_half`` (``cat(-x2, x1)``) for ``layout="half"`` or
    ``rotate_every_two`` for ``"interleaved"`` (with the cos/sin table repeated per
    pair instead of concatenated). With ``rotary_dim``, the first ``rotary_dim``
    features rotate and the rest pass through (GPT-NeoX, Phi: ``q_rot``/``q_pass``).

    Parameters
    ----------
    x : array
        NumPy, torch (bfloat16 included), CuPy...; the last axis holds the features.
        Rounded to ``dtype`` first (a model's activations are in its dtype).
    positions : int array or list
        Integer position ids, broadcasting against ``x.shape[:-1]``.
    layout : {"half", "interleaved"}
        Default ``"half"``.
    dtype : str or dtype, optional
        The model dtype (one of :data:`DTYPES`; default: ``x``'s). bfloat16 and float8
        need ml_dtypes.
    base, rotary_dim, scaling
        As :func:`pemath.rope.apply`; ``scaling`` must be one of HF's types.
    spec : pemath.rope.Spec, optional
        Instead of ``layout``, ``base``, ``rotary_dim`` and ``scaling`` (giving both
        raises ``TypeError``), e.g. ``pemath.rope.from_hf_config(config)``: single-axis,
        one layout, frequencies from a base.
    seq_len : int, optional
        For DynamicNTK and LongRoPE; default ``max(positions) + 1``, as HF's forward.
    libm : {"exact", "torch"}
        Correctly rounded float32 transcendentals, or the installed torch's (bit
        parity with HF on that torch's CPU). See the module notes.

    Returns
    -------
    numpy.ndarray
        Of ``dtype``, shape of ``x``.

    Examples
    --------
    >>> import numpy as np
    >>> from pemath.testing import pipelines
    >>> from pemath import rope
    >>> q = np.array([[1.0, 2.0, 3.0, 4.0]])
    >>> y = pipelines.hf(q, [3], dtype="float16")
    >>> y.dtype, y.tolist()
    (dtype('float16'), [[-1.4140625, 1.87890625, -2.830078125, 4.05859375]])
    >>> (rope.apply(q, [3], layout="half").astype(np.float16) - y).tolist()  # one rounding vs five
    [[0.0009765625, 0.0, 0.001953125, 0.0]]
    """
    host, dt = _check_x(x, dtype)
    if spec is None and rotary_dim is not None:
        check_rotary_dim(rotary_dim, int(host.shape[-1]), dim_name="x.shape[-1]")
    spec = resolve(spec, "pipelines.hf", layout="half" if spec is None and layout is None else layout, base=base,
                   rotary_dim=rotary_dim, scaling=scaling)
    if spec.is_multi_axis or spec.out_layout is not None or spec.inv_freq is not None or spec.rotary_offset:
        raise ValueError(f"pipelines.hf emulates one-layout RoPE with frequencies from a base, rotating the head's "
                         f"leading features (transformers has no rotary offset); got {spec!r}")
    layout, base, scaling = spec.layout, _check_base(spec.base), spec.scaling
    seq_len = check_seq_len(seq_len)
    lm = _libm(libm)
    r = spec.rotary_dim_for(int(host.shape[-1]))
    pos = _check_positions(positions, host)
    if seq_len is None and pos.size:
        seq_len = max(int(pos.max()) + 1, 1)
    inv, a = _hf_inv_freq(r, base, scaling, seq_len, lm)
    freqs = _phases(pos, inv)
    emb = np.concatenate([freqs, freqs], axis=-1) if layout == "half" else np.repeat(freqs, 2, axis=-1)
    cos = (lm.cos(emb) * _F32(a)).astype(dt)
    sin = (lm.sin(emb) * _F32(a)).astype(dt)
    return _rotate_model_dtype(host, cos, sin, layout, r, dt)


@_torch_like_errors
def gptj(
    x: Any,
    positions: Any,
    *,
    dtype: Any = None,
    rotary_dim: int | None = None,
    base: float = 10000.0,
    libm: str = "exact",
) -> np.ndarray:
    r"""Hugging Face's GPT-J rotary (``create_sinusoidal_positions``, ``rotate_every_two``).

    The float32 table ``sin, cos`` of :math:`\phi = \mathrm{fl}_{32}(p\, f)`, with
    :math:`f = \mathrm{fl}_{32}(1/\mathrm{pow}(10000, \mathrm{fl}_{32}(2i/d_r)))`, cast to
    the model dtype, repeated per pair, then

    .. math:: y = \mathrm{fl}_d\big(\mathrm{fl}_d(x\,c) + \mathrm{fl}_d(\mathrm{rot}(x)\, s)\big),
              \quad \mathrm{rot}(x)_{2i} = -x_{2i+1},\ \mathrm{rot}(x)_{2i+1} = x_{2i}

    on the first ``rotary_dim`` features (GPT-J-6B: 64 of 256); the rest pass
    through. This is :func:`hf` with ``layout="interleaved"``; with ``libm="torch"``
    sin and cos are evaluated on the ``(..., rotary_dim / 2)`` table as GPT-J does.

    Parameters
    ----------
    x, positions, dtype, libm
        As :func:`hf`.
    rotary_dim : int, optional
        GPT-J's ``config.rotary_dim`` (default: all features).
    base : float
        10000 in GPT-J (hard-coded there).

    Examples
    --------
    >>> import numpy as np
    >>> from pemath.testing import pipelines
    >>> q = np.ones((1, 8), dtype=np.float32)
    >>> pipelines.gptj(q, [1], rotary_dim=4)[0, :4].tolist()
    [-0.30116868019104004, 1.3817732334136963, 0.9899501800537109, 1.009949803352356]
    """
    host, dt = _check_x(x, dtype)
    base = _check_base(base)
    lm = _libm(libm)
    r = check_rotary_dim(rotary_dim, int(host.shape[-1]), dim_name="x.shape[-1]")
    pos = _check_positions(positions, host)
    inv = _recip(_pow(lm, base, _exponents(r // 2, r)))
    phase = _phases(pos, inv)
    sin = np.repeat(lm.sin(phase).astype(dt), 2, axis=-1)
    cos = np.repeat(lm.cos(phase).astype(dt), 2, axis=-1)
    return _rotate_model_dtype(host, cos, sin, "interleaved", r, dt)


@_torch_like_errors
def meta(
    x: Any,
    positions: Any,
    *,
    dtype: Any = None,
    base: float = 10000.0,
    scaling: Llama3 | None = None,
    libm: str = "exact",
) -> np.ndarray:
    r"""Meta's reference Llama RoPE (``precompute_freqs_cis`` + ``apply_rotary_emb``).

    Frequencies :math:`f = \mathrm{fl}_{32}(1/\mathrm{pow}(b, \mathrm{fl}_{32}(2i/d)))`
    (then Meta's float32 ``apply_scaling`` for Llama 3.1), phases
    :math:`\phi = \mathrm{fl}_{32}(p\,f)`, ``torch.polar`` gives
    :math:`(c, s) = (\cos\phi, \sin\phi)` in float32; each pair
    :math:`(x_{2i}, x_{2i+1})`, upcast to float32, is multiplied as complex64:

    .. math::

        y_{2i} = \mathrm{fl}_{32}(\mathrm{fl}_{32}(x_{2i} c) - \mathrm{fl}_{32}(x_{2i+1} s)), \quad
        y_{2i+1} = \mathrm{fl}_{32}(\mathrm{fl}_{32}(x_{2i} s) + \mathrm{fl}_{32}(x_{2i+1} c))

    (torch's vectorised complex product: two products and one sum, no FMA) and cast
    back to the input dtype. The layout is interleaved; all features rotate.

    Parameters
    ----------
    x, positions, dtype, libm
        As :func:`hf` (``dtype`` is the activations' dtype; Meta's reference runs in
        bfloat16).
    base : float
        ``rope_theta`` (500000 for Llama 3).
    scaling : pemath.scaling.Llama3, optional
        Meta's ``use_scaled=True`` (factor 8, L0 8192, low 1, high 4 hard-coded there;
        any Llama3 parameters here, in Meta's order of operations).

    Examples
    --------
    >>> import numpy as np
    >>> from pemath.testing import pipelines
    >>> q = np.array([1.0, 0.0, 0.0, 1.0], dtype=np.float32)
    >>> pipelines.meta(q, 2, base=100.0).tolist()
    [-0.416146844625473, 0.9092974066734314, -0.19866932928562164, 0.9800665974617004]
    """
    host, dt = _check_x(x, dtype)
    base = _check_base(base)
    if scaling is not None and not isinstance(scaling, Llama3):
        raise TypeError(
            "scaling must be None or pemath.scaling.Llama3 (Meta's reference has only Llama 3.1's scaling), "
            f"got {show(scaling)}"
        )
    lm = _libm(libm)
    d = int(host.shape[-1])
    if d % 2:
        raise ValueError(f"x.shape[-1] must be even (Meta views the features as complex pairs), got {d}")
    pos = _check_positions(positions, host)
    inv = _recip(_pow(lm, base, _exponents(d // 2, d)))
    if scaling is not None:
        inv = _llama3_f32(inv, scaling, meta=True)
    phase = _phases(pos, inv)
    c, s = lm.polar(phase) if lm.polar is not None else (lm.cos(phase), lm.sin(phase))
    x32 = host.astype(np.float32)
    xr, xi = x32[..., 0::2], x32[..., 1::2]
    yr = xr * c - xi * s
    yi = xr * s + xi * c
    return np.stack([yr, yi], axis=-1).reshape(host.shape).astype(dt)


# --------------------------------------------------------------------------- llama.cpp (ggml's CPU kernel)


def _theta_scale_f32(base: float, rotary_dim: int) -> np.float32:
    """ggml's ``theta_scale = powf(freq_base, -2.0f/n_dims)``, correctly rounded to float32."""
    return _F32(_exact_pow(float(_F32(base)), (float(_F32(-2.0) / _F32(rotary_dim)),))[0])


def _recurrence_phases(pos: np.ndarray, theta_scale: np.float32, n_pairs: int,
                      freq_factors: np.ndarray | None = None, freq_scale: float = 1.0,
                      yarn: tuple[np.float32, np.float32] | None = None) -> np.ndarray:
    r"""The phases of ggml's CPU RoPE cache (``ggml_rope_cache_init``, then ``rope_yarn``).

    :math:`t_0 = \mathrm{fl}_{32}(p)`, :math:`t_{i+1} = \mathrm{fl}_{32}(t_i \cdot s)`: each pair's
    angle is the previous one times ``theta_scale`` :math:`s`, rounded to float32, so the
    relative error of pair :math:`i`'s phase grows with :math:`i` (up to :math:`i` roundings
    and :math:`i` times the error of :math:`s`). Pair :math:`i` then divides by its frequency
    factor (``theta / ff``: the extrapolated angle) and multiplies by ``freq_scale`` (the
    interpolated one), each in float32; with YaRN's ramp bounds ``yarn = (low, high)`` the two
    are mixed by ``ramp_mix = 1 - clamp((i - low) / max(0.001, high - low), 0, 1)``, in float32.
    Returns float32 phases, ``pos.shape + (n_pairs,)``.
    """
    t = np.asarray(pos).astype(np.float32)
    out = np.empty(t.shape + (n_pairs,), dtype=np.float32)
    fs = _F32(freq_scale)
    for i in range(n_pairs):
        ext = t / freq_factors[i] if freq_factors is not None else t
        interp = fs * ext if fs != 1 else ext
        if yarn is None:
            out[..., i] = interp
        else:
            mix = _yarn_mix(n_pairs, yarn)[i]
            out[..., i] = interp * (_F32(1.0) - mix) + ext * mix
        t = t * theta_scale
    return out


def _yarn_mix(n_pairs: int, yarn: tuple[np.float32, np.float32]) -> np.ndarray:
    """ggml's ``rope_yarn_ramp`` (times ext_factor 1) per pair, in float32: the weight of the extrapolated angle."""
    low, high = yarn
    i = np.arange(n_pairs, dtype=np.float32)
    y = (i - low) / max(_F32(0.001), _F32(high - low))
    return (_F32(1.0) - np.minimum(_F32(1.0), np.maximum(_F32(0.0), y))).astype(np.float32)


def _ggml_yarn_dims(r: int, base: float, n_ctx_orig: int, beta_fast: float, beta_slow: float) -> tuple:
    """ggml's ``ggml_rope_yarn_corr_dims``, in float32: the ramp's (low, high), floored and ceiled, then clamped."""
    def corr_dim(beta: float) -> np.float32:
        return (_F32(r) * np.log(_F32(n_ctx_orig) / (_F32(beta) * _F32(2.0) * _F32(math.pi)))
                / (_F32(2.0) * np.log(_F32(base))))

    low = max(_F32(0.0), np.floor(corr_dim(beta_fast)))
    high = min(_F32(r - 1), np.ceil(corr_dim(beta_slow)))
    return _F32(low), _F32(high)


def _ggml_params(spec: Any, r: int) -> tuple[np.ndarray | None, float, tuple | None, np.float32]:
    """``(freq_factors, freq_scale, yarn ramp bounds or None, amplitude)`` with which llama.cpp runs a pemath
    scaling (refusing the others)."""
    s = spec.scaling
    if s is None:
        return None, 1.0, None, _F32(1.0)
    if isinstance(s, Linear):
        return None, 1.0 / s.factor, None, _F32(1.0)
    if isinstance(s, Llama3):
        plain, _ = _core.frequencies(r, spec.base, None, None)
        scaled, _ = _core.frequencies(r, spec.base, s, None)
        return (plain / scaled).astype(np.float32), 1.0, None, _F32(1.0)  # rope_freqs: float64 factors, float32
    if isinstance(s, YaRN) and s.ramp == "index" and s.truncate and s.factor > 1 and s.mscale is None \
            and s.mscale_all_dim is None and s.attention_factor == 0.1 * math.log(s.factor) + 1.0:
        fs = _F32(1.0) / _F32(s.factor)  # hparams.rope_freq_scale_train = 1.0f / ropescale
        mscale = _F32(1.0) + _F32(0.1) * np.log(_F32(1.0) / fs)  # rope_yarn: mscale *= 1 + 0.1 logf(1/freq_scale)
        dims = _ggml_yarn_dims(r, spec.base, s.original_max_position, s.beta_fast, s.beta_slow)
        return None, float(fs), dims, _F32(mscale)
    raise ValueError(
        f"pipelines.llama_cpp emulates llama.cpp without scaling, with linear scaling (freq_scale), Llama 3's "
        f"per-pair frequency factors and YaRN (index ramp, truncated, its default attention factor); got {s!r}"
    )


@_torch_like_errors
def llama_cpp(
    x: Any,
    positions: Any,
    *,
    layout: str | None = None,
    dtype: Any = None,
    base: float | None = None,
    rotary_dim: int | None = None,
    scaling: RopeScaling | None = None,
    spec: Any = None,
) -> np.ndarray:
    r"""llama.cpp's CPU RoPE (``ggml_rope_ext``), rounding where it rounds.

    ggml computes ``theta_scale`` :math:`s = \mathrm{powf}(b, \mathrm{fl}_{32}(-2/d_r))` once
    and each pair's angle by **repeated float32 multiplication**:

    .. math::

        t_0 = \mathrm{fl}_{32}(p), \quad t_{i+1} = \mathrm{fl}_{32}(t_i\, s), \quad
        c_i = \mathrm{fl}_{32}(\cos t_i), \quad s_i = \mathrm{fl}_{32}(\sin t_i), \\
        y_a = \mathrm{fl}_d\big(\mathrm{fl}_{32}(\mathrm{fl}_{32}(x_a c_i) - \mathrm{fl}_{32}(x_b s_i))\big), \quad
        y_b = \mathrm{fl}_d\big(\mathrm{fl}_{32}(\mathrm{fl}_{32}(x_a s_i) + \mathrm{fl}_{32}(x_b c_i))\big)

    with ``x`` read in float32 and the result rounded once to ``dtype`` (``rotate_pairs``).
    ``layout="interleaved"`` is ``GGML_ROPE_TYPE_NORMAL``, ``"half"`` is
    ``GGML_ROPE_TYPE_NEOX``; features beyond ``rotary_dim`` (``n_dims``) pass through.
    Linear scaling is ``freq_scale`` :math:`= 1/\text{factor}`; Llama 3's are per-pair
    frequency factors (the GGUF's ``rope_freqs.weight``, float32), divided in float32; YaRN
    (its index ramp, truncated, the default attention factor) mixes the extrapolated and
    interpolated angles by ggml's ramp (bounds computed in float32) and multiplies cos and sin by
    :math:`1 + 0.1 \ln(1/\text{freq\_scale})` in float32.
    powf, cosf and sinf are correctly rounded here (glibc's are within 1 ulp). Not
    emulated: M-RoPE (``ggml_rope_multi``), the GPU backends (they call ``powf`` per pair).

    Parameters
    ----------
    x : array
        The last axis holds the features (float32 or float16: ggml's CPU RoPE types).
    positions : int array or list
        Integer positions (ggml's int32 ``pos``), broadcasting against ``x.shape[:-1]``.
    layout, base, rotary_dim, scaling, spec
        As :func:`hf`.
    dtype : {"float32", "float16"}, optional
        The tensor's type (default: ``x``'s).

    Examples
    --------
    >>> import numpy as np
    >>> from pemath.testing import pipelines
    >>> q = np.ones((1, 4), dtype=np.float32)
    >>> pipelines.llama_cpp(q, [3], layout="half").tolist()
    [[-1.1311124563217163, 0.9695545434951782, -0.8488724827766418, 1.029545545578003]]
    """
    host, dt = _check_x(x, dtype)
    if dt not in (np.dtype(np.float32), np.dtype(np.float16)):
        raise TypeError(f"dtype must be float32 or float16 (ggml's CPU RoPE types), got {dt}")
    if spec is None and rotary_dim is not None:
        check_rotary_dim(rotary_dim, int(host.shape[-1]), dim_name="x.shape[-1]")
    spec = resolve(spec, "pipelines.llama_cpp", layout=layout, base=base, rotary_dim=rotary_dim, scaling=scaling)
    if spec.is_multi_axis or spec.out_layout is not None or spec.inv_freq is not None:
        raise ValueError(f"pipelines.llama_cpp emulates one-layout RoPE with frequencies from a base; got {spec!r}")
    r = spec.rotary_dim_for(int(host.shape[-1]))
    if spec.rotary_offset:  # ggml_rope_set_offset: the rotated slice starts inside the head
        o = spec.rotary_offset
        mid = llama_cpp(host[..., o:o + r], positions, dtype=dt, spec=spec.replace(rotary_offset=0, head_dim=None,
                                                                                  rotary_dim=r))
        return np.concatenate([host[..., :o], mid, host[..., o + r:]], axis=-1)
    ff, fs, yarn, mscale = _ggml_params(spec, r)
    pos = _check_positions(positions, host)
    phase = _recurrence_phases(pos, _theta_scale_f32(_check_base(spec.base), r), r // 2, ff, fs, yarn)
    c = _Exact.cos(phase)
    s = _Exact.sin(phase)
    if mscale != 1:
        c, s = c * mscale, s * mscale
    x32 = host.astype(np.float32)
    xa, xb = _core.split_pairs(x32[..., :r], spec.layout, r)
    ya = xa * c - xb * s
    yb = xa * s + xb * c
    out = _core.merge_pairs(ya, yb, spec.layout, np).astype(dt)
    if r < host.shape[-1]:
        out = np.concatenate([out, host[..., r:]], axis=-1)
    return out


# --------------------------------------------------------------------------- ALiBi (BLOOM, Falcon)


def _alibi_slopes_f32(heads: int, lm: Any) -> np.ndarray:
    """transformers' ``build_alibi_tensor`` slopes: float32 ``torch.pow(base, powers)``, Press et al.'s interleaving."""
    c = 1 << (heads.bit_length() - 1)
    slopes = _pow(lm, _F32(2.0 ** (-(2.0 ** -(math.log2(c) - 3)))), np.arange(1, 1 + c).astype(np.float32),
                  tensor_base=True)
    if c != heads:
        extra = _pow(lm, _F32(2.0 ** (-(2.0 ** -(math.log2(2 * c) - 3)))),
                     np.arange(1, 1 + 2 * min(c, heads - c), 2).astype(np.float32), tensor_base=True)
        slopes = np.concatenate([slopes, extra])
    return slopes


def _alibi_mask(attention_mask: Any) -> np.ndarray:
    mask = _host("attention_mask", as_int64("attention_mask", attention_mask, meaning="0 and 1")[0])
    if mask.ndim != 2 or mask.shape[1] < 1 or mask.shape[0] < 1:
        raise ValueError(f"attention_mask must be 2-D (batch, k_len), got shape {tuple(mask.shape)}")
    if np.any((mask != 0) & (mask != 1)):
        raise ValueError("attention_mask must hold only 0 and 1")
    return mask


def falcon_alibi(heads: int, attention_mask: Any, *, libm: str = "exact") -> np.ndarray:
    r"""Falcon's ``build_alibi_tensor``: the ALiBi bias in bfloat16, as transformers builds it for Falcon.

    Slopes :math:`m_a = \mathrm{pow}(\beta, a + 1)` of head :math:`a`, in float32 with :math:`\beta = 2^{-8/c}` for the
    largest power of two :math:`c \le` ``heads`` (then every other power of
    :math:`2^{-4/c}` for the remaining heads, Press et al.'s interleaving), rounded to
    bfloat16 (``slopes[..., None].bfloat16()``); key indices
    :math:`j = (\mathrm{cumsum}(\text{mask}) - 1)\cdot\text{mask}` rounded to bfloat16 (exact
    only up to 256) by the product's type promotion; their product rounded to bfloat16:

    .. math:: B_{b,a,j} = \mathrm{bf16}\big(\mathrm{bf16}(m_a)\,\mathrm{bf16}(j)\big)

    the bias ``m * j`` of every query (pemath's ``form="shifted"``; the causal mask is
    added separately), shape ``(batch, heads, 1, k_len)`` as Falcon views it. BLOOM's
    version differs (:func:`bloom_alibi`).

    Parameters
    ----------
    heads : int
        The number of attention heads (``>= 1``).
    attention_mask : array
        ``(batch, k_len)`` of 0 and 1 (1: a real token).
    libm : {"exact", "torch"}
        Where float32 ``pow`` comes from (module docstring).

    Returns
    -------
    numpy.ndarray
        ml_dtypes bfloat16, ``(batch, heads, 1, k_len)``.

    Examples
    --------
    >>> import numpy as np
    >>> from pemath.testing import pipelines
    >>> b = pipelines.falcon_alibi(8, np.ones((1, 300), dtype=np.int64))
    >>> float(b[0, 0, 0, 257]), 0.5 * 257    # slope 2^-1 in bfloat16, index 257 rounded to 256
    (128.0, 128.5)
    """
    heads = check_size("heads", heads)
    lm = _libm(libm)
    mask = _alibi_mask(attention_mask)
    bf16 = _ml_dtypes().bfloat16
    slopes = _alibi_slopes_f32(heads, lm)
    keys = ((np.cumsum(mask, axis=-1) - 1) * mask).astype(np.float64).astype(bf16)  # int64 -> bfloat16
    m = slopes.astype(bf16).astype(np.float32)
    prod = m[None, :, None] * keys.astype(np.float32)[:, None, :]  # float32 opmath, one rounding
    return prod.astype(bf16)[:, :, None, :]


def bloom_alibi(heads: int, attention_mask: Any, *, dtype: Any = None, libm: str = "exact") -> np.ndarray:
    r"""BLOOM's ``build_alibi_tensor``: the ALiBi bias in float32, rounded once to the model dtype.

    The slopes of :func:`falcon_alibi`, kept in float32, times the key indices
    :math:`j = (\mathrm{cumsum}(\text{mask}) - 1)\cdot\text{mask}` (int64, exact in float32 up to
    :math:`2^{24}`), one float32 product, then ``.to(dtype)``:

    .. math:: B_{b,a,j} = \mathrm{fl}_{d}\big(\mathrm{fl}_{32}(m_a\, j)\big)

    so BLOOM's bias is within one rounding to ``dtype`` of the exact one (an honest
    computation), where Falcon's rounds the slopes and the indices to bfloat16 first
    (:func:`falcon_alibi`; at 40 heads and 300 keys, 2336 of 12000 values differ).

    Parameters
    ----------
    heads, attention_mask, libm
        As :func:`falcon_alibi`.
    dtype : str or dtype, optional
        The model dtype (one of :data:`DTYPES`; BLOOM runs in bfloat16, the default). Until
        0.3.0, leaving it out warns (``FutureWarning``) that this function computed Falcon's
        pipeline in 0.1.0 (now :func:`falcon_alibi`); pass ``dtype`` to silence it.

    Returns
    -------
    numpy.ndarray
        Of ``dtype``, ``(batch, heads, 1, k_len)``.

    Examples
    --------
    >>> import numpy as np
    >>> from pemath.testing import pipelines
    >>> b = pipelines.bloom_alibi(8, np.ones((1, 300), dtype=np.int64), dtype="bfloat16")
    >>> float(b[0, 0, 0, 257]), 0.5 * 257    # 128.5 rounded once to bfloat16
    (128.0, 128.5)
    >>> float(pipelines.bloom_alibi(8, np.ones((1, 300), dtype=np.int64), dtype="float32")[0, 0, 0, 257])
    128.5
    """
    heads = check_size("heads", heads)
    lm = _libm(libm)
    mask = _alibi_mask(attention_mask)
    if dtype is None:
        import warnings

        warnings.warn("pipelines.bloom_alibi computes BLOOM's pipeline since 0.2.0 (float32, rounded once to dtype); "
                      "in 0.1.0 it computed Falcon's bfloat16 one, now pipelines.falcon_alibi. Pass dtype= (e.g. "
                      "'bfloat16') to silence this warning, which goes in 0.3.0", FutureWarning, stacklevel=2)
        dtype = "bfloat16"
    dt = _resolve_dtype(dtype)
    slopes = _alibi_slopes_f32(heads, lm)
    keys = ((np.cumsum(mask, axis=-1) - 1) * mask).astype(np.float32)  # int64 * float32 -> float32
    prod = slopes[None, :, None] * keys[:, None, :]
    return prod.astype(dt)[:, :, None, :]
