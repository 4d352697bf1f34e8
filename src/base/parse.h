/* parse.h - the strict parsers behind pccl's environment variables and
 * text formats: numbers, seconds, byte counts, collective names. A
 * malformed value is an error with a message, never silently ignored. Part
 * of the base layer: no MPI, no communicator. */
#ifndef PCCL_PARSE_H
#define PCCL_PARSE_H

#include <stddef.h>

#include "pccl.h"

/* Parses a whole decimal integer in [min, max] . */
pccl_status_t pccl__parse_int(const char *name, const char *text, long min, long max, long *out,
                              char *err, size_t errlen);

/* Parses a decimal number of seconds in [0, max] ("2", "0.5", "1e3"). */
pccl_status_t pccl__parse_seconds(const char *name, const char *text, double max, double *out,
                                  char *err, size_t errlen);

/* Parses a whole number of bytes with an optional binary suffix K, M or G
 * ("64M"), in [0, max]. */
pccl_status_t pccl__parse_bytes(const char *name, const char *text, long long max, long long *out,
                                char *err, size_t errlen);

/* The collective called `name` (also "reduce_scatter", "bcast"), or -1. */
int pccl__coll_from_name(const char *name);

#endif /* PCCL_PARSE_H */
