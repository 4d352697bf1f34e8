"""The pccl Python package under mpiexec (Debian's python3): every operation
on numpy arrays, blocking and async, in place and not, against numpy
references computed here from what each rank contributed; the engine's
errors as PcclError; torch tensors (zero-copy) when torch is installed.

    mpiexec -n 3 /usr/bin/python3 tests/python/test_pccl.py [numpy|torch]
Exit 77 (skipped) when numpy, or torch for the torch part, is missing.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

try:
    import numpy as np
except ImportError:
    print("numpy is not installed: skipped")
    sys.exit(77)

import pccl  # noqa: E402

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("rank %d: FAILED: %s" % (pccl.rank(), what), flush=True)


def contribution(r, shape, dtype, salt):
    """What rank r contributes: deterministic, small integers (exact sums)."""
    n = int(np.prod(shape)) if shape else 1
    v = (np.arange(n, dtype=np.int64) * 7 + r * 13 + salt) % 29 - 9
    return v.reshape(shape).astype(dtype)


def numpy_part():
    p, me = pccl.size(), pccl.rank()
    for dtype in (np.float32, np.float64, np.int32, np.int64, np.uint8, np.float16, np.int16, np.uint16):
        shape = (6, 5)
        x = contribution(me, shape, dtype, 1)
        every = [contribution(r, shape, dtype, 1) for r in range(p)]
        # sums wrap in the type, as C's unsigned arithmetic does
        want_sum = np.sum(np.stack(every).astype(np.int64 if np.dtype(dtype).kind in "iu" else np.float64),
                          axis=0).astype(dtype)
        got = pccl.allreduce(x, name="sum.%s" % np.dtype(dtype).name, op=pccl.Sum)
        check(got.dtype == dtype and got.shape == shape and np.array_equal(got, want_sum),
              "allreduce sum %s" % np.dtype(dtype).name)
        got = pccl.allreduce(x, name="max.%s" % np.dtype(dtype).name, op=pccl.Max)
        check(np.array_equal(got, np.max(np.stack(every), axis=0)), "allreduce max %s" % np.dtype(dtype).name)
    # average, in place, async, and the input untouched by the out-of-place call
    x = contribution(me, (100,), np.float64, 2)
    before = x.copy()
    h = pccl.allreduce_async(x, name="avg")
    got = h.wait()
    want = np.mean(np.stack([contribution(r, (100,), np.float64, 2) for r in range(p)]), axis=0)
    check(np.allclose(got, want, rtol=0, atol=1e-12) and np.array_equal(x, before), "allreduce average")
    y = x.copy()
    r = pccl.allreduce_(y, name="avg.inplace")
    check(r is y and np.allclose(y, want, rtol=0, atol=1e-12), "allreduce_ in place")
    # allgather and reduce_scatter along the first dimension
    x = contribution(me, (3, 4), np.float32, 3)
    got = pccl.allgather(x, name="gather")
    want = np.concatenate([contribution(r, (3, 4), np.float32, 3) for r in range(p)])
    check(got.shape == (3 * p, 4) and np.array_equal(got, want), "allgather")
    x = contribution(me, (2 * p, 3), np.float32, 4)
    got = pccl.reduce_scatter(x, name="scatter", op=pccl.Sum)
    total = np.sum(np.stack([contribution(r, (2 * p, 3), np.float32, 4) for r in range(p)]), axis=0)
    check(got.shape == (2, 3) and np.array_equal(got, total[2 * me:2 * me + 2]), "reduce_scatter")
    # broadcast from the last rank, new array and in place
    root = p - 1
    x = contribution(me, (7,), np.int32, 5)
    got = pccl.broadcast(x, root, name="bcast")
    check(np.array_equal(got, contribution(root, (7,), np.int32, 5)), "broadcast")
    pccl.broadcast_(x, root, name="bcast.inplace")
    check(np.array_equal(x, contribution(root, (7,), np.int32, 5)), "broadcast_")
    # a group, submitted in a rank-dependent order of names that all ranks share
    xs = [contribution(me, (n,), np.float32, n) for n in (1, 10, 1000)]
    outs = pccl.grouped_allreduce(xs, name="group", op=pccl.Sum)
    for n, o in zip((1, 10, 1000), outs):
        check(np.array_equal(o, np.sum(np.stack([contribution(r, (n,), np.float32, n) for r in range(p)]),
                                       axis=0)), "grouped_allreduce %d" % n)
    # many async requests in an order of each rank's own
    names = ["async.%d" % i for i in range(20)]
    order = list(range(20))
    np.random.RandomState(me).shuffle(order)
    handles = {}
    for i in order:
        handles[i] = pccl.allreduce_async(np.full(5, float(i + me), np.float32), name=names[i], op=pccl.Sum)
    while not all(h.poll() for h in handles.values()):
        pass
    for i, h in handles.items():
        check(np.array_equal(h.wait(), np.full(5, float(i * p + p * (p - 1) // 2), np.float32)),
              "async %d" % i)
    s = pccl.stats()
    check(s["tensors"] >= 40 and s["cycles"] > 0, "stats %r" % s)


def errors_part():
    p, me = pccl.size(), pccl.rank()
    for bad, exc in ((np.zeros((4, 4))[:, ::2], ValueError), ([1, 2, 3], TypeError),
                     (np.zeros(3, np.complex64), TypeError)):
        try:
            pccl.allreduce(bad, name="bad")
            check(False, "allreduce of %r did not raise" % type(bad))
        except exc:
            pass
    try:
        pccl.allreduce(np.zeros(3, np.float32), name="x", op="median")
        check(False, "unknown op accepted")
    except ValueError:
        pass
    try:
        pccl.broadcast(np.zeros(3), p, name="bad.root")
        check(False, "bad root accepted")
    except ValueError:
        pass
    if p > 1:  # ranks disagree on a shape: every rank gets the named error
        shape = (2, 6) if me == p - 1 else (3, 4)
        try:
            pccl.allreduce(np.ones(shape, np.float32), name="disagree")
            check(False, "mismatched shapes did not raise")
        except pccl.PcclError as e:
            check(e.status == "PCCL_ERR_MISMATCH" and "'disagree'" in str(e) and
                  ("rank %d" % (p - 1)) in str(e) and "shape [2,6]" in str(e),
                  "mismatch message: %s" % e)


def torch_part():
    try:
        import torch
    except ImportError:
        return False
    p, me = pccl.size(), pccl.rank()
    for dtype in (torch.float32, torch.bfloat16, torch.int64):
        x = torch.arange(12, dtype=torch.float32).reshape(3, 4).add(me).to(dtype)
        ptr = x.data_ptr()
        pccl.allreduce_(x, name="torch.%s" % dtype, op=pccl.Sum)
        want = (torch.arange(12, dtype=torch.float32).reshape(3, 4) * p + p * (p - 1) / 2).to(dtype)
        check(x.data_ptr() == ptr and torch.equal(x, want), "torch allreduce_ %s" % dtype)
    g = pccl.allgather(torch.full((2,), float(me)), name="torch.gather")
    check(torch.equal(g, torch.tensor([float(r) for r in range(p) for _ in range(2)])), "torch allgather")
    try:
        pccl.allreduce(torch.zeros(4, 4).t(), name="torch.noncontig")
        check(False, "non-contiguous tensor accepted")
    except ValueError:
        pass
    return True


def main():
    part = sys.argv[1] if len(sys.argv) > 1 else "numpy"
    pccl.init(cycle_ms=1)
    if part == "numpy":
        numpy_part()
        errors_part()
    elif part == "torch":
        if not torch_part():
            print("torch is not installed: skipped")
            pccl.shutdown()
            sys.exit(77)
    me, p = pccl.rank(), pccl.size()
    pccl.shutdown()
    if failures:
        sys.exit(1)
    if me == 0:
        print("test_pccl %s on %d ranks: passed" % (part, p))


main()
