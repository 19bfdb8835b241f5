#!/usr/bin/python3
"""Fits the rational approximations that codegen/math_emitter.cpp emits,
f(x) = x P(x^2) / Q(x^2) on |x| <= C with P(0) = f'(0) and Q(0) = 1 fixed:

  erf   C = 3.925 (beyond it float32's erf is +-1), P of degree 6, Q of
        degree 4; absolute error.
  tanh  C = 9 (beyond it float32's tanh is +-1), P and Q of degree 4;
        relative error (tanh keeps its relative accuracy near 0).

Linearized least squares on P - (f(x)/x) Q, reweighted by 1/Q
(Sanathanan-Koerner) and then towards the minimax error (Lawson). Prints the
coefficients (highest first, as MathEmitter::poly takes them) and the
maximum error in exact arithmetic and in a float32 evaluation with fused
multiply-adds (tanh: in float32 ulps). Needs python3-numpy and
python3-mpmath; nothing at build time runs it.
  tests/math/fit_rational.py [erf|tanh]"""
import sys

import mpmath
import numpy as np

FUNCS = {
    # name: (C, coefficients of P, of Q, P(0), reference, relative error, iterations)
    "erf": (3.925, 7, 5, 2 / np.sqrt(np.pi), mpmath.erf, False, 80),
    "tanh": (9.0, 5, 5, 1.0, mpmath.tanh, True, 120),
}


def fit(x, y, C, NP, NQ, P0, relative, iters):
    f = y / x
    s = (x / C) ** 2  # in [0, 1]: a well-conditioned basis
    powers = lambda n, start: np.vstack([s ** i for i in range(start, n)]).T
    q_prev, lw = np.ones_like(s), np.ones_like(s)
    for it in range(iters):
        a = np.hstack([powers(NP, 1), -f[:, None] * powers(NQ, 1)])
        w = lw * (1 / f if relative else x) / q_prev
        c, *_ = np.linalg.lstsq(a * w[:, None], (f - P0) * w, rcond=None)
        p, q = np.concatenate([[P0], c[:NP - 1]]), np.concatenate([[1.0], c[NP - 1:]])
        q_prev = powers(NQ, 0) @ q
        err = x * (powers(NP, 0) @ p) / q_prev - y
        if relative:
            err = err / y
        if it >= 20:
            lw = lw * (np.abs(err) / np.abs(err).max()) ** 0.3 + 1e-12
            lw /= lw.max()
    # back to powers of x^2
    return [p[i] / C ** (2 * i) for i in range(NP)], [q[i] / C ** (2 * i) for i in range(NQ)], np.abs(err).max()


def eval_f32(p, q, x, C):
    xc = np.clip(x, np.float32(-C), np.float32(C))
    x2 = (xc * xc).astype(np.float32)

    def horner(coef):
        r = np.full_like(x2, np.float32(coef[-1]))
        for k in coef[-2::-1]:  # fma: one rounding per step
            r = (r.astype(np.float64) * x2 + np.float64(np.float32(k))).astype(np.float32)
        return r
    return ((xc * horner(p)).astype(np.float32) / horner(q)).astype(np.float32)


def main():
    name = sys.argv[1] if len(sys.argv) > 1 else "erf"
    C, NP, NQ, P0, ref, relative, iters = FUNCS[name]
    mpmath.mp.dps = 30
    x = np.linspace(1e-4, C, 30000)
    y = np.array([float(ref(v)) for v in x])
    p, q, err = fit(x, y, C, NP, NQ, P0, relative, iters)
    xs = np.concatenate([np.linspace(-C - 3, C + 3, 20001), np.geomspace(1e-30, 1, 2000)]).astype(np.float32)
    want = np.array([float(ref(float(v))) for v in xs])
    got = eval_f32(p, q, xs, C).astype(np.float64)
    if relative:
        ulp = np.spacing(np.abs(want).astype(np.float32)).astype(np.float64)
        err32 = f"{(np.abs(got - want) / ulp).max():.2f} ulp"
    else:
        err32 = f"{np.abs(got - want).max():.3g}"
    print("P (high to low):", ", ".join(repr(float(v)) for v in p[::-1]))
    print("Q (high to low):", ", ".join(repr(float(v)) for v in q[::-1]))
    print(f"{name}: max {'relative ' if relative else ''}|error| {err:.3g} exact, {err32} in float32")


if __name__ == "__main__":
    main()
