/* permute.cu - the in-place block permutation of permuted recursive
 * multiplying on the device. The cycles come from pccl_perm_cycles (the
 * CPU's, kernels.h), so both sides apply the same permutation; the CPU
 * rotates each cycle through one scratch block, while here every unit
 * (16, 4 or 1 bytes) at one offset inside the blocks is its own small
 * permutation, rotated in a register by one thread: no scratch at all. */
#include <stdint.h>

#include "gpu_internal.cuh"

template <typename U>
__global__ void permute_units(U *base, size_t units_per_block, const uint32_t *cycles, size_t nwords) {
  for (size_t j = blockIdx.x * (size_t)blockDim.x + threadIdx.x; j < units_per_block;
       j += (size_t)gridDim.x * blockDim.x) {
    for (size_t w = 0; w < nwords;) {
      uint32_t len = cycles[w];
      const uint32_t *c = cycles + w + 1;
      U first = base[c[0] * units_per_block + j];
      for (uint32_t k = 0; k + 1 < len; k++) base[c[k] * units_per_block + j] = base[c[k + 1] * units_per_block + j];
      base[c[len - 1] * units_per_block + j] = first;
      w += (size_t)len + 1;
    }
  }
}

template <typename U>
static pccl_status_t launch(void *base, size_t block_bytes, const uint32_t *cycles, size_t nwords,
                            cudaStream_t s) {
  size_t units = block_bytes / sizeof(U);
  permute_units<U><<<pccl_gpu_blocks(units), PCCL_GPU_THREADS, 0, s>>>((U *)base, units, cycles, nwords);
  return pccl_gpu_launched("the permutation kernel's launch");
}

extern "C" pccl_status_t pccl__gpu_permute(void *base, size_t block_bytes, const uint32_t *cycles,
                                           size_t nwords, void *stream) {
  if (nwords == 0 || block_bytes == 0) return PCCL_OK;
  cudaStream_t s = (cudaStream_t)stream;
  pccl_gpu_clear();
  uintptr_t at = (uintptr_t)base;
  if (block_bytes % 16 == 0 && at % 16 == 0) return launch<uint4>(base, block_bytes, cycles, nwords, s);
  if (block_bytes % 4 == 0 && at % 4 == 0) return launch<uint32_t>(base, block_bytes, cycles, nwords, s);
  return launch<uint8_t>(base, block_bytes, cycles, nwords, s);
}
