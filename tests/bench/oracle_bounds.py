#!/usr/bin/env python3
"""Information bounds for the statistics goals eval_stats misses.

Standard library only.  Each bound is an *oracle*: a test or estimator
that is told the true noise model (shape, sigma, mode weights, phi),
which no real procedure knows, so no procedure can do better than it on
that model.  docs/ANALYSIS.md quotes the figures.

  python3 tests/bench/oracle_bounds.py [ab|cp] [SCALE]

ab: bimodal noise (normal CV 1 %, 30 % of runs +2.5 %), candidate 2 %
    slower, N runs per side.  The most powerful test that is invariant
    to a common shift of both sides (every A/B test that does not take
    the base's level from elsewhere is) rejects for large values of the
    integrated likelihood ratio
        int prod f(b - m) prod f(c - m + d) dm / int prod f(b - m) prod f(c - m) dm
    (Wijsman's representation; by Hunt-Stein it also bounds every
    level-alpha test in the minimax sense).  Its level-alpha critical
    value and power are found by simulation.  For comparison, the test
    that also knows the base's level exactly (a one-sample likelihood
    ratio on the candidate runs) is given too.
cp: 120-point series, one 2 % step, noise bimodal or AR(1) phi = 0.5
    (marginal CV 1 %).  The oracle knows the noise model and that there
    is exactly one step, and takes the maximum-likelihood position;
    "levels known" also knows both levels (an upper bound), "levels
    fitted" fits them (the exact AR(1) likelihood, i.e. GLS).  Hit = the
    estimate within +-3 of the true position.  Detection is not required,
    so these bound the hit rate from above.
"""
import math
import random
import sys

S = 0.01                     # normal part of the noise (log scale)
G = math.log(1.025)          # bimodal: the second mode
W = 0.3                      # bimodal: its weight
D = -math.log(0.98)          # the 2 % drop, as a positive log shift
PHI = 0.5


def draw_bimodal(rng):
    return math.log(1 + S * rng.gauss(0, 1)) + (G if rng.random() < W else 0)


def logf(y):
    """log density of the bimodal log noise (normal approximation of
    log(1 + S z), error below 1e-4 sigma)."""
    a = -0.5 * (y / S) ** 2 + math.log(1 - W)
    b = -0.5 * ((y - G) / S) ** 2 + math.log(W)
    m = a if a > b else b
    return m + math.log(math.exp(a - m) + math.exp(b - m))


MU = [(-4 + 8 * k / 160) * S for k in range(161)]  # location grid


def lse(v):
    m = max(v)
    return m + math.log(sum(math.exp(x - m) for x in v))


def inv_llr(b, c):
    """log integrated LR for 'candidate lower by D' vs 'no change'."""
    mb = sum(b) / len(b)
    num, den = [], []
    for u in MU:
        m = mb + u
        lb = sum(logf(x - m) for x in b)
        num.append(lb + sum(logf(x - m + D) for x in c))
        den.append(lb + sum(logf(x - m) for x in c))
    return lse(num) - lse(den)


def known_llr(c):
    return sum(logf(x + D) - logf(x) for x in c)


def quantile_upper(v, alpha):
    v = sorted(v)
    return v[int(math.ceil((1 - alpha) * len(v))) - 1]


def ab(scale):
    rng = random.Random(5)
    n0, n1 = int(20000 * scale), int(4000 * scale)
    for n in (5, 8, 12):
        h0 = [[draw_bimodal(rng) for _ in range(2 * n)] for _ in range(n0)]
        h1 = [[draw_bimodal(rng) for _ in range(n)] +
              [draw_bimodal(rng) - D for _ in range(n)] for _ in range(n1)]
        s0 = [inv_llr(x[:n], x[n:]) for x in h0]
        s1 = [inv_llr(x[:n], x[n:]) for x in h1]
        k0 = [known_llr(x[n:]) for x in h0]
        k1 = [known_llr(x[n:]) for x in h1]
        for alpha in (0.005, 0.01):
            c = quantile_upper(s0, alpha)
            ck = quantile_upper(k0, alpha)
            pw = sum(v > c for v in s1) / n1
            pk = sum(v > ck for v in k1) / n1
            print("ab bimodal N=%2d one-sided alpha=%.3f: invariant oracle "
                  "power %.1f %%, base level known %.1f %%  (%d/%d paths)" %
                  (n, alpha, 100 * pw, 100 * pk, n0, n1), flush=True)


def cp_bimodal_known(rng, n, pos):
    y = [draw_bimodal(rng) - (D if i >= pos else 0) for i in range(n)]
    # log L(tau) = sum_{i<tau} logf(y) + sum_{i>=tau} logf(y + D)
    a = [logf(v) for v in y]
    b = [logf(v + D) for v in y]
    best, arg, acc = None, 0, sum(b)
    for t in range(0, n + 1):
        if 5 <= t <= n - 5 and (best is None or acc > best):
            best, arg = acc, t
        if t < n:
            acc += a[t] - b[t]
    return arg


LEVELS = [-0.06 + 0.001 * k for k in range(101)]   # 0.1 sigma apart


def cp_bimodal_fitted(rng, n, pos):
    """Known noise shape, both levels fitted (on a 0.1-sigma grid) for
    every candidate position: the profile likelihood's maximum."""
    y = [draw_bimodal(rng) - (D if i >= pos else 0) for i in range(n)]
    pre = []  # pre[k][t] = sum_{i<t} logf(y_i - level_k)
    for lv in LEVELS:
        acc, row = 0.0, [0.0]
        for v in y:
            acc += logf(v - lv)
            row.append(acc)
        pre.append(row)
    best, arg = None, 0
    for t in range(5, n - 4):
        l1 = max(row[t] for row in pre)
        l2 = max(row[n] - row[t] for row in pre)
        if best is None or l1 + l2 > best:
            best, arg = l1 + l2, t
    return arg


def ar_series(rng, n, pos):
    e = rng.gauss(0, 1)
    y = []
    for i in range(n):
        e = PHI * e + math.sqrt(1 - PHI * PHI) * rng.gauss(0, 1)
        y.append(S * e - (D if i >= pos else 0))
    return y


def cp_ar(rng, n, pos, known):
    """Exact AR(1) likelihood: prewhiten z_0 = r y_0, z_t = y_t - phi
    y_(t-1) (r = sqrt(1 - phi^2)); the levels become regressors x1, x2
    with the same transform; least squares on (z, x1, x2) is GLS."""
    y = ar_series(rng, n, pos)
    r = math.sqrt(1 - PHI * PHI)
    best, arg = None, 0
    for t in range(5, n - 4):
        z, x1, x2 = [], [], []
        for i in range(n):
            l1 = 1.0 if i < t else 0.0
            l2 = 1.0 - l1
            if i == 0:
                z.append(r * y[0]); x1.append(r * l1); x2.append(r * l2)
            else:
                p1 = 1.0 if i - 1 < t else 0.0
                z.append(y[i] - PHI * y[i - 1])
                x1.append(l1 - PHI * p1)
                x2.append(l2 - PHI * (1 - p1))
        if known:
            m1, m2 = 0.0, -D
        else:
            a11 = sum(u * u for u in x1); a22 = sum(u * u for u in x2)
            a12 = sum(u * v for u, v in zip(x1, x2))
            b1 = sum(u * v for u, v in zip(x1, z))
            b2 = sum(u * v for u, v in zip(x2, z))
            det = a11 * a22 - a12 * a12
            m1 = (a22 * b1 - a12 * b2) / det
            m2 = (a11 * b2 - a12 * b1) / det
        rss = sum((zz - m1 * u - m2 * v) ** 2 for zz, u, v in zip(z, x1, x2))
        if best is None or rss < best:
            best, arg = rss, t
    return arg, y


def cp_ols(y, n):
    best, arg = None, 0
    for t in range(5, n - 4):
        a, b = y[:t], y[t:]
        ma, mb = sum(a) / len(a), sum(b) / len(b)
        rss = sum((v - ma) ** 2 for v in a) + sum((v - mb) ** 2 for v in b)
        if best is None or rss < best:
            best, arg = rss, t
    return arg


def cp(scale):
    n, trials = 120, int(2000 * scale)
    rng = random.Random(7)
    hit = 0
    for _ in range(trials):
        pos = 15 + rng.randrange(90)
        hit += abs(cp_bimodal_known(rng, n, pos) - pos) <= 3
    print("cp bimodal, levels known, max likelihood: hit %.1f %% (%d series)"
          % (100 * hit / trials, trials), flush=True)
    rng = random.Random(9)
    hit = 0
    for _ in range(trials):
        pos = 15 + rng.randrange(90)
        hit += abs(cp_bimodal_fitted(rng, n, pos) - pos) <= 3
    print("cp bimodal, levels fitted, max likelihood: hit %.1f %% (%d series)"
          % (100 * hit / trials, trials), flush=True)
    for known in (True, False):
        rng = random.Random(8)
        hit = hit_ols = 0
        for _ in range(trials):
            pos = 15 + rng.randrange(90)
            t, y = cp_ar(rng, n, pos, known)
            hit += abs(t - pos) <= 3
            hit_ols += abs(cp_ols(y, n) - pos) <= 3
        print("cp AR(1) phi=0.5, levels %s: GLS hit %.1f %%, OLS hit %.1f %%"
              " (%d series)" % ("known" if known else "fitted",
                                100 * hit / trials, 100 * hit_ols / trials,
                                trials), flush=True)


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else "ab cp"
    scale = float(sys.argv[2]) if len(sys.argv) > 2 else 1.0
    if "cp" in what:
        cp(scale)
    if "ab" in what:
        ab(scale)
