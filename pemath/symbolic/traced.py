r"""The shipped array code run on symbolic arrays: what ``pemath.rope``'s kernel does at feature ``k`` of a
head of ``2h`` features, for every ``h`` at once.

:class:`Traced` is a one-axis (or, after a ``stack``, two-axis) array of symbolic length whose entry at a
symbolic index is a SymPy expression; :data:`NAMESPACE` is the array namespace the shipped kernel is given in
place of NumPy's. It implements exactly the operations the kernel's ``rotate`` uses (basic slicing with ``...``,
``+ - *``, ``astype``, ``concat``, ``stack`` and ``reshape``) with Python's and NumPy's semantics written out for
symbolic sizes (a slice ``a:b:s`` of a length-``L`` axis holds ``ceil((min(b, L) - a) / s)`` entries, entry
``j`` being ``a + j s``; a C-order reshape of ``(n, 2)`` to ``(2n,)`` reads entry ``k`` at
``(floor(k/2), k mod 2)``), and refuses everything else, and every size it cannot decide from the symbols'
assumptions, with :class:`TraceError`. So a change to the kernel's indexing either traces to other entries
(and the claim that reads them fails) or does not trace at all (and the claim fails).

The entries are built unevaluated: the ``floor``, ``Mod`` and ``Piecewise`` the indexing introduces are
recorded as built and evaluated by the proof kernel when it decides the step that reads them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import sympy as sp

__all__ = ["NAMESPACE", "TraceError", "Traced", "vector"]


class TraceError(TypeError):
    """The shipped code did something the symbolic arrays do not model, or a size could not be decided."""


def _decide(rel: Any, what: str) -> bool:
    """A relation between sizes, decided from the symbols' assumptions, or refused."""
    v = sp.sympify(rel)
    if v is sp.true or v is sp.false:
        return bool(v)
    raise TraceError(f"{what}: {rel} is not decided by the symbols' assumptions")


def _same(a: Any, b: Any, what: str) -> None:
    if sp.simplify(sp.sympify(a) - sp.sympify(b)) != 0:
        raise TraceError(f"{what}: sizes {a} and {b} differ")


Entry = Callable[..., sp.Expr]


class Traced:
    """A symbolic array: its ``shape`` (SymPy sizes) and ``entry(*index)`` (an expression at symbolic indices)."""

    def __init__(self, shape: tuple[Any, ...], entry: Entry) -> None:
        self.shape = tuple(sp.sympify(s) for s in shape)
        self._entry = entry

    ndim = property(lambda self: len(self.shape))
    dtype = "traced"

    def __call__(self, *index: Any) -> sp.Expr:
        """The entry at ``index`` (symbolic), built unevaluated."""
        if len(index) != self.ndim:
            raise TraceError(f"an entry of a {self.ndim}-axis array takes {self.ndim} indices, got {len(index)}")
        with sp.evaluate(False):
            return self._entry(*index)

    # ---------------------------------------------------------------- indexing
    def __getitem__(self, key: Any) -> Traced:
        if not (isinstance(key, tuple) and len(key) == 2 and key[0] is Ellipsis and isinstance(key[1], slice)):
            raise TraceError(f"only x[..., a:b:s] is traced, got the index {key!r}")
        if self.ndim != 1:
            raise TraceError(f"slicing is traced on one-axis arrays, this one has shape {self.shape}")
        length = self.shape[0]
        s = key[1]
        step = 1 if s.step is None else s.step
        if not (isinstance(step, int) and not isinstance(step, bool) and step > 0):
            raise TraceError(f"only a positive int step is traced, got {s.step!r}")
        start = sp.S.Zero if s.start is None else sp.sympify(s.start)
        stop = length if s.stop is None else sp.sympify(s.stop)
        for name, v in (("start", start), ("stop", stop)):
            if not (v.is_integer and v.is_nonnegative):  # a negative index counts from the end: not traced
                raise TraceError(f"the slice's {name} {v} is not known to be a nonnegative integer")
        stop = stop if _decide(sp.Le(stop, length), "the slice's stop against the length") else length
        count = sp.ceiling((stop - start) / step) if _decide(sp.Le(start, stop), "the slice's start") else sp.S.Zero
        return Traced((count,), lambda j, f=self._entry: f(start + step * j))

    # ---------------------------------------------------------------- arithmetic
    def _binary(self, other: Any, op: Callable[[Any, Any], Any], name: str) -> Traced:
        if not isinstance(other, Traced):
            raise TraceError(f"{name} of a traced array and {type(other).__name__} is not traced")
        if self.ndim != other.ndim:
            raise TraceError(f"{name}: arrays of {self.ndim} and {other.ndim} axes (broadcasting is not traced)")
        for a, b in zip(self.shape, other.shape):
            _same(a, b, name)
        f, g = self._entry, other._entry
        return Traced(self.shape, lambda *k: op(f(*k), g(*k)))

    def __mul__(self, other: Any) -> Traced:
        return self._binary(other, lambda a, b: a * b, "product")

    def __add__(self, other: Any) -> Traced:
        return self._binary(other, lambda a, b: a + b, "sum")

    def __sub__(self, other: Any) -> Traced:
        return self._binary(other, lambda a, b: a - b, "difference")


def _two_vectors(arrays: Sequence[Any], axis: int, name: str) -> tuple[Traced, Traced]:
    """The two one-axis arrays ``concat`` and ``stack`` trace, along the last axis; anything else is refused."""
    if len(arrays) != 2 or axis != -1 or any(not isinstance(a, Traced) or a.ndim != 1 for a in arrays):
        raise TraceError(f"{name} of two one-axis arrays along axis -1 is traced, got {len(arrays)} arrays, axis {axis}")
    return arrays[0], arrays[1]


class _Namespace:
    """The array-API functions ``rotate`` calls, on :class:`Traced` arrays."""

    @staticmethod
    def astype(x: Traced, dtype: Any) -> Traced:
        if not isinstance(x, Traced):
            raise TraceError(f"astype of {type(x).__name__} is not traced")
        return x  # exact entries: the dtype changes no symbolic value

    @staticmethod
    def concat(arrays: Sequence[Traced], axis: int = 0) -> Traced:
        a, b = _two_vectors(arrays, axis, "concat")
        la = a.shape[0]
        return Traced((la + b.shape[0],),
                      lambda k, f=a._entry, g=b._entry: sp.Piecewise((f(k), sp.Lt(k, la)), (g(k - la), True)))

    @staticmethod
    def stack(arrays: Sequence[Traced], axis: int = 0) -> Traced:
        a, b = _two_vectors(arrays, axis, "stack")
        _same(a.shape[0], b.shape[0], "stack")
        return Traced((a.shape[0], 2), lambda k, c, f=a._entry, g=b._entry:
                      sp.Piecewise((f(k), sp.Eq(c, 0)), (g(k), sp.Eq(c, 1))))

    @staticmethod
    def reshape(x: Traced, shape: tuple[Any, ...]) -> Traced:
        if not (isinstance(x, Traced) and x.ndim == 2 and len(shape) == 1):
            raise TraceError(f"only a C-order reshape of two axes into one is traced, got {getattr(x, 'shape', x)} "
                             f"to {shape}")
        n, w = x.shape
        _same(sp.sympify(shape[0]), n * w, "reshape")
        return Traced((shape[0],), lambda k, f=x._entry: f(sp.floor(k / w), sp.Mod(k, w)))


#: The namespace handed to the shipped kernel in place of NumPy's.
NAMESPACE = _Namespace()


def vector(length: Any, base: sp.IndexedBase) -> Traced:
    """The one-axis array of ``length`` whose entry ``k`` is ``base[k]``."""
    return Traced((length,), lambda k: base[k])
