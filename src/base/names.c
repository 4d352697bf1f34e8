/* names.c - status strings, names and sizes of datatypes, ops and
 * collectives, and the version. Needs no MPI, so unit tests link it. */
#include "pccl.h"

const char *pccl_status_string(pccl_status_t status) {
  static const char *const names[] = {
      "success",
      "invalid argument",
      "invalid datatype",
      "invalid reduction operation",
      "size overflow",
      "out of memory",
      "MPI error",
      "invalid or destroyed communicator",
      "invalid configuration",
      "unsupported",
      "internal error",
      "corrupted compressed data",
      "timed out",
      "ranks disagree",
      "aborted",
  };
  if ((unsigned)status < sizeof(names) / sizeof(names[0])) return names[status];
  return "unknown status";
}

const char *pccl_dtype_name(pccl_dtype_t dtype) {
  static const char *const names[PCCL_DTYPE_COUNT] = {
      "int8",  "uint8",     "int32",      "uint32",    "int64",     "uint64",
      "float16", "bfloat16", "float32",  "float64",   "int16",     "uint16",
      "bool",  "float_int", "double_int", "int64_int", "int32_int", "int16_int"};
  return (unsigned)dtype < PCCL_DTYPE_COUNT ? names[dtype] : "unknown";
}

size_t pccl_dtype_size(pccl_dtype_t dtype) {
  static const size_t sizes[PCCL_DTYPE_COUNT] = {
      1, 1, 4, 4, 8, 8, 2, 2, 4, 8, 2, 2, 1, sizeof(pccl_float_int_t), sizeof(pccl_double_int_t),
      sizeof(pccl_int64_int_t), sizeof(pccl_int32_int_t), sizeof(pccl_int16_int_t)};
  return (unsigned)dtype < PCCL_DTYPE_COUNT ? sizes[dtype] : 0;
}

const char *pccl_op_name(pccl_op_t op) {
  static const char *const names[PCCL_OP_COUNT] = {
      "sum", "prod", "min", "max", "avg", "land", "lor", "lxor", "band", "bor", "bxor", "maxloc",
      "minloc"};
  return (unsigned)op < PCCL_OP_COUNT ? names[op] : "unknown";
}

const char *pccl_coll_name(pccl_coll_t coll) {
  static const char *const names[PCCL_COLL_COUNT] = {
      "allgather", "reducescatter", "allreduce", "broadcast", "reduce", "scatter", "gather", "alltoall",
      "scan", "exscan", "allgatherv", "reducescatterv", "gatherv", "scatterv", "alltoallv"};
  return (unsigned)coll < PCCL_COLL_COUNT ? names[coll] : "unknown";
}

uint32_t pccl_version(void) { return PCCL_VERSION_NUMBER; }
