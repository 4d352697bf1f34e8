#!/usr/bin/python3
"""timed_table.py - how close the timed node algorithm (seg_cma) comes to the
better of the two paths it chooses between, from pccl-bench CSV files of
runs with -a seg_cma,seg,cma: per collective and size, each algorithm's
speedup over MPI in the same run (each algorithm's block has its own MPI
time, so speedups compare where absolute times would not), and seg_cma's
speedup over the better of seg and cma's.

  timed_table.py FILE.csv [FILE.csv ...]

Each file is one run; a row per file, collective and size."""
import csv
import sys

from speedup_table import size_text

ALGOS = ("seg_cma", "seg", "cma")


def main(paths):
    print("| run | collective | size | seg_cma | seg | cma | seg_cma / better |")
    print("|---|---|---|---|---|---|---|")
    ratios = []
    for path in paths:
        cells = {}
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                if row["algorithm"] in ALGOS and row["speedup_vs_mpi"]:
                    key = (row["collective"], int(row["bytes"]))
                    cells.setdefault(key, {})[row["algorithm"]] = float(row["speedup_vs_mpi"])
        for (coll, size), s in sorted(cells.items()):
            if len(s) < len(ALGOS):
                continue
            ratio = s["seg_cma"] / max(s["seg"], s["cma"])
            ratios.append(ratio)
            print(f"| {path} | {coll} | {size_text(size)} | {s['seg_cma']:.2f} | {s['seg']:.2f} "
                  f"| {s['cma']:.2f} | {ratio:.2f} |")
    if not ratios:
        sys.exit("timed_table.py: no size with all of seg_cma, seg and cma")
    ratios.sort()
    print(f"\n{len(ratios)} points: seg_cma / better path median {ratios[len(ratios) // 2]:.2f}, "
          f"lowest {ratios[0]:.2f}; within 10% at {sum(r >= 0.9 for r in ratios)}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
