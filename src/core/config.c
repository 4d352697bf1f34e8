/* config.c - PCCL_ALGO's parser; see config.h. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One "coll:algo[:k]" entry of PCCL_ALGO, in place (the entry is modified). */
static pccl_status_t parse_entry(char *entry, pccl_choice_t forced[PCCL_COLL_COUNT],
                                 pccl_algo_set_t *excluded, char *err, size_t errlen) {
  char *colon = strchr(entry, ':');
  if (!colon) {
    snprintf(err, errlen, "PCCL_ALGO entry \"%s\" is not of the form collective:algorithm", entry);
    return PCCL_ERR_CONFIG;
  }
  *colon = '\0';
  const char *algo = colon + 1;
  int coll = pccl__coll_from_name(entry);
  if (coll < 0) {
    snprintf(err, errlen, "PCCL_ALGO names unknown collective \"%s\"", entry);
    return PCCL_ERR_CONFIG;
  }
  if (strcmp(algo, "auto") == 0) {
    forced[coll] = (pccl_choice_t){NULL, 0};
    return PCCL_OK;
  }
  if (algo[0] == '-') {
    const pccl_algo_t *a = pccl_algo_find((pccl_coll_t)coll, algo + 1);
    if (!a) {
      snprintf(err, errlen, "PCCL_ALGO excludes unknown algorithm \"%s\" of %s", algo + 1, entry);
      return PCCL_ERR_CONFIG;
    }
    pccl_algo_set_add(excluded, a->id);
    return PCCL_OK;
  }
  char why[160];
  if (pccl_choice_parse((pccl_coll_t)coll, algo, &forced[coll], why, sizeof(why)) != PCCL_OK) {
    snprintf(err, errlen, "PCCL_ALGO: %s", why);
    return PCCL_ERR_CONFIG;
  }
  return PCCL_OK;
}

pccl_status_t pccl__parse_algo_list(const char *text, pccl_choice_t forced[PCCL_COLL_COUNT],
                                    pccl_algo_set_t *excluded, char *err, size_t errlen) {
  char *copy = strdup(text);
  if (!copy) return PCCL_ERR_NO_MEMORY;
  pccl_status_t rc = PCCL_OK;
  char *entry = copy;
  for (;;) {
    char *comma = strchr(entry, ',');
    if (comma) *comma = '\0';
    if (entry[0] == '\0') {
      snprintf(err, errlen, "PCCL_ALGO=\"%s\" has an empty entry", text);
      rc = PCCL_ERR_CONFIG;
      break;
    }
    rc = parse_entry(entry, forced, excluded, err, errlen);
    if (rc != PCCL_OK || !comma) break;
    entry = comma + 1;
  }
  free(copy);
  return rc;
}
