/* agree.c - PCCL_CHECK's agreement: one all-reduce (pccl's own) of each
 * field and its negation with MIN gives every field's minimum and maximum;
 * they differ only when ranks disagree, and only then do the ranks gather
 * each other's fields to say who passed what. */
#include "agree.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const field_names[PCCL_AGREE_NFIELDS] = {
#define PCCL_AGREE_NAME(id, name) name,
    PCCL_AGREE_FIELDS(PCCL_AGREE_NAME)
#undef PCCL_AGREE_NAME
};

/* One field's value as the message shows it. */
static void show(char *buf, size_t len, int field, const pccl_agree_t *a) {
  int64_t v = a->f[field];
  switch (field) {
    case PCCL_AGREE_COLL:
      snprintf(buf, len, "%s", v == PCCL_AGREE_BARRIER ? "barrier" : pccl_coll_name((pccl_coll_t)v));
      break;
    case PCCL_AGREE_DTYPE: snprintf(buf, len, "%s", pccl_dtype_name((pccl_dtype_t)v)); break;
    case PCCL_AGREE_OP: snprintf(buf, len, "%s", v < 0 ? "none" : pccl_op_name((pccl_op_t)v)); break;
    case PCCL_AGREE_ALGO: snprintf(buf, len, "%s", a->algo); break;
    case PCCL_AGREE_COUNT: /* a v-call's: a hash of its recvcounts array, not a count */
      if (a->f[PCCL_AGREE_COLL] == PCCL_COLL_ALLGATHERV || a->f[PCCL_AGREE_COLL] == PCCL_COLL_REDUCE_SCATTERV)
        snprintf(buf, len, "recvcounts with hash %016llx", (unsigned long long)v);
      else
        snprintf(buf, len, "%lld", (long long)v);
      break;
    case PCCL_AGREE_STATUS:
      snprintf(buf, len, "%s", v == PCCL_OK ? "accepted" : pccl_status_string((pccl_status_t)v));
      break;
    default: snprintf(buf, len, "%lld", (long long)v);
  }
}

/* "count: 100 on ranks 0 2, 200 on rank 1": each distinct value once, with
 * the ranks that passed it. */
static size_t describe(char *buf, size_t len, int field, const pccl_agree_t *all, int n) {
  size_t used = (size_t)snprintf(buf, len, "%s:", field_names[field]);
  for (int r = 0; r < n && used < len; r++) {
    int first = 1;
    for (int q = 0; q < r && first; q++) first = all[q].f[field] != all[r].f[field];
    if (!first) continue;
    char value[48];
    show(value, sizeof value, field, &all[r]);
    used += (size_t)snprintf(buf + used, len - used, "%s %s on rank(s)", r ? ";" : "", value);
    for (int q = r; q < n && used < len; q++)
      if (all[q].f[field] == all[r].f[field])
        used += (size_t)snprintf(buf + used, len - used, " %d", q);
  }
  return used;
}

static pccl_status_t explain(pccl_comm_t *comm, const char *api, const pccl_agree_t *mine,
                             const int64_t *minmax) {
  pccl_agree_t *all = malloc(sizeof(*all) * (size_t)comm->size);
  if (!all) return pccl__error(comm, PCCL_ERR_MISMATCH, api, "ranks disagree (no memory to say how)");
  int rc = MPI_Allgather(mine, (int)sizeof *mine, MPI_BYTE, all, (int)sizeof *mine, MPI_BYTE,
                         comm->mpi);
  char msg[PCCL_ERROR_LEN - 64];
  size_t used = (size_t)snprintf(msg, sizeof msg, "ranks disagree: ");
  for (int f = 0; f < PCCL_AGREE_NFIELDS && used < sizeof msg; f++) {
    if (minmax[f] == -minmax[PCCL_AGREE_NFIELDS + f]) continue;
    if (rc != MPI_SUCCESS) {
      used += (size_t)snprintf(msg + used, sizeof msg - used, "%s ", field_names[f]);
      continue;
    }
    if (used > 16 && used < sizeof msg) used += (size_t)snprintf(msg + used, sizeof msg - used, " | ");
    used += describe(msg + used, sizeof msg - used, f, all, comm->size);
  }
  free(all);
  return pccl__error(comm, PCCL_ERR_MISMATCH, api, "%s", msg);
}

void pccl__agree_values(const pccl_agree_t *mine, int64_t *v) {
  for (int f = 0; f < PCCL_AGREE_NFIELDS; f++) {
    v[f] = mine->f[f];
    v[PCCL_AGREE_NFIELDS + f] = -mine->f[f];
  }
}

pccl_status_t pccl__agree_verdict(pccl_comm_t *comm, const char *api, const pccl_agree_t *mine,
                                  const int64_t *v, pccl_status_t st) {
  if (st == PCCL_ERR_TIMEOUT)
    return pccl__error(comm, st, api,
                       "PCCL_CHECK's agreement got no answer within %.1f s: some rank did not "
                       "call this collective (or died); the communicator is now broken",
                       comm->timeout);
  if (st == PCCL_ERR_ABORTED)
    return pccl__error(comm, st, api, "pccl_comm_abort ended PCCL_CHECK's agreement");
  if (st != PCCL_OK)
    return pccl__error(comm, st, api, "PCCL_CHECK's agreement failed: %s", pccl_last_error(comm));
  for (int f = 0; f < PCCL_AGREE_NFIELDS; f++)
    if (v[f] != -v[PCCL_AGREE_NFIELDS + f]) return explain(comm, api, mine, v);
  return PCCL_OK;
}

pccl_status_t pccl__agree(pccl_comm_t *comm, const char *api, const pccl_agree_t *mine,
                          pccl_agree_min_fn allreduce_min) {
  int64_t v[PCCL_AGREE_NVALUES];
  pccl__agree_values(mine, v);
  pccl_status_t st = allreduce_min(comm, v, PCCL_AGREE_NVALUES);
  return pccl__agree_verdict(comm, api, mine, v, st);
}
