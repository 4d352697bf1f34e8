/* errmsg.c - the per-thread last-error buffer (see errmsg.h). */
#include "errmsg.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local char thread_error[PCCL_ERROR_LEN];

char *pccl__thread_error(void) { return thread_error; }

pccl_status_t pccl__thread_error_set(pccl_status_t status, const char *where, const char *fmt,
                                     ...) {
  int n = snprintf(thread_error, PCCL_ERROR_LEN, "%s: ", where);
  if (n < 0 || n >= PCCL_ERROR_LEN) return status;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(thread_error + n, PCCL_ERROR_LEN - (size_t)n, fmt, ap);
  va_end(ap);
  return status;
}
