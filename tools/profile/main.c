/* main.c - pccl-profile: measures the LogGP parameters (L, o_s, o_r, g, G)
 * of the machine it runs on, inside a node and between nodes, and the
 * rank-local costs copy and gamma, and writes a profile that
 * pccl_profile_load reads (docs/profiler.md). Rank 0 measures against one
 * partner per level while the other ranks sleep in a barrier, or, with
 * --loaded, poll in it as they would inside a collective while the pair
 * times latency and bandwidth; with --host-cores, what a message between
 * nodes costs a host that carries them all (host.c). */
#include <stdlib.h>
#include <string.h>

#include "profile_tool.h"

#define ERR_LEN 512

/* Every rank returns the same status: rank 0's. */
static int agree(int status) {
  PROF_MPI(MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD));
  return status;
}

/* Rank 0: can the file (through its temporary name) be created? */
static int check_output(const char *path) {
  size_t len = strlen(path) + 16;
  char *tmp = malloc(len);
  if (!tmp) return PROF_EXIT_FAIL;
  snprintf(tmp, len, "%s.tmp", path);
  FILE *f = fopen(tmp, "w");
  int ok = f != NULL;
  if (f) {
    fclose(f);
    remove(tmp);
  } else {
    fprintf(stderr, "pccl-profile: cannot create %s (needed to write %s)\n", tmp, path);
  }
  free(tmp);
  return ok ? PROF_EXIT_OK : PROF_EXIT_FAIL;
}

/* Startup checks: options, rank count, environment, output. */
static int setup(int argc, char **argv, int rank, prof_options_t *o, prof_layout_t *lay) {
  char err[ERR_LEN] = "";
  int st = prof_parse_options(argc, argv, o, err, sizeof err);
  if (st != PROF_EXIT_OK || o->help) {
    if (rank == 0 && st != PROF_EXIT_OK) fprintf(stderr, "pccl-profile: %s\n", err);
    if (rank == 0 && o->help) prof_print_usage(stdout);
    return st;
  }
  st = prof_find_layout(lay, err, sizeof err);
  if (st != PROF_EXIT_OK) {
    if (rank == 0) fprintf(stderr, "pccl-profile: %s\n", err);
    return st;
  }
  if (lay->size < 2) {
    if (rank == 0)
      fprintf(stderr, "pccl-profile: needs at least 2 MPI ranks (it measures messages between "
                      "two ranks), got %d; run e.g. mpirun -np 2 pccl-profile -o FILE\n",
              lay->size);
    return PROF_EXIT_USAGE;
  }
  if (o->host_cores > 0 && lay->npartnered <= o->host_cores) {
    if (rank == 0)
      fprintf(stderr, "pccl-profile: --host-cores %d needs more ranks exchanging between nodes at "
                      "once than cores (here %d, on %d node%s): the cores would not limit them\n",
              o->host_cores, lay->npartnered, lay->nnodes, lay->nnodes == 1 ? "" : "s");
    return PROF_EXIT_USAGE;
  }
  return agree(rank == 0 ? check_output(o->out_path) : PROF_EXIT_OK);
}

static void measure_level(const prof_options_t *o, const prof_layout_t *lay, pccl_level_t l,
                          int rank, prof_level_t *out) {
  static const char *const name[PCCL_LEVEL_COUNT] = {"intra-node", "inter-node"};
  memset(out, 0, sizeof *out);
  out->peer = lay->peer[l];
  if (out->peer < 0) return;
  if (rank == 0) {
    fprintf(stderr, "pccl-profile: measuring %s: ranks 0 and %d\n", name[l], out->peer);
    fflush(stderr);
  }
  int in = rank == 0 || rank == out->peer;
  MPI_Comm pair;
  PROF_MPI(MPI_Comm_split(MPI_COMM_WORLD, in ? 0 : MPI_UNDEFINED, rank, &pair));
  /* The overheads are the cost of one call: measured with the others
   * asleep. Waiting for a core under --loaded is latency, seen in the rest. */
  if (in) prof_measure_overheads(pair, o, out);
  prof_idle_barrier(MPI_COMM_WORLD, 0);
  if (in) {
    prof_measure_timings(pair, o, out);
    PROF_MPI(MPI_Comm_free(&pair));
  }
  prof_idle_barrier(MPI_COMM_WORLD, o->loaded);
}

static int measure_and_report(const prof_options_t *o, const prof_layout_t *lay, int rank) {
  prof_level_t level[PCCL_LEVEL_COUNT];
  for (int l = 0; l < PCCL_LEVEL_COUNT; l++) measure_level(o, lay, (pccl_level_t)l, rank, &level[l]);
  prof_host_t host = {0, 0, 0};
  if (o->host_cores > 0) {
    if (rank == 0) {
      fprintf(stderr, "pccl-profile: measuring the host: %d ranks exchanging between nodes at once\n",
              lay->npartnered);
      fflush(stderr);
    }
    prof_measure_host(o, lay, &host);
  }
  int st = PROF_EXIT_OK;
  double copy = 0, gamma = 0;
  if (rank == 0) {
    fprintf(stderr, "pccl-profile: measuring copy and gamma on rank 0\n");
    st = prof_measure_local(o->reps, &copy, &gamma);
    if (st != PROF_EXIT_OK) fprintf(stderr, "pccl-profile: out of memory measuring copy, gamma\n");
  }
  prof_idle_barrier(MPI_COMM_WORLD, 0);
  if (rank == 0 && st == PROF_EXIT_OK) st = prof_report(o, lay, level, &host, copy, gamma);
  return agree(st);
}

int main(int argc, char **argv) {
  int rank = 0;
  if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
    fprintf(stderr, "pccl-profile: MPI_Init failed\n");
    return PROF_EXIT_FAIL;
  }
  PROF_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  PROF_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  prof_options_t o;
  prof_layout_t lay;
  int st = setup(argc, argv, rank, &o, &lay);
  if (st == PROF_EXIT_OK && !o.help) st = measure_and_report(&o, &lay, rank);
  MPI_Finalize();
  return st;
}
