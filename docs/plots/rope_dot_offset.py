"""The RoPE score <R(m) q, R(m + r) k> with k = q against the offset r (seeded random q)."""

import numpy as np
from matplotlib import pyplot as plt

from pemath import rope

rng = np.random.default_rng(0)
d = 128
offsets = np.arange(0, 4097)
q = rng.standard_normal((64, d))  # 64 random vectors; k = q

# The score depends on the offset only: rotate k by r, leave q at position 0.
k_rot = rope.apply(np.broadcast_to(q[:, None, :], (64, offsets.size, d)).copy(), offsets, layout="half")
scores = np.einsum("vd,vrd->vr", q, k_rot) / d  # normalised: 1 at r = 0 on average

fig, ax = plt.subplots()
ax.plot(offsets, scores[0], lw=0.6, alpha=0.7, label="one random q = k")
ax.plot(offsets, scores.mean(axis=0), lw=1.2, color="C3", label="mean over 64 random q = k")
ax.set_xscale("symlog", linthresh=10)
ax.set_xlabel("relative offset r = n - m")
ax.set_ylabel(r"$\langle R(m)q, R(n)q\rangle / d$")
ax.set_title("RoPE score against the offset, d = 128, base 10000")
ax.legend()
