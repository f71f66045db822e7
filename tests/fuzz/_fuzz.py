"""The fuzzing machinery: hostile values, the oracle, the settings, the coverage registry.

A fuzz test draws a valid call of a public function, replaces one argument by a hostile
value, calls, and judges the outcome:

* a ``ValueError`` or ``TypeError`` whose message names the replaced argument: good;
* any other exception (IndexError, ZeroDivisionError, OverflowError, KeyError,
  AttributeError, a RuntimeWarning escalated to an error, ...): a failure;
* a result: checked by the spec's own properties (shape, dtype, finiteness, identities),
  and, where the hostile value has a *clean equivalent* (a contiguous writable copy, the
  Python int of a NumPy integer, the float64 cast of exactly representable values, the
  NumPy twin of an array-api-strict array), it must equal the result of the clean call.

Each hostile value carries what is expected of it (:class:`H`): ``reject`` (must raise),
``equiv`` (raise, or equal the clean call), ``must`` (must be accepted and equal the clean
call) or ``maybe`` (raise, or pass the properties).
"""

from __future__ import annotations

import math
import os
import re
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import array_api_strict as xps
import ml_dtypes
import numpy as np
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st

from pemath import PrecisionWarning
from pemath._compat import is_array, to_numpy

# ---------------------------------------------------------------------------------------
# Settings: modest by default, a bounded campaign with PEMATH_FUZZ_EXAMPLES=N.

DEFAULT_EXAMPLES = 100
EXAMPLES = int(os.environ.get("PEMATH_FUZZ_EXAMPLES", "0") or 0) or DEFAULT_EXAMPLES
#: derandomized (the same examples on every run, as CI needs) unless PEMATH_FUZZ_RANDOM=1.
DERANDOMIZE = os.environ.get("PEMATH_FUZZ_RANDOM", "") in ("", "0")


def fuzz_settings(scale: float = 1.0) -> settings:
    """Settings of one fuzz test: ``scale`` times the example count (cheap tests get more)."""
    return settings(
        max_examples=max(1, int(EXAMPLES * scale)),
        derandomize=DERANDOMIZE,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
        phases=[Phase.explicit, Phase.generate, Phase.shrink],
        print_blob=True,
        report_multiple_bugs=False,
    )


# ---------------------------------------------------------------------------------------
# The coverage registry: every public callable must be named by some fuzz test.

COVERED: set[str] = set()


def covers(*names: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Mark a test as fuzzing the public callables ``names`` (qualified: ``pemath.rope.apply``)."""

    def mark(fn: Callable[..., Any]) -> Callable[..., Any]:
        COVERED.update(names)
        return fn

    return mark


# ---------------------------------------------------------------------------------------
# What is expected of a hostile value.

REJECT, EQUIV, MUST, MAYBE = "reject", "equiv", "must", "maybe"


@dataclass(frozen=True, repr=False)
class H:
    """A hostile value, what must happen with it, and its clean equivalent."""

    value: Any
    expect: str = MAYBE
    clean: Any = None
    label: str = ""
    #: applied to the clean call's result before comparing (e.g. a cast to float16).
    post: Callable[[Any], Any] | None = None

    def __repr__(self) -> str:
        return f"H({self.label or _short(self.value)}, {self.expect})"


def _short(v: Any) -> str:
    if is_array(v) and not isinstance(v, type):
        return f"<{type(v).__module__.split('.')[0]} array {tuple(v.shape)} {v.dtype}>"
    text = repr(v)
    return text if len(text) < 60 else text[:57] + "..."


def reject(value: Any, label: str = "") -> H:
    return H(value, REJECT, label=label)


def equiv(value: Any, clean: Any, label: str = "", post: Callable[[Any], Any] | None = None) -> H:
    return H(value, EQUIV, clean, label, post)


def must(value: Any, clean: Any, label: str = "", post: Callable[[Any], Any] | None = None) -> H:
    return H(value, MUST, clean, label, post)


def maybe(value: Any, label: str = "") -> H:
    return H(value, MAYBE, label=label)


def valid(value: Any, label: str = "") -> H:
    """A value that must be accepted (checked by the spec's properties only)."""
    return H(value, MUST, value, label)


# ---------------------------------------------------------------------------------------
# The oracle.


class Internal(AssertionError):
    """The call failed in a way a user must never see."""


@dataclass
class Outcome:
    accepted: bool
    result: Any = None
    error: BaseException | None = None


_FORBIDDEN = (IndexError, KeyError, ArithmeticError, AttributeError, LookupError, AssertionError)


def names_pattern(names: Iterable[str]) -> re.Pattern[str]:
    alts = []
    for n in names:
        esc = re.escape(n)
        alts.append(rf"(?<![A-Za-z0-9_]){esc}(?![A-Za-z0-9_])" if len(n) <= 2 else esc)
    return re.compile("|".join(alts))


def call(fn: Callable[..., Any], *args: Any, names: Iterable[str], tolerate_invalid: bool = False,
         **kwargs: Any) -> Outcome:
    """Call under warnings-as-errors; classify the result; raise :class:`Internal` on a bad failure."""
    names = tuple(names)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        if tolerate_invalid:
            warnings.filterwarnings("ignore", "invalid value encountered", RuntimeWarning)
        warnings.simplefilter("error", DeprecationWarning)
        warnings.simplefilter("ignore", PrecisionWarning)
        with np.errstate(divide="warn", over="warn", invalid="warn", under="ignore"):
            try:
                result = fn(*args, **kwargs)
            except (ValueError, TypeError) as exc:
                if isinstance(exc, _FORBIDDEN):
                    raise Internal(f"{type(exc).__name__} (an internal error type): {exc}") from exc
                msg = str(exc)
                if names and not names_pattern(names).search(msg):
                    raise Internal(
                        f"{type(exc).__name__} does not name the argument {' / '.join(names)}: {msg}"
                    ) from exc
                return Outcome(False, error=exc)
            except Exception as exc:
                raise Internal(f"internal error {type(exc).__name__}: {exc}") from exc
    return Outcome(True, result)


def same(a: Any, b: Any, path: str = "result") -> None:
    """Assert ``a`` and ``b`` are the same result: arrays bit-equal (NaN equal to NaN) with equal dtype."""
    if isinstance(a, tuple) and isinstance(b, tuple) or isinstance(a, list) and isinstance(b, list):
        assert len(a) == len(b), f"{path}: lengths {len(a)} != {len(b)}"
        for i, (u, v) in enumerate(zip(a, b)):
            same(u, v, f"{path}[{i}]")
        return
    if isinstance(a, dict) and isinstance(b, dict):
        assert a.keys() == b.keys(), f"{path}: keys {a.keys()} != {b.keys()}"
        for k in a:
            same(a[k], b[k], f"{path}[{k!r}]")
        return
    if is_array(a) or is_array(b) or isinstance(a, np.generic):
        assert type(a).__module__.split(".")[0] == type(b).__module__.split(".")[0], (
            f"{path}: {type(a)} vs {type(b)}"
        )
        an, bn = np.asarray(to_numpy(a)), np.asarray(to_numpy(b))
        assert an.dtype == bn.dtype, f"{path}: dtype {an.dtype} != {bn.dtype}"
        assert an.shape == bn.shape, f"{path}: shape {an.shape} != {bn.shape}"
        if an.dtype.kind in "fcV" or an.dtype in (ml_dtypes.bfloat16,):
            af, bf = an.astype(np.complex128 if an.dtype.kind == "c" else np.float64), bn.astype(
                np.complex128 if bn.dtype.kind == "c" else np.float64
            )
            ok = (af == bf) | (np.isnan(af) & np.isnan(bf))
            assert bool(np.all(ok)), f"{path}: values differ at {np.argwhere(~ok)[:5].tolist()}"
        else:
            assert np.array_equal(an, bn), f"{path}: values differ"
        return
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return
    assert a == b, f"{path}: {a!r} != {b!r}"


@dataclass
class Spec:
    """One public callable under fuzzing.

    ``base`` draws valid keyword arguments; ``kinds`` maps each fuzzed argument to a
    function ``base kwargs -> strategy of H``; ``check(result, kwargs)`` asserts the
    properties of an accepted call; ``aliases`` lists further words an error about the
    argument may use (``x.shape`` for ``x``).
    """

    fn: Callable[..., Any]
    base: st.SearchStrategy[dict[str, Any]]
    kinds: dict[str, Callable[[dict[str, Any]], st.SearchStrategy[H]]]
    check: Callable[[Any, dict[str, Any]], None] = lambda result, kw: None
    aliases: dict[str, tuple[str, ...]] = field(default_factory=dict)
    args: tuple[str, ...] = ()  # names passed positionally (positional-only parameters)
    #: ``(argument, H) -> bool``: NumPy's "invalid value" RuntimeWarning is tolerated for this
    #: hostile value (a known issue reported upstream, see the spec's comment).
    tolerate_invalid: Callable[[str, H], bool] = lambda name, h: False

    def invoke(self, kw: dict[str, Any], names: Iterable[str], tolerate: bool = False) -> Outcome:
        pos = [kw[n] for n in self.args]
        rest = {k: v for k, v in kw.items() if k not in self.args}
        if not tolerate:
            return call(self.fn, *pos, names=names, **rest)
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "invalid value encountered", RuntimeWarning)
            return call(self.fn, *pos, names=names, tolerate_invalid=True, **rest)


def run_spec(spec: Spec, data: st.DataObject) -> None:
    """One fuzz example: a valid call with one argument made hostile, judged by the oracle."""
    base = data.draw(spec.base, label="base")
    name = data.draw(st.sampled_from(sorted(spec.kinds)), label="argument")
    h = data.draw(spec.kinds[name](base), label=name)
    kw = {**base, name: h.value}
    names = (name, *spec.aliases.get(name, ()))
    out = spec.invoke(kw, names, tolerate=spec.tolerate_invalid(name, h))
    if not out.accepted:
        assert h.expect != MUST, f"{name}={h!r} must be accepted, got {type(out.error).__name__}: {out.error}"
        return
    assert h.expect != REJECT, f"{name}={h!r} was accepted silently (it must raise), result {_short(out.result)}"
    spec.check(out.result, kw)
    if h.expect in (EQUIV, MUST) and h.clean is not h.value:
        clean_out = spec.invoke({**base, name: h.clean}, names, tolerate=spec.tolerate_invalid(name, h))
        assert clean_out.accepted, f"the clean call {name}={_short(h.clean)} raised {clean_out.error!r}"
        expected = h.post(clean_out.result) if h.post else clean_out.result
        same(out.result, expected)


def run_valid(spec: Spec, data: st.DataObject) -> None:
    """A plain valid call must be accepted and pass the properties."""
    base = data.draw(spec.base, label="base")
    out = spec.invoke(base, ())
    assert out.accepted, f"a valid call raised {out.error!r}"
    spec.check(out.result, base)


def loosen(kind: Callable[[dict[str, Any]], st.SearchStrategy[H]],
           when: Callable[[dict[str, Any]], bool] = lambda base: True) -> Callable[[dict[str, Any]], st.SearchStrategy[H]]:
    """``kind`` with its must-accept values turned into maybes where ``when(base)`` (context-dependent validity)."""

    def k(base: dict[str, Any]) -> st.SearchStrategy[H]:
        s = kind(base)
        if not when(base):
            return s
        return s.map(lambda h: H(h.value, MAYBE, label=h.label) if h.expect in (MUST, EQUIV) else h)

    return k


# ---------------------------------------------------------------------------------------
# Hostile values by kind of argument.

MAX_SAFE = 2**53
JUNK = (
    None,
    "4",
    b"4",
    1 + 2j,
    [1, "a"],
    {"a": 1},
    object(),
    slice(1),
    ...,
    np.complex128(1 + 1j),
)


def _junk(optional: bool = False) -> st.SearchStrategy[H]:
    return st.sampled_from([reject(v) for v in JUNK if not (optional and v is None)])


def ints(
    *,
    minimum: int | None = None,
    maximum: int | None = None,
    typical: Iterable[int] = (2, 4),
    optional: bool = False,
    even: bool | None = None,
    huge: str = REJECT,
) -> Callable[[dict[str, Any]], st.SearchStrategy[H]]:
    """An integer argument (a size, a count, a length) and the ways to get it wrong.

    ``huge``: what values of 2**63 and more must do (``maybe`` where they are legitimate,
    a sequence length say, that allocates nothing).
    """

    def ok(v: int) -> bool:
        return (
            (minimum is None or v >= minimum)
            and (maximum is None or v <= maximum)
            and (even is None or (v % 2 == 0) == even)
        )

    def kind(base: dict[str, Any]) -> st.SearchStrategy[H]:
        out: list[H] = []
        for v in typical:
            good = ok(v)

            def eq(value: Any, label: str, v: int = v, good: bool = good) -> H:
                return equiv(value, v, label) if good else reject(value, label)

            out += [
                valid(v) if good else reject(v),
                eq(np.int64(v), "np.int64"),
                eq(np.array(v), "0-d array"),
                eq(float(v), "float"),
                eq(np.float64(v), "np.float64"),
                reject(np.array([v]), "1-d array"),
                reject([v], "list"),
                reject(str(v), "str"),
                reject(xps.asarray(v), "strict 0-d"),
            ]
            if 0 <= v < 256:
                out.append(eq(np.uint8(v), "np.uint8"))
        out += [
            reject(True, "bool"),
            reject(False, "bool"),
            reject(np.True_, "np.bool_"),
            reject(2.5),
            reject(math.nan),
            reject(math.inf),
            reject(-math.inf),
            reject(1e308),
            H(2**63, huge),
            H(2**64 + 1, huge),
            H(10**30, huge),
            H(np.uint64(2**64 - 1), huge),
            reject(-(2**63)) if minimum is not None and minimum > -(2**63) else maybe(-(2**63)),
            maybe(2**53 + 1),
        ]
        for v in (-1, 0, 1, 2, 3):
            out.append(valid(v) if ok(v) else reject(v))
        if optional:
            out.append(valid(None))
        else:
            out.append(reject(None))
        return st.one_of(st.sampled_from(out), _junk(optional))

    return kind


def reals(
    *,
    positive: bool = False,
    nonnegative: bool = False,
    minimum: float | None = None,
    maximum: float | None = None,
    typical: Iterable[float] = (10000.0,),
    optional: bool = False,
    huge_ok: bool = False,
) -> Callable[[dict[str, Any]], st.SearchStrategy[H]]:
    """A real argument (a base, a factor) and the ways to get it wrong.

    ``huge_ok``: values like 1e308 are legitimate (the call may raise or must give a
    result that passes the properties).
    """

    def ok(v: float) -> bool:
        return (
            math.isfinite(v)
            and (not positive or v > 0)
            and (not nonnegative or v >= 0)
            and (minimum is None or v >= minimum)
            and (maximum is None or v <= maximum)
        )

    def kind(base: dict[str, Any]) -> st.SearchStrategy[H]:
        out: list[H] = []
        for v in typical:
            if ok(v):
                out += [
                    valid(v),
                    equiv(np.float64(v), float(v), "np.float64"),
                    equiv(np.float32(v), float(np.float32(v)), "np.float32"),
                    equiv(np.array(v), float(v), "0-d array"),
                    reject(np.array([v]), "1-d array"),
                    reject([v], "list"),
                    reject(str(v), "str"),
                    reject(complex(v, 0), "complex"),
                    reject(xps.asarray(v), "strict 0-d"),
                ]
                if float(v).is_integer() and abs(v) < 2**62:
                    out += [equiv(int(v), float(v), "int"), equiv(np.int64(int(v)), float(v), "np.int64")]
        out += [reject(True, "bool"), reject(np.False_, "np.bool_"), reject(math.nan), reject(math.inf),
                reject(-math.inf), reject(np.float64("nan"))]
        for v in (-1.0, 0.0, -0.0, 1e-300, 5e-324, 0.5, 1.0, 2.0, 1e300, 1e308, -1e308, 2.0**63, 10.0**30):
            if ok(v):
                out.append(maybe(v) if huge_ok or abs(v) > 1e6 or 0 < abs(v) < 1e-6 else valid(v))
            else:
                out.append(reject(v))
        out.append(valid(None) if optional else reject(None))
        return st.one_of(st.sampled_from(out), _junk(optional))

    return kind


def choices(allowed: Iterable[Any], *, optional: bool = False) -> Callable[[dict[str, Any]], st.SearchStrategy[H]]:
    allowed = tuple(allowed)

    def kind(base: dict[str, Any]) -> st.SearchStrategy[H]:
        out = [valid(a) for a in allowed]
        first = allowed[0]
        if isinstance(first, str):
            out += [reject(first.upper()), reject(first + " "), reject(" " + first), reject(""),
                    reject(np.str_(first + "x")), reject(first.encode()), reject([first]), reject((first,)),
                    reject(0), reject(1.0), reject(True), reject("nonsense")]
            out.append(equiv(np.str_(first), first, "np.str_"))
        out.append(valid(None) if optional else reject(None))
        return st.one_of(st.sampled_from(out), _junk(optional))

    return kind


def bools(*, optional: bool = False) -> Callable[[dict[str, Any]], st.SearchStrategy[H]]:
    def kind(base: dict[str, Any]) -> st.SearchStrategy[H]:
        out = [valid(True), valid(False), equiv(np.True_, True, "np.True_"), equiv(np.False_, False, "np.False_"),
               reject(0), reject(1), reject("True"), reject("false"), reject(np.array([True])), reject(1.0),
               reject(np.int64(1)), equiv(np.array(True), True, "0-d bool array")]
        out.append(valid(None) if optional else reject(None))
        return st.one_of(st.sampled_from(out), _junk(optional))

    return kind


def dtypes(
    namespace_of: Callable[[dict[str, Any]], Any] = lambda base: np, *, optional: bool = True, result_float: bool = True
) -> Callable[[dict[str, Any]], st.SearchStrategy[H]]:
    """A ``dtype=`` argument: real floating dtypes of the result's namespace are valid."""

    def kind(base: dict[str, Any]) -> st.SearchStrategy[H]:
        xp = namespace_of(base)
        if xp is np:
            good = [np.float64, np.float32, np.float16, np.dtype("float32"), ml_dtypes.bfloat16]
            names = [equiv("float32", np.float32, "name"), maybe("bfloat16")]
        else:
            good = [xp.float64, xp.float32]
            names = [maybe("float32")]
        out = [valid(d) for d in good] + names
        bad = [np.int64, np.int32, np.bool_, np.complex128, bool, int, complex, "int32", "complex64", "bool",
               "float128x", "nope", 3, 1.5, [np.float32], np.dtype("O"), np.dtype("U3"), np.dtype("M8[s]"),
               xps.int64 if xp is np else np.int64, xps.bool, xps.complex64]
        out += [reject(b) for b in bad]
        # float dtypes of another namespace: either refused, or the same as the own one
        other = xps.float32 if xp is np else np.float32
        out.append(maybe(other, "foreign float dtype"))
        out.append(maybe(float, "python float"))
        out.append(valid(None) if optional else reject(None))
        return st.sampled_from(out)

    return kind


# ---------------------------------------------------------------------------------------
# Arrays.


def _noncontiguous(a: np.ndarray) -> np.ndarray:
    """The same values in a strided view (every other element of a doubled array)."""
    if a.ndim == 0:
        return a
    big = np.empty(a.shape[:-1] + (2 * a.shape[-1],), dtype=a.dtype)
    big[..., ::2] = a
    big[..., 1::2] = 7  # garbage between
    view = big[..., ::2]
    assert not view.flags.c_contiguous or a.size <= 1
    return view


def _fortran(a: np.ndarray) -> np.ndarray:
    return np.asfortranarray(a)


def _reversed_strides(a: np.ndarray) -> np.ndarray:
    if a.ndim == 0:
        return a
    return np.flip(np.flip(a, axis=-1).copy(), axis=-1)


def _readonly(a: np.ndarray) -> np.ndarray:
    b = a.copy()
    b.setflags(write=False)
    return b


def layout_variants(a: np.ndarray) -> list[H]:
    """Memory-layout variants of a NumPy array: must be accepted and equal the clean call."""
    out = [
        must(_noncontiguous(a), a, "strided"),
        must(_fortran(a), a, "fortran") if a.ndim else valid(a),
        must(_reversed_strides(a), a, "negative strides"),
        must(_readonly(a), a, "read-only"),
    ]
    if a.ndim >= 1 and a.shape[0] >= 1:
        row = a[:1]
        b = np.broadcast_to(row, a.shape)  # read-only, zero stride
        out.append(must(b, np.ascontiguousarray(b), "zero-stride broadcast"))
    if a.ndim >= 2:
        t = np.ascontiguousarray(np.swapaxes(a, 0, 1))
        out.append(must(np.swapaxes(t, 0, 1), a, "transposed view"))
    return out


def strict_of(a: np.ndarray) -> Any:
    return xps.asarray(a)


def cast_post(dtype: Any) -> Callable[[Any], Any]:
    def post(r: Any) -> Any:
        return _map_arrays(r, lambda v: v.astype(dtype) if isinstance(v, np.ndarray) and v.dtype.kind == "f" else v)

    return post


def to_strict_post(r: Any) -> Any:
    return _map_arrays(r, lambda v: xps.asarray(v) if isinstance(v, np.ndarray) else v)


def _map_arrays(r: Any, f: Callable[[Any], Any]) -> Any:
    if isinstance(r, tuple):
        return tuple(_map_arrays(v, f) for v in r)
    if isinstance(r, list):
        return [_map_arrays(v, f) for v in r]
    if isinstance(r, dict):
        return {k: _map_arrays(v, f) for k, v in r.items()}
    return f(r)


def float_array_variants(
    a: np.ndarray,
    *,
    strict_ok: bool = True,
    ints_ok: bool = False,
    narrow_ok: bool = True,
    keeps_dtype: bool = True,
) -> list[H]:
    """Hostile versions of a valid float64 array ``a`` (a real floating array argument).

    ``keeps_dtype``: the result takes the input's floating dtype (so a float32 input gives
    the float64 clean result cast to float32); otherwise the result is the same whatever
    the input float dtype, given exactly representable values.
    """
    with np.errstate(all="ignore"):  # casting hostile values is the point here
        return _float_array_variants(a, strict_ok=strict_ok, ints_ok=ints_ok, narrow_ok=narrow_ok,
                                     keeps_dtype=keeps_dtype)


def _float_array_variants(a: np.ndarray, *, strict_ok: bool, ints_ok: bool, narrow_ok: bool,
                          keeps_dtype: bool) -> list[H]:
    out = list(layout_variants(a))
    out.append(valid(a))
    if strict_ok:
        out.append(equiv(strict_of(a), a, "array_api_strict", to_strict_post))
    for dt in (np.float32, np.float16, ml_dtypes.bfloat16):
        if not narrow_ok:
            out.append(maybe(a.astype(dt), f"{np.dtype(dt).name}"))
            continue
        narrow = a.astype(dt)
        exact = np.array_equal(narrow.astype(np.float64), a, equal_nan=True)
        if exact:
            out.append(equiv(narrow, a, np.dtype(dt).name, cast_post(dt) if keeps_dtype else None))
        else:
            out.append(maybe(narrow, np.dtype(dt).name))
    for dt in (np.int64, np.int32, np.uint8, np.bool_):
        v = a.astype(dt) if dt is not np.uint8 else np.abs(a).astype(dt)
        if ints_ok:
            out.append(maybe(v, f"{np.dtype(dt).name} array"))
        else:
            out.append(reject(v, f"{np.dtype(dt).name} array"))
    out += [
        reject(a.astype(np.complex128), "complex array") if not ints_ok else maybe(a.astype(np.complex128)),
        reject(a.astype(object), "object array") if not ints_ok else maybe(a.astype(object), "object array"),
        equiv(a.tolist(), a, "nested list") if a.ndim else equiv(float(a), a, "python float"),
        reject(a.astype(str), "str array") if not ints_ok else maybe(a.astype(str), "str array"),
    ]
    return out


def nonfinite_variants(a: np.ndarray) -> list[H]:
    """NaN, inf and huge values inside a float array: accepted or refused, never garbage."""
    out = []
    if a.size:
        for bad in (np.nan, np.inf, -np.inf, 1e308, -1e308, 5e-324):
            b = a.copy()
            with np.errstate(all="ignore"):
                b.flat[0] = bad
            out.append(maybe(b, f"with {bad}"))
    return out


# ---------------------------------------------------------------------------------------
# Positions (integers or reals, broadcasting against a target shape).


def _fits(p: np.ndarray, dt: Any) -> bool:
    info = np.iinfo(dt)
    return p.size == 0 or (int(p.min()) >= info.min and int(p.max()) <= info.max)


def positions_variants(
    p: np.ndarray,
    target: tuple[int, ...] | None,
    *,
    strict: bool,
    floats_ok: bool = True,
    negative_ok: bool = True,
    exact_limit: bool = True,
) -> list[H]:
    """Hostile versions of valid int64 positions ``p`` for a call whose arrays are array-api-strict
    (``strict``) or NumPy. ``target``: the shape they must broadcast to without enlarging it.
    ``floats_ok``: real positions are allowed (RoPE), else only integers (T5, pedagogy).
    ``exact_limit``: integers beyond 2**53 are refused (they feed a float64 computation);
    otherwise any int64 is fine (T5's buckets compare integers).
    """
    assert p.dtype == np.int64
    wrap = (lambda a: xps.asarray(a)) if strict else (lambda a: a)
    own = wrap(p)
    out: list[H] = [valid(own), (must(p.tolist(), own, "nested list") if p.size else maybe(p.tolist(), "empty list"))
                    if p.ndim else must(int(p), own, "int")]
    if not strict:
        out += layout_variants(p)
        out.append(reject(xps.asarray(p), "array_api_strict positions with NumPy arrays"))
    else:
        out.append(reject(p, "NumPy positions with array_api_strict arrays"))
    for dt in (np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32, np.uint64):
        if _fits(p, dt):
            out.append(must(wrap(p.astype(dt)), own, np.dtype(dt).name))
    floaty = [np.float64, np.float32, np.float16, ml_dtypes.bfloat16]
    for dt in floaty:
        f = p.astype(dt)
        exact = np.array_equal(f.astype(np.float64), p.astype(np.float64))
        if strict and dt not in (np.float64, np.float32):
            continue
        if floats_ok:
            out.append(must(wrap(f), own, np.dtype(dt).name) if exact else maybe(wrap(f), np.dtype(dt).name))
        else:
            out.append(reject(wrap(f), f"{np.dtype(dt).name} positions"))
    frac = p.astype(np.float64) + 0.5
    if p.size:  # an empty array has no fraction to refuse
        out.append(valid(wrap(frac), "fractional") if floats_ok else reject(wrap(frac), "fractional"))
        out.append(valid(frac.tolist() if frac.ndim else float(frac), "fractional list")
                   if floats_ok else reject(frac.tolist() if frac.ndim else float(frac), "fractional list"))
    out += [
        reject(wrap(p.astype(bool)), "bool array"),
        reject(p.astype(np.complex128), "complex array"),
        reject(p.astype(object), "object array"),
        reject(p.astype(str), "str array"),
        reject(p.astype("datetime64[s]"), "datetime array"),
        reject(p.astype("timedelta64[s]"), "timedelta array"),
        reject(True, "bool"),
        reject(1 + 1j, "complex"),
        reject("3", "str"),
        reject(None, "None"),
        reject([1, None], "list with None"),
        reject([[1, 2], [3]], "ragged list"),
        reject([1, "a"], "list with str"),
        reject([2**70], "list with a huge int"),
        maybe(2**53, "2**53"),
        reject(2**53 + 1, "2**53 + 1") if exact_limit else maybe(2**53 + 1, "2**53 + 1"),
        reject(-(2**53) - 1, "-2**53 - 1") if exact_limit else maybe(-(2**53) - 1, "-2**53 - 1"),
        reject(np.uint64(2**64 - 1), "uint64 max"),
        reject(np.array([2**63 - 1]), "int64 max") if exact_limit else maybe(np.array([2**63 - 1]), "int64 max"),
        reject(np.array([-(2**63)]), "int64 min") if exact_limit else maybe(np.array([-(2**63)]), "int64 min"),
        reject(np.array([2**64 - 1], dtype=np.uint64), "uint64 array max"),
    ]
    if floats_ok:
        for bad in (np.nan, np.inf, -np.inf):
            f = p.astype(np.float64)
            if f.size:
                f.flat[-1] = bad
                out.append(reject(wrap(f), f"with {bad}"))
            out.append(reject(bad, f"scalar {bad}"))
        out += [maybe(1e308, "1e308"), maybe(-1e308, "-1e308"), maybe(5e-324, "denormal"),
                maybe(float(2**53), "2.0**53"), maybe(2.0**60, "2.0**60")]
    else:
        out += [reject(2.5, "float"), reject(2.0, "integral float")]
    if not negative_ok:
        if p.size:
            out.append(reject(wrap(p - (int(p.max()) + 1)), "negative"))
        out.append(reject(-1, "-1"))
    if target is not None:
        big = np.broadcast_to(p, target).copy() if p.shape != target else p
        out.append(must(wrap(big), own, "full target shape") if big is not p else valid(own))
        out.append(reject(wrap(np.zeros((2,) * (len(target) + 1), np.int64) + np.arange(2)), "enlarging"))
        if len(target) >= 1 and target[-1] != 1:
            out.append(reject(wrap(np.zeros(target + (2,), np.int64)), "extra trailing axis"))
            out.append(reject(wrap(np.zeros((target[-1] + 2,), np.int64)), "wrong length"))
        if len(target) >= 1 and target[-1] != 0 and target[-1] != 1:
            out.append(reject(wrap(np.zeros((0,), np.int64)), "empty where non-empty needed"))
        out.append(must(wrap(np.zeros((), np.int64)), wrap(np.zeros(target, np.int64)), "0-d broadcast")
                   if True else None)
    else:
        out.append(valid(wrap(np.zeros((0,), np.int64)), "empty"))
        out.append(valid(wrap(np.zeros((2, 0, 3), np.int64)), "zero-size axis"))
        out.append(valid(wrap(np.zeros((), np.int64)), "0-d"))
    return out
