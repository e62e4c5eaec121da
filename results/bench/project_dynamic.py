"""Projected full-scale times of rbb23/max_load, rbb23/empty_bins and selfstab16 from a
dynamic floor table (results/bench/dynamic_*.csv): throws per point from the closed form of
the RBB empty fraction (selfstab16: lambda*n per round over its burn-in and rounds) times ns
per throw interpolated linearly in m/n or lambda between the rows, divided by 2 threads.
Usage: python3 results/bench/project_dynamic.py results/bench/dynamic_before.csv ..."""
import csv, math, sys
def load(path):
    t = {}
    for r in csv.DictReader(open(path)):
        t[(int(r['n']), r['case'], r['state'])] = (float(r['ns_per_throw_median']), float(r['ratio_to_floor']), float(r['floor_ns_per_throw']))
    return t
def interp(xs, ys, x):
    for (x0, y0), (x1, y1) in zip(zip(xs, ys), zip(xs[1:], ys[1:])):
        if x0 <= x <= x1:
            return y0 + (y1 - y0) * (x - x0) / (x1 - x0)
    raise ValueError(x)
def ns_rbb(t, n, k, col, state='dense'):
    ks = [1, 16, 52]
    return interp(ks, [t[(n, f'rbb d=1 m/n={kk}', state)][col] for kk in ks], k)
def ns_leaky(t, n, lam, d, col):
    ls = [0.5, 0.9, 0.99]
    ys = []
    for l in ls:
        row = [v for (nn, c, s), v in t.items() if nn == n and c == f'leaky d={d} λ={l}' and s != 'list-ref']
        ys.append(row[0][col])
    return interp(ls, ys, lam)
def e(k): return math.sqrt(k*k + 1) - k
MAXK = list(range(1, 53, 3))
EMPK = list(range(1, 20)) + list(range(22, 53, 3))
def rbb(t, ks, col, scale=1.0):
    cs = 0.0; throws = 0.0
    for n in [100, 1000, 10000]:
        for k in ks:
            th = 25 * 1e6 * n * (1 - e(k))
            throws += th
            v = ns_rbb(t, n, k, col)
            cs += th * v * scale * 1e-9
    return cs / 2, throws
def selfstab(t, col, scale=1.0):
    cs = 0.0; throws = 0.0
    for n in [1000, 10000, 100000]:
        for lam in [0.5, 0.75, 0.9, 0.95, 0.99]:
            burn = max(1000, math.ceil(10 / (1 - lam) ** 2)); meas = max(20000, math.ceil(40 / (1 - lam) ** 2))
            for d in [1, 2]:
                th = lam * n * (burn + meas)
                throws += th
                cs += th * ns_leaky(t, n, lam, d, col) * scale * 1e-9
    return cs / 2, throws
for path in sys.argv[1:]:
    t = load(path)
    print(path)
    for name, col, scale in [('ns/throw as measured', 0, 1.0), ('ratio x 1.55 ns floor', 1, 1.55)]:
        ml, tml = rbb(t, MAXK, col, scale)
        eb, teb = rbb(t, EMPK, col, scale)
        only = [k for k in EMPK if k not in MAXK]
        eo, teo = rbb(t, only, col, scale)
        ss, tss = selfstab(t, col, scale)
        print(f'  [{name}] rbb23/max_load {ml:.0f} s ({tml:.3g} throws); empty_bins alone {eb:.0f} s ({teb:.3g}); '
              f'empty_bins after max_load {eo:.0f} s; selfstab16 {ss:.0f} s ({tss:.3g}); total rbb23+selfstab16 {(ml+eo+ss)/3600:.2f} h')
