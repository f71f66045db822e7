"""Narrate and decide pemath's multidim claims; exits non-zero if any step fails.

Run: python proofs/multidim.py [--latex]
"""

import sys

from pemath.claims import family_main

if __name__ == "__main__":
    sys.exit(family_main("multidim"))
