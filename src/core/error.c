/* error.c - the last-error messages: per communicator, or per thread when a
 * call had no valid communicator. */
#include <stdarg.h>
#include <stdio.h>

#include "comm.h"

const char *pccl_last_error(const pccl_comm_t *comm) {
  return pccl__comm_live(comm) ? comm->error : pccl__thread_error();
}

pccl_status_t pccl__error(const pccl_comm_t *comm, pccl_status_t status, const char *where,
                          const char *fmt, ...) {
  int live = pccl__comm_live(comm);
  char prefix[128];
  if (live) snprintf(prefix, sizeof prefix, "%s on rank %d", where, comm->rank);
  va_list ap;
  va_start(ap, fmt);
  pccl__error_vwrite(live ? ((pccl_comm_t *)comm)->error : pccl__thread_error(), live ? prefix : where,
                     fmt, ap);
  va_end(ap);
  return status;
}

void pccl__error_clear(pccl_comm_t *comm) { comm->error[0] = '\0'; }
