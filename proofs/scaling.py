"""Narrate and decide pemath's scaling claims (Linear, NTK, Dynamic NTK, YaRN, Llama 3.1, LongRoPE, p-RoPE); exits non-zero if any step fails.

Run: python proofs/scaling.py [--latex]
"""

import sys

from pemath.claims import family_main

if __name__ == "__main__":
    sys.exit(family_main("scaling"))
