/* gpu.h - pccl's CUDA layer as the C code sees it: whether a device is
 * usable, where a pointer lives, and the device kernels (reduction, the AVG
 * division, copies, the in-place block permutation), each enqueued on a
 * stream. Implemented in the .cu files of this directory; present only in
 * builds with CUDA (PCCL_HAVE_CUDA). Streams are cudaStream_t passed as
 * void *, so C files need no CUDA header; NULL is the legacy default stream.
 *
 * Every function returns PCCL_OK or a status whose detail (the CUDA error
 * and what was being done) pccl__gpu_last_error() gives, per thread. */
#ifndef PCCL_GPU_H
#define PCCL_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "pccl.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Devices this process can use: 0 when the driver, the device or the
 * permission is missing, or PCCL_CUDA=0; asked once, then remembered. */
int pccl__gpu_devices(void);
/* Why pccl__gpu_devices() is 0 ("" when it is not). */
const char *pccl__gpu_why_none(void);

/* 1 when p is device (or managed) memory, 0 for host memory, -1 when CUDA
 * fails to tell (pccl__gpu_last_error says why). Host memory without
 * asking CUDA about p whenever pccl__gpu_devices() is 0 or no device's
 * primary context is active (CUDA's runtime allocates only inside one). */
int pccl__gpu_is_device(const void *p);

const char *pccl__gpu_last_error(void);

/* dst[i] = a[i] op b[i] for n elements (AVG: SUM), bit for bit what the CPU
 * kernel (kernels.h) computes; dst may be a or b. */
pccl_status_t pccl__gpu_reduce(void *dst, const void *a, const void *b, size_t n,
                               pccl_dtype_t dtype, pccl_op_t op, void *stream);
/* dst[i] = dst[i] / divisor in the type's arithmetic (the AVG op's end). */
pccl_status_t pccl__gpu_divide(void *dst, size_t n, pccl_dtype_t dtype, int divisor, void *stream);
/* bytes from src to dst, any of host, device or peer memory. */
pccl_status_t pccl__gpu_copy(void *dst, const void *src, size_t bytes, void *stream);
/* The blocks of block_bytes at base reordered in place by cycles in
 * pccl_perm_cycles's format (kernels.h), which must lie in device memory:
 * every byte offset of a block is its own small permutation, so no scratch
 * block is needed. */
pccl_status_t pccl__gpu_permute(void *base, size_t block_bytes, const uint32_t *cycles,
                                size_t nwords, void *stream);
/* Waits until everything enqueued on stream has run. */
pccl_status_t pccl__gpu_sync(void *stream);

/* Waits until everything on the current device has run. */
pccl_status_t pccl__gpu_device_sync(void);

/* Device memory for pccl's own buffers (not on a collective's path). */
pccl_status_t pccl__gpu_alloc(void **p, size_t bytes);
void pccl__gpu_free(void *p);
/* Page-locked host memory, for staging messages of device buffers. */
pccl_status_t pccl__gpu_host_alloc(void **p, size_t bytes);
void pccl__gpu_host_free(void *p);
/* Pins (and unpins) ordinary host memory: copies to and from it run at
 * the page-locked rate, and other processes can still read it by
 * cross-memory attach, which memory the driver maps may refuse. */
pccl_status_t pccl__gpu_host_register(void *p, size_t bytes);
void pccl__gpu_host_unregister(void *p);
/* A stream of pccl's own, not synchronized with the legacy default one. */
pccl_status_t pccl__gpu_stream_create(void **stream);
void pccl__gpu_stream_destroy(void *stream);

#ifdef __cplusplus
}
#endif

#endif /* PCCL_GPU_H */
