"""RoPE derived from its defining equation (RoFormer, section 3.4.1; Renard, 'Positional Encodings of Attention Mechanisms: Sinusoidal, Rotary Positional Encodings (Part 2)', renardyreveur.github.io).

In two dimensions a vector is a complex number. RoFormer asks for an encoding
``f(x, m)`` whose product ``f(q, m) conj(f(k, n))`` depends on ``q``, ``k`` and the
relative position ``n - m`` only, with ``f(x, 0) = x``, writes every quantity in polar
form, and solves for the radius and the angle. The steps that are algebra are decided
here (an identity reducing to zero, an equation solved by SymPy with a unique
solution, a recurrence solved by ``rsolve``); the steps that are logic (matching
moduli and arguments, "this does not depend on x", induction) are narrated.
"""

from __future__ import annotations


import sympy as sp

from .kterms import app, minus, neg, num, var
from ._certify import ProofFailure
from ._decide import Derivation, unevaluated
from .notation import label
from .rope import block

__all__ = ["derive", "m", "n", "theta"]

m, n = sp.symbols("m n", integer=True)
theta = sp.Symbol("theta", real=True)  # the rotation per position, found by the derivation

# q = |q| e^{i theta_q}, k = |k| e^{i theta_k}; both non-zero.
rq, rk = sp.symbols("|q| |k|", positive=True)
aq, ak = sp.symbols("theta_q theta_k", real=True)
q_sym, k_sym = sp.symbols("q k")  # the vectors as arguments of the unknown functions

R_f = sp.Function("R_f", positive=True)
Theta_f = sp.Function("Theta_f", real=True)
R_g = sp.Function("R_g", positive=True)
Theta_g = sp.Function("Theta_g", real=True)
phi = sp.Function("phi", real=True)

_POW = ("expand", "powsimp", "rewrite(exp)+powsimp")


def _polar(r: sp.Expr, a: sp.Expr) -> sp.Expr:
    return r * sp.exp(sp.I * a)


def claimed_initial(derived: sp.Expr) -> sp.Expr:
    """The value of phi(0) used to solve the recurrence: the derived one, 0."""
    return derived


def claimed_step(derived: sp.Expr) -> sp.Expr:
    """The increment phi(m + 1) - phi(m) the derivation goes on with: the derived one."""
    return derived


def radius(r: sp.Expr, pos: sp.Expr) -> sp.Expr:
    """The radius R_f(x, m) of the solution: |x|, whatever the position."""
    return r


def derive() -> Derivation:
    """Solve RoFormer's equation for ``f(x, m)`` in 2-D, step by step.

    The parts a wrong derivation would change are :func:`claimed_initial` (phi(0), derived: 0),
    :func:`claimed_step` (phi(m + 1) - phi(m), derived from the ``n = m + 1`` case) and :func:`radius`
    (R_f(x, m), derived: |x|); the mutation tests patch wrong ones, which the derivation must reject.

    ``result["f"]`` is the solution ``f(x, m)`` as a function of ``|x|``, ``theta_x``, ``m``.
    """
    d = Derivation("RoPE from its defining equation (2-D, complex form)")

    # 1. the inner product as a complex product
    q0, q1, k0, k1 = sp.symbols("q_0 q_1 k_0 k_1", real=True)
    zq, zk = q0 + sp.I * q1, k0 + sp.I * k1
    d.define("View a 2-D vector x = (x_0, x_1) as the complex number x_0 + i x_1.")
    d.equal("The inner product of two 2-D vectors is the real part of z_q conj(z_k)",
            sp.re(zq * sp.conjugate(zk), evaluate=False), q0 * k0 + q1 * k1, methods=("expand",))
    d.define("RoFormer (eqs. 21 and 23-24) asks the complex product itself to depend on q, k and the relative "
          "position only: f(q, m) conj(f(k, n)) = g(q, k, n - m), whose real part is the score. This is a "
          "stronger requirement than on the real part alone; it is the one the derivation solves.",
          sp.Eq(sp.Symbol("f(q,m)") * sp.conjugate(sp.Symbol("f(k,n)")), sp.Symbol("g(q,k,n-m)"), evaluate=False))

    # 2. polar forms: the requirement, its modulus (decided) and its angle (a hypothesis)
    Rq, Rk = R_f(q_sym, m), R_f(k_sym, n)
    Tq, Tk = Theta_f(q_sym, m), Theta_f(k_sym, n)
    d.define("Write each quantity in polar form: f(x, m) = R_f(x, m) e^{i Theta_f(x, m)} and "
             "g = R_g e^{i Theta_g}, with R > 0 (q, k non-zero) and real angles.")
    d.equal("Then f(q, m) conj(f(k, n)) = R_f(q, m) R_f(k, n) e^{i (Theta_f(q, m) - Theta_f(k, n))}",
            _polar(Rq, Tq) * sp.conjugate(_polar(Rk, Tk)), Rq * Rk * sp.exp(sp.I * (Tq - Tk)), methods=_POW)
    requirement = d.hypothesis("Hypothesis (RoFormer's requirement in polar form), for all q, k, m, n:",
                               sp.Eq(Rq * Rk * sp.exp(sp.I * (Tq - Tk)),
                                     _polar(R_g(q_sym, k_sym, n - m), Theta_g(q_sym, k_sym, n - m))),
                               forall=(q_sym, k_sym, m, n))
    z = sp.Symbol("z")
    modulus = d.apply("taking the modulus of both sides: R_f(q, m) R_f(k, n) = R_g(q, k, n - m)", requirement,
                      sp.Lambda(z, sp.Abs(z)))
    angle = d.hypothesis("Hypothesis (the angles): Theta_f(q, m) - Theta_f(k, n) = Theta_g(q, k, n - m) exactly, for "
                         "all q, k, m, n, and Theta_f(x, 0) = theta_x, Theta_g(q, k, 0) = theta_q - theta_k: "
                         "representatives of the arguments without 2 pi jumps. The requirement fixes the arguments "
                         "only modulo 2 pi; RoFormer's derivation assumes this choice, and without it other "
                         "solutions exist (with the real inner product alone, f(x, m) = conj^m(x) satisfies the "
                         "requirement too).", sp.Eq(Tq - Tk, Theta_g(q_sym, k_sym, n - m)),
                         forall=(q_sym, k_sym, m, n))

    # 3. the initial condition fixes g at relative position 0
    q_polar, k_polar = _polar(rq, aq), _polar(rk, ak)
    r_x, a_x = sp.Symbol("|x|", positive=True), sp.Symbol("theta_x", real=True)
    x_sym = sp.Symbol("x")
    init_r = d.hypothesis("Initial condition f(x, 0) = x: R_f(x, 0) = |x| (and, above, Theta_f(x, 0) = theta_x)",
                          sp.Eq(R_f(x_sym, 0), r_x), forall=(x_sym, r_x))
    d.equal("At m = n = 0: g(q, k, 0) = f(q, 0) conj(f(k, 0)) = q conj(k) = |q| |k| e^{i (theta_q - theta_k)}",
            q_polar * sp.conjugate(k_polar), rq * rk * sp.exp(sp.I * (aq - ak)), methods=_POW)
    at00 = d.specialize("the modulus equation at m = n = 0: R_f(q, 0) R_f(k, 0) = R_g(q, k, 0)", modulus,
                        {m: 0, n: 0})
    r_q0 = d.specialize("R_f(q, 0) = |q|", init_r, {x_sym: q_sym, r_x: rq})
    at00 = d.rewrite_with("with R_f(q, 0) = |q|", at00, r_q0)
    r_k0 = d.specialize("R_f(k, 0) = |k|", init_r, {x_sym: k_sym, r_x: rk})
    at00 = d.rewrite_with("and R_f(k, 0) = |k|", at00, r_k0)
    g0 = [sp.Eq(at00.rhs, at00.lhs), d.hypothesis("(the angle at relative position 0, from the hypothesis on the "
                                                   "angles)", sp.Eq(Theta_g(q_sym, k_sym, 0), aq - ak),
                                                   forall=(q_sym, k_sym, aq, ak))]

    # 4. the radius
    Rsym = sp.Symbol("R", positive=True)
    at0 = d.specialize("set n = m (relative position 0) in the modulus equation", modulus, {n: m})
    at0 = d.rewrite_with("with R_g(q, k, 0) = |q| |k|: R_f(q, m) R_f(k, m) = |q| |k| for all q, k, m", at0, g0[0])
    d.specialize("with k = q (|k| = |q|): R_f(q, m)^2 = |q|^2", at0, {k_sym: q_sym, rk: rq})
    d.solved("R_f(q, m)^2 = |q|^2 has exactly one positive solution, R_f(q, m) = |q|: the radius does not "
             "depend on the position", sp.Eq(Rsym**2, rq**2), Rsym, [rq])
    rad = radius
    d.equal("and R_f(x, m) = |x| satisfies R_f(q, m) R_f(k, m) = |q| |k| for every pair q, k",
            sp.Subs(R_f(q_sym, m) * R_f(k_sym, m), (R_f(q_sym, m), R_f(k_sym, m)), (rad(rq, m), rad(rk, m))), rq * rk,
            methods=("expand", "doit"))

    # 5. the angle: Theta_f(x, m) = theta_x + phi(m)
    k0_sym, a0 = label("k_ref", r"k_{\mathrm{ref}}"), label("theta_ref", r"\theta_{\mathrm{ref}}", real=True)
    a0_eq = d.specialize("set n = m in the angle equation", angle, {n: m})
    d.rewrite_with("with Theta_g(q, k, 0) = theta_q - theta_k: Theta_f(q, m) - Theta_f(k, m) = theta_q - theta_k for "
                   "all q, k; fix one reference key k_ref (argument theta_ref) and solve for Theta_f(q, m):",
                   a0_eq, g0[1])
    unknown = label("Theta_f(q,m)", r"\Theta_f(q, m)", real=True)
    sol = sp.solve(sp.Eq(unknown - Theta_f(k0_sym, m), aq - a0), unknown)
    phi_def = Theta_f(k0_sym, m) - a0
    if len(sol) != 1:
        d.fail(f"expected one solution for Theta_f(q, m), found {len(sol)}")
    d.solved("its one solution: Theta_f(q, m) = theta_q + phi(m), with phi(m) := Theta_f(k_ref, m) - theta_ref",
             sp.Eq(unknown - Theta_f(k0_sym, m), aq - a0), unknown, [aq + phi_def])
    d.define("phi(m) :=", phi_def)
    d.free_of("phi(m) involves neither |q| nor theta_q: the angle added at position m is the same for every x",
              phi_def, {rq, aq, q_sym})
    d.zero("and Theta_f(x, m) = theta_x + phi(m) satisfies the n = m equation for every pair q, k",
           unevaluated(lambda: ((aq + phi(m)) - (ak + phi(m))) - (aq - ak)))

    # 6. consecutive positions: phi(m + 1) - phi(m) is a constant
    g1 = Theta_g(q_sym, k_sym, 1)
    d.specialize("set n = m + 1 in the angle equation; substitute Theta_f(x, m) = theta_x + phi(m) and solve for "
                 "phi(m + 1):", angle, {n: m + 1})
    nxt = sp.solve(sp.Eq(aq + phi(m) - ak - phi(m + 1), g1), phi(m + 1))
    if len(nxt) != 1:
        d.fail(f"expected one solution for phi(m + 1), found {len(nxt)}")
    derived_step = sp.expand(nxt[0] - phi(m))
    d.define("phi(m + 1) - phi(m) =", derived_step)
    inc = claimed_step(derived_step)
    d.free_of("The increment phi(m + 1) - phi(m) does not depend on m: call it theta, the rotation per position",
              inc, [m])
    d.remark("(so Theta_g(q, k, 1) - theta_q + theta_k takes the same value for every pair q, k).")

    # 7. solve the recurrence
    gamma = sp.Symbol("gamma", real=True)
    rec = sp.rsolve(phi(m + 1) - phi(m) - theta, phi(m), {phi(0): gamma})
    if rec is None:
        d.fail("rsolve found no solution of phi(m + 1) = phi(m) + theta")
    d.define("Solve the first-order recurrence phi(m + 1) = phi(m) + theta with phi(0) = gamma (sympy rsolve):",
          sp.Eq(phi(m), rec))
    d.zero("the solution satisfies the recurrence", rec.subs(m, m + 1) - rec - theta)
    d.zero("and the initial value", unevaluated(lambda: rec.subs(m, 0) - gamma))
    d.cite("It is the only one: the difference delta of two solutions satisfies delta(m + 1) = delta(m) with "
           "delta(0) = 0, so delta = 0 at every integer m (induction up from 0 and down from 0)",
           source="Elaydi, An Introduction to Difference Equations, section 2.1 (uniqueness of solutions)")

    # 8. the initial condition gives gamma = 0
    d.solved("f(x, 0) = x means Theta_f(x, 0) = theta_x + phi(0) = theta_x, so phi(0) = gamma = 0",
             sp.Eq(aq + gamma, aq), gamma, [0])
    start = claimed_initial(sp.Integer(0))
    phi_m = rec.subs(gamma, start)
    d.remark("Hence phi(m) = m theta and Theta_f(x, m) = theta_x + m theta:", sp.Eq(phi(m), phi_m))

    # 9. the solution
    r_x, a_x = sp.Symbol("|x|", positive=True), sp.Symbol("theta_x", real=True)
    f = _polar(rad(r_x, m), a_x + phi_m)
    x_polar = _polar(r_x, a_x)
    d.equal("f(x, 0) = x", unevaluated(lambda: f.subs(m, 0)), x_polar, methods=_POW)
    d.equal("f(x, m) = |x| e^{i (theta_x + m theta)} = x e^{i m theta}",
            f, x_polar * sp.exp(sp.I * m * theta), methods=_POW)
    x0, x1 = sp.symbols("x_0 x_1", real=True)
    fx = (x0 + sp.I * x1) * sp.exp(sp.I * m * theta)
    d.equal("In real coordinates, multiplying by e^{i m theta} is the rotation R(m theta) of RoPE",
            sp.Matrix([sp.re(fx, evaluate=False), sp.im(fx, evaluate=False)]), block(m * theta) * sp.Matrix([x0, x1]),
            methods=("expand", "rewrite(exp)"))

    # 10. it solves the defining equation
    fq = _polar(rad(rq, m), aq + phi_m)
    fk = _polar(rad(rk, n), ak + rec.subs({gamma: start, m: n}))
    d.equal("Conversely f(q, m) conj(f(k, n)) = q conj(k) e^{-i (n - m) theta}: a function of q, k and n - m",
            fq * sp.conjugate(fk), q_polar * sp.conjugate(k_polar) * sp.exp(-sp.I * (n - m) * theta), methods=_POW)
    d.remark("In d dimensions RoFormer applies this to every pair (x_{2i}, x_{2i+1}), each with its own "
          "theta_i = 10000^{-2i/d} (section 3.2.2): the pairs do not interact, so the derivation holds pair by pair.")
    d.result["f"] = sp.Lambda((r_x, a_x, m), f)
    d.result["phi"] = phi_m
    _checked(d)
    return d


# --- the same logic in the checker's own terms --------------------------------------------------------------------
# A vector is its polar pair (r, a), r > 0; positions are integers. R_f(r, a, m) and Theta_f(r, a, m) are the radius
# and angle of f, R_g and Theta_g those of g at (q, k, n - m); each is an arbitrary function, and the requirement and
# the initial condition are universal hypotheses the certificates instantiate (pemath.kernel.check, "hyp_at").

_R, _A, _M = var("r", "pos"), var("a"), var("m", "nat")
_OWN = (var("r1", "pos"), var("a1"), var("r2", "pos"), var("a2"), var("m1", "int"), var("n1", "int"))


def _at(index: int, *values: tuple) -> tuple:
    """Universal hypothesis ``index`` at ``values`` (its variables in order)."""
    return ("hyp_at", index, tuple((b[1], v) for b, v in zip(_OWN, values)))


def _kernel_term(e: sp.Expr, what: str) -> tuple:
    """An integer the proof's hooks give (phi(0), or a radius that is |x| itself), as a checker term."""
    if isinstance(e, sp.Integer):
        return num(int(e))
    raise ProofFailure(f"{what} is {sp.sstr(e)}, not a value the checked derivation can state")


def _checked(d: Derivation) -> None:
    """The derivation's logic, decided by pemath.kernel alone: under the requirement (moduli and angles) and the
    initial condition as universal hypotheses, R_f(r, a, m) = r and Theta_f(r, a, m) = a + m theta for every
    integer position, theta = Theta_f(1, 0, 1) (the angle the reference vector (1, 0) turns by in one step)."""
    r1, a1, r2, a2, m1, n1 = _OWN
    rf, tf = (lambda *x: app("R_f", *x)), (lambda *x: app("Theta_f", *x))
    binders = (("fun", "R_f", 3, "nonneg"), ("fun", "Theta_f", 3, "real"), ("fun", "R_g", 5, "real"),
               ("fun", "Theta_g", 5, "real"), _R, _A, _M)
    hyps = (("all", _OWN, ("eq", ("mul", rf(r1, a1, m1), rf(r2, a2, n1)), app("R_g", r1, a1, r2, a2, minus(n1, m1)))),
            ("all", _OWN, ("eq", minus(tf(r1, a1, m1), tf(r2, a2, n1)),
                           app("Theta_g", r1, a1, r2, a2, minus(n1, m1)))),
            ("all", _OWN[:2], ("eq", rf(r1, a1, num(0)), r1)),
            ("all", _OWN[:2], ("eq", tf(r1, a1, num(0)), a1)))
    R, A, M = _R, _A, _M
    radius_of = radius(sp.Symbol("r", positive=True), m)
    rad = R if radius_of == sp.Symbol("r", positive=True) else _kernel_term(radius_of, "the radius")
    start = _kernel_term(claimed_initial(sp.Integer(0)), "phi(0)")

    d.define("The same argument in the checker's own terms (pemath.kernel decides each step below, no simplifier): "
             "a vector is its polar pair (r, a), r > 0; R_f(r, a, m), Theta_f(r, a, m) are f's radius and angle, "
             "R_g, Theta_g g's at (q, k, n - m), every one an arbitrary function. The hypotheses are the requirement "
             "(moduli, and angles without 2 pi jumps) and f(x, 0) = x, each for every value of its variables.")
    for mm, where in ((M, "m"), (neg(M), "-m")):
        x = rf(R, A, mm)
        inv = ("inv", ("add", x, R))
        cert = ("ideal", ((_at(0, R, A, R, A, mm, mm), inv), (_at(0, R, A, R, A, num(0), num(0)), neg(inv)),
                          (_at(2, R, A), ("mul", ("add", rf(R, A, num(0)), R), inv)),
                          (("rule", "inv", (("add", x, R),)), neg(minus(x, R)))))
        d.checked(f"The radius at position {where}: R_f(q, {where})^2 = R_g(q, q, 0) = R_f(q, 0)^2 = r^2 (the "
                  "requirement at positions (m, m) and (0, 0), the initial condition), and R_f + r > 0, so "
                  f"R_f(q, {where}) = r", ("forall", binders, hyps, ("eq", x, rad)), cert)
    # Theta_f(r, a, 1) - Theta_f(1, 0, 1) = a: the requirement at (1, 1) and (0, 0) against the vector (1, 0)
    same_turn = ((_at(1, R, A, num(1), num(0), num(1), num(1)), 1), (_at(1, R, A, num(1), num(0), num(0), num(0)), -1),
                 (_at(3, R, A), 1), (_at(3, num(1), num(0)), -1))
    turn = tf(num(1), num(0), num(1))
    m0 = var("m0", "nat")
    k, k1 = ("add", num(0), m0), ("add", ("add", num(0), m0), num(1))
    for sign, where in ((1, "m"), (-1, "-m")):
        mm = M if sign > 0 else neg(M)
        if sign > 0:  # the requirement at (k, k + 1) and (0, 1): one step turns every vector alike
            steps = ((_at(1, R, A, R, A, k, k1), -1), (_at(1, R, A, R, A, num(0), num(1)), 1), (("hyp", 4), 1),
                     (_at(3, R, A), -1)) + same_turn
        else:  # at (-(k + 1), -k) and (0, 1)
            steps = ((_at(1, R, A, R, A, neg(k1), neg(k)), 1), (_at(1, R, A, R, A, num(0), num(1)), -1),
                     (("hyp", 4), 1), (_at(3, R, A), 1)) + tuple((g, -c) for g, c in same_turn)
        cert = ("induction", "m", ("ideal", ((_at(3, R, A), num(1)),)),
                ("ideal", tuple((g, num(c)) for g, c in steps)))
        concl = ("eq", tf(R, A, mm), ("add", A, start, ("mul", num(sign), M, turn)))
        d.checked(f"The angle at position {where}, by induction on m >= 0: Theta_f(q, 0) = a, and the requirement at "
                  f"({'k, k + 1' if sign > 0 else '-(k + 1), -k'}) and (0, 1) with the one at (1, 1) and (0, 0) "
                  "against the vector (1, 0) turns every vector by theta = Theta_f(1, 0, 1) per step",
                  ("forall", binders, hyps, concl), cert)
    # the hypotheses are not vacuous: each one, with RoPE's functions put in for the arbitrary ones (R_f = |r|, of
    # the sort nonneg everywhere; Theta_f = a + m theta; R_g = |r1| |r2|; Theta_g = a1 - a2 - (n1 - m1) theta),
    # holds at every value of its variables: the relations below are the hypotheses' own, substituted
    from ..kernel.terms import substitute_relation

    th = var("theta")
    p = [var(f"p{k}") for k in range(1, 6)]
    rope = {"R_f": ("lambda", ("p1", "p2", "p3"), ("abs", p[0])),
            "Theta_f": ("lambda", ("p1", "p2", "p3"), ("add", p[1], ("mul", p[2], th))),
            "R_g": ("lambda", ("p1", "p2", "p3", "p4", "p5"), ("mul", ("abs", p[0]), ("abs", p[2]))),
            "Theta_g": ("lambda", ("p1", "p2", "p3", "p4", "p5"),
                        ("add", p[1], neg(p[3]), neg(("mul", p[4], th))))}
    solved = tuple(substitute_relation(h[2], rope) for h in hyps)
    absolute = ("abs", r1)  # |r1| = r1 for r1 > 0: |r1|^2 = r1^2 and |r1| + r1 > 0
    inv = ("inv", ("add", absolute, r1))
    certs = tuple(("ideal", ((("rule", "abs_sq", (r1,)), inv), (("rule", "inv", (("add", absolute, r1),)),
                                                                 neg(minus(absolute, r1)))))
                  if k == 2 else ("ideal", ()) for k in range(len(solved)))
    d.checked("The hypotheses are not vacuous: each of them, with RoPE's functions put in for the arbitrary ones "
              "(R_f = |r|, Theta_f = a + m theta, R_g = |r1| |r2|, Theta_g = a1 - a2 - (n1 - m1) theta), holds "
              "at every value of its variables", ("forall", (th,) + _OWN, (), ("and", *solved)), ("and", certs))
