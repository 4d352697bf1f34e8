/* coll.h - what the collective entry points offer the layers above them
 * inside the library (the engine). */
#ifndef PCCL_COLL_H
#define PCCL_COLL_H

#include "pccl.h"

/* Checks a collective's arguments exactly as the blocking call would, for
 * a rank `rank` of `size` ranks, without running anything. The message goes
 * to the calling thread's last error (pccl_last_error(NULL)). */
pccl_status_t pccl__coll_check(pccl_coll_t coll, int rank, int size, const void *sendbuf,
                               const void *recvbuf, size_t count, pccl_dtype_t dtype,
                               pccl_op_t op, int root);

#endif /* PCCL_COLL_H */
