"""The sinusoidal encoding of positions 0..127 in 128 dimensions (Vaswani et al.'s interleaved layout)."""

import numpy as np
from matplotlib import pyplot as plt

from pemath import sinusoidal

positions = np.arange(128)
pe = sinusoidal.encode(positions, 128, convention="interleaved")  # shape (128, 128)

fig, ax = plt.subplots(figsize=(7.0, 4.0))
im = ax.imshow(pe, aspect="auto", cmap="RdBu_r", vmin=-1, vmax=1, origin="lower", interpolation="nearest")
ax.set_xlabel("feature j (even j: sin, odd j: cos)")
ax.set_ylabel("position p")
ax.set_title("sinusoidal encoding PE(p), d = 128, base 10000")
ax.grid(False)
fig.colorbar(im, ax=ax, shrink=0.85)
