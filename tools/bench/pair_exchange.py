#!/usr/bin/python3
"""pair_exchange.py - what links between nodes carry when every rank talks at
once: rank r pairs with rank r ^ SHIFT (with 2 ranks per node and SHIFT 2,
the same local rank on the neighbouring node), and for each size every pair
either exchanges SIZE bytes both ways (MPI_Sendrecv, mode "both") or sends
them one way (mode "one": the lower rank of each pair sends). Mode "ring"
loads each link both ways too, but over two different connections: rank r
sends to r + SHIFT and receives from r - SHIFT (modulo the ranks). Prints the
median of 7 timed rounds and the bytes per second through each node's link
in each direction used. Open MPI's point-to-point only, no pccl.

usage (Debian's python3 with python3-mpi4py and numpy):
  tools/emucluster --nodes 8 --ranks-per-node 2 --rate-gbit 1 -- \\
      /usr/bin/python3 $PWD/tools/bench/pair_exchange.py both
  options: MODE (one|both|ring), --ranks-per-node M (2), --shift S (2),
           --sizes BYTES,... (131072,524288,2097152)
"""
import argparse
import sys

import numpy as np
from mpi4py import MPI


def parse():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("mode", choices=("one", "both", "ring"))
    ap.add_argument("--ranks-per-node", type=int, default=2)
    ap.add_argument("--shift", type=int, default=2)
    ap.add_argument("--sizes", default="131072,524288,2097152")
    a = ap.parse_args()
    try:
        a.sizes = [int(s) for s in a.sizes.split(",")]
    except ValueError:
        ap.error("--sizes takes byte counts separated by commas")
    if a.ranks_per_node < 1 or a.shift < 1 or min(a.sizes) < 1:
        ap.error("--ranks-per-node, --shift and every size must be positive")
    if max(a.sizes) > 1 << 30:
        ap.error("sizes above 1 GiB are refused (two buffers of each size per rank)")
    return a


def main():
    a = parse()
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    if a.mode != "ring" and any(r ^ a.shift >= size for r in range(size)):  # same on every rank
        if rank == 0:
            print(f"pair_exchange: {size} ranks cannot all pair with --shift {a.shift}",
                  file=sys.stderr)
        return 2
    partner = rank ^ a.shift
    sender = rank < partner
    for n in a.sizes:
        out = np.ones(n, np.uint8)
        into = np.empty(n, np.uint8)
        times = []
        for _ in range(7):
            comm.Barrier()
            t0 = MPI.Wtime()
            if a.mode == "both":
                comm.Sendrecv(out, partner, 0, into, partner, 0)
            elif a.mode == "ring":
                comm.Sendrecv(out, (rank + a.shift) % size, 0, into, (rank - a.shift) % size, 0)
            elif sender:
                comm.Send(out, partner, 0)
            else:
                comm.Recv(into, partner, 0)
            comm.Barrier()
            times.append(MPI.Wtime() - t0)
        t = sorted(times)[3]
        if rank == 0:
            per_link = a.ranks_per_node * n / t / 1e6
            print(f"{a.mode:>4} {n:>9} B: {t * 1e3:8.2f} ms, {per_link:6.1f} MB/s per node and direction")
    return 0


if __name__ == "__main__":
    sys.exit(main())
