"""What every encoding's oracle shares.

* ``arrays``: reading any backend's arrays on the host, exactly; validating a call once
  into a case (``rope_case``, ``sinusoidal_case``) that the rest of the oracle receives;
* ``tolerance``: the unit roundoffs, and the frequency and phase errors of an honest
  float32 computation, from which each encoding's bound is built (the derivation is the
  module's docstring and ``docs/tolerance.rst``);
* ``report``: the comparison (``compare``), the candidates' search (``first_match``) and the
  shared lines of a failure message (where the mismatches are, the diagnosis);
* ``vacuity``: the warning for elements whose bound cannot fail.

Nothing here imports an encoding's package (``_rope``, ``_tables``).
"""
