"""T5's relative position buckets (Raffel et al. 2020, section 2.1): relative, monotone, exact near, counted."""

from __future__ import annotations

import functools

import mpmath
import numpy as np
import sympy as sp

from ..symbolic.notation import label
from ..symbolic import bridge
from ..symbolic import t5 as sym
from ._inputs import Ints, for_all
from ._model import Check, CheckFailure, Claim, Verdict
from ._registry import register
from .. import t5

_REFS = (
    "Raffel et al. 2020 (T5), section 2.1: 32 embeddings, ranges growing logarithmically up to an offset of 128",
    "Mesh TensorFlow _relative_position_bucket; HF T5Attention._relative_position_bucket",
)
_SPAN = 8192  # |r| checked exhaustively (the widest standard max_distance is 512)


def _name(cfg: tuple[int, int, bool]) -> str:
    nb, md, bi = cfg
    return f"{nb}/{md} {'bidirectional' if bi else 'unidirectional'}"


def _half(cfg: tuple[int, int, bool]) -> int:
    nb, _, bi = cfg
    return nb // 2 if bi else nb


@functools.lru_cache(maxsize=16)
def _buckets(cfg: tuple[int, int, bool], exact: bool) -> np.ndarray:
    """pemath.t5.bucket of every r in [-_SPAN, _SPAN] (index r + _SPAN)."""
    nb, md, bi = cfg
    return np.asarray(t5.bucket(np.arange(-_SPAN, _SPAN + 1), bidirectional=bi, num_buckets=nb, max_distance=md,
                                exact=exact))


@functools.lru_cache(maxsize=16)
def _mp_log_buckets(cfg: tuple[int, int, bool], n_max: int) -> tuple[int, ...]:
    """Bucket (before the direction offset) of each distance 0..n_max, the floor decided at 50 digits.

    Where E log(n/M)/log(D/M) lies within 10^-40 of an integer k the floor is settled exactly
    (n^E M^k >= D^k M^E in integers): the real value may sit exactly on the integer.
    """
    nb, md, _ = cfg
    h = _half(cfg)
    me, e = h // 2, h - h // 2
    out = []
    with mpmath.workdps(50):
        ld = mpmath.log(mpmath.mpf(md) / me)
        for n in range(n_max + 1):
            if n < me:
                out.append(n)
                continue
            v = e * mpmath.log(mpmath.mpf(n) / me) / ld
            k = int(mpmath.floor(v))
            near = int(mpmath.nint(v))
            if abs(v - near) < mpmath.mpf(10) ** -40:
                k = near if n**e * me**near >= md**near * me**e else near - 1
            out.append(me + min(k, e - 1))
    return tuple(out)


def _by_direction(cfg: tuple[int, int, bool], b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(buckets of r = 0, -1, -2, ..., -_SPAN), (buckets of r = 1, 2, ..., _SPAN)."""
    return b[_SPAN::-1], b[_SPAN + 1:]


# ----------------------------------------------------------------------------------------------
# t5.relative
# ----------------------------------------------------------------------------------------------


def _relative_proof() -> Verdict:
    return Verdict(sym.relative())


def _relative_statement() -> sp.Basic:
    i, j, s = sp.symbols("i j s", integer=True)
    b, T = sp.Function("b"), sp.Function("T")
    return sp.Eq(label("B(i + s, j + s)", "B(i + s,\\, j + s)"), T(b(j - i)), evaluate=False)


def _relative_formal() -> tuple:
    i, j, s = sp.symbols("i j s", integer=True)
    b, T = sp.Function("b", real=True), sp.Function("T", real=True)
    with sp.evaluate(False):  # the statement as written: SymPy would cancel s on construction
        return bridge.formal(sp.Eq(T(b((j + s) - (i + s))), T(b(j - i))))


def _relative_numeric() -> str:
    def check(draw_seed: int, cfg: int, heads: int, q_len: int, k_len: int, offset: int, shift: int) -> None:
        nb, md, bi = sym.STANDARD[cfg]
        rng = np.random.default_rng(draw_seed)
        table = rng.standard_normal((nb, heads))
        kw = dict(bidirectional=bi, max_distance=md)
        b = t5.bias(table, q_len, k_len, offset=offset, **kw)
        assert np.array_equal(b[:, 1:, 1:], b[:, :-1, :-1]), f"{_name(sym.STANDARD[cfg])}: not constant on diagonals"
        moved = t5.bias(table, q_len, k_len + shift, offset=offset + shift, **kw)[:, :, shift:]
        assert np.array_equal(moved, b), "moving queries and keys together changed the bias"
        ex = t5.bias(table, q_len, k_len, offset=offset, exact=True, **kw)
        for i in range(0, q_len, max(1, q_len // 4)):
            for j in range(0, k_len, max(1, k_len // 4)):
                want = table[sym.bucket_exact(j - (offset + i), nb, md, bi)]
                assert np.array_equal(ex[:, i, j], want), f"bias[:, {i}, {j}] is not T[b(j - q_i)]"

    return for_all(check, examples=25, draw_seed=Ints(0, 2**31), cfg=Ints(0, len(sym.STANDARD) - 1),
                   heads=Ints(1, 4), q_len=Ints(1, 40), k_len=Ints(1, 40), offset=Ints(-1000, 1000), shift=Ints(0, 300))


register(
    Claim(
        id="t5.relative",
        name="T5's bias depends only on the relative position",
        title="T5's bias T[b(key - query)] is a function of the relative position only",
        kind="theorem",
        family="t5",
        statement=_relative_statement,
        formal=_relative_formal,
        proof=_relative_proof,
        checks=(Check("numeric", _relative_numeric),),
        references=_REFS,
    )
)

# ----------------------------------------------------------------------------------------------
# t5.monotone
# ----------------------------------------------------------------------------------------------


def _monotone_proof() -> Verdict:
    return Verdict(sym.monotone())


def _monotone_statement() -> sp.Basic:
    n = sp.Symbol("n", integer=True, nonnegative=True)
    b = sp.Function("b")
    return sp.Ge(b(n + 1) - b(n), 0)


def _monotone_numeric() -> str:
    for cfg in sym.STANDARD:
        h = _half(cfg)
        for exact in (False, True):
            back, fwd = _by_direction(cfg, _buckets(cfg, exact))
            if np.any(np.diff(back) < 0):
                n = int(np.argmax(np.diff(back) < 0))
                raise CheckFailure(f"{_name(cfg)} exact={exact}: bucket(-{n + 1}) < bucket(-{n})")
            if cfg[2]:
                if np.any(np.diff(fwd) < 0) or np.any(fwd < h):
                    raise CheckFailure(f"{_name(cfg)} exact={exact}: keys after the query are not monotone "
                                       "in the upper half")
            elif np.any(fwd != 0):
                raise CheckFailure(f"{_name(cfg)}: unidirectional keys after the query are not all bucket 0")
    return f"{len(sym.STANDARD)} standard configurations, |r| <= {_SPAN}, float32 and exact: non-decreasing"


def _monotone_mpmath() -> str:
    total = 0
    for cfg in sym.STANDARD:
        nb, md, bi = cfg
        mp = _mp_log_buckets(cfg, 4 * md)
        back, _ = _by_direction(cfg, _buckets(cfg, True))
        got = back[: 4 * md + 1]
        if list(got) != list(mp):
            n = int(np.argmax(np.asarray(got) != np.asarray(mp)))
            raise CheckFailure(f"{_name(cfg)}: bucket of distance {n} is {got[n]}, the 50-digit floor gives {mp[n]}")
        back32, _ = _by_direction(cfg, _buckets(cfg, False))
        if list(back32[: 4 * md + 1]) != list(mp):
            raise CheckFailure(f"{_name(cfg)}: T5's float32 buckets differ from the 50-digit floor")
        starts = tuple(n for n in range(1, len(mp)) if mp[n] > mp[n - 1] and mp[n - 1] >= _half(cfg) // 2)
        if starts != t5.thresholds(bidirectional=bi, num_buckets=nb, max_distance=md, exact=True):
            raise CheckFailure(f"{_name(cfg)}: log-bucket boundaries {starts} differ from t5.thresholds")
        total += len(mp)
    return f"{total} distances: exact and float32 buckets equal the 50-digit floor; boundaries match thresholds()"


def _monotone_formal() -> tuple:
    """For every M, E (max_exact, logarithmic buckets) and sigma > 0 (D = M (1 + sigma)), and distances
    1 <= n <= n2: bucket(n) <= bucket(n2), with T5's bucket written from its definition (n below M, else
    M + min(floor(E log(n/M) / log(D/M)), E - 1))."""
    m, e = sp.symbols("M E", integer=True, positive=True)
    n, n2 = sp.symbols("n n2", integer=True, positive=True)
    sigma = sp.Symbol("sigma", positive=True)

    def bucket(dist):  # noqa: ANN001, ANN202 - SymPy decides neither the branch nor the min nor the floor
        with sp.evaluate(False):
            return sp.Piecewise((dist, sp.Lt(dist, m)),
                                (m + sp.Min(sp.floor(e * sp.log(dist / m) / sp.log(1 + sigma)), e - 1), True))

    return bridge.formal([sp.Le(bucket(n), bucket(n2), evaluate=False)], [sp.Le(n, n2, evaluate=False)])


register(
    Claim(
        id="t5.monotone",
        name="T5's bucket grows with the distance",
        title="T5's bucket b(n) is non-decreasing in the distance n >= 1, for every configuration with max_exact "
              ">= 1, at least one log bucket and max_distance > max_exact (reading, from "
              "the definition: within a direction, a relative position r has bucket b(|r|) plus that direction's "
              "constant offset)",
        kind="theorem",
        family="t5",
        statement=_monotone_statement,
        formal=_monotone_formal,
        proof=_monotone_proof,
        checks=(Check("numeric", _monotone_numeric), Check("mpmath", _monotone_mpmath)),
        references=_REFS,
    )
)

# ----------------------------------------------------------------------------------------------
# t5.exact_below_max_exact
# ----------------------------------------------------------------------------------------------


def _exact_proof() -> Verdict:
    return Verdict(sym.exact_below_max_exact())


def _exact_statement() -> sp.Basic:
    n = sp.Symbol("n", integer=True, nonnegative=True)
    return sp.Eq(sp.Function("b")(n), sp.Piecewise((n, n < sym.M), (label("M + min(K(n), E - 1)", r"M + \min(K(n),\, E - 1)"), True)),
                 evaluate=False)


def _exact_formal() -> tuple:
    """T5's bucket of a distance n >= 0, written from its definition with M = max_exact, E = n_b - M logarithmic
    buckets and D = M (1 + sigma) > M the largest distance: n below M, else M + min(floor(E log(n/M) / log(D/M)),
    E - 1). For every M, E, sigma: each distance M - 1 - t (t >= 0) is below M, in the exact branch (its own
    bucket); the logarithmic branch starts at distance M with bucket M; and every distance M (1 + u), u >= 0, has
    a bucket >= M, so no distance past the exact range shares an exact bucket. (The same, in exact integer arithmetic, for the shipped
    configurations, is in the record.)"""
    m = sp.Symbol("M", integer=True, positive=True)
    e = sp.Symbol("E", integer=True, positive=True)
    sigma = sp.Symbol("sigma", positive=True)
    t = sp.Symbol("t", integer=True, nonnegative=True)
    u = sp.Symbol("u", nonnegative=True)

    def bucket(n):  # noqa: ANN001, ANN202 - SymPy decides neither the branch nor the min nor the floor
        k = e * sp.log(n / m) / sp.log(1 + sigma)  # log(D/M) = log(1 + sigma)
        with sp.evaluate(False):
            return sp.Piecewise((n, sp.Lt(n, m)), (m + sp.Min(sp.floor(k), e - 1), True))

    with sp.evaluate(False):
        below = m - 1 - t
    # below M the bucket is the exact branch, n itself (its log branch, log(n/M), is not defined at n = 0: the
    # statement says which branch, not the bucket as a whole)
    return bridge.formal([sp.Lt(below, m, evaluate=False),
                          sp.Eq(bucket(m), m, evaluate=False),
                          sp.Ge(bucket(m * (1 + u)), m, evaluate=False)])


def _exact_numeric() -> str:
    for cfg in sym.STANDARD:
        h = _half(cfg)
        me = h // 2
        for exact in (False, True):
            back, fwd = _by_direction(cfg, _buckets(cfg, exact))
            if list(back[: me + 2]) != list(range(me + 1)) + [me]:
                raise CheckFailure(f"{_name(cfg)} exact={exact}: buckets of distances 0..{me + 1} are "
                                   f"{back[: me + 2].tolist()}, not 0..{me}, {me}")
            if cfg[2] and list(fwd[: me]) != [h + n for n in range(1, me + 1)]:
                raise CheckFailure(f"{_name(cfg)} exact={exact}: keys 1..{me} after the query are not h + n")
    return f"{len(sym.STANDARD)} standard configurations, float32 and exact: bucket = distance below max_exact"


register(
    Claim(
        id="t5.exact_below_max_exact",
        name="T5 gives each small distance its own bucket",
        title="T5's bucket is the distance itself below max_exact = n_b // 2, where the log buckets start",
        kind="theorem",
        family="t5",
        statement=_exact_statement,
        formal=_exact_formal,
        proof=_exact_proof,
        checks=(Check("numeric", _exact_numeric),),
        references=_REFS,
    )
)

# ----------------------------------------------------------------------------------------------
# t5.bucket_count: num_buckets values unidirectional, 2 floor(num_buckets / 2) - 1 bidirectional
# ----------------------------------------------------------------------------------------------


def _count_proof() -> Verdict:
    d = sym.bucket_count()
    d.steps.extend(sym.every_log_bucket_reached().steps)
    d.remark("Reading: with the exact buckets 0..M-1 at the distances 0..M-1 (t5.exact_below_max_exact), the "
             "buckets used one way are 0..n_b-1, n_b of them; both ways 2 n_b - 1, n_b = floor(num_buckets / 2). The "
             "enumerations above count them bucket by bucket for pemath.t5.bucket's configurations.")
    return Verdict(d)


def _count_statement() -> sp.Basic:
    return sp.Eq(
        label("|{bucket(r) : r in Z}|", r"\left|\{\operatorname{bucket}(r) : r \in \mathbb{Z}\}\right|"),
        label("num_buckets", r"\mathtt{num\_buckets}") - label("[bidirectional]", r"[\mathtt{bidirectional}]"),
        evaluate=False,
    )


def _count_formal() -> tuple:
    """For every M, E (max_exact, logarithmic buckets) and sigma > 0 (D = M (1 + sigma)) with E <= M log(D/M),
    every k = 0..E-1 and every distance n >= 1, with T5's bucket written from its definition (n below M, else
    M + min(floor(E log(n/M) / log(D/M)), E - 1)): the witness n_k = floor(M e^(k log(D/M)/E)) + 1 is at least
    M and has bucket M + k, and n has a bucket of at most M + E - 1."""
    m = sp.Symbol("M", integer=True, positive=True)
    e = sp.Symbol("E", integer=True, positive=True)
    sigma = sp.Symbol("sigma", positive=True)
    k = sp.Symbol("k", integer=True, nonnegative=True)
    n = sp.Symbol("n", integer=True, positive=True)
    log_ratio = sp.log(1 + sigma)  # log(D/M)

    def bucket(dist):  # noqa: ANN001, ANN202 - SymPy decides neither the branch nor the min nor the floor
        with sp.evaluate(False):
            return sp.Piecewise((dist, sp.Lt(dist, m)),
                                (m + sp.Min(sp.floor(e * sp.log(dist / m) / log_ratio), e - 1), True))

    with sp.evaluate(False):
        witness = sp.floor(m * sp.exp(k * log_ratio / e)) + 1
    return bridge.formal([sp.Le(m, witness, evaluate=False), sp.Eq(bucket(witness), m + k, evaluate=False),
                          sp.Le(bucket(n), m + e - 1, evaluate=False)],
                         [sp.Le(k + 1, e, evaluate=False), sp.Le(e, m * log_ratio, evaluate=False)])


def _count_numeric() -> str:
    parts = []
    for cfg in sym.STANDARD:
        nb, md, bi = cfg
        h = _half(cfg)
        want = set(range(nb)) - ({h} if bi else set())
        for exact in (False, True):
            seen = set(np.unique(_buckets(cfg, exact)).tolist())
            if seen != want:
                raise CheckFailure(f"{_name(cfg)} exact={exact}: buckets used {sorted(set(range(nb)) - seen)} "
                                   f"missing, expected only {sorted(set(range(nb)) - want)}")
        parts.append(f"{nb}/{md}{'b' if bi else 'u'}: {len(want)}")
    return "pemath.t5.bucket over |r| <= 8192 uses " + ", ".join(parts) + " (float32 and exact)"


register(
    Claim(
        id="t5.bucket_count",
        name="How many buckets T5 uses",
        title="Where E <= M ln(D/M) (E log buckets, max_exact M, max_distance D), for every configuration: every "
              "logarithmic bucket M + k, k = 0..E-1, is reached (at the distance floor(M (D/M)^(k/E)) + 1) and no "
              "distance n >= 1 has a bucket past n_b - 1 (reading, with the exact buckets of "
              "t5.exact_below_max_exact: num_buckets values one way, 2 floor(num_buckets/2) - 1 both ways, "
              "bucket floor(num_buckets/2) unused; enumerated bucket by bucket for T5's configurations and "
              "33/128, and for five configurations that violate the condition, some of which skip buckets)",
        kind="theorem",
        family="t5",
        statement=_count_statement,
        formal=_count_formal,
        proof=_count_proof,
        checks=(Check("numeric", _count_numeric),),
        references=_REFS,
    )
)
