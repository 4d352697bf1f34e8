"""The torch.distributed backend "pccl": a ProcessGroup whose collectives run
on pccl communicators, registered by `import pccl.torch`.

    import torch.distributed as dist, pccl.torch
    dist.init_process_group("pccl", init_method="pccl://")   # under mpirun

Threads: one worker thread per process makes every pccl (and so MPI) call,
in the order the program issued them, and completes each call's Work and
Future there. The program's thread only checks arguments and queues; a
backward pass therefore overlaps the all-reduces DDP issues from it. As with
torch's MPI backend, collectives on groups that share ranks must be issued in
the same order on those ranks.

Ranks come from MPI: the default group is MPI_COMM_WORLD (torch's rank and
world size must match MPI's), a group from dist.new_group is a pccl
communicator over those ranks (pccl_comm_create_group). Communicators are
freed, and MPI finalised if pccl started it, at exit.
"""
import atexit
import collections
import importlib
import ctypes
import datetime
import os
import socket
import threading

import torch
import torch.distributed as dist
from torch._C._distributed_c10d import ProcessGroup, Work

from . import _native as _n

_DTYPES = {
    torch.int8: _n.INT8, torch.uint8: _n.UINT8, torch.int16: _n.INT16, torch.int32: _n.INT32,
    torch.int64: _n.INT64, torch.float16: _n.FLOAT16, torch.bfloat16: _n.BFLOAT16,
    torch.float32: _n.FLOAT32, torch.float64: _n.FLOAT64, torch.bool: _n.BOOL,
}
_OPS = [(dist.ReduceOp.SUM, _n.SUM, "SUM"), (dist.ReduceOp.PRODUCT, _n.PROD, "PRODUCT"),
        (dist.ReduceOp.MIN, _n.MIN, "MIN"), (dist.ReduceOp.MAX, _n.MAX, "MAX"),
        (dist.ReduceOp.AVG, _n.AVG, "AVG"), (dist.ReduceOp.BAND, _n.BAND, "BAND"),
        (dist.ReduceOp.BOR, _n.BOR, "BOR"), (dist.ReduceOp.BXOR, _n.BXOR, "BXOR")]
# bool tensors reduce as NCCL's backend reduces them: sum and max are "any",
# product and min "all"; the bitwise ops are the logical ones.
_BOOL_OPS = {_n.SUM: _n.LOR, _n.MAX: _n.LOR, _n.BOR: _n.LOR, _n.PROD: _n.LAND, _n.MIN: _n.LAND,
             _n.BAND: _n.LAND, _n.BXOR: _n.LXOR}
# torch.distributed.rendezvous is also the name of a function there: load the module.
_rdzv = importlib.import_module("torch.distributed.rendezvous")
_ADDR_BYTES = 256  # the TCP store's "host:port", broadcast by pccl://


class PcclBackendError(RuntimeError):
    """A pccl call under torch.distributed failed; the message is pccl's."""


# ---- the worker thread --------------------------------------------------------

class _Worker:
    """The one thread that calls pccl: jobs run in the order queued."""

    def __init__(self):
        self._jobs = collections.deque()
        self._cv = threading.Condition()
        self._thread = threading.Thread(target=self._run, name="pccl-torch", daemon=True)
        self._thread.start()

    def submit(self, job):
        with self._cv:
            self._jobs.append(job)
            self._cv.notify()

    def call(self, fn):
        """Runs fn on the worker and returns its result (or raises its error)."""
        box = {}
        done = threading.Event()

        def job():
            try:
                box["value"] = fn()
            except BaseException as e:  # handed to the caller, not lost in the thread
                box["error"] = e
            done.set()
        self.submit(job)
        done.wait()
        if "error" in box:
            raise box["error"]
        return box.get("value")

    def _run(self):
        while True:
            with self._cv:
                while not self._jobs:
                    self._cv.wait()
                job = self._jobs.popleft()
            if job is None:
                return
            job()

    def stop(self):
        self.submit(None)
        self._thread.join()


class _Process:
    worker = None
    world = None          # the default group's communicator (MPI_COMM_WORLD)
    comms = []            # every communicator, freed in creation order at exit
    lock = threading.Lock()


def _worker():
    with _Process.lock:
        if _Process.worker is None:
            _Process.worker = _Worker()
        return _Process.worker


def _check(status, comm=None):
    if status != _n.OK:
        raise PcclBackendError("pccl: %s (%s): %s" % (
            _n.status_string(status), _n.status_name(status),
            _n.lib.pccl_last_error(comm).decode()))


def _comm_int(fn, comm):
    v = ctypes.c_int()
    _check(fn(comm, ctypes.byref(v)), comm)
    return v.value


def _world():
    """The communicator over MPI_COMM_WORLD, created (and MPI initialised)
    on the worker the first time."""
    def create():
        if _Process.world is None:
            from . import _State  # the engine's communicator lives there
            if _State.engine is not None:
                raise PcclBackendError(
                    "pccl: the torch.distributed backend cannot share a process with "
                    "pccl.init()'s engine (both would call MPI from their own thread)")
            comm = ctypes.c_void_p()
            _check(_n.lib.pccl_comm_create_world(ctypes.byref(comm)))
            _Process.world = comm
            _Process.comms.append(comm)
        return _Process.world
    return _worker().call(create)


def _shutdown():
    if _Process.worker is None:
        return

    def free_all():
        # Aborted first, a communicator frees only what needs no peer: a
        # peer whose call on it timed out has given it up, and a collective
        # free would wait for that peer for ever.
        for comm in _Process.comms:
            _n.lib.pccl_comm_abort(comm)
            _n.lib.pccl_comm_destroy(comm)
        _Process.comms = []
        _Process.world = None
        _n.lib.pccl_finalize()
    _Process.worker.call(free_all)
    _Process.worker.stop()
    _Process.worker = None


atexit.register(_shutdown)


def backend_active():
    """True once the backend has created a communicator in this process."""
    return _Process.world is not None


# ---- argument checks (on the caller's thread, so errors raise at the call) ----

def _tensor(t, what):
    if not isinstance(t, torch.Tensor):
        raise TypeError("pccl: %s must be a torch.Tensor, not %s" % (what, type(t).__name__))
    if t.device.type != "cpu":
        raise ValueError("pccl: %s is on %s; the pccl backend takes CPU tensors" % (what, t.device))
    if not t.is_contiguous():
        raise ValueError("pccl: %s is not contiguous; pass t.contiguous()" % what)
    if t.is_sparse:
        raise ValueError("pccl: %s is sparse; the pccl backend takes dense tensors" % what)
    return t


def _reducible(t, what):
    if t.dtype not in _DTYPES:
        raise TypeError("pccl: %s has dtype %s, which pccl cannot reduce (it reduces %s)" % (
            what, t.dtype, ", ".join(str(d).replace("torch.", "") for d in _DTYPES)))
    return _DTYPES[t.dtype]


def _op(op):
    for torch_op, code, _ in _OPS:
        if isinstance(op, type(torch_op)) and op == torch_op:
            return code
    raise ValueError("pccl: reduce op %s is not supported (%s are)" % (
        op, ", ".join(name for _, _, name in _OPS)))


def _reduction(t, what, opts):
    """The pccl dtype and op that reduce tensor t as opts.reduceOp asks."""
    dtype, op = _reducible(t, what), _op(_opt(opts, "reduceOp", dist.ReduceOp.SUM))
    if dtype == _n.BOOL:
        if op not in _BOOL_OPS:
            raise ValueError("pccl: %s is a bool tensor, which AVG does not reduce" % what)
        return dtype, _BOOL_OPS[op]
    if dtype in (_n.FLOAT16, _n.BFLOAT16, _n.FLOAT32, _n.FLOAT64) and op in (_n.BAND, _n.BOR, _n.BXOR):
        raise ValueError("pccl: %s has dtype %s, which bitwise ops do not reduce" % (what, t.dtype))
    return dtype, op


def _one(tensors, what):
    if not isinstance(tensors, (list, tuple)) or len(tensors) != 1:
        raise ValueError("pccl: %s must be a list of one tensor (one CPU device per process)"
                         % what)
    return _tensor(tensors[0], what + "[0]")


def _same_shape(ts, like, what):
    for i, t in enumerate(ts):
        _tensor(t, "%s[%d]" % (what, i))
        if t.dtype != like.dtype or t.numel() != like.numel():
            raise ValueError("pccl: %s[%d] (%s, %d elements) differs from the input (%s, %d)" % (
                what, i, t.dtype, t.numel(), like.dtype, like.numel()))


def _split_into(flat, outs):
    """Copies consecutive blocks of flat into the tensors of outs."""
    at = 0
    for o in outs:
        o.view(-1).copy_(flat[at:at + o.numel()])
        at += o.numel()


def _ptr(t):
    return ctypes.c_void_p(t.data_ptr()) if t.numel() else None


def _nbytes(t):
    return t.numel() * t.element_size()


# ---- Work --------------------------------------------------------------------

class _Work(Work):
    """One queued collective: wait(), is_completed(), get_future() as
    torch.distributed documents; the future's value is the output tensors."""

    def __init__(self, outputs, keep):
        super().__init__()
        self._outputs = outputs
        self._keep = keep          # inputs and staging, alive until the call ends
        self._done = threading.Event()
        self._error = None
        self._future = torch.futures.Future()

    def _run(self, fn):
        try:
            fn()
        except BaseException as e:  # reported through wait() and the future
            self._error = e
        self._keep = None
        self._done.set()
        if self._error is None:
            self._future.set_result(self._outputs)
        else:
            self._future.set_exception(self._error)

    def is_completed(self):
        return self._done.is_set()

    def is_success(self):
        return self._done.is_set() and self._error is None

    def exception(self):
        return self._error

    def result(self):
        self.wait()
        return self._outputs

    def source_rank(self):
        raise RuntimeError("pccl: source_rank is only defined for recv from any source")

    def synchronize(self):
        pass  # CPU tensors: nothing to order against a stream

    def wait(self, timeout=datetime.timedelta(0)):
        seconds = timeout.total_seconds() if isinstance(timeout, datetime.timedelta) else 0
        if not self._done.wait(seconds if seconds > 0 else None):
            raise RuntimeError("pccl: the collective did not complete within %s" % timeout)
        if self._error is not None:
            raise self._error
        return True

    def get_future(self):
        return self._future


# ---- the process group --------------------------------------------------------

class ProcessGroupPCCL(ProcessGroup):
    """torch.distributed's ProcessGroup on one pccl communicator."""

    def __init__(self, comm, rank, size):
        super().__init__(rank, size)
        self._comm = comm
        self._rank, self._size = rank, size

    def getBackendName(self):
        return "pccl"

    def _queue(self, outputs, keep, fn):
        work = _Work(outputs, keep)
        _worker().submit(lambda: work._run(fn))
        return work

    def _call(self, name, *args):
        _check(getattr(_n.lib, name)(*args, self._comm), self._comm)

    # -- reductions

    def allreduce(self, tensors, opts=None):
        t = _one(tensors, "tensors")
        dtype, op = _reduction(t, "tensors[0]", opts)
        return self._queue(tensors, None, lambda: self._call(
            "pccl_allreduce", _ptr(t), _ptr(t), t.numel(), dtype, op))

    def allreduce_coalesced(self, tensors, opts=None):
        if not tensors:
            raise ValueError("pccl: allreduce_coalesced needs at least one tensor")
        for i, t in enumerate(tensors):
            _tensor(t, "tensors[%d]" % i)
            if t.dtype != tensors[0].dtype:
                raise ValueError("pccl: allreduce_coalesced takes tensors of one dtype "
                                 "(tensors[%d] is %s, tensors[0] %s)" % (i, t.dtype, tensors[0].dtype))
        dtype, op = _reduction(tensors[0], "tensors[0]", opts)

        def run():
            flat = torch.cat([t.reshape(-1) for t in tensors])
            self._call("pccl_allreduce", _ptr(flat), _ptr(flat), flat.numel(), dtype, op)
            offset = 0
            for t in tensors:
                t.view(-1).copy_(flat[offset:offset + t.numel()])
                offset += t.numel()
        return self._queue(tensors, None, run)

    def reduce(self, tensors, opts=None):
        t = _one(tensors, "tensors")
        dtype, op = _reduction(t, "tensors[0]", opts)
        root = self._root(opts)
        recv = _ptr(t) if self._rank == root else None
        return self._queue(tensors, None, lambda: self._call(
            "pccl_reduce", _ptr(t), recv, t.numel(), dtype, op, root))

    def _reduce_scatter_base(self, output, input, opts=None):
        self._whole_and_part(input, output, "reduce_scatter_tensor", "input", "output")
        dtype, op = _reduction(input, "input", opts)
        return self._queue(output, input, lambda: self._call(
            "pccl_reduce_scatter", _ptr(input), _ptr(output), output.numel(), dtype, op))

    def reduce_scatter(self, output_tensors, input_tensors, opts=None):
        out = _one(output_tensors, "output_tensors")
        if not isinstance(input_tensors, (list, tuple)) or len(input_tensors) != 1 \
                or len(input_tensors[0]) != self._size:
            raise ValueError("pccl: reduce_scatter takes one list of %d input tensors" % self._size)
        _same_shape(input_tensors[0], out, "input_list")
        dtype, op = _reduction(out, "output", opts)

        def run():
            flat = torch.cat([t.reshape(-1) for t in input_tensors[0]])
            self._call("pccl_reduce_scatter", _ptr(flat), _ptr(out), out.numel(), dtype, op)
        return self._queue(output_tensors, input_tensors, run)

    # -- data movement: any dtype, moved as bytes

    def broadcast(self, tensors, opts=None):
        t = _one(tensors, "tensors")
        root = self._root(opts)
        return self._queue(tensors, None, lambda: self._call(
            "pccl_broadcast", _ptr(t), _ptr(t), _nbytes(t), _n.UINT8, root))

    def _allgather_base(self, output, input, opts=None):
        self._whole_and_part(output, input, "all_gather_into_tensor", "output", "input")
        return self._queue(output, input, lambda: self._call(
            "pccl_allgather", _ptr(input), _ptr(output), _nbytes(input), _n.UINT8))

    def allgather(self, output_tensors, input_tensors, opts=None):
        inp = _one(input_tensors, "input_tensors")
        outs = self._list_of(output_tensors, "output_tensors")
        _same_shape(outs, inp, "output_list")

        def run():
            flat = torch.empty(self._size * inp.numel(), dtype=inp.dtype)
            self._call("pccl_allgather", _ptr(inp), _ptr(flat), _nbytes(inp), _n.UINT8)
            _split_into(flat, outs)
        return self._queue(output_tensors, input_tensors, run)

    def gather(self, output_tensors, input_tensors, opts=None):
        inp = _one(input_tensors, "input_tensors")
        root = self._root(opts)
        outs = self._root_list(output_tensors, inp, root, "gather_list")

        def run():
            flat = torch.empty(self._size * inp.numel() if outs else 0, dtype=inp.dtype)
            self._call("pccl_gather", _ptr(inp), _ptr(flat), _nbytes(inp), _n.UINT8, root)
            _split_into(flat, outs or [])
        return self._queue(output_tensors, input_tensors, run)

    def scatter(self, output_tensors, input_tensors, opts=None):
        out = _one(output_tensors, "output_tensors")
        root = self._root(opts)
        ins = self._root_list(input_tensors, out, root, "scatter_list")

        def run():
            flat = torch.cat([t.reshape(-1) for t in ins]) if ins else None
            self._call("pccl_scatter", _ptr(flat) if ins else None, _ptr(out), _nbytes(out),
                       _n.UINT8, root)
        return self._queue(output_tensors, input_tensors, run)

    def alltoall_base(self, output, input, output_split_sizes, input_split_sizes, opts=None):
        _tensor(output, "output")
        _tensor(input, "input")
        if input.dtype != output.dtype or input.numel() != output.numel() \
                or input.numel() % self._size:
            raise ValueError("pccl: all_to_all_single needs input and output of one dtype and "
                             "one size, divisible by the group size %d" % self._size)
        for name, splits in (("output_split_sizes", output_split_sizes),
                             ("input_split_sizes", input_split_sizes)):
            rows = input.shape[0] if input.dim() else 0
            if splits and any(s != rows // self._size for s in splits):
                raise ValueError("pccl: all-to-all takes equal blocks; %s %s are uneven (pass "
                                 "none, or %d each)" % (name, list(splits), rows // self._size))
        block = _nbytes(input) // self._size
        return self._queue(output, input, lambda: self._call(
            "pccl_alltoall", _ptr(input), _ptr(output), block, _n.UINT8))

    def alltoall(self, output_tensors, input_tensors, opts=None):
        if len(input_tensors) != self._size or len(output_tensors) != self._size:
            raise ValueError("pccl: all_to_all takes %d input and %d output tensors"
                             % (self._size, self._size))
        like = _tensor(input_tensors[0], "input_tensor_list[0]")
        _same_shape(input_tensors, like, "input_tensor_list")
        _same_shape(output_tensors, like, "output_tensor_list")

        def run():
            flat = torch.cat([t.reshape(-1) for t in input_tensors])
            got = torch.empty_like(flat)
            self._call("pccl_alltoall", _ptr(flat), _ptr(got), _nbytes(like), _n.UINT8)
            _split_into(got, output_tensors)
        return self._queue(output_tensors, input_tensors, run)

    def barrier(self, opts=None):
        # No rank leaves a 1-byte all-reduce before every rank has entered it.
        token = torch.zeros(1, dtype=torch.uint8)
        return self._queue([], token, lambda: self._call(
            "pccl_allreduce", _ptr(token), _ptr(token), 1, _n.UINT8, _n.MAX))

    def send(self, tensors, dst, tag=0):
        raise RuntimeError("pccl: the pccl backend has no point-to-point send/recv; create a "
                           "gloo group for them (dist.new_group(backend='gloo'))")

    def recv(self, tensors, src, tag=0):
        self.send(tensors, src, tag)

    def recv_anysource(self, tensors, tag=0):
        self.send(tensors, -1, tag)

    # -- helpers

    def _root(self, opts):
        root = _opt(opts, "rootRank", 0)
        if not 0 <= root < self._size:
            raise ValueError("pccl: root %d is not a rank of this group (size %d)" % (root, self._size))
        if _opt(opts, "rootTensor", 0) != 0:
            raise ValueError("pccl: rootTensor must be 0 (one tensor per process)")
        return root

    def _whole_and_part(self, whole, part, call, whole_name, part_name):
        """A *_tensor call's pair: `whole` holds size x `part`'s elements."""
        _tensor(whole, whole_name)
        _tensor(part, part_name)
        if whole.dtype != part.dtype or whole.numel() != part.numel() * self._size:
            raise ValueError("pccl: %s needs an %s of %d x the %s's %d elements, same dtype "
                             "(got %d, %s vs %s)" % (call, whole_name, self._size, part_name,
                                                     part.numel(), whole.numel(), whole.dtype,
                                                     part.dtype))

    def _root_list(self, lists, like, root, what):
        """gather's and scatter's list: given on the root only (else None)."""
        if self._rank == root:
            tensors = self._list_of(lists, what)
            _same_shape(tensors, like, what)
            return tensors
        if lists and any(len(x) for x in lists):
            raise ValueError("pccl: %s is only given on the root (rank %d)" % (what, root))
        return None

    def _list_of(self, lists, what):
        if not isinstance(lists, (list, tuple)) or len(lists) != 1 or len(lists[0]) != self._size:
            raise ValueError("pccl: %s must be one list of %d tensors" % (what, self._size))
        return lists[0]


def _opt(opts, field, default):
    return getattr(opts, field, default) if opts is not None else default


# ---- creation: rendezvous and the backend's constructor ------------------------

def _timeout_seconds(timeout):
    """torch's timeout (init_process_group's or new_group's, 30 minutes by
    default) replaces PCCL_TIMEOUT for the group's communicator."""
    return timeout.total_seconds() if isinstance(timeout, datetime.timedelta) else None


def _create(opts, pg_options=None):
    """Backend.register_backend's constructor (extended API: it is given the
    global ranks of a new group)."""
    if pg_options is not None:
        raise ValueError("pccl: the pccl backend takes no pg_options")
    world = _world()
    mpi_rank = _comm_int(_n.lib.pccl_comm_rank, world)
    mpi_size = _comm_int(_n.lib.pccl_comm_size, world)
    ranks = list(opts.global_ranks_in_group)
    if not ranks:
        if (opts.group_rank, opts.group_size) != (mpi_rank, mpi_size):
            raise PcclBackendError(
                "pccl: torch.distributed was given rank %d of %d but MPI says rank %d of %d: the "
                "pccl backend takes its ranks from MPI, so launch with mpirun (torchrun starts "
                "processes without MPI; each is then an MPI job of its own) and pass "
                "init_method='pccl://' or MPI's rank and size" % (
                    opts.group_rank, opts.group_size, mpi_rank, mpi_size))
        comm = world
    else:
        def create_group():
            arr = (ctypes.c_int * len(ranks))(*ranks)
            sub = ctypes.c_void_p()
            _check(_n.lib.pccl_comm_create_group(world, len(ranks), arr, ctypes.byref(sub)), None)
            _Process.comms.append(sub)
            return sub
        comm = _worker().call(create_group)
    seconds = _timeout_seconds(opts.timeout)
    if seconds is not None:
        _check(_n.lib.pccl_comm_set_timeout(comm, min(seconds, 1e9)), comm)
    return ProcessGroupPCCL(comm, opts.group_rank, opts.group_size)


def _rendezvous(url, timeout=datetime.timedelta(minutes=30), **kwargs):
    """init_method="pccl://": rank and world size from MPI, and a TCP store
    served by rank 0 whose address pccl broadcasts (torch needs a store for
    its own barriers even when the backend does not)."""
    world = _world()
    rank = _comm_int(_n.lib.pccl_comm_rank, world)
    size = _comm_int(_n.lib.pccl_comm_size, world)
    query = dict(p.split("=", 1) for p in url.partition("?")[2].split("&") if "=" in p)
    for key, have in (("rank", rank), ("world_size", size)):
        if key in query and int(query[key]) not in (-1, have):
            raise ValueError("pccl://: %s=%s was given but MPI says %d" % (key, query[key], have))
    host = os.environ.get("MASTER_ADDR") or socket.gethostname()
    addr = ctypes.create_string_buffer(_ADDR_BYTES)
    store = None
    if rank == 0:
        port = int(os.environ.get("MASTER_PORT", "0"))
        store = dist.TCPStore(host, port, size, True, timeout=timeout, wait_for_workers=False)
        addr.value = ("%s:%d" % (host, store.port)).encode()
    _worker().call(lambda: _check(_n.lib.pccl_broadcast(
        addr, addr, _ADDR_BYTES, _n.UINT8, 0, world), world))
    host, _, port = addr.value.decode().rpartition(":")
    if rank != 0:
        store = dist.TCPStore(host, int(port), size, False, timeout=timeout)
    yield (store, rank, size)
    raise RuntimeError("pccl://: the rendezvous runs once per process")


def register():
    """Registers backend "pccl" and init_method "pccl://" (once per process)."""
    if "PCCL" not in dist.Backend._plugins:
        dist.Backend.register_backend("pccl", _create, extended_api=True)
    if "pccl" not in _rdzv._rendezvous_handlers:
        _rdzv.register_rendezvous_handler("pccl", _rendezvous)
