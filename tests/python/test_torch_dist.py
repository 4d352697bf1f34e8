"""The torch.distributed backend "pccl" under mpiexec: every collective and
dtype against a reference computed on each rank from the generator of all
ranks' inputs (no communication), the Work / Future API, groups from
dist.new_group, the timeout, and each unsupported call's error.
Exits 77 (skipped) without torch."""
import datetime
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
try:
    import torch
    import torch.distributed as dist
except ImportError:
    print("torch not installed: skipped")
    sys.exit(77)

import pccl.torch  # noqa: F401  (registers the backend)
from pccl._torch_pg import PcclBackendError

REDUCIBLE = [torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64, torch.float16,
             torch.bfloat16, torch.float32, torch.float64]
MOVABLE = REDUCIBLE + [torch.bool, torch.complex64]
OPS = [dist.ReduceOp.SUM, dist.ReduceOp.PRODUCT, dist.ReduceOp.MIN, dist.ReduceOp.MAX,
       dist.ReduceOp.AVG]
BITS = {torch.int8: 8, torch.uint8: 8, torch.int16: 16, torch.int32: 32, torch.int64: 64}
BITWISE = {dist.ReduceOp.BAND: torch.bitwise_and, dist.ReduceOp.BOR: torch.bitwise_or,
           dist.ReduceOp.BXOR: torch.bitwise_xor}
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("rank %d FAIL: %s" % (RANK, what), flush=True)


def values(rank, n, seed, op=None):
    """Rank `rank`'s input as int64: small for PRODUCT (exact in every
    dtype), large for the others so that 8-bit sums wrap."""
    i = torch.arange(n, dtype=torch.int64)
    if op is not None and op == dist.ReduceOp.PRODUCT:
        return (i + rank + seed) % 3 + 1 - (i % 2) * 2
    return (i * 37 + rank * 101 + seed * 7) % 211 - 90


def as_tensor(vals, dtype):
    if dtype == torch.uint8:
        return (vals % 256).to(dtype)
    if dtype == torch.bool:
        return vals % 2 == 0
    if dtype == torch.complex64:
        return torch.complex(vals.float(), -vals.float())
    return vals.to(dtype)


def wrap(v, dtype):
    """v (int64) reduced modulo 2^bits into the dtype's range, as C's
    unsigned arithmetic does."""
    bits = BITS[dtype]
    if bits == 64:
        return v
    v = v % (1 << bits)
    if dtype != torch.uint8:
        v = torch.where(v >= 1 << (bits - 1), v - (1 << bits), v)
    return v


def reduce_ref(inputs, op, dtype):
    """Element-wise reduction of the ranks' inputs (as the dtype holds them),
    computed in int64 with wrap-around and truncating division for integers,
    in float64 and rounded once to the dtype for floats."""
    ints = dtype in BITS
    stack = torch.stack([x.to(torch.int64 if ints else torch.float64) for x in inputs])
    if op == dist.ReduceOp.MIN:
        v = stack.min(0).values
    elif op == dist.ReduceOp.MAX:
        v = stack.max(0).values
    elif op == dist.ReduceOp.PRODUCT:
        v = stack[0]
        for row in stack[1:]:
            v = wrap(v * row, dtype) if ints else v * row
    else:
        v = stack.sum(0)
        if ints:
            v = wrap(v, dtype)
        if op == dist.ReduceOp.AVG:
            v = torch.div(v, len(inputs), rounding_mode="trunc") if ints else v / len(inputs)
    return v.to(dtype)


def ranks_inputs(n, seed, dtype, op=None):
    """Every rank's input, as the dtype holds it."""
    return [as_tensor(values(r, n, seed, op), dtype) for r in range(SIZE)]


def same(got, want, what, avg=False):
    if avg and got.dtype in (torch.float16, torch.bfloat16):
        # pccl divides in float32 and rounds once more to the 16-bit type.
        ok = torch.allclose(got.double(), want.double(), rtol=2.0 ** -7, atol=0)
    else:
        ok = torch.equal(got, want)
    check(ok, "%s: got %s want %s" % (what, got.tolist()[:6], want.tolist()[:6]))


def test_reductions(n):
    for dtype in REDUCIBLE:
        for op in OPS:
            tag = "%s %s n=%d" % (dtype, op, n)
            seed = n + OPS.index(op)
            ins = ranks_inputs(n, seed, dtype, op)
            want = reduce_ref(ins, op, dtype)
            avg = op == dist.ReduceOp.AVG
            t = as_tensor(values(RANK, n, seed, op), dtype)
            dist.all_reduce(t, op=op)
            same(t, want, "all_reduce " + tag, avg)

            root = SIZE - 1
            t = as_tensor(values(RANK, n, seed, op), dtype)
            dist.reduce(t, dst=root, op=op)
            if RANK == root:
                same(t, want, "reduce " + tag, avg)

            big = ranks_inputs(n * SIZE, seed, dtype, op)
            full = reduce_ref(big, op, dtype)
            mine = full[RANK * n:(RANK + 1) * n]
            out = torch.empty(n, dtype=dtype)
            dist.reduce_scatter_tensor(out, as_tensor(values(RANK, n * SIZE, seed, op), dtype), op=op)
            same(out, mine, "reduce_scatter_tensor " + tag, avg)

            out = torch.empty(n, dtype=dtype)
            chunks = list(as_tensor(values(RANK, n * SIZE, seed, op), dtype).chunk(SIZE))
            dist.reduce_scatter(out, chunks, op=op)
            same(out, mine, "reduce_scatter " + tag, avg)

        a = as_tensor(values(RANK, n, 1), dtype)
        b = as_tensor(values(RANK, n + 3, 2), dtype)
        dist.all_reduce_coalesced([a, b], op=dist.ReduceOp.MAX)
        same(a, reduce_ref(ranks_inputs(n, 1, dtype), dist.ReduceOp.MAX, dtype),
             "all_reduce_coalesced[0] %s" % dtype)
        same(b, reduce_ref(ranks_inputs(n + 3, 2, dtype), dist.ReduceOp.MAX, dtype),
             "all_reduce_coalesced[1] %s" % dtype)


def fold(inputs, fn):
    v = inputs[0]
    for x in inputs[1:]:
        v = fn(v, x)
    return v


def test_bitwise_and_bool(n):
    """BAND/BOR/BXOR on the integer dtypes; bool tensors under every op but
    AVG, as NCCL's backend reduces them (sum and max: any; product and min:
    all; the bitwise ops: the logical ones)."""
    for dtype in BITS:
        for op, fn in BITWISE.items():
            seed = n + 11
            want = fold(ranks_inputs(n, seed, dtype), fn)
            t = as_tensor(values(RANK, n, seed), dtype)
            dist.all_reduce(t, op=op)
            same(t, want, "all_reduce %s %s n=%d" % (dtype, op, n))
    logic = {dist.ReduceOp.SUM: torch.logical_or, dist.ReduceOp.MAX: torch.logical_or,
             dist.ReduceOp.BOR: torch.logical_or, dist.ReduceOp.PRODUCT: torch.logical_and,
             dist.ReduceOp.MIN: torch.logical_and, dist.ReduceOp.BAND: torch.logical_and,
             dist.ReduceOp.BXOR: torch.logical_xor}
    for op, fn in logic.items():
        # one rank in three true, so "all" and "any" both vary
        ins = [(values(r, n, 5) % 3 == 0) for r in range(SIZE)]
        t = ins[RANK].clone()
        dist.all_reduce(t, op=op)
        same(t, fold(ins, fn), "all_reduce bool %s n=%d" % (op, n))
        out = torch.empty(n, dtype=torch.bool)
        whole = [(values(r, n * SIZE, 5) % 3 == 0) for r in range(SIZE)]
        dist.reduce_scatter_tensor(out, whole[RANK].clone(), op=op)
        same(out, fold(whole, fn)[RANK * n:(RANK + 1) * n], "reduce_scatter_tensor bool %s n=%d" % (op, n))


def test_movement(n):
    for dtype in MOVABLE:
        tag = "%s n=%d" % (dtype, n)
        mine = as_tensor(values(RANK, n, 3), dtype)
        every = [as_tensor(values(r, n, 3), dtype) for r in range(SIZE)]

        for root in {0, SIZE - 1}:
            t = mine.clone() if RANK == root else torch.zeros(n, dtype=dtype)
            dist.broadcast(t, src=root)
            same(t, every[root], "broadcast root %d %s" % (root, tag))

        outs = [torch.zeros(n, dtype=dtype) for _ in range(SIZE)]
        dist.all_gather(outs, mine)
        for r in range(SIZE):
            same(outs[r], every[r], "all_gather[%d] %s" % (r, tag))

        flat = torch.zeros(n * SIZE, dtype=dtype)
        dist.all_gather_into_tensor(flat, mine)
        same(flat, torch.cat(every), "all_gather_into_tensor " + tag)

        root = SIZE // 2
        gl = [torch.zeros(n, dtype=dtype) for _ in range(SIZE)] if RANK == root else None
        dist.gather(mine, gather_list=gl, dst=root)
        if RANK == root:
            for r in range(SIZE):
                same(gl[r], every[r], "gather[%d] %s" % (r, tag))

        # Root `root` scatters block r of its own vector to rank r.
        src = as_tensor(values(root, n * SIZE, 4), dtype)
        got = torch.zeros(n, dtype=dtype)
        dist.scatter(got, scatter_list=list(src.chunk(SIZE)) if RANK == root else None, src=root)
        same(got, src[RANK * n:(RANK + 1) * n], "scatter " + tag)

        # Rank r's input block d goes to rank d, landing in block r there.
        send = [as_tensor(values(RANK * SIZE + d, n, 5), dtype) for d in range(SIZE)]
        want = torch.cat([as_tensor(values(r * SIZE + RANK, n, 5), dtype) for r in range(SIZE)])
        out = torch.zeros(n * SIZE, dtype=dtype)
        dist.all_to_all_single(out, torch.cat(send))
        same(out, want, "all_to_all_single " + tag)
        outs = [torch.zeros(n, dtype=dtype) for _ in range(SIZE)]
        dist.all_to_all(outs, send)
        same(torch.cat(outs), want, "all_to_all " + tag)


def test_work_and_future():
    ts = [torch.full((1000,), float(RANK + i)) for i in range(4)]
    works = [dist.all_reduce(t, async_op=True) for t in ts]
    futs = [w.get_future() for w in works]
    chained = futs[0].then(lambda f: f.value()[0] * 2)
    for i, w in enumerate(works):
        check(w.wait() is True, "wait() returns True")
        check(w.is_completed() and w.is_success(), "completed after wait")
        want = float(sum(r + i for r in range(SIZE)))
        check(bool((ts[i] == want).all()), "async all_reduce %d: %s want %s" % (i, ts[i][0], want))
        check(futs[i].wait()[0] is ts[i], "the future's value is the output tensor")
    check(bool((chained.wait() == 2 * sum(range(SIZE))).all()), "a chained future")


def test_ddp_hooks():
    """DDP's gradients, with no hook and with the Python hooks that chain on
    the Work's future, equal the mean of every rank's own gradient."""
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
    from torch.nn.parallel import DistributedDataParallel as DDP

    def grads(x, hook=None):
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(6, 5), torch.nn.Tanh(), torch.nn.Linear(5, 2)).double()
        if hook is not None:
            model = DDP(model)
            if hook != "none":
                model.register_comm_hook(state=None, hook=hook)
        model(x).pow(2).sum().backward()
        return torch.cat([p.grad.reshape(-1) for p in model.parameters()])

    inputs = [torch.arange(12, dtype=torch.float64).reshape(2, 6) / (r + 2) for r in range(SIZE)]
    want = sum(grads(x) for x in inputs) / SIZE
    for hook in ("none", default_hooks.allreduce_hook, default_hooks.fp16_compress_hook):
        got = grads(inputs[RANK], hook)
        tol = 1e-12 if hook != default_hooks.fp16_compress_hook else 2e-3 * float(want.abs().max())
        name = getattr(hook, "__name__", hook)
        check(float((got - want).abs().max()) <= tol, "DDP %s: max diff %g" % (
            name, float((got - want).abs().max())))


def test_barrier(store):
    key = "before-barrier-%d" % SIZE
    if RANK == 0:
        time.sleep(0.3)
        store.add(key, 1)
    dist.barrier()
    check(store.add(key, 0) == 1, "barrier: rank 0's write before the barrier is seen after it")


def test_groups():
    evens = list(range(0, SIZE, 2))
    g = dist.new_group(evens)
    if RANK in evens:
        t = torch.tensor([RANK + 1.0])
        dist.all_reduce(t, group=g)
        check(t.item() == sum(r + 1 for r in evens), "new_group(evens) all_reduce: %s" % t.item())
        check(dist.get_rank(g) == evens.index(RANK), "rank in the group")
        flat = torch.zeros(len(evens))
        dist.all_gather_into_tensor(flat, torch.tensor([float(RANK)]), group=g)
        check(flat.tolist() == [float(r) for r in evens], "group all_gather: %s" % flat.tolist())
    else:
        check(g == dist.GroupMember.NON_GROUP_MEMBER, "non-members get NON_GROUP_MEMBER")
    tail = list(range(SIZE - 1, -1, -2))
    g2 = dist.new_group(tail)
    if RANK in tail:
        t = torch.tensor([float(RANK)])
        dist.broadcast(t, src=max(tail), group=g2)
        check(t.item() == max(tail), "new_group broadcast from a global rank")


def test_timeout():
    """A group of 2 ranks where only its first calls: pccl's timeout, taken
    from new_group(timeout=...), ends the call with an error."""
    if SIZE < 2:
        return
    g = dist.new_group([0, 1], timeout=datetime.timedelta(seconds=2))
    if RANK == 0:
        start = time.time()
        try:
            dist.all_reduce(torch.ones(4), group=g)
            check(False, "a collective that one rank never joins must time out")
        except PcclBackendError as e:
            took = time.time() - start
            check("PCCL_ERR_TIMEOUT" in str(e), "timeout status: %s" % e)
            check(1.5 < took < 60, "timed out after %.1f s (2 s asked)" % took)


def expect_error(exc, fn, what, needle):
    try:
        fn()
        check(False, "%s: no error" % what)
    except exc as e:
        check(needle in str(e), "%s: message %r lacks %r" % (what, str(e), needle))


def test_errors():
    x = torch.zeros(4, 4)
    expect_error(ValueError, lambda: dist.all_reduce(x.t()), "non-contiguous", "contiguous")
    # torch itself reduces a complex SUM as its real view, so it works.
    z = torch.complex(torch.arange(3.0) + RANK, -torch.arange(3.0))
    dist.all_reduce(z)
    want = torch.complex(SIZE * torch.arange(3.0) + sum(range(SIZE)), -SIZE * torch.arange(3.0))
    check(torch.equal(z, want), "complex sum: %s" % z.tolist())
    expect_error(ValueError, lambda: dist.all_reduce(torch.zeros(3, dtype=torch.float32),
                                                     op=dist.ReduceOp.BAND), "float BAND",
                 "bitwise ops do not reduce")
    expect_error(ValueError, lambda: dist.all_reduce(torch.zeros(3, dtype=torch.bool),
                                                     op=dist.ReduceOp.AVG), "bool AVG",
                 "AVG does not reduce")
    expect_error(ValueError, lambda: dist.all_reduce(torch.zeros(3, device="meta")),
                 "a meta tensor", "CPU tensors")
    expect_error(ValueError, lambda: dist.all_gather_into_tensor(torch.zeros(SIZE * 3 + 1),
                                                                torch.zeros(3)),
                 "wrong all-gather output", "needs an output")
    expect_error(ValueError, lambda: dist.reduce_scatter_tensor(torch.zeros(2),
                                                               torch.zeros(2 * SIZE + 1)),
                 "wrong reduce-scatter input", "needs an input")
    if SIZE > 1:
        rows = torch.zeros(SIZE * 2)
        splits = [1] * (SIZE - 1) + [SIZE + 1]
        expect_error(ValueError, lambda: dist.all_to_all_single(rows, rows.clone(), splits, splits),
                     "uneven all-to-all", "equal blocks")
        expect_error(RuntimeError, lambda: dist.send(torch.zeros(1), dst=(RANK + 1) % SIZE),
                     "send", "no point-to-point")
    expect_error(ValueError, lambda: dist.all_gather([torch.zeros(2)] * (SIZE + 1), torch.zeros(2)),
                 "all_gather list length", "list of")
    import pccl
    expect_error(ValueError, pccl.init, "the engine beside the backend", "torch.distributed backend")


def test_wrong_world():
    """torch told a world size MPI does not have (as torchrun would): the
    backend says why instead of hanging."""
    path = "/tmp/pccl-torch-wrong-%d-%d" % (os.getppid(), RANK)
    try:
        dist.init_process_group("pccl", init_method="file://" + path, rank=0, world_size=1000)
        check(False, "a world size MPI does not have must be refused")
    except PcclBackendError as e:
        check("mpirun" in str(e), "the message says how to launch: %s" % e)
    finally:
        if os.path.exists(path):
            os.unlink(path)


def main():
    global RANK, SIZE
    RANK, SIZE = int(os.environ.get("OMPI_COMM_WORLD_RANK", os.environ.get("PMI_RANK", 0))), None
    test_wrong_world()
    dist.init_process_group("pccl", init_method="pccl://", timeout=datetime.timedelta(seconds=120))
    RANK, SIZE = dist.get_rank(), dist.get_world_size()
    check(dist.get_backend() == "pccl", "backend name: %s" % dist.get_backend())
    for n in (1, 7, 1000):
        test_reductions(n)
        test_bitwise_and_bool(n)
        test_movement(n)
    test_reductions(40000)  # past the node segment's sizes
    test_work_and_future()
    test_ddp_hooks()
    test_barrier(dist.distributed_c10d._get_default_store())
    test_groups()
    test_errors()
    test_timeout()
    dist.barrier()
    if failures:
        print("rank %d: %d failures" % (RANK, len(failures)))
        sys.exit(1)
    print("rank %d of %d: torch.distributed backend pccl OK" % (RANK, SIZE))


main()
