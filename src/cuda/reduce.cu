/* reduce.cu - the reduction and AVG-division kernels on the device, one per
 * (datatype, op), instantiated from elem.h's element macros (the very ones
 * the CPU loops expand), so GPU and CPU results are identical bit for bit.
 *
 * Memory-bound: each thread moves 16 bytes of each operand at a time when
 * the three pointers allow it (aligned to 16), in a grid-stride loop; the
 * rest, and misaligned buffers, go element by element. */
#include <stdint.h>

#include "elem.h"
#include "gpu_internal.cuh"

/* Element functors: F::T is the storage type, F::op(x, y) the result. */
#define FUNCTOR(name, tag, C, EXPR) \
  struct name##_##tag { typedef C T; __device__ static C op(C x, C y) { return EXPR; } };
#define DIV_FUNCTOR(tag, C, EXPR) \
  struct div_##tag { typedef C T; __device__ static C op(C x, int d) { return EXPR; } };

#define NATIVE_OPS(tag, C, W)                                              \
  FUNCTOR(sum, tag, C, PCCL_ELEM_NATIVE(C, W, PCCL_OP_SUM, x, y))          \
  FUNCTOR(prod, tag, C, PCCL_ELEM_NATIVE(C, W, PCCL_OP_PROD, x, y))        \
  FUNCTOR(min, tag, C, PCCL_ELEM_NATIVE(C, C, PCCL_OP_MIN, x, y))          \
  FUNCTOR(max, tag, C, PCCL_ELEM_NATIVE(C, C, PCCL_OP_MAX, x, y))          \
  FUNCTOR(land, tag, C, PCCL_ELEM_LOGICAL(C, PCCL_OP_LAND, x, y))          \
  FUNCTOR(lor, tag, C, PCCL_ELEM_LOGICAL(C, PCCL_OP_LOR, x, y))            \
  FUNCTOR(lxor, tag, C, PCCL_ELEM_LOGICAL(C, PCCL_OP_LXOR, x, y))          \
  FUNCTOR(band, tag, C, PCCL_ELEM_NATIVE(C, W, PCCL_OP_BAND, x, y))        \
  FUNCTOR(bor, tag, C, PCCL_ELEM_NATIVE(C, W, PCCL_OP_BOR, x, y))          \
  FUNCTOR(bxor, tag, C, PCCL_ELEM_NATIVE(C, W, PCCL_OP_BXOR, x, y))        \
  DIV_FUNCTOR(tag, C, PCCL_DIV_NATIVE(C, x, d))

#define FLOAT_OPS(tag, C, W)                                                     \
  FUNCTOR(sum, tag, C, PCCL_ELEM_FLOAT(PCCL_CANON_##tag, PCCL_OP_SUM, x, y))     \
  FUNCTOR(prod, tag, C, PCCL_ELEM_FLOAT(PCCL_CANON_##tag, PCCL_OP_PROD, x, y))   \
  FUNCTOR(min, tag, C, PCCL_ELEM_FLOAT(PCCL_PICK, PCCL_OP_MIN, x, y))            \
  FUNCTOR(max, tag, C, PCCL_ELEM_FLOAT(PCCL_PICK, PCCL_OP_MAX, x, y))            \
  DIV_FUNCTOR(tag, C, PCCL_DIV_FLOAT(PCCL_CANON_##tag, x, d))

#define HALF_ELEM(tag, FROM, OP, x, y) PCCL_ELEM_HALF(PCCL_TO_F32_##tag, FROM, OP, x, y)
#define HALF_OPS(tag, C, W)                                                            \
  FUNCTOR(sum, tag, C, HALF_ELEM(tag, PCCL_FROM_F32_CANON_##tag, PCCL_OP_SUM, x, y))   \
  FUNCTOR(prod, tag, C, HALF_ELEM(tag, PCCL_FROM_F32_CANON_##tag, PCCL_OP_PROD, x, y)) \
  FUNCTOR(min, tag, C, HALF_ELEM(tag, PCCL_FROM_F32_##tag, PCCL_OP_MIN, x, y))         \
  FUNCTOR(max, tag, C, HALF_ELEM(tag, PCCL_FROM_F32_##tag, PCCL_OP_MAX, x, y))         \
  DIV_FUNCTOR(tag, C, PCCL_DIV_HALF(PCCL_TO_F32_##tag, PCCL_FROM_F32_CANON_##tag, x, d))

#define BOOL_OPS(tag, C, W)                                       \
  FUNCTOR(land, tag, C, PCCL_ELEM_LOGICAL(C, PCCL_OP_LAND, x, y)) \
  FUNCTOR(lor, tag, C, PCCL_ELEM_LOGICAL(C, PCCL_OP_LOR, x, y))   \
  FUNCTOR(lxor, tag, C, PCCL_ELEM_LOGICAL(C, PCCL_OP_LXOR, x, y))

#define PAIR_OPS(tag, C, W)                                   \
  FUNCTOR(maxloc, tag, C, PCCL_ELEM_PAIR(MAXLOC, x, y))       \
  FUNCTOR(minloc, tag, C, PCCL_ELEM_PAIR(MINLOC, x, y))

#define OPS(tag, C, W, kind) kind##_OPS(tag, C, W)
PCCL_DTYPE_MAP(OPS)

/* 16 bytes of T, loaded and stored as one vector. */
template <typename T>
union vec16 {
  uint4 v;
  T e[16 / sizeof(T)];
};

template <typename F>
__global__ void reduce_vec(uint4 *dst, const uint4 *a, const uint4 *b, size_t nvec) {
  typedef typename F::T T;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < nvec; i += (size_t)gridDim.x * blockDim.x) {
    vec16<T> x, y, r;
    x.v = a[i];
    y.v = b[i];
#pragma unroll
    for (int k = 0; k < (int)(16 / sizeof(T)); k++) r.e[k] = F::op(x.e[k], y.e[k]);
    dst[i] = r.v;
  }
}

template <typename F>
__global__ void reduce_elem(typename F::T *dst, const typename F::T *a, const typename F::T *b, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    dst[i] = F::op(a[i], b[i]);
}

template <typename F>
__global__ void divide_elem(typename F::T *dst, size_t n, int divisor) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    dst[i] = F::op(dst[i], divisor);
}

static int aligned16(const void *p) { return ((uintptr_t)p & 15u) == 0; }

template <typename F>
static pccl_status_t launch_reduce(void *dst, const void *a, const void *b, size_t n, cudaStream_t s) {
  typedef typename F::T T;
  const size_t per = 16 / sizeof(T);
  size_t nvec = aligned16(dst) && aligned16(a) && aligned16(b) ? n / per : 0;
  if (nvec)
    reduce_vec<F><<<pccl_gpu_blocks(nvec), PCCL_GPU_THREADS, 0, s>>>((uint4 *)dst, (const uint4 *)a,
                                                                     (const uint4 *)b, nvec);
  size_t done = nvec * per;
  if (done < n)
    reduce_elem<F><<<pccl_gpu_blocks(n - done), PCCL_GPU_THREADS, 0, s>>>(
        (T *)dst + done, (const T *)a + done, (const T *)b + done, n - done);
  return pccl_gpu_launched("the reduction kernel's launch");
}

template <typename F>
static pccl_status_t launch_divide(void *dst, size_t n, int divisor, cudaStream_t s) {
  divide_elem<F><<<pccl_gpu_blocks(n), PCCL_GPU_THREADS, 0, s>>>((typename F::T *)dst, n, divisor);
  return pccl_gpu_launched("the division kernel's launch");
}

typedef pccl_status_t (*reduce_launch_t)(void *, const void *, const void *, size_t, cudaStream_t);
typedef pccl_status_t (*divide_launch_t)(void *, size_t, int, cudaStream_t);

/* Rows follow pccl_dtype_t, columns pccl_op_t as the CPU table (AVG: the
 * sum; NULL where the op is not defined on the type). */
#define L(name, tag) launch_reduce<name##_##tag>
#define ROW_NATIVE(tag)                                                                            \
  {L(sum, tag), L(prod, tag), L(min, tag), L(max, tag), L(sum, tag), L(land, tag), L(lor, tag), \
   L(lxor, tag), L(band, tag), L(bor, tag), L(bxor, tag), NULL, NULL},
#define ROW_FLOAT(tag) {L(sum, tag), L(prod, tag), L(min, tag), L(max, tag), L(sum, tag)},
#define ROW_HALF ROW_FLOAT
#define ROW_BOOL(tag) {NULL, NULL, NULL, NULL, NULL, L(land, tag), L(lor, tag), L(lxor, tag)},
#define ROW_PAIR(tag) \
  {NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, L(maxloc, tag), L(minloc, tag)},
#define ROW(tag, C, W, kind) ROW_##kind(tag)
static const reduce_launch_t reduce_table[PCCL_DTYPE_COUNT][PCCL_OP_COUNT] = {PCCL_DTYPE_MAP(ROW)};
#define DIVIDE_NATIVE(tag) launch_divide<div_##tag>,
#define DIVIDE_FLOAT DIVIDE_NATIVE
#define DIVIDE_HALF DIVIDE_NATIVE
#define DIVIDE_BOOL(tag) NULL,
#define DIVIDE_PAIR DIVIDE_BOOL
#define DIVIDE_ROW(tag, C, W, kind) DIVIDE_##kind(tag)
static const divide_launch_t divide_table[PCCL_DTYPE_COUNT] = {PCCL_DTYPE_MAP(DIVIDE_ROW)};

extern "C" pccl_status_t pccl__gpu_reduce(void *dst, const void *a, const void *b, size_t n,
                                          pccl_dtype_t dtype, pccl_op_t op, void *stream) {
  if ((unsigned)dtype >= PCCL_DTYPE_COUNT || (unsigned)op >= PCCL_OP_COUNT || !reduce_table[dtype][op])
    return PCCL_ERR_INVALID_ARGUMENT;
  if (n == 0) return PCCL_OK;
  pccl_gpu_clear();
  return reduce_table[dtype][op](dst, a, b, n, (cudaStream_t)stream);
}

extern "C" pccl_status_t pccl__gpu_divide(void *dst, size_t n, pccl_dtype_t dtype, int divisor,
                                          void *stream) {
  if ((unsigned)dtype >= PCCL_DTYPE_COUNT || !divide_table[dtype] || divisor == 0)
    return PCCL_ERR_INVALID_ARGUMENT;
  if (n == 0) return PCCL_OK;
  pccl_gpu_clear();
  return divide_table[dtype](dst, n, divisor, (cudaStream_t)stream);
}
