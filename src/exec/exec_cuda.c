/* exec_cuda.c - the executor's local steps on device buffers: reduction,
 * copy, the AVG division and the block permutation as CUDA kernels
 * (src/cuda/gpu.h) on the call's stream. Each waits for its kernel, since
 * the executor starts what depends on a local step as soon as it returns
 * (a send may read the result at once). Built only with CUDA. */
#include "exec.h"
#include "gpu.h"

static pccl_status_t done(const pccl_exec_t *x, pccl_status_t st) {
  return st == PCCL_OK ? pccl__gpu_sync(x->device->stream) : st;
}

static pccl_status_t cuda_reduce(const pccl_exec_t *x, void *dst, const void *a, const void *b,
                                 size_t n) {
  const pccl_exec_device_t *d = x->device;
  return done(x, pccl__gpu_reduce(dst, a, b, n, d->dtype, d->op, d->stream));
}

/* CUDA's copies do not take overlapping ranges (the CPU's memmove does);
 * no generator writes such a copy, and one would be a bug to report. */
static pccl_status_t cuda_copy(const pccl_exec_t *x, void *dst, const void *src, size_t bytes) {
  const char *d = dst, *s = src;
  if (d != s && d < s + bytes && s < d + bytes) return PCCL_ERR_INTERNAL;
  return done(x, pccl__gpu_copy(dst, src, bytes, x->device->stream));
}

static pccl_status_t cuda_divide(const pccl_exec_t *x, void *dst, size_t n, int divisor) {
  return done(x, pccl__gpu_divide(dst, n, x->device->dtype, divisor, x->device->stream));
}

/* No scratch block: the device kernel rotates each cycle in registers. */
static pccl_status_t cuda_permute(const pccl_exec_t *x, const pccl_step_t *st) {
  if (!x->device->perm) return PCCL_ERR_INTERNAL;
  char *base = x->buf[st->dst.buf] + st->dst.off * x->elem_size;
  return done(x, pccl__gpu_permute(base, st->src.len * x->elem_size, x->device->perm + st->tag + 1,
                                   x->sched->perm[st->tag], x->device->stream));
}

const pccl_exec_local_t pccl__exec_cuda_local = {cuda_reduce, cuda_copy, cuda_divide, cuda_permute};
