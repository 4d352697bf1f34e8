/* parse.c - the strict parsers behind every numeric environment variable
 * and the collective names of PCCL_ALGO and tuning tables (parse.h). In the
 * base layer, so the codec, the tuner and the shared allocator need nothing
 * of the communicator. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"

pccl_status_t pccl__parse_int(const char *name, const char *text, long min, long max, long *out,
                              char *err, size_t errlen) {
  char *end = NULL;
  errno = 0;
  long v = strtol(text, &end, 10);
  if (text[0] == '\0' || *end != '\0' || errno == ERANGE || v < min || v > max) {
    snprintf(err, errlen, "%s=\"%s\" is not an integer in [%ld, %ld]", name, text, min, max);
    return PCCL_ERR_CONFIG;
  }
  *out = v;
  return PCCL_OK;
}

pccl_status_t pccl__parse_seconds(const char *name, const char *text, double max, double *out,
                                  char *err, size_t errlen) {
  char *end = NULL;
  errno = 0;
  double v = strtod(text, &end);
  /* v == v rejects NaN; the range check rejects infinities */
  if (text[0] == '\0' || *end != '\0' || errno == ERANGE || !(v == v) || v < 0 || v > max) {
    snprintf(err, errlen, "%s=\"%s\" is not a number of seconds in [0, %g]", name, text, max);
    return PCCL_ERR_CONFIG;
  }
  *out = v;
  return PCCL_OK;
}

pccl_status_t pccl__parse_bytes(const char *name, const char *text, long long max, long long *out,
                                char *err, size_t errlen) {
  char *end = NULL;
  errno = 0;
  long long v = strtoll(text, &end, 10);
  int shift = 0;
  if (end && end != text && *end) {
    shift = *end == 'K' || *end == 'k' ? 10 : *end == 'M' || *end == 'm' ? 20
          : *end == 'G' || *end == 'g' ? 30 : -1;
    end++;
  }
  if (text[0] == '\0' || text[0] == '-' || !end || *end != '\0' || shift < 0 || errno == ERANGE ||
      v < 0 || v > (max >> shift)) {
    snprintf(err, errlen, "%s=\"%s\" is not a byte count in [0, %lld] (suffixes K, M, G)", name,
             text, max);
    return PCCL_ERR_CONFIG;
  }
  *out = v << shift;
  return PCCL_OK;
}

int pccl__coll_from_name(const char *name) {
  for (int c = 0; c < PCCL_COLL_COUNT; c++)
    if (strcmp(name, pccl_coll_name((pccl_coll_t)c)) == 0) return c;
  if (strcmp(name, "reduce_scatter") == 0) return PCCL_COLL_REDUCE_SCATTER;
  if (strcmp(name, "bcast") == 0) return PCCL_COLL_BROADCAST;
  return -1;
}
