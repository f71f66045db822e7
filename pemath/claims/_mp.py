"""High-precision references shared by the mpmath checks: RoPE at 60 digits, from the definition."""

from __future__ import annotations

from collections.abc import Sequence

import mpmath

__all__ = ["DPS", "thetas", "rotate", "dot"]

#: Digits of the references (the float64 answers are compared with a derived float64 bound).
DPS = 60


def thetas(dim: int, base: float) -> list[mpmath.mpf]:
    """theta_i = base^(-2i/dim), i < dim/2, at the working precision."""
    return [mpmath.mpf(base) ** (-mpmath.mpf(2 * i) / dim) for i in range(dim // 2)]


def rotate(x: Sequence[float], p: int, th: Sequence[mpmath.mpf], layout: str) -> list[mpmath.mpf]:
    """R(p) x for a float vector x (read exactly), pair i = (2i, 2i+1) or (i, i + d/2) turned by p theta_i."""
    d = len(x)
    out = [mpmath.mpf(float(v)) for v in x]
    for i, t in enumerate(th):
        a, b = (2 * i, 2 * i + 1) if layout == "interleaved" else (i, i + d // 2)
        c, s = mpmath.cos(p * t), mpmath.sin(p * t)
        xa, xb = mpmath.mpf(float(x[a])), mpmath.mpf(float(x[b]))
        out[a], out[b] = xa * c - xb * s, xa * s + xb * c
    return out


def dot(u: Sequence[mpmath.mpf], v: Sequence[mpmath.mpf]) -> mpmath.mpf:
    return mpmath.fsum(a * b for a, b in zip(u, v))
