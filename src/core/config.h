/* config.h - parsing of pccl's environment variables. Strict: a malformed
 * value is an error with a message, never silently ignored. */
#ifndef PCCL_CONFIG_H
#define PCCL_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "algo.h"

/* Parses PCCL_ALGO syntax, "coll:algo[:k][,coll:algo[:k]...]", into forced[] (entries
 * not named stay as they were); an entry "coll:-algo" instead sets the bit of
 * that algorithm's id (pccl_algo_id_t) in *excluded, which keeps automatic
 * selection off it. On error writes a message into err. */
pccl_status_t pccl__parse_algo_list(const char *text, pccl_choice_t forced[PCCL_COLL_COUNT],
                                    uint64_t *excluded, char *err, size_t errlen);

/* Parses a whole decimal integer in [min, max] (parse.c). */
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

#endif /* PCCL_CONFIG_H */
