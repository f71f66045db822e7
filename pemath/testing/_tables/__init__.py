"""The oracle for the tables: sinusoidal encodings, ALiBi biases, T5 buckets.

``asserts`` (the public asserts), ``tolerance`` (their derived bounds), ``vacuity``
(sinusoidal entries whose bound cannot fail), ``diagnose`` (what a wrong table is: the
candidates tried and the measurements fitted).
"""
