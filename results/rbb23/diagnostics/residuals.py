#!/usr/bin/env python3
"""Residuals of RBB max-load curves at n = 10^4 against our 25-run means (rbb23/max_load).

Run from the repository root: python3 results/rbb23/diagnostics/residuals.py
Standard library only. For each curve (the published one plus 1, and our single runs with a
common seed or independent seeds, at horizons 10^5 and 10^6 rounds) it prints the residuals
in units of one run's standard deviation (our standard error x sqrt(25)), their root mean
square, the lag-1 correlation of the residuals over m/n = 4, 5, ..., 19 (consecutive points;
near 0 when the points' errors are independent) and their mean from m/n = 19 on. Our means
and standard deviations are interpolated between our m/n = 1, 4, ..., 52 by the quadratic
through the three nearest points.
"""
import csv
import json
import math
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]


def interp(xs, ys, k):
    for i in range(len(xs) - 1):
        if xs[i] <= k <= xs[i + 1]:
            if k - xs[i] < xs[i + 1] - k:
                j = min(max(i - 1, 0), len(xs) - 3)
            else:
                j = min(i, len(xs) - 3)
            (x0, x1, x2), (y0, y1, y2) = xs[j:j + 3], ys[j:j + 3]
            return (y0 * (k - x1) * (k - x2) / ((x0 - x1) * (x0 - x2))
                    + y1 * (k - x0) * (k - x2) / ((x1 - x0) * (x1 - x2))
                    + y2 * (k - x0) * (k - x1) / ((x2 - x0) * (x2 - x1)))
    raise ValueError(f"m/n = {k} outside our grid")


def main():
    rows = [r for r in json.load(open(ROOT / "results/rbb23/max_load.json"))["rows"]
            if r["n"] == 10000]
    ks = [r["x"] for r in rows]
    mean = [r["summary"]["mean"] for r in rows]
    sd = [r["summary"]["sd"] for r in rows]
    curves = {}
    with open(ROOT.parent / "shared/reference/rbb23/avg_max_load.csv") as f:
        curves["published + 1"] = {int(r["m_over_n"]): float(r["avg_max_load"]) + 1
                                   for r in csv.DictReader(f) if r["n"] == "10000"}
    for name in ("common_seed", "independent_seeds"):
        for t in (100000, 1000000):
            with open(HERE / f"{name}.csv") as f:
                curves[f"{name}, T = {t}"] = {int(r["k"]): float(r["avg_max_load"])
                                              for r in csv.DictReader(f)
                                              if int(r["horizon"]) == t}
    for name, c in curves.items():
        z = {k: (v - interp(ks, mean, k)) / interp(ks, sd, k) for k, v in sorted(c.items())
             if k >= 4}
        fine = [z[k] for k in range(4, 20)]
        lag1 = sum(a * b for a, b in zip(fine, fine[1:])) / sum(a * a for a in fine)
        rms = math.sqrt(sum(v * v for v in z.values()) / len(z))
        tail = [v for k, v in z.items() if k >= 19]
        print(f"{name:28} rms {rms:4.2f}  lag-1 {lag1:+.2f}  mean from m/n = 19 "
              f"{sum(tail) / len(tail):+.2f}")
        print("    " + " ".join(f"{k}:{v:+.1f}" for k, v in z.items()))


if __name__ == "__main__":
    main()
