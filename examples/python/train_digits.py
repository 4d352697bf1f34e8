"""Data-parallel training of a small network on scikit-learn's digits, with
pccl's DistributedOptimizer and, in the same run, PyTorch's own
DistributedDataParallel over gloo, on the same job.

    mpirun -np 4 /usr/bin/python3 examples/python/train_digits.py [--epochs 20]
           [--batch 64] [--cycle-ms 1] [--backends pccl,gloo] [--csv FILE]

Every step takes one global batch (--batch rows) and gives each rank an
equal share. Checked at the end, with the results printed:
  - the final weights are bit-identical on all ranks;
  - weights and loss curve match one process training on the global batches
    (rank 0 recomputes that run) within 1e-4;
  - throughput (training samples per second, after one warm-up epoch) of
    pccl and of DDP/gloo.
Needs Debian's python3-torch and python3-sklearn. Exits 1 when a check fails.
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

import numpy as np  # noqa: E402
import torch  # noqa: E402
from sklearn.datasets import load_digits  # noqa: E402

import pccl  # noqa: E402
import pccl.torch as pt  # noqa: E402

TOLERANCE = 1e-4


def dataset():
    d = load_digits()
    x = (d.data / 16.0).astype(np.float32)
    order = np.random.RandomState(0).permutation(len(x))
    return torch.from_numpy(x[order]), torch.from_numpy(d.target[order].astype(np.int64))


def make_model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(),
                               torch.nn.Linear(128, 128), torch.nn.ReLU(),
                               torch.nn.Linear(128, 10))


def make_optimizer(params):
    return torch.optim.SGD(params, lr=0.05, momentum=0.9)


def global_batches(n, batch, epochs):
    steps = n // batch
    for e in range(epochs):
        for s in range(steps):
            yield e, slice(s * batch, (s + 1) * batch)


def train(model, opt, x, y, args, share, sync_loss):
    """Runs every step on this rank's share of the global batch; returns the
    loss per step (of this rank's share) and the samples/s after epoch 0."""
    losses, t0, counted = [], None, 0
    for epoch, rows in global_batches(len(x), args.batch, args.epochs):
        if epoch == 1 and t0 is None:
            sync_loss()
            t0 = time.perf_counter()
        xs, ys = x[rows][share], y[rows][share]
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(xs), ys)
        loss.backward()
        opt.step()
        losses.append(loss.item())
        counted += args.batch if t0 is not None else 0
    sync_loss()
    rate = counted / (time.perf_counter() - t0) if t0 is not None else float("nan")
    return np.array(losses), rate


def identical_everywhere(w, gather):
    every = gather(w)
    return all(torch.equal(e, every[0]) for e in every)


def run_pccl(x, y, args, share):
    pccl.init(cycle_ms=args.cycle_ms)
    model = make_model()
    pt.broadcast_parameters(model.state_dict(), root_rank=0)
    opt = pt.DistributedOptimizer(make_optimizer(model.parameters()),
                                  named_parameters=model.named_parameters())
    barrier = lambda: pccl.allreduce(torch.zeros(1), name="barrier")  # noqa: E731
    losses, rate = train(model, opt, x, y, args, share, barrier)
    # the global batch's loss per step: the mean of the ranks' equal shares
    curve = pccl.allreduce(torch.from_numpy(losses), name="curve").numpy()
    w = flat(model)
    same = identical_everywhere(w, lambda t: list(pccl.allgather(t.reshape(1, -1), name="weights")))
    rate = pccl.allreduce(torch.tensor([rate]), name="rate", op=pccl.Min).item()
    return w, curve, rate, same


def run_gloo(x, y, args, share, rank, size):
    import torch.distributed as dist
    # one machine: the ranks share mpirun as parent, so its pid picks one port
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", str(20000 + os.getppid() % 20000))
    dist.init_process_group("gloo", rank=rank, world_size=size)
    model = torch.nn.parallel.DistributedDataParallel(make_model())
    opt = make_optimizer(model.parameters())
    losses, rate = train(model, opt, x, y, args, share, dist.barrier)
    curve = torch.from_numpy(losses)
    dist.all_reduce(curve)
    curve /= size
    w = flat(model.module)

    def gather(t):
        out = [torch.empty_like(t) for _ in range(size)]
        dist.all_gather(out, t)
        return out
    same = identical_everywhere(w, gather)
    r = torch.tensor([rate])
    dist.all_reduce(r, op=dist.ReduceOp.MIN)
    dist.destroy_process_group()
    return w, curve.numpy(), r.item(), same


def reference(x, y, args):
    model = make_model()
    opt = make_optimizer(model.parameters())
    losses, _ = train(model, opt, x, y, args, slice(None), lambda: None)
    return model, losses


def flat(model):
    return torch.cat([p.detach().reshape(-1) for p in model.parameters()])


def world():
    """This rank and the number of ranks, from the launcher (Open MPI or
    MPICH's Hydra), before any communication library starts."""
    for r, n in (("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"), ("PMI_RANK", "PMI_SIZE")):
        if r in os.environ:
            return int(os.environ[r]), int(os.environ[n])
    return 0, 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--cycle-ms", type=float, default=1.0)
    ap.add_argument("--backends", default="gloo,pccl")
    ap.add_argument("--csv")
    args = ap.parse_args()
    torch.set_num_threads(1)
    me, p = world()
    if args.batch % p:
        sys.exit("--batch %d is not a multiple of %d ranks" % (args.batch, p))
    x, y = dataset()
    b = args.batch // p
    share = slice(me * b, (me + 1) * b)
    ref_w, ref_curve = None, None
    if me == 0:
        ref_model, ref_curve = reference(x, y, args)
        ref_w = flat(ref_model)
    # gloo runs before pccl starts, so that pccl's engine thread does not
    # share the cores with it
    rows, ok = [], True
    for backend in sorted(args.backends.split(","), key=lambda k: k != "gloo"):
        if backend == "gloo":
            w, curve, rate, same = run_gloo(x, y, args, share, me, p)
        else:
            w, curve, rate, same = run_pccl(x, y, args, share)
        if me == 0:
            dw = float((w - ref_w).abs().max())
            dl = float(np.abs(curve - ref_curve).max())
            good = same and dw <= TOLERANCE and dl <= TOLERANCE
            ok = ok and good
            rows.append((backend, rate, curve[-1], dw, dl, same, good))
    if me == 0:
        steps = (len(x) // args.batch) * args.epochs
        print("# digits: %d samples, %d ranks, global batch %d, %d steps, pccl engine cycle %.2f ms"
              % (len(x), p, args.batch, steps, args.cycle_ms))
        print("%-6s %12s %11s %14s %14s %10s %6s" % ("", "samples/s", "final loss", "max |w - ref|",
                                                     "max |loss-ref|", "identical", "check"))
        for r in rows:
            print("%-6s %12.0f %11.4f %14.3g %14.3g %10s %6s" % (r[0], r[1], r[2], r[3], r[4], r[5],
                                                                 "ok" if r[6] else "FAIL"))
        rate = {r[0]: r[1] for r in rows}
        if "pccl" in rate and "gloo" in rate:
            print("pccl / gloo throughput: %.2fx" % (rate["pccl"] / rate["gloo"]))
        if args.csv:
            with open(args.csv, "w") as f:
                f.write("backend,ranks,batch,cycle_ms,samples_per_s,final_loss,max_weight_diff,"
                        "max_loss_diff,identical\n")
                for r in rows:
                    f.write("%s,%d,%d,%g,%.1f,%.6f,%.3g,%.3g,%d\n" % (r[0], p, args.batch, args.cycle_ms,
                                                                     r[1], r[2], r[3], r[4], r[5]))
    if pccl.is_initialized():
        ok = pccl.allreduce(torch.tensor([1 if ok else 0], dtype=torch.int32), name="ok",
                            op=pccl.Min).item()
        pccl.shutdown()
    sys.exit(0 if ok else 1)


main()
