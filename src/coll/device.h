/* device.h - collectives on device buffers: which memory a call's buffers
 * are in, and what running its schedule there needs from the communicator
 * (device scratch, the permutation cycles on the device, a stream, host
 * staging for the messages). Without CUDA every buffer is host memory. */
#ifndef PCCL_COLL_DEVICE_H
#define PCCL_COLL_DEVICE_H

#include "comm.h"
#include "exec.h"

/* *is_device: 1 for device memory, 0 for host memory. PCCL_ERR_CONFIG
 * when PCCL_CUDA is malformed, PCCL_ERR_INTERNAL when CUDA cannot tell (a
 * failed device); the reason in pccl__device_error(). */
pccl_status_t pccl__device_classify(const void *buf, int *is_device);
/* 1 when this process sees no device, so that every buffer is host memory. */
int pccl__device_none(void);

/* Readies comm to run `s` on device buffers of `esize`-byte elements:
 * *tmp is the schedule's device scratch, *dev the executor's device
 * settings, and the messages go through (*tp, *tp_ctx). On failure the
 * detail is in pccl__device_error(). */
pccl_status_t pccl__device_prepare(pccl_comm_t *comm, const pccl_sched_t *s, size_t esize,
                                   pccl_dtype_t dtype, pccl_op_t op, void **tmp,
                                   pccl_exec_device_t *dev, const pccl_transport_t **tp,
                                   void **tp_ctx);
const char *pccl__device_error(void);

/* One buffer of a call on device memory, mirrored in host memory for a
 * path that reads and writes the buffers with the CPU (the node segment):
 * `host` is set by pccl__device_mirror_in, which copies in the ranges
 * marked `in` (not one the call overwrites whole); pccl__device_mirror_out
 * copies back those marked `out`. The mirror is the communicator's, kept
 * for the next call unless it exceeds the communicator's scratch limit. */
typedef struct {
  const void *dev;
  size_t bytes;
  int in, out;
  void *host;
} pccl_device_range_t;
pccl_status_t pccl__device_mirror_in(pccl_comm_t *comm, pccl_device_range_t *r, int n);
pccl_status_t pccl__device_mirror_out(pccl_comm_t *comm, const pccl_device_range_t *r, int n);

/* What comm holds for device calls is freed through comm->device_free,
 * which the first device call sets. */

#endif /* PCCL_COLL_DEVICE_H */
