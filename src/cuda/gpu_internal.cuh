/* gpu_internal.cuh - what the .cu files of pccl's CUDA layer share: the
 * failure recorder and the launch shape of the element-wise kernels. */
#ifndef PCCL_GPU_INTERNAL_CUH
#define PCCL_GPU_INTERNAL_CUH

#include <cuda_runtime.h>

#include "gpu.h"

/* Records "what: CUDA's message" for pccl__gpu_last_error and maps e to a
 * status (out of memory, else internal). */
pccl_status_t pccl__gpu_fail(cudaError_t e, const char *what);

#define PCCL_GPU_THREADS 256
/* Grid-stride loops: enough blocks to fill any current GPU many times over,
 * few enough that each thread does several units (more loads in flight). */
#define PCCL_GPU_MAX_BLOCKS 4096

static inline unsigned pccl_gpu_blocks(size_t units) {
  size_t b = (units + PCCL_GPU_THREADS - 1) / PCCL_GPU_THREADS;
  return (unsigned)(b < 1 ? 1 : b > PCCL_GPU_MAX_BLOCKS ? PCCL_GPU_MAX_BLOCKS : b);
}

/* Before a launch: drops an earlier, unrelated error the runtime still
 * holds, so that the check after it reports the launch's own. */
static inline void pccl_gpu_clear(void) { cudaGetLastError(); }

/* After a launch: the launch's own error, if any. */
static inline pccl_status_t pccl_gpu_launched(const char *what) {
  cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? PCCL_OK : pccl__gpu_fail(e, what);
}

#endif /* PCCL_GPU_INTERNAL_CUH */
