"""The oracle for RoPE kernels (and xPos, its scaled variant).

One call goes: ``asserts.assert_rope_close`` validates the call once (``_core.arrays.rope_case``
after the spec is resolved), tries the float32 pass test (``certain``), then the exact
comparison in blocks (``exact``) against the bound of ``tolerance`` (``vacuity`` warns where
it cannot fail); an output outside the bound may still be an honest computation the bound
does not cover (``honest``: llama.cpp's float32 recurrence, recognised by emulation). A
failure is reported by ``diagnose``: what the output measures (``recover``), then the
alternatives, listed (``diagnose``, ``diagnose_scaling``) or fitted to the measurement
(``fitted``).

The extension points, for a new diagnosis:

* a mistake that can be listed: a group in ``diagnose.GROUPS`` (a generator
  ``group(j) -> Iterator[(label, thunk)]``; ``thunk()`` returns the ``Verdict`` of the
  alternative, built with ``j.apply`` (``rope.apply`` with some Spec fields changed),
  ``j.rotate`` (x rotated by given phases) or ``j.judge`` (any array), each judged with
  the derived bound of the alternative's own phases);
* a family of mistakes with free parameters: a generator in ``fitted.FAMILIES`` that fits
  its parameters to the measurement and yields the fitted formula the same way;
* ``diagnose.FALLBACK_GROUPS``: groups tried only when no other names the output (the
  honest computations' own variants, ``honest.variants``).

An alternative is named only when it is told apart from the right output under the same
tolerance (``Verdict.separated``): at positions where an off-by-one is within the bound, no
off-by-one is named.

Other entry points: ``multi_axis`` (M-RoPE, axial), ``nope`` (layers without RoPE),
``backward`` (the transposed rotation), ``xpos``, ``conformance`` (``check_rope_kernel``).
"""
