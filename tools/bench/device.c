/* device.c - pccl-bench's device buffers (--mem cuda): pccl runs on device
 * copies of the host buffers, MPI (not CUDA-aware here) on the host ones.
 * Inputs go up before the checked call and its result comes down to be
 * checked on the host; the timed calls use whatever the device holds. */
#include <mpi.h>
#include <stdio.h>

#include "bench.h"

#ifdef PCCL_HAVE_CUDA
#include <cuda_runtime_api.h>

static void must(cudaError_t e, const char *what) {
  if (e == cudaSuccess) return;
  fprintf(stderr, "pccl-bench: %s: %s\n", what, cudaGetErrorString(e));
  MPI_Abort(MPI_COMM_WORLD, 1);
}

bool device_alloc(bench_t *b, char *why, size_t len) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0) {
    snprintf(why, len, "no CUDA device (%s)", e != cudaSuccess ? cudaGetErrorString(e) : "none");
    return false;
  }
  int local = 0;
  pccl_comm_local_rank(b->comm, &local);
  e = cudaSetDevice(local % n);
  if (e == cudaSuccess) e = cudaMalloc(&b->dsend, b->buffer_bytes);
  if (e == cudaSuccess) e = cudaMalloc(&b->drecv, b->buffer_bytes);
  if (e != cudaSuccess) snprintf(why, len, "%s", cudaGetErrorString(e));
  return e == cudaSuccess;
}

void device_free(bench_t *b) {
  if (b->dsend) cudaFree(b->dsend);
  if (b->drecv) cudaFree(b->drecv);
  b->dsend = b->drecv = NULL;
}

void device_upload(const bench_t *b, size_t send_bytes, size_t recv_bytes, int sentinel) {
  must(cudaMemcpy(b->dsend, b->send, send_bytes, cudaMemcpyHostToDevice), "copying the input up");
  must(cudaMemset(b->drecv, sentinel, recv_bytes), "setting the output's sentinel");
}

void device_download(const bench_t *b, size_t recv_bytes) {
  must(cudaMemcpy(b->recv, b->drecv, recv_bytes, cudaMemcpyDeviceToHost), "copying the result down");
}

#else

bool device_alloc(bench_t *b, char *why, size_t len) {
  (void)b;
  snprintf(why, len, "pccl-bench was built without CUDA");
  return false;
}

void device_free(bench_t *b) { (void)b; }
void device_upload(const bench_t *b, size_t send_bytes, size_t recv_bytes, int sentinel) {
  (void)b, (void)send_bytes, (void)recv_bytes, (void)sentinel;
}
void device_download(const bench_t *b, size_t recv_bytes) { (void)b, (void)recv_bytes; }

#endif
