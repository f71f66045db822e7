"""Narrate and decide pemath's xpos claims; exits non-zero if any step fails.

Run: python proofs/xpos.py [--latex]
"""

import sys

from pemath.claims import family_main

if __name__ == "__main__":
    sys.exit(family_main("xpos"))
