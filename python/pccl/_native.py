"""ctypes declarations of libpccl's C API (include/pccl.h) for the engine.

The library is found through PCCL_LIBRARY (a path), else in the build tree
beside this package (build/lib/libpccl.so), else at the path make install
wrote into _installed.py, else where the dynamic linker looks. It is loaded RTLD_GLOBAL so that the MPI
library it pulls in can load its own plugins.
"""
import ctypes
import ctypes.util
import os

# pccl_status_t, by value
OK = 0
STATUS = ["PCCL_OK", "PCCL_ERR_INVALID_ARGUMENT", "PCCL_ERR_INVALID_DTYPE", "PCCL_ERR_INVALID_OP",
          "PCCL_ERR_OVERFLOW", "PCCL_ERR_NO_MEMORY", "PCCL_ERR_MPI", "PCCL_ERR_INVALID_COMM",
          "PCCL_ERR_CONFIG", "PCCL_ERR_UNSUPPORTED", "PCCL_ERR_INTERNAL", "PCCL_ERR_CORRUPT",
          "PCCL_ERR_TIMEOUT", "PCCL_ERR_MISMATCH", "PCCL_ERR_ABORTED"]

# pccl_dtype_t
(INT8, UINT8, INT32, UINT32, INT64, UINT64, FLOAT16, BFLOAT16, FLOAT32, FLOAT64, INT16, UINT16, BOOL,
 FLOAT_INT, DOUBLE_INT, INT64_INT, INT32_INT, INT16_INT) = range(18)
# pccl_op_t
SUM, PROD, MIN, MAX, AVG, LAND, LOR, LXOR, BAND, BOR, BXOR, MAXLOC, MINLOC = range(13)
# pccl_coll_t (the engine takes these four)
COLL_ALLGATHER, COLL_REDUCE_SCATTER, COLL_ALLREDUCE, COLL_BROADCAST = 0, 1, 2, 3

ENGINE_MAX_DIMS = 8


class EngineConfig(ctypes.Structure):
    _fields_ = [
        ("size", ctypes.c_size_t),
        ("cycle_ms", ctypes.c_double),
        ("fusion_bytes", ctypes.c_int64),
        ("cache_capacity", ctypes.c_int64),
        ("stall_seconds", ctypes.c_double),
        ("timeline", ctypes.c_char_p),
    ]


class EngineRequest(ctypes.Structure):
    _fields_ = [
        ("size", ctypes.c_size_t),
        ("name", ctypes.c_char_p),
        ("coll", ctypes.c_int),
        ("sendbuf", ctypes.c_void_p),
        ("recvbuf", ctypes.c_void_p),
        ("count", ctypes.c_size_t),
        ("dtype", ctypes.c_int),
        ("op", ctypes.c_int),
        ("root", ctypes.c_int32),
        ("ndim", ctypes.c_int32),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
    ]


class EngineStats(ctypes.Structure):
    _fields_ = [
        ("size", ctypes.c_size_t),
        ("cycles", ctypes.c_uint64),
        ("coordinator_cycles", ctypes.c_uint64),
        ("cache_hits", ctypes.c_uint64),
        ("negotiated", ctypes.c_uint64),
        ("coordination_bytes", ctypes.c_uint64),
        ("coordination_seconds", ctypes.c_double),
        ("collectives", ctypes.c_uint64),
        ("tensors", ctypes.c_uint64),
        ("fused_tensors", ctypes.c_uint64),
        ("stall_warnings", ctypes.c_uint64),
    ]


def _find_library():
    explicit = os.environ.get("PCCL_LIBRARY")
    if explicit:
        if not os.path.exists(explicit):
            raise OSError("PCCL_LIBRARY=%s: no such file" % explicit)
        return explicit
    here = os.path.dirname(os.path.abspath(__file__))
    in_tree = os.path.join(here, "..", "..", "build", "lib", "libpccl.so")
    if os.path.exists(in_tree):
        return os.path.normpath(in_tree)
    try:
        from ._installed import LIBRARY  # written by make install
    except ImportError:
        LIBRARY = None
    if LIBRARY is not None:
        if not os.path.exists(LIBRARY):
            raise OSError("%s: no such file (named by the installed package's _installed.py; "
                          "reinstall pccl or set PCCL_LIBRARY)" % LIBRARY)
        return LIBRARY
    found = ctypes.util.find_library("pccl")
    if found:
        return found
    raise OSError("libpccl.so not found: build pccl (make), install it, or set PCCL_LIBRARY")


def _declare(lib):
    vp, sz, i32, st = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int
    pvp = ctypes.POINTER(vp)
    sigs = {
        "pccl_status_string": (ctypes.c_char_p, [st]),
        "pccl_last_error": (ctypes.c_char_p, [vp]),
        "pccl_comm_create_world": (st, [pvp]),
        "pccl_comm_destroy": (st, [vp]),
        "pccl_finalize": (st, []),
        "pccl_comm_rank": (st, [vp, ctypes.POINTER(i32)]),
        "pccl_comm_size": (st, [vp, ctypes.POINTER(i32)]),
        "pccl_comm_local_rank": (st, [vp, ctypes.POINTER(i32)]),
        "pccl_comm_local_size": (st, [vp, ctypes.POINTER(i32)]),
        "pccl_comm_create_group": (st, [vp, i32, ctypes.POINTER(i32), pvp]),
        "pccl_comm_set_timeout": (st, [vp, ctypes.c_double]),
        "pccl_comm_abort": (st, [vp]),
        "pccl_comm_last_algo": (ctypes.c_char_p, [vp]),
        "pccl_allgather": (st, [vp, vp, sz, i32, vp]),
        "pccl_reduce_scatter": (st, [vp, vp, sz, i32, i32, vp]),
        "pccl_allreduce": (st, [vp, vp, sz, i32, i32, vp]),
        "pccl_broadcast": (st, [vp, vp, sz, i32, i32, vp]),
        "pccl_reduce": (st, [vp, vp, sz, i32, i32, i32, vp]),
        "pccl_scatter": (st, [vp, vp, sz, i32, i32, vp]),
        "pccl_gather": (st, [vp, vp, sz, i32, i32, vp]),
        "pccl_alltoall": (st, [vp, vp, sz, i32, vp]),
        "pccl_engine_create": (st, [vp, ctypes.POINTER(EngineConfig), pvp]),
        "pccl_engine_submit": (st, [vp, ctypes.POINTER(EngineRequest), pvp]),
        "pccl_engine_submit_group": (st, [vp, ctypes.POINTER(EngineRequest), i32, pvp]),
        "pccl_handle_wait": (st, [vp]),
        "pccl_handle_test": (st, [vp, ctypes.POINTER(i32)]),
        "pccl_handle_error": (ctypes.c_char_p, [vp]),
        "pccl_handle_free": (st, [vp]),
        "pccl_engine_stats": (st, [vp, ctypes.POINTER(EngineStats)]),
        "pccl_engine_last_warning": (st, [vp, ctypes.c_char_p, sz]),
        "pccl_engine_destroy": (st, [vp]),
    }
    for name, (res, args) in sigs.items():
        fn = getattr(lib, name)
        fn.restype = res
        fn.argtypes = args
    return lib  # ctypes.CDLL releases the GIL during each call: waits block no thread


lib = _declare(ctypes.CDLL(_find_library(), mode=ctypes.RTLD_GLOBAL))


def status_name(status):
    """The enum name, e.g. PCCL_ERR_MISMATCH."""
    return STATUS[status] if 0 <= status < len(STATUS) else "PCCL_STATUS_%d" % status


def status_string(status):
    """pccl's description, e.g. 'ranks disagree'."""
    return lib.pccl_status_string(status).decode()
