/* stats.c - how many calls of each MPI function pccl ran and how many went
 * to MPI, and why (PCCL_MPI_STATS=1 prints them at MPI_Finalize). */
#include <stdatomic.h>
#include <stdio.h>

#include "interpose.h"

static atomic_ulong counts[PCCL_IP_NCALLS][PCCL_IP_NREASONS];

static const char *const call_names[PCCL_IP_NCALLS] = {
#define PCCL_IP_CALL_NAME(id, name, iname) name,
    PCCL_IP_CALL_MAP(PCCL_IP_CALL_NAME)
#undef PCCL_IP_CALL_NAME
#define PCCL_IP_CALL_INAME(id, name, iname) iname,
    PCCL_IP_CALL_MAP(PCCL_IP_CALL_INAME)
#undef PCCL_IP_CALL_INAME
};

static const char *const reason_keys[PCCL_IP_NREASONS] = {
#define PCCL_IP_REASON_KEY(id, key, text) key,
    PCCL_IP_REASON_MAP(PCCL_IP_REASON_KEY)
#undef PCCL_IP_REASON_KEY
};

static const char *const reason_texts[PCCL_IP_NREASONS] = {
#define PCCL_IP_REASON_TEXT(id, key, text) text,
    PCCL_IP_REASON_MAP(PCCL_IP_REASON_TEXT)
#undef PCCL_IP_REASON_TEXT
};

void pccl_ip_count(pccl_ip_call_id_t id, pccl_ip_reason_t reason) {
  atomic_fetch_add_explicit(&counts[id][reason], 1, memory_order_relaxed);
}

/* One line: the call, pccl's count, MPI's count, then "reason count" pairs
 * for every reason seen (pccl's copies among them). */
static void print_call(int id, int *seen) {
  unsigned long n[PCCL_IP_NREASONS], total = 0;
  for (int r = 0; r < PCCL_IP_NREASONS; r++) total += n[r] = atomic_load(&counts[id][r]);
  if (total == 0) return;
  unsigned long pccl = n[PCCL_IP_TAKEN] + n[PCCL_IP_COPIED];
  char why[256] = "";
  size_t used = 0;
  for (int r = PCCL_IP_COPIED; r < PCCL_IP_NREASONS && used < sizeof why; r++) {
    if (!n[r]) continue;
    seen[r] = 1;
    used += (size_t)snprintf(why + used, sizeof why - used, "%s%s %lu", used ? ", " : "",
                             reason_keys[r], n[r]);
  }
  fprintf(stderr, "pccl-mpi:   %-26s %9lu %9lu   %s\n", call_names[id], pccl, total - pccl, why);
}

void pccl_ip_stats_print(int world_rank, int world_size) {
  int seen[PCCL_IP_NREASONS] = {0};
  fprintf(stderr, "pccl-mpi: calls on rank %d of %d, run by pccl or passed to MPI\n", world_rank,
          world_size);
  fprintf(stderr, "pccl-mpi:   %-26s %9s %9s   %s\n", "call", "pccl", "MPI", "details");
  for (int id = 0; id < PCCL_IP_NCALLS; id++) print_call(id, seen);
  for (int r = PCCL_IP_COPIED; r < PCCL_IP_NREASONS; r++)
    if (seen[r]) fprintf(stderr, "pccl-mpi:   %-11s %s\n", reason_keys[r], reason_texts[r]);
  fflush(stderr);
}
