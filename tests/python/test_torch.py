"""pccl.torch under mpiexec: DistributedOptimizer (per-tensor and grouped
all-reduces from autograd hooks), broadcast_parameters,
broadcast_optimizer_state and ShardedModel, each checked against the same
training run in one process on the global batch, computed here with plain
PyTorch, and for identical weights on every rank.

    mpiexec -n 3 /usr/bin/python3 tests/python/test_torch.py
Exit 77 (skipped) when torch is missing.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
try:
    import torch
except ImportError:
    print("torch is not installed: skipped")
    sys.exit(77)

import pccl  # noqa: E402
import pccl.torch as pt  # noqa: E402

failures = []
torch.set_num_threads(1)


def check(cond, what):
    if not cond:
        failures.append(what)
        print("rank %d: FAILED: %s" % (pccl.rank(), what), flush=True)


def make_model(seed):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 3))


def batches(step, p):
    """The global batch of a step: rank r's share is rows r*4 .. r*4+3."""
    g = torch.Generator().manual_seed(1000 + step)
    return torch.randn(4 * p, 8, generator=g), torch.randint(0, 3, (4 * p,), generator=g)


def reference(steps, p, make_opt):
    model = make_model(0)
    opt = make_opt(model.parameters())
    for s in range(steps):
        x, y = batches(s, p)
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
    return [t.detach().clone() for t in model.parameters()]


def same_on_every_rank(tensors, what):
    flat = torch.cat([t.detach().reshape(-1) for t in tensors]).contiguous()
    every = pccl.allgather(flat.reshape(1, -1), name="check." + what)
    check(all(torch.equal(every[r], every[0]) for r in range(every.shape[0])),
          "%s: weights differ between ranks" % what)


def data_parallel(num_groups, make_opt, what, steps=5):
    p, me = pccl.size(), pccl.rank()
    model = make_model(0 if me == 0 else 100 + me)  # rank 0 has the reference's start
    pt.broadcast_parameters(model.state_dict(), root_rank=0)
    opt = pt.DistributedOptimizer(make_opt(model.parameters()),
                                  named_parameters=model.named_parameters(), num_groups=num_groups)
    for s in range(steps):
        x, y = batches(s, p)
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x[4 * me:4 * me + 4]), y[4 * me:4 * me + 4]).backward()
        opt.step()
    want = reference(steps, p, make_opt)
    got = list(model.parameters())
    err = max(float((a - b).abs().max()) for a, b in zip(got, want))
    check(err < 1e-5, "%s: max difference %.3g from one-process training" % (what, err))
    same_on_every_rank(got, what)
    return model, opt


def test_optimizer_state():
    p, me = pccl.size(), pccl.rank()
    model = make_model(0)
    opt = torch.optim.Adam(model.parameters(), lr=0.01 * (me + 1))
    x, y = batches(0, p)
    torch.nn.functional.cross_entropy(model(x[me:me + 1]), y[me:me + 1]).backward()
    opt.step()  # every rank now has Adam state, different per rank
    pt.broadcast_optimizer_state(opt, root_rank=0)
    lr = opt.param_groups[0]["lr"]
    states = [opt.state[q]["exp_avg"] for q in model.parameters()]
    check(abs(lr - 0.01) < 1e-12, "broadcast_optimizer_state: lr %g" % lr)
    same_on_every_rank(states, "adam state")


def test_sharded(steps=5):
    p, me = pccl.size(), pccl.rank()
    model = make_model(0)
    sharded = pt.ShardedModel(list(model))
    n_shard = sum(t.numel() for t in sharded.parameters())
    want_shard = -(-(8 * 16 + 16) // p) + -(-(16 * 3 + 3) // p)  # each layer's slice, padded
    check(n_shard == want_shard, "sharded: %d parameters here, want %d" % (n_shard, want_shard))
    opt = torch.optim.SGD(sharded.parameters(), lr=0.1, momentum=0.9)
    for s in range(steps):
        x, y = batches(s, p)
        opt.zero_grad()
        torch.nn.functional.cross_entropy(sharded(x[4 * me:4 * me + 4]), y[4 * me:4 * me + 4]).backward()
        opt.step()
    full = sharded.full_state()
    want = reference(steps, p, lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9))
    names = ["0.weight", "0.bias", "2.weight", "2.bias"]
    err = max(float((full[n] - w).abs().max()) for n, w in zip(names, want))
    check(err < 1e-5, "sharded: max difference %.3g from one-process training" % err)


def main():
    pccl.init(cycle_ms=1)
    sgd = lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9)  # noqa: E731
    data_parallel(0, sgd, "per-tensor")
    data_parallel(2, sgd, "two groups")
    data_parallel(0, lambda ps: torch.optim.Adam(ps, lr=0.01), "adam")
    test_optimizer_state()
    test_sharded()
    me, p = pccl.rank(), pccl.size()
    pccl.shutdown()
    if failures:
        sys.exit(1)
    if me == 0:
        print("test_torch on %d ranks: passed" % p)


main()
