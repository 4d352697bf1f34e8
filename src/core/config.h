/* config.h - PCCL_ALGO, the one environment variable whose syntax needs the
 * algorithm registry; the other parsers are in base/parse.h. */
#ifndef PCCL_CONFIG_H
#define PCCL_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "algo.h"
#include "parse.h"

/* Parses PCCL_ALGO syntax, "coll:algo[:k][,coll:algo[:k]...]", into forced[] (entries
 * not named stay as they were); an entry "coll:-algo" instead adds that
 * algorithm to *excluded, which keeps automatic selection off it. On error
 * writes a message into err. */
pccl_status_t pccl__parse_algo_list(const char *text, pccl_choice_t forced[PCCL_COLL_COUNT],
                                    pccl_algo_set_t *excluded, char *err, size_t errlen);

#endif /* PCCL_CONFIG_H */
