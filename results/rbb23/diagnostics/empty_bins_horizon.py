#!/usr/bin/env python3
"""Which horizon fits the published RBB empty-bin fractions at m/n = 7..19 (rbb23/empty_bins)?

Run from the repository root: python3 results/rbb23/diagnostics/empty_bins_horizon.py
Standard library only. For n = 100 and n = 1000 it prints z = (published - ours) / se for
our 25-run means over 10^6 rounds (results/rbb23/empty_bins.json) and over the first T
rounds (empty_short_n*.csv: 25 runs each, averages over the first T rounds from the uniform
start). se combines our standard error (spread of the 25 run means / 5) with the published
value's rounding to 10^-4 (uniform: 10^-4 / sqrt(12)).
"""
import csv
import json
import math
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
ROUNDING = 1e-4 / math.sqrt(12)


def main():
    published = defaultdict(dict)
    with open(ROOT.parent / "shared/reference/rbb23/avg_fraction_empty_bins.csv") as f:
        for r in csv.DictReader(f):
            published[int(r["n"])][int(r["m_over_n"])] = float(r["avg_fraction_empty_bins"])
    rows = json.load(open(ROOT / "results/rbb23/empty_bins.json"))["rows"]
    ours = {(r["n"], int(r["x"])): (r["summary"]["mean"], r["summary"]["stderr"]) for r in rows}
    for n in (100, 1000):
        short = defaultdict(list)
        with open(HERE / f"empty_short_n{n}.csv") as f:
            for r in csv.DictReader(f):
                short[(int(r["k"]), int(r["horizon"]))].append(
                    float(r["avg_fraction_empty_bins"]))
        horizons = sorted({t for _, t in short})
        print(f"n = {n}: z of published against 10^6 rounds (the item), then T = "
              + ", ".join(str(t) for t in horizons))
        for k in range(7, 20):
            p = published[n][k]
            mean, se = ours[(n, k)]
            zs = [(p - mean) / math.hypot(se, ROUNDING)]
            for t in horizons:
                v = short[(k, t)]
                m = sum(v) / len(v)
                sd = math.sqrt(sum((x - m) ** 2 for x in v) / (len(v) - 1))
                zs.append((p - m) / math.hypot(sd / math.sqrt(len(v)), ROUNDING))
            print(f"  m/n = {k:2}: " + " ".join(f"{z:+6.1f}" for z in zs))


if __name__ == "__main__":
    main()
