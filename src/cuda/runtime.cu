/* runtime.cu - the CUDA runtime as pccl uses it: finding devices once,
 * telling device pointers from host ones, copies, waits, allocations, and
 * the per-thread detail of the last failure. */
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"
#include "gpu_internal.cuh"

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static int g_devices;
static char g_why[256];
static thread_local char t_error[512];

pccl_status_t pccl__gpu_fail(cudaError_t e, const char *what) {
  snprintf(t_error, sizeof t_error, "%s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
  cudaGetLastError(); /* clear it, so the next call starts clean */
  return e == cudaErrorMemoryAllocation ? PCCL_ERR_NO_MEMORY : PCCL_ERR_INTERNAL;
}

const char *pccl__gpu_last_error(void) { return t_error; }

/* PCCL_CUDA: unset, empty, auto, 1 or on look for devices; 0 or off do not. */
static void find_devices(void) {
  const char *v = getenv("PCCL_CUDA");
  if (v && (!strcmp(v, "0") || !strcmp(v, "off"))) {
    snprintf(g_why, sizeof g_why, "PCCL_CUDA=%s", v);
    return;
  }
  if (v && *v && strcmp(v, "1") && strcmp(v, "on") && strcmp(v, "auto")) {
    g_devices = -1;
    snprintf(g_why, sizeof g_why, "PCCL_CUDA is '%.64s', not one of 0, 1, off, on, auto", v);
    return;
  }
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  cudaGetLastError();
  if (e != cudaSuccess) n = 0, snprintf(g_why, sizeof g_why, "no CUDA device: %s", cudaGetErrorString(e));
  else if (n == 0) snprintf(g_why, sizeof g_why, "no CUDA device");
  g_devices = n;
}

int pccl__gpu_devices(void) {
  pthread_once(&g_once, find_devices);
  return g_devices;
}

const char *pccl__gpu_why_none(void) {
  pthread_once(&g_once, find_devices);
  return g_why;
}

/* Whether some device's primary context is active. Memory from CUDA's
 * runtime lives in one, so without any a pointer is host memory, and
 * looking no further spares host-only programs on GPU machines the
 * context that asking the runtime about a pointer would create. The
 * driver's own query is found in the driver the runtime loaded. */
typedef int (*ctx_state_fn)(int device, unsigned int *flags, int *active);
static ctx_state_fn g_ctx_state;
static pthread_once_t g_ctx_once = PTHREAD_ONCE_INIT;

static void find_ctx_state(void) {
  void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (driver) g_ctx_state = (ctx_state_fn)dlsym(driver, "cuDevicePrimaryCtxGetState");
}

static int any_context(void) {
  pthread_once(&g_ctx_once, find_ctx_state);
  if (!g_ctx_state) return 1; /* cannot tell: ask about the pointer */
  for (int d = 0; d < g_devices; d++) {
    unsigned int flags = 0;
    int active = 0;
    if (g_ctx_state(d, &flags, &active) != 0 || active) return 1;
  }
  return 0;
}

int pccl__gpu_is_device(const void *p) {
  if (pccl__gpu_devices() <= 0 || p == NULL || !any_context()) return 0;
  cudaPointerAttributes a;
  cudaError_t e = cudaPointerGetAttributes(&a, p);
  if (e == cudaErrorInvalidValue) { /* older runtimes: a plain host pointer */
    cudaGetLastError();
    return 0;
  }
  if (e != cudaSuccess) { /* a failed device: guessing "host" would crash */
    pccl__gpu_fail(e, "cudaPointerGetAttributes");
    return -1;
  }
  return a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged;
}

pccl_status_t pccl__gpu_copy(void *dst, const void *src, size_t bytes, void *stream) {
  if (bytes == 0) return PCCL_OK;
  cudaError_t e = cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, (cudaStream_t)stream);
  return e == cudaSuccess ? PCCL_OK : pccl__gpu_fail(e, "cudaMemcpyAsync");
}

pccl_status_t pccl__gpu_sync(void *stream) {
  cudaError_t e = cudaStreamSynchronize((cudaStream_t)stream);
  return e == cudaSuccess ? PCCL_OK : pccl__gpu_fail(e, "cudaStreamSynchronize");
}

pccl_status_t pccl__gpu_alloc(void **p, size_t bytes) {
  cudaError_t e = cudaMalloc(p, bytes ? bytes : 1);
  return e == cudaSuccess ? PCCL_OK : pccl__gpu_fail(e, "cudaMalloc");
}

void pccl__gpu_free(void *p) {
  if (p) cudaFree(p);
}

pccl_status_t pccl__gpu_device_sync(void) {
  cudaError_t e = cudaDeviceSynchronize();
  return e == cudaSuccess ? PCCL_OK : pccl__gpu_fail(e, "cudaDeviceSynchronize");
}

pccl_status_t pccl__gpu_host_alloc(void **p, size_t bytes) {
  cudaError_t e = cudaHostAlloc(p, bytes ? bytes : 1, cudaHostAllocDefault);
  return e == cudaSuccess ? PCCL_OK : pccl__gpu_fail(e, "cudaHostAlloc");
}

void pccl__gpu_host_free(void *p) {
  if (p) cudaFreeHost(p);
}

pccl_status_t pccl__gpu_host_register(void *p, size_t bytes) {
  cudaError_t e = cudaHostRegister(p, bytes, cudaHostRegisterDefault);
  return e == cudaSuccess ? PCCL_OK : pccl__gpu_fail(e, "cudaHostRegister");
}

void pccl__gpu_host_unregister(void *p) {
  if (p) cudaHostUnregister(p);
}

pccl_status_t pccl__gpu_stream_create(void **stream) {
  cudaStream_t s;
  cudaError_t e = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  if (e != cudaSuccess) return pccl__gpu_fail(e, "cudaStreamCreateWithFlags");
  *stream = s;
  return PCCL_OK;
}

void pccl__gpu_stream_destroy(void *stream) {
  if (stream) cudaStreamDestroy((cudaStream_t)stream);
}
