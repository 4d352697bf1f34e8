"""test_mpi4py.py - a Python program using Debian's mpi4py and numpy, run by
run_dropin.sh without and with libpccl_mpi.so preloaded: the buffer
collectives (Allreduce, Reduce, Scan, Exscan, Reduce_scatter_block,
Allgather, Allgatherv, Bcast, Scatter, Gather, Alltoall, Gatherv, Scatterv,
Alltoallv, in place where MPI allows) and mpi4py's pickled
object collectives, each checked against numpy references computed here.
Rank 0 prints the checks, failures and a digest of every result."""
import hashlib
import sys

import numpy as np
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
checks = failures = 0
digest = hashlib.sha256()


def expect(what, got, want):
    global checks, failures
    checks += 1
    got, want = np.ascontiguousarray(got), np.atleast_1d(want)
    digest.update(got.tobytes())
    if got.shape != want.shape or not np.array_equal(got, want):
        failures += 1
        print(f"rank {rank}: FAIL {what}", file=sys.stderr)


def data(r, n, dtype, salt):
    """Rank r's small-integer data: sums are exact in any order."""
    return ((np.arange(n) * 3 + r * 7 + salt) % 5).astype(dtype)


for n in (1, 1000, 100003):
    for dtype in (np.int32, np.int64, np.float32, np.float64, np.uint8):
        mine = data(rank, n, dtype, n)
        total = sum(data(r, n, dtype, n) for r in range(size)).astype(dtype)
        out = np.empty_like(mine)
        comm.Allreduce(mine, out, op=MPI.SUM)
        expect(f"Allreduce {dtype.__name__} {n}", out, total)
        inplace = mine.copy()
        comm.Allreduce(MPI.IN_PLACE, inplace, op=MPI.MAX)
        expect(f"Allreduce max in place {dtype.__name__} {n}", inplace,
               np.max([data(r, n, dtype, n) for r in range(size)], axis=0))
        red = np.zeros_like(mine)
        comm.Reduce(mine, red if rank == 0 else None, op=MPI.SUM, root=0)
        if rank == 0:
            expect(f"Reduce {dtype.__name__} {n}", red, total)
        below = sum((data(r, n, dtype, n) for r in range(rank)), np.zeros(n)).astype(dtype)
        pre = np.empty_like(mine)
        comm.Scan(mine, pre, op=MPI.SUM)
        expect(f"Scan {dtype.__name__} {n}", pre, (below + mine).astype(dtype))
        pre = mine.copy()
        comm.Exscan(MPI.IN_PLACE, pre, op=MPI.SUM)
        if rank > 0:  # rank 0's result is undefined
            expect(f"Exscan in place {dtype.__name__} {n}", pre, below)

    full = data(rank, n * size, np.float64, 1)
    part = np.empty(n, np.float64)
    comm.Reduce_scatter_block(full, part, op=MPI.SUM)
    want = sum(data(r, n * size, np.float64, 1) for r in range(size))
    expect(f"Reduce_scatter_block {n}", part, want[rank * n:(rank + 1) * n])

    blocks = np.arange(n * size, dtype=np.int64) + 17
    gathered = np.empty(n * size, np.int64)
    comm.Allgather(blocks[rank * n:(rank + 1) * n], gathered)
    expect(f"Allgather {n}", gathered, blocks)
    inplace = np.where(np.arange(n * size) // n == rank, blocks, -1)
    comm.Allgather(MPI.IN_PLACE, inplace)
    expect(f"Allgather in place {n}", inplace, blocks)

    root = size - 1
    b = blocks[:n].copy() if rank == root else np.zeros(n, np.int64)
    comm.Bcast(b, root=root)
    expect(f"Bcast {n}", b, blocks[:n])
    s = np.empty(n, np.int64)
    comm.Scatter(blocks if rank == root else None, s, root=root)
    expect(f"Scatter {n}", s, blocks[rank * n:(rank + 1) * n])
    g = np.empty(n * size, np.int64) if rank == root else None
    comm.Gather(s, g, root=root)
    if rank == root:
        expect(f"Gather {n}", g, blocks)
    send = np.repeat(np.arange(size, dtype=np.int32) + 100 * rank, n)
    recv = np.empty_like(send)
    comm.Alltoall(send, recv)
    expect(f"Alltoall {n}", recv, np.repeat(np.arange(size, dtype=np.int32) * 100 + rank, n))

    # uneven blocks: rank r gives r * n // 2 elements (rank 0 none)
    counts = [r * n // 2 for r in range(size)]
    displs = [sum(counts[:r]) for r in range(size)]
    allv = np.concatenate([np.arange(counts[r], dtype=np.float32) + 1000 * r for r in range(size)])
    gv = np.full(sum(counts), -1, np.float32)
    comm.Allgatherv(allv[displs[rank]:displs[rank] + counts[rank]], [gv, counts, displs, MPI.FLOAT])
    expect(f"Allgatherv {n}", gv, allv)

    # the same blocks gathered to the last rank, in place there, and
    # scattered back from it; then all-to-allv: rank i sends rank j
    # (i + j) % 3 * n // 2 elements
    mine = allv[displs[rank]:displs[rank] + counts[rank]]
    gv = np.full(sum(counts), -1, np.float32)
    if rank == root:
        gv[displs[rank]:displs[rank] + counts[rank]] = mine
        comm.Gatherv(MPI.IN_PLACE, [gv, counts, displs, MPI.FLOAT], root=root)
        expect(f"Gatherv in place {n}", gv, allv)
    else:
        comm.Gatherv(mine, None, root=root)
    sv = np.full(counts[rank], -1, np.float32)
    comm.Scatterv([allv, counts, displs, MPI.FLOAT] if rank == root else None, sv, root=root)
    expect(f"Scatterv {n}", sv, mine)
    scounts = [(rank + j) % 3 * n // 2 for j in range(size)]
    rcounts = [(i + rank) % 3 * n // 2 for i in range(size)]
    sendv = np.concatenate([np.full(scounts[j], rank * 100 + j, np.int64) for j in range(size)])
    wantv = np.concatenate([np.full(rcounts[i], i * 100 + rank, np.int64) for i in range(size)])
    recvv = np.full(sum(rcounts), -1, np.int64)
    comm.Alltoallv([sendv, scounts], [recvv, rcounts])
    expect(f"Alltoallv {n}", recvv, wantv)

# mpi4py's object collectives (pickles through MPI's collectives)
expect("allreduce object", np.array(comm.allreduce(rank + 1)), size * (size + 1) // 2)
expect("allgather object", np.array(comm.allgather({"r": rank})[size - 1]["r"]), size - 1)
expect("bcast object", np.array(comm.bcast([rank, "x"], root=0)[0]), 0)

results = comm.gather((checks, failures, digest.hexdigest()), root=0)
if rank == 0:
    total = hashlib.sha256("".join(d for _, _, d in results).encode()).hexdigest()[:16]
    print(f"test_mpi4py: {size} ranks, {sum(c for c, _, _ in results)} checks, "
          f"{sum(f for _, f, _ in results)} failures, digest {total}")
sys.exit(1 if failures else 0)
