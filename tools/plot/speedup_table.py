#!/usr/bin/python3
"""speedup_table.py - pccl-bench CSV files as one markdown table: per size
(rows) and collective (columns), pccl's speedup over MPI in the same run and
the algorithm pccl ran, and, below it, each collective's smallest speedup.

  speedup_table.py FILE.csv [FILE.csv ...]

Rows of several files (e.g. a sweep and a separate run of the largest size)
are merged; a size measured twice keeps both, joined by '/'."""
import csv
import sys

ORDER = ["allreduce", "allgather", "reducescatter", "broadcast", "reduce"]


def size_text(n):
    for unit, scale in (("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale} {unit}"
    return f"{n} B"


def main(paths):
    cells, sizes, colls = {}, set(), set()
    for path in paths:
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                if not row["speedup_vs_mpi"]:
                    continue
                key = (int(row["bytes"]), row["collective"])
                algo = row["algorithm"].removeprefix("auto:")
                cells.setdefault(key, []).append((float(row["speedup_vs_mpi"]), algo))
                sizes.add(key[0])
                colls.add(key[1])
    if not cells:
        sys.exit("speedup_table.py: no rows with an MPI time")
    colls = [c for c in ORDER if c in colls] + sorted(colls - set(ORDER))
    print("| size | " + " | ".join(colls) + " |")
    print("|---" * (len(colls) + 1) + "|")
    for size in sorted(sizes):
        row = []
        for c in colls:
            got = cells.get((size, c), [])
            row.append(" / ".join(f"{s:.2f}x {a}" for s, a in got) if got else "")
        print(f"| {size_text(size)} | " + " | ".join(row) + " |")
    lows = []
    for c in colls:
        worst = min((s, size) for (size, cc), v in cells.items() if cc == c for s, _ in v)
        lows.append(f"{worst[0]:.2f}x at {size_text(worst[1])}")
    print("| smallest | " + " | ".join(lows) + " |")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
