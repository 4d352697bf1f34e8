/* szp.cu - the szp codec on a CUDA device (API in szp_gpu.h), writing the
 * streams of the CPU codec byte for byte: every block goes through the same
 * PCCL_HD functions (src/compress/szp_block.h).
 *
 * One thread codes one szp block of 32 elements; a CTA of SZP_THREADS
 * threads is a tile. Each kernel first copies its tile's elements into
 * shared memory with coalesced loads, each szp block padded so that the
 * threads of a warp, reading one element of their own block each, hit
 * distinct banks (decoding runs the copy the other way).
 *
 * Compress: (1) measure: codes go straight into the stream, and each tile's
 * data bytes into tile_sums; (2) scan: one CTA turns tile_sums into each
 * tile's data offset and the total; (3) write: each tile scans its blocks'
 * sizes (from their codes) and every thread writes its block at its offset,
 * thread 0 the container header; nothing is written when the total would
 * pass cap. Decompress: (1) sizes from the codes (every code is valid) per
 * tile, (2) the same scan, (3) decode, only when the blocks account for the
 * payload exactly, so the layout is validated before anything is written
 * and no block reads past the stream. The host then reads the total back:
 * one synchronization per call, no allocation. */
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

extern "C" {
#include "codec.h"
#include "errmsg.h"
}
#include "szp_block.h"
#include "szp_gpu.h"

#define SZP_THREADS 128       /* szp blocks per tile (CTA) */
#define SZP_SCAN_THREADS 1024 /* the scan of tile sums: one CTA */

struct pccl_cuda_szp_ws {
  size_t max_count;
  uint64_t *tile_sums; /* device: data bytes of each tile */
  uint64_t *tile_off;  /* device: exclusive scan of tile_sums; [tiles] is the total */
  uint64_t *host;      /* pinned: [0] the total, [1..3] a stream's header */
};

/* The storage type of each dtype, for copies. */
template <pccl_dtype_t D> struct szp_elem { typedef uint32_t type; };
template <> struct szp_elem<PCCL_FLOAT64> { typedef uint64_t type; };
template <> struct szp_elem<PCCL_FLOAT16> { typedef uint16_t type; };
template <> struct szp_elem<PCCL_BFLOAT16> { typedef uint16_t type; };

/* Bytes between szp blocks in shared memory: one block plus a pad that
 * makes the stride an odd number of 4-byte words (8-byte for float64). */
template <typename T> __host__ __device__ constexpr size_t szp_stride() {
  return PCCL_SZP_B * sizeof(T) + (sizeof(T) < 4 ? 4 : sizeof(T));
}

static size_t tiles_of(size_t count) {
  return (pccl__szp_nblocks(count) + SZP_THREADS - 1) / SZP_THREADS;
}

/* ---- kernels ---- */

template <typename T>
__device__ void stage_in(const T *src, size_t count, uint8_t *stage) {
  size_t first = (size_t)blockIdx.x * SZP_THREADS * PCCL_SZP_B;
  size_t n = count - first < SZP_THREADS * PCCL_SZP_B ? count - first : SZP_THREADS * PCCL_SZP_B;
  for (size_t e = threadIdx.x; e < n; e += SZP_THREADS)
    *(T *)(stage + e / PCCL_SZP_B * szp_stride<T>() + e % PCCL_SZP_B * sizeof(T)) = src[first + e];
}

template <typename T>
__device__ void stage_out(const uint8_t *stage, size_t count, T *dst) {
  size_t first = (size_t)blockIdx.x * SZP_THREADS * PCCL_SZP_B;
  size_t n = count - first < SZP_THREADS * PCCL_SZP_B ? count - first : SZP_THREADS * PCCL_SZP_B;
  for (size_t e = threadIdx.x; e < n; e += SZP_THREADS)
    dst[first + e] = *(const T *)(stage + e / PCCL_SZP_B * szp_stride<T>() + e % PCCL_SZP_B * sizeof(T));
}

/* This thread's szp block, and its element count (0: past the end). */
__device__ size_t my_block(size_t count, size_t *n) {
  size_t b = (size_t)blockIdx.x * SZP_THREADS + threadIdx.x;
  *n = b < pccl__szp_nblocks(count) ? pccl__szp_block_count(count, b) : 0;
  return b;
}

/* Thread 0 stores the tile's sum of `bytes`. */
__device__ void tile_sum(unsigned bytes, uint64_t *tile_sums) {
  typedef cub::BlockReduce<unsigned, SZP_THREADS> reduce_t;
  __shared__ typename reduce_t::TempStorage tmp;
  unsigned sum = reduce_t(tmp).Sum(bytes);
  if (threadIdx.x == 0) tile_sums[blockIdx.x] = sum;
}

/* Where this thread's block starts within its tile's data. */
__device__ unsigned tile_offset(unsigned bytes) {
  typedef cub::BlockScan<unsigned, SZP_THREADS> scan_t;
  __shared__ typename scan_t::TempStorage tmp;
  unsigned off;
  scan_t(tmp).ExclusiveSum(bytes, off);
  return off;
}

template <pccl_dtype_t D>
__global__ void __launch_bounds__(SZP_THREADS)
    szp_measure(const typename szp_elem<D>::type *src, size_t count, pccl__szp_quant_t qz,
                uint8_t *codes, uint64_t *tile_sums) {
  typedef typename szp_elem<D>::type T;
  __shared__ __align__(16) uint8_t stage[SZP_THREADS * szp_stride<T>()];
  stage_in(src, count, stage);
  __syncthreads();
  size_t n, b = my_block(count, &n);
  unsigned bytes = 0;
  if (n > 0) {
    int32_t q[PCCL_SZP_B];
    pccl__szp_pred_t p;
    int bad = pccl__szp_quantize(stage + threadIdx.x * szp_stride<T>(), n, D, &qz, q);
    pccl__szp_predict(q, &p);
    pccl__szp_plan_t plan = pccl__szp_plan(q[0], &p, bad, n, sizeof(T));
    codes[b] = (uint8_t)plan.code;
    bytes = (unsigned)plan.size;
  }
  tile_sum(bytes, tile_sums);
}

/* Sums of n tiles -> off[0..n) exclusive, off[n] the total. */
__global__ void __launch_bounds__(SZP_SCAN_THREADS)
    szp_scan(const uint64_t *sums, size_t n, uint64_t *off) {
  typedef cub::BlockScan<uint64_t, SZP_SCAN_THREADS> scan_t;
  __shared__ typename scan_t::TempStorage tmp;
  uint64_t carry = 0;
  for (size_t base = 0; base < n; base += SZP_SCAN_THREADS) {
    size_t i = base + threadIdx.x;
    uint64_t x, all;
    scan_t(tmp).ExclusiveSum(i < n ? sums[i] : 0, x, all);
    if (i < n) off[i] = carry + x;
    carry += all;
    __syncthreads(); /* tmp is reused */
  }
  if (threadIdx.x == 0) off[n] = carry;
}

/* dst: the stream (cap >= header + codes, checked by the host). */
template <pccl_dtype_t D>
__global__ void __launch_bounds__(SZP_THREADS)
    szp_write(const typename szp_elem<D>::type *src, size_t count, pccl__szp_quant_t qz,
              uint8_t *dst, size_t cap, const uint64_t *tile_off, size_t tiles) {
  typedef typename szp_elem<D>::type T;
  __shared__ __align__(16) uint8_t stage[SZP_THREADS * szp_stride<T>()];
  size_t nb = pccl__szp_nblocks(count);
  if (tile_off[tiles] > cap - PCCL_CODEC_HEADER - nb) return; /* the whole grid */
  if (blockIdx.x == 0 && threadIdx.x == 0)
    pccl__codec_header_write(dst, PCCL_CODEC_SZP, D, count, qz.bound);
  stage_in(src, count, stage);
  __syncthreads();
  size_t n, b = my_block(count, &n);
  const uint8_t *codes = dst + PCCL_CODEC_HEADER;
  unsigned code = n > 0 ? codes[b] : PCCL_SZP_RAW;
  unsigned off = tile_offset((unsigned)pccl__szp_block_bytes(code, n, sizeof(T)));
  if (n == 0) return;
  const uint8_t *in = stage + threadIdx.x * szp_stride<T>();
  uint8_t *out = dst + PCCL_CODEC_HEADER + nb + tile_off[blockIdx.x] + off;
  if (code == PCCL_SZP_RAW) { /* no quantization to redo */
    pccl__szp_write(in, 0, NULL, code, n, sizeof(T), out);
    return;
  }
  int32_t q[PCCL_SZP_B];
  pccl__szp_pred_t p;
  pccl__szp_quantize(in, n, D, &qz, q);
  pccl__szp_predict(q, &p);
  pccl__szp_write(in, q[0], &p, code, n, sizeof(T), out);
}

__global__ void __launch_bounds__(SZP_THREADS)
    szp_sizes(const uint8_t *codes, size_t count, size_t esize, uint64_t *tile_sums) {
  size_t n, b = my_block(count, &n);
  tile_sum(n > 0 ? (unsigned)pccl__szp_block_bytes(codes[b], n, esize) : 0u, tile_sums);
}

/* payload: the stream after its header, psize bytes. */
template <pccl_dtype_t D>
__global__ void __launch_bounds__(SZP_THREADS)
    szp_decode(const uint8_t *payload, size_t psize, size_t count, double step,
               typename szp_elem<D>::type *dst, const uint64_t *tile_off, size_t tiles) {
  typedef typename szp_elem<D>::type T;
  __shared__ __align__(16) uint8_t stage[SZP_THREADS * szp_stride<T>()];
  size_t nb = pccl__szp_nblocks(count);
  if (tile_off[tiles] != psize - nb) return; /* the whole grid: the host says corrupt */
  size_t n, b = my_block(count, &n);
  unsigned code = n > 0 ? payload[b] : PCCL_SZP_RAW;
  unsigned off = tile_offset((unsigned)pccl__szp_block_bytes(code, n, sizeof(T)));
  if (n > 0)
    pccl__szp_decode(payload + nb + tile_off[blockIdx.x] + off, code, n, D, sizeof(T), step,
                     stage + threadIdx.x * szp_stride<T>());
  __syncthreads();
  stage_out(stage, count, dst);
}

/* ---- host ---- */

static pccl_status_t cuda_status(cudaError_t e, const char *where) {
  if (e == cudaSuccess) return PCCL_OK;
  return pccl__thread_error_set(PCCL_ERR_INTERNAL, where, "CUDA: %s", cudaGetErrorString(e));
}

static int is_float(pccl_dtype_t t) {
  return t == PCCL_FLOAT32 || t == PCCL_FLOAT64 || t == PCCL_FLOAT16 || t == PCCL_BFLOAT16;
}

template <pccl_dtype_t D>
static void compress_typed(const void *src, size_t count, pccl__szp_quant_t qz, uint8_t *dst,
                           size_t cap, pccl_cuda_szp_ws_t *ws, cudaStream_t s) {
  typedef typename szp_elem<D>::type T;
  size_t tiles = tiles_of(count);
  if (tiles > 0)
    szp_measure<D><<<tiles, SZP_THREADS, 0, s>>>((const T *)src, count, qz,
                                                   dst + PCCL_CODEC_HEADER, ws->tile_sums);
  szp_scan<<<1, SZP_SCAN_THREADS, 0, s>>>(ws->tile_sums, tiles, ws->tile_off);
  szp_write<D><<<tiles > 0 ? tiles : 1, SZP_THREADS, 0, s>>>((const T *)src, count, qz, dst, cap,
                                                             ws->tile_off, tiles);
}

template <pccl_dtype_t D>
static void decompress_typed(const uint8_t *payload, size_t psize, void *dst, size_t count,
                             double step, pccl_cuda_szp_ws_t *ws, cudaStream_t s) {
  typedef typename szp_elem<D>::type T;
  size_t tiles = tiles_of(count);
  if (tiles == 0) return;
  szp_sizes<<<tiles, SZP_THREADS, 0, s>>>(payload, count, sizeof(T), ws->tile_sums);
  szp_scan<<<1, SZP_SCAN_THREADS, 0, s>>>(ws->tile_sums, tiles, ws->tile_off);
  szp_decode<D><<<tiles, SZP_THREADS, 0, s>>>(payload, psize, count, step, (T *)dst,
                                              ws->tile_off, tiles);
}

/* Copies the total (tile_off[tiles]) to ws->host[0] and waits for it. */
static pccl_status_t read_total(pccl_cuda_szp_ws_t *ws, size_t tiles, cudaStream_t s,
                                const char *where) {
  pccl_status_t st = cuda_status(cudaGetLastError(), where);
  if (st != PCCL_OK) return st;
  st = cuda_status(cudaMemcpyAsync(ws->host, ws->tile_off + tiles, sizeof(uint64_t),
                                   cudaMemcpyDeviceToHost, s), where);
  return st != PCCL_OK ? st : cuda_status(cudaStreamSynchronize(s), where);
}

extern "C" pccl_status_t pccl_cuda_szp_ws_create(size_t max_count, pccl_cuda_szp_ws_t **ws) {
  const char *where = "pccl_cuda_szp_ws_create";
  int devices = 0;
  if (ws == NULL || max_count > SIZE_MAX / 16)
    return pccl__thread_error_set(PCCL_ERR_INVALID_ARGUMENT, where,
                                  ws ? "max_count %zu is too large" : "NULL ws", max_count);
  *ws = NULL;
  cudaError_t e = cudaGetDeviceCount(&devices);
  if (e != cudaSuccess || devices == 0)
    return pccl__thread_error_set(PCCL_ERR_UNSUPPORTED, where, "no CUDA device (%s)",
                                  cudaGetErrorString(e));
  pccl_cuda_szp_ws_t *w = (pccl_cuda_szp_ws_t *)calloc(1, sizeof(*w));
  if (w == NULL) return pccl__thread_error_set(PCCL_ERR_NO_MEMORY, where, "workspace");
  w->max_count = max_count;
  size_t tiles = tiles_of(max_count);
  if (cudaMalloc((void **)&w->tile_sums, (tiles + 1) * sizeof(uint64_t)) != cudaSuccess ||
      cudaMalloc((void **)&w->tile_off, (tiles + 1) * sizeof(uint64_t)) != cudaSuccess ||
      cudaMallocHost((void **)&w->host, 4 * sizeof(uint64_t)) != cudaSuccess) {
    pccl_cuda_szp_ws_destroy(w);
    return pccl__thread_error_set(PCCL_ERR_NO_MEMORY, where, "%zu tiles: %s", tiles,
                                  cudaGetErrorString(cudaGetLastError()));
  }
  *ws = w;
  return PCCL_OK;
}

extern "C" void pccl_cuda_szp_ws_destroy(pccl_cuda_szp_ws_t *ws) {
  if (ws == NULL) return;
  cudaFree(ws->tile_sums);
  cudaFree(ws->tile_off);
  cudaFreeHost(ws->host);
  free(ws);
}

static pccl_status_t check_compress(const void *src, size_t count, pccl_dtype_t dtype,
                                    double bound, const void *dst, size_t cap,
                                    const size_t *size_out, const pccl_cuda_szp_ws_t *ws) {
  const char *where = "pccl_cuda_szp_compress";
  if (!is_float(dtype))
    return pccl__thread_error_set(PCCL_ERR_INVALID_DTYPE, where,
                                  "datatype %s: only float16/bfloat16/float32/float64 compress",
                                  pccl_dtype_name(dtype));
  if (dst == NULL || size_out == NULL || ws == NULL || (src == NULL && count > 0))
    return pccl__thread_error_set(PCCL_ERR_INVALID_ARGUMENT, where, "NULL %s",
                                  dst == NULL ? "dst" : size_out == NULL ? "size_out" : ws == NULL ? "ws" : "src");
  size_t esize = pccl_dtype_size(dtype);
  if ((uintptr_t)src % esize != 0)
    return pccl__thread_error_set(PCCL_ERR_INVALID_ARGUMENT, where, "src %p is not aligned to %zu bytes",
                                  src, esize);
  if (!(bound > 0 && isfinite(bound)))
    return pccl__thread_error_set(PCCL_ERR_INVALID_ARGUMENT, where,
                                  "error bound %g must be positive and finite", bound);
  if (count > ws->max_count)
    return pccl__thread_error_set(PCCL_ERR_INVALID_ARGUMENT, where,
                                  "%zu elements: the workspace takes %zu", count, ws->max_count);
  if (cap < PCCL_CODEC_HEADER || cap - PCCL_CODEC_HEADER < pccl__szp_nblocks(count))
    return pccl__thread_error_set(PCCL_ERR_INVALID_ARGUMENT, where,
                                  "cap %zu is below pccl_compress_bound (%zu)", cap,
                                  pccl_compress_bound(PCCL_CODEC_SZP, count, dtype));
  return PCCL_OK;
}

extern "C" pccl_status_t pccl_cuda_szp_compress(const void *src_dev, size_t count,
                                                pccl_dtype_t dtype, double bound, void *dst_dev,
                                                size_t cap, size_t *size_out,
                                                pccl_cuda_szp_ws_t *ws, void *stream) {
  const char *where = "pccl_cuda_szp_compress";
  pccl_status_t st = check_compress(src_dev, count, dtype, bound, dst_dev, cap, size_out, ws);
  if (st != PCCL_OK) return st;
  cudaStream_t s = (cudaStream_t)stream;
  pccl__szp_quant_t qz = pccl__szp_quant_of(bound);
  uint8_t *dst = (uint8_t *)dst_dev;
  switch (dtype) {
  case PCCL_FLOAT32: compress_typed<PCCL_FLOAT32>(src_dev, count, qz, dst, cap, ws, s); break;
  case PCCL_FLOAT64: compress_typed<PCCL_FLOAT64>(src_dev, count, qz, dst, cap, ws, s); break;
  case PCCL_FLOAT16: compress_typed<PCCL_FLOAT16>(src_dev, count, qz, dst, cap, ws, s); break;
  default: compress_typed<PCCL_BFLOAT16>(src_dev, count, qz, dst, cap, ws, s); break;
  }
  st = read_total(ws, tiles_of(count), s, where);
  if (st != PCCL_OK) return st;
  size_t fixed = PCCL_CODEC_HEADER + pccl__szp_nblocks(count);
  if (ws->host[0] > cap - fixed)
    return pccl__thread_error_set(PCCL_ERR_INVALID_ARGUMENT, where,
                                  "cap %zu is too small; pccl_compress_bound says %zu", cap,
                                  pccl_compress_bound(PCCL_CODEC_SZP, count, dtype));
  *size_out = fixed + (size_t)ws->host[0];
  return PCCL_OK;
}

/* Reads the stream's header to the host and checks it against the call. */
static pccl_status_t check_stream(const uint8_t *src, size_t size, size_t count,
                                  pccl_dtype_t dtype, pccl_cuda_szp_ws_t *ws, cudaStream_t s,
                                  double *bound) {
  const char *where = "pccl_cuda_szp_decompress";
  uint8_t *h = (uint8_t *)(ws->host + 1);
  size_t n = size < PCCL_CODEC_HEADER ? size : PCCL_CODEC_HEADER;
  pccl_status_t st = cuda_status(cudaMemcpyAsync(h, src, n, cudaMemcpyDeviceToHost, s), where);
  if (st == PCCL_OK) st = cuda_status(cudaStreamSynchronize(s), where);
  if (st != PCCL_OK) return st;
  pccl_codec_t codec;
  size_t hcount;
  pccl_dtype_t hdtype;
  st = pccl_compressed_info(h, size, &codec, &hcount, &hdtype, bound);
  if (st != PCCL_OK) return st; /* PCCL_ERR_CORRUPT, with its message */
  if (codec != PCCL_CODEC_SZP)
    return pccl__thread_error_set(PCCL_ERR_UNSUPPORTED, where, "stream is %s, the GPU decodes szp",
                                  pccl_codec_name(codec));
  if (hcount != count || hdtype != dtype)
    return pccl__thread_error_set(PCCL_ERR_INVALID_ARGUMENT, where,
                                  "stream holds %zu x %s, the call asks for %zu x %s", hcount,
                                  pccl_dtype_name(hdtype), count, pccl_dtype_name(dtype));
  if (count > ws->max_count)
    return pccl__thread_error_set(PCCL_ERR_INVALID_ARGUMENT, where,
                                  "%zu elements: the workspace takes %zu", count, ws->max_count);
  if (size - PCCL_CODEC_HEADER < pccl__szp_nblocks(count))
    return pccl__thread_error_set(PCCL_ERR_CORRUPT, where,
                                  "szp: %zu payload bytes cannot hold %zu block codes",
                                  size - PCCL_CODEC_HEADER, pccl__szp_nblocks(count));
  return PCCL_OK;
}

extern "C" pccl_status_t pccl_cuda_szp_decompress(const void *src_dev, size_t size,
                                                  void *dst_dev, size_t count,
                                                  pccl_dtype_t dtype, pccl_cuda_szp_ws_t *ws,
                                                  void *stream) {
  const char *where = "pccl_cuda_szp_decompress";
  if (src_dev == NULL || ws == NULL || (dst_dev == NULL && count > 0))
    return pccl__thread_error_set(PCCL_ERR_INVALID_ARGUMENT, where, "NULL %s",
                                  src_dev == NULL ? "src" : ws == NULL ? "ws" : "dst");
  if (is_float(dtype) && (uintptr_t)dst_dev % pccl_dtype_size(dtype) != 0)
    return pccl__thread_error_set(PCCL_ERR_INVALID_ARGUMENT, where, "dst %p is not aligned to %zu bytes",
                                  dst_dev, pccl_dtype_size(dtype));
  cudaStream_t s = (cudaStream_t)stream;
  double bound;
  pccl_status_t st = check_stream((const uint8_t *)src_dev, size, count, dtype, ws, s, &bound);
  if (st != PCCL_OK) return st;
  const uint8_t *payload = (const uint8_t *)src_dev + PCCL_CODEC_HEADER;
  size_t psize = size - PCCL_CODEC_HEADER, nb = pccl__szp_nblocks(count);
  double step = pccl__szp_quant_of(bound).step;
  switch (dtype) {
  case PCCL_FLOAT32: decompress_typed<PCCL_FLOAT32>(payload, psize, dst_dev, count, step, ws, s); break;
  case PCCL_FLOAT64: decompress_typed<PCCL_FLOAT64>(payload, psize, dst_dev, count, step, ws, s); break;
  case PCCL_FLOAT16: decompress_typed<PCCL_FLOAT16>(payload, psize, dst_dev, count, step, ws, s); break;
  default: decompress_typed<PCCL_BFLOAT16>(payload, psize, dst_dev, count, step, ws, s); break;
  }
  if (nb == 0)
    return psize == 0 ? PCCL_OK
                      : pccl__thread_error_set(PCCL_ERR_CORRUPT, where,
                                               "szp: %zu payload bytes, the blocks account for 0", psize);
  st = read_total(ws, tiles_of(count), s, where);
  if (st != PCCL_OK) return st;
  if (ws->host[0] != psize - nb)
    return pccl__thread_error_set(PCCL_ERR_CORRUPT, where,
                                  "szp: %zu payload bytes, the blocks account for %zu", psize,
                                  nb + (size_t)ws->host[0]);
  return PCCL_OK;
}
