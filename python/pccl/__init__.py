"""pccl for Python: collectives on numpy arrays and CPU torch tensors through
pccl's engine (named requests, response cache, fusion), over ctypes.

    import pccl
    pccl.init()
    total = pccl.allreduce(x, name="grad.w", op=pccl.Sum)   # blocking
    h = pccl.allreduce_async_(x, name="grad.w")           # in place, average
    ...                                                   # overlap work here
    h.wait()

Every call is collective in the sense of the engine: each rank must submit
each name, in any order. Operations take C-contiguous numpy arrays or
contiguous CPU torch tensors and run on their memory directly (no copy);
keep them alive and untouched until the handle completes. Names default to
"<op>.noname.<n>" numbered per collective, which matches across ranks only
when they call in the same order. Errors raise PcclError with pccl's
message. docs/python.md has the details.
"""
import atexit
import ctypes
import sys

from . import _native as _n

__all__ = [
    "PcclError", "Sum", "Average", "Min", "Max", "Product",
    "init", "shutdown", "is_initialized", "rank", "size", "local_rank", "local_size",
    "allreduce", "allreduce_", "allreduce_async", "allreduce_async_",
    "grouped_allreduce", "grouped_allreduce_", "grouped_allreduce_async",
    "grouped_allreduce_async_",
    "allgather", "allgather_async", "reduce_scatter", "reduce_scatter_async",
    "broadcast", "broadcast_", "broadcast_async", "broadcast_async_",
    "Handle", "stats", "last_warning",
]

Sum, Average, Min, Max, Product = "sum", "average", "min", "max", "product"
_OPS = {Sum: _n.SUM, Average: _n.AVG, Min: _n.MIN, Max: _n.MAX, Product: _n.PROD}


class PcclError(RuntimeError):
    """A pccl call failed: .status is the status's name ("PCCL_ERR_MISMATCH"),
    .code its value, str() pccl's description and message."""

    def __init__(self, code, message):
        self.code = code
        self.status = _n.status_name(code)
        super().__init__("%s (%s): %s" % (_n.status_string(code), self.status, message))


class _State:
    comm = None
    engine = None
    rank = size = local_rank = local_size = None
    counters = {}


def _check(status, where=None):
    if status != _n.OK:
        detail = _n.lib.pccl_last_error(_State.comm if where == "comm" else None).decode()
        raise PcclError(status, detail)


def _comm_int(fn):
    v = ctypes.c_int()
    _check(fn(_State.comm, ctypes.byref(v)), "comm")
    return v.value


def init(cycle_ms=None, fusion_threshold=None, cache_capacity=None, stall_check_seconds=None,
         timeline=None):
    """Starts pccl over MPI_COMM_WORLD (initialising MPI unless mpi4py or the
    program has) and the engine. An argument left None takes its
    environment variable (PCCL_CYCLE_TIME_MS, PCCL_FUSION_THRESHOLD,
    PCCL_CACHE_CAPACITY, PCCL_STALL_CHECK_SECONDS, PCCL_TIMELINE), else
    the default. Calling it again does nothing."""
    if _State.engine is not None:
        return
    backend = sys.modules.get("pccl._torch_pg")
    if backend is not None and backend.backend_active():
        raise ValueError("pccl.init(): the torch.distributed backend \"pccl\" is running in this "
                         "process; its thread and the engine's would both call MPI")
    comm = ctypes.c_void_p()
    _check(_n.lib.pccl_comm_create_world(ctypes.byref(comm)))
    _State.comm = comm
    cfg = _n.EngineConfig(ctypes.sizeof(_n.EngineConfig),
                          -1.0 if cycle_ms is None else float(cycle_ms),
                          -1 if fusion_threshold is None else int(fusion_threshold),
                          -1 if cache_capacity is None else int(cache_capacity),
                          -1.0 if stall_check_seconds is None else float(stall_check_seconds),
                          None if timeline is None else str(timeline).encode())
    engine = ctypes.c_void_p()
    status = _n.lib.pccl_engine_create(comm, ctypes.byref(cfg), ctypes.byref(engine))
    if status != _n.OK:
        message = _n.lib.pccl_last_error(None).decode()
        _n.lib.pccl_comm_destroy(comm)
        _State.comm = None
        raise PcclError(status, message)
    _State.engine = engine
    _State.rank = _comm_int(_n.lib.pccl_comm_rank)
    _State.size = _comm_int(_n.lib.pccl_comm_size)
    _State.local_rank = _comm_int(_n.lib.pccl_comm_local_rank)
    _State.local_size = _comm_int(_n.lib.pccl_comm_local_size)
    _State.counters = {}


def shutdown():
    """Stops the engine (requests still pending fail with ABORTED), frees
    the communicator and finalises MPI if pccl initialised it. Runs at exit."""
    if _State.engine is not None:
        _n.lib.pccl_engine_destroy(_State.engine)
        _State.engine = None
    if _State.comm is not None:
        _n.lib.pccl_comm_destroy(_State.comm)
        _State.comm = None
        _n.lib.pccl_finalize()


atexit.register(shutdown)


def is_initialized():
    return _State.engine is not None


def _need_init():
    if _State.engine is None:
        raise ValueError("pccl is not initialised: call pccl.init() first")


def rank():
    _need_init()
    return _State.rank


def size():
    _need_init()
    return _State.size


def local_rank():
    _need_init()
    return _State.local_rank


def local_size():
    _need_init()
    return _State.local_size


# ---- buffers: numpy arrays and torch tensors ----

def _numpy_dtypes():
    import numpy as np
    return {np.dtype(np.int8): _n.INT8, np.dtype(np.uint8): _n.UINT8,
            np.dtype(np.int16): _n.INT16, np.dtype(np.uint16): _n.UINT16,
            np.dtype(np.int32): _n.INT32, np.dtype(np.uint32): _n.UINT32,
            np.dtype(np.int64): _n.INT64, np.dtype(np.uint64): _n.UINT64,
            np.dtype(np.float16): _n.FLOAT16, np.dtype(np.float32): _n.FLOAT32,
            np.dtype(np.float64): _n.FLOAT64}


def _torch_dtypes(torch):
    return {torch.int8: _n.INT8, torch.uint8: _n.UINT8, torch.int16: _n.INT16, torch.int32: _n.INT32,
            torch.int64: _n.INT64, torch.float16: _n.FLOAT16, torch.bfloat16: _n.BFLOAT16,
            torch.float32: _n.FLOAT32, torch.float64: _n.FLOAT64}


def _is_torch(x):
    return type(x).__module__.startswith("torch")


class _Buf:
    """A contiguous buffer: its address, elements, pccl dtype and shape."""

    def __init__(self, x, what):
        self.obj = x
        if _is_torch(x):
            import torch
            if x.device.type != "cpu":
                raise ValueError("%s: pccl's Python engine takes CPU tensors, not %s" % (what, x.device))
            if not x.is_contiguous():
                raise ValueError("%s: the tensor is not contiguous (call .contiguous())" % what)
            dtype = _torch_dtypes(torch).get(x.dtype)
            self.ptr, self.count, self.shape = x.data_ptr(), x.numel(), tuple(x.shape)
        else:
            import numpy as np
            if not isinstance(x, np.ndarray):
                raise TypeError("%s: expected a numpy array or a torch tensor, not %s"
                                % (what, type(x).__name__))
            if not x.flags["C_CONTIGUOUS"]:
                raise ValueError("%s: the array is not C-contiguous (np.ascontiguousarray)" % what)
            dtype = _numpy_dtypes().get(x.dtype)
            self.ptr, self.count, self.shape = x.ctypes.data, x.size, tuple(x.shape)
        if dtype is None:
            raise TypeError("%s: pccl has no datatype for %s" % (what, x.dtype))
        self.dtype = dtype


def _empty_like(x, shape):
    if _is_torch(x):
        import torch
        return torch.empty(shape, dtype=x.dtype)
    import numpy as np
    return np.empty(shape, dtype=x.dtype)


def _name(kind, name):
    if name is not None:
        return str(name)
    n = _State.counters.get(kind, 0)
    _State.counters[kind] = n + 1
    return "%s.noname.%d" % (kind, n)


class Handle:
    """A submitted request. wait() returns its output (raising PcclError if
    the request failed); poll() says whether it has completed."""

    def __init__(self, ptr, output, keep):
        self._ptr = ptr
        self._output = output
        self._keep = keep  # the buffers C reads and writes, alive until done
        self._done = False

    def poll(self):
        if self._done:
            return True
        done = ctypes.c_int()
        _check(_n.lib.pccl_handle_test(self._ptr, ctypes.byref(done)))
        return bool(done.value)

    def wait(self):
        if not self._done:
            status = _n.lib.pccl_handle_wait(self._ptr)
            message = _n.lib.pccl_handle_error(self._ptr).decode()
            _n.lib.pccl_handle_free(self._ptr)
            self._ptr, self._keep, self._done = None, None, True
            if status != _n.OK:
                self._output = None
                raise PcclError(status, message)
        return self._output

    def __del__(self):
        if getattr(self, "_ptr", None):  # never waited: the request runs on
            _n.lib.pccl_handle_free(self._ptr)


def _request(kind, coll, name, send, recv, count, dtype, op=_n.SUM, root=0, shape=None):
    shape_arr = None
    ndim = 0
    if shape is not None and 0 < len(shape) <= _n.ENGINE_MAX_DIMS:
        ndim = len(shape)
        shape_arr = (ctypes.c_int64 * ndim)(*shape)
    q = _n.EngineRequest(ctypes.sizeof(_n.EngineRequest), _name(kind, name).encode(), coll,
                         send, recv, count, dtype, op, root, ndim,
                         ctypes.cast(shape_arr, ctypes.POINTER(ctypes.c_int64)) if shape_arr else None)
    return q, shape_arr


def _submit(q, keep, output):
    _need_init()
    h = ctypes.c_void_p()
    _check(_n.lib.pccl_engine_submit(_State.engine, ctypes.byref(q), ctypes.byref(h)))
    return Handle(h, output, keep)


def _op(op):
    if op not in _OPS:
        raise ValueError("unknown op %r: use pccl.Sum, Average, Min, Max or Product" % (op,))
    return _OPS[op]


# ---- all-reduce ----

def _allreduce_request(tensor, output, name, op):
    src = _Buf(tensor, "allreduce")
    dst = _Buf(output, "allreduce output")
    if dst.count != src.count or dst.dtype != src.dtype:
        raise ValueError("allreduce: output must match the input's size and dtype")
    q, shape = _request("allreduce", _n.COLL_ALLREDUCE, name, src.ptr, dst.ptr, src.count,
                        src.dtype, _op(op), 0, src.shape)
    return q, (tensor, output, shape, q)


def allreduce_async(tensor, name=None, op=Average):
    """Reduces `tensor` over the ranks into a new array; returns a Handle."""
    out = _empty_like(tensor, tuple(_Buf(tensor, "allreduce").shape))
    q, keep = _allreduce_request(tensor, out, name, op)
    return _submit(q, keep, out)


def allreduce_async_(tensor, name=None, op=Average):
    """Reduces `tensor` over the ranks in place; returns a Handle."""
    q, keep = _allreduce_request(tensor, tensor, name, op)
    return _submit(q, keep, tensor)


def allreduce(tensor, name=None, op=Average):
    return allreduce_async(tensor, name, op).wait()


def allreduce_(tensor, name=None, op=Average):
    return allreduce_async_(tensor, name, op).wait()


class _GroupHandle:
    def __init__(self, handles):
        self._handles = handles

    def poll(self):
        return all(h.poll() for h in self._handles)

    def wait(self):
        return [h.wait() for h in self._handles]


def _grouped(tensors, outputs, name, op):
    _need_init()
    if not tensors:
        raise ValueError("grouped_allreduce: no tensors")
    base = _name("grouped_allreduce", name)
    reqs, keep = [], []
    for i, (t, o) in enumerate(zip(tensors, outputs)):
        q, k = _allreduce_request(t, o, "%s.%d" % (base, i), op)
        reqs.append(q)
        keep.append(k)
    arr = (_n.EngineRequest * len(reqs))(*reqs)
    hs = (ctypes.c_void_p * len(reqs))()
    _check(_n.lib.pccl_engine_submit_group(_State.engine, arr, len(reqs), hs))
    return _GroupHandle([Handle(ctypes.c_void_p(hs[i]), outputs[i], keep[i])
                         for i in range(len(reqs))])


def grouped_allreduce_async(tensors, name=None, op=Average):
    """All-reduces a list of tensors as one group (ready together, fused
    together); returns a handle whose wait() gives the list of results."""
    tensors = list(tensors)
    outs = [_empty_like(t, _Buf(t, "grouped_allreduce").shape) for t in tensors]
    return _grouped(tensors, outs, name, op)


def grouped_allreduce_async_(tensors, name=None, op=Average):
    tensors = list(tensors)
    return _grouped(tensors, tensors, name, op)


def grouped_allreduce(tensors, name=None, op=Average):
    return grouped_allreduce_async(tensors, name, op).wait()


def grouped_allreduce_(tensors, name=None, op=Average):
    return grouped_allreduce_async_(tensors, name, op).wait()


# ---- all-gather and reduce-scatter (along the first dimension) ----

def allgather_async(tensor, name=None):
    """Concatenates every rank's `tensor` along the first dimension (all
    ranks pass the same shape); returns a Handle."""
    _need_init()
    src = _Buf(tensor, "allgather")
    shape = src.shape if src.shape else (1,)
    out = _empty_like(tensor, (shape[0] * _State.size,) + tuple(shape[1:]))
    dst = _Buf(out, "allgather output")
    q, sh = _request("allgather", _n.COLL_ALLGATHER, name, src.ptr, dst.ptr, src.count, src.dtype,
                     shape=src.shape)
    return _submit(q, (tensor, out, sh, q), out)


def allgather(tensor, name=None):
    return allgather_async(tensor, name).wait()


def reduce_scatter_async(tensor, name=None, op=Average):
    """Reduces `tensor` over the ranks and gives rank r the r-th of `size`
    equal slices along the first dimension, which `size` must divide."""
    _need_init()
    src = _Buf(tensor, "reduce_scatter")
    p = _State.size
    if not src.shape or src.shape[0] % p:
        raise ValueError("reduce_scatter: the first dimension (%s) is not a multiple of %d ranks"
                         % (src.shape[0] if src.shape else "none", p))
    out = _empty_like(tensor, (src.shape[0] // p,) + tuple(src.shape[1:]))
    dst = _Buf(out, "reduce_scatter output")
    q, sh = _request("reduce_scatter", _n.COLL_REDUCE_SCATTER, name, src.ptr, dst.ptr, dst.count,
                     src.dtype, _op(op), shape=dst.shape)
    return _submit(q, (tensor, out, sh, q), out)


def reduce_scatter(tensor, name=None, op=Average):
    return reduce_scatter_async(tensor, name, op).wait()


# ---- broadcast ----

def _broadcast(tensor, output, root_rank, name):
    _need_init()
    if not 0 <= int(root_rank) < _State.size:
        raise ValueError("broadcast: root_rank %r is not a rank of 0..%d" % (root_rank, _State.size - 1))
    src = _Buf(tensor, "broadcast")
    dst = _Buf(output, "broadcast output")
    q, sh = _request("broadcast", _n.COLL_BROADCAST, name, src.ptr, dst.ptr, src.count, src.dtype,
                     root=int(root_rank), shape=src.shape)
    return _submit(q, (tensor, output, sh, q), output)


def broadcast_async(tensor, root_rank, name=None):
    """Every rank gets root_rank's `tensor`, in a new array; returns a Handle."""
    return _broadcast(tensor, _empty_like(tensor, _Buf(tensor, "broadcast").shape), root_rank, name)


def broadcast_async_(tensor, root_rank, name=None):
    return _broadcast(tensor, tensor, root_rank, name)


def broadcast(tensor, root_rank, name=None):
    return broadcast_async(tensor, root_rank, name).wait()


def broadcast_(tensor, root_rank, name=None):
    return broadcast_async_(tensor, root_rank, name).wait()


# ---- the engine's counters ----

def stats():
    """The engine's counters on this rank (pccl_engine_stats_t) as a dict."""
    _need_init()
    s = _n.EngineStats()
    s.size = ctypes.sizeof(s)
    _check(_n.lib.pccl_engine_stats(_State.engine, ctypes.byref(s)))
    return {f: getattr(s, f) for f, _ in _n.EngineStats._fields_ if f != "size"}


def last_warning():
    """Rank 0's last stall warning ('' elsewhere and when none)."""
    _need_init()
    buf = ctypes.create_string_buffer(1024)
    _check(_n.lib.pccl_engine_last_warning(_State.engine, buf, len(buf)))
    return buf.value.decode()

