"""RoFormer's figure 2: the relative upper bound (1/(d/2)) sum_j |S_j| against the relative distance."""

import numpy as np
from matplotlib import pyplot as plt

from pemath import rope

r = np.arange(0, 251)
bound = rope.long_term_decay(r, 128)  # d = 128, theta_i = 10000^(-2i/d)

fig, ax = plt.subplots()
ax.plot(r, bound, lw=1.2)
ax.axhline(np.sqrt(np.pi * 64) / 3, color="0.4", ls="--", lw=0.8, label=r"random-phase level $\sqrt{\pi d/2}/3$")
ax.set_xlabel("relative distance m - n")
ax.set_ylabel("relative upper bound")
ax.set_title("RoPE long-term decay (RoFormer, fig. 2), d = 128")
ax.set_xlim(0, 250)
ax.legend()
