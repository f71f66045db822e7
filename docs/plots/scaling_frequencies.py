"""Frequencies and wavelengths of every RoPE scaling variant, d = 128, base 10000, factor 8."""

import numpy as np
from matplotlib import pyplot as plt

from pemath import rope, scaling

d, base, s, L0 = 128, 10000.0, 8.0, 4096
# LongRoPE's factors are searched per model; this ramp from 1 to s is only an illustration.
ramp = np.linspace(1.0, s, d // 2)
variants = [
    ("RoPE (no scaling)", None, None),
    ("Linear (PI)", scaling.Linear(s), None),
    ("NTK-aware", scaling.NTK(s), None),
    ("Dynamic NTK, seq_len 4 L0", scaling.DynamicNTK(s, L0), 4 * L0),
    ("YaRN", scaling.YaRN(s, L0), None),
    ("Llama 3.1", scaling.Llama3(s, L0), None),
    ("LongRoPE (illustrative long_factor)", scaling.LongRoPE(np.ones(d // 2), ramp, L0, factor=s), 2 * L0),
    ("p-RoPE, p = 0.75", scaling.Proportional(0.75), None),
]

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(8.0, 3.8))
i = np.arange(d // 2)
for k, (name, sc, seq_len) in enumerate(variants):
    theta = rope.inv_freq(d, base=base, scaling=sc, seq_len=seq_len)
    theta = np.where(theta > 0, theta, np.nan)  # p-RoPE's unrotated pairs: frequency 0, no wavelength
    style = {"lw": 1.2, "ls": "-" if k < 5 else "--", "color": f"C{k}"}
    ax1.plot(i, theta, label=name, **style)
    ax2.plot(i, 2 * np.pi / theta, **style)
ax2.axhline(L0, color="0.3", lw=0.8, ls=":")
ax2.text(1, L0 * 1.3, "L0 = 4096", fontsize=8)
for ax, what in ((ax1, r"frequency $\theta_i'$ (rad / position)"), (ax2, r"wavelength $2\pi/\theta_i'$ (positions)")):
    ax.set_yscale("log")
    ax.set_xlabel("pair index i")
    ax.set_ylabel(what)
fig.legend(loc="lower center", ncol=4, fontsize=7, bbox_to_anchor=(0.5, -0.08))
fig.suptitle("RoPE scalings, d = 128, base 10000, factor 8")
fig.tight_layout(rect=(0, 0.08, 1, 1))
