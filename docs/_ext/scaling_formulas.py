"""The ``pemath-scaling-formulas`` directive: every scaling's frequency formula, written by SymPy at build time.

The formulas are :func:`pemath.symbolic.scaling.variant_frequencies` (the expressions the claim
``scaling.relative`` proves position-free) rendered with :func:`sympy.latex`; the pemath call and
Hugging Face's ``rope_type`` stand beside each. Nothing in the formulas is typed by hand.
"""

from __future__ import annotations

#: variant -> (Hugging Face rope_type, the pemath call, what the symbols are)
ROWS = {
    "Linear": ('``"linear"``', "``scaling.Linear(factor)``", r":math:`s` = ``factor``"),
    "NTK": ("(none: a larger ``rope_theta``)", "``scaling.NTK(factor)``", r":math:`s` = ``factor``, :math:`d = 2h`"),
    "DynamicNTK": ('``"dynamic"``', "``scaling.DynamicNTK(factor, original_max_position)``, ``seq_len=L``",
                   r":math:`L_0` = HF's ``max_position_embeddings``, :math:`L` the sequence length"),
    "YaRN (index ramp)": ('``"yarn"``', "``scaling.YaRN(factor, original_max_position, beta_fast=, beta_slow=)``",
                          r":math:`c_{lo}, c_{hi}` the pair indices where :math:`\beta_{fast}`, :math:`\beta_{slow}` "
                          r"turns fit in :math:`L_0` (HF's ``find_correction_range``); attention factor "
                          r":math:`0.1 \ln s + 1`"),
    "YaRN (ratio ramp)": ('(the YaRN paper)', '``scaling.YaRN(..., ramp="ratio")``',
                          r"the ramp in turns :math:`L_0 \theta_i / 2\pi` between :math:`\alpha` and :math:`\beta`"),
    "Llama3": ('``"llama3"``', "``scaling.Llama3(factor, original_max_position, low_freq_factor=l, "
               "high_freq_factor=h_f)``", r"wavelength :math:`2\pi/\theta_i` against :math:`L_0/h_f` and "
               r":math:`L_0/l`"),
    "LongRoPE": ('``"longrope"``', "``scaling.LongRoPE(short_factor, long_factor, original_max_position)``, "
                 "``seq_len=L``", r":math:`f_i` from ``long_factor`` when :math:`L > L_0`, else ``short_factor``"),
    "Proportional": ('``"proportional"``', "``scaling.Proportional(fraction, factor=)``",
                     r":math:`p` = ``fraction`` (HF's ``partial_rotary_factor``)"),
}


def rows() -> list[tuple[str, str, str, str, str]]:
    """(variant, rope_type, pemath call, LaTeX of theta'_i, the symbols), one per variant."""
    import sympy as sp

    from pemath.symbolic import scaling

    formulas = scaling.variant_frequencies()
    missing = set(formulas) ^ set(ROWS)
    if missing:
        raise ValueError(f"scaling_formulas.ROWS and variant_frequencies() disagree on {sorted(missing)}")
    return [(name, *ROWS[name][:2], sp.latex(expr), ROWS[name][2]) for name, expr in formulas.items()]


def setup(app):
    # docutils is imported here, so the tests can import rows() with the test extra alone
    from docutils.parsers.rst import Directive

    from _rst import parsed

    class ScalingFormulas(Directive):
        has_content = False

        def run(self):
            lines = []
            for name, rope_type, call, tex, symbols in rows():
                lines += [f"**{name}**: ``rope_type`` {rope_type}; {call}", "", ".. math::", "",
                          f"   \\theta_i' = {tex}", "", f"with {symbols}.", ""]
            return parsed(self, lines)

    app.add_directive("pemath-scaling-formulas", ScalingFormulas)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
