/* host.c - pccl-profile --host-cores: what one message costs the host when
 * every node is emulated on it, measured on messages between nodes
 * (docs/profiler.md). Every
 * partnered rank exchanges 1-byte messages with its partner on the
 * neighbouring node, all pairs at once; then rank 0 and its partner alone,
 * while the others poll. With all pairs at once, the host's cores carry
 * npartnered messages per exchange round: where they limit the rounds, one
 * message takes host_cores x round / npartnered of a core, which is what the
 * simulator's host_message charges (a turn on one of host_cores cores per
 * message). */
#include <stdlib.h>

#include "profile_tool.h"

#define TAG_HOST 3
#define WARMUP 10
#define ITERS 100 /* exchanges per repetition */

static void exchanges(int partner, int iters) {
  char out = 0, in = 0;
  for (int i = 0; i < iters; i++)
    PROF_MPI(MPI_Sendrecv(&out, 1, MPI_BYTE, partner, TAG_HOST, &in, 1, MPI_BYTE, partner, TAG_HOST,
                          MPI_COMM_WORLD, MPI_STATUS_IGNORE));
}

/* Median over the repetitions of the slowest exchanging rank's time per
 * exchange; only ranks with `active` set exchange, the others poll in the
 * barrier that ends each repetition. Valid on rank 0. */
static double timed(int partner, int active, int reps) {
  double *t = malloc((size_t)reps * sizeof *t);
  if (!t) prof_die("out of memory");
  if (active) exchanges(partner, WARMUP);
  for (int r = 0; r < reps; r++) {
    PROF_MPI(MPI_Barrier(MPI_COMM_WORLD));
    double t0 = MPI_Wtime(), mine = 0;
    if (active) {
      exchanges(partner, ITERS);
      mine = (MPI_Wtime() - t0) / ITERS;
    }
    PROF_MPI(MPI_Reduce(&mine, &t[r], 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD));
  }
  double med = prof_median(t, (size_t)reps);
  free(t);
  return med;
}

void prof_measure_host(const prof_options_t *o, const prof_layout_t *lay, prof_host_t *out) {
  int rank;
  PROF_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  int p = lay->partner, with0 = rank == 0 || p == 0;
  out->all = timed(p, p >= 0, o->reps);
  out->one = timed(p, p >= 0 && with0, o->reps);
  out->message = (double)o->host_cores * out->all / (double)lay->npartnered;
}
