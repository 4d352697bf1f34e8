#!/usr/bin/python3
"""hier_summary.py - the table behind docs/results/README.md's emulated-cluster results,
from the CSV files of tools/bench/hier_sweep.sh.

For each collective, node count and size it prints the default selection
(the "auto:NAME" row) and its speed against flat ring, against Open MPI's
own collective in the same row, and against HAN (the "-han" run: the auto
row's time there against that row's MPI time); then the fastest algorithm
and the default's time as a fraction of it, first by time, then by speed
against MPI in the same row (which cancels the machine's drift between
rows; the default counts as within the margin by this one). Speeds are
times divided, above 1 when pccl is faster. Where a case ran several times
(REPEAT), each number is the median over the runs.

usage: hier_summary.py [--margin 0.10] [--algo auto] DIR...   (each DIR holds
       COLL-nN.csv and, optionally, COLL-nN-han.csv)"""
import argparse
import csv
import glob
import os
import re
import statistics
import sys


def read(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def human(n):
    for unit, size in (("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= size:
            return f"{n // size} {unit}"
    return f"{n} B"


def key(row):
    """The algorithm a row measured ("auto" for the default selection's rows)."""
    name = row["algorithm"]
    if row.get("k", "0") not in ("", "0"):
        name += ":" + row["k"]
    return name


def medians(rows):
    """(size, algorithm) -> (median time, median MPI time, median MPI/time,
    the default's choice), over the runs (rows) of that pair."""
    groups = {}
    for r in rows:
        name = key(r)
        k = (int(r["bytes"]), "auto" if name.startswith("auto:") else name)
        groups.setdefault(k, []).append(r)
    out = {}
    for k, rs in groups.items():
        t = [float(r["time_us"]) for r in rs]
        m = [float(r["mpi_time_us"]) for r in rs]
        out[k] = (statistics.median(t), statistics.median(m),
                  statistics.median(b / a for a, b in zip(t, m)), key(rs[0]))
    return out


def cells(main_rows, han_rows, names=("auto",)):
    """Yields (bytes, dict) per size: the first of `names` measured (the
    default: "auto"), its ratios and the best measured, by median time and
    by speed against MPI in the same row."""
    med, han = medians(main_rows), medians(han_rows)
    for size in sorted({s for s, _ in med}):
        here = {a: v for (s, a), v in med.items() if s == size}
        mine = next((n for n in names if n in here), None)
        if mine is None:
            continue
        t, _, vs_mpi, choice = here[mine]
        best = min(here, key=lambda a: here[a][0])
        best_rel = max(here, key=lambda a: here[a][2])
        yield size, {
            "auto": choice[5:] if choice.startswith("auto:") else choice,
            "vs_ring": here["ring"][0] / t if "ring" in here else None,
            "vs_mpi": vs_mpi,
            "vs_han": han[(size, mine)][2] if (size, mine) in han else None,
            "best": best,
            "of_best": here[best][0] / t,
            "best_rel": best_rel,
            "of_best_rel": vs_mpi / here[best_rel][2],
        }


def fmt(x):
    return "-" if x is None else f"{x:.2f}x"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--margin", type=float, default=0.10,
                    help="the default counts as matching the best within this fraction")
    ap.add_argument("--algo", default="auto",
                    help="comma list: report the first of these each file has in place of "
                         "the default selection (e.g. hier_recdbl,hier_rechalv)")
    ap.add_argument("dirs", nargs="+")
    args = ap.parse_args()
    within = total = 0
    for d in args.dirs:
        for path in sorted(glob.glob(os.path.join(d, "*-n*.csv"))):
            m = re.match(r"(\w+)-n(\d+)\.csv$", os.path.basename(path))
            if not m:
                continue
            coll, nodes = m.group(1), m.group(2)
            han_path = os.path.join(d, f"{coll}-n{nodes}-han.csv")
            han = read(han_path) if os.path.exists(han_path) else []
            print(f"\n{d}: {coll}, {nodes} nodes")
            print(f"{'bytes':>8}  {'default' if args.algo == 'auto' else 'algorithm':<14} {'/ring':>7} {'/MPI':>7} {'/HAN':>7}  "
                  f"{'fastest':<14} {'of it':>5}  {'fastest vs MPI':<14} {'of it':>5}")
            for size, c in cells(read(path), han, args.algo.split(",")):
                ok = c["of_best_rel"] >= 1 - args.margin
                within += ok
                total += 1
                print(f"{human(size):>8}  {c['auto']:<14} {fmt(c['vs_ring']):>7} "
                      f"{fmt(c['vs_mpi']):>7} {fmt(c['vs_han']):>7}  {c['best']:<14} "
                      f"{c['of_best']:>5.2f}  {c['best_rel']:<14} "
                      f"{c['of_best_rel']:>5.2f}{'' if ok else ' *'}")
    if not total:
        sys.exit("hier_summary: no CSV with an auto row found")
    what = "default" if args.algo == "auto" else args.algo
    print(f"\n{what} within {args.margin:.0%} of the best measured (speed against MPI in the"
          f" same row): {within} of {total} cells (* marks the others)")


if __name__ == "__main__":
    main()
