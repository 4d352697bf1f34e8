#!/usr/bin/python3
"""plot_sim_heatmap.py - heatmap of a predicted speedup from pccl-sim CSV files:
rows are rank counts, columns per-rank sizes, cells the time of --base over
the time of --algo (above 1: --algo is faster); cells that either lacks are
blank. Needs Debian's python3 with python3-matplotlib.

usage: plot_sim_heatmap.py [--algo hier_recdbl] [--base ring] -o OUT.png CSV...
"""
import argparse
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def load(paths):
    times, colls = {}, set()
    for path in paths:
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                ranks = int(row["nranks"])
                per_rank = int(row["bytes"]) // ranks
                times[(row["algorithm"], ranks, per_rank)] = float(row["time_us"])
                colls.add(row["collective"])
    return times, colls


def size_label(b):
    for unit, shift in (("GB", 30), ("MB", 20), ("KB", 10)):
        if b >= 1 << shift:
            return f"{b >> shift} {unit}"
    return f"{b} B"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--algo", default="hier_recdbl")
    ap.add_argument("--base", default="ring")
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("csv", nargs="+")
    args = ap.parse_args()
    times, colls = load(args.csv)
    ranks = sorted({r for (_, r, _) in times})
    sizes = sorted({s for (_, _, s) in times})
    grid = []
    for r in ranks:
        line = []
        for s in sizes:
            a, b = times.get((args.algo, r, s)), times.get((args.base, r, s))
            line.append(b / a if a and b else float("nan"))
        grid.append(line)
    fig, ax = plt.subplots(figsize=(1.2 * len(sizes) + 2, 0.6 * len(ranks) + 1.5))
    im = ax.imshow(grid, cmap="viridis", aspect="auto", origin="lower")
    for i, line in enumerate(grid):
        for j, v in enumerate(line):
            if v == v:  # not NaN
                ax.text(j, i, f"{v:.2f}", ha="center", va="center", color="w", fontsize=8)
    ax.set_xticks(range(len(sizes)), [size_label(s) for s in sizes])
    ax.set_yticks(range(len(ranks)), [str(r) for r in ranks])
    ax.set_xlabel(f"{'/'.join(sorted(colls))} size per rank")
    ax.set_ylabel("ranks (8 per node)")
    ax.set_title(f"predicted speedup of {args.algo} over {args.base}")
    fig.colorbar(im, ax=ax)
    fig.tight_layout()
    fig.savefig(args.output, dpi=120)
    return 0


if __name__ == "__main__":
    sys.exit(main())
