"""Mutants as patches: a wrong ingredient is patched into the module that defines it, never passed in.

The production derivations take no mutation parameters: the parts a wrong implementation would change (the
2x2 block, an angle, a sign, a permutation, a formula's constant) are module-level functions and constants of
``pemath.symbolic``. A mutant names the part it changes with the keyword the derivation once took for it;
:func:`mutate` binds that call as it was written, patches each part (``block`` in every symbolic module that
imports it) and calls the derivation with the rest.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
from collections.abc import Callable
from typing import Any
from unittest import mock

import sympy as sp

_MODULES = ("rope", "rope_algebra", "sinusoidal", "t5", "xpos", "multidim", "alibi", "decay", "scaling", "published",
            "rope_derivation", "pedagogy", "failures", "pairs")

#: The call signature each derivation had when its ingredients were parameters (positional binding of mutants).
CALLS: dict[str, list[str]] = {
    "rope.rotation": ["pos", "d", "layout", "freq", "blk"],
    "rope.relative_block": ["blk"],
    "rope.relative_symbolic_d": ["blk", "rhs_angle", "layout"],
    "rope.relative_expanded": ["dim", "layout", "blk", "perm_layout"],
    "rope_algebra.group_block": ["blk"],
    "rope_algebra.group_symbolic_d": ["blk", "rhs_angle", "layout"],
    "rope_algebra.group_dense": ["dim", "layout", "blk", "freq"],
    "rope_algebra.elementwise_form": ["dim", "layout", "rotate", "freq", "blk"],
    "rope_algebra.complex_form": ["blk", "sign", "swap"],
    "rope_algebra.layout_symbolic_d": ["index"],
    "rope_algebra.layout_conjugacy": ["dim", "perm", "blk", "index"],
    "rope_algebra.weight_permutation": ["dim", "in_features", "perm", "blk"],
    "rope_algebra.translation_symbolic_d": ["blk", "key_shift", "layout"],
    "rope_algebra.translation_dense": ["dim", "layout", "length", "blk", "key_shift"],
    "rope_algebra.backward_symbolic_d": ["blk", "rhs_sign", "layout"],
    "rope_algebra.backward_dense": ["dim", "layout", "rotate", "vjp", "rhs_sign", "blk"],
    "sinusoidal.shift_matrix": ["order", "encoding"],
    "t5.bucket_exact": ["r", "num_buckets", "max_distance", "bidirectional", "max_exact"],
    "t5.relative": ["rel"],
    "t5.exact_below_max_exact": ["configs", "max_exact"],
    "t5.monotone": [],
    "t5.bucket_count": ["configs", "span"],
    "xpos.relative_block": ["key_sign", "blk"],
    "xpos.relative_symbolic_d": ["key_sign", "blk"],
    "xpos.relative_expanded": ["dim", "layout", "key_sign"],
    "multidim.axial_relative_symbolic": ["key_axis", "blk"],
    "multidim.axial_relative_expanded": ["axis_dims", "layout", "key_perm"],
    "multidim.mrope_reduces_symbolic": ["freq"],
    "multidim.mrope_reduces_expanded": ["sections", "layout", "interleaved", "freq"],
    "alibi.relative": ["form"],
    "alibi.softmax_shift": ["lengths", "shift", "f"],
    "alibi.softmax_shift_symbolic_n": ["f"],
    "alibi.causal_equals_shifted": ["rows", "other"],
    "alibi.slopes_exact": ["ns", "ratio"],
    "alibi.slopes_symbolic": ["ratio"],
    "decay.abel_symbolic_d": ["shift"],
    "decay.abel_expanded": ["pairs", "shift"],
    "scaling.per_frequency_relative": ["freq", "power", "variants"],
    "scaling.ntk_base": ["claimed"],
    "scaling.dynamic_continuity": ["ratio"],
    "scaling.llama3_is_yarn": ["alpha", "beta"],
    "scaling.llama3_continuity": ["gamma"],
    "scaling.proportional_limits": ["kept"],
    "scaling.unit_factor": ["blend"],
    "published.wavelengths": ["convention", "last"],
    "published.gaussian_no_decay": ["independent", "claimed"],
    "rope_derivation.derive": ["initial", "step", "radius"],
    "pedagogy.integer_unbounded": ["encoding"],
    "pedagogy.normalized_depends_on_length": ["encoding"],
    "pedagogy.binary_bounded_unique": ["dims", "bits"],
    "pedagogy.binary_jump": ["dims", "bits"],
}

_T5_RULE = ("cut", "offset", "cap", "exact", "ref", "top", "e", "log")


def _sym(name: str) -> Any:
    return importlib.import_module(f"pemath.symbolic.{name}")


def _const(value: Any) -> Callable[..., Any]:
    return lambda *args: value


def _part(where: str, keyword: str, value: Any) -> list[tuple[Any, str, Any]]:
    """(module, attribute, new value) patches for one mutated ingredient."""
    mod, fn = where.split(".")
    m = _sym(mod)
    if keyword == "blk":  # the 2x2 block: everywhere it is used
        orig = _sym("rope").block
        return [(_sym(n), "block", value) for n in _MODULES if getattr(_sym(n), "block", None) is orig]
    table: dict[tuple[str, str], tuple[str, Callable[[Any], Any]]] = {
        ("rope", "rhs_angle"): ("relative_angle", lambda v: v),
        ("rope", "perm_layout"): ("difference_rotation", lambda v: lambda pos, dim, layout: _sym("rope").rotation(
            pos, dim, v)),
        ("rope_algebra", "rhs_angle"): ("product_angle", lambda v: v),
        ("rope_algebra", "rotate"): ("rotate_features", lambda v: v),
        ("rope_algebra", "freq"): ("table_frequency", lambda v: lambda i, dim: v(i)),
        ("rope_algebra", "perm"): ("layout_permutation", lambda v: _const(v)),
        ("rope_algebra", "index"): ("half_index", lambda v: v),
        ("rope_algebra", "key_shift"): ("key_shift", lambda v: _const(v)),
        ("rope_algebra", "rhs_sign"): ("INVERSE_SIGN", lambda v: v),
        ("rope_algebra", "vjp"): ("vjp", lambda v: v),
        ("rope_algebra", "sign"): ("COMPLEX_SIGN", lambda v: v),
        ("rope_algebra", "swap"): ("complex_pair", lambda v: (lambda xa, xb: xb + sp.I * xa) if v else
                                   (lambda xa, xb: xa + sp.I * xb)),
        ("sinusoidal", "encoding"): ("pair", lambda v: v),
        ("t5", "max_exact"): ("max_exact", lambda v: v),
        ("t5", "rel"): ("relative_position", lambda v: v),
        ("xpos", "key_sign"): ("KEY_SIGN", lambda v: v),
        ("multidim", "key_axis"): ("key_axis", lambda v: v),
        ("multidim", "key_perm"): ("key_axis", lambda v: lambda a: v[int(a)]),
        ("multidim", "freq"): ("mrope_frequency", lambda v: lambda i, c, r, b: v(i, c)),
        ("alibi", "form"): ("claimed_bias", lambda v: v),
        ("alibi", "shift"): ("logit_shift", lambda v: v),
        ("alibi", "f"): ("normaliser", lambda v: v),
        ("alibi", "other"): ("shifted", lambda v: v),
        ("alibi", "ratio"): ("slope_ratio", lambda v: v),
        ("decay", "shift"): ("PARTIAL_SUM_SHIFT", lambda v: v),
        ("scaling", "freq"): ("scaled_frequency", lambda v: v),
        ("scaling", "power"): ("FACTOR_POWER", lambda v: v),
        ("scaling", "variants"): ("variant_frequencies", lambda v: _const(v)),
        ("scaling", "claimed"): ("ntk_formula", lambda v: v),
        ("scaling", "ratio"): ("dynamic_ratio", lambda v: v),
        ("scaling", "gamma"): ("llama3_gamma", lambda v: v),
        ("scaling", "kept"): ("proportional_kept", lambda v: v),
        ("scaling", "blend"): ("blend", lambda v: v),
        ("published", "last"): ("claimed_last_wavelength", lambda v: _const(sp.sympify(v))),
        ("published", "claimed"): ("claimed_expectation", lambda v: _const(sp.sympify(v))),
        ("rope_derivation", "initial"): ("claimed_initial", lambda v: _const(sp.sympify(v))),
        ("rope_derivation", "step"): ("claimed_step", lambda v: _const(sp.sympify(v))),
        ("rope_derivation", "radius"): ("radius", lambda v: v),
        ("pedagogy", "bits"): ("binary_bits", lambda v: v),
    }
    if (mod, keyword) == ("pedagogy", "encoding"):
        return [(m, "integer_entry" if fn == "integer_unbounded" else "normalized_entry", value)]
    if (mod, keyword) not in table:
        raise KeyError(f"{where}: no ingredient is called {keyword!r}")
    attr, conv = table[(mod, keyword)]
    if not hasattr(m, attr):
        raise KeyError(f"{where}: pemath.symbolic.{mod} has no {attr!r}")
    return [(m, attr, conv(value))]


def mutate(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Callable[[], Any]:
    """A thunk running ``fn`` as the call ``fn(*args, **kwargs)`` was once written, its ingredients patched in."""
    mod = fn.__module__.rsplit(".", 1)[1]
    where = f"{mod}.{fn.__name__}"
    names = CALLS.get(where, list(inspect.signature(fn).parameters))
    if len(args) > len(names):
        raise TypeError(f"{where} took {len(names)} arguments, got {len(args)}")
    bound = dict(zip(names, args))
    bound.update(kwargs)
    params = inspect.signature(fn).parameters
    plain = {k: v for k, v in bound.items() if k in params}
    patches: list[tuple[Any, str, Any]] = []
    rule = {}
    if where == "scaling.llama3_is_yarn":  # the two ramp bounds are one ingredient
        low, high = _sym("scaling").YARN_BOUNDS
        patches.append((_sym("scaling"), "YARN_BOUNDS", (bound.pop("alpha", low), bound.pop("beta", high))))
    for k, v in bound.items():
        if k in params:
            continue
        if mod == "t5" and k in _T5_RULE:
            rule[k] = v
        else:
            patches += _part(where, k, v)

    def run() -> Any:
        with contextlib.ExitStack() as stack:
            for m, attr, value in patches:
                stack.enter_context(mock.patch.object(m, attr, value))
            if rule:
                stack.enter_context(mock.patch.dict(_sym("t5").RULE, rule))
            return fn(**plain)

    return run
