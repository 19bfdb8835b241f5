#!/usr/bin/python3
"""Fits the rational approximation of erf that codegen/math_emitter.cpp
emits: erf x = x P(x^2) / Q(x^2) on |x| <= C (beyond C, float32's erf is
+-1), P of degree 6 with P(0) = 2/sqrt(pi) fixed, Q of degree 4 with
Q(0) = 1. Linearized least squares on P - (erf(x)/x) Q, reweighted by
1/Q (Sanathanan-Koerner) and then towards the minimax error (Lawson).
Prints the coefficients (highest first, as MathEmitter::poly takes them)
and the maximum absolute error in exact arithmetic and in a float32
evaluation with fused multiply-adds. Needs python3-numpy and python3-mpmath;
nothing at build time runs it."""
import mpmath
import numpy as np

C = 3.925
P0 = 2 / np.sqrt(np.pi)
NP, NQ = 7, 5  # coefficients of P and Q


def fit(x, y, iters=80):
    f = y / x
    s = (x / C) ** 2  # in [0, 1]: a well-conditioned basis
    powers = lambda n, start: np.vstack([s ** i for i in range(start, n)]).T
    q_prev, lw = np.ones_like(s), np.ones_like(s)
    for it in range(iters):
        a = np.hstack([powers(NP, 1), -f[:, None] * powers(NQ, 1)])
        w = lw * x / q_prev
        c, *_ = np.linalg.lstsq(a * w[:, None], (f - P0) * w, rcond=None)
        p, q = np.concatenate([[P0], c[:NP - 1]]), np.concatenate([[1.0], c[NP - 1:]])
        q_prev = powers(NQ, 0) @ q
        err = x * (powers(NP, 0) @ p) / q_prev - y
        if it >= 20:
            lw = lw * (np.abs(err) / np.abs(err).max()) ** 0.3 + 1e-12
            lw /= lw.max()
    # back to powers of x^2
    return [p[i] / C ** (2 * i) for i in range(NP)], [q[i] / C ** (2 * i) for i in range(NQ)], np.abs(err).max()


def eval_f32(p, q, x):
    xc = np.clip(x, np.float32(-C), np.float32(C))
    x2 = (xc * xc).astype(np.float32)

    def horner(coef):
        r = np.full_like(x2, np.float32(coef[-1]))
        for k in coef[-2::-1]:  # fma: one rounding per step
            r = (r.astype(np.float64) * x2 + np.float64(np.float32(k))).astype(np.float32)
        return r
    return ((xc * horner(p)).astype(np.float32) / horner(q)).astype(np.float32)


def main():
    mpmath.mp.dps = 30
    x = np.linspace(1e-4, C, 30000)
    y = np.array([float(mpmath.erf(v)) for v in x])
    p, q, err = fit(x, y)
    xs = np.concatenate([np.linspace(-4.5, 4.5, 20001), np.geomspace(1e-30, 1, 2000)]).astype(np.float32)
    ref = np.array([float(mpmath.erf(float(v))) for v in xs])
    err32 = np.abs(eval_f32(p, q, xs).astype(np.float64) - ref).max()
    print("P (high to low):", ", ".join(repr(float(v)) for v in p[::-1]))
    print("Q (high to low):", ", ".join(repr(float(v)) for v in q[::-1]))
    print(f"max |error|: {err:.3g} exact, {err32:.3g} in float32")


if __name__ == "__main__":
    main()
