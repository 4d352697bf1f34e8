#!/usr/bin/python3
"""plot_bench.py - pictures from pccl-bench CSV files, like the PCCL paper's.

  time    time against the number of ranks, one line per algorithm (and MPI's
          own collective), one panel per message size (the paper's Figure 7)
  heatmap speedup of one algorithm over flat ring and over MPI across
          sizes x rank counts (the paper's Figure 9)

Usage (Debian's python3 with python3-matplotlib):
  /usr/bin/python3 tools/plot/plot_bench.py time    --coll allgather \\
      --sizes 65536,1048576 -o docs/img/ag-time.png  run1.csv run2.csv ...
  /usr/bin/python3 tools/plot/plot_bench.py heatmap --coll allgather \\
      --algo auto -o docs/img/ag-heatmap.png run1.csv run2.csv ...

Rows of the default selection appear in the CSV as "auto:<name>"; --algo auto
picks them. Several rows for one (algorithm, ranks, size) are reduced to
their median, so repeated runs can simply be concatenated."""
import argparse
import csv
import statistics
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read_rows(paths, coll):
    rows = []
    for path in paths:
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                if row["collective"] != coll:
                    continue
                rows.append(row)
    if not rows:
        sys.exit(f"plot_bench: no {coll} rows in {', '.join(paths)}")
    return rows


def algo_of(row):
    return "auto" if row["algorithm"].startswith("auto:") else row["algorithm"]


def tables(rows):
    """(algorithm, nranks, bytes) -> median time; MPI under the name 'MPI'."""
    times, mpi = defaultdict(list), defaultdict(list)
    for r in rows:
        key = (int(r["nranks"]), int(r["bytes"]))
        times[(algo_of(r),) + key].append(float(r["time_us"]))
        if r["mpi_time_us"]:
            mpi[key].append(float(r["mpi_time_us"]))
    out = {k: statistics.median(v) for k, v in times.items()}
    out.update({("MPI",) + k: statistics.median(v) for k, v in mpi.items()})
    return out


def human(nbytes):
    for unit, div in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if nbytes >= div:
            return f"{nbytes / div:g} {unit}"
    return f"{nbytes} B"


def plot_time(args, t):
    algos = sorted({k[0] for k in t})
    sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else sorted({k[2] for k in t})
    fig, axes = plt.subplots(1, len(sizes), figsize=(4.2 * len(sizes), 3.6), squeeze=False)
    for ax, size in zip(axes[0], sizes):
        for a in algos:
            pts = sorted((k[1], v) for k, v in t.items() if k[0] == a and k[2] == size)
            if pts:
                style = "k--" if a == "MPI" else "-o"
                ax.plot([p[0] for p in pts], [p[1] for p in pts], style, label=a, markersize=3)
        ax.set_title(f"{args.coll}, {human(size)}")
        ax.set_xlabel("ranks")
        ax.set_ylabel("time (us)")
        ax.set_yscale("log")
        ax.grid(alpha=0.3)
    axes[0][-1].legend(fontsize=7)
    fig.suptitle(args.title or "")
    fig.tight_layout()
    fig.savefig(args.output, dpi=120)


def plot_heatmap(args, t):
    ranks = sorted({k[1] for k in t if k[0] == args.algo})
    sizes = sorted({k[2] for k in t if k[0] == args.algo})
    fig, axes = plt.subplots(1, 2, figsize=(4 + 1.1 * len(ranks) * 2, 1 + 0.45 * len(sizes)))
    for ax, base in zip(axes, (args.baseline, "MPI")):
        grid = [[float("nan")] * len(ranks) for _ in sizes]
        for i, s in enumerate(sizes):
            for j, p in enumerate(ranks):
                mine, other = t.get((args.algo, p, s)), t.get((base, p, s))
                if mine and other:
                    grid[i][j] = other / mine
        im = ax.imshow(grid, cmap="RdYlGn", vmin=0, vmax=max(2.0, max(
            (v for row in grid for v in row if v == v), default=2.0)), aspect="auto",
            origin="lower")
        for i in range(len(sizes)):
            for j in range(len(ranks)):
                if grid[i][j] == grid[i][j]:
                    ax.text(j, i, f"{grid[i][j]:.2f}", ha="center", va="center", fontsize=8)
        ax.set_xticks(range(len(ranks)), [str(p) for p in ranks])
        ax.set_yticks(range(len(sizes)), [human(s) for s in sizes])
        ax.set_xlabel("ranks")
        ax.set_ylabel("bytes (nccl-tests convention)")
        ax.set_title(f"{args.algo} speedup over {base}")
        fig.colorbar(im, ax=ax)
    fig.suptitle(args.title or args.coll)
    fig.tight_layout()
    fig.savefig(args.output, dpi=120)


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("kind", choices=("time", "heatmap"))
    p.add_argument("csv", nargs="+")
    p.add_argument("--coll", required=True)
    p.add_argument("--sizes", help="time: comma list of byte sizes (default all)")
    p.add_argument("--algo", default="auto", help="heatmap: the algorithm to compare")
    p.add_argument("--baseline", default="ring", help="heatmap: the flat algorithm")
    p.add_argument("--title")
    p.add_argument("-o", "--output", required=True)
    args = p.parse_args()
    t = tables(read_rows(args.csv, args.coll))
    (plot_time if args.kind == "time" else plot_heatmap)(args, t)


if __name__ == "__main__":
    main()
