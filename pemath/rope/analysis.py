r"""Analysis of RoPE scores: RoFormer's long-term decay curve (Su et al. 2021, section 3.4.3).

RoFormer writes the score of a query at ``m`` and a key at ``n`` as
:math:`\mathrm{Re}\sum_i h_i e^{i(m-n)\theta_i}` and bounds it, by Abel summation, by
:math:`(\max_i |h_{i+1} - h_i|) \sum_{j=1}^{d/2} |S_j|` with the partial sums
:math:`S_j = \sum_{i<j} e^{i(m-n)\theta_i}`. The curve of the paper's Figure 2 is the
mean :math:`\frac{1}{d/2}\sum_j |S_j|` against the relative distance ``m - n``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _compat
from .._validate import as_positions
from ..scaling import RopeScaling
from . import _core
from .spec import Spec, frequencies_of

__all__ = ["long_term_decay"]


def long_term_decay(
    distances: Any,
    dim: int | None = None,
    *,
    base: float | None = None,
    scaling: RopeScaling | None = None,
    seq_len: int | None = None,
    spec: Spec | None = None,
    rotary_dim: int | None = None,
) -> Any:
    r"""RoFormer's relative upper bound :math:`\frac{1}{d/2}\sum_{j=1}^{d/2} |S_j(r)|` at each distance.

    .. math::

        B(r) = \frac{1}{d/2} \sum_{j=1}^{d/2} \Big| \sum_{i=0}^{j-1} e^{\mathrm{i} r \theta_i} \Big|,
        \qquad \theta_i = b^{-2i/d}

    It multiplies :math:`\max_i |h_{i+1} - h_i|` in RoFormer's bound on the score
    (eq. 37), so it bounds how large a score can be at distance ``r`` for queries and
    keys whose pair products :math:`h_i` vary slowly. :math:`B(0) = (d/2 + 1)/2` (all
    phases agree) is its maximum; it falls quickly but, as pemath's claim
    ``roformer.long_term_decay`` shows, not monotonically, and levels off near the
    random-phase value :math:`\approx \sqrt{\pi d/2}/3` instead of decaying to zero.

    Parameters
    ----------
    distances : array or int/float or list
        Relative distances ``r = m - n`` (integers or reals, any shape; ``B`` is even
        in ``r``). Arrays keep their namespace and device; Python values give NumPy.
    dim : int
        The rotary dimension ``d`` (even); optional with a ``spec`` that fixes it.
    base : float
        ``b > 0``; default 10000.
    scaling : pemath.scaling.RopeScaling, optional
        Use the scaled frequencies (the attention factor, a constant multiple of every
        score, is not applied).
    seq_len : int, optional
        For the sequence-length-driven scalings.
    spec : pemath.rope.Spec, optional
        Instead of ``base`` and ``scaling`` (giving both raises ``TypeError``).
    rotary_dim : int, optional
        Another name for ``dim`` (both given must agree).

    Returns
    -------
    array
        float64, shape ``distances.shape``. Phases, sines, cosines and partial sums are
        computed in float64.

    Examples
    --------
    >>> import numpy as np
    >>> from pemath import rope
    >>> np.round(rope.long_term_decay([0, 1, 100], 128), 4)
    array([32.5   , 31.5382, 10.2273])
    """
    freq, _ = frequencies_of("rope.long_term_decay", spec, dim, seq_len, rotary_dim=rotary_dim, base=base, scaling=scaling)
    if _compat.is_array(distances):
        xp = _compat.namespace(distances)
        device = _compat.device_of(distances)
    else:
        xp = _compat.namespace(np.empty(0))
        device = _compat.device_of(np.empty(0))
    wdt = _compat.working_dtype(xp, device)
    r = as_positions(distances, xp, device, wdt, name="distances")
    phase = _core.angle_table(r, freq, xp, device, wdt)
    re = xp.cumulative_sum(xp.cos(phase), axis=-1)
    im = xp.cumulative_sum(xp.sin(phase), axis=-1)
    return xp.mean(xp.sqrt(re * re + im * im), axis=-1)
