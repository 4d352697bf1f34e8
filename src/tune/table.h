/* table.h - tuning tables: which algorithm (and k) each collective uses at
 * each size, per layout of ranks, as pccl-tune writes them from simulations.
 * Loaded at communicator creation (PCCL_TUNING_FILE, else the built-in
 * table); a call then only looks its size up. Format: docs/tuning-format.md. */
#ifndef PCCL_TUNE_TABLE_H
#define PCCL_TUNE_TABLE_H

#include <stdint.h>

#include "algo.h"

typedef struct {
  pccl_coll_t coll;
  int lossy;        /* a row for the pccl_*_lossy calls ("lossy" prefix) */
  size_t max_bytes; /* this row serves sizes up to here (SIZE_MAX: all) */
  pccl_choice_t choice;
} pccl_tune_row_t;

/* The rows of one layout: nranks ranks, ranks_per_node per node. */
typedef struct {
  int nranks, ranks_per_node;
  int first, nrows;
} pccl_tune_section_t;

typedef struct {
  pccl_tune_row_t *rows;
  int nrows;
  pccl_tune_section_t *secs;
  int nsecs;
} pccl_tune_table_t;

/* Parses a table. PCCL_ERR_CONFIG with a message naming the line when it is
 * malformed: unknown keyword, collective or algorithm, bad k or size, sizes
 * not increasing, rows before any layout, duplicate layouts. */
pccl_status_t pccl_tune_parse(const char *text, pccl_tune_table_t *t, char *err, size_t errlen);
/* The same from a file (PCCL_ERR_CONFIG also when it cannot be read). */
pccl_status_t pccl_tune_load(const char *path, pccl_tune_table_t *t, char *err, size_t errlen);
void pccl_tune_free(pccl_tune_table_t *t);

/* The section for nranks ranks with ranks_per_node per node: the one with
 * the same ranks per node and the nearest rank count (ratio), or NULL. */
const pccl_tune_section_t *pccl_tune_section(const pccl_tune_table_t *t, int nranks,
                                             int ranks_per_node);

/* The choice for `coll` at `bytes` in section s, from its plain rows or
 * (lossy) its rows for the lossy calls; algo NULL when no row covers it. */
pccl_choice_t pccl_tune_lookup(const pccl_tune_table_t *t, const pccl_tune_section_t *s,
                               pccl_coll_t coll, int lossy, size_t bytes);

/* A hash of a section's rows, so ranks can check they agree. */
uint32_t pccl_tune_hash(const pccl_tune_table_t *t, const pccl_tune_section_t *s);

/* The table built into the library (builtin.c, written by pccl-tune). */
extern const char pccl_tune_builtin[];

#endif /* PCCL_TUNE_TABLE_H */
