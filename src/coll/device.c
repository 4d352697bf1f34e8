/* device.c - collectives on device buffers (device.h). The schedule is the
 * one host buffers run; only its local steps (CUDA kernels, exec_cuda.c)
 * and its messages (through page-locked host staging, stage_transport.c,
 * over the communicator's usual shm-or-MPI route) differ. Device scratch,
 * staging and the cycles' device copy grow with the calls and are kept,
 * so a repeated call allocates nothing. */
#include "device.h"

#ifdef PCCL_HAVE_CUDA

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"
#include "stage_transport.h"

struct pccl_comm_device {
  void *stream;
  void *tmp;
  size_t tmp_bytes;
  uint32_t *perm;
  size_t perm_words;
  uint32_t *perm_host; /* what perm holds (perm_words words; nperm_up of them) */
  size_t nperm_up;
  pccl_stage_t stage;
  /* the host copy of a call's buffers: ordinary memory, pinned where CUDA
   * allows (pccl__gpu_host_register), which the segment's peers read by
   * cross-memory attach */
  void *mirror;
  int mirror_pinned;
  size_t mirror_bytes;
};

static _Thread_local char t_error[256];

/* The devices this process sees, asked once: every collective classifies
 * its two buffers, and a small call costs less than asking the runtime. */
static int devices(void) {
  static _Atomic int known = -2;
  int n = atomic_load_explicit(&known, memory_order_relaxed);
  if (n == -2) atomic_store_explicit(&known, n = pccl__gpu_devices(), memory_order_relaxed);
  return n;
}

int pccl__device_none(void) { return devices() == 0; }

pccl_status_t pccl__device_classify(const void *buf, int *is_device) {
  int n = devices();
  *is_device = 0;
  if (n == 0) return PCCL_OK;
  if (n < 0) {
    snprintf(t_error, sizeof t_error, "%s", pccl__gpu_why_none());
    return PCCL_ERR_CONFIG;
  }
  int k = pccl__gpu_is_device(buf);
  if (k < 0) {
    snprintf(t_error, sizeof t_error, "cannot tell where a buffer lies: %s", pccl__gpu_last_error());
    return PCCL_ERR_INTERNAL;
  }
  *is_device = k;
  return PCCL_OK;
}

const char *pccl__device_error(void) { return t_error; }

/* Staging hooks: CUDA copies on the communicator's stream, waited for. */
static pccl_status_t copy_sync(void *ctx, void *dst, const void *src, size_t bytes) {
  struct pccl_comm_device *d = ctx;
  pccl_status_t st = pccl__gpu_copy(dst, src, bytes, d->stream);
  return st == PCCL_OK ? pccl__gpu_sync(d->stream) : st;
}

static pccl_status_t host_alloc(void *ctx, void **p, size_t bytes) {
  (void)ctx;
  return pccl__gpu_host_alloc(p, bytes);
}

static void host_free(void *ctx, void *p) {
  (void)ctx;
  pccl__gpu_host_free(p);
}

static pccl_status_t fail(pccl_status_t st, const char *what) {
  snprintf(t_error, sizeof t_error, "%s: %s", what, pccl__gpu_last_error());
  return st;
}

static void device_free(pccl_comm_t *comm);

static pccl_status_t state_of(pccl_comm_t *comm, struct pccl_comm_device **out) {
  if (comm->device) return *out = comm->device, PCCL_OK;
  struct pccl_comm_device *d = calloc(1, sizeof(*d));
  if (!d) {
    snprintf(t_error, sizeof t_error, "out of memory for the communicator's device state");
    return PCCL_ERR_NO_MEMORY;
  }
  pccl_status_t st = pccl__gpu_stream_create(&d->stream);
  if (st != PCCL_OK) return free(d), fail(st, "creating pccl's stream");
  d->stage.inner = &pccl_route_transport;
  d->stage.inner_ctx = &comm->route;
  d->stage.hooks = (pccl_stage_hooks_t){copy_sync, copy_sync, host_alloc, host_free, d};
  comm->device = d;
  comm->device_free = device_free;
  *out = d;
  return PCCL_OK;
}

static pccl_status_t grow_tmp(struct pccl_comm_device *d, size_t bytes) {
  if (bytes <= d->tmp_bytes) return PCCL_OK;
  void *p = NULL;
  pccl_status_t st = pccl__gpu_alloc(&p, bytes);
  if (st != PCCL_OK) return fail(st, "device scratch");
  pccl__gpu_free(d->tmp);
  d->tmp = p;
  d->tmp_bytes = bytes;
  return PCCL_OK;
}

/* The schedule's cycles on the device; uploaded again only when they
 * differ from the last ones (compared by content: a schedule evicted from
 * the cache may leave its address to another). */
static pccl_status_t upload_perm(struct pccl_comm_device *d, const pccl_sched_t *s) {
  size_t bytes = s->nperm * sizeof(uint32_t);
  if (s->nperm == 0 || (s->nperm == d->nperm_up && memcmp(d->perm_host, s->perm, bytes) == 0))
    return PCCL_OK;
  if (s->nperm > d->perm_words) {
    void *p = NULL;
    uint32_t *h = malloc(bytes);
    pccl_status_t st = h ? pccl__gpu_alloc(&p, bytes) : PCCL_ERR_NO_MEMORY;
    if (st != PCCL_OK) return free(h), fail(st, "device permutation cycles");
    pccl__gpu_free(d->perm);
    free(d->perm_host);
    d->perm = p;
    d->perm_host = h;
    d->perm_words = s->nperm;
  }
  d->nperm_up = 0;
  pccl_status_t st = copy_sync(d, d->perm, s->perm, bytes);
  if (st != PCCL_OK) return fail(st, "uploading permutation cycles");
  memcpy(d->perm_host, s->perm, bytes);
  d->nperm_up = s->nperm;
  return PCCL_OK;
}

pccl_status_t pccl__device_prepare(pccl_comm_t *comm, const pccl_sched_t *s, size_t esize,
                                   pccl_dtype_t dtype, pccl_op_t op, void **tmp,
                                   pccl_exec_device_t *dev, const pccl_transport_t **tp,
                                   void **tp_ctx) {
  struct pccl_comm_device *d;
  pccl_status_t st = state_of(comm, &d);
  if (st == PCCL_OK) st = grow_tmp(d, s->tmp_elems * esize);
  if (st == PCCL_OK) st = upload_perm(d, s);
  if (st == PCCL_OK && (st = pccl_stage_begin(&d->stage, pccl_stage_bytes(s, esize), s->nsteps)) != PCCL_OK)
    fail(st, "host staging for the messages");
  /* The blocking API reads the user's buffers once all work queued before
   * the call, on any stream, is done. */
  if (st == PCCL_OK && (st = pccl__gpu_device_sync()) != PCCL_OK) fail(st, "waiting for the device");
  if (st != PCCL_OK) return st;
  *tmp = d->tmp;
  *dev = (pccl_exec_device_t){dtype, op, d->stream, d->perm};
  *tp = &pccl_stage_transport;
  *tp_ctx = &d->stage;
  return PCCL_OK;
}

static void mirror_free(struct pccl_comm_device *d) {
  if (d->mirror_pinned) pccl__gpu_host_unregister(d->mirror);
  free(d->mirror);
  d->mirror = NULL, d->mirror_bytes = 0, d->mirror_pinned = 0;
}

pccl_status_t pccl__device_mirror_in(pccl_comm_t *comm, pccl_device_range_t *r, int n) {
  struct pccl_comm_device *d;
  pccl_status_t st = state_of(comm, &d);
  if (st != PCCL_OK) return st;
  size_t total = 0;
  for (int i = 0; i < n; i++) total += (r[i].bytes + 63) & ~(size_t)63;
  total = (total + 4095) & ~(size_t)4095;
  if (total > d->mirror_bytes) {
    void *p = aligned_alloc(4096, total);
    if (!p) {
      snprintf(t_error, sizeof t_error, "cannot allocate %zu bytes of host mirror", total);
      return PCCL_ERR_NO_MEMORY;
    }
    mirror_free(d);
    d->mirror = p;
    d->mirror_bytes = total;
    /* unpinned, the copies are slower but still right */
    d->mirror_pinned = pccl__gpu_host_register(p, total) == PCCL_OK;
  }
  /* as pccl__device_prepare: the work queued before the call is done first */
  if ((st = pccl__gpu_device_sync()) != PCCL_OK) return fail(st, "waiting for the device");
  char *at = d->mirror;
  for (int i = 0; i < n; i++) {
    r[i].host = at;
    at += (r[i].bytes + 63) & ~(size_t)63;
    if (r[i].in && r[i].bytes && (st = pccl__gpu_copy(r[i].host, r[i].dev, r[i].bytes, d->stream)) != PCCL_OK)
      return fail(st, "copying the buffers to the host");
  }
  return (st = pccl__gpu_sync(d->stream)) == PCCL_OK ? st : fail(st, "copying the buffers to the host");
}

pccl_status_t pccl__device_mirror_out(pccl_comm_t *comm, const pccl_device_range_t *r, int n) {
  struct pccl_comm_device *d = comm->device;
  pccl_status_t st = PCCL_OK;
  for (int i = 0; i < n && st == PCCL_OK; i++)
    if (r[i].out && r[i].bytes) st = pccl__gpu_copy((void *)r[i].dev, r[i].host, r[i].bytes, d->stream);
  if (st == PCCL_OK) st = pccl__gpu_sync(d->stream);
  /* a mirror past the scratch limit is not kept (PCCL_MAX_SCRATCH) */
  if (d->mirror_bytes > comm->scratch_limit) mirror_free(d);
  return st == PCCL_OK ? st : fail(st, "copying the results to the device");
}

static void device_free(pccl_comm_t *comm) {
  struct pccl_comm_device *d = comm->device;
  if (!d) return;
  pccl_stage_free(&d->stage);
  mirror_free(d);
  pccl__gpu_free(d->tmp);
  pccl__gpu_free(d->perm);
  free(d->perm_host);
  pccl__gpu_stream_destroy(d->stream);
  free(d);
  comm->device = NULL;
}

#else /* no CUDA: every buffer is host memory */

pccl_status_t pccl__device_classify(const void *buf, int *is_device) {
  (void)buf;
  *is_device = 0;
  return PCCL_OK;
}

int pccl__device_none(void) { return 1; }

const char *pccl__device_error(void) { return "pccl was built without CUDA"; }

pccl_status_t pccl__device_prepare(pccl_comm_t *comm, const pccl_sched_t *s, size_t esize,
                                   pccl_dtype_t dtype, pccl_op_t op, void **tmp,
                                   pccl_exec_device_t *dev, const pccl_transport_t **tp,
                                   void **tp_ctx) {
  (void)comm, (void)s, (void)esize, (void)dtype, (void)op, (void)tmp, (void)dev, (void)tp, (void)tp_ctx;
  return PCCL_ERR_UNSUPPORTED;
}

pccl_status_t pccl__device_mirror_in(pccl_comm_t *comm, pccl_device_range_t *r, int n) {
  (void)comm, (void)r, (void)n;
  return PCCL_ERR_UNSUPPORTED;
}

pccl_status_t pccl__device_mirror_out(pccl_comm_t *comm, const pccl_device_range_t *r, int n) {
  (void)comm, (void)r, (void)n;
  return PCCL_ERR_UNSUPPORTED;
}


#endif
