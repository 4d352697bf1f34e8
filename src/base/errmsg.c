/* errmsg.c - the per-thread last-error buffer (see errmsg.h). */
#include "errmsg.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local char thread_error[PCCL_ERROR_LEN];

char *pccl__thread_error(void) { return thread_error; }

void pccl__error_vwrite(char *buf, const char *prefix, const char *fmt, va_list ap) {
  int n = snprintf(buf, PCCL_ERROR_LEN, "%s: ", prefix);
  if (n >= 0 && n < PCCL_ERROR_LEN) vsnprintf(buf + n, PCCL_ERROR_LEN - (size_t)n, fmt, ap);
}

pccl_status_t pccl__thread_error_set(pccl_status_t status, const char *where, const char *fmt,
                                     ...) {
  va_list ap;
  va_start(ap, fmt);
  pccl__error_vwrite(thread_error, where, fmt, ap);
  va_end(ap);
  return status;
}
