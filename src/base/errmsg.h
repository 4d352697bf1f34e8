/* errmsg.h - the calling thread's last error message, for calls that have no
 * live communicator (and for the codec, which has none at all). Lives in the
 * MPI-free core so unit tests and tools see the same messages as users. */
#ifndef PCCL_ERRMSG_H
#define PCCL_ERRMSG_H

#include <stdarg.h>

#include "pccl.h"

#define PCCL_ERROR_LEN 512

/* The calling thread's message buffer (PCCL_ERROR_LEN bytes). */
char *pccl__thread_error(void);

/* Writes prefix then the formatted message into buf (PCCL_ERROR_LEN bytes). */
void pccl__error_vwrite(char *buf, const char *prefix, const char *fmt, va_list ap);

/* Writes "where: <message>" to the thread's buffer and returns status. */
pccl_status_t pccl__thread_error_set(pccl_status_t status, const char *where, const char *fmt,
                                     ...) __attribute__((format(printf, 3, 4)));

#endif
