"""torch.distributed collectives on the backend "pccl" against gloo, in one run.

    mpirun -np 4 /usr/bin/python3 tools/bench/torch_backend.py [-b 4] [-e 16M] [-f 16]
           [--iters 10] [--rounds 5] [--csv FILE]

For each size (bytes of float32 per rank) and collective it times `iters`
back-to-back calls through torch.distributed on each backend, alternating
the backends `rounds` times, and prints the median time per call of the
slowest rank and pccl's speedup. all_reduce, broadcast and all_gather (list
form) run on both; gloo in torch 1.13 has no all_gather_into_tensor or
reduce_scatter_tensor, so those rows give pccl alone.
"""
import argparse
import csv
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

import pccl.torch  # noqa: E402,F401


def size_arg(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(text[:-1]) * units[text[-1].upper()] if text[-1].upper() in units else int(text)


def calls(name, n, group):
    size, rank = dist.get_world_size(), dist.get_rank()
    x = torch.ones(n)
    if name == "all_reduce":
        return lambda: dist.all_reduce(x, group=group)
    if name == "broadcast":
        return lambda: dist.broadcast(x, src=0, group=group)
    if name == "all_gather":
        outs = [torch.empty(n) for _ in range(size)]
        return lambda: dist.all_gather(outs, x, group=group)
    if name == "all_gather_into_tensor":
        out = torch.empty(n * size)
        return lambda: dist.all_gather_into_tensor(out, x, group=group)
    if name == "reduce_scatter_tensor":
        big, out = torch.ones(n * size), torch.empty(n)
        return lambda: dist.reduce_scatter_tensor(out, big, group=group)
    raise ValueError(name)


def timed(fn, iters, group):
    dist.barrier(group)
    start = time.perf_counter()
    for _ in range(iters):
        fn()
    t = torch.tensor([(time.perf_counter() - start) / iters], dtype=torch.float64)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return t.item()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-b", default="4")
    ap.add_argument("-e", default="16M")
    ap.add_argument("-f", type=int, default=16)
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--csv")
    args = ap.parse_args()
    torch.set_num_threads(1)
    dist.init_process_group("pccl", init_method="pccl://")
    gloo = dist.new_group(backend="gloo")
    both = ["all_reduce", "broadcast", "all_gather"]
    alone = ["all_gather_into_tensor", "reduce_scatter_tensor"]
    rows = []
    nbytes = size_arg(args.b)
    while nbytes <= size_arg(args.e):
        n = max(1, nbytes // 4)
        for name in both + alone:
            backends = [("pccl", None)] + ([("gloo", gloo)] if name in both else [])
            fns = {b: calls(name, n, g) for b, g in backends}
            for b, g in backends:
                fns[b]()  # first call: groups and buffers set up
            times = {b: [] for b, _ in backends}
            for _ in range(args.rounds):
                for b, g in backends:
                    times[b].append(timed(fns[b], args.iters, g))
            p = statistics.median(times["pccl"])
            g = statistics.median(times["gloo"]) if "gloo" in times else None
            rows.append({"collective": name, "bytes": n * 4, "ranks": dist.get_world_size(),
                         "pccl_us": "%.1f" % (p * 1e6),
                         "gloo_us": "%.1f" % (g * 1e6) if g else "",
                         "speedup": "%.2f" % (g / p) if g else ""})
        nbytes *= args.f
    if dist.get_rank() == 0:
        print("# torch.distributed on %d ranks: median of %d rounds of %d calls, slowest rank" % (
            dist.get_world_size(), args.rounds, args.iters))
        print("%-24s %10s %12s %12s %8s" % ("collective", "bytes", "pccl us", "gloo us", "speedup"))
        for r in rows:
            print("%-24s %10d %12s %12s %8s" % (r["collective"], r["bytes"], r["pccl_us"],
                                                r["gloo_us"] or "-", r["speedup"] or "-"))
        if args.csv:
            with open(args.csv, "w", newline="") as f:
                w = csv.DictWriter(f, fieldnames=list(rows[0]))
                w.writeheader()
                w.writerows(rows)


main()
