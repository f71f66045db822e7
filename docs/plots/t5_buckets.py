"""T5's relative position buckets against key - query (32 buckets, max_distance 128)."""

import numpy as np
from matplotlib import pyplot as plt

from pemath import t5

r = np.arange(-200, 201)
fig, ax = plt.subplots()
ax.step(r, t5.bucket(r, bidirectional=True), where="mid", label="bidirectional (encoder)")
ax.step(r, t5.bucket(r, bidirectional=False), where="mid", label="unidirectional (decoder)")
for x in (-128, 128):
    ax.axvline(x, color="0.4", ls=":", lw=0.8)
ax.set_xlabel("relative position key - query")
ax.set_ylabel("bucket")
ax.set_title("T5 buckets: num_buckets = 32, max_distance = 128")
ax.legend()
