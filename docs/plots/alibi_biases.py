"""ALiBi: the head slopes, the causal bias of head 1, and each head's bias against the distance."""

import numpy as np
from matplotlib import pyplot as plt

from pemath import alibi

n_heads, L = 8, 16
m = alibi.slopes(n_heads)
b = alibi.bias(n_heads, L, L, form="causal")  # (heads, query, key), -inf above the diagonal

fig, axes = plt.subplots(1, 3, figsize=(9.0, 3.0), layout="constrained")
axes[0].semilogy(np.arange(1, n_heads + 1), m, "o-")
axes[0].set_xlabel("head h")
axes[0].set_ylabel("slope $m_a$")
axes[0].set_title("slopes $2^{-8h/n}$, n = 8 heads")

im = axes[1].imshow(np.ma.masked_invalid(b[0]), cmap="viridis", interpolation="nearest")
axes[1].set_title(f"head 1 (m = {m[0]:g}): bias $-m\\,(i - j)$")
axes[1].set_xlabel("key j")
axes[1].set_ylabel("query i")
axes[1].grid(False)
axes[1].set_xticks(range(0, L, 5))
axes[1].set_yticks(range(0, L, 5))
fig.colorbar(im, ax=axes[1], shrink=0.9)

last = b[:, -1, :]  # the last query (i = 15) against every key
for h in range(n_heads):
    axes[2].plot(L - 1 - np.arange(L), last[h], marker=".", ms=3, lw=1, label=f"h = {h + 1}")
axes[2].set_xlabel("distance i - j")
axes[2].set_ylabel("bias")
axes[2].set_title("every head, query i = 15")
axes[2].legend(fontsize=6, ncol=2)
