#!/usr/bin/python3
"""speedup_plot.py - pccl's speedup over MPI against message size, one line
per collective, one panel per set of pccl-bench CSV files.

  speedup_plot.py OUT.png TITLE=FILE.csv[,FILE.csv...] [TITLE=...]

Each panel merges its files (e.g. a sweep and a separate run of the largest
size); a size measured twice is plotted at the median. A dashed line marks
1.0 (as fast as MPI). Needs Debian's python3-matplotlib."""
import csv
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ORDER = ["allreduce", "allgather", "reducescatter", "broadcast", "reduce"]


def read(paths):
    got = {}
    for path in paths:
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                if row["speedup_vs_mpi"]:
                    key = (row["collective"], int(row["bytes"]))
                    got.setdefault(key, []).append(float(row["speedup_vs_mpi"]))
    return got


def panel(ax, title, got):
    colls = [c for c in ORDER if any(k[0] == c for k in got)]
    for c in colls:
        sizes = sorted(s for cc, s in got if cc == c)
        ax.plot(sizes, [statistics.median(got[(c, s)]) for s in sizes], marker="o", ms=3, label=c)
    ax.axhline(1.0, color="k", ls="--", lw=0.8)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_xlabel("bytes")
    ax.set_title(title)
    ax.grid(True, which="major", alpha=0.3)


def main(argv):
    if len(argv) < 2 or any("=" not in a for a in argv[1:]):
        sys.exit(__doc__)
    panels = [(a.split("=", 1)[0], a.split("=", 1)[1].split(",")) for a in argv[1:]]
    fig, axes = plt.subplots(1, len(panels), figsize=(5.5 * len(panels), 4), squeeze=False)
    for ax, (title, paths) in zip(axes[0], panels):
        got = read(paths)
        if not got:
            sys.exit("speedup_plot.py: no rows with an MPI time in %s" % ",".join(paths))
        panel(ax, title, got)
    axes[0][0].set_ylabel("speedup over MPI (same run)")
    axes[0][-1].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(argv[0], dpi=110)


if __name__ == "__main__":
    main(sys.argv[1:])
