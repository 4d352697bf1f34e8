"""Sharded (ZeRO-3 / FSDP-style) training written with torch.distributed's
all_gather_into_tensor and reduce_scatter_tensor on the backend "pccl" (gloo
in PyTorch 1.13 has neither), checked against single-process training.

    mpirun -np 4 /usr/bin/python3 examples/python/train_zero3.py [--steps 40]
           [--width 256] [--batch 16] [--csv FILE]

Each rank keeps 1/size of every layer's parameters (weight and bias
flattened, padded to a multiple of size) and of the momentum. A layer's
forward all-gathers its parameters; its backward all-gathers them again
(they are not kept between the two, as in ZeRO-3) and reduce-scatters the
gradient with AVG, which is the gradient of the global batch's mean loss.
Every rank also trains the same model in one process on the whole global
batch; the two loss curves and final weights must agree within 1e-9
(float64). Exits 1 when they do not, 77 without torch.
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
try:
    import torch
    import torch.distributed as dist
except ImportError as missing:
    print("train_zero3.py needs python3-torch: %s" % missing)
    sys.exit(77)

import pccl.torch  # noqa: E402,F401  (registers the backend "pccl")

TOLERANCE = 1e-9
FEATURES, CLASSES = 64, 10


def layers(width):
    torch.manual_seed(0)
    return [torch.nn.Linear(FEATURES, width), torch.nn.Linear(width, width),
            torch.nn.Linear(width, CLASSES)]


class ShardedLinear(torch.nn.Module):
    """A Linear layer of which this rank holds one shard of (weight, bias)."""

    def __init__(self, linear):
        super().__init__()
        size, rank = dist.get_world_size(), dist.get_rank()
        self.shape = linear.weight.shape
        flat = torch.cat([linear.weight.detach().reshape(-1), linear.bias.detach()])
        self.numel = flat.numel()
        per = -(-self.numel // size)
        padded = torch.zeros(per * size, dtype=flat.dtype)
        padded[:self.numel] = flat
        self.shard = torch.nn.Parameter(padded[rank * per:(rank + 1) * per].clone())

    def full(self):
        out = torch.empty(self.shard.numel() * dist.get_world_size(), dtype=self.shard.dtype)
        dist.all_gather_into_tensor(out, self.shard.detach())
        w = out[:self.shape.numel()].view(self.shape)
        return w, out[self.shape.numel():self.numel]

    def forward(self, x):
        return _Gathered.apply(x, self.shard, self)


class _Gathered(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, shard, layer):
        ctx.save_for_backward(x)
        ctx.layer = layer
        w, b = layer.full()
        return torch.nn.functional.linear(x, w, b)

    @staticmethod
    def backward(ctx, grad_y):
        (x,) = ctx.saved_tensors
        layer = ctx.layer
        w, _ = layer.full()
        grad = torch.zeros(layer.shard.numel() * dist.get_world_size(), dtype=grad_y.dtype)
        grad[:layer.shape.numel()] = (grad_y.t() @ x).reshape(-1)
        grad[layer.shape.numel():layer.numel] = grad_y.sum(0)
        shard_grad = torch.empty_like(layer.shard)
        dist.reduce_scatter_tensor(shard_grad, grad, op=dist.ReduceOp.AVG)
        return grad_y @ w, shard_grad, None


def forward(mods, x):
    for i, m in enumerate(mods):
        x = m(x)
        if i + 1 < len(mods):
            x = torch.relu(x)
    return x


def batches(steps, global_batch):
    g = torch.Generator().manual_seed(2)
    teacher = torch.randn(FEATURES, CLASSES, generator=g, dtype=torch.float64)
    for _ in range(steps):
        x = torch.randn(global_batch, FEATURES, generator=g, dtype=torch.float64)
        yield x, (x @ teacher).argmax(1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--width", type=int, default=256)
    ap.add_argument("--batch", type=int, default=16, help="samples per rank and step")
    ap.add_argument("--csv")
    args = ap.parse_args()
    torch.set_num_threads(1)
    torch.set_default_dtype(torch.float64)
    dist.init_process_group("pccl", init_method="pccl://")
    rank, size = dist.get_rank(), dist.get_world_size()

    sharded = [ShardedLinear(m) for m in layers(args.width)]
    reference = layers(args.width)
    opt = torch.optim.SGD([m.shard for m in sharded], lr=0.2, momentum=0.9)
    ref_opt = torch.optim.SGD([p for m in reference for p in m.parameters()], lr=0.2,
                              momentum=0.9)
    ce = torch.nn.functional.cross_entropy
    curve, ref_curve, seconds = [], [], 0.0
    for x, y in batches(args.steps, args.batch * size):
        mine = slice(rank * args.batch, (rank + 1) * args.batch)
        start = time.perf_counter()
        opt.zero_grad()
        loss = ce(forward(sharded, x[mine]), y[mine])
        loss.backward()
        opt.step()
        seconds += time.perf_counter() - start
        mean = loss.detach().clone()
        dist.all_reduce(mean, op=dist.ReduceOp.AVG)
        curve.append(mean.item())

        ref_opt.zero_grad()
        ref_loss = ce(forward(reference, x), y)
        ref_loss.backward()
        ref_opt.step()
        ref_curve.append(ref_loss.item())

    dl = max(abs(a - b) for a, b in zip(curve, ref_curve))
    dw = 0.0
    for m, r in zip(sharded, reference):
        w, b = m.full()
        dw = max(dw, float((w - r.weight).abs().max()), float((b - r.bias).abs().max()))
    ok = dl <= TOLERANCE and dw <= TOLERANCE
    flag = torch.tensor([1 if ok else 0], dtype=torch.int32)
    dist.all_reduce(flag, op=dist.ReduceOp.MIN)
    if rank == 0:
        per_rank = sum(m.shard.numel() for m in sharded)
        full = sum(p.numel() for m in reference for p in m.parameters())
        print("# ZeRO-3 style on torch.distributed (pccl): %d ranks, %d steps, width %d, "
              "%d samples/rank/step, float64" % (size, args.steps, args.width, args.batch))
        print("parameters per rank %d of %d; %.3f ms per sharded step (rank 0)" % (
            per_rank, full, 1e3 * seconds / args.steps))
        print("loss: first %.6f last %.6f (single process: %.6f %.6f)" % (
            curve[0], curve[-1], ref_curve[0], ref_curve[-1]))
        print("max |loss - single process| = %.3g, max |weight - single process| = %.3g: %s" % (
            dl, dw, "ok (tolerance %g)" % TOLERANCE if flag.item() else "FAIL"))
        if args.csv:
            with open(args.csv, "w") as f:
                f.write("step,loss_sharded,loss_single_process\n")
                for i, (a, b) in enumerate(zip(curve, ref_curve)):
                    f.write("%d,%.17g,%.17g\n" % (i, a, b))
    sys.exit(0 if flag.item() else 1)


main()
