"""DistributedDataParallel on torch.distributed's backend "pccl", beside the
same training on "gloo", in one run.

    mpirun -np 4 /usr/bin/python3 examples/python/train_ddp.py [--backends pccl,gloo]
           [--zero] [--epochs 2] [--rounds 3] [--width 1024] [--batch 32]
           [--dtype float32|float64] [--check] [--csv FILE]

The script is an ordinary DDP script: init_process_group("pccl",
init_method="pccl://") under mpirun, a model wrapped in
DistributedDataParallel, loss.backward(), optimizer.step(). The gloo run
uses a group from dist.new_group(backend="gloo") over the same ranks. Each
round trains every backend from the same initial weights on the same
batches (a synthetic classification task: an MLP of three hidden layers of
--width, labels from a fixed random teacher), alternating backends, and the
table gives each backend's median samples per second over the rounds
(global samples over the slowest rank's time).

Checks, printed always and enforced with --check (float64 recommended):
every rank ends with the same weights, bit for bit; each backend's weights
are within 1e-9 (float64) or 1e-3 (float32) of the first backend's; with
--zero, pccl with ZeroRedundancyOptimizer ends within the same bound of pccl
without it. Exits 77 without torch.
"""
import argparse
import csv
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
try:
    import torch
    import torch.distributed as dist
    from torch.distributed.optim import ZeroRedundancyOptimizer
    from torch.nn.parallel import DistributedDataParallel as DDP
except ImportError as missing:
    print("train_ddp.py needs python3-torch: %s" % missing)
    sys.exit(77)

import pccl.torch  # noqa: E402,F401  (registers the backend "pccl")

FEATURES, CLASSES, SAMPLES = 256, 10, 4096


def dataset(dtype):
    g = torch.Generator().manual_seed(1)
    x = torch.randn(SAMPLES, FEATURES, generator=g, dtype=torch.float64)
    teacher = torch.randn(FEATURES, CLASSES, generator=g, dtype=torch.float64)
    return x.to(dtype), (x @ teacher).argmax(1)


def model(width, dtype):
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Linear(FEATURES, width), torch.nn.ReLU(), torch.nn.Linear(width, width),
        torch.nn.ReLU(), torch.nn.Linear(width, width), torch.nn.ReLU(),
        torch.nn.Linear(width, CLASSES)).to(dtype)


def train(group, args, x, y, zero=False):
    """Trains a fresh model on `group`; returns (seconds, flat final weights)."""
    rank, size = dist.get_rank(), dist.get_world_size()
    net = DDP(model(args.width, x.dtype), process_group=group)
    if zero:
        opt = ZeroRedundancyOptimizer(net.parameters(), optimizer_class=torch.optim.SGD,
                                      process_group=group, lr=0.05, momentum=0.9)
    else:
        opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
    steps = SAMPLES // (args.batch * size)
    dist.barrier(group)
    start = time.perf_counter()
    for _ in range(args.epochs):
        for s in range(steps):
            first = (s * size + rank) * args.batch
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(net(x[first:first + args.batch]),
                                                     y[first:first + args.batch])
            loss.backward()
            opt.step()
    seconds = time.perf_counter() - start
    return seconds, torch.cat([p.detach().reshape(-1) for p in net.module.parameters()])


def slowest(seconds, group):
    t = torch.tensor([seconds], dtype=torch.float64)
    dist.all_reduce(t, op=dist.ReduceOp.MAX, group=group)
    return t.item()


def spread(weights, group):
    """Largest difference of any weight between ranks (0: identical)."""
    hi, lo = weights.clone(), weights.clone()
    dist.all_reduce(hi, op=dist.ReduceOp.MAX, group=group)
    dist.all_reduce(lo, op=dist.ReduceOp.MIN, group=group)
    return float((hi - lo).abs().max())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--backends", default="pccl,gloo")
    ap.add_argument("--zero", action="store_true", help="also pccl with ZeroRedundancyOptimizer")
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--width", type=int, default=1024)
    ap.add_argument("--batch", type=int, default=32, help="samples per rank and step")
    ap.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    ap.add_argument("--check", action="store_true", help="exit 1 when a check fails")
    ap.add_argument("--csv")
    args = ap.parse_args()
    torch.set_num_threads(1)
    dist.init_process_group("pccl", init_method="pccl://")
    rank, size = dist.get_rank(), dist.get_world_size()
    groups = {}
    for name in args.backends.split(","):
        groups[name] = dist.new_group(backend=name) if name != "pccl" else dist.group.WORLD
    variants = [(name, False) for name in groups] + ([("pccl", True)] if args.zero else [])
    x, y = dataset(getattr(torch, args.dtype))
    times, finals = {v: [] for v in variants}, {}
    for _ in range(args.rounds):
        for v in variants:
            seconds, w = train(groups[v[0]], args, x, y, zero=v[1])
            times[v].append(slowest(seconds, dist.group.WORLD))
            finals[v] = w
    samples = args.epochs * (SAMPLES // (args.batch * size)) * args.batch * size
    bound = 1e-9 if args.dtype == "float64" else 1e-3
    first = variants[0]
    rows, ok = [], True
    for v in variants:
        rate = samples / statistics.median(times[v])
        ranks_spread = spread(finals[v], dist.group.WORLD)
        vs_first = float((finals[v] - finals[first]).abs().max())
        ok &= ranks_spread == 0 and vs_first <= bound
        rows.append({"variant": v[0] + ("+zero" if v[1] else ""), "ranks": size,
                     "width": args.width, "batch": args.batch, "dtype": args.dtype,
                     "samples_per_s": "%.1f" % rate,
                     "speedup_vs_last": "", "rank_spread": "%.3g" % ranks_spread,
                     "max_diff_vs_%s" % first[0]: "%.3g" % vs_first})
    base = float(rows[len(groups) - 1]["samples_per_s"])
    for r in rows:
        r["speedup_vs_last"] = "%.2f" % (float(r["samples_per_s"]) / base)
    if rank == 0:
        print("# DDP: %d ranks, MLP %d-%dx3-%d, %d samples/rank/step, %s, %d epochs x %d rounds "
              "(median)" % (size, FEATURES, args.width, CLASSES, args.batch, args.dtype,
                            args.epochs, args.rounds))
        print("%-12s %14s %10s %12s %14s" % ("backend", "samples/s", "speedup", "rank spread",
                                             "diff vs " + first[0]))
        for r in rows:
            print("%-12s %14s %10s %12s %14s" % (r["variant"], r["samples_per_s"],
                                                 r["speedup_vs_last"], r["rank_spread"],
                                                 r["max_diff_vs_%s" % first[0]]))
        print("checks (identical ranks, within %g of %s): %s" % (bound, first[0],
                                                                "ok" if ok else "FAIL"))
        if args.csv:
            with open(args.csv, "a", newline="") as f:
                w = csv.DictWriter(f, fieldnames=list(rows[0]))
                if f.tell() == 0:
                    w.writeheader()
                w.writerows(rows)
    sys.exit(1 if args.check and not ok else 0)


main()
