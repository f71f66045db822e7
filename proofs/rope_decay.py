"""Narrate and decide pemath's rope decay claims; exits non-zero if any step fails.

Run: python proofs/rope_decay.py [--latex]
"""

import sys

from pemath.claims import family_main

if __name__ == "__main__":
    sys.exit(family_main("rope_decay"))
