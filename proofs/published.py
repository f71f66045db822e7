"""Narrate and decide pemath's published claims; exits non-zero if any step fails.

Run: python proofs/published.py [--latex]
"""

import sys

from pemath.claims import family_main

if __name__ == "__main__":
    sys.exit(family_main("published"))
