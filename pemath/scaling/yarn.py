"""YaRN (Peng et al. 2023): NTK-by-parts interpolation with an attention factor."""

from __future__ import annotations

import math

import numpy as np

from .._frequencies import base_inv_freq
from .._validate import check_bool, check_choice, check_even_dim, check_int, check_real
from ._base import RopeScaling

__all__ = ["YaRN"]

RAMPS = ("index", "ratio")


def _mscale(scale: float, mscale: float = 1.0) -> float:
    return 1.0 if scale <= 1 else 0.1 * mscale * math.log(scale) + 1.0


class YaRN(RopeScaling):
    r"""YaRN scaling, as the reference code and Hugging Face compute it.

    Each frequency blends its interpolated (:math:`\theta_i/s`) and original value:

    .. math:: \theta_i' = (1 - \gamma_i)\,\theta_i / s + \gamma_i\,\theta_i

    ``ramp="index"`` (the reference code, HF, vLLM): :math:`\gamma_i = 1 -
    \mathrm{clip}((i - \ell)/(h - \ell), 0, 1)` over the pair index ``i``, where
    :math:`\ell, h` are the pair indices at which a wavelength makes ``beta_fast`` and
    ``beta_slow`` turns over ``L_0`` (floored/ceiled when ``truncate``, clipped to
    ``[0, d-1]``). As in HF, when :math:`\ell` exceeds ``d - 1`` (about when
    :math:`L_0 \ge 2\pi\beta_{fast} b^2`: a tiny base or a huge context) the clipped bounds
    cross and every frequency is interpolated, although all of them turn more than
    ``beta_fast`` times; ``ramp="ratio"`` keeps them.

    ``ramp="ratio"`` (the paper, eq. 18): with :math:`r_i = L_0 \theta_i / 2\pi`,
    :math:`\gamma_i = \mathrm{clip}((r_i - \alpha)/(\beta - \alpha), 0, 1)`,
    :math:`\alpha` = ``beta_slow``, :math:`\beta` = ``beta_fast``.

    The attention factor is ``attention_factor`` if given; else
    ``mscale(s, mscale) / mscale(s, mscale_all_dim)`` when both are given (DeepSeek);
    else :math:`0.1 \ln s + 1` (1 for :math:`s \le 1`).

    Parameters
    ----------
    factor : float
        ``s > 0``.
    original_max_position : int
        ``L_0``, the pre-training context.
    beta_fast, beta_slow : float
        Turn counts bounding the ramp (32 and 1).
    mscale, mscale_all_dim : float, optional
    attention_factor : float, optional
    truncate : bool
        Round the index bounds outwards (HF's default ``True``).
    ramp : {"index", "ratio"}

    Examples
    --------
    >>> from pemath.scaling import YaRN
    >>> y = YaRN(16.0, 4096)
    >>> round(y.attention_factor, 6)    # 0.1 ln 16 + 1
    1.277259
    >>> f = y.inv_freq(128, 10000.0)
    >>> bool(f[0] == 1.0), bool(abs(f[-1] * 16 - 10000.0 ** (-126 / 128)) < 1e-18)
    (True, True)
    """

    rope_type = "yarn"

    def __init__(
        self,
        factor: float,
        original_max_position: int,
        *,
        beta_fast: float = 32.0,
        beta_slow: float = 1.0,
        mscale: float | None = None,
        mscale_all_dim: float | None = None,
        attention_factor: float | None = None,
        truncate: bool = True,
        ramp: str = "index",
    ) -> None:
        self.factor = check_real("factor", factor, positive=True)
        self.original_max_position = check_int("original_max_position", original_max_position, minimum=1)
        self.beta_fast = check_real("beta_fast", beta_fast, positive=True)
        self.beta_slow = check_real("beta_slow", beta_slow, positive=True)
        ramp = check_choice("ramp", ramp, RAMPS)
        # the index ramp takes equal bounds (the reference code widens a zero-width ramp by 0.001, and shipped
        # configs rely on it: Kimi K2's beta_fast = beta_slow = 1); the ratio ramp divides by their difference
        if not (self.beta_fast > self.beta_slow or (ramp == "index" and self.beta_fast == self.beta_slow)):
            need = ">" if ramp == "ratio" else ">="
            raise ValueError(
                f"beta_fast must be {need} beta_slow (ramp={ramp!r}), got beta_fast={self.beta_fast}, "
                f"beta_slow={self.beta_slow}"
            )
        self.mscale = None if mscale is None else check_real("mscale", mscale, nonnegative=True)
        self.mscale_all_dim = (
            None if mscale_all_dim is None else check_real("mscale_all_dim", mscale_all_dim, nonnegative=True)
        )
        self._attention_factor = (
            None if attention_factor is None else check_real("attention_factor", attention_factor, positive=True)
        )
        self.truncate = check_bool("truncate", truncate)
        self.ramp = ramp

    @property
    def attention_factor(self) -> float:
        if self._attention_factor is not None:
            return self._attention_factor
        if self.mscale and self.mscale_all_dim:
            return _mscale(self.factor, self.mscale) / _mscale(self.factor, self.mscale_all_dim)
        return _mscale(self.factor)

    def correction_range(self, dim: int, base: float) -> tuple[float, float]:
        r"""The pair-index bounds (low, high) of the ``"index"`` ramp.

        :math:`c(\beta) = d \ln(L_0 / 2\pi\beta) / (2 \ln b)` is the (fractional) pair
        index whose wavelength fits :math:`\beta` times in :math:`L_0`; ``low`` is
        :math:`c(\beta_{fast})`, ``high`` is :math:`c(\beta_{slow})`, floored/ceiled
        when ``truncate``, then clipped to ``[0, d - 1]`` (HF clips to the rotary
        dim ``d - 1``, not to the last pair index ``d/2 - 1``).
        """
        dim = check_even_dim("dim", dim)
        base = check_real("base", base, positive=True)
        if base == 1.0:
            raise ValueError("base must be != 1 for YaRN (the ramp bounds divide by ln(base)), got 1.0")

        def corr(turns: float) -> float:
            q = self.original_max_position / (turns * 2 * math.pi)  # HF's expression, bit for bit
            if not (0 < q < math.inf):  # extreme beta_fast/beta_slow: the same value without overflow
                ln = math.log(self.original_max_position) - math.log(turns) - math.log(2 * math.pi)
            else:
                ln = math.log(q)
            return dim * ln / (2 * math.log(base))

        low, high = corr(self.beta_fast), corr(self.beta_slow)
        if self.truncate:
            low, high = math.floor(low), math.ceil(high)
        return max(low, 0), min(high, dim - 1)

    def ramp_weights(self, dim: int, base: float) -> np.ndarray:
        r"""The extrapolation weights :math:`\gamma_i` (1: frequency kept, 0: divided by s)."""
        dim = check_even_dim("dim", dim)
        base = check_real("base", base, positive=True)
        if self.ramp == "index":
            low, high = self.correction_range(dim, base)
            if low == high:
                high += 0.001  # the reference code's guard against a zero-width ramp
            i = np.arange(dim // 2, dtype=np.float64)
            return 1.0 - np.clip((i - low) / (high - low), 0.0, 1.0)
        r = self.original_max_position * base_inv_freq(dim, base) / (2 * math.pi)
        return np.clip((r - self.beta_slow) / (self.beta_fast - self.beta_slow), 0.0, 1.0)

    def _inv_freq(self, dim: int, base: float, seq_len: int | None) -> np.ndarray:
        freq = base_inv_freq(dim, base)
        gamma = self.ramp_weights(dim, base)
        return freq / self.factor * (1 - gamma) + freq * gamma
