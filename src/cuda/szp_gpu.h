/* szp_gpu.h - the szp codec on a CUDA device (src/cuda/szp.cu). Its streams
 * are byte for byte those of pccl_compress(PCCL_CODEC_SZP, ...), header
 * included, and it decodes any stream pccl_compress writes: both run the
 * block coder of src/compress/szp_block.h. C-callable without CUDA headers;
 * a stream argument is a cudaStream_t passed as void * (NULL: the default
 * stream). Every call is synchronous with respect to the host: it returns
 * once the stream has done its work. The workspace holds everything a call
 * needs, so no call allocates; one workspace serves one call at a time. */
#ifndef PCCL_CUDA_SZP_GPU_H
#define PCCL_CUDA_SZP_GPU_H

#include <stddef.h>

#include "pccl.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pccl_cuda_szp_ws pccl_cuda_szp_ws_t;

/* Allocates a workspace for calls of up to max_count elements on the
 * current device. Returns PCCL_ERR_INVALID_ARGUMENT (ws NULL, max_count too
 * large), PCCL_ERR_NO_MEMORY, or PCCL_ERR_UNSUPPORTED (no usable device). */
pccl_status_t pccl_cuda_szp_ws_create(size_t max_count, pccl_cuda_szp_ws_t **ws);

/* Frees a workspace; NULL is ignored. */
void pccl_cuda_szp_ws_destroy(pccl_cuda_szp_ws_t *ws);

/* Compresses count elements of dtype (float16/bfloat16/float32/float64) at
 * src_dev with absolute error bound `bound` into dst_dev (cap bytes, device
 * memory; pccl_compress_bound(PCCL_CODEC_SZP, count, dtype) always
 * suffices); *size_out (host) gets the stream's length. Returns
 * PCCL_ERR_INVALID_DTYPE, PCCL_ERR_INVALID_ARGUMENT (NULL or misaligned
 * pointer, bound not positive and finite, count above the workspace's
 * max_count, cap too small: dst_dev then holds no stream), or
 * PCCL_ERR_INTERNAL (a CUDA error, named in pccl__thread_error()). */
pccl_status_t pccl_cuda_szp_compress(const void *src_dev, size_t count, pccl_dtype_t dtype,
                                     double bound, void *dst_dev, size_t cap, size_t *size_out,
                                     pccl_cuda_szp_ws_t *ws, void *stream);

/* Decodes the stream of `size` bytes at src_dev into dst_dev (count
 * elements of dtype, device memory). The whole layout is validated before
 * anything is written; nothing outside src_dev[0, size) is read nor outside
 * dst_dev's count elements written. Returns PCCL_ERR_CORRUPT (not an szp
 * stream, truncated or damaged: dst_dev untouched), PCCL_ERR_INVALID_ARGUMENT
 * (NULL or misaligned pointer, count/dtype other than the stream's, count
 * above the workspace's max_count) or PCCL_ERR_INTERNAL (a CUDA error). */
pccl_status_t pccl_cuda_szp_decompress(const void *src_dev, size_t size, void *dst_dev,
                                       size_t count, pccl_dtype_t dtype, pccl_cuda_szp_ws_t *ws,
                                       void *stream);

#ifdef __cplusplus
}
#endif

#endif /* PCCL_CUDA_SZP_GPU_H */
