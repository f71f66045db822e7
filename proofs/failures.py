"""Narrate and decide pemath's failures claims; exits non-zero if any step fails.

Run: python proofs/failures.py [--latex]
"""

import sys

from pemath.claims import family_main

if __name__ == "__main__":
    sys.exit(family_main("failures"))
