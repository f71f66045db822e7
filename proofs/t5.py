"""Narrate and decide pemath's t5 claims; exits non-zero if any step fails.

Run: python proofs/t5.py [--latex]
"""

import sys

from pemath.claims import family_main

if __name__ == "__main__":
    sys.exit(family_main("t5"))
