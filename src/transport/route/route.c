/* route.c - per-peer choice between the shm and MPI transports. */
#include "route.h"

static int via_shm(const pccl_route_t *r, int peer, size_t bytes) {
  return bytes >= r->shm_min && pccl_shm_tp_serves(r->shm, peer);
}

static pccl_status_t route_isend(void *ctx, int peer, int tag, const void *buf, size_t bytes,
                                 uint32_t slot) {
  pccl_route_t *r = ctx;
  if (via_shm(r, peer, bytes))
    return pccl_shm_transport.isend(r->shm, peer, tag, buf, bytes, slot);
  return pccl_mpi_transport.isend(r->mpi, peer, tag, buf, bytes, slot);
}

static pccl_status_t route_irecv(void *ctx, int peer, int tag, void *buf, size_t bytes,
                                 uint32_t slot) {
  pccl_route_t *r = ctx;
  if (via_shm(r, peer, bytes))
    return pccl_shm_transport.irecv(r->shm, peer, tag, buf, bytes, slot);
  return pccl_mpi_transport.irecv(r->mpi, peer, tag, buf, bytes, slot);
}

static pccl_status_t route_irecv_reduce(void *ctx, int peer, int tag, void *dst, const void *local,
                                        size_t bytes, pccl_reducer_t fold, uint32_t slot) {
  pccl_route_t *r = ctx;
  if (!via_shm(r, peer, bytes)) return PCCL_ERR_UNSUPPORTED;
  return pccl_shm_transport.irecv_reduce(r->shm, peer, tag, dst, local, bytes, fold, slot);
}

/* Compressed streams always go through MPI: the receiver does not know
 * the length, so it could not route by it. */
static pccl_status_t route_isend_var(void *ctx, int peer, int tag, const void *buf, size_t bytes,
                                     uint32_t slot) {
  return pccl_mpi_transport.isend(((pccl_route_t *)ctx)->mpi, peer, tag, buf, bytes, slot);
}

static pccl_status_t route_irecv_var(void *ctx, int peer, int tag, void *buf, size_t cap,
                                     size_t *received, uint32_t slot) {
  return pccl_mpi_transport.irecv_var(((pccl_route_t *)ctx)->mpi, peer, tag, buf, cap, received,
                                      slot);
}

/* Both transports, once each: shm operations progress only when this rank
 * polls them (the receiver does the copy). */
static pccl_status_t route_poll(void *ctx, uint32_t *done, int max, int *ndone) {
  pccl_route_t *r = ctx;
  int n = 0, k = 0;
  pccl_status_t st = PCCL_OK;
  *ndone = 0;
  if (pccl_shm_tp_active(r->shm) > 0) st = pccl_shm_transport.poll(r->shm, done, max, &n);
  if (st == PCCL_OK && r->mpi->nactive > 0)
    st = pccl_mpi_transport.poll(r->mpi, done + n, max - n, &k);
  *ndone = n + k;
  return st;
}

const pccl_transport_t pccl_route_transport = {route_isend,     route_irecv,     route_poll,
                                               route_irecv_reduce, route_isend_var, route_irecv_var};

pccl_status_t pccl_route_reserve(pccl_route_t *r, uint32_t n) {
  pccl_status_t st = pccl_mpi_tp_reserve(r->mpi, n);
  if (st == PCCL_OK && r->shm) st = pccl_shm_tp_reserve(r->shm, n);
  return st;
}

void pccl_route_reset(pccl_route_t *r) {
  pccl_mpi_tp_reset(r->mpi);
  pccl_shm_tp_reset(r->shm);
}
